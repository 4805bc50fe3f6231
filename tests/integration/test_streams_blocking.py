"""test_streams_blocking.py -- XREAD BLOCK and XREADGROUP BLOCK: woken by
an XADD from another client (only with entries after the id they wait
for; `$` is the last id when they blocked), served in the order they
blocked, COUNT while blocked, timeouts, a group destroyed or the stream
deleted / replaced while blocked (Redis 7.0's errors), MULTI and scripts
(no blocking), RESP3, and a served XREADGROUP's PEL surviving SIGKILL."""
import time

from harness import RawConn, RespError, Server, main, test
from blocking import block, blocked, no_reply


@test
def xread_block_is_woken_by_xadd_with_the_new_entry(srv):
    r = srv.client()
    r.xadd("s", {"a": "1"}, id="1-1")
    c = block(srv, r, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    r.xadd("other", {"x": "y"}, id="5-5")
    assert no_reply(c)
    r.xadd("s", {"b": "2"}, id="2-1")
    assert c.read_reply() == [[b"s", [[b"2-1", [b"b", b"2"]]]]]
    assert blocked(r) == 0


@test
def xread_block_waits_for_entries_after_its_id_and_serves_in_block_order(srv):
    r = srv.client()
    r.xadd("s", {"a": "1"}, id="3-0")
    waiters = [block(srv, r, "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", "5-0")
               for _ in range(2)]
    r.xadd("s", {"b": "2"}, id="4-0")  # not after 5-0: they keep waiting
    assert no_reply(waiters[0]) and no_reply(waiters[1])
    r.xadd("s", {"c": "3"}, id="6-0")
    assert waiters[0].read_reply() == [[b"s", [[b"6-0", [b"c", b"3"]]]]]
    assert waiters[1].read_reply() == [[b"s", [[b"6-0", [b"c", b"3"]]]]]


@test
def xread_on_several_streams_is_served_from_the_one_that_grew(srv):
    r = srv.client()
    c = block(srv, r, "XREAD", "BLOCK", "0", "STREAMS", "a", "b", "$", "$", resp3=True)
    r.xadd("b", {"f": "v"}, id="7-0")
    assert c.read_reply() == {b"b": [[b"7-0", [b"f", b"v"]]]}  # a map in RESP3


@test
def xread_block_times_out_with_a_null_array(srv):
    c = srv.raw()
    t0 = time.time()
    assert c.command("XREAD", "BLOCK", "300", "STREAMS", "none", "$") is None
    assert c.last_raw == b"*-1\r\n"
    assert 0.25 <= time.time() - t0 < 10  # 10: the time out, not a hang, on a loaded machine
    e = c.command("XREAD", "BLOCK", "-1", "STREAMS", "none", "$")
    assert isinstance(e, RespError) and "timeout is negative" in str(e), e
    e = c.command("XREAD", "BLOCK", "x", "STREAMS", "none", "$")
    assert isinstance(e, RespError) and "timeout is not an integer" in str(e), e


@test
def xreadgroup_block_gets_new_entries_into_its_pel(srv):
    r = srv.client()
    r.xgroup_create("s", "g", id="$", mkstream=True)
    c = block(srv, r, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
    r.xadd("s", {"f": "v"}, id="1-0")
    assert c.read_reply() == [[b"s", [[b"1-0", [b"f", b"v"]]]]]
    p = r.xpending("s", "g")
    assert p["pending"] == 1 and p["consumers"] == [{"name": b"alice", "pending": 1}]
    # another reader of the group served first takes the entry: the second waits on
    d1 = block(srv, r, "XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "STREAMS", "s", ">")
    d2 = block(srv, r, "XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "s", ">")
    r.xadd("s", {"n": "1"}, id="2-0")
    assert d1.read_reply() == [[b"s", [[b"2-0", [b"n", b"1"]]]]]
    assert no_reply(d2)
    r.xadd("s", {"n": "2"}, id="3-0")
    assert d2.read_reply() == [[b"s", [[b"3-0", [b"n", b"2"]]]]]


@test
def xreadgroup_blocked_on_a_destroyed_group_gets_nogroup(srv):
    r = srv.client()
    r.xgroup_create("s", "g", id="$", mkstream=True)
    c = block(srv, r, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    assert r.xgroup_destroy("s", "g") == 1
    e = c.read_reply()
    assert isinstance(e, RespError) and str(e).startswith(
        "NOGROUP the consumer group this client was blocked on no longer exists"), e


@test
def xreadgroup_blocked_on_a_deleted_or_replaced_stream_gets_unblocked_error(srv):
    r = srv.client()
    for how in ("DEL", "SET", "FLUSHALL"):
        r.delete("s")
        r.xgroup_create("s", "g", id="$", mkstream=True)
        c = block(srv, r, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
        if how == "DEL":
            r.delete("s")
        elif how == "SET":
            r.set("s", "x")
        else:
            r.flushall()
        e = c.read_reply()
        assert isinstance(e, RespError) and "UNBLOCKED the stream key no longer exists" in str(e), (how, e)
    # a plain XREAD keeps waiting when its key is deleted
    c = block(srv, r, "XREAD", "BLOCK", "0", "STREAMS", "z", "$")
    r.set("z", "1")
    r.delete("z")
    assert no_reply(c)
    r.xadd("z", {"f": "v"}, id="1-0")
    assert c.read_reply() == [[b"z", [[b"1-0", [b"f", b"v"]]]]]


@test
def xread_block_inside_multi_and_scripts_does_not_block(srv):
    r = srv.client()
    c = srv.raw()
    c.command("MULTI")
    c.command("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    assert c.command("EXEC") == [None]
    e = c.command("EVAL", "return redis.call('XREAD','BLOCK','0','STREAMS','s','$')", "0")
    assert isinstance(e, RespError) and "not allowed with BLOCK option from scripts" in str(e), e
    assert blocked(r) == 0


@test
def a_served_xreadgroup_is_in_the_pel_after_sigkill():
    srv = Server(appendfsync="always")
    srv.start()
    try:
        r = srv.client()
        r.xgroup_create("s", "g", id="$", mkstream=True)
        c = block(srv, r, "XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
        r.xadd("s", {"f": "v"}, id="1-0")
        assert c.read_reply() == [[b"s", [[b"1-0", [b"f", b"v"]]]]]
        srv.kill9()
        srv.start()
        r = srv.client()
        p = r.xpending_range("s", "g", "-", "+", 10)
        assert [(x["message_id"], x["consumer"]) for x in p] == [(b"1-0", b"a")]
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
