/*
 * ks_stream_pel.c -- the pending entries lists of consumer groups:
 * XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM.
 *
 * On-disk format (ENCODING.md, "Streams"): under the stream's version,
 *   'H' gid:be64 'p' ms:be64 seq:be64             -> delivery_time:le64
 *                                                   delivery_count:le64 consumer
 *   'H' gid:be64 'q' cid:be64 ms:be64 seq:be64    -> ""
 * the group's PEL by id and each consumer's PEL by id (its cid from its
 * record). Every pending entry has exactly one 'p' and one 'q' key (KS-X2,
 * ENCODING.md). So XPENDING, XCLAIM and XAUTOCLAIM cost gets and seeks in
 * the PEL, never a walk of the stream: XCLAIM one PEL get and one entry get
 * per id, XPENDING one seek from the exact smallest pending id plus one
 * step per entry returned.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_stream_int.h"

static ks_status corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "stream PEL encoding");
}

static size_t pel_key(char *k, uint64_t gid, const ks_xid *id)
{
    size_t n = xs_gdata_key(k, gid, XS_SUB_PEL);
    xs_put_id_be(k + n, id);
    return n + 16;
}

static size_t cpel_key(char *k, uint64_t gid, uint64_t cid, const ks_xid *id)
{
    size_t n = xs_gdata_key(k, gid, XS_SUB_CPEL);
    ks_put_be64(k + n, cid);
    xs_put_id_be(k + n + 8, id);
    return n + 24;
}

ks_status xs_pel_get(ks_ctx *c, xs_stream *s, const xs_group *g, const ks_xid *id, xs_pel *p,
                     char **owned)
{
    char k[26];
    size_t vl;
    *owned = NULL;
    eng_status es =
        ks_member_get(c, NULL, c->db, xs_version(s), k, pel_key(k, g->gid, id), owned, &vl);
    if (es == ENG_NOTFOUND) return KS_NOTFOUND;
    if (es != ENG_OK) return ks_engine_err(c, es, "stream read");
    if (vl < 16) return corrupt(c);
    p->time = (int64_t)ks_get_le64(*owned);
    p->count = ks_get_le64(*owned + 8);
    p->cname = *owned + 16;
    p->cnl = vl - 16;
    return KS_OK;
}

void xs_pel_put(ks_ctx *c, xs_stream *s, const xs_group *g, const ks_xid *id, const xs_pel *p)
{
    char k[26], sb[144], *v = sb;
    size_t vl = 16 + p->cnl;
    if (vl > sizeof(sb) && !(v = malloc(vl))) return; /* out of memory: the entry keeps its value */
    ks_put_le64(v, (uint64_t)p->time);
    ks_put_le64(v + 8, p->count);
    memcpy(v + 16, p->cname, p->cnl);
    ks_member_put(c, c->db, xs_version(s), k, pel_key(k, g->gid, id), v, vl);
    if (v != sb) free(v);
}

void xs_pel_add(ks_ctx *c, xs_stream *s, xs_group *g, xs_consumer *cs, const ks_xid *id,
                int64_t time, uint64_t count)
{
    xs_pel p = {time, count, cs->name, cs->nl};
    xs_pel_put(c, s, g, id, &p);
    char k[34];
    ks_member_put(c, c->db, xs_version(s), k, cpel_key(k, g->gid, cs->cid, id), "", 0);
    if (!cs->pel_count++ || ks_xid_cmp(id, &cs->pmin) < 0) cs->pmin = *id, cs->pmin_lost = 0;
    cs->dirty = 1;
    int first = !g->pel_count++;
    if (first || ks_xid_cmp(id, &g->pmin) < 0) g->pmin = *id, g->pmin_lost = 0;
    if (first || ks_xid_cmp(id, &g->pmax) > 0) g->pmax = *id, g->pmax_lost = 0;
}

void xs_pel_remove(ks_ctx *c, xs_stream *s, xs_group *g, xs_consumer *cs, const ks_xid *id)
{
    char k[34];
    ks_member_del(c, c->db, xs_version(s), k, pel_key(k, g->gid, id));
    ks_member_del(c, c->db, xs_version(s), k, cpel_key(k, g->gid, cs->cid, id));
    cs->pel_count--;
    if (ks_xid_cmp(id, &cs->pmin) == 0) cs->pmin_lost = 1;
    cs->dirty = 1;
    g->pel_count--;
    if (ks_xid_cmp(id, &g->pmin) == 0) g->pmin_lost = 1;
    if (ks_xid_cmp(id, &g->pmax) == 0) g->pmax_lost = 1;
}

