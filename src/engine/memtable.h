/*
 * memtable.h -- the in-memory sorted buffer of recent writes: internal keys
 * (dbformat.h) in an arena, ordered by a B+tree (mem_tree.h), with a hash
 * index from each user key to its newest point entry for point lookups.
 *
 * Concurrency (Invariant M1): one writer at a time (the caller serializes
 * mem_add calls); any number of readers and iterators concurrently with the
 * writer and each other, without locks (entries are published with release
 * stores; tree readers validate node versions and retry, mem_tree.c T1).
 * Reference counted: the db, iterators and flushes each hold a reference.
 */
#ifndef STRATA_MEMTABLE_H
#define STRATA_MEMTABLE_H

#include <stdatomic.h>

#include "coding.h"
#include "engine.h"
#include "iter.h"

typedef struct memtable memtable;

memtable *mem_new(void); /* refcount 1 */
void mem_ref(memtable *m);
void mem_unref(memtable *m); /* frees at 0; NULL is a no-op */

/* Key prefixes of keys that no point lookup is expected to want (a
 * secondary index's entries, only ever reached by iterators): the memtable
 * keeps such keys out of its hash index, so they cost neither its memory
 * nor its insert, and mem_get finds them by a tree descent instead
 * (memtable.c, M8). Prefixes are only ever added (append-only), so a key
 * that is scan-only once stays so. Shared by every memtable of a db. */
#define MEM_SCAN_ONLY_MAX 32
#define MEM_SCAN_ONLY_LEN 16
typedef struct mem_scan_only {
    _Atomic uint32_t n;        /* prefixes published (release) */
    _Atomic uint64_t first[4]; /* bit b: some prefix starts with byte b */
    struct {
        uint64_t w[2], mask[2]; /* the prefix's bytes as loaded words, zero past len */
        size_t len;
    } p[MEM_SCAN_ONLY_MAX];
} mem_scan_only;

/* Empties s. */
void mem_scan_only_init(mem_scan_only *s);

/* Adds prefix p[0..n) to s (a prefix already there, or one covered by a
 * shorter one there, is not added again). Returns 1 when s holds it
 * afterwards; 0 when it does not fit (n is 0 or over MEM_SCAN_ONLY_LEN, or
 * s is full): such keys just stay in the hash index. Any thread; REQUIRES:
 * the caller serializes calls on s (readers need no lock). */
int mem_scan_only_add(mem_scan_only *s, const char *p, size_t n);

/* Does key start with a prefix of s? s may be NULL (no prefixes). */
int mem_scan_only_match(const mem_scan_only *s, slice key);

/* Could key start with a prefix of s? Inline, for callers that ask of
 * every key they see (a batch's ops and point reads): 0 when no prefix
 * starts with key's first byte (a keyspace key, usually), from one bit;
 * 1 when one may (mem_scan_only_match decides). s may be NULL. Any
 * thread, no lock: mem_scan_only_add sets a prefix's bit (release) after
 * publishing the prefix, so a caller that sees the bit (acquire) sees the
 * prefix, and one that does not answers as if the prefix came later. */
static inline int mem_scan_only_maybe(const mem_scan_only *s, slice key)
{
    if (!s || !key.size) return 0;
    unsigned char c = (unsigned char)key.data[0];
    uint64_t bits =
        atomic_load_explicit(&((mem_scan_only *)s)->first[c >> 6], memory_order_acquire);
    return (int)(bits >> (c & 63) & 1);
}

/* Makes m consult s (which must outlive m) for scan-only keys. REQUIRES:
 * nothing has been added to m yet. */
void mem_set_scan_only(memtable *m, const mem_scan_only *s);

/* As mem_new(), but the arena's first block is first_block bytes (doubling up
 * to 1 MiB after that): for small, short-lived memtables such as an indexed
 * batch's, where a 1 MiB block per batch would dominate the cost. */
memtable *mem_new_sized(size_t first_block);

/* The current reference count (for the owner deciding whether it may reset). */
int mem_refs(const memtable *m);

