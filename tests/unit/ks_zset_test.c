/*
 * ks_zset_test.c -- sorted sets in the keyspace: random operations against
 * an in-memory model with the rank-block invariants KS-Z1..KS-Z5 checked
 * after each step (ks_zset_check), the cost bounds of rank reads on a big
 * zset (counted iterator steps), and the edge cases of the encoding (-0,
 * tombstone rewrites, COPY of a big zset).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "ks_fixture.h"
#include "keyspace/ks_zset.h"

/* ---- The model: a sorted array of (score, member) --------------------------- */

typedef struct mz {
    char m[24];
    size_t ml;
    double score;
} mz;

typedef struct model {
    mz *v;
    size_t n, cap;
} model;

static int mzcmp(const void *a, const void *b)
{
    const mz *x = a, *y = b;
    if (x->score < y->score) return -1;
    if (x->score > y->score) return 1;
    size_t n = x->ml < y->ml ? x->ml : y->ml;
    int r = memcmp(x->m, y->m, n);
    return r ? r : (x->ml < y->ml ? -1 : x->ml > y->ml);
}

static long model_find(const model *md, const char *m, size_t ml)
{
    for (size_t i = 0; i < md->n; i++)
        if (md->v[i].ml == ml && memcmp(md->v[i].m, m, ml) == 0) return (long)i;
    return -1;
}

static void model_del(model *md, long i);

/* Sets member's score, keeping the array sorted (no qsort per change: the
 * model must stay cheaper than the code it checks). */
static void model_set(model *md, const char *m, size_t ml, double score)
{
    long i = model_find(md, m, ml);
    if (i >= 0) model_del(md, i);
    if (md->n == md->cap) {
        md->cap = md->cap ? md->cap * 2 : 64;
        md->v = realloc(md->v, md->cap * sizeof(*md->v));
    }
    mz e = {{0}, ml, score};
    memcpy(e.m, m, ml);
    size_t lo = 0, hi = md->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (mzcmp(&md->v[mid], &e) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&md->v[lo + 1], &md->v[lo], (md->n - lo) * sizeof(*md->v));
    md->v[lo] = e;
    md->n++;
}

static void model_del(model *md, long i)
{
    memmove(&md->v[i], &md->v[i + 1], (md->n - (size_t)i - 1) * sizeof(*md->v));
    md->n--;
}

/* ---- Helpers over the keyspace ----------------------------------------------------- */

typedef struct got {
    ks_zmember *z;
    char *buf;
    size_t n;
} got;

static got G;

/* Copies what a range hands over into G (replacing what it held). */
static void collect_fn(void *arg, const ks_zmember *z, size_t n)
{
    got *g = arg;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += z[i].ml;
    free(g->z);
    free(g->buf);
    g->z = malloc((n ? n : 1) * sizeof(*g->z));
    g->buf = malloc(bytes ? bytes : 1);
    g->n = n;
    for (size_t i = 0, used = 0; i < n; i++) {
        memcpy(g->buf + used, z[i].m, z[i].ml);
        g->z[i] = (ks_zmember){g->buf + used, z[i].ml, z[i].score};
        used += z[i].ml;
    }
}

static void pop_fn(void *arg, const char *key, size_t klen, const ks_zmember *z, size_t n)
{
    (void)arg, (void)key, (void)klen, (void)z, (void)n;
}

/* A pop's members into got arg (as collect_fn). */
static void pop_collect_fn(void *arg, const char *key, size_t klen, const ks_zmember *z, size_t n)
{
    (void)key, (void)klen;
    collect_fn(arg, z, n);
}

static void check_invariants(const char *key)
{
    const char *why = NULL;
    CHECK_MSG(ks_zset_check(&ctx, key, strlen(key), &why) == 0, "%s", why ? why : "?");
}

/* The whole zset equals the model, and a few ranks and counts agree. */
static void check_against(const char *key, const model *md)
{
    uint64_t card;
    ks_status st = ks_zcard(&ctx, key, strlen(key), &card);
    CHECK(st == (md->n ? KS_OK : KS_NOTFOUND));
    CHECK_EQ_INT(card, md->n);
    if (!md->n) return;
    ks_zspec all = {.by = KS_ZBY_RANK, .start = 0, .end = -1};
    CHECK(ks_zrange(&ctx, key, strlen(key), &all, collect_fn, &G) == KS_OK);
    CHECK_EQ_INT(G.n, md->n);
    for (size_t i = 0; i < md->n; i++) {
        CHECK_MSG(G.z[i].ml == md->v[i].ml && memcmp(G.z[i].m, md->v[i].m, G.z[i].ml) == 0,
                  "member %zu", i);
        CHECK_MSG(G.z[i].score == md->v[i].score, "score %zu", i);
    }
    for (int k = 0; k < 8; k++) {
        size_t i = (size_t)rand() % md->n;
        uint64_t rank;
        int found;
        CHECK(ks_zrank(&ctx, key, strlen(key), md->v[i].m, md->v[i].ml, 0, &rank, &found) == KS_OK);
        CHECK(found);
        CHECK_EQ_INT(rank, i);
        ks_zspec one = {.by = KS_ZBY_RANK, .start = (long long)i, .end = (long long)i};
        CHECK(ks_zrange(&ctx, key, strlen(key), &one, collect_fn, &G) == KS_OK);
        CHECK(G.n == 1 && G.z[0].ml == md->v[i].ml && memcmp(G.z[0].m, md->v[i].m, G.z[0].ml) == 0);
        double lo = md->v[i].score, hi = md->v[(size_t)rand() % md->n].score;
        if (hi < lo) {
            double t = lo;
            lo = hi;
            hi = t;
        }
        uint64_t want = 0, n;
        for (size_t j = 0; j < md->n; j++)
            want += md->v[j].score > lo && md->v[j].score <= hi;
        ks_zspec sc = {.by = KS_ZBY_SCORE, .min = lo, .max = hi, .minex = 1, .limit = -1};
        CHECK(ks_zcount(&ctx, key, strlen(key), &sc, &n) == KS_OK);
        CHECK_EQ_INT(n, want);
    }
    check_invariants(key);
}

