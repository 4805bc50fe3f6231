/*
 * ks_type_test.c -- the type table and the write path every type shares:
 * records of unknown types, the legacy big-hash move at open, RENAME as
 * one record move (KS-E6), COPY under a new version (KS-E2), expire
 * entries naming a big record's type and version (KS-E1), identical
 * records not rewritten, type names.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/ks_type.h"
#include "test.h"
#include "ks_fixture.h"

static size_t count_prefix(const char *pre, size_t n)
{
    size_t c = 0;
    eng_iter *it = eng_iter_new(edb, NULL, NULL);
    for (eng_iter_seek(it, pre, n); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl;
        const char *k = eng_iter_key(it, &kl);
        if (kl < n || memcmp(k, pre, n) != 0) break;
        c++;
    }
    eng_iter_free(it);
    return c;
}

static void big_hash(const char *key, int n)
{
    /* Hashes past 128 fields are big here (Redis's default limit is 512). */
    ks_limits lim;
    ks_limits_init(&lim);
    lim.hash_max_listpack_entries = 128;
    ks_set_limits(ks, &lim);
    ks_field *p = calloc((size_t)n, sizeof(*p));
    char(*fb)[16] = calloc((size_t)n, 16);
    for (int i = 0; i < n; i++) {
        snprintf(fb[i], 16, "f%05d", i);
        p[i] = (ks_field){fb[i], strlen(fb[i]), fb[i], strlen(fb[i])};
    }
    uint64_t added;
    CHECK(ks_hset(&ctx, key, strlen(key), p, (size_t)n, 0, &added) == KS_OK);
    commit();
    free(p);
    free(fb);
}

static ks_meta read_meta(const char *key)
{
    ks_meta m;
    CHECK(ks_meta_read(&ctx, NULL, ctx.db, key, strlen(key), &m) == KS_OK);
    return m;
}

static size_t hlen(const char *key)
{
    uint64_t n = 0;
    ks_status st = ks_hlen(&ctx, key, strlen(key), &n);
    return st == KS_OK ? (size_t)n : 0;
}

TEST(RecordOfUnknownTypeOrReservedBitIsCorrupt)
{
    setup();
    const unsigned char bad[][2] = {{7, 'x'}, {KS_STRING | KS_F_RESERVED, 'x'}, {15, 'x'}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ks_ekey k;
        ks_ekey_meta(&k, 0, "k", 1);
        eng_batch_put(ctx.batch, k.p, k.n, (const char *)bad[i], 2);
        ks_ekey_free(&k);
        commit();
        ks_type t;
        CHECK_MSG(ks_type_of(&ctx, "k", 1, &t) == KS_ERR_ENGINE, "case %zu", i);
        ks_ctx_reset(&ctx);
    }
    teardown();
}

TEST(LegacyBigHashFieldsMoveToMemberKeysAtOpen)
{
    setup();
    /* A big hash as the previous encoding stored it: fields under
     * 'f' db u32be(klen) key be64(version). */
    char meta[17] = {KS_HASH | KS_F_BIG};
    ks_put_le64(meta + 1, 7);
    ks_put_le64(meta + 9, 2);
    ks_ekey k;
    ks_ekey_meta(&k, 0, "h", 1);
    eng_batch_put(ctx.batch, k.p, k.n, meta, sizeof(meta));
    ks_ekey_free(&k);
    const char *fields[2] = {"a", "bb"};
    for (int i = 0; i < 2; i++) {
        char fk[32] = {'f', 0, 0, 0, 0, 1, 'h'};
        ks_put_be64(fk + 7, 7);
        memcpy(fk + 15, fields[i], strlen(fields[i]));
        eng_batch_put(ctx.batch, fk, 15 + strlen(fields[i]), fields[i], strlen(fields[i]));
    }
    commit();
    ks_close(ks);
    CHECK(ks_open(edb, &ks) == KS_OK);
    ctx.ks = ks;
    CHECK_EQ_INT(count_prefix("f", 1), 0);
    CHECK_EQ_INT(count_prefix("d", 1), 2);
    ks_field *all;
    size_t n;
    CHECK(ks_hash_read(&ctx, NULL, "h", 1, &all, &n) == KS_OK && n == 2);
    CHECK(all[0].fl == 1 && memcmp(all[0].v, "a", 1) == 0);
    CHECK(all[1].fl == 2 && memcmp(all[1].v, "bb", 2) == 0);
    ks_fields_free(all, n);
    teardown();
}

