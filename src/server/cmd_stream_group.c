/*
 * cmd_stream_group.c -- consumer group commands: XGROUP (CREATE, SETID,
 * DESTROY, CREATECONSUMER, DELCONSUMER, HELP), XACK, XPENDING, XCLAIM,
 * XAUTOCLAIM. Argument order, replies and error texts follow Redis 7.0's
 * t_stream.c (the order in which errors are reported included); the data
 * work is in src/keyspace/ks_stream_group.c and ks_stream_pel.c.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "server/cmd_stream.h"

/* An integer argument with a command's own error text. 0, or -1 after
 * replying msg. */
static int arg_ll_msg(client *c, const arg *a, const char *msg, long long *v)
{
    if (ks_string2ll(a->ptr, a->len, v)) return 0;
    add_reply_error(c, msg);
    return -1;
}

/* Whether key holds group g: 0, or -1 after replying (WRONGTYPE); *miss
 * as keyspace/stream.h (0: both exist). */
static int group_probe(client *c, const arg *key, const arg *g, int *miss)
{
    ks_xpending_sum sum;
    *miss = 0;
    ks_status st =
        ks_xpending_summary(client_ks(c), key->ptr, key->len, g->ptr, g->len, &sum, miss);
    if (st == KS_OK || st == KS_NOTFOUND) return 0;
    add_reply_ks_error(c, st, client_ks(c));
    return -1;
}

/* ---- XGROUP --------------------------------------------------------------------- */

static const char *xgroup_help[] = {"CREATE <key> <groupname> <id|$> [option]",
                                    "    Create a new consumer group. Options are:",
                                    "    * MKSTREAM",
                                    "      Create the empty stream if it does not exist.",
                                    "    * ENTRIESREAD entries_read",
                                    "      Set the group's entries_read counter (internal use).",
                                    "CREATECONSUMER <key> <groupname> <consumer>",
                                    "    Create a new consumer in the specified group.",
                                    "DELCONSUMER <key> <groupname> <consumer>",
                                    "    Remove the specified consumer.",
                                    "DESTROY <key> <groupname>",
                                    "    Remove the specified group.",
                                    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
                                    "    Set the current group ID and entries_read counter.",
                                    NULL};

static void subcommand_syntax(client *c)
{
    add_reply_error_fmt(c,
                        "unknown subcommand or wrong number of arguments for '%.128s'. Try "
                        "XGROUP HELP.",
                        c->argv[1].ptr);
}

/* XGROUP's argument checks, in Redis's order. Returns 0 with the options
 * parsed, or -1 after replying. */
static int xgroup_check(client *c, int *mkstream, long long *entries_read)
{
    const arg *sub = &c->argv[1];
    int create = arg_is(sub, "create"), setid = arg_is(sub, "setid");
    *mkstream = 0;
    *entries_read = KS_XENTRIES_READ_INVALID;
    for (int i = 5; i < c->argc;) {
        if (create && arg_is(&c->argv[i], "mkstream")) {
            *mkstream = 1;
            i++;
        } else if ((create || setid) && arg_is(&c->argv[i], "entriesread") && i + 1 < c->argc) {
            if (arg_to_ll(c, &c->argv[i + 1], entries_read) < 0) return -1;
            if (*entries_read < 0 && *entries_read != KS_XENTRIES_READ_INVALID) {
                add_reply_error(c, "value for ENTRIESREAD must be positive or -1");
                return -1;
            }
            i += 2;
        } else {
            subcommand_syntax(c);
            return -1;
        }
    }
    ks_type t;
    ks_status st = ks_type_of(client_ks(c), c->argv[2].ptr, c->argv[2].len, &t);
    if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c)), -1;
    if (t != KS_NONE && t != KS_STREAM) return add_reply_error(c, ERR_WRONGTYPE), -1;
    if (*mkstream) return 0;
    if (t == KS_NONE) {
        add_reply_error(c, "The XGROUP subcommand requires the key to exist. Note that for "
                           "CREATE you may want to use the MKSTREAM option to create an empty "
                           "stream automatically.");
        return -1;
    }
    int miss;
    if (!create && !arg_is(sub, "destroy")) {
        if (group_probe(c, &c->argv[2], &c->argv[3], &miss) < 0) return -1;
        if (miss) {
            add_reply_error_fmt(c, "-NOGROUP No such consumer group '%s' for key name '%s'",
                                c->argv[3].ptr, c->argv[2].ptr);
            return -1;
        }
    }
    return 0;
}

