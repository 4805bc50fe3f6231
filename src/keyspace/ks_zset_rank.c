/*
 * ks_zset_rank.c -- the counted rank blocks of big sorted sets, which make
 * ZRANK, ZRANGE by rank, ZCOUNT and random members cost a bounded number
 * of iterator steps at any size (Redis's skiplist spans, on disk). This
 * file holds the format, the reads (rank, seek, the walk without blocks)
 * and the invariant checker; ks_zset_rank_upkeep.c the writes (the rank
 * log, apply, rebuild); ks_zset_rank.h what the two share.
 *
 * On-disk format (ENCODING.md, "Sorted sets (type 5)"): under the zset's
 * version,
 *   0x02 level:u8 start -> count:le64 children:le64
 *   0x03 seq:be64 -> d:i8 orderkey          (the rank log; 0x03 alone: sentinel)
 * where start is an order key (skey:be64 member, the order entry's suffix
 * without its 0x01 tag), empty for the first block of a level. The blocks
 * of a level partition the order into [start_i, start_i+1); count is the
 * number of order entries in the range (KS-Z2); children the number of
 * order entries (level 1) or level-1 lower blocks (level >= 2) starting in
 * it; every start of level L+1 is a start of level L (KS-Z3), every block
 * has at most 2B children and the top level at most 2B blocks. A start
 * need not name an existing order entry (the entry may have been removed
 * since): ranges only compare against it.
 *
 * Algorithms:
 * - rank(x): from the top level down, walk the blocks of the current
 *   parent, adding the counts of those that end before x, descend into the
 *   one that holds x; at level 1 walk its order entries up to x.
 * - seek(r): the same descent choosing by the running sum of counts.
 * - log: a command's few order-entry changes wait in the rank log (KS-Z4,
 *   below) until more than KS_ZLOG_MAX are pending; rank reads add them.
 * - apply: a command's order-entry changes (+1/-1 per order key, sorted)
 *   with the log's are added to the blocks that hold them, level by level; a block above
 *   2B children splits into pieces of about B (one walk of its children),
 *   one below B/4 that is not its parent's first child is merged into its
 *   predecessor when they fit in 2B; each new or removed start is a
 *   children change for the level above. A top level above 2B blocks gets
 *   a new level over it; a single top block above level 1 is dropped.
 * - rebuild: one walk of the order entries (levels built B at a time),
 *   used when a command changes more than an eighth of the members.
 * - none yet (height 0, KS-Z5): a zset turning big, rewritten or stored
 *   has no blocks and its writes keep none; rank reads walk from the
 *   nearer end, and one that walks more than KS_ZRANK_WANT_STEPS asks for
 *   the blocks, which the zset's next view or write builds (rebuild).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_zset.h"
#include "keyspace/ks_zset_rank.h"

#define B ks_zrank_b

unsigned ks_zrank_b = KS_ZRANK_FANOUT;

#define kcmp ks_zkcmp

/* The block under mi when it is one of level: 1 (start, count, children
 * set), 0 when mi is past the level, -1 when the value is malformed. */
int ks_zrank_blk_at(const ks_miter *mi, int level, const char **start, size_t *sl, uint64_t *count,
                    uint64_t *children)
{
    if (!ks_miter_valid(mi)) return 0;
    size_t sn, vn;
    const char *s = ks_miter_suffix(mi, &sn);
    if (sn < 2 || s[0] != KS_ZTAG_RANK || (unsigned char)s[1] != level) return 0;
    const char *v = ks_miter_value(mi, &vn);
    if (vn != 16) return -1;
    *start = s + 2;
    *sl = sn - 2;
    *count = ks_get_le64(v);
    *children = ks_get_le64(v + 8);
    return 1;
}

void ks_zrank_blk_seek(ks_miter *mi, int level, const char *start, size_t sl, int prev)
{
    ks_ekey k;
    ks_zsfx_rank(&k, level, start, sl);
    if (prev)
        ks_miter_seek_prev(mi, k.p, k.n);
    else
        ks_miter_seek(mi, k.p, k.n);
    ks_ekey_free(&k);
}

void ks_zrank_blk_put(ks_ctx *c, int db, uint64_t version, int level, const char *start, size_t sl,
                      uint64_t count, uint64_t children)
{
    ks_ekey k;
    char v[16];
    ks_put_le64(v, count);
    ks_put_le64(v + 8, children);
    ks_zsfx_rank(&k, level, start, sl);
    ks_member_put(c, db, version, k.p, k.n, v, 16);
    ks_ekey_free(&k);
}

