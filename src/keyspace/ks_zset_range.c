/*
 * ks_zset_range.c -- sorted-set ranges and what is built on them: ZRANGE
 * in all its forms, ZCOUNT, ZLEXCOUNT, ZRANK, ZREMRANGEBYRANK/SCORE/LEX,
 * ZRANGESTORE, ZPOPMIN/ZPOPMAX (and the blocking and multi-key pops),
 * ZRANDMEMBER.
 *
 * Packed zsets are read whole and ranges found as Redis's listpack code
 * finds them (linear scans from either end, which also fixes what a lex
 * range means over mixed scores). Big zsets resolve a score or lex range
 * to order keys [lo, hi) (ENCODING.md: skey:be64 member), so a range read
 * is one seek plus one step per member, ZCOUNT/ZLEXCOUNT two rank
 * descents, and a rank (ZRANGE by index, a large LIMIT offset, a random
 * member) one descent through the rank blocks (ks_zset_rank.c). A lex
 * range over a big zset takes the first member's score as every member's
 * (Redis leaves mixed scores unspecified).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_zset.h"

/* Big zsets: offsets past this many members jump by rank instead of
 * stepping. */
#define SKIP_BY_RANK (2 * KS_ZRANK_MAX)

/* ---- Range tests (Redis's zslValueGteMin ... sdscmplex) ------------------------ */

static int lexcmp(const char *m, size_t ml, const ks_zlex *b)
{
    if (b->inf) return -b->inf; /* "-" is below everything, "+" above */
    size_t n = ml < b->n ? ml : b->n;
    int r = n ? memcmp(m, b->p, n) : 0;
    return r ? r : (ml < b->n ? -1 : ml > b->n);
}

static int lex_bounds_cmp(const ks_zlex *a, const ks_zlex *b)
{
    if (a->inf && a->inf == b->inf) return 0;
    if (a->inf == -1 || b->inf == 1) return -1;
    if (a->inf == 1 || b->inf == -1) return 1;
    return -lexcmp(b->p, b->n, a);
}

static int range_empty(const ks_zspec *r)
{
    if (r->by == KS_ZBY_SCORE)
        return r->min > r->max || (r->min == r->max && (r->minex || r->maxex));
    int cmp = lex_bounds_cmp(&r->lmin, &r->lmax);
    int ex = r->lmin.ex || r->lmin.inf || r->lmax.ex || r->lmax.inf;
    return cmp > 0 || (cmp == 0 && ex);
}

static int gte_min(const ks_zspec *r, const ks_zmember *z)
{
    if (r->by == KS_ZBY_SCORE) return r->minex ? z->score > r->min : z->score >= r->min;
    int c = lexcmp(z->m, z->ml, &r->lmin);
    return (r->lmin.ex || r->lmin.inf) ? c > 0 : c >= 0;
}

static int lte_max(const ks_zspec *r, const ks_zmember *z)
{
    if (r->by == KS_ZBY_SCORE) return r->maxex ? z->score < r->max : z->score <= r->max;
    int c = lexcmp(z->m, z->ml, &r->lmax);
    return (r->lmax.ex || r->lmax.inf) ? c < 0 : c <= 0;
}

/* Redis's index rules for ZRANGE and ZREMRANGEBYRANK: 0 when empty. */
static int rank_window(const ks_zspec *r, uint64_t card, uint64_t *first, uint64_t *n)
{
    long long llen = (long long)card, start = r->start, end = r->end;
    if (start < 0) start = llen + start;
    if (end < 0) end = llen + end;
    if (start < 0) start = 0;
    if (start > end || start >= llen) return 0;
    if (end >= llen) end = llen - 1;
    *first = (uint64_t)start;
    *n = (uint64_t)(end - start + 1);
    return 1;
}

/* ---- Packed ranges ---------------------------------------------------------------- */

/* The first member of a packed zset in r scanning from the low end
 * (forward) or the high end, as zzlFirstInRange / zzlLastInRange and their
 * lex forms do; -1 when none. */
static long packed_first(const ks_zview *v, const ks_zspec *r, int rev)
{
    if (v->n == 0 || range_empty(r) || !gte_min(r, &v->items[v->n - 1]) ||
        !lte_max(r, &v->items[0]))
        return -1;
    if (!rev) {
        for (size_t i = 0; i < v->n; i++)
            if (gte_min(r, &v->items[i])) return lte_max(r, &v->items[i]) ? (long)i : -1;
    } else {
        for (size_t i = v->n; i-- > 0;)
            if (lte_max(r, &v->items[i])) return gte_min(r, &v->items[i]) ? (long)i : -1;
    }
    return -1;
}

