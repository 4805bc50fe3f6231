/*
 * ks_keyspace_test.c -- the keyspace over a real engine: encodings, TTLs,
 * counters, big hashes, hooks (KS1), active expiry and the KS-E1 repair.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"
#include "test.h"
#include "ks_fixture.h"

static void set(const char *k, const char *v)
{
    ks_set_opts o = {0};
    int done;
    CHECK(ks_set(&ctx, k, strlen(k), v, strlen(v), &o, &done, NULL) == KS_OK && done);
    commit();
}

static int get_is(const char *k, const char *want)
{
    ks_val v;
    ks_status st = ks_get(&ctx, k, strlen(k), &v);
    int ok = want ? st == KS_OK && v.n == strlen(want) && memcmp(v.p, want, v.n) == 0
                  : st == KS_NOTFOUND;
    ks_val_free(&v);
    return ok;
}

static void hset1(const char *k, const char *f, const char *v)
{
    ks_field p = {f, strlen(f), v, strlen(v)};
    uint64_t added;
    CHECK(ks_hset(&ctx, k, strlen(k), &p, 1, 0, &added) == KS_OK);
    commit();
}

static int hget_is(const char *k, const char *f, const char *want)
{
    ks_field it = {f, strlen(f), NULL, 0};
    void *owner;
    ks_hmget(&ctx, k, strlen(k), &it, 1, &owner);
    int ok = want ? it.v && it.vl == strlen(want) && memcmp(it.v, want, it.vl) == 0 : !it.v;
    ks_hmget_free(owner);
    return ok;
}

static size_t count_engine_keys(char ns)
{
    size_t n = 0;
    eng_iter *it = eng_iter_new(edb, NULL, NULL);
    for (eng_iter_seek(it, &ns, 1); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl;
        const char *k = eng_iter_key(it, &kl);
        if (k[0] != ns) break;
        n++;
    }
    eng_iter_free(it);
    return n;
}

TEST(SetThenGetReturnsValueAndWrongTypeOnHash)
{
    setup();
    set("a", "hello");
    CHECK(get_is("a", "hello"));
    CHECK(get_is("missing", NULL));
    hset1("h", "f", "v");
    ks_val v;
    CHECK(ks_get(&ctx, "h", 1, &v) == KS_ERR_WRONGTYPE);
    CHECK_EQ_INT(ks_dbsize(&ctx), 2);
    teardown();
}

TEST(SetWithNxOrXxKeepTtlAndGetOption)
{
    setup();
    ks_set_opts o = {.nx = 1};
    int done;
    ks_val old;
    CHECK(ks_set(&ctx, "k", 1, "1", 1, &o, &done, NULL) == KS_OK && done);
    CHECK(ks_set(&ctx, "k", 1, "2", 1, &o, &done, NULL) == KS_OK && !done);
    o = (ks_set_opts){.xx = 1, .get = 1, .expire_ms = ctx.now_ms + 5000};
    CHECK(ks_set(&ctx, "k", 1, "3", 1, &o, &done, &old) == KS_OK && done);
    CHECK(old.n == 1 && old.p[0] == '1');
    ks_val_free(&old);
    commit();
    o = (ks_set_opts){.keepttl = 1};
    CHECK(ks_set(&ctx, "k", 1, "4", 1, &o, &done, NULL) == KS_OK && done);
    int64_t when;
    CHECK(ks_expire_get(&ctx, "k", 1, &when) == KS_OK);
    CHECK_EQ_INT(when, ctx.now_ms + 5000);
    CHECK_EQ_INT(ks_expires(&ctx), 1);
    o = (ks_set_opts){0};
    CHECK(ks_set(&ctx, "k", 1, "5", 1, &o, &done, NULL) == KS_OK);
    CHECK(ks_expire_get(&ctx, "k", 1, &when) == KS_OK && when == 0);
    CHECK_EQ_INT(ks_expires(&ctx), 0);
    commit();
    CHECK_EQ_INT(count_engine_keys('e'), 0);
    teardown();
}

/* The keyspace's event hook, recorded. */
static char events[8][16];
static int nevents;

static void record_event(void *ectx, ks_event ev, int db, const char *key, size_t klen)
{
    (void)ectx;
    if (nevents < 8)
        snprintf(events[nevents++], sizeof(events[0]), "%s:%d:%.*s",
                 ev == KS_EVENT_EXPIRED ? "expired" : "new", db, (int)klen, key);
}

