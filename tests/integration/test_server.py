"""test_server.py -- connection and server commands and their error replies:
PING ECHO QUIT HELLO AUTH SELECT CLIENT RESET COMMAND INFO CONFIG DBSIZE
FLUSHDB FLUSHALL TIME SAVE BGSAVE LASTSAVE DEBUG, requirepass, maxclients,
timeout. Error texts are Redis 7's."""
import os
import re
import time

import redis

from harness import RawConn, RespError, Server, main, test, wait_for


def err(r, *args):
    v = r.command(*args)
    assert isinstance(v, RespError), "expected an error from %r, got %r" % (args, v)
    return str(v)


@test
def ping_echo_quit(srv):
    r = srv.raw()
    assert r.command("PING") == "PONG"
    assert r.command("PING", "hi") == b"hi"
    assert err(r, "PING", "a", "b") == "ERR wrong number of arguments for 'ping' command"
    assert r.command("ECHO", "x y") == b"x y"
    assert err(r, "ECHO") == "ERR wrong number of arguments for 'echo' command"
    assert r.command("QUIT") == "OK"
    assert r.closed_by_server()


@test
def select_databases_are_separate(srv):
    r = srv.raw()
    assert r.command("SET", "k", "db0") == "OK"
    assert r.command("SELECT", "15") == "OK"
    assert r.command("GET", "k") is None
    assert r.command("SET", "k", "db15") == "OK"
    assert r.command("DBSIZE") == 1
    assert r.command("SELECT", "0") == "OK"
    assert r.command("GET", "k") == b"db0"
    assert err(r, "SELECT", "16") == "ERR DB index is out of range"
    assert err(r, "SELECT", "-1") == "ERR DB index is out of range"
    assert err(r, "SELECT", "x") == "ERR value is not an integer or out of range"


@test
def hello_replies_and_errors(srv):
    r = srv.raw()
    h = r.command("HELLO")
    assert h[h.index(b"proto") + 1] == 2
    assert h[h.index(b"mode") + 1] == b"standalone"
    assert err(r, "HELLO", "4") == "NOPROTO unsupported protocol version"
    assert err(r, "HELLO", "x") == "ERR Protocol version is not an integer or out of range"
    assert err(r, "HELLO", "3", "AUTH") == "ERR Syntax error in HELLO option 'AUTH'"
    assert err(r, "HELLO", "3", "foo") == "ERR Syntax error in HELLO option 'foo'"
    h = r.command("HELLO", "3", "SETNAME", "myconn")
    assert h[b"proto"] == 3
    assert r.command("CLIENT", "GETNAME") == b"myconn"
    assert h[b"id"] == r.command("CLIENT", "ID")


@test
def auth_without_requirepass(srv):
    r = srv.raw()
    assert err(r, "AUTH", "x") == ("ERR AUTH <password> called without any password configured "
                                   "for the default user. Are you sure your configuration is correct?")
    assert r.command("AUTH", "default", "anything") == "OK"
    assert err(r, "AUTH", "bob", "x") == "WRONGPASS invalid username-password pair or user is disabled."
    assert err(r, "AUTH", "a", "b", "c") == "ERR syntax error"


@test
def requirepass_gates_every_command():
    srv = Server(requirepass="s3cret").start()
    try:
        r = srv.raw()
        assert err(r, "GET", "a") == "NOAUTH Authentication required."
        assert err(r, "PING") == "NOAUTH Authentication required."
        assert err(r, "AUTH", "wrong") == "WRONGPASS invalid username-password pair or user is disabled."
        assert err(r, "HELLO", "3").startswith("NOAUTH HELLO must be called with the client already authenticated")
        assert r.command("AUTH", "s3cret") == "OK"
        assert r.command("SET", "a", "1") == "OK"
        r2 = srv.raw()
        assert err(r2, "HELLO", "3", "AUTH", "default", "nope").startswith("WRONGPASS")
        h = r2.command("HELLO", "3", "AUTH", "default", "s3cret")
        assert h[b"proto"] == 3
        assert r2.command("GET", "a") == b"1"
        assert r2.command("RESET") == "RESET"
        assert err(r2, "GET", "a") == "NOAUTH Authentication required."
        # Unauthenticated clients cannot make the server buffer big requests.
        r3 = srv.raw()
        r3.send(b"*20\r\n")
        assert err_reply(r3) == "ERR Protocol error: unauthenticated multibulk length"
        c = srv.client(password="s3cret")
        assert c.get("a") == b"1"
        assert c.config_set("requirepass", "")
        assert srv.raw().command("GET", "a") == b"1"
    finally:
        srv.cleanup()


