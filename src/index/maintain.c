/*
 * maintain.c -- keeps every index exact in the write path: the keyspace's
 * hash hook (Invariant KS1 in keyspace.h), its "wants" pre-check, and the
 * compaction filter for index entries.
 *
 * For each index whose prefix matches the key, the hook computes the old and
 * the new entry of the hash, checks everything that can reject the command
 * (NUMERIC values, UNIQUE) for every index first, and only then adds its
 * deletes and puts to ctx->batch -- so a rejected command leaves no trace
 * even before the server rolls back to its savepoint (Invariant S1).
 *
 * An entry whose key did not change is left alone unless the hash's expiry
 * changed: the entry value carries the expiry, and the hook is not told the
 * old one, so it reads it (ks_expire_get, before the keyspace writes the
 * change) once per call when some entry key is unchanged.
 */
#include <stdlib.h>
#include <string.h>

#include "index/catalog.h"
#include "index/ft_def.h"
#include "index/index.h"

/* What the hook plans for one index, between validation and writing.
 * Offsets point into hook_keys, which grows across calls and is reused:
 * every entry key of a call is built there in place, with no allocation
 * once warm. */
typedef struct plan {
    idx_def *d;
    size_t old_off, old_len, new_off, new_len;
    int has_old, has_new;
    int same;      /* old and new entry keys are equal */
    int unchanged; /* no schema field changed: same, and neither key built yet */
} plan;

static idx_buf hook_keys, hook_val;
static idx_num_memo hook_nums; /* reset by every idx_hash_hook call */
static plan *plans;
static size_t plans_cap;

int idx_expired(int64_t expire_ms, int64_t now_ms)
{
    return expire_ms > 0 && expire_ms <= now_ms;
}

/* The prefix match of one call, kept for the definitions that follow with
 * the same prefix (the usual case: every index of a key family shares its
 * prefix), so a key is compared with each distinct prefix once: equal
 * classes are equal prefixes (Invariant C5). */
typedef struct prefix_memo {
    int valid;
    size_t cls;
    int match;
} prefix_memo;

static int memo_match(prefix_memo *m, const idx_def *d, const char *key, size_t klen)
{
    if (d->ft) return idx_def_prefix_match(d, key, klen); /* several prefixes */
    if (!m->valid || m->cls != d->prefix_class) {
        m->valid = 1;
        m->cls = d->prefix_class;
        m->match = klen >= d->plen && memcmp(key, d->prefix, d->plen) == 0;
    }
    return m->match;
}

int idx_wants(void *hctx, int db, const char *key, size_t klen)
{
    (void)hctx;
    if (db < 0 || db >= KS_DATABASES || !idx_g.dbs_with_index[db]) return 0;
    prefix_memo memo = {0};
    for (size_t i = 0; i < idx_g.ndefs; i++) {
        const idx_def *d = idx_g.defs[i];
        if (d->db == db && memo_match(&memo, d, key, klen)) return 1;
    }
    return 0;
}

/* Appends the entry key of (key, f) for d to hook_keys; returns as
 * idx_entry_key (hook_keys is left as it was unless it returns 1). */
static int plan_key(idx_def *d, const char *key, size_t klen, const ks_field *f, size_t n,
                    size_t *off, size_t *len, size_t *bad)
{
    size_t at = hook_keys.len;
    int r = idx_entry_key_append(d, key, klen, f, n, &hook_keys, bad, &hook_nums);
    if (r == 1) {
        *off = at;
        *len = hook_keys.len - at;
    }
    return r;
}

ks_status idx_unique_holder(ks_ctx *ctx, const char *ek, size_t ekl, const char *key, size_t klen,
                            char **val, size_t *vlen, int *held)
{
    *held = 0;
    eng_status st = eng_get_batch(idx_g.eng, NULL, ctx->batch, ek, ekl, val, vlen);
    if (st == ENG_NOTFOUND) return KS_OK;
    if (st != ENG_OK) return idx_fail(ctx, "ERR index read failed: %s", eng_last_error());
    int64_t exp = idx_entry_expire(*val, *vlen);
    const char *owner = *val + IDX_EXPIRE_LEN;
    size_t olen = *vlen >= IDX_EXPIRE_LEN ? *vlen - IDX_EXPIRE_LEN : 0;
    int same = olen == klen && memcmp(owner, key, klen) == 0;
    *held = exp >= 0 && !same && !idx_expired(exp, ctx->now_ms) ? 1 : same ? 2 : 0;
    return KS_OK;
}

/* Do the old and the new content agree on every schema field of d (both
 * absent, or the same bytes)? Then d's entry key is the same before and
 * after, whatever the other fields did, and needs no encoding to know it. */
