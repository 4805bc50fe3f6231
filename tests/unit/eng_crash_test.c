/*
 * eng_crash_test.c -- durability under crashes and damaged files.
 *
 *  - A forked child writes batches with ENG_WRITE_SYNC and reports each
 *    acknowledged batch number through a pipe; the parent SIGKILLs it at a
 *    random moment, reopens, and checks that every acknowledged batch is
 *    there, that no batch is half applied, and that iteration agrees with
 *    point reads. Twenty rounds on the same directory, with flushes and
 *    compactions racing the kill (tiny write buffer).
 *  - A log with a truncated tail, and with a flipped bit in its last
 *    record: replay stops at the damage and never applies a later record;
 *    the engine logs how many bytes it dropped. (Damage in the middle of a
 *    log or manifest is eng_damage_test's.)
 *  - A table file with a flipped byte: gets and iterators report
 *    ENG_CORRUPTION, never a wrong value.
 *  - Fault injection that drops unsynced data: the log is cut back to its
 *    last synced size (plus a torn piece of what followed); every synced
 *    batch survives.
 */
#include "engine/engine.h"
#include "test.h"
#include "eng_batches.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void child_writer(int fd, long start)
{
    eng_options o = crash_opts();
    o.log_fn = NULL;
    eng_db *db = NULL;
    if (eng_open(test_tmpdir(), &o, &db) != ENG_OK) _exit(3);
    eng_batch *b = eng_batch_new(0);
    for (long n = start;; n++) {
        eng_batch_clear(b);
        fill_batch(b, n);
        if (eng_write(db, b, ENG_WRITE_SYNC) != ENG_OK) _exit(4);
        if (write(fd, &n, sizeof(n)) != sizeof(n)) _exit(5);
    }
}

