/*
 * eng_merger_test.c -- merger.c, the merging iterator under every read of
 * the engine: children interleaved in both directions, a child's run
 * stepped through without looking at the others, next_key's one call,
 * the sorted union under random moves, a child's error. Apart from
 * eng_db_test.c, which goes through the engine's public header, because
 * these drive the iterator directly over memtables and fake children.
 */
#include "engine/dbformat.h"
#include "engine/engine.h"
#include "engine/memtable.h"
#include "engine/merger.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mem_put(memtable *m, uint64_t seq, int type, const char *k, const char *v)
{
    mem_add(m, seq, type, slice_make(k, strlen(k)), slice_make(v, strlen(v)));
}

/* "k<seq> k<seq> ..." for the entries of m walked forward or backward. */
static void walk(iter *m, int backward, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    for (backward ? iter_seek_last(m) : iter_seek_first(m); iter_valid(m);
         backward ? iter_prev(m) : iter_next(m)) {
        slice k = iter_key(m);
        n += (size_t)snprintf(out + n, cap - n, "%s%.*s%d", n ? " " : "",
                              (int)ikey_user_key(k).size, k.data, (int)ikey_sequence(k));
    }
}

TEST(MergerInterleavesChildrenInBothDirections)
{
    memtable *a = mem_new(), *b = mem_new(), *c = mem_new(), *e = mem_new();
    mem_put(a, 1, ENG_TYPE_VALUE, "a", "1");
    mem_put(a, 5, ENG_TYPE_VALUE, "c", "5");
    mem_put(b, 2, ENG_TYPE_VALUE, "b", "2");
    mem_put(b, 6, ENG_TYPE_DELETION, "c", "");
    mem_put(b, 7, ENG_TYPE_VALUE, "e", "7");
    mem_put(c, 3, ENG_TYPE_VALUE, "c", "3"); /* c: newest (6) first, then 5, 3 */
    iter *ch[4] = {mem_iter_new(a), mem_iter_new(b), mem_iter_new(c), mem_iter_new(e)};
    mem_unref(a);
    mem_unref(b);
    mem_unref(c);
    mem_unref(e);
    iter *m = merger_new(ch, 4);
    char got[64];
    walk(m, 0, got, sizeof(got));
    CHECK_MSG(!strcmp(got, "a1 b2 c6 c5 c3 e7"), "forward: %s", got);
    walk(m, 1, got, sizeof(got));
    CHECK_MSG(!strcmp(got, "e7 c3 c5 c6 b2 a1"), "backward: %s", got);
    buf t = {0};
    ikey_append(&t, slice_make("c", 1), 5, ENG_TYPE_SEEK);
    iter_seek(m, slice_make(t.data, t.len)); /* lands on c@5 */
    CHECK(iter_valid(m) && ikey_sequence(iter_key(m)) == 5);
    iter_prev(m); /* direction switch: c@6 */
    CHECK(iter_valid(m) && ikey_sequence(iter_key(m)) == 6);
    iter_next(m);
    iter_next(m); /* c@5, then c@3 */
    CHECK(iter_valid(m) && ikey_sequence(iter_key(m)) == 3);
    iter_prev(m);
    iter_prev(m);
    iter_prev(m); /* c@5, c@6, b@2 */
    CHECK(iter_valid(m) && iter_key(m).data[0] == 'b');
    CHECK(iter_status(m) == ENG_OK);
    buf_free(&t);
    iter_free(m);
}

/* A child that counts the calls the merger makes to look at it. */
typedef struct counting_iter {
    iter base;
    iter *in;
    long looks; /* valid() and key() calls */
} counting_iter;

static int ci_valid(const iter *it)
{
    counting_iter *c = (counting_iter *)it;
    c->looks++;
    return iter_valid(c->in);
}
static void ci_seek_first(iter *it)
{
    iter_seek_first(((counting_iter *)it)->in);
}
static void ci_seek_last(iter *it)
{
    iter_seek_last(((counting_iter *)it)->in);
}
static void ci_seek(iter *it, slice t)
{
    iter_seek(((counting_iter *)it)->in, t);
}
static void ci_next(iter *it)
{
    iter_next(((counting_iter *)it)->in);
}
static void ci_prev(iter *it)
{
    iter_prev(((counting_iter *)it)->in);
}
static slice ci_key(const iter *it)
{
    counting_iter *c = (counting_iter *)it;
    c->looks++;
    return iter_key(c->in);
}
static slice ci_value(const iter *it)
{
    return iter_value(((const counting_iter *)it)->in);
}
static eng_status ci_status(const iter *it)
{
    return iter_status(((const counting_iter *)it)->in);
}
static void ci_destroy(iter *it)
{
    iter_free(((counting_iter *)it)->in);
    free(it);
}
static const struct iter_ops counting_ops = {
    ci_valid, ci_seek_first, ci_seek_last, ci_seek,   ci_next,
    ci_prev,  ci_key,        ci_value,     ci_status, ci_destroy,
};

