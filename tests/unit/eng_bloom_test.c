/*
 * eng_bloom_test.c -- bloom.c: no false negatives, a false-positive rate near
 * the theoretical one, filters of the classic format (older tables) still
 * read, damaged filters that answer "may match", and the skip list of
 * prefixes left out of a filter.
 */
#include "test.h"

#include <math.h>

#include "engine/bloom.h"

static slice key_of(char *scratch, uint64_t i, int absent)
{
    int n = snprintf(scratch, 32, "%s%llu", absent ? "absent:" : "user:", (unsigned long long)i);
    return slice_make(scratch, (size_t)n);
}

static buf build_n(uint64_t n, int bits_per_key)
{
    uint64_t *h = calloc(n ? n : 1, sizeof(uint64_t));
    char s[32];
    for (uint64_t i = 0; i < n; i++)
        h[i] = bloom_hash(key_of(s, i, 0));
    buf f = {0};
    bloom_build(&f, h, n, bits_per_key);
    free(h);
    return f;
}

static double fp_rate(const buf *f, uint64_t probes)
{
    char s[32];
    uint64_t fp = 0;
    for (uint64_t i = 0; i < probes; i++)
        fp += (uint64_t)bloom_may_match(f->data, f->len, bloom_hash(key_of(s, i, 1)));
    return (double)fp / (double)probes;
}

TEST(EveryAddedKeyMayMatch)
{
    uint64_t sizes[] = {1, 2, 10, 100, 1000, 30000};
    for (int t = 0; t < 6; t++) {
        buf f = build_n(sizes[t], 10);
        char s[32];
        for (uint64_t i = 0; i < sizes[t]; i++)
            CHECK_MSG(bloom_may_match(f.data, f.len, bloom_hash(key_of(s, i, 0))),
                      "false negative for key %llu of %llu", (unsigned long long)i,
                      (unsigned long long)sizes[t]);
        buf_free(&f);
    }
}

/* The false-positive rate of a blocked filter: a line holds a Poisson
 * number j of keys (mean 512 / bits_per_key), each setting k of its 512
 * bits, and an absent key tests k bits of a random line. */
static double blocked_theory(int k, int bits_per_key)
{
    double mean = 512.0 / bits_per_key, p = exp(-mean), sum = 0;
    for (int j = 0; j < 400; j++) {
        sum += p * pow(1 - pow(1 - 1.0 / 512, (double)k * j), k);
        p *= mean / (j + 1);
    }
    return sum;
}

TEST(FalsePositiveRateNearTheoryAt10BitsPerKey)
{
    const uint64_t n = 100000;
    buf f = build_n(n, 10);
    CHECK_EQ_INT(f.len, (n * 10 + 511) / 512 * 64 + 2);
    CHECK_EQ_INT((unsigned char)f.data[f.len - 1], BLOOM_BLOCKED_TAG);
    int k = (unsigned char)f.data[f.len - 2];
    CHECK_EQ_INT(k, 6);
    double theory = blocked_theory(k, 10); /* 0.95% */
    double rate = fp_rate(&f, 200000);
    CHECK_MSG(rate > theory * 0.6 && rate < theory * 1.4, "rate %.4f%% vs theory %.4f%%",
              rate * 100, theory * 100);
    buf_free(&f);
}

TEST(MoreBitsPerKeyMeansFewerFalsePositives)
{
    buf f4 = build_n(20000, 4), f20 = build_n(20000, 20);
    double r4 = fp_rate(&f4, 50000), r20 = fp_rate(&f20, 50000);
    CHECK_MSG(r4 > 0.08 && r4 < 0.25, "4 bits/key: %.4f", r4); /* theory ~16% */
    CHECK_MSG(r20 < 0.001, "20 bits/key: %.5f", r20);          /* theory ~0.02% */
    buf_free(&f4);
    buf_free(&f20);
}

TEST(EmptyFilterRejectsEverything)
{
    buf f = build_n(0, 10);
    CHECK(f.len >= 2);
    CHECK(fp_rate(&f, 1000) == 0.0);
    buf_free(&f);
}

TEST(DamagedFilterAnswersMayMatch)
{
    buf f = build_n(1000, 10);
    CHECK(bloom_may_match(f.data, 0, 1234) == 1);
    CHECK(bloom_may_match(f.data, 1, 1234) == 1);
    f.data[f.len - 2] = 0; /* k = 0 */
    CHECK(fp_rate(&f, 100) == 1.0);
    f.data[f.len - 2] = 31; /* k out of range */
    CHECK(fp_rate(&f, 100) == 1.0);
    f.data[f.len - 1] = (char)200; /* a trailer from a future format */
    CHECK(fp_rate(&f, 100) == 1.0);
    buf_free(&f);
}

/* A filter as tables before the blocked format were written (the grammar
 * of table_format.md, classic): bits[m / 8] k. */
