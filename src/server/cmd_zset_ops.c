/*
 * cmd_zset_ops.c -- multi-key sorted-set commands and pops: ZUNION,
 * ZINTER, ZDIFF, ZUNIONSTORE, ZINTERSTORE, ZDIFFSTORE, ZINTERCARD,
 * ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP (on
 * the server's blocking module, blocking.c). Argument rules, replies and
 * error texts follow Redis 7.0 (t_zset.c: zunionInterDiffGenericCommand,
 * genericZpopCommand, zmpopGenericCommand, blockingGenericZpopCommand);
 * the data work is in src/keyspace/ks_zset_ops.c and ks_zset_range.c.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "server/cmd_zset.h"

/* ---- ZUNION, ZINTER, ZDIFF and their STORE forms, ZINTERCARD ---------------------- */

/* Redis looks every input up (WRONGTYPE) before it reads the options. */
static int inputs_typed(client *c, const ks_field *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ks_type t;
        ks_status st = ks_type_of(client_ks(c), keys[i].f, keys[i].fl, &t);
        if (st != KS_OK) {
            reply_zerr(c, st);
            return -1;
        }
        if (t != KS_NONE && t != KS_ZSET && t != KS_SET) {
            add_reply_error(c, ERR_WRONGTYPE);
            return -1;
        }
    }
    return 0;
}

typedef struct setop_args {
    double *weights;
    int agg, withscores;
    long long limit;
} setop_args;

/* The options after the keys (from argv[j]); replies and returns -1 on
 * an error. */
