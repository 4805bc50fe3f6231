/*
 * eng_batch_test.c -- write batches: encoding round trips, rejection of
 * corrupt encodings before any op is applied, the private index of an
 * indexed batch (built lazily, on the first read after appends), and nested
 * savepoints, including rollbacks below and above the indexed point; the
 * point index with the ranges and savepoints it defers to (the ops it lets
 * an insert leave out, and the scan-only ones: eng_batch_point_test.c).
 */
#include <stdint.h>

#include "engine/dbformat.h"
#include "engine/memtable.h"
#include "engine/rangedel.h"
#include "engine/write_batch.h"
#include "test.h"

/* Records every op batch_iterate reports, as text: "seq:type:key=value;". */
typedef struct trace {
    char s[8192];
    size_t n;
    int calls;
} trace;

static eng_status trace_op(void *ctx, uint64_t seq, int type, slice k, slice v)
{
    trace *t = ctx;
    t->calls++;
    t->n +=
        (size_t)snprintf(t->s + t->n, sizeof(t->s) - t->n, "%llu:%d:%.*s=%.*s;",
                         (unsigned long long)seq, type, (int)k.size, k.data, (int)v.size, v.data);
    return ENG_OK;
}

static const char *trace_of(const eng_batch *b)
{
    static trace t;
    memset(&t, 0, sizeof(t));
    eng_status s = batch_iterate(b, trace_op, &t);
    if (s != ENG_OK) return "ERROR";
    return t.s;
}

TEST(EncodeIterateRoundTrip)
{
    eng_batch *b = eng_batch_new(0);
    CHECK_EQ_INT(eng_batch_count(b), 0);
    CHECK_EQ_INT(eng_batch_byte_size(b), BATCH_HEADER_SIZE);
    eng_batch_put(b, "k1", 2, "v1", 2);
    eng_batch_delete(b, "k2", 2);
    eng_batch_delete_range(b, "a", 1, "m", 1);
    eng_batch_put(b, "", 0, "", 0);
    CHECK(batch_has_range_deletes(b));
    batch_set_sequence(b, 100);
    CHECK_EQ_INT(batch_sequence(b), 100);
    CHECK_EQ_INT(eng_batch_count(b), 4);
    const char *want = "100:1:k1=v1;101:0:k2=;102:2:a=m;103:1:=;";
    CHECK_MSG(strcmp(trace_of(b), want) == 0, "got %s", trace_of(b));
    /* Exact encoding, as documented in write_batch.h. */
    slice c = batch_contents(b);
    CHECK_EQ_INT(c.size, eng_batch_byte_size(b));
    static const char enc[] = "\x01\x02k1\x02v1"
                              "\x00\x02k2"
                              "\x02\x01"
                              "a\x01m"
                              "\x01\x00\x00";
    CHECK_EQ_INT(c.size, BATCH_HEADER_SIZE + sizeof(enc) - 1);
    CHECK(memcmp(c.data + BATCH_HEADER_SIZE, enc, sizeof(enc) - 1) == 0);
    CHECK_EQ_INT(dec_fixed64(c.data), 100);
    CHECK_EQ_INT(dec_fixed32(c.data + 8), 4);
    /* Through batch_from_contents (the log's path). */
    eng_batch *r;
    CHECK_EQ_INT(batch_from_contents(c, &r), ENG_OK);
    CHECK_MSG(strcmp(trace_of(r), want) == 0, "got %s", trace_of(r));
    CHECK(batch_has_range_deletes(r));
    CHECK_EQ_INT(eng_batch_count(r), 4);
    eng_batch_free(r);
    eng_batch_free(b);
}

