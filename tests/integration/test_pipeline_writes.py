"""test_pipeline_writes.py -- the writes of one pipeline share one engine
batch (src/server/write_group.c): each command still reads the earlier
ones' writes, an error rolls back only its own command (S1), blocked
clients are served after the command that readied their key (as Redis),
and what was acknowledged survives SIGKILL with exact counters."""
import socket
import threading

from harness import RawConn, RespError, Server, main, test


def send_all(r, *cmds):
    r.send(b"".join(RawConn.encode(*c) for c in cmds))
    return [r.read_reply() for _ in cmds]


def is_error(reply, prefix):
    return isinstance(reply, RespError) and str(reply).startswith(prefix)


@test
def pipelined_writes_read_each_other_and_an_error_rolls_back_its_command_only(srv):
    r = srv.raw()
    got = send_all(r,
                   ("SET", "a", "1"), ("INCR", "a"), ("LPUSH", "a", "x"), ("INCR", "a"),
                   ("SET", "b", "v"), ("INCRBY", "b", "1"), ("APPEND", "b", "w"),
                   ("HSET", "h", "f", "v", "g", "1"), ("HINCRBY", "h", "f", "1"),
                   ("HINCRBY", "h", "g", "1"), ("SADD", "s", "m1", "m2"), ("SREM", "s", "m1"),
                   ("SADD", "a", "m"), ("DEL", "gone"), ("SET", "c", "x"), ("DEL", "c"))
    assert got[:2] == ["OK", 2], got
    assert is_error(got[2], "WRONGTYPE"), got
    assert got[3:5] == [3, "OK"], got
    assert is_error(got[5], "ERR value is not an integer"), got
    assert got[6:8] == [2, 2], got
    assert is_error(got[8], "ERR hash value is not an integer"), got
    assert got[9:12] == [2, 2, 1], got
    assert is_error(got[12], "WRONGTYPE"), got
    assert got[13:] == [0, "OK", 1], got
    c = srv.client()
    assert c.get("a") == b"3" and c.get("b") == b"vw"
    assert c.hgetall("h") == {b"f": b"v", b"g": b"2"}
    assert c.smembers("s") == {b"m2"}
    assert c.dbsize() == 4  # a b h s: each created once, c created and deleted
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.dbsize() == 4 and c.get("a") == b"3" and c.hget("h", "g") == b"2"


@test
def a_read_in_the_pipeline_sees_the_writes_before_it(srv):
    r = srv.raw()
    got = send_all(r, ("SET", "k", "1"), ("INCR", "k"), ("GET", "k"), ("DBSIZE",),
                   ("RPUSH", "l", "a", "b"), ("LRANGE", "l", "0", "-1"), ("EXISTS", "k", "l"))
    assert got == ["OK", 2, b"2", 1, 2, [b"a", b"b"], 2], got


@test
def a_blocked_client_is_served_right_after_the_push_that_readied_its_key(srv):
    waiter = srv.raw()
    waiter.send(RawConn.encode("BLPOP", "q", "0"))
    c = srv.client()
    for _ in range(200):  # until the BLPOP is blocked
        if int(c.info("clients")["blocked_clients"]) == 1:
            break
        threading.Event().wait(0.01)
    r = srv.raw()
    got = send_all(r, ("LPUSH", "q", "x"), ("LPOP", "q"), ("LPUSH", "q", "y"), ("LLEN", "q"))
    # As Redis: the waiter takes x before the LPOP runs.
    assert got == [1, None, 1, 1], got
    assert waiter.read_reply() == [b"q", b"x"]


@test
def acknowledged_pipelines_survive_sigkill_with_exact_counts(srv):
    r = srv.raw()
    n = 3000
    cmds = []
    for i in range(n):
        cmds.append(("SET", "k:%d" % (i % 1000), str(i)))
        cmds.append(("INCR", "n:%d" % (i % 500)))
        cmds.append(("SADD", "set", str(i % 700)))
    for i in range(0, len(cmds), 300):
        send_all(r, *cmds[i:i + 300])
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.dbsize() == 1000 + 500 + 1
    assert c.get("k:999") == b"2999" and c.get("n:7") == b"6" and c.scard("set") == 700


def info_keyspace(c):
    ks = c.info("keyspace").get("db0", {})
    return ks.get("keys", 0), ks.get("expires", 0)


