/*
 * cli.c -- `strata-bench profiles`: option parsing, the engines in turn,
 * the cross-engine checksum agreement and the report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/profiles/driver.h"
#include "bench/profiles/report.h"
#include "bench/profiles/runner.h"

static const drv_ops *const all_engines[] = {&drv_strata_ops, &drv_strata_ft_ops,
                                             &drv_redis_ops,  &drv_rocksdb_ops,
                                             &drv_sqlite_ops, &drv_mariadb_ops};
#define NENGINES (int)(sizeof(all_engines) / sizeof(all_engines[0]))

static void usage(void)
{
    fprintf(stderr, "usage: strata-bench profiles [--profiles N] [--engine LIST|all]\n"
                    "           [--clients C] [--pipeline P] [--out DIR] [--tmp DIR]\n"
                    "           [--check-agree] [--no-report]\n"
                    "  LIST: comma-separated of strata,strata-ft,redis,rocksdb,sqlite,mariadb\n"
                    "  --check-agree: exit non-zero unless every completed engine printed the\n"
                    "                 same checksum for every phase (and none failed)\n");
}

/* Parses the engine list into sel[] (indexes into all_engines). */
static int parse_engines(const char *list, int *sel)
{
    int n = 0;
    if (!strcmp(list, "all")) {
        for (int i = 0; i < NENGINES; i++)
            sel[n++] = i;
        return n;
    }
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < NENGINES; i++)
            if (!strcmp(tok, all_engines[i]->name)) found = i;
        if (found < 0 || n >= NENGINES) {
            fprintf(stderr, "strata-bench: unknown engine '%s'\n", tok);
            return -1;
        }
        sel[n++] = found;
    }
    return n;
}

/* 1 when all completed engines agree on every checksum. Prints each
 * disagreement. */
static int agree(const rn_result *res, int n)
{
    int ok = 1, first = -1;
    for (int i = 0; i < n; i++)
        if (res[i].status == RN_COMPLETED && first < 0) first = i;
    if (first < 0) return 1;
    for (int i = first + 1; i < n; i++) {
        if (res[i].status != RN_COMPLETED) continue;
        for (int p = 0; p <= RN_NPHASES; p++) {
            uint64_t a = p < RN_NPHASES ? res[first].ph[p].sum : res[first].final_sum;
            uint64_t b = p < RN_NPHASES ? res[i].ph[p].sum : res[i].final_sum;
            if (a == b) continue;
            char ha[17], hb[17];
            wl_sum_hex(a, ha);
            wl_sum_hex(b, hb);
            fprintf(stderr, "strata-bench: %s and %s disagree in phase '%s': %s vs %s\n",
                    res[first].name, res[i].name,
                    p < RN_NPHASES ? rn_phase_names[p] : "final (after reopen)", ha, hb);
            ok = 0;
        }
    }
    return ok;
}

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* Writes the report into out, or bench-results/profiles-<N>-<UTC time>.
 * Returns 0 or -1 (after printing why). */
static int write_report(const char *out, const rn_config *cfg, const rn_result *res, int n,
                        const char **settings)
{
    char dir[600], err[512];
    if (out) {
        snprintf(dir, sizeof(dir), "%s", out);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
        mkdir("bench-results", 0755);
        snprintf(dir, sizeof(dir), "bench-results/profiles-%lld-%s", (long long)cfg->profiles,
                 stamp);
    }
    if (rp_write(dir, cfg, res, n, settings, err, sizeof(err))) {
        fprintf(stderr, "strata-bench: report: %s\n", err);
        return -1;
    }
    printf("report: %s/report.md\n", dir);
    return 0;
}

typedef struct options {
    rn_config cfg;
    const char *engines, *out;
    int check_agree, want_report;
} options;

/* Returns -1 to go on, or the exit status (0 for --help, 2 for bad usage). */
static int parse_args(int argc, char **argv, options *o)
{
    const char *t = getenv("TMPDIR");
    snprintf(o->cfg.tmp, sizeof(o->cfg.tmp), "%s", t && *t ? t : "/tmp");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long n;
        if (!strcmp(a, "--check-agree")) {
            o->check_agree = 1;
            continue;
        }
        if (!strcmp(a, "--no-report")) {
            o->want_report = 0;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage(), 0;
        if (!v) return usage(), 2;
        i++;
        if (!strcmp(a, "--profiles") && !parse_int(v, 1, 1000000000, &n))
            o->cfg.profiles = n;
        else if (!strcmp(a, "--clients") && !parse_int(v, 1, 256, &n))
            o->cfg.clients = (int)n;
        else if (!strcmp(a, "--pipeline") && !parse_int(v, 1, 1024, &n))
            o->cfg.pipeline = (int)n;
        else if (!strcmp(a, "--engine"))
            o->engines = v;
        else if (!strcmp(a, "--out"))
            o->out = v;
        else if (!strcmp(a, "--tmp"))
            snprintf(o->cfg.tmp, sizeof(o->cfg.tmp), "%s", v);
        else {
            fprintf(stderr, "strata-bench: bad option %s %s\n", a, v);
            return usage(), 2;
        }
    }
    return -1;
}

int bench_profiles_main(int argc, char **argv)
{
    options o = {.cfg = {.profiles = 100000, .clients = 1, .pipeline = 1},
                 .engines = "all",
                 .want_report = 1};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    int sel[NENGINES], nsel = parse_engines(o.engines, sel);
    if (nsel <= 0) return usage(), 2;
    printf("strata-bench profiles: %lld profiles, %d client(s), pipeline %d, engines %s\n",
           (long long)o.cfg.profiles, o.cfg.clients, o.cfg.pipeline, o.engines);
    rn_result res[NENGINES];
    const char *settings[NENGINES];
    int bad = 0;
    for (int i = 0; i < nsel; i++) {
        bad |= rn_run_engine(all_engines[sel[i]], &o.cfg, &res[i]);
        settings[i] = all_engines[sel[i]]->settings;
    }
    if (o.check_agree) {
        int completed = 0;
        for (int i = 0; i < nsel; i++)
            completed += res[i].status == RN_COMPLETED;
        int ok = agree(res, nsel) && completed == nsel;
        printf("checksum agreement across %d completed engine(s) of %d: %s\n", completed, nsel,
               ok ? "ok" : "FAILED");
        if (!ok) bad = 1;
    }
    if (o.want_report && write_report(o.out, &o.cfg, res, nsel, settings)) bad = 1;
    return bad ? 1 : 0;
}
