"""test_digest.py -- DEBUG DIGEST and DEBUG DIGEST-VALUE against redis-server
7.0: the same random dataset of every type (small and large collections, so
Redis holds them in each of its encodings; integer strings; odd scores; TTLs;
several databases) must give the same signature on both servers, after
restart and after SWAPDB, and an empty dataset forty zeros.

Run with /usr/bin/python3 (python3-redis)."""
import contextlib, os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import test, main
from redis_compare import RealRedis

SEED = int(os.environ.get("STRATA_SEED", "1"))
ZERO = "0" * 40
SCORES = [0, -0.0, 1.5, -2, 1e-300, 3.0e15, 12345678.901234, float("inf"), float("-inf")]


def member(rnd):
    return rnd.choice([str(rnd.randint(-50, 500)), "m%d" % rnd.randint(0, 300), "x" * rnd.randint(0, 70)])


def fill(rnd, cmds):
    """Appends random commands building a dataset of every type."""
    for k in range(60):
        kind = rnd.choice(["string", "int", "list", "set", "intset", "zset", "hash", "stream"])
        size = rnd.choice([1, 3, 20, 300])
        key = "%s:%d" % (kind, k)
        if kind == "string":
            cmds.append(["SET", key, "v" * rnd.randint(0, 100)])
        elif kind == "int":
            cmds.append(["SET", key, str(rnd.randint(-10**12, 10**12))])
        elif kind == "list":
            cmds.append(["RPUSH", key] + [member(rnd) for _ in range(size)])
        elif kind == "set":
            cmds.append(["SADD", key] + [member(rnd) for _ in range(size)])
        elif kind == "intset":
            cmds.append(["SADD", key] + [str(rnd.randint(-1000, 1000)) for _ in range(size)])
        elif kind == "zset":
            args = []
            for _ in range(size):
                args += [repr(rnd.choice(SCORES + [rnd.uniform(-1e6, 1e6)])), member(rnd)]
            cmds.append(["ZADD", key] + args)
        elif kind == "hash":
            args = []
            for i in range(size):
                args += ["f%d" % i, member(rnd)]
            cmds.append(["HSET", key] + args)
        else:
            for i in range(size):
                cmds.append(["XADD", key, "%d-%d" % (i // 3 + 1, i % 3), "a", member(rnd), "b", str(i)])
            if size > 3:
                cmds.append(["XDEL", key, "1-1"])
        if rnd.random() < 0.3:
            cmds.append(["PEXPIRE", key, str(rnd.randint(100000, 10**9))])


def both(s, r, *cmd):
    x, y = s.execute_command(*cmd), r.execute_command(*cmd)
    return x, y


@contextlib.contextmanager
def beside_redis(srv):
    """A strata client and a client of a throwaway redis-server (DEBUG on)."""
    ref = RealRedis("--enable-debug-command", "yes")
    try:
        s = srv.client(decode_responses=True)
        yield s, type(s)(port=ref.port, decode_responses=True)
    finally:
        ref.close()


@test
def digest_matches_redis_for_every_type_and_db(srv):
    with beside_redis(srv) as (s, r):
        assert both(s, r, "DEBUG", "DIGEST") == (ZERO, ZERO)
        rnd = random.Random(SEED)
        for db in (0, 3, 15):
            cmds = []
            fill(rnd, cmds)
            for c in (s, r):
                c.execute_command("SELECT", db)
                for cmd in cmds:
                    c.execute_command(*cmd)
        x, d0 = both(s, r, "DEBUG", "DIGEST")
        assert x == d0 and x != ZERO, (x, d0)
        keys = sorted(s.keys("*"))
        x, y = both(s, r, "DEBUG", "DIGEST-VALUE", *keys, "nosuchkey")
        bad = [k for k, a, b in zip(keys, x, y) if a != b]
        assert not bad and x[-1] == ZERO, bad[:5]
        srv.restart()
        s = srv.client(decode_responses=True)
        s.execute_command("SELECT", 15)
        assert s.execute_command("DEBUG", "DIGEST") == d0
        both(s, r, "SWAPDB", "0", "3")
        x, y = both(s, r, "DEBUG", "DIGEST")
        assert x == y, (x, y)
        both(s, r, "FLUSHALL")
        assert both(s, r, "DEBUG", "DIGEST") == (ZERO, ZERO)


@test
def digest_changes_with_order_and_expiry_as_redis(srv):
    with beside_redis(srv) as (s, r):
        seen = set()
        steps = [["RPUSH", "l", "a", "b"], ["LPUSH", "l", "c"], ["LSET", "l", "0", "b"],
                 ["EXPIRE", "l", "1000"], ["PERSIST", "l"], ["SET", "l", "x"],
                 ["HSET", "h", "a", "1"], ["HSET", "h", "a", "2"], ["ZADD", "z", "1", "m"],
                 ["ZADD", "z", "1.0000000000000002", "m"], ["XADD", "st", "5-5", "f", "v"]]
        for cmd in steps:
            both(s, r, *cmd)
            x, y = both(s, r, "DEBUG", "DIGEST")
            assert x == y, (cmd, x, y)
            if cmd[0] != "PERSIST":  # PERSIST gives back the signature before EXPIRE
                assert x not in seen, cmd
            seen.add(x)
            x, y = both(s, r, "DEBUG", "DIGEST-VALUE", "l", "h", "z", "st")
            assert x == y, (cmd, x, y)


if __name__ == "__main__":
    main()
