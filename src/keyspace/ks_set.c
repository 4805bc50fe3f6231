/*
 * ks_set.c -- sets: how they are stored, the set row of the type table,
 * and the single-key commands' data work (SADD, SREM, SCARD, SISMEMBER,
 * SMISMEMBER, SMEMBERS, SSCAN, SMOVE). Random members and the multi-set
 * commands are in ks_set_ops.c.
 *
 * On-disk format (ENCODING.md, "Sets"):
 *   packed body: strs (varint count, then varint length + bytes per member)
 *                in ascending numeric order while every member is an
 *                integer (ENC clear: Redis's intset), else insertion order
 *   big body:    version le64, count le64, removed le64 (members deleted
 *                under this version: their tombstones slow seeks and walks,
 *                so past count + KS_SET_REWRITE_SLACK outside the hole the
 *                set is rewritten) [hole: lo hi n at tail, each le64]
 *   big member:  'd' db be64(version) be64(XXH3-64(member)) member -> ""
 * ENC (0x20) = Redis's hashtable encoding, sticky. A set is packed while
 * count <= set-max-intset-entries and its body <= KS_PACKED_MAX_BYTES;
 * it never turns back, except when a command rewrites it whole.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "keyspace/ks_set.h"

/* ---- Hash set of byte strings ---------------------------------------------- */

static uint64_t mhash(const char *p, size_t n)
{
    return XXH3_64bits(p, n);
}

int ks_strset_init(ks_strset *s, size_t expect)
{
    size_t cap = 16;
    while (cap < expect * 2)
        cap *= 2;
    s->slots = calloc(cap, sizeof(*s->slots));
    s->cap = cap;
    s->n = 0;
    return s->slots ? 0 : -1;
}

static struct ks_strslot *mset_find(const ks_strset *s, const char *p, size_t n, uint64_t h)
{
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        struct ks_strslot *sl = &s->slots[i];
        if (!sl->p || (sl->h == h && sl->n == n && memcmp(sl->p, p, n) == 0)) return sl;
    }
}

int ks_strset_add(ks_strset *s, const char *p, size_t n)
{
    if ((s->n + 1) * 2 > s->cap) {
        ks_strset g;
        if (ks_strset_init(&g, s->cap) != 0) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i].p)
                *mset_find(&g, s->slots[i].p, s->slots[i].n, s->slots[i].h) = s->slots[i];
        g.n = s->n;
        free(s->slots);
        *s = g;
    }
    uint64_t h = mhash(p, n);
    struct ks_strslot *sl = mset_find(s, p, n, h);
    if (sl->p) return 0;
    *sl = (struct ks_strslot){n ? p : "", n, h};
    s->n++;
    return 1;
}

int ks_strset_has(const ks_strset *s, const char *p, size_t n)
{
    return mset_find(s, p, n, mhash(p, n))->p != NULL;
}

void ks_strset_free(ks_strset *s)
{
    free(s->slots);
    s->slots = NULL;
    s->cap = s->n = 0;
}

/* ---- Encoding ------------------------------------------------------------------- */

int ks_set_is_int(const char *m, size_t ml)
{
    long long v;
    return ks_string2ll(m, ml, &v);
}

void ks_set_suffix(ks_ekey *k, const char *m, size_t ml)
{
    char h[8];
    ks_put_be64(h, mhash(m, ml));
    k->n = 0;
    k->p = k->sbuf;
    k->cap = sizeof(k->sbuf);
    ks_ekey_append(k, h, 8);
    ks_ekey_append(k, m, ml);
}

static const char *set_encoding(const ks_meta *m, const ks_limits *lim)
{
    (void)lim;
    return m->enc ? "hashtable" : "intset";
}

/* The big ext: removed, then the hole when there is one (KS-T1). */
#define SET_EXT_HOLE 48

static int set_check(const ks_meta *m)
{
    return m->big && m->extlen != 8 && m->extlen != SET_EXT_HOLE ? -1 : 0;
}

