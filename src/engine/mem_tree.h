/*
 * mem_tree.h -- the memtable's ordered index (internal to the memtable): a
 * B+tree of entry pointers in Invariant K1 order, one writer, lock-free
 * readers (mem_tree.c has the node layout and Invariants T1-T11).
 *
 * The memtable allocates each entry (mem_ent) in its arena and hands it to
 * mt_insert; the tree stores only pointers to entries and never copies or
 * frees them. Nodes live in the same arena, so every pointer a reader loads
 * stays valid until the memtable is freed (T4).
 */
#ifndef STRATA_MEM_TREE_H
#define STRATA_MEM_TREE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "coding.h"

/* One memtable entry: ikey (user key | trailer, dbformat.h) then value.
 * Immutable once inserted; the tree reads 8 bytes past any point of the
 * user key, into the trailer (mem_tree.c, T10). The leaf an insert put it in (T8), which only
 * the memtable's point-indexed entries need, is kept by the caller (in the
 * word before such an entry), not here. */
typedef struct mem_ent {
    uint32_t klen; /* ikey length: user key + 8 */
    uint32_t vlen;
    char data[]; /* klen bytes of ikey, then vlen bytes of value */
} mem_ent;

static inline slice ment_ukey(const mem_ent *e)
{
    return slice_make(e->data, e->klen - 8);
}
static inline uint64_t ment_trailer(const mem_ent *e)
{
    return dec_fixed64(e->data + e->klen - 8);
}
static inline slice ment_value(const mem_ent *e)
{
    return slice_make(e->data + e->klen, e->vlen);
}

struct mt_node;

/* Where mt_prefetch's descent for a key ended: the leaf and its version
 * then (T1). While the version is the same the leaf has not split, and so
 * its fences, which only its own split changes (T2, T9), still route the
 * key to it: mt_insert_hinted inserts there without a second descent. */
typedef struct mt_leaf_hint {
    const struct mt_node *leaf; /* NULL: none */
    uint64_t version;
} mt_leaf_hint;

#define MT_FINGERS 64
/* Failed finger tries in a row after which a finger rests (mem_tree.c). */
#define MT_FINGER_TRIES 2

typedef struct mem_tree {
    arena *arena;                   /* where nodes are allocated: writer-only */
    _Atomic(struct mt_node *) root; /* T7 */
    int height;                     /* levels, 1 = the root is a leaf: writer-only */
    struct mt_node *first;          /* the first leaf, always (splits keep the lower half) */
    /* Writer-only: per hash of a key's first bytes, the leaf the last such
     * key went into, tried before a descent (mem_tree.c, T9) unless
     * fails[i] says the last MT_FINGER_TRIES tries missed. */
    struct mt_node *finger[MT_FINGERS];
    uint8_t finger_fails[MT_FINGERS];
    uint64_t descents;     /* writer-only: inserts that searched from the root */
    uint64_t finger_tries; /* writer-only: inserts that tried a finger first */
    uint64_t hint_reads;   /* writer-only: key pointers mt_insert_before compared */
    uint64_t hinted;       /* writer-only: inserts mt_insert_hinted made without a descent */
} mem_tree;

/* An empty tree whose nodes come from a (the memtable's arena). */
void mt_init(mem_tree *t, arena *a);

/* Inserts e; when leaf is not NULL, records there the leaf e went into
 * (a hint for mt_insert_before, T8). Tries first, without a descent, the
 * leaf the last key with e's first bytes went into (its finger): keys that
 * arrive in order, such as an index's entries whose last field grows, cost
 * an in-leaf insert. Keys in random order, whose finger keeps missing,
 * stop trying it until a descent lands in the leaf the one before went
 * into. REQUIRES: the caller is the only writer (T1); no
 * entry with e's ikey is in the tree; e stays valid and unchanged while
 * the tree is. */
void mt_insert(mem_tree *t, mem_ent *e, struct mt_node **leaf);

