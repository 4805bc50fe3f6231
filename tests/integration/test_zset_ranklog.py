"""test_zset_ranklog.py -- a big sorted set written one member per command
(ZADD of new members and new scores, ZREM, ZPOPMIN, GEOADD), so its rank
changes wait in the rank log between folds (KS-Z4): after a clean restart
and after SIGKILL (appendfsync always: every reply was fsynced) the zset
holds every acknowledged write, ZCARD is exact, and the rank reads (ZRANK,
ZREVRANK, ZRANGE by rank deep inside, ZCOUNT) agree with a model computed
here, with the log both empty and part full.

Run with /usr/bin/python3 (python3-redis)."""
import os, random, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, main, test

N = 3000  # members; 5 log folds (512 changes each) and a part-full log


def check(r, key, model):
    """model: member -> score. Every read that uses the rank blocks."""
    order = sorted(model, key=lambda m: (model[m], m))
    assert r.zcard(key) == len(order)
    assert r.zrange(key, 0, -1) == order
    for i in list(range(0, len(order), 97)) + [len(order) - 1]:
        assert r.zrank(key, order[i]) == i, (i, r.zrank(key, order[i]))
        assert r.zrevrank(key, order[i]) == len(order) - 1 - i
    for start in (150, len(order) // 2, len(order) - 200):
        assert r.zrange(key, start, start + 4) == order[start:start + 5], start
    lo, hi = 100, 700
    assert r.zcount(key, lo, hi) == sum(1 for m in order if lo <= model[m] <= hi)


def writes(r, rng, model, n):
    """n one-member writes in pipelines: adds, score changes, ZREM, ZPOPMIN."""
    p = r.pipeline(transaction=False)
    ops = []
    for _ in range(n):
        op = rng.random()
        if op < 0.7 or len(model) < 100:
            m = b"m%05d" % rng.randrange(2 * N)
            s = rng.randrange(1000)
            p.zadd("z", {m: s})
            ops.append(("set", m, s))
        elif op < 0.9:
            m = rng.choice(sorted(model))
            p.zrem("z", m)
            ops.append(("del", m, None))
        else:
            p.zpopmin("z")
            ops.append(("pop", None, None))
    for (op, m, s), reply in zip(ops, p.execute()):
        if op == "set":
            model[m] = float(s)
        elif op == "del":
            model.pop(m, None)
        else:
            got = min(model, key=lambda x: (model[x], x))
            assert reply == [(got, model[got])], (reply, got)
            del model[got]


@test
def one_member_writes_keep_exact_ranks_through_restart_and_sigkill():
    srv = Server(appendfsync="always").start()
    try:
        rng = random.Random(4)
        r = srv.client()
        model = {}
        writes(r, rng, model, N)
        check(r, "z", model)
        srv.restart()
        r = srv.client()
        check(r, "z", model)
        writes(r, rng, model, 700)
        srv.kill9()
        srv.start()
        r = srv.client()
        check(r, "z", model)
        # After a fold (more writes) and another SIGKILL.
        writes(r, rng, model, 600)
        check(r, "z", model)
        srv.kill9()
        srv.start()
        check(srv.client(), "z", model)
    finally:
        srv.cleanup()


@test
def geoadd_one_place_per_command_keeps_ranks_and_count(srv):
    r = srv.client()
    rng = random.Random(8)
    places = {}
    p = r.pipeline(transaction=False)
    for i in range(1500):
        name = b"p%05d" % rng.randrange(3000)
        lon, lat = 13 + rng.random() / 100, 38 + rng.random() / 100
        p.geoadd("g", (lon, lat, name))
        places[name] = 1
    p.execute()
    assert r.zcard("g") == len(places)
    scores = dict(r.zrange("g", 0, -1, withscores=True))
    order = sorted(scores, key=lambda m: (scores[m], m))
    for i in range(0, len(order), 53):
        assert r.zrank("g", order[i]) == i
    srv.restart()
    r = srv.client()
    assert r.zcard("g") == len(places)
    assert r.zrange("g", 700, 704) == order[700:705]


if __name__ == "__main__":
    main()
