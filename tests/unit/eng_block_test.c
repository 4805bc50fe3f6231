/*
 * eng_block_test.c -- block_builder.c and block.c: round trips, seek/next/prev
 * against a sorted array, internal-key order, and malformed blocks.
 */
#include "test.h"

#include "engine/block.h"
#include "engine/block_builder.h"
#include "engine/dbformat.h"
#include "engine/table_format.h"

#include "test_rng.h"

typedef struct kv {
    char *k, *v;
    size_t kl, vl;
} kv;

static int kv_cmp(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    return slice_compare(slice_make(x->k, x->kl), slice_make(y->k, y->kl));
}

/* n distinct sorted keys: the empty key, keys sharing long prefixes, long
 * keys (past the iterator's inline buffer) and empty / long values. */
static kv *make_kvs(size_t n)
{
    kv *a = calloc(n, sizeof(kv));
    size_t i = 0;
    a[i].k = malloc(1), a[i].kl = 0, a[i].v = malloc(1), a[i].vl = 0, i++;
    while (i < n) {
        size_t kl = 1 + rnd() % 40;
        if (rnd() % 10 == 0) kl = 100 + rnd() % 300;
        char *k = malloc(kl);
        memset(k, 'p', kl); /* long shared prefixes */
        for (size_t j = kl > 6 ? kl - 6 : 0; j < kl; j++)
            k[j] = (char)('a' + rnd() % 26);
        if (rnd() % 7 == 0) k[rnd() % kl] = (char)rnd(); /* any byte, incl. 0 */
        size_t vl = rnd() % 5 == 0 ? 0 : rnd() % 50;
        if (rnd() % 20 == 0) vl = 200 + rnd() % 2000;
        char *v = malloc(vl + 1);
        for (size_t j = 0; j < vl; j++)
            v[j] = (char)rnd();
        a[i].k = k, a[i].kl = kl, a[i].v = v, a[i].vl = vl;
        i++;
    }
    qsort(a, n, sizeof(kv), kv_cmp);
    /* drop duplicates by making them unique with a suffix byte */
    size_t w = 1;
    for (size_t r = 1; r < n; r++) {
        if (kv_cmp(&a[r], &a[w - 1]) == 0) {
            free(a[r].k);
            free(a[r].v);
            continue;
        }
        a[w++] = a[r];
    }
    for (size_t r = w; r < n; r++)
        a[r].k = a[r].v = NULL;
    return a;
}

static size_t kvs_len(kv *a, size_t n)
{
    size_t m = 0;
    while (m < n && a[m].k)
        m++;
    return m;
}

static void free_kvs(kv *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i].k), free(a[i].v);
    free(a);
}

static void check_at(block_iter *it, kv *a, size_t i)
{
    CHECK(block_iter_valid(it));
    slice k = block_iter_key(it), v = block_iter_value(it);
    CHECK_MSG(k.size == a[i].kl && memcmp(k.data, a[i].k, k.size) == 0, "key at %zu", i);
    CHECK_MSG(v.size == a[i].vl && (v.size == 0 || memcmp(v.data, a[i].v, v.size) == 0),
              "value at %zu", i);
}

static slice build(block_builder *bb, kv *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        block_builder_add(bb, slice_make(a[i].k, a[i].kl), slice_make(a[i].v, a[i].vl));
    return block_builder_finish(bb);
}

TEST(RoundTripManyKeysWithEmptyKeysValuesAndLongPrefixes)
{
    kv *a = make_kvs(5000);
    size_t n = kvs_len(a, 5000);
    block_builder bb;
    block_builder_init(&bb, 16);
    slice s = build(&bb, a, n);
    CHECK(block_builder_size_estimate(&bb) == s.size);
    block b;
    CHECK_EQ_INT(block_parse(&b, s.data, s.size, NULL), ENG_OK);
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
    CHECK(!block_iter_valid(&it));
    size_t i = 0;
    for (block_iter_seek_first(&it); block_iter_valid(&it); block_iter_next(&it))
        check_at(&it, a, i++);
    CHECK_EQ_INT(i, n);
    for (block_iter_seek_last(&it); block_iter_valid(&it); block_iter_prev(&it))
        check_at(&it, a, --i);
    CHECK_EQ_INT(i, 0);
    CHECK_EQ_INT(block_iter_status(&it), ENG_OK);
    block_iter_cleanup(&it);
    block_builder_free(&bb);
    free_kvs(a, 5000);
}