static buf build_classic(uint64_t n, int bits_per_key, int k)
{
    uint64_t bits = n * (uint64_t)bits_per_key, bytes = (bits + 7) / 8;
    bits = bytes * 8;
    buf f = {0};
    buf_reserve(&f, bytes + 1);
    memset(f.data, 0, bytes + 1);
    f.len = bytes + 1;
    char s[32];
    for (uint64_t i = 0; i < n; i++) {
        uint64_t h = bloom_hash(key_of(s, i, 0)), d = ((h >> 32) | (h << 32)) | 1;
        for (int j = 0; j < k; j++, h += d) {
            uint64_t p = (uint64_t)(((unsigned __int128)h * bits) >> 64);
            f.data[p / 8] |= (char)(1u << (p % 8));
        }
    }
    f.data[bytes] = (char)k;
    return f;
}

TEST(ClassicFiltersOfOlderTablesStillRead)
{
    buf f = build_classic(20000, 10, 7);
    char s[32];
    for (uint64_t i = 0; i < 20000; i++)
        CHECK_MSG(bloom_may_match(f.data, f.len, bloom_hash(key_of(s, i, 0))),
                  "false negative for key %llu", (unsigned long long)i);
    double rate = fp_rate(&f, 50000);
    CHECK_MSG(rate > 0.004 && rate < 0.013, "classic rate %.4f%%", rate * 100); /* 0.82% */
    buf_free(&f);
}

/* A filter with a skip list: the bloom part is the plain filter, the
 * prefixes come back in order, and only keys under one of them are skipped. */
TEST(SkipListRoundTripsAndNamesOnlyKeysUnderItsPrefixes)
{
    buf f = build_n(1000, 10);
    size_t plain = f.len;
    slice p[3] = {slice_make("ab", 2), slice_make("b\x00", 2), slice_make("xE\x00\x00\x00\x02", 6)};
    bloom_append_skips(&f, p, 3);
    CHECK_EQ_INT((unsigned char)f.data[f.len - 1], BLOOM_SKIP_TAG);
    size_t bl, n;
    slice *sk;
    CHECK_EQ_INT(bloom_split(f.data, f.len, &bl, &sk, &n), 0);
    CHECK_EQ_INT(bl, plain);
    CHECK_EQ_INT(n, 3);
    for (size_t i = 0; i < 3; i++)
        CHECK(slice_compare(sk[i], p[i]) == 0);
    CHECK(bloom_skipped(sk, n, slice_make("ab", 2)));
    CHECK(bloom_skipped(sk, n, slice_make("abz", 3)));
    CHECK(!bloom_skipped(sk, n, slice_make("a", 1)));
    CHECK(!bloom_skipped(sk, n, slice_make("aa", 2)));
    CHECK(!bloom_skipped(sk, n, slice_make("ac", 2)));
    CHECK(bloom_skipped(sk, n, slice_make("b\x00q", 3)));
    CHECK(!bloom_skipped(sk, n, slice_make("b\x01", 2)));
    CHECK(bloom_skipped(sk, n, slice_make("xE\x00\x00\x00\x02user:1", 12)));
    CHECK(!bloom_skipped(sk, n, slice_make("xE\x00\x00\x00\x01user:1", 12)));
    CHECK(!bloom_skipped(sk, n, slice_make("z", 1)));
    free(sk);
    /* A reader of the older formats alone sees an unknown k: "may match". */
    CHECK(f.data[f.len - 1] != BLOOM_BLOCKED_TAG);
    buf_free(&f);
}

TEST(MalformedSkipListsAreRefused)
{
    buf f = build_n(100, 10);
    size_t plain = f.len, bl, n;
    slice *sk;
    /* prefixes out of order, one a prefix of another, an empty one, a size
     * past the filter */
    static const char *bad[] = {"\x02"
                                "ab"
                                "\x01"
                                "a",
                                "\x01"
                                "a"
                                "\x02"
                                "ab",
                                "\x00",
                                "\x05"
                                "ab"};
    static const size_t badlen[] = {5, 5, 1, 3};
    for (int i = 0; i < 4; i++) {
        f.len = plain;
        buf_append(&f, bad[i], badlen[i]);
        char t[5];
        enc_fixed32(t, (uint32_t)badlen[i]);
        t[4] = (char)BLOOM_SKIP_TAG;
        buf_append(&f, t, 5);
        CHECK_MSG(bloom_split(f.data, f.len, &bl, &sk, &n) == -1, "case %d", i);
    }
    f.len = plain;
    char t[5];
    enc_fixed32(t, 1u << 30);
    t[4] = (char)BLOOM_SKIP_TAG;
    buf_append(&f, t, 5);
    CHECK(bloom_split(f.data, f.len, &bl, &sk, &n) == -1);
    /* Without the tag the filter is whole. */
    f.len = plain;
    CHECK_EQ_INT(bloom_split(f.data, f.len, &bl, &sk, &n), 0);
    CHECK(bl == plain && n == 0 && sk == NULL);
    buf_free(&f);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
