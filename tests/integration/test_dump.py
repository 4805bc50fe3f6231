"""test_dump.py -- DUMP and RESTORE against redis-server 7.0: payloads
made by Redis in each of its encodings restore into strata with the same
content and OBJECT ENCODING, strata's payloads restore into Redis with the
same content, RESTORE's options and error texts match, and damaged
payloads are refused without harm.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main
from redis_compare import RealRedis

CRC_POLY = 0x95AC9329AC4BC9B5


def crc64(data):
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (CRC_POLY if crc & 1 else 0)
    return crc


def refoot(body):
    """body + rdbver 10 + a correct crc: a payload that passes the footer check."""
    body = body + b"\x0a\x00"
    return body + struct.pack("<Q", crc64(body))


def has_zsets(r):
    try:
        r.execute_command("ZCARD", "nosuchkey")
        return True
    except redis.ResponseError:
        return False


def fill(r, zsets):
    """Values of every type in each of Redis 7.0's encodings; returns the keys."""
    rnd = random.Random(9)
    r.set("s:int8", "7"); r.set("s:int32", "-2000000000"); r.set("s:int64", "123456789012345")
    r.set("s:lead0", "0123"); r.set("s:short", "hello"); r.set("s:empty", "")
    r.set("s:bin", bytes(range(256)))
    r.set("s:lzf", "abcdefgh" * 200)  # compressed by Redis (rdbcompression yes)
    r.set("s:rand", bytes(rnd.getrandbits(8) for _ in range(3000)))
    r.hset("h:lp", mapping={"a": "1", "b": "x" * 30, "-5": "300000"})
    r.hset("h:ht", mapping={"f%d" % i: "v%d" % i for i in range(600)})
    r.hset("h:long", mapping={"a": "y" * 100})  # hashtable by value length
    r.sadd("set:int", 5, -3, 1000000, 70000, -9000000000)
    r.sadd("set:ht", "a", "b", "12", "ccc")
    r.sadd("set:bigint", *range(700))
    r.rpush("l:small", "a", "1", "-77", "x" * 70, "")
    r.rpush("l:big", *["item%d" % i for i in range(3000)])
    r.rpush("l:ints", *[str(rnd.randint(-2 ** 63, 2 ** 63 - 1)) for _ in range(300)])
    r.rpush("l:long", "z" * 20000, "short", "w" * 9000)
    keys = [k.decode() for k in r.keys("*")]
    if zsets:
        r.zadd("z:lp", {"a": 1, "b": -2.5, "c": 1e300, "d": float("inf")})
        r.zadd("z:sl", {"m%d" % i: i / 7 for i in range(300)})
        keys += ["z:lp", "z:sl"]
    return sorted(keys)


def content(r, k):
    t = r.type(k).decode()
    if t == "string":
        return t, r.get(k)
    if t == "hash":
        return t, sorted(r.hgetall(k).items())
    if t == "set":
        return t, sorted(r.smembers(k))
    if t == "list":
        return t, r.lrange(k, 0, -1)
    if t == "zset":
        return t, r.zrange(k, 0, -1, withscores=True)
    return t, None


@test
def redis_payloads_restore_into_strata_and_strata_payloads_into_redis(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        keys = fill(r, has_zsets(s))
        for k in keys:
            payload = r.dump(k)
            assert s.restore(k, 0, payload), k
            assert content(s, k) == content(r, k), k
            assert s.object("encoding", k) == r.object("encoding", k), \
                (k, s.object("encoding", k), r.object("encoding", k))
            back = s.dump(k)
            assert r.restore(k + ":back", 0, back), k
            assert content(r, k + ":back") == content(r, k), k
            assert r.object("encoding", k + ":back") == r.object("encoding", k), k
            assert s.restore(k + ":again", 0, back) and content(s, k + ":again") == content(s, k)
        srv.restart()
        s = srv.client()
        for k in keys:
            assert content(s, k) == content(r, k), "after restart: " + k
    finally:
        ref.close()


def random_elem(rnd):
    kind = rnd.random()
    if kind < 0.3:
        return str(rnd.randint(-200, 200))
    if kind < 0.5:
        return str(rnd.randint(-2 ** 63, 2 ** 63 - 1) >> rnd.randint(0, 63))
    if kind < 0.6:
        return bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 20)))
    return "e%d" % rnd.randint(0, 10 ** 6) + "x" * rnd.choice([0, 0, 5, 60, 300])


