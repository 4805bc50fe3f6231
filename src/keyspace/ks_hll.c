/*
 * ks_hll.c -- HyperLogLog on Redis's string representation (ks_hll.h;
 * grammar in ENCODING.md, "HyperLogLog strings"): the hash, the header
 * and its cached count, dense registers, the estimator, merging into
 * one-byte registers, PFDEBUG DECODE and PFSELFTEST. The sparse encoding's
 * in-place updates are in ks_hll_sparse.c.
 *
 * The estimator is Ertl's ("New cardinality estimation algorithms for
 * HyperLogLog sketches", 2017) over the histogram of register values, as
 * Redis computes it: the same operations in the same order in double
 * precision, so the rounded result is bit for bit Redis's.
 */
#include "keyspace/ks_hll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_hll_internal.h"

uint64_t ks_murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    const unsigned char *d = key;
    uint64_t h = seed ^ ((uint64_t)len * m);
    size_t blocks = len / 8;
    for (size_t i = 0; i < blocks; i++, d += 8) {
        uint64_t k = 0;
        for (int b = 7; b >= 0; b--) /* little-endian load on any host */
            k = (k << 8) | d[b];
        k *= m;
        k ^= k >> 47;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t rest = len & 7;
    if (rest) {
        for (size_t b = rest; b-- > 0;)
            h ^= (uint64_t)d[b] << (8 * b);
        h *= m;
    }
    h ^= h >> 47;
    h *= m;
    h ^= h >> 47;
    return h;
}

int hll_pattern(const char *ele, size_t n, int *reg)
{
    uint64_t h = ks_murmur64a(ele, n, HLL_SEED);
    *reg = (int)(h & (KS_HLL_REGISTERS - 1));
    /* The run of zeros above the index bits, counting the final one; the
     * bit at 64 - P bounds it at 64 - P + 1. */
    h >>= KS_HLL_P;
    h |= UINT64_C(1) << (64 - KS_HLL_P);
    return __builtin_ctzll(h) + 1;
}

int ks_hll_valid(const unsigned char *p, size_t n)
{
    if (n < KS_HLL_HDR || memcmp(p, "HYLL", 4) != 0) return 0;
    if (p[4] == KS_HLL_DENSE) return n == KS_HLL_DENSE_SIZE;
    return p[4] == KS_HLL_SPARSE;
}

int ks_hll_init(ks_strbuf *b)
{
    if (ks_strbuf_resize(b, 0) < 0 || ks_strbuf_resize(b, KS_HLL_HDR + 2) < 0) return -1;
    unsigned char *p = (unsigned char *)b->p;
    memcpy(p, "HYLL", 4);
    p[4] = KS_HLL_SPARSE;
    /* One XZERO covers all 16384 registers. */
    p[KS_HLL_HDR] = (unsigned char)(HLL_XZERO_BIT | ((KS_HLL_REGISTERS - 1) >> 8));
    p[KS_HLL_HDR + 1] = (unsigned char)((KS_HLL_REGISTERS - 1) & 0xff);
    return 0;
}

/* ---- Cached count ------------------------------------------------------- */

int ks_hll_cache_get(const unsigned char *p, uint64_t *card)
{
    if (p[15] & 0x80) return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[8 + i];
    *card = v;
    return 1;
}

void ks_hll_cache_set(unsigned char *p, uint64_t card)
{
    for (int i = 0; i < 8; i++)
        p[8 + i] = (unsigned char)(card >> (8 * i));
}

void ks_hll_cache_invalidate(unsigned char *p)
{
    p[15] |= 0x80;
}

/* ---- Dense registers ---------------------------------------------------- */

int ks_hll_dense_get(const unsigned char *p, int i)
{
    const unsigned char *r = p + KS_HLL_HDR;
    unsigned bit = (unsigned)i * 6, fb = bit & 7;
    size_t byte = bit >> 3;
    /* fb <= 2: the register fits in its first byte (the last one does). */
    unsigned v = r[byte] >> fb;
    if (fb > 2) v |= (unsigned)r[byte + 1] << (8 - fb);
    return (int)(v & 63);
}

int hll_dense_raise(unsigned char *p, int i, int count)
{
    if (ks_hll_dense_get(p, i) >= count) return 0;
    unsigned char *r = p + KS_HLL_HDR;
    unsigned bit = (unsigned)i * 6, fb = bit & 7, v = (unsigned)count;
    size_t byte = bit >> 3;
    r[byte] = (unsigned char)((r[byte] & ~(63u << fb)) | (v << fb));
    if (fb > 2) r[byte + 1] = (unsigned char)((r[byte + 1] & ~(63u >> (8 - fb))) | (v >> (8 - fb)));
    return 1;
}

