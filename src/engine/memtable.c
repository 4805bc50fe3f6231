/*
 * memtable.c -- a LevelDB-style skiplist of internal keys in an arena
 * (memtable.h).
 *
 * Layout: each node is one arena allocation,
 *
 *   node header (key pointer, ikey length, value length, prev0) |
 *   next[height] | entry = varint32 ikey length | ikey | varint32 value
 *   length | value
 *
 * The node's key pointer points at the ikey inside its own entry, so a
 * comparison reads no varint. Entries are never modified or freed before
 * the whole memtable is.
 *
 * Point index: beside the skiplist, an open-addressing hash table (linear
 * probing, 8-byte slots of node pointer and XXH3 hash tag, in the arena)
 * maps each user key to its newest point entry (VALUE or DELETION; range
 * deletions are not indexed). mem_get answers a miss, and a read at or
 * above the newest version's sequence, with one probe instead of a skiplist
 * descent (about 20 dependent cache misses at 1M entries); an older
 * snapshot read falls back to the skiplist. The writer also uses it as an
 * insert hint: a new version of an indexed key goes right before the
 * indexed node, whose level-0 predecessor (prev0) is known, so a height-1
 * node is linked without a descent.
 *
 * Invariants:
 *   M1. (memtable.h) One writer; readers lock-free. A node is fully
 *       initialized, including its own next[] pointers (relaxed stores),
 *       before a release store links it into level i; readers follow links
 *       with acquire loads, so a reader that sees a node sees its contents.
 *       Levels are linked bottom-up, so a node reachable at level i is
 *       reachable at every level below it.
 *   M2. At every level the list is sorted by Invariant K1 (ikey_compare),
 *       and there are no two nodes with the same internal key.
 *   M3. max_height only grows. A reader that loads a new max_height before
 *       the head's upper links are set finds NULL there and simply descends.
 *   M4. tail[i] is the last node at level i (head when the level is empty).
 *       An entry greater than tail[0] is appended without a search: its
 *       predecessors are exactly tail[0..height), which makes ascending
 *       inserts (sequential ids, the fillseq pattern) cost one comparison.
 *   M5. The index holds exactly one slot per user key that has a point
 *       entry, pointing at that key's first point entry in M2 order (its
 *       newest). A slot (node pointer and hash tag in one word) is filled
 *       with a release store; slots are never emptied, and a slot's node is
 *       only replaced (release store) by a newer version of the same key,
 *       after that version is linked into the skiplist. So a reader that
 *       sees a node through the index sees it complete and linked (M1).
 *   M6. The table is at most half full. It grows by filling a table twice
 *       the size and publishing it with a release store; older tables stay
 *       in the arena (readers may still be probing them) until the memtable
 *       is reset or freed, and are never written again.
 *   M7. prev0 (writer-only) is each node's level-0 predecessor (head for
 *       the first node). Readers never touch it.
 */
#include "memtable.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "arena.h"
#include "dbformat.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAX_HEIGHT 12
#define BLOCK_SIZE (1u << 20)
#define INDEX_FIRST_SLOTS 16 /* tiny: an indexed batch's memtable holds a few keys */

typedef struct node {
    const char *key; /* the ikey inside this node's entry */
    uint32_t klen;   /* ikey length (user key + 8) */
    uint32_t vlen;
    struct node *prev0;            /* M7: writer-only */
    _Atomic(struct node *) next[]; /* height entries */
} node;

/* An index slot: a node pointer with the top 16 bits of its key's hash in
 * the pointer's unused top 16 bits (user-space addresses on the x86-64 and
 * AArch64 Linux hosts we build for are below 2^48; mem_add checks), so a
 * probe past a colliding key rarely dereferences its node. 0 is empty. */
typedef _Atomic uintptr_t hslot;
_Static_assert(sizeof(uintptr_t) == 8, "index slots pack a tag into 64-bit pointers");
#define TAG_SHIFT 48
#define PTR_MASK ((UINT64_C(1) << TAG_SHIFT) - 1)

typedef struct htable {
    size_t mask; /* slots - 1; slots is a power of two */
    hslot slots[];
} htable;

struct memtable {
    arena arena;
    node *head;
    _Atomic int max_height; /* M3 */
    _Atomic int refs;
    _Atomic uint64_t entries;
    _Atomic uint64_t range_dels;
    _Atomic(htable *) index; /* M5, M6 */
    size_t index_used;       /* filled slots of index: writer-only */
    uint64_t rnd;            /* writer-only random state for node heights */
    node *tail[MAX_HEIGHT];  /* M4: writer-only */
};

