/*
 * ft_def.h -- the index layer's private view of FT (RediSearch dialect)
 * indexes: their schema, the entries a hash yields, text analysis, and the
 * query tree. Shared by ft_*.c; the server sees only index/ft.h.
 *
 * An FT index is an idx_def (catalog.h) whose ft member is set. It lives in
 * the same catalog, is maintained by the same write hook (maintain.c), built
 * by the same cursor build (build.c) and checked by IDX.CHECK (check.c);
 * only the set of entries a hash yields differs. Stored format:
 * src/index/FORMAT.md, "FT indexes".
 *
 * Invariants (besides C1-C3 of catalog.h, which hold for FT indexes too):
 *   F1. The entries of a covered hash are exactly ft_doc_entries(hash):
 *       one doc entry, one entry per indexed TAG value and NUMERIC field,
 *       one posting per distinct TEXT term (with its stem), or, when a
 *       NUMERIC field holds a non-number, one failure entry and nothing else.
 *   F2. Every entry value starts with the hash's expiry, so readers skip
 *       entries of expired hashes exactly as they skip IDX entries.
 *
 * Threading: the command thread only.
 */
#ifndef STRATA_FT_DEF_H
#define STRATA_FT_DEF_H

#include <stddef.h>
#include <stdint.h>

#include "index/catalog.h"
#include "index/ft.h"

/* Sub-structures of an FT index, the byte after 'x' 'E' <id>. */
#define FT_SUB_DOC 'D'      /* 'D' <key>                         -> expiry, maxfreq */
#define FT_SUB_FIELD 'F'    /* 'F' <field no> <value enc> <key>  -> expiry */
#define FT_SUB_TERM 'W'     /* 'W' <term enc> <key>               -> expiry, posting */
#define FT_SUB_FAILURE 'X'  /* 'X' <key>                          -> expiry */
#define FT_SUB_COMP 'C'     /* 'C' <value enc>... <key>           -> expiry */
#define FT_SUB_COMP_OUT 'Y' /* 'Y' <key>: a doc the composite cannot hold -> expiry */
#define FT_MAX_COMP 8       /* fields of the composite structure */
#define FT_COUNT_SLOTS 256  /* cached range totals per index */

#define FT_MAX_FIELDS 64 /* TEXT fields are bits of a u64 field mask */
#define FT_MIN_STEM_LEN 4
#define FT_MAX_EXPANSIONS 200 /* prefix terms expanded per query node */

typedef struct ft_field {
    char *name, *alias; /* hash field; attribute name in queries (alias == name without AS) */
    size_t nlen, alen;
    int type;      /* FT_TEXT, FT_TAG, FT_NUMERIC */
    unsigned opts; /* FT_OPT_* */
    char sep;      /* TAG separator */
    double weight; /* TEXT */
    int text_no;   /* bit of this TEXT field in field masks; -1 for others */
} ft_field;

typedef struct ft_def {
    size_t nprefixes;
    char **prefixes;
    size_t *plens;
    int custom_stop; /* STOPWORDS given (0 words: none) */
    size_t nstop;
    char **stop;
    size_t *stoplens;
    double score;   /* SCORE: the default document score */
    unsigned flags; /* FT_IDX_* */
    size_t nfields;
    ft_field fields[FT_MAX_FIELDS];
    size_t ntext;
    /* The composite: the indexed TAG and NUMERIC fields in schema order (at
     * most FT_MAX_COMP, used when there are two or more). A document with
     * exactly one value in each has one 'C' entry ordered by those values,
     * as an IDX index; any other document a 'Y' entry. While 'Y' is empty
     * the composite answers "TAG = v AND ... [AND NUMERIC range] [SORTBY the
     * next field]" as IDX.RANGE does (ft_search.c). */
    size_t ncomp;
    int comp[FT_MAX_COMP];
    /* "no 'Y' entry" was seen at idx_def.gen == outside_gen: it holds until
     * a write (expiry only removes entries). */
    int outside_none;
    uint64_t outside_gen;
    /* Totals of ranges FT.SEARCH counted (ft_range_count_*): direct-mapped
     * by a hash of the range; an entry holds while idx_def.gen is unchanged
     * and no counted entry has expired. */
    struct ft_count_slot {
        uint64_t gen, hash;
        int64_t until;
        long long count;
        int valid;
    } counts[FT_COUNT_SLOTS];
} ft_def;

void ft_def_free(ft_def *f);

/* The catalog record of an FT index (version byte 2, same key as IDX
 * records, so names are shared): parse and encode. */
