"""test_types_random.py -- a differential test of the value types against a
real redis-server: thousands of random commands over a small key space, so
that strings, hashes, sets, lists, sorted sets and streams collide on the
same keys (the lists' blocking forms where they do not block, and
MULTI/EXEC around list and stream commands, too), mixed with the key
commands (DEL, UNLINK, EXISTS, TYPE, RENAME[NX], COPY [DB] [REPLACE], MOVE, the
EXPIRE family, PERSIST, KEYS, SCAN TYPE, RANDOMKEY, DBSIZE, OBJECT ENCODING,
FLUSHDB, MULTI/EXEC with WATCH), sent to both servers over RESP2 and RESP3
connections and compared reply by reply (raw bytes where Redis's order is
defined, as multisets where it is not, by Redis's rules where the reply is
random, with times masked where the reply carries them: stream idle and
delivery times). Then the whole keyspace of both is compared, again after a clean
restart of strata, and again after SIGKILL with appendfsync always.
Sorted sets get every command (ties, -0, inf, every ZADD flag, score and
lex ranges, LIMIT, WEIGHTS/AGGREGATE with sets as inputs, pops, stores,
random members), two keys that grow to thousands of members, and lex
ranges compared where Redis defines them (Defined). Geo runs on two keys
of its own and now and then on the shared ones: GEOADD's 52-bit scores,
GEOPOS/GEOHASH/GEODIST text, and every search form (radius and box, from
a member or a point, ASC/DESC/COUNT/ANY, WITH*, STORE/STOREDIST) byte for
byte.

Adding a type: write a generator like set_commands (returning a command
and how to compare its reply), add it to GENERATORS, and add a DUMPERS
entry that reads a whole value of the type in a canonical form.

Run with /usr/bin/python3 (python3-redis). STRATA_RANDOM_OPS and
STRATA_SEED change the length and the seed."""
import os, random, re, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, RespError, Server, test, main, wait_for
from redis_compare import RealRedis

OPS = int(os.environ.get("STRATA_RANDOM_OPS", "3000"))
SEED = int(os.environ.get("STRATA_SEED", str(int(time.time()) % 100000)))
KEYS = [b"k%d" % i for i in range(8)]
# Streams mostly keep to keys of their own (an XADD to a key another type
# took is only an error, and streams need many XADDs to grow); the key
# commands and a share of the stream commands reach both parts.
STREAM_KEYS = [b"x%d" % i for i in range(4)]
MEMBERS = [b"1", b"2", b"3", b"10", b"-5", b"0", b"99", b"a", b"b", b"c", b"x y", b"", b"\x00z"]
# Small packing limits, so values turn big (member keys in the engine)
# within a few commands and both encodings are exercised.
LIMITS = {"set-max-intset-entries": "16", "hash-max-listpack-entries": "8",
          "zset-max-ziplist-entries": "16",
          "list-max-listpack-size": "4", "stream-node-max-entries": "7"}
# Sorted sets: members and scores with ties, -0 and +0, infinities, long
# fractions, big integers (every ZADD flag, ranges with ( and inf, lex
# ranges with [ ( - +, LIMIT with negative and huge values).
ZMEMBERS = [b"a", b"b", b"c", b"d", b"aa", b"ab", b"", b"\x00x", b"x y", b"1", b"10", b"-1",
            b"\xff", b"zzz"]
SCORES = ["0", "-0", "+0", "1", "-1", "1.5", "2", "3", "inf", "-inf", "+inf", "1e3",
          "0.1", "-2.5", "7", "42", "3.0000000000000004", "1e-300", "123456789012345678"]

FAR = 10 ** 8  # a TTL that never passes during the test (ms)
# Relative TTLs are REL (each server's clock then decides the expiry time),
# far past the absolute T0 + up to 1 s, so that PEXPIREAT's GT and LT
# compare the same way on both servers whatever their clocks read.
REL = 2 * FAR
# Absolute expiry times for the NX/XX/GT/LT forms: relative ones would be
# judged against each server's own clock and could compare differently.
T0 = int(time.time() * 1000) + FAR

# Reply modes: "exact" raw bytes; "unordered" same RESP type and multiset
# of elements; a callable checks a random reply against redis and returns
# commands that make redis's state follow strata's.
EXACT, UNORDERED, TIMED = "exact", "unordered", "timed"


class Defined:
    """A command whose reply Redis defines only in some states: compared
    exactly when pred(cmd, redis connection) holds, sent to neither server
    otherwise."""

    def __init__(self, pred):
        self.pred = pred


def key(g):
    return g.choice(KEYS)


def key_pair(g):
    """Two keys of the same part of the key space (renames and copies
    between the parts would leave the stream keys to the other types)."""
    ks = KEYS if g.random() < 0.85 else STREAM_KEYS
    return g.choice(ks), g.choice(ks)


def stream_key(g):
    return g.choice(STREAM_KEYS) if g.random() < 0.85 else key(g)


def member(g):
    return g.choice(MEMBERS) if g.random() < 0.9 else str(g.randrange(-1000, 100000)).encode()


def members(g, lo=1, hi=4):
    return [member(g) for _ in range(g.randint(lo, hi))]


# ---- Random replies -------------------------------------------------------


def zmember(g):
    return g.choice(ZMEMBERS) if g.random() < 0.8 else b"m%d" % g.randrange(0, 400)


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
    return (b"[" if g.random() < 0.5 else b"(") + zmember(g)


def index(g):
    return g.choice([0, 1, 2, -1, -2, -3, 5, 100, -100, 9223372036854775807,
                     -9223372036854775808, g.randint(-200, 200)])


def limit(g):
    return ("LIMIT", g.choice([0, 1, 2, -1, 5, 150, 300, 10 ** 12]),
            g.choice([0, 1, 3, -1, -5, 50, 10 ** 12]))


