/*
 * eng_row_cache_test.c -- the row cache (engine/row_cache.h): on its own
 * (collisions, RC2, capacity) and under eng_get, where every answer must
 * be the one the engine gives without it: older snapshots, deletions and
 * range deletions in newer tables, compactions that rewrite the tables.
 */
#include "engine/dbformat.h"
#include "engine/engine.h"
#include "engine/row_cache.h"
#include "test.h"
#include "eng_db_util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static eng_db *open_at(const char *dir, size_t row_cache_size)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 16 << 10;
    o.target_file_size = 16 << 10;
    o.max_bytes_level_base = 32 << 10;
    o.block_size = 512;
    o.l0_compaction_trigger = 100; /* tables stay where the test puts them */
    o.l0_slowdown_trigger = 200;
    o.l0_stop_trigger = 300;
    o.sync_mode = ENG_SYNC_NO;
    o.row_cache_size = row_cache_size;
    eng_db *db = NULL;
    eng_status s = eng_open(dir, &o, &db);
    CHECK_MSG(s == ENG_OK, "open: %s %s", eng_status_str(s), eng_last_error());
    return db;
}

static eng_db *open_db(size_t row_cache_size)
{
    return open_at(test_tmpdir(), row_cache_size);
}

static eng_stats stats(eng_db *db)
{
    eng_stats st;
    eng_get_stats(db, &st);
    return st;
}

/* ---- The cache alone --------------------------------------------------- */

/* Admission into a full cache takes two puts (row_cache.h): the first
 * only marks the key. */
static void put2(row_cache *rc, uint64_t file, uint64_t hash, const char *k, int type, uint64_t seq,
                 slice val)
{
    row_cache_put(rc, file, hash, slice_make(k, strlen(k)), type, seq, val);
    row_cache_put(rc, file, hash, slice_make(k, strlen(k)), type, seq, val);
}

/* While there is room a row goes in at its first put; once the cache is
 * full, a key put once is only marked, and its second put inserts it. */
TEST(FirstPutInsertsWhileThereIsRoomThenOnlyASecondPut)
{
    row_cache *rc = row_cache_new(64 << 10);
    int type;
    uint64_t fs;
    char *v = NULL, key[32], val[100];
    size_t vl;
    memset(val, 'f', sizeof(val));
    row_cache_put(rc, 1, 5, slice_make("a", 1), ENG_TYPE_DELETION, 3, slice_make(NULL, 0));
    CHECK(row_cache_usage(rc) > 0);
    CHECK(row_cache_get(rc, 1, 5, slice_make("a", 1), 10, &type, &fs, &v, &vl));
    CHECK(type == ENG_TYPE_DELETION && fs == 3);
    for (int i = 0; i < 3000; i++) { /* every shard full */
        snprintf(key, sizeof(key), "fill%05d", i);
        put2(rc, 2, (uint64_t)i * 0x9E3779B97F4A7C15u, key, ENG_TYPE_VALUE, 1,
             slice_make(val, sizeof(val)));
    }
    int once = 0, twice = 0;
    for (int i = 0; i < 100; i++) {
        snprintf(key, sizeof(key), "late%05d", i);
        uint64_t h = 77 + (uint64_t)i * 0xC2B2AE3D27D4EB4Fu;
        slice k = slice_make(key, strlen(key));
        row_cache_put(rc, 3, h, k, ENG_TYPE_VALUE, 1, slice_make(val, sizeof(val)));
        if (row_cache_get(rc, 3, h, k, 10, &type, &fs, &v, &vl)) once++, free(v);
        row_cache_put(rc, 3, h, k, ENG_TYPE_VALUE, 1, slice_make(val, sizeof(val)));
        if (row_cache_get(rc, 3, h, k, 10, &type, &fs, &v, &vl)) twice++, free(v);
    }
    CHECK_MSG(once <= 5 && twice >= 95, "%d hits after one put, %d after two", once, twice);
    row_cache_free(rc);
}

