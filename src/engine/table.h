/*
 * table.h -- sorted table files (SSTs): immutable files of internal keys in
 * Invariant K1 order. Format: FORMAT.md, "Table files"; constants in
 * table_format.h.
 *
 * A table holds data blocks (keys prefix-compressed with restart points,
 * each block zstd-compressed or raw, with a checksum), a range-deletion
 * block, a bloom filter over user keys, an index block of (last key of a
 * data block -> its handle), properties, and a footer with a magic number
 * and a format version.
 */
#ifndef STRATA_TABLE_H
#define STRATA_TABLE_H

#include "block.h"
#include "cache.h"
#include "coding.h"
#include "engine.h"
#include "iter.h"

typedef struct sst_options {
    size_t block_size;      /* target uncompressed data block size */
    int compression_level;  /* zstd level; 0 = store blocks raw */
    int bloom_bits_per_key; /* 0 = no filter */
    uint64_t file_number;   /* recorded in the properties (its identity); 0 = none */
    /* Largest zstd dictionary to train from the table's first data blocks
     * (format version 2, table_format.md); 0 = none (version 1). Only with
     * compression_level != 0. */
    size_t dict_size;
    /* Keys to leave out of the filter (engine.h); NULL: none. Not owned. */
    const eng_filter_policy *filter_policy;
} sst_options;

/* Facts about a finished table, recorded in the manifest. */
typedef struct sst_file_info {
    uint64_t file_size;
    uint64_t entries; /* point entries */
    uint64_t range_deletions;
    uint64_t smallest_seq, largest_seq;
    buf smallest; /* smallest internal key (point or range start) */
    buf largest;  /* largest internal key; for a range deletion the
                     end is included as (end, ENG_MAX_SEQUENCE, type) */
} sst_file_info;

void sst_file_info_free(sst_file_info *fi);

typedef struct sst_builder sst_builder;

/* Creates the file at path. *out is owned by the caller and freed by finish
 * or abandon. */
eng_status sst_builder_new(const char *path, const sst_options *o, sst_builder **out);

/* REQUIRES: ikey (internal key) sorts after every key added before. */
eng_status sst_builder_add(sst_builder *b, slice ikey, slice value);

/* Adds a range deletion [start, end) at seq; any order. */
void sst_builder_add_range_del(sst_builder *b, slice start, slice end, uint64_t seq);

/* Bytes written so far plus the pending block (to cut output files). */
uint64_t sst_builder_file_size(const sst_builder *b);
uint64_t sst_builder_entries(const sst_builder *b);

/* Writes the remaining blocks, filter, index, properties and footer,
 * fsyncs and closes the file, fills *info, frees b. */
eng_status sst_builder_finish(sst_builder *b, sst_file_info *info);

/* Closes and deletes the file, frees b. */
void sst_builder_abandon(sst_builder *b);

typedef struct sst_reader sst_reader;

/* Opens a table: reads and checks the footer, index, filter and range
 * deletions (kept in memory while open). Data blocks are read on demand
 * through cache (may be NULL: no caching). file_number keys the cache.
 * Thread-safe once open: any number of threads may get and iterate. */
eng_status sst_reader_open(const char *path, uint64_t file_number, block_cache *cache,
                           sst_reader **out);
void sst_reader_close(sst_reader *r);

/* Point lookup: the newest point entry for user key `key` with sequence <= seq.
 * ENG_OK sets *type, *found_seq, and *value (malloc'd, owned by the caller;
 * NULL for a deletion); ENG_NOTFOUND if the table has none (often decided by
 * the bloom filter alone); ENG_CORRUPTION if a block fails its checksum. */
eng_status sst_reader_get(sst_reader *r, slice key, uint64_t seq, int *type, uint64_t *found_seq,
                          char **value, size_t *vlen);

/* sst_reader_get split in two, for callers that hash the key once for
 * several tables (version_get): may_match is the bloom filter's verdict
 * for key, hash = bloom_hash(key) (0: certainly absent, counted as useful;
 * always 1 for a key under a prefix the table's filter leaves out), and
 * get_unfiltered the lookup without it. */
int sst_reader_may_match(sst_reader *r, slice key, uint64_t hash);
eng_status sst_reader_get_unfiltered(sst_reader *r, slice key, uint64_t seq, int *type,
                                     uint64_t *found_seq, char **value, size_t *vlen);

/* sst_reader_get_unfiltered (hash = bloom_hash(key)), but starting at the
 * data block (and restart interval) an sst_lookahead left for key on this
 * thread, when one did, without the index search; the hint is taken (a
 * second lookup searches the index). */
eng_status sst_reader_get_located(sst_reader *r, slice key, uint64_t hash, uint64_t seq, int *type,
                                  uint64_t *found_seq, char **value, size_t *vlen);

/* Data blocks held in use by sst_reader_get_pinned, from any tables of one
 * cache, released together. Zero-initialise; not thread-safe. */
typedef struct sst_pins {
    size_t n, cap;
    struct sst_pin *v;
    /* The newest pin's index entry, as the lookup that reached it saw it:
     * its reader, that lookup's target lo and the entry's separator sep.
     * A target in [lo, sep] of the same reader lands on that entry too
     * (every earlier separator is below lo), so it skips the index search. */
    const struct sst_reader *last_r;
    buf lo, sep;
} sst_pins;
void sst_pins_release(sst_pins *p); /* drops every pin; p stays usable */
void sst_pins_free(sst_pins *p);

/* sst_reader_get_unfiltered with the value left where it is: *value
 * points into its data block, which stays pinned in pins until they are
 * released (no copy). A lookup landing in the block the newest pin holds
 * reuses it without a cache probe, so sorted keys read each block once;
 * one that an sst_lookahead located on this thread (hash = bloom_hash(key),
 * as sst_reader_get_located) starts from its block and restart interval. */
