/*
 * ks_set_test.c -- sets over a real engine: packed and big encodings and
 * Redis's encoding rules, member keys under the set's version, random
 * members (distinct, uniform on small sets), the STORE commands reading
 * their sources before writing, and the KS-E1 repair of a big set whose
 * record compaction dropped.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/ks_set.h"
#include "keyspace/ks_type.h"
#include "test.h"
#include "ks_fixture.h"
#include "test_rng.h"

static void limit_intset(long long n)
{
    ks_limits l;
    ks_limits_init(&l);
    l.set_max_intset_entries = n;
    ks_set_limits(ks, &l);
}

/* SADD of members "<prefix><i>" for i in [from, to). */
static void sadd_range(const char *key, const char *prefix, int from, int to)
{
    int n = to - from;
    ks_field *m = calloc((size_t)n, sizeof(*m));
    char(*b)[24] = calloc((size_t)n, 24);
    for (int i = 0; i < n; i++) {
        snprintf(b[i], 24, "%s%d", prefix, from + i);
        m[i] = (ks_field){b[i], strlen(b[i]), NULL, 0};
    }
    uint64_t added;
    CHECK(ks_sadd(&ctx, key, strlen(key), m, (size_t)n, &added) == KS_OK);
    commit();
    free(m);
    free(b);
}

static const char *encoding(const char *key)
{
    const char *enc = NULL;
    ks_status st = ks_object_encoding(&ctx, key, strlen(key), &enc);
    return st == KS_OK ? enc : "none";
}

static uint64_t scard(const char *key)
{
    uint64_t n = 0;
    ks_scard(&ctx, key, strlen(key), &n);
    return n;
}

typedef struct got {
    char buf[4096];
    size_t len, n;
} got;

static void collect(void *arg, const ks_field *f, size_t n)
{
    got *g = arg;
    g->n = n;
    g->len = 0;
    for (size_t i = 0; i < n && g->len + f[i].fl + 1 < sizeof(g->buf); i++) {
        memcpy(g->buf + g->len, f[i].f, f[i].fl);
        g->len += f[i].fl;
        g->buf[g->len++] = ',';
    }
    g->buf[g->len] = 0;
}

TEST(SmallIntegerSetIsPackedInNumericOrderUntilTheLimit)
{
    setup();
    ks_field m[4] = {{"10", 2}, {"-3", 2}, {"7", 1}, {"10", 2}};
    uint64_t added;
    CHECK(ks_sadd(&ctx, "s", 1, m, 4, &added) == KS_OK && added == 3);
    commit();
    got g = {0};
    CHECK(ks_smembers(&ctx, "s", 1, collect, &g) == KS_OK);
    CHECK(strcmp(g.buf, "-3,7,10,") == 0);
    CHECK(strcmp(encoding("s"), "intset") == 0);
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    limit_intset(20);
    sadd_range("s", "", 100, 117); /* 20 members: still an intset */
    CHECK(strcmp(encoding("s"), "intset") == 0 && count_engine_keys('d') == 0);
    sadd_range("s", "", 200, 201); /* 21: past the limit, big */
    CHECK(strcmp(encoding("s"), "hashtable") == 0);
    CHECK_EQ_INT(count_engine_keys('d'), 21);
    CHECK_EQ_INT(scard("s"), 21);
    teardown();
}

TEST(NonIntegerMemberMakesAHashtableThatStays)
{
    setup();
    ks_field m[2] = {{"1", 1}, {"x", 1}};
    uint64_t n;
    CHECK(ks_sadd(&ctx, "s", 1, m, 1, &n) == KS_OK && n == 1);
    CHECK(strcmp(encoding("s"), "intset") == 0);
    CHECK(ks_sadd(&ctx, "s", 1, m + 1, 1, &n) == KS_OK && n == 1);
    CHECK(strcmp(encoding("s"), "hashtable") == 0);
    CHECK(ks_srem(&ctx, "s", 1, m + 1, 1, &n) == KS_OK && n == 1);
    CHECK(strcmp(encoding("s"), "hashtable") == 0); /* as Redis: no way back */
    CHECK(ks_srem(&ctx, "s", 1, m, 1, &n) == KS_OK && n == 1);
    commit();
    ks_type t;
    CHECK(ks_type_of(&ctx, "s", 1, &t) == KS_OK && t == KS_NONE);
    CHECK_EQ_INT(ks_dbsize(&ctx), 0);
    teardown();
}

