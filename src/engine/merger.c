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
 */
#include "merger.h"

#include "dbformat.h"

#include <stdlib.h>
#include <string.h>

enum { DIR_FORWARD, DIR_REVERSE };

typedef struct merger {
    iter base;
    iter **c;
    uint64_t *max_seq; /* per child, or NULL: G2 */
    int n;
    int cur; /* -1: not valid */
    int dir;
    eng_status st;
} merger;

/* Records the first child error; once set, the merger stays invalid. */
static void check_child(merger *m, iter *c)
{
    if (m->st == ENG_OK && !iter_valid(c)) {
        eng_status s = iter_status(c);
        if (s != ENG_OK) m->st = s;
    }
}

static void check_all(merger *m)
{
    for (int i = 0; i < m->n; i++)
        check_child(m, m->c[i]);
}

static void find_smallest(merger *m)
{
    int best = -1;
    slice bk = {0};
    for (int i = 0; i < m->n; i++) {
        if (!iter_valid(m->c[i])) continue;
        slice k = iter_key(m->c[i]);
        if (best < 0 || ikey_compare(k, bk) < 0) {
            best = i;
            bk = k;
        }
    }
    m->cur = best;
}

static void find_largest(merger *m)
{
    int best = -1;
    slice bk = {0};
    for (int i = m->n - 1; i >= 0; i--) {
        if (!iter_valid(m->c[i])) continue;
        slice k = iter_key(m->c[i]);
        if (best < 0 || ikey_compare(k, bk) > 0) {
            best = i;
            bk = k;
        }
    }
    m->cur = best;
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
    check_all(m);
    find_smallest(m);
    m->dir = DIR_FORWARD;
}

static void mg_seek_last(iter *it)
{
    merger *m = (merger *)it;
    for (int i = 0; i < m->n; i++)
        iter_seek_last(m->c[i]);
    check_all(m);
    find_largest(m);
    m->dir = DIR_REVERSE;
}

static void mg_seek(iter *it, slice target)
{
    merger *m = (merger *)it;
    for (int i = 0; i < m->n; i++)
        iter_seek(m->c[i], target);
    check_all(m);
    find_smallest(m);
    m->dir = DIR_FORWARD;
}

static void mg_next(iter *it)
{
    merger *m = (merger *)it;
    iter *cur = m->c[m->cur];
    if (m->dir != DIR_FORWARD) {
        /* Invariant G1: move every other child to the first key > key(). */
        slice k = iter_key(cur);
        for (int i = 0; i < m->n; i++) {
            iter *c = m->c[i];
            if (c == cur) continue;
            iter_seek(c, k);
            if (iter_valid(c) && ikey_compare(k, iter_key(c)) == 0) iter_next(c);
            check_child(m, c);
        }
        m->dir = DIR_FORWARD;
    }
    iter_next(cur);
    check_child(m, cur);
    find_smallest(m);
}

static void mg_prev(iter *it)
{
    merger *m = (merger *)it;
    iter *cur = m->c[m->cur];
    if (m->dir != DIR_REVERSE) {
        /* Invariant G1: move every other child to the last key < key(). */
        slice k = iter_key(cur);
        for (int i = 0; i < m->n; i++) {
            iter *c = m->c[i];
            if (c == cur) continue;
            iter_seek(c, k);
            if (iter_valid(c))
                iter_prev(c);
            else if (iter_status(c) == ENG_OK)
                iter_seek_last(c);
            check_child(m, c);
        }
        m->dir = DIR_REVERSE;
    }
    iter_prev(cur);
    check_child(m, cur);
    find_largest(m);
}

static slice mg_key(const iter *it)
{
    const merger *m = (const merger *)it;
    return iter_key(m->c[m->cur]);
}

static slice mg_value(const iter *it)
{
    const merger *m = (const merger *)it;
    return iter_value(m->c[m->cur]);
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
    free(m->c);
    free(m->max_seq);
    free(m);
}

void merger_set_max_seqs(iter *it, const uint64_t *max_seq)
{
    merger *m = (merger *)it;
    if (!m->max_seq) m->max_seq = malloc(sizeof(uint64_t) * (size_t)(m->n ? m->n : 1));
    if (!m->max_seq) abort();
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
        if (m->max_seq[i] >= seq || !iter_valid(c)) continue; /* G2 */
        slice uk = ikey_user_key(iter_key(c));
        if (m->dir == DIR_FORWARD && slice_compare(uk, end) < 0) {
            t.len = 0;
            ikey_append(&t, end, ENG_MAX_SEQUENCE, ENG_TYPE_SEEK);
            iter_seek(c, slice_make(t.data, t.len));
        } else if (m->dir == DIR_REVERSE && slice_compare(uk, start) >= 0) {
            seek_before(c, start, &t);
        } else {
            continue;
        }
        check_child(m, c);
        moved |= i == cur;
    }
    buf_free(&t);
    if (m->dir == DIR_FORWARD)
        find_smallest(m);
    else
        find_largest(m);
    return moved;
}

static const struct iter_ops merger_ops = {
    mg_valid, mg_seek_first, mg_seek_last, mg_seek,   mg_next,
    mg_prev,  mg_key,        mg_value,     mg_status, mg_destroy,
};

iter *merger_new(iter **children, int n)
{
    merger *m = calloc(1, sizeof(*m));
    if (!m) abort();
    m->c = malloc(sizeof(iter *) * (size_t)(n ? n : 1));
    if (!m->c) abort();
    for (int i = 0; i < n; i++)
        m->c[i] = children[i];
    m->base.ops = &merger_ops;
    m->n = n;
    m->cur = -1;
    m->dir = DIR_FORWARD;
    m->st = ENG_OK;
    return &m->base;
}
