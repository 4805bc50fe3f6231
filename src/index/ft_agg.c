/*
 * ft_agg.c -- FT.AGGREGATE: the query's documents become rows (the hash
 * fields the pipeline names, read once per document), then each step runs
 * over all rows in the order given:
 *   LOAD n @f [AS a] ... | LOAD *      fields into the rows
 *   GROUPBY n @f ... [REDUCE fn nargs arg ... [AS name]] ...
 *        COUNT 0, COUNT_DISTINCT(ISH) 1 @f, SUM, AVG, MIN, MAX, STDDEV 1 @f,
 *        QUANTILE 2 @f q
 *   SORTBY n (@f [ASC|DESC]) ... [MAX k]
 *   APPLY expr AS name      FILTER expr      LIMIT offset num
 * Groups come out ordered by their keys unless sorted. SORTBY without MAX
 * and without a LIMIT after it keeps 10 rows, as RediSearch. The reply's
 * total is the number of rows before the last LIMIT.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft_def.h"
#include "index/ft_expr.h"

size_t ft_fmt_num(double d, char *buf, size_t cap)
{
    int n;
    if (isinf(d))
        n = snprintf(buf, cap, "%sinf", d < 0 ? "-" : "");
    else if (isnan(d))
        n = snprintf(buf, cap, "nan");
    else if (d == floor(d) && fabs(d) < 1e17)
        n = snprintf(buf, cap, "%lld", (long long)d);
    else
        n = snprintf(buf, cap, "%.17g", d);
    if (n < 0) n = 0;
    /* shortest form that reads back the same, as RediSearch's %.17g would not be */
    if (!(d == floor(d) && fabs(d) < 1e17) && !isinf(d) && !isnan(d)) {
        for (int prec = 1; prec <= 17; prec++) {
            char t[64];
            int m = snprintf(t, sizeof(t), "%.*g", prec, d);
            if (strtod(t, NULL) == d) {
                memcpy(buf, t, (size_t)m + 1);
                n = m;
                break;
            }
        }
    }
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

/* ---- Rows ------------------------------------------------------------------------ */

typedef struct arow {
    ft_val *v;
    size_t n;
} arow;

typedef struct agg {
    const ft_def *d;
    char **cols;
    size_t ncols;
    arow *rows;
    size_t nrows;
} agg;

static int col_find(const agg *a, const char *name, size_t n)
{
    for (size_t i = 0; i < a->ncols; i++)
        if (strlen(a->cols[i]) == n && memcmp(a->cols[i], name, n) == 0) return (int)i;
    return -1;
}

static int col_add(agg *a, const char *name, size_t n)
{
    int c = col_find(a, name, n);
    if (c >= 0) return c;
    a->cols = realloc(a->cols, (a->ncols + 1) * sizeof(char *));
    if (!a->cols) abort();
    a->cols[a->ncols] = strndup(name, n);
    return (int)a->ncols++;
}

static ft_val *row_slot(arow *r, int col)
{
    if ((size_t)col >= r->n) {
        r->v = realloc(r->v, ((size_t)col + 1) * sizeof(ft_val));
        if (!r->v) abort();
        memset(r->v + r->n, 0, ((size_t)col + 1 - r->n) * sizeof(ft_val));
        r->n = (size_t)col + 1;
    }
    return &r->v[col];
}

static const ft_val *row_get(const arow *r, int col)
{
    return col >= 0 && (size_t)col < r->n ? &r->v[col] : NULL;
}

