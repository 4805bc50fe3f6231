/*
 * table_internal.h -- the inside of sst_reader, shared by table_reader.c
 * (open, close, point lookups, reading and checking blocks), table_iter.c
 * (the two-level table iterator and compaction readahead) and table_mget.c
 * (lookups that keep their block pinned). Private to those files: the
 * contract for everyone else is table.h.
 * The file format is in table_format.md; constants in table_format.h.
 *
 * Every function here is safe to call from several threads on one reader
 * at once: a reader is immutable after sst_reader_open (bloom_useful
 * aside, a relaxed atomic), and blocks are read with pread.
 */
#ifndef STRATA_TABLE_INTERNAL_H
#define STRATA_TABLE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "block.h"
#include "table.h"
#include "table_format.h"

struct sst_reader {
    int fd;
    char *path;
    uint64_t file_number;
    block_cache *cache;
    uint64_t file_size;
    uint64_t data_end; /* where the footer begins; every block lies below */
    block index;       /* owned, in memory while open */
    block range_dels;  /* owned */
    void *ddict;       /* owned ZSTD_DDict of a version 2 table, else NULL */
    char *filter;      /* owned; filter_len 0: no filter */
    size_t filter_len; /* of the bloom part (bloom_split) */
    slice *skips;      /* owned array into filter: prefixes left out of it */
    size_t nskips;
    uint64_t entries, range_deletion_count;
    sst_props props;       /* the properties block, read at open */
    uint64_t bloom_useful; /* relaxed atomic */
    /* The index search array (see sst_index_seek in table_reader.c): for
     * index entry i, at [2i] and [2i + 1], 16 bytes of its user key after
     * the ix_lcp bytes all of them share, as two big-endian words so that
     * integer order is bytewise order. NULL: search the block. */
    uint64_t *ix_prefix;
    uint32_t ix_n;
    size_t ix_lcp;
    const char *ix_lcp_data; /* the shared bytes, inside the index block */
};

/* A data block in use: from the cache (handle set) or owned (no cache, or
 * a miss with fill_cache == 0). */
typedef struct block_ref {
    const block *b;
    cache_handle *h;
    block *owned;
} block_ref;

/* ENG_CORRUPTION with a message naming r's file, what went wrong, and off. */
eng_status sst_corrupt(const sst_reader *r, uint64_t off, const char *what);

/* ENG_OK when h lies inside the file before the footer with a size of at
 * most SST_MAX_BLOCK_SIZE, else ENG_CORRUPTION. */
eng_status sst_check_handle(const sst_reader *r, sst_handle h);

/* Checks the stored bytes and trailer of the block at h, found at raw
 * (h.size + SST_BLOCK_TRAILER_SIZE bytes), and returns its contents in *out
 * (malloc'd, owned by the caller) and their size in *len. raw_owned is raw
 * when the caller hands the malloc'd bytes over (they are freed or become
 * *out), or NULL when raw is borrowed (then a raw block is copied).
 * REQUIRES: sst_check_handle(r, h) == ENG_OK. */
eng_status sst_decode_contents(const sst_reader *r, sst_handle h, const char *raw, char *raw_owned,
                               char **out, size_t *len);

/* Fills *br with the data block at h: from the block cache when it holds
 * it, else read from the file and checked, then inserted into the cache
 * when fill_cache (and r has one) or owned by *br otherwise. On success the
 * caller releases *br with sst_block_ref_release; on failure *br holds
 * nothing. */
eng_status sst_get_data_block(const sst_reader *r, sst_handle h, int fill_cache, block_ref *br);

/* Drops *br's cache handle or owned block and empties it. */
void sst_block_ref_release(const sst_reader *r, block_ref *br);

/* Finds the first entry >= target (key at some sequence) in data block b,
 * read from h. ENG_OK with *type, *found_seq and *value (pointing into b;
 * empty for a deletion) when that entry belongs to user key `key`,
 * ENG_NOTFOUND when it belongs to another, ENG_CORRUPTION for a damaged
 * block; and ENG_NOTFOUND with *past_end set when every entry of b is below
 * target (the answer, if any, is in the next block). */
eng_status sst_search_block(const sst_reader *r, sst_handle h, const block *b, slice key,
                            slice target, int *type, uint64_t *found_seq, slice *value,
                            int *past_end);
/* The same, scanning from restart interval `restart` (at or before
 * target's) instead of searching the restart array; SST_NO_RESTART:
 * search. */
eng_status sst_search_block_from(const sst_reader *r, sst_handle h, const block *b, slice key,
                                 slice target, uint32_t restart, int *type, uint64_t *found_seq,
                                 slice *value, int *past_end);

/* Decodes into *h the handle the index iterator ii points at.
 * REQUIRES: block_iter_valid(ii). */
eng_status sst_index_handle(const sst_reader *r, const block_iter *ii, sst_handle *h);

/* The data block sst_lookahead left for key (hash its bloom_hash) in r on
 * this thread: 1, *h and *restart (the interval to scan from, or
 * SST_NO_RESTART), then forgotten; 0 when none. */
#define SST_NO_RESTART UINT32_MAX
int sst_hint_take(const sst_reader *r, slice key, uint64_t hash, sst_handle *h, uint32_t *restart);

/* Positions ii (a block_iter over r->index) at the first index entry >=
 * target, an internal key (at least 8 bytes). */
void sst_index_seek(const sst_reader *r, block_iter *ii, slice target);

#endif
