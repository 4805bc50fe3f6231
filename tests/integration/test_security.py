"""test_security.py -- what protects a server that is started carelessly:
protected-mode (non-loopback clients refused while the default user has no
password), DEBUG refused unless enable-debug-command allows it, protected
settings (dir, dbfilename) refused unless enable-protected-configs allows
it, rename-command, and secrets kept out of ps. Texts are Redis 7.0's."""
import socket

import redis

from harness import RawConn, RespError, Server, main, test

DEBUG_REFUSED = ("ERR DEBUG command not allowed. If the enable-debug-command option is set to "
                 "\"local\", you can run it from a local connection, otherwise you need to set "
                 "this option in the configuration file, and then restart the server.")


def err(r, *args):
    v = r.command(*args)
    assert isinstance(v, RespError), "expected an error from %r, got %r" % (args, v)
    return str(v)


def outside_address():
    """An address of this host that is not on the loopback interface."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.254", 9))  # no packet is sent: only picks the outgoing interface
        ip = s.getsockname()[0]
    finally:
        s.close()
    assert not ip.startswith("127."), "this host has no non-loopback address to test from"
    return ip


def read_all(host, port):
    s = socket.create_connection((host, port), timeout=5)
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    return data


@test
def protected_mode_refuses_outside_clients_without_a_password():
    srv = Server(bind="0.0.0.0", enable_debug_command="no").start()
    try:
        ip = outside_address()
        reply = read_all(ip, srv.port)
        assert reply.startswith(b"-DENIED Redis is running in protected mode because protected "
                                b"mode is enabled and no password is set for the default user."), reply
        assert srv.raw().command("PING") == "PONG"  # loopback clients are served
        admin = srv.raw()
        assert admin.command("CONFIG", "SET", "requirepass", "pw") == "OK"
        r = redis.Redis(host=ip, port=srv.port, password="pw")
        assert r.ping()  # a password lifts the restriction
        admin.command("AUTH", "pw")
        assert admin.command("CONFIG", "SET", "requirepass", "") == "OK"
        assert admin.command("CONFIG", "SET", "protected-mode", "no") == "OK"
        assert redis.Redis(host=ip, port=srv.port).ping()
        assert srv.raw().command("INFO", "stats").find(b"rejected_connections:1") >= 0
    finally:
        srv.cleanup()


@test
def debug_is_refused_by_default():
    srv = Server(enable_debug_command="no").start()
    try:
        r = srv.raw()
        assert err(r, "DEBUG", "SLEEP", "0") == DEBUG_REFUSED
        assert err(r, "CONFIG", "SET", "enable-debug-command", "yes") == \
            "ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - " \
            "can't set immutable config"
    finally:
        srv.cleanup()
    srv = Server(enable_debug_command="local").start()
    try:
        assert srv.raw().command("DEBUG", "SLEEP", "0") == "OK"
    finally:
        srv.cleanup()


@test
def protected_configs_need_enable_protected_configs():
    srv = Server().start()
    try:
        r = srv.raw()
        assert err(r, "CONFIG", "SET", "dbfilename", "x.rdb") == \
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - " \
            "can't set protected config"
    finally:
        srv.cleanup()
    srv = Server(enable_protected_configs="local").start()
    try:
        assert srv.raw().command("CONFIG", "SET", "dbfilename", "x.rdb") == "OK"
    finally:
        srv.cleanup()


@test
def rename_command_hides_and_renames():
    srv = Server("--rename-command", "flushall", "wipe-all", "--rename-command", "config", "").start()
    try:
        r = srv.raw()
        r.command("SET", "k", "v")
        assert err(r, "flushall").startswith("ERR unknown command 'flushall'")
        assert err(r, "config", "get", "port").startswith("ERR unknown command 'config'")
        assert r.command("WIPE-ALL") == "OK"
        assert r.command("EXISTS", "k") == 0
        # ACL rules keep the original names
        assert r.command("ACL", "SETUSER", "u", "on", "nopass", "+flushall") == "OK"
        u = srv.raw()
        assert u.command("AUTH", "u", "x") == "OK"
        assert u.command("WIPE-ALL") == "OK"
    finally:
        srv.cleanup()


def cmdline(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read()


@test
def requirepass_is_not_visible_in_ps():
    srv = Server(requirepass="hunter2-secret").start()
    try:
        line = cmdline(srv.proc.pid)
        assert b"hunter2-secret" not in line, line
        assert line.startswith(b"strata-server 127.0.0.1:%d" % srv.port), line
    finally:
        srv.cleanup()
    srv = Server(requirepass="hunter3-secret", set_proc_title="no").start()
    try:
        line = cmdline(srv.proc.pid)
        assert b"hunter3-secret" not in line and b"--requirepass" in line, line
        assert redis.Redis(port=srv.port, password="hunter3-secret").ping()
    finally:
        srv.cleanup()


@test
def client_bytes_cannot_forge_a_log_line():
    """DEBUG LOG, a command name and a client name reach the log with their
    control bytes escaped: every line of the log is one of the server's."""
    srv = Server().start()
    try:
        r = srv.raw()
        forged = "x\n123:M 01 Jan 2026 00:00:00.000 # forged\r\x1b[2J"
        assert r.command("DEBUG", "LOG", forged) == "OK"
        r.send(r.encode("SHUTDOWN", "NOSAVE"))  # no reply: the server exits
        srv.proc.wait(20)
        with open(srv.logfile, errors="replace") as fh:
            lines = fh.read().splitlines()
        assert not any("forged" in l and not l.startswith("%d:" % srv.proc.pid) for l in lines), lines
        hit = [l for l in lines if "DEBUG LOG" in l]
        assert hit and "x\\n123:M" in hit[0] and "\\r\\x1b[2J" in hit[0], hit
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
