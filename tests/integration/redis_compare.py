"""redis_compare.py -- the real-redis reference shared by the integration
tests: a throwaway redis-server and a line-by-line comparison of replies and
error texts between it and strata. Not a test program itself (the runner only
runs test_*.py).

Run with /usr/bin/python3 (python3-redis)."""
import os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import answered_by, free_port


class RealRedis:
    """A throwaway redis-server, the reference for replies and errors."""

    def __init__(self, *extra):
        """extra: more command-line arguments, e.g. "--enable-debug-command", "yes"."""
        self.dir = tempfile.mkdtemp(prefix="strata-ref-")
        exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        # A port free_port() handed out can be bound by someone else before
        # redis-server binds it: then it exits, or another server answers.
        for _ in range(5):
            self.port = free_port()
            self.proc = subprocess.Popen([exe, "--port", str(self.port), "--save", "",
                                          "--appendonly", "no", "--dir", self.dir] + list(extra),
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._answers(30):
                return
        raise RuntimeError("redis-server found no free port")

    def _answers(self, timeout):
        """True once this redis-server answers on self.port; False when it
        exited or another server answers there."""
        deadline = time.time() + timeout
        while self.proc.poll() is None:
            try:
                c = redis.Redis(port=self.port)
                owner = answered_by(c)
                c.connection_pool.disconnect()
                if owner in (None, self.proc.pid):
                    return True
                self.proc.kill()
                self.proc.wait()
                return False
            except redis.ConnectionError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)
        return False

    def client(self):
        return redis.Redis(port=self.port)

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def reply(client, cmd):
    try:
        return ("ok", client.execute_command(*cmd))
    except redis.ResponseError as e:
        return ("err", str(e))


def compare_with_redis(srv, script, loose=()):
    """Runs each line of script on strata and on redis-server; replies must
    be equal. Commands in loose only have to agree on ok/err (timing)."""
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        diffs = []
        for line in script.strip().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            cmd = line.split(" ")
            cmd = [a.replace("\\s", " ") for a in cmd]
            a, b = reply(s, cmd), reply(r, cmd)
            same = a[0] == b[0] if cmd[0].lower() in loose and a[0] == "ok" else a == b
            if not same:
                diffs.append("%s: strata %r, redis %r" % (line, a, b))
        assert not diffs, "\n".join(diffs)
    finally:
        ref.close()
