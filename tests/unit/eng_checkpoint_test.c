/*
 * eng_checkpoint_test.c -- eng_checkpoint (engine/checkpoint.c):
 *  - under a concurrent writer (flushes and compactions running) the
 *    checkpoint holds exactly the writes up to the sequence it reports;
 *  - its tables are hard links (st_nlink 2), a copy only where link()
 *    fails with EXDEV; the live db compacting (deleting those tables)
 *    afterwards does not change the checkpoint, and the checkpoint written
 *    and compacted does not change the live db;
 *  - a fault injected at each file operation of the checkpoint in turn
 *    leaves no directory (and no .tmp) or a complete one, and never harms
 *    the live db.
 */
#include "engine/engine.h"
#include "engine/env_fault.h"
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define NKEYS 400

static void quiet_log(void *ctx, int level, const char *msg)
{
    (void)ctx, (void)msg;
    if (level >= 3) fprintf(stderr, "engine: %s\n", msg);
}

static eng_options small_opts(void)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 8 << 10;
    o.target_file_size = 8 << 10;
    o.max_bytes_level_base = 32 << 10;
    o.l0_compaction_trigger = 2;
    o.block_size = 512;
    o.cache_size = 64 << 10;
    o.sync_mode = ENG_SYNC_NO;
    o.retry_delay_us = 1000;
    o.log_fn = quiet_log;
    return o;
}

static eng_db *open_with(const char *dir, eng_options o)
{
    eng_db *db = NULL;
    eng_status s = eng_open(dir, &o, &db);
    CHECK_MSG(s == ENG_OK, "open %s: %s %s", dir, eng_status_str(s), eng_last_error());
    return db;
}

static eng_db *open_at(const char *dir)
{
    return open_with(dir, small_opts());
}

/* No background compaction: the tables stay as the test made them. */
static eng_db *open_still(const char *dir)
{
    eng_options o = small_opts();
    o.write_buffer_size = 4 << 20;
    o.l0_compaction_trigger = 1000;
    o.l0_slowdown_trigger = o.l0_stop_trigger = 2000;
    o.max_bytes_level_base = 1 << 30;
    return open_with(dir, o);
}

static void key_of(char *k, size_t cap, unsigned i)
{
    snprintf(k, cap, "key%05u", i);
}

/* Op j (from 1) of the deterministic workload: a put of "v<j>..." or, one
 * time in eight, a delete, of one of NKEYS keys. */
static unsigned op_key(uint64_t j)
{
    uint64_t x = j * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return (unsigned)(x % NKEYS);
}
static int op_is_delete(uint64_t j)
{
    return (j * 0xBF58476D1CE4E5B9ull >> 40) % 8 == 0;
}
static void op_value(char *v, size_t cap, uint64_t j)
{
    snprintf(v, cap, "v%llu-%040llu", (unsigned long long)j, (unsigned long long)j);
}

static eng_status apply_op(eng_db *db, uint64_t j)
{
    char k[32], v[64];
    key_of(k, sizeof(k), op_key(j));
    eng_batch *b = eng_batch_new(0);
    if (op_is_delete(j)) {
        eng_batch_delete(b, k, strlen(k));
    } else {
        op_value(v, sizeof(v), j);
        eng_batch_put(b, k, strlen(k), v, strlen(v));
    }
    eng_status s = eng_write(db, b, 0);
    eng_batch_free(b);
    return s;
}

/* Checks that db holds exactly the state after ops 1..upto (each its own
 * batch, so op j has sequence j in a fresh db). */
static void check_state(eng_db *db, uint64_t upto)
{
    static uint64_t last[NKEYS]; /* last op writing each key; 0: none */
    memset(last, 0, sizeof(last));
    for (uint64_t j = 1; j <= upto; j++)
        last[op_key(j)] = op_is_delete(j) ? 0 : j;
    for (unsigned i = 0; i < NKEYS; i++) {
        char k[32], want[64], *got;
        size_t gl;
        key_of(k, sizeof(k), i);
        eng_status s = eng_get(db, NULL, k, strlen(k), &got, &gl);
        if (!last[i]) {
            CHECK_MSG(s == ENG_NOTFOUND, "%s: want absent at %llu, got %s", k,
                      (unsigned long long)upto, eng_status_str(s));
            continue;
        }
        CHECK_MSG(s == ENG_OK, "%s: want op %llu, got %s", k, (unsigned long long)last[i],
                  eng_status_str(s));
        op_value(want, sizeof(want), last[i]);
        int same = gl == strlen(want) && !memcmp(got, want, gl);
        eng_free(got);
        CHECK_MSG(same, "%s: wrong value at sequence %llu", k, (unsigned long long)upto);
    }
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    size_t n = 0, want_n = 0;
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it))
        n++;
    CHECK(eng_iter_status(it) == ENG_OK);
    eng_iter_free(it);
    for (unsigned i = 0; i < NKEYS; i++)
        want_n += last[i] != 0;
    CHECK_EQ_INT(n, want_n);
}

