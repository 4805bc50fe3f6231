"""test_swapdb.py -- SWAPDB (a map from logical to stored databases,
src/server/dbmap.c): random commands over several databases with SWAPDB,
SELECT, MOVE and COPY DB against redis-server; the map survives a restart and
a SIGKILL; indexes, TTLs, keyspace events, WATCH and blocked clients follow
the swapped data; a replica applies the swap.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import Server, test, main, wait_for
from redis_compare import RealRedis, reply

SEED = int(os.environ.get("STRATA_SEED", "1"))


def random_command(rnd):
    k = "k%d" % rnd.randint(0, 7)
    db = str(rnd.randint(0, 3))
    return rnd.choice([
        ["SWAPDB", db, str(rnd.randint(0, 3))], ["SELECT", db], ["SET", k, str(rnd.random())],
        ["GET", k], ["RPUSH", k, "x"], ["LRANGE", k, "0", "-1"], ["HSET", k, "f", db],
        ["HGETALL", k], ["SADD", k, db], ["ZADD", k, db, "m"], ["DEL", k], ["EXISTS", k],
        ["TYPE", k], ["DBSIZE"], ["MOVE", k, db], ["COPY", k, "c" + k, "DB", db, "REPLACE"],
        ["EXPIRE", k, "100"], ["TTL", k], ["RANDOMKEY"], ["FLUSHDB"] if rnd.random() < 0.1 else ["PING"],
        ["SWAPDB", "0", "1"], ["SWAPDB", "x", "1"], ["SWAPDB", "1", "16"], ["SWAPDB", "-1", "0"]])


def wait(pred, timeout=20):
    deadline = time.time() + timeout
    while not pred():
        assert time.time() < deadline, "timed out"
        time.sleep(0.05)


def keys_by_db(c):
    out = {}
    for db in range(4):
        c.execute_command("SELECT", db)
        out[db] = sorted((k, c.type(k)) for k in c.keys("*"))
    return out


@test
def swapdb_matches_redis_under_random_commands(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(single_connection_client=True), ref.client()
        r = redis.Redis(port=ref.port, single_connection_client=True)
        rnd = random.Random(SEED)
        diffs = []
        for i in range(1500):
            cmd = random_command(rnd)
            a, b = reply(s, cmd), reply(r, cmd)
            if cmd[0] == "RANDOMKEY":
                continue  # the key is random; both must agree on none/some
            if a != b:
                diffs.append("%d %r: strata %r, redis %r" % (i, cmd, a, b))
        assert not diffs, "\n".join(diffs[:5])
        assert keys_by_db(s) == keys_by_db(r)
    finally:
        ref.close()


@test
def swapped_databases_stay_swapped_after_restart_and_sigkill(srv):
    c = srv.client()
    c.set("a", "was0")
    c.execute_command("SELECT", 1)
    c1 = redis.Redis(port=srv.port, db=1)
    c1.set("a", "was1")
    c1.set("t", "x", ex=1000)
    c.execute_command("SWAPDB", 0, 1)
    srv.restart()
    c0, c1 = redis.Redis(port=srv.port, db=0), redis.Redis(port=srv.port, db=1)
    assert c0.get("a") == b"was1" and c1.get("a") == b"was0"
    assert 900 < c0.ttl("t") <= 1000
    assert srv.client().info("keyspace")["db0"]["expires"] == 1
    c0.config_set("appendfsync", "always")
    c0.execute_command("SWAPDB", 0, 1)
    srv.kill9()
    srv.start()
    assert redis.Redis(port=srv.port, db=0).get("a") == b"was0"
    assert redis.Redis(port=srv.port, db=0).get("t") is None
    assert redis.Redis(port=srv.port, db=1).get("a") == b"was1"
    assert redis.Redis(port=srv.port, db=1).get("t") == b"x"


@test
def indexes_follow_the_swapped_database(srv):
    c0, c1 = redis.Redis(port=srv.port, db=0), redis.Redis(port=srv.port, db=1)
    c1.execute_command("IDX.CREATE", "byage", "PREFIX", "u:", "SCHEMA", "age", "NUMERIC")
    for i in range(20):
        c1.hset("u:%d" % i, mapping={"age": i})
    c0.hset("u:99", "age", 5)  # db 0 has no index
    c0.execute_command("SWAPDB", 0, 1)
    def rng(c, lo, hi):
        return c.execute_command("IDX.RANGE", "byage", "MIN", lo, "MAX", hi)
    assert rng(c0, 5, 5) == [b"u:5"]
    c0.hset("u:5", "age", 50)  # maintained in its new logical db
    assert rng(c0, 5, 5) == []
    assert rng(c0, 50, 50) == [b"u:5"]
    assert reply(c1, ["IDX.RANGE", "byage", "MIN", "0", "MAX", "100"])[0] == "err"
    assert c1.execute_command("IDX.LIST") == []
    assert c0.execute_command("IDX.LIST") == [b"byage"]
    c1.hset("u:7", "age", 7)  # db 1 (was 0) has no index
    assert rng(c0, 7, 7) == [b"u:7"]  # db 0's own u:7
    c0.execute_command("IDX.CHECK")


@test
def watch_events_and_blocked_clients_follow_the_swap(srv):
    c0, c1 = redis.Redis(port=srv.port, db=0), redis.Redis(port=srv.port, db=1)
    c0.config_set("notify-keyspace-events", "KA")
    c1.rpush("q", "job")
    p = redis.Redis(port=srv.port).pubsub()
    p.psubscribe("__keyspace@0__:*")
    p.get_message(timeout=1)
    got = []
    t = threading.Thread(target=lambda: got.append(redis.Redis(port=srv.port, db=0).blpop("q", 5)))
    t.start()
    wait_for(lambda: c0.info("clients")["blocked_clients"] == 1, 30, "the BLPOP blocked")
    w = redis.Redis(port=srv.port, db=1, single_connection_client=True)
    w.execute_command("WATCH", "q")  # exists in db 1: the swap changes it
    c0.execute_command("SWAPDB", 0, 1)
    t.join(6)
    assert got == [(b"q", b"job")], got  # the waiter in db 0 got db 1's list
    w.execute_command("MULTI")
    w.execute_command("PING")
    assert w.execute_command("EXEC") is None
    w2 = redis.Redis(port=srv.port, db=1, single_connection_client=True)
    w2.execute_command("WATCH", "q")
    w2.execute_command("MULTI")
    w2.execute_command("PING")
    assert w2.execute_command("EXEC") == [b"PONG"]  # watched after the swap: untouched
    w3 = redis.Redis(port=srv.port, db=1, single_connection_client=True)
    w3.execute_command("WATCH", "nokey")
    c0.execute_command("SWAPDB", 0, 1)  # nokey absent on both sides: no change
    w3.execute_command("MULTI")
    w3.execute_command("PING")
    assert w3.execute_command("EXEC") == [b"PONG"]
    c0.set("k", "v")  # db 0 after the swaps: event names logical db 0
    deadline = time.time() + 30  # bounds a hang, not the load
    events = []
    while time.time() < deadline and not events:
        m = p.get_message(timeout=0.5)
        if m and m["type"] == "pmessage" and m["channel"].endswith(b":k"):
            events.append(m["channel"])
    assert events == [b"__keyspace@0__:k"], events
    c1.set("k", "v")
    time.sleep(0.2)
    m = p.get_message(timeout=0.5)
    assert m is None or not m["channel"].endswith(b":k"), m  # db 1: not on @0


@test
def a_replica_applies_swapdb():
    m, r = Server().start(), Server().start()
    try:
        c = m.client()
        c.set("a", "0")
        redis.Redis(port=m.port, db=1).set("a", "1")
        r.client().replicaof("127.0.0.1", m.port)
        r0 = redis.Redis(port=r.port, db=0)
        wait(lambda: r0.get("a") == b"0")
        c.execute_command("SWAPDB", 0, 1)
        redis.Redis(port=m.port, db=0).set("b", "after")
        wait(lambda: r0.get("b") == b"after")
        assert r0.get("a") == b"1"
        assert redis.Redis(port=r.port, db=1).get("a") == b"0"
        assert r.client().info("keyspace") == m.client().info("keyspace")
        r.restart()  # the replica's own map record came with the stream
        wait(lambda: redis.Redis(port=r.port, db=0).get("a") == b"1")
    finally:
        m.cleanup()
        r.cleanup()


if __name__ == "__main__":
    main()
