"""test_index.py -- secondary indexes against an in-test model.

Thousands of random HSET/HDEL/DEL/RENAME/EXPIRE/PERSIST/SET/MULTI operations
on a few hundred keys covered by several indexes (composite, DESC, UNIQUE,
NUMERIC with negative and fractional values), checked every few operations
with random IDX.RANGE queries (EQ, MIN/MAX inclusive and exclusive, -inf/+inf,
TAG - + [ (, REV, LIMIT, HASHES, FIELDS) against a Python model; then again
after a clean restart and after SIGKILL with appendfsync always. IDX.CHECK
must find nothing at each stage.
"""
import functools
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, test, main  # noqa: E402

import redis  # noqa: E402

SEED = int(os.environ.get("IDX_SEED", "4242"))
OPS = int(os.environ.get("IDX_OPS", "3000"))

NUMS = [b"-2.5", b"-1", b"0", b"-0", b"0.25", b"3", b"1000", b"7.125", b"-1e3", b"12", b"4.5",
        b"1e2", b"100", b"-0.125"]
BAD_NUMS = [b"abc", b"", b"1x"]
EMAILS = [b"e%d@x" % i for i in range(260)] + [b"e\x00z", b""]
COUNTRIES = [b"US", b"DE", b"", b"D", b"a\x00", b"a", b"\xff", b"(x"]
STATUSES = [b"active", b"pending", b"x"]
NAMES = [b"n%d" % i for i in range(20)] + [b"", b"n\x00", b"\xff\xfe"]
IDS = [b"%d" % i for i in range(-20, 20)] + [b"-0", b"0.5", b"-0.5", b"1e1"]

# name -> (prefix, unique, [(field, numeric, desc)])
INDEXES = {
    "email": (b"u:", True, [(b"email", False, False)]),
    "cs": (b"u:", False, [(b"country", False, False), (b"status", False, False),
                          (b"score", True, False)]),
    "top": (b"u:", False, [(b"score", True, True), (b"name", False, True)]),
    "vn": (b"v:", False, [(b"n", True, False)]),
    "vid": (b"v:", True, [(b"id", True, False)]),
}
U_FIELDS = {b"email": EMAILS, b"country": COUNTRIES, b"status": STATUSES, b"score": NUMS,
            b"name": NAMES, b"bio": [b"hello", b"x" * 50]}
V_FIELDS = {b"n": NUMS, b"id": IDS, b"other": [b"1", b"2"]}
KEYS = [b"u:%d" % i for i in range(150)] + [b"v:%d" % i for i in range(60)] + [b"w:1", b"w:2"]


def create_indexes(r):
    for name, (prefix, unique, fields) in INDEXES.items():
        args = ["IDX.CREATE", name, "PREFIX", prefix] + (["UNIQUE"] if unique else []) + ["SCHEMA"]
        for f, numeric, desc in fields:
            args += [f, "NUMERIC" if numeric else "TAG"] + (["DESC"] if desc else [])
        assert r.execute_command(*args) in (b"OK", "OK", True)


def num(b):
    return float(b.decode())


