"""test_zsets_diff.py -- a differential test of sorted sets against a real
redis-server: thousands of random sorted-set commands (every ZADD flag,
ties, -0 and +0, inf, score ranges with ( and inf, lex ranges with [ ( - +,
LIMIT with negative and huge offsets and counts, WEIGHTS and AGGREGATE,
pops, stores, random members) mixed with string, hash and key commands
over a small key space so that types collide, sent over RESP2 and RESP3
connections and compared reply by reply (raw bytes; by Redis's rules where
a reply is random). Then the keyspace of both servers is compared, again
after a clean restart of strata and again after SIGKILL with appendfsync
always.

Lex ranges are compared exactly where Redis defines them (every member of
the key has the same score, or the zset is small enough to be a listpack);
over a big zset with mixed scores only the reply's shape is compared.

Run with /usr/bin/python3 (python3-redis). STRATA_RANDOM_OPS and
STRATA_SEED change the length and the seed."""
import math, os, random, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, RespError, Server, test, main
from redis_compare import RealRedis

OPS = int(os.environ.get("STRATA_RANDOM_OPS", "4000"))
SEED = int(os.environ.get("STRATA_SEED", str(int(time.time()) % 100000)))
KEYS = [b"z%d" % i for i in range(6)] + [b"s0", b"h0"]
MEMBERS = [b"a", b"b", b"c", b"d", b"aa", b"ab", b"", b"\x00x", b"x y", b"1", b"10", b"-1",
           b"\xff", b"zzz"]
SCORES = ["0", "-0", "+0", "1", "-1", "1.5", "2", "3", "inf", "-inf", "+inf", "1e3",
          "0.1", "-2.5", "7", "42", "3.0000000000000004", "1e-300", "123456789012345678"]
FAR = 10 ** 8
EXACT = "exact"


def key(g):
    return g.choice(KEYS)


def member(g):
    return g.choice(MEMBERS) if g.random() < 0.8 else b"m%d" % g.randrange(0, 400)


def score(g):
    return g.choice(SCORES) if g.random() < 0.7 else str(g.randrange(-20, 20))


def score_bound(g):
    s = score(g)
    return ("(" + s) if g.random() < 0.3 else s


def lex_bound(g):
    r = g.random()
    if r < 0.15:
        return b"-"
    if r < 0.3:
        return b"+"
    return (b"[" if g.random() < 0.5 else b"(") + member(g)


def index(g):
    return g.choice([0, 1, 2, -1, -2, -3, 5, 100, -100, 9223372036854775807,
                     -9223372036854775808, g.randint(-200, 200)])


def limit(g):
    return ("LIMIT", g.choice([0, 1, 2, -1, 5, 150, 300, 10 ** 12]),
            g.choice([0, 1, 3, -1, -5, 50, 10 ** 12]))


def pairs(g, n):
    out = ()
    for _ in range(n):
        out += (score(g), member(g))
    return out


# ---- Random replies --------------------------------------------------------


def zset_of(ref, k):
    """redis's content of k: {member: score} or None when not a zset."""
    if ref.command("TYPE", k) != "zset":
        return None
    flat = ref.command("ZRANGE", k, 0, -1, "WITHSCORES")
    if flat and isinstance(flat[0], list):  # RESP3 pairs
        flat = [x for p in flat for x in p]
    return {flat[i]: flat[i + 1] for i in range(0, len(flat), 2)}


def check_zrandmember(cmd, got, ref):
    """ZRANDMEMBER: members (and scores) redis holds, as many as Redis's
    count rules give, distinct for a positive count."""
    k = cmd[1]
    t = ref.command("TYPE", k)
    if t not in ("zset", "none"):
        ok = isinstance(got, RespError) and str(got).startswith("WRONGTYPE")
        return [], None if ok else "%r on a %s" % (got, t)
    held = zset_of(ref, k) or {}
    if len(cmd) == 2:
        ok = (got is None) == (not held) and (got is None or got in held)
        return [], None if ok else "ZRANDMEMBER gave %r" % got
    n, ws = int(cmd[2]), len(cmd) == 4
    want = 0 if not held else abs(n) if n < 0 else min(n, len(held))
    items = got
    if ws:
        if items and isinstance(items[0], list):
            items = [x for p in items for x in p]
        mem = items[0::2]
        scores = items[1::2]
    else:
        mem, scores = items, None
    if len(mem) != want or any(m not in held for m in mem):
        return [], "ZRANDMEMBER %d gave %r of %r" % (n, got, held)
    if scores is not None:
        for m, s in zip(mem, scores):
            if float(s) != float(held[m]):
                return [], "ZRANDMEMBER score of %r: %r vs %r" % (m, s, held[m])
    if n > 0 and len(set(mem)) != len(mem):
        return [], "ZRANDMEMBER %d repeated a member" % n
    if n >= len(held) and n > 0 and not ws:
        order = ref.command("ZREVRANGE", k, 0, -1)
        if mem != order:
            return [], "ZRANDMEMBER %d over the whole zset: %r, redis order %r" % (n, mem, order)
    return [], None