#define FT_CATALOG_VERSION 2
idx_def *ft_catalog_parse(const char *k, size_t kl, const char *v, size_t vl);
/* The limits an FT definition meets (idx_def_check calls it after the name
 * and db checks): prefixes, fields, options, build state. Returns 0, or -1
 * with why. */
int ft_def_check(const idx_def *d, char *why, size_t cap);
void ft_catalog_value(const idx_def *d, idx_buf *b);

/* Does an FT prefix of d match key? */
int ft_prefix_match(const ft_def *f, const char *key, size_t klen);

/* Frees the layer's FT state (alias table, write-hook buffers, stemmer);
 * idx_shutdown calls it. */
void ft_shutdown(void);
void ft_aliases_free(void);
void ft_entries_free(void);
void ft_text_free(void);

/* Looks up an FT index of db by name or alias; NULL if none. */
idx_def *ft_find(int db, const char *name, size_t nlen);
/* Finds the schema field whose alias (or name) is name; -1 if none. */
int ft_field_by_alias(const ft_def *f, const char *name, size_t nlen);

/* ---- Text analysis (ft_text.c) ----------------------------------------- */

/* Calls fn for each token of s: lower-cased, escapes resolved, stop words
 * of f dropped; pos counts the tokens kept, from 1. Returns the count. */
typedef void (*ft_token_fn)(void *arg, const char *tok, size_t n, uint32_t pos);
uint32_t ft_tokenize(const ft_def *f, const char *s, size_t n, ft_token_fn fn, void *arg);
int ft_is_stopword(const ft_def *f, const char *tok, size_t n);
/* The Snowball English stem of tok into out (cleared first); 0 when the
 * stem equals tok or tok is shorter than FT_MIN_STEM_LEN, else 1. */
int ft_stem(const char *tok, size_t n, idx_buf *out);
/* ASCII lower case into out (appended). */
void ft_lower(const char *s, size_t n, idx_buf *out);
/* Splits a TAG value by sep, trims spaces, lower-cases unless
 * casesensitive; calls fn for each non-empty tag. */
void ft_split_tags(const ft_field *fd, const char *s, size_t n,
                   void (*fn)(void *arg, const char *t, size_t tn), void *arg);
/* Is c a token separator (RediSearch's default set plus whitespace)? */
int ft_is_sep(unsigned char c);

/* ---- Entries of a hash (ft_entries.c) ---------------------------------- */

/* One entry: key and value as offsets into an idx_buf. */
typedef struct ft_ent {
    size_t koff, klen, voff, vlen;
} ft_ent;

typedef struct ft_entset {
    ft_ent *e;
    size_t n, cap;
    idx_buf bytes;
} ft_entset;

/* Fills s (cleared first) with the entries of the hash (key, f[0..n)) for
 * d (Invariant F1), sorted by entry key. */
void ft_doc_entries(const idx_def *d, const char *key, size_t klen, const ks_field *f, size_t n,
                    int64_t expire_ms, ft_entset *s);
void ft_entset_free(ft_entset *s);

/* The write hook for every FT index of ctx->db covering key (called by
 * idx_hash_hook after the IDX indexes): puts and deletes the difference
 * between the old and the new entry set. FT indexes never reject a write. */
ks_status ft_hash_hook(ks_ctx *ctx, const char *key, size_t klen, const ks_field *old_f,
                       size_t old_n, int had_old, const ks_field *new_f, size_t new_n, int has_new,
                       int64_t new_expire_ms);
/* One hash of a build step: puts its entries. Returns 0, or 1 on a failed
 * read (ctx->err). */
int ft_build_one(ks_ctx *ctx, idx_def *d, const char *key, size_t klen, const ks_field *f,
                 size_t n);
/* IDX.CHECK for an FT index (see check.c); returns problems, -1 on error. */
long long ft_check(ks_ctx *ctx, const idx_def *d, const eng_snapshot *snap, eng_batch *b,
                   void (*fn)(void *arg, const char *line), void *arg);

/* Posting value: expiry u64, field mask u64, freq u32, doc maxfreq u32,
 * position count u32, positions u32 each ((text field no << 24) | pos). */
typedef struct ft_posting {
    uint64_t mask;
    uint32_t freq, maxfreq, npos;
    const char *pos; /* npos big-endian u32s */
} ft_posting;
int ft_posting_parse(const char *v, size_t vl, ft_posting *p);

/* ---- Query tree (ft_parse.c) -------------------------------------------- */

