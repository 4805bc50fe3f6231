/*
 * bench_engine.c -- `strata-bench engine`: db_bench-style operations run on
 * strata's engine (src/engine/engine.h, linked in) and on RocksDB (Debian's
 * librocksdb, C API) in one process, so that both see the same machine, the
 * same moment and the same data.
 *
 * Workload (deterministic; the same bytes go to both engines):
 *   keys    16 bytes, "%016llu" of 2*i for key number i in [0, num). Odd
 *           numbers 2*i+1 are never written: readmissing looks those up, so
 *           they fall between live keys and only a bloom filter saves a read.
 *   values  value_size bytes cut from a 1 MiB buffer built as db_bench's
 *           RandomGenerator does: chunks of 100 bytes whose first half is
 *           random printable characters and whose second half repeats it, so
 *           values compress to about half.
 *   random  splitmix64 with a fixed seed per operation (--seed changes it).
 *
 * Operations, each on a fresh or well-defined state (as db_bench runs them):
 *   fillrandom   fresh db, num puts of random key numbers (duplicates happen)
 *   overwrite    the fillrandom db, num more random puts
 *   fillseq      fresh db, num puts in key order
 *   compact      (the fillseq db) flush + full compaction; timed for
 *                information, then space = bytes of every file in the db dir
 *   readrandom   reads random present keys from that compacted db
 *   readmissing  reads random absent keys (between present ones)
 *   seekrandom   seeks a random present key, then 100 nexts; one iterator for
 *                the whole run, as db_bench does
 * Every answer is checked, so a broken engine fails the run instead of
 * looking fast: readrandom compares each value with the one fillseq wrote,
 * readmissing must find nothing, seekrandom checks where seeks land.
 * The two groups (random fill, sequential fill + reads) run engine by engine,
 * group by group (strata, rocksdb, strata, rocksdb), each db closed and
 * removed before the next one opens, so that no background work of one
 * overlaps the other's measurement. --repeat R does all of it R times and
 * keeps each engine's best figure per operation (noise only ever slows).
 *
 * Settings shared by both engines (bench_options): write buffer size and
 * block cache size (strata's defaults unless given), at most three memtables,
 * block size 4096, zstd level 1 on every level, bloom filter 10 bits per key,
 * strata's default level-0 triggers, level sizes and target file size, WAL
 * on without sync. Each write is one put in its own batch, handed to the OS
 * with one write() by both.
 *
 * The last line of output is exactly
 *   engine/rocksdb ratios: fillrandom=X readrandom=Y seekrandom=Z space=W
 * (throughput ratios strata/rocksdb; space = strata bytes / rocksdb bytes).
 * The table above it also gives CPU time per operation (every thread of the
 * process, so background flushes and compactions count where they happen)
 * and rocksdb/strata of that: on a shared, noisy machine CPU time moves
 * less than wall time. For both ratios, above 1 means strata is ahead.
 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rocksdb/c.h>

#include "bench/bench.h"
#include "engine/engine.h"

#define KEY_LEN 16
#define SEEK_NEXTS 100
#define GEN_BYTES (1 << 20)
/* Seeds of the fills' value generators; op_read recomputes fillseq's. */
#define FILLRANDOM_SEED 1
#define OVERWRITE_SEED 2
#define FILLSEQ_SEED 3

enum {
    OP_FILLRANDOM,
    OP_OVERWRITE,
    OP_FILLSEQ,
    OP_COMPACT,
    OP_READRANDOM,
    OP_READMISSING,
    OP_SEEKRANDOM,
    OP_COUNT
};
static const char *const op_names[OP_COUNT] = {"fillrandom", "overwrite",   "fillseq",   "compact",
                                               "readrandom", "readmissing", "seekrandom"};

typedef struct bench_cfg {
    uint64_t num, reads, seeks, seed;
    uint64_t repeat; /* runs of every group; the best result counts */
    size_t value_size, cache_size, write_buffer_size;
    char dir[512];
    int own_dir; /* dir was created here and is removed at the end */
    int keep;    /* --keep: leave the dbs on disk for inspection */
    int run[2];  /* [0] strata, [1] rocksdb */
    int want[OP_COUNT];
} bench_cfg;

