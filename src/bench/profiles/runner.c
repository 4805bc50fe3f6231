/*
 * runner.c -- one engine through the whole profile workload: open, the 16
 * phases (with stabilize steps where the engine has them), settle, storage,
 * reopen and the final verification (§5), in a child process.
 */
#include "bench/profiles/runner.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/profiles/phases.h"
#include "bench/profiles/util.h"

const char *const rn_phase_names[RN_NPHASES] = {
    "insert profiles",
    "read by user id",
    "lookup by email",
    "scan country/status index",
    "query country/status",
    "scan created-at index",
    "query created-at range",
    "scan top reputation index",
    "query top reputation",
    "update profiles",
    "post-update read by user id",
    "post-update lookup by email",
    "post-update scan country/status index",
    "post-update query country/status",
    "post-update scan top reputation index",
    "post-update query top reputation",
};

/* §6 and the public 2M report (its published seeds): phases, then final. */
static const char *const vec_100k[RN_NPHASES + 1] = {
    "37C6E9056D5AC045", "3C75C3A02940F75F", "8EACBB38279A3446", "550DE764BD164CCC",
    "8A71BD4E88816061", "1BED8F615F0CDA9D", "DD87F18F9230D64C", "5045A3EB2C7535C5",
    "3C71031ED8049A9D", "FA3F051A503B5D43", "2AD19D2C2B2F8F3D", "6B8148031A502EBA",
    "D57DAE36F8AAE9C3", "1583D5A1C67A8B7C", "4EAFA92C8AA7C495", "8A0AD194E6834A4D",
    "1C7232F217FD84C5"};
static const char *const vec_2m[RN_NPHASES + 1] = {
    "4F24F178E189EEA5", "94FEA7BBDF9EB16F", "7911E6F89610C9DB", "560B74664AA52578",
    "FCF2C9270FA9B0B9", "C8D3546404935759", "C3FDD5908A1458BA", "E7D19A7DA1270425",
    "5DFA72D2DB36D325", "1100814B966927C5", "B004A4D20A4A3848", "D353A40B4BEBE4B5",
    "A45CF3AB6613BF9E", "7899EECCB1694A86", "629516A23DD07125", "15A3B24C38088C25",
    "A7EB98FFC773884D"};

const char *const *rn_vectors(int64_t n)
{
    if (n == 100000) return vec_100k;
    if (n == 2000000) return vec_2m;
    return NULL;
}

static void fmt_num(int64_t v, char *buf, size_t cap)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)(v < 0 ? -v : v));
    size_t o = 0;
    if (v < 0 && o + 1 < cap) buf[o++] = '-';
    for (int i = 0; i < n && o + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0) buf[o++] = '_';
        buf[o++] = tmp[i];
    }
    buf[o] = 0;
}

/* Compares with the test vector and prints the progress line of a phase. */
static void report_phase(rn_result *res, const char *const *vec, int i)
{
    rn_phase *p = &res->ph[i];
    char hex[17], ops[32], ms[32], tput[32];
    wl_sum_hex(p->sum, hex);
    const char *verdict = "";
    if (vec && vec[i]) {
        p->mismatch = strcmp(hex, vec[i]) != 0;
        verdict = p->mismatch ? " MISMATCH" : " ok";
    }
    fmt_num(p->ops, ops, sizeof(ops));
    fmt_num(p->ns / 1000000, ms, sizeof(ms));
    fmt_num(p->ns > 0 ? (int64_t)((double)p->ops * 1e9 / (double)p->ns) : 0, tput, sizeof(tput));
    double cpu_us = (double)(p->bench_cpu_ns > 0 ? p->bench_cpu_ns : 0) +
                    (double)(p->server_cpu_ns > 0 ? p->server_cpu_ns : 0);
    cpu_us = p->ops > 0 ? cpu_us / 1000.0 / (double)p->ops : 0;
    printf("  %-8s %-38s %11s ops %9s ms %11s/s %8.1f cpu-us/op  %s%s\n", res->name,
           rn_phase_names[i], ops, ms, tput, cpu_us, hex, verdict);
    if (p->mismatch)
        fprintf(stderr, "strata-bench: %s: checksum mismatch in phase '%s': got %s, expected %s\n",
                res->name, rn_phase_names[i], hex, vec[i]);
    fflush(stdout);
}

static int64_t timed_step(int (*fn)(drv_engine *, char *, size_t), drv_engine *e, char *err,
                          size_t cap, int *rc)
{
    int64_t t = util_now_ns();
    *rc = fn(e, err, cap);
    return util_now_ns() - t;
}

/* The final checksum (§5): count, then profiles 1, max(1, N/2), N. */
static int verify(const drv_ops *ops, drv_conn *c, int64_t n, uint64_t *sum, char *err, size_t cap)
{
    int64_t cnt = ops->count(c, err, cap);
    if (cnt < 0) return -1;
    uint64_t h = WL_SUM_INIT;
    wl_sum_add(&h, (uint64_t)cnt);
    int64_t ids[3] = {1, n / 2 > 1 ? n / 2 : 1, n};
    for (int i = 0; i < 3; i++) {
        wl_profile p;
        if (ph_get(ops, c, ids[i], &p, err, cap)) return -1;
        wl_sum_profile(&h, &p);
    }
    *sum = h;
    return 0;
}

