/*
 * cmd_set.c -- set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER,
 * SCARD, SPOP, SRANDMEMBER, SMOVE, SINTER, SINTERCARD, SINTERSTORE, SUNION,
 * SUNIONSTORE, SDIFF, SDIFFSTORE, SSCAN. Replies and error texts follow
 * Redis 7.0 (t_set.c): whole sets reply as sets (RESP3 ~), SRANDMEMBER's
 * counted form as an array. The data work is in src/keyspace/ks_set*.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/server.h"

/* SRANDMEMBER with a negative count builds |count| replies in memory; like
 * HRANDFIELD, strata refuses counts that would only exhaust memory. */
#define SRANDMEMBER_MAX_REPEATS (16ull * 1024 * 1024)

/* argv[first..] as members (no copies); small has room for 16. */
static ks_field *argv_members(client *c, int first, ks_field *small, size_t *n)
{
    *n = (size_t)(c->argc - first);
    ks_field *m = *n <= 16 ? small : malloc(*n * sizeof(*m));
    for (size_t i = 0; m && i < *n; i++)
        m[i] = (ks_field){c->argv[first + i].ptr, c->argv[first + i].len, NULL, 0};
    return m;
}

static void reply_members(client *c, const ks_field *f, size_t n, int as_set)
{
    if (as_set)
        add_reply_set_len(c, (long)n);
    else
        add_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++)
        add_reply_bulk(c, f[i].f, f[i].fl);
}

static void reply_set_fn(void *arg, const ks_field *f, size_t n)
{
    reply_members(arg, f, n, 1);
}

static void reply_array_fn(void *arg, const ks_field *f, size_t n)
{
    reply_members(arg, f, n, 0);
}

/* Redis's "del" after a removal that emptied the set (argv[i]). */
static void notify_if_gone(client *c, int i)
{
    notify_del_if_gone(c, c->argv[i].ptr, c->argv[i].len);
}

/* SADD / SREM key member [member ...] */
static void add_or_rem(client *c, int add)
{
    ks_field small[16];
    size_t n;
    ks_field *m = argv_members(c, 2, small, &n);
    if (!m) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    uint64_t changed;
    ks_status st =
        (add ? ks_sadd : ks_srem)(client_ks(c), c->argv[1].ptr, c->argv[1].len, m, n, &changed);
    if (m != small) free(m);
    if (st != KS_OK && st != KS_NOTFOUND) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (changed) {
        notify_arg(c, NOTIFY_SET, add ? "sadd" : "srem", 1);
        if (!add) notify_if_gone(c, 1);
    }
    add_reply_long_long(c, (long long)changed);
}

void cmd_sadd(client *c)
{
    add_or_rem(c, 1);
}
void cmd_srem(client *c)
{
    add_or_rem(c, 0);
}

void cmd_smembers(client *c)
{
    ks_status st = ks_smembers(client_ks(c), c->argv[1].ptr, c->argv[1].len, reply_set_fn, c);
    if (st == KS_NOTFOUND)
        add_reply_set_len(c, 0);
    else if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
}

void cmd_sismember(client *c)
{
    ks_field m = {c->argv[2].ptr, c->argv[2].len, NULL, 0};
    int out;
    ks_status st = ks_sismember(client_ks(c), c->argv[1].ptr, c->argv[1].len, &m, 1, &out);
    if (st != KS_OK && st != KS_NOTFOUND)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, out);
}

void cmd_smismember(client *c)
{
    ks_field small[16];
    size_t n;
    ks_field *m = argv_members(c, 2, small, &n);
    int *out = malloc(n * sizeof(*out));
    ks_status st = m && out ? ks_sismember(client_ks(c), c->argv[1].ptr, c->argv[1].len, m, n, out)
                            : KS_ERR_MSG;
    if (!m || !out)
        add_reply_error(c, "ERR out of memory");
    else if (st != KS_OK && st != KS_NOTFOUND)
        add_reply_ks_error(c, st, client_ks(c));
    else {
        add_reply_array_len(c, (long)n);
        for (size_t i = 0; i < n; i++)
            add_reply_long_long(c, out[i]);
    }
    if (m != small) free(m);
    free(out);
}

void cmd_scard(client *c)
{
    uint64_t n;
    ks_status st = ks_scard(client_ks(c), c->argv[1].ptr, c->argv[1].len, &n);
    if (st != KS_OK && st != KS_NOTFOUND)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, (long long)n);
}

