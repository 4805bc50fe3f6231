/*
 * eng_mget_test.c -- eng_multi_get against eng_get_batch, key by key: a db
 * with data in the memtable, immutable memtables, level 0 and deeper levels
 * (random puts, overwrites, deletes and range deletes, flushes and
 * compactions), read at the latest view and at older snapshots, through an
 * indexed batch with pending writes and a pending range delete, with and
 * without the row cache, for random key sets with duplicates, absent keys
 * and keys that share data blocks. Also: values stay valid until the next
 * call, and the result holder is reusable.
 */
#include "test.h"

#include <stdint.h>

#include "engine/engine.h"
#include "eng_db_util.h"

#define TEST_RNG_SEED 0x243F6A8885A308D3ull /* the sequence this test always drew */
#include "test_rng.h"

#define NKEYS 3000

static size_t key_of(char *k, unsigned i)
{
    return (size_t)snprintf(k, 32, "user:%06u", i);
}

/* Random history: puts with versions, deletes, a range delete now and
 * then, flushes and a compaction midway. */
static void fill(eng_db *db, int ops)
{
    char k[32], k2[32], v[96];
    for (int i = 0; i < ops; i++) {
        unsigned id = (unsigned)(rnd() % NKEYS);
        key_of(k, id);
        int r = (int)(rnd() % 100);
        if (r < 80) {
            snprintf(v, sizeof v, "v%d-%u-%.*s", i, id, (int)(rnd() % 60),
                     "padpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpadpad");
            put(db, k, v);
        } else if (r < 97) {
            del(db, k);
        } else {
            key_of(k2, id + 1 + (unsigned)(rnd() % 20));
            del_range(db, k, k2);
        }
        if (i % 4000 == 3999) CHECK(eng_flush(db) == ENG_OK);
        if (i == ops / 2) CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    }
}

/* Compares eng_multi_get of n random keys with eng_get_batch of each.
 * runs > 0: the keys come as that many ascending runs, as the hits of an
 * index walk do (the multi-get merges them into key order). */
static void compare_keys(eng_db *db, const eng_snapshot *snap, eng_batch *b, eng_mget *m, size_t n,
                         unsigned runs)
{
    char kb[64][32];
    const char *keys[64] = {0};
    size_t kl[64] = {0};
    unsigned run_id = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned id = (unsigned)(rnd() % (NKEYS + 100));          /* some never written */
        if (i && rnd() % 8 == 0) id = (unsigned)(rnd() % 4) + 10; /* duplicates */
        if (i && rnd() % 3 == 0)
            id = (unsigned)(strtoul(kb[i - 1] + 5, NULL, 10) + 1); /* neighbours */
        if (runs) {
            if (i % (n / runs + 1) == 0) run_id = (unsigned)(rnd() % 200);
            run_id += (unsigned)(rnd() % 90); /* may repeat a key */
            id = run_id;
        }
        kl[i] = key_of(kb[i], id);
        keys[i] = kb[i];
    }
    CHECK(eng_multi_get(db, snap, b, n, keys, kl, m) == ENG_OK);
    for (size_t i = 0; i < n; i++) {
        char *want;
        size_t wl;
        eng_status ws = eng_get_batch(db, snap, b, keys[i], kl[i], &want, &wl);
        const char *got;
        size_t gl;
        eng_status gs = eng_mget_value(m, i, &got, &gl);
        CHECK_MSG(gs == ws, "%s: multi-get %s, get %s", keys[i], eng_status_str(gs),
                  eng_status_str(ws));
        if (ws == ENG_OK) {
            CHECK_MSG(gl == wl && !memcmp(got, want, wl), "%s: multi-get %.*s, get %.*s", keys[i],
                      (int)gl, got, (int)wl, want);
            eng_free(want);
        }
    }
}

static void compare(eng_db *db, const eng_snapshot *snap, eng_batch *b, eng_mget *m, size_t n)
{
    compare_keys(db, snap, b, m, n, 0);
}

