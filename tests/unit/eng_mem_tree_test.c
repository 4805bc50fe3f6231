/*
 * eng_mem_tree_test.c -- the memtable's memory and its tree's insert
 * paths (mem_tree.c): what scan-only keys save, how full ascending runs
 * leave the nodes, and what the shortcuts that avoid a descent from the
 * root cost -- the fingers (T9) for keys that arrive in order, the leaf
 * hint (T8) for a new version of a key -- and that they keep the tree's
 * invariants on the way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/arena.h"
#include "engine/dbformat.h"
#include "engine/mem_tree.h"
#include "engine/mem_tree_node.h"
#include "engine/memtable.h"
#include "test.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A tree entry for user key k[0..kl) at sequence seq, in a. */
static mem_ent *ent_new(arena *a, const char *k, size_t kl, uint64_t seq)
{
    mem_ent *e = arena_alloc(a, sizeof(mem_ent) + kl + 8);
    e->klen = (uint32_t)kl + 8;
    e->vlen = 0;
    memcpy(e->data, k, kl);
    enc_fixed64(e->data + kl, ikey_pack_trailer(seq, ENG_TYPE_VALUE));
    return e;
}

/* Inserts n keys "m\001key:<12 digits>" drawn at random below range, with
 * sequences 1..n: random order under one shared prefix. */
static void insert_random_keys(mem_tree *t, arena *a, unsigned n, uint64_t range)
{
    for (unsigned i = 0; i < n; i++) {
        char k[32];
        int kl = snprintf(k, sizeof(k), "m\001key:%012llu", (unsigned long long)(rnd() % range));
        mt_insert(t, ent_new(a, k, (size_t)kl, i + 1), NULL);
    }
}

/* Scan-only keys (memtable.h, M8) get no hash index slot and no leaf
 * hint: the same entries cost at least 24 bytes less each. */
TEST(ScanOnlyKeysCostLessMemory)
{
    enum { N = 50000 };
    mem_scan_only so;
    mem_scan_only_init(&so);
    CHECK_EQ_INT(mem_scan_only_add(&so, "xE", 2), 1);
    memtable *m[2] = {mem_new(), mem_new()};
    mem_set_scan_only(m[1], &so);
    for (int t = 0; t < 2; t++)
        for (unsigned i = 0; i < N; i++) {
            char k[40];
            int kl = snprintf(k, sizeof(k), "xE%08u:field:%u", (unsigned)(rnd() % 100000000), i);
            mem_add(m[t], i + 1, ENG_TYPE_VALUE, slice_make(k, (size_t)kl), slice_make("v", 1));
        }
    CHECK_EQ_INT(mem_check(m[0]), 0);
    CHECK_EQ_INT(mem_check(m[1]), 0);
    CHECK_MSG(mem_usage(m[1]) + (size_t)N * 24 <= mem_usage(m[0]), "usage %zu vs %zu",
              mem_usage(m[1]), mem_usage(m[0]));
    mem_unref(m[0]);
    mem_unref(m[1]);
}

/* Bytes of memtable for n keys of key(i, n, buf) inserted in order i = 0..n-1;
 * scan-only, so that entries and tree nodes are all there is. */
static size_t usage_for(unsigned n, size_t (*key)(unsigned, unsigned, char *))
{
    mem_scan_only so;
    mem_scan_only_init(&so);
    CHECK_EQ_INT(mem_scan_only_add(&so, "x", 1), 1);
    memtable *m = mem_new();
    mem_set_scan_only(m, &so);
    for (unsigned i = 0; i < n; i++) {
        char k[40];
        size_t kl = key(i, n, k);
        mem_add(m, i + 1, ENG_TYPE_VALUE, slice_make(k, kl), slice_make("", 0));
    }
    CHECK_EQ_INT(mem_check(m), 0);
    size_t u = mem_usage(m);
    mem_unref(m);
    return u;
}

/* Four ascending runs, interleaved: index entries whose last field grows,
 * each run appending amid the tree (before the next run's keys). */
static size_t key_interleaved(unsigned i, unsigned n, char *k)
{
    (void)n;
    k[0] = 'x';
    enc_fixed32(k + 1, __builtin_bswap32(i % 4));
    enc_fixed64(k + 5, __builtin_bswap64(i / 4));
    return 13;
}

