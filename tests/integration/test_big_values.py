"""test_big_values.py -- collections far larger than the caches: a set of
1M members (STRATA_BIG_MEMBERS) stays in the engine, not in the server's
memory (RSS within the caches' size), and DEL, RENAME, expiry and a
recreated key cost one range delete or one record move, not a walk.

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ASAN, Server, test, main

# Under AddressSanitizer the server is slower and its RSS is the
# sanitizer's (shadow memory, quarantine): a smaller set, no RSS checks.
N = int(os.environ.get("STRATA_BIG_MEMBERS", "200000" if ASAN else "1000000"))
CACHES_MB = {"cache_size": 8, "row_cache_size": 0, "write_buffer_size": 4}
CACHES = CACHES_MB["cache_size"] + CACHES_MB["row_cache_size"] + CACHES_MB["write_buffer_size"]
# While the set is written: the caches, a frozen memtable being flushed and
# compaction's buffers. Once it is only read (after a restart): the caches
# and the server's baseline (about 6 MB idle), with room for a compaction
# the restart may still be running on a loaded machine. A copy of 1M members in memory would take
# well over either (Redis needs about 60 MB for this set).
RSS_WRITING_MB = CACHES + CACHES_MB["write_buffer_size"] + 48
RSS_READING_MB = CACHES + 20


def rss_mb(srv):
    if ASAN:
        return 0
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def fill_set(r, key, n, batch=1000):
    p = r.pipeline(transaction=False)
    for i in range(0, n, batch):
        p.execute_command("SADD", key, *[b"m%08d" % j for j in range(i, min(n, i + batch))])
        if (i // batch) % 50 == 49:
            p.execute()
    p.execute()


def timed(fn):
    t = time.time()
    out = fn()
    return out, time.time() - t


@test
def million_member_set_stays_on_disk_and_goes_in_one_step():
    srv = Server(**{k: "%dmb" % v for k, v in CACHES_MB.items()}).start()
    try:
        r = srv.client()
        fill_set(r, "big", N)
        assert r.scard("big") == N
        assert rss_mb(srv) <= RSS_WRITING_MB, "RSS %d MB > %d MB" % (rss_mb(srv), RSS_WRITING_MB)
        srv.restart()
        r = srv.client()
        assert r.scard("big") == N
        for i in range(0, N, N // 2000):
            assert r.sismember("big", b"m%08d" % i)
        assert not r.sismember("big", "nope")
        assert rss_mb(srv) <= RSS_READING_MB, "RSS %d MB > %d MB" % (rss_mb(srv), RSS_READING_MB)
        assert r.object("encoding", "big") == b"hashtable"
        popped, t = timed(lambda: r.spop("big", 10))
        assert len(set(popped)) == 10 and r.scard("big") == N - 10 and t < 1, t
        cursor, some = r.sscan("big", 0, count=100)
        assert cursor != 0 and 50 <= len(some) <= 100
        _, t = timed(lambda: r.rename("big", "moved"))
        assert t < 0.5 and r.scard("moved") == N - 10, t
        deleted, t = timed(lambda: r.delete("moved"))
        assert deleted == 1 and t < 0.5, t
        assert r.dbsize() == 0 and r.scard("moved") == 0
        # A recreated key never sees the old members.
        r.sadd("moved", "fresh")
        assert r.smembers("moved") == {b"fresh"}
    finally:
        srv.cleanup()


@test
def big_set_expires_in_one_step_and_restart_keeps_nothing_of_it():
    srv = Server().start()
    try:
        r = srv.client()
        fill_set(r, "s", 50000)
        r.pexpire("s", 200)
        time.sleep(0.6)  # the active cycle deletes it: one range delete
        assert r.dbsize() == 0 and r.scard("s") == 0
        srv.restart()
        r = srv.client()
        assert r.dbsize() == 0 and r.scard("s") == 0 and r.sadd("s", "x") == 1
        assert r.smembers("s") == {b"x"}
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
