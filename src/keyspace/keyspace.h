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

typedef struct keyspace keyspace;

/* Value types; the numbers are stored (ENCODING.md). A type strata does
 * not implement yet has a name but no row in the type table. */
typedef enum ks_type {
    KS_NONE = 0,
    KS_STRING = 1,
    KS_HASH = 2,
    KS_LIST = 3,
    KS_SET = 4,
    KS_ZSET = 5,
    KS_STREAM = 6,
    KS_TYPE_MAX = 7,
} ks_type;

/* TYPE's name of t ("string" ... "stream", "none" for KS_NONE). */
const char *ks_type_name(ks_type t);
/* The type named name (case-insensitive, as SCAN TYPE); KS_NONE when
 * there is no such type. */
ks_type ks_type_by_name(const char *name, size_t len);

/* The Redis settings behind packing and OBJECT ENCODING (ENCODING.md,
 * "Packing limits"); CONFIG SET changes them through ks_set_limits. A
 * packed value past a new, lower limit converts at its next write. */
typedef struct ks_limits {
    long long hash_max_listpack_entries, hash_max_listpack_value;
    long long set_max_intset_entries;
    long long zset_max_listpack_entries, zset_max_listpack_value;
    long long list_max_listpack_size, list_compress_depth;
    long long stream_node_max_entries, stream_node_max_bytes;
} ks_limits;
/* Redis 7.0's defaults. */
void ks_limits_init(ks_limits *l);
void ks_set_limits(keyspace *ks, const ks_limits *l);
const ks_limits *ks_get_limits(const keyspace *ks);

/* The context of one command: which keyspace and db, the pending batch that
 * reads see through and writes go to, and the time the command runs at. */
typedef struct ks_ctx {
    keyspace *ks;
    eng_batch *batch; /* indexed; owned by the server */
    int db;
    int64_t now_ms;   /* expiry is judged against this */
    char *err;        /* message for KS_ERR_MSG / KS_ERR_ENGINE */
    int skip_damaged; /* ks_scan_hashes steps over damaged table blocks (a check) */
    uint64_t damaged; /* ... and counts them here */
} ks_ctx;

void ks_ctx_reset(ks_ctx *c); /* frees err */

/* Opens the keyspace over an open engine (not owned). */
ks_status ks_open(eng_db *db, keyspace **out);
void ks_close(keyspace *ks);
/* Re-reads what the keyspace caches from the engine (the next collection
 * version, KS-E2) after someone else wrote the engine: a replica's link,
 * a full sync. Never moves the version back. */
ks_status ks_reload_state(keyspace *ks);
eng_db *ks_engine(keyspace *ks);

/* A hint before commands on keys[0..n) of stored db (a pipeline's): starts
 * loading what reading their records, and for writes[i] writing them,
 * will touch in the engine (eng_prefetch). Changes nothing; at most KS_PREFETCH_MAX keys, each of
 * at most KS_PREFETCH_KEY_MAX bytes (longer ones are skipped). */
#define KS_PREFETCH_MAX 32
#define KS_PREFETCH_KEY_MAX 120
void ks_prefetch(keyspace *ks, int db, size_t n, const char *const *keys, const size_t *lens,
                 const unsigned char *writes);
/* The same for fields[i] of the hash or set keys[i] (HSET key field ...,
 * SADD key member ...): their member keys, when keys[i] is a big hash or
 * set the list names more than once in a row (its record is read once,
 * committed, as of now_ms). */
void ks_prefetch_fields(keyspace *ks, int db, size_t n, const char *const *keys, const size_t *lens,
                        const char *const *fields, const size_t *flens, const unsigned char *writes,
                        int64_t now_ms);

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
 * key's metadata record is written (one call site: src/keyspace/ks_write.c;
 * a big hash's member writes may already be in ctx->batch, and a refusal
 * rolls them back with the rest of the command). The hook must not call
 * keyspace functions that write. had_old / has_new tell whether the key holds a hash
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
/* Cheap pre-check: does any index care about this key (prefix match in
 * ctx->db)? When it returns 0 the keyspace skips materializing the old and
 * new content and does not call the hook. */
typedef int (*ks_hash_wants_fn)(void *hctx, int db, const char *key, size_t klen);
void ks_set_hash_hook(keyspace *ks, ks_hash_hook_fn fn, ks_hash_wants_fn wants, void *hctx);

/* Called with (db, key) for every key a write changes, for WATCH. */
typedef void (*ks_touch_fn)(void *tctx, int db, const char *key, size_t klen);
void ks_set_touch_hook(keyspace *ks, ks_touch_fn fn, void *tctx);

/* Events the keyspace raises itself, for keyspace notifications:
 *   KS_EVENT_EXPIRED  an expired key was removed: lazily by a command that
 *                     met it (a read of the live data or a write), by the
 *                     active cycle, or by the active cycle's KS-E1 repair
 *                     of a key that compaction dropped before anyone met it
 *                     (the key is absent; the event is then late, within a
 *                     cycle of the entry's time, but fires once).
 *   KS_EVENT_NEW      a write created a key that did not exist (RENAME and
 *                     COPY onto an existing key overwrite it: no event).
 * Called once per key with its db, after the change is in ctx->batch (a
 * failing command rolls the removal back, S1; the key is then removed, and
 * reported, again later). key is valid during the call. */
typedef enum ks_event { KS_EVENT_EXPIRED = 1, KS_EVENT_NEW = 2 } ks_event;
typedef void (*ks_event_fn)(void *ectx, ks_event ev, int db, const char *key, size_t klen);
void ks_set_event_hook(keyspace *ks, ks_event_fn fn, void *ectx);
/* Lazy expiry on reads (on at open): a read of the live data that meets an
 * expired key removes it in ctx->batch. Off keeps the data set still while
 * clients are paused (reads then see the key absent, as before, and leave
 * it); writes always remove the expired keys they meet. */