static size_t lower_bound(kv *a, size_t n, slice t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (slice_compare(slice_make(a[mid].k, a[mid].kl), t) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

TEST(SeekNextPrevMatchSortedArrayForEveryRestartInterval)
{
    int intervals[] = {1, 2, 16, 1000};
    for (int r = 0; r < 4; r++) {
        kv *a = make_kvs(700);
        size_t n = kvs_len(a, 700);
        block_builder bb;
        block_builder_init(&bb, intervals[r]);
        slice s = build(&bb, a, n);
        block b;
        CHECK_EQ_INT(block_parse(&b, s.data, s.size, NULL), ENG_OK);
        block_iter it;
        block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
        for (int q = 0; q < 2000; q++) {
            char t[64];
            size_t tl;
            if (q % 2) { /* an existing key, or a key just after one */
                size_t i = rnd() % n;
                tl = a[i].kl < 60 ? a[i].kl : 60;
                memcpy(t, a[i].k, tl);
                if (q % 4 == 1) t[tl++] = 0;
            } else {
                tl = rnd() % 20;
                memset(t, 'p', tl);
                if (tl) t[tl - 1] = (char)('a' + rnd() % 26);
            }
            size_t want = lower_bound(a, n, slice_make(t, tl));
            block_iter_seek(&it, slice_make(t, tl));
            if (want == n) {
                CHECK(!block_iter_valid(&it));
                continue;
            }
            check_at(&it, a, want);
            /* a random walk from there */
            size_t pos = want;
            for (int step = 0; step < 40 && block_iter_valid(&it); step++) {
                if (rnd() % 2) {
                    block_iter_next(&it);
                    if (++pos == n)
                        CHECK(!block_iter_valid(&it));
                    else
                        check_at(&it, a, pos);
                } else {
                    block_iter_prev(&it);
                    if (pos-- == 0)
                        CHECK(!block_iter_valid(&it));
                    else
                        check_at(&it, a, pos);
                }
            }
        }
        CHECK_EQ_INT(block_iter_status(&it), ENG_OK);
        block_iter_cleanup(&it);
        block_builder_free(&bb);
        free_kvs(a, 700);
    }
}

TEST(InternalKeySeekFindsNewestVisibleVersion)
{
    block_builder bb;
    block_builder_init(&bb, 16);
    buf k = {0};
    /* user keys k000..k099, versions with seqs 50, 30, 10 (newest first) */
    for (int u = 0; u < 100; u++) {
        char uk[16];
        snprintf(uk, sizeof(uk), "k%03d", u);
        for (int s = 50; s > 0; s -= 20) {
            k.len = 0;
            ikey_append(&k, slice_make(uk, 4), (uint64_t)s, ENG_TYPE_VALUE);
            block_builder_add(&bb, slice_make(k.data, k.len), slice_make(uk, 4));
        }
    }
    slice s = block_builder_finish(&bb);
    block b;
    CHECK_EQ_INT(block_parse(&b, s.data, s.size, NULL), ENG_OK);
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_IKEY);
    uint64_t snaps[] = {100, 50, 49, 30, 11, 10};
    uint64_t want[] = {50, 50, 30, 30, 10, 10};
    for (int i = 0; i < 6; i++) {
        k.len = 0;
        ikey_append(&k, slice_make("k042", 4), snaps[i], ENG_TYPE_SEEK);
        block_iter_seek(&it, slice_make(k.data, k.len));
        CHECK(block_iter_valid(&it));
        CHECK_MEM(ikey_user_key(block_iter_key(&it)).data, 4, "k042");
        CHECK_EQ_INT(ikey_sequence(block_iter_key(&it)), want[i]);
    }
    k.len = 0; /* below every version of k042: lands on k043 */
    ikey_append(&k, slice_make("k042", 4), 9, ENG_TYPE_SEEK);
    block_iter_seek(&it, slice_make(k.data, k.len));
    CHECK(block_iter_valid(&it));
    CHECK_MEM(ikey_user_key(block_iter_key(&it)).data, 4, "k043");
    CHECK_EQ_INT(ikey_sequence(block_iter_key(&it)), 50);
    block_iter_cleanup(&it);
    buf_free(&k);
    block_builder_free(&bb);
}

TEST(EmptyBlockIsNeverValid)
{
    block_builder bb;
    block_builder_init(&bb, 16);
    slice s = block_builder_finish(&bb);
    CHECK_EQ_INT(s.size, 8);
    block b;
    CHECK_EQ_INT(block_parse(&b, s.data, s.size, NULL), ENG_OK);
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_IKEY);
    block_iter_seek_first(&it);
    CHECK(!block_iter_valid(&it));
    block_iter_seek_last(&it);
    CHECK(!block_iter_valid(&it));
    block_iter_seek(&it, slice_make("abcdefghij", 10));
    CHECK(!block_iter_valid(&it));
    CHECK_EQ_INT(block_iter_status(&it), ENG_OK);
    block_builder_free(&bb);
}

