/*
 * ft_search.c -- FT.SEARCH: parse, plan, order, page, then read the hashes
 * of the page only.
 *
 * Plans, in this order:
 *   1. stream: '*' or one TAG value, no SORTBY, no scoring -- walk the one
 *      range in key order, count every live entry for the total, keep only
 *      offset..offset+num (LIMIT 5000000 10 walks, it buffers 10 keys);
 *   2. sorted walk: '*' or a NUMERIC range, SORTBY a NUMERIC field that is
 *      indexed -- walk that field's entries in value order (backwards for
 *      DESC) and stop after offset+num documents that match (the query's
 *      own range is the walk, or every document for '*'); the total is the
 *      doc count, or the range's entry count;
 *   3. general: evaluate the tree into a key-sorted set (ft_exec.c), then
 *      order it (SORTBY: read the sort values -- from the field's entries
 *      when it is an indexed NUMERIC field, else from the hashes; text
 *      queries: score descending; otherwise key order) and page it.
 * Order of ties (equal score or equal sort value): shorter key first, then
 * bytewise. Documents without the SORTBY field come last.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft_def.h"

/* A document on its way to the reply. */
typedef struct cand {
    size_t off; /* key bytes in the key buffer */
    uint32_t len;
    int has;           /* has a sort value */
    double num;        /* sort value (numeric) or score */
    size_t soff, slen; /* sort value (string) in the key buffer */
    double score;
} cand;

typedef struct cands {
    cand *c;
    size_t n, cap;
    idx_buf bytes;
} cands;

static void cands_add(cands *cs, const char *k, size_t kl, double score)
{
    if (cs->n == cs->cap) {
        cs->cap = cs->cap ? cs->cap * 2 : 64;
        cs->c = realloc(cs->c, cs->cap * sizeof(*cs->c));
        if (!cs->c) abort();
    }
    cs->c[cs->n++] = (cand){cs->bytes.len, (uint32_t)kl, 0, 0, 0, 0, score};
    idx_buf_append(&cs->bytes, k, kl);
}

static void cands_free(cands *cs)
{
    free(cs->c);
    idx_buf_free(&cs->bytes);
}

static int shortlex(const char *a, size_t al, const char *b, size_t bl)
{
    if (al != bl) return al < bl ? -1 : 1;
    return al ? memcmp(a, b, al) : 0;
}

static const cands *sort_cs;
static int sort_desc, sort_str;

static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa, *b = pb;
    const char *base = sort_cs->bytes.data;
    if (a->has != b->has) return a->has ? -1 : 1;
    int c = 0;
    if (a->has) {
        if (sort_str)
            c = idx_key_cmp(base + a->soff, a->slen, base + b->soff, b->slen);
        else
            c = (a->num > b->num) - (a->num < b->num);
        if (sort_desc) c = -c;
    }
    return c ? c : shortlex(base + a->off, a->len, base + b->off, b->len);
}

static void cands_sort(cands *cs, int desc, int str)
{
    sort_cs = cs;
    sort_desc = desc;
    sort_str = str;
    if (cs->n > 1) qsort(cs->c, cs->n, sizeof(*cs->c), cand_cmp);
}

/* ---- Plan 1: stream one range in key order ------------------------------------- */

typedef struct stream {
    cands *out;
    size_t skip;
    long long seen, from, to;
    double tf, docscore;
    int stop_at_to; /* the total is known: stop after the page */
    int64_t until;  /* earliest expiry among the entries counted */
} stream;

static int stream_one(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    stream *s = arg;
    if (s->seen >= s->from && s->seen < s->to) {
        uint32_t mf = vl >= 12 ? idx_get_u32(v + 8) : 0;
        cands_add(s->out, k + s->skip, kl - s->skip, s->tf * s->docscore / (mf ? mf : 1));
    }
    ft_min_expiry(&s->until, idx_entry_expire(v, vl));
    s->seen++;
    return s->stop_at_to && s->seen >= s->to;
}

static int streamable(const ft_qnode *q)
{
    return q->type == QN_ALL || (q->type == QN_TAG && q->ntags == 1 && !q->tags[0].prefix);
}

