/*
 * ks_stream_int.h -- internal to the stream files (ks_stream.c,
 * ks_stream_id.c, ks_stream_trim.c, ks_stream_group.c, ks_stream_pel.c):
 * the stream header kept in the record's ext, the member suffixes and the
 * helpers the files share. The format is ENCODING.md's "Streams (type 6)":
 *
 *   ext = the xs_hdr fields below as varints, in order
 *   'E' ms:be64 seq:be64                -> node:varint nfields:varint {flen f vlen v}
 *   'N' node:be64                       -> first:id last:id live:le64 total:le64
 *                                          bytes:le64 fhash:le64 nfields:le64 (closed
 *                                          nodes; records written before the last four
 *                                          fields existed end after live)
 *   'G' name                            -> group record (xs_group)
 *   'H' gid:be64 'c' name               -> consumer record (xs_consumer)
 *   'H' gid:be64 'p' ms:be64 seq:be64   -> delivery_time:le64 count:le64 name
 *   'H' gid:be64 'q' cid:be64 ms seq    -> ""
 * where id = ms:le64 seq:le64 in values.
 */
#ifndef STRATA_KS_STREAM_INT_H
#define STRATA_KS_STREAM_INT_H

#include "keyspace/ks_type.h"
#include "keyspace/stream.h"

#define XS_TAG_ENTRY 'E'
#define XS_TAG_NODE 'N'
#define XS_TAG_GROUP 'G'
#define XS_TAG_GDATA 'H'
#define XS_SUB_CONSUMER 'c'
#define XS_SUB_PEL 'p'
#define XS_SUB_CPEL 'q'

/* Closed node record lengths: with the listpack state, and the older one
 * without it (such a node is never reopened). */
#define XS_NODE_REC_LEN 72
#define XS_NODE_REC_OLD_LEN 40

/* Redis's limits: the largest entry (STREAM_LISTPACK_MAX_SIZE) and the
 * default trim LIMIT bounds. */
#define XS_LISTPACK_MAX_SIZE (1u << 30)

/* The stream header (ext). Field order is the stored order. */
typedef struct xs_hdr {
    ks_xid last, first, maxdel;
    uint64_t entries_added;
    uint64_t groups;
    uint64_t next_gid;
    uint64_t nodes;      /* live nodes (closed with live > 0, plus the tail) */
    uint64_t first_node; /* node of the first entry; 0 when empty */
    uint64_t tail_node;  /* the open node; valid while tail_total > 0 */
    ks_xid tail_first;   /* its first (master) id */
    ks_xid tail_last;    /* the last id appended to it */
    uint64_t tail_total; /* entries appended to it, deleted ones included */
    uint64_t tail_live;
    uint64_t tail_bytes; /* its listpack size without the two count fields */
    uint64_t tail_fhash; /* hash of its master fields */
    uint64_t tail_nfields;
    uint64_t last_node; /* the newest node id ever used */
} xs_hdr;
#define XS_EXT_FIELDS 22
#define XS_EXT_MAX (XS_EXT_FIELDS * 10) /* <= KS_EXT_MAX */

/* A stream opened for a command: the write (or the record of a read) and
 * the parsed header. */
typedef struct xs_stream {
    ks_write w; /* used when opened for writing */
    ks_meta *m; /* &w.m, or the read's own */
    ks_meta rm;
    int writing;
    int exists;
    int created;      /* made by xs_create: version below, no record yet */
    uint64_t version; /* when created */
    xs_hdr h;
    uint64_t length;
    int dirty; /* the header or length changed: store at xs_close_write */
} xs_stream;

/* Opens key for reading: KS_NOTFOUND when absent, KS_ERR_WRONGTYPE. */
ks_status xs_open_read(ks_ctx *c, const char *key, size_t klen, xs_stream *s);
/* Opens key for writing (lazy expiry, WRONGTYPE); s->exists 0 when absent. */
ks_status xs_open_write(ks_ctx *c, const char *key, size_t klen, xs_stream *s);
/* Makes an absent opened stream a new empty one (a new version). */
void xs_create(ks_ctx *c, xs_stream *s);
/* The version the stream's members live under. */
uint64_t xs_version(const xs_stream *s);
/* Stores the header and length when changed (s->dirty). */
ks_status xs_store(xs_stream *s);
void xs_close(xs_stream *s);

