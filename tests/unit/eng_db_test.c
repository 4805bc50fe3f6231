/*
 * eng_db_test.c -- the engine through its public header: puts, gets,
 * deletes, batches, snapshots, iterators, reopen, flush, compaction, range
 * deletes, the compaction filter and statistics.
 */
#include "engine/engine.h"
#include "engine/memtable.h"
#include "engine/merger.h"
#include "engine/rangedel.h"
#include "engine/version.h"
#include "engine/version_edit.h"
#include "test.h"
#include "eng_db_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static eng_db *open_db(eng_options *o)
{
    eng_db *db = NULL;
    eng_status s = eng_open(test_tmpdir(), o, &db);
    CHECK_MSG(s == ENG_OK, "open: %s %s", eng_status_str(s), eng_last_error());
    return db;
}

/* Concatenates "k=v," for every key, forward, into out. */
static void scan(eng_db *db, const eng_snapshot *snap, eng_batch *b, char *out, size_t cap)
{
    eng_iter *it = eng_iter_new(db, snap, b);
    size_t n = 0;
    out[0] = 0;
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        n += (size_t)snprintf(out + n, cap - n, "%.*s=%.*s,", (int)kl, k, (int)vl, v);
    }
    CHECK(eng_iter_status(it) == ENG_OK);
    eng_iter_free(it);
}

static void scan_reverse(eng_db *db, char *out, size_t cap)
{
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    size_t n = 0;
    out[0] = 0;
    for (eng_iter_seek_last(it); eng_iter_valid(it); eng_iter_prev(it)) {
        size_t kl;
        const char *k = eng_iter_key(it, &kl);
        n += (size_t)snprintf(out + n, cap - n, "%.*s,", (int)kl, k);
    }
    CHECK(eng_iter_status(it) == ENG_OK);
    eng_iter_free(it);
}

static eng_options small_opts(void)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 16 << 10;
    o.target_file_size = 32 << 10;
    o.max_bytes_level_base = 64 << 10;
    o.block_size = 1024;
    o.log_fn = NULL;
    return o;
}

TEST(PutGetDeleteRoundTrip)
{
    eng_db *db = open_db(NULL);
    CHECK_GET(db, "a", NULL);
    put(db, "a", "1");
    put(db, "b", "2");
    CHECK_GET(db, "a", "1");
    put(db, "a", "3");
    CHECK_GET(db, "a", "3");
    del(db, "a");
    CHECK_GET(db, "a", NULL);
    CHECK_GET(db, "b", "2");
    put(db, "", "empty-key");
    CHECK_GET(db, "", "empty-key");
    CHECK(eng_close(db) == ENG_OK);
}

TEST(BatchAppliesAllOpsAndAdvancesSequence)
{
    eng_db *db = open_db(NULL);
    put(db, "x", "old");
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, "p", 1, "1", 1);
    eng_batch_put(b, "q", 1, "2", 1);
    eng_batch_delete(b, "x", 1);
    eng_batch_put(b, "p", 1, "3", 1); /* later op in the batch wins */
    CHECK(eng_write(db, b, ENG_WRITE_SYNC) == ENG_OK);
    eng_batch_free(b);
    CHECK_GET(db, "p", "3");
    CHECK_GET(db, "q", "2");
    CHECK_GET(db, "x", NULL);
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK_EQ_INT(st.last_sequence, 5);
    eng_close(db);
}

TEST(SnapshotSeesValuesAsOfItsCreation)
{
    eng_db *db = open_db(NULL);
    put(db, "k", "v1");
    const eng_snapshot *s1 = eng_snapshot_new(db);
    put(db, "k", "v2");
    del(db, "k2");
    put(db, "k3", "new");
    CHECK(!strcmp(get_at(db, s1, "k"), "v1"));
    CHECK(get_at(db, s1, "k3") == NULL);
    CHECK_GET(db, "k", "v2");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK(!strcmp(get_at(db, s1, "k"), "v1")); /* compaction kept what s1 needs */
    eng_snapshot_release(db, s1);
    eng_close(db);
}

