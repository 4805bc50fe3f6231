/*
 * cmd_stream_block.c -- XREAD and XREADGROUP: the synchronous read of
 * every stream named, then, with BLOCK and nothing to serve, a wait on the
 * keys through the server's blocking module (blocking.c, server.h) that
 * an XADD, a delete or an overwrite of one of them ends, as Redis 7.0's
 * blocked.c serves streams:
 *   - XREAD waits for entries after the id it asked for (`$`: the stream's
 *     last id when it blocked);
 *   - XREADGROUP waits for entries after the group's last delivered id at
 *     the time it is served; a group destroyed meanwhile ends it with
 *     -NOGROUP, the key deleted or replaced by another type with
 *     -UNBLOCKED.
 * Inside MULTI the command answers as a timeout; in a script BLOCK is an
 * error (Redis's compatibility rule for Lua).
 */
#include <stdlib.h>
#include <string.h>

#include "server/cmd_stream.h"

#define XREAD_BLOCKED_DEFAULT_COUNT 1000

/* What a blocked XREAD / XREADGROUP waits for. */
typedef struct xwait {
    int group, noack;
    arg g, cn; /* owned copies (XREADGROUP) */
    uint64_t count;
    int n;
    arg *keys; /* owned copies */
    ks_xid *ids;
} xwait;

static void arg_copy(arg *dst, const arg *src)
{
    dst->ptr = malloc(src->len + 1);
    if (!dst->ptr) abort();
    memcpy(dst->ptr, src->ptr, src->len + 1);
    dst->len = src->len;
}

static void xwait_free(void *state)
{
    xwait *w = state;
    for (int i = 0; i < w->n; i++)
        free(w->keys[i].ptr);
    free(w->keys);
    free(w->ids);
    free(w->g.ptr);
    free(w->cn.ptr);
    free(w);
}

/* One stream of the reply, written lazily: the outer header at the first
 * stream served, the stream's own header at its first entry. */
typedef struct xout {
    client *c;
    void *outer;
    long nstreams;
    const arg *key;
    void *entries;
    long n;
} xout;

static void xout_key(xout *o)
{
    if (o->entries) return;
    if (!o->nstreams++) o->outer = add_reply_deferred_len(o->c);
    if (o->c->resp == 2) add_reply_array_len(o->c, 2);
    add_reply_bulk(o->c, o->key->ptr, o->key->len);
    o->entries = add_reply_deferred_len(o->c);
    o->n = 0;
}

static void xout_entry(void *arg, const ks_xid *id, const ks_field *f, size_t n, int exists)
{
    xout *o = arg;
    xout_key(o);
    xreply_entry(o->c, id, f, n, exists);
    o->n++;
}

static void xout_end_key(xout *o)
{
    if (o->entries) set_deferred_array_len(o->c, o->entries, o->n);
    o->entries = NULL;
}

static void xout_end(xout *o)
{
    if (!o->nstreams) return;
    if (o->c->resp == 2)
        set_deferred_array_len(o->c, o->outer, o->nstreams);
    else
        set_deferred_map_len(o->c, o->outer, o->nstreams);
}

/* Reads key for the waiter's stream i (or a synchronous read): returns 1
 * when something was replied for it, 0 when not, -1 on an error reply. */
static int read_one(client *c, xout *o, const arg *key, const ks_xid *after, int history,
                    uint64_t count, const xwait *w)
{
    ks_ctx *kc = client_ks(c);
    ks_status st;
    o->key = key;
    if (w->group) {
        int served = 0, miss = 0, missing = xconsumer_missing(c, key, &w->g, &w->cn);
        st = ks_xreadgroup(kc, key->ptr, key->len, w->g.ptr, w->g.len, w->cn.ptr, w->cn.len,
                           history ? after : NULL, count, w->noack, xout_entry, o, &served, &miss);
        if (st == KS_OK) xnotify_consumer(c, key, &w->g, &w->cn, missing);
        if (st == KS_OK && served) xout_key(o);
        if (st == KS_OK || st == KS_NOTFOUND) {
            xout_end_key(o);
            return served;
        }
    } else {
        ks_xid from = *after, max = {UINT64_MAX, UINT64_MAX};
        uint64_t n = 0;
        if (ks_xid_incr(&from) != 0) return 0;
        st = ks_xrange(kc, key->ptr, key->len, &from, &max, count, 0, xout_entry, o, &n);
        if (st == KS_OK || st == KS_NOTFOUND) {
            xout_end_key(o);
            return n > 0;
        }
    }
    add_reply_ks_error(c, st, kc);
    return -1;
}

/* ---- Serving a blocked reader ----------------------------------------------------- */

static int xwait_serve(client *c, void *state, const char *key, size_t klen, ks_type type)
{
    xwait *w = state;
    int i;
    for (i = 0; i < w->n && (w->keys[i].len != klen || memcmp(w->keys[i].ptr, key, klen)); i++)
        ;
    if (i == w->n) return 0;
    if (w->group && type != KS_STREAM) {
        add_reply_error(c, "-UNBLOCKED the stream key no longer exists");
        return 1;
    }
    if (type != KS_STREAM) return 0;
    if (w->group) {
        ks_xpending_sum sum;
        int miss = 0;
        ks_ctx *kc = client_ks(c);
        ks_status st = ks_xpending_summary(kc, key, klen, w->g.ptr, w->g.len, &sum, &miss);
        if (st == KS_NOTFOUND) {
            add_reply_error(c, "-NOGROUP the consumer group this client was blocked on no "
                               "longer exists");
            return 1;
        }
        if (st != KS_OK) return add_reply_ks_error(c, st, kc), 1;
    }
    xout o = {.c = c};
    int r = read_one(c, &o, &w->keys[i], &w->ids[i], 0, w->count, w);
    if (r > 0) xout_end(&o);
    return r != 0;
}

