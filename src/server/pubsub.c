/*
 * pubsub.c -- the pub/sub registry and message delivery; see pubsub.h.
 *
 * Server side, one map per kind from name to the array of subscribed
 * clients, in subscription order (delivery follows it, as Redis's lists).
 * Client side, one map per kind from name to the server's entry, so leaving
 * a channel costs one lookup plus the removal from the array.
 *
 * PUBLISH formats the message once ("*3 $7 message $n channel $m msg", or
 * smessage / pmessage) and appends the same bytes to every subscriber,
 * swapping the first byte for '>' for RESP3 clients. Patterns are matched
 * one by one against the channel (ks_glob_match), as Redis does.
 */
#include "server/pubsub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/strmap.h"

typedef struct subscribers {
    client **v;
    int n, cap;
} subscribers;

struct client_pubsub {
    strmap names[3]; /* by pubsub_kind: name -> the server's strmap_entry */
};

static strmap server_names[3]; /* by pubsub_kind: name -> subscribers */

static const char *const sub_word[3] = {"subscribe", "psubscribe", "ssubscribe"};
static const char *const unsub_word[3] = {"unsubscribe", "punsubscribe", "sunsubscribe"};

static struct client_pubsub *client_ps(client *c)
{
    if (!c->priv->ps) {
        c->priv->ps = calloc(1, sizeof(struct client_pubsub));
        if (!c->priv->ps) abort();
    }
    return c->priv->ps;
}

/* The count a confirmation of kind reports: channels and patterns
 * together, shard channels apart (as Redis). */
static long confirm_count(const client *c, int kind)
{
    const struct client_pubsub *ps = c->priv->ps;
    if (!ps) return 0;
    if (kind == PUBSUB_SHARD) return (long)ps->names[PUBSUB_SHARD].count;
    return (long)(ps->names[PUBSUB_CHANNEL].count + ps->names[PUBSUB_PATTERN].count);
}

static int total_count(const client *c)
{
    const struct client_pubsub *ps = c->priv->ps;
    return ps ? (int)(ps->names[0].count + ps->names[1].count + ps->names[2].count) : 0;
}

/* P2, and the client's output-buffer-limit class with it. */
static void update_flag(client *c)
{
    if (total_count(c))
        c->flags |= CLIENT_PUBSUB;
    else
        c->flags &= ~CLIENT_PUBSUB;
    client_set_class(c, total_count(c) ? CLIENT_CLASS_PUBSUB : CLIENT_CLASS_NORMAL);
}

/* [word, name (or null), count] as a push. */
static void confirm(client *c, const char *word, const char *name, size_t n, long count)
{
    reply_push_begin(c, 3);
    add_reply_bulk_cstr(c, word);
    if (name)
        add_reply_bulk(c, name, n);
    else
        add_reply_null(c);
    add_reply_long_long(c, count);
    reply_push_end(c);
}

void pubsub_subscribe(client *c, int kind, const char *name, size_t n)
{
    strmap *mine = &client_ps(c)->names[kind];
    if (!strmap_find(mine, name, n)) {
        strmap *all = &server_names[kind];
        strmap_entry *se = strmap_find(all, name, n);
        if (!se) {
            subscribers *s = calloc(1, sizeof(*s));
            if (!s) abort();
            se = strmap_add(all, name, n, s);
        }
        subscribers *s = se->value;
        if (s->n == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 4;
            s->v = realloc(s->v, (size_t)s->cap * sizeof(client *));
            if (!s->v) abort();
        }
        s->v[s->n++] = c;
        strmap_add(mine, name, n, se); /* P1 */
    }
    update_flag(c); /* P2 */
    confirm(c, sub_word[kind], name, n, confirm_count(c, kind));
}

/* Takes c out of the server's list behind se (P1), dropping the entry
 * when c was its last subscriber. */
static void leave(client *c, int kind, strmap_entry *se)
{
    subscribers *s = se->value;
    for (int i = 0; i < s->n; i++) {
        if (s->v[i] == c) {
            memmove(&s->v[i], &s->v[i + 1], (size_t)(s->n - i - 1) * sizeof(client *));
            s->n--;
            break;
        }
    }
    if (s->n == 0) {
        free(s->v);
        free(s);
        strmap_delete(&server_names[kind], se);
    }
}

/* Removes mine's entry e (its key is name) and confirms with the count
 * after the removal. */
static void leave_entry(client *c, int kind, strmap_entry *e, int notify)
{
    strmap *mine = &c->priv->ps->names[kind];
    leave(c, kind, e->value);
    if (notify) confirm(c, unsub_word[kind], e->key, e->len, confirm_count(c, kind) - 1);
    strmap_delete(mine, e);
}

int pubsub_unsubscribe(client *c, int kind, const char *name, size_t n, int notify)
{
    strmap_entry *e = c->priv->ps ? strmap_find(&c->priv->ps->names[kind], name, n) : NULL;
    if (e)
        leave_entry(c, kind, e, notify);
    else if (notify)
        confirm(c, unsub_word[kind], name, n, confirm_count(c, kind));
    update_flag(c);
    return e != NULL;
}

