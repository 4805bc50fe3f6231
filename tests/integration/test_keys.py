"""test_keys.py -- generic key commands through a real client: replies
and error texts compared with a real redis-server command by command, SCAN
and KEYS over many keys, TTL semantics, expiry (lazy, active), COPY across
databases, RANDOMKEY, counters across restart.

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main
from redis_compare import RealRedis, compare_with_redis, reply


@test
def key_commands_and_errors_match_redis(srv):
    compare_with_redis(srv, """
set a 1
set b 2
hset h f v
del a nokey a
del
exists a b h b nokey
touch b h nokey
unlink b
type h
type nokey
set b 2
type b
keys h*
keys [g-i]
keys \\h
rename nokey x
rename b c
get c
rename c c
renamenx c c
renamenx nokey x
renamenx c h
renamenx c d
rename d h
type h
get h
expire h 100
ttl h
expire h abc
expire h 100 nx
expire h 200 xx
expire h 50 gt
expire h 500 gt
expire h 600 lt
expire h 60 lt
expire h 10 nx xx
expire h 10 gt lt
expire h 10 foo
expire h 9223372036854775807
expire h -9223372036854775808
pexpire h 9223372036854775807
pexpireat h 9223372036854775807
expireat h 9223372036854775807
persist h
persist h
ttl h
pttl nokey
ttl nokey
expiretime h
expiretime nokey
pexpiretime nokey
pexpireat h 32503680000000
pexpiretime h
expiretime h
expireat h 32503680000
expiretime h
persist nokey
expire nokey 10
set t 1
expire t gt 10
expire t 10 gt
expire t 10 xx
expire t 10 lt
expire t -1
exists t
set t 1
pexpire t 0
exists t
set t 1
expireat t 1
exists t
copy nokey x
set s v
copy s s
copy s s db 1
copy s s2
copy s s2
copy s s2 replace
copy s s2 db 16
copy s s2 db -1
copy s s2 db abc
copy s s2 foo
copy s s2 db
hset hh a 1 b 2
expire hh 1000
copy hh s db 3 replace
flushdb
randomkey
keys *
scan 0
scan abc
scan 0 count 0
scan 0 count abc
scan 0 match
scan 0 foo bar
scan 0 type foo
dbsize
""", loose=("ttl", "pttl"))


@test
def copy_to_other_db_keeps_type_and_ttl(srv):
    r = srv.client()
    r.hset("hh", mapping={"a": "1", "b": "2"})
    r.expire("hh", 1000)
    r.set("s", "v")
    assert r.copy("hh", "s", destination_db=3, replace=True)
    r3 = srv.client(db=3)
    assert r3.type("s") == b"hash" and r3.hgetall("s") == {b"a": b"1", b"b": b"2"}
    assert 990 <= r3.ttl("s") <= 1000 and r3.dbsize() == 1
    assert not r.copy("s", "hh")  # destination exists
    assert r.copy("s", "hh", replace=True) and r.type("hh") == b"string" and r.ttl("hh") == -1
    assert r.dbsize() == 2


@test
def scan_walks_every_key_once_with_match_and_type(srv):
    r = srv.client()
    p = r.pipeline(transaction=False)
    for i in range(2000):
        if i % 4 == 0:
            p.hset("h:%d" % i, "f", "v")
        else:
            p.set("s:%d" % i, "v")
    p.execute()
    seen, cur, steps = set(), 0, 0
    while True:
        cur, keys = r.scan(cur, count=100)
        for k in keys:
            assert k not in seen, k
            seen.add(k)
        r.set("s:%d" % (steps % 2000 if steps % 4 else 1), "changed")  # writes in between
        steps += 1
        if cur == 0:
            break
    assert len(seen) == 2000 and steps >= 20
    hashes = set(r.scan_iter(match="h:1*", count=50, _type="HASH"))
    assert hashes == {("h:%d" % i).encode() for i in range(0, 2000, 4) if str(i).startswith("1")}
    assert set(r.scan_iter(_type="string")) == {("s:%d" % i).encode() for i in range(2000) if i % 4}
    assert sorted(r.keys("h:1?")) == sorted([b"h:12", b"h:16"])
    assert len(r.keys()) == 2000 and r.dbsize() == 2000
    rk = {r.randomkey() for _ in range(50)}
    assert len(rk) > 5 and rk <= seen


@test
def expiry_is_lazy_active_and_counted(srv):
    r = srv.client()
    # TTLs long enough that a slow (sanitizer) server counts them all first.
    for i in range(100):
        r.set("tmp:%d" % i, "v", px=1000)
    r.hset("th", "f", "v")
    r.pexpire("th", 1000)
    r.set("keep", "1")
    assert r.dbsize() == 102
    assert r.info("keyspace")["db0"]["expires"] == 101
    time.sleep(1.1)
    assert r.get("tmp:1") is None and r.exists("th") == 0 and r.ttl("th") == -2
    assert r.keys("tmp:*") == [] and r.hgetall("th") == {}
    deadline = time.time() + 30  # the active cycle: late on a loaded machine
    while r.dbsize() != 1 and time.time() < deadline:
        time.sleep(0.05)
    assert r.dbsize() == 1 and r.info("keyspace")["db0"]["expires"] == 0
    assert r.expire("keep", -5) == 1 and r.exists("keep") == 0 and r.dbsize() == 0


@test
def rename_moves_value_and_ttl_and_counts(srv):
    r = srv.client()
    r.hset("big", mapping={("f%d" % i): "v" for i in range(500)})
    r.expire("big", 500)
    r.set("dst", "old")
    r.rename("big", "dst")
    assert not r.exists("big") and r.hlen("dst") == 500 and 490 <= r.ttl("dst") <= 500
    assert r.dbsize() == 1
    assert r.renamenx("dst", "dst") == 0
    r.set("x", "1")
    assert r.renamenx("x", "dst") == 0 and r.get("x") == b"1"
    srv.restart()
    r = srv.client()
    assert r.dbsize() == 2 and r.hlen("dst") == 500 and r.get("x") == b"1"


@test
def keys_are_per_database_and_flush_is_scoped(srv):
    r0, r5 = srv.client(db=0), srv.client(db=5)
    r0.set("a", "0")
    r5.set("a", "5")
    r5.hset("h", "f", "v")
    assert r0.get("a") == b"0" and r5.get("a") == b"5"
    assert r0.dbsize() == 1 and r5.dbsize() == 2
    r5.flushdb()
    assert r5.dbsize() == 0 and r0.get("a") == b"0"
    r5.set("b", "1")
    r0.flushall()
    assert r0.dbsize() == 0 and r5.dbsize() == 0 and r5.get("b") is None



def normalize(cmd, res):
    """Replies whose order or timing legitimately differ from Redis's."""
    name = cmd[0].lower()
    if res[0] == "ok" and name in ("hkeys", "hvals", "keys"):
        return ("ok", sorted(res[1]))
    if res[0] == "ok" and name == "hgetall":
        return ("ok", sorted(res[1].items()) if isinstance(res[1], dict) else sorted(res[1]))
    if res[0] == "ok" and name in ("ttl", "pttl") and isinstance(res[1], int) and res[1] >= 0:
        return ("ok", "ttl>=0")
    return res


