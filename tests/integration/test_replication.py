"""test_replication.py -- primary/replica replication (src/server/REPLICATION.md):
a full sync and the stream give every replica the primary's data key for key
(every type, indexes, MULTI/EXEC, expiry, FLUSHDB); a restarted replica
resyncs partially, one that fell out of the backlog fully, one killed during
its full sync starts over; READONLY, WAIT, min-replicas-to-write, ROLE,
INFO replication, promotion; BACKUP makes a directory a server starts from."""
import os
import random
import re
import shutil
import signal
import tempfile
import time

import redis

from harness import Server, main, test
from repl_helpers import caught_up, info, replicate, wait_for


READ_OF = {"string": lambda p, k: p.get(k), "hash": lambda p, k: p.hgetall(k),
           "set": lambda p, k: p.smembers(k), "list": lambda p, k: p.lrange(k, 0, -1),
           "zset": lambda p, k: p.zrange(k, 0, -1, withscores=True)}


def snapshot(c):
    """Every key of every db with its type, value and whether it has a TTL.
    Pipelined per SCAN batch: a read per key and round trip made 30000 keys
    take 10-20 s on a loaded machine."""
    out = {}
    kw = dict(c.connection_pool.connection_kwargs)
    for db in range(16):
        kw["db"] = db  # a client per db: a pipeline takes its own connection
        d = redis.Redis(**kw)
        cursor = None
        while cursor != 0:
            cursor, keys = d.scan(cursor or 0, count=1000)
            p = d.pipeline(transaction=False)
            for k in keys:
                p.type(k)
            types = [t.decode() for t in p.execute()]
            p = d.pipeline(transaction=False)
            for k, t in zip(keys, types):
                READ_OF.get(t, lambda p, k: p.exists(k))(p, k)
                p.ttl(k)
            got = p.execute()
            for i, (k, t) in enumerate(zip(keys, types)):
                if t == "none":
                    continue  # expired between SCAN and TYPE
                v = got[2 * i] if t in READ_OF else None
                out[(db, k)] = (t, v, got[2 * i + 1] > 0)
        out[("dbsize", db)] = d.dbsize()
        d.close()
    return out


def assert_same(m, r, timeout=30):
    """Equal once caught up; the primary's active expiry may delete keys
    between the two reads, so a difference is looked at again."""
    deadline = time.time() + timeout
    while True:
        wait_for(lambda: caught_up(m, [r]), timeout, "catch-up")
        a, b = snapshot(m.client()), snapshot(r.client())
        missing = [k for k in a if k not in b][:5]
        extra = [k for k in b if k not in a][:5]
        diff = [k for k in a if k in b and a[k] != b[k]][:5]
        if not missing and not extra and not diff:
            return
        assert time.time() < deadline, (missing, extra, diff)
        time.sleep(0.2)


def random_writes(c, rnd, n, expiring=True):
    for i in range(n):
        op = rnd.randrange(12)
        k = "k%d" % rnd.randrange(300)
        try:
            if op == 0:
                c.set(k, rnd.randbytes(rnd.randrange(1, 200)))
            elif op == 1:
                c.hset("user:%d" % rnd.randrange(200),
                       mapping={"email": "u%d@x" % rnd.randrange(10**6),
                                "country": rnd.choice(["US", "FR", "DE"]),
                                "score": rnd.randrange(1000)})
            elif op == 2:
                c.sadd("s%d" % rnd.randrange(20), *[rnd.randrange(1000) for _ in range(5)])
            elif op == 3:
                c.delete(k)
            elif op == 4:
                c.expire(k, 1000)
            elif op == 5:
                p = c.pipeline(transaction=True)
                p.incr("counter")
                p.hset("big", "f%d" % rnd.randrange(2000), rnd.randrange(10**9))
                p.spop("s%d" % rnd.randrange(20))
                p.execute()
            elif op == 6:
                c.append(k, "xy")
            elif op == 7:
                c.setbit("bits", rnd.randrange(10000), 1)
            elif op == 8:
                c.pfadd("hll", *[rnd.randrange(10**6) for _ in range(5)])
            elif op == 9:
                c.hdel("user:%d" % rnd.randrange(200), "country")
            elif op == 10 and expiring:
                c.set("short:%d" % i, 1, px=1)  # expires at once: removed on the primary
            elif op == 11:
                c.rename(k, "r" + k)
        except redis.ResponseError:
            pass  # WRONGTYPE, no such key: nothing written (S1)


