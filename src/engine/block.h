/*
 * block.h -- reads one block of a table file (grammar in table_format.md,
 * "Blocks"; written by block_builder.c) and iterates over its entries.
 *
 * A block is immutable once parsed, so any number of iterators on any
 * threads may share it. Every offset and length read from the block is
 * bounds-checked: a malformed block makes the iterator invalid with status
 * ENG_CORRUPTION, never an out-of-bounds read.
 */
#ifndef STRATA_BLOCK_H
#define STRATA_BLOCK_H

#include <malloc.h>

#include "coding.h"
#include "engine.h"

/* A cached block's share of the cache's own memory: its entry (cache.c)
 * and hash slot, rounded up to the allocator's size class. */
#define BLOCK_CACHE_ENTRY_BYTES 128

typedef struct block {
    const char *data; /* the block contents (borrowed or == owned) */
    size_t size;
    uint32_t restart_offset; /* where the restart array begins */
    uint32_t num_restarts;
    char *owned; /* freed by block_free/block_release, may be NULL */
} block;

/* Parses contents [data, data + size) into *b and checks the restart array
 * (Invariants B2, B3 of block_builder.c). b->owned is set to `owned`, which
 * the block frees (malloc'd, may be NULL for borrowed data) -- also when
 * parsing fails. Returns ENG_OK or ENG_CORRUPTION (no message recorded:
 * the caller knows the file and offset). */
eng_status block_parse(block *b, const char *data, size_t size, char *owned);

/* block_iter_seek's binary search for the restart interval of target (an
 * internal key) in steps, for a caller that searches several blocks at
 * once and advances each by one step in turn, so that each step's cache
 * miss overlaps the other blocks' (eng_prefetch): block_rsearch_start
 * starts loading the restart array, and each block_rsearch_step makes the
 * probe whose line the step before started loading and starts the next.
 * A step returns 1 once s->left is the restart interval block_iter_seek
 * would scan from (its entries prefetched), or an earlier one if the block
 * is damaged; block_iter_seek_from(it, s->left, target') then finds the
 * first entry >= target' for any target' >= target. */
typedef struct block_rsearch {
    uint32_t left, right;
    int primed; /* the next probe's line was asked for */
} block_rsearch;
void block_rsearch_start(const block *b, block_rsearch *s);
int block_rsearch_step(const block *b, block_rsearch *s, slice target);

/* Frees b->owned; b itself is the caller's. */
void block_release(block *b);

/* Frees a heap block and its contents (the block cache's deleter). */
void block_free(void *b);

/* Sets *key to the whole key stored at restart point i (Invariant B1) and
 * returns 1, or returns 0 when i is out of range or the entry is malformed
 * (for BLOCK_CMP_IKEY, also when it is shorter than 8 bytes). The key
 * points into the block. */
int block_restart_key(const block *b, uint32_t i, int cmp, slice *key);

/* The bytes a block holds in memory (the block cache's charge): what the
 * allocator gave its contents and its struct, not what was asked for (a
 * 4.1-4.4 KiB block sits in a 5 KiB size class: charging its size alone
 * let a 256 MB cache hold about 300 MB), plus the cache entry's share.
 * REQUIRES: b and b->owned (when set) came from malloc. */
static inline size_t block_charge(const block *b)
{
    size_t contents = b->owned ? malloc_usable_size(b->owned) : b->size;
    return contents + malloc_usable_size((void *)b) + BLOCK_CACHE_ENTRY_BYTES;
}

/* How an iterator orders keys: bytewise (properties block) or as internal
 * keys (Invariant K1; keys shorter than 8 bytes are corruption). */
enum { BLOCK_CMP_BYTEWISE = 0, BLOCK_CMP_IKEY = 1 };

#define BLOCK_ITER_INLINE_KEY 96

/* An iterator over one block. It lives wherever the caller puts it (stack,
 * table iterator) and allocates only for keys longer than
 * BLOCK_ITER_INLINE_KEY. Not thread-safe; the block must outlive it. The
 * struct must not be copied once initialised (key may point into it). */
typedef struct block_iter {
    const block *b;
    int cmp;
    uint32_t current;       /* offset of the current entry; restart_offset if invalid */
    uint32_t next_off;      /* offset just past the current entry */
    uint32_t restart_index; /* restart block holding current */
    uint32_t next_restart;  /* where restart block restart_index + 1 starts (set_restart) */
    eng_status status;
    char *key; /* key_inline or heap */
    size_t key_len, key_cap;
    const char *value;
    size_t value_len;
    char key_inline[BLOCK_ITER_INLINE_KEY];
} block_iter;

/* REQUIRES: b parsed by block_parse. The iterator starts invalid. */
void block_iter_init(block_iter *it, const block *b, int cmp);
/* Points an initialised iterator at another block, keeping its key buffer;
 * it starts invalid with status ENG_OK. */
void block_iter_reset(block_iter *it, const block *b);
/* Frees the heap key buffer, if any. */
void block_iter_cleanup(block_iter *it);

static inline int block_iter_valid(const block_iter *it)
{
    return it->current < it->b->restart_offset;
}
void block_iter_seek_first(block_iter *it);
void block_iter_seek_last(block_iter *it);
/* Positions at the first entry >= target. */
void block_iter_seek(block_iter *it, slice target);
/* Positions at the first entry >= target, scanning forward from restart
 * point `restart` (clamped to the last). REQUIRES: the key at that restart
 * point is < target, or restart == 0 -- i.e. the caller already did the
 * binary search (table_reader.c does, over its index prefix array). */
void block_iter_seek_from(block_iter *it, uint32_t restart, slice target);
void block_iter_next(block_iter *it); /* REQUIRES: valid */
void block_iter_prev(block_iter *it); /* REQUIRES: valid */
/* REQUIRES: valid. Valid until the iterator moves. */
static inline slice block_iter_key(const block_iter *it)
{
    return slice_make(it->key, it->key_len);
}
static inline slice block_iter_value(const block_iter *it)
{
    return slice_make(it->value, it->value_len);
}
/* ENG_OK, or ENG_CORRUPTION once a malformed entry was met (then invalid). */
static inline eng_status block_iter_status(const block_iter *it)
{
    return it->status;
}

#endif
