"""test_lists_blocking.py -- BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP:
clients served in the order they blocked, timeouts, disconnects, BLMOVE
chains, pushes inside MULTI/EXEC and scripts, what DEL/SET/RENAME of a
waited key do (as Redis 7.0), CLIENT UNBLOCK, CLIENT LIST and INFO, and
that a served pop is durable once its reply is out (SIGKILL, appendfsync
always)."""
import time

from harness import RawConn, RespError, Server, main, test
from blocking import block, blocked, no_reply, wait_blocked


@test
def clients_blocked_on_one_list_are_served_in_the_order_they_blocked(srv):
    r = srv.client()
    waiters = [block(srv, r, "BLPOP", "q", "0") for _ in range(3)]
    assert r.rpush("q", "a", "b") == 2
    assert waiters[0].read_reply() == [b"q", b"a"]
    assert waiters[1].read_reply() == [b"q", b"b"]
    assert no_reply(waiters[2])  # nothing left for the third
    assert blocked(r) == 1 and r.exists("q") == 0
    r.lpush("q", "c")
    assert waiters[2].read_reply() == [b"q", b"c"]
    assert blocked(r) == 0


@test
def a_client_blocked_on_several_keys_is_served_from_the_first_pushed(srv):
    r = srv.client()
    c = block(srv, r, "BRPOP", "k1", "k2", "k3", "0")
    r.rpush("k3", "x", "y")
    assert c.read_reply() == [b"k3", b"y"]
    assert r.lrange("k3", 0, -1) == [b"x"]
    d = block(srv, r, "BLMPOP", "0", "2", "m1", "m2", "LEFT", "COUNT", "5")
    r.rpush("m2", "1", "2", "3")
    assert d.read_reply() == [b"m2", [b"1", b"2", b"3"]]
    assert r.exists("m2") == 0


@test
def blocking_pop_times_out_with_a_null_reply(srv):
    c = srv.raw()
    t0 = time.time()
    assert c.command("BLPOP", "none", "0.3") is None
    assert c.last_raw == b"*-1\r\n"
    took = time.time() - t0
    assert 0.25 <= took < 10, took  # 10: the time out, not a hang, on a loaded machine
    assert c.command("BLMOVE", "none", "d", "LEFT", "LEFT", "0.05") is None
    assert c.last_raw == b"*-1\r\n"  # Redis 7.0 times BLMOVE out with a null array too
    assert c.command("HELLO", "3")[b"proto"] == 3
    assert c.command("BRPOP", "none", "0.05") is None
    assert c.last_raw == b"_\r\n"
    assert c.command("PING") == "PONG"  # the connection goes on
    r = srv.client()
    assert int(r.info("clients")["clients_in_timeout_table"]) == 0


@test
def later_timeouts_do_not_delay_earlier_ones(srv):
    r = srv.client()
    long_one = block(srv, r, "BLPOP", "k", "30")
    t0 = time.time()
    short = srv.raw()
    assert short.command("BLPOP", "k", "0.2") is None
    assert time.time() - t0 < 10  # not the 30 s of the later one, on a loaded machine
    assert int(r.info("clients")["clients_in_timeout_table"]) == 1
    r.rpush("k", "v")
    assert long_one.read_reply() == [b"k", b"v"]


@test
def bad_timeouts_are_redis_errors(srv):
    c = srv.raw()
    assert str(c.command("BLPOP", "k", "-1")) == "ERR timeout is negative"
    assert str(c.command("BLPOP", "k", "abc")) == "ERR timeout is not a float or out of range"
    assert str(c.command("BLPOP", "k", "inf")) == "ERR timeout is negative"
    assert str(c.command("BLMOVE", "k", "d", "LEFT", "UP", "1")) == "ERR syntax error"
    assert str(c.command("BLMPOP", "1", "0", "k", "LEFT")) == "ERR numkeys should be greater than 0"
    assert str(c.command("BRPOPLPUSH", "k", "d", "-0.5")) == "ERR timeout is negative"


