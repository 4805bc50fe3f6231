/*
 * cmd_hll.c -- PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST on
 * HyperLogLog strings in Redis's representation (src/keyspace/ks_hll.h),
 * with Redis 7.0's replies and error texts (hyperloglog.c). Each command
 * reads its keys once through the keyspace and writes at most one value:
 * PFADD and PFMERGE the HLL they change, PFCOUNT of one key its refreshed
 * cached count (as Redis, so GET returns the same bytes afterwards). PFADD
 * to a dense HLL, which is chunked (ENCODING.md, "Strings"), reads and
 * writes only the chunks of the registers it raises.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_hll.h"
#include "server/config.h"
#include "server/server.h"

#define ERR_HLL_TYPE "-WRONGTYPE Key is not a valid HyperLogLog string value."
#define ERR_HLL_CORRUPT "-INVALIDOBJ Corrupted HLL object detected"

static size_t sparse_max(void)
{
    return (size_t)cfg.hll_sparse_max_bytes;
}

/* Opens the HLL at key for a change. Returns NULL with *s open (s->exists
 * 0 when absent; the caller closes it), or the error text with s closed --
 * ks errors are replied here and come back as "". */
static const char *open_hll_as(client *c, const arg *key, ks_str *s, int ranged)
{
    ks_status st = ranged ? ks_str_open_ranged(client_ks(c), key->ptr, key->len, s)
                          : ks_str_open(client_ks(c), key->ptr, key->len, s);
    if (st != KS_OK) {
        ks_str_close(s);
        add_reply_ks_error(c, st, client_ks(c));
        return "";
    }
    /* s->big (ranged, chunked): the caller checks the header */
    if (s->exists && !s->big && !ks_hll_valid((unsigned char *)s->v.p, s->v.n)) {
        ks_str_close(s);
        return ERR_HLL_TYPE;
    }
    return NULL;
}

static const char *open_hll(client *c, const arg *key, ks_str *s)
{
    return open_hll_as(c, key, s, 0);
}

/* Replies err unless it is "" (already replied). */
static void reply_err(client *c, const char *err)
{
    if (*err) add_reply_error(c, err);
}

/* Replies the command's failure, err or else st, and returns 1; returns 0
 * when there is none (the caller replies its result). */
static int reply_failure(client *c, const char *err, ks_status st)
{
    if (err)
        reply_err(c, err);
    else if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        return 0;
    return 1;
}

/* PFADD's adds to a chunked HLL (s opened ranged, s.big): dense, as only
 * a dense one is that long with the default hll-sparse-max-bytes, it
 * reads and writes the chunks of the registers that grow and of the
 * cached count's stale bit, not the 12 KB. NULL, or the error text ("":
 * not dense, the caller takes the whole-value path). */
static const char *pfadd_chunked(client *c, ks_str *s, int *updated, ks_status *st)
{
    unsigned char hdr[KS_HLL_HDR];
    if ((*st = ks_str_read(s, 0, hdr, sizeof(hdr))) != KS_OK) return NULL;
    if (!ks_hll_valid(hdr, (size_t)ks_str_len(s))) return ERR_HLL_TYPE;
    if (ks_hll_encoding(hdr) != KS_HLL_DENSE) return "";
    for (int j = 2; j < c->argc && *st == KS_OK; j++) {
        int grew;
        *st = ks_hll_dense_add_at(s, c->argv[j].ptr, c->argv[j].len, &grew);
        *updated += grew;
    }
    if (*st == KS_OK && *updated && !(hdr[15] & 0x80)) {
        ks_hll_cache_invalidate(hdr);
        *st = ks_str_update(s, 15, &hdr[15], 1);
    }
    return NULL;
}

void cmd_pfadd(client *c)
{
    ks_str s;
    ks_status st = KS_OK;
    int updated = 0;
    const char *err = open_hll_as(c, &c->argv[1], &s, 1);
    if (!err && s.big) {
        err = pfadd_chunked(c, &s, &updated, &st);
        if (err && !*err) { /* not dense: the whole value */
            ks_str_close(&s);
            updated = 0;
            err = open_hll(c, &c->argv[1], &s);
        } else {
            goto write;
        }
    }
    if (err) {
        reply_err(c, err);
        return;
    }
    if (!s.exists) {
        updated = 1; /* creating the key is a change even with no element */
        if (ks_hll_init(&s.v) < 0) err = "ERR out of memory";
    }
    for (int j = 2; j < c->argc && !err; j++) {
        int r = ks_hll_add(&s.v, c->argv[j].ptr, c->argv[j].len, sparse_max());
        if (r < 0) err = ERR_HLL_CORRUPT;
        updated += r > 0;
    }
    if (!err && updated) ks_hll_cache_invalidate((unsigned char *)s.v.p);
write:
    if (!err && st == KS_OK && updated) {
        st = ks_str_write(&s);
        if (st == KS_OK) notify_arg(c, NOTIFY_STRING, "pfadd", 1);
    }
    ks_str_close(&s);
    if (!reply_failure(c, err, st)) add_reply_long_long(c, updated ? 1 : 0);
}

/* Max-merges the HLL at key (if any) into regs; *dense |= it is dense.
 * NULL, or the error text ("" when replied). */
static const char *merge_key(client *c, const arg *key, uint8_t *regs, int *dense)
{
    ks_val v;
    ks_status st = ks_get(client_ks(c), key->ptr, key->len, &v);
    const char *err = NULL;
    if (st == KS_NOTFOUND) return NULL; /* an empty HLL */
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        err = "";
    } else if (!ks_hll_valid((const unsigned char *)v.p, v.n)) {
        err = ERR_HLL_TYPE;
    } else {
        *dense |= ks_hll_encoding((const unsigned char *)v.p) == KS_HLL_DENSE;
        if (ks_hll_merge(regs, (const unsigned char *)v.p, v.n) < 0) err = ERR_HLL_CORRUPT;
    }
    ks_val_free(&v);
    return err;
}

