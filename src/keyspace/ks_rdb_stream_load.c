/*
 * ks_rdb_stream_load.c -- RESTORE of a stream (ks_rdb_stream.h): the RDB
 * object of types 15, 19 and 21 (grammar at the top of ks_rdb_stream.c
 * and in ENCODING.md, "DUMP payloads") decoded whole into a ks_xload and
 * checked before anything is written, then written by the stream layer.
 *
 * Checked, each making the payload `ERR Bad data format`: every node key
 * is 16 bytes and its listpack well formed (ks_rdb_listpack) with Redis's
 * stream layout (streamValidateListpackIntegrity's deep checks: the master
 * entry, its zero terminator, each entry's flags, fields, values and
 * lp-count, nothing after the last entry); the master's live and deleted
 * counts match the entries' flags; ids ascend strictly through the whole
 * stream, each node's from its master id, and none is above the last id;
 * the length is the live entries' count and the first id the first live
 * one; group names are unique, as are the ids of a group's PEL and the
 * consumer names of a group; every id of a consumer's PEL is in its
 * group's PEL and held by no other consumer, and every pending entry has
 * a consumer (Redis's deep check). What Redis < 7.0 did not store (type
 * 15) is derived as rdbLoadObject derives it: first id the first live
 * entry, max deleted id 0-0, entries-added the length, and each group's
 * entries-read estimated from its last id (streamEstimateDistanceFromFirstEverEntry).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"
#include "keyspace/ks_rdb_stream.h"
#include "keyspace/stream.h"

struct ks_rdb_xstream {
    ks_fvec el; /* copies of every field, value and name */
    ks_xload_node *nodes;
    ks_xload_entry *ents;
    ks_xload_group *groups;
    ks_xload_pel *pels;
    ks_xload_consumer *cons;
    size_t nn, ne, ng, np, nc;
    size_t capn, cape, capg, capp, capc;
    ks_xload load;
};

/* Pointers into el.v (which moves while it grows) are kept as indices
 * until the end. */
#define AS_IDX(i) ((const void *)(uintptr_t)(i))
#define IDX_OF(p) ((size_t)(uintptr_t)(p))

static int grow(void **p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 0;
    size_t nc = *cap ? *cap * 2 : 16;
    void *np = realloc(*p, nc * sz);
    if (!np) return -1;
    *p = np;
    *cap = nc;
    return 0;
}
#define GROW(x, arr, n, cap) grow((void **)&(x)->arr, &(x)->cap, (x)->n, sizeof(*(x)->arr))

static int get_u64le(ks_rdb_in *r, uint64_t *v)
{
    if (r->end - r->p < 8) return -1;
    *v = 0;
    for (int i = 7; i >= 0; i--)
        *v = (*v << 8) | r->p[i];
    r->p += 8;
    return 0;
}

static void id_from16(const unsigned char *p, ks_xid *id)
{
    id->ms = id->seq = 0;
    for (int i = 0; i < 8; i++) {
        id->ms = (id->ms << 8) | p[i];
        id->seq = (id->seq << 8) | p[8 + i];
    }
}

static int get_id16(ks_rdb_in *r, ks_xid *id)
{
    if (r->end - r->p < 16) return -1;
    id_from16(r->p, id);
    r->p += 16;
    return 0;
}

static int get_id(ks_rdb_in *r, ks_xid *id)
{
    return ks_rdb_get_count(r, &id->ms) < 0 || ks_rdb_get_count(r, &id->seq) < 0 ? -1 : 0;
}

/* A string kept in x->el: *s points into it. */
static int get_name(ks_rdb_in *r, ks_rdb_xstream *x, const char **s, size_t *n)
{
    char *p;
    if (ks_rdb_get_string(r, &p, n) < 0) return -1;
    if (ks_fvec_adopt(&x->el, p) < 0) return free(p), -1;
    *s = p;
    return 0;
}

/* ---- Nodes ------------------------------------------------------------------ */

static int push_elem(void *arg, const char *s, size_t n)
{
    return ks_fvec_push_copy(arg, s, n, NULL, 0);
}

/* The listpack's elements, walked in order. */
typedef struct lpwalk {
    ks_fvec e;
    size_t i;
} lpwalk;

static const ks_field *lp_next(lpwalk *w)
{
    return w->i < w->e.n ? &w->e.v[w->i++] : NULL;
}

