/*
 * ks_zset_ops.c -- the multi-key sorted-set commands' data work: ZUNION,
 * ZINTER, ZDIFF, their STORE forms and ZINTERCARD, as Redis 7.0 computes
 * them (t_zset.c's zunionInterDiffGenericCommand):
 * - inputs are zsets, or sets whose members score 1; absent keys are
 *   empty; weights multiply the scores (a NaN product counts as 0 for the
 *   first input of a member), AGGREGATE SUM adds (a NaN sum is 0), MIN and
 *   MAX keep the smaller or larger;
 * - ZINTER walks the smallest input and probes the others (one get per
 *   probe of a big zset), ZUNION accumulates every input into a hash table
 *   in the order of increasing size (Redis's, which fixes the order of the
 *   floating-point sums), ZDIFF walks the first input and probes the rest.
 * Reads only; the STORE forms write their destination through
 * ks_zstore_items. Formats: ENCODING.md, "Sorted sets (type 5)".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "keyspace/ks_set.h"
#include "keyspace/ks_zset.h"

/* ---- Inputs ---------------------------------------------------------------------- */

typedef struct zsrc {
    const char *key;
    size_t klen;
    int type; /* KS_NONE (absent), KS_ZSET, KS_SET */
    ks_zview v;
    ks_sview sv;
    double weight;
    uint64_t card;
} zsrc;

static ks_status src_open(ks_ctx *c, const ks_field *k, double weight, zsrc *s)
{
    memset(s, 0, sizeof(*s));
    s->key = k->f;
    s->klen = k->fl;
    s->weight = weight;
    ks_status st = ks_zview_open(c, k->f, k->fl, &s->v);
    if (st == KS_NOTFOUND) return KS_OK;
    if (st == KS_ERR_WRONGTYPE) { /* a set: members of score 1 */
        st = ks_sview_open(c, k->f, k->fl, 0, &s->sv);
        if (st == KS_NOTFOUND) return KS_OK;
        if (st != KS_OK) return st;
        s->type = KS_SET;
        s->card = ks_sview_count(&s->sv);
        return KS_OK;
    }
    if (st != KS_OK) return st;
    s->type = KS_ZSET;
    s->card = s->v.n;
    return KS_OK;
}

static void src_close(zsrc *s)
{
    if (s->type == KS_ZSET) ks_zview_close(&s->v);
    if (s->type == KS_SET) ks_sview_close(&s->sv);
}

/* Every member of s, copied into out (zset order; a set's in its own). */
static ks_status src_all(ks_ctx *c, const zsrc *s, ks_zmvec *out)
{
    if (s->type == KS_ZSET) return ks_zview_all(c, &s->v, out);
    if (s->type == KS_NONE) return KS_OK;
    ks_fvec all;
    ks_fvec_init(&all);
    ks_status st = ks_sview_all(c, &s->sv, &all);
    for (size_t i = 0; st == KS_OK && i < all.n; i++)
        if (ks_zmvec_push(out, all.v[i].f, all.v[i].fl, 1.0, 1) != 0) st = ks_oom(c);
    ks_fvec_free(&all);
    return st;
}

/* The score of m in s: 1 found, 0 not, -1 error. */
static int src_find(ks_ctx *c, zsrc *s, const char *m, size_t ml, double *score)
{
    if (s->type == KS_ZSET) return ks_zview_score(c, &s->v, m, ml, score);
    if (s->type == KS_NONE) return 0;
    *score = 1.0;
    return ks_sview_has(c, &s->sv, m, ml);
}

static void aggregate(double *t, double v, int agg)
{
    if (agg == KS_ZAGG_SUM) {
        *t += v;
        if (isnan(*t)) *t = 0.0; /* inf + -inf */
    } else if (agg == KS_ZAGG_MIN) {
        *t = v < *t ? v : *t;
    } else {
        *t = v > *t ? v : *t;
    }
}

/* Redis sorts the inputs by size with qsort, which glibc makes a stable
 * merge sort: equal sizes keep their order. The views move as pointers
 * (a view holds pointers into itself). */
static void sort_by_card(zsrc **s, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        zsrc *t = s[i];
        size_t j = i;
        for (; j > 0 && s[j - 1]->card > t->card; j--)
            s[j] = s[j - 1];
        s[j] = t;
    }
}

/* ---- A hash table of members (ZUNION's accumulator) ------------------------------ */

typedef struct zacc {
    size_t *slot; /* index + 1 into out, 0 free */
    size_t cap;
    ks_zmvec out;
} zacc;

static uint64_t mhash(const char *p, size_t n)
{
    return XXH3_64bits(p, n);
}

static size_t *acc_find(zacc *a, const char *m, size_t ml)
{
    for (size_t i = mhash(m, ml) & (a->cap - 1);; i = (i + 1) & (a->cap - 1)) {
        size_t s = a->slot[i];
        if (!s) return &a->slot[i];
        const ks_zmember *z = &a->out.v[s - 1];
        if (z->ml == ml && (ml == 0 || memcmp(z->m, m, ml) == 0)) return &a->slot[i];
    }
}

static int acc_grow(zacc *a)
{
    size_t cap = a->cap ? a->cap * 2 : 64;
    size_t *ns = calloc(cap, sizeof(*ns));
    if (!ns) return -1;
    size_t *old = a->slot, oc = a->cap;
    a->slot = ns;
    a->cap = cap;
    for (size_t i = 0; i < oc; i++)
        if (old[i]) {
            const ks_zmember *z = &a->out.v[old[i] - 1];
            *acc_find(a, z->m, z->ml) = old[i];
        }
    free(old);
    return 0;
}