LEX = "lex"


def lex_defined(cmd, ref):
    """Whether Redis defines a lex command's answer on its key: every member
    has the same score, or the zset is a listpack (scanned linearly, as
    strata scans a packed zset). Other cases are not sent to either."""
    k = cmd[1] if cmd[0] != "ZRANGESTORE" else cmd[2]
    held = zset_of(ref, k)
    return held is None or len(set(held.values())) <= 1 or \
        ref.command("OBJECT", "ENCODING", k) == "listpack"


# ---- Generators: (command, mode) -------------------------------------------


def zset_commands(g):
    k, k2, k3 = key(g), key(g), key(g)
    ks = tuple(key(g) for _ in range(g.randint(1, 3)))
    many = pairs(g, g.randint(20, 60))
    flags = tuple(f for f in ("NX", "XX", "GT", "LT", "CH") if g.random() < 0.15)
    w = tuple(g.choice(["1", "2", "0", "-1", "0.5", "inf", "-inf", "1e308"]) for _ in ks)
    agg = ("AGGREGATE", g.choice(["SUM", "MIN", "MAX"])) if g.random() < 0.5 else ()
    wts = ("WEIGHTS",) + w if g.random() < 0.5 else ()
    ws = ("WITHSCORES",) if g.random() < 0.5 else ()
    return g.choice([
        (("ZADD", k) + flags + pairs(g, g.randint(1, 4)), EXACT),
        (("ZADD", k) + many, EXACT),
        (("ZADD", k) + flags + many, EXACT),
        (("ZADD", k, "INCR") + flags + pairs(g, 1), EXACT),
        (("ZINCRBY", k, score(g), member(g)), EXACT),
        (("ZREM", k) + tuple(member(g) for _ in range(g.randint(1, 5))), EXACT),
        (("ZSCORE", k, member(g)), EXACT),
        (("ZMSCORE", k) + tuple(member(g) for _ in range(3)), EXACT),
        (("ZCARD", k), EXACT),
        (("ZRANK", k, member(g)), EXACT),
        (("ZREVRANK", k, member(g)), EXACT),
        (("ZCOUNT", k, score_bound(g), score_bound(g)), EXACT),
        (("ZRANGE", k, index(g), index(g)) + ws, EXACT),
        (("ZRANGE", k, index(g), index(g), "REV") + ws, EXACT),
        (("ZRANGE", k, score_bound(g), score_bound(g), "BYSCORE") + ws + limit(g), EXACT),
        (("ZRANGE", k, score_bound(g), score_bound(g), "BYSCORE", "REV") + ws, EXACT),
        (("ZRANGE", k, score_bound(g), score_bound(g), "BYSCORE", "REV") + limit(g), EXACT),
        (("ZRANGEBYSCORE", k, score_bound(g), score_bound(g)) + ws, EXACT),
        (("ZRANGEBYSCORE", k, "-inf", "+inf") + ws + limit(g), EXACT),
        (("ZREVRANGEBYSCORE", k, score_bound(g), score_bound(g)) + ws + limit(g), EXACT),
        (("ZREVRANGE", k, index(g), index(g)) + ws, EXACT),
        (("ZRANGESTORE", k2, k, index(g), index(g)), EXACT),
        (("ZRANGESTORE", k2, k, score_bound(g), score_bound(g), "BYSCORE") + limit(g), EXACT),
        (("ZREMRANGEBYRANK", k, index(g), index(g)), EXACT),
        (("ZREMRANGEBYSCORE", k, score_bound(g), score_bound(g)), EXACT),
        (("ZPOPMIN", k), EXACT),
        (("ZPOPMAX", k, g.choice([0, 1, 2, 5, 1000])), EXACT),
        (("ZMPOP", len(ks)) + ks + (g.choice(["MIN", "MAX"]),), EXACT),
        (("BZPOPMIN",) + ks + ("0.01",), EXACT),
        (("BZMPOP", "0.01", len(ks)) + ks + ("MAX", "COUNT", 2), EXACT),
        (("ZMPOP", len(ks)) + ks + ("MAX", "COUNT", g.choice([1, 3, 10 ** 9])), EXACT),
        (("ZUNION", len(ks)) + ks + wts + agg + ws, EXACT),
        (("ZINTER", len(ks)) + ks + wts + agg + ws, EXACT),
        (("ZDIFF", len(ks)) + ks + ws, EXACT),
        (("ZUNIONSTORE", k3, len(ks)) + ks + wts + agg, EXACT),
        (("ZINTERSTORE", k3, len(ks)) + ks + wts + agg, EXACT),
        (("ZDIFFSTORE", k3, len(ks)) + ks, EXACT),
        (("ZINTERCARD", len(ks)) + ks, EXACT),
        (("ZINTERCARD", len(ks)) + ks + ("LIMIT", g.randint(0, 3)), EXACT),
        (("ZRANDMEMBER", k), check_zrandmember),
        (("ZRANDMEMBER", k, g.choice([0, 1, 3, -3, 7, 1000, -20])), check_zrandmember),
        (("ZRANDMEMBER", k, g.choice([1, 5, -5, 500]), "WITHSCORES"), check_zrandmember),
        (("ZLEXCOUNT", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZRANGEBYLEX", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZRANGEBYLEX", k, lex_bound(g), lex_bound(g)) + limit(g), LEX),
        (("ZREVRANGEBYLEX", k, lex_bound(g), lex_bound(g)) + limit(g), LEX),
        (("ZRANGE", k, lex_bound(g), lex_bound(g), "BYLEX", "REV"), LEX),
        (("ZREMRANGEBYLEX", k, lex_bound(g), lex_bound(g)), LEX),
    ])


