/*
 * eng_memtable_test.c -- the memtable against a sorted model:
 * ordering of versions, point lookups at snapshots (through the hash index
 * when the newest version is visible, through the tree for older
 * snapshots), iterator movement, and reader threads running concurrently
 * with the writer while the index grows (Invariant M1).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "engine/dbformat.h"
#include "engine/mem_tree.h"
#include "engine/memtable.h"
#include "test.h"

/* ---- Model: an array of entries sorted by ikey_compare ------------------- */

typedef struct ment {
    char ikey[40];
    size_t iklen;
    char val[64];
    size_t vlen;
} ment;

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int ment_cmp(const void *a, const void *b)
{
    const ment *x = a, *y = b;
    return ikey_compare(slice_make(x->ikey, x->iklen), slice_make(y->ikey, y->iklen));
}

static void make_key(char *k, size_t *kl, unsigned id)
{
    /* Varied lengths and shared prefixes, to exercise the shorter-first rule. */
    *kl = (size_t)snprintf(k, 24, "k%0*u", (int)(id % 5), id % 97);
}

static void fill_model(memtable *m, ment *model, int n, unsigned keyspace)
{
    for (int i = 0; i < n; i++) {
        ment *e = &model[i];
        char k[24];
        size_t kl;
        make_key(k, &kl, (unsigned)(rnd() % keyspace));
        uint64_t seq = (uint64_t)i + 1;
        int r = (int)(rnd() % 10);
        int type = r < 7 ? ENG_TYPE_VALUE : r < 9 ? ENG_TYPE_DELETION : ENG_TYPE_RANGE_DELETION;
        memcpy(e->ikey, k, kl);
        enc_fixed64(e->ikey + kl, ikey_pack_trailer(seq, type));
        e->iklen = kl + 8;
        e->vlen =
            type == ENG_TYPE_DELETION
                ? 0
                : (size_t)snprintf(e->val, 64, "v%llu-%.*s", (unsigned long long)seq,
                                   (int)(rnd() % 40), "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv");
        mem_add(m, seq, type, slice_make(k, kl), slice_make(e->val, e->vlen));
    }
    qsort(model, (size_t)n, sizeof(ment), ment_cmp);
}

static void check_at(const iter *it, const ment *e)
{
    CHECK(iter_valid(it));
    slice k = iter_key(it), v = iter_value(it);
    CHECK(k.size == e->iklen && memcmp(k.data, e->ikey, k.size) == 0);
    CHECK(v.size == e->vlen && memcmp(v.data, e->val, v.size) == 0);
}

TEST(RandomInsertsMatchSortedModel)
{
    int n = 5000;
    ment *model = calloc((size_t)n, sizeof(ment));
    memtable *m = mem_new();
    fill_model(m, model, n, 300);
    CHECK_EQ_INT(mem_entries(m), n);
    CHECK_EQ_INT(mem_check(m), 0);
    iter *it = mem_iter_new(m);
    iter_seek_first(it);
    for (int i = 0; i < n; i++, iter_next(it))
        check_at(it, &model[i]);
    CHECK(!iter_valid(it));
    iter_seek_last(it);
    for (int i = n - 1; i >= 0; i--, iter_prev(it))
        check_at(it, &model[i]);
    CHECK(!iter_valid(it));
    CHECK_EQ_INT(iter_status(it), ENG_OK);
    iter_free(it);
    uint64_t rd = 0;
    for (int i = 0; i < n; i++)
        rd += ikey_type(slice_make(model[i].ikey, model[i].iklen)) == 2;
    CHECK_EQ_INT(mem_range_deletions(m), rd);
    mem_unref(m);
    free(model);
}

TEST(GetReturnsNewestVersionAtOrBelowSequence)
{
    int n = 3000;
    ment *model = calloc((size_t)n, sizeof(ment));
    memtable *m = mem_new();
    fill_model(m, model, n, 150);
    for (int q = 0; q < 5000; q++) {
        char k[24];
        size_t kl;
        make_key(k, &kl, (unsigned)(rnd() % 160)); /* some keys never written */
        uint64_t seq = rnd() % (uint64_t)(n + 10);
        /* Model answer: the first point entry for k with seq' <= seq. */
        const ment *want = NULL;
        for (int i = 0; i < n && !want; i++) {
            slice ik = slice_make(model[i].ikey, model[i].iklen);
            if (slice_compare(ikey_user_key(ik), slice_make(k, kl)) != 0) continue;
            if (ikey_sequence(ik) > seq || ikey_type(ik) == ENG_TYPE_RANGE_DELETION) continue;
            want = &model[i];
        }
        int type = -1;
        uint64_t fseq = 0;
        slice v;
        int found = mem_get(m, slice_make(k, kl), seq, &type, &fseq, &v);
        CHECK_EQ_INT(found, want != NULL);
        if (!want) continue;
        slice wk = slice_make(want->ikey, want->iklen);
        CHECK_EQ_INT(type, ikey_type(wk));
        CHECK_EQ_INT(fseq, ikey_sequence(wk));
        CHECK(v.size == want->vlen && memcmp(v.data, want->val, v.size) == 0);
    }
    mem_unref(m);
    free(model);
}

