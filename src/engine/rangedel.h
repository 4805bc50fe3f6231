/*
 * rangedel.h -- sets of range tombstones ([start, end) deleted at seq), as
 * collected from memtables and table files for reads and compactions.
 *
 * Range deletions are rare (FLUSHALL, dropping an index, deleting a big
 * hash), so a set is searched linearly; what matters is that the common
 * case, no tombstones at all, costs nothing, and that writing one more
 * tombstone costs O(1): a set is append-only, stored in chunks that never
 * move, so one writer (under an external lock) can append while any number
 * of readers search it without locks (entries are published with release
 * stores of the chunk counts and read with acquire loads).
 *
 * Invariant R1: a point entry (key, pseq) is deleted, as seen from a view at
 * snapshot sequence S, iff some tombstone t visible at S (t.seq <= S, or
 * t.seq >= ENG_BATCH_SEQ_BASE for a batch's pending tombstone) covers key
 * (start <= key < end) with t.seq > pseq.
 */
#ifndef STRATA_RANGEDEL_H
#define STRATA_RANGEDEL_H

#include "coding.h"
#include "dbformat.h"

typedef struct rdel {
    char *start; /* start bytes followed by end bytes; owned by the set */
    size_t sl, el;
    uint64_t seq;
    int keep; /* scratch for the owner (compaction: carried into the output?) */
} rdel;

typedef struct rdel_chunk rdel_chunk;

typedef struct rdel_set {
    int refs;         /* atomic */
    rdel_chunk *head; /* atomic */
    rdel_chunk *tail; /* the writer's */
    size_t n;         /* atomic: tombstones published */
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

/* Invariant R1: returns 1 when a tombstone in s (may be NULL) visible at
 * snapshot snap_seq covers key with a sequence above pseq. */
int rdel_set_covers(const rdel_set *s, slice key, uint64_t pseq, uint64_t snap_seq);

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
