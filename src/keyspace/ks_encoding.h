/*
 * ks_encoding.h -- internal to src/keyspace: the engine key and value
 * layouts of ENCODING.md, the keyspace struct and the helpers every ks_*.c
 * file shares. Nothing outside src/keyspace includes this file.
 *
 * Engine keys (ENCODING.md has the exact grammar):
 *   'm' db key                          -> metadata: flags [expire] payload
 *   'f' db u32be(klen) key be64(ver) f  -> value of field f of a big hash
 *   'e' db be64(expire_ms) key          -> "" or fixed64 version (big hash)
 *   'c' db                              -> fixed64 keys, fixed64 expires
 *   'v'                                 -> fixed64 next big-hash version
 *
 * Invariants (cited as KS-E1 ... in the code):
 *   KS-E1 an expire entry 'e' db T key exists exactly when the metadata of
 *         key in db carries expire T -- except when compaction dropped the
 *         metadata of an expired key, which the active cycle repairs
 *         (it then also fixes the counters and drops the orphan fields).
 *   KS-E2 field keys exist only under the version stored in a big hash's
 *         metadata (or orphaned as in KS-E1); a new big hash always gets a
 *         version never used before, so stale fields are never visible.
 *   KS-E3 the counter 'c' db equals the number of metadata keys of db and
 *         of those that carry an expire, up to KS-E1's pending repairs.
 */
#ifndef STRATA_KS_ENCODING_H
#define STRATA_KS_ENCODING_H

#include <stdint.h>
#include <string.h>

#include "keyspace/keyspace.h"

#define KS_NS_META 'm'
#define KS_NS_FIELD 'f'
#define KS_NS_EXPIRE 'e'
#define KS_NS_COUNT 'c'
#define KS_NS_VERSION 'v'

/* The metadata flags byte. */
#define KS_F_TYPE_MASK 0x0f /* ks_type */
#define KS_F_BIG 0x10       /* hash stored as per-field keys */
#define KS_F_EXPIRE 0x80    /* a fixed64 expire (unix ms) follows */

/* A packed hash turns big past either limit. */
#define KS_HASH_PACKED_MAX_FIELDS 128
#define KS_HASH_PACKED_MAX_BYTES 8192

#define KS_MAX_STRING (512ll * 1024 * 1024) /* proto-max-bulk-len */
/* Room for the flags byte and the expire. A payload built in the scratch
 * buffer starts at scratch + KS_HDR_MAX so ks_meta_write can put the header
 * in front of it without a copy or a realloc (p2 must then be empty). */
#define KS_HDR_MAX 9
/* A scratch buffer above this size is freed after the command. */
#define KS_SCRATCH_KEEP (1u << 20)
#define KS_CURSOR_SLOTS 16384

typedef struct ks_cursor {
    uint64_t id; /* 0: free */
    char *pos;   /* engine key last returned; resume after it */
    size_t plen;
} ks_cursor;

struct keyspace {
    eng_db *db;
    ks_hash_hook_fn hook;
    ks_hash_wants_fn wants;
    void *hctx;
    ks_flush_hook_fn flush_hook;
    void *fctx;
    ks_touch_fn touch;
    void *tctx;
    ks_event_fn event; /* keyspace notifications: expired, new */
    void *ectx;
    int no_lazy_expire;    /* reads leave expired keys in place (CLIENT PAUSE) */
    uint64_t next_version; /* KS-E2 */
    uint64_t next_cursor;
    ks_cursor cursors[KS_CURSOR_SLOTS];
    char *scratch; /* value being built; reused to avoid a malloc per write */
    size_t scratch_cap;
    uint64_t rng;
    /* Counter deltas held back by ks_count_defer (KS-E3): dkeys/dexp per db,
     * bit i of dmask set when db i has a delta. */
    int cdefer;
    uint32_t dmask;
    int64_t dkeys[KS_DATABASES], dexp[KS_DATABASES];
};

/* ---- Byte helpers ------------------------------------------------------ */

