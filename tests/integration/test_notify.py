"""test_notify.py -- keyspace notifications, differential against a real
redis-server: the same commands run on both with a PSUBSCRIBE * client, and
the streams of (channel, message) must be equal, for every event class
(generic, string, hash, set, list, zset, geo,
stream, served blocking pops, expired lazily and actively, new, keymiss), both
channel kinds (K, E) and the notify-keyspace-events setting itself."""
import time

from harness import RawConn, RespError, Server, main, test, wait_for
from redis_compare import RealRedis


def drain(cmd, sub):
    """The (channel, message) pairs sub got before a marker cmd publishes."""
    cmd.command("PUBLISH", "__end__", "x")
    got = []
    while True:
        m = sub.read_reply()
        if m[2] == b"__end__":
            return got
        got.append((m[2].decode(), m[3].decode()))


def run_events(port, flags, script, wait=0.0, until=None):
    """Runs script (lists of arguments; a float is a pause in seconds) on
    one connection with notify-keyspace-events set to flags and returns
    the (channel, message) pairs a pattern subscriber got, in order. until,
    a predicate on that connection, is polled before the pairs are taken."""
    cmd = RawConn(port)
    assert cmd.command("CONFIG", "SET", "notify-keyspace-events", flags) == "OK"
    sub = RawConn(port)
    assert sub.command("PSUBSCRIBE", "*") == [b"psubscribe", b"*", 1]
    for step in script:
        if isinstance(step, float):
            time.sleep(step)
        else:
            cmd.command(*step)
    time.sleep(wait)
    if until:
        wait_for(lambda: until(cmd), 60, "the server's background work")
    return drain(cmd, sub)


def differential(srv, flags, script, wait=0.0, expect_some=True):
    ref = RealRedis("--enable-debug-command", "yes")
    try:
        for port in (srv.port, ref.port):
            RawConn(port).command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        a = run_events(srv.port, flags, script, wait)
        b = run_events(ref.port, flags, script, wait)
    finally:
        ref.close()
    assert a == b, "events differ:\nstrata %r\nredis  %r" % (a, b)
    assert a or not expect_some, "no events at all"
    return a


@test
def generic_events_match_redis(srv):
    differential(srv, "KEg", [
        ["SET", "a", "1"], ["DEL", "a", "nokey"], ["SET", "b", "2"], ["EXPIRE", "b", "100"],
        ["PEXPIRE", "b", "200000", "GT"], ["PERSIST", "b"], ["PERSIST", "b"],
        ["RENAME", "b", "c"], ["RENAMENX", "c", "d"], ["SET", "e", "1"], ["RENAMENX", "d", "e"],
        ["COPY", "d", "e", "REPLACE"], ["COPY", "d", "f"], ["COPY", "d", "g", "DB", "3"],
        ["EXPIRE", "f", "-1"], ["UNLINK", "d", "e", "nokey"], ["SET", "g", "1"],
        ["GETEX", "g", "EX", "100"], ["GETEX", "g", "PERSIST"], ["GETEX", "g", "PERSIST"],
        ["GETEX", "g", "PXAT", "1"], ["SET", "h", "1"], ["GETDEL", "h"], ["GETDEL", "h"],
        ["HSET", "hh", "f", "v", "f2", "v"], ["HDEL", "hh", "f"], ["HDEL", "hh", "f2"],
        ["SET", "x", "1", "EX", "100"], ["EXPIREAT", "x", "1"], ["RENAME", "nokey", "y"],
        ["FLUSHALL"]])


