/*
 * cmd_lcs.c -- LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN], as
 * Redis 7.0: the longest common subsequence of two strings (a missing key
 * is the empty string), its length, or the matching ranges.
 *
 * The algorithm is the textbook dynamic program Redis uses, so that the
 * ranges reported are the same ones: a table L of (alen+1) x (blen+1)
 * lengths, L[i][j] = LCS length of a[0..i) and b[0..j); then a walk back
 * from (alen, blen) that takes a matching byte when a[i-1] == b[j-1], else
 * steps towards the larger neighbour, preferring j-1 on a tie. Contiguous
 * matches (in both strings) form one range, emitted when the walk leaves
 * it. The table is transient memory bounded by proto-max-bulk-len, with
 * Redis's error texts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/config.h"
#include "server/server.h"

typedef struct lcs_opts {
    int len, idx, withmatchlen;
    long long minmatchlen;
} lcs_opts;

/* Parses the options after the two keys; replies and returns -1 on error. */
static int lcs_parse(client *c, lcs_opts *o)
{
    memset(o, 0, sizeof(*o));
    for (int j = 3; j < c->argc; j++) {
        const arg *a = &c->argv[j];
        if (arg_is(a, "idx")) {
            o->idx = 1;
        } else if (arg_is(a, "len")) {
            o->len = 1;
        } else if (arg_is(a, "withmatchlen")) {
            o->withmatchlen = 1;
        } else if (arg_is(a, "minmatchlen") && j + 1 < c->argc) {
            if (arg_to_ll(c, &c->argv[++j], &o->minmatchlen) != 0) return -1;
            if (o->minmatchlen < 0) o->minmatchlen = 0;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    if (o->len && o->idx) {
        add_reply_error(c, "If you want both the length and indexes, please just use IDX.");
        return -1;
    }
    return 0;
}

/* Reads the string at argv[i] into *v (empty when absent); replies and
 * returns -1 when it is not a string or the read fails. */
static int lcs_read(client *c, int i, ks_val *v)
{
    ks_status st = ks_get(client_ks(c), c->argv[i].ptr, c->argv[i].len, v);
    if (st == KS_OK) return 0;
    if (st == KS_NOTFOUND) {
        notify_keymiss(c, i);
        memset(v, 0, sizeof(*v));
        return 0;
    }
    if (st == KS_ERR_WRONGTYPE)
        add_reply_error(c, "The specified keys must contain string values");
    else
        add_reply_ks_error(c, st, client_ks(c));
    return -1;
}

/* Fills the table; L has (alen+1)*(blen+1) cells, row-major by i. */
static void lcs_table(const unsigned char *a, uint32_t alen, const unsigned char *b, uint32_t blen,
                      uint32_t *L)
{
    size_t w = (size_t)blen + 1;
    memset(L, 0, w * sizeof(*L));
    for (uint32_t i = 1; i <= alen; i++) {
        uint32_t *row = L + i * w, *up = row - w;
        row[0] = 0;
        for (uint32_t j = 1; j <= blen; j++) {
            if (a[i - 1] == b[j - 1])
                row[j] = up[j - 1] + 1;
            else
                row[j] = up[j] > row[j - 1] ? up[j] : row[j - 1];
        }
    }
}

static void lcs_emit_range(client *c, const lcs_opts *o, uint32_t as, uint32_t ae, uint32_t bs,
                           uint32_t be, long *n)
{
    uint32_t mlen = ae - as + 1;
    if (o->minmatchlen && mlen < (unsigned long long)o->minmatchlen) return;
    add_reply_array_len(c, 2 + o->withmatchlen);
    add_reply_array_len(c, 2);
    add_reply_long_long(c, as);
    add_reply_long_long(c, ae);
    add_reply_array_len(c, 2);
    add_reply_long_long(c, bs);
    add_reply_long_long(c, be);
    if (o->withmatchlen) add_reply_long_long(c, mlen);
    (*n)++;
}

/* The walk back: writes the subsequence into out (when not NULL) and
 * replies the ranges (when o->idx); returns how many ranges it replied. */
static long lcs_walk(client *c, const lcs_opts *o, const unsigned char *a, uint32_t alen,
                     const unsigned char *b, uint32_t blen, const uint32_t *L, char *out)
{
    size_t w = (size_t)blen + 1;
    uint32_t i = alen, j = blen, k = L[(size_t)alen * w + blen];
    uint32_t as = 0, ae = 0, bs = 0, be = 0;
    int open = 0; /* a range is being tracked */
    long n = 0;
    while (i > 0 && j > 0) {
        int emit = 0;
        if (a[i - 1] == b[j - 1]) {
            if (out) out[k - 1] = (char)a[i - 1];
            if (!open) {
                as = ae = i - 1;
                bs = be = j - 1;
                open = 1;
            } else if (as == i && bs == j) {
                as--, bs--; /* contiguous in both: extend backwards */
            } else {
                emit = 1;
            }
            if (as == 0 || bs == 0) emit = 1;
            k--, i--, j--;
        } else {
            if (L[(size_t)(i - 1) * w + j] > L[(size_t)i * w + j - 1])
                i--;
            else
                j--;
            if (open) emit = 1;
        }
        if (emit) {
            if (o->idx) lcs_emit_range(c, o, as, ae, bs, be, &n);
            open = 0;
        }
    }
    return n;
}

static void lcs_reply(client *c, const lcs_opts *o, const ks_val *va, const ks_val *vb)
{
    const unsigned char *a = (const unsigned char *)va->p, *b = (const unsigned char *)vb->p;
    if (va->n >= UINT32_MAX - 1 || vb->n >= UINT32_MAX - 1)
        return add_reply_error(c, "String too long for LCS");
    uint32_t alen = (uint32_t)va->n, blen = (uint32_t)vb->n;
    unsigned long long cells = (unsigned long long)(alen + 1ULL) * (blen + 1ULL);
    unsigned long long bytes = cells * sizeof(uint32_t);
    if (bytes > (unsigned long long)cfg.proto_max_bulk_len)
        return add_reply_error(
            c, "Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    uint32_t *L = bytes < SIZE_MAX ? malloc((size_t)bytes) : NULL;
    if (!L)
        return add_reply_error(c,
                               "Insufficient memory, failed allocating transient memory for LCS");
    lcs_table(a, alen, b, blen, L);
    uint32_t total = L[(size_t)alen * (blen + 1) + blen];
    if (o->idx) {
        add_reply_map_len(c, 2);
        add_reply_bulk_cstr(c, "matches");
        void *len = add_reply_deferred_len(c);
        long n = lcs_walk(c, o, a, alen, b, blen, L, NULL);
        set_deferred_array_len(c, len, n);
        add_reply_bulk_cstr(c, "len");
        add_reply_long_long(c, total);
    } else if (o->len) {
        add_reply_long_long(c, total);
    } else {
        char *out = malloc(total ? total : 1);
        if (!out) {
            free(L);
            return add_reply_error(
                c, "Insufficient memory, failed allocating transient memory for LCS");
        }
        lcs_walk(c, o, a, alen, b, blen, L, out);
        add_reply_bulk(c, out, total);
        free(out);
    }
    free(L);
}

void cmd_lcs(client *c)
{
    lcs_opts o;
    ks_val va = {0}, vb = {0};
    if (lcs_read(c, 1, &va) != 0) goto cleanup;
    if (lcs_read(c, 2, &vb) != 0) goto cleanup;
    if (lcs_parse(c, &o) != 0) goto cleanup;
    lcs_reply(c, &o, &va, &vb);
cleanup:
    ks_val_free(&va);
    ks_val_free(&vb);
}
