"""test_lcs.py -- LCS against redis-server 7.0: random pairs of strings
(small alphabets, so there are many equal-length subsequences and the walk
back has to break ties as Redis's does), every option combination and the
error texts; COMMAND GETKEYSANDFLAGS; the answers of a server without
cluster support and without modules (CLUSTER, READONLY, MODULE ...).

Run with /usr/bin/python3 (python3-redis)."""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import test, main
from redis_compare import RealRedis, reply, compare_with_redis

SEED = int(os.environ.get("STRATA_SEED", "1"))

OPTIONS = [[], ["LEN"], ["IDX"], ["IDX", "WITHMATCHLEN"], ["IDX", "MINMATCHLEN", "2"],
           ["IDX", "MINMATCHLEN", "-3", "WITHMATCHLEN"], ["IDX", "minmatchlen", "4", "withmatchlen"],
           ["LEN", "IDX"], ["NOSUCHOPTION"], ["MINMATCHLEN"], ["IDX", "MINMATCHLEN", "x"]]


@test
def lcs_matches_redis_on_random_strings(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        rnd = random.Random(SEED)
        diffs = []
        for _ in range(600):
            a = "".join(rnd.choice("abc") for _ in range(rnd.randint(0, 40)))
            b = "".join(rnd.choice("abcd") for _ in range(rnd.randint(0, 40)))
            for c in (s, r):
                c.delete("k1", "k2")
                if rnd.random() < 0.95 or a:
                    c.set("k1", a)
                c.set("k2", b)
            cmd = ["LCS", "k1", "k2"] + rnd.choice(OPTIONS)
            x, y = reply(s, cmd), reply(r, cmd)
            if x != y:
                diffs.append("%r %r %r: strata %r, redis %r" % (a, b, cmd, x, y))
        assert not diffs, "\n".join(diffs[:5])
    finally:
        ref.close()


@test
def lcs_errors_and_missing_keys_match_redis(srv):
    compare_with_redis(srv, """
        SET s1 ohmytext
        SET s2 mynewtext
        LCS s1 s2
        LCS s1 s2 LEN
        LCS s1 s2 IDX MINMATCHLEN 4 WITHMATCHLEN
        LCS s1 nokey
        LCS nokey nokey2 IDX
        HSET h f v
        LCS s1 h
        LCS h s1 LEN
        RPUSH l x
        LCS l nokey
        LCS s1
        SET n 12345
        SET m 5234
        LCS n m
    """)


@test
def lcs_refuses_a_table_beyond_proto_max_bulk_len(srv):
    c = srv.client()
    c.config_set("proto-max-bulk-len", "1mb")
    c.set("x", "a" * 1000)
    c.set("y", "a" * 1000)  # 1001 * 1001 * 4 bytes > 1 MB
    assert reply(c, ["LCS", "x", "y", "LEN"]) == (
        "err", "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
    c.set("y", "a" * 200)
    assert c.execute_command("LCS", "x", "y", "LEN") == 200


GETKEYS_LINES = [
    ["SET", "a", "b"], ["SET", "a", "b", "GET"], ["LMOVE", "a", "b", "LEFT", "RIGHT"],
    ["SORT", "a", "STORE", "b"], ["EVAL", "return 1", "0"], ["ZUNIONSTORE", "d", "2", "a", "b"],
    ["XREAD", "STREAMS", "s1", "s2", "0", "0"], ["MEMORY", "USAGE", "key"], ["LCS", "k1", "k2"], ["GET"], ["PING"], ["NOSUCHCOMMAND", "a"], []]


@test
def getkeysandflags_matches_redis(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        for line in GETKEYS_LINES:
            # one string for the first words, so redis-py applies no COMMAND reply parser
            cmd = ["COMMAND GETKEYSANDFLAGS"] + line
            assert reply(s, cmd) == reply(r, cmd), (line, reply(s, cmd), reply(r, cmd))
    finally:
        ref.close()


@test
def cluster_and_module_commands_answer_as_redis_without_them(srv):
    compare_with_redis(srv, """
        CLUSTER INFO
        CLUSTER SLOTS
        CLUSTER HELP
        CLUSTER NOSUCH
        CLUSTER KEYSLOT a b
        CLUSTER
        READONLY
        READWRITE
        ASKING
        MODULE LIST
        MODULE HELP
        MODULE LOAD /nonexistent.so
        MODULE UNLOAD search
        MODULE NOSUCH
        MEMORY USAGE nokey
        CONFIG REWRITE
        PUBSUB NUMPAT
        PUBSUB NOSUCH
        CLIENT UNPAUSE
    """)


if __name__ == "__main__":
    main()
