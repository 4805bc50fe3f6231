/*
 * idx_catalog_test.c -- the index catalog's stored records: IDX.CREATE
 * accepts exactly what the loader accepts, every record IDX.CREATE can
 * write decodes back to itself, and a start over hand-damaged records
 * loads the good ones, quarantines the others (Invariant C4) and keeps the
 * data served; IDX.DROP then removes a quarantined record.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "index/catalog.h"
#include "index/index.h"
#include "keyspace/keyspace.h"
#include "test.h"
#include "ks_fixture.h"

static ks_status create(const char *name, size_t nlen, const char *prefix, size_t plen,
                        const char *field, size_t flen)
{
    idx_field_spec f[2] = {{{field, flen}, 1, 0}, {{"b", 1}, 0, 0}};
    idx_spec spec = {{name, nlen}, {prefix, plen}, 0, 2, f};
    ks_status st = idx_create(&ctx, &spec);
    if (st == KS_OK)
        commit();
    else
        eng_batch_clear(ctx.batch); /* S1; ctx.err stays for the caller */
    return st;
}

#define CHECK_REFUSED(st, text)                                                                    \
    do {                                                                                           \
        CHECK((st) == KS_ERR_MSG);                                                                 \
        CHECK_MSG(ctx.err &&strstr(ctx.err, text), "error '%s', want '%s'", ctx.err, text);        \
        ks_ctx_reset(&ctx);                                                                        \
    } while (0)

static void reopen(void)
{
    idx_shutdown();
    ks_close(ks);
    CHECK(eng_close(edb) == ENG_OK);
    eng_options o;
    eng_options_init(&o);
    o.compaction_filter = ks_compaction_filter;
    CHECK(eng_open(test_tmpdir(), &o, &edb) == ENG_OK);
    CHECK(ks_open(edb, &ks) == KS_OK);
    ctx.ks = ks;
    char *err = NULL;
    CHECK_MSG(idx_init(ks, &err) == KS_OK, "idx_init: %s", err ? err : "?");
}

static void start(void)
{
    setup();
    char *err = NULL;
    CHECK(idx_init(ks, &err) == KS_OK);
}

static void stop(void)
{
    idx_shutdown();
    teardown();
}

TEST(CreateRefusesNamesPrefixesAndFieldsTheLoaderWouldNotLoad)
{
    start();
    static char big[2048];
    memset(big, 'n', sizeof(big));
    /* The reproducer: an empty index name used to be accepted and
     * then stopped every later start. */
    ks_status st;
    st = create("", 0, "h:", 2, "age", 3);
    CHECK_REFUSED(st, "index name must be 1 to 256 bytes");
    st = create("a\0b", 3, "h:", 2, "age", 3);
    CHECK_REFUSED(st, "must not contain NUL bytes");
    st = create(big, IDX_MAX_NAME + 1, "h:", 2, "age", 3);
    CHECK_REFUSED(st, "index name must be 1 to 256 bytes");
    st = create("p", 1, big, IDX_MAX_PREFIX + 1, "age", 3);
    CHECK_REFUSED(st, "prefix must be at most 1024 bytes");
    st = create("f", 1, "h:", 2, "", 0);
    CHECK_REFUSED(st, "field names must be 1 to 1024 bytes");
    st = create("f", 1, "h:", 2, big, IDX_MAX_FIELD_NAME + 1);
    CHECK_REFUSED(st, "field names must be 1 to 1024 bytes");
    st = create("d", 1, "h:", 2, "b", 1);
    CHECK_REFUSED(st, "duplicate field 'b' in SCHEMA");
    CHECK_EQ_INT(idx_g.ndefs, 0);
    /* The limits themselves are fine, and load again after a restart. */
    CHECK(create(big, IDX_MAX_NAME, "h:", 2, "age", 3) == KS_OK);
    CHECK(create("p", 1, big, IDX_MAX_PREFIX, "age", 3) == KS_OK);
    CHECK(create("all", 3, "", 0, "age", 3) == KS_OK);
    CHECK(create("bin", 3, "k\0", 2, "a\0\xff", 3) == KS_OK);
    CHECK(create("f", 1, "h:", 2, big, IDX_MAX_FIELD_NAME) == KS_OK);
    reopen();
    CHECK_EQ_INT(idx_g.ndefs, 5);
    CHECK_EQ_INT(idx_g.nquarantined, 0);
    stop();
}

