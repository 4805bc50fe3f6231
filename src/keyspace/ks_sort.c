/*
 * ks_sort.c -- SORT and SORT_RO (keyspace.h): Redis 7.0's sort.c over
 * lists, sets and sorted sets, with BY and GET patterns looked up as
 * point reads (a string key, or `key->field` of a hash).
 *
 * The elements are read whole (a copy), weighted (a double, or for ALPHA
 * the bytes of the element or of its BY value), sorted, cut to LIMIT and
 * handed over or stored. Redis's quirks kept: BY without '*' means "do not
 * sort" (lists and sorted sets keep their order, reversed by DESC; sets
 * too, unless STORE or a script asks: then ALPHA), a missing BY value
 * weighs 0 (ALPHA: before every present one), equal weights fall back to
 * the elements' bytes, a weight that is not a double fails the command
 * after the lookups. One difference: ALPHA compares bytes (Redis's
 * strcoll, the same under the C locale and for UTF-8 under C.UTF-8).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"
#include "keyspace/ks_type.h"

#if __has_include("keyspace/ks_zset.h")
#define KS_SORT_ZSETS 1
#else
#define KS_SORT_ZSETS 0
#endif

static const char NOT_DOUBLE[] = "ERR One or more scores can't be converted into double";

typedef struct sort_elem {
    const char *p; /* the element (in the elems vector) */
    size_t n;
    double score;
    const char *cmp; /* ALPHA with BY: the BY value, NULL when missing */
    size_t cmpn;
} sort_elem;

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : an < bn ? -1 : an > bn;
}

typedef struct sort_order {
    int alpha, by, desc;
} sort_order;

static int elem_cmp(const void *x, const void *y, void *arg)
{
    const sort_elem *a = x, *b = y;
    const sort_order *o = arg;
    int c;
    if (!o->alpha) {
        c = a->score > b->score ? 1 : a->score < b->score ? -1 : bytes_cmp(a->p, a->n, b->p, b->n);
    } else if (o->by) {
        c = !a->cmp || !b->cmp ? (a->cmp == b->cmp ? 0
                                  : a->cmp         ? 1
                                                   : -1)
                               : bytes_cmp(a->cmp, a->cmpn, b->cmp, b->cmpn);
    } else {
        c = bytes_cmp(a->p, a->n, b->p, b->n);
    }
    return o->desc ? -c : c;
}

/* ---- Reading the elements --------------------------------------------------- */

typedef struct loader {
    ks_fvec *fv;
    int oom;
} loader;

static void copy_items(void *arg, const ks_field *f, size_t n)
{
    loader *l = arg;
    for (size_t i = 0; i < n; i++)
        if (ks_fvec_push_copy(l->fv, f[i].f, f[i].fl, NULL, 0) < 0) l->oom = 1;
}

static void ignore_count(void *arg, uint64_t n)
{
    (void)arg, (void)n;
}

#if KS_SORT_ZSETS
static void copy_zmembers(void *arg, const ks_zmember *z, size_t n)
{
    loader *l = arg;
    for (size_t i = 0; i < n; i++)
        if (ks_fvec_push_copy(l->fv, z[i].m, z[i].ml, NULL, 0) < 0) l->oom = 1;
}
#endif

/* The elements of key in their native order (a list's, a zset's by score,
 * a set's); *type is KS_NONE for an absent key. */
static ks_status load_elems(ks_ctx *c, const char *key, size_t klen, ks_type *type, ks_fvec *fv)
{
    loader l = {fv, 0};
    ks_status st = ks_type_of(c, key, klen, type);
    if (st == KS_NOTFOUND)
        *type = KS_NONE;
    else if (st != KS_OK)
        return st;
    if (*type == KS_LIST) {
        st = ks_lrange(c, key, klen, 0, -1, ignore_count, copy_items, &l);
    } else if (*type == KS_SET) {
        st = ks_smembers(c, key, klen, copy_items, &l);
#if KS_SORT_ZSETS
    } else if (*type == KS_ZSET) {
        ks_zspec all = {.by = KS_ZBY_RANK, .start = 0, .end = -1, .limit = -1};
        st = ks_zrange(c, key, klen, &all, copy_zmembers, &l);
#endif
    } else if (*type != KS_NONE) {
        return KS_ERR_WRONGTYPE;
    }
    if (st == KS_NOTFOUND) st = KS_OK;
    return st == KS_OK && l.oom ? ks_oom(c) : st;
}