/* Removes pending id held by the consumer its entry names. */
static ks_status pel_drop(ks_ctx *c, xs_stream *s, xs_group *g, xs_ccache *cc, const ks_xid *id,
                          const xs_pel *p)
{
    xs_consumer *old;
    ks_status st = xs_consumer_get(c, s, g, cc, p->cname, p->cnl, 0, &old);
    if (st != KS_OK) return st;
    if (!old) return corrupt(c);
    xs_pel_remove(c, s, g, old, id);
    return KS_OK;
}

/* ---- Entries collected for the reply ------------------------------------------ */

typedef struct xs_elist {
    ks_xid *ids;
    size_t *off, *nf; /* fields of entry i: fv.v[off[i] .. off[i]+nf[i]) */
    int *exists;
    size_t n, cap;
    ks_fvec fv;
} xs_elist;

static void elist_init(xs_elist *e)
{
    memset(e, 0, sizeof(*e));
    ks_fvec_init(&e->fv);
}

static void elist_free(xs_elist *e)
{
    free(e->ids);
    free(e->off);
    free(e->nf);
    free(e->exists);
    ks_fvec_free(&e->fv);
}

static int elist_push(xs_elist *e, const ks_xid *id, const ks_field *f, size_t n, int exists)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 16;
        ks_xid *ids = realloc(e->ids, cap * sizeof(*ids));
        if (ids) e->ids = ids;
        size_t *off = realloc(e->off, cap * sizeof(*off));
        if (off) e->off = off;
        size_t *nf = realloc(e->nf, cap * sizeof(*nf));
        if (nf) e->nf = nf;
        int *ex = realloc(e->exists, cap * sizeof(*ex));
        if (ex) e->exists = ex;
        if (!ids || !off || !nf || !ex) return -1;
        e->cap = cap;
    }
    e->ids[e->n] = *id;
    e->off[e->n] = e->fv.n;
    e->nf[e->n] = n;
    e->exists[e->n] = exists;
    e->n++;
    for (size_t i = 0; i < n; i++)
        if (ks_fvec_push_copy(&e->fv, f[i].f, f[i].fl, f[i].v, f[i].vl) != 0) return -1;
    return 0;
}

static void elist_push_cb(void *arg, const ks_xid *id, const ks_field *f, size_t n, int exists)
{
    xs_elist *e = arg;
    if (!e->cap && e->n) return; /* an earlier push failed */
    if (elist_push(e, id, f, n, exists) != 0) e->cap = 0, e->n = 1;
}

static void elist_emit(xs_elist *e, ks_xentry_fn fn, void *arg)
{
    for (size_t i = 0; i < e->n; i++)
        fn(arg, &e->ids[i], e->nf[i] ? &e->fv.v[e->off[i]] : NULL, e->nf[i], e->exists[i]);
}

/* Pushes entry id of s (exists 0 when it is gone); *exists says which. */
static ks_status elist_push_entry(ks_ctx *c, xs_stream *s, xs_elist *e, const ks_xid *id,
                                  int justid, int *exists)
{
    ks_fvec fv;
    char *owned = NULL;
    ks_fvec_init(&fv);
    ks_status st = xs_entry_get(c, s, id, NULL, &fv, &owned);
    *exists = st == KS_OK;
    if (st == KS_NOTFOUND) st = KS_OK;
    if (st == KS_OK && (*exists || !justid) &&
        elist_push(e, id, justid ? NULL : fv.v, justid ? 0 : fv.n, *exists) != 0)
        st = ks_oom(c);
    ks_fvec_free(&fv);
    if (owned) eng_free(owned);
    return st;
}

/* ---- XREADGROUP ----------------------------------------------------------------- */

/* Delivers the new entries in e to consumer cs (Redis's streamReplyWithRange
 * with a group): the group's last id and read counter follow, each entry
 * enters both PELs (taken from another consumer when already pending). */
