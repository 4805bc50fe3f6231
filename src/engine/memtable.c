/*
 * memtable.c -- the memtable (memtable.h): entries in an arena, ordered by a
 * B+tree (mem_tree.c), with a hash index for point lookups.
 *
 * Layout: each entry is one arena allocation, a mem_ent (mem_tree.h),
 * preceded by the leaf hint (T8 of mem_tree.c) only when it goes into the
 * point index:
 *
 *   [leaf hint (pointer)] | ikey length (u32) | value length (u32) | ikey | value
 *
 * The hint finds where a new version of the key goes (mt_insert_before);
 * entries that never get a slot (range deletions, scan-only keys) need none.
 *
 * Entries are never modified or freed before the whole memtable is. The
 * tree orders them (Invariant K1); it holds only pointers.
 *
 * Point index: beside the tree, an open-addressing hash table (linear
 * probing, 8-byte slots of entry pointer and XXH3 hash tag, in the arena)
 * maps each user key to its newest point entry (VALUE or DELETION; range
 * deletions are not indexed). mem_get answers a miss, and a read at or
 * above the newest version's sequence, with one probe instead of a tree
 * descent; an older snapshot read descends the tree.
 *
 * Invariants:
 *   M1. (memtable.h) One writer; readers lock-free. An entry is complete
 *       before it is published, in the tree (Invariant T1 of mem_tree.c) or
 *       in the index (M5).
 *   M5. The index holds exactly one slot per user key that has a point
 *       entry, pointing at that key's first point entry in K1 order (its
 *       newest). A slot (entry pointer and hash tag in one word) is filled
 *       with a release store; slots are never emptied, and a slot's entry is
 *       only replaced (release store) by a newer version of the same key,
 *       after that version is in the tree. So a reader that finds an entry
 *       through the index sees it complete, and an iterator or older-
 *       snapshot read started after that sees it in the tree.
 *       Scan-only keys (M8) are the exception: they need no slot, and a slot
 *       a scan-only key got before its prefix was registered may be stale.
 *   M6. The table is at most half full. It grows by filling a table twice
 *       the size and publishing it with a release store; older tables stay
 *       in the arena (readers may still be probing them) until the memtable
 *       is reset or freed, and are never written again.
 *   M8. A key with a prefix in m->scan_only (memtable.h) goes into the tree
 *       only, and mem_get always finds it by a tree descent, never through
 *       the index. Prefixes are only added, so a key that was scan-only when
 *       a version of it was inserted is scan-only at every later read; a
 *       reader whose sequence covers a write also sees every prefix added
 *       before that write (the write's publication orders them), so it
 *       never trusts a slot that misses a newer scan-only version.
 *   M9. Every entry in the index (M5) was allocated with a leaf hint before
 *       it (T8); other entries have none.
 *  M10. While m->replace is set, a new version of a key the index has takes
 *       the tree slot of the key's newest entry (mt_insert_before) instead of a
 *       slot of its own before it; the older entry leaves the tree (it
 *       stays in the arena, so a reader holding it still reads it whole)
 *       and m->entries counts slots, not versions. K1 holds: the newer
 *       version sorts right before the older, after everything the older
 *       came after. Only the reads M5 promises an older version to -- an
 *       older snapshot's, an iterator's, a read racing the write -- could
 *       miss it, and the owner sets replace only while none can happen
 *       (db_write.c: no snapshot, no iterator, inplace_updates' contract).
 *       A flush keeps a key's newest version only in that state anyway
 *       (F1), so the table written is the same.
 * (M2-M4 and M7 described the skiplist this replaced; the tree's own
 * invariants are T1-T11.)
 */
#include "memtable.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "arena.h"
#include "dbformat.h"
#include "mem_tree.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define BLOCK_SIZE (1u << 20)
#define INDEX_FIRST_SLOTS 16 /* tiny: an indexed batch's memtable holds a few keys */