static ks_status plan_stream(ft_view *v, const ft_qnode *q, const ft_search_req *r, cands *out,
                             long long *total)
{
    idx_buf p = {0}, hi = {0};
    if (q->type == QN_ALL) {
        ft_sub_prefix(v->d, FT_SUB_DOC, &p);
    } else {
        ft_sub_prefix(v->d, FT_SUB_FIELD, &p);
        idx_buf_byte(&p, (unsigned char)q->field);
        idx_key_put_tag(&p, q->tags[0].v, q->tags[0].n, 0);
    }
    idx_buf_append(&hi, p.data, p.len);
    idx_key_prefix_successor(&hi);
    stream s = {out,
                p.len,
                0,
                r->offset,
                r->offset + r->num,
                q->type == QN_ALL ? 1.0 : 0.0,
                v->d->ft->score};
    long long cached = 0;
    s.stop_at_to = ft_range_count_get(v, p.data, p.len, hi.data, hi.len, &cached);
    ks_status st = s.stop_at_to && r->num == 0
                       ? KS_OK
                       : ft_walk(v, p.data, p.len, hi.data, hi.len, 0, stream_one, &s);
    *total = s.stop_at_to ? cached : s.seen;
    if (st == KS_OK && !s.stop_at_to)
        ft_range_count_put(v, p.data, p.len, hi.data, hi.len, s.seen, s.until);
    idx_buf_free(&p);
    idx_buf_free(&hi);
    return st;
}

/* ---- Plan 2 and SORTBY of a set: walk a NUMERIC field in value order ---------- */

typedef struct sorted_walk {
    cands *out;
    const ft_set *filter; /* NULL: every document */
    uint8_t *seen;        /* per filter entry: emitted */
    size_t vskip;
    long long want; /* stop after this many (< 0: all) */
    int count_rest; /* after want: keep walking, only counting */
    int full;
    int64_t until;    /* earliest expiry among the entries counted */
    const ft_def *fd; /* composite walks: fields after the sort value to skip */
    const int *rest;
    size_t nrest;
    long long count; /* entries that matched */
    cands run;       /* documents of the current value, to order ties */
    uint64_t run_val;
    double docscore;
} sorted_walk;

