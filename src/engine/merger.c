/*
 * merger.c -- the merging iterator; see merger.h.
 *
 * Invariant G1: when valid, cur is the child whose key is the smallest
 * (forward) or largest (reverse) among the valid children, and in the
 * forward direction every other valid child is positioned at a key > key(),
 * in the reverse direction at a key < key(). A direction switch re-seeks
 * every other child to restore G1 (as LevelDB does); a child that holds
 * exactly key() cannot exist because internal keys are unique.
 *
 * Invariant G2 (merger.h): a child whose entries are all older than a range
 * tombstone may jump over the tombstone's range (merger_skip_covered);
 * moving it forward past keys > key() (or backward past keys < key()) keeps
 * G1.
 *
 * Invariant G3: between calls, ok[i] and key[i] are child i's valid() and
 * key(), refreshed (note_child) after every move of that child, and when cur
 * is valid, second is the child that would be current were cur exhausted
 * (-1: none), every valid child other than cur and second being positioned
 * at or beyond it. A step that leaves cur still ahead of second keeps both
 * without looking at any other child (RocksDB's trick for long runs of one
 * source); otherwise the cached keys are searched again, with no call into
 * the children. A child's key() stays valid until that child moves (iter.h),
 * so the cache never points at freed memory.
 *
 * Invariant G4: between calls, leaf[i] is child i's leaf() (iter.h) while
 * ok[i], else NULL, refreshed with ok[i] and key[i]. The forward step of a
 * child with a leaf is block_iter_next on it, and only when the block runs
 * out a call into the child (leaf_end): a run of entries from one block
 * costs the block decode and G3's one comparison each, which is what stops
 * the run where another child's entry (a newer version, a memtable's write,
 * a range tombstone's entries for the user iterator to judge) comes first.
 * Only that step moves a child without note_child, and it keeps leaf[i]
 * good (iter.h: the pointer survives its own steps).
 */
#include "merger.h"

#include "block.h"
#include "dbformat.h"

#include <stdlib.h>
#include <string.h>

enum { DIR_FORWARD, DIR_REVERSE };

typedef struct merger {
    iter base;
    iter **c;
    uint64_t *max_seq; /* per child, or NULL: G2 */
    uint64_t *max_seq_room;
    slice *key;        /* per child: its key() while ok (G3) */
    block_iter **leaf; /* per child: its leaf() or NULL (G4) */
    unsigned char *ok; /* per child: its valid() (G3); shares key's allocation */
    int n;
    int cur;    /* -1: not valid */
    int second; /* G3: the runner-up to cur, or -1 */
    int dir;
    eng_status st;
} merger;

/* Refreshes child i's cache after it moved (G3) and records the first
 * child error; once set, the merger stays invalid. */
static void note_child(merger *m, int i)
{
    iter *c = m->c[i];
    m->ok[i] = (unsigned char)iter_valid(c);
    m->leaf[i] = NULL;
    if (m->ok[i]) {
        m->key[i] = iter_key(c);
        if (c->ops->leaf) m->leaf[i] = c->ops->leaf(c); /* G4 */
    } else if (m->st == ENG_OK) {
        eng_status s = iter_status(c);
        if (s != ENG_OK) m->st = s;
    }
}

static void note_all(merger *m)
{
    for (int i = 0; i < m->n; i++)
        note_child(m, i);
}

/* Whether child a's key comes before child b's in the merger's direction
 * (both valid). Ties cannot happen: internal keys are unique (G1). */
static inline int ahead(const merger *m, int a, int b)
{
    int c = ikey_compare(m->key[a], m->key[b]);
    return m->dir == DIR_FORWARD ? c < 0 : c > 0;
}

/* Sets cur and second (G1, G3) from the cached keys. Forward the lowest
 * index wins a search, backward the highest, as LevelDB's scans do. */
static void find_current(merger *m)
{
    int best = -1, next = -1;
    int fwd = m->dir == DIR_FORWARD;
    for (int j = 0; j < m->n; j++) {
        int i = fwd ? j : m->n - 1 - j;
        if (!m->ok[i]) continue;
        if (best < 0 || ahead(m, i, best)) {
            next = best;
            best = i;
        } else if (next < 0 || ahead(m, i, next)) {
            next = i;
        }
    }
    m->cur = best;
    m->second = next;
}

