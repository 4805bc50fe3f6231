/*
 * ks_keyspace_util.h -- what the keyspace-over-an-engine tests
 * (ks_keyspace_test, ks_keyspace_hash_test) share: one-line SET/GET and
 * HSET/HGET that commit, a hash of many fields, and a hash hook that
 * records its last call (KS1). Included after test.h and ks_fixture.h
 * (count_engine_keys is there); the functions are static inline so a
 * test may use any.
 */
#ifndef STRATA_TESTS_KS_KEYSPACE_UTIL_H
#define STRATA_TESTS_KS_KEYSPACE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"

static inline void set(const char *k, const char *v)
{
    ks_set_opts o = {0};
    int done;
    CHECK(ks_set(&ctx, k, strlen(k), v, strlen(v), &o, &done, NULL) == KS_OK && done);
    commit();
}

static inline int get_is(const char *k, const char *want)
{
    ks_val v;
    ks_status st = ks_get(&ctx, k, strlen(k), &v);
    int ok = want ? st == KS_OK && v.n == strlen(want) && memcmp(v.p, want, v.n) == 0
                  : st == KS_NOTFOUND;
    ks_val_free(&v);
    return ok;
}

static inline void hset1(const char *k, const char *f, const char *v)
{
    ks_field p = {f, strlen(f), v, strlen(v)};
    uint64_t added;
    CHECK(ks_hset(&ctx, k, strlen(k), &p, 1, 0, &added) == KS_OK);
    commit();
}

static inline int hget_is(const char *k, const char *f, const char *want)
{
    ks_field it = {f, strlen(f), NULL, 0};
    void *owner;
    ks_hmget(&ctx, k, strlen(k), &it, 1, &owner);
    int ok = want ? it.v && it.vl == strlen(want) && memcmp(it.v, want, it.vl) == 0 : !it.v;
    ks_hmget_free(owner);
    return ok;
}

static inline void hset_many(const char *key, int from, int to, const char *prefix)
{
    /* Hashes past 128 fields are big here (Redis's default limit is 512). */
    ks_limits lim;
    ks_limits_init(&lim);
    lim.hash_max_listpack_entries = 128;
    ks_set_limits(ks, &lim);
    ks_field *p = calloc((size_t)(to - from), sizeof(*p));
    char(*fb)[16] = calloc((size_t)(to - from), 16), (*vb)[24] = calloc((size_t)(to - from), 24);
    for (int i = from; i < to; i++) {
        int j = i - from;
        snprintf(fb[j], 16, "f%05d", i);
        snprintf(vb[j], 24, "%s%d", prefix, i);
        p[j] = (ks_field){fb[j], strlen(fb[j]), vb[j], strlen(vb[j])};
    }
    uint64_t added;
    CHECK(ks_hset(&ctx, key, strlen(key), p, (size_t)(to - from), 0, &added) == KS_OK);
    commit();
    free(p);
    free(fb);
    free(vb);
}

typedef struct hook_log {
    int calls, had, has;
    size_t old_n, new_n;
    int64_t expire;
    int reject;
} hook_log;
static hook_log hl;

static inline ks_status hook(void *h, ks_ctx *c, const char *key, size_t klen, const ks_field *of,
                             size_t on, int had, const ks_field *nf, size_t nn, int has,
                             int64_t exp)
{
    hl.calls++;
    hl.had = had;
    hl.has = has;
    hl.old_n = on;
    hl.new_n = nn;
    hl.expire = exp;
    if (hl.reject) {
        c->err = strdup("ERR rejected by test");
        return KS_ERR_MSG;
    }
    return KS_OK;
}

static inline int wants(void *h, int db, const char *key, size_t klen)
{
    return klen >= 2 && memcmp(key, "u:", 2) == 0;
}

#endif
