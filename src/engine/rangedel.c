/*
 * rangedel.c -- range tombstone sets; see rangedel.h.
 */
#include "rangedel.h"

#include <stdio.h>
#include <stdlib.h>

static void *rdel_xalloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "strata: out of memory\n");
        abort();
    }
    return q;
}

rdel_set *rdel_set_new(void)
{
    rdel_set *s = rdel_xalloc(NULL, sizeof(*s));
    s->refs = 1;
    s->n = s->cap = 0;
    s->v = NULL;
    return s;
}

void rdel_set_ref(rdel_set *s)
{
    __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void rdel_set_unref(rdel_set *s)
{
    if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].start);
    free(s->v);
    free(s);
}

void rdel_set_add(rdel_set *s, slice start, slice end, uint64_t seq)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = rdel_xalloc(s->v, s->cap * sizeof(rdel));
    }
    rdel *r = &s->v[s->n++];
    r->start = rdel_xalloc(NULL, start.size + end.size);
    if (start.size) memcpy(r->start, start.data, start.size);
    if (end.size) memcpy(r->start + start.size, end.data, end.size);
    r->sl = start.size;
    r->el = end.size;
    r->seq = seq;
}

void rdel_set_add_all(rdel_set *dst, const rdel_set *src)
{
    if (!src) return;
    for (size_t i = 0; i < src->n; i++)
        rdel_set_add(dst, rdel_start(&src->v[i]), rdel_end(&src->v[i]), src->v[i].seq);
}

int rdel_set_covers(const rdel_set *s, slice key, uint64_t pseq, uint64_t snap_seq)
{
    if (!s) return 0;
    for (size_t i = 0; i < s->n; i++) {
        const rdel *r = &s->v[i];
        if (r->seq <= pseq) continue;
        if (r->seq > snap_seq && r->seq < ENG_BATCH_SEQ_BASE) continue;
        if (slice_compare(rdel_start(r), key) <= 0 && slice_compare(key, rdel_end(r)) < 0) return 1;
    }
    return 0;
}
