"""test_ft.py -- FT.* through redis-py's own search API (redis.commands.search)
against a brute-force model.

Random HSET/HDEL/DEL/EXPIRE/RENAME operations over hashes covered by one FT
index (TAG with a separator, a case-sensitive TAG, a SORTABLE NUMERIC that is
sometimes not a number, TEXT fields with a WEIGHT and NOSTEM, two prefixes),
checked every few operations with random queries of the query language
(tags with escapes and prefixes, numeric ranges, terms with stems, prefixes,
exact phrases, field modifiers, intersection, union, negation, PARAMS),
sorted and paged; the result sets and orders are compared with the model's
evaluation. Then aggregates, restart, SIGKILL under writes with appendfsync
always (every index must equal a rebuild: IDX.CHECK is empty), expiry and
DEL, background builds with progress, and the replies redis-py parses.
"""
import os
import random
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, test, main  # noqa: E402

import redis  # noqa: E402
from redis.commands.search import reducers  # noqa: E402
from redis.commands.search.aggregation import AggregateRequest, Asc, Desc  # noqa: E402
from redis.commands.search.field import NumericField, TagField, TextField  # noqa: E402
from redis.commands.search.indexDefinition import IndexDefinition  # noqa: E402
from redis.commands.search.query import NumericFilter, Query  # noqa: E402

SEED = int(os.environ.get("FT_SEED", "1515"))
OPS = int(os.environ.get("FT_OPS", "1500"))

WORDS = ["apple", "banana", "cherry", "delta", "echo", "running", "runs", "run", "hello", "the", "of"]
STEM = {"apple": "appl", "cherry": "cherri", "running": "run", "runs": "run"}  # Snowball English
STOP = {"the", "of"}
TAGS = ["red", "Blue", "green pea", "x.y", "multi word", "pre1", "pre2"]
CATS = ["A", "a", "B", "b c"]
NUMS = ["-2.5", "0", "1", "3", "10", "1e2", "-0", "7.25"]
KEYS = ["d:%d" % i for i in range(120)] + ["e:%d" % i for i in range(40)] + ["x:%d" % i for i in range(5)]
TEXT_FIELDS = ["title", "body", "plain"]


def tokens(text):
    """RediSearch's default tokenizer (ASCII): words, lower-cased, stop words out."""
    return [w for w in re.split(r"[^a-z0-9_]+", text.lower()) if w and w not in STOP]


def q_expansions(q):
    """Terms a query term matches: itself, +stem and stem (or +term)."""
    if len(q) >= 4 and q in STEM:
        return {q, "+" + STEM[q], STEM[q]}
    return {q, "+" + q}


def doc_terms(text, stems):
    out = set()
    for t in tokens(text):
        out.add(t)
        if stems and len(t) >= 4 and t in STEM:
            out.add("+" + STEM[t])
    return out


def make_index(r):
    r.ft("idx").create_index(
        [TagField("tag", separator=","), TagField("cat", case_sensitive=True),
         NumericField("num", sortable=True), TextField("title"), TextField("body", weight=2.0),
         TextField("plain", no_stem=True)],
        definition=IndexDefinition(prefix=["d:", "e:"]))


def shortlex(k):
    return (len(k), k)


class Model:
    def __init__(self):
        self.h = {}  # key -> {field: value} (str)

    def docs(self):
        """Covered hashes that index (a NUMERIC that is not a number fails the doc)."""
        out = {}
        for k, f in self.h.items():
            if not (k.startswith("d:") or k.startswith("e:")):
                continue
            if "num" in f and num_of(f["num"]) is None:
                continue
            out[k] = f
        return out


def num_of(v):
    try:
        return float(v)
    except ValueError:
        return None


def tags_of(f, field):
    """TAG values: split at ',', trimmed; lower-cased unless CASESENSITIVE (cat)."""
    if field not in f:
        return set()
    parts = [p.strip(" \t") for p in f[field].split(",")]
    return {p if field == "cat" else p.lower() for p in parts if p}


