/*
 * ft_exec.c -- evaluates a query tree over an FT index's entries, through
 * one snapshot (with the command's pending batch on top).
 *
 * Each leaf reads one contiguous range of entries and yields a set of
 * documents sorted by key: '*' the doc list, a TAG value or a term its
 * range (already in key order), a TAG or term prefix and a NUMERIC range a
 * span of values (sorted after the walk). Intersection, union and negation
 * merge sorted sets; negation is the doc list minus its child. Every set
 * carries per document the raw TF-IDF sum of the terms it matched:
 *     term:  freq * idf(term),  idf = logb(1 + N / df)   (RediSearch's CalculateIDF)
 *     NUMERIC leaf, '*': 1;  TAG leaf: 0                  (as RediSearch's TFIDF)
 * summed over an intersection or a union; the score of a document is that
 * sum times the index's SCORE divided by the document's maxfreq (at
 * least 1). N is the number of live documents, df the number of live
 * postings of the term. Not done: the distance penalty RediSearch divides
 * by for intersections of terms far apart (see README).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft_def.h"

void ft_set_free(ft_set *s)
{
    free(s->h);
    idx_buf_free(&s->keys);
    memset(s, 0, sizeof(*s));
}

static void set_add(ft_set *s, const char *k, size_t kl, double tf, uint32_t maxfreq)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->h = realloc(s->h, s->cap * sizeof(*s->h));
        if (!s->h) abort();
    }
    s->h[s->n++] = (ft_hit){s->keys.len, (uint32_t)kl, maxfreq, tf};
    idx_buf_append(&s->keys, k, kl);
}

static const char *sort_base;
static int hit_cmp(const void *a, const void *b)
{
    const ft_hit *x = a, *y = b;
    return idx_key_cmp(sort_base + x->off, x->len, sort_base + y->off, y->len);
}

/* Sorts s by key and merges duplicates (their tf summed). */
static void set_normalize(ft_set *s)
{
    if (s->n < 2) return;
    sort_base = s->keys.data;
    qsort(s->h, s->n, sizeof(*s->h), hit_cmp);
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (w && hit_cmp(&s->h[w - 1], &s->h[i]) == 0) {
            s->h[w - 1].tf += s->h[i].tf;
            continue;
        }
        s->h[w++] = s->h[i];
    }
    s->n = w;
}

ks_status ft_view_open(ks_ctx *ctx, const idx_def *d, ft_view *v)
{
    memset(v, 0, sizeof(*v));
    v->ctx = ctx;
    v->d = d;
    v->b = eng_batch_count(ctx->batch) ? ctx->batch : NULL;
    v->snap = eng_snapshot_new(idx_g.eng);
    return KS_OK;
}

void ft_view_close(ft_view *v)
{
    if (v->snap) eng_snapshot_release(idx_g.eng, v->snap);
    v->snap = NULL;
}

ks_status ft_walk(ft_view *v, const char *lo, size_t lol, const char *hi, size_t hil, int rev,
                  ft_walk_fn fn, void *arg)
{
    eng_iter *it = eng_iter_new(idx_g.eng, v->snap, v->b);
    if (rev) {
        eng_iter_seek_prev(it, hi, hil);
        if (eng_iter_valid(it)) {
            size_t kl;
            const char *k = eng_iter_key(it, &kl);
            if (idx_key_cmp(k, kl, hi, hil) >= 0) eng_iter_prev(it);
        }
    } else {
        eng_iter_seek(it, lo, lol);
    }
    for (; eng_iter_valid(it); rev ? eng_iter_prev(it) : eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *val = eng_iter_value(it, &vl);
        if (rev ? idx_key_cmp(k, kl, lo, lol) < 0 : idx_key_cmp(k, kl, hi, hil) >= 0) break;
        int64_t exp = idx_entry_expire(val, vl);
        if (exp < 0 || idx_expired(exp, v->ctx->now_ms)) continue;
        if (fn(arg, k, kl, val, vl)) break;
    }
    eng_status es = eng_iter_status(it);
    eng_iter_free(it);
    if (es != ENG_OK) return idx_fail(v->ctx, "ERR index read failed: %s", eng_last_error());
    return KS_OK;
}

