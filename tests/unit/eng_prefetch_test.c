/*
 * eng_prefetch_test.c -- point reads after eng_prefetch answer what they
 * answer without it. The prefetch leaves each key's located data block for
 * the lookup that follows (table_mget.c); these tests break it where a
 * located block could be wrong: every level, lookups at snapshots older
 * than the tables, writes, flushes and compactions between the prefetch and
 * the reads, more keys than the hint slots, reads that skip or repeat
 * prefetched keys, and keys whose versions fill several data blocks (the
 * block the index lands on may end before the key's first entry).
 */
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "eng_db_util.h"
#include "engine/block.h"
#include "engine/block_builder.h"
#include "engine/dbformat.h"
#include "engine/engine.h"

#define TEST_RNG_SEED 0x13198A2E03707344ull
#include "test_rng.h"

#define NKEYS 2000

static char *model[NKEYS];      /* the latest value of each key, NULL: absent */
static char *snap_model[NKEYS]; /* as of the snapshot */

static size_t key_of(char *k, unsigned i)
{
    return (size_t)snprintf(k, 32, "user:%06u", i);
}

static void set_model(unsigned i, const char *v)
{
    free(model[i]);
    model[i] = v ? strdup(v) : NULL;
}

static void random_ops(eng_db *db, int ops, size_t vpad)
{
    static const char pad[] = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrst"
                              "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrst";
    char k[32], k2[32], v[256];
    for (int i = 0; i < ops; i++) {
        unsigned id = (unsigned)(rnd() % NKEYS);
        key_of(k, id);
        int r = (int)(rnd() % 100);
        if (r < 80) {
            snprintf(v, sizeof v, "v%d-%u-%.*s", i, id, (int)(rnd() % (vpad + 1)), pad);
            put(db, k, v);
            set_model(id, v);
        } else if (r < 97) {
            del(db, k);
            set_model(id, NULL);
        } else {
            unsigned end = id + 1 + (unsigned)(rnd() % 20);
            key_of(k2, end);
            del_range(db, k, k2);
            for (unsigned j = id; j < end && j < NKEYS; j++)
                set_model(j, NULL);
        }
        if (i % 3000 == 2999) CHECK(eng_flush(db) == ENG_OK);
    }
}

static void check_get(eng_db *db, const eng_snapshot *snap, unsigned id, char *const *m)
{
    char k[32];
    key_of(k, id);
    const char *got = get_at(db, snap, k);
    const char *want = id < NKEYS ? m[id] : NULL;
    CHECK_MSG((!got && !want) || (got && want && !strcmp(got, want)),
              "%s%s: got %.200s, want %.200s", k, snap ? " at the snapshot" : "",
              got ? got : "(absent)", want ? want : "(absent)");
}

/* n random keys prefetched, then read (some skipped, some twice, in a
 * shuffled order), optionally with a write in between. */
static void prefetch_and_read(eng_db *db, const eng_snapshot *snap, char *const *m, size_t n,
                              int write_between)
{
    char kb[48][32];
    const char *keys[48] = {0};
    size_t kl[48] = {0};
    unsigned ids[48];
    unsigned char writes[48] = {0};
    for (size_t i = 0; i < n; i++) {
        ids[i] = (unsigned)(rnd() % (NKEYS + 50));        /* some never written */
        if (i && rnd() % 3 == 0) ids[i] = ids[i - 1] + 1; /* neighbours: one block */
        kl[i] = key_of(kb[i], ids[i]);
        keys[i] = kb[i];
    }
    eng_prefetch(db, n, keys, kl, writes);
    if (write_between && !snap) {
        unsigned id = ids[rnd() % n] % NKEYS;
        char wk[32];
        key_of(wk, id);
        put(db, wk, "between");
        set_model(id, "between");
        if (write_between > 1) CHECK(eng_flush(db) == ENG_OK);
        if (write_between > 2) CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = rnd() % 4 == 0 ? rnd() % n : i;
        if (rnd() % 8 == 0) continue;
        check_get(db, snap, ids[j], m);
    }
}