/* Members of packed v in r (offset, limit and direction applied), as
 * pointers into v. */
static ks_status packed_collect(ks_ctx *c, const ks_zview *v, const ks_zspec *r, ks_zmvec *out)
{
    if (r->by == KS_ZBY_RANK) {
        uint64_t first, n;
        if (!rank_window(r, v->n, &first, &n)) return KS_OK;
        for (uint64_t i = 0; i < n; i++) {
            const ks_zmember *z = &v->items[r->rev ? v->n - 1 - first - i : first + i];
            if (ks_zmvec_push(out, z->m, z->ml, z->score, 0) != 0) return ks_oom(c);
        }
        return KS_OK;
    }
    long i = packed_first(v, r, r->rev);
    if (i < 0 || r->offset < 0) return KS_OK;
    long step = r->rev ? -1 : 1;
    i += step * (r->offset > (long long)v->n ? (long)v->n : (long)r->offset);
    for (long long left = r->limit; i >= 0 && i < (long)v->n && left != 0; i += step, left--) {
        const ks_zmember *z = &v->items[i];
        if (!(r->rev ? gte_min(r, z) : lte_max(r, z))) break;
        if (ks_zmvec_push(out, z->m, z->ml, z->score, 0) != 0) return ks_oom(c);
    }
    return KS_OK;
}

/* ---- Big ranges ------------------------------------------------------------------- */

/* A score or lex range of a big zset as order keys [lo, hi). A backward
 * walk must not step back from the zset's first member: below it lie the
 * popped members' tombstones (KS-Z7), which one step would walk over. So
 * it knows where that member is: by first, its order key (when has_first),
 * or by left, the members not yet passed of a walk from the last one. */
typedef struct zkeys {
    ks_ekey lo, hi;
    int has_hi, empty;
    ks_ekey first;
    int has_first;
    uint64_t left;
} zkeys;

static void bump(char *k8)
{
    uint64_t u = ks_get_be64(k8) + 1;
    ks_put_be64(k8, u);
}

static void lex_key(ks_ekey *k, const char *s0, const ks_zlex *b, int after)
{
    ks_ekey_append(k, s0, 8);
    ks_ekey_append(k, b->p, b->n);
    if (after) ks_ekey_append(k, "", 1); /* the least key above b: b followed by a 0 byte */
}

static ks_status big_bounds(ks_ctx *c, const ks_zview *v, const ks_zspec *r, zkeys *b)
{
    ks_zbuf_init(&b->lo);
    ks_zbuf_init(&b->hi);
    ks_zbuf_init(&b->first);
    b->has_hi = 1;
    b->has_first = 0;
    b->left = 0;
    b->empty = range_empty(r);
    if (b->empty) return KS_OK;
    char k[8];
    if (r->by == KS_ZBY_SCORE) {
        ks_put_be64(k, ks_zskey(r->min));
        if (r->minex) bump(k);
        ks_ekey_append(&b->lo, k, 8);
        ks_put_be64(k, ks_zskey(r->max));
        if (!r->maxex) bump(k);
        ks_ekey_append(&b->hi, k, 8);
        return KS_OK;
    }
    /* Lex: every member is taken to have the first member's score. */
    ks_miter mi;
    ks_zmember first;
    char s0[8];
    int have = 0;
    ks_miter_open(&mi, c, NULL, c->db, v->m.version);
    ks_zorder_seek_from(&mi, v, "", 0);
    if (ks_zorder_valid(&mi) && ks_zorder_entry(&mi, &first) == 0) {
        size_t sn;
        const char *sfx = ks_miter_suffix(&mi, &sn);
        memcpy(s0, sfx + 1, 8);
        ks_ekey_append(&b->first, sfx + 1, sn - 1);
        have = b->has_first = 1;
    }
    ks_status st = ks_miter_close(&mi, c);
    if (st != KS_OK) return st;
    if (!have) return ks_corrupt(c, "zset order entry");
    if (r->lmin.inf == 1 || r->lmax.inf == -1) return b->empty = 1, KS_OK;
    if (r->lmin.inf != -1) lex_key(&b->lo, s0, &r->lmin, r->lmin.ex);
    if (r->lmax.inf == 1)
        b->has_hi = 0;
    else
        lex_key(&b->hi, s0, &r->lmax, !r->lmax.ex);
    return KS_OK;
}