void ks_set_hole_of(const ks_meta *m, ks_set_hole *h)
{
    memset(h, 0, sizeof(*h));
    if (!m->big || m->extlen != SET_EXT_HOLE) return;
    h->lo = ks_get_le64(m->ext + 8);
    h->hi = ks_get_le64(m->ext + 16);
    h->n = ks_get_le64(m->ext + 24);
    h->at = ks_get_le64(m->ext + 32);
    h->tail = ks_get_le64(m->ext + 40);
}

int ks_set_hole_has(const ks_set_hole *h, uint64_t hash)
{
    return hash - h->lo < h->hi - h->lo; /* cyclic: unsigned wrap-around */
}

/* Writes the big ext for removed and hole h into ext; returns its length
 * (no hole: 8, the format older servers read). */
static size_t put_ext(char *ext, uint64_t removed, const ks_set_hole *h)
{
    ks_put_le64(ext, removed);
    if (h->lo == h->hi) return 8;
    ks_put_le64(ext + 8, h->lo);
    ks_put_le64(ext + 16, h->hi);
    ks_put_le64(ext + 24, h->n);
    ks_put_le64(ext + 32, h->at);
    ks_put_le64(ext + 40, h->tail);
    return SET_EXT_HOLE;
}

static uint64_t removed_of(const ks_meta *m)
{
    return m->big ? ks_get_le64(m->ext) : 0;
}

/* A copy's members are all live: its removed count starts at 0, with no
 * hole. */
static ks_status set_copy(ks_ctx *c, int sdb, const ks_meta *m, int ddb, ks_value *v, char *buf)
{
    ks_status st = ks_copy_generic(c, sdb, m, ddb, v, buf);
    if (st == KS_OK && m->big) memset(buf + KS_BIG_HDR, 0, m->extlen);
    return st;
}

static int set_count(const ks_meta *m, uint64_t *n)
{
    if (m->big) return *n = m->count, 0;
    return ks_packed_count(m->payload, m->plen, n);
}

const ks_type_ops ks_set_type = {
    .type = KS_SET,
    .name = "set",
    .encoding = set_encoding,
    .count = set_count,
    .check = set_check,
    .copy = set_copy,
    .drop = ks_drop_generic,
    .repair = ks_repair_generic,
    .filter = ks_filter_generic,
    .fields = NULL,
};

/* ---- Views ------------------------------------------------------------------------ */

static ks_status view_parse(ks_ctx *c, ks_sview *v)
{
    if (v->m.type == KS_NONE || v->m.big || ks_strs_parse(v->m.payload, v->m.plen, &v->items) == 0)
        return KS_OK;
    ks_sview_close(v);
    return ks_corrupt(c, "set encoding");
}

ks_status ks_sview_open(ks_ctx *c, const char *key, size_t klen, int absent_ok, ks_sview *v)
{
    ks_fvec_init(&v->items);
    v->probing = 0;
    v->own = 1;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_SET, &v->m);
    if (st == KS_NOTFOUND && absent_ok) {
        memset(&v->m, 0, sizeof(v->m));
        return KS_OK;
    }
    return st == KS_OK ? view_parse(c, v) : st;
}

ks_status ks_sview_of(ks_ctx *c, const ks_meta *m, ks_sview *v)
{
    ks_fvec_init(&v->items);
    v->probing = 0;
    v->own = 0;
    v->m = *m;
    return view_parse(c, v);
}

uint64_t ks_sview_count(const ks_sview *v)
{
    return v->m.type == KS_NONE ? 0 : v->m.big ? v->m.count : v->items.n;
}