static inline void ks_put_be64(char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (char)(v & 0xff);
}
static inline uint64_t ks_get_be64(const char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | (unsigned char)p[i];
    return v;
}
static inline void ks_put_le64(char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static inline uint64_t ks_get_le64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline char *ks_put_varint(char *p, uint64_t v)
{
    while (v >= 128) {
        *p++ = (char)(v | 128);
        v >>= 7;
    }
    *p++ = (char)v;
    return p;
}
/* NULL when truncated or too long (corrupt). */
static inline const char *ks_get_varint(const char *p, const char *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned s = 0; s <= 63 && p < end; s += 7) {
        uint64_t b = (unsigned char)*p++;
        r |= (b & 127) << s;
        if (!(b & 128)) {
            *v = r;
            return p;
        }
    }
    return NULL;
}

/* ---- Engine keys ------------------------------------------------------- */

/* An engine key being built: small ones live in sbuf. */
typedef struct ks_ekey {
    char *p;
    size_t n, cap;
    char sbuf[160];
} ks_ekey;
void ks_ekey_meta(ks_ekey *k, int db, const char *key, size_t klen);
/* The common prefix of every field of (key, version); append a field with
 * ks_ekey_append. */
void ks_ekey_fields(ks_ekey *k, int db, const char *key, size_t klen, uint64_t version);
void ks_ekey_append(ks_ekey *k, const char *p, size_t n);
void ks_ekey_expire(ks_ekey *k, int db, int64_t when, const char *key, size_t klen);
void ks_ekey_free(ks_ekey *k);

/* ---- Metadata ---------------------------------------------------------- */

typedef struct ks_meta {
    char *raw; /* engine buffer (eng_free), NULL when absent */
    size_t rawlen;
    int type;   /* ks_type of the live key; KS_NONE when absent or expired */
    int stored; /* the type stored even if expired; KS_NONE when absent */
    int big;
    int64_t expire; /* 0: none */
    const char *payload;
    size_t plen;
    uint64_t version, count; /* big hash */
} ks_meta;

/* Reads key's metadata through c->batch (and snap). Expired keys come back
 * with type KS_NONE and stored set. KS_OK or KS_ERR_ENGINE. */
ks_status ks_meta_read_raw(ks_ctx *c, const eng_snapshot *snap, int db, const char *key,
                           size_t klen, ks_meta *m);
/* As ks_meta_read_raw, with lazy expiry: reading the live data (no snap,
 * a batch), an expired key is removed into c->batch (hook, counters,
 * KS-E1, the expired event; no touch) and comes back absent -- unless
 * ks_set_lazy_expire turned that off, when it comes back as from _raw. */
ks_status ks_meta_read(ks_ctx *c, const eng_snapshot *snap, int db, const char *key, size_t klen,
                       ks_meta *m);
/* As ks_meta_read, for a write: an expired key is deleted first (hook,
 * counters, KS-E1) and comes back absent. */
ks_status ks_meta_read_w(ks_ctx *c, int db, const char *key, size_t klen, ks_meta *m);
void ks_meta_free(ks_meta *m);
/* Parses a borrowed metadata value (m->raw is not owned: do not free m).
 * Returns 0, or -1 when corrupt. */
int ks_meta_view(ks_meta *m, const char *v, size_t vl, int64_t now_ms);

/* Writes key's new metadata, replacing old (absent: type KS_NONE, stored
 * KS_NONE): fixes the expire index, the counters, drops the old big hash's
 * fields when new_version differs, and touches the key. The payload is
 * p1 then p2. The caller has already called the hash hook. */
ks_status ks_meta_write(ks_ctx *c, int db, const char *key, size_t klen, const ks_meta *old,
                        int type, int big, int64_t expire, const char *p1, size_t n1,
                        const char *p2, size_t n2);
/* Deletes key (old must be present or stored): hook first when old is a
 * hash and call_hook, then metadata, expire entry, fields, counters, touch. */
ks_status ks_meta_remove(ks_ctx *c, int db, const char *key, size_t klen, const ks_meta *old,
                         int call_hook);