/* 0, or -1 when ext is not exactly the fields (corrupt). */
int xs_hdr_parse(xs_hdr *h, const char *ext, size_t n);
/* xs_hdr_parse's answer without parsing: the type check of every read. */
int xs_hdr_valid(const char *ext, size_t n);
/* Writes the fields into ext (XS_EXT_MAX bytes); returns the length. */
size_t xs_hdr_write(const xs_hdr *h, char *ext);

/* Member suffixes. */
size_t xs_entry_key(char *buf, const ks_xid *id); /* 17 bytes */
size_t xs_node_key(char *buf, uint64_t node);     /* 9 bytes */
/* 'H' gid sub: 10 bytes */
size_t xs_gdata_key(char *buf, uint64_t gid, char sub);
void xs_put_id_be(char *p, const ks_xid *id);
void xs_get_id_be(const char *p, ks_xid *id);
void xs_put_id_le(char *p, const ks_xid *id);
void xs_get_id_le(const char *p, ks_xid *id);

/* An entry value: node, then its field/value pairs (appended to fv,
 * pointers into v). 0, or -1 when corrupt. */
int xs_entry_parse(const char *v, size_t vl, uint64_t *node, ks_fvec *fv);

/* Gets entry id of the stream: KS_OK with its value copied into *fv (and
 * *node), KS_NOTFOUND. */
ks_status xs_entry_get(ks_ctx *c, xs_stream *s, const ks_xid *id, uint64_t *node, ks_fvec *fv,
                       char **owned);
int xs_entry_exists(ks_ctx *c, xs_stream *s, const ks_xid *id, ks_status *st);

/* Redis's lag helpers (t_stream.c's streamRangeHasTombstones,
 * streamEstimateDistanceFromFirstEverEntry). */
int xs_range_has_tombstones(const xs_stream *s, const ks_xid *start);
long long xs_estimate_distance(const xs_stream *s, const ks_xid *id);

/* The first entry id >= from (found 0 when none): for the new first id. */
ks_status xs_seek_entry(ks_ctx *c, xs_stream *s, const ks_xid *from, int rev, ks_xid *found_id,
                        uint64_t *found_node, int *found);

/* XRANGE over an opened stream (ks_xrange's semantics). */
ks_status xs_range_opened(ks_ctx *c, xs_stream *s, const ks_xid *start, const ks_xid *end,
                          uint64_t count, int rev, ks_xentry_fn fn, void *arg, uint64_t *n);
/* Closes the tail node (tail_total > 0; else nothing): its record gets
 * its ids, live count and listpack state, and the header no tail. */
void xs_tail_close(ks_ctx *c, xs_stream *s);
/* The tail node has just been emptied and dropped (s->h.tail_total 0):
 * the newest closed node, if any, becomes the tail again, as Redis appends
 * to the last listpack of its radix tree whatever it is. Its record is
 * deleted (the tail lives in the header). A node whose record has no
 * listpack state (XS_NODE_REC_OLD_LEN) stays closed. */
ks_status xs_tail_reopen(ks_ctx *c, xs_stream *s);

/* The first entry >= from becomes the stream's first (or it is empty). */
ks_status xs_refresh_first(ks_ctx *c, xs_stream *s, const ks_xid *from);

/* Trimming (ks_stream_trim.c): *deleted entries removed. */
ks_status xs_trim(ks_ctx *c, xs_stream *s, const ks_xtrim_args *t, uint64_t *deleted);
/* n entries of node are gone (XDEL, a trim that keeps part of the first
 * node): its live count drops by n, and a node left with none is removed,
 * as Redis frees an emptied listpack. */
ks_status xs_node_drop(ks_ctx *c, xs_stream *s, uint64_t node, uint64_t n);

/* Listpack sizes (Redis's encoding rules): an integer element with its
 * back-length; the hash of a node's master fields (f/fl of fv[0..n)). */
uint64_t xs_lp_int_size(int64_t v);
uint64_t xs_fields_hash(const ks_field *fv, size_t n);

