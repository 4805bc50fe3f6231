/*
 * db_iter.c -- the user-facing iterator (eng_iter): a merging iterator over
 * an indexed batch's pending entries, the memtables and the tables of a
 * pinned superversion, turned into one entry per live user key (LevelDB's
 * DBIter).
 *
 * Visibility: an entry is visible when its sequence is <= the snapshot's, or
 * >= ENG_BATCH_SEQ_BASE (a pending batch entry, which shadows everything
 * committed). The newest visible entry of a user key decides: a deletion, or
 * a value covered by a newer visible range tombstone (rangedel.h, R1), hides
 * the key. Range deletion entries of memtables are not keys; they are
 * already in the tombstone set.
 *
 * A value hidden by a range tombstone lets every source older than the
 * tombstone jump past its range (merger.h, G2): after FLUSHALL a scan costs
 * a seek per source, not a step per deleted key.
 *
 * Invariant I1 (as LevelDB): in the forward direction the internal iterator
 * is at the entry that produced key(); in the reverse direction it is
 * before every entry of key() (at a smaller user key, or invalid; after a
 * range skip possibly before hidden entries of smaller keys too), and
 * key()/value() are copies in saved_key/saved_value. So a forward step from
 * the reverse direction skips every entry up to and including key().
 *
 * Invariant I2 (RocksDB's max_sequential_skip_in_iterations): a user key
 * rewritten often (a sorted set's rank blocks) holds thousands of versions
 * until a compaction drops them, and a step must not walk all of them.
 * Forward, after ITER_MAX_SKIP older versions of the key just decided the
 * merger reseeks to (key, 0, ENG_TYPE_DELETION), the last internal key the
 * user key can have, so it lands at most one entry of it short of the next
 * key; after ITER_MAX_SKIP entries newer than the snapshot it reseeks to
 * (key, snapshot, ENG_TYPE_SEEK), the key's newest visible version (batch
 * entries sort before it, already passed). Backward, after ITER_MAX_SKIP
 * versions of one key (visible, or newer than the snapshot) the walk stops
 * collecting them: it seeks to the newest visible version, decides the key
 * from it exactly as find_next_user_entry would (visibility, T3, R1), and
 * moves before every entry of the key (I1), all in two seeks.
 */
#include "db_impl.h"

#include "merger.h"
#include "write_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIR_FORWARD, DIR_REVERSE };

/* I2: versions of one user key stepped over before a reseek. A seek costs
 * about a dozen steps per source; RocksDB's default. */
enum { ITER_MAX_SKIP = 8 };

struct eng_iter {
    eng_db *db;
    superversion *sv;
    iter *it;
    uint64_t seq;      /* snapshot */
    uint64_t seek_seq; /* sequence used to build seek targets */
    rdel_view rd;      /* the tombstone sets to consult (sv's and the batch's) */
    int dir, valid;
    /* I4: while cur_ok, cur is iter_key(it): set by the plain forward step
     * from the key its next_key returned, cleared by every other move. */
    int cur_ok;
    slice cur;
    uint64_t steps;     /* internal entries looked at (eng_iter_steps) */
    uint64_t deleted;   /* user keys stepped over forwards as deleted (eng_iter_deleted) */
    sst_damage_log dmg; /* blocks stepped over (eng_iter_skip_damaged, T3) */
    buf saved_key, saved_value, target;
};

/* An entry for a user key a damaged block could hold is left out unless it
 * is newer than that table (T3): an older version must not stand in for
 * what the block lost. */
static inline int damaged(const eng_iter *di, slice k)
{
    return di->dmg.n && sst_damage_covers(&di->dmg, ikey_user_key(k), ikey_sequence(k));
}

static void note_damage(void *ctx, const sst_damage *d)
{
    eng_db *db = ctx;
    char msg[600];
    sst_damage_describe(d, msg, sizeof(msg));
    __atomic_add_fetch(&db->st.damaged_blocks_skipped, 1, __ATOMIC_RELAXED);
    db_log(db, 3, "%s: skipped by a scan, those keys left out", msg);
}

/* The visible range tombstone that hides the value (uk, s) (R1), the one
 * with the highest sequence; NULL when none does. */
static inline const rdel *covering(const eng_iter *di, slice uk, uint64_t s)
{
    return di->rd.n ? rdel_view_covering(&di->rd, uk, s, di->seq) : NULL;
}