TEST(BigSetMembersAreReadWrittenAndPoppedOneByOne)
{
    setup();
    limit_intset(0);
    sadd_range("b", "m", 0, 3000);
    CHECK_EQ_INT(count_engine_keys('d'), 3000);
    ks_field probe[3] = {{"m5", 2}, {"m2999", 5}, {"m3000", 5}};
    int out[3];
    CHECK(ks_sismember(&ctx, "b", 1, probe, 3, out) == KS_OK);
    CHECK(out[0] == 1 && out[1] == 1 && out[2] == 0);
    got g = {0};
    CHECK(ks_spop(&ctx, "b", 1, 50, collect, &g) == KS_OK && g.n == 50);
    commit();
    CHECK_EQ_INT(scard("b"), 2950);
    CHECK_EQ_INT(count_engine_keys('d'), 2950);
    /* SRANDMEMBER with a positive count: distinct members. */
    CHECK(ks_srandmember(&ctx, "b", 1, 100, 1, collect, &g) == KS_OK && g.n == 100);
    int del;
    CHECK(ks_del(&ctx, "b", 1, &del) == KS_OK && del);
    commit();
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    teardown();
}

static uint64_t version_of(const char *key)
{
    ks_meta m;
    CHECK(ks_meta_read(&ctx, NULL, 0, key, strlen(key), &m) == KS_OK);
    uint64_t v = m.big ? m.version : 0;
    ks_meta_free(&m);
    return v;
}

/* Removed members leave tombstones that seeks must step over; once they
 * outnumber the live ones (plus the slack) the set is written again under
 * a new version, so popping a big set down to nothing stays cheap. */
TEST(BigSetIsRewrittenWhenRemovalsOutnumberItsMembers)
{
    setup();
    limit_intset(0);
    sadd_range("b", "m", 0, 5000);
    uint64_t v0 = version_of("b");
    got g = {0};
    for (int i = 0; i < 25; i++) { /* 2500 removed, 2500 left: not yet */
        CHECK(ks_spop(&ctx, "b", 1, 100, collect, &g) == KS_OK && g.n == 100);
        commit();
    }
    CHECK(version_of("b") == v0);
    CHECK(ks_spop(&ctx, "b", 1, 100, collect, &g) == KS_OK && g.n == 100);
    commit(); /* 2600 removed > 2400 + 64 (the slack) */
    CHECK(version_of("b") != v0 && version_of("b") != 0);
    CHECK_EQ_INT(scard("b"), 2400);
    CHECK_EQ_INT(count_engine_keys('d'), 2400);
    CHECK(strcmp(encoding("b"), "hashtable") == 0);
    /* Down to a packed set: the encoding Redis reports does not change. */
    limit_intset(1000);
    for (int i = 0; i < 15; i++) {
        CHECK(ks_spop(&ctx, "b", 1, 100, collect, &g) == KS_OK && g.n == 100);
        commit();
    }
    CHECK(ks_spop(&ctx, "b", 1, 10, collect, &g) == KS_OK && g.n == 10);
    commit();
    CHECK_EQ_INT(scard("b"), 890);
    CHECK(strcmp(encoding("b"), "hashtable") == 0);
    teardown();
}

/* Counts how often each of n small members comes back in draws of
 * SRANDMEMBER -count; every one within 25% of the expected share. */
static void check_uniform(const char *key, int n, int draws)
{
    typedef struct {
        int n;
        int hits[64];
    } hist;
    hist h = {n, {0}};
    got g = {0};
    int left = draws;
    while (left > 0) {
        int k = left < 200 ? left : 200;
        CHECK(ks_srandmember(&ctx, key, strlen(key), (uint64_t)k, 0, collect, &g) == KS_OK);
        for (char *p = g.buf; *p; p = strchr(p, ',') + 1)
            h.hits[atoi(p + 1)]++; /* members are "m<i>" */
        left -= k;
    }
    for (int i = 0; i < n; i++)
        CHECK_MSG(h.hits[i] > draws / n * 3 / 4 && h.hits[i] < draws / n * 5 / 4,
                  "member %d drawn %d times of %d", i, h.hits[i], draws);
}

