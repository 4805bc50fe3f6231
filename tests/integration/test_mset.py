"""test_mset.py -- MSET and MSETNX read every key's old record in one go
(the engine's multi-get) before writing any: repeated keys within one
command, keys of other types (a big hash whose members must go, an indexed
hash whose index entries must go), expired keys, and keys a transaction
wrote earlier must all come out as on redis-server, with DBSIZE exact."""
import time

from harness import main, test
from redis_compare import RealRedis, compare_with_redis

SCRIPT = """
mset a 1 a 2 b 3 a 4
get a
dbsize
msetnx a 9 c 9
get c
msetnx c 1 d 2 c 3
get c
dbsize
hset big %s
mset big now-a-string e 5
type big
hset big x 1
hlen big
dbsize
hset h f v
mset h s1 h s2 h s3
get h
dbsize
multi
set t1 one
mset t1 two t2 three t1 four
get t1
exec
get t1
get t2
dbsize
""" % " ".join("f%d v%d" % (i, i) for i in range(300))


@test
def mset_and_msetnx_match_redis(srv):
    compare_with_redis(srv, SCRIPT)


# DBSIZE's counter is read without the batch unless the batch holds a
# counter write: transactions that flush, create, fail and roll back.
TRANSACTIONS = [
    [("flushdb",), ("set", "a", "1"), ("set", "b", "2")],
    [("set", "c", "3"), ("incr", "b2"), ("hset", "b", "f", "v"), ("set", "d", "4"), ("del", "a")],
    [("flushdb",)],
    [("set", "e", "6"), ("set", "f", "7"), ("flushall",), ("set", "g", "8")],
    [("set", "h", "x"), ("incr", "h"), ("set", "i", "y")],
]


def run_transactions(c):
    out = []
    c.set("k0", "v")
    for t in TRANSACTIONS:
        p = c.pipeline(transaction=True)
        for cmd in t:
            p.execute_command(*cmd)
        res = p.execute(raise_on_error=False)
        out.append([type(r).__name__ if isinstance(r, Exception) else r for r in res])
        out.append(c.dbsize())
    return out


@test
def counters_follow_transactions_flushes_and_failed_commands(srv):
    ref = RealRedis()
    try:
        want = run_transactions(ref.client())
    finally:
        ref.close()
    assert run_transactions(srv.client()) == want


@test
def mset_over_expired_keys_counts_them_once(srv):
    c = srv.client()
    c.set("x1", "a", px=50)
    c.set("x2", "b", px=50)
    c.set("keep", "c")
    time.sleep(0.1)
    assert c.msetnx({"x1": "new", "x2": "new"})  # expired keys count as absent
    assert c.dbsize() == 3
    c.mset({"x1": "again", "keep": "d", "x3": "e"})
    assert c.dbsize() == 4
    assert c.mget("x1", "x2", "x3", "keep") == [b"again", b"new", b"e", b"d"]
    assert c.ttl("x1") == -1


@test
def mset_over_an_indexed_hash_removes_its_entries(srv):
    c = srv.client()
    c.execute_command("IDX.CREATE", "t", "PREFIX", "u:", "SCHEMA", "tag", "TAG")
    c.hset("u:1", "tag", "red")
    c.hset("u:2", "tag", "red")
    c.mset({"u:1": "plain", "other": "x", "u:2": "plain too"})
    assert c.execute_command("IDX.RANGE", "t", "EQ", "red") == []
    assert c.execute_command("IDX.CHECK") == []
    assert c.dbsize() == 3


if __name__ == "__main__":
    main()
