/*
 * ks_rdb_test.c -- the RDB pieces of ks_rdb.h against bytes Redis 7.0
 * writes: the CRC-64 check value, string encodings, an LZF string from
 * Redis's DUMP, and the listpack, intset and ziplist readers on good and
 * damaged blobs.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "keyspace/ks_rdb.h"
#include "test.h"

TEST(Crc64IsRedisJonesCrc)
{
    CHECK(ks_rdb_crc64(0, (const unsigned char *)"123456789", 9) == 0xe9c6d914c4b8d9caULL);
    /* running value: two halves give the whole */
    uint64_t a = ks_rdb_crc64(0, (const unsigned char *)"1234", 4);
    CHECK(ks_rdb_crc64(a, (const unsigned char *)"56789", 5) == 0xe9c6d914c4b8d9caULL);
}

static size_t put_string(const char *s, unsigned char *out)
{
    ks_rdb_out o = {NULL, 0, 0, 0};
    ks_rdb_put_string(&o, s, strlen(s));
    memcpy(out, o.p, o.n);
    size_t n = o.n;
    free(o.p);
    return n;
}

TEST(StringsAreIntegerEncodedOnlyWhenCanonical)
{
    unsigned char b[64];
    CHECK(put_string("7", b) == 2 && b[0] == 0xC0 && b[1] == 7);
    CHECK(put_string("-300", b) == 3 && b[0] == 0xC1 && b[1] == 0xD4 && b[2] == 0xFE);
    CHECK(put_string("-2000000000", b) == 5 && b[0] == 0xC2);
    CHECK(put_string("2147483648", b) == 11 && b[0] == 10); /* beyond 32 bits: raw */
    CHECK(put_string("0123", b) == 5 && b[0] == 4);         /* leading zero: raw */
    CHECK(put_string("+1", b) == 3 && b[0] == 2);
    CHECK(put_string("-0", b) == 3 && b[0] == 2);
}

TEST(LzfStringFromRedisDumpDecodes)
{
    /* Redis 7.0's DUMP of SET k "abcdefgh"*200: its string part */
    static const unsigned char z[] = {0xc3, 0x21, 0x46, 0x40, 0x08, 0x61, 0x62, 0x63, 0x64, 0x65,
                                      0x66, 0x67, 0x68, 0x61, 0xe0, 0xff, 0x07, 0xe1, 0xff, 0x07,
                                      0xe1, 0xff, 0x07, 0xe1, 0xff, 0x07, 0xe1, 0xff, 0x07, 0xe1,
                                      0xff, 0x07, 0x61, 0x07, 0x01, 0x67, 0x68};
    ks_rdb_in r = {z, z + sizeof(z)};
    char *s;
    size_t n;
    CHECK(ks_rdb_get_string(&r, &s, &n) == 0);
    CHECK(n == 1600 && r.p == r.end);
    for (size_t i = 0; i < n; i++)
        CHECK(s[i] == "abcdefgh"[i % 8]);
    free(s);
    for (size_t cut = 1; cut < sizeof(z); cut++) { /* every truncation is refused */
        ks_rdb_in t = {z, z + cut};
        CHECK(ks_rdb_get_string(&t, &s, &n) < 0);
    }
}

typedef struct seen {
    char out[512];
    size_t n;
} seen;

static int collect(void *arg, const char *s, size_t n)
{
    seen *v = arg;
    v->n += (size_t)snprintf(v->out + v->n, sizeof(v->out) - v->n, "%.*s,", (int)n, s);
    return 0;
}

TEST(ListpackReadsEveryEntryEncoding)
{
    /* Redis 7.0's listpack of HSET h ab 5 -5 300 -70000 1099511627776 */
    static const unsigned char lp[] = {0x22, 0x00, 0x00, 0x00, 0x06, 0x00, 0x82, 0x61, 0x62,
                                       0x03, 0x05, 0x01, 0xdf, 0xfb, 0x02, 0xc1, 0x2c, 0x02,
                                       0xf2, 0x90, 0xee, 0xfe, 0x04, 0xf4, 0x00, 0x00, 0x00,
                                       0x00, 0x00, 0x01, 0x00, 0x00, 0x09, 0xff};
    seen v = {{0}, 0};
    CHECK(ks_rdb_listpack(lp, sizeof(lp), collect, &v) == 0);
    CHECK(strcmp(v.out, "ab,5,-5,300,-70000,1099511627776,") == 0);
    unsigned char bad[sizeof(lp)];
    memcpy(bad, lp, sizeof(lp));
    bad[4] = 5; /* header count */
    CHECK(ks_rdb_listpack(bad, sizeof(bad), collect, &v) < 0);
    memcpy(bad, lp, sizeof(lp));
    bad[9] = 4; /* a back-length */
    CHECK(ks_rdb_listpack(bad, sizeof(bad), collect, &v) < 0);
    memcpy(bad, lp, sizeof(lp));
    bad[sizeof(lp) - 1] = 0; /* terminator */
    CHECK(ks_rdb_listpack(bad, sizeof(bad), collect, &v) < 0);
    CHECK(ks_rdb_listpack(lp, sizeof(lp) - 1, collect, &v) < 0); /* total bytes */
}

TEST(IntsetMustBeStrictlyAscending)
{
    /* Redis 7.0's intset of SADD s 1 -2 70000 (32-bit) */
    static const unsigned char is[] = {0x04, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0xfe, 0xff,
                                       0xff, 0xff, 0x01, 0x00, 0x00, 0x00, 0x70, 0x11, 0x01, 0x00};
    seen v = {{0}, 0};
    CHECK(ks_rdb_intset(is, sizeof(is), collect, &v) == 0);
    CHECK(strcmp(v.out, "-2,1,70000,") == 0);
    unsigned char bad[sizeof(is)];
    memcpy(bad, is, sizeof(is));
    bad[12] = 0xfe, bad[13] = bad[14] = bad[15] = 0xff; /* -2 twice */
    CHECK(ks_rdb_intset(bad, sizeof(bad), collect, &v) < 0);
    CHECK(ks_rdb_intset(is, sizeof(is) - 1, collect, &v) < 0);
}

TEST(ZiplistReadsStringsAndIntegers)
{
    /* "a", 1 (immediate), "bcd", 10000 (int16): 25 bytes, last entry at 20 */
    static const unsigned char zl[] = {25,  0,    0,    0,    20,   0,    0,    0,    4,
                                       0,   0x00, 0x01, 'a',  0x03, 0xf2, 0x02, 0x03, 'b',
                                       'c', 'd',  0x05, 0xc0, 0x10, 0x27, 0xff};
    seen v = {{0}, 0};
    CHECK(ks_rdb_ziplist(zl, sizeof(zl), collect, &v) == 0);
    CHECK(strcmp(v.out, "a,1,bcd,10000,") == 0);
    unsigned char bad[sizeof(zl)];
    memcpy(bad, zl, sizeof(zl));
    bad[8] = 3; /* header count */
    CHECK(ks_rdb_ziplist(bad, sizeof(bad), collect, &v) < 0);
    memcpy(bad, zl, sizeof(zl));
    bad[16] = 0x3f; /* a string length past the end */
    CHECK(ks_rdb_ziplist(bad, sizeof(bad), collect, &v) < 0);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