/* PFCOUNT of several keys: the count of their union, nothing written. */
static void pfcount_union(client *c)
{
    uint8_t *regs = calloc(KS_HLL_REGISTERS, 1);
    const char *err = regs ? NULL : "ERR out of memory";
    int dense = 0;
    for (int j = 1; j < c->argc && !err; j++)
        err = merge_key(c, &c->argv[j], regs, &dense);
    if (!reply_failure(c, err, KS_OK))
        add_reply_long_long(c, (long long)ks_hll_count_registers(regs));
    free(regs);
}

void cmd_pfcount(client *c)
{
    if (c->argc > 2) {
        pfcount_union(c);
        return;
    }
    ks_str s;
    const char *err = open_hll(c, &c->argv[1], &s);
    if (err) {
        reply_err(c, err);
        return;
    }
    uint64_t card = 0;
    ks_status st = KS_OK;
    unsigned char *p = (unsigned char *)s.v.p;
    if (s.exists && !ks_hll_cache_get(p, &card)) {
        if (ks_hll_count(p, s.v.n, &card) < 0) {
            err = ERR_HLL_CORRUPT;
        } else { /* refresh the cached count, as Redis does */
            ks_hll_cache_set(p, card);
            st = ks_str_write(&s);
        }
    }
    ks_str_close(&s);
    if (!reply_failure(c, err, st)) add_reply_long_long(c, (long long)card);
}

/* PFMERGE dest src ...: dest is itself one of the inputs. */
void cmd_pfmerge(client *c)
{
    ks_str s;
    memset(&s, 0, sizeof(s)); /* closing it is safe on every path */
    uint8_t *regs = calloc(KS_HLL_REGISTERS, 1);
    int dense = 0;
    const char *err = regs ? open_hll(c, &c->argv[1], &s) : "ERR out of memory";
    if (!err && s.exists) {
        dense = ks_hll_encoding((unsigned char *)s.v.p) == KS_HLL_DENSE;
        if (ks_hll_merge(regs, (unsigned char *)s.v.p, s.v.n) < 0) err = ERR_HLL_CORRUPT;
    }
    for (int j = 2; j < c->argc && !err; j++)
        err = merge_key(c, &c->argv[j], regs, &dense);
    if (!err && !s.exists && ks_hll_init(&s.v) < 0) err = "ERR out of memory";
    /* A dense input makes the result dense at once, as in Redis. */
    if (!err && dense && ks_hll_to_dense(&s.v) < 0) err = ERR_HLL_CORRUPT;
    ks_status st = KS_OK;
    if (!err) {
        for (int i = 0; i < KS_HLL_REGISTERS; i++)
            if (regs[i]) ks_hll_raise(&s.v, i, regs[i], sparse_max());
        ks_hll_cache_invalidate((unsigned char *)s.v.p);
        st = ks_str_write(&s);
        /* As Redis: a PFMERGE is a mass add. */
        if (st == KS_OK) notify_arg(c, NOTIFY_STRING, "pfadd", 1);
    }
    ks_str_close(&s);
    free(regs);
    if (!reply_failure(c, err, st)) add_reply_ok(c);
}

/* PFDEBUG GETREG | DECODE | ENCODING | TODENSE key */
void cmd_pfdebug(client *c)
{
    const arg *sub = &c->argv[1], *key = &c->argv[2];
    ks_str s;
    const char *err = open_hll(c, key, &s);
    if (err) {
        reply_err(c, err);
        return;
    }
    if (!s.exists) {
        ks_str_close(&s);
        add_reply_error(c, "The specified key does not exist");
        return;
    }
    ks_status st = KS_OK;
    int sparse = ks_hll_encoding((unsigned char *)s.v.p) == KS_HLL_SPARSE, conv = 0;
    if (arg_is(sub, "getreg") || arg_is(sub, "todense")) {
        /* Both leave the value dense. */
        conv = ks_hll_to_dense(&s.v);
        if (conv > 0) st = ks_str_write(&s);
    }
    if (conv < 0) {
        add_reply_error(c, ERR_HLL_CORRUPT);
    } else if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
    } else if (arg_is(sub, "getreg")) {
        add_reply_array_len(c, KS_HLL_REGISTERS);
        for (int i = 0; i < KS_HLL_REGISTERS; i++)
            add_reply_long_long(c, ks_hll_dense_get((unsigned char *)s.v.p, i));
    } else if (arg_is(sub, "todense")) {
        add_reply_long_long(c, conv);
    } else if (arg_is(sub, "encoding")) {
        add_reply_status(c, sparse ? "sparse" : "dense");
    } else if (arg_is(sub, "decode")) {
        ks_strbuf out = {0};
        if (!sparse)
            add_reply_error(c, "HLL encoding is not sparse");
        else if (ks_hll_decode((unsigned char *)s.v.p, s.v.n, &out) < 0)
            add_reply_error(c, "ERR out of memory");
        else
            add_reply_bulk(c, out.p ? out.p : "", out.n);
        ks_strbuf_free(&out);
    } else {
        add_reply_error_fmt(c, "Unknown PFDEBUG subcommand '%s'", sub->ptr);
    }
    ks_str_close(&s);
}

void cmd_pfselftest(client *c)
{
    char err[256];
    if (ks_hll_selftest(sparse_max(), err, sizeof(err)) < 0)
        add_reply_error(c, err);
    else
        add_reply_ok(c);
}
