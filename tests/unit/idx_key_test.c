/*
 * idx_key_test.c -- the index key encoding orders like the values it
 * encodes: random TAG / NUMERIC / DESC tuples, compared encoded with memcmp
 * and decoded with the intended order.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/idx_key.h"
#include "test.h"

#include "test_rng.h"

/* Short strings over a tiny alphabet that stresses the escapes. */
static size_t rand_tag(char *out)
{
    static const unsigned char alpha[] = {0x00, 0x01, 0x02, 0x7f, 0xfe, 0xff, 'a'};
    size_t n = rnd() % 5;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)alpha[rnd() % sizeof(alpha)];
    return n;
}

static double rand_num(void)
{
    static const double special[] = {0.0,
                                     -0.0,
                                     1.0,
                                     -1.0,
                                     0.5,
                                     -0.5,
                                     1e-310,
                                     -1e-310,
                                     9007199254740993.0,
                                     -9007199254740993.0,
                                     1e308,
                                     -1e308,
                                     INFINITY,
                                     -INFINITY,
                                     2.25,
                                     -2.25};
    if (rnd() % 2) return special[rnd() % 16];
    double d = (double)(int64_t)(rnd() % 2001) - 1000;
    return d / (double)(1 + rnd() % 4);
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    int c = idx_key_cmp(a, an, b, bn);
    return (c > 0) - (c < 0);
}

static int cmp_num(double a, double b)
{
    return (a > b) - (a < b);
}

TEST(TagOrderEqualsBytewiseOrderWithEmbeddedZeros)
{
    for (int desc = 0; desc < 2; desc++) {
        for (int i = 0; i < 20000; i++) {
            char a[8], b[8];
            size_t an = rand_tag(a), bn = rand_tag(b);
            idx_buf ea = {0}, eb = {0};
            idx_key_put_tag(&ea, a, an, desc);
            idx_key_put_tag(&eb, b, bn, desc);
            /* a trailing hash key must never change the order of the values */
            idx_buf_append(&ea, "\xff\xff", 2);
            idx_buf_append(&eb, "", 0);
            int want = cmp_bytes(a, an, b, bn);
            if (desc) want = -want;
            int got = cmp_bytes(ea.data, ea.len, eb.data, eb.len);
            if (want != 0) CHECK_EQ_INT(got, want);
            idx_buf_free(&ea);
            idx_buf_free(&eb);
        }
    }
}

TEST(NumericOrderEqualsNumericOrderIncludingNegativeFractions)
{
    for (int desc = 0; desc < 2; desc++) {
        for (int i = 0; i < 20000; i++) {
            double a = rand_num(), b = rand_num();
            idx_buf ea = {0}, eb = {0};
            idx_key_put_num(&ea, a, desc);
            idx_key_put_num(&eb, b, desc);
            CHECK_EQ_INT(ea.len, 8);
            int want = cmp_num(a, b);
            if (desc) want = -want;
            CHECK_EQ_INT(cmp_bytes(ea.data, ea.len, eb.data, eb.len), want);
            double back = idx_key_get_num(ea.data, desc);
            CHECK(back == a);
            idx_buf_free(&ea);
            idx_buf_free(&eb);
        }
    }
}

TEST(NegativeZeroEncodesAsZero)
{
    idx_buf a = {0}, b = {0};
    idx_key_put_num(&a, -0.0, 0);
    idx_key_put_num(&b, 0.0, 0);
    CHECK(a.len == 8 && memcmp(a.data, b.data, 8) == 0);
    idx_buf_free(&a);
    idx_buf_free(&b);
}

/* A tuple (TAG asc, NUMERIC desc, TAG desc, NUMERIC asc) then a hash key. */
typedef struct tuple {
    char t1[8], t3[8], key[8];
    size_t n1, n3, nk;
    double x2, x4;
} tuple;

static void rand_tuple(tuple *t)
{
    t->n1 = rand_tag(t->t1);
    t->n3 = rand_tag(t->t3);
    t->nk = rand_tag(t->key);
    t->x2 = rand_num();
    t->x4 = rand_num();
}

static void encode_tuple(const tuple *t, idx_buf *b)
{
    idx_key_entry_prefix(b, 7);
    idx_key_put_tag(b, t->t1, t->n1, 0);
    idx_key_put_num(b, t->x2, 1);
    idx_key_put_tag(b, t->t3, t->n3, 1);
    idx_key_put_num(b, t->x4, 0);
    idx_buf_append(b, t->key, t->nk);
}