TEST(CollidingHashWithAnotherKeyIsAMiss)
{
    row_cache *rc = row_cache_new(1 << 20);
    put2(rc, 7, 42, "a", ENG_TYPE_VALUE, 5, slice_make("va", 2));
    int type = 99;
    uint64_t fs = 0;
    char *v = NULL;
    size_t vl = 0;
    CHECK(!row_cache_get(rc, 7, 42, slice_make("b", 1), 100, &type, &fs, &v, &vl));
    CHECK(!row_cache_get(rc, 8, 42, slice_make("a", 1), 100, &type, &fs, &v, &vl));
    CHECK(row_cache_get(rc, 7, 42, slice_make("a", 1), 100, &type, &fs, &v, &vl));
    CHECK_EQ_INT(type, ENG_TYPE_VALUE);
    CHECK_EQ_INT(fs, 5);
    CHECK(vl == 2 && memcmp(v, "va", 2) == 0);
    free(v);
    CHECK_EQ_INT(row_cache_hits(rc), 1);
    CHECK_EQ_INT(row_cache_misses(rc), 2);
    row_cache_free(rc);
}

TEST(RowNewerThanTheSnapshotDoesNotAnswerButAbsentDoes)
{
    row_cache *rc = row_cache_new(1 << 20);
    put2(rc, 1, 1, "k", ENG_TYPE_DELETION, 10, slice_make(NULL, 0));
    put2(rc, 1, 2, "x", ROW_ABSENT, 0, slice_make(NULL, 0));
    int type = 99;
    uint64_t fs = 0;
    char *v = NULL;
    size_t vl = 0;
    CHECK(!row_cache_get(rc, 1, 1, slice_make("k", 1), 9, &type, &fs, &v, &vl));
    CHECK(row_cache_get(rc, 1, 1, slice_make("k", 1), 10, &type, &fs, &v, &vl));
    CHECK(type == ENG_TYPE_DELETION && fs == 10 && v == NULL);
    CHECK(row_cache_get(rc, 1, 2, slice_make("x", 1), 0, &type, &fs, &v, &vl));
    CHECK_EQ_INT(type, ROW_ABSENT);
    row_cache_erase_file(rc, 1);
    CHECK(!row_cache_get(rc, 1, 2, slice_make("x", 1), 0, &type, &fs, &v, &vl));
    CHECK_EQ_INT(row_cache_usage(rc), 0);
    row_cache_free(rc);
}

TEST(CapacityIsRespectedAndOversizedRowsAreNotCached)
{
    size_t cap = 64 << 10;
    row_cache *rc = row_cache_new(cap);
    char key[32], val[200];
    memset(val, 'v', sizeof(val));
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof(key), "key%05d", i);
        put2(rc, 3, (uint64_t)i * 0x9E3779B97F4A7C15u, key, ENG_TYPE_VALUE, 1,
             slice_make(val, sizeof(val)));
        CHECK(row_cache_usage(rc) <= cap);
    }
    CHECK(row_cache_usage(rc) > cap / 2);
    char *big = calloc(1, cap / 16);
    row_cache_erase_file(rc, 3);
    put2(rc, 3, 1, "big", ENG_TYPE_VALUE, 1, slice_make(big, cap / 16));
    CHECK_EQ_INT(row_cache_usage(rc), 0);
    free(big);
    CHECK(row_cache_new(0) == NULL);
    row_cache_free(rc);
}

/* Small rows are what the cache is for: 20-byte keys with 3-byte values
 * cost about 80 bytes each, so 10_000 of them fit in 1 MiB and all answer. */
TEST(TenThousandSmallRowsFitInOneMebibyte)
{
    row_cache *rc = row_cache_new(1 << 20);
    char key[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof(key), "m\001key:%012d", i);
        put2(rc, 9, (uint64_t)i * 0x9E3779B97F4A7C15u, key, ENG_TYPE_VALUE, 1,
             slice_make("abc", 3));
    }
    CHECK(row_cache_usage(rc) <= 1 << 20);
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof(key), "m\001key:%012d", i);
        int type;
        uint64_t fs;
        const char *v;
        size_t vl;
        row_pin *pin;
        if (!row_cache_get_pinned(rc, 9, (uint64_t)i * 0x9E3779B97F4A7C15u,
                                  slice_make(key, strlen(key)), 10, &type, &fs, &v, &vl, &pin))
            continue;
        CHECK(vl == 3 && memcmp(v, "abc", 3) == 0);
        row_cache_unpin(rc, pin);
    }
    /* a shard that fills up admits a new key only at its second put, and
     * the doorkeeper's reset (every ~8k marks) may come between the two */
    CHECK_MSG(row_cache_hits(rc) >= 9990, "%llu hits", (unsigned long long)row_cache_hits(rc));
    row_cache_free(rc);
}

