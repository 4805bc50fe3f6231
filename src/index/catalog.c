/*
 * catalog.c -- index definitions: stored in the engine under 'x' 'C', kept
 * in memory in idx_g, and the entry key/value helpers every part of the
 * index layer shares.
 *
 * Stored format (all integers big-endian; see src/index/FORMAT.md):
 *   key   'x' 'C' <db: 1 byte> <index name>
 *   value <version = 1> <id: u32>
 *         <flags: bit 0 UNIQUE, bit 1 IMPLIED KEY, bit 2 BARE VALUE>
 *         <state: 0 ready, 1 building>
 *         <prefix length: u32> <prefix>
 *         <field count: 1 byte, 1..16>
 *         per field: <type: 0 TAG, 1 NUMERIC> <desc: 0|1> <name length: u32> <name>
 *         when building: <has cursor: 0|1> <cursor length: u32> <cursor> <scanned: u64>
 *   key   'x' 'N'  value <next index id: u32>
 * A definition is written in the same engine batch as the entries it
 * implies (Invariant C1), so a crash leaves the two consistent.
 *
 * The decoder is strict (every byte accounted for, flags 0..7 with UNIQUE
 * only alone, states 0 or 1,
 * the limits of idx_def_check), so decode(encode(d)) == d and a damaged
 * record is noticed; the loader quarantines such a record instead of
 * failing the start (Invariant C4).
 */
#include "index/catalog.h"
#include "index/ft_def.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

idx_globals idx_g;

#define CATALOG_VERSION 1
#define CATALOG_F_UNIQUE 1
#define CATALOG_F_IMPLIED 2
#define CATALOG_F_BARE 4

ks_status idx_fail(ks_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    char *msg = NULL;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0) msg = NULL;
    va_end(ap);
    free(ctx->err);
    ctx->err = msg ? msg : strdup("ERR out of memory");
    return KS_ERR_MSG;
}

const char *idx_printable(const char *p, size_t n, int which)
{
    static char bufs[3][200];
    char *out = bufs[which % 3];
    size_t o = 0, max = sizeof(bufs[0]) - 4;
    for (size_t i = 0; i < n; i++) {
        if (o + 4 >= max) {
            memcpy(out + o, "...", 3);
            o += 3;
            break;
        }
        unsigned char c = (unsigned char)p[i];
        if (isprint(c) && c != '\\') {
            out[o++] = (char)c;
        } else {
            o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
        }
    }
    out[o] = 0;
    return out;
}

void idx_def_free(idx_def *d)
{
    if (!d) return;
    free(d->name);
    free(d->prefix);
    for (size_t i = 0; i < d->nfields; i++)
        free(d->fields[i].name);
    free(d->cursor);
    ft_def_free(d->ft);
    free(d);
}

idx_def *idx_catalog_find(int db, const char *name, size_t nlen)
{
    for (size_t i = 0; i < idx_g.ndefs; i++) {
        idx_def *d = idx_g.defs[i];
        if (d->db == db && d->nlen == nlen && memcmp(d->name, name, nlen) == 0) return d;
    }
    return NULL;
}

/* Establishes C5: each definition's class is the position of the first
 * one with the same prefix bytes. Quadratic in the definitions, but run
 * only when the set changes, not per write. */
static void prefix_classes(void)
{
    for (size_t i = 0; i < idx_g.ndefs; i++) {
        idx_def *d = idx_g.defs[i];
        d->prefix_class = i;
        for (size_t j = 0; j < i && !d->ft; j++) {
            const idx_def *e = idx_g.defs[j];
            if (!e->ft && e->plen == d->plen && memcmp(e->prefix, d->prefix, d->plen) == 0) {
                d->prefix_class = e->prefix_class;
                break;
            }
        }
    }
}

