#!/usr/bin/python3
"""bench-repl.py -- the cost of replication: redis-benchmark SET and HSET
(-c 50 -P 16) against a primary with two replicas and with none, for strata
and redis-server side by side, alternating; prints the primary's CPU time
(the machine's wall time is too noisy), the stream size, the replicas' lag
in bytes when the benchmark ends and the time they take to catch up.

    src/bench/bench-repl.py [requests] [rounds]
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
STRATA = os.path.join(ROOT, "src", "strata-server")


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
        subprocess.run(["redis-benchmark", "-p", str(mport), "-c", "50", "-P", "16", "-n", str(n),
                        "-r", "100000", "-t", test, "-q"], capture_output=True, check=True)
        c1 = cpu(mp.pid)
        t1 = time.time()
        mo, lag = offsets(mc, rcs)
        while rcs and max(offsets(mc, rcs)[1]) > 0:
            time.sleep(0.002)
        return c1 - c0, mo, lag, time.time() - t1
    finally:
        for p in procs:
            p.kill()
            p.wait()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    tmp = tempfile.mkdtemp(prefix="bench-repl-")
    try:
        for test in ("set", "hset"):
            for r in range(rounds):
                for kind in ("strata", "redis"):
                    c0, _, _, _ = run(kind, 0, test, n, tmp)
                    c2, mo, lag, catch = run(kind, 2, test, n, tmp)
                    print("%-6s %-4s round %d: primary CPU %.2fs alone, %.2fs with 2 replicas "
                          "(x%.2f); stream %d bytes; lag at end %s bytes; caught up in %.0f ms"
                          % (kind, test, r, c0, c2, c2 / c0, mo, lag, catch * 1000), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
