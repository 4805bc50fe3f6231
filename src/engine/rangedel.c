/*
 * rangedel.c -- append-only range tombstone sets and their search indexes;
 * see rangedel.h (R1, R3, R4).
 *
 * The index of a run of tombstones (a "frag"): the sorted distinct keys at
 * which any of them starts or ends, b[0] < ... < b[nb-1], cut the key space
 * into fragments [b[j], b[j+1]); every tombstone covers a whole number of
 * fragments, and ents[off[j] .. off[j+1]) lists those covering fragment j,
 * highest sequence first. The best visible tombstone above a floor for a key
 * is then the first visible entry of the key's fragment, found by a binary
 * search. A tombstone over n fragments is listed n times; a run whose lists
 * would exceed RDEL_FRAG_BUDGET entries per tombstone (deeply nested ranges)
 * is kept as a plain list searched linearly instead (nb = 0), so memory stays
 * linear in the set.
 *
 * The levels (R3) grow as a binary counter: when the unindexed tail reaches
 * RDEL_LINEAR_MAX, it becomes a frag of its own, and while the last two
 * levels cover equally many tombstones they are rebuilt as one, so a set of n
 * tombstones has at most log2(n / RDEL_LINEAR_MAX) + 1 levels and each
 * tombstone is indexed O(log n) times over the set's life. A set filled
 * before its first search (a version's, a batch's) gets one level.
 */
#include "rangedel.h"

#include <stdio.h>
#include <stdlib.h>

#define RDEL_CHUNK 32
#define RDEL_MAX_LEVELS 64
#define RDEL_FRAG_BUDGET 64 /* fragment list entries per tombstone, at most */

struct rdel_chunk {
    rdel_chunk *next; /* atomic */
    int n;            /* atomic: entries published in v */
    rdel v[RDEL_CHUNK];
};

/* Freed objects wait on the set's retired list (R4): lists and frags. */
struct rdel_gc {
    rdel_gc *next;
    int is_frag;
};

typedef struct rdel_frag {
    rdel_gc gc;
    size_t lo, n;  /* the tombstones at positions [lo, lo + n) */
    size_t nb;     /* boundaries; 0: ents is the run's plain list of n */
    slice *b;      /* nb boundaries, ascending */
    uint32_t *off; /* nb offsets into ents; off[nb - 1] = total */
    const rdel **ents;
    uint64_t max_seq; /* the run's highest sequence */
} rdel_frag;

struct rdel_levels {
    rdel_gc gc;
    int nlev;
    rdel_frag *lev[RDEL_MAX_LEVELS]; /* sizes non-increasing; lev[i+1].lo = lev[i].lo + n */
    size_t covered;                  /* the levels cover positions [0, covered) */
    rdel_cursor tail;                /* at position covered - 1 */
};

static __thread uint64_t rdel_examined_n;

uint64_t rdel_examined(void)
{
    return rdel_examined_n;
}

static void *rdel_xalloc(size_t n)
{
    void *q = calloc(1, n ? n : 1);
    if (!q) {
        fprintf(stderr, "strata: out of memory\n");
        abort();
    }
    return q;
}

static void frag_free(rdel_frag *f)
{
    if (!f) return;
    free(f->b);
    free(f->off);
    free(f->ents);
    free(f);
}

static void gc_free_all(rdel_gc *g)
{
    while (g) {
        rdel_gc *next = g->next;
        if (g->is_frag)
            frag_free((rdel_frag *)g);
        else
            free(g);
        g = next;
    }
}

static void retire(rdel_set *s, rdel_gc *g)
{
    g->next = s->retired;
    s->retired = g;
}

rdel_set *rdel_set_new(void)
{
    rdel_set *s = rdel_xalloc(sizeof(*s));
    s->refs = 1;
    return s;
}