@test
def replicas_equal_the_primary_after_random_writes_of_every_type():
    m, r1, r2 = Server().start(), Server().start(), Server().start()
    try:
        mc = m.client()
        rnd = random.Random(7)
        mc.execute_command("IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE", "SCHEMA", "email", "TAG")
        random_writes(mc, rnd, 1500)  # before the full sync
        replicate(m, r1, r2)
        mc.execute_command("IDX.CREATE", "cs", "PREFIX", "user:", "SCHEMA", "country", "TAG",
                           "score", "NUMERIC")
        random_writes(mc, rnd, 1500)  # streamed
        mc.select(3)
        mc.set("in-db-3", "x")
        mc.flushdb()
        mc.set("after-flush", "y")
        mc.select(0)
        mc.sadd("bigset", *range(2000))
        mc.hset("bighash", mapping={"f%d" % i: i for i in range(1000)})
        wait_for(lambda: caught_up(m, [r1, r2]), 30, "catch-up")
        time.sleep(0.1)
        for r in (r1, r2):
            assert_same(m, r)
            rc = r.client()
            assert rc.execute_command("IDX.CHECK") == []
            assert (sorted(rc.execute_command("IDX.RANGE", "cs", "EQ", "US", "LIMIT", 0, 1000)) ==
                    sorted(mc.execute_command("IDX.RANGE", "cs", "EQ", "US", "LIMIT", 0, 1000)))
            assert rc.execute_command("IDX.LIST") == mc.execute_command("IDX.LIST")
    finally:
        for s in (m, r1, r2):
            s.cleanup()


@test
def primary_builds_no_stream_until_its_first_replica_connects():
    m, r = Server().start(), Server().start()
    try:
        mc = m.client()
        random_writes(mc, random.Random(3), 300)
        i = info(mc)
        # As Redis: no backlog until a replica comes; the offset still moves.
        assert (i["repl_backlog_active"], i["repl_backlog_histlen"]) == (0, 0), i
        assert i["master_repl_offset"] > 0, i
        replicate(m, r)
        random_writes(mc, random.Random(4), 300)
        wait_for(lambda: caught_up(m, [r]), 20, "catch-up")
        j = info(mc)
        assert j["repl_backlog_active"] == 1 and j["repl_backlog_histlen"] > 0, j
        assert j["master_repl_offset"] > i["master_repl_offset"], j
        assert_same(m, r)
    finally:
        m.cleanup()
        r.cleanup()


@test
def restarted_replica_resyncs_partially_and_backlog_loss_means_full_sync():
    m, r = Server(repl_backlog_size="512kb").start(), Server().start()
    try:
        mc = m.client()
        random_writes(mc, random.Random(1), 300)
        replicate(m, r)
        r.kill9()
        random_writes(mc, random.Random(2), 300)  # about 80 KB of stream, under the backlog
        r.settings["replicaof"] = "127.0.0.1 %d" % m.port  # as CONFIG REWRITE keeps it
        r.start()
        wait_for(lambda: caught_up(m, [r]), 20, "partial resync")
        assert "Partial resynchronization request" in open(m.logfile).read()
        assert_same(m, r)
        assert open(m.logfile).read().count("Full resync requested") == 1
        r.stop()
        for i in range(700):  # 700 KB: more than the backlog holds
            mc.set("fill%d" % i, "x" * 1000)
        r.start()
        wait_for(lambda: caught_up(m, [r]), 20, "full resync")
        assert open(m.logfile).read().count("Full resync requested") == 2
        assert_same(m, r)
    finally:
        m.cleanup()
        r.cleanup()


@test
def replica_killed_during_full_sync_starts_the_sync_over():
    m, r = Server().start(), Server().start()
    try:
        mc = m.client()
        p = mc.pipeline(transaction=False)
        for i in range(30000):
            p.set("key:%d" % i, "v" * 100)
        p.execute()
        r.client().replicaof("127.0.0.1", m.port)
        wait_for(lambda: "MASTER <-> REPLICA" in open(r.logfile).read() or
                 info(r.client()).get("master_sync_in_progress") == 1, 20, "sync start")
        r.kill9()
        mc.set("later", "1")
        r.settings["replicaof"] = "127.0.0.1 %d" % m.port
        r.start()
        wait_for(lambda: caught_up(m, [r]), 30, "sync after restart")
        assert_same(m, r)
    finally:
        m.cleanup()
        r.cleanup()


@test
def writes_on_a_replica_get_readonly():
    m, r = Server().start(), Server().start()
    try:
        replicate(m, r)
        rc = r.client()
        for cmd in (("SET", "a", "1"), ("HSET", "h", "f", "v"), ("DEL", "a"), ("FLUSHALL",)):
            try:
                rc.execute_command(*cmd)
                raise AssertionError("no error for %s" % (cmd,))
            except redis.ResponseError as e:
                assert str(e) == "You can't write against a read only replica.", str(e)
        p = rc.pipeline(transaction=True)
        p.set("a", 1)
        try:
            p.execute()
            raise AssertionError("EXEC ran")
        except redis.ResponseError as e:
            assert "EXECABORT" in str(e) or "read only" in str(e), str(e)
        try:
            rc.eval("return redis.call('set', 'a', 1)", 0)
            raise AssertionError("a script wrote on a replica")
        except redis.ResponseError as e:
            assert "You can't write against a read only replica. script: " in str(e), str(e)
        assert rc.eval("return redis.call('get', 'a')", 0) is None  # reads run
        assert rc.get("a") is None and rc.dbsize() == 0
        rc.config_set("replica-read-only", "no")  # Redis allows local writes then
        rc.set("local", "1")
    finally:
        m.cleanup()
        r.cleanup()