static long long find_key(const ft_set *s, const char *k, size_t kl)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = idx_key_cmp(ft_set_key(s, mid), s->h[mid].len, k, kl);
        if (c == 0) return (long long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static void flush_run(sorted_walk *w)
{
    cands_sort(&w->run, 0, 0);
    for (size_t i = 0; i < w->run.n; i++) {
        const cand *c = &w->run.c[i];
        cands_add(w->out, w->run.bytes.data + c->off, c->len, c->score);
        w->out->c[w->out->n - 1].has = 1;
        w->out->c[w->out->n - 1].num = c->num;
    }
    w->run.n = w->run.bytes.len = 0;
}

static int sorted_one(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    sorted_walk *w = arg;
    if (kl < w->vskip + 8) return 0;
    ft_min_expiry(&w->until, idx_entry_expire(v, vl));
    if (w->full) { /* past the page: only the total */
        w->count++;
        return 0;
    }
    uint64_t val = idx_get_u64(k + w->vskip);
    const char *hk = k + w->vskip + 8;
    size_t hkl = kl - w->vskip - 8;
    for (size_t i = 0; i < w->nrest; i++) {
        size_t n = idx_key_skip_field(hk, hkl, w->fd->fields[w->rest[i]].type == FT_NUMERIC, 0);
        if (!n) return 0;
        hk += n, hkl -= n;
    }
    double score = 0;
    if (w->filter) {
        long long i = find_key(w->filter, hk, hkl);
        if (i < 0 || w->seen[i]) return 0;
        w->seen[i] = 1;
        const ft_hit *h = &w->filter->h[i];
        score = h->tf * w->docscore / (h->maxfreq ? h->maxfreq : 1);
    }
    if (w->run.n && val != w->run_val) {
        flush_run(w);
        if (w->want >= 0 && (long long)w->out->n >= w->want) {
            if (!w->count_rest) return 1;
            w->full = 1;
            w->count++;
            return 0;
        }
    }
    w->run_val = val;
    cands_add(&w->run, hk, hkl, score);
    w->run.c[w->run.n - 1].num = idx_key_get_num(k + w->vskip, 0);
    w->count++;
    return 0;
}

/* Walks the NUMERIC values after prefix p between lo and hi in value
 * order (backwards for desc). */
static ks_status walk_sorted(ft_view *v, const idx_buf *p, double lo, int lo_excl, double hi,
                             int hi_excl, int desc, sorted_walk *w)
{
    idx_buf a = {0}, b = {0};
    idx_buf_append(&a, p->data, p->len);
    w->vskip = a.len;
    idx_buf_append(&b, a.data, a.len);
    idx_key_put_num(&a, lo, 0);
    if (lo_excl) idx_key_prefix_successor(&a);
    idx_key_put_num(&b, hi, 0);
    if (!hi_excl) idx_key_prefix_successor(&b);
    ks_status st = KS_OK;
    /* a total counted before (and still true) lets the walk stop at the page */
    long long cached = 0;
    int known =
        w->count_rest && !w->filter && ft_range_count_get(v, a.data, a.len, b.data, b.len, &cached);
    if (known) w->count_rest = 0;
    if (idx_key_cmp(a.data, a.len, b.data, b.len) < 0)
        st = ft_walk(v, a.data, a.len, b.data, b.len, desc, sorted_one, w);
    if (st == KS_OK && w->run.n) flush_run(w);
    if (known) {
        w->count = cached;
    } else if (st == KS_OK && w->count_rest) {
        ft_range_count_put(v, a.data, a.len, b.data, b.len, w->count, w->until);
    }
    idx_buf_free(&a);
    idx_buf_free(&b);
    cands_free(&w->run);
    return st;
}

/* Field fi (NUMERIC, indexed) in value order. */
static ks_status walk_field_sorted(ft_view *v, int fi, double lo, int lo_excl, double hi,
                                   int hi_excl, int desc, sorted_walk *w)
{
    idx_buf p = {0};
    ft_sub_prefix(v->d, FT_SUB_FIELD, &p);
    idx_buf_byte(&p, (unsigned char)fi);
    ks_status st = walk_sorted(v, &p, lo, lo_excl, hi, hi_excl, desc, w);
    idx_buf_free(&p);
    return st;
}

/* ---- The composite: TAG = v AND ... [AND range] SORTBY the next field --------- */

static int stop_at_first(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    (void)k, (void)kl, (void)v, (void)vl;
    *(int *)arg = 1;
    return 1;
}

/* When the composite answers q with SORTBY sf, fills its prefix p (the
 * fixed values), *range (NULL: the whole next field) and *k (fixed fields)
 * and returns 1. */
static int comp_match(const ft_def *fd, const ft_qnode *q, int sf, idx_buf *p,
                      const ft_qnode **range, size_t *k)
{
    const ft_qnode *const *kids = q->type == QN_AND ? (const ft_qnode *const *)q->kids : &q;
    size_t nk = q->type == QN_AND ? q->nkids : 1;
    const ft_qnode *by_field[FT_MAX_FIELDS] = {0};
    for (size_t i = 0; i < nk; i++) {
        const ft_qnode *c = kids[i];
        int ok = (c->type == QN_TAG && c->ntags == 1 && !c->tags[0].prefix) || c->type == QN_NUM;
        if (!ok || by_field[c->field]) return 0;
        by_field[c->field] = c;
    }
    size_t fixed = 0;
    while (fixed < fd->ncomp && by_field[fd->comp[fixed]] &&
           by_field[fd->comp[fixed]]->type == QN_TAG)
        fixed++;
    if (!fixed || fixed == fd->ncomp || fd->comp[fixed] != sf) return 0;
    const ft_qnode *next = by_field[sf];
    if (fd->fields[sf].type != FT_NUMERIC || (next && next->type != QN_NUM)) return 0;
    if (fixed + (next != NULL) != nk) return 0; /* a leaf the composite does not cover */
    for (size_t c = 0; c < fixed; c++) {
        const ft_qnode *t = by_field[fd->comp[c]];
        idx_key_put_tag(p, t->tags[0].v, t->tags[0].n, 0);
    }
    *range = next;
    *k = fixed;
    return 1;
}

/* Returns 1 when the composite ran (KS_OK or an error in *st). */
static int plan_composite(ft_view *v, const ft_qnode *q, const ft_search_req *r, int sf, cands *cs,
                          long long *total, ks_status *st)
{
    const ft_def *fd = v->d->ft;
    if (!fd->ncomp || !r->has_sortby || r->has_inkeys || ft_scored(q)) return 0;
    idx_buf p = {0};
    ft_sub_prefix(v->d, FT_SUB_COMP, &p);
    const ft_qnode *range = NULL;
    size_t k = 0;
    int out = 0;
    if (!comp_match(fd, q, sf, &p, &range, &k)) goto done;
    ft_def *mfd = v->d->ft; /* usable only while no document is outside it */
    if (!(mfd->outside_none && mfd->outside_gen == v->d->gen) || v->b) {
        idx_buf y = {0}, yh = {0};
        ft_sub_prefix(v->d, FT_SUB_COMP_OUT, &y);
        idx_buf_append(&yh, y.data, y.len);
        idx_key_prefix_successor(&yh);
        int outside = 0;
        *st = ft_walk(v, y.data, y.len, yh.data, yh.len, 0, stop_at_first, &outside);
        idx_buf_free(&y);
        idx_buf_free(&yh);
        if (*st != KS_OK) {
            out = 1;
            goto done;
        }
        if (outside) goto done;
        if (!v->b) mfd->outside_none = 1, mfd->outside_gen = v->d->gen;
    }
    sorted_walk w = {.out = cs,
                     .want = r->offset + r->num,
                     .count_rest = 1,
                     .fd = fd,
                     .rest = fd->comp + k + 1,
                     .nrest = fd->ncomp - k - 1,
                     .docscore = fd->score};
    *st = walk_sorted(v, &p, range ? range->lo : -INFINITY, range ? range->lo_excl : 0,
                      range ? range->hi : INFINITY, range ? range->hi_excl : 0, r->sort_desc, &w);
    *total = w.count;
    out = 1;
done:
    idx_buf_free(&p);
    return out;
}

/* ---- SORTBY values read from the hashes -------------------------------------- */

static const ks_field *hash_field(const ks_field *f, size_t n, const ft_field *fd)
{
    for (size_t i = 0; i < n; i++)
        if (f[i].fl == fd->nlen && memcmp(f[i].f, fd->name, fd->nlen) == 0) return &f[i];
    return NULL;
}

static ks_status sort_values_from_hashes(ft_view *v, const ft_field *fd, cands *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        ks_field *f = NULL;
        size_t n = 0;
        cand *c = &cs->c[i];
        ks_status st =
            ks_hash_read(v->ctx, v->b ? NULL : v->snap, cs->bytes.data + c->off, c->len, &f, &n);
        if (st == KS_NOTFOUND || st == KS_ERR_WRONGTYPE) continue;
        if (st != KS_OK) return st;
        const ks_field *x = hash_field(f, n, fd);
        if (x && fd->type == FT_NUMERIC) {
            c->has = idx_parse_num(x->v, x->vl, &c->num) == 0;
        } else if (x) {
            c->has = 1;
            c->soff = cs->bytes.len;
            if (fd->opts & FT_OPT_UNF)
                idx_buf_append(&cs->bytes, x->v, x->vl);
            else
                ft_lower(x->v, x->vl, &cs->bytes);
            c->slen = cs->bytes.len - c->soff;
            c = &cs->c[i];
        }
        ks_fields_free(f, n);
    }
    return KS_OK;
}

