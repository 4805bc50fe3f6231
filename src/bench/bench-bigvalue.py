#!/usr/bin/python3
"""bench-bigvalue.py -- server CPU per request of the commands that edit a
large string in place, strata-server against Debian's redis-server in the
same run, alternating, at realistic sizes:

  setbit_1mb   SETBIT bm <random offset below 8 Mi> <0|1> on one 1 MB bitmap
               (made first by SETBIT bm 8388607 1)
  pfadd_dense  PFADD hll <random element> on one dense HyperLogLog (made
               first by PFADD of 20_000 elements, 12 KB of registers)
  getbit_1mb   GETBIT bm <random offset> on the same bitmap (a read, for
               comparison)

  src/bench/bench-bigvalue.py [--n N] [--runs R] [--tests a,b] [--pipeline P]

Each request goes over one connection, P requests per round trip (default
16). Both servers run with appendfsync everysec (redis-server: appendonly
yes, no RDB). The figure is the server's CPU time (utime + stime of every
thread, /proc/<pid>/stat) per request, read after the server has been idle
for 0.3 s before and after each run, and the ratio redis/strata (above 1
when strata spends less). The client's own time does not count.

Environment: STRATA_SERVER (default src/strata-server).
"""
import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HZ = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def cmd(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError("server closed")
            self.buf += d
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        line = self._line()
        if line[:1] == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 20)
            v, self.buf = self.buf[:n], self.buf[n + 2 :]
            return v
        if line[:1] == b"-":
            raise RuntimeError(line.decode())
        return line[1:]

    def call(self, *args):
        self.s.sendall(cmd(*args))
        return self.reply()

    def pipe(self, reqs):
        self.s.sendall(b"".join(reqs))
        for _ in reqs:
            self.reply()


def cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / HZ


def start(kind, port, d, strata):
    os.makedirs(d)
    log = open(os.path.join(d, "log"), "w")
    if kind == "strata":
        argv = [strata, "--port", str(port), "--dir", d, "--appendfsync", "everysec"]
    else:
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", d,
                "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""]
    p = subprocess.Popen(argv, stdout=log, stderr=log)
    for _ in range(600):
        try:
            c = Conn(port)
            if c.call("PING") == b"PONG":
                return p, c
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(kind + " did not start")


def requests(test, n, rng):
    if test in ("setbit_1mb", "getbit_1mb"):
        op = "SETBIT" if test == "setbit_1mb" else "GETBIT"
        for _ in range(n):
            off = rng.randrange(8 << 20)
            yield cmd(op, "bm", off, rng.randrange(2)) if op == "SETBIT" else cmd(op, "bm", off)
    else:
        for _ in range(n):
            yield cmd("PFADD", "hll", "e:%d" % rng.randrange(1 << 40))


def fill(c):
    c.call("SETBIT", "bm", (8 << 20) - 1, 1)
    els = ["f:%d" % i for i in range(20000)]
    for i in range(0, len(els), 1000):
        c.call("PFADD", "hll", *els[i : i + 1000])
    assert c.call("STRLEN", "hll") == b"12304", "the HLL is not dense"


def run(p, c, test, n, pipeline, seed):
    rng = random.Random(seed)
    time.sleep(0.3)
    t0 = cpu(p.pid)
    batch = []
    for r in requests(test, n, rng):
        batch.append(r)
        if len(batch) == pipeline:
            c.pipe(batch)
            batch = []
    if batch:
        c.pipe(batch)
    time.sleep(0.3)
    return cpu(p.pid) - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--tests", default="setbit_1mb,pfadd_dense,getbit_1mb")
    a = ap.parse_args()
    strata = os.environ.get("STRATA_SERVER", "src/strata-server")
    tmp = tempfile.mkdtemp()
    procs = {}
    try:
        for kind in ("strata", "redis"):
            port = free_port()
            procs[kind] = start(kind, port, os.path.join(tmp, kind), strata)
            fill(procs[kind][1])
        tot = {}
        for test in a.tests.split(","):
            for r in range(a.runs):
                for kind in ("strata", "redis"):
                    p, c = procs[kind]
                    t = run(p, c, test, a.n, a.pipeline, r)
                    tot[(test, kind)] = tot.get((test, kind), 0) + t
        print("%-12s %14s %14s %8s" % ("test", "strata us/req", "redis us/req", "r/s"))
        ratios = []
        for test in a.tests.split(","):
            s = tot[(test, "strata")] / (a.n * a.runs) * 1e6
            rd = tot[(test, "redis")] / (a.n * a.runs) * 1e6
            ratio = rd / s if s else float("inf")
            ratios.append("%s=%.2f" % (test, ratio))
            print("%-12s %14.2f %14.2f %8.2f" % (test, s, rd, ratio))
        print("redis/strata CPU-time ratios: " + " ".join(ratios))
    finally:
        for kind, (p, c) in procs.items():
            try:
                c.call("SHUTDOWN", "NOSAVE")
            except Exception:
                pass
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