static void small_limits(long long entries)
{
    ks_limits l;
    ks_limits_init(&l);
    l.zset_max_listpack_entries = entries;
    ks_set_limits(ks, &l);
}

/* ---- Tests ---------------------------------------------------------------------------- */

/* "q": n members m00000.. with scores 0, 1, ... (big: limits of 4). */
static void fill_queue(int n)
{
    small_limits(4);
    for (int i = 0; i < n; i++) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof(m), "m%05d", i);
        ks_zmember z = {m, ml, (double)i};
        ks_zadd_result r;
        CHECK(ks_zadd(&ctx, "q", 1, &z, 1, 0, &r) == KS_OK);
        if (i % 500 == 499) commit();
    }
    commit();
}

/* Random adds, score changes, removals, range removals and pops against
 * the model, on a zset that grows past several levels of rank blocks and
 * shrinks again (splits, merges, new and dropped levels). */
static void random_ops(int fanout, int target, int steps, unsigned seed)
{
    setup();
    srand(seed);
    small_limits(16);
    ks_zrank_b = fanout;
    model md = {0};
    const char *key = "z";
    char m[24];
    for (int step = 0; step < steps; step++) {
        int phase_grow = step < steps / 2;
        int ops = 1 + rand() % 200;
        ks_zmember in[256];
        char names[256][24];
        size_t nin = 0;
        int op = rand() % 10;
        if (phase_grow && md.n < (size_t)target) op = rand() % 4; /* mostly adds */
        if (op <= 3) {                                            /* ZADD of a batch */
            for (int i = 0; i < ops; i++) {
                int k = rand() % (phase_grow ? target * 2 : target / 4);
                size_t ml = (size_t)snprintf(names[nin], sizeof(names[nin]), "m%d", k);
                double s = (double)(rand() % 500) - 250 + (rand() % 4) * 0.25;
                in[nin++] = (ks_zmember){names[nin - 1], ml, s};
            }
            ks_zadd_result r;
            CHECK(ks_zadd(&ctx, key, 1, in, nin, 0, &r) == KS_OK);
            for (size_t i = 0; i < nin; i++)
                model_set(&md, in[i].m, in[i].ml, in[i].score);
        } else if (op <= 5) { /* ZREM */
            ks_field f[64];
            for (int i = 0; i < 64; i++) {
                long j = md.n ? rand() % (long)md.n : 0;
                size_t ml =
                    md.n && rand() % 4 ? md.v[j].ml : (size_t)snprintf(names[i], 24, "x%d", i);
                if (md.n && ml == md.v[j].ml && (rand() % 4)) {
                    memcpy(names[i], md.v[j].m, ml);
                }
                f[i] = (ks_field){names[i], ml, NULL, 0};
            }
            uint64_t removed, want = 0;
            for (int i = 0; i < 64; i++) {
                long j = model_find(&md, f[i].f, f[i].fl);
                if (j >= 0) model_del(&md, j), want++;
            }
            ks_status st = ks_zrem(&ctx, key, 1, f, 64, &removed);
            CHECK(st == KS_OK || st == KS_NOTFOUND);
            CHECK_EQ_INT(removed, want);
        } else if (op == 6 && md.n) { /* ZREMRANGEBYRANK */
            long long a = rand() % (long long)md.n, b = a + rand() % 300;
            ks_zspec r = {.by = KS_ZBY_RANK, .start = a, .end = b};
            uint64_t removed;
            CHECK(ks_zremrange(&ctx, key, 1, &r, &removed) == KS_OK);
            long long last = b >= (long long)md.n ? (long long)md.n - 1 : b;
            CHECK_EQ_INT(removed, last - a + 1);
            for (long long i = last; i >= a; i--)
                model_del(&md, (long)i);
        } else if (op == 7 && md.n) { /* ZREMRANGEBYSCORE */
            double lo = (double)(rand() % 500) - 250, hi = lo + rand() % 4;
            ks_zspec r = {.by = KS_ZBY_SCORE, .min = lo, .max = hi, .limit = -1};
            uint64_t removed, want = 0;
            CHECK(ks_zremrange(&ctx, key, 1, &r, &removed) == KS_OK);
            for (long i = (long)md.n - 1; i >= 0; i--)
                if (md.v[i].score >= lo && md.v[i].score <= hi) model_del(&md, i), want++;
            CHECK_EQ_INT(removed, want);
        } else if (op == 8 && md.n) { /* ZPOPMIN / ZPOPMAX */
            int max = rand() % 2;
            uint64_t count = 1 + (uint64_t)(rand() % 50);
            ks_field k = {key, 1, NULL, 0};
            CHECK(ks_zpop(&ctx, &k, 1, max, count, pop_collect_fn, &G) == KS_OK);
            CHECK_EQ_INT(G.n, count < md.n ? count : md.n);
            for (uint64_t i = 0; i < count && md.n; i++) {
                const mz *e = &md.v[max ? (long)md.n - 1 : 0];
                CHECK(i < G.n && G.z[i].ml == e->ml && memcmp(G.z[i].m, e->m, e->ml) == 0 &&
                      G.z[i].score == e->score);
                model_del(&md, max ? (long)md.n - 1 : 0);
            }
        } else if (md.n) { /* ZINCRBY */
            long j = rand() % (long)md.n;
            ks_zmember z = {md.v[j].m, md.v[j].ml, (double)(rand() % 7) - 3};
            ks_zadd_result r;
            memcpy(m, md.v[j].m, md.v[j].ml);
            z.m = m;
            CHECK(ks_zadd(&ctx, key, 1, &z, 1, KS_ZADD_INCR, &r) == KS_OK);
            model_set(&md, m, z.ml, md.v[j].score + z.score);
        }
        if (rand() % 3) commit();
        check_against(key, &md);
    }
    free(md.v);
    ks_zrank_b = KS_ZRANK_FANOUT;
    teardown();
}

