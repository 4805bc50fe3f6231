"""test_introspection.py -- SLOWLOG, LATENCY, INFO commandstats/errorstats/
latencystats, MONITOR (and redis-cli monitor), CONFIG REWRITE, CLIENT PAUSE,
WAIT, MEMORY, DEBUG OBJECT and the redis-cli tools (--stat, --latency,
--bigkeys, --memkeys). Where the output is deterministic it is compared with
a real redis-server running the same commands."""
import os
import re
import signal
import subprocess
import tempfile
import threading
import time

from harness import REDIS_CLI, RawConn, RespError, Server, main, test, wait_for
from redis_compare import RealRedis


def ref_server():
    return RealRedis("--enable-debug-command", "yes")


def same(a, b, *cmd):
    ra, rb = a.command(*cmd), b.command(*cmd)
    assert a.last_raw == b.last_raw, "%r: strata %r, redis %r" % (cmd, a.last_raw, b.last_raw)
    return ra


# ---- SLOWLOG ---------------------------------------------------------------------

@test
def slowlog_entries_match_redis(srv):
    ref = ref_server()
    try:
        logs = []
        for port in (srv.port, ref.port):
            c = RawConn(port)
            c.command("CLIENT", "SETNAME", "logger")
            c.command("CONFIG", "SET", "slowlog-log-slower-than", "0")
            c.command("SLOWLOG", "RESET")
            c.command("SET", "a", "1")
            c.command("MSET", *["k%d" % i for i in range(40)])
            c.command("GET", "x" * 200)
            c.command("AUTH", "secret")
            c.command("MULTI")
            c.command("INCR", "n")
            c.command("EXEC")
            entries = c.command("SLOWLOG", "GET", "-1")
            # id, time, duration, args, peer, name: time/duration/port differ
            logs.append([(e[0], e[3], e[4].startswith(b"127.0.0.1:"), e[5]) for e in entries])
            assert c.command("SLOWLOG", "LEN") == len(entries) + 1
        assert logs[0] == logs[1], "strata %r\nredis  %r" % tuple(logs)
        args = [e[1] for e in logs[0]]
        assert [b"MULTI"] in args and [b"INCR", b"n"] in args and [b"EXEC"] not in args
        assert [b"AUTH", b"(redacted)"] in args
        mset = [a for a in args if a[0] == b"MSET"][0]
        assert len(mset) == 32 and mset[-1] == b"... (10 more arguments)"
        get = [a for a in args if a[0] == b"GET"][0]
        assert get[1] == b"x" * 128 + b"... (72 more bytes)"
        a, b = RawConn(srv.port), RawConn(ref.port)
        for cmd in (("SLOWLOG", "GET", "-2"), ("SLOWLOG", "GET", "x"), ("SLOWLOG", "GET", "1", "2"),
                    ("SLOWLOG", "LEN", "x"), ("SLOWLOG", "HELP"), ("SLOWLOG", "NOPE"),
                    ("SLOWLOG",), ("SLOWLOG", "RESET"), ("SLOWLOG", "GET", "0"),
                    ("SLOWLOG", "LEN")):
            same(a, b, *cmd)
    finally:
        ref.close()