/* inplace_updates replaces a key's newest memtable version only while no
 * snapshot or iterator could read the older one (M10): each must still see
 * its own version, and the latest read, the log replay and the flushed
 * table the newest. */
TEST(InplaceUpdatesKeepWhatSnapshotsAndIteratorsRead)
{
    eng_options o;
    eng_options_init(&o);
    o.inplace_updates = 1;
    eng_db *db = open_db(&o);
    put(db, "k", "v1");
    put(db, "k", "v2"); /* replaces v1 */
    const eng_snapshot *s = eng_snapshot_new(db);
    put(db, "k", "v3");
    put(db, "j", "j1");
    CHECK_GET_AT(db, s, "k", "v2");
    CHECK_GET_AT(db, s, "j", NULL);
    eng_snapshot_release(db, s);
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    put(db, "k", "v4");
    put(db, "j", "j2");
    eng_iter_seek(it, "k", 1);
    CHECK(eng_iter_valid(it));
    size_t vl;
    const char *v = eng_iter_value(it, &vl);
    CHECK(vl == 2 && !memcmp(v, "v3", 2));
    eng_iter_free(it);
    for (int i = 5; i < 200; i++) { /* nobody reads below: replaced each time */
        char val[16];
        snprintf(val, sizeof(val), "v%d", i);
        put(db, "k", val);
    }
    del(db, "j");
    CHECK_GET(db, "k", "v199");
    CHECK_GET(db, "j", NULL);
    char out[256];
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK(!strcmp(out, "k=v199,"));
    CHECK(eng_close(db) == ENG_OK); /* the log replays every version */
    db = open_db(&o);
    CHECK_GET(db, "k", "v199");
    CHECK_GET(db, "j", NULL);
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET(db, "k", "v199");
    CHECK(eng_close(db) == ENG_OK);
}

/* eng_hint_scan_only_prefix keeps keys out of the memtable's hash index:
 * point reads of them (newest, older snapshot, deleted, absent) must still
 * be right, for versions written before and after the hint. */
TEST(ScanOnlyPrefixKeysStillAnswerPointReads)
{
    eng_db *db = open_db(NULL);
    put(db, "xEold", "before");
    CHECK_EQ_INT(eng_hint_scan_only_prefix(db, "xE", 2), 1);
    CHECK_EQ_INT(eng_hint_scan_only_prefix(db, "0123456789abcdefX", 17), 0); /* too long */
    const eng_snapshot *s1 = eng_snapshot_new(db);
    put(db, "xEold", "after");
    put(db, "xEnew", "v1");
    del(db, "xEgone");
    put(db, "plain", "p");
    CHECK_GET(db, "xEold", "after");
    CHECK(!strcmp(get_at(db, s1, "xEold"), "before"));
    CHECK_GET(db, "xEnew", "v1");
    CHECK_GET(db, "xEgone", NULL);
    CHECK_GET(db, "xEmissing", NULL);
    CHECK_GET(db, "plain", "p");
    del(db, "xEnew");
    CHECK_GET(db, "xEnew", NULL);
    CHECK(eng_flush(db) == ENG_OK); /* and from the tables, past a new memtable */
    put(db, "xEold", "third");
    CHECK_GET(db, "xEold", "third");
    CHECK(!strcmp(get_at(db, s1, "xEold"), "before"));
    eng_snapshot_release(db, s1);
    eng_close(db);
}

