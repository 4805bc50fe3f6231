/*
 * eng_cache_test.c -- cache.c: LRU eviction within the capacity, handles
 * keeping entries alive, replacement, erase by file, counters, threads.
 */
#include "test.h"

#include <pthread.h>

#include "engine/cache.h"

static int deleted; /* values freed by the cache (atomic in the thread test) */
static void del(void *v)
{
    __atomic_fetch_add(&deleted, 1, __ATOMIC_RELAXED);
    free(v);
}

static void *val(int x)
{
    int *p = malloc(sizeof(int));
    *p = x;
    return p;
}

static void put(block_cache *c, uint64_t file, uint64_t off, int x, size_t charge)
{
    cache_release(c, cache_insert(c, file, off, val(x), charge, del));
}

static int get(block_cache *c, uint64_t file, uint64_t off)
{
    cache_handle *h = cache_lookup(c, file, off);
    if (!h) return -1;
    int x = *(int *)cache_value(h);
    cache_release(c, h);
    return x;
}

TEST(LookupFindsInsertedAndCountsHitsAndMisses)
{
    deleted = 0;
    block_cache *c = cache_new(1 << 20);
    put(c, 1, 0, 10, 100);
    put(c, 1, 4096, 11, 100);
    put(c, 2, 0, 20, 100);
    CHECK_EQ_INT(get(c, 1, 0), 10);
    CHECK_EQ_INT(get(c, 1, 4096), 11);
    CHECK_EQ_INT(get(c, 2, 0), 20);
    CHECK_EQ_INT(get(c, 2, 4096), -1);
    CHECK_EQ_INT(cache_hits(c), 3);
    CHECK_EQ_INT(cache_misses(c), 1);
    CHECK_EQ_INT(cache_usage(c), 300);
    CHECK_EQ_INT(cache_capacity(c), 1 << 20);
    cache_free(c);
    CHECK_EQ_INT(deleted, 3);
}

TEST(EvictionKeepsUsageUnderCapacityAndSparesRecentlyUsed)
{
    deleted = 0;
    block_cache *c = cache_new(16 * 1000);
    put(c, 9, 0, 0, 100);
    for (int i = 1; i < 2000; i++) {
        put(c, 1, (uint64_t)i * 4096, i, 100);
        CHECK(cache_usage(c) <= 16 * 1000);
        CHECK_EQ_INT(get(c, 9, 0), 0); /* touched every time: never the LRU entry */
    }
    CHECK(deleted > 1500);
    CHECK(get(c, 1, 4096) == -1);               /* the oldest went first */
    CHECK_EQ_INT(get(c, 1, 1999 * 4096), 1999); /* the newest stays */
    cache_free(c);
    CHECK_EQ_INT(deleted, 2000);
}

TEST(HandleKeepsEntryAliveUntilReleased)
{
    deleted = 0;
    block_cache *c = cache_new(16 * 1000);
    cache_handle *h = cache_insert(c, 5, 0, val(55), 100, del);
    for (int i = 1; i < 1000; i++)
        put(c, 5, (uint64_t)i, i, 100);
    CHECK_EQ_INT(*(int *)cache_value(h), 55); /* ASan: not freed */
    CHECK_EQ_INT(get(c, 5, 0), 55);           /* in use: never evicted */
    cache_erase_file(c, 5);
    CHECK_EQ_INT(get(c, 5, 0), -1);
    CHECK_EQ_INT(cache_usage(c), 0);
    int before = deleted;
    CHECK_EQ_INT(*(int *)cache_value(h), 55); /* erased, but the handle holds it */
    cache_release(c, h);
    CHECK_EQ_INT(deleted, before + 1);
    cache_free(c);
}

TEST(InsertReplacesAndFreesTheOldValueAfterItsLastHandle)
{
    deleted = 0;
    block_cache *c = cache_new(1 << 20);
    cache_handle *old = cache_insert(c, 1, 8, val(1), 100, del);
    put(c, 1, 8, 2, 100);
    CHECK_EQ_INT(get(c, 1, 8), 2);
    CHECK_EQ_INT(cache_usage(c), 100);
    CHECK_EQ_INT(deleted, 0);
    CHECK_EQ_INT(*(int *)cache_value(old), 1);
    cache_release(c, old);
    CHECK_EQ_INT(deleted, 1);
    cache_free(c);
    CHECK_EQ_INT(deleted, 2);
}

TEST(EraseFileDropsOnlyThatFile)
{
    deleted = 0;
    block_cache *c = cache_new(1 << 20);
    for (int i = 0; i < 300; i++) {
        put(c, 1, (uint64_t)i, i, 10);
        put(c, 2, (uint64_t)i, 1000 + i, 10);
    }
    cache_erase_file(c, 1);
    CHECK_EQ_INT(deleted, 300);
    CHECK_EQ_INT(cache_usage(c), 3000);
    for (int i = 0; i < 300; i++) {
        CHECK_EQ_INT(get(c, 1, (uint64_t)i), -1);
        CHECK_EQ_INT(get(c, 2, (uint64_t)i), 1000 + i);
    }
    cache_free(c);
}

