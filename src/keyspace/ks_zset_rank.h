/*
 * ks_zset_rank.h -- internal to the rank-block files: the helpers
 * ks_zset_rank.c (reads, checker) and ks_zset_rank_upkeep.c (log, apply,
 * rebuild) share. Nothing else includes it. Every function runs on the
 * command thread under the caller's ks_ctx.
 */
#ifndef STRATA_KS_ZSET_RANK_H
#define STRATA_KS_ZSET_RANK_H

#include "keyspace/ks_zset.h"

/* One level's blocks while building: starts (copies in own), counts. */
typedef struct ks_zrank_blist {
    const char **start;
    size_t *sl;
    uint64_t *count, *children;
    size_t n, cap;
} ks_zrank_blist;

/* Appends a block (s borrowed: the caller keeps it alive while l is);
 * 0, or -1 when out of memory (l unchanged). */
int ks_zrank_blist_push(ks_zrank_blist *l, const char *s, size_t sl, uint64_t count,
                        uint64_t children);
/* Frees l's arrays (not the starts) and leaves it empty. */
void ks_zrank_blist_free(ks_zrank_blist *l);

/* Copies p[0..n) into own; *out gets the copy, alive while own is. KS_OK,
 * or KS_OOM. */
ks_status ks_zrank_copy_into(ks_ctx *c, ks_fvec *own, const char *p, size_t n, const char **out);

/* The block under mi when it is one of level: 1 (start, count, children
 * set; start points into mi's key), 0 when mi is past the level, -1 when
 * the value is malformed. */
int ks_zrank_blk_at(const ks_miter *mi, int level, const char **start, size_t *sl, uint64_t *count,
                    uint64_t *children);
/* Seeks mi to the block of level starting at start (prev: the last block
 * at or before it). */
void ks_zrank_blk_seek(ks_miter *mi, int level, const char *start, size_t sl, int prev);
/* Puts or deletes the block of level starting at start in c's batch. */
void ks_zrank_blk_put(ks_ctx *c, int db, uint64_t version, int level, const char *start, size_t sl,
                      uint64_t count, uint64_t children);
void ks_zrank_blk_del(ks_ctx *c, int db, uint64_t version, int level, const char *start, size_t sl);
/* 1 when mi is on an order entry whose key (after the tag) is < end
 * (end NULL: no bound); *key set, pointing into mi's key. */
int ks_zrank_order_before(const ks_miter *mi, const char *end, size_t el, const char **key,
                          size_t *kl);
/* KS_CORRUPT, naming the rank blocks in c's error. */
ks_status ks_zrank_corrupt(ks_ctx *c);

/* Sorts d[0..n) and sums those of the same key; returns the new count
 * (zero sums dropped). */
size_t ks_zrank_deltas_net(ks_zdelta *d, size_t n);
/* Writes the 9-byte suffix of the rank-log entry seq into k. */
void ks_zrank_log_sfx(char *k, uint64_t seq);
/* Calls fn(arg, key, kl, d) for the log entries [first, end) of (db,
 * version), in order; KS_CORRUPT when one is missing or malformed, else
 * the first error fn returns. */
typedef ks_status (*ks_zrank_log_fn)(void *arg, const char *k, size_t kl, int64_t d);
ks_status ks_zrank_log_read(ks_ctx *c, int db, uint64_t version, uint64_t first, uint64_t end,
                            ks_zrank_log_fn fn, void *arg);

#endif
