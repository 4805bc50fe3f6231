/*
 * reply.h -- reply writers for whole hashes (HGETALL, HKEYS, HVALS,
 * IDX.RANGE ... HASHES). The rest of the reply writer is declared in
 * server.h; these live apart because they take the keyspace's field type.
 *
 * Each writes one whole reply in a single pass: it sizes the worst case
 * once, takes that much room at the end of the reply chain (the tail block,
 * or one new block), and formats every header and copies every byte there
 * with no per-field calls. The bytes are exactly those of the equivalent
 * add_reply_map_len/add_reply_array_len and add_reply_bulk sequence, in
 * RESP2 and RESP3.
 */
#ifndef STRATA_SERVER_REPLY_H
#define STRATA_SERVER_REPLY_H

#include <stddef.h>

#include "keyspace/keyspace.h"
#include "server/server.h"

/* Writes v in decimal (no NUL) to dst, which has room for 20 bytes, and
 * returns the length: snprintf's stdio machinery costs several times more
 * for the headers of every reply and replication frame. Any thread. */
size_t reply_fmt_ull(char *dst, unsigned long long v);

/* What of each pair add_reply_hash writes. */
typedef enum reply_hash_part {
    REPLY_HASH_PAIRS,  /* map of field -> value (HGETALL) */
    REPLY_HASH_FIELDS, /* array of fields (HKEYS) */
    REPLY_HASH_VALUES, /* array of values (HVALS) */
    REPLY_HASH_BULKS,  /* the fields as bulk strings, no header: a piece of an array */
} reply_hash_part;

/* Appends the n pairs f[0..n) as one reply: a map (RESP3 %n, RESP2 *2n)
 * of bulk strings for REPLY_HASH_PAIRS, else an array of n bulk strings.
 * Copies the bytes; f stays the caller's. Nothing is written for a client
 * in CLIENT REPLY OFF mode or about to close (R3). Command thread only. */
void add_reply_hash(client *c, const ks_field *f, size_t n, reply_hash_part what);

/* As add_reply_bulk(c, key, klen) followed by add_reply_hash(c, f, n,
 * REPLY_HASH_PAIRS), in one pass: one element of IDX.RANGE ... HASHES. */
void add_reply_keyed_hash(client *c, const char *key, size_t klen, const ks_field *f, size_t n);

/* As add_reply_bulk(c, key, klen) followed by an array of the n values
 * v[i]->v (a null where v[i] is NULL), in one pass: one element of
 * IDX.RANGE ... VALUES. Copies the bytes. Command thread only. */
void add_reply_keyed_values(client *c, const char *key, size_t klen, const ks_field *const *v,
                            size_t n);

#endif
