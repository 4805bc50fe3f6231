/*
 * ks_hll_test.c -- HyperLogLog strings (ks_hll.h): the hash and register
 * choice, the header and its cached count, the sparse opcodes at their
 * boundaries (ZERO / XZERO at 64 / 65, VAL runs of 4, values 32 / 33, the
 * hll-sparse-max-bytes limit), dense and sparse agreeing, and corrupt
 * values detected. The vectors in quotes are what redis-server 7.0.15's
 * PFDEBUG DECODE, GET and PFCOUNT return for the same input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_hll.h"
#include "test.h"

static ks_strbuf fresh(void)
{
    ks_strbuf b = {0};
    CHECK(ks_hll_init(&b) == 0);
    return b;
}

/* Decode of b as a C string (static buffer). */
static const char *decode(const ks_strbuf *b)
{
    static char out[4096];
    ks_strbuf d = {0};
    CHECK(ks_hll_decode((const unsigned char *)b->p, b->n, &d) == 0);
    CHECK(d.n < sizeof(out));
    memcpy(out, d.p, d.n);
    out[d.n] = 0;
    ks_strbuf_free(&d);
    return out;
}

static void add(ks_strbuf *b, const char *e, size_t max)
{
    CHECK(ks_hll_add(b, e, strlen(e), max) >= 0);
}

TEST(ElementsPickTheRegistersAndRunsRedisPicks)
{
    const char *ele[] = {"a", "", "hello", "abcdefgh", "abcdefghijklmno"};
    const char *want[] = {"Z:12711 v:2,1 Z:3672", "Z:5938 v:2,1 Z:10445", "Z:9216 v:1,1 Z:7167",
                          "Z:1383 v:1,1 Z:15000", "Z:12377 v:4,1 Z:4006"};
    for (int i = 0; i < 5; i++) {
        ks_strbuf b = fresh();
        CHECK(ks_hll_add(&b, ele[i], strlen(ele[i]), 3000) == 1);
        CHECK_MSG(strcmp(decode(&b), want[i]) == 0, "'%s': %s", ele[i], decode(&b));
        ks_strbuf_free(&b);
    }
}

TEST(AnEmptyHllIsOneXzeroWithAValidZeroCount)
{
    ks_strbuf b = fresh();
    CHECK_MEM(b.p, 4, "HYLL");
    CHECK(b.n == 18 && b.p[4] == KS_HLL_SPARSE && ks_hll_valid((unsigned char *)b.p, b.n));
    CHECK(strcmp(decode(&b), "Z:16384") == 0);
    uint64_t card = 99;
    CHECK(ks_hll_cache_get((unsigned char *)b.p, &card) == 1 && card == 0);
    ks_strbuf_free(&b);
}

TEST(ThreeElementsGiveRedisBytes)
{
    static const unsigned char want[] = {'H',  'Y',  'L',  'L',  1,    0,    0,    0,    0,
                                         0,    0,    0,    0,    0,    0,    0x80, 0x60, 0xf3,
                                         0x80, 0x50, 0xb1, 0x84, 0x4b, 0xfb, 0x80, 0x42, 0x5a};
    ks_strbuf b = fresh();
    add(&b, "a", 3000);
    add(&b, "b", 3000);
    add(&b, "c", 3000);
    ks_hll_cache_invalidate((unsigned char *)b.p); /* as PFADD does */
    CHECK(b.n == sizeof(want) && memcmp(b.p, want, sizeof(want)) == 0);
    uint64_t card;
    CHECK(ks_hll_cache_get((unsigned char *)b.p, &card) == 0);
    CHECK(ks_hll_count((unsigned char *)b.p, b.n, &card) == 0 && card == 3);
    ks_hll_cache_set((unsigned char *)b.p, 0x0102030405060708ull);
    CHECK(ks_hll_cache_get((unsigned char *)b.p, &card) && card == 0x0102030405060708ull);
    CHECK((unsigned char)b.p[8] == 0x08 && (unsigned char)b.p[15] == 0x01); /* little-endian */
    ks_strbuf_free(&b);
}

static void raise_to(ks_strbuf *b, int i, int v, int want)
{
    CHECK_EQ_INT(ks_hll_raise(b, i, v, 3000), want);
}

