/*
 * ft.h -- FT.* (the RediSearch dialect) over the index layer: definitions,
 * FT.SEARCH and FT.AGGREGATE. An FT index is kept exactly as an IDX index is
 * (in the command's batch, on disk, built in the background); what it
 * stores is in src/index/FORMAT.md, "FT indexes".
 *
 * Ownership: inputs are borrowed for the call; results are owned by the
 * caller and freed with the matching *_free. Errors: KS_ERR_MSG with
 * ctx->err holding RediSearch's error text.
 * Threading: the server's command thread only.
 */
#ifndef STRATA_FT_H
#define STRATA_FT_H

#include <stddef.h>
#include <stdint.h>

#include "index/idx_key.h"
#include "index/index.h"

enum { FT_TEXT = 0, FT_TAG = 1, FT_NUMERIC = 2 };

/* Field options (ft_field_spec.opts). */
enum {
    FT_OPT_SORTABLE = 1,
    FT_OPT_UNF = 2,
    FT_OPT_NOINDEX = 4,
    FT_OPT_NOSTEM = 8,
    FT_OPT_CASESENSITIVE = 16,
    FT_OPT_SUFFIXTRIE = 32, /* accepted; prefix queries do not need it */
};

/* Index options (ft_spec.flags). */
enum {
    FT_IDX_NOOFFSETS = 1, /* no positions: exact phrases are refused */
    FT_IDX_NOFREQS = 2,   /* every term frequency counts as 1 */
    FT_IDX_NOFIELDS = 4,  /* accepted; field masks are kept anyway */
    FT_IDX_NOHL = 8,
    FT_IDX_SKIPSCAN = 16, /* SKIPINITIALSCAN: existing hashes are not indexed */
};

typedef struct ft_field_spec {
    idx_str name, alias; /* alias.p NULL: none */
    int type;
    unsigned opts;
    char sep;      /* TAG: ',' by default */
    double weight; /* TEXT: 1 by default */
} ft_field_spec;

typedef struct ft_spec {
    idx_str name;
    size_t nprefixes; /* 0: every key */
    const idx_str *prefixes;
    int custom_stop;
    size_t nstop;
    const idx_str *stop;
    double score;
    unsigned flags;
    size_t nfields;
    const ft_field_spec *fields;
} ft_spec;

/* FT.CREATE in ctx->db; builds over existing hashes for up to 10 ms, the
 * rest in the background (idx_build_step). "Index already exists". */
ks_status ft_create(ks_ctx *ctx, const ft_spec *spec);
/* FT.ALTER ... SCHEMA ADD: adds fields and rebuilds the index from scratch
 * (entries deleted, build restarted) in ctx->batch. */
ks_status ft_alter_add(ks_ctx *ctx, idx_str name, const ft_field_spec *fields, size_t n);
/* FT.DROPINDEX; dd also deletes the indexed hashes. KS_NOTFOUND: no index. */
ks_status ft_drop(ks_ctx *ctx, idx_str name, int dd);
/* FT._LIST: the FT indexes of db. */
void ft_list(int db, void (*fn)(void *arg, const char *name, size_t nlen), void *arg);
/* FT.ALIASADD / ALIASUPDATE / ALIASDEL. */
ks_status ft_alias(ks_ctx *ctx, int op, idx_str alias, idx_str index);
enum { FT_ALIAS_ADD = 0, FT_ALIAS_UPDATE = 1, FT_ALIAS_DEL = 2 };

/* FT.INFO. Borrowed pointers stay valid until the next FT write command. */
typedef struct ft_info {
    idx_str name;
    size_t nprefixes;
    const char *const *prefixes;
    const size_t *plens;
    double score;
    unsigned flags;
    size_t nfields;
    ft_field_spec fields[64];
    int custom_stop;
    size_t nstop;
    const char *const *stop;
    int building;
    double percent; /* 0..1 */
    uint64_t num_docs, num_terms, num_records, failures, scanned;
} ft_info;
ks_status ft_describe(ks_ctx *ctx, idx_str name, ft_info *out);

/* FT.TAGVALS: calls fn for each distinct indexed value of a TAG field. */
ks_status ft_tagvals(ks_ctx *ctx, idx_str name, idx_str field,
                     void (*fn)(void *arg, const char *v, size_t n), void *arg);
/* FT.EXPLAIN: the plan as text (malloc'd into *out). */
ks_status ft_explain_query(ks_ctx *ctx, idx_str name, idx_str query, const idx_str *params,
                           size_t nparams, char **out);

/* ---- FT.SEARCH ---------------------------------------------------------- */

typedef struct ft_search_req {
    idx_str index, query;
    int nocontent, verbatim, withscores;
    int defer_content; /* without RETURN: leave the hashes to the caller (ft_doc.f NULL) */
    int has_return;    /* RETURN given: only ret[0..nret) (AS names in ret_as) */
    size_t nret;
    const idx_str *ret, *ret_as;
    int has_sortby, sort_desc;
    idx_str sortby;
    long long offset, num;
    size_t nparams; /* name/value pairs */
    const idx_str *params;
    int has_inkeys;
    size_t ninkeys;
    const idx_str *inkeys;
} ft_search_req;

typedef struct ft_doc {
    char *key;
    size_t klen;
    double score;
    ks_field *f; /* the fields to reply (names renamed by AS); NULL when none */
    size_t nf;
    int gone; /* the hash vanished between the index read and the hash read */
} ft_doc;

typedef struct ft_result {
    long long total;
    ft_doc *docs;
    size_t n;
    idx_buf bytes; /* renamed field names */
} ft_result;

ks_status ft_search(ks_ctx *ctx, const ft_search_req *req, ft_result *out);
void ft_result_free(ft_result *r);

/* ---- FT.AGGREGATE ------------------------------------------------------- */

/* A value of an aggregate row: a string, or a number. */
typedef struct ft_val {
    int num; /* 1: d, else s/n */
    double d;
    char *s;
    size_t n;
} ft_val;

typedef struct ft_row {
    size_t n;
    char **names;
    ft_val *vals;
} ft_row;

typedef struct ft_agg_result {
    long long total;
    ft_row *rows;
    size_t n;
} ft_agg_result;

/* argv[0..argc) are the arguments after the query (LOAD, GROUPBY, ...).
 * Parses and runs the pipeline. */
ks_status ft_aggregate(ks_ctx *ctx, idx_str index, idx_str query, const idx_str *argv, size_t argc,
                       ft_agg_result *out);
void ft_agg_result_free(ft_agg_result *r);

/* Formats a number as RediSearch replies it (%.17g trimmed, integers
 * without a fraction). Returns the length written into buf (cap >= 32). */
size_t ft_fmt_num(double d, char *buf, size_t cap);

#endif
