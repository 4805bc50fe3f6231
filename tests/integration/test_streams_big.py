"""test_streams_big.py -- streams far larger than the caches: 1M XADDs
(STRATA_BIG_ENTRIES) with MAXLEN ~ 1000 keep the stream near 1000 entries
and the server's memory within the caches (trimmed entries leave the
engine, nothing accumulates in memory); a stream of 300k entries stays on disk,
reads of its middle are range reads, and DEL of it is one step. (What the
PEL commands cost on a long history is counted exactly, in engine steps,
in tests/unit/ks_stream_test.c.)

Run with /usr/bin/python3 (python3-redis)."""
import os, shutil, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import ASAN, Server, test, main
from big_fixtures import ONE_STEP_BYTES, ONE_STEP_STEPS, cost_of

N = int(os.environ.get("STRATA_BIG_ENTRIES", "200000" if ASAN else "1000000"))
# The stream DEL removes whole: a third of N shows it as well as N.
N_DEL = int(os.environ.get("STRATA_BIG_DEL_ENTRIES", str(N // 3)))
# redis-benchmark sends whole pipelines of its clients: keep n a multiple.
N, N_DEL = N // 256 * 256, N_DEL // 256 * 256
BENCH = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"
CACHES_MB = {"cache_size": 8, "row_cache_size": 0, "write_buffer_size": 4}
CACHES = sum(CACHES_MB.values())
# 1M entries of ~80 bytes are 80 MB: a copy in memory breaks the bound.
RSS_MB = CACHES + CACHES_MB["write_buffer_size"] + 48


def rss_mb(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def xadd_many(srv, n, trim=(), sample=None):
    """n XADDs with `*` ids from redis-benchmark (pipelined, 4 clients);
    sample() runs every 0.2 s meanwhile."""
    cmd = [BENCH, "-p", str(srv.port), "-n", str(n), "-P", "64", "-c", "4", "-q",
           "XADD", "s"] + [str(a) for a in trim] + ["*", "f", "v" * 64]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while p.poll() is None:
        if sample:
            sample()
        time.sleep(0.2)
    assert p.returncode == 0, p.returncode


@test
def million_xadds_with_maxlen_approx_keep_length_and_memory_bounded():
    srv = Server(**{k: "%dmb" % v for k, v in CACHES_MB.items()}).start()
    try:
        peak = [0]

        def sample():
            peak[0] = max(peak[0], rss_mb(srv))

        xadd_many(srv, N, ("MAXLEN", "~", 1000), sample=sample)
        r = srv.client()
        n = r.xlen("s")
        assert 1000 <= n < 1100, n  # whole nodes of 100 go
        ids = [e[0] for e in r.xrange("s")]
        assert len(ids) == n and ids == sorted(ids, key=lambda i: tuple(map(int, i.split(b"-"))))
        assert r.xinfo_stream("s")["entries-added"] == N
        peak[0] = max(peak[0], rss_mb(srv))
        # (under ASan the sanitizer's own memory makes RSS meaningless)
        assert ASAN or peak[0] <= RSS_MB, "RSS %d MB > %d MB" % (peak[0], RSS_MB)
    finally:
        srv.cleanup()


@test
def big_stream_stays_on_disk_and_deletes_in_one_step():
    srv = Server(**{k: "%dmb" % v for k, v in CACHES_MB.items()}).start()
    try:
        xadd_many(srv, N_DEL)
        r = srv.client()
        assert r.xlen("s") == N_DEL
        assert ASAN or rss_mb(srv) <= RSS_MB, "RSS %d MB > %d MB" % (rss_mb(srv), RSS_MB)
        first, last = r.xrange("s", count=1)[0][0], r.xrevrange("s", count=1)[0][0]
        mid = (int(first.split(b"-")[0]) + int(last.split(b"-")[0])) // 2
        got = r.xrange("s", "%d" % mid, "+", count=3)
        assert len(got) == 3 and got[0][1] == {b"f": b"v" * 64}
        assert r.xinfo_stream("s")["last-generated-id"] == last
        deleted, steps, written = cost_of(r, lambda: r.delete("s"))
        assert deleted == 1 and steps <= ONE_STEP_STEPS and written <= ONE_STEP_BYTES, (steps, written)
        assert r.xlen("s") == 0 and r.dbsize() == 0
        r.xadd("s", {"f": "fresh"}, id="1-0")  # a new stream sees nothing of the old one
        assert r.xrange("s") == [(b"1-0", {b"f": b"fresh"})]
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