void ks_zrank_blk_del(ks_ctx *c, int db, uint64_t version, int level, const char *start, size_t sl)
{
    ks_ekey k;
    ks_zsfx_rank(&k, level, start, sl);
    ks_member_del(c, db, version, k.p, k.n);
    ks_ekey_free(&k);
}

/* 1 when mi is on an order entry whose key (after the tag) is < end
 * (end NULL: no bound); *key set. */
int ks_zrank_order_before(const ks_miter *mi, const char *end, size_t el, const char **key,
                          size_t *kl)
{
    if (!ks_zorder_valid(mi)) return 0;
    size_t sn;
    const char *s = ks_miter_suffix(mi, &sn);
    *key = s + 1;
    *kl = sn - 1;
    return !end || kcmp(*key, *kl, end, el) < 0;
}

ks_status ks_zrank_corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "zset rank blocks");
}

/* ---- The rank log ----------------------------------------------------------------
 * A write that changes few order entries does not touch the blocks: it
 * appends its changes (+1/-1 per order key) as log entries
 * 0x03 seq:be64 -> d:i8 orderkey, seq from the ext's logend up. Each log
 * key is written once and deleted once, so the log, unlike a block every
 * write rewrites, never piles up versions of one key that seeks step
 * over. Once more than KS_ZLOG_MAX changes would be pending, the write
 * folds them all into the blocks (sorted, in one pass) and deletes the
 * entries; logfirst moves past them, so reads seek beyond their
 * tombstones. The entry 0x03 alone, written with the first log entry of a
 * version and never deleted, stops a walk off the top level's last block
 * before those tombstones. Rank reads add the pending changes to the
 * counts they use (KS-Z4). */

static int dcmp(const void *a, const void *b)
{
    const ks_zdelta *x = a, *y = b;
    return kcmp(x->k, x->kl, y->k, y->kl);
}

/* Sorts deltas and sums those of the same key; returns the new count
 * (zero sums dropped). */
size_t ks_zrank_deltas_net(ks_zdelta *d, size_t n)
{
    if (n < 2) return n && (d[0].dcount || d[0].dchildren) ? n : 0;
    qsort(d, n, sizeof(*d), dcmp);
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        ks_zdelta s = d[i++];
        while (i < n && kcmp(d[i].k, d[i].kl, s.k, s.kl) == 0) {
            s.dcount += d[i].dcount;
            s.dchildren += d[i].dchildren;
            i++;
        }
        if (s.dcount || s.dchildren) d[out++] = s;
    }
    return out;
}

void ks_zrank_log_sfx(char *k, uint64_t seq)
{
    k[0] = KS_ZTAG_LOG;
    ks_put_be64(k + 1, seq);
}

/* Calls fn(arg, key, kl, d) for the log entries [first, end) of (db,
 * version), in order; ks_zrank_corrupt when one is missing or malformed. */
