/*
 * ks_stream_group.c -- consumer groups and consumers of a stream: their
 * records, XGROUP CREATE/SETID/DESTROY/CREATECONSUMER/DELCONSUMER, XINFO
 * GROUPS/CONSUMERS.
 *
 * On-disk format (ENCODING.md, "Streams"): under the stream's version,
 *   'G' name                -> gid last:id entries_read pel_count consumers
 *                              next_cid pel_min:id pel_max:id   (le64 each)
 *   'H' gid:be64 'c' name   -> cid seen_time pel_count pel_min:id
 * and everything else of a group under 'H' gid (its PELs, ks_stream_pel.c),
 * so XGROUP DESTROY is one record delete and one range delete. pel_min /
 * pel_max are kept exact, so XPENDING's summary and every PEL walk start at
 * a live entry instead of stepping over the tombstones of acknowledged ones;
 * when a command removes the entry at one of them it seeks the next live one
 * once, at the end (each tombstone is crossed by at most one such seek).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_stream_int.h"

static ks_status corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "stream group encoding");
}

/* A suffix: pre (pn bytes) then name; in sbuf when it fits, else malloc'd
 * into *heap. NULL on out-of-memory. */
static char *sfx(char *sbuf, size_t cap, const char *pre, size_t pn, const char *name, size_t nl,
                 char **heap)
{
    char *p = sbuf;
    *heap = NULL;
    if (pn + nl > cap && !(p = *heap = malloc(pn + nl))) return NULL;
    memcpy(p, pre, pn);
    if (nl) memcpy(p + pn, name, nl);
    return p;
}

/* ---- Group records -------------------------------------------------------- */

static void group_parse(xs_group *g, const char *v)
{
    g->gid = ks_get_le64(v);
    xs_get_id_le(v + 8, &g->last);
    g->entries_read = (long long)ks_get_le64(v + 24);
    g->pel_count = ks_get_le64(v + 32);
    g->consumers = ks_get_le64(v + 40);
    g->next_cid = ks_get_le64(v + 48);
    xs_get_id_le(v + 56, &g->pmin);
    xs_get_id_le(v + 72, &g->pmax);
    g->pmin_lost = g->pmax_lost = 0;
}

ks_status xs_group_get(ks_ctx *c, xs_stream *s, const char *name, size_t nl, xs_group *g)
{
    char sb[128], *heap, *v = NULL;
    const char tag = XS_TAG_GROUP;
    char *k = sfx(sb, sizeof(sb), &tag, 1, name, nl, &heap);
    if (!k) return ks_oom(c);
    size_t vl;
    eng_status es = ks_member_get(c, NULL, c->db, xs_version(s), k, 1 + nl, &v, &vl);
    free(heap);
    if (es == ENG_NOTFOUND) return KS_NOTFOUND;
    if (es != ENG_OK) return ks_engine_err(c, es, "stream read");
    ks_status st = KS_OK;
    if (vl != XS_GROUP_LEN)
        st = corrupt(c);
    else
        group_parse(g, v);
    g->name = name;
    g->nl = nl;
    eng_free(v);
    return st;
}

/* The first (rev: last) pending id of g from *from on. */
static ks_status pel_edge(ks_ctx *c, xs_stream *s, uint64_t gid, char sub, uint64_t cid,
                          const ks_xid *from, int rev, ks_xid *out, int *found)
{
    char k[34];
    size_t pre = xs_gdata_key(k, gid, sub);
    if (sub == XS_SUB_CPEL) ks_put_be64(k + pre, cid), pre += 8;
    xs_put_id_be(k + pre, from);
    ks_miter mi;
    *found = 0;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    if (rev)
        ks_miter_seek_prev(&mi, k, pre + 16);
    else
        ks_miter_seek(&mi, k, pre + 16);
    if (ks_miter_valid(&mi)) {
        size_t sn;
        const char *x = ks_miter_suffix(&mi, &sn);
        if (sn == pre + 16 && memcmp(x, k, pre) == 0) {
            xs_get_id_be(x + pre, out);
            *found = 1;
        }
    }
    return ks_miter_close(&mi, c);
}