/* Fan-out 4 and 8 (2B = 8, 16 children): a few thousand members make four
 * or five levels, so every split, merge, new and dropped level happens. */
TEST(RandomOperationsKeepModelAndRankInvariantsFanout4)
{
    random_ops(4, 3000, 300, 7);
}

TEST(RandomOperationsKeepModelAndRankInvariantsFanout8)
{
    random_ops(8, 4000, 300, 11);
}

/* The real fan-out: two levels. */
TEST(RandomOperationsKeepModelAndRankInvariantsFanout64)
{
    random_ops(KS_ZRANK_FANOUT, 10000, 120, 3);
}

/* One member per command, in and then out again in a random order: every
 * change goes through the incremental upkeep (no rebuild), so levels are
 * added by splits at the top and dropped again by merges. */
TEST(OneByOneGrowthAndShrinkAddsAndDropsLevels)
{
    setup();
    srand(5);
    small_limits(4);
    ks_zrank_b = 8;
    ks_zrewrite_slack = 1u << 30; /* no rewrite: shrinking must merge */
    model md = {0};
    enum { N = 3000 };
    int order[N];
    for (int i = 0; i < N; i++)
        order[i] = i;
    for (int i = N - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    int max_height = 0;
    for (int i = 0; i < N; i++) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof(m), "k%05d", order[i]);
        ks_zmember z = {m, ml, (double)(order[i] % 97)};
        ks_zadd_result r;
        CHECK(ks_zadd(&ctx, "z", 1, &z, 1, 0, &r) == KS_OK);
        commit();
        model_set(&md, m, ml, z.score);
        ks_zview v;
        CHECK(ks_zview_open(&ctx, "z", 1, &v) == KS_OK);
        if (v.height > max_height) max_height = v.height;
        ks_zview_close(&v);
        if (i % 100 == 99) check_against("z", &md);
    }
    CHECK(max_height >= 3);
    check_against("z", &md);
    for (int i = 0; i < N - 3; i++) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof(m), "k%05d", order[(i * 7) % N]);
        if (md.n <= 8) break; /* a big zset that small rebuilds on every change */
        ks_field f = {m, ml, NULL, 0};
        uint64_t removed;
        long j = model_find(&md, m, ml);
        CHECK(ks_zrem(&ctx, "z", 1, &f, 1, &removed) == KS_OK);
        CHECK_EQ_INT(removed, j >= 0);
        if (j >= 0) model_del(&md, j);
        commit();
        if (i % 100 == 99) check_against("z", &md);
    }
    check_against("z", &md);
    ks_zview v;
    CHECK(ks_zview_open(&ctx, "z", 1, &v) == KS_OK);
    CHECK_MSG(v.height <= 2, "height %d left after shrinking to %zu members", v.height, md.n);
    ks_zview_close(&v);
    free(md.v);
    ks_zrank_b = KS_ZRANK_FANOUT;
    ks_zrewrite_slack = KS_ZSET_REWRITE_SLACK;
    teardown();
}

/* The engine steps of a read of the first member (ZRANGE q 0 0) and of
 * the first by score (ZRANGEBYSCORE q -inf +inf LIMIT 0 1). */
static uint64_t front_read_steps(void)
{
    uint64_t s0 = ks->stat_eng_steps;
    ks_zspec first = {.by = KS_ZBY_RANK, .start = 0, .end = 0};
    CHECK(ks_zrange(&ctx, "q", 1, &first, collect_fn, &G) == KS_OK);
    CHECK(G.n == 1);
    ks_zspec sc = {.by = KS_ZBY_SCORE, .min = -INFINITY, .max = INFINITY, .limit = 1};
    CHECK(ks_zrange(&ctx, "q", 1, &sc, collect_fn, &G) == KS_OK);
    CHECK(G.n == 1);
    return ks->stat_eng_steps - s0;
}

/* A queue popped from the front (ZPOPMIN, ZREMRANGEBYSCORE -inf ..) leaves
 * a tombstone per member it popped until the zset is rewritten: the floor
 * in the record makes reads of the front seek past them. */
TEST(ReadsOfTheFrontSeekPastThePoppedMembersTombstones)
{
    setup();
    ks_zrewrite_slack = 1u << 30; /* no rewrite: only the floor can help */
    enum { N = 4000 };
    fill_queue(N);
    CHECK(ks_zpop(&ctx, &(ks_field){"q", 1, NULL, 0}, 1, 0, N / 2, pop_fn, NULL) == KS_OK);
    commit();
    uint64_t steps = front_read_steps();
    CHECK_MSG(steps <= 8, "reads of the front after ZPOPMIN of %d cost %llu steps", N / 2,
              (unsigned long long)steps);
    CHECK(G.z[0].ml == 6 && memcmp(G.z[0].m, "m02000", 6) == 0);
    ks_zspec r = {.by = KS_ZBY_SCORE, .min = -INFINITY, .max = N / 2 + 499, .limit = -1};
    uint64_t removed;
    CHECK(ks_zremrange(&ctx, "q", 1, &r, &removed) == KS_OK);
    CHECK_EQ_INT(removed, 500);
    commit();
    steps = front_read_steps();
    CHECK_MSG(steps <= 8, "reads of the front after ZREMRANGEBYSCORE -inf cost %llu steps",
              (unsigned long long)steps);
    CHECK(G.z[0].ml == 6 && memcmp(G.z[0].m, "m02500", 6) == 0);
    /* A member added below the floor is found again. */
    ks_zmember low = {"low", 3, -5};
    ks_zadd_result ar;
    CHECK(ks_zadd(&ctx, "q", 1, &low, 1, 0, &ar) == KS_OK);
    commit();
    ks_zspec two = {.by = KS_ZBY_RANK, .start = 0, .end = 1};
    CHECK(ks_zrange(&ctx, "q", 1, &two, collect_fn, &G) == KS_OK);
    CHECK(G.n == 2 && G.z[0].ml == 3 && memcmp(G.z[0].m, "low", 3) == 0);
    CHECK(G.z[1].ml == 6 && memcmp(G.z[1].m, "m02500", 6) == 0);
    uint64_t rank;
    int found;
    CHECK(ks_zrank(&ctx, "q", 1, "m03999", 6, 0, &rank, &found) == KS_OK);
    CHECK(found && rank == N - 2500);
    check_invariants("q");
    ks_zrewrite_slack = KS_ZSET_REWRITE_SLACK;
    teardown();
}

