/*
 * eng_table_test.c -- table_builder.c and table_reader.c: round trips with
 * many versions, deletions and range deletions, compression on and off,
 * seeks and iteration both ways against a model (eng_table_util.h), the
 * bloom filter, the block cache. Damaged files, read-ahead scans and
 * dictionary tables are in eng_table_damage_test.c.
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

static void round_trip(int level, block_cache *cache)
{
    round_trip_with(opts(level, 4096), cache, SST_FORMAT_VERSION);
}

TEST(RoundTrip100kEntriesUncompressedNoCache)
{
    round_trip(0, NULL);
}

TEST(RoundTrip100kEntriesCompressedWithCache)
{
    block_cache *c = cache_new(1 << 20);
    round_trip(1, c);
    CHECK(cache_hits(c) > 0);
    CHECK(cache_usage(c) <= (1 << 20));
    cache_free(c);
}

TEST(CompressionShrinksTextAndStoresRandomBlocksRaw)
{
    size_t n;
    ent *e = model(20000, &n);
    char p0[300], p1[300];
    path_of(p0, "raw.sst");
    path_of(p1, "zstd.sst");
    random_values = 0;
    sst_file_info f0 = build(p0, e, n, opts(0, 4096)), f1 = build(p1, e, n, opts(3, 4096));
    CHECK_MSG(f1.file_size * 2 < f0.file_size, "zstd %llu vs raw %llu",
              (unsigned long long)f1.file_size, (unsigned long long)f0.file_size);
    sst_file_info_free(&f0);
    sst_file_info_free(&f1);
    /* random values: zstd cannot save 1/8, so blocks stay raw and the file
     * barely grows (keys still compress a little) */
    random_values = 1;
    f0 = build(p0, e, n, opts(0, 4096));
    f1 = build(p1, e, n, opts(3, 4096));
    CHECK_MSG(f1.file_size <= f0.file_size, "zstd %llu vs raw %llu",
              (unsigned long long)f1.file_size, (unsigned long long)f0.file_size);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(p1, 1, NULL, &r), ENG_OK);
    for (uint32_t i = 0; i < 20000; i += 13)
        check_get(r, i, ENG_MAX_SEQUENCE);
    sst_reader_close(r);
    random_values = 0;
    sst_file_info_free(&f0);
    sst_file_info_free(&f1);
    free(e);
}

struct rd {
    char s[64], e[64];
    uint64_t seq;
};
static void collect_rd(void *ctx, slice start, slice end, uint64_t seq)
{
    struct rd **p = ctx;
    memcpy((*p)->s, start.data, start.size);
    (*p)->s[start.size] = 0;
    memcpy((*p)->e, end.data, end.size);
    (*p)->e[end.size] = 0;
    (*p)->seq = seq;
    (*p)++;
}

TEST(RangeDeletionsRoundTripSortedAndWidenTheBounds)
{
    char path[300];
    path_of(path, "rd.sst");
    sst_options o = opts(1, 4096);
    sst_builder *b;
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    buf k = {0};
    ikey_append(&k, slice_make("m", 1), 5, ENG_TYPE_VALUE);
    CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make("v", 1)), ENG_OK);
    sst_builder_add_range_del(b, slice_make("p", 1), slice_make("z", 1), 9);
    sst_builder_add_range_del(b, slice_make("c", 1), slice_make("f", 1), 3);
    sst_builder_add_range_del(b, slice_make("c", 1), slice_make("e", 1), 12);
    sst_file_info fi;
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_OK);
    CHECK_EQ_INT(fi.entries, 1);
    CHECK_EQ_INT(fi.range_deletions, 3);
    CHECK_EQ_INT(fi.smallest_seq, 3);
    CHECK_EQ_INT(fi.largest_seq, 12);
    slice sm = slice_make(fi.smallest.data, fi.smallest.len);
    slice lg = slice_make(fi.largest.data, fi.largest.len);
    CHECK_MEM(ikey_user_key(sm).data, ikey_user_key(sm).size, "c");
    CHECK_EQ_INT(ikey_sequence(sm), 12);
    CHECK_MEM(ikey_user_key(lg).data, ikey_user_key(lg).size, "z");
    CHECK_EQ_INT(ikey_sequence(lg), ENG_MAX_SEQUENCE);

    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    struct rd got[3], *p = got;
    sst_reader_range_dels(r, collect_rd, &p);
    CHECK_EQ_INT(p - got, 3);
    CHECK(!strcmp(got[0].s, "c") && !strcmp(got[0].e, "e") && got[0].seq == 12);
    CHECK(!strcmp(got[1].s, "c") && !strcmp(got[1].e, "f") && got[1].seq == 3);
    CHECK(!strcmp(got[2].s, "p") && !strcmp(got[2].e, "z") && got[2].seq == 9);
    /* range deletions are not point entries */
    iter *it = sst_reader_iter(r, 1);
    iter_seek_first(it);
    CHECK(iter_valid(it));
    CHECK_MEM(ikey_user_key(iter_key(it)).data, 1, "m");
    iter_next(it);
    CHECK(!iter_valid(it));
    CHECK_EQ_INT(iter_status(it), ENG_OK);
    iter_free(it);
    sst_reader_close(r);
    sst_file_info_free(&fi);
    buf_free(&k);
}

