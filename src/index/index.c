/*
 * index.c -- the index layer's entry points: startup, IDX.CREATE, IDX.DROP,
 * IDX.LIST, IDX.INFO and the INFO section. The stored catalog is described
 * in catalog.c and src/index/FORMAT.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/catalog.h"
#include "index/ft_def.h"
#include "index/index.h"

/* How long IDX.CREATE builds inside the command before leaving the rest to
 * idx_build_step: small data finishes here, so a UNIQUE or NUMERIC failure
 * is the command's error reply (see build.c). */
#define IDX_CREATE_BUDGET_US 10000

/* Non-UNIQUE entries stay out of the table bloom filters (idx_key.h). */
static const eng_filter_policy filter_policy = {idx_filter_skip, NULL};

ks_status idx_init(keyspace *ks, char **err)
{
    idx_catalog_clear();
    idx_filter_reset();
    idx_g.ks = ks;
    idx_g.eng = ks_engine(ks);
    ks_status st = idx_catalog_load(err);
    if (st != KS_OK) return st;
    ks_set_hash_hook(ks, idx_hash_hook, idx_wants, NULL);
    ks_set_flush_hook(ks, idx_flush_hook, NULL);
    ks_set_index_filter(idx_entry_filter);
    eng_set_filter_policy(idx_g.eng, &filter_policy);
    return KS_OK;
}

void idx_shutdown(void)
{
    if (idx_g.ks) {
        ks_set_hash_hook(idx_g.ks, NULL, NULL, NULL);
        ks_set_flush_hook(idx_g.ks, NULL, NULL);
    }
    ks_set_index_filter(NULL);
    if (idx_g.eng) eng_set_filter_policy(idx_g.eng, NULL);
    idx_catalog_clear();
    idx_maintain_free();
    ft_shutdown();
}

static char *dup_str(idx_str s)
{
    char *p = malloc(s.n + 1);
    if (!p) abort();
    memcpy(p, s.p, s.n);
    p[s.n] = 0;
    return p;
}

static ks_status check_spec(ks_ctx *ctx, const idx_spec *spec)
{
    const char *name = idx_printable(spec->name.p, spec->name.n, 0);
    if (idx_catalog_find(ctx->db, spec->name.p, spec->name.n))
        return idx_fail(ctx, "ERR index '%s' already exists", name);
    if (idx_quarantine_find(ctx->db, spec->name.p, spec->name.n))
        return idx_fail(ctx,
                        "ERR index '%s' already exists but is quarantined (its stored "
                        "definition cannot be read); IDX.DROP it first",
                        name);
    if (spec->nfields < 1 || spec->nfields > IDX_MAX_FIELDS)
        return idx_fail(ctx, "ERR an index has 1 to %d fields", IDX_MAX_FIELDS);
    return KS_OK;
}

ks_status idx_create(ks_ctx *ctx, const idx_spec *spec)
{
    ks_status st = check_spec(ctx, spec);
    if (st != KS_OK) return st;
    idx_def *d = calloc(1, sizeof(*d));
    if (!d) abort();
    d->name = dup_str(spec->name);
    d->nlen = spec->name.n;
    d->db = ctx->db;
    d->prefix = dup_str(spec->prefix);
    d->plen = spec->prefix.n;
    d->unique = spec->unique;
    d->implied_key = !spec->unique; /* the current entry format (FORMAT.md) */
    d->bare_value = !spec->unique;
    d->nfields = spec->nfields;
    for (size_t i = 0; i < spec->nfields; i++) {
        d->fields[i].name = dup_str(spec->fields[i].name);
        d->fields[i].len = spec->fields[i].name.n;
        d->fields[i].numeric = spec->fields[i].numeric;
        d->fields[i].desc = spec->fields[i].desc;
    }
    d->building = 1;
    /* The loader's own check (idx_def_check), so that what IDX.CREATE
     * writes always loads again. */
    char why[300];
    if (idx_def_check(d, why, sizeof(why)) < 0) {
        idx_def_free(d);
        return idx_fail(ctx, "ERR %s", why);
    }
    st = idx_catalog_next_id(ctx, &d->id);
    if (st != KS_OK) {
        idx_def_free(d);
        return st;
    }
    idx_catalog_add(d);
    st = idx_build_run(ctx, d, IDX_CREATE_BUDGET_US);
    if (st != KS_OK) idx_catalog_remove(d); /* the server discards the batch (S1) */
    return st;
}

ks_status idx_drop(ks_ctx *ctx, const char *name, size_t nlen)
{
    idx_def *d = idx_catalog_find(ctx->db, name, nlen);
    idx_quarantined *q = d ? NULL : idx_quarantine_find(ctx->db, name, nlen);
    if (q) {
        idx_quarantine_erase(ctx, q);
        return KS_OK;
    }
    if (!d || d->ft) return KS_NOTFOUND; /* FT indexes go with FT.DROPINDEX */
    idx_catalog_erase(ctx, d);
    idx_catalog_remove(d);
    return KS_OK;
}

const char *idx_quarantined_reason(int db, const char *name, size_t nlen)
{
    const idx_quarantined *q = idx_quarantine_find(db, name, nlen);
    return q ? q->reason : NULL;
}