static int schema_unchanged(const idx_def *d, const ks_field *old_f, size_t old_n,
                            const ks_field *new_f, size_t new_n)
{
    for (size_t i = 0; i < d->nfields; i++) {
        const ks_field *a = idx_find_field(old_f, old_n, &d->fields[i]);
        const ks_field *b = idx_find_field(new_f, new_n, &d->fields[i]);
        if (!a != !b) return 0;
        if (a && (a->vl != b->vl || (a->v != b->v && memcmp(a->v, b->v, a->vl) != 0))) return 0;
    }
    return 1;
}

static ks_status plan_one(ks_ctx *ctx, plan *p, const char *key, size_t klen, const ks_field *old_f,
                          size_t old_n, int had_old, const ks_field *new_f, size_t new_n,
                          int has_new)
{
    idx_def *d = p->d;
    size_t bad = 0;
    /* The prefix matched (the caller checked); what is left of "active" is
     * the build cursor (C3). */
    int active = !d->building || idx_def_cursor_covers(d, key, klen);
    if (had_old && has_new && active && schema_unchanged(d, old_f, old_n, new_f, new_n)) {
        /* Both contents give the same key, or both none; a NUMERIC value
         * that is not a number was refused when it was written (C3), so the
         * new content cannot be refused now either. */
        p->unchanged = 1;
        return KS_OK;
    }
    if (has_new) {
        int r = plan_key(d, key, klen, new_f, new_n, &p->new_off, &p->new_len, &bad);
        if (r < 0)
            return idx_fail(ctx, "ERR field '%s' of index '%s' is NUMERIC: value is not a number",
                            idx_printable(d->fields[bad].name, d->fields[bad].len, 0),
                            idx_printable(d->name, d->nlen, 1));
        p->has_new = r == 1 && active;
    }
    if (had_old && active) {
        /* An old value that is not a number cannot have an entry (C3). */
        p->has_old = plan_key(d, key, klen, old_f, old_n, &p->old_off, &p->old_len, &bad) == 1;
    }
    p->same = p->has_old && p->has_new && p->old_len == p->new_len &&
              memcmp(hook_keys.data + p->old_off, hook_keys.data + p->new_off, p->new_len) == 0;
    if (!p->has_new || !d->unique || p->same) return KS_OK;
    char *val = NULL;
    size_t vlen = 0;
    int held = 0;
    ks_status st = idx_unique_holder(ctx, hook_keys.data + p->new_off, p->new_len, key, klen, &val,
                                     &vlen, &held);
    if (st == KS_OK && held == 1)
        st = idx_fail(ctx, "ERR UNIQUE index '%s': the value is already held by key '%s'",
                      idx_printable(d->name, d->nlen, 0),
                      idx_printable(val + IDX_EXPIRE_LEN, vlen - IDX_EXPIRE_LEN, 1));
    if (val) eng_free(val); /* NULL for a value nobody holds: the usual case */
    return st;
}

/* Deletes an old UNIQUE entry only while it still names key: a hash that
 * took over the value of an expired one owns the entry now. */
static void delete_old(ks_ctx *ctx, const plan *p, const char *key, size_t klen)
{
    const char *ek = hook_keys.data + p->old_off;
    if (p->d->unique) {
        char *val = NULL;
        size_t vlen = 0;
        int held = 0;
        if (idx_unique_holder(ctx, ek, p->old_len, key, klen, &val, &vlen, &held) != KS_OK) {
            ks_ctx_reset(ctx); /* the delete below is the safe choice */
            held = 2;
        }
        if (val) eng_free(val);
        if (held != 2) return;
    }
    eng_batch_delete(ctx->batch, ek, p->old_len);
}

/* Plans every IDX index of ctx->db whose prefix matches key into plans[];
 * sets *np and *any_ft (an FT index matches too). */
static ks_status plan_all(ks_ctx *ctx, const char *key, size_t klen, const ks_field *old_f,
                          size_t old_n, int had_old, const ks_field *new_f, size_t new_n,
                          int has_new, size_t *np, int *any_ft)
{
    prefix_memo memo = {0};
    for (size_t i = 0; i < idx_g.ndefs; i++) {
        idx_def *d = idx_g.defs[i];
        if (d->db != ctx->db || !memo_match(&memo, d, key, klen)) continue;
        if (d->ft) { /* FT indexes never reject: written after the checks */
            *any_ft = 1;
            continue;
        }
        if (*np == plans_cap) {
            plans_cap = plans_cap ? plans_cap * 2 : 8;
            plans = realloc(plans, plans_cap * sizeof(*plans));
            if (!plans) abort();
        }
        plan *p = &plans[(*np)++];
        memset(p, 0, sizeof(*p));
        p->d = d;
        ks_status st = plan_one(ctx, p, key, klen, old_f, old_n, had_old, new_f, new_n, has_new);
        if (st != KS_OK) return st;
    }
    return KS_OK;
}

