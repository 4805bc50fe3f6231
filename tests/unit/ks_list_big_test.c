/*
 * ks_list_big_test.c -- big lists in engine operations: what LPUSH, LPOP,
 * LINDEX, LSET, LMOVE and LTRIM cost on a 100k-item list in
 * engine reads and batch writes, pops that leave their chunk, chunks of
 * an older writer without headers, RENAME, COPY and reopen of a big list,
 * and WRONGTYPE on other types. Apart from ks_list_test.c (the model and
 * the layout) because each test here builds a big list first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/ks_list.h"
#include "test.h"
#include "ks_fixture.h"
#include "ks_list_util.h"

/* ---- Costs ---------------------------------------------------------------------- */

#define BIG_N 100000

static void fill_big(const char *key)
{
    ks_field *f = calloc(1000, sizeof(*f));
    char(*vb)[16] = calloc(1000, 16);
    for (int b = 0; b < BIG_N / 1000; b++) {
        for (int i = 0; i < 1000; i++) {
            snprintf(vb[i], 16, "v%06d", b * 1000 + i);
            f[i] = (ks_field){vb[i], strlen(vb[i]), NULL, 0};
        }
        uint64_t len;
        CHECK(ks_lpush(&ctx, key, strlen(key), KS_LIST_TAIL, 0, f, 1000, &len) == KS_OK);
        commit();
    }
    free(f);
    free(vb);
}

typedef struct cost {
    uint64_t gets, seeks, writes;
} cost;

static void cost_start(cost *c)
{
    c->gets = ks->stat_gets;
    c->seeks = ks->stat_seeks;
    c->writes = 0;
}

static void cost_end(cost *c)
{
    c->gets = ks->stat_gets - c->gets;
    c->seeks = ks->stat_seeks - c->seeks;
    c->writes = eng_batch_count(ctx.batch);
}