TEST(RandomMembersOfSmallSetsAreUniform)
{
    setup();
    sadd_range("packed", "m", 0, 10);
    check_uniform("packed", 10, 20000);
    limit_intset(0);
    sadd_range("big", "m", 0, 10);
    CHECK(strcmp(encoding("big"), "hashtable") == 0 && count_engine_keys('d') == 10);
    check_uniform("big", 10, 20000);
    teardown();
}

TEST(StoreIntoOneOfItsSourcesReadsThemFirst)
{
    setup();
    limit_intset(8);
    sadd_range("a", "", 0, 30);
    sadd_range("b", "", 20, 50);
    ks_field keys[2] = {{"a", 1}, {"b", 1}};
    uint64_t card;
    CHECK(ks_setop(&ctx, KS_SUNION, keys, 2, "a", 1, 0, NULL, NULL, &card) == KS_OK);
    CHECK_EQ_INT(card, 50);
    commit();
    CHECK_EQ_INT(scard("a"), 50);
    CHECK(ks_setop(&ctx, KS_SINTER, keys, 2, "a", 1, 0, NULL, NULL, &card) == KS_OK);
    commit();
    CHECK_EQ_INT(card, 30);
    CHECK_EQ_INT(count_engine_keys('d'), 60); /* the replaced versions are gone */
    CHECK(ks_setop(&ctx, KS_SDIFF, keys, 2, "a", 1, 0, NULL, NULL, &card) == KS_OK);
    commit();
    CHECK_EQ_INT(card, 0);
    ks_type t;
    CHECK(ks_type_of(&ctx, "a", 1, &t) == KS_OK && t == KS_NONE);
    teardown();
}

TEST(CompactionDroppedBigSetIsRepairedByActiveExpiry)
{
    setup();
    limit_intset(0);
    sadd_range("big", "m", 0, 500);
    int done;
    CHECK(ks_expire_set(&ctx, "big", 3, ctx.now_ms + 10, 0, &done) == KS_OK && done);
    commit();
    /* What compaction does: the filter drops the expired record only. */
    ks_ekey k;
    ks_ekey_meta(&k, 0, "big", 3);
    char *v;
    size_t vl;
    CHECK(eng_get(edb, NULL, k.p, k.n, &v, &vl) == ENG_OK);
    CHECK(ks_compaction_filter(NULL, k.p, k.n, v, vl) == 1);
    eng_free(v);
    eng_batch_delete(ctx.batch, k.p, k.n);
    ks_ekey_free(&k);
    commit();
    CHECK_EQ_INT(count_engine_keys('d'), 500);
    ctx.now_ms += 100;
    ks_active_expire(&ctx, 100, 100000);
    commit();
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    CHECK_EQ_INT(count_engine_keys('e'), 0);
    CHECK_EQ_INT(ks_dbsize(&ctx), 0);
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}

/* Pops one at a time (SPOP without a count, the draws that keep their
 * window's other members for the next pops) left times, until the set is
 * empty: seen[i] marks member "m<i>" (i < n) popped, and no pop may return
 * one twice. */
static void pop_all_one_by_one(const char *key, int left, int n, unsigned char *seen)
{
    for (; left > 0; left--) {
        got g = {0};
        CHECK(ks_spop(&ctx, key, strlen(key), 1, collect, &g) == KS_OK && g.n == 1);
        commit();
        int i = atoi(g.buf + 1);
        CHECK_MSG(i >= 0 && i < n && !seen[i], "popped %.40s twice or out of range", g.buf);
        seen[i] = 1;
        CHECK_EQ_INT(scard(key), (uint64_t)left - 1);
    }
}

TEST(SingleSpopsDrainABigSetOnceEachThroughTheKeptWindow)
{
    setup();
    limit_intset(0);
    enum { N = 2000 };
    static unsigned char seen[N];
    memset(seen, 0, sizeof(seen));
    sadd_range("b", "m", 0, N);
    pop_all_one_by_one("b", N, N, seen);
    ks_type t;
    CHECK(ks_type_of(&ctx, "b", 1, &t) == KS_OK && t == KS_NONE);
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    teardown();
}

/* A pop whose batch is thrown away (a command that failed later) leaves
 * its member in the set and the window's expectation one removal ahead;
 * an SREM of a kept member then makes the record match it again. The kept
 * member must not be popped a second time (it is checked with a get). */
