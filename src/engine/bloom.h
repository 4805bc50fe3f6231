/*
 * bloom.h -- the bloom filter of a table file, over user keys (grammar in
 * table_format.md, "Filter block").
 *
 *   filter = bits[m / 8] k:u8          (m = 8 * (size - 1) bits)
 *
 * A key sets or tests k bits chosen by double hashing its 64-bit XXH3 hash
 * (h, h + d, h + 2d, ... with d from the hash's other half, each mapped to
 * [0, m) by a multiply-shift instead of a division).
 */
#ifndef STRATA_BLOOM_H
#define STRATA_BLOOM_H

#include "coding.h"

/* The hash a filter is built from and probed with. */
uint64_t bloom_hash(slice key);

/* Appends a filter for n key hashes at bits_per_key (clamped to 1..64) to
 * out; duplicates among hashes are harmless. Thread-safe (no shared state). */
void bloom_build(buf *out, const uint64_t *hashes, size_t n, int bits_per_key);

/* 0 when the key (by hash) is certainly absent; 1 when it may be present.
 * A filter that is too short or names an unknown probe count answers 1, so a
 * damaged filter costs reads, never answers. */
int bloom_may_match(const char *filter, size_t len, uint64_t hash);

#endif
