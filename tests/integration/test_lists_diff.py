"""test_lists_diff.py -- a differential test of lists against a real
redis-server: thousands of random list commands (every non-blocking list
command, the blocking ones where they do not block, MULTI/EXEC around
them) mixed with string, hash and key commands over a small key space, so
that types collide, sent over RESP2 and RESP3 connections and compared
reply by reply, byte for byte. Then the whole keyspace of both servers is
compared, again after a clean restart of strata, and again after SIGKILL
with appendfsync always.

Lists turn big (items as separate engine keys) within a few commands: the
generator pushes long values and runs of many items past the 8 KB packed
limit. The layout mirrors the other types' random test (generators
returning a command and how to compare it, DUMPERS reading a whole value),
so the two can become one generator.

Run with /usr/bin/python3 (python3-redis). STRATA_RANDOM_OPS and
STRATA_SEED change the length and the seed."""
import os, random, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, RespError, Server, test, main
from redis_compare import RealRedis

OPS = int(os.environ.get("STRATA_RANDOM_OPS", "4000"))
SEED = int(os.environ.get("STRATA_SEED", str(int(time.time()) % 100000)))
KEYS = [b"k%d" % i for i in range(6)]
VALUES = [b"a", b"b", b"c", b"1", b"2", b"10", b"", b"x y", b"\x00z"]
FAR = 10 ** 8  # a TTL that never passes during the test (ms)
T0 = int(time.time() * 1000) + FAR
EXACT, UNORDERED = "exact", "unordered"


def key(g):
    return g.choice(KEYS)


def value(g):
    r = g.random()
    if r < 0.8:
        return g.choice(VALUES)
    if r < 0.95:
        return str(g.randrange(-100, 1000)).encode()
    return bytes(g.choice(b"abcdef") for _ in range(g.randint(100, 1500)))


def values(g, lo=1, hi=4):
    return tuple(value(g) for _ in range(g.randint(lo, hi)))


def index(g):
    return g.randint(-15, 15) if g.random() < 0.9 else g.choice([-10 ** 6, 10 ** 6, 0])


def side(g):
    return g.choice(["LEFT", "RIGHT"])


# ---- Generators: (command, mode) ----------------------------------------


def list_commands(g):
    k, k2, k3 = key(g), key(g), key(g)
    many = tuple(value(g) for _ in range(g.randint(10, 60)))
    lpos = ("LPOS", k, value(g))
    for opt in g.sample(["RANK", "COUNT", "MAXLEN"], g.randint(0, 3)):
        lpos += (opt, {"RANK": g.choice([1, 2, -1, -3, 5]), "COUNT": g.randint(0, 3),
                       "MAXLEN": g.randint(0, 8)}[opt])
    mpop = (g.randint(1, 3),)
    mpop += tuple(key(g) for _ in range(mpop[0])) + (side(g),)
    if g.random() < 0.6:
        mpop += ("COUNT", g.randint(1, 5))
    return g.choice([
        (("LPUSH", k) + values(g), EXACT),
        (("RPUSH", k) + values(g), EXACT),
        (("RPUSH", k) + many, EXACT),
        (("LPUSH", k) + many, EXACT),
        (("RPUSH", k) + tuple(bytes([65 + i]) * 1000 for i in range(g.randint(6, 12))), EXACT),
        (("LPUSHX", k) + values(g), EXACT),
        (("RPUSHX", k) + values(g), EXACT),
        (("LPOP", k), EXACT),
        (("RPOP", k), EXACT),
        (("LPOP", k, g.randint(0, 5)), EXACT),
        (("RPOP", k, g.randint(0, 70)), EXACT),
        (("LLEN", k), EXACT),
        (("LRANGE", k, 0, -1), EXACT),
        (("LRANGE", k, index(g), index(g)), EXACT),
        (("LINDEX", k, index(g)), EXACT),
        (("LSET", k, index(g), value(g)), EXACT),
        (("LINSERT", k, g.choice(["BEFORE", "AFTER"]), value(g), value(g)), EXACT),
        (("LREM", k, g.randint(-3, 3), value(g)), EXACT),
        (("LTRIM", k, index(g), index(g)), EXACT),
        (lpos, EXACT),
        (("LMOVE", k, k2, side(g), side(g)), EXACT),
        (("LMOVE", k, k, side(g), side(g)), EXACT),
        (("RPOPLPUSH", k, k2), EXACT),
        (("LMPOP",) + mpop, EXACT),
        # the blocking forms, on keys that hold something (else a short wait)
        (("BLPOP", k, k2, 0.01), EXACT),
        (("BRPOP", k, 0.01), EXACT),
        (("BLMOVE", k, k3, side(g), side(g), 0.01), EXACT),
        (("BRPOPLPUSH", k, k2, 0.01), EXACT),
        (("BLMPOP", 0.01) + mpop, EXACT),
    ])


