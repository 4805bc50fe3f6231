/*
 * ks_bits_test.c -- the bit algorithms of ks_bits.h on plain bytes:
 * BITFIELD fields of every width at unaligned offsets, Redis's WRAP / SAT /
 * FAIL overflow results at the edges of each width, BITCOUNT / BITPOS
 * ranges against a bit-by-bit reference, and BITOP.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_bits.h"
#include "test.h"

/* random() gives 31 bits; srandom is never called, so runs repeat. */
static uint64_t next_rand(void)
{
    return (uint64_t)random() << 33 ^ (uint64_t)random() << 11 ^ (uint64_t)random();
}

static uint64_t mask_of(int bits)
{
    return bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

TEST(BitfieldRoundTripsEveryWidthAtUnalignedOffsetsAndLeavesNeighboursAlone)
{
    unsigned char buf[24], before[24];
    for (int bits = 1; bits <= 64; bits++) {
        for (uint64_t off = 0; off < 40; off += (uint64_t)(1 + (bits & 3))) {
            for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (unsigned char)next_rand();
            memcpy(before, buf, sizeof(buf));
            uint64_t v = next_rand() & mask_of(bits);
            ks_bf_set(buf, off, bits, v);
            CHECK_MSG(ks_bf_get_unsigned(buf, sizeof(buf), off, bits) == v, "u%d at %llu", bits,
                      (unsigned long long)off);
            int64_t sv = (int64_t)v;
            if (bits < 64 && (v >> (bits - 1)) & 1) sv = (int64_t)(v | ~mask_of(bits));
            CHECK(ks_bf_get_signed(buf, sizeof(buf), off, bits) == sv);
            for (uint64_t b = 0; b < sizeof(buf) * 8; b++)
                if (b < off || b >= off + (uint64_t)bits)
                    CHECK_MSG(ks_bit_get(buf, sizeof(buf), b) == ks_bit_get(before, 24, b),
                              "bit %llu changed by u%d at %llu", (unsigned long long)b, bits,
                              (unsigned long long)off);
        }
    }
}

TEST(BitfieldReadsZerosPastTheEndOfTheString)
{
    unsigned char s[3] = {0xff, 0xff, 0xff};
    CHECK(ks_bf_get_unsigned(s, 3, 16, 16) == 0xff00);
    CHECK(ks_bf_get_unsigned(s, 3, 20, 8) == 0xf0);
    CHECK(ks_bf_get_unsigned(s, 3, 24, 64) == 0);
    CHECK(ks_bf_get_signed(s, 3, 0, 64) == (int64_t)0xffffff0000000000ull);
    CHECK(ks_bf_get_unsigned(NULL, 0, 5, 7) == 0);
    CHECK(ks_bit_get(s, 3, 23) == 1 && ks_bit_get(s, 3, 24) == 0);
}

/* value + incr in u<bits>: expected direction, WRAP result, SAT result. */
static void check_u(uint64_t value, int64_t incr, int bits, int dir, uint64_t wrap, uint64_t sat)
{
    uint64_t w = 12345, s = 12345, f = 12345;
    CHECK_EQ_INT(ks_bf_overflow_unsigned(value, incr, bits, KS_BF_WRAP, &w), dir);
    CHECK_EQ_INT(ks_bf_overflow_unsigned(value, incr, bits, KS_BF_SAT, &s), dir);
    CHECK_EQ_INT(ks_bf_overflow_unsigned(value, incr, bits, KS_BF_FAIL, &f), dir);
    if (dir) {
        CHECK_MSG(w == wrap && s == sat, "u%d %llu%+lld: wrap %llu sat %llu", bits,
                  (unsigned long long)value, (long long)incr, (unsigned long long)w,
                  (unsigned long long)s);
        CHECK(f == 12345); /* FAIL computes no limit */
    }
}

TEST(UnsignedOverflowWrapsSaturatesOrFailsAtTheWidthEdges)
{
    check_u(250, 10, 8, 1, 4, 255);
    check_u(5, -10, 8, -1, 251, 0);
    check_u(0, 255, 8, 0, 0, 0);
    check_u(255, -255, 8, 0, 0, 0);
    check_u(UINT64_MAX, 0, 8, 1, 255, 255); /* SET u8 -1 */
    check_u(2, 0, 1, 1, 0, 1);              /* SET u1 2 */
    check_u(1, 1, 1, 1, 0, 1);
    check_u(0, -1, 1, -1, 1, 0);
    uint64_t m63 = mask_of(63);
    check_u(m63, 1, 63, 1, 0, m63);
    check_u(0, INT64_MIN, 63, -1, 0, 0);
    check_u(0, INT64_MAX, 63, 0, 0, 0);
}

static void check_i(int64_t value, int64_t incr, int bits, int dir, int64_t wrap, int64_t sat)
{
    int64_t w = 12345, s = 12345;
    CHECK_EQ_INT(ks_bf_overflow_signed(value, incr, bits, KS_BF_WRAP, &w), dir);
    CHECK_EQ_INT(ks_bf_overflow_signed(value, incr, bits, KS_BF_SAT, &s), dir);
    if (dir)
        CHECK_MSG(w == wrap && s == sat, "i%d %lld%+lld: wrap %lld sat %lld", bits,
                  (long long)value, (long long)incr, (long long)w, (long long)s);
}

TEST(SignedOverflowWrapsSaturatesOrFailsAtTheWidthEdges)
{
    check_i(127, 1, 8, 1, -128, 127);
    check_i(-128, -1, 8, -1, 127, -128);
    check_i(-128, 255, 8, 0, 0, 0);
    check_i(100, 0, 5, 1, 4, 15); /* SET i5 100 */
    check_i(-100, 0, 5, -1, -4, -16);
    check_i(0, 1, 1, 1, -1, 0); /* i1 holds -1 and 0 */
    check_i(-1, -1, 1, -1, 0, -1);
    check_i(0, -1, 1, 0, 0, 0);
    check_i(INT64_MAX, 1, 64, 1, INT64_MIN, INT64_MAX);
    check_i(INT64_MIN, -1, 64, -1, INT64_MAX, INT64_MIN);
    check_i(INT64_MIN, INT64_MAX, 64, 0, 0, 0);
    check_i(INT64_MAX, INT64_MIN, 64, 0, 0, 0);
    check_i(-1, INT64_MIN, 64, -1, INT64_MAX, INT64_MIN);
}

TEST(BitfieldOpsReplyLikeRedisAndFailLeavesTheBytes)
{
    unsigned char s[16] = {0};
    long long r;
    int ch;
    ks_bf_op set = {KS_BF_SET, 0, 8, 0, 255, KS_BF_WRAP};
    CHECK(ks_bf_apply(s, 16, &set, &r, &ch) && r == 0 && ch && s[0] == 255);
    ks_bf_op inc = {KS_BF_INCRBY, 0, 8, 0, 10, KS_BF_WRAP};
    CHECK(ks_bf_apply(s, 16, &inc, &r, &ch) && r == 9 && s[0] == 9);
    inc.overflow = KS_BF_SAT;
    inc.arg = 300;
    CHECK(ks_bf_apply(s, 16, &inc, &r, &ch) && r == 255);
    inc.overflow = KS_BF_FAIL;
    inc.arg = 1;
    CHECK(ks_bf_apply(s, 16, &inc, &r, &ch) == 0 && !ch && s[0] == 255);
    ks_bf_op same = {KS_BF_SET, 0, 8, 0, 255, KS_BF_FAIL};
    CHECK(ks_bf_apply(s, 16, &same, &r, &ch) && r == 255 && !ch); /* no change */
    /* The sequence of Redis's regression test #3564: 0 0 60. */
    memset(s, 0, sizeof(s));
    ks_bf_op a = {KS_BF_SET, 1, 8, 0, 10, KS_BF_WRAP}, b = {KS_BF_SET, 1, 8, 64, 10, KS_BF_WRAP},
             c = {KS_BF_INCRBY, 1, 8, 10, 99900, KS_BF_WRAP};
    CHECK(ks_bf_apply(s, 16, &a, &r, &ch) && r == 0);
    CHECK(ks_bf_apply(s, 16, &b, &r, &ch) && r == 0);
    CHECK(ks_bf_apply(s, 16, &c, &r, &ch) && r == 60);
    ks_bf_op g = {KS_BF_GET, 1, 64, 0, 0, KS_BF_WRAP};
    CHECK(ks_bf_apply(s, 16, &g, &r, &ch) && !ch);
}

/* ---- BITCOUNT / BITPOS against a reference --------------------------- */

/* The reference: Redis's normalization written out, then bit by bit. */
static int ref_range(size_t n, const ks_bit_range *r, long long *sb, long long *eb)
{
    long long total = r->isbit ? (long long)n * 8 : (long long)n, s = 0, e = total - 1;
    if (r->has_range) {
        s = r->start < 0 ? r->start + total : r->start;
        if (r->end_given) e = r->end < 0 ? r->end + total : r->end;
        s = s < 0 ? 0 : s;
        e = e < 0 ? 0 : e;
        e = e >= total ? total - 1 : e;
    }
    if (s > e) return 0;
    *sb = r->isbit ? s : s * 8;
    *eb = r->isbit ? e : e * 8 + 7;
    return 1;
}

static long long ref_count(const unsigned char *p, size_t n, const ks_bit_range *r)
{
    long long sb, eb, c = 0;
    if (!ref_range(n, r, &sb, &eb)) return 0;
    for (long long b = sb; b <= eb; b++)
        c += ks_bit_get(p, n, (uint64_t)b);
    return c;
}

static long long ref_pos(const unsigned char *p, size_t n, int bit, const ks_bit_range *r)
{
    long long sb, eb;
    if (!ref_range(n, r, &sb, &eb)) return -1;
    for (long long b = sb; b <= eb; b++)
        if (ks_bit_get(p, n, (uint64_t)b) == bit) return b;
    return bit == 0 && !(r->has_range && r->end_given) ? eb + 1 : -1;
}

static void random_bitmap(unsigned char *p, size_t n)
{
    int style = (int)(next_rand() % 4); /* runs of zeros or ones exercise the word skips */
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)next_rand();
        p[i] = style == 0 ? b : style == 1 ? (b < 8 ? b : 0) : style == 2 ? (b < 8 ? b : 0xff) : 0;
    }
}