/* An index slot: an entry pointer with the top 16 bits of its key's hash in
 * the pointer's unused top 16 bits (user-space addresses on the x86-64 and
 * AArch64 Linux hosts we build for are below 2^48; new_entry checks), so a
 * probe past a colliding key rarely dereferences its entry. 0 is empty. */
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
    mem_tree tree;
    _Atomic int refs;
    _Atomic uint64_t entries;
    _Atomic uint64_t range_dels;
    _Atomic(htable *) index;        /* M5, M6 */
    size_t index_used;              /* filled slots of index: writer-only */
    const mem_scan_only *scan_only; /* M8; NULL: none */
    int replace;                    /* M10: writer-only */
};

static inline int ent_ukey_eq(const mem_ent *x, slice key)
{
    return x->klen - 8 == key.size && (key.size == 0 || memcmp(x->data, key.data, key.size) == 0);
}

static inline uint64_t key_hash(slice key)
{
    return XXH3_64bits(key.data, key.size);
}

/* ---- Scan-only prefixes (M8) ---------------------------------------------- */

void mem_scan_only_init(mem_scan_only *s)
{
    memset(s, 0, sizeof(*s));
}

/* The first 16 bytes of key as two words, zero past its end. */
static inline void load16(slice key, uint64_t w[2])
{
    if (key.size >= 16) {
        memcpy(w, key.data, 16);
        return;
    }
    char b[16] = {0};
    memcpy(b, key.data, key.size);
    memcpy(w, b, 16);
}

/* Called for every write and point read: a key whose first byte starts no
 * prefix (every keyspace key, usually) costs two loads. */
static inline int scan_only(const mem_scan_only *s, slice key)
{
    if (!s || !key.size) return 0;
    unsigned char c = (unsigned char)key.data[0];
    /* The bit is set after the prefix is published: seeing it (acquire)
     * means seeing the prefix; not yet seeing it is as if it came later. */
    uint64_t bits =
        atomic_load_explicit(&((mem_scan_only *)s)->first[c >> 6], memory_order_acquire);
    if (!(bits >> (c & 63) & 1)) return 0;
    uint32_t n = atomic_load_explicit(&((mem_scan_only *)s)->n, memory_order_relaxed);
    uint64_t w[2];
    load16(key, w);
    for (uint32_t i = 0; i < n; i++)
        if (key.size >= s->p[i].len && (w[0] & s->p[i].mask[0]) == s->p[i].w[0] &&
            (w[1] & s->p[i].mask[1]) == s->p[i].w[1])
            return 1;
    return 0;
}

int mem_scan_only_match(const mem_scan_only *s, slice key)
{
    return scan_only(s, key);
}

int mem_scan_only_add(mem_scan_only *s, const char *p, size_t n)
{
    if (n && scan_only(s, slice_make(p, n))) return 1;
    uint32_t i = atomic_load_explicit(&s->n, memory_order_relaxed);
    if (n == 0 || n > MEM_SCAN_ONLY_LEN || i == MEM_SCAN_ONLY_MAX) return 0;
    char m[16] = {0};
    memset(m, 0xff, n);
    load16(slice_make(p, n), s->p[i].w);
    memcpy(s->p[i].mask, m, 16);
    s->p[i].len = n;
    unsigned char c = (unsigned char)p[0];
    /* Published before its first-byte bit, which readers test first. */
    atomic_store_explicit(&s->n, i + 1, memory_order_release);
    atomic_fetch_or_explicit(&s->first[c >> 6], UINT64_C(1) << (c & 63), memory_order_release);
    return 1;
}

void mem_set_scan_only(memtable *m, const mem_scan_only *s)
{
    m->scan_only = s;
}

/* ---- Point index (M5, M6) ------------------------------------------------ */

static htable *index_alloc(memtable *m, size_t slots)
{
    htable *t = arena_alloc(&m->arena, sizeof(htable) + slots * sizeof(hslot));
    t->mask = slots - 1;
    memset(t->slots, 0, slots * sizeof(hslot)); /* before publication: plain stores */
    return t;
}