void idx_quarantine_each(void (*fn)(void *arg, int db, const char *name, const char *reason),
                         void *arg)
{
    for (size_t i = 0; i < idx_g.nquarantined; i++) {
        const idx_quarantined *q = &idx_g.quarantined[i];
        fn(arg, q->db, idx_printable(q->name, q->nlen, 0), q->reason);
    }
}

int idx_nfields(int db, const char *name, size_t nlen)
{
    const idx_def *d = idx_catalog_find(db, name, nlen);
    return d ? (int)d->nfields : -1;
}

void idx_list(int db, void (*fn)(void *arg, const char *name, size_t nlen), void *arg)
{
    for (size_t i = 0; i < idx_g.ndefs; i++)
        if (idx_g.defs[i]->db == db && !idx_g.defs[i]->ft)
            fn(arg, idx_g.defs[i]->name, idx_g.defs[i]->nlen);
}

/* Counts d's live entries through one view (the pending batch on top), or
 * takes the cached count when nothing can have changed since (idx_def.gen). */
static ks_status count_entries(ks_ctx *ctx, idx_def *d, uint64_t *n)
{
    if (d->counted_valid && d->counted_gen == d->gen &&
        (d->counted_until == 0 || ctx->now_ms < d->counted_until)) {
        *n = d->counted;
        return KS_OK;
    }
    idx_buf lo = {0}, hi = {0};
    idx_key_entry_prefix(&lo, d->id);
    idx_buf_append(&hi, lo.data, lo.len);
    idx_key_prefix_successor(&hi);
    eng_iter *it = eng_iter_new(idx_g.eng, NULL, eng_batch_count(ctx->batch) ? ctx->batch : NULL);
    int64_t until = 0;
    *n = 0;
    for (eng_iter_seek(it, lo.data, lo.len); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        if (idx_key_cmp(k, kl, hi.data, hi.len) >= 0) break;
        int64_t exp = idx_entry_expire(v, vl);
        if (exp < 0 || idx_expired(exp, ctx->now_ms)) continue;
        (*n)++;
        if (exp > 0 && (until == 0 || exp < until)) until = exp;
    }
    eng_status es = eng_iter_status(it);
    eng_iter_free(it);
    idx_buf_free(&lo);
    idx_buf_free(&hi);
    if (es != ENG_OK) return idx_fail(ctx, "ERR index read failed: %s", eng_last_error());
    d->counted = *n;
    d->counted_gen = d->gen;
    d->counted_until = until;
    d->counted_valid = 1;
    return KS_OK;
}

ks_status idx_describe(ks_ctx *ctx, const char *name, size_t nlen, idx_desc *out)
{
    idx_def *d = idx_catalog_find(ctx->db, name, nlen);
    if (!d || d->ft) return KS_NOTFOUND;
    memset(out, 0, sizeof(*out));
    out->name = (idx_str){d->name, d->nlen};
    out->prefix = (idx_str){d->prefix, d->plen};
    out->unique = d->unique;
    out->nfields = d->nfields;
    for (size_t i = 0; i < d->nfields; i++) {
        out->fields[i].name = (idx_str){d->fields[i].name, d->fields[i].len};
        out->fields[i].numeric = d->fields[i].numeric;
        out->fields[i].desc = d->fields[i].desc;
    }
    out->building = d->building;
    out->scanned = d->scanned;
    out->progress = 100;
    if (d->building) {
        uint64_t keys = ks_dbsize(ctx);
        out->progress = keys ? 100.0 * (double)d->scanned / (double)keys : 0;
        if (out->progress > 99.9) out->progress = 99.9;
        return KS_OK; /* entries are counted once ready: a walk per poll would not be */
    }
    return count_entries(ctx, d, &out->entries);
}

size_t idx_info(char *buf, size_t cap)
{
    size_t building = 0;
    for (size_t i = 0; i < idx_g.ndefs; i++)
        building += idx_g.defs[i]->building != 0;
    int n = snprintf(buf, cap, "# Index\r\nindexes:%zu\r\nindexes_building:%zu\r\n", idx_g.ndefs,
                     building);
    if (n < 0) return 0;
    if ((size_t)n < cap && idx_g.last_build_error) {
        const char *e = idx_g.last_build_error;
        n += snprintf(buf + n, cap - (size_t)n, "idx_last_build_error:%s\r\n",
                      idx_printable(e, strlen(e), 0));
    }
    if ((size_t)n < cap)
        n += snprintf(buf + n, cap - (size_t)n, "indexes_quarantined:%zu\r\n", idx_g.nquarantined);
    for (size_t i = 0; i < idx_g.nquarantined && (size_t)n < cap; i++) {
        const idx_quarantined *q = &idx_g.quarantined[i];
        n += snprintf(buf + n, cap - (size_t)n, "idx_quarantined_%zu:db=%d,name=%s,reason=%s\r\n",
                      i, q->db, idx_printable(q->name, q->nlen, 0),
                      idx_printable(q->reason, strlen(q->reason), 1));
    }
    return (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}
