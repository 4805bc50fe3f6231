"""test_backup.py -- BACKUP <dir> and BGSAVE by engine checkpoint (backup.c,
src/engine/checkpoint.c): a backup taken while a client writes holds
exactly the writes before the command, a server starts from it with every
index (IDX.CHECK clean, FT.SEARCH answers), its tables are hard links to the
live ones (st_nlink > 1, du counts next to nothing beyond the logs), and
BGSAVE replaces <dir>/checkpoint. BACKUP_KEYS (default 100000) sizes the
link test; BACKUP_REPORT=1 prints its time and extra bytes."""
import os
import shutil
import subprocess
import tempfile
import threading
import time

import redis

from harness import Server, main, test


def wait_for(pred, timeout=30, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


def persistence(c):
    return c.info("persistence")


def all_keys(c):
    out = {}
    for k in c.scan_iter(count=1000):
        t = c.type(k).decode()
        out[k] = (t, c.get(k) if t == "string" else c.hgetall(k) if t == "hash" else None)
    return out


def load_indexed(c, n):
    c.execute_command("IDX.CREATE", "email", "PREFIX", "user:", "UNIQUE", "SCHEMA", "email", "TAG")
    c.execute_command("FT.CREATE", "people", "PREFIX", "1", "user:", "SCHEMA", "name", "TEXT",
                      "age", "NUMERIC")
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.hset("user:%d" % i, mapping={"email": "u%d@x" % i, "name": "name%d" % (i % 7),
                                       "age": i % 90})
    p.execute()


class Writer(threading.Thread):
    """SET w:<n> and INCR wcount in one MULTI, one after another."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.c = redis.Redis(port=port)
        self.stop = threading.Event()
        self.n = 0

    def run(self):
        while not self.stop.is_set():
            p = self.c.pipeline(transaction=True)
            p.set("w:%d" % self.n, self.n)
            p.incr("wcount")
            p.hset("user:w%d" % self.n, mapping={"email": "w%d@x" % self.n, "name": "writer",
                                                 "age": 1})
            p.execute()
            self.n += 1


def start_from(dirpath):
    tmp = tempfile.mkdtemp(prefix="strata-restore-")
    b = Server(dir=tmp)
    b.settings["dir"] = dirpath
    b.own_dir = True
    return b.start()


def check_restored(bc, m_before):
    assert bc.execute_command("IDX.CHECK") == []
    assert bc.execute_command("IDX.LIST") == [b"email"]
    r = bc.execute_command("FT.SEARCH", "people", "@name:name3", "LIMIT", "0", "0")
    assert r[0] == m_before, (r, m_before)


@test
def backup_under_a_writing_client_holds_exactly_the_writes_before_it():
    m = Server().start()
    tmp = tempfile.mkdtemp(prefix="strata-backup-")
    b = None
    w = None
    try:
        mc = m.client()
        load_indexed(mc, 3000)
        mc.save()  # some of it in tables
        name3 = mc.execute_command("FT.SEARCH", "people", "@name:name3", "LIMIT", "0", "0")[0]
        w = Writer(m.port)
        w.start()
        wait_for(lambda: w.n > 300, 30, "the writer")
        dest = os.path.join(tmp, "copy")
        sent = w.n  # acknowledged before BACKUP was sent: in the copy
        assert mc.execute_command("BACKUP", dest) == b"Background backup started"
        at = w.n + 1  # at most one more ran before it (its reply still on the way)
        wait_for(lambda: persistence(mc)["backup_in_progress"] == 0, 60, "backup")
        assert persistence(mc)["backup_last_error"] in ("", None)
        wait_for(lambda: w.n > at + 300, 30, "writes after the backup")
        w.stop.set()
        w.join()
        b = start_from(dest)
        bc = b.client()
        count = int(bc.get("wcount"))
        assert sent <= count <= at, (sent, count, at)
        got = all_keys(bc)
        want = {k: v for k, v in all_keys(mc).items()
                if not k.startswith(b"w:") and not k.startswith(b"user:w")}
        for i in range(count):  # MULTI: the counter and the keys agree
            want[b"w:%d" % i] = ("string", b"%d" % i)
            want[b"user:w%d" % i] = ("hash", {b"email": b"w%d@x" % i, b"name": b"writer",
                                              b"age": b"1"})
        want[b"wcount"] = ("string", b"%d" % count)
        diff = [k for k in set(want) | set(got) if want.get(k) != got.get(k)]
        assert not diff, sorted(diff)[:5]
        check_restored(bc, name3)
    finally:
        if w:
            w.stop.set()
        if b:
            b.cleanup()
        m.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


def unshared_bytes(copy, data):
    """Bytes on disk of the files in copy that are not a name of a file in
    data: what du counts for copy beside data (hard links count once)."""
    live = {os.stat(os.path.join(data, f)).st_ino for f in os.listdir(data)
            if os.path.isfile(os.path.join(data, f))}
    return sum(st.st_blocks * 512 for st in (os.stat(os.path.join(copy, f))
                                             for f in os.listdir(copy)) if st.st_ino not in live)


@test
def backup_of_many_keys_links_the_tables_instead_of_copying_them():
    n = int(os.environ.get("BACKUP_KEYS", "100000"))
    m = Server().start()
    tmp = tempfile.mkdtemp(prefix="strata-backup-")
    b = None
    try:
        mc = m.client()
        p = mc.pipeline(transaction=False)
        for i in range(n):
            p.set("key:%08d" % i, "v" * 40 + str(i))
            if i % 5000 == 4999:
                p.execute()
        p.execute()
        mc.save()  # in tables now; what the log holds after is small
        mc.set("in-the-log", "1")
        data = os.path.join(m.dir, "data")
        dest = os.path.join(tmp, "copy")
        t0 = time.time()
        assert mc.execute_command("BACKUP", dest) == b"Background backup started"
        wait_for(lambda: persistence(mc)["backup_in_progress"] == 0, 120, "backup")
        took = time.time() - t0
        assert persistence(mc)["backup_last_error"] in ("", None)
        tables = [f for f in os.listdir(dest) if f.endswith(".sst")]
        assert tables, os.listdir(dest)
        table_bytes = 0
        for f in tables:
            st = os.stat(os.path.join(dest, f))
            assert st.st_nlink > 1, (f, st.st_nlink)
            assert os.path.samefile(os.path.join(dest, f), os.path.join(data, f))
            table_bytes += st.st_size
        unshared = sum(os.path.getsize(os.path.join(dest, f)) for f in os.listdir(dest)
                       if not f.endswith(".sst"))
        extra = unshared_bytes(dest, data)
        # what the backup adds on disk: its logs, manifest and CURRENT (and
        # their blocks and the directory), not the tables
        assert extra <= unshared + 4096 * (len(os.listdir(dest)) + 1), (extra, unshared)
        assert extra * 10 < table_bytes, (extra, table_bytes)
        if os.environ.get("BACKUP_REPORT"):
            du_l = subprocess.run(["du", "-s", "-B1", "-l", dest], capture_output=True,
                                  text=True).stdout.split()[0]
            print("    BACKUP of %d keys: %.2f s, %d bytes of tables linked, %d bytes more on "
                  "disk, du -l of the copy %s" % (n, took, table_bytes, extra, du_l), flush=True)
        b = start_from(dest)
        bc = b.client()
        assert bc.dbsize() == n + 1
        assert bc.get("in-the-log") == b"1"
        assert bc.get("key:%08d" % (n - 1)) == b"v" * 40 + str(n - 1).encode()
    finally:
        if b:
            b.cleanup()
        m.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)


@test
def bgsave_replaces_the_checkpoint_directory_and_a_server_starts_from_it(srv):
    c = srv.client()
    raw = srv.raw()  # redis-py turns BGSAVE's status into True
    load_indexed(c, 500)
    name3 = c.execute_command("FT.SEARCH", "people", "@name:name3", "LIMIT", "0", "0")[0]
    before = c.lastsave()
    assert persistence(c)["rdb_changes_since_last_save"] > 0
    assert raw.command("BGSAVE") == "Background saving started"
    wait_for(lambda: persistence(c)["rdb_bgsave_in_progress"] == 0, 30, "bgsave")
    i = persistence(c)
    assert i["rdb_last_bgsave_status"] == "ok"
    assert i["rdb_changes_since_last_save"] == 0
    assert c.lastsave() >= before
    ck = os.path.join(srv.dir, "data", "checkpoint")
    first = set(os.listdir(ck))
    assert "CURRENT" in first
    c.set("second", "2")
    assert persistence(c)["rdb_changes_since_last_save"] > 0
    assert raw.command("BGSAVE", "SCHEDULE") == "Background saving started"
    r = raw.command("BGSAVE")  # may still run: then Redis's error
    assert str(r) in ("Background saving started", "ERR Background save already in progress"), r
    wait_for(lambda: persistence(c)["rdb_bgsave_in_progress"] == 0, 30, "bgsave")
    assert not os.path.exists(ck + ".new") and not os.path.exists(ck + ".new.tmp")
    c.set("third", "3")  # not in the checkpoint
    b = start_from(ck)
    try:
        bc = b.client()
        assert bc.get("second") == b"2" and bc.get("third") is None
        assert bc.dbsize() == 501
        check_restored(bc, name3)
    finally:
        b.cleanup()
    assert "syntax error" in str(raw.command("BGSAVE", "NOW"))


if __name__ == "__main__":
    main()