static int lp_next_int(lpwalk *w, long long *v)
{
    const ks_field *f = lp_next(w);
    return f && ks_string2ll(f->f, f->fl, v) ? 0 : -1;
}

typedef struct walk_state {
    int any;      /* an entry (live or deleted) was seen */
    ks_xid prev;  /* the last one */
    ks_xid first; /* the first live one */
    int any_live;
} walk_state;

/* One entry of the node at w (master fields at mf in x->el). */
static int node_entry(ks_rdb_xstream *x, lpwalk *w, const ks_xload_node *nd, size_t mf,
                      walk_state *ws, uint64_t *live, uint64_t *dead)
{
    long long flags, msd, seqd, nf = (long long)nd->nmf, lpc;
    if (lp_next_int(w, &flags) < 0 || flags < 0 || flags > 3 || lp_next_int(w, &msd) < 0 ||
        lp_next_int(w, &seqd) < 0)
        return -1;
    int same = (flags & KS_RDB_XFLAG_SAMEFIELDS) != 0;
    if (!same && (lp_next_int(w, &nf) < 0 || nf < 1 || (size_t)nf > w->e.n)) return -1;
    ks_xid id = {nd->master.ms + (uint64_t)msd, nd->master.seq + (uint64_t)seqd};
    if (ks_xid_cmp(&id, &nd->master) < 0 || (ws->any && ks_xid_cmp(&id, &ws->prev) <= 0)) return -1;
    ws->any = 1;
    ws->prev = id;
    /* the pairs: field value ... (values only with the master's fields) */
    size_t step = same ? 1 : 2, at = w->i;
    if ((w->e.n - w->i) / step < (size_t)nf) return -1;
    w->i += step * (size_t)nf;
    int deleted = (flags & KS_RDB_XFLAG_DELETED) != 0;
    size_t start = x->el.n;
    for (long long j = 0; j < nf && !deleted; j++) {
        const ks_field *f = same ? &x->el.v[mf + (size_t)j] : &w->e.v[at + 2 * (size_t)j];
        const char *fp = f->f;
        size_t fl = f->fl;
        const ks_field *v = &w->e.v[at + step * (size_t)j + (same ? 0 : 1)];
        if (ks_fvec_push_copy(&x->el, fp, fl, v->f, v->fl) < 0) return -1;
    }
    if (lp_next_int(w, &lpc) < 0 || lpc != nf + 3 + (same ? 0 : nf + 1)) return -1;
    if (deleted) return ++*dead, 0;
    if (GROW(x, ents, ne, cape) < 0) return -1;
    x->ents[x->ne++] = (ks_xload_entry){id, x->nn, AS_IDX(start), (size_t)nf};
    if (!ws->any_live) ws->first = id, ws->any_live = 1;
    ++*live;
    return 0;
}

static int get_node(ks_rdb_in *r, ks_rdb_xstream *x, walk_state *ws)
{
    char *key = NULL, *lp = NULL;
    size_t kl, lpl;
    lpwalk w = {.i = 0};
    ks_fvec_init(&w.e);
    int bad = -1;
    if (ks_rdb_get_string(r, &key, &kl) < 0 || kl != 16) goto out;
    if (ks_rdb_get_string(r, &lp, &lpl) < 0 ||
        ks_rdb_listpack((unsigned char *)lp, lpl, push_elem, &w.e) < 0)
        goto out;
    ks_xload_node nd = {.lp_bytes = lpl};
    id_from16((unsigned char *)key, &nd.master);
    if (ws->any && ks_xid_cmp(&nd.master, &ws->prev) <= 0) goto out;
    long long count, deleted, nmf, zero;
    if (lp_next_int(&w, &count) < 0 || lp_next_int(&w, &deleted) < 0 || lp_next_int(&w, &nmf) < 0 ||
        count < 0 || deleted < 0 || nmf < 1 || (size_t)nmf > w.e.n)
        goto out;
    size_t mf = x->el.n;
    for (long long j = 0; j < nmf; j++) {
        const ks_field *f = lp_next(&w);
        if (!f || ks_fvec_push_copy(&x->el, f->f, f->fl, NULL, 0) < 0) goto out;
    }
    if (lp_next_int(&w, &zero) < 0 || zero != 0) goto out;
    nd.nmf = (size_t)nmf;
    uint64_t live = 0, dead = 0;
    for (long long k = 0; k < count + deleted; k++)
        if (node_entry(x, &w, &nd, mf, ws, &live, &dead) < 0) goto out;
    if (w.i != w.e.n || live != (uint64_t)count || dead != (uint64_t)deleted) goto out;
    nd.live = live;
    nd.deleted = dead;
    nd.last = ws->prev;
    nd.mf = AS_IDX(mf);
    if (GROW(x, nodes, nn, capn) < 0) goto out;
    x->nodes[x->nn++] = nd;
    bad = 0;
out:
    free(key);
    free(lp);
    ks_fvec_free(&w.e);
    return bad;
}