eng_status sst_reader_get_pinned(sst_reader *r, slice key, uint64_t hash, uint64_t seq,
                                 sst_pins *pins, int *type, uint64_t *found_seq, slice *value);

/* Starts loading the filter line a may_match of hash will read. */
void sst_reader_prefetch_filter(const sst_reader *r, uint64_t hash);

/* sst_reader_may_match without counting a useful filter answer: for a
 * prefetch, whose lookup follows and counts. */
int sst_reader_filter_may_match(const sst_reader *r, slice key, uint64_t hash);

/* A point lookup's cache misses started ahead, in stages that a caller
 * runs for several keys in turn so that the keys' misses overlap
 * (eng_prefetch): sst_lookahead_start does the lookup's index search for
 * key in r and starts loading the block cache slot of the data block it
 * lands on; each sst_lookahead_step then starts the next load -- the
 * slot's entry, the block's descriptor, its restart array, then one probe
 * of the search for the key's restart interval at a time -- and returns 0
 * when no step is left. What was found (the block, and the interval once
 * the search ends) is left for the lookup that follows on this thread
 * (sst_reader_get_located). Both return 0 when there is nothing to do (no
 * block for the key, no cache, a key over SST_LOOKAHEAD_KEY_MAX bytes).
 * They change and count nothing; a block not in the cache is not read.
 * While a step is left, la holds a reference to the block: the caller
 * runs every lookahead to its end. */
#define SST_LOOKAHEAD_KEY_MAX 128
typedef struct sst_lookahead {
    const sst_reader *r;
    uint64_t hash;
    int stage;
    uint64_t block_offset, block_size; /* the data block's handle */
    cache_handle *pin;
    block_rsearch rs;
    size_t klen;
    char target[SST_LOOKAHEAD_KEY_MAX + 8]; /* (key, ENG_MAX_SEQUENCE) */
    /* The user key of the block's index entry (every key up to it lands in
     * the same block); seplen 0: longer than this holds. */
    size_t seplen;
    char sep[SST_LOOKAHEAD_KEY_MAX];
    /* 1 once a step found the data block not in the cache (the lookahead
     * then ends): block_offset and block_size name the block to load. */
    int absent;
} sst_lookahead;
int sst_lookahead_start(sst_lookahead *la, const sst_reader *r, slice key, uint64_t hash);
int sst_lookahead_step(sst_lookahead *la);

/* Reads the data block at (offset, size) of r into the block cache unless
 * the cache holds it: the load a lookup of a key in that block would do,
 * done ahead of it (db_readahead.c). *loaded = 1 when it read the block.
 * Counts no cache hit or miss. A block another thread loads meanwhile is
 * read twice and cached once (the later insert replaces the earlier).
 * Any thread; REQUIRES: the caller keeps r open. */
eng_status sst_reader_load_block(const sst_reader *r, uint64_t offset, uint64_t size, int *loaded);

/* An internal iterator over the point entries. fill_cache = 0 for
 * compaction reads, which should not evict hot blocks. A corrupt block
 * makes the iterator invalid with status ENG_CORRUPTION. The iterator
 * keeps the reader alive only as long as the caller keeps it open. */
iter *sst_reader_iter(sst_reader *r, int fill_cache);

/* A data block an iterator stepped over because it failed its checks:
 * every user key in (lo, hi] (from the first key when !has_lo) may have
 * lost its newest entry in the table there. */
typedef struct sst_damage {
    char *path;
    uint64_t offset;
    uint64_t max_seq; /* the table's largest sequence: newer entries elsewhere stand */
    buf lo, hi;
    int has_lo;
} sst_damage;

/* Where the table iterators of one reader of the db (eng_iter) record
 * the blocks they stepped over; while !enabled they stop with
 * ENG_CORRUPTION instead. on_damage (may be NULL) hears of each new one.
 * Owned by one thread. */
typedef struct sst_damage_log {
    int enabled;
    sst_damage *d;
    int n, cap;
    void (*on_damage)(void *ctx, const sst_damage *d);
    void *ctx;
} sst_damage_log;
void sst_damage_log_free(sst_damage_log *l);
/* "table F: damaged data block at offset N, keys after A up to B", with
 * the keys' non-printable bytes escaped. */
void sst_damage_describe(const sst_damage *d, char *out, size_t cap);

/* Whether the entry (k, seq) of any source may stand in for one a damaged
 * block lost: k lies in a range recorded in l and seq is no newer than
 * that table. */
int sst_damage_covers(const sst_damage_log *l, slice k, uint64_t seq);

/* sst_reader_iter that, while dl->enabled, steps over a data block that
 * fails its checks (a checksum, its contents, its handle in the index),
 * recording it in dl, and goes on with the next block in its direction. */
iter *sst_reader_iter_damage(sst_reader *r, int fill_cache, sst_damage_log *dl);

/* The table's range deletions: calls fn(ctx, start, end, seq) for each. */
void sst_reader_range_dels(sst_reader *r,
                           void (*fn)(void *ctx, slice start, slice end, uint64_t seq), void *ctx);

uint64_t sst_reader_file_size(const sst_reader *r);

/* What the properties block says about the table (table_format.md). */
typedef struct sst_props {
    uint64_t file_number; /* 0: not recorded (tables written before it was) */
    uint64_t entries, range_deletions, smallest_seq, largest_seq, data_blocks;
    uint64_t dict_offset, dict_size; /* the dictionary block's handle (version 2) */
    uint32_t format_version;         /* the footer's */
} sst_props;
void sst_reader_props(const sst_reader *r, sst_props *out);
/* Lookups answered "absent" by the bloom filter alone. */
uint64_t sst_reader_bloom_useful(const sst_reader *r);

#endif