/* Walks every entry whose key starts with prefix p. */
static ks_status walk_prefix(ft_view *v, const idx_buf *p, ft_walk_fn fn, void *arg)
{
    idx_buf hi = {0};
    idx_buf_append(&hi, p->data, p->len);
    idx_key_prefix_successor(&hi);
    ks_status st = ft_walk(v, p->data, p->len, hi.data, hi.len, 0, fn, arg);
    idx_buf_free(&hi);
    return st;
}

/* ---- Leaves --------------------------------------------------------------- */

typedef struct leaf {
    ft_set *out;
    size_t skip; /* bytes before the hash key (exact ranges) */
    int numeric; /* for prefix/range walks: the value encoding to skip */
    size_t vskip;
    double tf;
} leaf;

/* Entries of one exact value: the hash key follows the prefix. */
static int leaf_exact(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    leaf *l = arg;
    (void)v, (void)vl;
    uint32_t mf = vl >= 12 ? idx_get_u32(v + 8) : 0;
    set_add(l->out, k + l->skip, kl - l->skip, l->tf, mf);
    return 0;
}

/* Entries of a span of values: skip the encoded value first. */
static int leaf_span(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    leaf *l = arg;
    (void)v, (void)vl;
    size_t n = idx_key_skip_field(k + l->vskip, kl - l->vskip, l->numeric, 0);
    if (!n) return 0;
    set_add(l->out, k + l->vskip + n, kl - l->vskip - n, l->tf, 0);
    return 0;
}

static uint64_t range_hash(const char *lo, size_t lol, const char *hi, size_t hil)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < lol; i++)
        h = (h ^ (unsigned char)lo[i]) * 1099511628211ULL;
    h = (h ^ 0xFF) * 1099511628211ULL;
    for (size_t i = 0; i < hil; i++)
        h = (h ^ (unsigned char)hi[i]) * 1099511628211ULL;
    return h | 1;
}

int ft_range_count_get(const ft_view *v, const char *lo, size_t lol, const char *hi, size_t hil,
                       long long *n)
{
    uint64_t h = range_hash(lo, lol, hi, hil);
    const struct ft_count_slot *s = &v->d->ft->counts[h % FT_COUNT_SLOTS];
    if (v->b || !s->valid || s->hash != h || s->gen != v->d->gen) return 0;
    if (s->until && v->ctx->now_ms >= s->until) return 0;
    *n = s->count;
    return 1;
}

void ft_range_count_put(const ft_view *v, const char *lo, size_t lol, const char *hi, size_t hil,
                        long long n, int64_t until)
{
    if (v->b) return; /* pending writes: not what the index holds */
    uint64_t h = range_hash(lo, lol, hi, hil);
    v->d->ft->counts[h % FT_COUNT_SLOTS] = (struct ft_count_slot){v->d->gen, h, until, n, 1};
}

ks_status ft_count_docs(ft_view *v, uint64_t *n)
{
    idx_def *d = (idx_def *)v->d;
    if (d->counted_valid && d->counted_gen == d->gen &&
        (d->counted_until == 0 || v->ctx->now_ms < d->counted_until)) {
        *n = d->counted;
        return KS_OK;
    }
    ft_set all = {0};
    ks_status st = ft_eval(v, &(ft_qnode){.type = QN_ALL}, &all);
    *n = all.n;
    ft_set_free(&all);
    return st;
}

/* The doc list, with the earliest expiry among the documents (so the
 * cached count knows when it lapses). */
typedef struct all_walk {
    leaf l;
    int64_t until;
} all_walk;

static int all_one(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    all_walk *a = arg;
    int64_t exp = idx_entry_expire(v, vl);
    if (exp > 0 && (a->until == 0 || exp < a->until)) a->until = exp;
    return leaf_exact(&a->l, k, kl, v, vl);
}