TEST(EveryValidDefinitionDecodesBackToItself)
{
    static const char *names[] = {"a", "email", "x\xff\x01"};
    for (int t = 0; t < 64; t++) {
        idx_def d = {0};
        d.name = (char *)names[t % 3];
        d.nlen = strlen(d.name);
        d.db = t % KS_DATABASES;
        d.id = 1u + (uint32_t)t * 977u;
        d.prefix = t & 1 ? "user:" : "";
        d.plen = strlen(d.prefix);
        d.unique = (t >> 1) & 1;
        d.implied_key = !d.unique && (t & 16);
        d.bare_value = !d.unique && (t & 32);
        d.nfields = 1 + (size_t)t % IDX_MAX_FIELDS;
        char fnames[IDX_MAX_FIELDS][4];
        for (size_t i = 0; i < d.nfields; i++) {
            snprintf(fnames[i], sizeof(fnames[i]), "f%zu", i);
            d.fields[i] = (idx_field){fnames[i], strlen(fnames[i]), (int)(i & 1), (int)(t & 2)};
        }
        d.building = (t >> 2) & 1;
        d.has_cursor = d.building && (t & 8);
        d.cursor = d.has_cursor ? "user:42" : NULL;
        d.clen = d.has_cursor ? 7 : 0;
        d.scanned = d.building ? (uint64_t)t * 1000 : 0;
        idx_buf k = {0}, v = {0}, k2 = {0}, v2 = {0};
        idx_catalog_encode(&d, &k, &v);
        char why[256];
        idx_def *back = idx_catalog_decode(k.data, k.len, v.data, v.len, why, sizeof(why));
        CHECK_MSG(back, "case %d: %s", t, why);
        idx_catalog_encode(back, &k2, &v2);
        CHECK(k2.len == k.len && memcmp(k2.data, k.data, k.len) == 0);
        CHECK(v2.len == v.len && memcmp(v2.data, v.data, v.len) == 0);
        idx_def_free(back);
        idx_buf_free(&k);
        idx_buf_free(&v);
        idx_buf_free(&k2);
        idx_buf_free(&v2);
    }
}

/* Writes a raw catalog record (as damage on disk would leave it). */
static void put_record(int db, const char *name, size_t nlen, const char *val, size_t vl)
{
    char key[64] = {IDX_NS_BYTE, IDX_TAG_CATALOG, (char)db};
    memcpy(key + 3, name, nlen);
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, key, 3 + nlen, val, vl);
    CHECK(eng_write(edb, b, 0) == ENG_OK);
    eng_batch_free(b);
}

TEST(StartQuarantinesDamagedRecordsAndKeepsServingTheData)
{
    start();
    CHECK(create("good", 4, "h:", 2, "age", 3) == KS_OK);
    ks_field fv[2] = {{"age", 3, "30", 2}, {"b", 1, "x", 1}};
    uint64_t added;
    CHECK(ks_hset(&ctx, "h:1", 3, fv, 2, 0, &added) == KS_OK);
    commit();
    /* A good record, then hand-damaged copies of it. */
    idx_buf k = {0}, v = {0};
    idx_catalog_encode(idx_g.defs[0], &k, &v);
    char bad[256];
    CHECK(v.len + 8 < sizeof(bad));
    put_record(0, "", 0, v.data, v.len); /* what the empty-name IDX.CREATE wrote */
    put_record(0, "trunc", 5, v.data, v.len - 3);
    memcpy(bad, v.data, v.len);
    bad[0] = 9;
    put_record(0, "version", 7, bad, v.len);
    memcpy(bad, v.data, v.len);
    bad[v.len] = 'z';
    put_record(0, "trailing", 8, bad, v.len + 1);
    memcpy(bad, v.data, v.len);
    bad[5] = 3; /* flags: UNIQUE with IMPLIED KEY */
    put_record(3, "flags", 5, bad, v.len);
    bad[5] = 5; /* flags: UNIQUE with BARE VALUE */
    put_record(4, "flags", 5, bad, v.len);
    bad[5] = 8; /* flags: a bit no version defines */
    put_record(5, "flags", 5, bad, v.len);
    put_record(0, "n\0ul", 4, v.data, v.len);
    put_record(0, "empty", 5, "", 0);
    idx_buf_free(&k);
    idx_buf_free(&v);
    reopen();
    CHECK_EQ_INT(idx_g.ndefs, 1);
    CHECK_EQ_INT(idx_g.nquarantined, 9);
    const char *why = idx_quarantined_reason(0, "", 0);
    CHECK_MSG(why && strstr(why, "index name must be 1 to 256 bytes"), "%s", why);
    why = idx_quarantined_reason(0, "trunc", 5);
    CHECK_MSG(why && strstr(why, "malformed record"), "%s", why);
    why = idx_quarantined_reason(0, "version", 7);
    CHECK_MSG(why && strstr(why, "unknown record version 9"), "%s", why);
    why = idx_quarantined_reason(0, "trailing", 8);
    CHECK_MSG(why && strstr(why, "trailing bytes"), "%s", why);
    CHECK(idx_quarantined_reason(3, "flags", 5) && !idx_quarantined_reason(0, "flags", 5));
    CHECK(idx_quarantined_reason(4, "flags", 5) && idx_quarantined_reason(5, "flags", 5));
    char info[4096];
    idx_info(info, sizeof(info));
    CHECK_MSG(strstr(info, "indexes_quarantined:9\r\n") &&
                  strstr(info, "name=,reason=index name must be 1 to 256 bytes"),
              "%.300s", info);
    /* The data and the good index are served. */
    idx_str eq = {"30", 2};
    idx_query q = {.name = {"good", 4}, .neq = 1, .eq = &eq, .count = -1};
    idx_result r;
    CHECK(idx_range(&ctx, &q, &r) == KS_OK && r.n == 1 && memcmp(r.hits[0].key, "h:1", 3) == 0);
    idx_result_free(&r);
    /* A quarantined name cannot be created over; IDX.DROP removes it, for good. */
    ks_status st = create("trunc", 5, "h:", 2, "age", 3);
    CHECK_REFUSED(st, "is quarantined");
    CHECK(idx_drop(&ctx, "trunc", 5) == KS_OK);
    CHECK(idx_drop(&ctx, "", 0) == KS_OK);
    commit();
    CHECK(create("trunc", 5, "h:", 2, "age", 3) == KS_OK);
    CHECK(idx_g.defs[1]->id > idx_g.defs[0]->id); /* ids stay unique (C2) */
    reopen();
    CHECK_EQ_INT(idx_g.ndefs, 2);
    CHECK_EQ_INT(idx_g.nquarantined, 7);
    CHECK(!idx_quarantined_reason(0, "", 0));
    stop();
}

