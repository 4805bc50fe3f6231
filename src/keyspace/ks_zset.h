/*
 * ks_zset.h -- internal to src/keyspace: what the sorted-set files share.
 *   ks_zset.c        storage (packed and big bodies), the zset row, views,
 *                    the write context
 *   ks_zset_entry.c  member vectors, entry suffixes, order-entry iteration
 *   ks_zset_cmd.c    the single-key commands (ZADD, ZREM, ZSCORE, ZCARD,
 *                    ZSCAN)
 *   ks_zset_rank.c   the counted rank blocks (KS-Z2, KS-Z3): rank(x), at(r)
 *                    and the invariant checker
 *   ks_zset_rank_upkeep.c  their upkeep (the rank log, apply) and the rebuild
 *   ks_zset_range.c  ranges by rank, score and lex; ZCOUNT, ZLEXCOUNT,
 *                    ZRANK, ZREMRANGEBY*, ZPOP*, ZRANDMEMBER
 *   ks_zset_ops.c    ZUNION, ZINTER, ZDIFF (and their STORE forms),
 *                    ZINTERCARD, whole-zset stores (ZRANGESTORE, GEO*STORE)
 *   ks_zset_front.c  ZPOPMIN's front cache (KS-Z6): the next members of one
 *                    big zset, popped without a seek
 * Format: ENCODING.md, "Sorted sets (type 5)".
 */
#ifndef STRATA_KS_ZSET_H
#define STRATA_KS_ZSET_H

#include "keyspace/ks_type.h"

/* Big-zset member suffixes: the first byte says which kind of entry. */
#define KS_ZTAG_MEMBER 0x00 /* 0x00 member -> score:be64 (IEEE bits) */
#define KS_ZTAG_ORDER 0x01  /* 0x01 skey:be64 member -> "" | "-" (-0) */
#define KS_ZTAG_RANK 0x02   /* 0x02 level:u8 start -> count:le64 children:le64 */
#define KS_ZTAG_LOG                                                                                \
    0x03 /* 0x03 seq:be64 -> d:i8 orderkey (the rank log); 0x03 alone: its                         \
            sentinel */

/* Rank blocks: fan-out B; a block splits above 2B children and is merged
 * into its predecessor below B/4 (ENCODING.md). */
#define KS_ZRANK_FANOUT 64
/* The fan-out in use: KS_ZRANK_FANOUT, changed only by tests (before any
 * big zset exists) to build deep block trees from few members. */
extern unsigned ks_zrank_b;
#define KS_ZRANK_MAX (2u * ks_zrank_b)
#define KS_ZRANK_MIN (ks_zrank_b / 4u)
#define KS_ZRANK_MAX_HEIGHT 16
/* Big ext: height:u8 removed:le64. A big zset is rewritten once more
 * members were removed (or moved by a new score) under its version, not
 * counting those whose tombstones lie below the floor, than
 * KS_ZSET_REWRITE_RATIO times those it has, plus KS_ZSET_REWRITE_SLACK,
 * or once all of them are more than KS_ZSET_REWRITE_BELOW_RATIO times
 * (ENCODING.md, "Tombstones"). */
#define KS_ZEXT_LEN 9
/* The height byte's flag: logfirst:le64 logend:le64 follow removed (the
 * pending rank log, ENCODING.md "Rank log"); records without it have none. */
#define KS_ZEXT_HASLOG 0x80
#define KS_ZEXT_LOGLEN (KS_ZEXT_LEN + 16)
/* The height byte's other flag: below:le64 follows (after the log when
 * both are there): the removals counted in removed whose tombstones are
 * below the floor (ENCODING.md "Tombstones"); records without it have 0. */
#define KS_ZEXT_HASBELOW 0x40
/* Rank changes a big zset keeps in its log before a write folds them into
 * the rank blocks (and that a rank read folds in on the fly). */
#define KS_ZLOG_MAX (8u * ks_zrank_b)
/* Big ext may go on with floor: a lower bound of every live order key
 * (ENCODING.md, "Floor"), at most this long (a prefix of a bound is one). */
