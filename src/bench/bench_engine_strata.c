/*
 * bench_engine_strata.c -- strata's engine (src/engine/engine.h) as a
 * backend of `strata-bench engine` (bench_engine.h): one reusable batch per
 * put, NULL snapshots, flush + full-range compaction for OP_COMPACT. Also
 * the settings both engines share (bench_eng_options).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_engine.h"
#include "engine/engine.h"

typedef struct strata_db {
    eng_db *db;
    eng_batch *batch;
} strata_db;

void bench_eng_options(const bench_cfg *cfg, eng_options *o)
{
    eng_options_init(o);
    o->write_buffer_size = cfg->write_buffer_size;
    o->cache_size = cfg->cache_size;
    o->block_size = 4096;
    o->compression_level = 1;
    o->bloom_bits_per_key = 10;
    o->sync_mode = ENG_SYNC_NO;
    o->create_if_missing = 1;
}

static void *strata_open(const char *dir, const bench_cfg *cfg)
{
    eng_options o;
    bench_eng_options(cfg, &o);
    strata_db *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    eng_status st = eng_open(dir, &o, &s->db);
    if (st != ENG_OK) {
        fprintf(stderr, "strata: open %s: %s (%s)\n", dir, eng_status_str(st), eng_last_error());
        free(s);
        return NULL;
    }
    s->batch = eng_batch_new(0);
    return s;
}

static int strata_put(void *db, const char *k, const char *v, size_t vl)
{
    strata_db *s = db;
    eng_batch_clear(s->batch);
    eng_batch_put(s->batch, k, KEY_LEN, v, vl);
    eng_status st = eng_write(s->db, s->batch, 0);
    if (st == ENG_OK) return 0;
    fprintf(stderr, "strata: write: %s (%s)\n", eng_status_str(st), eng_last_error());
    return -1;
}
static int strata_get(void *db, const char *k, const char *expect, size_t vl, int *found)
{
    strata_db *s = db;
    char *v = NULL;
    size_t vlen = 0;
    eng_status st = eng_get(s->db, NULL, k, KEY_LEN, &v, &vlen);
    *found = st == ENG_OK;
    int rc = 0;
    if (st == ENG_OK) {
        rc = bench_eng_value_matches("strata", k, v, vlen, expect, vl);
        eng_free(v);
    } else if (st != ENG_NOTFOUND) {
        fprintf(stderr, "strata: get: %s (%s)\n", eng_status_str(st), eng_last_error());
        rc = -1;
    }
    return rc;
}

static void *strata_iter_new(void *db)
{
    return eng_iter_new(((strata_db *)db)->db, NULL, NULL);
}
static void strata_iter_seek(void *it, const char *k, size_t kl)
{
    eng_iter_seek(it, k, kl);
}
static int strata_iter_valid(void *it)
{
    return eng_iter_valid(it);
}
static void strata_iter_next(void *it)
{
    eng_iter_next(it);
}
static const char *strata_iter_key(void *it, size_t *kl)
{
    return eng_iter_key(it, kl);
}

static int strata_iter_done(void *it)
{
    eng_status st = eng_iter_status(it);
    eng_iter_free(it);
    if (st == ENG_OK) return 0;
    fprintf(stderr, "strata: iterator: %s (%s)\n", eng_status_str(st), eng_last_error());
    return -1;
}

static int strata_flush_compact(void *db)
{
    strata_db *s = db;
    eng_status st = eng_flush(s->db);
    if (st == ENG_OK) st = eng_compact_range(s->db, NULL, 0, NULL, 0);
    if (st == ENG_OK) return 0;
    fprintf(stderr, "strata: flush/compact: %s (%s)\n", eng_status_str(st), eng_last_error());
    return -1;
}

static int strata_close(void *db)
{
    strata_db *s = db;
    eng_batch_free(s->batch);
    eng_status st = eng_close(s->db);
    free(s);
    if (st == ENG_OK) return 0;
    fprintf(stderr, "strata: close: %s (%s)\n", eng_status_str(st), eng_last_error());
    return -1;
}

static void print_strata_stats(void *db)
{
    eng_stats st;
    eng_get_stats(((strata_db *)db)->db, &st);
    double user = st.bytes_written_user ? (double)st.bytes_written_user : 1;
    printf("  strata   stats: flushes=%" PRIu64 " compactions=%" PRIu64
           " write-amp=%.2f stalls=%" PRIu64 "+%" PRIu64 " (%.2f s) cache hit/miss=%" PRIu64
           "/%" PRIu64 "\n",
           st.flushes, st.compactions,
           (st.bytes_written_log + st.bytes_written_flush + st.bytes_written_compaction) / user,
           st.stall_slowdowns, st.stall_stops, st.stall_micros / 1e6, st.cache_hits,
           st.cache_misses);
}

const bench_backend bench_eng_strata = {
    .name = "strata",
    .open = strata_open,
    .put = strata_put,
    .get = strata_get,
    .iter_new = strata_iter_new,
    .iter_seek = strata_iter_seek,
    .iter_valid = strata_iter_valid,
    .iter_next = strata_iter_next,
    .iter_key = strata_iter_key,
    .iter_done = strata_iter_done,
    .flush_compact = strata_flush_compact,
    .print_stats = print_strata_stats,
    .close = strata_close,
};