/* The internal iterator is at a value r covers: every child older than r
 * jumps past r's range (G2). Returns 1 when that moved the merger off this
 * entry, 0 when the caller steps on as usual. The skip moves the memory
 * the entry's key and value point into: copy what is needed first. */
static int skip_covered(eng_iter *di, const rdel *r)
{
    return merger_skip_covered(di->it, rdel_start(r), rdel_end(r), r->seq);
}

static inline int visible(const eng_iter *di, uint64_t s)
{
    return s <= di->seq || s >= ENG_BATCH_SEQ_BASE;
}

static inline void save_slice(buf *b, slice s)
{
    b->len = 0;
    if (!b->data) buf_reserve(b, 16); /* key() never hands out NULL */
    buf_append(b, s.data, s.size);
}

static inline slice saved(const buf *b)
{
    return slice_make(b->data, b->len);
}

/* save_slice for the user key of the internal key a forward step leaves,
 * which every step saves: word moves (the keys are a few dozen bytes)
 * instead of a memcpy call. The last word may run up to 7 bytes past the
 * user key: into its 8-byte trailer when reading, into the room reserved
 * when writing. REQUIRES: s is ikey_user_key of an internal key. */
static inline void save_step_key(buf *b, slice s)
{
    size_t n = s.size;
    if (!b->data || n + 8 > b->cap) {
        b->len = 0;
        buf_reserve(b, n + 8 < 16 ? 16 : n + 8); /* key() never hands out NULL */
    }
    char *d = b->data;
    const char *p = s.data;
    for (size_t i = 0; i < n; i += 8)
        memcpy(d + i, p + i, 8);
    b->len = n;
}

/* Whether user key a is saved_key b. Tested from the end first, where
 * neighbouring keys of a scan differ. */
static inline int same_user_key(slice a, const buf *b)
{
    size_t n = a.size;
    if (n != b->len) return 0;
    if (n >= 8) {
        uint64_t x, y;
        memcpy(&x, a.data + n - 8, 8);
        memcpy(&y, b->data + n - 8, 8);
        if (x != y) return 0;
    }
    return n == 0 || memcmp(a.data, b->data, n) == 0;
}

/* Positions the internal iterator at the first entry >= (uk, seq, type). */
static void seek_internal(eng_iter *di, slice uk, uint64_t seq, int type)
{
    di->target.len = 0;
    ikey_append(&di->target, uk, seq, type);
    iter_seek(di->it, saved(&di->target));
}

static void find_next_user_entry(eng_iter *di, int skipping)
{
    iter *it = di->it;
    int nskipped = 0; /* older versions of saved_key stepped over (I2) */
    int ninvis = 0;   /* entries newer than the snapshot since a visible one (I2) */
    do {
        slice k = iter_key(it);
        uint64_t s = ikey_sequence(k);
        int t = ikey_type(k), moved = 0, c;
        const rdel *r;
        di->steps++;
        if (!visible(di, s) && ++ninvis > ITER_MAX_SKIP) {
            /* I2: to the newest version of this key the snapshot sees */
            ninvis = 0;
            seek_internal(di, ikey_user_key(k), di->seq, ENG_TYPE_SEEK);
            continue;
        }
        if (visible(di, s) && t != ENG_TYPE_RANGE_DELETION && !damaged(di, k)) {
            slice uk = ikey_user_key(k);
            ninvis = 0;
            if (skipping && (c = slice_compare(uk, saved(&di->saved_key))) <= 0) {
                /* an older version of a key already decided, or (after a
                 * backward walk that skipped a range, I1) a key before it */
                if (c == 0 && ++nskipped > ITER_MAX_SKIP) {
                    /* I2: past the rest of saved_key's versions at once */
                    nskipped = 0;
                    seek_internal(di, saved(&di->saved_key), 0, ENG_TYPE_DELETION);
                    continue; /* to the while's test: the seek moved it */
                }
            } else if (t == ENG_TYPE_DELETION) {
                save_slice(&di->saved_key, uk);
                skipping = 1;
                nskipped = 0;
                di->deleted++; /* a new key whose newest visible version is this */
            } else if ((r = covering(di, uk, s)) != NULL) {
                save_slice(&di->saved_key, uk); /* before the skip moves what uk points into */
                skipping = 1;
                nskipped = 0;
                moved = skip_covered(di, r);
            } else {
                di->valid = 1;
                di->saved_key.len = 0;
                return;
            }
        }
        if (moved <= 0) iter_next(it);
    } while (iter_valid(it));
    di->saved_key.len = 0;
    di->valid = 0;
}

