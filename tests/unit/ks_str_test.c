/*
 * ks_str_test.c -- the whole-string read-modify-write of keyspace.h
 * (ks_str_open / ks_str_write) that SETBIT, BITFIELD and the PF* commands
 * use: absent keys, the copy being private until written, the TTL kept,
 * the key counter, WRONGTYPE, and lazy expiry.
 */
#include <string.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"
#include "test.h"
#include "ks_fixture.h"

static int value_is(const char *k, const char *want, size_t n)
{
    ks_val v;
    ks_status st = ks_get(&ctx, k, strlen(k), &v);
    int ok = st == KS_OK && v.n == n && memcmp(v.p, want, n) == 0;
    ks_val_free(&v);
    return ok;
}

TEST(OpeningAnAbsentKeyGivesAnEmptyStringAndWritingCreatesIt)
{
    setup();
    ks_str s;
    CHECK(ks_str_open(&ctx, "b", 1, &s) == KS_OK && !s.exists && s.v.n == 0);
    CHECK(ks_strbuf_resize(&s.v, 3) == 0 && s.v.p[0] == 0 && s.v.p[2] == 0);
    s.v.p[1] = 'x';
    CHECK(ks_str_write(&s) == KS_OK && s.exists);
    ks_str_close(&s);
    commit();
    CHECK(value_is("b", "\0x\0", 3));
    CHECK(ks_dbsize(&ctx) == 1);
    teardown();
}

TEST(EditsStayPrivateUntilWrittenAndTheTtlIsKept)
{
    setup();
    ks_set_opts o = {.expire_ms = ctx.now_ms + 60000};
    int done;
    CHECK(ks_set(&ctx, "k", 1, "abc", 3, &o, &done, NULL) == KS_OK);
    commit();
    ks_str s;
    CHECK(ks_str_open(&ctx, "k", 1, &s) == KS_OK && s.exists && s.v.n == 3);
    s.v.p[0] = 'X';
    CHECK(value_is("k", "abc", 3)); /* not written yet */
    CHECK(ks_strbuf_resize(&s.v, 5) == 0);
    CHECK(ks_str_write(&s) == KS_OK);
    ks_str_close(&s);
    commit();
    CHECK(value_is("k", "Xbc\0\0", 5));
    int64_t when;
    CHECK(ks_expire_get(&ctx, "k", 1, &when) == KS_OK && when == ctx.now_ms + 60000);
    CHECK(ks_dbsize(&ctx) == 1 && ks_expires(&ctx) == 1);
    teardown();
}

TEST(OpeningAHashIsWrongtypeAndAnExpiredKeyIsAbsent)
{
    setup();
    ks_field f = {"f", 1, "v", 1};
    uint64_t added;
    CHECK(ks_hset(&ctx, "h", 1, &f, 1, 0, &added) == KS_OK);
    ks_set_opts o = {.expire_ms = ctx.now_ms + 10};
    int done;
    CHECK(ks_set(&ctx, "old", 3, "abc", 3, &o, &done, NULL) == KS_OK);
    commit();
    ks_str s;
    CHECK(ks_str_open(&ctx, "h", 1, &s) == KS_ERR_WRONGTYPE);
    ks_str_close(&s);
    ctx.now_ms += 20;
    CHECK(ks_str_open(&ctx, "old", 3, &s) == KS_OK && !s.exists && s.v.n == 0);
    CHECK(ks_strbuf_resize(&s.v, 1) == 0);
    CHECK(ks_str_write(&s) == KS_OK);
    ks_str_close(&s);
    commit();
    int64_t when;
    CHECK(ks_expire_get(&ctx, "old", 3, &when) == KS_OK && when == 0); /* a new key, no TTL */
    CHECK(ks_dbsize(&ctx) == 2 && ks_expires(&ctx) == 0);
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