static int packed_has(ks_sview *v, const char *m, size_t ml)
{
    if (v->items.n <= 8) {
        for (size_t i = 0; i < v->items.n; i++)
            if (v->items.v[i].fl == ml && memcmp(v->items.v[i].f, m, ml) == 0) return 1;
        return 0;
    }
    if (!v->probing) {
        if (ks_strset_init(&v->probe, v->items.n) != 0) return -1;
        for (size_t i = 0; i < v->items.n; i++)
            if (ks_strset_add(&v->probe, v->items.v[i].f, v->items.v[i].fl) < 0) return -1;
        v->probing = 1;
    }
    return ks_strset_has(&v->probe, m, ml);
}

int ks_sview_has(ks_ctx *c, ks_sview *v, const char *m, size_t ml)
{
    if (v->m.type == KS_NONE) return 0;
    if (!v->m.big) {
        int r = packed_has(v, m, ml);
        if (r < 0) ks_oom(c);
        return r;
    }
    ks_ekey sfx;
    ks_set_suffix(&sfx, m, ml);
    char *val;
    size_t vl;
    eng_status s = ks_member_get(c, NULL, c->db, v->m.version, sfx.p, sfx.n, &val, &vl);
    ks_ekey_free(&sfx);
    if (s == ENG_OK) eng_free(val);
    if (s != ENG_OK && s != ENG_NOTFOUND) return ks_engine_err(c, s, "set read"), -1;
    return s == ENG_OK;
}

/* Visits the live members of mi's version from hash a on (0: the first)
 * in stored order; bounded: only those below the hole's lo, stopping after
 * its tail (when known), as the next step would walk the hole's tombstones
 * (KS-T1: all dead) to reach the member after it. Without a tail that step
 * is taken, and the member it reaches (hash >= lo) is not visited. *stop:
 * fn asked to stop; *bad: a corrupt member key. */
static void walk_span(ks_miter *mi, uint64_t a, const ks_set_hole *h, int bounded,
                      ks_set_visit_fn fn, void *arg, int *stop, int *bad)
{
    int tailed = bounded && h->tail != h->lo;
    char at[8];
    ks_put_be64(at, a);
    for (ks_miter_seek(mi, at, 8); ks_miter_valid(mi); ks_miter_next(mi)) {
        size_t sn;
        const char *s = ks_miter_suffix(mi, &sn);
        if (sn < 8) {
            *bad = 1;
            break;
        }
        uint64_t hash = ks_get_be64(s);
        if (ks_set_hole_has(h, hash) || (bounded && hash >= h->lo)) break;
        if (fn(arg, s + 8, sn - 8)) {
            *stop = 1;
            break;
        }
        if (tailed && hash == h->tail) break;
    }
}

/* ks_set_walk over version with hole h (the record's, or the one a
 * change is about to write). */
static ks_status walk_version(ks_ctx *c, uint64_t version, const ks_set_hole *hp,
                              ks_set_visit_fn fn, void *arg)
{
    ks_set_hole h = *hp;
    ks_miter mi;
    int stop = 0, bad = 0;
    ks_miter_open(&mi, c, NULL, c->db, version);
    if (h.lo == h.hi) {
        walk_span(&mi, 0, &h, 0, fn, arg, &stop, &bad);
    } else if (h.lo < h.hi) { /* live: [0, lo) and [hi, end); a tail above the
                                 hole says there is none below it */
        if (h.lo > 0 && (h.tail == h.lo || h.tail < h.lo))
            walk_span(&mi, 0, &h, 1, fn, arg, &stop, &bad);
        if (!stop && !bad) walk_span(&mi, h.hi, &h, 0, fn, arg, &stop, &bad);
    } else { /* the hole wraps around: live [hi, lo) */
        walk_span(&mi, h.hi, &h, 1, fn, arg, &stop, &bad);
    }
    ks_status st = ks_miter_close(&mi, c);
    return st == KS_OK && bad ? ks_corrupt(c, "set member") : st;
}

ks_status ks_set_walk(ks_ctx *c, const ks_meta *m, ks_set_visit_fn fn, void *arg)
{
    ks_set_hole h;
    ks_set_hole_of(m, &h);
    return walk_version(c, m->version, &h, fn, arg);
}