static int cmp_tuple(const tuple *a, const tuple *b)
{
    int c = cmp_bytes(a->t1, a->n1, b->t1, b->n1);
    if (!c) c = -cmp_num(a->x2, b->x2);
    if (!c) c = -cmp_bytes(a->t3, a->n3, b->t3, b->n3);
    if (!c) c = cmp_num(a->x4, b->x4);
    if (!c) c = cmp_bytes(a->key, a->nk, b->key, b->nk);
    return c;
}

TEST(CompositeTupleOrderEqualsFieldByFieldOrderThenKey)
{
    for (int i = 0; i < 50000; i++) {
        tuple a, b;
        rand_tuple(&a);
        rand_tuple(&b);
        if (rnd() % 3 == 0) { /* share a prefix of fields often */
            memcpy(b.t1, a.t1, a.n1);
            b.n1 = a.n1;
            b.x2 = a.x2;
            if (rnd() % 2) {
                memcpy(b.t3, a.t3, a.n3);
                b.n3 = a.n3;
            }
        }
        idx_buf ea = {0}, eb = {0};
        encode_tuple(&a, &ea);
        encode_tuple(&b, &eb);
        CHECK_EQ_INT(cmp_bytes(ea.data, ea.len, eb.data, eb.len), cmp_tuple(&a, &b));
        idx_buf_free(&ea);
        idx_buf_free(&eb);
    }
}

TEST(SkipFieldAndGetTagRecoverTheValuesAndTheKey)
{
    for (int i = 0; i < 5000; i++) {
        tuple t;
        rand_tuple(&t);
        idx_buf e = {0}, out = {0};
        encode_tuple(&t, &e);
        size_t off = IDX_ENTRY_PREFIX_LEN;
        size_t n = idx_key_skip_field(e.data + off, e.len - off, 0, 0);
        CHECK(n > 0);
        CHECK_EQ_INT(idx_key_get_tag(e.data + off, n, 0, &out), 0);
        CHECK(out.len == t.n1 && (!t.n1 || memcmp(out.data, t.t1, t.n1) == 0));
        off += n;
        CHECK_EQ_INT(idx_key_skip_field(e.data + off, e.len - off, 1, 1), 8);
        CHECK(idx_key_get_num(e.data + off, 1) == t.x2);
        off += 8;
        n = idx_key_skip_field(e.data + off, e.len - off, 0, 1);
        CHECK(n > 0);
        out.len = 0;
        CHECK_EQ_INT(idx_key_get_tag(e.data + off, n, 1, &out), 0);
        CHECK(out.len == t.n3 && (!t.n3 || memcmp(out.data, t.t3, t.n3) == 0));
        off += n + 8;
        CHECK(e.len - off == t.nk && memcmp(e.data + off, t.key, t.nk) == 0);
        idx_buf_free(&e);
        idx_buf_free(&out);
    }
}

TEST(SkipFieldRejectsTruncatedTag)
{
    idx_buf e = {0};
    idx_key_put_tag(&e, "a\0b", 3, 0);
    for (size_t cut = 0; cut < e.len; cut++)
        CHECK_EQ_INT(idx_key_skip_field(e.data, cut, 0, 0), 0);
    CHECK_EQ_INT(idx_key_skip_field(e.data, e.len, 0, 0), e.len);
    CHECK_EQ_INT(idx_key_skip_field(e.data, 7, 1, 0), 0);
    idx_buf_free(&e);
}

TEST(PrefixSuccessorIsAboveEveryExtension)
{
    idx_buf b = {0};
    idx_buf_append(&b, "x\x01\xff\xff", 4);
    CHECK_EQ_INT(idx_key_prefix_successor(&b), 0);
    CHECK_MEM(b.data, b.len, "x\x02");
    b.len = 0;
    idx_buf_append(&b, "\xff\xff", 2);
    CHECK_EQ_INT(idx_key_prefix_successor(&b), -1);
    idx_buf_free(&b);
}

/* The hook takes the implied key's canonical test from the parse
 * (idx_parse_num_canon): it must agree with idx_key_num_text_canonical on
 * leading zeros, "-0", the 15-digit limit and every non-integer. */
