"""test_strata_check.py -- strata-check on healthy and damaged data
directories: it names what is damaged with file and offset, refuses a
directory a server has open, and with --repair (keeping a copy of what it
changes) brings back a database the server starts on: a lost CURRENT, a
damaged table block (the rest of the table salvaged), index entries of the
lost hashes (the index rebuilt), a log damaged in the middle."""
import glob
import os
import subprocess

from harness import SERVER, Server, flip_byte, main, test

# tests/run.sh sets STRATA_CHECK (the server may be the ASan build elsewhere).
CHECK = os.environ.get("STRATA_CHECK", os.path.join(os.path.dirname(SERVER), "strata-check"))


def run_check(*args):
    p = subprocess.run([CHECK] + list(args), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def data_dir(srv):
    return os.path.join(srv.dir, "data")


def fill(srv, n=3000):
    c = srv.client()
    c.execute_command("IDX.CREATE", "age", "PREFIX", "h:", "SCHEMA", "age", "NUMERIC")
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.hset("h:%05d" % i, mapping={"age": i % 90, "name": "n%05d" % i})
    p.execute()
    c.save()
    return c


@test
def healthy_directory_checks_clean_and_a_running_server_is_refused():
    srv = Server().start()
    try:
        fill(srv, 500)
        rc, out = run_check(data_dir(srv))
        assert rc == 2 and "in use" in out, (rc, out)  # the server holds the lock
        srv.stop()
        rc, out = run_check(data_dir(srv))
        assert rc == 0 and "0 problem(s)" in out and "0 index problem(s)" in out, out
    finally:
        srv.cleanup()


@test
def damaged_block_and_lost_current_are_named_then_repaired():
    srv = Server(compression=0).start()
    try:
        fill(srv)
        srv.stop()
        d = data_dir(srv)
        sst = max(glob.glob(os.path.join(d, "*.sst")), key=os.path.getsize)
        off = os.path.getsize(sst) // 3
        flip_byte(sst, off)
        os.unlink(os.path.join(d, "CURRENT"))
        rc, out = run_check(d)
        assert rc == 1, out
        assert "DAMAGE %s: CURRENT is missing" % os.path.join(d, "CURRENT") in out, out
        assert "DAMAGE %s @" % sst in out and "damaged data block" in out, out
        rc, out = run_check("--repair", d)
        assert rc == 0 and "0 problem(s) left" in out, out
        assert "REPAIRED" in out and "salvaged" in out and "REPAIRED index age" in out, out
        assert glob.glob(os.path.join(d, "repair-*", "MANIFEST-*")), "no copy of the manifest kept"
        assert glob.glob(os.path.join(d, "*.sst.damaged")), "the damaged table was not kept"
        srv.start()
        c = srv.client()
        n = sum(1 for i in range(3000) if c.hget("h:%05d" % i, "name") == b"n%05d" % i)
        assert 2500 < n < 3000, n
        assert c.execute_command("IDX.CHECK") == []
        assert c.execute_command("IDX.RANGE", "age", "MIN", 0, "MAX", 89, "LIMIT", 0, 100000) is not None
        srv.stop()
        rc, out = run_check(d)
        assert rc == 0, out
    finally:
        srv.cleanup()


@test
def log_damaged_in_the_middle_is_named_and_repaired():
    srv = Server(appendfsync="always").start()
    try:
        c = srv.client()
        for i in range(200):
            c.set("k%03d" % i, "v%03d" % i)
        srv.kill9()
        log = max(glob.glob(os.path.join(data_dir(srv), "*.log")), key=os.path.getsize)
        flip_byte(log, os.path.getsize(log) // 2)
        rc, out = run_check(data_dir(srv))
        assert rc == 1 and ("DAMAGE %s @" % log) in out and "intact record follows" in out, out
        rc, out = run_check("--repair", data_dir(srv))
        assert rc == 0, out
        assert glob.glob(os.path.join(data_dir(srv), "*.log.corrupt")), out
        srv.start()
        assert srv.client().get("k000") == b"v000"
    finally:
        srv.cleanup()


if __name__ == "__main__":
    main()
