/*
 * eng_bloom_test.c -- bloom.c: no false negatives, a false-positive rate near
 * the theoretical one, and damaged filters that answer "may match".
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

TEST(FalsePositiveRateNearTheoryAt10BitsPerKey)
{
    const uint64_t n = 100000;
    buf f = build_n(n, 10);
    CHECK_EQ_INT(f.len, n * 10 / 8 + 1);
    int k = (unsigned char)f.data[f.len - 1];
    CHECK_EQ_INT(k, 7);
    double theory = pow(1 - exp(-(double)k / 10.0), k); /* 0.82% */
    double rate = fp_rate(&f, 200000);
    CHECK_MSG(rate > theory * 0.6 && rate < theory * 1.4, "rate %.4f%% vs theory %.4f%%",
              rate * 100, theory * 100);
    buf_free(&f);
}

TEST(MoreBitsPerKeyMeansFewerFalsePositives)
{
    buf f4 = build_n(20000, 4), f20 = build_n(20000, 20);
    double r4 = fp_rate(&f4, 50000), r20 = fp_rate(&f20, 50000);
    CHECK_MSG(r4 > 0.08 && r4 < 0.25, "4 bits/key: %.4f", r4); /* theory ~14.7% */
    CHECK_MSG(r20 < 0.0005, "20 bits/key: %.5f", r20);         /* theory ~0.0067% */
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
    f.data[f.len - 1] = 0; /* k = 0 */
    CHECK(fp_rate(&f, 100) == 1.0);
    f.data[f.len - 1] = (char)200; /* k from a future format */
    CHECK(fp_rate(&f, 100) == 1.0);
    buf_free(&f);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