@test
def key_counts_of_a_pipeline_stay_exact_through_deletes_ttls_and_errors(srv):
    # The group holds its counter changes in memory (KS-E7) and writes them
    # once: every way a command changes them, and one rolled back, in one read.
    r = srv.raw()
    cmds = [("SET", "n:%d" % i, "v") for i in range(40)]
    cmds += [("SET", "t:%d" % i, "v", "EX", "1000") for i in range(10)]
    cmds += [("DEL", "n:0", "n:1", "nope"), ("UNLINK", "n:2"), ("PERSIST", "t:0"),
             ("EXPIRE", "n:3", "1000"), ("GETDEL", "n:4"), ("RPUSH", "l", "a"), ("RPOP", "l"),
             ("HSET", "h", "f", "1"), ("HDEL", "h", "f"), ("SADD", "s", "m"),
             ("LPUSH", "n:5", "x"), ("MSET", "m:1", "a", "m:2", "b", "n:6", "c"),
             ("SET", "n:7", "v", "EX", "0"), ("INCR", "n:8"), ("DBSIZE",)]
    got = send_all(r, *cmds)
    assert is_error(got[-5], "WRONGTYPE") and got[-4] == "OK", got[-5:]
    assert is_error(got[-3], "ERR invalid expire"), got[-3:]
    assert is_error(got[-2], "ERR value is not an integer"), got[-2:]
    want_keys = 40 - 4 + 10 + 1 + 2  # n: minus n:0..n:2 and n:4; t:; s; m:1 m:2
    assert got[-1] == want_keys, got[-1]
    c = srv.client()
    assert c.dbsize() == want_keys == len(c.keys("*"))
    assert info_keyspace(c) == (want_keys, 10)  # t:1..t:9 and n:3
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.dbsize() == want_keys and info_keyspace(c) == (want_keys, 10)


@test
def long_pipelines_of_one_big_hash_and_broken_requests_are_answered_exactly(srv):
    # The prefetch reads ahead (past 32 requests, a big hash's fields):
    # only a hint, whatever the bytes.
    r = srv.raw()
    for base in range(0, 3000, 500):
        got = send_all(r, *[("HSET", "big", "f%d" % i, str(i)) for i in range(base, base + 500)])
        assert got == [1] * 500, got[:5]
    got = send_all(r, *([("HSET", "big", "f%d" % i, "x") for i in range(0, 100)] +
                        [("HGET", "big", "f7"), ("HINCRBY", "big", "f1", "1"),
                         ("NOSUCH", "big", "f"), ("HSET", "big"), ("HGET", "nobig", "f")]))
    assert got[:100] == [0] * 100 and got[100] == b"x", got[100:]
    assert is_error(got[101], "ERR hash value is not an integer") and got[104] is None, got[101:]
    assert is_error(got[102], "ERR unknown command") and is_error(got[103], "ERR wrong number")
    junk = b"*3\r\n$4\r\nHSET\r\n$3\r\nbig\r\n$99\r\nf" * 3
    r.send(b"".join(RawConn.encode("HSET", "big", "g%d" % i, "v") for i in range(40)) + junk)
    assert [r.read_reply() for _ in range(40)] == [1] * 40
    c = srv.client()
    assert c.hlen("big") == 3040 and c.dbsize() == 1


@test
def a_script_in_the_pipeline_reads_the_writes_before_it_and_keeps_its_own_on_error(srv):
    r = srv.raw()
    incr = r.command("SCRIPT", "LOAD", "return redis.call('incr', KEYS[1])")
    half = ("redis.call('set', KEYS[1], ARGV[1]) "
            "return redis.call('incr', KEYS[2])")  # the INCR fails: the SET stays (Redis)
    got = send_all(r, ("SET", "a", "1"), ("EVALSHA", incr, "1", "a"),
                   ("EVAL", "return redis.call('get', KEYS[1])", "1", "a"), ("INCR", "a"),
                   ("SET", "s", "x"), ("EVAL", half, "2", "h", "s", "v"), ("GET", "h"),
                   ("EVALSHA", incr, "1", "new"), ("FCALL", "nosuch", "0"),
                   ("EVAL", "return redis.call('dbsize')", "0"), ("EVAL_RO", "return 7", "0"))
    assert got[:5] == ["OK", 2, b"2", 3, "OK"], got
    assert is_error(got[5], "ERR value is not an integer"), got
    assert got[6] == b"v" and got[7] == 1, got
    assert is_error(got[8], "ERR Function not found"), got
    assert got[9:] == [4, 7], got  # a s h new
    c = srv.client()
    assert c.dbsize() == 4 and c.get("a") == b"3" and c.get("h") == b"v"
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.dbsize() == 4 and c.get("a") == b"3" and c.get("new") == b"1"