TEST(LargeKeysAndValuesRoundTrip)
{
    eng_batch *b = eng_batch_new(0);
    char *big = malloc(300000);
    for (int i = 0; i < 300000; i++)
        big[i] = (char)(i * 7);
    eng_batch_put(b, big, 200, big, 300000);
    eng_batch_put(b, big + 1, 128, big + 2, 16383);
    batch_set_sequence(b, 7);
    memtable *m = mem_new();
    CHECK_EQ_INT(batch_insert_into(b, m), ENG_OK);
    int type;
    uint64_t seq;
    slice v;
    CHECK_EQ_INT(mem_get(m, slice_make(big, 200), 100, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, 7);
    CHECK(v.size == 300000 && memcmp(v.data, big, v.size) == 0);
    CHECK_EQ_INT(mem_get(m, slice_make(big + 1, 128), 100, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, 8);
    CHECK(v.size == 16383 && memcmp(v.data, big + 2, v.size) == 0);
    mem_unref(m);
    free(big);
    eng_batch_free(b);
}

static eng_status count_calls(void *ctx, uint64_t seq, int type, slice k, slice v)
{
    (*(int *)ctx)++;
    return ENG_OK;
}

/* Asserts that batch_from_contents rejects rep and hands out no batch. */
static void expect_rejected(const char *rep, size_t n)
{
    eng_batch *r = (eng_batch *)1;
    CHECK_EQ_INT(batch_from_contents(slice_make(rep, n), &r), ENG_CORRUPTION);
    CHECK(r == NULL);
}

TEST(CorruptEncodingsAreRejectedWithoutApplyingAnything)
{
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, "key", 3, "value", 5);
    eng_batch_put(b, "k2", 2, "v2", 2);
    eng_batch_delete(b, "gone", 4);
    slice c = batch_contents(b);
    char rep[128];
    memcpy(rep, c.data, c.size);
    size_t n = c.size;

    /* Every truncation: a cut varint, a cut key/value, a missing op. */
    for (size_t cut = 0; cut < n; cut++)
        expect_rejected(rep, cut);
    /* Count mismatch, both ways. */
    enc_fixed32(rep + 8, 2);
    expect_rejected(rep, n);
    enc_fixed32(rep + 8, 4);
    expect_rejected(rep, n);
    enc_fixed32(rep + 8, 3);
    /* A bad tag. */
    rep[BATCH_HEADER_SIZE] = 7;
    expect_rejected(rep, n);
    rep[BATCH_HEADER_SIZE] = 1;
    /* A key length that runs past the end. */
    rep[BATCH_HEADER_SIZE + 1] = 100;
    expect_rejected(rep, n);
    /* A varint that never ends. */
    memset(rep + BATCH_HEADER_SIZE + 1, 0xff, n - BATCH_HEADER_SIZE - 1);
    expect_rejected(rep, n);
    /* A sequence whose ops would pass the largest sequence number. */
    memcpy(rep, c.data, c.size);
    enc_fixed64(rep, ENG_MAX_SEQUENCE - 1);
    expect_rejected(rep, n);
    /* Sanity: the original is accepted. */
    memcpy(rep, c.data, c.size);
    eng_batch *r;
    CHECK_EQ_INT(batch_from_contents(slice_make(rep, n), &r), ENG_OK);
    int calls = 0;
    CHECK_EQ_INT(batch_iterate(r, count_calls, &calls), ENG_OK);
    CHECK_EQ_INT(calls, 3);
    eng_batch_free(r);

    /* batch_iterate checks the whole encoding before the first call: break
     * the last op of a batch in place (its count then disagrees). */
    c = batch_contents(b);
    char *w = (char *)c.data;
    enc_fixed32(w + 8, 4);
    calls = 0;
    CHECK_EQ_INT(batch_iterate(b, count_calls, &calls), ENG_CORRUPTION);
    CHECK_EQ_INT(calls, 0);
    memtable *m = mem_new();
    CHECK_EQ_INT(batch_insert_into(b, m), ENG_CORRUPTION);
    CHECK_EQ_INT(mem_entries(m), 0);
    mem_unref(m);
    eng_batch_free(b);
}

static eng_status fail_second(void *ctx, uint64_t seq, int type, slice k, slice v)
{
    return ++(*(int *)ctx) == 2 ? ENG_IOERR : ENG_OK;
}

TEST(IterateStopsAtFirstCallbackError)
{
    eng_batch *b = eng_batch_new(0);
    for (int i = 0; i < 5; i++)
        eng_batch_put(b, "k", 1, "v", 1);
    int calls = 0;
    CHECK_EQ_INT(batch_iterate(b, fail_second, &calls), ENG_IOERR);
    CHECK_EQ_INT(calls, 2);
    eng_batch_free(b);
}

static int index_get(eng_batch *b, const char *k, int *type, slice *v)
{
    uint64_t seq;
    memtable *m = batch_index(b);
    if (!m) return 0;
    return mem_get(m, slice_make(k, strlen(k)), ENG_MAX_SEQUENCE, type, &seq, v);
}

TEST(IndexedBatchLaterOpsShadowEarlierOnes)
{
    eng_batch *b = eng_batch_new(1);
    int type;
    slice v;
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 0);
    eng_batch_put(b, "a", 1, "1", 1);
    eng_batch_put(b, "b", 1, "2", 1);
    eng_batch_put(b, "a", 1, "3", 1);
    eng_batch_delete(b, "b", 1);
    eng_batch_delete_range(b, "c", 1, "f", 1);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_VALUE);
    CHECK_MEM(v.data, v.size, "3");
    CHECK_EQ_INT(index_get(b, "b", &type, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_DELETION);
    memtable *m = batch_index(b);
    CHECK_EQ_INT(mem_entries(m), 5);
    CHECK_EQ_INT(mem_range_deletions(m), 1);
    /* Op i is at ENG_BATCH_SEQ_BASE + i. */
    uint64_t seq;
    CHECK_EQ_INT(mem_get(m, slice_make("a", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + 2);
    iter *it = mem_iter_new(m);
    char target[9];
    target[0] = 'c';
    enc_fixed64(target + 1, ikey_pack_trailer(ENG_MAX_SEQUENCE, ENG_TYPE_SEEK));
    iter_seek(it, slice_make(target, 9));
    CHECK(iter_valid(it));
    CHECK_EQ_INT(ikey_type(iter_key(it)), ENG_TYPE_RANGE_DELETION);
    CHECK_EQ_INT(ikey_sequence(iter_key(it)), ENG_BATCH_SEQ_BASE + 4);
    CHECK_MEM(iter_value(it).data, iter_value(it).size, "f");
    /* Clearing while an iterator holds the index must not disturb it. */
    eng_batch_clear(b);
    CHECK_EQ_INT(ikey_type(iter_key(it)), ENG_TYPE_RANGE_DELETION);
    iter_free(it);
    CHECK_EQ_INT(eng_batch_count(b), 0);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 0);
    eng_batch_put(b, "z", 1, "26", 2);
    CHECK_EQ_INT(index_get(b, "z", &type, &v), 1);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 0);
    eng_batch_free(b);
}