def exec_block(client, cmds):
    p = client.pipeline(transaction=True)
    for c in cmds:
        p.execute_command(*c)
    out = p.execute(raise_on_error=False)
    return [("err", str(x)) if isinstance(x, Exception) else normalize(c, ("ok", x))
            for c, x in zip(cmds, out)]


@test
def random_operations_match_redis(srv):
    import random
    rnd = random.Random(20261130)
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        # Mostly type-appropriate keys (h* for hash commands), with some
        # crossing over so WRONGTYPE and type replacement are exercised too.
        keys = ["k%d" % i for i in range(6)] + ["h%d" % i for i in range(4)]
        def other(k):  # a second key, usually of the same kind as k
            same = [x for x in keys if x[0] == k[0]]
            return rnd.choice(same if rnd.random() < 0.95 else keys)
        def field():
            return "f%d" % rnd.randrange(400)  # hashes cross the packed limit
        gens = [
            lambda k: ["set", k, str(rnd.randrange(100))],
            lambda k: ["get", k],
            lambda k: ["del", k, other(k)],
            lambda k: ["hset", k] + sum([[field(), "v%d" % rnd.randrange(9)] for _ in range(rnd.choice([1, 3, 100]))], []),
            lambda k: ["hdel", k] + [field() for _ in range(rnd.choice([1, 5, 40]))],
            lambda k: ["hget", k, field()],
            lambda k: ["hmget", k, field(), field()],
            lambda k: ["hlen", k],
            lambda k: ["hgetall", k],
            lambda k: ["hkeys", k],
            lambda k: ["hexists", k, field()],
            lambda k: ["hincrby", k, field(), str(rnd.randrange(-5, 5))],
            lambda k: ["hsetnx", k, field(), "nx"],
            lambda k: ["hstrlen", k, field()],
            lambda k: ["incr", k],
            lambda k: ["incrby", k, str(rnd.randrange(-1000, 1000))],
            lambda k: ["append", k, "ab"],
            lambda k: ["strlen", k],
            lambda k: ["setrange", k, str(rnd.randrange(10)), "xyz"],
            lambda k: ["getrange", k, str(rnd.randrange(-5, 5)), str(rnd.randrange(-5, 10))],
            lambda k: ["expire", k, str(rnd.randrange(1000, 5000))] + rnd.choice([[], ["nx"], ["xx"], ["gt"], ["lt"]]),
            lambda k: ["persist", k],
            lambda k: ["ttl", k],
            lambda k: ["type", k],
            lambda k: ["exists", k, other(k)],
            lambda k: ["rename", k, other(k)],
            lambda k: ["renamenx", k, other(k)],
            lambda k: ["copy", k, other(k)] + rnd.choice([[], ["replace"]]),
            lambda k: ["getset", k, "gs"],
            lambda k: ["getdel", k],
            lambda k: ["mset", k, "m1", other(k), "m2"],
            lambda k: ["msetnx", k, "m1", other(k), "m2"],
            lambda k: ["set", k, "s", rnd.choice(["keepttl", "get", "nx", "xx"])],
            lambda k: ["dbsize"],
            lambda k: ["keys", "k*"],
        ]
        diffs = []
        for i in range(4000):
            g = rnd.randrange(len(gens))
            hashy = 3 <= g <= 13
            pool = keys[6:] if hashy == (rnd.random() < 0.97) else keys[:6]
            cmd = gens[g](rnd.choice(pool))
            if rnd.random() < 0.05:  # a MULTI/EXEC of a few commands
                cmds = [cmd] + [rnd.choice(gens)(rnd.choice(keys)) for _ in range(rnd.randrange(1, 5))]
                a, b = exec_block(s, cmds), exec_block(r, cmds)
                if a != b:
                    diffs.append("op %d MULTI %r: strata %r, redis %r" % (i, cmds, a, b))
                continue
            a, b = normalize(cmd, reply(s, cmd)), normalize(cmd, reply(r, cmd))
            if a != b:
                diffs.append("op %d %s: strata %r, redis %r" % (i, " ".join(cmd), a, b))
                if len(diffs) > 5:
                    break
        assert not diffs, "\n".join(diffs)
        srv.restart()  # everything acknowledged is there after a restart
        s = srv.client()
        for k in keys:
            for cmd in (["type", k], ["get", k], ["hgetall", k], ["ttl", k]):
                a, b = normalize(cmd, reply(s, cmd)), normalize(cmd, reply(r, cmd))
                assert a == b, "after restart %s: strata %r, redis %r" % (cmd, a, b)
        assert s.dbsize() == r.dbsize()
    finally:
        ref.close()


