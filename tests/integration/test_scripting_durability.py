"""test_scripting_durability.py -- what scripting promises beyond replies:
a script's writes are one engine batch (all or none after SIGKILL, indexes
exact), the writes before a runtime error are kept and the failing call's
are not, BUSY and SCRIPT KILL / FUNCTION KILL past busy-reply-threshold,
SHUTDOWN NOSAVE dropping a busy script's writes, and function libraries
surviving restarts and crashes."""
import os, random, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis

from harness import RawConn, RespError, Server, main, test

BUSY_EVAL = ("BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
             "SHUTDOWN NOSAVE.")
BUSY_FUNCTION = ("BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.")

# One script writes K strings and K indexed hashes named after its
# generation ARGV[1], and bumps a counter: all of it or nothing.
WRITE_MANY = """
local g = ARGV[1]
for i = 1, tonumber(ARGV[2]) do
  redis.call('set', 'a:' .. g .. ':' .. i, g)
  redis.call('hset', 'h:' .. g .. ':' .. i, 'n', i, 'g', g)
end
return redis.call('incr', 'scripts')
"""


def wait_for(pred, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


@test
def script_writes_survive_sigkill_all_or_none():
    srv = Server(appendfsync="always")
    srv.start()
    try:
        r = srv.client()
        assert r.execute_command("IDX.CREATE", "byn", "PREFIX", "h:", "SCHEMA", "n", "NUMERIC") == b"OK"
        sha = r.script_load(WRITE_MANY)
        k = 40
        acked = []
        stop = threading.Event()

        def burst(tag):
            c = srv.client(socket_timeout=5)
            n = 0
            try:
                while not stop.is_set():
                    g = "%s%d" % (tag, n)
                    c.evalsha(sha, 0, g, k)
                    acked.append(g)
                    n += 1
            except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError):
                pass

        threads = [threading.Thread(target=burst, args=(t,)) for t in "xy"]
        for t in threads:
            t.start()
        assert wait_for(lambda: len(acked) >= 5)
        time.sleep(random.uniform(0.05, 0.3))
        srv.kill9()
        stop.set()
        for t in threads:
            t.join()
        srv.start()
        r = srv.client()
        gens = set()
        for key in r.scan_iter("a:*", count=1000):
            gens.add(key.decode().split(":")[1])
        for g in acked:
            assert g in gens, "acknowledged script %s lost" % g
        for g in gens:
            strings = sum(1 for _ in r.scan_iter("a:%s:*" % g, count=1000))
            hashes = sum(1 for _ in r.scan_iter("h:%s:*" % g, count=1000))
            assert strings == k and hashes == k, "script %s half applied: %d strings, %d hashes" % (
                g, strings, hashes)
        assert int(r.get("scripts")) == len(gens)
        assert r.execute_command("IDX.CHECK") == []
        assert len(r.execute_command("IDX.RANGE", "byn")) == k * len(gens)
    finally:
        srv.cleanup()


@test
def runtime_error_keeps_earlier_writes_but_not_the_failing_call(srv):
    r = srv.client()
    r.execute_command("IDX.CREATE", "mail", "PREFIX", "u:", "UNIQUE", "SCHEMA", "email", "TAG")
    r.hset("u:1", "email", "a@x")
    script = """
    redis.call('set', 'before', '1')
    redis.call('hset', 'u:2', 'name', 'bob', 'email', 'a@x')
    redis.call('set', 'after', '1')
    """
    try:
        r.eval(script, 0)
        raise AssertionError("the UNIQUE violation should fail the script")
    except redis.ResponseError as e:
        assert "UNIQUE index 'mail'" in str(e), e
    assert r.get("before") == b"1"  # kept, as Redis keeps it
    assert r.exists("u:2") == 0  # the failing HSET wrote nothing
    assert r.get("after") is None  # never ran
    assert r.execute_command("IDX.CHECK") == []
    # redis.pcall: the script goes on after the failed call
    assert r.eval("local e = redis.pcall('hset', 'u:3', 'email', 'a@x'); "
                  "redis.call('set', 'after2', 'y'); return e['err']", 0).startswith(b"ERR UNIQUE")
    assert r.get("after2") == b"y" and r.exists("u:3") == 0


@test
def script_in_multi_exec_is_one_batch_with_the_transaction(srv):
    r = srv.raw()
    assert r.command("MULTI") == "OK"
    assert r.command("SET", "m", "1") == "QUEUED"
    assert r.command("EVAL", "return redis.call('incr', 'm')", "0") == "QUEUED"
    assert r.command("EVAL", "return redis.call('incr', 'nope', 'x')", "0") == "QUEUED"
    out = r.command("EXEC")
    assert out[:2] == ["OK", 2], out
    assert isinstance(out[2], RespError) and "Wrong number of args" in str(out[2]), out