static ks_status deliver(ks_ctx *c, xs_stream *s, xs_group *g, xs_ccache *cc, xs_consumer *cs,
                         const xs_elist *e, int noack)
{
    for (size_t i = 0; i < e->n; i++) {
        const ks_xid *id = &e->ids[i];
        if (ks_xid_cmp(id, &g->last) > 0) {
            if (g->entries_read != KS_XENTRIES_READ_INVALID && !xs_range_has_tombstones(s, id))
                g->entries_read++;
            else if (s->h.entries_added)
                g->entries_read = xs_estimate_distance(s, id);
            g->last = *id;
        }
        if (noack) continue;
        if (g->pel_count && ks_xid_cmp(id, &g->pmax) <= 0) {
            xs_pel p;
            char *owned;
            ks_status st = xs_pel_get(c, s, g, id, &p, &owned);
            if (st == KS_OK) st = pel_drop(c, s, g, cc, id, &p);
            if (owned) eng_free(owned);
            if (st != KS_OK && st != KS_NOTFOUND) return st;
        }
        xs_pel_add(c, s, g, cs, id, c->now_ms, 1);
    }
    return KS_OK;
}

ks_status xs_cpel_ids(ks_ctx *c, xs_stream *s, const xs_group *g, const xs_consumer *cs,
                      const ks_xid *from, uint64_t count, ks_xid **ids, size_t *n)
{
    ks_xid f = *from;
    int whole = ks_xid_cmp(&f, &cs->pmin) <= 0;
    size_t cap = 0;
    *ids = NULL;
    *n = 0;
    if (!cs->pel_count) return KS_OK;
    if (whole) f = cs->pmin;
    char k[34];
    size_t pre = cpel_key(k, g->gid, cs->cid, &f) - 16;
    ks_miter mi;
    ks_status st = KS_OK;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    for (ks_miter_seek(&mi, k, pre + 16); ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn;
        const char *x = ks_miter_suffix(&mi, &sn);
        if (sn != pre + 16 || memcmp(x, k, pre) != 0) break;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            ks_xid *ni = realloc(*ids, cap * sizeof(**ids));
            if (!ni) {
                st = ks_oom(c);
                break;
            }
            *ids = ni;
        }
        xs_get_id_be(x + pre, &(*ids)[(*n)++]);
        /* From its first pending id on, its PEL ends after pel_count ids:
         * do not step into what follows (tombstones of acknowledged ones). */
        if ((count && *n == count) || (whole && *n == cs->pel_count)) break;
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* The history of consumer cs after *after: ids from its PEL, entries read
 * (exists 0 when gone), delivery counts bumped. */
static ks_status history(ks_ctx *c, xs_stream *s, xs_group *g, xs_consumer *cs, const ks_xid *after,
                         uint64_t count, xs_elist *e)
{
    ks_xid from = *after, *ids;
    size_t n;
    if (ks_xid_incr(&from) != 0) return KS_OK;
    ks_status st = xs_cpel_ids(c, s, g, cs, &from, count, &ids, &n);
    for (size_t i = 0; st == KS_OK && i < n; i++) {
        int exists;
        st = elist_push_entry(c, s, e, &ids[i], 0, &exists);
        if (st != KS_OK || !exists) continue;
        xs_pel p;
        char *owned;
        st = xs_pel_get(c, s, g, &ids[i], &p, &owned);
        if (st == KS_OK) {
            p.time = c->now_ms;
            p.count++;
            xs_pel_put(c, s, g, &ids[i], &p);
        } else if (st == KS_NOTFOUND) {
            st = corrupt(c); /* KS-X2: the consumer's PEL names it */
        }
        if (owned) eng_free(owned);
    }
    free(ids);
    return st;
}

ks_status ks_xreadgroup(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                        const char *cn, size_t cnl, const ks_xid *after, uint64_t count, int noack,
                        ks_xentry_fn fn, void *arg, int *served, int *miss)
{
    xs_stream s;
    xs_group g;
    xs_ccache cc = {0};
    xs_elist e;
    *served = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, miss);
    if (st != KS_OK) return st;
    elist_init(&e);
    if (!after) {
        ks_xid from = g.last, max = {UINT64_MAX, UINT64_MAX};
        uint64_t n = 0;
        if (!s.length || ks_xid_incr(&from) != 0) goto out;
        st = xs_range_opened(c, &s, &from, &max, count, 0, elist_push_cb, &e, &n);
        if (st == KS_OK && e.n && !e.cap) st = ks_oom(c);
        if (st != KS_OK || !e.n) goto out;
    }
    *served = 1;
    xs_consumer *cs;
    st = xs_consumer_get(c, &s, &g, &cc, cn, cnl, 1, &cs);
    if (st != KS_OK) goto out;
    cs->seen = c->now_ms;
    cs->dirty = 1;
    st = after ? history(c, &s, &g, cs, after, count, &e) : deliver(c, &s, &g, &cc, cs, &e, noack);
    if (st == KS_OK) st = xs_consumers_flush(c, &s, &g, &cc);
    if (st == KS_OK) st = xs_group_put(c, &s, &g);
    if (st == KS_OK) elist_emit(&e, fn, arg);
out:
    elist_free(&e);
    xs_ccache_free(&cc);
    xs_close(&s);
    return st;
}