TEST(SparseOpcodesSplitAndMergeAtTheirBoundaries)
{
    ks_strbuf b = fresh();
    raise_to(&b, 64, 1, 1); /* 64 zeros before: still a one-byte ZERO */
    CHECK(strcmp(decode(&b), "z:64 v:1,1 Z:16319") == 0);
    ks_strbuf_free(&b);
    b = fresh();
    raise_to(&b, 65, 1, 1); /* 65: an XZERO */
    CHECK(strcmp(decode(&b), "Z:65 v:1,1 Z:16318") == 0);
    raise_to(&b, 66, 1, 1);
    raise_to(&b, 67, 1, 1);
    raise_to(&b, 68, 1, 1);
    CHECK(strcmp(decode(&b), "Z:65 v:1,4 Z:16315") == 0);
    raise_to(&b, 69, 1, 1); /* a VAL covers at most 4 registers */
    CHECK(strcmp(decode(&b), "Z:65 v:1,4 v:1,1 Z:16314") == 0);
    raise_to(&b, 66, 3, 1); /* splitting a VAL run */
    /* 65..68 = 1 1 1 1 -> 1 3 1 1, and the last run of 1s merges with 69. */
    CHECK(strcmp(decode(&b), "Z:65 v:1,1 v:3,1 v:1,3 Z:16314") == 0);
    raise_to(&b, 66, 2, 0); /* lower than what is there: no change */
    raise_to(&b, 0, 32, 1); /* 32 still fits a VAL */
    CHECK(b.p[4] == KS_HLL_SPARSE);
    CHECK(strcmp(decode(&b), "v:32,1 z:64 v:1,1 v:3,1 v:1,3 Z:16314") == 0);
    raise_to(&b, 1, 33, 1); /* 33 does not: dense */
    CHECK(b.p[4] == KS_HLL_DENSE && b.n == KS_HLL_DENSE_SIZE);
    CHECK(ks_hll_dense_get((unsigned char *)b.p, 0) == 32);
    CHECK(ks_hll_dense_get((unsigned char *)b.p, 1) == 33);
    CHECK(ks_hll_dense_get((unsigned char *)b.p, 66) == 3);
    CHECK(ks_hll_dense_get((unsigned char *)b.p, 69) == 1);
    CHECK(ks_hll_dense_get((unsigned char *)b.p, 70) == 0);
    ks_strbuf_free(&b);
}

TEST(SparseTurnsDenseExactlyPastTheMaxBytes)
{
    /* Raising register 1000 of an empty HLL turns its XZERO (2 bytes)
     * into XZERO VAL XZERO (5): 18 -> 21 bytes. */
    for (size_t max = 19; max <= 22; max++) {
        ks_strbuf b = fresh();
        CHECK(ks_hll_raise(&b, 1000, 2, max) == 1);
        CHECK_MSG((b.p[4] == KS_HLL_SPARSE) == (max >= 21), "max %zu", max);
        if (b.p[4] == KS_HLL_DENSE) CHECK(ks_hll_dense_get((unsigned char *)b.p, 1000) == 2);
        ks_strbuf_free(&b);
    }
    /* A change that does not grow the string never promotes. */
    ks_strbuf b = fresh();
    CHECK(ks_hll_raise(&b, 1000, 2, 3000) == 1);
    CHECK(ks_hll_raise(&b, 1000, 5, 0) == 1 && b.p[4] == KS_HLL_SPARSE);
    ks_strbuf_free(&b);
}

TEST(DenseAndSparseCountTheSameAndMatchRedis)
{
    ks_strbuf s = fresh(), d = fresh();
    CHECK(ks_hll_to_dense(&d) == 1 && ks_hll_to_dense(&d) == 0);
    uint8_t *regs = calloc(KS_HLL_REGISTERS, 1);
    char e[32];
    for (int i = 0; i < 100000; i++) {
        snprintf(e, sizeof(e), "e%d", i);
        add(&s, e, 3000);
        add(&d, e, 3000);
        if (i == 999) {
            uint64_t cs, cd;
            CHECK(s.p[4] == KS_HLL_SPARSE && s.n == 1906); /* Redis: STRLEN 1906 */
            CHECK(ks_hll_count((unsigned char *)s.p, s.n, &cs) == 0 && cs == 1008);
            CHECK(ks_hll_count((unsigned char *)d.p, d.n, &cd) == 0 && cd == 1008);
            CHECK(ks_hll_merge(regs, (unsigned char *)s.p, s.n) == 0);
        }
    }
    uint64_t c;
    CHECK(s.p[4] == KS_HLL_DENSE && s.n == d.n && memcmp(s.p + 16, d.p + 16, s.n - 16) == 0);
    CHECK(ks_hll_count((unsigned char *)d.p, d.n, &c) == 0 && c == 100853);
    CHECK(ks_hll_merge(regs, (unsigned char *)d.p, d.n) == 0);
    CHECK(ks_hll_count_registers(regs) == 100853); /* the first 1000 are a subset */
    memset(regs, 0, KS_HLL_REGISTERS);
    CHECK(ks_hll_count_registers(regs) == 0);
    free(regs);
    ks_strbuf_free(&s);
    ks_strbuf_free(&d);
}