/* One engine behind a small table of functions. Every function returns 0 on
 * success or -1 after printing what went wrong. */
typedef struct backend {
    const char *name;
    void *(*open)(const char *dir, const bench_cfg *cfg);
    int (*put)(void *db, const char *k, const char *v, size_t vl);
    /* *found = 1 when present; then the value must be `expect` (vl bytes),
     * or -1 is returned. */
    int (*get)(void *db, const char *k, const char *expect, size_t vl, int *found);
    void *(*iter_new)(void *db);
    void (*iter_seek)(void *it, const char *k, size_t kl);
    int (*iter_valid)(void *it);
    void (*iter_next)(void *it);
    const char *(*iter_key)(void *it, size_t *kl);
    int (*iter_done)(void *it); /* frees it; -1 when the iterator hit an error */
    int (*flush_compact)(void *db);
    void (*print_stats)(void *db); /* the engine's own counters, one line */
    int (*close)(void *db);
} backend;

/* Results, [backend][op]: operations per second (0: not run). */
typedef struct bench_result {
    double ops_per_sec[2][OP_COUNT];
    double cpu_us[2][OP_COUNT]; /* CPU time per operation, all threads */
    double seconds[2][OP_COUNT];
    uint64_t space[2];
} bench_result;

/* ---- Deterministic data ------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef struct value_gen {
    char *data;
    size_t pos;
} value_gen;

/* Fills the 1 MiB buffer: per 100-byte chunk, 50 random printable bytes
 * followed by the same 50 again (compressible to about half). */
static int value_gen_init(value_gen *g, uint64_t seed)
{
    g->data = malloc(GEN_BYTES);
    g->pos = 0;
    if (!g->data) return -1;
    uint64_t s = seed;
    for (size_t off = 0; off < GEN_BYTES; off += 100) {
        size_t n = GEN_BYTES - off < 100 ? GEN_BYTES - off : 100;
        for (size_t i = 0; i < n; i++)
            g->data[off + i] = i < 50 ? (char)(' ' + splitmix(&s) % 95) : g->data[off + i - 50];
    }
    return 0;
}

/* REQUIRES: len <= GEN_BYTES. Returns a pointer into the buffer. */
static const char *value_gen_next(value_gen *g, size_t len)
{
    if (g->pos + len > GEN_BYTES) g->pos = 0;
    const char *p = g->data + g->pos;
    g->pos += len;
    return p;
}

/* "%016llu" without printf, whose cost would otherwise dilute both engines'
 * numbers alike. */
static void make_key(char *buf, uint64_t n)
{
    for (int i = KEY_LEN - 1; i >= 0; i--, n /= 10)
        buf[i] = (char)('0' + n % 10);
}

/* The value fillseq stored for key number i: the generator hands out
 * consecutive slices and restarts at 0 when a slice would not fit. */
static const char *fillseq_value(const value_gen *g, uint64_t i, size_t vs)
{
    return g->data + (i % (GEN_BYTES / vs)) * vs;
}

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- strata's engine --------------------------------------------------- */

typedef struct strata_db {
    eng_db *db;
    eng_batch *batch;
} strata_db;

/* The settings of both engines: strata's defaults with the bench's block
 * size, compression, bloom filter and sizes; rocks_set_options() copies them
 * so that a change of strata's defaults cannot make the comparison unfair. */
static void bench_options(const bench_cfg *cfg, eng_options *o)
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
    bench_options(cfg, &o);
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

