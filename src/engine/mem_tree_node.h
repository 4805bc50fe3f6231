/*
 * mem_tree_node.h -- the node layout, key comparisons, node search and
 * version checks that the memtable tree's writer (mem_tree.c) and its
 * readers (mem_tree_read.c) share. Internal to those two files: the
 * format and the invariants T1-T11 are described in mem_tree.c.
 */
#ifndef STRATA_MEM_TREE_NODE_H
#define STRATA_MEM_TREE_NODE_H

#include <sched.h>
#include <stddef.h>
#include <string.h>

#include "mem_tree.h"

#define CAP 32        /* keys per node */
#define MAX_HEIGHT 24 /* CAP/2 fill: 16^24 entries */
#define MIN_DBYTES 6  /* below this a split reads the keys again (T5) */
#define GROUP 4       /* a leaf's slots per cache line: its summary's step (T11) */

typedef struct mt_node {
    _Atomic uint64_t version; /* T1 */
    _Atomic uint32_t count;
    _Atomic uint32_t plen;  /* T5 */
    _Atomic uint32_t kmax;  /* T5 */
    _Atomic uint8_t dbytes; /* T5 */
    uint8_t leaf;           /* set before the node is linked, never changed */
    uint8_t leaf_kids;      /* an inner node's children are leaves; as leaf */
    uint8_t last_pos;       /* writer-only: the slot the last insert took, NO_POS none */
    _Atomic(void *) link;   /* a leaf's next leaf (T6); an inner node's child 0 */
    /* A leaf's summary (T11), in the header's cache line: a search reads
     * it and then one line of slots instead of probing three or four. */
    _Atomic uint32_t gsum[CAP / GROUP];
} mt_node;

#define NO_POS 0xff

/* The slots follow the header: a binary search reads a slot's disc and, on
 * a tie, its key pointer from the same cache line, and in an inner node the
 * child right of the separator it lands next to. */
typedef struct leaf_slot {
    _Atomic uint64_t disc;
    _Atomic(const mem_ent *) key;
} leaf_slot;

typedef struct inner_slot {
    _Atomic uint64_t disc;
    _Atomic(const mem_ent *) key; /* the separator */
    _Atomic(mt_node *) right;     /* the child after it */
} inner_slot;

static inline size_t node_size(int leaf)
{
    return sizeof(mt_node) + CAP * (leaf ? sizeof(leaf_slot) : sizeof(inner_slot));
}

static inline size_t slot_stride(const mt_node *n)
{
    return n->leaf ? sizeof(leaf_slot) : sizeof(inner_slot);
}

/* Slot i of n: its disc and key (the two leading fields of either kind). */
static inline leaf_slot *slot_at(const mt_node *n, size_t stride, unsigned i)
{
    return (leaf_slot *)((char *)(n + 1) + i * stride);
}

static inline _Atomic(mt_node *) *child_ref(const mt_node *n, unsigned i)
{
    if (i == 0) return (_Atomic(mt_node *) *)&((mt_node *)n)->link;
    return &((inner_slot *)(n + 1))[i - 1].right;
}

/* A search target: an internal key given as user key and trailer. slack:
 * uk is an entry's (T10), so its 8 bytes after the user key can be read. */
typedef struct tkey {
    const char *uk;
    size_t ul;
    uint64_t trailer;
    int slack;
} tkey;

#define RLX memory_order_relaxed
#define ACQ memory_order_acquire
#define REL memory_order_release

static inline tkey tkey_of(const mem_ent *e)
{
    return (tkey){e->data, e->klen - 8, ment_trailer(e), 1};
}

/* ---- Comparisons -------------------------------------------------------- */