/* ---- Reading the page ------------------------------------------------------------ */

/* Copies the pairs to reply into one allocation owned by doc: the ks_field
 * array followed by the bytes. With RETURN, only the fields asked for, in
 * that order, named as asked (alias, or AS), as RediSearch replies. */
static void doc_fields(ft_doc *doc, const ft_def *d, const ft_search_req *r, const ks_field *f,
                       size_t n)
{
    size_t cnt = r->has_return ? r->nret : n, bytes = 0;
    const ks_field *pick[FT_MAX_FIELDS * 4];
    idx_str names[FT_MAX_FIELDS * 4];
    size_t k = 0;
    for (size_t i = 0; i < cnt && k < FT_MAX_FIELDS * 4; i++) {
        if (!r->has_return) {
            pick[k] = &f[i];
            names[k++] = (idx_str){f[i].f, f[i].fl};
            continue;
        }
        idx_str want = r->ret[i];
        int fi = ft_field_by_alias(d, want.p, want.n);
        if (fi >= 0) want = (idx_str){d->fields[fi].name, d->fields[fi].nlen};
        for (size_t j = 0; j < n; j++) {
            if (f[j].fl != want.n || memcmp(f[j].f, want.p, want.n) != 0) continue;
            pick[k] = &f[j];
            names[k++] = r->ret_as && r->ret_as[i].p ? r->ret_as[i] : r->ret[i];
            break;
        }
    }
    for (size_t i = 0; i < k; i++)
        bytes += names[i].n + pick[i]->vl;
    char *block = malloc(k * sizeof(ks_field) + bytes + 1);
    if (!block) abort();
    ks_field *out = (ks_field *)block;
    char *p = block + k * sizeof(ks_field);
    for (size_t i = 0; i < k; i++) {
        memcpy(p, names[i].p, names[i].n);
        out[i].f = p, out[i].fl = names[i].n, p += names[i].n;
        memcpy(p, pick[i]->v, pick[i]->vl);
        out[i].v = p, out[i].vl = pick[i]->vl, p += pick[i]->vl;
    }
    doc->f = out;
    doc->nf = k;
}

