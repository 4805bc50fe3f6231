/*
 * ks_stream_dump.c -- a whole stream read out and written in, for DUMP and
 * RESTORE (ks_rdb_stream.c builds Redis's RDB payload over these).
 *
 * Reading: the node records ('N' node -> first id ..., ENCODING.md,
 * "Streams") and the tail in the header give each node's master id, the
 * id Redis keys the node's listpack by; the entries ('E' id -> node ...)
 * are then walked in id order from the first live one (KS-X1).
 *
 * Writing: a new stream version gets one entry key per live entry, one
 * node record per node but the newest, which becomes the tail in the
 * header, and the groups, consumers and both PELs (KS-X2), with the
 * listpack state (entry count with deleted ones, bytes, master fields)
 * Redis has for each node, so XADD after RESTORE opens new nodes where
 * Redis would.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_stream_int.h"

static ks_status corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "stream encoding");
}

/* ---- Reading -------------------------------------------------------------- */

typedef struct node_first {
    uint64_t node;
    ks_xid first;
} node_first;

/* The closed nodes' numbers and first ids, ascending, then the tail. */
static ks_status node_firsts(ks_ctx *c, xs_stream *s, node_first **out, size_t *n)
{
    size_t cap = 16;
    node_first *v = malloc(cap * sizeof(*v));
    *out = NULL;
    *n = 0;
    if (!v) return ks_oom(c);
    ks_miter mi;
    char k[9];
    ks_status st = KS_OK;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    ks_miter_seek(&mi, k, xs_node_key(k, 0));
    for (; ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *sfx = ks_miter_suffix(&mi, &sn), *val = ks_miter_value(&mi, &vn);
        if (sn != 9 || sfx[0] != XS_TAG_NODE) break;
        if (vn != XS_NODE_REC_LEN && vn != XS_NODE_REC_OLD_LEN) {
            st = corrupt(c);
            break;
        }
        if (*n + 2 > cap) {
            node_first *nv = realloc(v, (cap *= 2) * sizeof(*v));
            if (!nv) {
                st = ks_oom(c);
                break;
            }
            v = nv;
        }
        v[*n].node = ks_get_be64(sfx + 1);
        xs_get_id_le(val, &v[*n].first);
        ++*n;
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
    if (st == KS_OK && s->h.tail_total) v[(*n)++] = (node_first){s->h.tail_node, s->h.tail_first};
    if (st != KS_OK) {
        free(v);
        *n = 0;
        return st;
    }
    *out = v;
    return KS_OK;
}

static const node_first *node_find(const node_first *v, size_t n, uint64_t node)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].node == node) return &v[mid];
        if (v[mid].node < node)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

ks_status ks_xentries_by_node(ks_ctx *c, const char *key, size_t klen, ks_xnode_entry_fn fn,
                              void *arg)
{
    xs_stream s;
    ks_status st = xs_open_read(c, key, klen, &s);
    if (st != KS_OK) return st;
    node_first *nodes = NULL;
    size_t nn = 0;
    if (!s.length || (st = node_firsts(c, &s, &nodes, &nn)) != KS_OK) goto out;
    ks_miter mi;
    char k[17];
    ks_fvec fv;
    ks_fvec_init(&fv);
    uint64_t seen = 0;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(&s));
    ks_miter_seek(&mi, k, xs_entry_key(k, &s.h.first));
    while (seen < s.length && ks_miter_valid(&mi)) {
        size_t sn, vn;
        const char *sfx = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn != 17 || sfx[0] != XS_TAG_ENTRY) break;
        ks_xid id;
        uint64_t node;
        xs_get_id_be(sfx + 1, &id);
        fv.n = 0;
        const node_first *nf = NULL;
        if (xs_entry_parse(v, vn, &node, &fv) != 0 || !(nf = node_find(nodes, nn, node))) {
            st = corrupt(c);
            break;
        }
        fn(arg, &nf->first, &id, fv.v, fv.n);
        if (++seen < s.length) ks_miter_next(&mi);
    }
    ks_fvec_free(&fv);
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
    if (st == KS_OK && seen != s.length) st = corrupt(c);
out:
    free(nodes);
    xs_close(&s);
    return st;
}

/* ---- Writing -------------------------------------------------------------- */

