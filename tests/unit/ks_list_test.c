/*
 * ks_list_test.c -- lists in the keyspace: a randomized model test of
 * every list operation against an in-memory list (packed and big lists,
 * the conversion between them, LINSERT/LREM shifting either side), the
 * stored layout (KS-L1: contiguous positions), and what the O(1)
 * operations cost on a big list in engine reads and batch writes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/ks_list.h"
#include "test.h"
#include "ks_fixture.h"

/* ---- The model ---------------------------------------------------------------- */

typedef struct mlist {
    char **v;
    size_t n, cap;
} mlist;

static void m_insert(mlist *l, size_t at, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = realloc(l->v, l->cap * sizeof(char *));
    }
    memmove(l->v + at + 1, l->v + at, (l->n - at) * sizeof(char *));
    l->v[at] = strdup(s);
    l->n++;
}

static void m_remove(mlist *l, size_t at)
{
    free(l->v[at]);
    memmove(l->v + at, l->v + at + 1, (l->n - at - 1) * sizeof(char *));
    l->n--;
}

static void m_clear(mlist *l)
{
    while (l->n)
        m_remove(l, l->n - 1);
}

/* ---- Helpers ------------------------------------------------------------------ */

typedef struct got {
    char **v;
    size_t n;
} got;

static void got_items(void *arg, const ks_field *f, size_t n)
{
    got *g = arg;
    g->v = calloc(n + 1, sizeof(char *));
    g->n = n;
    for (size_t i = 0; i < n; i++)
        g->v[i] = strndup(f[i].f, f[i].fl);
}

static void got_free(got *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->v[i]);
    free(g->v);
    memset(g, 0, sizeof(*g));
}

/* LRANGE's two callbacks: the count, then pieces of items. */
static void got_count(void *arg, uint64_t n)
{
    got *g = arg;
    g->v = calloc(n + 1, sizeof(char *));
    g->n = 0;
}

static void got_piece(void *arg, const ks_field *f, size_t n)
{
    got *g = arg;
    for (size_t i = 0; i < n; i++)
        g->v[g->n++] = strndup(f[i].f, f[i].fl);
}

static ks_status lrange(const char *key, long long a, long long b, got *g)
{
    return ks_lrange(&ctx, key, strlen(key), a, b, got_count, got_piece, g);
}

static void check_same(const char *key, const mlist *m)
{
    got g = {0};
    ks_status st = lrange(key, 0, -1, &g);
    if (m->n == 0) {
        CHECK_EQ_INT(st, KS_NOTFOUND);
        return;
    }
    CHECK_EQ_INT(st, KS_OK);
    CHECK_EQ_INT(g.n, m->n);
    for (size_t i = 0; i < m->n; i++)
        CHECK_MSG(strcmp(g.v[i], m->v[i]) == 0, "%s[%zu] = %s, model %s", key, i, g.v[i], m->v[i]);
    got_free(&g);
    uint64_t n;
    CHECK_EQ_INT(ks_llen(&ctx, key, strlen(key), &n), KS_OK);
    CHECK_EQ_INT(n, m->n);
}

static void push(const char *key, int where, const char *v)
{
    ks_field f = {v, strlen(v), NULL, 0};
    uint64_t len;
    CHECK_EQ_INT(ks_lpush(&ctx, key, strlen(key), where, 0, &f, 1, &len), KS_OK);
}

static ks_meta meta_of(const char *key)
{
    ks_meta m;
    CHECK(ks_meta_read(&ctx, NULL, ctx.db, key, strlen(key), &m) == KS_OK);
    return m;
}

static void set_fill(long long fill)
{
    ks_limits l = *ks_get_limits(ks);
    l.list_max_listpack_size = fill;
    ks_set_limits(ks, &l);
}

static size_t check_positions(const char *key);

/* The layout of whichever of keys is a big list (KS-L1). */
static void check_layout(const char *key)
{
    ks_meta m;
    CHECK(ks_meta_read(&ctx, NULL, ctx.db, key, strlen(key), &m) == KS_OK);
    int big = m.type == KS_LIST && m.big;
    ks_meta_free(&m);
    if (big) check_positions(key);
}

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

