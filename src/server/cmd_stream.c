/*
 * cmd_stream.c -- stream commands: XADD, XTRIM, XDEL, XLEN, XRANGE,
 * XREVRANGE, XSETID, XINFO. Syntax, replies and error texts follow Redis
 * 7.0 (t_stream.c); the data work is in src/keyspace/ks_stream*.c
 * (keyspace/stream.h). Consumer groups are in cmd_stream_group.c, XREAD
 * and XREADGROUP in cmd_stream_block.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/cmd_stream.h"

/* ---- Shared helpers ------------------------------------------------------- */

/* Redis's string2ull: string2ll when it fits, else strtoull's rules. */
static int parse_ull(const char *s, uint64_t *v)
{
    long long ll;
    if (ks_string2ll(s, strlen(s), &ll)) {
        if (ll < 0) return 0;
        *v = (uint64_t)ll;
        return 1;
    }
    errno = 0;
    char *end = NULL;
    unsigned long long u = strtoull(s, &end, 10);
    if (errno == EINVAL || errno == ERANGE || !(*s && *end == '\0')) return 0;
    *v = u;
    return 1;
}

int xarg_id(client *c, const arg *a, uint64_t missing_seq, int strict, int *seq_given, ks_xid *id)
{
    char buf[128];
    if (a->len > sizeof(buf) - 1) goto invalid;
    memcpy(buf, a->ptr, a->len + 1);
    if (strict && (buf[0] == '-' || buf[0] == '+') && buf[1] == '\0') goto invalid;
    if (seq_given) *seq_given = 1;
    if (buf[0] == '-' && buf[1] == '\0') {
        *id = (ks_xid){0, 0};
        return 0;
    }
    if (buf[0] == '+' && buf[1] == '\0') {
        *id = (ks_xid){UINT64_MAX, UINT64_MAX};
        return 0;
    }
    uint64_t ms, seq;
    char *dot = strchr(buf, '-');
    if (dot) *dot = '\0';
    if (!parse_ull(buf, &ms)) goto invalid;
    if (dot) {
        if (seq_given && dot[1] == '*' && dot[2] == '\0') {
            seq = 0;
            *seq_given = 0;
        } else if (!parse_ull(dot + 1, &seq)) {
            goto invalid;
        }
    } else {
        seq = missing_seq;
    }
    *id = (ks_xid){ms, seq};
    return 0;
invalid:
    if (c) add_reply_error(c, "Invalid stream ID specified as stream command argument");
    return -1;
}

int xarg_interval(client *c, const arg *a, uint64_t missing_seq, int *exclude, ks_xid *id)
{
    *exclude = a->len > 1 && a->ptr[0] == '(';
    if (!*exclude) return xarg_id(c, a, missing_seq, 0, NULL, id);
    arg t = {a->ptr + 1, a->len - 1};
    return xarg_id(c, &t, missing_seq, 1, NULL, id);
}

void add_reply_xid(client *c, const ks_xid *id)
{
    char buf[KS_XID_STR];
    add_reply_bulk(c, buf, ks_xid_format(id, buf));
}

void xreply_entry(void *arg, const ks_xid *id, const ks_field *f, size_t n, int exists)
{
    client *c = arg;
    add_reply_array_len(c, 2);
    add_reply_xid(c, id);
    if (!exists) {
        add_reply_null_array(c);
        return;
    }
    add_reply_array_len(c, (long)n * 2);
    for (size_t i = 0; i < n; i++) {
        add_reply_bulk(c, f[i].f, f[i].fl);
        add_reply_bulk(c, f[i].v, f[i].vl);
    }
}

void xreply_nogroup(client *c, const arg *key, const arg *group, const char *suffix)
{
    add_reply_error_fmt(c, "-NOGROUP No such key '%s' or consumer group '%s'%s", key->ptr,
                        group->ptr, suffix);
}

/* ---- XADD, XTRIM ------------------------------------------------------------ */

/* Redis's streamParseAddOrTrimArgsOrReply: the options from argv[2] on.
 * Returns the index of XADD's id (or of the end for XTRIM), or -1 after
 * replying. */
