/*
 * eng_fault_test.c -- the engine under failing file operations, through the
 * fault-injecting env (engine/env_fault.h).
 *
 *  - A log write that fails (disk full): the batch is not applied, writes
 *    are refused while reads go on, the engine retries in the background and
 *    takes writes again once the disk has room; nothing it took is lost,
 *    across a clean close and across a power loss.
 *  - A failing log fsync, a failing flush (the memtable is kept and the flush
 *    retried), a failing compaction (retried): the same.
 *  - The stats say a compaction is due while attempts fail, and that none
 *    runs between them.
 *  - A batch over the log's record limit is refused before anything of it is
 *    applied, and the log goes on.
 * (The random workload under thousands of injected faults is
 * eng_fault_workload_test's.)
 */
#include "engine/engine.h"
#include "engine/env_fault.h"
#include "test.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static eng_options fault_opts(void)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 4 << 10;
    o.target_file_size = 8 << 10;
    o.max_bytes_level_base = 16 << 10;
    o.l0_compaction_trigger = 2;
    o.l0_slowdown_trigger = 6;
    o.l0_stop_trigger = 8;
    o.block_size = 512;
    o.cache_size = 64 << 10;
    o.sync_mode = ENG_SYNC_NO;
    o.retry_delay_us = 1000;
    o.log_fn = NULL;
    return o;
}

static void quiet_log(void *ctx, int level, const char *msg) {}

static eng_db *open_at(const char *dir, eng_options *o)
{
    eng_db *db = NULL;
    eng_status s = eng_open(dir, o, &db);
    CHECK_MSG(s == ENG_OK, "open %s: %s %s", dir, eng_status_str(s), eng_last_error());
    return db;
}

static eng_status put1(eng_db *db, const char *k, const char *v, int flags)
{
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, k, strlen(k), v, strlen(v));
    eng_status s = eng_write(db, b, flags);
    eng_batch_free(b);
    return s;
}

static int has(eng_db *db, const char *k, const char *want)
{
    char *v;
    size_t vl;
    eng_status s = eng_get(db, NULL, k, strlen(k), &v, &vl);
    if (s == ENG_NOTFOUND) return 0;
    CHECK_MSG(s == ENG_OK, "get %s: %s %s", k, eng_status_str(s), eng_last_error());
    int ok = vl == strlen(want) && !memcmp(v, want, vl);
    eng_free(v);
    CHECK_MSG(ok, "%s has a wrong value", k);
    return 1;
}

/* Waits up to 20 s (a loaded machine delays the background retry) for the
 * engine to take writes again. */