static ks_status eval_all(ft_view *v, ft_set *out)
{
    idx_buf p = {0};
    ft_sub_prefix(v->d, FT_SUB_DOC, &p);
    all_walk a = {{out, p.len, 0, 0, 1.0}, 0};
    ks_status st = walk_prefix(v, &p, all_one, &a);
    idx_buf_free(&p);
    idx_def *d = (idx_def *)v->d;
    if (st == KS_OK && !v->b) { /* the count holds until gen moves or a doc expires */
        d->counted = out->n;
        d->counted_gen = d->gen;
        d->counted_until = a.until;
        d->counted_valid = 1;
    }
    return st;
}

static ks_status eval_tag(ft_view *v, const ft_qnode *q, ft_set *out)
{
    idx_buf p = {0};
    ks_status st = KS_OK;
    for (size_t i = 0; i < q->ntags && st == KS_OK; i++) {
        ft_sub_prefix(v->d, FT_SUB_FIELD, &p);
        idx_buf_byte(&p, (unsigned char)q->field);
        size_t vskip = p.len;
        idx_key_put_tag(&p, q->tags[i].v, q->tags[i].n, 0);
        if (q->tags[i].prefix) {
            p.len -= 2; /* drop the terminator: every value that starts with it */
            leaf l = {out, 0, 0, vskip, 0};
            st = walk_prefix(v, &p, leaf_span, &l);
        } else {
            leaf l = {out, p.len, 0, 0, 0};
            st = walk_prefix(v, &p, leaf_exact, &l);
        }
    }
    idx_buf_free(&p);
    if (q->ntags > 1 || (q->ntags && q->tags[0].prefix)) set_normalize(out);
    for (size_t i = 0; i < out->n; i++)
        out->h[i].tf = 0;
    return st;
}

static ks_status eval_num(ft_view *v, const ft_qnode *q, ft_set *out)
{
    idx_buf lo = {0}, hi = {0};
    ft_sub_prefix(v->d, FT_SUB_FIELD, &lo);
    idx_buf_byte(&lo, (unsigned char)q->field);
    size_t vskip = lo.len;
    idx_buf_append(&hi, lo.data, lo.len);
    idx_key_put_num(&lo, q->lo, 0);
    if (q->lo_excl) idx_key_prefix_successor(&lo);
    idx_key_put_num(&hi, q->hi, 0);
    if (!q->hi_excl) idx_key_prefix_successor(&hi);
    ks_status st = KS_OK;
    if (idx_key_cmp(lo.data, lo.len, hi.data, hi.len) < 0) {
        leaf l = {out, 0, 1, vskip, 1.0};
        st = ft_walk(v, lo.data, lo.len, hi.data, hi.len, 0, leaf_span, &l);
    }
    idx_buf_free(&lo);
    idx_buf_free(&hi);
    set_normalize(out);
    return st;
}

/* Postings of the terms in [lo, hi), each weighted by its own IDF. */
typedef struct term_walk {
    ft_view *v;
    ft_set *out;
    uint64_t mask;
    size_t vskip;
    size_t group_start; /* first hit of the current term */
    idx_buf cur;        /* the current term, encoded */
    uint64_t df;
    size_t terms;
} term_walk;

static void close_group(term_walk *t)
{
    if (t->group_start == t->out->n && !t->df) return;
    double idf = logb(1.0 + (double)t->v->ndocs / (double)(t->df ? t->df : 1));
    for (size_t i = t->group_start; i < t->out->n; i++)
        t->out->h[i].tf *= idf;
    t->group_start = t->out->n;
    t->df = 0;
}