static int parse_add_trim(client *c, ks_xadd_args *a, int xadd)
{
    memset(a, 0, sizeof(*a));
    ks_xtrim_args *t = &a->trim;
    int i = 2, limit_given = 0;
    for (; i < c->argc; i++) {
        int more = c->argc - 1 - i;
        const arg *o = &c->argv[i];
        if (xadd && o->len == 1 && o->ptr[0] == '*') break;
        if ((arg_is(o, "maxlen") || arg_is(o, "minid")) && more) {
            int maxlen = arg_is(o, "maxlen");
            if (t->strategy != KS_XTRIM_NONE) {
                add_reply_error(c, "syntax error, MAXLEN and MINID options at the same time are "
                                   "not compatible");
                return -1;
            }
            t->approx = 0;
            const arg *nx = &c->argv[i + 1];
            if (more >= 2 && nx->len == 1 && (nx->ptr[0] == '~' || nx->ptr[0] == '=')) {
                t->approx = nx->ptr[0] == '~';
                i++;
            }
            if (maxlen) {
                if (arg_to_ll(c, &c->argv[i + 1], &t->maxlen) < 0) return -1;
                if (t->maxlen < 0) {
                    add_reply_error(c, "The MAXLEN argument must be >= 0.");
                    return -1;
                }
            } else if (xarg_id(c, &c->argv[i + 1], 0, 1, NULL, &t->minid) < 0) {
                return -1;
            }
            i++;
            t->strategy = maxlen ? KS_XTRIM_MAXLEN : KS_XTRIM_MINID;
        } else if (arg_is(o, "limit") && more) {
            if (arg_to_ll(c, &c->argv[i + 1], &t->limit) < 0) return -1;
            if (t->limit < 0) {
                add_reply_error(c, "The LIMIT argument must be >= 0.");
                return -1;
            }
            limit_given = 1;
            i++;
        } else if (xadd && arg_is(o, "nomkstream")) {
            a->nomkstream = 1;
        } else if (xadd) {
            if (xarg_id(c, o, 0, 1, &a->seq_given, &a->id) < 0) return -1;
            a->id_given = 1;
            break;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    if (t->limit && t->strategy == KS_XTRIM_NONE) {
        add_reply_error(c, "syntax error, LIMIT cannot be used without specifying a trimming "
                           "strategy");
        return -1;
    }
    if (!xadd && t->strategy == KS_XTRIM_NONE) {
        add_reply_error(c, "syntax error, XTRIM must be called with a trimming strategy");
        return -1;
    }
    if (limit_given && !t->approx) {
        add_reply_error(c, "syntax error, LIMIT cannot be used without the special ~ option");
        return -1;
    }
    if (!limit_given && t->approx) {
        long long node = ks_get_limits(server_keyspace())->stream_node_max_entries;
        t->limit = node > 1000000 / 100 ? 1000000 : 100 * node;
        if (t->limit <= 0) t->limit = 10000;
    }
    return i;
}

void cmd_xadd(client *c)
{
    ks_xadd_args a;
    int idpos = parse_add_trim(c, &a, 1);
    if (idpos < 0) return;
    int first = idpos + 1, nf = c->argc - first;
    if (nf < 2 || nf % 2) return add_reply_wrong_arity(c);
    if (a.id_given && a.seq_given && !a.id.ms && !a.id.seq)
        return add_reply_error(c, "The ID specified in XADD must be greater than 0-0");
    size_t n = (size_t)nf / 2;
    ks_field small[16], *fv = n <= 16 ? small : malloc(n * sizeof(*fv));
    if (!fv) return add_reply_error(c, "ERR out of memory");
    for (size_t i = 0; i < n; i++)
        fv[i] = (ks_field){c->argv[first + 2 * i].ptr, c->argv[first + 2 * i].len,
                           c->argv[first + 2 * i + 1].ptr, c->argv[first + 2 * i + 1].len};
    ks_xid id;
    uint64_t trimmed;
    ks_status st = ks_xadd(client_ks(c), c->argv[1].ptr, c->argv[1].len, &a, fv, n, &id, &trimmed);
    if (fv != small) free(fv);
    if (st == KS_NOTFOUND) return add_reply_null(c);
    if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c));
    notify_arg(c, NOTIFY_STREAM, "xadd", 1);
    if (trimmed) notify_arg(c, NOTIFY_STREAM, "xtrim", 1);
    add_reply_xid(c, &id);
}

