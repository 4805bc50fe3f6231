/*
 * tracking.c -- client-side caching (CLIENT TRACKING), as Redis 7.0's
 * tracking.c: the server remembers which clients read which keys and tells
 * them when a key changes, so they can keep a local copy.
 *
 * Default mode: after a read-only command of a tracking client, each key
 * it named goes into the tracking table (key -> ids of the clients that
 * may cache it; keys are global, not per database, as in Redis). When a
 * key is changed (the keyspace's touch hook: every write, expiry and
 * delete) its entry is removed and each client still tracking gets an
 * "invalidate" message. BCAST mode: no table; a client subscribes prefixes
 * and gets, before the server sleeps, the changed keys under them.
 * OPTIN/OPTOUT: CLIENT CACHING yes/no decides for the next command.
 * NOLOOP: no message about a change the client made itself.
 *
 * Messages go as RESP3 pushes (>2 invalidate [keys] / null for a flush),
 * or to the REDIRECT client: as a push if it speaks RESP3, as a pub/sub
 * message on __redis__:invalidate if it is subscribed in RESP2. A message
 * to the client running the command is held until its reply is complete
 * (TR1 below), so a push never lands inside a reply.
 *
 *   TR1 an invalidation for the client whose command is running goes out
 *       after that command's reply (tracking_end), including EXEC's and a
 *       script's caller's.
 *   TR2 the table holds at most tracking-table-max-keys keys: remembering
 *       more evicts keys, sending their invalidations (the clients may no
 *       longer be told).
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "server/config.h"
#include "server/script.h"
#include "server/server.h"

enum {
    TRK_BCAST = 1,
    TRK_OPTIN = 2,
    TRK_OPTOUT = 4,
    TRK_NOLOOP = 8,
    TRK_CACHING = 16, /* CLIENT CACHING given for the next command */
    TRK_BROKEN = 32   /* the redirect client is gone */
};

struct client_tracking {
    int flags;
    uint64_t redirect;
    int nprefix;
    char **prefix;
    size_t *plen;
};

/* ---- The tracking table ----------------------------------------------- */

typedef struct tkey {
    struct tkey *next;
    uint64_t hash;
    size_t klen;
    uint64_t *ids;
    int nids, cap;
    char key[];
} tkey;

static tkey **tbl;
static size_t tbl_n, tbl_keys, tbl_items;
static uint64_t tracking_clients;

static tkey **slot(const char *k, size_t n, uint64_t h)
{
    tkey **p = &tbl[h & (tbl_n - 1)];
    while (*p && ((*p)->hash != h || (*p)->klen != n || memcmp((*p)->key, k, n)))
        p = &(*p)->next;
    return p;
}

static void tbl_grow(void)
{
    size_t n = tbl_n ? tbl_n * 2 : 1024;
    tkey **t = calloc(n, sizeof(*t));
    if (!t) abort();
    for (size_t i = 0; i < tbl_n; i++) {
        for (tkey *e = tbl[i], *next; e; e = next) {
            next = e->next;
            e->next = t[e->hash & (n - 1)];
            t[e->hash & (n - 1)] = e;
        }
    }
    free(tbl);
    tbl = t;
    tbl_n = n;
}

static void remember(const char *k, size_t n, uint64_t id)
{
    if (tbl_keys >= tbl_n) tbl_grow();
    uint64_t h = XXH3_64bits(k, n);
    tkey **p = slot(k, n, h), *e = *p;
    if (!e) {
        e = calloc(1, sizeof(*e) + n);
        if (!e) abort();
        e->hash = h;
        e->klen = n;
        memcpy(e->key, k, n);
        *p = e;
        tbl_keys++;
    }
    for (int i = 0; i < e->nids; i++)
        if (e->ids[i] == id) return;
    if (e->nids == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 2;
        e->ids = realloc(e->ids, sizeof(*e->ids) * (size_t)e->cap);
        if (!e->ids) abort();
    }
    e->ids[e->nids++] = id;
    tbl_items++;
}

/* Unlinks and returns key's entry, or NULL. */
static tkey *take(const char *k, size_t n)
{
    if (!tbl_keys) return NULL;
    tkey **p = slot(k, n, XXH3_64bits(k, n)), *e = *p;
    if (!e) return NULL;
    *p = e->next;
    tbl_keys--;
    tbl_items -= (size_t)e->nids;
    return e;
}