@test
def random_values_round_trip_between_redis_and_strata(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        zsets = has_zsets(s)
        rnd = random.Random(int(os.environ.get("STRATA_SEED", "1")))
        for i in range(60):
            r.config_set("list-max-listpack-size", rnd.choice(["-2", "-1", "4", "128"]))
            k = "r%d" % i
            n = rnd.choice([1, 2, 5, 40, 200, 600, 1500])
            t = rnd.choice(["string", "list", "set", "hash"] + (["zset"] if zsets else []))
            if t == "string":
                r.set(k, random_elem(rnd))
            elif t == "list":
                r.rpush(k, *[random_elem(rnd) for _ in range(n)])
            elif t == "set":
                r.sadd(k, *[random_elem(rnd) for _ in range(n)])
            elif t == "hash":
                r.hset(k, mapping={random_elem(rnd): random_elem(rnd) for _ in range(n)})
            else:
                r.zadd(k, {random_elem(rnd): rnd.uniform(-1e6, 1e6) for _ in range(n)})
            s.restore(k, 0, r.dump(k))
            assert content(s, k) == content(r, k), k
            assert s.object("encoding", k) == r.object("encoding", k), k
            r.restore(k + ":b", 0, s.dump(k))
            assert content(r, k + ":b") == content(r, k), k
    finally:
        ref.close()


@test
def restore_options_and_errors_match_redis(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        for c in (s, r):
            c.set("src", "value"); c.rpush("lst", "a", "b")
        good = r.dump("src")
        cases = [
            ["RESTORE", "src", "0", good],  # BUSYKEY
            ["RESTORE", "src", "-1", good],  # BUSYKEY comes first
            ["RESTORE", "new", "-1", good],
            ["RESTORE", "new", "abc", good],
            ["RESTORE", "new", "0", good, "BOGUS"],
            ["RESTORE", "new", "0", good, "IDLETIME", "-1"],
            ["RESTORE", "new", "0", good, "FREQ", "256"],
            ["RESTORE", "new", "0", good, "IDLETIME", "5", "FREQ", "5"],
            ["RESTORE", "new", "0", good, "FREQ"],
            ["RESTORE", "new", "0", b"short"],
            ["RESTORE", "new", "0", good[:-1] + bytes([good[-1] ^ 1])],  # crc
            ["RESTORE", "new", "0", good[:-10] + b"\x0b\x00" + good[-8:]],  # version 11
            ["RESTORE", "new", "0", refoot(b"\x00\x05abc")],  # string past its end
            ["RESTORE", "new", "0", refoot(b"\x63\x01a")],  # unknown type
            ["RESTORE", "new", "0", refoot(b"\x02\x02\x01a\x01a")],  # duplicate set member
            ["RESTORE", "new", "0", refoot(b"\x04\x02\x01a\x011\x01a\x012")],  # duplicate field
            ["RESTORE", "new", "0", refoot(b"\x01\x00")],  # empty list
            ["RESTORE", "n2", "0", good, "REPLACE", "ABSTTL", "IDLETIME", "10"],
            ["RESTORE", "lst", "0", good, "REPLACE"],
            ["RESTORE", "gone", "1", good, "ABSTTL"],  # in the past: OK, nothing stored
            ["RESTORE", "src", "1", good, "ABSTTL", "REPLACE"],  # deletes src
            ["EXISTS", "gone", "src", "lst", "new", "n2"],
            ["GET", "lst"], ["DUMP", "nosuchkey"],
        ]
        for cmd in cases:
            a, b = reply(s, cmd), reply(r, cmd)
            assert a == b, "%r: strata %r, redis %r" % (cmd[:4], a, b)
        assert s.object("idletime", "n2") == r.object("idletime", "n2") == 10
        s.restore("ttl", 5000, good); r.restore("ttl", 5000, good)
        assert 4000 < s.pttl("ttl") <= 5000
        s.restore("attl", 2 ** 42, good, absttl=True)
        assert s.pexpiretime("attl") == 2 ** 42
        s.restore("big", 2 ** 33, good)  # beyond 32 bits
        assert s.pttl("big") > 2 ** 32
    finally:
        ref.close()


def reply(c, cmd):
    try:
        return ("ok", c.execute_command(*cmd))
    except redis.ResponseError as e:
        return ("err", str(e))


@test
def restore_freq_sets_the_lfu_counter():
    from harness import Server
    srv = Server(maxmemory_policy="allkeys-lfu").start()
    try:
        s = srv.client()
        s.set("a", "1")
        s.restore("k", 0, s.dump("a"), frequency=100)
        assert s.object("freq", "k") == 100
        s.restore("k2", 0, s.dump("a"))
        assert s.object("freq", "k2") == 5  # Redis's LFU_INIT_VAL
    finally:
        srv.cleanup()


@test
def damaged_payloads_are_refused_and_the_server_stays_up(srv):
    s = srv.client()
    ref = RealRedis()
    try:
        r = ref.client()
        keys = fill(r, False)
        payloads = [r.dump(k) for k in keys if len(r.dump(k)) < 4000]
    finally:
        ref.close()
    rnd = random.Random(3)
    outcomes = {"ok": 0, "err": 0}
    for i in range(600):
        p = bytearray(rnd.choice(payloads)[:-10])
        for _ in range(rnd.randint(1, 4)):
            op = rnd.random()
            if op < 0.5 and p:
                p[rnd.randrange(len(p))] = rnd.getrandbits(8)
            elif op < 0.75 and p:
                del p[rnd.randrange(len(p)):]
            else:
                p[rnd.randrange(len(p) + 1):0] = bytes([rnd.getrandbits(8)])
        try:
            s.restore("fz%d" % i, 0, refoot(bytes(p)))
            outcomes["ok"] += 1
            s.dump("fz%d" % i)
        except redis.ResponseError as e:
            assert str(e) in ("Bad data format",), str(e)
            outcomes["err"] += 1
    assert s.ping()
    assert outcomes["err"] > 100, outcomes


if __name__ == "__main__":
    main()