def err_reply(r):
    v = r.read_reply()
    assert isinstance(v, RespError), v
    return str(v)


@test
def client_subcommands(srv):
    r = srv.raw()
    cid = r.command("CLIENT", "ID")
    assert isinstance(cid, int) and cid > 0
    assert r.command("CLIENT", "GETNAME") is None
    assert r.command("CLIENT", "SETNAME", "worker-1") == "OK"
    assert r.command("CLIENT", "GETNAME") == b"worker-1"
    assert err(r, "CLIENT", "SETNAME", "a b") == \
        "ERR Client names cannot contain spaces, newlines or special characters."
    assert err(r, "CLIENT", "SETNAME") == "ERR wrong number of arguments for 'client|setname' command"
    assert err(r, "CLIENT", "foo") == "ERR unknown subcommand 'foo'. Try CLIENT HELP."
    assert r.command("CLIENT", "SETINFO", "LIB-NAME", "mylib") == "OK"
    assert r.command("CLIENT", "SETINFO", "lib-ver", "1.2") == "OK"
    assert err(r, "CLIENT", "SETINFO", "foo", "x") == "ERR Unrecognized option 'foo'"
    info = r.command("CLIENT", "INFO").decode()
    assert "id=%d " % cid in info and "name=worker-1" in info and "lib-name=mylib" in info, info
    assert "db=0" in info and info.endswith("\n")
    other = srv.raw()
    other.command("CLIENT", "SETNAME", "victim")
    lst = r.command("CLIENT", "LIST").decode()
    assert "name=victim" in lst and "name=worker-1" in lst
    assert r.command("CLIENT", "NO-EVICT", "on") == "OK"
    assert r.command("CLIENT", "NO-TOUCH", "off") == "OK"
    assert err(r, "CLIENT", "NO-EVICT", "maybe") == "ERR syntax error"
    assert isinstance(r.command("CLIENT", "HELP"), list)


@test
def client_kill_by_id_and_addr(srv):
    r = srv.raw()
    victim = srv.raw()
    vid = victim.command("CLIENT", "ID")
    assert r.command("CLIENT", "KILL", "ID", str(vid)) == 1
    assert victim.closed_by_server()
    assert r.command("CLIENT", "KILL", "ID", "999999") == 0
    assert err(r, "CLIENT", "KILL", "1.2.3.4:5") == "ERR No such client"
    v2 = srv.raw()
    v2_id = v2.command("CLIENT", "ID")  # also makes sure the server has accepted v2
    addr = [l for l in r.command("CLIENT", "LIST").decode().splitlines()
            if "id=%d " % v2_id in l][0].split()[1].split("=", 1)[1]
    assert r.command("CLIENT", "KILL", addr) == "OK"
    assert v2.closed_by_server()
    assert r.command("CLIENT", "KILL", "ID", str(r.command("CLIENT", "ID"))) == 0  # SKIPME yes
    assert err(r, "CLIENT", "KILL", "ID", "x") == "ERR client-id should be greater than 0"
    assert r.command("PING") == "PONG"