static void run(size_t row_cache, int readahead)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 64 * 1024; /* several immutable memtables and tables */
    o.block_size = 512;              /* neighbouring keys share blocks, a few per block */
    o.row_cache_size = row_cache;
    o.readahead = readahead;
    if (readahead) o.cache_size = 64 * 1024; /* most blocks missing: the thread has work */
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    fill(db, 30000);
    const eng_snapshot *old = eng_snapshot_new(db);
    fill(db, 6000); /* newer versions the snapshot must not see */
    eng_mget *m = eng_mget_new();
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + (size_t)(rnd() % 64);
        compare(db, NULL, NULL, m, n);
        compare(db, old, NULL, m, n);
        compare_keys(db, NULL, NULL, m, n, 1 + (unsigned)(rnd() % 4));
    }
    /* Through a batch with pending writes and deletes (answered by its point
     * index, values rewritten so the newest op must win), then also a range
     * delete (answered by its memtable). */
    eng_batch *b = eng_batch_new(1);
    char k[32], k2[32], pv[32];
    for (int i = 0; i < 200; i++) {
        key_of(k, (unsigned)(rnd() % (NKEYS / 4)));
        snprintf(pv, sizeof(pv), "pending%d", i);
        if (i % 3)
            eng_batch_put(b, k, strlen(k), pv, strlen(pv));
        else
            eng_batch_delete(b, k, strlen(k));
        if (i % 20 == 19) compare(db, NULL, b, m, 1 + (size_t)(rnd() % 64));
    }
    for (int round = 0; round < 100; round++)
        compare(db, NULL, b, m, 1 + (size_t)(rnd() % 64));
    key_of(k, 100);
    key_of(k2, 140);
    eng_batch_delete_range(b, k, strlen(k), k2, strlen(k2));
    key_of(k, 120);
    eng_batch_put(b, k, strlen(k), "after-range", 11); /* above the range delete */
    for (int round = 0; round < 200; round++)
        compare(db, NULL, b, m, 1 + (size_t)(rnd() % 64));
    eng_batch_free(b);
    eng_snapshot_release(db, old);
    eng_mget_free(m);
    if (readahead) {
        eng_stats st;
        eng_get_stats(db, &st);
        CHECK_MSG(st.readahead_loads > 0, "readahead loads %llu",
                  (unsigned long long)st.readahead_loads);
    }
    CHECK(eng_close(db) == ENG_OK);
}

TEST(MultiGetMatchesGetsAcrossEveryLevel)
{
    run(0, 0);
}

TEST(MultiGetMatchesGetsThroughTheRowCache)
{
    run(1 << 20, 0);
}

/* The readahead thread loads blocks into a cache the lookups read and
 * evict at the same time: every answer stays the model's. */
TEST(MultiGetMatchesGetsWhileTheReadaheadThreadLoadsTheirBlocks)
{
    run(0, 1);
}

/* Rows answered from the row cache are pinned, not copied: reading other
 * rows afterwards evicts them from the (small) row cache, and the values
 * of the first call must survive until its next call. */
static void row_value(char *v, size_t cap, unsigned i)
{
    int n = snprintf(v, cap, "row-value-%u-", i);
    memset(v + n, 'a' + (char)(i % 26), cap - 1 - (size_t)n);
    v[cap - 1] = 0;
}

/* eng_get of each of n keys, which must exist. */
static void read_each(eng_db *db, size_t n, const char *const *keys, const size_t *kl)
{
    for (size_t i = 0; i < n; i++) {
        char *v = NULL;
        size_t vl;
        CHECK(eng_get(db, NULL, keys[i], kl[i], &v, &vl) == ENG_OK);
        eng_free(v);
    }
}

