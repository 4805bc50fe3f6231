/*
 * cmd_hash.c -- hash commands: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL,
 * HDEL, HEXISTS, HLEN, HKEYS, HVALS, HINCRBY, HINCRBYFLOAT, HSTRLEN, HSCAN,
 * HRANDFIELD. Replies and error texts follow Redis 7.0 (t_hash.c); the
 * data work is in src/keyspace/ks_hash*.c.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyspace/keyspace.h"
#include "server/reply.h"
#include "server/server.h"

/* The argv pairs from argv[first] as fields (no copies). small has room
 * for 16 pairs; larger lists are malloc'd (free when != small). */
static ks_field *argv_pairs(client *c, int first, ks_field *small, size_t *n)
{
    *n = (size_t)(c->argc - first) / 2;
    ks_field *p = *n <= 16 ? small : malloc(*n * sizeof(*p));
    for (size_t i = 0; p && i < *n; i++)
        p[i] = (ks_field){c->argv[first + 2 * i].ptr, c->argv[first + 2 * i].len,
                          c->argv[first + 2 * i + 1].ptr, c->argv[first + 2 * i + 1].len};
    return p;
}

static void hset_generic(client *c, int reply_ok)
{
    if (c->argc % 2 == 1) {
        add_reply_wrong_arity(c);
        return;
    }
    ks_field small[16];
    size_t n;
    ks_field *p = argv_pairs(c, 2, small, &n);
    if (!p) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    uint64_t added;
    ks_status st = ks_hset(client_ks(c), c->argv[1].ptr, c->argv[1].len, p, n, 0, &added);
    if (p != small) free(p);
    if (st == KS_OK) notify_arg(c, NOTIFY_HASH, "hset", 1);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else if (reply_ok)
        add_reply_ok(c);
    else
        add_reply_long_long(c, (long long)added);
}

void cmd_hset(client *c)
{
    hset_generic(c, 0);
}
void cmd_hmset(client *c)
{
    hset_generic(c, 1);
}

void cmd_hsetnx(client *c)
{
    ks_field p = {c->argv[2].ptr, c->argv[2].len, c->argv[3].ptr, c->argv[3].len};
    uint64_t added;
    ks_status st = ks_hset(client_ks(c), c->argv[1].ptr, c->argv[1].len, &p, 1, 1, &added);
    if (st == KS_OK && added) notify_arg(c, NOTIFY_HASH, "hset", 1);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, (long long)added);
}

/* Looks up argv[first..] as fields; returns the items (v NULL = absent) or
 * NULL after replying an error. *owner as ks_hmget. */
static ks_field *lookup_fields(client *c, int first, ks_field *small, void **owner, size_t *n)
{
    *n = (size_t)(c->argc - first);
    ks_field *items = *n <= 16 ? small : malloc(*n * sizeof(*items));
    if (!items) {
        add_reply_error(c, "ERR out of memory");
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        items[i] = (ks_field){c->argv[first + i].ptr, c->argv[first + i].len, NULL, 0};
    ks_status st = ks_hmget(client_ks(c), c->argv[1].ptr, c->argv[1].len, items, *n, owner);
    if (st == KS_NOTFOUND) notify_keymiss(c, 1);
    if (st != KS_OK && st != KS_NOTFOUND) {
        add_reply_ks_error(c, st, client_ks(c));
        if (items != small) free(items);
        return NULL;
    }
    return items;
}

/* HGET, HEXISTS, HSTRLEN: one field, three ways of replying. */
enum { ONE_VALUE, ONE_EXISTS, ONE_STRLEN };
static void one_field(client *c, int how)
{
    ks_field small[1];
    void *owner = NULL;
    size_t n;
    ks_field *it = lookup_fields(c, 2, small, &owner, &n);
    if (!it) return;
    if (how == ONE_EXISTS)
        add_reply_long_long(c, it->v != NULL);
    else if (how == ONE_STRLEN)
        add_reply_long_long(c, it->v ? (long long)it->vl : 0);
    else if (it->v)
        add_reply_bulk(c, it->v, it->vl);
    else
        add_reply_null(c);
    ks_hmget_free(owner);
}

void cmd_hget(client *c)
{
    one_field(c, ONE_VALUE);
}
void cmd_hexists(client *c)
{
    one_field(c, ONE_EXISTS);
}
void cmd_hstrlen(client *c)
{
    one_field(c, ONE_STRLEN);
}

void cmd_hmget(client *c)
{
    ks_field small[16];
    void *owner = NULL;
    size_t n;
    ks_field *items = lookup_fields(c, 2, small, &owner, &n);
    if (!items) return;
    add_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        if (items[i].v)
            add_reply_bulk(c, items[i].v, items[i].vl);
        else
            add_reply_null(c);
    }
    ks_hmget_free(owner);
    if (items != small) free(items);
}

