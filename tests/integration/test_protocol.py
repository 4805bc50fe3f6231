"""test_protocol.py -- the wire protocol: inline and multibulk requests,
pipelining, RESP3 encodings, protocol errors and limits, redis-cli.

Error texts are Redis 7's (checked against redis-server 7.0)."""
import socket
import subprocess
import time

from harness import RawConn, RespError, Server, main, test


def assert_error(reply, text):
    assert isinstance(reply, RespError), "expected error %r, got %r" % (text, reply)
    assert str(reply) == text, "error %r, expected %r" % (str(reply), text)


@test
def inline_commands_work_like_telnet(srv):
    r = srv.raw()
    r.send(b"PING\r\n")
    assert r.read_reply() == "PONG"
    r.send(b"set greeting \"hello world\"\r\nget greeting\n")
    assert r.read_reply() == "OK"
    assert r.read_reply() == b"hello world"
    r.send(b"echo 'it\\'s'\r\n\r\n   \r\necho \"\\x41\\tB\"\r\n")
    assert r.read_reply() == b"it's"
    assert r.read_reply() == b"A\tB"


@test
def inline_unbalanced_quotes_close_the_connection(srv):
    r = srv.raw()
    r.send(b"set a \"b\r\n")
    assert_error(r.read_reply(), "ERR Protocol error: unbalanced quotes in request")
    assert r.closed_by_server()
    assert srv.client().ping()


@test
def multibulk_request_split_across_many_writes(srv):
    r = srv.raw()
    req = RawConn.encode("SET", "k", "v" * 1000) + RawConn.encode("GET", "k")
    for i in range(0, len(req), 7):
        r.send(req[i:i + 7])
        if i % 140 == 0:
            time.sleep(0.001)
    assert r.read_reply() == "OK"
    assert r.read_reply() == b"v" * 1000


@test
def pipeline_of_10000_commands_on_a_raw_socket(srv):
    r = srv.raw()
    n = 10000
    r.send(b"".join(RawConn.encode("SET", "key:%d" % i, "val:%d" % i) for i in range(n)))
    for i in range(n):
        assert r.read_reply() == "OK"
    r.send(b"".join(RawConn.encode("GET", "key:%d" % i) for i in range(n)))
    for i in range(n):
        got = r.read_reply()
        assert got == b"val:%d" % i, (i, got)
    r.send(b"PING\r\n" * n)
    for i in range(n):
        assert r.read_reply() == "PONG"


@test
def pipeline_of_10000_commands_with_redis_py(srv):
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(10000):
        p.set("p:%d" % i, i)
    assert all(x is True for x in p.execute())
    p = c.pipeline(transaction=False)
    for i in range(10000):
        p.get("p:%d" % i)
    assert p.execute() == [str(i).encode() for i in range(10000)]
    assert c.dbsize() == 10000


@test
def big_values_round_trip(srv):
    c = srv.client()
    for size in (0, 1, 16383, 16384, 16385, 1 << 20, 5 << 20):
        v = bytes((i * 7) & 0xFF for i in range(size))
        assert c.set("big", v)
        assert c.get("big") == v, size


@test
def resp3_encodings_after_hello_3(srv):
    r = srv.raw()
    hello = r.command("HELLO", "3")
    assert r.last_raw.startswith(b"%7\r\n"), r.last_raw[:20]
    assert hello[b"proto"] == 3 and hello[b"server"] == b"redis"
    assert r.command("GET", "missing") is None and r.last_raw == b"_\r\n"
    assert r.command("DEBUG", "PROTOCOL", "null") is None and r.last_raw == b"_\r\n"
    assert r.command("DEBUG", "PROTOCOL", "double") == 3.141 and r.last_raw == b",3.141\r\n"
    assert r.command("DEBUG", "PROTOCOL", "true") is True and r.last_raw == b"#t\r\n"
    assert r.command("DEBUG", "PROTOCOL", "false") is False and r.last_raw == b"#f\r\n"
    m = r.command("DEBUG", "PROTOCOL", "map")
    assert r.last_raw == b"%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n", r.last_raw
    assert m == {0: False, 1: True, 2: False}
    r.command("DEBUG", "PROTOCOL", "set")
    assert r.last_raw == b"~3\r\n:0\r\n:1\r\n:2\r\n"
    r.command("DEBUG", "PROTOCOL", "verbatim")
    assert r.last_raw.startswith(b"=29\r\ntxt:This is a verbatim\n"), r.last_raw
    r.command("CONFIG", "GET", "port")
    assert r.last_raw.startswith(b"%1\r\n$4\r\nport\r\n"), r.last_raw


@test
def resp2_encodings_by_default(srv):
    r = srv.raw()
    assert r.command("GET", "missing") is None and r.last_raw == b"$-1\r\n"
    r.command("DEBUG", "PROTOCOL", "double")
    assert r.last_raw == b"$5\r\n3.141\r\n"
    r.command("DEBUG", "PROTOCOL", "true")
    assert r.last_raw == b":1\r\n"
    r.command("DEBUG", "PROTOCOL", "map")
    assert r.last_raw == b"*6\r\n:0\r\n:0\r\n:1\r\n:1\r\n:2\r\n:0\r\n", r.last_raw
    r.command("HELLO", "3")
    r.command("HELLO", "2")
    r.command("DEBUG", "PROTOCOL", "null")
    assert r.last_raw == b"$-1\r\n"


