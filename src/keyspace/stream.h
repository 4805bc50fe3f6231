/*
 * stream.h -- the keyspace's stream operations (the Streams section of
 * keyspace.h, kept in its own header): XADD, XRANGE, XREAD, XDEL, XTRIM,
 * XSETID, consumer groups, their pending entries lists (PEL) and
 * consumers. The encoding is in ENCODING.md ("Streams"); the work is in
 * ks_stream.c (entries, trimming, the stream row), ks_stream_group.c
 * (groups and consumers) and ks_stream_pel.c (pending entries).
 *
 * Conventions are keyspace.h's: functions return KS_OK, KS_NOTFOUND (the
 * key is absent or expired), KS_ERR_WRONGTYPE, KS_ERR_ENGINE or
 * KS_ERR_MSG (ctx->err holds the full Redis error text). Reads see
 * ctx->batch; writes go only into ctx->batch, so a command that fails is
 * rolled back by the server (S1). Inputs are borrowed for the call.
 * Callbacks are called after every write of the command is in the batch,
 * with pointers valid only during the call. Command thread only, no locks.
 */
#ifndef STRATA_KS_STREAM_H
#define STRATA_KS_STREAM_H

#include "keyspace/keyspace.h"

/* An entry id, <ms>-<seq>. */
typedef struct ks_xid {
    uint64_t ms, seq;
} ks_xid;

/* -1, 0, 1 as a < b, a == b, a > b. */
int ks_xid_cmp(const ks_xid *a, const ks_xid *b);
/* The next / previous id; 0, or -1 when a is the last (first) id (Redis's
 * streamIncrID / streamDecrID: a wraps to 0-0 / stays). */
int ks_xid_incr(ks_xid *a);
int ks_xid_decr(ks_xid *a);
/* Writes "<ms>-<seq>" into buf (>= KS_XID_STR bytes); returns its length. */
#define KS_XID_STR 44
size_t ks_xid_format(const ks_xid *id, char *buf);

/* One entry handed out: its id and field/value pairs (f[i].f/fl the field,
 * f[i].v/vl the value). exists 0 (f NULL, n 0): the id is pending but its
 * entry was deleted (XREADGROUP's history, XCLAIM). */
typedef void (*ks_xentry_fn)(void *arg, const ks_xid *id, const ks_field *f, size_t n, int exists);

/* Trimming (XADD's and XTRIM's MAXLEN/MINID options, Redis's rules). */
enum { KS_XTRIM_NONE = 0, KS_XTRIM_MAXLEN = 1, KS_XTRIM_MINID = 2 };
typedef struct ks_xtrim {
    int strategy; /* KS_XTRIM_* */
    int approx;   /* '~': only whole nodes (ENCODING.md, "Streams") */
    long long maxlen;
    ks_xid minid;
    long long limit; /* entries at most, 0 none (only with approx) */
} ks_xtrim_args;

typedef struct ks_xadd_args {
    int nomkstream;
    int id_given, seq_given; /* an explicit id; seq_given 0: <ms>-* */
    ks_xid id;
    ks_xtrim_args trim;
} ks_xadd_args;

/* XADD: appends fv[0..n) (n >= 1) and trims. *id is the id added,
 * *trimmed the entries trimmed. KS_NOTFOUND: absent with nomkstream.
 * KS_ERR_MSG: an id not above the top item, the last possible id
 * exhausted, elements too large (Redis's texts). */
ks_status ks_xadd(ks_ctx *c, const char *key, size_t klen, const ks_xadd_args *a,
                  const ks_field *fv, size_t n, ks_xid *id, uint64_t *trimmed);
ks_status ks_xtrim(ks_ctx *c, const char *key, size_t klen, const ks_xtrim_args *t,
                   uint64_t *deleted);
/* XDEL: *deleted = how many of ids[0..n) existed (each once). */
ks_status ks_xdel(ks_ctx *c, const char *key, size_t klen, const ks_xid *ids, size_t n,
                  uint64_t *deleted);
ks_status ks_xlen(ks_ctx *c, const char *key, size_t klen, uint64_t *n);
/* XRANGE / XREVRANGE: entries with start <= id <= end, at most count (0:
 * all), in id order or reversed; *n = how many fn got. */
ks_status ks_xrange(ks_ctx *c, const char *key, size_t klen, const ks_xid *start, const ks_xid *end,
                    uint64_t count, int rev, ks_xentry_fn fn, void *arg, uint64_t *n);

/* The stream's header (XINFO STREAM, XREAD's `$`, XGROUP's `$`). */
typedef struct ks_xinfo {
    uint64_t length;
    uint64_t nodes;       /* radix-tree-keys: the nodes holding entries */
    uint64_t engine_keys; /* radix-tree-nodes: engine keys of entries and node records */
    ks_xid last_id, max_deleted, first_id;
    uint64_t entries_added;
    uint64_t groups;
} ks_xinfo;
ks_status ks_xinfo_stream(ks_ctx *c, const char *key, size_t klen, ks_xinfo *out);