/* HGETALL, HKEYS, HVALS: replies straight from the engine's buffer, the
 * whole hash in one pass (add_reply_hash). */
typedef struct whole_reply {
    client *c;
    reply_hash_part what;
} whole_reply;

static void whole_fields(void *arg, const ks_field *f, size_t n)
{
    whole_reply *w = arg;
    add_reply_hash(w->c, f, n, w->what);
}

static void whole_hash(client *c, reply_hash_part what)
{
    whole_reply w = {c, what};
    ks_status st = ks_hash_fields(client_ks(c), c->argv[1].ptr, c->argv[1].len, whole_fields, &w);
    if (st == KS_NOTFOUND) notify_keymiss(c, 1);
    if (st == KS_NOTFOUND)
        add_reply_hash(c, NULL, 0, what);
    else if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
}

void cmd_hgetall(client *c)
{
    whole_hash(c, REPLY_HASH_PAIRS);
}
void cmd_hkeys(client *c)
{
    whole_hash(c, REPLY_HASH_FIELDS);
}
void cmd_hvals(client *c)
{
    whole_hash(c, REPLY_HASH_VALUES);
}

void cmd_hlen(client *c)
{
    uint64_t n;
    ks_status st = ks_hlen(client_ks(c), c->argv[1].ptr, c->argv[1].len, &n);
    if (st == KS_NOTFOUND) notify_keymiss(c, 1);
    if (st != KS_OK && st != KS_NOTFOUND)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, (long long)n);
}

void cmd_hdel(client *c)
{
    size_t n = (size_t)(c->argc - 2);
    ks_field small[16], *f = n <= 16 ? small : malloc(n * sizeof(*f));
    if (!f) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++)
        f[i] = (ks_field){c->argv[2 + i].ptr, c->argv[2 + i].len};
    uint64_t deleted;
    ks_ctx *k = client_ks(c);
    ks_status st = ks_hdel(k, c->argv[1].ptr, c->argv[1].len, f, n, &deleted);
    if (f != small) free(f);
    if (st == KS_OK && deleted) {
        notify_arg(c, NOTIFY_HASH, "hdel", 1);
        ks_type t;
        if ((notify_keyspace_flags & NOTIFY_GENERIC) &&
            ks_type_of(k, c->argv[1].ptr, c->argv[1].len, &t) == KS_OK && t == KS_NONE)
            notify_arg(c, NOTIFY_GENERIC, "del", 1); /* the last field went */
    }
    if (st != KS_OK && st != KS_NOTFOUND)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, (long long)deleted);
}

void cmd_hincrby(client *c)
{
    long long by, out;
    if (arg_to_ll(c, &c->argv[3], &by) < 0) return;
    ks_status st = ks_hincrby(client_ks(c), c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr,
                              c->argv[2].len, by, &out);
    if (st == KS_OK) notify_arg(c, NOTIFY_HASH, "hincrby", 1);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, out);
}

void cmd_hincrbyfloat(client *c)
{
    long double by;
    if (!ks_string2ld(c->argv[3].ptr, c->argv[3].len, &by)) {
        add_reply_error(c, ERR_NOT_FLOAT);
        return;
    }
    if (isnan(by) || isinf(by)) {
        add_reply_error(c, "ERR value is NaN or Infinity");
        return;
    }
    char *buf = malloc(KS_LD_BUF);
    size_t n;
    if (!buf) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    ks_status st = ks_hincrbyfloat(client_ks(c), c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr,
                                   c->argv[2].len, by, buf, &n);
    if (st == KS_OK) notify_arg(c, NOTIFY_HASH, "hincrbyfloat", 1);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_bulk(c, buf, n);
    free(buf);
}

