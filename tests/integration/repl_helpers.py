"""repl_helpers.py -- waiting for replication in the integration tests."""
import time


def wait_for(pred, timeout=20, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def info(c, section="replication"):
    return c.info(section)


def caught_up(m, replicas):
    mc = m.client()
    off = info(mc)["master_repl_offset"]
    for r in replicas:
        i = info(r.client())
        if i.get("master_link_status") != "up" or i["slave_repl_offset"] < off:
            return False
    return True


def replicate(m, *replicas, timeout=30):
    for r in replicas:
        r.client().replicaof("127.0.0.1", m.port)
    wait_for(lambda: caught_up(m, replicas), timeout, "replicas to catch up")
