/*
 * blocking.c -- clients blocked on keys (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH,
 * BLMPOP; BZPOPMIN and XREAD BLOCK use it the same way): who waits on
 * which key, in which order, until when, and serving them when a write
 * makes a key ready. server.h ("Blocking on keys") has the API.
 *
 * State, all in memory (a blocked client is a connection; nothing of it
 * is stored):
 *   - a hash table of waited keys (db, key) -> FIFO of waiters, one waiter
 *     per (client, key);
 *   - a ready list of waited keys that a write touched since they were
 *     last served, each at most once (wkey.ready);
 *   - a binary heap of the blocked clients that have a deadline, and one
 *     event-loop timer armed at the earliest deadline;
 *   - the queue of clients unblocked since the loop last ran their
 *     pending input (CLIENT_UNBLOCKED).
 *
 * Invariants:
 *   B1. A client is CLIENT_BLOCKED exactly while it has a block_wait, whose
 *       waiters are linked in the FIFO of each of its (distinct) keys; a
 *       wkey exists while it has a waiter or is in the ready list.
 *   B2. Waiters of a key are served in the order they blocked; a served
 *       client leaves every FIFO it was in before the next is looked at.
 *   B3. A serve runs like a command of its client: its own savepoint (S1),
 *       its writes handed to the engine right after it (server_write_batch)
 *       and committed by the group commit before any reply is written (N1).
 *       So a client that got an element from BLPOP has, once it reads the
 *       reply, a log record that removed the element.
 *   B4. block_handle_ready never nests: keys a serve makes ready (BLMOVE's
 *       push) join the list it is walking. The key being served is not
 *       signalled by its own serves: serve_key reads its type again after
 *       each serve and goes on down the FIFO anyway.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "server/ae.h"
#include "server/config.h"
#include "server/server.h"

typedef struct wkey wkey;
typedef struct block_wait block_wait;

typedef struct waiter {
    block_wait *bw;
    wkey *wk;
    struct waiter *prev, *next; /* the key's FIFO */
} waiter;

struct wkey {
    wkey *hnext;
    uint64_t hash;
    int db;
    size_t klen;
    char *key;
    waiter *first, *last;
    int ready;   /* in the ready list */
    int serving; /* being served: its own writes need no signal (B4) */
    wkey *rnext; /* the ready list */
};

struct block_wait {
    client *c;
    const block_ops *ops;
    void *state;
    int64_t deadline; /* unix ms, 0: none */
    size_t heap_i;    /* position in the timeout heap when deadline != 0 */
    int nw;
    waiter *w;
    /* The blocked command's arguments, for SLOWLOG when it is served (as
     * Redis's updateStatsOnUnblock): one allocation, args then bytes. */
    int argc;
    arg *argv;
    const struct command *cmd;
};

static struct {
    wkey **buckets;
    size_t nbuckets, nkeys;
    wkey *ready_head, *ready_tail;
    int handling; /* B4 */
    block_wait **heap;
    size_t nheap, capheap;
    long long timer_id; /* 0: none armed */
    int64_t timer_at;
    client **resume; /* CLIENT_UNBLOCKED clients */
    size_t nresume, capresume;
    uint64_t nblocked;
} B;

/* ---- Waited keys ------------------------------------------------------------- */

static uint64_t key_hash(int db, const char *k, size_t n)
{
    return XXH3_64bits_withSeed(k, n, (uint64_t)db);
}

static wkey *wkey_find(int db, const char *k, size_t n, uint64_t h)
{
    if (!B.nbuckets) return NULL;
    for (wkey *w = B.buckets[h & (B.nbuckets - 1)]; w; w = w->hnext)
        if (w->hash == h && w->db == db && w->klen == n && memcmp(w->key, k, n) == 0) return w;
    return NULL;
}

static void wkey_rehash(void)
{
    size_t nb = B.nbuckets ? B.nbuckets * 2 : 64;
    wkey **nbk = calloc(nb, sizeof(*nbk));
    if (!nbk) abort();
    for (size_t i = 0; i < B.nbuckets; i++)
        for (wkey *w = B.buckets[i], *next; w; w = next) {
            next = w->hnext;
            w->hnext = nbk[w->hash & (nb - 1)];
            nbk[w->hash & (nb - 1)] = w;
        }
    free(B.buckets);
    B.buckets = nbk;
    B.nbuckets = nb;
}