/* A sparse HLL whose opcodes are body[0..n). */
static ks_strbuf sparse_of(const unsigned char *body, size_t n)
{
    ks_strbuf b = fresh();
    CHECK(ks_strbuf_resize(&b, 16 + n) == 0);
    memcpy(b.p + 16, body, n);
    return b;
}

TEST(CorruptSparseValuesAreDetectedEverywhere)
{
    uint8_t *regs = calloc(KS_HLL_REGISTERS, 1);
    uint64_t c;
    /* Covering 16383 registers: one short. */
    const unsigned char short1[] = {0x7f, 0xfe};
    /* 16384 then one VAL more: too many (rejected since CVE-2025-32023). */
    const unsigned char over[] = {0x7f, 0xff, 0x80};
    /* An XZERO whose second byte is missing reads it as 0: 1 register. */
    const unsigned char cut[] = {0x7f, 0xfe, 0x40};
    const unsigned char *bad[] = {short1, over};
    size_t badn[] = {2, 3};
    for (int i = 0; i < 2; i++) {
        ks_strbuf b = sparse_of(bad[i], badn[i]);
        CHECK(ks_hll_valid((unsigned char *)b.p, b.n)); /* the header is fine */
        CHECK(ks_hll_count((unsigned char *)b.p, b.n, &c) == -1);
        CHECK(ks_hll_merge(regs, (unsigned char *)b.p, b.n) == -1);
        ks_strbuf copy = {0};
        CHECK(ks_strbuf_resize(&copy, b.n) == 0);
        memcpy(copy.p, b.p, b.n);
        CHECK(ks_hll_to_dense(&b) == -1 && b.n == copy.n && memcmp(b.p, copy.p, b.n) == 0);
        CHECK(ks_hll_raise(&b, 1, 33, 3000) == -1); /* needs dense: fails, b unchanged */
        CHECK(memcmp(b.p, copy.p, b.n) == 0);
        ks_strbuf_free(&b);
        ks_strbuf_free(&copy);
    }
    ks_strbuf b = sparse_of(short1, 2);
    CHECK(ks_hll_raise(&b, 16383, 1, 3000) == -1); /* past the opcodes */
    CHECK(ks_hll_raise(&b, 16382, 1, 3000) == 1);
    ks_strbuf_free(&b);
    b = sparse_of(cut, 3);
    CHECK(ks_hll_count((unsigned char *)b.p, b.n, &c) == 0);
    CHECK(strcmp(decode(&b), "Z:16383 Z:1") == 0);
    ks_strbuf_free(&b);
    /* Headers. */
    unsigned char h[KS_HLL_DENSE_SIZE] = "HYLL";
    CHECK(ks_hll_valid(h, KS_HLL_DENSE_SIZE) && !ks_hll_valid(h, KS_HLL_DENSE_SIZE - 1));
    h[4] = 2;
    CHECK(!ks_hll_valid(h, KS_HLL_DENSE_SIZE));
    h[4] = 1;
    CHECK(ks_hll_valid(h, 16) && !ks_hll_valid(h, 15));
    h[0] = 'h';
    CHECK(!ks_hll_valid(h, 16));
    free(regs);
}

TEST(DenseRegistersKeepTheirNeighboursAndTheLastStaysInside)
{
    ks_strbuf b = fresh();
    CHECK(ks_hll_to_dense(&b) == 1);
    CHECK(ks_strbuf_reserve(&b, b.n + 1) == 0);
    b.p[b.n] = 0x5a; /* just past the registers */
    for (int i = 0; i < KS_HLL_REGISTERS; i++)
        CHECK(ks_hll_raise(&b, i, (i * 7) % 64, 3000) == ((i * 7) % 64 != 0));
    for (int i = 0; i < KS_HLL_REGISTERS; i++)
        CHECK_MSG(ks_hll_dense_get((unsigned char *)b.p, i) == (i * 7) % 64, "register %d", i);
    CHECK(b.p[b.n] == 0x5a);
    ks_strbuf_free(&b);
}

TEST(SelfTestPasses)
{
    char err[128];
    CHECK_MSG(ks_hll_selftest(3000, err, sizeof(err)) == 0, "%s", err);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