ks_status xs_group_put(ks_ctx *c, xs_stream *s, xs_group *g)
{
    ks_status st = KS_OK;
    int found;
    if (g->pel_count && g->pmin_lost) {
        st = pel_edge(c, s, g->gid, XS_SUB_PEL, 0, &g->pmin, 0, &g->pmin, &found);
        if (st == KS_OK && !found) st = corrupt(c);
    }
    if (st == KS_OK && g->pel_count && g->pmax_lost) {
        st = pel_edge(c, s, g->gid, XS_SUB_PEL, 0, &g->pmax, 1, &g->pmax, &found);
        if (st == KS_OK && !found) st = corrupt(c);
    }
    if (st != KS_OK) return st;
    g->pmin_lost = g->pmax_lost = 0;
    char v[XS_GROUP_LEN];
    ks_put_le64(v, g->gid);
    xs_put_id_le(v + 8, &g->last);
    ks_put_le64(v + 24, (uint64_t)g->entries_read);
    ks_put_le64(v + 32, g->pel_count);
    ks_put_le64(v + 40, g->consumers);
    ks_put_le64(v + 48, g->next_cid);
    xs_put_id_le(v + 56, &g->pmin);
    xs_put_id_le(v + 72, &g->pmax);
    char sb[128], *heap;
    const char tag = XS_TAG_GROUP;
    char *k = sfx(sb, sizeof(sb), &tag, 1, g->name, g->nl, &heap);
    if (!k) return ks_oom(c);
    ks_member_put(c, c->db, xs_version(s), k, 1 + g->nl, v, sizeof(v));
    free(heap);
    return KS_OK;
}

void xs_group_lag(const xs_stream *s, const xs_group *g, int *valid, long long *lag)
{
    *valid = 1;
    *lag = 0;
    if (!s->h.entries_added) return;
    if (g->entries_read != KS_XENTRIES_READ_INVALID && !xs_range_has_tombstones(s, &g->last)) {
        *lag = (long long)s->h.entries_added - g->entries_read;
        return;
    }
    long long er = xs_estimate_distance(s, &g->last);
    if (er != KS_XENTRIES_READ_INVALID)
        *lag = (long long)s->h.entries_added - er;
    else
        *valid = 0;
}

ks_status xs_open_group(ks_ctx *c, const char *key, size_t klen, const char *gname, size_t gl,
                        int write, xs_stream *s, xs_group *g, int *miss)
{
    ks_status st = write ? xs_open_write(c, key, klen, s) : xs_open_read(c, key, klen, s);
    if (st == KS_NOTFOUND) *miss = KS_XMISS_KEY;
    if (st != KS_OK) return st;
    if (!s->exists) {
        xs_close(s);
        *miss = KS_XMISS_KEY;
        return KS_NOTFOUND;
    }
    st = xs_group_get(c, s, gname, gl, g);
    if (st == KS_NOTFOUND) *miss = KS_XMISS_GROUP;
    if (st != KS_OK) xs_close(s);
    return st;
}

/* ---- Consumer records ------------------------------------------------------ */

static char *consumer_key(char *sb, size_t cap, uint64_t gid, const char *cn, size_t cnl,
                          char **heap)
{
    char pre[10];
    xs_gdata_key(pre, gid, XS_SUB_CONSUMER);
    return sfx(sb, cap, pre, 10, cn, cnl, heap);
}

ks_status xs_consumer_get(ks_ctx *c, xs_stream *s, xs_group *g, xs_ccache *cc, const char *cn,
                          size_t cnl, int create, xs_consumer **out)
{
    *out = NULL;
    xs_consumer *cs;
    for (size_t i = 0; i < cc->n; i++)
        if (cc->v[i]->nl == cnl && memcmp(cc->v[i]->name, cn, cnl) == 0) {
            cs = cc->v[i];
            if (!cs->exists && create) goto make;
            *out = cs->exists ? cs : NULL;
            return KS_OK;
        }
    if (cc->n == cc->cap) {
        size_t cap = cc->cap ? cc->cap * 2 : 4;
        xs_consumer **nv = realloc(cc->v, cap * sizeof(*nv));
        if (!nv) return ks_oom(c);
        cc->v = nv;
        cc->cap = cap;
    }
    if (!(cs = calloc(1, sizeof(*cs)))) return ks_oom(c);
    if (!(cs->name = malloc(cnl ? cnl : 1))) {
        free(cs);
        return ks_oom(c);
    }
    memcpy(cs->name, cn, cnl);
    cs->nl = cnl;
    cc->v[cc->n++] = cs;
    char sb[128], *heap, *v = NULL;
    char *k = consumer_key(sb, sizeof(sb), g->gid, cn, cnl, &heap);
    if (!k) return ks_oom(c);
    size_t vl;
    eng_status es = ks_member_get(c, NULL, c->db, xs_version(s), k, 10 + cnl, &v, &vl);
    free(heap);
    if (es == ENG_OK) {
        ks_status st = KS_OK;
        if (vl != XS_CONSUMER_LEN) {
            st = corrupt(c);
        } else {
            cs->exists = 1;
            cs->cid = ks_get_le64(v);
            cs->seen = (int64_t)ks_get_le64(v + 8);
            cs->pel_count = ks_get_le64(v + 16);
            xs_get_id_le(v + 24, &cs->pmin);
        }
        eng_free(v);
        if (st != KS_OK) return st;
        *out = cs;
        return KS_OK;
    }
    if (es != ENG_NOTFOUND) return ks_engine_err(c, es, "stream read");
    if (!create) return KS_OK;
make:
    cs->exists = cs->dirty = 1;
    cs->cid = g->next_cid++;
    cs->seen = c->now_ms;
    cs->pel_count = 0;
    cs->pmin = (ks_xid){0, 0};
    g->consumers++;
    *out = cs;
    return KS_OK;
}

