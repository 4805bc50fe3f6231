/*
 * ks_rdb_stream_test.c -- DUMP and RESTORE of streams (ks_rdb_stream.c,
 * ks_rdb_stream_load.c, ks_stream_dump.c) on a real keyspace: a payload
 * redis-server 7.0 made (rdbcompression no) restores and dumps back to the
 * same bytes, its nodes keep Redis's boundaries for later XADDs, every
 * truncation (but one that the footer's bytes complete, as in Redis) and a
 * consumer PEL id missing from its group's PEL are refused with Redis's
 * text.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_rdb.h"
#include "keyspace/stream.h"
#include "test.h"
#include "ks_fixture.h"

/* stream-node-max-entries 2; XADD a 1-1 f v n 12; XADD a 1-2 f w n -300;
 * XADD a 2-0 g x; XGROUP CREATE a g 0; XREADGROUP GROUP g c1 COUNT 1
 * STREAMS a >; XREADGROUP GROUP g c2 STREAMS a >; DUMP a */
static const unsigned char redis_payload[] = {
    0x13, 0x02, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x30, 0x30, 0x00, 0x00, 0x00, 0x12, 0x00, 0x02, 0x01, 0x00, 0x01, 0x02, 0x01,
    0x81, 0x66, 0x02, 0x81, 0x6e, 0x02, 0x00, 0x01, 0x02, 0x01, 0x00, 0x01, 0x00, 0x01, 0x81, 0x76,
    0x02, 0x0c, 0x01, 0x05, 0x01, 0x02, 0x01, 0x00, 0x01, 0x01, 0x01, 0x81, 0x77, 0x02, 0xde, 0xd4,
    0x02, 0x05, 0x01, 0xff, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x1d, 0x1d, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x01, 0x01, 0x00, 0x01,
    0x01, 0x01, 0x81, 0x67, 0x02, 0x00, 0x01, 0x02, 0x01, 0x00, 0x01, 0x00, 0x01, 0x81, 0x78, 0x02,
    0x04, 0x01, 0xff, 0x03, 0x02, 0x00, 0x01, 0x01, 0x00, 0x00, 0x03, 0x01, 0x01, 0x67, 0x02, 0x00,
    0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x60, 0xb0, 0x07, 0x34, 0xa2, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x60, 0xb0, 0x07, 0x34, 0xa2,
    0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x60, 0xb0, 0x07, 0x34, 0xa2, 0x01, 0x00, 0x00, 0x01, 0x02, 0x02, 0x63,
    0x31, 0x60, 0xb0, 0x07, 0x34, 0xa2, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x02, 0x63, 0x32, 0x60, 0xb0, 0x07,
    0x34, 0xa2, 0x01, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x61, 0x7b, 0x44, 0x76, 0x50, 0xc3, 0xd3, 0x94};

static ks_status restore(const char *key, const unsigned char *p, size_t n)
{
    return ks_restore(&ctx, key, strlen(key), (const char *)p, n, 1, 0);
}

/* body[0..n) with a correct footer (malloc'd into *out). */
static size_t refoot(const unsigned char *body, size_t n, unsigned char **out)
{
    ks_rdb_out o = {NULL, 0, 0, 0};
    ks_rdb_put(&o, body, n);
    ks_rdb_put_footer(&o);
    *out = o.p;
    return o.n;
}

TEST(RedisStreamPayloadRestoresAndDumpsBackByteForByte)
{
    setup();
    CHECK(restore("a", redis_payload, sizeof(redis_payload)) == KS_OK);
    commit();
    ks_xinfo xi;
    CHECK(ks_xinfo_stream(&ctx, "a", 1, &xi) == KS_OK);
    CHECK(xi.length == 3 && xi.nodes == 2 && xi.entries_added == 3 && xi.groups == 1);
    CHECK(xi.last_id.ms == 2 && xi.last_id.seq == 0 && xi.first_id.ms == 1);
    ks_xpending_sum ps;
    int miss;
    CHECK(ks_xpending_summary(&ctx, "a", 1, "g", 1, &ps, &miss) == KS_OK && ps.count == 3);
    ks_val d;
    CHECK(ks_dump(&ctx, "a", 1, &d) == KS_OK);
    CHECK(d.n == sizeof(redis_payload) && memcmp(d.p, redis_payload, d.n) == 0);
    ks_val_free(&d);
    teardown();
}

TEST(RestoredNodesSplitWhereRedisWould)
{
    setup();
    ks_limits lim = *ks_get_limits(ks);
    lim.stream_node_max_entries = 2;
    ks_set_limits(ks, &lim);
    CHECK(restore("a", redis_payload, sizeof(redis_payload)) == KS_OK);
    commit();
    /* the tail node (2-0) has room for one more entry, as in Redis */
    ks_xadd_args a = {0};
    ks_field fv = {"g", 1, "y", 1};
    ks_xid id;
    uint64_t trimmed, want[] = {2, 3, 3};
    for (int i = 0; i < 3; i++) {
        CHECK(ks_xadd(&ctx, "a", 1, &a, &fv, 1, &id, &trimmed) == KS_OK);
        commit();
        ks_xinfo xi;
        CHECK(ks_xinfo_stream(&ctx, "a", 1, &xi) == KS_OK);
        CHECK(xi.nodes == want[i]);
    }
    teardown();
}

TEST(EveryTruncatedStreamPayloadIsRefused)
{
    setup();
    size_t body = sizeof(redis_payload) - 10, accepted = 0;
    for (size_t cut = 1; cut < body; cut++) {
        unsigned char *p;
        size_t n = refoot(redis_payload, cut, &p);
        ks_status st = restore("t", p, n);
        if (st == KS_OK) { /* the object ran into the footer, as Redis reads it: it must hold */
            ks_val d;
            CHECK(ks_dump(&ctx, "t", 1, &d) == KS_OK);
            ks_val_free(&d);
            accepted++;
        } else {
            CHECK(st == KS_ERR_MSG && strcmp(ctx.err, "ERR Bad data format") == 0);
        }
        ks_ctx_reset(&ctx);
        eng_batch_clear(ctx.batch);
        free(p);
    }
    CHECK(accepted <= 1); /* cut after the max deleted id: entries-added 10, no groups */
    teardown();
}

TEST(ConsumerPelIdMissingFromGroupPelIsRefused)
{
    setup();
    size_t body = sizeof(redis_payload) - 10;
    unsigned char *copy = malloc(body);
    memcpy(copy, redis_payload, body);
    /* c1's one pending id (1-1) follows its name, seen time and count */
    const unsigned char *c1 = memmem(copy, body,
                                     "\x02"
                                     "c1",
                                     3);
    CHECK(c1 != NULL);
    size_t at = (size_t)(c1 - copy) + 3 + 8 + 1 + 15;
    CHECK(copy[at] == 1);
    copy[at] = 3; /* 1-3: no such pending entry */
    unsigned char *p;
    size_t n = refoot(copy, body, &p);
    CHECK(restore("t", p, n) == KS_ERR_MSG && strcmp(ctx.err, "ERR Bad data format") == 0);
    ks_ctx_reset(&ctx);
    eng_batch_clear(ctx.batch);
    copy[at] = 2; /* 1-2: c2's, then held twice */
    free(p);
    n = refoot(copy, body, &p);
    CHECK(restore("t", p, n) == KS_ERR_MSG && strcmp(ctx.err, "ERR Bad data format") == 0);
    free(p);
    free(copy);
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