int pubsub_unsubscribe_all(client *c, int kind, int notify)
{
    int count = 0;
    if (c->priv->ps) {
        strmap *mine = &c->priv->ps->names[kind];
        for (strmap_entry *e = mine->head, *next; e; e = next) {
            next = e->next;
            leave_entry(c, kind, e, notify);
            count++;
        }
    }
    if (notify && count == 0) confirm(c, unsub_word[kind], NULL, 0, confirm_count(c, kind));
    update_flag(c);
    return count;
}

void pubsub_client_reset(client *c)
{
    if (!c->priv->ps) return;
    for (int k = 0; k < 3; k++)
        pubsub_unsubscribe_all(c, k, 0);
    free(c->priv->ps);
    c->priv->ps = NULL;
    update_flag(c);
}

void pubsub_client_counts(const client *c, int *sub, int *psub, int *ssub)
{
    const struct client_pubsub *ps = c->priv->ps;
    *sub = ps ? (int)ps->names[PUBSUB_CHANNEL].count : 0;
    *psub = ps ? (int)ps->names[PUBSUB_PATTERN].count : 0;
    *ssub = ps ? (int)ps->names[PUBSUB_SHARD].count : 0;
}

size_t pubsub_client_mem(const client *c)
{
    const struct client_pubsub *ps = c->priv->ps;
    if (!ps) return 0;
    return sizeof(*ps) + strmap_mem(&ps->names[0]) + strmap_mem(&ps->names[1]) +
           strmap_mem(&ps->names[2]);
}

/* ---- Delivery ------------------------------------------------------------ */

/* A formatted push: "*<n>\r\n" then bulk strings. */
typedef struct msgbuf {
    char *p;
    size_t len, cap;
    char small[512];
} msgbuf;

static void mb_put(msgbuf *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2;
        char *np = malloc(cap);
        if (!np) abort();
        memcpy(np, b->p, b->len);
        if (b->p != b->small) free(b->p);
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void mb_bulk(msgbuf *b, const char *s, size_t n)
{
    char hdr[32];
    int h = snprintf(hdr, sizeof(hdr), "$%zu\r\n", n);
    mb_put(b, hdr, (size_t)h);
    mb_put(b, s, n);
    mb_put(b, "\r\n", 2);
}

static void mb_init(msgbuf *b, const char *header, size_t hlen)
{
    b->p = b->small;
    b->len = 0;
    b->cap = sizeof(b->small);
    mb_put(b, header, hlen);
}

static void mb_free(msgbuf *b)
{
    if (b->p != b->small) free(b->p);
}

static long long deliver(const subscribers *s, const msgbuf *b)
{
    for (int i = 0; i < s->n; i++)
        reply_push_raw(s->v[i], b->p, b->len);
    return s->n;
}

long long pubsub_publish(const char *ch, size_t chlen, const char *msg, size_t mlen, int shard)
{
    long long receivers = 0;
    strmap_entry *se = strmap_find(&server_names[shard ? PUBSUB_SHARD : PUBSUB_CHANNEL], ch, chlen);
    if (se) {
        msgbuf b;
        if (shard)
            mb_init(&b, "*3\r\n$8\r\nsmessage\r\n", 18);
        else
            mb_init(&b, "*3\r\n$7\r\nmessage\r\n", 17);
        mb_bulk(&b, ch, chlen);
        mb_bulk(&b, msg, mlen);
        receivers += deliver(se->value, &b);
        mb_free(&b);
    }
    if (shard) return receivers; /* shard channels ignore patterns */
    for (strmap_entry *pe = server_names[PUBSUB_PATTERN].head, *next; pe; pe = next) {
        next = pe->next; /* a full subscriber may be dropped, not unsubscribed */
        if (!ks_glob_match(pe->key, pe->len, ch, chlen, 0)) continue;
        msgbuf b;
        mb_init(&b, "*4\r\n$8\r\npmessage\r\n", 18);
        mb_bulk(&b, pe->key, pe->len);
        mb_bulk(&b, ch, chlen);
        mb_bulk(&b, msg, mlen);
        receivers += deliver(pe->value, &b);
        mb_free(&b);
    }
    return receivers;
}

/* ---- Introspection --------------------------------------------------------- */

uint64_t pubsub_channel_count(int shard)
{
    return server_names[shard ? PUBSUB_SHARD : PUBSUB_CHANNEL].count;
}

uint64_t pubsub_pattern_count(void)
{
    return server_names[PUBSUB_PATTERN].count;
}

long long pubsub_numsub(const char *ch, size_t n, int shard)
{
    strmap_entry *se = strmap_find(&server_names[shard ? PUBSUB_SHARD : PUBSUB_CHANNEL], ch, n);
    return se ? ((subscribers *)se->value)->n : 0;
}

void pubsub_reply_channels(client *c, const arg *pat, int shard)
{
    void *len = add_reply_deferred_len(c);
    long n = 0;
    for (strmap_entry *e = server_names[shard ? PUBSUB_SHARD : PUBSUB_CHANNEL].head; e;
         e = e->next) {
        if (pat && !ks_glob_match(pat->ptr, pat->len, e->key, e->len, 0)) continue;
        add_reply_bulk(c, e->key, e->len);
        n++;
    }
    set_deferred_array_len(c, len, n);
}
