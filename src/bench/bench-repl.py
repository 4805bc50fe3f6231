#!/usr/bin/python3
"""bench-repl.py -- the cost of replication: redis-benchmark SET and HSET
(-c 50 -P 16) against a primary with two replicas and with none, for strata
and redis-server side by side, alternating; prints the throughput ratio
(with replicas / without; wall time, noisy here), the primary's CPU time and
CPU per request (the steadier figure), the stream size, the replicas' lag
in bytes when the benchmark ends and the time they take to catch up (the
lag in ms), then a summary; with --out FILE also writes all of it there.

    src/bench/bench-repl.py [requests] [rounds] [--out FILE]
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STRATA = os.environ.get("STRATA_SERVER", os.path.join(ROOT, "src", "strata-server"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(kind, tmp):
    port = free_port()
    d = tempfile.mkdtemp(dir=tmp)
    if kind == "strata":
        argv = [STRATA, "--port", str(port), "--dir", d, "--logfile", os.path.join(d, "log")]
    else:
        argv = ["redis-server", "--port", str(port), "--dir", d, "--save", "", "--appendonly",
                "yes", "--logfile", os.path.join(d, "log")]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    c = redis.Redis(port=port, socket_timeout=30)
    for _ in range(200):
        try:
            c.ping()
            return p, port, c
        except redis.ConnectionError:
            time.sleep(0.05)
    raise RuntimeError("%s did not start" % kind)


def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def offsets(mc, rcs):
    mo = mc.info("replication")["master_repl_offset"]
    return mo, [mo - r.info("replication").get("slave_repl_offset", 0) for r in rcs]


def run(kind, nrep, test, n, tmp):
    procs = []
    try:
        mp, mport, mc = start(kind, tmp)
        procs.append(mp)
        rcs = []
        for _ in range(nrep):
            p, _, c = start(kind, tmp)
            procs.append(p)
            c.replicaof("127.0.0.1", mport)
            rcs.append(c)
        while any(r.info("replication").get("master_link_status") != "up" for r in rcs):
            time.sleep(0.05)
        c0 = cpu(mp.pid)
        out = subprocess.run(["redis-benchmark", "-p", str(mport), "-c", "50", "-P", "16", "-n",
                              str(n), "-r", "100000", "-t", test, "-q"], capture_output=True,
                             check=True, text=True).stdout
        c1 = cpu(mp.pid)
        t1 = time.time()
        mo, lag = offsets(mc, rcs)
        while rcs and max(offsets(mc, rcs)[1]) > 0:
            time.sleep(0.002)
        rps = float(out.replace("\r", "\n").split("requests per second")[-2].split()[-1])
        return c1 - c0, mo, lag, time.time() - t1, rps
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--out")]
    out = None
    if "--out" in sys.argv:
        out = sys.argv[sys.argv.index("--out") + 1]
        args.remove(out)
    n = int(args[0]) if len(args) > 0 else 300000
    rounds = int(args[1]) if len(args) > 1 else 2
    tmp = tempfile.mkdtemp(prefix="bench-repl-")
    lines = ["bench-repl.py %d requests, %d rounds, redis-benchmark -c 50 -P 16 -r 100000, "
             "primary + 2 replicas vs primary alone, strata and redis-server alternating"
             % (n, rounds)]
    summary = {}

    def say(line):
        lines.append(line)
        print(line, flush=True)

    try:
        for test in ("set", "hset"):
            for r in range(rounds):
                for kind in ("strata", "redis"):
                    c0, _, _, _, rps0 = run(kind, 0, test, n, tmp)
                    c2, mo, lag, catch, rps2 = run(kind, 2, test, n, tmp)
                    say("%-6s %-4s round %d: %.0f -> %.0f req/s with 2 replicas (x%.2f); primary "
                        "CPU %.2fs -> %.2fs (x%.2f), %.2f -> %.2f us/request; stream %d bytes; lag "
                        "at end %s bytes, caught up in %.0f ms"
                        % (kind, test, r, rps0, rps2, rps2 / rps0, c0, c2, c2 / c0,
                           c0 / n * 1e6, c2 / n * 1e6, mo, lag, catch * 1000))
                    summary.setdefault((kind, test), []).append(
                        (rps2 / rps0, c0 / n * 1e6, c2 / n * 1e6, max(lag), catch * 1000))
        say("summary over the rounds (min-max): throughput ratio with/without replicas, primary "
            "CPU us/request alone -> with replicas, max lag at the end in bytes and ms")
        for (kind, test), v in sorted(summary.items()):
            lo, hi = [min(x) for x in zip(*v)], [max(x) for x in zip(*v)]
            say("  %-6s %-4s ratio x%.2f-%.2f  CPU %.2f-%.2f -> %.2f-%.2f us/req  lag %d-%d bytes "
                "%.0f-%.0f ms" % (kind, test, lo[0], hi[0], lo[1], hi[1], lo[2], hi[2], lo[3], hi[3],
                                  lo[4], hi[4]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if out:
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
