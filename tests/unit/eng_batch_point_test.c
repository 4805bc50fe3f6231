/*
 * eng_batch_point_test.c -- the point index of an indexed write batch
 * (write_batch.c B4-B5, B7): the ops an insert leaves out, when it defers
 * to the memtable index, what a clear writes, and the ops under scan-only
 * prefixes it leaves out, decided for an op and for a read alike.
 */
#include <stdint.h>
#include <stdio.h>

#include "engine/dbformat.h"
#include "engine/memtable.h"
#include "engine/write_batch.h"
#include "test.h"
#include "test_rng.h"

/* B5: once a point read built the point index, the insert leaves out the
 * ops a later op on the same key replaced -- also those appended after the
 * read -- and gives the others their own sequence numbers. */
TEST(InsertIntoLeavesOutOpsReplacedInAPointReadBatch)
{
    eng_batch *b = eng_batch_new(1);
    eng_batch_put(b, "a", 1, "1", 1); /* 100, replaced */
    eng_batch_put(b, "b", 1, "1", 1); /* 101, replaced */
    eng_batch_put(b, "a", 1, "2", 1); /* 102, replaced after the read */
    eng_batch_delete(b, "b", 1);      /* 103 */
    int type;
    slice v;
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("a", 1), &type, &v), 1);
    CHECK(type == ENG_TYPE_VALUE && v.size == 1 && v.data[0] == '2');
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("b", 1), &type, &v), 1);
    CHECK_EQ_INT(type, ENG_TYPE_DELETION);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("c", 1), &type, &v), 0);
    eng_batch_put(b, "c", 1, "3", 1); /* 104 */
    eng_batch_put(b, "a", 1, "3", 1); /* 105 */
    batch_set_sequence(b, 100);
    memtable *m = mem_new();
    CHECK_EQ_INT(batch_insert_into(b, m), ENG_OK);
    CHECK_EQ_INT(mem_entries(m), 3);
    uint64_t seq;
    CHECK_EQ_INT(mem_get(m, slice_make("a", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK(seq == 105 && type == ENG_TYPE_VALUE && v.data[0] == '3');
    CHECK_EQ_INT(mem_get(m, slice_make("b", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK(seq == 103 && type == ENG_TYPE_DELETION);
    CHECK_EQ_INT(mem_get(m, slice_make("c", 1), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK(seq == 104 && v.data[0] == '3');
    mem_unref(m);
    /* The same ops never read through the point index: all of them. */
    eng_batch_clear(b);
    eng_batch_put(b, "a", 1, "1", 1);
    eng_batch_put(b, "a", 1, "2", 1);
    m = mem_new();
    CHECK_EQ_INT(batch_insert_into(b, m), ENG_OK);
    CHECK_EQ_INT(mem_entries(m), 2);
    mem_unref(m);
    eng_batch_free(b);
}

/* The point index does not answer for a batch with a range deletion (the
 * caller asks the memtable index, which knows the ranges); nor does a
 * batch keep it across a rollback below its hashed ops. */
TEST(PointIndexDefersToRangeDeletionsAndRollbacks)
{
    eng_batch *b = eng_batch_new(1);
    int type;
    slice v;
    eng_batch_put(b, "a", 1, "1", 1);
    eng_batch_set_savepoint(b);
    eng_batch_put(b, "a", 1, "2", 1);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("a", 1), &type, &v), 1);
    CHECK_EQ_INT(v.data[0], '2');
    CHECK_EQ_INT(eng_batch_rollback(b), ENG_OK);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("a", 1), &type, &v), 1);
    CHECK_EQ_INT(v.data[0], '1');
    eng_batch_delete_range(b, "a", 1, "b", 1);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("a", 1), &type, &v), -1);
    eng_batch_free(b);
}

/* B4: a clear after a batch of a whole pipeline wiped the slot table it
 * left behind, whatever the next batch held: a small batch's clear writes
 * only the slots its own ops hold, and leaves no stale key behind. */
TEST(ClearAfterABigBatchWritesOnlyTheSlotsOfItsOps)
{
    eng_batch *b = eng_batch_new(1);
    char k[16];
    int type;
    slice v;
    for (int i = 0; i < 1000; i++)
        eng_batch_put(b, k, (size_t)snprintf(k, sizeof(k), "k%d", i), "v", 1);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("k7", 2), &type, &v), 1);
    eng_batch_clear(b);
    CHECK(batch_point_drop_slots(b) >= 2000); /* a full table: wiped whole */
    for (int round = 0; round < 3; round++) {
        eng_batch_put(b, "k7", 2, "a", 1);
        eng_batch_put(b, "x", 1, "b", 1);
        eng_batch_put(b, "k7", 2, "c", 1); /* shares its slot with the first */
        CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("k7", 2), &type, &v), 1);
        CHECK_EQ_INT(v.data[0], 'c');
        CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("k8", 2), &type, &v), 0);
        eng_batch_clear(b);
        CHECK_EQ_INT(batch_point_drop_slots(b), 2);
    }
    eng_batch_put(b, "y", 1, "d", 1);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("k7", 2), &type, &v), 0);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("x", 1), &type, &v), 0);
    eng_batch_free(b);
}

