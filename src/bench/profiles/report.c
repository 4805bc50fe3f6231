/*
 * report.c -- report.md and its charts for a profile run. The sections and
 * their order follow the public report: charts, Total By Engine,
 * Correctness, Write Readiness, Phase Results, Configuration, Environment,
 * Engine Settings. Numbers use "_" as the thousands separator, as it does.
 */
#include "bench/profiles/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/profiles/svg.h"

static void num(int64_t v, char *buf, size_t cap)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)(v < 0 ? -v : v));
    size_t o = 0;
    if (v < 0) buf[o++] = '-';
    for (int i = 0; i < n && o + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0) buf[o++] = '_';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
}

static const char *ms(int64_t ns, char *buf, size_t cap)
{
    if (ns < 0) return "n/a";
    num(ns / 1000000, buf, cap - 3);
    strcat(buf, " ms");
    return buf;
}

static const char *bytes(int64_t b, char *buf, size_t cap)
{
    if (b < 0)
        snprintf(buf, cap, "n/a");
    else if (b >= (int64_t)1000 << 20)
        snprintf(buf, cap, "%.1f GB", (double)b / (1 << 30));
    else
        snprintf(buf, cap, "%.1f MB", (double)b / (1 << 20));
    return buf;
}

static double tput(const rn_phase *p)
{
    return p->done && p->ns > 0 ? (double)p->ops * 1e9 / (double)p->ns : -1;
}

static const char *status_text(const rn_result *r)
{
    if (r->status == RN_SKIPPED) return "Skipped";
    if (r->status == RN_FAILED) return "Failed";
    return "Completed";
}

static void total_table(FILE *f, const rn_result *res, int n)
{
    fprintf(f, "## Total By Engine\n\n| Engine | Status | Run time | Completed phase time | "
               "Pre-read stabilize | Post-update stabilize | Settle | Reopen | Verify | Storage "
               "| Bench peak memory | Server peak memory | Final checksum |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < n; i++) {
        const rn_result *r = &res[i];
        char a[7][40], s[3][32], hex[17];
        wl_sum_hex(r->final_sum, hex);
        int ran = r->status != RN_SKIPPED;
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s%s%s |\n",
                r->title, status_text(r), ran ? ms(r->run_ns, a[0], 40) : "n/a",
                ran ? ms(r->phase_ns, a[1], 40) : "n/a", ms(r->pre_stab_ns, a[2], 40),
                ms(r->post_stab_ns, a[3], 40), r->final_done ? ms(r->settle_ns, a[4], 40) : "n/a",
                r->final_done ? ms(r->reopen_ns, a[5], 40) : "n/a",
                r->final_done ? ms(r->verify_ns, a[6], 40) : "n/a", bytes(r->storage, s[0], 32),
                ran ? bytes(r->bench_peak, s[1], 32) : "n/a", bytes(r->server_peak, s[2], 32),
                r->final_done ? "`" : "", r->final_done ? hex : "n/a", r->final_done ? "`" : "");
    }
    fprintf(f, "\n");
    for (int i = 0; i < n; i++)
        if (res[i].status != RN_COMPLETED)
            fprintf(f, "- %s %s: %s\n", res[i].title,
                    res[i].status == RN_SKIPPED ? "skipped" : "failed", res[i].message);
    fprintf(f, "\n");
}

static void correctness(FILE *f, const rn_result *res, int n)
{
    int bad = 0, done = 0, vec = 0;
    char names[256] = "";
    for (int i = 0; i < n; i++) {
        if (res[i].status != RN_COMPLETED) continue;
        vec |= res[i].vectors_checked;
        strncat(names, done++ ? ", " : "", sizeof(names) - strlen(names) - 1);
        strncat(names, res[i].title, sizeof(names) - strlen(names) - 1);
        for (int p = 0; p < RN_NPHASES; p++) {
            bad |= res[i].ph[p].mismatch;
            if (res[i].ph[p].sum != res[0].ph[p].sum && res[0].status == RN_COMPLETED) bad = 1;
        }
        bad |= res[i].final_mismatch;
    }
    fprintf(f, "## Correctness\n\n");
    if (!done)
        fprintf(f, "No engine completed.\n\n");
    else if (bad)
        fprintf(f, "Checksum validation FAILED (see the phase tables).\n\n");
    else
        fprintf(f, "Checksum validation passed across completed engines: %s.%s\n\n", names,
                vec ? " Every checksum equals the workload's test vector." : "");
}