TEST(IteratorSkipsDeletesBothDirections)
{
    eng_db *db = open_db(NULL);
    put(db, "a", "1");
    put(db, "b", "2");
    put(db, "c", "3");
    put(db, "d", "4");
    del(db, "b");
    put(db, "c", "33");
    char out[512];
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "a=1,c=33,d=4,"), "%s", out);
    scan_reverse(db, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "d,c,a,"), "%s", out);

    eng_iter *it = eng_iter_new(db, NULL, NULL);
    size_t kl;
    eng_iter_seek(it, "b", 1);
    CHECK(eng_iter_valid(it) && !memcmp(eng_iter_key(it, &kl), "c", 1));
    eng_iter_prev(it); /* direction switch */
    CHECK(eng_iter_valid(it) && !memcmp(eng_iter_key(it, &kl), "a", 1));
    eng_iter_next(it);
    CHECK(eng_iter_valid(it) && !memcmp(eng_iter_key(it, &kl), "c", 1));
    eng_iter_seek_prev(it, "b", 1);
    CHECK(eng_iter_valid(it) && !memcmp(eng_iter_key(it, &kl), "a", 1));
    eng_iter_seek_prev(it, "zz", 2);
    CHECK(eng_iter_valid(it) && !memcmp(eng_iter_key(it, &kl), "d", 1));
    eng_iter_seek(it, "e", 1);
    CHECK(!eng_iter_valid(it));
    eng_iter_seek_prev(it, "0", 1);
    CHECK(!eng_iter_valid(it));
    eng_iter_free(it);
    eng_close(db);
}

TEST(IteratorUnaffectedByLaterWritesFlushAndCompaction)
{
    eng_db *db = open_db(NULL);
    put(db, "a", "1");
    put(db, "b", "2");
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    put(db, "a", "changed");
    put(db, "c", "3");
    del(db, "b");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    char out[256];
    size_t n = 0;
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        n += (size_t)snprintf(out + n, sizeof(out) - n, "%.*s=%.*s,", (int)kl, k, (int)vl, v);
    }
    CHECK_MSG(!strcmp(out, "a=1,b=2,"), "%s", out);
    eng_iter_free(it);
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "a=changed,c=3,"), "%s", out);
    eng_close(db);
}

TEST(ReopenReplaysTheLog)
{
    eng_db *db = open_db(NULL);
    put(db, "a", "1");
    put(db, "b", "2");
    del(db, "a");
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, "deferred", 8, "yes", 3);
    CHECK(eng_write(db, b, ENG_WRITE_DEFER) == ENG_OK);
    eng_batch_free(b);
    CHECK(eng_commit(db, 1) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);
    db = open_db(NULL);
    CHECK_GET(db, "a", NULL);
    CHECK_GET(db, "b", "2");
    CHECK_GET(db, "deferred", "yes");
    put(db, "c", "3"); /* sequence numbers continue after the replayed ones */
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK_EQ_INT(st.last_sequence, 5);
    eng_close(db);
    db = open_db(NULL);
    CHECK_GET(db, "c", "3");
    CHECK_GET(db, "b", "2");
    eng_close(db);
}

TEST(FlushedTablesSurviveReopen)
{
    eng_db *db = open_db(NULL);
    put(db, "a", "1");
    put(db, "b", "2");
    CHECK(eng_flush(db) == ENG_OK);
    del(db, "a");
    put(db, "c", "3");
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK_EQ_INT(st.level_files[0], 1);
    CHECK_EQ_INT(st.flushes, 1);
    CHECK(eng_close(db) == ENG_OK);
    db = open_db(NULL);
    CHECK_GET(db, "a", NULL);
    CHECK_GET(db, "b", "2");
    CHECK_GET(db, "c", "3");
    char out[256];
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "b=2,c=3,"), "%s", out);
    eng_close(db);
}

