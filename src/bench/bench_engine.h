/*
 * bench_engine.h -- `strata-bench engine`: db_bench-style operations run on
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
 *
 * Files: bench_engine.c (arguments, main), bench_engine_ops.c (data and the
 * operations), bench_engine_run.c (timing, groups, report),
 * bench_engine_strata.c and bench_engine_rocksdb.c (the two backends).
 * Everything here is private to those files.
 */
#ifndef STRATA_BENCH_ENGINE_H
#define STRATA_BENCH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#define KEY_LEN 16
#define SEEK_NEXTS 100
#define GEN_BYTES (1 << 20)

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
/* Indexed by the OP_ values; the names --benchmarks takes. */
extern const char *const bench_eng_op_names[OP_COUNT];

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
typedef struct bench_backend {
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
} bench_backend;

/* Results, [bench_backend][op]: operations per second (0: not run). */
typedef struct bench_result {
    double ops_per_sec[2][OP_COUNT];
    double cpu_us[2][OP_COUNT]; /* CPU time per operation, all threads */
    double seconds[2][OP_COUNT];
    uint64_t space[2];
} bench_result;

/* The two engines (bench_engine_strata.c, bench_engine_rocksdb.c). */
extern const bench_backend bench_eng_strata;
extern const bench_backend bench_eng_rocksdb;

struct eng_options;
/* Fills *o with the settings both engines run with: strata's defaults with
 * the bench's block size, compression, bloom filter and sizes. The RocksDB
 * backend copies them so that a change of strata's defaults cannot make the
 * comparison unfair. */
void bench_eng_options(const bench_cfg *cfg, struct eng_options *o);

/* bench_engine_ops.c. Returns 0 when v (vlen bytes) equals expect (vl
 * bytes), else -1 after printing which key of `engine` is wrong. */
int bench_eng_value_matches(const char *engine, const char *k, const char *v, size_t vlen,
                            const char *expect, size_t vl);
/* Runs one operation on db, checking every answer. Returns 0 or -1 after
 * printing why. */
int bench_eng_run_op(const bench_backend *be, void *db, const bench_cfg *cfg, int op);

/* bench_engine_run.c. */
/* Removes path and everything under it; errors are ignored. */
void bench_eng_rm_tree(const char *path);
/* Names the directory a ^C or SIGTERM removes ("" for none). Safe against
 * the handler: signals are blocked during the update. */
void bench_eng_set_doomed_dir(const char *path);
/* Installs the handler that removes the doomed directory and exits. */
void bench_eng_catch_fatal_signals(void);
/* One group of operations on a fresh db of backend bi ([0] strata, [1]
 * rocksdb) in cfg->dir/<engine>-<tag>: `ops` in order, -1 ends the list.
 * Records into res. Returns 0, or -1 after printing why. */
int bench_eng_run_group(int bi, const bench_backend *be, const bench_cfg *cfg, const char *tag,
                        const int *ops, bench_result *res);
/* The comparison table and the final `engine/rocksdb ratios:` line (only
 * when both engines ran). */
void bench_eng_print_summary(const bench_cfg *cfg, const bench_result *r);

#endif