/* The <id|$> argument: *dollar set for `$`. */
static int group_id_arg(client *c, const arg *a, int strict, ks_xid *id, int *dollar)
{
    *dollar = a->len == 1 && a->ptr[0] == '$';
    return *dollar ? 0 : xarg_id(c, a, 0, strict, NULL, id);
}

/* Whether group g of key has consumer name (XGROUP DELCONSUMER notifies
 * only when it had). */
typedef struct has_consumer {
    const arg *name;
    int found;
} has_consumer;

static void has_consumer_cb(void *arg, const ks_xconsumer_info *ci)
{
    has_consumer *h = arg;
    if (ci->nl == h->name->len && memcmp(ci->name, h->name->ptr, ci->nl) == 0) h->found = 1;
}

static int consumer_exists(client *c, const arg *key, const arg *g, const arg *cn)
{
    has_consumer h = {cn, 0};
    uint64_t n;
    int miss = 0;
    ks_xconsumers(client_ks(c), key->ptr, key->len, g->ptr, g->len, has_consumer_cb, &h, &n, &miss);
    return h.found;
}

int xconsumer_missing(client *c, const arg *key, const arg *g, const arg *cn)
{
    return (notify_keyspace_flags & NOTIFY_STREAM) && !consumer_exists(c, key, g, cn);
}

void xnotify_consumer(client *c, const arg *key, const arg *g, const arg *cn, int was_missing)
{
    if (was_missing && consumer_exists(c, key, g, cn))
        notify_keyspace_event(NOTIFY_STREAM, "xgroup-createconsumer", c->db, key->ptr, key->len);
}

void cmd_xgroup(client *c)
{
    const arg *sub = &c->argv[1];
    static const struct {
        const char *name;
        int arity;
    } subs[] = {{"create", -5},        {"setid", -5},      {"destroy", 4},
                {"createconsumer", 5}, {"delconsumer", 5}, {"help", 2}};
    size_t s;
    for (s = 0; s < sizeof(subs) / sizeof(subs[0]) && !arg_is(sub, subs[s].name); s++)
        ;
    if (s == sizeof(subs) / sizeof(subs[0])) return add_reply_subcommand_error(c);
    int ar = subs[s].arity;
    if (ar > 0 ? c->argc != ar : c->argc < -ar) return add_reply_subcommand_arity(c);
    if (s == 5) return add_reply_help(c, xgroup_help);
    int mkstream, miss = 0;
    long long er;
    if (xgroup_check(c, &mkstream, &er) < 0) return;
    ks_ctx *kc = client_ks(c);
    const arg *key = &c->argv[2], *g = &c->argv[3];
    ks_status st = KS_OK;
    if (s == 0 || s == 1) {
        ks_xid id;
        int dollar;
        if ((s == 0 && c->argc > 8) || (s == 1 && c->argc != 5 && c->argc != 7))
            return subcommand_syntax(c);
        if (group_id_arg(c, &c->argv[4], s == 0, &id, &dollar) < 0) return;
        int created = 0;
        if (s == 0)
            st = ks_xgroup_create(kc, key->ptr, key->len, g->ptr, g->len, dollar ? NULL : &id, er,
                                  mkstream, &created);
        else
            st = ks_xgroup_setid(kc, key->ptr, key->len, g->ptr, g->len, dollar ? NULL : &id, er,
                                 &miss);
        if (st != KS_OK) return add_reply_ks_error(c, st, kc);
        if (s == 0 && !created)
            return add_reply_error(c, "-BUSYGROUP Consumer Group name already exists");
        notify_arg(c, NOTIFY_STREAM, s == 0 ? "xgroup-create" : "xgroup-setid", 2);
        return add_reply_ok(c);
    }
    if (s == 2) {
        int destroyed = 0;
        st = ks_xgroup_destroy(kc, key->ptr, key->len, g->ptr, g->len, &destroyed);
        if (st != KS_OK) return add_reply_ks_error(c, st, kc);
        if (destroyed) notify_arg(c, NOTIFY_STREAM, "xgroup-destroy", 2);
        return add_reply_long_long(c, destroyed);
    }
    const arg *cn = &c->argv[4];
    if (s == 3) {
        int created = 0;
        st = ks_xgroup_createconsumer(kc, key->ptr, key->len, g->ptr, g->len, cn->ptr, cn->len,
                                      &created, &miss);
        if (st != KS_OK) return add_reply_ks_error(c, st, kc);
        if (created) notify_arg(c, NOTIFY_STREAM, "xgroup-createconsumer", 2);
        return add_reply_long_long(c, created);
    }
    uint64_t pending = 0;
    int had = (notify_keyspace_flags & NOTIFY_STREAM) && consumer_exists(c, key, g, cn);
    st = ks_xgroup_delconsumer(kc, key->ptr, key->len, g->ptr, g->len, cn->ptr, cn->len, &pending,
                               &miss);
    if (st != KS_OK) return add_reply_ks_error(c, st, kc);
    if (had) notify_arg(c, NOTIFY_STREAM, "xgroup-delconsumer", 2);
    add_reply_long_long(c, (long long)pending);
}

