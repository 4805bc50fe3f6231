/*
 * build.c -- IDX.CREATE over existing data: an index starts "building" and
 * is filled in key order, a bounded number of hashes at a time.
 *
 * Algorithm (Invariant C3 in catalog.h): the build keeps a cursor, the last
 * hash key it covered. The write hook maintains the index for keys <= the
 * cursor; a build step reads the hashes after the cursor (ks_scan_hashes,
 * through the pending batch), puts their entries, and moves the cursor, all
 * in one batch with the updated definition. A write to a key beyond the
 * cursor needs no entry yet: the build reads its latest content when it gets
 * there. The stored cursor makes a build resume where it stopped after a
 * restart or a crash.
 *
 * Failure: a hash whose NUMERIC field is not a number, or a second hash
 * with the same UNIQUE value, fails the build. IDX.CREATE runs the build
 * itself for up to IDX_CREATE_BUDGET_US, so over small data it finishes
 * inside the command and a failure is its error reply (the server rolls
 * back everything the command wrote, definition included). A build that
 * continues in the background and then fails drops the index (definition
 * and entries, in the step's batch) and leaves the reason in INFO's
 * idx_last_build_error; IDX.INFO and IDX.RANGE then say there is no such
 * index.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "index/catalog.h"
#include "index/ft_def.h"
#include "index/index.h"

#define BUILD_CHUNK 128         /* hashes per ks_scan_hashes call */
#define IDX_STEP_BUDGET_US 3000 /* one background step */

typedef struct build_visit {
    ks_ctx *ctx;
    idx_def *d;
    idx_buf key, val;
    ks_status st;
} build_visit;

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int build_one(void *arg, const char *key, size_t klen, const ks_field *f, size_t n)
{
    build_visit *bv = arg;
    idx_def *d = bv->d;
    size_t bad = 0;
    if (d->ft) {
        if (ft_build_one(bv->ctx, d, key, klen, f, n) == 0) return 0;
        bv->st = KS_ERR_ENGINE;
        return 1;
    }
    int r = idx_entry_key(d, key, klen, f, n, &bv->key, &bad);
    if (r < 0) {
        bv->st = idx_fail(
            bv->ctx, "ERR index '%s' cannot be built: field '%s' of key '%s' is not a number",
            idx_printable(d->name, d->nlen, 0),
            idx_printable(d->fields[bad].name, d->fields[bad].len, 1), idx_printable(key, klen, 2));
        return 1;
    }
    if (r == 0) return 0;
    if (d->unique) {
        char *v = NULL;
        size_t vl = 0;
        int held = 0;
        bv->st = idx_unique_holder(bv->ctx, bv->key.data, bv->key.len, key, klen, &v, &vl, &held);
        if (bv->st == KS_OK && held == 1)
            bv->st = idx_fail(bv->ctx,
                              "ERR UNIQUE index '%s' cannot be built: keys '%s' and '%s' hold "
                              "the same value",
                              idx_printable(d->name, d->nlen, 0),
                              idx_printable(v + IDX_EXPIRE_LEN, vl - IDX_EXPIRE_LEN, 1),
                              idx_printable(key, klen, 2));
        eng_free(v);
        if (bv->st != KS_OK) return 1;
    }
    int64_t exp = 0;
    ks_status st = ks_expire_get(bv->ctx, key, klen, &exp);
    if (st != KS_OK) {
        bv->st = st == KS_NOTFOUND ? KS_OK : st;
        return st == KS_NOTFOUND ? 0 : 1;
    }
    idx_entry_value(d, key, klen, exp, &bv->val);
    eng_batch_put(bv->ctx->batch, bv->key.data, bv->key.len, bv->val.data, bv->val.len);
    d->gen++;
    return 0;
}

/* Scans up to BUILD_CHUNK hashes after d's cursor. Returns KS_OK (with
 * d->building cleared when the scan reached the end) or an error. */
static ks_status build_chunk(ks_ctx *ctx, idx_def *d, build_visit *bv)
{
    char *last = NULL;
    size_t last_len = 0;
    bv->st = KS_OK;
    free(ctx->err); /* ks_scan_hashes reports a failed read only through ctx->err */
    ctx->err = NULL;
    uint64_t n = ks_scan_hashes(ctx, NULL, d->prefix, d->plen, d->has_cursor ? d->cursor : NULL,
                                d->clen, BUILD_CHUNK, build_one, bv, &last, &last_len);
    if (bv->st == KS_OK && ctx->err) bv->st = KS_ERR_ENGINE; /* a short scan is not the end */
    if (bv->st != KS_OK) {
        free(last);
        if (bv->st == KS_ERR_ENGINE && !ctx->err)
            return idx_fail(ctx, "ERR index build failed: %s", eng_last_error());
        return bv->st;
    }
    d->scanned += n;
    if (n > 0 && last) {
        free(d->cursor);
        d->cursor = last;
        d->clen = last_len;
        d->has_cursor = 1;
        last = NULL;
    }
    free(last);
    if (n < BUILD_CHUNK) {
        d->building = 0;
        free(d->cursor);
        d->cursor = NULL;
        d->clen = 0;
        d->has_cursor = 0;
    }
    return KS_OK;
}

ks_status idx_build_run(ks_ctx *ctx, idx_def *d, uint64_t budget_us)
{
    build_visit bv = {.ctx = ctx, .d = d};
    int saved_db = ctx->db;
    uint64_t start = now_us();
    ks_status st = KS_OK;
    ctx->db = d->db;
    while (d->building) {
        st = build_chunk(ctx, d, &bv);
        if (st != KS_OK || now_us() - start >= budget_us) break;
    }
    ctx->db = saved_db;
    idx_buf_free(&bv.key);
    idx_buf_free(&bv.val);
    if (st == KS_OK) idx_catalog_save(ctx, d);
    return st;
}

int idx_build_step(ks_ctx *ctx)
{
    idx_def *d = NULL;
    for (size_t i = 0; i < idx_g.ndefs && !d; i++)
        if (idx_g.defs[i]->building) d = idx_g.defs[i];
    if (!d) return 0;
    ks_status st = idx_build_run(ctx, d, IDX_STEP_BUDGET_US);
    if (st != KS_OK) {
        free(idx_g.last_build_error);
        idx_g.last_build_error = ctx->err ? strdup(ctx->err) : strdup("ERR index build failed");
        ks_ctx_reset(ctx);
        idx_catalog_erase(ctx, d);
        idx_catalog_remove(d);
    }
    for (size_t i = 0; i < idx_g.ndefs; i++)
        if (idx_g.defs[i]->building) return 1;
    return 0;
}