@test
def slowlog_threshold_and_max_len(srv):
    c = srv.raw()
    c.command("CONFIG", "SET", "slowlog-log-slower-than", "-1")
    c.command("SLOWLOG", "RESET")
    c.command("DEBUG", "SLEEP", "0.02")
    assert c.command("SLOWLOG", "LEN") == 0  # disabled
    c.command("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    c.command("SET", "fast", "1")
    c.command("DEBUG", "SLEEP", "0.02")
    got = c.command("SLOWLOG", "GET")
    assert len(got) == 1 and got[0][3] == [b"DEBUG", b"SLEEP", b"0.02"] and got[0][2] >= 20000
    c.command("CONFIG", "SET", "slowlog-log-slower-than", "0")
    for i in range(5):
        c.command("SET", "k", str(i))
    c.command("CONFIG", "SET", "slowlog-max-len", "3")
    got = c.command("SLOWLOG", "GET", "-1")
    assert len(got) == 3 and got[0][3] == [b"CONFIG", b"SET", b"slowlog-max-len", b"3"]
    assert got[1][3] == [b"SET", b"k", b"4"] and got[0][0] > got[1][0] > got[2][0]
    c.command("CONFIG", "SET", "slowlog-max-len", "0")
    assert c.command("SLOWLOG", "LEN") == 0
    assert c.command("CONFIG", "GET", "slowlog-*") == \
        [b"slowlog-log-slower-than", b"0", b"slowlog-max-len", b"0"]


@test
def slowlog_logs_a_blocked_command_when_it_is_served_as_redis(srv):
    ref = ref_server()
    try:
        logs = []
        for port in (srv.port, ref.port):
            c, w = RawConn(port), RawConn(port)
            c.command("CONFIG", "SET", "slowlog-log-slower-than", "0")
            c.command("DEL", "l", "z")
            w.send(RawConn.encode("BLPOP", "l", "0"))
            deadline = time.time() + 30  # bounds a hang, not the load
            while b"blocked_clients:1" not in c.command("INFO", "clients"):
                assert time.time() < deadline
                time.sleep(0.01)
            c.command("SLOWLOG", "RESET")
            c.command("MULTI")
            c.command("LPUSH", "l", "foo")
            c.command("EXEC")
            assert w.read_reply() == [b"l", b"foo"]
            w.send(RawConn.encode("BLPOP", "z", "0.05"))  # a timeout is no serve: not logged
            assert w.read_reply() is None
            logs.append([e[3] for e in c.command("SLOWLOG", "GET", "-1")])
        assert logs[0] == logs[1], "strata %r\nredis  %r" % tuple(logs)
        assert logs[0][0] == [b"BLPOP", b"l", b"0"], logs[0]
    finally:
        ref.close()


@test
def a_blocked_command_served_an_error_counts_as_failed(srv):
    c, w = RawConn(srv.port), RawConn(srv.port)
    c.command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    c.command("CONFIG", "RESETSTAT")
    w.send(RawConn.encode("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"))
    deadline = time.time() + 30  # bounds a hang, not the load
    while b"blocked_clients:1" not in c.command("INFO", "clients"):
        assert time.time() < deadline
        time.sleep(0.01)
    c.command("XGROUP", "DESTROY", "s", "g")
    e = w.read_reply()
    assert isinstance(e, RespError) and str(e).startswith("NOGROUP"), e
    stats = c.command("INFO", "commandstats").decode()
    assert re.search(r"cmdstat_xreadgroup:calls=1,.*,rejected_calls=0,failed_calls=1", stats), stats


# ---- LATENCY -----------------------------------------------------------------------

@test
def latency_monitor_records_spikes_over_the_threshold(srv):
    c = srv.raw()
    assert c.command("LATENCY", "LATEST") == []
    assert b"disabled" in c.command("LATENCY", "DOCTOR")
    c.command("DEBUG", "SLEEP", "0.03")
    assert c.command("LATENCY", "LATEST") == []  # threshold 0: off
    c.command("CONFIG", "SET", "latency-monitor-threshold", "10")
    c.command("DEBUG", "SLEEP", "0.03")
    c.command("PING")
    latest = c.command("LATENCY", "LATEST")
    assert len(latest) == 1 and latest[0][0] == b"command" and 30 <= latest[0][2] < 1000, latest
    assert latest[0][3] == latest[0][2] and abs(latest[0][1] - time.time()) < 5
    hist = c.command("LATENCY", "HISTORY", "command")
    assert len(hist) == 1 and hist[0][1] == latest[0][2]
    assert c.command("LATENCY", "HISTORY", "nope") == []
    graph = c.command("LATENCY", "GRAPH", "command").decode()
    assert graph.startswith("command - high ") and "#" in graph
    doctor = c.command("LATENCY", "DOCTOR").decode()
    assert "1. command: 1 latency spikes" in doctor, doctor
    assert c.command("LATENCY", "RESET", "nope") == 0
    assert c.command("LATENCY", "RESET") == 1
    assert c.command("LATENCY", "LATEST") == []


@test
def latency_errors_and_help_match_redis(srv):
    ref = ref_server()
    try:
        a, b = RawConn(srv.port), RawConn(ref.port)
        for cmd in (("LATENCY", "HELP"), ("LATENCY", "HELP", "x"), ("LATENCY", "HISTORY"),
                    ("LATENCY", "GRAPH", "nope"), ("LATENCY", "LATEST", "x"),
                    ("LATENCY", "FOO"), ("LATENCY",), ("LATENCY", "RESET", "a", "b")):
            same(a, b, *cmd)
    finally:
        ref.close()


@test
def latency_histogram_has_redis_shape(srv):
    ref = ref_server()
    try:
        out = []
        for port in (srv.port, ref.port):
            c = RawConn(port)
            c.command("CONFIG", "RESETSTAT")
            c.command("SET", "a", "b")
            c.command("SET", "c", "d")
            c.command("GET", "a")
            c.command("CLIENT", "ID")
            all_ = c.command("LATENCY", "HISTOGRAM")
            some = c.command("LATENCY", "HISTOGRAM", "set", "nope", "client", "client|id")
            out.append((sorted(all_[0::2]), [(k, v[b"calls"] if isinstance(v, dict) else v[1])
                                             for k, v in zip(some[0::2], some[1::2])]))
            for name, h in zip(some[0::2], some[1::2]):
                assert h[0] == b"calls" and h[2] == b"histogram_usec", h
                buckets = h[3]
                assert buckets and buckets[-1] == h[1], h  # the last bucket counts every call
        assert out[0] == out[1], "strata %r\nredis  %r" % tuple(out)
    finally:
        ref.close()


# ---- INFO commandstats / errorstats / latencystats --------------------------------------

def parse_info(text, prefix):
    out = {}
    for line in text.decode().splitlines():
        if line.startswith(prefix):
            k, v = line[len(prefix):].split(":", 1)
            out[k] = dict(kv.split("=") for kv in v.split(","))
    return out


STATS_SCRIPT = [
    ("SET", "k", "v"), ("GET", "k"), ("SET", "k"), ("NOSUCHCMD",), ("INCR", "k"),
    ("HSET", "k", "f", "v"), ("MULTI",), ("SET",), ("EXEC",), ("MULTI",), ("SET", "a", "1"),
    ("INCR", "k"), ("EXEC",), ("EXEC",), ("CLIENT", "ID"), ("CLIENT", "NOPE"), ("CLIENT", "KILL"),
    ("AUTH", "x"), ("PING", "a", "b"), ("CONFIG", "GET", "hz"), ("EXPIRE", "k", "100"),
    ("SUBSCRIBE", "ch"), ("GET", "k"), ("UNSUBSCRIBE",), ("PUBLISH", "ch", "m"),
    # A script's errors count once: where a call replied them, or raised.
    ("EVAL", "redis.pcall('incr','k') return 1", "0"), ("EVAL", "return redis.call('incr','k')", "0"),
    ("EVAL", "return redis.call('nosuch')", "0"), ("EVAL", "a"), ("EVALSHA", "NotValidShaSUM", "0"),
]


@test
def commandstats_and_errorstats_match_redis(srv):
    ref = ref_server()
    try:
        res = []
        for port in (srv.port, ref.port):
            c = RawConn(port)
            c.command("CONFIG", "RESETSTAT")
            for cmd in STATS_SCRIPT:
                c.send(RawConn.encode(*cmd))
                c.read_reply()
                if cmd[0] in ("SUBSCRIBE", "UNSUBSCRIBE"):
                    continue
            info = c.command("INFO", "commandstats")
            errs = c.command("INFO", "errorstats")
            total = re.search(rb"total_error_replies:(\d+)", c.command("INFO", "stats")).group(1)
            cmds = {k: (v["calls"], v["rejected_calls"], v["failed_calls"])
                    for k, v in parse_info(info, "cmdstat_").items() if k != "info"}
            res.append((cmds, parse_info(errs, "errorstat_"), total))
        assert res[0] == res[1], "strata %r\nredis  %r" % tuple(res)
        line = [l for l in RawConn(srv.port).command("INFO", "commandstats").decode().splitlines()
                if l.startswith("cmdstat_set:")][0]
        assert re.match(r"cmdstat_set:calls=\d+,usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=\d+,"
                        r"failed_calls=\d+$", line), line
    finally:
        ref.close()


@test
def info_sections_follow_redis_rules(srv):
    c = srv.raw()
    for arg in ((), ("default",), ("all",), ("everything",)):
        info = c.command("INFO", *arg).decode()
        assert "redis_version" in info and "used_cpu_user" in info and "used_memory" in info
        assert ("rejected_calls" in info) == bool(arg and arg[0] != "default"), arg
        assert "# Errorstats" in info and "master_repl_offset" in info
    info = c.command("INFO", "cpu", "all").decode()
    assert info.count("used_cpu_user_children") == 1 and "# Latencystats" in info
    info = c.command("INFO", "commandSTATS").decode()
    assert "rejected_calls" in info and "used_memory" not in info
    info = c.command("INFO", "stats").decode()
    for field in ("pubsub_channels:0", "pubsub_patterns:0", "pubsubshard_channels:0"):
        assert field in info, field


@test
def latencystats_percentiles_as_redis(srv):
    ref = ref_server()
    try:
        a, b = RawConn(srv.port), RawConn(ref.port)
        for cmd in (("CONFIG", "GET", "latency-tracking"),
                    ("CONFIG", "GET", "latency-tracking-info-percentiles"),
                    ("CONFIG", "SET", "latency-tracking-info-percentiles", "0.0 50.0 100.0"),
                    ("CONFIG", "GET", "latency-tracking-info-percentiles"),
                    ("CONFIG", "SET", "latency-tracking-info-percentiles", "10.0 50.0 a"),
                    ("CONFIG", "SET", "latency-tracking-info-percentiles", "10 101"),
                    ("CONFIG", "GET", "latency-tracking-info-percentiles"),
                    ("CONFIG", "SET", "latency-tracking-info-percentiles", "99.99 1e1"),
                    ("CONFIG", "GET", "latency-tracking-info-percentiles"),
                    ("CONFIG", "SET", "latency-tracking-info-percentiles", ""),
                    ("CONFIG", "GET", "latency-tracking-info-percentiles")):
            same(a, b, *cmd)
        c = RawConn(srv.port)
        c.command("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
        c.command("CONFIG", "RESETSTAT")
        c.command("SET", "a", "b")
        c.command("CLIENT", "ID")
        info = c.command("INFO", "latencystats").decode()
        assert re.search(r"^latency_percentiles_usec_set:p50=\d+\.\d{3},p99=\d+\.\d{3},"
                         r"p99\.9=\d+\.\d{3}\r$", info, re.M), info
        assert "latency_percentiles_usec_client|id:p50=" in info
        c.command("CONFIG", "SET", "latency-tracking", "no")
        c.command("CONFIG", "RESETSTAT")
        c.command("SET", "a", "b")
        assert "latency_percentiles_usec_set" not in c.command("INFO", "latencystats").decode()
    finally:
        ref.close()


# ---- MONITOR --------------------------------------------------------------------------------

MONITOR_SCRIPT = [("SET", "k", 'v "quoted"\n\t\\'), ("GET", "k"), ("SET", "bin", b"\x00\xff\x7f"),
                  ("SELECT", "2"), ("SET", "k", "v"), ("CONFIG", "GET", "hz"), ("MULTI",),
                  ("SET", "a", "1"), ("INCR", "a"), ("EXEC",), ("MULTI",), ("NOSUCH",),
                  ("EXEC",), ("AUTH", "pw"), ("HELLO", "2", "AUTH", "default", "pw")]


def monitor_lines(port):
    m = RawConn(port)
    assert m.command("MONITOR") == "OK"
    c = RawConn(port)
    for cmd in MONITOR_SCRIPT:
        c.command(*cmd)
    c.command("PING", "end")
    lines = []
    while True:
        line = m.read_reply()
        lines.append(line)
        if '"end"' in line:
            return lines


@test
def monitor_lines_match_redis(srv):
    ref = ref_server()
    try:
        out = []
        for port in (srv.port, ref.port):
            lines = monitor_lines(port)
            for l in lines:
                assert re.match(r"^\d{10}\.\d{6} \[\d+ 127\.0\.0\.1:\d+\] ", l), l
            out.append([re.sub(r"^\S+ \[(\d+) [^\]]+\] ", r"[\1] ", l) for l in lines])
        assert out[0] == out[1], "strata %r\nredis  %r" % tuple(out)
        assert '[0] "SET" "k" "v \\"quoted\\"\\n\\t\\\\"' in out[0]
        assert '[0] "SET" "bin" "\\x00\\xff\\x7f"' in out[0]
        assert '[2] "AUTH" "(redacted)"' in out[0]
        assert '[2] "HELLO" "2" "AUTH" "(redacted)" "(redacted)"' in out[0]
    finally:
        ref.close()


@test
def redis_cli_monitor_prints_each_command(srv):
    p = subprocess.Popen(["stdbuf", "-oL", REDIS_CLI, "-p", str(srv.port), "monitor"],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "OK"
        r = srv.client()
        r.set("key", "value with space")
        r.hset("h", "f", "v")
        lines = [p.stdout.readline().strip() for _ in range(2)]
    finally:
        p.kill()
        p.wait()
    assert re.match(r'^\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] "SET" "key" "value with space"$', lines[0]), lines
    assert lines[1].endswith('"HSET" "h" "f" "v"'), lines
    c = srv.raw()
    c.command("MONITOR")
    err = c.command("GET", "k")
    assert isinstance(err, RespError) and str(err) == "ERR Replica can't interact with the keyspace"
    assert "flags=O" in srv.client().execute_command("CLIENT", "LIST").decode()
    assert '"CLIENT" "LIST"' in c.read_reply()  # fed to the monitor
    assert c.command("RESET") == "RESET" and c.command("GET", "k") is None


# ---- CONFIG REWRITE ----------------------------------------------------------------------------

class ConfServer(Server):
    """A server started from a config file (the file comes first)."""

    def __init__(self, conf):
        super().__init__()
        self.conf = os.path.join(self.dir, "strata.conf")
        with open(self.conf, "w") as f:
            f.write(conf)

    def argv(self):
        a = super().argv()
        return a[:1] + [self.conf] + a[1:]


@test
def config_rewrite_keeps_comments_and_order():
    conf = ("# strata test config\n\n# the tick\nhz 20\n"
            "# slow commands\nslowlog-max-len 64\nslowlog-max-len 65\n"
            "notify-keyspace-events \"\"\n\n# end of my settings\n")
    srv = ConfServer(conf).start()
    try:
        c = srv.raw()
        assert c.command("CONFIG", "SET", "hz", "30") == "OK"
        assert c.command("CONFIG", "SET", "notify-keyspace-events", "KEA") == "OK"
        assert c.command("CONFIG", "SET", "latency-monitor-threshold", "25") == "OK"
        assert c.command("CONFIG", "SET", "row-cache-size", "1mb") != "OK"  # immutable
        assert c.command("CONFIG", "SET", "timeout", "0") == "OK"  # default: stays out
        assert c.command("CONFIG", "SET", "client-output-buffer-limit", "pubsub 64mb 16mb 30") == "OK"
        assert c.command("CONFIG", "REWRITE") == "OK"
        with open(srv.conf) as f:
            text = f.read()
        lines = text.splitlines()
        assert lines[:8] == ["# strata test config", "", "# the tick", "hz 30", "# slow commands",
                             "slowlog-max-len 65", 'notify-keyspace-events "AKE"', ""], lines
        assert "# end of my settings" in lines
        tail = lines[lines.index("# Generated by CONFIG REWRITE"):]
        assert "latency-monitor-threshold 25" in tail and not any(l.startswith("timeout") for l in lines)
        assert "client-output-buffer-limit pubsub 64mb 16mb 30" in tail, tail
        assert not any(l.startswith("client-output-buffer-limit normal") for l in lines)
        # Settings given on the command line are written too, as Redis does.
        assert 'dir "%s"' % os.path.join(srv.dir, "data") in tail and "port %d" % srv.port in tail
        c.command("CONFIG", "SET", "hz", "40")
        assert c.command("CONFIG", "REWRITE") == "OK"  # twice: the tail is reused, not repeated
        with open(srv.conf) as f:
            again = f.read().splitlines()
        assert again.count("# Generated by CONFIG REWRITE") == 1 and "hz 40" in again
        srv.restart()
        c = srv.raw()
        assert c.command("CONFIG", "GET", "hz") == [b"hz", b"40"]
        assert c.command("CONFIG", "GET", "notify-keyspace-events") == [b"notify-keyspace-events", b"AKE"]
    finally:
        srv.cleanup()


@test
def config_set_writes_back_what_config_get_star_gives(srv):
    # As Redis's CONFIG sanity: every setting accepts its own value (an
    # immutable one as a no-op), except those Redis itself keeps immutable.
    c = srv.raw()
    got = c.command("CONFIG", "GET", "*")
    redis_immutable = {b"daemonize", b"databases", b"tcp-backlog", b"logfile", b"pidfile",
                       b"replicaof", b"slaveof"}  # REPLICAOF changes those
    protected = {b"dir", b"dbfilename"}  # enable-protected-configs no, as Redis 7's default
    for k, v in zip(got[0::2], got[1::2]):
        r = c.command("CONFIG", "SET", k, v)
        if k in protected:
            assert isinstance(r, RespError) and "can't set protected config" in str(r), (k, r)
        elif k in redis_immutable:
            assert isinstance(r, RespError) and "immutable" in str(r), (k, r)
        else:
            assert r == "OK", (k, v, r)
    assert c.command("CONFIG", "GET", "*") == got
    e = c.command("CONFIG", "SET", "row-cache-size", "1mb")
    assert isinstance(e, RespError) and "can't set immutable config" in str(e)


@test
def config_set_of_many_pairs_is_all_or_nothing_as_redis(srv):
    ref = ref_server()
    try:
        a, b = srv.raw(), RawConn(ref.port)
        for cmd in (("CONFIG", "SET", "maxmemory-clients", "10%"),
                    ("CONFIG", "GET", "maxmemory-clients"),
                    ("CONFIG", "SET", "maxmemory-clients", "101%"),
                    ("CONFIG", "SET", "maxmemory-clients", "1kb"),
                    ("CONFIG", "GET", "maxmemory-clients"),
                    ("CONFIG", "SET", "maxmemory-clients", "x%"),
                    ("CONFIG", "SET", "maxmemory-clients", "0"),
                    ("CONFIG", "SET", "hz", "20", "slowlog-max-len", "7"),
                    ("CONFIG", "GET", "hz"), ("CONFIG", "GET", "slowlog-max-len"),
                    # the second value fails: the first is restored
                    ("CONFIG", "SET", "hz", "30", "slowlog-max-len", "x"),
                    ("CONFIG", "GET", "hz"),
                    # checked before anything is set
                    ("CONFIG", "SET", "hz", "30", "nosuch", "1"),
                    ("CONFIG", "SET", "hz", "30", "hz", "40"),
                    ("CONFIG", "SET", "hz", "30", "daemonize", "no"),
                    ("CONFIG", "SET", "hz", "30", "slowlog-max-len"),
                    ("CONFIG", "GET", "hz"),
                    # test hooks only by their names
                    ("CONFIG", "GET", "key-load*"), ("CONFIG", "GET", "key-load-delay"),
                    ("CONFIG", "GET", "watchdog-period")):
            same(a, b, *cmd)
    finally:
        ref.close()


@test
def config_set_port_moves_the_listener_or_changes_nothing(srv):
    import socket
    from harness import free_port
    c = srv.raw()
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        e = c.command("CONFIG", "SET", "hz", "33", "port", str(busy.getsockname()[1]))
        assert isinstance(e, RespError) and str(e) == (
            "ERR CONFIG SET failed (possibly related to argument 'port') - "
            "Unable to listen on this port. Check server logs."), e
    finally:
        busy.close()
    assert c.command("CONFIG", "GET", "hz") == [b"hz", b"10"]  # rolled back
    assert c.command("CONFIG", "GET", "port") == [b"port", str(srv.port).encode()]
    assert RawConn(srv.port).command("PING") == "PONG"  # still listening
    new = free_port()
    assert c.command("CONFIG", "SET", "port", str(new)) == "OK"
    assert RawConn(new).command("PING") == "PONG"
    assert c.command("PING") == "PONG"  # connections stay
    try:
        RawConn(srv.port, timeout=2).command("PING")
        assert False, "the old port still answers"
    except OSError:
        pass
    assert "tcp_port:%d" % new in c.command("INFO", "server").decode()



@test
def config_rewrite_without_a_file_fails_as_redis(srv):
    ref = ref_server()
    try:
        same(srv.raw(), RawConn(ref.port), "CONFIG", "REWRITE")
    finally:
        ref.close()


# ---- CLIENT PAUSE, WAIT ---------------------------------------------------------------------------

def blocked(srv):
    info = srv.raw().command("INFO", "clients").decode()
    return int(re.search(r"blocked_clients:(\d+)", info).group(1))


@test
def client_pause_write_holds_writes_not_reads(srv):
    c = srv.raw()
    c.command("SET", "k", "v")
    assert c.command("CLIENT", "PAUSE", "60000", "WRITE") == "OK"
    w1, w2, rd = srv.raw(), srv.raw(), srv.raw()
    w1.send(RawConn.encode("SET", "k", "one") + RawConn.encode("GET", "k"))
    time.sleep(0.05)
    w2.send(RawConn.encode("PUBLISH", "ch", "m"))
    assert rd.command("GET", "k") == b"v"  # reads go on
    assert isinstance(rd.command("SET", "k"), RespError)  # arity errors are not held
    m = srv.raw()
    assert m.command("MULTI") == "OK" and m.command("GET", "k") == "QUEUED"
    assert m.command("EXEC") == [b"v"]  # a read-only EXEC runs
    wait_for(lambda: blocked(srv) == 2, 30, "the two writers held")
    w1.s.settimeout(0.3)
    try:
        w1.read_reply()
        raise AssertionError("a write ran during CLIENT PAUSE WRITE")
    except OSError:
        pass
    w1.s.settimeout(10)
    assert c.command("CLIENT", "UNPAUSE") == "OK"
    assert w1.read_reply() == "OK" and w1.read_reply() == b"one"  # in order, then the rest
    assert w2.read_reply() == 0
    assert blocked(srv) == 0


@test
def client_pause_all_and_its_timeout(srv):
    c = srv.raw()
    # From before the PAUSE is sent: the pause then ends 300 ms or more
    # after t0 however late this process gets the reply back.
    t0 = time.time()
    assert c.command("CLIENT", "PAUSE", "300") == "OK"
    other = srv.raw()
    assert other.command("PING") == "PONG"
    assert time.time() - t0 >= 0.25, "PING was not held by CLIENT PAUSE ALL"
    for args, msg in ((("CLIENT", "PAUSE", "x"), "ERR timeout is not an integer or out of range"),
                      (("CLIENT", "PAUSE", "-1"), "ERR timeout is negative"),
                      (("CLIENT", "PAUSE", "10", "SOME"), "ERR CLIENT PAUSE mode must be WRITE or ALL")):
        e = c.command(*args)
        assert isinstance(e, RespError) and str(e) == msg, (args, e)


@test
def client_pause_keeps_expired_keys_until_unpaused(srv):
    c = srv.raw()
    c.command("CONFIG", "SET", "notify-keyspace-events", "Ex")
    expired0 = int(re.search(rb"expired_keys:(\d+)", c.command("INFO", "stats")).group(1))
    c.command("MULTI")
    c.command("SET", "a", "1", "PX", "10")
    c.command("CLIENT", "PAUSE", "50000", "WRITE")
    c.command("EXEC")
    time.sleep(0.3)
    assert c.command("GET", "a") is None  # logically gone ...
    assert re.search(rb"expired_keys:(\d+)", c.command("INFO", "stats")).group(1) == str(expired0).encode()
    c.command("CLIENT", "UNPAUSE")
    assert c.command("GET", "a") is None  # ... and now removed
    assert int(re.search(rb"expired_keys:(\d+)", c.command("INFO", "stats")).group(1)) == expired0 + 1


@test
def wait_returns_zero_without_replicas(srv):
    c = srv.raw()
    assert c.command("WAIT", "0", "0") == 0
    t0 = time.time()
    assert c.command("WAIT", "1", "200") == 0
    assert 0.15 <= time.time() - t0 < 10  # 10: the time out, not a hang, on a loaded machine
    ref = ref_server()
    try:
        for cmd in (("WAIT", "x", "0"), ("WAIT", "1", "-1"), ("WAIT", "1"), ("WAIT", "0", "0")):
            same(srv.raw(), RawConn(ref.port), *cmd)
    finally:
        ref.close()


# ---- MEMORY, DEBUG OBJECT ------------------------------------------------------------------------------

@test
def memory_usage_grows_with_the_value(srv):
    c = srv.raw()
    assert c.command("MEMORY", "USAGE", "nokey") is None
    c.command("SET", "small", "x")
    c.command("SET", "large", "x" * 10000)
    small, large = c.command("MEMORY", "USAGE", "small"), c.command("MEMORY", "USAGE", "large")
    assert 10 < small < 100 and 10000 < large < 10200, (small, large)
    c.command("HSET", "h", *[x for i in range(10) for x in ("f%d" % i, "v" * 10)])
    c.command("HSET", "big", *[x for i in range(1000) for x in ("field%04d" % i, "v" * 20)])
    h, big = c.command("MEMORY", "USAGE", "h"), c.command("MEMORY", "USAGE", "big")
    exact = c.command("MEMORY", "USAGE", "big", "SAMPLES", "0")
    assert h > 10 * 12 and big > 1000 * 29 and abs(big - exact) < exact / 10, (h, big, exact)
    c.command("PEXPIRE", "small", "100000")
    assert c.command("MEMORY", "USAGE", "small") > small  # the expire entry
    stats = c.command("MEMORY", "STATS")
    names = stats[0::2]
    for k in (b"peak.allocated", b"total.allocated", b"keys.count", b"dataset.bytes",
              b"engine.memtable"):
        assert k in names, k
    assert stats[names.index(b"keys.count") * 2 + 1] == 4
    assert len(c.command("MEMORY", "DOCTOR")) > 0
    assert c.command("MEMORY", "PURGE") == "OK"
    stats = c.command("MEMORY", "MALLOC-STATS")  # the ASan build has no jemalloc
    assert b"jemalloc" in stats or (os.environ.get("STRATA_ASAN") and b"not supported" in stats)
    ref = ref_server()
    try:
        for cmd in (("MEMORY", "USAGE"), ("MEMORY", "USAGE", "k", "SAMPLES"),
                    ("MEMORY", "USAGE", "k", "FOO"), ("MEMORY", "USAGE", "k", "SAMPLES", "-1"),
                    ("MEMORY", "USAGE", "k", "SAMPLES", "x"), ("MEMORY", "HELP"),
                    ("MEMORY", "NOPE"), ("MEMORY", "STATS", "x"), ("MEMORY", "USAGE", "nokey")):
            same(srv.raw(), RawConn(ref.port), *cmd)
    finally:
        ref.close()


@test
def debug_object_reports_encoding_and_length(srv):
    c = srv.raw()
    c.command("SET", "i", "12345")
    c.command("SET", "e", "short")
    c.command("SET", "r", "x" * 100)
    c.command("HSET", "h", "f", "v")
    c.command("HSET", "big", *[x for i in range(600) for x in ("f%d" % i, "v")])  # past 512
    for key, enc in (("i", "int"), ("e", "embstr"), ("r", "raw"), ("h", "listpack"),
                     ("big", "hashtable")):
        line = c.command("DEBUG", "OBJECT", key)
        assert re.match(r"^Value at:\S+ refcount:1 encoding:%s serializedlength:\d+ lru:\d+ "
                        r"lru_seconds_idle:\d+" % enc, line), (key, line)
    assert str(c.command("DEBUG", "OBJECT", "nokey")) == "ERR no such key"


# ---- redis-cli tools -----------------------------------------------------------------------------------

def cli_run(srv, *args, timeout=None):
    cmd = ["stdbuf", "-oL", REDIS_CLI, "-p", str(srv.port)] + list(args)
    if timeout:
        cmd = ["timeout", "-s", "INT", str(timeout)] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout


@test
def redis_cli_stat_latency_bigkeys_memkeys(srv):
    r = srv.client()
    for i in range(30):
        r.set("s%d" % i, "x" * (i * 10))
    r.hset("h", mapping={"f%d" % i: "v" for i in range(50)})
    out = cli_run(srv, "--stat", "-i", "0.3", timeout=1.5)
    lines = out.splitlines()
    assert lines[0].startswith("------- data ------") and lines[2].split()[0] == "31", out
    out = cli_run(srv, "--latency", "-i", "0.1", timeout=1.5)
    assert re.search(r"\d+ \d+ [\d.]+ \d+", out) or "min:" in out, out
    out = cli_run(srv, "--bigkeys")
    assert "Biggest string found '\"s29\"' has 290 bytes" in out, out
    assert "Biggest   hash found '\"h\"' has 50 fields" in out, out
    assert "30 strings with" in out and "1 hashs with 50 fields" in out, out
    out = cli_run(srv, "--memkeys")
    assert "Biggest string found '\"s29\"'" in out and "1 hashs with" in out, out


if __name__ == "__main__":
    main()
