/*
 * ft_def.c -- FT index definitions: the catalog record, FT.CREATE,
 * FT.ALTER, FT.DROPINDEX, FT._LIST, aliases and FT.INFO.
 *
 * Stored format (src/index/FORMAT.md, "FT indexes"; integers big-endian).
 * The record shares the IDX catalog key 'x' 'C' <db> <name>, so FT and IDX
 * names are one namespace per db; its first byte (version 2) tells it apart:
 *   <2> <id u32> <state: 0 ready, 1 building> <has cursor u8> <cursor blob>
 *   <scanned u64> <flags u32> <score: f64 bits u64>
 *   <prefix count u32> <prefix blob>...
 *   <custom stop words u8> <stop word count u32> <blob>...
 *   <field count u32> per field: <type u8> <opts u8> <sep u8>
 *                                <weight: f64 bits u64> <name blob> <alias blob>
 * where a blob is <length u32> <bytes>. Aliases: 'x' 'A' <db> <alias> ->
 * <index name>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/ft_def.h"

#define FT_CREATE_BUDGET_US 10000 /* as IDX.CREATE: small data is built in the command */
#define FT_TAG_ALIAS 'A'

static char *dup_bytes(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) abort();
    if (n) memcpy(s, p, n);
    s[n] = 0;
    return s;
}

void ft_def_free(ft_def *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->nprefixes; i++)
        free(f->prefixes[i]);
    free(f->prefixes);
    free(f->plens);
    for (size_t i = 0; i < f->nstop; i++)
        free(f->stop[i]);
    free(f->stop);
    free(f->stoplens);
    for (size_t i = 0; i < f->nfields; i++) {
        free(f->fields[i].name);
        free(f->fields[i].alias);
    }
    free(f);
}

int ft_prefix_match(const ft_def *f, const char *key, size_t klen)
{
    if (!f->nprefixes) return 1;
    for (size_t i = 0; i < f->nprefixes; i++)
        if (klen >= f->plens[i] && memcmp(key, f->prefixes[i], f->plens[i]) == 0) return 1;
    return 0;
}

int idx_def_prefix_match(const idx_def *d, const char *key, size_t klen)
{
    if (klen < d->plen || memcmp(key, d->prefix, d->plen) != 0) return 0;
    return !d->ft || ft_prefix_match(d->ft, key, klen);
}

int ft_field_by_alias(const ft_def *f, const char *name, size_t nlen)
{
    for (size_t i = 0; i < f->nfields; i++)
        if (f->fields[i].alen == nlen && memcmp(f->fields[i].alias, name, nlen) == 0) return (int)i;
    return -1;
}

/* ---- Record encoding ----------------------------------------------------- */

static void put_u32(idx_buf *b, uint32_t v)
{
    char t[4];
    idx_put_u32(t, v);
    idx_buf_append(b, t, 4);
}

static void put_u64(idx_buf *b, uint64_t v)
{
    char t[8];
    idx_put_u64(t, v);
    idx_buf_append(b, t, 8);
}

static void put_dbl(idx_buf *b, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    put_u64(b, u);
}

static void put_blob(idx_buf *b, const char *p, size_t n)
{
    put_u32(b, (uint32_t)n);
    idx_buf_append(b, p, n);
}

void ft_catalog_value(const idx_def *d, idx_buf *b)
{
    const ft_def *f = d->ft;
    b->len = 0;
    idx_buf_byte(b, FT_CATALOG_VERSION);
    put_u32(b, d->id);
    idx_buf_byte(b, d->building ? 1 : 0);
    idx_buf_byte(b, d->building && d->has_cursor ? 1 : 0);
    put_blob(b, d->cursor ? d->cursor : "", d->building && d->has_cursor ? d->clen : 0);
    put_u64(b, d->building ? d->scanned : 0);
    put_u32(b, f->flags);
    put_dbl(b, f->score);
    put_u32(b, (uint32_t)f->nprefixes);
    for (size_t i = 0; i < f->nprefixes; i++)
        put_blob(b, f->prefixes[i], f->plens[i]);
    idx_buf_byte(b, f->custom_stop ? 1 : 0);
    put_u32(b, (uint32_t)f->nstop);
    for (size_t i = 0; i < f->nstop; i++)
        put_blob(b, f->stop[i], f->stoplens[i]);
    put_u32(b, (uint32_t)f->nfields);
    for (size_t i = 0; i < f->nfields; i++) {
        const ft_field *fd = &f->fields[i];
        idx_buf_byte(b, (unsigned char)fd->type);
        idx_buf_byte(b, (unsigned char)fd->opts);
        idx_buf_byte(b, (unsigned char)fd->sep);
        put_dbl(b, fd->weight);
        put_blob(b, fd->name, fd->nlen);
        put_blob(b, fd->alias, fd->alen);
    }
}

