/*
 * cmd_multi.c -- MULTI, EXEC, DISCARD, WATCH, UNWATCH and the watched-key
 * table.
 *
 * EXEC runs the queued commands one after another into the one command
 * batch; each keeps its own savepoint (Invariant S1), and the dispatcher
 * hands the whole batch to the engine after EXEC returns, so the writes of
 * a transaction reach the log as one atomic record.
 *
 * Watched keys: a hash table from (db, key) to the clients watching it;
 * each client keeps pointers to its entries. server_touch_key() (the
 * keyspace's touch hook, called for every key a write changes) marks the
 * watchers CLIENT_DIRTY_CAS, and EXEC then fails with a null reply.
 * Invariant W1: an entry exists iff at least one client watches it, and
 * server.watch_count is the number of entries (touch is a no-op at 0, the
 * common case, so unwatched writes pay one branch).
 *
 * As Redis 7.0, EXEC also fails when a watched key that was live at WATCH
 * time has expired since (each watcher keeps the key's expiry as it was),
 * and FLUSHDB/FLUSHALL dirty only the watchers of keys that exist when the
 * flush runs: watching a key that did not exist survives a flush.
 */
#include <stdlib.h>
#include <string.h>

#include "server/acl.h"
#include "server/server.h"

typedef struct watcher {
    client *c;
    int64_t expire_ms; /* the key's expiry when c watched it; 0: none, or not live */
} watcher;

struct watched_key {
    struct watched_key *next;
    uint64_t hash;
    int db;
    int flush_hit; /* the key exists in a db being flushed (server_watch_flush_begin) */
    size_t len;
    char *key;
    watcher *clients;
    int nclients, cap;
};

static uint64_t key_hash(int db, const char *k, size_t n)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)db;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)k[i]) * 1099511628211ULL;
    return h;
}

static struct watched_key **bucket(uint64_t h)
{
    return &server.watch_buckets[h & (server.watch_nbuckets - 1)];
}

static struct watched_key *find_key(int db, const char *k, size_t n, uint64_t h)
{
    if (!server.watch_nbuckets) return NULL;
    for (struct watched_key *w = *bucket(h); w; w = w->next)
        if (w->hash == h && w->db == db && w->len == n && memcmp(w->key, k, n) == 0) return w;
    return NULL;
}

static void rehash(void)
{
    size_t nb = server.watch_nbuckets ? server.watch_nbuckets * 2 : 64;
    struct watched_key **old = server.watch_buckets;
    size_t on = server.watch_nbuckets;
    server.watch_buckets = calloc(nb, sizeof(*old));
    if (!server.watch_buckets) abort();
    server.watch_nbuckets = nb;
    for (size_t i = 0; i < on; i++) {
        struct watched_key *w = old[i];
        while (w) {
            struct watched_key *n = w->next;
            w->next = *bucket(w->hash);
            *bucket(w->hash) = w;
            w = n;
        }
    }
    free(old);
}

static void watch_key(client *c, int db, const char *k, size_t n, int64_t expire_ms)
{
    struct client_private *p = c->priv;
    uint64_t h = key_hash(db, k, n);
    struct watched_key *w = find_key(db, k, n, h);
    if (w) {
        for (int i = 0; i < w->nclients; i++)
            if (w->clients[i].c == c) return; /* already watched by c */
    } else {
        if (server.watch_count >= server.watch_nbuckets) rehash();
        w = calloc(1, sizeof(*w));
        if (!w) abort();
        w->hash = h;
        w->db = db;
        w->len = n;
        w->key = malloc(n + 1);
        if (!w->key) abort();
        memcpy(w->key, k, n);
        w->next = *bucket(h);
        *bucket(h) = w;
        server.watch_count++; /* W1 */
    }
    if (w->nclients == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 2;
        w->clients = realloc(w->clients, (size_t)w->cap * sizeof(watcher));
        if (!w->clients) abort();
    }
    w->clients[w->nclients++] = (watcher){c, expire_ms};
    if (p->nwatched == p->watched_cap) {
        p->watched_cap = p->watched_cap ? p->watched_cap * 2 : 4;
        p->watched = realloc(p->watched, (size_t)p->watched_cap * sizeof(*p->watched));
        if (!p->watched) abort();
    }
    p->watched[p->nwatched++] = w;
}