static void row_free(arow *r)
{
    for (size_t i = 0; i < r->n; i++)
        ft_val_free(&r->v[i]);
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

static void agg_free(agg *a)
{
    for (size_t i = 0; i < a->nrows; i++)
        row_free(&a->rows[i]);
    free(a->rows);
    for (size_t i = 0; i < a->ncols; i++)
        free(a->cols[i]);
    free(a->cols);
}

static void strip_at(idx_str *s)
{
    if (s->n && s->p[0] == '@') s->p++, s->n--;
}

/* ---- Steps ------------------------------------------------------------------------- */

enum { S_LOAD, S_GROUP, S_SORT, S_APPLY, S_FILTER, S_LIMIT };
enum { R_COUNT, R_DISTINCT, R_SUM, R_AVG, R_MIN, R_MAX, R_STDDEV, R_QUANTILE };

typedef struct reducer {
    int fn;
    idx_str field;
    double q;
    char name[256];
} reducer;

typedef struct step {
    int type;
    size_t nkeys;
    idx_str keys[32];
    idx_str as[32];
    int desc[32];
    size_t nred;
    reducer red[32];
    long long max; /* SORTBY MAX, or -1 */
    ft_expr *expr;
    idx_str name;
    long long off, num;
    int load_all;
} step;

typedef struct pipeline {
    step *s;
    size_t n;
    idx_str params[256];
    size_t nparams;
    int verbatim;
} pipeline;

static void pipeline_free(pipeline *p)
{
    for (size_t i = 0; i < p->n; i++)
        ft_expr_free(p->s[i].expr);
    free(p->s);
}

static step *add_step(pipeline *p, int type)
{
    p->s = realloc(p->s, (p->n + 1) * sizeof(*p->s));
    if (!p->s) abort();
    step *s = &p->s[p->n++];
    memset(s, 0, sizeof(*s));
    s->type = type;
    s->max = -1;
    return s;
}

static int is(idx_str a, const char *w)
{
    return a.n == strlen(w) && strncasecmp(a.p, w, a.n) == 0;
}

static int count_of(ks_ctx *ctx, const idx_str *argv, size_t argc, size_t i, long long *n)
{
    if (i >= argc) return idx_fail(ctx, "-Bad arguments: missing count"), -1;
    char tmp[32];
    size_t len = argv[i].n < 31 ? argv[i].n : 31;
    memcpy(tmp, argv[i].p, len);
    tmp[len] = 0;
    char *end;
    *n = strtoll(tmp, &end, 10);
    if (*end || *n < 0 || (size_t)*n > argc - i - 1)
        return idx_fail(ctx, "-Bad arguments: count out of range"), -1;
    return 0;
}

static int parse_reducer(ks_ctx *ctx, const idx_str *argv, size_t argc, size_t *i, step *s)
{
    static const char *const names[] = {"count", "count_distinct", "sum",     "avg", "min",
                                        "max",   "stddev",         "quantile"};
    if (*i + 1 >= argc || s->nred == 32) return idx_fail(ctx, "-Bad arguments for REDUCE"), -1;
    idx_str fn = argv[*i];
    reducer *r = &s->red[s->nred];
    memset(r, 0, sizeof(*r));
    r->fn = -1;
    for (int k = 0; k < 8; k++)
        if (is(fn, names[k])) r->fn = k;
    if (is(fn, "count_distinctish")) r->fn = R_DISTINCT;
    if (r->fn < 0)
        return idx_fail(ctx, "-strata: reducer %s is not supported", idx_printable(fn.p, fn.n, 0)),
               -1;
    long long n;
    if (count_of(ctx, argv, argc, *i + 1, &n) < 0) return -1;
    long long want = r->fn == R_COUNT ? 0 : r->fn == R_QUANTILE ? 2 : 1;
    if (n != want) return idx_fail(ctx, "-Bad arguments for reducer %s", names[r->fn]), -1;
    size_t at = *i + 2;
    if (n >= 1) {
        r->field = argv[at];
        strip_at(&r->field);
    }
    if (n == 2) r->q = strtod(argv[at + 1].p, NULL);
    *i = at + (size_t)n;
    if (*i + 1 < argc && is(argv[*i], "as")) {
        snprintf(r->name, sizeof(r->name), "%.*s", (int)argv[*i + 1].n, argv[*i + 1].p);
        *i += 2;
    } else {
        char lower[64];
        snprintf(lower, sizeof(lower), "%s", names[r->fn]);
        snprintf(r->name, sizeof(r->name), "__generated_alias%s%.*s", lower, (int)r->field.n,
                 r->field.p);
    }
    s->nred++;
    return 0;
}

static int parse_pipeline(ks_ctx *ctx, const idx_str *argv, size_t argc, pipeline *p)
{
    for (size_t i = 0; i < argc;) {
        idx_str o = argv[i];
        long long n;
        if (is(o, "load")) {
            step *s = add_step(p, S_LOAD);
            if (i + 1 < argc && is(argv[i + 1], "*")) {
                s->load_all = 1;
                i += 2;
                continue;
            }
            if (count_of(ctx, argv, argc, i + 1, &n) < 0) return -1;
            for (long long k = 0; k < n && s->nkeys < 32; k++) {
                idx_str f = argv[i + 2 + k];
                strip_at(&f);
                s->as[s->nkeys] = f;
                if (k + 2 < n && is(argv[i + 3 + k], "as"))
                    s->as[s->nkeys] = argv[i + 4 + k], k += 2;
                s->keys[s->nkeys++] = f;
            }
            i += 2 + (size_t)n;
        } else if (is(o, "groupby")) {
            step *s = add_step(p, S_GROUP);
            if (count_of(ctx, argv, argc, i + 1, &n) < 0) return -1;
            if (n > 32) return idx_fail(ctx, "-Bad arguments for GROUPBY"), -1;
            for (long long k = 0; k < n; k++) {
                s->keys[s->nkeys] = argv[i + 2 + k];
                if (!s->keys[s->nkeys].n || s->keys[s->nkeys].p[0] != '@')
                    return idx_fail(ctx,
                                    "-Bad arguments for GROUPBY: Unknown property `%s`. Did you "
                                    "mean `@%s`?",
                                    idx_printable(argv[i + 2 + k].p, argv[i + 2 + k].n, 0),
                                    idx_printable(argv[i + 2 + k].p, argv[i + 2 + k].n, 1)),
                           -1;
                strip_at(&s->keys[s->nkeys++]);
            }
            i += 2 + (size_t)n;
            while (i < argc && is(argv[i], "reduce")) {
                i++;
                if (parse_reducer(ctx, argv, argc, &i, s) < 0) return -1;
            }
        } else if (is(o, "sortby")) {
            step *s = add_step(p, S_SORT);
            if (count_of(ctx, argv, argc, i + 1, &n) < 0) return -1;
            for (long long k = 0; k < n && s->nkeys < 32; k++) {
                idx_str f = argv[i + 2 + k];
                strip_at(&f);
                s->keys[s->nkeys] = f;
                if (k + 1 < n && (is(argv[i + 3 + k], "asc") || is(argv[i + 3 + k], "desc")))
                    s->desc[s->nkeys] = is(argv[i + 2 + ++k], "desc");
                s->nkeys++;
            }
            i += 2 + (size_t)n;
            if (i + 1 < argc && is(argv[i], "max")) {
                s->max = strtoll(argv[i + 1].p, NULL, 10);
                i += 2;
            }
        } else if ((is(o, "apply") || is(o, "filter")) && i + 1 < argc) {
            step *s = add_step(p, is(o, "apply") ? S_APPLY : S_FILTER);
            char *err = NULL;
            s->expr = ft_expr_parse(argv[i + 1].p, argv[i + 1].n, &err);
            if (!s->expr) {
                free(ctx->err);
                ctx->err = err;
                return -1;
            }
            i += 2;
            if (s->type == S_APPLY) {
                if (i + 1 >= argc || !is(argv[i], "as"))
                    return idx_fail(ctx, "-strata: APPLY needs AS name"), -1;
                s->name = argv[i + 1];
                i += 2;
            }
        } else if (is(o, "limit") && i + 2 < argc) {
            step *s = add_step(p, S_LIMIT);
            s->off = strtoll(argv[i + 1].p, NULL, 10);
            s->num = strtoll(argv[i + 2].p, NULL, 10);
            if (s->off < 0 || s->num < 0) return idx_fail(ctx, "-Bad LIMIT"), -1;
            i += 3;
        } else if (is(o, "params")) {
            if (count_of(ctx, argv, argc, i + 1, &n) < 0) return -1;
            for (long long k = 0; k < n && p->nparams < 256; k++)
                p->params[p->nparams++] = argv[i + 2 + k];
            i += 2 + (size_t)n;
        } else if ((is(o, "dialect") || is(o, "timeout")) && i + 1 < argc) {
            i += 2;
        } else if (is(o, "verbatim")) {
            p->verbatim = 1;
            i++;
        } else {
            return idx_fail(ctx, "-strata: FT.AGGREGATE option %s is not supported",
                            idx_printable(o.p, o.n, 0)),
                   -1;
        }
    }
    return 0;
}

/* ---- Loading the documents ------------------------------------------------------------- */

typedef struct need {
    idx_str f[256];
    size_t n;
    int all, key;
} need;

static void need_add(void *arg, const char *name, size_t n)
{
    need *nd = arg;
    if (n == 5 && !memcmp(name, "__key", 5)) {
        nd->key = 1;
        return;
    }
    for (size_t i = 0; i < nd->n; i++)
        if (nd->f[i].n == n && !memcmp(nd->f[i].p, name, n)) return;
    if (nd->n < 256) nd->f[nd->n++] = (idx_str){name, n};
}

/* Which fields the steps up to the first GROUPBY read from the documents. */
static void fields_needed(const pipeline *p, need *nd)
{
    for (size_t i = 0; i < p->n; i++) {
        const step *s = &p->s[i];
        if (s->type == S_LOAD) {
            nd->all |= s->load_all;
            for (size_t k = 0; k < s->nkeys; k++)
                need_add(nd, s->keys[k].p, s->keys[k].n);
        } else if (s->type == S_APPLY || s->type == S_FILTER) {
            ft_expr_fields(s->expr, need_add, nd);
        } else {
            for (size_t k = 0; k < s->nkeys; k++)
                need_add(nd, s->keys[k].p, s->keys[k].n);
            for (size_t k = 0; k < s->nred; k++)
                if (s->red[k].field.n) need_add(nd, s->red[k].field.p, s->red[k].field.n);
        }
        if (s->type == S_GROUP) break;
    }
}

/* A hash field's value as a row value: a number for NUMERIC schema fields. */
static void load_value(const ft_def *d, const char *name, size_t nlen, const ks_field *f,
                       ft_val *out)
{
    int fi = ft_field_by_alias(d, name, nlen);
    double x;
    if (fi >= 0 && d->fields[fi].type == FT_NUMERIC && idx_parse_num(f->v, f->vl, &x) == 0) {
        ft_val_free(out);
        out->num = 1;
        out->d = x;
        return;
    }
    ft_val_free(out);
    ft_val_str(out, f->v, f->vl);
}

static ks_status load_rows(ft_view *v, const ft_set *set, const need *nd, agg *a)
{
    const ft_def *d = v->d->ft;
    a->rows = calloc(set->n + 1, sizeof(arow));
    if (!a->rows) abort();
    for (size_t i = 0; i < nd->n; i++)
        col_add(a, nd->f[i].p, nd->f[i].n);
    int keycol = nd->key ? col_add(a, "__key", 5) : -1;
    for (size_t r = 0; r < set->n; r++) {
        arow *row = &a->rows[a->nrows++];
        const char *key = ft_set_key(set, r);
        size_t kl = set->h[r].len;
        if (keycol >= 0) ft_val_str(row_slot(row, keycol), key, kl);
        if (!nd->n && !nd->all) continue;
        ks_field *f = NULL;
        size_t n = 0;
        ks_status st = ks_hash_read(v->ctx, v->b ? NULL : v->snap, key, kl, &f, &n);
        if (st == KS_NOTFOUND || st == KS_ERR_WRONGTYPE) continue;
        if (st != KS_OK) return st;
        for (size_t j = 0; j < n; j++) {
            /* a field is named by its schema alias when it has one */
            const char *name = f[j].f;
            size_t nl = f[j].fl;
            for (size_t k = 0; k < d->nfields; k++)
                if (d->fields[k].nlen == nl && !memcmp(d->fields[k].name, name, nl)) {
                    name = d->fields[k].alias, nl = d->fields[k].alen;
                    break;
                }
            int c = col_find(a, name, nl);
            if (c < 0 && nd->all) c = col_add(a, name, nl);
            if (c >= 0) load_value(d, name, nl, &f[j], row_slot(row, c));
        }
        ks_fields_free(f, n);
    }
    return KS_OK;
}

/* ---- Running the steps ------------------------------------------------------------------- */

static agg *cmp_agg;
static const int *cmp_cols;
static const int *cmp_desc;
static size_t cmp_n;

static int row_cmp(const void *pa, const void *pb)
{
    const arow *x = pa, *y = pb;
    static const ft_val null_val;
    for (size_t k = 0; k < cmp_n; k++) {
        const ft_val *a = row_get(x, cmp_cols[k]), *b = row_get(y, cmp_cols[k]);
        int c = ft_val_cmp(a ? a : &null_val, b ? b : &null_val);
        int anull = !a || (!a->num && !a->s), bnull = !b || (!b->num && !b->s);
        if (cmp_desc && cmp_desc[k] && !anull && !bnull) c = -c;
        if (c) return c;
    }
    return 0;
}

static void sort_rows(agg *a, const int *cols, const int *desc, size_t n)
{
    cmp_agg = a;
    cmp_cols = cols;
    cmp_desc = desc;
    cmp_n = n;
    /* merge sort keeps equal rows in order (qsort is not stable) */
    if (a->nrows < 2) return;
    arow *tmp = malloc(a->nrows * sizeof(arow));
    if (!tmp) abort();
    for (size_t w = 1; w < a->nrows; w *= 2) {
        for (size_t lo = 0; lo < a->nrows; lo += 2 * w) {
            size_t mid = lo + w < a->nrows ? lo + w : a->nrows;
            size_t hi = lo + 2 * w < a->nrows ? lo + 2 * w : a->nrows;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = row_cmp(&a->rows[j], &a->rows[i]) < 0 ? a->rows[j++] : a->rows[i++];
            while (i < mid)
                tmp[k++] = a->rows[i++];
            while (j < hi)
                tmp[k++] = a->rows[j++];
        }
        memcpy(a->rows, tmp, a->nrows * sizeof(arow));
    }
    free(tmp);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void reduce(const reducer *r, int col, const arow *rows, size_t n, ft_val *out)
{
    memset(out, 0, sizeof(*out));
    if (r->fn == R_COUNT) {
        out->num = 1, out->d = (double)n;
        return;
    }
    if (r->fn == R_DISTINCT) {
        const ft_val **vals = malloc((n + 1) * sizeof(*vals));
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const ft_val *v = row_get(&rows[i], col);
            if (v && (v->num || v->s)) vals[m++] = v;
        }
        size_t distinct = 0;
        for (size_t i = 0; i < m; i++) { /* O(m^2) only for tiny groups; sort otherwise */
            int dup = 0;
            if (m > 64) break;
            for (size_t j = 0; j < i && !dup; j++)
                dup = ft_val_cmp(vals[i], vals[j]) == 0;
            distinct += !dup;
        }
        if (m > 64) {
            ft_val *copy = malloc(m * sizeof(*copy));
            for (size_t i = 0; i < m; i++)
                copy[i] = *vals[i];
            cmp_n = 0;
            qsort(copy, m, sizeof(*copy), (int (*)(const void *, const void *))ft_val_cmp);
            distinct = 0;
            for (size_t i = 0; i < m; i++)
                distinct += i == 0 || ft_val_cmp(&copy[i], &copy[i - 1]) != 0;
            free(copy);
        }
        free(vals);
        out->num = 1, out->d = (double)distinct;
        return;
    }
    double *xs = malloc((n + 1) * sizeof(double));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const ft_val *v = row_get(&rows[i], col);
        int ok = 0;
        double x = v ? ft_val_num(v, &ok) : 0;
        if (ok) xs[m++] = x;
    }
    double acc = 0;
    for (size_t i = 0; i < m; i++)
        acc += xs[i];
    out->num = 1;
    switch (r->fn) {
    case R_SUM:
        out->d = acc;
        break;
    case R_AVG:
        out->d = m ? acc / (double)m : 0;
        break;
    case R_MIN:
    case R_MAX:
        out->d = m ? xs[0] : (r->fn == R_MIN ? INFINITY : -INFINITY);
        for (size_t i = 1; i < m; i++)
            if (r->fn == R_MIN ? xs[i] < out->d : xs[i] > out->d) out->d = xs[i];
        break;
    case R_STDDEV: {
        double mean = m ? acc / (double)m : 0, ss = 0;
        for (size_t i = 0; i < m; i++)
            ss += (xs[i] - mean) * (xs[i] - mean);
        out->d = m > 1 ? sqrt(ss / (double)(m - 1)) : 0;
        break;
    }
    case R_QUANTILE:
        qsort(xs, m, sizeof(double), dbl_cmp);
        out->d = m ? xs[(size_t)((double)(m - 1) * r->q + 0.5)] : 0;
        break;
    }
    free(xs);
}

