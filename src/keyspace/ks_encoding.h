/*
 * ks_encoding.h -- internal to src/keyspace: the engine key and value
 * layouts of ENCODING.md, the keyspace struct and the low-level helpers
 * every ks_*.c file shares. Nothing outside src/keyspace includes this file
 * (tests do, to look at the stored bytes). Value types are written against
 * ks_type.h, which builds on this.
 *
 * Engine keys (ENCODING.md has the exact grammar):
 *   'm' db key                          -> metadata: flags [expire] body
 *   'd' db be64(version) suffix         -> a member of a big collection
 *   'e' db be64(expire_ms) key          -> "" or le64 version, u8 type (big)
 *   'c' db                              -> le64 keys, le64 expires
 *   'v'                                 -> le64 next version
 *   'f' db u32be(klen) key be64(ver) f  -> legacy big-hash field (ks_open
 *                                          moves these to 'd')
 *
 * Invariants (cited as KS-E1 ... in the code; ENCODING.md states them in
 * full):
 *   KS-E1 an expire entry 'e' db T key exists exactly when the metadata of
 *         key in db carries expire T -- except when compaction dropped the
 *         metadata of an expired key, which the active cycle repairs
 *         (it then also fixes the counters and drops the orphan members).
 *   KS-E2 a new big value always gets a version never used before.
 *   KS-E3 the counter 'c' db equals the number of metadata keys of db and
 *         of those that carry an expire, up to KS-E1's pending repairs.
 *   KS-E4 member keys of (db, version) exist only while a live record of db
 *         carries the version (or as KS-E1 orphans).
 *   KS-E5 a big record's count is the number of its members.
 *   KS-E6 member keys and values never name their Redis key or db.
 *   KS-E7 between ks_count_hold_cmd and ks_count_flush the
 *         counters in the batch are behind by the held sums, which belong
 *         to writes already in that batch; the batch goes to the engine
 *         only after ks_count_flush put them in, and counter reads
 *         (DBSIZE) add them.
 */
#ifndef STRATA_KS_ENCODING_H
#define STRATA_KS_ENCODING_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"

#define KS_NS_META 'm'
#define KS_NS_MEMBER 'd'
#define KS_NS_EXPIRE 'e'
#define KS_NS_COUNT 'c'
#define KS_NS_VERSION 'v'
#define KS_NS_LEGACY_FIELD 'f'

/* The metadata flags byte. */
#define KS_F_TYPE_MASK 0x0f /* ks_type */
#define KS_F_BIG 0x10       /* members stored as separate keys under a version */
#define KS_F_ENC 0x20       /* type-defined, sticky: the encoding Redis would report */
#define KS_F_RESERVED 0x40
#define KS_F_EXPIRE 0x80 /* a le64 expire (unix ms) follows */

/* Largest packed body of any type (ENCODING.md, "Packing limits"). */
#define KS_PACKED_MAX_BYTES 8192
/* version:le64 count:le64 at the start of every big body. */
#define KS_BIG_HDR 16

#define KS_MAX_STRING (512ll * 1024 * 1024) /* proto-max-bulk-len */
/* Room for the flags byte and the expire. A body built in the scratch
 * buffer starts at scratch + KS_HDR_MAX so the record's header can go in
 * front of it without a copy or a realloc (p2 must then be empty). */
#define KS_HDR_MAX 9
/* A scratch buffer above this size is freed after the command. */
#define KS_SCRATCH_KEEP (1u << 20)
#define KS_CURSOR_SLOTS 16384

typedef struct ks_cursor {
    uint64_t id; /* 0: free */
    char *pos;   /* engine key last returned; resume after it */
    size_t plen;
} ks_cursor;

/* SPOP's drawn members not popped yet (ks_set_ops.c, ENCODING.md "Random
 * members"): the members of big set (db, version) that one draw read, kept
 * while the set's record is exactly as the last pop from them left it. */
#define KS_SPOP_KEEP_MAX 64
#define KS_SPOP_KEEP_BYTES 4096
typedef struct ks_spop_keep {
    uint64_t version, count, removed; /* the record they belong to */
    int db;
    unsigned n; /* members kept, 0: none */
    uint32_t off[KS_SPOP_KEEP_MAX], len[KS_SPOP_KEEP_MAX];
    char buf[KS_SPOP_KEEP_BYTES];
} ks_spop_keep;

/* ZPOPMIN's next members of one big zset (ks_zset_front.c, ENCODING.md
 * "Front cache", KS-Z6): read by one iterator run, popped by the next
 * pops without a seek while the zset's record is exactly as the last pop
 * from them left it. version 0: none. */
