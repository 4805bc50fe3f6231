/*
 * ks_bits.h -- the bit operations of SETBIT, GETBIT, BITCOUNT, BITPOS,
 * BITOP and BITFIELD as pure functions on the bytes of a string value
 * (ks_bitops.c). They read and write only the memory they are given; the
 * command handlers read and write the string through the keyspace
 * (ks_get / ks_str_open / ks_str_write in keyspace.h).
 *
 * Bit numbering is Redis's: bit 0 is the most significant bit of byte 0,
 * bit 8 the most significant bit of byte 1, and so on. A string is read
 * as if zero-padded on the right without end.
 *
 * Thread-safe: no state. Inputs are borrowed for the call.
 */
#ifndef STRATA_KS_BITS_H
#define STRATA_KS_BITS_H

#include <stddef.h>
#include <stdint.h>

/* Bit `off` of p[0..n) (0 past the end). */
int ks_bit_get(const unsigned char *p, size_t n, uint64_t off);
/* Sets bit `off` to on (0/1). REQUIRES: off / 8 < the length of p. */
void ks_bit_set(unsigned char *p, uint64_t off, int on);

/* Number of set bits in p[0..n). */
uint64_t ks_bit_popcount(const unsigned char *p, size_t n);

/* A BITCOUNT / BITPOS range as the command gave it: start and end are
 * byte indexes, or bit indexes when isbit; negative ones count from the
 * end. has_range = 0: the whole string. end_given = 0 (BITPOS only): the
 * end is the end of the string, which is then thought zero-padded. */
typedef struct ks_bit_range {
    int has_range, end_given, isbit;
    long long start, end;
} ks_bit_range;

/* BITCOUNT: set bits of p[0..n) inside r. */
uint64_t ks_bitcount(const unsigned char *p, size_t n, const ks_bit_range *r);
/* BITPOS: position of the first bit equal to bit (0/1) inside r; -1 when
 * there is none, except that a clear bit searched without an explicit end
 * is found just past the string (the zero padding). */
long long ks_bitpos(const unsigned char *p, size_t n, int bit, const ks_bit_range *r);

/* BITOP. */
typedef enum ks_bitop_kind { KS_BITOP_AND, KS_BITOP_OR, KS_BITOP_XOR, KS_BITOP_NOT } ks_bitop_kind;
/* out[0..outlen) = src[0] op src[1] op ... over n sources (NOT: one),
 * each zero-padded to outlen. src[i] may be NULL when len[i] is 0. out
 * must not overlap a source. */
void ks_bitop(ks_bitop_kind op, const unsigned char *const *src, const size_t *len, size_t n,
              unsigned char *out, size_t outlen);

/* BITFIELD: integers of 1..64 bits at any bit offset, most significant
 * bit first. */
typedef enum ks_bf_overflow { KS_BF_WRAP, KS_BF_SAT, KS_BF_FAIL } ks_bf_overflow;
enum { KS_BF_GET, KS_BF_SET, KS_BF_INCRBY };
typedef struct ks_bf_op {
    int opcode;   /* KS_BF_* */
    int sign;     /* 1: i<bits> (1..64), 0: u<bits> (1..63) */
    int bits;     /* width */
    uint64_t off; /* bit offset */
    int64_t arg;  /* SET value or INCRBY increment */
    int overflow; /* ks_bf_overflow in force for this op */
} ks_bf_op;

/* Reads the field as unsigned / signed (sign-extended) from p[0..n),
 * zero-padded past the end. */
uint64_t ks_bf_get_unsigned(const unsigned char *p, size_t n, uint64_t off, int bits);
int64_t ks_bf_get_signed(const unsigned char *p, size_t n, uint64_t off, int bits);
/* Writes the low `bits` bits of v. REQUIRES: (off + bits - 1) / 8 < the
 * length of p. */
void ks_bf_set(unsigned char *p, uint64_t off, int bits, uint64_t v);

/* Redis's overflow rules for storing value + incr in the field: 0 when it
 * fits, 1 on overflow, -1 on underflow; then *limit (unless FAIL) is the
 * wrapped or saturated result. value is the current field (INCRBY) or the
 * value to store with incr 0 (SET). */
int ks_bf_overflow_unsigned(uint64_t value, int64_t incr, int bits, int owtype, uint64_t *limit);
int ks_bf_overflow_signed(int64_t value, int64_t incr, int bits, int owtype, int64_t *limit);

/* Runs one op on p[0..n). SET and INCRBY REQUIRE the field inside p.
 * Returns 1 with *reply set (GET: the value; SET: the old value; INCRBY:
 * the new value), or 0 when OVERFLOW FAIL refused the op (reply nil, p
 * unchanged). *changed = 1 when the bytes changed. */
int ks_bf_apply(unsigned char *p, size_t n, const ks_bf_op *op, long long *reply, int *changed);

#endif