TEST(RangeDeletionIsNotAPointEntry)
{
    memtable *m = mem_new();
    mem_add(m, 1, ENG_TYPE_VALUE, slice_make("a", 1), slice_make("old", 3));
    mem_add(m, 2, ENG_TYPE_RANGE_DELETION, slice_make("a", 1), slice_make("z", 1));
    int type;
    uint64_t seq;
    slice v;
    CHECK_EQ_INT(mem_get(m, slice_make("a", 1), 5, &type, &seq, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_VALUE);
    CHECK_EQ_INT(seq, 1);
    CHECK_EQ_INT(mem_get(m, slice_make("b", 1), 5, &type, &seq, &v), 0);
    CHECK_EQ_INT(mem_range_deletions(m), 1);
    iter *it = mem_iter_new(m);
    iter_seek_first(it);
    CHECK_EQ_INT(ikey_type(iter_key(it)), ENG_TYPE_RANGE_DELETION);
    CHECK_MEM(iter_value(it).data, iter_value(it).size, "z");
    iter_free(it);
    mem_unref(m);
}

TEST(SeekNextPrevMatchModel)
{
    int n = 4000;
    ment *model = calloc((size_t)n, sizeof(ment));
    memtable *m = mem_new();
    fill_model(m, model, n, 400);
    iter *it = mem_iter_new(m);
    for (int q = 0; q < 3000; q++) {
        char t[40];
        size_t kl;
        make_key(t, &kl, (unsigned)(rnd() % 420));
        uint64_t seq = rnd() % (uint64_t)(n + 5);
        enc_fixed64(t + kl, ikey_pack_trailer(seq, (int)(rnd() % 3)));
        slice target = slice_make(t, kl + 8);
        int lo = 0, hi = n; /* lower bound */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (ikey_compare(slice_make(model[mid].ikey, model[mid].iklen), target) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        iter_seek(it, target);
        if (lo == n) {
            CHECK(!iter_valid(it));
            continue;
        }
        check_at(it, &model[lo]);
        int steps = (int)(rnd() % 6), pos = lo;
        for (int s = 0; s < steps; s++) {
            if (rnd() & 1) {
                iter_next(it);
                pos++;
            } else {
                iter_prev(it);
                pos--;
            }
            if (pos < 0 || pos >= n) {
                CHECK(!iter_valid(it));
                break;
            }
            check_at(it, &model[pos]);
        }
    }
    iter_free(it);
    mem_unref(m);
    free(model);
}

TEST(AscendingInsertsWithOccasionalOlderKeysMatchModel)
{
    /* Mostly ascending keys (the append fast path) mixed with keys that land
     * in the middle, new versions of the last key, and equal user keys with
     * lower sequence numbers; then every seek must agree with the model. */
    int n = 6000;
    ment *model = calloc((size_t)n, sizeof(ment));
    memtable *m = mem_new();
    for (int i = 0; i < n; i++) {
        ment *e = &model[i];
        unsigned id = (unsigned)i;
        uint64_t r = rnd() % 10;
        if (r == 0) id = (unsigned)(rnd() % (unsigned)(i + 1)); /* somewhere earlier */
        if (r == 1 && i > 0) id = (unsigned)(i - 1);            /* same key as last */
        size_t kl = (size_t)snprintf(e->ikey, 24, "key%08u", id);
        uint64_t seq = r == 2 ? (uint64_t)i + 1 : (uint64_t)(n + i + 1);
        enc_fixed64(e->ikey + kl, ikey_pack_trailer(seq, ENG_TYPE_VALUE));
        e->iklen = kl + 8;
        e->vlen = (size_t)snprintf(e->val, 64, "v%d", i);
        mem_add(m, seq, ENG_TYPE_VALUE, slice_make(e->ikey, kl), slice_make(e->val, e->vlen));
    }
    qsort(model, (size_t)n, sizeof(ment), ment_cmp);
    CHECK_EQ_INT(mem_check(m), 0);
    iter *it = mem_iter_new(m);
    iter_seek_first(it);
    for (int i = 0; i < n; i++, iter_next(it))
        check_at(it, &model[i]);
    CHECK(!iter_valid(it));
    iter_seek_last(it);
    for (int i = n - 1; i >= 0; i--, iter_prev(it))
        check_at(it, &model[i]);
    for (int i = 0; i < n; i += 3) {
        iter_seek(it, slice_make(model[i].ikey, model[i].iklen));
        check_at(it, &model[i]);
    }
    iter_free(it);
    mem_unref(m);
    free(model);
}

TEST(EmptyMemtableIteratesNothing)
{
    memtable *m = mem_new();
    iter *it = mem_iter_new(m);
    iter_seek_first(it);
    CHECK(!iter_valid(it));
    iter_seek_last(it);
    CHECK(!iter_valid(it));
    iter_seek(it, slice_make("abcdefghij", 10));
    CHECK(!iter_valid(it));
    int type;
    uint64_t seq;
    slice v;
    CHECK_EQ_INT(mem_get(m, slice_make("", 0), ENG_MAX_SEQUENCE, &type, &seq, &v), 0);
    mem_unref(m); /* the iterator still holds a reference */
    iter_free(it);
}

TEST(ResetEmptiesAndKeepsOneBlock)
{
    memtable *m = mem_new_sized(4096);
    char v[1000];
    memset(v, 'v', sizeof(v));
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 100; i++) {
            char k[16];
            int kl = snprintf(k, sizeof(k), "key%03d", i);
            mem_add(m, (uint64_t)i + 1, ENG_TYPE_VALUE, slice_make(k, (size_t)kl),
                    slice_make(v, (size_t)(i * 9)));
        }
        CHECK_EQ_INT(mem_entries(m), 100);
        CHECK_EQ_INT(mem_check(m), 0);
        CHECK_EQ_INT(mem_refs(m), 1);
        mem_reset(m);
        CHECK_EQ_INT(mem_entries(m), 0);
        CHECK_EQ_INT(mem_check(m), 0);
        CHECK(mem_usage(m) <= (1u << 20) + 64);
        int type;
        uint64_t seq;
        slice val;
        CHECK_EQ_INT(mem_get(m, slice_make("key001", 6), 1000, &type, &seq, &val), 0);
    }
    mem_add(m, 7, ENG_TYPE_VALUE, slice_make("k", 1), slice_make("x", 1));
    int type;
    uint64_t seq;
    slice val;
    CHECK_EQ_INT(mem_get(m, slice_make("k", 1), 7, &type, &seq, &val), 1);
    CHECK_EQ_INT(mem_get(m, slice_make("k", 1), 6, &type, &seq, &val), 0);
    mem_unref(m);
}

