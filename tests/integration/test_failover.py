"""test_failover.py -- replication beyond the stream of data (REPLICATION.md):
FAILOVER hands a primary over to a replica (and every refusal has Redis's
text, checked against redis-server), replica-serve-stale-data no refuses
commands while the link is down, a replicated write fails the EXEC of a
client WATCHing on the replica (and invalidates what a CLIENT TRACKING
client there read), PUBLISH reaches subscribers on replicas, and a replica
of a replica gets every write."""
import signal
import subprocess
import tempfile
import time

import redis

from harness import Server, answered_by, free_port, main, test
from repl_helpers import caught_up, info, replicate, wait_for


class RedisServer:
    """A redis-server on a free port, for the same steps side by side."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="redis-it-")
        # The port can be bound by someone else before redis-server binds
        # it: then it exits, or another server answers; try a new one.
        for _ in range(5):
            self.port = free_port()
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--dir", self.dir, "--save", "",
                 "--appendonly", "no", "--logfile", self.dir + "/log"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            c = self.client()
            for _ in range(600):
                if self.proc.poll() is not None:
                    break
                try:
                    if answered_by(c) == self.proc.pid:
                        return
                    break
                except redis.ConnectionError:
                    time.sleep(0.05)
            self.cleanup()
        raise RuntimeError("redis-server did not start on a free port")

    def client(self, **kw):
        return redis.Redis(port=self.port, socket_timeout=30, **kw)

    def cleanup(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def error_of(c, *args):
    try:
        c.execute_command(*args)
    except redis.ResponseError as e:
        return str(e)
    return None


def failover_refusals(primary, replica_port, lone):
    """The errors of every refused FAILOVER form, on a primary with one
    replica (replica_port) and on a primary with none (lone)."""
    out = []
    for args in (("ABORT",), ("TIMEOUT", "0"), ("TIMEOUT", "x"), ("TIMEOUT", "10", "TIMEOUT", "10"),
                 ("TO", "127.0.0.1"), ("TO", "127.0.0.1", "x"), ("FORCE", "FORCE"),
                 ("FORCE",), ("TO", "127.0.0.1", str(replica_port), "FORCE"),
                 ("TIMEOUT", "100", "FORCE"), ("TO", "127.0.0.1", "1"), ("ABORT", "TIMEOUT", "5"),
                 ("BOGUS",)):
        out.append((args[0], error_of(primary, "FAILOVER", *args)))
    out.append(("lone", error_of(lone, "FAILOVER")))
    return out


@test
def failover_refusals_have_redis_texts():
    m, r, lone = Server().start(), Server().start(), Server().start()
    rm, rr, rlone = RedisServer(), RedisServer(), RedisServer()
    try:
        replicate(m, r)
        rr.client().replicaof("127.0.0.1", rm.port)
        wait_for(lambda: info(rm.client())["connected_slaves"] == 1 and
                 info(rr.client())["master_link_status"] == "up", 20, "redis replica")
        ours = failover_refusals(m.client(), r.port, lone.client())
        theirs = failover_refusals(rm.client(), rr.port, rlone.client())
        assert ours == theirs, [(a, b) for a, b in zip(ours, theirs) if a != b]
        assert all(e for _, e in ours), ours
        for rep in (r.client(), rr.client()):
            assert error_of(rep, "FAILOVER") == "FAILOVER is not valid when server is a replica."
            assert error_of(rep, "PSYNC", "0" * 40, "1", "FAILOVER") == \
                "PSYNC FAILOVER replid must match my replid."
        for prim in (lone.client(), rlone.client()):
            assert error_of(prim, "PSYNC", "?", "-1", "FAILOVER") == \
                "PSYNC FAILOVER can't be sent to a master."
    finally:
        for s in (m, r, lone, rm, rr, rlone):
            s.cleanup()


@test
def failover_hands_the_primary_over_and_keeps_every_write():
    m, r = Server().start(), Server().start()
    try:
        mc, rc = m.client(), r.client()
        replicate(m, r)
        for i in range(300):
            mc.set("k%d" % i, i)
        assert info(mc)["master_failover_state"] == "no-failover"
        assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port) == b"OK"
        wait_for(lambda: info(rc)["role"] == "master" and info(mc)["role"] == "slave", 20,
                 "the roles to swap")
        wait_for(lambda: info(mc)["master_failover_state"] == "no-failover" and
                 info(mc)["master_link_status"] == "up", 20, "the old primary to follow")
        assert info(mc)["master_port"] == r.port
        assert rc.dbsize() == 300 and rc.get("k299") == b"299"
        assert "Partial resynchronization request" in open(r.logfile).read()
        st = info(rc, "stats")
        assert (st["sync_partial_ok"], st["sync_full"], st["sync_partial_err"]) == (1, 0, 0), st
        rc.set("after", "1")
        wait_for(lambda: mc.get("after") == b"1", 30, "the new primary's write on the old one")
        try:
            mc.set("x", "1")
            raise AssertionError("the old primary took a write")
        except redis.ReadOnlyError:
            pass
    finally:
        m.cleanup()
        r.cleanup()


@test
def failover_pauses_writes_until_a_replica_catches_up_and_abort_resumes_them():
    m, r = Server().start(), Server().start()
    try:
        mc = m.client()
        replicate(m, r)
        r.proc.send_signal(signal.SIGSTOP)  # the replica cannot ack any more
        mc.set("before", "1")
        assert mc.execute_command("FAILOVER") == b"OK"
        assert info(mc)["master_failover_state"] == "waiting-for-sync"
        assert error_of(mc, "FAILOVER") == "FAILOVER already in progress."
        assert error_of(mc, "REPLICAOF", "127.0.0.1", "1") == "REPLICAOF not allowed while failing over."
        writer = m.raw()
        writer.send(writer.encode("SET", "held", "1"))
        assert mc.get("before") == b"1"  # reads go on
        wait_for(lambda: info(mc, "clients")["blocked_clients"] == 1, 30, "the write held")
        assert mc.get("held") is None, "a write ran during FAILOVER"
        assert mc.execute_command("FAILOVER", "ABORT") == b"OK"
        assert info(mc)["master_failover_state"] == "no-failover"
        assert writer.read_reply() == "OK" and mc.get("held") == b"1"
        writer.close()
        assert error_of(mc, "FAILOVER", "ABORT") == "No failover in progress."
        mc.execute_command("FAILOVER", "TIMEOUT", "300")
        wait_for(lambda: info(mc)["master_failover_state"] == "no-failover", 30, "the timeout")
        assert info(mc)["role"] == "master"
        mc.set("after-timeout", "1")
    finally:
        if r.proc:
            r.proc.send_signal(signal.SIGCONT)
        m.cleanup()
        r.cleanup()


@test
def failover_force_promotes_a_lagging_target_after_the_timeout():
    m, r = Server().start(), Server().start()
    try:
        mc, rc = m.client(), r.client()
        replicate(m, r)
        mc.set("k", "1")
        wait_for(lambda: caught_up(m, [r]), 30, "catch up")
        r.proc.send_signal(signal.SIGSTOP)
        mc.set("late", "1")
        mc.execute_command("FAILOVER", "TO", "127.0.0.1", r.port, "FORCE", "TIMEOUT", "200")
        time.sleep(0.5)
        r.proc.send_signal(signal.SIGCONT)
        wait_for(lambda: info(rc)["role"] == "master", 20, "the forced promotion")
        wait_for(lambda: info(mc)["role"] == "slave" and
                 info(mc)["master_failover_state"] == "no-failover", 20, "the old primary")
        assert rc.get("k") == b"1"
    finally:
        m.cleanup()
        r.cleanup()


@test
def stale_replica_refuses_commands_with_masterdown():
    m, r = Server().start(), Server().start()
    try:
        rc = r.client()
        replicate(m, r)
        rc.config_set("replica-serve-stale-data", "no")
        assert rc.get("k") is None  # the link is up: served
        m.kill9()
        wait_for(lambda: info(rc)["master_link_status"] == "down", 20, "the link to drop")
        want = "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
        assert error_of(rc, "GET", "k") == want
        assert error_of(rc, "DBSIZE") == want
        assert error_of(rc, "PING") == want  # as Redis: PING is not flagged stale
        assert info(rc)["role"] == "slave" and rc.config_get("port")  # stale commands are served
        raw = r.raw()
        assert raw.command("MULTI") == "OK"
        assert raw.command("ROLE") == "QUEUED"
        assert raw.command("EXEC")[0][0] == b"slave"  # a queue of stale commands runs
        assert raw.command("MULTI") == "OK"
        assert str(raw.command("GET", "k")).startswith("MASTERDOWN")  # refused while queueing
        raw.close()
        rc.config_set("replica-serve-stale-data", "yes")
        assert rc.get("k") is None
        # redis-server, same steps: the same refusals
        rm, rr = RedisServer(), RedisServer()
        try:
            c = rr.client()
            c.replicaof("127.0.0.1", rm.port)
            wait_for(lambda: info(c)["master_link_status"] == "up", 20, "redis replica")
            c.config_set("replica-serve-stale-data", "no")
            rm.cleanup()
            wait_for(lambda: info(c)["master_link_status"] == "down", 20, "redis link down")
            assert error_of(c, "GET", "k") == want and error_of(c, "DBSIZE") == want
            assert error_of(c, "PING") == want and c.config_get("port")
        finally:
            rm.cleanup()
            rr.cleanup()
    finally:
        m.cleanup()
        r.cleanup()


@test
def replicated_write_fails_exec_of_a_watcher_on_the_replica():
    m, r = Server().start(), Server().start()
    try:
        mc, rc = m.client(), r.client()
        mc.set("w", "0")
        mc.set("other", "0")
        replicate(m, r)
        for change in (lambda: mc.set("w", "1"), lambda: mc.delete("w"),
                       lambda: mc.flushdb()):
            mc.set("w", "0")
            wait_for(lambda: caught_up(m, [r]), 30, "catch up")
            p = rc.pipeline(transaction=True)
            p.watch("w")
            change()
            wait_for(lambda: caught_up(m, [r]), 30, "catch up")
            p.multi()
            p.get("other")
            try:
                p.execute()
                raise AssertionError("EXEC ran though a watched key changed on the primary")
            except redis.WatchError:
                pass
        # an unrelated write leaves the transaction alone
        mc.set("w", "0")
        wait_for(lambda: caught_up(m, [r]), 30, "catch up")
        p = rc.pipeline(transaction=True)
        p.watch("w")
        mc.set("other", "2")
        wait_for(lambda: caught_up(m, [r]), 30, "catch up")
        p.multi()
        p.get("w")
        assert p.execute() == [b"0"]
    finally:
        m.cleanup()
        r.cleanup()


@test
def replicated_write_invalidates_a_tracking_client_on_the_replica():
    m, r = Server().start(), Server().start()
    try:
        mc = m.client()
        mc.set("t", "0")
        replicate(m, r)
        raw = r.raw()
        raw.command("HELLO", "3")
        assert raw.command("CLIENT", "TRACKING", "ON") == "OK"
        assert raw.command("GET", "t") == b"0"
        mc.set("t", "1")
        assert raw.read_reply() == [b"invalidate", [b"t"]]
        raw.close()
    finally:
        m.cleanup()
        r.cleanup()


@test
def publish_on_the_primary_reaches_subscribers_on_replicas_and_their_replicas():
    m, r, r2 = Server().start(), Server().start(), Server().start()
    try:
        replicate(m, r)
        replicate(r, r2)
        subs = []
        for s in (r, r2):
            ps = s.client().pubsub()
            ps.subscribe("news")
            ps.psubscribe("n*")
            assert ps.get_message(timeout=5)["type"] == "subscribe"
            assert ps.get_message(timeout=5)["type"] == "psubscribe"
            subs.append(ps)
        assert m.client().publish("news", "hello") == 0  # nobody on the primary
        for ps in subs:
            got = [ps.get_message(timeout=5) for _ in range(2)]
            assert sorted(g["type"] for g in got) == ["message", "pmessage"], got
            assert all(g["data"] == b"hello" for g in got)
    finally:
        for s in (m, r, r2):
            s.cleanup()


@test
def chained_replica_gets_every_write_and_info_shows_the_chain():
    m, r, r2 = Server().start(), Server().start(), Server().start()
    try:
        mc = m.client()
        mc.set("before", "1")
        replicate(m, r)
        replicate(r, r2)
        mc.hset("h", mapping={"a": 1, "b": 2})
        for i in range(200):
            mc.incr("n")
        wait_for(lambda: r2.client().get("n") == b"200", 20, "the second hop")
        c2 = r2.client()
        assert c2.get("before") == b"1" and c2.hgetall("h") == {b"a": b"1", b"b": b"2"}
        ir, i2 = info(r.client()), info(c2)
        assert ir["role"] == "slave" and ir["connected_slaves"] == 1
        assert ir["slave0"]["port"] == r2.port and ir["slave0"]["state"] == "online"
        assert i2["master_port"] == r.port and i2["master_link_status"] == "up"
        wait_for(lambda: info(c2)["slave_repl_offset"] == info(mc)["master_repl_offset"], 10,
                 "the offsets to agree")
        assert i2["master_replid"] == info(mc)["master_replid"]
    finally:
        for s in (m, r, r2):
            s.cleanup()


if __name__ == "__main__":
    main()
