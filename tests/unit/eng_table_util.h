/*
 * eng_table_util.h -- the model of the table tests (eng_table_test,
 * eng_table_damage_test): user key i has 1-3 versions, some of them
 * deletions, with values derived from (i, seq); building a table of them
 * and checking a reader's entries, gets and seeks against the model.
 * Included after test.h; the functions are static inline so a test may
 * use any.
 */
#ifndef STRATA_TESTS_ENG_TABLE_UTIL_H
#define STRATA_TESTS_ENG_TABLE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dbformat.h"
#include "engine/table.h"
#include "engine/table_format.h"

/* ---- the model: user key i has 1-3 versions, some of them deletions ---- */

typedef struct ent {
    uint32_t i;
    uint64_t seq;
    int type;
} ent;

static inline int versions_of(uint32_t i)
{
    return 1 + (int)((i * 2654435761u) >> 30) % 3;
}
static inline uint64_t seq_of(uint32_t i, int j)
{
    return 1000 - 100 * (uint64_t)j + i % 50;
}
static inline int type_of(uint32_t i, int j)
{
    return (i + (uint32_t)j) % 11 == 0 ? ENG_TYPE_DELETION : ENG_TYPE_VALUE;
}

static inline slice ukey(char *s, uint32_t i)
{
    return slice_make(s, (size_t)sprintf(s, "user%08u", i));
}

/* 1: value_of fills values with noise (incompressible), 0: text. */
static int random_values;
static inline size_t value_of(char *out, uint32_t i, uint64_t seq)
{
    size_t n = (size_t)sprintf(out, "value-%u-%llu-", i, (unsigned long long)seq);
    size_t len = 20 + i % 80;
    uint64_t x = i * 0x9E3779B97F4A7C15ull + seq;
    for (; n < len; n++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        out[n] = random_values ? (char)x : (char)('a' + n % 7);
    }
    return n;
}

static inline ent *model(uint32_t nkeys, size_t *n)
{
    ent *e = malloc(nkeys * 3 * sizeof(ent));
    size_t m = 0;
    for (uint32_t i = 0; i < nkeys; i++)
        for (int j = 0; j < versions_of(i); j++)
            e[m++] = (ent){i, seq_of(i, j), type_of(i, j)};
    *n = m;
    return e;
}

static inline void ikey_of(buf *k, uint32_t i, uint64_t seq, int type)
{
    char s[32];
    k->len = 0;
    ikey_append(k, ukey(s, i), seq, type);
}

static inline sst_options opts(int level, size_t block_size)
{
    sst_options o = {block_size, level, 10};
    return o;
}

static inline void path_of(char *p, const char *name)
{
    sprintf(p, "%s/%s", test_tmpdir(), name);
}

static inline sst_file_info build(const char *path, const ent *e, size_t n, sst_options o)
{
    sst_builder *b;
    CHECK_EQ_INT(sst_builder_new(path, &o, &b), ENG_OK);
    buf k = {0};
    char v[128];
    for (size_t x = 0; x < n; x++) {
        ikey_of(&k, e[x].i, e[x].seq, e[x].type);
        size_t vl = e[x].type == ENG_TYPE_VALUE ? value_of(v, e[x].i, e[x].seq) : 0;
        CHECK_EQ_INT(sst_builder_add(b, slice_make(k.data, k.len), slice_make(v, vl)), ENG_OK);
    }
    CHECK_EQ_INT(sst_builder_entries(b), n);
    sst_file_info fi;
    CHECK_EQ_INT(sst_builder_finish(b, &fi), ENG_OK);
    buf_free(&k);
    return fi;
}

static inline void check_entry(iter *it, const ent *e)
{
    CHECK(iter_valid(it));
    buf k = {0};
    char v[128];
    ikey_of(&k, e->i, e->seq, e->type);
    slice got = iter_key(it);
    CHECK_MSG(got.size == k.len && memcmp(got.data, k.data, k.len) == 0, "key of %u@%llu", e->i,
              (unsigned long long)e->seq);
    size_t vl = e->type == ENG_TYPE_VALUE ? value_of(v, e->i, e->seq) : 0;
    CHECK(iter_value(it).size == vl && memcmp(iter_value(it).data, v, vl) == 0);
    buf_free(&k);
}