void ks_set_lazy_expire(keyspace *ks, int on);

/* Write groups (the server's S4: several commands' writes in one batch b)
 * write the key counters once per group (KS-E7 in ks_encoding.h): after
 * ks_count_hold_cmd(ks, b), the next command's counter changes into b are
 * summed in memory; ks_count_hold_done(c, ok) after it keeps them (ok) or
 * drops them (the command's writes were rolled back, S1). ks_count_flush
 * puts every held sum into c->batch (one read and one put per db) and must
 * run before that batch goes to the engine (and before a script joins the
 * group: a script's commands count into the batch, as EXEC's do); it
 * returns the read's error (c->err set, the sums not yet put still held)
 * after which the batch must not be written. ks_count_drop
 * forgets the held sums (their batch was cleared). Command thread only. */
void ks_count_hold_cmd(keyspace *ks, eng_batch *b);
void ks_count_hold_done(ks_ctx *c, int ok);
ks_status ks_count_flush(ks_ctx *c);
void ks_count_drop(keyspace *ks);

/* Keys in db (kept exact: a counter per db, stored in the engine). */
uint64_t ks_dbsize(ks_ctx *c);
/* Keys with a TTL in db (for INFO keyspace). */
uint64_t ks_expires(ks_ctx *c);

/* Deletes every key of c->db (FLUSHDB), or of every db when all != 0. */
ks_status ks_flush(ks_ctx *c, int all);

/* One step of active expiry in c->db: deletes up to max_keys expired keys
 * (the due entries of the db's expire index), looking at most
 * time_budget_us; returns the number deleted. Called from the event
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
 * declared below this line by the keyspace implementation, one section per
 * value type.
 *
 * Adding a value type (lists, sorted sets, streams): its data work is one
 * file src/keyspace/ks_<type>.c written against src/keyspace/ks_type.h
 * (read a key with ks_key_read, change it with ks_write_begin /
 * ks_write_put / ks_write_del, members with ks_member_* and ks_miter_*,
 * packed bodies with ks_strs_*), which also defines the type's row
 * (ks_type_ops: name, OBJECT ENCODING, count, check, copy, drop, repair,
 * filter); the row goes into ks_type_rows[] in ks_type.c, and the format into
 * ENCODING.md (already laid out for lists, sorted sets and streams). Its
 * public functions get a section below (ks_lpush ..., ks_zadd ...) with
 * the same conventions; nothing else in the keyspace changes, and DEL,
 * RENAME, COPY, EXPIRE, TYPE, SCAN TYPE, OBJECT ENCODING, FLUSHDB, expiry
 * and compaction work on the type through its row. */

/* ---- Flushes ------------------------------------------------------------
 * FLUSHDB/FLUSHALL and Invariant KS1: when a flush hook is set, ks_flush
 * calls it once per db it is about to clear (ctx->db set to that db) instead
 * of calling the hash hook for every indexed hash; the index layer then
 * clears its entries of that db in bulk (into ctx->batch). Without a flush
 * hook, ks_flush calls the hash hook for every hash the wants() check
 * accepts. Returns KS_OK or KS_ERR_MSG (the flush then fails as a whole). */
typedef ks_status (*ks_flush_hook_fn)(void *fctx, ks_ctx *ctx, int db);
void ks_set_flush_hook(keyspace *ks, ks_flush_hook_fn fn, void *fctx);
/* The touch hook is called with key NULL, klen 0 when a whole db is
 * flushed (db -1 never: FLUSHALL touches each db in turn). */

/* A value handed out: p/n point into base, which the caller frees with
 * ks_val_free (base may be NULL for an empty value). */
typedef struct ks_val {
    char *base;
    const char *p;
    size_t n;
} ks_val;
void ks_val_free(ks_val *v);

/* Unless said otherwise, the functions below return KS_OK, KS_NOTFOUND
 * (key absent or expired), KS_ERR_WRONGTYPE, KS_ERR_ENGINE or KS_ERR_MSG
 * (hook rejected the write; ctx->err set). Reads see ctx->batch; writes go
 * only into ctx->batch (REQUIRES: an indexed batch), so a failed command
 * is undone by the server's rollback (S1). Inputs are borrowed for the
 * call; outputs are owned by the caller as each comment says. Command
 * thread only, no locks (as the rest of this header). ks_hash_read and
 * ks_scan_hashes with a snapshot read ctx->batch layered over it (pass a
 * ctx whose batch is NULL for the bare snapshot). Writers delete expired
 * keys they meet (lazy expiry, with the hash hook), so even a command that
 * ends up writing nothing else may add those deletes to the batch. */

/* ---- Generic (ks_keys.c) ------------------------------------------------ */
ks_status ks_type_of(ks_ctx *c, const char *key, size_t klen, ks_type *type);
/* OBJECT ENCODING: Redis's name for the key's encoding at its size
 * ("embstr", "listpack", "intset", "hashtable" ...; a static string).
 * KS_NOTFOUND when absent. */
ks_status ks_object_encoding(ks_ctx *c, const char *key, size_t klen, const char **enc);
/* *deleted = 1 when the key existed. */
ks_status ks_del(ks_ctx *c, const char *key, size_t klen, int *deleted);
/* DEL/UNLINK of n keys (keys[i].f/fl; v unused): *deleted = how many
 * existed. One counter update for them all. */
ks_status ks_del_keys(ks_ctx *c, const ks_field *keys, size_t n, uint64_t *deleted);
/* KS_NOTFOUND when src is absent; *done = 0 when nx and dst exists. Keeps
 * the TTL. */
ks_status ks_rename(ks_ctx *c, const char *src, size_t sl, const char *dst, size_t dl, int nx,
                    int *done);