typedef struct rd {
    const char *p, *end;
    int bad;
} rd;

static unsigned rd_u8(rd *r)
{
    if (r->bad || r->p >= r->end) return r->bad = 1, 0;
    return (unsigned char)*r->p++;
}

/* A 0/1 byte: anything else is damage (the record has one encoding). */
static int rd_bool(rd *r)
{
    unsigned b = rd_u8(r);
    if (b > 1) r->bad = 1;
    return (int)b;
}

static uint64_t rd_u(rd *r, int w)
{
    if (r->bad || r->end - r->p < w) return r->bad = 1, 0;
    uint64_t v = w == 4 ? idx_get_u32(r->p) : idx_get_u64(r->p);
    r->p += w;
    return v;
}

static double rd_dbl(rd *r)
{
    uint64_t u = rd_u(r, 8);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static char *rd_blob(rd *r, size_t *n)
{
    uint64_t len = rd_u(r, 4);
    if (r->bad || (uint64_t)(r->end - r->p) < len) return r->bad = 1, dup_bytes("", 0);
    char *s = dup_bytes(r->p, len);
    r->p += len;
    *n = len;
    return s;
}

/* Assigns text field numbers (bits of the field mask) in schema order,
 * and the composite's fields. */
static void number_text_fields(ft_def *f)
{
    f->ntext = f->ncomp = 0;
    for (size_t i = 0; i < f->nfields; i++) {
        const ft_field *fd = &f->fields[i];
        f->fields[i].text_no = fd->type == FT_TEXT ? (int)f->ntext++ : -1;
        if (fd->type != FT_TEXT && !(fd->opts & FT_OPT_NOINDEX) && f->ncomp < FT_MAX_COMP)
            f->comp[f->ncomp++] = (int)i;
    }
    if (f->ncomp < 2) f->ncomp = 0;
}

/* The longest common prefix of the FT prefixes: what the build scans and
 * the cheap "wants" check compares (ft_prefix_match decides exactly). */
static void common_prefix(idx_def *d)
{
    const ft_def *f = d->ft;
    size_t n = f->nprefixes ? f->plens[0] : 0;
    for (size_t i = 1; i < f->nprefixes; i++) {
        size_t j = 0;
        while (j < n && j < f->plens[i] && f->prefixes[i][j] == f->prefixes[0][j])
            j++;
        n = j;
    }
    free(d->prefix);
    d->prefix = dup_bytes(f->nprefixes ? f->prefixes[0] : "", n);
    d->plen = n;
}

idx_def *ft_catalog_parse(const char *k, size_t kl, const char *v, size_t vl)
{
    if (kl < 3 || (unsigned char)k[2] >= KS_DATABASES) return NULL;
    idx_def *d = calloc(1, sizeof(*d));
    ft_def *f = calloc(1, sizeof(*f));
    if (!d || !f) abort();
    d->ft = f;
    d->db = (unsigned char)k[2];
    d->name = dup_bytes(k + 3, kl - 3);
    d->nlen = kl - 3;
    rd r = {v, v + vl, 0};
    if (rd_u8(&r) != FT_CATALOG_VERSION) goto bad;
    d->id = (uint32_t)rd_u(&r, 4);
    d->building = rd_bool(&r);
    d->has_cursor = rd_bool(&r);
    d->cursor = rd_blob(&r, &d->clen);
    d->scanned = rd_u(&r, 8);
    /* what ft_catalog_value writes for a ready index, or before a cursor */
    if ((!d->building && (d->has_cursor || d->scanned)) || (!d->has_cursor && d->clen)) r.bad = 1;
    f->flags = (unsigned)rd_u(&r, 4);
    f->score = rd_dbl(&r);
    uint64_t np = rd_u(&r, 4);
    if (np > 1024) goto bad;
    f->prefixes = calloc(np + 1, sizeof(char *));
    f->plens = calloc(np + 1, sizeof(size_t));
    for (; f->nprefixes < np && !r.bad; f->nprefixes++)
        f->prefixes[f->nprefixes] = rd_blob(&r, &f->plens[f->nprefixes]);
    f->custom_stop = rd_bool(&r);
    uint64_t ns = rd_u(&r, 4);
    if (ns > 100000) goto bad;
    f->stop = calloc(ns + 1, sizeof(char *));
    f->stoplens = calloc(ns + 1, sizeof(size_t));
    for (; f->nstop < ns && !r.bad; f->nstop++)
        f->stop[f->nstop] = rd_blob(&r, &f->stoplens[f->nstop]);
    uint64_t nf = rd_u(&r, 4);
    if (nf > FT_MAX_FIELDS) goto bad;
    for (; f->nfields < nf && !r.bad; f->nfields++) {
        ft_field *fd = &f->fields[f->nfields];
        fd->type = (int)rd_u8(&r);
        fd->opts = rd_u8(&r);
        fd->sep = (char)rd_u8(&r);
        fd->weight = rd_dbl(&r);
        fd->name = rd_blob(&r, &fd->nlen);
        fd->alias = rd_blob(&r, &fd->alen);
        if (fd->type > FT_NUMERIC) r.bad = 1;
    }
    if (r.bad || r.p != r.end) goto bad; /* every byte accounted for */
    number_text_fields(f);
    common_prefix(d);
    char why[256];
    if (idx_def_check(d, why, sizeof(why)) != 0) goto bad; /* name and db too */
    return d;
bad:
    idx_def_free(d);
    return NULL;
}

int ft_def_check(const idx_def *d, char *why, size_t cap)
{
    const ft_def *f = d->ft;
    if (f->flags & ~0x1Fu) return snprintf(why, cap, "unknown FT index options"), -1;
    for (size_t i = 0; i < f->nprefixes; i++)
        if (f->plens[i] > IDX_MAX_PREFIX)
            return snprintf(why, cap, "prefix must be at most %d bytes", IDX_MAX_PREFIX), -1;
    if (f->nfields < 1 || f->nfields > FT_MAX_FIELDS)
        return snprintf(why, cap, "an FT index has 1 to %d fields", FT_MAX_FIELDS), -1;
    for (size_t i = 0; i < f->nfields; i++) {
        const ft_field *fd = &f->fields[i];
        if (fd->type > FT_NUMERIC || (fd->opts & ~0x3Fu))
            return snprintf(why, cap, "bad type or options of field %zu", i), -1;
        if (fd->nlen < 1 || fd->nlen > IDX_MAX_FIELD_NAME || fd->alen < 1 ||
            fd->alen > IDX_MAX_FIELD_NAME)
            return snprintf(why, cap, "field names must be 1 to %d bytes", IDX_MAX_FIELD_NAME), -1;
        for (size_t j = 0; j < i; j++)
            if (f->fields[j].alen == fd->alen &&
                memcmp(f->fields[j].alias, fd->alias, fd->alen) == 0)
                return snprintf(why, cap, "Duplicate field in schema - %s",
                                idx_printable(fd->alias, fd->alen, 2)),
                       -1;
    }
    if (d->building && !d->has_cursor && d->clen)
        return snprintf(why, cap, "a build cursor without a position"), -1;
    return 0;
}

/* ---- Lookup and aliases ---------------------------------------------------- */

typedef struct ft_alias_ent {
    int db;
    char *alias, *index;
    size_t alen, ilen;
} ft_alias_ent;

static ft_alias_ent *aliases;
static size_t naliases;
static eng_db *aliases_of; /* the engine the table was loaded from */

static void alias_key(int db, const char *a, size_t n, idx_buf *b)
{
    b->len = 0;
    idx_buf_byte(b, IDX_NS_BYTE);
    idx_buf_byte(b, FT_TAG_ALIAS);
    idx_buf_byte(b, (unsigned char)db);
    idx_buf_append(b, a, n);
}

static void aliases_clear(void)
{
    for (size_t i = 0; i < naliases; i++) {
        free(aliases[i].alias);
        free(aliases[i].index);
    }
    free(aliases);
    aliases = NULL;
    naliases = 0;
}

static void alias_add_mem(int db, const char *a, size_t an, const char *ix, size_t in)
{
    ft_alias_ent *p = realloc(aliases, (naliases + 1) * sizeof(*p));
    if (!p) abort();
    aliases = p;
    aliases[naliases++] = (ft_alias_ent){db, dup_bytes(a, an), dup_bytes(ix, in), an, in};
}

/* Loads the alias table once per engine (the catalog has no hook for it). */
static void aliases_load(void)
{
    if (aliases_of == idx_g.eng) return;
    aliases_clear();
    aliases_of = idx_g.eng;
    static const char start[2] = {IDX_NS_BYTE, FT_TAG_ALIAS};
    eng_iter *it = eng_iter_new(idx_g.eng, NULL, NULL);
    if (!it) return;
    for (eng_iter_seek(it, start, 2); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        if (kl < 3 || memcmp(k, start, 2) != 0) break;
        alias_add_mem((unsigned char)k[2], k + 3, kl - 3, v, vl);
    }
    eng_iter_free(it);
}

void ft_aliases_free(void)
{
    aliases_clear();
    aliases_of = NULL;
}

void ft_shutdown(void)
{
    ft_aliases_free();
    ft_entries_free();
    ft_text_free();
}

static ft_alias_ent *alias_find(int db, const char *a, size_t n)
{
    aliases_load();
    for (size_t i = 0; i < naliases; i++)
        if (aliases[i].db == db && aliases[i].alen == n && memcmp(aliases[i].alias, a, n) == 0)
            return &aliases[i];
    return NULL;
}

idx_def *ft_find(int db, const char *name, size_t nlen)
{
    idx_def *d = idx_catalog_find(db, name, nlen);
    if (d && d->ft) return d;
    if (d) return NULL;
    ft_alias_ent *a = alias_find(db, name, nlen);
    if (!a) return NULL;
    d = idx_catalog_find(db, a->index, a->ilen);
    return d && d->ft ? d : NULL;
}

static void alias_remove(ks_ctx *ctx, ft_alias_ent *a)
{
    idx_buf k = {0};
    alias_key(a->db, a->alias, a->alen, &k);
    eng_batch_delete(ctx->batch, k.data, k.len);
    idx_buf_free(&k);
    free(a->alias);
    free(a->index);
    *a = aliases[--naliases];
}

ks_status ft_alias(ks_ctx *ctx, int op, idx_str alias, idx_str index)
{
    ft_alias_ent *a = alias_find(ctx->db, alias.p, alias.n);
    if (op == FT_ALIAS_DEL) {
        if (!a) return idx_fail(ctx, "-Alias does not exist");
        alias_remove(ctx, a);
        return KS_OK;
    }
    idx_def *d = ft_find(ctx->db, index.p, index.n);
    if (!d) return idx_fail(ctx, "-Unknown index name (or name is an alias itself)");
    if (a && op == FT_ALIAS_ADD) return idx_fail(ctx, "-Alias already exists");
    if (idx_catalog_find(ctx->db, alias.p, alias.n)) return idx_fail(ctx, "-Alias already exists");
    if (a) alias_remove(ctx, a);
    idx_buf k = {0};
    alias_key(ctx->db, alias.p, alias.n, &k);
    eng_batch_put(ctx->batch, k.data, k.len, d->name, d->nlen);
    idx_buf_free(&k);
    alias_add_mem(ctx->db, alias.p, alias.n, d->name, d->nlen);
    return KS_OK;
}

/* ---- FT.CREATE / FT.ALTER ------------------------------------------------ */

/* Adds fields to f, all or none: everything that can refuse them is
 * checked first, so a refused FT.ALTER leaves the definition in memory as
 * stored (Invariant C1). */
static ks_status add_fields(ks_ctx *ctx, ft_def *f, const ft_field_spec *fs, size_t n)
{
    if (f->nfields + n > FT_MAX_FIELDS)
        return idx_fail(ctx, "-Schema is limited to %d fields", FT_MAX_FIELDS);
    for (size_t i = 0; i < n; i++) {
        idx_str al = fs[i].alias.p ? fs[i].alias : fs[i].name;
        if (fs[i].name.n < 1 || fs[i].name.n > IDX_MAX_FIELD_NAME || al.n < 1 ||
            al.n > IDX_MAX_FIELD_NAME)
            return idx_fail(ctx, "-field names must be 1 to %d bytes", IDX_MAX_FIELD_NAME);
        int dup = ft_field_by_alias(f, al.p, al.n) >= 0;
        for (size_t j = 0; j < i && !dup; j++) {
            idx_str bl = fs[j].alias.p ? fs[j].alias : fs[j].name;
            dup = bl.n == al.n && memcmp(bl.p, al.p, al.n) == 0;
        }
        if (dup)
            return idx_fail(ctx, "-Duplicate field in schema - %s", idx_printable(al.p, al.n, 0));
    }
    for (size_t i = 0; i < n; i++) {
        idx_str al = fs[i].alias.p ? fs[i].alias : fs[i].name;
        ft_field *fd = &f->fields[f->nfields++];
        fd->name = dup_bytes(fs[i].name.p, fs[i].name.n);
        fd->nlen = fs[i].name.n;
        fd->alias = dup_bytes(al.p, al.n);
        fd->alen = al.n;
        fd->type = fs[i].type;
        fd->opts = fs[i].opts;
        fd->sep = fs[i].sep ? fs[i].sep : ',';
        fd->weight = fs[i].weight > 0 ? fs[i].weight : 1.0;
    }
    number_text_fields(f);
    return KS_OK;
}

ks_status ft_create(ks_ctx *ctx, const ft_spec *s)
{
    /* a quarantined record (an unreadable definition) keeps its name too */
    if (idx_catalog_find(ctx->db, s->name.p, s->name.n) ||
        idx_quarantine_find(ctx->db, s->name.p, s->name.n))
        return idx_fail(ctx, "-Index already exists");
    ft_def *f = calloc(1, sizeof(*f));
    if (!f) abort();
    f->flags = s->flags;
    f->score = s->score;
    f->prefixes = calloc(s->nprefixes + 1, sizeof(char *));
    f->plens = calloc(s->nprefixes + 1, sizeof(size_t));
    for (size_t i = 0; i < s->nprefixes; i++) {
        f->prefixes[f->nprefixes] = dup_bytes(s->prefixes[i].p, s->prefixes[i].n);
        f->plens[f->nprefixes++] = s->prefixes[i].n;
    }
    f->custom_stop = s->custom_stop;
    f->stop = calloc(s->nstop + 1, sizeof(char *));
    f->stoplens = calloc(s->nstop + 1, sizeof(size_t));
    for (size_t i = 0; i < s->nstop; i++) {
        idx_buf low = {0};
        ft_lower(s->stop[i].p, s->stop[i].n, &low);
        f->stop[f->nstop] = dup_bytes(low.data ? low.data : "", low.len);
        f->stoplens[f->nstop++] = low.len;
        idx_buf_free(&low);
    }
    ks_status st = add_fields(ctx, f, s->fields, s->nfields);
    if (st != KS_OK) {
        ft_def_free(f);
        return st;
    }
    idx_def *d = calloc(1, sizeof(*d));
    if (!d) abort();
    d->ft = f;
    st = idx_catalog_next_id(ctx, &d->id);
    if (st != KS_OK) {
        idx_def_free(d);
        return st;
    }
    d->name = dup_bytes(s->name.p, s->name.n);
    d->nlen = s->name.n;
    d->db = ctx->db;
    common_prefix(d);
    d->building = !(f->flags & FT_IDX_SKIPSCAN);
    char why[300]; /* the loader's check, so that what FT.CREATE writes loads again */
    if (idx_def_check(d, why, sizeof(why)) < 0) {
        idx_def_free(d);
        return idx_fail(ctx, "-%s", why);
    }
    idx_catalog_add(d);
    st = idx_build_run(ctx, d, FT_CREATE_BUDGET_US);
    if (st != KS_OK) idx_catalog_remove(d);
    return st;
}

ks_status ft_alter_add(ks_ctx *ctx, idx_str name, const ft_field_spec *fields, size_t n)
{
    idx_def *d = ft_find(ctx->db, name.p, name.n);
    if (!d) return idx_fail(ctx, "-Unknown Index name");
    ks_status st = add_fields(ctx, d->ft, fields, n);
    if (st != KS_OK) return st;
    /* Every hash's entry set changes: delete them all and build again,
     * which keeps C3 (no entries beyond an unset cursor). */
    idx_buf lo = {0}, hi = {0};
    idx_key_entry_prefix(&lo, d->id);
    idx_buf_append(&hi, lo.data, lo.len);
    idx_key_prefix_successor(&hi);
    eng_batch_delete_range(ctx->batch, lo.data, lo.len, hi.data, hi.len);
    idx_buf_free(&lo);
    idx_buf_free(&hi);
    free(d->cursor);
    d->cursor = NULL;
    d->clen = 0;
    d->has_cursor = 0;
    d->scanned = 0;
    d->building = 1;
    d->gen++;
    return idx_build_run(ctx, d, FT_CREATE_BUDGET_US);
}

/* FT.DROPINDEX DD: the hashes of the index go too, read from its doc list. */
static ks_status drop_docs(ks_ctx *ctx, idx_def *d)
{
    ft_view v;
    ks_status st = ft_view_open(ctx, d, &v);
    if (st != KS_OK) return st;
    ft_set all = {0};
    st = ft_eval(&v, &(ft_qnode){.type = QN_ALL}, &all);
    ft_view_close(&v);
    for (size_t i = 0; st == KS_OK && i < all.n; i++) {
        int deleted = 0;
        st = ks_del(ctx, ft_set_key(&all, i), all.h[i].len, &deleted);
    }
    ft_set_free(&all);
    return st;
}

ks_status ft_drop(ks_ctx *ctx, idx_str name, int dd)
{
    idx_def *d = ft_find(ctx->db, name.p, name.n);
    if (!d) return KS_NOTFOUND;
    ks_status st = dd ? drop_docs(ctx, d) : KS_OK;
    if (st != KS_OK) return st;
    for (size_t i = 0; i < naliases;) {
        if (aliases[i].db == d->db && aliases[i].ilen == d->nlen &&
            memcmp(aliases[i].index, d->name, d->nlen) == 0)
            alias_remove(ctx, &aliases[i]);
        else
            i++;
    }
    idx_catalog_erase(ctx, d);
    idx_catalog_remove(d);
    return KS_OK;
}

void ft_list(int db, void (*fn)(void *arg, const char *name, size_t nlen), void *arg)
{
    for (size_t i = 0; i < idx_g.ndefs; i++)
        if (idx_g.defs[i]->db == db && idx_g.defs[i]->ft)
            fn(arg, idx_g.defs[i]->name, idx_g.defs[i]->nlen);
}

/* ---- FT.INFO ---------------------------------------------------------------- */

typedef struct info_count {
    uint64_t terms, records, failures;
    idx_buf last;
} info_count;

static int count_term(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    info_count *c = arg;
    (void)v, (void)vl;
    size_t t =
        idx_key_skip_field(k + IDX_ENTRY_PREFIX_LEN + 1, kl - IDX_ENTRY_PREFIX_LEN - 1, 0, 0);
    c->records++;
    if (t && (c->last.len != t || memcmp(c->last.data, k + IDX_ENTRY_PREFIX_LEN + 1, t) != 0)) {
        c->terms++;
        c->last.len = 0;
        idx_buf_append(&c->last, k + IDX_ENTRY_PREFIX_LEN + 1, t);
    }
    return 0;
}

static int count_one(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    (void)k, (void)kl, (void)v, (void)vl;
    (*(uint64_t *)arg)++;
    return 0;
}

/* Walks a whole sub-structure of d. */
static ks_status walk_sub(ft_view *v, char sub, ft_walk_fn fn, void *arg)
{
    idx_buf lo = {0}, hi = {0};
    ft_sub_prefix(v->d, sub, &lo);
    idx_buf_append(&hi, lo.data, lo.len);
    idx_key_prefix_successor(&hi);
    ks_status st = ft_walk(v, lo.data, lo.len, hi.data, hi.len, 0, fn, arg);
    idx_buf_free(&lo);
    idx_buf_free(&hi);
    return st;
}

ks_status ft_describe(ks_ctx *ctx, idx_str name, ft_info *o)
{
    idx_def *d = ft_find(ctx->db, name.p, name.n);
    if (!d) return KS_NOTFOUND;
    const ft_def *f = d->ft;
    memset(o, 0, sizeof(*o));
    o->name = (idx_str){d->name, d->nlen};
    o->nprefixes = f->nprefixes;
    o->prefixes = (const char *const *)f->prefixes;
    o->plens = f->plens;
    o->score = f->score;
    o->flags = f->flags;
    o->nfields = f->nfields;
    for (size_t i = 0; i < f->nfields; i++) {
        const ft_field *fd = &f->fields[i];
        o->fields[i] = (ft_field_spec){
            {fd->name, fd->nlen}, {fd->alias, fd->alen}, fd->type, fd->opts, fd->sep, fd->weight};
    }
    o->custom_stop = f->custom_stop;
    o->nstop = f->nstop;
    o->stop = (const char *const *)f->stop;
    o->building = d->building;
    o->scanned = d->scanned;
    o->percent = 1;
    if (d->building) {
        uint64_t keys = ks_dbsize(ctx);
        o->percent = keys ? (double)d->scanned / (double)keys : 0;
        if (o->percent > 0.999) o->percent = 0.999;
    }
    ft_view v;
    ks_status st = ft_view_open(ctx, d, &v);
    if (st != KS_OK) return st;
    info_count c = {0};
    st = ft_count_docs(&v, &o->num_docs);
    if (st == KS_OK) st = walk_sub(&v, FT_SUB_TERM, count_term, &c);
    if (st == KS_OK) st = walk_sub(&v, FT_SUB_FAILURE, count_one, &o->failures);
    ft_view_close(&v);
    idx_buf_free(&c.last);
    o->num_terms = c.terms;
    o->num_records = c.records;
    return st;
}

/* ---- FT.TAGVALS / FT.EXPLAIN ------------------------------------------------ */

typedef struct tagvals {
    size_t skip; /* bytes of the prefix */
    idx_buf last, dec;
    void (*fn)(void *arg, const char *v, size_t n);
    void *arg;
} tagvals;

static int tagval_one(void *arg, const char *k, size_t kl, const char *v, size_t vl)
{
    tagvals *t = arg;
    (void)v, (void)vl;
    size_t n = idx_key_skip_field(k + t->skip, kl - t->skip, 0, 0);
    if (!n || (t->last.len == n && memcmp(t->last.data, k + t->skip, n) == 0)) return 0;
    t->last.len = 0;
    idx_buf_append(&t->last, k + t->skip, n);
    t->dec.len = 0;
    if (idx_key_get_tag(k + t->skip, n, 0, &t->dec) == 0)
        t->fn(t->arg, t->dec.data ? t->dec.data : "", t->dec.len);
    return 0;
}

ks_status ft_tagvals(ks_ctx *ctx, idx_str name, idx_str field,
                     void (*fn)(void *arg, const char *v, size_t n), void *arg)
{
    idx_def *d = ft_find(ctx->db, name.p, name.n);
    if (!d) return idx_fail(ctx, "-Unknown Index name");
    int fi = ft_field_by_alias(d->ft, field.p, field.n);
    if (fi < 0 || d->ft->fields[fi].type != FT_TAG)
        return idx_fail(ctx, "-No such field `%s`", idx_printable(field.p, field.n, 0));
    ft_view v;
    ks_status st = ft_view_open(ctx, d, &v);
    if (st != KS_OK) return st;
    idx_buf lo = {0}, hi = {0};
    ft_sub_prefix(d, FT_SUB_FIELD, &lo);
    idx_buf_byte(&lo, (unsigned char)fi);
    idx_buf_append(&hi, lo.data, lo.len);
    idx_key_prefix_successor(&hi);
    tagvals t = {.skip = lo.len, .fn = fn, .arg = arg};
    st = ft_walk(&v, lo.data, lo.len, hi.data, hi.len, 0, tagval_one, &t);
    ft_view_close(&v);
    idx_buf_free(&lo);
    idx_buf_free(&hi);
    idx_buf_free(&t.last);
    idx_buf_free(&t.dec);
    return st;
}

ks_status ft_explain_query(ks_ctx *ctx, idx_str name, idx_str query, const idx_str *params,
                           size_t nparams, char **out)
{
    idx_def *d = ft_find(ctx->db, name.p, name.n);
    if (!d) return idx_fail(ctx, "-Unknown Index name");
    char *err = NULL;
    ft_qnode *q = ft_parse(d->ft, query.p, query.n, params, nparams, 0, &err);
    if (!q) {
        free(ctx->err);
        ctx->err = err;
        return KS_ERR_MSG;
    }
    *out = ft_explain(d->ft, q);
    ft_qnode_free(q);
    return KS_OK;
}
