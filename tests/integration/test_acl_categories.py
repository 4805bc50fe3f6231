"""test_acl_categories.py -- every command and subcommand strata and
redis-server both have must show the same ACL categories and the same key
specs (COMMAND INFO), since ACL rules (+@read, %R~...) act on them. On a
difference it prints what the row in commands.def should say."""
import redis

from harness import Server, main, test
from redis_compare import RealRedis

# Redis's key specs carry free-text "notes"; strata's rows do not.
def strip_notes(specs):
    out = []
    for spec in specs:
        fields = dict(zip(spec[0::2], spec[1::2]))
        fields.pop(b"notes", None)
        out.append(sorted(fields.items()))
    return out


def raw_client(port):
    c = redis.Redis(port=port)
    c.response_callbacks.clear()  # COMMAND replies as sent
    return c


@test
def categories_and_key_specs_match_redis(srv):
    ref = RealRedis()
    try:
        s, r = raw_client(srv.port), raw_client(ref.port)
        names = [n.decode() for n in s.execute_command("COMMAND", "LIST")]
        theirs = set(n.decode() for n in r.execute_command("COMMAND", "LIST"))
        diffs, compared = [], 0
        for name in names:
            if name not in theirs:
                continue
            a = s.execute_command("COMMAND", "INFO", name)[0]
            b = r.execute_command("COMMAND", "INFO", name)[0]
            assert a is not None, "COMMAND INFO %s: strata has no entry" % name
            compared += 1
            ca = sorted(x.decode() for x in a[6])
            cb = sorted(x.decode() for x in b[6])
            if ca != cb:
                diffs.append("%s categories %s, redis %s" % (name, ca, cb))
            if strip_notes(a[8]) != strip_notes(b[8]):
                diffs.append("%s key specs %r, redis %r" % (name, a[8], b[8]))
        assert compared > 150, compared
        assert not diffs, "\n".join(diffs[:20])
    finally:
        ref.close()


@test
def acl_cat_lists_a_category_s_commands(srv):
    c = srv.client()
    cats = [x.decode() for x in c.execute_command("ACL", "CAT")]
    for want in ("keyspace", "read", "write", "string", "dangerous", "connection", "scripting"):
        assert want in cats, cats
    string_cmds = [x.decode() for x in c.execute_command("ACL", "CAT", "string")]
    assert "get" in string_cmds and "hget" not in string_cmds
    dangerous = [x.decode() for x in c.execute_command("ACL", "CAT", "dangerous")]
    assert "flushall" in dangerous and "config|set" in dangerous and "get" not in dangerous
    try:
        c.execute_command("ACL", "CAT", "nosuch")
        assert False
    except redis.ResponseError as e:
        assert str(e) == "Unknown category 'nosuch'", str(e)


if __name__ == "__main__":
    main()
