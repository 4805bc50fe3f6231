"""test_bullmq.py -- BullMQ (npm `bullmq`) as a user runs it, against strata
and against redis-server: a queue of 1_000 jobs (STRATA_BULLMQ_JOBS), some
delayed, some failing twice and retried with backoff, two workers and a
QueueEvents listener (bullmq/queue_check.js says what is checked: every job
completed exactly once, every event seen).

The package (version pinned in bullmq/package.json) is installed once under
$BUILD/npm/bullmq and reused. When node is missing, the npm registry cannot
be reached, or strata lacks a command family BullMQ's Lua scripts call
(it names it), the test prints a SKIP line saying so and passes nothing.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npm_packages import npm_install  # noqa: E402
from harness import ROOT, RawConn, Server  # noqa: E402
from redis_compare import RealRedis  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bullmq")
NPM_DIR = os.path.join(ROOT, os.environ.get("BUILD", "build"), "npm", "bullmq")
JOBS = os.environ.get("STRATA_BULLMQ_JOBS", "1000")
# One command of each family BullMQ's scripts call.
NEEDS = ["ZADD", "LPUSH", "XADD", "EVALSHA", "HSET", "SADD"]


def install():
    """Returns None when the packages are there, else why they are not."""
    return npm_install(os.path.join(HERE, "package.json"), NPM_DIR, "bullmq", timeout=300)


def missing_command(port):
    """The first of NEEDS the server does not know, or None."""
    r = RawConn(port)
    try:
        for name in NEEDS:
            if r.command("COMMAND", "INFO", name) in ([None], [], None):
                return name
        return None
    finally:
        r.close()


def run_check(which, port, script):
    p = subprocess.run(["node", script, str(port), JOBS], capture_output=True, text=True,
                       timeout=300, cwd=NPM_DIR)
    out = (p.stdout.strip().splitlines() or [""])[-1]
    if p.returncode == 0:
        print("PASS bullmq_on_%s: %s" % (which, out))
        return 0
    print("FAIL bullmq_on_%s: %s %s" % (which, out, p.stderr.strip()[-1000:]))
    return 1


def main():
    why = install()
    if why:
        print("SKIP bullmq: %s" % why)
        return 0
    script = os.path.join(NPM_DIR, "queue_check.js")
    shutil.copy(os.path.join(HERE, "queue_check.js"), script)  # resolves bullmq in NPM_DIR
    srv = Server().start()
    ref = None
    try:
        lacking = missing_command(srv.port)
        if lacking:
            print("SKIP bullmq: strata has no %s yet, which BullMQ's scripts call" % lacking)
            return 0
        ref = RealRedis()
        failed = run_check("redis", ref.port, script)
        failed += run_check("strata", srv.port, script)
        return 1 if failed else 0
    finally:
        srv.cleanup()
        if ref:
            ref.close()


if __name__ == "__main__":
    sys.exit(main())