@test
def string_events_match_redis(srv):
    differential(srv, "KE$", [
        ["SET", "s", "v"], ["SET", "s", "v", "NX"], ["SET", "s", "w", "XX", "GET"], ["SETNX", "s", "x"],
        ["SETNX", "t", "x"], ["SETEX", "u", "100", "v"], ["PSETEX", "u", "100000", "v"],
        ["MSET", "m1", "1", "m2", "2"], ["MSETNX", "m1", "1", "m3", "3"], ["MSETNX", "m4", "4"],
        ["GETSET", "m1", "9"], ["INCR", "n"], ["DECRBY", "n", "5"], ["INCRBYFLOAT", "n", "1.5"],
        ["INCR", "s"], ["APPEND", "s", "more"], ["SETRANGE", "s", "2", "zz"],
        ["SETRANGE", "s", "1", ""], ["SETRANGE", "none", "0", ""], ["HSET", "h", "f", "v"],
        ["SET", "h", "str"], ["SET", "k", "v", "KEEPTTL"], ["SET", "k", "v", "PX", "100000"]])


@test
def hash_events_match_redis(srv):
    differential(srv, "KEh", [
        ["HSET", "h", "a", "1", "b", "2"], ["HMSET", "h", "c", "3"], ["HSETNX", "h", "a", "9"],
        ["HSETNX", "h", "z", "9"], ["HINCRBY", "h", "a", "5"], ["HINCRBYFLOAT", "h", "b", "0.5"],
        ["HINCRBY", "h", "c", "x"], ["HDEL", "h", "nofield"], ["HDEL", "h", "a", "b"],
        ["HDEL", "h", "c", "z"], ["SET", "s", "v"], ["HSET", "s", "f", "v"]])


@test
def bitmap_and_hyperloglog_events_match_redis(srv):
    differential(srv, "KEA", [
        ["SETBIT", "b", "7", "1"], ["SETBIT", "b", "7", "1"], ["SETBIT", "b", "100", "0"],
        ["BITFIELD", "f", "SET", "u8", "0", "255"], ["BITFIELD", "f", "GET", "u8", "0"],
        ["BITFIELD", "f", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "10"],
        ["BITFIELD", "f", "SET", "u8", "0", "255"], ["BITOP", "OR", "d", "b", "f"],
        ["BITOP", "AND", "d", "nokey"], ["BITOP", "AND", "d", "nokey"],
        ["PFADD", "h", "a", "b"], ["PFADD", "h", "a"], ["PFADD", "h2"], ["PFCOUNT", "h"],
        ["PFMERGE", "h3", "h", "h2"]])


@test
def set_and_move_events_match_redis(srv):
    differential(srv, "KEA", [
        ["SADD", "s", "a", "b", "c"], ["SADD", "s", "a"], ["SREM", "s", "x"], ["SREM", "s", "a"],
        ["SMOVE", "s", "s", "b"], ["SMOVE", "s", "t", "b"], ["SADD", "t", "c"],
        ["SMOVE", "s", "t", "c"], ["SMOVE", "s", "t", "c"], ["SPOP", "t"], ["SPOP", "t", "0"],
        ["SADD", "u", "1", "2", "3"], ["SPOP", "u", "2"], ["SPOP", "u", "5"], ["SPOP", "u"],
        ["SADD", "a", "1", "2"], ["SADD", "b", "2", "3"], ["SINTERSTORE", "d", "a", "b"],
        ["SUNIONSTORE", "d", "a", "b"], ["SDIFFSTORE", "d", "a", "b"],
        ["SINTERSTORE", "d", "a", "nokey"], ["SINTERSTORE", "d", "a", "nokey"],
        ["SDIFFSTORE", "e", "a", "a"], ["SREM", "a", "1", "2"], ["SADD", "str", "x"],
        ["SET", "str", "v"], ["SADD", "str", "x"], ["SMOVE", "b", "str", "2"],
        ["MOVE", "b", "4"], ["MOVE", "nokey", "4"], ["SINTERCARD", "1", "b"]])
    # "new" in Redis's order among the others (SMOVE: after src's srem/del).
    differential(srv, "EAn", [
        ["FLUSHALL"], ["SADD", "s", "a", "b"], ["SMOVE", "s", "t", "a"], ["SMOVE", "s", "u", "b"],
        ["SUNIONSTORE", "x", "t"], ["MOVE", "x", "2"]])