static wkey *wkey_get(int db, const char *k, size_t n)
{
    uint64_t h = key_hash(db, k, n);
    wkey *w = wkey_find(db, k, n, h);
    if (w) return w;
    if (B.nkeys >= B.nbuckets) wkey_rehash();
    w = calloc(1, sizeof(*w));
    if (!w || !(w->key = malloc(n ? n : 1))) abort();
    memcpy(w->key, k, n);
    w->klen = n;
    w->db = db;
    w->hash = h;
    w->hnext = B.buckets[h & (B.nbuckets - 1)];
    B.buckets[h & (B.nbuckets - 1)] = w;
    B.nkeys++;
    return w;
}

/* Frees w when nothing refers to it any more (B1). */
static void wkey_release(wkey *w)
{
    if (w->first || w->ready || w->serving) return;
    wkey **pp = &B.buckets[w->hash & (B.nbuckets - 1)];
    while (*pp != w)
        pp = &(*pp)->hnext;
    *pp = w->hnext;
    B.nkeys--;
    free(w->key);
    free(w);
}

/* ---- The timeout heap and its timer ---------------------------------------- */

static void heap_set(size_t i, block_wait *bw)
{
    B.heap[i] = bw;
    bw->heap_i = i;
}

static void heap_up(size_t i)
{
    block_wait *bw = B.heap[i];
    while (i > 0 && B.heap[(i - 1) / 2]->deadline > bw->deadline) {
        heap_set(i, B.heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    heap_set(i, bw);
}

static void heap_down(size_t i)
{
    block_wait *bw = B.heap[i];
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        int64_t best = bw->deadline;
        if (l < B.nheap && B.heap[l]->deadline < best) m = l, best = B.heap[l]->deadline;
        if (l + 1 < B.nheap && B.heap[l + 1]->deadline < best) m = l + 1;
        if (m == i) break;
        heap_set(i, B.heap[m]);
        i = m;
    }
    heap_set(i, bw);
}

static void heap_push(block_wait *bw)
{
    if (B.nheap == B.capheap) {
        B.capheap = B.capheap ? B.capheap * 2 : 16;
        B.heap = realloc(B.heap, B.capheap * sizeof(*B.heap));
        if (!B.heap) abort();
    }
    heap_set(B.nheap++, bw);
    heap_up(B.nheap - 1);
}

static void heap_remove(block_wait *bw)
{
    size_t i = bw->heap_i;
    block_wait *last = B.heap[--B.nheap];
    if (i == B.nheap) return;
    heap_set(i, last);
    heap_down(i);
    heap_up(last->heap_i);
}

static int timer_proc(ae_loop *el, long long id, void *data);

/* Arms the timer at the earliest deadline (keeping one that is due no
 * later). */
static void timer_arm(void)
{
    if (!B.nheap) return;
    int64_t at = B.heap[0]->deadline;
    if (B.timer_id && B.timer_at <= at) return;
    if (B.timer_id) ae_delete_timer(server.el, B.timer_id);
    int64_t now = ae_mstime();
    long long id = ae_create_timer(server.el, at > now ? at - now : 0, timer_proc, NULL);
    B.timer_id = id > 0 ? id : 0;
    B.timer_at = at;
}

/* ---- Blocking and unblocking ------------------------------------------------ */

static void resume_push(client *c)
{
    if (c->flags & CLIENT_UNBLOCKED) return;
    if (B.nresume == B.capresume) {
        B.capresume = B.capresume ? B.capresume * 2 : 16;
        B.resume = realloc(B.resume, B.capresume * sizeof(*B.resume));
        if (!B.resume) abort();
    }
    B.resume[B.nresume++] = c;
    c->flags |= CLIENT_UNBLOCKED;
}

/* Ends c's wait (B1); with resume, its pending requests run before the
 * loop sleeps and its reply is flushed. */
static void unblock(client *c, int resume)
{
    block_wait *bw = c->priv->bwait;
    for (int i = 0; i < bw->nw; i++) {
        waiter *w = &bw->w[i];
        wkey *wk = w->wk;
        if (w->prev)
            w->prev->next = w->next;
        else
            wk->first = w->next;
        if (w->next)
            w->next->prev = w->prev;
        else
            wk->last = w->prev;
        wkey_release(wk);
    }
    if (bw->deadline) heap_remove(bw);
    if (bw->ops->free) bw->ops->free(bw->state);
    free(bw->w);
    free(bw->argv);
    free(bw);
    c->priv->bwait = NULL;
    c->flags &= ~CLIENT_BLOCKED;
    B.nblocked--;
    if (resume) {
        resume_push(c);
        client_pending_write(c);
    }
}

int block_allowed(const client *c)
{
    return !(c->flags & (CLIENT_DENY_BLOCKING | CLIENT_IN_EXEC | CLIENT_MULTI));
}

int block_parse_timeout(client *c, const arg *a, int unit, int64_t *deadline_ms)
{
    long long ms;
    if (unit == BLOCK_SECONDS) {
        long double s;
        if (!ks_string2ld(a->ptr, a->len, &s)) {
            add_reply_error(c, "timeout is not a float or out of range");
            return -1;
        }
        /* Redis converts with a cast that yields LLONG_MIN for what does
         * not fit (inf included): "negative" below, as redis-server says. */
        long double v = ceill(s * 1000.0L);
        ms =
            (v >= -9223372036854775808.0L && v < 9223372036854775808.0L) ? (long long)v : LLONG_MIN;
    } else if (!ks_string2ll(a->ptr, a->len, &ms)) {
        add_reply_error(c, "timeout is not an integer or out of range");
        return -1;
    }
    if (ms < 0) {
        add_reply_error(c, "timeout is negative");
        return -1;
    }
    /* Past the end of time Redis's sum wraps, and the client times out at
     * once; so here. */
    *deadline_ms = ms > 0 ? (int64_t)((uint64_t)ms + (uint64_t)ae_mstime()) : 0;
    if (ms > 0 && *deadline_ms <= 0) *deadline_ms = 1;
    return 0;
}

static void save_args(block_wait *bw, const client *c)
{
    size_t bytes = sizeof(arg) * (size_t)c->argc;
    for (int i = 0; i < c->argc; i++)
        bytes += c->argv[i].len + 1;
    bw->argv = malloc(bytes ? bytes : 1);
    if (!bw->argv) abort();
    char *p = (char *)(bw->argv + c->argc);
    for (int i = 0; i < c->argc; i++) {
        memcpy(p, c->argv[i].ptr, c->argv[i].len + 1);
        bw->argv[i] = (arg){p, c->argv[i].len};
        p += c->argv[i].len + 1;
    }
    bw->argc = c->argc;
}

void block_on_keys(client *c, const block_ops *ops, const arg *keys, int nkeys, int64_t deadline_ms,
                   void *state)
{
    block_wait *bw = calloc(1, sizeof(*bw));
    if (!bw || !(bw->w = calloc((size_t)(nkeys ? nkeys : 1), sizeof(waiter)))) abort();
    bw->c = c;
    bw->ops = ops;
    bw->state = state;
    bw->deadline = deadline_ms;
    save_args(bw, c);
    bw->cmd = c->cmd;
    for (int i = 0; i < nkeys; i++) {
        wkey *wk = wkey_get(c->db, keys[i].ptr, keys[i].len);
        int dup = 0; /* BLPOP k k 0 waits once on k */
        for (int j = 0; j < bw->nw; j++)
            dup |= bw->w[j].wk == wk;
        if (dup) continue;
        waiter *w = &bw->w[bw->nw++];
        w->bw = bw;
        w->wk = wk;
        w->prev = wk->last;
        if (wk->last)
            wk->last->next = w;
        else
            wk->first = w;
        wk->last = w;
    }
    c->priv->bwait = bw;
    c->flags |= CLIENT_BLOCKED;
    B.nblocked++;
    if (deadline_ms) {
        heap_push(bw);
        timer_arm();
    }
}

static void signal_wkey(wkey *w)
{
    if (!w || w->ready || w->serving || !w->first) return;
    w->ready = 1;
    w->rnext = NULL;
    if (B.ready_tail)
        B.ready_tail->rnext = w;
    else
        B.ready_head = w;
    B.ready_tail = w;
}

void block_signal_key(int db, const char *key, size_t klen)
{
    if (!B.nkeys) return;
    signal_wkey(wkey_find(db, key, klen, key_hash(db, key, klen)));
}

void block_signal_db(int db)
{
    for (size_t i = 0; B.nkeys && i < B.nbuckets; i++)
        for (wkey *w = B.buckets[i]; w; w = w->hnext)
            if (w->db == db) signal_wkey(w);
}

static void reply_timeout(block_wait *bw)
{
    if (bw->ops->timeout)
        bw->ops->timeout(bw->c, bw->state);
    else
        add_reply_null_array(bw->c);
}

static int timer_proc(ae_loop *el, long long id, void *data)
{
    (void)el;
    (void)data;
    if (id != B.timer_id) return AE_NOMORE;
    int64_t now = ae_mstime();
    while (B.nheap && B.heap[0]->deadline <= now) {
        block_wait *bw = B.heap[0];
        reply_timeout(bw);
        unblock(bw->c, 1);
    }
    if (!B.nheap) {
        B.timer_id = 0;
        return AE_NOMORE;
    }
    B.timer_at = B.heap[0]->deadline;
    return (int)(B.timer_at - now < 1000000 ? B.timer_at - now : 1000000);
}

int block_unblock(client *target, int error)
{
    block_wait *bw = target->priv->bwait;
    if (!(target->flags & CLIENT_BLOCKED) || !bw) return 0;
    if (error)
        add_reply_error(target, "-UNBLOCKED client unblocked via CLIENT UNBLOCK");
    else
        reply_timeout(bw);
    unblock(target, 1);
    return 1;
}

void block_client_gone(client *c)
{
    if (c->flags & CLIENT_BLOCKED) unblock(c, 0);
    if (c->flags & CLIENT_UNBLOCKED) {
        for (size_t i = 0; i < B.nresume; i++)
            if (B.resume[i] == c) B.resume[i] = NULL;
        c->flags &= ~CLIENT_UNBLOCKED;
    }
}

uint64_t block_count(void)
{
    return B.nblocked;
}

uint64_t block_timeout_count(void)
{
    return B.nheap;
}

/* ---- Serving ---------------------------------------------------------------- */

static ks_type key_type(int db, const char *key, size_t klen)
{
    ks_ctx ctx = {server.ks, server.batch, dbmap_stored(db), server_now_ms(), NULL};
    ks_type t = KS_NONE;
    ks_type_of(&ctx, key, klen, &t);
    ks_ctx_reset(&ctx);
    return t;
}

/* Offers wk to its waiters in order (B2). Returns with wk possibly
 * released. */
static void serve_key(wkey *wk)
{
    ks_type type = key_type(wk->db, wk->key, wk->klen);
    wk->serving = 1;
    for (waiter *w = wk->first, *next; w; w = next) {
        /* w's client leaves every FIFO when served; next is another
         * client's waiter (one waiter per client and key), still linked. */
        next = w->next;
        block_wait *bw = w->bw;
        client *c = bw->c;
        if (c->priv->close_asap) continue;
        reply_mark mark;
        reply_mark_get(c, &mark);
        eng_batch_set_savepoint(server.batch);
        c->last_cmd_errors = 0;
        c->priv->executing++;
        int64_t t0 = mono_us();
        tracking_call_begin(c); /* TR1: its invalidations after this reply */
        server.cmd_touches = 0;
        int served = bw->ops->serve(c, bw->state, wk->key, wk->klen, type);
        tracking_call_end(c, NULL);
        int64_t dur = mono_us() - t0;
        c->priv->executing--;
        if (served && cfg.slowlog_log_slower_than >= 0 && dur >= cfg.slowlog_log_slower_than)
            slowlog_push(c, bw->argc, bw->argv, dur);
        if (served && c->last_cmd_errors) stats_failed_when_served(c, bw->cmd);
        if (c->last_cmd_errors)
            eng_batch_rollback(server.batch); /* S1 */
        else
            eng_batch_pop_savepoint(server.batch);
        ks_ctx_reset(&server.ctx);
        server_write_batch(c, &mark); /* B3 */
        /* still blocked unless the serve killed it (client_free_async) */
        if (!served || !(c->flags & CLIENT_BLOCKED)) continue;
        unblock(c, 1);
        type = key_type(wk->db, wk->key, wk->klen);
    }
    wk->serving = 0;
}

void block_handle_ready(void)
{
    if (B.handling || !B.ready_head) return; /* B4 */
    B.handling = 1;
    int64_t saved = server.cmd_time_ms;
    if (!server.cmd_time_ms) server.cmd_time_ms = ae_mstime();
    while (B.ready_head) {
        wkey *wk = B.ready_head;
        B.ready_head = wk->rnext;
        if (!B.ready_head) B.ready_tail = NULL;
        wk->ready = 0;
        if (wk->first) serve_key(wk);
        wkey_release(wk);
    }
    server.cmd_time_ms = saved;
    B.handling = 0;
}

void block_before_sleep(void)
{
    block_handle_ready();
    /* Clients served or timed out run what they pipelined behind the
     * blocking command; that may block them again, unblock others (who
     * join the queue) or free some (block_client_gone clears their slot). */
    for (size_t i = 0; i < B.nresume; i++) {
        client *c = B.resume[i];
        if (!c) continue;
        B.resume[i] = NULL;
        c->flags &= ~CLIENT_UNBLOCKED;
        client_resume_input(c);
        block_handle_ready();
    }
    B.nresume = 0;
}