static void zkeys_free(zkeys *b)
{
    ks_ekey_free(&b->lo);
    ks_ekey_free(&b->hi);
    ks_ekey_free(&b->first);
}

/* A backward walk at the member under mi, about to step back from it: 1
 * when it is the zset's first (see zkeys). */
static int at_first(const ks_miter *mi, zkeys *b)
{
    if (!b->has_first) return b->left && --b->left == 0;
    size_t sn;
    const char *s = ks_miter_suffix(mi, &sn);
    return ks_zkcmp(s + 1, sn - 1, b->first.p, b->first.n) <= 0;
}

/* Sets b->first for a backward walk from b->hi of big zset v (a floor:
 * popped members below), with one seek of mi. */
static void find_first(const ks_zview *v, zkeys *b, ks_miter *mi)
{
    if (b->has_first || !v->floorl) return;
    ks_zorder_seek_from(mi, v, "", 0);
    if (!ks_zorder_valid(mi)) return;
    size_t sn;
    const char *s = ks_miter_suffix(mi, &sn);
    ks_ekey_append(&b->first, s + 1, sn - 1);
    b->has_first = 1;
}

static int key_lt(const ks_miter *mi, const ks_ekey *k)
{
    size_t sn;
    const char *s = ks_miter_suffix(mi, &sn);
    size_t n = sn - 1 < k->n ? sn - 1 : k->n;
    int r = n ? memcmp(s + 1, k->p, n) : 0;
    return r ? r < 0 : sn - 1 < k->n;
}

static ks_status rank_or_count(ks_ctx *c, const ks_zview *v, const ks_ekey *k, int has, uint64_t *r)
{
    if (!has) return *r = v->n, KS_OK;
    return ks_zrank_of(c, v, k->p, k->n, r);
}

/* Positions mi on the first member of [lo, hi) in r's direction after
 * skipping r->offset members; 0 when there is none. */
static ks_status big_start(ks_ctx *c, const ks_zview *v, const ks_zspec *r, zkeys *b, ks_miter *mi,
                           int *any)
{
    uint64_t off = (uint64_t)r->offset;
    *any = 0;
    if (off >= SKIP_BY_RANK && v->height) { /* no blocks (KS-Z5): the skip walks anyway */
        uint64_t lo, hi;
        ks_status st = rank_or_count(c, v, &b->lo, 1, &lo);
        if (st == KS_OK) st = rank_or_count(c, v, &b->hi, b->has_hi, &hi);
        if (st != KS_OK || hi <= lo || hi - lo <= off) return st;
        *any = 1;
        b->left = hi - off; /* backwards: the ranks from hi - 1 - off down to 0 */
        return ks_zrank_seek(c, v, mi, r->rev ? hi - 1 - off : lo + off);
    }
    if (!r->rev) {
        ks_zorder_seek_from(mi, v, b->lo.p, b->lo.n);
    } else if (!b->has_hi) {
        ks_zorder_last(mi);
        b->left = v->n;
    } else {
        find_first(v, b, mi);
        if (b->has_first && ks_zkcmp(b->hi.p, b->hi.n, b->first.p, b->first.n) <= 0)
            return KS_OK; /* nothing below hi: no seek down the tombstones */
        ks_zorder_seek_prev(mi, b->hi.p, b->hi.n);
        if (ks_zorder_valid(mi) && !key_lt(mi, &b->hi)) ks_miter_prev(mi);
    }
    for (; off && ks_zorder_valid(mi); off--) {
        if (r->rev && at_first(mi, b)) return KS_OK; /* skipped them all */
        r->rev ? ks_miter_prev(mi) : ks_miter_next(mi);
    }
    *any = 1;
    return KS_OK;
}