@test
def list_events_match_redis(srv):
    differential(srv, "KEAn", [
        ["LPUSH", "l", "a", "b", "c"], ["RPUSH", "l", "d"], ["LPUSHX", "l", "e"],
        ["RPUSHX", "nokey", "e"], ["LPOP", "l"], ["RPOP", "l", "2"], ["LPOP", "l", "0"],
        ["LINSERT", "l", "BEFORE", "b", "x"], ["LINSERT", "l", "AFTER", "nope", "x"],
        ["LSET", "l", "0", "y"], ["LREM", "l", "0", "nope"], ["LREM", "l", "1", "y"],
        ["RPUSH", "l", "p", "q", "r"], ["LTRIM", "l", "0", "-1"], ["LTRIM", "l", "1", "2"],
        ["LMOVE", "l", "m", "LEFT", "RIGHT"], ["RPOPLPUSH", "l", "m"], ["LMOVE", "m", "m", "LEFT", "LEFT"],
        ["LMOVE", "nokey", "m", "LEFT", "LEFT"], ["LMPOP", "2", "nokey", "m", "RIGHT", "COUNT", "5"],
        ["RPUSH", "t", "1", "2"], ["LTRIM", "t", "5", "6"], ["RPUSH", "u", "1", "2"],
        ["LREM", "u", "0", "1"], ["LREM", "u", "0", "2"], ["RPUSH", "v", "1"], ["BLPOP", "v", "0"],
        ["RPUSH", "v", "1"], ["BRPOP", "v", "0"], ["RPUSH", "w", "1", "2"],
        ["BLMOVE", "w", "z", "RIGHT", "LEFT", "0"], ["BRPOPLPUSH", "w", "z", "0"],
        ["BLMPOP", "0", "1", "z", "LEFT", "COUNT", "9"], ["SET", "s", "v"], ["LPUSH", "s", "x"],
        ["RPUSH", "g", "1"], ["LMOVE", "g", "s", "LEFT", "LEFT"]])