static inline uintptr_t slot_make(const mem_ent *x, uint64_t h)
{
    return (uintptr_t)x | (uintptr_t)(h >> TAG_SHIFT) << TAG_SHIFT;
}

static inline const mem_ent *slot_ent(uintptr_t s)
{
    return (const mem_ent *)(s & PTR_MASK);
}

static inline int slot_tag_eq(uintptr_t s, uint64_t h)
{
    return (s >> TAG_SHIFT) == (h >> TAG_SHIFT);
}

/* Returns key's newest point entry per the table the reader sees, or NULL.
 * The home slot is chosen by the low bits of h, the tag is its top bits. */
static const mem_ent *index_find(memtable *m, slice key, uint64_t h)
{
    htable *t = atomic_load_explicit(&m->index, memory_order_acquire);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t s = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!s) return NULL; /* M6: there is always an empty slot */
        if (slot_tag_eq(s, h) && ent_ukey_eq(slot_ent(s), key)) return slot_ent(s);
    }
}

/* Writer: the slot for key in the current table, holding its entry or empty. */
static inline hslot *index_slot(memtable *m, slice key, uint64_t h)
{
    htable *t = atomic_load_explicit(&m->index, memory_order_relaxed);
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        uintptr_t s = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (!s || (slot_tag_eq(s, h) && ent_ukey_eq(slot_ent(s), key))) return &t->slots[i];
    }
}

/* Writer: a table twice the size with the same entries, published (M6).
 * Rehashing reads each indexed key again: at most two entry reads per key
 * over the memtable's life, prefetched. */
static void index_grow(memtable *m)
{
    htable *old = atomic_load_explicit(&m->index, memory_order_relaxed);
    htable *t = index_alloc(m, (old->mask + 1) * 2);
    for (size_t i = 0; i <= old->mask; i++) {
        /* The entries are independent cache misses: overlap them. */
        if (i + 16 <= old->mask)
            __builtin_prefetch(
                slot_ent(atomic_load_explicit(&old->slots[i + 16], memory_order_relaxed)));
        uintptr_t s = atomic_load_explicit(&old->slots[i], memory_order_relaxed);
        if (!s) continue;
        size_t j = key_hash(ment_ukey(slot_ent(s))) & t->mask;
        while (atomic_load_explicit(&t->slots[j], memory_order_relaxed))
            j = (j + 1) & t->mask;
        atomic_store_explicit(&t->slots[j], s, memory_order_relaxed);
    }
    atomic_store_explicit(&m->index, t, memory_order_release);
}

/* Writer: records x, already in the tree (M5), in slot s of the current
 * table -- which held cur, 0 or x's key's newest point entry -- if x is
 * newer. */
static void index_put(memtable *m, hslot *s, uintptr_t cur, uint64_t h, const mem_ent *x)
{
    if (cur) {
        if (ment_trailer(x) > ment_trailer(slot_ent(cur)))
            atomic_store_explicit(s, slot_make(x, h), memory_order_release);
        return;
    }
    atomic_store_explicit(s, slot_make(x, h), memory_order_release);
    htable *t = atomic_load_explicit(&m->index, memory_order_relaxed);
    if (++m->index_used * 2 > t->mask + 1) index_grow(m);
}

/* ---- Life cycle ----------------------------------------------------------- */