static inline node *nx_acquire(node *x, int level)
{
    return atomic_load_explicit(&x->next[level], memory_order_acquire);
}

static inline const char *node_value(const node *x)
{
    return x->key + x->klen + varint_length(x->vlen);
}

static inline uint64_t node_trailer(const node *x)
{
    return dec_fixed64(x->key + x->klen - 8);
}

static inline int node_ukey_eq(const node *x, slice key)
{
    return x->klen - 8 == key.size && (key.size == 0 || memcmp(x->key, key.data, key.size) == 0);
}

static inline uint64_t key_hash(slice key)
{
    return XXH3_64bits(key.data, key.size);
}

/* ---- Point index (M5, M6) ------------------------------------------------ */

static htable *index_alloc(memtable *m, size_t slots)
{
    htable *t = arena_alloc(&m->arena, sizeof(htable) + slots * sizeof(hslot));
    t->mask = slots - 1;
    memset(t->slots, 0, slots * sizeof(hslot)); /* before publication: plain stores */
    return t;
}

static inline uintptr_t slot_make(const node *x, uint64_t h)
{
    return (uintptr_t)x | (uintptr_t)(h >> TAG_SHIFT) << TAG_SHIFT;
}

static inline node *slot_node(uintptr_t s)
{
    return (node *)(s & PTR_MASK);
}

static inline int slot_tag_eq(uintptr_t s, uint64_t h)
{
    return (s >> TAG_SHIFT) == (h >> TAG_SHIFT);
}

/* Returns key's newest point entry per the table the reader sees, or NULL.
 * The home slot is chosen by the low bits of h, the tag is its top bits. */
static node *index_find(memtable *m, slice key, uint64_t h)
{
    htable *t = atomic_load_explicit(&m->index, memory_order_acquire);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t s = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!s) return NULL; /* M6: there is always an empty slot */
        if (slot_tag_eq(s, h) && node_ukey_eq(slot_node(s), key)) return slot_node(s);
    }
}

/* Writer: the slot for key in the current table, holding its node or empty. */
static inline hslot *index_slot(memtable *m, slice key, uint64_t h)
{
    htable *t = atomic_load_explicit(&m->index, memory_order_relaxed);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t s = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (!s || (slot_tag_eq(s, h) && node_ukey_eq(slot_node(s), key))) return &t->slots[i];
    }
}

/* Writer: a table twice the size with the same entries, published (M6).
 * Rehashing reads each indexed key again: at most two node reads per entry
 * over the memtable's life, prefetched, against a descent's twenty. */
static void index_grow(memtable *m)
{
    htable *old = atomic_load_explicit(&m->index, memory_order_relaxed);
    htable *t = index_alloc(m, (old->mask + 1) * 2);
    for (size_t i = 0; i <= old->mask; i++) {
        /* The nodes are independent cache misses: overlap them. */
        if (i + 16 <= old->mask)
            __builtin_prefetch(
                slot_node(atomic_load_explicit(&old->slots[i + 16], memory_order_relaxed)));
        uintptr_t s = atomic_load_explicit(&old->slots[i], memory_order_relaxed);
        if (!s) continue;
        const node *x = slot_node(s);
        size_t j = key_hash(slice_make(x->key, x->klen - 8)) & t->mask;
        while (atomic_load_explicit(&t->slots[j], memory_order_relaxed))
            j = (j + 1) & t->mask;
        atomic_store_explicit(&t->slots[j], s, memory_order_relaxed);
    }
    atomic_store_explicit(&m->index, t, memory_order_release);
}

/* Writer: records x (already linked, M5) as the newest point entry of its
 * key if it is; s is index_slot()'s answer for that key. */
static void index_put(memtable *m, hslot *s, uint64_t h, node *x)
{
    uintptr_t cur = atomic_load_explicit(s, memory_order_relaxed);
    if (cur) {
        if (node_trailer(x) > node_trailer(slot_node(cur)))
            atomic_store_explicit(s, slot_make(x, h), memory_order_release);
        return;
    }
    atomic_store_explicit(s, slot_make(x, h), memory_order_release);
    htable *t = atomic_load_explicit(&m->index, memory_order_relaxed);
    if (++m->index_used * 2 > t->mask + 1) index_grow(m);
}

