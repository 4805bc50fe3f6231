/*
 * ks_set_ops.c -- the set commands that draw random members (SPOP,
 * SRANDMEMBER) and those over several sets (SINTER, SINTERCARD, SUNION,
 * SDIFF and their STORE forms), with Redis 7.0's case rules (t_set.c).
 *
 * On-disk format: ENCODING.md, "Sets" (ks_set.c reads and writes it). A
 * random member of a packed set, or of a big one of at most
 * KS_SET_EXACT_RANDOM members, is drawn exactly from the whole set read
 * into memory. On a bigger set a draw seeks to a random 64-bit point among
 * the members' hashes ('d' db be64(version) be64(hash) member) and then
 * takes 0..KS_SET_DRAW_WINDOW-1 more steps, wrapping at the end: each
 * member's chance is then the average of 16 hash gaps, within about 25% of
 * 1/n (ENCODING.md says why); no point is drawn in the set's hole (KS-T1),
 * and no draw walks over the hole's tombstones. SPOP without a count reads
 * a window of KS_SET_POP_WINDOW members where the hole ends (from a random
 * point when there is none), pops one at random and keeps the others in
 * memory for the set's next pops; the window's pops then extend the hole,
 * so a drain never steps over its own tombstones (spop_big_one).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_set.h"

/* ---- Drawing members ----------------------------------------------------------- */

typedef struct drawer {
    ks_ctx *c;
    ks_fvec all; /* exact: every member */
    int exact;
    ks_miter mi;      /* window draws: an iterator over the version */
    ks_set_hole hole; /* the set's (KS-T1): no point in it is drawn */
    int tailed;       /* the hole's tail is known */
} drawer;

static void seek_point(drawer *d, uint64_t p)
{
    char at[8];
    ks_put_be64(at, p);
    ks_miter_seek(&d->mi, at, 8);
}

static ks_status drawer_open(ks_ctx *c, ks_sview *v, drawer *d)
{
    d->c = c;
    ks_fvec_init(&d->all);
    d->exact = !v->m.big || v->m.count <= KS_SET_EXACT_RANDOM;
    ks_set_hole_of(&v->m, &d->hole);
    if (d->exact) return ks_sview_all(c, v, &d->all);
    ks_miter_open(&d->mi, c, NULL, c->db, v->m.version);
    d->tailed = d->hole.lo != d->hole.hi && d->hole.tail != d->hole.lo;
    return KS_OK;
}

/* Past the version's last member: on to its first live one, which is the
 * end of hole h when no live member lies below it (the hole covers hash 0,
 * or its tail is above it): a seek there, not a walk over its tombstones. */
static void wrap_first(drawer *d, const ks_set_hole *h)
{
    if (h->lo != h->hi && (ks_set_hole_has(h, 0) || (h->tail != h->lo && h->tail > h->lo)))
        seek_point(d, h->hi);
    else
        ks_miter_first(&d->mi);
}

/* One step of a draw (the iterator is on a member): from the tail, a jump
 * to the hole's end. */
static void draw_step(drawer *d)
{
    size_t sn;
    const char *s = ks_miter_suffix(&d->mi, &sn);
    if (d->tailed && sn >= 8 && ks_get_be64(s) == d->hole.tail)
        seek_point(d, d->hole.hi);
    else
        ks_miter_next(&d->mi);
}

static ks_status drawer_close(drawer *d)
{
    ks_fvec_free(&d->all);
    return d->exact ? KS_OK : ks_miter_close(&d->mi, d->c);
}

/* A random point outside the set's hole. One inside would land on the
 * member after the hole (whose chance the hole's width would swell) after
 * a walk over the hole's tombstones: it is drawn again (the hole is at most
 * about KS_SET_REWRITE_RATIO / (1 + KS_SET_REWRITE_RATIO) of the points). */
static uint64_t draw_point(drawer *d)
{
    uint64_t p = ks_rand(d->c->ks);
    for (int i = 0; i < 256 && ks_set_hole_has(&d->hole, p); i++)
        p = ks_rand(d->c->ks);
    return ks_set_hole_has(&d->hole, p) ? d->hole.hi : p;
}

