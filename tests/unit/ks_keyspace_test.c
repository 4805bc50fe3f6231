/*
 * ks_keyspace_test.c -- the keyspace over a real engine: encodings, TTLs,
 * counters, active expiry and the KS-E1 repair, write groups, FLUSHDB,
 * RENAME/COPY, SCAN. Hashes and the hooks (KS1) are in
 * ks_keyspace_hash_test.c; the shared helpers in ks_keyspace_util.h.
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
