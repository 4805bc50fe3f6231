"""test_big_values.py -- collections far larger than the caches: a set of
1M members (STRATA_BIG_MEMBERS) and a list of 1M items (STRATA_BIG_ITEMS)
stay in the engine, not in the server's memory (RSS within the caches'
size), reads and writes in the middle of the list are point operations,
and DEL, RENAME, expiry and a recreated key cost one range delete or one
record move, not a walk. (What each list operation costs in engine reads
and writes is counted exactly in tests/unit/ks_list_test.c.)

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ASAN, Server, test, main, wait_for
from big_fixtures import (CACHES, CACHES_MB, ONE_STEP_BYTES, ONE_STEP_STEPS,
                          assert_rename_and_del_in_one_step, assert_rss_within,
                          cost_of, fill, small_cache_server)

# Under AddressSanitizer the server is slower and its RSS is the
# sanitizer's (shadow memory, quarantine): a smaller set, no RSS checks.
N = int(os.environ.get("STRATA_BIG_MEMBERS", "200000" if ASAN else "1000000"))
N_ITEMS = int(os.environ.get("STRATA_BIG_ITEMS", "100000" if ASAN else "1000000"))
ITEM = 64  # bytes: 1M items are 64 MB of values (Redis holds about 80 MB for them)
# While the set is written: the caches, a frozen memtable being flushed and
# compaction's buffers (and the zstd dictionary a compaction trains for a
# bottom-level table: ZDICT's tables, ~8 MB while it trains). Once it is
# only read (after a restart, measured with the engine at rest and the
# allocator's freed pages purged): the caches and the server's baseline
# (about 6 MB idle; 10-12 MB measured in all). A copy of 1M members in
# memory would take well over either (Redis needs about 60 MB for this set).
RSS_WRITING_MB = CACHES + CACHES_MB["write_buffer_size"] + 48
RSS_READING_MB = CACHES + 16
# SPOP 10 reads around one random point of the hash order (83 member
# iterator steps measured): a walk of the set would step over N members.
SPOP_STEPS = 2000


def fill_set(r, key, n):
    fill(r, "SADD", key, n, lambda js: [b"m%08d" % j for j in js])


def item(i):
    return (b"i%08d" % i).ljust(ITEM, b".")


def fill_list(r, key, n):
    fill(r, "RPUSH", key, n, lambda js: [item(j) for j in js])


@test
def million_member_set_stays_on_disk_and_goes_in_one_step():
    srv = small_cache_server().start()
    try:
        r = srv.client()
        fill_set(r, "big", N)
        assert r.scard("big") == N
        assert_rss_within(srv, RSS_WRITING_MB)
        srv.restart()
        r = srv.client()
        assert r.scard("big") == N
        for i in range(0, N, N // 2000):
            assert r.sismember("big", b"m%08d" % i)
        assert not r.sismember("big", "nope")
        assert_rss_within(srv, RSS_READING_MB, r)
        assert r.object("encoding", "big") == b"hashtable"
        popped, steps, written = cost_of(r, lambda: r.spop("big", 10))
        assert len(set(popped)) == 10 and r.scard("big") == N - 10
        assert steps <= SPOP_STEPS and written <= 10 * 64, (steps, written)
        cursor, some = r.sscan("big", 0, count=100)
        assert cursor != 0 and 50 <= len(some) <= 100
        assert_rename_and_del_in_one_step(r, "big", r.scard, N - 10)
        # A recreated key never sees the old members.
        r.sadd("moved", "fresh")
        assert r.smembers("moved") == {b"fresh"}
    finally:
        srv.cleanup()


@test
def million_item_list_stays_on_disk_and_goes_in_one_step():
    n = N_ITEMS
    srv = small_cache_server().start()
    try:
        r = srv.client()
        fill_list(r, "big", n)
        assert r.llen("big") == n
        assert_rss_within(srv, RSS_WRITING_MB)
        srv.restart()
        r = srv.client()
        assert r.llen("big") == n
        for i in range(0, n, n // 1000):
            assert r.lindex("big", i) == item(i)
        assert r.lindex("big", -1) == item(n - 1) and r.lindex("big", n) is None
        assert_rss_within(srv, RSS_READING_MB, r)
        assert r.object("encoding", "big") == b"quicklist"
        mid = n // 2
        assert r.lset("big", mid, "middle") and r.lindex("big", mid) == b"middle"
        assert r.lrange("big", mid - 1, mid + 1) == [item(mid - 1), b"middle", item(mid + 1)]
        assert r.lpush("big", "head") == n + 1 and r.rpop("big") == item(n - 1)
        assert r.lpos("big", "middle", maxlen=10) is None  # MAXLEN bounds the walk
        assert r.ltrim("big", 1, -2) and r.llen("big") == n - 2
        assert r.lindex("big", 0) == item(0)
        assert_rename_and_del_in_one_step(r, "big", r.llen, n - 2)
        # A recreated key never sees the old items.
        r.rpush("moved", "fresh")
        assert r.lrange("moved", 0, -1) == [b"fresh"]
    finally:
        srv.cleanup()


@test
def big_values_expire_in_one_step_and_restart_keeps_nothing_of_them():
    srv = Server().start()
    try:
        r = srv.client()
        fill_set(r, "s", 50000)
        fill_list(r, "l", 50000)
        # The active cycle deletes them (DBSIZE counts a key until it is
        # removed), each with one range delete: polled, since how soon the
        # cycle runs depends on the machine's load.
        _, steps, written = cost_of(r, lambda: (r.pexpire("s", 200), r.pexpire("l", 200),
                                                wait_for(lambda: r.dbsize() == 0, 60, "expiry")))
        assert steps <= 2 * ONE_STEP_STEPS and written <= 2 * ONE_STEP_BYTES, (steps, written)
        assert r.scard("s") == 0 and r.llen("l") == 0
        srv.restart()
        r = srv.client()
        assert r.dbsize() == 0 and r.scard("s") == 0 and r.llen("l") == 0
        assert r.sadd("s", "x") == 1 and r.rpush("l", "x") == 1
        assert r.smembers("s") == {b"x"} and r.lrange("l", 0, -1) == [b"x"]
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
