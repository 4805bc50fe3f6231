/*
 * cmd_string.c -- string commands: GET, SET and its variants, MGET/MSET,
 * counters, APPEND, STRLEN, GETRANGE/SUBSTR, SETRANGE. Parsing and replies
 * follow Redis 7.0 (t_string.c) text for text; the data work is in
 * src/keyspace/ks_string.c.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/server.h"

static void reply_invalid_expire(client *c)
{
    add_reply_error_fmt(c, "invalid expire time in '%s' command", c->cmd->name);
}

/* Replies the outcome of a keyspace read of one string (argv[1]): its
 * value, nil when absent (a keymiss event), or the error; then frees *v. */
static void reply_value(client *c, ks_status st, ks_val *v)
{
    if (st == KS_OK) {
        add_reply_bulk(c, v->p, v->n);
    } else if (st == KS_NOTFOUND) {
        notify_keymiss(c, 1);
        add_reply_null(c);
    } else {
        add_reply_ks_error(c, st, client_ks(c));
    }
    ks_val_free(v);
}

void cmd_get(client *c)
{
    ks_val v;
    ks_status st = ks_get(client_ks(c), c->argv[1].ptr, c->argv[1].len, &v);
    reply_value(c, st, &v);
}

enum {
    OPT_NX = 1,
    OPT_XX = 2,
    OPT_GET = 4,
    OPT_KEEPTTL = 8,
    OPT_PERSIST = 16,
    OPT_EX = 32,
    OPT_PX = 64,
    OPT_EXAT = 128,
    OPT_PXAT = 256
};
#define OPT_ANY_EXPIRE (OPT_EX | OPT_PX | OPT_EXAT | OPT_PXAT)

/* Parses SET's (is_set) or GETEX's option syntax from argv[first]; replies
 * and returns -1 on a syntax error. *when is the time argument (NULL: no
 * expire option); its value is checked by expire_value. */
static int expire_kind(const arg *a)
{
    return arg_is(a, "ex")     ? OPT_EX
           : arg_is(a, "px")   ? OPT_PX
           : arg_is(a, "exat") ? OPT_EXAT
           : arg_is(a, "pxat") ? OPT_PXAT
                               : 0;
}