/* The pending rank log of "z": logend - logfirst. */
static uint64_t log_pending(void)
{
    ks_zview v;
    CHECK(ks_zview_open(&ctx, "z", 1, &v) == KS_OK);
    uint64_t n = v.logend - v.logfirst;
    ks_zview_close(&v);
    return n;
}

/* The height in key's record as stored (a view could build blocks). */
static int stored_height(const char *key)
{
    ks_meta m;
    ks_zext e = {0};
    CHECK(ks_meta_read(&ctx, NULL, 0, key, strlen(key), &m) == KS_OK && m.big);
    CHECK(ks_zext_parse(m.ext, m.extlen, &e) == 0);
    ks_meta_free(&m);
    return e.height;
}

/* A rank read deep into key (ZRANGE key n/2 n/2: a walk of n/2 order
 * entries without blocks), then a view, which builds the blocks it asked
 * for (KS-Z5). */
static void ask_for_blocks(const char *key, uint64_t n)
{
    ks_zspec mid = {.by = KS_ZBY_RANK, .start = (long long)n / 2, .end = (long long)n / 2};
    CHECK(ks_zrange(&ctx, key, strlen(key), &mid, collect_fn, &G) == KS_OK && G.n == 1);
    ks_zview v;
    CHECK(ks_zview_open(&ctx, key, strlen(key), &v) == KS_OK);
    CHECK_MSG(v.height >= 1, "no blocks after a rank read of %llu steps",
              (unsigned long long)n / 2);
    ks_zview_close(&v);
    commit();
}

/* KS-Z5: a zset that turns big writes member and order entries only (no
 * rank blocks, no log) and answers rank reads by walking, from the nearer
 * end; a short walk asks for nothing, a long one for blocks, which its
 * next write builds; from then on writes keep them (the rank log). */
TEST(BigZsetGetsRankBlocksOnlyWhenARankReadAsksForThem)
{
    setup();
    small_limits(4);
    model md = {0};
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof(m), "m%05d", (i * 7919) % N);
        ks_zmember z = {m, ml, (double)((i * 7919) % N % 100)};
        ks_zadd_result r;
        CHECK(ks_zadd(&ctx, "z", 1, &z, 1, 0, &r) == KS_OK);
        model_set(&md, m, ml, z.score);
        if (i % 100 == 99) commit();
    }
    commit();
    CHECK_EQ_INT(stored_height("z"), 0);
    check_invariants("z"); /* KS-Z5: no block or log entry */
    /* Ranks near either end: short walks, no blocks asked for. */
    uint64_t rank;
    int found;
    for (int k = 0; k < 8; k++) {
        size_t i = k < 4 ? (size_t)k : md.n - 1 - (size_t)k;
        CHECK(ks_zrank(&ctx, "z", 1, md.v[i].m, md.v[i].ml, 0, &rank, &found) == KS_OK);
        CHECK(found && rank == i);
        ks_zspec one = {.by = KS_ZBY_RANK, .start = (long long)i, .end = (long long)i};
        CHECK(ks_zrange(&ctx, "z", 1, &one, collect_fn, &G) == KS_OK);
        CHECK(G.n == 1 && G.z[0].ml == md.v[i].ml && memcmp(G.z[0].m, md.v[i].m, G.z[0].ml) == 0);
    }
    ks_zspec sc = {.by = KS_ZBY_SCORE, .min = 10, .max = 20, .limit = -1};
    uint64_t cnt;
    CHECK(ks_zcount(&ctx, "z", 1, &sc, &cnt) == KS_OK); /* two walks to the middle */
    CHECK_EQ_INT(cnt, 11 * (N / 100));
    /* That ZCOUNT walked far: the next write builds the blocks. */
    ks_zmember z = {"new", 3, 50.5};
    ks_zadd_result r;
    CHECK(ks_zadd(&ctx, "z", 1, &z, 1, 0, &r) == KS_OK);
    commit();
    model_set(&md, "new", 3, 50.5);
    CHECK(stored_height("z") >= 1);
    check_invariants("z");
    check_against("z", &md);
    ks_zmember z2 = {"newer", 5, 60.5};
    CHECK(ks_zadd(&ctx, "z", 1, &z2, 1, 0, &r) == KS_OK);
    commit();
    model_set(&md, "newer", 5, 60.5);
    CHECK_EQ_INT(log_pending(), 1); /* kept by the upkeep from then on */
    check_invariants("z");
    check_against("z", &md);
    free(md.v);
    teardown();
}

/* A rank read of a zset nobody writes builds the blocks at its next read
 * (through the command's batch, as lazy expiry writes). */
