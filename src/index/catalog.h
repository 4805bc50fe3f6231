/*
 * catalog.h -- the index layer's private view of its index definitions:
 * the in-memory catalog shared by catalog.c, maintain.c, build.c and
 * query.c. The stored form is in src/index/FORMAT.md.
 *
 * Threading: the server's command thread only, except idx_entry_filter.
 *
 * Invariants:
 *   C1. The in-memory catalog equals the stored one as of the pending batch:
 *       every change to a definition is put into the same batch as the
 *       entries it implies (IDX.CREATE, a build step, IDX.DROP).
 *   C2. An index id is never reused ('x' 'N' only grows), so entries left by
 *       a dropped index can never be mistaken for another index's.
 *   C3. A ready index has exactly one entry per covered live hash of its db;
 *       a building one has exactly one per covered hash with key <= cursor
 *       (has_cursor == 0: none), which is what the write hook maintains.
 *   C4. Startup never fails on a catalog record: one that does not decode
 *       or breaks a limit of idx_def_check is left as stored and listed in
 *       idx_g.quarantined (not maintained, not queryable, shown by INFO
 *       index and the startup log) until IDX.DROP removes it. Its id, when
 *       readable, stays reserved (C2).
 *   C5. Two IDX definitions in idx_g.defs have the same prefix_class if and
 *       only if their prefixes are the same bytes; an FT definition's class
 *       is its own. The catalog recomputes the classes whenever idx_g.defs
 *       changes (add, remove, load), so the write hook compares a key with
 *       each distinct prefix once by comparing classes.
 */
#ifndef STRATA_IDX_CATALOG_H
#define STRATA_IDX_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "index/idx_key.h"
#include "keyspace/keyspace.h"

#define IDX_MAX_FIELDS 16
/* Limits of a definition, checked by IDX.CREATE and by the loader alike
 * (idx_def_check), so a definition IDX.CREATE accepts always loads. */
#define IDX_MAX_NAME 256        /* index name: 1..256 bytes, no NUL byte */
#define IDX_MAX_PREFIX 1024     /* key prefix: 0..1024 bytes, any bytes */
#define IDX_MAX_FIELD_NAME 1024 /* schema field name: 1..1024 bytes, any bytes */

typedef struct idx_field {
    char *name;
    size_t len;
    int numeric; /* NUMERIC, else TAG */
    int desc;
    /* Where idx_find_field found the field last, tried first: the hashes
     * of one key family are mostly written with their fields in one order.
     * A hint only (any value is safe); command thread. */
    size_t hint;
} idx_field;

typedef struct idx_def {
    char *name;
    size_t nlen;
    int db;
    uint32_t id;
    char *prefix;
    size_t plen;
    int unique;
    /* Non-UNIQUE entry keys end in the implied-key suffix (idx_key.h),
     * catalog flag bit 1; indexes created before it end in the raw hash
     * key, and keep doing so. */
    int implied_key;
    /* Non-UNIQUE entries of a hash without a TTL have an empty value
     * (catalog flag bit 2, FORMAT.md "Entry values"); indexes created
     * before it store 8 zero bytes there, and keep doing so. */
    int bare_value;
    size_t nfields;
    idx_field fields[IDX_MAX_FIELDS];
    /* Build state (Invariant C3). */
    int building;
    int has_cursor;
    char *cursor; /* malloc'd, the last hash key the build covered */
    size_t clen;
    uint64_t scanned; /* hashes the build has visited */
    /* IDX.INFO's entry count is cached: gen moves on every change to the
     * index's entries (write hook, build step, flush), and the cache holds
     * while gen is unchanged and no counted entry has expired since. */
    uint64_t gen, counted_gen;
    uint64_t counted;
    int64_t counted_until; /* the earliest expiry among counted entries; 0 none */
    int counted_valid;
    struct ft_def *ft;   /* an FT index (ft_def.h); NULL for an IDX index */
    size_t prefix_class; /* Invariant C5; set by the catalog, command thread */
} idx_def;

/* A stored definition the loader could not use (Invariant C4). */
typedef struct idx_quarantined {
    int db;     /* the record's db byte (may be >= KS_DATABASES when damaged) */
    char *name; /* malloc'd, NUL-terminated copy of the stored name */
    size_t nlen;
    uint32_t id;  /* 0 when the id could not be read */
    char *reason; /* malloc'd */
} idx_quarantined;