void idx_catalog_add(idx_def *d)
{
    if (idx_g.ndefs == idx_g.cap) {
        size_t cap = idx_g.cap ? idx_g.cap * 2 : 8;
        idx_def **p = realloc(idx_g.defs, cap * sizeof(*p));
        if (!p) abort();
        idx_g.defs = p;
        idx_g.cap = cap;
    }
    idx_g.defs[idx_g.ndefs++] = d;
    idx_g.dbs_with_index[d->db]++;
    prefix_classes();
    /* Only iterators reach a non-UNIQUE index's entries (a UNIQUE entry is
     * read by key for its holder): the engine's memtable can keep them out
     * of its hash index. */
    if (idx_g.eng && !d->unique && !d->ft) {
        char p[IDX_ENTRY_PREFIX_LEN] = {IDX_NS_BYTE, IDX_TAG_ENTRY};
        idx_put_u32(p + 2, d->id);
        eng_hint_scan_only_prefix(idx_g.eng, p, sizeof(p));
    }
    idx_filter_note(d->id, !d->unique || d->ft); /* only UNIQUE IDX entries are point-read */
}

void idx_catalog_remove(idx_def *d)
{
    for (size_t i = 0; i < idx_g.ndefs; i++) {
        if (idx_g.defs[i] != d) continue;
        memmove(idx_g.defs + i, idx_g.defs + i + 1, (idx_g.ndefs - i - 1) * sizeof(idx_def *));
        idx_g.ndefs--;
        idx_g.dbs_with_index[d->db]--;
        idx_def_free(d);
        prefix_classes();
        return;
    }
}

void idx_catalog_clear(void)
{
    for (size_t i = 0; i < idx_g.ndefs; i++)
        idx_def_free(idx_g.defs[i]);
    free(idx_g.defs);
    free(idx_g.last_build_error);
    for (size_t i = 0; i < idx_g.nquarantined; i++) {
        free(idx_g.quarantined[i].name);
        free(idx_g.quarantined[i].reason);
    }
    free(idx_g.quarantined);
    memset(&idx_g, 0, sizeof(idx_g));
}

static void catalog_key(const idx_def *d, idx_buf *b)
{
    b->len = 0;
    idx_buf_byte(b, IDX_NS_BYTE);
    idx_buf_byte(b, IDX_TAG_CATALOG);
    idx_buf_byte(b, (unsigned char)d->db);
    idx_buf_append(b, d->name, d->nlen);
}

static void put_blob(idx_buf *b, const char *p, size_t n)
{
    char len[4];
    idx_put_u32(len, (uint32_t)n);
    idx_buf_append(b, len, 4);
    idx_buf_append(b, p, n);
}

void idx_catalog_encode(const idx_def *d, idx_buf *k, idx_buf *b)
{
    char tmp[8];
    catalog_key(d, k);
    if (d->ft) {
        ft_catalog_value(d, b);
        return;
    }
    b->len = 0;
    idx_buf_byte(b, CATALOG_VERSION);
    idx_put_u32(tmp, d->id);
    idx_buf_append(b, tmp, 4);
    idx_buf_byte(b, (d->unique ? CATALOG_F_UNIQUE : 0) | (d->implied_key ? CATALOG_F_IMPLIED : 0) |
                        (d->bare_value ? CATALOG_F_BARE : 0));
    idx_buf_byte(b, d->building ? 1 : 0);
    put_blob(b, d->prefix, d->plen);
    idx_buf_byte(b, (unsigned char)d->nfields);
    for (size_t i = 0; i < d->nfields; i++) {
        idx_buf_byte(b, d->fields[i].numeric ? 1 : 0);
        idx_buf_byte(b, d->fields[i].desc ? 1 : 0);
        put_blob(b, d->fields[i].name, d->fields[i].len);
    }
    if (d->building) {
        idx_buf_byte(b, d->has_cursor ? 1 : 0);
        put_blob(b, d->cursor ? d->cursor : "", d->has_cursor ? d->clen : 0);
        idx_put_u64(tmp, d->scanned);
        idx_buf_append(b, tmp, 8);
    }
}