typedef struct all_ctx {
    ks_ctx *c;
    ks_fvec *out;
    ks_status st;
} all_ctx;

static int all_visit(void *arg, const char *m, size_t ml)
{
    all_ctx *a = arg;
    if (ks_fvec_push_copy(a->out, m, ml, NULL, 0) != 0) {
        a->st = ks_oom(a->c);
        return 1;
    }
    a->out->v[a->out->n - 1].v = NULL;
    return 0;
}

ks_status ks_sview_all(ks_ctx *c, const ks_sview *v, ks_fvec *out)
{
    if (v->m.type == KS_NONE) return KS_OK;
    if (!v->m.big) {
        for (size_t i = 0; i < v->items.n; i++)
            if (ks_fvec_push(out, v->items.v[i].f, v->items.v[i].fl, NULL, 0) != 0)
                return ks_oom(c);
        return KS_OK;
    }
    all_ctx a = {c, out, KS_OK};
    ks_status st = ks_set_walk(c, &v->m, all_visit, &a);
    return a.st != KS_OK ? a.st : st;
}

void ks_sview_close(ks_sview *v)
{
    if (v->probing) ks_strset_free(&v->probe);
    v->probing = 0;
    ks_fvec_free(&v->items);
    if (v->own) ks_meta_free(&v->m);
    memset(&v->m, 0, sizeof(v->m));
}

/* ---- Storing ----------------------------------------------------------------------- */

typedef struct ival {
    long long v;
    ks_field f;
} ival;

static int ival_cmp(const void *a, const void *b)
{
    long long x = ((const ival *)a)->v, y = ((const ival *)b)->v;
    return x < y ? -1 : x > y;
}

/* Sorts integer members numerically (an intset's order). */
static int sort_ints(ks_field *mem, size_t n)
{
    ival *t = malloc((n ? n : 1) * sizeof(*t));
    if (!t) return -1;
    for (size_t i = 0; i < n; i++) {
        t[i].f = mem[i];
        ks_string2ll(mem[i].f, mem[i].fl, &t[i].v);
    }
    qsort(t, n, sizeof(*t), ival_cmp);
    for (size_t i = 0; i < n; i++)
        mem[i] = t[i].f;
    free(t);
    return 0;
}

/* Writes mem as w's set with the given ENC bit: packed when it fits,
 * else every member under a new version. mem is sorted in place when the
 * set is an intset. */
static ks_status store_enc(ks_write *w, ks_field *mem, size_t n, int enc, int64_t expire)
{
    ks_ctx *c = w->c;
    if (n == 0) return w->m.stored != KS_NONE ? ks_write_del(w) : KS_OK;
    if (!enc && sort_ints(mem, n) != 0) return ks_oom(c);
    ks_value v = {KS_SET, 0, enc, expire, NULL, 0, NULL, 0};
    size_t size = ks_strs_size(mem, n);
    if ((long long)n <= c->ks->limits.set_max_intset_entries && size <= KS_PACKED_MAX_BYTES) {
        char *buf = ks_scratch(c->ks, KS_HDR_MAX + size);
        if (!buf) return ks_oom(c);
        ks_strs_write(buf + KS_HDR_MAX, mem, n);
        v.p1 = buf + KS_HDR_MAX;
        v.n1 = size;
        return ks_write_put(w, &v);
    }
    uint64_t version = ks_new_version(c);
    for (size_t i = 0; i < n; i++) {
        ks_ekey sfx;
        ks_set_suffix(&sfx, mem[i].f, mem[i].fl);
        ks_member_put(c, w->db, version, sfx.p, sfx.n, "", 0);
        ks_ekey_free(&sfx);
    }
    char body[KS_BIG_BODY_MAX], removed[8] = {0};
    ks_big_body(&v, body, version, n, removed, 8);
    return ks_write_put(w, &v);
}

static int all_ints(const ks_field *mem, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!ks_set_is_int(mem[i].f, mem[i].fl)) return 0;
    return 1;
}

