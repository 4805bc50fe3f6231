/*
 * ks_set.h -- internal to src/keyspace: what ks_set.c (storage, the set
 * row, single-key commands) and ks_set_ops.c (random members, the
 * multi-set commands) share. Format: ENCODING.md, "Sets".
 */
#ifndef STRATA_KS_SET_H
#define STRATA_KS_SET_H

#include "keyspace/ks_type.h"

/* Big sets of at most this many members are sampled exactly (read whole,
 * with the tombstones under their version: at most count + the slack);
 * bigger ones by a seek to a random hash (ENCODING.md). */
#define KS_SET_EXACT_RANDOM 64
/* A big set is rewritten once more members were deleted under its
 * version outside its hole (KS-T1: walks and draws skip the hole) than it
 * has left, plus this. Small, so that an exact draw on a set popped down to
 * a few members walks few tombstones. */
#define KS_SET_REWRITE_SLACK 64
/* ... and once more than this many times the live count, hole or not
 * (what a walk that does not skip the hole, SSCAN, may step over). */
#define KS_SET_REWRITE_RATIO 16
/* Extra steps after the seek of one random draw on a big set: 0..N-1. */
#define KS_SET_DRAW_WINDOW 16
/* Members one SPOP window read takes (<= KS_SPOP_KEEP_MAX). */
#define KS_SET_POP_WINDOW 64

/* The hole of a big set: a cyclic range of member hashes [lo, hi) that
 * SPOP has emptied (ENCODING.md, "Sets"). Invariant KS-T1: no live member
 * of the set's version has a hash in its hole, so a walk or a draw may skip
 * it without reading its tombstones. lo == hi: no hole. */
typedef struct ks_set_hole {
    uint64_t lo, hi;
    uint64_t n;    /* tombstones taken to lie in the hole (<= removed) */
    uint64_t at;   /* removed when hi last moved */
    uint64_t tail; /* the hash of the last live member before lo; lo: not known */
} ks_set_hole;
/* The hole of live set record m (none for packed sets and old records). */
void ks_set_hole_of(const ks_meta *m, ks_set_hole *h);
/* 1 when hash h lies in hole h (never for an empty hole). */
int ks_set_hole_has(const ks_set_hole *h, uint64_t hash);

/* Calls fn(arg, member) for every live member of big set m in stored
 * order, skipping its hole (KS-T1); stops when fn returns non-zero. The
 * member bytes are the iterator's, valid during the call only. Returns
 * KS_OK or an engine / corruption error. */
typedef int (*ks_set_visit_fn)(void *arg, const char *m, size_t ml);
ks_status ks_set_walk(ks_ctx *c, const ks_meta *m, ks_set_visit_fn fn, void *arg);

/* A hash set of borrowed byte strings (dedupe and membership probes). */
typedef struct ks_strset {
    struct ks_strslot {
        const char *p; /* NULL: free */
        size_t n;
        uint64_t h;
    } * slots;
    size_t cap, n;
} ks_strset;
int ks_strset_init(ks_strset *s, size_t expect); /* 0, or -1 on out-of-memory */
/* 1 when added, 0 when already there, -1 on out-of-memory. */
int ks_strset_add(ks_strset *s, const char *p, size_t n);
int ks_strset_has(const ks_strset *s, const char *p, size_t n);
void ks_strset_free(ks_strset *s);

/* A set read for a command. */
typedef struct ks_sview {
    ks_meta m;       /* owned; type KS_NONE when the key is absent */
    ks_fvec items;   /* packed: the members, pointing into m.raw */
    ks_strset probe; /* packed: built at the first ks_sview_has */
    int probing;
    int own; /* m is the view's (else borrowed from a ks_write) */
} ks_sview;
/* Reads key as a set: KS_OK, KS_NOTFOUND (or, with absent_ok, KS_OK and
 * an empty set of type KS_NONE), KS_ERR_WRONGTYPE or an engine error; on
 * anything but KS_OK there is nothing to close. */
ks_status ks_sview_open(ks_ctx *c, const char *key, size_t klen, int absent_ok, ks_sview *v);
/* A view of the live set record m (borrowed: it must outlive the view). */
ks_status ks_sview_of(ks_ctx *c, const ks_meta *m, ks_sview *v);
uint64_t ks_sview_count(const ks_sview *v);
/* 1 when member is in the set, 0 when not, -1 on an error (c->err). */
int ks_sview_has(ks_ctx *c, ks_sview *v, const char *m, size_t ml);
/* Appends every member to out (copies for big sets, in stored order). */
ks_status ks_sview_all(ks_ctx *c, const ks_sview *v, ks_fvec *out);
void ks_sview_close(ks_sview *v);

/* 1 when m is an integer Redis's intset would hold (string2ll). */
int ks_set_is_int(const char *m, size_t ml);
/* Writes mem[0..n) (distinct) as w's complete new set, as Redis's
 * setTypeCreate + setTypeAdd would build it (ENC: hashtable unless every
 * member is an integer and n <= set-max-intset-entries), packed when it
 * fits, else under a new version; n == 0 deletes the key. keepttl: keep
 * w's old TTL (SPOP's rebuild) or drop it (the STORE commands). */
ks_status ks_set_store(ks_write *w, const ks_field *mem, size_t n, int keepttl);
/* Removes members from w's live set (packed or big); *removed counts them.
 * Deletes the key when it becomes empty. known: every one of mem is a
 * distinct member (just drawn), so a big set skips the look-ups. */
ks_status ks_set_remove(ks_write *w, const ks_field *mem, size_t n, int known, uint64_t *removed);
/* Pops member m (just read: a live member) from w's big set and writes
 * hole as the set's new hole (it must satisfy KS-T1 with m gone; NULL:
 * keep the record's). */
ks_status ks_set_pop(ks_write *w, const char *m, size_t ml, const ks_set_hole *hole);
/* Adds members to w's key (a live set or absent), with Redis's encoding
 * rules; *added counts the new ones. */
ks_status ks_set_add(ks_write *w, const ks_field *mem, size_t n, uint64_t *added);
/* The member suffix of a big set: be64(XXH3-64(member)) member. */
void ks_set_suffix(ks_ekey *k, const char *m, size_t ml);

#endif
