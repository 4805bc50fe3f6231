/*
 * cmd_keys.c -- generic keyspace commands: DEL, UNLINK, EXISTS, TOUCH, TYPE,
 * KEYS, SCAN, RENAME[NX], COPY, MOVE, RANDOMKEY, the EXPIRE and TTL families
 * and PERSIST. Replies and error texts follow Redis 7.0 (db.c, expire.c); the
 * data work is in src/keyspace/ks_keys.c.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/server.h"

/* DEL with "del" events: each key on its own, to know which ones existed. */
static void del_notify(client *c)
{
    long long n = 0;
    for (int j = 1; j < c->argc; j++) {
        int d;
        ks_status st = ks_del(client_ks(c), c->argv[j].ptr, c->argv[j].len, &d);
        if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c));
        if (d) notify_arg(c, NOTIFY_GENERIC, "del", j);
        n += d;
    }
    add_reply_long_long(c, n);
}

static void del_generic(client *c)
{
    if (notify_keyspace_flags & NOTIFY_GENERIC) return del_notify(c);
    ks_field small[16];
    size_t n = (size_t)c->argc - 1;
    ks_field *keys = n <= 16 ? small : malloc(n * sizeof(*keys));
    if (!keys) {
        add_reply_error(c, "ERR out of memory");
        return;
    }
    for (size_t j = 0; j < n; j++)
        keys[j] = (ks_field){c->argv[j + 1].ptr, c->argv[j + 1].len, NULL, 0};
    uint64_t deleted;
    ks_status st = ks_del_keys(client_ks(c), keys, n, &deleted);
    if (keys != small) free(keys);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, (long long)deleted);
}

void cmd_del(client *c)
{
    del_generic(c);
}
void cmd_unlink(client *c)
{
    del_generic(c);
}

static void exists_generic(client *c)
{
    long long n = 0;
    for (int j = 1; j < c->argc; j++) {
        ks_type t;
        if (ks_type_of(client_ks(c), c->argv[j].ptr, c->argv[j].len, &t) == KS_OK && t != KS_NONE)
            n++;
        else
            notify_keymiss(c, j);
    }
    add_reply_long_long(c, n);
}

void cmd_exists(client *c)
{
    exists_generic(c);
}
void cmd_touch(client *c)
{
    exists_generic(c);
}

void cmd_type(client *c)
{
    ks_type t;
    ks_status st = ks_type_of(client_ks(c), c->argv[1].ptr, c->argv[1].len, &t);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (t == KS_NONE) notify_keymiss(c, 1);
    add_reply_status(c, ks_type_name(t));
}

static int match_all(const arg *pat)
{
    return pat->len == 1 && pat->ptr[0] == '*';
}

/* Redis's parseScanCursorOrReply: a decimal unsigned 64-bit number. */
static int parse_cursor(client *c, const arg *a, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(a->ptr, &end, 10);
    if (isspace((unsigned char)a->ptr[0]) || errno == ERANGE || end != a->ptr + a->len) {
        add_reply_error(c, "ERR invalid cursor");
        return -1;
    }
    *out = v;
    return 0;
}

typedef struct scan_opts {
    const char *pat;
    size_t plen;
    uint64_t count;
    ks_type type;
    int no_type_match; /* TYPE names no type: nothing matches */
} scan_opts;

