/*
 * bench_engine_run.c -- how `strata-bench engine` runs and reports (see
 * bench_engine.h): each group of operations on a fresh db directory, timed
 * in wall and CPU time, the best of --repeat runs kept, the space a
 * compacted db takes, the cleanup a ^C must not skip, and the summary table
 * with its final ratios line.
 */
#include <inttypes.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench_engine.h"
#include "bench/bench_util.h"

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

void bench_eng_rm_tree(const char *path)
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

void bench_eng_set_doomed_dir(const char *path)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    snprintf(doomed_dir, sizeof doomed_dir, "%s", path);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

void bench_eng_catch_fatal_signals(void)
{
    bench_catch_fatal_signals(on_fatal_signal);
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
        printf("  %-8s %-12s %10.3f s  (cpu %.3f s)\n", engine, bench_eng_op_names[op], secs, cpu);
    else
        printf("  %-8s %-12s %12.0f ops/s %8.1f MB/s %8.2f cpu-us/op  (%" PRIu64 " ops, %.2f s)\n",
               engine, bench_eng_op_names[op], ops / secs, mb / secs, cpu * 1e6 / ops, ops, secs);
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

/* Runs op (fill, read ...) and records its throughput and CPU time; an
 * unwanted op just prepares the state for the next ones. */
static int timed(int bi, const bench_backend *be, void *db, const bench_cfg *cfg, int op,
                 bench_result *res)
{
    uint64_t ops = op == OP_READRANDOM || op == OP_READMISSING ? cfg->reads
                   : op == OP_SEEKRANDOM                       ? cfg->seeks
                                                               : cfg->num;
    double t0 = bench_now_sec(), c0 = cpu_sec();
    if (bench_eng_run_op(be, db, cfg, op) < 0) {
        fprintf(stderr, "%s: %s failed\n", be->name, bench_eng_op_names[op]);
        return -1;
    }
    double secs = bench_now_sec() - t0, cpu = cpu_sec() - c0;
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
int bench_eng_run_group(int bi, const bench_backend *be, const bench_cfg *cfg, const char *tag,
                        const int *ops, bench_result *res)
{
    int last = -1;
    for (int i = 0; ops[i] >= 0; i++)
        if (cfg->want[ops[i]]) last = i;
    if (last < 0) return 0;
    char dir[640];
    snprintf(dir, sizeof dir, "%s/%s-%s", cfg->dir, be->name, tag);
    if (!cfg->own_dir && !cfg->keep) bench_eng_set_doomed_dir(dir);
    bench_eng_rm_tree(dir);
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
    if (!cfg->keep) bench_eng_rm_tree(dir);
    return rc;
}

static double ratio(const bench_result *r, int op)
{
    return r->ops_per_sec[1][op] > 0 ? r->ops_per_sec[0][op] / r->ops_per_sec[1][op] : 0;
}

void bench_eng_print_summary(const bench_cfg *cfg, const bench_result *r)
{
    if (!cfg->run[0] || !cfg->run[1]) return; /* one engine: its lines above say it all */
    printf("\n%-12s %14s %14s %8s %12s %12s %8s\n", "operation", "strata ops/s", "rocksdb ops/s",
           "ratio", "strata cpu", "rocksdb cpu", "ratio");
    for (int op = 0; op < OP_COUNT; op++) {
        if (!cfg->want[op] || op == OP_COMPACT) continue;
        double cs = r->cpu_us[0][op], cr = r->cpu_us[1][op];
        printf("%-12s %14.0f %14.0f %8.2f %9.2f us %9.2f us %8.2f\n", bench_eng_op_names[op],
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