TEST(RowCacheAnswersStayValidWhileEvicted)
{
    eng_options o;
    eng_options_init(&o);
    o.row_cache_size = 1 << 20; /* about 240 rows of 4 KB */
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    enum { NA = 100, NB = 1000 };
    static char kb[NA + NB][32];
    const char *keys[NA + NB];
    size_t kl[NA + NB];
    char v[4000];
    for (unsigned i = 0; i < NA + NB; i++) {
        kl[i] = key_of(kb[i], i);
        keys[i] = kb[i];
        row_value(v, sizeof v, i);
        put(db, kb[i], v);
    }
    CHECK(eng_flush(db) == ENG_OK);
    eng_mget *m = eng_mget_new();
    eng_stats st;
    /* point reads fill the row cache (admitted at the second put); a
     * multi-get of neighbours sharing blocks would not (db_mget.c) */
    for (int round = 0; round < 2; round++)
        read_each(db, NA, keys, kl);
    eng_get_stats(db, &st);
    uint64_t hits = st.row_cache_hits;
    CHECK(eng_multi_get(db, NULL, NULL, NA, keys, kl, m) == ENG_OK);
    eng_get_stats(db, &st);
    CHECK_EQ_INT(st.row_cache_hits - hits, NA);
    for (int round = 0; round < 2; round++) /* fill the cache with the other rows */
        read_each(db, NB, keys + NA, kl + NA);
    for (unsigned i = 0; i < NA; i++) {
        const char *got;
        size_t gl;
        CHECK(eng_mget_value(m, i, &got, &gl) == ENG_OK);
        row_value(v, sizeof v, i);
        CHECK_MSG(gl == strlen(v) && !memcmp(got, v, gl), "key %u: %.20s", i, got);
    }
    eng_mget_free(m);
    CHECK(eng_close(db) == ENG_OK);
}

/* A multi-get of neighbours (a created-at query) puts only the first key
 * of each block in the row cache: the others are found in the block it
 * pinned, and would push hot rows out. */
TEST(NeighboursReadFromOneBlockDoNotFillTheRowCache)
{
    eng_options o;
    eng_options_init(&o);
    o.row_cache_size = 1 << 20;
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    enum { N = 400 };
    static char kb[N][32];
    const char *keys[N];
    size_t kl[N];
    for (unsigned i = 0; i < N; i++) {
        kl[i] = key_of(kb[i], i);
        keys[i] = kb[i];
        put(db, kb[i], "a value of some forty bytes, or about");
    }
    CHECK(eng_flush(db) == ENG_OK);
    eng_mget *m = eng_mget_new();
    for (int round = 0; round < 3; round++) /* enough for every key to be admitted and hit */
        CHECK(eng_multi_get(db, NULL, NULL, N, keys, kl, m) == ENG_OK);
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK_MSG(st.row_cache_hits > 0 && st.row_cache_hits < N / 8, "hits %llu",
              (unsigned long long)st.row_cache_hits);
    for (unsigned i = 0; i < N; i++) {
        const char *got;
        size_t gl;
        CHECK(eng_mget_value(m, i, &got, &gl) == ENG_OK);
        CHECK(gl == 37 && !memcmp(got, "a value of some forty bytes, or about", 37));
    }
    eng_mget_free(m);
    CHECK(eng_close(db) == ENG_OK);
}

TEST(ValuesStayValidUntilTheNextCall)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 64 * 1024;
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    char k[32], v[64];
    for (unsigned i = 0; i < 2000; i++) {
        key_of(k, i);
        snprintf(v, sizeof v, "value-%u", i);
        put(db, k, v);
    }
    CHECK(eng_flush(db) == ENG_OK);
    for (unsigned i = 0; i < 2000; i += 2) { /* half in the memtable, half in a table */
        key_of(k, i);
        snprintf(v, sizeof v, "value-%u", i);
        put(db, k, v);
    }
    char kb[2000][32];
    const char *keys[2000];
    size_t kl[2000];
    for (unsigned i = 0; i < 2000; i++) {
        kl[i] = key_of(kb[i], i);
        keys[i] = kb[i];
    }
    eng_mget *m = eng_mget_new();
    CHECK(eng_multi_get(db, NULL, NULL, 2000, keys, kl, m) == ENG_OK);
    /* Flushes and compactions meanwhile must not pull the values away. */
    for (unsigned i = 0; i < 2000; i++) {
        key_of(k, i);
        put(db, k, "overwritten-later");
    }
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    for (unsigned i = 0; i < 2000; i++) {
        const char *got;
        size_t gl;
        CHECK(eng_mget_value(m, i, &got, &gl) == ENG_OK);
        snprintf(v, sizeof v, "value-%u", i);
        CHECK_MSG(gl == strlen(v) && !memcmp(got, v, gl), "key %u: %.*s", i, (int)gl, got);
    }
    eng_mget_free(m);
    CHECK(eng_close(db) == ENG_OK);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