/* One window draw; 0, or -1 when the version holds no member (corrupt).
 * A point between the tail and the hole lands on the hole's end, as the
 * seek would, without the walk. */
static int window_draw(drawer *d, const char **p, size_t *n)
{
    const ks_set_hole *h = &d->hole;
    uint64_t at = draw_point(d);
    if (d->tailed && at != h->tail && at - h->tail < h->lo - h->tail) at = h->hi;
    seek_point(d, at);
    uint64_t steps = ks_rand(d->c->ks) % KS_SET_DRAW_WINDOW;
    for (uint64_t i = 0;; i++) {
        if (!ks_miter_valid(&d->mi)) {
            wrap_first(d, &d->hole);
            if (!ks_miter_valid(&d->mi)) return -1;
        }
        if (i == steps) break;
        draw_step(d);
    }
    size_t sn;
    const char *s = ks_miter_suffix(&d->mi, &sn);
    if (sn < 8) return -1;
    *p = s + 8;
    *n = sn - 8;
    return 0;
}

/* Appends one random member to out (a copy). */
static ks_status draw(drawer *d, ks_fvec *out)
{
    const char *p;
    size_t n;
    if (d->exact) {
        if (!d->all.n) return ks_corrupt(d->c, "set");
        const ks_field *f = &d->all.v[ks_rand(d->c->ks) % d->all.n];
        p = f->f;
        n = f->fl;
    } else if (window_draw(d, &p, &n) != 0) {
        return ks_corrupt(d->c, "set");
    }
    return ks_fvec_push_copy(out, p, n, NULL, 0) == 0 ? KS_OK : ks_oom(d->c);
}

/* Moves k random members of all to its front (a partial Fisher-Yates). */
static void choose_front(keyspace *ks, ks_fvec *all, size_t k)
{
    for (size_t i = 0; i < k && i + 1 < all->n; i++) {
        size_t j = i + (size_t)(ks_rand(ks) % (all->n - i));
        ks_field t = all->v[i];
        all->v[i] = all->v[j];
        all->v[j] = t;
    }
}

/* count distinct random members into out. */
static ks_status draw_distinct(drawer *d, uint64_t count, ks_fvec *out)
{
    if (d->exact) {
        choose_front(d->c->ks, &d->all, (size_t)count);
        for (size_t i = 0; i < count && i < d->all.n; i++)
            if (ks_fvec_push_copy(out, d->all.v[i].f, d->all.v[i].fl, NULL, 0) != 0)
                return ks_oom(d->c);
        return KS_OK;
    }
    if (count == 1) return draw(d, out); /* SPOP's usual case: nothing to repeat */
    ks_strset seen;
    if (ks_strset_init(&seen, (size_t)count) != 0) return ks_oom(d->c);
    ks_status st = KS_OK;
    while (st == KS_OK && out->n < count) {
        if ((st = draw(d, out)) != KS_OK) break;
        const ks_field *f = &out->v[out->n - 1];
        int r = ks_strset_add(&seen, f->f, f->fl);
        if (r < 0) st = ks_oom(d->c);
        if (r == 0) out->n--; /* a repeat: its bytes stay in out's chunk */
    }
    ks_strset_free(&seen);
    return st;
}

/* ---- SPOP of one member from a big set ------------------------------------------ */

/* The hash of the last live member before point `from`, cyclically (a
 * step back from the first at or after it); `from` when there is none. */
static uint64_t member_before(drawer *d, uint64_t from)
{
    seek_point(d, from);
    if (ks_miter_valid(&d->mi))
        ks_miter_prev(&d->mi);
    else
        ks_miter_last(&d->mi);
    if (!ks_miter_valid(&d->mi)) ks_miter_last(&d->mi);
    size_t sn;
    const char *s = ks_miter_valid(&d->mi) ? ks_miter_suffix(&d->mi, &sn) : NULL;
    return s && sn >= 8 ? ks_get_be64(s) : from;
}