static void wait_writable(eng_db *db)
{
    for (int i = 0; i < 20000 && eng_write_status(db) != ENG_OK; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK_MSG(eng_write_status(db) == ENG_OK, "writes still refused: %s", eng_last_error());
}

TEST(FullDiskRefusesWritesKeepsReadsAndResumesWithNothingLost)
{
    fault_env_install();
    eng_options o = fault_opts();
    o.write_buffer_size = 1 << 20;
    o.log_fn = quiet_log;
    eng_db *db = open_at(test_tmpdir(), &o);
    CHECK(put1(db, "a", "1", 0) == ENG_OK && eng_commit(db, 1) == ENG_OK);
    /* The disk fills up: every write and create fails with ENOSPC. */
    fault_env_arm(FAULT_STICKY, 1, FAULT_WRITE | FAULT_CREATE, ENOSPC);
    CHECK(put1(db, "b", "2", ENG_WRITE_DEFER) == ENG_OK); /* buffered: not yet written */
    CHECK(eng_commit(db, 0) == ENG_IOERR);
    CHECK(eng_write_status(db) != ENG_OK);
    eng_health h;
    eng_get_health(db, &h);
    CHECK(h.log.failing && h.log.err == ENOSPC && h.writes_refused && h.log.since_ms > 0);
    CHECK(strstr(h.log.error, "No space left on device"));
    CHECK(put1(db, "c", "3", 0) == ENG_IOERR);                           /* refused, not applied */
    CHECK(has(db, "a", "1") && has(db, "b", "2") && !has(db, "c", "3")); /* reads go on */
    struct timespec ts = {0, 30000000};
    nanosleep(&ts, NULL); /* several retries fail meanwhile */
    CHECK(eng_write_status(db) != ENG_OK);
    /* Space comes back: the engine flushes b into a table and resumes. */
    fault_env_disarm();
    wait_writable(db);
    eng_get_health(db, &h);
    CHECK(!h.log.failing && h.recoveries == 1 && h.log.failures >= 1);
    CHECK(put1(db, "d", "4", ENG_WRITE_SYNC) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);
    /* Power loss: only what was fsynced counts; b is in a synced table. */
    CHECK(fault_env_power_loss() == 0);
    fault_env_uninstall();
    db = open_at(test_tmpdir(), &o);
    CHECK(has(db, "a", "1") && has(db, "b", "2") && !has(db, "c", "3") && has(db, "d", "4"));
    CHECK(eng_close(db) == ENG_OK);
}

TEST(FailedLogFsyncIsMadeGoodByFlushingTheMemtable)
{
    fault_env_install();
    eng_options o = fault_opts();
    o.write_buffer_size = 1 << 20;
    o.log_fn = quiet_log;
    eng_db *db = open_at(test_tmpdir(), &o);
    CHECK(put1(db, "a", "1", ENG_WRITE_SYNC) == ENG_OK);
    fault_env_arm(FAULT_ONCE, 1, FAULT_SYNC, EIO);
    /* The record reached the OS but its fsync failed: applied, not durable. */
    CHECK(put1(db, "b", "2", ENG_WRITE_SYNC) == ENG_IOERR);
    CHECK(has(db, "b", "2"));
    wait_writable(db); /* the flush made it durable */
    CHECK(eng_close(db) == ENG_OK);
    CHECK(fault_env_power_loss() == 0);
    fault_env_uninstall();
    db = open_at(test_tmpdir(), &o);
    CHECK(has(db, "a", "1") && has(db, "b", "2"));
    CHECK(eng_close(db) == ENG_OK);
}

TEST(FailingFlushKeepsTheMemtableRetriesAndRefusesOnlyWhenFull)
{
    fault_env_install();
    eng_options o = fault_opts();
    o.log_fn = quiet_log;
    eng_db *db = open_at(test_tmpdir(), &o);
    /* No table file can be written; the log can. */
    fault_env_only(".sst");
    fault_env_arm(FAULT_STICKY, 1, FAULT_CREATE | FAULT_WRITE, ENOSPC);
    char k[32], v[64];
    int taken = 0;
    for (int i = 0; i < 400; i++) {
        snprintf(k, sizeof(k), "k%04d", i);
        snprintf(v, sizeof(v), "value-%04d-%040d", i, 0);
        eng_status s = put1(db, k, v, 0);
        if (s != ENG_OK) break;
        taken++;
    }
    CHECK_MSG(taken < 400, "every write was taken although nothing can be synced");
    CHECK(eng_write_status(db) != ENG_OK);
    eng_health h;
    eng_get_health(db, &h);
    CHECK(h.writes_refused && h.flush.failing && !h.log.failing && h.flush.err == ENOSPC);
    fault_env_disarm();
    wait_writable(db);
    for (int i = 0; i < taken; i++) { /* nothing taken was dropped */
        snprintf(k, sizeof(k), "k%04d", i);
        snprintf(v, sizeof(v), "value-%04d-%040d", i, 0);
        CHECK_MSG(has(db, k, v), "%s lost after the failed flushes", k);
    }
    CHECK(eng_flush(db) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);
    CHECK(fault_env_power_loss() == 0);
    fault_env_uninstall();
    db = open_at(test_tmpdir(), &o);
    for (int i = 0; i < taken; i++) {
        snprintf(k, sizeof(k), "k%04d", i);
        snprintf(v, sizeof(v), "value-%04d-%040d", i, 0);
        CHECK_MSG(has(db, k, v), "%s lost after the power loss", k);
    }
    CHECK(eng_close(db) == ENG_OK);
}

TEST(FailingCompactionIsRetriedAndLosesNothing)
{
    fault_env_install();
    eng_options o = fault_opts();
    o.log_fn = quiet_log;
    o.write_buffer_size = 1 << 20;
    /* Only the manual compaction below may run: a background one started
     * by the flushes would merge the tables first (or take the armed
     * fault), and the manual one would then have nothing to write. */
    o.l0_compaction_trigger = 50;
    o.l0_slowdown_trigger = 60;
    o.l0_stop_trigger = 70;
    eng_db *db = open_at(test_tmpdir(), &o);
    char k[32];
    for (int t = 0; t < 3; t++) {
        for (int i = 0; i < 100; i++) {
            snprintf(k, sizeof(k), "k%04d", i);
            CHECK(put1(db, k, t == 2 ? "new" : "old", 0) == ENG_OK);
        }
        CHECK(eng_flush(db) == ENG_OK);
    }
    fault_env_only(".sst");
    fault_env_arm(FAULT_ONCE, 1, FAULT_CREATE, ENOSPC); /* the compaction's output */
    eng_status s = eng_compact_range(db, NULL, 0, NULL, 0);
    CHECK_MSG(s == ENG_IOERR, "compaction with no space gave %s", eng_status_str(s));
    eng_health h;
    eng_get_health(db, &h);
    CHECK(h.compaction.failing && h.compaction.err == ENOSPC && !h.writes_refused);
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof(k), "k%04d", i);
        CHECK(has(db, k, "new"));
    }
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    eng_get_health(db, &h);
    CHECK(!h.compaction.failing);
    CHECK(eng_close(db) == ENG_OK);
    fault_env_uninstall();
    db = open_at(test_tmpdir(), &o);
    for (int i = 0; i < 100; i++) {
        snprintf(k, sizeof(k), "k%04d", i);
        CHECK(has(db, k, "new"));
    }
    CHECK(eng_close(db) == ENG_OK);
}