/* A bounds-checked reader over a stored value; the first problem met is
 * kept as the reason. */
typedef struct reader {
    const char *p, *end;
    const char *bad; /* NULL while the value reads well */
} reader;

static int rd_fail(reader *r, const char *why)
{
    if (!r->bad) r->bad = why;
    return 0;
}

static unsigned rd_byte(reader *r, const char *what)
{
    if (r->bad || r->p >= r->end) return (unsigned)rd_fail(r, what);
    return (unsigned char)*r->p++;
}

/* A byte that must be 0 or 1. */
static int rd_bool(reader *r, const char *what)
{
    unsigned v = rd_byte(r, what);
    return v > 1 ? rd_fail(r, what) : (int)v;
}

static uint64_t rd_fixed(reader *r, size_t n, const char *what)
{
    if (r->bad || (size_t)(r->end - r->p) < n) return (uint64_t)rd_fail(r, what);
    uint64_t v = n == 4 ? idx_get_u32(r->p) : idx_get_u64(r->p);
    r->p += n;
    return v;
}

static char *rd_blob(reader *r, size_t *n, const char *what)
{
    uint32_t len = (uint32_t)rd_fixed(r, 4, what);
    if (r->bad || (size_t)(r->end - r->p) < len) return rd_fail(r, what), NULL;
    char *s = malloc((size_t)len + 1);
    if (!s) abort();
    memcpy(s, r->p, len);
    s[len] = 0;
    r->p += len;
    *n = len;
    return s;
}

int idx_def_check(const idx_def *d, char *why, size_t cap)
{
    if (d->nlen < 1 || d->nlen > IDX_MAX_NAME)
        return snprintf(why, cap, "index name must be 1 to %d bytes", IDX_MAX_NAME), -1;
    if (memchr(d->name, 0, d->nlen))
        return snprintf(why, cap, "index name must not contain NUL bytes"), -1;
    if (d->db < 0 || d->db >= KS_DATABASES)
        return snprintf(why, cap, "database %d out of range", d->db), -1;
    if (d->ft) return ft_def_check(d, why, cap); /* an FT index's own limits */
    if (d->plen > IDX_MAX_PREFIX)
        return snprintf(why, cap, "prefix must be at most %d bytes", IDX_MAX_PREFIX), -1;
    if (d->nfields < 1 || d->nfields > IDX_MAX_FIELDS)
        return snprintf(why, cap, "an index has 1 to %d fields", IDX_MAX_FIELDS), -1;
    for (size_t i = 0; i < d->nfields; i++) {
        const idx_field *f = &d->fields[i];
        if (f->len < 1 || f->len > IDX_MAX_FIELD_NAME)
            return snprintf(why, cap, "field names must be 1 to %d bytes", IDX_MAX_FIELD_NAME), -1;
        for (size_t j = 0; j < i; j++)
            if (d->fields[j].len == f->len && memcmp(d->fields[j].name, f->name, f->len) == 0)
                return snprintf(why, cap, "duplicate field '%s' in SCHEMA",
                                idx_printable(f->name, f->len, 2)),
                       -1;
    }
    if (d->building && !d->has_cursor && d->clen)
        return snprintf(why, cap, "a build cursor without a position"), -1;
    return 0;
}