TEST(FullCompactionDropsOverwrittenAndDeletedVersions)
{
    eng_options o = small_opts();
    eng_db *db = open_db(&o);
    char k[32], v[200];
    memset(v, 'x', sizeof(v) - 1);
    v[sizeof(v) - 1] = 0;
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 500; i++) {
            snprintf(k, sizeof(k), "key%05d", i);
            v[0] = (char)('a' + round);
            put(db, k, v);
        }
    for (int i = 0; i < 500; i += 2) {
        snprintf(k, sizeof(k), "key%05d", i);
        del(db, k);
    }
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    eng_stats st;
    eng_get_stats(db, &st);
    uint64_t live = 0, files_above = 0;
    int deepest = 0;
    for (int l = 0; l < ENG_MAX_LEVELS; l++) {
        live += st.level_bytes[l];
        if (st.level_files[l]) deepest = l;
    }
    for (int l = 0; l < deepest; l++)
        files_above += st.level_files[l];
    CHECK_EQ_INT(files_above, 0);
    /* 250 live keys of ~210 bytes; four versions of 500 would be ~420 KB. */
    CHECK_MSG(live < 120 << 10, "live bytes %llu", (unsigned long long)live);
    CHECK(st.compactions >= 1);
    CHECK(st.bytes_written_compaction > 0);
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof(k), "key%05d", i);
        const char *g = get(db, k);
        if (i % 2 == 0)
            CHECK_MSG(g == NULL, "%s resurfaced", k);
        else
            CHECK_MSG(g && g[0] == 'd', "%s: %.200s", k, g ? g : "(absent)");
    }
    eng_close(db);
}

TEST(RangeDeleteHidesKeysInMemtableAndTables)
{
    eng_db *db = open_db(NULL);
    put(db, "a", "1");
    put(db, "b", "2");
    put(db, "c", "3");
    CHECK(eng_flush(db) == ENG_OK);
    put(db, "bb", "22");
    put(db, "d", "4");
    del_range(db, "b", "d"); /* [b, d) */
    put(db, "c", "new");     /* after the tombstone: visible */
    CHECK_GET(db, "a", "1");
    CHECK_GET(db, "b", NULL);
    CHECK_GET(db, "bb", NULL);
    CHECK_GET(db, "c", "new");
    CHECK_GET(db, "d", "4");
    char out[256];
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "a=1,c=new,d=4,"), "%s", out);
    scan_reverse(db, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "d,c,a,"), "%s", out);
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET(db, "bb", NULL);
    CHECK(eng_close(db) == ENG_OK);
    db = open_db(NULL);
    CHECK_GET(db, "b", NULL);
    CHECK_GET(db, "c", "new");
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "a=1,c=new,d=4,"), "%s", out);
    eng_close(db);
}

TEST(RangeDeleteRespectsSnapshotsThroughCompaction)
{
    eng_db *db = open_db(NULL);
    put(db, "k1", "1");
    put(db, "k2", "2");
    CHECK(eng_flush(db) == ENG_OK);
    const eng_snapshot *s = eng_snapshot_new(db);
    del_range(db, "k", "l");
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK_GET(db, "k1", NULL);
    CHECK(!strcmp(get_at(db, s, "k2"), "2"));
    char out[256];
    scan(db, s, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "k1=1,k2=2,"), "%s", out);
    eng_snapshot_release(db, s);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK_GET(db, "k2", NULL);
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, ""), "%s", out);
    eng_stats st;
    eng_get_stats(db, &st);
    uint64_t bytes = 0;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        bytes += st.level_bytes[l];
    CHECK_MSG(bytes == 0, "%llu bytes left after everything was deleted",
              (unsigned long long)bytes);
    eng_close(db);
}

static int drop_expired(void *ctx, const char *k, size_t kl, const char *v, size_t vl)
{
    (*(int *)ctx)++;
    return vl >= 7 && !memcmp(v, "expired", 7);
}