TEST(EmptyTableOpensAndFindsNothing)
{
    char path[300];
    path_of(path, "empty.sst");
    sst_options o = opts(1, 4096);
    sst_builder *b;
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    sst_file_info fi;
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_OK);
    CHECK_EQ_INT(fi.entries, 0);
    CHECK_EQ_INT(fi.smallest.len, 0);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    char *v;
    size_t vl;
    int t;
    uint64_t s;
    CHECK_EQ_INT(sst_reader_get(r, slice_make("a", 1), 100, &t, &s, &v, &vl), ENG_NOTFOUND);
    iter *it = sst_reader_iter(r, 1);
    iter_seek_first(it);
    CHECK(!iter_valid(it));
    iter_seek_last(it);
    CHECK(!iter_valid(it));
    CHECK_EQ_INT(iter_status(it), ENG_OK);
    iter_free(it);
    sst_reader_close(r);
}

TEST(BloomFilterAnswersMostMissesWithoutReadingBlocks)
{
    size_t n;
    ent *e = model(20000, &n);
    char path[300];
    path_of(path, "bloom.sst");
    sst_file_info fi = build(path, e, n, opts(1, 4096));
    block_cache *c = cache_new(1 << 20);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, c, &r), ENG_OK);
    char s[32];
    int t;
    uint64_t fs;
    char *v;
    size_t vl;
    for (uint32_t i = 20000; i < 30000; i++)
        CHECK_EQ_INT(sst_reader_get(r, ukey(s, i), ENG_MAX_SEQUENCE, &t, &fs, &v, &vl),
                     ENG_NOTFOUND);
    uint64_t useful = sst_reader_bloom_useful(r);
    CHECK_MSG(useful > 9800, "bloom useful %llu of 10000", (unsigned long long)useful);
    CHECK(cache_misses(c) < 200);
    sst_reader_close(r);
    cache_free(c);
    sst_file_info_free(&fi);
    free(e);
}

/* The policy of FilterPolicySkippedKeysAreStillFound: "user00005..."
 * (5000..5999) under 9 bytes, then "user0000..." (6000..9999) under 8,
 * which replaces "user00005" before it, and "user0001..." (10000..19999)
 * under 8: 15000 keys left out, under two prefixes. */
static int skip_some(void *ctx, const char *key, size_t klen, size_t *plen)
{
    int *asked = ctx;
    (*asked)++;
    if (klen >= 9 && !memcmp(key, "user00005", 9)) return *plen = 9, 1;
    if (klen >= 8 && !memcmp(key, "user0001", 8)) return *plen = 8, 1;
    if (klen >= 9 && !memcmp(key, "user0000", 8) && key[8] >= '6') return *plen = 8, 1;
    *plen = 0;
    return 0;
}