static void init_empty(memtable *m)
{
    mt_init(&m->tree, &m->arena);
    atomic_store_explicit(&m->index, index_alloc(m, INDEX_FIRST_SLOTS), memory_order_release);
    m->index_used = 0;
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
    m->scan_only = NULL;
    m->replace = 0;
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

/* ---- Writes ---------------------------------------------------------------- */

/* The leaf hint before x. REQUIRES: x was allocated with one (M9). */
static inline struct mt_node **ent_hint(const mem_ent *x)
{
    return (struct mt_node **)x - 1;
}

/* An entry holding (key, trailer) -> value, not yet in the tree; with a
 * leaf hint before it when hinted (M9). */
static mem_ent *new_entry(memtable *m, slice key, uint64_t trailer, slice value, int hinted)
{
    uint32_t klen = (uint32_t)key.size + 8, vlen = (uint32_t)value.size;
    size_t pre = hinted ? sizeof(struct mt_node *) : 0;
    mem_ent *x =
        (mem_ent *)((char *)arena_alloc(&m->arena, pre + sizeof(mem_ent) + klen + vlen) + pre);
    if ((uintptr_t)x & ~PTR_MASK) {
        fprintf(stderr,
                "strata: memtable entry above 2^48 (%p): index tags need 48-bit addresses\n",
                (void *)x);
        abort();
    }
    x->klen = klen;
    x->vlen = vlen;
    if (key.size) memcpy(x->data, key.data, key.size);
    enc_fixed64(x->data + key.size, trailer);
    if (vlen) memcpy(x->data + klen, value.data, vlen);
    return x;
}

/* mem_add with key's hash given when hash is not NULL (mem_add_many's
 * prefetch computed it), else computed here where it is needed; and the
 * leaf that prefetch's descent reached for key, when hint is not NULL. */
static void add(memtable *m, uint64_t seq, int type, slice key, slice value, const uint64_t *hash,
                const mt_leaf_hint *hint)
{
    uint64_t trailer = ikey_pack_trailer(seq, type);
    int rd = type == ENG_TYPE_RANGE_DELETION;
    if (rd || scan_only(m->scan_only, key)) { /* M8: the tree only */
        mt_insert_hinted(&m->tree, new_entry(m, key, trailer, value, 0), NULL, hint); /* M1 */
        atomic_fetch_add_explicit(&m->entries, 1, memory_order_relaxed);
        if (rd) atomic_fetch_add_explicit(&m->range_dels, 1, memory_order_relaxed);
        return;
    }
    mem_ent *x = new_entry(m, key, trailer, value, 1);
    uint64_t h = hash ? *hash : key_hash(key);
    hslot *s = index_slot(m, key, h);
    uintptr_t cur = atomic_load_explicit(s, memory_order_relaxed);
    /* A new version of a key this memtable has goes right before its
     * newest one, or replaces it (M10): found through that entry's leaf,
     * not from the root. */
    int put = 0;
    if (cur && ment_trailer(x) > ment_trailer(slot_ent(cur)))
        put = mt_insert_before(&m->tree, x, ent_hint(x), slot_ent(cur), *ent_hint(slot_ent(cur)),
                               m->replace);
    if (!put) mt_insert_hinted(&m->tree, x, ent_hint(x), hint); /* M1: complete before published */
    if (put != MT_REPLACED) atomic_fetch_add_explicit(&m->entries, 1, memory_order_relaxed);
    index_put(m, s, cur, h, x); /* M5: after the tree */
}

void mem_set_replace(memtable *m, int on)
{
    m->replace = on;
}

void mem_add(memtable *m, uint64_t seq, int type, slice key, slice value)
{
    add(m, seq, type, key, value, NULL, NULL);
}

/* What inserting e[0..n) (at most MT_PREFETCH_MAX) will read, started
 * together so that the entries' cache misses overlap: each key's index
 * slot; then, for a key the memtable has, its newest entry and from it the
 * leaf that entry's hint names (mt_insert_before), and for the others
 * their tree paths (mt_prefetch), level by level. The keys' hashes are
 * left in h[0..n) for the inserts, and in hints[0..n) the leaf each
 * path ended in (none for a key the memtable has), so that the insert
 * need not descend again (mt_insert_hinted). */
static void prefetch_inserts(memtable *m, const mem_entry *e, size_t n, uint64_t *h,
                             mt_leaf_hint *hints)
{
    const mem_ent *cur[MT_PREFETCH_MAX];
    slice fresh[MT_PREFETCH_MAX];
    mt_leaf_hint found[MT_PREFETCH_MAX];
    size_t nf = 0, at[MT_PREFETCH_MAX];
    htable *t = atomic_load_explicit(&m->index, memory_order_relaxed);
    for (size_t i = 0; i < n; i++) {
        h[i] = key_hash(e[i].key);
        __builtin_prefetch(&t->slots[h[i] & t->mask]);
    }
    for (size_t i = 0; i < n; i++) {
        uintptr_t s = atomic_load_explicit(&t->slots[h[i] & t->mask], memory_order_relaxed);
        cur[i] = s && slot_tag_eq(s, h[i]) ? slot_ent(s) : NULL;
        if (cur[i])
            __builtin_prefetch(ent_hint(cur[i])); /* the hint and the entry's key */
        else if (e[i].type != ENG_TYPE_RANGE_DELETION)
            at[nf] = i, fresh[nf++] = e[i].key;
        hints[i].leaf = NULL;
    }
    mt_prefetch(&m->tree, nf, fresh, found); /* M1: this is the writer */
    for (size_t i = 0; i < nf; i++)
        hints[at[i]] = found[i];
    for (size_t i = 0; i < n; i++)
        if (cur[i]) mt_prefetch_leaf(*ent_hint(cur[i]));
}

void mem_add_many(memtable *m, const mem_entry *e, size_t n)
{
    for (size_t at = 0; at < n; at += MT_PREFETCH_MAX) {
        size_t c = n - at < MT_PREFETCH_MAX ? n - at : MT_PREFETCH_MAX;
        uint64_t h[MT_PREFETCH_MAX];
        mt_leaf_hint hints[MT_PREFETCH_MAX];
        if (c == 1) {
            mem_add(m, e[at].seq, e[at].type, e[at].key, e[at].value);
            continue;
        }
        prefetch_inserts(m, e + at, c, h, hints);
        for (size_t i = 0; i < c; i++)
            add(m, e[at + i].seq, e[at + i].type, e[at + i].key, e[at + i].value, &h[i], &hints[i]);
    }
}

/* ---- Reads ----------------------------------------------------------------- */

static int get_result(const mem_ent *x, int *type, uint64_t *found_seq, slice *value)
{
    uint64_t t = ment_trailer(x);
    *type = (int)(t & 0xff);
    *found_seq = t >> 8;
    *value = ment_value(x);
    return 1;
}

uint64_t mem_key_hash(slice key)
{
    return key_hash(key);
}

void mem_prefetch(memtable *m, uint64_t hash)
{
    htable *t = atomic_load_explicit(&m->index, memory_order_acquire);
    __builtin_prefetch(&t->slots[hash & t->mask]);
}

_Static_assert(MEM_PREFETCH_MAX <= MT_PREFETCH_MAX, "mt_prefetch follows every key");

void mem_prefetch_keys(memtable *m, size_t n, const slice *keys, size_t nw, const slice *w)
{
    uint64_t h[MEM_PREFETCH_MAX];
    if (n > MEM_PREFETCH_MAX) n = MEM_PREFETCH_MAX;
    htable *t = atomic_load_explicit(&m->index, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        h[i] = key_hash(keys[i]);
        __builtin_prefetch(&t->slots[h[i] & t->mask]);
    }
    if (nw) mt_prefetch(&m->tree, nw, w, NULL); /* meanwhile the slots arrive */
    for (size_t i = 0; i < n; i++) {
        uintptr_t s = atomic_load_explicit(&t->slots[h[i] & t->mask], memory_order_acquire);
        if (s && slot_tag_eq(s, h[i])) __builtin_prefetch(slot_ent(s));
    }
}

int mem_get(memtable *m, slice key, uint64_t seq, int *type, uint64_t *found_seq, slice *value)
{
    return mem_get_hashed(m, key, key_hash(key), seq, type, found_seq, value);
}

/* key's newest point entry with sequence <= seq, by a tree descent. */
static int tree_get(memtable *m, slice key, uint64_t seq, int *type, uint64_t *found_seq,
                    slice *value)
{
    mt_cursor c;
    mt_cursor_init(&c, &m->tree);
    for (const mem_ent *x = mt_seek(&c, key.data, key.size, ikey_pack_trailer(seq, ENG_TYPE_SEEK));
         x && ent_ukey_eq(x, key); x = mt_next(&c)) {
        if ((int)(ment_trailer(x) & 0xff) != ENG_TYPE_RANGE_DELETION) /* point entries only */
            return get_result(x, type, found_seq, value);
    }
    return 0;
}

int mem_get_hashed(memtable *m, slice key, uint64_t hash, uint64_t seq, int *type,
                   uint64_t *found_seq, slice *value)
{
    if (seq > ENG_MAX_SEQUENCE) seq = ENG_MAX_SEQUENCE;
    /* M8: not in the index; the tree has it */
    if (scan_only(m->scan_only, key)) return tree_get(m, key, seq, type, found_seq, value);
    const mem_ent *x = index_find(m, key, hash);
    if (!x) return 0; /* M5: key has no point entry here */
    if ((ment_trailer(x) >> 8) <= seq) return get_result(x, type, found_seq, value);
    /* A snapshot older than the newest version: descend to its version. */
    return tree_get(m, key, seq, type, found_seq, value);
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

/* ---- Checker --------------------------------------------------------------- */

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
        if (!slot_tag_eq(s, key_hash(ment_ukey(slot_ent(s))))) return 5;
        if (scan_only(m->scan_only, ment_ukey(slot_ent(s))))
            keys++; /* M8: a slot from before its prefix was added; never read */
    }
    if (used != m->index_used) return 5;
    if (used * 2 > t->mask + 1) return 6;
    const mem_ent *last_point = NULL; /* the last point entry seen in order */
    mt_cursor c;
    mt_cursor_init(&c, &m->tree);
    for (const mem_ent *x = mt_first(&c); x; x = mt_next(&c)) {
        if ((int)(ment_trailer(x) & 0xff) == ENG_TYPE_RANGE_DELETION) continue;
        slice k = ment_ukey(x);
        if (last_point && ent_ukey_eq(last_point, k)) {
            last_point = x;
            continue;
        }
        last_point = x;
        if (scan_only(m->scan_only, k)) continue; /* M8 */
        keys++;
        if (index_find(m, k, key_hash(k)) != x) return 5;
    }
    return keys == used ? 0 : 5;
}