/* cur moved one step in the merger's direction (note_child done): G3's
 * fast path keeps cur while it is still ahead of second. */
static inline void after_step(merger *m)
{
    int cur = m->cur;
    if (m->ok[cur] && (m->second < 0 || ahead(m, cur, m->second))) return;
    find_current(m);
}

static int mg_valid(const iter *it)
{
    const merger *m = (const merger *)it;
    return m->cur >= 0 && m->st == ENG_OK;
}

static void mg_seek_first(iter *it)
{
    merger *m = (merger *)it;
    for (int i = 0; i < m->n; i++)
        iter_seek_first(m->c[i]);
    note_all(m);
    m->dir = DIR_FORWARD;
    find_current(m);
}

static void mg_seek_last(iter *it)
{
    merger *m = (merger *)it;
    for (int i = 0; i < m->n; i++)
        iter_seek_last(m->c[i]);
    note_all(m);
    m->dir = DIR_REVERSE;
    find_current(m);
}

static void mg_seek(iter *it, slice target)
{
    merger *m = (merger *)it;
    for (int i = 0; i < m->n; i++)
        iter_seek(m->c[i], target);
    note_all(m);
    m->dir = DIR_FORWARD;
    find_current(m);
}

/* The forward step of cur while the merger moves forward: one call into
 * the child, then G3's check against second. */
static inline __attribute__((always_inline)) void step_forward(merger *m)
{
    int i = m->cur;
    iter *c = m->c[i];
    block_iter *bi = m->leaf[i];
    if (bi) { /* G4: a run of the leaf's block */
        block_iter_next(bi);
        if (block_iter_valid(bi)) {
            m->key[i] = block_iter_key(bi);
            after_step(m);
            return;
        }
        m->ok[i] = (unsigned char)c->ops->leaf_end(c, &m->key[i]);
        m->leaf[i] = m->ok[i] ? c->ops->leaf(c) : NULL; /* G4: it may be another file's */
    } else {
        m->ok[i] = (unsigned char)iter_next_key(c, &m->key[i]);
    }
    if (!m->ok[i]) note_child(m, i); /* records an error */
    after_step(m);
}

static void mg_next(iter *it)
{
    merger *m = (merger *)it;
    iter *cur = m->c[m->cur];
    if (m->dir != DIR_FORWARD) {
        /* Invariant G1: move every other child to the first key > key(). */
        slice k = m->key[m->cur];
        for (int i = 0; i < m->n; i++) {
            iter *c = m->c[i];
            if (c == cur) continue;
            iter_seek(c, k);
            if (iter_valid(c) && ikey_compare(k, iter_key(c)) == 0) iter_next(c);
            note_child(m, i);
        }
        m->dir = DIR_FORWARD;
        iter_next(cur);
        note_child(m, m->cur);
        find_current(m);
        return;
    }
    step_forward(m);
}

/* next, valid and key in one call (iter.h): the user iterator's forward
 * step wants all three, and key() is the cached one (G3). */
static int mg_next_key(iter *it, slice *key)
{
    merger *m = (merger *)it;
    if (m->dir == DIR_FORWARD)
        step_forward(m);
    else
        mg_next(it);
    if (m->cur < 0 || m->st != ENG_OK) return 0;
    *key = m->key[m->cur];
    return 1;
}

static void mg_prev(iter *it)
{
    merger *m = (merger *)it;
    iter *cur = m->c[m->cur];
    if (m->dir != DIR_REVERSE) {
        /* Invariant G1: move every other child to the last key < key(). */
        slice k = m->key[m->cur];
        for (int i = 0; i < m->n; i++) {
            iter *c = m->c[i];
            if (c == cur) continue;
            iter_seek(c, k);
            if (iter_valid(c))
                iter_prev(c);
            else if (iter_status(c) == ENG_OK)
                iter_seek_last(c);
            note_child(m, i);
        }
        m->dir = DIR_REVERSE;
        iter_prev(cur);
        note_child(m, m->cur);
        find_current(m);
        return;
    }
    iter_prev(cur);
    note_child(m, m->cur);
    after_step(m);
}

