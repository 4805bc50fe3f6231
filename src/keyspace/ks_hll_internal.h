/*
 * ks_hll_internal.h -- shared by ks_hll.c and ks_hll_sparse.c only: the
 * sparse opcodes and the register primitives.
 *
 * Sparse opcodes (ENCODING.md, "HyperLogLog strings"):
 *   ZERO  00xxxxxx           xxxxxx + 1 registers (1..64) are 0
 *   XZERO 01xxxxxx yyyyyyyy  xxxxxxyyyyyyyy + 1 registers (1..16384) are 0
 *   VAL   1vvvvvxx           xx + 1 registers (1..4) hold vvvvv + 1 (1..32)
 */
#ifndef STRATA_KS_HLL_INTERNAL_H
#define STRATA_KS_HLL_INTERNAL_H

#include "keyspace/ks_hll.h"

#define HLL_SEED 0xadc83b19ull
#define HLL_ALPHA_INF 0.721347520444481703680 /* 0.5 / ln(2) */
#define HLL_XZERO_BIT 0x40
#define HLL_VAL_BIT 0x80
#define HLL_ZERO_MAX 64
#define HLL_XZERO_MAX 16384
#define HLL_VAL_MAX 32
#define HLL_VAL_MAX_LEN 4

/* One decoded opcode: len registers of value val (0 for ZERO / XZERO),
 * size bytes long. */
typedef struct hll_op {
    int len, val, size;
} hll_op;

/* Decodes the opcode at p (< end). An XZERO cut off by the end reads its
 * missing second byte as 0, as Redis reads the string's terminator. */
static inline hll_op hll_op_read(const unsigned char *p, const unsigned char *end)
{
    hll_op op;
    unsigned b = *p;
    if (b & HLL_VAL_BIT) {
        op.len = (int)(b & 3) + 1;
        op.val = (int)((b >> 2) & 31) + 1;
        op.size = 1;
    } else if (b & HLL_XZERO_BIT) {
        unsigned lo = p + 1 < end ? p[1] : 0;
        op.len = (int)(((b & 63) << 8) | lo) + 1;
        op.val = 0;
        op.size = 2;
    } else {
        op.len = (int)(b & 63) + 1;
        op.val = 0;
        op.size = 1;
    }
    return op;
}

/* The register an element hashes to (*reg) and its candidate value. */
int hll_pattern(const char *ele, size_t n, int *reg);
/* Raises register i of the dense HLL p (header included) to count: 1 when
 * it grew. */
int hll_dense_raise(unsigned char *p, int i, int count);
/* Raises register index of the sparse HLL in b (ks_hll_raise). */
int hll_sparse_raise(ks_strbuf *b, int index, int count, size_t sparse_max);

#endif
