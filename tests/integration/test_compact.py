"""test_compact.py -- DEBUG COMPACT: a full compaction through the server
(flush, then every level into the bottom one). Overwritten and deleted
versions are gone afterwards (the data on disk shrinks), every live key
still reads the same before and after a restart, and wrong arity is an
error."""
import hashlib
import os

import redis

from harness import main, test


def engine_info(c):
    return c.info("engine")


def pad(i, rnd):  # incompressible, so sizes on disk follow the versions kept
    return hashlib.sha256(b"%d:%d" % (i, rnd)).hexdigest()


def fill(c, n, rnd):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("k:%d" % i, "v%d-%d-%s" % (i, rnd, pad(i, rnd)))
        p.hset("h:%d" % i, mapping={"a": "%d" % rnd, "b": pad(-i, rnd)})
    p.execute()


@test
def compact_drops_superseded_versions_and_keeps_live_data(srv):
    c = srv.client()
    n = 6000
    for rnd in range(3):  # three versions of every key, each round in a table of its
        fill(c, n, rnd)  # own (three level-0 files: below the compaction trigger)
        c.save()
    p = c.pipeline(transaction=False)
    for i in range(0, n, 2):
        p.delete("k:%d" % i)
    p.execute()
    before = int(engine_info(c)["disk_usage"])
    assert c.execute_command("DEBUG", "COMPACT") == b"OK"
    info = engine_info(c)
    assert info["level0"]["files"] == 0, info["level0"]
    after = int(info["disk_usage"])
    assert after * 2 < before, (before, after)  # two of three versions (and half the keys) gone

    def check(c):
        assert c.dbsize() == n + n // 2
        for i in range(n):
            want = None if i % 2 == 0 else b"v%d-2-%s" % (i, pad(i, 2).encode())
            assert c.get("k:%d" % i) == want, i
            assert c.hget("h:%d" % i, "a") == b"2", i

    check(c)
    srv.restart()
    check(srv.client())


def table_files(srv):
    d = os.path.join(srv.dir, "data")
    return {f for f in os.listdir(d) if f.endswith(".sst")}


@test
def compact_deletes_its_inputs_after_multi_key_reads(srv):
    # IDX.RANGE ... HASHES and MGET read through one pinned view of the
    # tables; the command must not keep it, or the compacted files stay on
    # disk (and retired memtables in memory) until the next such read.
    c = srv.client()
    c.execute_command("IDX.CREATE", "byn", "PREFIX", "h:", "SCHEMA", "a", "NUMERIC")
    fill(c, 2000, 0)
    c.save()
    old = table_files(srv)
    assert old
    hits = c.execute_command("IDX.RANGE", "byn", "LIMIT", "0", "10", "HASHES")
    assert len(hits) == 20, hits
    assert c.mget("k:1", "k:2")[0].startswith(b"v1-0-")
    assert c.execute_command("DEBUG", "COMPACT") == b"OK"
    left = old & table_files(srv)
    assert not left, "compacted tables still on disk: %s" % sorted(left)


@test
def compact_takes_no_arguments(srv):
    c = srv.client()
    try:
        c.execute_command("DEBUG", "COMPACT", "now")
    except redis.ResponseError as e:
        assert "subcommand" in str(e).lower(), e
    else:
        raise AssertionError("DEBUG COMPACT with an argument succeeded")


if __name__ == "__main__":
    main()
