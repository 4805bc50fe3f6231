"""test_strings.py -- string commands through a real client, replies and
error texts compared with a real redis-server (Debian's, started on a free
port) command by command, plus strata-specific cases (TTL across restart,
counters, MULTI visibility).

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main
from redis_compare import compare_with_redis


@test
def set_options_and_errors_match_redis(srv):
    compare_with_redis(srv, """
set a 1
get a
set a 2 nx
set a 2 xx get
set a 3 NX XX
set a 3 ex 0
set a 3 ex -1
set a 3 ex abc
set a 3 ex 10 px 100
set a 3 keepttl ex 10
set a 3 ex 9223372036854775807
set a 3 px 9223372036854775807
set a 3 exat 9223372036854775807
set a 3 foo
set a 3 ex
set a 4 keepttl
set a 5 get nx
set nk 5 get xx
exists nk
setnx a 5
setnx b 5
setex c 0 v
setex c -5 v
setex c abc v
setex c 9223372036854775807 v
setex c 100 v
psetex c 0 v
psetex c 100000 v
get nokey
mget a b nokey
mset a 1 b
mset a 1 b 2
msetnx a 1 zz 2
msetnx y 1 zz 2
msetnx y 1
getset a 10
getset nokey2 10
getdel a
getdel a
getex b
getex b ex 100
getex b persist
ttl b
getex b persist ex 10
getex b ex 0
getex b exat 0
getex b foo
getex b px
getex nokey ex 10
hset h f v
set h x get
get h
getset h y
type h
set h2 x get
""", loose=("ttl",))


@test
def counters_and_ranges_match_redis(srv):
    compare_with_redis(srv, """
incr b
incr b
incrby b 10
incrby b abc
incrby b 1.5
decr b
decrby b 5
decrby b -9223372036854775808
set big 9223372036854775807
incr big
incrby big -1
set neg -9223372036854775808
decr neg
decrby neg 1
set s abc
incr s
set s 007
incr s
set s \\s1
incr s
set s 12345678901234567890
incr s
incrbyfloat f 1.5
incrbyfloat f 0.1
incrbyfloat f abc
incrbyfloat f \\s1
incrbyfloat f 1e308
incrbyfloat f 1e308
incrbyfloat s 1
set f 3.0
incrbyfloat f 1
set f 10.50
incrbyfloat f 0.1
incrbyfloat f -10.6
incrbyfloat f 5.0e3
incrbyfloat f inf
incrbyfloat f nan
set f -0.0
incrbyfloat f 0
append ap hello
append ap \\sworld
strlen ap
strlen nokey
getrange ap 0 4
getrange ap -5 -1
getrange ap 5 1
getrange ap -1 -5
getrange ap 0 100
getrange ap 100 200
getrange ap -100 2
getrange nokey 0 1
getrange ap a b
substr ap 1 3
setrange ap 6 WORLD
get ap
setrange ap 20 x
get ap
setrange ap -1 x
setrange ap abc x
setrange newk 0 ""
exists newk
setrange newk 2 ab
get newk
setrange ap 536870911 xx
setrange ap 536870912 x
setrange ap 0 ""
hset h f v
get h
incr h
incrbyfloat h 1
append h x
strlen h
getrange h 0 1
setrange h 0 x
getdel h
getex h
mget a h
""")


@test
def ttl_survives_restart_and_expired_string_is_gone(srv):
    r = srv.client()
    r.set("keep", "1", ex=1000)
    # 1 s: "short" must still be there for DBSIZE (the active cycle may
    # remove it once expired), which a loaded machine can delay.
    t0 = time.time()
    r.set("short", "1", px=1000)
    r.set("plain", "x")
    assert r.dbsize() == 3
    time.sleep(max(0.0, t0 + 1.2 - time.time()))
    assert r.get("short") is None
    srv.restart()
    r = srv.client()
    assert r.get("keep") == b"1" and 990 <= r.ttl("keep") <= 1000
    assert r.ttl("plain") == -1 and r.get("short") is None
    deadline = time.time() + 30  # the active cycle removes it from DBSIZE (late under load)
    while r.dbsize() != 2 and time.time() < deadline:
        time.sleep(0.05)
    assert r.dbsize() == 2


@test
def expired_string_is_replaced_not_appended(srv):
    r = srv.client()
    r.set("k", "old", px=50)
    time.sleep(0.1)
    assert r.append("k", "new") == 3
    assert r.get("k") == b"new" and r.ttl("k") == -1
    r.set("n", "5", px=50)
    time.sleep(0.1)
    assert r.incr("n") == 1


@test
def multi_sees_its_own_writes_and_failed_command_writes_nothing(srv):
    r = srv.client()
    p = r.pipeline(transaction=True)
    p.set("a", "1").incr("a").append("a", "x").get("a").hset("h", "f", "v").incr("h")
    res = p.execute(raise_on_error=False)
    assert res[:4] == [True, 2, 2, b"2x"], res
    assert isinstance(res[5], redis.ResponseError)
    assert r.get("a") == b"2x" and r.hget("h", "f") == b"v"
    try:
        r.incrbyfloat("a", 1)
        assert False
    except redis.ResponseError as e:
        assert str(e) == "value is not a valid float"
    assert r.get("a") == b"2x"


@test
def large_values_and_binary_keys_round_trip(srv):
    r = srv.client()
    big = os.urandom(3 * 1024 * 1024)
    key = b"\x00bin\xffkey\n"
    r.set(key, big)
    assert r.get(key) == big and r.strlen(key) == len(big)
    assert r.setrange(key, len(big), b"tail") == len(big) + 4
    assert r.getrange(key, len(big), -1) == b"tail"
    r.mset({"k%d" % i: "v%d" % i for i in range(1000)})
    assert r.mget(["k%d" % i for i in range(0, 1000, 100)]) == [b"v%d" % i for i in range(0, 1000, 100)]
    assert r.dbsize() == 1001


if __name__ == "__main__":
    main()