def pairs(g, n):
    out = ()
    for _ in range(n):
        out += (score(g), zmember(g))
    return out


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


def lex_defined(cmd, ref):
    """Whether Redis defines a lex command's answer on its key: every member
    has the same score, or the zset is a listpack (scanned linearly, as
    strata scans a packed zset). Other cases are not sent to either."""
    k = cmd[1] if cmd[0] != "ZRANGESTORE" else cmd[2]
    held = zset_of(ref, k)
    return held is None or len(set(held.values())) <= 1 or \
        ref.command("OBJECT", "ENCODING", k) == "listpack"


LEX = Defined(lex_defined)


def wrongtype_expected(cmd, got, ref):
    """None when the command may go on being checked; else the verdict for
    a key that does not hold a set on redis (strata must say WRONGTYPE)."""
    t = ref.command("TYPE", cmd[1])
    if t in ("set", "none"):
        return None if not isinstance(got, RespError) else "error %s" % got
    ok = isinstance(got, RespError) and str(got).startswith("WRONGTYPE")
    return "" if ok else "%r on a %s" % (got, t)


def check_spop(cmd, got, ref):
    """SPOP key [count]: distinct members redis holds, as many as Redis
    would pop; redis then removes the same members."""
    k = cmd[1]
    why = wrongtype_expected(cmd, got, ref)
    if why is not None:
        return [], why or None
    held = set(ref.command("SMEMBERS", k))
    popped = got if isinstance(got, list) else ([] if got is None else [got])
    if len(set(popped)) != len(popped):
        return [], "SPOP returned a member twice: %r" % popped
    want = min(int(cmd[2]), len(held)) if len(cmd) == 3 else min(1, len(held))
    if len(popped) != want or any(m not in held for m in popped):
        return [], "SPOP gave %r of %r" % (popped, held)
    return ([("SREM", k) + tuple(popped)] if popped else []), None


def check_srandmember(cmd, got, ref):
    why = wrongtype_expected(cmd, got, ref)
    if why is not None:
        return [], why or None
    held = set(ref.command("SMEMBERS", cmd[1]))
    if len(cmd) == 2:
        ok = (got is None) == (not held) and (got is None or got in held)
        return [], None if ok else "SRANDMEMBER gave %r" % got
    n = int(cmd[2])
    want = 0 if not held else abs(n) if n < 0 else min(n, len(held))
    if len(got) != want or any(m not in held for m in got):
        return [], "SRANDMEMBER %d gave %r of %r" % (n, got, held)
    if n > 0 and len(set(got)) != len(got):
        return [], "SRANDMEMBER %d repeated a member" % n
    return [], None


def check_randomkey(cmd, got, ref):
    if got is None:
        return [], None if ref.command("DBSIZE") == 0 else "RANDOMKEY nil on a non-empty db"
    return [], None if ref.command("EXISTS", got) == 1 else "RANDOMKEY gave %r" % got


# ---- Generators: (command, mode) ----------------------------------------


def string_commands(g):
    k = key(g)
    return g.choice([
        (("SET", k, member(g)), EXACT),
        (("SET", k, member(g), "PX", REL), EXACT),
        (("SET", k, member(g), "KEEPTTL"), EXACT),
        (("GET", k), EXACT),
        (("APPEND", k, member(g)), EXACT),
        (("INCR", k), EXACT),
        (("SETRANGE", k, g.randint(0, 5), member(g)), EXACT),
        (("GETDEL", k), EXACT),
        (("STRLEN", k), EXACT),
    ])


def hash_commands(g):
    k = key(g)
    pairs = []
    for m in members(g, 1, 3):
        pairs += [m, member(g)]
    return g.choice([
        (("HSET", k) + tuple(pairs), EXACT),
        (("HSET", k) + tuple(x for i in range(12) for x in (b"f%d" % g.randint(0, 30), b"v")),
         EXACT),
        (("HGET", k, member(g)), EXACT),
        (("HDEL", k) + tuple(members(g)), EXACT),
        (("HLEN", k), EXACT),
        (("HGETALL", k), UNORDERED),
        (("HINCRBY", k, member(g), g.randint(-3, 3)), EXACT),
    ])


