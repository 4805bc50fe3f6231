/*
 * ks_type.h -- internal to src/keyspace: the type table and the helper
 * layer a value type is written with. A type is one file (ks_string.c,
 * ks_hash.c, ks_set.c, ks_list.c, ks_zset.c, ks_stream.c) that defines its
 * row (a ks_type_ops) and its commands' data work, plus one line in the
 * table (ks_type.c). The generic key commands (DEL, RENAME, COPY, TYPE,
 * OBJECT ENCODING, EXPIRE, SCAN TYPE, FLUSHDB, expiry, compaction) reach
 * every type through its row; the formats are in ENCODING.md.
 *
 * Writing a command of a type:
 *
 *   ks_write w;
 *   st = ks_write_begin(c, c->db, key, klen, KS_SET, &w); // WRONGTYPE, lazy expiry
 *   if (st != KS_OK) return st;                            // nothing to end
 *   ... read w.m (type KS_NONE when the key is absent), compute the change,
 *   ... add member puts/deletes (ks_member_put ...) under w.m.version or a
 *   ... new version (ks_new_version) ...
 *   st = ks_write_put(&w, &(ks_value){...});  // or ks_write_del(&w)
 *   ks_write_end(&w);
 *
 * ks_write_put/ks_write_del are the only writers of metadata records: they
 * keep the expire index (KS-E1), counters (KS-E3), versions (KS-E4), WATCH
 * and the index hook (KS1) right for every type. Reads use ks_key_read.
 *
 * Everything here runs on the command thread; inputs are borrowed for the
 * call; writes go only into c->batch (an indexed batch), so a failing
 * command is rolled back by the server (S1). Unless said otherwise,
 * functions return KS_OK, KS_NOTFOUND, KS_ERR_WRONGTYPE, KS_ERR_ENGINE or
 * KS_ERR_MSG (c->err set).
 */
#ifndef STRATA_KS_TYPE_H
#define STRATA_KS_TYPE_H

#include "keyspace/ks_encoding.h"

/* ---- The type table ------------------------------------------------------ */

/* A key's new record. body = p1 then p2 (p1 may point into the scratch
 * buffer at KS_HDR_MAX, p2 must then be empty). A big body is built with
 * ks_big_body. */
typedef struct ks_value {
    int type;
    int big, enc;
    int64_t expire; /* absolute ms, 0 none; a passed one deletes the key */
    const char *p1;
    size_t n1;
    const char *p2;
    size_t n2;
} ks_value;

typedef struct ks_type_ops {
    int type;         /* ks_type */
    const char *name; /* TYPE reply, SCAN TYPE argument */
    /* OBJECT ENCODING of a live key of this type at its size (Redis's name),
     * from its record; static string. */
    const char *(*encoding)(const ks_meta *m, const ks_limits *lim);
    /* The value's length (HLEN, SCARD, LLEN, ZCARD, XLEN; strings: STRLEN).
     * Big records carry it (KS-E5); packed bodies parse their count. 0 or
     * -1 when the body is corrupt. */
    int (*count)(const ks_meta *m, uint64_t *n);
    /* 0 when a record of this type is well formed (body / ext lengths);
     * called on every read of a record, so keep it O(1). */
    int (*check)(const ks_meta *m);
    /* COPY: fills *v (type, big, enc, body; the caller sets the expire)
     * with the record of a copy in db ddb of src's value m (in sdb), adding
     * any member writes to c->batch. buf (KS_BIG_BODY_MAX bytes) may hold
     * the new body. ks_copy_generic: packed bodies as they are, big ones
     * with their members copied under a new version (ext kept). */
    ks_status (*copy)(ks_ctx *c, int sdb, const ks_meta *m, int ddb, ks_value *v, char *buf);
    /* Drops what the record owns beyond itself (its members), when the
     * record is deleted or replaced by another version (KS-E4).
     * ks_drop_generic: big records range-delete their version. */
    void (*drop)(ks_ctx *c, int db, const ks_meta *m);
    /* KS-E1 repair: the record of a big value vanished in compaction; the
     * expire entry named its version. ks_repair_generic: range delete. */
    void (*repair)(ks_ctx *c, int db, uint64_t version);
    /* Compaction filter for the type's metadata records: 1 to drop. Runs on
     * an engine thread: pure function of the bytes. ks_filter_generic:
     * drop once the expire has passed (by the wall clock). */
    int (*filter)(const char *v, size_t vl, int64_t now_ms);
    /* The content the index hook (KS1) sees, as field/value pairs (copies
     * or pointers into m's buffer). NULL for types no index covers: only
     * hashes are indexed. */
    ks_status (*fields)(ks_ctx *c, const eng_snapshot *snap, int db, const ks_meta *m, ks_fvec *fv);
} ks_type_ops;