TEST(LargeValuesAndUsage)
{
    memtable *m = mem_new();
    size_t before = mem_usage(m);
    char *big = malloc(3u << 20);
    memset(big, 'b', 3u << 20);
    mem_add(m, 1, ENG_TYPE_VALUE, slice_make("big", 3), slice_make(big, 3u << 20));
    CHECK(mem_usage(m) >= before + (3u << 20));
    int type;
    uint64_t seq;
    slice v;
    CHECK_EQ_INT(mem_get(m, slice_make("big", 3), 1, &type, &seq, &v), 1);
    CHECK(v.size == (3u << 20) && memcmp(v.data, big, v.size) == 0);
    free(big);
    mem_unref(m);
}

/* Model answer for mem_get: the first point entry of k at or below seq in
 * the sorted model, by binary search. */
static const ment *model_get(const ment *model, int n, slice k, uint64_t seq)
{
    char t[48];
    memcpy(t, k.data, k.size);
    enc_fixed64(t + k.size, ikey_pack_trailer(seq, ENG_TYPE_SEEK));
    slice target = slice_make(t, k.size + 8);
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ikey_compare(slice_make(model[mid].ikey, model[mid].iklen), target) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n; lo++) {
        slice ik = slice_make(model[lo].ikey, model[lo].iklen);
        if (slice_compare(ikey_user_key(ik), k) != 0) return NULL;
        if (ikey_type(ik) != ENG_TYPE_RANGE_DELETION) return &model[lo];
    }
    return NULL;
}

static void check_get(memtable *m, const ment *model, int n, slice k, uint64_t seq)
{
    const ment *want = model_get(model, n, k, seq);
    int type = -1;
    uint64_t fseq = 0;
    slice v;
    int found = mem_get(m, k, seq, &type, &fseq, &v);
    CHECK_EQ_INT(found, want != NULL);
    if (!want || !found) return;
    slice wk = slice_make(want->ikey, want->iklen);
    CHECK_EQ_INT(type, ikey_type(wk));
    CHECK_EQ_INT(fseq, ikey_sequence(wk));
    CHECK(v.size == want->vlen && memcmp(v.data, want->val, v.size) == 0);
}