/* memcmp's sign, eight bytes a step: user keys are short. */
static inline int bytes_cmp(const char *a, const char *b, size_t n)
{
    for (; n >= 8; a += 8, b += 8, n -= 8) {
        uint64_t x = dec_fixed64(a), y = dec_fixed64(b);
        if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
    for (; n; a++, b++, n--)
        if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
    return 0;
}

/* Entry e against target t in K1 order. */
static inline int ent_cmp(const mem_ent *e, const tkey *t)
{
    size_t el = e->klen - 8, n = el < t->ul ? el : t->ul;
    int r = n ? bytes_cmp(e->data, t->uk, n) : 0;
    if (r) return r;
    if (el != t->ul) return el < t->ul ? -1 : 1;
    uint64_t tr = ment_trailer(e);
    return tr > t->trailer ? -1 : tr < t->trailer ? 1 : 0;
}

static inline uint64_t dmask(unsigned dbytes)
{
    return dbytes >= 8 ? ~UINT64_C(0) : ~UINT64_C(0) << (64 - 8 * dbytes);
}

/* Bytes off .. off + 8 of a user key as a big-endian word, zero past its end
 * (T5 before masking). */
static inline uint64_t disc_at(const char *uk, size_t ul, size_t off)
{
    if (off >= ul) return 0;
    uint64_t x = 0;
    if (ul - off >= 8)
        x = dec_fixed64(uk + off);
    else
        memcpy(&x, uk + off, ul - off);
    return __builtin_bswap64(x);
}

/* disc_at for a user key followed by 8 readable bytes (an entry's, whose
 * trailer follows it, T10): one load instead of a copy of the key's tail. */
static inline uint64_t disc_at_slack(const char *uk, size_t ul, size_t off)
{
    if (off >= ul) return 0;
    uint64_t x = __builtin_bswap64(dec_fixed64(uk + off)); /* off + 8 <= ul + 8 */
    return ul - off >= 8 ? x : x & ~(~UINT64_C(0) >> (8 * (ul - off)));
}

static inline uint64_t tkey_disc(unsigned plen, unsigned dbytes, const tkey *t)
{
    return (t->slack ? disc_at_slack(t->uk, t->ul, plen) : disc_at(t->uk, t->ul, plen)) &
           dmask(dbytes);
}

static inline uint64_t ent_disc(unsigned plen, unsigned dbytes, const mem_ent *e)
{
    return disc_at_slack(e->data, e->klen - 8, plen) & dmask(dbytes);
}

/* Length of the common prefix of two entries' user keys. */
static inline unsigned ent_lcp(const mem_ent *a, const mem_ent *b)
{
    size_t n = a->klen - 8 < b->klen - 8 ? a->klen - 8 : b->klen - 8, i = 0;
    while (i < n && a->data[i] == b->data[i])
        i++;
    return (unsigned)i;
}

/* The prefix length a node gets from a split (T5): the common prefix of its
 * fences, or where one is missing, of the other fence and the node's key at
 * that end (first for a missing lo, last for a missing hi). */
static inline unsigned split_plen(const mem_ent *lo, const mem_ent *hi, const mem_ent *first,
                                  const mem_ent *last)
{
    return ent_lcp(lo ? lo : first, hi ? hi : last);
}

/* Slot s against t, given t's disc in s's node. */
static inline int slot_cmp(const leaf_slot *s, uint64_t td, const tkey *t)
{
    uint64_t d = atomic_load_explicit(&s->disc, RLX);
    if (d != td) return d < td ? -1 : 1;
    const mem_ent *e = atomic_load_explicit(&s->key, ACQ);
    if (!e) return 1; /* torn (T1): the caller's check fails */
    return ent_cmp(e, t);
}

/* Narrows [*lo, *hi), the slots of leaf n a search for disc td looks at,
 * by the summary (T11): a group's first slot whose disc's high half is
 * below td's holds a key below the target, one above it a key above. */
static inline void leaf_bounds(const mt_node *n, uint64_t td, unsigned *lo, unsigned *hi)
{
    uint32_t t32 = (uint32_t)(td >> 32);
    for (unsigned g = 1; g < CAP / GROUP && g * GROUP < *hi; g++) {
        uint32_t s = atomic_load_explicit(&n->gsum[g], RLX);
        if (s > t32) {
            *hi = g * GROUP;
            break;
        }
        if (s < t32) *lo = g * GROUP + 1;
    }
    if (*lo > *hi) *lo = *hi; /* only in a torn read */
}

/* search with n's slot stride given: a constant where search_in is
 * inlined, so a probe's address is a shift or lea, not a multiply. */
static inline __attribute__((always_inline)) unsigned search_in(const mt_node *n, const tkey *t,
                                                                int after, int open, size_t stride)
{
    unsigned lo = 0, hi = atomic_load_explicit(&n->count, RLX);
    unsigned plen = atomic_load_explicit(&n->plen, RLX);
    if (hi > CAP) hi = CAP;   /* only in a torn read */
    if (open && plen && hi) { /* below or above every key unless t has the prefix */
        const mem_ent *f = atomic_load_explicit(&slot_at(n, stride, 0)->key, ACQ);
        if (!f) return 0; /* a torn read */
        size_t m = plen < t->ul ? plen : t->ul;
        if (m > f->klen - 8) m = f->klen - 8; /* only in a torn read */
        int r = bytes_cmp(t->uk, f->data, m);
        if (r) return r < 0 ? 0 : hi;
        if (t->ul < plen) return 0; /* t is a proper prefix of every key */
    }
    uint64_t td = tkey_disc(plen, atomic_load_explicit(&n->dbytes, RLX), t);
    if (stride == sizeof(leaf_slot)) leaf_bounds(n, td, &lo, &hi);
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        int c = slot_cmp(slot_at(n, stride, mid), td, t);
        if (c < 0 || (after && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first slot whose key is >= t (after = 0) or > t (after = 1). open:
 * n lacks a fence, so t need not share n's prefix (T5). */
static inline unsigned search(const mt_node *n, const tkey *t, int after, int open)
{
    return n->leaf ? search_in(n, t, after, open, sizeof(leaf_slot))
                   : search_in(n, t, after, open, sizeof(inner_slot));
}

/* ---- Versions (T1) ------------------------------------------------------ */

static inline uint64_t read_begin(const mt_node *n)
{
    for (unsigned spins = 0;; spins++) {
        uint64_t v = atomic_load_explicit(&n->version, ACQ);
        if (!(v & 1)) return v;
        if (spins >= 64) sched_yield(); /* the writer may have been preempted */
    }
}

static inline int read_valid(const mt_node *n, uint64_t v)
{
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&n->version, RLX) == v;
}

static inline void write_lock(mt_node *n)
{
    atomic_store_explicit(&n->version, atomic_load_explicit(&n->version, RLX) + 1, RLX);
    atomic_thread_fence(memory_order_release);
}

static inline void write_unlock(mt_node *n)
{
    atomic_store_explicit(&n->version, atomic_load_explicit(&n->version, RLX) + 1, REL);
}

/* Starts fetching every line of n, a leaf or not as its parent's leaf_kids
 * says (reading n's own header would wait for the first miss): a binary
 * search reads most of them, and the misses overlap instead of following
 * one another. */
static inline void prefetch_node(const mt_node *n, int leaf)
{
    /* Two loops of constant length, unrolled: the prefetches are
     * straight-line code, not a loop per tree level. */
    const char *p = (const char *)n;
    if (leaf) {
#pragma GCC unroll 16
        for (size_t off = 0; off < node_size(1); off += 64)
            __builtin_prefetch(p + off);
    } else {
#pragma GCC unroll 16
        for (size_t off = 0; off < node_size(0); off += 64)
            __builtin_prefetch(p + off);
    }
}

#endif