/* The batch reads must layer over: c->batch, or NULL when it is empty (an
 * empty batch shadows nothing, and skipping it saves a merge layer). */
static inline eng_batch *ks_read_batch(const ks_ctx *c)
{
    return c->batch && eng_batch_count(c->batch) ? c->batch : NULL;
}
/* eng_get through c->batch when there is one. */
eng_status ks_eget(ks_ctx *c, const eng_snapshot *snap, const char *k, size_t kl, char **v,
                   size_t *vl);
/* Cursor table: save returns the new cursor id (0 on out-of-memory); find
 * returns NULL for an unknown or evicted id. */
uint64_t ks_cursor_save(keyspace *ks, const char *pos, size_t n);
const ks_cursor *ks_cursor_find(keyspace *ks, uint64_t id);

/* Adds deltas to db's counters in c->batch (KS-E3): one get and one put,
 * or, between ks_count_defer and ks_count_settle, only a sum in memory. */
ks_status ks_count_add(ks_ctx *c, int db, int64_t dkeys, int64_t dexpires);
/* Multi-key writes (MSET, the active expire cycle) hold their counter
 * deltas back and write each touched db's counter once at the end: one get
 * and one put per command instead of one per key created or deleted.
 * ks_count_settle(c, 1) writes the sums into c->batch; (c, 0) drops them
 * (the caller failed and the server rolls the batch back, S1). Both end the
 * deferral. REQUIRES: no nesting, and nothing reads the counters (DBSIZE)
 * in between -- they are behind by the held-back sums. */
void ks_count_defer(keyspace *ks);
ks_status ks_count_settle(ks_ctx *c, int apply);
uint64_t ks_new_version(ks_ctx *c);
char *ks_scratch(keyspace *ks, size_t n);
void ks_touch(ks_ctx *c, int db, const char *key, size_t klen);
/* Calls the event hook (ks_set_event_hook), if any. */
void ks_event_raise(ks_ctx *c, ks_event ev, int db, const char *key, size_t klen);
ks_status ks_engine_err(ks_ctx *c, eng_status s, const char *what);
ks_status ks_oom(ks_ctx *c);

/* ---- Hashes (ks_hash.c) ------------------------------------------------ */

/* A field array with room for small hashes on the stack. */
typedef struct ks_fvec {
    ks_field *v;
    size_t n, cap;
    ks_field sbuf[32];
    char **owned; /* chunks holding copies the pairs point into (big hashes) */
    size_t nowned, capowned;
    size_t chunk_left; /* free bytes at the end of the newest chunk */
} ks_fvec;
void ks_fvec_init(ks_fvec *fv);
int ks_fvec_push(ks_fvec *fv, const char *f, size_t fl, const char *v, size_t vl);
/* Pushes a copy of the pair, kept in fv's chunks (freed with fv): no
 * allocation per field. Returns 0, or -1 on out-of-memory. */
int ks_fvec_push_copy(ks_fvec *fv, const char *f, size_t fl, const char *v, size_t vl);
void ks_fvec_free(ks_fvec *fv);

/* Parses a packed hash payload into fv (pointers into payload). */
int ks_packed_parse(const char *p, size_t n, ks_fvec *fv);
/* Loads the full content of the hash described by m into fv. */
ks_status ks_hash_load(ks_ctx *c, const eng_snapshot *snap, int db, const char *key, size_t klen,
                       const ks_meta *m, ks_fvec *fv);
/* Calls the hash hook if one is set and wants the key. */
int ks_hook_wanted(ks_ctx *c, int db, const char *key, size_t klen);
ks_status ks_hook_call(ks_ctx *c, int db, const char *key, size_t klen, const ks_field *of,
                       size_t on, int had, const ks_field *nf, size_t nn, int has, int64_t expire);
/* Writes fields as a complete new hash (packed or big) replacing old. */
ks_status ks_hash_store(ks_ctx *c, int db, const char *key, size_t klen, const ks_meta *old,
                        const ks_field *f, size_t n, int64_t expire);

/* ---- Misc -------------------------------------------------------------- */

#endif
