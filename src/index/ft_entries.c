/*
 * ft_entries.c -- the entries an FT index keeps for one hash (Invariant F1
 * in ft_def.h), and the three places that write or verify them: the write
 * hook, the build and IDX.CHECK.
 *
 * Entry keys, after 'x' 'E' <id> (src/index/FORMAT.md, "FT indexes"):
 *   'D' <key>                               -> <expiry> <maxfreq u32>
 *   'F' <field no u8> <TAG or NUMERIC enc> <key> -> <expiry>
 *   'W' <term, TAG enc> <key>              -> <expiry> <mask u64> <freq u32>
 *                                             <maxfreq u32> <npos u32> <pos u32>...
 *   'X' <key>                               -> <expiry>   (a NUMERIC field is not a number)
 * TAG values and terms use the prefix-free TAG encoding of idx_key.h, so a
 * value's entries are one contiguous range ordered by hash key, and a
 * prefix of a value is a contiguous range too.
 *
 * The hook computes the old and the new entry set of the hash (both sorted)
 * and merges them: keys only in the old set are deleted, keys only in the
 * new set or with another value are put. An update that changes one field
 * rewrites only that field's entries (and the postings whose doc maxfreq
 * changed). The old expiry is read once (ks_expire_get) since entry values
 * carry it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft_def.h"

void ft_sub_prefix(const idx_def *d, char sub, idx_buf *b)
{
    b->len = 0;
    idx_key_entry_prefix(b, d->id);
    idx_buf_byte(b, (unsigned char)sub);
}

void ft_entset_free(ft_entset *s)
{
    free(s->e);
    idx_buf_free(&s->bytes);
    memset(s, 0, sizeof(*s));
}

/* Starts an entry: its key begins with the sub-structure prefix. Returns
 * the entry; its key grows until entry_end_key. */
static ft_ent *entry_begin(ft_entset *s, const idx_def *d, char sub)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 32;
        s->e = realloc(s->e, s->cap * sizeof(*s->e));
        if (!s->e) abort();
    }
    ft_ent *e = &s->e[s->n++];
    e->koff = s->bytes.len;
    idx_key_entry_prefix(&s->bytes, d->id);
    idx_buf_byte(&s->bytes, (unsigned char)sub);
    return e;
}

static void entry_key_done(ft_entset *s, ft_ent *e, const char *key, size_t klen, int64_t exp)
{
    char t[8];
    idx_buf_append(&s->bytes, key, klen);
    e->klen = s->bytes.len - e->koff;
    e->voff = s->bytes.len;
    idx_put_u64(t, (uint64_t)exp);
    idx_buf_append(&s->bytes, t, 8);
    e->vlen = 8;
}

static void value_u32(ft_entset *s, ft_ent *e, uint32_t v)
{
    char t[4];
    idx_put_u32(t, v);
    idx_buf_append(&s->bytes, t, 4);
    e->vlen += 4;
}

static const ks_field *field_of(const ks_field *f, size_t n, const ft_field *fd)
{
    for (size_t i = 0; i < n; i++)
        if (f[i].fl == fd->nlen && memcmp(f[i].f, fd->name, fd->nlen) == 0) return &f[i];
    return NULL;
}

/* One token occurrence of the hash's text, before grouping by term. */
typedef struct occ {
    size_t off, len; /* term bytes in the text buffer */
    uint32_t pos;    /* (text field no << 24) | position */
    uint32_t inc;    /* frequency it adds */
} occ;

typedef struct text_acc {
    occ *o;
    size_t n, cap;
    idx_buf bytes, stem;
    const ft_field *fd;
    int nostem;
} text_acc;

static void add_occ(text_acc *t, const char *tok, size_t n, uint32_t pos, uint32_t inc)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->o = realloc(t->o, t->cap * sizeof(*t->o));
        if (!t->o) abort();
    }
    t->o[t->n++] = (occ){t->bytes.len, n, pos, inc};
    idx_buf_append(&t->bytes, tok, n);
}

static void on_token(void *arg, const char *tok, size_t n, uint32_t pos)
{
    text_acc *t = arg;
    uint32_t p = ((uint32_t)t->fd->text_no << 24) | (pos & 0xFFFFFF);
    uint32_t inc = t->fd->weight >= 1 ? (uint32_t)t->fd->weight : 1;
    add_occ(t, tok, n, p, inc);
    if (!t->nostem && ft_stem(tok, n, &t->stem)) {
        /* RediSearch indexes the stem as "+stem" at the same position,
         * with a fifth of the weight (at least 1). */
        idx_buf plus = {0};
        idx_buf_byte(&plus, '+');
        idx_buf_append(&plus, t->stem.data, t->stem.len);
        uint32_t sinc = t->fd->weight * 0.2 >= 1 ? (uint32_t)(t->fd->weight * 0.2) : 1;
        add_occ(t, plus.data, plus.len, p, sinc);
        idx_buf_free(&plus);
    }
}