ks_status xs_consumers_flush(ks_ctx *c, xs_stream *s, xs_group *g, xs_ccache *cc)
{
    for (size_t i = 0; i < cc->n; i++) {
        xs_consumer *cs = cc->v[i];
        if (!cs->dirty) continue;
        char sb[128], *heap;
        char *k = consumer_key(sb, sizeof(sb), g->gid, cs->name, cs->nl, &heap);
        if (!k) return ks_oom(c);
        if (!cs->exists) {
            ks_member_del(c, c->db, xs_version(s), k, 10 + cs->nl);
            free(heap);
            continue;
        }
        int found;
        ks_status st = KS_OK;
        if (cs->pel_count && cs->pmin_lost) {
            st = pel_edge(c, s, g->gid, XS_SUB_CPEL, cs->cid, &cs->pmin, 0, &cs->pmin, &found);
            if (st == KS_OK && !found) st = corrupt(c);
        }
        if (st != KS_OK) {
            free(heap);
            return st;
        }
        cs->pmin_lost = 0;
        char v[XS_CONSUMER_LEN];
        ks_put_le64(v, cs->cid);
        ks_put_le64(v + 8, (uint64_t)cs->seen);
        ks_put_le64(v + 16, cs->pel_count);
        xs_put_id_le(v + 24, &cs->pmin);
        ks_member_put(c, c->db, xs_version(s), k, 10 + cs->nl, v, sizeof(v));
        free(heap);
        cs->dirty = 0;
    }
    return KS_OK;
}

void xs_ccache_free(xs_ccache *cc)
{
    for (size_t i = 0; i < cc->n; i++) {
        free(cc->v[i]->name);
        free(cc->v[i]);
    }
    free(cc->v);
    memset(cc, 0, sizeof(*cc));
}

/* ---- XGROUP ------------------------------------------------------------------ */

ks_status ks_xgroup_create(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                           const ks_xid *id, long long entries_read, int mkstream, int *created)
{
    xs_stream s;
    xs_group g;
    *created = 0;
    ks_status st = xs_open_write(c, key, klen, &s);
    if (st != KS_OK) return st;
    if (!s.exists) {
        if (!mkstream) {
            xs_close(&s);
            return KS_NOTFOUND;
        }
        xs_create(c, &s);
    }
    st = xs_group_get(c, &s, gn, gl, &g);
    if (st == KS_NOTFOUND) {
        memset(&g, 0, sizeof(g));
        g.name = gn;
        g.nl = gl;
        g.gid = s.h.next_gid++;
        g.last = id ? *id : s.h.last;
        g.entries_read = entries_read;
        g.next_cid = 1;
        s.h.groups++;
        s.dirty = 1;
        st = xs_group_put(c, &s, &g);
        *created = 1;
    }
    if (st == KS_OK) st = xs_store(&s);
    xs_close(&s);
    return st;
}

ks_status ks_xgroup_setid(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                          const ks_xid *id, long long entries_read, int *miss)
{
    xs_stream s;
    xs_group g;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, miss);
    if (st != KS_OK) return st;
    g.last = id ? *id : s.h.last;
    g.entries_read = entries_read;
    st = xs_group_put(c, &s, &g);
    xs_close(&s);
    return st;
}

ks_status ks_xgroup_destroy(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                            int *destroyed)
{
    xs_stream s;
    xs_group g;
    int miss = 0;
    *destroyed = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, &miss);
    if (st == KS_NOTFOUND && miss == KS_XMISS_GROUP) return KS_OK;
    if (st != KS_OK) return st;
    char sb[128], *heap;
    const char tag = XS_TAG_GROUP;
    char *k = sfx(sb, sizeof(sb), &tag, 1, gn, gl, &heap);
    if (!k) {
        xs_close(&s);
        return ks_oom(c);
    }
    ks_member_del(c, c->db, xs_version(&s), k, 1 + gl);
    free(heap);
    char a[9], b[9];
    a[0] = b[0] = XS_TAG_GDATA;
    ks_put_be64(a + 1, g.gid);
    ks_put_be64(b + 1, g.gid + 1);
    ks_members_delete_range(c, c->db, xs_version(&s), a, 9, b, 9);
    s.h.groups--;
    s.dirty = 1;
    st = xs_store(&s);
    *destroyed = st == KS_OK;
    xs_close(&s);
    return st;
}