/* ---- Groups ------------------------------------------------------------------ */

static int pel_cmp(const void *a, const void *b)
{
    return ks_xid_cmp(&((const ks_xload_pel *)a)->id, &((const ks_xload_pel *)b)->id);
}

static int name_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int r = memcmp(a, b, al < bl ? al : bl);
    return r ? r : al < bl ? -1 : al > bl;
}

/* Sorts an array of (name, nl)-led structs' pointers and finds a repeat. */
typedef struct named {
    const char *name;
    size_t nl;
} named;
static int named_cmp(const void *a, const void *b)
{
    const named *x = a, *y = b;
    return name_cmp(x->name, x->nl, y->name, y->nl);
}
static int has_repeat(named *v, size_t n)
{
    if (n > 1) qsort(v, n, sizeof(*v), named_cmp);
    for (size_t i = 1; i < n; i++)
        if (named_cmp(&v[i - 1], &v[i]) == 0) return 1;
    return 0;
}

static int get_consumers(ks_rdb_in *r, ks_rdb_xstream *x, int rtype, size_t pel0, size_t npel)
{
    uint64_t n;
    if (ks_rdb_get_count(r, &n) < 0) return -1;
    size_t c0 = x->nc;
    for (uint64_t i = 0; i < n; i++) {
        ks_xload_consumer cs;
        uint64_t seen, active, m;
        if (get_name(r, x, &cs.name, &cs.nl) < 0 || get_u64le(r, &seen) < 0) return -1;
        if (rtype == KS_RDB_STREAM_LISTPACKS_3 && get_u64le(r, &active) < 0) return -1;
        cs.seen = (int64_t)seen;
        if (ks_rdb_get_count(r, &m) < 0 || GROW(x, cons, nc, capc) < 0) return -1;
        x->cons[x->nc++] = cs;
        for (uint64_t j = 0; j < m; j++) {
            ks_xload_pel key;
            if (get_id16(r, &key.id) < 0) return -1;
            ks_xload_pel *p =
                npel ? bsearch(&key, x->pels + pel0, npel, sizeof(key), pel_cmp) : NULL;
            if (!p || p->consumer != SIZE_MAX) return -1;
            p->consumer = (size_t)i;
        }
    }
    for (size_t i = 0; i < npel; i++)
        if (x->pels[pel0 + i].consumer == SIZE_MAX) return -1;
    named *v = malloc((n ? n : 1) * sizeof(*v));
    if (!v) return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = (named){x->cons[c0 + i].name, x->cons[c0 + i].nl};
    int rep = has_repeat(v, n);
    free(v);
    return rep ? -1 : 0;
}

static int get_group(ks_rdb_in *r, ks_rdb_xstream *x, int rtype)
{
    ks_xload_group g = {0};
    uint64_t er, npel;
    if (get_name(r, x, &g.name, &g.nl) < 0 || get_id(r, &g.last) < 0) return -1;
    if (rtype == KS_RDB_STREAM_LISTPACKS) {
        g.entries_read = KS_XLOAD_DERIVE_READ;
    } else {
        if (ks_rdb_get_count(r, &er) < 0) return -1;
        g.entries_read = (long long)er;
        if (g.entries_read < KS_XENTRIES_READ_INVALID) return -1;
    }
    if (ks_rdb_get_count(r, &npel) < 0) return -1;
    size_t p0 = x->np;
    for (uint64_t i = 0; i < npel; i++) {
        ks_xload_pel p = {.consumer = SIZE_MAX};
        uint64_t t;
        if (get_id16(r, &p.id) < 0 || get_u64le(r, &t) < 0 || ks_rdb_get_count(r, &p.count) < 0)
            return -1;
        p.time = (int64_t)t;
        if (GROW(x, pels, np, capp) < 0) return -1;
        x->pels[x->np++] = p;
    }
    if (npel > 1) qsort(x->pels + p0, npel, sizeof(*x->pels), pel_cmp);
    for (size_t i = 1; i < npel; i++)
        if (pel_cmp(&x->pels[p0 + i - 1], &x->pels[p0 + i]) == 0) return -1;
    size_t c0 = x->nc;
    if (get_consumers(r, x, rtype, p0, (size_t)npel) < 0) return -1;
    g.pel = AS_IDX(p0);
    g.npel = (size_t)npel;
    g.cons = AS_IDX(c0);
    g.ncons = x->nc - c0;
    if (GROW(x, groups, ng, capg) < 0) return -1;
    x->groups[x->ng++] = g;
    return 0;
}