TEST(ExpiredKeyReadsAsAbsentAndWriteDeletesIt)
{
    setup();
    set("k", "v");
    int done;
    CHECK(ks_expire_set(&ctx, "k", 1, ctx.now_ms + 100, 0, &done) == KS_OK && done);
    commit();
    ctx.now_ms += 200;
    ks_set_lazy_expire(ks, 0); /* CLIENT PAUSE: reads leave it in place */
    CHECK(get_is("k", NULL));
    commit();
    CHECK_EQ_INT(ks_dbsize(&ctx), 1); /* as Redis: counted until deleted */
    ks_set_lazy_expire(ks, 1);
    long long out;
    CHECK(ks_incrby(&ctx, "k", 1, 5, &out) == KS_OK && out == 5);
    commit();
    CHECK(get_is("k", "5"));
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    CHECK_EQ_INT(ks_expires(&ctx), 0);
    CHECK_EQ_INT(count_engine_keys('e'), 0);
    teardown();
}

TEST(ReadOfExpiredKeyRemovesItAndRaisesExpiredOnce)
{
    setup();
    nevents = 0;
    ks_set_event_hook(ks, record_event, NULL);
    set("k", "v");
    CHECK_EQ_INT(nevents, 1);
    CHECK(!strcmp(events[0], "new:0:k"));
    set("k", "w"); /* an overwrite is not new */
    CHECK_EQ_INT(nevents, 1);
    int done;
    CHECK(ks_expire_set(&ctx, "k", 1, ctx.now_ms + 100, 0, &done) == KS_OK && done);
    commit();
    ctx.now_ms += 200;
    CHECK(get_is("k", NULL));
    commit();
    CHECK_EQ_INT(nevents, 2);
    CHECK(!strcmp(events[1], "expired:0:k"));
    CHECK_EQ_INT(ks_dbsize(&ctx), 0); /* removed by the read */
    CHECK_EQ_INT(count_engine_keys('e'), 0);
    CHECK(get_is("k", NULL));
    CHECK_EQ_INT(nevents, 2); /* once */
    teardown();
}

TEST(ActiveExpireRaisesExpiredForEachKey)
{
    setup();
    nevents = 0;
    ks_set_event_hook(ks, record_event, NULL);
    set("a", "1");
    set("b", "2");
    int done;
    CHECK(ks_expire_set(&ctx, "a", 1, ctx.now_ms + 10, 0, &done) == KS_OK && done);
    CHECK(ks_expire_set(&ctx, "b", 1, ctx.now_ms + 10, 0, &done) == KS_OK && done);
    commit();
    nevents = 0;
    ctx.now_ms += 100;
    CHECK_EQ_INT(ks_active_expire(&ctx, 100, 100000), 2);
    commit();
    CHECK_EQ_INT(nevents, 2);
    CHECK(!strcmp(events[0], "expired:0:a"));
    CHECK(!strcmp(events[1], "expired:0:b"));
    CHECK_EQ_INT(ks_dbsize(&ctx), 0);
    teardown();
}

TEST(IncrRejectsNonIntegerAndOverflow)
{
    setup();
    set("s", "abc");
    set("n", "9223372036854775806");
    set("z", "007");
    long long out;
    CHECK(ks_incrby(&ctx, "s", 1, 1, &out) == KS_ERR_NOTINT);
    CHECK(ks_incrby(&ctx, "z", 1, 1, &out) == KS_ERR_NOTINT);
    CHECK(ks_incrby(&ctx, "n", 1, 1, &out) == KS_OK && out == INT64_MAX);
    CHECK(ks_incrby(&ctx, "n", 1, 1, &out) == KS_ERR_OVERFLOW);
    char buf[KS_LD_BUF];
    size_t bl;
    set("f", "10.5");
    CHECK(ks_incrbyfloat(&ctx, "f", 1, 0.1L, buf, &bl) == KS_OK);
    CHECK_MEM(buf, bl, "10.6");
    CHECK(ks_incrbyfloat(&ctx, "s", 1, 1, buf, &bl) == KS_ERR_NOTFLOAT);
    teardown();
}