def set_commands(g):
    k, k2 = key(g), key(g)
    ks = tuple(key(g) for _ in range(g.randint(1, 3)))
    many = tuple(str(g.randrange(0, 60)).encode() for _ in range(g.randint(10, 30)))
    return g.choice([
        (("SADD", k) + tuple(members(g)), EXACT),
        (("SADD", k) + many, EXACT),
        (("SADD", k) + many + (b"s%d" % g.randint(0, 9),), EXACT),
        (("SREM", k) + tuple(members(g)), EXACT),
        (("SREM", k) + many, EXACT),
        (("SMEMBERS", k), UNORDERED),
        (("SISMEMBER", k, member(g)), EXACT),
        (("SMISMEMBER", k) + tuple(members(g)), EXACT),
        (("SCARD", k), EXACT),
        (("SPOP", k), check_spop),
        (("SPOP", k, g.randint(0, 6)), check_spop),
        (("SRANDMEMBER", k), check_srandmember),
        (("SRANDMEMBER", k, g.randint(-8, 8)), check_srandmember),
        (("SMOVE", k, k2, member(g)), EXACT),
        (("SINTER",) + ks, UNORDERED),
        (("SUNION",) + ks, UNORDERED),
        (("SDIFF",) + ks, UNORDERED),
        (("SINTERSTORE", k) + ks, EXACT),
        (("SUNIONSTORE", k) + ks, EXACT),
        (("SDIFFSTORE", k) + ks, EXACT),
        (("SINTERCARD", len(ks)) + ks, EXACT),
        (("SINTERCARD", len(ks)) + ks + ("LIMIT", g.randint(0, 3)), EXACT),
        (("SSCAN", k, 0, "COUNT", 1000), UNORDERED),
        (("SSCAN", k, 0, "MATCH", "*1*", "COUNT", 1000), UNORDERED),
    ])


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
        (("ZINCRBY", k, score(g), zmember(g)), EXACT),
        (("ZREM", k) + tuple(zmember(g) for _ in range(g.randint(1, 5))), EXACT),
        (("ZSCORE", k, zmember(g)), EXACT),
        (("ZMSCORE", k) + tuple(zmember(g) for _ in range(3)), EXACT),
        (("ZCARD", k), EXACT),
        (("ZRANK", k, zmember(g)), EXACT),
        (("ZREVRANK", k, zmember(g)), EXACT),
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
        many += ("0", zmember(g))
    return g.choice([
        (("ZADD", k, "0", zmember(g)), EXACT),
        (("ZADD", k) + many, EXACT),
        (("ZLEXCOUNT", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZRANGEBYLEX", k, lex_bound(g), lex_bound(g)) + limit(g), LEX),
        (("ZREVRANGEBYLEX", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZREMRANGEBYLEX", k, lex_bound(g), lex_bound(g)), LEX),
        (("ZRANGESTORE", key(g), k, lex_bound(g), lex_bound(g), "BYLEX") + limit(g), LEX),
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

def list_value(g):
    """Mostly members; now and then one over the 128 bytes a big list's
    chunk keeps inline."""
    return member(g) if g.random() < 0.95 else bytes(g.choice(b"abc") for _ in range(g.randint(100, 400)))


def list_commands(g):
    k, k2 = key(g), key(g)
    vals = tuple(list_value(g) for _ in range(g.randint(1, 4)))
    many = tuple(list_value(g) for _ in range(g.randint(10, 60)))
    idx = g.randint(-12, 12) if g.random() < 0.9 else g.choice([-10 ** 6, 10 ** 6])
    side = lambda: g.choice(["LEFT", "RIGHT"])
    lpos = ("LPOS", k, member(g))
    for opt in g.sample(["RANK", "COUNT", "MAXLEN"], g.randint(0, 3)):
        lpos += (opt, {"RANK": g.choice([1, 2, -1, -3, 5]), "COUNT": g.randint(0, 3),
                       "MAXLEN": g.randint(0, 8)}[opt])
    mpop = (g.randint(1, 3),)
    mpop += tuple(key(g) for _ in range(mpop[0])) + (side(),)
    if g.random() < 0.6:
        mpop += ("COUNT", g.randint(1, 5))
    return g.choice([
        (("LPUSH", k) + vals, EXACT),
        (("RPUSH", k) + vals, EXACT),
        (("RPUSH", k) + many, EXACT),
        (("LPUSH", k) + many, EXACT),
        (("LPUSHX", k) + vals, EXACT),
        (("RPUSHX", k) + vals, EXACT),
        (("LPOP", k), EXACT),
        (("RPOP", k), EXACT),
        (("LPOP", k, g.randint(0, 5)), EXACT),
        (("RPOP", k, g.randint(0, 70)), EXACT),
        (("LLEN", k), EXACT),
        (("LRANGE", k, 0, -1), EXACT),
        (("LRANGE", k, g.randint(-40, 40), g.randint(-40, 40)), EXACT),
        (("LINDEX", k, idx), EXACT),
        (("LSET", k, idx, list_value(g)), EXACT),
        (("LINSERT", k, g.choice(["BEFORE", "AFTER"]), member(g), list_value(g)), EXACT),
        (("LREM", k, g.randint(-3, 3), member(g)), EXACT),
        (("LTRIM", k, g.randint(-40, 40), g.randint(-40, 40)), EXACT),
        (lpos, EXACT),
        (("LMOVE", k, k2, side(), side()), EXACT),
        (("LMOVE", k, k, side(), side()), EXACT),
        (("RPOPLPUSH", k, k2), EXACT),
        (("LMPOP",) + mpop, EXACT),
        # the blocking forms: they pop at once, or wait 10 ms and time out
        (("BLPOP", k, k2, 0.01), EXACT),
        (("BRPOP", k, 0.01), EXACT),
        (("BLMOVE", k, k2, side(), side(), 0.01), EXACT),
        (("BRPOPLPUSH", k, k2, 0.01), EXACT),
        (("BLMPOP", 0.01) + mpop, EXACT),
    ])


def list_multi_commands(g):
    """Two to four list commands in one transaction: the replies of MULTI,
    each QUEUED and EXEC, byte for byte."""
    return ("MULTI",) + tuple(list_commands(g)[0] for _ in range(g.randint(2, 4))), EXACT



# Geo: two keys of their own (GEO*, ZRANGE and ZREM touch them, FLUSHDB
# empties them; the stores go to a third) with places around two centres, so that radius and box
# searches find several, now and then anywhere on the map, at its latitude
# limits, or off it (the error); and now and then a key of the shared
# space, so GEO* also runs on zsets whose scores are not geohashes and on
# other types.
GEOKEYS = [b"g0", b"g1"]
CENTRES = [(13.361389, 38.115556), (-122.27652, 37.805186)]
UNITS = ["m", "km", "ft", "mi", "M", "KM"]


def lonlat(g):
    r = g.random()
    if r < 0.9:
        lon, lat = g.choice(CENTRES)
        return "%.6f" % (lon + g.uniform(-1, 1)), "%.6f" % (lat + g.uniform(-1, 1))
    if r < 0.97:
        return "%.7f" % g.uniform(-180, 180), "%.7f" % g.uniform(-85.05112878, 85.05112878)
    return g.choice([("180", "85.05112878"), ("-180", "-85.05112878"), ("0", "0"),
                     ("181", "0"), ("0", "85.06"), ("1e1", "-0"), ("abc", "1")])


def geo_shape(g):
    if g.random() < 0.6:
        return ("BYRADIUS", g.choice(["0", "1", "50", "120", "300.5", "5000", "-1"]),
                g.choice(UNITS))
    return ("BYBOX", g.choice(["0", "10", "100", "250", "400"]),
            g.choice(["10", "100", "250", "0.5"]), g.choice(UNITS))


def geo_order(g):
    """[ASC|DESC] [COUNT n [ANY]], COUNT 0 being the error."""
    out = ()
    if g.random() < 0.5:
        out += (g.choice(["ASC", "DESC"]),)
    if g.random() < 0.4:
        out += ("COUNT", g.choice([1, 2, 5, 100, 0]))
        if g.random() < 0.3:
            out += ("ANY",)
    return out


def geo_options(g, store=False):
    out = geo_order(g)
    if not store:
        for w in ("WITHCOORD", "WITHDIST", "WITHHASH"):
            if g.random() < 0.35:
                out += (w,)
    elif g.random() < 0.5:
        out += ("STOREDIST",)
    return out


def geo_order_defined(cmd, ref):
    """A search lists what it found in the order it walked the geohash
    boxes (strata walks them as Redis does), sorted by distance with
    glibc's stable qsort -- except that with a COUNT below the number found
    Redis sorts with its partial quicksort, which leaves places at equal
    distances (equal scores) in an order of its own. Such a search is
    compared only when the key has no two places at one point."""
    k = cmd[2] if cmd[0] == "GEOSEARCHSTORE" else cmd[1]
    if "COUNT" not in cmd or ("ANY" in cmd and "ASC" not in cmd and "DESC" not in cmd):
        return True
    held = zset_of(ref, k)
    if not held:
        return True
    points = [int(float(v)) if abs(float(v)) < float("inf") else v for v in held.values()]
    return len(set(points)) == len(points)


GEO = Defined(geo_order_defined)


def geo_key(g):
    return g.choice(GEOKEYS) if g.random() < 0.85 else key(g)


def place(g):
    return b"p%d" % g.randrange(0, 80) if g.random() < 0.8 else zmember(g)


def geo_commands(g):
    # stores go elsewhere: an empty result deletes the destination
    k, k2 = geo_key(g), b"gs" if g.random() < 0.7 else key(g)
    add = ()
    for _ in range(g.randint(1, 12)):
        add += lonlat(g) + (place(g),)
    flags = tuple(f for f in ("NX", "XX", "CH") if g.random() < 0.15)
    lon, lat = lonlat(g)
    unit = g.choice(UNITS)
    frm = ("FROMMEMBER", place(g)) if g.random() < 0.5 else ("FROMLONLAT", lon, lat)
    radius = g.choice(["0", "10", "100", "200", "1000"])
    return g.choice([
        (("GEOADD", k) + flags + add, EXACT),
        (("GEOADD", k) + add, EXACT),
        (("GEOADD", k) + add, EXACT),
        (("GEODIST", k, place(g), place(g)), EXACT),
        (("GEODIST", k, place(g), place(g), unit), EXACT),
        (("GEOHASH", k) + tuple(place(g) for _ in range(3)), EXACT),
        (("GEOPOS", k) + tuple(place(g) for _ in range(3)), EXACT),
        (("GEOSEARCH", k) + frm + geo_shape(g) + geo_options(g), GEO),
        (("GEOSEARCHSTORE", k2, k) + frm + geo_shape(g) + geo_options(g, True), GEO),
        (("GEORADIUS", k, lon, lat, radius, unit) + geo_options(g), GEO),
        (("GEORADIUS_RO", k, lon, lat, radius, unit) + geo_options(g), GEO),
        (("GEORADIUS", k, lon, lat, radius, unit, "STORE", k2) + geo_order(g), GEO),
        (("GEORADIUSBYMEMBER", k, place(g), radius, unit) + geo_options(g), GEO),
        (("GEORADIUSBYMEMBER_RO", k, place(g), radius, unit) + geo_options(g), GEO),
        (("GEORADIUSBYMEMBER", k, place(g), radius, unit, "STOREDIST", k2), GEO),
        (("ZRANGE", k, 0, -1, "WITHSCORES"), EXACT),
        (("ZREM", k, place(g)), EXACT),
    ])


# ---- Streams ---------------------------------------------------------------
# Entry ids are explicit (`*` differs between the servers;
# xadd_star_ids_are_increasing_and_well_formed checks `*` on strata alone). Times in replies (idle,
# seen-time, delivery times) are masked, and so is radix-tree-nodes (Redis's
# radix tree node count); XLEN after `~` trims and radix-tree-keys must match.

GROUPS = [b"g1", b"g2"]
CONSUMERS = [b"c1", b"c2", b"c3"]
FIELDS = [b"f", b"g", b"h", b"1", b""]


def stream_value(g):
    """Mostly short; now and then one long enough to close a listpack node
    by stream-node-max-bytes."""
    if g.random() < 0.85:
        return g.choice([b"v", b"1", b"22", b"", b"x y", b"-7"])
    return bytes(g.choice(b"abcdef") for _ in range(g.randint(100, 1200)))


# The ms part of the newest id the generator made for XADD: adds mostly
# go on from it (ids must grow, or XADD fails and streams stay short),
# reads and deletes pick ids around it.
XCLOCK = [0]


def xid(g, star=False):
    ms = max(0, XCLOCK[0] - g.randint(-2, 40))
    r = g.random()
    if star and r < 0.2:
        return b"%d-*" % ms
    if r < 0.3:
        return b"%d" % ms
    return b"%d-%d" % (ms, g.randint(0, 3))


def xadd_id(g):
    """Mostly an id after the last one made; else any id (often too small)."""
    if g.random() < 0.3:
        return xid(g, star=True)
    XCLOCK[0] += g.randint(0, 1)
    return b"%d-%d" % (XCLOCK[0], g.randint(0, 3)) if g.random() < 0.7 else b"%d-*" % XCLOCK[0]


def xbound(g, low):
    r = g.random()
    if r < 0.2:
        return b"-" if low else b"+"
    if r < 0.35:
        return b"(" + xid(g)
    return xid(g)


def xfields(g):
    if g.random() < 0.6:
        fs = [b"f"] if g.random() < 0.5 else [b"f", b"g"]
    else:
        fs = [g.choice(FIELDS) for _ in range(g.randint(1, 3))]
    return tuple(x for f in fs for x in (f, stream_value(g)))


def trim_opts(g, xadd):
    if xadd and g.random() < 0.7:
        return ()
    strat = g.choice(["MAXLEN", "MINID"])
    op = g.choice([(), ("=",), ("~",)])
    out = (strat,) + op + (g.randint(0, 40) if strat == "MAXLEN" else xid(g),)
    if op == ("~",) and g.random() < 0.4:
        out += ("LIMIT", g.randint(0, 30))
    return out


def stream_read_commands(g, k, k2, gr, cn, ids, count):
    rg = ("XREADGROUP", "GROUP", gr, cn) + count + (("NOACK",) if g.random() < 0.15 else ())
    rg += ("STREAMS", k) + ((k2,) if g.random() < 0.3 else ())
    rg += tuple(g.choice([b">", b">", b"0", xid(g)]) for _ in range(len(rg) - rg.index("STREAMS") - 1))
    claim = ("XCLAIM", k, gr, cn, g.choice([0, 0, 10 ** 9])) + ids
    for opt in g.sample(["JUSTID", "FORCE", "RETRYCOUNT", "LASTID", "TIME"], g.randint(0, 3)):
        claim += {"JUSTID": ("JUSTID",), "FORCE": ("FORCE",), "TIME": ("TIME", 1000),
                  "RETRYCOUNT": ("RETRYCOUNT", g.randint(0, 5)), "LASTID": ("LASTID", xid(g))}[opt]
    return [
        (("XREAD",) + count + ("STREAMS", k, k2, g.choice([b"0", b"$", xid(g)]), xid(g)), EXACT),
        (rg, TIMED), (rg, TIMED), (rg, TIMED),
        (("XACK", k, gr) + ids, EXACT),
        (("XPENDING", k, gr), EXACT),
        (("XPENDING", k, gr, xbound(g, 1), xbound(g, 0), g.randint(0, 10)), TIMED),
        (("XPENDING", k, gr, "IDLE", g.choice([0, 10 ** 9]), "-", "+", 10, cn), TIMED),
        (claim, TIMED),
        (("XAUTOCLAIM", k, gr, cn, 0, xbound(g, 1), "COUNT", g.randint(1, 4))
         + (("JUSTID",) if g.random() < 0.3 else ()), TIMED),
        (("XINFO", "STREAM", k), TIMED),
        (("XINFO", "STREAM", k, "FULL") + (("COUNT", g.randint(0, 3)) if g.random() < 0.5 else ()),
         TIMED),
        (("XINFO", "GROUPS", k), EXACT),
        (("XINFO", "CONSUMERS", k, gr), TIMED),
    ]


def stream_commands(g):
    k, k2, gr, cn = stream_key(g), stream_key(g), g.choice(GROUPS), g.choice(CONSUMERS)
    ids = tuple(xid(g) for _ in range(g.randint(1, 3)))
    count = ("COUNT", g.randint(0, 5)) if g.random() < 0.5 else ()
    xadd = ("XADD", k) + (("NOMKSTREAM",) if g.random() < 0.1 else ()) + trim_opts(g, True)
    xadd += (xadd_id(g),) + xfields(g)
    create = ("XGROUP", "CREATE", k, gr, g.choice([b"$", b"0", xid(g)]))
    if g.random() < 0.3:
        create += ("MKSTREAM",)
    if g.random() < 0.2:
        create += ("ENTRIESREAD", g.randint(-1, 10))
    if g.random() < 0.4:
        return xadd, EXACT
    return g.choice(stream_read_commands(g, k, k2, gr, cn, ids, count) + [
        (("XADD", k) + trim_opts(g, True) + (xid(g),) + xfields(g), EXACT),
        (("XADD", k) + trim_opts(g, True) + (xadd_id(g),) + xfields(g) * 3, EXACT),
        (("XLEN", k), EXACT),
        (("XRANGE", k, xbound(g, 1), xbound(g, 0)) + count, EXACT),
        (("XREVRANGE", k, xbound(g, 0), xbound(g, 1)) + count, EXACT),
        (("XRANGE", k, "-", "+"), EXACT),
        (("XDEL", k) + ids, EXACT),
        (("XTRIM", k) + trim_opts(g, False), EXACT),
        (create, EXACT), (create, EXACT), (create, EXACT),
        (("XGROUP", "SETID", k, gr, g.choice([b"$", b"0", xid(g)])), EXACT),
        (("XGROUP", "DESTROY", k, gr), EXACT),
        (("XGROUP", "CREATECONSUMER", k, gr, cn), EXACT),
        (("XGROUP", "DELCONSUMER", k, gr, cn), EXACT),
        (("XSETID", k, xid(g)) + (("ENTRIESADDED", g.randint(0, 40)) if g.random() < 0.3 else ())
         + (("MAXDELETEDID", xid(g)) if g.random() < 0.2 else ()), EXACT),
    ])


def stream_multi_commands(g):
    return ("MULTI",) + tuple(stream_commands(g)[0] for _ in range(g.randint(2, 4))), TIMED


XID = re.compile(rb"^\d+-\d+$")
MASKED_KEYS = {b"idle", b"seen-time", b"radix-tree-nodes"}
INFO_KEYS = MASKED_KEYS | {b"length", b"name", b"pending", b"consumers", b"entries", b"groups",
                           b"last-generated-id", b"radix-tree-keys", b"first-entry", b"lag",
                           b"entries-read", b"pel-count", b"last-delivered-id"}


def is_xid(v):
    return isinstance(v, bytes) and XID.match(v) is not None


def mask(v):
    """A stream reply with its times replaced by "T"."""
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
        if len(v) == 4 and is_xid(v[0]) and isinstance(v[1], bytes) and isinstance(v[2], int):
            out[2] = "T"  # [id, consumer, idle or delivery time, count]
        if len(v) == 3 and is_xid(v[0]) and isinstance(v[1], int):
            out[1] = "T"  # [id, delivery time, count]
        return out
    if isinstance(v, int) and v > 10 ** 12:
        return "T"
    return v


def dump_stream(c, k):
    """Entries, groups with their PELs and consumers (times masked)."""
    return repr([c.command("XRANGE", k, "-", "+"),
                 mask(c.command("XINFO", "STREAM", k, "FULL", "COUNT", 0)),
                 mask(c.command("XINFO", "STREAM", k))])


def key_commands(g):
    k, k2 = key_pair(g)
    return g.choice([
        (("DEL", k), EXACT),
        (("UNLINK", k, k2), EXACT),
        (("EXISTS", k, k2), EXACT),
        (("TYPE", k), EXACT),
        (("RENAME", k, k2), EXACT),
        (("RENAMENX", k, k2), EXACT),
        (("COPY", k, k2), EXACT),
        (("COPY", k, k2, "REPLACE"), EXACT),
        (("COPY", k, k2, "DB", 1, "REPLACE"), EXACT),
        (("MOVE", k, g.choice([0, 1])), EXACT),
        (("PEXPIRE", k, REL), EXACT),
        (("PEXPIREAT", k, T0 + g.randint(0, 1000)), EXACT),
        (("PEXPIREAT", k, T0 + g.randint(0, 1000), g.choice(["NX", "XX", "GT", "LT"])), EXACT),
        (("PEXPIREAT", k, 1000), EXACT),  # in the past: deletes
        (("PERSIST", k), EXACT),
        (("OBJECT", "ENCODING", k), EXACT),
        (("DBSIZE",), EXACT),
        (("KEYS", "*"), UNORDERED),
        (("SCAN", 0, "COUNT", 1000, "TYPE", g.choice(["string", "hash", "set", "zset", "list", "stream"])),
         UNORDERED),
        (("RANDOMKEY",), check_randomkey),
    ])


def flush_commands(g):
    return (("FLUSHDB",), EXACT)


GENERATORS = [(3, string_commands), (3, hash_commands), (6, set_commands), (6, list_commands),
              (1, list_multi_commands), (3, key_commands), (8, zset_commands), (2, lex_commands),
              (0.5, grow_commands), (2, big_commands), (5, geo_commands),
              (8, stream_commands), (1, stream_multi_commands), (0.02, flush_commands)]


def random_command(g):
    total = sum(w for w, _ in GENERATORS)
    r = g.uniform(0, total)
    for w, fn in GENERATORS:
        r -= w
        if r <= 0:
            return fn(g)
    return GENERATORS[-1][1](g)


# ---- Comparing -------------------------------------------------------------


def canon(v):
    """A reply as a comparable value, ignoring element order."""
    if isinstance(v, list):
        return sorted((canon(x) for x in v), key=repr)
    if isinstance(v, dict):
        return sorted(((canon(a), canon(b)) for a, b in v.items()), key=repr)
    if isinstance(v, RespError):
        return ("err", str(v))
    return v


class Pair:
    """The same connection on both servers: RESP2 and RESP3 per db."""

    def __init__(self, srv_port, ref_port):
        self.s = {(p, db): RawConn(srv_port) for p in (2, 3) for db in (0, 1)}
        self.r = {(p, db): RawConn(ref_port) for p in (2, 3) for db in (0, 1)}
        for (p, db), c in list(self.s.items()) + list(self.r.items()):
            if p == 3:
                c.command("HELLO", "3")
            c.command("SELECT", db)

    def both(self, cmd, proto=2, db=0, ref_too=True):
        """Runs cmd on strata and (unless ref_too is false: a random
        command redis must not draw for itself) on redis."""
        s, r = self.s[(proto, db)], self.r[(proto, db)]
        a, araw = self.one(s, cmd)
        b, braw = self.one(r, cmd) if ref_too else (None, b"")
        return (a, araw), (b, braw), r

    @staticmethod
    def one(c, cmd):
        """A command, or ("MULTI", cmd, ...): MULTI, the commands, EXEC, and
        the bytes of all their replies."""
        if cmd[0] != "MULTI" or len(cmd) == 1:
            return c.command(*cmd), c.last_raw
        raw = b""
        for sub in [("MULTI",)] + list(cmd[1:]) + [("EXEC",)]:
            v = c.command(*sub)
            raw += c.last_raw
        return v, raw

    def close(self):
        for c in list(self.s.values()) + list(self.r.values()):
            c.close()


def run_random(pair, g, ops, diffs):
    for i in range(ops):
        cmd, mode = random_command(g)
        proto, db = g.choice((2, 3)), 0 if g.random() < 0.85 else 1
        if isinstance(mode, Defined):
            if not mode.pred(cmd, pair.r[(proto, db)]):
                continue
            mode = EXACT
        (a, araw), (b, braw), ref = pair.both(cmd, proto, db, not callable(mode))
        if mode == EXACT:
            same = araw == braw
        elif mode == UNORDERED:
            same = araw[:1] == braw[:1] and canon(a) == canon(b)
        elif mode == TIMED:
            same = araw[:1] == braw[:1] and repr(mask(a)) == repr(mask(b))
        else:
            follow, why = mode(cmd, a, ref)
            for f in follow:
                ref.command(*f)
            same = why is None
            b = why
        if not same:
            diffs.append("#%d %s (resp%d db%d): strata %r, redis %r" % (i, cmd, proto, db, a, b))
            if len(diffs) > 20:
                return


def dump(c, db):
    """Every key of db with its type, TTL presence, encoding and value."""
    c.command("SELECT", db)
    out = {}
    for k in c.command("KEYS", "*"):
        t = c.command("TYPE", k)
        ttl = c.command("PTTL", k)
        val = DUMPERS[t](c, k) if t in DUMPERS else None
        out[k] = (t, ttl > 0 if isinstance(ttl, int) else ttl, c.command("OBJECT", "ENCODING", k),
                  val)
    out["dbsize"] = c.command("DBSIZE")
    return out


DUMPERS = {
    "string": lambda c, k: c.command("GET", k),
    "hash": lambda c, k: canon(c.command("HGETALL", k)),
    "set": lambda c, k: canon(c.command("SMEMBERS", k)),
    "zset": lambda c, k: c.command("ZRANGE", k, 0, -1, "WITHSCORES"),
    "list": lambda c, k: c.command("LRANGE", k, 0, -1),
    "stream": dump_stream,
}


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


def ref_with_limits():
    ref = RealRedis()
    c = RawConn(ref.port)
    for k, v in LIMITS.items():
        c.command("CONFIG", "SET", k, v)
    c.close()
    return ref


@test
def random_commands_match_redis_then_survive_restart_and_sigkill():
    g = random.Random(SEED)
    srv = Server(appendfsync="always", **{k.replace("-", "_"): v for k, v in LIMITS.items()})
    srv.start()
    ref = ref_with_limits()
    try:
        pair = Pair(srv.port, ref.port)
        diffs, groups_seen = [], 0
        for _ in range(8):
            run_random(pair, g, OPS // 8, diffs)
            assert not diffs, "seed %d:\n%s" % (SEED, "\n".join(diffs))
            c = pair.s[(2, 0)]
            groups_seen += sum(len(c.command("XINFO", "GROUPS", k)) for k in KEYS + STREAM_KEYS
                               if c.command("TYPE", k) == "stream")
        assert groups_seen > 0, "no stream consumer group was ever there (seed %d)" % SEED
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


@test
def short_ttls_expire_alike_on_every_type():
    """Keys of every type with a short TTL are gone on both servers once it
    passes (lazily on access, and for keys nobody touches, actively)."""
    srv = Server(**{k.replace("-", "_"): v for k, v in LIMITS.items()}).start()
    ref = ref_with_limits()
    try:
        pair = Pair(srv.port, ref.port)
        big = tuple(b"m%d" % i for i in range(40))
        for cmd in [("SET", "s", "v"), ("HSET", "h", "f", "v"), ("SADD", "a", "1", "2"),
                    ("SADD", "b") + big, ("HSET", "hb") + tuple(x for m in big for x in (m, m))]:
            pair.both(cmd)
            pair.both(("PEXPIRE", cmd[1], 150))
        pair.both(("SADD", "keep", "x"))
        time.sleep(0.5)
        assert pair.both(("SMEMBERS", "b"))[0][0] == []
        # The active cycle drops the untouched ones: polled, since when it
        # gets to them depends on the machine's load.
        c = srv.client()
        wait_for(lambda: c.info("keyspace").get("db0", {}).get("keys") == 1, 60,
                 "the active cycle on strata")
        compare_state(srv.port, ref.port, "after the TTLs passed")
        pair.close()
    finally:
        srv.cleanup()
        ref.close()


@test
def multi_exec_and_watch_on_sets_match_redis():
    srv = Server().start()
    ref = RealRedis()
    try:
        pair = Pair(srv.port, ref.port)
        w = Pair(srv.port, ref.port)
        script = [("SADD", "s", "1"), ("WATCH", "s"), ("MULTI",), ("SADD", "s", "2"),
                  ("SCARD", "s"), ("EXEC",), ("WATCH", "s")]
        for cmd in script:
            (a, araw), (b, braw), _ = pair.both(cmd)
            assert araw == braw, (cmd, a, b)
        w.both(("SREM", "s", "1"))  # another client changes the watched set
        for cmd in [("MULTI",), ("SADD", "s", "3"), ("EXEC",), ("SMEMBERS", "s"),
                    ("MULTI",), ("SADD", "s", "x"), ("SPOP", "nokey", "-1"), ("SCARD", "s"),
                    ("EXEC",), ("SMEMBERS", "s")]:
            (a, araw), (b, braw), _ = pair.both(cmd)
            assert canon(a) == canon(b), (cmd, a, b)
        pair.close()
        w.close()
    finally:
        srv.cleanup()
        ref.close()


@test
def zrangestore_keeps_negative_zeros_only_past_the_listpack_as_redis():
    """Redis fills a ZRANGESTORE destination into a listpack (integer 0 for
    -0) until a member exceeds a packing limit, then a skiplist (-0 kept);
    by rank it knows the length first."""
    srv = Server(zset_max_ziplist_entries="4").start()
    ref = RealRedis("--zset-max-ziplist-entries", "4")
    try:
        pair = Pair(srv.port, ref.port)
        script = [("ZADD", "src") + tuple(x for i in range(8) for x in ("-0", "m%d" % i)),
                  ("ZRANGESTORE", "d1", "src", "-inf", "inf", "BYSCORE"),
                  ("ZRANGESTORE", "d2", "src", "+inf", "-inf", "BYSCORE", "REV"),
                  ("ZRANGESTORE", "d3", "src", "-", "+", "BYLEX", "LIMIT", 1, 5),
                  ("ZRANGESTORE", "d4", "src", 0, -1), ("ZRANGESTORE", "d5", "src", 0, 2),
                  ("ZADD", "src", "-0", "x" * 70),
                  ("ZRANGESTORE", "d6", "src", 6, 8), ("ZRANGESTORE", "d7", "src", "-0", "0",
                                                        "BYSCORE", "LIMIT", 6, 3)]
        for cmd in script:
            (a, araw), (b, braw), _ = pair.both(cmd)
            assert araw == braw, (cmd, a, b)
        for d in ("d1", "d2", "d3", "d4", "d5", "d6", "d7"):
            for cmd in [("ZRANGE", d, 0, -1, "WITHSCORES"), ("OBJECT", "ENCODING", d)]:
                (a, araw), (b, braw), _ = pair.both(cmd)
                assert araw == braw, (cmd, a, b)
        pair.close()
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
        # Fixed seeds (STRATA_TRIM_SEED=a,b,... for others); 29 and 40 once
        # left a node too many (an XDEL emptying the tail, with max-entries 0
        # and max-bytes 300).
        seeds = [int(x) for x in os.environ.get("STRATA_TRIM_SEED", "1,29,40").split(",")]
        diffs = []
        for seed, conf in [(s, conf) for s in seeds for conf in
                           ((b"100", b"4096"), (b"7", b"4096"), (b"0", b"300"), (b"3", b"0"))]:
            if conf[0] == b"100":
                g = random.Random(seed)
            for c in (pair.s[(2, 0)], pair.r[(2, 0)]):
                c.command("CONFIG", "SET", "stream-node-max-entries", conf[0])
                c.command("CONFIG", "SET", "stream-node-max-bytes", conf[1])
                c.command("DEL", "t")
            for i in range(400):
                f = (b"a", stream_value(g)) if g.random() < 0.7 else (b"b", b"%d" % i, b"c", stream_value(g))
                cmd = ("XADD", "t", "MAXLEN", "~", g.randint(20, 60), "%d-1" % (i + 1)) + f
                if g.random() < 0.1:
                    cmd = ("XDEL", "t", "%d-1" % g.randint(1, i + 1))
                pair.both(cmd)
                for probe in (("XLEN", "t"), ("XINFO", "STREAM", "t")):
                    (a, araw), (b, braw), _ = pair.both(probe)
                    if repr(mask(a)) != repr(mask(b)):
                        diffs.append("%s after %s (seed %d %s): strata %r redis %r" %
                                     (probe, cmd, seed, conf, a, b))
                if diffs:
                    break
        assert not diffs, "\n".join(diffs[:5])
        pair.close()
    finally:
        srv.cleanup()
        ref.close()


def script_matches_redis(script, probes, same):
    """Runs each command of script, then each probe, on a fresh strata and
    redis-server; same(a, araw, b, braw) must hold for every reply."""
    srv = Server()
    srv.start()
    ref = RealRedis()
    try:
        pair = Pair(srv.port, ref.port)
        for cmd in script:
            for probe in (cmd,) + tuple(probes):
                (a, araw), (b, braw), _ = pair.both(probe)
                assert same(a, araw, b, braw), (cmd, probe, a, b)
        pair.close()
    finally:
        srv.cleanup()
        ref.close()


@test
def xdel_emptying_the_tail_node_makes_the_node_before_it_the_tail_again():
    """Redis appends to the last listpack of its radix tree: once XDEL frees
    the tail, the node before it takes the next entries while they fit."""
    script_matches_redis(
        [("CONFIG", "SET", "stream-node-max-entries", "0"),
         ("CONFIG", "SET", "stream-node-max-bytes", "300"),
         ("XADD", "t", "1-1", "a", "x" * 40), ("XADD", "t", "2-1", "a", "x" * 40),
         ("XADD", "t", "3-1", "a", "x" * 200), ("XADD", "t", "4-1", "a", "x" * 200),
         ("XDEL", "t", "4-1"), ("XDEL", "t", "3-1"),
         ("XADD", "t", "5-1", "a", "y"), ("XADD", "t", "6-1", "b", "1", "c", "z" * 90),
         ("XADD", "t", "7-1", "a", "y"), ("XADD", "t", "MAXLEN", "~", "1", "8-1", "a", "y"),
         ("XDEL", "t", "8-1"), ("XADD", "t", "9-1", "a", "y")],
        (("XLEN", "t"), ("XINFO", "STREAM", "t")),
        lambda a, araw, b, braw: repr(mask(a)) == repr(mask(b)))


@test
def an_exact_minid_trim_that_empties_a_node_leaves_the_stream_writable():
    """The node's last entry is deleted (its id still bounds the node), its
    live ones all fall below MINID: the trim empties the node, and the XADD
    doing it succeeds as in Redis (which keeps the empty node: XINFO's
    radix-tree-keys is not compared)."""
    script_matches_redis(
        [("CONFIG", "SET", "stream-node-max-entries", "7"),
         ("XADD", "t", "97-1", "h", "1"), ("XADD", "t", "107-1", "f", ""),
         ("XADD", "t", "109-*", "g", "-7", "f", "1"),
         ("XADD", "t", "MINID", "=", "110", "120-0", "f", "x y", "g", "a" * 657),
         ("XADD", "t", "127-*", "f", "b" * 732, "g", "22"), ("XADD", "t", "127-3", "f", "-7"),
         ("XADD", "t", "139-*", "", "-7", "h", "", "g", "-7"), ("XDEL", "t", "139"),
         ("XADD", "t", "MINID", "=", "129-0", "163-0", "f", "-7", "g", "1"),
         ("XADD", "t", "170-0", "f", "2"), ("XTRIM", "t", "MINID", "=", "165")],
        (("XLEN", "t"), ("XRANGE", "t", "-", "+")),
        lambda a, araw, b, braw: araw == braw)


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
