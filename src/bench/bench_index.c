/*
 * bench_index.c -- `strata-bench index`: what the profile benchmark's secondary indexes
 * cost in the write path, and how fast IDX.RANGE answers.
 *
 * Setup: two strata-servers started here (STRATA_SERVER, or strata-server
 * next to this binary), each on a free port with a temporary directory and
 * appendfsync everysec; or, with --port, one running server and two key
 * prefixes. The indexed side has the four profile indexes over the prefix
 * "bench:user:"; the plain side writes "bench:flat:" (same length) which no
 * index covers.
 *
 * Phases, through hiredis with pipelining (--pipeline requests in flight):
 *   hset     HSET of create(id) of the public profile-workload specification (nine
 *            fields) for id = 1..num, alternating plain and indexed in ten
 *            rounds so that both sides see the same machine noise and the
 *            same data size. Server CPU time per write is the CPU time of
 *            every thread of the server process (engine threads included)
 *            over the phase, divided by the writes: /proc/<pid>/task/<tid>/
 *            schedstat (nanoseconds), or utime + stime of /proc/<pid>/stat
 *            (clock ticks) where schedstat is missing.
 *   range    IDX.RANGE ... LIMIT 0 100 on each index shape of the profile
 *            workload: country/status EQ, created_at MIN/MAX over 5000 ids,
 *            top reputation; keys only and HASHES.
 *
 * The last line of output is exactly
 *   indexed/plain ratios: cpu_per_write=X throughput=Y
 * (the goal: cpu_per_write <= 2.0).
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "bench/bench.h"
#include "bench/bench_util.h"
#include "bench/profiles/workload.h"

#define ROUNDS 10
#define IDX_PREFIX "bench:user:"
#define FLAT_PREFIX "bench:flat:"

static const char *const index_defs[] = {
    "IDX.CREATE bench_email PREFIX " IDX_PREFIX " UNIQUE SCHEMA email TAG",
    "IDX.CREATE bench_country_status PREFIX " IDX_PREFIX
    " SCHEMA country TAG status TAG user_id NUMERIC",
    "IDX.CREATE bench_created_at PREFIX " IDX_PREFIX " SCHEMA created_at NUMERIC user_id NUMERIC",
    "IDX.CREATE bench_reputation PREFIX " IDX_PREFIX
    " SCHEMA reputation NUMERIC DESC user_id NUMERIC",
};
static const char *const index_names[] = {"bench_email", "bench_country_status", "bench_created_at",
                                          "bench_reputation"};
#define NINDEXES 4

/* A strata-server: started here (pid > 0, dir set) or given by --port. */
typedef struct server {
    pid_t pid;   /* process to measure; 0 when unknown */
    int started; /* 1: ours to stop and clean up */
    int port;
    char dir[256];
    redisContext *c;
} server;

typedef struct idx_cfg {
    int64_t num;
    int queries, pipeline, port;
} idx_cfg;

typedef struct phase_stat {
    double secs;
    uint64_t ops, cpu_ns, results;
} phase_stat;

/* utime + stime of pid (all its threads, live or exited) in nanoseconds,
 * from /proc/<pid>/stat; 0 when unreadable. Clock-tick resolution (10 ms). */
static uint64_t stat_cpu_ns(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* Fields after the command name, which may hold spaces: state is field
     * 3, utime 14, stime 15. */
    char *p = strrchr(buf, ')');
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    long tck = sysconf(_SC_CLK_TCK);
    return tck > 0 ? (ut + st) * (1000000000ull / (uint64_t)tck) : 0;
}

/* CPU time of pid in nanoseconds: the sum over its live threads of
 * /proc/<pid>/task/<tid>/schedstat (nanosecond resolution, which the short
 * phases of a small run need), or stat_cpu_ns() when schedstat is missing.
 * 0 when pid is unknown. */
static uint64_t cpu_ns(pid_t pid)
{
    if (pid <= 0) return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return 0;
    uint64_t sum = 0;
    int ok = 1;
    for (struct dirent *e; ok && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char sp[400];
        snprintf(sp, sizeof sp, "%s/%s/schedstat", path, e->d_name);
        FILE *f = fopen(sp, "r");
        unsigned long long ns = 0;
        ok = f && fscanf(f, "%llu", &ns) == 1;
        if (f) fclose(f);
        sum += ns;
    }
    closedir(d);
    return ok ? sum : stat_cpu_ns(pid);
}