static ks_status big_collect(ks_ctx *c, const ks_zview *v, const ks_zspec *r, ks_zmvec *out)
{
    ks_miter mi;
    ks_status st = KS_OK;
    ks_miter_open(&mi, c, NULL, c->db, v->m.version);
    if (r->by == KS_ZBY_RANK) {
        uint64_t first, n;
        if (rank_window(r, v->n, &first, &n)) {
            st = ks_zrank_seek(c, v, &mi, r->rev ? v->n - 1 - first : first);
            for (; st == KS_OK && n && ks_zorder_valid(&mi); n--) {
                ks_zmember z;
                if (ks_zorder_entry(&mi, &z) != 0)
                    st = ks_corrupt(c, "zset order entry");
                else if (ks_zmvec_push(out, z.m, z.ml, z.score, 1) != 0)
                    st = ks_oom(c);
                else if (n > 1) /* no step past the last: the first member's */
                    r->rev ? ks_miter_prev(&mi) : ks_miter_next(&mi);
            }
        }
    } else if (r->offset >= 0) {
        zkeys b;
        int any = 0;
        st = big_bounds(c, v, r, &b);
        if (st == KS_OK && !b.empty) st = big_start(c, v, r, &b, &mi, &any);
        for (long long left = r->limit; st == KS_OK && any && left != 0 && ks_zorder_valid(&mi);
             left--) {
            if (r->rev ? key_lt(&mi, &b.lo) : (b.has_hi && !key_lt(&mi, &b.hi))) break;
            ks_zmember z;
            if (ks_zorder_entry(&mi, &z) != 0)
                st = ks_corrupt(c, "zset order entry");
            else if (ks_zmvec_push(out, z.m, z.ml, z.score, 1) != 0)
                st = ks_oom(c);
            if (r->rev && at_first(&mi, &b)) break;
            r->rev ? ks_miter_prev(&mi) : ks_miter_next(&mi);
        }
        zkeys_free(&b);
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* The members of v in r, in r's order: pointers into v for packed
 * values, copies in out's chunks for big ones. */
static ks_status collect(ks_ctx *c, const ks_zview *v, const ks_zspec *r, ks_zmvec *out)
{
    if (v->m.type == KS_NONE) return KS_OK;
    return v->m.big ? big_collect(c, v, r, out) : packed_collect(c, v, r, out);
}

/* ---- Commands ----------------------------------------------------------------------- */

ks_status ks_zrange(ks_ctx *c, const char *key, size_t klen, const ks_zspec *r, ks_zmembers_fn fn,
                    void *arg)
{
    ks_zview v;
    ks_status st = ks_zview_open(c, key, klen, &v);
    if (st != KS_OK) return st;
    ks_zmvec out;
    ks_zmvec_init(&out);
    st = collect(c, &v, r, &out);
    if (st == KS_OK) fn(arg, out.v, out.n);
    ks_zmvec_free(&out);
    ks_zview_close(&v);
    return st;
}

ks_status ks_zcount(ks_ctx *c, const char *key, size_t klen, const ks_zspec *r, uint64_t *n)
{
    ks_zview v;
    *n = 0;
    ks_status st = ks_zview_open(c, key, klen, &v);
    if (st != KS_OK) return st;
    if (!v.m.big) {
        long i = packed_first(&v, r, 0);
        for (; i >= 0 && i < (long)v.n && lte_max(r, &v.items[i]); i++)
            (*n)++;
    } else {
        zkeys b;
        uint64_t lo = 0, hi = 0;
        st = big_bounds(c, &v, r, &b);
        if (st == KS_OK && !b.empty) st = rank_or_count(c, &v, &b.lo, 1, &lo);
        if (st == KS_OK && !b.empty) st = rank_or_count(c, &v, &b.hi, b.has_hi, &hi);
        if (st == KS_OK && hi > lo) *n = hi - lo;
        zkeys_free(&b);
    }
    ks_zview_close(&v);
    return st;
}

ks_status ks_zrank(ks_ctx *c, const char *key, size_t klen, const char *m, size_t ml, int rev,
                   uint64_t *rank, int *found)
{
    ks_zview v;
    *found = 0;
    *rank = 0;
    ks_status st = ks_zview_open(c, key, klen, &v);
    if (st != KS_OK) return st;
    double score;
    int r = ks_zview_score(c, &v, m, ml, &score);
    if (r < 0) st = KS_ERR_ENGINE;
    if (r > 0 && !v.m.big) {
        ks_zmember z = {m, ml, score};
        for (size_t i = 0; i < v.n; i++)
            if (ks_zcmp(&v.items[i], &z) == 0) *rank = i;
    } else if (r > 0) {
        ks_ekey k;
        ks_zorder_key(&k, score, m, ml);
        st = ks_zrank_of(c, &v, k.p, k.n, rank);
        ks_ekey_free(&k);
    }
    if (st == KS_OK && r > 0) {
        *found = 1;
        if (rev) *rank = v.n - 1 - *rank;
    }
    ks_zview_close(&v);
    return st;
}

/* Removes every member of del from w's zset (z open on it). front: del
 * is the zset's first n members in order (the floor moves past them). */
static ks_status remove_all(ks_write *w, const ks_zmember *del, size_t n, int front,
                            uint64_t *removed)
{
    ks_zw z;
    ks_status st = ks_zw_open(&z, w);
    if (st == KS_OK && n == z.count) { /* everything: the key goes */
        ks_zw_abort(&z);
        *removed = n;
        return ks_write_del(w);
    }
    for (size_t i = 0; st == KS_OK && i < n; i++)
        st = ks_zw_remove(&z, del[i].m, del[i].ml, del[i].score);
    if (st == KS_OK && front && n)
        ks_zw_raise_floor(&z, del[n - 1].score, del[n - 1].m, del[n - 1].ml, 0);
    if (st == KS_OK) {
        *removed = n;
        return ks_zw_close(&z);
    }
    ks_zw_abort(&z);
    return st;
}

/* 1 when the members r selects (a ZREMRANGE*'s) are the first ones of a
 * zset of card members in order: a range from rank 0, from -inf or from
 * the least member. */
static int from_first(const ks_zspec *r, uint64_t card)
{
    uint64_t first, n;
    if (r->rev || r->offset > 0) return 0;
    if (r->by == KS_ZBY_RANK) return rank_window(r, card, &first, &n) && first == 0;
    if (r->by == KS_ZBY_SCORE) return r->min == -INFINITY && !r->minex;
    return r->lmin.inf == -1;
}

ks_status ks_zremrange(ks_ctx *c, const char *key, size_t klen, const ks_zspec *r,
                       uint64_t *removed)
{
    ks_write w;
    *removed = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_ZSET, &w);
    if (st != KS_OK) return st;
    if (w.m.type == KS_NONE) {
        ks_write_end(&w);
        return KS_NOTFOUND;
    }
    ks_zview v;
    ks_zmvec del;
    ks_zmvec_init(&del);
    st = ks_zview_of(c, &w.m, &v);
    if (st == KS_OK) st = collect(c, &v, r, &del);
    if (st == KS_OK && del.n) st = remove_all(&w, del.v, del.n, from_first(r, v.n), removed);
    ks_zmvec_free(&del);
    ks_zview_close(&v);
    ks_write_end(&w);
    return st;
}

/* Redis fills a ZRANGESTORE destination member by member in the range's
 * order: into a listpack first (by rank: unless the range is longer than
 * zset-max-listpack-entries, known up front), converted to a skiplist by
 * the member that would exceed either limit. A -0 written before that
 * conversion became the listpack's integer 0; the later ones keep their
 * sign (ks_zstore_items then clears every -0 only when no conversion
 * happened). */
static void listpack_zeros(const ks_ctx *c, const ks_zspec *r, ks_zmember *z, size_t n)
{
    long long entries = c->ks->limits.zset_max_listpack_entries,
              value = c->ks->limits.zset_max_listpack_value;
    if (r->by == KS_ZBY_RANK && (long long)n > entries) return;
    for (size_t i = 0; i < n; i++) {
        if ((long long)i + 1 > entries || (long long)z[i].ml > value) return;
        if (z[i].score == 0) z[i].score = 0.0;
    }
}

ks_status ks_zrangestore(ks_ctx *c, const char *dst, size_t dl, const char *src, size_t sl,
                         const ks_zspec *r, uint64_t *stored)
{
    ks_zview v;
    ks_zmvec out;
    ks_zmvec_init(&out);
    *stored = 0;
    ks_status st = ks_zview_open(c, src, sl, &v);
    int opened = st == KS_OK;
    if (st == KS_NOTFOUND) st = KS_OK;
    if (st == KS_OK && opened) st = collect(c, &v, r, &out);
    if (st == KS_OK) {
        ks_write w;
        st = ks_write_begin(c, c->db, dst, dl, KS_NONE, &w);
        if (st == KS_OK) {
            listpack_zeros(c, r, out.v, out.n);
            st = ks_zstore_items(&w, out.v, out.n);
            ks_write_end(&w);
        }
        *stored = out.n;
    }
    ks_zmvec_free(&out);
    if (opened) ks_zview_close(&v);
    return st;
}

ks_status ks_zstore(ks_ctx *c, const char *dst, size_t dl, const ks_zmember *z, size_t n)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, dst, dl, KS_NONE, &w);
    if (st != KS_OK) return st;
    st = ks_zstore_items(&w, z, n);
    ks_write_end(&w);
    return st;
}