TEST(ShuffledSequencesKeepIndexOnNewestVersion)
{
    /* Many versions per key with sequences in shuffled order: an older
     * version added after a newer one must not replace it in the index, a
     * range deletion sorting between versions must not break the insert
     * hint, and every snapshot must see its own version. 3000 keys make the
     * index grow from 16 slots to 8192. */
    int n = 24000;
    unsigned keyspace = 3000;
    ment *model = calloc((size_t)n, sizeof(ment));
    uint64_t *seqs = malloc((size_t)n * sizeof(uint64_t));
    for (int i = 0; i < n; i++)
        seqs[i] = (uint64_t)i + 1;
    for (int i = n - 1; i > 0; i--) { /* mostly ascending: shuffle one in four */
        if (rnd() % 4) continue;
        int j = (int)(rnd() % (uint64_t)(i + 1));
        uint64_t t = seqs[i];
        seqs[i] = seqs[j];
        seqs[j] = t;
    }
    memtable *m = mem_new_sized(4096);
    for (int i = 0; i < n; i++) {
        ment *e = &model[i];
        size_t kl = (size_t)snprintf(e->ikey, 24, "user:%u", (unsigned)(rnd() % keyspace));
        int r = (int)(rnd() % 20);
        int type = r < 15 ? ENG_TYPE_VALUE : r < 19 ? ENG_TYPE_DELETION : ENG_TYPE_RANGE_DELETION;
        enc_fixed64(e->ikey + kl, ikey_pack_trailer(seqs[i], type));
        e->iklen = kl + 8;
        e->vlen = type == ENG_TYPE_DELETION ? 0 : (size_t)snprintf(e->val, 64, "v%d", i);
        mem_add(m, seqs[i], type, slice_make(e->ikey, kl), slice_make(e->val, e->vlen));
        if (i % 4000 == 0) CHECK_EQ_INT(mem_check(m), 0);
    }
    qsort(model, (size_t)n, sizeof(ment), ment_cmp);
    CHECK_EQ_INT(mem_check(m), 0);
    for (int i = 0; i < n; i++) {
        slice ik = slice_make(model[i].ikey, model[i].iklen);
        slice k = ikey_user_key(ik);
        uint64_t s = ikey_sequence(ik);
        check_get(m, model, n, k, ENG_MAX_SEQUENCE); /* newest: the index path */
        check_get(m, model, n, k, s);                /* exactly this version */
        check_get(m, model, n, k, s - 1);            /* just below: older ones */
    }
    for (unsigned q = 0; q < 2000; q++) { /* never written, and snapshot 0 */
        char k[24];
        size_t kl = (size_t)snprintf(k, sizeof(k), "user:%u", keyspace + q);
        check_get(m, model, n, slice_make(k, kl), ENG_MAX_SEQUENCE);
        kl = (size_t)snprintf(k, sizeof(k), "user:%u", q % keyspace);
        check_get(m, model, n, slice_make(k, kl), 0);
    }
    iter *it = mem_iter_new(m);
    iter_seek_first(it);
    for (int i = 0; i < n; i++, iter_next(it))
        check_at(it, &model[i]);
    CHECK(!iter_valid(it));
    iter_free(it);
    mem_unref(m);
    free(seqs);
    free(model);
}

TEST(ResetAfterIndexGrowthForgetsEveryKey)
{
    memtable *m = mem_new_sized(4096);
    int type;
    uint64_t seq;
    slice v;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5000; i++) {
            char k[16];
            int kl = snprintf(k, sizeof(k), "r%d-%d", round, i);
            mem_add(m, (uint64_t)i + 1, ENG_TYPE_VALUE, slice_make(k, (size_t)kl),
                    slice_make(k, (size_t)kl));
        }
        CHECK_EQ_INT(mem_check(m), 0);
        CHECK_EQ_INT(mem_get(m, slice_make("r0-17", 5), 100, &type, &seq, &v), round == 0);
        mem_reset(m);
        CHECK_EQ_INT(mem_check(m), 0);
        CHECK_EQ_INT(mem_get(m, slice_make("r0-17", 5), 100, &type, &seq, &v), 0);
        CHECK(mem_usage(m) <= (1u << 20) + 64); /* old index tables went with the arena */
    }
    mem_unref(m);
}

/* ---- Concurrency --------------------------------------------------------- */

/* ---- mem_add_many: interleaved descents, K1-order linking ---------------- */

enum { ORDER_RANDOM, ORDER_ASCENDING, ORDER_DESCENDING, ORDER_OVERWRITE };

/* The key of write i of n in the given order: ascending and descending keys
 * take the append hint or the full descent at every step; random keys from
 * a small keyspace repeat inside a group; overwrites of existing keys take
 * the newest-version hint. */
static void group_key(char *k, size_t *kl, int order, int i, int n)
{
    if (order == ORDER_ASCENDING || order == ORDER_DESCENDING)
        *kl = (size_t)snprintf(k, 24, "s%08d", order == ORDER_ASCENDING ? i : n - i);
    else
        make_key(k, kl, (unsigned)(rnd() % (order == ORDER_RANDOM ? 300u : 40u)));
}

/* Adds n writes in groups of `group` through mem_add_many, sequence numbers
 * shuffled inside each group, and leaves model sorted. */
