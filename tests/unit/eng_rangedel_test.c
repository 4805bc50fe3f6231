/*
 * eng_rangedel_test.c -- range tombstone sets: the indexed search (R3)
 * answers what a linear search over the set answers (R1), as the set grows
 * and while another thread appends, and does not look at every tombstone.
 */
#include "test.h"

#include <pthread.h>
#include <stdint.h>

#include "engine/rangedel.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* A key of 0-3 bytes over a 4-letter alphabet: short keys make ranges
 * overlap, nest, touch and coincide. */
static slice rnd_key(char *buf)
{
    size_t n = rnd() % 4;
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + rnd() % 4);
    return slice_make(buf, n);
}

/* R1 by brute force over the first n tombstones of s. */
static const rdel *brute(const rdel_set *s, size_t n, slice key, uint64_t floor, uint64_t snap)
{
    const rdel *best = NULL;
    rdel_cursor c;
    size_t i = 0;
    for (const rdel *r = rdel_set_first(s, &c); r && i < n; r = rdel_next(&c), i++) {
        if (r->seq <= floor || (r->seq > snap && r->seq < ENG_BATCH_SEQ_BASE)) continue;
        if (slice_compare(rdel_start(r), key) <= 0 && slice_compare(key, rdel_end(r)) < 0) {
            best = r;
            floor = r->seq;
        }
    }
    return best;
}

static uint64_t seq_of(const rdel *r)
{
    return r ? r->seq : 0;
}

static uint64_t rnd_seq(void)
{
    return rnd() % 8 == 0 ? ENG_BATCH_SEQ_BASE + rnd() % 1000 : 1 + rnd() % 5000;
}

static void check_queries(const rdel_set *s, int queries)
{
    size_t n = s->n;
    for (int q = 0; q < queries; q++) {
        char kb[4];
        slice k = rnd_key(kb);
        uint64_t floor = rnd() % 3 == 0 ? 0 : rnd() % 5000;
        uint64_t snap = rnd() % 4 == 0 ? UINT64_MAX : rnd() % 6000;
        const rdel *want = brute(s, n, k, floor, snap);
        const rdel *got = rdel_set_best(s, k, floor, snap);
        CHECK_MSG(seq_of(got) == seq_of(want), "n=%zu floor=%llu snap=%llu: got %llu want %llu", n,
                  (unsigned long long)floor, (unsigned long long)snap,
                  (unsigned long long)seq_of(got), (unsigned long long)seq_of(want));
        CHECK_EQ_INT(rdel_set_covers(s, k, floor, snap), want != NULL);
    }
}

TEST(IndexedSearchAgreesWithLinearSearchAsTheSetGrows)
{
    for (int round = 0; round < 20; round++) {
        rdel_set *s = rdel_set_new();
        int total = 1 + (int)(rnd() % 600);
        for (int i = 0; i < total; i++) {
            char a[4], b[4];
            slice x = rnd_key(a), y = rnd_key(b);
            if (rnd() % 2 && slice_compare(x, y) > 0) { /* mostly proper ranges, some empty */
                slice t = x;
                x = y;
                y = t;
            }
            rdel_set_add(s, x, y, rnd_seq());
            if (rnd() % 8 == 0) check_queries(s, 20);
        }
        check_queries(s, 500);
        rdel_set_unref(s);
    }
}

TEST(ViewCoveringPicksTheHighestSequenceAcrossSets)
{
    rdel_set *p[3];
    rdel_view v = {0};
    for (int i = 0; i < 3; i++) {
        p[i] = rdel_set_new();
        for (int j = 0; j < 100 * (i + 1); j++) {
            char a[4], b[4];
            rdel_set_add(p[i], rnd_key(a), rnd_key(b), rnd_seq());
        }
        rdel_view_add(&v, p[i]);
        rdel_set_unref(p[i]);
    }
    for (int q = 0; q < 2000; q++) {
        char kb[4];
        slice k = rnd_key(kb);
        uint64_t pseq = rnd() % 5000, snap = rnd() % 6000;
        uint64_t want = 0;
        for (int i = 0; i < 3; i++) {
            uint64_t w = seq_of(brute(p[i], p[i]->n, k, pseq, snap));
            if (w > want) want = w;
        }
        CHECK_EQ_INT(seq_of(rdel_view_covering(&v, k, pseq, snap)), want);
        CHECK_EQ_INT(rdel_view_covers(&v, k, pseq, snap), want != 0);
    }
    rdel_view_release(&v);
}

