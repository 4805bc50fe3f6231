"""test_sentinel.py -- failover of strata by the real Redis Sentinel (Debian's
redis-sentinel, unmodified): three sentinels monitor a strata primary with
two strata replicas; after SIGKILL of the primary they promote a replica and
repoint the other, a redis-py client using redis.sentinel goes on writing on
the new primary, every write acknowledged with WAIT before the kill is
there, and the old primary, restarted, is turned into a replica."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import redis
import redis.sentinel  # noqa: F401

from harness import Server, free_port, main, test

SENTINEL = shutil.which("redis-sentinel") or "/usr/bin/redis-sentinel"


class ConfServer(Server):
    """A strata server started from a config file, so CONFIG REWRITE (which
    Sentinel sends) has a file to write."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.conf = os.path.join(self.dir, "strata.conf")
        with open(self.conf, "w") as f:
            f.write("port %d\n" % self.port)

    def argv(self):
        a = super().argv()
        return [a[0], self.conf] + a[1:]


def start_sentinel(tmp, i, master_port):
    port = free_port()
    conf = os.path.join(tmp, "sentinel%d.conf" % i)
    with open(conf, "w") as f:
        f.write("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n"
                "sentinel monitor mymaster 127.0.0.1 %d 2\n"
                "sentinel down-after-milliseconds mymaster 1000\n"
                "sentinel failover-timeout mymaster 10000\n"
                "sentinel parallel-syncs mymaster 2\n"
                % (port, tmp, os.path.join(tmp, "sentinel%d.log" % i), master_port))
    p = subprocess.Popen([SENTINEL, conf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p, port


def wait_for(pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if pred():
                return
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            pass
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


@test
def sentinel_fails_a_killed_primary_over_to_a_replica_without_losing_waited_writes():
    tmp = tempfile.mkdtemp(prefix="strata-sentinel-")
    m, r1, r2 = ConfServer().start(), ConfServer().start(), ConfServer().start()
    sentinels = []
    try:
        for r in (r1, r2):
            r.client().replicaof("127.0.0.1", m.port)
        wait_for(lambda: m.client().info("replication")["connected_slaves"] == 2, 20, "replicas")
        for i in range(3):
            sentinels.append(start_sentinel(tmp, i, m.port))
        sc = redis.Redis(port=sentinels[0][1], socket_timeout=2)
        wait_for(lambda: sc.ping(), 10, "sentinel")
        # The sentinels know each other (pub/sub hello) and both replicas (INFO).
        wait_for(lambda: sc.sentinel_master("mymaster")["num-other-sentinels"] == 2 and
                 sc.sentinel_master("mymaster")["num-slaves"] == 2, 30, "discovery")

        m.client().execute_command("IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE",
                                   "SCHEMA", "email", "TAG")
        sent = redis.sentinel.Sentinel([("127.0.0.1", p) for _, p in sentinels], socket_timeout=2)
        # WAIT returns once the replicas ack; 10 s (and a socket timeout
        # above it) is for replicas held off the CPU on a loaded machine.
        client = sent.master_for("mymaster", socket_timeout=15)
        acked = []
        for i in range(200):
            client.set("k%d" % i, i)
            client.hset("user:%d" % i, mapping={"email": "u%d@x" % i})
            if i % 20 == 19:
                assert client.execute_command("WAIT", 1, 10000) >= 1
                acked = list(range(i + 1))
        client.hset("user:1", mapping={"email": "a@b"})
        assert client.execute_command("WAIT", 2, 10000) == 2

        t_kill = time.time()
        m.kill9()
        new_port = [None]

        def promoted():
            host, port = sent.discover_master("mymaster")
            if port == m.port:
                return False
            new_port[0] = port
            return True
        wait_for(promoted, 60, "failover")
        t_promoted = time.time() - t_kill
        new, other = (r1, r2) if new_port[0] == r1.port else (r2, r1)
        wait_for(lambda: new.client().info("replication")["role"] == "master", 20, "new role")

        # The client goes on writing through Sentinel on the new primary.
        def write_ok():
            client.set("after-failover", "1")
            return True
        wait_for(write_ok, 30, "a write on the new primary")
        nc = new.client()
        got = nc.mget(["k%d" % i for i in acked])
        lost = [i for i, v in zip(acked, got) if v != str(i).encode()]
        assert not lost, "acknowledged+WAITed writes lost: %s" % lost[:10]
        assert nc.get("after-failover") == b"1"
        assert nc.execute_command("IDX.CHECK") == []
        assert len(nc.execute_command("IDX.RANGE", "email", "LIMIT", 0, 1000)) >= len(acked)
        # The other replica follows the new primary.
        wait_for(lambda: other.client().info("replication").get("master_port") == new.port and
                 other.client().info("replication")["master_link_status"] == "up" and
                 other.client().get("after-failover") == b"1", 30, "repointed replica")
        assert other.client().execute_command("IDX.CHECK") == []
        # The old primary comes back and is made a replica of the new one.
        m.start()
        wait_for(lambda: m.client().info("replication")["role"] == "slave" and
                 m.client().info("replication")["master_link_status"] == "up" and
                 m.client().get("after-failover") == b"1", 60, "old primary as a replica")
        assert m.client().execute_command("IDX.CHECK") == []
        print("    failover: promoted %.1fs after SIGKILL" % t_promoted, flush=True)
    finally:
        for p, _ in sentinels:
            p.kill()
            p.wait()
        for s in (m, r1, r2):
            s.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
