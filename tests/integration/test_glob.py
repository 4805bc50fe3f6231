"""test_glob.py -- the one glob matcher (ks_glob_match) as clients see it:
CONFIG GET with backtracking patterns costs little server CPU and does not
hold up other clients; KEYS, SCAN MATCH, HSCAN MATCH (case-sensitive) and
COMMAND LIST FILTERBY PATTERN / CONFIG GET (case-insensitive) give the same
answers as the real redis-server on random patterns full of quirks.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, sys, threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import RawConn, test, main
from redis_compare import RealRedis


def server_cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def backtracking_patterns(n=200):
    # "*?*?...*#": every config name almost matches, and a backtracking
    # matcher tries every way to split the name between the stars.
    return ["*?" * (10 + i % 20) + "#" for i in range(n)]


@test
def config_get_with_backtracking_patterns_costs_little_cpu(srv):
    r = srv.client()
    before = server_cpu_seconds(srv.proc.pid)
    pings = []
    t = threading.Thread(target=lambda: pings.append(srv.client().ping()))
    t.start()
    assert r.execute_command("CONFIG", "GET", *backtracking_patterns()) in ([], {})
    t.join(30)
    used = server_cpu_seconds(srv.proc.pid) - before
    assert pings == [True]
    # The exponential matcher spent 30+ s here; the linear one milliseconds.
    assert used < 2.0, "CONFIG GET of 200 patterns used %.2f s of server CPU" % used


# Bytes that reach every branch of the matcher: class syntax, escapes,
# case, and bytes >= 0x80 (which compare as signed char in class ranges).
PAT_ALPHABET = b"ab*?[]^-\\Az\x80\xff*?"
KEY_ALPHABET = b"abAz]-^\\[\x80\xff*?"


def random_word(rnd, alphabet, maxlen):
    return bytes(rnd.choice(alphabet) for _ in range(rnd.randint(0, maxlen)))


@test
def keys_scan_and_hscan_match_like_redis_on_random_patterns(srv):
    rnd = random.Random(12)
    keys = {random_word(rnd, KEY_ALPHABET, 6) for _ in range(400)} | {b""}
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        for c in (s, r):
            c.mset({k: b"1" for k in keys})
            c.hset("hash:glob", mapping={k: b"1" for k in keys})
        pats = [random_word(rnd, PAT_ALPHABET, 8) for _ in range(400)] + [b"*", b"**", b""]
        diffs = []
        for p in pats:
            a, b = sorted(s.keys(p)), sorted(r.keys(p))
            if a != b:
                diffs.append("KEYS %r: strata %r, redis %r" % (p, a, b))
            if p and p[0] in b"a[":  # SCAN and HSCAN through the same matcher
                a = sorted(s.scan_iter(match=p, count=1000))
                b = sorted(r.scan_iter(match=p, count=1000))
                if a != b:
                    diffs.append("SCAN MATCH %r: strata %r, redis %r" % (p, a, b))
                a = sorted(f for f, _ in s.hscan_iter("hash:glob", match=p))
                b = sorted(f for f, _ in r.hscan_iter("hash:glob", match=p))
                if a != b:
                    diffs.append("HSCAN MATCH %r: strata %r, redis %r" % (p, a, b))
        assert not diffs, "\n".join(diffs[:10])
    finally:
        ref.close()


NOCASE_ALPHABET = "aeiostlgcx*?[]^-\\AEIOST|."


@test
def command_list_and_config_get_match_like_redis_ignoring_case(srv):
    rnd = random.Random(7)
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        # python3-redis parses COMMAND replies as COMMAND INFO: use raw RESP.
        s_raw, r_raw = srv.raw(), RawConn(ref.port)
        ours = set(s_raw.command("COMMAND", "LIST"))
        theirs = set(r_raw.command("COMMAND", "LIST"))
        common_cmds = ours & theirs
        common_cfg = set(s.config_get("*")) & set(r.config_get("*"))
        assert len(common_cmds) > 50 and len(common_cfg) > 10
        diffs = []
        for _ in range(300):
            p = "".join(rnd.choice(NOCASE_ALPHABET) for _ in range(rnd.randint(1, 7)))
            a = set(s_raw.command("COMMAND", "LIST", "FILTERBY", "PATTERN", p)) & common_cmds
            b = set(r_raw.command("COMMAND", "LIST", "FILTERBY", "PATTERN", p)) & common_cmds
            if a != b:
                diffs.append("COMMAND LIST FILTERBY PATTERN %r: strata %r, redis %r" % (p, a, b))
            a = set(s.config_get(p)) & common_cfg
            b = set(r.config_get(p)) & common_cfg
            if a != b:
                diffs.append("CONFIG GET %r: strata %r, redis %r" % (p, a, b))
        assert not diffs, "\n".join(diffs[:10])
    finally:
        ref.close()


if __name__ == "__main__":
    main()