static int parse_set_options(client *c, int first, int is_set, int *flags, const arg **when)
{
    int kind;
    *flags = 0;
    *when = NULL;
    for (int j = first; j < c->argc; j++) {
        const arg *a = &c->argv[j];
        int last = j == c->argc - 1, f = *flags;
        if (is_set && arg_is(a, "nx") && !(f & OPT_XX))
            *flags |= OPT_NX;
        else if (is_set && arg_is(a, "xx") && !(f & OPT_NX))
            *flags |= OPT_XX;
        else if (is_set && arg_is(a, "get"))
            *flags |= OPT_GET;
        else if (is_set && arg_is(a, "keepttl") && !(f & (OPT_PERSIST | OPT_ANY_EXPIRE)))
            *flags |= OPT_KEEPTTL;
        else if (!is_set && arg_is(a, "persist") && !(f & (OPT_KEEPTTL | OPT_ANY_EXPIRE)))
            *flags |= OPT_PERSIST;
        else if (!last && (kind = expire_kind(a)) != 0 &&
                 !(f & (OPT_KEEPTTL | OPT_PERSIST | (OPT_ANY_EXPIRE & ~kind)))) {
            /* as Redis: the same option twice is fine (the last wins) */
            *flags |= kind;
            *when = &c->argv[++j];
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

enum { EXPIRE_OK = 0, EXPIRE_NOT_INT = -1, EXPIRE_INVALID = -2 };

/* Redis's getExpireMillisecondsOrReply without the reply: the absolute
 * expire of the option in flags with argument when. */
static int expire_value(client *c, int flags, const arg *when, int64_t *expire)
{
    long long v;
    *expire = 0;
    if (!when) return EXPIRE_OK;
    if (!ks_string2ll(when->ptr, when->len, &v)) return EXPIRE_NOT_INT;
    int seconds = (flags & (OPT_EX | OPT_EXAT)) != 0;
    int relative = (flags & (OPT_EX | OPT_PX)) != 0;
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) return EXPIRE_INVALID;
    if (seconds) v *= 1000;
    int64_t now = client_ks(c)->now_ms;
    if (relative && v > LLONG_MAX - now) return EXPIRE_INVALID;
    *expire = relative ? v + now : v;
    return EXPIRE_OK;
}

static void reply_expire_error(client *c, int err)
{
    if (err == EXPIRE_NOT_INT)
        add_reply_error(c, ERR_NOT_INTEGER);
    else
        reply_invalid_expire(c);
}

/* The heart of SET, SETNX, SETEX, PSETEX and GETSET. */
static void set_generic(client *c, const arg *key, const arg *val, int flags, int64_t expire,
                        int reply_int)
{
    ks_set_opts o = {.nx = !!(flags & OPT_NX),
                     .xx = !!(flags & OPT_XX),
                     .keepttl = !!(flags & OPT_KEEPTTL),
                     .get = !!(flags & OPT_GET),
                     .expire_ms = expire};
    ks_val old;
    int done;
    ks_status st = ks_set(client_ks(c), key->ptr, key->len, val->ptr, val->len, &o, &done, &old);
    if (st == KS_OK && o.get && !old.p) notify_keymiss(c, 1);
    if (st == KS_OK && done) {
        notify_keyspace_event(NOTIFY_STRING, "set", c->db, key->ptr, key->len);
        if (expire) notify_keyspace_event(NOTIFY_GENERIC, "expire", c->db, key->ptr, key->len);
    }
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else if (reply_int)
        add_reply_long_long(c, done);
    else if (o.get && old.p)
        add_reply_bulk(c, old.p, old.n);
    else if (o.get || !done)
        add_reply_null(c);
    else
        add_reply_ok(c);
    ks_val_free(&old);
}

void cmd_set(client *c)
{
    int flags, err;
    const arg *when;
    int64_t expire;
    if (parse_set_options(c, 3, 1, &flags, &when) < 0) return;
    if ((err = expire_value(c, flags, when, &expire)) != EXPIRE_OK) {
        reply_expire_error(c, err);
        return;
    }
    set_generic(c, &c->argv[1], &c->argv[2], flags, expire, 0);
}

void cmd_setnx(client *c)
{
    set_generic(c, &c->argv[1], &c->argv[2], OPT_NX, 0, 1);
}

static void setex_generic(client *c, int seconds)
{
    long long v;
    if (arg_to_ll(c, &c->argv[2], &v) < 0) return;
    int64_t now = client_ks(c)->now_ms;
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000) || (seconds ? v * 1000 : v) > LLONG_MAX - now) {
        reply_invalid_expire(c);
        return;
    }
    set_generic(c, &c->argv[1], &c->argv[3], 0, now + (seconds ? v * 1000 : v), 0);
}

void cmd_setex(client *c)
{
    setex_generic(c, 1);
}
void cmd_psetex(client *c)
{
    setex_generic(c, 0);
}
void cmd_getset(client *c)
{
    set_generic(c, &c->argv[1], &c->argv[2], OPT_GET, 0, 0);
}

void cmd_mget(client *c)
{
    add_reply_array_len(c, c->argc - 1);
    for (int j = 1; j < c->argc; j++) {
        ks_val v;
        ks_status st = ks_get(client_ks(c), c->argv[j].ptr, c->argv[j].len, &v);
        if (st == KS_OK) {
            add_reply_bulk(c, v.p, v.n);
        } else {
            if (st == KS_NOTFOUND) notify_keymiss(c, j);
            add_reply_null(c);
        }
        ks_val_free(&v);
    }
}