TEST(AppendAndSetrangeGrowWithZeroPadding)
{
    setup();
    size_t n;
    CHECK(ks_append(&ctx, "a", 1, "ab", 2, &n) == KS_OK && n == 2);
    CHECK(ks_append(&ctx, "a", 1, "cd", 2, &n) == KS_OK && n == 4);
    CHECK(ks_setrange(&ctx, "a", 1, 6, "x", 1, &n) == KS_OK && n == 7);
    ks_val v;
    CHECK(ks_get(&ctx, "a", 1, &v) == KS_OK && v.n == 7 && memcmp(v.p, "abcd\0\0x", 7) == 0);
    ks_val_free(&v);
    CHECK(ks_setrange(&ctx, "new", 3, 0, "", 0, &n) == KS_OK && n == 0);
    CHECK(get_is("new", NULL));
    CHECK(ks_setrange(&ctx, "a", 1, 536870911, "xy", 2, &n) == KS_ERR_MSG);
    teardown();
}

TEST(SmallHashIsOneMetadataKey)
{
    setup();
    ks_field p[3] = {{"a", 1, "1", 1}, {"b", 1, "2", 1}, {"a", 1, "3", 1}};
    uint64_t added;
    CHECK(ks_hset(&ctx, "h", 1, p, 3, 0, &added) == KS_OK && added == 2);
    commit();
    CHECK(hget_is("h", "a", "3") && hget_is("h", "b", "2") && hget_is("h", "c", NULL));
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    uint64_t n;
    CHECK(ks_hlen(&ctx, "h", 1, &n) == KS_OK && n == 2);
    ks_field nx = {"a", 1, "9", 1};
    CHECK(ks_hset(&ctx, "h", 1, &nx, 1, 1, &added) == KS_OK && added == 0);
    CHECK(hget_is("h", "a", "3"));
    ks_field d[2] = {{"a", 1}, {"zz", 2}};
    CHECK(ks_hdel(&ctx, "h", 1, d, 2, &added) == KS_OK && added == 1);
    d[0].f = "b";
    CHECK(ks_hdel(&ctx, "h", 1, d, 1, &added) == KS_OK && added == 1);
    commit();
    ks_type t;
    CHECK(ks_type_of(&ctx, "h", 1, &t) == KS_OK && t == KS_NONE);
    CHECK_EQ_INT(ks_dbsize(&ctx), 0);
    teardown();
}

static void hset_many(const char *key, int from, int to, const char *prefix)
{
    /* Hashes past 128 fields are big here (Redis's default limit is 512). */
    ks_limits lim;
    ks_limits_init(&lim);
    lim.hash_max_listpack_entries = 128;
    ks_set_limits(ks, &lim);
    ks_field *p = calloc((size_t)(to - from), sizeof(*p));
    char(*fb)[16] = calloc((size_t)(to - from), 16), (*vb)[24] = calloc((size_t)(to - from), 24);
    for (int i = from; i < to; i++) {
        int j = i - from;
        snprintf(fb[j], 16, "f%05d", i);
        snprintf(vb[j], 24, "%s%d", prefix, i);
        p[j] = (ks_field){fb[j], strlen(fb[j]), vb[j], strlen(vb[j])};
    }
    uint64_t added;
    CHECK(ks_hset(&ctx, key, strlen(key), p, (size_t)(to - from), 0, &added) == KS_OK);
    commit();
    free(p);
    free(fb);
    free(vb);
}

TEST(HashTurnsBigPastThresholdAndStaysExact)
{
    setup();
    hset_many("big", 0, 100, "v");
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    hset_many("big", 50, 300, "w"); /* crosses 128 fields */
    CHECK_EQ_INT(count_engine_keys('d'), 300);
    uint64_t n;
    CHECK(ks_hlen(&ctx, "big", 3, &n) == KS_OK && n == 300);
    CHECK(hget_is("big", "f00010", "v10") && hget_is("big", "f00060", "w60"));
    ks_field *all;
    size_t an;
    CHECK(ks_hash_read(&ctx, NULL, "big", 3, &all, &an) == KS_OK && an == 300);
    ks_fields_free(all, an);
    ks_field d[3] = {{"f00001", 6}, {"f00001", 6}, {"nope", 4}};
    uint64_t del;
    CHECK(ks_hdel(&ctx, "big", 3, d, 3, &del) == KS_OK && del == 1);
    commit();
    CHECK(ks_hlen(&ctx, "big", 3, &n) == KS_OK && n == 299);
    long long out;
    CHECK(ks_hincrby(&ctx, "big", 3, "cnt", 3, 7, &out) == KS_OK && out == 7);
    commit();
    CHECK(ks_hlen(&ctx, "big", 3, &n) == KS_OK && n == 300);
    int deleted;
    CHECK(ks_del(&ctx, "big", 3, &deleted) == KS_OK && deleted);
    commit();
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    /* A recreated big hash never sees the old fields (KS-E2). */
    hset_many("big", 0, 200, "x");
    CHECK(hget_is("big", "f00001", "x1") && hget_is("big", "cnt", NULL));
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    teardown();
}