TEST(SpopDoesNotPopAKeptMemberRemovedAfterARolledBackPop)
{
    setup();
    limit_intset(0);
    enum { N = 500 };
    static unsigned char seen[N];
    memset(seen, 0, sizeof(seen));
    sadd_range("b", "m", 0, N);
    got g = {0};
    CHECK(ks_spop(&ctx, "b", 1, 1, collect, &g) == KS_OK && g.n == 1);
    eng_batch_clear(ctx.batch); /* rolled back: nothing written */
    ks_ctx_reset(&ctx);
    CHECK_EQ_INT(scard("b"), N);
    const ks_spop_keep *k = &ks->spop;
    CHECK(k->n > 0);
    char victim[32];
    size_t vl = k->len[0] < sizeof(victim) ? k->len[0] : sizeof(victim) - 1;
    memcpy(victim, k->buf + k->off[0], vl);
    victim[vl] = 0;
    ks_field f = {victim, vl, NULL, 0};
    uint64_t removed;
    CHECK(ks_srem(&ctx, "b", 1, &f, 1, &removed) == KS_OK && removed == 1);
    commit();
    seen[atoi(victim + 1)] = 1;
    pop_all_one_by_one("b", N - 1, N, seen); /* would pop the victim, or miss one */
    teardown();
}

/* SPOP without a count on a big set small enough to be sampled exactly
 * keeps the rest of the set: the next pops draw uniformly among them. */
TEST(SingleSpopsOfASmallBigSetAreUniform)
{
    setup();
    limit_intset(0);
    int hits[10] = {0};
    enum { ROUNDS = 3000 };
    for (int r = 0; r < ROUNDS; r++) {
        sadd_range("b", "m", 0, 10);
        for (int i = 0; i < 2; i++) { /* the first pop and one from the kept rest */
            got g = {0};
            CHECK(ks_spop(&ctx, "b", 1, 1, collect, &g) == KS_OK && g.n == 1);
            commit();
            if (i == 1) hits[atoi(g.buf + 1)]++;
        }
        int del;
        CHECK(ks_del(&ctx, "b", 1, &del) == KS_OK && del);
        commit();
    }
    for (int i = 0; i < 10; i++)
        CHECK_MSG(hits[i] > ROUNDS / 10 * 3 / 4 && hits[i] < ROUNDS / 10 * 5 / 4,
                  "member %d popped second %d times of %d", i, hits[i], ROUNDS);
    teardown();
}

/* Single SPOPs empty the set's hole (KS-T1): a drain writes no new
 * version, however many members it pops, where counting the pops' tombstones
 * as a draw's would have rewritten the set at half its size and again at
 * each halving. What is left reads back whole. */
TEST(SingleSpopsDrainABigSetWithoutRewritingIt)
{
    setup();
    limit_intset(0);
    enum { N = 3000, LEFT = 300 };
    static unsigned char seen[N];
    memset(seen, 0, sizeof(seen));
    sadd_range("b", "m", 0, N);
    uint64_t v0 = version_of("b");
    for (int i = 0; i < N - LEFT; i++) {
        got g = {0};
        CHECK(ks_spop(&ctx, "b", 1, 1, collect, &g) == KS_OK && g.n == 1);
        commit();
        CHECK_MSG(!seen[atoi(g.buf + 1)], "popped %.40s twice", g.buf);
        seen[atoi(g.buf + 1)] = 1;
    }
    CHECK_EQ_INT(version_of("b"), v0);
    CHECK_EQ_INT(scard("b"), LEFT);
    ks_fvec all;
    ks_fvec_init(&all);
    ks_sview v;
    CHECK(ks_sview_open(&ctx, "b", 1, 0, &v) == KS_OK);
    CHECK(ks_sview_all(&ctx, &v, &all) == KS_OK);
    CHECK_EQ_INT(all.n, LEFT);
    for (size_t i = 0; i < all.n; i++) {
        char m[24];
        snprintf(m, sizeof(m), "%.*s", (int)all.v[i].fl, all.v[i].f);
        CHECK_MSG(!seen[atoi(m + 1)], "popped member %s still listed", m);
        seen[atoi(m + 1)] = 1;
    }
    ks_sview_close(&v);
    ks_fvec_free(&all);
    for (int i = 0; i < N; i++)
        CHECK_MSG(seen[i], "member m%d neither popped nor listed", i);
    teardown();
}

typedef struct model_set {
    unsigned char in[4000];
    unsigned char met[4000];
    size_t n, dup, bad;
} model_set;

