/*
 * ks_rdb_stream.c -- the stream part of DUMP and RESTORE (ks_rdb_value.c
 * calls it): Redis's RDB serialization of a stream, read from and written
 * to the stream layer's whole-stream API (stream.h, ks_stream_dump.c).
 * Grammar: ENCODING.md, "DUMP payloads".
 *
 *   object  = nodes:len { key:string(16: master id, be64 ms, be64 seq)
 *                         lp:string(listpack) }*nodes
 *             length:len last.ms:len last.seq:len
 *             [first.ms first.seq maxdel.ms maxdel.seq entries_added]  (types 19, 21)
 *             groups:len { name:string last.ms:len last.seq:len
 *                          [entries_read:len]                         (types 19, 21)
 *                          pel:len { id:16 time:i64le count:len }*pel
 *                          consumers:len { name:string seen:i64le
 *                                          [active:i64le]             (type 21)
 *                                          n:len id:16*n }* }*
 *   node lp = count deleted nfields field*nfields 0
 *             { flags ms-delta seq-delta [nf field*nf] value* lp-count }*(count+deleted)
 *             flags: 1 deleted, 2 same fields as the master (no nf, no fields)
 *
 * DUMP writes type 19 (RDB_TYPE_STREAM_LISTPACKS_2, what Redis 7.0 writes)
 * with one listpack per node, keyed by the node's master id, in Redis's
 * layout; strata does not keep deleted entries, so a node holds its live
 * entries only (deleted 0) and its master fields are those of its first
 * live entry (Redis's own when that entry is the node's first).
 * RESTORE reads types 15 (Redis 5 to 6.2: first id, entries-added, max
 * deleted id and entries-read derived as Redis does), 19 and 21 (Redis
 * 7.2: a consumer's active time, dropped), checks the payload whole (the
 * deep check of sanitize-dump-payload yes, always) and writes it.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"
#include "keyspace/ks_rdb.h"
#include "keyspace/ks_rdb_stream.h"
#include "keyspace/stream.h"

/* ---- Listpack writing (Redis's listpack.c encodings) ------------------------ */

static void lp_backlen(ks_rdb_out *o, uint64_t l)
{
    unsigned char b[5];
    int n = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(((l >> (7 * (n - 1 - i))) & 127) | (i ? 128 : 0));
    ks_rdb_put(o, b, (size_t)n);
}

static void lp_int(ks_rdb_out *o, int64_t v)
{
    unsigned char b[9];
    size_t n;
    if (v >= 0 && v <= 127) {
        b[0] = (unsigned char)v, n = 1;
    } else if (v >= -4096 && v <= 4095) {
        uint64_t u = v < 0 ? (uint64_t)((1 << 13) + v) : (uint64_t)v;
        b[0] = (unsigned char)((u >> 8) | 0xC0), b[1] = (unsigned char)u, n = 2;
    } else {
        int k = v >= -32768 && v <= 32767          ? 2
                : v >= -8388608 && v <= 8388607    ? 3
                : v >= INT32_MIN && v <= INT32_MAX ? 4
                                                   : 8;
        b[0] = k == 2 ? 0xF1 : k == 3 ? 0xF2 : k == 4 ? 0xF3 : 0xF4;
        for (int i = 0; i < k; i++)
            b[1 + i] = (unsigned char)((uint64_t)v >> (8 * i));
        n = 1 + (size_t)k;
    }
    ks_rdb_put(o, b, n);
    lp_backlen(o, n);
}

/* A string element: an integer when it is the canonical text of one, as
 * lpAppend stores it. */
static void lp_str(ks_rdb_out *o, const char *s, size_t n)
{
    long long v;
    if (n && n <= 20 && ks_string2ll(s, n, &v)) return lp_int(o, v);
    unsigned char h[5];
    size_t hn;
    if (n < 64) {
        h[0] = (unsigned char)(0x80 | n), hn = 1;
    } else if (n < 4096) {
        h[0] = (unsigned char)(0xE0 | (n >> 8)), h[1] = (unsigned char)n, hn = 2;
    } else {
        h[0] = 0xF0, hn = 5;
        for (int i = 0; i < 4; i++)
            h[1 + i] = (unsigned char)(n >> (8 * i));
    }
    ks_rdb_put(o, h, hn);
    ks_rdb_put(o, s, n);
    lp_backlen(o, hn + n);
}

/* ---- DUMP ------------------------------------------------------------------ */

typedef struct xdump {
    ks_rdb_out nodes; /* the node keys and listpacks */
    uint64_t nnodes;
    int open;
    ks_xid master;
    ks_fvec mf;          /* the node's master fields (copies) */
    ks_rdb_out body;     /* its entries */
    uint64_t count, els; /* live entries, listpack elements */
} xdump;

static void put_id16(ks_rdb_out *o, const ks_xid *id)
{
    unsigned char b[16];
    for (int i = 0; i < 8; i++) {
        b[i] = (unsigned char)(id->ms >> (56 - 8 * i));
        b[8 + i] = (unsigned char)(id->seq >> (56 - 8 * i));
    }
    ks_rdb_put(o, b, 16);
}

