/*
 * ks_str_test.c -- the whole-string read-modify-write of keyspace.h
 * (ks_str_open / ks_str_write) that SETBIT, BITFIELD and the PF* commands
 * use: absent keys, the copy being private until written, the TTL kept,
 * the key counter, WRONGTYPE, and lazy expiry; and the ranged open
 * (ks_str_open_ranged) over strings long enough to be chunked, against a
 * model buffer, with the KS-S1 checker.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/ks_type.h"
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

static int chunks_ok(const char *k)
{
    const char *why;
    return ks_str_check(&ctx, k, strlen(k), &why) == 0;
}

/* Bytes [off, off + n) through ks_get_part equal model's (zero past mlen). */
static int part_is(const char *k, const unsigned char *model, size_t mlen, uint64_t off, size_t n)
{
    char buf[4096];
    uint64_t len;
    if (ks_get_part(&ctx, k, strlen(k), off, buf, n, &len) != KS_OK || len != mlen) return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] != (off + i < mlen ? model[off + i] : 0)) return 0;
    return 1;
}

TEST(RangedWritesKeepALongStringChunkedExactAndItsTtl)
{
    setup();
    enum { MAX = 300000 };
    unsigned char *model = calloc(MAX + 4096, 1);
    size_t mlen = 3;
    memcpy(model, "abc", 3);
    ks_set_opts o = {.expire_ms = ctx.now_ms + 60000};
    int done;
    CHECK(ks_set(&ctx, "k", 1, "abc", 3, &o, &done, NULL) == KS_OK);
    commit();
    srand(5);
    for (int round = 0; round < 300; round++) {
        ks_str s;
        CHECK(ks_str_open_ranged(&ctx, "k", 1, &s) == KS_OK && ks_str_len(&s) == mlen);
        for (int j = 0; j < 3; j++) {
            uint64_t off = (uint64_t)rand() % (round < 10 ? 5000 : MAX);
            size_t n = 1 + (size_t)rand() % (j == 0 ? 3000 : 4);
            unsigned char buf[3000], got[3000];
            for (size_t i = 0; i < n; i++)
                buf[i] = (unsigned char)(rand() % 3 ? rand() : 0);
            CHECK(ks_str_read(&s, off, got, n) == KS_OK);
            for (size_t i = 0; i < n; i++)
                CHECK(got[i] == (off + i < mlen ? model[off + i] : 0));
            CHECK(ks_str_update(&s, off, buf, n) == KS_OK);
            memcpy(model + off, buf, n);
            if (off + n > mlen) mlen = off + n;
            CHECK(ks_str_len(&s) == mlen);
        }
        CHECK(ks_str_write(&s) == KS_OK);
        ks_str_close(&s);
        commit();
        if (round % 50 == 49) {
            CHECK(value_is("k", (const char *)model, mlen));
            CHECK(chunks_ok("k"));
        }
        uint64_t at = (uint64_t)rand() % (mlen + 100);
        CHECK(part_is("k", model, mlen, at, 1 + (size_t)rand() % 3000));
    }
    CHECK(mlen > 4096);
    int64_t when;
    CHECK(ks_expire_get(&ctx, "k", 1, &when) == KS_OK && when == ctx.now_ms + 60000);
    CHECK(ks_dbsize(&ctx) == 1 && ks_expires(&ctx) == 1);
    /* A whole write packs it again. */
    ks_set_opts plain = {0};
    CHECK(ks_set(&ctx, "k", 1, "xy", 2, &plain, &done, NULL) == KS_OK);
    commit();
    CHECK(value_is("k", "xy", 2) && chunks_ok("k"));
    free(model);
    teardown();
}

TEST(AWholeWriteLongerThan4096IsChunkedAndABitFarOutIsOneChunk)
{
    setup();
    ks_str s;
    CHECK(ks_str_open(&ctx, "w", 1, &s) == KS_OK);
    CHECK(ks_strbuf_resize(&s.v, 10000) == 0);
    for (int i = 0; i < 10000; i++)
        s.v.p[i] = (char)(i % 7 == 0 ? 0 : i);
    char want[10000];
    memcpy(want, s.v.p, sizeof(want));
    CHECK(ks_str_write(&s) == KS_OK);
    CHECK(s.v.n == 10000 && memcmp(s.v.p, want, 10000) == 0); /* still the caller's to read */
    ks_str_close(&s);
    commit();
    CHECK(value_is("w", want, sizeof(want)) && chunks_ok("w"));
    /* Reopened whole, the value is assembled. */
    CHECK(ks_str_open(&ctx, "w", 1, &s) == KS_OK && s.v.n == 10000);
    CHECK(memcmp(s.v.p, want, 10000) == 0);
    ks_str_close(&s);
    /* One byte at 256 MB: the length, and that chunk only. */
    unsigned char one = 0x80;
    CHECK(ks_str_open_ranged(&ctx, "far", 3, &s) == KS_OK);
    CHECK(ks_str_update(&s, 1u << 28, &one, 1) == KS_OK && ks_str_write(&s) == KS_OK);
    ks_str_close(&s);
    commit();
    uint64_t steps = ks_member_steps(ks);
    CHECK(chunks_ok("far"));
    CHECK(ks_member_steps(ks) - steps <= 2); /* one chunk walked */
    char b[2];
    uint64_t len;
    CHECK(ks_get_part(&ctx, "far", 3, (1u << 28) - 1, b, 2, &len) == KS_OK);
    CHECK(len == (1u << 28) + 1 && b[0] == 0 && (unsigned char)b[1] == 0x80);
    teardown();
}

TEST(TheCheckerFindsAChunkEndingInZero)
{
    setup();
    ks_str s;
    unsigned char x = 1;
    CHECK(ks_str_open_ranged(&ctx, "c", 1, &s) == KS_OK);
    CHECK(ks_str_update(&s, 9000, &x, 1) == KS_OK && ks_str_write(&s) == KS_OK);
    ks_str_close(&s);
    commit();
    CHECK(chunks_ok("c"));
    ks_meta m;
    CHECK(ks_meta_read(&ctx, NULL, 0, "c", 1, &m) == KS_OK && m.big);
    char sfx[8] = {0};
    ks_member_put(&ctx, 0, m.version, sfx, 8, "a\0", 2); /* chunk 0 ending in a zero */
    ks_meta_free(&m);
    commit();
    const char *why = NULL;
    CHECK(ks_str_check(&ctx, "c", 1, &why) == -1 && why != NULL);
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