void cmd_xtrim(client *c)
{
    ks_xadd_args a;
    if (parse_add_trim(c, &a, 0) < 0) return;
    uint64_t n = 0;
    ks_status st = ks_xtrim(client_ks(c), c->argv[1].ptr, c->argv[1].len, &a.trim, &n);
    if (st == KS_OK && n) notify_arg(c, NOTIFY_STREAM, "xtrim", 1);
    if (st != KS_OK && st != KS_NOTFOUND) return add_reply_ks_error(c, st, client_ks(c));
    add_reply_long_long(c, (long long)n);
}

/* ---- XDEL, XLEN, XRANGE ------------------------------------------------------ */

/* argv[first..] as strict ids into *ids (small has room for 16); -1 after
 * replying. */
static int parse_ids(client *c, int first, ks_xid *small, ks_xid **ids, size_t *n)
{
    *n = (size_t)(c->argc - first);
    *ids = *n <= 16 ? small : malloc(*n * sizeof(**ids));
    if (!*ids) {
        add_reply_error(c, "ERR out of memory");
        return -1;
    }
    for (size_t i = 0; i < *n; i++)
        if (xarg_id(c, &c->argv[first + (int)i], 0, 1, NULL, &(*ids)[i]) < 0) {
            if (*ids != small) free(*ids);
            return -1;
        }
    return 0;
}

void cmd_xdel(client *c)
{
    ks_type t;
    ks_status st = ks_type_of(client_ks(c), c->argv[1].ptr, c->argv[1].len, &t);
    if (st == KS_OK && t != KS_NONE && t != KS_STREAM) return add_reply_error(c, ERR_WRONGTYPE);
    ks_xid small[16], *ids;
    size_t n;
    if (parse_ids(c, 2, small, &ids, &n) < 0) return;
    uint64_t deleted = 0;
    st = ks_xdel(client_ks(c), c->argv[1].ptr, c->argv[1].len, ids, n, &deleted);
    if (ids != small) free(ids);
    if (st != KS_OK && st != KS_NOTFOUND) return add_reply_ks_error(c, st, client_ks(c));
    if (st == KS_OK && deleted) notify_arg(c, NOTIFY_STREAM, "xdel", 1);
    add_reply_long_long(c, (long long)deleted);
}

void cmd_xlen(client *c)
{
    uint64_t n = 0;
    ks_status st = ks_xlen(client_ks(c), c->argv[1].ptr, c->argv[1].len, &n);
    if (st != KS_OK && st != KS_NOTFOUND) return add_reply_ks_error(c, st, client_ks(c));
    add_reply_long_long(c, (long long)n);
}

static void xrange_generic(client *c, int rev)
{
    ks_xid start, end;
    int sx, ex;
    long long count = -1;
    if (xarg_interval(c, &c->argv[rev ? 3 : 2], 0, &sx, &start) < 0) return;
    if (sx && ks_xid_incr(&start) != 0)
        return add_reply_error(c, "invalid start ID for the interval");
    if (xarg_interval(c, &c->argv[rev ? 2 : 3], UINT64_MAX, &ex, &end) < 0) return;
    if (ex && ks_xid_decr(&end) != 0) return add_reply_error(c, "invalid end ID for the interval");
    for (int j = 4; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "count") && j + 1 < c->argc) {
            if (arg_to_ll(c, &c->argv[++j], &count) < 0) return;
            if (count < 0) count = 0;
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    ks_type t;
    ks_status st = ks_type_of(client_ks(c), c->argv[1].ptr, c->argv[1].len, &t);
    if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c));
    if (t == KS_NONE) return add_reply_array_len(c, 0);
    if (t != KS_STREAM) return add_reply_error(c, ERR_WRONGTYPE);
    if (count == 0) return add_reply_null_array(c);
    void *len = add_reply_deferred_len(c);
    uint64_t n = 0;
    st = ks_xrange(client_ks(c), c->argv[1].ptr, c->argv[1].len, &start, &end,
                   count < 0 ? 0 : (uint64_t)count, rev, xreply_entry, c, &n);
    if (st != KS_OK && st != KS_NOTFOUND) return add_reply_ks_error(c, st, client_ks(c));
    set_deferred_array_len(c, len, (long)n);
}

