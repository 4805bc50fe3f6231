"""test_sort.py -- SORT and SORT_RO against redis-server 7.0: random
commands (BY keys and hash fields, GET # / keys / fields, LIMIT, ASC/DESC,
ALPHA, STORE) over lists, sets and sorted sets, replies and stored lists
compared; Redis's error texts and COMMAND GETKEYS.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main
from redis_compare import RealRedis

SEED = int(os.environ.get("STRATA_SEED", "1"))
OPS = int(os.environ.get("STRATA_SORT_OPS", "1500"))


def reply(c, cmd):
    try:
        return ("ok", c.execute_command(*cmd))
    except redis.ResponseError as e:
        return ("err", str(e))


def has_zsets(r):
    try:
        r.execute_command("ZCARD", "nosuchkey")
        return True
    except redis.ResponseError:
        return False


def dataset(rnd, zsets):
    """Commands that build the same data on both servers."""
    cmds = []
    nums = rnd.sample(range(-500, 500), 60)
    words = ["w%03d" % i for i in rnd.sample(range(1000), 40)]
    for e in nums + words:  # distinct weights, so ALPHA BY has no ties
        cmds.append(["SET", "wt_%s" % e, str(rnd.random() * 1000)])
        cmds.append(["HSET", "h_%s" % e, "f", "%.6f" % rnd.uniform(-50, 50), "name", "n" + str(e)])
    cmds.append(["SET", "wt_w000", "not-a-number"])  # a bad weight for some elements
    cmds.append(["LPUSH", "h_hashkey_is_list", "x"])
    cmds.append(["RPUSH", "lnum"] + [str(x) for x in rnd.choices(nums, k=25)])
    cmds.append(["RPUSH", "lword"] + rnd.choices(words, k=20))
    cmds.append(["RPUSH", "lmix"] + [str(x) for x in rnd.choices(nums, k=8)] + rnd.choices(words, k=8))
    cmds.append(["RPUSH", "lfloat", "1.5", "-0.25", "1e3", " 7", "0x10", "inf", "-inf", "3"])
    cmds.append(["SADD", "snum"] + [str(x) for x in nums[:20]])
    cmds.append(["SADD", "sword"] + words[:15])
    cmds.append(["SET", "str", "x"])
    cmds.append(["SET", "str2", "y"])
    if zsets:
        cmds.append(["ZADD", "znum"] + sum([[str(rnd.randint(0, 9)), str(x)] for x in nums[:18]], []))
        cmds.append(["ZADD", "zword"] + sum([[str(rnd.random()), w] for w in words[:12]], []))
    return cmds


def random_sort(rnd, sources):
    src = rnd.choice(sources + ["nokey"])
    cmd = [rnd.choice(["SORT", "SORT_RO"]), src]
    by = None
    if rnd.random() < 0.5:
        by = rnd.choice(["wt_*", "h_*->f", "h_*->name", "nosort", "nokey_*", "h_*->", "h_*->nof"])
        cmd += ["BY", by]
    for _ in range(rnd.choice([0, 0, 1, 2, 3])):
        cmd += ["GET", rnd.choice(["#", "wt_*", "h_*->f", "h_*->name", "const", "nokey_*"])]
    if rnd.random() < 0.3:
        cmd += ["LIMIT", str(rnd.randint(-2, 30)), str(rnd.randint(-2, 12))]
    if rnd.random() < 0.4:
        cmd += [rnd.choice(["ASC", "DESC", "asc", "desc"])]
    alpha = rnd.random() < 0.4
    if alpha:
        cmd += ["ALPHA"]
    store = cmd[0] == "SORT" and rnd.random() < 0.3
    if store:
        cmd += ["STORE", rnd.choice(["dst", "dst2", "str2"])]  # str2: a string, replaced
    dontsort = by is not None and "*" not in by
    unordered = src.startswith("s") and dontsort and not store  # a set's own order
    # ALPHA BY a pattern elements miss ("h_*->" is a string key; lfloat's
    # elements have no weights): ties, left in Redis's qsort order
    ambiguous = alpha and (by in ("nokey_*", "h_*->nof", "h_*->") or by and src == "lfloat")
    return cmd, unordered, ambiguous, store


@test
def random_sorts_match_redis(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        rnd = random.Random(SEED)
        zsets = has_zsets(s)
        for cmd in dataset(rnd, zsets):
            assert reply(s, cmd) == reply(r, cmd), cmd
        sources = ["lnum", "lword", "lmix", "lfloat", "snum", "sword", "str"]
        if zsets:
            sources += ["znum", "zword"]
        diffs, checked = [], 0
        for _ in range(OPS):
            cmd, unordered, ambiguous, store = random_sort(rnd, sources)
            if ambiguous:
                continue
            a, b = reply(s, cmd), reply(r, cmd)
            if unordered and a[0] == b[0] == "ok" and "LIMIT" not in cmd:
                a, b = ("ok", sorted(a[1], key=repr)), ("ok", sorted(b[1], key=repr))
            elif unordered and a[0] == b[0] == "ok":
                a, b = ("ok", len(a[1])), ("ok", len(b[1]))
            if a != b:
                diffs.append("%r: strata %r, redis %r" % (cmd, a, b))
            if store:
                dst = cmd[-1]
                x, y = reply(s, ["LRANGE", dst, "0", "-1"]), reply(r, ["LRANGE", dst, "0", "-1"])
                if x != y:
                    diffs.append("%r stored: strata %r, redis %r" % (cmd, x, y))
            checked += 1
        assert not diffs, "%d of %d differ:\n" % (len(diffs), checked) + "\n".join(diffs[:10])
        assert checked > OPS // 2
    finally:
        ref.close()


@test
def sort_errors_and_getkeys_match_redis(srv):
    ref = RealRedis()
    try:
        s, r = srv.client(), ref.client()
        for c in (s, r):
            c.response_callbacks.pop("COMMAND", None)  # raw GETKEYS replies
            c.rpush("l", "3", "1", "2", "b")
            c.set("str", "x")
            c.set("dst", "old")
            c.expire("dst", 100)
        cases = [
            ["SORT", "l"], ["SORT", "l", "ALPHA"], ["SORT", "str"], ["SORT", "l", "LIMIT", "1"],
            ["SORT", "l", "LIMIT", "a", "1", "ALPHA"], ["SORT", "l", "BOGUS"],
            ["SORT_RO", "l", "STORE", "x"], ["SORT", "l", "STORE"], ["SORT", "l", "GET"],
            ["SORT", "l", "BY"], ["SORT", "l", "ALPHA", "STORE", "dst"], ["TTL", "dst"],
            ["TYPE", "dst"], ["SORT", "nokey", "STORE", "dst"], ["EXISTS", "dst"],
            ["SORT", "l", "ALPHA", "LIMIT", "2", "-1", "DESC"],
            ["SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"],
            ["SORT", "l", "STORE", "dst"], ["EXISTS", "dst"],  # the error stores nothing
            ["SORT", "l", "ALPHA", "LIMIT", "1", "9223372036854775807"],
            ["SORT", "l", "ALPHA", "LIMIT", "9223372036854775807", "9223372036854775807"],
            ["SADD", "st", "b", "c", "a", "10", "9"],
            ["EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", "1", "st"],
            ["EVAL", "return redis.call('sort_ro', KEYS[1], 'by', 'nosort', 'desc')", "1", "st"],
            ["SORT", "st", "BY", "nosort", "STORE", "dst"], ["LRANGE", "dst", "0", "-1"],
            ["COMMAND", "GETKEYS", "SORT", "abc", "STORE", "def"],
            ["COMMAND", "GETKEYS", "SORT_RO", "abc"],
            ["COMMAND", "GETKEYS", "SORT", "abc", "STORE", "invalid", "STORE", "stillbad", "STORE", "def"],
            ["COMMAND", "GETKEYS", "SORT", "abc", "LIMIT", "0", "1", "GET", "store", "BY", "x"],
        ]
        for cmd in cases:
            a, b = reply(s, cmd), reply(r, cmd)
            assert a == b, "%r: strata %r, redis %r" % (cmd, a, b)
    finally:
        ref.close()


if __name__ == "__main__":
    main()