@test
def wait_counts_acknowledging_replicas_and_min_replicas_refuses_writes():
    m, r1, r2 = Server().start(), Server().start(), Server().start()
    try:
        mc = m.client()
        assert mc.execute_command("WAIT", 1, 100) == 0
        replicate(m, r1, r2)
        mc.set("a", "1")
        assert mc.execute_command("WAIT", 2, 5000) == 2
        assert r1.client().get("a") == b"1" and r2.client().get("a") == b"1"
        mc.config_set("min-replicas-to-write", 2)
        mc.set("b", "1")
        r2.stop()
        wait_for(lambda: info(mc)["connected_slaves"] == 1, 30, "replica gone")
        try:
            mc.set("c", "1")
            raise AssertionError("write accepted")
        except redis.ResponseError as e:
            assert str(e) == "NOREPLICAS Not enough good replicas to write.", str(e)
        # The one replica left acks within the timeout; the second never
        # does, so WAIT takes all of it. 2 s, not 0.3: a replica held off
        # the CPU on a loaded machine must still ack in time.
        t0 = time.time()
        assert mc.execute_command("WAIT", 2, 2000) == 1
        assert time.time() - t0 >= 1.9
        mc.config_set("min-replicas-to-write", 0)
        mc.set("c", "1")
        i = info(mc)
        assert re.match(r"^\d+$", str(i["slave0"]["offset"]))
        assert i["slave0"]["state"] == "online" and i["slave0"]["port"] == r1.port
        role = mc.execute_command("ROLE")
        assert role[0] == b"master" and role[2][0][1] == str(r1.port).encode()
        rrole = r1.client().execute_command("ROLE")
        assert rrole[0] == b"slave" and rrole[3] == b"connected"
        try:
            r1.client().execute_command("WAIT", 1, 10)
            raise AssertionError("WAIT on a replica")
        except redis.ResponseError as e:
            assert "WAIT cannot be used with replica instances" in str(e)
    finally:
        for s in (m, r1, r2):
            s.cleanup()


@test
def promoted_replica_keeps_its_data_and_the_other_replica_continues():
    m, r1, r2 = Server().start(), Server().start(), Server().start()
    try:
        mc = m.client()
        random_writes(mc, random.Random(3), 500)
        replicate(m, r1, r2)
        old = info(mc)["master_replid"]
        m.kill9()
        c1 = r1.client()
        c1.replicaof("no", "one")
        i = info(c1)
        assert i["role"] == "master" and i["master_replid2"] == old
        c1.set("new-primary", "yes")
        r2.client().replicaof("127.0.0.1", r1.port)
        wait_for(lambda: caught_up(r1, [r2]), 20, "repointed replica")
        assert r2.client().get("new-primary") == b"yes"
        assert "Partial resynchronization request" in open(r1.logfile).read()
        assert_same(r1, r2)
    finally:
        for s in (m, r1, r2):
            s.cleanup()


@test
def backup_directory_restores_every_key_and_index():
    m = Server().start()
    tmp = tempfile.mkdtemp(prefix="strata-backup-")
    try:
        mc = m.client()
        mc.execute_command("IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE", "SCHEMA", "email", "TAG")
        random_writes(mc, random.Random(5), 2000, expiring=False)  # DBSIZE stays put
        before = snapshot(mc)
        dest = os.path.join(tmp, "copy")
        assert mc.execute_command("BACKUP", dest) == b"Background backup started"
        mc.set("after-backup", "1")  # not in the copy
        wait_for(lambda: info(mc, "persistence")["backup_in_progress"] == 0, 30, "backup")
        assert info(mc, "persistence")["backup_last_error"] in ("", None)
        b = Server(dir=tmp)
        b.settings["dir"] = dest
        b.start()
        try:
            bc = b.client()
            after = snapshot(bc)
            diff = [(k, before.get(k), after.get(k)) for k in set(before) | set(after)
                    if before.get(k) != after.get(k)]
            assert not diff, diff[:3]
            assert bc.execute_command("IDX.CHECK") == []
            assert bc.execute_command("IDX.LIST") == [b"email"]
        finally:
            b.stop()
        try:
            mc.execute_command("BACKUP", dest)
            raise AssertionError("BACKUP over an existing directory")
        except redis.ResponseError as e:
            assert "already exists" in str(e)
    finally:
        m.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