#define KS_ZFRONT_MAX 128
#define KS_ZFRONT_BYTES 8192
#define KS_ZFRONT_FLOOR 64 /* KS_ZFLOOR_MAX */
typedef struct ks_zfront {
    uint64_t version, count, removed; /* the record they belong to */
    int db;
    char floor[KS_ZFRONT_FLOOR];
    size_t floorl;
    unsigned pos, n;  /* members [pos, n) are the zset's first ones, in order */
    uint64_t crossed; /* deleted order entries the read passed before member n - 1 */
    uint32_t off[KS_ZFRONT_MAX], len[KS_ZFRONT_MAX];
    double score[KS_ZFRONT_MAX];
    char buf[KS_ZFRONT_BYTES];
} ks_zfront;

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
    int no_lazy_expire; /* reads leave expired keys in place (CLIENT PAUSE) */
    int quiet_touch;    /* > 0: ks_touch does nothing (a read's lazy expiry) */
    int in_hook;        /* > 0: the hash hook runs; its reads expire nothing (a write of
                           the key it reads is under way) */
    ks_limits limits;
    uint64_t next_version; /* KS-E2 */
    uint64_t next_cursor;
    ks_cursor cursors[KS_CURSOR_SLOTS];
    char *scratch; /* value being built; reused to avoid a malloc per write */
    size_t scratch_cap;
    uint64_t rng;
    /* Counter deltas held back by ks_count_defer (KS-E3): dkeys/dexp per db,
     * bit i of dmask set when db i has a delta. */
    int cdefer; /* nesting depth of ks_count_defer */
    uint32_t dmask;
    int64_t dkeys[KS_DATABASES], dexp[KS_DATABASES];
    /* Sums of settled commands held back by ks_count_hold_cmd (KS-E7) for
     * hbatch: their writes are in hbatch, their counter write is not yet. */
    eng_batch *hbatch;
    uint32_t hmask;
    int64_t hkeys[KS_DATABASES], hexp[KS_DATABASES];
    /* The batch that holds a counter write (put or delete) and its op count
     * just after the first one: while the batch has at least that many ops
     * the write may still be there, and counter reads go through the batch;
     * otherwise it holds none (a rollback or clear took them all) and a read
     * skips the batch and its index. */
    eng_batch *cbatch;
    size_t cmark;
    /* ks_emget's answers (reused from call to call) and its encoded keys. */
    eng_mget *mget;
    char *mkeys;
    size_t mkeys_cap;
    const char **mkp;
    size_t *mkl, mk_cap;
    /* Engine reads made: point gets (ks_eget) and member iterator seeks
     * (ks_miter_*), so tests can count what a command costs. */
    uint64_t stat_gets, stat_seeks, stat_steps; /* steps: ks_miter_next/prev */
    uint64_t stat_eng_steps; /* engine iterator steps of member walks (eng_iter_steps) */
    /* RANDOMKEY's rejection bound per db (ks_random.c) and the db size it
     * was learnt at. */
    double random_fmax[KS_DATABASES];
    uint64_t random_fmax_n[KS_DATABASES];
    ks_spop_keep spop;
    /* The big zset without rank blocks whose rank read walked far (KS-Z5):
     * its next view or write builds them. Version 0: none. */
    int zrank_want_db;
    uint64_t zrank_want_version;
    ks_zfront zfront;
};

/* ---- Byte helpers ------------------------------------------------------ */

static inline void ks_put_be64(char *p, uint64_t v)
{
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
}
static inline uint64_t ks_get_be64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
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
static inline size_t ks_varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 128)
        v >>= 7, n++;
    return n;
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
#define KS_META_KEY_LEN(klen) (2 + (klen)) /* what ks_ekey_meta writes */
/* The common prefix of every member of (db, version); append a suffix with
 * ks_ekey_append. */
void ks_ekey_members(ks_ekey *k, int db, uint64_t version);
void ks_ekey_append(ks_ekey *k, const char *p, size_t n);
void ks_ekey_expire(ks_ekey *k, int db, int64_t when, const char *key, size_t klen);
static inline void ks_ekey_free(ks_ekey *k)
{
    if (k->p && k->p != k->sbuf) free(k->p);
    k->p = NULL;
}

/* ---- Metadata ---------------------------------------------------------- */

typedef struct ks_meta {
    char *raw; /* engine buffer (eng_free), NULL when absent */
    size_t rawlen;
    int type;   /* ks_type of the live key; KS_NONE when absent or expired */
    int stored; /* the type stored even if expired; KS_NONE when absent */
    int big;
    int enc;             /* KS_F_ENC */
    int64_t expire;      /* 0: none */
    const char *payload; /* the body */
    size_t plen;
    uint64_t version, count; /* big */
    const char *ext;         /* big: the type's bytes after count */
    size_t extlen;
} ks_meta;

/* Reads key's metadata through c->batch (and snap). Expired keys come back
 * with type KS_NONE and stored set. KS_OK or KS_ERR_ENGINE (corrupt). */