# ---- random queries: (query string, model predicate) ---------------------------

def esc_tag(v):
    return "".join("\\" + c if c in ",.<>{}[]\"':;!@#$%^&*()-+=~|/\\" else c for c in v)


class Gen:
    def __init__(self, rnd):
        self.rnd = rnd
        self.text = False  # a text leaf outside a negation: results come by score
        self.last_text = False

    def leaf(self):
        rnd = self.rnd
        kind = rnd.randrange(9)
        self.last_text = kind in (4, 5, 6, 7)
        if kind == 0:
            return "*", lambda k, f: True
        if kind in (1, 2):
            field = "tag" if kind == 1 else "cat"
            vals = rnd.sample(TAGS if field == "tag" else CATS, rnd.randint(1, 2))
            parts, preds = [], []
            for v in vals:
                if field == "tag" and v.startswith("pre") and rnd.random() < 0.5:
                    parts.append("pre*")
                    preds.append(lambda ts: any(t.startswith("pre") for t in ts))
                    continue
                shown = v if rnd.random() < 0.5 else v.upper() if field == "tag" else v
                parts.append(esc_tag(shown) if rnd.random() < 0.5 or "," in shown else shown.replace(".", "\\."))
                want = v.lower() if field == "tag" else v
                preds.append(lambda ts, want=want: want in ts)
            return "@%s:{%s}" % (field, " | ".join(parts)), \
                lambda k, f, field=field, preds=preds: any(p(tags_of(f, field)) for p in preds)
        if kind == 3:
            lo, hi = sorted(rnd.choice([-3, 0, 1, 3, 7.25, 10, 100]) for _ in range(2))
            le, he = rnd.random() < 0.3, rnd.random() < 0.3
            los = "-inf" if rnd.random() < 0.1 else ("(" if le else "") + repr(lo)
            his = "+inf" if rnd.random() < 0.1 else ("(" if he else "") + repr(hi)

            def pred(k, f, los=los, his=his, lo=lo, hi=hi, le=le, he=he):
                x = num_of(f["num"]) if "num" in f else None
                if x is None:
                    return False
                ok_lo = los == "-inf" or (x > lo if le else x >= lo)
                ok_hi = his == "+inf" or (x < hi if he else x <= hi)
                return ok_lo and ok_hi
            return "@num:[%s %s]" % (los, his), pred
        if kind in (4, 5, 6):
            w = rnd.choice([w for w in WORDS if w not in STOP])
            fields = rnd.choice([None, ["title"], ["body", "plain"], ["plain"]])
            exp = q_expansions(w)
            prefix = kind == 6
            if prefix:
                w = w[:rnd.randint(2, 3)]

            def pred(k, f, fields=fields, exp=exp, prefix=prefix, w=w):
                for fl in fields or TEXT_FIELDS:
                    if fl not in f:
                        continue
                    terms = doc_terms(f[fl], fl != "plain")
                    if prefix and any(t.startswith(w) for t in terms):
                        return True
                    if not prefix and terms & exp:
                        return True
                return False
            shown = (w.upper() if rnd.random() < 0.3 else w) + ("*" if prefix else "")
            return ("@%s:%s" % ("|".join(fields), shown) if fields else shown), pred
        if kind == 7:
            a, b = rnd.choice(WORDS[:8]), rnd.choice(WORDS[:8])

            def pred(k, f, a=a, b=b):
                for fl in TEXT_FIELDS:
                    if fl in f:
                        t = tokens(f[fl])
                        if any(t[i] == a and t[i + 1] == b for i in range(len(t) - 1)):
                            return True
                return False
            return '"%s %s"' % (a, b), pred
        # PARAMS
        v = rnd.choice(CATS)
        return "@cat:{$p}", lambda k, f, v=v: v in tags_of(f, "cat"), {"p": v}

    def tree(self, depth=0):
        rnd = self.rnd
        if depth >= 2 or rnd.random() < 0.4:
            lf = self.leaf()
            self.text = self.text or self.last_text
            return lf if len(lf) == 3 else (lf[0], lf[1], {})
        op = rnd.randrange(3)
        if op == 2:
            saved = self.text
            s, p, prm = self.tree(depth + 1)
            self.text = saved
            return "-(%s)" % s, lambda k, f, p=p: not p(k, f), prm
        a, b = self.tree(depth + 1), self.tree(depth + 1)
        prm = dict(a[2])
        prm.update(b[2])
        if "p" in a[2] and "p" in b[2] and a[2]["p"] != b[2]["p"]:
            return a
        if op == 0:
            return "(%s) (%s)" % (a[0], b[0]), lambda k, f, a=a, b=b: a[1](k, f) and b[1](k, f), prm
        return "(%s) | (%s)" % (a[0], b[0]), lambda k, f, a=a, b=b: a[1](k, f) or b[1](k, f), prm


