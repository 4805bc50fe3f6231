/*
 * rangedel.h -- sets of range tombstones ([start, end) deleted at seq), as
 * collected from memtables and table files for reads and compactions.
 *
 * Range deletions are rare (FLUSHALL, dropping an index, deleting a big
 * hash), so a set is a flat array searched linearly; what matters is that
 * the common case, an empty set, costs nothing (callers pass NULL).
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
} rdel;

typedef struct rdel_set {
    int refs; /* atomic */
    size_t n, cap;
    rdel *v;
} rdel_set;

/* A new empty set with one reference. */
rdel_set *rdel_set_new(void);
void rdel_set_ref(rdel_set *s);
/* Drops a reference; frees the set at zero. NULL is allowed. */
void rdel_set_unref(rdel_set *s);

/* Copies [start, end) at seq into s. REQUIRES: s not yet shared with readers. */
void rdel_set_add(rdel_set *s, slice start, slice end, uint64_t seq);
/* Copies every tombstone of src (may be NULL) into dst. */
void rdel_set_add_all(rdel_set *dst, const rdel_set *src);

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
    return s == NULL || s->n == 0;
}

/* Invariant R1: returns 1 when a tombstone in s (may be NULL) visible at
 * snapshot snap_seq covers key with a sequence above pseq. */
int rdel_set_covers(const rdel_set *s, slice key, uint64_t pseq, uint64_t snap_seq);

#endif
