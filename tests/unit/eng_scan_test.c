/*
 * eng_scan_test.c -- what scans cost and survive:
 *  - after a range deletion over everything (FLUSHALL), a scan, a seek and
 *    a backward scan look at a handful of entries, not every deleted key,
 *    whether the deleted keys sit in tables, in an immutable memtable or in
 *    the memtable the deletion went to; writes after it are seen, and a
 *    snapshot from before it still sees everything (merger.h, G2);
 *  - a scan that meets a damaged data block, told to, steps over the keys
 *    the block could hold (reporting the file, offset and key range) and
 *    goes on with the rest, never showing an older version of a key the
 *    damaged block might hold; without being told, it stops with
 *    ENG_CORRUPTION;
 *  - a forward run through one table's block stops at every entry another
 *    source (a newer table, the memtable, a range tombstone) puts first,
 *    and shows a snapshot only what it sees (merger.c, G4).
 */
#include "engine/engine.h"
#include "test.h"
#include "eng_db_util.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static eng_db *open_scan_db(eng_options *o)
{
    eng_db *db = NULL;
    eng_status s = eng_open(test_tmpdir(), o, &db);
    CHECK_MSG(s == ENG_OK, "open: %s %s", eng_status_str(s), eng_last_error());
    return db;
}

static void put_range(eng_db *db, int from, int to)
{
    eng_batch *b = eng_batch_new(0);
    char k[32];
    for (int i = from; i < to; i++) {
        snprintf(k, sizeof(k), "k%06d", i);
        eng_batch_put(b, k, strlen(k), "some value of twenty", 20);
        if ((i + 1) % 1000 == 0) {
            CHECK(eng_write(db, b, 0) == ENG_OK);
            eng_batch_clear(b);
        }
    }
    if (eng_batch_count(b)) CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
}

/* Keys from seek_first on (or seek_last backward); *steps the cost. */
static long scan_count(eng_db *db, const eng_snapshot *snap, int backward, uint64_t *steps)
{
    eng_iter *it = eng_iter_new(db, snap, NULL);
    long n = 0;
    if (backward)
        for (eng_iter_seek_last(it); eng_iter_valid(it); eng_iter_prev(it))
            n++;
    else
        for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it))
            n++;
    CHECK(eng_iter_status(it) == ENG_OK);
    *steps = eng_iter_steps(it);
    eng_iter_free(it);
    return n;
}

TEST(ScanAfterDeletingEverythingSkipsTheDeletedRangeInEverySource)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 8 << 20;
    o.l0_compaction_trigger = 100; /* keep the tables as they are */
    o.l0_slowdown_trigger = o.l0_stop_trigger = 100;
    eng_db *db = open_scan_db(&o);
    put_range(db, 0, 40000);
    CHECK(eng_flush(db) == ENG_OK); /* level 0 */
    put_range(db, 40000, 70000);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK); /* level 1 */
    put_range(db, 70000, 100000);                             /* the memtable */
    const eng_snapshot *before = eng_snapshot_new(db);
    del_range(db, "k", "l"); /* everything: as FLUSHALL */
    put(db, "k050000x", "after");
    uint64_t steps;
    CHECK_EQ_INT(scan_count(db, NULL, 0, &steps), 1);
    CHECK_MSG(steps < 100, "a scan after the deletion looked at %llu entries",
              (unsigned long long)steps);
    CHECK_EQ_INT(scan_count(db, NULL, 1, &steps), 1);
    CHECK_MSG(steps < 100, "a backward scan looked at %llu entries", (unsigned long long)steps);
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    eng_iter_seek(it, "k012345", 7);
    CHECK(eng_iter_valid(it));
    size_t kl;
    const char *k = eng_iter_key(it, &kl);
    CHECK_MEM(k, kl, "k050000x");
    eng_iter_next(it);
    CHECK(!eng_iter_valid(it) && eng_iter_status(it) == ENG_OK);
    CHECK_MSG(eng_iter_steps(it) < 100, "a seek looked at %llu entries",
              (unsigned long long)eng_iter_steps(it));
    eng_iter_free(it);
    /* The snapshot from before sees every key, the hard way. */
    CHECK_EQ_INT(scan_count(db, before, 0, &steps), 100000);
    CHECK_EQ_INT(scan_count(db, before, 1, &steps), 100000);
    eng_snapshot_release(db, before);
    CHECK(eng_close(db) == ENG_OK);
    db = open_scan_db(&o); /* and after a restart (all of it in tables) */
    CHECK_EQ_INT(scan_count(db, NULL, 0, &steps), 1);
    CHECK_MSG(steps < 100, "after a restart a scan looked at %llu entries",
              (unsigned long long)steps);
    CHECK(eng_close(db) == ENG_OK);
}

static void flip_at(const char *path, off_t off)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f && fseeko(f, off, SEEK_SET) == 0);
    int c = fgetc(f);
    CHECK(c != EOF && fseeko(f, off, SEEK_SET) == 0);
    fputc(c ^ 0x20, f);
    fclose(f);
}