void server_unwatch_all(client *c)
{
    struct client_private *p = c->priv;
    for (int i = 0; i < p->nwatched; i++) {
        struct watched_key *w = p->watched[i];
        for (int j = 0; j < w->nclients; j++) {
            if (w->clients[j].c == c) {
                w->clients[j] = w->clients[--w->nclients];
                break;
            }
        }
        if (w->nclients == 0) { /* W1 */
            struct watched_key **pp = bucket(w->hash);
            while (*pp != w)
                pp = &(*pp)->next;
            *pp = w->next;
            free(w->key);
            free(w->clients);
            free(w);
            server.watch_count--;
        }
    }
    p->nwatched = 0;
    c->flags &= ~CLIENT_DIRTY_CAS;
}

void server_touch_key(int db, const char *key, size_t len)
{
    if (server.watch_count == 0) return; /* W1 */
    struct watched_key *w = find_key(db, key, len, key_hash(db, key, len));
    if (!w) return;
    for (int i = 0; i < w->nclients; i++)
        w->clients[i].c->flags |= CLIENT_DIRTY_CAS;
}

void server_touch_db(int db)
{
    if (server.watch_count == 0) return;
    for (size_t b = 0; b < server.watch_nbuckets; b++)
        for (struct watched_key *w = server.watch_buckets[b]; w; w = w->next)
            if (db < 0 || w->db == db)
                for (int i = 0; i < w->nclients; i++)
                    w->clients[i].c->flags |= CLIENT_DIRTY_CAS;
}

/* Is key live (stored, unexpired) in logical db? An unreadable key counts
 * as live: a spurious EXEC failure is safe, a missed one is not. */
static int live_in(int db, const char *key, size_t len)
{
    ks_ctx view = {server.ks, server.batch, dbmap_stored(db), server_now_ms(), NULL};
    ks_type t = KS_NONE;
    ks_status st = ks_type_of(&view, key, len, &t);
    ks_ctx_reset(&view);
    return (st == KS_OK && t != KS_NONE) || (st != KS_OK && st != KS_NOTFOUND);
}

void server_watch_swap(int a, int b)
{
    if (server.watch_count == 0) return;
    for (size_t i = 0; i < server.watch_nbuckets; i++) {
        for (struct watched_key *w = server.watch_buckets[i]; w; w = w->next) {
            if (w->db != a && w->db != b) continue;
            if (!live_in(a, w->key, w->len) && !live_in(b, w->key, w->len)) continue;
            for (int j = 0; j < w->nclients; j++)
                w->clients[j].c->flags |= CLIENT_DIRTY_CAS;
        }
    }
}

void server_watch_flush_begin(const ks_ctx *ctx, int db)
{
    if (server.watch_count == 0) return;
    for (size_t b = 0; b < server.watch_nbuckets; b++) {
        for (struct watched_key *w = server.watch_buckets[b]; w; w = w->next) {
            if (db >= 0 && w->db != db) continue;
            ks_ctx view = *ctx;
            view.db = dbmap_stored(w->db);
            view.err = NULL;
            ks_type t = KS_NONE;
            ks_status st = ks_type_of(&view, w->key, w->len, &t);
            /* An unreadable key counts as existing: a spurious EXEC failure
             * is safe, a missed one is not. */
            w->flush_hit = (st == KS_OK && t != KS_NONE) || (st != KS_OK && st != KS_NOTFOUND);
            ks_ctx_reset(&view);
        }
    }
}