/* B4: ops on scan-only keys (an index's entries) stay out of the point
 * index: asked for, it answers -1 and the memtable index has them; they are
 * never shadowed, so the insert keeps each, also when the prefix arrived
 * while the batch held an op on the key. */
TEST(ScanOnlyOpsStayOutOfThePointIndexAndReadBackThroughTheBatch)
{
    mem_scan_only so;
    mem_scan_only_init(&so);
    CHECK_EQ_INT(mem_scan_only_add(&so, "\x01i", 2), 1);
    eng_batch *b = eng_batch_new(1);
    int type;
    slice v;
    uint64_t seq;
    eng_batch_put(b, "\x01ia", 3, "1", 1);
    eng_batch_put(b, "\x01ia", 3, "2", 1);
    eng_batch_put(b, "\x02jb", 3, "3", 1); /* not yet scan-only */
    eng_batch_put(b, "p", 1, "4", 1);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("\x01ia", 3), &type, &v), -1);
    CHECK_EQ_INT(
        mem_get(batch_index(b), slice_make("\x01ia", 3), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK_EQ_INT(v.data[0], '2');
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("p", 1), &type, &v), 1);
    CHECK_EQ_INT(batch_point_get(b, NULL, slice_make("p", 1), &type, &v), -1); /* another set */
    CHECK_EQ_INT(mem_scan_only_add(&so, "\x02j", 2), 1);
    eng_batch_put(b, "\x02jb", 3, "5", 1);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("\x02jb", 3), &type, &v), -1);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("q", 1), &type, &v), 0);
    batch_set_sequence(b, 10);
    memtable *m = mem_new();
    CHECK_EQ_INT(batch_insert_into(b, m), ENG_OK);
    CHECK_EQ_INT(mem_entries(m), 5);
    CHECK_EQ_INT(mem_get(m, slice_make("\x01ia", 3), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK(seq == 11 && v.data[0] == '2');
    CHECK_EQ_INT(mem_get(m, slice_make("\x02jb", 3), ENG_MAX_SEQUENCE, &type, &seq, &v), 1);
    CHECK(seq == 14 && v.data[0] == '5');
    mem_unref(m);
    eng_batch_free(b);
}

/* An index's entry prefix as the catalog registers it: 'x' 'E' id:be32. */
static void idx_prefix(char p[6], uint32_t id)
{
    p[0] = 'x', p[1] = 'E';
    for (int i = 0; i < 4; i++)
        p[2 + i] = (char)(id >> (24 - 8 * i));
}

/* B7: prefixes of one length up to 8 bytes are found by one word of the
 * key, so ids whose words share a table slot, the id of an unregistered
 * (UNIQUE) index beside them, and keys of fewer than 8 bytes (the full
 * check) must each still get their own answer. */
TEST(IndexPrefixesOfOneLengthAnswerForEachIdAndForShortKeys)
{
    mem_scan_only so;
    mem_scan_only_init(&so);
    char p[6], k[32];
    for (uint32_t id = 1; id <= 30; id += 2) { /* 15 prefixes: odd ids */
        idx_prefix(p, id);
        CHECK_EQ_INT(mem_scan_only_add(&so, p, 6), 1);
    }
    eng_batch *b = eng_batch_new(1);
    int type;
    slice v;
    for (uint32_t id = 0; id <= 32; id++) {
        idx_prefix(k, id);
        memcpy(k + 6, "fieldvalue:key", 14);
        eng_batch_put(b, k, 20, "v", 1);
        eng_batch_put(b, k, 6, "w", 1); /* the prefix alone: shorter than a word */
        eng_batch_put(b, k, 7, "u", 1);
    }
    for (uint32_t id = 0; id <= 32; id++) {
        idx_prefix(k, id);
        memcpy(k + 6, "fieldvalue:key", 14);
        int want = id % 2 && id <= 30 ? -1 : 1;
        CHECK_EQ_INT(batch_point_get(b, &so, slice_make(k, 20), &type, &v), want);
        CHECK_EQ_INT(batch_point_get(b, &so, slice_make(k, 6), &type, &v), want);
        if (want == 1) CHECK_EQ_INT(v.data[0], 'w');
        CHECK_EQ_INT(batch_point_get(b, &so, slice_make(k, 7), &type, &v), want);
        CHECK_EQ_INT(batch_point_get(b, &so, slice_make(k, 5), &type, &v), 0);
    }
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("xE", 2), &type, &v), 0);
    eng_batch_free(b);
}