static void mset_generic(client *c, int nx)
{
    if (c->argc % 2 == 0) {
        add_reply_wrong_arity(c);
        return;
    }
    size_t n = (size_t)(c->argc - 1) / 2;
    ks_field small[16], *kv = n <= 16 ? small : malloc(n * sizeof(*kv));
    if (!kv) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        kv[i] = (ks_field){c->argv[1 + 2 * i].ptr, c->argv[1 + 2 * i].len, c->argv[2 + 2 * i].ptr,
                           c->argv[2 + 2 * i].len};
    int done;
    ks_status st = ks_mset(client_ks(c), kv, n, nx, &done);
    if (kv != small) free(kv);
    if (st == KS_OK && (!nx || done))
        for (int j = 1; j < c->argc; j += 2)
            notify_arg(c, NOTIFY_STRING, "set", j);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else if (nx)
        add_reply_long_long(c, done);
    else
        add_reply_ok(c);
}

void cmd_mset(client *c)
{
    mset_generic(c, 0);
}
void cmd_msetnx(client *c)
{
    mset_generic(c, 1);
}

void cmd_getdel(client *c)
{
    ks_val v;
    ks_status st = ks_getdel(client_ks(c), c->argv[1].ptr, c->argv[1].len, &v);
    if (st == KS_OK) notify_arg(c, NOTIFY_GENERIC, "del", 1);
    reply_value(c, st, &v);
}

/* GETEX checks the expire value only after the key (Redis order): a
 * missing key is nil and a hash is WRONGTYPE whatever the value says. */
void cmd_getex(client *c)
{
    int flags, err;
    const arg *when;
    int64_t expire;
    if (parse_set_options(c, 2, 0, &flags, &when) < 0) return;
    ks_ctx *k = client_ks(c);
    const arg *key = &c->argv[1];
    if ((err = expire_value(c, flags, when, &expire)) != EXPIRE_OK) {
        ks_type t;
        ks_status st = ks_type_of(k, key->ptr, key->len, &t);
        if (st != KS_OK)
            add_reply_ks_error(c, st, client_ks(c));
        else if (t == KS_NONE)
            add_reply_null(c);
        else if (t != KS_STRING)
            add_reply_ks_error(c, KS_ERR_WRONGTYPE, client_ks(c));
        else
            reply_expire_error(c, err);
        return;
    }
    int mode = (flags & OPT_PERSIST)      ? KS_GETEX_PERSIST
               : (flags & OPT_ANY_EXPIRE) ? KS_GETEX_SET
                                          : KS_GETEX_KEEP;
    int64_t old_ttl = 0; /* PERSIST notifies only when a TTL went away */
    if (mode == KS_GETEX_PERSIST && (notify_keyspace_flags & NOTIFY_GENERIC) &&
        ks_expire_get(k, key->ptr, key->len, &old_ttl) != KS_OK)
        old_ttl = 0;
    ks_val v;
    ks_status st = ks_getex(k, key->ptr, key->len, mode, expire, &v);
    if (st == KS_OK && mode == KS_GETEX_SET)
        notify_arg(c, NOTIFY_GENERIC, expire <= k->now_ms ? "del" : "expire", 1);
    if (st == KS_OK && mode == KS_GETEX_PERSIST && old_ttl)
        notify_arg(c, NOTIFY_GENERIC, "persist", 1);
    reply_value(c, st, &v);
}

static void incr_generic(client *c, long long by)
{
    long long out;
    ks_status st = ks_incrby(client_ks(c), c->argv[1].ptr, c->argv[1].len, by, &out);
    if (st == KS_OK) notify_arg(c, NOTIFY_STRING, "incrby", 1);
    if (st == KS_OK)
        add_reply_long_long(c, out);
    else
        add_reply_ks_error(c, st, client_ks(c));
}

void cmd_incr(client *c)
{
    incr_generic(c, 1);
}
void cmd_decr(client *c)
{
    incr_generic(c, -1);
}

void cmd_incrby(client *c)
{
    long long by;
    if (arg_to_ll(c, &c->argv[2], &by) < 0) return;
    incr_generic(c, by);
}