/* The seek from point `from` found f, the first live member at or after
 * it (cyclically): no live member lies in [from, f), so the hole grows
 * to f (KS-T1). A new hole starts at from (its tail found by the caller);
 * an old one (from is its hi) takes the removals since it last moved as
 * its tombstones: the pops of the previous window, which lie between (an
 * estimate: n only decides when the set is rewritten). removed: the
 * record's. */
static void grow_hole(ks_set_hole *h, uint64_t from, uint64_t f, uint64_t removed, uint64_t tail)
{
    if (h->lo == h->hi || ks_set_hole_has(h, f)) { /* the latter: never (KS-T1) */
        h->tail = h->lo == h->hi ? tail : from;    /* from: not known */
        h->lo = from;
        h->n = 0;
    } else {
        h->n += removed - h->at;
    }
    h->hi = f;
    h->at = removed;
}

/* Reads the KS_SET_POP_WINDOW members from the end of the set's hole on
 * (from a random point when it has none: then a step back first finds the
 * new hole's tail), wrapping, into got (copies), and grows *h up to the
 * first of them. One seek, which steps over the tombstones of the previous
 * window's pops, and the window's steps; they never reach the hole's start
 * again, as the set has more members than the window (KS_SET_EXACT_RANDOM). */
static ks_status pop_window(drawer *d, uint64_t removed, ks_set_hole *h, ks_fvec *got)
{
    int fresh = h->lo == h->hi;
    uint64_t from = fresh ? ks_rand(d->c->ks) : h->hi;
    uint64_t tail = fresh ? member_before(d, from) : h->tail;
    seek_point(d, from);
    for (int i = 0; i < KS_SET_POP_WINDOW; i++) {
        if (i) ks_miter_next(&d->mi);
        if (!ks_miter_valid(&d->mi)) {
            wrap_first(d, h);
            if (!ks_miter_valid(&d->mi)) return ks_corrupt(d->c, "set");
        }
        size_t sn;
        const char *s = ks_miter_suffix(&d->mi, &sn);
        if (sn < 8) return ks_corrupt(d->c, "set");
        if (i == 0) grow_hole(h, from, ks_get_be64(s), removed, tail);
        if (ks_fvec_push_copy(got, s + 8, sn - 8, NULL, 0) != 0) return ks_oom(d->c);
    }
    return KS_OK;
}

/* Keeps f[0..n) but f[skip] for the pops to come, as many as fit; with
 * whole (f is the whole set) all of them or none. */
static void keep_fill(ks_spop_keep *k, const ks_field *f, size_t n, size_t skip, int whole)
{
    size_t used = 0;
    k->n = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == skip) continue;
        if (k->n == KS_SPOP_KEEP_MAX || f[i].fl > KS_SPOP_KEEP_BYTES - used) {
            if (whole) k->n = 0;
            if (whole) return;
            continue;
        }
        memcpy(k->buf + used, f[i].f, f[i].fl);
        k->off[k->n] = (uint32_t)used;
        k->len[k->n++] = (uint32_t)f[i].fl;
        used += f[i].fl;
    }
}

/* Moves a random kept member that is still in the set into out: *took 1,
 * else 0 (none kept, or one that is gone: then none are trusted). */
static ks_status keep_take(ks_ctx *c, ks_sview *v, ks_fvec *out, int *took)
{
    ks_spop_keep *k = &c->ks->spop;
    *took = 0;
    if (!k->n) return KS_OK;
    unsigned i = (unsigned)(ks_rand(c->ks) % k->n);
    if (ks_fvec_push_copy(out, k->buf + k->off[i], k->len[i], NULL, 0) != 0) return ks_oom(c);
    k->n--;
    k->off[i] = k->off[k->n];
    k->len[i] = k->len[k->n];
    int r = ks_sview_has(c, v, out->v[0].f, out->v[0].fl);
    if (r < 0) return KS_ERR_ENGINE;
    if (r) return *took = 1, KS_OK;
    k->n = 0;
    out->n = 0;
    return KS_OK;
}