TEST(BitcountAndBitposMatchABitByBitReferenceOverRandomRanges)
{
    unsigned char p[300];
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = (size_t)(next_rand() % (iter % 10 == 0 ? 300 : 24));
        random_bitmap(p, n);
        ks_bit_range r = {0};
        r.has_range = next_rand() % 4 != 0;
        r.end_given = next_rand() % 3 != 0;
        r.isbit = (int)(next_rand() & 1);
        long long span = (long long)n * (r.isbit ? 8 : 1) + 20;
        r.start = (long long)(next_rand() % (uint64_t)(2 * span)) - span;
        r.end = (long long)(next_rand() % (uint64_t)(2 * span)) - span;
        CHECK_EQ_INT(ks_bitcount(p, n, &r), ref_count(p, n, &r));
        for (int bit = 0; bit <= 1; bit++)
            CHECK_MSG(ks_bitpos(p, n, bit, &r) == ref_pos(p, n, bit, &r),
                      "bitpos %d n=%zu range=%d end=%d bit=%d %lld..%lld: %lld vs %lld", bit, n,
                      r.has_range, r.end_given, r.isbit, r.start, r.end, ks_bitpos(p, n, bit, &r),
                      ref_pos(p, n, bit, &r));
    }
}

TEST(BitposFindsTheOnlyBitAfterLongRunsOfTheOtherValue)
{
    size_t n = 4096;
    unsigned char *p = malloc(n);
    ks_bit_range all = {0};
    for (uint64_t pos = 0; pos < n * 8; pos += 997) {
        memset(p, 0, n);
        ks_bit_set(p, pos, 1);
        CHECK_EQ_INT(ks_bitpos(p, n, 1, &all), (long long)pos);
        CHECK_EQ_INT(ks_bitcount(p, n, &all), 1);
        memset(p, 0xff, n);
        ks_bit_set(p, pos, 0);
        CHECK_EQ_INT(ks_bitpos(p, n, 0, &all), (long long)pos);
        CHECK_EQ_INT(ks_bit_popcount(p, n), (long long)n * 8 - 1);
    }
    memset(p, 0xff, n);
    CHECK_EQ_INT(ks_bitpos(p, n, 0, &all), (long long)n * 8); /* the zero padding */
    ks_bit_range upto = {1, 1, 0, 0, -1};
    CHECK_EQ_INT(ks_bitpos(p, n, 0, &upto), -1); /* an explicit end: none */
    free(p);
}