/* Copies src of c->db to dst of dst_db with its TTL; *done = 0 when dst
 * exists and !replace, or src is absent. */
/* MOVE: key to db dst_db when dst_db has no such key (*done = 0
 * otherwise, or when key is absent), keeping its TTL. A big value's
 * members are copied under a new version (they are keyed by db). */
ks_status ks_move(ks_ctx *c, const char *key, size_t klen, int dst_db, int *done);
ks_status ks_copy(ks_ctx *c, const char *src, size_t sl, int dst_db, const char *dst, size_t dl,
                  int replace, int *done);

enum { KS_EXP_NX = 1, KS_EXP_XX = 2, KS_EXP_GT = 4, KS_EXP_LT = 8 };
/* Sets key's absolute expiry (unix ms) under the KS_EXP_* conditions; a time
 * not after ctx->now_ms deletes the key. *done = 1 when applied. */
ks_status ks_expire_set(ks_ctx *c, const char *key, size_t klen, int64_t when_ms, int flags,
                        int *done);
/* *done = 1 when a TTL was removed. */
ks_status ks_persist(ks_ctx *c, const char *key, size_t klen, int *done);
/* *when_ms = absolute expiry, 0 when none. KS_NOTFOUND when absent. */
ks_status ks_expire_get(ks_ctx *c, const char *key, size_t klen, int64_t *when_ms);

/* Called per key; non-zero stops the walk. key is valid during the call. */
typedef int (*ks_key_fn)(void *arg, const char *key, size_t klen);
/* Every live key of c->db matching the glob pattern (NULL: all). */
ks_status ks_keys(ks_ctx *c, const char *pat, size_t plen, ks_key_fn fn, void *arg);
/* One SCAN step: visits about count keys after cursor (0: the start),
 * reporting those matching pat and (type != KS_NONE) of that type; *next is
 * 0 when the walk is complete. Cursors are handles into a table of the last
 * KS_CURSOR_SLOTS positions (ks_encoding.h); an unknown cursor restarts the
 * walk, so a full iteration still sees every key that lived throughout. */
ks_status ks_scan(ks_ctx *c, uint64_t cursor, const char *pat, size_t plen, uint64_t count,
                  ks_type type, ks_key_fn fn, void *arg, uint64_t *next);
/* A random live key (malloc'd into *key); KS_NOTFOUND when db is empty. */
ks_status ks_randomkey(ks_ctx *c, char **key, size_t *klen);
/* Redis's stringmatchlen (ks_glob.c has the exact semantics): glob with
 * * ? [abc] [^a-z] and \ escapes, ASCII case folding when nocase. Returns
 * 1 on a match. O(plen * slen) time whatever the pattern, no allocation; a
 * pure function, safe from any thread. The one matcher of the server. */
int ks_glob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase);
/* As ks_glob_match, adding to *steps the work done (loop turns plus
 * pattern bytes examined): at most (plen + 1) * (slen + 1) + plen. For
 * tests that check the bound. */
int ks_glob_match_steps(const char *pat, size_t plen, const char *s, size_t slen, int nocase,
                        uint64_t *steps);

/* ---- What a key costs (ks_usage.c) -------------------------------------- */
/* For MEMORY USAGE and DEBUG OBJECT. usage estimates the bytes the key's
 * engine records take as written -- keys and values, before the tables'
 * compression, plus the engine's per-record overhead -- which is what the
 * key costs in the memtable and block cache, and an upper bound of its
 * share of the disk. A big value's members are walked up to `samples` (0:
 * all) and the rest extrapolated from their average. */
typedef struct ks_key_stat {
    ks_type type;
    int big;                /* members kept as records of their own */
    uint64_t count;         /* fields, members or elements; bytes of a string */
    uint64_t payload_bytes; /* the metadata record's value after its header */
    uint64_t usage;
    int64_t expire_ms; /* 0: none */
} ks_key_stat;
/* KS_NOTFOUND when absent; reads as a read command (lazy expiry). */
ks_status ks_key_info(ks_ctx *c, const char *key, size_t klen, uint64_t samples, ks_key_stat *out);

/* ---- Strings (ks_string.c) ---------------------------------------------- */
ks_status ks_get(ks_ctx *c, const char *key, size_t klen, ks_val *out);
/* Bytes [off, off + n) of the string at key into buf, zeros past its end,
 * and *len its length: GETBIT reads one chunk of a chunked string, not the
 * value. KS_NOTFOUND (buf zeroed, *len 0), KS_ERR_WRONGTYPE ... */
ks_status ks_get_part(ks_ctx *c, const char *key, size_t klen, uint64_t off, char *buf, size_t n,
                      uint64_t *len);

typedef struct ks_set_opts {
    int nx, xx, keepttl;
    int get;           /* return the old string in *old (KS_NOTFOUND: none) */
    int64_t expire_ms; /* absolute; 0: none (then the TTL is cleared unless keepttl) */
    int raw;           /* built in place (BITOP): OBJECT ENCODING raw, as Redis's */
} ks_set_opts;
/* SET: *done = 0 when NX/XX prevented it. With o->get, an old value that is
 * not a string fails with KS_ERR_WRONGTYPE and writes nothing; *old gets
 * the old string (p NULL when none). old may be NULL without get. */
ks_status ks_set(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl,
                 const ks_set_opts *o, int *done, ks_val *old);
/* MSET / MSETNX: kv[i].f/fl is a key, kv[i].v/vl its value. */
ks_status ks_mset(ks_ctx *c, const ks_field *kv, size_t n, int nx, int *done);
ks_status ks_getdel(ks_ctx *c, const char *key, size_t klen, ks_val *out);
enum { KS_GETEX_KEEP = 0, KS_GETEX_SET = 1, KS_GETEX_PERSIST = 2 };
ks_status ks_getex(ks_ctx *c, const char *key, size_t klen, int mode, int64_t expire_ms,
                   ks_val *out);