static void no_problem(void *arg, const char *line)
{
    (void)arg;
    CHECK_MSG(0, "IDX.CHECK: %s", line);
}

/* The hash keys of the entries of index id with age = v, as stored. */
static size_t stored_suffixes(uint32_t id, double age, char out[][16], size_t max)
{
    idx_buf lo = {0};
    idx_key_entry_prefix(&lo, id);
    idx_key_put_num(&lo, age, 0);
    eng_iter *it = eng_iter_new(edb, NULL, NULL);
    size_t n = 0;
    for (eng_iter_seek(it, lo.data, lo.len); eng_iter_valid(it) && n < max; eng_iter_next(it)) {
        size_t kl;
        const char *k = eng_iter_key(it, &kl);
        if (kl < lo.len || memcmp(k, lo.data, lo.len)) break;
        size_t tag = idx_key_skip_field(k + lo.len, kl - lo.len, 0, 0);
        size_t sl = kl - lo.len - tag;
        CHECK(tag && sl < 16);
        memcpy(out[n], k + lo.len + tag, sl);
        out[n++][sl] = 0;
    }
    eng_iter_free(it);
    idx_buf_free(&lo);
    return n;
}

static size_t hits_for(const char *age)
{
    idx_str eq = {age, strlen(age)};
    idx_query q = {.name = {"old", 3}, .neq = 1, .eq = &eq, .count = -1};
    idx_result r;
    CHECK(idx_range(&ctx, &q, &r) == KS_OK);
    size_t n = r.n;
    if (n) CHECK(r.hits[0].klen == 3 && memcmp(r.hits[0].key, "h:1", 3) == 0);
    idx_result_free(&r);
    return n;
}

/* An index stored before the implied-key format (catalog flag bit 1 clear,
 * entry keys ending in the raw hash key, as written by hand here) loads,
 * answers queries, is maintained in its own format and checks clean, next
 * to an index of the current format. */