/* Empties m for reuse, keeping one arena block, so a batch that is cleared
 * and refilled per command allocates nothing in the steady state.
 * REQUIRES: the caller holds the only reference (mem_refs(m) == 1), so no
 * reader or iterator can see the entries being discarded. */
void mem_reset(memtable *m);

/* on = 1: later adds of a key m has replace its newest entry in m's order
 * instead of going before it (M10 in memtable.c), until it is set to 0.
 * REQUIRES: M1's writer; while on, no reader reads m at a sequence below
 * the writes that follow (no iterator, no snapshot, no read racing a
 * write). */
void mem_set_replace(memtable *m, int on);

/* Adds an entry. Range deletions are stored as ENG_TYPE_RANGE_DELETION
 * entries with key = start and value = end. REQUIRES: Invariant M1; the
 * (key, seq) pair is new. */
void mem_add(memtable *m, uint64_t seq, int type, slice key, slice value);

/* One entry for mem_add_many: as mem_add's arguments. */
typedef struct mem_entry {
    uint64_t seq;
    int type;
    slice key, value;
} mem_entry;

/* Adds e[0..n), as n mem_add calls would. Each entry is published as
 * mem_add publishes it (M1); a reader must not rely on seeing a group's
 * entries all at once before the call returns (the engine publishes a
 * batch's sequence numbers only after inserting all of it). e's slices need
 * only live for the call.
 * REQUIRES: Invariant M1; every (key, seq) pair is new and distinct. */
void mem_add_many(memtable *m, const mem_entry *e, size_t n);

/* Looks up the newest entry for user key `key` with sequence <= seq
 * (point entries only; range deletions are not consulted here).
 * Returns 1 if found and sets *type (ENG_TYPE_VALUE or ENG_TYPE_DELETION),
 * *found_seq and *value (pointing into the arena: valid while the caller
 * holds a reference); returns 0 if the memtable has no such entry.
 * Cost: one hash probe when the key is absent or its newest version is
 * visible at seq; a tree descent for an older snapshot, and for a
 * scan-only key (mem_set_scan_only). */
int mem_get(memtable *m, slice key, uint64_t seq, int *type, uint64_t *found_seq, slice *value);

/* mem_get with the key's hash given (mem_key_hash), for callers that hash
 * once for several memtables; mem_prefetch starts loading the index slot
 * a lookup of that hash will read, so several keys' misses overlap. */
uint64_t mem_key_hash(slice key);
int mem_get_hashed(memtable *m, slice key, uint64_t hash, uint64_t seq, int *type,
                   uint64_t *found_seq, slice *value);
void mem_prefetch(memtable *m, uint64_t hash);

/* Starts loading what a lookup of each of the n keys, and an insert of
 * each of the nw keys w, will read in m (at most MEM_PREFETCH_MAX of
 * each): the index slot and, where the slot's tag matches, the key's
 * newest entry; for an insert, its tree path (mt_prefetch).
 * A hint for a pipeline of commands: it changes nothing. Any thread, no
 * lock; REQUIRES: the caller holds a reference to m. */
#define MEM_PREFETCH_MAX 32
void mem_prefetch_keys(memtable *m, size_t n, const slice *keys, size_t nw, const slice *w);

/* Approximate bytes of memory used (the arena: entries, tree nodes and the
 * hash index's tables). */
size_t mem_usage(const memtable *m);
uint64_t mem_entries(const memtable *m);
/* Number of ENG_TYPE_RANGE_DELETION entries added. */
uint64_t mem_range_deletions(const memtable *m);

/* Debug checker, O(entries): verifies the tree's invariants (mem_tree.c:
 * T2 sorted within fences, T3 shape, T5 discriminators, T6 leaf list, T9
 * a leaf's first key is its lower fence, T11 a leaf's summary, returned as
 * 12, 13, 15, 16, 19, 21),
 * the entry count (1), and that the hash index agrees with the tree
 * (memtable.c: M5, M6). Returns 0 when they hold, else the number of the
 * broken one.
 * REQUIRES: no concurrent mem_add. */
int mem_check(memtable *m);

/* An internal iterator over all entries (including range deletion entries).
 * Holds a reference on m until freed. */
iter *mem_iter_new(memtable *m);

#endif