TEST(BigHashReadCopiesLargeAndEmptyPairs)
{
    setup();
    hset_many("h", 0, 130, "v");
    static char large[20000];
    memset(large, 'L', sizeof(large));
    ks_field p[3] = {{"", 0, "", 0}, {"large", 5, large, sizeof(large)}, {"after", 5, "a", 1}};
    uint64_t added;
    CHECK(ks_hset(&ctx, "h", 1, p, 3, 0, &added) == KS_OK && added == 3);
    commit();
    ks_field *all;
    size_t n, seen = 0;
    CHECK(ks_hash_read(&ctx, NULL, "h", 1, &all, &n) == KS_OK && n == 133);
    for (size_t i = 0; i < n; i++) {
        if (all[i].fl == 0) seen += all[i].vl == 0;
        if (all[i].fl == 5 && memcmp(all[i].f, "large", 5) == 0)
            seen += all[i].vl == sizeof(large) && memcmp(all[i].v, large, sizeof(large)) == 0;
        if (all[i].fl == 5 && memcmp(all[i].f, "after", 5) == 0) seen += all[i].v[0] == 'a';
        if (all[i].fl == 6 && memcmp(all[i].f, "f00129", 6) == 0)
            seen += memcmp(all[i].v, "v129", 4) == 0;
    }
    CHECK_EQ_INT(seen, 4);
    ks_fields_free(all, n);
    teardown();
}

typedef struct hook_log {
    int calls, had, has;
    size_t old_n, new_n;
    int64_t expire;
    int reject;
} hook_log;
static hook_log hl;

static ks_status hook(void *h, ks_ctx *c, const char *key, size_t klen, const ks_field *of,
                      size_t on, int had, const ks_field *nf, size_t nn, int has, int64_t exp)
{
    hl.calls++;
    hl.had = had;
    hl.has = has;
    hl.old_n = on;
    hl.new_n = nn;
    hl.expire = exp;
    if (hl.reject) {
        c->err = strdup("ERR rejected by test");
        return KS_ERR_MSG;
    }
    return KS_OK;
}

static int wants(void *h, int db, const char *key, size_t klen)
{
    return klen >= 2 && memcmp(key, "u:", 2) == 0;
}

TEST(HashHookSeesEveryChangeOfIndexedKeys)
{
    setup();
    ks_set_hash_hook(ks, hook, wants, NULL);
    memset(&hl, 0, sizeof(hl));
    hset1("u:1", "a", "1");
    CHECK(hl.calls == 1 && !hl.had && hl.has && hl.new_n == 1);
    hset1("other", "a", "1");
    CHECK_EQ_INT(hl.calls, 1);
    ks_field two[2] = {{"b", 1, "2", 1}, {"c", 1, "3", 1}};
    uint64_t added;
    CHECK(ks_hset(&ctx, "u:1", 3, two, 2, 0, &added) == KS_OK);
    commit();
    CHECK(hl.calls == 2 && hl.old_n == 1 && hl.new_n == 3);
    int done;
    CHECK(ks_expire_set(&ctx, "u:1", 3, ctx.now_ms + 1000, 0, &done) == KS_OK && done);
    commit();
    CHECK(hl.calls == 3 && hl.expire == ctx.now_ms + 1000 && hl.old_n == 3 && hl.new_n == 3);
    CHECK(ks_rename(&ctx, "u:1", 3, "u:2", 3, 0, &done) == KS_OK && done);
    commit();
    CHECK_EQ_INT(hl.calls, 5); /* source gone, destination created */
    CHECK(hl.has && !hl.had && hl.new_n == 3 && hl.expire == ctx.now_ms + 1000);
    ks_set_opts o = {0};
    CHECK(ks_set(&ctx, "u:2", 3, "s", 1, &o, &done, NULL) == KS_OK);
    commit();
    CHECK(hl.calls == 6 && hl.had && !hl.has && hl.old_n == 3);
    hset1("u:3", "a", "1");
    hl.reject = 1;
    CHECK(ks_del(&ctx, "u:3", 3, &done) == KS_ERR_MSG);
    CHECK(ctx.err && strstr(ctx.err, "rejected"));
    eng_batch_clear(ctx.batch);
    ks_ctx_reset(&ctx);
    hl.reject = 0;
    CHECK(hget_is("u:3", "a", "1"));
    teardown();
}

