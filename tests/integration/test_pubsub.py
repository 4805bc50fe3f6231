"""test_pubsub.py -- SUBSCRIBE/PSUBSCRIBE/SSUBSCRIBE and their UNSUBSCRIBEs,
PUBLISH/SPUBLISH, PUBSUB, RESP2 subscribed mode, RESP3 pushes between normal
replies, CLIENT LIST sub/psub/ssub, and the pubsub output-buffer limit.
Byte-exact replies are compared against a real redis-server."""
import os
import socket
import time

import redis

from harness import RawConn, RespError, Server, main, test, wait_for
from redis_compare import RealRedis, compare_with_redis


def both(srv):
    """A RawConn to strata and one to a fresh redis-server."""
    ref = RealRedis()
    return srv.raw(), RawConn(ref.port), ref


def same_bytes(a, b, *cmd):
    """Sends cmd to both and reads one reply each; the bytes must match."""
    a.send(RawConn.encode(*cmd))
    b.send(RawConn.encode(*cmd))
    ra, rb = a.read_reply(), b.read_reply()
    assert a.last_raw == b.last_raw, "%r: strata %r, redis %r" % (cmd, a.last_raw, b.last_raw)
    return ra


def read_same(a, b, n=1):
    for _ in range(n):
        a.read_reply()
        b.read_reply()
        assert a.last_raw == b.last_raw, "strata %r, redis %r" % (a.last_raw, b.last_raw)


@test
def subscribe_confirmations_and_messages_match_redis_bytes(srv):
    a, b, ref = both(srv)
    pa, pb = srv.raw(), RawConn(ref.port)
    try:
        # One confirmation per channel, counted across channels and patterns.
        a.send(RawConn.encode("SUBSCRIBE", "c1", "c2", "c1"))
        b.send(RawConn.encode("SUBSCRIBE", "c1", "c2", "c1"))
        read_same(a, b, 3)
        a.send(RawConn.encode("PSUBSCRIBE", "c*", "x?"))
        b.send(RawConn.encode("PSUBSCRIBE", "c*", "x?"))
        read_same(a, b, 2)
        for p in (pa, pb):
            assert p.command("PUBLISH", "c1", "hello") == 2
            assert p.command("PUBLISH", "xy", "bin\x00\r\n") == 1
            assert p.command("PUBLISH", "nobody", "x") == 0
        read_same(a, b, 3)  # message c1, pmessage c* c1, pmessage x? xy
        assert same_bytes(a, b, "PING") == [b"pong", b""]
        assert same_bytes(a, b, "PING", "x") == [b"pong", b"x"]
        # Unsubscribing what one is not subscribed to still confirms.
        a.send(RawConn.encode("UNSUBSCRIBE", "c2", "nope"))
        b.send(RawConn.encode("UNSUBSCRIBE", "c2", "nope"))
        read_same(a, b, 2)
        a.send(RawConn.encode("PUNSUBSCRIBE"))
        b.send(RawConn.encode("PUNSUBSCRIBE"))
        read_same(a, b, 2)
        same_bytes(a, b, "UNSUBSCRIBE")
        # Out of subscribed mode: nothing left, a null name confirms.
        same_bytes(a, b, "UNSUBSCRIBE")
        same_bytes(a, b, "PUNSUBSCRIBE")
        assert same_bytes(a, b, "PING") == "PONG"
    finally:
        ref.close()


@test
def resp2_subscribed_mode_allows_only_pubsub_ping_quit_reset(srv):
    a, b, ref = both(srv)
    try:
        a.send(RawConn.encode("SUBSCRIBE", "ch"))
        b.send(RawConn.encode("SUBSCRIBE", "ch"))
        read_same(a, b)
        for cmd in (("GET", "k"), ("SET", "k", "v"), ("CLIENT", "ID"), ("INFO",)):
            e = same_bytes(a, b, *cmd)
            assert isinstance(e, RespError) and "only (P|S)SUBSCRIBE" in str(e), e
        same_bytes(a, b, "SSUBSCRIBE", "s1")
        same_bytes(a, b, "SUNSUBSCRIBE", "s1")
        assert same_bytes(a, b, "RESET") == "RESET"
        assert same_bytes(a, b, "GET", "k") is None  # normal mode again
        assert srv.client().pubsub_numsub("ch") == [(b"ch", 0)]
        a.send(RawConn.encode("SUBSCRIBE", "ch"))
        a.read_reply()
        assert a.command("QUIT") == "OK"
        assert a.closed_by_server()
        time.sleep(0.1)
        assert srv.client().pubsub_numsub("ch") == [(b"ch", 0)]
    finally:
        ref.close()