static counting_iter *counting_new(memtable *m)
{
    counting_iter *c = calloc(1, sizeof(*c));
    CHECK(c != NULL);
    c->base.ops = &counting_ops;
    c->in = mem_iter_new(m);
    return c;
}

/* Invariant G3: a run of entries from one child costs the merger no look
 * at the children that are not current (a merge of many tables walks one
 * table's run of keys at a time), in both directions. */
TEST(MergerStepsThroughOneChildsRunWithoutLookingAtTheOthers)
{
    memtable *mt[4];
    counting_iter *ci[4];
    iter *ch[4];
    char k[16];
    for (int i = 0; i < 4; i++)
        mt[i] = mem_new();
    for (int j = 0; j < 1000; j++) {
        snprintf(k, sizeof(k), "a%04d", j);
        mem_put(mt[0], (uint64_t)j + 1, ENG_TYPE_VALUE, k, "v");
    }
    for (int i = 1; i < 4; i++) {
        snprintf(k, sizeof(k), "b%d", i);
        mem_put(mt[i], 5000 + (uint64_t)i, ENG_TYPE_VALUE, k, "v");
    }
    for (int i = 0; i < 4; i++) {
        ci[i] = counting_new(mt[i]);
        ch[i] = &ci[i]->base;
        mem_unref(mt[i]);
    }
    iter *m = merger_new(ch, 4);
    for (int backward = 0; backward < 2; backward++) {
        long n = 0, before = 0, after = 0;
        for (int i = 1; i < 4; i++)
            before += ci[i]->looks;
        for (backward ? iter_seek_last(m) : iter_seek_first(m); iter_valid(m);
             backward ? iter_prev(m) : iter_next(m))
            n++;
        CHECK_MSG(n == 1003, "entries: %ld", n);
        for (int i = 1; i < 4; i++)
            after += ci[i]->looks;
        /* a seek, the three single entries and the runs' ends: a few dozen
         * looks, not three per step */
        CHECK_MSG(after - before < 60, "%s: %ld looks at idle children for %ld steps",
                  backward ? "backward" : "forward", after - before, n);
    }
    CHECK(iter_status(m) == ENG_OK);
    iter_free(m);
}

static int cmp_ikeys(const void *a, const void *b)
{
    const buf *x = a, *y = b;
    return ikey_compare(slice_make(x->data, x->len), slice_make(y->data, y->len));
}

/* G1 and G3 together: after any mix of seeks, steps and direction switches
 * over children holding interleaved runs, the merger is where a sorted
 * array of every entry says. */