/* MATCH / COUNT [/ TYPE] from argv[first]; replies and returns -1 on error. */
static int parse_scan_opts(client *c, int first, int allow_type, scan_opts *o)
{
    *o = (scan_opts){NULL, 0, 10, KS_NONE, 0};
    for (int j = first; j < c->argc; j += 2) {
        const arg *a = &c->argv[j];
        if (j + 1 >= c->argc) {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
        const arg *v = &c->argv[j + 1];
        if (arg_is(a, "count")) {
            long long n;
            if (arg_to_ll(c, v, &n) < 0) return -1;
            if (n < 1) {
                add_reply_error(c, ERR_SYNTAX);
                return -1;
            }
            o->count = (uint64_t)n;
        } else if (arg_is(a, "match")) {
            o->pat = match_all(v) ? NULL : v->ptr;
            o->plen = v->len;
        } else if (allow_type && arg_is(a, "type")) {
            o->type = ks_type_by_name(v->ptr, v->len);
            o->no_type_match = o->type == KS_NONE;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

static void reply_cursor(client *c, uint64_t next)
{
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)next);
    add_reply_array_len(c, 2);
    add_reply_bulk(c, buf, (size_t)n);
}

/* Keys gathered by a SCAN step: the reply starts with the cursor, which is
 * known only after the walk. */
typedef struct key_list {
    char *data;
    size_t len, cap;
    size_t *ends;
    size_t n, ncap;
    int oom;
} key_list;

static int collect_key(void *arg, const char *key, size_t klen)
{
    key_list *l = arg;
    if (l->len + klen > l->cap) {
        size_t cap = (l->len + klen) * 2 + 256;
        char *d = realloc(l->data, cap);
        if (!d) return l->oom = 1;
        l->data = d;
        l->cap = cap;
    }
    if (l->n == l->ncap) {
        size_t ncap = l->ncap * 2 + 16;
        size_t *e = realloc(l->ends, ncap * sizeof(*e));
        if (!e) return l->oom = 1;
        l->ends = e;
        l->ncap = ncap;
    }
    if (klen) memcpy(l->data + l->len, key, klen); /* data may be NULL yet */
    l->len += klen;
    l->ends[l->n++] = l->len;
    return 0;
}

static void reply_key_list(client *c, const key_list *l, long n)
{
    add_reply_array_len(c, n);
    for (long i = 0; i < n; i++) {
        size_t from = i ? l->ends[i - 1] : 0;
        add_reply_bulk(c, l->data ? l->data + from : "", l->ends[i] - from);
    }
}

/* KEYS collects before replying, so an engine error mid-walk becomes one
 * error reply instead of a truncated array. */
void cmd_keys(client *c)
{
    key_list l = {0};
    const arg *p = &c->argv[1];
    ks_status st = ks_keys(client_ks(c), match_all(p) ? NULL : p->ptr, p->len, collect_key, &l);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else if (l.oom)
        add_reply_error(c, "ERR out of memory");
    else
        reply_key_list(c, &l, (long)l.n);
    free(l.data);
    free(l.ends);
}

void cmd_scan(client *c)
{
    uint64_t cursor, next = 0;
    scan_opts o;
    if (parse_cursor(c, &c->argv[1], &cursor) < 0 || parse_scan_opts(c, 2, 1, &o) < 0) return;
    key_list l = {0};
    ks_status st =
        ks_scan(client_ks(c), cursor, o.pat, o.plen, o.count, o.type, collect_key, &l, &next);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else if (l.oom)
        add_reply_error(c, "ERR out of memory");
    else {
        reply_cursor(c, next);
        reply_key_list(c, &l, o.no_type_match ? 0 : (long)l.n);
    }
    free(l.data);
    free(l.ends);
}

/* Does key argv[i] exist in db? Only asked when "new" events are on: the
 * keyspace reports a key it creates, not one RENAME or COPY overwrite,
 * which Redis also reports as new (it deletes, then adds). */
static int exists_for_new(client *c, int db, int i)
{
    if (!(notify_keyspace_flags & NOTIFY_NEW)) return 0;
    ks_ctx *k = client_ks(c);
    int saved = k->db;
    k->db = dbmap_stored(db);
    ks_type t;
    int e = ks_type_of(k, c->argv[i].ptr, c->argv[i].len, &t) == KS_OK && t != KS_NONE;
    k->db = saved;
    return e;
}

static int same_arg(const arg *a, const arg *b)
{
    return a->len == b->len && memcmp(a->ptr, b->ptr, a->len) == 0;
}

/* Redis counts a RENAME or MOVE as one change (its dirty counter, server.h)
 * where the keyspace touches both keys. */
static void count_one_change(uint64_t touches_before)
{
    if (server.cmd_touches > touches_before) server.cmd_touches = touches_before + 1;
}

static void rename_generic(client *c, int nx)
{
    int done;
    uint64_t touches = server.cmd_touches;
    int dst_existed = exists_for_new(c, c->db, 2);
    ks_status st = ks_rename(client_ks(c), c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr,
                             c->argv[2].len, nx, &done);
    count_one_change(touches);
    if (st == KS_OK && done && !same_arg(&c->argv[1], &c->argv[2])) {
        if (dst_existed) notify_arg(c, NOTIFY_NEW, "new", 2);
        notify_arg(c, NOTIFY_GENERIC, "rename_from", 1);
        notify_arg(c, NOTIFY_GENERIC, "rename_to", 2);
    }
    if (st == KS_NOTFOUND)
        add_reply_error(c, ERR_NO_SUCH_KEY);
    else if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else if (nx)
        add_reply_long_long(c, done);
    else
        add_reply_ok(c);
}

void cmd_rename(client *c)
{
    rename_generic(c, 0);
}
void cmd_renamenx(client *c)
{
    rename_generic(c, 1);
}

void cmd_copy(client *c)
{
    long long db = c->db;
    int replace = 0;
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "replace")) {
            replace = 1;
        } else if (arg_is(&c->argv[j], "db") && j + 1 < c->argc) {
            if (arg_to_ll(c, &c->argv[++j], &db) < 0) return;
            if (db < 0 || db >= KS_DATABASES || db > INT_MAX) {
                add_reply_error(c, ERR_DB_INDEX);
                return;
            }
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return;
        }
    }
    const arg *src = &c->argv[1], *dst = &c->argv[2];
    if (db == c->db && src->len == dst->len && memcmp(src->ptr, dst->ptr, src->len) == 0) {
        add_reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    int done;
    int dst_existed = exists_for_new(c, (int)db, 2);
    ks_status st = ks_copy(client_ks(c), src->ptr, src->len, dbmap_stored((int)db), dst->ptr,
                           dst->len, replace, &done);
    if (st == KS_OK && done) {
        if (dst_existed) notify_keyspace_event(NOTIFY_NEW, "new", (int)db, dst->ptr, dst->len);
        notify_keyspace_event(NOTIFY_GENERIC, "copy_to", (int)db, dst->ptr, dst->len);
    }
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, done);
}

