"""test_dirty.py -- INFO persistence's rdb_changes_since_last_save (Redis's
dirty counter, server.c count_dirty) moves as redis-server's does: by the
keys a command changed, by nothing for a command that changed nothing (a
SETBIT of the bit a key holds, an error, a read that expired a key), and
back to 0 at SAVE, at a finished BGSAVE, and at FLUSHALL when save points
are set. Each step runs on strata and on a throwaway redis-server and the
two counters' deltas must be equal. Run with /usr/bin/python3."""
import time

import redis

from harness import main, test
from redis_compare import RealRedis


def changes(c):
    return c.info("persistence")["rdb_changes_since_last_save"]


def run(c, cmd):
    try:
        c.execute_command(*cmd)
    except redis.ResponseError:
        pass


# (command, ...): commands whose count is the keys they change, in both.
STEPS = [
    ("SET", "a", "1"),
    ("SET", "a", "1"),  # the value it holds: still a change in Redis
    ("SET", "a", "2", "NX"),  # not set
    ("MSET", "b", "1", "c", "2", "d", "3"),
    ("INCR", "b"),
    ("INCR", "a", "extra"),  # arity error
    ("LPUSH", "notlist", "x"),
    ("LPUSH", "a", "x"),  # WRONGTYPE
    ("SETBIT", "bits", "0", "0"),  # new key: a change
    ("SETBIT", "bits", "0", "0"),  # same bit: none
    ("SETBIT", "bits", "0", "1"),
    ("SETBIT", "bits", "0", "1"),
    ("SETBIT", "bits", "90", "0"),  # grows the string
    ("BITFIELD", "bf", "SET", "i5", "0", "0"),
    ("BITFIELD", "bf", "SET", "i5", "0", "0"),
    ("BITFIELD", "bf", "SET", "i5", "0", "1"),
    ("BITFIELD", "bf", "INCRBY", "i5", "0", "1"),
    ("BITFIELD", "bf", "INCRBY", "i5", "0", "1"),
    ("GET", "a"),
    ("HSET", "h", "f", "v"),
    ("SADD", "s", "m"),
    ("SADD", "s", "m"),  # already a member: no change
    ("EXPIRE", "a", "100"),
    ("PERSIST", "a"),
    ("PERSIST", "a"),  # no TTL: no change
    ("DEL", "b", "c", "nosuchkey"),
    ("DEL", "nosuchkey"),
    ("RENAME", "d", "d2"),
    ("RENAME", "d2", "d2"),
    ("RENAMENX", "d2", "a"),  # a exists: not renamed
    ("MOVE", "d2", "3"),
    ("MOVE", "nosuchkey", "3"),
    ("COPY", "a", "a2"),
    ("APPEND", "a", "x"),
    ("SETRANGE", "a", "0", "y"),
    ("GETDEL", "a2"),
    ("GETEX", "a", "PX", "100000"),
    ("FLUSHDB",),
    ("SET", "a", "1"),
    ("ZADD", "z", "1", "m"),
    ("ZADD", "z", "1", "m"),  # same score: no change
]


@test
def changes_counter_moves_as_redis_for_each_command(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        s.execute_command("SAVE")
        r.execute_command("SAVE")
        bad = []
        for cmd in STEPS:
            s0, r0 = changes(s), changes(r)
            run(s, cmd)
            run(r, cmd)
            ds, dr = changes(s) - s0, changes(r) - r0
            if ds != dr:
                bad.append((cmd, ds, dr))
        assert not bad, "strata / redis deltas differ: %r" % bad
        # A transaction counts each command's keys.
        s0, r0 = changes(s), changes(r)
        for c in (s, r):
            p = c.pipeline(transaction=True)
            p.set("t1", "1").set("t2", "2").incr("t3").get("t1")
            p.execute()
        assert changes(s) - s0 == changes(r) - r0 == 3
    finally:
        ref.close()


@test
def reading_an_expired_key_is_no_change(srv):
    ref = RealRedis("--enable-debug-command", "yes")
    try:
        for c in (srv.client(), ref.client()):
            c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            c.set("gone", "1", px=1)
        time.sleep(0.05)
        for c in (srv.client(), ref.client()):
            before = changes(c)
            assert c.get("gone") is None
            assert changes(c) == before
    finally:
        ref.close()


@test
def pipelined_writes_count_each_command(srv):
    """A pipeline's writes go to the engine as one group (write_group.c);
    the counter must still move by each command's keys, as in Redis."""
    ref = RealRedis()
    try:
        deltas = []
        for c in (srv.client(), ref.client()):
            c.execute_command("SAVE")
            c.sadd("s", "m")
            c.setbit("bits", "0", "1")
            base = changes(c)
            p = c.pipeline(transaction=False)
            for i in range(500):
                p.set("p:%d" % i, i)
            p.sadd("s", "m")  # already a member: no change
            p.setbit("bits", "0", "1")  # the bit it holds: none
            p.incr("s")  # WRONGTYPE: none
            p.mset({"m1": 1, "m2": 2})
            p.lpush("l", "a")
            p.get("p:1")  # a read ends the group
            for i in range(300):
                p.incr("n:%d" % (i % 7))
            p.execute(raise_on_error=False)
            deltas.append(changes(c) - base)
        assert deltas[0] == deltas[1] == 500 + 2 + 1 + 300, deltas
    finally:
        ref.close()


@test
def save_bgsave_and_flushall_with_save_points_reset_the_counter(srv):
    c = srv.client()
    c.set("k", "v")
    assert changes(c) > 0
    c.execute_command("SAVE")
    assert changes(c) == 0
    c.set("k", "v2")
    assert changes(c) == 1
    assert srv.raw().command("BGSAVE") == "Background saving started"
    deadline = time.time() + 30
    while c.info("persistence")["rdb_bgsave_in_progress"] and time.time() < deadline:
        time.sleep(0.02)
    assert changes(c) == 0
    # FLUSHALL saves when save points are set (Redis's flushallCommand).
    c.config_set("save", "")
    c.set("k", "v3")
    c.set("k2", "v")
    c.flushall()  # two keys set, two removed
    assert changes(c) == 4
    c.config_set("save", "3600 1 300 100 60 10000")
    c.set("k", "v4")
    c.flushall()
    assert changes(c) == 0
    c.flushall()  # nothing to flush: still a save
    assert changes(c) == 0


if __name__ == "__main__":
    main()
