#!/usr/bin/python3
"""repl-loss.py -- acknowledged writes lost when the primary is killed.

A primary with two replicas takes SETs of unique keys from several writer
connections (pipelines of 50); after a while the primary gets kill -9 under
that load, the replica with the highest offset, once the replicas' offsets stand still,
is promoted (as Sentinel picks it), and every key whose SET was acknowledged is looked up on it. In
"wait" mode each pipeline ends with WAIT 1 1000 and only a pipeline WAIT
confirmed counts as acknowledged: none of those may be missing. Runs strata
and redis-server alike, alternating.

    src/bench/repl-loss.py [runs] [seconds-of-load]
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module  # noqa: E402

bench_repl = import_module("bench-repl")


def writer(port, wid, wait, acked, stop):
    c = redis.Redis(port=port, socket_timeout=5)
    n = 0
    try:
        while not stop.is_set():
            p = c.pipeline(transaction=False)
            keys = ["w%d:%d" % (wid, n + i) for i in range(50)]
            for k in keys:
                p.set(k, "v")
            if wait:
                p.execute_command("WAIT", 1, 1000)
            r = p.execute()
            if not wait or r[-1] >= 1:
                acked.extend(keys)
            n += 50
    except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError):
        pass  # the primary is gone


def one_run(kind, wait, seconds, tmp):
    procs = []
    try:
        mp, mport, mc = bench_repl.start(kind, tmp)
        procs.append(mp)
        reps = []
        for _ in range(2):
            p, port, c = bench_repl.start(kind, tmp)
            procs.append(p)
            c.replicaof("127.0.0.1", mport)
            reps.append(c)
        while any(r.info("replication").get("master_link_status") != "up" for r in reps):
            time.sleep(0.05)
        stop = threading.Event()
        acked = [[] for _ in range(4)]
        ts = [threading.Thread(target=writer, args=(mport, i, wait, acked[i], stop))
              for i in range(4)]
        for t in ts:
            t.start()
        time.sleep(seconds)
        mp.send_signal(signal.SIGKILL)
        mp.wait()
        stop.set()
        for t in ts:
            t.join()
        # What reached the replicas' sockets is theirs: wait until their
        # offsets stand still (Sentinel takes seconds to promote anyway).
        last, still = None, time.time()
        while time.time() - still < 0.5 and time.time() - still < 10:
            offs = [r.info("replication")["slave_repl_offset"] for r in reps]
            if offs != last:
                last, still = offs, time.time()
            time.sleep(0.05)
        best = max(reps, key=lambda r: r.info("replication")["slave_repl_offset"])
        best.replicaof("no", "one")
        keys = [k for a in acked for k in a]
        missing = 0
        for i in range(0, len(keys), 1000):
            p = best.pipeline(transaction=False)
            for k in keys[i:i + 1000]:
                p.exists(k)
            missing += sum(1 for e in p.execute() if not e)
        return len(keys), missing
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 2
    tmp = tempfile.mkdtemp(prefix="repl-loss-")
    try:
        for wait in (False, True):
            for kind in ("strata", "redis"):
                lost = []
                for r in range(runs):
                    n, missing = one_run(kind, wait, seconds, tmp)
                    lost.append(missing)
                    print("%-6s %-9s run %d: %d writes acknowledged, %d missing on the promoted "
                          "replica" % (kind, "WAIT 1" if wait else "no WAIT", r, n, missing),
                          flush=True)
                print("%-6s %-9s lost per run: %s" % (kind, "WAIT 1" if wait else "no WAIT", lost),
                      flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