void cmd_xrange(client *c)
{
    xrange_generic(c, 0);
}

void cmd_xrevrange(client *c)
{
    xrange_generic(c, 1);
}

/* ---- XSETID -------------------------------------------------------------------- */

void cmd_xsetid(client *c)
{
    ks_xid id, maxdel = {0, 0};
    long long added = -1;
    if (xarg_id(c, &c->argv[2], 0, 1, NULL, &id) < 0) return;
    for (int i = 3; i < c->argc; i += 2) {
        int more = c->argc - 1 - i;
        if (arg_is(&c->argv[i], "entriesadded") && more) {
            if (arg_to_ll(c, &c->argv[i + 1], &added) < 0) return;
            if (added < 0) return add_reply_error(c, "entries_added must be positive");
        } else if (arg_is(&c->argv[i], "maxdeletedid") && more) {
            if (xarg_id(c, &c->argv[i + 1], 0, 1, NULL, &maxdel) < 0) return;
            if (ks_xid_cmp(&id, &maxdel) < 0)
                return add_reply_error(c, "The ID specified in XSETID is smaller than the "
                                          "provided max_deleted_entry_id");
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    ks_status st = ks_xsetid(client_ks(c), c->argv[1].ptr, c->argv[1].len, &id, added, &maxdel);
    if (st == KS_NOTFOUND) return add_reply_error(c, ERR_NO_SUCH_KEY);
    if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c));
    notify_arg(c, NOTIFY_STREAM, "xsetid", 1);
    add_reply_ok(c);
}

/* ---- XINFO ---------------------------------------------------------------------- */

static void reply_kv_ll(client *c, const char *k, long long v)
{
    add_reply_bulk_cstr(c, k);
    add_reply_long_long(c, v);
}

static void reply_kv_id(client *c, const char *k, const ks_xid *id)
{
    add_reply_bulk_cstr(c, k);
    add_reply_xid(c, id);
}

static void reply_group_counters(client *c, const ks_xgroup_info *g)
{
    add_reply_bulk_cstr(c, "entries-read");
    if (g->entries_read != KS_XENTRIES_READ_INVALID)
        add_reply_long_long(c, g->entries_read);
    else
        add_reply_null(c);
    add_reply_bulk_cstr(c, "lag");
    if (g->lag_valid)
        add_reply_long_long(c, g->lag);
    else
        add_reply_null(c);
}

static void group_info_cb(void *arg, const ks_xgroup_info *g)
{
    client *c = arg;
    add_reply_map_len(c, 6);
    add_reply_bulk_cstr(c, "name");
    add_reply_bulk(c, g->name, g->nl);
    reply_kv_ll(c, "consumers", (long long)g->consumers);
    reply_kv_ll(c, "pending", (long long)g->pending);
    reply_kv_id(c, "last-delivered-id", &g->last_id);
    reply_group_counters(c, g);
}

static void consumer_info_cb(void *arg, const ks_xconsumer_info *ci)
{
    client *c = arg;
    long long idle = server_now_ms() - ci->seen_time;
    add_reply_map_len(c, 3);
    add_reply_bulk_cstr(c, "name");
    add_reply_bulk(c, ci->name, ci->nl);
    reply_kv_ll(c, "pending", (long long)ci->pending);
    reply_kv_ll(c, "idle", idle < 0 ? 0 : idle);
}

/* XINFO STREAM key FULL: each group with its PEL and consumers. */
typedef struct full_ctx {
    client *c;
    const arg *key;
    uint64_t count; /* 0: all */
    ks_status st;
    int consumer_pel; /* the pending list being written is a consumer's (3 fields) */
} full_ctx;

