/*
 * mem_tree_read.c -- the memtable tree's lock-free readers (cursors: seek,
 * first, last, next, prev; the pipeline prefetch) and its debug checker.
 * Readers take no lock: they validate each node's version after reading it
 * (T1) and start again from the root when it moved; see mem_tree.c for the
 * layout and the invariants T1-T11.
 */
#include "mem_tree_node.h"

enum { AT_GE, AT_GT, AT_LT, AT_FIRST, AT_LAST };

static const mem_ent *set_cur(mt_cursor *c, const mt_node *leaf, uint64_t v, int idx,
                              const mem_ent *e)
{
    c->leaf = leaf;
    c->version = v;
    c->idx = idx;
    c->cur = e;
    return e;
}

static inline const mem_ent *leaf_key(const mt_node *n, unsigned i)
{
    return atomic_load_explicit(&slot_at(n, sizeof(leaf_slot), i)->key, ACQ);
}

/* Positions c on the first key of the leaf after n (read at version v), or
 * on nothing at the end; returns 0 when a check failed and the caller must
 * start again. */
/* How many slots ahead mt_next starts loading an entry. */
#define NEXT_AHEAD 6

static inline void prefetch_next_leaf(const mt_node *n)
{
    const mt_node *nl = atomic_load_explicit(&((mt_node *)n)->link, ACQ);
    if (nl) prefetch_node(nl, 1);
}

static int step_to_next_leaf(mt_cursor *c, const mt_node *n, uint64_t v)
{
    const mt_node *nl = atomic_load_explicit(&((mt_node *)n)->link, ACQ);
    if (!read_valid(n, v)) return 0;
    if (!nl) {
        set_cur(c, NULL, 0, 0, NULL);
        return 1;
    }
    uint64_t vl = read_begin(nl);
    const mem_ent *e = leaf_key(nl, 0); /* T3: not empty */
    if (!e || !read_valid(nl, vl)) return 0;
    unsigned cnt = atomic_load_explicit(&nl->count, RLX);
    for (unsigned j = 1; j <= NEXT_AHEAD && j < cnt && j < CAP; j++)
        __builtin_prefetch(leaf_key(nl, j)); /* as mt_next does further on */
    set_cur(c, nl, vl, 0, e);
    return 1;
}

void mt_prefetch(const mem_tree *t, size_t n, const slice *keys, mt_leaf_hint *hints)
{
    const mt_node *at[MT_PREFETCH_MAX];
    if (n > MT_PREFETCH_MAX) n = MT_PREFETCH_MAX;
    const mt_node *root = atomic_load_explicit(&t->root, ACQ);
    for (size_t i = 0; i < n; i++)
        at[i] = root;
    /* Each round moves every descent one level down: the node each one
     * searches now was prefetched in the round before. */
    for (int level = 0, moved = 1; moved && level < MAX_HEIGHT; level++) {
        moved = 0;
        for (size_t i = 0; i < n; i++) {
            const mt_node *nd = at[i];
            if (!nd || nd->leaf) continue;
            /* The newest version sorts first among a key's (K1): insert's
             * position for a new one. open = 1 is right for any node (T5). */
            tkey k = {keys[i].data, keys[i].size, UINT64_MAX};
            unsigned idx = search(nd, &k, 1, 1);
            if (idx > CAP) idx = CAP; /* only in a torn read */
            const mt_node *ch = atomic_load_explicit(child_ref(nd, idx), ACQ);
            if (ch) prefetch_node(ch, nd->leaf_kids);
            at[i] = ch;
            moved = 1;
        }
    }
    if (hints) /* the leaves' lines are on their way: these loads overlap */
        for (size_t i = 0; i < n; i++)
            hints[i] =
                (mt_leaf_hint){at[i], at[i] ? atomic_load_explicit(&at[i]->version, RLX) : 0};
}

void mt_prefetch_leaf(const mt_node *leaf)
{
    if (leaf) prefetch_node(leaf, 1);
}

