/*
 * ks_list_util.h -- what the list tests (ks_list_test, ks_list_big_test)
 * share: an in-memory model list, LRANGE into a vector, the comparison of
 * a stored list with the model, one-item pushes, the packed-size limit,
 * and the checker of a big list's stored layout (KS-L1). Included after
 * test.h and ks_fixture.h; the functions are static inline so a test may
 * use any.
 */
#ifndef STRATA_TESTS_KS_LIST_UTIL_H
#define STRATA_TESTS_KS_LIST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_list.h"

/* ---- The model ---------------------------------------------------------------- */

typedef struct mlist {
    char **v;
    size_t n, cap;
} mlist;

static inline void m_insert(mlist *l, size_t at, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = realloc(l->v, l->cap * sizeof(char *));
    }
    memmove(l->v + at + 1, l->v + at, (l->n - at) * sizeof(char *));
    l->v[at] = strdup(s);
    l->n++;
}

static inline void m_remove(mlist *l, size_t at)
{
    free(l->v[at]);
    memmove(l->v + at, l->v + at + 1, (l->n - at - 1) * sizeof(char *));
    l->n--;
}

static inline void m_clear(mlist *l)
{
    while (l->n)
        m_remove(l, l->n - 1);
}

/* ---- Helpers ------------------------------------------------------------------ */

typedef struct got {
    char **v;
    size_t n;
} got;

static inline void got_items(void *arg, const ks_field *f, size_t n)
{
    got *g = arg;
    g->v = calloc(n + 1, sizeof(char *));
    g->n = n;
    for (size_t i = 0; i < n; i++)
        g->v[i] = strndup(f[i].f, f[i].fl);
}

static inline void got_free(got *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i]);
    free(g->v);
    memset(g, 0, sizeof(*g));
}

/* LRANGE's two callbacks: the count, then pieces of items. */
static inline void got_count(void *arg, uint64_t n)
{
    got *g = arg;
    g->v = calloc(n + 1, sizeof(char *));
    g->n = 0;
}

static inline void got_piece(void *arg, const ks_field *f, size_t n)
{
    got *g = arg;
    for (size_t i = 0; i < n; i++)
        g->v[g->n++] = strndup(f[i].f, f[i].fl);
}

static inline ks_status lrange(const char *key, long long a, long long b, got *g)
{
    return ks_lrange(&ctx, key, strlen(key), a, b, got_count, got_piece, g);
}

static inline void check_same(const char *key, const mlist *m)
{
    got g = {0};
    ks_status st = lrange(key, 0, -1, &g);
    if (m->n == 0) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    CHECK_EQ_INT(g.n, m->n);
    for (size_t i = 0; i < m->n; i++)
        CHECK_MSG(strcmp(g.v[i], m->v[i]) == 0, "%s[%zu] = %s, model %s", key, i, g.v[i], m->v[i]);
    got_free(&g);
    uint64_t n;
    CHECK_EQ_INT(ks_llen(&ctx, key, strlen(key), &n), KS_OK);
    CHECK_EQ_INT(n, m->n);
}

static inline void push(const char *key, int where, const char *v)
{
    ks_field f = {v, strlen(v), NULL, 0};
    uint64_t len;
    CHECK_EQ_INT(ks_lpush(&ctx, key, strlen(key), where, 0, &f, 1, &len), KS_OK);
}

static inline ks_meta meta_of(const char *key)
{
    ks_meta m;
    CHECK(ks_meta_read(&ctx, NULL, ctx.db, key, strlen(key), &m) == KS_OK);
    return m;
}

static inline void set_fill(long long fill)
{
    ks_limits l = *ks_get_limits(ks);
    l.list_max_listpack_size = fill;
    ks_set_limits(ks, &l);
}

/* KS-L1: a big list's members are exactly one chunk per 32 positions of
 * [head, head+count) with one entry per position (a chunk with a header,
 * 3 + 2 * its first slot, may hold dead entries of pops at either end),
 * and a slot key right after its chunk for each live out-of-line entry.
 * Returns the slots seen. *headerless (may be NULL) gets the chunks
 * without a header. */
static inline size_t check_positions_of(const char *key, size_t *headerless)
{
    ks_meta m = meta_of(key);
    CHECK(m.big);
    uint64_t head = ks_get_le64(m.ext), n = m.count, items = 0;
    const int sh = KS_LIST_CHUNK_SHIFT;
    const uint64_t span = 1ull << sh;
    uint64_t c = head >> sh, last = (head + n - 1) >> sh;
    size_t slots = 0;
    ks_miter mi;
    ks_miter_open(&mi, &ctx, NULL, ctx.db, m.version);
    ks_miter_first(&mi);
    for (; c <= last; c++) {
        CHECK(ks_miter_valid(&mi));
        size_t sn, vn;
        const char *s = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        CHECK_EQ_INT(sn, 8);
        CHECK(ks_get_be64(s) == c);
        uint64_t first = c << sh < head ? head : c << sh, end = (c << sh) + span - 1;
        if (end > head + n - 1) end = head + n - 1;
        const char *p = v, *pe = v + vn;
        uint64_t out[64], pos = first;
        int nout = 0, hdr = vn > 0 && (unsigned char)v[0] >= 3 && (v[0] & 1);
        if (hdr) {
            pos = (c << sh) + (((unsigned char)*p++ - 3) >> 1);
            CHECK(pos <= first);
        } else if (headerless) {
            (*headerless)++;
        }
        for (; p < pe || pos <= end; pos++) {
            uint64_t e;
            int live = pos >= first && pos <= end;
            CHECK(live || hdr);
            CHECK(pos < (c << sh) + span);
            CHECK((p = ks_get_varint(p, pe, &e)) != NULL);
            items += live;
            if (e == 1) {
                if (live) out[nout++] = pos;
            } else {
                CHECK(e % 2 == 0 && e / 2 <= KS_LIST_INLINE && e / 2 <= (uint64_t)(pe - p));
                p += e / 2;
            }
        }
        ks_miter_next(&mi);
        for (int i = 0; i < nout; i++, slots++) {
            CHECK(ks_miter_valid(&mi));
            s = ks_miter_suffix(&mi, &sn);
            ks_miter_value(&mi, &vn);
            CHECK_EQ_INT(sn, 9);
            CHECK(ks_get_be64(s) == c && (unsigned char)s[8] == (out[i] & (span - 1)));
            CHECK(vn > KS_LIST_INLINE);
            ks_miter_next(&mi);
        }
    }
    CHECK(!ks_miter_valid(&mi)); /* nothing else under the version */
    CHECK(ks_miter_close(&mi, &ctx) == KS_OK);
    CHECK_EQ_INT(items, n);
    ks_meta_free(&m);
    return slots;
}

static inline size_t check_positions(const char *key)
{
    return check_positions_of(key, NULL);
}

/* The layout of whichever of keys is a big list (KS-L1). */
static inline void check_layout(const char *key)
{
    ks_meta m;
    CHECK(ks_meta_read(&ctx, NULL, ctx.db, key, strlen(key), &m) == KS_OK);
    int big = m.type == KS_LIST && m.big;
    ks_meta_free(&m);
    if (big) check_positions(key);
}

#endif