static slice mg_key(const iter *it)
{
    const merger *m = (const merger *)it;
    return m->key[m->cur]; /* G3 */
}

static slice mg_value(const iter *it)
{
    const merger *m = (const merger *)it;
    const block_iter *bi = m->leaf[m->cur]; /* G4 */
    return bi ? block_iter_value(bi) : iter_value(m->c[m->cur]);
}

static eng_status mg_status(const iter *it)
{
    const merger *m = (const merger *)it;
    if (m->st != ENG_OK) return m->st;
    for (int i = 0; i < m->n; i++) {
        eng_status s = iter_status(m->c[i]);
        if (s != ENG_OK) return s;
    }
    return ENG_OK;
}

static void mg_destroy(iter *it)
{
    merger *m = (merger *)it;
    for (int i = 0; i < m->n; i++)
        iter_free(m->c[i]);
    free(m); /* and the arrays after it (merger_new) */
}

void merger_set_max_seqs(iter *it, const uint64_t *max_seq)
{
    merger *m = (merger *)it;
    m->max_seq = m->max_seq_room;
    memcpy(m->max_seq, max_seq, sizeof(uint64_t) * (size_t)m->n);
}

/* Moves child c to its last entry with a user key below start. */
static void seek_before(iter *c, slice start, buf *t)
{
    t->len = 0;
    ikey_append(t, start, ENG_MAX_SEQUENCE, ENG_TYPE_SEEK);
    iter_seek(c, slice_make(t->data, t->len));
    if (iter_valid(c))
        iter_prev(c);
    else if (iter_status(c) == ENG_OK)
        iter_seek_last(c);
}

int merger_skip_covered(iter *it, slice start, slice end, uint64_t seq)
{
    merger *m = (merger *)it;
    if (!m->max_seq || m->cur < 0) return 0;
    int cur = m->cur, moved = 0;
    buf t = {0};
    for (int i = 0; i < m->n; i++) {
        iter *c = m->c[i];
        if (m->max_seq[i] >= seq || !m->ok[i]) continue; /* G2 */
        slice uk = ikey_user_key(m->key[i]);
        if (m->dir == DIR_FORWARD && slice_compare(uk, end) < 0) {
            t.len = 0;
            ikey_append(&t, end, ENG_MAX_SEQUENCE, ENG_TYPE_SEEK);
            iter_seek(c, slice_make(t.data, t.len));
        } else if (m->dir == DIR_REVERSE && slice_compare(uk, start) >= 0) {
            seek_before(c, start, &t);
        } else {
            continue;
        }
        note_child(m, i);
        moved |= i == cur;
    }
    buf_free(&t);
    find_current(m);
    return moved;
}

static const struct iter_ops merger_ops = {
    mg_valid, mg_seek_first, mg_seek_last, mg_seek,    mg_next,     mg_prev,
    mg_key,   mg_value,      mg_status,    mg_destroy, mg_next_key,
};

iter *merger_new(iter **children, int n)
{
    /* One allocation, built per query (db_iter.c): the struct, then every
     * per-child array, the 8-byte ones first so each stays aligned. */
    size_t slots = (size_t)(n ? n : 1);
    size_t per = sizeof(iter *) + sizeof(uint64_t) + sizeof(slice) + sizeof(block_iter *) + 1;
    merger *m = calloc(1, sizeof(*m) + slots * per);
    if (!m) abort();
    m->c = (iter **)(m + 1);
    m->max_seq_room = (uint64_t *)(m->c + slots);
    m->key = (slice *)(m->max_seq_room + slots);
    m->leaf = (block_iter **)(m->key + slots);
    m->ok = (unsigned char *)(m->leaf + slots);
    for (int i = 0; i < n; i++)
        m->c[i] = children[i];
    m->base.ops = &merger_ops;
    m->n = n;
    m->cur = -1;
    m->second = -1;
    m->dir = DIR_FORWARD;
    m->st = ENG_OK;
    return &m->base;
}