/* Newest version of user key i with seq <= snap, or -1. */
static inline int visible(uint32_t i, uint64_t snap)
{
    for (int j = 0; j < versions_of(i); j++)
        if (seq_of(i, j) <= snap) return j;
    return -1;
}

static inline void check_get(sst_reader *r, uint32_t i, uint64_t snap)
{
    char s[32], v[128];
    int type = -1;
    uint64_t fseq = 0;
    char *val = NULL;
    size_t vl = 0;
    eng_status st = sst_reader_get(r, ukey(s, i), snap, &type, &fseq, &val, &vl);
    int j = visible(i, snap);
    if (j < 0) {
        CHECK_MSG(st == ENG_NOTFOUND, "get %u@%llu: %d", i, (unsigned long long)snap, st);
        return;
    }
    CHECK_MSG(st == ENG_OK, "get %u@%llu: %d", i, (unsigned long long)snap, st);
    CHECK_EQ_INT(fseq, seq_of(i, j));
    CHECK_EQ_INT(type, type_of(i, j));
    if (type == ENG_TYPE_DELETION) {
        CHECK(val == NULL);
    } else {
        size_t want = value_of(v, i, fseq);
        CHECK(vl == want && memcmp(val, v, vl) == 0);
    }
    free(val);
}

static inline size_t lower_bound(const ent *e, size_t n, uint32_t i, uint64_t seq)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e[mid].i < i || (e[mid].i == i && e[mid].seq > seq))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline void round_trip_with(sst_options o, block_cache *cache, uint32_t want_version)
{
    size_t n;
    ent *e = model(100000, &n);
    char path[300];
    path_of(path, "000007.sst");
    sst_file_info fi = build(path, e, n, o);
    CHECK_EQ_INT(fi.entries, n);
    sst_reader *r;
    CHECK_EQ_INT(sst_reader_open(path, 7, cache, &r), ENG_OK);
    CHECK_EQ_INT(sst_reader_file_size(r), fi.file_size);
    sst_props p;
    sst_reader_props(r, &p);
    CHECK_EQ_INT(p.format_version, want_version);
    CHECK_EQ_INT(p.dict_size > 0, want_version == SST_FORMAT_VERSION_DICT);

    iter *it = sst_reader_iter(r, 1);
    size_t x = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        check_entry(it, &e[x++]);
    CHECK_EQ_INT(x, n);
    for (iter_seek_last(it); iter_valid(it); iter_prev(it))
        check_entry(it, &e[--x]);
    CHECK_EQ_INT(x, 0);
    CHECK_EQ_INT(iter_status(it), ENG_OK);
    buf k = {0};
    for (int q = 0; q < 1500; q++) {
        uint32_t i = (uint32_t)(q * 7919u) % 100010;
        uint64_t snap = q % 3 ? seq_of(i, q % 3) : ENG_MAX_SEQUENCE;
        ikey_of(&k, i, snap, ENG_TYPE_SEEK);
        iter_seek(it, slice_make(k.data, k.len));
        size_t want = lower_bound(e, n, i, snap);
        if (want == n) {
            CHECK(!iter_valid(it));
            continue;
        }
        check_entry(it, &e[want]);
        if (want > 0) {
            iter_prev(it);
            check_entry(it, &e[want - 1]);
            iter_next(it);
            check_entry(it, &e[want]);
        }
        iter_next(it);
        if (want + 1 < n)
            check_entry(it, &e[want + 1]);
        else
            CHECK(!iter_valid(it));
    }
    iter_free(it);
    for (uint32_t i = 0; i < 100000; i += 13) {
        check_get(r, i, ENG_MAX_SEQUENCE);
        for (int j = 0; j < versions_of(i); j++) {
            check_get(r, i, seq_of(i, j));
            check_get(r, i, seq_of(i, j) - 1);
        }
    }
    buf_free(&k);
    sst_reader_close(r);
    sst_file_info_free(&fi);
    free(e);
}

#endif