static void put_i64le(ks_rdb_out *o, int64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    ks_rdb_put(o, b, 8);
}

/* Writes the open node's key and listpack. */
static void node_close(xdump *d)
{
    if (!d->open) return;
    ks_rdb_out lp = {NULL, 0, 0, 0};
    unsigned char hdr[6] = {0};
    ks_rdb_put(&lp, hdr, 6);
    lp_int(&lp, (int64_t)d->count);
    lp_int(&lp, 0);
    lp_int(&lp, (int64_t)d->mf.n);
    for (size_t i = 0; i < d->mf.n; i++)
        lp_str(&lp, d->mf.v[i].f, d->mf.v[i].fl);
    lp_int(&lp, 0);
    ks_rdb_put(&lp, d->body.p, d->body.n);
    ks_rdb_put_byte(&lp, 0xFF);
    uint64_t els = d->els + 4 + d->mf.n;
    if (lp.oom || lp.n > UINT32_MAX) {
        d->nodes.oom = 1;
    } else {
        for (int i = 0; i < 4; i++)
            lp.p[i] = (unsigned char)(lp.n >> (8 * i));
        lp.p[4] = (unsigned char)(els < 65535 ? els : 65535);
        lp.p[5] = (unsigned char)((els < 65535 ? els : 65535) >> 8);
        ks_rdb_put_len(&d->nodes, 16);
        put_id16(&d->nodes, &d->master);
        ks_rdb_put_len(&d->nodes, lp.n);
        ks_rdb_put(&d->nodes, lp.p, lp.n);
    }
    free(lp.p);
    ks_fvec_free(&d->mf);
    d->body.n = 0;
    d->open = 0;
    d->nnodes++;
}

static int same_fields(const ks_fvec *mf, const ks_field *f, size_t n)
{
    if (mf->n != n) return 0;
    for (size_t i = 0; i < n; i++)
        if (mf->v[i].fl != f[i].fl || memcmp(mf->v[i].f, f[i].f, f[i].fl) != 0) return 0;
    return 1;
}

static void dump_entry(void *arg, const ks_xid *master, const ks_xid *id, const ks_field *f,
                       size_t n)
{
    xdump *d = arg;
    if (d->open && ks_xid_cmp(master, &d->master) != 0) node_close(d);
    if (!d->open) {
        d->open = 1;
        d->master = *master;
        d->count = d->els = 0;
        ks_fvec_init(&d->mf);
        for (size_t i = 0; i < n; i++)
            if (ks_fvec_push_copy(&d->mf, f[i].f, f[i].fl, NULL, 0) < 0) d->nodes.oom = 1;
    }
    int same = same_fields(&d->mf, f, n);
    ks_rdb_out *b = &d->body;
    lp_int(b, same ? KS_RDB_XFLAG_SAMEFIELDS : 0);
    lp_int(b, (int64_t)(id->ms - master->ms));
    lp_int(b, (int64_t)(id->seq - master->seq));
    if (!same) lp_int(b, (int64_t)n);
    for (size_t i = 0; i < n; i++) {
        if (!same) lp_str(b, f[i].f, f[i].fl);
        lp_str(b, f[i].v, f[i].vl);
    }
    uint64_t lpc = n + 3 + (same ? 0 : n + 1);
    lp_int(b, (int64_t)lpc);
    d->els += lpc + 1;
    d->count++;
}

/* The groups' part: names, then per group its PEL and consumers. */
typedef struct names {
    ks_xgroup_info *g;
    ks_xconsumer_info *cs;
    ks_xpel_info *p;
    size_t n, cap;
    ks_fvec copies;
    int oom;
} names;

static int names_grow(names *v, size_t elsize, void **arr)
{
    if (v->n < v->cap) return 0;
    size_t cap = v->cap ? v->cap * 2 : 8;
    void *nv = realloc(*arr, cap * elsize);
    if (!nv) return v->oom = 1, -1;
    *arr = nv;
    v->cap = cap;
    return 0;
}

/* A copy of s kept in v->copies. */
static const char *names_copy(names *v, const char *s, size_t n)
{
    if (ks_fvec_push_copy(&v->copies, s, n, NULL, 0) < 0) return v->oom = 1, NULL;
    return v->copies.v[v->copies.n - 1].f;
}

static void got_group(void *arg, const ks_xgroup_info *g)
{
    names *v = arg;
    if (names_grow(v, sizeof(*v->g), (void **)&v->g) < 0) return;
    v->g[v->n] = *g;
    v->g[v->n++].name = names_copy(v, g->name, g->nl);
}

static void got_consumer(void *arg, const ks_xconsumer_info *ci)
{
    names *v = arg;
    if (names_grow(v, sizeof(*v->cs), (void **)&v->cs) < 0) return;
    v->cs[v->n] = *ci;
    v->cs[v->n++].name = names_copy(v, ci->name, ci->nl);
}