void server_watch_flush_end(int flushed)
{
    if (server.watch_count == 0) return;
    for (size_t b = 0; b < server.watch_nbuckets; b++) {
        for (struct watched_key *w = server.watch_buckets[b]; w; w = w->next) {
            if (flushed && w->flush_hit)
                for (int i = 0; i < w->nclients; i++)
                    w->clients[i].c->flags |= CLIENT_DIRTY_CAS;
            w->flush_hit = 0;
        }
    }
}

/* Redis's isWatchedKeyExpired: has a key c watched while it was live
 * reached its expiry since? (Any other change already dirtied c.) */
static int watched_key_expired(client *c, int64_t now_ms)
{
    struct client_private *p = c->priv;
    for (int i = 0; i < p->nwatched; i++) {
        struct watched_key *w = p->watched[i];
        for (int j = 0; j < w->nclients; j++)
            if (w->clients[j].c == c && w->clients[j].expire_ms &&
                w->clients[j].expire_ms <= now_ms)
                return 1;
    }
    return 0;
}

void cmd_multi(client *c)
{
    if (c->flags & CLIENT_MULTI) {
        add_reply_error(c, "MULTI calls can not be nested");
        return;
    }
    c->flags |= CLIENT_MULTI;
    add_reply_ok(c);
}

void cmd_discard(client *c)
{
    if (!(c->flags & CLIENT_MULTI)) {
        add_reply_error(c, "DISCARD without MULTI");
        return;
    }
    server_discard_multi(c);
    server_unwatch_all(c);
    add_reply_ok(c);
}

void cmd_exec(client *c)
{
    struct client_private *p = c->priv;
    if (!(c->flags & CLIENT_MULTI)) {
        add_reply_error(c, "EXEC without MULTI");
        return;
    }
    if (c->flags & CLIENT_DIRTY_EXEC) {
        add_reply_error(c, "EXECABORT Transaction discarded because of previous errors.");
        server_discard_multi(c);
        server_unwatch_all(c);
        return;
    }
    if ((c->flags & CLIENT_DIRTY_CAS) || watched_key_expired(c, server_now_ms())) {
        add_reply_null_array(c);
        server_discard_multi(c);
        server_unwatch_all(c);
        return;
    }
    /* Our own writes below must not count as changes to what we watched. */
    server_unwatch_all(c);
    int orig_argc = c->argc;
    arg *orig_argv = c->argv;
    const struct command *exec_cmd = c->cmd;
    c->flags |= CLIENT_IN_EXEC;
    add_reply_array_len(c, p->mq_len);
    for (int i = 0; i < p->mq_len; i++) {
        c->argc = p->mq[i].argc;
        c->argv = p->mq[i].argv;
        if (!acl_user_unrestricted(c->user) && acl_check_exec_command(c, p->mq[i].cmd) < 0)
            continue;
        server_call(c, p->mq[i].cmd);
    }
    c->flags &= ~CLIENT_IN_EXEC;
    c->argc = orig_argc;
    c->argv = orig_argv;
    c->cmd = exec_cmd;
    c->last_cmd_errors = 0;
    server_discard_multi(c); /* clears CLIENT_MULTI: the dispatcher now writes the batch */
}

void cmd_watch(client *c)
{
    if (c->flags & CLIENT_MULTI) {
        add_reply_error(c, "WATCH inside MULTI is not allowed");
        return;
    }
    for (int i = 1; i < c->argc; i++) {
        int64_t expire_ms = 0;
        if (ks_expire_get(client_ks(c), c->argv[i].ptr, c->argv[i].len, &expire_ms) != KS_OK)
            expire_ms = 0; /* absent, expired or unreadable: it cannot expire later */
        ks_ctx_reset(client_ks(c));
        watch_key(c, c->db, c->argv[i].ptr, c->argv[i].len, expire_ms);
    }
    add_reply_ok(c);
}

void cmd_unwatch(client *c)
{
    server_unwatch_all(c);
    add_reply_ok(c);
}
