/*
 * bench_engine_rocksdb.c -- RocksDB (Debian's librocksdb, C API) as a
 * backend of `strata-bench engine` (bench_engine.h), configured with the
 * settings bench_eng_options() gives strata.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rocksdb/c.h>

#include "bench/bench_engine.h"
#include "engine/engine.h"

typedef struct rocks_db {
    rocksdb_t *db;
    rocksdb_options_t *opts;
    rocksdb_block_based_table_options_t *table;
    rocksdb_cache_t *cache;
    rocksdb_writeoptions_t *wo;
    rocksdb_readoptions_t *ro;
} rocks_db;

static int rocks_failed(const char *what, char *err)
{
    if (!err) return 0;
    fprintf(stderr, "rocksdb: %s: %s\n", what, err);
    rocksdb_free(err);
    return -1;
}

/* The settings bench_eng_options() gives strata, in RocksDB's terms. */
static void rocks_set_options(rocks_db *r, const bench_cfg *cfg)
{
    eng_options o;
    bench_eng_options(cfg, &o);
    r->opts = rocksdb_options_create();
    r->table = rocksdb_block_based_options_create();
    r->cache = rocksdb_cache_create_lru(o.cache_size);
    rocksdb_block_based_options_set_block_cache(r->table, r->cache);
    rocksdb_block_based_options_set_block_size(r->table, o.block_size);
    if (o.bloom_bits_per_key > 0)
        rocksdb_block_based_options_set_filter_policy(
            r->table, rocksdb_filterpolicy_create_bloom_full(o.bloom_bits_per_key));
    rocksdb_options_set_block_based_table_factory(r->opts, r->table);
    rocksdb_options_set_create_if_missing(r->opts, 1);
    rocksdb_options_set_write_buffer_size(r->opts, o.write_buffer_size);
    /* strata keeps up to two frozen memtables besides the active one before
     * writers wait (DB_MAX_IMM); give RocksDB the same memory budget. */
    rocksdb_options_set_max_write_buffer_number(r->opts, 3);
    rocksdb_options_set_compression(r->opts, o.compression_level ? rocksdb_zstd_compression
                                                                 : rocksdb_no_compression);
    rocksdb_options_set_compression_options(r->opts, -14, o.compression_level, 0, 0);
    rocksdb_options_set_level0_file_num_compaction_trigger(r->opts, o.l0_compaction_trigger);
    rocksdb_options_set_level0_slowdown_writes_trigger(r->opts, o.l0_slowdown_trigger);
    rocksdb_options_set_level0_stop_writes_trigger(r->opts, o.l0_stop_trigger);
    rocksdb_options_set_max_bytes_for_level_base(r->opts, o.max_bytes_level_base);
    rocksdb_options_set_max_bytes_for_level_multiplier(r->opts, o.level_size_multiplier);
    rocksdb_options_set_target_file_size_base(r->opts, o.target_file_size);
    rocksdb_options_set_info_log_level(r->opts, 2 /* WARN */);
    r->wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(r->wo, 0);
    r->ro = rocksdb_readoptions_create();
}

static void rocks_free(rocks_db *r)
{
    if (r->db) rocksdb_close(r->db);
    rocksdb_writeoptions_destroy(r->wo);
    rocksdb_readoptions_destroy(r->ro);
    rocksdb_options_destroy(r->opts);
    rocksdb_block_based_options_destroy(r->table);
    rocksdb_cache_destroy(r->cache);
    free(r);
}

static void *rocks_open(const char *dir, const bench_cfg *cfg)
{
    rocks_db *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    rocks_set_options(r, cfg);
    char *err = NULL;
    r->db = rocksdb_open(r->opts, dir, &err);
    if (rocks_failed("open", err)) {
        rocks_free(r);
        return NULL;
    }
    return r;
}

static int rocks_put(void *db, const char *k, const char *v, size_t vl)
{
    rocks_db *r = db;
    char *err = NULL;
    rocksdb_put(r->db, r->wo, k, KEY_LEN, v, vl, &err);
    return rocks_failed("put", err);
}

static int rocks_get(void *db, const char *k, const char *expect, size_t vl, int *found)
{
    rocks_db *r = db;
    char *err = NULL;
    size_t vlen = 0;
    char *v = rocksdb_get(r->db, r->ro, k, KEY_LEN, &vlen, &err);
    *found = v != NULL;
    int rc = v ? bench_eng_value_matches("rocksdb", k, v, vlen, expect, vl) : 0;
    rocksdb_free(v);
    return rocks_failed("get", err) < 0 ? -1 : rc;
}

static void *rocks_iter_new(void *db)
{
    rocks_db *r = db;
    return rocksdb_create_iterator(r->db, r->ro);
}
static void rocks_iter_seek(void *it, const char *k, size_t kl)
{
    rocksdb_iter_seek(it, k, kl);
}
static int rocks_iter_valid(void *it)
{
    return rocksdb_iter_valid(it);
}
static void rocks_iter_next(void *it)
{
    rocksdb_iter_next(it);
}
static const char *rocks_iter_key(void *it, size_t *kl)
{
    return rocksdb_iter_key(it, kl);
}

static int rocks_iter_done(void *it)
{
    char *err = NULL;
    rocksdb_iter_get_error(it, &err);
    rocksdb_iter_destroy(it);
    return rocks_failed("iterator", err);
}

static int rocks_flush_compact(void *db)
{
    rocks_db *r = db;
    char *err = NULL;
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    rocksdb_flush(r->db, fo, &err);
    rocksdb_flushoptions_destroy(fo);
    if (rocks_failed("flush", err)) return -1;
    rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
    rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* kForce */);
    rocksdb_compact_range_opt(r->db, co, NULL, 0, NULL, 0);
    rocksdb_compactoptions_destroy(co);
    return 0;
}

static int rocks_close(void *db)
{
    rocks_free(db);
    return 0;
}

/* RocksDB's own account of write stalls, from its "rocksdb.stats" text. */
static void print_rocks_stats(void *db)
{
    char *text = rocksdb_property_value(((rocks_db *)db)->db, "rocksdb.stats");
    const char *line = text ? strstr(text, "Cumulative stall:") : NULL;
    if (line) printf("  rocksdb  stats: %.*s\n", (int)strcspn(line, "\n"), line);
    rocksdb_free(text);
}

const bench_backend bench_eng_rocksdb = {
    .name = "rocksdb",
    .open = rocks_open,
    .put = rocks_put,
    .get = rocks_get,
    .iter_new = rocks_iter_new,
    .iter_seek = rocks_iter_seek,
    .iter_valid = rocks_iter_valid,
    .iter_next = rocks_iter_next,
    .iter_key = rocks_iter_key,
    .iter_done = rocks_iter_done,
    .flush_compact = rocks_flush_compact,
    .print_stats = print_rocks_stats,
    .close = rocks_close,
};
