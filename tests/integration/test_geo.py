"""test_geo.py -- geo replies at their edges: a search whose every match
is the empty member has no member bytes at all, and still replies each
match's (empty) name as Redis does."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, main, test


@test
def geosearch_finding_only_empty_members_replies_them(srv):
    c = RawConn(srv.port)
    assert c.command("GEOADD", "g", "13.361389", "38.115556", "") == 1
    assert c.command("GEOSEARCH", "g", "FROMLONLAT", "13.36", "38.11", "BYRADIUS", "10",
                     "km") == [b""]
    assert c.command("GEORADIUS", "g", "13.36", "38.11", "10", "km", "WITHDIST") == \
        [[b"", b"0.6299"]]


if __name__ == "__main__":
    main()