ks_status idx_hash_hook(void *hctx, ks_ctx *ctx, const char *key, size_t klen,
                        const ks_field *old_f, size_t old_n, int had_old, const ks_field *new_f,
                        size_t new_n, int has_new, int64_t new_expire_ms)
{
    (void)hctx;
    size_t np = 0;
    int any_ft = 0;
    hook_keys.len = 0;
    hook_nums.n = 0; /* the pairs of the last call may have moved or changed */
    /* plan_all and the rewrite below build keys only for definitions whose
     * prefix matched (memo_match) */
    hook_nums.key_has_prefix = 1;
    ks_status st =
        plan_all(ctx, key, klen, old_f, old_n, had_old, new_f, new_n, has_new, &np, &any_ft);
    if (st != KS_OK) return st;
    /* An entry whose key did not change is rewritten only if the hash's
     * expiry changed (EXPIRE, PERSIST, RENAME or COPY over it): one read of
     * the old expiry saves a put per unchanged index on an update. */
    int64_t old_exp = -1;
    for (size_t i = 0; i < np && old_exp == -1; i++) {
        const plan *p = &plans[i];
        if ((p->same || p->unchanged) && ks_expire_get(ctx, key, klen, &old_exp) != KS_OK) {
            ks_ctx_reset(ctx);
            old_exp = -2; /* unknown: rewrite */
        }
    }
    /* hook_val holds the value of: -1 nothing yet, 1 a UNIQUE index (it
     * names the key), 2 + bare_value a non-UNIQUE one (the expiry alone, the
     * same for every index of that format). */
    int value_for = -1;
    for (size_t i = 0; i < np; i++) {
        plan *p = &plans[i];
        if (p->unchanged) {
            size_t bad = 0;
            if (old_exp == new_expire_ms) continue; /* nothing to write */
            /* The entry stays and its value carries the expiry: rewrite it. */
            if (plan_key(p->d, key, klen, new_f, new_n, &p->new_off, &p->new_len, &bad) != 1)
                continue; /* the hash has no entry in d, before or after */
            p->has_old = p->has_new = p->same = 1;
        }
        if (p->has_old || p->has_new) p->d->gen++;
        if (p->has_old && !p->same) delete_old(ctx, p, key, klen);
        if (!p->has_new || (p->same && old_exp == new_expire_ms)) continue;
        int kind = p->d->unique ? 1 : 2 + p->d->bare_value;
        if (kind == 1 || value_for != kind) {
            idx_entry_value(p->d, key, klen, new_expire_ms, &hook_val);
            value_for = kind;
        }
        eng_batch_put(ctx->batch, hook_keys.data + p->new_off, p->new_len, hook_val.data,
                      hook_val.len);
    }
    if (any_ft)
        return ft_hash_hook(ctx, key, klen, old_f, old_n, had_old, new_f, new_n, has_new,
                            new_expire_ms);
    return KS_OK;
}

ks_status idx_flush_hook(void *fctx, ks_ctx *ctx, int db)
{
    (void)fctx;
    idx_buf start = {0}, end = {0};
    for (size_t i = 0; i < idx_g.ndefs; i++) {
        idx_def *d = idx_g.defs[i];
        if (d->db != db) continue;
        start.len = end.len = 0;
        idx_key_entry_prefix(&start, d->id);
        idx_buf_append(&end, start.data, start.len);
        idx_key_prefix_successor(&end);
        eng_batch_delete_range(ctx->batch, start.data, start.len, end.data, end.len);
        d->gen++;
        if (d->building) { /* an empty db is fully built (C3) */
            d->building = 0;
            d->has_cursor = 0;
            idx_catalog_save(ctx, d);
        }
    }
    idx_buf_free(&start);
    idx_buf_free(&end);
    return KS_OK;
}

int idx_entry_filter(const char *key, size_t klen, const char *val, size_t vlen, int64_t now_ms)
{
    if (klen < IDX_ENTRY_PREFIX_LEN || key[0] != IDX_NS_BYTE || key[1] != IDX_TAG_ENTRY) return 0;
    int64_t exp = idx_entry_expire(val, vlen);
    return exp > 0 && idx_expired(exp, now_ms);
}

void idx_maintain_free(void)
{
    idx_buf_free(&hook_keys);
    idx_buf_free(&hook_val);
    free(plans);
    plans = NULL;
    plans_cap = 0;
}
