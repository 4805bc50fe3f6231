/*
 * block_builder.h -- builds one block of a table file: sorted key/value
 * entries with prefix-compressed keys and a restart array (grammar in
 * table_format.md, "Blocks").
 *
 * Not thread-safe: a builder belongs to one table builder.
 */
#ifndef STRATA_BLOCK_BUILDER_H
#define STRATA_BLOCK_BUILDER_H

#include "coding.h"

typedef struct block_builder {
    buf data;         /* entries written so far; then the restart array */
    buf restarts;     /* fixed32 offsets of the restart entries */
    buf last_key;     /* the previous key, for prefix compression */
    int interval;     /* entries between restart points */
    int counter;      /* entries since the last restart */
    size_t since;     /* entry bytes since the last restart (B4) */
    uint64_t entries; /* entries since the last reset */
    int finished;
} block_builder;

/* REQUIRES: restart_interval >= 1. The builder owns its buffers; free them
 * with block_builder_free. */
void block_builder_init(block_builder *b, int restart_interval);
void block_builder_free(block_builder *b);

/* Empties the builder for the next block, keeping its buffers. */
void block_builder_reset(block_builder *b);

/* Appends an entry. REQUIRES: not finished; key sorts after the previous
 * key in the order the block's reader will use (the builder does not
 * compare). Both slices are copied. */
void block_builder_add(block_builder *b, slice key, slice value);

/* Appends the restart array and its count; returns the block contents,
 * which stay owned by the builder and valid until the next reset. */
slice block_builder_finish(block_builder *b);

/* The size the finished block would have now. */
size_t block_builder_size_estimate(const block_builder *b);

static inline int block_builder_empty(const block_builder *b)
{
    return b->entries == 0;
}

#endif