TEST(KilledWriterLosesNoAcknowledgedBatch)
{
    long present = 0;
    srand(12345);
    for (int round = 0; round < 20; round++) {
        int p[2];
        CHECK(pipe(p) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            close(p[0]);
            child_writer(p[1], present);
        }
        close(p[1]);
        struct timespec ts = {0, (long)(20 + rand() % 150) * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        CHECK_MSG(WIFSIGNALED(status), "child exited early with %d", WEXITSTATUS(status));
        long acked = present - 1, n;
        while (read(p[0], &n, sizeof(n)) == sizeof(n))
            acked = n;
        close(p[0]);
        eng_options o = crash_opts();
        eng_db *db = open_db(&o);
        present = check_batches(db);
        CHECK_MSG(present > acked, "round %d: batch %ld was acknowledged, only %ld present", round,
                  acked, present);
        CHECK(eng_close(db) == ENG_OK);
    }
    printf("%ld batches after 20 kills\n", present);
    CHECK_MSG(present > 20, "the writer made too little progress (%ld batches)", present);
}

TEST(TruncatedLogTailIsDroppedAndReported)
{
    off_t sizes[10];
    write_logged_batches(10, sizes);
    char path[512];
    newest_log(path, sizeof(path));
    CHECK(truncate(path, sizes[9] - 5) == 0);
    logbuf[0] = 0;
    eng_options o = crash_opts();
    eng_db *db = open_db(&o);
    CHECK_EQ_INT(check_batches(db), 9);
    CHECK_MSG(strstr(logbuf, "dropped"), "no recovery message: %.200s", logbuf);
    eng_close(db);
}

TEST(BitFlipInLastLogRecordDropsOnlyThatBatch)
{
    off_t sizes[10];
    write_logged_batches(10, sizes);
    char path[512];
    newest_log(path, sizeof(path));
    flip_byte(path, sizes[9] - 3);
    logbuf[0] = 0;
    eng_options o = crash_opts();
    eng_db *db = open_db(&o);
    CHECK_EQ_INT(check_batches(db), 9);
    CHECK_MSG(strstr(logbuf, "dropped"), "no recovery message: %.200s", logbuf);
    eng_close(db);
}

TEST(FlippedTableByteGivesCorruptionNeverWrongData)
{
    eng_options o = crash_opts();
    o.compression_level = 0;
    o.write_buffer_size = 4 << 20;
    o.cache_size = 0;
    eng_db *db = open_db(&o);
    eng_batch *b = eng_batch_new(0);
    for (long i = 0; i < 400; i++)
        fill_batch(b, i);
    CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
    CHECK(eng_flush(db) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);

    char sst[512];
    some_file(".sst", sst, sizeof(sst));
    flip_byte(sst, file_size(sst) / 4); /* inside a data block */

    eng_db *db2 = NULL;
    eng_status s = eng_open(test_tmpdir(), &o, &db2);
    CHECK_MSG(s == ENG_OK, "open: %s", eng_status_str(s));
    int corrupt = 0;
    char k[32];
    for (long n = 0; n < 400; n++)
        for (int i = 1; i < KEYS_PER_BATCH; i++) {
            batch_key(k, n, i);
            char *v;
            size_t vl;
            s = eng_get(db2, NULL, k, strlen(k), &v, &vl);
            if (s == ENG_CORRUPTION) {
                corrupt++;
                continue;
            }
            CHECK_MSG(s == ENG_OK, "get %s: %s", k, eng_status_str(s));
            eng_free(v);
            CHECK(has_key(db2, k, n)); /* the value is the right one */
        }
    CHECK_MSG(corrupt > 0, "no get reported the corruption");
    eng_iter *it = eng_iter_new(db2, NULL, NULL);
    long seen = 0;
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it))
        seen++;
    CHECK_MSG(eng_iter_status(it) == ENG_CORRUPTION, "iterator status %s after %ld keys",
              eng_status_str(eng_iter_status(it)), seen);
    /* Backward, every key shown before the error has its right value. */
    for (eng_iter_seek_last(it); eng_iter_valid(it); eng_iter_prev(it)) {
        size_t kl, vl;
        const char *ik = eng_iter_key(it, &kl), *iv = eng_iter_value(it, &vl);
        long n;
        CHECK(kl < sizeof(k) && sscanf(ik, "b%8ld", &n) == 1);
        char want[64];
        int wl = snprintf(want, sizeof(want), "%ld-%0*d", n, (int)(n % 50), 0);
        CHECK_MSG(vl == (size_t)wl && !memcmp(iv, want, vl), "wrong value for %.*s", (int)kl, ik);
    }
    CHECK(eng_iter_status(it) == ENG_CORRUPTION);
    eng_iter_free(it);
    eng_close(db2);
}

TEST(DroppingUnsyncedLogDataKeepsEverySyncedBatch)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        eng_options o = crash_opts();
        o.sync_mode = ENG_SYNC_NO;
        o.write_buffer_size = 4 << 20;
        eng_db *db = NULL;
        if (eng_open(test_tmpdir(), &o, &db) != ENG_OK) _exit(3);
        eng_batch *b = eng_batch_new(0);
        char path[512];
        newest_log(path, sizeof(path));
        for (long n = 0; n < 30; n++) {
            eng_batch_clear(b);
            fill_batch(b, n);
            int flags = n < 12 ? ENG_WRITE_SYNC : 0; /* the rest is never synced */
            if (eng_write(db, b, flags) != ENG_OK) _exit(4);
            if (n == 11) {
                off_t synced = file_size(path);
                if (write(p[1], &synced, sizeof(synced)) != sizeof(synced)) _exit(5);
            }
        }
        _exit(0); /* a crash: no close, nothing more synced */
    }
    close(p[1]);
    off_t synced = 0;
    CHECK(read(p[0], &synced, sizeof(synced)) == sizeof(synced));
    close(p[0]);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char path[512];
    newest_log(path, sizeof(path));
    CHECK(file_size(path) > synced);
    /* What the OS had not synced is lost, but a torn piece of it remains. */
    CHECK(truncate(path, synced + 7) == 0);
    eng_options o = crash_opts();
    eng_db *db = open_db(&o);
    CHECK_EQ_INT(check_batches(db), 12);
    eng_close(db);
}