static void readiness(FILE *f, const rn_result *res, int n)
{
    fprintf(f, "## Write Readiness\n\n| Engine | Insert | Pre-read stabilize | Insert + stabilize "
               "| Insert ready throughput | Update | Post-update stabilize | Update + stabilize | "
               "Update ready throughput |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++) {
        const rn_result *r = &res[i];
        if (!r->ph[0].done) continue;
        char b[8][40];
        int64_t ins = r->ph[0].ns + (r->pre_stab_ns > 0 ? r->pre_stab_ns : 0);
        int64_t upd = r->ph[9].ns + (r->post_stab_ns > 0 ? r->post_stab_ns : 0);
        num(ins > 0 ? (int64_t)(r->ph[0].ops * 1e9 / ins) : 0, b[6], 40);
        num(upd > 0 && r->ph[9].done ? (int64_t)(r->ph[9].ops * 1e9 / upd) : 0, b[7], 40);
        fprintf(f, "| %s | %s | %s | %s | %s/s | %s | %s | %s | %s/s |\n", r->title,
                ms(r->ph[0].ns, b[0], 40), ms(r->pre_stab_ns, b[1], 40), ms(ins, b[2], 40), b[6],
                r->ph[9].done ? ms(r->ph[9].ns, b[3], 40) : "n/a", ms(r->post_stab_ns, b[4], 40),
                r->ph[9].done ? ms(upd, b[5], 40) : "n/a", b[7]);
    }
    fprintf(f, "\n");
}

static void phase_tables(FILE *f, const rn_result *res, int n)
{
    fprintf(f, "## Phase Results\n\n");
    for (int i = 0; i < n; i++) {
        const rn_result *r = &res[i];
        if (r->status == RN_SKIPPED) continue;
        fprintf(f,
                "### %s\n\n| Phase | Operations | Time | Throughput | Bench CPU | Server CPU | "
                "Checksum |\n|---|---:|---:|---:|---:|---:|---|\n",
                r->title);
        for (int p = 0; p < RN_NPHASES && r->ph[p].done; p++) {
            char o[32], t[40], th[32], hex[17], bc[40], sc[40];
            num(r->ph[p].ops, o, sizeof(o));
            num((int64_t)tput(&r->ph[p]), th, sizeof(th));
            wl_sum_hex(r->ph[p].sum, hex);
            fprintf(f, "| %s | %s | %s | %s/s | %s | %s | `%s`%s |\n", rn_phase_names[p], o,
                    ms(r->ph[p].ns, t, sizeof(t)), th, ms(r->ph[p].bench_cpu_ns, bc, sizeof(bc)),
                    ms(r->ph[p].server_cpu_ns, sc, sizeof(sc)), hex,
                    r->ph[p].mismatch ? " MISMATCH" : "");
        }
        fprintf(f, "\n");
    }
}

/* CPU microseconds per operation of phase p (benchmark process plus
 * server), or -1. */
static double cpu_per_op(const rn_phase *p)
{
    if (!p->done || p->ops <= 0 || p->bench_cpu_ns < 0) return -1;
    int64_t ns = p->bench_cpu_ns + (p->server_cpu_ns > 0 ? p->server_cpu_ns : 0);
    return (double)ns / 1000.0 / (double)p->ops;
}

/* Phases by engine in CPU time per operation, and each engine's
 * throughput and CPU ratio against the first completed engine. */
