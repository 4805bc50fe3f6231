/*
 * ks_list_test.c -- lists in the keyspace: a randomized model test of
 * every list operation against an in-memory list (packed and big lists,
 * the conversion between them, LINSERT/LREM shifting either side) and
 * the stored layout (KS-L1: contiguous positions). What the O(1)
 * operations cost on a big list is in ks_list_big_test.c; the model and
 * the layout checker in ks_list_util.h.
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

/* ---- The model test ------------------------------------------------------------- */

/* Short values that repeat (matches for LREM, LPOS, LINSERT), longer
 * ones, and some over the 128 bytes a chunk keeps inline. */
#define VMAX 400
static const char *pick_value(unsigned *seed)
{
    static char buf[VMAX];
    int r = rand_r(seed) % 10;
    if (r < 6) {
        snprintf(buf, sizeof(buf), "%c", 'a' + rand_r(seed) % 4);
    } else {
        int len = r < 9 ? 1 + rand_r(seed) % 40 : 120 + rand_r(seed) % 200;
        for (int i = 0; i < len; i++)
            buf[i] = (char)('a' + rand_r(seed) % 26);
        buf[len] = 0;
    }
    return buf;
}

/* one_op: push 1..5. */
static void op_push(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    int where = rand_r(seed) % 2, cnt = 1 + rand_r(seed) % 5;
    char vals[5][VMAX];
    ks_field f[5];
    for (int i = 0; i < cnt; i++) {
        strcpy(vals[i], pick_value(seed));
        f[i] = (ks_field){vals[i], strlen(vals[i]), NULL, 0};
    }
    uint64_t len;
    CHECK_EQ_INT(ks_lpush(&ctx, key, kl, where, 0, f, (size_t)cnt, &len), KS_OK);
    for (int i = 0; i < cnt; i++)
        m_insert(m, where == KS_LIST_HEAD ? 0 : m->n, vals[i]);
    CHECK_EQ_INT(len, m->n);
}

/* one_op: pop. */
static void op_pop(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    int where = rand_r(seed) % 2;
    uint64_t cnt = 1 + (uint64_t)(rand_r(seed) % 4);
    got g = {0};
    ks_status st = ks_lpop(&ctx, key, kl, where, cnt, got_items, &g);
    if (!m->n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    CHECK_EQ_INT(g.n, cnt < m->n ? cnt : m->n);
    for (size_t i = 0; i < g.n; i++) {
        size_t at = where == KS_LIST_HEAD ? 0 : m->n - 1;
        CHECK(strcmp(g.v[i], m->v[at]) == 0);
        m_remove(m, at);
    }
    got_free(&g);
}

/* one_op: lindex. */
static void op_lindex(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    long long n = (long long)m->n;
    long long i = (rand_r(seed) % (2 * n + 3)) - n - 1;
    ks_val v;
    ks_status st = ks_lindex(&ctx, key, kl, i, &v);
    long long j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
    } else {
        CHECK_EQ_INT(st, KS_OK);
        CHECK_MEM(v.p, v.n, m->v[j]);
        ks_val_free(&v);
    }
}

/* one_op: lset. */
static void op_lset(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    long long n = (long long)m->n;
    long long i = (rand_r(seed) % (2 * n + 3)) - n - 1, j = i < 0 ? i + n : i;
    const char *v = pick_value(seed);
    ks_status st = ks_lset(&ctx, key, kl, i, v, strlen(v));
    if (!m->n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
    } else if (j < 0 || j >= n) {
        CHECK_EQ_INT(st, KS_ERR_MSG);
        ks_ctx_reset(&ctx);
    } else {
        CHECK_EQ_INT(st, KS_OK);
        free(m->v[j]);
        m->v[j] = strdup(v);
    }
}