static void fill_grouped(memtable *m, ment *model, int n, int order, int group)
{
    char keys[64][24];
    mem_entry es[64];
    for (int i = 0; i < n; i += group) {
        int g = n - i < group ? n - i : group;
        uint64_t seqs[64];
        for (int j = 0; j < g; j++)
            seqs[j] = (uint64_t)(i + j) + 1;
        for (int j = g - 1; j > 0; j--) {
            int r = (int)(rnd() % (uint64_t)(j + 1));
            uint64_t t = seqs[j];
            seqs[j] = seqs[r];
            seqs[r] = t;
        }
        for (int j = 0; j < g; j++) {
            ment *e = &model[i + j];
            size_t kl;
            group_key(keys[j], &kl, order, i + j, n);
            int r = (int)(rnd() % 10);
            int type = r < 7 ? ENG_TYPE_VALUE : r < 9 ? ENG_TYPE_DELETION : ENG_TYPE_RANGE_DELETION;
            memcpy(e->ikey, keys[j], kl);
            enc_fixed64(e->ikey + kl, ikey_pack_trailer(seqs[j], type));
            e->iklen = kl + 8;
            e->vlen = type == ENG_TYPE_DELETION
                          ? 0
                          : (size_t)snprintf(e->val, 64, "v%llu", (unsigned long long)seqs[j]);
            es[j] =
                (mem_entry){seqs[j], type, slice_make(keys[j], kl), slice_make(e->val, e->vlen)};
        }
        mem_add_many(m, es, (size_t)g);
    }
    qsort(model, (size_t)n, sizeof(ment), ment_cmp);
}

TEST(GroupedInsertsInEveryOrderMatchSortedModel)
{
    int n = 3000;
    ment *model = calloc((size_t)n, sizeof(ment));
    static const int groups[] = {1, 2, 3, 6, 16, 17, 40};
    for (int order = ORDER_RANDOM; order <= ORDER_OVERWRITE; order++) {
        for (size_t gi = 0; gi < sizeof(groups) / sizeof(groups[0]); gi++) {
            memtable *m = mem_new_sized(4096);
            fill_grouped(m, model, n, order, groups[gi]);
            CHECK_MSG(mem_check(m) == 0, "order %d group %d: invariant %d broken", order,
                      groups[gi], mem_check(m));
            CHECK_EQ_INT(mem_entries(m), n);
            iter *it = mem_iter_new(m);
            iter_seek_first(it);
            for (int i = 0; i < n; i++, iter_next(it))
                check_at(it, &model[i]);
            CHECK(!iter_valid(it));
            iter_free(it);
            for (int i = 0; i < n; i++) /* the newest point entry of every key */
                check_get(m, model, n, slice_make(model[i].ikey, model[i].iklen - 8),
                          ENG_MAX_SEQUENCE);
            mem_unref(m);
        }
    }
    free(model);
}

TEST(GroupedInsertsOverExistingEntriesKeepVersionsOrdered)
{
    /* The chunk's nodes land between nodes found by descents run before any
     * of them was linked, and between versions of keys already present. */
    int half = 1000, n = half + 64 * 16;
    ment *model = calloc((size_t)n, sizeof(ment));
    memtable *m = mem_new();
    for (int i = 0; i < half; i++) {
        ment *e = &model[i];
        size_t kl;
        make_key(e->ikey, &kl, (unsigned)(rnd() % 60));
        enc_fixed64(e->ikey + kl, ikey_pack_trailer((uint64_t)i + 1, ENG_TYPE_VALUE));
        e->iklen = kl + 8;
        e->vlen = (size_t)snprintf(e->val, 64, "old%d", i);
        mem_add(m, (uint64_t)i + 1, ENG_TYPE_VALUE, slice_make(e->ikey, kl),
                slice_make(e->val, e->vlen));
    }
    ment *rest = model + half;
    char keys[16][24];
    mem_entry es[16];
    for (int i = 0; i < n - half; i += 16) {
        for (int j = 0; j < 16; j++) {
            ment *e = &rest[i + j];
            size_t kl;
            make_key(keys[j], &kl, (unsigned)(rnd() % 60));
            uint64_t seq = (uint64_t)(half + i + 16 - j); /* descending inside the group */
            memcpy(e->ikey, keys[j], kl);
            enc_fixed64(e->ikey + kl, ikey_pack_trailer(seq, ENG_TYPE_VALUE));
            e->iklen = kl + 8;
            e->vlen = (size_t)snprintf(e->val, 64, "new%llu", (unsigned long long)seq);
            es[j] = (mem_entry){seq, ENG_TYPE_VALUE, slice_make(keys[j], kl),
                                slice_make(e->val, e->vlen)};
        }
        mem_add_many(m, es, 16);
        CHECK_EQ_INT(mem_check(m), 0);
    }
    qsort(model, (size_t)n, sizeof(ment), ment_cmp);
    iter *it = mem_iter_new(m);
    iter_seek_first(it);
    for (int i = 0; i < n; i++, iter_next(it))
        check_at(it, &model[i]);
    CHECK(!iter_valid(it));
    iter_free(it);
    for (int i = 0; i < n; i++) /* every version, at its own and older snapshots */
        check_get(m, model, n, slice_make(model[i].ikey, model[i].iklen - 8),
                  ikey_sequence(slice_make(model[i].ikey, model[i].iklen)));
    mem_unref(m);
    free(model);
}

