"""test_zsets_blocking.py -- BZPOPMIN, BZPOPMAX and BZMPOP on the server's
blocking module: clients served in the order they blocked, several keys,
timeouts, RESP3, a ZADD inside MULTI/EXEC waking a client after EXEC, a
key of another type in between, disconnects; each scenario run on strata
and on redis-server with the replies compared byte for byte. And a served
pop is durable once its reply is out (SIGKILL, appendfsync always)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, Server, main, test
from redis_compare import RealRedis
from blocking import no_reply, wait_blocked


def blocked_at(port):
    c = RawConn(port)
    info = c.command("INFO", "clients").decode()
    c.close()
    return int(info.split("blocked_clients:")[1].split()[0])


def scenario(port, steps):
    """Runs steps on the server at port: ("block", name, cmd...) opens
    connection name and blocks it with cmd; ("read", name) reads its reply;
    ("none", name) checks it got none; ("hello3", name) opens a RESP3
    connection; anything else runs on a plain connection. Returns the raw
    replies in order."""
    conns, out, r = {}, [], RawConn(port)
    for st in steps:
        op = st[0]
        if op == "block":
            n = blocked_at(port)
            c = conns.get(st[1]) or RawConn(port)
            conns[st[1]] = c
            c.send(c.encode(*st[2:]))
            wait_blocked(port, n + 1, count=blocked_at)
        elif op == "hello3":
            conns[st[1]] = RawConn(port)
            conns[st[1]].command("HELLO", "3")
        elif op == "read":
            conns[st[1]].read_reply()
            out.append((st, conns[st[1]].last_raw))
        elif op == "none":
            out.append((st, no_reply(conns[st[1]])))
        elif op == "close":
            conns.pop(st[1]).close()
            time.sleep(0.05)
        else:
            r.command(*st)
            out.append((st, r.last_raw))
    for c in conns.values():
        c.close()
    r.close()
    return out


def same_as_redis(steps):
    srv, ref = Server().start(), RealRedis()
    try:
        a, b = scenario(srv.port, steps), scenario(ref.port, steps)
        diffs = ["%r: strata %r, redis %r" % (x[0], x[1], y[1]) for x, y in zip(a, b) if x != y]
        assert not diffs, "\n".join(diffs)
    finally:
        srv.cleanup()
        ref.close()


@test
def clients_blocked_on_one_zset_are_served_in_the_order_they_blocked():
    same_as_redis([
        ("block", "w1", "BZPOPMIN", "z", "0"), ("block", "w2", "BZPOPMIN", "z", "0"),
        ("block", "w3", "BZPOPMAX", "z", "0"),
        ("ZADD", "z", "2", "b", "1", "a", "3", "c"),
        ("read", "w1"), ("read", "w2"), ("read", "w3"), ("EXISTS", "z"),
        ("block", "w4", "BZPOPMIN", "z", "0"), ("ZADD", "z", "-0", "x"), ("read", "w4"),
    ])


@test
def a_client_blocked_on_several_zsets_is_served_from_the_first_written():
    same_as_redis([
        ("block", "w", "BZPOPMAX", "k1", "k2", "k3", "0"),
        ("ZADD", "k3", "1", "x", "5", "y"), ("read", "w"), ("ZRANGE", "k3", "0", "-1"),
        ("block", "m", "BZMPOP", "0", "2", "m1", "m2", "MIN", "COUNT", "5"),
        ("ZADD", "m2", "1", "p", "2", "q", "inf", "r"), ("read", "m"), ("EXISTS", "m2"),
        ("ZADD", "ready", "7", "now", "8", "later"), ("BZPOPMIN", "none", "ready", "0"),
        ("BZMPOP", "0", "1", "ready", "MAX"),
    ])


@test
def blocking_pops_time_out_with_a_null_array_and_parse_as_redis():
    same_as_redis([
        ("BZPOPMIN", "none", "0.05"), ("BZMPOP", "0.05", "1", "none", "MIN"),
        ("BZPOPMIN", "none", "-1"), ("BZPOPMIN", "none", "x"),
        ("BZMPOP", "0", "0", "none", "MIN"), ("BZMPOP", "0", "1", "none", "UP"),
        ("BZMPOP", "0", "1", "none", "MIN", "COUNT", "0"),
        ("SET", "str", "v"), ("BZPOPMIN", "none", "str", "0"), ("BZMPOP", "0", "1", "str", "MIN"),
    ])


@test
def resp3_replies_of_blocking_pops_match_redis():
    same_as_redis([
        ("hello3", "a"), ("block", "a", "BZMPOP", "0", "1", "z", "MAX", "COUNT", "2"),
        ("ZADD", "z", "1.5", "a", "2.5", "b", "3.5", "c"), ("read", "a"),
        ("block", "a", "BZPOPMIN", "z2", "0"), ("ZADD", "z2", "9", "d"), ("read", "a"),
        ("BZPOPMIN", "gone", "0.01"),
    ])


@test
def a_zadd_inside_exec_wakes_after_exec_and_multi_never_blocks():
    same_as_redis([
        ("block", "w", "BZPOPMIN", "z", "0"),
        ("MULTI",), ("ZADD", "z", "1", "a"), ("ZADD", "z", "2", "b"), ("ZREM", "z", "a"),
        ("EXEC",), ("read", "w"), ("EXISTS", "z"),
        ("MULTI",), ("BZPOPMIN", "nothing", "0"), ("BZMPOP", "0", "1", "nothing", "MIN"),
        ("EXEC",),
    ])


@test
def a_key_of_another_type_keeps_waiters_waiting_until_it_is_a_zset_again():
    same_as_redis([
        ("block", "w", "BZPOPMIN", "k", "0"), ("SET", "k", "v"), ("none", "w"),
        ("DEL", "k"), ("LPUSH", "k", "x"), ("none", "w"), ("DEL", "k"),
        ("ZADD", "k", "4", "m"), ("read", "w"),
        ("block", "d", "BZPOPMIN", "k2", "0"), ("close", "d"), ("ZADD", "k2", "1", "a"),
        ("ZCARD", "k2"),
    ])


@test
def a_served_pop_is_durable_once_its_reply_is_out():
    srv = Server(appendfsync="always").start()
    try:
        w = RawConn(srv.port)
        w.send(w.encode("BZPOPMIN", "q", "0"))
        wait_blocked(srv.port, 1, count=blocked_at)
        c = RawConn(srv.port)
        c.command("ZADD", "q", "1", "a", "2", "b")
        assert w.read_reply() == [b"q", b"a", b"1"]
        srv.kill9()
        srv.start()
        c = RawConn(srv.port)
        assert c.command("ZRANGE", "q", "0", "-1", "WITHSCORES") == [b"b", b"2"]
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