/* ---- Servers ----------------------------------------------------------- */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* STRATA_SERVER, else strata-server in this binary's directory. */
static int server_path(char *buf, size_t cap)
{
    const char *env = getenv("STRATA_SERVER");
    if (env && *env) {
        snprintf(buf, cap, "%s", env);
    } else {
        char self[PATH_MAX - 32];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) return -1;
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) *slash = 0;
        snprintf(buf, cap, "%s/strata-server", self);
    }
    if (access(buf, X_OK) == 0) return 0;
    fprintf(stderr, "strata-bench index: no strata-server at %s (set STRATA_SERVER)\n", buf);
    return -1;
}

static void exec_server(const char *bin, const server *s)
{
    char port[16], log[300];
    snprintf(port, sizeof port, "%d", s->port);
    snprintf(log, sizeof log, "%s/server.log", s->dir);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    execl(bin, bin, "--port", port, "--dir", s->dir, "--appendfsync", "everysec", (char *)NULL);
    perror("exec strata-server");
    _exit(127);
}

/* Connects with a 30 s reply timeout so that a hung server fails the bench
 * instead of hanging it. Returns 0 once PING answers. */
static int server_connect(server *s)
{
    struct timeval tv = {1, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", s->port, tv);
    if (!c || c->err) {
        if (c) redisFree(c);
        return -1;
    }
    redisReply *r = redisCommand(c, "PING");
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (r) freeReplyObject(r);
    if (!ok) {
        redisFree(c);
        return -1;
    }
    tv.tv_sec = 30;
    redisSetTimeout(c, tv);
    s->c = c;
    return 0;
}

static void print_log_tail(const server *s)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "tail -5 '%s/server.log' >&2", s->dir);
    if (system(cmd) < 0) return;
}

/* A fresh directory under $TMPDIR (mkdir fails on a name that exists, so
 * the pid and a counter make it unique). */
static int make_temp_dir(char *buf, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, cap, "%s/strata-bench-index-%d-%d", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
                 i);
        if (mkdir(buf, 0700) == 0) return 0;
        if (errno != EEXIST) break;
    }
    return -1;
}

/* The servers started here, for a ^C or SIGTERM to stop and remove (their
 * own process group gets the ^C too, but not a SIGTERM, and nobody would
 * remove the directories). Updated with every signal blocked. */
static pid_t doomed_pid[2];
static char doomed_dir[2][256];

/* Async-signal-safe: kill, waitpid, fork, execve and _exit only. */
static void on_fatal_signal(int sig)
{
    char *argv[5] = {"rm", "-rf", NULL, NULL, NULL};
    int n = 2;
    for (int i = 0; i < 2; i++) {
        if (doomed_pid[i] > 0) {
            kill(doomed_pid[i], SIGKILL);
            waitpid(doomed_pid[i], NULL, 0);
        }
        if (doomed_dir[i][0]) argv[n++] = doomed_dir[i];
    }
    pid_t p = n > 2 ? fork() : -1;
    if (p == 0) {
        execve("/bin/rm", argv, environ);
        _exit(127);
    }
    if (p > 0) waitpid(p, NULL, 0);
    _exit(128 + sig);
}

/* Records (or, with pid 0 and dir NULL, forgets) server slot i. */
static void set_doomed(int i, pid_t pid, const char *dir)
{
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    doomed_pid[i] = pid;
    snprintf(doomed_dir[i], sizeof doomed_dir[i], "%s", dir ? dir : "");
    sigprocmask(SIG_SETMASK, &old, NULL);
}

/* Starts bin on a free port in a fresh temporary directory and waits up to
 * 20 s for it to answer PING. */