@test
def command_introspection(srv):
    c = srv.raw()  # redis-py post-processes COMMAND replies; read them as sent
    c.execute_command = c.command
    n = c.execute_command("COMMAND", "COUNT")
    assert n >= 85
    info = c.execute_command("COMMAND", "INFO", "get", "nosuch", "mset")
    assert info[0][0] == b"get" and info[0][1] == 2 and "readonly" in info[0][2]
    assert info[0][3:6] == [1, 1, 1]
    assert info[1] is None
    assert info[2][1] == -3 and info[2][3:6] == [1, -1, 2]
    # keys found by parsing numkeys, as Redis says of EVAL and FCALL
    for name in ("eval", "evalsha_ro", "fcall"):
        assert "movablekeys" in c.execute_command("COMMAND", "INFO", name)[0][2], name
    assert "movablekeys" not in info[0][2] and "movablekeys" not in info[2][2]
    names = c.execute_command("COMMAND", "LIST")
    # COMMAND COUNT counts containers once; COMMAND LIST also names their subcommands, as Redis 7
    assert b"hset" in names and b"idx.range" in names and b"config|get" in names
    assert len([x for x in names if b"|" not in x]) == n
    assert c.execute_command("COMMAND", "LIST", "FILTERBY", "PATTERN", "h*get*") == \
        [b"hget", b"hmget", b"hgetall"]
    docs = c.execute_command("COMMAND", "DOCS", "get")
    assert docs[0] == b"get" and b"summary" in docs[1]
    assert len(c.execute_command("COMMAND")) == n
    assert c.execute_command("COMMAND", "GETKEYS", "mset", "a", "1", "b", "2") == [b"a", b"b"]
    r = srv.raw()
    assert err(r, "COMMAND", "COUNT", "x") == "ERR wrong number of arguments for 'command|count' command"
    assert err(r, "COMMAND", "foo") == "ERR unknown subcommand 'foo'. Try COMMAND HELP."


@test
def info_sections(srv):
    c = srv.client()
    for i in range(10):
        c.set("k%d" % i, i)
    c.execute_command("SELECT", 3)
    info = c.info()
    for field in ("redis_version", "connected_clients", "used_memory", "aof_enabled",
                  "total_commands_processed", "bytes_written_user", "write_amplification",
                  "level0"):
        assert field in info, field
    ks = c.info("keyspace")
    assert ks["db0"]["keys"] == 10 and ks["db0"]["expires"] == 0, ks
    r = srv.raw()
    raw = r.command("INFO", "engine").decode()
    assert raw.startswith("# Engine\r\n") and "log_syncs:" in raw and "# Server" not in raw
    both = r.command("INFO", "server", "clients").decode()
    assert "# Server" in both and "# Clients" in both and "# Memory" not in both
    assert "\r\n\r\n# Clients\r\n" in both
    assert r.command("INFO", "nosuchsection") == b""


@test
def config_get_set_resetstat(srv):
    c = srv.client()
    assert c.config_get("port") == {"port": str(srv.port)}
    got = c.config_get("*max*")
    assert "maxclients" in got and "proto-max-bulk-len" in got
    assert c.config_get("appendfsync") == {"appendfsync": "everysec"}
    assert c.config_set("appendfsync", "always")
    assert c.config_get("appendfsync") == {"appendfsync": "always"}
    assert c.config_set("timeout", "100")
    assert c.config_get("timeout") == {"timeout": "100"}
    assert c.config_set("client-query-buffer-limit", "64mb")
    assert c.config_get("client-query-buffer-limit") == {"client-query-buffer-limit": str(64 << 20)}
    r = srv.raw()
    assert err(r, "CONFIG", "SET", "foo", "bar") == \
        "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
    assert err(r, "CONFIG", "SET", "timeout", "abc") == \
        "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer"
    assert err(r, "CONFIG", "SET", "appendfsync", "xx") == \
        "ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no"
    assert err(r, "CONFIG", "SET", "daemonize", "yes") == \
        "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config"
    assert err(r, "CONFIG", "SET", "proto-max-bulk-len", "1zz") == \
        "ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be a memory value"
    assert err(r, "CONFIG", "SET", "timeout", "-5") == \
        "ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive"
    assert err(r, "CONFIG", "GET") == "ERR wrong number of arguments for 'config|get' command"
    assert err(r, "CONFIG", "foo") == "ERR unknown subcommand 'foo'. Try CONFIG HELP."
    c.ping()
    assert c.info("stats")["total_commands_processed"] > 0
    assert c.config_resetstat()
    assert c.info("stats")["total_commands_processed"] <= 2


