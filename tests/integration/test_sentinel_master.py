"""test_sentinel_master.py -- Redis Sentinel (redis-server --sentinel)
monitoring a strata master: what Sentinel needs of a master's pub/sub and
introspection. Two sentinels find each other only through the hello messages
they PUBLISH on the master's __sentinel__:hello channel and read back over
their SUBSCRIBE connection; they name their connections with CLIENT SETNAME
and take the master's run_id from INFO. Failover (REPLICAOF, ROLE) is the
replication tests' part."""
import os
import shutil
import subprocess
import tempfile
import time

from harness import RawConn, free_port, main, test

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


class Sentinel:
    def __init__(self, master_port, quorum=2):
        self.dir = tempfile.mkdtemp(prefix="strata-sentinel-")
        self.port = free_port()
        conf = os.path.join(self.dir, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\ndir %s\nsentinel monitor mymaster 127.0.0.1 %d %d\n"
                    "sentinel down-after-milliseconds mymaster 2000\n"
                    % (self.port, self.dir, master_port, quorum))
        self.proc = subprocess.Popen([REDIS_SERVER, conf, "--sentinel"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def master(self):
        c = RawConn(self.port, timeout=5)
        try:
            r = c.command("SENTINEL", "MASTER", "mymaster")
        finally:
            c.close()
        return {r[i].decode(): r[i + 1].decode() for i in range(0, len(r), 2)}

    def close(self):
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_for(what, fn, timeout=20):
    deadline = time.time() + timeout
    while True:
        try:
            got = fn()
            if got:
                return got
        except (OSError, ConnectionError):
            pass
        if time.time() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.2)


@test
def two_sentinels_find_each_other_through_the_masters_hello_channel(srv):
    sentinels = [Sentinel(srv.port), Sentinel(srv.port)]
    try:
        c = srv.raw()
        info = c.command("INFO", "server").decode()
        run_id = [l.split(":", 1)[1] for l in info.split("\r\n") if l.startswith("run_id:")][0]
        assert len(run_id) == 40, run_id
        for s in sentinels:
            m = wait_for("a sentinel to see the other",
                         lambda: (lambda m: m if m["num-other-sentinels"] == "1" else None)(
                             s.master()))
            assert m["flags"] == "master" and m["role-reported"] == "master", m
            assert m["runid"] == run_id, (m["runid"], run_id)
        # each sentinel holds a named command and a named pubsub connection
        names = sorted(l.split(" name=")[1].split(" ")[0] + " " + l.split(" flags=")[1].split(" ")[0]
                       for l in c.command("CLIENT", "LIST").decode().splitlines()
                       if " name=sentinel-" in l)
        assert len(names) == 4, names
        assert sorted(n.rsplit("-", 1)[1] for n in names) == \
            ["cmd N", "cmd N", "pubsub P", "pubsub P"], names
        # the last command, not the CLIENT SETNAME before it
        assert all(" cmd=subscribe " in l for l in c.command("CLIENT", "LIST").decode().splitlines()
                   if "-pubsub " in l)
        assert c.command("PUBSUB", "NUMSUB", "__sentinel__:hello") == [b"__sentinel__:hello", 2]
        # quorum 2 reached through the hello channel's peers: the master is
        # objectively down when it stops answering
        srv.stop()
        for s in sentinels:
            wait_for("odown", lambda: "o_down" in s.master()["flags"], timeout=30)
    finally:
        for s in sentinels:
            s.close()


if __name__ == "__main__":
    main()