TEST(ParseNumCanonAgreesWithTextCanonical)
{
    static const char *v[] = {"0",
                              "-0",
                              "00",
                              "007",
                              "7",
                              "-7",
                              "-07",
                              "123456789012345",
                              "-123456789012345",
                              "1234567890123456",
                              "1.5",
                              "1e3",
                              "-",
                              "+1",
                              "inf",
                              " 1",
                              "10",
                              "-10"};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        double a = 0, b = 0;
        int canon = -1, n = (int)strlen(v[i]);
        int ra = idx_parse_num_canon(v[i], (size_t)n, &a, &canon);
        int rb = idx_parse_num(v[i], (size_t)n, &b);
        CHECK_MSG(ra == rb && (ra != 0 || a == b), "%s", v[i]);
        CHECK_MSG(canon == idx_key_num_text_canonical(v[i], (size_t)n), "%s: %d", v[i], canon);
    }
}

TEST(ParseNumAcceptsRedisFloatsAndRejectsTheRest)
{
    double d;
    CHECK(idx_parse_num("-1.5", 4, &d) == 0 && d == -1.5);
    CHECK(idx_parse_num("1e3", 3, &d) == 0 && d == 1000);
    CHECK(idx_parse_num("inf", 3, &d) == 0 && isinf(d) && d > 0);
    CHECK(idx_parse_num("-inf", 4, &d) == 0 && isinf(d) && d < 0);
    CHECK(idx_parse_num("9007199254740993", 16, &d) == 0);
    CHECK(idx_parse_num("", 0, &d) == -1);
    CHECK(idx_parse_num(" 1", 2, &d) == -1);
    CHECK(idx_parse_num("1 ", 2, &d) == -1);
    CHECK(idx_parse_num("abc", 3, &d) == -1);
    CHECK(idx_parse_num("nan", 3, &d) == -1);
    CHECK(idx_parse_num("1e", 2, &d) == -1);
    CHECK(idx_parse_num("1\0002", 3, &d) == -1);
    CHECK(idx_parse_num("1e400", 5, &d) == -1);
    CHECK(idx_parse_num("1e-400", 6, &d) == -1);
}

/* The implied-key suffix: one byte for the key the tuple names, the others
 * ordered around it as the hash keys order, and every one decodes back. */
TEST(ImpliedKeySuffixOrdersAsTheHashKeysAndDecodesBack)
{
    idx_buf f = {0}, imp = {0}, enc[12] = {{0}};
    idx_key_put_num(&f, 42, 1);
    CHECK_EQ_INT(idx_key_implied(&imp, "user:", 5, f.data, f.len, 1, 1), 1);
    CHECK(imp.len == 7 && memcmp(imp.data, "user:42", 7) == 0);
    const char *keys[] = {"user:42",  "",        "a",      "user:",       "user:4", "user:41",
                          "user:420", "user:43", "user:5", "user:42\xff", "zz",     "user:042"};
    const size_t nk = sizeof(keys) / sizeof(keys[0]);
    for (size_t i = 0; i < nk; i++) {
        idx_key_put_hash_key(&enc[i], keys[i], strlen(keys[i]), imp.data, imp.len, 1);
        const char *k;
        size_t kl;
        CHECK_EQ_INT(idx_key_get_hash_key(enc[i].data, enc[i].len, imp.data, imp.len, 1, &k, &kl),
                     0);
        CHECK(kl == strlen(keys[i]) && memcmp(k, keys[i], kl) == 0);
    }
    CHECK_EQ_INT(enc[0].len, 1);
    for (size_t i = 0; i < nk; i++)
        for (size_t j = 0; j < nk; j++) {
            int want = idx_key_cmp(keys[i], strlen(keys[i]), keys[j], strlen(keys[j]));
            int got = idx_key_cmp(enc[i].data, enc[i].len, enc[j].data, enc[j].len);
            CHECK_MSG((want > 0) == (got > 0) && (want < 0) == (got < 0), "%s vs %s", keys[i],
                      keys[j]);
        }
    /* Markers that do not fit the implied key are malformed. */
    const char *k;
    size_t kl;
    CHECK(idx_key_get_hash_key("\x03x", 2, imp.data, imp.len, 1, &k, &kl) == -1);
    CHECK(idx_key_get_hash_key("\x01x", 2, imp.data, imp.len, 1, &k, &kl) == -1);
    CHECK(idx_key_get_hash_key("\x01", 1, NULL, 0, 0, &k, &kl) == -1);
    CHECK(idx_key_get_hash_key("\x00zz", 3, imp.data, imp.len, 1, &k, &kl) == -1);
    CHECK(idx_key_get_hash_key("\x02a", 2, imp.data, imp.len, 1, &k, &kl) == -1);
    CHECK(idx_key_get_hash_key("\x00zz", 3, NULL, 0, 0, &k, &kl) == 0 && kl == 2);
    CHECK(idx_key_get_hash_key("", 0, imp.data, imp.len, 1, &k, &kl) == -1);
    for (size_t i = 0; i < nk; i++)
        idx_buf_free(&enc[i]);
    idx_buf_free(&f);
    idx_buf_free(&imp);
}