ks_status ks_set_store(ks_write *w, const ks_field *mem, size_t n, int keepttl)
{
    int enc = (long long)n > w->c->ks->limits.set_max_intset_entries || !all_ints(mem, n);
    ks_field *copy = malloc((n ? n : 1) * sizeof(*copy));
    if (!copy) return ks_oom(w->c);
    if (n) memcpy(copy, mem, n * sizeof(*copy));
    ks_status st = store_enc(w, copy, n, enc, keepttl ? w->m.expire : 0);
    free(copy);
    return st;
}

/* Writes w's big set again from its live members (read through the
 * batch, after the command's deletes, skipping hole h: the one this change
 * leaves, not the record's, which an added member may have ended): packed
 * when it now fits, else under a new version, and the old version with
 * its tombstones is dropped. Each rewrite follows more removals than the
 * live members it copies, so it costs O(1) per removal over time. */
static ks_status rewrite(ks_write *w, int enc, const ks_set_hole *h)
{
    ks_fvec all;
    ks_fvec_init(&all);
    all_ctx a = {w->c, &all, KS_OK};
    ks_status st = walk_version(w->c, w->m.version, h, all_visit, &a);
    if (st == KS_OK) st = a.st;
    if (st == KS_OK) st = store_enc(w, all.v, all.n, enc, w->m.expire);
    ks_fvec_free(&all);
    return st;
}

/* Writes w's big set record after a change: count members, removed
 * deleted under the version, hole h; or rewrites the set when the
 * tombstones a draw may step on (those outside the hole) outnumber the
 * live members, or all of them do KS_SET_REWRITE_RATIO times over. */
static ks_status put_big(ks_write *w, uint64_t count, uint64_t removed, int enc, ks_set_hole *h)
{
    if (h->lo == h->hi || h->n > removed) h->n = h->lo == h->hi ? 0 : removed;
    if (h->tail == h->lo && h->n > count + KS_SET_REWRITE_SLACK) return rewrite(w, enc, h);
    int few = (long long)count <= w->c->ks->limits.set_max_intset_entries;
    if (removed - h->n > count + KS_SET_REWRITE_SLACK ||
        removed / KS_SET_REWRITE_RATIO > count + KS_SET_REWRITE_SLACK ||
        (few && removed > count + KS_SET_REWRITE_SLACK))
        return rewrite(w, enc, h);
    char body[KS_BIG_BODY_MAX], ext[SET_EXT_HOLE];
    size_t extlen = put_ext(ext, removed, h);
    ks_value v = {KS_SET, 1, enc, w->m.expire, NULL, 0, NULL, 0};
    ks_big_body(&v, body, w->m.version, count, ext, extlen);
    return ks_write_put(w, &v);
}

/* Keeps hole h true (KS-T1) and its tail known across a change of the
 * member with hash x: an added member in the hole ends the hole, one
 * between the tail and the hole becomes the tail; the tail removed leaves
 * it unknown (walks and draws then step over the hole, and a big hole
 * makes put_big rewrite the set). */
static void hole_track(ks_set_hole *h, uint64_t x, int add)
{
    if (h->lo == h->hi) return;
    if (add && ks_set_hole_has(h, x)) {
        memset(h, 0, sizeof(*h));
    } else if (add && h->tail != h->lo && x != h->tail && x - h->tail < h->lo - h->tail) {
        h->tail = x;
    } else if (!add && x == h->tail) {
        h->tail = h->lo;
    }
}

/* Big sets: one get per member, then a put or delete, and the count. An
 * added member in the hole ends the hole (KS-T1); hole, when given, is
 * the record's new one (SPOP's). */