/* memcmp's sign for n bytes, inline: user keys are short and share long
 * prefixes (keyspace tags, "user:..."), so eight bytes a step beat a call. */
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

/* Compares node x's ikey with the ikey (uk, trailer) in K1 order. */
static inline int node_cmp(const node *x, const char *uk, size_t ul, uint64_t trailer)
{
    size_t xl = x->klen - 8;
    size_t n = xl < ul ? xl : ul;
    int r = bytes_cmp(x->key, uk, n); /* uk may be NULL when ul (so n) is 0 */
    if (r) return r;
    if (xl != ul) return xl < ul ? -1 : 1;
    uint64_t t = dec_fixed64(x->key + xl);
    return t > trailer ? -1 : t < trailer ? 1 : 0;
}

/* Returns the first node >= (uk, trailer), or NULL; fills prev[level] with
 * the last node < target at each level when prev is given. */
static node *find_ge(memtable *m, const char *uk, size_t ul, uint64_t trailer, node **prev)
{
    node *x = m->head, *checked = NULL;
    int level = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
    for (;;) {
        node *n = nx_acquire(x, level);
        /* Whichever way the comparison goes, the next node read is n's
         * successor or x's successor one level down: start fetching the
         * latter now so the two cache misses overlap. */
        if (level > 0)
            __builtin_prefetch(atomic_load_explicit(&x->next[level - 1], memory_order_relaxed));
        if (n && n != checked && node_cmp(n, uk, ul, trailer) < 0) {
            x = n;
            continue;
        }
        if (prev) prev[level] = x;
        if (level == 0) return n;
        checked = n; /* known >= target: no need to compare it again below */
        level--;
    }
}

/* Returns the last node < (uk, trailer), or m->head if there is none. */
static node *find_lt(memtable *m, const char *uk, size_t ul, uint64_t trailer)
{
    node *x = m->head;
    int level = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
    for (;;) {
        node *n = nx_acquire(x, level);
        if (n && node_cmp(n, uk, ul, trailer) < 0) {
            x = n;
        } else if (level == 0) {
            return x;
        } else {
            level--;
        }
    }
}

static node *find_last(memtable *m)
{
    node *x = m->head;
    int level = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
    for (;;) {
        node *n = nx_acquire(x, level);
        if (n) {
            x = n;
        } else if (level == 0) {
            return x;
        } else {
            level--;
        }
    }
}

static node *new_node(memtable *m, int height, size_t entry_size)
{
    size_t hdr = sizeof(node) + (size_t)height * sizeof(_Atomic(node *));
    node *x = arena_alloc(&m->arena, hdr + entry_size);
    for (int i = 0; i < height; i++)
        atomic_init(&x->next[i], NULL);
    return x;
}

static void init_empty(memtable *m)
{
    m->head = new_node(m, MAX_HEIGHT, 0);
    m->head->key = NULL;
    m->head->klen = m->head->vlen = 0;
    m->head->prev0 = NULL;
    atomic_store_explicit(&m->index, index_alloc(m, INDEX_FIRST_SLOTS), memory_order_release);
    m->index_used = 0;
    atomic_store_explicit(&m->max_height, 1, memory_order_relaxed);
    for (int i = 0; i < MAX_HEIGHT; i++)
        m->tail[i] = m->head;
    atomic_store_explicit(&m->entries, 0, memory_order_relaxed);
    atomic_store_explicit(&m->range_dels, 0, memory_order_relaxed);
}

memtable *mem_new_sized(size_t first_block)
{
    memtable *m = malloc(sizeof(*m));
    if (!m) abort();
    if (first_block == 0 || first_block > BLOCK_SIZE) first_block = BLOCK_SIZE;
    arena_init(&m->arena, first_block, BLOCK_SIZE);
    atomic_init(&m->refs, 1);
    m->rnd = 0x9E3779B97F4A7C15ull ^ (uintptr_t)m;
    init_empty(m);
    return m;
}

memtable *mem_new(void)
{
    return mem_new_sized(BLOCK_SIZE);
}

void mem_ref(memtable *m)
{
    atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
}

void mem_unref(memtable *m)
{
    if (!m) return;
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
    arena_destroy(&m->arena);
    free(m);
}