static void cpu_table(FILE *f, const rn_result *res, int n)
{
    int base = -1;
    for (int i = 0; i < n && base < 0; i++)
        if (res[i].status != RN_SKIPPED && res[i].ph[0].done) base = i;
    if (base < 0) return;
    fprintf(f, "## CPU Per Operation\n\nBenchmark process plus server, in microseconds per "
               "operation; `x` columns are the first engine's advantage over the engine "
               "(its CPU per operation divided by the first engine's; wall-clock "
               "throughput ratio in brackets).\n\n| Phase |");
    for (int i = 0; i < n; i++)
        if (res[i].status != RN_SKIPPED) fprintf(f, " %s |", res[i].title);
    for (int i = 0; i < n; i++)
        if (res[i].status != RN_SKIPPED && i != base) fprintf(f, " %s x |", res[i].title);
    fprintf(f, "\n|---|");
    for (int i = 0; i < n; i++)
        if (res[i].status != RN_SKIPPED) fprintf(f, "---:|%s", i != base ? "---:|" : "");
    fprintf(f, "\n");
    for (int p = 0; p < RN_NPHASES; p++) {
        fprintf(f, "| %s |", rn_phase_names[p]);
        for (int i = 0; i < n; i++) {
            if (res[i].status == RN_SKIPPED) continue;
            double c = cpu_per_op(&res[i].ph[p]);
            c < 0 ? fprintf(f, " n/a |") : fprintf(f, " %.1f |", c);
        }
        double cb = cpu_per_op(&res[base].ph[p]), tb = tput(&res[base].ph[p]);
        for (int i = 0; i < n; i++) {
            if (res[i].status == RN_SKIPPED || i == base) continue;
            double c = cpu_per_op(&res[i].ph[p]), t = tput(&res[i].ph[p]);
            if (cb > 0 && c > 0 && tb > 0 && t > 0)
                fprintf(f, " %.2f (%.2f) |", c / cb, tb / t);
            else
                fprintf(f, " n/a |");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

static void configuration(FILE *f, const rn_config *cfg)
{
    char n[32], q[32];
    num(cfg->profiles, n, sizeof(n));
    num(cfg->queries > 0 && cfg->queries < cfg->profiles / 4 ? cfg->queries : cfg->profiles / 4, q,
        sizeof(q));
    fprintf(f,
            "## Configuration\n\n- Profiles: %s\n- Profile writes: individual operations\n"
            "- UserId reads: %s\n- Email lookups: %s\n- Query count: %s\n"
            "- Profile updates: %s\n- Post-update UserId reads: %s\n"
            "- Post-update email lookups: %s\n- Post-update query count: %s\n"
            "- Query limit: %d\n- Seed: %d\n- Clients: %d\n- Pipeline: %d%s\n\n",
            n, n, n, q, n, n, n, q, WL_LIMIT, WL_SEED, cfg->clients, cfg->pipeline,
            cfg->pipeline > 1 ? " (network engines; embedded engines run one at a time)" : "");
}

static void first_line(const char *path, const char *key, char *out, size_t cap)
{
    char line[512];
    FILE *f = fopen(path, "r");
    snprintf(out, cap, "unknown");
    if (!f) return;
    size_t kl = strlen(key);
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, key, kl)) continue;
        char *v = line + kl;
        while (*v == ' ' || *v == '\t' || *v == ':' || *v == '=' || *v == '"')
            v++;
        v[strcspn(v, "\"\n")] = 0;
        snprintf(out, cap, "%s", v);
        break;
    }
    fclose(f);
}

static void environment(FILE *f)
{
    char os[256], cpu[256], b[32];
    struct utsname u;
    first_line("/etc/os-release", "PRETTY_NAME", os, sizeof(os));
    first_line("/proc/cpuinfo", "model name", cpu, sizeof(cpu));
    uname(&u);
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    fprintf(f,
            "## Environment\n\n- OS: %s (kernel %s)\n- Architecture: %s\n- Compiler: gcc %s\n"
            "- CPU: %s\n- Logical processors: %ld\n- Total available memory: %s\n\n",
            os, u.release, u.machine, __VERSION__, cpu, sysconf(_SC_NPROCESSORS_ONLN),
            bytes((int64_t)pages * psz, b, sizeof(b)));
}