idx_def *idx_catalog_decode(const char *k, size_t kl, const char *v, size_t vl, char *why,
                            size_t cap)
{
    if (kl < 3 || k[0] != IDX_NS_BYTE || k[1] != IDX_TAG_CATALOG) {
        snprintf(why, cap, "not a catalog key");
        return NULL;
    }
    if (vl && (unsigned char)v[0] == FT_CATALOG_VERSION) { /* an FT index: ft_def.c */
        idx_def *f = ft_catalog_parse(k, kl, v, vl);
        if (!f) snprintf(why, cap, "malformed FT index record");
        return f;
    }
    idx_def *d = calloc(1, sizeof(*d));
    if (!d) abort();
    reader r = {v, v + vl, NULL};
    d->db = (unsigned char)k[2];
    d->nlen = kl - 3;
    d->name = malloc(d->nlen + 1);
    if (!d->name) abort();
    memcpy(d->name, k + 3, d->nlen);
    d->name[d->nlen] = 0;
    if (rd_byte(&r, "empty record") != CATALOG_VERSION && !r.bad) {
        snprintf(why, cap, "unknown record version %u", (unsigned char)v[0]);
        goto bad;
    }
    d->id = (uint32_t)rd_fixed(&r, 4, "truncated id");
    unsigned flags = rd_byte(&r, "bad flags");
    if (!r.bad && (flags & ~(unsigned)(CATALOG_F_UNIQUE | CATALOG_F_IMPLIED | CATALOG_F_BARE) ||
                   ((flags & CATALOG_F_UNIQUE) && flags != CATALOG_F_UNIQUE)))
        rd_fail(&r, "bad flags");
    d->unique = (flags & CATALOG_F_UNIQUE) != 0;
    d->implied_key = (flags & CATALOG_F_IMPLIED) != 0;
    d->bare_value = (flags & CATALOG_F_BARE) != 0;
    d->building = rd_bool(&r, "bad state");
    d->prefix = rd_blob(&r, &d->plen, "truncated prefix");
    unsigned nf = rd_byte(&r, "truncated field count");
    if (!r.bad && (nf < 1 || nf > IDX_MAX_FIELDS)) rd_fail(&r, "bad field count");
    for (unsigned i = 0; i < nf && !r.bad; i++) {
        d->fields[i].numeric = rd_bool(&r, "bad field type");
        d->fields[i].desc = rd_bool(&r, "bad field direction");
        d->fields[i].name = rd_blob(&r, &d->fields[i].len, "truncated field name");
        d->nfields = i + 1;
    }
    if (d->building) {
        d->has_cursor = rd_bool(&r, "bad build cursor flag");
        d->cursor = rd_blob(&r, &d->clen, "truncated build cursor");
        d->scanned = rd_fixed(&r, 8, "truncated build progress");
    }
    if (!r.bad && r.p != r.end) rd_fail(&r, "trailing bytes");
    if (!r.bad && d->id == 0) rd_fail(&r, "index id 0");
    if (r.bad) {
        snprintf(why, cap, "malformed record: %s", r.bad);
        goto bad;
    }
    if (idx_def_check(d, why, cap) < 0) goto bad;
    return d;
bad:
    idx_def_free(d);
    return NULL;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = (*(idx_def *const *)a)->id, y = (*(idx_def *const *)b)->id;
    return (x > y) - (x < y);
}

/* Keeps a record that did not load (C4): name, db and, when the value is
 * long enough to hold one, its id. */
static void quarantine(const char *k, size_t kl, const char *v, size_t vl, const char *why)
{
    idx_quarantined *q = realloc(idx_g.quarantined, (idx_g.nquarantined + 1) * sizeof(*q));
    if (!q) abort();
    idx_g.quarantined = q;
    q += idx_g.nquarantined++;
    q->db = kl > 2 ? (unsigned char)k[2] : -1;
    q->nlen = kl > 3 ? kl - 3 : 0;
    q->name = malloc(q->nlen + 1);
    q->reason = strdup(why);
    if (!q->name || !q->reason) abort();
    if (q->nlen) memcpy(q->name, k + 3, q->nlen);
    q->name[q->nlen] = 0;
    q->id = vl >= 5 && v[0] == CATALOG_VERSION ? idx_get_u32(v + 1) : 0;
}

idx_quarantined *idx_quarantine_find(int db, const char *name, size_t nlen)
{
    for (size_t i = 0; i < idx_g.nquarantined; i++) {
        idx_quarantined *q = &idx_g.quarantined[i];
        if (q->db == db && q->nlen == nlen && memcmp(q->name, name, nlen) == 0) return q;
    }
    return NULL;
}