TEST(ActiveExpireDeletesDueKeysAndCallsHook)
{
    setup();
    ks_set_hash_hook(ks, hook, wants, NULL);
    set("s1", "v");
    hset1("u:1", "a", "1");
    hset_many("u:big", 0, 200, "v");
    set("keep", "v");
    int done;
    const char *keys[] = {"s1", "u:1", "u:big"};
    for (int i = 0; i < 3; i++)
        CHECK(ks_expire_set(&ctx, keys[i], strlen(keys[i]), ctx.now_ms + 10 + i, 0, &done) ==
              KS_OK);
    commit();
    CHECK_EQ_INT(ks_expires(&ctx), 3);
    memset(&hl, 0, sizeof(hl));
    ctx.now_ms += 100;
    CHECK_EQ_INT(ks_active_expire(&ctx, 100, 100000), 3);
    commit();
    CHECK_EQ_INT(hl.calls, 2);
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    CHECK_EQ_INT(ks_expires(&ctx), 0);
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    CHECK_EQ_INT(count_engine_keys('e'), 0);
    teardown();
}

TEST(CompactionDroppedMetadataIsRepairedByActiveExpiry)
{
    setup();
    hset_many("big", 0, 200, "v");
    set("s", "v");
    int done;
    CHECK(ks_expire_set(&ctx, "big", 3, ctx.now_ms + 10, 0, &done) == KS_OK);
    CHECK(ks_expire_set(&ctx, "s", 1, ctx.now_ms + 10, 0, &done) == KS_OK);
    commit();
    /* What compaction does: the filter drops the expired metadata only. */
    int64_t when = ctx.now_ms + 10;
    char meta[16] = {(char)(1 | 0x80)};
    memcpy(meta + 1, &when, 8);
    CHECK(ks_compaction_filter(NULL, "m\0s", 3, meta, 10) == 1);
    eng_batch_delete(ctx.batch, "m\0s", 3);
    eng_batch_delete(ctx.batch, "m\0big", 5);
    commit();
    set("s", "new"); /* recreated before the repair */
    CHECK_EQ_INT(ks_dbsize(&ctx), 3);
    ctx.now_ms += 100;
    nevents = 0;
    ks_set_event_hook(ks, record_event, NULL);
    ks_active_expire(&ctx, 100, 100000);
    commit();
    /* The repair reports the key nobody saw expire, not the live one. */
    CHECK_EQ_INT(nevents, 1);
    CHECK(!strcmp(events[0], "expired:0:big"));
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    CHECK_EQ_INT(ks_expires(&ctx), 0);
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    CHECK(get_is("s", "new"));
    teardown();
}

/* MSET holds its counter deltas back and writes the counter once; a key
 * met twice, an existing one, an expired one and a failure midway must
 * still leave DBSIZE exact. */
TEST(MsetWritesCounterOnceAndStaysExact)
{
    setup();
    ks_set_hash_hook(ks, hook, wants, NULL);
    set("old", "v");
    set("ttl", "v");
    int done;
    CHECK(ks_expire_set(&ctx, "ttl", 3, ctx.now_ms + 10, 0, &done) == KS_OK && done);
    commit();
    CHECK_EQ_INT(ks_expires(&ctx), 1);
    ctx.now_ms += 100;
    ks_field kv[10];
    char names[10][8];
    for (int i = 0; i < 10; i++) {
        snprintf(names[i], sizeof(names[i]), "n%d", i);
        kv[i] = (ks_field){names[i], strlen(names[i]), "x", 1};
    }
    CHECK(ks_mset(&ctx, kv, 10, 0, &done) == KS_OK && done);
    CHECK_EQ_INT(eng_batch_count(ctx.batch), 11); /* ten metadata puts, one counter put */
    commit();
    CHECK_EQ_INT(ks_dbsize(&ctx), 12);
    kv[0] = (ks_field){"old", 3, "w", 1};
    kv[1] = (ks_field){"ttl", 3, "w", 1}; /* expired: deleted, then created again */
    kv[2] = (ks_field){"n10", 3, "a", 1};
    kv[3] = (ks_field){"n10", 3, "b", 1};
    CHECK(ks_mset(&ctx, kv, 4, 0, &done) == KS_OK && done);
    commit();
    CHECK_EQ_INT(ks_dbsize(&ctx), 13);
    CHECK_EQ_INT(ks_expires(&ctx), 0);
    CHECK(get_is("n10", "b") && get_is("ttl", "w") && get_is("old", "w"));
    /* A failure midway (an index refusing to drop u:1) writes no counter,
     * and the deferral ends with the command. */
    hset1("u:1", "a", "1");
    hl.reject = 1;
    kv[0] = (ks_field){"z1", 2, "v", 1};
    kv[1] = (ks_field){"u:1", 3, "v", 1};
    CHECK(ks_mset(&ctx, kv, 2, 0, &done) == KS_ERR_MSG && !done);
    eng_batch_clear(ctx.batch); /* the server's rollback (S1) */
    ks_ctx_reset(&ctx);
    hl.reject = 0;
    CHECK_EQ_INT(ks_dbsize(&ctx), 14);
    set("z2", "v");
    CHECK_EQ_INT(ks_dbsize(&ctx), 15);
    CHECK(get_is("z1", NULL));
    teardown();
}