@test
def zset_and_geo_events_match_redis(srv):
    differential(srv, "KEAn", [
        ["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["ZADD", "z", "1", "a"], ["ZADD", "z", "5", "a"],
        ["ZADD", "z", "NX", "9", "a"], ["ZADD", "z", "INCR", "0", "a"], ["ZINCRBY", "z", "2", "b"],
        ["ZINCRBY", "z", "0", "b"], ["ZREM", "z", "nope"], ["ZREM", "z", "c"],
        ["ZADD", "z", "1", "c", "2", "d", "3", "e", "4", "f"], ["ZREMRANGEBYRANK", "z", "0", "0"],
        ["ZREMRANGEBYRANK", "z", "10", "20"], ["ZREMRANGEBYSCORE", "z", "100", "200"],
        ["ZREMRANGEBYSCORE", "z", "2", "3"], ["ZADD", "lx", "0", "a", "0", "b"],
        ["ZREMRANGEBYLEX", "lx", "[a", "[a"], ["ZREMRANGEBYLEX", "lx", "-", "+"],
        ["ZPOPMIN", "z"], ["ZPOPMAX", "z", "2"], ["ZPOPMIN", "z", "0"], ["ZPOPMIN", "nokey"],
        ["ZADD", "p", "1", "a", "2", "b"], ["ZPOPMAX", "p", "10"], ["ZADD", "p", "1", "a"],
        ["ZADD", "q", "1", "a", "2", "b"], ["ZMPOP", "2", "nokey", "q", "MIN"],
        ["BZPOPMIN", "q", "0"], ["ZADD", "q", "1", "a", "2", "b"], ["BZPOPMAX", "q", "0"],
        ["BZMPOP", "0", "1", "q", "MAX", "COUNT", "5"], ["ZADD", "q", "1", "a", "2", "b"],
        ["ZUNIONSTORE", "u", "2", "p", "q"], ["ZINTERSTORE", "u", "2", "p", "q"],
        ["ZINTERSTORE", "u", "2", "p", "nokey"], ["ZINTERSTORE", "u", "2", "p", "nokey"],
        ["ZDIFFSTORE", "d", "2", "q", "p"], ["ZDIFFSTORE", "d", "1", "nokey"],
        ["ZRANGESTORE", "r", "q", "0", "-1"], ["ZRANGESTORE", "r", "q", "5", "6"],
        ["ZRANGESTORE", "r", "nokey", "0", "-1"], ["ZRANGESTORE", "r", "nokey", "0", "-1"],
        ["SET", "s", "v"], ["ZADD", "s", "1", "a"], ["ZINCRBY", "s", "1", "a"],
        ["GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"],
        ["GEOADD", "g", "13.361389", "38.115556", "Palermo"],
        ["GEOADD", "g", "XX", "CH", "13.5", "38.1", "Palermo"],
        ["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"],
        ["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
        ["GEOSEARCHSTORE", "gs", "g", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"],
        ["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "gr"],
        ["GEORADIUSBYMEMBER", "g", "Palermo", "500", "km", "STOREDIST", "gr"],
        ["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "gr"],
        ["GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "gr"]])


@test
def served_blocking_xreadgroup_notifies_as_redis(srv):
    served_differential(srv, "KEA", [
        (["XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">"],
         ["XADD", "s", "1-1", "f", "v"]),
        (["XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "STREAMS", "s", ">"],
         ["XADD", "s", "2-1", "f", "v"])], setup=[["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]])


@test
def served_blocking_zset_pops_notify_as_redis(srv):
    served_differential(srv, "KEA", [
        (["BZPOPMIN", "a", "0"], ["ZADD", "a", "1", "x"]),
        (["BZPOPMAX", "a", "0"], ["ZADD", "a", "1", "x", "2", "y"]),
        (["BZMPOP", "0", "2", "n", "b", "MIN", "COUNT", "5"], ["ZADD", "b", "1", "x", "2", "y"])])


@test
def stream_events_match_redis(srv):
    differential(srv, "KEAn", [
        ["XADD", "s", "1-1", "f", "v"], ["XADD", "s", "2-1", "f", "v"], ["XADD", "s", "3-1", "f", "v"],
        ["XADD", "s", "MAXLEN", "2", "4-1", "f", "v"], ["XADD", "s", "MAXLEN", "5", "5-1", "f", "v"],
        ["XADD", "nokey", "NOMKSTREAM", "*", "f", "v"], ["XTRIM", "s", "MAXLEN", "10"],
        ["XTRIM", "s", "MAXLEN", "2"], ["XTRIM", "nokey", "MAXLEN", "2"], ["XDEL", "s", "1-1"],
        ["XDEL", "s", "5-1"], ["XSETID", "s", "9-9"], ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "CREATE", "s", "g", "0"], ["XGROUP", "CREATE", "m", "g", "$", "MKSTREAM"],
        ["XGROUP", "SETID", "s", "g", "$"], ["XGROUP", "CREATECONSUMER", "s", "g", "c1"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "c1"], ["XGROUP", "DELCONSUMER", "s", "g", "c1"],
        ["XGROUP", "DELCONSUMER", "s", "g", "c1"], ["XGROUP", "DESTROY", "s", "g"],
        ["XGROUP", "DESTROY", "s", "g"], ["SET", "str", "v"], ["XADD", "str", "*", "f", "v"]])


@test
def implicit_consumer_creation_notifies_as_redis(srv):
    differential(srv, "KEt", [
        ["XADD", "s", "1-1", "f", "v"], ["XADD", "s", "2-1", "f", "v"],
        ["XGROUP", "CREATE", "s", "g", "0"], ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "1",
                                              "STREAMS", "s", ">"],
        ["XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">"],
        ["XCLAIM", "s", "g", "c2", "0", "1-1"], ["XAUTOCLAIM", "s", "g", "c3", "0", "0"],
        ["XAUTOCLAIM", "s", "g", "c3", "0", "0"]])


def served_events(port, flags, steps, setup=()):
    """Blocks one client per (command, push) step, then pushes from another
    and returns the pattern subscriber's events for the served pops."""
    cmd = RawConn(port)
    assert cmd.command("CONFIG", "SET", "notify-keyspace-events", flags) == "OK"
    sub = RawConn(port)
    for step in setup:
        cmd.command(*step)
    assert sub.command("PSUBSCRIBE", "*") == [b"psubscribe", b"*", 1]
    for blocking, wake in steps:
        b = RawConn(port)
        b.send(RawConn.encode(*blocking))
        while b"blocked_clients:1" not in cmd.command("INFO", "clients"):
            time.sleep(0.01)
        cmd.command(*wake)
        b.read_reply()
    return drain(cmd, sub)


def served_differential(srv, flags, steps, setup=()):
    ref = RealRedis()
    try:
        a = served_events(srv.port, flags, steps, setup)
        b = served_events(ref.port, flags, steps, setup)
    finally:
        ref.close()
    assert a == b, "events differ:\nstrata %r\nredis  %r" % (a, b)
    assert a, "no events at all"


@test
def served_blocking_list_pops_notify_as_redis(srv):
    served_differential(srv, "KEA", [
        (["BLPOP", "a", "0"], ["RPUSH", "a", "1"]),
        (["BRPOP", "a", "0"], ["RPUSH", "a", "1", "2"]),
        (["BLMOVE", "b", "c", "LEFT", "RIGHT", "0"], ["RPUSH", "b", "1"]),
        (["BRPOPLPUSH", "d", "c", "0"], ["LPUSH", "d", "1", "2"]),
        (["BLMPOP", "0", "2", "x", "e", "RIGHT", "COUNT", "5"], ["RPUSH", "e", "1", "2"])])


@test
def keyspace_and_keyevent_channels_in_order_and_per_db(srv):
    differential(srv, "KEA", [
        ["SET", "k", "v"], ["SELECT", "5"], ["SET", "k", "v"], ["HSET", "h", "f", "v"],
        ["DEL", "k"], ["SELECT", "0"], ["APPEND", "k", "x"]])
    # Only K, or only E, or classes without K/E: nothing or one channel kind.
    differential(srv, "Kg", [["SET", "k", "v"], ["DEL", "k"]])
    differential(srv, "Eg", [["SET", "k", "v"], ["DEL", "k"]])
    differential(srv, "g$h", [["SET", "k", "v"], ["DEL", "k"]], expect_some=False)


@test
def new_key_events_match_redis(srv):
    differential(srv, "En", [
        ["SET", "foo", "bar"], ["SET", "foo", "baz"], ["SET", "bar", "bar"],
        ["HSET", "h", "f", "v"], ["HSET", "h", "g", "v"], ["MSET", "foo", "1", "m", "2"],
        ["RENAME", "foo", "r"], ["RENAME", "r", "bar"], ["COPY", "bar", "c"],
        ["COPY", "bar", "h", "REPLACE"], ["INCR", "n"], ["APPEND", "ap", "x"]])


@test
def keymiss_events_match_redis(srv):
    differential(srv, "Em", [
        ["GET", "nokey"], ["MGET", "a", "b"], ["EXISTS", "x"], ["TYPE", "y"], ["TTL", "z"],
        ["STRLEN", "s"], ["HGET", "h", "f"], ["HGETALL", "h2"], ["HMGET", "h3", "a"],
        ["HLEN", "h4"], ["SET", "k", "v"], ["GET", "k"], ["GETDEL", "gd"]])


@test
def expired_event_when_a_read_removes_the_key(srv):
    # Active expiry off on both: only the GET can remove the key.
    ref = RealRedis("--enable-debug-command", "yes")
    try:
        out = []
        for port in (srv.port, ref.port):
            c = RawConn(port)
            c.command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
            out.append(run_events(port, "KEx", [
                ["SET", "k", "v", "PX", "50"], ["HSET", "h", "f", "v"], ["PEXPIRE", "h", "50"],
                0.2, ["GET", "k"], ["GET", "k"], ["HGET", "h", "f"], ["SET", "w", "v", "PX", "50"],
                0.2, ["SET", "w", "new"], ["EXISTS", "k", "w"]]))
        assert out[0] == out[1], "strata %r\nredis  %r" % tuple(out)
        assert out[0] == [("__keyspace@0__:k", "expired"), ("__keyevent@0__:expired", "k"),
                          ("__keyspace@0__:h", "expired"), ("__keyevent@0__:expired", "h"),
                          ("__keyspace@0__:w", "expired"), ("__keyevent@0__:expired", "w")], out[0]
        assert "expired_keys:3" in RawConn(srv.port).command("INFO", "stats").decode()
    finally:
        ref.close()


@test
def expired_indexed_hash_removed_by_a_read_leaves_its_indexes(srv):
    # The index hooks read the key's expiry while the read's lazy expiry
    # removes it: that read must not expire the key once more (it recursed).
    c = srv.raw()
    c.command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    assert c.command("FT.CREATE", "people", "ON", "HASH", "PREFIX", "1", "p:", "SCHEMA",
                     "age", "NUMERIC", "tag", "TAG") == "OK"
    assert c.command("IDX.CREATE", "ages", "PREFIX", "p:", "SCHEMA", "age", "NUMERIC") == "OK"
    got = run_events(srv.port, "KEx", [
        ["HSET", "p:1", "age", "30", "tag", "a"], ["HSET", "p:2", "age", "40", "tag", "a"],
        ["PEXPIRE", "p:1", "30"], 0.1, ["HGET", "p:1", "age"], ["HGETALL", "p:1"]])
    assert got == [("__keyspace@0__:p:1", "expired"), ("__keyevent@0__:expired", "p:1")], got
    assert c.command("FT.SEARCH", "people", "@tag:{a}", "NOCONTENT") == [1, b"p:2"]
    assert c.command("IDX.CHECK") == []


@test
def expired_event_from_the_active_cycle(srv):
    # Polled: how soon the cycle gets to the keys depends on the load.
    got = run_events(srv.port, "Ex", [["SET", "k", "v", "PX", "100"], ["HSET", "h", "f", "v"],
                                      ["PEXPIRE", "h", "100"]],
                     until=lambda c: c.command("DBSIZE") == 0)
    assert sorted(got) == [("__keyevent@0__:expired", "h"), ("__keyevent@0__:expired", "k")], got
    c = RawConn(srv.port)
    assert c.command("DBSIZE") == 0
    assert "expired_keys:2" in c.command("INFO", "stats").decode()


@test
def failed_commands_notify_nothing(srv):
    got = differential(srv, "KEA", [
        ["SET", "s", "abc"], ["INCR", "s"], ["HSET", "s", "f", "v"], ["SET", "k"], ["MULTI"],
        ["SET", "q", "1"], ["INCR", "s"], ["EXEC"]])
    assert [m for m in got if "incr" in m[0] or "incr" in m[1]] == []


@test
def setting_parses_and_prints_as_redis(srv):
    ref = RealRedis()
    try:
        a, b = RawConn(srv.port), RawConn(ref.port)
        for flags in ("", "gKE", "$lshzxeKE", "KA", "EA", "AKEmn", "nK", "Agn", "gx$lshzxet",
                      "m", "Kd", "Q", "KEQ", "a"):
            ra = a.command("CONFIG", "SET", "notify-keyspace-events", flags)
            rb = b.command("CONFIG", "SET", "notify-keyspace-events", flags)
            assert a.last_raw == b.last_raw, (flags, a.last_raw, b.last_raw)
            ga = a.command("CONFIG", "GET", "notify-keyspace-events")
            gb = b.command("CONFIG", "GET", "notify-keyspace-events")
            assert ga == gb, (flags, ga, gb)
    finally:
        ref.close()


if __name__ == "__main__":
    main()