static int term_one(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    term_walk *t = arg;
    size_t n = idx_key_skip_field(k + t->vskip, kl - t->vskip, 0, 0);
    ft_posting p;
    if (!n || ft_posting_parse(v, vl, &p) != 0) return 0;
    if (t->cur.len != n || memcmp(t->cur.data, k + t->vskip, n) != 0) {
        close_group(t);
        if (++t->terms > FT_MAX_EXPANSIONS) return 1;
        t->cur.len = 0;
        idx_buf_append(&t->cur, k + t->vskip, n);
    }
    t->df++;
    if (p.mask & t->mask) set_add(t->out, k + t->vskip + n, kl - t->vskip - n, p.freq, p.maxfreq);
    return 0;
}

/* One term (prefix = 0) or every term starting with str (prefix = 1). */
static ks_status eval_terms(ft_view *v, const char *str, size_t n, int prefix, uint64_t mask,
                            ft_set *out)
{
    idx_buf p = {0};
    ft_sub_prefix(v->d, FT_SUB_TERM, &p);
    size_t vskip = p.len;
    idx_key_put_tag(&p, str, n, 0);
    if (prefix) p.len -= 2;
    term_walk t = {v, out, mask, vskip, out->n, {0}, 0, 0};
    ks_status st = walk_prefix(v, &p, term_one, &t);
    close_group(&t);
    idx_buf_free(&t.cur);
    idx_buf_free(&p);
    return st;
}

static ks_status eval_term(ft_view *v, const ft_qnode *q, ft_set *out)
{
    ks_status st = eval_terms(v, q->str, q->slen, q->type == QN_PREFIX, q->mask, out);
    if (st == KS_OK && q->type == QN_TERM && !q->verbatim) {
        /* RediSearch's stem expansion: the term, "+stem", and the stem
         * itself when it differs. */
        idx_buf stem = {0}, plus = {0};
        if (ft_stem(q->str, q->slen, &stem)) {
            idx_buf_byte(&plus, '+');
            idx_buf_append(&plus, stem.data, stem.len);
            st = eval_terms(v, plus.data, plus.len, 0, q->mask, out);
            if (st == KS_OK) st = eval_terms(v, stem.data, stem.len, 0, q->mask, out);
        } else {
            idx_buf_byte(&plus, '+');
            idx_buf_append(&plus, q->str, q->slen);
            st = eval_terms(v, plus.data, plus.len, 0, q->mask, out);
        }
        idx_buf_free(&stem);
        idx_buf_free(&plus);
    }
    set_normalize(out);
    return st;
}

/* ---- Set operations ----------------------------------------------------------- */

static int key_cmp2(const ft_set *a, size_t i, const ft_set *b, size_t j)
{
    return idx_key_cmp(ft_set_key(a, i), a->h[i].len, ft_set_key(b, j), b->h[j].len);
}

/* out = a op b, op: 0 intersection, 1 union, 2 difference (a - b), 3 a with
 * b's tf added where present (optional). */
static void merge(const ft_set *a, const ft_set *b, int op, ft_set *out)
{
    size_t i = 0, j = 0;
    while (i < a->n || j < b->n) {
        int c = i == a->n ? 1 : j == b->n ? -1 : key_cmp2(a, i, b, j);
        if (c == 0) {
            if (op != 2) {
                uint32_t mf = a->h[i].maxfreq > b->h[j].maxfreq ? a->h[i].maxfreq : b->h[j].maxfreq;
                set_add(out, ft_set_key(a, i), a->h[i].len, a->h[i].tf + b->h[j].tf, mf);
            }
            i++, j++;
        } else if (c < 0) {
            if (op != 0) set_add(out, ft_set_key(a, i), a->h[i].len, a->h[i].tf, a->h[i].maxfreq);
            i++;
        } else {
            if (op == 1) set_add(out, ft_set_key(b, j), b->h[j].len, b->h[j].tf, b->h[j].maxfreq);
            j++;
        }
        if (op != 1 && i == a->n) break;
    }
}

static void set_swap(ft_set *a, ft_set *b)
{
    ft_set t = *a;
    *a = *b;
    *b = t;
}

static void set_clear(ft_set *s)
{
    s->n = s->keys.len = 0;
}

