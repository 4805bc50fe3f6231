"""test_transactions.py -- MULTI, EXEC, DISCARD, WATCH, UNWATCH: queueing,
EXECABORT, runtime errors inside EXEC, optimistic locking, and the error
texts of Redis 7."""
import threading

import redis

from harness import RawConn, RespError, Server, main, test


def err(r, *args):
    v = r.command(*args)
    assert isinstance(v, RespError), "expected an error from %r, got %r" % (args, v)
    return str(v)


@test
def multi_exec_runs_queued_commands_in_order(srv):
    r = srv.raw()
    assert r.command("MULTI") == "OK"
    assert r.command("SET", "a", "1") == "QUEUED"
    assert r.command("GET", "a") == "QUEUED"
    assert r.command("SET", "a", "2") == "QUEUED"
    assert r.command("GET", "a") == "QUEUED"
    other = srv.client()
    assert other.get("a") is None  # nothing runs before EXEC
    assert r.command("EXEC") == ["OK", b"1", "OK", b"2"]
    assert other.get("a") == b"2"


@test
def empty_transaction(srv):
    r = srv.raw()
    assert r.command("MULTI") == "OK"
    assert r.command("EXEC") == []


@test
def queue_time_errors_abort_the_transaction(srv):
    r = srv.raw()
    r.command("SET", "x", "old")
    assert r.command("MULTI") == "OK"
    assert r.command("SET", "x", "new") == "QUEUED"
    assert err(r, "NOSUCHCMD", "1") == "ERR unknown command 'NOSUCHCMD', with args beginning with: '1' "
    assert err(r, "GET") == "ERR wrong number of arguments for 'get' command"
    assert err(r, "EXEC") == "EXECABORT Transaction discarded because of previous errors."
    assert r.command("GET", "x") == b"old"
    assert err(r, "EXEC") == "ERR EXEC without MULTI"


@test
def runtime_errors_do_not_stop_other_commands(srv):
    r = srv.raw()
    r.command("SET", "str", "abc")
    assert r.command("MULTI") == "OK"
    r.command("SET", "a", "1")
    r.command("INCR", "str")
    r.command("SET", "b", "2")
    out = r.command("EXEC")
    assert out[0] == "OK" and out[2] == "OK", out
    assert isinstance(out[1], RespError) and str(out[1]) == "ERR value is not an integer or out of range"
    assert r.command("GET", "a") == b"1" and r.command("GET", "b") == b"2"
    assert r.command("GET", "str") == b"abc"


@test
def transaction_reads_its_own_writes(srv):
    r = srv.raw()
    r.command("MULTI")
    r.command("SET", "n", "10")
    r.command("INCRBY", "n", "5")
    r.command("GET", "n")
    assert r.command("EXEC") == ["OK", 15, b"15"]


@test
def nested_multi_and_misplaced_commands(srv):
    r = srv.raw()
    assert err(r, "EXEC") == "ERR EXEC without MULTI"
    assert err(r, "DISCARD") == "ERR DISCARD without MULTI"
    assert r.command("MULTI") == "OK"
    assert err(r, "MULTI") == "ERR MULTI calls can not be nested"
    assert err(r, "WATCH", "k") == "ERR WATCH inside MULTI is not allowed"
    r.command("SET", "k", "v")
    # Neither error aborts the transaction (as Redis).
    assert r.command("EXEC") == ["OK"]


@test
def discard_drops_the_queue(srv):
    r = srv.raw()
    r.command("MULTI")
    r.command("SET", "d", "1")
    assert r.command("DISCARD") == "OK"
    assert r.command("GET", "d") is None
    assert err(r, "EXEC") == "ERR EXEC without MULTI"


@test
def watch_fails_exec_when_another_client_writes(srv):
    r = srv.raw()
    other = srv.client()
    r.command("SET", "w", "1")
    assert r.command("WATCH", "w") == "OK"
    other.set("w", "2")
    r.command("MULTI")
    r.command("SET", "w", "3")
    assert r.command("EXEC") is None and r.last_raw == b"*-1\r\n"
    assert other.get("w") == b"2"
    # The watch is gone after EXEC: the next transaction runs.
    r.command("MULTI")
    r.command("SET", "w", "4")
    assert r.command("EXEC") == ["OK"]


@test
def watch_of_untouched_key_lets_exec_run(srv):
    r = srv.raw()
    other = srv.client()
    r.command("WATCH", "a", "b")
    other.set("c", "1")
    r.command("MULTI")
    r.command("SET", "a", "x")
    assert r.command("EXEC") == ["OK"]


@test
def watch_is_per_database(srv):
    r = srv.raw()
    other = srv.client(db=1)
    r.command("WATCH", "k")
    other.set("k", "in db1")
    r.command("MULTI")
    r.command("SET", "k", "v")
    assert r.command("EXEC") == ["OK"]


@test
def unwatch_and_discard_forget_watched_keys(srv):
    r = srv.raw()
    other = srv.client()
    r.command("WATCH", "u")
    assert r.command("UNWATCH") == "OK"
    other.set("u", "changed")
    r.command("MULTI")
    r.command("SET", "u", "mine")
    assert r.command("EXEC") == ["OK"]
    r.command("WATCH", "u")
    r.command("MULTI")
    r.command("DISCARD")
    other.set("u", "again")
    r.command("MULTI")
    r.command("GET", "u")
    assert r.command("EXEC") == [b"again"]


@test
def watched_key_deleted_or_flushed_fails_exec(srv):
    r = srv.raw()
    other = srv.client()
    other.set("f", "1")
    r.command("WATCH", "f")
    other.delete("f")
    r.command("MULTI")
    r.command("PING")
    assert r.command("EXEC") is None
    other.set("f", "1")
    r.command("WATCH", "f")
    other.flushall()
    r.command("MULTI")
    r.command("PING")
    assert r.command("EXEC") is None


@test
def own_writes_before_multi_dirty_the_watch(srv):
    r = srv.raw()
    r.command("WATCH", "o")
    r.command("SET", "o", "1")
    r.command("MULTI")
    r.command("GET", "o")
    assert r.command("EXEC") is None


@test
def redis_py_transaction_with_watch_retries(srv):
    c = srv.client()
    c.set("counter", 0)

    def incr_with_watch(n):
        cl = srv.client()
        for _ in range(n):
            with cl.pipeline() as p:
                while True:
                    try:
                        p.watch("counter")
                        v = int(p.get("counter"))
                        p.multi()
                        p.set("counter", v + 1)
                        p.execute()
                        break
                    except redis.WatchError:
                        continue

    ts = [threading.Thread(target=incr_with_watch, args=(100,)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert c.get("counter") == b"400"


@test
def exec_writes_are_atomic_for_readers(srv):
    # A reader never sees half a transaction: every snapshot of the two keys
    # is equal.
    c = srv.client()
    c.mset({"x": 0, "y": 0})
    stop = []
    bad = []

    def reader():
        rc = srv.client()
        while not stop:
            x, y = rc.mget("x", "y")
            if x != y:
                bad.append((x, y))

    t = threading.Thread(target=reader)
    t.start()
    for i in range(1, 300):
        p = c.pipeline(transaction=True)
        p.set("x", i)
        p.set("y", i)
        p.execute()
    stop.append(1)
    t.join()
    assert not bad, bad[:5]


@test
def quit_inside_multi_closes(srv):
    r = srv.raw()
    r.command("MULTI")
    r.command("SET", "q", "1")
    assert r.command("QUIT") == "OK"
    assert r.closed_by_server()
    assert srv.client().get("q") is None


if __name__ == "__main__":
    main()
