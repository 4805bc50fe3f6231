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

#endif
