"""test_tracking.py -- client-side caching (CLIENT TRACKING, tracking.c)
against redis-server 7.0: the same script of commands on both servers, every
reply and push message compared byte for byte: default mode over RESP3,
REDIRECT to a RESP2 subscriber and to a RESP3 client, BCAST with prefixes,
OPTIN/OPTOUT with CLIENT CACHING, NOLOOP, invalidations after the reply
(MULTI/EXEC), expiry, FLUSHALL, a broken redirect, the option errors and
CLIENT TRACKINGINFO / GETREDIR; a client of redis-py in RESP2 keeps working.

Run with /usr/bin/python3 (python3-redis)."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import RawConn, test, main
from redis_compare import RealRedis


def sync(c):
    """Everything c received up to the reply of a PING sent now: the server
    wrote all earlier output of c before that reply."""
    mark = b"--sync--"
    c.send(RawConn.encode("PING", mark))
    while mark + b"\r\n" not in c.buf:
        c._fill()
    out, c.buf = c.buf, b""
    return out


def settle(sender, conns, queued=False):
    """The sender's output first (its command has run when its PING is
    answered; inside MULTI, when its one-line +OK/+QUEUED arrived), then
    every other connection's, in order."""
    if queued:
        while b"\r\n" not in sender.buf:
            sender._fill()
        got = {id(sender): sender.buf}
        sender.buf = b""
    else:
        got = {id(sender): sync(sender)}
    for c in conns:
        if c is not sender:
            got[id(c)] = sync(c)
    return [got[id(c)] for c in conns]