TEST(OnlyIntegersAndTagsImplyAKey)
{
    idx_buf f = {0}, imp = {0};
    static const struct {
        double d;
        const char *want;
    } cases[] = {{0, "p0"},
                 {-0.0, "p0"},
                 {-7, "p-7"},
                 {1e15, "p1000000000000000"},
                 {1.5, NULL},
                 {1e300, NULL},
                 {9007199254740992.0, NULL},
                 {-9007199254740991.0, "p-9007199254740991"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        f.len = 0;
        idx_key_put_num(&f, cases[i].d, (int)(i & 1));
        int has = idx_key_implied(&imp, "p", 1, f.data, f.len, 1, (int)(i & 1));
        if (!cases[i].want) {
            CHECK_MSG(!has && imp.len == 0, "case %zu", i);
        } else {
            CHECK_MSG(has && imp.len == strlen(cases[i].want) &&
                          memcmp(imp.data, cases[i].want, imp.len) == 0,
                      "case %zu: %.*s", i, (int)imp.len, imp.data);
        }
    }
    f.len = 0;
    idx_key_put_tag(&f, "a\0b", 3, 1);
    CHECK_EQ_INT(idx_key_implied(&imp, "k:", 2, f.data, f.len, 0, 1), 1);
    CHECK(imp.len == 5 && memcmp(imp.data, "k:a\0b", 5) == 0);
    idx_buf_free(&f);
    idx_buf_free(&imp);
}

/* The write path's shortcut: a NUMERIC value whose text is canonical is
 * its own implied text, and the suffix built from the prefix and that text
 * in two parts is the one built from the implied key. */
TEST(CanonicalIntegerTextIsTheImpliedTextAndGivesTheSameSuffix)
{
    static const char *texts[] = {"0",
                                  "-0",
                                  "7",
                                  "-7",
                                  "07",
                                  "+7",
                                  "1.0",
                                  "1e3",
                                  "42",
                                  "-042",
                                  "100000",
                                  "",
                                  "-",
                                  " 1",
                                  "999999999999999",
                                  "1000000000000000",
                                  "12a"};
    static const char *keys[] = {"u:42", "u:4", "u:420", "u:5", "u:", "u", "", "v", "u:-7"};
    idx_buf f = {0}, imp = {0}, a = {0}, b = {0};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        size_t n = strlen(texts[i]);
        double d;
        int canon = idx_key_num_text_canonical(texts[i], n);
        if (idx_parse_num(texts[i], n, &d) != 0) {
            CHECK_MSG(!canon, "%s", texts[i]);
            continue;
        }
        f.len = 0;
        idx_key_put_num(&f, d, 0);
        int has = idx_key_implied(&imp, "u:", 2, f.data, f.len, 1, 0);
        int same = has && imp.len == 2 + n && memcmp(imp.data + 2, texts[i], n) == 0;
        /* Canonical means the same text; past 15 digits it may say no (the
         * long way is right too). */
        CHECK_MSG(canon ? same : (!same || n > 15), "%s: canonical %d, implied '%.*s'", texts[i],
                  canon, (int)imp.len, imp.data);
        if (!canon) continue;
        for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
            a.len = b.len = 0;
            idx_key_put_hash_key(&a, keys[j], strlen(keys[j]), imp.data, imp.len, 1);
            idx_key_put_hash_key2(&b, keys[j], strlen(keys[j]), "u:", 2, texts[i], n);
            CHECK_MSG(a.len == b.len && memcmp(a.data, b.data, a.len) == 0, "%s, %s", texts[i],
                      keys[j]);
        }
    }
    idx_buf_free(&f);
    idx_buf_free(&imp);
    idx_buf_free(&a);
    idx_buf_free(&b);
}

/* The implied text as the decoder first made it: through a double, the
 * digits by snprintf. The integer decoding must give exactly this. */
static size_t reference_implied(const char *f, int desc, char *out)
{
    double d = idx_key_get_num(f, desc);
    if (!(d > -9007199254740992.0 && d < 9007199254740992.0) || d != (double)(int64_t)d) return 0;
    return (size_t)snprintf(out, 32, "p%lld", (long long)(int64_t)d);
}