static void tkey_free(tkey *e)
{
    free(e->ids);
    free(e);
}

/* ---- Sending ------------------------------------------------------------ */

static client *current; /* the client whose command runs (TR1) */
static int depth;

typedef struct pending {
    char *key; /* NULL: everything (a flush) */
    size_t klen;
} pending;
static pending *pend;
static size_t npend, cappend;

static client *client_by_id(uint64_t id)
{
    for (client *x = server.clients; x; x = x->priv->next)
        if (x->id == id) return x;
    return NULL;
}

/* Sends an invalidation of keys[0..n) (n < 0: a flush, RESP null) to c or
 * its redirect client. */
static void send_message(client *c, const char *const *keys, const size_t *klens, long n)
{
    struct client_tracking *t = c->priv->tracking;
    client *to = c;
    if (t->redirect) {
        to = client_by_id(t->redirect);
        if (!to) {
            t->flags |= TRK_BROKEN;
            if (c->resp > 2) {
                reply_push_begin(c, 2);
                add_reply_bulk(c, "tracking-redir-broken", 21);
                add_reply_long_long(c, (long long)t->redirect);
                reply_push_end(c);
            }
            return;
        }
    }
    if (to->resp > 2) {
        reply_push_begin(to, 2);
        add_reply_bulk(to, "invalidate", 10);
    } else if (to != c && (to->flags & CLIENT_PUBSUB)) {
        reply_push_begin(to, 3);
        add_reply_bulk(to, "message", 7);
        add_reply_bulk(to, "__redis__:invalidate", 20);
    } else {
        return; /* RESP2 has no push messages on the same connection */
    }
    if (n < 0) {
        add_reply_null(to);
    } else {
        add_reply_array_len(to, n);
        for (long i = 0; i < n; i++)
            add_reply_bulk(to, keys[i], klens[i]);
    }
    reply_push_end(to);
}

static void send_key(client *c, const char *k, size_t n)
{
    if (c == current && depth > 0) { /* TR1 */
        if (npend == cappend) {
            cappend = cappend ? cappend * 2 : 8;
            pend = realloc(pend, sizeof(*pend) * cappend);
            if (!pend) abort();
        }
        pend[npend].key = k ? malloc(n ? n : 1) : NULL;
        if (k) memcpy(pend[npend].key, k, n);
        pend[npend++].klen = n;
        return;
    }
    send_message(c, &k, &n, k ? 1 : -1);
}

/* ---- Broadcast (BCAST) -------------------------------------------------- */

typedef struct bprefix {
    char *p;
    size_t n;
    client **cl;
    int ncl, capcl;
    /* keys changed under p since the last broadcast, and who changed each */
    char **keys;
    size_t *klens;
    client **by;
    size_t nkeys, capkeys;
} bprefix;

static bprefix *bp;
static size_t nbp;

static int bytes_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int r = memcmp(a, b, an < bn ? an : bn);
    return r ? r : (an > bn) - (an < bn);
}

static bprefix *bp_find(const char *p, size_t n)
{
    for (size_t i = 0; i < nbp; i++)
        if (bp[i].n == n && !memcmp(bp[i].p, p, n)) return &bp[i];
    return NULL;
}

static void bp_add_client(const char *p, size_t n, client *c)
{
    bprefix *b = bp_find(p, n);
    if (!b) { /* kept in byte order, as Redis's radix tree walks them */
        bp = realloc(bp, sizeof(*bp) * (nbp + 1));
        if (!bp) abort();
        size_t at = 0;
        while (at < nbp && bytes_cmp(bp[at].p, bp[at].n, p, n) < 0)
            at++;
        memmove(bp + at + 1, bp + at, sizeof(*bp) * (nbp - at));
        nbp++;
        b = &bp[at];
        memset(b, 0, sizeof(*b));
        b->p = malloc(n ? n : 1);
        if (!b->p) abort();
        memcpy(b->p, p, n);
        b->n = n;
    }
    for (int i = 0; i < b->ncl; i++)
        if (b->cl[i] == c) return;
    if (b->ncl == b->capcl) {
        b->capcl = b->capcl ? b->capcl * 2 : 4;
        b->cl = realloc(b->cl, sizeof(*b->cl) * (size_t)b->capcl);
        if (!b->cl) abort();
    }
    b->cl[b->ncl++] = c;
}