static ks_status put_entry(ks_ctx *c, xs_stream *s, const ks_xload_entry *e, uint64_t node)
{
    size_t vsize = ks_varint_len(node) + ks_varint_len(e->n);
    for (size_t i = 0; i < e->n; i++)
        vsize += ks_varint_len(e->f[i].fl) + e->f[i].fl + ks_varint_len(e->f[i].vl) + e->f[i].vl;
    char *val = malloc(vsize), *p = val;
    if (!val) return ks_oom(c);
    p = ks_put_varint(p, node);
    p = ks_put_varint(p, e->n);
    for (size_t i = 0; i < e->n; i++) {
        p = ks_put_varint(p, e->f[i].fl);
        memcpy(p, e->f[i].f, e->f[i].fl);
        p += e->f[i].fl;
        p = ks_put_varint(p, e->f[i].vl);
        memcpy(p, e->f[i].v, e->f[i].vl);
        p += e->f[i].vl;
    }
    char k[17];
    ks_member_put(c, c->db, xs_version(s), k, xs_entry_key(k, &e->id), val, vsize);
    free(val);
    return KS_OK;
}

/* Node nd as the tail (tail) or as a closed record. */
static void put_node(ks_ctx *c, xs_stream *s, const ks_xload_node *nd, uint64_t node, int tail)
{
    xs_hdr *h = &s->h;
    h->tail_node = node;
    h->tail_first = nd->master;
    h->tail_last = nd->last;
    h->tail_live = nd->live;
    h->tail_total = nd->live + nd->deleted;
    h->tail_bytes =
        nd->lp_bytes - xs_lp_int_size((int64_t)nd->live) - xs_lp_int_size((int64_t)nd->deleted);
    h->tail_fhash = xs_fields_hash(nd->mf, nd->nmf);
    h->tail_nfields = nd->nmf;
    if (!tail) xs_tail_close(c, s);
}

static ks_status put_group(ks_ctx *c, xs_stream *s, const ks_xload_group *lg)
{
    xs_group g;
    memset(&g, 0, sizeof(g));
    g.name = lg->name;
    g.nl = lg->nl;
    g.gid = s->h.next_gid++;
    g.last = lg->last;
    g.entries_read = lg->entries_read == KS_XLOAD_DERIVE_READ ? xs_estimate_distance(s, &g.last)
                                                              : lg->entries_read;
    g.next_cid = 1;
    s->h.groups++;
    xs_ccache cc = {0};
    ks_status st = KS_OK;
    if (lg->ncons && !(cc.v = calloc(lg->ncons, sizeof(*cc.v)))) return ks_oom(c);
    cc.cap = lg->ncons;
    for (size_t i = 0; i < lg->ncons; i++) {
        xs_consumer *cs = calloc(1, sizeof(*cs));
        if (!cs || !(cs->name = malloc(lg->cons[i].nl ? lg->cons[i].nl : 1))) {
            free(cs);
            st = ks_oom(c);
            goto out;
        }
        memcpy(cs->name, lg->cons[i].name, lg->cons[i].nl);
        cs->nl = lg->cons[i].nl;
        cs->exists = cs->dirty = 1;
        cs->cid = g.next_cid++;
        cs->seen = lg->cons[i].seen;
        cc.v[cc.n++] = cs;
        g.consumers++;
    }
    for (size_t i = 0; i < lg->npel; i++)
        xs_pel_add(c, s, &g, cc.v[lg->pel[i].consumer], &lg->pel[i].id, lg->pel[i].time,
                   lg->pel[i].count);
    if ((st = xs_consumers_flush(c, s, &g, &cc)) == KS_OK) st = xs_group_put(c, s, &g);
out:
    xs_ccache_free(&cc);
    return st;
}

ks_status ks_xload_write(ks_ctx *c, const char *key, size_t klen, const ks_xload *l)
{
    xs_stream s;
    ks_status st = xs_open_write(c, key, klen, &s);
    if (st != KS_OK) return st;
    xs_create(c, &s);
    xs_hdr *h = &s.h;
    size_t tail = l->nnodes; /* the newest node with live entries */
    for (size_t i = 0; i < l->nnodes; i++)
        if (l->nodes[i].live) tail = i;
    size_t e = 0;
    for (size_t i = 0; i < l->nnodes && st == KS_OK; i++) {
        if (!l->nodes[i].live) continue;
        uint64_t node = ++h->last_node;
        h->nodes++;
        if (!h->first_node) h->first_node = node;
        for (; e < l->nentries && l->entries[e].node == i && st == KS_OK; e++)
            st = put_entry(c, &s, &l->entries[e], node);
        put_node(c, &s, &l->nodes[i], node, i == tail);
    }
    s.length = l->nentries;
    h->last = l->last;
    h->first = l->first;
    h->maxdel = l->maxdel;
    h->entries_added = l->entries_added;
    for (size_t i = 0; i < l->ngroups && st == KS_OK; i++)
        st = put_group(c, &s, &l->groups[i]);
    s.dirty = 1;
    if (st == KS_OK) st = xs_store(&s);
    xs_close(&s);
    return st;
}