TEST(MergerMatchesTheSortedUnionUnderRandomMoves)
{
    enum { NCH = 5, NENT = 600 };
    memtable *mt[NCH];
    iter *ch[NCH];
    buf all[NENT];
    unsigned x = 12345;
    char k[16];
    for (int i = 0; i < NCH; i++)
        mt[i] = mem_new();
    for (int j = 0; j < NENT; j++) {
        x = x * 1103515245u + 12345u;
        int child = (int)((x >> 16) % 7) < 4 ? (j / 40) % NCH : (int)((x >> 8) % NCH);
        snprintf(k, sizeof(k), "k%03d", j / 3); /* up to three versions of a key */
        mem_put(mt[child], (uint64_t)j + 1, ENG_TYPE_VALUE, k, "v");
        memset(&all[j], 0, sizeof(all[j]));
        ikey_append(&all[j], slice_make(k, strlen(k)), (uint64_t)j + 1, ENG_TYPE_VALUE);
    }
    qsort(all, NENT, sizeof(buf), cmp_ikeys);
    for (int i = 0; i < NCH; i++) {
        ch[i] = mem_iter_new(mt[i]);
        mem_unref(mt[i]);
    }
    iter *m = merger_new(ch, NCH);
    int pos = -1; /* the model: index into all, or -1 / NENT when invalid */
    for (int step = 0; step < 20000; step++) {
        x = x * 1103515245u + 12345u;
        int op = (int)((x >> 16) % 16);
        if (pos < 0 || pos >= NENT || op == 0) {
            int t = (int)((x >> 4) % NENT);
            iter_seek(m, slice_make(all[t].data, all[t].len));
            pos = t;
        } else if (op == 1) {
            iter_seek_first(m);
            pos = 0;
        } else if (op == 2) {
            iter_seek_last(m);
            pos = NENT - 1;
        } else if (op < 9) {
            iter_next(m);
            pos++;
        } else {
            iter_prev(m);
            pos--;
        }
        int want = pos >= 0 && pos < NENT;
        CHECK_MSG(iter_valid(m) == want, "step %d: valid %d, want %d", step, iter_valid(m), want);
        if (want) {
            slice got = iter_key(m);
            CHECK_MSG(ikey_compare(got, slice_make(all[pos].data, all[pos].len)) == 0,
                      "step %d: at the wrong entry", step);
        }
    }
    CHECK(iter_status(m) == ENG_OK);
    iter_free(m);
    for (int j = 0; j < NENT; j++)
        buf_free(&all[j]);
}

/* A counting child that answers next_key (iter.h) itself. */
static long nk_calls, nk_single_calls;

static int nk_valid(const iter *it)
{
    nk_single_calls++;
    return iter_valid(((const counting_iter *)it)->in);
}
static void nk_next(iter *it)
{
    nk_single_calls++;
    iter_next(((counting_iter *)it)->in);
}
static slice nk_key(const iter *it)
{
    nk_single_calls++;
    return iter_key(((const counting_iter *)it)->in);
}
static int nk_next_key(iter *it, slice *key)
{
    iter *in = ((counting_iter *)it)->in;
    nk_calls++;
    iter_next(in);
    if (!iter_valid(in)) return 0;
    *key = iter_key(in);
    return 1;
}
static const struct iter_ops next_key_ops = {
    nk_valid, ci_seek_first, ci_seek_last, ci_seek,    nk_next,     ci_prev,
    nk_key,   ci_value,      ci_status,    ci_destroy, nk_next_key,
};

/* A forward step moves the current child with one next_key call when the
 * child has one (a table under a level iterator), not next, valid and key. */
TEST(MergerStepsAChildThroughNextKeyInOneCall)
{
    memtable *a = mem_new(), *b = mem_new();
    char k[16];
    for (int j = 0; j < 100; j++) {
        snprintf(k, sizeof(k), "a%03d", j);
        mem_put(a, (uint64_t)j + 1, ENG_TYPE_VALUE, k, "v");
    }
    mem_put(b, 500, ENG_TYPE_VALUE, "b", "v");
    counting_iter *ca = counting_new(a), *cb = counting_new(b);
    ca->base.ops = &next_key_ops;
    mem_unref(a);
    mem_unref(b);
    iter *ch[2] = {&ca->base, &cb->base};
    iter *m = merger_new(ch, 2);
    iter_seek_first(m);
    long single_at_start = nk_single_calls, n = 0;
    nk_calls = 0;
    for (; iter_valid(m); iter_next(m))
        n++;
    CHECK_MSG(n == 101, "entries: %ld", n);
    CHECK_MSG(nk_calls == 100, "next_key calls: %ld", nk_calls);
    CHECK_MSG(nk_single_calls - single_at_start < 5, "next/valid/key calls: %ld",
              nk_single_calls - single_at_start);
    CHECK(iter_status(m) == ENG_OK);
    iter_free(m);
}

TEST(MergerStopsAtAChildError)
{
    memtable *a = mem_new();
    mem_put(a, 1, ENG_TYPE_VALUE, "a", "1");
    iter *ch[2] = {mem_iter_new(a), iter_new_error(ENG_CORRUPTION)};
    mem_unref(a);
    iter *m = merger_new(ch, 2);
    iter_seek_first(m);
    CHECK(!iter_valid(m));
    CHECK(iter_status(m) == ENG_CORRUPTION);
    iter_free(m);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