TEST(RankReadsOfAnUnwrittenBigZsetBuildTheBlocksOnce)
{
    setup();
    small_limits(4);
    enum { N = 2000 };
    ks_zmember in[N];
    static char names[N][24];
    for (int i = 0; i < N; i++) {
        size_t ml = (size_t)snprintf(names[i], sizeof(names[i]), "m%05d", i);
        in[i] = (ks_zmember){names[i], ml, (double)i};
    }
    ks_zadd_result r;
    CHECK(ks_zadd(&ctx, "z", 1, in, N, 0, &r) == KS_OK);
    commit();
    CHECK_EQ_INT(stored_height("z"), 0);
    ask_for_blocks("z", N);
    CHECK(stored_height("z") >= 1);
    check_invariants("z");
    uint64_t s0 = ks->stat_eng_steps, rank;
    int found;
    CHECK(ks_zrank(&ctx, "z", 1, "m01000", 6, 0, &rank, &found) == KS_OK);
    CHECK(found && rank == 1000);
    uint64_t steps = ks->stat_eng_steps - s0;
    CHECK_MSG(steps < 1000, "ZRANK with blocks took %llu steps", (unsigned long long)steps);
    teardown();
}

/* Commands that change a member or two append their rank changes to the
 * log (KS-Z4) instead of rewriting blocks; rank reads (by key and by rank,
 * deep enough to descend) add the pending changes, and the command that
 * would overfill the log folds it into the blocks (KS-Z2 holds with it
 * throughout: check_invariants). */
TEST(SingleMemberWritesWaitInTheRankLogAndRankReadsCountThem)
{
    setup();
    srand(9);
    small_limits(4);
    ks_zrank_b = 8; /* KS_ZLOG_MAX = 64 */
    model md = {0};
    ks_zmember in[600];
    char names[600][24];
    for (int i = 0; i < 600; i++) {
        size_t ml = (size_t)snprintf(names[i], sizeof(names[i]), "m%04d", i);
        in[i] = (ks_zmember){names[i], ml, (double)(i % 50)};
        model_set(&md, names[i], ml, in[i].score);
    }
    ks_zadd_result r;
    CHECK(ks_zadd(&ctx, "z", 1, in, 600, 0, &r) == KS_OK);
    commit();
    ask_for_blocks("z", 600);       /* KS-Z5: blocks, then the log */
    CHECK_EQ_INT(log_pending(), 0); /* a rebuild: nothing pending */
    uint64_t want = 0;
    int folds = 0;
    for (int step = 0; step < 400; step++) {
        char m[24];
        int k = rand() % 900, op = rand() % 3;
        size_t ml = (size_t)snprintf(m, sizeof(m), "m%04d", k);
        long j = model_find(&md, m, ml);
        uint64_t changes;
        if (op < 2) { /* ZADD: a new member (+1) or a new score (-1 +1) */
            ks_zmember z = {m, ml, (double)(rand() % 60) - 5};
            changes = j < 0 ? 1 : md.v[j].score == z.score ? 0 : 2;
            CHECK(ks_zadd(&ctx, "z", 1, &z, 1, 0, &r) == KS_OK);
            model_set(&md, m, ml, z.score);
        } else { /* ZREM: -1 */
            ks_field f = {m, ml, NULL, 0};
            uint64_t removed;
            changes = j >= 0;
            CHECK(ks_zrem(&ctx, "z", 1, &f, 1, &removed) == KS_OK);
            if (j >= 0) model_del(&md, j);
        }
        commit();
        if (want + changes > KS_ZLOG_MAX) {
            want = 0, folds++;
        } else {
            want += changes;
        }
        CHECK_EQ_INT(log_pending(), want);
        check_against("z", &md);
    }
    CHECK_MSG(folds >= 3, "the log was folded %d times", folds);
    free(md.v);
    ks_zrank_b = KS_ZRANK_FANOUT;
    teardown();
}

/* ---- The front cache (KS-Z6) ---------------------------------------------------------- */

/* ZPOPMIN q: the member it popped must be name with score. */
static void pop_one_is(const char *name, double score)
{
    CHECK(ks_zpop(&ctx, &(ks_field){"q", 1, NULL, 0}, 1, 0, 1, pop_collect_fn, &G) == KS_OK);
    CHECK_MSG(G.n == 1 && G.z[0].ml == strlen(name) && memcmp(G.z[0].m, name, G.z[0].ml) == 0 &&
                  G.z[0].score == score,
              "popped %.*s (%g), not %s (%g)", G.n ? (int)G.z[0].ml : 0, G.n ? G.z[0].m : "",
              G.n ? G.z[0].score : 0, name, score);
}

/* A queue popped one member per command seeks once per KS_ZFRONT_MAX pops,
 * not once per pop. */
TEST(ZpopminOfAQueueSeeksOncePerFrontCacheFill)
{
    setup();
    fill_queue(1000);
    uint64_t s0 = ks->stat_seeks;
    for (int i = 0; i < 600; i++) {
        char m[24];
        snprintf(m, sizeof(m), "m%05d", i);
        pop_one_is(m, i);
        commit();
    }
    uint64_t seeks = ks->stat_seeks - s0;
    CHECK_MSG(seeks <= 600 / KS_ZFRONT_MAX + 1, "600 pops made %llu seeks",
              (unsigned long long)seeks);
    check_invariants("q");
    teardown();
}

/* Every other write of the zset between two pops changes the front: a
 * member added below it, a cached member removed or moved, the key
 * replaced; the next pop must see it. */