int mem_refs(const memtable *m)
{
    return atomic_load_explicit(&((memtable *)m)->refs, memory_order_acquire);
}

void mem_reset(memtable *m)
{
    arena_reset(&m->arena);
    init_empty(m);
}

/* Heights are geometric with p = 1/4, as in LevelDB. */
static int random_height(memtable *m)
{
    uint64_t x = m->rnd;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    m->rnd = x;
    int h = 1;
    while (h < MAX_HEIGHT && (x & 3) == 0) {
        h++;
        x >>= 2;
    }
    return h;
}

/* Fills prev[0..height) without a search when a hint applies and returns
 * 1: the tails when (key, trailer) appends (M4); newest's level-0
 * predecessor when the entry is a height-1 newer version of newest's user
 * key (M7), which spares the descent for every overwrite. Returns 0 when a
 * descent is needed. */
static inline int prev_from_hint(memtable *m, slice key, uint64_t trailer, int height, node *newest,
                                 node **prev)
{
    if (m->tail[0] != m->head && node_cmp(m->tail[0], key.data, key.size, trailer) < 0) {
        memcpy(prev, m->tail, sizeof(m->tail));
        return 1;
    }
    if (height == 1 && newest && trailer > node_trailer(newest)) {
        node *p = newest->prev0; /* < newest; a range deletion of key may sort above us */
        if (p == m->head || node_cmp(p, key.data, key.size, trailer) < 0) {
            prev[0] = p;
            return 1;
        }
    }
    return 0;
}

/* A node of the given height holding (key, trailer) -> value, not linked. */
static node *new_entry(memtable *m, int height, slice key, uint64_t trailer, slice value)
{
    uint32_t klen = (uint32_t)key.size + 8, vlen = (uint32_t)value.size;
    size_t entry_size = (size_t)varint_length(klen) + klen + (size_t)varint_length(vlen) + vlen;
    node *x = new_node(m, height, entry_size);
    if ((uintptr_t)x & ~PTR_MASK) {
        fprintf(stderr, "strata: memtable node above 2^48 (%p): index tags need 48-bit addresses\n",
                (void *)x);
        abort();
    }
    char *p = (char *)&x->next[height];
    p = enc_varint32(p, klen);
    x->key = p;
    if (key.size) memcpy(p, key.data, key.size);
    enc_fixed64(p + key.size, trailer);
    p = enc_varint32(p + klen, vlen);
    if (vlen) memcpy(p, value.data, vlen);
    x->klen = klen;
    x->vlen = vlen;
    return x;
}

/* Links a new node for e at the given height, with prev[i] the last node
 * below e at level i (M2), and records it in the point index (M5).
 * REQUIRES: Invariant M1; levels at or above max_height have prev[i] = head
 * or a node linked there by this writer. */