ks_status ks_zpop(ks_ctx *c, const ks_field *keys, size_t nkeys, int max, uint64_t count,
                  ks_zpop_fn fn, void *arg)
{
    for (size_t k = 0; k < nkeys; k++) {
        ks_write w;
        ks_status st = ks_write_begin(c, c->db, keys[k].f, keys[k].fl, KS_NONE, &w);
        if (st != KS_OK) return st;
        if (w.m.type == KS_NONE) {
            ks_write_end(&w);
            continue;
        }
        if (w.m.type != KS_ZSET) {
            ks_write_end(&w);
            return KS_ERR_WRONGTYPE;
        }
        ks_zview v;
        ks_zmvec got;
        ks_zmvec_init(&got);
        ks_zspec r = {.by = KS_ZBY_RANK,
                      .rev = max,
                      .start = 0,
                      .end = count > (uint64_t)INT64_MAX ? INT64_MAX : (long long)count - 1};
        uint64_t removed = 0;
        int done = 0;
        st = ks_zview_of(c, &w.m, &v);
        if (st == KS_OK && v.m.big && !max && count < v.n) {
            st = ks_zfront_pop(&w, &v, count, &got, &done); /* KS-Z6 */
            removed = got.n;
        }
        /* Packed members point into w's record, which outlives the writes
         * (ks_write_end frees it); big ones are copies, or point into the
         * front cache, which only a later pop refills. */
        if (st == KS_OK && !done) st = collect(c, &v, &r, &got);
        if (st == KS_OK && !done) st = remove_all(&w, got.v, got.n, !max, &removed);
        if (st == KS_OK) fn(arg, keys[k].f, keys[k].fl, got.v, got.n);
        ks_zmvec_free(&got);
        ks_zview_close(&v);
        ks_write_end(&w);
        return st;
    }
    return KS_NOTFOUND;
}