TEST(DelKeysCountsEachKeyOnceAndWritesCounterOnce)
{
    setup();
    set("a", "1");
    set("b", "2");
    hset_many("big", 0, 200, "v");
    set("keep", "v");
    ks_field keys[] = {{"a", 1, NULL, 0},
                       {"missing", 7, NULL, 0},
                       {"a", 1, NULL, 0},
                       {"b", 1, NULL, 0},
                       {"big", 3, NULL, 0}};
    uint64_t deleted;
    CHECK(ks_del_keys(&ctx, keys, 5, &deleted) == KS_OK);
    CHECK_EQ_INT(deleted, 3);
    /* three metadata deletes, one range delete of big's fields, one counter */
    CHECK_EQ_INT(eng_batch_count(ctx.batch), 5);
    commit();
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    CHECK_EQ_INT(count_engine_keys('d'), 0);
    CHECK(get_is("a", NULL) && get_is("keep", "v"));
    teardown();
}

/* One "command" of a write group (the server's S4): its counter changes
 * held (KS-E7), or, when fail, rolled back with its writes (S1). */
static void group_set(const char *k, int fail)
{
    ks_count_hold_cmd(ks, ctx.batch);
    eng_batch_set_savepoint(ctx.batch);
    ks_set_opts o = {0};
    int done;
    CHECK(ks_set(&ctx, k, strlen(k), "v", 1, &o, &done, NULL) == KS_OK && done);
    if (fail)
        eng_batch_rollback(ctx.batch);
    else
        eng_batch_pop_savepoint(ctx.batch);
    ks_count_hold_done(&ctx, !fail);
}

TEST(WriteGroupWritesCounterOnceAndDropsRolledBackCommands)
{
    setup();
    set("old", "v");
    group_set("a", 0);
    group_set("b", 0);
    group_set("gone", 1);
    group_set("c", 0);
    CHECK_EQ_INT(eng_batch_count(ctx.batch), 3); /* the records only */
    CHECK_EQ_INT(ks_dbsize(&ctx), 4);            /* the held sums count */
    /* A multi-key command inside the group nests its own deferral. */
    ks_count_hold_cmd(ks, ctx.batch);
    ks_field kv[2] = {{"m1", 2, "x", 1}, {"m2", 2, "x", 1}};
    int done, d;
    CHECK(ks_mset(&ctx, kv, 2, 0, &done) == KS_OK && done);
    CHECK(ks_del(&ctx, "old", 3, &d) == KS_OK && d == 1);
    CHECK(ks_expire_set(&ctx, "a", 1, ctx.now_ms + 60000, 0, &done) == KS_OK && done);
    ks_count_hold_done(&ctx, 1);
    size_t n = eng_batch_count(ctx.batch);
    CHECK(ks_count_flush(&ctx) == KS_OK);
    CHECK_EQ_INT(eng_batch_count(ctx.batch), n + 1); /* one counter put for the group */
    commit();
    CHECK_EQ_INT(ks_dbsize(&ctx), 5);
    CHECK_EQ_INT(ks_expires(&ctx), 1);
    CHECK(get_is("gone", NULL) && get_is("old", NULL) && get_is("m2", "x"));
    /* A group whose batch is cleared leaves nothing held behind. */
    group_set("dropped", 0);
    eng_batch_clear(ctx.batch);
    ks_count_drop(ks);
    set("z", "v");
    CHECK_EQ_INT(ks_dbsize(&ctx), 6);
    teardown();
}

