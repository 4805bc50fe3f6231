"""test_hostile_input.py -- inputs that once made the server read out of
bounds or overflow (found by AddressSanitizer / UndefinedBehaviorSanitizer,
which tests/run.sh runs these tests under as well): replies compared with
the real redis-server byte for byte.

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, test, main
from redis_compare import RealRedis, compare_with_redis


def exchange(port, data, replies):
    c = RawConn(port)
    c.send(data)
    out = []
    for _ in range(replies):
        c.read_reply()
        out.append(c.last_raw)
    c.close()
    return out


def same_bytes_as_redis(srv, data, replies):
    ref = RealRedis()
    try:
        want = exchange(ref.port, data, replies)
    finally:
        ref.close()
    got = exchange(srv.port, data, replies)
    assert got == want, "strata %r\nredis  %r" % (got, want)


@test
def command_names_with_nul_bytes_are_unknown_commands(srv):
    # A name longer than a table name it shares a prefix with ("get\0lv")
    # was compared past the end of the table's string.
    enc = RawConn.encode
    data = (enc(b"get\x00lv", b"k") + enc(b"ge\x00", b"a\nb") + enc(b"\x00", b"x")
            + enc(b"set", b"k\x00", b"\x00") + enc(b"get", b"k\x00"))
    same_bytes_as_redis(srv, data, 5)
    # Every table name followed by a NUL and a suffix: some of these hash
    # into the probe chain that holds the name itself.
    c = srv.raw()
    names = c.command("COMMAND", "LIST")
    for n in names:  # a pipeline per name: the replies are read as they come
        c.send(b"".join(enc(n + b"\x00" + b"%d" % i) for i in range(300)))
        for _ in range(300):
            assert isinstance(c.read_reply(), Exception)
    assert c.command("PING") == "PONG"


@test
def ttl_replies_near_the_largest_expire_do_not_overflow(srv):
    compare_with_redis(srv, """
set k v
pexpireat k 9223372036854775807
expiretime k
pexpiretime k
pexpireat k 9223372036854775499
expiretime k
pexpireat k 9223372036854775500
expiretime k
expireat k 9223372036854775
expiretime k
pexpiretime k
""")


if __name__ == "__main__":
    main()