TEST(ZpopminAfterAnotherWriteOfTheZsetSeesThatWrite)
{
    setup();
    fill_queue(1000);
    ks_zadd_result r;
    pop_one_is("m00000", 0); /* fills the cache */
    commit();
    ks_zmember low = {"low", 3, 0.5};
    CHECK(ks_zadd(&ctx, "q", 1, &low, 1, 0, &r) == KS_OK); /* below the cached front */
    commit();
    pop_one_is("low", 0.5);
    commit();
    uint64_t removed;
    CHECK(ks_zrem(&ctx, "q", 1, &(ks_field){"m00001", 6, NULL, 0}, 1, &removed) == KS_OK);
    CHECK_EQ_INT(removed, 1);
    pop_one_is("m00002", 2); /* in the same batch as the ZREM */
    ks_zmember moved = {"m00003", 6, 5000};
    CHECK(ks_zadd(&ctx, "q", 1, &moved, 1, 0, &r) == KS_OK);
    commit();
    pop_one_is("m00004", 4);
    ks_zspec first = {.by = KS_ZBY_RANK, .start = 0, .end = 0};
    CHECK(ks_zremrange(&ctx, "q", 1, &first, &removed) == KS_OK); /* m00005 */
    commit();
    pop_one_is("m00006", 6);
    commit();
    /* The key deleted and written again: a new version. */
    int deleted;
    CHECK(ks_del(&ctx, "q", 1, &deleted) == KS_OK && deleted);
    commit();
    fill_queue(300);
    pop_one_is("m00000", 0);
    commit();
    check_invariants("q");
    teardown();
}

/* A batch of pops that is not written (an engine refusal, a rollback)
 * leaves the record as it was: the next pop pops the same member again. */
TEST(ZpopminAfterARolledBackPopPopsTheSameMember)
{
    setup();
    fill_queue(1000);
    pop_one_is("m00000", 0);
    commit();
    pop_one_is("m00001", 1);
    pop_one_is("m00002", 2);
    eng_batch_clear(ctx.batch); /* not written */
    ks_ctx_reset(&ctx);
    pop_one_is("m00001", 1);
    commit();
    pop_one_is("m00002", 2);
    commit();
    check_invariants("q");
    teardown();
}

/* The version of big zset "q" (0 when it is not one). */
static uint64_t queue_version(void)
{
    ks_meta m;
    if (ks_key_read(&ctx, NULL, 0, "q", 1, KS_ZSET, &m) != KS_OK) return 0;
    uint64_t v = m.big ? m.version : 0;
    ks_meta_free(&m);
    return v;
}

/* The ext of big zset "q" as stored. */
static ks_zext queue_ext(void)
{
    ks_meta m;
    ks_zext e = {0};
    CHECK(ks_meta_read(&ctx, NULL, 0, "q", 1, &m) == KS_OK && m.big);
    CHECK(ks_zext_parse(m.ext, m.extlen, &e) == 0);
    e.floor = NULL; /* points into m */
    ks_meta_free(&m);
    return e;
}

/* Pops (or, back, ZREMs from the other end) q's members one per command
 * until q's version changes: the number of the command that rewrote it,
 * -1 when none of the first n did. */
static int removals_until_rewrite(int n, int back)
{
    uint64_t v0 = queue_version();
    CHECK(v0 != 0);
    for (int i = 0; i < n; i++) {
        char m[24];
        if (back) {
            uint64_t removed;
            size_t ml = (size_t)snprintf(m, sizeof(m), "m%05d", 3999 - i);
            CHECK(ks_zrem(&ctx, "q", 1, &(ks_field){m, ml, NULL, 0}, 1, &removed) == KS_OK);
            CHECK_EQ_INT(removed, 1);
        } else {
            snprintf(m, sizeof(m), "m%05d", i);
            pop_one_is(m, i);
        }
        commit();
        if (queue_version() != v0) return i + 1;
    }
    return -1;
}

/* A queue drained from the front leaves its tombstones below the floor,
 * where forward reads seek past them (KS-Z7): it is rewritten (every live
 * member copied under a new version) only once they outnumber its members
 * KS_ZSET_REWRITE_BELOW_RATIO times over (plus the slack). Counted with
 * the others against 3 per member, a 630k-member zset drained by ZPOPMIN
 * copied 330k members again on the way down. */
TEST(ZpopminDrainingAQueueRewritesItOnlyPastSixteenTombstonesPerMember)
{
    setup();
    fill_queue(4000);
    /* removed > 16 x count + 1024: p > 16 (4000 - p) + 1024 first at 3825 */
    int at = removals_until_rewrite(3900, 0);
    CHECK_MSG(at == 3825, "rewritten at pop %d", at);
    check_invariants("q");
    teardown();
}

/* Members moved by new scores leave their old order entries' tombstones
 * among the live ones; a pop's read of the front passes those ahead of it
 * and, once the pops reach them, counts them below the floor (KS-Z7). So
 * only the 16-per-member bound rewrites a queue drained past them: counted
 * as crossable, the 12000 moves of 4000 members rewrote it at pop 342 (a
 * benchmark's 630k-member zset, a third of its adds moves, at 122k
 * members left). */
/* fill_queue(4000), then every member moved three times, by a quarter
 * each time (12000 tombstones of order entries among the live ones); with
 * compact, the engine then drops them. */
static void fill_moved_queue(int compact)
{
    fill_queue(4000);
    ks_zadd_result r;
    for (int k = 1; k <= 3; k++) {
        for (int i = 0; i < 4000; i++) {
            char m[24];
            size_t ml = (size_t)snprintf(m, sizeof(m), "m%05d", i);
            ks_zmember z = {m, ml, i + k / 4.0};
            CHECK(ks_zadd(&ctx, "q", 1, &z, 1, 0, &r) == KS_OK && r.updated == 1);
            if (i % 500 == 499) commit();
        }
    }
    commit();
    CHECK_EQ_INT(queue_ext().removed, 12000);
    if (compact) CHECK(eng_compact_range(edb, NULL, 0, NULL, 0) == ENG_OK);
}

