/*
 * ks_hll.h -- HyperLogLog in Redis's own string representation, as pure
 * functions on the bytes of a string value (ks_hll.c, ks_hll_sparse.c).
 * A value written by Redis reads here and the other way round, and every
 * count is the one Redis gives for the same elements.
 *
 * The representation (exact grammar in ENCODING.md, "HyperLogLog
 * strings"): a 16-byte header "HYLL" E 0 0 0 card:le64, then 16384 6-bit
 * registers, either dense (12288 bytes, register i at bit 6*i counting
 * from the least significant bit of each byte) or sparse (run-length
 * opcodes ZERO 00xxxxxx, XZERO 01xxxxxx yyyyyyyy, VAL 1vvvvvxx). Elements
 * are hashed with MurmurHash64A (seed 0xadc83b19); the low 14 bits pick
 * the register, the run of zeros above them (plus one) is its candidate.
 * The top bit of card's last byte set means the cached count is stale.
 *
 * Values are edited in a ks_strbuf (keyspace.h), which these functions
 * grow as needed. Thread-safe: no state. Returns -1 means "corrupt" (the
 * INVALIDOBJ error) unless said otherwise.
 */
#ifndef STRATA_KS_HLL_H
#define STRATA_KS_HLL_H

#include <stddef.h>
#include <stdint.h>

#include "keyspace/keyspace.h"

#define KS_HLL_P 14
#define KS_HLL_REGISTERS (1 << KS_HLL_P)
#define KS_HLL_HDR 16
#define KS_HLL_DENSE_SIZE (KS_HLL_HDR + KS_HLL_REGISTERS * 6 / 8)
enum { KS_HLL_DENSE = 0, KS_HLL_SPARSE = 1 };

/* Redis's MurmurHash64A (endian neutral). */
uint64_t ks_murmur64a(const void *key, size_t len, uint64_t seed);

/* 1 when p[0..n) is a string the PF* commands accept: the magic, a known
 * encoding, and the exact size when dense. 0 otherwise (the "not a valid
 * HyperLogLog string value" error). */
int ks_hll_valid(const unsigned char *p, size_t n);
/* The encoding of a valid HLL. */
static inline int ks_hll_encoding(const unsigned char *p)
{
    return p[4];
}

/* Makes b an empty sparse HLL (its cached count 0 and valid). 0, or -1 on
 * out-of-memory. */
int ks_hll_init(ks_strbuf *b);
/* PFADD of one element: 1 when a register grew, 0 when not, -1 when the
 * HLL is corrupt or memory ran out (b unchanged then). A sparse HLL turns
 * dense when a register needs more than 32 or the string would grow past
 * sparse_max bytes. Does not touch the cached count. */
int ks_hll_add(ks_strbuf *b, const char *ele, size_t n, size_t sparse_max);
/* PFADD of one element to the dense HLL s (opened ranged, valid, dense):
 * reads and changes only the bytes of its register, so a chunked HLL
 * costs one chunk (ks_str_open_ranged). *grew = 1 when the register grew.
 * Does not touch the cached count. KS_OK or ks_str_read/update's errors. */
ks_status ks_hll_dense_add_at(ks_str *s, const char *ele, size_t n, int *grew);
/* Raises register index to count (PFMERGE's writes): 1 when it grew. */
int ks_hll_raise(ks_strbuf *b, int index, int count, size_t sparse_max);
/* Sparse to dense in place (the header is kept): 1 when converted, 0 when
 * already dense, -1 when corrupt. */
int ks_hll_to_dense(ks_strbuf *b);

/* The cached count: 1 and *card when valid, 0 when stale. */
int ks_hll_cache_get(const unsigned char *p, uint64_t *card);
void ks_hll_cache_set(unsigned char *p, uint64_t card);
void ks_hll_cache_invalidate(unsigned char *p);

/* The estimate of a valid HLL's registers (ignoring the cache). */
int ks_hll_count(const unsigned char *p, size_t n, uint64_t *card);
/* regs[i] = max(regs[i], register i of the HLL): PFCOUNT of many keys and
 * PFMERGE. */
int ks_hll_merge(uint8_t *regs, const unsigned char *p, size_t n);
/* The estimate of KS_HLL_REGISTERS one-byte registers. */
uint64_t ks_hll_count_registers(const uint8_t *regs);
/* Register i of a dense HLL. */
int ks_hll_dense_get(const unsigned char *p, int i);

/* PFDEBUG DECODE of a sparse HLL: "Z:16384", "z:3 v:2,1 ...". Appends to
 * out; 0, or -1 on out-of-memory. */
int ks_hll_decode(const unsigned char *p, size_t n, ks_strbuf *out);
/* PFSELFTEST: register access, then dense and sparse HLLs fed the same
 * elements must agree and stay within the expected error. 0, or -1 with
 * the TESTFAILED message in err. */
int ks_hll_selftest(size_t sparse_max, char *err, size_t errcap);

#endif