@test
def a_client_that_disconnects_while_blocked_takes_nothing(srv):
    r = srv.client()
    c = block(srv, r, "BLPOP", "k", "0")
    c.close()
    wait_blocked(r, 0)
    r.rpush("k", "v")
    assert r.lrange("k", 0, -1) == [b"v"]
    killed = block(srv, r, "BLPOP", "k2", "0")
    cid = [x["id"] for x in r.client_list() if x["cmd"] == "blpop"][0]
    r.client_kill_filter(_id=cid)
    wait_blocked(r, 0)
    r.rpush("k2", "v")
    assert r.llen("k2") == 1
    killed.close()


@test
def blmove_moves_into_a_list_another_client_waits_on(srv):
    r = srv.client()
    mover = block(srv, r, "BLMOVE", "src", "dst", "RIGHT", "LEFT", "0")
    popper = block(srv, r, "BLPOP", "dst", "0")
    r.rpush("src", "a", "b")
    assert mover.read_reply() == b"b"
    assert popper.read_reply() == [b"dst", b"b"]
    assert r.lrange("src", 0, -1) == [b"a"] and r.exists("dst") == 0
    chain = block(srv, r, "BRPOPLPUSH", "c1", "c2", "0")
    chain2 = block(srv, r, "BRPOPLPUSH", "c2", "c3", "0")
    r.rpush("c1", "x")
    assert chain.read_reply() == b"x" and chain2.read_reply() == b"x"
    assert r.lrange("c3", 0, -1) == [b"x"] and r.exists("c1", "c2") == 0


@test
def blmove_onto_a_non_list_is_served_wrongtype_and_keeps_the_item(srv):
    r = srv.client()
    r.set("str", "x")
    c = block(srv, r, "BRPOPLPUSH", "src", "str", "0")
    r.rpush("src", "a", "b")
    assert str(c.read_reply()).startswith("WRONGTYPE")
    assert r.lrange("src", 0, -1) == [b"a", b"b"] and blocked(r) == 0


@test
def a_push_inside_multi_wakes_the_waiter_after_exec(srv):
    r = srv.client()
    c = block(srv, r, "BLPOP", "k", "0")
    m = srv.raw()
    assert m.command("MULTI") == "OK"
    m.command("LPUSH", "k", "a")
    m.command("LPUSH", "k", "b")
    assert no_reply(c, 0.1)
    assert m.command("EXEC") == [1, 2]
    assert c.read_reply() == [b"k", b"b"]
    assert r.lrange("k", 0, -1) == [b"a"]
    # a push and a pop inside one EXEC leave nothing to serve
    c = block(srv, r, "BLPOP", "e", "0")
    m.command("MULTI")
    m.command("LPUSH", "e", "x")
    m.command("RPOP", "e")
    assert m.command("EXEC") == [1, b"x"]
    assert no_reply(c) and blocked(r) == 1
    c.close()


@test
def blocking_commands_do_not_block_inside_multi_or_scripts(srv):
    m = srv.raw()
    m.command("MULTI")
    m.command("BLPOP", "none", "0")
    m.command("BLMOVE", "none", "d", "LEFT", "LEFT", "0")
    m.command("BLMPOP", "0", "1", "none", "LEFT")
    assert m.command("EXEC") == [None, None, None]
    assert m.last_raw == b"*3\r\n*-1\r\n$-1\r\n*-1\r\n"
    r = srv.client()
    assert r.eval("return redis.call('blmpop', 0, 1, 'none', 'left')", 0) is None
    e = m.command("EVAL", "return redis.call('blpop', 'none', 0)", "0")
    assert "not allowed from script" in str(e), e
    r.rpush("full", "v")
    assert r.eval("return redis.call('blmpop', 0, 1, KEYS[1], 'left')", 1, "full") == [b"full", [b"v"]]


