/*
 * eng_flush_test.c -- a flush writes one version of a key that many writes
 * overwrote (Invariant F1 of flush.c), but never drops a version a live
 * snapshot can still read, nor the deletion that hides older tables'
 * versions. Memtables waiting for their flush borrow their size from the
 * block cache and give it back once flushed. A flush writes its table's
 * blocks at flush_compression_level, a compaction at compression_level
 * (Invariant F2 of flush.c). A flush leaves out what a range tombstone
 * visible to every snapshot hides, in its own memtable or a newer one
 * (F3), and never so that a power loss keeps half of a batch.
 */
#include "test.h"

#include "engine/engine.h"
#include "eng_db_util.h"
#include "engine/env_fault.h"
#include "engine/table_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

/* The path of the newest table file in dir (the highest number). */
static void newest_table(const char *dir, char *path, size_t cap)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    unsigned long best = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long n;
        char ext[8];
        if (sscanf(e->d_name, "%lu.%7s", &n, ext) == 2 && strcmp(ext, "sst") == 0 && n > best)
            best = n;
    }
    closedir(d);
    CHECK_MSG(best > 0, "no table in %s", dir);
    snprintf(path, cap, "%s/%06lu.sst", dir, best);
}

/* Counts the data blocks of the newest table in dir by their stored type
 * byte (SST_COMPRESSION_*): what the builder chose, not what a read
 * decodes to. */
static void count_block_types(const char *dir, uint64_t counts[3])
{
    char path[1024];
    newest_table(dir, path, sizeof path);
    sst_reader *r;
    CHECK_MSG(sst_reader_open(path, 0, NULL, &r) == ENG_OK, "open %s: %s", path, eng_last_error());
    counts[0] = counts[1] = counts[2] = 0;
    block_iter ii;
    block_iter_init(&ii, &r->index, BLOCK_CMP_IKEY);
    for (block_iter_seek_first(&ii); block_iter_valid(&ii); block_iter_next(&ii)) {
        sst_handle h;
        CHECK(sst_index_handle(r, &ii, &h) == ENG_OK);
        unsigned char type;
        CHECK(pread(r->fd, &type, 1, (off_t)(h.offset + h.size)) == 1);
        CHECK_MSG(type < 3, "block at %llu has type %u", (unsigned long long)h.offset, type);
        counts[type]++;
    }
    block_iter_cleanup(&ii);
    sst_reader_close(r);
}

/* Values zstd shrinks by far more than the 1/8 a block must save. */
static void put_compressible(eng_db *db, int n)
{
    char k[32], v[256];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof k, "key%06d", i);
        snprintf(v, sizeof v, "%06d-%s%s", i, "the same words over and over again, ",
                 "the same words over and over again, the same words over and over again");
        put(db, k, v);
    }
}

static eng_db *open_compressing(int level, int flush_level)
{
    eng_options o;
    eng_options_init(&o);
    o.compression_level = level;
    o.bottom_compression_level = 0; /* = compression_level */
    o.dict_size = 0;                /* ZSTD blocks, not ZSTD_DICT */
    o.flush_compression_level = flush_level;
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    return db;
}

TEST(FlushedTableIsRawWhileCompactionCompresses)
{
    eng_db *db = open_compressing(1, 0);
    put_compressible(db, 3000);
    CHECK(eng_flush(db) == ENG_OK);
    uint64_t c[3];
    count_block_types(test_tmpdir(), c);
    CHECK_MSG(c[SST_COMPRESSION_NONE] > 10 && c[SST_COMPRESSION_ZSTD] == 0,
              "flushed table: %llu raw, %llu zstd blocks", (unsigned long long)c[0],
              (unsigned long long)c[1]);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    count_block_types(test_tmpdir(), c);
    CHECK_MSG(c[SST_COMPRESSION_ZSTD] > 0 && c[SST_COMPRESSION_NONE] == 0,
              "compacted table: %llu raw, %llu zstd blocks", (unsigned long long)c[0],
              (unsigned long long)c[1]);
    put(db, "key000007", "newer");
    CHECK(eng_flush(db) == ENG_OK); /* a raw table over a compressed one */
    CHECK(eng_close(db) == ENG_OK);
    db = open_compressing(1, 3); /* readers follow each block's type byte */
    CHECK_GET(db, "key000007", "newer");
    char v[256];
    snprintf(v, sizeof v, "%06d-%s%s", 2999, "the same words over and over again, ",
             "the same words over and over again, the same words over and over again");
    CHECK_GET(db, "key002999", v);
    CHECK(eng_close(db) == ENG_OK);
}

/* flush-compression is its own setting: a negative (fast) level
 * compresses flushes while compaction output stays raw. */
TEST(FlushedTableUsesANegativeFlushLevelWithCompressionOff)
{
    eng_db *db = open_compressing(0, -5);
    put_compressible(db, 3000);
    CHECK(eng_flush(db) == ENG_OK);
    uint64_t c[3];
    count_block_types(test_tmpdir(), c);
    CHECK_MSG(c[SST_COMPRESSION_ZSTD] > 0, "flushed table: %llu raw, %llu zstd blocks",
              (unsigned long long)c[0], (unsigned long long)c[1]);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    count_block_types(test_tmpdir(), c);
    CHECK_MSG(c[SST_COMPRESSION_ZSTD] == 0, "compacted table: %llu zstd blocks",
              (unsigned long long)c[1]);
    CHECK(eng_close(db) == ENG_OK);
}

/* n keys r00000.. of ~100 bytes. */
static void put_run(eng_db *db, int n)
{
    char k[16], v[128];
    for (int i = 0; i < n; i++) {
        snprintf(k, sizeof k, "r%05d", i);
        snprintf(v, sizeof v, "%05d-%090d", i, i);
        put(db, k, v);
    }
}