/* The layer's globals, set by idx_init. */
typedef struct idx_globals {
    keyspace *ks;
    eng_db *eng;
    idx_def **defs; /* every index of every db, in creation order */
    size_t ndefs, cap;
    uint32_t dbs_with_index[KS_DATABASES]; /* indexes per db: a fast "wants" */
    char *last_build_error;                /* malloc'd; shown by INFO */
    idx_quarantined *quarantined;          /* records that did not load (C4) */
    size_t nquarantined;
} idx_globals;

extern idx_globals idx_g;

/* Loads every definition from the engine into idx_g. A record that does
 * not decode or breaks a limit is quarantined, not fatal (C4). Returns
 * KS_OK, or KS_ERR_ENGINE with *err set (malloc'd) when the engine fails. */
ks_status idx_catalog_load(char **err);

/* Decodes one stored catalog record (engine key and value, FORMAT.md) and
 * checks it with idx_def_check. Returns a new definition (the caller frees
 * it with idx_def_free), or NULL with the reason in why (cap bytes). Pure:
 * no globals, any thread. */
idx_def *idx_catalog_decode(const char *k, size_t kl, const char *v, size_t vl, char *why,
                            size_t cap);
/* The stored record of d: key and value, written into the (cleared)
 * buffers. idx_catalog_decode of the result gives d back. */
void idx_catalog_encode(const idx_def *d, idx_buf *key, idx_buf *val);
/* Checks d against the limits above (name, db, prefix, field count, field
 * names, duplicate fields). Returns 0, or -1 with a reason for a user
 * in why ("index name must ..."; no "ERR " prefix). */
int idx_def_check(const idx_def *d, char *why, size_t cap);
/* The quarantined record named name in db, or NULL. */
idx_quarantined *idx_quarantine_find(int db, const char *name, size_t nlen);
/* Deletes a quarantined record (and its entries when its id is known) in
 * ctx->batch and forgets it. */
void idx_quarantine_erase(ks_ctx *ctx, idx_quarantined *q);
void idx_catalog_clear(void);

/* Finds the index named name in db; NULL if none. */
idx_def *idx_catalog_find(int db, const char *name, size_t nlen);
/* Takes ownership of d. */
void idx_catalog_add(idx_def *d);
/* Removes d from the catalog (not from the engine) and frees it. */
void idx_catalog_remove(idx_def *d);
void idx_def_free(idx_def *d);

/* Puts d's stored definition into ctx->batch (creation, build progress). */
void idx_catalog_save(ks_ctx *ctx, const idx_def *d);
/* Deletes d's definition and its entries in ctx->batch. */
void idx_catalog_erase(ks_ctx *ctx, const idx_def *d);
/* Takes the next index id, through ctx's view (Invariant C2). */
ks_status idx_catalog_next_id(ks_ctx *ctx, uint32_t *id);

/* Does d cover key (prefix and build cursor; fields are checked later)? */
int idx_def_active_for(const idx_def *d, const char *key, size_t klen);
/* The build-cursor half of idx_def_active_for, for a key whose prefix is
 * known to match: 1 when d is ready or key <= its cursor (C3). */
int idx_def_cursor_covers(const idx_def *d, const char *key, size_t klen);
/* Does key start with d's prefix (any of an FT index's prefixes)? ft_def.c */
int idx_def_prefix_match(const idx_def *d, const char *key, size_t klen);

/* Builds the entry key of the hash (key, fields) into b (cleared first).
 * Returns 1 if the hash has every schema field (then b holds the key),
 * 0 if not, -1 if a NUMERIC field holds a non-number (*bad_field is set to
 * its index in d->fields). */
int idx_entry_key(const idx_def *d, const char *key, size_t klen, const ks_field *f, size_t n,
                  idx_buf *b, size_t *bad_field);
/* The NUMERIC values one hook call has parsed, keyed by the address of
 * their pair: the indexes of one key family share fields (the profile
 * indexes all end in user_id), and each is parsed once a call instead of
 * once an index. Valid only while the pairs it names neither move nor
 * change, so the caller sets n = 0 at the start of every call; it keeps
 * the first IDX_NUM_MEMO values and parses the rest every time. */
#define IDX_NUM_MEMO 8
typedef struct idx_num_memo {
    /* Set by a caller that passes only definitions whose prefix key has
     * (the hook: its prefix match); the implied-key suffix then compares
     * only the rest of key. */
    int key_has_prefix;
    size_t n;
    const ks_field *pair[IDX_NUM_MEMO];
    double x[IDX_NUM_MEMO];
    unsigned char canonical[IDX_NUM_MEMO]; /* idx_key_num_text_canonical */
} idx_num_memo;
/* idx_entry_key appending to b instead of clearing it first; on a return
 * other than 1, b is as it was. memo may be NULL (parse every value);
 * otherwise it is read and extended (owned by the caller). */