void rdel_set_ref(rdel_set *s)
{
    __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void rdel_set_unref(rdel_set *s)
{
    if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    rdel_chunk *c = s->head;
    while (c) {
        rdel_chunk *next = c->next;
        for (int i = 0; i < c->n; i++)
            free(c->v[i].start);
        free(c);
        c = next;
    }
    if (s->levels) {
        for (int i = 0; i < s->levels->nlev; i++)
            frag_free(s->levels->lev[i]);
        free(s->levels);
    }
    gc_free_all(s->retired);
    free(s);
}

void rdel_set_add(rdel_set *s, slice start, slice end, uint64_t seq)
{
    rdel_chunk *t = s->tail;
    if (!t || t->n == RDEL_CHUNK) {
        rdel_chunk *c = rdel_xalloc(sizeof(*c));
        if (t)
            __atomic_store_n(&t->next, c, __ATOMIC_RELEASE);
        else
            __atomic_store_n(&s->head, c, __ATOMIC_RELEASE);
        s->tail = t = c;
    }
    rdel *r = &t->v[t->n];
    r->start = rdel_xalloc(start.size + end.size);
    if (start.size) memcpy(r->start, start.data, start.size);
    if (end.size) memcpy(r->start + start.size, end.data, end.size);
    r->sl = start.size;
    r->el = end.size;
    r->seq = seq;
    r->keep = 0;
    /* max_seq before n: a reader that sees the tombstone also sees its seq
     * in max_seq (it loads n first, with acquire). */
    if (seq > s->max_seq) __atomic_store_n(&s->max_seq, seq, __ATOMIC_RELEASE);
    __atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
}

rdel *rdel_set_first(const rdel_set *s, rdel_cursor *c)
{
    c->c = s ? __atomic_load_n(&s->head, __ATOMIC_ACQUIRE) : NULL;
    c->i = -1;
    return rdel_next(c);
}

rdel *rdel_next(rdel_cursor *c)
{
    while (c->c) {
        if (++c->i < __atomic_load_n(&c->c->n, __ATOMIC_ACQUIRE)) return &c->c->v[c->i];
        c->c = __atomic_load_n(&c->c->next, __ATOMIC_ACQUIRE);
        c->i = -1;
    }
    return NULL;
}

/* A cursor at position pos - 1, so that rdel_next yields position pos.
 * REQUIRES: pos <= the published count. */
static rdel_cursor cursor_before(const rdel_set *s, size_t pos)
{
    rdel_cursor c = {__atomic_load_n(&s->head, __ATOMIC_ACQUIRE), -1};
    if (pos == 0) return c;
    for (size_t k = (pos - 1) / RDEL_CHUNK; k > 0; k--)
        c.c = __atomic_load_n(&c.c->next, __ATOMIC_ACQUIRE);
    c.i = (int)((pos - 1) % RDEL_CHUNK);
    return c;
}

static inline int invisible(const rdel *r, uint64_t snap)
{
    return r->seq > snap && r->seq < ENG_BATCH_SEQ_BASE; /* R1 */
}

static inline int covers_key(const rdel *r, slice key)
{
    return slice_compare(rdel_start(r), key) <= 0 && slice_compare(key, rdel_end(r)) < 0;
}

/* R1 over the tombstones rdel_next yields from c: the best above *floor. */
static const rdel *linear_best(rdel_cursor c, slice key, uint64_t *floor, uint64_t snap,
                               const rdel *best)
{
    for (const rdel *r = rdel_next(&c); r; r = rdel_next(&c)) {
        rdel_examined_n++;
        if (r->seq <= *floor || invisible(r, snap)) continue;
        if (covers_key(r, key)) {
            best = r;
            *floor = r->seq;
        }
    }
    return best;
}

/* ---- Building a frag ------------------------------------------------------- */

static int cmp_slice(const void *x, const void *y)
{
    return slice_compare(*(const slice *)x, *(const slice *)y);
}

static int cmp_seq_desc(const void *x, const void *y)
{
    uint64_t a = (*(const rdel *const *)x)->seq, b = (*(const rdel *const *)y)->seq;
    return a < b ? 1 : a > b ? -1 : 0;
}

/* The index of boundary k. REQUIRES: k is one of b[0..nb). */
static size_t boundary_at(const slice *b, size_t nb, slice k)
{
    size_t lo = 0, hi = nb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (slice_compare(b[mid], k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Counts each fragment's list (off[j] for fragment j, then the total in
 * off[nb - 1]); returns the total, or SIZE_MAX past budget. */
static size_t frag_count(rdel_frag *f, const rdel **rs, size_t m, size_t budget)
{
    size_t total = 0;
    for (size_t i = 0; i < m; i++) {
        size_t a = boundary_at(f->b, f->nb, rdel_start(rs[i]));
        size_t z = boundary_at(f->b, f->nb, rdel_end(rs[i]));
        for (size_t j = a; j < z; j++)
            f->off[j]++;
        total += z - a;
        if (total > budget) return SIZE_MAX;
    }
    return total;
}

/* Lists rs (highest sequence first) per fragment; REQUIRES: off counted. */
static void frag_fill(rdel_frag *f, const rdel **rs, size_t m, size_t total)
{
    size_t run = 0;
    for (size_t j = 0; j < f->nb; j++) { /* counts -> starts */
        size_t c = f->off[j];
        f->off[j] = (uint32_t)run;
        run += c;
    }
    f->off[f->nb - 1] = (uint32_t)total;
    f->ents = rdel_xalloc(total * sizeof(*f->ents));
    uint32_t *fill = rdel_xalloc(f->nb * sizeof(*fill));
    memcpy(fill, f->off, f->nb * sizeof(*fill));
    for (size_t i = 0; i < m; i++) {
        size_t a = boundary_at(f->b, f->nb, rdel_start(rs[i]));
        size_t z = boundary_at(f->b, f->nb, rdel_end(rs[i]));
        for (size_t j = a; j < z; j++)
            f->ents[fill[j]++] = rs[i];
    }
    free(fill);
}

/* The frag of the n tombstones at positions [lo, lo + n). REQUIRES: they
 * are published. */
static rdel_frag *frag_build(const rdel_set *s, size_t lo, size_t n)
{
    rdel_frag *f = rdel_xalloc(sizeof(*f));
    f->gc.is_frag = 1;
    f->lo = lo;
    f->n = n;
    const rdel **rs = rdel_xalloc(n * sizeof(*rs));
    rdel_cursor c = cursor_before(s, lo);
    size_t m = 0; /* tombstones over a non-empty range; the others cover nothing */
    for (size_t i = 0; i < n; i++) {
        const rdel *r = rdel_next(&c);
        if (r->seq > f->max_seq) f->max_seq = r->seq;
        if (slice_compare(rdel_start(r), rdel_end(r)) < 0) rs[m++] = r;
    }
    qsort(rs, m, sizeof(*rs), cmp_seq_desc);
    f->b = rdel_xalloc(2 * m * sizeof(*f->b));
    for (size_t i = 0; i < m; i++) {
        f->b[2 * i] = rdel_start(rs[i]);
        f->b[2 * i + 1] = rdel_end(rs[i]);
    }
    qsort(f->b, 2 * m, sizeof(*f->b), cmp_slice);
    for (size_t i = 0; i < 2 * m; i++)
        if (f->nb == 0 || slice_compare(f->b[f->nb - 1], f->b[i]) != 0) f->b[f->nb++] = f->b[i];
    f->off = rdel_xalloc((f->nb ? f->nb : 1) * sizeof(*f->off));
    size_t budget = RDEL_FRAG_BUDGET * m + 1024;
    if (budget > UINT32_MAX) budget = UINT32_MAX; /* off[] is 32-bit */
    size_t total = f->nb ? frag_count(f, rs, m, budget) : 0;
    if (total == SIZE_MAX || f->nb == 0) { /* nested too deep, or empty: a plain list */
        free(f->b);
        f->b = NULL;
        f->nb = 0;
        f->off[0] = (uint32_t)m;
        f->ents = rs; /* highest sequence first; the other n - m cover nothing */
        return f;
    }
    frag_fill(f, rs, m, total);
    free(rs);
    return f;
}

/* The fragment a thread's last search of a frag ended in: scans and runs of
 * point reads ask for nearby keys, which usually fall in the same one. A hint
 * only (the slot may name a freed frag whose address was reused): it is
 * used only after checking the key lies in that fragment of this frag. */
#define RDEL_HINTS 8
static __thread struct {
    const rdel_frag *f;
    size_t j;
} rdel_hint[RDEL_HINTS];

/* The j with b[j] <= key < b[j + 1], or SIZE_MAX when key is outside
 * [b[0], b[nb - 1]) (then no tombstone of f covers it). REQUIRES: f->nb. */
static size_t fragment_of(const rdel_frag *f, slice key)
{
    if (slice_compare(key, f->b[0]) < 0 || slice_compare(key, f->b[f->nb - 1]) >= 0)
        return SIZE_MAX;
    size_t h = ((uintptr_t)f >> 6) % RDEL_HINTS;
    size_t j = rdel_hint[h].j;
    if (rdel_hint[h].f == f && j + 1 < f->nb && slice_compare(f->b[j], key) <= 0 &&
        slice_compare(key, f->b[j + 1]) < 0)
        return j;
    size_t lo = 1, hi = f->nb - 1; /* the first boundary > key: in [1, nb - 1] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (slice_compare(f->b[mid], key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    rdel_hint[h].f = f;
    rdel_hint[h].j = lo - 1;
    return lo - 1;
}

/* R3: the best tombstone of f covering key above *floor. Both kinds of list
 * are by sequence, highest first, so the first visible one that covers the
 * key is the best. */
static const rdel *frag_best(const rdel_frag *f, slice key, uint64_t *floor, uint64_t snap,
                             const rdel *best)
{
    if (f->max_seq <= *floor) return best;
    size_t from = 0, to = f->off[0];
    if (f->nb) {
        size_t j = fragment_of(f, key);
        if (j == SIZE_MAX) return best;
        from = f->off[j];
        to = f->off[j + 1];
    }
    for (size_t i = from; i < to; i++) {
        const rdel *r = f->ents[i];
        rdel_examined_n++;
        if (r->seq <= *floor) break;
        if (invisible(r, snap) || (!f->nb && !covers_key(r, key))) continue;
        *floor = r->seq;
        return r;
    }
    return best;
}

/* ---- Levels --------------------------------------------------------------- */

/* Indexes the tail when it has grown to RDEL_LINEAR_MAX (R3), unless another
 * reader is at it. Frees what no search can hold any longer (R4). */
static void maybe_build(rdel_set *s, size_t n)
{
    rdel_levels *old = __atomic_load_n(&s->levels, __ATOMIC_ACQUIRE);
    if (n - (old ? old->covered : 0) < RDEL_LINEAR_MAX) return;
    int zero = 0;
    if (!__atomic_compare_exchange_n(&s->building, &zero, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return;
    old = __atomic_load_n(&s->levels, __ATOMIC_ACQUIRE);
    size_t covered = old ? old->covered : 0;
    if (n - covered >= RDEL_LINEAR_MAX) {
        rdel_levels *nl = rdel_xalloc(sizeof(*nl));
        if (old) {
            memcpy(nl->lev, old->lev, sizeof(nl->lev));
            nl->nlev = old->nlev;
        }
        rdel_frag *f = frag_build(s, covered, n - covered);
        while (nl->nlev > 0 && nl->lev[nl->nlev - 1]->n <= f->n) {
            rdel_frag *last = nl->lev[--nl->nlev];
            rdel_frag *merged = frag_build(s, last->lo, last->n + f->n);
            retire(s, &last->gc);
            frag_free(f);
            f = merged;
        }
        if (nl->nlev == RDEL_MAX_LEVELS) abort(); /* 2^64 tombstones */
        nl->lev[nl->nlev++] = f;
        nl->covered = n;
        nl->tail = cursor_before(s, n);
        __atomic_store_n(&s->levels, nl, __ATOMIC_SEQ_CST);
        if (old) retire(s, &old->gc);
    }
    /* R4: a search that loaded a retired pointer counts in in_flight, and
     * one that starts after this load sees the new list. */
    if (__atomic_load_n(&s->in_flight, __ATOMIC_SEQ_CST) == 0) {
        gc_free_all(s->retired);
        s->retired = NULL;
    }
    __atomic_store_n(&s->building, 0, __ATOMIC_RELEASE);
}

const rdel *rdel_set_best(const rdel_set *cs, slice key, uint64_t floor, uint64_t snap_seq)
{
    if (!cs) return NULL;
    size_t n = __atomic_load_n(&cs->n, __ATOMIC_ACQUIRE);
    if (n == 0 || __atomic_load_n(&cs->max_seq, __ATOMIC_ACQUIRE) <= floor) return NULL;
    rdel_set *s = (rdel_set *)cs; /* the indexes are a cache readers build */
    if (n <= RDEL_LINEAR_MAX && !__atomic_load_n(&s->levels, __ATOMIC_ACQUIRE)) {
        rdel_cursor c = {__atomic_load_n(&s->head, __ATOMIC_ACQUIRE), -1};
        return linear_best(c, key, &floor, snap_seq, NULL);
    }
    maybe_build(s, n);
    __atomic_add_fetch(&s->in_flight, 1, __ATOMIC_SEQ_CST);
    const rdel_levels *l = __atomic_load_n(&s->levels, __ATOMIC_SEQ_CST);
    const rdel *best = NULL;
    rdel_cursor tail = {__atomic_load_n(&s->head, __ATOMIC_ACQUIRE), -1};
    if (l) {
        for (int i = 0; i < l->nlev; i++)
            best = frag_best(l->lev[i], key, &floor, snap_seq, best);
        tail = l->tail;
    }
    best = linear_best(tail, key, &floor, snap_seq, best);
    __atomic_sub_fetch(&s->in_flight, 1, __ATOMIC_RELEASE);
    return best;
}

const rdel *rdel_view_covering(const rdel_view *v, slice key, uint64_t pseq, uint64_t snap)
{
    const rdel *best = NULL;
    for (int i = 0; i < v->n; i++) {
        const rdel *r = rdel_set_best(v->part[i], key, best ? best->seq : pseq, snap);
        if (r) best = r;
    }
    return best;
}

void rdel_view_add(rdel_view *v, rdel_set *s)
{
    if (!s) return;
    if (v->n >= RDEL_VIEW_MAX) { /* a programming error: the sources are fixed */
        fprintf(stderr, "strata: too many tombstone sets in one view\n");
        abort();
    }
    rdel_set_ref(s);
    v->part[v->n++] = s;
}

void rdel_view_release(rdel_view *v)
{
    for (int i = 0; i < v->n; i++)
        rdel_set_unref(v->part[i]);
    v->n = 0;
}