TEST(EmptyKeysAndNullPointersAreAccepted)
{
    eng_batch *b = eng_batch_new(1);
    eng_batch_put(b, NULL, 0, NULL, 0);
    eng_batch_delete(b, NULL, 0);
    eng_batch_delete_range(b, NULL, 0, NULL, 0);
    eng_batch_put(b, "", 0, "v", 1);
    int type;
    uint64_t seq;
    slice v;
    CHECK_EQ_INT(mem_get(batch_index(b), slice_make(NULL, 0), ENG_MAX_SEQUENCE, &type, &seq, &v),
                 1);
    CHECK_EQ_INT(type, ENG_TYPE_VALUE);
    CHECK_MEM(v.data, v.size, "v");
    CHECK_MSG(strcmp(trace_of(b), "0:1:=;1:0:=;2:2:=;3:1:=v;") == 0, "got %s", trace_of(b));
    CHECK_EQ_INT(mem_check(batch_index(b)), 0);
    eng_batch_free(b);
}

TEST(NonIndexedBatchHasNoIndex)
{
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, "a", 1, "1", 1);
    CHECK(batch_index(b) == NULL);
    CHECK(!batch_has_range_deletes(b));
    eng_batch_free(b);
}

TEST(SavepointRollbackNests)
{
    eng_batch *b = eng_batch_new(1);
    int type;
    slice v;
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_NOTFOUND);
    CHECK_EQ_INT(eng_batch_pop_savepoint(b), ENG_NOTFOUND);
    eng_batch_put(b, "a", 1, "1", 1);
    eng_batch_set_savepoint(b); /* S1: after a=1 */
    eng_batch_put(b, "a", 1, "2", 1);
    eng_batch_put(b, "b", 1, "x", 1);
    eng_batch_set_savepoint(b); /* S2: after a=2 b=x */
    eng_batch_delete(b, "a", 1);
    eng_batch_delete_range(b, "a", 1, "z", 1);
    eng_batch_set_savepoint(b); /* S3: popped below */
    eng_batch_put(b, "c", 1, "3", 1);
    CHECK_EQ_INT(eng_batch_pop_savepoint(b), ENG_OK); /* keeps c=3 */
    CHECK_EQ_INT(eng_batch_count(b), 6);
    CHECK(batch_has_range_deletes(b));

    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK); /* to S2 */
    CHECK_EQ_INT(eng_batch_count(b), 3);
    CHECK(!batch_has_range_deletes(b));
    CHECK_MSG(strcmp(trace_of(b), "0:1:a=1;1:1:a=2;2:1:b=x;") == 0, "got %s", trace_of(b));
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_VALUE);
    CHECK_MEM(v.data, v.size, "2");
    CHECK_EQ_INT(index_get(b, "c", &type, &v), 0);
    CHECK_EQ_INT(mem_range_deletions(batch_index(b)), 0);
    CHECK_EQ_INT(mem_entries(batch_index(b)), 3);

    /* New ops after a rollback continue the numbering. */
    eng_batch_put(b, "d", 1, "4", 1);
    uint64_t seq;
    CHECK_EQ_INT(mem_get(batch_index(b), slice_make("d", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + 3);

    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK); /* to S1 */
    CHECK_EQ_INT(eng_batch_count(b), 1);
    CHECK_MSG(strcmp(trace_of(b), "0:1:a=1;") == 0, "got %s", trace_of(b));
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    CHECK_MEM(v.data, v.size, "1");
    CHECK_EQ_INT(index_get(b, "b", &type, &v), 0);
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_NOTFOUND);

    /* A rollback to an empty batch, and one with nothing to undo. */
    eng_batch_clear(b);
    eng_batch_set_savepoint(b);
    eng_batch_set_savepoint(b);
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    eng_batch_put(b, "q", 1, "1", 1);
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    CHECK_EQ_INT(eng_batch_count(b), 0);
    CHECK_EQ_INT(eng_batch_byte_size(b), BATCH_HEADER_SIZE);
    CHECK_EQ_INT(index_get(b, "q", &type, &v), 0);
    eng_batch_free(b);
}

