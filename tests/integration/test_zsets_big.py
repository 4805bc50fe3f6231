"""test_zsets_big.py -- a sorted set of 1M members (STRATA_BIG_MEMBERS)
far larger than the caches: it stays in the engine, not in the server's
memory (RSS within the caches' size); DEL and RENAME are one range delete
or one record move; and the rank reads -- ZRANK near the end, ZRANGE by
rank deep inside, ZCOUNT, ZRANGEBYSCORE with a large LIMIT offset, random
members -- cost a bounded number of iterator steps through the rank blocks
(INFO engine member_iter_steps), not a walk of the order, once a rank read
has asked for the blocks (ENCODING.md KS-Z5: a zset filled by ZADD has
none; a rank read walks from the nearer end, and one that walks far gets
them built by the zset's next command).

Run with /usr/bin/python3 (python3-redis)."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ASAN, test, main
from big_fixtures import (CACHES, CACHES_MB, assert_rename_and_del_in_one_step, assert_rss_within,
                          cost_of, fill, small_cache_server)

N = int(os.environ.get("STRATA_BIG_MEMBERS", "300000" if ASAN else "1000000"))
# Writing: the caches, a frozen memtable being flushed, compaction's
# buffers and the tables' filters and indexes. Reading after a restart,
# measured with the engine at rest (the restart leaves L0 to compact, and a
# compaction of the whole zset holds its filter's key hashes and its inputs'
# read-ahead windows, ~15 MB, while it runs): the caches, the filters and
# indexes, the server's baseline (24-25 MB measured). A copy of the
# zset in memory would take far more (Redis needs about 100 MB for it).
RSS_WRITING_MB = CACHES + CACHES_MB["write_buffer_size"] + 56
RSS_READING_MB = CACHES + 24
# A rank read descends at most height levels of at most 2B = 128 blocks
# and walks at most 128 order entries: height 3 at this size.
RANK_STEPS = 4 * 128 + 16


def score_of(j):
    return (j * 7919) % 1000003


def fill_zset(r, key, n):
    fill(r, "ZADD", key, n, lambda js: [x for j in js for x in (score_of(j), b"m%08d" % j)])


def steps_of(r, fn):
    s0 = int(r.info("engine")["member_iter_steps"])
    out = fn()
    return out, int(r.info("engine")["member_iter_steps"]) - s0


@test
def million_member_zset_stays_on_disk_and_reads_ranks_in_bounded_steps():
    srv = small_cache_server().start()
    try:
        r = srv.client()
        fill_zset(r, "big", N)
        assert r.zcard("big") == N
        assert_rss_within(srv, RSS_WRITING_MB)
        srv.restart()
        r = srv.client()
        assert r.zcard("big") == N
        # The order by (score, member), computed here.
        order = sorted(range(N), key=lambda j: (score_of(j), b"m%08d" % j))
        rank = {j: i for i, j in enumerate(order[-1000:], N - 1000)}
        last = order[-3]
        got, steps = steps_of(r, lambda: r.zrank("big", b"m%08d" % last))
        assert got == rank[last] and steps <= RANK_STEPS, (got, rank[last], steps)
        got, steps = steps_of(r, lambda: r.zrevrank("big", b"m%08d" % order[-900]))
        assert got == 899 and steps <= 2 * 900 + 8, (got, steps)  # a walk from both ends
        r.zscore("big", b"m%08d" % last)  # a command reading the zset: it builds the blocks
        got, steps = steps_of(r, lambda: r.zrevrank("big", b"m%08d" % order[-900]))
        assert got == 899 and steps <= RANK_STEPS, (got, steps)
        deep = N - 700
        got, steps = steps_of(r, lambda: r.zrange("big", deep, deep + 9, withscores=True))
        want = [(b"m%08d" % j, float(score_of(j))) for j in order[deep:deep + 10]]
        assert got == want and steps <= RANK_STEPS + 10, (got[:2], want[:2], steps)
        lo, hi = 1000, 900000
        got, steps = steps_of(r, lambda: r.zcount("big", lo, hi))
        assert got == sum(1 for j in range(N) if lo <= score_of(j) <= hi), got
        assert steps <= 2 * RANK_STEPS + 8, steps
        got, steps = steps_of(r, lambda: r.zrangebyscore("big", "-inf", "+inf", start=N - 5, num=2))
        assert got == [b"m%08d" % j for j in order[N - 5:N - 3]], got
        assert steps <= 3 * RANK_STEPS, steps
        got, steps = steps_of(r, lambda: r.zrandmember("big", 5))
        assert len(set(got)) == 5 and steps <= 5 * (RANK_STEPS + 8), steps
        assert_rss_within(srv, RSS_READING_MB, r)
        popped, steps, written = cost_of(r, lambda: r.zpopmin("big", 3))
        assert [m for m, _ in popped] == [b"m%08d" % j for j in order[:3]]
        assert steps <= RANK_STEPS and written <= 3 * 128, (steps, written)
        assert_rename_and_del_in_one_step(r, "big", r.zcard, N - 3)
        r.zadd("moved", {"fresh": 1})  # a recreated key never sees the old members
        assert r.zrange("moved", 0, -1, withscores=True) == [(b"fresh", 1.0)]
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