/* One attempt to position c by mode; 0 when a version check failed. */
static int locate_once(mt_cursor *c, const tkey *t, int mode)
{
    const mt_node *n = atomic_load_explicit(&c->t->root, ACQ);
    uint64_t v = read_begin(n);
    if (atomic_load_explicit(&c->t->root, ACQ) != n) return 0; /* T7: it split */
    int open_lo = 1, open_hi = 1;                              /* the node lacks that fence (T5) */
    while (!n->leaf) {
        unsigned cnt = atomic_load_explicit(&n->count, RLX);
        unsigned i = mode == AT_FIRST  ? 0
                     : mode == AT_LAST ? cnt
                                       : search(n, t, mode != AT_LT, open_lo || open_hi);
        if (i > CAP) return 0;
        open_lo &= i == 0;
        open_hi &= i == cnt;
        const mt_node *ch = atomic_load_explicit(child_ref(n, i), ACQ);
        if (!ch || !read_valid(n, v)) return 0;
        prefetch_node(ch, n->leaf_kids);
        uint64_t vc = read_begin(ch);
        if (!read_valid(n, v)) return 0; /* ch is still n's child */
        n = ch;
        v = vc;
    }
    unsigned cnt = atomic_load_explicit(&n->count, RLX), i;
    if (cnt > CAP) return 0;
    switch (mode) {
    case AT_FIRST:
        i = 0;
        break;
    case AT_LAST:
        i = cnt ? cnt - 1 : 0;
        break;
    default:
        i = search(n, t, mode == AT_GT, open_lo || open_hi);
        break;
    }
    if (mode == AT_LT) {
        /* The last key < t is in this leaf when any exists: each subtree
         * holds the separator left of it (no entry is ever removed). */
        if (i == 0) {
            if (!read_valid(n, v)) return 0;
            set_cur(c, NULL, 0, 0, NULL);
            return 1;
        }
        i--;
    } else if (i == cnt) { /* past this leaf (or an empty tree) */
        if (mode == AT_LAST) {
            if (!read_valid(n, v)) return 0;
            set_cur(c, NULL, 0, 0, NULL);
            return 1;
        }
        return step_to_next_leaf(c, n, v);
    }
    const mem_ent *e = leaf_key(n, i);
    if (!e || !read_valid(n, v)) return 0;
    set_cur(c, n, v, (int)i, e);
    return 1;
}

static const mem_ent *locate(mt_cursor *c, const tkey *t, int mode)
{
    while (!locate_once(c, t, mode)) {
    }
    return c->cur;
}

void mt_cursor_init(mt_cursor *c, const mem_tree *t)
{
    memset(c, 0, sizeof(*c));
    c->t = t;
}

const mem_ent *mt_seek(mt_cursor *c, const char *uk, size_t ul, uint64_t trailer)
{
    tkey t = {uk, ul, trailer};
    return locate(c, &t, AT_GE);
}

const mem_ent *mt_first(mt_cursor *c)
{
    return locate(c, NULL, AT_FIRST);
}

const mem_ent *mt_last(mt_cursor *c)
{
    return locate(c, NULL, AT_LAST);
}

const mem_ent *mt_next(mt_cursor *c)
{
    const mt_node *n = c->leaf;
    if (atomic_load_explicit(&n->version, ACQ) == c->version) { /* unchanged: step in place */
        unsigned i = (unsigned)c->idx + 1, cnt = atomic_load_explicit(&n->count, RLX);
        if (i < cnt && i < CAP) {
            /* A forward scan (a flush, above all) reads every entry, and
             * entries lie in the arena in insert order, not key order:
             * start the miss of one NEXT_AHEAD slots on, and of the next
             * leaf once this one is nearly done. Hints: a torn read only
             * sends one astray (T1, T4). */
            if (i + NEXT_AHEAD < cnt && i + NEXT_AHEAD < CAP)
                __builtin_prefetch(leaf_key(n, i + NEXT_AHEAD));
            else if (i + NEXT_AHEAD == cnt)
                prefetch_next_leaf(n);
            const mem_ent *e = leaf_key(n, i);
            if (e && read_valid(n, c->version)) return set_cur(c, n, c->version, (int)i, e);
        } else if (step_to_next_leaf(c, n, c->version)) {
            return c->cur;
        }
    }
    tkey t = tkey_of(c->cur); /* the leaf changed: find what follows cur */
    return locate(c, &t, AT_GT);
}