void cmd_decrby(client *c)
{
    long long by;
    if (arg_to_ll(c, &c->argv[2], &by) < 0) return;
    if (by == LLONG_MIN) {
        add_reply_error(c, "ERR decrement would overflow");
        return;
    }
    incr_generic(c, -by);
}

void cmd_incrbyfloat(client *c)
{
    long double by;
    ks_ctx *k = client_ks(c);
    if (!ks_string2ld(c->argv[2].ptr, c->argv[2].len, &by)) {
        /* Redis checks the key's type before the increment. */
        ks_type t;
        ks_status st = ks_type_of(k, c->argv[1].ptr, c->argv[1].len, &t);
        add_reply_ks_error(c,
                           st != KS_OK                        ? st
                           : (t != KS_NONE && t != KS_STRING) ? KS_ERR_WRONGTYPE
                                                              : KS_ERR_NOTFLOAT,
                           client_ks(c));
        return;
    }
    char *buf = malloc(KS_LD_BUF);
    size_t n;
    if (!buf) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    ks_status st = ks_incrbyfloat(k, c->argv[1].ptr, c->argv[1].len, by, buf, &n);
    if (st == KS_OK) notify_arg(c, NOTIFY_STRING, "incrbyfloat", 1);
    if (st == KS_OK)
        add_reply_bulk(c, buf, n);
    else
        add_reply_ks_error(c, st, client_ks(c));
    free(buf);
}

void cmd_append(client *c)
{
    size_t n;
    ks_status st =
        ks_append(client_ks(c), c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr, c->argv[2].len, &n);
    if (st == KS_OK) notify_arg(c, NOTIFY_STRING, "append", 1);
    if (st == KS_OK)
        add_reply_long_long(c, (long long)n);
    else
        add_reply_ks_error(c, st, client_ks(c));
}

void cmd_strlen(client *c)
{
    char none;
    uint64_t len; /* no byte read: a chunked string is not assembled */
    ks_status st = ks_get_part(client_ks(c), c->argv[1].ptr, c->argv[1].len, 0, &none, 0, &len);
    if (st == KS_NOTFOUND) notify_keymiss(c, 1);
    if (st == KS_OK || st == KS_NOTFOUND)
        add_reply_long_long(c, (long long)len);
    else
        add_reply_ks_error(c, st, client_ks(c));
}

void cmd_getrange(client *c)
{
    long long start, end;
    if (arg_to_ll(c, &c->argv[2], &start) < 0 || arg_to_ll(c, &c->argv[3], &end) < 0) return;
    ks_val v;
    ks_status st = ks_get(client_ks(c), c->argv[1].ptr, c->argv[1].len, &v);
    if (st != KS_OK && st != KS_NOTFOUND) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (st == KS_NOTFOUND) notify_keymiss(c, 1);
    long long len = (long long)v.n;
    if (start < 0 && end < 0 && start > end) {
        add_reply_bulk(c, "", 0);
    } else {
        if (start < 0) start += len;
        if (end < 0) end += len;
        if (start < 0) start = 0;
        if (end < 0) end = 0;
        if (end >= len) end = len - 1;
        if (start > end || len == 0)
            add_reply_bulk(c, "", 0);
        else
            add_reply_bulk(c, v.p + start, (size_t)(end - start + 1));
    }
    ks_val_free(&v);
}

void cmd_substr(client *c)
{
    cmd_getrange(c);
}

void cmd_setrange(client *c)
{
    long long off;
    if (arg_to_ll(c, &c->argv[2], &off) < 0) return;
    if (off < 0) {
        add_reply_error(c, "ERR offset is out of range");
        return;
    }
    size_t n;
    ks_status st = ks_setrange(client_ks(c), c->argv[1].ptr, c->argv[1].len, (uint64_t)off,
                               c->argv[3].ptr, c->argv[3].len, &n);
    if (st == KS_OK && c->argv[3].len) notify_arg(c, NOTIFY_STRING, "setrange", 1);
    if (st == KS_OK)
        add_reply_long_long(c, (long long)n);
    else
        add_reply_ks_error(c, st, client_ks(c));
}