TEST(ClearedBatchIsReusable)
{
    eng_batch *b = eng_batch_new(1);
    char k[32], val[200];
    memset(val, 'v', sizeof(val));
    for (int round = 0; round < 2000; round++) {
        eng_batch_set_savepoint(b);
        for (int i = 0; i < 5; i++) {
            int kl = snprintf(k, sizeof(k), "r%d-k%d", round, i);
            eng_batch_put(b, k, (size_t)kl, val, sizeof(val));
        }
        CHECK_EQ_INT(eng_batch_count(b), 5);
        int type;
        slice v;
        snprintf(k, sizeof(k), "r%d-k%d", round, 4);
        CHECK_EQ_INT(index_get(b, k, &type, &v), 1);
        if (round > 0) {
            snprintf(k, sizeof(k), "r%d-k%d", round - 1, 4);
            CHECK_EQ_INT(index_get(b, k, &type, &v), 0);
        }
        CHECK_EQ_INT(eng_batch_pop_savepoint(b), ENG_OK);
        eng_batch_clear(b);
        CHECK_EQ_INT(eng_batch_byte_size(b), BATCH_HEADER_SIZE);
        CHECK_EQ_INT(batch_sequence(b), 0);
        /* The reused index stays small: no megabytes per clear. */
        CHECK(batch_index(b) == NULL || mem_usage(batch_index(b)) < (64u << 10));
    }
    eng_batch_free(b);
}

