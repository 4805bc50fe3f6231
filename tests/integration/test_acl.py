"""test_acl.py -- ACL users and what they may do: SETUSER rules (commands,
categories, subcommands, first arguments, key patterns with %R/%W, channel
patterns, selectors), AUTH and HELLO AUTH as a user, the NOPERM texts,
EXEC and scripts under the caller's rules, ACL LOG, DELUSER closing
connections, DRYRUN, GENPASS, aclfile LOAD/SAVE and `user` lines at startup.
Error texts are Redis 7.0's."""
import os
import subprocess
import tempfile
import time

import redis

from harness import RawConn, RespError, Server, main, test
from redis_compare import compare_with_redis

NOPERM_CMD = "NOPERM this user has no permissions to run the '%s' command"
NOPERM_KEY = "NOPERM this user has no permissions to access one of the keys used as arguments"
NOPERM_CHAN = "NOPERM this user has no permissions to access one of the channels used as arguments"


def err(r, *args):
    v = r.command(*args)
    assert isinstance(v, RespError), "expected an error from %r, got %r" % (args, v)
    return str(v)


def as_user(srv, name, password):
    r = srv.raw()
    assert r.command("AUTH", name, password) == "OK"
    return r


@test
def command_and_category_rules(srv):
    admin = srv.raw()
    assert admin.command("ACL", "SETUSER", "alice", "on", ">pw", "~*", "+@read", "-hgetall",
                         "+set") == "OK"
    a = as_user(srv, "alice", "pw")
    assert a.command("SET", "k", "v") == "OK"
    assert a.command("GET", "k") == b"v"
    assert err(a, "HGETALL", "k").startswith("NOPERM this user has no permissions to run the 'hgetall'")
    assert err(a, "DEL", "k") == NOPERM_CMD % "del"
    assert err(a, "CONFIG", "GET", "port") == NOPERM_CMD % "config|get"
    assert err(a, "ACL", "WHOAMI") == NOPERM_CMD % "acl|whoami"
    assert admin.command("GET", "k") == b"v"  # the default user is untouched


@test
def subcommand_and_first_arg_rules(srv):
    admin = srv.raw()
    assert admin.command("ACL", "SETUSER", "ops", "on", "nopass", "+config|get",
                         "+client|setname", "+select|0") == "OK"
    o = as_user(srv, "ops", "x")
    assert isinstance(o.command("CONFIG", "GET", "port"), list)
    assert err(o, "CONFIG", "SET", "timeout", "0") == NOPERM_CMD % "config|set"
    assert o.command("CLIENT", "SETNAME", "n") == "OK"
    assert err(o, "CLIENT", "ID") == NOPERM_CMD % "client|id"
    assert o.command("SELECT", "0") == "OK"
    assert err(o, "SELECT", "1") == NOPERM_CMD % "select"
    desc = admin.command("ACL", "GETUSER", "ops")
    cmds = desc[desc.index(b"commands") + 1].decode()
    assert "+config|get" in cmds and "+select|0" in cmds, cmds


@test
def key_patterns_with_read_and_write_permissions(srv):
    admin = srv.raw()
    assert admin.command("ACL", "SETUSER", "kp", "on", "nopass", "+@all", "~app:*",
                         "%R~ro:*", "%W~wo:*") == "OK"
    admin.command("SET", "ro:1", "r")
    u = as_user(srv, "kp", "x")
    assert u.command("SET", "app:1", "x") == "OK"
    assert err(u, "SET", "other", "x") == NOPERM_KEY
    assert u.command("GET", "ro:1") == b"r"
    assert err(u, "SET", "ro:1", "x") == NOPERM_KEY
    assert u.command("SET", "wo:1", "x") == "OK"
    assert err(u, "GET", "wo:1") == NOPERM_KEY
    # COPY reads its source and writes its destination
    assert u.command("COPY", "ro:1", "wo:2") == 1
    assert err(u, "COPY", "wo:1", "ro:2") == NOPERM_KEY
    # MSET: every key is checked, not only the first
    assert err(u, "MSET", "app:2", "1", "other", "2") == NOPERM_KEY
    assert admin.command("EXISTS", "app:2") == 0
    # a denied key after thousands of allowed ones is still seen
    many = []
    for i in range(5000):
        many += ["app:m%d" % i, "v"]
    assert err(u, "MSET", *(many + ["other", "v"])) == NOPERM_KEY
    assert admin.command("EXISTS", "app:m0") == 0
    # keys behind numkeys (EVAL) are checked too
    assert err(u, "EVAL", "return 1", "1", "other") == NOPERM_KEY
    assert u.command("EVAL", "return 1", "1", "app:1") == 1
    assert err(u, "LMPOP", "2", "app:l", "other", "LEFT") == NOPERM_KEY
    assert u.command("LMPOP", "1", "app:l", "LEFT") is None