@test
def random_arguments_match_redis(srv):
    """Argument fuzzing: every command of this file's family with random
    tokens (options, bad numbers, wrong types, wrong arity); strata must
    answer exactly as redis-server, and stay up. No token makes a TTL
    short enough to expire during the test."""
    import random
    rnd = random.Random(7)
    cmds = ("get set setnx setex psetex mget mset msetnx getset getdel getex incr incrby decr "
            "decrby incrbyfloat append strlen getrange setrange substr hset hsetnx hmset hget "
            "hmget hgetall hdel hexists hlen hkeys hvals hincrby hincrbyfloat hstrlen hscan del "
            "unlink exists type keys scan rename renamenx expire pexpire expireat pexpireat ttl "
            "pttl persist copy expiretime pexpiretime touch").split()
    toks = ["k", "h", "s", "k2", "", "-1", "0", "100000", "9223372036854775807",
            "9223372036854775808", "-9223372036854775808", "1.5", "nan", "inf", "-inf", "ex",
            "px", "exat", "pxat", "nx", "xx", "gt", "lt", "get", "keepttl", "persist",
            "withvalues", "match", "count", "type", "db", "replace", "*", "[a", "\\", "string",
            "hash", "abc"]
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        for c in (s, r):
            c.hset("h", "a", "1")
            c.set("s", "x")
        diffs = []
        for i in range(6000):
            name = rnd.choice(cmds)
            cmd = [name] + [rnd.choice(toks) for _ in range(rnd.randrange(0, 6))]
            a, b = reply(s, cmd), reply(r, cmd)
            if a[0] == b[0] == "ok" and name in ("ttl", "pttl", "scan", "hscan", "keys"):
                continue  # timing, cursor values and order legitimately differ
            if a != b:
                diffs.append("op %d %r: strata %r, redis %r" % (i, cmd, a, b))
                if len(diffs) > 5:
                    break
        assert not diffs, "\n".join(diffs)
        assert s.ping()
    finally:
        ref.close()



@test
def watch_sees_every_kind_of_write(srv):
    r, other = srv.client(), srv.client()
    r.hset("big", mapping={("f%d" % i): "v" for i in range(200)})
    r.set("s", "1")
    writes = [
        lambda: other.hset("big", "f1", "changed"),  # big hash, field count unchanged
        lambda: other.expire("s", 100),
        lambda: other.persist("s"),
        lambda: other.rename("s", "t") and other.rename("t", "s"),
        lambda: other.copy("s", "big", replace=True),
        lambda: other.hset("big", "x", "1") and other.hdel("big", "x"),
        lambda: other.flushdb(),
    ]
    for i, write in enumerate(writes):
        r.set("s", "1", ex=1000)
        if r.type("big") != b"hash":
            r.delete("big")
            r.hset("big", mapping={("f%d" % j): "v" for j in range(200)})
        with r.pipeline(transaction=True) as p:
            p.watch("big", "s")
            p.multi()
            p.set("marker", str(i))
            write()
            try:
                p.execute()
                assert False, "EXEC ran after write %d" % i
            except redis.WatchError:
                pass
    assert other.get("marker") is None



if __name__ == "__main__":
    main()