static ks_status big_change(ks_write *w, const ks_field *mem, size_t n, int add, int known, int enc,
                            const ks_set_hole *hole, uint64_t *changed)
{
    ks_ctx *c = w->c;
    const ks_meta *m = &w->m;
    ks_set_hole h;
    if (hole)
        h = *hole;
    else
        ks_set_hole_of(m, &h);
    *changed = 0;
    for (size_t i = 0; i < n; i++) {
        ks_ekey sfx;
        ks_set_suffix(&sfx, mem[i].f, mem[i].fl);
        char *val;
        size_t vl;
        /* known: the caller just read these members (SPOP), no get needed */
        eng_status s =
            known ? ENG_OK : ks_member_get(c, NULL, w->db, m->version, sfx.p, sfx.n, &val, &vl);
        if (s == ENG_OK && !known) eng_free(val);
        if (s == (add ? ENG_NOTFOUND : ENG_OK)) {
            hole_track(&h, ks_get_be64(sfx.p), add);
            if (add)
                ks_member_put(c, w->db, m->version, sfx.p, sfx.n, "", 0);
            else
                ks_member_del(c, w->db, m->version, sfx.p, sfx.n);
            (*changed)++;
        }
        ks_ekey_free(&sfx);
        if (s != ENG_OK && s != ENG_NOTFOUND) return ks_engine_err(c, s, "set write");
    }
    if (!*changed && enc == m->enc) return KS_OK;
    uint64_t count = add ? m->count + *changed : m->count - *changed;
    if (count == 0 || (!add && *changed > m->count)) return ks_write_del(w);
    if ((long long)count > c->ks->limits.set_max_intset_entries) enc = 1;
    return put_big(w, count, removed_of(m) + (add ? 0 : *changed), enc, &h);
}

/* Is mem[i] among cur (few: linear; many: a hash set)? */
typedef struct dedupe {
    const ks_fvec *cur;
    ks_strset set;
    int hashed;
} dedupe;

static int dd_has(dedupe *d, const char *p, size_t n)
{
    if (!d->hashed) {
        for (size_t i = 0; i < d->cur->n; i++)
            if (d->cur->v[i].fl == n && memcmp(d->cur->v[i].f, p, n) == 0) return 1;
        return 0;
    }
    return ks_strset_has(&d->set, p, n);
}

ks_status ks_set_pop(ks_write *w, const char *m, size_t ml, const ks_set_hole *hole)
{
    ks_field f = {m, ml, NULL, 0};
    uint64_t gone;
    return big_change(w, &f, 1, 0, 1, w->m.enc, hole, &gone);
}

ks_status ks_set_add(ks_write *w, const ks_field *mem, size_t n, uint64_t *added)
{
    ks_ctx *c = w->c;
    const ks_meta *m = &w->m;
    int enc = m->type == KS_SET ? m->enc : !ks_set_is_int(mem[0].f, mem[0].fl);
    for (size_t i = 0; i < n && !enc; i++)
        enc = !ks_set_is_int(mem[i].f, mem[i].fl);
    *added = 0;
    if (m->type == KS_SET && m->big) return big_change(w, mem, n, 1, 0, enc, NULL, added);
    ks_fvec cur;
    ks_fvec_init(&cur);
    ks_status st = KS_OK;
    if (m->type == KS_SET && ks_strs_parse(m->payload, m->plen, &cur) != 0)
        st = ks_corrupt(c, "set encoding");
    dedupe d = {&cur, {0}, (cur.n + n) * n > 4096};
    if (st == KS_OK && d.hashed && ks_strset_init(&d.set, cur.n + n) != 0) st = ks_oom(c);
    for (size_t i = 0; st == KS_OK && d.hashed && i < cur.n; i++)
        if (ks_strset_add(&d.set, cur.v[i].f, cur.v[i].fl) < 0) st = ks_oom(c);
    for (size_t i = 0; st == KS_OK && i < n; i++) {
        if (dd_has(&d, mem[i].f, mem[i].fl)) continue;
        if (ks_fvec_push(&cur, mem[i].f, mem[i].fl, NULL, 0) != 0 ||
            (d.hashed && ks_strset_add(&d.set, mem[i].f, mem[i].fl) < 0))
            st = ks_oom(c);
        (*added)++;
    }
    if (st == KS_OK && (long long)cur.n > c->ks->limits.set_max_intset_entries) enc = 1;
    if (st == KS_OK && (*added || enc != m->enc)) st = store_enc(w, cur.v, cur.n, enc, m->expire);
    if (d.hashed) ks_strset_free(&d.set);
    ks_fvec_free(&cur);
    return st;
}