static ks_status read_page(ft_view *v, const ft_search_req *r, const cands *cs, size_t from,
                           size_t to, ft_result *out)
{
    size_t n = to > from ? to - from : 0;
    out->docs = calloc(n + 1, sizeof(*out->docs));
    if (!out->docs) abort();
    ks_status st = KS_OK;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        const cand *c = &cs->c[from + i];
        ft_doc *doc = &out->docs[out->n++];
        doc->score = c->score;
        doc->key = malloc(c->len + 1);
        if (!doc->key) abort();
        memcpy(doc->key, cs->bytes.data + c->off, c->len);
        doc->key[c->len] = 0;
        doc->klen = c->len;
        if (r->nocontent || (r->has_return && r->nret == 0)) continue;
        if (r->defer_content && !r->has_return) continue;
        ks_field *f = NULL;
        size_t nf = 0;
        ks_status rs = ks_hash_read(v->ctx, v->b ? NULL : v->snap, doc->key, doc->klen, &f, &nf);
        if (rs == KS_OK) {
            doc_fields(doc, v->d->ft, r, f, nf);
            ks_fields_free(f, nf);
        } else if (rs == KS_NOTFOUND || rs == KS_ERR_WRONGTYPE) {
            doc->gone = 1;
        } else {
            st = rs;
        }
    }
    return st;
}

/* ---- FT.SEARCH ----------------------------------------------------------------------- */

static int sort_plan_ok(const ft_def *fd, const ft_qnode *q, int sf)
{
    const ft_field *f = &fd->fields[sf];
    if (f->type != FT_NUMERIC || (f->opts & FT_OPT_NOINDEX)) return 0;
    return q->type == QN_ALL || (q->type == QN_NUM && q->field == sf);
}