/* A random NUMERIC value of every kind: integers of every digit count and
 * both signs, the edges of 2^53, fractions, huge numbers, and raw bytes
 * that no write made (NaN, -0, subnormals). */
static void rand_encoded(idx_buf *f, int desc)
{
    f->len = 0;
    uint64_t r = rnd(), pow10 = 1;
    for (unsigned k = (unsigned)(r % 17); k; k--)
        pow10 *= 10;
    double lim = 9007199254740992.0;
    switch ((r >> 8) % 6) {
    case 0:
        idx_key_put_num(f, (double)(rnd() % pow10), desc);
        break;
    case 1:
        idx_key_put_num(f, -(double)(rnd() % pow10), desc);
        break;
    case 2:
        idx_key_put_num(f, (r & 512 ? lim : -lim) + (double)(rnd() % 5) - 2, desc);
        break;
    case 3:
        idx_key_put_num(f, (double)(int64_t)rnd() / (double)pow10, desc);
        break;
    case 4:
        idx_key_put_num(f, ldexp((double)(rnd() % 1000), (int)(rnd() % 80)), desc);
        break;
    default:
        idx_buf_reserve(f, 8);
        idx_put_u64(f->data, r & 1024 ? rnd() : (r & 2048 ? 1ULL << 63 : ~(1ULL << 63)));
        f->len = 8;
    }
}

TEST(ImpliedIntegerTextMatchesTheDoubleDecodingOverRandomValues)
{
    idx_buf f = {0}, imp = {0};
    char want[40];
    for (int i = 0; i < 200000; i++) {
        int desc = (int)(rnd() & 1);
        rand_encoded(&f, desc);
        size_t wl = reference_implied(f.data, desc, want);
        int has = idx_key_implied(&imp, "p", 1, f.data, f.len, 1, desc);
        CHECK_MSG(has == (wl != 0) && (!has || (imp.len == wl && memcmp(imp.data, want, wl) == 0)),
                  "value %.17g desc %d: want '%.*s', got %d '%.*s'", idx_key_get_num(f.data, desc),
                  desc, (int)wl, want, has, (int)imp.len, imp.data);
    }
    idx_buf_free(&f);
    idx_buf_free(&imp);
}

/* idx_key_implied_num, which scans write hit keys with, gives the
 * reference text behind every prefix length its short copy treats apart
 * (0..3 bytewise, 4..7 and 8..16 in two moves, longer by memcpy) and at
 * every digit-count boundary, the 32-bit switch of its digit loop and the
 * edges of 2^53, both signs and directions; it writes nothing past the
 * length it returns. */
TEST(ImpliedNumTextAtDigitBoundariesBehindEveryPrefixLength)
{
    static const char pre[] = "abcdefghijklmnopqrstuvwxyz";
    idx_buf f = {0};
    char want[80], got[80];
    uint64_t vals[64];
    size_t nv = 0;
    for (uint64_t p10 = 1; p10 <= 1000000000000000ULL; p10 *= 10) {
        vals[nv++] = p10 - 1;
        vals[nv++] = p10;
    }
    vals[nv++] = 4294967295ULL;
    vals[nv++] = 4294967296ULL;
    vals[nv++] = 4294967297ULL;
    vals[nv++] = 9007199254740991ULL;
    vals[nv++] = 9007199254740992ULL; /* 2^53: no implied key */
    for (size_t plen = 0; plen <= 20; plen++)
        for (size_t i = 0; i < nv; i++)
            for (int sign = 0; sign < 2; sign++)
                for (int desc = 0; desc < 2; desc++) {
                    f.len = 0;
                    idx_key_put_num(&f, sign ? -(double)vals[i] : (double)vals[i], desc);
                    int has = vals[i] < 9007199254740992ULL;
                    int wl = snprintf(want, sizeof(want), "%.*s%s%llu", (int)plen, pre,
                                      sign && vals[i] ? "-" : "", (unsigned long long)vals[i]);
                    memset(got, '#', sizeof(got));
                    size_t gl = idx_key_implied_num(got, pre, plen, f.data, desc);
                    CHECK_MSG(has ? gl == (size_t)wl && memcmp(got, want, gl) == 0 : gl == 0,
                              "plen %zu value %s%llu desc %d: want '%s', got '%.*s'", plen,
                              sign ? "-" : "", (unsigned long long)vals[i], desc, has ? want : "",
                              (int)gl, got);
                    CHECK(got[gl] == '#' || !has);
                }
    idx_buf_free(&f);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
