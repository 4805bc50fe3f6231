/*
 * bloom.h -- the bloom filter of a table file, over user keys (grammar in
 * table_format.md, "Filter block").
 *
 *   filter = line[64]* k:u8 0xB1       (blocked: written now)
 *          | bits[m / 8] k:u8          (classic: m = 8 * (size - 1) bits)
 *
 * Blocked: a key's 64-bit XXH3 hash picks one 64-byte line and k bits in it
 * (bloom.c), so a probe is one cache miss. Classic: k bits chosen by double
 * hashing over the whole array (h, h + d, h + 2d, ..., each mapped to
 * [0, m) by a multiply-shift instead of a division).
 */
#ifndef STRATA_BLOOM_H
#define STRATA_BLOOM_H

#include "coding.h"

/* The last byte of a blocked filter (a classic one ends in k, 1..30). */
#define BLOOM_BLOCKED_TAG 0xB1
/* The last byte of a filter with skipped prefixes:
 *   filter = blocked skip_list skip_size:fixed32 0xB2
 *   skip_list = (len:u8 prefix[len])*   -- len 1..64, strictly ascending
 *                                          bytewise, none a prefix of another
 * Keys starting with a listed prefix may be missing from the blocked filter
 * before it, so a probe for one must not trust a miss. A reader that knows
 * only 0xB1 and classic filters takes 0xB2 for a classic filter with an
 * unknown k, i.e. "may match": correct, only slower. */
#define BLOOM_SKIP_TAG 0xB2
#define BLOOM_MAX_SKIPS 256 /* prefixes one filter lists at most */

/* The hash a filter is built from and probed with. */
uint64_t bloom_hash(slice key);

/* Appends a filter for n key hashes at bits_per_key (clamped to 1..64) to
 * out; duplicates among hashes are harmless. Thread-safe (no shared state). */
void bloom_build(buf *out, const uint64_t *hashes, size_t n, int bits_per_key);

/* 0 when the key (by hash) is certainly absent; 1 when it may be present.
 * A filter that is too short or names an unknown probe count answers 1, so a
 * damaged filter costs reads, never answers. */
int bloom_may_match(const char *filter, size_t len, uint64_t hash);

/* Appends the skip trailer for the n prefixes p[0..n) (each 1..64 bytes,
 * ascending and prefix-free, REQUIRES) after the blocked filter in out. */
void bloom_append_skips(buf *out, const slice *p, size_t n);

/* Splits a filter: *bloom_len is the length of its bloom part (the whole
 * filter unless it ends with BLOOM_SKIP_TAG); with a skip list, *skips and
 * *nskips get its prefixes (malloc'd array of slices into filter, owned by
 * the caller; NULL and 0 without one). Returns 0, or -1 when the skip
 * trailer is malformed (then the filter must not be used at all). */
int bloom_split(const char *filter, size_t len, size_t *bloom_len, slice **skips, size_t *nskips);

/* Whether key starts with one of the n prefixes (ascending, prefix-free):
 * only the greatest prefix <= key can be one. */
int bloom_skipped(const slice *skips, size_t n, slice key);

/* Starts loading the line bloom_may_match will read for hash (blocked
 * filters; nothing otherwise), so several keys' misses can overlap. */
void bloom_prefetch(const char *filter, size_t len, uint64_t hash);

#endif