TEST(IndexesOfTheRawHashKeyFormatKeepWorking)
{
    start();
    ks_field fv[2] = {{"age", 3, "30", 2}, {"b", 1, "x", 1}};
    uint64_t added;
    CHECK(ks_hset(&ctx, "h:1", 3, fv, 2, 0, &added) == KS_OK);
    commit();
    CHECK(create("old", 3, "h:", 2, "age", 3) == KS_OK);
    CHECK_EQ_INT(idx_g.ndefs, 1);
    idx_def *d = idx_g.defs[0];
    CHECK(d->implied_key && !d->building);
    uint32_t id = d->id;
    /* Rewrite it as the old format stored it: the record's flags 0, the
     * entry key <prefix> <30> <"x"> "h:1". */
    idx_buf k = {0}, v = {0}, ek = {0};
    d->implied_key = 0;
    d->bare_value = 0;
    idx_catalog_encode(d, &k, &v);
    CHECK_EQ_INT((unsigned char)v.data[5], 0);
    idx_key_entry_prefix(&ek, id);
    idx_key_put_num(&ek, 30, 0);
    idx_key_put_tag(&ek, "x", 1, 0);
    idx_buf_append(&ek, "h:1", 3);
    char none[IDX_EXPIRE_LEN] = {0};
    idx_buf lo = {0};
    idx_key_entry_prefix(&lo, id);
    idx_buf hi = {0};
    idx_key_entry_prefix(&hi, id + 1);
    eng_batch *b = eng_batch_new(0);
    eng_batch_delete_range(b, lo.data, lo.len, hi.data, hi.len);
    eng_batch_put(b, k.data, k.len, v.data, v.len);
    eng_batch_put(b, ek.data, ek.len, none, sizeof(none));
    CHECK(eng_write(edb, b, 0) == ENG_OK);
    eng_batch_free(b);
    CHECK(eng_flush(edb) == ENG_OK); /* and the entries into a table with a filter */
    reopen();
    CHECK_EQ_INT(idx_g.ndefs, 1);
    CHECK(!idx_g.defs[0]->implied_key);
    CHECK_EQ_INT(hits_for("30"), 1);
    CHECK_EQ_INT(idx_check(&ctx, no_problem, NULL), 0);
    /* Maintained in its own format. */
    ks_field up[1] = {{"age", 3, "31", 2}};
    CHECK(ks_hset(&ctx, "h:1", 3, up, 1, 0, &added) == KS_OK);
    commit();
    CHECK_EQ_INT(hits_for("30"), 0);
    CHECK_EQ_INT(hits_for("31"), 1);
    char suf[4][16];
    CHECK_EQ_INT(stored_suffixes(id, 31, suf, 4), 1);
    CHECK_MSG(strcmp(suf[0], "h:1") == 0, "suffix '%s'", suf[0]);
    /* A new index takes the current format: the key its last field implies
     * is one byte. */
    idx_field_spec f2[2] = {{{"age", 3}, 1, 0}, {{"n", 1}, 1, 0}};
    idx_spec spec = {{"new", 3}, {"h:", 2}, 0, 2, f2};
    CHECK(idx_create(&ctx, &spec) == KS_OK);
    commit();
    ks_field nv[1] = {{"n", 1, "1", 1}};
    CHECK(ks_hset(&ctx, "h:1", 3, nv, 1, 0, &added) == KS_OK);
    commit();
    CHECK(idx_g.defs[1]->implied_key);
    uint32_t id2 = idx_g.defs[1]->id;
    idx_buf nk = {0};
    idx_key_entry_prefix(&nk, id2);
    idx_key_put_num(&nk, 31, 0);
    idx_key_put_num(&nk, 1, 0);
    idx_buf_byte(&nk, IDX_HK_IMPLIED);
    char *val = NULL;
    size_t vl = 0;
    CHECK(eng_get(edb, NULL, nk.data, nk.len, &val, &vl) == ENG_OK);
    free(val);
    CHECK(eng_flush(edb) == ENG_OK);
    reopen();
    CHECK_EQ_INT(hits_for("31"), 1);
    CHECK_EQ_INT(idx_check(&ctx, no_problem, NULL), 0);
    idx_buf_free(&k);
    idx_buf_free(&v);
    idx_buf_free(&ek);
    idx_buf_free(&lo);
    idx_buf_free(&hi);
    idx_buf_free(&nk);
    stop();
}

/* The value length of the first entry of index id with age = v, as stored
 * (-1: none). */
static long stored_value_len(uint32_t id, double age)
{
    idx_buf lo = {0};
    idx_key_entry_prefix(&lo, id);
    idx_key_put_num(&lo, age, 0);
    eng_iter *it = eng_iter_new(edb, NULL, NULL);
    long n = -1;
    eng_iter_seek(it, lo.data, lo.len);
    if (eng_iter_valid(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl);
        eng_iter_value(it, &vl);
        if (kl >= lo.len && memcmp(k, lo.data, lo.len) == 0) n = (long)vl;
    }
    eng_iter_free(it);
    idx_buf_free(&lo);
    return n;
}

static void count_problem(void *arg, const char *line)
{
    (void)line;
    ++*(int *)arg;
}

