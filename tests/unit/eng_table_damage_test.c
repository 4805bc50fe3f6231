/*
 * eng_table_damage_test.c -- table_reader.c on damaged files: every
 * flipped byte and every truncation of a table is corruption, never wrong
 * data; the compaction scan's read-ahead windows, and tables with a
 * compression dictionary (format version 2), with their own damage. Apart
 * from eng_table_test.c, which checks the intact tables, because these
 * tests read and rewrite whole files and run the longest.
 */
#include "test.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "engine/dbformat.h"
#include "engine/table.h"
#include "engine/table_format.h"
#include "eng_table_util.h"

/* ---- damaged files ----------------------------------------------------- */

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *d = malloc(*n);
    CHECK(fread(d, 1, *n, f) == *n);
    fclose(f);
    return d;
}

static void spit(const char *path, const char *d, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(fwrite(d, 1, n, f) == n);
    fclose(f);
}

/* Reads everything from a possibly damaged table: every answer must be
 * right or ENG_CORRUPTION. Returns 1 if the damage was detected. */
static int read_all_or_detect(const char *path, const ent *e, size_t n, uint32_t nkeys,
                              uint32_t key_step, block_cache *c, uint64_t fileno)
{
    sst_reader *r;
    eng_status s = sst_reader_open(path, fileno, c, &r);
    if (s != ENG_OK) {
        CHECK_EQ_INT(s, ENG_CORRUPTION);
        CHECK(strstr(eng_last_error(), path) != NULL); /* names the file */
        return 1;
    }
    int detected = 0;
    iter *it = sst_reader_iter(r, 1);
    size_t x = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        check_entry(it, &e[x++]);
    if (iter_status(it) != ENG_OK) {
        CHECK_EQ_INT(iter_status(it), ENG_CORRUPTION);
        detected = 1;
    } else {
        CHECK_EQ_INT(x, n); /* silently losing the tail would be wrong data */
    }
    iter_free(it);
    char s_[32], v[128];
    for (uint32_t i = 0; i < nkeys; i += key_step) {
        int t;
        uint64_t fs;
        char *val = NULL;
        size_t vl;
        s = sst_reader_get(r, ukey(s_, i), ENG_MAX_SEQUENCE, &t, &fs, &val, &vl);
        if (s == ENG_CORRUPTION) {
            detected = 1;
            continue;
        }
        CHECK_EQ_INT(s, ENG_OK);
        CHECK_EQ_INT(fs, seq_of(i, 0));
        CHECK_EQ_INT(t, type_of(i, 0));
        if (t == ENG_TYPE_VALUE) CHECK(vl == value_of(v, i, fs) && !memcmp(val, v, vl));
        free(val);
    }
    sst_reader_close(r);
    return detected;
}

TEST(EveryFlippedByteOfASmallTableIsCorruptionNeverWrongData)
{
    size_t n;
    ent *e = model(60, &n);
    char path[300], bad[300];
    path_of(path, "small.sst");
    path_of(bad, "bad.sst");
    sst_file_info fi = build(path, e, n, opts(1, 256)); /* many small blocks */
    sst_builder *b;
    sst_options o = opts(1, 256);
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK); /* again, with a range deletion */
    buf k = {0};
    char v[128];
    for (size_t x = 0; x < n; x++) {
        ikey_of(&k, e[x].i, e[x].seq, e[x].type);
        size_t vl = e[x].type == ENG_TYPE_VALUE ? value_of(v, e[x].i, e[x].seq) : 0;
        sst_builder_add(b, slice_make(k.data, k.len), slice_make(v, vl));
    }
    sst_builder_add_range_del(b, slice_make("user9", 5), slice_make("user99", 6), 1);
    sst_file_info_free(&fi);
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_OK);
    size_t size;
    char *orig = slurp(path, &size);
    CHECK(read_all_or_detect(path, e, n, 60, 1, NULL, 1) == 0);
    spit(bad, orig, size);
    int fd = open(bad, O_WRONLY);
    for (size_t pos = 0; pos < size; pos++) {
        char flipped = (char)(orig[pos] ^ (1 << (pos % 8)));
        CHECK(pwrite(fd, &flipped, 1, (off_t)pos) == 1);
        CHECK_MSG(read_all_or_detect(bad, e, n, 60, 3, NULL, 1),
                  "flipped byte %zu of %zu went unnoticed", pos, size);
        CHECK(pwrite(fd, &orig[pos], 1, (off_t)pos) == 1);
    }
    close(fd);
    free(orig);
    buf_free(&k);
    sst_file_info_free(&fi);
    free(e);
}