@test
def dbsize_flushdb_flushall(srv):
    c = srv.client()
    for i in range(50):
        c.set("a%d" % i, i)
    c1 = srv.client(db=1)
    c1.set("x", 1)
    assert c.dbsize() == 50
    assert c.flushdb()
    assert c.dbsize() == 0 and c1.dbsize() == 1
    c.set("b", 1)
    assert c.execute_command("FLUSHALL", "SYNC")
    assert c.dbsize() == 0 and c1.dbsize() == 0
    assert c.execute_command("FLUSHDB", "ASYNC")
    r = srv.raw()
    assert err(r, "FLUSHALL", "foo") == "ERR syntax error"
    assert err(r, "FLUSHDB", "async", "x") == "ERR syntax error"


@test
def time_save_bgsave_lastsave(srv):
    c = srv.client()
    sec, usec = c.execute_command("TIME")
    assert abs(int(sec) - time.time()) < 5 and 0 <= int(usec) < 1000000
    for i in range(100):
        c.set("s%d" % i, "v" * 100)
    before = c.lastsave()
    assert c.execute_command("SAVE") in (True, b"OK")
    r = srv.raw()
    assert r.command("BGSAVE") == "Background saving started"
    deadline = time.time() + 10
    while time.time() < deadline:
        v = r.command("BGSAVE")
        if v == "Background saving started":
            break
        assert str(v) == "ERR Background save already in progress", v
        time.sleep(0.05)
    else:
        raise AssertionError("BGSAVE never finished")
    assert c.lastsave() >= before
    assert isinstance(r.command("LASTSAVE"), int)
    assert c.info("engine")["flushes"] >= 1
    assert c.get("s99") == b"v" * 100
    assert err(r, "BGSAVE", "foo") == "ERR syntax error"


@test
def debug_sleep_and_errors(srv):
    c = srv.client()
    t0 = time.time()
    assert c.execute_command("DEBUG", "SLEEP", "0.2") == b"OK"
    assert time.time() - t0 >= 0.19
    assert c.execute_command("DEBUG", "SLEEP", "0") == b"OK"
    assert c.execute_command("DEBUG", "JMAP") == b"OK"
    r = srv.raw()
    assert err(r, "DEBUG", "SLEEP", "x") == "ERR value is not a valid float"
    assert err(r, "DEBUG", "nosuch") == "ERR unknown subcommand 'nosuch'. Try DEBUG HELP."


@test
def reset_restores_connection_state(srv):
    r = srv.raw()
    r.command("HELLO", "3")
    r.command("SELECT", "5")
    r.command("CLIENT", "SETNAME", "n")
    r.command("MULTI")
    assert r.command("RESET") == "RESET"
    assert r.command("GET", "x") is None and r.last_raw == b"$-1\r\n"  # back to RESP2
    assert r.command("CLIENT", "GETNAME") is None
    assert "db=0" in r.command("CLIENT", "INFO").decode()
    assert isinstance(r.command("EXEC"), RespError)


def connected(c):
    """INFO clients' connected_clients, asked on c."""
    return int(re.search(rb"connected_clients:(\d+)", c.command("INFO", "clients")).group(1))


@test
def maxclients_rejects_extra_connections():
    srv = Server(maxclients=3).start()
    try:
        # The start-up probe's connection counts until the server has seen
        # it close: wait for that from the first of the three.
        conns = [srv.raw()]
        wait_for(lambda: connected(conns[0]) == 1, 30, "the probe's connection closed")
        conns += [srv.raw() for _ in range(2)]
        for r in conns:
            assert r.command("PING") == "PONG"
        extra = srv.raw()
        assert str(extra.read_reply()) == "ERR max number of clients reached"
        assert extra.closed_by_server()
        conns[0].close()
        wait_for(lambda: connected(conns[1]) == 2, 30, "the closed connection gone")
        assert srv.raw().command("PING") == "PONG"
    finally:
        srv.cleanup()