/* Adds (m, score) or aggregates into the member there. 0 or -1 (memory). */
static int acc_add(zacc *a, const char *m, size_t ml, double score, int agg)
{
    if ((a->out.n + 1) * 2 > a->cap && acc_grow(a) != 0) return -1;
    size_t *s = acc_find(a, m, ml);
    if (*s) {
        aggregate(&a->out.v[*s - 1].score, score, agg);
        return 0;
    }
    if (ks_zmvec_push(&a->out, m, ml, score, 1) != 0) return -1;
    *s = a->out.n;
    return 0;
}

/* ---- The operations ---------------------------------------------------------------- */

static ks_status op_union(ks_ctx *c, zsrc **s, size_t n, int agg, ks_zmvec *res)
{
    zacc a = {0};
    ks_zmvec_init(&a.out);
    ks_status st = KS_OK;
    for (size_t i = 0; st == KS_OK && i < n; i++) {
        ks_zmvec all;
        ks_zmvec_init(&all);
        st = src_all(c, s[i], &all);
        for (size_t j = 0; st == KS_OK && j < all.n; j++) {
            double score = s[i]->weight * all.v[j].score;
            if (isnan(score)) score = 0;
            if (acc_add(&a, all.v[j].m, all.v[j].ml, score, agg) != 0) st = ks_oom(c);
        }
        ks_zmvec_free(&all);
    }
    free(a.slot);
    if (st == KS_OK)
        ks_zmvec_move(res, &a.out);
    else
        ks_zmvec_free(&a.out);
    return st;
}

/* ZINTER (res set) or ZINTERCARD (res NULL: *card counts, up to limit). */
static ks_status op_inter(ks_ctx *c, zsrc **s, size_t n, int agg, uint64_t limit, ks_zmvec *res,
                          uint64_t *card)
{
    ks_zmvec all;
    ks_zmvec_init(&all);
    *card = 0;
    if (s[0]->card == 0) return KS_OK;
    ks_status st = src_all(c, s[0], &all);
    for (size_t i = 0; st == KS_OK && i < all.n; i++) {
        const ks_zmember *z = &all.v[i];
        double score = s[0]->weight * z->score, v;
        if (isnan(score)) score = 0;
        size_t j = 1;
        for (; j < n; j++) {
            int r = src_find(c, s[j], z->m, z->ml, &v);
            if (r < 0) st = KS_ERR_ENGINE;
            if (r <= 0) break;
            aggregate(&score, v * s[j]->weight, agg);
        }
        if (st != KS_OK || j < n) continue;
        (*card)++;
        if (!res) {
            if (limit && *card >= limit) break;
        } else if (ks_zmvec_push(res, z->m, z->ml, score, 1) != 0) {
            st = ks_oom(c);
        }
    }
    ks_zmvec_free(&all);
    return st;
}

static ks_status op_diff(ks_ctx *c, zsrc **s, size_t n, ks_zmvec *res)
{
    ks_zmvec all;
    ks_zmvec_init(&all);
    ks_status st = src_all(c, s[0], &all);
    for (size_t i = 0; st == KS_OK && i < all.n; i++) {
        const ks_zmember *z = &all.v[i];
        int in_other = 0;
        double v;
        for (size_t j = 1; st == KS_OK && j < n && !in_other; j++) {
            int r = src_find(c, s[j], z->m, z->ml, &v);
            if (r < 0) st = KS_ERR_ENGINE;
            in_other = r > 0;
        }
        if (st == KS_OK && !in_other && ks_zmvec_push(res, z->m, z->ml, z->score, 1) != 0)
            st = ks_oom(c);
    }
    ks_zmvec_free(&all);
    return st;
}

ks_status ks_zsetop(ks_ctx *c, int op, const ks_field *keys, const double *weights, size_t n,
                    int agg, const char *dst, size_t dl, uint64_t limit, ks_zmembers_fn fn,
                    void *arg, uint64_t *card)
{
    zsrc *src = calloc(n ? n : 1, sizeof(*src));
    zsrc **s = calloc(n ? n : 1, sizeof(*s));
    ks_zmvec res;
    ks_zmvec_init(&res);
    *card = 0;
    if (!src || !s) {
        free(src);
        free(s);
        return ks_oom(c);
    }
    for (size_t i = 0; i < n; i++)
        s[i] = &src[i];
    ks_status st = KS_OK;
    size_t opened = 0;
    for (; st == KS_OK && opened < n; opened++) {
        st = src_open(c, &keys[opened], weights ? weights[opened] : 1.0, &src[opened]);
        if (st != KS_OK) break;
    }
    if (st == KS_OK && op != KS_ZDIFF) sort_by_card(s, n);
    if (st == KS_OK) {
        if (op == KS_ZUNION)
            st = op_union(c, s, n, agg, &res);
        else if (op == KS_ZINTER)
            st = op_inter(c, s, n, agg, limit, (dst || fn) ? &res : NULL, card);
        else
            st = op_diff(c, s, n, &res);
    }
    for (size_t i = 0; i < opened && i < n; i++)
        src_close(&src[i]);
    free(src);
    free(s);
    if (st == KS_OK && (dst || fn)) *card = res.n;
    if (st == KS_OK && dst) {
        ks_write w;
        st = ks_write_begin(c, c->db, dst, dl, KS_NONE, &w);
        if (st == KS_OK) {
            st = ks_zstore_items(&w, res.v, res.n);
            ks_write_end(&w);
        }
    } else if (st == KS_OK && fn) {
        ks_zmvec_sort(res.v, res.n);
        fn(arg, res.v, res.n);
    }
    ks_zmvec_free(&res);
    return st;
}