/* XSETID: entries_added -1 keeps it; max_deleted NULL (or 0-0) keeps it.
 * KS_ERR_MSG with Redis's texts for an id below the top item or an
 * entries_added below the length. */
ks_status ks_xsetid(ks_ctx *c, const char *key, size_t klen, const ks_xid *last,
                    long long entries_added, const ks_xid *max_deleted);

/* ---- Consumer groups (ks_stream_group.c) ------------------------------ */

/* Where a group command found nothing: *miss is set to one of these
 * together with KS_NOTFOUND. */
enum { KS_XMISS_KEY = 1, KS_XMISS_GROUP = 2 };

#define KS_XENTRIES_READ_INVALID (-1LL) /* Redis's SCG_INVALID_ENTRIES_READ */

/* XGROUP CREATE: id NULL is `$`. *created 0: the group exists
 * (BUSYGROUP). KS_NOTFOUND: no key and !mkstream. */
ks_status ks_xgroup_create(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                           const ks_xid *id, long long entries_read, int mkstream, int *created);
/* XGROUP SETID: id NULL is `$`. KS_NOTFOUND with *miss. */
ks_status ks_xgroup_setid(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                          const ks_xid *id, long long entries_read, int *miss);
/* XGROUP DESTROY: *destroyed 1 when it existed. KS_NOTFOUND: no key. */
ks_status ks_xgroup_destroy(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                            int *destroyed);
/* XGROUP CREATECONSUMER: *created 0 when it existed. KS_NOTFOUND + *miss. */
ks_status ks_xgroup_createconsumer(ks_ctx *c, const char *key, size_t klen, const char *g,
                                   size_t gl, const char *cn, size_t cnl, int *created, int *miss);
/* XGROUP DELCONSUMER: *pending = the consumer's pending entries, now
 * gone with it (0 when there was no such consumer). KS_NOTFOUND + *miss. */
ks_status ks_xgroup_delconsumer(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                                const char *cn, size_t cnl, uint64_t *pending, int *miss);

/* XREADGROUP on one stream. after NULL is `>`: entries after the group's
 * last delivered id, at most count (0: all), each added to the PEL of the
 * group and of the consumer unless noack; nothing happens (*served 0)
 * when there is none. Otherwise the consumer's pending entries with ids
 * after *after (deleted ones with exists 0), their delivery count and
 * time updated; always *served 1. The consumer is created when served.
 * KS_NOTFOUND + *miss. */
ks_status ks_xreadgroup(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                        const char *cn, size_t cnl, const ks_xid *after, uint64_t count, int noack,
                        ks_xentry_fn fn, void *arg, int *served, int *miss);
/* XACK: *acked = ids found in the group's PEL (and removed). No key or
 * no group: 0. */
ks_status ks_xack(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                  const ks_xid *ids, size_t n, uint64_t *acked);

/* A group as XINFO GROUPS / XINFO STREAM FULL show it. */
typedef struct ks_xgroup_info {
    const char *name;
    size_t nl;
    uint64_t consumers, pending;
    ks_xid last_id;
    long long entries_read; /* KS_XENTRIES_READ_INVALID: unknown (nil) */
    int lag_valid;          /* 0: the lag is unknown (nil) */
    long long lag;
} ks_xgroup_info;
typedef void (*ks_xgroup_fn)(void *arg, const ks_xgroup_info *g);
/* Every group of the stream in name order; *n = how many. */
ks_status ks_xgroups(ks_ctx *c, const char *key, size_t klen, ks_xgroup_fn fn, void *arg,
                     uint64_t *n);

typedef struct ks_xconsumer_info {
    const char *name;
    size_t nl;
    uint64_t pending;
    int64_t seen_time; /* unix ms */
} ks_xconsumer_info;
typedef void (*ks_xconsumer_fn)(void *arg, const ks_xconsumer_info *ci);
/* Every consumer of group g in name order (XINFO CONSUMERS, XPENDING's
 * summary uses those with pending entries). KS_NOTFOUND + *miss. */
ks_status ks_xconsumers(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                        ks_xconsumer_fn fn, void *arg, uint64_t *n, int *miss);

/* One pending entry. */
typedef struct ks_xpel_info {
    ks_xid id;
    const char *consumer;
    size_t cl;
    int64_t delivery_time; /* unix ms */
    uint64_t delivery_count;
} ks_xpel_info;
typedef void (*ks_xpel_fn)(void *arg, const ks_xpel_info *p);
/* XPENDING's summary: count, smallest and largest id. */
typedef struct ks_xpending_sum {
    uint64_t count;
    ks_xid min, max; /* when count > 0 */
} ks_xpending_sum;
ks_status ks_xpending_summary(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                              ks_xpending_sum *out, int *miss);
/* XPENDING's extended form (and XINFO STREAM FULL's pending lists): the
 * pending entries of the group, or of consumer cn when cn is not NULL (an
 * unknown consumer has none), with start <= id <= end, idle >= min_idle
 * ms (0: any), at most count (0: all). KS_NOTFOUND + *miss. */