static void got_pel(void *arg, const ks_xpel_info *p)
{
    names *v = arg;
    if (names_grow(v, sizeof(*v->p), (void **)&v->p) < 0) return;
    v->p[v->n] = *p;
    v->p[v->n++].consumer = names_copy(v, p->consumer, p->cl);
}

static void names_free(names *v)
{
    free(v->g);
    free(v->cs);
    free(v->p);
    ks_fvec_free(&v->copies);
}

static int name_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int r = memcmp(a, b, al < bl ? al : bl);
    return r ? r : al < bl ? -1 : al > bl;
}

/* PEL entries by consumer, then id. */
static int pel_by_consumer(const void *a, const void *b)
{
    const ks_xpel_info *x = a, *y = b;
    int r = name_cmp(x->consumer, x->cl, y->consumer, y->cl);
    return r ? r : ks_xid_cmp(&x->id, &y->id);
}

static ks_status dump_group(ks_ctx *c, const char *key, size_t klen, const ks_xgroup_info *g,
                            ks_rdb_out *o)
{
    names pel = {0}, cons = {0};
    ks_fvec_init(&pel.copies);
    ks_fvec_init(&cons.copies);
    ks_xid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    uint64_t n;
    int miss;
    ks_status st = ks_xpending_range(c, key, klen, g->name, g->nl, NULL, 0, &lo, &hi, UINT64_MAX, 0,
                                     got_pel, &pel, &n, &miss);
    if (st == KS_OK)
        st = ks_xconsumers(c, key, klen, g->name, g->nl, got_consumer, &cons, &n, &miss);
    if (st == KS_OK && (pel.oom || cons.oom)) st = ks_oom(c);
    if (st != KS_OK) goto out;
    ks_rdb_put_string(o, g->name, g->nl);
    ks_rdb_put_len(o, g->last_id.ms);
    ks_rdb_put_len(o, g->last_id.seq);
    ks_rdb_put_len(o, (uint64_t)g->entries_read);
    ks_rdb_put_len(o, pel.n);
    for (size_t i = 0; i < pel.n; i++) {
        put_id16(o, &pel.p[i].id);
        put_i64le(o, pel.p[i].delivery_time);
        ks_rdb_put_len(o, pel.p[i].delivery_count);
    }
    if (pel.n) qsort(pel.p, pel.n, sizeof(*pel.p), pel_by_consumer);
    ks_rdb_put_len(o, cons.n);
    size_t at = 0;
    for (size_t i = 0; i < cons.n; i++) {
        const ks_xconsumer_info *ci = &cons.cs[i];
        ks_rdb_put_string(o, ci->name, ci->nl);
        put_i64le(o, ci->seen_time);
        while (at < pel.n && name_cmp(pel.p[at].consumer, pel.p[at].cl, ci->name, ci->nl) < 0)
            at++;
        size_t end = at;
        while (end < pel.n && name_cmp(pel.p[end].consumer, pel.p[end].cl, ci->name, ci->nl) == 0)
            end++;
        ks_rdb_put_len(o, end - at);
        for (; at < end; at++)
            put_id16(o, &pel.p[at].id);
    }
out:
    names_free(&pel);
    names_free(&cons);
    return st;
}

ks_status ks_rdb_stream_dump(ks_ctx *c, const char *key, size_t klen, ks_rdb_out *o)
{
    ks_xinfo info;
    ks_status st = ks_xinfo_stream(c, key, klen, &info);
    if (st != KS_OK) return st;
    xdump d;
    memset(&d, 0, sizeof(d));
    names groups = {0};
    ks_fvec_init(&groups.copies);
    st = ks_xentries_by_node(c, key, klen, dump_entry, &d);
    node_close(&d);
    uint64_t n;
    if (st == KS_OK) st = ks_xgroups(c, key, klen, got_group, &groups, &n);
    if (st == KS_OK && (d.nodes.oom || d.body.oom || groups.oom)) st = ks_oom(c);
    if (st != KS_OK) goto out;
    ks_rdb_put_byte(o, KS_RDB_STREAM_LISTPACKS_2);
    ks_rdb_put_len(o, d.nnodes);
    ks_rdb_put(o, d.nodes.p, d.nodes.n);
    const uint64_t hdr[] = {info.length,          info.last_id.ms,    info.last_id.seq,
                            info.first_id.ms,     info.first_id.seq,  info.max_deleted.ms,
                            info.max_deleted.seq, info.entries_added, groups.n};
    for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++)
        ks_rdb_put_len(o, hdr[i]);
    for (size_t i = 0; i < groups.n && st == KS_OK; i++)
        st = dump_group(c, key, klen, &groups.g[i], o);
out:
    if (d.open) ks_fvec_free(&d.mf);
    free(d.nodes.p);
    free(d.body.p);
    names_free(&groups);
    return st;
}