/* ---- XACK ------------------------------------------------------------------------ */

void cmd_xack(client *c)
{
    ks_type t;
    ks_ctx *kc = client_ks(c);
    ks_status st = ks_type_of(kc, c->argv[1].ptr, c->argv[1].len, &t);
    if (st != KS_OK) return add_reply_ks_error(c, st, kc);
    if (t != KS_NONE && t != KS_STREAM) return add_reply_error(c, ERR_WRONGTYPE);
    int miss = 0;
    if (t == KS_NONE) return add_reply_long_long(c, 0);
    if (group_probe(c, &c->argv[1], &c->argv[2], &miss) < 0) return;
    if (miss) return add_reply_long_long(c, 0);
    size_t n = (size_t)(c->argc - 3);
    ks_xid small[16], *ids = n <= 16 ? small : malloc(n * sizeof(*ids));
    if (!ids) return add_reply_error(c, "ERR out of memory");
    for (size_t i = 0; i < n; i++)
        if (xarg_id(c, &c->argv[3 + i], 0, 1, NULL, &ids[i]) < 0) goto out;
    uint64_t acked = 0;
    st =
        ks_xack(kc, c->argv[1].ptr, c->argv[1].len, c->argv[2].ptr, c->argv[2].len, ids, n, &acked);
    if (st != KS_OK)
        add_reply_ks_error(c, st, kc);
    else
        add_reply_long_long(c, (long long)acked);
out:
    if (ids != small) free(ids);
}

/* ---- XPENDING ------------------------------------------------------------------------ */

static void pending_consumer_cb(void *arg, const ks_xconsumer_info *ci)
{
    void **a = arg;
    client *c = a[0];
    if (!ci->pending) return;
    add_reply_array_len(c, 2);
    add_reply_bulk(c, ci->name, ci->nl);
    add_reply_bulk_ll(c, (long long)ci->pending);
    ++*(long *)a[1];
}

static void pending_entry_cb(void *arg, const ks_xpel_info *p)
{
    client *c = arg;
    long long idle = server_now_ms() - p->delivery_time;
    add_reply_array_len(c, 4);
    add_reply_xid(c, &p->id);
    add_reply_bulk(c, p->consumer, p->cl);
    add_reply_long_long(c, idle < 0 ? 0 : idle);
    add_reply_long_long(c, (long long)p->delivery_count);
}

