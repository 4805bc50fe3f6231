"""test_types_random.py -- a differential test of the value types against a
real redis-server: thousands of random commands over a small key space, so
that strings, hashes, sets and lists collide on the same keys (the lists'
blocking forms where they do not block, and MULTI/EXEC around list
commands, too), mixed with the key
commands (DEL, UNLINK, EXISTS, TYPE, RENAME[NX], COPY [DB] [REPLACE], MOVE, the
EXPIRE family, PERSIST, KEYS, SCAN TYPE, RANDOMKEY, DBSIZE, OBJECT ENCODING,
FLUSHDB, MULTI/EXEC with WATCH), sent to both servers over RESP2 and RESP3
connections and compared reply by reply (raw bytes where Redis's order is
defined, as multisets where it is not, by Redis's rules where the reply is
random). Then the whole keyspace of both is compared, again after a clean
restart of strata, and again after SIGKILL with appendfsync always.

Adding a type: write a generator like set_commands (returning a command
and how to compare its reply), add it to GENERATORS, and add a DUMPERS
entry that reads a whole value of the type in a canonical form.

Run with /usr/bin/python3 (python3-redis). STRATA_RANDOM_OPS and
STRATA_SEED change the length and the seed."""
import os, random, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, RespError, Server, test, main
from redis_compare import RealRedis

OPS = int(os.environ.get("STRATA_RANDOM_OPS", "3000"))
SEED = int(os.environ.get("STRATA_SEED", str(int(time.time()) % 100000)))
KEYS = [b"k%d" % i for i in range(8)]
MEMBERS = [b"1", b"2", b"3", b"10", b"-5", b"0", b"99", b"a", b"b", b"c", b"x y", b"", b"\x00z"]
# Small packing limits, so values turn big (member keys in the engine)
# within a few commands and both encodings are exercised.
LIMITS = {"set-max-intset-entries": "16", "hash-max-listpack-entries": "8",
          "list-max-listpack-size": "4"}
FAR = 10 ** 8  # a TTL that never passes during the test (ms)
# Absolute expiry times for the NX/XX/GT/LT forms: relative ones would be
# judged against each server's own clock and could compare differently.
T0 = int(time.time() * 1000) + FAR

# Reply modes: "exact" raw bytes; "unordered" same RESP type and multiset
# of elements; a callable checks a random reply against redis and returns
# commands that make redis's state follow strata's.
EXACT, UNORDERED = "exact", "unordered"


def key(g):
    return g.choice(KEYS)


def member(g):
    return g.choice(MEMBERS) if g.random() < 0.9 else str(g.randrange(-1000, 100000)).encode()


def members(g, lo=1, hi=4):
    return [member(g) for _ in range(g.randint(lo, hi))]


# ---- Random replies -------------------------------------------------------


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
        (("SET", k, member(g), "PX", FAR), EXACT),
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


def key_commands(g):
    k, k2 = key(g), key(g)
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
        (("PEXPIRE", k, FAR), EXACT),
        (("PEXPIREAT", k, T0 + g.randint(0, 1000)), EXACT),
        (("PEXPIREAT", k, T0 + g.randint(0, 1000), g.choice(["NX", "XX", "GT", "LT"])), EXACT),
        (("PEXPIREAT", k, 1000), EXACT),  # in the past: deletes
        (("PERSIST", k), EXACT),
        (("OBJECT", "ENCODING", k), EXACT),
        (("DBSIZE",), EXACT),
        (("KEYS", "*"), UNORDERED),
        (("SCAN", 0, "COUNT", 1000, "TYPE", g.choice(["string", "hash", "set", "list"])),
         UNORDERED),
        (("RANDOMKEY",), check_randomkey),
    ])


def flush_commands(g):
    return (("FLUSHDB",), EXACT)


GENERATORS = [(3, string_commands), (3, hash_commands), (6, set_commands), (6, list_commands),
              (1, list_multi_commands), (3, key_commands), (0.02, flush_commands)]


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
        (a, araw), (b, braw), ref = pair.both(cmd, proto, db, not callable(mode))
        if mode == EXACT:
            same = araw == braw
        elif mode == UNORDERED:
            same = araw[:1] == braw[:1] and canon(a) == canon(b)
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
    "list": lambda c, k: c.command("LRANGE", k, 0, -1),
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
        time.sleep(0.5)  # the active cycle drops the untouched ones
        compare_state(srv.port, ref.port, "after the TTLs passed")
        info = srv.client().info("keyspace")
        assert info.get("db0", {}).get("keys") == 1, info
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


if __name__ == "__main__":
    main()