ks_status ks_xpending_range(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                            const char *cn, size_t cnl, const ks_xid *start, const ks_xid *end,
                            uint64_t count, long long min_idle, ks_xpel_fn fn, void *arg,
                            uint64_t *n, int *miss);

/* XCLAIM's options. */
typedef struct ks_xclaim_opts {
    long long min_idle;
    int64_t delivery_time; /* -1: now */
    long long retrycount;  /* -1: increment (unless justid) */
    int force, justid;
    ks_xid lastid; /* 0-0: none */
} ks_xclaim_opts;
/* XCLAIM of ids[0..n) to consumer cn: fn gets each claimed entry (with
 * justid, exists 1 and no fields). Pending ids whose entry is gone leave
 * the PEL. KS_NOTFOUND + *miss. */
ks_status ks_xclaim(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                    const char *cn, size_t cnl, const ks_xid *ids, size_t n,
                    const ks_xclaim_opts *o, ks_xentry_fn fn, void *arg, uint64_t *claimed,
                    int *miss);
/* XAUTOCLAIM from start: at most count entries claimed or found deleted,
 * examining at most count * 10 pending entries. After the writes: head_fn
 * with the cursor (0-0 at the end) and the number claimed, fn for each
 * claimed entry, then del_fn once with the ids removed from the PEL
 * because their entry is gone. KS_NOTFOUND + *miss. */
typedef struct ks_xautoclaim_cbs {
    void (*head_fn)(void *arg, const ks_xid *next, uint64_t claimed);
    ks_xentry_fn fn;
    void (*del_fn)(void *arg, const ks_xid *ids, size_t n);
    void *arg;
} ks_xautoclaim_cbs;
ks_status ks_xautoclaim(ks_ctx *c, const char *key, size_t klen, const char *g, size_t gl,
                        const char *cn, size_t cnl, long long min_idle, const ks_xid *start,
                        uint64_t count, int justid, const ks_xautoclaim_cbs *cb, int *miss);

/* ---- Whole streams: DUMP and RESTORE (ks_stream_dump.c) ----------------- */

/* One live entry with the master id of the node holding it (the id the
 * node was opened with, as Redis keys its listpack by). */
typedef void (*ks_xnode_entry_fn)(void *arg, const ks_xid *master, const ks_xid *id,
                                  const ks_field *f, size_t n);
/* Every live entry in id order, each with its node's master id. */
ks_status ks_xentries_by_node(ks_ctx *c, const char *key, size_t klen, ks_xnode_entry_fn fn,
                              void *arg);

/* A stream to write whole (RESTORE), as Redis's RDB describes it; every
 * pointer is borrowed for the call. */
typedef struct ks_xload_node {
    ks_xid master;      /* the node's key */
    ks_xid last;        /* the last id its listpack holds, deleted ones included */
    const ks_field *mf; /* master fields (f/fl) */
    size_t nmf;
    uint64_t lp_bytes;      /* the listpack's size */
    uint64_t live, deleted; /* its master entry's counts */
} ks_xload_node;
typedef struct ks_xload_entry {
    ks_xid id;
    size_t node; /* index into nodes */
    const ks_field *f;
    size_t n;
} ks_xload_entry;
typedef struct ks_xload_pel {
    ks_xid id;
    int64_t time;
    uint64_t count;
    size_t consumer; /* index into its group's consumers */
} ks_xload_pel;
typedef struct ks_xload_consumer {
    const char *name;
    size_t nl;
    int64_t seen;
} ks_xload_consumer;
#define KS_XLOAD_DERIVE_READ (-2LL) /* entries_read derived as Redis < 7.0 loads it */
typedef struct ks_xload_group {
    const char *name;
    size_t nl;
    ks_xid last;
    long long entries_read; /* or KS_XENTRIES_READ_INVALID, KS_XLOAD_DERIVE_READ */
    const ks_xload_pel *pel;
    size_t npel;
    const ks_xload_consumer *cons;
    size_t ncons;
} ks_xload_group;
typedef struct ks_xload {
    const ks_xload_node *nodes;
    size_t nnodes;
    const ks_xload_entry *entries; /* live entries in id order */
    size_t nentries;
    ks_xid last, first, maxdel;
    uint64_t entries_added;
    const ks_xload_group *groups;
    size_t ngroups;
} ks_xload;
/* Writes l as the stream at key. REQUIRES: key absent; l consistent (ids
 * ascending, each entry's node live, each group's pending entries held by
 * one of its consumers, names unique: the RDB decoder checks). Nodes
 * without live entries are left out, as XDEL drops an emptied node. */
ks_status ks_xload_write(ks_ctx *c, const char *key, size_t klen, const ks_xload *l);

#endif