/* ---- HSCAN ------------------------------------------------------------------ */

typedef struct pair_list {
    client *c;
    ks_field *v;
    char *data;
    size_t n, cap, len, dcap;
    int oom;
} pair_list;

/* Fields come back before the cursor is known: keep copies, reply after. */
static int collect_pair(void *arg, const char *f, size_t fl, const char *v, size_t vl)
{
    pair_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap * 2 + 16;
        ks_field *nv = realloc(l->v, cap * sizeof(*nv));
        if (!nv) return l->oom = 1;
        l->v = nv;
        l->cap = cap;
    }
    if (l->len + fl + vl > l->dcap) {
        size_t cap = (l->len + fl + vl) * 2 + 256;
        char *d = realloc(l->data, cap);
        if (!d) return l->oom = 1;
        l->data = d;
        l->dcap = cap;
    }
    if (fl) memcpy(l->data + l->len, f, fl); /* data may be NULL yet */
    if (vl) memcpy(l->data + l->len + fl, v, vl);
    /* offsets, not pointers: data may move */
    l->v[l->n++] = (ks_field){(const char *)(uintptr_t)l->len, fl, NULL, vl};
    l->len += fl + vl;
    return 0;
}

const char *scan_parse_opts(client *c, int first, const char **pat, size_t *plen, uint64_t *count)
{
    *pat = NULL;
    *plen = 0;
    *count = 10;
    for (int j = first; j < c->argc; j += 2) {
        long long n;
        const arg *a = &c->argv[j], *v = j + 1 < c->argc ? &c->argv[j + 1] : NULL;
        if (v && arg_is(a, "count")) {
            if (!ks_string2ll(v->ptr, v->len, &n)) return ERR_NOT_INTEGER;
            if (n < 1) return ERR_SYNTAX;
            *count = (uint64_t)n;
        } else if (v && arg_is(a, "match")) {
            *pat = v->len == 1 && v->ptr[0] == '*' ? NULL : v->ptr;
            *plen = v->len;
        } else {
            return ERR_SYNTAX;
        }
    }
    return NULL;
}

int scan_collection_args(client *c, ks_type type, uint64_t *cursor, const char **pat, size_t *plen,
                         uint64_t *count)
{
    char *end;
    const arg *ca = &c->argv[2];
    errno = 0;
    *cursor = strtoull(ca->ptr, &end, 10);
    if (isspace((unsigned char)ca->ptr[0]) || errno == ERANGE || end != ca->ptr + ca->len) {
        add_reply_error(c, "ERR invalid cursor");
        return 0;
    }
    const char *bad = scan_parse_opts(c, 3, pat, plen, count);
    if (!bad) return 1;
    ks_type t;
    ks_status st = ks_type_of(client_ks(c), c->argv[1].ptr, c->argv[1].len, &t);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
    } else if (t == KS_NONE) { /* Redis's empty scan: cursor 0, nothing */
        add_reply_array_len(c, 2);
        add_reply_bulk(c, "0", 1);
        add_reply_array_len(c, 0);
    } else {
        add_reply_error(c, t == type ? bad : ERR_WRONGTYPE);
    }
    return 0;
}

void cmd_hscan(client *c)
{
    uint64_t cursor, count;
    const char *pat;
    size_t plen;
    if (!scan_collection_args(c, KS_HASH, &cursor, &pat, &plen, &count)) return;
    pair_list l = {c};
    uint64_t next = 0;
    ks_status st = ks_hscan(client_ks(c), c->argv[1].ptr, c->argv[1].len, cursor, pat, plen, count,
                            collect_pair, &l, &next);
    if (st != KS_OK && st != KS_NOTFOUND) {
        add_reply_ks_error(c, st, client_ks(c));
    } else if (l.oom) {
        add_reply_error(c, "ERR out of memory");
    } else {
        char buf[24];
        int bl = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)next);
        add_reply_array_len(c, 2);
        add_reply_bulk(c, buf, (size_t)bl);
        add_reply_array_len(c, (long)(l.n * 2));
        for (size_t i = 0; i < l.n; i++) {
            const char *f = l.data ? l.data + (uintptr_t)l.v[i].f : "";
            add_reply_bulk(c, f, l.v[i].fl);
            add_reply_bulk(c, f + l.v[i].fl, l.v[i].vl);
        }
    }
    free(l.v);
    free(l.data);
}

