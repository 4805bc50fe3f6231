"""test_streams_diff.py -- a differential test of streams against a real
redis-server: thousands of random stream commands (XADD with every trim
form, XRANGE, XREAD, XDEL, XTRIM, XSETID, consumer groups, XREADGROUP,
XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO, MULTI/EXEC around them) mixed
with string, hash and key commands over a small key space so types
collide, over RESP2 and RESP3, compared reply by reply. Then the whole
keyspace of both servers (every stream's entries, groups, PELs and
consumers) is compared, again after a clean restart of strata, and again
after SIGKILL with appendfsync always.

Entry ids are explicit (`*` differs between servers; the last test checks
`*` on its own). Replies that carry times (idle, seen-time, delivery
times) are compared with those masked, and radix-tree-nodes (which counts
Redis's radix tree nodes) is masked too; everything else -- XLEN after `~`
trims and radix-tree-keys included -- must be equal, byte for byte where
no time is involved.

Run with /usr/bin/python3 (python3-redis). STRATA_RANDOM_OPS and
STRATA_SEED change the length and the seed."""
import os, random, re, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, RespError, Server, test, main
from redis_compare import RealRedis

OPS = int(os.environ.get("STRATA_RANDOM_OPS", "4000"))
SEED = int(os.environ.get("STRATA_SEED", str(int(time.time()) % 100000)))
KEYS = [b"s%d" % i for i in range(4)] + [b"k0"]
GROUPS = [b"g1", b"g2"]
CONSUMERS = [b"c1", b"c2", b"c3"]
FIELDS = [b"f", b"g", b"h", b"1", b""]
EXACT, TIMED = "exact", "timed"


def key(g):
    return g.choice(KEYS)


def value(g):
    r = g.random()
    if r < 0.85:
        return g.choice([b"v", b"1", b"22", b"", b"x y", b"-7"])
    return bytes(g.choice(b"abcdef") for _ in range(g.randint(100, 1200)))


def xid(g, star=False):
    ms = g.randint(0, 40)
    r = g.random()
    if star and r < 0.2:
        return b"%d-*" % ms
    if r < 0.3:
        return b"%d" % ms
    return b"%d-%d" % (ms, g.randint(0, 3))


def bound(g, low):
    r = g.random()
    if r < 0.2:
        return b"-" if low else b"+"
    if r < 0.35:
        return b"(" + xid(g)
    return xid(g)


def fields(g):
    if g.random() < 0.6:
        fs = [b"f"] if g.random() < 0.5 else [b"f", b"g"]
    else:
        fs = [g.choice(FIELDS) for _ in range(g.randint(1, 3))]
    out = ()
    for f in fs:
        out += (f, value(g))
    return out


def trim_opts(g, xadd):
    if xadd and g.random() < 0.5:
        return ()
    strat = g.choice(["MAXLEN", "MINID"])
    op = g.choice([(), ("=",), ("~",)])
    arg = g.randint(0, 30) if strat == "MAXLEN" else xid(g)
    out = (strat,) + op + (arg,)
    if op == ("~",) and g.random() < 0.4:
        out += ("LIMIT", g.randint(0, 30))
    return out


