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
"""
import os, shutil, signal, socket, subprocess, sys, tempfile, time, traceback

import redis  # Debian's python3-redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.environ.get("STRATA_SERVER", os.path.join(ROOT, "src", "strata-server"))
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, *args, dir=None, **settings):
        self.dir = dir or tempfile.mkdtemp(prefix="strata-it-")
        self.own_dir = dir is None
        self.port = free_port()
        self.settings = {"appendfsync": "everysec", "loglevel": "notice"}
        self.settings.update({k.replace("_", "-"): str(v) for k, v in settings.items()})
        self.extra = list(args)
        self.proc = None
        self.logfile = os.path.join(self.dir, "server.log")

    def argv(self):
        a = [SERVER, "--port", str(self.port), "--dir", os.path.join(self.dir, "data"),
             "--logfile", self.logfile]
        for k, v in self.settings.items():
            a += ["--" + k, v]
        return a + self.extra

    def start(self, timeout=20):
        self.proc = subprocess.Popen(self.argv(), stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.dir, "stderr.log"), "ab"))
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited with %s; log:\n%s" % (self.proc.returncode, self.log_tail()))
            try:
                c = redis.Redis(port=self.port, socket_timeout=2)
                if self.settings.get("requirepass"):
                    c = redis.Redis(port=self.port, socket_timeout=2, password=self.settings["requirepass"])
                c.ping()
                c.close()
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

    def cleanup(self):
        try:
            self.stop(signal.SIGKILL)
        except Exception:
            pass
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


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
        try:
            if fn.__code__.co_argcount:
                srv = Server().start()
                fn(srv)
            else:
                fn()
            print("PASS %s (%.1fs)" % (fn.__name__, time.time() - t0), flush=True)
        except Exception as e:
            failed += 1
            tb = traceback.format_exc().strip().splitlines()
            print("FAIL %s: %s: %s" % (fn.__name__, type(e).__name__, str(e)[:300]), flush=True)
            print("\n".join("    " + l for l in tb[-8:]), flush=True)
            if srv:
                print("    server log:\n" + "\n".join("      " + l for l in srv.log_tail(15).splitlines()), flush=True)
        finally:
            if srv:
                srv.cleanup()
    sys.exit(1 if failed else 0)