ks_status ks_xgroup_createconsumer(ks_ctx *c, const char *key, size_t klen, const char *gn,
                                   size_t gl, const char *cn, size_t cnl, int *created, int *miss)
{
    xs_stream s;
    xs_group g;
    xs_ccache cc = {0};
    *created = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, miss);
    if (st != KS_OK) return st;
    xs_consumer *cs;
    st = xs_consumer_get(c, &s, &g, &cc, cn, cnl, 0, &cs);
    if (st == KS_OK && !cs) {
        st = xs_consumer_get(c, &s, &g, &cc, cn, cnl, 1, &cs);
        if (st == KS_OK) st = xs_consumers_flush(c, &s, &g, &cc);
        if (st == KS_OK) st = xs_group_put(c, &s, &g);
        *created = st == KS_OK;
    }
    xs_ccache_free(&cc);
    xs_close(&s);
    return st;
}

ks_status ks_xgroup_delconsumer(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                                const char *cn, size_t cnl, uint64_t *pending, int *miss)
{
    xs_stream s;
    xs_group g;
    xs_ccache cc = {0};
    *pending = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, miss);
    if (st != KS_OK) return st;
    xs_consumer *cs;
    st = xs_consumer_get(c, &s, &g, &cc, cn, cnl, 0, &cs);
    if (st != KS_OK || !cs) goto out;
    ks_xid *ids, zero = {0, 0};
    size_t n;
    st = xs_cpel_ids(c, &s, &g, cs, &zero, 0, &ids, &n);
    for (size_t i = 0; st == KS_OK && i < n; i++)
        xs_pel_remove(c, &s, &g, cs, &ids[i]);
    free(ids);
    if (st != KS_OK) goto out;
    *pending = n;
    cs->exists = 0; /* flush deletes its record */
    cs->dirty = 1;
    g.consumers--;
    st = xs_consumers_flush(c, &s, &g, &cc);
    if (st == KS_OK) st = xs_group_put(c, &s, &g);
out:
    xs_ccache_free(&cc);
    xs_close(&s);
    return st;
}

/* ---- XINFO GROUPS / CONSUMERS --------------------------------------------------- */

ks_status ks_xgroups(ks_ctx *c, const char *key, size_t klen, ks_xgroup_fn fn, void *arg,
                     uint64_t *n)
{
    xs_stream s;
    *n = 0;
    ks_status st = xs_open_read(c, key, klen, &s);
    if (st != KS_OK) return st;
    ks_miter mi;
    const char tag = XS_TAG_GROUP;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(&s));
    for (ks_miter_seek(&mi, &tag, 1); ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *x = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn < 1 || x[0] != XS_TAG_GROUP) break;
        if (vn != XS_GROUP_LEN) {
            st = corrupt(c);
            break;
        }
        xs_group g;
        group_parse(&g, v);
        ks_xgroup_info gi = {.name = x + 1,
                             .nl = sn - 1,
                             .consumers = g.consumers,
                             .pending = g.pel_count,
                             .last_id = g.last,
                             .entries_read = g.entries_read};
        xs_group_lag(&s, &g, &gi.lag_valid, &gi.lag);
        fn(arg, &gi);
        ++*n;
    }
    ks_status cst = ks_miter_close(&mi, c);
    xs_close(&s);
    return st != KS_OK ? st : cst;
}

ks_status ks_xconsumers(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                        ks_xconsumer_fn fn, void *arg, uint64_t *n, int *miss)
{
    xs_stream s;
    xs_group g;
    *n = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 0, &s, &g, miss);
    if (st != KS_OK) return st;
    char k[10];
    xs_gdata_key(k, g.gid, XS_SUB_CONSUMER);
    ks_miter mi;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(&s));
    for (ks_miter_seek(&mi, k, 10); ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *x = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn < 10 || memcmp(x, k, 10) != 0) break;
        if (vn != XS_CONSUMER_LEN) {
            st = corrupt(c);
            break;
        }
        ks_xconsumer_info ci = {.name = x + 10,
                                .nl = sn - 10,
                                .pending = ks_get_le64(v + 16),
                                .seen_time = (int64_t)ks_get_le64(v + 8)};
        fn(arg, &ci);
        ++*n;
    }
    ks_status cst = ks_miter_close(&mi, c);
    xs_close(&s);
    return st != KS_OK ? st : cst;
}