#define KS_ZFLOOR_MAX 64
#define KS_ZSET_REWRITE_SLACK 1024
#define KS_ZSET_REWRITE_RATIO 3
#define KS_ZSET_REWRITE_BELOW_RATIO 16
extern uint64_t ks_zrewrite_slack; /* KS_ZSET_REWRITE_SLACK; tests change it */

/* ---- Scores ---------------------------------------------------------------- */

static inline uint64_t ks_zbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}
static inline double ks_zdouble(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}
/* The order-preserving key of a score (IDX NUMERIC's): -0 and +0 share it. */
static inline uint64_t ks_zskey(double d)
{
    uint64_t u = ks_zbits(d == 0 ? 0.0 : d);
    return (u >> 63) ? ~u : u ^ 0x8000000000000000ull;
}
static inline double ks_zskey_score(uint64_t k)
{
    return ks_zdouble((k >> 63) ? k ^ 0x8000000000000000ull : ~k);
}
/* A big zset's ext, parsed (ENCODING.md). */
typedef struct ks_zext {
    int height;
    uint64_t removed;
    uint64_t logfirst, logend; /* the rank log's pending entries: [logfirst, logend) */
    uint64_t below;            /* of removed, the tombstones below the floor (KS-Z7) */
    const char *floor;         /* every live order key is >= floor */
    size_t floorl;
} ks_zext;
/* Parses ext[0..n): 0, or -1 when malformed. */
int ks_zext_parse(const char *ext, size_t n, ks_zext *e);

/* Byte order of order keys (memcmp, the shorter first on a tie). */
static inline int ks_zkcmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int r = n ? memcmp(a, b, n) : 0;
    return r ? r : (al < bl ? -1 : al > bl);
}

/* Redis's order of (score, member): scores, then memcmp with the shorter
 * first. */
int ks_zcmp(const ks_zmember *a, const ks_zmember *b);

/* ---- Suffix buffers ---------------------------------------------------------- */

/* A byte string in a ks_ekey used as a growable buffer (sbuf first). */
static inline void ks_zbuf_init(ks_ekey *k)
{
    k->p = k->sbuf;
    k->cap = sizeof(k->sbuf);
    k->n = 0;
}
/* tag member / tag skey member / tag level start */
void ks_zsfx_member(ks_ekey *k, const char *m, size_t ml);
void ks_zsfx_order(ks_ekey *k, double score, const char *m, size_t ml);
void ks_zsfx_rank(ks_ekey *k, int level, const char *start, size_t sl);
/* The order key of (score, member): skey:be64 member (an order entry's
 * suffix without its tag; rank block starts are such keys). */
void ks_zorder_key(ks_ekey *k, double score, const char *m, size_t ml);

/* ---- Member vectors ---------------------------------------------------------- */

/* A growable array of members; copies of member bytes live in its chunks.
 * The first member is kept in one (a pop of one member mallocs nothing),
 * so a ks_zmvec must not be copied by value while it holds only that. */
typedef struct ks_zmvec {
    ks_zmember *v; /* &one, or malloc'd */
    size_t n, cap;
    ks_zmember one;
    char **chunks;
    size_t nchunks, capchunks;
    size_t size; /* bytes of the newest chunk of members */
    size_t left; /* free bytes at its end */
} ks_zmvec;

void ks_zmvec_init(ks_zmvec *v);
/* Appends (m, score); copy: keep a copy of the member bytes. 0 or -1. */
int ks_zmvec_push(ks_zmvec *v, const char *m, size_t ml, double score, int copy);
void ks_zmvec_free(ks_zmvec *v);
/* Moves src's members and chunks to dst (freed before), leaving src empty:
 * the copy by value ks_zmvec forbids. */
void ks_zmvec_move(ks_zmvec *dst, ks_zmvec *src);
/* Sorts into Redis's (score, member) order. */
void ks_zmvec_sort(ks_zmember *items, size_t n);

/* ---- Views ------------------------------------------------------------------- */

/* A sorted set read for a command. Packed: every member, parsed (pointers
 * into m.raw), in (score, member) order. Big: the header only. */
typedef struct ks_zview {
    ks_meta m; /* owned when own; type KS_NONE when the key is absent */
    ks_zmember *items;
    size_t n; /* packed members; big: the count */
    int height;
    const char *floor; /* big: every live order key is >= floor (in m.ext) */
    size_t floorl;
    uint64_t logfirst, logend; /* big: the pending rank log */
    int own;
} ks_zview;
/* Reads key of c->db as a zset: KS_OK, KS_NOTFOUND (nothing to close),
 * KS_ERR_WRONGTYPE or an engine/corruption error. */