TEST(RenameOfBigHashMovesOnlyTheRecord)
{
    setup();
    big_hash("src", 300);
    ks_meta before = read_meta("src");
    uint64_t version = before.version;
    ks_meta_free(&before);
    int done;
    CHECK(ks_rename(&ctx, "src", 3, "dst", 3, 0, &done) == KS_OK && done);
    /* One record delete and one put: no member is rewritten (KS-E6). */
    CHECK(eng_batch_count(ctx.batch) < 10);
    commit();
    ks_meta after = read_meta("dst");
    CHECK(after.big && after.version == version && after.count == 300);
    ks_meta_free(&after);
    CHECK_EQ_INT(hlen("src"), 0);
    CHECK_EQ_INT(hlen("dst"), 300);
    CHECK_EQ_INT(count_prefix("d", 1), 300);
    /* RENAME over a big value drops the replaced one (KS-E4). */
    big_hash("other", 200);
    CHECK(ks_rename(&ctx, "other", 5, "dst", 3, 0, &done) == KS_OK && done);
    commit();
    CHECK_EQ_INT(count_prefix("d", 1), 200);
    CHECK_EQ_INT(ks_dbsize(&ctx), 1);
    teardown();
}

TEST(CopyOfBigHashToOtherDbUsesNewVersion)
{
    setup();
    big_hash("src", 5000); /* more than one copy chunk */
    int done;
    CHECK(ks_copy(&ctx, "src", 3, 3, "dst", 3, 0, &done) == KS_OK && done);
    commit();
    ks_meta s = read_meta("src");
    ctx.db = 3;
    ks_meta d = read_meta("dst");
    CHECK(d.big && d.count == 5000 && d.version != s.version);
    CHECK_EQ_INT(hlen("dst"), 5000);
    ks_meta_free(&s);
    ks_meta_free(&d);
    ctx.db = 0;
    CHECK(ks_del(&ctx, "src", 3, &done) == KS_OK && done);
    commit();
    CHECK_EQ_INT(count_prefix("d\x03", 2), 5000);
    CHECK_EQ_INT(count_prefix("d\x00", 2), 0);
    teardown();
}

TEST(ExpireEntryOfBigRecordNamesVersionAndType)
{
    setup();
    big_hash("h", 200);
    int done;
    CHECK(ks_expire_set(&ctx, "h", 1, ctx.now_ms + 5000, 0, &done) == KS_OK && done);
    commit();
    ks_meta m = read_meta("h");
    ks_ekey k;
    ks_ekey_expire(&k, 0, ctx.now_ms + 5000, "h", 1);
    char *v;
    size_t vl;
    CHECK(eng_get(edb, NULL, k.p, k.n, &v, &vl) == ENG_OK);
    CHECK(vl == 9 && ks_get_le64(v) == m.version && v[8] == KS_HASH);
    eng_free(v);
    ks_ekey_free(&k);
    ks_meta_free(&m);
    teardown();
}

TEST(IdenticalRecordIsNotRewritten)
{
    setup();
    ks_set_opts o = {0};
    int done;
    CHECK(ks_set(&ctx, "k", 1, "v", 1, &o, &done, NULL) == KS_OK && done);
    commit();
    CHECK(ks_set(&ctx, "k", 1, "v", 1, &o, &done, NULL) == KS_OK && done);
    CHECK_EQ_INT(eng_batch_count(ctx.batch), 0);
    CHECK(ks_set(&ctx, "k", 1, "w", 1, &o, &done, NULL) == KS_OK && done);
    CHECK_EQ_INT(eng_batch_count(ctx.batch), 1);
    commit();
    teardown();
}

TEST(TypeNamesRoundTripAndRowsExist)
{
    for (int t = 1; t < KS_TYPE_MAX; t++) {
        const char *n = ks_type_name((ks_type)t);
        CHECK(ks_type_by_name(n, strlen(n)) == (ks_type)t);
    }
    CHECK(ks_type_by_name("ZSet", 4) == KS_ZSET);
    CHECK(ks_type_by_name("nope", 4) == KS_NONE);
    CHECK(strcmp(ks_type_name(KS_NONE), "none") == 0);
    CHECK(ks_type_row(KS_STRING) && ks_type_row(KS_HASH));
    CHECK(ks_type_row(KS_NONE) == NULL && ks_type_row(KS_TYPE_MAX) == NULL);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
