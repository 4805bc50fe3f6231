"""harness.py -- start real strata servers for integration tests and report
results in the PASS/FAIL line protocol that tests/run.sh counts.

Use from a test file (run with /usr/bin/python3, which has python3-redis):

    from harness import Server, test, main
    @test
    def set_then_get_returns_value(srv):
        r = srv.client()
        r.set("a", "1"); assert r.get("a") == b"1"
    if __name__ == "__main__": main()

Each @test gets a fresh server (own free port, own temporary dir) unless it
takes no argument. srv.restart(), srv.kill9() + srv.start() keep the dir.

Under a sanitizer build (STRATA_SERVER=build/asan/strata-server, as
tests/run.sh does) every server a test started is stopped with SIGTERM at
cleanup, so the leak check runs, and a test whose servers printed an
AddressSanitizer, LeakSanitizer or UndefinedBehaviorSanitizer report fails
with it. STRATA_ASAN=1 tells tests that the server runs slower.
"""
import os, shutil, signal, socket, subprocess, sys, tempfile, time, traceback

import redis  # Debian's python3-redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.environ.get("STRATA_SERVER", os.path.join(ROOT, "src", "strata-server"))
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
ASAN = bool(os.environ.get("STRATA_ASAN"))
SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
_sanitizer_reports = []  # reports found at cleanup, taken by main() after each test


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PortTaken(Exception):
    """The port a server was given was bound by someone else first."""


def answered_by(c):
    """The process id of the server c talks to (INFO server), or None where
    INFO is not allowed."""
    try:
        return int(c.info("server")["process_id"])
    except redis.ResponseError:
        return None


def wait_for(pred, timeout=30, what="condition", step=0.05):
    """Polls pred until it returns something true, then returns that. The
    deadline is generous: it bounds a hang, not how fast the server is on a
    loaded machine (under ASan, beside other test programs)."""
    deadline = time.time() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.time() > deadline:
            raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))
        time.sleep(step)


class Server:
    def __init__(self, *args, dir=None, **settings):
        self.dir = dir or tempfile.mkdtemp(prefix="strata-it-")
        self.own_dir = dir is None
        self.port = free_port()
        # DEBUG is refused by default, as Redis 7; tests run it from 127.0.0.1
        self.settings = {"appendfsync": "everysec", "loglevel": "notice",
                         "enable-debug-command": "local"}
        self.settings.update({k.replace("_", "-"): str(v) for k, v in settings.items()})
        self.extra = list(args)
        self.proc = None
        self.started = False  # the port moves only before the first start
        self.logfile = os.path.join(self.dir, "server.log")

    def argv(self):
        a = [SERVER, "--port", str(self.port), "--dir", os.path.join(self.dir, "data"),
             "--logfile", self.logfile]
        for k, v in self.settings.items():
            a += ["--" + k, v]
        return a + self.extra

    def start(self, timeout=20):
        """Starts the server and waits until it answers PING. A port that
        free_port() handed out can be taken before the server binds it (by
        a server another test program started, or as a client's source
        port); on the first start the server then moves to another port."""
        moves = 0 if self.started else 5
        while True:
            try:
                self._start(timeout)
                self.started = True
                return self
            except PortTaken:
                if moves == 0:
                    raise
                moves -= 1
                self.port = free_port()

    def _start(self, timeout):
        self.proc = subprocess.Popen(self.argv(), stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir, "stderr.log"), "ab"))
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                if "Address already in use" in self.log_tail(5):
                    raise PortTaken(self.port)
                raise RuntimeError("server exited with %s; log:\n%s" % (self.proc.returncode, self.log_tail()))
            try:
                c = redis.Redis(port=self.port, socket_timeout=2)
                if self.settings.get("requirepass"):
                    c = redis.Redis(port=self.port, socket_timeout=2, password=self.settings["requirepass"])
                c.ping()
                owner = answered_by(c)
                c.connection_pool.disconnect()  # close() alone leaves the socket open
                if owner not in (None, self.proc.pid):
                    # Another server holds the port: ours fails to bind.
                    try:
                        self.proc.wait(timeout)
                    except subprocess.TimeoutExpired:
                        self.proc.kill()
                        self.proc.wait()
                    raise PortTaken(self.port)
                return self
            except (redis.ConnectionError, redis.TimeoutError, ConnectionRefusedError):
                time.sleep(0.05)
            except redis.ResponseError:
                return self
        raise RuntimeError("server did not answer PING in %ss" % timeout)

    def log_tail(self, n=40):
        out = []
        for f in (self.logfile, os.path.join(self.dir, "stderr.log")):
            try:
                with open(f, errors="replace") as fh:
                    out += fh.read().splitlines()[-n:]
            except OSError:
                pass
        return "\n".join(out)

    def client(self, **kw):
        kw.setdefault("port", self.port)
        kw.setdefault("socket_timeout", 30)
        return redis.Redis(**kw)

    def raw(self, timeout=20):
        """A RawConn to this server."""
        return RawConn(self.port, timeout)

    def cli(self, *args, input=None):
        """Runs redis-cli against the server; returns (exit code, stdout text)."""
        p = subprocess.run([REDIS_CLI, "-p", str(self.port)] + [str(a) for a in args],
                           input=input, capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("server did not stop on signal %d" % sig)
        rc = self.proc.returncode if self.proc else None
        self.proc = None
        return rc

    def kill9(self):
        return self.stop(signal.SIGKILL)

    def restart(self):
        self.stop()
        return self.start()

    def sanitizer_report(self):
        """The first sanitizer report in the server's stderr, or None."""
        try:
            with open(os.path.join(self.dir, "stderr.log"), errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return None
        for i, l in enumerate(lines):
            if any(m in l for m in SANITIZER_MARKS):
                return "\n".join(lines[i:i + 25])
        return None

    def cleanup(self):
        try:
            self.stop(timeout=10)  # SIGTERM: a clean exit runs the leak check
        except Exception:
            try:
                self.stop(signal.SIGKILL)
            except Exception:
                pass
        report = self.sanitizer_report()
        if report:
            _sanitizer_reports.append(report)
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def flip_byte(path, off):
    """Flips bit 4 of the byte at off in the file at path (damage for tests)."""
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x10]))