@test
def resp3_pushes_arrive_between_normal_replies(srv):
    a, b, ref = both(srv)
    try:
        for conn in (a, b):
            conn.command("HELLO", "3")
        same_bytes(a, b, "SUBSCRIBE", "ch")
        assert a.last_raw.startswith(b">3\r\n")
        assert same_bytes(a, b, "SET", "k", "v") == "OK"  # no subscribed mode in RESP3
        for port in (srv.port, ref.port):
            redis.Redis(port=port).publish("ch", "m1")
        read_same(a, b)
        assert a.last_raw == b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nm1\r\n"
        assert same_bytes(a, b, "GET", "k") == b"v"
        assert same_bytes(a, b, "PING") == "PONG"
        same_bytes(a, b, "UNSUBSCRIBE", "nope")
        assert a.last_raw.startswith(b">3\r\n")
        same_bytes(a, b, "UNSUBSCRIBE")
        same_bytes(a, b, "UNSUBSCRIBE")  # ">3 unsubscribe _ :0"
        assert b"_\r\n" in a.last_raw
    finally:
        ref.close()


@test
def pushes_bypass_client_reply_off(srv):
    r = srv.raw()
    r.command("HELLO", "3")
    r.send(RawConn.encode("CLIENT", "REPLY", "OFF"))
    r.send(RawConn.encode("SUBSCRIBE", "ch"))
    assert r.read_reply() == [b"subscribe", b"ch", 1]
    r.send(RawConn.encode("GET", "k"))  # no reply: replies are off
    assert srv.client().publish("ch", "hi") == 1
    assert r.read_reply() == [b"message", b"ch", b"hi"]


@test
def patterns_match_as_redis_globs(srv):
    sub = srv.raw()
    pats = ["h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "h\\*llo", "*"]
    sub.send(RawConn.encode("PSUBSCRIBE", *pats))
    for i, p in enumerate(pats):
        assert sub.read_reply() == [b"psubscribe", p.encode(), i + 1]
    pub = srv.client()
    assert pub.execute_command("PUBSUB", "NUMPAT") == len(pats)
    expect = {"hello": {"h?llo", "h*llo", "h[ae]llo", "*"},
              "hallo": {"h?llo", "h*llo", "h[ae]llo", "h[^e]llo", "h[a-b]llo", "*"},
              "h*llo": {"h?llo", "h*llo", "h\\*llo", "h[^e]llo", "*"},
              "heeello": {"h*llo", "*"},
              "x": {"*"}}
    for ch, want in expect.items():
        assert pub.publish(ch, "m") == len(want), ch
        got = {sub.read_reply()[1].decode() for _ in want}
        assert got == want, (ch, got)


@test
def shard_channels_are_their_own_namespace(srv):
    s, c = srv.raw(), srv.raw()
    assert s.command("SSUBSCRIBE", "ch") == [b"ssubscribe", b"ch", 1]
    c.send(RawConn.encode("SUBSCRIBE", "ch"))
    assert c.read_reply() == [b"subscribe", b"ch", 1]
    c.send(RawConn.encode("PSUBSCRIBE", "*"))
    assert c.read_reply() == [b"psubscribe", b"*", 2]
    pub = srv.client()
    assert pub.execute_command("SPUBLISH", "ch", "shard") == 1  # patterns never see it
    assert s.read_reply() == [b"smessage", b"ch", b"shard"]
    assert pub.publish("ch", "plain") == 2
    assert c.read_reply() == [b"message", b"ch", b"plain"]
    assert c.read_reply() == [b"pmessage", b"*", b"ch", b"plain"]
    assert pub.execute_command("PUBSUB", "SHARDCHANNELS") == [b"ch"]
    assert pub.execute_command("PUBSUB", "SHARDNUMSUB", "ch", "x") == [b"ch", 1, b"x", 0]
    assert pub.execute_command("PUBSUB", "NUMSUB", "ch") == [b"ch", 1]
    # The shard count is separate from channels + patterns.
    assert s.command("SSUBSCRIBE", "d") == [b"ssubscribe", b"d", 2]
    s.send(RawConn.encode("SUNSUBSCRIBE"))
    got = sorted([s.read_reply(), s.read_reply()], key=lambda m: m[2])
    assert [m[0] for m in got] == [b"sunsubscribe", b"sunsubscribe"] and [m[2] for m in got] == [0, 1]
    assert pub.execute_command("PUBSUB", "SHARDCHANNELS") == []


@test
def pubsub_introspection_and_errors_match_redis(srv):
    ref = RealRedis()
    try:
        subs = [srv.raw(), RawConn(ref.port)]
        for s in subs:
            s.send(RawConn.encode("SUBSCRIBE", "news.a", "news.b", "other"))
            s.send(RawConn.encode("PSUBSCRIBE", "news.*", "x", "news.*"))
            for _ in range(6):
                s.read_reply()
        a, b = srv.raw(), RawConn(ref.port)
        for cmd in (("PUBSUB", "NUMSUB", "news.a", "other", "none"), ("PUBSUB", "NUMSUB"),
                    ("PUBSUB", "NUMPAT"), ("PUBSUB", "SHARDNUMSUB", "news.a"),
                    ("PUBSUB", "SHARDCHANNELS"), ("PUBSUB", "CHANNELS", "nomatch*"),
                    ("PUBSUB", "CHANNELS", "a", "b"), ("PUBSUB", "NUMPAT", "x"), ("PUBSUB", "HELP"),
                    ("PUBSUB", "HELP", "x"), ("PUBSUB", "FOO"), ("PUBSUB",), ("PUBLISH", "a"),
                    ("SPUBLISH", "a", "b"), ("SUBSCRIBE",), ("PSUBSCRIBE",), ("SSUBSCRIBE",)):
            same_bytes(a, b, *cmd)
        for conn in (srv.client(), ref.client()):
            assert sorted(conn.execute_command("PUBSUB", "CHANNELS")) == [b"news.a", b"news.b", b"other"]
            assert sorted(conn.execute_command("PUBSUB", "CHANNELS", "news.*")) == [b"news.a", b"news.b"]
    finally:
        ref.close()


@test
def client_list_counts_subscriptions(srv):
    s = srv.raw()
    s.command("CLIENT", "SETNAME", "subber")
    s.send(RawConn.encode("SUBSCRIBE", "a", "b"))
    s.read_reply(), s.read_reply()
    s.send(RawConn.encode("PSUBSCRIBE", "p*"))
    s.read_reply()
    s.send(RawConn.encode("SSUBSCRIBE", "x", "y", "z"))
    for _ in range(3):
        s.read_reply()
    r = srv.client()
    line = [l for l in r.execute_command("CLIENT", "LIST").decode().splitlines() if "name=subber" in l][0]
    assert " flags=P " in line and " sub=2 psub=1 ssub=3 " in line, line
    typed = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").decode()
    assert "name=subber" in typed and typed.count("\n") == 1, typed
    assert "name=subber" not in r.execute_command("CLIENT", "LIST", "TYPE", "normal").decode()
    assert r.execute_command("CLIENT", "KILL", "TYPE", "pubsub") == 1
    assert s.closed_by_server()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1])
    return 0