/* mt_insert, but first into hint's leaf (when hint is not NULL) if it has
 * room under its prefix and either has not changed since mt_prefetch found
 * it for e's user key or its fences (its first key, the next leaf's, T9)
 * still hold e: then no descent. REQUIRES: as mt_insert; hint came from
 * the writer's own mt_prefetch of e's user key. */
void mt_insert_hinted(mem_tree *t, mem_ent *e, struct mt_node **leaf, const mt_leaf_hint *hint);

/* Inserts e right before next, an entry already in the tree that follows e
 * in K1 order with nothing between them (the previous newest version of
 * e's user key), without a descent from the root: next_leaf, the leaf
 * recorded when next was inserted (T8), finds the leaf. replace = 1: e
 * takes next's slot instead, and next leaves the tree (memtable.c, M10).
 * Returns MT_INSERTED or MT_REPLACED when done (and records e's leaf in
 * *leaf); 0 (nothing changed) when that takes more than a change within a
 * leaf -- next is its leaf's fence (T9), or the leaf is full -- and the
 * caller then calls mt_insert. REQUIRES: as mt_insert; e and next have
 * the same user key; replace only while no reader needs next. */
#define MT_INSERTED 1
#define MT_REPLACED 2
int mt_insert_before(mem_tree *t, mem_ent *e, struct mt_node **leaf, const mem_ent *next,
                     struct mt_node *next_leaf, int replace);

/* The most keys one mt_prefetch call follows. */
#define MT_PREFETCH_MAX 32

/* Starts loading the nodes an insert of a new newest version of each of
 * the n user keys keys[i] (at most MT_PREFETCH_MAX are looked at) will read: the n
 * descents go level by level together, so that their cache misses overlap
 * instead of following one another, and each ends by prefetching its
 * leaf. A hint only: it changes nothing, and it may run while the writer
 * changes the tree (whatever it loads can be dereferenced, T1 and T4; a
 * torn read only sends a prefetch astray). When hints is not NULL, hints[i]
 * gets the leaf key i's descent reached: exact only when the caller is the
 * writer (nothing changed the tree during the descents), so only the
 * writer passes them on to mt_insert_hinted. REQUIRES: t stays allocated. */
void mt_prefetch(const mem_tree *t, size_t n, const slice *keys, mt_leaf_hint *hints);

/* Starts loading leaf (a leaf hint, mt_insert's *leaf): for the writer
 * about to insert before an entry it records (mt_insert_before). */
void mt_prefetch_leaf(const struct mt_node *leaf);

/* A reader's position. Any thread may use its own cursor concurrently with
 * the writer and with other cursors. */
typedef struct mt_cursor {
    const mem_tree *t;
    const struct mt_node *leaf; /* the leaf cur was read from */
    uint64_t version;           /* leaf's version when cur was read there */
    int idx;                    /* cur's slot in leaf at that version */
    const mem_ent *cur;         /* NULL: not positioned */
} mt_cursor;

void mt_cursor_init(mt_cursor *c, const mem_tree *t);

/* Each positions c and returns the entry it lands on, or NULL (and c->cur
 * NULL) when there is none: the first entry >= (uk, trailer) in K1 order,
 * the first entry, the last entry. */
const mem_ent *mt_seek(mt_cursor *c, const char *uk, size_t ul, uint64_t trailer);
const mem_ent *mt_first(mt_cursor *c);
const mem_ent *mt_last(mt_cursor *c);
/* The entry after / before c->cur. REQUIRES: c->cur != NULL. */
const mem_ent *mt_next(mt_cursor *c);
const mem_ent *mt_prev(mt_cursor *c);

/* Debug checker, O(entries): returns 0 when Invariants T2, T3, T5, T6, T9
 * and T11 hold and the leaves hold exactly *count entries (set *count to the
 * number found), else the number of the broken invariant (1 for the
 * count). REQUIRES: no concurrent mt_insert. */
int mt_check(const mem_tree *t, uint64_t *count);

#endif