void cmd_move(client *c)
{
    long long db;
    if (arg_to_ll(c, &c->argv[2], &db) < 0) return;
    if (db < INT_MIN || db > INT_MAX) { /* Redis's getIntFromObjectOrReply */
        add_reply_error(c, "ERR value is out of range, value must between -2147483648 and "
                           "2147483647");
        return;
    }
    if (db < 0 || db >= KS_DATABASES) {
        add_reply_error(c, ERR_DB_INDEX);
        return;
    }
    if (db == c->db) {
        add_reply_error(c, "ERR source and destination objects are the same");
        return;
    }
    int done;
    uint64_t touches = server.cmd_touches;
    ks_status st =
        ks_move(client_ks(c), c->argv[1].ptr, c->argv[1].len, dbmap_stored((int)db), &done);
    count_one_change(touches);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (done) {
        notify_arg(c, NOTIFY_GENERIC, "move_from", 1);
        notify_keyspace_event(NOTIFY_GENERIC, "move_to", (int)db, c->argv[1].ptr, c->argv[1].len);
    }
    add_reply_long_long(c, done);
}

/* SWAPDB a b: as Redis's, with Redis's texts. The data stays where it is
 * stored; only the map between logical and stored dbs changes (dbmap.c).
 * Watchers of a key that exists in either db are dirtied, clients blocked
 * on keys of either db look again. */
void cmd_swapdb(client *c)
{
    long long a, b;
    if (!ks_string2ll(c->argv[1].ptr, c->argv[1].len, &a) || a < INT_MIN || a > INT_MAX)
        return add_reply_error(c, "ERR invalid first DB index");
    if (!ks_string2ll(c->argv[2].ptr, c->argv[2].len, &b) || b < INT_MIN || b > INT_MAX)
        return add_reply_error(c, "ERR invalid second DB index");
    if (a < 0 || a >= KS_DATABASES || b < 0 || b >= KS_DATABASES)
        return add_reply_error(c, ERR_DB_INDEX);
    if (a != b) {
        server_watch_swap((int)a, (int)b);
        ks_status st = dbmap_swap(client_ks(c), (int)a, (int)b);
        if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c));
        block_signal_db((int)a);
        block_signal_db((int)b);
    }
    add_reply_ok(c);
}