ks_status ks_zrank_log_read(ks_ctx *c, int db, uint64_t version, uint64_t first, uint64_t end,
                            ks_zrank_log_fn fn, void *arg)
{
    ks_miter mi;
    ks_status st = KS_OK;
    char k[9];
    uint64_t seq = first;
    ks_zrank_log_sfx(k, first);
    ks_miter_open(&mi, c, NULL, db, version);
    for (ks_miter_seek(&mi, k, 9); st == KS_OK && seq < end; ks_miter_next(&mi), seq++) {
        size_t sn, vn;
        const char *sx = ks_miter_valid(&mi) ? ks_miter_suffix(&mi, &sn) : NULL;
        const char *v = sx ? ks_miter_value(&mi, &vn) : NULL;
        if (!sx || sn != 9 || sx[0] != KS_ZTAG_LOG || ks_get_be64(sx + 1) != seq || vn < 1 ||
            v[0] == 0)
            st = ks_zrank_corrupt(c);
        else
            st = fn(arg, v + 1, vn - 1, (signed char)v[0]);
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* The pending changes of a view, sorted and netted, with prefix sums. */
typedef struct zpend {
    ks_zdelta *d;
    int64_t *pre; /* pre[i] = sum of d[0..i).dcount */
    size_t n, cap;
    ks_fvec own;
    ks_ctx *c;
} zpend;

static ks_status pend_push(void *arg, const char *k, size_t kl, int64_t d)
{
    zpend *p = arg;
    return ks_zdelta_push(p->c, &p->d, &p->n, &p->cap, &p->own, k, kl, d);
}

static void pend_free(zpend *p)
{
    free(p->d);
    free(p->pre);
    ks_fvec_free(&p->own);
    p->d = NULL;
    p->pre = NULL;
    p->n = p->cap = 0;
}

/* Loads v's pending log (p->n == 0 when it is empty). pend_free after. */
static ks_status pend_load(ks_ctx *c, const ks_zview *v, zpend *p)
{
    memset(p, 0, sizeof(*p));
    ks_fvec_init(&p->own);
    p->c = c;
    if (v->logend == v->logfirst) return KS_OK;
    ks_status st = ks_zrank_log_read(c, c->db, v->m.version, v->logfirst, v->logend, pend_push, p);
    if (st != KS_OK) return st;
    p->n = ks_zrank_deltas_net(p->d, p->n);
    p->pre = malloc((p->n + 1) * sizeof(*p->pre));
    if (!p->pre) return ks_oom(c);
    p->pre[0] = 0;
    for (size_t i = 0; i < p->n; i++)
        p->pre[i + 1] = p->pre[i] + p->d[i].dcount;
    return KS_OK;
}

/* The index of the first pending change whose key is >= k. */
static size_t pend_lb(const zpend *p, const char *k, size_t kl)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (kcmp(p->d[mid].k, p->d[mid].kl, k, kl) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The net pending change of the order keys in [lo, hi) (hi NULL: no end). */
static int64_t pend_sum(const zpend *p, const char *lo, size_t ll, const char *hi, size_t hl)
{
    if (!p || p->n == 0) return 0;
    size_t b = hi ? pend_lb(p, hi, hl) : p->n;
    return p->pre[b] - p->pre[pend_lb(p, lo, ll)];
}

/* ---- Reading: rank and seek ---------------------------------------------------- */

/* The descent both reads share: from the top, within the parent range
 * that starts at lo, walk the blocks of each level. By key: stop at the
 * last block starting at or before key, adding the counts passed to *r.
 * By rank: stop at the block where the remaining rank *r falls, taking
 * the counts passed off it. lo ends as the chosen level-1 block's start.
 * p: the pending log changes, which a block's count lacks (KS-Z4). */
static ks_status descend(ks_ctx *c, const ks_zview *v, ks_miter *mi, int by_rank, const char *key,
                         size_t kl, const zpend *p, uint64_t *r, ks_ekey *lo)
{
    uint64_t acc = 0;
    ks_zbuf_init(lo);
    for (int level = v->height; level >= 1; level--) {
        const char *s;
        size_t sl;
        uint64_t cnt, ch, ncnt;
        ks_zrank_blk_seek(mi, level, lo->p, lo->n, 0);
        if (ks_zrank_blk_at(mi, level, &s, &sl, &cnt, &ch) != 1 || kcmp(s, sl, lo->p, lo->n) != 0)
            return ks_zrank_corrupt(c);
        for (;;) {
            if (by_rank && !p->n && *r < cnt) break;
            ks_miter_next(mi);
            int nx = ks_zrank_blk_at(mi, level, &s, &sl, &ncnt, &ch);
            if (nx < 0) return ks_zrank_corrupt(c);
            if (by_rank) {
                int64_t t = (int64_t)cnt + pend_sum(p, lo->p, lo->n, nx ? s : NULL, sl);
                if (t < 0) return ks_zrank_corrupt(c);
                if (*r < (uint64_t)t) break;
                if (nx == 0) return ks_zrank_corrupt(c);
                *r -= (uint64_t)t;
            } else {
                if (nx == 0 || kcmp(s, sl, key, kl) > 0) break;
                acc += cnt;
            }
            lo->n = 0;
            ks_ekey_append(lo, s, sl);
            cnt = ncnt;
        }
    }
    if (!by_rank) *r = acc + (uint64_t)pend_sum(p, "", 0, lo->p, lo->n);
    return KS_OK;
}

/* ---- Without blocks (KS-Z5) ---------------------------------------------------- */

int ks_zrank_wanted(const ks_ctx *c, int db, uint64_t version)
{
    return c->ks->zrank_want_version == version && c->ks->zrank_want_db == db;
}

/* A walk of steps order entries on v (no blocks): a long one asks for
 * the blocks. */
static void walked(ks_ctx *c, const ks_zview *v, uint64_t steps)
{
    if (steps <= KS_ZRANK_WANT_STEPS) return;
    c->ks->zrank_want_db = c->db;
    c->ks->zrank_want_version = v->m.version;
}

/* rank(key) by walking from both ends at once, so it costs twice the
 * distance to the nearer one. */
static ks_status walk_rank_of(ks_ctx *c, const ks_zview *v, const char *key, size_t kl,
                              uint64_t *rank)
{
    ks_miter f, b;
    const char *k;
    size_t n;
    uint64_t nf = 0, nb = 0;
    ks_miter_open(&f, c, NULL, c->db, v->m.version);
    ks_miter_open(&b, c, NULL, c->db, v->m.version);
    ks_zorder_seek_from(&f, v, "", 0);
    ks_zorder_last(&b);
    for (;; nf++, nb++) {
        if (!ks_zrank_order_before(&f, key, kl, &k, &n)) { /* f: the first entry >= key */
            *rank = nf;
            break;
        }
        ks_miter_next(&f);
        if (!ks_zorder_valid(&b) ||
            ks_zrank_order_before(&b, key, kl, &k, &n)) { /* b: the last < key */
            *rank = nb <= v->n ? v->n - nb : 0;
            break;
        }
        ks_miter_prev(&b);
    }
    walked(c, v, nf + nb);
    ks_status st = ks_miter_close(&f, c), bst = ks_miter_close(&b, c);
    return st != KS_OK ? st : bst;
}

/* Positions mi on rank r by walking from the nearer end. */
static ks_status walk_seek(ks_ctx *c, const ks_zview *v, ks_miter *mi, uint64_t r)
{
    uint64_t back = v->n - 1 - r, steps = r < back ? r : back;
    if (r < back) {
        ks_zorder_seek_from(mi, v, "", 0);
        for (; r && ks_zorder_valid(mi); r--)
            ks_miter_next(mi);
    } else {
        ks_zorder_last(mi);
        for (; back && ks_zorder_valid(mi); back--)
            ks_miter_prev(mi);
    }
    walked(c, v, steps);
    return ks_zorder_valid(mi) ? KS_OK : ks_zrank_corrupt(c);
}

/* ---- Rank reads ------------------------------------------------------------------ */

ks_status ks_zrank_of(ks_ctx *c, const ks_zview *v, const char *key, size_t kl, uint64_t *rank)
{
    if (v->height == 0) return walk_rank_of(c, v, key, kl, rank);
    ks_miter mi;
    ks_ekey lo;
    zpend p;
    uint64_t r = 0;
    ks_status st = pend_load(c, v, &p);
    ks_zbuf_init(&lo);
    ks_miter_open(&mi, c, NULL, c->db, v->m.version);
    if (st == KS_OK) st = descend(c, v, &mi, 0, key, kl, &p, &r, &lo);
    if (st == KS_OK) {
        const char *k;
        size_t n;
        for (ks_zorder_seek_from(&mi, v, lo.p, lo.n); ks_zrank_order_before(&mi, key, kl, &k, &n);
             ks_miter_next(&mi))
            r++;
    }
    ks_ekey_free(&lo);
    pend_free(&p);
    ks_status cst = ks_miter_close(&mi, c);
    *rank = r;
    return st != KS_OK ? st : cst;
}

ks_status ks_zrank_seek(ks_ctx *c, const ks_zview *v, ks_miter *mi, uint64_t r)
{
    ks_ekey lo;
    zpend p;
    if (v->height == 0 && r < v->n) return walk_seek(c, v, mi, r);
    if (r < KS_ZRANK_MAX) { /* near the front a walk is cheaper than the descent */
        ks_zorder_seek_from(mi, v, "", 0);
        for (; r && ks_zorder_valid(mi); r--)
            ks_miter_next(mi);
        return ks_zorder_valid(mi) ? KS_OK : ks_zrank_corrupt(c);
    }
    ks_status st = pend_load(c, v, &p);
    ks_zbuf_init(&lo);
    if (st == KS_OK) st = descend(c, v, mi, 1, NULL, 0, &p, &r, &lo);
    if (st == KS_OK) {
        ks_zorder_seek_from(mi, v, lo.p, lo.n);
        for (; r && ks_zorder_valid(mi); r--)
            ks_miter_next(mi);
        if (!ks_zorder_valid(mi)) st = ks_zrank_corrupt(c);
    }
    ks_ekey_free(&lo);
    pend_free(&p);
    return st;
}

/* ---- Building levels ------------------------------------------------------------ */

ks_status ks_zrank_copy_into(ks_ctx *c, ks_fvec *own, const char *p, size_t n, const char **out)
{
    if (ks_fvec_push_copy(own, p, n, NULL, 0) != 0) return ks_oom(c);
    *out = own->v[own->n - 1].f;
    return KS_OK;
}

int ks_zrank_blist_push(ks_zrank_blist *l, const char *s, size_t sl, uint64_t count,
                        uint64_t children)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        const char **ns = realloc(l->start, cap * sizeof(*ns));
        if (ns) l->start = ns;
        size_t *nl = realloc(l->sl, cap * sizeof(*nl));
        if (nl) l->sl = nl;
        uint64_t *nc = realloc(l->count, cap * sizeof(*nc));
        if (nc) l->count = nc;
        uint64_t *nh = realloc(l->children, cap * sizeof(*nh));
        if (nh) l->children = nh;
        if (!ns || !nl || !nc || !nh) return -1;
        l->cap = cap;
    }
    l->start[l->n] = s;
    l->sl[l->n] = sl;
    l->count[l->n] = count;
    l->children[l->n] = children;
    l->n++;
    return 0;
}

void ks_zrank_blist_free(ks_zrank_blist *l)
{
    free(l->start);
    free(l->sl);
    free(l->count);
    free(l->children);
    memset(l, 0, sizeof(*l));
}

/* ---- The invariant checker ------------------------------------------------------------ */

/* KS-Z2 and KS-Z3 with the pending log p added to the level-1 counts
 * (KS-Z4); the levels above sum the counts below them as stored. */
static const char *check_levels(ks_ctx *c, const ks_zview *v, ks_miter *mi, ks_zrank_blist *lv,
                                size_t nlv, ks_fvec *own, const ks_zrank_blist *order,
                                const zpend *p)
{
    for (int level = 1; level <= v->height; level++) {
        const char *s;
        size_t sl;
        uint64_t cnt, ch;
        int r;
        ks_zrank_blist *l = &lv[level];
        for (ks_zrank_blk_seek(mi, level, "", 0, 0);
             (r = ks_zrank_blk_at(mi, level, &s, &sl, &cnt, &ch)) == 1; ks_miter_next(mi)) {
            const char *cp = NULL;
            if (ks_zrank_copy_into(c, own, s, sl, &cp) != KS_OK ||
                ks_zrank_blist_push(l, cp, sl, cnt, ch) != 0)
                return "out of memory";
        }
        if (r < 0) return "malformed rank block";
        if (l->n == 0 || l->sl[0] != 0) return "a level does not start with an empty start";
        const ks_zrank_blist *lower = level == 1 ? order : &lv[level - 1];
        size_t j = 0;
        uint64_t total = 0;
        for (size_t i = 0; i < l->n; i++) {
            uint64_t n = 0, sum = 0;
            if (i &&
                (j >= lower->n ||
                 kcmp(lower->start[j], lower->sl[j], l->start[i], l->sl[i]) != 0) &&
                level > 1)
                return "KS-Z3: a block start is not a start of the level below";
            while (j < lower->n && (i + 1 == l->n || kcmp(lower->start[j], lower->sl[j],
                                                          l->start[i + 1], l->sl[i + 1]) < 0)) {
                sum += lower->count[j];
                n++, j++;
            }
            int64_t pd = 0;
            if (level == 1)
                pd = pend_sum(p, l->start[i], l->sl[i], i + 1 < l->n ? l->start[i + 1] : NULL,
                              i + 1 < l->n ? l->sl[i + 1] : 0);
            if ((int64_t)l->children[i] + pd != (int64_t)n)
                return "KS-Z2: children differ from the entries below";
            if ((int64_t)l->count[i] + pd != (int64_t)sum)
                return "KS-Z2: count differs from the entries below";
            if (l->children[i] > KS_ZRANK_MAX) return "KS-Z3: a block has more than 2B children";
            total += l->count[i];
        }
        if ((int64_t)total + pend_sum(p, "", 0, NULL, 0) != (int64_t)v->n)
            return "KS-Z2: the counts of a level do not sum to ZCARD";
    }
    if (lv[v->height].n > KS_ZRANK_MAX) return "KS-Z3: the top level has more than 2B blocks";
    (void)nlv;
    return NULL;
}

/* KS-Z1: each member entry has its order entry with the same score, and
 * their counts are ZCARD; order gets the order keys (copies in own) for
 * the level checks. NULL, or what is wrong. */
static const char *check_members(ks_ctx *c, const ks_zview *v, ks_miter *mi, ks_fvec *own,
                                 ks_zrank_blist *order)
{
    const char *why = NULL;
    uint64_t members = 0;
    char t = KS_ZTAG_MEMBER;
    for (ks_miter_seek(mi, &t, 1); !why && ks_miter_valid(mi); ks_miter_next(mi)) {
        size_t sn, vn;
        const char *s = ks_miter_suffix(mi, &sn);
        ks_miter_value(mi, &vn);
        if (sn < 1 || s[0] != KS_ZTAG_MEMBER) break;
        if (vn != 8) why = "malformed member entry";
        members++;
    }
    for (ks_zorder_first(mi); !why && ks_zorder_valid(mi); ks_miter_next(mi)) {
        ks_zmember z;
        const char *cp = NULL;
        if (ks_zorder_entry(mi, &z) != 0) {
            why = "malformed order entry";
            break;
        }
        size_t sn;
        const char *s = ks_miter_suffix(mi, &sn);
        if (ks_zrank_copy_into(c, own, s + 1, sn - 1, &cp) != KS_OK ||
            ks_zrank_blist_push(order, cp, sn - 1, 1, 1))
            why = "out of memory";
    }
    for (size_t i = 0; !why && i < order->n; i++) {
        ks_zmember z = {order->start[i] + 8, order->sl[i] - 8,
                        ks_zskey_score(ks_get_be64(order->start[i]))};
        double sc;
        int r = ks_zview_score(c, v, z.m, z.ml, &sc);
        if (r != 1 || ks_zskey(sc) != ks_get_be64(order->start[i]))
            why = "KS-Z1: an order entry without its member entry";
    }
    if (!why && (members != order->n || order->n != v->n))
        why = "KS-Z1: member entries, order entries and ZCARD differ";
    return why;
}

/* Every invariant of big zset v's entries (KS-Z1 to KS-Z5); NULL, or what is
 * wrong. */
static const char *check_big(ks_ctx *c, const ks_zview *v, ks_miter *mi)
{
    ks_fvec own;
    ks_fvec_init(&own);
    ks_zrank_blist order = {0}, lv[KS_ZRANK_MAX_HEIGHT + 1];
    memset(lv, 0, sizeof(lv));
    const char *why = check_members(c, v, mi, &own, &order);
    if (!why) {
        zpend p;
        if (pend_load(c, v, &p) != KS_OK)
            why = "KS-Z4: a malformed or missing log entry";
        else if (v->logend - v->logfirst > KS_ZLOG_MAX)
            why = "KS-Z4: the log is longer than KS_ZLOG_MAX";
        else
            why = check_levels(c, v, mi, lv, KS_ZRANK_MAX_HEIGHT + 1, &own, &order, &p);
        pend_free(&p);
    }
    if (!why && v->height == 0) { /* KS-Z5 */
        char t = KS_ZTAG_RANK;
        ks_miter_seek(mi, &t, 1);
        if (ks_miter_valid(mi)) /* anything at or after the first block's tag */
            why = "KS-Z5: a rank block or log entry without a height";
    }
    if (!why) {
        const char *s;
        size_t sl;
        uint64_t cnt, ch;
        ks_zrank_blk_seek(mi, v->height + 1, "", 0, 0);
        if (ks_zrank_blk_at(mi, v->height + 1, &s, &sl, &cnt, &ch) != 0)
            why = "a block above the top level";
        ks_zrank_blk_seek(mi, 0, "", 0, 0);
        if (ks_zrank_blk_at(mi, 0, &s, &sl, &cnt, &ch) != 0) why = "a block at level 0";
    }
    for (int i = 0; i <= KS_ZRANK_MAX_HEIGHT; i++)
        ks_zrank_blist_free(&lv[i]);
    ks_zrank_blist_free(&order);
    ks_fvec_free(&own);
    return why;
}

int ks_zset_check(ks_ctx *c, const char *key, size_t klen, const char **why)
{
    ks_zview v;
    *why = NULL;
    ks_status st = ks_zview_open(c, key, klen, &v);
    if (st == KS_NOTFOUND) return 0;
    if (st != KS_OK) {
        *why = "the key does not read as a zset";
        return -1;
    }
    if (v.m.big) {
        ks_miter mi;
        ks_miter_open(&mi, c, NULL, c->db, v.m.version);
        *why = check_big(c, &v, &mi);
        if (ks_miter_close(&mi, c) != KS_OK && !*why) *why = "engine error";
    } else {
        for (size_t i = 1; i < v.n && !*why; i++)
            if (ks_zcmp(&v.items[i - 1], &v.items[i]) >= 0) *why = "packed members out of order";
    }
    ks_zview_close(&v);
    return *why ? -1 : 0;
}