int ks_hll_add(ks_strbuf *b, const char *ele, size_t n, size_t sparse_max)
{
    int reg, count = hll_pattern(ele, n, &reg);
    return ks_hll_raise(b, reg, count, sparse_max);
}

/* The register of a dense HLL inside the string: its first byte, and 1
 * or 2 bytes (the last register fits in its first byte). */
static uint64_t dense_at(int i, unsigned *fb, size_t *n)
{
    unsigned bit = (unsigned)i * 6;
    *fb = bit & 7;
    *n = *fb > 2 ? 2 : 1;
    return KS_HLL_HDR + (bit >> 3);
}

ks_status ks_hll_dense_add_at(ks_str *s, const char *ele, size_t n, int *grew)
{
    int reg, count = hll_pattern(ele, n, &reg);
    unsigned fb;
    size_t bn;
    uint64_t at = dense_at(reg, &fb, &bn);
    unsigned char w[2] = {0, 0};
    *grew = 0;
    ks_status st = ks_str_read(s, at, w, bn);
    if (st != KS_OK) return st;
    unsigned v = (w[0] >> fb | (unsigned)w[1] << (8 - fb)) & 63, c = (unsigned)count;
    if (v >= c) return KS_OK;
    w[0] = (unsigned char)((w[0] & ~(63u << fb)) | (c << fb));
    w[1] = (unsigned char)((w[1] & ~(63u >> (8 - fb))) | (c >> (8 - fb)));
    *grew = 1;
    return ks_str_update(s, at, w, bn);
}

int ks_hll_raise(ks_strbuf *b, int index, int count, size_t sparse_max)
{
    unsigned char *p = (unsigned char *)b->p;
    if (p[4] == KS_HLL_DENSE) return hll_dense_raise(p, index, count);
    if (p[4] == KS_HLL_SPARSE) return hll_sparse_raise(b, index, count, sparse_max);
    return -1;
}

/* ---- Histograms and the estimate ---------------------------------------- */

/* Four 6-bit registers in every three bytes. */
static void dense_histogram(const unsigned char *r, int *hist)
{
    for (int i = 0; i < KS_HLL_REGISTERS / 4; i++, r += 3) {
        hist[r[0] & 63]++;
        hist[((r[0] >> 6) | (r[1] << 2)) & 63]++;
        hist[((r[1] >> 4) | (r[2] << 4)) & 63]++;
        hist[r[2] >> 2]++;
    }
}

/* Returns -1 unless the opcodes cover exactly KS_HLL_REGISTERS. */
static int sparse_histogram(const unsigned char *p, const unsigned char *end, int *hist)
{
    long idx = 0;
    while (p < end) {
        hll_op op = hll_op_read(p, end);
        idx += op.len;
        hist[op.val] += op.len;
        p += op.size;
    }
    return idx == KS_HLL_REGISTERS ? 0 : -1;
}

/* Ertl's sigma and tau series, summed until the sum stops changing. */
static double hll_sigma(double x)
{
    if (x == 1.) return INFINITY;
    double z_prev, y = 1, z = x;
    do {
        x *= x;
        z_prev = z;
        z += x * y;
        y += y;
    } while (z_prev != z);
    return z;
}

