/*
 * reply_hash_test.c -- add_reply_hash and add_reply_keyed_hash write
 * exactly the bytes of the add_reply_map_len/add_reply_array_len plus
 * add_reply_bulk sequence they replace, in RESP2 and RESP3: for empty
 * fields and values, binary bytes, every length-digit boundary, values
 * larger than a reply block, behind a deferred length, after a partly full
 * tail block, and not at all for a client in CLIENT REPLY OFF mode.
 */
#include <string.h>

#include "server/reply.h"
#include "server/server.h"
#include "test.h"

typedef struct tclient {
    client c;
    struct client_private p;
} tclient;

static void tc_init(tclient *t, int resp)
{
    memset(t, 0, sizeof(*t));
    t->c.resp = resp;
    t->c.priv = &t->p;
}

/* The chain's bytes (R2: reply_bytes counts them all); caller frees. */
static char *tc_bytes(tclient *t, size_t *n)
{
    size_t total = 0;
    for (reply_block *b = t->p.reply_head; b; b = b->next)
        total += b->used;
    char *out = malloc(total + 1);
    size_t k = 0;
    for (reply_block *b = t->p.reply_head; b; b = b->next) {
        memcpy(out + k, b->buf, b->used);
        k += b->used;
    }
    *n = total;
    return out;
}

/* The reference: the per-element writers. */
static void old_hash(client *c, const ks_field *f, size_t n, reply_hash_part what)
{
    if (what == REPLY_HASH_PAIRS)
        add_reply_map_len(c, (long)n);
    else
        add_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        if (what != REPLY_HASH_VALUES) add_reply_bulk(c, f[i].f, f[i].fl);
        if (what != REPLY_HASH_FIELDS) add_reply_bulk(c, f[i].v, f[i].vl);
    }
}

/* Builds both replies after the same prefix (pre bytes of filler) and
 * checks they match byte for byte and in reply_bytes. */
static void check_same(const ks_field *f, size_t n, reply_hash_part what, int resp, size_t pre,
                       int keyed)
{
    tclient a, b;
    tc_init(&a, resp);
    tc_init(&b, resp);
    char *fill = malloc(pre + 1);
    memset(fill, '+', pre);
    reply_append(&a.c, fill, pre);
    reply_append(&b.c, fill, pre);
    free(fill);
    if (keyed) {
        add_reply_keyed_hash(&a.c, "user:\r\n\0", 8, f, n);
        add_reply_bulk(&b.c, "user:\r\n\0", 8);
    } else {
        add_reply_hash(&a.c, f, n, what);
    }
    old_hash(&b.c, f, n, what);
    size_t an, bn;
    char *ab = tc_bytes(&a, &an), *bb = tc_bytes(&b, &bn);
    CHECK_EQ_INT(an, bn);
    CHECK_EQ_INT(a.p.reply_bytes, an);
    CHECK(memcmp(ab, bb, an) == 0);
    free(ab);
    free(bb);
    reply_free_all(&a.c);
    reply_free_all(&b.c);
}

static void check_all_ways(const ks_field *f, size_t n)
{
    static const size_t pres[] = {0, 100, 16 * 1024 - 40, 16 * 1024 - 1, 16 * 1024};
    for (int resp = 2; resp <= 3; resp++)
        for (size_t p = 0; p < sizeof(pres) / sizeof(pres[0]); p++) {
            check_same(f, n, REPLY_HASH_PAIRS, resp, pres[p], 0);
            check_same(f, n, REPLY_HASH_FIELDS, resp, pres[p], 0);
            check_same(f, n, REPLY_HASH_VALUES, resp, pres[p], 0);
            check_same(f, n, REPLY_HASH_PAIRS, resp, pres[p], 1);
        }
}

TEST(EmptyHashIsAnEmptyMapOrArray)
{
    check_all_ways(NULL, 0);
    tclient t;
    tc_init(&t, 3);
    add_reply_hash(&t.c, NULL, 0, REPLY_HASH_PAIRS);
    add_reply_hash(&t.c, NULL, 0, REPLY_HASH_FIELDS);
    size_t n;
    char *s = tc_bytes(&t, &n);
    CHECK_MEM(s, n, "%0\r\n*0\r\n");
    free(s);
    reply_free_all(&t.c);
}