/* ---- Patterns ------------------------------------------------------------------ */

/* Redis's lookupKeyByPattern: "#" is the element itself; otherwise the
 * first '*' takes the element, and a "->field" after it (non-empty) reads
 * that field of a hash, else the key must hold a string. *found = 0 (a
 * nil) when the pattern has no '*', the key is absent or of another type.
 * A value found is copied into store (its last element). */
static ks_status lookup(ks_ctx *c, const char *pat, size_t pn, const char *e, size_t en,
                        ks_fvec *store, const char **out, size_t *outn, int *found)
{
    *found = 0;
    if (pn == 1 && pat[0] == '#') {
        *out = e, *outn = en, *found = 1;
        return KS_OK;
    }
    const char *star = memchr(pat, '*', pn);
    if (!star) return KS_OK;
    const char *field = NULL, *end = pat + pn;
    for (const char *q = star + 1; q + 1 < end; q++)
        if (q[0] == '-' && q[1] == '>') {
            if (q + 2 < end) field = q + 2;
            break;
        }
    size_t pre = (size_t)(star - pat), post = (size_t)((field ? field - 2 : end) - star - 1);
    char sbuf[256], *k = pre + en + post <= sizeof(sbuf) ? sbuf : malloc(pre + en + post);
    if (!k) return ks_oom(c);
    memcpy(k, pat, pre);
    memcpy(k + pre, e, en);
    memcpy(k + pre + en, star + 1, post);
    size_t kn = pre + en + post;
    ks_status st;
    if (field) {
        ks_field f = {field, (size_t)(end - field), NULL, 0};
        void *owner = NULL;
        st = ks_hmget(c, k, kn, &f, 1, &owner);
        if (st == KS_OK && f.v) {
            *found = 1;
            if (ks_fvec_push_copy(store, f.v, f.vl, NULL, 0) < 0) st = ks_oom(c);
        }
        ks_hmget_free(owner);
    } else {
        ks_val v;
        st = ks_get(c, k, kn, &v);
        if (st == KS_OK) {
            *found = 1;
            if (ks_fvec_push_copy(store, v.p, v.n, NULL, 0) < 0) st = ks_oom(c);
            ks_val_free(&v);
        }
    }
    if (k != sbuf) free(k);
    if (*found && st == KS_OK) *out = store->v[store->n - 1].f, *outn = store->v[store->n - 1].fl;
    return st == KS_NOTFOUND || st == KS_ERR_WRONGTYPE ? KS_OK : st;
}

/* Redis's weight of a value: strtod over its C string, refusing trailing
 * bytes, overflow and NaN. */
static int weigh(const char *p, size_t n, double *out)
{
    char buf[128], *s = n < sizeof(buf) ? buf : malloc(n + 1), *end;
    if (!s) return -1;
    memcpy(s, p, n);
    s[n] = 0;
    errno = 0;
    *out = strtod(s, &end);
    int bad = *end != 0 || errno == ERANGE || isnan(*out);
    if (s != buf) free(s);
    return bad ? -1 : 0;
}

/* Weights every element (BY lookups, or the element itself). */
static ks_status weigh_all(ks_ctx *c, const ks_sort_opts *o, sort_elem *v, size_t n, ks_fvec *store)
{
    int bad = 0;
    for (size_t j = 0; j < n; j++) {
        const char *w = v[j].p;
        size_t wn = v[j].n;
        if (o->by) {
            int found;
            ks_status st = lookup(c, o->by, o->bylen, v[j].p, v[j].n, store, &w, &wn, &found);
            if (st != KS_OK) return st;
            if (!found) continue;
        }
        if (o->alpha) {
            if (o->by) v[j].cmp = w, v[j].cmpn = wn;
        } else if (weigh(w, wn, &v[j].score) < 0) {
            bad = 1;
        }
    }
    return bad ? ks_err_msg(c, NOT_DOUBLE) : KS_OK;
}