ks_status ks_set_remove(ks_write *w, const ks_field *mem, size_t n, int known, uint64_t *removed)
{
    ks_ctx *c = w->c;
    const ks_meta *m = &w->m;
    *removed = 0;
    if (m->big) return big_change(w, mem, n, 0, known, m->enc, NULL, removed);
    ks_fvec cur, keep;
    ks_fvec_init(&cur);
    ks_fvec_init(&keep);
    ks_strset gone = {0};
    ks_status st =
        ks_strs_parse(m->payload, m->plen, &cur) == 0 ? KS_OK : ks_corrupt(c, "set encoding");
    if (st == KS_OK && ks_strset_init(&gone, n) != 0) st = ks_oom(c);
    for (size_t i = 0; st == KS_OK && i < n; i++)
        if (ks_strset_add(&gone, mem[i].f, mem[i].fl) < 0) st = ks_oom(c);
    for (size_t i = 0; st == KS_OK && i < cur.n; i++)
        if (!ks_strset_has(&gone, cur.v[i].f, cur.v[i].fl) &&
            ks_fvec_push(&keep, cur.v[i].f, cur.v[i].fl, NULL, 0) != 0)
            st = ks_oom(c);
    *removed = st == KS_OK ? cur.n - keep.n : 0;
    if (st == KS_OK && *removed) st = store_enc(w, keep.v, keep.n, m->enc, m->expire);
    ks_strset_free(&gone);
    ks_fvec_free(&keep);
    ks_fvec_free(&cur);
    return st;
}

/* ---- Commands ---------------------------------------------------------------------- */

ks_status ks_sadd(ks_ctx *c, const char *key, size_t klen, const ks_field *mem, size_t n,
                  uint64_t *added)
{
    ks_write w;
    *added = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_SET, &w);
    if (st != KS_OK) return st;
    st = ks_set_add(&w, mem, n, added);
    ks_write_end(&w);
    return st;
}

ks_status ks_srem(ks_ctx *c, const char *key, size_t klen, const ks_field *mem, size_t n,
                  uint64_t *removed)
{
    ks_write w;
    *removed = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_SET, &w);
    if (st != KS_OK) return st;
    st = w.m.type == KS_NONE ? KS_NOTFOUND : ks_set_remove(&w, mem, n, 0, removed);
    ks_write_end(&w);
    return st;
}

ks_status ks_scard(ks_ctx *c, const char *key, size_t klen, uint64_t *n)
{
    ks_meta m;
    *n = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_SET, &m);
    if (st != KS_OK) return st;
    if (set_count(&m, n) != 0) st = ks_corrupt(c, "set encoding");
    ks_meta_free(&m);
    return st;
}

ks_status ks_sismember(ks_ctx *c, const char *key, size_t klen, const ks_field *mem, size_t n,
                       int *out)
{
    ks_sview v;
    for (size_t i = 0; i < n; i++)
        out[i] = 0;
    ks_status st = ks_sview_open(c, key, klen, 0, &v);
    if (st != KS_OK) return st;
    for (size_t i = 0; st == KS_OK && i < n; i++)
        if ((out[i] = ks_sview_has(c, &v, mem[i].f, mem[i].fl)) < 0) st = KS_ERR_ENGINE;
    ks_sview_close(&v);
    return st;
}