@test
def garbage_closes_only_that_connection(srv):
    good = srv.client()
    good.set("kept", "yes")
    cases = [
        (b"*1\r\n$x\r\n", "ERR Protocol error: invalid bulk length"),
        (b"*abc\r\n", "ERR Protocol error: invalid multibulk length"),
        (b"*1\r\n+foo\r\n", "ERR Protocol error: expected '$', got '+'"),
        (b"*2\r\n$3\r\nGET\r\n:1\r\n", "ERR Protocol error: expected '$', got ':'"),
        (b"*1\r\n$-3\r\n", "ERR Protocol error: invalid bulk length"),
        (b"*3000000000\r\n", "ERR Protocol error: invalid multibulk length"),
    ]
    for data, err in cases:
        r = srv.raw()
        r.send(data)
        assert_error(r.read_reply(), err)
        assert r.closed_by_server(), data
    # Random binary junk: whatever the reply, the server survives.
    import random
    rnd = random.Random(7)
    for _ in range(20):
        r = srv.raw()
        try:
            r.send(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 300))) + b"\r\n")
            r.closed_by_server(0.2)
        except OSError:
            pass
        r.close()
    assert good.get("kept") == b"yes"
    assert good.ping()


@test
def huge_bulk_header_is_rejected_without_allocating(srv):
    c = srv.client()
    rss_before = c.info("memory")["used_memory_rss"]
    r = srv.raw()
    r.send(b"*1\r\n$600000000\r\n")
    assert_error(r.read_reply(), "ERR Protocol error: invalid bulk length")
    assert r.closed_by_server()
    rss_after = c.info("memory")["used_memory_rss"]
    assert rss_after - rss_before < 50 << 20, (rss_before, rss_after)
    assert c.ping()


@test
def bulk_over_proto_max_bulk_len_is_rejected(srv):
    c = srv.client()
    assert c.config_set("proto-max-bulk-len", "1mb")
    r = srv.raw()
    r.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n")
    assert_error(r.read_reply(), "ERR Protocol error: invalid bulk length")
    assert r.closed_by_server()
    assert c.set("k", b"x" * (1 << 20))  # exactly the limit is fine


@test
def query_buffer_limit_closes_the_client(srv):
    c = srv.client()
    assert c.config_set("client-query-buffer-limit", "1mb")
    r = srv.raw()
    # A 3 MB value is within proto-max-bulk-len but over the query buffer limit.
    r.send(b"*3\r\n$3\r\nSET\r\n$1\r\nq\r\n$3000000\r\n")
    try:
        r.send(b"x" * (3000000))
    except OSError:
        pass  # the server may close while we are still sending
    assert r.closed_by_server()
    assert c.get("q") is None
    assert c.ping()


@test
def long_inline_line_is_rejected(srv):
    r = srv.raw()
    try:
        r.send(b"a" * (70 * 1024))
    except OSError:
        pass
    assert_error(r.read_reply(), "ERR Protocol error: too big inline request")
    assert r.closed_by_server()


@test
def unknown_command_and_arity_errors_keep_the_connection(srv):
    r = srv.raw()
    assert_error(r.command("FOO", "a", "b"),
                 "ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")
    assert_error(r.command("nosuch"), "ERR unknown command 'nosuch', with args beginning with: ")
    assert_error(r.command("GET"), "ERR wrong number of arguments for 'get' command")
    assert_error(r.command("Set", "a"), "ERR wrong number of arguments for 'set' command")
    assert_error(r.command("ECHO"), "ERR wrong number of arguments for 'echo' command")
    assert r.command("ping") == "PONG"
    long_arg = "x" * 300
    e = r.command("FOO", long_arg)
    assert isinstance(e, RespError) and len(str(e)) < 300


@test
def empty_requests_are_ignored(srv):
    r = srv.raw()
    r.send(b"*0\r\n\r\n*-1\r\n*1\r\n$4\r\nPING\r\n")
    assert r.read_reply() == "PONG"


@test
def redis_cli_works(srv):
    rc, out = srv.cli("ping")
    assert rc == 0 and out.strip() == "PONG", out
    rc, out = srv.cli("set", "cli:key", "hello world")
    assert out.strip() == "OK", out
    rc, out = srv.cli("get", "cli:key")
    assert out.strip() == "hello world", out
    rc, out = srv.cli(input="set a 1\nget a\necho hi\n")
    assert out.split() == ["OK", "1", "hi"], out
    rc, out = srv.cli("--no-raw", "get", "missing")
    assert out.strip() == "(nil)", out
    rc, out = srv.cli("info", "server")
    assert "redis_version:" in out
    cmds = "".join("SET pipe:%d %d\r\n" % (i, i) for i in range(1000))
    rc, out = srv.cli("--pipe", input=cmds)
    assert rc == 0 and "errors: 0, replies: 1000" in out, out
    assert srv.client().get("pipe:999") == b"999"


@test
def many_clients_at_once(srv):
    conns = [srv.raw() for _ in range(200)]
    for i, r in enumerate(conns):
        r.send(RawConn.encode("SET", "c:%d" % i, i))
    for r in conns:
        assert r.read_reply() == "OK"
    for r in conns:
        r.close()
    assert srv.client().get("c:199") == b"199"


if __name__ == "__main__":
    main()
