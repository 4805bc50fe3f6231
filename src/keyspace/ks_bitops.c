/*
 * ks_bitops.c -- the bit algorithms of the bitmap commands on plain bytes
 * (declared in ks_bits.h): single bits, population counts and first-bit
 * searches over byte or bit ranges, BITOP, and BITFIELD's integer fields
 * with Redis's WRAP / SAT / FAIL overflow rules.
 *
 * Ranges are first normalized the way Redis normalizes them (negative
 * indexes from the end, then clamped into the string), then turned into
 * an inclusive range of bit positions [sb, eb]; counting and searching
 * work on whole 64-bit words in the middle and masked bytes at the edges,
 * so a 512 MB bitmap costs one pass at memory speed.
 */
#include "keyspace/ks_bits.h"

#include <string.h>

int ks_bit_get(const unsigned char *p, size_t n, uint64_t off)
{
    uint64_t byte = off >> 3;
    if (byte >= n) return 0;
    return (p[byte] >> (7 - (off & 7))) & 1;
}

void ks_bit_set(unsigned char *p, uint64_t off, int on)
{
    unsigned char mask = (unsigned char)(0x80 >> (off & 7));
    if (on)
        p[off >> 3] |= mask;
    else
        p[off >> 3] &= (unsigned char)~mask;
}

uint64_t ks_bit_popcount(const unsigned char *p, size_t n)
{
    uint64_t bits = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, sizeof(w));
        bits += (uint64_t)(__builtin_popcountll(w[0]) + __builtin_popcountll(w[1]) +
                           __builtin_popcountll(w[2]) + __builtin_popcountll(w[3]));
    }
    for (; i < n; i++)
        bits += (uint64_t)__builtin_popcount(p[i]);
    return bits;
}

/* Normalizes r over a string of n bytes into the inclusive bit range
 * [*sb, *eb]; returns 0 when the range is empty. */
static int range_bits(size_t n, const ks_bit_range *r, uint64_t *sb, uint64_t *eb)
{
    long long total = r->isbit ? (long long)n * 8 : (long long)n;
    long long start = 0, end = total - 1;
    if (r->has_range) {
        start = r->start;
        if (r->end_given) end = r->end;
        if (start < 0) start += total;
        if (end < 0) end += total;
        if (start < 0) start = 0;
        if (end < 0) end = 0;
        if (end >= total) end = total - 1;
    }
    if (start > end) return 0;
    *sb = r->isbit ? (uint64_t)start : (uint64_t)start * 8;
    *eb = r->isbit ? (uint64_t)end : (uint64_t)end * 8 + 7;
    return 1;
}

/* The bits of byte i that lie in [sb, eb]. */
static unsigned char edge_mask(uint64_t i, uint64_t sb, uint64_t eb)
{
    unsigned m = 0xff;
    if (i == sb >> 3) m &= 0xffu >> (sb & 7);
    if (i == eb >> 3) m &= (0xffu << (7 - (eb & 7))) & 0xffu;
    return (unsigned char)m;
}

uint64_t ks_bitcount(const unsigned char *p, size_t n, const ks_bit_range *r)
{
    uint64_t sb, eb;
    if (!range_bits(n, r, &sb, &eb)) return 0;
    uint64_t first = sb >> 3, last = eb >> 3;
    if (first == last) return (uint64_t)__builtin_popcount(p[first] & edge_mask(first, sb, eb));
    uint64_t count = (uint64_t)__builtin_popcount(p[first] & edge_mask(first, sb, eb)) +
                     (uint64_t)__builtin_popcount(p[last] & edge_mask(last, sb, eb));
    return count + ks_bit_popcount(p + first + 1, (size_t)(last - first - 1));
}

/* First bit equal to bit in [sb, eb] of p, or -1. */
static long long first_bit(const unsigned char *p, uint64_t sb, uint64_t eb, int bit)
{
    unsigned flip = bit ? 0 : 0xff; /* byte ^ flip has a 1 where byte has `bit` */
    uint64_t skip = bit ? 0 : UINT64_MAX;
    uint64_t i = sb >> 3, last = eb >> 3;
    while (i <= last) {
        unsigned v = ((unsigned)p[i] ^ flip) & edge_mask(i, sb, eb);
        if (v) return (long long)(i * 8 + (uint64_t)(__builtin_clz(v) - 24));
        i++;
        /* Whole words of the other bit value: skip them 8 bytes at a time. */
        while (i + 8 <= last) {
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (w != skip) break;
            i += 8;
        }
    }
    return -1;
}

long long ks_bitpos(const unsigned char *p, size_t n, int bit, const ks_bit_range *r)
{
    uint64_t sb, eb;
    if (!range_bits(n, r, &sb, &eb)) return -1;
    long long pos = first_bit(p, sb, eb, bit);
    /* Without an explicit end the string is zero-padded on the right, so a
     * clear bit always exists just past it. */
    if (pos < 0 && bit == 0 && !(r->has_range && r->end_given)) return (long long)eb + 1;
    return pos;
}

