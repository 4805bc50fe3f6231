"""test_randomkey.py -- RANDOMKEY through the server: each key about
equally likely (the keyspace's unit test ks_random_test checks the
distribution closely; this is the reproducer as a user saw it).

Run with /usr/bin/python3 (python3-redis)."""
import collections, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import test, main


@test
def randomkey_after_deleting_a_big_hash_returns_both_keys_about_equally(srv):
    r = srv.client()
    r.hset("h", mapping={"f%d" % i: "v" for i in range(500)})
    r.set("foo", 1)
    r.set("bar", 1)
    r.delete("h")
    p = r.pipeline(transaction=False)
    for _ in range(400):
        p.randomkey()
    counts = collections.Counter(p.execute())
    assert set(counts) == {b"foo", b"bar"}, counts
    # Expected 200 each, standard deviation 10.
    assert min(counts.values()) > 140, counts


@test
def randomkey_of_an_empty_or_flushed_db_is_nil(srv):
    r = srv.client()
    assert r.randomkey() is None
    r.set("a", 1)
    assert r.randomkey() == b"a"
    r.flushall()
    assert r.randomkey() is None


if __name__ == "__main__":
    main()
