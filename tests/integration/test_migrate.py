"""test_migrate.py -- MIGRATE (src/server/cmd_migrate.c) as Redis 7.0's:
every type moves from strata to strata, to redis-server and back with its
TTL; COPY, REPLACE, KEYS, AUTH/AUTH2, a target error, an unreachable
target and every argument error give redis-server's replies (the same
commands run with redis-server as the source); a cached connection the
target closed is reopened once; the moved keys are deleted in the source's
log (gone after a SIGKILL).

Run with /usr/bin/python3 (python3-redis)."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import Server, test, main
from redis_compare import RealRedis, reply

# MIGRATE's timeout (ms) bounds each read and write with the target: 10 s,
# not 1-2, for an ASan target with appendfsync always on a loaded machine.
T = 10000


def fill(c):
    c.set("str", "v", ex=500)
    c.rpush("list", *range(300))
    c.sadd("set", *range(50))
    c.hset("hash", mapping={"f%d" % i: i for i in range(20)})
    c.zadd("zset", {"m%d" % i: i for i in range(40)})
    c.set("int", 12345)


def content(c):
    return {"str": c.get("str"), "list": c.lrange("list", 0, -1), "set": c.smembers("set"),
            "hash": c.hgetall("hash"), "zset": c.zrange("zset", 0, -1, withscores=True),
            "int": c.get("int")}


@test
def every_type_moves_between_strata_and_redis_with_its_ttl():
    # appendfsync always: what a MIGRATE acknowledged survives the SIGKILLs below
    a, b = Server(appendfsync="always").start(), Server(appendfsync="always").start()
    ref = RealRedis()
    try:
        ca, cb, cr = a.client(), b.client(), ref.client()
        fill(ca)
        want = content(ca)
        keys = list(want)
        assert ca.execute_command("MIGRATE", "127.0.0.1", b.port, "", 2, T, "KEYS", *keys) == b"OK"
        assert ca.exists(*keys) == 0
        cb2 = redis.Redis(port=b.port, db=2)
        assert content(cb2) == want and 400 < cb2.ttl("str") <= 500
        # strata -> redis-server, and back
        assert cb2.execute_command("MIGRATE", "127.0.0.1", ref.port, "", 0, T, "COPY", "KEYS", *keys) == b"OK"
        assert content(cr) == want and cb2.exists(*keys) == len(keys)
        got = reply(cr, ["MIGRATE", "127.0.0.1", a.port, "", 0, T, "KEYS"] + keys)
        assert got == ("ok", b"OK"), (got, a.log_tail(10))
        assert content(ca) == want
        a.kill9()  # a RESTOREd key is in the target's log like any write
        a.start()
        assert content(a.client()) == want
        assert cb2.execute_command("MIGRATE", "127.0.0.1", a.port, "list", 5, T) == b"OK"
        b.kill9()  # and the source's delete in the source's
        b.start()
        assert redis.Redis(port=b.port, db=2).exists("list") == 0
        assert redis.Redis(port=a.port, db=5).llen("list") == 300
    finally:
        a.cleanup(), b.cleanup(), ref.close()


def scenario(src, dst_port, dst):
    """The same MIGRATE commands against a strata target; replies listed."""
    out = []
    src.flushall(), dst.flushall()
    src.set("k", "v"), src.set("k2", "v2"), src.set("p", "1")
    dst.set("busy", "x")
    src.set("busy", "y")
    for cmd in (["k", 0, T], ["busy", 0, T], ["busy", 0, T, "REPLACE"],
                ["", 0, T, "COPY", "KEYS", "k2", "nokey"], ["nokey", 0, T],
                ["x", 0, T, "KEYS", "k2"], ["k2", 0, T, "FOO"], ["k2", 0, "x"],
                ["k2", "y", T], ["k2", 0, T, "AUTH"], ["k2", 0, T, "AUTH2", "u"],
                ["p", 0, T, "AUTH", "wrong"], ["p", 0, T, "AUTH2", "default", "wrong"],
                ["k2", 0, 0, "COPY"]):
        out.append((cmd, reply(src, ["MIGRATE", "127.0.0.1", dst_port] + cmd)))
    out.append(("unreachable", reply(src, ["MIGRATE", "127.0.0.1", 1, "p", 0, 300])))
    out.append(("left", sorted(src.keys("*")), sorted(dst.keys("*"))))
    return out


@test
def replies_and_errors_match_redis_as_the_source():
    t = Server().start()
    ref = RealRedis()
    s = Server().start()
    try:
        ours = scenario(s.client(), t.port, t.client())
        theirs = scenario(ref.client(), t.port, t.client())
        diffs = [(x, y) for x, y in zip(ours, theirs) if x != y]
        assert not diffs, diffs
        assert s.client().info("stats")["migrate_cached_sockets"] == 1
    finally:
        t.cleanup(), s.cleanup(), ref.close()


@test
def a_closed_cached_connection_is_reopened():
    s, t = Server().start(), Server().start()
    try:
        c = s.client()
        c.set("a", 1), c.set("b", 2)
        assert c.execute_command("MIGRATE", "127.0.0.1", t.port, "a", 0, T) == b"OK"
        t.restart()  # the cached socket is now closed by its peer
        assert c.execute_command("MIGRATE", "127.0.0.1", t.port, "b", 0, T) == b"OK"
        assert t.client().mget("a", "b") == [b"1", b"2"]
        t.stop()
        assert reply(c, ["MIGRATE", "127.0.0.1", t.port, "nokey", 0, T]) == ("ok", b"NOKEY")
        c.set("z", 1)
        r = reply(c, ["MIGRATE", "127.0.0.1", t.port, "z", 0, 500])
        assert r[0] == "err" and r[1].startswith("IOERR"), r
        assert c.get("z") == b"1"
    finally:
        s.cleanup(), t.cleanup()


if __name__ == "__main__":
    main()