enum {
    QN_ALL,    /* '*' */
    QN_NONE,   /* matches nothing (only stop words, empty parens) */
    QN_AND,    /* kids */
    QN_OR,     /* kids */
    QN_NOT,    /* kids[0] */
    QN_OPT,    /* ~kids[0]: optional inside AND */
    QN_TERM,   /* str (lower-cased); expanded with stems unless verbatim */
    QN_PREFIX, /* str* */
    QN_PHRASE, /* kids: QN_TERMs in order */
    QN_TAG,    /* field, tags (values, each exact or prefix) */
    QN_NUM,    /* field, lo..hi */
};

typedef struct ft_tagval {
    char *v;
    size_t n;
    int prefix;
} ft_tagval;

typedef struct ft_qnode {
    int type;
    uint64_t mask; /* TEXT nodes: fields searched (all TEXT fields by default) */
    int field;     /* QN_TAG, QN_NUM: schema field */
    char *str;
    size_t slen;
    int verbatim;
    ft_tagval *tags;
    size_t ntags;
    double lo, hi;
    int lo_excl, hi_excl;
    struct ft_qnode **kids;
    size_t nkids;
} ft_qnode;

/* Parses query (dialect 1-3; see ft_parse.c for the grammar and what
 * differs) against d's schema, with PARAMS params[0..2*nparams) (name,
 * value pairs). Returns the tree (free with ft_qnode_free) or NULL with
 * *err (malloc'd) set to RediSearch's style of message. */
ft_qnode *ft_parse(const ft_def *d, const char *query, size_t qlen, const idx_str *params,
                   size_t nparams, int verbatim, char **err);
void ft_qnode_free(ft_qnode *n);
/* FT.EXPLAIN's text of a tree (malloc'd). */
char *ft_explain(const ft_def *d, const ft_qnode *n);

/* ---- Evaluation (ft_exec.c) ---------------------------------------------- */

/* A set of documents, sorted by key (bytewise), each with its raw TF-IDF
 * sum (before normalization by maxfreq). */
typedef struct ft_hit {
    size_t off; /* key in keys */
    uint32_t len;
    uint32_t maxfreq;
    double tf;
} ft_hit;

typedef struct ft_set {
    ft_hit *h;
    size_t n, cap;
    idx_buf keys;
} ft_set;

void ft_set_free(ft_set *s);
static inline const char *ft_set_key(const ft_set *s, size_t i)
{
    return s->keys.data + s->h[i].off;
}

/* The read view of one query. */
typedef struct ft_view {
    ks_ctx *ctx;
    const idx_def *d;
    const eng_snapshot *snap;
    eng_batch *b;
    uint64_t ndocs; /* live documents, for IDF */
} ft_view;

/* Opens a view of d (snapshot, pending batch on top) / releases it. */
ks_status ft_view_open(ks_ctx *ctx, const idx_def *d, ft_view *v);
void ft_view_close(ft_view *v);

/* Evaluates n into out. Returns KS_OK or KS_ERR_MSG. */
ks_status ft_eval(ft_view *v, const ft_qnode *n, ft_set *out);
/* Does the tree score by text (holds a text node outside a negation)? */
int ft_scored(const ft_qnode *n);

/* Walks the entries of sub-structure range [lo, hi) of d through v, calling
 * fn with the entry key and value of each live entry; fn returns non-zero
 * to stop. rev walks backwards. Returns KS_OK or KS_ERR_MSG. */
typedef int (*ft_walk_fn)(void *arg, const char *k, size_t kl, const char *val, size_t vl);
ks_status ft_walk(ft_view *v, const char *lo, size_t lol, const char *hi, size_t hil, int rev,
                  ft_walk_fn fn, void *arg);
/* The entry-key prefix 'x' 'E' <id> <sub> into b (cleared first). */
void ft_sub_prefix(const idx_def *d, char sub, idx_buf *b);

/* The cached number of live entries in [lo, hi) of v's index, for totals:
 * returns 1 and sets *n on a hit. put records one counted through v (not
 * when v reads a pending batch); until is the earliest expiry among the
 * counted entries, 0 for none. */
int ft_range_count_get(const ft_view *v, const char *lo, size_t lol, const char *hi, size_t hil,
                       long long *n);
void ft_range_count_put(const ft_view *v, const char *lo, size_t lol, const char *hi, size_t hil,
                        long long n, int64_t until);
/* Lowers *until to exp when exp is an earlier expiry (0: none). */
static inline void ft_min_expiry(int64_t *until, int64_t exp)
{
    if (exp > 0 && (*until == 0 || exp < *until)) *until = exp;
}

/* Counts the live documents of d through v (cached by d->gen). */
ks_status ft_count_docs(ft_view *v, uint64_t *n);

#endif