static int value_matches(const char *engine, const char *k, const char *v, size_t vlen,
                         const char *expect, size_t vl)
{
    if (vlen == vl && memcmp(v, expect, vl) == 0) return 0;
    fprintf(stderr, "%s: key %.16s has a wrong value (%zu bytes, expected %zu)\n", engine, k, vlen,
            vl);
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
        rc = value_matches("strata", k, v, vlen, expect, vl);
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

static const backend strata_backend = {
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

/* ---- RocksDB ----------------------------------------------------------- */

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

/* The settings bench_options() gives strata, in RocksDB's terms. */
static void rocks_set_options(rocks_db *r, const bench_cfg *cfg)
{
    eng_options o;
    bench_options(cfg, &o);
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
    int rc = v ? value_matches("rocksdb", k, v, vlen, expect, vl) : 0;
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

static const backend rocks_backend = {
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

/* ---- Operations -------------------------------------------------------- */

/* num puts; key numbers in order (seq) or drawn from `seed`. */
static int op_fill(const backend *be, void *db, const bench_cfg *cfg, int seq, uint64_t seed)
{
    value_gen g;
    if (value_gen_init(&g, cfg->seed * 31 + seed) < 0) return -1;
    uint64_t rnd = cfg->seed + seed;
    char key[KEY_LEN];
    int rc = 0;
    for (uint64_t i = 0; i < cfg->num && rc == 0; i++) {
        uint64_t n = seq ? i : splitmix(&rnd) % cfg->num;
        make_key(key, 2 * n);
        rc = be->put(db, key, value_gen_next(&g, cfg->value_size), cfg->value_size);
    }
    free(g.data);
    return rc;
}

/* cfg->reads gets of present (missing = 0) or absent keys of the fillseq db;
 * checks every answer. */
static int op_read(const backend *be, void *db, const bench_cfg *cfg, int missing)
{
    value_gen g;
    if (value_gen_init(&g, cfg->seed * 31 + FILLSEQ_SEED) < 0) return -1;
    uint64_t rnd = cfg->seed + 4 + missing, found_total = 0;
    char key[KEY_LEN];
    int rc = 0;
    for (uint64_t i = 0; i < cfg->reads && rc == 0; i++) {
        uint64_t n = splitmix(&rnd) % cfg->num;
        make_key(key, 2 * n + (missing ? 1 : 0));
        int found;
        rc = be->get(db, key, fillseq_value(&g, n, cfg->value_size), cfg->value_size, &found);
        found_total += found;
    }
    free(g.data);
    uint64_t expect = missing ? 0 : cfg->reads;
    if (rc < 0 || found_total == expect) return rc;
    fprintf(stderr, "%s: %s found %" PRIu64 " of %" PRIu64 " keys, expected %" PRIu64 "\n",
            be->name, missing ? "readmissing" : "readrandom", found_total, cfg->reads, expect);
    return -1;
}

/* Checks one seek: lands on the key sought, then keys ascend by 2 (every even
 * key number below num is present after fillseq). */
static int check_seek_key(const backend *be, void *it, uint64_t expect)
{
    size_t kl;
    const char *k = be->iter_key(it, &kl);
    char want[KEY_LEN];
    make_key(want, expect);
    if (kl == KEY_LEN && memcmp(k, want, KEY_LEN) == 0) return 0;
    fprintf(stderr, "%s: seekrandom: got key %.*s, expected %.16s\n", be->name, (int)kl, k, want);
    return -1;
}

static int op_seek(const backend *be, void *db, const bench_cfg *cfg)
{
    void *it = be->iter_new(db);
    if (!it) return -1;
    uint64_t rnd = cfg->seed + 6;
    char key[KEY_LEN];
    int rc = 0;
    for (uint64_t i = 0; i < cfg->seeks && rc == 0; i++) {
        uint64_t n = splitmix(&rnd) % cfg->num;
        make_key(key, 2 * n);
        be->iter_seek(it, key, KEY_LEN);
        for (int j = 0; j <= SEEK_NEXTS && rc == 0 && n + j < cfg->num; j++) {
            if (!be->iter_valid(it)) {
                fprintf(stderr, "%s: seekrandom: iterator ended early\n", be->name);
                rc = -1;
                break;
            }
            /* Checking every key costs the same on both engines; check a few. */
            if (j == 0 || j == SEEK_NEXTS) rc = check_seek_key(be, it, 2 * (n + j));
            if (j < SEEK_NEXTS) be->iter_next(it);
        }
    }
    if (be->iter_done(it) < 0) rc = -1;
    return rc;
}

/* ---- Running ----------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* What a ^C or SIGTERM must not leave behind (a 1M-key run writes hundreds
 * of MB): the run's own temporary directory, or the db directory in use when
 * the user gave --dir. Set only while no signal handler can run it halfway
 * (sigprocmask around the update). */
static char doomed_dir[640];

/* Async-signal-safe: fork, execve, waitpid and _exit only. */
static void on_fatal_signal(int sig)
{
    if (doomed_dir[0]) {
        pid_t p = fork();
        if (p == 0) {
            char *const argv[] = {"rm", "-rf", doomed_dir, NULL};
            execve("/bin/rm", argv, environ);
            _exit(127);
        }
        if (p > 0) waitpid(p, NULL, 0);
    }
    _exit(128 + sig);
}

static void set_doomed_dir(const char *path)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    snprintf(doomed_dir, sizeof doomed_dir, "%s", path);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

static void catch_fatal_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

static uint64_t du_acc;
static int du_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    if (flag == FTW_F) du_acc += (uint64_t)sb->st_size;
    return 0;
}

/* Bytes of every regular file under path (table files, logs, manifest ...),
 * counted the same way for both engines. */
static uint64_t dir_bytes(const char *path)
{
    du_acc = 0;
    nftw(path, du_entry, 16, FTW_PHYS);
    return du_acc;
}

static void report(const char *engine, int op, double secs, double cpu, uint64_t ops,
                   const bench_cfg *cfg)
{
    double mb = ops * (KEY_LEN + cfg->value_size) / 1048576.0;
    if (op == OP_COMPACT)
        printf("  %-8s %-12s %10.3f s  (cpu %.3f s)\n", engine, op_names[op], secs, cpu);
    else
        printf("  %-8s %-12s %12.0f ops/s %8.1f MB/s %8.2f cpu-us/op  (%" PRIu64 " ops, %.2f s)\n",
               engine, op_names[op], ops / secs, mb / secs, cpu * 1e6 / ops, ops, secs);
    fflush(stdout);
}

/* CPU seconds of this process, every thread (the engines' background
 * threads included): less noisy than wall time on a shared machine. */
static double cpu_sec(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int run_op(const backend *be, void *db, const bench_cfg *cfg, int op)
{
    switch (op) {
    case OP_FILLRANDOM:
        return op_fill(be, db, cfg, 0, FILLRANDOM_SEED);
    case OP_OVERWRITE:
        return op_fill(be, db, cfg, 0, OVERWRITE_SEED);
    case OP_FILLSEQ:
        return op_fill(be, db, cfg, 1, FILLSEQ_SEED);
    case OP_COMPACT:
        return be->flush_compact(db);
    case OP_READRANDOM:
        return op_read(be, db, cfg, 0);
    case OP_READMISSING:
        return op_read(be, db, cfg, 1);
    default:
        return op_seek(be, db, cfg);
    }
}

/* Runs op (fill, read ...) and records its throughput and CPU time; an
 * unwanted op just prepares the state for the next ones. */
static int timed(int bi, const backend *be, void *db, const bench_cfg *cfg, int op,
                 bench_result *res)
{
    uint64_t ops = op == OP_READRANDOM || op == OP_READMISSING ? cfg->reads
                   : op == OP_SEEKRANDOM                       ? cfg->seeks
                                                               : cfg->num;
    double t0 = now_sec(), c0 = cpu_sec();
    if (run_op(be, db, cfg, op) < 0) {
        fprintf(stderr, "%s: %s failed\n", be->name, op_names[op]);
        return -1;
    }
    double secs = now_sec() - t0, cpu = cpu_sec() - c0;
    if (secs <= 0) secs = 1e-9;
    if (cfg->want[op]) {
        /* With --repeat, the best of the runs counts: noise only slows. */
        double cpu_us = ops ? cpu * 1e6 / ops : 0;
        if (ops / secs > res->ops_per_sec[bi][op]) res->ops_per_sec[bi][op] = ops / secs;
        if (!res->cpu_us[bi][op] || cpu_us < res->cpu_us[bi][op]) res->cpu_us[bi][op] = cpu_us;
        if (!res->seconds[bi][op] || secs < res->seconds[bi][op]) res->seconds[bi][op] = secs;
        report(be->name, op, secs, cpu, ops, cfg);
    }
    return 0;
}

static int is_read(int op)
{
    return op == OP_READRANDOM || op == OP_READMISSING || op == OP_SEEKRANDOM;
}

/* One group of operations on a fresh db in its own directory: `ops` in order
 * (-1 ends the list); an op runs when wanted or when a later wanted op
 * depends on the state it leaves. */
static int run_group(int bi, const backend *be, const bench_cfg *cfg, const char *tag,
                     const int *ops, bench_result *res)
{
    int last = -1;
    for (int i = 0; ops[i] >= 0; i++)
        if (cfg->want[ops[i]]) last = i;
    if (last < 0) return 0;
    char dir[640];
    snprintf(dir, sizeof dir, "%s/%s-%s", cfg->dir, be->name, tag);
    if (!cfg->own_dir && !cfg->keep) set_doomed_dir(dir);
    rm_tree(dir);
    void *db = be->open(dir, cfg);
    if (!db) return -1;
    int rc = 0;
    for (int i = 0; i <= last && rc == 0; i++) {
        if (!cfg->want[ops[i]] && is_read(ops[i])) continue; /* reads leave no state */
        rc = timed(bi, be, db, cfg, ops[i], res);
        if (rc == 0 && ops[i] == OP_COMPACT) {
            res->space[bi] = dir_bytes(dir);
            printf("  %-8s %-12s %12" PRIu64 " bytes on disk after full compaction\n", be->name,
                   "space", res->space[bi]);
        }
    }
    if (rc == 0) be->print_stats(db);
    if (be->close(db) < 0) rc = -1;
    if (!cfg->keep) rm_tree(dir);
    return rc;
}

static double ratio(const bench_result *r, int op)
{
    return r->ops_per_sec[1][op] > 0 ? r->ops_per_sec[0][op] / r->ops_per_sec[1][op] : 0;
}

static void print_summary(const bench_cfg *cfg, const bench_result *r)
{
    if (!cfg->run[0] || !cfg->run[1]) return; /* one engine: its lines above say it all */
    printf("\n%-12s %14s %14s %8s %12s %12s %8s\n", "operation", "strata ops/s", "rocksdb ops/s",
           "ratio", "strata cpu", "rocksdb cpu", "ratio");
    for (int op = 0; op < OP_COUNT; op++) {
        if (!cfg->want[op] || op == OP_COMPACT) continue;
        double cs = r->cpu_us[0][op], cr = r->cpu_us[1][op];
        printf("%-12s %14.0f %14.0f %8.2f %9.2f us %9.2f us %8.2f\n", op_names[op],
               r->ops_per_sec[0][op], r->ops_per_sec[1][op], ratio(r, op), cs, cr,
               cs > 0 ? cr / cs : 0);
    }
    if (cfg->want[OP_COMPACT]) {
        printf("%-12s %14.2f %14.2f %8.2f  (seconds; ratio rocksdb/strata)\n", "compact",
               r->seconds[0][OP_COMPACT], r->seconds[1][OP_COMPACT],
               r->seconds[0][OP_COMPACT] > 0 ? r->seconds[1][OP_COMPACT] / r->seconds[0][OP_COMPACT]
                                             : 0);
        printf("%-12s %14" PRIu64 " %14" PRIu64 " %8.3f  (bytes; ratio strata/rocksdb)\n", "space",
               r->space[0], r->space[1], r->space[1] ? (double)r->space[0] / r->space[1] : 0);
    }
    printf("engine/rocksdb ratios: fillrandom=%.2f readrandom=%.2f seekrandom=%.2f space=%.3f\n",
           ratio(r, OP_FILLRANDOM), ratio(r, OP_READRANDOM), ratio(r, OP_SEEKRANDOM),
           r->space[1] ? (double)r->space[0] / r->space[1] : 0);
}

/* ---- Arguments --------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: strata-bench engine [--num N] [--value-size B] [--compare rocksdb|none]\n"
            "         [--cache-size BYTES] [--write-buffer-size BYTES] [--dir D]\n"
            "         [--reads N] [--seeks N] [--seed S] [--only strata|rocksdb] [--keep 0|1]\n"
            "         [--repeat R]\n"
            "         [--benchmarks fillrandom,overwrite,fillseq,compact,readrandom,"
            "readmissing,seekrandom]\n"
            "  sizes take k/m/g suffixes; --seeks defaults to num/10 (each seek + %d nexts);\n"
            "  --repeat runs everything R times, engines alternating, and keeps the best\n",
            SEEK_NEXTS);
}

/* Parses a count or a size with an optional k/m/g suffix (powers of 1024).
 * Returns 0, or -1 when s is not such a number or is below min. */
static int parse_size(const char *s, uint64_t min, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-') return -1;
    int shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'm' || *end == 'M')
        shift = 20;
    else if (*end == 'g' || *end == 'G')
        shift = 30;
    if (shift) end++;
    if (*end || (shift && v > (~0ull >> shift))) return -1;
    *out = (uint64_t)v << shift;
    return *out < min ? -1 : 0;
}

static int parse_benchmarks(const char *list, bench_cfg *cfg)
{
    memset(cfg->want, 0, sizeof cfg->want);
    char *copy = strdup(list), *save = NULL;
    int rc = copy ? 0 : -1;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t && rc == 0;
         t = strtok_r(NULL, ",", &save)) {
        int op = 0;
        while (op < OP_COUNT && strcmp(t, op_names[op]))
            op++;
        if (op == OP_COUNT) {
            fprintf(stderr, "strata-bench engine: unknown benchmark '%s'\n", t);
            rc = -1;
        } else {
            cfg->want[op] = 1;
        }
    }
    free(copy);
    return rc;
}

static int parse_engines(bench_cfg *cfg, const char *name, const char *val)
{
    if (!strcmp(name, "--compare") && (!strcmp(val, "rocksdb") || !strcmp(val, "none"))) {
        cfg->run[1] = !strcmp(val, "rocksdb");
        return 0;
    }
    if (!strcmp(name, "--only") && (!strcmp(val, "strata") || !strcmp(val, "rocksdb"))) {
        cfg->run[0] = !strcmp(val, "strata");
        cfg->run[1] = !cfg->run[0];
        return 0;
    }
    return -1;
}

/* Returns 0, or -1 after printing why. */
static int parse_one(bench_cfg *cfg, const char *name, const char *val, uint64_t *seeks)
{
    uint64_t v = 0;
    int rc = -1;
    if (!strcmp(name, "--compare") || !strcmp(name, "--only")) {
        rc = parse_engines(cfg, name, val);
    } else if (!strcmp(name, "--dir")) {
        rc = strlen(val) < 200 ? 0 : -1;
        if (rc == 0) snprintf(cfg->dir, sizeof cfg->dir, "%s", val);
    } else if (!strcmp(name, "--benchmarks")) {
        return parse_benchmarks(val, cfg);
    } else if (!strcmp(name, "--value-size")) {
        rc = parse_size(val, 1, &v) == 0 && v <= GEN_BYTES / 2 ? 0 : -1;
        if (rc == 0) cfg->value_size = v;
    } else if (!strcmp(name, "--num")) {
        rc = parse_size(val, 1, &cfg->num);
    } else if (!strcmp(name, "--reads")) {
        rc = parse_size(val, 0, &cfg->reads);
    } else if (!strcmp(name, "--seeks")) {
        rc = parse_size(val, 0, seeks);
    } else if (!strcmp(name, "--repeat")) {
        rc = parse_size(val, 1, &cfg->repeat) == 0 && cfg->repeat <= 100 ? 0 : -1;
    } else if (!strcmp(name, "--keep")) {
        rc = !strcmp(val, "1") || !strcmp(val, "0") ? 0 : -1;
        cfg->keep = !strcmp(val, "1");
    } else if (!strcmp(name, "--seed")) {
        rc = parse_size(val, 0, &cfg->seed);
    } else if (!strcmp(name, "--cache-size")) {
        rc = parse_size(val, 64 << 10, &v);
        if (rc == 0) cfg->cache_size = v;
    } else if (!strcmp(name, "--write-buffer-size")) {
        rc = parse_size(val, 64 << 10, &v);
        if (rc == 0) cfg->write_buffer_size = v;
    } else {
        fprintf(stderr, "strata-bench engine: unknown option '%s'\n", name);
        return -1;
    }
    if (rc < 0) fprintf(stderr, "strata-bench engine: bad value '%s' for %s\n", val, name);
    return rc;
}

static int parse_args(int argc, char **argv, bench_cfg *cfg)
{
    eng_options defaults;
    eng_options_init(&defaults);
    memset(cfg, 0, sizeof *cfg);
    cfg->num = 1000000;
    cfg->reads = UINT64_MAX;
    cfg->value_size = 200;
    cfg->repeat = 1;
    cfg->cache_size = defaults.cache_size;
    cfg->write_buffer_size = defaults.write_buffer_size;
    cfg->run[0] = cfg->run[1] = 1;
    for (int op = 0; op < OP_COUNT; op++)
        cfg->want[op] = 1;
    uint64_t seeks = UINT64_MAX;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return -1;
        if (i + 1 == argc) {
            fprintf(stderr, "strata-bench engine: %s needs a value\n", argv[i]);
            return -1;
        }
        if (parse_one(cfg, argv[i], argv[i + 1], &seeks) < 0) return -1;
    }
    if (cfg->reads == UINT64_MAX) cfg->reads = cfg->num;
    cfg->seeks = seeks == UINT64_MAX ? (cfg->num / 10 ? cfg->num / 10 : 1) : seeks;
    return 0;
}

/* Creates cfg->dir: the one given, or a fresh one under $TMPDIR (mkdir
 * fails on a name that exists, so the pid and a counter make it unique). */
static int make_dir(bench_cfg *cfg)
{
    if (cfg->dir[0]) {
        if (mkdir(cfg->dir, 0755) == 0 || errno == EEXIST) return 0;
    } else {
        const char *tmp = getenv("TMPDIR");
        for (int i = 0; i < 1000; i++) {
            snprintf(cfg->dir, sizeof cfg->dir, "%s/strata-bench-engine-%d-%d",
                     tmp && *tmp ? tmp : "/tmp", (int)getpid(), i);
            if (mkdir(cfg->dir, 0700) == 0) {
                cfg->own_dir = 1;
                return 0;
            }
            if (errno != EEXIST) break;
        }
    }
    fprintf(stderr, "strata-bench engine: mkdir %s: %s\n", cfg->dir, strerror(errno));
    return -1;
}

int bench_engine_main(int argc, char **argv)
{
    bench_cfg cfg;
    if (parse_args(argc, argv, &cfg) < 0) {
        usage();
        return 2;
    }
    if (make_dir(&cfg) < 0) return 1;
    if (cfg.own_dir && !cfg.keep) set_doomed_dir(cfg.dir);
    catch_fatal_signals();
    printf("strata-bench engine: num=%" PRIu64 " key=%d value=%zu reads=%" PRIu64 " seeks=%" PRIu64
           "x%d cache=%zu write-buffer=%zu dir=%s\n",
           cfg.num, KEY_LEN, cfg.value_size, cfg.reads, cfg.seeks, SEEK_NEXTS, cfg.cache_size,
           cfg.write_buffer_size, cfg.dir);
    static const int random_group[] = {OP_FILLRANDOM, OP_OVERWRITE, -1};
    static const int seq_group[] = {OP_FILLSEQ,     OP_COMPACT,    OP_READRANDOM,
                                    OP_READMISSING, OP_SEEKRANDOM, -1};
    /* The reads need the compacted fillseq db even when fillseq is not timed. */
    if (cfg.want[OP_READRANDOM] || cfg.want[OP_READMISSING] || cfg.want[OP_SEEKRANDOM])
        cfg.want[OP_COMPACT] = 1;
    const backend *be[2] = {&strata_backend, &rocks_backend};
    bench_result res;
    memset(&res, 0, sizeof res);
    int rc = 0;
    for (uint64_t rep = 0; rep < cfg.repeat && rc == 0; rep++)
        for (int g = 0; g < 2 && rc == 0; g++)
            for (int bi = 0; bi < 2 && rc == 0; bi++)
                if (cfg.run[bi])
                    rc = run_group(bi, be[bi], &cfg, g ? "seq" : "random",
                                   g ? seq_group : random_group, &res);
    if (cfg.own_dir && !cfg.keep) rm_tree(cfg.dir);
    if (rc < 0) return 1;
    print_summary(&cfg, &res);
    return 0;
}
