"""test_hyperloglog.py -- PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST
against a real redis-server: the same counts for the same elements (1M of
them, and their union after PFMERGE), byte-identical values so that a value
GET from one server and SET on the other reads the same, the sparse-to-dense
promotion at hll-sparse-max-bytes, and the error texts for strings that are
not (valid) HyperLogLogs.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main
from redis_compare import RealRedis, compare_with_redis


@test
def hll_commands_and_errors_match_redis(srv):
    compare_with_redis(srv, """
pfadd h
get h
pfcount h
get h
pfadd h a b c
pfadd h a b c
pfadd h ""
pfcount h
get h
pfcount h nokey
pfcount nokey
pfcount nokey nokey2
pfmerge m h
pfmerge m
pfmerge fresh
get fresh
pfcount m
pfdebug encoding m
pfdebug decode m
pfdebug getreg nokey
pfdebug foo m
pfdebug foo nokey
pfdebug todense m
pfdebug todense m
pfdebug encoding m
pfdebug decode m
pfcount m
get m
set str foo
pfadd str a
pfcount str
pfcount h str
pfmerge str h
pfmerge h str
pfdebug encoding str
set hyll HYLL
pfcount hyll
set hyll HYLL\\x02abcdefghijklmnopqrstu
pfcount hyll
hset hh f v
pfadd hh a
pfcount hh
pfcount h hh
pfmerge hh h
pfmerge h hh
pfdebug encoding hh
pfadd
pfdebug encoding
pfselftest x
""")


def fill(c, key, elements, batch=1000):
    p = c.pipeline(transaction=False)
    for i in range(0, len(elements), batch):
        p.pfadd(key, *elements[i:i + batch])
    p.execute()


@test
def pfcount_of_a_million_elements_and_their_merge_equal_redis(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        rnd = random.Random(1)
        a = [b"%x" % rnd.getrandbits(64) for _ in range(1000000)]
        b = a[-100000:] + [b"%x" % rnd.getrandbits(64) for _ in range(200000)]
        for c in (s, r):
            fill(c, "a", a)
            fill(c, "b", b)
            c.pfmerge("u", "a", "b")
        counts = [(c.pfcount("a"), c.pfcount("b"), c.pfcount("a", "b"), c.pfcount("u"))
                  for c in (s, r)]
        assert counts[0] == counts[1], counts
        assert abs(counts[0][2] - 1200000) < 1200000 * 0.02, counts
        for k in ("a", "b", "u"):
            assert s.get(k) == r.get(k), k
    finally:
        ref.close()


@test
def hll_values_trade_between_redis_and_strata_through_get_and_set(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        rnd = random.Random(5)
        for n in (1, 10, 300, 2000, 20000):
            els = [b"%f" % rnd.random() for _ in range(n)]
            r.delete("x")
            r.pfadd("x", *els)
            s.delete("x")
            s.pfadd("x", *els)
            assert s.get("x") == r.get("x"), n  # built byte for byte alike
            # Redis's value on strata and strata's on Redis, then both grow.
            s.set("from_redis", r.get("x"))
            r.set("from_strata", s.get("x"))
            assert s.pfcount("from_redis") == r.pfcount("x") == r.pfcount("from_strata")
            more = [b"more%d" % i for i in range(50)]
            s.pfadd("from_redis", *more)
            r.pfadd("from_strata", *more)
            assert s.get("from_redis") == r.get("from_strata"), n
            assert s.pfcount("from_redis") == r.pfcount("from_strata")
            assert s.execute_command("PFDEBUG", "ENCODING", "from_redis") == \
                r.execute_command("PFDEBUG", "ENCODING", "from_strata")
    finally:
        ref.close()


@test
def sparse_turns_dense_at_hll_sparse_max_bytes(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        for limit in ("3000", "100", "0"):
            for c in (s, r):
                c.config_set("hll-sparse-max-bytes", limit)
                c.delete("h")
            assert s.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": limit}
            for i in range(0, 4000, 20):
                els = [b"el%d" % j for j in range(i, i + 20)]
                a, b = s.pfadd("h", *els), r.pfadd("h", *els)
                assert a == b
                assert s.strlen("h") == r.strlen("h"), (limit, i)
                if s.strlen("h") != 12304:
                    assert s.strlen("h") <= max(int(limit), 18)
            assert s.get("h") == r.get("h") and s.strlen("h") == 12304, limit
    finally:
        ref.close()


@test
def pfcount_refreshes_the_cached_count_and_pfadd_invalidates_it(srv):
    r = srv.client()
    r.pfadd("h", "a", "b", "c")
    assert r.getrange("h", 15, 15) == b"\x80"
    assert r.pfcount("h") == 3
    assert r.getrange("h", 15, 15) == b"\x00" and r.getrange("h", 8, 8) == b"\x03"
    r.pfadd("h", "a")
    assert r.getrange("h", 15, 15) == b"\x00"
    # A valid cached count is believed, as Redis does.
    r.setrange("h", 8, b"\x2a")
    assert r.pfcount("h") == 42
    srv.restart()
    assert srv.client().pfcount("h") == 42


@test
def corrupt_sparse_values_are_reported_not_crashed_on(srv):
    r = srv.client()
    rnd = random.Random(11)
    for i in range(300):
        r.delete("h")
        r.pfadd("h", *[b"%d" % rnd.randrange(10 ** 6) for _ in range(rnd.randint(1, 200))])
        for _ in range(rnd.randint(1, 4)):
            r.setrange("h", rnd.randrange(r.strlen("h")), bytes([rnd.randrange(256)]))
        for cmd in (("PFCOUNT", "h"), ("PFCOUNT", "h", "h"), ("PFADD", "h", "zz%d" % i),
                    ("PFMERGE", "m", "h"), ("PFDEBUG", "GETREG", "h")):
            try:
                r.execute_command(*cmd)
            except redis.ResponseError as e:
                assert "INVALIDOBJ" in str(e) or "WRONGTYPE" in str(e), e
    assert r.ping()


if __name__ == "__main__":
    main()