typedef struct writer {
    eng_db *db;
    uint64_t next; /* atomic: the next op */
    int stop;      /* atomic */
    eng_status st;
} writer;

static void *writer_main(void *arg)
{
    writer *w = arg;
    while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
        uint64_t j = __atomic_load_n(&w->next, __ATOMIC_RELAXED);
        if ((w->st = apply_op(w->db, j)) != ENG_OK) break;
        __atomic_store_n(&w->next, j + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void wait_ops(writer *w, uint64_t n)
{
    while (__atomic_load_n(&w->next, __ATOMIC_ACQUIRE) < n && w->st == ENG_OK)
        ;
}

/* Counts, in dir, the table files and those with more than one name. */
static void count_tables(const char *dir, int *tables, int *linked)
{
    *tables = *linked = 0;
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".sst")) continue;
        char p[512];
        struct stat sb;
        snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
        CHECK(stat(p, &sb) == 0);
        (*tables)++;
        *linked += sb.st_nlink > 1;
    }
    closedir(d);
}

static int exists(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0;
}

TEST(CheckpointUnderConcurrentWritesHoldsExactlyItsSequence)
{
    char live[300], ck[300];
    snprintf(live, sizeof(live), "%s/live", test_tmpdir());
    eng_options o = small_opts();
    o.write_buffer_size = 64 << 10; /* room in the log: the writer is rarely stalled */
    o.target_file_size = 64 << 10;
    o.max_bytes_level_base = 256 << 10;
    eng_db *db = open_with(live, o);
    writer w = {db, 1, 0, ENG_OK};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, writer_main, &w) == 0);
    uint64_t seqs[6];
    for (int i = 0; i < 6; i++) {
        wait_ops(&w, 1500u * (unsigned)(i + 1)); /* flushes and compactions run */
        snprintf(ck, sizeof(ck), "%s/ck%d", test_tmpdir(), i);
        eng_status s = eng_checkpoint(db, ck, NULL, NULL, &seqs[i]);
        CHECK_MSG(s == ENG_OK, "checkpoint: %s %s", eng_status_str(s), eng_last_error());
    }
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    CHECK(w.st == ENG_OK);
    uint64_t total = w.next - 1;
    for (int i = 0; i < 6; i++) {
        CHECK_MSG(seqs[i] >= 1500u * (unsigned)(i + 1) && seqs[i] <= total, "sequence %llu",
                  (unsigned long long)seqs[i]);
        snprintf(ck, sizeof(ck), "%s/ck%d", test_tmpdir(), i);
        int tables, linked;
        count_tables(ck, &tables, &linked);
        CHECK_MSG(tables > 0, "no tables in %s", ck); /* linked: the next test's */
        eng_db *c = open_at(ck);
        check_state(c, seqs[i]);
        CHECK(eng_close(c) == ENG_OK);
    }
    check_state(db, total);
    CHECK(eng_close(db) == ENG_OK);
}

TEST(LiveCompactionAfterCheckpointLeavesTheCheckpointWhole)
{
    char live[300], ck[300];
    snprintf(live, sizeof(live), "%s/live", test_tmpdir());
    snprintf(ck, sizeof(ck), "%s/ck", test_tmpdir());
    eng_db *db = open_still(live); /* the real env: unlink must drop a name */
    for (uint64_t j = 1; j <= 2000; j++)
        CHECK(apply_op(db, j) == ENG_OK);
    CHECK(eng_flush(db) == ENG_OK);
    for (uint64_t j = 2001; j <= 4000; j++)
        CHECK(apply_op(db, j) == ENG_OK);
    CHECK(eng_flush(db) == ENG_OK);         /* two tables in level 0 */
    for (uint64_t j = 4001; j <= 4120; j++) /* in the log only */
        CHECK(apply_op(db, j) == ENG_OK);
    uint64_t seq;
    CHECK(eng_checkpoint(db, ck, NULL, NULL, &seq) == ENG_OK);
    CHECK_EQ_INT(seq, 4120);
    int tables, linked;
    count_tables(ck, &tables, &linked);
    CHECK_MSG(tables > 0 && linked == tables, "%d tables, %d linked", tables, linked);
    /* The live db rewrites everything: every table the checkpoint links is
     * deleted by the live db. */
    for (uint64_t j = 4121; j <= 8000; j++)
        CHECK(apply_op(db, j) == ENG_OK);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    count_tables(ck, &tables, &linked);
    CHECK_MSG(linked == 0, "%d of %d tables still shared after the live compaction", linked,
              tables);
    eng_db *c = open_at(ck);
    check_state(c, 4120);
    /* The checkpoint written to and compacted: the live db is unchanged. */
    for (uint64_t j = 4101; j <= 4200; j++)
        CHECK(apply_op(c, j * 7) == ENG_OK);
    CHECK(eng_compact_range(c, NULL, 0, NULL, 0) == ENG_OK);
    CHECK(eng_close(c) == ENG_OK);
    check_state(db, 8000);
    CHECK(eng_close(db) == ENG_OK);
    db = open_still(live);
    check_state(db, 8000);
    CHECK(eng_close(db) == ENG_OK);
    eng_check_report r;
    CHECK(eng_check_dir(live, NULL, NULL, &r) == ENG_OK);
    CHECK_EQ_INT(r.problems, 0);
}