static void disconnect_all(const drv_ops *ops, drv_conn **conns, int n)
{
    for (int i = 0; i < n; i++)
        if (conns[i]) ops->disconnect(conns[i]);
    memset(conns, 0, sizeof(conns[0]) * (size_t)n);
}

/* The 16 phases, with the engine's stabilize step before the first read
 * phase and before the first post-update phase. */
static int all_phases(const drv_ops *ops, drv_engine *e, ph_set *set, rn_result *res,
                      const char *const *vec, char *err, size_t cap)
{
    for (int i = 0; i < RN_NPHASES; i++) {
        if ((i == 1 || i == 10) && ops->stabilize) {
            int src;
            int64_t t = timed_step(ops->stabilize, e, err, cap, &src);
            if (i == 1)
                res->pre_stab_ns = t;
            else
                res->post_stab_ns = t;
            if (src) return -1;
        }
        rn_phase *p = &res->ph[i];
        pid_t spid = ops->server_pid(e);
        int64_t c0 = util_cpu_ns(0), s0 = spid > 0 ? util_cpu_ns(spid) : -1;
        int64_t t0 = util_now_ns();
        if (ph_run(set, i, &p->sum, &p->ops, err, cap)) {
            char msg[512];
            snprintf(msg, sizeof(msg), "phase '%s': %.400s", rn_phase_names[i], err);
            snprintf(err, cap, "%s", msg);
            return -1;
        }
        p->ns = util_now_ns() - t0;
        int64_t c1 = util_cpu_ns(0), s1 = s0 >= 0 ? util_cpu_ns(spid) : -1;
        p->bench_cpu_ns = c0 >= 0 && c1 >= 0 ? c1 - c0 : -1;
        p->server_cpu_ns = s0 >= 0 && s1 >= 0 ? s1 - s0 : -1;
        p->done = 1;
        res->phase_ns += p->ns;
        report_phase(res, vec, i);
    }
    return 0;
}

/* After reopen: the final checksum on a fresh connection, compared with the
 * vector. conns[0] receives the connection (the caller disconnects it). */
static int final_check(const drv_ops *ops, drv_engine *e, drv_conn **conns, int64_t n,
                       rn_result *res, const char *const *vec, char *err, size_t cap)
{
    int64_t t0 = util_now_ns();
    if (!(conns[0] = ops->connect(e, err, cap))) return -1;
    if (verify(ops, conns[0], n, &res->final_sum, err, cap)) return -1;
    res->verify_ns = util_now_ns() - t0;
    res->final_done = 1;
    pid_t spid = ops->server_pid(e);
    int64_t hwm = spid > 0 ? util_vmhwm(spid) : -1;
    if (hwm > res->server_peak) res->server_peak = hwm;
    char hex[17];
    wl_sum_hex(res->final_sum, hex);
    if (vec && vec[RN_NPHASES]) res->final_mismatch = strcmp(hex, vec[RN_NPHASES]) != 0;
    printf("  %-8s %-38s %s%s\n", res->name, "final (after reopen)", hex,
           !vec                  ? ""
           : res->final_mismatch ? " MISMATCH"
                                 : " ok");
    if (res->final_mismatch)
        fprintf(stderr,
                "strata-bench: %s: checksum mismatch in phase 'final (after reopen)': "
                "got %s, expected %s\n",
                res->name, hex, vec[RN_NPHASES]);
    fflush(stdout);
    return 0;
}

/* Phases through verification; fills res. Runs in the child. */
static int run_phases(const drv_ops *ops, drv_engine *e, const rn_config *cfg, rn_result *res,
                      char *err, size_t cap)
{
    int W = cfg->clients, P = ops->remote ? cfg->pipeline : 1, rc = -1, src;
    const char *const *vec = cfg->clients == 1 ? rn_vectors(cfg->profiles) : NULL;
    drv_conn *conns[W];
    wl_plan plan;
    ph_set *set = NULL;
    memset(conns, 0, sizeof(conns));
    res->vectors_checked = vec != NULL;
    if (wl_plan_build(&plan, cfg->profiles)) {
        snprintf(err, cap, "out of memory for the plan");
        return -1;
    }
    /* The whole plan is drawn (the later lists depend on the draws before
     * them); --queries only shortens the query phases, whose checksums
     * then differ from the test vectors and are not compared. */
    const char *capped_vec[RN_NPHASES + 1];
    if (cfg->queries > 0 && cfg->queries < plan.q) {
        plan.q_run = cfg->queries;
        if (vec) {
            for (int i = 0; i <= RN_NPHASES; i++)
                capped_vec[i] = i < RN_NPHASES && ph_is_query(i) ? NULL : vec[i];
            vec = capped_vec;
        }
    }
    for (int w = 0; w < W; w++)
        if (!(conns[w] = ops->connect(e, err, cap))) goto out;
    if (!(set = ph_create(ops, conns, W, P, &plan))) {
        snprintf(err, cap, "out of memory");
        goto out;
    }
    if (all_phases(ops, e, set, res, vec, err, cap)) goto out;
    res->settle_ns = timed_step(ops->settle, e, err, cap, &src);
    if (src) goto out;
    res->storage = ops->storage(e);
    pid_t spid = ops->server_pid(e);
    if (spid > 0) res->server_peak = util_vmhwm(spid);
    ph_free(set);
    set = NULL;
    disconnect_all(ops, conns, W);
    res->reopen_ns = timed_step(ops->reopen, e, err, cap, &src);
    if (src || final_check(ops, e, conns, cfg->profiles, res, vec, err, cap)) goto out;
    rc = 0;
out:
    ph_free(set);
    disconnect_all(ops, conns, W);
    wl_plan_free(&plan);
    return rc;
}