def start_busy(srv, script, *args, fcall=False):
    """Runs a long script on its own connection; returns (thread, result)."""
    result = {}

    def run():
        c = RawConn(srv.port, timeout=60)
        cmd = ("FCALL" if fcall else "EVAL", script, 0) + args
        result["reply"] = c.command(*cmd)
        c.close()

    t = threading.Thread(target=run)
    t.start()
    return t, result


def busy_seen(r, text):
    return lambda: (lambda v: isinstance(v, RespError) and str(v) == text)(r.command("PING"))


@test
def busy_script_answers_busy_and_script_kill_stops_it(srv):
    r = srv.raw()
    assert r.command("CONFIG", "SET", "lua-time-limit", "100") == "OK"
    assert r.command("CONFIG", "GET", "busy-reply-threshold") == [b"busy-reply-threshold", b"100"]
    t, res = start_busy(srv, "local i = 0 while true do i = i + 1 end")
    other = srv.raw()
    assert wait_for(busy_seen(other, BUSY_EVAL)), "no BUSY while the script runs"
    assert str(other.command("GET", "x")) == BUSY_EVAL
    assert str(other.command("FUNCTION", "STATS")) == BUSY_EVAL
    assert str(other.command("FUNCTION", "KILL")) == BUSY_EVAL
    assert str(other.command("SCRIPT", "LOAD", "return 1")) == BUSY_EVAL
    assert str(other.command("SHUTDOWN")) == BUSY_EVAL  # only NOSAVE
    assert other.command("SCRIPT", "KILL") == "OK"
    t.join(10)
    assert not t.is_alive()
    assert str(res["reply"]).startswith("ERR Script killed by user with SCRIPT KILL..."), res
    assert other.command("PING") == "PONG"
    assert str(other.command("SCRIPT", "KILL")) == "NOTBUSY No scripts in execution right now."


@test
def pcall_cannot_swallow_script_kill(srv):
    r = srv.raw()
    r.command("CONFIG", "SET", "busy-reply-threshold", "100")
    t, res = start_busy(srv, "while true do pcall(function() local i = 0 while true do i = i + 1 end end) end")
    other = srv.raw()
    assert wait_for(busy_seen(other, BUSY_EVAL))
    assert other.command("SCRIPT", "KILL") == "OK"
    t.join(10)
    assert not t.is_alive() and isinstance(res["reply"], RespError), res


@test
def script_that_wrote_is_unkillable_and_shutdown_nosave_drops_its_writes(srv):
    r = srv.raw()
    r.command("SET", "before", "1")
    r.command("CONFIG", "SET", "busy-reply-threshold", "100")
    t, res = start_busy(srv, "redis.call('set', 'partial', '1') while true do end")
    other = srv.raw()
    assert wait_for(busy_seen(other, BUSY_EVAL))
    assert str(other.command("SCRIPT", "KILL")).startswith("UNKILLABLE Sorry the script already executed write commands")
    try:
        other.command("SHUTDOWN", "NOSAVE")
    except ConnectionError:
        pass
    srv.proc.wait(20)
    t.join(10)
    srv.start()
    c = srv.client()
    assert c.get("before") == b"1"
    assert c.get("partial") is None


@test
def busy_function_is_killed_with_function_kill(srv):
    r = srv.raw()
    r.command("CONFIG", "SET", "busy-reply-threshold", "100")
    r.command("FUNCTION", "LOAD", "#!lua name=slow\nredis.register_function('spin', function() while true do end end)")
    result = {}

    def run():
        c = RawConn(srv.port, timeout=60)
        result["reply"] = c.command("FCALL", "spin", "0")

    t = threading.Thread(target=run)
    t.start()
    other = srv.raw()
    assert wait_for(busy_seen(other, BUSY_FUNCTION))
    stats = other.command("FUNCTION", "STATS")
    running = dict(zip(stats[1][::2], stats[1][1::2]))
    assert running[b"name"] == b"spin" and running[b"command"] == [b"FCALL", b"spin", b"0"], stats
    assert str(other.command("SCRIPT", "KILL")) == BUSY_FUNCTION
    assert other.command("FUNCTION", "KILL") == "OK"
    t.join(10)
    assert str(result["reply"]).startswith("ERR Script killed by user with SCRIPT KILL..."), result
    assert other.command("PING") == "PONG"