TEST(RandomFlippedBytesOfABigCompressedTableAreCorruption)
{
    size_t n;
    ent *e = model(30000, &n);
    char path[300], bad[300];
    path_of(path, "big.sst");
    path_of(bad, "bad.sst");
    sst_file_info fi = build(path, e, n, opts(1, 4096));
    size_t size;
    char *orig = slurp(path, &size);
    block_cache *c = cache_new(4 << 20);
    uint64_t x = 12345;
    for (int q = 0; q < 12; q++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t pos = q < 2 ? size - 1 - (size_t)q * 40 : (size_t)(x >> 33) % size; /* footer too */
        orig[pos] ^= 0x10;
        spit(bad, orig, size);
        orig[pos] ^= 0x10;
        /* a fresh file number: a cached block of the good file must not mask it */
        CHECK_MSG(read_all_or_detect(bad, e, n, 30000, 97, c, 100 + (uint64_t)q),
                  "flipped byte %zu went unnoticed", pos);
    }
    cache_free(c);
    free(orig);
    sst_file_info_free(&fi);
    free(e);
}

TEST(EveryTruncationIsCorruptionAtOpen)
{
    size_t n;
    ent *e = model(200, &n);
    char path[300], bad[300];
    path_of(path, "t.sst");
    path_of(bad, "trunc.sst");
    sst_file_info fi = build(path, e, n, opts(1, 512));
    size_t size;
    char *orig = slurp(path, &size);
    spit(bad, orig, size);
    for (size_t len = size; len-- > 0;) {
        CHECK(truncate(bad, (off_t)len) == 0);
        sst_reader *r;
        CHECK_EQ_INT(sst_reader_open(bad, 1, NULL, &r), ENG_CORRUPTION);
    }
    /* trailing garbage after a good table: the footer is not at the end */
    char *more = malloc(size + 3);
    memcpy(more, orig, size);
    memcpy(more + size, "xyz", 3);
    spit(bad, more, size + 3);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(bad, 1, NULL, &r), ENG_CORRUPTION);
    free(more);
    free(orig);
    sst_file_info_free(&fi);
    free(e);
}

TEST(WrongMagicOrVersionIsCorruption)
{
    size_t n;
    ent *e = model(50, &n);
    char path[300];
    path_of(path, "v.sst");
    sst_file_info fi = build(path, e, n, opts(1, 4096));
    size_t size;
    char *d = slurp(path, &size);
    char *f = d + size - SST_FOOTER_SIZE;
    enc_fixed32(f + SST_FOOTER_VERSION_OFFSET, SST_FORMAT_VERSION + 1);
    enc_fixed32(f + SST_FOOTER_CHECKSUM_OFFSET, eng_checksum(f, SST_FOOTER_CHECKSUM_OFFSET));
    spit(path, d, size);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_CORRUPTION);
    CHECK(strstr(eng_last_error(), "version") != NULL);
    enc_fixed32(f + SST_FOOTER_VERSION_OFFSET, SST_FORMAT_VERSION);
    enc_fixed64(f + SST_FOOTER_MAGIC_OFFSET, 0x1234);
    spit(path, d, size);
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_CORRUPTION);
    CHECK(strstr(eng_last_error(), "magic") != NULL);
    /* a handle past the footer, with a valid footer checksum */
    enc_fixed64(f + SST_FOOTER_MAGIC_OFFSET, SST_MAGIC);
    enc_fixed64(f + 48, size);
    enc_fixed32(f + SST_FOOTER_CHECKSUM_OFFSET, eng_checksum(f, SST_FOOTER_CHECKSUM_OFFSET));
    spit(path, d, size);
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_CORRUPTION);
    CHECK(strstr(eng_last_error(), "offset") != NULL);
    free(d);
    sst_file_info_free(&fi);
    free(e);
}

/* Scans with fill_cache = 0 (the readahead path): every entry forwards,
 * then a seek, some steps back (which read single blocks) and on to the
 * end again. */