ks_status ks_meta_read_raw(ks_ctx *c, const eng_snapshot *snap, int db, const char *key,
                           size_t klen, ks_meta *m);
/* As ks_meta_read_raw, with lazy expiry: reading the live data (no snap,
 * a batch), an expired key is removed into c->batch through the write
 * path (hook, counters, KS-E1, the expired event; no WATCH touch) and
 * comes back absent -- unless ks_set_lazy_expire turned that off, when it
 * comes back as from _raw. */
ks_status ks_meta_read(ks_ctx *c, const eng_snapshot *snap, int db, const char *key, size_t klen,
                       ks_meta *m);
void ks_meta_free(ks_meta *m);
/* Parses a borrowed metadata value (m->raw is not owned: do not free m).
 * Returns 0, or -1 when corrupt. */
int ks_meta_view(ks_meta *m, const char *v, size_t vl, int64_t now_ms);
ks_status ks_corrupt(ks_ctx *c, const char *what);

/* The batch reads must layer over: c->batch, or NULL when it is empty (an
 * empty batch shadows nothing, and skipping it saves a merge layer). */
static inline eng_batch *ks_read_batch(const ks_ctx *c)
{
    return c->batch && eng_batch_count(c->batch) ? c->batch : NULL;
}
/* eng_get through c->batch when there is one. */
eng_status ks_eget(ks_ctx *c, const eng_snapshot *snap, const char *k, size_t kl, char **v,
                   size_t *vl);
/* ks_eget for n metadata records (of keys[0..n) in db) at once, through
 * c->batch (eng_multi_get: one view, the misses overlapped, no copies).
 * The answers stay readable with ks_emget_value until the next ks_emget.
 * ENG_OK or ENG_NOMEM. */
eng_status ks_emget_meta(ks_ctx *c, const eng_snapshot *snap, int db, size_t n,
                         const char *const *keys, const size_t *klens);
eng_status ks_emget_value(ks_ctx *c, size_t i, const char **v, size_t *vl);
/* Ends the use of the answers: drops the view and blocks they pinned
 * (eng_mget_release). Every ks_emget_meta is followed by one. */
void ks_emget_done(ks_ctx *c);
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
 * (the caller failed and the server rolls the batch back, S1). Defers nest:
 * only the outermost settle writes or drops (an inner one is part of the
 * outer's command). Counter reads (ks_dbsize) add the sums held back.
 * Lock: the command thread (the keyspace is not shared). */
void ks_count_defer(keyspace *ks);
ks_status ks_count_settle(ks_ctx *c, int apply);
uint64_t ks_new_version(ks_ctx *c);
char *ks_scratch(keyspace *ks, size_t n);
void ks_touch(ks_ctx *c, int db, const char *key, size_t klen);
/* Calls the event hook (ks_set_event_hook), if any. */
void ks_event_raise(ks_ctx *c, ks_event ev, int db, const char *key, size_t klen);
ks_status ks_engine_err(ks_ctx *c, eng_status s, const char *what);
ks_status ks_oom(ks_ctx *c);
ks_status ks_err_msg(ks_ctx *c, const char *msg); /* KS_ERR_MSG with msg */
uint64_t ks_rand(keyspace *ks);

/* ---- Field and member arrays ------------------------------------------- */

/* A field array with room for small values on the stack. Sets and lists use
 * .f/.fl only. */
typedef struct ks_fvec {
    ks_field *v;
    size_t n, cap;
    ks_field sbuf[32];
    char **owned; /* chunks holding copies the pairs point into */
    size_t nowned, capowned;
    char *chunk_at;    /* the newest chunk's first free byte ... */
    size_t chunk_left; /* ... and how many follow it */
    size_t chunk_next; /* the next chunk's size (0: the first's) */
} ks_fvec;
void ks_fvec_init(ks_fvec *fv);
int ks_fvec_push(ks_fvec *fv, const char *f, size_t fl, const char *v, size_t vl);
/* Pushes a copy of the pair, kept in fv's chunks (freed with fv): no
 * allocation per field. Returns 0, or -1 on out-of-memory. */
int ks_fvec_push_copy(ks_fvec *fv, const char *f, size_t fl, const char *v, size_t vl);
/* fv takes p (malloc'd, or an engine buffer: eng_free is free), freed with
 * fv, so pairs may point into it without a copy. 0, or -1 (p not taken). */
int ks_fvec_adopt(ks_fvec *fv, char *p);
void ks_fvec_free(ks_fvec *fv);

/* ---- Hashes (ks_hash.c) ------------------------------------------------ */

/* Parses a packed hash body into fv (pointers into the body). */
int ks_packed_parse(const char *p, size_t n, ks_fvec *fv);
/* Loads the full content of the hash described by m (in db) into fv. */
ks_status ks_hash_load(ks_ctx *c, const eng_snapshot *snap, int db, const ks_meta *m, ks_fvec *fv);

#endif