/* The same keys in key order: every insert at the tree's end. */
static size_t key_sorted(unsigned i, unsigned n, char *k)
{
    unsigned per = n / 4;
    return key_interleaved((i % per) * 4 + i / per, n, k);
}

/* An insert just after the node's previous one splits the node after the
 * new key (mem_tree.c, split_point), so ascending runs amid other keys fill
 * nodes as appends at the end do, instead of leaving them half empty. */
TEST(AscendingRunsAmidOtherKeysFillTreeNodes)
{
    enum { N = 200000 };
    size_t inter = usage_for(N, key_interleaved), sorted = usage_for(N, key_sorted);
    CHECK_MSG(inter <= sorted + (size_t)N * 4, "interleaved %zu vs sorted %zu", inter, sorted);
}

/* Keys that arrive in order (four runs, interleaved) go into the leaf the
 * run's previous key took, through its finger (mem_tree.c, T9): a descent
 * from the root only when that leaf is full. */
TEST(InterleavedAscendingRunsInsertMostlyWithoutDescents)
{
    enum { N = 100000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    for (unsigned i = 0; i < N; i++) {
        char k[40];
        size_t kl = key_interleaved(i, N, k);
        mt_insert(&t, ent_new(&a, k, kl, i + 1), NULL);
    }
    uint64_t n = N;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    CHECK_MSG(t.descents <= N / 8, "%llu descents for %d inserts", (unsigned long long)t.descents,
              N);
    mt_cursor c;
    mt_cursor_init(&c, &t);
    unsigned seen = 0;
    for (const mem_ent *e = mt_first(&c); e; e = mt_next(&c)) {
        char k[40];
        size_t kl = key_sorted(seen++, N, k);
        CHECK(e->klen == kl + 8 && memcmp(e->data, k, kl) == 0);
    }
    CHECK_EQ_INT(seen, N);
    arena_destroy(&a);
}

/* Keys in random order that share their first bytes share a finger that
 * almost never fits (its leaf is rarely the next key's): each failed try
 * costs the writer a miss or two, so after MT_FINGER_TRIES failures in a
 * row the finger rests until a descent lands where the last one did. */
TEST(RandomOrderInsertsRestTheirFinger)
{
    enum { N = 50000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    insert_random_keys(&t, &a, N, 1000000000);
    uint64_t n = N;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    CHECK_MSG(t.finger_tries <= N / 20, "%llu finger tries for %d random inserts",
              (unsigned long long)t.finger_tries, N);
    arena_destroy(&a);
}

/* A run that arrives in order after random keys of its finger: the finger
 * rested during the random keys, and takes up the run again. */
TEST(AscendingRunAfterRandomKeysWakesItsFinger)
{
    enum { N = 20000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    char k[32];
    for (unsigned i = 0; i < N; i++) {
        int kl =
            snprintf(k, sizeof(k), "xE0001:%010llu", (unsigned long long)(rnd() % 10000000000));
        mt_insert(&t, ent_new(&a, k, (size_t)kl, i + 1), NULL);
    }
    uint64_t before = t.descents;
    for (unsigned i = 0; i < N; i++) {
        int kl = snprintf(k, sizeof(k), "xE0001:%010u:", i * 7);
        mt_insert(&t, ent_new(&a, k, (size_t)kl, N + i + 1), NULL);
    }
    uint64_t n = 2 * N;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    CHECK_MSG(t.descents - before <= N / 8, "%llu descents for %d ascending inserts",
              (unsigned long long)(t.descents - before), N);
    arena_destroy(&a);
}

/* The newest version of each of n keys, with the leaf recorded for it. */
typedef struct newest {
    const mem_ent *e;
    struct mt_node *leaf;
} newest;

static unsigned hint_hits; /* updates done through the leaf hint */

/* Inserts a new version of key i (key(i, buf)) through the leaf hint, as
 * mem_add does, falling back to a descent. */
static void update(mem_tree *t, arena *a, newest *v, unsigned i, uint64_t seq,
                   size_t (*key)(unsigned, char *))
{
    char k[64];
    size_t kl = key(i, k);
    mem_ent *e = ent_new(a, k, kl, seq);
    struct mt_node *leaf = NULL;
    if (v[i].e && mt_insert_before(t, e, &leaf, v[i].e, v[i].leaf, 0))
        hint_hits++;
    else
        mt_insert(t, e, &leaf);
    v[i].e = e;
    v[i].leaf = leaf;
}

static size_t key_plain(unsigned i, char *k)
{
    return (size_t)snprintf(k, 64, "m\001key:%08u", i * 2654435761u % 100000000);
}

/* Three keys per group that differ only after 14 shared bytes: a leaf
 * spans groups, so its prefix stops before them (T5) and each group's
 * slots, every version of its three keys, share one disc. */
static size_t key_long(unsigned i, char *k)
{
    return (size_t)snprintf(k, 64, "g%05u:shared-bytes:%u", i / 3, i % 3);
}

/* New versions of keys in random order: the leaf hint finds the previous
 * version's slot by its disc, reading a few slots, instead of comparing
 * every key pointer up to it. */
TEST(UpdateThroughLeafHintReadsFewSlots)
{
    enum { K = 20000, U = 40000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    newest *v = calloc(K, sizeof(*v));
    uint64_t seq = 0;
    for (unsigned i = 0; i < K; i++)
        update(&t, &a, v, i, ++seq, key_plain);
    uint64_t reads = t.hint_reads;
    for (unsigned i = 0; i < U; i++)
        update(&t, &a, v, (unsigned)(rnd() % K), ++seq, key_plain);
    uint64_t n = K + U;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    CHECK_MSG(t.hint_reads - reads <= (uint64_t)U * 3, "%llu slots read for %d updates",
              (unsigned long long)(t.hint_reads - reads), U);
    free(v);
    arena_destroy(&a);
}

/* Updates through the leaf hint where runs of slots share a disc: each
 * goes right before its key's previous version, and every version stays
 * in order and reachable. */
TEST(UpdatesAmidEqualDiscsKeepVersionsOrdered)
{
    enum { K = 5000, U = 30000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    newest *v = calloc(K, sizeof(*v));
    unsigned *versions = calloc(K, sizeof(*versions));
    uint64_t seq = 0;
    hint_hits = 0;
    for (unsigned i = 0; i < K + U; i++) {
        unsigned k = i < K ? i : (unsigned)(rnd() % K);
        update(&t, &a, v, k, ++seq, key_long);
        versions[k]++;
    }
    uint64_t n = K + U;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    /* The rest need a descent: the hinted leaf is full, or the new version
     * would be its first key (it may belong to the leaf before). */
    CHECK_MSG(hint_hits >= U * 3 / 5, "%u of %d updates through the hint", hint_hits, U);
    for (unsigned k = 0; k < K; k++) { /* the newest first, then every older one */
        char key[64];
        size_t kl = key_long(k, key);
        mt_cursor c;
        mt_cursor_init(&c, &t);
        const mem_ent *e = mt_seek(&c, key, kl, UINT64_MAX);
        CHECK(e == v[k].e);
        unsigned seen = 0;
        for (; e && e->klen == kl + 8 && memcmp(e->data, key, kl) == 0; e = mt_next(&c))
            seen++;
        CHECK_EQ_INT(seen, versions[k]);
    }
    free(versions);
    free(v);
    arena_destroy(&a);
}

/* A disc read from an entry with one load into its trailer (T10) is the
 * disc copied byte by byte, at every offset of keys of every length up
 * to 20 bytes, whatever bytes the trailer holds. */
TEST(EntryDiscReadIntoTrailerMatchesCopiedDisc)
{
    char buf[64];
    for (size_t ul = 0; ul <= 20; ul++)
        for (int round = 0; round < 8; round++) {
            for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (char)(rnd() >> 11);
            tkey t = {buf, ul, 0, 1};
            for (size_t off = 0; off <= ul + 1; off++)
                for (unsigned db = MIN_DBYTES; db <= 8; db++) {
                    uint64_t want = disc_at(buf, ul, off) & dmask(db);
                    CHECK(tkey_disc((unsigned)off, db, &t) == want);
                }
        }
}

/* Every node starts on a cache line (arena_alloc_aligned): a leaf of
 * 576 bytes spans 9 lines, not 9 or 10, and no slot straddles two. */
TEST(TreeNodesStartOnCacheLines)
{
    enum { N = 20000 };
    arena a;
    arena_init(&a, 4096, 1u << 16); /* small blocks: many block ends */
    mem_tree t;
    mt_init(&t, &a);
    for (unsigned i = 0; i < N; i++) {
        char k[32];
        int kl = snprintf(k, sizeof(k), "k%llu", (unsigned long long)(rnd() % 1000000007));
        mt_insert(&t, ent_new(&a, k, (size_t)kl, i + 1), NULL);
    }
    uint64_t n = N;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    CHECK_EQ_INT((uintptr_t)atomic_load(&t.root) & 63, 0);
    mt_cursor c;
    mt_cursor_init(&c, &t);
    unsigned leaves = 0;
    const struct mt_node *last = NULL;
    for (const mem_ent *e = mt_first(&c); e; e = mt_next(&c)) {
        if (c.leaf != last) leaves++, last = c.leaf;
        CHECK_EQ_INT((uintptr_t)c.leaf & 63, 0);
    }
    CHECK(leaves > N / 32);
    arena_destroy(&a);
}

/* Aligned allocations amid unaligned ones, at block ends and in blocks of
 * their own, are aligned and never overlap: each is filled with its own
 * byte, and every byte is still there at the end. */
TEST(AlignedAllocationsNeverOverlap)
{
    enum { N = 3000 };
    arena a;
    arena_init(&a, 256, 4096);
    static struct {
        unsigned char *p;
        size_t n;
    } al[2 * N];
    for (unsigned i = 0; i < 2 * N; i++) {
        size_t n = 1 + (size_t)(rnd() % (i % 2 ? 1500 : 200));
        unsigned char *p = i % 2 ? arena_alloc_aligned(&a, n, 64) : arena_alloc(&a, n);
        if (i % 2) CHECK_EQ_INT((uintptr_t)p & 63, 0);
        memset(p, (int)(i & 0xff), n);
        al[i].p = p;
        al[i].n = n;
    }
    for (unsigned i = 0; i < 2 * N; i++)
        for (size_t j = 0; j < al[i].n; j++)
            if (al[i].p[j] != (unsigned char)(i & 0xff)) {
                CHECK_MSG(0, "allocation %u byte %zu overwritten", i, j);
                j = al[i].n, i = 2 * N;
            }
    arena_destroy(&a);
}

/* A leaf search first bounds its slots by the leaf's summary (T11), in
 * the header's line: the bound holds the key's slot, and for a key whose
 * disc's high half no other key of the leaf shares it is one group of
 * slots -- one cache line -- or, for the key that starts a group (whose
 * summary word equals its own), the two groups around it. */
TEST(LeafSummaryBoundsSearchToOneLine)
{
    enum { N = 20000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    insert_random_keys(&t, &a, N, 1000000000000ull);
    uint64_t n = N;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    mt_cursor c;
    mt_cursor_init(&c, &t);
    unsigned bounded = 0, two = 0, looked = 0;
    for (const mem_ent *e = mt_first(&c); e; e = mt_next(&c)) {
        const struct mt_node *leaf = c.leaf;
        uint64_t td = ent_disc(leaf->plen, leaf->dbytes, e);
        unsigned lo = 0, hi = leaf->count;
        leaf_bounds(leaf, td, &lo, &hi);
        CHECK((unsigned)c.idx >= lo && (unsigned)c.idx <= hi);
        looked++;
        bounded += hi - lo <= GROUP;
        two += hi - lo <= 2 * GROUP;
    }
    CHECK_EQ_INT(looked, N);
    CHECK_MSG(bounded >= looked * 7 / 10, "%u of %u searches bounded to one line", bounded, looked);
    CHECK_MSG(two >= looked * 98 / 100, "%u of %u searches bounded to two lines", two, looked);
    arena_destroy(&a);
}

/* Inserts, through mt_prefetch's hints, groups of g keys given by key(i):
 * the writer's own prefetch, then each insert in turn, as mem_add_many
 * does. Returns how many of the n inserts used their hint. */
static uint64_t insert_hinted_groups(mem_tree *t, arena *a, unsigned n, unsigned g,
                                     size_t (*key)(unsigned, char *), uint64_t seq0)
{
    uint64_t before = t->hinted;
    for (unsigned i = 0; i < n; i += g) {
        unsigned c = n - i < g ? n - i : g;
        char k[MT_PREFETCH_MAX][40];
        slice s[MT_PREFETCH_MAX];
        mt_leaf_hint h[MT_PREFETCH_MAX];
        for (unsigned j = 0; j < c; j++)
            s[j] = slice_make(k[j], key(i + j, k[j]));
        mt_prefetch(t, c, s, h);
        for (unsigned j = 0; j < c; j++)
            mt_insert_hinted(t, ent_new(a, s[j].data, s[j].size, seq0 + i + j), NULL, &h[j]);
    }
    return t->hinted - before;
}

static size_t key_random(unsigned i, char *k)
{
    (void)i;
    return (size_t)snprintf(k, 40, "m\001key:%012llu", (unsigned long long)(rnd() % 100000000));
}

/* Keys that land next to each other in one group: the first inserts split
 * the leaf the whole group's hints name, so the later hints are stale. */
static size_t key_adjacent(unsigned i, char *k)
{
    return (size_t)snprintf(k, 40, "m\001key:%012llu", 50000000ull + i);
}

/* A key whose versions already fill leaves, inserted again with lower
 * sequence numbers: its place is past the leaf its newest version's
 * descent reaches, beyond that leaf's upper fence. */
static size_t key_one(unsigned i, char *k)
{
    (void)i;
    return (size_t)snprintf(k, 40, "m\001key:%012llu", 42ull);
}

/* The leaf mt_prefetch's descent found for each key of a group is where
 * its insert goes without a second descent (mt_insert_hinted), unless the
 * leaf changed since (then the version differs) or the key could lie past
 * its upper fence; the tree stays ordered either way (mt_check). */
TEST(PrefetchedLeafHintsSkipTheInsertDescent)
{
    enum { N = 60000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    insert_random_keys(&t, &a, 20000, 100000000);
    uint64_t desc = t.descents, hinted = insert_hinted_groups(&t, &a, N, 32, key_random, 1000000);
    CHECK_MSG(hinted >= N * 8 / 10, "%llu of %d inserts hinted", (unsigned long long)hinted, N);
    CHECK_MSG(t.descents - desc <= N / 5, "%llu descents", (unsigned long long)(t.descents - desc));
    uint64_t n = 20000 + N;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    /* Stale hints: adjacent keys in one group split their leaf. */
    insert_hinted_groups(&t, &a, 3200, 32, key_adjacent, 2000000);
    n = 20000 + N + 3200;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    /* One key's versions over several leaves, then older versions of it:
     * each lands after the newer ones, wherever they reach. */
    insert_hinted_groups(&t, &a, 200, 32, key_one, 3000000);
    insert_hinted_groups(&t, &a, 200, 32, key_one, 1);
    n = 20000 + N + 3200 + 400;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    arena_destroy(&a);
}

/* Appends to 500 collections, in groups of 32 appends to random ones: the
 * subkeys of every collection share their first bytes (one finger for
 * all, as a type's member keys do), and a collection's new last key is
 * often its leaf's last, past the keys the hint's search can see. */
static unsigned append_next[500];
static size_t key_append(unsigned i, char *k)
{
    (void)i;
    unsigned c = (unsigned)(rnd() % 500);
    return (size_t)snprintf(k, 40, "d\001vvvv%04u:%012u", c, append_next[c]++);
}

/* mt_insert_hinted checks a stale or leaf-end hint against the leaf's
 * fences (T9) instead of descending again: only the inserts that split a
 * full leaf descend. */
TEST(AppendsPastTheLeafEndAndStaleHintsSkipTheDescent)
{
    enum { N = 64000 };
    arena a;
    arena_init(&a, 1u << 20, 1u << 20);
    mem_tree t;
    mt_init(&t, &a);
    memset(append_next, 0, sizeof(append_next));
    uint64_t desc = t.descents, hinted = insert_hinted_groups(&t, &a, N, 32, key_append, 1);
    CHECK_MSG(t.descents - desc <= N / 16, "%llu descents, %llu hinted",
              (unsigned long long)(t.descents - desc), (unsigned long long)hinted);
    /* Stale hints: one collection's appends in one group. */
    desc = t.descents;
    insert_hinted_groups(&t, &a, 3200, 32, key_adjacent, 2000000);
    CHECK_MSG(t.descents - desc <= 3200 / 8, "%llu descents of adjacent keys",
              (unsigned long long)(t.descents - desc));
    uint64_t n = N + 3200;
    CHECK_EQ_INT(mt_check(&t, &n), 0);
    arena_destroy(&a);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