TEST(FlushdbClearsOnlyItsDb)
{
    setup();
    set("a", "1");
    hset_many("big", 0, 200, "v");
    ctx.db = 3;
    set("b", "2");
    CHECK(ks_flush(&ctx, 0) == KS_OK);
    commit();
    CHECK_EQ_INT(ks_dbsize(&ctx), 0);
    ctx.db = 0;
    CHECK_EQ_INT(ks_dbsize(&ctx), 2);
    CHECK(get_is("a", "1"));
    CHECK(ks_flush(&ctx, 1) == KS_OK);
    commit();
    CHECK_EQ_INT(ks_dbsize(&ctx), 0);
    CHECK_EQ_INT(count_engine_keys('d') + count_engine_keys('m'), 0);
    teardown();
}

TEST(RenameAndCopyKeepTtlAndCounters)
{
    setup();
    set("a", "1");
    int done;
    CHECK(ks_expire_set(&ctx, "a", 1, ctx.now_ms + 5000, 0, &done) == KS_OK);
    commit();
    CHECK(ks_rename(&ctx, "a", 1, "b", 1, 0, &done) == KS_OK && done);
    commit();
    CHECK(get_is("a", NULL) && get_is("b", "1"));
    int64_t when;
    CHECK(ks_expire_get(&ctx, "b", 1, &when) == KS_OK && when == ctx.now_ms + 5000);
    CHECK(ks_rename(&ctx, "zz", 2, "b", 1, 0, &done) == KS_NOTFOUND);
    hset_many("h", 0, 150, "v");
    CHECK(ks_copy(&ctx, "h", 1, 2, "h2", 2, 0, &done) == KS_OK && done);
    commit();
    CHECK(ks_copy(&ctx, "h", 1, 2, "h2", 2, 0, &done) == KS_OK && !done);
    ctx.db = 2;
    CHECK(hget_is("h2", "f00149", "v149"));
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    ctx.db = 0;
    CHECK(ks_rename(&ctx, "h", 1, "b", 1, 0, &done) == KS_OK && done); /* over a string */
    commit();
    CHECK(hget_is("b", "f00003", "v3"));
    CHECK(ks_expire_get(&ctx, "b", 1, &when) == KS_OK && when == 0);
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    CHECK_EQ_INT(ks_expires(&ctx), 0);
    CHECK_EQ_INT(count_engine_keys('d'), 300);
    teardown();
}

typedef struct visit_log {
    int n;
    char keys[16][16];
    size_t nf[16];
} visit_log;

static int visit(void *arg, const char *key, size_t klen, const ks_field *f, size_t n)
{
    visit_log *v = arg;
    if (v->n < 16) {
        memcpy(v->keys[v->n], key, klen < 15 ? klen : 15);
        v->keys[v->n][klen < 15 ? klen : 15] = 0;
        v->nf[v->n] = n;
    }
    v->n++;
    return 0;
}

TEST(ScanHashesResumesAfterLastAndSkipsOthers)
{
    setup();
    hset1("u:1", "a", "1");
    hset1("u:2", "a", "1");
    set("u:3", "string");
    hset_many("u:4", 0, 150, "v"); /* big */
    hset1("u:5", "a", "1");
    hset1("v:1", "a", "1");
    int done;
    CHECK(ks_expire_set(&ctx, "u:5", 3, ctx.now_ms + 10, 0, &done) == KS_OK);
    commit();
    ctx.now_ms += 100; /* u:5 has expired */
    visit_log v = {0};
    char *last;
    size_t ll;
    CHECK_EQ_INT(ks_scan_hashes(&ctx, NULL, "u:", 2, NULL, 0, 2, visit, &v, &last, &ll), 2);
    CHECK(v.n == 2 && strcmp(v.keys[0], "u:1") == 0 && strcmp(v.keys[1], "u:2") == 0);
    CHECK_MEM(last, ll, "u:2");
    memset(&v, 0, sizeof(v));
    char *last2;
    CHECK_EQ_INT(ks_scan_hashes(&ctx, NULL, "u:", 2, last, ll, 10, visit, &v, &last2, &ll), 1);
    CHECK(v.n == 1 && strcmp(v.keys[0], "u:4") == 0 && v.nf[0] == 150);
    free(last);
    free(last2);
    memset(&v, 0, sizeof(v));
    CHECK_EQ_INT(ks_scan_hashes(&ctx, NULL, "u:", 2, "a", 1, 10, visit, &v, &last, &ll), 3);
    free(last);
    teardown();
}

