"""test_index_errors.py -- every way the IDX.* commands and the index write
path refuse something, with the data unchanged afterwards; plus the write
paths beyond HSET (HINCRBY, COPY, SELECT, MULTI), the background build,
IDX.DROP and IDX.INFO. IDX.CHECK must find nothing on a healthy db.
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Server, test, main  # noqa: E402

import redis  # noqa: E402


def err(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except redis.ResponseError as e:
        return str(e)
    raise AssertionError("no error for %r" % (args,))


def cmd(r, *args):
    return r.execute_command(*args)


def profiles(r):
    cmd(r, "IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE", "SCHEMA", "email", "TAG")
    cmd(r, "IDX.CREATE", "score", "PREFIX", "user:", "SCHEMA", "score", "NUMERIC", "DESC")


@test
def unique_violation_names_index_and_holder_and_writes_nothing(srv):
    r = srv.client()
    profiles(r)
    r.hset("user:1", mapping={"email": "a@x", "score": "5"})
    r.hset("user:2", mapping={"email": "b@x", "score": "6"})
    e = err(r.hset, "user:2", mapping={"email": "a@x", "score": "7"})
    assert "UNIQUE" in e and "'email'" in e and "'user:1'" in e, e
    assert r.hgetall("user:2") == {b"email": b"b@x", b"score": b"6"}
    e = err(r.hset, "user:3", mapping={"bio": "x", "email": "a@x"})
    assert "user:1" in e, e
    assert r.exists("user:3") == 0
    assert cmd(r, "IDX.RANGE", "email", "EQ", "a@x") == [b"user:1"]
    assert cmd(r, "IDX.RANGE", "score") == [b"user:2", b"user:1"]
    # RENAME and COPY onto the value are refused as well, both keys unchanged.
    r.hset("other", mapping={"email": "b@x"})
    e = err(r.rename, "other", "user:9")
    assert "UNIQUE" in e and "user:2" in e, e
    assert r.exists("user:9") == 0 and r.hget("other", "email") == b"b@x"
    e = err(r.copy, "user:1", "user:8")
    assert "UNIQUE" in e, e
    assert r.exists("user:8") == 0
    # Inside MULTI only the failing command is dropped.
    p = r.pipeline(transaction=True)
    p.hset("user:4", "bio", "kept")
    p.hset("user:4", "email", "a@x")
    p.hset("user:5", "email", "c@x")
    res = p.execute(raise_on_error=False)
    assert isinstance(res[1], redis.ResponseError) and res[0] == 1 and res[2] == 1, res
    assert r.hgetall("user:4") == {b"bio": b"kept"}
    assert cmd(r, "IDX.RANGE", "email") == [b"user:1", b"user:2", b"user:5"]
    assert cmd(r, "IDX.CHECK") == []


@test
def non_number_in_numeric_field_names_field_and_index_and_writes_nothing(srv):
    r = srv.client()
    profiles(r)
    r.hset("user:1", mapping={"email": "a@x", "score": "5"})
    for bad in ["abc", "", "1x", " 1", "nan"]:
        e = err(r.hset, "user:1", mapping={"score": bad, "bio": "new"})
        assert "'score'" in e and "index 'score'" in e and "not a number" in e, e
    e = err(r.hset, "user:2", mapping={"score": "x"})
    assert "not a number" in e, e
    assert r.hgetall("user:1") == {b"email": b"a@x", b"score": b"5"}
    assert r.exists("user:2") == 0
    # HINCRBYFLOAT and HINCRBY keep the index exact.
    r.hincrbyfloat("user:1", "score", "-7.5")
    r.hset("user:2", mapping={"score": "-3"})
    assert cmd(r, "IDX.RANGE", "score") == [b"user:1", b"user:2"]
    r.hincrby("user:2", "score", 10)
    assert cmd(r, "IDX.RANGE", "score", "MIN", "(-2.5") == [b"user:2"]
    assert cmd(r, "IDX.CHECK") == []


@test
def bad_syntax_is_rejected_with_nothing_created(srv):
    r = srv.client()
    bad = [
        ["IDX.CREATE", "i", "PREFIX", "u:", "SCHEMA"],
        ["IDX.CREATE", "i", "PREFX", "u:", "SCHEMA", "f", "TAG"],
        ["IDX.CREATE", "i", "PREFIX", "u:", "SCHEM", "f", "TAG"],
        ["IDX.CREATE", "i", "PREFIX", "u:", "SCHEMA", "f", "TEXT"],
        ["IDX.CREATE", "i", "PREFIX", "u:", "SCHEMA", "f", "TAG", "g"],
        ["IDX.CREATE", "i", "PREFIX", "u:", "SCHEMA", "f", "TAG", "f", "NUMERIC"],
        ["IDX.CREATE", "i", "PREFIX", "u:", "UNIQUE", "UNIQUE", "SCHEMA", "f", "TAG"],
    ]
    for args in bad:
        e = err(r.execute_command, *args)
        assert e, args
    assert cmd(r, "IDX.LIST") == []
    cmd(r, "IDX.CREATE", "i", "PREFIX", "u:", "SCHEMA", "t", "TAG", "n", "NUMERIC")
    e = err(r.execute_command, "IDX.CREATE", "i", "PREFIX", "v:", "SCHEMA", "f", "TAG")
    assert "already exists" in e, e
    r.hset("u:1", mapping={"t": "a", "n": "1"})
    range_bad = [
        (["IDX.RANGE", "i", "BOGUS"], "syntax"),
        (["IDX.RANGE", "i", "LIMIT", "x", "1"], "not an integer"),
        (["IDX.RANGE", "i", "LIMIT", "0"], "syntax"),
        (["IDX.RANGE", "i", "EQ"], "syntax"),
        (["IDX.RANGE", "i", "EQ", "a", "notnum"], "not a number"),
        (["IDX.RANGE", "i", "EQ", "a", "MIN", "x"], "not a float"),
        (["IDX.RANGE", "i", "EQ", "a", "1", "MIN", "1"], "MIN/MAX"),
        (["IDX.RANGE", "i", "FIELDS", "3", "t"], "syntax"),
        (["IDX.RANGE", "i", "FIELDS", "0"], "syntax"),
        (["IDX.RANGE", "i", "HASHES", "HASHES"], "syntax"),
        (["IDX.RANGE", "i", "MIN", "a", "MIN", "b"], "syntax"),
    ]
    for args, text in range_bad:
        e = err(r.execute_command, *args)
        assert text in e, (args, e)
    assert cmd(r, "IDX.RANGE", "i") == [b"u:1"]
    assert cmd(r, "IDX.LIST") == [b"i"]
    assert r.hgetall("u:1") == {b"t": b"a", b"n": b"1"}


@test
def unknown_index_is_an_error_everywhere(srv):
    r = srv.client()
    for c in (["IDX.RANGE", "nope"], ["IDX.DROP", "nope"], ["IDX.INFO", "nope"],
              ["IDX.RANGE", "a\r\nb"]):
        e = err(r.execute_command, *c)
        assert "no such index" in e, e
    assert r.ping()  # an error naming a CR/LF name is still one line
    # Indexes belong to their database.
    cmd(r, "IDX.CREATE", "i", "PREFIX", "", "SCHEMA", "t", "TAG")
    r1 = srv.client(db=1)
    assert "no such index" in err(r1.execute_command, "IDX.RANGE", "i")
    r1.hset("k", "t", "v")
    assert cmd(r, "IDX.RANGE", "i") == []


@test
def unique_create_over_duplicates_fails_and_creates_nothing(srv):
    r = srv.client()
    r.hset("user:1", mapping={"email": "a@x", "n": "1"})
    r.hset("user:2", mapping={"email": "a@x", "n": "zz"})
    e = err(r.execute_command, "IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE", "SCHEMA",
            "email", "TAG")
    assert "UNIQUE" in e and "user:1" in e and "user:2" in e, e
    e = err(r.execute_command, "IDX.CREATE", "n", "PREFIX", "user:", "SCHEMA", "n", "NUMERIC")
    assert "not a number" in e and "user:2" in e, e
    assert cmd(r, "IDX.LIST") == []
    assert "no such index" in err(r.execute_command, "IDX.INFO", "email")
    assert r.hgetall("user:2") == {b"email": b"a@x", b"n": b"zz"}
    srv.restart()
    r = srv.client()
    assert cmd(r, "IDX.LIST") == []
    r.hset("user:2", "email", "b@x")
    cmd(r, "IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE", "SCHEMA", "email", "TAG")
    assert cmd(r, "IDX.RANGE", "email") == [b"user:1", b"user:2"]


def info(r, name):
    raw = cmd(r, "IDX.INFO", name)
    return dict(zip(raw[0::2], raw[1::2]))


@test
def building_index_refuses_queries_and_keeps_writes_made_during_build(srv):
    r = srv.client()
    n = 60000
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.hset("k:%06d" % i, mapping={"v": str(i % 1000), "t": "x"})
        if i % 5000 == 4999:
            p.execute()
    p.execute()
    assert cmd(r, "IDX.CREATE", "v", "PREFIX", "k:", "SCHEMA", "v", "NUMERIC") == b"OK"
    e = err(r.execute_command, "IDX.RANGE", "v")
    assert "building" in e, e
    st = info(r, "v")
    assert st[b"state"] == b"building", st
    assert 0 <= float(st[b"progress"].rstrip(b"%")) < 100, st
    # Writes at both ends of the key space while the build runs.
    r.hset("k:000000", "v", "-5")
    r.hset("k:999999", "v", "-6")
    r.delete("k:000001")
    r.hset("k:%06d" % (n - 1), "v", "-7")
    # Then random writes all over the key space, before and after the
    # build's cursor, until the build is done.
    model = {"k:%06d" % i: i % 1000 for i in range(n)}
    model.update({"k:000000": -5, "k:999999": -6, "k:%06d" % (n - 1): -7})
    del model["k:000001"]
    rng = random.Random(5)
    deadline = time.time() + 180
    writes_during_build = 0
    # At least one round: on a fast machine the build may end during the
    # writes above (it was building before them); the writes must be kept
    # either way.
    while writes_during_build == 0 or info(r, "v")[b"state"] != b"ready":
        assert time.time() < deadline, info(r, "v")
        for _ in range(50):
            k = "k:%06d" % rng.randrange(n + 100)
            c = rng.random()
            if c < 0.6:
                v = rng.randint(-50, 1050)
                r.hset(k, "v", v)
                model[k] = v
            elif c < 0.8:
                r.delete(k)
                model.pop(k, None)
            elif k in model:
                dst = "k:%06d" % rng.randrange(n + 100)
                r.rename(k, dst)
                model[dst] = model.pop(k)
            writes_during_build += 1
    assert writes_during_build > 0
    want = [k.encode() for k, v in sorted(model.items(), key=lambda kv: (kv[1], kv[0]))]
    assert cmd(r, "IDX.RANGE", "v") == want
    assert info(r, "v")[b"num_entries"] == len(model)
    assert cmd(r, "IDX.CHECK") == []


@test
def build_interrupted_by_sigkill_resumes_from_its_cursor():
    srv = Server(appendfsync="always").start()
    try:
        r = srv.client()
        n = 40000
        p = r.pipeline(transaction=False)
        for i in range(n):
            p.hset("k:%06d" % i, "v", str(i % 100))
            if i % 5000 == 4999:
                p.execute()
        p.execute()
        assert cmd(r, "IDX.CREATE", "v", "PREFIX", "k:", "SCHEMA", "v", "NUMERIC") == b"OK"
        r.hset("k:000000", "v", "-1")  # below the cursor: kept by the write path
        srv.kill9()
        srv.start()
        r = srv.client()
        st = info(r, "v")
        assert st[b"state"] in (b"building", b"ready"), st
        deadline = time.time() + 60
        while info(r, "v")[b"state"] != b"ready":
            assert time.time() < deadline
            time.sleep(0.05)
        assert info(r, "v")[b"num_entries"] == n
        assert cmd(r, "IDX.RANGE", "v", "LIMIT", 0, 1) == [b"k:000000"]
        assert cmd(r, "IDX.CHECK") == []
    finally:
        srv.cleanup()


@test
def background_unique_build_over_duplicates_drops_the_index(srv):
    r = srv.client()
    n = 40000
    p = r.pipeline(transaction=False)
    for i in range(n):
        p.hset("k:%06d" % i, "e", "v%d" % i)
        if i % 5000 == 4999:
            p.execute()
    p.hset("k:%06d" % n, "e", "v1")  # the duplicate comes last in key order
    p.execute()
    assert cmd(r, "IDX.CREATE", "e", "PREFIX", "k:", "UNIQUE", "SCHEMA", "e", "TAG") == b"OK"
    deadline = time.time() + 60
    while cmd(r, "IDX.LIST") != []:
        assert time.time() < deadline
        time.sleep(0.05)
    raw = srv.cli("INFO", "index")[1]
    assert "idx_last_build_error" in raw and "UNIQUE" in raw and "k:%06d" % n in raw, raw
    assert "no such index" in err(r.execute_command, "IDX.RANGE", "e")
    assert r.hget("k:%06d" % n, "e") == b"v1" and r.dbsize() == n + 1
    # Nothing of the dropped build is left behind.
    srv.restart()
    r = srv.client()
    assert cmd(r, "IDX.LIST") == []
    cmd(r, "IDX.CREATE", "e", "PREFIX", "k:", "SCHEMA", "e", "TAG")
    while info(r, "e")[b"state"] != b"ready":
        time.sleep(0.05)
    assert info(r, "e")[b"num_entries"] == n + 1
    assert cmd(r, "IDX.CHECK") == []


@test
def drop_removes_entries_and_definition_survives_restart(srv):
    r = srv.client()
    profiles(r)
    r.hset("user:1", mapping={"email": "a@x", "score": "1.5"})
    st = info(r, "score")
    assert st[b"prefix"] == b"user:" and st[b"state"] == b"ready" and st[b"num_entries"] == 1
    assert st[b"progress"] == b"100.0%", st
    assert st[b"schema"] == [[b"score", b"NUMERIC", b"DESC"]] and st[b"unique"] == 0
    assert info(r, "email")[b"unique"] == 1
    srv.restart()
    r = srv.client()
    assert cmd(r, "IDX.LIST") == [b"email", b"score"]
    assert cmd(r, "IDX.RANGE", "score", "MIN", "1.5", "MAX", "1.5") == [b"user:1"]
    assert cmd(r, "IDX.DROP", "email") == b"OK"
    assert "no such index" in err(r.execute_command, "IDX.DROP", "email")
    assert r.hgetall("user:1") == {b"email": b"a@x", b"score": b"1.5"}
    cmd(r, "IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE", "SCHEMA", "email", "TAG")
    assert cmd(r, "IDX.RANGE", "email") == [b"user:1"]
    cmd(r, "IDX.DROP", "score")
    srv.kill9()
    srv.start()
    r = srv.client()
    assert cmd(r, "IDX.LIST") == [b"email"]
    assert cmd(r, "IDX.CHECK") == []


@test
def num_entries_follows_writes_and_expiry(srv):
    r = srv.client()
    r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    profiles(r)
    for i in range(3):
        r.hset("user:%d" % i, mapping={"email": "e%d" % i, "score": str(i)})
    assert info(r, "score")[b"num_entries"] == 3
    assert info(r, "score")[b"num_entries"] == 3  # the cached count
    r.delete("user:0")
    assert info(r, "score")[b"num_entries"] == 2
    # 1 s: user:1 must still be live for the count right after, which a
    # loaded machine can delay by more than 50 ms.
    t0 = time.time()
    r.pexpire("user:1", 1000)
    assert info(r, "email")[b"num_entries"] == 2
    time.sleep(max(0.0, t0 + 1.1 - time.time()))
    assert info(r, "email")[b"num_entries"] == 1  # expired since the count
    p = r.pipeline(transaction=True)
    p.hset("user:5", "score", "1")
    p.execute_command("IDX.INFO", "score")
    res = p.execute()
    got = dict(zip(res[1][0::2], res[1][1::2]))
    assert got[b"num_entries"] == 2, got  # user:2 and user:5, inside EXEC


@test
def copy_and_select_keep_indexes_of_each_db(srv):
    r = srv.client()
    cmd(r, "IDX.CREATE", "t", "PREFIX", "h:", "SCHEMA", "t", "TAG", "n", "NUMERIC")
    r.hset("h:1", mapping={"t": "a", "n": "2"})
    r.copy("h:1", "h:2")
    assert cmd(r, "IDX.RANGE", "t", "EQ", "a") == [b"h:1", b"h:2"]
    r.copy("h:1", "h:3", destination_db=1)
    assert cmd(r, "IDX.RANGE", "t", "EQ", "a") == [b"h:1", b"h:2"]
    r.set("h:2", "string now")
    assert cmd(r, "IDX.RANGE", "t") == [b"h:1"]
    r.hsetnx("h:4", "t", "b")
    r.hsetnx("h:4", "n", "-1")
    assert cmd(r, "IDX.RANGE", "t", "MIN", "(a", "MAX", "+") == [b"h:4"]
    # Inside EXEC a query sees the transaction's own earlier writes.
    p = r.pipeline(transaction=True)
    p.hset("h:5", mapping={"t": "z", "n": "1"})
    p.execute_command("IDX.RANGE", "t", "EQ", "z", "HASHES")
    p.hdel("h:5", "n")
    p.execute_command("IDX.RANGE", "t", "EQ", "z")
    p.execute_command("IDX.CHECK")
    res = p.execute()
    assert res[1] == [b"h:5", [b"t", b"z", b"n", b"1"]] and res[3] == [] and res[4] == [], res
    r.flushall()
    assert cmd(r, "IDX.RANGE", "t") == []
    assert cmd(r, "IDX.CHECK") == []


if __name__ == "__main__":
    main()
