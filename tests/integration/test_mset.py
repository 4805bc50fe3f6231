"""test_mset.py -- MSET and MSETNX read every key's old record in one go
(the engine's multi-get) before writing any: repeated keys within one
command, keys of other types (a big hash whose members must go, an indexed
hash whose index entries must go), expired keys, and keys a transaction
wrote earlier must all come out as on redis-server, with DBSIZE exact."""
import time

from harness import main, test
from redis_compare import compare_with_redis

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