/* A non-UNIQUE index of the current format stores no value for a hash
 * without a TTL (catalog flag BARE VALUE), the expiry for one with a TTL,
 * and nothing again once the TTL is gone; IDX.CHECK holds it to that. */
TEST(EntriesOfAHashWithoutTtlStoreNoValue)
{
    start();
    ks_field fv[2] = {{"age", 3, "30", 2}, {"b", 1, "x", 1}};
    uint64_t added;
    CHECK(ks_hset(&ctx, "h:1", 3, fv, 2, 0, &added) == KS_OK);
    commit();
    CHECK(create("old", 3, "h:", 2, "age", 3) == KS_OK);
    idx_def *d = idx_g.defs[0];
    CHECK(d->bare_value && d->implied_key && !d->building);
    CHECK_EQ_INT(stored_value_len(d->id, 30), 0);
    int done = 0;
    CHECK(ks_expire_set(&ctx, "h:1", 3, ctx.now_ms + 100000, 0, &done) == KS_OK && done);
    commit();
    CHECK_EQ_INT(stored_value_len(d->id, 30), IDX_EXPIRE_LEN);
    CHECK_EQ_INT(idx_check(&ctx, no_problem, NULL), 0);
    CHECK(ks_persist(&ctx, "h:1", 3, &done) == KS_OK && done);
    commit();
    CHECK_EQ_INT(stored_value_len(d->id, 30), 0);
    CHECK_EQ_INT(hits_for("30"), 1);
    CHECK_EQ_INT(idx_check(&ctx, no_problem, NULL), 0);
    CHECK(eng_flush(edb) == ENG_OK);
    reopen();
    CHECK(idx_g.defs[0]->bare_value);
    CHECK_EQ_INT(hits_for("30"), 1);
    CHECK_EQ_INT(idx_check(&ctx, no_problem, NULL), 0);
    stop();
}

/* An index stored before the bare-value format (catalog flags IMPLIED KEY
 * only, 8 zero bytes for no expiry, as written by hand here) loads,
 * answers queries, checks clean, and is maintained in its own format;
 * IDX.CHECK finds an empty value in it stale. */
TEST(IndexesOfTheEightByteValueFormatKeepWorking)
{
    start();
    ks_field fv[2] = {{"age", 3, "30", 2}, {"b", 1, "x", 1}};
    uint64_t added;
    CHECK(ks_hset(&ctx, "h:1", 3, fv, 2, 0, &added) == KS_OK);
    commit();
    CHECK(create("old", 3, "h:", 2, "age", 3) == KS_OK);
    idx_def *d = idx_g.defs[0];
    uint32_t id = d->id;
    idx_buf k = {0}, v = {0}, ek = {0};
    d->bare_value = 0;
    idx_catalog_encode(d, &k, &v);
    CHECK_EQ_INT((unsigned char)v.data[5], 2);
    /* The entry as the old format wrote it: the key unchanged, the value
     * 8 zero bytes. */
    idx_key_entry_prefix(&ek, id);
    idx_key_put_num(&ek, 30, 0);
    idx_key_put_tag(&ek, "x", 1, 0);
    idx_buf_byte(&ek, IDX_HK_BELOW);
    idx_buf_append(&ek, "h:1", 3);
    char none[IDX_EXPIRE_LEN] = {0};
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, k.data, k.len, v.data, v.len);
    eng_batch_put(b, ek.data, ek.len, none, sizeof(none));
    CHECK(eng_write(edb, b, 0) == ENG_OK);
    eng_batch_free(b);
    CHECK(eng_flush(edb) == ENG_OK);
    reopen();
    CHECK_EQ_INT(idx_g.ndefs, 1);
    CHECK(!idx_g.defs[0]->bare_value && idx_g.defs[0]->implied_key);
    CHECK_EQ_INT(stored_value_len(id, 30), IDX_EXPIRE_LEN);
    CHECK_EQ_INT(hits_for("30"), 1);
    CHECK_EQ_INT(idx_check(&ctx, no_problem, NULL), 0);
    /* Maintained in its own format. */
    ks_field up[1] = {{"age", 3, "31", 2}};
    CHECK(ks_hset(&ctx, "h:1", 3, up, 1, 0, &added) == KS_OK);
    commit();
    CHECK_EQ_INT(hits_for("30"), 0);
    CHECK_EQ_INT(hits_for("31"), 1);
    CHECK_EQ_INT(stored_value_len(id, 31), IDX_EXPIRE_LEN);
    CHECK_EQ_INT(idx_check(&ctx, no_problem, NULL), 0);
    /* The current format's empty value is stale in it. */
    idx_buf_free(&ek);
    idx_key_entry_prefix(&ek, id);
    idx_key_put_num(&ek, 31, 0);
    idx_key_put_tag(&ek, "x", 1, 0);
    idx_buf_byte(&ek, IDX_HK_BELOW);
    idx_buf_append(&ek, "h:1", 3);
    b = eng_batch_new(0);
    eng_batch_put(b, ek.data, ek.len, "", 0);
    CHECK(eng_write(edb, b, 0) == ENG_OK);
    eng_batch_free(b);
    int problems = 0;
    idx_check(&ctx, count_problem, &problems);
    CHECK_EQ_INT(problems, 1);
    idx_buf_free(&k);
    idx_buf_free(&v);
    idx_buf_free(&ek);
    stop();
}

