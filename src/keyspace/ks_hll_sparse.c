/*
 * ks_hll_sparse.c -- in-place updates of a sparse HyperLogLog and its
 * conversion to dense (ks_hll.h; opcodes in ks_hll_internal.h).
 *
 * Raising one register finds the opcode that covers it and, unless it
 * already holds as much, rewrites that one opcode as a sequence of at most
 * three (zeros or old value before, the new value, zeros or old value
 * after), then merges adjacent VAL opcodes of equal value around the
 * change. These are Redis's rules step for step: a value PFADDed here is
 * byte for byte the value Redis builds from the same elements, so the two
 * can trade values through GET / SET and agree on every later reply.
 *
 * The string turns dense when the new value does not fit a VAL opcode
 * (> 32) or the rewrite would take it past sparse_max bytes
 * (hll-sparse-max-bytes, the header included).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_hll_internal.h"

static unsigned char *put_zeros(unsigned char *n, int len)
{
    if (len > HLL_ZERO_MAX) {
        n[0] = (unsigned char)(HLL_XZERO_BIT | ((len - 1) >> 8));
        n[1] = (unsigned char)((len - 1) & 0xff);
        return n + 2;
    }
    n[0] = (unsigned char)(len - 1);
    return n + 1;
}

static unsigned char val_op(int val, int len)
{
    return (unsigned char)(HLL_VAL_BIT | ((val - 1) << 2) | (len - 1));
}

/* Merges adjacent VAL opcodes of one value (up to 4 registers) among the
 * five opcodes from p: the split above may have made neighbours equal. */
static void merge_vals(ks_strbuf *b, unsigned char *p)
{
    unsigned char *end = (unsigned char *)b->p + b->n;
    for (int scan = 5; p < end && scan-- > 0;) {
        hll_op op = hll_op_read(p, end);
        if (!op.val) {
            p += op.size;
            continue;
        }
        if (p + 1 < end && (p[1] & HLL_VAL_BIT)) {
            hll_op nx = hll_op_read(p + 1, end);
            if (nx.val == op.val && op.len + nx.len <= HLL_VAL_MAX_LEN) {
                p[1] = val_op(op.val, op.len + nx.len);
                memmove(p, p + 1, (size_t)(end - p - 1));
                b->n--;
                end--;
                continue; /* the merged opcode may merge again to its right */
            }
        }
        p++;
    }
}

/* Writes the opcodes replacing op (covering [first, first + op.len)) once
 * register index holds count; returns their length. */
static int split(unsigned char *seq, hll_op op, long first, int index, int count)
{
    unsigned char *n = seq;
    int before = (int)(index - first), after = (int)(first + op.len - 1 - index);
    if (!op.val) {
        if (before) n = put_zeros(n, before);
        *n++ = val_op(count, 1);
        if (after) n = put_zeros(n, after);
    } else {
        if (before) *n++ = val_op(op.val, before);
        *n++ = val_op(count, 1);
        if (after) *n++ = val_op(op.val, after);
    }
    return (int)(n - seq);
}

int hll_sparse_raise(ks_strbuf *b, int index, int count, size_t sparse_max)
{
    if (count > HLL_VAL_MAX) goto promote;
    /* The worst rewrite (an XZERO split in the middle) adds three bytes. */
    if (ks_strbuf_reserve(b, b->n + 3) < 0) return -1;
    unsigned char *start = (unsigned char *)b->p + KS_HLL_HDR, *end = (unsigned char *)b->p + b->n;
    unsigned char *p = start, *prev = NULL;
    long first = 0;
    hll_op op = {0, 0, 0};
    for (; p < end; prev = p, p += op.size, first += op.len) {
        op = hll_op_read(p, end);
        if (index <= first + op.len - 1) break;
    }
    if (p >= end) return -1; /* the opcodes end before the register */

    if (op.val && op.val >= count) return 0;
    if (op.len == 1 && op.size == 1) { /* a VAL or ZERO of one register */
        *p = val_op(count, 1);
    } else {
        unsigned char seq[5];
        int seqlen = split(seq, op, first, index, count);
        int delta = seqlen - op.size;
        if (delta > 0 && b->n + (size_t)delta > sparse_max) goto promote;
        unsigned char *next = p + op.size;
        if (delta && next < end) memmove(next + delta, next, (size_t)(end - next));
        memcpy(p, seq, (size_t)seqlen);
        b->n = (size_t)((long)b->n + delta);
    }
    merge_vals(b, prev ? prev : start);
    ks_hll_cache_invalidate((unsigned char *)b->p);
    return 1;

promote:
    if (ks_hll_to_dense(b) < 0) return -1;
    return hll_dense_raise((unsigned char *)b->p, index, count);
}

int ks_hll_to_dense(ks_strbuf *b)
{
    const unsigned char *p = (const unsigned char *)b->p, *end = p + b->n;
    if (p[4] == KS_HLL_DENSE) return 0;
    /* One spare byte past the registers, so no write needs a bounds test. */
    unsigned char *d = calloc(1, KS_HLL_DENSE_SIZE + 1);
    if (!d) return -1;
    memcpy(d, p, KS_HLL_HDR); /* magic and cached count stay */
    d[4] = KS_HLL_DENSE;
    /* Valid only when the opcodes cover exactly the registers: an opcode
     * reaching past them is corrupt too, whatever came before (Redis since
     * the fix for CVE-2025-32023, which the reference server carries). */
    long idx = 0;
    for (p += KS_HLL_HDR; p < end; p += hll_op_read(p, end).size) {
        hll_op op = hll_op_read(p, end);
        if (idx + op.len > KS_HLL_REGISTERS) {
            idx = -1;
            break;
        }
        for (int k = 0; op.val && k < op.len; k++)
            hll_dense_raise(d, (int)idx + k, op.val);
        idx += op.len;
    }
    if (idx != KS_HLL_REGISTERS) {
        free(d);
        return -1;
    }
    free(b->p);
    b->p = (char *)d;
    b->n = KS_HLL_DENSE_SIZE;
    b->cap = KS_HLL_DENSE_SIZE + 1;
    return 1;
}
