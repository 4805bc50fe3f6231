/*
 * rangedel.h -- sets of range tombstones ([start, end) deleted at seq), as
 * collected from memtables and table files for reads and compactions.
 *
 * A set is append-only, stored in chunks that never move, so one writer
 * (under an external lock) can append while any number of readers search it
 * without locks (entries are published with release stores of the chunk
 * counts and read with acquire loads). Writing one more tombstone costs
 * O(1), and a set with no tombstones costs a reader nothing.
 *
 * Range deletions are not rare: every DEL, expiry or overwrite of a big
 * collection is one, and so are FLUSHALL and dropping an index; they stay in
 * the version's set until a compaction into the bottom level drops them. So
 * a search must not be linear in the set: a few thousand deleted big keys
 * made every iterator step and point read of the keys written before them
 * test each tombstone (an IDX.RANGE of 100 entries went from 25 us to 3.2 ms
 * of server CPU). A set of more than RDEL_LINEAR_MAX tombstones is searched
 * through fragment indexes (below) built by the readers that need them, with
 * the newest few tombstones searched linearly.
 *
 * Invariant R1: a point entry (key, pseq) is deleted, as seen from a view at
 * snapshot sequence S, iff some tombstone t visible at S (t.seq <= S, or
 * t.seq >= ENG_BATCH_SEQ_BASE for a batch's pending tombstone) covers key
 * (start <= key < end) with t.seq > pseq.
 *
 * Invariant R3: a set's indexes cover consecutive runs of its tombstones in
 * append order, from the first: levels of non-increasing size (a binary
 * counter: two equal levels are merged into one index) and then the tail of
 * fewer than RDEL_LINEAR_MAX unindexed ones plus whatever was appended
 * since. Each index splits the key space at every start and end of its
 * tombstones into fragments and lists, per fragment, the tombstones that
 * cover it by sequence, highest first; a search is a binary search per level
 * plus the tail, and returns what the linear search of R1 would.
 *
 * Invariant R4: an index or level list a reader may still hold is freed only
 * when no search is in flight in the set (the builder publishes the new list
 * first, then checks the in-flight count), or with the set.
 */
#ifndef STRATA_RANGEDEL_H
#define STRATA_RANGEDEL_H

#include "coding.h"
#include "dbformat.h"

/* Up to this many tombstones a set is searched linearly (R3). */
#define RDEL_LINEAR_MAX 16

typedef struct rdel {
    char *start; /* start bytes followed by end bytes; owned by the set */
    size_t sl, el;
    uint64_t seq;
    int keep; /* scratch for the owner (compaction: carried into the output?) */
} rdel;

typedef struct rdel_chunk rdel_chunk;
typedef struct rdel_levels rdel_levels;
typedef struct rdel_gc rdel_gc;

typedef struct rdel_set {
    int refs;         /* atomic */
    rdel_chunk *head; /* atomic */
    rdel_chunk *tail; /* the writer's */
    size_t n;         /* atomic: tombstones published */
    uint64_t max_seq; /* atomic: the highest sequence published */
    /* The search indexes (R3, R4); a cache the readers build. */
    rdel_levels *levels; /* atomic; NULL until the set outgrows RDEL_LINEAR_MAX */
    int building;        /* atomic: 1 while one reader builds */
    int in_flight;       /* atomic: searches using levels */
    rdel_gc *retired;    /* the builder's: lists and indexes not yet freed */
} rdel_set;

/* A new empty set with one reference. */
rdel_set *rdel_set_new(void);
void rdel_set_ref(rdel_set *s);
/* Drops a reference; frees the set at zero. NULL is allowed. */
void rdel_set_unref(rdel_set *s);

/* Appends a copy of [start, end) at seq. REQUIRES: one appender at a time. */
void rdel_set_add(rdel_set *s, slice start, slice end, uint64_t seq);

static inline slice rdel_start(const rdel *r)
{
    return slice_make(r->start, r->sl);
}
static inline slice rdel_end(const rdel *r)
{
    return slice_make(r->start + r->sl, r->el);
}
static inline int rdel_set_empty(const rdel_set *s)
{
    return s == NULL || __atomic_load_n(&s->n, __ATOMIC_ACQUIRE) == 0;
}

/* Walks the published tombstones: for (r = rdel_set_first(s, &c); r; r = rdel_next(&c)). */
typedef struct rdel_cursor {
    rdel_chunk *c;
    int i;
} rdel_cursor;
rdel *rdel_set_first(const rdel_set *s, rdel_cursor *c);
rdel *rdel_next(rdel_cursor *c);

/* The visible tombstone in s (may be NULL) covering key with the highest
 * sequence above floor (R1 with pseq = floor), or NULL. Thread-safe against
 * one appender; may build an index (R3) on the way. */
const rdel *rdel_set_best(const rdel_set *s, slice key, uint64_t floor, uint64_t snap_seq);

/* Invariant R1: returns 1 when a tombstone in s (may be NULL) visible at
 * snapshot snap_seq covers key with a sequence above pseq. */
static inline int rdel_set_covers(const rdel_set *s, slice key, uint64_t pseq, uint64_t snap_seq)
{
    return rdel_set_best(s, key, pseq, snap_seq) != NULL;
}

/* Tombstones looked at by this thread's searches so far (each one tested
 * against a key, linearly or in an index's fragment): tests use it to show a
 * search is not linear in the set. */
uint64_t rdel_examined(void);

/* The tombstones a reader must consult: a few sets (the memtable's, the
 * immutable memtables', the tables', an indexed batch's), each referenced. */
#define RDEL_VIEW_MAX 6
typedef struct rdel_view {
    int n;
    rdel_set *part[RDEL_VIEW_MAX];
} rdel_view;

/* Adds s (if not NULL) with a new reference. REQUIRES: v->n < RDEL_VIEW_MAX. */
void rdel_view_add(rdel_view *v, rdel_set *s);
void rdel_view_release(rdel_view *v);
static inline int rdel_view_covers(const rdel_view *v, slice key, uint64_t pseq, uint64_t snap)
{
    for (int i = 0; i < v->n; i++)
        if (rdel_set_covers(v->part[i], key, pseq, snap)) return 1;
    return 0;
}

/* As rdel_view_covers, but returns the covering tombstone with the highest
 * sequence (the one that hides the most: merger.h, G2), or NULL. */
const rdel *rdel_view_covering(const rdel_view *v, slice key, uint64_t pseq, uint64_t snap);

#endif