TEST(CompactionFilterDropsNewestVersionWithoutResurrectingOlder)
{
    int calls = 0;
    eng_options o;
    eng_options_init(&o);
    o.compaction_filter = drop_expired;
    o.compaction_filter_ctx = &calls;
    eng_db *db = open_db(&o);
    put(db, "a", "old-live");
    put(db, "b", "keep");
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK); /* "a" old version at the bottom */
    put(db, "a", "expired");
    CHECK(eng_flush(db) == ENG_OK);
    /* A partial compaction of L0 into L1 would leave the old version below. */
    CHECK(eng_compact_range(db, "a", 1, "b", 1) == ENG_OK);
    CHECK(calls > 0);
    CHECK_GET(db, "a", NULL);
    CHECK_GET(db, "b", "keep");
    const eng_snapshot *s = eng_snapshot_new(db);
    put(db, "c", "expired");
    CHECK(eng_flush(db) == ENG_OK);
    eng_snapshot_release(db, s);
    s = eng_snapshot_new(db); /* sees c=expired: the filter must not touch it */
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK(!strcmp(get_at(db, s, "c"), "expired"));
    eng_snapshot_release(db, s);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK_GET(db, "c", NULL);
    /* A snapshot that sees an older version keeps it, but the filtered
     * newest version must still hide it from the latest view. */
    put(db, "d", "old-live");
    s = eng_snapshot_new(db);
    put(db, "d", "expired");
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK_GET(db, "d", NULL);
    CHECK(!strcmp(get_at(db, s, "d"), "old-live"));
    eng_snapshot_release(db, s);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK_GET(db, "d", NULL);
    eng_close(db);
}

TEST(IndexedBatchShadowsDbForGetAndIterator)
{
    eng_db *db = open_db(NULL);
    put(db, "a", "1");
    put(db, "b", "2");
    put(db, "c", "3");
    eng_batch *b = eng_batch_new(1);
    eng_batch_put(b, "a", 1, "pending", 7);
    eng_batch_delete(b, "b", 1);
    eng_batch_put(b, "d", 1, "4", 1);
    char *v;
    size_t vl;
    CHECK(eng_get_batch(db, NULL, b, "a", 1, &v, &vl) == ENG_OK);
    CHECK(vl == 7 && !memcmp(v, "pending", 7));
    eng_free(v);
    CHECK(eng_get_batch(db, NULL, b, "b", 1, &v, &vl) == ENG_NOTFOUND);
    CHECK(eng_get_batch(db, NULL, b, "c", 1, &v, &vl) == ENG_OK);
    eng_free(v);
    char out[256];
    scan(db, NULL, b, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "a=pending,c=3,d=4,"), "%s", out);
    eng_batch_delete_range(b, "c", 1, "e", 1);
    CHECK(eng_get_batch(db, NULL, b, "c", 1, &v, &vl) == ENG_NOTFOUND);
    CHECK(eng_get_batch(db, NULL, b, "d", 1, &v, &vl) == ENG_NOTFOUND);
    scan(db, NULL, b, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "a=pending,"), "%s", out);
    CHECK_GET(db, "b", "2"); /* nothing committed yet */
    CHECK(eng_write(db, b, 0) == ENG_OK);
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, "a=pending,"), "%s", out);
    eng_batch_free(b);
    eng_close(db);
}

/* A pipeline's batch: reads through the point index between appends, so
 * eng_write inserts only the newest op on each key (write_batch.c, B5).
 * Readers after it, a snapshot taken before it, an iterator, and recovery
 * from the log (which replays every op) all see the same newest values. */
TEST(BatchReadBetweenAppendsWritesNewestVersionsAndRecoversThem)
{
    eng_db *db = open_db(NULL);
    put(db, "n", "0");
    put(db, "gone", "x");
    const eng_snapshot *before = eng_snapshot_new(db);
    eng_batch *b = eng_batch_new(1);
    char *v;
    size_t vl;
    char val[16];                   /* room for any int: -Wformat-truncation */
    for (int i = 1; i <= 20; i++) { /* 20 commands: a key each, one counter */
        char k[16];
        snprintf(k, sizeof(k), "k%02d", i);
        CHECK(eng_get_batch(db, NULL, b, k, strlen(k), &v, &vl) == ENG_NOTFOUND);
        CHECK(eng_get_batch(db, NULL, b, "n", 1, &v, &vl) == ENG_OK);
        char want[8];
        snprintf(want, sizeof(want), "%d", i - 1); /* v is not NUL-terminated */
        CHECK(vl == strlen(want) && !memcmp(v, want, vl));
        eng_free(v);
        eng_batch_put(b, k, strlen(k), "v", 1);
        snprintf(val, sizeof(val), "%d", i);
        eng_batch_put(b, "n", 1, val, strlen(val));
    }
    eng_batch_delete(b, "gone", 4);
    eng_batch_put(b, "n", 1, "last", 4); /* after the last read: caught up at the write */
    CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK_GET(db, "n", "last");
    CHECK_GET(db, "gone", NULL);
    CHECK_GET(db, "k07", "v");
    CHECK_GET_AT(db, before, "n", "0");
    CHECK_GET_AT(db, before, "gone", "x");
    eng_snapshot_release(db, before);
    char out[512], want[512] = "";
    for (int i = 1; i <= 20; i++)
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "k%02d=v,", i);
    strcat(want, "n=last,");
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, want), "%s", out);
    eng_close(db);
    db = open_db(NULL); /* replays the log record: every op */
    scan(db, NULL, NULL, out, sizeof(out));
    CHECK_MSG(!strcmp(out, want), "after reopen: %s", out);
    eng_close(db);
}

