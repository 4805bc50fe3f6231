"""test_persistence.py -- durability across restarts: a clean restart
(SIGTERM, SHUTDOWN) keeps everything; SIGKILL with appendfsync always keeps
every acknowledged write (group commit: replies only after the fsync);
SAVE/BGSAVE flush to tables and the data survives a crash after them."""
import signal
import threading
import time

import redis

from harness import RespError, Server, main, test, wait_for


def fill(c, n, prefix="k", pad=0):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("%s:%d" % (prefix, i), "value-%d" % i + "." * pad)
    p.execute()


def check(c, n, prefix="k", pad=0):
    got = c.mget(["%s:%d" % (prefix, i) for i in range(n)])
    for i, v in enumerate(got):
        assert v == b"value-%d" % i + b"." * pad, (prefix, i, v)


@test
def clean_restart_keeps_strings_hashes_and_databases(srv):
    c = srv.client()
    fill(c, 2000)
    c.hset("user:1", mapping={"name": "ann", "email": "ann@x.org", "age": "33"})
    c1 = srv.client(db=7)
    c1.set("in7", "seven")
    c.set("ttl", "v", ex=1000)
    assert srv.stop() == 0  # SIGTERM: clean, exit status 0
    srv.start()
    c = srv.client()
    check(c, 2000)
    assert c.hgetall("user:1") == {b"name": b"ann", b"email": b"ann@x.org", b"age": b"33"}
    assert srv.client(db=7).get("in7") == b"seven"
    assert 990 < c.ttl("ttl") <= 1000
    assert c.dbsize() == 2002


@test
def shutdown_command_stops_and_data_survives(srv):
    c = srv.client()
    fill(c, 500)
    try:
        c.execute_command("SHUTDOWN")
        raise AssertionError("SHUTDOWN replied instead of closing")
    except redis.ConnectionError:
        pass
    assert srv.proc.wait(20) == 0
    srv.proc = None
    srv.start()
    check(srv.client(), 500)


@test
def shutdown_save_flushes_tables(srv):
    c = srv.client()
    fill(c, 500)
    try:
        c.execute_command("SHUTDOWN", "SAVE")
    except redis.ConnectionError:
        pass
    assert srv.proc.wait(20) == 0
    srv.proc = None
    srv.start()
    c = srv.client()
    check(c, 500)
    assert c.info("engine")["level0"]["files"] + sum(
        c.info("engine")["level%d" % l]["files"] for l in range(1, 7)) >= 1
    r = srv.raw()
    assert str(r.command("SHUTDOWN", "bogus")) == "ERR syntax error"


@test
def sigkill_with_appendfsync_always_keeps_every_acknowledged_write():
    srv = Server(appendfsync="always").start()
    try:
        acked = {}
        lock = threading.Lock()
        stop = threading.Event()

        def writer(wid):
            # 30 s: an fsync on a loaded machine can take seconds, and a
            # timed-out writer would stop writing for the rest of the run.
            c = srv.client(socket_timeout=30)
            i = 0
            while not stop.is_set():
                k = "w%d:%d" % (wid, i)
                try:
                    if wid % 2:
                        p = c.pipeline(transaction=False)  # a group of writes per round trip
                        for j in range(10):
                            p.set("%s.%d" % (k, j), j)
                        p.execute()
                        with lock:
                            for j in range(10):
                                acked["%s.%d" % (k, j)] = str(j).encode()
                    else:
                        c.set(k, i)
                        with lock:
                            acked[k] = str(i).encode()
                except (redis.ConnectionError, redis.TimeoutError, OSError):
                    return
                i += 1

        ts = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in ts:
            t.start()
        time.sleep(1.5)
        # At least 100 acknowledged before the kill, however slow the
        # machine's fsyncs are.
        wait_for(lambda: len(acked) > 100, 60, "100 acknowledged writes")
        srv.kill9()
        stop.set()
        for t in ts:
            t.join()
        assert len(acked) > 100, len(acked)
        srv.start()
        c = srv.client()
        keys = sorted(acked)
        got = c.mget(keys)
        missing = [k for k, v in zip(keys, got) if v != acked[k]]
        assert not missing, "%d of %d acknowledged writes lost, e.g. %s" % (
            len(missing), len(keys), missing[:5])
        assert c.info("stats")["total_commands_processed"] >= 1
    finally:
        srv.cleanup()


@test
def sigkill_after_save_keeps_the_saved_data(srv):
    c = srv.client()
    fill(c, 3000)
    assert c.execute_command("SAVE")
    srv.kill9()
    srv.start()
    check(srv.client(), 3000)


@test
def sigkill_during_transactions_keeps_them_whole():
    srv = Server(appendfsync="always").start()
    try:
        c = srv.client()
        done = 0
        for i in range(200):
            p = c.pipeline(transaction=True)
            p.set("a", i)
            p.set("b", i)
            p.execute()
            done = i
        srv.kill9()
        srv.start()
        c = srv.client()
        assert c.get("a") == c.get("b") == str(done).encode()
    finally:
        srv.cleanup()


@test
def restart_after_many_memtable_flushes():
    srv = Server(write_buffer_size="8mb").start()
    try:
        c = srv.client()
        for r in range(4):
            fill(c, 5000, prefix="r%d" % r, pad=1000)
        assert c.info("engine")["flushes"] >= 1
        srv.restart()
        c = srv.client()
        for r in range(4):
            check(c, 5000, prefix="r%d" % r, pad=1000)
    finally:
        srv.cleanup()


@test
def bad_requests_never_lose_acknowledged_data(srv):
    c = srv.client()
    fill(c, 300)
    r = srv.raw()
    r.send(b"*1\r\n$600000000\r\n")
    r.closed_by_server()
    for args in (("INCR",), ("SET", "k:1"), ("NOSUCH",), ("HSET", "k:1", "f", "v")):
        try:
            c.execute_command(*args)
        except redis.ResponseError:
            pass
    srv.kill9()
    srv.start()
    check(srv.client(), 300)


if __name__ == "__main__":
    main()