TEST(BitopCombinesSourcesZeroPaddedToTheLongest)
{
    const unsigned char a[] = {0x01, 0x02, 0xff, 0xff}, b[] = {0x0f, 0xf0, 0x0f};
    const unsigned char *src[] = {a, b, NULL};
    size_t len[] = {4, 3, 0};
    unsigned char out[4];
    ks_bitop(KS_BITOP_AND, src, len, 2, out, 4);
    CHECK(out[0] == 0x01 && out[1] == 0x00 && out[2] == 0x0f && out[3] == 0x00);
    ks_bitop(KS_BITOP_OR, src, len, 3, out, 4);
    CHECK(out[0] == 0x0f && out[1] == 0xf2 && out[2] == 0xff && out[3] == 0xff);
    ks_bitop(KS_BITOP_XOR, src, len, 2, out, 4);
    CHECK(out[0] == 0x0e && out[1] == 0xf2 && out[2] == 0xf0 && out[3] == 0xff);
    ks_bitop(KS_BITOP_AND, src, len, 3, out, 4); /* a missing key zeroes everything */
    CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0 && out[3] == 0);
    const unsigned char *one[] = {b};
    ks_bitop(KS_BITOP_NOT, one, len + 1, 1, out, 3);
    CHECK(out[0] == 0xf0 && out[1] == 0x0f && out[2] == 0xf0);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
