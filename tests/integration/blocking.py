"""blocking.py -- helpers for the tests of blocking commands
(test_lists_blocking.py, test_streams_blocking.py, test_zsets_blocking.py):
count the blocked clients, open a connection that blocks, and check that
a blocked connection got no reply."""
import socket
import time


def blocked(r):
    """INFO clients blocked_clients of the server r (a redis-py client) is on."""
    return int(r.info("clients")["blocked_clients"])


def wait_blocked(r, n, timeout=30, count=blocked):
    """Polls until count(r) is n; fails after timeout seconds."""
    deadline = time.time() + timeout
    while count(r) != n:
        assert time.time() < deadline, "blocked_clients stayed %d, wanted %d" % (count(r), n)
        time.sleep(0.01)


def block(srv, r, *cmd, resp3=False):
    """A new RawConn to srv (RESP3 after HELLO 3 when resp3) that sends cmd
    and is blocked by it: returns once blocked(r) has grown by one."""
    n = blocked(r)
    c = srv.raw()
    if resp3:
        c.command("HELLO", "3")
    c.send(c.encode(*cmd))
    wait_blocked(r, n + 1)
    return c


def no_reply(c, wait=0.2):
    """True when the RawConn c receives nothing (no reply, no close) for
    wait seconds."""
    c.s.settimeout(wait)
    try:
        c.s.recv(1 << 16)
        return False
    except (socket.timeout, TimeoutError):
        return True
    finally:
        c.s.settimeout(20)
