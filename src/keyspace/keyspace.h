/*
 * keyspace.h -- how Redis databases, keys, types, TTLs, strings and hashes
 * map onto engine keys (encoding: src/keyspace/ENCODING.md).
 *
 * The keyspace has no in-memory copy of the data: every read goes to the
 * engine, every write goes into the pending engine batch of the running
 * command (or EXEC), which the server commits atomically after it.
 *
 * Threading: called only from the server's command thread.
 *
 * Errors: functions return ks_status. KS_ERR_* codes map to the Redis error
 * texts in server.h; on KS_ERR_MSG the message is in ctx->err (malloc'd,
 * freed by the next ks_ctx_reset), e.g. an index rejecting a write.
 */
#ifndef STRATA_KEYSPACE_H
#define STRATA_KEYSPACE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define KS_DATABASES 16

typedef enum ks_status {
    KS_OK = 0,
    KS_NOTFOUND = 1,
    KS_ERR_WRONGTYPE = -1,
    KS_ERR_NOTINT = -2,
    KS_ERR_NOTFLOAT = -3,
    KS_ERR_OVERFLOW = -4,
    KS_ERR_ENGINE = -5, /* the engine failed (I/O, corruption): ctx->err says how */
    KS_ERR_MSG = -6,    /* ctx->err holds the full error text */
} ks_status;

typedef enum ks_type { KS_NONE = 0, KS_STRING = 1, KS_HASH = 2 } ks_type;

typedef struct keyspace keyspace;

/* The context of one command: which keyspace and db, the pending batch that
 * reads see through and writes go to, and the time the command runs at. */
typedef struct ks_ctx {
    keyspace *ks;
    eng_batch *batch; /* indexed; owned by the server */
    int db;
    int64_t now_ms;   /* expiry is judged against this */
    char *err;        /* message for KS_ERR_MSG / KS_ERR_ENGINE */
} ks_ctx;

void ks_ctx_reset(ks_ctx *c); /* frees err */

/* Opens the keyspace over an open engine (not owned). */
ks_status ks_open(eng_db *db, keyspace **out);
void ks_close(keyspace *ks);
eng_db *ks_engine(keyspace *ks);

/* A hash's content as field/value pairs (borrowed pointers, valid until the
 * owner frees it). */
typedef struct ks_field {
    const char *f;
    size_t fl;
    const char *v;
    size_t vl;
} ks_field;

/* The write-path hook the index layer registers. Invariant KS1: every
 * change of a hash's content or of its TTL, by any command, by expiry or by a
 * flush, calls it once with the complete old and new content before the
 * change is written. had_old / has_new tell whether the key holds a hash
 * before / after (creation, deletion, type change, rename); new_expire_ms is
 * the absolute expiry (unix ms) of the hash after the change, 0 for none.
 * The hook validates and adds its own writes to ctx->batch. It returns
 * KS_OK, or KS_ERR_MSG with ctx->err set, in which case the command fails and
 * its writes are rolled back (Invariant S1 in server.h).
 *
 * Expired hashes may also vanish in compaction (through the engine's
 * compaction filter) without a hook call; that is why index entries carry
 * the expiry of their hash (see src/index/FORMAT.md) and readers skip
 * entries whose hash has expired. */
typedef ks_status (*ks_hash_hook_fn)(void *hctx, ks_ctx *ctx, const char *key, size_t klen,
                                     const ks_field *old_f, size_t old_n, int had_old,
                                     const ks_field *new_f, size_t new_n, int has_new,
                                     int64_t new_expire_ms);
void ks_set_hash_hook(keyspace *ks, ks_hash_hook_fn fn, void *hctx);

/* Called with (db, key) for every key a write changes, for WATCH. */
typedef void (*ks_touch_fn)(void *tctx, int db, const char *key, size_t klen);
void ks_set_touch_hook(keyspace *ks, ks_touch_fn fn, void *tctx);

/* Keys in db (kept exact: a counter per db, stored in the engine). */
uint64_t ks_dbsize(ks_ctx *c);
/* Keys with a TTL in db (for INFO keyspace). */
uint64_t ks_expires(ks_ctx *c);

/* Deletes every key of c->db (FLUSHDB), or of every db when all != 0. */
ks_status ks_flush(ks_ctx *c, int all);

/* One step of active expiry: deletes up to max_keys expired keys, looking
 * at most time_budget_us; returns the number deleted. Called from the event
 * loop's timer with a fresh ctx and batch, then committed. */
uint64_t ks_active_expire(ks_ctx *c, uint64_t max_keys, uint64_t time_budget_us);

/* Reads the full content of the hash at key as of the ctx's view (batch over
 * the latest data), or of snap when not NULL (IDX.RANGE reads one snapshot).
 * On KS_OK *fields (array of n pairs) and its storage are owned by the caller
 * and freed with ks_fields_free. KS_NOTFOUND if absent or expired;
 * KS_ERR_WRONGTYPE if not a hash. */
ks_status ks_hash_read(ks_ctx *c, const eng_snapshot *snap, const char *key, size_t klen,
                       ks_field **fields, size_t *n);
void ks_fields_free(ks_field *fields, size_t n);

/* Calls fn for each live (unexpired) hash of c->db whose key starts with
 * prefix and is > after (NULL: from the start), in key order, reading
 * through snap; stops after max hashes or when fn returns non-zero.
 * Returns the number visited; *last is set to the last key visited
 * (malloc'd) so a caller can resume (index builds in small steps). */
typedef int (*ks_hash_visit_fn)(void *vctx, const char *key, size_t klen, const ks_field *f,
                                size_t n);
uint64_t ks_scan_hashes(ks_ctx *c, const eng_snapshot *snap, const char *prefix, size_t plen,
                        const char *after, size_t alen, uint64_t max, ks_hash_visit_fn fn,
                        void *vctx, char **last, size_t *last_len);

/* Engine keys reserved for other layers: the index layer stores its
 * catalog and entries under keys that start with this byte, which no key
 * of the keyspace encoding uses. */
#define KS_INDEX_NAMESPACE 'x'

/* The keyspace installs the engine compaction filter (expired keys vanish in
 * compaction); keys in KS_INDEX_NAMESPACE are passed to this function, which
 * the index layer sets, so it can drop index entries of expired hashes. */
typedef int (*ks_index_filter_fn)(const char *key, size_t klen, const char *val, size_t vlen,
                                  int64_t now_ms);
void ks_set_index_filter(ks_index_filter_fn fn);
/* The compaction filter to put in eng_options before eng_open (ctx NULL). */
int ks_compaction_filter(void *ctx, const char *key, size_t klen, const char *val, size_t vlen);

/* The string, hash and key operations used by the command handlers are
 * declared below this line by the keyspace implementation. */

#endif