TEST(TornManifestTailIsIgnored)
{
    write_flushed_batches(40);
    char path[512];
    manifest_path(path, sizeof(path));
    FILE *f = fopen(path, "a");
    CHECK(f);
    fwrite("\x30\x00\x00\x00\x01\x02", 1, 6, f); /* a record header cut short */
    fclose(f);
    logbuf[0] = 0;
    eng_options o = crash_opts();
    eng_db *db = open_db(&o);
    CHECK_EQ_INT(check_batches(db), 40);
    CHECK_MSG(strstr(logbuf, "ignored"), "no message about the torn manifest: %.200s", logbuf);
    eng_close(db);
}

TEST(InterruptedCurrentUpdateLeavesPreviousStateUsable)
{
    write_flushed_batches(25);
    char tmp[512];
    snprintf(tmp, sizeof(tmp), "%s/CURRENT.tmp", test_tmpdir());
    FILE *f = fopen(tmp, "w"); /* a crash between writing CURRENT.tmp and the rename */
    CHECK(f);
    fputs("MANIFEST-9999", f);
    fclose(f);
    eng_options o = crash_opts();
    eng_db *db = open_db(&o);
    CHECK_EQ_INT(check_batches(db), 25);
    CHECK(access(tmp, F_OK) != 0);
    eng_close(db);
}

TEST(GarbageCurrentFailsOpenWithCorruption)
{
    write_flushed_batches(5);
    char cur[512];
    snprintf(cur, sizeof(cur), "%s/CURRENT", test_tmpdir());
    FILE *f = fopen(cur, "w");
    CHECK(f);
    fputs("not a manifest name\n", f);
    fclose(f);
    eng_options o = crash_opts();
    eng_db *db = NULL;
    CHECK_EQ_INT(eng_open(test_tmpdir(), &o, &db), ENG_CORRUPTION);
    CHECK(db == NULL);
}

TEST(CorruptManifestRecordFailsOpenWithCorruption)
{
    write_flushed_batches(30);
    char path[512];
    manifest_path(path, sizeof(path));
    flip_byte(path, 16 + 8 + 3); /* inside the first (snapshot) edit */
    eng_options o = crash_opts();
    eng_db *db = NULL;
    /* The first record fails its checksum: the manifest names no file at
     * all; opening must refuse rather than start an empty database. */
    CHECK_EQ_INT(eng_open(test_tmpdir(), &o, &db), ENG_CORRUPTION);
    CHECK(db == NULL);
}

TEST(DamagedManifestSetsUnnamedTablesAsideInsteadOfDeletingThem)
{
    eng_options o = crash_opts();
    o.l0_compaction_trigger = 100; /* only flushes: one edit per table */
    o.l0_slowdown_trigger = o.l0_stop_trigger = 100;
    write_flushed_batches_with(40, &o);
    eng_db *db;
    char path[512];
    manifest_path(path, sizeof(path));
    flip_byte(path, file_size(path) - 3); /* the edit adding the last table */
    db = open_db(&o);
    CHECK_EQ_INT(check_batches(db), 30);
    eng_close(db);
    CHECK_EQ_INT(count_files(".sst.lost"), 1);
    db = open_db(&o); /* and a later open keeps it too */
    eng_close(db);
    CHECK_EQ_INT(count_files(".sst.lost"), 1);
}

TEST(MissingTableFileFailsOpenWithCorruption)
{
    write_flushed_batches(20);
    char sst[512];
    some_file(".sst", sst, sizeof(sst));
    CHECK(unlink(sst) == 0);
    eng_options o = crash_opts();
    eng_db *db = NULL;
    CHECK_EQ_INT(eng_open(test_tmpdir(), &o, &db), ENG_CORRUPTION);
    CHECK(db == NULL);
    CHECK(strstr(eng_last_error(), "missing"));
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