NUM_RE = re.compile(rb"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def is_num(b):
    return bool(NUM_RE.match(b))


def num_arg(v):
    """A query argument for the number v."""
    return (b"%d" % int(v)) if v == int(v) else repr(v).encode()


class Model:
    """Keys -> ('hash', {field: value}) or ('string', value); expiry in ms."""

    def __init__(self):
        self.data = {}
        self.expire = {}

    def live(self, k):
        return k in self.data

    def drop_expired(self, now_ms):
        for k, t in list(self.expire.items()):
            if t <= now_ms:
                del self.expire[k]
                self.data.pop(k, None)

    def pending_short(self):
        return max(self.expire.values(), default=0) if self.expire else 0

    def tuple_of(self, name, k, fields):
        prefix, unique, schema = INDEXES[name]
        if not k.startswith(prefix):
            return None
        vals = []
        for f, numeric, desc in schema:
            if f not in fields:
                return None
            vals.append(num(fields[f]) if numeric else fields[f])
        return tuple(vals)

    def validate(self, k, fields, ignore=()):
        """The error a write of fields at k must get, or None. Indexes are
        checked in creation order, each NUMERIC first, then UNIQUE."""
        for name, (prefix, unique, schema) in INDEXES.items():
            if not k.startswith(prefix):
                continue
            for f, numeric, desc in schema:
                if numeric and f in fields and not is_num(fields[f]):
                    return "NUMERIC"
            t = self.tuple_of(name, k, fields) if unique else None
            if t is None:
                continue
            for other, (typ, val) in self.data.items():
                if other == k or other in ignore or typ != "hash":
                    continue
                if self.tuple_of(name, other, val) == t:
                    return "UNIQUE"
        return None

    def entries(self, name):
        out = []
        for k, (typ, val) in self.data.items():
            if typ != "hash":
                continue
            t = self.tuple_of(name, k, val)
            if t is not None:
                out.append((t, k))
        schema = INDEXES[name][2]

        def cmp(a, b):
            for i, (f, numeric, desc) in enumerate(schema):
                x, y = a[0][i], b[0][i]
                c = (x > y) - (x < y)
                if desc:
                    c = -c
                if c:
                    return c
            return (a[1] > b[1]) - (a[1] < b[1])
        out.sort(key=functools.cmp_to_key(cmp))
        return out


def pick_value(rng, numeric, pool):
    return rng.choice(pool)


def make_bound(rng, numeric, pool, which):
    if numeric:
        c = rng.random()
        if c < 0.1:
            return b"-inf", ("inf", -float("inf"), True)
        if c < 0.2:
            return b"+inf", ("inf", float("inf"), True)
        v = rng.choice(pool)
        if rng.random() < 0.4:
            return b"(" + v, ("v", num(v), False)
        return v, ("v", num(v), True)
    c = rng.random()
    if c < 0.1:
        return b"-", ("min",)
    if c < 0.2:
        return b"+", ("max",)
    v = rng.choice(pool)
    if c < 0.5:
        return b"(" + v, ("v", v, False)
    if c < 0.8:
        return b"[" + v, ("v", v, True)
    if v[:1] in (b"(", b"["):
        return b"[" + v, ("v", v, True)
    return v, ("v", v, True)


def in_bound(x, bound, is_min):
    if bound[0] == "min":
        return is_min  # MIN - : everything; MAX - : nothing
    if bound[0] == "max":
        return not is_min
    _, v, incl = bound
    if is_min:
        return x > v or (incl and x == v)
    return x < v or (incl and x == v)


def field_pool(f):
    return U_FIELDS.get(f) or V_FIELDS.get(f)


def random_query(rng, model, name):
    prefix, unique, schema = INDEXES[name]
    args = ["IDX.RANGE", name]
    k = rng.randint(0, len(schema))
    eq = []
    entries = model.entries(name)
    for i in range(k):
        f, numeric, desc = schema[i]
        if entries and rng.random() < 0.7:
            v = rng.choice(entries)[0][i]
            raw = num_arg(v) if numeric else v
        else:
            raw = rng.choice([x for x in field_pool(f) if not numeric or is_num(x)])
        eq.append((raw, num(raw) if numeric else raw))
    if eq:
        args += ["EQ"] + [r for r, _ in eq]
    lo = hi = None
    if k < len(schema):
        f, numeric, desc = schema[k]
        pool = [x for x in field_pool(f) if not numeric or is_num(x)]
        if rng.random() < 0.5:
            raw, lo = make_bound(rng, numeric, pool, "min")
            args += ["MIN", raw]
        if rng.random() < 0.5:
            raw, hi = make_bound(rng, numeric, pool, "max")
            args += ["MAX", raw]
    rev = rng.random() < 0.3
    if rev:
        args.append("REV")
    offset, count = 0, -1
    if rng.random() < 0.5:
        offset, count = rng.randint(0, 3), rng.choice([0, 1, 2, 5, 10, -1])
        args += ["LIMIT", offset, count]
    mode = rng.choice(["keys", "keys", "hashes", "fields", "values"])
    want = None
    if mode == "hashes":
        args.append("HASHES")
    elif mode in ("fields", "values"):
        # a field that no hash has, and a field named twice, too
        pool = sorted(U_FIELDS if prefix == b"u:" else V_FIELDS) + [b"nosuch"]
        want = rng.sample(pool, rng.randint(1, 3))
        if rng.random() < 0.2:
            want.append(want[0])
        args += [mode.upper(), len(want)] + want
    expect = []
    for t, key in entries:
        if any(t[i] != eq[i][1] for i in range(k)):
            continue
        if lo is not None and not in_bound(t[k], lo, True):
            continue
        if hi is not None and not in_bound(t[k], hi, False):
            continue
        expect.append(key)
    if rev:
        expect.reverse()
    expect = expect[offset:] if count < 0 else expect[offset:offset + count]
    return args, expect, mode, want


STATS = {}


def check_query(r, model, args, expect, mode, want):
    STATS["queries"] = STATS.get("queries", 0) + 1
    STATS["nonempty"] = STATS.get("nonempty", 0) + (len(expect) > 0)
    got = r.execute_command(*args)
    if mode == "keys":
        assert got == expect, "%r: got %r want %r" % (args, got, expect)
        return
    keys = got[0::2]
    assert keys == expect, "%r: got keys %r want %r" % (args, keys, expect)
    for key, flat in zip(got[0::2], got[1::2]):
        full = model.data[key][1]
        if mode == "values":
            exp = [full.get(f) for f in want]
            assert flat == exp, "%r: %r has %r, want %r" % (args, key, flat, exp)
            continue
        if mode == "fields":
            # each requested field that exists, in the order asked
            exp = [x for f in want if f in full for x in (f, full[f])]
            assert flat == exp, "%r: %r has %r, want %r" % (args, key, flat, exp)
            continue
        fields = dict(zip(flat[0::2], flat[1::2]))
        if want is None:
            assert fields == full, "%r: %r has %r, model %r" % (args, key, fields, full)
        else:
            sub = {f: full[f] for f in want if f in full}
            assert fields == sub, "%r: %r has %r, want %r" % (args, key, fields, sub)


def check_all(r, model, rng, nqueries):
    for name in INDEXES:
        entries = model.entries(name)
        got = r.execute_command("IDX.RANGE", name)
        assert got == [k for _, k in entries], "full %s: got %r want %r" % (
            name, got, [k for _, k in entries])
    for _ in range(nqueries):
        check_query(r, model, *random_query(rng, model, rng.choice(list(INDEXES))))


class Runner:
    def __init__(self, r, model, rng):
        self.r, self.m, self.rng = r, model, rng

    def settle(self):
        """Waits until every short TTL has passed, so each op is deterministic."""
        t = self.m.pending_short()
        if t:
            now = time.time() * 1000
            if t + 15 > now:
                time.sleep((t + 15 - now) / 1000.0)
            self.m.drop_expired(time.time() * 1000)

    def gen(self):
        rng = self.rng
        k = rng.choice(KEYS)
        c = rng.random()
        if c < 0.55:
            pool = V_FIELDS if k.startswith(b"v:") else U_FIELDS
            fs = rng.sample(sorted(pool), rng.randint(1, 3))
            args = ["HSET", k]
            for f in fs:
                v = rng.choice(pool[f])
                if f in (b"score", b"n", b"id") and rng.random() < 0.04:
                    v = rng.choice(BAD_NUMS)
                args += [f, v]
            return args
        if c < 0.63:
            pool = V_FIELDS if k.startswith(b"v:") else U_FIELDS
            return ["HDEL", k] + rng.sample(sorted(pool), rng.randint(1, 2))
        if c < 0.68:
            return ["DEL", k]
        if c < 0.74:
            return ["RENAME", k, rng.choice(KEYS)]
        if c < 0.76:
            return ["PEXPIRE", k, rng.randint(5, 30)]
        if c < 0.79:
            return ["EXPIRE", k, 1000000]
        if c < 0.81:
            return ["PERSIST", k]
        if c < 0.83:
            return ["SET", k, "str"]
        if c < 0.85:
            f = b"n" if k.startswith(b"v:") else b"score"
            return ["HINCRBY", k, f, rng.randint(-3, 3)]
        if c < 0.87:
            pool = V_FIELDS if k.startswith(b"v:") else U_FIELDS
            f = rng.choice(sorted(pool))
            return ["HSETNX", k, f, rng.choice(pool[f])]
        if c < 0.89:
            return ["COPY", k, rng.choice(KEYS)] + (["REPLACE"] if rng.random() < 0.5 else [])
        if c < 0.90:
            return ["RENAMENX", k, rng.choice(KEYS)]
        if c < 0.91:
            return ["UNLINK", k]
        if c < 0.912:
            return ["FLUSHDB"]
        return None

    def apply_model(self, args):
        """Applies args to the model; returns the expected error kind or None."""
        m = self.m
        if args[0] == "FLUSHDB":
            m.data.clear()
            m.expire.clear()
            return None
        cmd, k = args[0], args[1]
        cur = m.data.get(k)
        if cmd == "UNLINK":
            cmd = "DEL"
        if cmd == "HINCRBY":
            if cur and cur[0] != "hash":
                return "WRONGTYPE"
            old = cur[1].get(args[2], b"0") if cur else b"0"
            if not re.match(rb"^(0|-?[1-9][0-9]*)$", old):
                return "NOTINT"
            args = ["HSET", k, args[2], b"%d" % (int(old) + args[3])]
            cmd = "HSET"
        if cmd == "HSETNX":
            if cur and cur[0] != "hash":
                return "WRONGTYPE"
            if cur and args[2] in cur[1]:
                return None
            args = ["HSET", k, args[2], args[3]]
            cmd = "HSET"
        if cmd in ("COPY", "RENAMENX"):
            dst = args[2]
            if cmd == "COPY" and dst == k:
                return "SAME"  # checked before the key is looked up, as Redis does
            if not cur:
                return None if cmd == "COPY" else "NOKEY"
            if dst == k:
                return None
            if dst in m.data and not (cmd == "COPY" and "REPLACE" in args):
                return None
            if cmd == "RENAMENX":
                cmd, args = "RENAME", ["RENAME", k, dst]
            else:
                if cur[0] == "hash":
                    err = m.validate(dst, cur[1])
                    if err:
                        return err
                m.data[dst] = (cur[0], dict(cur[1]) if cur[0] == "hash" else cur[1])
                m.expire.pop(dst, None)
                if k in m.expire:
                    m.expire[dst] = m.expire[k]
                return None
        if cmd == "HSET":
            if cur and cur[0] != "hash":
                return "WRONGTYPE"
            new = dict(cur[1]) if cur else {}
            for i in range(2, len(args), 2):
                new[args[i]] = args[i + 1]
            err = m.validate(k, new)
            if err:
                return err
            m.data[k] = ("hash", new)
            return None
        if cmd == "HDEL":
            if not cur:
                return None
            if cur[0] != "hash":
                return "WRONGTYPE"
            new = {f: v for f, v in cur[1].items() if f not in args[2:]}
            if new:
                m.data[k] = ("hash", new)
            else:
                del m.data[k]
                m.expire.pop(k, None)
            return None
        if cmd == "DEL":
            m.data.pop(k, None)
            m.expire.pop(k, None)
            return None
        if cmd == "RENAME":
            dst = args[2]
            if not cur:
                return "NOKEY"
            if dst == k:
                return None
            if cur[0] == "hash":
                err = m.validate(dst, cur[1], ignore=(k,))
                if err:
                    return err
            m.data[dst] = cur
            del m.data[k]
            exp = m.expire.pop(k, None)
            m.expire.pop(dst, None)
            if exp is not None:
                m.expire[dst] = exp
            return None
        if cmd == "PEXPIRE":
            if cur:
                m.expire[k] = time.time() * 1000 + args[2]
            return None
        if cmd == "EXPIRE":
            m.expire.pop(k, None)  # a long TTL never fires in this test
            return None
        if cmd == "PERSIST":
            m.expire.pop(k, None)
            return None
        if cmd == "SET":
            m.data[k] = ("string", b"str")
            m.expire.pop(k, None)
            return None
        raise AssertionError(cmd)

    def check_reply(self, args, expect_err, got):
        STATS[expect_err or "ok"] = STATS.get(expect_err or "ok", 0) + 1
        if expect_err is None:
            assert not isinstance(got, Exception), "%r: unexpected error %r" % (args, got)
            return
        assert isinstance(got, Exception), "%r: expected %s error, got %r" % (args, expect_err, got)
        text = str(got)
        if expect_err == "UNIQUE":
            assert "UNIQUE" in text and "already held by key" in text, (args, text)
        elif expect_err == "NUMERIC":
            assert "NUMERIC" in text and "not a number" in text, (args, text)
        elif expect_err == "WRONGTYPE":
            assert "WRONGTYPE" in text, (args, text)
        elif expect_err == "NOKEY":
            assert "no such key" in text, (args, text)
        elif expect_err == "NOTINT":
            assert "not an integer" in text, (args, text)

    def sync_expiry(self):
        """Takes each pending short TTL from the server (PEXPIRETIME): a busy
        server sets it later than the model guessed, never earlier."""
        for k in list(self.m.expire):
            t = self.r.execute_command("PEXPIRETIME", k)
            if t > 0:
                self.m.expire[k] = max(self.m.expire[k], t)

    def step(self):
        self.settle()
        self._step()
        if self.m.expire:
            self.sync_expiry()

    def _step(self):
        if self.rng.random() < 0.08:
            ops = [o for o in (self.gen() for _ in range(self.rng.randint(2, 4))) if o]
            if not ops:
                return
            p = self.r.pipeline(transaction=True)
            for o in ops:
                p.execute_command(*o)
            expects = [self.apply_model(o) for o in ops]
            res = p.execute(raise_on_error=False)
            for o, e, g in zip(ops, expects, res):
                self.check_reply(o, e, g)
            return
        args = self.gen()
        if not args:
            return
        expect = self.apply_model(args)
        try:
            got = self.r.execute_command(*args)
        except redis.ResponseError as e:
            got = e
        self.check_reply(args, expect, got)


def run_model(srv, ops):
    rng = random.Random(SEED)
    r = srv.client()
    create_indexes(r)
    model = Model()
    run = Runner(r, model, rng)
    for i in range(ops):
        run.step()
        if i % 5 == 4:
            run.settle()
            for _ in range(3):
                check_query(r, model, *random_query(rng, model, rng.choice(list(INDEXES))))
        if i % 500 == 499:
            run.settle()
            check_all(r, model, rng, 5)
            assert r.execute_command("IDX.CHECK") == []
    run.settle()
    check_all(r, model, rng, 50)
    assert r.execute_command("IDX.CHECK") == []
    print("stats:", sorted(STATS.items()), flush=True)
    # The run must have exercised every kind of rejection and real answers.
    for kind in ("UNIQUE", "NUMERIC", "WRONGTYPE", "ok"):
        assert STATS.get(kind, 0) > 0, (kind, STATS)
    assert STATS["nonempty"] > STATS["queries"] // 4, STATS
    return r, model, rng, run


@test
def random_ops_match_model_then_restart_and_sigkill():
    srv = Server(appendfsync="always").start()
    try:
        r, model, rng, run = run_model(srv, OPS)
        srv.restart()
        r = srv.client()
        run.r = r
        run.settle()
        check_all(r, model, rng, 100)
        assert r.execute_command("IDX.CHECK") == []
        # More writes, then SIGKILL: with appendfsync always every
        # acknowledged write, index entries included, must be there.
        for _ in range(300):
            run.step()
        srv.kill9()
        srv.start()
        r = srv.client()
        run.r = r
        run.settle()
        check_all(r, model, rng, 100)
        assert r.execute_command("IDX.CHECK") == []
        assert sorted(r.execute_command("IDX.LIST")) == sorted(n.encode() for n in INDEXES)
    finally:
        srv.cleanup()


@test
def expired_hash_never_appears_before_it_is_deleted(srv):
    r = srv.client()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # only readers can hide it now
    create_indexes(r)
    r.hset("u:1", mapping={"email": "a@x", "country": "US", "status": "active", "score": "1",
                           "name": "n1"})
    r.hset("u:2", mapping={"email": "b@x", "country": "US", "status": "active", "score": "2",
                           "name": "n2"})
    r.pexpire("u:1", 30)
    time.sleep(0.08)
    assert r.execute_command("IDX.RANGE", "cs", "EQ", "US", "active") == [b"u:2"]
    assert r.execute_command("IDX.RANGE", "email", "EQ", "a@x") == []
    # The value of an expired hash is free for a new holder ...
    r.hset("u:3", mapping={"email": "a@x"})
    assert r.execute_command("IDX.RANGE", "email", "EQ", "a@x") == [b"u:3"]
    # ... and deleting the expired hash later leaves the new holder alone.
    r.delete("u:1")
    assert r.execute_command("IDX.RANGE", "email", "EQ", "a@x") == [b"u:3"]
    assert r.execute_command("IDX.CHECK") == []


@test
def big_hashes_are_indexed_like_small_ones(srv):
    # Past hash-max-listpack-entries (512) fields or 8 KiB a hash is stored
    # field by field; the index must not notice.
    r = srv.client()
    create_indexes(r)
    extra = {"f%d" % i: "x" * 20 for i in range(600)}
    r.hset("u:1", mapping=dict(extra, email="a@x", country="US", status="active", score="2",
                               name="n1"))
    r.hset("u:2", mapping={"email": "b@x", "country": "US", "status": "active", "score": "1",
                           "name": "n2", "bio": "y" * 9000})
    assert r.execute_command("IDX.RANGE", "cs", "EQ", "US", "active") == [b"u:2", b"u:1"]
    got = r.execute_command("IDX.RANGE", "top", "LIMIT", 0, 1, "HASHES")
    assert got[0] == b"u:1" and len(got[1]) == 2 * 605, len(got[1])
    got = r.execute_command("IDX.RANGE", "top", "VALUES", 3, "f599", "email", "bio")
    assert got == [b"u:1", [b"x" * 20, b"a@x", None], b"u:2", [None, b"b@x", b"y" * 9000]], got
    r.hset("u:1", "score", "0.5")
    r.hdel("u:2", "status")
    assert "UNIQUE" in str(pytest_raises(lambda: r.hset("u:2", "email", "a@x")))
    r.rename("u:1", "u:3")
    r.expire("u:3", 1000)
    assert r.execute_command("IDX.RANGE", "cs") == [b"u:3"]
    assert r.execute_command("IDX.RANGE", "email") == [b"u:3", b"u:2"]
    assert r.execute_command("IDX.CHECK") == []


def pytest_raises(fn):
    try:
        fn()
    except redis.ResponseError as e:
        return e
    raise AssertionError("no error")


@test
def ttl_change_rewrites_entries_whose_fields_did_not_change(srv):
    # The hook skips encoding an index none of whose fields changed; the
    # entry's value still carries the hash's expiry and must follow it.
    r = srv.client()
    create_indexes(r)
    r.hset("u:1", mapping={"email": "a@x", "country": "US", "status": "active", "score": "1",
                           "name": "n1"})
    r.hset("u:1", "bio", "hello")  # no schema field changed
    assert r.execute_command("IDX.RANGE", "cs", "EQ", "US", "active") == [b"u:1"]
    r.expire("u:1", 1000)
    assert r.execute_command("IDX.CHECK") == []
    r.hset("u:1", "bio", "again")  # unchanged fields, the TTL kept
    assert r.execute_command("IDX.CHECK") == []
    r.persist("u:1")
    assert r.execute_command("IDX.CHECK") == []
    r.hset("u:1", mapping={"bio": "x", "score": "2"})  # one index changes, the others not
    assert r.execute_command("IDX.RANGE", "top", "LIMIT", 0, 1) == [b"u:1"]
    assert r.execute_command("IDX.RANGE", "cs", "EQ", "US", "active", 2) == [b"u:1"]
    assert r.execute_command("IDX.RANGE", "cs", "EQ", "US", "active", 1) == []
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    r.pexpire("u:1", 30)
    r.hset("u:1", "bio", "y")
    time.sleep(0.08)
    assert r.execute_command("IDX.RANGE", "email", "EQ", "a@x") == []
    assert r.execute_command("IDX.RANGE", "cs") == []
    assert r.execute_command("IDX.CHECK") == []


@test
def resp3_hashes_reply_is_a_map(srv):
    r = srv.client()
    create_indexes(r)
    r.hset("u:1", mapping={"email": "a@x", "country": "US", "status": "active", "score": "1",
                           "name": "n1"})
    _, out = srv.cli("-3", "IDX.RANGE", "cs", "EQ", "US", "HASHES")
    assert "u:1" in out and "email" in out and "a@x" in out, out
    _, out = srv.cli("-3", "IDX.RANGE", "cs", "EQ", "US", "FIELDS", "1", "score")
    assert "score" in out and "email" not in out, out
    c = srv.raw()
    c.command("HELLO", "3")
    c.command("IDX.RANGE", "cs", "EQ", "US", "VALUES", "2", "email", "nosuch")
    assert c.last_raw == b"%1\r\n$3\r\nu:1\r\n*2\r\n$3\r\na@x\r\n_\r\n", c.last_raw


@test
def flushdb_empties_indexes_but_keeps_definitions(srv):
    r = srv.client()
    create_indexes(r)
    r.hset("u:1", mapping={"email": "a@x", "country": "US", "status": "active", "score": "1",
                           "name": "n1"})
    r1 = srv.client(db=1)
    create_indexes(r1)
    r1.hset("u:9", mapping={"email": "a@x"})
    r.flushdb()
    assert r.execute_command("IDX.RANGE", "email") == []
    assert r.execute_command("IDX.RANGE", "cs") == []
    assert r1.execute_command("IDX.RANGE", "email") == [b"u:9"]  # other dbs keep theirs
    r.hset("u:2", mapping={"email": "a@x"})
    assert r.execute_command("IDX.RANGE", "email", "EQ", "a@x") == [b"u:2"]
    assert r.execute_command("IDX.CHECK") == []
    r.flushall()
    assert r1.execute_command("IDX.RANGE", "email") == []
    assert r.execute_command("IDX.RANGE", "email") == []
    assert sorted(r1.execute_command("IDX.LIST")) == sorted(n.encode() for n in INDEXES)


if __name__ == "__main__":
    main()