TEST(FilterPolicySkippedKeysAreStillFound)
{
    size_t n;
    ent *e = model(30000, &n);
    char path[300], path_full[300];
    path_of(path, "skip.sst");
    path_of(path_full, "full.sst");
    int asked = 0;
    eng_filter_policy pol = {skip_some, &asked};
    sst_options o = opts(1, 4096);
    sst_file_info full = build(path_full, e, n, o);
    o.filter_policy = &pol;
    sst_file_info fi = build(path, e, n, o);
    /* 15000 of the 30000 keys left out: about 15000 * 10 bits fewer */
    CHECK_MSG(full.file_size - fi.file_size > 17000, "%llu vs %llu",
              (unsigned long long)fi.file_size, (unsigned long long)full.file_size);
    CHECK_MSG(asked < 16000, "policy asked %d times", asked); /* not for covered keys */
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    char s[32];
    int t;
    uint64_t fs;
    char *v;
    size_t vl;
    for (uint32_t i = 0; i < 30000; i++) {
        CHECK_MSG(sst_reader_get(r, ukey(s, i), ENG_MAX_SEQUENCE, &t, &fs, &v, &vl) == ENG_OK,
                  "key %u", i);
        free(v);
    }
    /* Misses: under a skipped prefix the filter is not asked; elsewhere it
     * answers them. */
    uint64_t u0 = sst_reader_bloom_useful(r);
    for (uint32_t i = 0; i < 1000; i++) {
        int l = sprintf(s, "user0001%04uz", i);
        CHECK_EQ_INT(
            sst_reader_get(r, slice_make(s, (size_t)l), ENG_MAX_SEQUENCE, &t, &fs, &v, &vl),
            ENG_NOTFOUND);
    }
    CHECK_EQ_INT(sst_reader_bloom_useful(r), u0);
    for (uint32_t i = 0; i < 1000; i++) {
        int l = sprintf(s, "user0002%04uz", i);
        CHECK_EQ_INT(
            sst_reader_get(r, slice_make(s, (size_t)l), ENG_MAX_SEQUENCE, &t, &fs, &v, &vl),
            ENG_NOTFOUND);
    }
    CHECK(sst_reader_bloom_useful(r) - u0 > 950);
    sst_reader_close(r);
    sst_file_info_free(&fi);
    sst_file_info_free(&full);
    free(e);
}

static slice long_key(char *key, int i)
{
    memset(key, 'k', 900);
    sprintf(key + 900, "%04d", i);
    return slice_make(key, 904);
}

TEST(KeysLongerThanEveryInlineBufferRoundTrip)
{
    char path[300], key[1000];
    path_of(path, "long.sst");
    sst_options o = opts(1, 512);
    sst_builder *b;
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    buf k = {0};
    for (int i = 0; i < 50; i++) {
        k.len = 0;
        ikey_append(&k, long_key(key, i), 1, ENG_TYPE_VALUE);
        CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make(key + 900, 4)), 0);
    }
    sst_file_info fi;
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_OK);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    for (int i = 0; i < 50; i++) {
        char *v;
        size_t vl;
        int t;
        uint64_t s;
        CHECK_EQ_INT(sst_reader_get(r, long_key(key, i), 5, &t, &s, &v, &vl), ENG_OK);
        CHECK(vl == 4 && memcmp(v, key + 900, 4) == 0);
        free(v);
    }
    sst_reader_close(r);
    sst_file_info_free(&fi);
    buf_free(&k);
}

TEST(OutOfOrderShortOrRangeTypedAddsAreInvalid)
{
    char path[300];
    path_of(path, "bad-add.sst");
    sst_options o = opts(1, 4096);
    sst_builder *b;
    buf k = {0};
    ikey_append(&k, slice_make("a", 1), 3, ENG_TYPE_VALUE);
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make("1", 1)), ENG_OK);
    CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make("2", 1)), ENG_INVALID);
    sst_builder_abandon(b);
    struct stat st;
    CHECK(stat(path, &st) != 0); /* abandon deletes the file */

    k.len = 0;
    ikey_append(&k, slice_make("a", 1), 3, ENG_TYPE_RANGE_DELETION);
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make("b", 1)), ENG_INVALID);
    sst_builder_abandon(b);
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    CHECK_EQ_INT(sst_builder_add(b, slice_make("short", 5), slice_make("", 0)), ENG_INVALID);
    sst_file_info fi;
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_INVALID); /* the error sticks */
    CHECK(stat(path, &st) != 0);
    buf_free(&k);
}

