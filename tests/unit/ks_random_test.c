/*
 * ks_random_test.c -- RANDOMKEY's draw is about uniform over the live keys
 * of the db: small dbs (exact draw) and big ones (the rejection walk),
 * with deleted big hashes, keys that are prefixes of other keys, short and
 * long keys mixed, and expired keys. The bounds are loose (several
 * standard deviations) yet far from what a draw that is uniform over trie
 * branches instead of keys gives.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"
#include "test.h"
#include "ks_fixture.h"

static void set(const char *k, int64_t expire_ms)
{
    ks_set_opts o = {0};
    o.expire_ms = expire_ms;
    int done;
    CHECK(ks_set(&ctx, k, strlen(k), "v", 1, &o, &done, NULL) == KS_OK && done);
}

/* Draws n keys; counts[i] += draws of keys[i]; fails on a key not listed. */
static void draw(const char *const *keys, size_t nkeys, uint64_t *counts, int n)
{
    for (int i = 0; i < n; i++) {
        char *k;
        size_t kl;
        CHECK(ks_randomkey(&ctx, &k, &kl) == KS_OK);
        size_t j = 0;
        while (j < nkeys && !(strlen(keys[j]) == kl && memcmp(keys[j], k, kl) == 0))
            j++;
        CHECK_MSG(j < nkeys, "drew '%.*s', not a live key", (int)kl, k);
        counts[j]++;
        free(k);
    }
}

/* Pearson's statistic of counts against equal expectations. */
static double chi2(const uint64_t *counts, size_t n, double draws)
{
    double e = draws / (double)n, x = 0;
    for (size_t i = 0; i < n; i++)
        x += ((double)counts[i] - e) * ((double)counts[i] - e) / e;
    return x;
}

TEST(TwoKeysAfterDeletingABigHashAreDrawnAboutEquallyOften)
{
    setup();
    ks_field f[500];
    char names[500][8];
    for (int i = 0; i < 500; i++) {
        snprintf(names[i], sizeof(names[i]), "f%d", i);
        f[i] = (ks_field){names[i], strlen(names[i]), "v", 1};
    }
    uint64_t added;
    CHECK(ks_hset(&ctx, "h", 1, f, 500, 0, &added) == KS_OK && added == 500);
    set("foo", 0);
    set("bar", 0);
    commit();
    int deleted;
    CHECK(ks_del(&ctx, "h", 1, &deleted) == KS_OK && deleted);
    commit();
    const char *keys[] = {"foo", "bar"};
    uint64_t counts[2] = {0};
    draw(keys, 2, counts, 2000);
    /* Expected 1000 each, standard deviation 22. */
    CHECK_MSG(counts[0] > 850 && counts[1] > 850, "foo %llu bar %llu",
              (unsigned long long)counts[0], (unsigned long long)counts[1]);
    teardown();
}

TEST(PrefixKeysAndSiblingsInASmallDbAreDrawnUniformly)
{
    setup();
    static const char *keys[] = {"a",   "ab",  "abc", "abcd", "abcde", "b",   "x1",
                                 "x2",  "x3",  "x10", "x11",  "x100",  "y",   "yy",
                                 "yyy", "z:1", "z:2", "z:3",  "z:4",   "z:5", ""};
    size_t n = sizeof(keys) / sizeof(keys[0]);
    for (size_t i = 0; i < n; i++)
        set(keys[i], 0);
    commit();
    uint64_t counts[32] = {0};
    draw(keys, n, counts, 21000);
    /* 20 degrees of freedom: mean 20, standard deviation 6.3. */
    double x = chi2(counts, n, 21000);
    CHECK_MSG(x < 60, "chi-square %.1f over %zu keys", x, n);
    teardown();
}

/* A db above the exact-draw size: 2990 decimal ids under "k:", whose trie
 * gives the short ids whole branches of their own, and 10 one-byte keys. */
TEST(ShortAndLongKeysInABigDbAreDrawnUniformly)
{
    setup();
    static char names[3000][8];
    const char *keys[3000];
    for (int i = 0; i < 2990; i++) {
        snprintf(names[i], sizeof(names[i]), "k:%d", i + 1);
        keys[i] = names[i];
    }
    for (int i = 0; i < 10; i++) {
        names[2990 + i][0] = (char)('a' + i);
        keys[2990 + i] = names[2990 + i];
    }
    for (int i = 0; i < 3000; i++)
        set(keys[i], 0);
    commit();
    static uint64_t counts[3000];
    const int draws = 12000;
    draw(keys, 3000, counts, draws);
    uint64_t one_byte = 0, short_ids = 0, bucket[10] = {0};
    for (int i = 0; i < 3000; i++) {
        if (i >= 2990)
            one_byte += counts[i];
        else
            bucket[i % 10] += counts[i];
        if (i < 99) short_ids += counts[i]; /* k:1 .. k:99 */
    }
    /* Expected: 40 one-byte keys, 396 short ids, 1196 per bucket. */
    CHECK_MSG(one_byte < 100, "one-byte keys drawn %llu times", (unsigned long long)one_byte);
    CHECK_MSG(short_ids > 250 && short_ids < 600, "k:1..k:99 drawn %llu times",
              (unsigned long long)short_ids);
    double x = chi2(bucket, 10, (double)(draws - (int)one_byte));
    CHECK_MSG(x < 40, "chi-square %.1f over the last digit", x);
    teardown();
}

TEST(ExpiredKeysAreNeverDrawnAndTheLiveOnesAreUniform)
{
    setup();
    static const char *live[] = {"l0", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9"};
    char name[16];
    for (int i = 0; i < 10; i++) {
        set(live[i], 0);
        snprintf(name, sizeof(name), "e%d", i);
        set(name, ctx.now_ms + 1000);
    }
    commit();
    ctx.now_ms += 5000; /* the e* keys have expired (no active cycle here) */
    uint64_t counts[10] = {0};
    draw(live, 10, counts, 5000);
    double x = chi2(counts, 10, 5000);
    CHECK_MSG(x < 40, "chi-square %.1f", x);
    teardown();
}

TEST(EmptyDbHasNoRandomKey)
{
    setup();
    char *k;
    size_t kl;
    CHECK(ks_randomkey(&ctx, &k, &kl) == KS_NOTFOUND);
    set("only", 1);
    commit();
    CHECK(ks_randomkey(&ctx, &k, &kl) == KS_NOTFOUND); /* expired */
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
