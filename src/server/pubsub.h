/*
 * pubsub.h -- the server's pub/sub registry: channels, patterns and shard
 * channels, who is subscribed to what, and delivery of messages.
 *
 * Three kinds of subscription, as Redis: channels (SUBSCRIBE), patterns
 * (PSUBSCRIBE, matched with ks_glob_match against each published channel)
 * and shard channels (SSUBSCRIBE/SPUBLISH; with one shard they behave as
 * channels of their own namespace, and patterns never see them).
 *
 * Invariant P1: client c is in the server's subscriber list of name (of a
 * kind) exactly when name is in c's own map of that kind; the server's
 * entry exists only while it has subscribers.
 * Invariant P2: CLIENT_PUBSUB is set on c exactly while c has at least one
 * subscription of any kind (it selects RESP2's subscribed mode).
 *
 * Messages and confirmations are push replies (RESP3 '>' arrays, RESP2
 * '*' arrays) that bypass CLIENT REPLY OFF/SKIP, as Redis. Every message
 * appended to a subscriber is followed by the pubsub output-buffer-limit
 * check (networking.c): a subscriber that does not read is disconnected
 * instead of growing the server's memory.
 *
 * Threading: command thread only. Names are copied.
 */
#ifndef STRATA_PUBSUB_H
#define STRATA_PUBSUB_H

#include <stddef.h>
#include <stdint.h>

#include "server/server.h"

enum pubsub_kind { PUBSUB_CHANNEL = 0, PUBSUB_PATTERN = 1, PUBSUB_SHARD = 2 };

/* Subscribes c to name (no-op when already subscribed) and sends the
 * confirmation ["subscribe"|"psubscribe"|"ssubscribe", name, count]. Sets
 * CLIENT_PUBSUB (P2). */
void pubsub_subscribe(client *c, int kind, const char *name, size_t n);
/* Unsubscribes c from name; with notify, sends ["unsubscribe", name, count]
 * (also when c was not subscribed). Returns 1 when c was subscribed. */
int pubsub_unsubscribe(client *c, int kind, const char *name, size_t n, int notify);
/* Unsubscribes c from every name of kind, confirming each; with notify and
 * nothing to leave, sends one confirmation with a null name, as Redis.
 * Returns how many were left. Updates CLIENT_PUBSUB (P2). */
int pubsub_unsubscribe_all(client *c, int kind, int notify);
/* Drops every subscription of c without confirmations (RESET, and
 * client_free). */
void pubsub_client_reset(client *c);
/* c's subscription counts (CLIENT LIST sub= psub= ssub=). */
void pubsub_client_counts(const client *c, int *sub, int *psub, int *ssub);
/* Bytes c's subscription maps hold (CLIENT LIST tot-mem, MEMORY STATS). */
size_t pubsub_client_mem(const client *c);

/* Delivers msg on channel to its subscribers, and (unless shard) to the
 * subscribers of every matching pattern. Returns the number of messages
 * delivered (PUBLISH's reply). */
long long pubsub_publish(const char *ch, size_t chlen, const char *msg, size_t mlen, int shard);

/* Server-wide figures: channels (or shard channels) with subscribers,
 * distinct patterns, subscribers of one channel. */
uint64_t pubsub_channel_count(int shard);
uint64_t pubsub_pattern_count(void);
long long pubsub_numsub(const char *ch, size_t n, int shard);
/* Replies the array of channels (or shard channels) matching pat (NULL:
 * all), as PUBSUB CHANNELS. */
void pubsub_reply_channels(client *c, const arg *pat, int shard);

#endif