static inline void link_entry(memtable *m, const mem_entry *e, uint64_t trailer, uint64_t h,
                              hslot *slot, int height, node **prev)
{
    /* M3: readers seeing the new height before the links find NULL. */
    if (height > atomic_load_explicit(&m->max_height, memory_order_relaxed))
        atomic_store_explicit(&m->max_height, height, memory_order_relaxed);
    node *x = new_entry(m, height, e->key, trailer, e->value);
    x->prev0 = prev[0];                /* M7 */
    for (int i = 0; i < height; i++) { /* M1: bottom-up, node complete before publish */
        atomic_store_explicit(&x->next[i],
                              atomic_load_explicit(&prev[i]->next[i], memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&prev[i]->next[i], x, memory_order_release);
        if (prev[i] == m->tail[i] && !atomic_load_explicit(&x->next[i], memory_order_relaxed))
            m->tail[i] = x; /* M4 */
    }
    node *after = atomic_load_explicit(&x->next[0], memory_order_relaxed);
    if (after) after->prev0 = x; /* M7 */
    atomic_fetch_add_explicit(&m->entries, 1, memory_order_relaxed);
    if (e->type != ENG_TYPE_RANGE_DELETION)
        index_put(m, slot ? slot : index_slot(m, e->key, h), h, x); /* M5: after linking */
    else
        atomic_fetch_add_explicit(&m->range_dels, 1, memory_order_relaxed);
}

/* The newest point entry of e's user key (hash h), or NULL (also for range
 * deletions, which take no overwrite hint); *slot is its index slot, which
 * stays valid until the index next grows (index_put). */
static node *newest_of(memtable *m, const mem_entry *e, uint64_t h, hslot **slot)
{
    *slot = NULL;
    if (e->type == ENG_TYPE_RANGE_DELETION) return NULL;
    *slot = index_slot(m, e->key, h);
    return slot_node(atomic_load_explicit(*slot, memory_order_relaxed));
}

void mem_add(memtable *m, uint64_t seq, int type, slice key, slice value)
{
    mem_entry e = {seq, type, key, value};
    uint64_t trailer = ikey_pack_trailer(seq, type);
    uint64_t h = type != ENG_TYPE_RANGE_DELETION ? key_hash(key) : 0;
    int height = random_height(m);
    node *prev[MAX_HEIGHT];
    for (int i = atomic_load_explicit(&m->max_height, memory_order_relaxed); i < height; i++)
        prev[i] = m->head; /* M3: levels at or above max_height are empty */
    hslot *slot;
    if (!prev_from_hint(m, key, trailer, height, newest_of(m, &e, h, &slot), prev))
        find_ge(m, key.data, key.size, trailer, prev);
    link_entry(m, &e, trailer, h, slot, height, prev);
}

/* ---- Batched inserts ------------------------------------------------------
 *
 * A random insert is a chain of dependent cache misses, one per node the
 * descent visits (about 20 at 1M entries). The entries of one write batch
 * are independent, so mem_add_many runs their descents interleaved: each
 * step of one descent prefetches the node its next step reads, and the
 * other descents' steps run while that miss is outstanding. The descents
 * search the list as it was before the chunk (readers and the writer never
 * modify existing nodes except their links), then the entries are linked
 * in K1 order; an entry's predecessor at a level can only have moved right
 * over nodes of the same chunk linked before it, so a short forward walk
 * per level (over nodes the chunk just touched) makes prev[] exact again. */

#define CHUNK 16

typedef struct pending {
    const mem_entry *e;
    uint64_t trailer, h; /* h: the user key's hash (point entries) */
    int height;
    int level;         /* the descent's current level */
    node *x, *checked; /* the descent's position, as in find_ge */
    node *prev[MAX_HEIGHT];
} pending;

/* One step of find_ge for d; returns 1 when d's prev[] is complete. */
static int descend_step(pending *d)
{
    const mem_entry *e = d->e;
    node *n = nx_acquire(d->x, d->level);
    if (n && n != d->checked && node_cmp(n, e->key.data, e->key.size, d->trailer) < 0) {
        d->x = n;
    } else {
        d->prev[d->level] = d->x;
        if (d->level == 0) return 1;
        d->checked = n;
        d->level--;
    }
    /* The next step reads this node: fetch it while other descents step. */
    __builtin_prefetch(atomic_load_explicit(&d->x->next[d->level], memory_order_relaxed));
    return 0;
}

/* Finds prev[] for p[0..n) against the list as it is now, their descents
 * interleaved. */
static void descend_all(memtable *m, pending *p, size_t n)
{
    int top = atomic_load_explicit(&m->max_height, memory_order_relaxed) - 1;
    pending *active[CHUNK];
    for (size_t i = 0; i < n; i++) {
        pending *d = &p[i];
        for (int l = 0; l < MAX_HEIGHT; l++)
            d->prev[l] = m->head; /* levels above top are empty (M3) */
        d->x = m->head;
        d->checked = NULL;
        d->level = top;
        active[i] = d;
    }
    for (size_t na = n; na;) {
        for (size_t i = 0; i < na;) {
            if (descend_step(active[i]))
                active[i] = active[--na];
            else
                i++;
        }
    }
}

/* K1 order of two pending entries. */
static int pending_cmp(const pending *a, const pending *b)
{
    slice ka = a->e->key, kb = b->e->key;
    size_t n = ka.size < kb.size ? ka.size : kb.size;
    int r = n ? bytes_cmp(ka.data, kb.data, n) : 0;
    if (r) return r;
    if (ka.size != kb.size) return ka.size < kb.size ? -1 : 1;
    return a->trailer > b->trailer ? -1 : a->trailer < b->trailer ? 1 : 0;
}

/* Inserts e[0..n) (n <= CHUNK). An entry a hint places (prev_from_hint) is
 * linked at once, as mem_add would; the others' descents run interleaved
 * afterwards and they are linked in K1 order, each prev[] first moved
 * forward over nodes of this group linked before it. */
static void add_chunk(memtable *m, const mem_entry *e, size_t n)
{
    pending p[CHUNK], *order[CHUNK];
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        pending *d = &p[nd];
        d->e = &e[i];
        d->trailer = ikey_pack_trailer(e[i].seq, e[i].type);
        d->h = e[i].type != ENG_TYPE_RANGE_DELETION ? key_hash(e[i].key) : 0;
        d->height = random_height(m);
        for (int l = atomic_load_explicit(&m->max_height, memory_order_relaxed); l < d->height; l++)
            d->prev[l] = m->head; /* M3: levels at or above max_height are empty */
        hslot *slot;
        if (prev_from_hint(m, e[i].key, d->trailer, d->height, newest_of(m, d->e, d->h, &slot),
                           d->prev))
            link_entry(m, d->e, d->trailer, d->h, slot, d->height, d->prev);
        else
            nd++;
    }
    if (nd == 1) {
        find_ge(m, p[0].e->key.data, p[0].e->key.size, p[0].trailer, p[0].prev);
        link_entry(m, p[0].e, p[0].trailer, p[0].h, NULL, p[0].height, p[0].prev);
        return;
    }
    descend_all(m, p, nd);
    for (size_t i = 0; i < nd; i++) { /* insertion sort: nd is small */
        size_t j = i;
        for (; j > 0 && pending_cmp(order[j - 1], &p[i]) > 0; j--)
            order[j] = order[j - 1];
        order[j] = &p[i];
    }
    for (size_t i = 0; i < nd; i++) {
        pending *d = order[i];
        const mem_entry *x = d->e;
        for (int l = 0; l < d->height; l++) { /* step over this chunk's nodes */
            node *nx;
            while ((nx = atomic_load_explicit(&d->prev[l]->next[l], memory_order_relaxed)) &&
                   node_cmp(nx, x->key.data, x->key.size, d->trailer) < 0)
                d->prev[l] = nx;
        }
        link_entry(m, x, d->trailer, d->h, NULL, d->height, d->prev);
    }
}