/* INFO engine's compaction_pending and compactions_running are what a
 * caller waits on for the engine to be at rest: a level over its target is
 * due until a compaction brings it under, failed attempts included, and
 * nothing counts as running between attempts. */
TEST(StatsSayACompactionIsDueUntilOneSucceeds)
{
    eng_options o = fault_opts();
    o.log_fn = quiet_log;
    o.write_buffer_size = 1 << 20;
    o.l0_compaction_trigger = 50; /* three tables in L0, nothing due */
    o.l0_slowdown_trigger = 60;
    o.l0_stop_trigger = 70;
    eng_db *db = open_at(test_tmpdir(), &o);
    char k[32];
    for (int t = 0; t < 3; t++) {
        for (int i = 0; i < 100; i++) {
            snprintf(k, sizeof(k), "k%04d", i);
            CHECK(put1(db, k, "v", 0) == ENG_OK);
        }
        CHECK(eng_flush(db) == ENG_OK);
    }
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK(st.level_files[0] == 3 && !st.compaction_pending && !st.compactions_running);
    CHECK(eng_close(db) == ENG_OK);

    /* Reopened with a trigger of 2 and no room for a table: the compaction
     * due at open fails, and its retry is a minute away. */
    fault_env_install();
    fault_env_only(".sst");
    fault_env_arm(FAULT_STICKY, 1, FAULT_CREATE, ENOSPC);
    o.l0_compaction_trigger = 2;
    o.l0_slowdown_trigger = 6;
    o.l0_stop_trigger = 8;
    o.retry_delay_us = 60 * 1000000ull;
    db = open_at(test_tmpdir(), &o);
    eng_health h;
    for (int i = 0; i < 20000; i++) {
        eng_get_health(db, &h);
        if (h.compaction.failing) break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK_MSG(h.compaction.failing, "the compaction due at open never failed");
    eng_get_stats(db, &st);
    CHECK_MSG(st.compaction_pending && !st.compactions_running, "pending %llu running %llu",
              (unsigned long long)st.compaction_pending,
              (unsigned long long)st.compactions_running);
    fault_env_disarm();
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    eng_get_stats(db, &st);
    CHECK(st.level_files[0] == 0 && !st.compaction_pending && !st.compactions_running);
    CHECK(eng_close(db) == ENG_OK);
    fault_env_uninstall();
}

TEST(BatchOverTheRecordLimitIsRefusedBeforeAnythingIsApplied)
{
    eng_options o = fault_opts();
    o.max_record_bytes = 4096;
    o.write_buffer_size = 1 << 20;
    eng_db *db = open_at(test_tmpdir(), &o);
    eng_batch *b = eng_batch_new(0);
    char k[32], v[100];
    memset(v, 'x', sizeof(v) - 1);
    v[sizeof(v) - 1] = 0;
    for (int i = 0; i < 100; i++) { /* about 11 KB: over the limit */
        snprintf(k, sizeof(k), "big%03d", i);
        eng_batch_put(b, k, strlen(k), v, strlen(v));
    }
    CHECK(eng_write(db, b, ENG_WRITE_DEFER) == ENG_INVALID);
    CHECK(strstr(eng_last_error(), "record limit"));
    CHECK(eng_write(db, b, 0) == ENG_INVALID);
    eng_batch_free(b);
    CHECK(!has(db, "big000", v) && !has(db, "big099", v));
    /* The log goes on: later writes are taken and durable. */
    for (int i = 0; i < 20; i++) {
        snprintf(k, sizeof(k), "small%02d", i);
        CHECK(put1(db, k, "s", ENG_WRITE_DEFER) == ENG_OK);
    }
    CHECK(eng_commit(db, 1) == ENG_OK);
    CHECK(eng_write_status(db) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);
    db = open_at(test_tmpdir(), &o);
    for (int i = 0; i < 20; i++) {
        snprintf(k, sizeof(k), "small%02d", i);
        CHECK(has(db, k, "s"));
    }
    CHECK(!has(db, "big000", v));
    CHECK(eng_close(db) == ENG_OK);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