static void full_pel_cb(void *arg, const ks_xpel_info *p)
{
    full_ctx *f = arg;
    add_reply_array_len(f->c, f->consumer_pel ? 3 : 4);
    add_reply_xid(f->c, &p->id);
    if (!f->consumer_pel) add_reply_bulk(f->c, p->consumer, p->cl);
    add_reply_long_long(f->c, p->delivery_time);
    add_reply_long_long(f->c, (long long)p->delivery_count);
}

static void full_pending(full_ctx *f, const char *g, size_t gl, const char *cn, size_t cnl)
{
    static const ks_xid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    uint64_t n = 0;
    int miss = 0;
    void *len = add_reply_deferred_len(f->c);
    f->consumer_pel = cn != NULL;
    ks_status st =
        ks_xpending_range(client_ks(f->c), f->key->ptr, f->key->len, g, gl, cn, cnl, &lo, &hi,
                          f->count ? f->count : UINT64_MAX, 0, full_pel_cb, f, &n, &miss);
    if (st != KS_OK && f->st == KS_OK) f->st = st;
    set_deferred_array_len(f->c, len, (long)n);
}

typedef struct full_group {
    full_ctx *f;
    const char *g;
    size_t gl;
} full_group;

static void full_consumer_cb(void *arg, const ks_xconsumer_info *ci)
{
    full_group *fg = arg;
    client *c = fg->f->c;
    add_reply_map_len(c, 4);
    add_reply_bulk_cstr(c, "name");
    add_reply_bulk(c, ci->name, ci->nl);
    reply_kv_ll(c, "seen-time", ci->seen_time);
    reply_kv_ll(c, "pel-count", (long long)ci->pending);
    add_reply_bulk_cstr(c, "pending");
    full_pending(fg->f, fg->g, fg->gl, ci->name, ci->nl);
}

static void full_group_cb(void *arg, const ks_xgroup_info *g)
{
    full_ctx *f = arg;
    client *c = f->c;
    add_reply_map_len(c, 7);
    add_reply_bulk_cstr(c, "name");
    add_reply_bulk(c, g->name, g->nl);
    reply_kv_id(c, "last-delivered-id", &g->last_id);
    reply_group_counters(c, g);
    reply_kv_ll(c, "pel-count", (long long)g->pending);
    add_reply_bulk_cstr(c, "pending");
    full_pending(f, g->name, g->nl, NULL, 0);
    add_reply_bulk_cstr(c, "consumers");
    add_reply_array_len(c, (long)g->consumers);
    full_group fg = {f, g->name, g->nl};
    uint64_t n;
    int miss;
    ks_status st = ks_xconsumers(client_ks(c), f->key->ptr, f->key->len, g->name, g->nl,
                                 full_consumer_cb, &fg, &n, &miss);
    if (st != KS_OK && f->st == KS_OK) f->st = st;
}

