/*
 * ks_zset_rank_upkeep.c -- keeping the counted rank blocks of a big sorted
 * set true (KS-Z2, KS-Z3) as its order entries change: a command's changes
 * waiting in the rank log (KS-Z4) or folded into the blocks level by level
 * (splits, merges, a new or dropped top level), and the rebuild from one
 * walk of the order entries. The format and the algorithms are described
 * at the top of ks_zset_rank.c, which holds the reads and the checker;
 * the writes are apart because they are the half a change to the block
 * layout touches, and the reads never need them.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_zset.h"
#include "keyspace/ks_zset_rank.h"

#define B ks_zrank_b

#define kcmp ks_zkcmp

/* ---- Rebuild -------------------------------------------------------------------- */

/* Groups the blocks of lower into pieces of about B (each > B unless
 * there are fewer), as the blocks of the level above. */
static int group(const ks_zrank_blist *lower, ks_zrank_blist *upper)
{
    size_t n = lower->n, k = n / B ? n / B : 1, base = n / k, extra = n % k, i = 0;
    for (size_t p = 0; p < k; p++) {
        size_t size = base + (p < extra), first = i;
        uint64_t cnt = 0;
        for (size_t j = 0; j < size; j++, i++)
            cnt += lower->count[i];
        if (ks_zrank_blist_push(upper, p ? lower->start[first] : "", p ? lower->sl[first] : 0, cnt,
                                size))
            return -1;
    }
    return 0;
}

static void blist_write(ks_ctx *c, int db, uint64_t version, int level, const ks_zrank_blist *l)
{
    for (size_t i = 0; i < l->n; i++)
        ks_zrank_blk_put(c, db, version, level, l->start[i], l->sl[i], l->count[i], l->children[i]);
}

/* Writes level 1 (lvl) and the levels above it until one has at most 2B
 * blocks; *height gets the number of levels. */
static ks_status build_up(ks_ctx *c, int db, uint64_t version, ks_zrank_blist *lvl, int *height)
{
    int level = 1;
    blist_write(c, db, version, 1, lvl);
    while (lvl->n > KS_ZRANK_MAX) {
        ks_zrank_blist up = {0};
        if (group(lvl, &up) != 0) {
            ks_zrank_blist_free(&up);
            return ks_oom(c);
        }
        ks_zrank_blist_free(lvl);
        *lvl = up;
        if (++level > KS_ZRANK_MAX_HEIGHT) return ks_zrank_corrupt(c);
        blist_write(c, db, version, level, lvl);
    }
    *height = level;
    return KS_OK;
}