static void run(size_t row_cache, int readahead)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 64 * 1024; /* several immutable memtables and tables */
    o.block_size = 512;              /* a few keys per block */
    o.row_cache_size = row_cache;
    o.readahead = readahead;
    if (readahead) o.cache_size = 64 * 1024; /* blocks evicted: the thread keeps loading */
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    random_ops(db, 20000, 60);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    random_ops(db, 8000, 60); /* level 0 over the deeper levels */
    const eng_snapshot *old = eng_snapshot_new(db);
    for (unsigned i = 0; i < NKEYS; i++)
        snap_model[i] = model[i] ? strdup(model[i]) : NULL;
    random_ops(db, 6000, 60); /* newer versions the snapshot must not see */
    CHECK(eng_flush(db) == ENG_OK);
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)(rnd() % 48); /* beyond the prefetch's 32 keys */
        prefetch_and_read(db, NULL, model, n, round % 10 == 0 ? 1 + round / 10 % 3 : 0);
        prefetch_and_read(db, old, snap_model, n, 0);
    }
    if (readahead) { /* the thread ran: a test that never reaches it proves nothing */
        eng_stats st;
        eng_get_stats(db, &st);
        CHECK_MSG(st.readahead_loads > 0, "readahead loads %llu, cached %llu",
                  (unsigned long long)st.readahead_loads, (unsigned long long)st.readahead_cached);
    }
    eng_snapshot_release(db, old);
    CHECK(eng_close(db) == ENG_OK);
    for (unsigned i = 0; i < NKEYS; i++) {
        set_model(i, NULL);
        free(snap_model[i]);
        snap_model[i] = NULL;
    }
}

TEST(PrefetchedGetsMatchTheModelAcrossEveryLevel)
{
    run(0, 0);
}

TEST(PrefetchedGetsMatchTheModelThroughTheRowCache)
{
    run(1 << 20, 0);
}

/* The readahead thread loads blocks while the reads run, and while
 * flushes and compactions replace the tables its queued jobs name (RA1:
 * a job keeps its table open, its file on disk). */
TEST(PrefetchedGetsMatchTheModelWithTheReadaheadThread)
{
    run(0, 1);
    run(1 << 20, 1);
}

/* The blocks a pipeline's lookups miss are in the cache once the thread is
 * done with them: the lookups then count cache hits only. Keys far apart,
 * one data block each, on a reopened db (nothing cached). */
TEST(ReadaheadLoadsTheBlocksThePipelineMisses)
{
    eng_options o;
    eng_options_init(&o);
    o.block_size = 512;
    o.readahead = 1;
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    char k[32], v[128];
    for (unsigned id = 0; id < NKEYS; id++) {
        key_of(k, id);
        snprintf(v, sizeof v, "value-%u-%060d", id, 0);
        put(db, k, v);
    }
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    CHECK(eng_close(db) == ENG_OK);
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    get_at(db, NULL, "user:000000"); /* opens the table's reader: a prefetch opens none */
    char kb[32][32];
    const char *keys[32];
    size_t kl[32];
    unsigned char writes[32] = {0};
    for (unsigned i = 0; i < 32; i++) {
        kl[i] = key_of(kb[i], 31 + i * 61);
        keys[i] = kb[i];
    }
    eng_stats before, st;
    eng_get_stats(db, &before);
    eng_prefetch(db, 32, keys, kl, writes);
    for (int wait = 0; wait < 500; wait++) { /* up to 5 s on a loaded machine */
        eng_get_stats(db, &st);
        if (st.readahead_loads + st.readahead_cached >= 32) break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK_MSG(st.readahead_loads == 32 && st.readahead_cached == 0 && st.readahead_dropped == 0,
              "loads %llu, cached %llu, dropped %llu", (unsigned long long)st.readahead_loads,
              (unsigned long long)st.readahead_cached, (unsigned long long)st.readahead_dropped);
    for (unsigned i = 0; i < 32; i++) {
        snprintf(v, sizeof v, "value-%u-%060d", 31 + i * 61, 0);
        const char *got = get_at(db, NULL, keys[i]);
        CHECK(got && !strcmp(got, v));
    }
    eng_get_stats(db, &st);
    CHECK_MSG(st.cache_misses == before.cache_misses, "%llu lookups missed the cache",
              (unsigned long long)(st.cache_misses - before.cache_misses));
    CHECK(eng_close(db) == ENG_OK);
}

/* Every key written many times under held snapshots with values near the
 * block size: each key's versions fill several blocks, so a read at an
 * older snapshot must search past the block the newest version's lookup
 * lands on (the located block is only for reads at or above the table's
 * newest sequence). */
static char *round_model[6][NKEYS];

TEST(KeysWhoseVersionsFillSeveralBlocks)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 256 * 1024;
    o.block_size = 512;
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    const eng_snapshot *hold[6];
    char k[32], v[600];
    for (int round = 0; round < 6; round++) {
        for (unsigned id = 0; id < 300; id++) {
            key_of(k, id);
            snprintf(v, sizeof v, "r%d-%u-%0*d", round, id, 200 + (int)(rnd() % 300), 0);
            put(db, k, v);
            set_model(id, v);
            round_model[round][id] = strdup(v);
        }
        hold[round] = eng_snapshot_new(db);
    }
    CHECK(eng_flush(db) == ENG_OK);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK); /* the snapshots keep every version */
    for (int round = 0; round < 300; round++) {
        int at = (int)(rnd() % 7); /* 6: the latest */
        prefetch_and_read(db, at < 6 ? hold[at] : NULL, at < 6 ? round_model[at] : model,
                          1 + (size_t)(rnd() % 32), 0);
    }
    for (int i = 0; i < 6; i++) {
        eng_snapshot_release(db, hold[i]);
        for (unsigned id = 0; id < NKEYS; id++) {
            free(round_model[i][id]);
            round_model[i][id] = NULL;
        }
    }
    CHECK(eng_close(db) == ENG_OK);
    for (unsigned i = 0; i < NKEYS; i++)
        set_model(i, NULL);
}

