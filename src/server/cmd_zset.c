/*
 * cmd_zset.c -- single-key sorted-set commands: ZADD, ZINCRBY, ZREM,
 * ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK, ZRANDMEMBER, ZSCAN, and the
 * argument parsers and reply writer the other sorted-set and geo command
 * files share (cmd_zset.h). Ranges are in cmd_zset_range.c, the multi-key
 * commands and pops in cmd_zset_ops.c. Replies and error texts follow
 * Redis 7.0 (t_zset.c); the data work is in src/keyspace/ks_zset*.c.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cmd_zset.h"

/* ZRANDMEMBER with a negative count builds |count| replies in memory; as
 * SRANDMEMBER and HRANDFIELD, strata refuses counts that would only
 * exhaust memory (Redis streams them out). */
#define ZRANDMEMBER_MAX_REPEATS (16ll * 1024 * 1024)

/* ---- Shared parsers and replies ---------------------------------------------- */

/* A score of 1-15 decimal digits, with an optional '-', spells an integer
 * below 2^53, exactly the double strtod returns for it ("-0" is -0): the
 * usual ZADD score skips strtod's general path. 0 when a is not one. */
static int small_integer(const arg *a, double *out)
{
    size_t neg = a->len && a->ptr[0] == '-';
    if (a->len - neg == 0 || a->len - neg > 15) return 0;
    uint64_t v = 0;
    for (size_t j = neg; j < a->len; j++) {
        unsigned d = (unsigned)((unsigned char)a->ptr[j] - '0');
        if (d > 9) return 0;
        v = v * 10 + d;
    }
    *out = neg ? -(double)v : (double)v;
    return 1;
}

int zarg_double(const arg *a, double *out)
{
    char *end;
    if (small_integer(a, out)) return 1;
    if (a->len == 0 || isspace((unsigned char)a->ptr[0])) return 0;
    errno = 0;
    double d = strtod(a->ptr, &end);
    if ((size_t)(end - a->ptr) != a->len || isnan(d) ||
        (errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL || fpclassify(d) == FP_ZERO)))
        return 0;
    *out = d;
    return 1;
}

int zarg_long(client *c, const arg *a, long long *out)
{
    if (ks_string2ll(a->ptr, a->len, out)) return 0;
    add_reply_error(c, ERR_NOT_INTEGER);
    return -1;
}

int zarg_range(client *c, const arg *a, long long min, long long max, const char *msg,
               long long *out)
{
    if (!ks_string2ll(a->ptr, a->len, out)) {
        add_reply_error(c, msg ? msg : ERR_NOT_INTEGER);
        return -1;
    }
    if (*out >= min && *out <= max) return 0;
    if (msg)
        add_reply_error(c, msg);
    else
        add_reply_error_fmt(c, "value is out of range, value must between %lld and %lld", min, max);
    return -1;
}

void reply_zmembers(client *c, const ks_zmember *z, size_t n, int withscores)
{
    int nested = withscores && c->resp >= 3;
    add_reply_array_len(c, (long)(withscores && !nested ? 2 * n : n));
    for (size_t i = 0; i < n; i++) {
        if (nested) add_reply_array_len(c, 2);
        add_reply_bulk(c, z[i].m, z[i].ml);
        if (withscores) add_reply_double(c, z[i].score);
    }
}

/* argv[first..] as members (no copies); small has room for 16. */
static ks_field *argv_members(client *c, int first, ks_field *small, size_t *n)
{
    *n = (size_t)(c->argc - first);
    ks_field *m = *n <= 16 ? small : malloc(*n * sizeof(*m));
    for (size_t i = 0; m && i < *n; i++)
        m[i] = (ks_field){c->argv[first + i].ptr, c->argv[first + i].len, NULL, 0};
    return m;
}

/* ---- ZADD, ZINCRBY ------------------------------------------------------------- */

static int zadd_flags(client *c, int *idx, int *ch)
{
    int flags = 0;
    for (; *idx < c->argc; (*idx)++) {
        const arg *a = &c->argv[*idx];
        /* Every option is a word of 2 or 4 letters: a score, the usual
         * argument here, ends the options without six string compares. */
        if ((a->len != 2 && a->len != 4) || !isalpha((unsigned char)a->ptr[0])) break;
        if (arg_is(a, "nx"))
            flags |= KS_ZADD_NX;
        else if (arg_is(a, "xx"))
            flags |= KS_ZADD_XX;
        else if (arg_is(a, "ch"))
            *ch = 1;
        else if (arg_is(a, "incr"))
            flags |= KS_ZADD_INCR;
        else if (arg_is(a, "gt"))
            flags |= KS_ZADD_GT;
        else if (arg_is(a, "lt"))
            flags |= KS_ZADD_LT;
        else
            break;
    }
    return flags;
}

/* ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [...]; ZINCRBY key
 * increment member is ZADD ... INCR (options parsed the same way, as
 * Redis's shared zaddGenericCommand does). */
static void zadd_generic(client *c, int flags)
{
    int idx = 2, ch = 0;
    flags |= zadd_flags(c, &idx, &ch);
    int elements = c->argc - idx;
    if (elements % 2 || !elements) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    elements /= 2;
    int nx = flags & KS_ZADD_NX, xx = flags & KS_ZADD_XX, gt = flags & KS_ZADD_GT,
        lt = flags & KS_ZADD_LT, incr = flags & KS_ZADD_INCR;
    if (nx && xx) {
        add_reply_error(c, "XX and NX options at the same time are not compatible");
        return;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        add_reply_error(c, "GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && elements > 1) {
        add_reply_error(c, "INCR option supports a single increment-element pair");
        return;
    }
    ks_zmember small[16];
    ks_zmember *z = elements <= 16 ? small : malloc((size_t)elements * sizeof(*z));
    if (!z) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    for (int j = 0; j < elements; j++) {
        const arg *s = &c->argv[idx + 2 * j], *m = &c->argv[idx + 2 * j + 1];
        z[j] = (ks_zmember){m->ptr, m->len, 0};
        if (!zarg_double(s, &z[j].score)) {
            add_reply_error(c, ERR_NOT_FLOAT);
            goto out;
        }
    }
    ks_zadd_result r;
    ks_status st =
        ks_zadd(client_ks(c), c->argv[1].ptr, c->argv[1].len, z, (size_t)elements, flags, &r);
    if (st == KS_OK && (r.added || r.updated))
        notify_arg(c, NOTIFY_ZSET, incr ? "zincr" : "zadd", 1);
    if (st != KS_OK)
        reply_zerr(c, st);
    else if (incr && r.processed)
        add_reply_double(c, r.score);
    else if (incr)
        add_reply_null(c);
    else
        add_reply_long_long(c, (long long)(ch ? r.added + r.updated : r.added));
out:
    if (z != small) free(z);
}

void cmd_zadd(client *c)
{
    zadd_generic(c, 0);
}

void cmd_zincrby(client *c)
{
    zadd_generic(c, KS_ZADD_INCR);
}

/* ---- ZREM, ZSCORE, ZMSCORE, ZCARD, ZRANK ---------------------------------------- */

void cmd_zrem(client *c)
{
    ks_field small[16];
    size_t n;
    ks_field *m = argv_members(c, 2, small, &n);
    if (!m) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    uint64_t removed;
    ks_status st = ks_zrem(client_ks(c), c->argv[1].ptr, c->argv[1].len, m, n, &removed);
    if (m != small) free(m);
    if (st == KS_OK && removed) {
        notify_arg(c, NOTIFY_ZSET, "zrem", 1);
        notify_del_if_gone(c, c->argv[1].ptr, c->argv[1].len);
    }
    if (st != KS_OK && st != KS_NOTFOUND)
        reply_zerr(c, st);
    else
        add_reply_long_long(c, (long long)removed);
}

/* ZSCORE (one member, a null for none) and ZMSCORE (an array). */
static void zscore_generic(client *c, int multi)
{
    ks_field small[16];
    size_t n;
    ks_field *m = argv_members(c, 2, small, &n);
    double *sc = malloc(n * sizeof(*sc));
    int *found = malloc(n * sizeof(*found));
    ks_status st = m && sc && found
                       ? ks_zscore(client_ks(c), c->argv[1].ptr, c->argv[1].len, m, n, sc, found)
                       : KS_ERR_MSG;
    if (!m || !sc || !found) {
        add_reply_error(c, "ERR out of memory");
    } else if (st != KS_OK && st != KS_NOTFOUND) {
        reply_zerr(c, st);
    } else {
        if (multi) add_reply_array_len(c, (long)n);
        for (size_t i = 0; i < n; i++) {
            if (found[i])
                add_reply_double(c, sc[i]);
            else
                add_reply_null(c);
        }
    }
    if (m != small) free(m);
    free(sc);
    free(found);
}

void cmd_zscore(client *c)
{
    zscore_generic(c, 0);
}

void cmd_zmscore(client *c)
{
    zscore_generic(c, 1);
}

void cmd_zcard(client *c)
{
    uint64_t n;
    ks_status st = ks_zcard(client_ks(c), c->argv[1].ptr, c->argv[1].len, &n);
    if (st != KS_OK && st != KS_NOTFOUND)
        reply_zerr(c, st);
    else
        add_reply_long_long(c, (long long)n);
}

static void zrank_generic(client *c, int rev)
{
    uint64_t rank;
    int found;
    ks_status st = ks_zrank(client_ks(c), c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr,
                            c->argv[2].len, rev, &rank, &found);
    if (st != KS_OK && st != KS_NOTFOUND)
        reply_zerr(c, st);
    else if (!found)
        add_reply_null(c);
    else
        add_reply_long_long(c, (long long)rank);
}

void cmd_zrank(client *c)
{
    zrank_generic(c, 0);
}

void cmd_zrevrank(client *c)
{
    zrank_generic(c, 1);
}

/* ---- ZRANDMEMBER ------------------------------------------------------------------ */

typedef struct rand_reply {
    client *c;
    int withscores, single;
} rand_reply;

static void rand_fn(void *arg, const ks_zmember *z, size_t n)
{
    rand_reply *r = arg;
    if (!r->single)
        reply_zmembers(r->c, z, n, r->withscores);
    else if (n)
        add_reply_bulk(r->c, z[0].m, z[0].ml);
    else
        add_reply_null(r->c);
}

/* ZRANDMEMBER key [count [WITHSCORES]] */
void cmd_zrandmember(client *c)
{
    long long l = 1;
    rand_reply r = {c, 0, c->argc == 2};
    if (c->argc >= 3) {
        if (zarg_range(c, &c->argv[2], -LLONG_MAX, LLONG_MAX, NULL, &l) < 0) return;
        if (c->argc > 4 || (c->argc == 4 && !arg_is(&c->argv[3], "withscores"))) {
            add_reply_error(c, ERR_SYNTAX);
            return;
        }
        r.withscores = c->argc == 4;
        if (r.withscores && (l < -LLONG_MAX / 2 || l > LLONG_MAX / 2)) {
            add_reply_error(c, "value is out of range");
            return;
        }
    }
    uint64_t count = l >= 0 ? (uint64_t)l : (uint64_t)-l;
    if (l < 0 && count > ZRANDMEMBER_MAX_REPEATS) {
        add_reply_error(c, "value is out of range");
        return;
    }
    ks_status st =
        ks_zrandmember(client_ks(c), c->argv[1].ptr, c->argv[1].len, count, l >= 0, rand_fn, &r);
    if (st == KS_NOTFOUND) {
        if (r.single)
            add_reply_null(c);
        else
            add_reply_array_len(c, 0);
    } else if (st != KS_OK) {
        reply_zerr(c, st);
    }
}

/* ---- ZSCAN ------------------------------------------------------------------------- */

typedef struct zscan_reply {
    client *c;
    const uint64_t *next;
    const int *listpack;
} zscan_reply;

/* A score as ZSCAN prints it: Redis returns the value as stored, which in
 * a listpack is an integer for integral scores (double2ll) and %.17g
 * otherwise, and in a skiplist %.17Lg of the long double (the same digits;
 * -0 kept). */
static int scan_score(char *buf, size_t cap, double d, int listpack)
{
    if (isinf(d)) return snprintf(buf, cap, "%s", d > 0 ? "inf" : "-inf");
    if (listpack && d >= -(double)(LLONG_MAX / 2) && d <= (double)(LLONG_MAX / 2) &&
        (double)(long long)d == d)
        return snprintf(buf, cap, "%lld", (long long)d);
    return snprintf(buf, cap, "%.17g", d);
}

static void zscan_fn(void *arg, const ks_zmember *z, size_t n)
{
    zscan_reply *r = arg;
    char buf[64];
    int bl = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)*r->next);
    add_reply_array_len(r->c, 2);
    add_reply_bulk(r->c, buf, (size_t)bl);
    add_reply_array_len(r->c, (long)(2 * n));
    for (size_t i = 0; i < n; i++) {
        add_reply_bulk(r->c, z[i].m, z[i].ml);
        bl = scan_score(buf, sizeof(buf), z[i].score, *r->listpack);
        add_reply_bulk(r->c, buf, (size_t)bl);
    }
}

void cmd_zscan(client *c)
{
    uint64_t cursor, count, next = 0;
    const char *pat;
    size_t plen;
    int listpack = 1;
    if (!scan_collection_args(c, KS_ZSET, &cursor, &pat, &plen, &count)) return;
    zscan_reply r = {c, &next, &listpack};
    ks_status st = ks_zscan(client_ks(c), c->argv[1].ptr, c->argv[1].len, cursor, pat, plen, count,
                            zscan_fn, &r, &listpack, &next);
    if (st == KS_NOTFOUND)
        zscan_fn(&r, NULL, 0); /* Redis's empty scan: cursor 0, no members */
    else if (st != KS_OK)
        reply_zerr(c, st);
}