ks_status ks_zview_open(ks_ctx *c, const char *key, size_t klen, ks_zview *v);
/* A view of a live zset record m (borrowed: must outlive the view). */
ks_status ks_zview_of(ks_ctx *c, const ks_meta *m, ks_zview *v);
void ks_zview_close(ks_zview *v);
/* The score of member: 1 found, 0 not, -1 error (c->err set). */
int ks_zview_score(ks_ctx *c, const ks_zview *v, const char *m, size_t ml, double *score);
/* Every member in (score, member) order, copied into out (and its chunks). */
ks_status ks_zview_all(ks_ctx *c, const ks_zview *v, ks_zmvec *out);
/* Parses a packed body into items (malloc'd array, *n members). 0 or -1. */
int ks_zpacked_parse(const char *p, size_t n, ks_zmember **items, size_t *count);

/* ---- Writing ----------------------------------------------------------------- */

/* A pending change of the rank blocks: an order key entering (+1) or
 * leaving (-1) the order, or (inside ks_zset_rank.c) a block start gained
 * or lost by a level. */
typedef struct ks_zdelta {
    const char *k; /* order key (a copy in the owner's chunks) */
    size_t kl;
    int64_t dcount, dchildren;
} ks_zdelta;
/* Appends {copy of k, d, d} to (*v)[0..*n) (capacity *cap), the copy in
 * keys. KS_OK, or ks_oom(c) with nothing appended. */
ks_status ks_zdelta_push(ks_ctx *c, ks_zdelta **v, size_t *n, size_t *cap, ks_fvec *keys,
                         const char *k, size_t kl, int64_t d);

/* A sorted set being changed by one command. Packed values are changed in
 * memory and written at ks_zw_close; a value that outgrows the packing
 * limits turns big on the spot (every member written under a new
 * version). Big values write member and order entries as they go and keep
 * the rank changes for the close (or rebuild the rank blocks there when
 * the changes are many: ks_zrank_apply). REQUIRES: member bytes handed in
 * stay valid until the close. */
typedef struct ks_zw {
    ks_write *w;
    ks_ctx *c;
    int big, enc, height;
    uint64_t version, count, removed;
    uint64_t below;            /* big: of removed, those below the floor (KS-Z7) */
    uint64_t removed0;         /* big: removed at the open */
    uint64_t logfirst, logend; /* big: the pending rank log */
    ks_zmember *items;         /* packed: the members, unordered while changing */
    size_t n, cap;
    ks_zdelta *d; /* big: pending rank changes */
    size_t nd, capd;
    int rebuild;   /* big: rebuild the rank blocks at the close */
    int rewritten; /* set by the close: written under a new version */
    int changed;   /* anything to write */
    size_t floorl;
    /* Not zeroed by ks_zw_open (1 KB, most of what a pop's open would cost):
     * keys is initialised, floor's bytes past floorl are never read. */
    ks_fvec keys;              /* big: the order keys of the pending deltas */
    char floor[KS_ZFLOOR_MAX]; /* big: the floor to store (ks_zview's) */
} ks_zw;
/* Opens w's key (a live zset or absent) for changes. */
ks_status ks_zw_open(ks_zw *z, ks_write *w);
/* Looks member up: 1 with *score, 0 absent, -1 error. */
int ks_zw_find(ks_zw *z, const char *m, size_t ml, double *score);
/* Sets member's score (found: it had old). */
ks_status ks_zw_set(ks_zw *z, const char *m, size_t ml, int found, double old, double score);
/* Removes a member that has score. */
ks_status ks_zw_remove(ks_zw *z, const char *m, size_t ml, double score);
/* Raises the floor to (score, m)'s order key, the last member the command
 * removed, and counts the command's removals into below (KS-Z7), with
 * crossed more: tombstones of earlier removals found between the old
 * floor and (score, m). REQUIRES: the command removed only members
 * ordering at or below it and no live member orders below it once its
 * removals are done (a pop from the front, a removal of a range that
 * starts at the first member). */