const mem_ent *mt_prev(mt_cursor *c)
{
    const mt_node *n = c->leaf;
    if (c->idx > 0 && atomic_load_explicit(&n->version, ACQ) == c->version) {
        const mem_ent *e = leaf_key(n, (unsigned)c->idx - 1);
        if (e && read_valid(n, c->version)) return set_cur(c, n, c->version, c->idx - 1, e);
    }
    tkey t = tkey_of(c->cur);
    return locate(c, &t, AT_LT);
}

/* ---- Checker ------------------------------------------------------------ */

typedef struct check_state {
    const mt_node *prev_leaf; /* T6: the leaf before the next one visited */
    uint64_t count;
    int height;
} check_state;

static int ent_order(const mem_ent *a, const mem_ent *b)
{
    tkey tb = tkey_of(b);
    return ent_cmp(a, &tb);
}

/* The longest common prefix of n's keys and fences. REQUIRES: n has a key. */
static unsigned node_lcp(const mt_node *n, const mem_ent *lo, const mem_ent *hi)
{
    size_t stride = slot_stride(n);
    const mem_ent *f = slot_at(n, stride, 0)->key;
    unsigned l = f->klen - 8;
    for (unsigned i = 1; i < n->count; i++) {
        unsigned x = ent_lcp(f, slot_at(n, stride, i)->key);
        if (x < l) l = x;
    }
    if (lo && ent_lcp(f, lo) < l) l = ent_lcp(f, lo);
    if (hi && ent_lcp(f, hi) < l) l = ent_lcp(f, hi);
    return l;
}

static int check_node(const mt_node *n, int depth, const mem_ent *lo, const mem_ent *hi,
                      check_state *st)
{
    unsigned cnt = n->count;
    size_t stride = slot_stride(n);
    if (cnt > CAP) return 3;
    if (n->leaf != (depth == st->height - 1)) return 3;
    if (!n->leaf && n->leaf_kids != (depth + 1 == st->height - 1)) return 3;
    if (n->leaf && cnt == 0 && depth > 0) return 3;
    if (lo && hi ? n->plen != ent_lcp(lo, hi) : cnt && n->plen > node_lcp(n, lo, hi)) return 5;
    if (n->dbytes < MIN_DBYTES || n->dbytes > 8) return 5;
    for (unsigned i = 0; i < cnt; i++) {
        const mem_ent *e = slot_at(n, stride, i)->key;
        if (!e) return 3;
        if (slot_at(n, stride, i)->disc != ent_disc(n->plen, n->dbytes, e)) return 5;
        if (e->klen - 8 > n->kmax) return 5;
        if (i > 0 && ent_order(slot_at(n, stride, i - 1)->key, e) >= 0) return 2;
        if ((lo && ent_order(e, lo) < 0) || (hi && ent_order(e, hi) >= 0)) return 2;
    }
    if (n->leaf) {
        if (lo && (!cnt || slot_at(n, stride, 0)->key != lo)) return 9;
        for (unsigned g = 1; g * GROUP < cnt; g++)
            if (n->gsum[g] != (uint32_t)(slot_at(n, stride, g * GROUP)->disc >> 32)) return 11;
        if (st->prev_leaf && st->prev_leaf->link != n) return 6;
        st->prev_leaf = n;
        st->count += cnt;
        return 0;
    }
    for (unsigned i = 0; i <= cnt; i++) {
        const mt_node *ch = *child_ref(n, i);
        if (!ch) return 3;
        int r = check_node(ch, depth + 1, i > 0 ? slot_at(n, stride, i - 1)->key : lo,
                           i < cnt ? slot_at(n, stride, i)->key : hi, st);
        if (r) return r;
    }
    return 0;
}

int mt_check(const mem_tree *t, uint64_t *count)
{
    check_state st = {NULL, 0, t->height};
    int r = check_node(atomic_load_explicit(&t->root, ACQ), 0, NULL, NULL, &st);
    if (!r && st.prev_leaf->link) r = 6;
    uint64_t want = *count;
    *count = st.count;
    if (!r && st.count != want) r = 1;
    return r;
}