@test
def busy_caller_pipeline_waits_for_its_script(srv):
    """Replies the caller pipelined before its script wait with it (they
    are in the same batch), and commands after it run after it."""
    r = srv.raw()
    r.command("CONFIG", "SET", "busy-reply-threshold", "50")
    c = RawConn(srv.port, timeout=60)
    c.send(RawConn.encode("SET", "p", "1") + RawConn.encode(
        "EVAL", "local function now() local t = redis.call('time') return t[1] * 1000 + t[2] / 1000 end "
                "local e = now() + 3000 while now() < e do end return redis.call('incr', 'p')", "0") + RawConn.encode("GET", "p"))
    other = srv.raw()
    assert wait_for(busy_seen(other, BUSY_EVAL), 5)
    assert str(other.command("GET", "p")) == BUSY_EVAL
    assert c.read_reply() == "OK"
    assert c.read_reply() == 2
    assert c.read_reply() == b"2"


LIB = "#!lua name=keep\nredis.register_function('bump', function(keys) return redis.call('incr', keys[1]) end)"


@test
def functions_survive_restart_and_sigkill():
    srv = Server(appendfsync="always")
    srv.start()
    try:
        r = srv.client()
        assert r.execute_command("FUNCTION", "LOAD", LIB) == b"keep"
        assert r.execute_command("FCALL", "bump", 1, "n") == 1
        srv.restart()
        r = srv.client()
        assert r.execute_command("FCALL", "bump", 1, "n") == 2
        r.execute_command("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('two', function() return 2 end)")
        r.flushall()  # functions are not data: FLUSHALL keeps them
        srv.kill9()
        srv.start()
        r = srv.client()
        assert r.execute_command("FCALL", "two", 0) == 2
        assert r.execute_command("FCALL", "bump", 1, "n") == 1
        info = r.info("memory")
        assert info["number_of_libraries"] == 2 and info["number_of_functions"] == 2, info
        dump = r.execute_command("FUNCTION", "DUMP")
        r.execute_command("FUNCTION", "DELETE", "keep")
        srv.kill9()
        srv.start()
        r = srv.client()
        names = [lib[1] for lib in r.execute_command("FUNCTION", "LIST")]
        assert names == [b"other"], names
        assert r.execute_command("FUNCTION", "RESTORE", dump, "FLUSH") == b"OK"
        srv.restart()
        r = srv.client()
        assert sorted(lib[1] for lib in r.execute_command("FUNCTION", "LIST")) == [b"keep", b"other"]
        r.execute_command("FUNCTION", "FLUSH")
        srv.kill9()
        srv.start()
        assert srv.client().execute_command("FUNCTION", "LIST") == []
    finally:
        srv.cleanup()


@test
def failed_function_load_in_multi_writes_nothing(srv):
    r = srv.raw()
    r.command("MULTI")
    r.command("FUNCTION", "LOAD", "#!lua name=bad\nerror('x')")
    r.command("SET", "k", "v")
    out = r.command("EXEC")
    assert isinstance(out[0], RespError) and out[1] == "OK", out
    srv.restart()
    c = srv.client()
    assert c.execute_command("FUNCTION", "LIST") == [] and c.get("k") == b"v"


@test
def script_cache_is_not_persisted(srv):
    r = srv.client()
    sha = r.script_load("return 1")
    assert r.script_exists(sha) == [True]
    info = r.info("memory")
    assert info["number_of_cached_scripts"] == 1 and info["used_memory_lua"] > 0, info
    assert info["used_memory_vm_total"] >= info["used_memory_lua"], info
    srv.restart()
    r = srv.client()
    assert r.script_exists(sha) == [False]
    assert r.info("memory")["number_of_cached_scripts"] == 0


@test
def dump_payload_moves_between_strata_and_redis(srv):
    from redis_compare import RealRedis
    ref = RealRedis()
    try:
        s, q = srv.client(), ref.client()
        s.execute_command("FUNCTION", "LOAD", LIB)
        q.execute_command("FUNCTION", "LOAD", "#!lua name=fromredis\nredis.register_function('hello_there_from_redis', function() return 'a long enough body to be compressed by redis' end)")
        q.execute_command("FUNCTION", "RESTORE", s.execute_command("FUNCTION", "DUMP"))
        assert q.execute_command("FCALL", "bump", 1, "z") == 1
        s.execute_command("FUNCTION", "RESTORE", q.execute_command("FUNCTION", "DUMP"), "REPLACE")
        assert s.execute_command("FCALL", "hello_there_from_redis", 0).startswith(b"a long")
        try:
            s.execute_command("FUNCTION", "RESTORE", q.execute_command("FUNCTION", "DUMP"))
            raise AssertionError("APPEND over existing libraries must fail")
        except redis.ResponseError as e:
            assert str(e) in ("Library keep already exists", "Library fromredis already exists"), e
        assert len(s.execute_command("FUNCTION", "LIST")) == 2
    finally:
        ref.close()


if __name__ == "__main__":
    main()
