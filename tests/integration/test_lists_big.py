"""test_lists_big.py -- a list far larger than the caches: 1M items
(STRATA_BIG_ITEMS) stay in the engine, not in the server's memory (RSS
within the caches' size while written and once only read), reads and
writes in the middle are point operations, and DEL, RENAME and expiry of
it cost one range delete or one record move, not a walk. (What each
operation costs in engine reads and writes is counted exactly in
tests/unit/ks_list_test.c.)

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, test, main

N = int(os.environ.get("STRATA_BIG_ITEMS", "1000000"))
CACHES_MB = {"cache_size": 8, "row_cache_size": 0, "write_buffer_size": 4}
CACHES = CACHES_MB["cache_size"] + CACHES_MB["row_cache_size"] + CACHES_MB["write_buffer_size"]
# 1M items of 64 bytes are 64 MB of values (Redis holds about 80 MB for
# this list): a copy in memory would be well over either bound.
ITEM = 64
RSS_WRITING_MB = CACHES + CACHES_MB["write_buffer_size"] + 48
RSS_READING_MB = CACHES + 16


def rss_mb(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def item(i):
    return (b"i%08d" % i).ljust(ITEM, b".")


def fill_list(r, key, n, batch=1000):
    p = r.pipeline(transaction=False)
    for i in range(0, n, batch):
        p.execute_command("RPUSH", key, *[item(j) for j in range(i, min(n, i + batch))])
        if (i // batch) % 50 == 49:
            p.execute()
    p.execute()


def timed(fn):
    t = time.time()
    out = fn()
    return out, time.time() - t


@test
def million_item_list_stays_on_disk_and_goes_in_one_step():
    srv = Server(**{k: "%dmb" % v for k, v in CACHES_MB.items()}).start()
    try:
        r = srv.client()
        fill_list(r, "big", N)
        assert r.llen("big") == N
        assert rss_mb(srv) <= RSS_WRITING_MB, "RSS %d MB > %d MB" % (rss_mb(srv), RSS_WRITING_MB)
        srv.restart()
        r = srv.client()
        assert r.llen("big") == N
        for i in range(0, N, N // 1000):
            assert r.lindex("big", i) == item(i)
        assert r.lindex("big", -1) == item(N - 1) and r.lindex("big", N) is None
        assert rss_mb(srv) <= RSS_READING_MB, "RSS %d MB > %d MB" % (rss_mb(srv), RSS_READING_MB)
        mid = N // 2
        assert r.lset("big", mid, "middle") and r.lindex("big", mid) == b"middle"
        assert r.lrange("big", mid - 1, mid + 1) == [item(mid - 1), b"middle", item(mid + 1)]
        assert r.lpush("big", "head") == N + 1 and r.rpop("big") == item(N - 1)
        assert r.lpos("big", "middle", maxlen=10) is None  # MAXLEN bounds the walk
        assert r.ltrim("big", 1, -2) and r.llen("big") == N - 2
        assert r.lindex("big", 0) == item(0)
        _, t = timed(lambda: r.rename("big", "moved"))
        assert t < 0.5 and r.llen("moved") == N - 2, t
        deleted, t = timed(lambda: r.delete("moved"))
        assert deleted == 1 and t < 0.5, t
        assert r.dbsize() == 0 and r.llen("moved") == 0
        # A recreated key never sees the old items.
        r.rpush("moved", "fresh")
        assert r.lrange("moved", 0, -1) == [b"fresh"]
    finally:
        srv.cleanup()


@test
def big_list_expires_in_one_step_and_restart_keeps_nothing_of_it():
    srv = Server().start()
    try:
        r = srv.client()
        fill_list(r, "l", 50000)
        r.pexpire("l", 200)
        time.sleep(0.6)  # the active cycle deletes it: one range delete
        assert r.dbsize() == 0 and r.llen("l") == 0
        srv.restart()
        r = srv.client()
        assert r.dbsize() == 0 and r.llen("l") == 0 and r.rpush("l", "x") == 1
        assert r.lrange("l", 0, -1) == [b"x"]
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
