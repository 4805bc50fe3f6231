"""test_multi_edge.py -- transaction edge cases replayed on strata and on
the real redis-server with the same connections and timings, replies
compared byte for byte: commands Redis refuses inside MULTI (SHUTDOWN,
SAVE), and which WATCHed keys a FLUSHDB/FLUSHALL or an expiry invalidates.

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, test, main
from redis_compare import RealRedis


def play(port, steps):
    """Runs steps -- (connection number, command words) or a float to
    sleep -- and returns each command's exact reply bytes."""
    conns, out = {}, []
    for st in steps:
        if isinstance(st, float):
            time.sleep(st)
            continue
        n, words = st
        if n not in conns:
            conns[n] = RawConn(port)
        c = conns[n]
        c.send(RawConn.encode(*words.split()))
        c.read_reply()
        out.append("%d %s -> %r" % (n, words, c.last_raw))
    for c in conns.values():
        c.close()
    return out


def same_as_redis(srv, steps):
    ref = RealRedis("--enable-debug-command", "yes")
    try:
        want = play(ref.port, steps)
    finally:
        ref.close()
    got = play(srv.port, steps)
    diffs = ["strata %s\n  redis %s" % (a, b) for a, b in zip(got, want) if a != b]
    assert not diffs, "\n".join(diffs)


@test
def shutdown_and_save_inside_multi_are_refused_and_abort_exec(srv):
    same_as_redis(srv, [
        (0, "MULTI"), (0, "SET a 1"), (0, "SHUTDOWN"), (0, "SHUTDOWN NOSAVE"), (0, "PING"),
        (0, "EXEC"), (0, "GET a"),
        (0, "MULTI"), (0, "SAVE"), (0, "EXEC"),
        (0, "MULTI"), (0, "SHUTDOWN"), (0, "DISCARD"), (0, "PING"),
    ])
    assert srv.client().ping()  # still serving


@test
def flush_keeps_transactions_watching_keys_that_did_not_exist(srv):
    steps = []
    for flush in ("FLUSHALL", "FLUSHDB", "FLUSHALL ASYNC", "FLUSHDB SYNC"):
        steps += [
            # watched key absent: the transaction survives the flush
            (0, "WATCH nokey"), (1, flush), (0, "MULTI"), (0, "SET x 1"), (0, "EXEC"),
            # watched key present: the flush changes it, EXEC fails
            (1, "SET a 1"), (0, "WATCH a nokey"), (1, flush), (0, "MULTI"), (0, "PING"),
            (0, "EXEC"),
            # another key present, the watched one absent
            (1, "SET b 1"), (0, "WATCH nokey"), (1, flush), (0, "MULTI"), (0, "PING"),
            (0, "EXEC"),
        ]
    # FLUSHDB of another db leaves a watched existing key alone
    steps += [(1, "SET a 1"), (0, "WATCH a"), (1, "SELECT 1"), (1, "FLUSHDB"), (0, "MULTI"),
              (0, "PING"), (0, "EXEC"), (1, "SELECT 0"), (1, "FLUSHALL")]
    # FLUSHALL inside another client's EXEC
    steps += [(0, "WATCH nokey"), (1, "MULTI"), (1, "SET z 1"), (1, "FLUSHALL"), (1, "EXEC"),
              (0, "MULTI"), (0, "PING"), (0, "EXEC")]
    same_as_redis(srv, steps)


@test
def watched_keys_that_expire_fail_exec_and_expired_ones_survive_a_flush(srv):
    # Without the active expiry cycle the expired keys stay in place until
    # something reads or flushes them.
    steps = [
        (1, "DEBUG SET-ACTIVE-EXPIRE 0"),
        # live at WATCH, expired by EXEC: EXEC fails (500 ms: the WATCH
        # right after the SET must come before the expiry on a loaded machine)
        (1, "SET k v PX 500"), (0, "WATCH k"), 0.7, (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        # live at WATCH, expired by the time of a flush: EXEC fails
        (1, "SET k v PX 500"), (0, "WATCH k"), 0.7, (1, "FLUSHALL"), (0, "MULTI"), (0, "PING"),
        (0, "EXEC"),
        # expired before WATCH, then flushed: nothing changed
        (1, "SET k v PX 50"), 0.2, (0, "WATCH k"), (1, "FLUSHALL"), (0, "MULTI"), (0, "PING"),
        (0, "EXEC"),
        # expired before WATCH, still expired at EXEC: nothing changed
        (1, "SET k v PX 50"), 0.2, (0, "WATCH k"), (0, "MULTI"), (0, "PING"), (0, "EXEC"),
        (1, "DEBUG SET-ACTIVE-EXPIRE 1"),
    ]
    same_as_redis(srv, steps)


if __name__ == "__main__":
    main()