static void run_group(agg *a, const step *s)
{
    int keys[32], rcols[32];
    for (size_t k = 0; k < s->nkeys; k++)
        keys[k] = col_find(a, s->keys[k].p, s->keys[k].n);
    for (size_t k = 0; k < s->nred; k++)
        rcols[k] = s->red[k].field.n ? col_find(a, s->red[k].field.p, s->red[k].field.n) : -1;
    sort_rows(a, keys, NULL, s->nkeys);
    agg out = {a->d, NULL, 0, calloc(a->nrows + 1, sizeof(arow)), 0};
    for (size_t k = 0; k < s->nkeys; k++)
        col_add(&out, s->keys[k].p, s->keys[k].n);
    for (size_t k = 0; k < s->nred; k++)
        col_add(&out, s->red[k].name, strlen(s->red[k].name));
    cmp_n = s->nkeys;
    cmp_cols = keys;
    cmp_desc = NULL;
    for (size_t i = 0, j; i < a->nrows; i = j) {
        for (j = i + 1; j < a->nrows && row_cmp(&a->rows[i], &a->rows[j]) == 0; j++)
            ;
        arow *g = &out.rows[out.nrows++];
        for (size_t k = 0; k < s->nkeys; k++) {
            const ft_val *v = row_get(&a->rows[i], keys[k]);
            if (v) ft_val_copy(row_slot(g, (int)k), v);
        }
        for (size_t k = 0; k < s->nred; k++) {
            ft_val r;
            reduce(&s->red[k], rcols[k], a->rows + i, j - i, &r);
            *row_slot(g, (int)(s->nkeys + k)) = r;
        }
    }
    agg_free(a);
    *a = out;
}