/* KS_ERR_NOTINT when the value is not an integer, KS_ERR_OVERFLOW. */
ks_status ks_incrby(ks_ctx *c, const char *key, size_t klen, long long by, long long *out);
/* out gets the new value as text (cap >= KS_LD_BUF); KS_ERR_NOTFLOAT, or
 * KS_ERR_MSG for NaN/Infinity. */
#define KS_LD_BUF 5120
ks_status ks_incrbyfloat(ks_ctx *c, const char *key, size_t klen, long double by, char *out,
                         size_t *outlen);
/* KS_ERR_MSG when the result would exceed proto-max-bulk-len. */
ks_status ks_append(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl,
                    size_t *newlen);
ks_status ks_setrange(ks_ctx *c, const char *key, size_t klen, uint64_t off, const char *v,
                      size_t vl, size_t *newlen);

/* A growable byte string owned by its holder (malloc'd p, freed with
 * ks_strbuf_free): the value a read-modify-write command edits. */
typedef struct ks_strbuf {
    char *p;
    size_t n, cap;
} ks_strbuf;
/* Makes room for cap bytes, keeping p[0..n). 0, or -1 on out-of-memory. */
int ks_strbuf_reserve(ks_strbuf *b, size_t cap);
/* Sets the length to n; bytes it grows by are zero. 0 or -1. */
int ks_strbuf_resize(ks_strbuf *b, size_t n);
void ks_strbuf_free(ks_strbuf *b);

/* A string opened for a read-modify-write (SETBIT, BITFIELD, SETRANGE,
 * PFADD, PFMERGE, PFCOUNT's cached count): one engine read at ks_str_open,
 * one write at ks_str_write, ending with ks_str_close, also after an error.
 *
 * Whole (ks_str_open): s->v is a private copy of the value, which the
 * caller edits and resizes freely in between.
 *
 * Ranged (ks_str_open_ranged): the caller reads and changes bytes with
 * ks_str_read / ks_str_update only, and the value is loaded a chunk at a
 * time as they ask: on a chunked string (ENCODING.md, "Strings") a
 * command costs the chunks it touches, not the value's length. s->v is
 * then unused (s->big set); ks_str_len is the length either way. */
struct ks_write;
struct ks_strc;
typedef struct ks_str {
    ks_strbuf v;         /* whole: the value's bytes */
    int exists;          /* the key held a string (or has been written since) */
    struct ks_write *w;  /* private: the keyspace write opened for it */
    struct ks_strc *big; /* private: ranged over chunks */
    int ranged;          /* opened with ks_str_open_ranged */
} ks_str;
/* KS_OK with s->exists = 0 and s->v empty when the key is absent (an
 * expired key is deleted first, as every write path does); KS_ERR_WRONGTYPE
 * when it holds another type; KS_ERR_ENGINE, or KS_ERR_MSG on
 * out-of-memory. */
ks_status ks_str_open(ks_ctx *c, const char *key, size_t klen, ks_str *s);
/* As ks_str_open, ranged: nothing of a chunked value is read yet. */
ks_status ks_str_open_ranged(ks_ctx *c, const char *key, size_t klen, ks_str *s);
/* The string's current length. */
uint64_t ks_str_len(const ks_str *s);
/* Bytes [off, off + n) into buf, zeros past the end (ranged or whole). */
ks_status ks_str_read(ks_str *s, uint64_t off, void *buf, size_t n);
/* Writes buf[0..n) at off, growing the string (zero-filled) to off + n
 * when shorter. REQUIRES: s ranged, off + n <= KS_MAX_STRING. */
ks_status ks_str_update(ks_str *s, uint64_t off, const void *buf, size_t n);
/* Stores the string (OBJECT ENCODING raw, as Redis's values changed in
 * place), keeping its TTL; creates the key when it did not exist. Longer
 * than 4096 bytes it is stored chunked and only changed chunks are
 * written. REQUIRES: at most once per open. */
ks_status ks_str_write(ks_str *s);
void ks_str_close(ks_str *s);
/* Sets ctx->err to "ERR out of memory" and returns KS_ERR_MSG: for callers
 * whose own allocation fails in the middle of a command. */
ks_status ks_oom(ks_ctx *c);

/* Redis's number parsing and formatting (util.c), for values and for
 * command arguments alike. string2ll/string2ld return 1 when the whole
 * input is a valid number (no spaces, no leading zeros for integers);
 * ld2string writes "%.17Lf" with trailing zeros cut (LD_STR_HUMAN) and
 * returns its length. */
int ks_string2ll(const char *s, size_t n, long long *out);
int ks_string2ld(const char *s, size_t n, long double *out);
size_t ks_ld2string(char *buf, size_t cap, long double v);
/* v in decimal at p (no NUL), as "%llu" / "%lld" write it; returns the
 * length. p needs room for 20 bytes (ks_u64_format) or 21 (ks_ll_format,
 * LLONG_MIN's sign included). */
size_t ks_u64_format(uint64_t v, char *p);
size_t ks_ll_format(long long v, char *p);

/* ---- Hashes (ks_hash.c, ks_hash_ops.c) --------------------------------- */
/* HSET/HSETNX: *added = fields that were new; with nx, existing fields are
 * left alone. fv[i].f/v are field/value. */
ks_status ks_hset(ks_ctx *c, const char *key, size_t klen, const ks_field *fv, size_t n, int nx,
                  uint64_t *added);
/* HMGET: fills items[i].v/vl for each items[i].f (v NULL when absent);
 * *owner keeps the storage, freed by ks_hmget_free. KS_NOTFOUND leaves every
 * v NULL and *owner NULL. */
