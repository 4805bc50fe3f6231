/*
 * ks_hash_fields_test.c -- ks_hash_fields hands over the same pairs, in the
 * same order, as ks_hash_all, on each of its paths: a packed hash that fits
 * the stack array, a packed hash with more pairs than that (the general
 * parser), a big hash (per-field keys), empty and binary fields and
 * values; absent and wrong-type keys; and a corrupt packed value, which is
 * an error with no call at all (so no partial reply goes out).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"
#include "keyspace/ks_encoding.h"
#include "test.h"
#include "ks_fixture.h"

/* The pairs flattened as "<fl>:<f><vl>:<v>" so two readings compare. */
typedef struct flat {
    char *s;
    size_t n, cap;
    int calls;
    uint64_t count;
} flat;

static void flat_put(flat *a, const char *p, size_t n)
{
    char hdr[32];
    int h = snprintf(hdr, sizeof(hdr), "%zu:", n);
    if (a->n + (size_t)h + n > a->cap) {
        a->cap = (a->n + (size_t)h + n) * 2;
        a->s = realloc(a->s, a->cap);
    }
    memcpy(a->s + a->n, hdr, (size_t)h);
    if (n) memcpy(a->s + a->n + h, p, n);
    a->n += (size_t)h + n;
}

static void all_count(void *arg, uint64_t n)
{
    ((flat *)arg)->count = n;
}

static int all_pair(void *arg, const char *f, size_t fl, const char *v, size_t vl)
{
    flat_put(arg, f, fl);
    flat_put(arg, v, vl);
    return 0;
}

static void fields_cb(void *arg, const ks_field *f, size_t n)
{
    flat *a = arg;
    a->calls++;
    a->count = n;
    for (size_t i = 0; i < n; i++) {
        flat_put(a, f[i].f, f[i].fl);
        flat_put(a, f[i].v, f[i].vl);
    }
}

/* Writes n fields f0..f(n-1) with values of vlen bytes (binary) to key. */
static void make_hash(const char *key, size_t n, size_t vlen)
{
    ks_field *p = calloc(n, sizeof(*p));
    char(*names)[16] = calloc(n, 16);
    char *val = malloc(vlen + 1);
    for (size_t i = 0; i < vlen; i++)
        val[i] = (char)(i * 13 % 256);
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(names[i], 16, "f%zu", i);
        p[i] = (ks_field){names[i], (size_t)k, val, i % 3 ? vlen : 0};
    }
    p[0].fl = 0; /* an empty field name */
    uint64_t added;
    CHECK(ks_hset(&ctx, key, strlen(key), p, n, 0, &added) == KS_OK);
    commit();
    free(p);
    free(names);
    free(val);
}

static void check_same_as_hash_all(const char *key, size_t n)
{
    flat a = {0}, b = {0};
    CHECK(ks_hash_all(&ctx, key, strlen(key), all_count, all_pair, &a) == KS_OK);
    CHECK(ks_hash_fields(&ctx, key, strlen(key), fields_cb, &b) == KS_OK);
    CHECK_EQ_INT(b.calls, 1);
    CHECK_EQ_INT(a.count, n);
    CHECK_EQ_INT(b.count, n);
    CHECK(a.n == b.n && memcmp(a.s, b.s, a.n) == 0);
    free(a.s);
    free(b.s);
}

TEST(PackedHashOnTheStackMatchesHashAll)
{
    setup();
    make_hash("small", 9, 40);
    check_same_as_hash_all("small", 9);
    teardown();
}

TEST(PackedHashPastTheStackArrayMatchesHashAll)
{
    setup();
    make_hash("mid", 100, 5);
    check_same_as_hash_all("mid", 100);
    teardown();
}

TEST(BigHashMatchesHashAll)
{
    setup();
    make_hash("big", 300, 200);
    check_same_as_hash_all("big", 300);
    teardown();
}

TEST(AbsentAndWrongTypeMakeNoCall)
{
    setup();
    ks_set_opts o = {0};
    int done;
    CHECK(ks_set(&ctx, "s", 1, "v", 1, &o, &done, NULL) == KS_OK && done);
    commit();
    flat a = {0};
    CHECK(ks_hash_fields(&ctx, "nokey", 5, fields_cb, &a) == KS_NOTFOUND);
    CHECK(ks_hash_fields(&ctx, "s", 1, fields_cb, &a) == KS_ERR_WRONGTYPE);
    CHECK_EQ_INT(a.calls, 0);
    teardown();
}

/* Writes a packed-hash metadata value with the given payload. */
static void put_raw_hash(const char *key, const char *payload, size_t plen)
{
    ks_ekey k;
    ks_ekey_meta(&k, 0, key, strlen(key));
    char v[64];
    v[0] = KS_HASH;
    memcpy(v + 1, payload, plen);
    eng_batch_put(ctx.batch, k.p, k.n, v, plen + 1);
    ks_ekey_free(&k);
    commit();
}

TEST(CorruptPackedHashIsAnErrorWithNoCall)
{
    setup();
    static const struct {
        const char *p;
        size_t n;
    } bad[] = {
        {"\x01\x01"
         "a\x05"
         "b",
         5}, /* value runs past the end */
        {"\x02\x01"
         "a\x01"
         "b",
         5}, /* fewer pairs than the count */
        {"\x01\x01"
         "a\x01"
         "bX",
         6},             /* bytes after the last pair */
        {"\x01\x80", 2}, /* truncated varint */
        {"\x40\x01"
         "a\x01"
         "b",
         5}, /* count past the stack array, short */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        put_raw_hash("bad", bad[i].p, bad[i].n);
        flat a = {0};
        ks_status st = ks_hash_fields(&ctx, "bad", 3, fields_cb, &a);
        CHECK_MSG(st != KS_OK && st != KS_NOTFOUND, "case %zu: status %d", i, (int)st);
        CHECK_EQ_INT(a.calls, 0);
        ks_ctx_reset(&ctx);
    }
    put_raw_hash("good",
                 "\x01\x01"
                 "a\x01"
                 "b",
                 5);
    flat a = {0};
    CHECK(ks_hash_fields(&ctx, "good", 4, fields_cb, &a) == KS_OK);
    CHECK(a.calls == 1 && a.count == 1 && a.n == 6 && memcmp(a.s, "1:a1:b", 6) == 0);
    free(a.s);
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