static int server_start(server *s, int slot, const char *bin)
{
    memset(s, 0, sizeof *s);
    if (make_temp_dir(s->dir, sizeof s->dir) < 0 || (s->port = free_port()) < 0) {
        fprintf(stderr, "strata-bench index: temp dir or port: %s\n", strerror(errno));
        return -1;
    }
    s->started = 1;
    set_doomed(slot, 0, s->dir);
    s->pid = fork();
    if (s->pid < 0) return -1;
    if (s->pid == 0) exec_server(bin, s);
    set_doomed(slot, s->pid, s->dir);
    for (int i = 0; i < 400; i++) {
        int status;
        if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
            fprintf(stderr, "strata-bench index: strata-server exited (status %d)\n", status);
            s->pid = 0;
            print_log_tail(s);
            return -1;
        }
        if (server_connect(s) == 0) return 0;
        usleep(50000);
    }
    fprintf(stderr, "strata-bench index: strata-server on port %d did not answer\n", s->port);
    print_log_tail(s);
    return -1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* Stops a server started here (SIGTERM, SIGKILL after 10 s) and removes its
 * directory; for --port only closes the connection. */
static void server_stop(server *s)
{
    if (s->c) redisFree(s->c);
    s->c = NULL;
    if (!s->started) return;
    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        int status, i;
        for (i = 0; i < 200 && waitpid(s->pid, &status, WNOHANG) == 0; i++)
            usleep(50000);
        if (i == 200) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &status, 0);
        }
    }
    nftw(s->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The pid of a server given by --port, from INFO server (0 if unknown). */
static pid_t server_pid_from_info(redisContext *c)
{
    redisReply *r = redisCommand(c, "INFO server");
    pid_t pid = 0;
    if (r && r->type == REDIS_REPLY_STRING) {
        const char *p = strstr(r->str, "process_id:");
        if (p) pid = (pid_t)atoi(p + strlen("process_id:"));
    }
    if (r) freeReplyObject(r);
    return pid;
}

/* ---- Pipelined requests ------------------------------------------------ */

/* What one phase sends: request i (appended to the context's output buffer)
 * and the check of its reply, which adds the entries it returned. */
typedef struct workload {
    const char *prefix; /* hset: key prefix */
    int kind;           /* range: 0 country/status, 1 created_at, 2 reputation */
    int hashes;         /* range: HASHES */
    int64_t num;
    uint64_t seed;
} workload;

static void append_hset(redisContext *c, const workload *w, int64_t id)
{
    wl_profile p;
    wl_create(id, &p);
    char key[64], uid[24], ca[24], ll[24], rep[16];
    snprintf(key, sizeof key, "%s%" PRId64, w->prefix, id);
    snprintf(uid, sizeof uid, "%" PRId64, p.user_id);
    snprintf(ca, sizeof ca, "%" PRId64, p.created_at);
    snprintf(ll, sizeof ll, "%" PRId64, p.last_login);
    snprintf(rep, sizeof rep, "%" PRId32, p.reputation);
    const char *argv[] = {
        "HSET",       key,       "user_id",    uid,      "email",        p.email,
        "country",    p.country, "status",     p.status, "created_at",   ca,
        "last_login", ll,        "reputation", rep,      "display_name", p.display_name,
        "bio",        p.bio};
    redisAppendCommandArgv(c, 20, argv, NULL);
}

/* The query shapes of the profile workload (§3 and §5 phases 4-9). */
static void append_range(redisContext *c, const workload *w, int64_t i)
{
    uint64_t r = wl_mix(w->seed + (uint64_t)i);
    const char *argv[12];
    char from[24], to[24];
    int n = 0;
    argv[n++] = "IDX.RANGE";
    argv[n++] = index_names[w->kind + 1];
    if (w->kind == 0) {
        argv[n++] = "EQ";
        argv[n++] = wl_countries[r % WL_NCOUNTRIES];
        argv[n++] = wl_statuses[(r >> 8) % WL_NSTATUSES];
    } else if (w->kind == 1) {
        int64_t span = w->num > 5001 ? w->num - 5000 : 1;
        int64_t start = 1 + (int64_t)(r % (uint64_t)span);
        int64_t end = start + 5000 < w->num ? start + 5000 : w->num;
        wl_profile a, b;
        wl_create(start, &a);
        wl_create(end, &b);
        snprintf(from, sizeof from, "%" PRId64, a.created_at);
        snprintf(to, sizeof to, "%" PRId64, b.created_at);
        argv[n++] = "MIN";
        argv[n++] = from;
        argv[n++] = "MAX";
        argv[n++] = to;
    }
    argv[n++] = "LIMIT";
    argv[n++] = "0";
    argv[n++] = "100";
    if (w->hashes) argv[n++] = "HASHES";
    redisAppendCommandArgv(c, n, argv, NULL);
}

/* Returns the entries in reply r, or -1 when it is not what was asked for. */
static int64_t check_reply(const workload *w, const redisReply *r)
{
    if (r->type == REDIS_REPLY_ERROR) {
        fprintf(stderr, "strata-bench index: server error: %s\n", r->str);
        return -1;
    }
    if (w->prefix) return r->type == REDIS_REPLY_INTEGER ? 0 : -1;
    if (r->type != REDIS_REPLY_ARRAY) return -1;
    if (!w->hashes) return (int64_t)r->elements;
    if (r->elements % 2) return -1;
    for (size_t i = 1; i < r->elements; i += 2)
        if (r->element[i]->type != REDIS_REPLY_ARRAY) return -1;
    return (int64_t)r->elements / 2;
}

/* Sends requests [from, to) with up to `depth` in flight and checks every
 * reply. Adds to st; returns 0, or -1 after printing why. */
static int run_pipelined(server *s, const workload *w, int64_t from, int64_t to, int depth,
                         phase_stat *st)
{
    uint64_t c0 = cpu_ns(s->pid);
    double w0 = bench_now_sec();
    int64_t sent = from;
    for (int64_t got = from; got < to; got++) {
        for (; sent < to && sent - got < depth; sent++) {
            if (w->prefix)
                append_hset(s->c, w, sent + 1);
            else
                append_range(s->c, w, sent);
        }
        redisReply *r = NULL;
        if (redisGetReply(s->c, (void **)&r) != REDIS_OK) {
            fprintf(stderr, "strata-bench index: port %d: %s\n", s->port, s->c->errstr);
            return -1;
        }
        int64_t n = check_reply(w, r);
        freeReplyObject(r);
        if (n < 0) {
            fprintf(stderr, "strata-bench index: unexpected reply to request %" PRId64 "\n", got);
            return -1;
        }
        st->results += (uint64_t)n;
    }
    st->secs += bench_now_sec() - w0;
    uint64_t c1 = cpu_ns(s->pid);
    st->cpu_ns += c1 > c0 ? c1 - c0 : 0; /* a thread that exited takes its time along */
    st->ops += (uint64_t)(to - from);
    return 0;
}

/* ---- Phases ------------------------------------------------------------ */

/* Runs one command and checks it did not fail (unless errors are allowed). */
static int command_ok(server *s, const char *cmd, int allow_error)
{
    redisReply *r = redisCommand(s->c, cmd);
    if (!r) {
        fprintf(stderr, "strata-bench index: %s: %s\n", cmd, s->c->errstr);
        return -1;
    }
    int bad = r->type == REDIS_REPLY_ERROR && !allow_error;
    if (bad) fprintf(stderr, "strata-bench index: %s: %s\n", cmd, r->str);
    freeReplyObject(r);
    return bad ? -1 : 0;
}

/* 1 when any string in the reply tree contains word. */
static int reply_mentions(const redisReply *r, const char *word)
{
    if ((r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS) && r->str)
        return strstr(r->str, word) != NULL;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++)
        if (reply_mentions(r->element[i], word)) return 1;
    return 0;
}