void cmd_xpending(client *c)
{
    const arg *key = &c->argv[1], *g = &c->argv[2], *cn = NULL;
    ks_xid start = {0, 0}, end = {0, 0};
    long long count = 0, minidle = 0;
    int justinfo = c->argc == 3, sx, ex, miss = 0;
    if (c->argc != 3 && (c->argc < 6 || c->argc > 9)) return add_reply_error(c, ERR_SYNTAX);
    if (c->argc >= 6) {
        int si = 3;
        if (arg_is(&c->argv[3], "idle")) {
            if (arg_to_ll(c, &c->argv[4], &minidle) < 0) return;
            if (c->argc < 8) return add_reply_error(c, ERR_SYNTAX);
            si += 2;
        }
        if (arg_to_ll(c, &c->argv[si + 2], &count) < 0) return;
        if (count < 0) count = 0;
        if (xarg_interval(c, &c->argv[si], 0, &sx, &start) < 0) return;
        if (sx && ks_xid_incr(&start) != 0)
            return add_reply_error(c, "invalid start ID for the interval");
        if (xarg_interval(c, &c->argv[si + 1], UINT64_MAX, &ex, &end) < 0) return;
        if (ex && ks_xid_decr(&end) != 0)
            return add_reply_error(c, "invalid end ID for the interval");
        if (si + 3 < c->argc) cn = &c->argv[si + 3];
    }
    ks_ctx *kc = client_ks(c);
    ks_xpending_sum sum;
    ks_status st = ks_xpending_summary(kc, key->ptr, key->len, g->ptr, g->len, &sum, &miss);
    if (st == KS_NOTFOUND) return xreply_nogroup(c, key, g, "");
    if (st != KS_OK) return add_reply_ks_error(c, st, kc);
    if (justinfo) {
        add_reply_array_len(c, 4);
        add_reply_long_long(c, (long long)sum.count);
        if (!sum.count) {
            add_reply_null(c);
            add_reply_null(c);
            add_reply_null_array(c);
            return;
        }
        add_reply_xid(c, &sum.min);
        add_reply_xid(c, &sum.max);
        long n = 0;
        void *arg[2] = {c, &n};
        void *len = add_reply_deferred_len(c);
        uint64_t total;
        st = ks_xconsumers(kc, key->ptr, key->len, g->ptr, g->len, pending_consumer_cb, arg, &total,
                           &miss);
        set_deferred_array_len(c, len, n);
        if (st != KS_OK) add_reply_ks_error(c, st, kc);
        return;
    }
    void *len = add_reply_deferred_len(c);
    uint64_t n = 0;
    st = ks_xpending_range(kc, key->ptr, key->len, g->ptr, g->len, cn ? cn->ptr : NULL,
                           cn ? cn->len : 0, &start, &end, (uint64_t)count, minidle,
                           pending_entry_cb, c, &n, &miss);
    set_deferred_array_len(c, len, (long)n);
    if (st != KS_OK) add_reply_ks_error(c, st, kc);
}

/* ---- XCLAIM, XAUTOCLAIM ------------------------------------------------------------------ */

typedef struct claim_reply {
    client *c;
    int justid;
} claim_reply;

static void claim_cb(void *arg, const ks_xid *id, const ks_field *f, size_t n, int exists)
{
    claim_reply *r = arg;
    if (r->justid)
        add_reply_xid(r->c, id);
    else
        xreply_entry(r->c, id, f, n, exists);
}