static void bp_clear_keys(bprefix *b)
{
    for (size_t i = 0; i < b->nkeys; i++)
        free(b->keys[i]);
    b->nkeys = 0;
}

static void bp_remove_client(const char *p, size_t n, client *c)
{
    bprefix *b = bp_find(p, n);
    if (!b) return;
    for (int i = 0; i < b->ncl; i++)
        if (b->cl[i] == c) b->cl[i--] = b->cl[--b->ncl];
    if (b->ncl) return;
    bp_clear_keys(b);
    free(b->keys), free(b->klens), free(b->by), free(b->cl), free(b->p);
    memmove(b, b + 1, sizeof(*b) * (size_t)(bp + nbp - b - 1));
    nbp--;
}

/* A changed key, for the prefixes it falls under (sent before sleeping). */
static void bp_note_key(const char *k, size_t n)
{
    for (size_t i = 0; i < nbp; i++) {
        bprefix *b = &bp[i];
        if (b->n > n || memcmp(b->p, k, b->n)) continue;
        size_t j = 0;
        while (j < b->nkeys && (b->klens[j] != n || memcmp(b->keys[j], k, n)))
            j++;
        if (j == b->nkeys) {
            if (b->nkeys == b->capkeys) {
                b->capkeys = b->capkeys ? b->capkeys * 2 : 8;
                b->keys = realloc(b->keys, sizeof(*b->keys) * b->capkeys);
                b->klens = realloc(b->klens, sizeof(*b->klens) * b->capkeys);
                b->by = realloc(b->by, sizeof(*b->by) * b->capkeys);
                if (!b->keys || !b->klens || !b->by) abort();
            }
            b->keys[j] = malloc(n ? n : 1);
            if (!b->keys[j]) abort();
            memcpy(b->keys[j], k, n);
            b->klens[j] = n;
            b->nkeys++;
        }
        b->by[j] = current; /* the last change decides NOLOOP, as Redis */
    }
}

void tracking_before_sleep(void)
{
    for (size_t i = 0; i < nbp; i++) {
        bprefix *b = &bp[i];
        if (!b->nkeys) continue;
        const char **keys = malloc(sizeof(*keys) * b->nkeys);
        size_t *lens = malloc(sizeof(*lens) * b->nkeys);
        if (!keys || !lens) abort();
        for (int j = 0; j < b->ncl; j++) {
            client *c = b->cl[j];
            int noloop = (c->priv->tracking->flags & TRK_NOLOOP) != 0;
            size_t n = 0;
            for (size_t k = 0; k < b->nkeys; k++) {
                if (noloop && b->by[k] == c) continue;
                keys[n] = b->keys[k];
                lens[n++] = b->klens[k];
            }
            if (n) send_message(c, keys, lens, (long)n);
        }
        free(keys);
        free(lens);
        bp_clear_keys(b);
    }
}

/* ---- Invalidation ------------------------------------------------------- */

/* Tells key's trackers and drops its entry; bcast: also note it for the
 * prefixes (not for an eviction, TR2: the key did not change). */
static void invalidate(const char *k, size_t n, int bcast)
{
    if (bcast && nbp) bp_note_key(k, n);
    tkey *e = take(k, n);
    if (!e) return;
    for (int i = 0; i < e->nids; i++) {
        client *t = client_by_id(e->ids[i]);
        if (!t || !t->priv->tracking || (t->priv->tracking->flags & TRK_BCAST)) continue;
        if ((t->priv->tracking->flags & TRK_NOLOOP) && t == current) continue;
        send_key(t, e->key, e->klen);
    }
    tkey_free(e);
}

void tracking_key_changed(const char *k, size_t n)
{
    if (tracking_clients) invalidate(k, n, 1);
}

void tracking_flushed(void)
{
    if (!tracking_clients) goto drop;
    for (client *c = server.clients; c; c = c->priv->next)
        if (c->priv->tracking) send_key(c, NULL, 0);
drop:
    for (size_t i = 0; i < tbl_n; i++) {
        for (tkey *e = tbl[i], *next; e; e = next) {
            next = e->next;
            tkey_free(e);
        }
        tbl[i] = NULL;
    }
    tbl_keys = tbl_items = 0;
}