/* Drops leftovers of an earlier run (--port), creates the four indexes and
 * waits until none is building (they start empty, so this is at once). */
static int setup_indexes(server *s)
{
    for (int i = 0; i < NINDEXES; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "IDX.DROP %s", index_names[i]);
        if (command_ok(s, cmd, 1) < 0 || command_ok(s, index_defs[i], 0) < 0) return -1;
    }
    for (int tries = 0; tries < 600; tries++) {
        int building = 0;
        for (int i = 0; i < NINDEXES; i++) {
            redisReply *r = redisCommand(s->c, "IDX.INFO %s", index_names[i]);
            if (!r || r->type == REDIS_REPLY_ERROR) {
                fprintf(stderr, "strata-bench index: IDX.INFO %s: %s\n", index_names[i],
                        r ? r->str : s->c->errstr);
                if (r) freeReplyObject(r);
                return -1;
            }
            building |= reply_mentions(r, "building");
            freeReplyObject(r);
        }
        if (!building) return 0;
        usleep(50000);
    }
    fprintf(stderr, "strata-bench index: indexes still building after 30 s\n");
    return -1;
}

/* HSETs ids 1..num on both sides, alternating in ROUNDS rounds. */
static int phase_hset(server *plain, server *indexed, const idx_cfg *cfg, phase_stat st[2])
{
    workload wp = {.prefix = FLAT_PREFIX, .num = cfg->num};
    workload wi = {.prefix = IDX_PREFIX, .num = cfg->num};
    for (int r = 0; r < ROUNDS; r++) {
        int64_t from = cfg->num * r / ROUNDS, to = cfg->num * (r + 1) / ROUNDS;
        if (run_pipelined(plain, &wp, from, to, cfg->pipeline, &st[0]) < 0 ||
            run_pipelined(indexed, &wi, from, to, cfg->pipeline, &st[1]) < 0)
            return -1;
    }
    return 0;
}