void mem_add_many(memtable *m, const mem_entry *e, size_t n)
{
    if (n == 1) { /* nothing to overlap with */
        mem_add(m, e->seq, e->type, e->key, e->value);
        return;
    }
    for (size_t i = 0; i < n; i += CHUNK)
        add_chunk(m, e + i, n - i < CHUNK ? n - i : CHUNK);
}

static int get_result(const node *x, int *type, uint64_t *found_seq, slice *value)
{
    uint64_t t = node_trailer(x);
    *type = (int)(t & 0xff);
    *found_seq = t >> 8;
    *value = slice_make(node_value(x), x->vlen);
    return 1;
}

int mem_get(memtable *m, slice key, uint64_t seq, int *type, uint64_t *found_seq, slice *value)
{
    if (seq > ENG_MAX_SEQUENCE) seq = ENG_MAX_SEQUENCE;
    node *x = index_find(m, key, key_hash(key));
    if (!x) return 0; /* M5: key has no point entry here */
    if ((node_trailer(x) >> 8) <= seq) return get_result(x, type, found_seq, value);

    /* A snapshot older than the newest version: descend to its version. */
    x = find_ge(m, key.data, key.size, ikey_pack_trailer(seq, ENG_TYPE_SEEK), NULL);
    for (; x && node_ukey_eq(x, key); x = nx_acquire(x, 0)) {
        if ((int)(node_trailer(x) & 0xff) != ENG_TYPE_RANGE_DELETION) /* point entries only */
            return get_result(x, type, found_seq, value);
    }
    return 0;
}

size_t mem_usage(const memtable *m)
{
    return arena_usage(&m->arena);
}

uint64_t mem_entries(const memtable *m)
{
    return atomic_load_explicit(&((memtable *)m)->entries, memory_order_relaxed);
}

uint64_t mem_range_deletions(const memtable *m)
{
    return atomic_load_explicit(&((memtable *)m)->range_dels, memory_order_relaxed);
}

/* M5, M6 (returning 5 or 6): the index has one slot per user key with a
 * point entry, holding its first point entry, under the right hash. */