def lex_commands(g):
    """Members of one score, where lex ranges are defined."""
    k = key(g)
    many = ()
    for _ in range(g.randint(10, 60)):
        many += ("0", member(g))
    return g.choice([
        (("ZADD", k, "0", member(g)), EXACT),
        (("ZADD", k) + many, EXACT),
        (("ZLEXCOUNT", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZRANGEBYLEX", k, lex_bound(g), lex_bound(g)) + limit(g), LEX),
        (("ZREVRANGEBYLEX", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZREMRANGEBYLEX", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZRANGESTORE", key(g), k, lex_bound(g), lex_bound(g), "BYLEX") + limit(g), LEX),
    ])


def other_commands(g):
    k, k2 = key(g), key(g)
    return g.choice([
        (("SET", k, member(g)), EXACT),
        (("GET", k), EXACT),
        (("HSET", k, member(g), member(g)), EXACT),
        (("DEL", k), EXACT),
        (("EXISTS", k, k2), EXACT),
        (("TYPE", k), EXACT),
        (("RENAME", k, k2), EXACT),
        (("RENAMENX", k, k2), EXACT),
        (("COPY", k, k2), EXACT),
        (("COPY", k, k2, "REPLACE"), EXACT),
        (("COPY", k, k2, "DB", 1, "REPLACE"), EXACT),
        (("PEXPIRE", k, FAR), EXACT),
        (("PERSIST", k), EXACT),
        (("PEXPIREAT", k, 1000), EXACT),
        (("DBSIZE",), EXACT),
        (("SCAN", 0, "COUNT", 1000, "TYPE", "zset"), "unordered"),
    ])


def grow_commands(g):
    """Enough members at once to make big zsets (past the packing limit)."""
    k = key(g)
    return (("ZADD", k) + pairs(g, g.randint(100, 200)), EXACT)


BIG = [b"big0", b"big1"]


def big_commands(g):
    """Two keys only sorted-set commands touch, and only a little at a time
    (no whole-key overwrites), so they grow to thousands of members: the
    big encoding with rank blocks."""
    k = g.choice(BIG)
    adds = ()
    for _ in range(g.randint(20, 120)):
        adds += (score(g), b"m%d" % g.randrange(0, 5000))
    r = g.randint(0, 5000)
    return g.choice([
        (("ZADD", k) + adds, EXACT),
        (("ZADD", k) + adds, EXACT),
        (("ZINCRBY", k, score(g), b"m%d" % g.randrange(0, 5000)), EXACT),
        (("ZREM", k) + tuple(b"m%d" % g.randrange(0, 5000) for _ in range(5)), EXACT),
        (("ZRANK", k, b"m%d" % g.randrange(0, 5000)), EXACT),
        (("ZREVRANK", k, b"m%d" % g.randrange(0, 5000)), EXACT),
        (("ZRANGE", k, r, r + g.randint(0, 5), "WITHSCORES"), EXACT),
        (("ZRANGE", k, -r, -r + g.randint(0, 5)), EXACT),
        (("ZREVRANGE", k, r, r + 3, "WITHSCORES"), EXACT),
        (("ZCOUNT", k, score_bound(g), score_bound(g)), EXACT),
        (("ZRANGEBYSCORE", k, score_bound(g), score_bound(g), "LIMIT", r, 5), EXACT),
        (("ZREVRANGEBYSCORE", k, "+inf", "-inf", "WITHSCORES", "LIMIT", r, 4), EXACT),
        (("ZRANGE", k, "(1", "inf", "BYSCORE", "LIMIT", r // 2, 3), EXACT),
        (("ZPOPMIN", k, g.randint(1, 3)), EXACT),
        (("ZPOPMAX", k), EXACT),
        (("ZREMRANGEBYRANK", k, r, r + g.randint(0, 3)), EXACT),
        (("ZREMRANGEBYSCORE", k, "(41", "42"), EXACT),
        (("ZCARD", k), EXACT),
        (("ZSCORE", k, b"m%d" % g.randrange(0, 5000)), EXACT),
        (("ZUNIONSTORE", b"z0", 2) + tuple(BIG) + ("WEIGHTS", "1", "-1"), EXACT),
        (("ZINTERCARD", 2) + tuple(BIG) + ("LIMIT", g.randint(0, 500)), EXACT),
        (("ZRANGESTORE", b"z1", k, r, r + 200), EXACT),
        (("ZRANDMEMBER", k, g.choice([3, -5, 50])), check_zrandmember),
    ])


GENERATORS = [(10, zset_commands), (3, lex_commands), (3, other_commands), (0.8, grow_commands),
              (4, big_commands)]


def random_command(g):
    total = sum(w for w, _ in GENERATORS)
    r = g.uniform(0, total)
    for w, fn in GENERATORS:
        r -= w
        if r <= 0:
            return fn(g)
    return GENERATORS[-1][1](g)


# ---- Comparing -----------------------------------------------------------------


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

    def close(self):
        for c in list(self.s.values()) + list(self.r.values()):
            c.close()


def run_random(pair, g, ops, diffs):
    for i in range(ops):
        cmd, mode = random_command(g)
        proto, db = g.choice((2, 3)), 0 if g.random() < 0.85 else 1
        s, r = pair.s[(proto, db)], pair.r[(proto, db)]
        if mode == LEX:
            if not lex_defined(cmd, r):
                continue
            mode = EXACT
        a = s.command(*cmd)
        araw = s.last_raw
        if mode == EXACT:
            b = r.command(*cmd)
            same = araw == r.last_raw
        elif mode == "unordered":
            b = r.command(*cmd)
            same = canon(a) == canon(b)
        else:
            follow, b = mode(cmd, a, r)
            same = b is None
        if not same:
            diffs.append("#%d %r (resp%d db%d): strata %r, redis %r" % (i, cmd, proto, db, a, b))
            if len(diffs) > 20:
                return


def dump(c, db):
    c.command("SELECT", db)
    out = {}
    for k in c.command("KEYS", "*"):
        t = c.command("TYPE", k)
        ttl = c.command("PTTL", k)
        if t == "zset":
            val = c.command("ZRANGE", k, 0, -1, "WITHSCORES")
        elif t == "string":
            val = c.command("GET", k)
        elif t == "hash":
            val = canon(c.command("HGETALL", k))
        else:
            val = None
        out[k] = (t, ttl > 0 if isinstance(ttl, int) else ttl, val)
    out["dbsize"] = c.command("DBSIZE")
    return out


def compare_state(srv_port, ref_port, what):
    s, r = RawConn(srv_port), RawConn(ref_port)
    diffs = []
    for db in (0, 1):
        a, b = dump(s, db), dump(r, db)
        for k in sorted(set(a) | set(b), key=repr):
            if a.get(k) != b.get(k):
                diffs.append("%s db%d %r: strata %r, redis %r" % (what, db, k, a.get(k), b.get(k)))
    s.close()
    r.close()
    assert not diffs, "\n".join(diffs[:20])


@test
def random_zset_commands_match_redis_then_survive_restart_and_sigkill():
    g = random.Random(SEED)
    srv = Server(appendfsync="always").start()
    ref = RealRedis()
    try:
        pair = Pair(srv.port, ref.port)
        diffs = []
        run_random(pair, g, OPS, diffs)
        assert not diffs, "seed %d:\n%s" % (SEED, "\n".join(diffs))
        compare_state(srv.port, ref.port, "after the commands")
        pair.close()
        srv.restart()
        compare_state(srv.port, ref.port, "after a restart")
        pair = Pair(srv.port, ref.port)
        run_random(pair, g, OPS // 3, diffs)
        assert not diffs, "seed %d after restart:\n%s" % (SEED, "\n".join(diffs))
        pair.close()
        srv.kill9()
        srv.start()
        compare_state(srv.port, ref.port, "after SIGKILL")
    finally:
        srv.cleanup()
        ref.close()


if __name__ == "__main__":
    main()