/* M10: with replace on, a new version takes its key's newest slot, except
 * where that slot is a leaf's fence (then it goes before it). Every key's
 * first entry in K1 order is its newest version, the order holds, and the
 * tree stays near one slot per key however many versions were written. */
TEST(ReplaceKeepsNewestVersionFirstAndTreeNearKeyCount)
{
    enum { KEYS = 3000, WRITES = 40000 };
    ment *newest = calloc(KEYS, sizeof(ment));
    memtable *m = mem_new();
    mem_set_replace(m, 1);
    char keys[16][24], vals[16][64];
    mem_entry es[16];
    uint64_t seq = 0;
    for (int w = 0; w < WRITES; w += 16) {
        int g = 1 + (int)(rnd() % 16); /* groups of 1..16: mem_add and mem_add_many */
        for (int j = 0; j < g; j++) {
            unsigned id = (unsigned)(rnd() % KEYS);
            size_t kl = (size_t)snprintf(keys[j], 24, "m%cuser:%08u", 0, id * 2654435761u);
            int type = rnd() % 8 ? ENG_TYPE_VALUE : ENG_TYPE_DELETION;
            size_t vl = type == ENG_TYPE_DELETION
                            ? 0
                            : (size_t)snprintf(vals[j], 64, "v%llu", (unsigned long long)seq + 1);
            ment *e = &newest[id];
            memcpy(e->ikey, keys[j], kl);
            enc_fixed64(e->ikey + kl, ikey_pack_trailer(++seq, type));
            e->iklen = kl + 8;
            memcpy(e->val, vals[j], vl);
            e->vlen = vl;
            es[j] = (mem_entry){seq, type, slice_make(keys[j], kl), slice_make(vals[j], vl)};
        }
        mem_add_many(m, es, (size_t)g);
        if (w % 4096 == 0) CHECK_EQ_INT(mem_check(m), 0);
    }
    CHECK_EQ_INT(mem_check(m), 0);
    int nkeys = 0;
    for (int i = 0; i < KEYS; i++)
        if (newest[i].iklen) newest[nkeys++] = newest[i];
    qsort(newest, (size_t)nkeys, sizeof(ment), ment_cmp);
    iter *it = mem_iter_new(m);
    iter_seek_first(it);
    int at = 0;
    uint64_t slots = 0;
    buf prev = {0};
    for (; iter_valid(it); iter_next(it), slots++) {
        slice k = iter_key(it);
        if (prev.len) CHECK(ikey_compare(slice_make(prev.data, prev.len), k) < 0);
        slice uk = ikey_user_key(k);
        if (!prev.len || slice_compare(ikey_user_key(slice_make(prev.data, prev.len)), uk) != 0) {
            CHECK(at < nkeys);
            check_at(it, &newest[at++]); /* a key's first entry is its newest */
        }
        prev.len = 0;
        buf_append(&prev, k.data, k.size);
    }
    iter_free(it);
    buf_free(&prev);
    CHECK_EQ_INT(at, nkeys);
    CHECK_MSG(slots < (uint64_t)nkeys * 2, "%llu slots for %d keys", (unsigned long long)slots,
              nkeys);
    CHECK_EQ_INT((int)mem_entries(m), (int)slots);
    for (int i = 0; i < nkeys; i++) {
        int type;
        uint64_t found;
        slice v;
        slice uk = slice_make(newest[i].ikey, newest[i].iklen - 8);
        CHECK(mem_get(m, uk, ENG_MAX_SEQUENCE, &type, &found, &v));
        CHECK(found == ikey_sequence(slice_make(newest[i].ikey, newest[i].iklen)));
        CHECK(v.size == newest[i].vlen && memcmp(v.data, newest[i].val, v.size) == 0);
    }
    mem_unref(m);
    free(newest);
}

#define CONC_N 60000

struct conc {
    memtable *m;
    atomic_int done;
    atomic_int written; /* entries the writer has finished adding */
    atomic_int started;
    char fail[200];
};

/* The value of key i encodes i, so a reader can detect a torn or mixed entry. */
static size_t conc_key(char *k, unsigned i)
{
    return (size_t)snprintf(k, 24, "%08u", (i * 7919u) % 1000003u);
}
static size_t conc_val(char *v, unsigned i)
{
    return (size_t)snprintf(v, 64, "value-%u-%u", i, i * 31u);
}