/* I2: the backward walk met more than ITER_MAX_SKIP versions of saved_key
 * (visible ones, or newer than the snapshot). Decides the key from its
 * newest visible version, read forward, and moves the internal iterator
 * before every entry of it (I1). Returns ENG_TYPE_VALUE, with the value in
 * saved_value, or ENG_TYPE_DELETION (saved_value emptied) when the key is
 * hidden or an error stopped the read (the caller checks the status). */
static int decide_by_reseek(eng_iter *di)
{
    iter *it = di->it;
    slice key = saved(&di->saved_key);
    int vt = ENG_TYPE_DELETION;
    seek_internal(di, key, di->seek_seq, ENG_TYPE_SEEK);
    for (; iter_valid(it); iter_next(it)) {
        slice k = iter_key(it);
        uint64_t s = ikey_sequence(k);
        int t = ikey_type(k);
        di->steps++;
        if (slice_compare(ikey_user_key(k), key) != 0) break;
        if (!visible(di, s) || t == ENG_TYPE_RANGE_DELETION || damaged(di, k)) continue;
        if (t == ENG_TYPE_VALUE && !covering(di, key, s)) {
            vt = ENG_TYPE_VALUE;
            save_slice(&di->saved_value, iter_value(it));
        }
        break;
    }
    if (vt == ENG_TYPE_DELETION) di->saved_value.len = 0;
    seek_internal(di, key, ENG_MAX_SEQUENCE, ENG_TYPE_SEEK); /* before every entry of key */
    if (iter_valid(it))
        iter_prev(it);
    else if (iter_status(it) == ENG_OK)
        iter_seek_last(it); /* nothing at or after key: the last entry is before it */
    return vt;
}

static void find_prev_user_entry(eng_iter *di)
{
    iter *it = di->it;
    int vt = ENG_TYPE_DELETION;
    int have = 0, nver = 0; /* saved_key names the key walked; versions of it seen (I2) */
    int ninvis = 0;         /* entries newer than the snapshot since a visible one (I2) */
    if (iter_valid(it)) {
        do {
            slice k = iter_key(it);
            uint64_t s = ikey_sequence(k);
            int t = ikey_type(k), moved = 0;
            di->steps++;
            if (!visible(di, s) && ++ninvis > ITER_MAX_SKIP) {
                slice uk = ikey_user_key(k);
                int c = have ? slice_compare(uk, saved(&di->saved_key)) : -1;
                if (vt != ENG_TYPE_DELETION && c < 0) break; /* I1 holds here already */
                if (c != 0) {                                /* saved_key is hidden: uk next */
                    save_slice(&di->saved_key, uk);
                    have = 1;
                }
                vt = decide_by_reseek(di);
                nver = ninvis = 0;
                continue; /* to the while's test: the reseek moved it */
            }
            if (visible(di, s) && t != ENG_TYPE_RANGE_DELETION && !damaged(di, k)) {
                slice uk = ikey_user_key(k);
                int c = have ? slice_compare(uk, saved(&di->saved_key)) : -1;
                ninvis = 0;
                if (vt != ENG_TYPE_DELETION && c < 0)
                    break; /* I1: the newest entry of saved_key was seen */
                nver = c == 0 ? nver + 1 : 1;
                if (nver > ITER_MAX_SKIP) {
                    vt = decide_by_reseek(di);
                    nver = 0;
                    continue; /* to the while's test: the reseek moved it */
                }
                vt = t;
                const rdel *r = t == ENG_TYPE_VALUE ? covering(di, uk, s) : NULL;
                if (r) vt = ENG_TYPE_DELETION;
                save_slice(&di->saved_key, uk); /* before the skip moves what uk points into */
                have = 1;
                if (vt == ENG_TYPE_DELETION)
                    di->saved_value.len = 0;
                else
                    save_slice(&di->saved_value, iter_value(it));
                if (r) moved = skip_covered(di, r);
            }
            if (moved <= 0) iter_prev(it);
        } while (iter_valid(it));
    }
    /* An error may have cut the walk short inside the versions of
     * saved_key, leaving an older version saved: never return it. */
    if (iter_status(it) != ENG_OK) vt = ENG_TYPE_DELETION;
    if (vt == ENG_TYPE_DELETION) {
        di->valid = 0;
        di->saved_key.len = 0;
        di->saved_value.len = 0;
        di->dir = DIR_FORWARD;
    } else {
        di->valid = 1;
    }
}