/* one_op: linsert. */
static void op_linsert(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    char pivot[VMAX], v[VMAX];
    strcpy(pivot, pick_value(seed));
    strcpy(v, pick_value(seed));
    int after = rand_r(seed) % 2;
    long long len;
    ks_status st = ks_linsert(&ctx, key, kl, after, pivot, strlen(pivot), v, strlen(v), &len);
    if (!m->n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    size_t at = 0;
    while (at < m->n && strcmp(m->v[at], pivot) != 0)
        at++;
    if (at == m->n) {
        CHECK_EQ_INT(len, -1);
    } else {
        m_insert(m, at + (size_t)after, v);
        CHECK_EQ_INT(len, m->n);
    }
}

/* one_op: lrem. */
static void op_lrem(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    char v[VMAX];
    strcpy(v, pick_value(seed));
    long long cnt = (rand_r(seed) % 7) - 3;
    uint64_t removed;
    ks_status st = ks_lrem(&ctx, key, kl, cnt, v, strlen(v), &removed);
    if (!m->n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    uint64_t want = 0, limit = cnt < 0 ? (uint64_t)-cnt : (uint64_t)cnt;
    if (cnt >= 0) {
        for (size_t i = 0; i < m->n && (!limit || want < limit);)
            if (strcmp(m->v[i], v) == 0)
                m_remove(m, i), want++;
            else
                i++;
    } else {
        for (size_t i = m->n; i-- > 0 && want < limit;)
            if (strcmp(m->v[i], v) == 0) m_remove(m, i), want++;
    }
    CHECK_EQ_INT(removed, want);
}

/* one_op: ltrim, rarely: it empties lists fast. */
static void op_ltrim(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    long long n = (long long)m->n;
    if (rand_r(seed) % 4) return;
    long long a = (rand_r(seed) % (2 * n + 3)) - n - 1, b = (rand_r(seed) % (2 * n + 3)) - n - 1;
    ks_status st = ks_ltrim(&ctx, key, kl, a, b);
    if (!m->n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    if (a < 0) a += n;
    if (b < 0) b += n;
    if (a < 0) a = 0;
    if (a > b || a >= n) {
        m_clear(m);
    } else {
        if (b >= n) b = n - 1;
        while ((long long)m->n > b + 1)
            m_remove(m, m->n - 1);
        for (long long i = 0; i < a; i++)
            m_remove(m, 0);
    }
}

/* one_op: lpos. */
static void op_lpos(unsigned *seed, const char *key, size_t kl, mlist *m)
{
    char v[VMAX];
    strcpy(v, pick_value(seed));
    long long rank = (rand_r(seed) % 5) - 2;
    if (rank == 0) rank = 1;
    uint64_t cnt = (uint64_t)(rand_r(seed) % 3), maxlen = (uint64_t)(rand_r(seed) % 3) * 3;
    uint64_t *idx;
    size_t ni;
    ks_status st = ks_lpos(&ctx, key, kl, v, strlen(v), rank, cnt, maxlen, &idx, &ni);
    if (!m->n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    uint64_t want[4096], nw = 0, matches = 0, seen = 0, r = rank < 0 ? -rank : rank;
    for (size_t j = 0; j < m->n; j++) {
        size_t i = rank < 0 ? m->n - 1 - j : j;
        if (maxlen && seen >= maxlen) break;
        seen++;
        if (strcmp(m->v[i], v) != 0 || ++matches < r) continue;
        want[nw++] = i;
        if (cnt && nw >= cnt) break;
    }
    CHECK_EQ_INT(ni, nw);
    for (size_t i = 0; i < ni; i++)
        CHECK_EQ_INT(idx[i], want[i]);
    free(idx);
}

/* one_op: lmove, also onto itself. */
static void op_lmove(unsigned *seed, const char *key, size_t kl, mlist *m, mlist *ml,
                     const char **keys)
{
    int to_k = rand_r(seed) % 2, from = rand_r(seed) % 2, to = rand_r(seed) % 2;
    ks_val out;
    ks_status st = ks_lmove(&ctx, key, kl, keys[to_k], strlen(keys[to_k]), from, to, &out);
    if (!m->n) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    size_t at = from == KS_LIST_HEAD ? 0 : m->n - 1;
    CHECK_MEM(out.p, out.n, m->v[at]);
    char *v = strdup(m->v[at]);
    m_remove(m, at);
    mlist *d = &ml[to_k];
    m_insert(d, to == KS_LIST_HEAD ? 0 : d->n, v);
    free(v);
    ks_val_free(&out);
}

static void one_op(unsigned *seed, mlist *ml, const char **keys)
{
    int k = rand_r(seed) % 2;
    const char *key = keys[k];
    mlist *m = &ml[k];
    size_t kl = strlen(key);
    int op = rand_r(seed) % 11;
    if (op <= 2)
        op_push(seed, key, kl, m);
    else if (op == 3)
        op_pop(seed, key, kl, m);
    else if (op == 4)
        op_lindex(seed, key, kl, m);
    else if (op == 5)
        op_lset(seed, key, kl, m);
    else if (op == 6)
        op_linsert(seed, key, kl, m);
    else if (op == 7)
        op_lrem(seed, key, kl, m);
    else if (op == 8)
        op_ltrim(seed, key, kl, m);
    else if (op == 9)
        op_lpos(seed, key, kl, m);
    else
        op_lmove(seed, key, kl, m, ml, keys);
}

static void model_run(long long fill, unsigned seed, int ops)
{
    set_fill(fill);
    const char *keys[2] = {"L0", "L1"};
    mlist ml[2] = {{0}, {0}};
    for (int i = 0; i < ops; i++) {
        one_op(&seed, ml, keys);
        if (i % 7 == 0) commit();
        if (i % 50 == 0) {
            commit();
            check_same(keys[0], &ml[0]);
            check_same(keys[1], &ml[1]);
            check_layout(keys[0]);
            check_layout(keys[1]);
        }
        if (i % 500 == 499) { /* start over now and then: packed lists again */
            int deleted;
            CHECK_EQ_INT(ks_del(&ctx, keys[i % 2], 2, &deleted), KS_OK);
            m_clear(&ml[i % 2]);
        }
    }
    commit();
    check_same(keys[0], &ml[0]);
    check_same(keys[1], &ml[1]);
    m_clear(&ml[0]);
    m_clear(&ml[1]);
    free(ml[0].v);
    free(ml[1].v);
}

TEST(ListOperationsMatchModelWithSmallPackedLimit)
{
    setup();
    model_run(6, 1, 6000); /* packed up to 6 items: most lists turn big */
    teardown();
}

TEST(ListOperationsMatchModelWithDefaultLimit)
{
    setup();
    model_run(-2, 7, 6000);
    teardown();
}

TEST(ListOperationsMatchModelWithPositionsToShift)
{
    setup();
    model_run(1, 3, 6000); /* every list of two items is big */
    teardown();
}

/* ---- Layout --------------------------------------------------------------------- */

TEST(BigListKeepsContiguousPositionsThroughInsertAndRemove)
{
    setup();
    set_fill(4);
    for (int i = 0; i < 50; i++) {
        char v[16];
        snprintf(v, sizeof(v), "%d", i % 10);
        push("k", KS_LIST_TAIL, v);
    }
    commit();
    check_positions("k");
    long long len;
    CHECK(ks_linsert(&ctx, "k", 1, 0, "3", 1, "x", 1, &len) == KS_OK); /* near the head */
    CHECK_EQ_INT(len, 51);
    CHECK(ks_linsert(&ctx, "k", 1, 1, "8", 1, "y", 1, &len) == KS_OK); /* near the tail? first 8 */
    commit();
    check_positions("k");
    uint64_t removed;
    CHECK(ks_lrem(&ctx, "k", 1, 0, "5", 1, &removed) == KS_OK);
    CHECK_EQ_INT(removed, 5);
    CHECK(ks_lrem(&ctx, "k", 1, -2, "9", 1, &removed) == KS_OK);
    CHECK_EQ_INT(removed, 2);
    CHECK(ks_ltrim(&ctx, "k", 1, 3, -4) == KS_OK);
    commit();
    check_positions("k");
    ks_meta m = meta_of("k");
    CHECK_EQ_INT(m.count, 52 - 7 - 6);
    ks_meta_free(&m);
    teardown();
}

TEST(PackedListTurnsBigWhenItOutgrowsTheLimit)
{
    setup();
    set_fill(-1); /* 4 KB */
    char big[1000];
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    for (int i = 0; i < 4; i++)
        push("k", KS_LIST_HEAD, big);
    commit();
    ks_meta m = meta_of("k");
    CHECK(!m.big);
    ks_meta_free(&m);
    push("k", KS_LIST_HEAD, "last"); /* 4010 bytes: still packed */
    commit();
    m = meta_of("k");
    CHECK(!m.big);
    ks_meta_free(&m);
    push("k", KS_LIST_TAIL, big);
    commit();
    m = meta_of("k");
    CHECK(m.big);
    CHECK_EQ_INT(m.count, 6);
    ks_meta_free(&m);
    check_positions("k");
    ks_val v;
    CHECK(ks_lindex(&ctx, "k", 1, 0, &v) == KS_OK);
    CHECK_MEM(v.p, v.n, "last");
    ks_val_free(&v);
    const char *enc;
    CHECK(ks_object_encoding(&ctx, "k", 1, &enc) == KS_OK);
    CHECK(strcmp(enc, "quicklist") == 0);
    teardown();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
