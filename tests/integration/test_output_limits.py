"""test_output_limits.py -- client-output-buffer-limit (Redis's syntax,
defaults, errors and closing) and reply-memory-limit (the total of every
client's unsent replies): a client that pipelines without reading is
closed instead of growing the server without bound.

Run with /usr/bin/python3 (python3-redis)."""
import os, socket, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import test, main
from redis_compare import compare_with_redis

GET = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"


def proc_kb(srv, field):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])


def flood(srv, n, chunk=10000):
    """Sends n GETs of k without reading a byte; returns how many went out
    before the server closed the connection (n when it did not)."""
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.settimeout(10)
    sent = 0
    try:
        while sent < n:
            k = min(chunk, n - sent)
            s.sendall(GET * k)
            sent += k
    except (ConnectionResetError, BrokenPipeError):
        pass
    return s, sent


def closed(s, timeout=30):
    s.settimeout(timeout)
    try:
        while True:
            if not s.recv(1 << 20):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except (socket.timeout, TimeoutError):
        return False


def log_text(srv):
    with open(srv.logfile, errors="replace") as f:
        return f.read()


@test
def client_output_buffer_limit_config_matches_redis(srv):
    compare_with_redis(srv, """
config get client-output-buffer-limit
config set client-output-buffer-limit normal\\s1mb\\s2mb\\s3
config get client-output-buffer-limit
config set client-output-buffer-limit replica\\s0\\s0\\s0\\spubsub\\s1gb\\s1k\\s7
config get client-output-buffer-limit
config set client-output-buffer-limit slave\\s10\\s20\\s30
config get client-output-buffer-limit
config set client-output-buffer-limit normal\\s1mb\\s2mb
config set client-output-buffer-limit master\\s1mb\\s2mb\\s3
config set client-output-buffer-limit bogus\\s1mb\\s2mb\\s3
config set client-output-buffer-limit normal\\s1xb\\s2mb\\s3
config set client-output-buffer-limit normal\\s-1\\s0\\s1
config set client-output-buffer-limit normal\\s0\\s0\\s-1
config set client-output-buffer-limit normal\\s0\\s0\\s1x
config set client-output-buffer-limit normal\\s1\\s1\\s1\\spubsub\\s1\\s1
config get client-output-buffer-limit
config set client-output-buffer-limit NORMAL\\s0\\s0\\s0
config get client-output-buffer-limit
config set client-output-buffer-limit normal 0 0 0
config set client-output-buffer-limit
""")


@test
def limits_load_from_the_config_file_and_the_command_line():
    import tempfile
    from harness import SERVER, Server
    d = tempfile.mkdtemp(prefix="strata-conf-")
    conf = os.path.join(d, "strata.conf")
    with open(conf, "w") as f:
        f.write("client-output-buffer-limit pubsub 1mb 2mb 3\n"
                "client-output-buffer-limit replica 4 5 6\nreply-memory-limit 64mb\n")
    srv = Server(dir=d)
    srv.argv = lambda: [SERVER, conf, "--port", str(srv.port), "--dir", os.path.join(d, "data"),
                        "--logfile", srv.logfile, "--client-output-buffer-limit", "normal 7 8 9"]
    try:
        srv.start()
        c = srv.client()
        assert c.config_get("client-output-buffer-limit") == {
            "client-output-buffer-limit": "normal 7 8 9 slave 4 5 6 pubsub 1048576 2097152 3"}
        assert c.config_get("reply-memory-limit") == {"reply-memory-limit": str(64 << 20)}
    finally:
        srv.cleanup()
        import shutil
        shutil.rmtree(d, ignore_errors=True)


@test
def a_client_that_never_reads_is_closed_at_the_reply_memory_limit(srv):
    r = srv.client()
    r.set("k", "x" * 500)
    r.config_set("reply-memory-limit", "32mb")
    base = proc_kb(srv, "VmRSS")
    # 1M GETs of a 500-byte value: 510 MB of replies if nothing stopped it.
    s, sent = flood(srv, 1000000)
    assert closed(s), "the server kept the connection"
    grown_mb = (proc_kb(srv, "VmHWM") - base) / 1024
    assert grown_mb < 120, "peak RSS grew %.0f MB for a 32 MB limit" % grown_mb
    assert r.ping() and r.info("stats")["evicted_clients"] == 1
    assert "exceed reply-memory-limit" in log_text(srv)


@test
def the_hard_limit_closes_a_pipelining_client_as_redis_does(srv):
    r = srv.client()
    r.set("k", "x" * 500)
    r.config_set("client-output-buffer-limit", "normal 4mb 0 0")
    s, sent = flood(srv, 200000)
    assert closed(s)
    assert "scheduled to be closed ASAP for overcoming of output buffer limits" in log_text(srv)
    assert r.info("stats")["evicted_clients"] == 0
    # A single command whose reply passes the limit gets no reply at all.
    r.config_set("client-output-buffer-limit", "normal 1mb 0 0")
    r.mset({"key:%06d" % i: 1 for i in range(100000)})
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(b"*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n")
    got = b""
    s.settimeout(5)
    try:
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            got += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    assert got == b"", "%d bytes of reply came back" % len(got)
    r.config_set("client-output-buffer-limit", "normal 0 0 0")
    assert len(r.keys("key:*")) == 100000  # no limit, no closing


@test
def the_soft_limit_closes_only_after_its_seconds(srv):
    r = srv.client()
    r.set("k", "x" * 500)
    # 2 s, not 1: the server is over the soft limit while it still runs
    # the 50000 GETs (0.3 s for the ASan server on a loaded machine), and
    # they must not take the limit's seconds.
    r.config_set("client-output-buffer-limit", "normal 0 1mb 2")
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(GET * 50000)  # 25 MB of replies, more than socket buffers hold
    time.sleep(0.3)
    # Still connected (asked through another connection: reading would
    # drain the replies below the limit).
    assert [c for c in r.client_list() if c["cmd"] == "get"], r.client_list()
    time.sleep(3.2)  # the limit's clock counts whole seconds, as Redis's
    try:
        s.sendall(GET * 10000)  # grows again more than a second later
    except (ConnectionResetError, BrokenPipeError):
        pass
    assert closed(s)
    assert "overcoming of output buffer limits" in log_text(srv)


if __name__ == "__main__":
    main()