ks_status ks_zrank_rebuild(ks_ctx *c, int db, uint64_t version, const char *floor, size_t floorl,
                           int *height)
{
    char from = KS_ZTAG_RANK, to = KS_ZTAG_RANK + 1;
    ks_members_delete_range(c, db, version, &from, 1, &to, 1);
    ks_fvec own;
    ks_fvec_init(&own);
    ks_zrank_blist l1 = {0};
    ks_status st = KS_OK;
    ks_miter mi;
    uint64_t in_block = 0;
    ks_miter_open(&mi, c, NULL, db, version);
    /* from the floor: the popped members' tombstones are below it */
    for (ks_zorder_seek(&mi, floor, floorl); st == KS_OK && ks_zorder_valid(&mi);
         ks_miter_next(&mi)) {
        size_t sn;
        const char *s = ks_miter_suffix(&mi, &sn);
        if (l1.n == 0 || in_block == B) {
            if (l1.n) l1.count[l1.n - 1] = l1.children[l1.n - 1] = in_block;
            int r = l1.n ? ks_fvec_push_copy(&own, s + 1, sn - 1, NULL, 0) : 0;
            if (r != 0 || ks_zrank_blist_push(&l1, l1.n ? own.v[own.n - 1].f : "",
                                              l1.n ? own.v[own.n - 1].fl : 0, 0, 0) != 0)
                st = ks_oom(c);
            in_block = 0;
        }
        in_block++;
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
    if (st == KS_OK && l1.n == 0 && ks_zrank_blist_push(&l1, "", 0, 0, 0) != 0) st = ks_oom(c);
    if (st == KS_OK) {
        l1.count[l1.n - 1] = l1.children[l1.n - 1] = in_block;
        st = build_up(c, db, version, &l1, height);
    }
    ks_zrank_blist_free(&l1);
    ks_fvec_free(&own);
    return st;
}

/* ---- Incremental upkeep ---------------------------------------------------------- */

/* A block a level's changes touch (or the predecessor one merges into). */
typedef struct zblk {
    const char *start, *next; /* copies; next NULL: the level's last block */
    size_t sl, nl;
    uint64_t count, children;
    int64_t dcount, dchildren; /* the changes that fall in it */
    struct zblk *into;         /* merged into that block */
    int dirty;
    int lazy_next;         /* next not read yet (split reads it: next_start) */
    ks_zrank_blist pieces; /* split: the new blocks after it */
} zblk;

/* Finds the blocks of level holding the changes d[0..n). The changes are
 * sorted, so after a block the iterator already stands on the next one:
 * nearby changes are reached by stepping, far ones by a seek. */
#define LOCATE_WALK 16
static ks_status locate(ks_ctx *c, int db, uint64_t version, int level, const ks_zdelta *d,
                        size_t n, ks_fvec *own, zblk *t, size_t *nt)
{
    ks_miter mi;
    ks_status st = KS_OK;
    ks_ekey cur;
    int positioned = 0; /* mi is on a block starting at or before d[i] */
    *nt = 0;
    ks_zbuf_init(&cur);
    ks_miter_open(&mi, c, NULL, db, version);
    for (size_t i = 0; st == KS_OK && i < n;) {
        zblk *b = &t[(*nt)++];
        memset(b, 0, sizeof(*b));
        const char *s;
        size_t sl;
        uint64_t nc, nch;
        int nx = 0, steps = 0, sought = !positioned;
        if (!positioned) ks_zrank_blk_seek(&mi, level, d[i].k, d[i].kl, 1);
        for (;;) {
            if (ks_zrank_blk_at(&mi, level, &s, &sl, &b->count, &b->children) != 1) {
                st = ks_zrank_corrupt(c);
                break;
            }
            cur.n = 0;
            ks_ekey_append(&cur, s, sl);
            /* Just sought: this block holds d[i]. The last change needs no
             * end bound for grouping, and stepping past a block that every
             * change rewrites costs a step per version of it. */
            if (sought && i == n - 1) {
                b->lazy_next = 1;
                nx = 0;
                break;
            }
            ks_miter_next(&mi);
            nx = ks_zrank_blk_at(&mi, level, &s, &sl, &nc, &nch);
            if (nx < 0) st = ks_zrank_corrupt(c);
            if (nx <= 0 || kcmp(s, sl, d[i].k, d[i].kl) > 0) break;
            if (++steps > LOCATE_WALK) {
                ks_zrank_blk_seek(&mi, level, d[i].k, d[i].kl, 1);
                steps = 0;
                sought = 1;
            }
        }
        if (st != KS_OK || (st = ks_zrank_copy_into(c, own, cur.p, cur.n, &b->start)) != KS_OK)
            break;
        b->sl = cur.n;
        if (nx > 0 && (st = ks_zrank_copy_into(c, own, s, sl, &b->next)) == KS_OK) b->nl = sl;
        for (; st == KS_OK && i < n && (!b->next || kcmp(d[i].k, d[i].kl, b->next, b->nl) < 0);
             i++) {
            b->dcount += d[i].dcount;
            b->dchildren += d[i].dchildren;
        }
        positioned = nx > 0;
    }
    ks_ekey_free(&cur);
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* 1 when start (of a level-`level` block) is also a start of the level
 * above: the block is its parent's first child and must not be merged
 * away (KS-Z3). */
static int starts_parent(ks_ctx *c, int db, uint64_t version, int level, const char *s, size_t sl)
{
    ks_ekey k;
    char *v;
    size_t vl;
    ks_zsfx_rank(&k, level + 1, s, sl);
    eng_status es = ks_member_get(c, NULL, db, version, k.p, k.n, &v, &vl);
    ks_ekey_free(&k);
    if (es == ENG_OK) eng_free(v);
    return es != ENG_NOTFOUND; /* an error keeps the block: always safe */
}

/* The predecessor of t[i] at level, for a merge: t[i-1] (or what it was
 * merged into) when adjacent, else read into *extra. NULL when none. */
static zblk *predecessor(ks_ctx *c, int db, uint64_t version, int level, zblk *t, size_t i,
                         ks_fvec *own, zblk *extra, ks_status *st)
{
    if (i > 0 && t[i - 1].next && kcmp(t[i - 1].next, t[i - 1].nl, t[i].start, t[i].sl) == 0) {
        zblk *p = &t[i - 1];
        while (p->into)
            p = p->into;
        return p;
    }
    ks_miter mi;
    zblk *p = NULL;
    const char *s;
    size_t sl;
    ks_miter_open(&mi, c, NULL, db, version);
    ks_zrank_blk_seek(&mi, level, t[i].start, t[i].sl, 1);
    ks_miter_prev(&mi);
    memset(extra, 0, sizeof(*extra));
    if (ks_zrank_blk_at(&mi, level, &s, &sl, &extra->count, &extra->children) == 1 &&
        (*st = ks_zrank_copy_into(c, own, s, sl, &extra->start)) == KS_OK) {
        extra->sl = sl;
        p = extra;
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (*st == KS_OK) *st = cst;
    return *st == KS_OK ? p : NULL;
}

/* Reads the start of the block after b (b->lazy_next): NULL when none. */
static ks_status next_start(ks_ctx *c, int db, uint64_t version, int level, zblk *b, ks_fvec *own)
{
    ks_miter mi;
    ks_status st = KS_OK;
    const char *s;
    size_t sl;
    uint64_t cnt, ch;
    ks_miter_open(&mi, c, NULL, db, version);
    ks_zrank_blk_seek(&mi, level, b->start, b->sl, 0);
    if (ks_zrank_blk_at(&mi, level, &s, &sl, &cnt, &ch) != 1 || kcmp(s, sl, b->start, b->sl) != 0)
        st = ks_zrank_corrupt(c);
    if (st == KS_OK) ks_miter_next(&mi);
    int r = st == KS_OK ? ks_zrank_blk_at(&mi, level, &s, &sl, &cnt, &ch) : 0;
    if (r < 0) st = ks_zrank_corrupt(c);
    if (r > 0 && (st = ks_zrank_copy_into(c, own, s, sl, &b->next)) == KS_OK) b->nl = sl;
    b->lazy_next = 0;
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* Splits b (more than 2B children) into pieces of about B by walking its
 * children: order entries at level 1, level-1 lower blocks above. */
static ks_status split(ks_ctx *c, int db, uint64_t version, int level, zblk *b, ks_fvec *own)
{
    ks_miter mi;
    ks_status st = KS_OK;
    ks_zrank_blist ch = {0};
    if (b->lazy_next && (st = next_start(c, db, version, level, b, own)) != KS_OK) return st;
    ks_miter_open(&mi, c, NULL, db, version);
    if (level == 1) {
        const char *k;
        size_t kl;
        for (ks_zorder_seek(&mi, b->start, b->sl);
             st == KS_OK && ks_zrank_order_before(&mi, b->next, b->nl, &k, &kl); ks_miter_next(&mi))
            if (ks_zrank_blist_push(&ch, NULL, kl, 1, 1) != 0 ||
                (st = ks_zrank_copy_into(c, own, k, kl, &ch.start[ch.n - 1])) != KS_OK)
                st = st != KS_OK ? st : ks_oom(c);
    } else {
        const char *s;
        size_t sl;
        uint64_t cnt, cch;
        int r;
        for (ks_zrank_blk_seek(&mi, level - 1, b->start, b->sl, 0);
             st == KS_OK && (r = ks_zrank_blk_at(&mi, level - 1, &s, &sl, &cnt, &cch)) == 1 &&
             (!b->next || kcmp(s, sl, b->next, b->nl) < 0);
             ks_miter_next(&mi))
            if (ks_zrank_blist_push(&ch, NULL, sl, cnt, cch) != 0 ||
                (st = ks_zrank_copy_into(c, own, s, sl, &ch.start[ch.n - 1])) != KS_OK)
                st = st != KS_OK ? st : ks_oom(c);
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
    if (st == KS_OK && ch.n != b->children) st = ks_zrank_corrupt(c);
    ks_zrank_blist all = {0};
    if (st == KS_OK && group(&ch, &all) != 0) st = ks_oom(c);
    if (st == KS_OK) {
        b->count = all.count[0];
        b->children = all.children[0];
        for (size_t p = 1; st == KS_OK && p < all.n; p++)
            if (ks_zrank_blist_push(&b->pieces, all.start[p], all.sl[p], all.count[p],
                                    all.children[p]))
                st = ks_oom(c);
    }
    ks_zrank_blist_free(&all);
    ks_zrank_blist_free(&ch);
    return st;
}

/* Writes a level's touched blocks t[0..nt) (deleted when merged, with
 * the pieces of a split after them) and the predecessors extra[0..nextra)
 * merges grew; *up (malloc'd, *nup entries) gets the changes for the level
 * above: each block's count change, -1 child per merged block, +1 per
 * piece. KS_OK, or KS_OOM with nothing written. */
static ks_status level_write(ks_ctx *c, int db, uint64_t version, int level, const zblk *t,
                             size_t nt, const zblk *extra, size_t nextra, ks_zdelta **up,
                             size_t *nup)
{
    size_t cap = 2 * nt + 1;
    for (size_t i = 0; i < nt; i++)
        cap += t[i].pieces.n;
    ks_zdelta *u = malloc(cap * sizeof(*u));
    size_t nu = 0;
    if (!u) return ks_oom(c);
    for (size_t i = 0; i < nt; i++) {
        const zblk *b = &t[i];
        if (b->into)
            ks_zrank_blk_del(c, db, version, level, b->start, b->sl);
        else
            ks_zrank_blk_put(c, db, version, level, b->start, b->sl, b->count, b->children);
        if (b->dcount || b->into)
            u[nu++] = (ks_zdelta){b->start, b->sl, b->dcount, b->into ? -1 : 0};
        for (size_t p = 0; p < b->pieces.n; p++) {
            ks_zrank_blk_put(c, db, version, level, b->pieces.start[p], b->pieces.sl[p],
                             b->pieces.count[p], b->pieces.children[p]);
            u[nu++] = (ks_zdelta){b->pieces.start[p], b->pieces.sl[p], 0, 1};
        }
    }
    for (size_t i = 0; i < nextra; i++)
        ks_zrank_blk_put(c, db, version, level, extra[i].start, extra[i].sl, extra[i].count,
                         extra[i].children);
    *up = u;
    *nup = nu;
    return KS_OK;
}

/* Applies the changes d[0..n) (sorted, distinct) to level; *up gets the
 * changes for the level above (count changes and the starts gained and
 * lost), *nup their number. top: the level has no parent. */
static ks_status level_apply(ks_ctx *c, int db, uint64_t version, int level, int top,
                             const ks_zdelta *d, size_t n, ks_fvec *own, ks_zdelta **up,
                             size_t *nup, int *structural)
{
    zblk *t = calloc(n, sizeof(*t)), *extra = calloc(n, sizeof(*extra));
    size_t nt = 0, nextra = 0;
    ks_status st = t && extra ? KS_OK : ks_oom(c);
    if (st == KS_OK) st = locate(c, db, version, level, d, n, own, t, &nt);
    for (size_t i = 0; st == KS_OK && i < nt; i++) {
        zblk *b = &t[i];
        if ((int64_t)b->count + b->dcount < 0 || (int64_t)b->children + b->dchildren < 0) {
            st = ks_zrank_corrupt(c);
            break;
        }
        b->count = (uint64_t)((int64_t)b->count + b->dcount);
        b->children = (uint64_t)((int64_t)b->children + b->dchildren);
        b->dirty = 1;
    }
    /* Merges of blocks left small, in order, so chains resolve left to right. */
    for (size_t i = 0; st == KS_OK && i < nt; i++) {
        zblk *b = &t[i];
        if (b->children >= KS_ZRANK_MIN || b->sl == 0) continue;
        if (!top && starts_parent(c, db, version, level, b->start, b->sl)) continue;
        zblk *p = predecessor(c, db, version, level, t, i, own, &extra[nextra], &st);
        if (!p || p->children + b->children > KS_ZRANK_MAX) continue;
        if (p == &extra[nextra]) nextra++;
        p->count += b->count;
        p->children += b->children;
        p->dirty = 1;
        b->into = p;
        *structural = 1;
    }
    for (size_t i = 0; st == KS_OK && i < nt; i++)
        if (!t[i].into && t[i].children > KS_ZRANK_MAX) {
            st = split(c, db, version, level, &t[i], own);
            *structural = 1;
        }
    *up = NULL;
    *nup = 0;
    if (st == KS_OK) st = level_write(c, db, version, level, t, nt, extra, nextra, up, nup);
    for (size_t i = 0; t && i < nt; i++)
        ks_zrank_blist_free(&t[i].pieces);
    free(t);
    free(extra);
    return st;
}

/* After structural changes at the top: grow a level over a top of more
 * than 2B blocks, drop a top level of one block. */
static ks_status top_fix(ks_ctx *c, int db, uint64_t version, int *height, ks_fvec *own)
{
    for (;;) {
        ks_zrank_blist top = {0};
        ks_miter mi;
        ks_status st = KS_OK;
        const char *s;
        size_t sl;
        uint64_t cnt, ch;
        int r;
        ks_miter_open(&mi, c, NULL, db, version);
        for (ks_zrank_blk_seek(&mi, *height, "", 0, 0);
             st == KS_OK && (r = ks_zrank_blk_at(&mi, *height, &s, &sl, &cnt, &ch)) == 1;
             ks_miter_next(&mi)) {
            const char *cp = NULL;
            if ((st = ks_zrank_copy_into(c, own, s, sl, &cp)) == KS_OK &&
                ks_zrank_blist_push(&top, cp, sl, cnt, ch) != 0)
                st = ks_oom(c);
        }
        ks_status cst = ks_miter_close(&mi, c);
        if (st == KS_OK) st = cst;
        if (st == KS_OK && top.n == 0) st = ks_zrank_corrupt(c);
        int again = 0;
        if (st == KS_OK && top.n > KS_ZRANK_MAX) {
            ks_zrank_blist upl = {0};
            if (group(&top, &upl) != 0) st = ks_oom(c);
            if (st == KS_OK && *height + 1 > KS_ZRANK_MAX_HEIGHT) st = ks_zrank_corrupt(c);
            if (st == KS_OK) {
                blist_write(c, db, version, ++*height, &upl);
                again = 1;
            }
            ks_zrank_blist_free(&upl);
        } else if (st == KS_OK && top.n == 1 && *height > 1) {
            ks_zrank_blk_del(c, db, version, *height, "", 0);
            --*height;
            again = 1;
        }
        ks_zrank_blist_free(&top);
        if (st != KS_OK || !again) return st;
    }
}

static ks_status incremental(ks_ctx *c, int db, uint64_t version, int *height, ks_zdelta *d,
                             size_t n)
{
    ks_fvec own;
    ks_fvec_init(&own);
    ks_status st = KS_OK;
    ks_zdelta *cur = d, *next = NULL;
    size_t ncur = n, nnext = 0;
    int structural = 0;
    for (int level = 1; st == KS_OK && level <= *height && ncur; level++) {
        structural = 0;
        st = level_apply(c, db, version, level, level == *height, cur, ncur, &own, &next, &nnext,
                         &structural);
        if (cur != d) free(cur);
        cur = next;
        ncur = nnext;
        next = NULL;
    }
    if (cur != d) free(cur);
    if (st == KS_OK && structural) st = top_fix(c, db, version, height, &own);
    ks_fvec_free(&own);
    return st;
}

/* Appends z's netted deltas (each within an i8) to its log. */
static void log_append(ks_zw *z)
{
    int db = z->w->db;
    if (z->logend == 0) ks_member_put(z->c, db, z->version, (const char[]){KS_ZTAG_LOG}, 1, "", 0);
    for (size_t i = 0; i < z->nd; i++) {
        char k[9], d = (char)(signed char)z->d[i].dcount;
        ks_ekey v;
        ks_zbuf_init(&v);
        ks_ekey_append(&v, &d, 1);
        ks_ekey_append(&v, z->d[i].k, z->d[i].kl);
        ks_zrank_log_sfx(k, z->logend++);
        ks_member_put(z->c, db, z->version, k, 9, v.p, v.n);
        ks_ekey_free(&v);
    }
}

static ks_status take_one(void *arg, const char *k, size_t kl, int64_t d)
{
    return ks_zw_add_delta(arg, k, kl, d);
}

/* Adds z's log entries to its deltas. */
static ks_status log_load(ks_zw *z)
{
    return ks_zrank_log_read(z->c, z->w->db, z->version, z->logfirst, z->logend, take_one, z);
}

/* Deletes z's log entries: the log is empty after. Called once the
 * command's iterators are done: deletes put in the batch before them
 * would make each iterator index them first. */
static void log_drop(ks_zw *z)
{
    for (; z->logfirst < z->logend; z->logfirst++) {
        char k[9];
        ks_zrank_log_sfx(k, z->logfirst);
        ks_member_del(z->c, z->w->db, z->version, k, 9);
    }
}

/* 1 when z's netted deltas can wait in the log. */
static int log_fits(const ks_zw *z)
{
    if (z->logend - z->logfirst + z->nd > KS_ZLOG_MAX) return 0;
    for (size_t i = 0; i < z->nd; i++)
        if (z->d[i].dcount < -127 || z->d[i].dcount > 127 || z->d[i].dcount != z->d[i].dchildren)
            return 0;
    return 1;
}

ks_status ks_zrank_apply(ks_zw *z, int final)
{
    ks_status st = KS_OK;
    if (!z->rebuild && z->nd) {
        z->nd = ks_zrank_deltas_net(z->d, z->nd);
        if (final && log_fits(z)) {
            log_append(z);
            z->nd = 0;
        } else if ((st = log_load(z)) == KS_OK) {
            z->nd = ks_zrank_deltas_net(z->d, z->nd);
            /* Many changes: one walk of the order costs less than the seeks. */
            if ((uint64_t)z->nd * 8 > z->count)
                z->rebuild = 1;
            else
                st = incremental(z->c, z->w->db, z->version, &z->height, z->d, z->nd);
            if (st == KS_OK) log_drop(z); /* a rebuild to come counts them afresh */
        }
    }
    z->nd = 0;
    ks_fvec_free(&z->keys);
    if (st == KS_OK && z->rebuild && final) {
        st = ks_zrank_rebuild(z->c, z->w->db, z->version, z->floor, z->floorl, &z->height);
        if (st == KS_OK) log_drop(z);
        z->rebuild = 0;
    }
    return st;
}