int idx_entry_key_append(const idx_def *d, const char *key, size_t klen, const ks_field *f,
                         size_t n, idx_buf *b, size_t *bad_field, idx_num_memo *memo);
/* The pair of f (n pairs) named as schema field want, or NULL. Updates
 * want->hint (command thread). idx_find_field_scan is its search of every
 * pair, after the inline hint check missed. */
const ks_field *idx_find_field_scan(const ks_field *f, size_t n, const idx_field *want);
static inline const ks_field *idx_find_field(const ks_field *f, size_t n, const idx_field *want)
{
    /* The hint first, inline: it names the pair of almost every call. The
     * first byte before memcmp: field names of a hash mostly differ there;
     * schema field names are never empty (idx_def_check). */
    size_t h = want->hint;
    if (h < n && f[h].fl == want->len && f[h].f[0] == want->name[0] &&
        memcmp(f[h].f, want->name, want->len) == 0)
        return &f[h];
    return idx_find_field_scan(f, n, want);
}
/* Builds the entry value (expiry, plus the hash key for UNIQUE) into b, in
 * d's format: empty for a non-UNIQUE entry of d->bare_value without an
 * expiry. */
void idx_entry_value(const idx_def *d, const char *key, size_t klen, int64_t expire_ms, idx_buf *b);
/* Extracts the hash key from a stored entry (key, value) of d. Returns 0 and
 * sets *hk / *hkl (pointing into ek or ev, or, for a key the tuple implies,
 * into a per-thread buffer valid until the next call), or -1 when
 * malformed. */
int idx_entry_hash_key(const idx_def *d, const char *ek, size_t ekl, const char *ev, size_t evl,
                       const char **hk, size_t *hkl);
/* idx_entry_hash_key for an entry key whose first off bytes the caller has
 * checked are the entry prefix and the encodings of the first nfixed fields
 * (nfixed < d->nfields), as every hit of one query shares them: decoding
 * starts after them instead of skipping them again per hit. Same returns
 * and ownership; command thread (the per-thread buffer). */
int idx_entry_hash_key_from(const idx_def *d, const char *ek, size_t ekl, const char *ev,
                            size_t evl, size_t off, size_t nfixed, const char **hk, size_t *hkl);
/* The expiry stored in an entry value (0 none: also an empty value, what a
 * bare-value index stores for a hash without a TTL); -1 when malformed. */
int64_t idx_entry_expire(const char *ev, size_t evl);

/* Has a hash with this expiry expired at now_ms? The keyspace's rule
 * (expire <= now), so index readers and hash readers always agree. */
int idx_expired(int64_t expire_ms, int64_t now_ms);

/* Who holds the UNIQUE entry ek, read through ctx's view: *held = 0 nobody
 * (absent, or its hash expired), 1 a live hash other than key, 2 key itself.
 * *val (the entry value, owner key after 8 bytes) is set when found; the
 * caller frees it with eng_free. Returns KS_OK or KS_ERR_MSG. */
ks_status idx_unique_holder(ks_ctx *ctx, const char *ek, size_t ekl, const char *key, size_t klen,
                            char **val, size_t *vlen, int *held);

/* maintain.c: the keyspace hooks and the compaction filter. */
int idx_wants(void *hctx, int db, const char *key, size_t klen);
ks_status idx_hash_hook(void *hctx, ks_ctx *ctx, const char *key, size_t klen,
                        const ks_field *old_f, size_t old_n, int had_old, const ks_field *new_f,
                        size_t new_n, int has_new, int64_t new_expire_ms);
ks_status idx_flush_hook(void *fctx, ks_ctx *ctx, int db);
int idx_entry_filter(const char *key, size_t klen, const char *val, size_t vlen, int64_t now_ms);
void idx_maintain_free(void);

/* build.c: runs build steps on d until done, failed, or budget_us spent.
 * Returns KS_OK (d->building tells whether it finished) or KS_ERR_MSG
 * (duplicate UNIQUE value, non-number; ctx->err says which key). */
ks_status idx_build_run(ks_ctx *ctx, idx_def *d, uint64_t budget_us);

/* Makes a printable, bounded copy of a key or name for an error message
 * (errors are one RESP line: no CR/LF). Returns a static buffer. */
const char *idx_printable(const char *p, size_t n, int which);

/* Sets ctx->err (malloc'd) from a format; returns KS_ERR_MSG. */
ks_status idx_fail(ks_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
