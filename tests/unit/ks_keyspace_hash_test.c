/*
 * ks_keyspace_hash_test.c -- hashes in the keyspace over a real engine: a
 * small hash is one metadata key, a big one stays exact past the limit
 * and copies large and empty pairs; the hash hook (KS1) sees every change
 * of an indexed key, active expiry's deletes, a big HDEL, COPY to another
 * db and FLUSHDB with and without a flush hook; the hash scan resumes
 * after its last key. Apart from ks_keyspace_test.c because these are
 * the index's contract with the keyspace.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"
#include "test.h"
#include "ks_fixture.h"
#include "ks_keyspace_util.h"

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

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