/* ---- The object ---------------------------------------------------------------- */

static int decode(ks_rdb_in *r, int rtype, ks_rdb_xstream *x)
{
    uint64_t nodes, length, ngroups;
    walk_state ws = {0};
    if (ks_rdb_get_count(r, &nodes) < 0) return -1;
    for (uint64_t i = 0; i < nodes; i++)
        if (r->p >= r->end || get_node(r, x, &ws) < 0) return -1;
    ks_xload *l = &x->load;
    if (ks_rdb_get_count(r, &length) < 0 || get_id(r, &l->last) < 0) return -1;
    if (length != x->ne || (ws.any && ks_xid_cmp(&l->last, &ws.prev) < 0)) return -1;
    if (rtype == KS_RDB_STREAM_LISTPACKS) {
        l->first = ws.any_live ? ws.first : (ks_xid){0, 0};
        l->maxdel = (ks_xid){0, 0};
        l->entries_added = length;
    } else {
        if (get_id(r, &l->first) < 0 || get_id(r, &l->maxdel) < 0 ||
            ks_rdb_get_count(r, &l->entries_added) < 0)
            return -1;
        if (ws.any_live && ks_xid_cmp(&l->first, &ws.first) != 0) return -1;
    }
    if (ks_rdb_get_count(r, &ngroups) < 0) return -1;
    for (uint64_t i = 0; i < ngroups; i++)
        if (get_group(r, x, rtype) < 0) return -1;
    named *v = malloc((x->ng ? x->ng : 1) * sizeof(*v));
    if (!v) return -1;
    for (size_t i = 0; i < x->ng; i++)
        v[i] = (named){x->groups[i].name, x->groups[i].nl};
    int rep = has_repeat(v, x->ng);
    free(v);
    if (rep) return -1;
    /* Indices become pointers. */
    for (size_t i = 0; i < x->nn; i++)
        x->nodes[i].mf = &x->el.v[IDX_OF(x->nodes[i].mf)];
    for (size_t i = 0; i < x->ne; i++)
        x->ents[i].f = &x->el.v[IDX_OF(x->ents[i].f)];
    for (size_t i = 0; i < x->ng; i++) {
        x->groups[i].pel = x->pels + IDX_OF(x->groups[i].pel);
        x->groups[i].cons = x->cons + IDX_OF(x->groups[i].cons);
    }
    l->nodes = x->nodes;
    l->nnodes = x->nn;
    l->entries = x->ents;
    l->nentries = x->ne;
    l->groups = x->groups;
    l->ngroups = x->ng;
    return 0;
}

int ks_rdb_stream_decode(ks_rdb_in *r, int rtype, ks_rdb_xstream **out)
{
    ks_rdb_xstream *x = calloc(1, sizeof(*x));
    *out = NULL;
    if (!x) return -1;
    ks_fvec_init(&x->el);
    if (decode(r, rtype, x) < 0) {
        ks_rdb_stream_free(x);
        return -1;
    }
    *out = x;
    return 0;
}

ks_status ks_rdb_stream_restore(ks_ctx *c, const char *key, size_t klen, const ks_rdb_xstream *x)
{
    return ks_xload_write(c, key, klen, &x->load);
}

void ks_rdb_stream_free(ks_rdb_xstream *x)
{
    if (!x) return;
    ks_fvec_free(&x->el);
    free(x->nodes);
    free(x->ents);
    free(x->groups);
    free(x->pels);
    free(x->cons);
    free(x);
}
