/*
 * cache.h -- the block cache: uncompressed table blocks keyed by
 * (table file number, block offset), bounded by a byte capacity, shared by
 * every open table. LRU, sharded by key hash, a mutex per shard; entries
 * are reference counted so a block in use is never freed under a reader.
 */
#ifndef STRATA_CACHE_H
#define STRATA_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct block_cache block_cache;
typedef struct cache_handle cache_handle;

block_cache *cache_new(size_t capacity_bytes);
void cache_free(block_cache *c); /* REQUIRES: no handle outstanding */

/* Returns a handle holding a reference, or NULL on a miss (counted). */
cache_handle *cache_lookup(block_cache *c, uint64_t file, uint64_t offset);

/* Inserts value (charged `charge` bytes); the cache calls deleter(value)
 * when the entry is evicted or replaced and no handle refers to it. Returns
 * a handle holding a reference. May evict least recently used entries. */
cache_handle *cache_insert(block_cache *c, uint64_t file, uint64_t offset, void *value,
                           size_t charge, void (*deleter)(void *value));

/* Prefetch hints for a reader of many keys (cache.c, C6): cache_prefetch
 * starts loading the bucket slot of (file, offset); cache_prefetch_entry,
 * called once that load had time, the first entry of the slot's chain.
 * Neither takes a lock, changes anything or counts; any thread may call
 * them at any time. */
void cache_prefetch(const block_cache *c, uint64_t file, uint64_t offset);
void cache_prefetch_entry(const block_cache *c, uint64_t file, uint64_t offset);

/* As cache_lookup, but neither counted as a hit or miss nor promoted: for
 * a prefetch that reads the block before the lookup that will count. */
cache_handle *cache_lookup_quiet(block_cache *c, uint64_t file, uint64_t offset);

void *cache_value(cache_handle *h);
/* Drops the handle's reference. Takes no lock unless the entry's shard is
 * over capacity (an entry that was in use when eviction passed it). */
void cache_release(block_cache *c, cache_handle *h);

/* Drops the entries of a file (called when a table file is deleted). */
void cache_erase_file(block_cache *c, uint64_t file);

void cache_set_capacity(block_cache *c, size_t capacity_bytes);
/* As cache_set_capacity, but what is over the new capacity is evicted by
 * the next inserts rather than now: for callers that hold other locks. */
void cache_set_capacity_lazy(block_cache *c, size_t capacity_bytes);
size_t cache_capacity(const block_cache *c);
size_t cache_usage(const block_cache *c);
uint64_t cache_hits(const block_cache *c);
uint64_t cache_misses(const block_cache *c);

#endif