/* Index keys that tie on the 8 bytes the reader's search array keeps, and
 * targets below, inside and above the prefix every key shares. */
TEST(IndexSearchWithTiedPrefixesFindsTheRightBlock)
{
    char path[300], keys[3000][24];
    path_of(path, "ties.sst");
    sst_options o = opts(0, 128);
    sst_builder *b;
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    buf k = {0};
    for (int i = 0; i < 3000; i++) {
        sprintf(keys[i], "p%04dtailtail%02d", i / 10, i % 10);
        k.len = 0;
        ikey_append(&k, slice_make(keys[i], 15), 1, ENG_TYPE_VALUE);
        CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make(keys[i], 15)), 0);
    }
    sst_file_info fi;
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_OK);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 1, NULL, &r), ENG_OK);
    iter *it = sst_reader_iter(r, 1);
    const char *odd[] = {"",
                         "o",
                         "p",
                         "p0",
                         "p0000",
                         "p0150tailtail05\x01",
                         "p0150tailtaik",
                         "p0299tailtail09",
                         "p0299tailtail1",
                         "p03",
                         "q"};
    for (int q = 0; q < 3000 + 11; q++) {
        char t[32];
        size_t tl;
        if (q < 3000) {
            tl = 15;
            memcpy(t, keys[(q * 7) % 3000], tl);
            if (q % 3 == 1) t[14]--; /* between keys, often below a tie */
        } else {
            tl = strlen(odd[q - 3000]);
            memcpy(t, odd[q - 3000], tl);
        }
        size_t want = 0; /* the first key >= t */
        while (want < 3000 && slice_compare(slice_make(keys[want], 15), slice_make(t, tl)) < 0)
            want++;
        k.len = 0;
        ikey_append(&k, slice_make(t, tl), 5, ENG_TYPE_SEEK);
        iter_seek(it, slice_make(k.data, k.len));
        if (want == 3000) {
            CHECK_MSG(!iter_valid(it), "seek %.*s", (int)tl, t);
            continue;
        }
        CHECK_MSG(iter_valid(it), "seek %.*s", (int)tl, t);
        CHECK_MSG(iter_value(it).size == 15 && !memcmp(iter_value(it).data, keys[want], 15),
                  "seek %.*s", (int)tl, t);
        char *v;
        size_t vl;
        int ty;
        uint64_t fs;
        int exact = slice_compare(slice_make(keys[want], 15), slice_make(t, tl)) == 0;
        CHECK_EQ_INT(sst_reader_get(r, slice_make(t, tl), 5, &ty, &fs, &v, &vl),
                     exact ? ENG_OK : ENG_NOTFOUND);
        if (exact) free(v);
    }
    iter_free(it);
    sst_reader_close(r);
    sst_file_info_free(&fi);
    buf_free(&k);
}

TEST(FillCacheZeroLooksUpButDoesNotInsert)
{
    size_t n;
    ent *e = model(5000, &n);
    char path[300];
    path_of(path, "fill.sst");
    sst_file_info fi = build(path, e, n, opts(1, 4096));
    block_cache *c = cache_new(8 << 20);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 3, c, &r), ENG_OK);
    iter *it = sst_reader_iter(r, 0);
    size_t x = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        x++;
    CHECK_EQ_INT(x, n);
    iter_free(it);
    CHECK_EQ_INT(cache_usage(c), 0);
    CHECK_EQ_INT(cache_hits(c), 0);
    it = sst_reader_iter(r, 1);
    for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
    }
    iter_free(it);
    size_t used = cache_usage(c);
    CHECK(used > 0);
    it = sst_reader_iter(r, 0);
    for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
    }
    iter_free(it);
    CHECK(cache_hits(c) > 0);
    CHECK_EQ_INT(cache_usage(c), used);
    sst_reader_close(r);
    cache_free(c);
    sst_file_info_free(&fi);
    free(e);
}

