/*
 * ks_stream_test.c -- streams in the keyspace: what the PEL commands cost
 * on a stream with a long history (every entry delivered and almost every
 * one acknowledged, so the PEL's engine range is mostly tombstones) and a
 * small PEL, counted in engine operations -- point gets, seeks and the
 * iterator's internal steps, tombstones included -- not in time; trimming
 * and DEL of a big stream; the stored layout after XDEL and trims; the
 * header codec and the id formatter against their plain definitions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/ks_encoding.h"
#include "keyspace/ks_stream_int.h"
#include "keyspace/stream.h"
#include "test.h"
#include "ks_fixture.h"

typedef struct cost {
    uint64_t gets, seeks, steps;
} cost;

static void cost_start(cost *c)
{
    *c = (cost){ks->stat_gets, ks->stat_seeks, ks->stat_eng_steps};
}

static void cost_end(cost *c)
{
    *c = (cost){ks->stat_gets - c->gets, ks->stat_seeks - c->seeks, ks->stat_eng_steps - c->steps};
}

static uint64_t cost_total(const cost *c)
{
    return c->gets + c->seeks + c->steps;
}

static void add(const char *key, uint64_t ms)
{
    ks_xadd_args a = {.id_given = 1, .seq_given = 1, .id = {ms, 1}};
    ks_field f = {"f", 1, "value", 5};
    ks_xid id;
    uint64_t trimmed;
    CHECK(ks_xadd(&ctx, key, strlen(key), &a, &f, 1, &id, &trimmed) == KS_OK);
}

static uint64_t entries_seen;
static void count_entry(void *arg, const ks_xid *id, const ks_field *f, size_t n, int exists)
{
    (void)arg, (void)id, (void)f, (void)n, (void)exists;
    entries_seen++;
}

static uint64_t pel_seen;
static void count_pel(void *arg, const ks_xpel_info *p)
{
    (void)arg, (void)p;
    pel_seen++;
}

static void noop_head(void *arg, const ks_xid *next, uint64_t claimed)
{
    (void)arg, (void)next, (void)claimed;
}
static void noop_del(void *arg, const ks_xid *ids, size_t n)
{
    (void)arg, (void)ids, (void)n;
}

#define HISTORY 60000
/* Ids left pending: 3 near the start, 3 in the middle, 3 at the end. */
static int kept(uint64_t ms)
{
    return ms == 7 || ms == 8 || ms == 9 || ms == HISTORY / 2 || ms == HISTORY / 2 + 1 ||
           ms == HISTORY / 2 + 2 || ms > HISTORY - 3;
}

