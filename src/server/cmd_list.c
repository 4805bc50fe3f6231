/*
 * cmd_list.c -- list commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP,
 * LLEN, LRANGE, LINDEX, LSET, LINSERT, LREM, LTRIM, LPOS, LMOVE,
 * RPOPLPUSH, LMPOP and the blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
 * BLMPOP. Replies, error texts and the order in which arguments and the
 * key are checked follow Redis 7.0 (t_list.c); the data work is in
 * src/keyspace/ks_list.c, the waiting in blocking.c.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/reply.h"
#include "server/server.h"

/* ---- Arguments ------------------------------------------------------------------ */

/* argv[first..argc) as items (no copies). small holds 16; larger arrays
 * are malloc'd (free when != small); NULL after replying out of memory. */
static ks_field *argv_items(client *c, int first, ks_field *small, size_t *n)
{
    *n = (size_t)(c->argc - first);
    ks_field *f = *n <= 16 ? small : malloc(*n * sizeof(*f));
    if (!f) {
        add_reply_error(c, "ERR out of memory");
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        f[i] = (ks_field){c->argv[first + i].ptr, c->argv[first + i].len, NULL, 0};
    return f;
}

/* An integer in [min, max], as Redis's getRangeLongFromObjectOrReply: msg
 * (or the not-an-integer text / range_msg) is the error. -1 after
 * replying. */
static int arg_range(client *c, const arg *a, long long min, long long max, const char *msg,
                     const char *range_msg, long long *out)
{
    if (!ks_string2ll(a->ptr, a->len, out)) {
        add_reply_error(c, msg ? msg : ERR_NOT_INTEGER);
        return -1;
    }
    if (*out < min || *out > max) {
        add_reply_error(c, msg ? msg : range_msg);
        return -1;
    }
    return 0;
}

static int arg_positive(client *c, const arg *a, const char *msg, long long *out)
{
    return arg_range(c, a, 0, INT64_MAX, msg, "value is out of range, must be positive", out);
}

/* LEFT / RIGHT; -1 after replying a syntax error. */
static int arg_where(client *c, const arg *a, int *where)
{
    if (arg_is(a, "left"))
        *where = KS_LIST_HEAD;
    else if (arg_is(a, "right"))
        *where = KS_LIST_TAIL;
    else
        return add_reply_error(c, ERR_SYNTAX), -1;
    return 0;
}

static const arg *key_arg(client *c)
{
    return &c->argv[1];
}

/* ---- Replies -------------------------------------------------------------------- */

static void reply_items(void *arg, const ks_field *f, size_t n)
{
    add_reply_hash(arg, f, n, REPLY_HASH_FIELDS);
}

static void reply_first(void *arg, const ks_field *f, size_t n)
{
    add_reply_bulk(arg, f[0].f, f[0].fl);
}

/* A reply that names the key the items came from. */
typedef struct keyed {
    client *c;
    const char *key;
    size_t klen;
} keyed;

static void reply_keyed_first(void *arg, const ks_field *f, size_t n) /* BLPOP */
{
    keyed *k = arg;
    add_reply_array_len(k->c, 2);
    add_reply_bulk(k->c, k->key, k->klen);
    add_reply_bulk(k->c, f[0].f, f[0].fl);
}

static void reply_keyed_items(void *arg, const ks_field *f, size_t n) /* LMPOP */
{
    keyed *k = arg;
    add_reply_array_len(k->c, 2);
    add_reply_bulk(k->c, k->key, k->klen);
    add_reply_hash(k->c, f, n, REPLY_HASH_FIELDS);
}

/* A keyspace error, or st when it is KS_OK / KS_NOTFOUND (not replied). */
static ks_status check(client *c, ks_status st)
{
    if (st != KS_OK && st != KS_NOTFOUND) add_reply_ks_error(c, st, client_ks(c));
    return st;
}

/* ---- Push, pop, length ---------------------------------------------------------- */

/* Redis's events after items left key: "lpop"/"rpop", then "del" when
 * that emptied the list (listElementsRemoved). */
static void notify_popped(client *c, const char *key, size_t klen, int where)
{
    notify_keyspace_event(NOTIFY_LIST, where == KS_LIST_HEAD ? "lpop" : "rpop", c->db, key, klen);
    notify_del_if_gone(c, key, klen);
}

static void push_generic(client *c, int where, int xx)
{
    ks_field small[16];
    size_t n;
    ks_field *f = argv_items(c, 2, small, &n);
    if (!f) return;
    uint64_t len;
    ks_status st =
        check(c, ks_lpush(client_ks(c), key_arg(c)->ptr, key_arg(c)->len, where, xx, f, n, &len));
    if (f != small) free(f);
    if (st == KS_OK) notify_arg(c, NOTIFY_LIST, where == KS_LIST_HEAD ? "lpush" : "rpush", 1);
    if (st == KS_OK || st == KS_NOTFOUND) add_reply_long_long(c, (long long)len);
}

void cmd_lpush(client *c)
{
    push_generic(c, KS_LIST_HEAD, 0);
}
void cmd_rpush(client *c)
{
    push_generic(c, KS_LIST_TAIL, 0);
}
void cmd_lpushx(client *c)
{
    push_generic(c, KS_LIST_HEAD, 1);
}
void cmd_rpushx(client *c)
{
    push_generic(c, KS_LIST_TAIL, 1);
}

/* The key's length and type, for the replies Redis gives before it looks
 * at an argument (KS_OK, KS_NOTFOUND, or an error already replied). */
static ks_status llen(client *c, const arg *key, uint64_t *n)
{
    return check(c, ks_llen(client_ks(c), key->ptr, key->len, n));
}

static void pop_generic(client *c, int where)
{
    long long count = 1;
    int hascount = c->argc == 3;
    if (c->argc > 3) return add_reply_wrong_arity(c);
    if (hascount && arg_positive(c, &c->argv[2], NULL, &count) < 0) return;
    const arg *k = key_arg(c);
    ks_status st;
    if (count == 0) { /* existence and type only */
        uint64_t n;
        if ((st = llen(c, k, &n)) == KS_OK) add_reply_array_len(c, 0);
    } else {
        st = check(c, ks_lpop(client_ks(c), k->ptr, k->len, where, (uint64_t)count,
                              hascount ? reply_items : reply_first, c));
        if (st == KS_OK) notify_popped(c, k->ptr, k->len, where);
    }
    if (st == KS_NOTFOUND) hascount ? add_reply_null_array(c) : add_reply_null(c);
}

void cmd_lpop(client *c)
{
    pop_generic(c, KS_LIST_HEAD);
}
void cmd_rpop(client *c)
{
    pop_generic(c, KS_LIST_TAIL);
}

void cmd_llen(client *c)
{
    uint64_t n;
    ks_status st = llen(c, key_arg(c), &n);
    if (st == KS_OK || st == KS_NOTFOUND) add_reply_long_long(c, (long long)n);
}

/* ---- Indexes and ranges --------------------------------------------------------- */

void cmd_lindex(client *c)
{
    const arg *k = key_arg(c);
    long long index;
    ks_status st;
    if (!ks_string2ll(c->argv[2].ptr, c->argv[2].len, &index)) { /* the key is looked at first */
        uint64_t n;
        if ((st = llen(c, k, &n)) == KS_OK) add_reply_error(c, ERR_NOT_INTEGER);
        if (st == KS_NOTFOUND) add_reply_null(c);
        return;
    }
    ks_val v;
    st = check(c, ks_lindex(client_ks(c), k->ptr, k->len, index, &v));
    if (st == KS_OK) add_reply_bulk(c, v.p, v.n);
    if (st == KS_NOTFOUND) add_reply_null(c);
    if (st == KS_OK) ks_val_free(&v);
}

void cmd_lset(client *c)
{
    const arg *k = key_arg(c);
    long long index;
    ks_status st;
    if (!ks_string2ll(c->argv[2].ptr, c->argv[2].len, &index)) {
        uint64_t n;
        if ((st = llen(c, k, &n)) == KS_OK) add_reply_error(c, ERR_NOT_INTEGER);
    } else {
        st = check(c, ks_lset(client_ks(c), k->ptr, k->len, index, c->argv[3].ptr, c->argv[3].len));
        if (st == KS_OK) notify_arg(c, NOTIFY_LIST, "lset", 1);
        if (st == KS_OK) add_reply_ok(c);
    }
    if (st == KS_NOTFOUND) add_reply_error(c, ERR_NO_SUCH_KEY);
}

static void reply_range_len(void *arg, uint64_t n)
{
    add_reply_array_len(arg, (long)n);
}

static void reply_range_items(void *arg, const ks_field *f, size_t n)
{
    add_reply_hash(arg, f, n, REPLY_HASH_BULKS);
}

void cmd_lrange(client *c)
{
    long long start, end;
    if (arg_to_ll(c, &c->argv[2], &start) < 0 || arg_to_ll(c, &c->argv[3], &end) < 0) return;
    const arg *k = key_arg(c);
    reply_mark mark; /* a big list streams into the reply: an error takes it back */
    reply_mark_get(c, &mark);
    ks_status st =
        ks_lrange(client_ks(c), k->ptr, k->len, start, end, reply_range_len, reply_range_items, c);
    if (st != KS_OK && st != KS_NOTFOUND) reply_truncate(c, &mark);
    check(c, st);
    if (st == KS_NOTFOUND) add_reply_array_len(c, 0);
}

void cmd_ltrim(client *c)
{
    long long start, end;
    if (arg_to_ll(c, &c->argv[2], &start) < 0 || arg_to_ll(c, &c->argv[3], &end) < 0) return;
    const arg *k = key_arg(c);
    ks_status st = check(c, ks_ltrim(client_ks(c), k->ptr, k->len, start, end));
    if (st == KS_OK) {
        notify_arg(c, NOTIFY_LIST, "ltrim", 1);
        notify_del_if_gone(c, k->ptr, k->len);
    }
    if (st == KS_OK || st == KS_NOTFOUND) add_reply_ok(c);
}

/* ---- Search and change ---------------------------------------------------------- */

void cmd_linsert(client *c)
{
    int after;
    if (arg_is(&c->argv[2], "after"))
        after = 1;
    else if (arg_is(&c->argv[2], "before"))
        after = 0;
    else
        return add_reply_error(c, ERR_SYNTAX);
    const arg *k = key_arg(c);
    long long len;
    ks_status st = check(c, ks_linsert(client_ks(c), k->ptr, k->len, after, c->argv[3].ptr,
                                       c->argv[3].len, c->argv[4].ptr, c->argv[4].len, &len));
    if (st == KS_OK && len > 0) notify_arg(c, NOTIFY_LIST, "linsert", 1);
    if (st == KS_OK) add_reply_long_long(c, len);
    if (st == KS_NOTFOUND) add_reply_long_long(c, 0);
}

void cmd_lrem(client *c)
{
    long long count;
    if (arg_to_ll(c, &c->argv[2], &count) < 0) return;
    const arg *k = key_arg(c);
    uint64_t removed;
    ks_status st = check(
        c, ks_lrem(client_ks(c), k->ptr, k->len, count, c->argv[3].ptr, c->argv[3].len, &removed));
    if (st == KS_OK && removed) {
        notify_arg(c, NOTIFY_LIST, "lrem", 1);
        notify_del_if_gone(c, k->ptr, k->len);
    }
    if (st == KS_OK || st == KS_NOTFOUND)
        add_reply_long_long(c, st == KS_OK ? (long long)removed : 0);
}

/* LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] */
void cmd_lpos(client *c)
{
    long long rank = 1, count = -1, maxlen = 0; /* count -1: no COUNT */
    for (int j = 3; j < c->argc; j++) {
        const arg *opt = &c->argv[j];
        int more = j + 1 < c->argc;
        if (arg_is(opt, "rank") && more) {
            if (arg_to_ll(c, &c->argv[++j], &rank) < 0) return;
            if (rank == 0)
                return add_reply_error(c, "RANK can't be zero: use 1 to start from the first "
                                          "match, 2 from the second ... or use negative to start "
                                          "from the end of the list");
        } else if (arg_is(opt, "count") && more) {
            if (arg_positive(c, &c->argv[++j], "COUNT can't be negative", &count) < 0) return;
        } else if (arg_is(opt, "maxlen") && more) {
            if (arg_positive(c, &c->argv[++j], "MAXLEN can't be negative", &maxlen) < 0) return;
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    const arg *k = key_arg(c);
    uint64_t *idx;
    size_t n;
    ks_status st =
        check(c, ks_lpos(client_ks(c), k->ptr, k->len, c->argv[2].ptr, c->argv[2].len, rank,
                         count < 0 ? 1 : (uint64_t)count, (uint64_t)maxlen, &idx, &n));
    if (st != KS_OK && st != KS_NOTFOUND) return;
    if (st == KS_NOTFOUND) n = 0;
    if (count >= 0) {
        add_reply_array_len(c, (long)n);
        for (size_t i = 0; i < n; i++)
            add_reply_long_long(c, (long long)idx[i]);
    } else if (n) {
        add_reply_long_long(c, (long long)idx[0]);
    } else {
        add_reply_null(c);
    }
    if (st == KS_OK) free(idx);
}

/* ---- Moving between lists ------------------------------------------------------- */

/* LMOVE src dst from to: the item, null when src is absent. Returns st. */
static ks_status move(client *c, const arg *src, const arg *dst, int from, int to)
{
    ks_val v;
    ks_status st =
        check(c, ks_lmove(client_ks(c), src->ptr, src->len, dst->ptr, dst->len, from, to, &v));
    if (st == KS_OK) { /* Redis: the push on dst, then the pop on src */
        notify_keyspace_event(NOTIFY_LIST, to == KS_LIST_HEAD ? "lpush" : "rpush", c->db, dst->ptr,
                              dst->len);
        notify_popped(c, src->ptr, src->len, from);
        add_reply_bulk(c, v.p, v.n);
        ks_val_free(&v);
    }
    return st;
}

void cmd_lmove(client *c)
{
    int from, to;
    if (arg_where(c, &c->argv[3], &from) < 0 || arg_where(c, &c->argv[4], &to) < 0) return;
    if (move(c, &c->argv[1], &c->argv[2], from, to) == KS_NOTFOUND) add_reply_null(c);
}

void cmd_rpoplpush(client *c)
{
    if (move(c, &c->argv[1], &c->argv[2], KS_LIST_TAIL, KS_LIST_HEAD) == KS_NOTFOUND)
        add_reply_null(c);
}

/* Pops from the first of keys[0..n) that holds a list: count items
 * (LMPOP's reply) or, count 0, one (BLPOP's). KS_NOTFOUND when none does
 * (nothing replied), KS_OK when it replied, or an error (replied). */
static ks_status pop_first(client *c, const arg *keys, int n, int where, uint64_t count)
{
    for (int i = 0; i < n; i++) {
        keyed k = {c, keys[i].ptr, keys[i].len};
        ks_status st = check(c, ks_lpop(client_ks(c), k.key, k.klen, where, count ? count : 1,
                                        count ? reply_keyed_items : reply_keyed_first, &k));
        if (st == KS_OK) notify_popped(c, k.key, k.klen, where);
        if (st != KS_NOTFOUND) return st;
    }
    return KS_NOTFOUND;
}

/* LMPOP/BLMPOP's numkeys key... LEFT|RIGHT [COUNT count] from argv[at]:
 * *keys, *n, *where, *count; -1 after replying an error. */
static int mpop_parse(client *c, int at, const arg **keys, int *n, int *where, long long *count)
{
    long long nk;
    if (arg_range(c, &c->argv[at], 1, INT64_MAX, "numkeys should be greater than 0", NULL, &nk) < 0)
        return -1;
    if (nk >= c->argc - at - 1) return add_reply_error(c, ERR_SYNTAX), -1;
    int w = at + 1 + (int)nk;
    if (arg_where(c, &c->argv[w], where) < 0) return -1;
    *count = -1;
    for (int j = w + 1; j < c->argc; j++) {
        if (*count == -1 && arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            if (arg_range(c, &c->argv[++j], 1, INT64_MAX, "count should be greater than 0", NULL,
                          count) < 0)
                return -1;
        } else {
            return add_reply_error(c, ERR_SYNTAX), -1;
        }
    }
    if (*count == -1) *count = 1;
    *keys = &c->argv[at + 1];
    *n = (int)nk;
    return 0;
}

void cmd_lmpop(client *c)
{
    const arg *keys;
    int n, where;
    long long count;
    if (mpop_parse(c, 1, &keys, &n, &where, &count) < 0) return;
    if (pop_first(c, keys, n, where, (uint64_t)count) == KS_NOTFOUND) add_reply_null_array(c);
}

/* ---- Blocking ------------------------------------------------------------------- */

/* What a client blocked in a list command waits to do. */
typedef struct list_wait {
    int where, to;
    uint64_t count; /* BLMPOP's; 0: one item, BLPOP's reply */
    char *dst;      /* BLMOVE / BRPOPLPUSH: NULL for the pops */
    size_t dl;
} list_wait;

/* Serves a blocked list command from key, now a list (or not: then it
 * keeps waiting). A BLMOVE whose destination is not a list is served its
 * WRONGTYPE, as Redis does, and the item stays. */
static int list_serve(client *c, void *state, const char *key, size_t klen, ks_type type)
{
    list_wait *w = state;
    if (type != KS_LIST) return 0;
    arg k = {(char *)key, klen};
    if (!w->dst) return pop_first(c, &k, 1, w->where, w->count) != KS_NOTFOUND;
    arg d = {w->dst, w->dl};
    return move(c, &k, &d, w->where, w->to) != KS_NOTFOUND;
}

static void list_wait_free(void *state)
{
    list_wait *w = state;
    free(w->dst);
    free(w);
}

static const block_ops list_block_ops = {list_serve, NULL, list_wait_free};

static void block_list(client *c, const arg *keys, int n, int64_t deadline, int where, int to,
                       uint64_t count, const arg *dst)
{
    list_wait *w = calloc(1, sizeof(*w));
    if (!w || (dst && !(w->dst = malloc(dst->len + 1)))) abort();
    w->where = where;
    w->to = to;
    w->count = count;
    if (dst) {
        memcpy(w->dst, dst->ptr, dst->len);
        w->dl = dst->len;
    }
    block_on_keys(c, &list_block_ops, keys, n, deadline, w);
}

/* BLPOP/BRPOP/BLMPOP once the timeout is parsed: the pop, or the wait. */
static void bpop(client *c, const arg *keys, int n, int where, uint64_t count, int64_t deadline)
{
    if (pop_first(c, keys, n, where, count) != KS_NOTFOUND) return;
    if (!block_allowed(c)) return add_reply_null_array(c); /* MULTI, scripts */
    block_list(c, keys, n, deadline, where, 0, count, NULL);
}

static void bpop_generic(client *c, int where)
{
    int64_t deadline;
    if (block_parse_timeout(c, &c->argv[c->argc - 1], BLOCK_SECONDS, &deadline) < 0) return;
    bpop(c, &c->argv[1], c->argc - 2, where, 0, deadline);
}

void cmd_blpop(client *c)
{
    bpop_generic(c, KS_LIST_HEAD);
}
void cmd_brpop(client *c)
{
    bpop_generic(c, KS_LIST_TAIL);
}

void cmd_blmpop(client *c)
{
    const arg *keys;
    int n, where;
    long long count;
    int64_t deadline;
    if (mpop_parse(c, 2, &keys, &n, &where, &count) < 0) return;
    if (block_parse_timeout(c, &c->argv[1], BLOCK_SECONDS, &deadline) < 0) return;
    bpop(c, keys, n, where, (uint64_t)count, deadline);
}

static void bmove(client *c, int from, int to, int64_t deadline)
{
    if (move(c, &c->argv[1], &c->argv[2], from, to) != KS_NOTFOUND) return;
    if (!block_allowed(c)) return add_reply_null(c);
    block_list(c, &c->argv[1], 1, deadline, from, to, 0, &c->argv[2]);
}

void cmd_blmove(client *c)
{
    int from, to;
    int64_t deadline;
    if (arg_where(c, &c->argv[3], &from) < 0 || arg_where(c, &c->argv[4], &to) < 0) return;
    if (block_parse_timeout(c, &c->argv[5], BLOCK_SECONDS, &deadline) < 0) return;
    bmove(c, from, to, deadline);
}

void cmd_brpoplpush(client *c)
{
    int64_t deadline;
    if (block_parse_timeout(c, &c->argv[3], BLOCK_SECONDS, &deadline) < 0) return;
    bmove(c, KS_LIST_TAIL, KS_LIST_HEAD, deadline);
}