int mem_check(memtable *m)
{
    uint64_t n = mem_entries(m);
    int r = mt_check(&m->tree, &n);
    if (r) return r == 1 ? 1 : 10 + r; /* tree invariants T2.. as 12.. */
    return check_index(m);
}

/* ---- Iterator ---------------------------------------------------------------- */

typedef struct mem_iter {
    iter base;
    memtable *m;
    mt_cursor c; /* c.cur NULL when not valid */
} mem_iter;

static int mi_valid(const iter *it)
{
    return ((const mem_iter *)it)->c.cur != NULL;
}

static void mi_seek_first(iter *it)
{
    mt_first(&((mem_iter *)it)->c);
}

static void mi_seek_last(iter *it)
{
    mt_last(&((mem_iter *)it)->c);
}

static void mi_seek(iter *it, slice target)
{
    mem_iter *mi = (mem_iter *)it;
    if (target.size < 8) { /* not an ikey: position at the first version of that user key */
        mt_seek(&mi->c, target.data, target.size, UINT64_MAX);
        return;
    }
    mt_seek(&mi->c, target.data, target.size - 8, ikey_trailer(target));
}

static void mi_next(iter *it)
{
    mt_next(&((mem_iter *)it)->c);
}

static void mi_prev(iter *it)
{
    mt_prev(&((mem_iter *)it)->c);
}

static slice mi_key(const iter *it)
{
    const mem_ent *c = ((const mem_iter *)it)->c.cur;
    return slice_make(c->data, c->klen);
}

static slice mi_value(const iter *it)
{
    return ment_value(((const mem_iter *)it)->c.cur);
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
    mt_cursor_init(&mi->c, &m->tree);
    mem_ref(m);
    return &mi->base;
}
