"""big_fixtures.py -- what the tests of collections far larger than the
caches share (test_big_values.py, test_zsets_big.py, ...): a server with
small caches, its RSS, pipelined fills, what a command costs (INFO engine)
and the one-step RENAME/DEL check."""
import time

from harness import ASAN, Server

CACHES_MB = {"cache_size": 8, "row_cache_size": 0, "write_buffer_size": 4}
CACHES = CACHES_MB["cache_size"] + CACHES_MB["row_cache_size"] + CACHES_MB["write_buffer_size"]


def small_cache_server():
    """A Server (not started) whose caches add up to CACHES MB."""
    return Server(**{k: "%dmb" % v for k, v in CACHES_MB.items()})


def rss_mb(srv):
    """The server's resident set in MB; 0 under AddressSanitizer, whose
    shadow memory and quarantine are not the server's."""
    if ASAN:
        return 0
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def wait_engine_at_rest(r, timeout=60):
    """Waits until no memtable waits for its flush and no compaction runs
    or is due (INFO engine), so what the server holds is its steady state,
    not a background job's buffers."""
    deadline = time.time() + timeout
    while True:
        e = r.info("engine")
        if not (e["immutable_memtables"] or e["compactions_running"] or e["compaction_pending"]):
            return
        assert time.time() < deadline, "engine still busy after %ds: %r" % (timeout, e)
        time.sleep(0.05)


def assert_rss_within(srv, limit_mb, r=None):
    """The server's RSS is at most limit_mb once the allocator has handed
    back the pages it keeps after a free (MEMORY PURGE: jemalloc returns
    them only after its decay time, so a transient peak would otherwise
    count for seconds). With a client r it first waits for the engine to
    be at rest."""
    c = r or srv.client()
    if r is not None:
        wait_engine_at_rest(r)
    assert c.execute_command("MEMORY", "PURGE") in (b"OK", "OK", True)
    got = rss_mb(srv)
    assert got <= limit_mb, "RSS %d MB > %d MB" % (got, limit_mb)


def fill(r, command, key, n, args_of, batch=1000):
    """Sends command key *args_of(range) for n items in batches of batch,
    pipelined 50 batches at a time."""
    p = r.pipeline(transaction=False)
    for i in range(0, n, batch):
        p.execute_command(command, key, *args_of(range(i, min(n, i + batch))))
        if (i // batch) % 50 == 49:
            p.execute()
    p.execute()


# What a one-step command may cost, in member iterator steps and in bytes
# of user writes (INFO engine): RENAME moves one record and DEL writes one
# range delete (0 steps, under 120 bytes measured); a walk of the members
# costs a step per member and a write per member ~30 bytes, millions here.
# Counts, not seconds: a loaded machine or ASan slows a command, a walk
# makes it cost more.
ONE_STEP_STEPS = 16
ONE_STEP_BYTES = 4096


def cost_of(r, fn):
    """fn()'s result and what it cost the server: (out, member iterator
    steps, bytes of user writes). r must be idle otherwise."""
    e0 = r.info("engine")
    out = fn()
    e1 = r.info("engine")
    return (out, int(e1["member_iter_steps"]) - int(e0["member_iter_steps"]),
            int(e1["bytes_written_user"]) - int(e0["bytes_written_user"]))


def assert_rename_and_del_in_one_step(r, key, size_of, n):
    """RENAME key moves n items and DEL removes them, each one record move
    or one range delete, not a walk; a recreated key then starts empty.
    size_of(key) is the type's count command (SCARD, LLEN, ZCARD ...)."""
    _, steps, written = cost_of(r, lambda: r.rename(key, "moved"))
    assert steps <= ONE_STEP_STEPS and written <= ONE_STEP_BYTES, ("RENAME", steps, written)
    assert size_of("moved") == n
    deleted, steps, written = cost_of(r, lambda: r.delete("moved"))
    assert deleted == 1, deleted
    assert steps <= ONE_STEP_STEPS and written <= ONE_STEP_BYTES, ("DEL", steps, written)
    assert r.dbsize() == 0 and size_of("moved") == 0