/* B7: a prefix added after the batch copied the set covers the ops added
 * after it -- also when it is the first of another length (no word then
 * decides) -- and the ops on its keys hashed before it stay readable. */
TEST(PrefixesAddedWhileTheBatchHoldsOpsCoverItsLaterOps)
{
    mem_scan_only so;
    mem_scan_only_init(&so);
    char p[6];
    idx_prefix(p, 1);
    CHECK_EQ_INT(mem_scan_only_add(&so, p, 6), 1);
    eng_batch *b = eng_batch_new(1);
    int type;
    slice v;
    eng_batch_put(b, "xE\0\0\0\1abcdef", 12, "1", 1);
    eng_batch_put(b, "xE\0\0\0\2abcdef", 12, "2", 1);
    eng_batch_put(b, "yabcdefgh", 9, "3", 1);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("xE\0\0\0\2abcdef", 12), &type, &v), 1);
    idx_prefix(p, 2);
    CHECK_EQ_INT(mem_scan_only_add(&so, p, 6), 1);
    eng_batch_put(b, "xE\0\0\0\2abcdef", 12, "4", 1);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("xE\0\0\0\2abcdef", 12), &type, &v), -1);
    CHECK_EQ_INT(mem_scan_only_add(&so, "yab", 3), 1); /* another length */
    eng_batch_put(b, "yabcdefgh", 9, "5", 1);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("yabcdefgh", 9), &type, &v), -1);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("xE\0\0\0\3abcdef", 12), &type, &v), 0);
    CHECK_EQ_INT(batch_point_get(b, &so, slice_make("xE\0\0\0\1abcdef", 12), &type, &v), -1);
    batch_set_sequence(b, 1);
    memtable *m = mem_new();
    CHECK_EQ_INT(batch_insert_into(b, m), ENG_OK);
    CHECK_EQ_INT(mem_entries(m), 5); /* no op on a covered key is left out */
    mem_unref(m);
    eng_batch_free(b);
}

/* B4, B7 against mem_scan_only_match: random prefixes of 1 to 10 bytes
 * (zero bytes included, so some prefix's first word is 0) and random keys
 * of 0 to 12 bytes over a small alphabet; after an op on a key, the point
 * index answers -1 exactly for keys under a prefix, else with that op. */
TEST(RandomPrefixesAndKeysAnswerAsTheFullCheck)
{
    static const char abc[] = {'\0', 'x', 'E', '\1'};
    rng = 0x5eed5eedull;
    for (int round = 0; round < 200; round++) {
        mem_scan_only so;
        mem_scan_only_init(&so);
        eng_batch *b = eng_batch_new(1);
        int one_len = round % 2, len = 1 + (int)rn(8), added = 0;
        for (int op = 0; op < 64; op++) {
            char k[16];
            if (rn(8) == 0 && added < MEM_SCAN_ONLY_MAX) {
                size_t n = one_len ? (size_t)len : 1 + rn(10);
                for (size_t i = 0; i < n; i++)
                    k[i] = abc[rn(4)];
                added += mem_scan_only_add(&so, k, n);
            }
            size_t n = rn(13);
            for (size_t i = 0; i < n; i++)
                k[i] = abc[rn(4)];
            char val = (char)('a' + op % 26);
            eng_batch_put(b, k, n, &val, 1);
            int type;
            slice v;
            int got = batch_point_get(b, &so, slice_make(k, n), &type, &v);
            if (mem_scan_only_match(&so, slice_make(k, n))) {
                CHECK_EQ_INT(got, -1);
            } else {
                CHECK_EQ_INT(got, 1);
                CHECK_EQ_INT(v.data[0], val);
            }
        }
        eng_batch_free(b);
    }
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