/* A query decodes its hits starting after the fixed prefix it shares with
 * them: that gives the key decoding from the start gives, for every
 * number of fixed fields, over TAG, DESC and NUMERIC values of every kind
 * (integers of both signs, fractions, huge) and keys on both sides of the
 * implied key. */
TEST(HashKeyFromTheFixedPrefixIsTheHashKeyFromTheStart)
{
    start();
    idx_field_spec f[3] = {{{"c", 1}, 0, 0}, {{"s", 1}, 0, 1}, {{"n", 1}, 1, 0}};
    idx_spec spec = {{"q", 1}, {"u:", 2}, 0, 3, f};
    CHECK(idx_create(&ctx, &spec) == KS_OK);
    commit();
    f[2].desc = 1;
    spec.name.p = "r";
    CHECK(idx_create(&ctx, &spec) == KS_OK);
    commit();
    static const char *nums[] = {"0",
                                 "-0",
                                 "7",
                                 "-7",
                                 "42",
                                 "1.5",
                                 "-2.25",
                                 "1e300",
                                 "9007199254740993",
                                 "123456789012345",
                                 "-100"};
    static const char *keys[] = {"u:42", "u:7", "u:-7", "u:0", "u:", "u:1.5", "u:zzz", "v"};
    static const char *tags[] = {"US", "", "a\xff\x00z", "\x00"};
    idx_buf b = {0};
    for (size_t di = 0; di < 2; di++) {
        idx_def *d = idx_g.defs[di];
        for (size_t i = 0; i < 11 * 8 * 4; i++) {
            const char *t = tags[i % 4], *k = keys[(i / 4) % 8], *n = nums[i / 32];
            size_t tl = i % 4 == 2 ? 4 : (i % 4 == 3 ? 1 : strlen(t));
            ks_field fv[3] = {{"c", 1, t, tl}, {"s", 1, t, tl}, {"n", 1, n, strlen(n)}};
            size_t bad;
            CHECK_EQ_INT(idx_entry_key(d, k, strlen(k), fv, 3, &b, &bad), 1);
            const char *want, *got;
            size_t wl, gl, off = IDX_ENTRY_PREFIX_LEN;
            CHECK(idx_entry_hash_key(d, b.data, b.len, "", 0, &want, &wl) == 0);
            CHECK(wl == strlen(k) && memcmp(want, k, wl) == 0);
            for (size_t fixed = 0; fixed < 3; fixed++) {
                CHECK(idx_entry_hash_key_from(d, b.data, b.len, "", 0, off, fixed, &got, &gl) == 0);
                CHECK_MSG(gl == wl && memcmp(got, k, gl) == 0, "%s %s fixed %zu", k, n, fixed);
                off += idx_key_skip_field(b.data + off, b.len - off, 0, fixed == 1);
            }
        }
    }
    idx_buf_free(&b);
    stop();
}

/* Invariant C5 over idx_g.defs: equal classes exactly for equal prefixes. */
static void check_prefix_classes(void)
{
    for (size_t i = 0; i < idx_g.ndefs; i++)
        for (size_t j = 0; j < idx_g.ndefs; j++) {
            const idx_def *a = idx_g.defs[i], *b = idx_g.defs[j];
            int same = a->plen == b->plen && memcmp(a->prefix, b->prefix, a->plen) == 0;
            CHECK_MSG((a->prefix_class == b->prefix_class) == same, "%.*s %.*s", (int)a->nlen,
                      a->name, (int)b->nlen, b->name);
        }
}

/* The hook compares a key once per prefix class (maintain.c): the classes
 * follow every create, drop and reload, so a key family's indexes share
 * one class and a prefix created after a drop never joins another's. */