/* ---- SORT ------------------------------------------------------------------------- */

/* The rows start..end of v, one value per GET (or the element), into out:
 * .f/.fl the value, .vl 1 when present, 0 for a nil. */
static ks_status collect(ks_ctx *c, const ks_sort_opts *o, const sort_elem *v, long long start,
                         long long end, ks_fvec *store, ks_fvec *out)
{
    for (long long j = start; j <= end; j++) {
        if (!o->ngets && ks_fvec_push(out, v[j].p, v[j].n, NULL, 1) < 0) return ks_oom(c);
        for (size_t g = 0; g < o->ngets; g++) {
            const char *val = NULL;
            size_t vn = 0;
            int found;
            ks_status st =
                lookup(c, o->gets[g].f, o->gets[g].fl, v[j].p, v[j].n, store, &val, &vn, &found);
            if (st != KS_OK) return st;
            if (ks_fvec_push(out, found ? val : "", vn, NULL, (size_t)found) < 0) return ks_oom(c);
        }
    }
    return KS_OK;
}

/* Pointers into store's chunks stay put as it grows, but a push may move
 * store->v: lookups hand back chunk pointers, never store->v itself. */
ks_status ks_sort(ks_ctx *c, const char *key, size_t klen, const ks_sort_opts *o, ks_fields_fn fn,
                  void *arg, uint64_t *stored)
{
    ks_fvec elems, store, out;
    ks_fvec_init(&elems);
    ks_fvec_init(&store);
    ks_fvec_init(&out);
    sort_elem *v = NULL;
    ks_type type;
    ks_status st = load_elems(c, key, klen, &type, &elems);
    if (st != KS_OK) goto cleanup;
    size_t n = elems.n;
    int dontsort = o->by && !memchr(o->by, '*', o->bylen);
    sort_order ord = {o->alpha, o->by != NULL, o->desc};
    ks_sort_opts eff = *o;
    if (dontsort && type == KS_SET && (o->store || o->script)) { /* a deterministic order */
        dontsort = 0;
        eff.alpha = ord.alpha = 1;
        eff.by = NULL;
        ord.by = 0;
    }
    v = calloc(n ? n : 1, sizeof(*v));
    if (!v) {
        st = ks_oom(c);
        goto cleanup;
    }
    for (size_t j = 0; j < n; j++)
        v[j] = (sort_elem){elems.v[j].f, elems.v[j].fl, 0, NULL, 0};
    if (dontsort && o->desc && type != KS_SET) /* lists and zsets: DESC reverses */
        for (size_t j = 0; j < n / 2; j++) {
            sort_elem t = v[j];
            v[j] = v[n - 1 - j], v[n - 1 - j] = t;
        }
    long long len = (long long)n;
    long long start = o->limit_start < 0 ? 0 : o->limit_start, end;
    if (start >= len) /* Redis's LIMIT clamping, without its overflow for huge counts */
        start = len - 1, end = len - 2;
    else
        end = o->limit_count < 0 || o->limit_count > len ? len - 1 : start + o->limit_count - 1;
    if (end >= len) end = len - 1;
    if (!dontsort) {
        if ((st = weigh_all(c, &eff, v, n, &store)) != KS_OK) goto cleanup;
        qsort_r(v, n, sizeof(*v), elem_cmp, &ord);
    }
    if ((st = collect(c, o, v, start, end, &store, &out)) != KS_OK) goto cleanup;
    if (o->store) {
        int deleted;
        for (size_t i = 0; i < out.n; i++)
            if (!out.v[i].vl) out.v[i].fl = 0; /* a nil is stored as "" */
        st = ks_del(c, o->store, o->storelen, &deleted);
        uint64_t pushed;
        if (st == KS_OK && out.n)
            st = ks_lpush(c, o->store, o->storelen, KS_LIST_TAIL, 0, out.v, out.n, &pushed);
        *stored = out.n;
    } else {
        fn(arg, out.v, out.n);
    }
cleanup:
    free(v);
    ks_fvec_free(&elems);
    ks_fvec_free(&store);
    ks_fvec_free(&out);
    return st;
}