/* A pinned row outlives its eviction and its table's erasure: its value
 * stays readable (ASan checks) until the unpin frees it. */
TEST(PinnedRowOutlivesEvictionAndErase)
{
    size_t cap = 64 << 10;
    row_cache *rc = row_cache_new(cap);
    char key[32], val[100];
    memset(val, 'p', sizeof(val));
    put2(rc, 4, 77, "pinned", ENG_TYPE_VALUE, 2, slice_make(val, sizeof(val)));
    row_pin *pin = row_cache_probe(rc, 4, 77);
    int type;
    uint64_t fs;
    const char *v;
    size_t vl;
    CHECK(row_cache_answer(rc, pin, slice_make("pinned", 6), 5, &type, &fs, &v, &vl));
    for (int i = 0; i < 5000; i++) { /* evicts everything evictable many times over */
        snprintf(key, sizeof(key), "other%05d", i);
        put2(rc, 4, 1000 + (uint64_t)i * 0x9E3779B97F4A7C15u, key, ENG_TYPE_VALUE, 1,
             slice_make(val, sizeof(val)));
        CHECK(row_cache_usage(rc) <= cap);
    }
    row_cache_erase_file(rc, 4);
    CHECK_EQ_INT(row_cache_usage(rc), 0);
    CHECK(vl == sizeof(val) && memcmp(v, val, vl) == 0 && fs == 2);
    row_cache_unpin(rc, pin);
    /* A probe finds the row by hash; the answer compares the key. */
    put2(rc, 5, 88, "mine", ENG_TYPE_VALUE, 2, slice_make("x", 1));
    pin = row_cache_probe(rc, 5, 88);
    CHECK(pin != NULL);
    CHECK(!row_cache_answer(rc, pin, slice_make("theirs", 6), 5, &type, &fs, &v, &vl));
    CHECK(row_cache_maybe(rc, 5, 88));
    CHECK(!row_cache_maybe(rc, 6, 88));
    row_cache_free(rc);
}

/* Two threads put, look up, pin and erase over one small cache: every hit
 * answers with its own key's value (the value names the key and table),
 * and the usage stays within the capacity. */
typedef struct churn_arg {
    row_cache *rc;
    unsigned seed;
    int bad;
} churn_arg;

static void *churn(void *p)
{
    churn_arg *a = p;
    char key[32], val[64];
    for (int i = 0; i < 200000; i++) {
        a->seed = a->seed * 1103515245u + 12345u;
        unsigned k = (a->seed >> 8) % 3000, file = 1 + (a->seed >> 20) % 4;
        uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15u;
        int kl = snprintf(key, sizeof(key), "key%u", k);
        int vl = snprintf(val, sizeof(val), "v%u@%u", k, file);
        switch (a->seed % 7) {
        case 0:
        case 1:
            row_cache_put(a->rc, file, h, slice_make(key, (size_t)kl), ENG_TYPE_VALUE, 1,
                          slice_make(val, (size_t)vl));
            break;
        case 6:
            if (k % 50 == 0) row_cache_erase_file(a->rc, file);
            break;
        default: {
            int type;
            uint64_t fs;
            const char *v;
            size_t n;
            row_pin *pin;
            if (row_cache_get_pinned(a->rc, file, h, slice_make(key, (size_t)kl), 5, &type, &fs, &v,
                                     &n, &pin)) {
                if (n != (size_t)vl || memcmp(v, val, n) != 0) a->bad++;
                row_cache_unpin(a->rc, pin);
            }
        }
        }
        if (row_cache_usage(a->rc) > row_cache_capacity(a->rc)) a->bad++;
    }
    return NULL;
}

TEST(ConcurrentPutsLookupsAndErasesNeverAnswerWrong)
{
    row_cache *rc = row_cache_new(48 << 10);
    churn_arg a[2] = {{rc, 1, 0}, {rc, 2, 0}};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, churn, &a[1]) == 0);
    churn(&a[0]);
    pthread_join(t, NULL);
    CHECK_EQ_INT(a[0].bad + a[1].bad, 0);
    CHECK(row_cache_hits(rc) > 0);
    row_cache_free(rc);
}

/* ---- Through the engine ------------------------------------------------ */

