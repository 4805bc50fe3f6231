#!/usr/bin/python3
"""bench-backup.py -- what BACKUP <dir> costs: wall time, the server's CPU
time and the extra bytes on disk (the blocks of the copy's files that are
not also a name in the data directory: hard links count once, as du's).

  /usr/bin/python3 src/bench/bench-backup.py [--keys 1000000] SERVER [SERVER ...]

Each server binary is measured in turn, alternating, --rounds times, on the
same data (--keys SETs of random 50-byte values, then SAVE so they are in tables,
then 1000 more SETs left in the log). Prints one line per run."""
import argparse
import os
import shutil
import socket
import subprocess
import tempfile
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def du(*paths):
    out = subprocess.run(["du", "-s", "-B1", "-c"] + list(paths), capture_output=True,
                         text=True, check=True).stdout
    return int(out.strip().splitlines()[-1].split()[0])


def unshared(copy, data):
    """Bytes on disk of the files in copy that are not a name of a file in
    data (what du counts for copy beside data, measured at one moment)."""
    live = {os.stat(os.path.join(data, f)).st_ino for f in os.listdir(data)
            if os.path.isfile(os.path.join(data, f))}
    return sum(st.st_blocks * 512 for st in (os.stat(os.path.join(copy, f))
                                             for f in os.listdir(copy)) if st.st_ino not in live)


def run(binary, keys):
    tmp = tempfile.mkdtemp(prefix="strata-bench-backup-")
    port = free_port()
    data = os.path.join(tmp, "data")
    proc = subprocess.Popen([binary, "--port", str(port), "--dir", data, "--logfile",
                             os.path.join(tmp, "log"), "--appendfsync", "everysec"])
    try:
        c = redis.Redis(port=port)
        for _ in range(200):
            try:
                c.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        p = c.pipeline(transaction=False)
        for i in range(keys):
            p.set("key:%010d" % i, os.urandom(25).hex())
            if i % 10000 == 9999:
                p.execute()
        p.execute()
        c.save()
        for i in range(1000):
            p.set("log:%d" % i, i)
        p.execute()
        dest = os.path.join(tmp, "copy")
        cpu0, t0 = cpu_s(proc.pid), time.time()
        c.execute_command("BACKUP", dest)
        while c.info("persistence")["backup_in_progress"]:
            time.sleep(0.005)
        took, cpu = time.time() - t0, cpu_s(proc.pid) - cpu0
        err = c.info("persistence").get("backup_last_error")
        extra = unshared(dest, data)
        return took, cpu, extra, du(dest), err
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("servers", nargs="+")
    a = ap.parse_args()
    for r in range(a.rounds):
        for s in a.servers:
            took, cpu, extra, size, err = run(s, a.keys)
            print("%s round %d: %d keys, BACKUP %.3f s wall, %.3f s server CPU, %d extra bytes "
                  "on disk (copy alone %d)%s" % (s, r, a.keys, took, cpu, extra, size,
                                                 " error: " + err if err else ""), flush=True)


if __name__ == "__main__":
    main()