/* F3 (b): a tombstone hiding 2000 entries goes into a fresh memtable
 * (db_write.c), so the flush of the old one, holding no tombstone, wrote
 * all 2000 (~230 KB) that the newer memtable's tombstone hides. */
TEST(FlushLeavesOutWhatANewerMemtablesTombstoneHides)
{
    eng_db *db = open_db();
    put_run(db, 2000);
    del_range(db, "r", "s");
    put(db, "s", "after");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_MSG(level0_bytes(db) < 16000, "level 0: %llu bytes",
              (unsigned long long)level0_bytes(db));
    CHECK_GET(db, "r00007", NULL);
    CHECK_GET(db, "s", "after");
    CHECK(eng_close(db) == ENG_OK);
    db = open_db();
    CHECK_GET(db, "r00007", NULL);
    CHECK_GET(db, "r01999", NULL);
    CHECK_GET(db, "s", "after");
    CHECK(eng_close(db) == ENG_OK);
}

/* F3 (b): the flush of a memtable without tombstones of its own seeks past
 * the rest of each newer tombstone's range: it must land on the first key
 * at its end, and find the next range after the keys between. */
TEST(FlushSeeksPastEachHiddenRangeAndKeepsTheKeysBetween)
{
    eng_db *db = open_db();
    put_run(db, 2000);
    eng_batch *b = eng_batch_new(0);
    eng_batch_delete_range(b, "r00100", 6, "r01200", 6); /* a fresh memtable */
    eng_batch_delete_range(b, "r01300", 6, "r01400", 6);
    eng_batch_delete_range(b, "r01401", 6, "r01402", 6);
    CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
    CHECK(eng_flush(db) == ENG_OK);
    static const char *kept[] = {"r00000", "r00099", "r01200", "r01299",
                                 "r01400", "r01402", "r01999"};
    static const char *gone[] = {"r00100", "r01199", "r01300", "r01399", "r01401"};
    char v[128];
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        int n = atoi(kept[i] + 1);
        snprintf(v, sizeof v, "%05d-%090d", n, n);
        CHECK_GET(db, kept[i], v);
    }
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
        CHECK_GET(db, gone[i], NULL);
    CHECK_MSG(level0_bytes(db) < 120000, "level 0: %llu bytes",
              (unsigned long long)level0_bytes(db)); /* 898 keys of ~110 bytes */
    CHECK(eng_close(db) == ENG_OK);
}

/* F3 (a): a tombstone in the memtable it is flushed with (too few entries
 * under it for a fresh memtable) hides what is older than it, not what
 * was written under it after it. */
TEST(FlushLeavesOutWhatATombstoneOfItsOwnMemtableHides)
{
    eng_db *db = open_db();
    put_run(db, 500);
    del_range(db, "r", "s");
    put(db, "r00003", "rewritten");
    CHECK(eng_flush(db) == ENG_OK);
    CHECK_MSG(level0_bytes(db) < 16000, "level 0: %llu bytes",
              (unsigned long long)level0_bytes(db));
    CHECK_GET(db, "r00002", NULL);
    CHECK_GET(db, "r00003", "rewritten");
    CHECK(eng_close(db) == ENG_OK);
}

/* F3: only a tombstone every snapshot sees hides anything from a flush. */
TEST(FlushKeepsWhatATombstoneHidesFromAnOlderSnapshot)
{
    eng_db *db = open_db();
    put_run(db, 2000);
    const eng_snapshot *s = eng_snapshot_new(db);
    del_range(db, "r", "s");
    CHECK(eng_flush(db) == ENG_OK);
    char v[128];
    snprintf(v, sizeof v, "%05d-%090d", 1234, 1234);
    CHECK_GET_AT(db, s, "r01234", v);
    CHECK_GET(db, "r01234", NULL);
    eng_snapshot_release(db, s);
    CHECK(eng_close(db) == ENG_OK);
}

/* F3 (b): the flush that left out what the newer memtable's tombstone
 * hides had the log holding it synced first; without that, a power loss
 * kept the table without the entries and lost the tombstone's batch, so
 * its other write (marker) was lost while its range deletion held. */
TEST(PowerLossAfterAFlushUnderANewerTombstoneKeepsItsBatchWhole)
{
    fault_env_install();
    fault_env_set_fake_sync(1);
    eng_options o;
    eng_options_init(&o);
    o.compression_level = 0;
    o.sync_mode = ENG_SYNC_NO;
    eng_db *db;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    put_run(db, 2000);
    CHECK(eng_commit(db, 1) == ENG_OK);
    eng_batch *b = eng_batch_new(0);
    eng_batch_delete_range(b, "r", 1, "s", 1);
    eng_batch_put(b, "marker", 6, "1", 1);
    CHECK(eng_write(db, b, 0) == ENG_OK); /* not synced by the writer */
    eng_batch_free(b);
    eng_stats st;
    for (int i = 0; i < 5000; i++) { /* the old memtable's flush */
        eng_get_stats(db, &st);
        if (st.flushes >= 1) break;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK(st.flushes >= 1);
    fault_env_arm(FAULT_POWER_LOSS, 1, FAULT_ALL, EIO);
    eng_close(db); /* fails: the machine is gone */
    CHECK(fault_env_power_loss() == 0);
    fault_env_uninstall();
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    int gone = get(db, "r01000") == NULL, marker = get(db, "marker") != NULL;
    CHECK_MSG(gone == marker, "range deletion %s, marker %s", gone ? "applied" : "lost",
              marker ? "kept" : "lost");
    CHECK(eng_close(db) == ENG_OK);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
