/*
 * iter.h -- the internal iterator interface shared by memtables, table
 * files, the merging iterator and the level iterators.
 *
 * An internal iterator walks internal keys (dbformat.h) in Invariant K1
 * order, every version of every key, deletions included. key() and value()
 * point into memory owned by the iterator and stay valid until it moves.
 * After an error, valid() is 0 and status() tells the error.
 */
#ifndef STRATA_ITER_H
#define STRATA_ITER_H

#include "coding.h"
#include "engine.h"

typedef struct iter iter;

struct iter_ops {
    int (*valid)(const iter *it);
    void (*seek_first)(iter *it);
    void (*seek_last)(iter *it);
    void (*seek)(iter *it, slice target_ikey); /* first entry >= target */
    void (*next)(iter *it);                    /* REQUIRES: valid */
    void (*prev)(iter *it);                    /* REQUIRES: valid */
    slice (*key)(const iter *it);              /* REQUIRES: valid */
    slice (*value)(const iter *it);            /* REQUIRES: valid */
    eng_status (*status)(const iter *it);
    void (*destroy)(iter *it);
    /* Optional (NULL: next, then valid and key): steps forward and returns
     * valid(), setting *key to key() when valid. REQUIRES: valid. A merger
     * stepping a child wants all three, and a table under a level iterator
     * answers them in one call instead of six. */
    int (*next_key)(iter *it, slice *key);
    /* Optional (NULL: none), Invariant G4 (merger.c): the block iterator
     * the current entry comes from, when stepping it with block_iter_next
     * is this iterator's next() for as long as it stays valid: a table, or
     * a level iterator over one, hands its data block's iterator out so
     * the merger steps a run of the block's entries without the layers in
     * between. Returns NULL when there is none. The pointer stays good
     * until the iterator moves by any op other than that step (the level
     * iterator frees a file's iterator when it changes files). The
     * iterator owns it. REQUIRES: valid. */
    struct block_iter *(*leaf)(iter *it);
    /* With leaf: the leaf ran off its block (block_iter_next left it
     * invalid, or it failed): moves on as next() would have from the
     * block's last entry, and returns valid(), setting *key to key() when
     * valid. REQUIRES: leaf(it) was non-NULL and has been stepped since. */
    int (*leaf_end)(iter *it, slice *key);
};

/* Every iterator embeds this as its first member. */
struct iter {
    const struct iter_ops *ops;
};

static inline int iter_valid(const iter *it)
{
    return it->ops->valid(it);
}
static inline void iter_seek_first(iter *it)
{
    it->ops->seek_first(it);
}
static inline void iter_seek_last(iter *it)
{
    it->ops->seek_last(it);
}
static inline void iter_seek(iter *it, slice t)
{
    it->ops->seek(it, t);
}
static inline void iter_next(iter *it)
{
    it->ops->next(it);
}
static inline void iter_prev(iter *it)
{
    it->ops->prev(it);
}
static inline int iter_next_key(iter *it, slice *key)
{
    if (it->ops->next_key) return it->ops->next_key(it, key);
    it->ops->next(it);
    if (!it->ops->valid(it)) return 0;
    *key = it->ops->key(it);
    return 1;
}
static inline slice iter_key(const iter *it)
{
    return it->ops->key(it);
}
static inline slice iter_value(const iter *it)
{
    return it->ops->value(it);
}
static inline eng_status iter_status(const iter *it)
{
    return it->ops->status(it);
}
static inline void iter_free(iter *it)
{
    if (it) it->ops->destroy(it);
}

/* An iterator that is never valid and reports status s (for errors). */
iter *iter_new_error(eng_status s);

#endif
