/*
 * arena.h -- a bump allocator for memtables: many small allocations freed
 * all at once.
 *
 * Blocks start at first_block bytes and double up to max_block, so a small
 * memtable (an indexed batch's) costs a few KiB while a large one gets
 * max_block-sized blocks. An allocation larger than a quarter of max_block
 * gets a block of its own, so big values do not waste the rest of a block.
 *
 * Threading: one allocating thread (the memtable's writer, Invariant M1);
 * arena_usage() may be read from any thread.
 */
#ifndef STRATA_ARENA_H
#define STRATA_ARENA_H

#include <stdatomic.h>
#include <stddef.h>

struct arena_block;

typedef struct arena {
    char *ptr;                  /* next free byte of cur */
    size_t left;                /* bytes free in cur */
    struct arena_block *cur;    /* block that small allocations come from */
    struct arena_block *blocks; /* every block, newest first */
    size_t next_block;          /* size of the next regular block */
    size_t max_block;
    _Atomic size_t usage; /* bytes of blocks held (headers included) */
} arena;

/* Initializes an empty arena; allocates nothing yet.
 * REQUIRES: 0 < first_block <= max_block. */
void arena_init(arena *a, size_t first_block, size_t max_block);

/* Returns n bytes (n > 0), aligned to 8 bytes, valid until arena_reset() or
 * arena_destroy(). Aborts on out-of-memory, as buf_reserve() does. */
void *arena_alloc(arena *a, size_t n);

/* As arena_alloc, but aligned to align bytes (a power of two, at most 64):
 * the padding before it is lost. For objects searched line by line, such
 * as tree nodes, so that they span as few cache lines as their size
 * allows. */
void *arena_alloc_aligned(arena *a, size_t n, size_t align);

/* Frees every block except the current regular one, which is kept for
 * reuse: the cheap way to empty a small memtable that is refilled at once.
 * REQUIRES: nothing allocated from a is used any more. */
void arena_reset(arena *a);

/* Frees every block. */
void arena_destroy(arena *a);

static inline size_t arena_usage(const arena *a)
{
    return atomic_load_explicit(&((arena *)a)->usage, memory_order_relaxed);
}

#endif