static ks_status run(ft_view *v, const ft_qnode *q, const ft_search_req *r, int sf, cands *cs,
                     long long *total)
{
    const ft_def *fd = v->d->ft;
    if (!r->has_sortby && !ft_scored(q) && !r->has_inkeys && streamable(q))
        return plan_stream(v, q, r, cs, total);
    long long want = r->offset + r->num;
    ks_status cst = KS_OK;
    if (plan_composite(v, q, r, sf, cs, total, &cst)) return cst;
    if (r->has_sortby && !r->has_inkeys && sort_plan_ok(fd, q, sf)) {
        sorted_walk w = {.out = cs, .want = want, .docscore = fd->score};
        ks_status st;
        if (q->type == QN_ALL) {
            st = walk_field_sorted(v, sf, -INFINITY, 0, INFINITY, 0, r->sort_desc, &w);
            uint64_t ndocs = 0;
            if (st == KS_OK) st = ft_count_docs(v, &ndocs);
            *total = (long long)ndocs;
            if (st == KS_OK && (long long)cs->n < want && (uint64_t)w.count < ndocs) {
                /* documents without the field come last: the general plan */
                cs->n = cs->bytes.len = 0;
                goto general;
            }
        } else {
            w.count_rest = 1; /* the total is the range's count: walk it all */
            st = walk_field_sorted(v, sf, q->lo, q->lo_excl, q->hi, q->hi_excl, r->sort_desc, &w);
            *total = w.count;
        }
        return st;
    }
general:;
    ft_set set = {0};
    ks_status st = ft_eval(v, q, &set);
    if (st == KS_OK && r->has_inkeys) { /* INKEYS: keep only the keys listed */
        size_t w = 0;
        for (size_t i = 0; i < set.n; i++) {
            int in = 0;
            for (size_t j = 0; j < r->ninkeys && !in; j++)
                in = r->inkeys[j].n == set.h[i].len &&
                     memcmp(r->inkeys[j].p, ft_set_key(&set, i), set.h[i].len) == 0;
            if (in) set.h[w++] = set.h[i];
        }
        set.n = w;
    }
    *total = (long long)set.n;
    int scored = ft_scored(q);
    if (st == KS_OK && r->has_sortby && fd->fields[sf].type == FT_NUMERIC &&
        !(fd->fields[sf].opts & FT_OPT_NOINDEX) && set.n > 0) {
        /* the field's own order, membership by binary search */
        sorted_walk w = {.out = cs, .filter = &set, .want = want, .docscore = fd->score};
        w.seen = calloc(set.n, 1);
        if (!w.seen) abort();
        st = walk_field_sorted(v, sf, -INFINITY, 0, INFINITY, 0, r->sort_desc, &w);
        if (st == KS_OK && (long long)cs->n < want) { /* then those without a value */
            for (size_t i = 0; i < set.n; i++)
                if (!w.seen[i]) {
                    const ft_hit *h = &set.h[i];
                    cands_add(cs, ft_set_key(&set, i), h->len,
                              h->tf * fd->score / (h->maxfreq ? h->maxfreq : 1));
                }
            size_t first_missing = 0;
            while (first_missing < cs->n && cs->c[first_missing].has)
                first_missing++;
            cands tail = {cs->c + first_missing, cs->n - first_missing, 0, cs->bytes};
            cands_sort(&tail, 0, 0);
        }
        free(w.seen);
    } else if (st == KS_OK) {
        for (size_t i = 0; i < set.n; i++) {
            const ft_hit *h = &set.h[i];
            cands_add(cs, ft_set_key(&set, i), h->len,
                      h->tf * fd->score / (h->maxfreq ? h->maxfreq : 1));
        }
        if (r->has_sortby) {
            st = sort_values_from_hashes(v, &fd->fields[sf], cs);
            cands_sort(cs, r->sort_desc, fd->fields[sf].type != FT_NUMERIC);
        } else if (scored) {
            for (size_t i = 0; i < cs->n; i++)
                cs->c[i].has = 1, cs->c[i].num = cs->c[i].score;
            cands_sort(cs, 1, 0);
        }
    }
    ft_set_free(&set);
    return st;
}

ks_status ft_search(ks_ctx *ctx, const ft_search_req *r, ft_result *out)
{
    memset(out, 0, sizeof(*out));
    idx_def *d = ft_find(ctx->db, r->index.p, r->index.n);
    if (!d) return idx_fail(ctx, "-%s: no such index", idx_printable(r->index.p, r->index.n, 0));
    int sf = -1;
    if (r->has_sortby) {
        sf = ft_field_by_alias(d->ft, r->sortby.p, r->sortby.n);
        if (sf < 0)
            return idx_fail(ctx, "-Property `%s` not loaded nor in schema",
                            idx_printable(r->sortby.p, r->sortby.n, 0));
    }
    char *err = NULL;
    ft_qnode *q = ft_parse(d->ft, r->query.p, r->query.n, r->params, r->nparams, r->verbatim, &err);
    if (!q) {
        free(ctx->err);
        ctx->err = err;
        return KS_ERR_MSG;
    }
    ft_view v;
    ks_status st = ft_view_open(ctx, d, &v);
    cands cs = {0};
    long long total = 0;
    if (st == KS_OK) st = run(&v, q, r, sf, &cs, &total);
    if (st == KS_OK) {
        out->total = total;
        /* plan 1 kept only the page; the others kept everything or the head */
        int paged = !r->has_sortby && !ft_scored(q) && !r->has_inkeys && streamable(q);
        size_t from = paged ? 0 : (size_t)r->offset,
               to = paged ? cs.n : (size_t)(r->offset + r->num);
        if (to > cs.n) to = cs.n;
        if (from > to) from = to;
        st = read_page(&v, r, &cs, from, to, out);
    }
    ft_view_close(&v);
    cands_free(&cs);
    ft_qnode_free(q);
    if (st != KS_OK) ft_result_free(out);
    return st;
}

void ft_result_free(ft_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->docs[i].key);
        free(r->docs[i].f);
    }
    free(r->docs);
    idx_buf_free(&r->bytes);
    memset(r, 0, sizeof(*r));
}