/* The row of a type; NULL for KS_NONE and for types strata does not have
 * (yet): their records read as corrupt. (Inline: every record read asks.) */
extern const ks_type_ops *const ks_type_rows[KS_TYPE_MAX];
static inline const ks_type_ops *ks_type_row(int type)
{
    return type > 0 && type < KS_TYPE_MAX ? ks_type_rows[type] : NULL;
}

/* The generic row operations, for rows to point at. */
ks_status ks_copy_generic(ks_ctx *c, int sdb, const ks_meta *m, int ddb, ks_value *v, char *buf);
void ks_drop_generic(ks_ctx *c, int db, const ks_meta *m);
void ks_repair_generic(ks_ctx *c, int db, uint64_t version);
int ks_filter_generic(const char *v, size_t vl, int64_t now_ms);
/* check for types whose big records have an empty ext (hash, set). */
int ks_check_no_ext(const ks_meta *m);

/* The rows (defined in their type's file). */
extern const ks_type_ops ks_string_type, ks_hash_type, ks_list_type, ks_set_type, ks_zset_type;
extern const ks_type_ops ks_stream_type;

/* ---- Reading a key --------------------------------------------------------- */

/* Reads key's live record in db for a read. expect KS_NONE accepts any
 * type. KS_OK fills *m (free with ks_meta_free); KS_NOTFOUND (absent or
 * expired) and KS_ERR_WRONGTYPE leave nothing to free. */
ks_status ks_key_read(ks_ctx *c, const eng_snapshot *snap, int db, const char *key, size_t klen,
                      int expect, ks_meta *m);

/* ---- The write path (ks_write.c) ----------------------------------------- */

/* One key being changed by a command. */
typedef struct ks_write {
    ks_ctx *c;
    int db;
    const char *key; /* borrowed: valid until ks_write_end */
    size_t klen;
    ks_meta m;   /* the key as found: live, or type KS_NONE */
    int hooked;  /* -1 not asked yet, else whether the index wants the key */
    int loaded;  /* old holds m's hash content */
    int moved;   /* m's members now belong to another key (RENAME) */
    size_t mark; /* batch ops when old was loaded */
    ks_fvec old;
    /* The new content of the next ks_write_put, when its caller has it as
     * pairs (ks_hash_store): the hook takes it instead of parsing back
     * what was just encoded. Borrowed; cleared by that put. */
    const ks_field *new_f;
    size_t new_n;
    int new_known;
} ks_write;

/* Reads key in db for a write. An expired key is deleted first (hook,
 * expire entry, members, counters) and comes back absent. expect KS_NONE
 * accepts any type; otherwise a live key of another type is
 * KS_ERR_WRONGTYPE. On KS_OK call ks_write_end; on any error there is
 * nothing to end. The index's old content (KS1) is loaded here, before the
 * caller changes members. */
ks_status ks_write_begin(ks_ctx *c, int db, const char *key, size_t klen, int expect, ks_write *w);
void ks_write_end(ks_write *w);
/* ks_write_begin with the key's record already read (raw, rawlen: as the
 * engine returned it through c->batch, copied here; raw NULL: absent), for
 * commands that read several keys at once (MSET). REQUIRES: no write to
 * the key since that read. */
ks_status ks_write_begin_read(ks_ctx *c, int db, const char *key, size_t klen, int expect,
                              const char *raw, size_t rawlen, ks_write *w);

/* Stores v as the key's record: the index hook first (for hashes, old and
 * new content), then the record, expire entry, counters, the old version's
 * drop when it is not v's, the WATCH touch. A record with the same bytes as
 * before is not rewritten (the hook and the touch still run). After it
 * w->m still describes the old record. */
ks_status ks_write_put(ks_write *w, const ks_value *v);
/* Deletes the key (REQUIRES: w->m present): hook, record, expire entry,
 * members (unless moved), counters, touch. */
ks_status ks_write_del(ks_write *w);
/* The body of a big record: version, count and the type's ext (extlen <=
 * KS_EXT_MAX; buf holds KS_BIG_BODY_MAX bytes). Fills v->p1/n1, p2/n2. */
#define KS_EXT_MAX 224
#define KS_BIG_BODY_MAX (KS_BIG_HDR + KS_EXT_MAX)
void ks_big_body(ks_value *v, char *buf, uint64_t version, uint64_t count, const char *ext,
                 size_t extlen);
/* The same record as m, with expire changed (EXPIRE, PERSIST). */
ks_status ks_write_retime(ks_write *w, int64_t expire);
/* Writes src's record at dst, then deletes src without dropping its
 * members (RENAME: KS-E6 makes it O(1)). */
ks_status ks_write_move(ks_write *src, ks_write *dst);

