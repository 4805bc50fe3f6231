/*
 * row_cache.h -- the row cache: for one table file and one user key, the
 * table's newest point entry for that key (a value with its bytes and
 * sequence, a deletion with its sequence) or the fact that the table holds
 * no entry for it. It lets a hot point lookup skip the table's index
 * search, block cache probe and block decode (version_get). Bounded by a
 * byte capacity, CLOCK, sharded; its own compact hash tables (row_cache.c)
 * keyed by (file number, XXH3 of the user key) with the full key stored in
 * the row, so a hash collision is a miss, never a wrong answer.
 *
 * Only point lookups use it (eng_get, and eng_get_batch reading through to
 * the db); iterators and compaction never read or fill it. Table files are
 * immutable and file numbers never reused, so entries need no
 * invalidation; those of a deleted table are dropped with it.
 *
 * Invariants (relied on by version.c, table_get):
 *  RC1. An entry for (T, k) holds the newest point entry of k in table T
 *       over all sequences, or ROW_ABSENT when T has no point entry for k.
 *       It is inserted only from a lookup at a sequence >= T's largest_seq,
 *       whose answer is then exactly that.
 *  RC2. An entry answers a lookup at snapshot sequence S only when it is
 *       ROW_ABSENT or its sequence <= S: then the newest entry of k in T is
 *       visible at S and so is the newest visible one. Otherwise the lookup
 *       goes to the table and the (older) answer is not cached.
 *  RC3. Range tombstones are not part of an entry: the caller applies them
 *       above the table lookup (sv_get), exactly as without the cache.
 *
 * Thread-safe: any number of threads may look up and insert at once.
 */
#ifndef STRATA_ROW_CACHE_H
#define STRATA_ROW_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "coding.h"

typedef struct row_cache row_cache;

/* The "no entry in this table" answer; the other types are ENG_TYPE_VALUE
 * and ENG_TYPE_DELETION (dbformat.h). */
#define ROW_ABSENT (-1)

/* A cache of capacity_bytes, or NULL when capacity_bytes is 0 (off). Every
 * function below accepts NULL as an empty, disabled cache. */
row_cache *row_cache_new(size_t capacity_bytes);
void row_cache_free(row_cache *rc); /* REQUIRES: no call in progress */

/* Looks up (file, key); hash is bloom_hash(key). Returns 1 when the entry
 * answers a lookup at sequence seq (RC2): *type is ENG_TYPE_VALUE,
 * ENG_TYPE_DELETION or ROW_ABSENT; for the first two *found_seq is set and,
 * for a value, *val (malloc'd, owned by the caller) and *vlen. Returns 0 on
 * a miss or when the cached entry is newer than seq; outputs untouched. */
int row_cache_get(row_cache *rc, uint64_t file, uint64_t hash, slice key, uint64_t seq, int *type,
                  uint64_t *found_seq, char **val, size_t *vlen);

/* As row_cache_get, but a value is not copied: *val points into the
 * cached row, which stays valid until row_cache_unpin(rc, *pin) (the
 * entry may be evicted or its table deleted meanwhile; the row lives on
 * under the pin). *pin is set only when 1 is returned. For a reader of many
 * rows at once (eng_multi_get) this saves a malloc, a copy and a free per
 * hit. */
typedef struct row_pin row_pin;
int row_cache_get_pinned(row_cache *rc, uint64_t file, uint64_t hash, slice key, uint64_t seq,
                         int *type, uint64_t *found_seq, const char **val, size_t *vlen,
                         row_pin **pin);
void row_cache_unpin(row_cache *rc, row_pin *pin);

/* row_cache_get_pinned in stages, for a reader of many keys that overlaps
 * their cache misses (eng_multi_get): row_cache_prefetch for every key
 * (the key's first slot starts loading), then
 * row_cache_prefetch_entry for every key (the row that slot names), then
 * row_cache_probe for every key (the lookup; the row starts loading), then
 * row_cache_answer for every key. The prefetches take no lock and change
 * nothing. row_cache_probe returns the pinned row of (file, hash) or NULL,
 * not yet checked against the key or a sequence: row_cache_answer checks
 * it (RC2) and answers as row_cache_get_pinned, keeping the pin (to
 * release with row_cache_unpin) when it returns 1 and releasing it when it
 * returns 0; pin may be NULL (a miss). Only row_cache_answer counts. */
void row_cache_prefetch(const row_cache *rc, uint64_t file, uint64_t hash);
void row_cache_prefetch_entry(const row_cache *rc, uint64_t file, uint64_t hash);

row_pin *row_cache_probe(row_cache *rc, uint64_t file, uint64_t hash);
int row_cache_answer(row_cache *rc, row_pin *pin, slice key, uint64_t seq, int *type,
                     uint64_t *found_seq, const char **val, size_t *vlen);

/* 1 when (file, hash) probably has a row (a slot on its probe path carries
 * its tag: a false 1 is a tag collision, a false 0 a race with an insert),
 * 0 when it almost surely has none. Takes no lock and changes nothing; for
 * a prefetcher deciding whether the table's own search is worth starting
 * (eng_prefetch), after row_cache_prefetch. */
int row_cache_maybe(const row_cache *rc, uint64_t file, uint64_t hash);
/* Records the answer of table `file` for key (RC1: REQUIRES the lookup was
 * made at a sequence >= the table's largest_seq). type as above; seq and
 * val are ignored for ROW_ABSENT, val for a deletion. Copies what it keeps.
 * Admission: while the key's shard has room the first put inserts; in a
 * full one the first put of a (file, key) not put lately only marks it and
 * a second put inserts (row_cache.c), so a key read once evicts nothing.
 * A row over 1/8 of a shard (capacity / 128) is not cached. */
void row_cache_put(row_cache *rc, uint64_t file, uint64_t hash, slice key, int type, uint64_t seq,
                   slice val);

/* Drops every entry of a table (called when the table file is deleted). */
void row_cache_erase_file(row_cache *rc, uint64_t file);

size_t row_cache_capacity(const row_cache *rc);
size_t row_cache_usage(const row_cache *rc);
uint64_t row_cache_hits(const row_cache *rc);   /* lookups answered */
uint64_t row_cache_misses(const row_cache *rc); /* lookups passed to the table */

#endif