static void *conc_reader(void *arg)
{
    struct conc *c = arg;
    iter *it = mem_iter_new(c->m);
    atomic_store(&c->started, 1);
    while (!atomic_load(&c->done) && !c->fail[0]) {
        int seen_before = atomic_load(&c->written);
        int count = 0;
        slice prev = {NULL, 0};
        for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
            slice k = iter_key(it), v = iter_value(it);
            unsigned seq = (unsigned)ikey_sequence(k);
            char ek[24], ev[64];
            size_t ekl = conc_key(ek, seq), evl = conc_val(ev, seq);
            if (k.size != ekl + 8 || memcmp(k.data, ek, ekl) || v.size != evl ||
                memcmp(v.data, ev, evl)) {
                snprintf(c->fail, sizeof(c->fail), "torn entry for seq %u", seq);
                break;
            }
            if (prev.data && ikey_compare(prev, k) >= 0) {
                snprintf(c->fail, sizeof(c->fail), "out of order at seq %u", seq);
                break;
            }
            prev = k;
            count++;
        }
        if (!c->fail[0] && count < seen_before)
            snprintf(c->fail, sizeof(c->fail), "saw %d entries, %d were published", count,
                     seen_before);
        /* Backward: prev() searches from the top while nodes are linked in. */
        int back = 0;
        prev = slice_make(NULL, 0);
        for (iter_seek_last(it); iter_valid(it) && !c->fail[0] && back < 2000; iter_prev(it)) {
            slice k = iter_key(it);
            if (prev.data && ikey_compare(k, prev) >= 0)
                snprintf(c->fail, sizeof(c->fail), "backward step went forward");
            prev = k;
            back++;
        }
        /* Point lookups of published keys must succeed. */
        for (int q = 0; q < 200 && seen_before > 0 && !c->fail[0]; q++) {
            unsigned i = (unsigned)(rnd() % (unsigned)seen_before) + 1;
            char ek[24], ev[64];
            size_t ekl = conc_key(ek, i), evl = conc_val(ev, i);
            int type;
            uint64_t fs;
            slice v;
            if (!mem_get(c->m, slice_make(ek, ekl), ENG_MAX_SEQUENCE, &type, &fs, &v) || fs != i ||
                v.size != evl || memcmp(v.data, ev, evl))
                snprintf(c->fail, sizeof(c->fail), "get of published seq %u failed", i);
        }
    }
    iter_free(it);
    return NULL;
}

TEST(ConcurrentReaderSeesNoTornEntries)
{
    struct conc c = {0};
    c.m = mem_new();
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, conc_reader, &c), 0);
    while (!atomic_load(&c.started))
        sched_yield();
    for (unsigned i = 1; i <= CONC_N; i++) {
        char k[24], v[64];
        size_t kl = conc_key(k, i), vl = conc_val(v, i);
        mem_add(c.m, i, ENG_TYPE_VALUE, slice_make(k, kl), slice_make(v, vl));
        atomic_store(&c.written, (int)i);
    }
    atomic_store(&c.done, 1);
    pthread_join(th, NULL);
    CHECK_EQ_INT(mem_check(c.m), 0);
    CHECK_MSG(!c.fail[0], "%s", c.fail);
    mem_unref(c.m);
}

TEST(ConcurrentReaderDuringGroupedInserts)
{
    struct conc c = {0};
    c.m = mem_new();
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, conc_reader, &c), 0);
    while (!atomic_load(&c.started))
        sched_yield();
    char keys[20][24], vals[20][64];
    mem_entry es[20];
    for (unsigned i = 1; i <= CONC_N;) {
        unsigned g = 1 + (unsigned)(rnd() % 20);
        if (g > CONC_N + 1 - i) g = CONC_N + 1 - i;
        for (unsigned j = 0; j < g; j++) {
            size_t kl = conc_key(keys[j], i + j), vl = conc_val(vals[j], i + j);
            es[j] = (mem_entry){i + j, ENG_TYPE_VALUE, slice_make(keys[j], kl),
                                slice_make(vals[j], vl)};
        }
        mem_add_many(c.m, es, g);
        i += g;
        atomic_store(&c.written, (int)i - 1); /* the whole group is published */
    }
    atomic_store(&c.done, 1);
    pthread_join(th, NULL);
    CHECK_EQ_INT(mem_check(c.m), 0);
    CHECK_MSG(!c.fail[0], "%s", c.fail);
    mem_unref(c.m);
}

/* mem_prefetch_keys racing the writer's inserts, splits and index growth
 * (it reads the tree and the index without locks or version checks): it
 * must never fault, loop or change anything -- the tree checks and every
 * entry is found afterwards. */
static void *prefetch_racer(void *arg)
{
    struct conc *c = arg;
    uint64_t r = 0x9E3779B97F4A7C15ull;
    atomic_store(&c->started, 1);
    char keys[MEM_PREFETCH_MAX + 4][24];
    slice ks[MEM_PREFETCH_MAX + 4];
    while (!atomic_load(&c->done)) {
        size_t n = 1 + (size_t)(r % (MEM_PREFETCH_MAX + 4)); /* also past the limit */
        for (size_t j = 0; j < n; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            ks[j] = slice_make(keys[j], conc_key(keys[j], (unsigned)(r % (2 * CONC_N))));
        }
        if (r % 7 == 0) ks[0] = slice_make("", 0); /* an empty key sorts first */
        mem_prefetch_keys(c->m, n, ks, n - n / 3, ks + n / 3);
    }
    return NULL;
}