ks_status ks_hmget(ks_ctx *c, const char *key, size_t klen, ks_field *items, size_t n,
                   void **owner);
void ks_hmget_free(void *owner);
ks_status ks_hlen(ks_ctx *c, const char *key, size_t klen, uint64_t *n);
ks_status ks_hdel(ks_ctx *c, const char *key, size_t klen, const ks_field *fields, size_t n,
                  uint64_t *deleted);
/* KS_ERR_MSG ("ERR hash value is not an integer"), KS_ERR_OVERFLOW. */
ks_status ks_hincrby(ks_ctx *c, const char *key, size_t klen, const char *f, size_t fl,
                     long long by, long long *out);
ks_status ks_hincrbyfloat(ks_ctx *c, const char *key, size_t klen, const char *f, size_t fl,
                          long double by, char *out, size_t *outlen);
/* Called per field/value; non-zero stops. */
typedef int (*ks_field_fn)(void *arg, const char *f, size_t fl, const char *v, size_t vl);
/* HGETALL/HKEYS/HVALS: calls count_fn(arg, n) once, then fn for each of
 * the n pairs in HGETALL order, with pointers into the engine's buffer (no
 * copy of the hash as ks_hash_read makes); fn's return value is ignored, so
 * the pairs always match the count. KS_NOTFOUND (no call) when absent. */
typedef void (*ks_count_fn)(void *arg, uint64_t n);
ks_status ks_hash_all(ks_ctx *c, const char *key, size_t klen, ks_count_fn count_fn, ks_field_fn fn,
                      void *arg);
/* As ks_hash_all, but hands every pair over in one call, fn(arg, f, n),
 * so a reply writer can size and write the whole hash at once. f[0..n)
 * point into the engine's buffer (or a copy owned by ks) and are valid
 * only during the call. Returns KS_OK after the call, KS_NOTFOUND (no
 * call) when absent, KS_ERR_WRONGTYPE, or an engine/corruption error (no
 * call: the hash is parsed in full first). No lock: command thread. */
typedef void (*ks_fields_fn)(void *arg, const ks_field *f, size_t n);
ks_status ks_hash_fields(ks_ctx *c, const char *key, size_t klen, ks_fields_fn fn, void *arg);
/* ks_hash_fields for keys[0..n) of c->db at once (IDX.RANGE ... HASHES):
 * the records are read together (one view, overlapped cache misses, keys
 * sharing a table block read it once, no copies), then fn(arg, i, st, f,
 * nf) runs for each key in order with st KS_OK and its fields, or
 * KS_NOTFOUND / KS_ERR_WRONGTYPE and no fields. Returns KS_OK, or an
 * engine error or corrupt record (c->err set), after which fn is not
 * called for that key or any later one. */
typedef void (*ks_fields_at_fn)(void *arg, size_t i, ks_status st, const ks_field *f, size_t n);
ks_status ks_hash_fields_many(ks_ctx *c, size_t n, const char *const *keys, const size_t *klens,
                              ks_fields_at_fn fn, void *arg);
/* One HSCAN step (cursor semantics as ks_scan). */
ks_status ks_hscan(ks_ctx *c, const char *key, size_t klen, uint64_t cursor, const char *pat,
                   size_t plen, uint64_t count, ks_field_fn fn, void *arg, uint64_t *next);

/* ---- Sets (ks_set.c, ks_set_ops.c) ------------------------------------ */
/* Members are m[i].f/fl. Functions handing members over call fn(arg, f, n)
 * once with every member (f[i].f/fl, valid only during the call) after
 * any writes are in the batch; KS_NOTFOUND (no call) when the key is absent. */
/* SADD: *added = members that were new (duplicates in m count once). */
ks_status ks_sadd(ks_ctx *c, const char *key, size_t klen, const ks_field *m, size_t n,
                  uint64_t *added);
/* SREM: *removed = members removed; deletes the key when it empties. */
ks_status ks_srem(ks_ctx *c, const char *key, size_t klen, const ks_field *m, size_t n,
                  uint64_t *removed);
ks_status ks_scard(ks_ctx *c, const char *key, size_t klen, uint64_t *n);
/* SISMEMBER / SMISMEMBER: out[i] = 1 when m[i] is a member (all 0 and
 * KS_NOTFOUND when the key is absent). */
ks_status ks_sismember(ks_ctx *c, const char *key, size_t klen, const ks_field *m, size_t n,
                       int *out);
ks_status ks_smembers(ks_ctx *c, const char *key, size_t klen, ks_fields_fn fn, void *arg);
/* SPOP: removes min(count, SCARD) distinct random members (count >= 1)
 * and hands them over; deletes the key when it empties. */
ks_status ks_spop(ks_ctx *c, const char *key, size_t klen, uint64_t count, ks_fields_fn fn,
                  void *arg);
/* SRANDMEMBER: count members; uniq: distinct ones (at most SCARD), else
 * count draws with repetition (Redis's four cases, t_set.c). */
ks_status ks_srandmember(ks_ctx *c, const char *key, size_t klen, uint64_t count, int uniq,
                         ks_fields_fn fn, void *arg);
/* SMOVE: *moved = 1 when member was in src (and is now in dst). src absent:
 * KS_OK, 0, whatever dst holds (as Redis). */
ks_status ks_smove(ks_ctx *c, const char *src, size_t sl, const char *dst, size_t dl,
                   const char *member, size_t ml, int *moved);