static void one_op(unsigned *seed, mlist *ml, const char **keys)
{
    int k = rand_r(seed) % 2;
    const char *key = keys[k];
    mlist *m = &ml[k];
    size_t kl = strlen(key);
    int op = rand_r(seed) % 11;
    long long n = (long long)m->n;
    if (op <= 2) { /* push 1..5 */
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
    } else if (op == 3) { /* pop */
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
    } else if (op == 4) { /* lindex */
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
    } else if (op == 5) { /* lset */
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
    } else if (op == 6) { /* linsert */
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
    } else if (op == 7) { /* lrem */
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
    } else if (op == 8) { /* ltrim, rarely: it empties lists fast */
        if (rand_r(seed) % 4) return;
        long long a = (rand_r(seed) % (2 * n + 3)) - n - 1,
                  b = (rand_r(seed) % (2 * n + 3)) - n - 1;
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
    } else if (op == 9) { /* lpos */
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
    } else { /* lmove, also onto itself */
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

/* KS-L1: a big list's members are exactly one chunk per 32 positions of
 * [head, head+count) with one entry per position (a chunk with a header,
 * 3 + 2 * its first slot, may hold dead entries of pops at either end),
 * and a slot key right after its chunk for each live out-of-line entry.
 * Returns the slots seen. *headerless (may be NULL) gets the chunks
 * without a header. */
static size_t check_positions_of(const char *key, size_t *headerless)
{
    ks_meta m = meta_of(key);
    CHECK(m.big);
    uint64_t head = ks_get_le64(m.ext), n = m.count, items = 0;
    const int sh = KS_LIST_CHUNK_SHIFT;
    const uint64_t span = 1ull << sh;
    uint64_t c = head >> sh, last = (head + n - 1) >> sh;
    size_t slots = 0;
    ks_miter mi;
    ks_miter_open(&mi, &ctx, NULL, ctx.db, m.version);
    ks_miter_first(&mi);
    for (; c <= last; c++) {
        CHECK(ks_miter_valid(&mi));
        size_t sn, vn;
        const char *s = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        CHECK_EQ_INT(sn, 8);
        CHECK(ks_get_be64(s) == c);
        uint64_t first = c << sh < head ? head : c << sh, end = (c << sh) + span - 1;
        if (end > head + n - 1) end = head + n - 1;
        const char *p = v, *pe = v + vn;
        uint64_t out[64], pos = first;
        int nout = 0, hdr = vn > 0 && (unsigned char)v[0] >= 3 && (v[0] & 1);
        if (hdr) {
            pos = (c << sh) + (((unsigned char)*p++ - 3) >> 1);
            CHECK(pos <= first);
        } else if (headerless) {
            (*headerless)++;
        }
        for (; p < pe || pos <= end; pos++) {
            uint64_t e;
            int live = pos >= first && pos <= end;
            CHECK(live || hdr);
            CHECK(pos < (c << sh) + span);
            CHECK((p = ks_get_varint(p, pe, &e)) != NULL);
            items += live;
            if (e == 1) {
                if (live) out[nout++] = pos;
            } else {
                CHECK(e % 2 == 0 && e / 2 <= KS_LIST_INLINE && e / 2 <= (uint64_t)(pe - p));
                p += e / 2;
            }
        }
        ks_miter_next(&mi);
        for (int i = 0; i < nout; i++, slots++) {
            CHECK(ks_miter_valid(&mi));
            s = ks_miter_suffix(&mi, &sn);
            ks_miter_value(&mi, &vn);
            CHECK_EQ_INT(sn, 9);
            CHECK(ks_get_be64(s) == c && (unsigned char)s[8] == (out[i] & (span - 1)));
            CHECK(vn > KS_LIST_INLINE);
            ks_miter_next(&mi);
        }
    }
    CHECK(!ks_miter_valid(&mi)); /* nothing else under the version */
    CHECK(ks_miter_close(&mi, &ctx) == KS_OK);
    CHECK_EQ_INT(items, n);
    ks_meta_free(&m);
    return slots;
}

static size_t check_positions(const char *key)
{
    return check_positions_of(key, NULL);
}

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
