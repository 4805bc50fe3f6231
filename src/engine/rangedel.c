/*
 * rangedel.c -- append-only range tombstone sets; see rangedel.h.
 */
#include "rangedel.h"

#include <stdio.h>
#include <stdlib.h>

#define RDEL_CHUNK 32

struct rdel_chunk {
    rdel_chunk *next; /* atomic */
    int n;            /* atomic: entries published in v */
    rdel v[RDEL_CHUNK];
};

static void *rdel_xalloc(size_t n)
{
    void *q = calloc(1, n ? n : 1);
    if (!q) {
        fprintf(stderr, "strata: out of memory\n");
        abort();
    }
    return q;
}

rdel_set *rdel_set_new(void)
{
    rdel_set *s = rdel_xalloc(sizeof(*s));
    s->refs = 1;
    return s;
}

void rdel_set_ref(rdel_set *s)
{
    __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void rdel_set_unref(rdel_set *s)
{
    if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    rdel_chunk *c = s->head;
    while (c) {
        rdel_chunk *next = c->next;
        for (int i = 0; i < c->n; i++)
            free(c->v[i].start);
        free(c);
        c = next;
    }
    free(s);
}

void rdel_set_add(rdel_set *s, slice start, slice end, uint64_t seq)
{
    rdel_chunk *t = s->tail;
    if (!t || t->n == RDEL_CHUNK) {
        rdel_chunk *c = rdel_xalloc(sizeof(*c));
        if (t)
            __atomic_store_n(&t->next, c, __ATOMIC_RELEASE);
        else
            __atomic_store_n(&s->head, c, __ATOMIC_RELEASE);
        s->tail = t = c;
    }
    rdel *r = &t->v[t->n];
    r->start = rdel_xalloc(start.size + end.size);
    if (start.size) memcpy(r->start, start.data, start.size);
    if (end.size) memcpy(r->start + start.size, end.data, end.size);
    r->sl = start.size;
    r->el = end.size;
    r->seq = seq;
    r->keep = 0;
    __atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
}

rdel *rdel_set_first(const rdel_set *s, rdel_cursor *c)
{
    c->c = s ? __atomic_load_n(&s->head, __ATOMIC_ACQUIRE) : NULL;
    c->i = -1;
    return rdel_next(c);
}

rdel *rdel_next(rdel_cursor *c)
{
    while (c->c) {
        if (++c->i < __atomic_load_n(&c->c->n, __ATOMIC_ACQUIRE)) return &c->c->v[c->i];
        c->c = __atomic_load_n(&c->c->next, __ATOMIC_ACQUIRE);
        c->i = -1;
    }
    return NULL;
}

int rdel_set_covers(const rdel_set *s, slice key, uint64_t pseq, uint64_t snap_seq)
{
    rdel_cursor cur;
    for (const rdel *r = rdel_set_first(s, &cur); r; r = rdel_next(&cur)) {
        if (r->seq <= pseq) continue;
        if (r->seq > snap_seq && r->seq < ENG_BATCH_SEQ_BASE) continue;
        if (slice_compare(rdel_start(r), key) <= 0 && slice_compare(key, rdel_end(r)) < 0) return 1;
    }
    return 0;
}

const rdel *rdel_view_covering(const rdel_view *v, slice key, uint64_t pseq, uint64_t snap)
{
    const rdel *best = NULL;
    for (int i = 0; i < v->n; i++) {
        rdel_cursor cur;
        for (const rdel *r = rdel_set_first(v->part[i], &cur); r; r = rdel_next(&cur)) {
            if (r->seq <= pseq || (best && r->seq <= best->seq)) continue;
            if (r->seq > snap && r->seq < ENG_BATCH_SEQ_BASE) continue; /* R1: not visible */
            if (slice_compare(rdel_start(r), key) <= 0 && slice_compare(key, rdel_end(r)) < 0)
                best = r;
        }
    }
    return best;
}

void rdel_view_add(rdel_view *v, rdel_set *s)
{
    if (!s) return;
    if (v->n >= RDEL_VIEW_MAX) { /* a programming error: the sources are fixed */
        fprintf(stderr, "strata: too many tombstone sets in one view\n");
        abort();
    }
    rdel_set_ref(s);
    v->part[v->n++] = s;
}

void rdel_view_release(rdel_view *v)
{
    for (int i = 0; i < v->n; i++)
        rdel_set_unref(v->part[i]);
    v->n = 0;
}