/* SINTER, SUNION, SDIFF over keys[i].f (absent keys are empty sets; a key
 * of another type fails the whole command with KS_ERR_WRONGTYPE):
 * - dst NULL, fn set: hands the result over (SINTER/SUNION/SDIFF/SMEMBERS);
 * - dst set: stores it at dst, replacing any value and dropping its TTL,
 *   or deletes dst when the result is empty (the STORE forms);
 * - both NULL (KS_SINTER only): counts, stopping at limit when > 0
 *   (SINTERCARD). *card is the result's size. */
enum { KS_SINTER = 0, KS_SUNION = 1, KS_SDIFF = 2 };
ks_status ks_setop(ks_ctx *c, int op, const ks_field *keys, size_t n, const char *dst, size_t dl,
                   uint64_t limit, ks_fields_fn fn, void *arg, uint64_t *card);
/* One SSCAN step (cursor semantics as ks_scan): *next is set before fn
 * gets the members of this step. KS_NOTFOUND when absent. */
ks_status ks_sscan(ks_ctx *c, const char *key, size_t klen, uint64_t cursor, const char *pat,
                   size_t plen, uint64_t count, ks_fields_fn fn, void *arg, uint64_t *next);

/* ---- Sorted sets (ks_zset*.c) -------------------------------------------
 * A member with its score is a ks_zmember. Functions handing members over
 * call fn(arg, z, n) once with every member, in the order the command
 * replies them, after any writes are in the batch (pointers valid only
 * during the call); KS_NOTFOUND (no call) when the key is absent. Scores
 * handed in are never NaN (the callers parse them). */
typedef struct ks_zmember {
    const char *m;
    size_t ml;
    double score;
} ks_zmember;
typedef void (*ks_zmembers_fn)(void *arg, const ks_zmember *z, size_t n);

enum { KS_ZADD_NX = 1, KS_ZADD_XX = 2, KS_ZADD_GT = 4, KS_ZADD_LT = 8, KS_ZADD_INCR = 16 };
typedef struct ks_zadd_result {
    uint64_t added, updated, processed; /* processed: not skipped by NX/XX/GT/LT */
    double score;                       /* INCR: the member's new score */
} ks_zadd_result;
/* ZADD, ZINCRBY (KS_ZADD_INCR, n == 1), GEOADD: z[0..n) in argument
 * order (a repeated member applies in turn). An INCR whose result is NaN
 * fails with KS_ERR_MSG "ERR resulting score is not a number (NaN)". */
ks_status ks_zadd(ks_ctx *c, const char *key, size_t klen, const ks_zmember *z, size_t n, int flags,
                  ks_zadd_result *r);
/* ZREM: m[i].f/fl; deletes the key when it empties. */
ks_status ks_zrem(ks_ctx *c, const char *key, size_t klen, const ks_field *m, size_t n,
                  uint64_t *removed);
ks_status ks_zcard(ks_ctx *c, const char *key, size_t klen, uint64_t *n);
/* ZSCORE / ZMSCORE: found[i] = 1 and scores[i] for each member m[i] that
 * is there (all 0 and KS_NOTFOUND when the key is absent). */
ks_status ks_zscore(ks_ctx *c, const char *key, size_t klen, const ks_field *m, size_t n,
                    double *scores, int *found);
/* ZRANK / ZREVRANK: *found = 0 when member is not there. */
ks_status ks_zrank(ks_ctx *c, const char *key, size_t klen, const char *m, size_t ml, int rev,
                   uint64_t *rank, int *found);

/* A range of a sorted set, as ZRANGE's three kinds take it. */
enum { KS_ZBY_RANK = 0, KS_ZBY_SCORE = 1, KS_ZBY_LEX = 2 };
typedef struct ks_zlex {
    const char *p; /* the string after '[' or '(' */
    size_t n;
    int ex;  /* '(' */
    int inf; /* -1 for "-", +1 for "+", else 0 */
} ks_zlex;
typedef struct ks_zspec {
    int by, rev;
    long long start, end;    /* RANK: Redis's indexes (negative from the end) */
    double min, max;         /* SCORE: never NaN */
    int minex, maxex;        /* SCORE: '(' */
    ks_zlex lmin, lmax;      /* LEX */
    long long offset, limit; /* SCORE, LEX: LIMIT (limit < 0: no limit) */
} ks_zspec;
/* ZRANGE (every form), ZRANGEBYSCORE, ZRANGEBYLEX, their REV forms and
 * GEOSEARCH's box reads: the members in r, in reply order. Lex ranges
 * compare members only (Redis requires equal scores; see ENCODING.md for
 * mixed scores). */
ks_status ks_zrange(ks_ctx *c, const char *key, size_t klen, const ks_zspec *r, ks_zmembers_fn fn,
                    void *arg);
/* ZCOUNT (SCORE) / ZLEXCOUNT (LEX): the members in r (no LIMIT). */
ks_status ks_zcount(ks_ctx *c, const char *key, size_t klen, const ks_zspec *r, uint64_t *n);
/* ZREMRANGEBYRANK / BYSCORE / BYLEX (no LIMIT); deletes the key when it
 * empties. */
ks_status ks_zremrange(ks_ctx *c, const char *key, size_t klen, const ks_zspec *r,
                       uint64_t *removed);
/* ZRANGESTORE: stores src's range r at dst (replacing any value and TTL;
 * deleting dst when the range is empty). src absent: an empty range. */
ks_status ks_zrangestore(ks_ctx *c, const char *dst, size_t dl, const char *src, size_t sl,
                         const ks_zspec *r, uint64_t *stored);
/* Stores z[0..n) (distinct members, any order) at dst as a command's
 * destination (GEOSEARCHSTORE): replaces any value and TTL, deletes dst
 * when n == 0. */
ks_status ks_zstore(ks_ctx *c, const char *dst, size_t dl, const ks_zmember *z, size_t n);