/* acc = acc op kid (merge's ops), through tmp (scratch reused by callers). */
static void merge_into(ft_set *acc, const ft_set *kid, int op, ft_set *tmp)
{
    set_clear(tmp);
    merge(acc, kid, op, tmp);
    set_swap(acc, tmp);
}

static ks_status eval_phrase(ft_view *v, const ft_qnode *q, ft_set *out);

static ks_status eval_and(ft_view *v, const ft_qnode *q, ft_set *out)
{
    ft_set acc = {0}, kid = {0}, tmp = {0};
    ks_status st = KS_OK;
    int have = 0;
    /* Positive children first, then negations and optionals apply to them. */
    for (int pass = 0; pass < 2 && st == KS_OK; pass++) {
        for (size_t i = 0; i < q->nkids && st == KS_OK; i++) {
            const ft_qnode *k = q->kids[i];
            int special = k->type == QN_NOT || k->type == QN_OPT;
            if (special != pass) continue;
            if (have && acc.n == 0) break;
            set_clear(&kid);
            st = ft_eval(v, special ? k->kids[0] : k, &kid);
            if (st != KS_OK) break;
            if (!have) {
                if (special) { /* nothing positive: start from every document */
                    st = eval_all(v, &acc);
                    for (size_t h = 0; h < acc.n; h++)
                        acc.h[h].tf = 0;
                    have = 1;
                    i--;
                    continue;
                }
                set_swap(&acc, &kid);
                have = 1;
                continue;
            }
            merge_into(&acc, &kid, k->type == QN_NOT ? 2 : k->type == QN_OPT ? 3 : 0, &tmp);
        }
    }
    set_swap(out, &acc);
    ft_set_free(&acc);
    ft_set_free(&kid);
    ft_set_free(&tmp);
    return st;
}

static ks_status eval_or(ft_view *v, const ft_qnode *q, ft_set *out)
{
    ft_set acc = {0}, kid = {0}, tmp = {0};
    ks_status st = KS_OK;
    for (size_t i = 0; i < q->nkids && st == KS_OK; i++) {
        set_clear(&kid);
        st = ft_eval(v, q->kids[i], &kid);
        merge_into(&acc, &kid, 1, &tmp);
    }
    set_swap(out, &acc);
    ft_set_free(&acc);
    ft_set_free(&kid);
    ft_set_free(&tmp);
    return st;
}

static ks_status eval_not(ft_view *v, const ft_qnode *q, ft_set *out)
{
    ft_set all = {0}, kid = {0};
    ks_status st = eval_all(v, &all);
    if (st == KS_OK) st = ft_eval(v, q->kids[0], &kid);
    if (st == KS_OK) merge(&all, &kid, 2, out);
    for (size_t i = 0; i < out->n; i++)
        out->h[i].tf = 0;
    ft_set_free(&all);
    ft_set_free(&kid);
    return st;
}

ks_status ft_eval(ft_view *v, const ft_qnode *q, ft_set *out)
{
    if (!v->ndocs && ft_scored(q)) {
        uint64_t n = 0;
        ks_status st = ft_count_docs(v, &n);
        if (st != KS_OK) return st;
        v->ndocs = n ? n : 1;
    }
    switch (q->type) {
    case QN_ALL:
        return eval_all(v, out);
    case QN_NONE:
        return KS_OK;
    case QN_AND:
        return eval_and(v, q, out);
    case QN_OR:
        return eval_or(v, q, out);
    case QN_NOT:
        return eval_not(v, q, out);
    case QN_OPT:
        return ft_eval(v, q->kids[0], out);
    case QN_TERM:
    case QN_PREFIX:
        return eval_term(v, q, out);
    case QN_PHRASE:
        return eval_phrase(v, q, out);
    case QN_TAG:
        return eval_tag(v, q, out);
    case QN_NUM:
        return eval_num(v, q, out);
    }
    return KS_OK;
}

int ft_scored(const ft_qnode *q)
{
    if (q->type == QN_TERM || q->type == QN_PREFIX || q->type == QN_PHRASE) return 1;
    if (q->type == QN_NOT) return 0;
    for (size_t i = 0; i < q->nkids; i++)
        if (ft_scored(q->kids[i])) return 1;
    return 0;
}