/* Removes what a run against a server given by --port left behind. */
static void cleanup_shared(server *s, int64_t num)
{
    for (int i = 0; i < NINDEXES; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "IDX.DROP %s", index_names[i]);
        command_ok(s, cmd, 1);
    }
    for (int p = 0; p < 2; p++) {
        for (int64_t id = 1; id <= num; id++) {
            char key[64];
            snprintf(key, sizeof key, "%s%" PRId64, p ? IDX_PREFIX : FLAT_PREFIX, id);
            const char *argv[] = {"UNLINK", key};
            redisAppendCommandArgv(s->c, 2, argv, NULL);
            if (id % 256 && id != num) continue;
            for (int64_t k = (id - 1) / 256 * 256 + 1; k <= id; k++) {
                redisReply *r = NULL;
                if (redisGetReply(s->c, (void **)&r) != REDIS_OK) return;
                freeReplyObject(r);
            }
        }
    }
}

static void print_row(const char *name, const phase_stat *st, int with_results)
{
    double cpu_us = st->ops ? st->cpu_ns / 1e3 / st->ops : 0;
    printf("%-34s %9" PRIu64 " %11.0f %12.2f", name, st->ops, st->secs > 0 ? st->ops / st->secs : 0,
           cpu_us);
    if (with_results) printf(" %9.1f", st->ops ? (double)st->results / st->ops : 0);
    printf("\n");
}

static int phase_ranges(server *s, const idx_cfg *cfg)
{
    static const char *const names[3] = {"country_status EQ", "created_at MIN/MAX",
                                         "reputation top"};
    for (int kind = 0; kind < 3; kind++) {
        for (int hashes = 0; hashes < 2; hashes++) {
            workload w = {.kind = kind, .hashes = hashes, .num = cfg->num, .seed = 77 + kind};
            phase_stat st = {0};
            if (run_pipelined(s, &w, 0, cfg->queries, cfg->pipeline, &st) < 0) return -1;
            char name[64];
            snprintf(name, sizeof name, "idx.range %s %s", names[kind], hashes ? "HASHES" : "keys");
            print_row(name, &st, 1);
        }
    }
    return 0;
}