/* ---- XACK ------------------------------------------------------------------------ */

ks_status ks_xack(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                  const ks_xid *ids, size_t n, uint64_t *acked)
{
    xs_stream s;
    xs_group g;
    xs_ccache cc = {0};
    int miss = 0;
    *acked = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, &miss);
    if (st == KS_NOTFOUND) return KS_OK;
    if (st != KS_OK) return st;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        if (!g.pel_count) break;
        xs_pel p;
        char *owned;
        st = xs_pel_get(c, &s, &g, &ids[i], &p, &owned);
        if (st == KS_OK) {
            st = pel_drop(c, &s, &g, &cc, &ids[i], &p);
            ++*acked;
        }
        if (owned) eng_free(owned);
        if (st == KS_NOTFOUND) st = KS_OK;
    }
    if (st == KS_OK && *acked) st = xs_consumers_flush(c, &s, &g, &cc);
    if (st == KS_OK && *acked) st = xs_group_put(c, &s, &g);
    xs_ccache_free(&cc);
    xs_close(&s);
    return st;
}

/* ---- XPENDING ---------------------------------------------------------------------- */

ks_status ks_xpending_summary(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                              ks_xpending_sum *out, int *miss)
{
    xs_stream s;
    xs_group g;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 0, &s, &g, miss);
    if (st != KS_OK) return st;
    out->count = g.pel_count;
    out->min = g.pmin;
    out->max = g.pmax;
    xs_close(&s);
    return KS_OK;
}

ks_status ks_xpending_range(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                            const char *cn, size_t cnl, const ks_xid *start, const ks_xid *end,
                            uint64_t count, long long min_idle, ks_xpel_fn fn, void *arg,
                            uint64_t *n, int *miss)
{
    xs_stream s;
    xs_group g;
    xs_ccache cc = {0};
    *n = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 0, &s, &g, miss);
    if (st != KS_OK) return st;
    xs_consumer *cs = NULL;
    if (cn && (st = xs_consumer_get(c, &s, &g, &cc, cn, cnl, 0, &cs)) != KS_OK) goto out;
    uint64_t have = cn ? (cs ? cs->pel_count : 0) : g.pel_count;
    if (!have || !count || ks_xid_cmp(start, end) > 0) goto out;
    ks_xid from = *start;
    const ks_xid *low = cs ? &cs->pmin : &g.pmin;
    int whole = ks_xid_cmp(&from, low) <= 0;
    if (whole) from = *low;
    uint64_t visited = 0;
    char k[34];
    size_t kl = cs ? cpel_key(k, g.gid, cs->cid, &from) : pel_key(k, g.gid, &from), pre = kl - 16;
    ks_miter mi;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(&s));
    for (ks_miter_seek(&mi, k, kl); ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *x = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn != kl || memcmp(x, k, pre) != 0) break;
        visited++;
        ks_xpel_info pi;
        xs_get_id_be(x + pre, &pi.id);
        if (ks_xid_cmp(&pi.id, end) > 0) break;
        xs_pel p;
        char *owned = NULL;
        if (cs) { /* the consumer's PEL names the id: its entry holds the rest */
            st = xs_pel_get(c, &s, &g, &pi.id, &p, &owned);
            if (st == KS_NOTFOUND) st = corrupt(c);
        } else if (vn < 16) {
            st = corrupt(c);
        } else {
            p = (xs_pel){(int64_t)ks_get_le64(v), ks_get_le64(v + 8), v + 16, vn - 16};
        }
        if (st == KS_OK && (!min_idle || c->now_ms - p.time >= min_idle)) {
            pi.consumer = p.cname;
            pi.cl = p.cnl;
            pi.delivery_time = p.time;
            pi.delivery_count = p.count;
            fn(arg, &pi);
            ++*n;
        }
        if (owned) eng_free(owned);
        if (st != KS_OK || *n == count || ks_xid_cmp(&pi.id, end) >= 0) break;
        /* The last pending id: stop rather than step over what follows. */
        if (cs ? whole && visited == cs->pel_count : ks_xid_cmp(&pi.id, &g.pmax) >= 0) break;
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
out:
    xs_ccache_free(&cc);
    xs_close(&s);
    return st;
}

