/*
 * ks_zset_entry.c -- the sorted set's building blocks every zset file
 * stands on: (score, member) order and member vectors (ks_zmvec), the
 * suffixes of a big zset's entries (member, order, rank block; format in
 * ks_zset.c and ENCODING.md) and iteration over its order entries. Apart
 * from ks_zset.c because they know nothing of rows, views or writes.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_zset.h"

/* ---- Order and member vectors ----------------------------------------------- */

int ks_zcmp(const ks_zmember *a, const ks_zmember *b)
{
    if (a->score < b->score) return -1;
    if (a->score > b->score) return 1;
    size_t n = a->ml < b->ml ? a->ml : b->ml;
    int r = n ? memcmp(a->m, b->m, n) : 0;
    if (r) return r;
    return a->ml < b->ml ? -1 : a->ml > b->ml;
}

static int zcmp_qsort(const void *a, const void *b)
{
    return ks_zcmp(a, b);
}

void ks_zmvec_sort(ks_zmember *items, size_t n)
{
    if (n > 1) qsort(items, n, sizeof(*items), zcmp_qsort);
}

void ks_zmvec_init(ks_zmvec *v)
{
    memset(v, 0, sizeof(*v));
}

#define ZMVEC_CHUNK (64 * 1024)

static char *zmvec_alloc(ks_zmvec *v, size_t n)
{
    if (v->nchunks == v->capchunks) {
        size_t cap = v->capchunks ? v->capchunks * 2 : 8;
        char **nc = realloc(v->chunks, cap * sizeof(*nc));
        if (!nc) return NULL;
        v->chunks = nc;
        v->capchunks = cap;
    }
    if (n > ZMVEC_CHUNK / 4) { /* a big member gets a block of its own, before the current */
        char *p = malloc(n);
        if (!p) return NULL;
        v->chunks[v->nchunks++] = p;
        if (v->nchunks >= 2 && v->left) {
            char *t = v->chunks[v->nchunks - 2];
            v->chunks[v->nchunks - 2] = p;
            v->chunks[v->nchunks - 1] = t;
        }
        return p;
    }
    if (n > v->left) { /* chunks grow from 512 bytes: a pop of one member mallocs little */
        size_t size = v->size ? v->size * 2 : 512;
        if (size > ZMVEC_CHUNK) size = ZMVEC_CHUNK;
        while (size < n)
            size *= 2;
        char *p = malloc(size);
        if (!p) return NULL;
        v->chunks[v->nchunks++] = p;
        v->size = v->left = size;
    }
    char *p = v->chunks[v->nchunks - 1] + (v->size - v->left);
    v->left -= n;
    return p;
}

int ks_zmvec_push(ks_zmvec *v, const char *m, size_t ml, double score, int copy)
{
    if (v->cap == 0 && !v->v) {
        v->v = &v->one;
        v->cap = 1;
    } else if (v->n == v->cap) {
        size_t cap = v->cap > 1 ? v->cap * 2 : 16;
        ks_zmember *nv = realloc(v->v == &v->one ? NULL : v->v, cap * sizeof(*nv));
        if (!nv) return -1;
        if (v->v == &v->one) nv[0] = v->one;
        v->v = nv;
        v->cap = cap;
    }
    if (copy && ml) {
        char *p = zmvec_alloc(v, ml);
        if (!p) return -1;
        memcpy(p, m, ml);
        m = p;
    }
    v->v[v->n++] = (ks_zmember){ml ? m : "", ml, score};
    return 0;
}

void ks_zmvec_move(ks_zmvec *dst, ks_zmvec *src)
{
    ks_zmvec_free(dst);
    *dst = *src;
    if (src->v == &src->one) dst->v = &dst->one;
    ks_zmvec_init(src);
}

void ks_zmvec_free(ks_zmvec *v)
{
    for (size_t i = 0; i < v->nchunks; i++)
        free(v->chunks[i]);
    free(v->chunks);
    if (v->v != &v->one) free(v->v);
    ks_zmvec_init(v);
}

/* ---- Suffixes ---------------------------------------------------------------------- */

void ks_zsfx_member(ks_ekey *k, const char *m, size_t ml)
{
    char t = KS_ZTAG_MEMBER;
    ks_zbuf_init(k);
    ks_ekey_append(k, &t, 1);
    ks_ekey_append(k, m, ml);
}

void ks_zorder_key(ks_ekey *k, double score, const char *m, size_t ml)
{
    char s[8];
    ks_put_be64(s, ks_zskey(score));
    ks_zbuf_init(k);
    ks_ekey_append(k, s, 8);
    ks_ekey_append(k, m, ml);
}

void ks_zsfx_order(ks_ekey *k, double score, const char *m, size_t ml)
{
    char s[9];
    s[0] = KS_ZTAG_ORDER;
    ks_put_be64(s + 1, ks_zskey(score));
    ks_zbuf_init(k);
    ks_ekey_append(k, s, 9);
    ks_ekey_append(k, m, ml);
}

void ks_zsfx_rank(ks_ekey *k, int level, const char *start, size_t sl)
{
    char s[2] = {KS_ZTAG_RANK, (char)level};
    ks_zbuf_init(k);
    ks_ekey_append(k, s, 2);
    ks_ekey_append(k, start, sl);
}

/* ---- Order entries ------------------------------------------------------------------ */

int ks_zorder_valid(const ks_miter *mi)
{
    if (!ks_miter_valid(mi)) return 0;
    size_t sn;
    const char *s = ks_miter_suffix(mi, &sn);
    return sn >= 1 && s[0] == KS_ZTAG_ORDER;
}

int ks_zorder_entry(const ks_miter *mi, ks_zmember *out)
{
    size_t sn, vn;
    const char *s = ks_miter_suffix(mi, &sn);
    const char *v = ks_miter_value(mi, &vn);
    if (sn < 9 || s[0] != KS_ZTAG_ORDER || vn > 1) return -1;
    out->score = ks_zskey_score(ks_get_be64(s + 1));
    if (vn == 1) {
        if (v[0] != '-' || out->score != 0) return -1;
        out->score = -0.0;
    }
    out->m = s + 9;
    out->ml = sn - 9;
    return 0;
}

void ks_zorder_seek(ks_miter *mi, const char *key, size_t kl)
{
    ks_ekey k;
    char t = KS_ZTAG_ORDER;
    ks_zbuf_init(&k);
    ks_ekey_append(&k, &t, 1);
    ks_ekey_append(&k, key, kl);
    ks_miter_seek(mi, k.p, k.n);
    ks_ekey_free(&k);
}

void ks_zorder_seek_prev(ks_miter *mi, const char *key, size_t kl)
{
    ks_ekey k;
    char t = KS_ZTAG_ORDER;
    ks_zbuf_init(&k);
    ks_ekey_append(&k, &t, 1);
    ks_ekey_append(&k, key, kl);
    ks_miter_seek_prev(mi, k.p, k.n);
    ks_ekey_free(&k);
}

void ks_zorder_seek_from(ks_miter *mi, const ks_zview *v, const char *key, size_t kl)
{
    if (v->floorl && ks_zkcmp(key, kl, v->floor, v->floorl) < 0)
        ks_zorder_seek(mi, v->floor, v->floorl);
    else
        ks_zorder_seek(mi, key, kl);
}

void ks_zorder_first(ks_miter *mi)
{
    char t = KS_ZTAG_ORDER;
    ks_miter_seek(mi, &t, 1);
}

void ks_zorder_last(ks_miter *mi)
{
    char t = KS_ZTAG_RANK; /* the last key before the rank blocks */
    ks_miter_seek_prev(mi, &t, 1);
}