static const block_ops xwait_ops = {xwait_serve, NULL, xwait_free};

/* ---- XREAD / XREADGROUP ---------------------------------------------------------- */

void xread_generic(client *c, int group)
{
    long long count = 0;
    int64_t deadline = 0;
    int block = 0, streams = 0, nstreams = 0, noack = 0;
    const arg *gname = NULL, *cname = NULL;
    for (int i = 1; i < c->argc; i++) {
        int more = c->argc - i - 1;
        const arg *o = &c->argv[i];
        if (arg_is(o, "block") && more) {
            if (c->flags & CLIENT_SCRIPT)
                return add_reply_error_fmt(c,
                                           "%s command is not allowed with BLOCK option "
                                           "from scripts",
                                           c->argv[0].ptr);
            i++;
            if (block_parse_timeout(c, &c->argv[i], BLOCK_MILLISECONDS, &deadline) < 0) return;
            block = 1;
        } else if (arg_is(o, "count") && more) {
            if (arg_to_ll(c, &c->argv[++i], &count) < 0) return;
            if (count < 0) count = 0;
        } else if (arg_is(o, "streams") && more) {
            streams = i + 1;
            nstreams = c->argc - streams;
            if (nstreams % 2)
                return add_reply_error(c, "Unbalanced XREAD list of streams: for each stream "
                                          "key an ID or '$' must be specified.");
            nstreams /= 2;
            break;
        } else if (arg_is(o, "group") && more >= 2) {
            if (!group)
                return add_reply_error(c, "The GROUP option is only supported by XREADGROUP. "
                                          "You called XREAD instead.");
            gname = &c->argv[i + 1];
            cname = &c->argv[i + 2];
            i += 2;
        } else if (arg_is(o, "noack")) {
            if (!group)
                return add_reply_error(c, "The NOACK option is only supported by XREADGROUP. "
                                          "You called XREAD instead.");
            noack = 1;
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    if (!streams) return add_reply_error(c, ERR_SYNTAX);
    if (group && !gname) return add_reply_error(c, "Missing GROUP option for XREADGROUP");

    ks_ctx *kc = client_ks(c);
    xwait *w = calloc(1, sizeof(*w));
    int *history = calloc((size_t)nstreams + 1, sizeof(int));
    if (!w || !history || !(w->keys = calloc((size_t)nstreams + 1, sizeof(arg))) ||
        !(w->ids = calloc((size_t)nstreams + 1, sizeof(ks_xid))))
        abort();
    w->group = group;
    w->noack = noack;
    if (group) {
        arg_copy(&w->g, gname);
        arg_copy(&w->cn, cname);
    }
    /* Ids and groups, in Redis's order: each key's type and group, then its id. */
    for (int i = 0; i < nstreams; i++) {
        const arg *key = &c->argv[streams + i], *ida = &c->argv[streams + nstreams + i];
        ks_xinfo in;
        ks_status st = ks_xinfo_stream(kc, key->ptr, key->len, &in);
        if (st != KS_OK && st != KS_NOTFOUND) {
            add_reply_ks_error(c, st, kc);
            goto out;
        }
        if (group) {
            ks_xpending_sum sum;
            int miss = 0;
            if (st == KS_OK)
                st = ks_xpending_summary(kc, key->ptr, key->len, gname->ptr, gname->len, &sum,
                                         &miss);
            if (st != KS_OK) {
                if (st == KS_NOTFOUND)
                    xreply_nogroup(c, key, gname, " in XREADGROUP with GROUP option");
                else
                    add_reply_ks_error(c, st, kc);
                goto out;
            }
        }
        if (ida->len == 1 && ida->ptr[0] == '$') {
            if (group) {
                add_reply_error(c, "The $ ID is meaningless in the context of XREADGROUP: you "
                                   "want to read the history of this consumer by specifying a "
                                   "proper ID, or use the > ID to get new messages. The $ ID "
                                   "would just return an empty result set.");
                goto out;
            }
            w->ids[i] = st == KS_OK ? in.last_id : (ks_xid){0, 0};
        } else if (ida->len == 1 && ida->ptr[0] == '>') {
            if (!group) {
                add_reply_error(c, "The > ID can be specified only when calling XREADGROUP "
                                   "using the GROUP <group> <consumer> option.");
                goto out;
            }
            w->ids[i] = (ks_xid){UINT64_MAX, UINT64_MAX};
        } else {
            if (xarg_id(c, ida, 0, 1, NULL, &w->ids[i]) < 0) goto out;
            history[i] = group;
        }
    }
    /* Serve synchronously what can be. */
    xout o = {.c = c};
    for (int i = 0; i < nstreams; i++)
        if (read_one(c, &o, &c->argv[streams + i], &w->ids[i], history[i], (uint64_t)count, w) < 0)
            goto out;
    if (o.nstreams) {
        xout_end(&o);
        goto out;
    }
    if (!block || !block_allowed(c)) {
        add_reply_null_array(c);
        goto out;
    }
    w->count = count ? (uint64_t)count : XREAD_BLOCKED_DEFAULT_COUNT;
    w->n = nstreams;
    for (int i = 0; i < nstreams; i++)
        arg_copy(&w->keys[i], &c->argv[streams + i]);
    block_on_keys(c, &xwait_ops, &c->argv[streams], nstreams, deadline, w);
    free(history);
    return;
out:
    free(history);
    xwait_free(w);
}

void cmd_xread(client *c)
{
    xread_generic(c, 0);
}

void cmd_xreadgroup(client *c)
{
    xread_generic(c, 1);
}