/* ---- XCLAIM, XAUTOCLAIM -------------------------------------------------------------- */

/* Gives pending id (entry *p, or none: FORCE) to consumer cs with the new
 * delivery time and count. */
static ks_status claim_one(ks_ctx *c, xs_stream *s, xs_group *g, xs_ccache *cc, xs_consumer *cs,
                           const ks_xid *id, const xs_pel *p, int64_t time, uint64_t count)
{
    if (p && p->cnl == cs->nl && memcmp(p->cname, cs->name, cs->nl) == 0) {
        xs_pel np = {time, count, cs->name, cs->nl};
        xs_pel_put(c, s, g, id, &np);
        return KS_OK;
    }
    if (p) {
        ks_status st = pel_drop(c, s, g, cc, id, p);
        if (st != KS_OK) return st;
    }
    xs_pel_add(c, s, g, cs, id, time, count);
    return KS_OK;
}

ks_status ks_xclaim(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                    const char *cn, size_t cnl, const ks_xid *ids, size_t n,
                    const ks_xclaim_opts *o, ks_xentry_fn fn, void *arg, uint64_t *claimed,
                    int *miss)
{
    xs_stream s;
    xs_group g;
    xs_ccache cc = {0};
    xs_elist e;
    *claimed = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, miss);
    if (st != KS_OK) return st;
    elist_init(&e);
    int64_t now = c->now_ms, dtime = o->delivery_time;
    if (dtime < 0 || dtime > now) dtime = now;
    if (ks_xid_cmp(&o->lastid, &g.last) > 0) g.last = o->lastid;
    xs_consumer *cs = NULL;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        xs_pel p;
        char *owned = NULL;
        int has = 0, exists;
        if (g.pel_count) {
            st = xs_pel_get(c, &s, &g, &ids[i], &p, &owned);
            has = st == KS_OK;
            if (st == KS_NOTFOUND) st = KS_OK;
        }
        size_t before = e.n;
        if (st == KS_OK) st = elist_push_entry(c, &s, &e, &ids[i], o->justid, &exists);
        if (st == KS_OK && !exists) {
            e.n = before; /* a gone entry leaves the PEL and the reply */
            if (has) st = pel_drop(c, &s, &g, &cc, &ids[i], &p);
        } else if (st == KS_OK && (has || o->force)) {
            uint64_t cnt = has ? p.count : 1;
            if (has && o->min_idle && now - p.time < o->min_idle) {
                e.n = before;
            } else {
                if (!cs) st = xs_consumer_get(c, &s, &g, &cc, cn, cnl, 1, &cs);
                if (st == KS_OK) {
                    cs->seen = now;
                    cs->dirty = 1;
                    cnt = o->retrycount >= 0 ? (uint64_t)o->retrycount : cnt + !o->justid;
                    st = claim_one(c, &s, &g, &cc, cs, &ids[i], has ? &p : NULL, dtime, cnt);
                    ++*claimed;
                }
            }
        } else if (st == KS_OK) {
            e.n = before;
        }
        if (owned) eng_free(owned);
    }
    if (st == KS_OK) st = xs_consumers_flush(c, &s, &g, &cc);
    if (st == KS_OK) st = xs_group_put(c, &s, &g);
    if (st == KS_OK) elist_emit(&e, fn, arg);
    elist_free(&e);
    xs_ccache_free(&cc);
    xs_close(&s);
    return st;
}

/* Up to max pending entries of g from *from on (copies). */
typedef struct xs_pcand {
    ks_xid id;
    xs_pel p;
} xs_pcand;