void cmd_randomkey(client *c)
{
    char *key;
    size_t klen;
    ks_status st = ks_randomkey(client_ks(c), &key, &klen);
    if (st == KS_NOTFOUND) {
        add_reply_null(c);
        return;
    }
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    add_reply_bulk(c, key, klen);
    free(key);
}

/* ---- TTLs ---------------------------------------------------------------- */

/* EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT key time [NX|XX|GT|LT]. */
static void expire_generic(client *c, int seconds, int relative)
{
    int flags = 0;
    for (int j = 3; j < c->argc; j++) {
        const arg *a = &c->argv[j];
        if (arg_is(a, "nx"))
            flags |= KS_EXP_NX;
        else if (arg_is(a, "xx"))
            flags |= KS_EXP_XX;
        else if (arg_is(a, "gt"))
            flags |= KS_EXP_GT;
        else if (arg_is(a, "lt"))
            flags |= KS_EXP_LT;
        else {
            add_reply_error_fmt(c, "Unsupported option %s", a->ptr);
            return;
        }
    }
    if ((flags & KS_EXP_NX) && (flags & (KS_EXP_XX | KS_EXP_GT | KS_EXP_LT))) {
        add_reply_error(c, "NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & KS_EXP_GT) && (flags & KS_EXP_LT)) {
        add_reply_error(c, "GT and LT options at the same time are not compatible");
        return;
    }
    long long when;
    if (arg_to_ll(c, &c->argv[2], &when) < 0) return;
    int64_t base = relative ? client_ks(c)->now_ms : 0;
    if ((seconds && (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000)) ||
        (seconds ? when * 1000 : when) > LLONG_MAX - base) {
        add_reply_error_fmt(c, "invalid expire time in '%s' command", c->cmd->name);
        return;
    }
    when = (seconds ? when * 1000 : when) + base;
    int done;
    ks_status st = ks_expire_set(client_ks(c), c->argv[1].ptr, c->argv[1].len, when, flags, &done);
    if (st == KS_OK && done)
        notify_arg(c, NOTIFY_GENERIC, when <= client_ks(c)->now_ms ? "del" : "expire", 1);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, done);
}

void cmd_expire(client *c)
{
    expire_generic(c, 1, 1);
}
void cmd_pexpire(client *c)
{
    expire_generic(c, 0, 1);
}
void cmd_expireat(client *c)
{
    expire_generic(c, 1, 0);
}
void cmd_pexpireat(client *c)
{
    expire_generic(c, 0, 0);
}

/* TTL, PTTL, EXPIRETIME, PEXPIRETIME: -2 no key, -1 no expire. */
static void ttl_generic(client *c, int ms, int absolute)
{
    int64_t when;
    ks_ctx *k = client_ks(c);
    ks_status st = ks_expire_get(k, c->argv[1].ptr, c->argv[1].len, &when);
    if (st == KS_NOTFOUND) {
        notify_keymiss(c, 1);
        add_reply_long_long(c, -2);
        return;
    }
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (!when) {
        add_reply_long_long(c, -1);
        return;
    }
    long long t = absolute ? when : when - k->now_ms;
    if (t < 0) t = 0;
    /* Rounded to the nearest second without computing t + 500, which
     * overflows for an expiry near LLONG_MAX (Redis's reply is the exact
     * quotient). */
    add_reply_long_long(c, ms ? t : t / 1000 + (t % 1000 >= 500));
}

void cmd_ttl(client *c)
{
    ttl_generic(c, 0, 0);
}
void cmd_pttl(client *c)
{
    ttl_generic(c, 1, 0);
}
void cmd_expiretime(client *c)
{
    ttl_generic(c, 0, 1);
}
void cmd_pexpiretime(client *c)
{
    ttl_generic(c, 1, 1);
}

void cmd_persist(client *c)
{
    int done;
    ks_status st = ks_persist(client_ks(c), c->argv[1].ptr, c->argv[1].len, &done);
    if (st == KS_OK && done) notify_arg(c, NOTIFY_GENERIC, "persist", 1);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else
        add_reply_long_long(c, done);
}
