"""redis_compare.py -- the real-redis reference shared by the integration
tests: a throwaway redis-server and a line-by-line comparison of replies and
error texts between it and strata. Not a test program itself (the runner only
runs test_*.py).

Run with /usr/bin/python3 (python3-redis)."""
import os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import free_port


class RealRedis:
    """A throwaway redis-server, the reference for replies and errors."""

    def __init__(self, *extra):
        """extra: more command-line arguments, e.g. "--enable-debug-command", "yes"."""
        self.dir = tempfile.mkdtemp(prefix="strata-ref-")
        self.port = free_port()
        exe = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.proc = subprocess.Popen([exe, "--port", str(self.port), "--save", "",
                                      "--appendonly", "no", "--dir", self.dir] + list(extra),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while True:
            try:
                redis.Redis(port=self.port).ping()
                break
            except redis.ConnectionError:
                if time.time() > deadline:
                    raise
                time.sleep(0.05)

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