static void reply_one_fn(void *arg, const ks_field *f, size_t n)
{
    if (n)
        add_reply_bulk(arg, f[0].f, f[0].fl);
    else
        add_reply_null(arg);
}

/* Redis's getRangeLongFromObjectOrReply: an integer in [min, max], else
 * msg (also for a non-integer), or without msg the default texts.
 * Replies and returns -1 on error. */
static int arg_range(client *c, const arg *a, long long min, long long max, const char *msg,
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

void cmd_spop(client *c)
{
    long long count = 1;
    if (c->argc > 3) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3 && arg_range(c, &c->argv[2], 0, LLONG_MAX,
                                  "value is out of range, must be positive", &count) < 0)
        return;
    ks_ctx *k = client_ks(c);
    if (c->argc == 3 && count == 0) { /* the key is still looked up and type-checked */
        ks_type t;
        ks_status st = ks_type_of(k, c->argv[1].ptr, c->argv[1].len, &t);
        if (st != KS_OK)
            add_reply_ks_error(c, st, k);
        else if (t != KS_NONE && t != KS_SET)
            add_reply_error(c, ERR_WRONGTYPE);
        else
            add_reply_set_len(c, 0);
        return;
    }
    ks_status st = ks_spop(k, c->argv[1].ptr, c->argv[1].len, (uint64_t)count,
                           c->argc == 3 ? reply_set_fn : reply_one_fn, c);
    if (st == KS_NOTFOUND) {
        if (c->argc == 3)
            add_reply_set_len(c, 0);
        else
            add_reply_null(c);
    } else if (st != KS_OK) {
        add_reply_ks_error(c, st, k);
    } else {
        notify_arg(c, NOTIFY_SET, "spop", 1);
        notify_if_gone(c, 1);
    }
}

void cmd_srandmember(client *c)
{
    long long l = 1;
    if (c->argc > 3) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 3 && arg_range(c, &c->argv[2], -LLONG_MAX, LLONG_MAX, NULL, &l) < 0) return;
    uint64_t count = l >= 0 ? (uint64_t)l : (uint64_t)-l;
    int uniq = l >= 0;
    if (!uniq && count > SRANDMEMBER_MAX_REPEATS) {
        add_reply_error(c, "ERR value is out of range");
        return;
    }
    ks_status st = ks_srandmember(client_ks(c), c->argv[1].ptr, c->argv[1].len, count, uniq,
                                  c->argc == 3 ? reply_array_fn : reply_one_fn, c);
    if (st == KS_NOTFOUND) {
        if (c->argc == 3)
            add_reply_array_len(c, 0);
        else
            add_reply_null(c);
    } else if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
    }
}

void cmd_smove(client *c)
{
    int moved, had = 0;
    ks_ctx *k = client_ks(c);
    int same =
        c->argv[1].len == c->argv[2].len && !memcmp(c->argv[1].ptr, c->argv[2].ptr, c->argv[1].len);
    ks_type dt = KS_SET; /* Redis raises dst's "new" after src's "srem"/"del" */
    if ((notify_keyspace_flags & NOTIFY_NEW) && !same &&
        ks_type_of(k, c->argv[2].ptr, c->argv[2].len, &dt) != KS_OK)
        dt = KS_SET;
    if ((notify_keyspace_flags & NOTIFY_SET) && !same) { /* is "sadd" on dst due? */
        ks_field m = {c->argv[3].ptr, c->argv[3].len, NULL, 0};
        if (ks_sismember(k, c->argv[2].ptr, c->argv[2].len, &m, 1, &had) != KS_OK) had = 0;
    }
    notify_new_muted = dt == KS_NONE;
    ks_status st = ks_smove(k, c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr, c->argv[2].len,
                            c->argv[3].ptr, c->argv[3].len, &moved);
    notify_new_muted = 0;
    if (st != KS_OK) {
        add_reply_ks_error(c, st, k);
        return;
    }
    if (moved && !same) { /* Redis: "srem" src, "del" src if emptied, "sadd" dst */
        notify_arg(c, NOTIFY_SET, "srem", 1);
        notify_if_gone(c, 1);
        if (dt == KS_NONE) notify_arg(c, NOTIFY_NEW, "new", 2);
        if (!had) notify_arg(c, NOTIFY_SET, "sadd", 2);
    }
    add_reply_long_long(c, moved);
}