/* TR2: evicts keys down to the limit, telling their trackers. */
static void limit_table(void)
{
    long long max = cfg.tracking_table_max_keys;
    if (max <= 0 || tbl_keys <= (size_t)max) return;
    for (size_t i = 0; i < tbl_n && tbl_keys > (size_t)max; i++) {
        while (tbl[i] && tbl_keys > (size_t)max) {
            tkey *e = tbl[i];
            char *k = malloc(e->klen ? e->klen : 1);
            if (!k) abort();
            memcpy(k, e->key, e->klen);
            size_t n = e->klen;
            invalidate(k, n, 0);
            free(k);
        }
    }
}

/* ---- Commands running --------------------------------------------------- */

void tracking_cron(void)
{
    if (tracking_clients) limit_table();
}

void tracking_call_begin(client *c)
{
    if (depth++ == 0) {
        current = c;
        if (tracking_clients) limit_table();
    }
}

/* The keys c's read-only command named, for its (or its script's
 * caller's) cache. */
static void remember_keys(client *c, const struct command *cmd)
{
    if (!cmd || !(cmd->flags & CMD_READONLY) || (cmd->flags & (CMD_SCRIPT | CMD_PUBSUB))) return;
    client *caller = c;
    if (c->flags & CLIENT_SCRIPT) {
        script_run *r = script_current();
        if (!r) return;
        caller = r->caller;
    }
    struct client_tracking *t = caller->priv->tracking;
    if (!t || (t->flags & TRK_BCAST)) return;
    int caching = (t->flags & TRK_CACHING) != 0;
    if (((t->flags & TRK_OPTIN) && !caching) || ((t->flags & TRK_OPTOUT) && caching)) return;
    const struct command *kc = caller == c ? cmd : caller->cmd;
    if (!kc) return;
    key_ref *keys = malloc(sizeof(*keys) * (size_t)(caller->argc ? caller->argc : 1));
    if (!keys) abort();
    int n = command_get_keys(kc, caller->argc, caller->argv, keys, caller->argc, 0);
    for (int i = 0; i < n; i++)
        remember(caller->argv[keys[i].pos].ptr, caller->argv[keys[i].pos].len, caller->id);
    free(keys);
    limit_table();
}

void tracking_call_end(client *c, const struct command *cmd)
{
    if (tracking_clients) remember_keys(c, cmd);
    struct client_tracking *t = c->priv->tracking;
    /* CLIENT CACHING lasts for the next command only (outside MULTI) */
    if (t && cmd && depth == 1 && !(c->flags & CLIENT_MULTI) && strncmp(cmd->name, "client", 6))
        t->flags &= ~TRK_CACHING;
    if (--depth > 0) return;
    client *cur = current;
    current = NULL;
    for (size_t i = 0; i < npend; i++) { /* TR1 */
        if (cur && cur->priv->tracking) {
            const char *k = pend[i].key;
            send_message(cur, &k, &pend[i].klen, k ? 1 : -1);
        }
        free(pend[i].key);
    }
    npend = 0;
}

/* ---- Clients ------------------------------------------------------------ */

void tracking_client_off(client *c)
{
    struct client_tracking *t = c->priv->tracking;
    if (!t) return;
    for (int i = 0; i < t->nprefix; i++) {
        bp_remove_client(t->prefix[i], t->plen[i], c);
        free(t->prefix[i]);
    }
    free(t->prefix);
    free(t->plen);
    free(t);
    c->priv->tracking = NULL;
    tracking_clients--;
}

static int overlap(const char *a, size_t an, const char *b, size_t bn)
{
    return memcmp(a, b, an < bn ? an : bn) == 0;
}