TEST(PrefixClassesFollowCreateDropAndReload)
{
    start();
    idx_field_spec f[1] = {{{"n", 1}, 1, 0}};
    static const char *names[] = {"a", "b", "c", "d", "e"};
    static const char *prefixes[] = {"u:", "v:", "u:", "u", ""};
    for (size_t i = 0; i < 5; i++) {
        idx_spec spec = {{names[i], 1}, {prefixes[i], strlen(prefixes[i])}, 0, 1, f};
        CHECK(idx_create(&ctx, &spec) == KS_OK);
        commit();
        check_prefix_classes();
    }
    CHECK(idx_drop(&ctx, "a", 1) == KS_OK);
    commit();
    check_prefix_classes();
    idx_spec spec = {{"f", 1}, {"v:", 2}, 0, 1, f};
    CHECK(idx_create(&ctx, &spec) == KS_OK);
    commit();
    check_prefix_classes();
    reopen();
    CHECK_EQ_INT((int)idx_g.ndefs, 5);
    check_prefix_classes();
    stop();
}

/* The hook parses each NUMERIC pair once a call (idx_num_memo): a key
 * built through the memo -- by a second index sharing the pair, and as the
 * last field whose text decides the implied key, compared after the
 * prefix the key is known to have -- is the key built without it, and a
 * memo reset for the next call forgets the values of pairs that changed
 * in place. */
TEST(EntryKeyThroughTheNumberMemoIsTheKeyWithout)
{
    start();
    idx_field_spec f[2] = {{{"n", 1}, 1, 0}, {{"m", 1}, 1, 0}};
    idx_spec spec = {{"q", 1}, {"u:", 2}, 0, 2, f};
    CHECK(idx_create(&ctx, &spec) == KS_OK);
    commit();
    idx_field_spec g[2] = {{{"m", 1}, 1, 1}, {{"n", 1}, 1, 0}};
    idx_spec spec2 = {{"r", 1}, {"u:", 2}, 0, 2, g};
    CHECK(idx_create(&ctx, &spec2) == KS_OK);
    commit();
    static const char *nums[] = {
        "0", "-0", "7", "007", "-7", "1.5", "123456789012345", "1234567890123456", "-100", "1e3"};
    idx_buf want = {0}, got = {0};
    idx_num_memo memo = {.key_has_prefix = 1}; /* every key below starts with "u:" */
    ks_field fv[2];
    for (size_t i = 0; i < 10 * 10; i++) {
        const char *n = nums[i % 10], *m = nums[i / 10];
        char k[32];
        snprintf(k, sizeof k, "u:%s", i % 3 ? n : m);
        fv[0] = (ks_field){"n", 1, n, strlen(n)};
        fv[1] = (ks_field){"m", 1, m, strlen(m)};
        memo.n = 0; /* a new call: the pairs of fv changed in place */
        got.len = 0;
        for (size_t di = 0; di < 2; di++) {
            idx_def *d = idx_g.defs[di];
            size_t bad, at = got.len;
            CHECK_EQ_INT(idx_entry_key(d, k, strlen(k), fv, 2, &want, &bad), 1);
            CHECK_EQ_INT(idx_entry_key_append(d, k, strlen(k), fv, 2, &got, &bad, &memo), 1);
            CHECK_MSG(got.len - at == want.len && memcmp(got.data + at, want.data, want.len) == 0,
                      "index %zu n=%s m=%s key %s", di, n, m, k);
        }
    }
    idx_buf_free(&want);
    idx_buf_free(&got);
    stop();
}

/* A scan hit's key as IDX.RANGE returns it, against a sorted model: an
 * index whose fields after the EQ ones are all NUMERIC writes the implied
 * keys of its hits straight into the result (Invariant Q1), every other
 * hit through the general decoding; with any number of EQ values, offsets
 * and limits, forwards and backwards, both give the keys in the index's
 * order, and the walk stops at its range's ends (one word compare for a
 * short end, at_or_after). */
typedef struct scan_row {
    const char *c;
    double r, n;
    char key[48];
} scan_row;

static int scan_row_cmp(const void *pa, const void *pb)
{
    const scan_row *a = pa, *b = pb;
    int c = strcmp(a->c, b->c);
    if (c) return c;
    if (a->r != b->r) return a->r > b->r ? -1 : 1; /* DESC */
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    return strcmp(a->key, b->key);
}

static void put_scan_row(scan_row *rows, size_t *n, const char *key, const char *c, const char *r,
                         const char *num)
{
    ks_field fv[3] = {{"c", 1, c, strlen(c)}, {"r", 1, r, strlen(r)}, {"n", 1, num, strlen(num)}};
    uint64_t added;
    CHECK(ks_hset(&ctx, key, strlen(key), fv, 3, 0, &added) == KS_OK);
    commit();
    scan_row *w = &rows[(*n)++];
    w->c = c;
    w->r = strtod(r, NULL);
    w->n = strtod(num, NULL);
    snprintf(w->key, sizeof(w->key), "%s", key);
}