/* Reads keys k000..k409 from db and ref (at their snapshots, which may be
 * NULL) three times: enough for a key to pass admission and then hit. */
static void check_all(eng_db *db, const eng_snapshot *ds, eng_db *ref, const eng_snapshot *rs)
{
    char k[32], w[4096];
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < 410; i++) {
            snprintf(k, sizeof(k), "k%03d", i);
            const char *want = get_at(ref, rs, k);
            if (want) snprintf(w, sizeof(w), "%s", want);
            CHECK_GET_AT(db, ds, k, want ? w : NULL);
        }
    }
}

/* Applies the same pseudo-random puts, deletes, range deletes, flushes and
 * compactions to db (cache on) and ref (off), reading every key from both,
 * now and at a snapshot taken a few rounds back, after each round. */
TEST(GetThroughTheCacheEqualsGetWithoutIt)
{
    char d1[300], d2[300];
    snprintf(d1, sizeof(d1), "%s/on", test_tmpdir());
    snprintf(d2, sizeof(d2), "%s/off", test_tmpdir());
    eng_db *db = open_at(d1, 1 << 20), *ref = open_at(d2, 0);
    const eng_snapshot *ds = NULL, *rs = NULL;
    uint32_t x = 12345;
    char k[32], v[32], a[32];
    for (int round = 0; round < 12; round++) {
        for (int i = 0; i < 300; i++) {
            x = x * 1103515245u + 12345u;
            snprintf(k, sizeof(k), "k%03u", (x >> 8) % 400);
            snprintf(v, sizeof(v), "v%d.%d", round, i);
            int op = (int)((x >> 20) % 16);
            eng_db *both[2] = {db, ref};
            for (int j = 0; j < 2; j++) {
                if (op == 0) {
                    snprintf(a, sizeof(a), "k%03u", (x >> 8) % 400 + 7);
                    del_range(both[j], k, a);
                } else {
                    write_op(both[j], op < 4, k, v);
                }
            }
        }
        if (round % 4 == 1) { /* a new snapshot pair every few rounds */
            eng_snapshot_release(db, ds);
            eng_snapshot_release(ref, rs);
            ds = eng_snapshot_new(db);
            rs = eng_snapshot_new(ref);
        }
        if (round % 3 != 2) {
            CHECK(eng_flush(db) == ENG_OK);
            CHECK(eng_flush(ref) == ENG_OK);
        }
        if (round % 5 == 4) {
            CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
            CHECK(eng_compact_range(ref, NULL, 0, NULL, 0) == ENG_OK);
        }
        check_all(db, NULL, ref, NULL);
        if (ds) check_all(db, ds, ref, rs);
    }
    CHECK(stats(db).row_cache_hits > 1000);
    CHECK_EQ_INT(stats(ref).row_cache_capacity, 0);
    CHECK_EQ_INT(stats(ref).row_cache_hits, 0);
    eng_snapshot_release(db, ds);
    eng_snapshot_release(ref, rs);
    eng_close(db);
    eng_close(ref);
}

TEST(OlderSnapshotBypassesNewerCachedVersion)
{
    eng_db *db = open_db(1 << 20);
    put(db, "k", "v1");
    const eng_snapshot *s1 = eng_snapshot_new(db);
    put(db, "k", "v2");
    CHECK(eng_flush(db) == ENG_OK); /* one table holding both versions */
    CHECK_GET(db, "k", "v2");
    CHECK_GET(db, "k", "v2"); /* caches v2 (admitted at the second miss) */
    CHECK_GET(db, "k", "v2");
    CHECK(stats(db).row_cache_hits >= 1);
    CHECK_GET_AT(db, s1, "k", "v1");
    CHECK_GET_AT(db, s1, "k", "v1");
    CHECK_GET(db, "k", "v2");
    eng_snapshot_release(db, s1);
    eng_close(db);
}

TEST(OlderSnapshotLookupDoesNotCacheItsOlderVersion)
{
    eng_db *db = open_db(1 << 20);
    put(db, "k", "v1");
    const eng_snapshot *s1 = eng_snapshot_new(db);
    put(db, "k", "v2");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET_AT(db, s1, "k", "v1"); /* must not leave v1 behind as the table's answer */
    CHECK_GET(db, "k", "v2");
    CHECK_GET(db, "k", "v2");
    eng_snapshot_release(db, s1);
    eng_close(db);
}