TEST(PelCommandsCostIsBoundedByThePelNotTheHistory)
{
    setup();
    int created, served, miss;
    for (uint64_t ms = 1; ms <= HISTORY; ms++) {
        add("s", ms);
        if (ms % 1000 == 0) commit();
    }
    commit();
    CHECK(ks_xgroup_create(&ctx, "s", 1, "g", 1, &(ks_xid){0, 0}, -1, 0, &created) == KS_OK);
    CHECK(created);
    commit();
    /* Deliver everything to c1 and acknowledge all but a few. */
    for (uint64_t done = 0; done < HISTORY; done += 1000) {
        entries_seen = 0;
        CHECK(ks_xreadgroup(&ctx, "s", 1, "g", 1, "c1", 2, NULL, 1000, 0, count_entry, NULL,
                            &served, &miss) == KS_OK);
        CHECK_EQ_INT(entries_seen, 1000);
        commit();
        ks_xid ids[1000];
        size_t n = 0;
        for (uint64_t ms = done + 1; ms <= done + 1000; ms++)
            if (!kept(ms)) ids[n++] = (ks_xid){ms, 1};
        uint64_t acked;
        CHECK(ks_xack(&ctx, "s", 1, "g", 1, ids, n, &acked) == KS_OK);
        CHECK_EQ_INT(acked, n);
        commit();
    }
    cost c;
    ks_xpending_sum sum;
    cost_start(&c);
    CHECK(ks_xpending_summary(&ctx, "s", 1, "g", 1, &sum, &miss) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(sum.count, 9);
    CHECK(sum.min.ms == 7 && sum.max.ms == HISTORY);
    CHECK_MSG(cost_total(&c) <= 4, "XPENDING summary cost %llu",
              (unsigned long long)cost_total(&c));

    /* XPENDING - + 10: a walk from the first live entry. The tombstones
     * between the pending ids (some 30000 each) are crossed, but never
     * those before the first one. */
    static const ks_xid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    pel_seen = 0;
    cost_start(&c);
    CHECK(ks_xpending_range(&ctx, "s", 1, "g", 1, NULL, 0, &lo, &(ks_xid){9, 1}, 10, 0, count_pel,
                            NULL, &(uint64_t){0}, &miss) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(pel_seen, 3);
    CHECK_MSG(cost_total(&c) <= 12, "XPENDING range cost %llu", (unsigned long long)cost_total(&c));
    /* The same for one consumer's PEL. */
    pel_seen = 0;
    cost_start(&c);
    CHECK(ks_xpending_range(&ctx, "s", 1, "g", 1, "c1", 2, &lo, &(ks_xid){9, 1}, 10, 0, count_pel,
                            NULL, &(uint64_t){0}, &miss) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(pel_seen, 3);
    CHECK_MSG(cost_total(&c) <= 16, "XPENDING consumer cost %llu",
              (unsigned long long)cost_total(&c));

    /* XCLAIM of the pending ids: gets per id, no walk. */
    ks_xid claim[3] = {{7, 1}, {HISTORY / 2, 1}, {HISTORY, 1}};
    ks_xclaim_opts o = {.delivery_time = -1, .retrycount = -1};
    uint64_t claimed;
    entries_seen = 0;
    cost_start(&c);
    CHECK(ks_xclaim(&ctx, "s", 1, "g", 1, "c2", 2, claim, 3, &o, count_entry, NULL, &claimed,
                    &miss) == KS_OK);
    cost_end(&c);
    commit();
    CHECK_EQ_INT(claimed, 3);
    CHECK_MSG(cost_total(&c) <= 40, "XCLAIM cost %llu", (unsigned long long)cost_total(&c));

    /* XAUTOCLAIM of the last 3: no walk past the largest pending id. (Its
     * cursor, the next pending id, is found by stepping over the
     * tombstones of acknowledged ids in between until compaction drops
     * them: XAUTOCLAIM from 0-0 here would cross 30000.) */
    ks_xautoclaim_cbs cb = {noop_head, count_entry, noop_del, NULL};
    entries_seen = 0;
    cost_start(&c);
    CHECK(ks_xautoclaim(&ctx, "s", 1, "g", 1, "c3", 2, 0, &(ks_xid){HISTORY - 2, 1}, 3, 0, &cb,
                        &miss) == KS_OK);
    cost_end(&c);
    commit();
    CHECK_EQ_INT(entries_seen, 3);
    CHECK_MSG(cost_total(&c) <= 60, "XAUTOCLAIM cost %llu", (unsigned long long)cost_total(&c));

    /* History of c1 from 0: its remaining pending ids. */
    entries_seen = 0;
    cost_start(&c);
    CHECK(ks_xreadgroup(&ctx, "s", 1, "g", 1, "c1", 2, &lo, 2, 0, count_entry, NULL, &served,
                        &miss) == KS_OK);
    cost_end(&c);
    commit();
    CHECK_EQ_INT(entries_seen, 2);
    CHECK_MSG(cost_total(&c) <= 30, "XREADGROUP history cost %llu",
              (unsigned long long)cost_total(&c));
    (void)hi;
    teardown();
}

TEST(TrimmedFrontIsNeverWalkedAgain)
{
    setup();
    for (uint64_t ms = 1; ms <= 30000; ms++) {
        add("s", ms);
        if (ms % 1000 == 0) commit();
    }
    commit();
    ks_xtrim_args t = {.strategy = KS_XTRIM_MAXLEN, .maxlen = 10};
    uint64_t deleted;
    CHECK(ks_xtrim(&ctx, "s", 1, &t, &deleted) == KS_OK);
    CHECK_EQ_INT(deleted, 29990);
    commit();
    static const ks_xid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
    cost c;
    uint64_t n;
    entries_seen = 0;
    cost_start(&c);
    CHECK(ks_xrange(&ctx, "s", 1, &lo, &hi, 0, 0, count_entry, NULL, &n) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(n, 10);
    CHECK_MSG(cost_total(&c) <= 16, "XRANGE after a trim cost %llu",
              (unsigned long long)cost_total(&c));
    /* Each XADD with MAXLEN ~ 10 trims whole nodes from the front: the
     * walks stay within a node. */
    ks_xadd_args a = {.id_given = 1, .seq_given = 1, .trim = {KS_XTRIM_MAXLEN, 1, 10, {0, 0}, 0}};
    ks_field f = {"f", 1, "v", 1};
    ks_xid id;
    uint64_t trimmed;
    cost_start(&c);
    for (uint64_t ms = 30001; ms <= 32000; ms++) {
        a.id = (ks_xid){ms, 1};
        CHECK(ks_xadd(&ctx, "s", 1, &a, &f, 1, &id, &trimmed) == KS_OK);
        commit();
    }
    cost_end(&c);
    uint64_t len;
    CHECK(ks_xlen(&ctx, "s", 1, &len) == KS_OK);
    CHECK(len >= 10 && len < 110);
    CHECK_MSG(cost_total(&c) <= 2000 * 8, "2000 XADD MAXLEN ~ cost %llu",
              (unsigned long long)cost_total(&c));
    teardown();
}

/* A value of about bits bits (0..64). */
static uint64_t rand_bits(int bits)
{
    uint64_t v = (uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand();
    return bits >= 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}

/* xs_hdr_valid (the type check) accepts exactly what xs_hdr_parse parses,
 * and the parse's one-load path gives ks_get_varint's values, for fields
 * of every varint length (1..10 bytes) and headers damaged every way:
 * truncated, a byte changed, continuation bits set, garbage. Each input
 * sits at the very end of its own allocation, so a load past it is an
 * ASan error. */
TEST(HeaderCheckAndParseAgreeOnEveryInput)
{
    srand(7);
    for (int round = 0; round < 20000; round++) {
        xs_hdr h, back;
        uint64_t *f = (uint64_t *)&h;
        for (int i = 0; i < XS_EXT_FIELDS; i++)
            f[i] = rand_bits(rand() % 65);
        char ext[XS_EXT_MAX];
        size_t n = xs_hdr_write(&h, ext);
        char *e = malloc(n + 1);
        memcpy(e, ext, n);
        CHECK(xs_hdr_valid(e, n) == 0);
        CHECK(xs_hdr_parse(&back, e, n) == 0);
        CHECK(memcmp(&back, &h, sizeof(h)) == 0);
        size_t m = n; /* a damaged copy of m bytes */
        switch (round % 4) {
        case 0:
            m = (size_t)rand() % (n + 1);
            break;
        case 1:
            e[rand() % n] = (char)rand();
            break;
        case 2:
            e[rand() % n] |= (char)0x80;
            break;
        default:
            m = (size_t)rand() % (XS_EXT_MAX + 1);
            e = realloc(e, m + 1);
            for (size_t i = 0; i < m; i++)
                e[i] = (char)(rand() % 4 ? rand() | 0x80 : rand());
        }
        char *d = malloc(m ? m : 1);
        memcpy(d, e, m);
        CHECK_EQ_INT(xs_hdr_valid(d, m), xs_hdr_parse(&back, d, m));
        free(d);
        free(e);
    }
}

/* 21 one-byte fields and one of len bytes at field at: accepted up to
 * 10 bytes, whichever path (up to 64 bytes, or longer) checks it. */
TEST(HeaderCheckBoundsEachFieldToTenBytes)
{
    for (int pad = 0; pad <= 40; pad += 40)
        for (int at = 0; at < XS_EXT_FIELDS; at++)
            for (size_t len = 9; len <= 12; len++) {
                char e[XS_EXT_MAX];
                size_t n = 0;
                for (int i = 0; i < XS_EXT_FIELDS; i++) {
                    if (i != at) { /* a 5-byte field when padding, else 1 */
                        for (int k = 0; k < (pad ? 4 : 0) && i < 10; k++)
                            e[n++] = (char)0x81;
                        e[n++] = 1;
                        continue;
                    }
                    for (size_t k = 0; k + 1 < len; k++)
                        e[n++] = (char)0x80;
                    e[n++] = 0;
                }
                xs_hdr h;
                int want = len <= 10 ? 0 : -1;
                CHECK_EQ_INT(xs_hdr_parse(&h, e, n), want);
                CHECK_EQ_INT(xs_hdr_valid(e, n), want);
            }
}

TEST(IdFormatIsDecimal)
{
    uint64_t edge[] = {0, 9, 10, 99, 100, 999, 1000, 1764633600123ull, UINT64_MAX - 1, UINT64_MAX};
    for (int i = 0; i < 20000; i++) {
        ks_xid id = {i < 10 ? edge[i] : rand_bits(rand() % 65),
                     i < 10 ? edge[9 - i] : rand_bits(rand() % 65)};
        char buf[64], want[64];
        size_t n = ks_xid_format(&id, buf);
        snprintf(want, sizeof(want), "%llu-%llu", (unsigned long long)id.ms,
                 (unsigned long long)id.seq);
        CHECK_EQ_INT(n, strlen(want));
        CHECK_MSG(strcmp(buf, want) == 0, "%s != %s", buf, want);
    }
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