def stream_commands(g):
    k, k2, gr, cn = key(g), key(g), g.choice(GROUPS), g.choice(CONSUMERS)
    ids = tuple(xid(g) for _ in range(g.randint(1, 3)))
    count = ("COUNT", g.randint(0, 5)) if g.random() < 0.5 else ()
    xadd = ("XADD", k) + (("NOMKSTREAM",) if g.random() < 0.1 else ()) + trim_opts(g, True)
    xadd += (xid(g, star=True),) + fields(g)
    create = ("XGROUP", "CREATE", k, gr, g.choice([b"$", b"0", xid(g)]))
    if g.random() < 0.3:
        create += ("MKSTREAM",)
    if g.random() < 0.2:
        create += ("ENTRIESREAD", g.randint(-1, 10))
    claim = ("XCLAIM", k, gr, cn, g.choice([0, 0, 10 ** 9])) + ids
    for opt in g.sample(["JUSTID", "FORCE", "RETRYCOUNT", "LASTID", "TIME"], g.randint(0, 3)):
        claim += {"JUSTID": ("JUSTID",), "FORCE": ("FORCE",), "TIME": ("TIME", 1000),
                  "RETRYCOUNT": ("RETRYCOUNT", g.randint(0, 5)), "LASTID": ("LASTID", xid(g))}[opt]
    rg = ("XREADGROUP", "GROUP", gr, cn) + count + (("NOACK",) if g.random() < 0.15 else ())
    rg += ("STREAMS", k) + ((k2,) if g.random() < 0.3 else ())
    rg += tuple(g.choice([b">", b">", b"0", xid(g)]) for _ in range(len(rg) - rg.index("STREAMS") - 1))
    xr = ("XREAD",) + count + ("STREAMS", k, k2, g.choice([b"0", b"$", xid(g)]), xid(g))
    return g.choice([
        (xadd, EXACT), (xadd, EXACT), (xadd, EXACT), (xadd, EXACT),
        (("XADD", k) + trim_opts(g, True) + (xid(g),) + fields(g), EXACT),
        (("XLEN", k), EXACT),
        (("XRANGE", k, bound(g, 1), bound(g, 0)) + count, EXACT),
        (("XREVRANGE", k, bound(g, 0), bound(g, 1)) + count, EXACT),
        (("XRANGE", k, "-", "+"), EXACT),
        (("XDEL", k) + ids, EXACT),
        (("XTRIM", k) + trim_opts(g, False), EXACT),
        (xr, EXACT),
        (create, EXACT), (create, EXACT),
        (("XGROUP", "SETID", k, gr, g.choice([b"$", b"0", xid(g)])), EXACT),
        (("XGROUP", "DESTROY", k, gr), EXACT),
        (("XGROUP", "CREATECONSUMER", k, gr, cn), EXACT),
        (("XGROUP", "DELCONSUMER", k, gr, cn), EXACT),
        (rg, TIMED), (rg, TIMED), (rg, TIMED),
        (("XACK", k, gr) + ids, EXACT),
        (("XPENDING", k, gr), EXACT),
        (("XPENDING", k, gr, bound(g, 1), bound(g, 0), g.randint(0, 10)), TIMED),
        (("XPENDING", k, gr, "IDLE", g.choice([0, 10 ** 9]), "-", "+", 10, cn), TIMED),
        (claim, TIMED),
        (("XAUTOCLAIM", k, gr, cn, 0, bound(g, 1), "COUNT", g.randint(1, 4))
         + (("JUSTID",) if g.random() < 0.3 else ()), TIMED),
        (("XINFO", "STREAM", k), TIMED),
        (("XINFO", "STREAM", k, "FULL") + (("COUNT", g.randint(0, 3)) if g.random() < 0.5 else ()),
         TIMED),
        (("XINFO", "GROUPS", k), EXACT),
        (("XINFO", "CONSUMERS", k, gr), TIMED),
        (("XSETID", k, xid(g)) + (("ENTRIESADDED", g.randint(0, 40)) if g.random() < 0.3 else ())
         + (("MAXDELETEDID", xid(g)) if g.random() < 0.2 else ()), EXACT),
    ])


def other_commands(g):
    k, k2 = key(g), key(g)
    return g.choice([
        (("SET", k, value(g)), EXACT),
        (("GET", k), EXACT),
        (("HSET", k, "f", value(g)), EXACT),
        (("SADD", k, value(g)), EXACT),
        (("OBJECT", "ENCODING", k), EXACT),
        (("DEL", k), EXACT),
        (("TYPE", k), EXACT),
        (("EXISTS", k, k2), EXACT),
        (("RENAME", k, k2), EXACT),
        (("COPY", k, k2, "REPLACE"), EXACT),
        (("COPY", k, k2, "DB", 1, "REPLACE"), EXACT),
        (("PEXPIRE", k, 10 ** 8), EXACT),
        (("PERSIST", k), EXACT),
        (("DBSIZE",), EXACT),
        (("SCAN", 0, "COUNT", 1000, "TYPE", "stream"), "unordered"),
    ])


def multi_commands(g):
    cmds = tuple(stream_commands(g)[0] for _ in range(g.randint(2, 4)))
    return ("MULTI",) + cmds, TIMED


GENERATORS = [(14, stream_commands), (3, other_commands), (1, multi_commands),
              (0.02, lambda g: (("FLUSHDB",), EXACT))]


def random_command(g):
    r = g.uniform(0, sum(w for w, _ in GENERATORS))
    for w, fn in GENERATORS:
        r -= w
        if r <= 0:
            return fn(g)
    return GENERATORS[-1][1](g)


# ---- Comparing -------------------------------------------------------------