static void xinfo_stream(client *c, const ks_xinfo *in)
{
    static const ks_xid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    int optc = c->argc - 3, full = optc > 0;
    long long count = 10;
    if (full) {
        if ((optc != 1 && optc != 3) || !arg_is(&c->argv[3], "full") ||
            (optc == 3 && !arg_is(&c->argv[4], "count")))
            return add_reply_error_fmt(c,
                                       "unknown subcommand or wrong number of arguments for "
                                       "'%.128s'. Try XINFO HELP.",
                                       c->argv[1].ptr);
        if (optc == 3 && arg_to_ll(c, &c->argv[5], &count) < 0) return;
        if (count < 0) count = 10;
    }
    ks_ctx *kc = client_ks(c);
    const arg *key = &c->argv[2];
    uint64_t n;
    ks_status st = KS_OK;
    add_reply_map_len(c, full ? 9 : 10);
    reply_kv_ll(c, "length", (long long)in->length);
    reply_kv_ll(c, "radix-tree-keys", (long long)in->nodes);
    reply_kv_ll(c, "radix-tree-nodes", (long long)in->engine_keys);
    reply_kv_id(c, "last-generated-id", &in->last_id);
    reply_kv_id(c, "max-deleted-entry-id", &in->max_deleted);
    reply_kv_ll(c, "entries-added", (long long)in->entries_added);
    reply_kv_id(c, "recorded-first-entry-id", &in->first_id);
    if (!full) {
        reply_kv_ll(c, "groups", (long long)in->groups);
        for (int rev = 0; rev < 2 && st == KS_OK; rev++) {
            add_reply_bulk_cstr(c, rev ? "last-entry" : "first-entry");
            st = ks_xrange(kc, key->ptr, key->len, &lo, &hi, 1, rev, xreply_entry, c, &n);
            if (st == KS_OK && !n) add_reply_null(c);
        }
    } else {
        add_reply_bulk_cstr(c, "entries");
        void *len = add_reply_deferred_len(c);
        st = ks_xrange(kc, key->ptr, key->len, &lo, &hi, (uint64_t)count, 0, xreply_entry, c, &n);
        set_deferred_array_len(c, len, (long)n);
        add_reply_bulk_cstr(c, "groups");
        add_reply_array_len(c, (long)in->groups);
        full_ctx f = {c, key, (uint64_t)count, KS_OK, 0};
        if (st == KS_OK) st = ks_xgroups(kc, key->ptr, key->len, full_group_cb, &f, &n);
        if (st == KS_OK) st = f.st;
    }
    if (st != KS_OK) add_reply_ks_error(c, st, kc);
}

static const char *xinfo_help[] = {"CONSUMERS <key> <groupname>",
                                   "    Show consumers of <groupname>.",
                                   "GROUPS <key>",
                                   "    Show the stream consumer groups.",
                                   "STREAM <key> [FULL [COUNT <count>]",
                                   "    Show information about the stream.",
                                   NULL};

void cmd_xinfo(client *c)
{
    const arg *sub = &c->argv[1];
    if (arg_is(sub, "help")) {
        if (c->argc != 2) return add_reply_subcommand_arity(c);
        return add_reply_help(c, xinfo_help);
    }
    int known = arg_is(sub, "consumers") || arg_is(sub, "groups") || arg_is(sub, "stream");
    if (!known) return add_reply_subcommand_error(c);
    if ((arg_is(sub, "consumers") && c->argc != 4) || (arg_is(sub, "groups") && c->argc != 3) ||
        (arg_is(sub, "stream") && c->argc < 3))
        return add_reply_subcommand_arity(c);
    ks_ctx *kc = client_ks(c);
    const arg *key = &c->argv[2];
    ks_xinfo in;
    ks_status st = ks_xinfo_stream(kc, key->ptr, key->len, &in);
    if (st == KS_NOTFOUND) return add_reply_error(c, ERR_NO_SUCH_KEY);
    if (st != KS_OK) return add_reply_ks_error(c, st, kc);
    uint64_t n;
    int miss = 0;
    if (arg_is(sub, "stream")) return xinfo_stream(c, &in);
    if (arg_is(sub, "consumers")) {
        ks_xpending_sum sum;
        st = ks_xpending_summary(kc, key->ptr, key->len, c->argv[3].ptr, c->argv[3].len, &sum,
                                 &miss);
        if (st == KS_NOTFOUND)
            return add_reply_error_fmt(c, "-NOGROUP No such consumer group '%s' for key name '%s'",
                                       c->argv[3].ptr, key->ptr);
        if (st != KS_OK) return add_reply_ks_error(c, st, kc);
    }
    void *len = add_reply_deferred_len(c);
    if (arg_is(sub, "groups"))
        st = ks_xgroups(kc, key->ptr, key->len, group_info_cb, c, &n);
    else
        st = ks_xconsumers(kc, key->ptr, key->len, c->argv[3].ptr, c->argv[3].len, consumer_info_cb,
                           c, &n, &miss);
    set_deferred_array_len(c, len, (long)n);
    if (st != KS_OK) add_reply_ks_error(c, st, kc);
}