static int check_index(memtable *m)
{
    htable *t = atomic_load_explicit(&m->index, memory_order_acquire);
    size_t used = 0, keys = 0;
    for (size_t i = 0; i <= t->mask; i++) {
        uintptr_t s = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!s) continue;
        used++;
        const node *x = slot_node(s);
        if (!slot_tag_eq(s, key_hash(slice_make(x->key, x->klen - 8)))) return 5;
    }
    if (used != m->index_used) return 5;
    if (used * 2 > t->mask + 1) return 6;
    node *last_point = NULL; /* the last point entry seen on level 0 */
    for (node *x = nx_acquire(m->head, 0); x; x = nx_acquire(x, 0)) {
        if ((int)(node_trailer(x) & 0xff) == ENG_TYPE_RANGE_DELETION) continue;
        slice k = slice_make(x->key, x->klen - 8);
        if (last_point && node_ukey_eq(last_point, k)) {
            last_point = x;
            continue;
        }
        last_point = x;
        keys++;
        if (index_find(m, k, key_hash(k)) != x) return 5;
    }
    return keys == used ? 0 : 5;
}

int mem_check(memtable *m)
{
    int max_h = atomic_load_explicit(&m->max_height, memory_order_acquire);
    uint64_t n0 = 0;
    for (int level = 0; level < MAX_HEIGHT; level++) {
        node *prev = NULL, *x = nx_acquire(m->head, level);
        if (level >= max_h && x) return 3; /* M3 */
        for (; x; prev = x, x = nx_acquire(x, level)) {
            if (level == 0) n0++;
            if (level == 0 && x->prev0 != (prev ? prev : m->head)) return 7; /* M7 */
            if (prev && node_cmp(prev, x->key, x->klen - 8, node_trailer(x)) >= 0)
                return 2; /* M2 */
        }
        if (m->tail[level] != (prev ? prev : m->head)) return 4; /* M4 */
    }
    if (n0 != mem_entries(m)) return 1;
    return check_index(m);
}

/* ---- Iterator ------------------------------------------------------------ */

typedef struct mem_iter {
    iter base;
    memtable *m;
    node *cur; /* NULL when not valid */
} mem_iter;

static int mi_valid(const iter *it)
{
    return ((const mem_iter *)it)->cur != NULL;
}

static void mi_seek_first(iter *it)
{
    mem_iter *mi = (mem_iter *)it;
    mi->cur = nx_acquire(mi->m->head, 0);
}

static void mi_seek_last(iter *it)
{
    mem_iter *mi = (mem_iter *)it;
    node *x = find_last(mi->m);
    mi->cur = x == mi->m->head ? NULL : x;
}

static void mi_seek(iter *it, slice target)
{
    mem_iter *mi = (mem_iter *)it;
    if (target.size < 8) { /* not an ikey: position at the first version of that user key */
        mi->cur = find_ge(mi->m, target.data, target.size, UINT64_MAX, NULL);
        return;
    }
    mi->cur = find_ge(mi->m, target.data, target.size - 8, ikey_trailer(target), NULL);
}

static void mi_next(iter *it)
{
    mem_iter *mi = (mem_iter *)it;
    mi->cur = nx_acquire(mi->cur, 0);
}

static void mi_prev(iter *it)
{
    mem_iter *mi = (mem_iter *)it;
    node *c = mi->cur;
    node *x = find_lt(mi->m, c->key, c->klen - 8, dec_fixed64(c->key + c->klen - 8));
    mi->cur = x == mi->m->head ? NULL : x;
}

static slice mi_key(const iter *it)
{
    const node *c = ((const mem_iter *)it)->cur;
    return slice_make(c->key, c->klen);
}

static slice mi_value(const iter *it)
{
    const node *c = ((const mem_iter *)it)->cur;
    return slice_make(node_value(c), c->vlen);
}

static eng_status mi_status(const iter *it)
{
    return ENG_OK;
}

static void mi_destroy(iter *it)
{
    mem_iter *mi = (mem_iter *)it;
    mem_unref(mi->m);
    free(mi);
}

static const struct iter_ops mem_iter_ops = {
    mi_valid, mi_seek_first, mi_seek_last, mi_seek,   mi_next,
    mi_prev,  mi_key,        mi_value,     mi_status, mi_destroy,
};

iter *mem_iter_new(memtable *m)
{
    mem_iter *mi = malloc(sizeof(*mi));
    if (!mi) abort();
    mi->base.ops = &mem_iter_ops;
    mi->m = m;
    mi->cur = NULL;
    mem_ref(m);
    return &mi->base;
}