TEST(DeletionInNewerTableHidesCachedValueInOlderOne)
{
    eng_db *db = open_db(1 << 20);
    put(db, "k", "v");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET(db, "k", "v");
    CHECK_GET(db, "k", "v");
    CHECK_GET(db, "k", "v");
    const eng_snapshot *s = eng_snapshot_new(db);
    del(db, "k");
    CHECK_GET(db, "k", NULL); /* from the memtable */
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET(db, "k", NULL); /* the newer table's deletion, then cached */
    CHECK_GET(db, "k", NULL);
    CHECK_GET_AT(db, s, "k", "v");
    eng_snapshot_release(db, s);
    eng_close(db);
}

TEST(RangeDeletionOverCachedKeyHidesIt)
{
    eng_db *db = open_db(1 << 20);
    put(db, "b", "vb");
    put(db, "m", "vm");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET(db, "b", "vb");
    CHECK_GET(db, "b", "vb");
    CHECK_GET(db, "b", "vb");
    uint64_t hits = stats(db).row_cache_hits;
    CHECK(hits >= 1);
    del_range(db, "a", "c");
    CHECK_GET(db, "b", NULL); /* the tombstone in the memtable */
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET(db, "b", NULL); /* the tombstone in a newer table */
    CHECK(stats(db).row_cache_hits > hits);
    CHECK_GET(db, "m", "vm");
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK_GET(db, "b", NULL);
    CHECK_GET(db, "m", "vm");
    eng_close(db);
}

TEST(CapacityIsRespectedUnderLookups)
{
    size_t cap = 64 << 10;
    eng_db *db = open_db(cap);
    char k[32], v[128];
    memset(v, 'x', sizeof(v) - 1);
    v[sizeof(v) - 1] = 0;
    for (int i = 0; i < 3000; i++) {
        snprintf(k, sizeof(k), "key%05d", i);
        put(db, k, v);
    }
    CHECK(eng_flush(db) == ENG_OK);
    /* blocks of 200 keys, each read twice: within the doorkeeper's
     * window, so every key is admitted, and 3000 rows fill the cache
     * several times over */
    for (int i = 0; i < 6000; i++) {
        snprintf(k, sizeof(k), "key%05d", i / 400 * 200 + i % 200);
        CHECK_GET(db, k, v);
        CHECK(stats(db).row_cache_usage <= cap);
    }
    CHECK_EQ_INT(stats(db).row_cache_capacity, cap);
    CHECK(stats(db).row_cache_usage > cap / 2);
    eng_close(db);
}

TEST(CompactionRewritingTablesLeavesAnswersRight)
{
    eng_db *db = open_db(1 << 20);
    char k[32], v[32];
    for (int i = 0; i < 500; i++) {
        snprintf(k, sizeof(k), "k%04d", i);
        snprintf(v, sizeof(v), "a%d", i);
        put(db, k, v);
    }
    CHECK(eng_flush(db) == ENG_OK);
    for (int i = 0; i < 1000; i++) {
        snprintf(k, sizeof(k), "k%04d", i % 500);
        snprintf(v, sizeof(v), "a%d", i % 500);
        CHECK_GET(db, k, v);
    }
    for (int i = 0; i < 500; i += 2) {
        snprintf(k, sizeof(k), "k%04d", i);
        snprintf(v, sizeof(v), "b%d", i);
        if (i % 10 == 0)
            del(db, k);
        else
            put(db, k, v);
    }
    CHECK(eng_flush(db) == ENG_OK);
    CHECK(stats(db).row_cache_usage > 0);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    /* the rewritten tables are gone and their rows with them */
    CHECK_EQ_INT(stats(db).row_cache_usage, 0);
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < 500; i++) {
            snprintf(k, sizeof(k), "k%04d", i);
            snprintf(v, sizeof(v), "%c%d", i % 2 ? 'a' : 'b', i);
            CHECK_GET(db, k, i % 10 == 0 ? NULL : v);
        }
    }
    eng_close(db);
    db = open_db(1 << 20); /* reopened: largest_seq comes from the manifest */
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < 500; i++) {
            snprintf(k, sizeof(k), "k%04d", i);
            snprintf(v, sizeof(v), "%c%d", i % 2 ? 'a' : 'b', i);
            CHECK_GET(db, k, i % 10 == 0 ? NULL : v);
        }
    }
    eng_close(db);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