/* SPOP key (no count) on big set v of w, more than one member: the member
 * goes to out. A draw reads several members (the whole set when it is
 * sampled exactly, else the window at the end of the set's hole, whose
 * start it moves up to the window: pop_window); one is popped, the others
 * are kept in c->ks->spop and popped by the next SPOPs of the set, at
 * random among them, while its record stays as the last of those pops left
 * it (same version, count and removed: nothing else was added or removed),
 * each checked with a get before it is popped. */
static ks_status spop_big_one(ks_write *w, ks_sview *v, ks_fvec *out)
{
    ks_ctx *c = w->c;
    ks_spop_keep *k = &c->ks->spop;
    uint64_t version = w->m.version, count = w->m.count, removed = ks_get_le64(w->m.ext);
    int took = 0, grown = 0;
    ks_set_hole hole;
    ks_status st = KS_OK;
    if (k->n && k->db == w->db && k->version == version && k->count == count &&
        k->removed == removed)
        st = keep_take(c, v, out, &took);
    if (st == KS_OK && !took) {
        drawer d;
        ks_fvec got;
        ks_fvec_init(&got);
        st = drawer_open(c, v, &d);
        hole = d.hole;
        grown = st == KS_OK && !d.exact;
        if (grown) st = pop_window(&d, removed, &hole, &got);
        ks_fvec *from = d.exact ? &d.all : &got;
        if (st == KS_OK && !from->n) st = ks_corrupt(c, "set");
        if (st == KS_OK) {
            size_t i = (size_t)(ks_rand(c->ks) % from->n);
            if (ks_fvec_push_copy(out, from->v[i].f, from->v[i].fl, NULL, 0) != 0)
                st = ks_oom(c);
            else
                keep_fill(k, from->v, from->n, i, d.exact);
        }
        ks_status cst = drawer_close(&d);
        if (st == KS_OK) st = cst;
        ks_fvec_free(&got);
    }
    if (st == KS_OK) st = ks_set_pop(w, out->v[0].f, out->v[0].fl, grown ? &hole : NULL);
    if (st != KS_OK) {
        k->n = 0;
        return st;
    }
    k->db = w->db;
    k->version = version;
    k->count = count - 1;
    k->removed = removed + 1;
    return KS_OK;
}

/* ---- SPOP --------------------------------------------------------------------- */

#define SPOP_MOVE_STRATEGY_MUL 5 /* Redis's: rebuild when few survive */

ks_status ks_spop(ks_ctx *c, const char *key, size_t klen, uint64_t count, ks_fields_fn fn,
                  void *arg)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_SET, &w);
    if (st != KS_OK) return st;
    if (w.m.type == KS_NONE) {
        ks_write_end(&w);
        return KS_NOTFOUND;
    }
    ks_sview v;
    if ((st = ks_sview_of(c, &w.m, &v)) != KS_OK) {
        ks_write_end(&w);
        return st;
    }
    uint64_t size = ks_sview_count(&v);
    ks_fvec out;
    ks_fvec_init(&out);
    drawer d;
    if (count >= size) { /* the whole set */
        st = ks_sview_all(c, &v, &out);
        if (st == KS_OK) st = ks_write_del(&w);
    } else if (count == 1 && v.m.big) {
        st = spop_big_one(&w, &v, &out);
    } else if ((size - count) * SPOP_MOVE_STRATEGY_MUL > count) {
        /* Few popped: draw them, then remove them. */
        st = drawer_open(c, &v, &d);
        if (st == KS_OK) st = draw_distinct(&d, count, &out);
        ks_status cst = drawer_close(&d);
        if (st == KS_OK) st = cst;
        if (st == KS_OK) {
            uint64_t removed;
            st = ks_set_remove(&w, out.v, out.n, 1, &removed); /* drawn: members */
        }
    } else {
        /* Few survive: choose them and rebuild the set from them (Redis
         * creates a new set, so its encoding is decided afresh). */
        ks_fvec all;
        ks_fvec_init(&all);
        st = ks_sview_all(c, &v, &all);
        size_t keep = (size_t)(size - count);
        if (st == KS_OK) choose_front(c->ks, &all, keep);
        for (size_t i = keep; st == KS_OK && i < all.n; i++)
            if (ks_fvec_push_copy(&out, all.v[i].f, all.v[i].fl, NULL, 0) != 0) st = ks_oom(c);
        if (st == KS_OK) st = ks_set_store(&w, all.v, keep, 1);
        ks_fvec_free(&all);
    }
    if (st == KS_OK) fn(arg, out.v, out.n);
    ks_fvec_free(&out);
    ks_sview_close(&v);
    ks_write_end(&w);
    return st;
}

