/*
 * eng_flush_test.c -- a flush writes one version of a key that many writes
 * overwrote (Invariant F1 of flush.c), but never drops a version a live
 * snapshot can still read, nor the deletion that hides older tables'
 * versions. Memtables waiting for their flush borrow their size from the
 * block cache and give it back once flushed.
 */
#include "test.h"

#include "engine/engine.h"
#include "eng_db_util.h"

static eng_db *open_db(void)
{
    eng_options o;
    eng_options_init(&o);
    o.compression_level = 0; /* sizes on disk follow what was written */
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    return db;
}

static uint64_t level0_bytes(eng_db *db)
{
    eng_stats st;
    eng_get_stats(db, &st);
    return st.level_bytes[0];
}

static void overwrite(eng_db *db, const char *k, int from, int to)
{
    char v[128];
    for (int i = from; i < to; i++) {
        snprintf(v, sizeof v, "%s-version-%06d-%080d", k, i, i);
        put(db, k, v);
    }
}

TEST(FlushKeepsOneVersionOfAnOverwrittenKey)
{
    eng_db *db = open_db();
    overwrite(db, "hot", 0, 5000); /* 5000 versions of ~110 bytes */
    put(db, "cold", "x");
    CHECK(eng_flush(db) == ENG_OK);
    uint64_t bytes = level0_bytes(db);
    CHECK_MSG(bytes < 20000, "level 0 holds %llu bytes for two keys", (unsigned long long)bytes);
    char v[128];
    snprintf(v, sizeof v, "hot-version-%06d-%080d", 4999, 4999);
    CHECK_GET(db, "hot", v);
    CHECK_GET(db, "cold", "x");
    CHECK(eng_close(db) == ENG_OK);
}

TEST(FlushKeepsTheVersionsSnapshotsRead)
{
    eng_db *db = open_db();
    overwrite(db, "k", 0, 100);
    const eng_snapshot *s1 = eng_snapshot_new(db);
    overwrite(db, "k", 100, 200);
    const eng_snapshot *s2 = eng_snapshot_new(db);
    del(db, "k");
    put(db, "gone", "1");
    del(db, "gone");
    CHECK(eng_flush(db) == ENG_OK);
    char v[128];
    snprintf(v, sizeof v, "k-version-%06d-%080d", 99, 99);
    CHECK_GET_AT(db, s1, "k", v);
    snprintf(v, sizeof v, "k-version-%06d-%080d", 199, 199);
    CHECK_GET_AT(db, s2, "k", v);
    CHECK_GET(db, "k", NULL);
    CHECK_GET(db, "gone", NULL);
    /* Only the versions the reads need were written (the 200 would be
     * 22 KB; a table's index, filter and footer are a few KB). */
    CHECK_MSG(level0_bytes(db) < 16000, "level 0: %llu bytes",
              (unsigned long long)level0_bytes(db));
    eng_snapshot_release(db, s1);
    eng_snapshot_release(db, s2);
    CHECK(eng_close(db) == ENG_OK);
}

TEST(FlushKeepsTheDeletionThatHidesAnOlderTable)
{
    eng_db *db = open_db();
    put(db, "k", "in-an-older-table");
    CHECK(eng_flush(db) == ENG_OK);
    put(db, "k", "newer");
    del(db, "k");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_GET(db, "k", NULL);
    CHECK(eng_close(db) == ENG_OK);
    db = open_db();
    CHECK_GET(db, "k", NULL);
    CHECK(eng_close(db) == ENG_OK);
}

TEST(ImmutableMemtablesBorrowFromTheBlockCache)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 64 * 1024;
    o.cache_size = 1 << 20;
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    static char v[48 * 1024];
    memset(v, 'v', sizeof v - 1);
    int shrunk = 0;
    for (int i = 0; i < 4000 && !shrunk; i++) {
        char k[32];
        snprintf(k, sizeof k, "k%06d", i);
        put(db, k, v); /* each write nearly fills a memtable */
        eng_stats st;
        eng_get_stats(db, &st);
        size_t cap = st.cache_capacity, full = o.cache_size;
        CHECK_MSG(cap == full || cap == full - o.write_buffer_size ||
                      cap == full - 2 * o.write_buffer_size,
                  "capacity %zu with %llu immutable memtables", cap,
                  (unsigned long long)st.immutable_memtables);
        shrunk = cap < full;
    }
    CHECK_MSG(shrunk, "no write ever found a memtable waiting for its flush");
    CHECK(eng_flush(db) == ENG_OK);
    eng_stats st;
    eng_get_stats(db, &st);
    CHECK_EQ_INT(st.immutable_memtables, 0);
    CHECK_EQ_INT(st.cache_capacity, o.cache_size);
    CHECK(eng_close(db) == ENG_OK);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
