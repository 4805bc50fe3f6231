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
 *    ENG_CORRUPTION.
 */
#include "engine/engine.h"
#include "test.h"
#include "eng_db_util.h"

#include <stdio.h>
#include <string.h>

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

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