@test
def idle_clients_time_out():
    # 2 s, not 1: the busy client's 0.3 s pauses must stay far below the
    # timeout even when this process is held off the CPU on a loaded machine.
    srv = Server(timeout=2).start()
    try:
        r = srv.raw()
        assert r.command("PING") == "PONG"
        assert r.closed_by_server(timeout=30)
        busy = srv.raw()
        for _ in range(10):  # 3 s, past the timeout
            assert busy.command("PING") == "PONG"
            time.sleep(0.3)
    finally:
        srv.cleanup()


@test
def idle_clients_give_back_their_buffers(srv):
    idle = srv.raw()
    idle_id = idle.command("CLIENT", "ID")
    r = srv.raw()

    def line():
        return [l for l in r.command("CLIENT", "LIST").decode().splitlines()
                if "id=%d " % idle_id in l][0]
    assert "rbs=0 " not in line()
    time.sleep(2.6)
    assert "rbs=0 " in line(), line()
    assert idle.command("PING") == "PONG"  # and it still works


@test
def config_file_and_command_line_overrides():
    import tempfile
    d = tempfile.mkdtemp(prefix="strata-conf-")
    conf = os.path.join(d, "strata.conf")
    with open(conf, "w") as f:
        f.write("# a comment\n\nmaxclients 77\ntimeout 5\nrequirepass \"pass word\"\n"
                "cache-size 32mb\nsave 900 1\nsave 300 10 60 10000\n")
    srv = Server(conf, timeout=9, requirepass="pass word")
    # The config file must come first on the command line.
    srv.argv = lambda: [srv_bin(), conf, "--port", str(srv.port), "--dir", os.path.join(d, "data"),
                        "--logfile", srv.logfile, "--timeout", "9"]
    srv.start()
    try:
        c = srv.client(password="pass word")
        assert c.config_get("maxclients") == {"maxclients": "77"}
        assert c.config_get("timeout") == {"timeout": "9"}
        assert c.config_get("cache-size") == {"cache-size": str(32 << 20)}
        # a stock redis.conf's save lines add up, as in Redis 7.0
        assert c.config_get("save") == {"save": "900 1 300 10 60 10000"}
        assert os.path.basename(c.info("server")["config_file"]) == "strata.conf"
    finally:
        srv.cleanup()


def srv_bin():
    from harness import SERVER
    return SERVER


@test
def bad_config_is_refused_at_startup():
    import subprocess
    p = subprocess.run([srv_bin(), "--port", "notaport"], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0 and "port" in p.stderr
    p = subprocess.run([srv_bin(), "--nosuch", "1"], capture_output=True, text=True, timeout=10)
    assert p.returncode != 0 and "nosuch" in p.stderr
    p = subprocess.run([srv_bin(), "--save", "900", "1", "2"], capture_output=True, text=True,
                       timeout=10)
    assert p.returncode != 0 and "Invalid save parameters" in p.stderr


@test
def daemonize_writes_and_removes_the_pidfile():
    import signal
    import subprocess
    import tempfile
    from harness import free_port
    d = tempfile.mkdtemp(prefix="strata-daemon-")
    port = free_port()
    pidfile = os.path.join(d, "strata.pid")
    p = subprocess.run([srv_bin(), "--port", str(port), "--dir", os.path.join(d, "data"),
                        "--daemonize", "yes", "--pidfile", pidfile,
                        "--logfile", os.path.join(d, "log")], timeout=20)
    assert p.returncode == 0  # the parent returns at once
    c = redis.Redis(port=port, socket_timeout=5)
    pid = None
    try:
        for _ in range(200):
            try:
                if c.ping() and os.path.exists(pidfile):
                    break
            except redis.ConnectionError:
                time.sleep(0.05)
        pid = int(open(pidfile).read())
        assert c.info("server")["process_id"] == pid
        c.set("d", "1")
        os.kill(pid, signal.SIGINT)
        for _ in range(200):
            if not os.path.exists(pidfile):
                break
            time.sleep(0.05)
        assert not os.path.exists(pidfile)
        pid = None
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
        import shutil
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