static void readahead_scan(sst_reader *r, const ent *e, size_t n)
{
    iter *it = sst_reader_iter(r, 0);
    size_t x = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        check_entry(it, &e[x++]);
    CHECK_EQ_INT(x, n);
    buf k = {0};
    size_t at = lower_bound(e, n, e[n / 2].i, ENG_MAX_SEQUENCE);
    ikey_of(&k, e[n / 2].i, ENG_MAX_SEQUENCE, ENG_TYPE_SEEK);
    iter_seek(it, slice_make(k.data, k.len));
    check_entry(it, &e[at]);
    for (int q = 0; q < 300 && at > 0; q++) {
        iter_prev(it);
        check_entry(it, &e[--at]);
    }
    for (; iter_valid(it); iter_next(it))
        check_entry(it, &e[at++]);
    CHECK_EQ_INT(at, n);
    CHECK_EQ_INT(iter_status(it), ENG_OK);
    iter_free(it);
    buf_free(&k);
}

TEST(CompactionScanReadsAheadAcrossManyWindows)
{
    size_t n;
    ent *e = model(60000, &n); /* a few MB: the window grows to its maximum */
    char path[300];
    path_of(path, "ahead.sst");
    for (int level = 0; level <= 1; level++) {
        sst_file_info fi = build(path, e, n, opts(level, 4096));
        CHECK(fi.file_size > (2u << 20) / (level ? 4 : 1));
        block_cache *c = cache_new(1 << 20);
        sst_reader *r;
        CHECK_EQ_INT(sst_reader_open(path, 11, NULL, &r), ENG_OK);
        readahead_scan(r, e, n);
        sst_reader_close(r);
        CHECK_EQ_INT(sst_reader_open(path, 12, c, &r), ENG_OK);
        iter *it = sst_reader_iter(r, 1); /* some blocks cached, the scan mixes both */
        size_t x = 0;
        for (iter_seek_first(it); iter_valid(it) && x < n / 3; iter_next(it))
            x++;
        iter_free(it);
        readahead_scan(r, e, n);
        sst_reader_close(r);
        cache_free(c);
        sst_file_info_free(&fi);
    }
    free(e);
}

TEST(FlippedByteInAReadAheadWindowIsCorruption)
{
    size_t n;
    ent *e = model(20000, &n);
    char path[300], bad[300];
    path_of(path, "ahead.sst");
    path_of(bad, "bad.sst");
    sst_file_info fi = build(path, e, n, opts(1, 4096));
    size_t size;
    char *orig = slurp(path, &size);
    uint64_t x = 777;
    for (int q = 0; q < 8; q++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t pos = (size_t)(x >> 33) % (size / 2); /* in the data blocks */
        orig[pos] ^= 0x04;
        spit(bad, orig, size);
        orig[pos] ^= 0x04;
        sst_reader *r;
        CHECK_EQ_INT(sst_reader_open(bad, 1, NULL, &r), ENG_OK);
        iter *it = sst_reader_iter(r, 0);
        size_t m = 0;
        for (iter_seek_first(it); iter_valid(it); iter_next(it))
            check_entry(it, &e[m++]);
        CHECK_MSG(iter_status(it) == ENG_CORRUPTION, "flipped byte %zu went unnoticed", pos);
        CHECK(m < n);
        iter_free(it);
        sst_reader_close(r);
    }
    free(orig);
    sst_file_info_free(&fi);
    free(e);
}

/* ---- tables with a compression dictionary (format version 2) ---------- */

static sst_options dict_opts(size_t dict_size)
{
    sst_options o = {4096, 6, 10, 0, dict_size};
    return o;
}

TEST(DictionaryTableIsVersion2AndRoundTrips)
{
    block_cache *c = cache_new(1 << 20);
    round_trip_with(dict_opts(8192), c, SST_FORMAT_VERSION_DICT);
    cache_free(c);
    round_trip_with(dict_opts(4096), NULL, SST_FORMAT_VERSION_DICT);
}

TEST(DictionaryTableReadsAheadInCompactionScans)
{
    size_t n;
    ent *e = model(30000, &n);
    char path[300];
    path_of(path, "dra.sst");
    sst_file_info fi = build(path, e, n, dict_opts(8192));
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    readahead_scan(r, e, n);
    sst_reader_close(r);
    sst_file_info_free(&fi);
    free(e);
}

/* The dictionary trained from the first SST_DICT_SAMPLE_BYTES of blocks
 * (one fastCover pass, table_builder.c) pays for itself over a table of
 * several times that: the table is smaller than when compressed without. */