static const char *occ_base;
static int occ_cmp(const void *a, const void *b)
{
    const occ *x = a, *y = b;
    int c = idx_key_cmp(occ_base + x->off, x->len, occ_base + y->off, y->len);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The postings of the hash's TEXT fields; returns the doc's maxfreq. */
static uint32_t text_entries(const idx_def *d, const char *key, size_t klen, const ks_field *f,
                             size_t n, int64_t exp, ft_entset *s)
{
    const ft_def *fd = d->ft;
    text_acc t = {0};
    for (size_t i = 0; i < fd->nfields; i++) {
        const ft_field *fl = &fd->fields[i];
        const ks_field *v;
        if (fl->type != FT_TEXT || (fl->opts & FT_OPT_NOINDEX) || !(v = field_of(f, n, fl)))
            continue;
        t.fd = fl;
        t.nostem = (fl->opts & FT_OPT_NOSTEM) != 0;
        ft_tokenize(fd, v->v, v->vl, on_token, &t);
    }
    occ_base = t.bytes.data;
    if (t.n) qsort(t.o, t.n, sizeof(*t.o), occ_cmp);
    /* Group by term: mask, freq, positions. */
    uint32_t maxfreq = 0;
    size_t first = s->n;
    for (size_t i = 0, j; i < t.n; i = j) {
        uint64_t mask = 0;
        uint32_t freq = 0;
        for (j = i; j < t.n && t.o[j].len == t.o[i].len &&
                    memcmp(t.bytes.data + t.o[j].off, t.bytes.data + t.o[i].off, t.o[i].len) == 0;
             j++) {
            mask |= 1ULL << (t.o[j].pos >> 24);
            freq += t.o[j].inc;
        }
        if (fd->flags & FT_IDX_NOFREQS) freq = 1;
        if (freq > maxfreq) maxfreq = freq;
        ft_ent *e = entry_begin(s, d, FT_SUB_TERM);
        idx_key_put_tag(&s->bytes, t.bytes.data + t.o[i].off, t.o[i].len, 0);
        entry_key_done(s, e, key, klen, exp);
        char t8[8];
        idx_put_u64(t8, mask);
        idx_buf_append(&s->bytes, t8, 8);
        e->vlen += 8;
        value_u32(s, e, freq);
        value_u32(s, e, 0); /* maxfreq, filled in below */
        uint32_t npos = (fd->flags & FT_IDX_NOOFFSETS) ? 0 : (uint32_t)(j - i);
        value_u32(s, e, npos);
        for (size_t k = i; k < i + npos; k++)
            value_u32(s, e, t.o[k].pos);
    }
    for (size_t i = first; i < s->n; i++)
        idx_put_u32(s->bytes.data + s->e[i].voff + 20, maxfreq);
    free(t.o);
    idx_buf_free(&t.bytes);
    idx_buf_free(&t.stem);
    return maxfreq;
}

typedef struct tag_acc {
    ft_entset *s;
    const idx_def *d;
    int fno;
    const char *key;
    size_t klen;
    int64_t exp;
} tag_acc;

static void on_tag(void *arg, const char *t, size_t n)
{
    tag_acc *a = arg;
    ft_ent *e = entry_begin(a->s, a->d, FT_SUB_FIELD);
    idx_buf_byte(&a->s->bytes, (unsigned char)a->fno);
    idx_key_put_tag(&a->s->bytes, t, n, 0);
    entry_key_done(a->s, e, a->key, a->klen, a->exp);
}

/* The one value of a TAG field for the composite; count > 1 when several. */
typedef struct one_tag {
    int count;
    idx_buf v;
} one_tag;

static void on_one_tag(void *arg, const char *t, size_t n)
{
    one_tag *o = arg;
    if (o->count && o->v.len == n && memcmp(o->v.data, t, n) == 0) return;
    o->count++;
    o->v.len = 0;
    idx_buf_append(&o->v, t, n);
}

/* The composite entry of the hash, or its 'Y' entry. */
static void comp_entry(const idx_def *d, const char *key, size_t klen, const ks_field *f, size_t n,
                       const double *nums, int64_t exp, ft_entset *s)
{
    const ft_def *fd = d->ft;
    idx_buf k = {0};
    one_tag o = {0};
    int ok = 1;
    for (size_t c = 0; c < fd->ncomp && ok; c++) {
        const ft_field *fl = &fd->fields[fd->comp[c]];
        const ks_field *v = field_of(f, n, fl);
        if (!v) {
            ok = 0;
        } else if (fl->type == FT_NUMERIC) {
            idx_key_put_num(&k, nums[fd->comp[c]], 0);
        } else {
            o.count = 0;
            ft_split_tags(fl, v->v, v->vl, on_one_tag, &o);
            ok = o.count == 1;
            if (ok) idx_key_put_tag(&k, o.v.data, o.v.len, 0);
        }
    }
    ft_ent *e = entry_begin(s, d, ok ? FT_SUB_COMP : FT_SUB_COMP_OUT);
    if (ok) idx_buf_append(&s->bytes, k.data, k.len);
    entry_key_done(s, e, key, klen, exp);
    idx_buf_free(&k);
    idx_buf_free(&o.v);
}

static const char *ent_base;
static int ent_cmp(const void *a, const void *b)
{
    const ft_ent *x = a, *y = b;
    return idx_key_cmp(ent_base + x->koff, x->klen, ent_base + y->koff, y->klen);
}

void ft_doc_entries(const idx_def *d, const char *key, size_t klen, const ks_field *f, size_t n,
                    int64_t exp, ft_entset *s)
{
    const ft_def *fd = d->ft;
    s->n = 0;
    s->bytes.len = 0;
    double nums[FT_MAX_FIELDS];
    for (size_t i = 0; i < fd->nfields; i++) {
        const ft_field *fl = &fd->fields[i];
        const ks_field *v;
        if (fl->type != FT_NUMERIC || (fl->opts & FT_OPT_NOINDEX) || !(v = field_of(f, n, fl)))
            continue;
        if (idx_parse_num(v->v, v->vl, &nums[i]) != 0) {
            /* RediSearch does not index a document whose NUMERIC field is
             * not a number; the failure entry lets FT.INFO count it. */
            ft_ent *e = entry_begin(s, d, FT_SUB_FAILURE);
            entry_key_done(s, e, key, klen, exp);
            return;
        }
    }
    ft_ent *doc = entry_begin(s, d, FT_SUB_DOC);
    entry_key_done(s, doc, key, klen, exp);
    value_u32(s, doc, 0);
    size_t doc_i = s->n - 1;
    for (size_t i = 0; i < fd->nfields; i++) {
        const ft_field *fl = &fd->fields[i];
        const ks_field *v;
        if (fl->type == FT_TEXT || (fl->opts & FT_OPT_NOINDEX) || !(v = field_of(f, n, fl)))
            continue;
        if (fl->type == FT_TAG) {
            tag_acc a = {s, d, (int)i, key, klen, exp};
            ft_split_tags(fl, v->v, v->vl, on_tag, &a);
        } else {
            ft_ent *e = entry_begin(s, d, FT_SUB_FIELD);
            idx_buf_byte(&s->bytes, (unsigned char)i);
            idx_key_put_num(&s->bytes, nums[i], 0);
            entry_key_done(s, e, key, klen, exp);
        }
    }
    if (fd->ncomp) comp_entry(d, key, klen, f, n, nums, exp, s);
    uint32_t maxfreq = fd->ntext ? text_entries(d, key, klen, f, n, exp, s) : 0;
    idx_put_u32(s->bytes.data + s->e[doc_i].voff + 8, maxfreq);
    ent_base = s->bytes.data;
    qsort(s->e, s->n, sizeof(*s->e), ent_cmp);
    size_t w = 0; /* duplicate tags of one field give equal keys */
    for (size_t i = 0; i < s->n; i++)
        if (!w || ent_cmp(&s->e[w - 1], &s->e[i]) != 0) s->e[w++] = s->e[i];
    s->n = w;
}

int ft_posting_parse(const char *v, size_t vl, ft_posting *p)
{
    if (vl < 28) return -1;
    p->mask = idx_get_u64(v + 8);
    p->freq = idx_get_u32(v + 16);
    p->maxfreq = idx_get_u32(v + 20);
    p->npos = idx_get_u32(v + 24);
    if ((vl - 28) / 4 < p->npos) return -1;
    p->pos = v + 28;
    return 0;
}

/* ---- The write hook -------------------------------------------------------- */

static ft_entset hook_old, hook_new;

void ft_entries_free(void)
{
    ft_entset_free(&hook_old);
    ft_entset_free(&hook_new);
}

static int ent_eq_key(const ft_entset *a, const ft_ent *x, const ft_entset *b, const ft_ent *y)
{
    return idx_key_cmp(a->bytes.data + x->koff, x->klen, b->bytes.data + y->koff, y->klen);
}

/* Writes new - old into ctx->batch. force: put every new entry (the old
 * values are not known). Returns whether anything changed. */
static int apply_diff(ks_ctx *ctx, const ft_entset *o, const ft_entset *nw, int force)
{
    size_t i = 0, j = 0;
    int changed = 0;
    while (i < o->n || j < nw->n) {
        int c = i == o->n ? 1 : j == nw->n ? -1 : ent_eq_key(o, &o->e[i], nw, &nw->e[j]);
        if (c < 0) {
            eng_batch_delete(ctx->batch, o->bytes.data + o->e[i].koff, o->e[i].klen);
            i++, changed = 1;
            continue;
        }
        const ft_ent *e = &nw->e[j];
        int same = c == 0 && !force && o->e[i].vlen == e->vlen &&
                   memcmp(o->bytes.data + o->e[i].voff, nw->bytes.data + e->voff, e->vlen) == 0;
        if (!same) {
            eng_batch_put(ctx->batch, nw->bytes.data + e->koff, e->klen, nw->bytes.data + e->voff,
                          e->vlen);
            changed = 1;
        }
        if (c == 0) i++;
        j++;
    }
    return changed;
}

ks_status ft_hash_hook(ks_ctx *ctx, const char *key, size_t klen, const ks_field *old_f,
                       size_t old_n, int had_old, const ks_field *new_f, size_t new_n, int has_new,
                       int64_t new_expire_ms)
{
    int64_t old_exp = -1; /* -1 not read yet, -2 unknown */
    for (size_t i = 0; i < idx_g.ndefs; i++) {
        idx_def *d = idx_g.defs[i];
        if (!d->ft || d->db != ctx->db || !idx_def_active_for(d, key, klen)) continue;
        hook_old.n = hook_new.n = 0;
        if (had_old && old_exp == -1 && ks_expire_get(ctx, key, klen, &old_exp) != KS_OK) {
            ks_ctx_reset(ctx);
            old_exp = -2;
        }
        if (had_old)
            ft_doc_entries(d, key, klen, old_f, old_n, old_exp < 0 ? 0 : old_exp, &hook_old);
        if (has_new) ft_doc_entries(d, key, klen, new_f, new_n, new_expire_ms, &hook_new);
        if (apply_diff(ctx, &hook_old, &hook_new, old_exp == -2)) d->gen++;
    }
    return KS_OK;
}

int ft_build_one(ks_ctx *ctx, idx_def *d, const char *key, size_t klen, const ks_field *f, size_t n)
{
    if (!ft_prefix_match(d->ft, key, klen)) return 0;
    int64_t exp = 0;
    ks_status st = ks_expire_get(ctx, key, klen, &exp);
    if (st == KS_NOTFOUND) return 0;
    if (st != KS_OK) return 1;
    ft_doc_entries(d, key, klen, f, n, exp, &hook_new);
    for (size_t i = 0; i < hook_new.n; i++) {
        const ft_ent *e = &hook_new.e[i];
        eng_batch_put(ctx->batch, hook_new.bytes.data + e->koff, e->klen,
                      hook_new.bytes.data + e->voff, e->vlen);
    }
    d->gen++;
    return 0;
}

/* ---- IDX.CHECK for FT indexes ------------------------------------------------ */

typedef struct ft_checker {
    ks_ctx *ctx;
    const idx_def *d;
    const eng_snapshot *snap;
    eng_batch *b;
    void (*fn)(void *arg, const char *line);
    void *arg;
    long long problems;
    ft_entset want; /* every expected entry key of every hash (keys only) */
    ft_entset one;
    int failed;
} ft_checker;

static void ft_report(ft_checker *c, const char *what, const char *key, size_t klen)
{
    char line[512];
    snprintf(line, sizeof(line), "%s %s %s", what, idx_printable(c->d->name, c->d->nlen, 0),
             idx_printable(key, klen, 1));
    c->fn(c->arg, line);
    c->problems++;
}

static int check_hash(void *arg, const char *key, size_t klen, const ks_field *f, size_t n)
{
    ft_checker *c = arg;
    if (!ft_prefix_match(c->d->ft, key, klen)) return 0;
    int64_t exp = 0;
    if (ks_expire_get(c->ctx, key, klen, &exp) != KS_OK) exp = -1;
    ft_doc_entries(c->d, key, klen, f, n, exp, &c->one);
    int missing = 0, stale = 0;
    for (size_t i = 0; i < c->one.n; i++) {
        const ft_ent *e = &c->one.e[i];
        const char *k = c->one.bytes.data + e->koff;
        char *v = NULL;
        size_t vl = 0;
        eng_status es = c->b ? eng_get_batch(idx_g.eng, c->snap, c->b, k, e->klen, &v, &vl)
                             : eng_get(idx_g.eng, c->snap, k, e->klen, &v, &vl);
        if (es == ENG_NOTFOUND) {
            missing = 1;
        } else if (es != ENG_OK) {
            c->failed = 1;
            return 1;
        } else if (vl != e->vlen || memcmp(v, c->one.bytes.data + e->voff, vl) != 0) {
            stale = 1;
        }
        eng_free(v);
        ft_ent *w = entry_begin(&c->want, c->d, 0);
        c->want.bytes.len = w->koff;
        idx_buf_append(&c->want.bytes, k, e->klen);
        w->klen = e->klen;
        w->vlen = 0;
    }
    if (missing) ft_report(c, "missing", key, klen);
    if (stale) ft_report(c, "stale", key, klen);
    return 0;
}

/* The hash key at the end of an FT entry key; -1 when malformed. */
static int entry_hash_key(const idx_def *d, const char *k, size_t kl, const char **hk, size_t *hkl)
{
    size_t off = IDX_ENTRY_PREFIX_LEN + 1;
    if (kl < off) return -1;
    char sub = k[off - 1];
    if (sub == FT_SUB_FIELD) {
        if (kl < off + 1) return -1;
        unsigned fno = (unsigned char)k[off++];
        if (fno >= d->ft->nfields) return -1;
        size_t n = idx_key_skip_field(k + off, kl - off, d->ft->fields[fno].type == FT_NUMERIC, 0);
        if (!n) return -1;
        off += n;
    } else if (sub == FT_SUB_TERM) {
        size_t n = idx_key_skip_field(k + off, kl - off, 0, 0);
        if (!n) return -1;
        off += n;
    } else if (sub == FT_SUB_COMP) {
        for (size_t c = 0; c < d->ft->ncomp; c++) {
            int num = d->ft->fields[d->ft->comp[c]].type == FT_NUMERIC;
            size_t n = idx_key_skip_field(k + off, kl - off, num, 0);
            if (!n) return -1;
            off += n;
        }
    } else if (sub != FT_SUB_DOC && sub != FT_SUB_FAILURE && sub != FT_SUB_COMP_OUT) {
        return -1;
    }
    *hk = k + off;
    *hkl = kl - off;
    return 0;
}

static int check_entry(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    ft_checker *c = arg;
    (void)v, (void)vl;
    size_t lo = 0, hi = c->want.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = idx_key_cmp(c->want.bytes.data + c->want.e[mid].koff, c->want.e[mid].klen, k, kl);
        if (cmp == 0) return 0;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const char *hk;
    size_t hkl;
    if (entry_hash_key(c->d, k, kl, &hk, &hkl) != 0)
        ft_report(c, "malformed", k, kl);
    else
        ft_report(c, "extra", hk, hkl);
    return 0;
}

long long ft_check(ks_ctx *ctx, const idx_def *d, const eng_snapshot *snap, eng_batch *b,
                   void (*fn)(void *arg, const char *line), void *arg)
{
    ft_checker c = {.ctx = ctx, .d = d, .snap = snap, .b = b, .fn = fn, .arg = arg};
    char *last = NULL;
    size_t last_len = 0;
    free(ctx->err);
    ctx->err = NULL;
    ks_scan_hashes(ctx, b ? NULL : snap, d->prefix, d->plen, NULL, 0, UINT64_MAX, check_hash, &c,
                   &last, &last_len);
    free(last);
    if (ctx->err) c.failed = 1;
    if (!c.failed) {
        ent_base = c.want.bytes.data;
        if (c.want.n) qsort(c.want.e, c.want.n, sizeof(*c.want.e), ent_cmp);
        ft_view v = {.ctx = ctx, .d = d, .snap = snap, .b = b};
        idx_buf lo = {0}, hi = {0};
        idx_key_entry_prefix(&lo, d->id);
        idx_buf_append(&hi, lo.data, lo.len);
        idx_key_prefix_successor(&hi);
        if (ft_walk(&v, lo.data, lo.len, hi.data, hi.len, 0, check_entry, &c) != KS_OK)
            c.failed = 1;
        idx_buf_free(&lo);
        idx_buf_free(&hi);
    }
    ft_entset_free(&c.want);
    ft_entset_free(&c.one);
    return c.failed ? -1 : c.problems;
}