class RespError(Exception):
    """An error reply read by RawConn (the text without the leading '-')."""


class RawConn:
    """A plain socket speaking RESP, for tests that need exact bytes:
    inline commands, pipelines written in one go, protocol errors, RESP3."""

    def __init__(self, port, timeout=20):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""
        self.last_raw = b""

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def send(self, data):
        self.s.sendall(data)

    def command(self, *args):
        self.send(self.encode(*args))
        return self.read_reply()

    def _fill(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise ConnectionError("connection closed by server")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        self.last_raw += line + b"\r\n"
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        self.last_raw += data + b"\r\n"
        return data

    def read_reply(self):
        """One reply as a Python value; errors come back as RespError
        objects (not raised). self.last_raw holds its exact bytes."""
        self.last_raw = b""
        return self._read()

    def _read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"("):  # status; RESP3 big number as its digits
            return rest.decode()
        if t == b"-":
            return RespError(rest.decode())
        if t == b":":
            return int(rest)
        if t in (b"$", b"="):
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t in (b"*", b"~", b">"):
            n = int(rest)
            return None if n < 0 else [self._read() for _ in range(n)]
        if t == b"%":
            return {self._freeze(self._read()): self._read() for _ in range(int(rest))}
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        if t == b"#":
            return rest == b"t"
        raise ValueError("bad reply type %r" % line)

    @staticmethod
    def _freeze(v):
        return tuple(v) if isinstance(v, list) else v

    def closed_by_server(self, timeout=30):
        """True when the server closes the connection within timeout (any
        bytes still in flight are drained first)."""
        self.s.settimeout(timeout)
        try:
            while True:
                if not self.s.recv(1 << 16):
                    return True
        except (socket.timeout, TimeoutError):
            return False
        except (ConnectionResetError, BrokenPipeError):
            return True

    def close(self):
        self.s.close()


_tests = []


def test(fn):
    _tests.append(fn)
    return fn


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    failed = 0
    for fn in _tests:
        if only and only not in fn.__name__:
            continue
        srv = None
        t0 = time.time()
        del _sanitizer_reports[:]
        ok = False
        try:
            if fn.__code__.co_argcount:
                srv = Server().start()
                fn(srv)
            else:
                fn()
            ok = True
        except Exception as e:
            tb = traceback.format_exc().strip().splitlines()
            print("FAIL %s: %s: %s" % (fn.__name__, type(e).__name__, str(e)[:300]), flush=True)
            print("\n".join("    " + l for l in tb[-8:]), flush=True)
            if srv:
                print("    server log:\n" + "\n".join("      " + l for l in srv.log_tail(15).splitlines()), flush=True)
        finally:
            if srv:
                srv.cleanup()
        if ok and _sanitizer_reports:
            ok = False
            print("FAIL %s: the server reported a sanitizer error" % fn.__name__, flush=True)
        for r in _sanitizer_reports:
            print("\n".join("    " + l for l in r.splitlines()), flush=True)
        if ok:
            print("PASS %s (%.1fs)" % (fn.__name__, time.time() - t0), flush=True)
        else:
            failed += 1
    sys.exit(1 if failed else 0)