TEST(ZeroCapacityCachesNothingButHandlesWork)
{
    deleted = 0;
    block_cache *c = cache_new(0);
    cache_handle *h = cache_insert(c, 1, 0, val(7), 100, del);
    CHECK_EQ_INT(*(int *)cache_value(h), 7);
    CHECK_EQ_INT(get(c, 1, 0), -1);
    CHECK_EQ_INT(cache_usage(c), 0);
    cache_release(c, h);
    CHECK_EQ_INT(deleted, 1);
    cache_free(c);
}

TEST(ShrinkingCapacityEvicts)
{
    deleted = 0;
    block_cache *c = cache_new(1 << 20);
    for (int i = 0; i < 1000; i++)
        put(c, 3, (uint64_t)i, i, 100);
    CHECK_EQ_INT(cache_usage(c), 100000);
    cache_set_capacity(c, 16 * 1000);
    CHECK(cache_usage(c) <= 16 * 1000);
    CHECK(deleted >= 840);
    cache_free(c);
    CHECK_EQ_INT(deleted, 1000);
}

static block_cache *shared;
static void *hammer(void *arg)
{
    uint32_t s = (uint32_t)(uintptr_t)arg;
    for (int q = 0; q < 50000; q++) {
        s = s * 1103515245u + 12345u;
        uint64_t key = (s >> 8) % 3000;
        cache_handle *h = cache_lookup(shared, key % 7, key);
        if (h) {
            if (*(int *)cache_value(h) != (int)key) abort();
            cache_release(shared, h);
        } else {
            put(shared, key % 7, key, (int)key, 64);
        }
        if (q % 10000 == 9999) cache_erase_file(shared, key % 7);
    }
    return NULL;
}

TEST(ConcurrentLookupsInsertsAndErasesStayConsistent)
{
    deleted = 0;
    shared = cache_new(64 * 1000);
    pthread_t th[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, hammer, (void *)(i + 1));
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CHECK(cache_usage(shared) <= 64 * 1000);
    CHECK(cache_hits(shared) + cache_misses(shared) == 200000);
    uint64_t inserted = cache_misses(shared);
    cache_free(shared);
    CHECK_EQ_INT(deleted, inserted);
}

TEST(ReleasingTheLastHandleOfAnOverfullShardEvicts)
{
    /* every entry lands in some shard; pinning many entries of charge 100 in
     * a cache of 16 * 100 bytes leaves shards over capacity (C3) until the
     * handles go, and releasing them must bring usage back under */
    deleted = 0;
    block_cache *c = cache_new(16 * 100);
    cache_handle *h[200];
    for (int i = 0; i < 200; i++)
        h[i] = cache_insert(c, 9, (uint64_t)i * 4096, val(i), 100, del);
    CHECK(cache_usage(c) > 16 * 100);
    for (int i = 0; i < 200; i++) {
        CHECK_EQ_INT(*(int *)cache_value(h[i]), i);
        cache_release(c, h[i]);
    }
    CHECK(cache_usage(c) <= 16 * 100);
    CHECK(deleted >= 200 - 16);
    cache_free(c);
    CHECK_EQ_INT(deleted, 200);
}

static block_cache *churn_cache;
static void *release_churn(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    for (int q = 0; q < 20000; q++) {
        uint64_t off = (uint64_t)((q * 7 + (int)id) % 64);
        cache_handle *h = cache_lookup(churn_cache, 1, off);
        if (!h) h = cache_insert(churn_cache, 1, off, val((int)off), 100, del);
        if (*(int *)cache_value(h) != (int)off) return (void *)1;
        if (q % 97 == 0) cache_erase_file(churn_cache, 1);
        cache_release(churn_cache, h);
    }
    return NULL;
}

TEST(HandlesReleasedWhileOtherThreadsEvictAndEraseAreFreedOnce)
{
    /* releases take no lock (C5): the last reference must free each value
     * exactly once whether it is dropped by a release or by eviction */
    deleted = 0;
    churn_cache = cache_new(16 * 300);
    pthread_t t[4];
    for (uintptr_t i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, release_churn, (void *)i);
    int bad = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        bad |= r != NULL;
    }
    CHECK(!bad);
    size_t usage = cache_usage(churn_cache);
    CHECK(usage <= 16 * 300);
    int before = __atomic_load_n(&deleted, __ATOMIC_RELAXED);
    cache_free(churn_cache);
    CHECK_EQ_INT(__atomic_load_n(&deleted, __ATOMIC_RELAXED), before + (int)(usage / 100));
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