TEST(CheckpointCopiesATableWhereLinkFailsAcrossFileSystems)
{
    char live[300], ck[300];
    snprintf(live, sizeof(live), "%s/live", test_tmpdir());
    snprintf(ck, sizeof(ck), "%s/ck", test_tmpdir());
    fault_env_install();
    fault_env_set_fake_sync(1);
    eng_db *db = open_still(live);
    for (uint64_t j = 1; j <= 3000; j++) {
        CHECK(apply_op(db, j) == ENG_OK);
        if (j % 1000 == 0) CHECK(eng_flush(db) == ENG_OK); /* three tables */
    }
    fault_env_only(".sst");
    fault_env_arm(FAULT_ONCE, 1, FAULT_CREATE, EXDEV); /* the first link */
    eng_status s = eng_checkpoint(db, ck, NULL, NULL, NULL);
    fault_env_disarm();
    fault_env_only(NULL);
    CHECK_MSG(s == ENG_OK, "%s %s", eng_status_str(s), eng_last_error());
    CHECK_EQ_INT(fault_env_injected(), 1);
    int tables, linked;
    count_tables(ck, &tables, &linked);
    CHECK_MSG(tables == 3 && linked == 2, "%d tables, %d linked", tables, linked);
    eng_db *c = open_at(ck);
    check_state(c, 3000);
    CHECK(eng_close(c) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);
    fault_env_uninstall();
}

TEST(FaultAtEachCheckpointFileOperationLeavesNoDirOrAWholeOne)
{
    char live[300], ck[300], tmp[310];
    snprintf(live, sizeof(live), "%s/live", test_tmpdir());
    fault_env_install();
    fault_env_set_fake_sync(1);
    eng_db *db = open_still(live); /* no background work to take the faults */
    for (uint64_t j = 1; j <= 3000; j++) {
        CHECK(apply_op(db, j) == ENG_OK);
        if (j % 1500 == 0) CHECK(eng_flush(db) == ENG_OK);
    }
    for (uint64_t j = 3001; j <= 3300; j++) /* some in tables, some only in the log */
        CHECK(apply_op(db, j) == ENG_OK);
    int failed = 0, whole = 0;
    for (uint64_t nth = 1;; nth++) {
        CHECK(nth < 10000);
        snprintf(ck, sizeof(ck), "%s/ck%llu", test_tmpdir(), (unsigned long long)nth);
        snprintf(tmp, sizeof(tmp), "%s.tmp", ck);
        uint64_t before = fault_env_injected();
        fault_env_arm(FAULT_ONCE, nth, FAULT_ALL, EIO);
        eng_status s = eng_checkpoint(db, ck, NULL, NULL, NULL);
        fault_env_disarm();
        int injected = fault_env_injected() != before;
        CHECK_MSG(!exists(tmp), "fault at call %llu left %s", (unsigned long long)nth, tmp);
        if (s != ENG_OK) {
            CHECK_MSG(injected, "checkpoint failed without a fault: %s", eng_last_error());
            CHECK_MSG(!exists(ck), "failed checkpoint at call %llu left %s",
                      (unsigned long long)nth, ck);
            failed++;
        } else {
            eng_db *c = open_at(ck);
            check_state(c, 3300);
            CHECK(eng_close(c) == ENG_OK);
            whole++;
        }
        CHECK(eng_write_status(db) == ENG_OK);
        check_state(db, 3300);
        if (!injected) break; /* past the checkpoint's last file operation */
    }
    CHECK_MSG(failed >= 10 && whole >= 1, "%d checkpoints failed, %d whole", failed, whole);
    CHECK(apply_op(db, 3301) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);
    fault_env_uninstall();
    db = open_still(live);
    check_state(db, 3301);
    CHECK(eng_close(db) == ENG_OK);
}

TEST(CheckpointIntoAnExistingDirectoryIsRefused)
{
    char live[300];
    snprintf(live, sizeof(live), "%s/live", test_tmpdir());
    eng_db *db = open_at(live);
    CHECK(apply_op(db, 1) == ENG_OK);
    CHECK(eng_checkpoint(db, test_tmpdir(), NULL, NULL, NULL) == ENG_INVALID);
    CHECK(eng_close(db) == ENG_OK);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