/* Pops the moved queue one member per command until it is rewritten: at
 * which pop (-1: not in 3400). */
static int moved_pops_until_rewrite(void)
{
    uint64_t v0 = queue_version();
    for (int i = 0; i < 3400; i++) {
        char m[24];
        snprintf(m, sizeof(m), "m%05d", i);
        pop_one_is(m, i + 0.75);
        commit();
        if (queue_version() != v0) return i + 1;
    }
    return -1;
}

TEST(ZpopminPastMovedMembersCountsTheirOldEntriesBelowTheFloor)
{
    setup();
    fill_moved_queue(0);
    int at = moved_pops_until_rewrite();
    /* removed > 16 x count + 1024: 12000 + p > 16 (4000 - p) + 1024 first at 3120 */
    CHECK_MSG(at == 3120, "rewritten at pop %d", at);
    check_invariants("q");
    teardown();
}

/* removed counts tombstones compaction has dropped: past 3 per member, the
 * ones a forward read can cross are counted (one walk) before they make a
 * rewrite, and found gone. */
TEST(ZpopminAfterCompactionDroppedTheTombstonesCountsThemBeforeRewriting)
{
    setup();
    fill_moved_queue(1);
    uint64_t s0 = ks->stat_eng_steps;
    int at = moved_pops_until_rewrite();
    CHECK_MSG(at == 3120, "rewritten at pop %d", at);
    /* at 342 (12000 > 3 (4000 - 342) + 1024), one walk of the 3658 left */
    uint64_t steps = ks->stat_eng_steps - s0;
    CHECK_MSG(steps < 3 * 4000, "%llu steps", (unsigned long long)steps);
    CHECK_EQ_INT(queue_ext().below, 0); /* the rewrite's */
    check_invariants("q");
    teardown();
}

/* Removals inside the zset leave tombstones forward reads cross: 3 per
 * member (plus the slack) still rewrite it. */
TEST(ZremOfTheLastMembersRewritesPastThreeTombstonesPerMember)
{
    setup();
    fill_queue(4000);
    /* removed > 3 x count + 1024: p > 3 (4000 - p) + 1024 first at 3257 */
    int at = removals_until_rewrite(3400, 1);
    CHECK_MSG(at == 3257, "rewritten at ZREM %d", at);
    check_invariants("q");
    teardown();
}

/* below counts the pops under the floor; a member added below the floor
 * lowers it over them, so they count as crossable again; members too long
 * for the floor to hold their whole order key are not counted. */
TEST(ZaddBelowTheFloorCountsThePoppedTombstonesAgain)
{
    setup();
    fill_queue(1000);
    CHECK(ks_zpop(&ctx, &(ks_field){"q", 1, NULL, 0}, 1, 0, 300, pop_fn, NULL) == KS_OK);
    commit();
    for (int i = 300; i < 310; i++) {
        char m[24];
        snprintf(m, sizeof(m), "m%05d", i);
        pop_one_is(m, i);
        commit();
    }
    ks_zext e = queue_ext();
    CHECK_EQ_INT(e.removed, 310);
    CHECK_EQ_INT(e.below, 310);
    ks_zmember low = {"low", 3, -1};
    ks_zadd_result r;
    CHECK(ks_zadd(&ctx, "q", 1, &low, 1, 0, &r) == KS_OK);
    commit();
    e = queue_ext();
    CHECK_EQ_INT(e.removed, 310);
    CHECK_EQ_INT(e.below, 0);
    pop_one_is("low", -1);
    commit();
    CHECK_EQ_INT(queue_ext().below, 1); /* the new floor is above that one only */
    /* 60-byte members at the front: the floor keeps 56 of their bytes */
    char lm[61];
    memset(lm, 'x', 60);
    lm[60] = 0;
    for (int i = 0; i < 3; i++) {
        lm[59] = (char)('a' + i);
        ks_zmember z = {lm, 60, -10};
        CHECK(ks_zadd(&ctx, "q", 1, &z, 1, 0, &r) == KS_OK);
    }
    commit();
    CHECK(ks_zpop(&ctx, &(ks_field){"q", 1, NULL, 0}, 1, 0, 2, pop_fn, NULL) == KS_OK);
    commit();
    e = queue_ext();
    CHECK_EQ_INT(e.below, 0);
    CHECK_EQ_INT(e.removed, 313);
    lm[59] = 'c';
    pop_one_is(lm, -10);
    pop_one_is("m00310", 310);
    commit();
    CHECK_EQ_INT(queue_ext().below, 1);
    check_invariants("q");
    teardown();
}

/* The engine steps of ZRANGE* q r, which must return n members, the
 * lowest with score least. */
static uint64_t range_steps(const ks_zspec *r, size_t n, double least)
{
    uint64_t s0 = ks->stat_eng_steps;
    CHECK(ks_zrange(&ctx, "q", 1, r, collect_fn, &G) == KS_OK);
    CHECK_MSG(G.n == n, "%zu members, not %zu", G.n, n);
    if (n) CHECK(G.z[r->rev ? n - 1 : 0].score == least);
    return ks->stat_eng_steps - s0;
}

/* The popped members' tombstones lie below the first live member: reads
 * backwards to it (ZREVRANGE q 0 -1, ZREVRANGEBYSCORE q +inf -inf, one
 * whose maximum is below the floor) stop there, and COPY, ZSCAN and rank
 * reads (the blocks built from the floor on) see exactly the live
 * members. */