/* Redis's checkPrefixCollisionsOrReply: 0 after replying. */
static int prefixes_ok(client *c, const arg *const *p, int n)
{
    struct client_tracking *t = c->priv->tracking;
    for (int i = 0; i < n; i++) {
        for (int j = 0; t && j < t->nprefix; j++) {
            if (!overlap(t->prefix[j], t->plen[j], p[i]->ptr, p[i]->len)) continue;
            add_reply_error_fmt(c,
                                "Prefix '%s' overlaps with an existing prefix '%.*s'. Prefixes "
                                "for a single client must not overlap.",
                                p[i]->ptr, (int)t->plen[j], t->prefix[j]);
            return 0;
        }
        for (int j = i + 1; j < n; j++) {
            if (!overlap(p[i]->ptr, p[i]->len, p[j]->ptr, p[j]->len)) continue;
            add_reply_error_fmt(c,
                                "Prefix '%s' overlaps with another provided prefix '%s'. "
                                "Prefixes for a single client must not overlap.",
                                p[i]->ptr, p[j]->ptr);
            return 0;
        }
    }
    return 1;
}

static void add_prefix(client *c, const char *p, size_t n)
{
    struct client_tracking *t = c->priv->tracking;
    int at = 0;
    while (at < t->nprefix && bytes_cmp(t->prefix[at], t->plen[at], p, n) < 0)
        at++;
    if (at < t->nprefix && !bytes_cmp(t->prefix[at], t->plen[at], p, n)) return;
    t->prefix = realloc(t->prefix, sizeof(*t->prefix) * (size_t)(t->nprefix + 1));
    t->plen = realloc(t->plen, sizeof(*t->plen) * (size_t)(t->nprefix + 1));
    if (!t->prefix || !t->plen) abort();
    memmove(t->prefix + at + 1, t->prefix + at, sizeof(*t->prefix) * (size_t)(t->nprefix - at));
    memmove(t->plen + at + 1, t->plen + at, sizeof(*t->plen) * (size_t)(t->nprefix - at));
    t->prefix[at] = malloc(n ? n : 1);
    if (!t->prefix[at]) abort();
    memcpy(t->prefix[at], p, n);
    t->plen[at] = n;
    t->nprefix++;
    bp_add_client(p, n, c);
}

/* Checks the options of CLIENT TRACKING ON against each other and the
 * client's state, with Redis's texts; 0 after replying. */
static int options_ok(client *c, int opts, int nprefix)
{
    struct client_tracking *t = c->priv->tracking;
    const char *err = NULL;
    if (!(opts & TRK_BCAST) && nprefix)
        err = "PREFIX option requires BCAST mode to be enabled";
    else if (t && !(t->flags & TRK_BCAST) != !(opts & TRK_BCAST))
        err = "You can't switch BCAST mode on/off before disabling tracking for this client, and "
              "then re-enabling it with a different mode.";
    else if ((opts & TRK_BCAST) && (opts & (TRK_OPTIN | TRK_OPTOUT)))
        err = "OPTIN and OPTOUT are not compatible with BCAST";
    else if ((opts & TRK_OPTIN) && (opts & TRK_OPTOUT))
        err = "You can't specify both OPTIN mode and OPTOUT mode";
    else if (t && (((opts & TRK_OPTIN) && (t->flags & TRK_OPTOUT)) ||
                   ((opts & TRK_OPTOUT) && (t->flags & TRK_OPTIN))))
        err = "You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and "
              "then re-enabling it with a different mode.";
    if (err) add_reply_error(c, err);
    return err == NULL;
}

/* CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN]
 * [OPTOUT] [NOLOOP] */
void tracking_command(client *c)
{
    long long redir = 0;
    int opts = 0, np = 0, on = 0;
    const arg **prefix = malloc(sizeof(*prefix) * (size_t)c->argc);
    if (!prefix) abort();
    for (int j = 3; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const arg *a = &c->argv[j];
        if (arg_is(a, "redirect") && more) {
            if (redir) {
                add_reply_error(c, "A client can only redirect to a single other client");
                goto done;
            }
            if (arg_to_ll(c, &c->argv[++j], &redir) < 0) goto done;
            if (!client_by_id((uint64_t)redir)) {
                add_reply_error(c, "The client ID you want redirect to does not exist");
                goto done;
            }
        } else if (arg_is(a, "bcast")) {
            opts |= TRK_BCAST;
        } else if (arg_is(a, "optin")) {
            opts |= TRK_OPTIN;
        } else if (arg_is(a, "optout")) {
            opts |= TRK_OPTOUT;
        } else if (arg_is(a, "noloop")) {
            opts |= TRK_NOLOOP;
        } else if (arg_is(a, "prefix") && more) {
            prefix[np++] = &c->argv[++j];
        } else {
            add_reply_error(c, ERR_SYNTAX);
            goto done;
        }
    }
    if (arg_is(&c->argv[2], "on")) {
        on = 1;
    } else if (!arg_is(&c->argv[2], "off")) {
        add_reply_error(c, ERR_SYNTAX);
        goto done;
    }
    if (!on) {
        tracking_client_off(c);
    } else {
        if (!options_ok(c, opts, np)) goto done;
        if ((opts & TRK_BCAST) && !prefixes_ok(c, prefix, np)) goto done;
        struct client_tracking *t = c->priv->tracking;
        if (!t) {
            t = c->priv->tracking = calloc(1, sizeof(*t));
            if (!t) abort();
            tracking_clients++;
        }
        t->flags = (t->flags & TRK_CACHING) | opts;
        t->redirect = (uint64_t)redir;
        if ((opts & TRK_BCAST) && np == 0) add_prefix(c, "", 0);
        for (int i = 0; i < np; i++)
            add_prefix(c, prefix[i]->ptr, prefix[i]->len);
    }
    add_reply_ok(c);
done:
    free(prefix);
}