ID = re.compile(rb"^\d+-\d+$")
MASKED_KEYS = {b"idle", b"seen-time", b"radix-tree-nodes"}
INFO_KEYS = MASKED_KEYS | {b"length", b"name", b"pending", b"consumers", b"entries", b"groups",
                           b"last-generated-id", b"radix-tree-keys", b"first-entry", b"lag",
                           b"entries-read", b"pel-count", b"last-delivered-id"}


def is_id(v):
    return isinstance(v, bytes) and ID.match(v) is not None


def mask(v):
    """A reply with its times replaced by "T"."""
    if isinstance(v, dict):
        return {k: "T" if k in MASKED_KEYS else mask(x) for k, x in v.items()}
    if isinstance(v, list):
        if len(v) >= 2 and len(v) % 2 == 0 and all(isinstance(x, bytes) for x in v[::2]) and \
                any(x in INFO_KEYS for x in v[::2]):
            out = []
            for i in range(0, len(v), 2):
                out += [v[i], "T" if v[i] in MASKED_KEYS else mask(v[i + 1])]
            return out
        out = [mask(x) for x in v]
        if len(v) == 4 and is_id(v[0]) and isinstance(v[1], bytes) and isinstance(v[2], int):
            out[2] = "T"  # [id, consumer, idle or delivery time, count]
        if len(v) == 3 and is_id(v[0]) and isinstance(v[1], int):
            out[1] = "T"  # [id, delivery time, count]
        return out
    if isinstance(v, int) and v > 10 ** 12:
        return "T"
    return v


def canon(v):
    if isinstance(v, list):
        return sorted((canon(x) for x in v), key=repr)
    if isinstance(v, RespError):
        return ("err", str(v))
    return v


class Pair:
    def __init__(self, srv_port, ref_port):
        self.s = {(p, db): RawConn(srv_port) for p in (2, 3) for db in (0, 1)}
        self.r = {(p, db): RawConn(ref_port) for p in (2, 3) for db in (0, 1)}
        for (p, db), c in list(self.s.items()) + list(self.r.items()):
            if p == 3:
                c.command("HELLO", "3")
            c.command("SELECT", db)

    def one(self, c, cmd):
        if cmd[0] != "MULTI":
            v = c.command(*cmd)
            return v, c.last_raw
        raw, v = b"", None
        for sub in [("MULTI",)] + list(cmd[1:]) + [("EXEC",)]:
            v = c.command(*sub)
            raw += c.last_raw
        return v, raw

    def both(self, cmd, proto, db):
        return self.one(self.s[(proto, db)], cmd), self.one(self.r[(proto, db)], cmd)

    def close(self):
        for c in list(self.s.values()) + list(self.r.values()):
            c.close()


def same_reply(mode, a, araw, b, braw):
    if mode == EXACT:
        return araw == braw
    if mode == TIMED:
        return araw[:1] == braw[:1] and repr(mask(a)) == repr(mask(b))
    return araw[:1] == braw[:1] and canon(a) == canon(b)


def run_random(pair, g, ops, diffs):
    for i in range(ops):
        cmd, mode = random_command(g)
        proto, db = g.choice((2, 3)), 0 if g.random() < 0.85 else 1
        (a, araw), (b, braw) = pair.both(cmd, proto, db)
        if not same_reply(mode, a, araw, b, braw):
            diffs.append("#%d %s (resp%d db%d): strata %r, redis %r" % (i, cmd, proto, db, a, b))
            if len(diffs) > 10:
                return


def dump_stream(c, k):
    out = [c.command("XRANGE", k, "-", "+"), mask(c.command("XINFO", "STREAM", k, "FULL", "COUNT", 0))]
    info = c.command("XINFO", "STREAM", k)
    out.append(mask(info))
    return out


DUMPERS = {
    "string": lambda c, k: c.command("GET", k),
    "hash": lambda c, k: canon(c.command("HGETALL", k)),
    "set": lambda c, k: canon(c.command("SMEMBERS", k)),
    "stream": dump_stream,
}


def dump(c, db):
    c.command("SELECT", db)
    out = {}
    for k in c.command("KEYS", "*"):
        t = c.command("TYPE", k)
        ttl = c.command("PTTL", k)
        out[k] = (t, ttl > 0, DUMPERS[t](c, k) if t in DUMPERS else None)
    out["dbsize"] = c.command("DBSIZE")
    return out


def compare_state(srv_port, ref_port, what):
    s, r = RawConn(srv_port), RawConn(ref_port)
    diffs = []
    for db in (0, 1):
        a, b = dump(s, db), dump(r, db)
        for k in sorted(set(a) | set(b), key=repr):
            if repr(a.get(k)) != repr(b.get(k)):
                diffs.append("%s db%d %r:\n strata %r\n redis  %r" % (what, db, k, a.get(k), b.get(k)))
    s.close()
    r.close()
    assert not diffs, "\n".join(diffs[:10])