@test
def a_script_that_flushes_or_deletes_after_pipelined_writes_leaves_exact_counts(srv):
    # The sums the group held for the SETs go into the batch before the
    # script runs: FLUSHDB inside it must not find them added afterwards.
    r = srv.raw()
    got = send_all(r, *([("SET", "k:%d" % i, "v") for i in range(20)] +
                        [("EVAL", "redis.call('flushdb') return redis.call('dbsize')", "0"),
                         ("SET", "after", "1"), ("SET", "t", "v", "EX", "100"),
                         ("EVAL", "return redis.call('del', KEYS[1], KEYS[2])", "2", "k:1", "t"),
                         ("MSET", "m1", "a", "m2", "b"),
                         ("EVAL", "redis.call('mset', 'm3', 'c', 'm1', 'z') return 1", "0"),
                         ("DBSIZE",)]))
    assert got[20] == 0 and got[23] == 1 and got[-1] == 4, got[20:]  # after m1 m2 m3
    c = srv.client()
    assert c.dbsize() == 4 and info_keyspace(c) == (4, 0)
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.dbsize() == 4 == len(c.keys("*")) and c.get("m1") == b"z"


@test
def a_killed_busy_script_keeps_the_pipelined_writes_before_it(srv):
    r = srv.raw()
    assert r.command("CONFIG", "SET", "busy-reply-threshold", "100") == "OK"
    r.send(RawConn.encode("INCR", "before") +
           RawConn.encode("EVAL", "local i = 0 while true do i = i + 1 end", "0") +
           RawConn.encode("INCR", "before"))
    other = srv.raw()
    for _ in range(500):
        v = other.command("PING")
        if isinstance(v, RespError) and str(v).startswith("BUSY"):
            break
        threading.Event().wait(0.01)
    assert other.command("SCRIPT", "KILL") == "OK"  # the script itself wrote nothing
    assert r.read_reply() == 1
    assert is_error(r.read_reply(), "ERR Script killed by user")
    assert r.read_reply() == 2
    srv.kill9()
    srv.start()
    assert srv.client().get("before") == b"2"


@test
def pipelined_xadds_serve_a_blocked_reader_after_the_one_that_readied_it(srv):
    waiter = srv.raw()
    waiter.send(RawConn.encode("XREAD", "BLOCK", "0", "STREAMS", "st", "$"))
    c = srv.client()
    for _ in range(200):
        if int(c.info("clients")["blocked_clients"]) == 1:
            break
        threading.Event().wait(0.01)
    r = srv.raw()
    got = send_all(r, ("XADD", "st", "1-1", "f", "a"), ("XADD", "st", "1-2", "f", "b"),
                   ("XADD", "st", "1-2", "f", "c"), ("XLEN", "st"), ("XDEL", "st", "1-1"),
                   ("XADD", "st", "MAXLEN", "1", "*", "f", "d"), ("XLEN", "st"))
    assert got[:2] == [b"1-1", b"1-2"], got
    assert is_error(got[2], "ERR The ID specified in XADD is equal or smaller"), got
    assert got[3:5] == [2, 1] and got[6] == 1, got
    assert waiter.read_reply() == [[b"st", [[b"1-1", [b"f", b"a"]]]]]  # as Redis: only the first
    srv.kill9()
    srv.start()
    c = srv.client()
    assert c.xlen("st") == 1 and c.dbsize() == 1


@test
def shutdown_nosave_during_a_busy_script_drops_its_group_whose_replies_never_left(srv):
    # The script shares the group's batch: while it is busy the group stays
    # unwritten (other clients' requests must not write it), and no reply of
    # the group reaches its client before the group's write.
    r = srv.raw()
    assert r.command("SET", "acked", "1") == "OK"
    assert r.command("CONFIG", "SET", "busy-reply-threshold", "100") == "OK"
    r.send(RawConn.encode("SET", "unacked", "1") +
           RawConn.encode("EVAL", "redis.call('set', 'partial', '1') while true do end", "0"))
    other = srv.raw()
    for _ in range(500):
        v = other.command("PING")
        if isinstance(v, RespError) and str(v).startswith("BUSY"):
            break
        threading.Event().wait(0.01)
    assert str(other.command("SCRIPT", "KILL")).startswith("UNKILLABLE")
    try:
        other.command("SHUTDOWN", "NOSAVE")
    except ConnectionError:
        pass
    srv.proc.wait(20)
    try:
        got = r.read_reply()
    except (ConnectionError, OSError):
        got = "closed"
    assert got == "closed", got
    srv.start()
    c = srv.client()
    assert c.get("acked") == b"1" and c.get("partial") is None and c.get("unacked") is None
    assert c.dbsize() == 1


if __name__ == "__main__":
    main()