TEST(EmptyFieldAndEmptyValue)
{
    ks_field f[] = {{"", 0, "v", 1}, {"f", 1, "", 0}, {"", 0, "", 0}};
    check_all_ways(f, 3);
    tclient t;
    tc_init(&t, 2);
    add_reply_hash(&t.c, f, 1, REPLY_HASH_PAIRS);
    size_t n;
    char *s = tc_bytes(&t, &n);
    CHECK_MEM(s, n, "*2\r\n$0\r\n\r\n$1\r\nv\r\n");
    free(s);
    reply_free_all(&t.c);
}

TEST(BinaryBytesAndLengthDigitBoundaries)
{
    static const size_t lens[] = {1, 9, 10, 99, 100, 999, 1000, 9999, 10000};
    enum { N = sizeof(lens) / sizeof(lens[0]) };
    char *buf = malloc(10000 + N); /* field i starts at buf + i */
    for (size_t i = 0; i < 10000 + N; i++)
        buf[i] = (char)(i * 7 % 256); /* NUL, CR, LF, 0xff among them */
    ks_field f[N];
    for (size_t i = 0; i < N; i++)
        f[i] = (ks_field){buf + i, lens[i], buf, lens[N - 1 - i]};
    check_all_ways(f, N);
    free(buf);
}

TEST(ValuesLargerThanAReplyBlock)
{
    size_t big = 3 * 16 * 1024 + 17;
    char *v = malloc(big);
    memset(v, 'x', big);
    v[0] = '\r';
    v[big - 1] = '\n';
    ks_field f[] = {{"a", 1, v, big}, {"b", 1, "1", 1}, {v, big, v, 5}};
    check_all_ways(f, 3);
    free(v);
}

TEST(ManyFieldsSpanningBlocks)
{
    enum { N = 2000 };
    static ks_field f[N];
    static char names[N][8];
    for (int i = 0; i < N; i++) {
        int k = snprintf(names[i], sizeof(names[i]), "f%d", i);
        f[i] = (ks_field){names[i], (size_t)k, "some value", 10};
    }
    check_all_ways(f, N);
}

TEST(DeferredTailGetsANewBlock)
{
    ks_field f[] = {{"k", 1, "v", 1}};
    tclient t;
    tc_init(&t, 2);
    void *len = add_reply_deferred_len(&t.c);
    add_reply_hash(&t.c, f, 1, REPLY_HASH_PAIRS);
    set_deferred_array_len(&t.c, len, 1);
    size_t n;
    char *s = tc_bytes(&t, &n);
    CHECK_MEM(s, n, "*1\r\n*2\r\n$1\r\nk\r\n$1\r\nv\r\n");
    CHECK_EQ_INT(t.p.reply_bytes, n);
    free(s);
    reply_free_all(&t.c);
}

TEST(ReplyOffWritesNothing)
{
    ks_field f[] = {{"k", 1, "v", 1}};
    tclient t;
    tc_init(&t, 3);
    t.p.reply_off = 1;
    add_reply_hash(&t.c, f, 1, REPLY_HASH_PAIRS);
    add_reply_keyed_hash(&t.c, "key", 3, f, 1);
    CHECK(t.p.reply_head == NULL);
    CHECK_EQ_INT(t.p.reply_bytes, 0);
}

TEST(TruncateTakesBackAWholeHash)
{
    ks_field f[] = {{"k", 1, "v", 1}};
    tclient t;
    tc_init(&t, 3);
    add_reply_ok(&t.c);
    reply_mark m;
    reply_mark_get(&t.c, &m);
    add_reply_keyed_hash(&t.c, "key", 3, f, 1);
    reply_truncate(&t.c, &m);
    size_t n;
    char *s = tc_bytes(&t, &n);
    CHECK_MEM(s, n, "+OK\r\n");
    CHECK_EQ_INT(t.p.reply_bytes, 5);
    free(s);
    reply_free_all(&t.c);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