/* SINTER, SUNION, SDIFF [STORE]: keys from argv[first]; dst argv[1] when
 * store. */
static void setop_generic(client *c, int op, int store)
{
    int first = store ? 2 : 1;
    ks_field small[16];
    size_t n;
    ks_field *keys = argv_members(c, first, small, &n);
    if (!keys) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    uint64_t card;
    ks_type t = KS_NONE; /* the STORE forms' "del" needs to know dst existed */
    if (store && (notify_keyspace_flags & NOTIFY_GENERIC) &&
        ks_type_of(client_ks(c), c->argv[1].ptr, c->argv[1].len, &t) != KS_OK)
        t = KS_NONE;
    ks_status st = ks_setop(client_ks(c), op, keys, n, store ? c->argv[1].ptr : NULL,
                            store ? c->argv[1].len : 0, 0, store ? NULL : reply_set_fn, c, &card);
    if (keys != small) free(keys);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
    } else if (store) {
        static const char *const ev[] = {"sinterstore", "sunionstore", "sdiffstore"};
        if (card)
            notify_arg(c, NOTIFY_SET, ev[op], 1);
        else if (t != KS_NONE)
            notify_arg(c, NOTIFY_GENERIC, "del", 1);
        add_reply_long_long(c, (long long)card);
    }
}

void cmd_sinter(client *c)
{
    setop_generic(c, KS_SINTER, 0);
}
void cmd_sinterstore(client *c)
{
    setop_generic(c, KS_SINTER, 1);
}
void cmd_sunion(client *c)
{
    setop_generic(c, KS_SUNION, 0);
}
void cmd_sunionstore(client *c)
{
    setop_generic(c, KS_SUNION, 1);
}
void cmd_sdiff(client *c)
{
    setop_generic(c, KS_SDIFF, 0);
}
void cmd_sdiffstore(client *c)
{
    setop_generic(c, KS_SDIFF, 1);
}

/* SINTERCARD numkeys key [key ...] [LIMIT limit] */
void cmd_sintercard(client *c)
{
    long long numkeys, limit = 0;
    if (arg_range(c, &c->argv[1], 1, LLONG_MAX, "numkeys should be greater than 0", &numkeys) < 0)
        return;
    if (numkeys > c->argc - 2) {
        add_reply_error(c, "Number of keys can't be greater than number of args");
        return;
    }
    for (int j = 2 + (int)numkeys; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "limit") && j + 1 < c->argc) {
            if (arg_range(c, &c->argv[++j], 0, LLONG_MAX, "LIMIT can't be negative", &limit) < 0)
                return;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    ks_field small[16];
    ks_field *keys = numkeys <= 16 ? small : malloc((size_t)numkeys * sizeof(*keys));
    if (!keys) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    for (long long i = 0; i < numkeys; i++)
        keys[i] = (ks_field){c->argv[2 + i].ptr, c->argv[2 + i].len, NULL, 0};
    uint64_t card;
    ks_status st = ks_setop(client_ks(c), KS_SINTER, keys, (size_t)numkeys, NULL, 0,
                            (uint64_t)limit, NULL, NULL, &card);
    if (keys != small) free(keys);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, (long long)card);
}

typedef struct sscan_reply {
    client *c;
    const uint64_t *next;
} sscan_reply;

static void sscan_fn(void *arg, const ks_field *f, size_t n)
{
    sscan_reply *r = arg;
    char buf[24];
    int bl = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)*r->next);
    add_reply_array_len(r->c, 2);
    add_reply_bulk(r->c, buf, (size_t)bl);
    reply_members(r->c, f, n, 0);
}

void cmd_sscan(client *c)
{
    uint64_t cursor, count, next = 0;
    const char *pat;
    size_t plen;
    if (!scan_collection_args(c, KS_SET, &cursor, &pat, &plen, &count)) return;
    sscan_reply r = {c, &next};
    ks_status st = ks_sscan(client_ks(c), c->argv[1].ptr, c->argv[1].len, cursor, pat, plen, count,
                            sscan_fn, &r, &next);
    if (st == KS_NOTFOUND)
        sscan_fn(&r, NULL, 0); /* Redis's empty scan: cursor 0, no members */
    else if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
}