TEST(ReadsAfterManyPopsSeeTheLiveMembersWithoutWalkingTheTombstones)
{
    setup();
    ks_zrewrite_slack = 1u << 30; /* no rewrite */
    enum { N = 5000, P = 3000 };
    fill_queue(N);
    for (int i = 0; i < P; i += 100)
        CHECK(ks_zpop(&ctx, &(ks_field){"q", 1, NULL, 0}, 1, 0, 100, pop_fn, NULL) == KS_OK);
    commit();
    ks_zspec fwd = {.by = KS_ZBY_RANK, .start = 0, .end = -1};
    uint64_t base = range_steps(&fwd, N - P, P); /* from the floor: no tombstone */
    ks_zspec all = {.by = KS_ZBY_RANK, .rev = 1, .start = 0, .end = -1};
    ks_zspec sc = {.by = KS_ZBY_SCORE, .rev = 1, .min = -INFINITY, .max = INFINITY, .limit = -1};
    ks_zspec hi = {.by = KS_ZBY_SCORE, .rev = 1, .min = -INFINITY, .max = N, .limit = -1};
    ks_zspec off = {.by = KS_ZBY_SCORE,
                    .rev = 1,
                    .min = -INFINITY,
                    .max = INFINITY,
                    .offset = N - P - 1,
                    .limit = 5};
    ks_zspec offhi = off;
    offhi.max = N;
    ks_zlex lmin = {NULL, 0, 0, -1}, lmax = {NULL, 0, 0, 1};
    ks_zspec lex = {.by = KS_ZBY_LEX, .rev = 1, .lmin = lmin, .lmax = lmax, .limit = -1};
    const ks_zspec *rev[] = {&all, &sc, &hi, &off, &offhi, &lex};
    for (size_t i = 0; i < sizeof(rev) / sizeof(rev[0]); i++) {
        uint64_t steps = range_steps(rev[i], rev[i]->offset ? 1 : N - P, P);
        /* a step back costs two (the engine looks at the entry after) */
        CHECK_MSG(steps <= 2 * base + 16, "backward read %zu cost %llu steps, forward %llu", i,
                  (unsigned long long)steps, (unsigned long long)base);
    }
    ks_zspec low = {.by = KS_ZBY_SCORE, .rev = 1, .min = -INFINITY, .max = P - 1, .limit = -1};
    CHECK(range_steps(&low, 0, 0) <= 16);
    model md = {0};
    for (int i = P; i < N; i++) {
        char m[24];
        size_t ml = (size_t)snprintf(m, sizeof(m), "m%05d", i);
        model_set(&md, m, ml, i);
    }
    int done;
    CHECK(ks_copy(&ctx, "q", 1, 0, "c", 1, 0, &done) == KS_OK && done);
    commit();
    check_against("c", &md);
    uint64_t cursor = 0, seen = 0;
    int listpack;
    do {
        CHECK(ks_zscan(&ctx, "q", 1, cursor, NULL, 0, 100, collect_fn, &G, &listpack, &cursor) ==
              KS_OK);
        for (size_t i = 0; i < G.n; i++)
            CHECK(G.z[i].score >= P);
        seen += G.n;
    } while (cursor);
    CHECK_EQ_INT(seen, N - P);
    uint64_t s0 = ks->stat_eng_steps;
    ask_for_blocks("q", N - P);
    uint64_t steps = ks->stat_eng_steps - s0;
    CHECK_MSG(steps <= 4 * (N - P), "building the blocks cost %llu steps",
              (unsigned long long)steps);
    check_against("q", &md);
    /* With blocks, pops go through the rank log: a COPY of an ext with
     * both the log and below. */
    for (int i = P; i < P + 10; i++) {
        char m[24];
        snprintf(m, sizeof(m), "m%05d", i);
        pop_one_is(m, i);
        model_del(&md, 0);
    }
    commit();
    ks_zext e = queue_ext();
    CHECK(e.logend > e.logfirst && e.below == P + 10);
    CHECK(ks_copy(&ctx, "q", 1, 0, "d", 1, 0, &done) == KS_OK && done);
    commit();
    check_against("d", &md);
    check_against("q", &md);
    /* A backward read whose offset the blocks skip stops at the first too. */
    ks_zspec far = {.by = KS_ZBY_SCORE,
                    .rev = 1,
                    .min = -INFINITY,
                    .max = INFINITY,
                    .offset = 300,
                    .limit = -1};
    steps = range_steps(&far, N - P - 10 - 300, P + 10);
    CHECK_MSG(steps <= 2 * base + 64, "backward read past blocks cost %llu steps, forward %llu",
              (unsigned long long)steps, (unsigned long long)base);
    free(md.v);
    ks_zrewrite_slack = KS_ZSET_REWRITE_SLACK;
    teardown();
}

/* A vector of one member keeps it inline (ks_zmvec.one): a vector moved
 * by value (ZUNION's accumulator into its result, ZRANDMEMBER's draws)
 * kept pointing at the source's slot, which the source's next use
 * overwrites. */
TEST(ZmvecMovedWithOneMemberKeepsItsMember)
{
    ks_zmvec a, b;
    ks_zmvec_init(&a);
    ks_zmvec_init(&b);
    CHECK(ks_zmvec_push(&a, "x", 1, 1.5, 1) == 0);
    ks_zmvec_move(&b, &a);
    CHECK(a.n == 0);
    CHECK(ks_zmvec_push(&a, "yy", 2, 7, 1) == 0); /* the source reused */
    CHECK(b.n == 1 && b.v[0].ml == 1 && b.v[0].score == 1.5);
    CHECK_MEM(b.v[0].m, 1, "x");
    CHECK(ks_zmvec_push(&b, "z", 1, 2, 1) == 0); /* grows out of the slot */
    CHECK(b.n == 2 && b.v[0].score == 1.5 && b.v[1].score == 2);
    CHECK_MEM(b.v[0].m, 1, "x");
    ks_zmvec_free(&a);
    ks_zmvec_free(&b);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
