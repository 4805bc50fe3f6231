/*
 * ks_random.c -- RANDOMKEY: a live key of the db, each about equally likely.
 *
 * The keyspace keeps no key list in memory: the keys of db are the
 * metadata records 'm' db <key> in the engine's sorted order, and the
 * counter 'c' db gives their number n exactly (KS-E3; expired keys not yet
 * deleted included). Two ways to draw:
 *
 *   n <= KS_RANDOM_EXACT: take a position r in [0, n) and step r records
 *     from the first. Exactly uniform, at most n iterator steps.
 *
 *   bigger: a random walk down the trie of key bytes that estimates
 *     subtree sizes as it goes, corrected by rejection (Olken and Rotem's
 *     acceptance/rejection sampling). At the node for a prefix P, whose
 *     subtree is estimated to hold E keys (E = n at the root):
 *       - two seeks find the first and last key under P; their common
 *         prefix is shared by every key under P, so the walk jumps to it;
 *       - one seek per child (distinct next byte) lists the children, and
 *         up to KS_RANDOM_SMALL + 1 steps each count their keys: a small
 *         child's size is then exact; the big ones share what E leaves,
 *         evenly (at least KS_RANDOM_SMALL + 1 each);
 *       - the walk picks a key of a small child (or P itself, when P is a
 *         key) or a big child, in proportion to those sizes, and goes on
 *         into a big child with its share as E.
 *     A key k is reached with probability 1 / F(k), F(k) the product of
 *     (node weight / chosen weight) along its path: F(k) = n whenever the
 *     estimates were right. The walk's key is accepted with probability
 *     min(1, F(k) / C), C = max(n, the largest F(k) seen in this db while
 *     it had about this size), otherwise a new walk starts: every key with
 *     F(k) <= C is then exactly equally likely, and a larger F raises C, so
 *     a key the estimates under-weight is under-drawn only until a walk
 *     has reached it once. A draw costs about C / n walks (1 for random
 *     keys; 3 to 5 for decimal ids, whose siblings differ 10x in size) of
 *     two seeks, one seek per child and up to KS_RANDOM_SMALL + 1 steps per
 *     child at each level: tens to a few hundred microseconds on a big db.
 *
 * Either way an expired key drawn counts as a rejection, so the draw is
 * uniform over live keys. The work is bounded (KS_RANDOM_WORK; a seek counts
 * KS_RANDOM_SEEK_COST steps); past it (a db of mostly expired keys) the
 * answer is the first live key after a random point.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"

#define KS_RANDOM_EXACT 1024
#define KS_RANDOM_SMALL 8
#define KS_RANDOM_WORK 200000
#define KS_RANDOM_SEEK_COST 8

static double rnd_unit(keyspace *ks)
{
    return (double)(ks_rand(ks) >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
}

typedef struct kbuf {
    char *p;
    size_t n, cap;
} kbuf;

/* b = p[0..n); b->p has room for one byte more (a probe's next byte). */
static int kbuf_set(kbuf *b, const char *p, size_t n)
{
    if (n + 1 > b->cap) {
        size_t cap = (n + 1) * 2;
        char *q = realloc(b->p, cap);
        if (!q) return -1;
        b->p = q;
        b->cap = cap;
    }
    if (n) memmove(b->p, p, n);
    b->n = n;
    return 0;
}

/* One draw: the iterator, the work spent, the answer. */
typedef struct draw {
    ks_ctx *c;
    eng_iter *it;
    uint64_t work;
    kbuf node, first, probe, found;
    int oom;
} draw;

/* The children of one trie node. */
typedef struct node_children {
    int terminal;         /* the node's prefix is itself a key */
    int n;                /* children (distinct next bytes) */
    unsigned char b[256]; /* their bytes, ascending */
    uint32_t size[256];   /* keys under each, KS_RANDOM_SMALL + 1 meaning "more" */
    uint64_t small;       /* keys of the small children, the terminal key included */
    int nbig;
} node_children;

static int spent(const draw *d)
{
    return d->work >= KS_RANDOM_WORK || d->oom;
}

static void seek(draw *d, const char *k, size_t kl)
{
    eng_iter_seek(d->it, k, kl);
    d->work += KS_RANDOM_SEEK_COST;
}

static void step(draw *d)
{
    eng_iter_next(d->it);
    d->work++;
}

/* The iterator's key when it starts with p; NULL otherwise. */
static const char *key_under(const draw *d, const kbuf *p, size_t *kl)
{
    if (!eng_iter_valid(d->it)) return NULL;
    const char *k = eng_iter_key(d->it, kl);
    return *kl >= p->n && memcmp(k, p->p, p->n) == 0 ? k : NULL;
}