static ks_status pel_collect(ks_ctx *c, xs_stream *s, const xs_group *g, const ks_xid *from,
                             uint64_t max, xs_pcand **out, size_t *n, ks_fvec *store)
{
    char k[26];
    size_t kl = pel_key(k, g->gid, from), pre = kl - 16, cap = 0;
    ks_status st = KS_OK;
    ks_miter mi;
    *out = NULL;
    *n = 0;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    for (ks_miter_seek(&mi, k, kl); ks_miter_valid(&mi) && max; ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *x = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn != kl || memcmp(x, k, pre) != 0) break;
        if (vn < 16) {
            st = corrupt(c);
            break;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            xs_pcand *nv = realloc(*out, cap * sizeof(*nv));
            if (!nv) {
                st = ks_oom(c);
                break;
            }
            *out = nv;
        }
        if (ks_fvec_push_copy(store, v + 16, vn - 16, NULL, 0) != 0) {
            st = ks_oom(c);
            break;
        }
        xs_pcand *pc = &(*out)[(*n)++];
        xs_get_id_be(x + pre, &pc->id);
        const ks_field *f = &store->v[store->n - 1];
        pc->p = (xs_pel){(int64_t)ks_get_le64(v), ks_get_le64(v + 8), f->f, f->fl};
        if (*n == max || ks_xid_cmp(&pc->id, &g->pmax) >= 0) break; /* the last one */
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

ks_status ks_xautoclaim(ks_ctx *c, const char *key, size_t klen, const char *gn, size_t gl,
                        const char *cn, size_t cnl, long long min_idle, const ks_xid *start,
                        uint64_t count, int justid, const ks_xautoclaim_cbs *cb, int *miss)
{
    uint64_t nclaimed = 0, ndel = 0, *claimed = &nclaimed, *ndeleted = &ndel;
    ks_xid nx = {0, 0}, *next = &nx;
    xs_stream s;
    xs_group g;
    xs_ccache cc = {0};
    xs_elist e;
    ks_fvec store;
    xs_pcand *cand = NULL;
    ks_xid *gone = NULL;
    size_t ncand = 0, i = 0;
    ks_status st = xs_open_group(c, key, klen, gn, gl, 1, &s, &g, miss);
    if (st != KS_OK) return st;
    elist_init(&e);
    ks_fvec_init(&store);
    uint64_t attempts = count * 10;
    if (g.pel_count) {
        ks_xid from = *start;
        if (ks_xid_cmp(&from, &g.pmin) < 0) from = g.pmin;
        st = pel_collect(c, &s, &g, &from, attempts + 1, &cand, &ncand, &store);
    }
    if (st == KS_OK && !(gone = malloc((count < ncand ? count : ncand) * sizeof(*gone) + 1)))
        st = ks_oom(c);
    xs_consumer *cs = NULL;
    while (st == KS_OK && attempts-- && count && i < ncand) {
        xs_pcand *pc = &cand[i++];
        int exists;
        size_t before = e.n;
        st = elist_push_entry(c, &s, &e, &pc->id, justid, &exists);
        if (st != KS_OK) break;
        if (!exists) {
            e.n = before;
            st = pel_drop(c, &s, &g, &cc, &pc->id, &pc->p);
            gone[(*ndeleted)++] = pc->id;
            count--;
            continue;
        }
        if (min_idle && c->now_ms - pc->p.time < min_idle) {
            e.n = before;
            continue;
        }
        if (!cs && (st = xs_consumer_get(c, &s, &g, &cc, cn, cnl, 1, &cs)) != KS_OK) break;
        cs->seen = c->now_ms;
        cs->dirty = 1;
        st = claim_one(c, &s, &g, &cc, cs, &pc->id, &pc->p, c->now_ms, pc->p.count + !justid);
        ++*claimed;
        count--;
    }
    if (i < ncand) *next = cand[i].id;
    if (st == KS_OK) st = xs_consumers_flush(c, &s, &g, &cc);
    if (st == KS_OK) st = xs_group_put(c, &s, &g);
    if (st == KS_OK) {
        cb->head_fn(cb->arg, next, *claimed);
        elist_emit(&e, cb->fn, cb->arg);
        cb->del_fn(cb->arg, gone, *ndeleted);
    }
    free(gone);
    free(cand);
    ks_fvec_free(&store);
    elist_free(&e);
    xs_ccache_free(&cc);
    xs_close(&s);
    return st;
}