@test
def random_stream_commands_match_redis_then_survive_restart_and_sigkill():
    g = random.Random(SEED)
    srv = Server(appendfsync="always")
    srv.start()
    ref = RealRedis()
    try:
        pair = Pair(srv.port, ref.port)
        diffs = []
        groups_seen = 0
        for _ in range(8):
            run_random(pair, g, OPS // 8, diffs)
            assert not diffs, "seed %d:\n%s" % (SEED, "\n".join(diffs))
            c = pair.s[(2, 0)]
            groups_seen += sum(len(c.command("XINFO", "GROUPS", k)) for k in KEYS
                               if c.command("TYPE", k) == "stream")
        assert groups_seen > 0, "no consumer group was ever there (seed %d)" % SEED
        compare_state(srv.port, ref.port, "after the commands")
        pair.close()
        srv.restart()
        compare_state(srv.port, ref.port, "after a restart")
        pair = Pair(srv.port, ref.port)
        run_random(pair, g, OPS // 4, diffs)
        assert not diffs, "seed %d after restart:\n%s" % (SEED, "\n".join(diffs))
        pair.close()
        srv.kill9()
        srv.start()
        compare_state(srv.port, ref.port, "after SIGKILL")
    finally:
        srv.cleanup()
        ref.close()


@test
def approximate_trims_keep_redis_lengths_with_big_and_small_entries():
    """`~` removes exactly the nodes Redis removes: nodes close at
    stream-node-max-entries or at stream-node-max-bytes of listpack."""
    srv = Server()
    srv.start()
    ref = RealRedis()
    try:
        pair = Pair(srv.port, ref.port)
        g = random.Random(SEED + 1)
        diffs = []
        for conf in ((b"100", b"4096"), (b"7", b"4096"), (b"0", b"300"), (b"3", b"0")):
            for c in (pair.s[(2, 0)], pair.r[(2, 0)]):
                c.command("CONFIG", "SET", "stream-node-max-entries", conf[0])
                c.command("CONFIG", "SET", "stream-node-max-bytes", conf[1])
                c.command("DEL", "t")
            for i in range(400):
                f = (b"a", value(g)) if g.random() < 0.7 else (b"b", b"%d" % i, b"c", value(g))
                cmd = ("XADD", "t", "MAXLEN", "~", g.randint(20, 60), "%d-1" % (i + 1)) + f
                if g.random() < 0.1:
                    cmd = ("XDEL", "t", "%d-1" % g.randint(1, i + 1))
                (a, araw), (b, braw) = pair.both(cmd, 2, 0)
                for probe in (("XLEN", "t"), ("XINFO", "STREAM", "t")):
                    (a, araw), (b, braw) = pair.both(probe, 2, 0)
                    if repr(mask(a)) != repr(mask(b)):
                        diffs.append("%s after %s (%s): strata %r redis %r" % (probe, cmd, conf, a, b))
                if diffs:
                    break
        assert not diffs, "\n".join(diffs[:5])
        pair.close()
    finally:
        srv.cleanup()
        ref.close()


@test
def xadd_star_ids_are_increasing_and_well_formed():
    srv = Server()
    srv.start()
    try:
        c = srv.raw()
        last = (0, 0)
        for i in range(300):
            v = c.command("XADD", "s", "*", "f", i)
            assert re.match(rb"^\d+-\d+$", v), v
            ms, seq = map(int, v.split(b"-"))
            assert (ms, seq) > last, (v, last)
            assert abs(ms - time.time() * 1000) < 60000, v
            last = (ms, seq)
        # <ms>-* after the top item's ms continues its sequence
        top = c.command("XADD", "s", "%d-*" % last[0], "f", "x")
        assert top == b"%d-%d" % (last[0], last[1] + 1), top
        assert c.command("XADD", "t", "5-*", "f", "x") == b"5-0"
        assert c.command("XADD", "t", "5-*", "f", "x") == b"5-1"
        e = c.command("XADD", "t", "4-*", "f", "x")
        assert isinstance(e, RespError) and "equal or smaller" in str(e), e
        c.command("XADD", "u", "18446744073709551615-18446744073709551615", "f", "x")
        e = c.command("XADD", "u", "*", "f", "x")
        assert isinstance(e, RespError) and "exhausted" in str(e), e
        c.close()
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
