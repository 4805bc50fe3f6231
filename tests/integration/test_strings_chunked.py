"""test_strings_chunked.py -- strings that SETBIT, BITFIELD, SETRANGE, APPEND
and PFADD make longer than 4096 bytes are stored in 1 KiB chunks
(ENCODING.md, "Strings"): every command still sees Redis's string, byte for
byte (compared with a real redis-server, also DEBUG DIGEST-VALUE and a
DUMP/RESTORE round trip), across a restart, and a change to a big value
writes about one chunk, not the value.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main
from redis_compare import RealRedis


def raw(c):
    c.response_callbacks.clear()  # OBJECT, DEBUG ... as plain replies
    return c


def call(c, *cmd):
    try:
        return c.execute_command(*cmd)
    except redis.ResponseError as e:
        return "ERR " + str(e)


def same(s, r, *cmd):
    a, b = call(s, *cmd), call(r, *cmd)
    assert a == b, "%r: strata %r, redis %r" % (cmd, str(a)[:200], str(b)[:200])
    return a


def user_bytes(c):
    return int(c.info("engine")["bytes_written_user"])


def random_change(rnd, key, size):
    k = rnd.randrange(6)
    if k == 0:
        return ("setbit", key, rnd.randrange(size * 8), rnd.randrange(2))
    if k == 1:
        bits = rnd.randrange(1, 64)
        return ("bitfield", key, "incrby", "i%d" % bits, rnd.randrange(size * 8),
                rnd.randrange(-1000, 1000), "get", "u8", rnd.randrange(size * 8))
    if k == 2:
        return ("setrange", key, rnd.randrange(size), os.urandom(rnd.randrange(1, 3000)))
    if k == 3:
        return ("append", key, os.urandom(rnd.randrange(1, 50)))
    if k == 4:
        return ("setbit", key, rnd.randrange(size * 8, size * 9), 1)  # grows it
    return ("bitfield", key, "set", "u16", rnd.randrange(size * 8), rnd.randrange(65536))


def reads(rnd, key, size):
    a, b = sorted(rnd.randrange(-size, size) for _ in range(2))
    return [("get", key), ("strlen", key), ("getbit", key, rnd.randrange(size * 9)),
            ("getrange", key, a, b), ("bitcount", key), ("bitcount", key, a, b),
            ("bitpos", key, 1), ("bitpos", key, 0, a, b), ("object", "encoding", key),
            ("debug", "digest-value", key), ("type", key), ("lcs", key, "small"),
            ("bitfield_ro", key, "get", "i13", rnd.randrange(size * 8))]


@test
def chunked_strings_read_as_redis_strings(srv):
    ref = RealRedis("--enable-debug-command", "yes")
    try:
        s, r = raw(srv.client()), raw(ref.client())
        rnd = random.Random(7)
        for c in (s, r):
            c.set("small", "hello world")
        same(s, r, "setbit", "bm", 300000 * 8 - 1, 1)  # 300 KB: chunked at once
        same(s, r, "setrange", "sr", 10000, "tail")  # from nothing, past 4096
        same(s, r, "set", "plain", os.urandom(20000))  # a SET value stays packed ...
        same(s, r, "setbit", "plain", 5, 1)  # ... until a bit write turns it chunked
        for key, size in (("bm", 300000), ("sr", 10004), ("plain", 20000)):
            for i in range(60):
                same(s, r, *random_change(rnd, key, size))
                if i % 10 == 0:
                    for cmd in reads(rnd, key, size):
                        same(s, r, *cmd)
        same(s, r, "bitop", "xor", "x", "bm", "sr", "plain")
        same(s, r, "get", "x")
        same(s, r, "debug", "digest")
        # DUMP/RESTORE of a chunked value, both ways.
        same(s, r, "restore", "from-redis", 0, r.execute_command("dump", "bm"))
        same(s, r, "restore", "from-strata", 0, s.execute_command("dump", "bm"))
        same(s, r, "get", "from-redis")
        same(s, r, "get", "from-strata")
        # Key commands keep the chunks with the value.
        same(s, r, "copy", "bm", "bm2")
        same(s, r, "rename", "bm2", "bm3")
        same(s, r, "pexpire", "bm3", 1000000)
        same(s, r, "persist", "bm3")
        same(s, r, "getex", "bm3", "ex", 1000)
        same(s, r, "get", "bm3")
        same(s, r, "getdel", "bm3")
        same(s, r, "exists", "bm3")
        same(s, r, "set", "sr", "x", "get")  # a whole write packs it again
        same(s, r, "get", "sr")
        same(s, r, "incr", "plain")
        same(s, r, "incrbyfloat", "plain", 1)
        same(s, r, "dbsize")
        same(s, r, "debug", "digest")
        srv.restart()
        s = raw(srv.client())
        for key in ("bm", "plain", "x", "from-redis", "from-strata"):
            same(s, r, "get", key)
        same(s, r, "debug", "digest")
    finally:
        ref.close()


@test
def a_bit_write_on_a_big_bitmap_writes_one_chunk(srv):
    c = srv.client()
    c.setbit("bm", (1 << 23) - 1, 1)  # 1 MB
    before = user_bytes(c)
    rnd = random.Random(3)
    for _ in range(200):
        c.setbit("bm", rnd.randrange(1 << 23), 1)
        c.bitfield("bm").incrby("u8", rnd.randrange(1 << 23), 1).execute()
        c.setrange("bm", rnd.randrange(1 << 20), b"xy")
    per = (user_bytes(c) - before) / 600
    assert per < 3000, "%.0f bytes written per command on a 1 MB bitmap" % per
    assert c.strlen("bm") == 1 << 20
    # A bit far out makes one chunk, not 512 MB of zeros.
    before = user_bytes(c)
    c.setbit("far", (1 << 32) - 1, 1)
    assert user_bytes(c) - before < 10000
    assert c.strlen("far") == 1 << 29 and c.getbit("far", (1 << 32) - 1) == 1
    assert c.bitcount("far", (1 << 29) - 10, -1) == 1


@test
def pfadd_on_a_dense_hll_writes_one_chunk_and_counts_as_redis(srv):
    ref = RealRedis()
    try:
        s, r = raw(srv.client()), raw(ref.client())
        els = ["f:%d" % i for i in range(20000)]
        for i in range(0, len(els), 1000):
            same(s, r, "pfadd", "h", *els[i:i + 1000])
        assert same(s, r, "strlen", "h") == 12304  # dense
        same(s, r, "pfcount", "h")
        rnd = random.Random(5)
        before = user_bytes(srv.client())
        for i in range(300):
            same(s, r, "pfadd", "h", "e:%d" % rnd.randrange(1 << 40))
        per = (user_bytes(srv.client()) - before) / 300
        assert per < 3000, "%.0f bytes written per PFADD on a dense HLL" % per
        same(s, r, "get", "h")
        same(s, r, "pfcount", "h")
        same(s, r, "get", "h")  # the refreshed cached count
        same(s, r, "pfadd", "h", "zz", "zy", "zx")
        same(s, r, "pfmerge", "m", "h", "h")
        same(s, r, "get", "m")
        same(s, r, "pfdebug", "getreg", "h")
        same(s, r, "setrange", "h", 4, "\x07")  # not an HLL any more
        same(s, r, "pfadd", "h", "a")
        srv.restart()
        s = raw(srv.client())
        same(s, r, "get", "m")
        same(s, r, "pfcount", "m")
    finally:
        ref.close()


if __name__ == "__main__":
    main()