/* Is the iterator on a live key of the db? Then it is the answer. */
static int take_if_live(draw *d)
{
    size_t kl, vl;
    if (!eng_iter_valid(d->it)) return 0;
    const char *k = eng_iter_key(d->it, &kl), *v = eng_iter_value(d->it, &vl);
    ks_meta m;
    if (kl < 2 || k[0] != KS_NS_META || k[1] != (char)d->c->db ||
        ks_meta_view(&m, v, vl, d->c->now_ms) != 0 || m.type == KS_NONE)
        return 0;
    if (kbuf_set(&d->found, k, kl) < 0) return d->oom = 1, 0;
    return 1;
}

/* Leaves the iterator on the last key under d->node (which has one). */
static void seek_last_under(draw *d)
{
    size_t n = d->node.n;
    if (kbuf_set(&d->probe, d->node.p, n) < 0) {
        d->oom = 1;
        return;
    }
    while (n > 0 && (unsigned char)d->probe.p[n - 1] == 0xff)
        n--; /* never reaches 0: prefixes start with 'm' <db> */
    d->probe.p[n - 1]++;
    seek(d, d->probe.p, n);
    if (eng_iter_valid(d->it))
        eng_iter_prev(d->it);
    else
        eng_iter_seek_last(d->it);
}

/* Jumps d->node down to the longest prefix shared by every key under it.
 * Returns 1 when the subtree holds one key (then d->node is that key), 0
 * when there are several, -1 when it is empty or the draw must stop. */
static int jump_to_branch(draw *d)
{
    size_t fl, ll;
    seek(d, d->node.p, d->node.n);
    const char *k = key_under(d, &d->node, &fl);
    if (!k || kbuf_set(&d->first, k, fl) < 0) return -1;
    seek_last_under(d);
    const char *last = key_under(d, &d->node, &ll);
    if (!last) return -1;
    size_t lcp = d->node.n, max = fl < ll ? fl : ll;
    while (lcp < max && d->first.p[lcp] == last[lcp])
        lcp++;
    if (fl == ll && lcp == fl) return kbuf_set(&d->node, d->first.p, fl) < 0 ? -1 : 1;
    return kbuf_set(&d->node, d->first.p, lcp) < 0 ? -1 : 0;
}

/* Lists and sizes the children of d->node (keys under it: at least two). */
static void list_children(draw *d, node_children *ch)
{
    size_t pl = d->node.n, kl;
    memset(ch, 0, sizeof(*ch));
    ch->terminal = d->first.n == pl;
    ch->small = (uint64_t)ch->terminal;
    if (kbuf_set(&d->probe, d->node.p, pl) < 0) {
        d->oom = 1;
        return;
    }
    unsigned next = ch->terminal ? 0 : (unsigned char)d->first.p[pl];
    d->probe.p[pl] = (char)next;
    seek(d, d->probe.p, pl + 1);
    while (ch->n < 256 && !spent(d)) {
        const char *k = key_under(d, &d->node, &kl);
        if (!k) break;
        unsigned char b = (unsigned char)k[pl];
        uint32_t size = 0;
        while (k && kl > pl && (unsigned char)k[pl] == b && size <= KS_RANDOM_SMALL) {
            size++;
            step(d);
            k = key_under(d, &d->node, &kl);
        }
        ch->b[ch->n] = b;
        ch->size[ch->n++] = size;
        if (size <= KS_RANDOM_SMALL) {
            ch->small += size; /* the iterator is on the next child already */
        } else {
            ch->nbig++;
            if (b == 0xff) break;
            d->probe.p[pl] = (char)(b + 1);
            seek(d, d->probe.p, pl + 1);
        }
    }
}

/* Leaves the iterator on key number r of the node's small keys (the
 * terminal key first, then the small children's in order). */
static void seek_small_key(draw *d, const node_children *ch, uint64_t r)
{
    size_t pl = d->node.n;
    if (ch->terminal) {
        if (r == 0) {
            seek(d, d->node.p, pl);
            return;
        }
        r--;
    }
    for (int i = 0; i < ch->n; i++) {
        if (ch->size[i] > KS_RANDOM_SMALL) continue;
        if (r < ch->size[i]) {
            d->probe.p[pl] = (char)ch->b[i];
            seek(d, d->probe.p, pl + 1);
            for (; r > 0; r--)
                step(d);
            return;
        }
        r -= ch->size[i];
    }
}

/* One walk from the root. Leaves the iterator on the key reached and sets
 * *f to 1 / the probability of reaching it. Returns 0 when it could not
 * finish. */
