/*
 * bench_engine.c -- `strata-bench engine`: arguments and the top-level run.
 * The workload, the operations and the output format are described in
 * bench_engine.h; the last line of output is exactly
 *   engine/rocksdb ratios: fillrandom=X readrandom=Y seekrandom=Z space=W
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/bench_engine.h"
#include "engine/engine.h"

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
        while (op < OP_COUNT && strcmp(t, bench_eng_op_names[op]))
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
    if (cfg.own_dir && !cfg.keep) bench_eng_set_doomed_dir(cfg.dir);
    bench_eng_catch_fatal_signals();
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
    const bench_backend *be[2] = {&bench_eng_strata, &bench_eng_rocksdb};
    bench_result res;
    memset(&res, 0, sizeof res);
    int rc = 0;
    for (uint64_t rep = 0; rep < cfg.repeat && rc == 0; rep++)
        for (int g = 0; g < 2 && rc == 0; g++)
            for (int bi = 0; bi < 2 && rc == 0; bi++)
                if (cfg.run[bi])
                    rc = bench_eng_run_group(bi, be[bi], &cfg, g ? "seq" : "random",
                                             g ? seq_group : random_group, &res);
    if (cfg.own_dir && !cfg.keep) bench_eng_rm_tree(cfg.dir);
    if (rc < 0) return 1;
    bench_eng_print_summary(&cfg, &res);
    return 0;
}
