/*
 * check.c -- IDX.CHECK: compares every ready index of a db with the hashes
 * and reports each disagreement, for tests and for operators.
 *
 * Two passes through one view (Invariant C3 says they must both be clean):
 *   1. every live hash the index covers has its entry, with the hash's
 *      expiry in it (and, for UNIQUE, its own key as the holder);
 *   2. every live entry names a live hash whose content yields exactly that
 *      entry key.
 * Cost: O(hashes under the prefix + entries), a point read per hash and per
 * entry. Nothing is written. A damaged table block met on the way is
 * stepped over and reported as a "damaged <index> ..." line (the keys it
 * held go unchecked), so one bad block does not fail the whole check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/catalog.h"
#include "index/ft_def.h"
#include "index/index.h"

typedef struct checker {
    ks_ctx *ctx;
    const eng_snapshot *snap;
    eng_batch *b;
    const idx_def *d;
    void (*fn)(void *arg, const char *line);
    void *arg;
    long long problems;
    idx_buf key, val;
    int failed;
} checker;

static void report(checker *c, const char *what, const char *key, size_t klen)
{
    char line[512];
    snprintf(line, sizeof(line), "%s %s %s", what, idx_printable(c->d->name, c->d->nlen, 0),
             idx_printable(key, klen, 1));
    c->fn(c->arg, line);
    c->problems++;
}

static eng_status get_entry(checker *c, const char *k, size_t kl, char **v, size_t *vl)
{
    return c->b ? eng_get_batch(idx_g.eng, c->snap, c->b, k, kl, v, vl)
                : eng_get(idx_g.eng, c->snap, k, kl, v, vl);
}

/* "damaged <index> <what>": a damaged table block the check stepped over;
 * the entries or hashes it held are not checked. */
static void report_damage(checker *c, const char *what)
{
    char line[900];
    snprintf(line, sizeof(line), "damaged %s %s", idx_printable(c->d->name, c->d->nlen, 0), what);
    c->fn(c->arg, line);
    c->problems++;
}

/* Pass 1: called for each live hash under the prefix. */
static int check_hash(void *arg, const char *key, size_t klen, const ks_field *f, size_t n)
{
    checker *c = arg;
    size_t bad = 0;
    int r = idx_entry_key(c->d, key, klen, f, n, &c->key, &bad);
    if (r < 0) report(c, "invalid", key, klen);
    if (r != 1) return 0;
    char *v = NULL;
    size_t vl = 0;
    eng_status es = get_entry(c, c->key.data, c->key.len, &v, &vl);
    if (es == ENG_NOTFOUND) {
        report(c, "missing", key, klen);
        return 0;
    }
    if (es == ENG_CORRUPTION) { /* a damaged block holds the entry: go on */
        report_damage(c, eng_last_error());
        return 0;
    }
    if (es != ENG_OK) {
        c->failed = 1;
        return 1;
    }
    int64_t exp = 0;
    if (ks_expire_get(c->ctx, key, klen, &exp) != KS_OK) exp = -1;
    idx_entry_value(c->d, key, klen, exp, &c->val);
    if (c->val.len != vl || memcmp(c->val.data, v, vl) != 0)
        report(c,
               c->d->unique && (vl < IDX_EXPIRE_LEN ||
                                idx_key_cmp(v + IDX_EXPIRE_LEN, vl - IDX_EXPIRE_LEN, key, klen))
                   ? "missing"
                   : "stale",
               key, klen);
    eng_free(v);
    return 0;
}

/* Pass 2: every live entry of d. */
static void check_entries(checker *c)
{
    idx_buf lo = {0}, hi = {0};
    idx_key_entry_prefix(&lo, c->d->id);
    idx_buf_append(&hi, lo.data, lo.len);
    idx_key_prefix_successor(&hi);
    eng_iter *it = eng_iter_new(idx_g.eng, c->snap, c->b);
    eng_iter_skip_damaged(it);
    for (eng_iter_seek(it, lo.data, lo.len); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl, hkl, n = 0, bad = 0;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl), *hk;
        if (idx_key_cmp(k, kl, hi.data, hi.len) >= 0) break;
        int64_t exp = idx_entry_expire(v, vl);
        if (exp >= 0 && idx_expired(exp, c->ctx->now_ms)) continue;
        if (exp < 0 || idx_entry_hash_key(c->d, k, kl, v, vl, &hk, &hkl) != 0) {
            report(c, "malformed", k, kl);
            continue;
        }
        ks_field *f = NULL;
        ks_status st = ks_hash_read(c->ctx, c->b ? NULL : c->snap, hk, hkl, &f, &n);
        if (st == KS_ERR_ENGINE && c->ctx->err && strstr(c->ctx->err, "Corruption")) {
            report_damage(c, c->ctx->err); /* the hash sits in a damaged block */
            free(c->ctx->err);
            c->ctx->err = NULL;
            continue;
        }
        int ok = st == KS_OK && idx_entry_key(c->d, hk, hkl, f, n, &c->key, &bad) == 1 &&
                 idx_key_cmp(c->key.data, c->key.len, k, kl) == 0;
        if (!ok) report(c, "extra", hk, hkl);
        if (st == KS_OK) ks_fields_free(f, n);
    }
    if (eng_iter_status(it) != ENG_OK) c->failed = 1;
    char what[700];
    for (size_t i = 0, n = eng_iter_damaged(it, 0, NULL, 0); i < n; i++) {
        eng_iter_damaged(it, i, what, sizeof(what));
        report_damage(c, what);
    }
    eng_iter_free(it);
    idx_buf_free(&lo);
    idx_buf_free(&hi);
}

long long idx_check(ks_ctx *ctx, void (*fn)(void *arg, const char *line), void *arg)
{
    checker c = {.ctx = ctx, .fn = fn, .arg = arg};
    c.b = eng_batch_count(ctx->batch) ? ctx->batch : NULL;
    c.snap = eng_snapshot_new(idx_g.eng);
    for (size_t i = 0; i < idx_g.ndefs && !c.failed; i++) {
        c.d = idx_g.defs[i];
        if (c.d->db != ctx->db || c.d->building) continue;
        if (c.d->ft) {
            long long p = ft_check(ctx, c.d, c.snap, c.b, fn, arg);
            if (p < 0)
                c.failed = 1;
            else
                c.problems += p;
            continue;
        }
        char *last = NULL;
        size_t last_len = 0;
        free(ctx->err); /* a failed scan shows only in ctx->err */
        ctx->err = NULL;
        ctx->skip_damaged = 1; /* one bad block does not stop the check */
        ctx->damaged = 0;
        ks_scan_hashes(ctx, c.b ? NULL : c.snap, c.d->prefix, c.d->plen, NULL, 0, UINT64_MAX,
                       check_hash, &c, &last, &last_len);
        ctx->skip_damaged = 0;
        free(last);
        if (ctx->err) c.failed = 1;
        if (ctx->damaged) {
            char what[160];
            snprintf(what, sizeof(what),
                     "%llu damaged table block(s) skipped reading the hashes (the server log "
                     "names them)",
                     (unsigned long long)ctx->damaged);
            report_damage(&c, what);
        }
        if (!c.failed) check_entries(&c);
    }
    eng_snapshot_release(idx_g.eng, c.snap);
    idx_buf_free(&c.key);
    idx_buf_free(&c.val);
    if (c.failed) {
        if (!ctx->err) idx_fail(ctx, "ERR index check failed: %s", eng_last_error());
        return -1;
    }
    return c.problems;
}
