/*
 * index.h -- secondary indexes over hash fields, kept exact in the write
 * path (IDX.* commands). Entry and catalog encoding: src/index/FORMAT.md.
 *
 * Threading: the server's command thread only.
 */
#ifndef STRATA_INDEX_H
#define STRATA_INDEX_H

#include <stdint.h>

#include "keyspace/keyspace.h"

/* Loads the index catalog from the engine and registers the keyspace hash
 * hook and index compaction filter. Called once at startup after ks_open.
 * Returns KS_OK or an error with a message in *err (malloc'd). */
ks_status idx_init(keyspace *ks, char **err);
void idx_shutdown(void);

/* Advances background index builds by one small step (a few milliseconds
 * of work) using ctx's batch, which the caller commits. Returns 1 while some
 * build still has work to do. Called from the event loop. */
int idx_build_step(ks_ctx *ctx);

/* ---- Definitions (IDX.CREATE, IDX.DROP, IDX.LIST, IDX.INFO) ------------ */

typedef struct idx_str {
    const char *p;
    size_t n;
} idx_str;

typedef struct idx_field_spec {
    idx_str name;
    int numeric; /* NUMERIC, else TAG */
    int desc;
} idx_field_spec;

typedef struct idx_spec {
    idx_str name, prefix;
    int unique;
    size_t nfields; /* 1..IDX_MAX_FIELDS (16) */
    const idx_field_spec *fields;
} idx_spec;

/* Creates the index in ctx->db (definition and entries go to ctx->batch)
 * and builds it over the existing hashes for up to a few milliseconds; a
 * larger build goes on in idx_build_step. Returns KS_OK, or KS_ERR_MSG with
 * ctx->err (name taken, duplicate field, UNIQUE violated by existing data,
 * non-number in a NUMERIC field); on error nothing is left in memory and the
 * caller must discard what the command wrote (server.h Invariant S1). */
ks_status idx_create(ks_ctx *ctx, const idx_spec *spec);

/* Drops the index of ctx->db: definition and every entry (ctx->batch), or a
 * quarantined record of that name. KS_NOTFOUND when there is neither. */
ks_status idx_drop(ks_ctx *ctx, const char *name, size_t nlen);

/* A stored definition that did not load at startup (it does not decode,
 * or breaks a limit of IDX.CREATE) is quarantined, not fatal: the data is
 * served, the index is neither maintained nor queryable, INFO index lists
 * it (indexes_quarantined, idx_quarantined_<i>), and IDX.DROP removes it.
 * The reason it was quarantined, or NULL when name is not quarantined in db
 * (valid until the next IDX.* write command). */
const char *idx_quarantined_reason(int db, const char *name, size_t nlen);
/* Calls fn for every quarantined record with its name made printable
 * (the server logs them at start). */
void idx_quarantine_each(void (*fn)(void *arg, int db, const char *name, const char *reason),
                         void *arg);

/* The number of schema fields of the index name in db; -1 when there is no
 * such index (IDX.RANGE's parser uses it to know where EQ values end). */
int idx_nfields(int db, const char *name, size_t nlen);

/* The names of ctx->db's indexes: calls fn for each, in creation order. */
void idx_list(int db, void (*fn)(void *arg, const char *name, size_t nlen), void *arg);

/* IDX.INFO: a description of one index. Borrowed pointers stay valid until
 * the next IDX.* write command. entries counts the live entries of a ready
 * index (0 while building): a walk of the whole index, O(entries), cached
 * until the index or the time of its first expiring entry changes. */
typedef struct idx_desc {
    idx_str name, prefix;
    int unique;
    size_t nfields;
    idx_field_spec fields[16];
    int building;
    uint64_t scanned; /* hashes visited by the build so far */
    double progress;  /* percent: scanned against the db's key count (an
                         estimate while building), 100 when ready */
    uint64_t entries;
} idx_desc;
ks_status idx_describe(ks_ctx *ctx, const char *name, size_t nlen, idx_desc *out);

/* ---- Queries (IDX.RANGE) ----------------------------------------------- */

enum { IDX_REPLY_KEYS = 0, IDX_REPLY_HASHES = 1, IDX_REPLY_FIELDS = 2 };

typedef struct idx_query {
    idx_str name;
    size_t neq;
    const idx_str *eq; /* values for the first neq fields */
    int has_min, has_max;
    idx_str min, max; /* raw bounds: "(x" exclusive; NUMERIC -inf/+inf; TAG [x (x - + */
    int rev;
    long long offset, count; /* count < 0: all */
    int reply;               /* IDX_REPLY_*: HASHES and FIELDS read the hashes */
} idx_query;

/* One result: the hash key and, for HASHES/FIELDS, its fields (NULL, 0 if
 * the hash could not be read). Owned by the idx_result. */
typedef struct idx_hit {
    char *key;
    size_t klen;
    ks_field *f;
    size_t nf;
} idx_hit;

typedef struct idx_result {
    idx_hit *hits;
    size_t n, cap;
    char *keys; /* the hits' keys, each NUL-terminated, back to back */
    size_t keys_len, keys_cap;
} idx_result;

/* Runs q against ctx->db's index through one snapshot (pending batch on
 * top): seeks once, steps once per entry, stops after offset+count live
 * entries, and reads each hit's hash through the same view. Returns KS_OK
 * (out filled; free it with idx_result_free), or KS_ERR_MSG (unknown or
 * building index, bad bounds) with ctx->err. */
ks_status idx_range(ks_ctx *ctx, const idx_query *q, idx_result *out);
void idx_result_free(idx_result *r);

/* IDX.CHECK: compares every ready index of ctx->db with the hashes through
 * one snapshot and calls fn with a line per problem ("missing <index>
 * <key>", "extra <index> <key>", "stale <index> <key>" for a wrong expiry).
 * Returns the number of problems, or -1 on an engine error (ctx->err). */
long long idx_check(ks_ctx *ctx, void (*fn)(void *arg, const char *line), void *arg);

/* Lines for INFO (a "# Index" section); written into buf, returns length. */
size_t idx_info(char *buf, size_t cap);

#endif