/* Calls the index hook for every indexed hash of c->db as deleted (FLUSHDB
 * when the index layer set no bulk flush hook). */
ks_status ks_hook_flush(ks_ctx *c);

/* ---- Members of a big value (ks_member.c) ---------------------------------
 * Member keys are 'd' db version suffix (ENCODING.md); suffix and value
 * are the type's. Gets read through c->batch; puts and deletes go into it.
 */
eng_status ks_member_get(ks_ctx *c, const eng_snapshot *snap, int db, uint64_t version,
                         const char *sfx, size_t sn, char **v, size_t *vl);
void ks_member_put(ks_ctx *c, int db, uint64_t version, const char *sfx, size_t sn, const char *v,
                   size_t vl);
void ks_member_del(ks_ctx *c, int db, uint64_t version, const char *sfx, size_t sn);
/* Deletes the members of (db, version) whose suffix is in [from, to); to
 * NULL: to the end of the version (LTRIM, ZREMRANGEBYSCORE ...). */
void ks_members_delete_range(ks_ctx *c, int db, uint64_t version, const char *from, size_t fn,
                             const char *to, size_t tn);
/* Deletes every member of (db, version): one range delete. */
void ks_members_drop(ks_ctx *c, int db, uint64_t version);

/* An ordered iterator over the members of one (db, version), through
 * c->batch (and snap). REQUIRES: c->batch does not change while it is open
 * (an engine rule): collect, close, then write. */
typedef struct ks_miter {
    eng_iter *it;
    ks_ekey pre;
    ks_ekey end;
    uint64_t *seeks; /* the keyspace's stat_seeks */
    uint64_t *steps; /* the keyspace's stat_steps (next, prev) */
} ks_miter;
void ks_miter_open(ks_miter *mi, ks_ctx *c, const eng_snapshot *snap, int db, uint64_t version);
void ks_miter_first(ks_miter *mi);
void ks_miter_last(ks_miter *mi);
void ks_miter_seek(ks_miter *mi, const char *sfx, size_t sn);      /* first >= sfx */
void ks_miter_seek_prev(ks_miter *mi, const char *sfx, size_t sn); /* last <= sfx */
int ks_miter_valid(const ks_miter *mi);
void ks_miter_next(ks_miter *mi);
void ks_miter_prev(ks_miter *mi);
const char *ks_miter_suffix(const ks_miter *mi, size_t *n);
const char *ks_miter_value(const ks_miter *mi, size_t *n);
/* Deleted members the forward moves have passed (eng_iter_deleted). */
uint64_t ks_miter_deleted(const ks_miter *mi);
/* Closes the iterator; KS_OK, or the engine error it met (c->err set). */
ks_status ks_miter_close(ks_miter *mi, ks_ctx *c);

/* SCAN-style cursors over members (HSCAN, SSCAN ...): seek positions mi
 * where cursor left off when cursor names a position in mi's version
 * (returns 1), else returns 0 and leaves mi unpositioned; save returns a
 * new cursor naming mi's current member (0 on out-of-memory). */
int ks_member_cursor_seek(ks_ctx *c, ks_miter *mi, uint64_t cursor);
uint64_t ks_member_cursor_save(ks_ctx *c, const ks_miter *mi);

/* Loads every (suffix, value) of (db, version) into fv, in order (copies). */
ks_status ks_members_load(ks_ctx *c, const eng_snapshot *snap, int db, uint64_t version,
                          ks_fvec *fv);
/* Writes entries (.f suffix, .v value) under a new version of db and
 * returns it (packed -> big conversion). */
uint64_t ks_members_write_new(ks_ctx *c, int db, const ks_field *entries, size_t n);

/* ---- Packed string sequences (strs, ENCODING.md) ---------------------------
 * count:varint { len:varint bytes }*count; items in .f/.fl. */
size_t ks_strs_size(const ks_field *items, size_t n);
char *ks_strs_write(char *p, const ks_field *items, size_t n); /* returns the end */
/* Appends the items to fv (pointers into p). 0, or -1 when corrupt. */
int ks_strs_parse(const char *p, size_t n, ks_fvec *fv);
/* The count at the front of a strs or packed-hash body. 0, or -1. */
int ks_packed_count(const char *p, size_t n, uint64_t *count);

/* ---- Hashes (ks_hash.c), shared with ks_hash_ops.c ----------------------- */

/* 1 when f[0..n) fits a packed hash (*size: its body length). */
int ks_hash_fits_packed(ks_ctx *c, const ks_field *f, size_t n, size_t *size);
/* Stores f[0..n) as w's complete new hash, packed or big (a new version),
 * or deletes the key when n == 0. enc: the ENC bit (hashtable). */
ks_status ks_hash_store(ks_write *w, const ks_field *f, size_t n, int64_t expire, int enc);

#endif
