"""test_index_catalog.py -- IDX.CREATE refuses definitions the catalog
loader could not load (the database must always start again), with clear
errors; the limits themselves are accepted and survive a restart.
(A start over hand-damaged catalog records: tests/unit/idx_catalog_test.c.)

Run with /usr/bin/python3 (python3-redis)."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis
from harness import test, main


def refused(r, *args):
    try:
        r.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    raise AssertionError("%r was accepted" % (args,))


@test
def empty_index_name_is_refused_and_the_server_still_restarts(srv):
    r = srv.client()
    r.hset("h:1", mapping={"age": 30})
    assert refused(r, "IDX.CREATE", "", "PREFIX", "h:", "SCHEMA", "age", "NUMERIC") == \
        "index name must be 1 to 256 bytes"
    srv.restart()
    r = srv.client()
    assert r.hgetall("h:1") == {b"age": b"30"}
    assert r.execute_command("IDX.LIST") == []


@test
def names_prefixes_and_fields_beyond_the_limits_are_refused(srv):
    r = srv.client()
    cases = [
        (("a\x00b", "PREFIX", "h:", "SCHEMA", "f", "TAG"), "index name must not contain NUL bytes"),
        (("n" * 257, "PREFIX", "h:", "SCHEMA", "f", "TAG"), "index name must be 1 to 256 bytes"),
        (("p", "PREFIX", "k" * 1025, "SCHEMA", "f", "TAG"), "prefix must be at most 1024 bytes"),
        (("f", "PREFIX", "h:", "SCHEMA", "", "TAG"), "field names must be 1 to 1024 bytes"),
        (("f", "PREFIX", "h:", "SCHEMA", "x" * 1025, "TAG"), "field names must be 1 to 1024 bytes"),
        (("d", "PREFIX", "h:", "SCHEMA", "f", "TAG", "f", "NUMERIC"), "duplicate field 'f' in SCHEMA"),
    ]
    for args, want in cases:
        assert refused(r, "IDX.CREATE", *args) == want, args
    ok = [("n" * 256, "PREFIX", "h:", "SCHEMA", "f", "TAG"),
          ("p", "PREFIX", "k" * 1024, "SCHEMA", "f", "TAG"),
          ("all", "PREFIX", "", "SCHEMA", "f", "TAG"),
          ("bin", "PREFIX", "k\x00", "SCHEMA", "a\x00\xff", "TAG"),
          ("f", "PREFIX", "h:", "SCHEMA", "x" * 1024, "NUMERIC")]
    for args in ok:
        assert r.execute_command("IDX.CREATE", *args) == b"OK", args
    r.hset("h:1", mapping={"f": "v"})
    srv.restart()
    r = srv.client()
    assert len(r.execute_command("IDX.LIST")) == 5
    assert r.execute_command("IDX.RANGE", "all", "EQ", "v") == [b"h:1"]
    assert r.info("index")["indexes_quarantined"] == 0


if __name__ == "__main__":
    main()
