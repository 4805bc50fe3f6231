"""test_dump_streams.py -- DUMP, RESTORE and MIGRATE of streams against
redis-server 7.0: Redis's stream payloads (type 19) restore into strata
and dump back byte for byte; strata's payloads restore into Redis with the
same entries, groups, PELs, consumers, XINFO STREAM FULL and DEBUG
DIGEST-VALUE; the older type 15 (Redis 5-6.2) and Redis 7.2's type 21
restore with what they lack derived as Redis derives it; damaged or
inconsistent payloads are refused with `ERR Bad data format`; MIGRATE of
a stream to redis-server and to strata.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, struct, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main, Server
from redis_compare import RealRedis

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x95AC9329AC4BC9B5 if _c & 1 else 0)
    _CRC_TABLE.append(_c)


def refoot(body):
    """body + rdbver 10 + Redis's crc64 (table-driven: payloads here are long)."""
    body = body + b"\x0a\x00"
    crc = 0
    for b in body:
        crc = _CRC_TABLE[(crc ^ b) & 0xff] ^ (crc >> 8)
    return body + struct.pack("<Q", crc)

BAD = "Bad data format"


# ---- A small codec of the stream object (enough for the tests) -----------

class Reader:
    def __init__(self, b):
        self.b, self.i = b, 0

    def take(self, n):
        assert self.i + n <= len(self.b), "short payload"
        v = self.b[self.i:self.i + n]
        self.i += n
        return v

    def len(self):
        b0 = self.take(1)[0]
        t = b0 >> 6
        if t == 0:
            return b0 & 0x3f
        if t == 1:
            return ((b0 & 0x3f) << 8) | self.take(1)[0]
        if b0 == 0x80:
            return struct.unpack(">I", self.take(4))[0]
        if b0 == 0x81:
            return struct.unpack(">Q", self.take(8))[0]
        raise AssertionError("encoded length %x" % b0)

    def string(self):
        b0 = self.b[self.i]
        if b0 >> 6 == 3:
            self.i += 1
            k = {0: 1, 1: 2, 2: 4}[b0 & 0x3f]
            return str(int.from_bytes(self.take(k), "little", signed=True)).encode()
        return self.take(self.len())


def put_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xff])
    if n <= 0xffffffff:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def put_str(s):
    return put_len(len(s)) + s


def parse_stream(payload):
    """A type 19 payload (footer included) as a dict."""
    r = Reader(payload[:-10])
    t = r.take(1)[0]
    assert t == 19, t
    st = {"nodes": [r.string() + b"|" + r.string() for _ in range(r.len())]}
    st["nodes"] = [(n[:16], n[17:]) for n in st["nodes"]]
    st["length"] = r.len()
    st["last"] = (r.len(), r.len())
    st["first"] = (r.len(), r.len())
    st["maxdel"] = (r.len(), r.len())
    st["added"] = r.len()
    groups = []
    for _ in range(r.len()):
        g = {"name": r.string(), "last": (r.len(), r.len()), "read": r.len()}
        g["pel"] = [(r.take(16), r.take(8), r.len()) for _ in range(r.len())]
        g["cons"] = [(r.string(), r.take(8), [r.take(16) for _ in range(r.len())])
                     for _ in range(r.len())]
        groups.append(g)
    st["groups"] = groups
    assert r.i == len(r.b), "trailing bytes"
    return st


def build_stream(st, t=19):
    """The payload of st as RDB type t (15, 19 or 21)."""
    out = bytes([t]) + put_len(len(st["nodes"]))
    for k, lp in st["nodes"]:
        out += put_str(k) + put_str(lp)
    out += put_len(st["length"]) + put_len(st["last"][0]) + put_len(st["last"][1])
    if t != 15:
        for v in st["first"] + st["maxdel"] + (st["added"],):
            out += put_len(v)
    out += put_len(len(st["groups"]))
    for g in st["groups"]:
        out += put_str(g["name"]) + put_len(g["last"][0]) + put_len(g["last"][1])
        if t != 15:
            out += put_len(g["read"])
        out += put_len(len(g["pel"]))
        for pid, time, count in g["pel"]:
            out += pid + time + put_len(count)
        out += put_len(len(g["cons"]))
        for name, seen, ids in g["cons"]:
            out += put_str(name) + seen + (seen if t == 21 else b"") + put_len(len(ids))
            out += b"".join(ids)
    return refoot(out)


# ---- Streams to compare --------------------------------------------------