TEST(ResetBuilderStartsAFreshBlock)
{
    block_builder bb;
    block_builder_init(&bb, 4);
    block_builder_add(&bb, slice_make("zz", 2), slice_make("1", 1));
    block_builder_finish(&bb);
    block_builder_reset(&bb);
    CHECK(block_builder_empty(&bb));
    block_builder_add(&bb, slice_make("aa", 2), slice_make("2", 1));
    block_builder_add(&bb, slice_make("ab", 2), slice_make("3", 1));
    slice s = block_builder_finish(&bb);
    block b;
    CHECK_EQ_INT(block_parse(&b, s.data, s.size, NULL), ENG_OK);
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
    block_iter_seek_first(&it);
    CHECK_MEM(block_iter_key(&it).data, block_iter_key(&it).size, "aa");
    block_iter_next(&it);
    CHECK_MEM(block_iter_key(&it).data, block_iter_key(&it).size, "ab");
    CHECK_MEM(block_iter_value(&it).data, block_iter_value(&it).size, "3");
    block_iter_next(&it);
    CHECK(!block_iter_valid(&it));
    block_builder_free(&bb);
}

TEST(BadRestartArrayIsCorruption)
{
    char raw[64] = {0};
    CHECK_EQ_INT(block_parse(&(block){0}, raw, 3, NULL), ENG_CORRUPTION); /* too short */
    enc_fixed32(raw + 12, 0);
    CHECK_EQ_INT(block_parse(&(block){0}, raw, 16, NULL), ENG_CORRUPTION); /* no restarts */
    enc_fixed32(raw + 12, 1000);
    CHECK_EQ_INT(block_parse(&(block){0}, raw, 16, NULL), ENG_CORRUPTION); /* too many */
    enc_fixed32(raw + 8, 20);
    enc_fixed32(raw + 12, 1);
    CHECK_EQ_INT(block_parse(&(block){0}, raw, 16, NULL), ENG_CORRUPTION); /* first != 0 */
    enc_fixed32(raw + 4, 0);
    enc_fixed32(raw + 8, 9);
    enc_fixed32(raw + 12, 2);
    CHECK_EQ_INT(block_parse(&(block){0}, raw, 16, NULL), ENG_CORRUPTION); /* past entries */
    /* an owned buffer is freed on failure too (ASan checks the leak) */
    char *owned = malloc(3);
    CHECK_EQ_INT(block_parse(&(block){0}, owned, 3, owned), ENG_CORRUPTION);
}

/* Walks a block every way; it may be corrupt but must never crash or read
 * outside it (ASan), and a corrupt iterator must say so. */
static void exercise(const block *b, int cmp)
{
    block_iter it;
    block_iter_init(&it, b, cmp);
    int n = 0;
    for (block_iter_seek_first(&it); block_iter_valid(&it) && n < 10000; block_iter_next(&it))
        n++;
    CHECK(block_iter_valid(&it) || block_iter_status(&it) == ENG_OK ||
          block_iter_status(&it) == ENG_CORRUPTION);
    block_iter_cleanup(&it);
    block_iter_init(&it, b, cmp);
    n = 0;
    for (block_iter_seek_last(&it); block_iter_valid(&it) && n < 10000; block_iter_prev(&it))
        n++;
    block_iter_cleanup(&it);
    block_iter_init(&it, b, cmp);
    block_iter_seek(&it, slice_make("pppppppppzq\0\0\0\0\0\0\0\0", 19));
    if (block_iter_valid(&it)) block_iter_prev(&it);
    if (block_iter_valid(&it)) CHECK(cmp == BLOCK_CMP_BYTEWISE || block_iter_key(&it).size >= 8);
    block_iter_cleanup(&it);
}