/* ---- Exact phrases -------------------------------------------------------------- */

/* The positions of one term in one document, read from its posting. */
typedef struct pos_walk {
    const char *key;
    size_t klen, vskip;
    ft_posting p;
    int found;
    uint64_t mask;
} pos_walk;

static int pos_one(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    pos_walk *w = arg;
    (void)k, (void)kl;
    w->found = ft_posting_parse(v, vl, &w->p) == 0;
    return 1;
}

/* Does term t (encoded key prefix tp) occur in doc at position pos, in a
 * field of mask? Reads the one posting (tp + key) through the view. */
static int has_pos(ft_view *v, idx_buf *tp, const char *key, size_t klen, uint32_t pos,
                   uint64_t mask)
{
    size_t base = tp->len;
    idx_buf_append(tp, key, klen);
    idx_buf hi = {0};
    idx_buf_append(&hi, tp->data, tp->len);
    idx_buf_byte(&hi, 0);
    pos_walk w = {0};
    ft_walk(v, tp->data, tp->len, hi.data, hi.len, 0, pos_one, &w);
    idx_buf_free(&hi);
    tp->len = base;
    if (!w.found) return 0;
    for (uint32_t i = 0; i < w.p.npos; i++) {
        uint32_t x = idx_get_u32(w.p.pos + 4 * i);
        if (x == pos && (mask & (1ULL << (x >> 24)))) return 1;
    }
    return 0;
}

/* An exact phrase: the documents holding every term (verbatim), then for
 * each, a start position of the first term followed by the others. */
static ks_status eval_phrase(ft_view *v, const ft_qnode *q, ft_set *out)
{
    ft_set acc = {0}, kid = {0}, tmp = {0};
    ks_status st = KS_OK;
    for (size_t i = 0; i < q->nkids && st == KS_OK; i++) {
        set_clear(&kid);
        st = eval_terms(v, q->kids[i]->str, q->kids[i]->slen, 0, q->mask, &kid);
        set_normalize(&kid);
        if (i == 0) {
            set_swap(&acc, &kid);
            continue;
        }
        merge_into(&acc, &kid, 0, &tmp);
    }
    idx_buf first = {0}, other = {0};
    ft_sub_prefix(v->d, FT_SUB_TERM, &first);
    idx_key_put_tag(&first, q->kids[0]->str, q->kids[0]->slen, 0);
    for (size_t h = 0; st == KS_OK && h < acc.n; h++) {
        const char *key = ft_set_key(&acc, h);
        size_t kl = acc.h[h].len;
        size_t base = first.len;
        idx_buf_append(&first, key, kl);
        idx_buf hi = {0};
        idx_buf_append(&hi, first.data, first.len);
        idx_buf_byte(&hi, 0);
        pos_walk w = {0};
        st = ft_walk(v, first.data, first.len, hi.data, hi.len, 0, pos_one, &w);
        idx_buf_free(&hi);
        first.len = base;
        int match = 0;
        for (uint32_t i = 0; w.found && i < w.p.npos && !match; i++) {
            uint32_t p0 = idx_get_u32(w.p.pos + 4 * i);
            if (!(q->mask & (1ULL << (p0 >> 24)))) continue;
            match = 1;
            for (size_t t = 1; t < q->nkids && match; t++) {
                ft_sub_prefix(v->d, FT_SUB_TERM, &other);
                idx_key_put_tag(&other, q->kids[t]->str, q->kids[t]->slen, 0);
                match = has_pos(v, &other, key, kl, p0 + (uint32_t)t, q->mask);
            }
        }
        if (match) set_add(out, key, kl, acc.h[h].tf, acc.h[h].maxfreq);
    }
    idx_buf_free(&first);
    idx_buf_free(&other);
    ft_set_free(&acc);
    ft_set_free(&kid);
    ft_set_free(&tmp);
    return st;
}