def expected(model, pred):
    return {k for k, f in model.docs().items() if pred(k, f)}


def check_query(r, model, q, pred, params, rnd, log, scored=True):
    docs = model.docs()
    want = {k for k, f in docs.items() if pred(k, f)}
    mode = rnd.randrange(3)
    query = Query(q).no_content().paging(0, 1000)
    if mode == 1:
        query = Query(q).no_content().sort_by("num", asc=rnd.random() < 0.5).paging(0, 1000)
    res = r.ft("idx").search(query, query_params=params or None)
    got = [d.id for d in res.docs]
    assert res.total == len(want), "%s: total %d, model %d (%s)" % (q, res.total, len(want), log)
    assert set(got) == want, "%s: got %s, model %s; extra %s missing %s" % (
        q, len(got), len(want), sorted(set(got) - want)[:5], sorted(want - set(got))[:5])
    if mode == 1:
        asc = query._sortby.args[1] == "ASC"
        with_v = sorted((k for k in want if "num" in docs[k]),
                        key=lambda k: ((num_of(docs[k]["num"]) or 0.0) * (1 if asc else -1), shortlex(k)))
        without = sorted((k for k in want if "num" not in docs[k]), key=shortlex)
        assert got == with_v + without, "%s sorted %s: order differs\n%s\n%s" % (
            q, "asc" if asc else "desc", got[:10], (with_v + without)[:10])
        if want:  # a page of the same order
            off = rnd.randrange(len(want))
            page = r.ft("idx").search(Query(q).no_content().sort_by("num", asc=asc).paging(off, 7),
                                      query_params=params or None)
            assert [d.id for d in page.docs] == got[off:off + 7], "%s: page at %d" % (q, off)
    elif mode == 0 and not scored:
        assert got == sorted(want), "%s: not in key order" % q


def random_value(rnd, field):
    if field == "tag":
        vals = rnd.sample(TAGS, rnd.randint(1, 3))
        return ",".join((" " if rnd.random() < 0.3 else "") + (v.upper() if rnd.random() < 0.2 else v)
                        for v in vals)
    if field == "cat":
        return rnd.choice(CATS)
    if field == "num":
        return rnd.choice(NUMS) if rnd.random() < 0.92 else rnd.choice(["abc", "1x", ""])
    n = rnd.randint(0, 6)
    seps = [" ", ", ", ". ", "-", "  ", "; "]
    out = ""
    for _ in range(n):
        w = rnd.choice(WORDS)
        out += (w.capitalize() if rnd.random() < 0.2 else w) + rnd.choice(seps)
    return out