static double hll_tau(double x)
{
    if (x == 0. || x == 1.) return 0.;
    double z_prev, y = 1.0, z = 1 - x;
    do {
        x = sqrt(x);
        z_prev = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (z_prev != z);
    return z / 3;
}

static uint64_t estimate(const int *hist)
{
    const int q = 64 - KS_HLL_P;
    double m = KS_HLL_REGISTERS;
    double z = m * hll_tau((m - hist[q + 1]) / m);
    for (int j = q; j >= 1; --j) {
        z += hist[j];
        z *= 0.5;
    }
    z += m * hll_sigma(hist[0] / m);
    return (uint64_t)llroundl(HLL_ALPHA_INF * m * m / z);
}

int ks_hll_count(const unsigned char *p, size_t n, uint64_t *card)
{
    int hist[64] = {0};
    if (p[4] == KS_HLL_DENSE)
        dense_histogram(p + KS_HLL_HDR, hist);
    else if (sparse_histogram(p + KS_HLL_HDR, p + n, hist) < 0)
        return -1;
    *card = estimate(hist);
    return 0;
}

uint64_t ks_hll_count_registers(const uint8_t *regs)
{
    int hist[64] = {0};
    for (int i = 0; i < KS_HLL_REGISTERS; i++)
        hist[regs[i] & 63]++;
    return estimate(hist);
}

int ks_hll_merge(uint8_t *regs, const unsigned char *p, size_t n)
{
    if (p[4] == KS_HLL_DENSE) {
        for (int i = 0; i < KS_HLL_REGISTERS; i++) {
            int v = ks_hll_dense_get(p, i);
            if (v > regs[i]) regs[i] = (uint8_t)v;
        }
        return 0;
    }
    const unsigned char *end = p + n;
    long i = 0;
    for (p += KS_HLL_HDR; p < end; p += hll_op_read(p, end).size) {
        hll_op op = hll_op_read(p, end);
        if (op.val == 0) {
            i += op.len;
            continue;
        }
        if (i + op.len > KS_HLL_REGISTERS) return -1;
        for (int k = 0; k < op.len; k++, i++)
            if (op.val > regs[i]) regs[i] = (uint8_t)op.val;
    }
    return i == KS_HLL_REGISTERS ? 0 : -1;
}

/* ---- PFDEBUG DECODE, PFSELFTEST ------------------------------------------ */

int ks_hll_decode(const unsigned char *p, size_t n, ks_strbuf *out)
{
    const unsigned char *end = p + n;
    for (p += KS_HLL_HDR; p < end; p += hll_op_read(p, end).size) {
        hll_op op = hll_op_read(p, end);
        char buf[32];
        int l = op.val ? snprintf(buf, sizeof(buf), "v:%d,%d", op.val, op.len)
                       : snprintf(buf, sizeof(buf), "%c:%d", op.size == 2 ? 'Z' : 'z', op.len);
        size_t at = out->n + (out->n ? 1 : 0);
        if (ks_strbuf_resize(out, at + (size_t)l) < 0) return -1;
        if (at) out->p[at - 1] = ' ';
        memcpy(out->p + at, buf, (size_t)l);
    }
    return 0;
}

static int fail(char *err, size_t cap, const char *msg)
{
    snprintf(err, cap, "%s", msg);
    return -1;
}

int ks_hll_selftest(size_t sparse_max, char *err, size_t errcap)
{
    unsigned char dense[KS_HLL_DENSE_SIZE + 1];
    uint8_t expect[KS_HLL_REGISTERS];
    /* 1: every register keeps its value and leaves its neighbours alone. */
    for (int round = 0; round < 1000; round++) {
        memset(dense, 0, sizeof(dense));
        for (int i = 0; i < KS_HLL_REGISTERS; i++) {
            expect[i] = (uint8_t)(rand() & 63);
            hll_dense_raise(dense, i, expect[i]);
        }
        for (int i = 0; i < KS_HLL_REGISTERS; i++) {
            if (ks_hll_dense_get(dense, i) == expect[i]) continue;
            snprintf(err, errcap, "TESTFAILED Register %d should be %d but is %d", i, expect[i],
                     ks_hll_dense_get(dense, i));
            return -1;
        }
    }
    /* 2: dense and sparse fed the same elements agree, and the estimate
     * stays within six standard errors at 1, 10, 100 ... 10^7. */
    ks_strbuf sparse = {0};
    memset(dense, 0, sizeof(dense));
    memcpy(dense, "HYLL", 4);
    if (ks_hll_init(&sparse) < 0) return fail(err, errcap, "TESTFAILED out of memory");
    double relerr = 1.04 / sqrt(KS_HLL_REGISTERS);
    uint64_t seed = (uint64_t)rand() | (uint64_t)rand() << 32, checkpoint = 1;
    int rc = 0;
    for (uint64_t j = 1; j <= 10000000 && rc == 0; j++) {
        uint64_t ele = j ^ seed;
        int reg, count = hll_pattern((const char *)&ele, sizeof(ele), &reg);
        hll_dense_raise(dense, reg, count);
        if (ks_hll_raise(&sparse, reg, count, sparse_max) < 0) {
            rc = fail(err, errcap, "TESTFAILED sparse update failed");
            break;
        }
        if (j != checkpoint) continue;
        checkpoint *= 10;
        uint64_t cd = 0, cs = 0;
        if (j < sparse_max / 2 && sparse.p[4] != KS_HLL_SPARSE)
            rc = fail(err, errcap, "TESTFAILED sparse encoding not used");
        else if (ks_hll_count(dense, KS_HLL_DENSE_SIZE, &cd) < 0 ||
                 ks_hll_count((unsigned char *)sparse.p, sparse.n, &cs) < 0 || cd != cs)
            rc = fail(err, errcap, "TESTFAILED dense/sparse disagree");
        double abserr = fabs((double)j - (double)cd);
        double maxerr = j == 10 ? 1 : ceil(relerr * 6 * (double)j);
        if (rc == 0 && abserr > maxerr) {
            snprintf(err, errcap, "TESTFAILED Too big error. card:%llu abserr:%llu",
                     (unsigned long long)j, (unsigned long long)abserr);
            rc = -1;
        }
    }
    ks_strbuf_free(&sparse);
    return rc;
}