typedef struct lookup_ctx {
    const agg *a;
    const arow *row;
} lookup_ctx;

static const ft_val *lookup(void *arg, const char *name, size_t n)
{
    lookup_ctx *l = arg;
    return row_get(l->row, col_find(l->a, name, n));
}

static void run_apply(agg *a, const step *s)
{
    int col = col_add(a, s->name.p, s->name.n);
    for (size_t i = 0; i < a->nrows; i++) {
        lookup_ctx l = {a, &a->rows[i]};
        ft_val v;
        ft_expr_eval(s->expr, lookup, &l, &v);
        ft_val *slot = row_slot(&a->rows[i], col);
        ft_val_free(slot);
        *slot = v;
    }
}

static void run_filter(agg *a, const step *s)
{
    size_t w = 0;
    for (size_t i = 0; i < a->nrows; i++) {
        lookup_ctx l = {a, &a->rows[i]};
        ft_val v;
        ft_expr_eval(s->expr, lookup, &l, &v);
        int keep = ft_val_truthy(&v);
        ft_val_free(&v);
        if (keep)
            a->rows[w++] = a->rows[i];
        else
            row_free(&a->rows[i]);
    }
    a->nrows = w;
}

static void run_limit(agg *a, long long off, long long num)
{
    size_t from = (size_t)off < a->nrows ? (size_t)off : a->nrows;
    size_t to = from + (size_t)num < a->nrows ? from + (size_t)num : a->nrows;
    for (size_t i = 0; i < a->nrows; i++)
        if (i < from || i >= to) row_free(&a->rows[i]);
    memmove(a->rows, a->rows + from, (to - from) * sizeof(arow));
    a->nrows = to - from;
}