eng_iter *eng_iter_new(eng_db *db, const eng_snapshot *snap, eng_batch *b)
{
    eng_iter *di = calloc(1, sizeof(*di));
    if (!di) return NULL;
    di->db = db;
    atomic_fetch_add_explicit(&db->live_iters, 1, memory_order_relaxed); /* M10 */
    di->sv = db_get_sv(db, &di->seq);
    if (snap) di->seq = snap->seq;
    superversion *sv = di->sv;
    memtable *bm = b ? batch_index(b) : NULL;
    di->seek_seq = bm ? ENG_MAX_SEQUENCE : di->seq;

    int cap = 2 + sv->nimm + sv->v->nfiles[0] + ENG_MAX_LEVELS, n = 0;
    iter **its = malloc(sizeof(iter *) * (size_t)cap);
    uint64_t *max_seq = malloc(sizeof(uint64_t) * (size_t)cap);
    if (!its || !max_seq) abort();
    /* G2's bounds: the batch's entries are the newest of all; mem may hold
     * anything committed; an immutable memtable or a table what it held. */
    if (bm) max_seq[n] = UINT64_MAX, its[n++] = mem_iter_new(bm);
    max_seq[n] = ENG_MAX_SEQUENCE;
    its[n++] = mem_iter_new(sv->mem);
    for (int i = 0; i < sv->nimm; i++)
        max_seq[n] = sv->imm_max_seq[i], its[n++] = mem_iter_new(sv->imm[i]);
    di->dmg.on_damage = note_damage;
    di->dmg.ctx = db;
    n = version_add_iters(sv->v, its, max_seq, n, 1, &di->dmg);
    di->it = merger_new(its, n);
    merger_set_max_seqs(di->it, max_seq);
    free(its);
    free(max_seq);

    for (int i = 0; i < sv->rd.n; i++)
        rdel_view_add(&di->rd, sv->rd.part[i]);
    rdel_set *brd = bm ? batch_rdels(b) : NULL;
    rdel_view_add(&di->rd, brd);
    rdel_set_unref(brd);
    return di;
}

void eng_iter_free(eng_iter *di)
{
    if (!di) return;
    atomic_fetch_sub_explicit(&di->db->live_iters, 1, memory_order_relaxed);
    iter_free(di->it);
    sst_damage_log_free(&di->dmg);
    sv_unref(di->sv);
    rdel_view_release(&di->rd);
    buf_free(&di->saved_key);
    buf_free(&di->saved_value);
    buf_free(&di->target);
    free(di);
}

void eng_iter_seek_first(eng_iter *di)
{
    di->cur_ok = 0; /* I4 */
    di->dir = DIR_FORWARD;
    di->saved_value.len = 0;
    iter_seek_first(di->it);
    if (iter_valid(di->it))
        find_next_user_entry(di, 0);
    else
        di->valid = 0;
}

void eng_iter_seek_last(eng_iter *di)
{
    di->cur_ok = 0; /* I4 */
    di->dir = DIR_REVERSE;
    di->saved_value.len = 0;
    iter_seek_last(di->it);
    find_prev_user_entry(di);
}

void eng_iter_seek(eng_iter *di, const char *k, size_t kl)
{
    di->cur_ok = 0; /* I4 */
    di->dir = DIR_FORWARD;
    di->saved_value.len = 0;
    seek_internal(di, slice_make(k, kl), di->seek_seq, ENG_TYPE_SEEK);
    if (iter_valid(di->it))
        find_next_user_entry(di, 0);
    else
        di->valid = 0;
}

void eng_iter_seek_prev(eng_iter *di, const char *k, size_t kl)
{
    eng_iter_seek(di, k, kl);
    if (!di->valid) {
        if (eng_iter_status(di) == ENG_OK) eng_iter_seek_last(di);
        return;
    }
    size_t cl;
    const char *ck = eng_iter_key(di, &cl);
    if (slice_compare(slice_make(ck, cl), slice_make(k, kl)) > 0) eng_iter_prev(di);
}

/* The usual forward step: the internal iterator is at a visible value of a
 * user key after saved_key, and no tombstone set or damage log is there to
 * consult. That is what find_next_user_entry would decide on its loop's
 * first pass; deciding it here spares the call and the loop's set-up.
 *
 * Invariant I3: here the merger moved forward one step from the entry of
 * saved_key with no child jumping (no tombstone set, so no G2 skip), and
 * its internal keys only grow (G1: user key ascending, then sequence
 * descending), so the new user key is >= saved_key: "after saved_key" is
 * "not equal to it", which is cheaper to test than the order. */
