/*
 * ks_list.h -- internal to src/keyspace: what ks_list.c (the list row,
 * packed lists, the commands' data work) and ks_list_big.c (big lists:
 * chunks of 32 positions, ENCODING.md "Lists"; one chunk's encoding in
 * ks_list_chunk.c) share.
 *
 * The lbig_* functions change a big list's members in c->batch and its
 * view (head, n) in memory; the caller writes the record once at the end
 * (list_put_big), so a command that makes several changes (LMOVE onto the
 * same list: a pop and a push) writes it once. Command thread only; the
 * same status conventions as ks_type.h.
 */
#ifndef STRATA_KS_LIST_H
#define STRATA_KS_LIST_H

#include "keyspace/ks_type.h"

/* A list as found: its length and, packed, its items (.f/.fl) with their
 * whole entries (.v/.vl: length varint and bytes), so that a run of
 * entries can be copied into a new body as it is. */
typedef struct lview {
    uint64_t n;
    int big;
    uint64_t version, head;
    ks_fvec items; /* empty when opened for a push (not parsed: see run) */
    /* packed: the entries' bytes after the count, one run (a push copies
     * them as they are) */
    const char *run;
    size_t rn;
} lview;

/* A list opened for a write. */
typedef struct lst {
    ks_write w;
    lview v;
} lst;

#define KS_LIST_HEAD0 (1ull << 63) /* head of a new big list */
/* A big list's chunks hold 1 << KS_LIST_CHUNK_SHIFT positions; items up
 * to KS_LIST_INLINE bytes are kept inside them (ENCODING.md). */
#define KS_LIST_CHUNK_SHIFT 5
#define KS_LIST_INLINE 128

/* The record of big list l from its view: version, head, n (0 deletes the
 * key). */
ks_status list_put_big(lst *l);

/* ---- Big lists (ks_list_big.c) ----------------------------------------- */

/* Writes items[0..n) (n >= 1) as the whole list under a new version
 * (KS-E2) from KS_LIST_HEAD0 and makes l's view big; the record is the
 * caller's. */
ks_status lbig_create(lst *l, const ks_field *items, size_t n);
/* Pushes items[0..n) one after the other at where. */
ks_status lbig_push(lst *l, int where, const ks_field *items, size_t n);
/* Removes k (1..n) items from where; out gets copies of them in removal
 * order. */
ks_status lbig_pop(lst *l, int where, uint64_t k, ks_fvec *out);
/* Item i (< n) as an engine buffer (ks_val_free). */
ks_status lbig_get(ks_ctx *c, int db, const lview *lv, uint64_t i, ks_val *out);
/* Item i (< n) becomes v. */
ks_status lbig_set(lst *l, uint64_t i, const char *v, size_t vl);
/* Keeps the k >= 1 items from index from. */
ks_status lbig_trim(lst *l, uint64_t from, uint64_t k);
/* Inserts v at index j (0..n), moving the shorter side. */
ks_status lbig_insert(lst *l, uint64_t j, const char *v, size_t vl);
/* Removes the items at the indexes gone[0..k) (ascending, k < n), moving
 * the cheaper side over the holes. */
ks_status lbig_remove(lst *l, const uint64_t *gone, size_t k);

/* Hands the items [from, from+k) over in order, or from the last of them
 * back (rev), a chunk's worth at a time: fn(arg, i, items, n) gets the
 * items of indexes i, i+1 ... (rev: i, i-1 ...) as f/fl, valid during the
 * call; it returns 0 to go on, 1 to stop, and must not write (an iterator
 * is open). */
typedef int (*lwalk_fn)(void *arg, uint64_t i, const ks_field *items, size_t n);
ks_status lbig_walk(ks_ctx *c, int db, const lview *lv, uint64_t from, uint64_t k, int rev,
                    lwalk_fn fn, void *arg);

#endif
