"""test_hashes.py -- hash commands through a real client: replies and
error texts compared with a real redis-server command by command, big
hashes (per-field encoding past 128 fields), HSCAN walks, HRANDFIELD, RESP3
maps, persistence.

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import test, main
from redis_compare import compare_with_redis


@test
def hash_commands_and_errors_match_redis(srv):
    compare_with_redis(srv, """
hset h f1 v1 f2 v2
hset h f1 x
hset h f1
hset h
hsetnx h f1 y
hsetnx h f3 y
hmset h a 1 b 2
hmset h a
hget h f1
hget h nope
hget nokey f
hmget h f1 nope a
hmget nokey a b
hgetall h
hgetall nokey
hkeys h
hvals h
hkeys nokey
hlen h
hlen nokey
hexists h f1
hexists h zz
hexists nokey zz
hstrlen h f1
hstrlen h zz
hstrlen nokey zz
hdel h f1 zz a
hdel h f1
hdel nokey a
hincrby h n 5
hincrby h n -10
hincrby h n abc
hincrby h f2 1
hincrby h n 9223372036854775807
hincrby h n -9223372036854775808
hset h m 9223372036854775807
hincrby h m 1
hincrbyfloat h fl 1.5
hincrbyfloat h fl 0.1
hincrbyfloat h fl abc
hincrbyfloat h f2 1
hincrbyfloat h fl inf
hincrbyfloat h fl nan
hset h e 1e308
hincrbyfloat h e 1e308
hset h w \\s5
hincrby h w 1
hset h z 007
hincrby h z 1
hincrbyfloat h z 1
hget h z
set s x
hset s a b
hget s a
hgetall s
hlen s
hdel s a
hincrby s a 1
hincrbyfloat s a 1
hkeys s
hvals s
hexists s a
hstrlen s a
hmget s a
hsetnx s a b
hmset s a b
hscan s 0
hrandfield s
hrandfield s 2
hscan h abc
hscan h 0 count 0
hscan h 0 count -1
hscan h 0 count abc
hscan h 0 match
hscan h 0 foo bar
hscan nokey 0
hrandfield nokey
hrandfield nokey 5
hrandfield nokey 5 withvalues
hrandfield h 0
hrandfield h abc
hrandfield h 5 withvalue
hrandfield h 5 withvalues extra
hrandfield h -9223372036854775808
hrandfield h 9223372036854775807 withvalues
hrandfield h -9223372036854775807 withvalues
hdel h n m fl e w z f2 f3 b
exists h
hlen h
hset h a 1
hdel h a
exists h
""", loose=())


@test
def big_hash_keeps_every_field_and_shrinks_to_nothing(srv):
    r = srv.client()
    fields = {("f%05d" % i): ("v%d" % i) for i in range(3000)}
    r.hset("big", mapping=dict(list(fields.items())[:100]))
    r.hset("big", mapping=fields)  # crosses the packed limit inside one HSET
    assert r.hlen("big") == 3000
    assert r.hget("big", "f02999") == b"v2999" and r.hget("big", "nope") is None
    assert r.hmget("big", ["f00000", "x", "f01500"]) == [b"v0", None, b"v1500"]
    assert r.hexists("big", "f00007") and r.hstrlen("big", "f00010") == 3
    all_ = r.hgetall("big")
    assert len(all_) == 3000 and all_[b"f01234"] == b"v1234"
    assert r.hset("big", "f00001", "new") == 0 and r.hset("big", "extra", "1") == 1
    assert r.hsetnx("big", "extra", "2") == 0 and r.hget("big", "extra") == b"1"
    assert r.hincrby("big", "extra", 41) == 42
    assert r.hincrbyfloat("big", "fl", 0.5) == 0.5
    assert r.hlen("big") == 3002
    assert r.hdel("big", "f00001", "f00001", "missing") == 1
    assert r.hlen("big") == 3001
    assert len(r.hkeys("big")) == 3001 and len(r.hvals("big")) == 3001
    r.expire("big", 1000)
    srv.restart()
    r = srv.client()
    assert r.hlen("big") == 3001 and r.hget("big", "extra") == b"42" and r.ttl("big") > 990
    assert r.hdel("big", *r.hkeys("big")) == 3001
    assert not r.exists("big") and r.dbsize() == 0
    r.hset("big", mapping={("g%d" % i): "x" for i in range(200)})
    assert r.hget("big", "f00002") is None and r.hlen("big") == 200  # no stale fields


@test
def hscan_walks_every_field_once(srv):
    r = srv.client()
    r.hset("small", mapping={"a": "1", "b": "2", "ab": "3"})
    cur, items = r.hscan("small", 0, match="a*")
    assert cur == 0 and items == {b"a": b"1", b"ab": b"3"}
    r.hset("big", mapping={("f%04d" % i): str(i) for i in range(1000)})
    seen, cur, steps = {}, 0, 0
    while True:
        cur, items = r.hscan("big", cur, count=37)
        for k, v in items.items():
            assert k not in seen
            seen[k] = v
        steps += 1
        if cur == 0:
            break
        r.hset("big", "f%04d" % (steps * 7 % 1000), "changed")  # writes between steps
    assert len(seen) == 1000 and steps >= 1000 // 37
    cur, items = r.hscan("big", 0, match="f00[0-4]*", count=10000)
    assert cur == 0 and len(items) == 50


@test
def hrandfield_counts_and_resp3_pairs(srv):
    r = srv.client()
    r.hset("h", mapping={"a": "1", "b": "2", "c": "3"})
    assert r.hrandfield("h") in (b"a", b"b", b"c")
    got = r.hrandfield("h", 5)
    assert sorted(got) == [b"a", b"b", b"c"]
    got = r.hrandfield("h", 2)
    assert len(got) == 2 and len(set(got)) == 2
    got = r.hrandfield("h", -7)
    assert len(got) == 7 and set(got) <= {b"a", b"b", b"c"}
    got = r.hrandfield("h", 2, withvalues=True)
    assert len(got) == 4 and dict(zip(got[::2], got[1::2])).items() <= {b"a": b"1", b"b": b"2", b"c": b"3"}.items()
    # RESP3: HGETALL is a map, HRANDFIELD WITHVALUES pairs are arrays.
    import socket
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(b"HELLO 3\r\nHGETALL h\r\nHRANDFIELD h -2 WITHVALUES\r\nHGET h nope\r\n")
    data = b""
    deadline = time.time() + 5
    while data.count(b"_\r\n") < 1 and time.time() < deadline:
        data += s.recv(65536)
    s.close()
    body = data[data.index(b"%3\r\n", 10):]
    assert body.startswith(b"%3\r\n"), data
    assert b"*2\r\n*2\r\n" in body, body
    assert body.endswith(b"_\r\n")


@test
def hash_replaced_by_string_and_back(srv):
    r = srv.client()
    r.hset("k", mapping={("f%d" % i): "v" for i in range(300)})
    r.set("k", "str")
    assert r.type("k") == b"string" and r.get("k") == b"str"
    r.delete("k")
    r.hset("k", "a", "1")
    assert r.hgetall("k") == {b"a": b"1"}
    r.hset("e", mapping={"a": "1"})
    r.pexpire("e", 50)
    time.sleep(0.1)
    assert r.hset("e", "b", "2") == 1 and r.hgetall("e") == {b"b": b"2"} and r.ttl("e") == -1


if __name__ == "__main__":
    main()