void idx_quarantine_erase(ks_ctx *ctx, idx_quarantined *q)
{
    idx_def d = {.name = q->name, .nlen = q->nlen, .db = q->db, .id = q->id};
    if (q->id) {
        idx_catalog_erase(ctx, &d); /* the record and the entries of its id */
    } else {
        idx_buf k = {0};
        catalog_key(&d, &k);
        eng_batch_delete(ctx->batch, k.data, k.len);
        idx_buf_free(&k);
    }
    free(q->name);
    free(q->reason);
    *q = idx_g.quarantined[--idx_g.nquarantined];
}

/* Loads the stored definitions. They come back in name order; creation
 * (id) order is restored because the write hook checks indexes in that
 * order, so which error a write gets does not change across a restart. */
ks_status idx_catalog_load(char **err)
{
    static const char start[2] = {IDX_NS_BYTE, IDX_TAG_CATALOG};
    eng_iter *it = eng_iter_new(idx_g.eng, NULL, NULL);
    if (!it) {
        *err = strdup("index catalog: cannot open an engine iterator");
        return KS_ERR_ENGINE;
    }
    for (eng_iter_seek(it, start, 2); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl);
        const char *v = eng_iter_value(it, &vl);
        if (kl < 2 || memcmp(k, start, 2) != 0) break;
        char why[256];
        idx_def *d = idx_catalog_decode(k, kl, v, vl, why, sizeof(why));
        if (d && idx_catalog_find(d->db, d->name, d->nlen)) {
            snprintf(why, sizeof(why), "a second record of the same index");
            idx_def_free(d);
            d = NULL;
        }
        if (d)
            idx_catalog_add(d);
        else
            quarantine(k, kl, v, vl, why);
    }
    eng_status st = eng_iter_status(it);
    eng_iter_free(it);
    if (st != ENG_OK) {
        if (asprintf(err, "index catalog: %s", eng_last_error()) < 0) *err = NULL;
        return KS_ERR_ENGINE;
    }
    if (idx_g.ndefs) qsort(idx_g.defs, idx_g.ndefs, sizeof(idx_def *), by_id);
    prefix_classes();
    return KS_OK;
}

void idx_catalog_save(ks_ctx *ctx, const idx_def *d)
{
    idx_buf k = {0}, v = {0};
    idx_catalog_encode(d, &k, &v);
    eng_batch_put(ctx->batch, k.data, k.len, v.data, v.len);
    idx_buf_free(&k);
    idx_buf_free(&v);
}

void idx_catalog_erase(ks_ctx *ctx, const idx_def *d)
{
    idx_buf k = {0}, end = {0};
    catalog_key(d, &k);
    eng_batch_delete(ctx->batch, k.data, k.len);
    k.len = 0;
    idx_key_entry_prefix(&k, d->id);
    idx_buf_append(&end, k.data, k.len);
    idx_key_prefix_successor(&end);
    eng_batch_delete_range(ctx->batch, k.data, k.len, end.data, end.len);
    idx_buf_free(&k);
    idx_buf_free(&end);
}

ks_status idx_catalog_next_id(ks_ctx *ctx, uint32_t *id)
{
    static const char key[2] = {IDX_NS_BYTE, IDX_TAG_NEXTID};
    char *v = NULL, nv[4];
    size_t vl = 0;
    eng_status st = eng_get_batch(idx_g.eng, NULL, ctx->batch, key, 2, &v, &vl);
    if (st != ENG_OK && st != ENG_NOTFOUND) {
        return idx_fail(ctx, "ERR index catalog: %s", eng_last_error());
    }
    uint32_t next = 1;
    if (st == ENG_OK && vl == 4) next = idx_get_u32(v);
    eng_free(v);
    if (next == UINT32_MAX) return idx_fail(ctx, "ERR index ids exhausted");
    /* Also skip past ids in use, should 'x' 'N' ever be behind (C2). */
    for (size_t i = 0; i < idx_g.ndefs; i++)
        if (idx_g.defs[i]->id >= next) next = idx_g.defs[i]->id + 1;
    for (size_t i = 0; i < idx_g.nquarantined; i++) /* C4 */
        if (idx_g.quarantined[i].id >= next) next = idx_g.quarantined[i].id + 1;
    *id = next;
    idx_put_u32(nv, next + 1);
    eng_batch_put(ctx->batch, key, 2, nv, 4);
    return KS_OK;
}

