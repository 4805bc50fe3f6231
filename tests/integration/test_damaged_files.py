"""test_damaged_files.py -- the server with damaged or missing files:

- a damaged data block: SCAN, KEYS, RANDOMKEY and IDX.CHECK go on past it
  (IDX.CHECK reports "damaged <index> ..." lines), the log names the table,
  offset and key range, and a read of a key in it fails naming the file and
  offset;
- a damaged table footer, a missing CURRENT, a log record damaged in the
  middle: the server refuses to start, says which file and offset, points
  to strata-check, and changes nothing; log-load-corrupt yes starts from the
  last good record and keeps the damaged log aside.
"""
import glob
import os
import signal

from harness import Server, flip_byte, main, test


def data_dir(srv):
    return os.path.join(srv.dir, "data")


def tables(srv):
    return sorted(glob.glob(os.path.join(data_dir(srv), "*.sst")))


def start_fails(srv):
    try:
        srv.start(timeout=60)  # it fails at once; 60: an ASan server on a loaded machine
    except RuntimeError as e:
        return str(e)
    raise AssertionError("the server started")


def listing(srv):
    return sorted(os.listdir(data_dir(srv)))


def write_saved_and_stop(srv, n):
    """Starts srv, writes keys k0..k<n-1>, SAVEs them into tables, stops."""
    srv.start()
    c = srv.client()
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("k%d" % i, "v%d" % i)
    p.execute()
    c.save()
    srv.stop()


def assert_start_refused_changing_nothing(srv, *needles):
    """The server refuses to start, its error names every one of needles,
    and the data dir holds the same files as before."""
    before = listing(srv)
    err = start_fails(srv)
    assert all(n in err for n in needles), err[-800:]
    assert listing(srv) == before


@test
def damaged_data_block_scan_keys_randomkey_and_idx_check_go_on():
    srv = Server(compression=0)
    try:
        srv.start()
        c = srv.client()
        c.execute_command("IDX.CREATE", "age", "PREFIX", "h:", "SCHEMA", "age", "NUMERIC")
        p = c.pipeline(transaction=False)
        for i in range(3000):
            p.hset("h:%05d" % i, mapping={"age": i % 90, "name": "n%05d" % i})
        p.execute()
        assert c.execute_command("IDX.CHECK") == []
        c.save()
        srv.stop()
        big = max(tables(srv), key=os.path.getsize)
        flip_byte(big, os.path.getsize(big) // 3)
        srv.start()
        c = srv.client()
        keys, cur = set(), 0
        while True:  # SCAN to the end: no error
            cur, batch = c.scan(cur, count=500)
            keys.update(batch)
            if cur == 0:
                break
        assert 2000 < len(keys) < 3000, len(keys)
        assert len(c.keys("*")) == len(keys)
        assert c.randomkey() is not None
        lines = [l.decode() if isinstance(l, bytes) else l for l in c.execute_command("IDX.CHECK")]
        assert lines and all(l.startswith("damaged age ") for l in lines), lines[:5]
        missing = sorted(set(b"h:%05d" % i for i in range(3000)) - keys)[0]
        try:
            c.hgetall(missing)
            raise AssertionError("a read of a damaged key answered")
        except Exception as e:
            assert ".sst" in str(e) and "offset" in str(e), str(e)
        log = open(srv.logfile, errors="replace").read()
        assert "damaged data block at offset" in log and os.path.basename(big) in log
        assert c.set("still", "writable")
    finally:
        srv.cleanup()


@test
def damaged_table_footer_refuses_start_naming_file_and_offset():
    srv = Server()
    try:
        write_saved_and_stop(srv, 1000)
        t = tables(srv)[-1]
        flip_byte(t, os.path.getsize(t) - 30)
        assert_start_refused_changing_nothing(srv, os.path.basename(t), "offset", "strata-check")
    finally:
        srv.cleanup()


@test
def missing_current_refuses_start_and_deletes_nothing():
    srv = Server()
    try:
        write_saved_and_stop(srv, 2000)
        os.unlink(os.path.join(data_dir(srv), "CURRENT"))
        assert_start_refused_changing_nothing(srv, "CURRENT is missing")
    finally:
        srv.cleanup()


@test
def damaged_middle_log_record_refuses_start_unless_log_load_corrupt():
    srv = Server(appendfsync="always")
    try:
        srv.start()
        c = srv.client()
        for i in range(200):
            c.set("k%03d" % i, "v%03d" % i)
        srv.kill9()
        log = max(glob.glob(os.path.join(data_dir(srv), "*.log")), key=os.path.getsize)
        size = os.path.getsize(log)
        flip_byte(log, size // 2)
        err = start_fails(srv)
        assert os.path.basename(log) in err and "offset" in err, err[-800:]
        assert os.path.getsize(log) == size  # kept as it was
        srv.settings["log-load-corrupt"] = "yes"
        srv.start()
        c = srv.client()
        n = sum(1 for i in range(200) if c.get("k%03d" % i) == b"v%03d" % i)
        assert 20 < n < 200, n
        assert all(c.get("k%03d" % i) is None for i in range(n, 200))  # nothing after the damage
        assert glob.glob(os.path.join(data_dir(srv), "*.log.corrupt"))
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