/* Reads through a batch see ops added without any read in between. */
TEST(IndexCatchesUpWithOpsAddedSinceLastRead)
{
    eng_batch *b = eng_batch_new(1);
    char k[16], val[16];
    CHECK(batch_index(b) == NULL);
    for (int i = 0; i < 100; i++) {
        int kl = snprintf(k, sizeof(k), "k%d", i % 40);
        int vl = snprintf(val, sizeof(val), "v%d", i);
        eng_batch_put(b, k, (size_t)kl, val, (size_t)vl);
    }
    eng_batch_delete(b, "k7", 2);
    memtable *m = batch_index(b);
    CHECK(m != NULL);
    CHECK_EQ_INT(mem_entries(m), 101);
    CHECK_EQ_INT(mem_check(m), 0);
    int type;
    uint64_t seq;
    slice v;
    CHECK_EQ_INT(mem_get(m, slice_make("k3", 2), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + 83); /* third write of k3: i = 83 */
    CHECK_MEM(v.data, v.size, "v83");
    CHECK_EQ_INT(mem_get(m, slice_make("k7", 2), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_DELETION);
    CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + 100);
    /* A second read with nothing new returns the same index unchanged. */
    CHECK(batch_index(b) == m);
    CHECK_EQ_INT(mem_entries(m), 101);
    eng_batch_free(b);
}

TEST(InterleavedAppendsAndReadsIndexEachOpOnce)
{
    eng_batch *b = eng_batch_new(1);
    int type;
    slice v;
    eng_batch_put(b, "a", 1, "1", 1);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    CHECK_EQ_INT(mem_entries(batch_index(b)), 1);
    eng_batch_put(b, "b", 1, "2", 1);
    eng_batch_delete_range(b, "c", 1, "e", 1);
    eng_batch_put(b, "a", 1, "3", 1);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    CHECK_MEM(v.data, v.size, "3");
    CHECK_EQ_INT(mem_entries(batch_index(b)), 4);
    CHECK_EQ_INT(mem_range_deletions(batch_index(b)), 1);
    /* An iterator taken now still reads the index after more ops are added
     * and indexed under it. */
    iter *it = mem_iter_new(batch_index(b));
    eng_batch_delete(b, "a", 1);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_DELETION);
    CHECK_EQ_INT(mem_entries(batch_index(b)), 5);
    int n = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        n++;
    CHECK_EQ_INT(n, 5);
    iter_free(it);
    CHECK_EQ_INT(mem_check(batch_index(b)), 0);
    eng_batch_free(b);
}