int idx_def_cursor_covers(const idx_def *d, const char *key, size_t klen)
{
    if (!d->building) return 1;
    if (!d->has_cursor) return 0;
    size_t n = klen < d->clen ? klen : d->clen;
    int c = n ? memcmp(key, d->cursor, n) : 0;
    return c < 0 || (c == 0 && klen <= d->clen);
}

int idx_def_active_for(const idx_def *d, const char *key, size_t klen)
{
    return idx_def_prefix_match(d, key, klen) && idx_def_cursor_covers(d, key, klen);
}

static int field_is(const ks_field *f, const idx_field *want)
{
    /* The first byte before memcmp: field names of a hash mostly differ
     * there. Schema field names are never empty (idx_def_check). */
    return f->fl == want->len && f->f[0] == want->name[0] &&
           memcmp(f->f, want->name, want->len) == 0;
}

const ks_field *idx_find_field_scan(const ks_field *f, size_t n, const idx_field *want)
{
    for (size_t i = 0; i < n; i++)
        if (field_is(&f[i], want)) {
            ((idx_field *)want)->hint = i; /* a hint, not part of the definition */
            return &f[i];
        }
    return NULL;
}

/* The implied key of an entry (idx_key.h) whose last field is encoded at
 * f (n bytes), into ib. Writing entry keys and reading hash keys out of
 * them use a per-thread buffer each, so that a hash key read out stays
 * valid while the entry key of its hash is built again (IDX.CHECK). */
static __thread idx_buf implied_w, implied_r;
static int implied_of(idx_buf *ib, const idx_def *d, const char *f, size_t n, const char **i,
                      size_t *il)
{
    const idx_field *last = &d->fields[d->nfields - 1];
    int has = idx_key_implied(ib, d->prefix, d->plen, f, n, last->numeric, last->desc);
    *i = ib->data;
    *il = ib->len;
    return has;
}

/* idx_parse_num_canon of the pair v, through memo (NULL: none). */
static int parse_pair(const ks_field *v, idx_num_memo *memo, double *x, int *canonical)
{
    if (memo)
        for (size_t i = 0; i < memo->n; i++)
            if (memo->pair[i] == v) {
                *x = memo->x[i];
                *canonical = memo->canonical[i];
                return 0;
            }
    if (idx_parse_num_canon(v->v, v->vl, x, canonical) != 0) return -1;
    if (memo && memo->n < IDX_NUM_MEMO) {
        memo->pair[memo->n] = v;
        memo->x[memo->n] = *x;
        memo->canonical[memo->n++] = (unsigned char)*canonical;
    }
    return 0;
}

