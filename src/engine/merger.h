/*
 * merger.h -- a merging iterator: one internal iterator (iter.h) over the
 * union of N internal iterators, in Invariant K1 order, forward and backward
 * (LevelDB's MergingIterator).
 */
#ifndef STRATA_MERGER_H
#define STRATA_MERGER_H

#include "iter.h"

/* Takes ownership of the n children (and of the array's contents, not the
 * array itself, which is copied). An error in any child makes the merged
 * iterator invalid with that child's status: a merge that silently skipped a
 * failed child would return wrong data. Not thread-safe; one user. */
iter *merger_new(iter **children, int n);

/* Gives child i the bound max_seq[i]: every entry it holds has a sequence
 * <= that (UINT64_MAX: no bound). Copied. Needed by merger_skip_covered. */
void merger_set_max_seqs(iter *m, const uint64_t *max_seq);

/* Invariant G2: a range tombstone [start, end) at sequence seq hides every
 * entry of a child whose max_seq < seq and whose user key lies in the
 * range, so such a child can jump past the range without looking at them.
 * Forward (the merger moving forward): every such child positioned at a
 * user key < end seeks to end; backward: every such child positioned at a
 * user key >= start moves to its last entry below start. Returns 1 when the
 * child that was current moved (the merger is then at its next entry), 0
 * when the current entry is unchanged. REQUIRES: valid; the caller has
 * checked that the tombstone is visible and covers the current entry. */
int merger_skip_covered(iter *m, slice start, slice end, uint64_t seq);

#endif