def subscriber_that_never_reads(port, channel):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
    s.sendall(RawConn.encode("SUBSCRIBE", channel))
    return s


def subscribed(r, channel):
    """Waits until the server has run the SUBSCRIBE sent to channel (a
    fixed pause was too short when the machine is loaded)."""
    wait_for(lambda: r.pubsub_numsub(channel)[0][1] == 1, 30, "SUBSCRIBE " + channel)


@test
def subscriber_that_does_not_read_is_disconnected_at_the_hard_limit(srv):
    r = srv.client()
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == \
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    slow = subscriber_that_never_reads(srv.port, "firehose")
    subscribed(r, "firehose")
    base = rss_kb(srv.proc.pid)
    msg = b"x" * (1 << 20)
    delivered = 0
    for i in range(200):  # 200 MB offered; the limit is 32 MB
        delivered += r.publish("firehose", msg)
        if delivered and r.pubsub_numsub("firehose")[0][1] == 0:
            break
    assert r.pubsub_numsub("firehose")[0][1] == 0, "the slow subscriber is still there"
    # 32 MB in the output buffer plus what the sockets hold.
    assert delivered < 48, "disconnected only after %d MB" % delivered
    grown = rss_kb(srv.proc.pid) - base
    if not os.environ.get("STRATA_ASAN"):  # ASan keeps freed memory in quarantine
        assert grown < 120 * 1024, "server RSS grew by %d KB" % grown
    assert "scheduled to be closed ASAP for overcoming of output buffer limits" in srv.log_tail(50)
    assert r.ping()
    slow.close()


@test
def subscriber_over_the_soft_limit_for_its_seconds_is_disconnected(srv):
    r = srv.client()
    r.config_set("client-output-buffer-limit", "pubsub 0 1mb 1")
    slow = subscriber_that_never_reads(srv.port, "slowly")
    subscribed(r, "slowly")
    for _ in range(10):  # 10 MB over the soft limit, far below any hard one
        r.publish("slowly", b"y" * (1 << 20))
    assert r.pubsub_numsub("slowly")[0][1] == 1  # not at once: the soft limit has seconds
    deadline = time.time() + 30  # bounds a hang; the limit's second is counted by the server
    while r.pubsub_numsub("slowly")[0][1] and time.time() < deadline:
        r.publish("slowly", b"z" * 20000)  # as Redis: the limit is checked as replies grow
        time.sleep(0.1)
    assert r.pubsub_numsub("slowly")[0][1] == 0
    slow.close()


@test
def output_buffer_limit_setting_parses_as_redis(srv):
    compare_with_redis(srv, """
        CONFIG SET client-output-buffer-limit pubsub\\s1mb\\s512kb\\s10
        CONFIG GET client-output-buffer-limit
        CONFIG SET client-output-buffer-limit pubsub\\s1mb
        CONFIG SET client-output-buffer-limit bogus\\s1\\s1\\s1
        CONFIG SET client-output-buffer-limit master\\s1\\s1\\s1
        CONFIG SET client-output-buffer-limit pubsub\\sx\\s1\\s1
        CONFIG SET client-output-buffer-limit normal\\s1\\s1\\s-1
        CONFIG SET client-output-buffer-limit replica\\s1gb\\s1\\s0\\snormal\\s10\\s1\\s1
        CONFIG GET client-output-buffer-limit
    """)


if __name__ == "__main__":
    main()