ks_status ks_smembers(ks_ctx *c, const char *key, size_t klen, ks_fields_fn fn, void *arg)
{
    ks_sview v;
    ks_status st = ks_sview_open(c, key, klen, 0, &v);
    if (st != KS_OK) return st;
    ks_fvec all;
    ks_fvec_init(&all);
    if (!v.m.big)
        fn(arg, v.items.v, v.items.n);
    else if ((st = ks_sview_all(c, &v, &all)) == KS_OK)
        fn(arg, all.v, all.n);
    ks_fvec_free(&all);
    ks_sview_close(&v);
    return st;
}

ks_status ks_sscan(ks_ctx *c, const char *key, size_t klen, uint64_t cursor, const char *pat,
                   size_t plen, uint64_t count, ks_fields_fn fn, void *arg, uint64_t *next)
{
    ks_sview v;
    *next = 0;
    ks_status st = ks_sview_open(c, key, klen, 0, &v);
    if (st != KS_OK) return st;
    ks_fvec out;
    ks_fvec_init(&out);
    if (!v.m.big) { /* small sets come back whole, as Redis's intset */
        for (size_t i = 0; st == KS_OK && i < v.items.n; i++)
            if ((!pat || ks_glob_match(pat, plen, v.items.v[i].f, v.items.v[i].fl, 0)) &&
                ks_fvec_push(&out, v.items.v[i].f, v.items.v[i].fl, NULL, 0) != 0)
                st = ks_oom(c);
    } else {
        ks_miter mi;
        ks_miter_open(&mi, c, NULL, c->db, v.m.version);
        if (!ks_member_cursor_seek(c, &mi, cursor)) ks_miter_first(&mi);
        for (uint64_t seen = 0; st == KS_OK && ks_miter_valid(&mi); ks_miter_next(&mi), seen++) {
            size_t sn;
            const char *s = ks_miter_suffix(&mi, &sn);
            if (seen == count) {
                *next = ks_member_cursor_save(c, &mi);
                break;
            }
            if (sn >= 8 && (!pat || ks_glob_match(pat, plen, s + 8, sn - 8, 0)) &&
                ks_fvec_push_copy(&out, s + 8, sn - 8, NULL, 0) != 0)
                st = ks_oom(c);
        }
        ks_status cst = ks_miter_close(&mi, c);
        if (st == KS_OK) st = cst;
    }
    if (st == KS_OK) fn(arg, out.v, out.n);
    ks_fvec_free(&out);
    ks_sview_close(&v);
    return st;
}

ks_status ks_smove(ks_ctx *c, const char *src, size_t sl, const char *dst, size_t dl,
                   const char *mem, size_t ml, int *moved)
{
    ks_write sw, dw;
    ks_field f = {mem, ml, NULL, 0};
    uint64_t n;
    *moved = 0;
    ks_status st = ks_write_begin(c, c->db, src, sl, KS_NONE, &sw);
    if (st != KS_OK) return st;
    if (sw.m.type == KS_NONE) { /* Redis answers 0 before any type check */
        ks_write_end(&sw);
        return KS_OK;
    }
    if (sw.m.type != KS_SET) {
        ks_write_end(&sw);
        return KS_ERR_WRONGTYPE;
    }
    if (sl == dl && memcmp(src, dst, sl) == 0) { /* a no-op: 1 when a member */
        ks_write_end(&sw);
        int r;
        st = ks_sismember(c, src, sl, &f, 1, &r);
        *moved = st == KS_OK && r;
        return st == KS_NOTFOUND ? KS_OK : st;
    }
    st = ks_write_begin(c, c->db, dst, dl, KS_SET, &dw);
    if (st != KS_OK) {
        ks_write_end(&sw);
        return st;
    }
    uint64_t removed;
    st = ks_set_remove(&sw, &f, 1, 0, &removed);
    if (st == KS_OK && removed) st = ks_set_add(&dw, &f, 1, &n); /* 1 even if dst had it */
    *moved = st == KS_OK && removed;
    ks_write_end(&dw);
    ks_write_end(&sw);
    return st;
}