/* The newest table file of the test directory. */
static void newest_table(char *out, size_t cap)
{
    DIR *d = opendir(test_tmpdir());
    struct dirent *e;
    unsigned long best = 0, n;
    out[0] = 0;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".sst") && sscanf(e->d_name, "%lu", &n) == 1 && n >= best) {
            best = n;
            snprintf(out, cap, "%s/%s", test_tmpdir(), e->d_name);
        }
    closedir(d);
    CHECK(out[0]);
}

/* A scan of every key, stepping over damage; checks each value is the new
 * one and returns the count and, in *first_missing, the first k%05d not seen. */
static long damaged_scan(eng_db *db, int backward, int *first_missing, size_t *ndamaged, char *msg,
                         size_t cap)
{
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    eng_iter_skip_damaged(it);
    long n = 0;
    char seen[2000] = {0};
    if (backward)
        eng_iter_seek_last(it);
    else
        eng_iter_seek_first(it);
    for (; eng_iter_valid(it); backward ? eng_iter_prev(it) : eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        int i;
        CHECK(kl == 6 && sscanf(k, "k%05d", &i) == 1 && i >= 0 && i < 2000);
        CHECK_MSG(vl >= 4 && !memcmp(v, "new-", 4), "k%05d shows an older version", i);
        seen[i] = 1;
        n++;
    }
    CHECK_MSG(eng_iter_status(it) == ENG_OK, "scan stopped: %s", eng_last_error());
    *first_missing = -1;
    for (int i = 0; i < 2000 && *first_missing < 0; i++)
        if (!seen[i]) *first_missing = i;
    *ndamaged = eng_iter_damaged(it, 0, msg, cap);
    eng_iter_free(it);
    return n;
}

TEST(ScanToldToStepsOverADamagedBlockAndNeverShowsAnOlderVersion)
{
    eng_options o;
    eng_options_init(&o);
    o.compression_level = 0;
    o.cache_size = 0;
    o.block_size = 512;
    o.l0_compaction_trigger = 100;
    o.l0_slowdown_trigger = o.l0_stop_trigger = 100;
    eng_db *db = open_scan_db(&o);
    char k[16], v[32];
    for (int round = 0; round < 2; round++) {
        eng_batch *b = eng_batch_new(0);
        for (int i = 0; i < 2000; i++) {
            snprintf(k, sizeof(k), "k%05d", i);
            snprintf(v, sizeof(v), "%s-%05d", round ? "new" : "old", i);
            eng_batch_put(b, k, strlen(k), v, strlen(v));
        }
        CHECK(eng_write(db, b, 0) == ENG_OK);
        eng_batch_free(b);
        CHECK(eng_flush(db) == ENG_OK);
        if (!round) CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK); /* old in L1 */
    }
    CHECK(eng_close(db) == ENG_OK);
    char sst[600];
    newest_table(sst, sizeof(sst)); /* the new values, in level 0 */
    struct stat st;
    CHECK(stat(sst, &st) == 0);
    flip_at(sst, st.st_size / 3); /* inside a data block */
    db = open_scan_db(&o);
    /* Not told to: the scan stops with the error. */
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    long n = 0;
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it))
        n++;
    CHECK(eng_iter_status(it) == ENG_CORRUPTION && n < 2000);
    eng_iter_free(it);
    /* Told to: everything but the damaged block's keys, both ways. */
    int missing, missing_back;
    size_t nd, nd_back;
    char msg[600];
    long fwd = damaged_scan(db, 0, &missing, &nd, msg, sizeof(msg));
    long back = damaged_scan(db, 1, &missing_back, &nd_back, msg, sizeof(msg));
    CHECK_MSG(fwd > 1900 && fwd < 2000 && back == fwd, "forward %ld, backward %ld keys", fwd, back);
    CHECK(nd == 1 && nd_back == 1 && missing == missing_back && missing >= 0);
    CHECK_MSG(strstr(msg, strrchr(sst, '/') + 1) && strstr(msg, "offset"), "report: %s", msg);
    eng_stats es;
    eng_get_stats(db, &es);
    CHECK(es.damaged_blocks_skipped >= 2);
    /* A point read of a key of the damaged block names the file and offset. */
    snprintf(k, sizeof(k), "k%05d", missing);
    char *val;
    size_t vl;
    CHECK(eng_get(db, NULL, k, strlen(k), &val, &vl) == ENG_CORRUPTION);
    CHECK_MSG(strstr(eng_last_error(), ".sst") && strstr(eng_last_error(), "offset"), "get: %s",
              eng_last_error());
    /* A version newer than the damaged table stands. */
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, k, strlen(k), "new-again", 9);
    CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
    int missing2;
    CHECK_EQ_INT(damaged_scan(db, 0, &missing2, &nd, msg, sizeof(msg)), fwd + 1);
    CHECK(missing2 != missing);
    CHECK(eng_close(db) == ENG_OK);
}

/* What key i of ScanRunOfOneBlockStopsWhereAnotherSourceComesFirst holds:
 * NULL when deleted; at the snapshot only the tables' writes count. */
static const char *run_expect(int i, int at_snapshot)
{
    if (!at_snapshot && (i % 13 == 0 || (i >= 500 && i < 600))) return NULL;
    if (!at_snapshot && i % 11 == 0) return "mem";
    return i % 7 == 0 ? "l0" : "l1";
}