void ks_zw_raise_floor(ks_zw *z, double score, const char *m, size_t ml, uint64_t crossed);
/* Writes the result (the record, rank blocks; deletes the key when empty)
 * keeping w's TTL, and frees z. ks_zw_abort frees without writing. */
ks_status ks_zw_close(ks_zw *z);
void ks_zw_abort(ks_zw *z);

/* ZPOPMIN of count members (1 <= count < its count) from w's big zset
 * (v its view), through the front cache (KS-Z6): the members go to got
 * (pointing into the cache: valid until the cache is next filled, by a
 * later pop)
 * and are removed as ks_zw_remove removes them, the floor raised
 * past them. *done 0: count is more than the cache can hold, nothing was
 * read or written (the caller pops as before). */
ks_status ks_zfront_pop(ks_write *w, const ks_zview *v, uint64_t count, ks_zmvec *got, int *done);
/* Forgets the front cache of (db, version): every write of its members
 * but the cached pops' own calls this (ks_zw_open). */
void ks_zfront_forget(ks_ctx *c, int db, uint64_t version);

/* Queues the rank change d of order key (copied) for the close. */
ks_status ks_zw_add_delta(ks_zw *z, const char *key, size_t kl, int64_t d);

/* Replaces w's key by the zset items[0..n) (sorted, distinct), dropping any
 * TTL, with Redis's encoding rule for a command's destination (listpack
 * when n <= zset-max-listpack-entries and no member is longer than
 * zset-max-listpack-value); n == 0 deletes the key. */
ks_status ks_zstore_items(ks_write *w, const ks_zmember *items, size_t n);

/* ---- Rank blocks (ks_zset_rank.c) -------------------------------------------- */

/* Applies the pending deltas of z to the rank blocks, updating z->height
 * (order entries must be final for them). Final and few (the log's
 * entries and these within KS_ZLOG_MAX): appends them to the rank log
 * instead (z->logend). Otherwise folds the log in with them and empties
 * it. Many changes at once rebuild the blocks instead: at once when final,
 * else at the close (z->rebuild). */
ks_status ks_zrank_apply(ks_zw *z, int final);
/* Rebuilds every rank block of (db, version) from its order entries
 * (those from floor[0..floorl) on: no live one is below it); *height gets
 * the new height. */
ks_status ks_zrank_rebuild(ks_ctx *c, int db, uint64_t version, const char *floor, size_t floorl,
                           int *height);
/* Without blocks (height 0, KS-Z5) a rank read walks the order entries;
 * one longer than this many steps asks for the blocks: the zset's next
 * view (ks_zview_open) or write builds them. */
#define KS_ZRANK_WANT_STEPS (4u * KS_ZRANK_MAX)
/* 1 when a rank read asked for the blocks of big zset (db, version). */
int ks_zrank_wanted(const ks_ctx *c, int db, uint64_t version);
/* The number of order entries < key (an order key: skey member). */
ks_status ks_zrank_of(ks_ctx *c, const ks_zview *v, const char *key, size_t kl, uint64_t *rank);
/* Positions mi (open on v's version) on the order entry of rank r
 * (REQUIRES r < count). */
ks_status ks_zrank_seek(ks_ctx *c, const ks_zview *v, ks_miter *mi, uint64_t r);

/* ---- Order entries ------------------------------------------------------------- */

/* Reads the order entry under mi: member and exact score (the '-' value
 * restores -0). 0, or -1 when it is not a well-formed order entry. */
int ks_zorder_entry(const ks_miter *mi, ks_zmember *out);
/* 1 when mi is valid and on an order entry. */
int ks_zorder_valid(const ks_miter *mi);
/* Positions mi at the first order entry >= (skey member), or the last <=. */
void ks_zorder_seek(ks_miter *mi, const char *key, size_t kl);
/* ks_zorder_seek to key, or to big v's floor when that is above it: the
 * same entry, without stepping over the tombstones below the floor. */
void ks_zorder_seek_from(ks_miter *mi, const ks_zview *v, const char *key, size_t kl);
void ks_zorder_seek_prev(ks_miter *mi, const char *key, size_t kl);
void ks_zorder_first(ks_miter *mi);
void ks_zorder_last(ks_miter *mi);

#endif