void ks_bitop(ks_bitop_kind op, const unsigned char *const *src, const size_t *len, size_t n,
              unsigned char *out, size_t outlen)
{
    size_t l0 = len[0] < outlen ? len[0] : outlen;
    if (l0) memcpy(out, src[0], l0);
    memset(out + l0, 0, outlen - l0);
    if (op == KS_BITOP_NOT) {
        for (size_t i = 0; i < outlen; i++)
            out[i] = (unsigned char)~out[i];
        return;
    }
    for (size_t k = 1; k < n; k++) {
        const unsigned char *s = src[k];
        size_t l = len[k] < outlen ? len[k] : outlen;
        if (op == KS_BITOP_AND) {
            for (size_t i = 0; i < l; i++)
                out[i] &= s[i];
            memset(out + l, 0, outlen - l); /* AND with the zero padding */
        } else if (op == KS_BITOP_OR) {
            for (size_t i = 0; i < l; i++)
                out[i] |= s[i];
        } else {
            for (size_t i = 0; i < l; i++)
                out[i] ^= s[i];
        }
    }
}

/* ---- BITFIELD ----------------------------------------------------------- */

uint64_t ks_bf_get_unsigned(const unsigned char *p, size_t n, uint64_t off, int bits)
{
    /* The field lies in the 9 bytes from off / 8: load them as a 72-bit
     * big-endian window (zero past the end) and cut the field out. */
    uint64_t byte = off >> 3, hi = 0;
    unsigned sh = (unsigned)(off & 7);
    for (int i = 0; i < 8; i++)
        hi = (hi << 8) | (byte + (uint64_t)i < n ? p[byte + (uint64_t)i] : 0);
    unsigned lo = byte + 8 < n ? p[byte + 8] : 0;
    uint64_t w = sh ? (hi << sh) | (lo >> (8 - sh)) : hi;
    return bits == 64 ? w : w >> (64 - bits);
}

int64_t ks_bf_get_signed(const unsigned char *p, size_t n, uint64_t off, int bits)
{
    uint64_t u = ks_bf_get_unsigned(p, n, off, bits);
    if (bits < 64 && ((u >> (bits - 1)) & 1)) u |= UINT64_MAX << bits;
    return (int64_t)u;
}

void ks_bf_set(unsigned char *p, uint64_t off, int bits, uint64_t v)
{
    for (int j = 0; j < bits; j++)
        ks_bit_set(p, off + (uint64_t)j, (int)((v >> (bits - 1 - j)) & 1));
}

int ks_bf_overflow_unsigned(uint64_t value, int64_t incr, int bits, int owtype, uint64_t *limit)
{
    uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    /* As Redis: the room left above and below, as signed 64-bit numbers. */
    int64_t maxincr = (int64_t)(max - value);
    int64_t minincr = (int64_t)(0 - value);
    int dir = 0;
    if (value > max || (incr > 0 && incr > maxincr))
        dir = 1;
    else if (incr < 0 && incr < minincr)
        dir = -1;
    if (!dir) return 0;
    if (owtype == KS_BF_WRAP)
        *limit = (value + (uint64_t)incr) & max;
    else if (owtype == KS_BF_SAT)
        *limit = dir > 0 ? max : 0;
    return dir;
}

int ks_bf_overflow_signed(int64_t value, int64_t incr, int bits, int owtype, int64_t *limit)
{
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
    int64_t min = -max - 1;
    /* Two's complement differences; used only where they cannot wrap. */
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int dir = 0;
    if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr))
        dir = 1;
    else if (value < min || (bits != 64 && incr < minincr) ||
             (value < 0 && incr < 0 && incr < minincr))
        dir = -1;
    if (!dir) return 0;
    if (owtype == KS_BF_WRAP) {
        uint64_t c = (uint64_t)value + (uint64_t)incr;
        if (bits < 64) { /* keep the low bits, sign-extended from the field's top bit */
            uint64_t high = UINT64_MAX << bits;
            c = (c >> (bits - 1)) & 1 ? c | high : c & ~high;
        }
        *limit = (int64_t)c;
    } else if (owtype == KS_BF_SAT) {
        *limit = dir > 0 ? max : min;
    }
    return dir;
}

int ks_bf_apply(unsigned char *p, size_t n, const ks_bf_op *op, long long *reply, int *changed)
{
    *changed = 0;
    if (op->opcode == KS_BF_GET) {
        *reply = op->sign ? (long long)ks_bf_get_signed(p, n, op->off, op->bits)
                          : (long long)ks_bf_get_unsigned(p, n, op->off, op->bits);
        return 1;
    }
    int incr = op->opcode == KS_BF_INCRBY, ov;
    uint64_t oldv, newv;
    if (op->sign) {
        int64_t old = ks_bf_get_signed(p, n, op->off, op->bits), lim = 0;
        int64_t base = incr ? old : op->arg;
        ov = ks_bf_overflow_signed(base, incr ? op->arg : 0, op->bits, op->overflow, &lim);
        int64_t nv = ov ? lim : (int64_t)((uint64_t)base + (uint64_t)(incr ? op->arg : 0));
        *reply = incr ? nv : old;
        oldv = (uint64_t)old;
        newv = (uint64_t)nv;
    } else {
        uint64_t old = ks_bf_get_unsigned(p, n, op->off, op->bits), lim = 0;
        uint64_t base = incr ? old : (uint64_t)op->arg;
        ov = ks_bf_overflow_unsigned(base, incr ? op->arg : 0, op->bits, op->overflow, &lim);
        uint64_t nv = ov ? lim : base + (uint64_t)(incr ? op->arg : 0);
        *reply = (long long)(incr ? nv : old);
        oldv = old;
        newv = nv;
    }
    if (ov && op->overflow == KS_BF_FAIL) return 0;
    ks_bf_set(p, op->off, op->bits, newv);
    *changed = oldv != newv;
    return 1;
}