/* The restart search in steps ends at a restart interval from which
 * block_iter_seek_from finds what block_iter_seek finds, for targets at,
 * between, before and after the block's keys and at every sequence. */
TEST(RestartSearchInStepsEndsWhereTheSeekStarts)
{
    for (int interval = 1; interval <= 16; interval *= 2) {
        block_builder bb;
        block_builder_init(&bb, interval);
        char k[48];
        for (unsigned i = 0; i < 400; i += 2) { /* odd ids: between the keys */
            for (uint64_t seq = 9; seq >= 7; seq--) {
                size_t n = key_of(k, i);
                enc_fixed64(k + n, ikey_pack_trailer(seq, ENG_TYPE_VALUE));
                block_builder_add(&bb, slice_make(k, n + 8), slice_make("v", 1));
            }
        }
        slice raw = block_builder_finish(&bb);
        block b;
        CHECK(block_parse(&b, raw.data, raw.size, NULL) == ENG_OK);
        for (unsigned i = 0; i < 403; i++) {
            size_t n = key_of(k, i);
            enc_fixed64(k + n, ikey_pack_trailer(ENG_MAX_SEQUENCE, ENG_TYPE_SEEK));
            block_rsearch rs;
            block_rsearch_start(&b, &rs);
            int steps = 0;
            while (!block_rsearch_step(&b, &rs, slice_make(k, n + 8)))
                CHECK(++steps < 64);
            for (uint64_t seq = 10; seq >= 6; seq--) { /* (key, seq) >= the searched target */
                enc_fixed64(k + n, ikey_pack_trailer(seq, ENG_TYPE_SEEK));
                slice t = slice_make(k, n + 8);
                block_iter a, c;
                block_iter_init(&a, &b, BLOCK_CMP_IKEY);
                block_iter_init(&c, &b, BLOCK_CMP_IKEY);
                block_iter_seek(&a, t);
                block_iter_seek_from(&c, rs.left, t);
                CHECK_MSG(block_iter_valid(&a) == block_iter_valid(&c) &&
                              (!block_iter_valid(&a) ||
                               slice_compare(block_iter_key(&a), block_iter_key(&c)) == 0),
                          "interval %d, key %u, seq %u: scan from restart %u", interval, i,
                          (unsigned)seq, rs.left);
                block_iter_cleanup(&a);
                block_iter_cleanup(&c);
            }
        }
        block_release(&b);
        block_builder_free(&bb);
    }
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