/* ---- Main -------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: strata-bench index [--num N] [--queries Q] [--pipeline P] [--port P]\n"
                    "  without --port, starts two strata-servers (STRATA_SERVER or next to\n"
                    "  strata-bench) on free ports with temporary directories\n");
}

static int parse_int(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, idx_cfg *cfg)
{
    cfg->num = 100000;
    cfg->queries = -1;
    cfg->pipeline = 64;
    cfg->port = 0;
    for (int i = 1; i < argc; i += 2) {
        long v;
        if (i + 1 == argc || parse_int(argv[i + 1], 1, 100000000, &v) < 0) {
            fprintf(stderr, "strata-bench index: %s needs a positive number\n", argv[i]);
            return -1;
        }
        if (!strcmp(argv[i], "--num"))
            cfg->num = v;
        else if (!strcmp(argv[i], "--queries"))
            cfg->queries = (int)v;
        else if (!strcmp(argv[i], "--pipeline") && v <= 100000)
            cfg->pipeline = (int)v;
        else if (!strcmp(argv[i], "--port") && v <= 65535)
            cfg->port = (int)v;
        else {
            fprintf(stderr, "strata-bench index: bad option %s %s\n", argv[i], argv[i + 1]);
            return -1;
        }
    }
    if (cfg->queries < 0)
        cfg->queries = cfg->num / 10 < 100 ? 100 : cfg->num / 10 > 5000 ? 5000 : cfg->num / 10;
    return 0;
}

/* Connects to the servers: two of our own, or one given by --port (then
 * plain and indexed are the same server). */
static int open_servers(const idx_cfg *cfg, server srv[2])
{
    memset(srv, 0, 2 * sizeof *srv);
    if (cfg->port) {
        srv[0].port = cfg->port;
        if (server_connect(&srv[0]) < 0) {
            fprintf(stderr, "strata-bench index: no server answers on port %d\n", cfg->port);
            return -1;
        }
        srv[0].pid = server_pid_from_info(srv[0].c);
        return 0;
    }
    char bin[PATH_MAX];
    if (server_path(bin, sizeof bin) < 0) return -1;
    for (int i = 0; i < 2; i++)
        if (server_start(&srv[i], i, bin) < 0) return -1;
    return 0;
}

static int run_all(const idx_cfg *cfg, server *plain, server *indexed)
{
    if (setup_indexes(indexed) < 0) return -1;
    phase_stat hs[2] = {{0}};
    if (phase_hset(plain, indexed, cfg, hs) < 0) return -1;
    printf("%-34s %9s %11s %12s %9s\n", "phase", "ops", "ops/s", "cpu us/op", "results");
    print_row("hset plain (no index)", &hs[0], 0);
    print_row("hset indexed (4 indexes)", &hs[1], 0);
    if (phase_ranges(indexed, cfg) < 0) return -1;
    double cpu_p = hs[0].ops ? (double)hs[0].cpu_ns / hs[0].ops : 0;
    double cpu_i = hs[1].ops ? (double)hs[1].cpu_ns / hs[1].ops : 0;
    if (cpu_p == 0)
        printf("(server CPU time unknown: no /proc entry for the server's pid)\n");
    else
        printf("(goal: index maintenance at most 2x a plain HSET in server CPU)\n");
    double tp_p = hs[0].secs > 0 ? hs[0].ops / hs[0].secs : 0;
    double tp_i = hs[1].secs > 0 ? hs[1].ops / hs[1].secs : 0;
    printf("indexed/plain ratios: cpu_per_write=%.2f throughput=%.2f\n",
           cpu_p > 0 ? cpu_i / cpu_p : 0, tp_p > 0 ? tp_i / tp_p : 0);
    return 0;
}

int bench_index_main(int argc, char **argv)
{
    idx_cfg cfg;
    if (parse_args(argc, argv, &cfg) < 0) {
        usage();
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    bench_catch_fatal_signals(on_fatal_signal);
    server srv[2];
    int rc = open_servers(&cfg, srv);
    server *plain = &srv[0], *indexed = cfg.port ? &srv[0] : &srv[1];
    if (rc == 0) {
        printf("strata-bench index: num=%" PRId64 " queries=%d pipeline=%d %s\n", cfg.num,
               cfg.queries, cfg.pipeline,
               cfg.port ? "one server (given), two prefixes"
                        : "two strata-servers (appendfsync everysec)");
        fflush(stdout);
        rc = run_all(&cfg, plain, indexed);
    }
    if (cfg.port && srv[0].c) cleanup_shared(&srv[0], cfg.num);
    /* Stopping waits for the servers; the handler would race with that. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    server_stop(&srv[0]);
    server_stop(&srv[1]);
    return rc < 0 ? 1 : 0;
}