@test
def channel_rules_are_kept_and_shown(srv):
    # (publishing and subscribing are checked in tests/unit/acl_rules_test.c)
    admin = srv.raw()
    assert admin.command("ACL", "SETUSER", "pub", "on", "nopass", "+@all", "resetchannels",
                         "&news.*") == "OK"
    desc = admin.command("ACL", "GETUSER", "pub")
    assert desc[desc.index(b"channels") + 1] == b"&news.*"
    assert b"&news.*" in [l for l in admin.command("ACL", "LIST") if l.startswith(b"user pub")][0]


@test
def selectors_allow_what_any_of_them_allows(srv):
    admin = srv.raw()
    assert admin.command("ACL", "SETUSER", "sel", "on", "nopass", "+get", "~a*",
                         "(+set ~b*)") == "OK"
    u = as_user(srv, "sel", "x")
    assert u.command("GET", "a1") is None
    assert u.command("SET", "b1", "x") == "OK"
    assert err(u, "SET", "a1", "x") == NOPERM_KEY  # set is allowed only on b*
    assert err(u, "GET", "c1") == NOPERM_KEY
    desc = admin.command("ACL", "GETUSER", "sel")
    sels = desc[desc.index(b"selectors") + 1]
    assert len(sels) == 1 and b"-@all +set" in sels[0] and b"~b*" in sels[0], sels


@test
def auth_hello_and_disabled_users(srv):
    admin = srv.raw()
    admin.command("ACL", "SETUSER", "bob", "on", ">secret", "+@all", "~*")
    r = srv.raw()
    assert err(r, "AUTH", "bob", "wrong") == "WRONGPASS invalid username-password pair or user is disabled."
    assert err(r, "AUTH", "nobody", "x") == "WRONGPASS invalid username-password pair or user is disabled."
    h = r.command("HELLO", "3", "AUTH", "bob", "secret")
    assert h[b"proto"] == 3
    assert r.command("ACL", "WHOAMI") == b"bob"
    assert r.command("RESET") == "RESET"
    assert r.command("ACL", "WHOAMI") == b"default"
    admin.command("ACL", "SETUSER", "bob", "off")
    assert err(r, "AUTH", "bob", "secret").startswith("WRONGPASS")
    c = redis.Redis(port=srv.port, username="default", password="ignored")
    assert c.ping()  # the default user is nopass: any password works


@test
def deluser_closes_the_user_s_connections(srv):
    admin = srv.raw()
    admin.command("ACL", "SETUSER", "tmp", "on", "nopass", "+@all", "~*")
    t = as_user(srv, "tmp", "x")
    assert admin.command("ACL", "DELUSER", "tmp", "nosuch") == 1
    assert t.closed_by_server()
    assert err(admin, "ACL", "DELUSER", "default") == \
        "ERR The 'default' user cannot be removed"
    assert admin.command("ACL", "USERS") == [b"default"]


@test
def setuser_errors_change_nothing(srv):
    admin = srv.raw()
    assert err(admin, "ACL", "SETUSER", "x", "on", "+nosuchcmd").startswith(
        "ERR Error in ACL SETUSER modifier '+nosuchcmd': Unknown command")
    assert admin.command("ACL", "USERS") == [b"default"]  # all or nothing
    assert err(admin, "ACL", "SETUSER", "x", "~*", "allkeys", "~a").startswith(
        "ERR Error in ACL SETUSER modifier '~a'")
    assert err(admin, "ACL", "SETUSER", "x", "(+get").startswith("ERR Unmatched parenthesis")
    assert admin.command("ACL", "USERS") == [b"default"]