TEST(IteratorKeepsItsBlockAcrossEraseFile)
{
    size_t n;
    ent *e = model(5000, &n);
    char path[300];
    path_of(path, "erase.sst");
    sst_file_info fi = build(path, e, n, opts(1, 4096));
    block_cache *c = cache_new(8 << 20);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 4, c, &r), ENG_OK);
    iter *it = sst_reader_iter(r, 1);
    iter_seek_first(it);
    check_entry(it, &e[0]);
    cache_erase_file(c, 4); /* the block under the iterator leaves the cache */
    CHECK_EQ_INT(cache_usage(c), 0);
    size_t x = 0;
    for (; iter_valid(it); iter_next(it))
        check_entry(it, &e[x++]); /* ASan: no use after free */
    CHECK_EQ_INT(x, n);
    iter_free(it);
    sst_reader_close(r);
    cache_free(c);
    sst_file_info_free(&fi);
    free(e);
}

struct getter {
    sst_reader *r;
    uint32_t seed;
    int errors;
};

static void *getter_main(void *p)
{
    struct getter *g = p;
    char s[32], v[128];
    for (int q = 0; q < 10000; q++) {
        g->seed = g->seed * 1103515245u + 12345u;
        uint32_t i = (g->seed >> 8) % 6000;
        int t;
        uint64_t fs;
        char *val = NULL;
        size_t vl;
        eng_status st = sst_reader_get(g->r, ukey(s, i), ENG_MAX_SEQUENCE, &t, &fs, &val, &vl);
        if (i >= 5000) {
            g->errors += st != ENG_NOTFOUND;
            continue;
        }
        int ok = st == ENG_OK && fs == seq_of(i, 0) && t == type_of(i, 0);
        if (ok && t == ENG_TYPE_VALUE) ok = vl == value_of(v, i, fs) && !memcmp(val, v, vl);
        g->errors += !ok;
        free(val);
    }
    return NULL;
}

TEST(ConcurrentGetsThroughASmallSharedCache)
{
    size_t n;
    ent *e = model(5000, &n);
    char path[300];
    path_of(path, "mt.sst");
    sst_file_info fi = build(path, e, n, opts(1, 1024));
    block_cache *c = cache_new(64 << 10); /* far smaller than the table: constant eviction */
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 5, c, &r), ENG_OK);
    pthread_t th[4];
    struct getter g[4];
    for (int i = 0; i < 4; i++) {
        g[i] = (struct getter){r, (uint32_t)i * 7777u + 1, 0};
        pthread_create(&th[i], NULL, getter_main, &g[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(g[i].errors, 0);
    CHECK(cache_usage(c) <= (64 << 10));
    sst_reader_close(r);
    cache_free(c);
    sst_file_info_free(&fi);
    free(e);
}

TEST(WriteFailureIsIoErrorAndRemovesTheFile)
{
    char path[300];
    path_of(path, "full.sst");
    struct rlimit old, small;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, SIG_IGN); /* a write past the limit then fails with EFBIG */
    small = old;
    small.rlim_cur = 100 << 10;
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    sst_options o = opts(0, 4096);
    sst_builder *b;
    eng_status s = sst_builder_new(path, &o, &b);
    buf k = {0};
    char v[128];
    for (uint32_t i = 0; s == ENG_OK && i < 20000; i++) {
        ikey_of(&k, i, 1, ENG_TYPE_VALUE);
        s = sst_builder_add(b, slice_make(k.data, k.len), slice_make(v, value_of(v, i, 1)));
    }
    int failed_in_add = s != ENG_OK;
    sst_file_info fi;
    eng_status fs = sst_builder_finish(b, &fi); /* also frees b after a failed add */
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    CHECK(failed_in_add);
    CHECK_EQ_INT(s, ENG_IOERR);
    CHECK_EQ_INT(fs, ENG_IOERR);
    CHECK(strstr(eng_last_error(), path) != NULL);
    struct stat st;
    CHECK(stat(path, &st) != 0);
    buf_free(&k);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