void cmd_xclaim(client *c)
{
    const arg *key = &c->argv[1], *g = &c->argv[2], *cn = &c->argv[3];
    int miss;
    if (group_probe(c, key, g, &miss) < 0) return;
    if (miss) return xreply_nogroup(c, key, g, "");
    ks_xclaim_opts o = {.delivery_time = -1, .retrycount = -1};
    if (arg_ll_msg(c, &c->argv[4], "Invalid min-idle-time argument for XCLAIM", &o.min_idle) < 0)
        return;
    if (o.min_idle < 0) o.min_idle = 0;
    size_t n = (size_t)(c->argc - 5), nids = 0;
    ks_xid small[16], *ids = n <= 16 ? small : malloc(n * sizeof(*ids));
    if (!ids) return add_reply_error(c, "ERR out of memory");
    int j = 5;
    for (; j < c->argc && xarg_id(NULL, &c->argv[j], 0, 1, NULL, &ids[nids]) == 0; j++)
        nids++;
    int64_t now = server_now_ms();
    for (; j < c->argc; j++) {
        const arg *opt = &c->argv[j];
        int more = c->argc - 1 - j;
        long long v;
        if (arg_is(opt, "force")) {
            o.force = 1;
        } else if (arg_is(opt, "justid")) {
            o.justid = 1;
        } else if (arg_is(opt, "idle") && more) {
            if (arg_ll_msg(c, &c->argv[++j], "Invalid IDLE option argument for XCLAIM", &v) < 0)
                goto out;
            o.delivery_time = now - v;
        } else if (arg_is(opt, "time") && more) {
            if (arg_ll_msg(c, &c->argv[++j], "Invalid TIME option argument for XCLAIM", &v) < 0)
                goto out;
            o.delivery_time = v;
        } else if (arg_is(opt, "retrycount") && more) {
            if (arg_ll_msg(c, &c->argv[++j], "Invalid RETRYCOUNT option argument for XCLAIM",
                           &o.retrycount) < 0)
                goto out;
        } else if (arg_is(opt, "lastid") && more) {
            if (xarg_id(c, &c->argv[++j], 0, 1, NULL, &o.lastid) < 0) goto out;
        } else {
            add_reply_error_fmt(c, "Unrecognized XCLAIM option '%s'", opt->ptr);
            goto out;
        }
    }
    ks_ctx *kc = client_ks(c);
    claim_reply r = {c, o.justid};
    uint64_t claimed = 0;
    void *len = add_reply_deferred_len(c);
    int missing = xconsumer_missing(c, key, g, cn);
    ks_status st = ks_xclaim(kc, key->ptr, key->len, g->ptr, g->len, cn->ptr, cn->len, ids, nids,
                             &o, claim_cb, &r, &claimed, &miss);
    if (st == KS_OK) xnotify_consumer(c, key, g, cn, missing);
    set_deferred_array_len(c, len, (long)claimed);
    if (st != KS_OK) add_reply_ks_error(c, st, kc);
out:
    if (ids != small) free(ids);
}

static void autoclaim_head_cb(void *arg, const ks_xid *next, uint64_t claimed)
{
    claim_reply *r = arg;
    add_reply_array_len(r->c, 3);
    add_reply_xid(r->c, next);
    add_reply_array_len(r->c, (long)claimed);
}

static void autoclaim_del_cb(void *arg, const ks_xid *ids, size_t n)
{
    claim_reply *r = arg;
    add_reply_array_len(r->c, (long)n);
    for (size_t i = 0; i < n; i++)
        add_reply_xid(r->c, &ids[i]);
}

void cmd_xautoclaim(client *c)
{
    const arg *key = &c->argv[1], *g = &c->argv[2], *cn = &c->argv[3];
    long long minidle, count = 100;
    ks_xid start;
    int sx, justid = 0, miss;
    if (arg_ll_msg(c, &c->argv[4], "Invalid min-idle-time argument for XAUTOCLAIM", &minidle) < 0)
        return;
    if (minidle < 0) minidle = 0;
    if (xarg_interval(c, &c->argv[5], 0, &sx, &start) < 0) return;
    if (sx && ks_xid_incr(&start) != 0)
        return add_reply_error(c, "invalid start ID for the interval");
    for (int j = 6; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "count") && c->argc - 1 - j > 0) {
            long long v;
            if (!ks_string2ll(c->argv[j + 1].ptr, c->argv[j + 1].len, &v) || v < 1 ||
                v > LONG_MAX / 16)
                return add_reply_error(c, "COUNT must be > 0");
            count = v;
            j++;
        } else if (arg_is(&c->argv[j], "justid")) {
            justid = 1;
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    if (group_probe(c, key, g, &miss) < 0) return;
    if (miss) return xreply_nogroup(c, key, g, "");
    ks_ctx *kc = client_ks(c);
    claim_reply r = {c, justid};
    ks_xautoclaim_cbs cb = {autoclaim_head_cb, claim_cb, autoclaim_del_cb, &r};
    int missing = xconsumer_missing(c, key, g, cn);
    ks_status st = ks_xautoclaim(kc, key->ptr, key->len, g->ptr, g->len, cn->ptr, cn->len, minidle,
                                 &start, (uint64_t)count, justid, &cb, &miss);
    if (st == KS_OK) xnotify_consumer(c, key, g, cn, missing);
    if (st != KS_OK) add_reply_ks_error(c, st, kc);
}
