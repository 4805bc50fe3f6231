#!/usr/bin/python3
"""ft_vs_idx.py -- server CPU per query: the profile workload's lookups,
scans and queries as FT.SEARCH beside the same ones as IDX.RANGE, on one
strata-server holding N profiles and both sets of four indexes.

    src/bench/ft_vs_idx.py [--profiles 100000] [--queries 2000] [--rounds 3] [--writes 30000]

CPU is the server command thread's utime + stime
(/proc/<pid>/task/<pid>/stat) over a batch of queries (each round new ones; FT.SEARCH's cached totals help only where
the workload repeats a range, as the 128 country/status pairs do), the two
forms alternating batch by batch (TEAM.md: wall time is
noisy here). Profiles follow the workload's distributions (32 countries, 4
statuses, created_at increasing with the id, reputation uniform). --writes
N also measures the CPU of one HSET of a new profile on three fresh servers:
no index, the four IDX indexes, the four FT indexes.
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.environ.get("STRATA_SERVER", os.path.join(ROOT, "src", "strata-server"))
COUNTRIES = ["US", "DE", "FR", "GB", "JP", "BR", "IN", "CN", "CA", "AU", "ES", "IT", "NL", "SE",
             "NO", "FI", "DK", "PL", "CZ", "AT", "CH", "BE", "IE", "PT", "GR", "TR", "MX", "AR",
             "CL", "ZA", "KR", "NZ"]
STATUSES = ["active", "suspended", "deleted", "pending"]
BASE = 1672531200000


def mix(x):
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & 0xFFFFFFFFFFFFFFFF
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & 0xFFFFFFFFFFFFFFFF
    return x ^ (x >> 31)


def profile(i):
    a, b = mix(i + 570123434), mix(mix(i + 570123434) + 0x9E3779B97F4A7C15)
    return {"user_id": i, "email": "user%012d@example%02d.com" % (i, i % 97),
            "country": COUNTRIES[a % 32], "status": STATUSES[(a >> 8) % 4],
            "created_at": BASE + i * 1000 + a % 997, "last_login": BASE + b % 7776000000,
            "reputation": b % 1000000, "display_name": "User %012d" % i,
            "bio": "Profile %d has segment %04d." % (i, b % 10000)}


def cpu(pid):
    """The command thread's CPU seconds (engine threads' flushes and
    compactions are left out: they are not the query's)."""
    with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


IDX_DEFS = ["IDX.CREATE email PREFIX user: UNIQUE SCHEMA email TAG",
            "IDX.CREATE country_status PREFIX user: SCHEMA country TAG status TAG user_id NUMERIC",
            "IDX.CREATE created_at PREFIX user: SCHEMA created_at NUMERIC user_id NUMERIC",
            "IDX.CREATE reputation PREFIX user: SCHEMA reputation NUMERIC DESC user_id NUMERIC"]
FT_DEFS = ["FT.CREATE ftemail ON HASH PREFIX 1 user: SCHEMA email TAG",
           "FT.CREATE ftcs ON HASH PREFIX 1 user: SCHEMA country TAG status TAG user_id NUMERIC SORTABLE",
           "FT.CREATE ftca ON HASH PREFIX 1 user: SCHEMA created_at NUMERIC SORTABLE "
           "user_id NUMERIC SORTABLE NOINDEX",
           "FT.CREATE ftrep ON HASH PREFIX 1 user: SCHEMA reputation NUMERIC SORTABLE "
           "user_id NUMERIC SORTABLE NOINDEX"]


def load(r, n):
    p = r.pipeline(transaction=False)
    for i in range(1, n + 1):
        p.hset("user:%d" % i, mapping=profile(i))
        if i % 1000 == 0:
            p.execute()
    p.execute()


def start_server(d):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([SERVER, "--port", str(port), "--dir", d + "/data", "--logfile", d + "/log"])
    r = redis.Redis(port=port)
    for _ in range(100):
        try:
            r.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    return proc, r