TEST(SecondOpenOfSameDirIsBusy)
{
    eng_db *db = open_db(NULL), *db2 = NULL;
    CHECK(eng_open(test_tmpdir(), NULL, &db2) == ENG_BUSY);
    CHECK(db2 == NULL);
    eng_close(db);
}

TEST(OpenWithoutCreateIfMissingFailsOnEmptyDir)
{
    eng_options o;
    eng_options_init(&o);
    o.create_if_missing = 0;
    eng_db *db = NULL;
    CHECK(eng_open(test_tmpdir(), &o, &db) != ENG_OK);
    CHECK(db == NULL);
}

TEST(ManyWritesFlushAndCompactInBackground)
{
    eng_options o = small_opts();
    eng_db *db = open_db(&o);
    char k[32], v[128];
    for (int i = 0; i < 6000; i++) {
        snprintf(k, sizeof(k), "k%07d", (i * 7919) % 6000);
        snprintf(v, sizeof(v), "value-%d-%0100d", i, i);
        put(db, k, v);
    }
    CHECK(eng_flush(db) == ENG_OK);
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK(st.flushes > 5);
    CHECK(st.bytes_written_flush > 0);
    CHECK(st.bytes_written_user > 6000 * 100);
    CHECK(eng_close(db) == ENG_OK);
    db = open_db(&o);
    for (int i = 0; i < 6000; i++) {
        snprintf(k, sizeof(k), "k%07d", (i * 7919) % 6000);
        snprintf(v, sizeof(v), "value-%d-%0100d", i, i);
        CHECK_GET(db, k, v);
    }
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    int n = 0;
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it))
        n++;
    CHECK(eng_iter_status(it) == ENG_OK);
    eng_iter_free(it);
    CHECK_EQ_INT(n, 6000);
    eng_get_stats(db, &st);
    CHECK(eng_disk_usage(db) > 0);
    eng_close(db);
}

TEST(WritesStallWhenLevel0IsBehindAndStillComplete)
{
    eng_options o = small_opts();
    o.l0_compaction_trigger = 2;
    o.l0_slowdown_trigger = 2;
    o.l0_stop_trigger = 3;
    eng_db *db = open_db(&o);
    char k[32], v[256];
    memset(v, 'v', 200);
    v[200] = 0;
    for (int i = 0; i < 1500; i++) {
        snprintf(k, sizeof(k), "s%06d", (i * 37) % 1500);
        put(db, k, v);
    }
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK_MSG(st.stall_slowdowns > 0, "no slowdown counted");
    CHECK(st.stall_micros > 0);
    CHECK(st.compactions > 0);
    for (int i = 0; i < 1500; i++) {
        snprintf(k, sizeof(k), "s%06d", i);
        CHECK_GET(db, k, v);
    }
    eng_close(db);
}