TEST(DictionaryTableIsSmallerThanPlainCompression)
{
    size_t n;
    ent *e = model(60000, &n);
    char path[300];
    path_of(path, "dsize.sst");
    sst_options plain = dict_opts(0);
    sst_file_info fp = build(path, e, n, plain);
    sst_file_info fd = build(path, e, n, dict_opts(8192));
    CHECK(fp.file_size > SST_DICT_SAMPLE_BYTES); /* most blocks come after the samples */
    /* 17% smaller when written */
    CHECK_MSG(fd.file_size < fp.file_size - fp.file_size / 10, "dictionary %llu bytes, plain %llu",
              (unsigned long long)fd.file_size, (unsigned long long)fp.file_size);
    sst_file_info_free(&fp);
    sst_file_info_free(&fd);
    free(e);
}

/* Old-format tables: no dictionary asked for, compression off, or too few
 * blocks to train one: all stay version 1 and read as before. */
TEST(TablesWithoutADictionaryStayVersion1)
{
    round_trip_with(opts(1, 4096), NULL, SST_FORMAT_VERSION);
    sst_options off = dict_opts(8192);
    off.compression_level = 0;
    round_trip_with(off, NULL, SST_FORMAT_VERSION);
    size_t n;
    ent *e = model(40, &n); /* one block */
    char path[300];
    path_of(path, "tiny.sst");
    sst_file_info fi = build(path, e, n, dict_opts(8192));
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    sst_props p;
    sst_reader_props(r, &p);
    CHECK_EQ_INT(p.format_version, SST_FORMAT_VERSION);
    sst_reader_close(r);
    CHECK(read_all_or_detect(path, e, n, 40, 1, NULL, 1) == 0);
    sst_file_info_free(&fi);
    free(e);
}

/* Builds a dictionary table at path and returns its bytes, size and the
 * dictionary block's handle. */
static char *dict_table(const char *path, const ent *e, size_t n, size_t *size, sst_handle *dh)
{
    sst_file_info fi = build(path, e, n, dict_opts(8192));
    sst_file_info_free(&fi);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    sst_props p;
    sst_reader_props(r, &p);
    sst_reader_close(r);
    CHECK_EQ_INT(p.format_version, SST_FORMAT_VERSION_DICT);
    dh->offset = p.dict_offset;
    dh->size = p.dict_size;
    CHECK(dh->size > 64);
    return slurp(path, size);
}

TEST(DamagedDictionaryIsCorruptionAtOpen)
{
    size_t n, size;
    ent *e = model(20000, &n);
    char path[300], bad[300];
    path_of(path, "dict.sst");
    path_of(bad, "baddict.sst");
    sst_handle dh;
    char *d = dict_table(path, e, n, &size, &dh);
    sst_reader *r;
    /* any flipped byte of the dictionary or its trailer */
    for (uint64_t pos = dh.offset; pos < dh.offset + dh.size + SST_BLOCK_TRAILER_SIZE;
         pos += 1 + dh.size / 50) {
        d[pos] ^= 0x04;
        spit(bad, d, size);
        d[pos] ^= 0x04;
        CHECK_MSG(sst_reader_open(bad, 1, NULL, &r) == ENG_CORRUPTION, "flip at %llu",
                  (unsigned long long)pos);
        CHECK(strstr(eng_last_error(), "dictionary") || strstr(eng_last_error(), "compression"));
    }
    /* a checksummed block that is not a zstd dictionary */
    char *copy = malloc(size);
    memcpy(copy, d, size);
    memset(copy + dh.offset, 0x5a, 16);
    enc_fixed32(copy + dh.offset + dh.size + 1, eng_checksum(copy + dh.offset, dh.size + 1));
    spit(bad, copy, size);
    CHECK_EQ_INT(sst_reader_open(bad, 1, NULL, &r), ENG_CORRUPTION);
    CHECK(strstr(eng_last_error(), "bad compression dictionary") != NULL);
    /* version 2 without the dictionary's properties: make the footer say
     * 1 and the dictionary-compressed blocks have no dictionary */
    memcpy(copy, d, size);
    char *f = copy + size - SST_FOOTER_SIZE;
    enc_fixed32(f + SST_FOOTER_VERSION_OFFSET, SST_FORMAT_VERSION);
    enc_fixed32(f + SST_FOOTER_CHECKSUM_OFFSET, eng_checksum(f, SST_FOOTER_CHECKSUM_OFFSET));
    spit(bad, copy, size);
    CHECK(read_all_or_detect(bad, e, n, 20000, 7, NULL, 1));
    CHECK(read_all_or_detect(path, e, n, 20000, 7, NULL, 1) == 0);
    free(copy);
    free(d);
    free(e);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