def write_cpu(n, defs):
    """Command-thread CPU of one HSET of a new profile under defs (us)."""
    d = tempfile.mkdtemp(prefix="strata-ftbench-")
    proc, r = start_server(d)
    try:
        for cmd in defs:
            r.execute_command(*cmd.split())
        c0 = cpu(proc.pid)
        load(r, n)
        return (cpu(proc.pid) - c0) / n * 1e6
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)


def queries(n, q):
    import random
    rnd = random.Random(7)
    out = {"email": [], "cs": [], "cs_keys": [], "ca": [], "top": []}
    for _ in range(q):
        i = rnd.randrange(1, n + 1)
        email = profile(i)["email"]
        esc = "".join("\\" + c if c in "@.-" else c for c in email)
        out["email"].append((("IDX.RANGE", "email", "EQ", email, "LIMIT", 0, 1, "HASHES"),
                             ("FT.SEARCH", "ftemail", "@email:{%s}" % esc, "LIMIT", 0, 1)))
        c, s = rnd.choice(COUNTRIES), rnd.choice(STATUSES)
        out["cs"].append((("IDX.RANGE", "country_status", "EQ", c, s, "LIMIT", 0, 100, "HASHES"),
                          ("FT.SEARCH", "ftcs", "@country:{%s} @status:{%s}" % (c, s), "SORTBY",
                           "user_id", "LIMIT", 0, 100)))
        out["cs_keys"].append((("IDX.RANGE", "country_status", "EQ", c, s, "LIMIT", 0, 100),
                               ("FT.SEARCH", "ftcs", "@country:{%s} @status:{%s}" % (c, s), "SORTBY",
                                "user_id", "NOCONTENT", "LIMIT", 0, 100)))
        start = rnd.randrange(1, max(2, n - 5000))
        lo, hi = profile(start)["created_at"], profile(min(n, start + 5000))["created_at"]
        out["ca"].append((("IDX.RANGE", "created_at", "MIN", lo, "MAX", hi, "LIMIT", 0, 100, "HASHES"),
                          ("FT.SEARCH", "ftca", "@created_at:[%d %d]" % (lo, hi), "SORTBY",
                           "created_at", "LIMIT", 0, 100)))
        out["top"].append((("IDX.RANGE", "reputation", "LIMIT", 0, 100, "HASHES"),
                           ("FT.SEARCH", "ftrep", "*", "SORTBY", "reputation", "DESC", "LIMIT", 0, 100)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profiles", type=int, default=100000)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--writes", type=int, default=0)
    args = ap.parse_args()
    if args.writes:
        print("HSET of a new profile, server CPU (us), %d profiles:" % args.writes)
        for _ in range(2):
            print("  no index %.1f   IDX %.1f   FT %.1f" % (write_cpu(args.writes, []),
                                                          write_cpu(args.writes, IDX_DEFS),
                                                          write_cpu(args.writes, FT_DEFS)))
    d = tempfile.mkdtemp(prefix="strata-ftbench-")
    proc, r = start_server(d)
    try:
        for cmd in IDX_DEFS + FT_DEFS:
            r.execute_command(*cmd.split())
        load(r, args.profiles)
        r.execute_command("SAVE")
        qs = queries(args.profiles, args.queries * args.rounds)  # each round its own queries
        print("%d profiles, %d queries per batch, %d rounds; server CPU per query (us)" %
              (args.profiles, args.queries, args.rounds))
        print("%-28s %10s %10s %8s" % ("query", "IDX.RANGE", "FT.SEARCH", "ratio"))
        for name, pairs in qs.items():
            tot = [0.0, 0.0]
            for rnd in range(args.rounds):
                batch = pairs[rnd * args.queries:(rnd + 1) * args.queries]
                for form in (0, 1):
                    c0 = cpu(proc.pid)
                    pl = r.pipeline(transaction=False)
                    for k, pr in enumerate(batch):
                        pl.execute_command(*pr[form])
                        if k % 100 == 99:
                            pl.execute()
                    pl.execute()
                    tot[form] += cpu(proc.pid) - c0
            us = [t / len(pairs) * 1e6 for t in tot]
            print("%-28s %10.1f %10.1f %8.2f" % (name, us[0], us[1], us[0] / us[1] if us[1] else 0))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