TEST(EverysecModeSyncsTheLogInTheBackground)
{
    eng_options o;
    eng_options_init(&o);
    o.sync_mode = ENG_SYNC_EVERYSEC;
    eng_db *db = open_db(&o);
    put(db, "a", "1");
    /* The sync thread wakes once a second; a loaded machine may delay it,
     * so wait for the sync (up to 20 s) rather than for one period. */
    struct timespec ts = {1, 300000000}, tick = {0, 10000000};
    eng_stats st;
    for (int i = 0; i < 2000; i++) {
        eng_get_stats(db, &st);
        if (st.log_syncs >= 1) break;
        nanosleep(&tick, NULL);
    }
    CHECK_MSG(st.log_syncs >= 1, "log_syncs %llu", (unsigned long long)st.log_syncs);
    eng_set_sync_mode(db, ENG_SYNC_NO);
    uint64_t before = st.log_syncs;
    put(db, "b", "2");
    nanosleep(&ts, NULL);
    eng_get_stats(db, &st);
    CHECK_EQ_INT(st.log_syncs, before);
    eng_close(db);
}

typedef struct race {
    eng_db *db;
    int stop; /* atomic */
    int errors;
    char why[128];
} race;

/* Values are "<key>:<generation>": a reader can tell a torn or foreign value. */
static void *race_reader(void *arg)
{
    race *r = arg;
    char k[32];
    unsigned x = 7;
    while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
        x = x * 1103515245u + 12345u;
        snprintf(k, sizeof(k), "r%05u", (x >> 8) % 2000);
        char *v;
        size_t vl;
        eng_status s = eng_get(r->db, NULL, k, strlen(k), &v, &vl);
        if (s == ENG_OK) {
            if (vl < 7 || memcmp(v, k, 6) != 0 || v[6] != ':') {
                r->errors++;
                snprintf(r->why, sizeof(r->why), "get %s -> %.*s", k, (int)vl, v);
            }
            eng_free(v);
        } else if (s != ENG_NOTFOUND) {
            r->errors++;
            snprintf(r->why, sizeof(r->why), "get %s: %s", k, eng_status_str(s));
        }
        eng_iter *it = eng_iter_new(r->db, NULL, NULL);
        char prev[32] = "";
        int n = 0;
        for (eng_iter_seek(it, k, strlen(k)); eng_iter_valid(it) && n < 50;
             eng_iter_next(it), n++) {
            size_t kl;
            const char *ik = eng_iter_key(it, &kl);
            if (kl >= sizeof(prev) || strncmp(ik, prev, kl) <= 0) {
                r->errors++;
                snprintf(r->why, sizeof(r->why), "iterator out of order at %.*s", (int)kl, ik);
            }
            memcpy(prev, ik, kl);
            prev[kl] = 0;
        }
        if (eng_iter_status(it) != ENG_OK) r->errors++;
        eng_iter_free(it);
    }
    return NULL;
}

TEST(ConcurrentReadersSeeConsistentDataDuringFlushesAndCompactions)
{
    eng_options o = small_opts();
    eng_db *db = open_db(&o);
    race r = {db, 0, 0, ""};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, race_reader, &r);
    char k[32], v[128];
    for (int gen = 0; gen < 4; gen++) {
        for (int i = 0; i < 2000; i++) {
            snprintf(k, sizeof(k), "r%05d", (i * 613) % 2000);
            snprintf(v, sizeof(v), "%s:%d:%080d", k, gen, i);
            put(db, k, v);
            if (i % 500 == 0) del(db, "r00001");
            if (i % 50 == 0) del_range(db, "r00100", "r00120"); /* read without locks */
        }
        if (gen == 2) CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    }
    __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECK_MSG(r.errors == 0, "%d reader errors: %s", r.errors, r.why);
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK(st.flushes > 3 && st.compactions > 0);
    eng_close(db);
}

/* ---- Internal pieces: edits, tombstone sets (the merger: eng_merger_test.c) */