/* ZPOPMIN/ZPOPMAX (max), ZMPOP, BZPOP*, BZMPOP: pops min(count, ZCARD)
 * members (count >= 1) from the first of keys[0..nkeys) that holds a zset
 * and hands them over with that key; a key of another type met first is
 * KS_ERR_WRONGTYPE; KS_NOTFOUND when no key holds one. Deletes the key
 * when it empties. */
typedef void (*ks_zpop_fn)(void *arg, const char *key, size_t klen, const ks_zmember *z, size_t n);
ks_status ks_zpop(ks_ctx *c, const ks_field *keys, size_t nkeys, int max, uint64_t count,
                  ks_zpop_fn fn, void *arg);
/* ZRANDMEMBER with a count: uniq: min(count, ZCARD) distinct members
 * (Redis's four cases), else count uniform draws with repetition. */
ks_status ks_zrandmember(ks_ctx *c, const char *key, size_t klen, uint64_t count, int uniq,
                         ks_zmembers_fn fn, void *arg);

/* ZUNION, ZINTER, ZDIFF over keys[0..n) (zsets, or sets as members of
 * score 1; absent keys are empty; another type fails the whole command
 * with KS_ERR_WRONGTYPE) with weights (NULL: all 1; not for DIFF) and an
 * aggregate, as Redis computes them (NaN sums are 0):
 * - dst NULL, fn set: hands the result over in (score, member) order;
 * - dst set: stores it at dst (ks_zstore's rules) -- the STORE forms;
 * - both NULL (KS_ZINTER): counts, stopping at limit when > 0 (ZINTERCARD).
 * *card is the result's size. */
enum { KS_ZUNION = 0, KS_ZINTER = 1, KS_ZDIFF = 2 };
enum { KS_ZAGG_SUM = 0, KS_ZAGG_MIN = 1, KS_ZAGG_MAX = 2 };
ks_status ks_zsetop(ks_ctx *c, int op, const ks_field *keys, const double *weights, size_t n,
                    int agg, const char *dst, size_t dl, uint64_t limit, ks_zmembers_fn fn,
                    void *arg, uint64_t *card);
/* One ZSCAN step (cursor semantics as ks_scan): *next and *listpack
 * (the zset is of Redis's listpack encoding, which decides how its
 * scores print) are set before fn gets the members of this step; a
 * listpack comes back whole. KS_NOTFOUND when absent. */
ks_status ks_zscan(ks_ctx *c, const char *key, size_t klen, uint64_t cursor, const char *pat,
                   size_t plen, uint64_t count, ks_zmembers_fn fn, void *arg, int *listpack,
                   uint64_t *next);
/* Checks KS-S1 for the string at key (ENCODING.md): 0 when it holds (or
 * the key is absent or packed), else -1 with *why set to a static
 * description. A debugging aid: walks every chunk. */
int ks_str_check(ks_ctx *c, const char *key, size_t klen, const char **why);
/* Checks the big-zset invariants KS-Z1..KS-Z3 of key (ENCODING.md): 0 when
 * they hold (or the key is absent or packed), else -1 with *why set to a
 * static description. A debugging aid: walks every entry. */
int ks_zset_check(ks_ctx *c, const char *key, size_t klen, const char **why);
/* Iterator positionings and steps over collection members since the
 * keyspace opened (ks_miter_*): the cost measure the big-value tests
 * assert on. */
uint64_t ks_member_steps(const keyspace *ks);

/* ---- Lists (ks_list.c, ks_list_big.c) ---------------------------------
 * Items are f/fl of ks_field (v unused); where is KS_LIST_HEAD (Redis's
 * LEFT) or KS_LIST_TAIL (RIGHT); indexes are Redis's (0 the head, -1 the
 * tail). Functions handing items over (but LRANGE) call fn(arg, items, n) once, after
 * any writes are in the batch, with pointers valid only during the call;
 * KS_NOTFOUND (no call) when the key is absent. A list never holds zero
 * items: the write that empties it deletes the key. Costs per encoding
 * are in ENCODING.md ("Lists"). */
enum { KS_LIST_HEAD = 0, KS_LIST_TAIL = 1 };
/* LPUSH/RPUSH (xx 0) and LPUSHX/RPUSHX (xx 1: KS_NOTFOUND and nothing
 * written when the key is absent): pushes items[0..n) one after the other
 * at where; *len = the new length. */
ks_status ks_lpush(ks_ctx *c, const char *key, size_t klen, int where, int xx,
                   const ks_field *items, size_t n, uint64_t *len);
/* LPOP/RPOP/LMPOP: removes min(count, LLEN) items (count >= 1) from where
 * and hands them over in the order they were removed. */
ks_status ks_lpop(ks_ctx *c, const char *key, size_t klen, int where, uint64_t count,
                  ks_fields_fn fn, void *arg);
/* LLEN: *n = 0 and KS_NOTFOUND when absent. */
ks_status ks_llen(ks_ctx *c, const char *key, size_t klen, uint64_t *n);
/* LINDEX: *out as ks_get's; KS_NOTFOUND also when index is out of range. */
ks_status ks_lindex(ks_ctx *c, const char *key, size_t klen, long long index, ks_val *out);
/* LSET: KS_NOTFOUND when absent, KS_ERR_MSG "ERR index out of range". */
ks_status ks_lset(ks_ctx *c, const char *key, size_t klen, long long index, const char *v,
                  size_t vl);
/* LRANGE: the items start..end (inclusive, clamped as Redis does): calls
 * count_fn(arg, n) once, then fn(arg, items, k) for consecutive pieces of
 * them (about a chunk of a big list each) until n were handed over; a big
 * list is not read whole first, so an engine error may come after some
 * pieces (the caller takes its reply back). */
ks_status ks_lrange(ks_ctx *c, const char *key, size_t klen, long long start, long long end,
                    ks_count_fn count_fn, ks_fields_fn fn, void *arg);