/* ---- SRANDMEMBER ---------------------------------------------------------------- */

#define SRANDMEMBER_SUB_STRATEGY_MUL 3

ks_status ks_srandmember(ks_ctx *c, const char *key, size_t klen, uint64_t count, int uniq,
                         ks_fields_fn fn, void *arg)
{
    ks_sview v;
    ks_status st = ks_sview_open(c, key, klen, 0, &v);
    if (st != KS_OK) return st;
    uint64_t size = ks_sview_count(&v);
    ks_fvec out;
    ks_fvec_init(&out);
    drawer d;
    if (count == 0) {
        /* nothing */
    } else if (!uniq || count == 1) { /* draws with repetition */
        st = drawer_open(c, &v, &d);
        for (uint64_t i = 0; st == KS_OK && i < count; i++)
            st = draw(&d, &out);
        ks_status cst = drawer_close(&d);
        if (st == KS_OK) st = cst;
    } else if (count >= size) {
        st = ks_sview_all(c, &v, &out);
    } else if (count * SRANDMEMBER_SUB_STRATEGY_MUL > size) {
        /* Close to the whole set: read it and keep count random members. */
        st = ks_sview_all(c, &v, &out);
        if (st == KS_OK) choose_front(c->ks, &out, (size_t)count);
        out.n = (size_t)count;
    } else {
        st = drawer_open(c, &v, &d);
        if (st == KS_OK) st = draw_distinct(&d, count, &out);
        ks_status cst = drawer_close(&d);
        if (st == KS_OK) st = cst;
    }
    if (st == KS_OK) fn(arg, out.v, out.n);
    ks_fvec_free(&out);
    ks_sview_close(&v);
    return st;
}

/* ---- SINTER / SUNION / SDIFF ---------------------------------------------------- */

typedef struct setop {
    ks_ctx *c;
    ks_sview *views;
    size_t n;
    const ks_field *keys;
    ks_fvec out; /* the result (copies, or pointers into a packed view) */
    ks_strset seen;
    int seeing;
    int card_only;        /* SINTERCARD: count, keep nothing */
    uint64_t limit, card; /* SINTERCARD's LIMIT (0: none) and count */
} setop;

static int same_key(const setop *o, size_t i, size_t j)
{
    return o->keys[i].fl == o->keys[j].fl && memcmp(o->keys[i].f, o->keys[j].f, o->keys[i].fl) == 0;
}

/* Calls visit(o, i, member) for every member of set i; stops when it
 * returns non-zero. Big sets are walked with probes allowed in visit
 * (gets do not change the batch). */
typedef int (*member_fn)(setop *o, size_t i, const char *m, size_t ml);
typedef struct member_arg {
    setop *o;
    size_t i;
    member_fn visit;
} member_arg;

static int member_visit(void *arg, const char *m, size_t ml)
{
    member_arg *a = arg;
    return a->visit(a->o, a->i, m, ml);
}

static ks_status each_member(setop *o, size_t i, member_fn visit)
{
    ks_sview *v = &o->views[i];
    if (v->m.type == KS_NONE) return KS_OK;
    if (!v->m.big) {
        for (size_t j = 0; j < v->items.n; j++)
            if (visit(o, i, v->items.v[j].f, v->items.v[j].fl)) break;
        return o->c->err ? KS_ERR_MSG : KS_OK;
    }
    member_arg a = {o, i, visit};
    ks_status st = ks_set_walk(o->c, &v->m, member_visit, &a);
    return st == KS_OK && o->c->err ? KS_ERR_MSG : st;
}