TEST(PrefetchDuringInsertsChangesNothing)
{
    struct conc c = {0};
    c.m = mem_new();
    pthread_t th;
    CHECK_EQ_INT(pthread_create(&th, NULL, prefetch_racer, &c), 0);
    while (!atomic_load(&c.started))
        sched_yield();
    char k[24], v[64];
    for (unsigned i = 1; i <= CONC_N; i++) {
        slice key = slice_make(k, conc_key(k, i));
        mem_add(c.m, i, ENG_TYPE_VALUE, key, slice_make(v, conc_val(v, i)));
        if (i % 64 == 0) mem_prefetch_keys(c.m, 1, &key, 1, &key); /* the writer's own use */
    }
    atomic_store(&c.done, 1);
    pthread_join(th, NULL);
    CHECK_EQ_INT(mem_check(c.m), 0);
    CHECK_EQ_INT(mem_entries(c.m), CONC_N);
    for (unsigned i = 1; i <= CONC_N; i += 97) {
        int type;
        uint64_t seq;
        slice got;
        CHECK_EQ_INT(mem_get(c.m, slice_make(k, conc_key(k, i)), CONC_N, &type, &seq, &got), 1);
        CHECK(seq == i && got.size == conc_val(v, i) && !memcmp(got.data, v, got.size));
    }
    mem_unref(c.m);
}

/* Gets racing the writer while keys gain versions and the index grows:
 * key k holds the writes i with i % GETS_K == k, and write i's value names
 * i, so every answer is checkable against what was published before. */
#define GETS_K 20000
#define GETS_N 60000

static size_t gets_key(char *k, unsigned i)
{
    return (size_t)snprintf(k, 24, "g%u", i % GETS_K);
}

static void *gets_reader(void *arg)
{
    struct conc *c = arg;
    uint64_t r = 0x2545F4914F6CDD1Dull;
    atomic_store(&c->started, 1);
    while (!atomic_load(&c->done) && !c->fail[0]) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        unsigned w = (unsigned)atomic_load(&c->written), k = (unsigned)(r % GETS_K);
        unsigned snap = w ? (unsigned)((r >> 20) % w) + 1 : 0;
        char key[24], ev[64];
        size_t kl = gets_key(key, k);
        /* Newest at or before w must be seen; newer ones may be. */
        unsigned latest = w >= k ? w - (w - k) % GETS_K : 0;
        unsigned want = snap >= k ? snap - (snap - k) % GETS_K : 0;
        int type;
        uint64_t fs;
        slice v;
        int found = mem_get(c->m, slice_make(key, kl), ENG_MAX_SEQUENCE, &type, &fs, &v);
        if (latest && (!found || fs < latest || fs % GETS_K != k ||
                       v.size != conc_val(ev, (unsigned)fs) || memcmp(v.data, ev, v.size)))
            snprintf(c->fail, sizeof(c->fail),
                     "newest get of key %u: found %d seq %llu, want >= %u", k, found,
                     (unsigned long long)fs, latest);
        found = mem_get(c->m, slice_make(key, kl), snap, &type, &fs, &v);
        if (found != (want != 0) ||
            (want && (fs != want || v.size != conc_val(ev, want) || memcmp(v.data, ev, v.size))))
            snprintf(c->fail, sizeof(c->fail), "get of key %u at %u: found %d seq %llu, want %u", k,
                     snap, found, (unsigned long long)fs, want);
        kl = (size_t)snprintf(key, sizeof(key), "absent%u", k);
        if (mem_get(c->m, slice_make(key, kl), ENG_MAX_SEQUENCE, &type, &fs, &v))
            snprintf(c->fail, sizeof(c->fail), "found never-written key %u", k);
    }
    return NULL;
}

TEST(ConcurrentGetsDuringVersionsAndIndexGrowth)
{
    struct conc c = {0};
    c.m = mem_new_sized(4096);
    pthread_t th[2];
    for (int t = 0; t < 2; t++)
        CHECK_EQ_INT(pthread_create(&th[t], NULL, gets_reader, &c), 0);
    while (!atomic_load(&c.started))
        sched_yield();
    for (unsigned i = 1; i <= GETS_N; i++) {
        char k[24], v[64];
        size_t kl = gets_key(k, i), vl = conc_val(v, i);
        mem_add(c.m, i, ENG_TYPE_VALUE, slice_make(k, kl), slice_make(v, vl));
        atomic_store(&c.written, (int)i);
    }
    atomic_store(&c.done, 1);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    CHECK_EQ_INT(mem_check(c.m), 0);
    CHECK_MSG(!c.fail[0], "%s", c.fail);
    mem_unref(c.m);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