static ks_status run_steps(ks_ctx *ctx, agg *a, const pipeline *p, long long *total)
{
    *total = -1;
    for (size_t i = 0; i < p->n; i++) {
        const step *s = &p->s[i];
        if (s->type == S_GROUP) {
            for (size_t k = 0; k < s->nkeys; k++)
                if (col_find(a, s->keys[k].p, s->keys[k].n) < 0)
                    return idx_fail(ctx, "-No such property `%s`",
                                    idx_printable(s->keys[k].p, s->keys[k].n, 0));
            run_group(a, s);
        } else if (s->type == S_SORT) {
            int cols[32];
            for (size_t k = 0; k < s->nkeys; k++)
                cols[k] = col_find(a, s->keys[k].p, s->keys[k].n);
            sort_rows(a, cols, s->desc, s->nkeys);
            int later_limit = 0;
            for (size_t j = i + 1; j < p->n; j++)
                later_limit |= p->s[j].type == S_LIMIT;
            long long max = s->max >= 0 ? s->max : later_limit ? -1 : 10;
            if (max >= 0 && (size_t)max < a->nrows) run_limit(a, 0, max);
        } else if (s->type == S_APPLY) {
            run_apply(a, s);
        } else if (s->type == S_FILTER) {
            run_filter(a, s);
        } else if (s->type == S_LIMIT) {
            *total = (long long)a->nrows;
            run_limit(a, s->off, s->num);
        } else if (s->type == S_LOAD) {
            for (size_t k = 0; k < s->nkeys; k++) { /* LOAD @f AS a: a copy under a */
                if (s->as[k].n == s->keys[k].n && !memcmp(s->as[k].p, s->keys[k].p, s->keys[k].n))
                    continue;
                int from = col_find(a, s->keys[k].p, s->keys[k].n);
                int to = col_add(a, s->as[k].p, s->as[k].n);
                for (size_t r = 0; r < a->nrows; r++) {
                    const ft_val *v = row_get(&a->rows[r], from);
                    if (v) ft_val_copy(row_slot(&a->rows[r], to), v);
                }
            }
        }
    }
    if (*total < 0) *total = (long long)a->nrows;
    return KS_OK;
}