static void check_run_scan(eng_db *db, const eng_snapshot *snap, int from)
{
    eng_iter *it = eng_iter_new(db, snap, NULL);
    char k[32];
    snprintf(k, sizeof(k), "k%06d", from);
    int i = from;
    for (eng_iter_seek(it, k, strlen(k)); eng_iter_valid(it); eng_iter_next(it), i++) {
        while (i < 2000 && !run_expect(i, snap != NULL))
            i++;
        size_t kl, vl;
        const char *key = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        snprintf(k, sizeof(k), "k%06d", i);
        const char *want = i < 2000 ? run_expect(i, snap != NULL) : "(end)";
        CHECK_MSG(kl == strlen(k) && !memcmp(key, k, kl) && vl == strlen(want) &&
                      !memcmp(v, want, vl),
                  "at %s (snapshot %d): got %.*s = %.*s, want %s", k, snap != NULL, (int)kl, key,
                  (int)vl, v, want);
    }
    while (i < 2000 && !run_expect(i, snap != NULL))
        i++;
    CHECK_EQ_INT(i, 2000);
    CHECK(eng_iter_status(it) == ENG_OK);
    eng_iter_free(it);
}

/* merger.c G4: a forward step through a table's block runs on without the
 * layers above it, and must still stop at every entry another source puts
 * first: a newer version in a level-0 table, a memtable's value or
 * deletion, the entries under a range tombstone; and at a snapshot it must
 * not show the versions the snapshot cannot see. */
TEST(ScanRunOfOneBlockStopsWhereAnotherSourceComesFirst)
{
    eng_options o;
    eng_options_init(&o);
    o.l0_compaction_trigger = 100; /* keep the tables as they are */
    o.l0_slowdown_trigger = o.l0_stop_trigger = 100;
    o.block_size = 512;        /* runs end at block ends, */
    o.target_file_size = 8192; /* and at file ends inside level 1 */
    eng_db *db = open_scan_db(&o);
    char k[32];
    for (int i = 0; i < 2000; i++) {
        snprintf(k, sizeof(k), "k%06d", i);
        put(db, k, "l1");
    }
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK); /* level 1 */
    for (int i = 0; i < 2000; i += 7) {
        snprintf(k, sizeof(k), "k%06d", i);
        put(db, k, "l0");
    }
    CHECK(eng_flush(db) == ENG_OK); /* level 0 */
    const eng_snapshot *snap = eng_snapshot_new(db);
    for (int i = 0; i < 2000; i += 11) {
        snprintf(k, sizeof(k), "k%06d", i);
        put(db, k, "mem");
    }
    for (int i = 0; i < 2000; i += 13) {
        snprintf(k, sizeof(k), "k%06d", i);
        write_op(db, 1, k, NULL);
    }
    del_range(db, "k000500", "k000600");
    for (int from = 0; from < 2000; from += 499) {
        check_run_scan(db, NULL, from);
        check_run_scan(db, snap, from);
    }
    eng_snapshot_release(db, snap);
    CHECK(eng_close(db) == ENG_OK);
}

/* eng_iter_next_entry is eng_iter_next, eng_iter_valid, eng_iter_key and
 * eng_iter_value: also right after a backward step, whose key and value
 * are the iterator's copies (db_iter.c I1), and at the end. */
TEST(NextEntryGivesWhatNextKeyAndValueGive)
{
    eng_options o;
    eng_options_init(&o);
    eng_db *db = open_scan_db(&o);
    char k[32], v[32];
    for (int i = 0; i < 300; i++) {
        snprintf(k, sizeof(k), "k%06d", i);
        snprintf(v, sizeof(v), "value %d", i);
        put(db, k, v);
        if (i == 150) CHECK(eng_flush(db) == ENG_OK);
    }
    eng_iter *a = eng_iter_new(db, NULL, NULL), *b = eng_iter_new(db, NULL, NULL);
    eng_iter_seek(a, "k000100", 7);
    eng_iter_seek(b, "k000100", 7);
    int n = 0;
    for (int ok = eng_iter_valid(a); ok; n++) {
        if (n == 20) { /* a backward step, then forward again */
            eng_iter_prev(a);
            eng_iter_prev(b);
        }
        const char *ka, *va, *kb, *vb;
        size_t kal, val, kbl, vbl;
        ok = eng_iter_next_entry(a, &ka, &kal, &va, &val);
        eng_iter_next(b);
        CHECK_EQ_INT(ok, eng_iter_valid(b));
        if (!ok) break;
        kb = eng_iter_key(b, &kbl);
        vb = eng_iter_value(b, &vbl);
        CHECK(kal == kbl && !memcmp(ka, kb, kal) && val == vbl && !memcmp(va, vb, val));
    }
    CHECK_EQ_INT(n, 200); /* k000101 .. k000299, and k000120 twice */
    CHECK(eng_iter_status(a) == ENG_OK);
    eng_iter_free(a);
    eng_iter_free(b);
    CHECK(eng_close(db) == ENG_OK);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