static int flushed_dbs;
static ks_status flush_hook(void *f, ks_ctx *c, int db)
{
    flushed_dbs |= 1 << db;
    return c->db == db ? KS_OK : KS_ERR_MSG;
}

TEST(HookSeesBigHdelCopyToOtherDbAndFlushHook)
{
    setup();
    ks_set_hash_hook(ks, hook, wants, NULL);
    hset_many("u:b", 0, 200, "v");
    memset(&hl, 0, sizeof(hl));
    ks_field d[2] = {{"f00001", 6}, {"nope", 4}};
    uint64_t del;
    CHECK(ks_hdel(&ctx, "u:b", 3, d, 2, &del) == KS_OK && del == 1);
    commit();
    CHECK(hl.calls == 1 && hl.old_n == 200 && hl.new_n == 199 && hl.has);
    int done;
    CHECK(ks_copy(&ctx, "u:b", 3, 7, "u:c", 3, 0, &done) == KS_OK && done);
    commit();
    CHECK(hl.calls == 2 && !hl.had && hl.has && hl.new_n == 199);
    ks_set_flush_hook(ks, flush_hook, NULL);
    CHECK(ks_flush(&ctx, 1) == KS_OK);
    commit();
    CHECK_EQ_INT(flushed_dbs, 0xffff);
    CHECK_EQ_INT(hl.calls, 2); /* the flush hook replaces per-hash calls */
    teardown();
}

TEST(FlushWithoutFlushHookCallsHashHookPerIndexedHash)
{
    setup();
    ks_set_hash_hook(ks, hook, wants, NULL);
    hset1("u:1", "a", "1");
    hset_many("u:2", 0, 150, "v");
    hset1("other", "a", "1");
    set("u:s", "string");
    memset(&hl, 0, sizeof(hl));
    CHECK(ks_flush(&ctx, 0) == KS_OK);
    commit();
    CHECK_EQ_INT(hl.calls, 2);
    CHECK(hl.had && !hl.has);
    CHECK_EQ_INT(ks_dbsize(&ctx), 0);
    hset1("u:3", "a", "1");
    hl.reject = 1;
    CHECK(ks_flush(&ctx, 0) == KS_ERR_MSG);
    eng_batch_clear(ctx.batch);
    ks_ctx_reset(&ctx);
    hl.reject = 0;
    CHECK(hget_is("u:3", "a", "1"));
    teardown();
}

static int collect(void *arg, const char *k, size_t kl)
{
    int *seen = arg;
    int i = atoi(k + 1);
    seen[i]++;
    return 0;
}

TEST(ScanVisitsEveryKeyExactlyOnce)
{
    setup();
    char k[16];
    for (int i = 0; i < 50; i++) {
        snprintf(k, sizeof(k), "k%d", i);
        set(k, "v");
    }
    int seen[50] = {0};
    uint64_t cur = 0;
    int steps = 0;
    do {
        CHECK(ks_scan(&ctx, cur, NULL, 0, 7, KS_NONE, collect, seen, &cur) == KS_OK);
        steps++;
    } while (cur && steps < 100);
    CHECK_EQ_INT(cur, 0);
    for (int i = 0; i < 50; i++)
        CHECK_EQ_INT(seen[i], 1);
    char *rk;
    size_t rl;
    CHECK(ks_randomkey(&ctx, &rk, &rl) == KS_OK && rk[0] == 'k');
    free(rk);
    teardown();
}

TEST(GlobMatchesLikeRedis)
{
    struct {
        const char *p, *s;
        int m;
    } t[] = {
        {"*", "", 0}, /* as stringmatchlen; KEYS/SCAN special-case a lone "*" */
        {"h?llo", "hello", 1},
        {"h*llo", "heeeello", 1},
        {"h[ae]llo", "hallo", 1},
        {"h[^e]llo", "hello", 0},
        {"h[a-b]llo", "hbllo", 1},
        {"h[b-a]llo", "hallo", 1},
        {"a\\*b", "a*b", 1},
        {"a\\*b", "axb", 0},
        {"*a*b*", "xaxxbx", 1},
        {"user:*", "user:1", 1},
        {"user:*", "use", 0},
        {"[abc", "a", 1},
        {"?", "", 0},
        {"a*", "a", 1},
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        CHECK_MSG(ks_glob_match(t[i].p, strlen(t[i].p), t[i].s, strlen(t[i].s), 0) == t[i].m,
                  "%s vs %s", t[i].p, t[i].s);
    CHECK(ks_glob_match("HELLO", 5, "hello", 5, 1));
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