static int walk(draw *d, uint64_t n, double *f)
{
    char root[2] = {KS_NS_META, (char)d->c->db};
    node_children ch;
    double e = (double)n;
    *f = 1;
    if (kbuf_set(&d->node, root, 2) < 0) return d->oom = 1, 0;
    while (!spent(d)) {
        int r = jump_to_branch(d);
        if (r < 0) return 0;
        if (r == 1) {
            seek(d, d->node.p, d->node.n);
            return 1;
        }
        list_children(d, &ch);
        if (spent(d)) return 0;
        double big = 0;
        if (ch.nbig) {
            big = (e - (double)ch.small) / ch.nbig;
            if (big < KS_RANDOM_SMALL + 1) big = KS_RANDOM_SMALL + 1;
        }
        double w = (double)ch.small + big * ch.nbig;
        double u = rnd_unit(d->c->ks) * w;
        if (u < (double)ch.small) {
            uint64_t i = (uint64_t)u;
            if (i >= ch.small) i = ch.small - 1;
            *f *= w;
            seek_small_key(d, &ch, i);
            return 1;
        }
        int j = (int)((u - (double)ch.small) / big);
        if (j >= ch.nbig) j = ch.nbig - 1;
        for (int i = 0; i < ch.n; i++) {
            if (ch.size[i] <= KS_RANDOM_SMALL || j-- > 0) continue;
            *f *= w / big;
            e = big;
            d->probe.p[d->node.n] = (char)ch.b[i];
            if (kbuf_set(&d->node, d->probe.p, d->node.n + 1) < 0) return d->oom = 1, 0;
            break;
        }
    }
    return 0;
}

static int draw_by_walk(draw *d, uint64_t n)
{
    keyspace *ks = d->c->ks;
    int db = d->c->db;
    /* The largest F seen holds while the db stays within 2x of its size. */
    if (n > 2 * ks->random_fmax_n[db] || 2 * n < ks->random_fmax_n[db]) {
        ks->random_fmax[db] = 0;
        ks->random_fmax_n[db] = n;
    }
    double f;
    while (!spent(d)) {
        if (!walk(d, n, &f)) continue;
        double c = (double)n;
        if (c < ks->random_fmax[db]) c = ks->random_fmax[db];
        if (f > ks->random_fmax[db]) ks->random_fmax[db] = f;
        if ((f >= c || rnd_unit(ks) * c < f) && take_if_live(d)) return 1;
    }
    return 0;
}

static int draw_by_position(draw *d, uint64_t n)
{
    char root[2] = {KS_NS_META, (char)d->c->db};
    while (!spent(d)) {
        uint64_t r = ks_rand(d->c->ks) % n;
        seek(d, root, 2);
        for (uint64_t i = 0; i < r && eng_iter_valid(d->it); i++)
            step(d);
        if (take_if_live(d)) return 1;
    }
    return 0;
}

/* The first live key at or after a random point, wrapping once. */
static int draw_any(draw *d)
{
    char root[2] = {KS_NS_META, (char)d->c->db};
    char point[10] = {KS_NS_META, (char)d->c->db};
    uint64_t x = ks_rand(d->c->ks);
    memcpy(point + 2, &x, 8);
    kbuf db = {root, 2, 2};
    eng_iter_seek(d->it, point, sizeof(point));
    for (int wrapped = 0, steps = 0; steps < 100000 && !d->oom; steps++) {
        size_t kl;
        if (!key_under(d, &db, &kl)) {
            if (wrapped++) break;
            eng_iter_seek(d->it, root, 2);
            continue;
        }
        if (take_if_live(d)) return 1;
        eng_iter_next(d->it);
    }
    return 0;
}

ks_status ks_randomkey(ks_ctx *c, char **key, size_t *klen)
{
    uint64_t n = ks_dbsize(c);
    draw d = {c, eng_iter_new(c->ks->db, NULL, ks_read_batch(c)), 0, {0}, {0}, {0}, {0}, 0};
    ks_status st = KS_NOTFOUND;
    if (!d.it) return ks_engine_err(c, ENG_NOMEM, "randomkey");
    eng_iter_skip_damaged(d.it); /* go on past a damaged block (logged), as KEYS and SCAN */
    int found = n > 0 && (n <= KS_RANDOM_EXACT ? draw_by_position(&d, n) : draw_by_walk(&d, n));
    if (!found && !d.oom) found = draw_any(&d);
    if (found && !d.oom) {
        *klen = d.found.n - 2;
        *key = malloc(*klen + 1);
        if (*key) {
            memcpy(*key, d.found.p + 2, *klen);
            (*key)[*klen] = '\0';
            st = KS_OK;
        }
    }
    if (st != KS_OK && eng_iter_status(d.it) != ENG_OK)
        st = ks_engine_err(c, eng_iter_status(d.it), "randomkey");
    eng_iter_free(d.it);
    free(d.node.p);
    free(d.first.p);
    free(d.probe.p);
    free(d.found.p);
    return st;
}
