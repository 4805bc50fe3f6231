"""test_disk_full.py -- a full disk with appendfsync everysec and no, on a
small tmpfs the test mounts (it needs root, as make test runs here):

- no write is acknowledged whose log record did not reach the file: the
  writer counts only the +OK replies it received;
- while the log cannot be written, writes and PING get Redis's MISCONF error
  ("MISCONF Errors writing to the log file: No space left on device"), EXEC
  of a transaction that writes gets EXECABORT, reads go on, INFO persistence
  says aof_last_write_status:err with the error and since when;
- when space comes back the server resumes by itself (the replies it held
  arrive, INFO says ok again) and writes work;
- after SIGKILL or SIGTERM, during the failure or after it, every
  acknowledged write is there once the server starts again (a start while
  the disk is still full fails cleanly and deletes nothing).
"""
import os
import socket
import subprocess
import tempfile
import time

from harness import RawConn, RespError, Server, main, test

TMPFS_MB = 16
FILLER_MB = 5
VALUE_PAD = "x" * 120


def value(i):
    return b"v%08d-" % i + VALUE_PAD.encode()


class Tmpfs:
    """A tmpfs of TMPFS_MB mounted at <tempdir>/data (the server's --dir),
    with a filler file that can be deleted to give space back."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="strata-full-")
        self.mnt = os.path.join(self.base, "data")
        os.mkdir(self.mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % TMPFS_MB, "tmpfs", self.mnt],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("cannot mount a tmpfs (this test needs root): " + r.stderr.strip())
        self.filler = os.path.join(self.mnt, "filler")
        with open(self.filler, "wb") as f:
            f.write(b"\0" * (FILLER_MB << 20))

    def give_space_back(self):
        os.unlink(self.filler)

    def close(self):
        subprocess.run(["umount", "-l", self.mnt], capture_output=True)
        subprocess.run(["rm", "-rf", self.base], capture_output=True)


def info(c, section="persistence"):
    return c.info(section)


def fill_until_refused(srv, acked):
    """SETs in pipelines of 500 until the server refuses; returns the raw
    connection (whose last pipeline may still have replies held) and how many
    replies of it are still unread. Every +OK adds its index to acked.
    A reply that does not come within 3 s is held only if the server says
    its log write fails: on a loaded machine a commit can just be slow."""
    conn = RawConn(srv.port, timeout=3)
    probe = srv.client(socket_timeout=30)
    i = len(acked)
    while True:
        batch = range(i, i + 500)
        conn.send(b"".join(conn.encode("SET", "k%d" % j, value(j)) for j in batch))
        refused = 0
        for n, j in enumerate(batch):
            deadline = time.time() + 120
            while True:
                try:
                    r = conn.read_reply()
                    break
                except (socket.timeout, TimeoutError):
                    if info(probe)["log_write_status"] == "err":
                        return conn, len(batch) - n  # held: this commit failed
                    assert time.time() < deadline, "no reply and no failing log write"
            if r == "OK":
                acked.append(j)
            else:
                assert isinstance(r, RespError) and str(r).startswith("MISCONF"), r
                refused += 1
        i += 500
        if refused:
            return conn, 0
        assert i < 2000000, "the disk never filled up"


def check_failing_state(srv):
    c = srv.client(socket_timeout=5)
    inf = info(c)
    assert inf["aof_last_write_status"] == "err", inf
    assert inf["log_write_status"] == "err", inf
    assert inf["log_write_failing_since"] > 0
    assert "No space left on device" in str(inf["log_write_last_error"]), inf
    assert inf["writes_refused"] == 1
    r = RawConn(srv.port, timeout=5)
    assert str(r.command("SET", "x", "y")) == "MISCONF Errors writing to the log file: No space left on device"
    assert str(r.command("PING")).startswith("MISCONF "), "PING is refused too, as in Redis"
    assert r.command("MULTI") == "OK"
    assert str(r.command("SET", "x", "y")).startswith("MISCONF ")
    assert str(r.command("EXEC")).startswith("EXECABORT")
    assert r.command("GET", "k0") == value(0)  # reads go on
    assert r.command("DBSIZE") > 0
    r.close()


def wait_ok(srv, timeout=20):
    c = srv.client(socket_timeout=5)
    deadline = time.time() + timeout
    while time.time() < deadline:
        inf = info(c)
        if inf["log_write_status"] == "ok" and inf["writes_refused"] == 0:
            return inf
        time.sleep(0.05)
    raise AssertionError("the server did not resume: %s" % info(c))


def check_acked(srv, acked):
    c = srv.client(socket_timeout=30)
    for lo in range(0, len(acked), 1000):
        keys = ["k%d" % j for j in acked[lo:lo + 1000]]
        got = c.mget(keys)
        for j, v in zip(acked[lo:lo + 1000], got):
            assert v == value(j), "acknowledged k%d is %r after the restart" % (j, v)


def full_disk_case(fsync, restart_signal, recover_first):
    fs = Tmpfs()
    srv = Server(dir=fs.base, appendfsync=fsync)
    try:
        srv.start()
        acked = []
        conn, held = fill_until_refused(srv, acked)
        check_failing_state(srv)
        if recover_first:
            fs.give_space_back()
            inf = wait_ok(srv)
            assert inf["aof_last_write_status"] == "ok" and inf["log_recoveries"] >= 1, inf
            # The held replies arrive: OK for the writes of the commit that
            # failed (now durable), MISCONF for those refused after it.
            conn.s.settimeout(30)
            n = len(acked)
            for j in range(n, n + held):
                r = conn.read_reply()
                if r == "OK":
                    acked.append(j)
                else:
                    assert str(r).startswith("MISCONF "), r
            assert len(acked) > n, "no held write was acknowledged"
            n += held
            c = srv.client()
            p = c.pipeline(transaction=False)
            for j in range(n, n + 2000):
                p.set("k%d" % j, value(j))
            assert all(x is True for x in p.execute())
            acked.extend(range(n, n + 2000))
        conn.close()
        srv.stop(restart_signal)
        if not recover_first:
            # Still full: the start fails cleanly (recovery has nowhere to
            # write) and deletes nothing; with space it starts.
            before = sorted(os.listdir(fs.mnt))
            try:
                srv.start(timeout=60)  # it fails at once; 60: an ASan server on a loaded machine
                raise AssertionError("started with no room to recover into")
            except RuntimeError as e:
                assert "No space left on device" in str(e), str(e)[-600:]
            assert sorted(os.listdir(fs.mnt)) == before, (before, os.listdir(fs.mnt))
            fs.give_space_back()
        srv.start()
        check_acked(srv, acked)
        assert srv.client().set("after", "restart")
    finally:
        srv.cleanup()
        fs.close()


@test
def full_disk_everysec_sigkill_while_failing_keeps_every_acknowledged_write():
    full_disk_case("everysec", 9, recover_first=False)


@test
def full_disk_no_sigterm_while_failing_keeps_every_acknowledged_write():
    full_disk_case("no", 15, recover_first=False)


@test
def full_disk_everysec_resumes_when_space_returns_then_sigterm():
    full_disk_case("everysec", 15, recover_first=True)


@test
def full_disk_no_resumes_when_space_returns_then_sigkill():
    full_disk_case("no", 9, recover_first=True)


if __name__ == "__main__":
    main()