TEST(RollbackAboveIndexedPointKeepsIndex)
{
    eng_batch *b = eng_batch_new(1);
    int type;
    uint64_t seq;
    slice v;
    eng_batch_put(b, "a", 1, "1", 1);
    eng_batch_put(b, "b", 1, "2", 1);
    memtable *m = batch_index(b); /* indexes 2 ops */
    eng_batch_put(b, "c", 1, "3", 1);
    eng_batch_set_savepoint(b); /* at 3 ops, above the indexed point */
    eng_batch_put(b, "d", 1, "4", 1);
    eng_batch_delete_range(b, "a", 1, "z", 1);
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    CHECK(batch_index(b) == m);
    CHECK_EQ_INT(mem_entries(m), 3);
    CHECK_EQ_INT(mem_range_deletions(m), 0);
    CHECK_EQ_INT(index_get(b, "c", &type, &v), 1);
    CHECK_EQ_INT(index_get(b, "d", &type, &v), 0);
    /* Rollback exactly to the indexed point keeps it too. */
    eng_batch_set_savepoint(b);
    eng_batch_put(b, "e", 1, "5", 1);
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    CHECK(batch_index(b) == m);
    CHECK_EQ_INT(mem_entries(m), 3);
    eng_batch_put(b, "f", 1, "6", 1);
    CHECK_EQ_INT(mem_get(batch_index(b), slice_make("f", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + 3);
    CHECK_EQ_INT(index_get(b, "e", &type, &v), 0);
    CHECK_MSG(strcmp(trace_of(b), "0:1:a=1;1:1:b=2;2:1:c=3;3:1:f=6;") == 0, "got %s", trace_of(b));
    eng_batch_free(b);
}

TEST(RollbackBelowIndexedPointRebuildsIndex)
{
    eng_batch *b = eng_batch_new(1);
    int type;
    uint64_t seq;
    slice v;
    eng_batch_put(b, "a", 1, "1", 1);
    eng_batch_set_savepoint(b); /* at 1 op */
    eng_batch_put(b, "a", 1, "2", 1);
    eng_batch_delete_range(b, "b", 1, "d", 1);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1); /* indexes 3 ops */
    CHECK_MEM(v.data, v.size, "2");
    /* An iterator holding the index keeps the rolled-back entries. */
    iter *it = mem_iter_new(batch_index(b));
    eng_batch_put(b, "c", 1, "3", 1); /* not yet indexed */
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    CHECK_EQ_INT(eng_batch_count(b), 1);
    memtable *m = batch_index(b);
    CHECK_EQ_INT(mem_entries(m), 1);
    CHECK_EQ_INT(mem_range_deletions(m), 0);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    CHECK_MEM(v.data, v.size, "1");
    CHECK_EQ_INT(index_get(b, "c", &type, &v), 0);
    int n = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        n++;
    CHECK_EQ_INT(n, 3);
    iter_free(it);
    /* Without an iterator, a rollback below the indexed point reuses the
     * memtable in place. */
    eng_batch_set_savepoint(b);
    eng_batch_put(b, "x", 1, "9", 1);
    CHECK_EQ_INT(index_get(b, "x", &type, &v), 1);
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    CHECK_EQ_INT(index_get(b, "x", &type, &v), 0);
    eng_batch_put(b, "y", 1, "8", 1);
    CHECK_EQ_INT(mem_get(batch_index(b), slice_make("y", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + 1);
    CHECK_EQ_INT(mem_entries(batch_index(b)), 2);
    /* Rolling back to empty reads as nothing pending. */
    eng_batch_clear(b);
    eng_batch_set_savepoint(b);
    eng_batch_put(b, "z", 1, "0", 1);
    CHECK(batch_index(b) != NULL);
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    CHECK(batch_index(b) == NULL);
    eng_batch_free(b);
}

TEST(ClearAfterPartlyIndexedBatchStartsFresh)
{
    eng_batch *b = eng_batch_new(1);
    int type;
    uint64_t seq;
    slice v;
    eng_batch_put(b, "a", 1, "1", 1);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 1);
    eng_batch_put(b, "b", 1, "2", 1); /* never indexed */
    eng_batch_clear(b);
    CHECK(batch_index(b) == NULL);
    eng_batch_put(b, "c", 1, "3", 1);
    eng_batch_put(b, "d", 1, "4", 1);
    CHECK_EQ_INT(mem_get(batch_index(b), slice_make("d", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + 1);
    CHECK_EQ_INT(mem_entries(batch_index(b)), 2);
    CHECK_EQ_INT(index_get(b, "a", &type, &v), 0);
    CHECK_EQ_INT(index_get(b, "b", &type, &v), 0);
    /* A batch cleared without ever being read stays unindexed. */
    eng_batch_clear(b);
    eng_batch_put(b, "e", 1, "5", 1);
    eng_batch_clear(b);
    CHECK(batch_index(b) == NULL);
    eng_batch_free(b);
}

/* Random puts, deletes, savepoints, rollbacks, pops, clears and reads,
 * checked against a model: after each read the index holds exactly one entry
 * per op and each key's newest entry is the model's last op on that key. */
#define MODEL_OPS 64
TEST(RandomOpsReadsAndRollbacksMatchModel)
{
    eng_batch *b = eng_batch_new(1);
    int ops[MODEL_OPS]; /* key*1000 + value, value 0 = delete */
    int n = 0, saves[MODEL_OPS], n_saves = 0;
    uint32_t rng = 12345;
    for (int step = 0; step < 20000; step++) {
        rng = rng * 1103515245u + 12345u;
        int r = (int)((rng >> 8) % 100), key = (int)((rng >> 20) % 8);
        int val = (int)((rng >> 4) % 5);
        char k[4] = {'k', (char)('0' + key), 0, 0};
        char vb[4] = {'v', (char)('0' + val), 0, 0};
        if (r < 45 && n < MODEL_OPS) {
            if (val == 0)
                eng_batch_delete(b, k, 2);
            else
                eng_batch_put(b, k, 2, vb, 2);
            ops[n++] = key * 1000 + val;
        } else if (r < 55 && n_saves < MODEL_OPS) {
            eng_batch_set_savepoint(b);
            saves[n_saves++] = n;
        } else if (r < 65) {
            int want = n_saves ? ENG_OK : ENG_NOTFOUND;
            CHECK_EQ_INT(eng_batch_rollback(b), want);
            if (n_saves) n = saves[--n_saves];
        } else if (r < 68) {
            if (n_saves) n_saves--;
            eng_batch_pop_savepoint(b);
        } else if (r < 71 || n == MODEL_OPS) {
            eng_batch_clear(b);
            n = n_saves = 0;
        } else if (r < 85) { /* the point index (B4), caught up lazily too */
            CHECK_EQ_INT(eng_batch_count(b), n);
            for (int kk = 0; kk < 8; kk++) {
                int last = -1;
                for (int i = 0; i < n; i++)
                    if (ops[i] / 1000 == kk) last = i;
                int type;
                slice v;
                char q[2] = {'k', (char)('0' + kk)};
                CHECK_EQ_INT(batch_point_get(b, NULL, slice_make(q, 2), &type, &v), last >= 0);
                if (last < 0) continue;
                int val_want = ops[last] % 1000;
                CHECK_EQ_INT(type, val_want ? ENG_TYPE_VALUE : ENG_TYPE_DELETION);
                if (val_want) CHECK_EQ_INT(v.data[1], '0' + val_want);
            }
        } else {
            CHECK_EQ_INT(eng_batch_count(b), n);
            memtable *m = batch_index(b);
            CHECK(n == 0 ? m == NULL : m != NULL);
            if (!m) continue;
            CHECK_EQ_INT(mem_entries(m), n);
            for (int kk = 0; kk < 8; kk++) {
                int last = -1;
                for (int i = 0; i < n; i++)
                    if (ops[i] / 1000 == kk) last = i;
                int type;
                uint64_t seq;
                slice v;
                char q[2] = {'k', (char)('0' + kk)};
                int found = mem_get(m, slice_make(q, 2), ENG_MAX_SEQUENCE, &type, &seq, &v);
                CHECK_EQ_INT(found, last >= 0);
                if (last < 0) continue;
                CHECK_EQ_INT(seq, ENG_BATCH_SEQ_BASE + (uint64_t)last);
                int val_want = ops[last] % 1000;
                CHECK_EQ_INT(type, val_want ? ENG_TYPE_VALUE : ENG_TYPE_DELETION);
                if (val_want) CHECK_EQ_INT(v.data[1], '0' + val_want);
            }
        }
    }
    eng_batch_free(b);
}

TEST(InsertIntoUsesBatchSequence)
{
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, "a", 1, "1", 1);
    eng_batch_delete(b, "a", 1);
    eng_batch_delete_range(b, "b", 1, "c", 1);
    batch_set_sequence(b, 1000);
    memtable *m = mem_new();
    CHECK_EQ_INT(batch_insert_into(b, m), ENG_OK);
    int type;
    uint64_t seq;
    slice v;
    CHECK_EQ_INT(mem_get(m, slice_make("a", 1), 1000, &type, &seq, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_VALUE);
    CHECK_EQ_INT(mem_get(m, slice_make("a", 1), 1001, &type, &seq, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_DELETION);
    CHECK_EQ_INT(seq, 1001);
    CHECK_EQ_INT(mem_range_deletions(m), 1);
    CHECK_EQ_INT(mem_entries(m), 3);
    mem_unref(m);
    eng_batch_free(b);
}

static size_t set_size(rdel_set *s)
{
    return s ? s->n : 0;
}

/* A script or transaction that deletes a big key and then writes keeps
 * reading through its batch: each read used to collect the batch's range
 * deletions by walking its whole index (quadratic in the batch). B6: the
 * batch keeps them, appended as it indexes, dropped with its index. */
TEST(RangeDeletionsOfABatchAreKeptNotRecollected)
{
    eng_batch *b = eng_batch_new(1);
    CHECK(batch_rdels(b) == NULL);
    eng_batch_put(b, "a", 1, "1", 1);
    CHECK(batch_rdels(b) == NULL); /* ops, but no range deletion */
    eng_batch_delete_range(b, "k", 1, "m", 1);
    rdel_set *first = batch_rdels(b);
    CHECK_EQ_INT(set_size(first), 1);
    eng_batch_set_savepoint(b);
    char key[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof(key), "k%04d", i);
        eng_batch_put(b, key, strlen(key), "v", 1);
        rdel_set *s = batch_rdels(b);
        CHECK(s == first); /* the same set: nothing collected again */
        CHECK(rdel_set_covers(s, slice_make(key, strlen(key)), 0, ENG_MAX_SEQUENCE));
        rdel_set_unref(s);
    }
    eng_batch_delete_range(b, "x", 1, "y", 1);
    rdel_set *s = batch_rdels(b);
    CHECK(s == first);
    CHECK_EQ_INT(set_size(s), 2);
    rdel_set_unref(s);
    /* Rolled back below the second: a holder keeps what it had, the batch
     * starts over with what remains. */
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    s = batch_rdels(b);
    CHECK(s != NULL && s != first);
    CHECK_EQ_INT(set_size(s), 1);
    CHECK(!rdel_set_covers(s, slice_make("x", 1), 0, ENG_MAX_SEQUENCE));
    CHECK_EQ_INT(set_size(first), 2);
    rdel_set_unref(s);
    rdel_set_unref(first);
    eng_batch_clear(b);
    CHECK(batch_rdels(b) == NULL);
    eng_batch_free(b);
}

/* Replication: the data of a batch never written (its header count is
 * set lazily) appends every op, in order, to another batch. */
TEST(BatchDataOfAnUnwrittenBatchAppendsEveryOpInOrder)
{
    eng_batch *src = eng_batch_new(0), *dst = eng_batch_new(1);
    eng_batch_put(src, "k1", 2, "v1", 2);
    eng_batch_delete(src, "k2", 2);
    eng_batch_delete_range(src, "a", 1, "m", 1);
    eng_batch_put(dst, "own", 3, "x", 1);
    size_t n;
    const char *d = eng_batch_data(src, &n);
    CHECK_EQ_INT(n, eng_batch_byte_size(src));
    CHECK_EQ_INT(eng_batch_append_data(dst, d, n), ENG_OK);
    CHECK_EQ_INT(eng_batch_count(dst), 4);
    batch_set_sequence(dst, 10);
    const char *want = "10:1:own=x;11:1:k1=v1;12:0:k2=;13:2:a=m;";
    CHECK_MSG(strcmp(trace_of(dst), want) == 0, "got %s", trace_of(dst));
    eng_batch_free(src);
    eng_batch_free(dst);
}

TEST(BatchDataThatDoesNotParseAppendsNothing)
{
    eng_batch *src = eng_batch_new(0), *dst = eng_batch_new(0);
    eng_batch_put(src, "k1", 2, "v1", 2);
    eng_batch_put(src, "k2", 2, "v2", 2);
    size_t n;
    const char *d = eng_batch_data(src, &n);
    char *bad = malloc(n);
    memcpy(bad, d, n);
    CHECK_EQ_INT(eng_batch_append_data(dst, bad, n - 1), ENG_CORRUPTION); /* cut */
    bad[8] = 3; /* the header claims one op more */
    CHECK_EQ_INT(eng_batch_append_data(dst, bad, n), ENG_CORRUPTION);
    CHECK_EQ_INT(eng_batch_append_data(dst, bad, 5), ENG_CORRUPTION); /* no header */
    CHECK_EQ_INT(eng_batch_count(dst), 0);
    free(bad);
    eng_batch_free(src);
    eng_batch_free(dst);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