@test
def a_push_inside_a_script_wakes_the_waiter_after_the_script(srv):
    r = srv.client()
    c = block(srv, r, "BLPOP", "k", "0")
    n = r.eval("redis.call('rpush', KEYS[1], 'a', 'b'); return redis.call('llen', KEYS[1])", 1, "k")
    assert n == 2  # the waiter was not served inside the script
    assert c.read_reply() == [b"k", b"a"]


@test
def del_set_and_rename_of_a_waited_key_behave_as_redis(srv):
    r = srv.client()
    c = block(srv, r, "BLPOP", "k", "0")
    p = r.pipeline(transaction=True)
    p.lpush("k", "a").delete("k").execute()
    assert no_reply(c)
    p = r.pipeline(transaction=True)
    p.lpush("k", "a").delete("k").set("k", "str").execute()
    assert no_reply(c) and blocked(r) == 1  # a string does not wake it (Redis 7.0)
    r.delete("k")
    r.rpush("other", "o")
    r.rename("other", "k")
    assert c.read_reply() == [b"k", b"o"]
    d = block(srv, r, "BLPOP", "t", "0")
    r.set("t", "v", px=1)
    time.sleep(0.05)
    r.rpush("t", "w")  # the expired string is gone: t is a new list
    assert d.read_reply() == [b"t", b"w"]


@test
def client_unblock_replies_timeout_or_error(srv):
    r = srv.client()
    c = block(srv, r, "BLPOP", "k", "0")
    line = [x for x in r.client_list() if x["cmd"] == "blpop"][0]
    assert "b" in line["flags"], line
    cid = line["id"]
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 1
    assert c.read_reply() is None and c.last_raw == b"*-1\r\n"
    assert r.execute_command("CLIENT", "UNBLOCK", cid) == 0
    c.send(c.encode("BLMOVE", "k", "d", "LEFT", "LEFT", "0"))
    wait_blocked(r, 1)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "ERROR") == 1
    e = c.read_reply()
    assert isinstance(e, RespError) and str(e) == "UNBLOCKED client unblocked via CLIENT UNBLOCK"
    try:
        r.execute_command("CLIENT", "UNBLOCK", cid, "maybe")
        assert False
    except Exception as x:
        assert "reason should be TIMEOUT or ERROR" in str(x)
    assert r.execute_command("CLIENT", "UNBLOCK", "999999") == 0


@test
def requests_pipelined_behind_a_blocking_one_run_after_it(srv):
    r = srv.client()
    c = srv.raw()
    c.send(c.encode("BLPOP", "k", "0") + c.encode("RPUSH", "k2", "after") + c.encode("PING"))
    wait_blocked(r, 1)
    assert r.exists("k2") == 0  # the RPUSH waits behind the BLPOP
    r.rpush("k", "v")
    assert c.read_reply() == [b"k", b"v"]
    assert c.read_reply() == 1
    assert c.read_reply() == "PONG"
    assert r.lrange("k2", 0, -1) == [b"after"]


@test
def a_push_that_serves_a_waiter_touches_watched_keys(srv):
    r = srv.client()
    c = block(srv, r, "BRPOPLPUSH", "src", "dst", "0")
    w = srv.raw()
    w.command("WATCH", "dst")
    r.rpush("src", "v")
    assert c.read_reply() == b"v"
    w.command("MULTI")
    w.command("PING")
    assert w.command("EXEC") is None


@test
def a_served_pop_does_not_come_back_after_sigkill():
    srv = Server(appendfsync="always")
    try:
        srv.start()
        r = srv.client()
        r.rpush("keep", "k")
        waiters = [block(srv, r, "BLPOP", "q", "0") for _ in range(2)]
        r.rpush("q", "a", "b", "c")
        assert waiters[0].read_reply() == [b"q", b"a"]
        assert waiters[1].read_reply() == [b"q", b"b"]
        srv.kill9()
        srv.start()
        r = srv.client()
        assert r.lrange("q", 0, -1) == [b"c"]
        assert r.lrange("keep", 0, -1) == [b"k"]
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