static file_meta *meta(uint64_t number, const char *lo, const char *hi)
{
    file_meta *f = file_meta_new(NULL);
    f->number = number;
    f->file_size = 1000 + number;
    f->entries = 7;
    f->range_dels = 1;
    f->smallest_seq = 3;
    f->largest_seq = 9;
    ikey_append(&f->smallest, slice_make(lo, strlen(lo)), 9, ENG_TYPE_VALUE);
    ikey_append(&f->largest, slice_make(hi, strlen(hi)), 3, ENG_TYPE_DELETION);
    return f;
}

TEST(VersionEditRoundTripsThroughItsEncoding)
{
    version_edit e, d;
    edit_init(&e);
    edit_init(&d);
    e.has_log_number = e.has_next_file = e.has_last_seq = 1;
    e.log_number = 12;
    e.next_file = 99;
    e.last_seq = 123456789;
    edit_delete_file(&e, 3, 17);
    edit_add_file(&e, 0, meta(21, "apple", "pear"));
    edit_add_file(&e, 6, meta(22, "", "zz"));
    buf b = {0};
    edit_encode(&e, &b);
    CHECK(edit_decode(slice_make(b.data, b.len), &d) == ENG_OK);
    CHECK(d.has_log_number && d.log_number == 12 && d.next_file == 99 && d.last_seq == 123456789);
    CHECK(d.ndeleted == 1 && d.deleted[0].level == 3 && d.deleted[0].number == 17);
    CHECK_EQ_INT(d.nadded, 2);
    for (int i = 0; i < 2; i++) {
        file_meta *x = e.added[i].f, *y = d.added[i].f;
        CHECK(d.added[i].level == e.added[i].level && x->number == y->number);
        CHECK(x->file_size == y->file_size && x->entries == y->entries);
        CHECK(x->range_dels == y->range_dels && x->smallest_seq == y->smallest_seq);
        CHECK(x->largest_seq == y->largest_seq);
        CHECK(x->smallest.len == y->smallest.len &&
              !memcmp(x->smallest.data, y->smallest.data, x->smallest.len));
        CHECK(x->largest.len == y->largest.len &&
              !memcmp(x->largest.data, y->largest.data, x->largest.len));
    }
    edit_clear(&d);
    /* Damaged encodings are rejected or parsed, never read out of bounds. */
    unsigned x = 1;
    for (int round = 0; round < 2000; round++) {
        buf m = {0};
        buf_append(&m, b.data, b.len);
        for (int j = 0; j < 3; j++) {
            x = x * 1103515245u + 12345u;
            m.data[(x >> 8) % m.len] = (char)(x >> 20);
        }
        x = x * 1103515245u + 12345u;
        size_t cut = (x >> 8) % (m.len + 1);
        eng_status s = edit_decode(slice_make(m.data, cut), &d);
        CHECK(s == ENG_OK || s == ENG_CORRUPTION);
        edit_clear(&d);
        buf_free(&m);
    }
    buf_free(&b);
    edit_clear(&e);
}

TEST(RangeTombstoneCoversOnlyOlderEntriesItCanSee)
{
    rdel_set *s = rdel_set_new();
    rdel_set_add(s, slice_make("b", 1), slice_make("d", 1), 10);
    rdel_set_add(s, slice_make("x", 1), slice_make("y", 1), ENG_BATCH_SEQ_BASE + 1);
    CHECK(rdel_set_covers(s, slice_make("b", 1), 9, 20)); /* start is inclusive */
    CHECK(rdel_set_covers(s, slice_make("cz", 2), 9, 20));
    CHECK(!rdel_set_covers(s, slice_make("d", 1), 9, 20)); /* end is exclusive */
    CHECK(!rdel_set_covers(s, slice_make("a", 1), 9, 20));
    CHECK(!rdel_set_covers(s, slice_make("c", 1), 10, 20)); /* not older than it */
    CHECK(!rdel_set_covers(s, slice_make("c", 1), 5, 9));   /* the snapshot predates it */
    CHECK(rdel_set_covers(s, slice_make("x", 1), 100, 50)); /* a pending batch tombstone */
    CHECK(!rdel_set_covers(NULL, slice_make("c", 1), 0, 100));
    rdel_set_unref(s);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
