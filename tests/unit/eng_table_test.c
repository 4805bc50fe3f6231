/*
 * eng_table_test.c -- table_builder.c and table_reader.c: round trips with
 * many versions, deletions and range deletions, compression on and off,
 * seeks and iteration both ways against a model, the bloom filter, the
 * block cache, and damaged files (every flipped byte, every truncation).
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

/* ---- the model: user key i has 1-3 versions, some of them deletions ---- */

typedef struct ent {
    uint32_t i;
    uint64_t seq;
    int type;
} ent;

static int versions_of(uint32_t i)
{
    return 1 + (int)((i * 2654435761u) >> 30) % 3;
}
static uint64_t seq_of(uint32_t i, int j)
{
    return 1000 - 100 * (uint64_t)j + i % 50;
}
static int type_of(uint32_t i, int j)
{
    return (i + (uint32_t)j) % 11 == 0 ? ENG_TYPE_DELETION : ENG_TYPE_VALUE;
}

static slice ukey(char *s, uint32_t i)
{
    return slice_make(s, (size_t)sprintf(s, "user%08u", i));
}

static int random_values;
static size_t value_of(char *out, uint32_t i, uint64_t seq)
{
    size_t n = (size_t)sprintf(out, "value-%u-%llu-", i, (unsigned long long)seq);
    size_t len = 20 + i % 80;
    uint64_t x = i * 0x9E3779B97F4A7C15ull + seq;
    for (; n < len; n++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        out[n] = random_values ? (char)x : (char)('a' + n % 7);
    }
    return n;
}

static ent *model(uint32_t nkeys, size_t *n)
{
    ent *e = malloc(nkeys * 3 * sizeof(ent));
    size_t m = 0;
    for (uint32_t i = 0; i < nkeys; i++)
        for (int j = 0; j < versions_of(i); j++)
            e[m++] = (ent){i, seq_of(i, j), type_of(i, j)};
    *n = m;
    return e;
}

static void ikey_of(buf *k, uint32_t i, uint64_t seq, int type)
{
    char s[32];
    k->len = 0;
    ikey_append(k, ukey(s, i), seq, type);
}

static sst_options opts(int level, size_t block_size)
{
    sst_options o = {block_size, level, 10};
    return o;
}

static void path_of(char *p, const char *name)
{
    sprintf(p, "%s/%s", test_tmpdir(), name);
}

static sst_file_info build(const char *path, const ent *e, size_t n, sst_options o)
{
    sst_builder *b;
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    buf k = {0};
    char v[128];
    for (size_t x = 0; x < n; x++) {
        ikey_of(&k, e[x].i, e[x].seq, e[x].type);
        size_t vl = e[x].type == ENG_TYPE_VALUE ? value_of(v, e[x].i, e[x].seq) : 0;
        CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make(v, vl)), ENG_OK);
    }
    CHECK_EQ_INT(sst_builder_entries(b), n);
    sst_file_info fi;
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_OK);
    buf_free(&k);
    return fi;
}

static void check_entry(iter *it, const ent *e)
{
    CHECK(iter_valid(it));
    buf k = {0};
    char v[128];
    ikey_of(&k, e->i, e->seq, e->type);
    slice got = iter_key(it);
    CHECK_MSG(got.size == k.len && memcmp(got.data, k.data, k.len) == 0, "key of %u@%llu", e->i,
              (unsigned long long)e->seq);
    size_t vl = e->type == ENG_TYPE_VALUE ? value_of(v, e->i, e->seq) : 0;
    CHECK(iter_value(it).size == vl && memcmp(iter_value(it).data, v, vl) == 0);
    buf_free(&k);
}

/* Newest version of user key i with seq <= snap, or -1. */
static int visible(uint32_t i, uint64_t snap)
{
    for (int j = 0; j < versions_of(i); j++)
        if (seq_of(i, j) <= snap) return j;
    return -1;
}

static void check_get(sst_reader *r, uint32_t i, uint64_t snap)
{
    char s[32], v[128];
    int type = -1;
    uint64_t fseq = 0;
    char *val = NULL;
    size_t vl = 0;
    eng_status st = sst_reader_get(r, ukey(s, i), snap, &type, &fseq, &val, &vl);
    int j = visible(i, snap);
    if (j < 0) {
        CHECK_MSG(st == ENG_NOTFOUND, "get %u@%llu: %d", i, (unsigned long long)snap, st);
        return;
    }
    CHECK_MSG(st == ENG_OK, "get %u@%llu: %d", i, (unsigned long long)snap, st);
    CHECK_EQ_INT(fseq, seq_of(i, j));
    CHECK_EQ_INT(type, type_of(i, j));
    if (type == ENG_TYPE_DELETION) {
        CHECK(val == NULL);
    } else {
        size_t want = value_of(v, i, fseq);
        CHECK(vl == want && memcmp(val, v, vl) == 0);
    }
    free(val);
}

static size_t lower_bound(const ent *e, size_t n, uint32_t i, uint64_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e[mid].i < i || (e[mid].i == i && e[mid].seq > seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void round_trip_with(sst_options o, block_cache *cache, uint32_t want_version)
{
    size_t n;
    ent *e = model(100000, &n);
    char path[300];
    path_of(path, "000007.sst");
    sst_file_info fi = build(path, e, n, o);
    CHECK_EQ_INT(fi.entries, n);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 7, cache, &r), ENG_OK);
    CHECK_EQ_INT(sst_reader_file_size(r), fi.file_size);
    sst_props p;
    sst_reader_props(r, &p);
    CHECK_EQ_INT(p.format_version, want_version);
    CHECK_EQ_INT(p.dict_size > 0, want_version == SST_FORMAT_VERSION_DICT);

    iter *it = sst_reader_iter(r, 1);
    size_t x = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        check_entry(it, &e[x++]);
    CHECK_EQ_INT(x, n);
    for (iter_seek_last(it); iter_valid(it); iter_prev(it))
        check_entry(it, &e[--x]);
    CHECK_EQ_INT(x, 0);
    CHECK_EQ_INT(iter_status(it), ENG_OK);
    buf k = {0};
    for (int q = 0; q < 1500; q++) {
        uint32_t i = (uint32_t)(q * 7919u) % 100010;
        uint64_t snap = q % 3 ? seq_of(i, q % 3) : ENG_MAX_SEQUENCE;
        ikey_of(&k, i, snap, ENG_TYPE_SEEK);
        iter_seek(it, slice_make(k.data, k.len));
        size_t want = lower_bound(e, n, i, snap);
        if (want == n) {
            CHECK(!iter_valid(it));
            continue;
        }
        check_entry(it, &e[want]);
        if (want > 0) {
            iter_prev(it);
            check_entry(it, &e[want - 1]);
            iter_next(it);
            check_entry(it, &e[want]);
        }
        iter_next(it);
        if (want + 1 < n)
            check_entry(it, &e[want + 1]);
        else
            CHECK(!iter_valid(it));
    }
    iter_free(it);
    for (uint32_t i = 0; i < 100000; i += 13) {
        check_get(r, i, ENG_MAX_SEQUENCE);
        for (int j = 0; j < versions_of(i); j++) {
            check_get(r, i, seq_of(i, j));
            check_get(r, i, seq_of(i, j) - 1);
        }
    }
    buf_free(&k);
    sst_reader_close(r);
    sst_file_info_free(&fi);
    free(e);
}

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