TEST(EveryFlippedOrTruncatedByteIsSafe)
{
    kv *a = make_kvs(120);
    size_t n = kvs_len(a, 120);
    block_builder bb;
    block_builder_init(&bb, 4);
    for (size_t i = 0; i < n; i++) { /* 8+ byte keys so the ikey order accepts them */
        buf k = {0};
        ikey_append(&k, slice_make(a[i].k, a[i].kl), i, ENG_TYPE_VALUE);
        block_builder_add(&bb, slice_make(k.data, k.len), slice_make(a[i].v, a[i].vl % 30));
        buf_free(&k);
    }
    slice s = block_builder_finish(&bb);
    for (size_t pos = 0; pos < s.size; pos++) {
        for (int f = 0; f < 2; f++) {
            char *copy = malloc(s.size);
            memcpy(copy, s.data, s.size);
            copy[pos] ^= (char)(f == 0 ? 1 << (pos % 8) : 0xff);
            block b;
            if (block_parse(&b, copy, s.size, copy) == ENG_OK) {
                exercise(&b, BLOCK_CMP_IKEY);
                exercise(&b, BLOCK_CMP_BYTEWISE);
                block_release(&b);
            }
        }
        char *trunc = malloc(pos + 1); /* the first pos bytes only */
        memcpy(trunc, s.data, pos);
        block b;
        if (block_parse(&b, trunc, pos, trunc) == ENG_OK) {
            exercise(&b, BLOCK_CMP_IKEY);
            block_release(&b);
        }
    }
    for (int r = 0; r < 3000; r++) { /* random garbage */
        size_t len = rnd() % 200;
        char *g = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            g[i] = (char)(rnd() % 4 == 0 ? rnd() : rnd() % 4);
        if (len >= 8 && rnd() % 2) enc_fixed32(g + len - 4, 1), enc_fixed32(g + len - 8, 0);
        block b;
        if (block_parse(&b, g, len, g) == ENG_OK) {
            exercise(&b, BLOCK_CMP_IKEY);
            exercise(&b, BLOCK_CMP_BYTEWISE);
            block_release(&b);
        }
    }
    block_builder_free(&bb);
    free_kvs(a, 120);
}

TEST(PrevOverAnEntryThatStraddlesARestartIsCorruption)
{
    /* entries "a" [0,4) and "b" [4,12) whose value bytes 00 01 00 'c' are
     * also the entry a restart point at 8 names: the chain from restart 0
     * jumps over the entry prev started from, which no builder writes */
    const unsigned char raw[] = {0, 1, 0, 'a', 0, 1, 4, 'b', 0, 1, 0, 'c',
                                 0, 0, 0, 0,   8, 0, 0, 0,   2, 0, 0, 0};
    block b;
    CHECK_EQ_INT(block_parse(&b, (const char *)raw, sizeof(raw), NULL), ENG_OK);
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
    block_iter_seek_last(&it);
    CHECK(block_iter_valid(&it));
    CHECK_MEM(block_iter_key(&it).data, block_iter_key(&it).size, "c");
    block_iter_prev(&it);
    CHECK(!block_iter_valid(&it));
    CHECK_EQ_INT(block_iter_status(&it), ENG_CORRUPTION);
    block_iter_cleanup(&it);
}

TEST(TwoByteValueLengthsAroundTheFastPathBoundsRoundTrip)
{
    /* value lengths whose varint takes 1, 2 and 3 bytes, next to the
     * bounds of decode_entry's fast path (127/128, 16383/16384), with key
     * lengths on both sides of 128 */
    static const size_t vls[] = {0, 1, 127, 128, 129, 200, 255, 256, 16383, 16384, 20000};
    const size_t nv = sizeof(vls) / sizeof(vls[0]);
    kv a[2 * sizeof(vls) / sizeof(vls[0])];
    for (size_t i = 0; i < 2 * nv; i++) {
        a[i].kl = i < nv ? 10 : 130;
        a[i].k = malloc(a[i].kl);
        memset(a[i].k, 'k', a[i].kl);
        a[i].k[a[i].kl - 2] = (char)('A' + i / 10);
        a[i].k[a[i].kl - 1] = (char)('0' + i % 10);
        if (i >= nv) a[i].k[0] = 'm'; /* the long keys sort after the short */
        a[i].vl = vls[i % nv];
        a[i].v = malloc(a[i].vl + 1);
        for (size_t j = 0; j < a[i].vl; j++)
            a[i].v[j] = (char)(i * 31 + j);
    }
    for (int interval = 1; interval <= 16; interval *= 4) {
        block_builder bb;
        block_builder_init(&bb, interval);
        slice c = build(&bb, a, 2 * nv);
        block b;
        CHECK_EQ_INT(block_parse(&b, c.data, c.size, NULL), ENG_OK);
        block_iter it;
        block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
        size_t i = 0;
        for (block_iter_seek_first(&it); block_iter_valid(&it); block_iter_next(&it))
            check_at(&it, a, i++);
        CHECK_EQ_INT(i, 2 * nv);
        for (block_iter_seek_last(&it); block_iter_valid(&it); block_iter_prev(&it))
            check_at(&it, a, --i);
        CHECK_EQ_INT(block_iter_status(&it), ENG_OK);
        for (i = 0; i < 2 * nv; i++) {
            block_iter_seek(&it, slice_make(a[i].k, a[i].kl));
            check_at(&it, a, i);
        }
        block_iter_cleanup(&it);
        block_builder_free(&bb);
    }
    for (size_t i = 0; i < 2 * nv; i++)
        free(a[i].k), free(a[i].v);
}