/* ---- HRANDFIELD ------------------------------------------------------------- */

static uint64_t rand64(void)
{
    static uint64_t s;
    if (!s) s = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull | 1;
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

static void reply_field(client *c, const ks_field *f, int withvalues)
{
    if (withvalues && c->resp > 2) add_reply_array_len(c, 2);
    add_reply_bulk(c, f->f, f->fl);
    if (withvalues) add_reply_bulk(c, f->v, f->vl);
}

/* HRANDFIELD key count [WITHVALUES]: count < 0 may repeat fields. A
 * negative count is capped so a typo cannot make a reply of 2^63 fields. */
#define HRANDFIELD_MAX_REPEATS (16ull * 1024 * 1024)
static void hrandfield_count(client *c)
{
    long long l;
    int withvalues = 0;
    if (arg_to_ll(c, &c->argv[2], &l) < 0) return;
    if (c->argc == 4) {
        if (!arg_is(&c->argv[3], "withvalues")) {
            add_reply_error(c, ERR_SYNTAX);
            return;
        }
        withvalues = 1;
    } else if (c->argc > 4) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    if (l < -LONG_MAX) {
        add_reply_error(c, "ERR value is out of range, value must between -9223372036854775807 "
                           "and 9223372036854775807");
        return;
    }
    if (withvalues && (l > LONG_MAX / 2 || l < -LONG_MAX / 2)) {
        add_reply_error(c, "ERR value is out of range");
        return;
    }
    uint64_t count = l >= 0 ? (uint64_t)l : (uint64_t)-l;
    int uniq = l >= 0;
    if (!uniq && count > HRANDFIELD_MAX_REPEATS) {
        /* Redis would try to build the reply and exhaust memory; refuse. */
        add_reply_error(c, "ERR value is out of range");
        return;
    }
    ks_field *f = NULL;
    size_t n = 0;
    ks_status st = ks_hash_read(client_ks(c), NULL, c->argv[1].ptr, c->argv[1].len, &f, &n);
    if (st != KS_OK && st != KS_NOTFOUND) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (n == 0 || count == 0) {
        add_reply_array_len(c, 0);
    } else if (!uniq) {
        add_reply_array_len(c, (long)(count * (withvalues && c->resp == 2 ? 2 : 1)));
        for (uint64_t i = 0; i < count; i++)
            reply_field(c, &f[rand64() % n], withvalues);
    } else {
        size_t take = count < n ? (size_t)count : n;
        for (size_t i = 0; i < take; i++) { /* partial Fisher-Yates */
            size_t j = i + (size_t)(rand64() % (n - i));
            ks_field t = f[i];
            f[i] = f[j];
            f[j] = t;
        }
        add_reply_array_len(c, (long)(take * (withvalues && c->resp == 2 ? 2 : 1)));
        for (size_t i = 0; i < take; i++)
            reply_field(c, &f[i], withvalues);
    }
    if (st == KS_OK) ks_fields_free(f, n);
}

void cmd_hrandfield(client *c)
{
    if (c->argc >= 3) {
        hrandfield_count(c);
        return;
    }
    ks_field *f = NULL;
    size_t n = 0;
    ks_status st = ks_hash_read(client_ks(c), NULL, c->argv[1].ptr, c->argv[1].len, &f, &n);
    if (st != KS_OK && st != KS_NOTFOUND)
        add_reply_ks_error(c, st, client_ks(c));
    else if (n == 0)
        add_reply_null(c);
    else {
        size_t i = (size_t)(rand64() % n);
        add_reply_bulk(c, f[i].f, f[i].fl);
    }
    if (st == KS_OK) ks_fields_free(f, n);
}