static inline int next_is_plain(eng_iter *di, slice k)
{
    if (di->rd.n || di->dmg.n) return 0;
    if (ikey_type(k) != ENG_TYPE_VALUE || !visible(di, ikey_sequence(k))) return 0;
    if (same_user_key(ikey_user_key(k), &di->saved_key)) return 0; /* I3 */
    di->steps++;
    di->valid = 1;
    di->saved_key.len = 0;
    di->cur = k; /* I4 */
    di->cur_ok = 1;
    return 1;
}

/* eng_iter_next's body, inlined into it and into eng_iter_next_entry. */
static inline __attribute__((always_inline)) void step_next(eng_iter *di)
{
    if (!di->valid) return;
    iter *it = di->it;
    slice k;
    int was_cur = di->cur_ok;
    di->cur_ok = 0; /* I4: the internal iterator moves */
    if (di->dir == DIR_REVERSE) {
        /* I1: the internal iterator is before key(); step into its entries,
         * which saved_key names, and skip them. */
        di->dir = DIR_FORWARD;
        if (!iter_valid(it))
            iter_seek_first(it);
        else
            iter_next(it);
        if (!iter_valid(it)) {
            di->valid = 0;
            di->saved_key.len = 0;
            return;
        }
    } else {
        save_step_key(&di->saved_key, ikey_user_key(was_cur ? di->cur : iter_key(it)));
        if (!iter_next_key(it, &k)) {
            di->valid = 0;
            di->saved_key.len = 0;
            return;
        }
        if (next_is_plain(di, k)) return;
    }
    find_next_user_entry(di, 1);
}

void eng_iter_next(eng_iter *di)
{
    step_next(di);
}

/* After a forward step the key and value are the internal iterator's
 * (I1), the key the one I4 kept when cur_ok. */
int eng_iter_next_entry(eng_iter *di, const char **k, size_t *kl, const char **v, size_t *vl)
{
    step_next(di);
    if (!di->valid) return 0;
    slice key = ikey_user_key(di->cur_ok ? di->cur : iter_key(di->it));
    slice val = iter_value(di->it);
    *k = key.data;
    *kl = key.size;
    *v = val.data;
    *vl = val.size;
    return 1;
}

void eng_iter_prev(eng_iter *di)
{
    if (!di->valid) return;
    iter *it = di->it;
    di->cur_ok = 0; /* I4: the internal iterator moves */
    if (di->dir == DIR_FORWARD) {
        /* I1: move before every entry of the current key. */
        save_slice(&di->saved_key, ikey_user_key(iter_key(it)));
        for (;;) {
            iter_prev(it);
            if (!iter_valid(it)) {
                di->valid = 0;
                di->saved_key.len = 0;
                di->saved_value.len = 0;
                return;
            }
            if (slice_compare(ikey_user_key(iter_key(it)), saved(&di->saved_key)) < 0) break;
        }
        di->dir = DIR_REVERSE;
    }
    find_prev_user_entry(di);
}

int eng_iter_valid(const eng_iter *di)
{
    return di->valid;
}

const char *eng_iter_key(const eng_iter *di, size_t *kl)
{
    slice k = di->cur_ok               ? ikey_user_key(di->cur) /* I4 */
              : di->dir == DIR_FORWARD ? ikey_user_key(iter_key(di->it))
                                       : saved(&di->saved_key);
    *kl = k.size;
    return k.data;
}

const char *eng_iter_value(const eng_iter *di, size_t *vl)
{
    slice v = di->dir == DIR_FORWARD ? iter_value(di->it) : saved(&di->saved_value);
    *vl = v.size;
    return v.data;
}

eng_status eng_iter_status(const eng_iter *di)
{
    return iter_status(di->it);
}

uint64_t eng_iter_steps(const eng_iter *di)
{
    return di->steps;
}

uint64_t eng_iter_deleted(const eng_iter *di)
{
    return di->deleted;
}

void eng_iter_skip_damaged(eng_iter *di)
{
    di->dmg.enabled = 1;
}

size_t eng_iter_damaged(const eng_iter *di, size_t i, char *buf, size_t cap)
{
    if (buf && cap && i < (size_t)di->dmg.n) sst_damage_describe(&di->dmg.d[i], buf, cap);
    return (size_t)di->dmg.n;
}