TEST(TwoByteValueLengthCutByTheRestartArrayIsCorruption)
{
    /* one entry "a" whose value length's second varint byte would be the
     * first byte of the restart array: 00 01 c8 | restart 0, count 1 */
    const unsigned char raw[] = {0, 1, 0xc8, 0, 0, 0, 0, 1, 0, 0, 0};
    block b;
    CHECK_EQ_INT(block_parse(&b, (const char *)raw, sizeof(raw), NULL), ENG_OK);
    block_iter it;
    block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
    block_iter_seek_first(&it);
    CHECK(!block_iter_valid(&it));
    CHECK_EQ_INT(block_iter_status(&it), ENG_CORRUPTION);
    block_iter_cleanup(&it);
    /* the same entry with a two-byte length 200 but no value bytes */
    const unsigned char raw2[] = {0, 1, 0xc8, 0x01, 'a', 0, 0, 0, 0, 1, 0, 0, 0};
    CHECK_EQ_INT(block_parse(&b, (const char *)raw2, sizeof(raw2), NULL), ENG_OK);
    block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
    block_iter_seek_first(&it);
    CHECK(!block_iter_valid(&it));
    CHECK_EQ_INT(block_iter_status(&it), ENG_CORRUPTION);
    block_iter_cleanup(&it);
}

/* B4: a block of large entries (a profile hash is ~250 bytes) restarts
 * every SST_RESTART_BYTES bytes as well as every 16 entries, so a point
 * seek decodes a few entries, not up to 16; small entries still restart
 * every 16; a reset block starts counting bytes afresh; and every key of
 * the block is found by a seek, and the block reads back in order. */
TEST(LargeEntriesRestartEveryRestartBytesAndSeekToEachKey)
{
    block_builder bb;
    block_builder_init(&bb, SST_RESTART_INTERVAL);
    char k[16], v[300];
    memset(v, 'v', sizeof(v));
    for (int round = 0; round < 2; round++) {
        block_builder_reset(&bb);
        for (int i = 0; i < 16; i++) {
            snprintf(k, sizeof(k), "user:%05d", i);
            block_builder_add(&bb, slice_make(k, strlen(k)), slice_make(v, 250));
        }
        slice s = block_builder_finish(&bb);
        block b;
        CHECK_EQ_INT(block_parse(&b, s.data, s.size, NULL), ENG_OK);
        /* 254..264 bytes an entry: a restart per SST_RESTART_BYTES of them */
        CHECK_MSG(b.num_restarts >= 16 * 254 / SST_RESTART_BYTES &&
                      b.num_restarts <= 16 * 264 / SST_RESTART_BYTES + 1,
                  "%u restarts", b.num_restarts);
        block_iter it;
        block_iter_init(&it, &b, BLOCK_CMP_BYTEWISE);
        for (int i = 0; i < 16; i++) {
            snprintf(k, sizeof(k), "user:%05d", i);
            block_iter_seek(&it, slice_make(k, strlen(k)));
            CHECK(block_iter_valid(&it));
            CHECK_MEM(block_iter_key(&it).data, block_iter_key(&it).size, k);
            CHECK_EQ_INT(block_iter_value(&it).size, 250);
        }
        block_iter_seek_first(&it);
        for (int i = 0; i < 16; i++, block_iter_next(&it)) {
            snprintf(k, sizeof(k), "user:%05d", i);
            CHECK_MEM(block_iter_key(&it).data, block_iter_key(&it).size, k);
        }
        CHECK(!block_iter_valid(&it));
        block_iter_cleanup(&it);
    }
    block_builder_reset(&bb);
    for (int i = 0; i < 32; i++) {
        snprintf(k, sizeof(k), "m:%05d", i);
        block_builder_add(&bb, slice_make(k, strlen(k)), slice_make(v, 4));
    }
    slice s = block_builder_finish(&bb);
    block b;
    CHECK_EQ_INT(block_parse(&b, s.data, s.size, NULL), ENG_OK);
    CHECK_EQ_INT(b.num_restarts, 2); /* 32 small entries: every 16 */
    block_builder_free(&bb);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