def run(port):
    """The script; returns the exact bytes each connection received."""
    a, b, r2, r3 = RawConn(port), RawConn(port), RawConn(port), RawConn(port)
    log = []

    live = [a, b, r2, r3]

    multi = [False]

    def cmd(c, *args):
        c.send(RawConn.encode(*args))
        if args[0] == "MULTI":
            multi[0] = True
        elif args[0] == "EXEC":
            multi[0] = False
        log.append((args, settle(c, live, queued=multi[0])))

    for c in (a, r3):
        cmd(c, "HELLO", "3")
    cmd(a, "FLUSHALL")
    cmd(a, "CLIENT", "TRACKING", "on")
    cmd(a, "SET", "k1", "v")
    cmd(a, "GET", "k1")
    cmd(b, "SET", "k1", "w")       # a gets an invalidation
    cmd(b, "SET", "k1", "x")       # nothing: a did not read it again
    cmd(a, "MGET", "k1", "k2")
    cmd(a, "MULTI")
    cmd(a, "SET", "k1", "y")
    cmd(a, "GET", "k2")
    cmd(a, "EXEC")                 # the invalidation of k1 after EXEC's reply
    cmd(a, "GET", "e")
    cmd(b, "SET", "e", "1", "PX", "1000")  # 1 s: still live for the GET right after,
    cmd(a, "GET", "e")             # tracked again (each cmd syncs four connections)
    time.sleep(1.2)
    cmd(b, "GET", "e")             # lazy expiry invalidates
    cmd(a, "FLUSHALL")             # null invalidation
    cmd(a, "CLIENT", "TRACKING", "off")
    cmd(r2, "CLIENT", "ID")
    rid = int(log[-1][1][2].split(b":")[1].split(b"\r")[0])
    cmd(r2, "SUBSCRIBE", "__redis__:invalidate")
    cmd(a, "CLIENT", "TRACKING", "on", "REDIRECT", rid, "NOLOOP")
    cmd(a, "GET", "n1")
    cmd(a, "SET", "n1", "self")    # NOLOOP: nothing
    cmd(a, "GET", "n1")
    cmd(b, "SET", "n1", "other")   # to r2 as a pub/sub message
    cmd(a, "CLIENT", "GETREDIR")
    cmd(a, "CLIENT", "TRACKINGINFO")
    cmd(a, "CLIENT", "TRACKING", "on", "BCAST")
    cmd(a, "CLIENT", "TRACKING", "off")
    cmd(a, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "job:")
    cmd(b, "SET", "user:1", "a")
    cmd(b, "MSET", "job:1", "a", "other", "b", "user:2", "c")
    cmd(a, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "use")
    cmd(a, "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "xy")
    cmd(a, "CLIENT", "TRACKINGINFO")
    cmd(a, "CLIENT", "TRACKING", "off")
    cmd(r3, "CLIENT", "TRACKING", "on", "OPTIN")
    cmd(r3, "GET", "o1")
    cmd(b, "SET", "o1", "1")       # not cached: nothing
    cmd(r3, "CLIENT", "CACHING", "yes")
    cmd(r3, "GET", "o1")
    cmd(b, "SET", "o1", "2")       # cached: invalidated
    cmd(r3, "CLIENT", "CACHING", "no")
    cmd(r3, "CLIENT", "TRACKING", "on", "OPTOUT")
    cmd(r3, "CLIENT", "TRACKING", "off")
    cmd(r3, "CLIENT", "TRACKING", "on", "OPTOUT")
    cmd(r3, "CLIENT", "CACHING", "no")
    cmd(r3, "GET", "o2")
    cmd(b, "SET", "o2", "1")       # CACHING no: nothing
    cmd(r3, "CLIENT", "TRACKINGINFO")
    cmd(r3, "CLIENT", "TRACKING", "off")
    for bad in (["on", "PREFIX", "p"], ["on", "BCAST", "OPTIN"], ["on", "OPTIN", "OPTOUT"],
                ["on", "REDIRECT", "999999"], ["on", "REDIRECT", "x"], ["maybe"], ["on", "FOO"]):
        cmd(r3, "CLIENT", "TRACKING", *bad)
    cmd(r3, "CLIENT", "CACHING", "yes")
    cmd(r3, "CLIENT", "GETREDIR")
    # a redirect whose client went away
    cmd(r3, "CLIENT", "TRACKING", "on", "REDIRECT", rid)
    cmd(r3, "GET", "g")
    r2.s.close()
    live.remove(r2)
    w = RawConn(port)  # outside the log: wait until the server saw the close
    while w.command("CLIENT", "LIST", "ID", rid):
        time.sleep(0.01)
    w.s.close()
    cmd(b, "SET", "g", "1")        # r3 gets tracking-redir-broken
    cmd(r3, "CLIENT", "TRACKINGINFO")
    # client ids differ between the servers; HELLO names the server
    return [(tuple("<rid>" if x == rid else x for x in args),
             [x.replace(b":%d\r\n" % rid, b":<rid>\r\n") for x in got]) for args, got in log
            if args[0] != "HELLO" and args[1:2] != ("ID",)]


@test
def tracking_messages_match_redis(srv):
    ref = RealRedis()
    try:
        ours, theirs = run(srv.port), run(ref.port)
        diffs = [(x[0], x[1], y[1]) for x, y in zip(ours, theirs) if x != y]
        assert not diffs, "\n".join("%r:\n  strata %r\n  redis  %r" % d for d in diffs[:4])
        info = srv.client().info()
        assert info["tracking_clients"] == 0 and "tracking_total_keys" in info
    finally:
        ref.close()


@test
def a_resp2_redis_py_client_with_tracking_keeps_working(srv):
    c = srv.client(single_connection_client=True)
    c.execute_command("CLIENT", "TRACKING", "on")
    c.set("a", "1")
    assert c.get("a") == b"1"
    srv.client().set("a", "2")  # no push on RESP2 without REDIRECT: nothing arrives
    assert c.get("a") == b"2"
    assert srv.client().info()["tracking_clients"] == 1
    assert b"t" in c.execute_command("CLIENT", "INFO").split(b"flags=")[1][:4]


if __name__ == "__main__":
    main()