TEST(BigListPointOperationsCostOneOrTwoEngineOperations)
{
    setup();
    fill_big("big");
    cost c;
    ks_val v;
    cost_start(&c);
    CHECK(ks_lindex(&ctx, "big", 3, BIG_N / 2, &v) == KS_OK);
    cost_end(&c);
    CHECK_MEM(v.p, v.n, "v050000");
    ks_val_free(&v);
    CHECK_EQ_INT(c.gets, 2); /* the metadata and the item's chunk */
    CHECK_EQ_INT(c.seeks, 0);

    cost_start(&c);
    CHECK(ks_lset(&ctx, "big", 3, -BIG_N / 2, "new", 3) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(c.gets, 2);   /* the metadata and the chunk */
    CHECK_EQ_INT(c.writes, 1); /* the chunk: the record is unchanged */
    commit();
    CHECK(ks_lindex(&ctx, "big", 3, BIG_N / 2, &v) == KS_OK);
    CHECK_MEM(v.p, v.n, "new");
    ks_val_free(&v);

    cost_start(&c);
    push("big", KS_LIST_HEAD, "h");
    cost_end(&c);
    CHECK_EQ_INT(c.gets, 1);   /* the head is at a chunk boundary: a new chunk */
    CHECK_EQ_INT(c.writes, 2); /* the chunk and the record */
    commit();

    got g = {0};
    cost_start(&c);
    CHECK(ks_lpop(&ctx, "big", 3, KS_LIST_TAIL, 1, got_items, &g) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(g.n, 1);
    CHECK(strcmp(g.v[0], "v099999") == 0);
    got_free(&g);
    CHECK_EQ_INT(c.gets, 2);
    CHECK_EQ_INT(c.seeks, 0);
    CHECK_EQ_INT(c.writes, 1); /* the record: the chunk keeps the popped entry, dead */
    commit();
    check_positions("big");

    cost_start(&c);
    CHECK(lrange("big", 60000, 60099, &g) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(g.n, 100);
    CHECK(strcmp(g.v[0], "v059999") == 0); /* one pushed at the head */
    CHECK(strcmp(g.v[99], "v060098") == 0);
    got_free(&g);
    CHECK_EQ_INT(c.seeks, 0); /* few chunks: a get each, no iterator */
    CHECK(c.gets >= 1 + 4 && c.gets <= 1 + 5);

    cost_start(&c); /* many chunks: one seek, then steps */
    CHECK(lrange("big", 60000, 60999, &g) == KS_OK);
    cost_end(&c);
    CHECK_EQ_INT(g.n, 1000);
    CHECK(strcmp(g.v[999], "v060998") == 0);
    got_free(&g);
    CHECK_EQ_INT(c.seeks, 1);

    cost_start(&c);
    CHECK(ks_ltrim(&ctx, "big", 3, 10, -11) == KS_OK);
    cost_end(&c);
    CHECK(c.writes <= 5); /* two range deletes, the two chunks cut, the record */
    commit();
    uint64_t n;
    CHECK(ks_llen(&ctx, "big", 3, &n) == KS_OK);
    CHECK_EQ_INT(n, BIG_N - 20);
    check_positions("big");

    /* An item over KS_LIST_INLINE bytes lives in a slot of its own: one more get to
     * read it, and a chunk rewritten around it does not rewrite it. */
    char longv[300];
    memset(longv, 'L', sizeof(longv));
    CHECK(ks_lset(&ctx, "big", 3, 1000, longv, sizeof(longv)) == KS_OK);
    commit();
    cost_start(&c);
    CHECK(ks_lindex(&ctx, "big", 3, 1000, &v) == KS_OK);
    cost_end(&c);
    CHECK(v.n == sizeof(longv) && memcmp(v.p, longv, v.n) == 0);
    ks_val_free(&v);
    CHECK_EQ_INT(c.gets, 3);
    cost_start(&c); /* a short range reads the slot with one more get */
    CHECK(lrange("big", 999, 1001, &g) == KS_OK);
    cost_end(&c);
    CHECK(g.n == 3 && strlen(g.v[1]) == sizeof(longv) && g.v[1][0] == 'L');
    got_free(&g);
    CHECK_EQ_INT(c.seeks, 0);
    CHECK_EQ_INT(c.gets, 3); /* the metadata, the chunk, the slot */
    cost_start(&c);
    CHECK(ks_lset(&ctx, "big", 3, 1001, "x", 1) == KS_OK); /* the same chunk */
    cost_end(&c);
    CHECK_EQ_INT(c.writes, 1);
    commit();
    CHECK_EQ_INT(check_positions("big"), 1);

    int deleted;
    cost_start(&c);
    CHECK(ks_del(&ctx, "big", 3, &deleted) == KS_OK);
    cost_end(&c);
    CHECK(deleted);
    CHECK(c.writes <= 3); /* the record, one range delete, the counter */
    teardown();
}

/* Rewrites every chunk of key without its header, as a writer before
 * headers stored them: exactly the live entries. */
static void strip_headers(const char *key)
{
    ks_meta m = meta_of(key);
    ks_fvec keys, vals;
    ks_fvec_init(&keys);
    ks_fvec_init(&vals);
    ks_miter mi;
    ks_miter_open(&mi, &ctx, NULL, ctx.db, m.version);
    for (ks_miter_first(&mi); ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *s = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn != 8) continue;
        CHECK(vn > 1 && ((unsigned char)v[0] & 1) && (unsigned char)v[0] >= 3);
        CHECK(ks_fvec_push_copy(&keys, s, sn, NULL, 0) == 0);
        CHECK(ks_fvec_push_copy(&vals, v + 1, vn - 1, NULL, 0) == 0);
    }
    CHECK(ks_miter_close(&mi, &ctx) == KS_OK);
    for (size_t i = 0; i < keys.n; i++)
        ks_member_put(&ctx, ctx.db, m.version, keys.v[i].f, keys.v[i].fl, vals.v[i].f,
                      vals.v[i].fl);
    commit();
    ks_fvec_free(&keys);
    ks_fvec_free(&vals);
    ks_meta_free(&m);
}

TEST(BigListPopsLeaveTheChunkAndOldChunksStayReadable)
{
    setup();
    set_fill(8);
    mlist ml = {0};
    for (int i = 0; i < 200; i++) { /* head 2^63: chunks from a boundary, the tail mid-chunk */
        char v[16];
        snprintf(v, sizeof(v), "i%d", i);
        push("k", KS_LIST_TAIL, v);
        m_insert(&ml, ml.n, v);
    }
    for (int i = 0; i < 5; i++) { /* the head mid-chunk too */
        push("k", KS_LIST_HEAD, "h");
        m_insert(&ml, 0, "h");
    }
    commit();
    strip_headers("k"); /* as an older writer left them */
    size_t old = 0;
    check_positions_of("k", &old);
    CHECK(old >= 7);
    check_same("k", &ml);
    cost c;
    got g = {0};
    for (int round = 0; round < 3; round++) {
        for (int where = 0; where < 2; where++) {
            int head = where == 0;
            cost_start(&c);
            CHECK(ks_lpop(&ctx, "k", 1, head ? KS_LIST_HEAD : KS_LIST_TAIL, 1, got_items, &g) ==
                  KS_OK);
            cost_end(&c);
            size_t at = head ? 0 : ml.n - 1;
            CHECK(g.n == 1 && strcmp(g.v[0], ml.v[at]) == 0);
            got_free(&g);
            m_remove(&ml, at);
            /* the first pop at each end rewrites the old chunk with a header;
             * then only the record changes */
            CHECK_EQ_INT(c.writes, round == 0 ? 2 : 1);
            commit();
            check_same("k", &ml);
        }
    }
    size_t left = 0;
    check_positions_of("k", &left);
    CHECK_EQ_INT(left, old - 2);
    /* Pushes over the dead entries, and pops that empty chunks. */
    for (int i = 0; i < 40; i++) {
        got_free(&g);
        CHECK(ks_lpop(&ctx, "k", 1, KS_LIST_HEAD, 1, got_items, &g) == KS_OK);
        CHECK(g.n == 1 && strcmp(g.v[0], ml.v[0]) == 0);
        m_remove(&ml, 0);
        if (i % 7 == 0) {
            push("k", KS_LIST_TAIL, "t");
            m_insert(&ml, ml.n, "t");
            push("k", KS_LIST_HEAD, "n");
            m_insert(&ml, 0, "n");
        }
        commit();
        check_same("k", &ml);
        check_positions("k");
    }
    got_free(&g);
    m_clear(&ml);
    free(ml.v);
    teardown();
}

TEST(BigListSurvivesRenameCopyAndReopen)
{
    setup();
    set_fill(8);
    for (int i = 0; i < 100; i++) {
        char v[16];
        snprintf(v, sizeof(v), "i%d", i);
        push("a", KS_LIST_TAIL, v);
    }
    commit();
    int done;
    CHECK(ks_rename(&ctx, "a", 1, "b", 1, 0, &done) == KS_OK && done);
    CHECK(ks_copy(&ctx, "b", 1, 0, "c", 1, 0, &done) == KS_OK && done);
    commit();
    ks_close(ks);
    CHECK(ks_open(edb, &ks) == KS_OK);
    ctx.ks = ks;
    ks_val v;
    CHECK(ks_lindex(&ctx, "b", 1, 99, &v) == KS_OK);
    CHECK_MEM(v.p, v.n, "i99");
    ks_val_free(&v);
    CHECK(ks_lindex(&ctx, "c", 1, -100, &v) == KS_OK);
    CHECK_MEM(v.p, v.n, "i0");
    ks_val_free(&v);
    CHECK(ks_lindex(&ctx, "a", 1, 0, &v) == KS_NOTFOUND);
    check_positions("c");
    teardown();
}

TEST(ListCommandsOnOtherTypesAreWrongType)
{
    setup();
    ks_set_opts o = {0};
    int done;
    CHECK(ks_set(&ctx, "s", 1, "x", 1, &o, &done, NULL) == KS_OK);
    commit();
    ks_field f = {"a", 1, NULL, 0};
    uint64_t len;
    CHECK_EQ_INT(ks_lpush(&ctx, "s", 1, KS_LIST_HEAD, 0, &f, 1, &len), KS_ERR_WRONGTYPE);
    CHECK_EQ_INT(ks_llen(&ctx, "s", 1, &len), KS_ERR_WRONGTYPE);
    push("l", KS_LIST_HEAD, "a");
    ks_val out;
    CHECK_EQ_INT(ks_lmove(&ctx, "l", 1, "s", 1, KS_LIST_HEAD, KS_LIST_HEAD, &out),
                 KS_ERR_WRONGTYPE);
    commit();
    CHECK(ks_llen(&ctx, "l", 1, &len) == KS_OK);
    CHECK_EQ_INT(len, 1); /* nothing moved */
    CHECK_EQ_INT(ks_lmove(&ctx, "none", 4, "s", 1, KS_LIST_HEAD, KS_LIST_HEAD, &out), KS_NOTFOUND);
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