/* ---- Groups and consumers (ks_stream_group.c) ----------------------- */

/* 'G' name -> gid last:id entries_read pel_count consumers next_cid
 *             pel_min:id pel_max:id            (le64 each, XS_GROUP_LEN) */
typedef struct xs_group {
    const char *name; /* borrowed */
    size_t nl;
    uint64_t gid;
    ks_xid last;
    long long entries_read;
    uint64_t pel_count, consumers, next_cid;
    ks_xid pmin, pmax;        /* exact while pel_count > 0 */
    int pmin_lost, pmax_lost; /* the entry at pmin/pmax was removed: seek anew */
} xs_group;
#define XS_GROUP_LEN 88

/* 'H' gid 'c' name -> cid seen_time pel_count pel_min:id  (XS_CONSUMER_LEN) */
typedef struct xs_consumer {
    char *name; /* owned */
    size_t nl;
    int exists, dirty, pmin_lost;
    uint64_t cid;
    int64_t seen;
    uint64_t pel_count;
    ks_xid pmin; /* exact while pel_count > 0 */
} xs_consumer;
#define XS_CONSUMER_LEN 40

/* The consumers a command touched, written back by xs_consumers_flush. */
typedef struct xs_ccache {
    xs_consumer **v; /* each allocated once: pointers stay valid */
    size_t n, cap;
} xs_ccache;

/* Reads group name of s into *g (KS_NOTFOUND when absent). */
ks_status xs_group_get(ks_ctx *c, xs_stream *s, const char *name, size_t nl, xs_group *g);
/* Stores *g, after seeking the new pel_min / pel_max when they were lost. */
ks_status xs_group_put(ks_ctx *c, xs_stream *s, xs_group *g);
/* The consumer cn of g from the cache, reading it on first use; *out NULL
 * when it does not exist and !create (created: seen = now, cid new). */
ks_status xs_consumer_get(ks_ctx *c, xs_stream *s, xs_group *g, xs_ccache *cc, const char *cn,
                          size_t cnl, int create, xs_consumer **out);
/* Writes back every changed consumer (lost minimums sought anew). */
ks_status xs_consumers_flush(ks_ctx *c, xs_stream *s, xs_group *g, xs_ccache *cc);
void xs_ccache_free(xs_ccache *cc);
/* The lag of g (Redis's streamReplyWithCGLag). */
void xs_group_lag(const xs_stream *s, const xs_group *g, int *valid, long long *lag);
/* Opens key for writing with group name: KS_NOTFOUND + *miss. */
ks_status xs_open_group(ks_ctx *c, const char *key, size_t klen, const char *gname, size_t gl,
                        int write, xs_stream *s, xs_group *g, int *miss);

/* ---- Pending entries (ks_stream_pel.c) -------------------------------- */

/* 'H' gid 'p' id -> delivery_time:le64 delivery_count:le64 consumer name */
typedef struct xs_pel {
    int64_t time;
    uint64_t count;
    const char *cname;
    size_t cnl;
} xs_pel;
/* Adds id to the PEL of g and of consumer cs (new entry). */
void xs_pel_add(ks_ctx *c, xs_stream *s, xs_group *g, xs_consumer *cs, const ks_xid *id,
                int64_t time, uint64_t count);
/* Removes pending id of consumer cs from both PELs. */
void xs_pel_remove(ks_ctx *c, xs_stream *s, xs_group *g, xs_consumer *cs, const ks_xid *id);
/* Reads pending id of g: KS_OK with *p (cname points into *owned, eng_free
 * it), KS_NOTFOUND. */
ks_status xs_pel_get(ks_ctx *c, xs_stream *s, const xs_group *g, const ks_xid *id, xs_pel *p,
                     char **owned);
/* The pending ids of consumer cs from *from on, at most count (0: all),
 * into *ids (malloc'd, the caller frees). */
ks_status xs_cpel_ids(ks_ctx *c, xs_stream *s, const xs_group *g, const xs_consumer *cs,
                      const ks_xid *from, uint64_t count, ks_xid **ids, size_t *n);
void xs_pel_put(ks_ctx *c, xs_stream *s, const xs_group *g, const ks_xid *id, const xs_pel *p);

#endif