def make_stream(c, k, rnd, n=60, deletes=True):
    """XADDs with shared and changing field sets, integer and long values,
    two groups with pending entries held by several consumers."""
    for i in range(n):
        kind = rnd.random()
        if kind < 0.5:
            f = ["name", "n%d" % i, "count", str(rnd.randint(-10 ** 12, 10 ** 12))]
        elif kind < 0.8:
            f = ["x%d" % rnd.randint(0, 3), "v" * rnd.choice([1, 70, 5000])]
        else:
            f = ["12", "-7", "a", str(rnd.randint(0, 127))]
        c.execute_command("XADD", k, "%d-%d" % (1000 + i // 3, i % 3), *f)
    c.execute_command("XGROUP", "CREATE", k, "g1", "0")
    c.execute_command("XGROUP", "CREATE", k, "g2", "$")
    c.execute_command("XGROUP", "CREATE", k, "123", "1005-0")
    c.execute_command("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "7", "STREAMS", k, ">")
    c.execute_command("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "5", "STREAMS", k, ">")
    c.execute_command("XREADGROUP", "GROUP", "123", "7", "COUNT", "3", "STREAMS", k, ">")
    c.execute_command("XGROUP", "CREATECONSUMER", k, "g1", "idle")
    c.execute_command("XACK", k, "g1", "1000-1", "1001-2")
    c.execute_command("XCLAIM", k, "g1", "bob", "0", "1000-2", "RETRYCOUNT", "5")
    if deletes:
        c.execute_command("XDEL", k, "1000-0", "1002-1", "1010-0", "1003-0")
        c.execute_command("XTRIM", k, "MINID", "1000-2")


def full(c, k):
    """XINFO STREAM FULL without the times that differ between servers."""
    info = c.execute_command("XINFO", "STREAM", k, "FULL")
    return scrub(info)


def scrub(v):
    if isinstance(v, list):
        out, i = [], 0
        while i < len(v):
            x = v[i]
            if x in (b"seen-time", b"radix-tree-nodes"):
                i += 2
                continue
            out.append(scrub(x))
            i += 1
        return out
    return v


def pending(c, k, g):
    return [(p["message_id"], p["consumer"], p["times_delivered"])
            for p in c.xpending_range(k, g, "-", "+", 1000)]


def state(c, k):
    groups = [dict(zip(g[::2], g[1::2]))[b"name"] for g in c.execute_command("XINFO", "GROUPS", k)]
    return (c.execute_command("XRANGE", k, "-", "+"), full(c, k),
            [(g, pending(c, k, g)) for g in groups],
            c.execute_command("DEBUG", "DIGEST-VALUE", k))


def nodes_config(*cs, entries=5, bytes_=4096):
    for c in cs:
        c.config_set("stream-node-max-entries", str(entries))
        c.config_set("stream-node-max-bytes", str(bytes_))


# ---- Tests -----------------------------------------------------------------

@test
def redis_stream_payload_restores_and_dumps_back_byte_for_byte(srv):
    ref = RealRedis("--enable-debug-command", "yes", "--rdbcompression", "no")
    try:
        s, r = srv.client(), ref.client()
        for seed, (entries, nbytes) in enumerate([(5, 4096), (100, 300), (0, 4096), (3, 0)]):
            nodes_config(s, r, entries=entries, bytes_=nbytes)
            k = "st%d" % seed
            make_stream(r, k, random.Random(seed), deletes=False)
            payload = r.dump(k)
            assert s.restore(k, 0, payload)
            assert state(s, k) == state(r, k), k
            assert s.dump(k) == payload, k
            # the same node boundaries afterwards: XADD on both, compare radix-tree-keys
            for i in range(30):
                for c in (s, r):
                    c.execute_command("XADD", k, "*", "name", "z%d" % i, "count", str(i))
            si, ri = (dict(zip(*[iter(c.execute_command("XINFO", "STREAM", k))] * 2)) for c in (s, r))
            assert si[b"radix-tree-keys"] == ri[b"radix-tree-keys"], (k, si, ri)
    finally:
        ref.close()


@test
def strata_stream_payload_restores_into_redis_with_the_same_state(srv):
    ref = RealRedis("--enable-debug-command", "yes", "--sanitize-dump-payload", "yes")
    try:
        s, r = srv.client(), ref.client()
        for seed in range(4):
            nodes_config(s, r, entries=[5, 100, 2, 10][seed], bytes_=[4096, 200, 4096, 0][seed])
            k = "st%d" % seed
            make_stream(s, k, random.Random(seed))
            assert r.restore(k, 0, s.dump(k))
            assert state(r, k) == state(s, k), k
            # and back: Redis's payload of it restores into strata unchanged
            assert s.restore(k + ":back", 0, r.dump(k))
            assert state(s, k + ":back")[0] == state(s, k)[0]
            assert s.dump(k + ":back") == s.dump(k)
        # an empty stream with a group and a deleted-id history
        s.execute_command("XADD", "e", "5-1", "a", "1")
        s.execute_command("XGROUP", "CREATE", "e", "g", "0")
        s.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "e", ">")
        s.execute_command("XDEL", "e", "5-1")
        assert r.restore("e", 0, s.dump("e"))
        assert state(r, "e") == state(s, "e")
    finally:
        ref.close()


@test
def legacy_and_newer_stream_payloads_restore_as_redis_loads_them(srv):
    ref = RealRedis("--enable-debug-command", "yes", "--rdbcompression", "no")
    try:
        s, r = srv.client(), ref.client()
        make_stream(r, "src", random.Random(5))
        make_stream(r, "src2", random.Random(6), deletes=False)
        st = parse_stream(r.dump("src"))
        # type 15: first id, max deleted id, entries-added and entries-read derived
        old = build_stream(st, 15)
        assert s.restore("v15", 0, old) and r.restore("v15", 0, old)
        assert state(s, "v15") == state(r, "v15")
        # type 21 (Redis 7.2, consumers' active time) reads as type 19
        assert s.restore("v21", 0, build_stream(parse_stream(r.dump("src2")), 21))
        assert state(s, "v21") == state(r, "src2")
        assert s.dump("v21") == r.dump("src2")
    finally:
        ref.close()


def bad(s, payload, why):
    try:
        s.restore("bad", 0, payload, replace=True)
    except redis.ResponseError as e:
        assert BAD in str(e) or "checksum" in str(e), (why, str(e))
        return
    raise AssertionError("accepted: " + why)


@test
def inconsistent_stream_payloads_are_refused(srv):
    ref = RealRedis("--rdbcompression", "no")
    try:
        s, r = srv.client(), ref.client()
        make_stream(r, "src", random.Random(3))
        good = r.dump("src")
        st = parse_stream(good)

        def variant(**kw):
            v = dict(st)
            v["groups"] = [dict(g) for g in st["groups"]]
            for k, x in kw.items():
                v[k] = x
            return v

        g0 = st["groups"][0]
        bad(s, build_stream(variant(length=st["length"] + 1)), "length too big")
        bad(s, build_stream(variant(length=st["length"] - 1)), "length too small")
        bad(s, build_stream(variant(groups=st["groups"] + [st["groups"][0]])), "duplicate group")
        ghost = dict(g0, cons=g0["cons"] + [(b"ghost", b"\0" * 8, [b"\0" * 15 + b"\x09"])])
        bad(s, build_stream(variant(groups=[ghost] + st["groups"][1:])), "consumer PEL id not in group PEL")
        orphan = dict(g0, cons=[(n, t, []) for n, t, _ in g0["cons"]])
        bad(s, build_stream(variant(groups=[orphan] + st["groups"][1:])), "pending entry without consumer")
        twice = dict(g0, cons=g0["cons"] + [(b"dup", b"\0" * 8, g0["cons"][0][2])])
        bad(s, build_stream(variant(groups=[twice] + st["groups"][1:])), "pending entry held twice")
        dupc = dict(g0, cons=g0["cons"] + [(g0["cons"][-1][0], b"\0" * 8, [])])
        bad(s, build_stream(variant(groups=[dupc] + st["groups"][1:])), "duplicate consumer")
        bad(s, build_stream(variant(last=(0, 1))), "last id below the entries")
        bad(s, build_stream(variant(first=(999, 0))), "first id not the first entry")
        bad(s, build_stream(variant(nodes=st["nodes"][::-1])), "nodes out of order")
        k0, lp0 = st["nodes"][0]
        bad(s, build_stream(variant(nodes=[(k0[:15], lp0)] + st["nodes"][1:])), "short node key")
        for i in range(6, len(lp0) - 1, max(1, len(lp0) // 40)):
            lp = bytearray(lp0)
            lp[i] ^= 0x41
            nodes = [(k0, bytes(lp))] + st["nodes"][1:]
            try:
                s.restore("fuzz", 0, build_stream(variant(nodes=nodes)), replace=True)
            except redis.ResponseError as e:
                assert BAD in str(e), str(e)
        # every truncation of the object
        body = good[:-10]
        for n in range(1, len(body), max(1, len(body) // 200)):
            bad(s, refoot(body[:n]), "truncated at %d" % n)
        assert s.ping() and s.restore("ok", 0, good)
    finally:
        ref.close()


@test
def migrate_moves_a_stream_to_redis_and_to_strata(srv):
    ref = RealRedis("--enable-debug-command", "yes")
    other = Server().start()
    try:
        s, r, o = srv.client(), ref.client(), other.client()
        make_stream(s, "m", random.Random(11))
        s.pexpire("m", 600000)
        want = state(s, "m")  # DIGEST-VALUE counts the TTL, as Redis's
        assert s.execute_command("MIGRATE", "127.0.0.1", ref.port, "m", 0, 5000, "COPY") == b"OK"
        assert state(r, "m") == want and r.pttl("m") > 500000
        assert s.execute_command("MIGRATE", "127.0.0.1", other.port, "m", 0, 5000) == b"OK"
        assert not s.exists("m")
        assert state(o, "m") == want and o.pttl("m") > 500000
    finally:
        other.cleanup()
        ref.close()


if __name__ == "__main__":
    main()