/* The five charts; each maps a set of phases (or figures) to grouped bars. */
static int charts(const char *dir, const rn_result *res, int n)
{
    static const struct {
        const char *file, *title;
        int phases[6], np;
    } sets[] = {
        {"write-throughput.svg", "Write Throughput", {0, 9}, 2},
        {"lookup-throughput.svg", "Lookup Throughput", {1, 2, 10, 11}, 4},
        {"index-scan-throughput.svg", "Index Scan Throughput", {3, 5, 7, 12, 14}, 5},
        {"query-throughput.svg", "Query Throughput", {4, 6, 8, 13, 15}, 5},
    };
    const char *series[8];
    double vals[8 * 16];
    char path[800];
    int ns = n > 8 ? 8 : n;
    for (int i = 0; i < ns; i++)
        series[i] = res[i].title;
    for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
        const char *cats[6];
        for (int c = 0; c < sets[k].np; c++) {
            cats[c] = rn_phase_names[sets[k].phases[c]];
            for (int s = 0; s < ns; s++)
                vals[s * sets[k].np + c] = tput(&res[s].ph[sets[k].phases[c]]);
        }
        snprintf(path, sizeof(path), "%s/%s", dir, sets[k].file);
        if (svg_grouped_bars(path, sets[k].title, "operations / s", sets[k].np, cats, ns, series,
                             vals))
            return -1;
    }
    const char *tcats[] = {"run time", "completed phase time", "settle + reopen + verify"};
    for (int s = 0; s < ns; s++) {
        int ran = res[s].status != RN_SKIPPED;
        vals[s * 3] = ran ? res[s].run_ns / 1e6 : -1;
        vals[s * 3 + 1] = ran ? res[s].phase_ns / 1e6 : -1;
        vals[s * 3 + 2] =
            res[s].final_done ? (res[s].settle_ns + res[s].reopen_ns + res[s].verify_ns) / 1e6 : -1;
    }
    snprintf(path, sizeof(path), "%s/execution-time.svg", dir);
    if (svg_grouped_bars(path, "Execution Time", "ms", 3, tcats, ns, series, vals)) return -1;
    const char *rcats[] = {"storage after settle", "benchmark process peak", "server process peak"};
    for (int s = 0; s < ns; s++) {
        vals[s * 3] = res[s].storage >= 0 ? res[s].storage / 1048576.0 : -1;
        vals[s * 3 + 1] = res[s].status != RN_SKIPPED && res[s].bench_peak >= 0
                              ? res[s].bench_peak / 1048576.0
                              : -1;
        vals[s * 3 + 2] = res[s].server_peak >= 0 ? res[s].server_peak / 1048576.0 : -1;
    }
    snprintf(path, sizeof(path), "%s/resource-footprint.svg", dir);
    return svg_grouped_bars(path, "Resource Footprint", "MB", 3, rcats, ns, series, vals);
}

/* Title and the chart images. */
static void header(FILE *f, const rn_config *cfg)
{
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
    char n[32];
    num(cfg->profiles, n, sizeof(n));
    fprintf(f,
            "# Benchmark %s Profiles\n\n%s · strata-bench profiles · %d client(s), pipeline %d"
            "\n\n## Charts\n\n![Execution Time](execution-time.svg)\n\n"
            "![Write Throughput](write-throughput.svg)\n\n"
            "![Lookup Throughput](lookup-throughput.svg)\n\n"
            "![Index Scan Throughput](index-scan-throughput.svg)\n\n"
            "![Query Throughput](query-throughput.svg)\n\n"
            "![Resource Footprint](resource-footprint.svg)\n\n",
            n, date, cfg->clients, cfg->pipeline);
}

int rp_write(const char *dir, const rn_config *cfg, const rn_result *res, int n,
             const char *engine_settings[], char *err, size_t cap)
{
    char path[800];
    if (mkdir(dir, 0755) && errno != EEXIST) {
        snprintf(err, cap, "mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (charts(dir, res, n)) {
        snprintf(err, cap, "writing charts in %s: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(path, sizeof(path), "%s/report.md", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    header(f, cfg);
    total_table(f, res, n);
    correctness(f, res, n);
    fprintf(f,
            "## Interpretation Notes\n\n"
            "- Every operation is a live single-profile insert, update, read or indexed query.\n"
            "- strata keeps its secondary indexes inside the server, in the same atomic batch "
            "as the hash; Redis and RocksDB indexes are maintained by the benchmark (sorted "
            "sets in MULTI/EXEC; separate stores); SQLite and MariaDB use native SQL indexes.\n"
            "- strata, Redis and MariaDB are measured over loopback TCP; RocksDB and SQLite "
            "run inside the benchmark process.\n"
            "- Completed phase time is the sum of the measured phases; run time also includes "
            "startup, stabilization, settle, reopen and verification.\n"
            "- Bench peak memory is the benchmark process's (one process per engine); server "
            "peak memory is VmHWM of the server process, before its restart for the reopen.\n\n");
    readiness(f, res, n);
    cpu_table(f, res, n);
    phase_tables(f, res, n);
    configuration(f, cfg);
    environment(f);
    fprintf(f, "## Engine Settings\n\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "### %s\n\n", res[i].title);
        for (const char *s = engine_settings[i]; *s;) {
            size_t l = strcspn(s, "\n");
            fprintf(f, "- %.*s\n", (int)l, s);
            s += l + (s[l] == '\n');
        }
        fprintf(f, "\n");
    }
    if (fclose(f)) {
        snprintf(err, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}