/* ---- Random members ------------------------------------------------------------------ */

static uint64_t rand_below(keyspace *ks, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)ks_rand(ks) * n) >> 64);
}

static int u64cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads the members of the sorted ranks[0..n) (repeats allowed) of big v
 * into out, in that order: steps between near ranks, descends for far
 * ones, so the cost is at most about one walk of the zset. */
static ks_status fetch_ranks(ks_ctx *c, const ks_zview *v, const uint64_t *ranks, size_t n,
                             ks_zmvec *out)
{
    ks_miter mi;
    ks_status st = KS_OK;
    uint64_t at = 0;
    int placed = 0;
    ks_miter_open(&mi, c, NULL, c->db, v->m.version);
    for (size_t i = 0; st == KS_OK && i < n; i++) {
        uint64_t r = ranks[i];
        if (!placed || r < at || (r - at > SKIP_BY_RANK && v->height)) {
            st = ks_zrank_seek(c, v, &mi, r);
        } else {
            for (; at < r && ks_zorder_valid(&mi); at++)
                ks_miter_next(&mi);
        }
        placed = 1;
        at = r;
        ks_zmember z;
        if (st == KS_OK && (!ks_zorder_valid(&mi) || ks_zorder_entry(&mi, &z) != 0))
            st = ks_corrupt(c, "zset order entry");
        if (st == KS_OK && ks_zmvec_push(out, z.m, z.ml, z.score, 1) != 0) st = ks_oom(c);
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* Members of the ranks (sorted) of v, packed or big. */
static ks_status members_at(ks_ctx *c, const ks_zview *v, const uint64_t *ranks, size_t n,
                            ks_zmvec *out)
{
    if (v->m.big) return fetch_ranks(c, v, ranks, n, out);
    for (size_t i = 0; i < n; i++)
        if (ks_zmvec_push(out, v->items[ranks[i]].m, v->items[ranks[i]].ml,
                          v->items[ranks[i]].score, 0) != 0)
            return ks_oom(c);
    return KS_OK;
}

/* count distinct random ranks below card (count < card), sorted. */
static uint64_t *distinct_ranks(keyspace *ks, uint64_t card, uint64_t count)
{
    uint64_t *r = malloc(count * sizeof(*r));
    if (!r) return NULL;
    if (count * 2 > card) { /* most of them: a partial shuffle of every rank */
        uint64_t *all = malloc(card * sizeof(*all));
        if (!all) return free(r), NULL;
        for (uint64_t i = 0; i < card; i++)
            all[i] = i;
        for (uint64_t i = 0; i < count; i++) {
            uint64_t j = i + rand_below(ks, card - i), t = all[i];
            all[i] = all[j];
            all[j] = t;
        }
        memcpy(r, all, count * sizeof(*r));
        free(all);
    } else { /* few: draw, sort, drop repeats, draw again for the missing */
        uint64_t have = 0;
        while (have < count) {
            for (uint64_t i = have; i < count; i++)
                r[i] = rand_below(ks, card);
            qsort(r, count, sizeof(*r), u64cmp);
            have = 0;
            for (uint64_t i = 0; i < count; i++)
                if (i == 0 || r[i] != r[have - 1]) r[have++] = r[i];
        }
    }
    qsort(r, count, sizeof(*r), u64cmp);
    return r;
}

typedef struct draw {
    uint64_t rank, pos;
} draw;

static int drawcmp(const void *a, const void *b)
{
    const draw *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* count draws with repetition, in draw order. */
static ks_status repeated(ks_ctx *c, const ks_zview *v, uint64_t count, ks_zmvec *out)
{
    draw *d = malloc(count * sizeof(*d));
    uint64_t *ranks = malloc(count * sizeof(*ranks));
    ks_zmvec sorted;
    ks_zmvec_init(&sorted);
    ks_status st = d && ranks ? KS_OK : ks_oom(c);
    for (uint64_t i = 0; st == KS_OK && i < count; i++)
        d[i] = (draw){rand_below(c->ks, v->n), i};
    if (st == KS_OK) {
        qsort(d, count, sizeof(*d), drawcmp);
        for (uint64_t i = 0; i < count; i++)
            ranks[i] = d[i].rank;
        st = members_at(c, v, ranks, count, &sorted);
    }
    if (st == KS_OK) {
        ks_zmember *o = malloc(count * sizeof(*o));
        if (!o) st = ks_oom(c);
        for (uint64_t i = 0; o && i < count; i++)
            o[d[i].pos] = sorted.v[i];
        if (o) {
            if (sorted.v != &sorted.one) free(sorted.v); /* the chunks stay: out takes them over */
            sorted.v = o;
            sorted.cap = count;
        }
    }
    if (st == KS_OK) {
        ks_zmvec_move(out, &sorted);
    } else {
        ks_zmvec_free(&sorted);
    }
    free(d);
    free(ranks);
    return st;
}

ks_status ks_zrandmember(ks_ctx *c, const char *key, size_t klen, uint64_t count, int uniq,
                         ks_zmembers_fn fn, void *arg)
{
    ks_zview v;
    ks_status st = ks_zview_open(c, key, klen, &v);
    if (st != KS_OK) return st;
    ks_zmvec out;
    ks_zmvec_init(&out);
    if (count == 0) {
        /* nothing */
    } else if (!uniq) {
        st = repeated(c, &v, count, &out);
    } else if (count >= v.n) { /* the whole zset, from the top as Redis's case 2 walks it */
        ks_zspec all = {.by = KS_ZBY_RANK, .rev = 1, .start = 0, .end = -1};
        st = collect(c, &v, &all, &out);
    } else {
        uint64_t *ranks = distinct_ranks(c->ks, v.n, count);
        st = ranks ? members_at(c, &v, ranks, count, &out) : ks_oom(c);
        free(ranks);
        for (size_t i = out.n; st == KS_OK && i > 1; i--) { /* not in zset order */
            size_t j = rand_below(c->ks, i);
            ks_zmember t = out.v[i - 1];
            out.v[i - 1] = out.v[j];
            out.v[j] = t;
        }
    }
    if (st == KS_OK) fn(arg, out.v, out.n);
    ks_zmvec_free(&out);
    ks_zview_close(&v);
    return st;
}