@test
def exec_checks_queued_commands_again(srv):
    admin = srv.raw()
    admin.command("ACL", "SETUSER", "m", "on", "nopass", "+@all", "~*")
    u = as_user(srv, "m", "x")
    assert u.command("MULTI") == "OK"
    assert u.command("SET", "k", "1") == "QUEUED"
    admin.command("ACL", "SETUSER", "m", "-set")
    res = u.command("EXEC")
    assert isinstance(res[0], RespError) and str(res[0]).startswith(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated"), res
    assert admin.command("EXISTS", "k") == 0
    # denied while queueing: the transaction is discarded
    assert u.command("MULTI") == "OK"
    assert err(u, "SET", "k", "1") == NOPERM_CMD % "set"
    assert err(u, "EXEC").startswith("EXECABORT")


@test
def scripts_run_with_the_caller_s_permissions(srv):
    admin = srv.raw()
    admin.command("ACL", "SETUSER", "s", "on", "nopass", "+@all", "-set", "~*")
    u = as_user(srv, "s", "x")
    e = err(u, "EVAL", "return redis.call('set', 'k', 'v')", "0")
    assert "The user executing the script can't run this command or subcommand" in e, e
    assert admin.command("EXISTS", "k") == 0
    assert u.command("EVAL", "return redis.acl_check_cmd('set', 'k', 'v')", "0") is None
    assert u.command("EVAL", "return redis.acl_check_cmd('get', 'k')", "0") == 1
    log = admin.command("ACL", "LOG", "1")[0]
    entry = dict(zip(log[0::2], log[1::2]))
    assert entry[b"context"] == b"lua" and entry[b"object"] == b"set", entry


@test
def acl_log_records_denials_and_failed_auths(srv):
    admin = srv.raw()
    admin.command("ACL", "SETUSER", "l", "on", ">p", "+get", "~k*")
    u = as_user(srv, "l", "p")
    err(u, "GET", "other")
    err(u, "GET", "other")  # the same denial again bumps the count
    err(srv.raw(), "AUTH", "l", "bad")
    entries = [dict(zip(e[0::2], e[1::2])) for e in admin.command("ACL", "LOG")]
    assert entries[0][b"reason"] == b"auth" and entries[0][b"username"] == b"l"
    assert entries[1][b"reason"] == b"key" and entries[1][b"object"] == b"other"
    assert entries[1][b"count"] == 2 and b"user=l" in entries[1][b"client-info"]
    assert admin.command("ACL", "LOG", "RESET") == "OK"
    assert admin.command("ACL", "LOG") == []


@test
def dryrun_and_genpass(srv):
    admin = srv.raw()
    admin.command("ACL", "SETUSER", "d", "on", "nopass", "+get", "~a*")
    assert admin.command("ACL", "DRYRUN", "d", "GET", "a1") == "OK"
    assert admin.command("ACL", "DRYRUN", "d", "GET", "b1") == \
        b"This user has no permissions to access the 'b1' key"
    assert admin.command("ACL", "DRYRUN", "d", "SET", "a1", "x") == \
        b"This user has no permissions to run the 'set' command"
    assert err(admin, "ACL", "DRYRUN", "nosuch", "GET", "a") == "ERR User 'nosuch' not found"
    p1, p2 = admin.command("ACL", "GENPASS"), admin.command("ACL", "GENPASS")
    assert len(p1) == 64 and p1 != p2
    assert len(admin.command("ACL", "GENPASS", "10")) == 3


@test
def requirepass_is_the_default_user_s_password():
    srv = Server(requirepass="pw1").start()
    try:
        r = srv.raw()
        assert err(r, "GET", "a") == "NOAUTH Authentication required."
        assert r.command("AUTH", "default", "pw1") == "OK"
        desc = r.command("ACL", "GETUSER", "default")
        flags = desc[desc.index(b"flags") + 1]
        assert b"nopass" not in flags
        assert r.command("CONFIG", "SET", "requirepass", "") == "OK"
        assert srv.raw().command("GET", "a") is None
    finally:
        srv.cleanup()


@test
def user_lines_in_the_config_file():
    srv = Server()
    conf = os.path.join(srv.dir, "strata.conf")
    with open(conf, "w") as f:
        f.write("user default off\nuser worker on >w0rk ~jobs:* +@list +@connection +get\n")
    argv = srv.argv()
    srv.argv = lambda: [argv[0], conf] + argv[1:]  # the file comes first, as redis-server
    try:
        # start() waits with PING, which the disabled default user cannot run
        srv.proc = subprocess.Popen(srv.argv(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while True:
            try:
                r = RawConn(srv.port)
                break
            except OSError:
                assert time.time() < deadline, srv.log_tail()
                time.sleep(0.05)
        assert err(r, "PING") == "NOAUTH Authentication required."
        assert err(r, "AUTH", "default", "x").startswith("WRONGPASS")
        assert r.command("AUTH", "worker", "w0rk") == "OK"
        assert r.command("GET", "jobs:1") is None
        assert err(r, "GET", "other") == NOPERM_KEY
    finally:
        srv.cleanup()


@test
def aclfile_save_and_load():
    d = tempfile.mkdtemp(prefix="strata-acl-")
    path = os.path.join(d, "users.acl")
    with open(path, "w") as f:
        f.write("user default on nopass ~* &* +@all\nuser ann on >a ~a:* +get\n")
    srv = Server(aclfile=path).start()
    try:
        r = srv.raw()
        assert r.command("ACL", "USERS") == [b"ann", b"default"]
        assert r.command("ACL", "SETUSER", "ben", "on", ">b", "+@read", "~b:*") == "OK"
        assert r.command("ACL", "SAVE") == "OK"
        text = open(path).read()
        assert "user ben on #" in text and ">b" not in text  # passwords are saved hashed
        with open(path, "a") as f:
            f.write("user bad on +nosuchcommand\n")
        e = err(r, "ACL", "LOAD")
        assert "nosuchcommand" in e, e
        assert r.command("ACL", "USERS") == [b"ann", b"ben", b"default"]  # all or nothing
        with open(path, "w") as f:
            f.write("user default on nopass ~* &* +@all\nuser cat on nopass +@all ~*\n")
        assert r.command("ACL", "LOAD") == "OK"
        assert r.command("ACL", "USERS") == [b"cat", b"default"]
        assert as_user(srv, "cat", "x").command("ACL", "WHOAMI") == b"cat"
    finally:
        srv.cleanup()
    srv2 = Server()
    try:
        srv2.start()
        assert err(srv2.raw(), "ACL", "LOAD").startswith(
            "ERR This Redis instance is not configured to use an ACL file.")
    finally:
        srv2.cleanup()


@test
def index_queries_need_read_access_to_every_key_the_index_covers(srv):
    """A user restricted to ~user:* must not read or learn other keys'
    fields through an index: a query of an index whose prefix its read
    patterns do not cover is refused (and logged), one whose prefix they
    cover runs."""
    admin = srv.raw()
    for k, kind in (("user:1", "a"), ("secret:1", "a"), ("secret:2", "b")):
        assert admin.command("HSET", k, "kind", kind, "n", "1") == 2
    assert admin.command("IDX.CREATE", "u", "PREFIX", "user:", "SCHEMA", "kind", "TAG") == "OK"
    assert admin.command("IDX.CREATE", "s", "PREFIX", "secret:", "SCHEMA", "kind", "TAG") == "OK"
    assert admin.command("FT.CREATE", "fs", "PREFIX", 1, "secret:", "SCHEMA", "kind", "TAG") == "OK"
    assert admin.command("FT.CREATE", "fall", "SCHEMA", "kind", "TAG") == "OK"
    assert admin.command("FT.CREATE", "fu", "PREFIX", 1, "user:", "SCHEMA", "kind", "TAG") == "OK"
    assert admin.command("ACL", "SETUSER", "carol", "on", ">pw", "~user:*", "+@all") == "OK"
    c = as_user(srv, "carol", "pw")
    assert c.command("IDX.RANGE", "u", "EQ", "a", "HASHES")
    assert err(c, "IDX.RANGE", "s", "EQ", "a", "HASHES") == NOPERM_KEY
    assert err(c, "IDX.RANGE", "s", "EQ", "a") == NOPERM_KEY  # keys only leak them too
    for idx in ("fs", "fall"):
        assert err(c, "FT.SEARCH", idx, "*") == NOPERM_KEY
        assert err(c, "FT.AGGREGATE", idx, "*", "GROUPBY", 1, "@kind") == NOPERM_KEY
        assert err(c, "FT.TAGVALS", idx, "kind") == NOPERM_KEY
    assert c.command("FT.SEARCH", "fu", "*")[0] == 1
    log = admin.command("ACL", "LOG")
    assert any(b"secret:" in e[e.index(b"object") + 1] for e in log if b"object" in e), log
    # allkeys, or a pattern covering the prefix, may query it
    assert admin.command("ACL", "SETUSER", "carol", "~secret:*") == "OK"
    assert c.command("IDX.RANGE", "s", "EQ", "a") == [b"secret:1"]
    assert err(c, "FT.SEARCH", "fall", "*") == NOPERM_KEY
    assert admin.command("ACL", "SETUSER", "carol", "allkeys") == "OK"
    assert c.command("FT.SEARCH", "fall", "*")[0] == 3


@test
def a_second_opening_parenthesis_restarts_the_selector_as_redis(srv):
    compare_with_redis(srv, """
        ACL SETUSER u1 on (~k*\s+get (resetkeys allchannels
        ACL SETUSER u2 on (~a* (+get ~b*) +set
        ACL GETUSER u2
        ACL SETUSER u3 on (~a*) (+get
    """)


if __name__ == "__main__":
    main()