int idx_entry_key_append(const idx_def *d, const char *key, size_t klen, const ks_field *f,
                         size_t n, idx_buf *b, size_t *bad_field, idx_num_memo *memo)
{
    size_t start = b->len, last = 0;
    idx_key_entry_prefix(b, d->id);
    int covered = 1, canonical = 0;
    const ks_field *v = NULL;
    for (size_t i = 0; i < d->nfields; i++) {
        const idx_field *fd = &d->fields[i];
        v = idx_find_field(f, n, fd);
        last = b->len;
        if (!v) {
            covered = 0;
            continue; /* keep going: a later NUMERIC field may still be invalid */
        }
        if (fd->numeric) {
            double x;
            if (parse_pair(v, memo, &x, &canonical) != 0) {
                *bad_field = i;
                b->len = start;
                return -1;
            }
            if (covered) idx_key_put_num(b, x, fd->desc);
        } else if (covered) {
            idx_key_put_tag(b, v->v, v->vl, fd->desc);
        }
    }
    if (!covered) {
        b->len = start;
        return 0;
    }
    if (d->unique) return 1;
    if (!d->implied_key) {
        idx_buf_append(b, key, klen);
        return 1;
    }
    /* The implied key is the prefix and the last field's text: a TAG's
     * bytes as the hash holds them, and a NUMERIC's too when they are the
     * canonical integer text; only other numbers need I decoded and built. */
    if (!d->fields[d->nfields - 1].numeric || canonical) { /* canonical: of the last field */
        if (memo && memo->key_has_prefix)
            idx_key_put_hash_key_after(b, key, klen, d->plen, v->v, v->vl);
        else
            idx_key_put_hash_key2(b, key, klen, d->prefix, d->plen, v->v, v->vl);
        return 1;
    }
    const char *ik;
    size_t il;
    int has = implied_of(&implied_w, d, b->data + last, b->len - last, &ik, &il);
    idx_key_put_hash_key(b, key, klen, ik, il, has);
    return 1;
}

int idx_entry_key(const idx_def *d, const char *key, size_t klen, const ks_field *f, size_t n,
                  idx_buf *b, size_t *bad_field)
{
    b->len = 0;
    return idx_entry_key_append(d, key, klen, f, n, b, bad_field, NULL);
}

void idx_entry_value(const idx_def *d, const char *key, size_t klen, int64_t expire_ms, idx_buf *b)
{
    b->len = 0;
    idx_buf_reserve(b, IDX_EXPIRE_LEN); /* data is never NULL, even for no bytes */
    if (d->bare_value && !d->unique && expire_ms == 0) return; /* FORMAT.md: no TTL, no bytes */
    idx_put_u64(b->data, (uint64_t)expire_ms);
    b->len = IDX_EXPIRE_LEN;
    if (d->unique) idx_buf_append(b, key, klen);
}

int64_t idx_entry_expire(const char *ev, size_t evl)
{
    /* Empty only in a bare-value index, whose flag the compaction filter
     * cannot see: the value alone has to say it. */
    if (evl == 0) return 0;
    if (evl < IDX_EXPIRE_LEN) return -1;
    return (int64_t)idx_get_u64(ev);
}

int idx_entry_hash_key_from(const idx_def *d, const char *ek, size_t ekl, const char *ev,
                            size_t evl, size_t off, size_t nfixed, const char **hk, size_t *hkl)
{
    if (d->unique) {
        if (evl < IDX_EXPIRE_LEN) return -1;
        *hk = ev + IDX_EXPIRE_LEN;
        *hkl = evl - IDX_EXPIRE_LEN;
        return 0;
    }
    size_t n = 0;
    if (ekl < off || nfixed >= d->nfields) return -1;
    for (size_t i = nfixed; i < d->nfields; i++) {
        n = idx_key_skip_field(ek + off, ekl - off, d->fields[i].numeric, d->fields[i].desc);
        if (!n) return -1;
        off += n;
    }
    if (!d->implied_key) {
        *hk = ek + off;
        *hkl = ekl - off;
        return 0;
    }
    const char *ik;
    size_t il;
    int has = implied_of(&implied_r, d, ek + off - n, n, &ik, &il);
    return idx_key_get_hash_key(ek + off, ekl - off, ik, il, has, hk, hkl);
}

int idx_entry_hash_key(const idx_def *d, const char *ek, size_t ekl, const char *ev, size_t evl,
                       const char **hk, size_t *hkl)
{
    return idx_entry_hash_key_from(d, ek, ekl, ev, evl, IDX_ENTRY_PREFIX_LEN, 0, hk, hkl);
}