/* The child's whole job: fills *res. */
static void child_run(const drv_ops *ops, const rn_config *cfg, rn_result *res)
{
    char err[1024] = "", dir[600];
    /* mkdtemp's template: the name, then six 'X' it replaces. */
    int len = snprintf(dir, sizeof(dir) - 7, "%s/strata-bench-%s-", cfg->tmp, ops->name);
    if (len > (int)sizeof(dir) - 7) len = (int)sizeof(dir) - 7;
    memset(dir + len, 'X', 6);
    dir[len + 6] = 0;
    if (!mkdtemp(dir)) {
        res->status = RN_FAILED;
        snprintf(res->message, sizeof(res->message), "mkdtemp in %.400s: %s", cfg->tmp,
                 strerror(errno));
        return;
    }
    int64_t t0 = util_now_ns();
    drv_engine *e = ops->open(dir, err, sizeof(err));
    if (!e) {
        res->status = RN_FAILED;
        snprintf(res->message, sizeof(res->message), "open: %.500s", err);
    } else {
        int rc = run_phases(ops, e, cfg, res, err, sizeof(err));
        ops->close(e);
        res->status = rc ? RN_FAILED : RN_COMPLETED;
        if (rc) snprintf(res->message, sizeof(res->message), "%.500s", err);
    }
    res->run_ns = util_now_ns() - t0;
    util_rm_rf(dir);
    struct rusage ru;
    int64_t hwm = util_vmhwm(getpid());
    if (hwm < 0 && getrusage(RUSAGE_SELF, &ru) == 0) hwm = (int64_t)ru.ru_maxrss * 1024;
    res->bench_peak = hwm;
}

/* Writes (or reads) n bytes through a pipe; returns how many went through. */
static size_t xfer(int fd, char *p, size_t n, int writing)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = writing ? write(fd, p + done, n - done) : read(fd, p + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        done += (size_t)k;
    }
    return done;
}

static int result_ok(const rn_result *res)
{
    if (res->status != RN_COMPLETED || res->final_mismatch) return 0;
    for (int i = 0; i < RN_NPHASES; i++)
        if (res->ph[i].mismatch) return 0;
    return 1;
}

int rn_run_engine(const drv_ops *ops, const rn_config *cfg, rn_result *res)
{
    memset(res, 0, sizeof(*res));
    snprintf(res->name, sizeof(res->name), "%s", ops->name);
    snprintf(res->title, sizeof(res->title), "%s", ops->title);
    res->pre_stab_ns = res->post_stab_ns = -1;
    res->storage = res->server_peak = -1;
    char why[512] = "";
    if (ops->probe(why, sizeof(why))) {
        res->status = RN_SKIPPED;
        snprintf(res->message, sizeof(res->message), "%s", why);
        printf("  %-8s skipped: %s\n", ops->name, why);
        fflush(stdout);
        return 0;
    }
    int fds[2];
    if (pipe(fds)) {
        res->status = RN_FAILED;
        snprintf(res->message, sizeof(res->message), "pipe: %s", strerror(errno));
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child_run(ops, cfg, res);
        fflush(stdout);
        _exit(xfer(fds[1], (char *)res, sizeof(*res), 1) == sizeof(*res) ? 0 : 1);
    }
    close(fds[1]);
    rn_result got;
    size_t have = pid > 0 ? xfer(fds[0], (char *)&got, sizeof(got), 0) : 0;
    close(fds[0]);
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    if (have == sizeof(got)) {
        *res = got;
    } else {
        res->status = RN_FAILED;
        snprintf(res->message, sizeof(res->message), "benchmark process for %s died (%s %d)",
                 ops->name, WIFSIGNALED(status) ? "signal" : "status",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    }
    if (res->status == RN_FAILED)
        fprintf(stderr, "strata-bench: %s failed: %s\n", ops->name, res->message);
    return result_ok(res) ? 0 : 1;
}