static void check_scan(const scan_row *rows, size_t n, size_t neq, const idx_str *eq,
                       long long offset, long long count, int rev)
{
    idx_query q = {
        .name = {"t", 1}, .neq = neq, .eq = eq, .offset = offset, .count = count, .rev = rev};
    idx_result r;
    CHECK(idx_range(&ctx, &q, &r) == KS_OK);
    size_t want = 0, skipped = 0;
    for (size_t j = 0; j < n; j++) {
        size_t i = rev ? n - 1 - j : j;
        if (neq >= 1 && strcmp(rows[i].c, eq[0].p)) continue;
        if (neq >= 2 && rows[i].r != strtod(eq[1].p, NULL)) continue;
        if (neq >= 3 && rows[i].n != strtod(eq[2].p, NULL)) continue;
        if (skipped++ < (size_t)offset) continue;
        if (count >= 0 && (long long)want >= count) break;
        CHECK_MSG(want < r.n && r.hits[want].klen == strlen(rows[i].key) &&
                      memcmp(r.hits[want].key, rows[i].key, r.hits[want].klen) == 0 &&
                      r.hits[want].key[r.hits[want].klen] == 0,
                  "neq %zu offset %lld hit %zu: want '%s', got '%.*s'", neq, offset, want,
                  rows[i].key, want < r.n ? (int)r.hits[want].klen : 0,
                  want < r.n ? r.hits[want].key : "");
        want++;
    }
    CHECK_MSG(r.n == want, "neq %zu offset %lld: %zu hits, want %zu", neq, offset, r.n, want);
    idx_result_free(&r);
}

TEST(ScanHitKeysOfNumericTailsAreTheHashKeysInIndexOrder)
{
    start();
    idx_field_spec f[3] = {{{"c", 1}, 0, 0}, {{"r", 1}, 1, 1}, {{"n", 1}, 1, 0}};
    idx_spec before = {{"s", 1}, {"u:", 2}, 0, 1, f + 2}, spec = {{"t", 1}, {"u:", 2}, 0, 3, f},
             after = {{"w", 1}, {"u:", 2}, 0, 1, f + 2};
    /* entries of other indexes on both sides of t's: the walks must stop */
    CHECK(idx_create(&ctx, &before) == KS_OK);
    commit();
    CHECK(idx_create(&ctx, &spec) == KS_OK);
    commit();
    CHECK(idx_create(&ctx, &after) == KS_OK);
    commit();
    static const char *cs[] = {"a", "b"}, *rs[] = {"1", "2", "3.5"};
    static const char *nums[] = {"5", "-5", "12", "0", "2.5", "9007199254740993", "123456789"};
    scan_row rows[200];
    size_t n = 0;
    char key[48];
    for (size_t k = 0; k < 7; k++) {
        /* the key the tuple implies, where there is one (not 2.5, not >= 2^53) */
        snprintf(key, sizeof(key), "u:%s", nums[k]);
        put_scan_row(rows, &n, key, "a", "2", nums[k]);
        for (size_t i = 0; i < 6; i++) {
            snprintf(key, sizeof(key), "u:!%s%s%s", cs[i % 2], rs[i / 2], nums[k]); /* below */
            put_scan_row(rows, &n, key, cs[i % 2], rs[i / 2], nums[k]);
            snprintf(key, sizeof(key), "u:%s~%s%s", nums[k], cs[i % 2], rs[i / 2]); /* above */
            put_scan_row(rows, &n, key, cs[i % 2], rs[i / 2], nums[k]);
        }
    }
    qsort(rows, n, sizeof(rows[0]), scan_row_cmp);
    idx_str eq[3] = {{"a", 1}, {"2", 1}, {"5", 1}};
    static const long long offsets[] = {0, 1, 3, 7, 40};
    for (int pass = 0; pass < 2; pass++) { /* from the memtable, then from a table */
        for (size_t neq = 0; neq <= 3; neq++)
            for (size_t o = 0; o < 10; o++) {
                check_scan(rows, n, neq, eq, offsets[o / 2], -1, (int)(o & 1));
                check_scan(rows, n, neq, eq, offsets[o / 2], 5, (int)(o & 1));
            }
        CHECK(eng_flush(edb) == ENG_OK);
    }
    stop();
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