def random_op(r, model, rnd):
    k = rnd.choice(KEYS)
    x = rnd.random()
    if x < 0.55:
        fields = {f: random_value(rnd, f) for f in ["tag", "cat", "num", "title", "body", "plain"]
                  if rnd.random() < 0.7}
        if not fields:
            fields = {"title": "hello"}
        r.hset(k, mapping=fields)
        model.h.setdefault(k, {}).update(fields)
    elif x < 0.7 and k in model.h:
        f = rnd.choice(list(model.h[k]))
        r.hdel(k, f)
        del model.h[k][f]
        if not model.h[k]:
            del model.h[k]
    elif x < 0.8:
        r.delete(k)
        model.h.pop(k, None)
    elif x < 0.9 and k in model.h:
        dst = rnd.choice(KEYS)
        r.rename(k, dst)
        model.h[dst] = model.h.pop(k)
    elif k in model.h:
        r.expire(k, 1000)  # a TTL rewrites every entry's expiry
        if rnd.random() < 0.3:
            r.persist(k)


def wait_indexed(r, name="idx", timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = r.ft(name).info()
        if str(info["indexing"]) == "0":
            return info
        time.sleep(0.05)
    raise AssertionError("index still building")


def check_all(r, model, rnd, nq, log):
    for _ in range(nq):
        g = Gen(rnd)
        q, pred, params = g.tree()
        check_query(r, model, q, pred, params, rnd, log, g.text)
    assert r.execute_command("IDX.CHECK") == [], r.execute_command("IDX.CHECK")[:5]


@test
def ft_queries_match_model_under_random_writes(srv):
    r = srv.client(decode_responses=True)
    rnd = random.Random(SEED)
    model = Model()
    for _ in range(200):  # some data before the index: the build covers it
        random_op(r, model, rnd)
    make_index(r)
    wait_indexed(r)
    check_all(r, model, rnd, 30, "after build")
    for i in range(OPS):
        random_op(r, model, rnd)
        if i % 25 == 0:
            check_all(r, model, rnd, 3, "op %d" % i)
    assert int(r.ft("idx").info()["num_docs"]) == len(model.docs())
    srv.restart()
    r = srv.client(decode_responses=True)
    check_all(r, model, rnd, 40, "after restart")


def agg_model(model, pred):
    groups = {}
    for k, f in model.docs().items():
        if not pred(k, f):
            continue
        g = groups.setdefault(f.get("cat"), {"n": 0, "s": 0.0, "vals": set()})
        g["n"] += 1
        if "num" in f:
            g["s"] += num_of(f["num"])
        if "tag" in f:
            g["vals"].add(f["tag"])
    return groups


@test
def ft_aggregate_groupby_reducers_match_model(srv):
    r = srv.client(decode_responses=True)
    rnd = random.Random(SEED + 1)
    model = Model()
    make_index(r)
    for _ in range(600):
        random_op(r, model, rnd)
    for _ in range(15):
        q, pred, params = Gen(rnd).tree()
        req = AggregateRequest(q).group_by(
            "@cat", reducers.count().alias("n"), reducers.sum("@num").alias("s"),
            reducers.count_distinct("@tag").alias("d"))
        res = r.ft("idx").aggregate(req, query_params=params or None)
        want = agg_model(model, pred)
        got = {}
        for row in res.rows:
            d = dict(zip(row[::2], row[1::2]))
            got[d.get("cat")] = d
        assert set(got) == set(want), "%s: groups %s vs %s" % (q, sorted(map(str, got)), sorted(map(str, want)))
        for g, w in want.items():
            assert int(got[g]["n"]) == w["n"], (q, g, got[g], w)
            assert abs(float(got[g]["s"]) - w["s"]) < 1e-9, (q, g, got[g], w)
            assert int(got[g]["d"]) == len(w["vals"]), (q, g, got[g], w)
    # SORTBY, APPLY, FILTER, LIMIT, LOAD
    req = (AggregateRequest("*").load("@num").apply(twice="@num * 2")
           .filter("@twice >= 0").sort_by(Desc("@twice"), max=5))
    rows = [dict(zip(x[::2], x[1::2])) for x in r.ft("idx").aggregate(req).rows]
    vals = sorted((num_of(f["num"]) * 2 for f in model.docs().values() if "num" in f and num_of(f["num"]) * 2 >= 0),
                  reverse=True)[:5]
    assert [float(x["twice"]) for x in rows] == vals, (rows, vals)
    req = AggregateRequest("*").group_by("@cat", reducers.count().alias("n")).sort_by(Asc("@n"), Asc("@cat")).limit(0, 2)
    rows = [dict(zip(x[::2], x[1::2])) for x in r.ft("idx").aggregate(req).rows]
    counts = sorted((g["n"], str(c)) for c, g in agg_model(model, lambda k, f: True).items())
    assert [int(x["n"]) for x in rows] == [n for n, _ in counts[:2]], (rows, counts)
    rows = r.execute_command("FT.AGGREGATE", "idx", "*", "GROUPBY", "0", "REDUCE", "MIN", "1", "@num", "AS", "lo",
                             "REDUCE", "MAX", "1", "@num", "AS", "hi", "REDUCE", "AVG", "1", "@num", "AS", "avg",
                             "APPLY", "upper(format('%s-%s', @lo, @hi))", "AS", "span")
    nums = [num_of(f["num"]) for f in model.docs().values() if "num" in f]
    d = dict(zip(rows[1][::2], rows[1][1::2]))
    assert float(d["lo"]) == min(nums) and float(d["hi"]) == max(nums), d
    assert abs(float(d["avg"]) - sum(nums) / len(nums)) < 1e-9, d


@test
def ft_search_replies_as_redis_py_parses_them(srv):
    r = srv.client(decode_responses=True)
    make_index(r)
    r.hset("d:1", mapping={"title": "Hello running running world", "tag": "red,Blue", "cat": "A",
                           "num": "5"})
    r.hset("d:2", mapping={"title": "hello", "body": "hello hello", "tag": "blue", "num": "7"})
    r.hset("e:3", mapping={"title": "other", "cat": "a", "num": "-1"})
    r.hset("x:4", mapping={"title": "hello"})  # not under a prefix
    res = r.ft("idx").search(Query("hello").with_scores().return_fields("title", "num"))
    assert res.total == 2 and [d.id for d in res.docs] == ["d:2", "d:1"], res
    # d:2: title tf 1 + body tf 2*2 (WEIGHT 2) = 5 = maxfreq; idf = logb(1 + 3/2) = 1
    # d:1: maxfreq 2 (running, +run), hello once: 1 * 1 / 2
    assert res.docs[0].score == 1.0 and res.docs[1].score == 0.5, res
    assert res.docs[0].title == "hello" and res.docs[0].num == "7" and not hasattr(res.docs[0], "tag")
    res = r.ft("idx").search(Query("@tag:{blue}").sort_by("num", asc=False).paging(0, 1))
    assert res.total == 2 and res.docs[0].id == "d:2" and res.docs[0].tag == "blue"
    assert [d.id for d in r.ft("idx").search(Query("hello").limit_ids("d:1", "e:3")).docs] == ["d:1"]
    assert [d.id for d in r.ft("idx").search(Query("hello").add_filter(NumericFilter("num", 6, 8))).docs] == ["d:2"]
    assert [d.id for d in r.ft("idx").search(Query("hello").limit_fields("body")).docs] == ["d:2"]
    assert r.ft("idx").search(Query("runs")).total == 1  # the stem of running
    assert r.ft("idx").search(Query("runs").verbatim()).total == 0
    info = r.ft("idx").info()
    assert info["index_name"] == "idx" and info["num_docs"] == "3" and str(info["indexing"]) == "0"
    assert float(info["percent_indexed"]) == 1.0
    assert r.execute_command("FT._LIST") == ["idx"]
    assert sorted(r.ft("idx").tagvals("tag")) == ["blue", "red"]
    assert "INTERSECT" in r.ft("idx").explain("hello @num:[1 2]")
    raw = srv.raw()
    assert raw.command("COMMAND", "INFO", "ft.search")[0][0] == b"ft.search"  # redis-om checks it
    raw.close()
    assert r.ft("idx").config_get("MINPREFIX") == {"MINPREFIX": "2"}
    r.ft("idx").aliasadd("al")
    assert r.ft("al").search("hello").total == 2
    r.ft("idx").aliasdel("al")
    try:
        r.ft("nosuch").info()
        raise AssertionError("FT.INFO of a missing index")
    except redis.ResponseError as e:
        assert str(e) == "Unknown Index name", e
    r.ft("idx").alter_schema_add([TagField("extra")])
    wait_indexed(r)
    r.hset("d:1", "extra", "yes")
    assert [d.id for d in r.ft("idx").search("@extra:{yes}").docs] == ["d:1"]
    assert r.execute_command("IDX.CHECK") == []
    raw = srv.raw()
    raw.command("HELLO", "3")
    rep = raw.command("FT.SEARCH", "idx", "@cat:{A}", "WITHSCORES")
    assert rep[b"total_results"] == 1 and rep[b"results"][0][b"id"] == b"d:1", rep
    assert rep[b"results"][0][b"extra_attributes"][b"cat"] == b"A", rep
    raw.close()
    r.ft("idx").dropindex(delete_documents=False)  # FT.DROP idx KEEPDOCS
    assert r.execute_command("FT._LIST") == [] and r.exists("d:1")
    make_index(r)
    wait_indexed(r)
    r.execute_command("FT.DROPINDEX", "idx", "KEEPDOCS")
    assert r.exists("d:1")
    make_index(r)
    wait_indexed(r)
    r.execute_command("FT.DROPINDEX", "idx", "DD")
    assert not r.exists("d:1") and not r.exists("e:3") and r.exists("x:4")


@test
def ft_deleted_and_expired_hashes_never_appear(srv):
    r = srv.client(decode_responses=True)
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    make_index(r)
    for i in range(50):
        r.hset("d:%d" % i, mapping={"tag": "t", "num": str(i), "title": "word%d hello" % i})
    # 1 s: d:1 and d:2 must still be live for the two counts below, which
    # a loaded machine can delay by more than a few hundred ms.
    t0 = time.time()
    r.pexpire("d:1", 1000)
    r.pexpire("d:2", 1000)
    r.delete("d:3")
    r.hdel("d:4", "tag")
    # totals counted now are cached; the expiry must still take them out
    assert r.ft("idx").search(Query("@tag:{t}").paging(0, 0)).total == 48
    assert r.ft("idx").search(Query("@num:[0 10]").sort_by("num").paging(0, 2)).total == 10
    time.sleep(max(0.0, t0 + 1.1 - time.time()))
    for q in ["*", "@tag:{t}", "@num:[0 10]", "hello", "word1"]:
        ids = {d.id for d in r.ft("idx").search(Query(q).no_content().paging(0, 100)).docs}
        assert not ids & {"d:1", "d:2", "d:3"}, (q, ids)
    assert r.ft("idx").search(Query("@tag:{t}").no_content().paging(0, 100)).total == 46
    assert r.ft("idx").search(Query("@num:[0 10]").sort_by("num").paging(0, 2)).total == 8
    assert r.ft("idx").search(Query("*").paging(0, 0)).total == 47
    assert r.ft("idx").search(Query("*").sort_by("num", asc=False).paging(0, 0)).total == 47
    assert r.execute_command("IDX.CHECK") == []


@test
def ft_build_in_background_reports_progress():
    srv = Server().start()
    try:
        r = srv.client(decode_responses=True)
        p = r.pipeline(transaction=False)
        for i in range(40000):
            p.hset("d:%d" % i, mapping={"tag": "t%d" % (i % 7), "num": str(i), "title": "w%d" % (i % 13)})
            if i % 2000 == 1999:
                p.execute()
        p.execute()
        make_index(r)
        info = r.ft("idx").info()
        assert str(info["indexing"]) == "1" and float(info["percent_indexed"]) < 1, info
        r.hset("d:39999", "tag", "late")  # written while building: kept
        info = wait_indexed(r)
        assert info["num_docs"] == "40000" and float(info["percent_indexed"]) == 1.0
        assert r.ft("idx").search("@tag:{late}").total == 1
        assert r.ft("idx").search(Query("@tag:{t3}").paging(0, 0)).total == len(
            [i for i in range(39999) if i % 7 == 3])
        res = r.ft("idx").search(Query("*").no_content().paging(5000000, 10))
        assert res.total == 40000 and res.docs == []
        assert r.execute_command("IDX.CHECK") == []
    finally:
        srv.cleanup()


@test
def ft_index_equals_rebuild_after_sigkill_under_writes():
    srv = Server(appendfsync="always").start()
    try:
        r = srv.client(decode_responses=True)
        make_index(r)
        rnd = random.Random(SEED + 2)
        acked = {}
        inflight = [None]  # the one write not acknowledged yet
        stop = threading.Event()

        def writer():
            c = srv.client(decode_responses=True)
            i = 0
            try:
                while not stop.is_set():
                    k = "d:%d" % rnd.randrange(300)
                    inflight[0] = k
                    fields = {"tag": random_value(rnd, "tag"), "num": rnd.choice(NUMS),
                              "title": random_value(rnd, "title")}
                    if rnd.random() < 0.2:
                        c.delete(k)
                        acked[k] = None
                    else:
                        c.hset(k, mapping=fields)
                        acked.setdefault(k, {})
                        if acked[k] is None:
                            acked[k] = {}
                        acked[k].update(fields)
                    inflight[0] = None
                    i += 1
            except (redis.ConnectionError, ConnectionResetError, redis.TimeoutError):
                pass
        t = threading.Thread(target=writer)
        t.start()
        time.sleep(1.5)
        srv.kill9()
        stop.set()
        t.join()
        srv.start()
        r = srv.client(decode_responses=True)
        assert r.execute_command("IDX.CHECK") == []
        model = Model()  # what the server holds after recovery ...
        for k in r.scan_iter("d:*", count=1000):
            model.h[k] = r.hgetall(k)
        for k, v in acked.items():  # ... which includes every acknowledged write
            if k != inflight[0]:
                assert (v is None) == (k not in model.h), (k, v)
        rnd2 = random.Random(7)
        for _ in range(30):
            q, pred, params = Gen(rnd2).tree()
            check_query(r, model, q, pred, params, rnd2, "after SIGKILL")
        # the index equals one built from scratch over the recovered hashes
        r.ft("idx2").create_index(
            [TagField("tag", separator=","), TagField("cat", case_sensitive=True),
             NumericField("num", sortable=True), TextField("title"), TextField("body", weight=2.0),
             TextField("plain", no_stem=True)], definition=IndexDefinition(prefix=["d:", "e:"]))
        wait_indexed(r, "idx2")
        for q in ["*", "@tag:{red|blue}", "hello", "@num:[0 5]", "run*"]:
            a = [d.id for d in r.ft("idx").search(Query(q).no_content().paging(0, 1000)).docs]
            b = [d.id for d in r.ft("idx2").search(Query(q).no_content().paging(0, 1000)).docs]
            assert a == b, (q, len(a), len(b))
    finally:
        srv.cleanup()


@test
def ft_errors_are_redisearch_texts(srv):
    r = srv.client(decode_responses=True)
    make_index(r)

    def err(*args):
        try:
            r.execute_command(*args)
        except redis.ResponseError as e:
            return str(e)
        raise AssertionError("no error for %s" % (args,))

    def eq(a, b):
        assert a == b, (a, b)
    eq(err("FT.CREATE", "idx", "SCHEMA", "t", "TEXT"), "Index already exists")
    eq(err("FT.SEARCH", "nosuch", "*"), "nosuch: no such index")
    eq(err("FT.DROPINDEX", "nosuch"), "Unknown Index name")
    assert err("FT.SEARCH", "idx", "@nosuch:x").startswith("Unknown field")
    assert err("FT.SEARCH", "idx", "(a").startswith("Syntax error")
    assert "not supported" in err("FT.CREATE", "j", "ON", "JSON", "SCHEMA", "t", "TEXT")
    assert "not supported" in err("FT.CREATE", "g", "SCHEMA", "loc", "GEO")
    eq(err("FT.SEARCH", "idx", "$x", "PARAMS", "2", "y", "1"), "No such parameter `x`")
    assert "too deep" in err("FT.AGGREGATE", "idx", "*", "APPLY", "^".join(["1"] * 5000), "AS", "x")
    assert "too deep" in err("FT.AGGREGATE", "idx", "*", "APPLY", "-" * 5000 + "1", "AS", "x")
    assert err("FT.SEARCH", "idx", "(" * 5000).startswith("Syntax error")
    assert err("FT.SEARCH", "idx", "-" * 5000 + "a").startswith("Syntax error")
    # a failed FT.CREATE writes nothing (S1)
    assert r.execute_command("FT._LIST") == ["idx"]


@test
def ft_composite_plan_equals_general_plan(srv):
    """TAG = v AND TAG = w [AND range] SORTBY the next NUMERIC field: answered
    from the composite while every document has one value per field, from the
    per-field entries once one does not; both must match the model."""
    r = srv.client(decode_responses=True)
    r.execute_command("FT.CREATE", "cs", "ON", "HASH", "PREFIX", "1", "u:", "SCHEMA", "country", "TAG",
                      "status", "TAG", "uid", "NUMERIC", "SORTABLE")
    rnd = random.Random(SEED + 3)
    docs = {}
    for i in range(400):
        k = "u:%d" % rnd.randrange(300)
        docs[k] = {"country": rnd.choice(["US", "DE", "fr"]), "status": rnd.choice(["a", "b"]),
                   "uid": str(rnd.randrange(-50, 50))}
        r.hset(k, mapping=docs[k])

    def check(label):
        for _ in range(40):
            c, st = rnd.choice(["US", "de", "FR"]), rnd.choice(["a", "b"])
            lo, hi = sorted(rnd.randrange(-60, 60) for _ in range(2))
            ranged = rnd.random() < 0.5
            desc = rnd.random() < 0.5
            off, num = rnd.randrange(0, 30), rnd.randrange(0, 20)
            q = "@country:{%s} @status:{%s}" % (c, st) + (" @uid:[(%d %d]" % (lo, hi) if ranged else "")
            res = r.execute_command("FT.SEARCH", "cs", q, "SORTBY", "uid", "DESC" if desc else "ASC",
                                    "NOCONTENT", "LIMIT", off, num)
            want = [k for k, f in docs.items()
                    if c.lower() in {t.strip().lower() for t in f["country"].split(",")} and f["status"] == st
                    and (not ranged or lo < int(f["uid"]) <= hi)]
            want.sort(key=lambda k: ((-1 if desc else 1) * int(docs[k]["uid"]), shortlex(k)))
            assert res[0] == len(want), (label, q, res[0], len(want))
            assert res[1:] == want[off:off + num], (label, q, desc, off, num, res[1:], want[off:off + num])
    check("composite")
    docs["u:multi"] = {"country": "US,DE", "status": "a", "uid": "1"}  # outside the composite
    r.hset("u:multi", mapping=docs["u:multi"])
    check("general")
    r.delete("u:multi")
    del docs["u:multi"]
    check("composite again")
    assert r.execute_command("IDX.CHECK") == []


if __name__ == "__main__":
    main()