static void model_visit(void *arg, const ks_field *f, size_t n)
{
    model_set *s = arg;
    for (size_t i = 0; i < n; i++) {
        char m[24];
        snprintf(m, sizeof(m), "%.*s", (int)f[i].fl, f[i].f);
        int j = atoi(m + 1);
        if (j < 0 || j >= 4000 || !s->in[j]) s->bad++;
        if (j >= 0 && j < 4000 && s->met[j]++) s->dup++;
        s->n++;
    }
}

/* Every read of the set against the model: SMEMBERS and a whole SSCAN
 * list each live member once, SISMEMBER agrees, SCARD counts. */
static void check_against(model_set *s, size_t live)
{
    memset(s->met, 0, sizeof(s->met));
    s->n = s->dup = s->bad = 0;
    CHECK(ks_smembers(&ctx, "b", 1, model_visit, s) == KS_OK);
    CHECK_MSG(s->n == live && !s->dup && !s->bad, "smembers: %zu of %zu, %zu twice, %zu gone", s->n,
              live, s->dup, s->bad);
    memset(s->met, 0, sizeof(s->met));
    s->n = s->dup = s->bad = 0;
    uint64_t cur = 0;
    do
        CHECK(ks_sscan(&ctx, "b", 1, cur, NULL, 0, 37, model_visit, s, &cur) == KS_OK);
    while (cur);
    CHECK_MSG(s->n == live && !s->bad, "sscan: %zu of %zu, %zu gone", s->n, live, s->bad);
    CHECK_EQ_INT(scard("b"), live);
    for (int k = 0; k < 50; k++) {
        int j = (int)rn(4000), r = -1;
        char m[24];
        snprintf(m, sizeof(m), "m%d", j);
        ks_field f = {m, strlen(m), NULL, 0};
        CHECK(ks_sismember(&ctx, "b", 1, &f, 1, &r) == KS_OK && r == s->in[j]);
    }
}

/* SPOPs that grow the hole, mixed with SADDs (some into the hole, some
 * next to its tail), SREMs (the tail among them, now and then) and SPOPs
 * with a count: KS-T1 must hold through all of them, or a walk that skips
 * the hole would miss a member or list a popped one. */
static void model_run(uint64_t seed)
{
    int del;
    CHECK(ks_del(&ctx, "b", 1, &del) == KS_OK);
    commit();
    rng = seed;
    static model_set s;
    memset(&s, 0, sizeof(s));
    sadd_range("b", "m", 0, 2000);
    size_t live = 2000;
    for (int i = 0; i < 2000; i++)
        s.in[i] = 1;
    for (int op = 0; op < 3000 && live > 100; op++) {
        unsigned what = rn(10);
        got g = {0};
        if (what < 7) {
            CHECK(ks_spop(&ctx, "b", 1, 1, collect, &g) == KS_OK && g.n == 1);
            int j = atoi(g.buf + 1);
            CHECK_MSG(s.in[j], "popped m%d, not a member", j);
            s.in[j] = 0;
            live--;
        } else if (what < 9) {
            int j = (int)rn(4000);
            char m[24];
            snprintf(m, sizeof(m), "m%d", j);
            ks_field f = {m, strlen(m), NULL, 0};
            uint64_t n;
            CHECK((what == 7 ? ks_sadd(&ctx, "b", 1, &f, 1, &n)
                             : ks_srem(&ctx, "b", 1, &f, 1, &n)) == KS_OK);
            CHECK_EQ_INT(n, what == 7 ? !s.in[j] : s.in[j]);
            if (n) live += what == 7 ? 1 : -1;
            s.in[j] = what == 7;
        } else {
            CHECK(ks_spop(&ctx, "b", 1, 3, collect, &g) == KS_OK && g.n == 3);
            for (char *p = g.buf; *p; p = strchr(p, ',') + 1) {
                int j = atoi(p + 1);
                CHECK_MSG(s.in[j], "popped m%d, not a member", j);
                s.in[j] = 0;
                live--;
            }
        }
        commit();
        if (op % 250 == 0) check_against(&s, live);
    }
    check_against(&s, live);
}

TEST(SetReadsAgreeWithAModelWhileSpopsGrowTheHole)
{
    setup();
    limit_intset(0);
    for (uint64_t seed = 1; seed <= 6; seed++)
        model_run(0x5eed5e75u * seed);
    teardown();
}
