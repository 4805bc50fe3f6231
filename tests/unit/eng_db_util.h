/*
 * eng_db_util.h -- one-line writes and reads for the engine's db-level
 * tests (eng_db_test, eng_row_cache_test). Each write is its own batch, so
 * it gets its own sequence number, as a command's batch does. Included
 * after test.h; the functions are static inline so a test may use any.
 */
#ifndef STRATA_TESTS_ENG_DB_UTIL_H
#define STRATA_TESTS_ENG_DB_UTIL_H

#include <string.h>

#include "engine/engine.h"

static inline void write_op(eng_db *db, int del, const char *k, const char *v)
{
    eng_batch *b = eng_batch_new(0);
    if (del)
        eng_batch_delete(b, k, strlen(k));
    else
        eng_batch_put(b, k, strlen(k), v, strlen(v));
    eng_status s = eng_write(db, b, 0);
    eng_batch_free(b);
    CHECK_MSG(s == ENG_OK, "write %s: %s", k, eng_status_str(s));
}
#define put(db, k, v) write_op(db, 0, k, v)
#define del(db, k) write_op(db, 1, k, NULL)

static inline void del_range(eng_db *db, const char *a, const char *z)
{
    eng_batch *b = eng_batch_new(0);
    eng_batch_delete_range(b, a, strlen(a), z, strlen(z));
    CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
}

/* A static copy of the value at snap (NULL: the latest), or NULL when
 * absent. The copy lives until the next call. */
static inline const char *get_at(eng_db *db, const eng_snapshot *snap, const char *k)
{
    static char out[4096];
    char *v;
    size_t vl;
    eng_status s = eng_get(db, snap, k, strlen(k), &v, &vl);
    if (s == ENG_NOTFOUND) return NULL;
    CHECK_MSG(s == ENG_OK, "get %s: %s %s", k, eng_status_str(s), eng_last_error());
    CHECK(vl < sizeof(out));
    memcpy(out, v, vl);
    out[vl] = 0;
    eng_free(v);
    return out;
}

static inline const char *get(eng_db *db, const char *k)
{
    return get_at(db, NULL, k);
}

/* Values print cut to 200 bytes: a failure message fits test.h's buffer. */
#define CHECK_GET_AT(db, snap, k, want)                                                            \
    do {                                                                                           \
        const char *got_ = get_at(db, snap, k);                                                    \
        const char *want_ = (want);                                                                \
        if (!want_)                                                                                \
            CHECK_MSG(got_ == NULL, "get %.200s: want absent, got %.200s", k, got_);               \
        else                                                                                       \
            CHECK_MSG(got_ && !strcmp(got_, want_), "get %.200s: want %.200s, got %.200s", k,      \
                      want_, got_ ? got_ : "(absent)");                                            \
    } while (0)
#define CHECK_GET(db, k, want) CHECK_GET_AT(db, NULL, k, want)

#endif