/* LTRIM: keeps the items start..end, deleting the key when none is left. */
ks_status ks_ltrim(ks_ctx *c, const char *key, size_t klen, long long start, long long end);
/* LINSERT: inserts v before (after 0) or after the first item equal to
 * pivot; *len = the new length, or -1 (nothing written) when pivot is not
 * there. */
ks_status ks_linsert(ks_ctx *c, const char *key, size_t klen, int after, const char *pivot,
                     size_t pl, const char *v, size_t vl, long long *len);
/* LREM: removes the first |count| items equal to v, from the head (count
 * > 0) or the tail (count < 0), or all of them (0); *removed = how many. */
ks_status ks_lrem(ks_ctx *c, const char *key, size_t klen, long long count, const char *v,
                  size_t vl, uint64_t *removed);
/* LPOS: the indexes of the items equal to v, from the rank-th match (rank
 * != 0; negative: searching from the tail), at most count of them (0:
 * all), looking at no more than maxlen items (0: all). *idx (n of them)
 * is malloc'd: the caller frees it. */
ks_status ks_lpos(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl, long long rank,
                  uint64_t count, uint64_t maxlen, uint64_t **idx, size_t *n);
/* LMOVE/RPOPLPUSH: pops one item of src at from and pushes it onto dst at
 * to (src and dst may be the same key: the item moves to the other end);
 * *out = the item (ks_val_free). KS_NOTFOUND when src is absent (dst is
 * not looked at, as Redis); KS_ERR_WRONGTYPE when src or dst is not a
 * list, before anything moves. */
ks_status ks_lmove(ks_ctx *c, const char *src, size_t sl, const char *dst, size_t dl, int from,
                   int to, ks_val *out);

/* ---- SORT (ks_sort.c) ------------------------------------------------ */
typedef struct ks_sort_opts {
    int desc, alpha;
    const char *by; /* BY pattern (NULL: the elements themselves); no '*': no sorting */
    size_t bylen;
    long long limit_start, limit_count; /* LIMIT (0, -1: everything) */
    const ks_field *gets;               /* GET patterns (.f/.fl; "#" the element) */
    size_t ngets;
    const char *store; /* STORE destination, or NULL to hand the result over */
    size_t storelen;
    int script; /* run by a script: a set is sorted even under a constant BY */
} ks_sort_opts;
/* SORT / SORT_RO of the list, set or sorted set at key (absent: empty),
 * Redis 7.0's semantics (ks_sort.c). Without store, calls fn(arg, out, n)
 * once with the rows (one value per GET, or the element): out[i].f/fl,
 * out[i].vl = 1 when present, 0 for a nil. With store, replaces store's
 * value (and TTL) by the rows as a list (nils as ""), or deletes it when
 * there are none; *stored = their number. KS_ERR_MSG "ERR One or more
 * scores can't be converted into double"; KS_ERR_WRONGTYPE for a key of
 * another type (BY/GET keys of another type read as missing). */
ks_status ks_sort(ks_ctx *c, const char *key, size_t klen, const ks_sort_opts *o, ks_fields_fn fn,
                  void *arg, uint64_t *stored);

/* ---- DUMP and RESTORE (ks_rdb_value.c; format: ENCODING.md, "DUMP
 * payloads") ------------------------------------------------------------- */
/* DUMP: *out = Redis's RDB serialization of key's value (type, body,
 * RDB version 10, CRC-64), loadable by redis-server 7.0's RESTORE;
 * out->base is malloc'd (ks_val_free). KS_NOTFOUND when absent. */
ks_status ks_dump(ks_ctx *c, const char *key, size_t klen, ks_val *out);
/* RESTORE: stores the value in payload[0..n) at key with absolute expire
 * expire_ms (0: none; one not after ctx->now_ms stores nothing). replace:
 * any old value is deleted first; without it the caller has checked that
 * key is absent (BUSYKEY comes before the payload is looked at, as Redis).
 * KS_ERR_MSG "ERR DUMP payload version or checksum are wrong" or "ERR Bad
 * data format" (nothing is written before the payload is decoded whole;
 * a duplicate found while writing leaves writes for the caller's rollback,
 * S1). Any bytes are safe. */
ks_status ks_restore(ks_ctx *c, const char *key, size_t klen, const char *payload, size_t n,
                     int replace, int64_t expire_ms);

/* ---- Server-wide records (ks_sysrec.c) ----------------------------
 * State of the server itself, outside
 * every database, under engine keys 'S' kind name (ENCODING.md). kind is
 * one byte picked by the record's owner ('F': function libraries); name is
 * any bytes. Reads see ctx->batch; writes go into ctx->batch (REQUIRES: an
 * indexed batch), so they commit or roll back with the command (S1).
 * FLUSHDB/FLUSHALL do not touch them. Command thread only. */
#define KS_SYSREC_NAMESPACE 'S'
/* KS_OK with *out owned by the caller (ks_val_free), or KS_NOTFOUND. */
ks_status ks_sysrec_get(ks_ctx *c, char kind, const char *name, size_t nl, ks_val *out);
ks_status ks_sysrec_put(ks_ctx *c, char kind, const char *name, size_t nl, const char *v,
                        size_t vl);
ks_status ks_sysrec_delete(ks_ctx *c, char kind, const char *name, size_t nl);
ks_status ks_sysrec_delete_kind(ks_ctx *c, char kind); /* every record of kind */
/* Calls fn for each record of kind in name order (pointers valid during the
 * call); non-zero from fn stops the walk. */
typedef int (*ks_sysrec_fn)(void *arg, const char *name, size_t nl, const char *v, size_t vl);
ks_status ks_sysrec_iterate(ks_ctx *c, char kind, ks_sysrec_fn fn, void *arg);

#endif