/* [i, 2N - i) for i < N: every range holds the next, so indexing them as
 * fragments would list N^2 / 2 entries; the set keeps a plain list instead
 * and must still answer. */
TEST(DeeplyNestedRangesStillAnswer)
{
    enum { N = 3000 };
    rdel_set *s = rdel_set_new();
    for (int i = 0; i < N; i++) {
        char a[16], b[16];
        snprintf(a, sizeof(a), "%05d", i);
        snprintf(b, sizeof(b), "%05d", 2 * N - i);
        rdel_set_add(s, slice_make(a, 5), slice_make(b, 5), (uint64_t)(i + 1));
    }
    for (int q = 0; q < 300; q++) {
        char kb[16];
        int k = (int)(rnd() % (2 * N + 10));
        snprintf(kb, sizeof(kb), "%05d", k);
        slice key = slice_make(kb, 5);
        uint64_t floor = rnd() % N;
        CHECK_EQ_INT(seq_of(rdel_set_best(s, key, floor, UINT64_MAX)),
                     seq_of(brute(s, s->n, key, floor, UINT64_MAX)));
    }
    rdel_set_unref(s);
}

/* What a few thousand deleted big keys leave: disjoint tombstones, older
 * than the entries a scan reads past them. A search must not test them all. */
TEST(SearchAmongThousandsOfTombstonesExaminesFew)
{
    enum { N = 10000 };
    rdel_set *s = rdel_set_new();
    for (int i = 0; i < N; i++) {
        char a[16], b[16];
        snprintf(a, sizeof(a), "d%08d", i);
        snprintf(b, sizeof(b), "d%08d~", i);
        rdel_set_add(s, slice_make(a, 9), slice_make(b, 10), (uint64_t)(1000 + i));
    }
    uint64_t before = rdel_examined();
    for (int q = 0; q < 1000; q++) {
        char kb[16];
        int i = (int)(rnd() % N);
        snprintf(kb, sizeof(kb), "d%08dx", i); /* inside tombstone i */
        CHECK_EQ_INT(seq_of(rdel_set_best(s, slice_make(kb, 10), 0, UINT64_MAX)),
                     (uint64_t)(1000 + i));
        snprintf(kb, sizeof(kb), "m%08d", i); /* past them all */
        CHECK(rdel_set_best(s, slice_make(kb, 9), 0, UINT64_MAX) == NULL);
    }
    uint64_t per_query = (rdel_examined() - before) / 2000;
    CHECK_MSG(per_query <= 2 * RDEL_LINEAR_MAX, "%llu tombstones examined per search",
              (unsigned long long)per_query);
    /* Newer than every tombstone: nothing to look at. */
    before = rdel_examined();
    CHECK(!rdel_set_covers(s, slice_make("d00000005x", 10), 1000 + N, UINT64_MAX));
    CHECK_EQ_INT(rdel_examined() - before, 0);
    rdel_set_unref(s);
}

/* One appender (as the memtable's writer) and a reader searching while the
 * levels are built, merged and retired under it (R3, R4; ASan checks the
 * retired ones are not freed under a search). */
typedef struct {
    rdel_set *s;
    int total;
    volatile int done;
} race;

static void *appender(void *arg)
{
    race *r = arg;
    for (int i = 0; i < r->total; i++) {
        char a[16], b[16];
        snprintf(a, sizeof(a), "k%06d", i * 2);
        snprintf(b, sizeof(b), "k%06d", i * 2 + 1);
        rdel_set_add(r->s, slice_make(a, 7), slice_make(b, 7), (uint64_t)(i + 1));
    }
    r->done = 1;
    return NULL;
}

TEST(SearchesWhileAnotherThreadAppends)
{
    race r = {rdel_set_new(), 20000, 0};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, appender, &r) == 0);
    int bad = 0;
    uint64_t x = 12345;
    while (!r.done && !bad) {
        size_t published = __atomic_load_n(&r.s->n, __ATOMIC_ACQUIRE);
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((x >> 33) % (size_t)r.total);
        char kb[16];
        snprintf(kb, sizeof(kb), "k%06d", i * 2);
        const rdel *got = rdel_set_best(r.s, slice_make(kb, 7), 0, UINT64_MAX);
        if ((size_t)i < published && seq_of(got) != (uint64_t)(i + 1)) bad = 1; /* was there */
        if (got && seq_of(got) != (uint64_t)(i + 1)) bad = 1;                   /* wrong one */
    }
    pthread_join(t, NULL);
    CHECK(!bad);
    check_queries(r.s, 100);
    rdel_set_unref(r.s);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