/* CLIENT CACHING YES|NO */
void tracking_caching(client *c)
{
    struct client_tracking *t = c->priv->tracking;
    if (!t)
        return add_reply_error(c, "CLIENT CACHING can be called only when the client is in "
                                  "tracking mode with OPTIN or OPTOUT mode enabled");
    if (arg_is(&c->argv[2], "yes")) {
        if (!(t->flags & TRK_OPTIN))
            return add_reply_error(
                c, "CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
    } else if (arg_is(&c->argv[2], "no")) {
        if (!(t->flags & TRK_OPTOUT))
            return add_reply_error(
                c, "CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
    } else {
        return add_reply_error(c, ERR_SYNTAX);
    }
    t->flags |= TRK_CACHING;
    add_reply_ok(c);
}

void tracking_getredir(client *c)
{
    struct client_tracking *t = c->priv->tracking;
    add_reply_long_long(c, t ? (long long)t->redirect : -1);
}

void tracking_info(client *c)
{
    struct client_tracking *t = c->priv->tracking;
    int f = t ? t->flags : 0;
    static const struct {
        int bit, needs;
        const char *name;
    } names[] = {{TRK_BCAST, 0, "bcast"},
                 {TRK_OPTIN, 0, "optin"},
                 {TRK_CACHING, TRK_OPTIN, "caching-yes"},
                 {TRK_OPTOUT, 0, "optout"},
                 {TRK_CACHING, TRK_OPTOUT, "caching-no"},
                 {TRK_NOLOOP, 0, "noloop"},
                 {TRK_BROKEN, 0, "broken_redirect"}};
    int n = 1;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        n += (f & names[i].bit) && (!names[i].needs || (f & names[i].needs));
    add_reply_map_len(c, 3);
    add_reply_bulk_cstr(c, "flags");
    add_reply_set_len(c, n);
    add_reply_bulk_cstr(c, t ? "on" : "off");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if ((f & names[i].bit) && (!names[i].needs || (f & names[i].needs)))
            add_reply_bulk_cstr(c, names[i].name);
    add_reply_bulk_cstr(c, "redirect");
    add_reply_long_long(c, t ? (long long)t->redirect : -1);
    add_reply_bulk_cstr(c, "prefixes");
    add_reply_array_len(c, t ? t->nprefix : 0);
    for (int i = 0; t && i < t->nprefix; i++)
        add_reply_bulk(c, t->prefix[i], t->plen[i]);
}

/* CLIENT LIST flags: t tracking, R its redirect is gone, B broadcast. */
int tracking_client_flags(const client *c, char *out)
{
    struct client_tracking *t = c->priv->tracking;
    int n = 0;
    if (!t) return 0;
    out[n++] = 't';
    if (t->flags & TRK_BROKEN) out[n++] = 'R';
    if (t->flags & TRK_BCAST) out[n++] = 'B';
    return n;
}

uint64_t tracking_client_count(void)
{
    return tracking_clients;
}

void tracking_info_stats(uint64_t *keys, uint64_t *items, uint64_t *prefixes)
{
    *keys = tbl_keys;
    *items = tbl_items;
    *prefixes = nbp;
}
