/*
 * ks_fixture.h -- the keyspace tests' fixture: an engine opened with the
 * keyspace's compaction filter, a keyspace over it and one ks_ctx whose
 * batch plays a command's (commit() ends a "command" as the server does).
 * Included after test.h, by one test file each.
 */
#ifndef STRATA_TESTS_KS_FIXTURE_H
#define STRATA_TESTS_KS_FIXTURE_H

#include <string.h>

#include "engine/engine.h"
#include "keyspace/keyspace.h"

static eng_db *edb;
static keyspace *ks;
static ks_ctx ctx;

static inline void setup(void)
{
    eng_options o;
    eng_options_init(&o);
    o.compaction_filter = ks_compaction_filter;
    CHECK(eng_open(test_tmpdir(), &o, &edb) == ENG_OK);
    CHECK(ks_open(edb, &ks) == KS_OK);
    memset(&ctx, 0, sizeof(ctx));
    ctx.ks = ks;
    ctx.batch = eng_batch_new(1);
    ctx.now_ms = 1700000000000;
}

static inline void commit(void)
{
    CHECK(eng_write(edb, ctx.batch, 0) == ENG_OK);
    eng_batch_clear(ctx.batch);
    ks_ctx_reset(&ctx);
}

static inline void teardown(void)
{
    ks_ctx_reset(&ctx);
    eng_batch_free(ctx.batch);
    ks_close(ks);
    eng_close(edb);
}

/* How many engine keys start with the namespace byte ns ('d' members,
 * 'm' metadata ...): what a test expects a command to have stored. */
static inline size_t count_engine_keys(char ns)
{
    size_t n = 0;
    eng_iter *it = eng_iter_new(edb, NULL, NULL);
    for (eng_iter_seek(it, &ns, 1); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl;
        if (eng_iter_key(it, &kl)[0] != ns) break;
        n++;
    }
    eng_iter_free(it);
    return n;
}

#endif