static int setop_options(client *c, int j, size_t setnum, int op, int store, int card_only,
                         setop_args *o)
{
    while (j < c->argc) {
        int remaining = c->argc - j;
        const arg *a = &c->argv[j];
        if (op != KS_ZDIFF && !card_only && remaining >= (long long)setnum + 1 &&
            arg_is(a, "weights")) {
            j++;
            for (size_t i = 0; i < setnum; i++, j++)
                if (!zarg_double(&c->argv[j], &o->weights[i])) {
                    add_reply_error(c, "weight value is not a float");
                    return -1;
                }
        } else if (op != KS_ZDIFF && !card_only && remaining >= 2 && arg_is(a, "aggregate")) {
            const arg *v = &c->argv[j + 1];
            if (arg_is(v, "sum"))
                o->agg = KS_ZAGG_SUM;
            else if (arg_is(v, "min"))
                o->agg = KS_ZAGG_MIN;
            else if (arg_is(v, "max"))
                o->agg = KS_ZAGG_MAX;
            else {
                add_reply_error(c, ERR_SYNTAX);
                return -1;
            }
            j += 2;
        } else if (!store && !card_only && arg_is(a, "withscores")) {
            o->withscores = 1;
            j++;
        } else if (card_only && remaining >= 2 && arg_is(a, "limit")) {
            if (zarg_range(c, &c->argv[j + 1], 0, LLONG_MAX, "LIMIT can't be negative", &o->limit) <
                0)
                return -1;
            j += 2;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    return 0;
}

typedef struct zreply {
    client *c;
    int withscores;
} zreply;

static void zreply_fn(void *arg, const ks_zmember *z, size_t n)
{
    zreply *r = arg;
    reply_zmembers(r->c, z, n, r->withscores);
}

static void setop_generic(client *c, int op, int store, int card_only)
{
    int nki = store ? 2 : 1;
    long long setnum;
    if (zarg_long(c, &c->argv[nki], &setnum) < 0) return;
    if (setnum < 1) {
        add_reply_error_fmt(c, "at least 1 input key is needed for '%s' command", c->cmd->name);
        return;
    }
    if (setnum > c->argc - (nki + 1)) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    size_t n = (size_t)setnum;
    ks_field *keys = malloc(n * sizeof(*keys));
    setop_args o = {malloc(n * sizeof(double)), KS_ZAGG_SUM, 0, 0};
    if (!keys || !o.weights) {
        add_reply_error(c, "ERR out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        keys[i] = (ks_field){c->argv[nki + 1 + i].ptr, c->argv[nki + 1 + i].len, NULL, 0};
        o.weights[i] = 1.0;
    }
    if (inputs_typed(c, keys, n) < 0 ||
        setop_options(c, nki + 1 + (int)n, n, op, store, card_only, &o) < 0)
        goto out;
    zreply rr = {c, o.withscores};
    uint64_t card;
    int existed = store && notify_exists(c, c->argv[1].ptr, c->argv[1].len);
    ks_status st = ks_zsetop(client_ks(c), op, keys, op == KS_ZDIFF ? NULL : o.weights, n, o.agg,
                             store ? c->argv[1].ptr : NULL, store ? c->argv[1].len : 0,
                             (uint64_t)o.limit, store || card_only ? NULL : zreply_fn, &rr, &card);
    if (st == KS_OK && store) {
        static const char *ev[] = {
            [KS_ZUNION] = "zunionstore", [KS_ZINTER] = "zinterstore", [KS_ZDIFF] = "zdiffstore"};
        notify_stored(c, NOTIFY_ZSET, ev[op], &c->argv[1], card, existed);
    }
    if (st != KS_OK)
        reply_zerr(c, st);
    else if (store || card_only)
        add_reply_long_long(c, (long long)card);
out:
    free(keys);
    free(o.weights);
}

void cmd_zunion(client *c)
{
    setop_generic(c, KS_ZUNION, 0, 0);
}
void cmd_zinter(client *c)
{
    setop_generic(c, KS_ZINTER, 0, 0);
}
void cmd_zdiff(client *c)
{
    setop_generic(c, KS_ZDIFF, 0, 0);
}
void cmd_zunionstore(client *c)
{
    setop_generic(c, KS_ZUNION, 1, 0);
}
void cmd_zinterstore(client *c)
{
    setop_generic(c, KS_ZINTER, 1, 0);
}
void cmd_zdiffstore(client *c)
{
    setop_generic(c, KS_ZDIFF, 1, 0);
}
void cmd_zintercard(client *c)
{
    setop_generic(c, KS_ZINTER, 0, 1);
}

/* ---- ZPOPMIN, ZPOPMAX, ZMPOP -------------------------------------------------------- */

/* How a pop replies (genericZpopCommand): with the key (ZMPOP, BZ*),
 * nested member/score pairs or a flat list. */
typedef struct pop_reply {
    client *c;
    int emitkey, nested;
    arg key; /* the key popped from, for the notifications */
} pop_reply;

/* Redis's events after a pop: "zpopmin"/"zpopmax", then "del" when the
 * zset is empty (genericZpopCommand). */
static void notify_zpop(const pop_reply *r, int max)
{
    notify_keyspace_event(NOTIFY_ZSET, max ? "zpopmax" : "zpopmin", r->c->db, r->key.ptr,
                          r->key.len);
    notify_del_if_gone(r->c, r->key.ptr, r->key.len);
}

static void pop_fn(void *arg, const char *key, size_t klen, const ks_zmember *z, size_t n)
{
    pop_reply *r = arg;
    client *c = r->c;
    r->key.ptr = (char *)key;
    r->key.len = klen;
    if (r->emitkey && r->nested) {
        add_reply_array_len(c, 2);
        add_reply_bulk(c, key, klen);
        add_reply_array_len(c, (long)n);
    } else if (r->emitkey) {
        add_reply_array_len(c, (long)(2 * n + 1));
        add_reply_bulk(c, key, klen);
    } else {
        add_reply_array_len(c, (long)(r->nested ? n : 2 * n));
    }
    for (size_t i = 0; i < n; i++) {
        if (r->nested) add_reply_array_len(c, 2);
        add_reply_bulk(c, z[i].m, z[i].ml);
        add_reply_double(c, z[i].score);
    }
}

/* ZPOPMIN/ZPOPMAX key [count] */
static void zpop_generic(client *c, int max)
{
    if (c->argc > 3) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    long long count = -1;
    if (c->argc == 3 && zarg_range(c, &c->argv[2], 0, LLONG_MAX,
                                   "value is out of range, must be positive", &count) < 0)
        return;
    ks_ctx *k = client_ks(c);
    ks_field key = {c->argv[1].ptr, c->argv[1].len, NULL, 0};
    if (count == 0) { /* the key is still looked up and type-checked */
        ks_type t;
        ks_status st = ks_type_of(k, key.f, key.fl, &t);
        if (st != KS_OK)
            reply_zerr(c, st);
        else if (t != KS_NONE && t != KS_ZSET)
            add_reply_error(c, ERR_WRONGTYPE);
        else
            add_reply_array_len(c, 0);
        return;
    }
    pop_reply r = {c, 0, c->resp >= 3 && count != -1};
    ks_status st = ks_zpop(k, &key, 1, max, count == -1 ? 1 : (uint64_t)count, pop_fn, &r);
    if (st == KS_OK) notify_zpop(&r, max);
    if (st == KS_NOTFOUND)
        add_reply_array_len(c, 0);
    else if (st != KS_OK)
        reply_zerr(c, st);
}

void cmd_zpopmin(client *c)
{
    zpop_generic(c, 0);
}

void cmd_zpopmax(client *c)
{
    zpop_generic(c, 1);
}

/* The keys of a pop as keyspace fields (no copies); NULL on out of memory
 * (replied). */
static ks_field *pop_keys(client *c, const arg *a, int n)
{
    ks_field *keys = malloc((size_t)(n ? n : 1) * sizeof(*keys));
    if (!keys) {
        add_reply_error(c, "ERR out of memory");
        return NULL;
    }
    for (int i = 0; i < n; i++)
        keys[i] = (ks_field){a[i].ptr, a[i].len, NULL, 0};
    return keys;
}

/* Pops from the first of keys holding a zset and replies; KS_NOTFOUND
 * (nothing replied) when none does. */
static ks_status pop_first(client *c, const arg *a, int n, int max, uint64_t count, int nested)
{
    ks_field *keys = pop_keys(c, a, n);
    if (!keys) return KS_ERR_MSG;
    pop_reply r = {c, 1, nested};
    ks_status st = ks_zpop(client_ks(c), keys, (size_t)n, max, count, pop_fn, &r);
    if (st == KS_OK) notify_zpop(&r, max);
    free(keys);
    if (st != KS_OK && st != KS_NOTFOUND) reply_zerr(c, st);
    return st;
}

/* ZMPOP/BZMPOP: numkeys at argv[idx], its keys, MIN|MAX, [COUNT count]. */
static int mpop_parse(client *c, int idx, int *n, int *max, long long *count)
{
    long long numkeys;
    *count = -1;
    if (zarg_range(c, &c->argv[idx], 1, LLONG_MAX, "numkeys should be greater than 0", &numkeys) <
        0)
        return -1;
    if (numkeys >= c->argc - idx - 1) return add_reply_error(c, ERR_SYNTAX), -1;
    int where = idx + 1 + (int)numkeys;
    if (arg_is(&c->argv[where], "min"))
        *max = 0;
    else if (arg_is(&c->argv[where], "max"))
        *max = 1;
    else
        return add_reply_error(c, ERR_SYNTAX), -1;
    for (int j = where + 1; j < c->argc; j++) {
        if (*count == -1 && arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            if (zarg_range(c, &c->argv[++j], 1, LLONG_MAX, "count should be greater than 0",
                           count) < 0)
                return -1;
        } else {
            return add_reply_error(c, ERR_SYNTAX), -1;
        }
    }
    if (*count == -1) *count = 1;
    *n = (int)numkeys;
    return 0;
}

/* ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] */
void cmd_zmpop(client *c)
{
    int n, max;
    long long count;
    if (mpop_parse(c, 1, &n, &max, &count) < 0) return;
    if (pop_first(c, &c->argv[2], n, max, (uint64_t)count, 1) == KS_NOTFOUND)
        add_reply_null_array(c);
}

/* ---- BZPOPMIN, BZPOPMAX, BZMPOP --------------------------------------------------------- */

/* What a client blocked in a sorted-set pop waits to do. */
typedef struct zpop_wait {
    int max, nested;
    uint64_t count;
} zpop_wait;

/* Serves a blocked pop from key once it holds a zset (another type keeps
 * the client waiting, as Redis's BLOCKED_ZSET). */
static int zset_serve(client *c, void *state, const char *key, size_t klen, ks_type type)
{
    const zpop_wait *w = state;
    if (type != KS_ZSET) return 0;
    arg k = {(char *)key, klen};
    return pop_first(c, &k, 1, w->max, w->count, w->nested) != KS_NOTFOUND;
}

static const block_ops zset_block_ops = {zset_serve, NULL, free};

/* The pop when a key has members, else the wait (a null array where the
 * client must not block: MULTI/EXEC, scripts). */
static void bzpop(client *c, const arg *keys, int n, int max, uint64_t count, int nested,
                  int64_t deadline)
{
    if (pop_first(c, keys, n, max, count, nested) != KS_NOTFOUND) return;
    if (!block_allowed(c)) return add_reply_null_array(c);
    zpop_wait *w = malloc(sizeof(*w));
    if (!w) abort();
    *w = (zpop_wait){max, nested, count};
    block_on_keys(c, &zset_block_ops, keys, n, deadline, w);
}

/* BZPOPMIN/BZPOPMAX key [key ...] timeout: [key, member, score]. */
static void bzpop_generic(client *c, int max)
{
    int64_t deadline;
    if (block_parse_timeout(c, &c->argv[c->argc - 1], BLOCK_SECONDS, &deadline) < 0) return;
    bzpop(c, &c->argv[1], c->argc - 2, max, 1, 0, deadline);
}

void cmd_bzpopmin(client *c)
{
    bzpop_generic(c, 0);
}

void cmd_bzpopmax(client *c)
{
    bzpop_generic(c, 1);
}

/* BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count] */
void cmd_bzmpop(client *c)
{
    int n, max;
    long long count;
    int64_t deadline;
    if (mpop_parse(c, 2, &n, &max, &count) < 0) return;
    if (block_parse_timeout(c, &c->argv[1], BLOCK_SECONDS, &deadline) < 0) return;
    bzpop(c, &c->argv[3], n, max, (uint64_t)count, 1, deadline);
}