def string_commands(g):
    k = key(g)
    return g.choice([
        (("SET", k, value(g)), EXACT),
        (("GET", k), EXACT),
        (("APPEND", k, value(g)), EXACT),
        (("INCR", k), EXACT),
    ])


def hash_commands(g):
    k = key(g)
    return g.choice([
        (("HSET", k, value(g), value(g)), EXACT),
        (("HGET", k, value(g)), EXACT),
        (("HGETALL", k), UNORDERED),
    ])


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
        (("PEXPIRE", k, FAR), EXACT),
        (("PEXPIREAT", k, T0 + g.randint(0, 1000), g.choice(["NX", "XX", "GT", "LT"])), EXACT),
        (("PEXPIREAT", k, 1000), EXACT),  # in the past: deletes
        (("PERSIST", k), EXACT),
        (("DBSIZE",), EXACT),
        (("KEYS", "*"), UNORDERED),
        (("SCAN", 0, "COUNT", 1000, "TYPE", g.choice(["string", "hash", "list"])), UNORDERED),
    ])


def multi_commands(g):
    """Two to four list commands in one transaction (one EXEC reply)."""
    return ("MULTI",) + tuple(list_commands(g)[0] for _ in range(g.randint(2, 4))), EXACT


def flush_commands(g):
    return (("FLUSHDB",), EXACT)


GENERATORS = [(12, list_commands), (2, string_commands), (1, hash_commands), (3, key_commands),
              (1, multi_commands), (0.02, flush_commands)]


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

    def one(self, c, cmd):
        """A command, or MULTI + the commands after it + EXEC: the replies'
        bytes of the whole (the QUEUED ones included)."""
        if cmd[0] != "MULTI":
            v = c.command(*cmd)
            return v, c.last_raw
        raw = b""
        for sub in [("MULTI",)] + list(cmd[1:]) + [("EXEC",)]:
            v = c.command(*sub)
            raw += c.last_raw
        return v, raw

    def both(self, cmd, proto=2, db=0):
        s, r = self.s[(proto, db)], self.r[(proto, db)]
        return self.one(s, cmd), self.one(r, cmd)

    def close(self):
        for c in list(self.s.values()) + list(self.r.values()):
            c.close()


def run_random(pair, g, ops, diffs):
    for i in range(ops):
        cmd, mode = random_command(g)
        proto, db = g.choice((2, 3)), 0 if g.random() < 0.85 else 1
        (a, araw), (b, braw) = pair.both(cmd, proto, db)
        if mode == EXACT:
            same = araw == braw
        else:
            same = araw[:1] == braw[:1] and canon(a) == canon(b)
        if not same:
            diffs.append("#%d %s (resp%d db%d): strata %r, redis %r" % (i, cmd, proto, db, a, b))
            if len(diffs) > 20:
                return


DUMPERS = {
    "string": lambda c, k: c.command("GET", k),
    "hash": lambda c, k: canon(c.command("HGETALL", k)),
    "list": lambda c, k: c.command("LRANGE", k, 0, -1),
}


def dump(c, db):
    """Every key of db with its type, TTL presence and value."""
    c.command("SELECT", db)
    out = {}
    for k in c.command("KEYS", "*"):
        t = c.command("TYPE", k)
        ttl = c.command("PTTL", k)
        out[k] = (t, ttl > 0 if isinstance(ttl, int) else ttl,
                  DUMPERS[t](c, k) if t in DUMPERS else None)
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


def big_lists(port):
    """How many lists hold more than the 8 KB a packed one may."""
    c = RawConn(port)
    n = 0
    for db in (0, 1):
        c.command("SELECT", db)
        for k in c.command("KEYS", "*"):
            if c.command("TYPE", k) == "list":
                n += sum(len(x) + 2 for x in c.command("LRANGE", k, 0, -1)) > 8192
    c.close()
    return n


@test
def random_list_commands_match_redis_then_survive_restart_and_sigkill():
    g = random.Random(SEED)
    srv = Server(appendfsync="always")
    srv.start()
    ref = RealRedis()
    try:
        pair = Pair(srv.port, ref.port)
        diffs = []
        seen_big = 0
        for _ in range(16):
            run_random(pair, g, OPS // 16, diffs)
            assert not diffs, "seed %d:\n%s" % (SEED, "\n".join(diffs))
            seen_big += big_lists(srv.port)
        assert seen_big > 0, "no list grew past the packed limit (seed %d)" % SEED
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


if __name__ == "__main__":
    main()