static int push(setop *o, size_t i, const char *m, size_t ml)
{
    int r = o->views[i].m.big ? ks_fvec_push_copy(&o->out, m, ml, NULL, 0)
                              : ks_fvec_push(&o->out, m, ml, NULL, 0);
    if (r != 0) ks_oom(o->c);
    return r != 0;
}

/* Is m in every other set (SINTER)? Then keep it. */
static int inter_visit(setop *o, size_t i, const char *m, size_t ml)
{
    for (size_t j = 0; j < o->n; j++) {
        if (j == i || same_key(o, i, j)) continue;
        int r = ks_sview_has(o->c, &o->views[j], m, ml);
        if (r < 0) return 1;
        if (!r) return 0;
    }
    o->card++;
    if (!o->card_only) return push(o, i, m, ml);
    return o->limit && o->card >= o->limit;
}

static int union_visit(setop *o, size_t i, const char *m, size_t ml)
{
    size_t at = o->out.n;
    if (push(o, i, m, ml)) return 1;
    const ks_field *f = &o->out.v[at];
    int r = ks_strset_add(&o->seen, f->f, f->fl);
    if (r < 0) return ks_oom(o->c), 1;
    if (r == 0) o->out.n--; /* seen before */
    return 0;
}

static int diff_visit(setop *o, size_t i, const char *m, size_t ml)
{
    for (size_t j = 1; j < o->n; j++) {
        int r = ks_sview_has(o->c, &o->views[j], m, ml);
        if (r < 0) return 1;
        if (r) return 0;
    }
    return push(o, i, m, ml);
}

static ks_status compute(setop *o, int op)
{
    size_t smallest = 0;
    switch (op) {
    case KS_SINTER:
        for (size_t i = 0; i < o->n; i++) {
            if (o->views[i].m.type == KS_NONE) return KS_OK; /* empty result */
            if (ks_sview_count(&o->views[i]) < ks_sview_count(&o->views[smallest])) smallest = i;
        }
        return each_member(o, smallest, inter_visit);
    case KS_SUNION:
        if (ks_strset_init(&o->seen, 64) != 0) return ks_oom(o->c);
        o->seeing = 1;
        for (size_t i = 0; i < o->n; i++) {
            ks_status st = each_member(o, i, union_visit);
            if (st != KS_OK) return st;
        }
        return KS_OK;
    default: /* KS_SDIFF: a key repeating the first one empties the result */
        for (size_t j = 1; j < o->n; j++)
            if (same_key(o, 0, j)) return KS_OK;
        return each_member(o, 0, diff_visit);
    }
}

ks_status ks_setop(ks_ctx *c, int op, const ks_field *keys, size_t n, const char *dst, size_t dl,
                   uint64_t limit, ks_fields_fn fn, void *arg, uint64_t *card)
{
    setop o = {c, calloc(n ? n : 1, sizeof(ks_sview)), 0, keys};
    ks_fvec_init(&o.out);
    o.card_only = !fn && !dst;
    o.limit = limit;
    *card = 0;
    if (!o.views) return ks_oom(c);
    ks_status st = KS_OK;
    for (; o.n < n && st == KS_OK; o.n++)
        st = ks_sview_open(c, keys[o.n].f, keys[o.n].fl, 1, &o.views[o.n]);
    if (st != KS_OK) o.n--; /* that view failed to open: nothing to close */
    if (st == KS_OK) st = compute(&o, op);
    if (st == KS_OK) *card = o.card_only ? o.card : o.out.n;
    if (st == KS_OK && dst) {
        ks_write w;
        st = ks_write_begin(c, c->db, dst, dl, KS_NONE, &w);
        if (st == KS_OK) {
            st = ks_set_store(&w, o.out.v, o.out.n, 0);
            ks_write_end(&w);
        }
    } else if (st == KS_OK && fn) {
        fn(arg, o.out.v, o.out.n);
    }
    if (o.seeing) ks_strset_free(&o.seen);
    ks_fvec_free(&o.out);
    for (size_t i = 0; i < o.n; i++)
        ks_sview_close(&o.views[i]);
    free(o.views);
    return st;
}