static void to_result(agg *a, const pipeline *p, ft_agg_result *out)
{
    /* columns to show: everything but fields loaded only to compute (the
     * ones LOAD did not name, before any GROUPBY) */
    out->rows = calloc(a->nrows + 1, sizeof(ft_row));
    if (!out->rows) abort();
    (void)p;
    for (size_t i = 0; i < a->nrows; i++) {
        ft_row *r = &out->rows[out->n++];
        arow *src = &a->rows[i];
        r->names = calloc(src->n + 1, sizeof(char *));
        r->vals = calloc(src->n + 1, sizeof(ft_val));
        for (size_t c = 0; c < src->n; c++) {
            if (!src->v[c].num && !src->v[c].s) continue;
            r->names[r->n] = strdup(a->cols[c]);
            r->vals[r->n++] = src->v[c];
            memset(&src->v[c], 0, sizeof(ft_val));
        }
    }
}

ks_status ft_aggregate(ks_ctx *ctx, idx_str index, idx_str query, const idx_str *argv, size_t argc,
                       ft_agg_result *out)
{
    memset(out, 0, sizeof(*out));
    idx_def *d = ft_find(ctx->db, index.p, index.n);
    if (!d) return idx_fail(ctx, "-%s: no such index", idx_printable(index.p, index.n, 0));
    pipeline p = {0};
    if (parse_pipeline(ctx, argv, argc, &p) < 0) {
        pipeline_free(&p);
        return KS_ERR_MSG;
    }
    char *err = NULL;
    ft_qnode *q = ft_parse(d->ft, query.p, query.n, p.params, p.nparams / 2, p.verbatim, &err);
    if (!q) {
        pipeline_free(&p);
        free(ctx->err);
        ctx->err = err;
        return KS_ERR_MSG;
    }
    ft_view v;
    ft_set set = {0};
    agg a = {d->ft, NULL, 0, NULL, 0};
    need nd = {0};
    ks_status st = ft_view_open(ctx, d, &v);
    if (st == KS_OK) st = ft_eval(&v, q, &set);
    fields_needed(&p, &nd);
    if (st == KS_OK) st = load_rows(&v, &set, &nd, &a);
    ft_view_close(&v);
    long long total = 0;
    if (st == KS_OK) st = run_steps(ctx, &a, &p, &total);
    if (st == KS_OK) {
        out->total = total;
        to_result(&a, &p, out);
    }
    agg_free(&a);
    ft_set_free(&set);
    ft_qnode_free(q);
    pipeline_free(&p);
    return st;
}

void ft_agg_result_free(ft_agg_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        for (size_t j = 0; j < r->rows[i].n; j++) {
            free(r->rows[i].names[j]);
            ft_val_free(&r->rows[i].vals[j]);
        }
        free(r->rows[i].names);
        free(r->rows[i].vals);
    }
    free(r->rows);
    memset(r, 0, sizeof(*r));
}
