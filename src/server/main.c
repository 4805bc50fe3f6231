/*
 * main.c -- strata-server [config-file] [--name value ...]
 *
 * Reads the settings (file, then command-line overrides, as redis-server),
 * daemonizes if asked, opens the engine in `dir` (replaying its log), the
 * keyspace and the index catalog, listens, and runs the event loop until
 * SIGTERM/SIGINT or SHUTDOWN; then closes the engine, which syncs the log,
 * so the next start finds everything acknowledged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index/index.h"
#include "server/acl.h"
#include "server/ae.h"
#include "server/config.h"
#include "server/repl.h"
#include "server/server.h"

static void usage(void)
{
    fprintf(stderr, "Usage: strata-server [/path/to/strata.conf] [options]\n"
                    "       strata-server -v or --version\n"
                    "       strata-server -h or --help\n\n"
                    "Examples:\n"
                    "       strata-server conf/strata.conf --port 7000 --dir /tmp/strata\n"
                    "       strata-server --appendfsync always\n");
    exit(1);
}

/* Applies "--name v1 [v2 ...]" groups from argv[i..]. */
static void apply_overrides(int argc, char **argv, int i)
{
    while (i < argc) {
        if (strncmp(argv[i], "--", 2) != 0 || argv[i][2] == '\0') {
            fprintf(stderr, "Bad command-line argument '%s'\n", argv[i]);
            usage();
        }
        const char *name = argv[i] + 2;
        int j = i + 1;
        while (j < argc && strncmp(argv[j], "--", 2) != 0)
            j++;
        char *err = NULL;
        if (config_set(name, (const char *const *)argv + i + 1, j - i - 1, 1, &err) < 0) {
            fprintf(stderr, "*** FATAL CONFIG ERROR (strata) ***\n--%s: %s\n", name, err);
            exit(1);
        }
        i = j;
    }
}

/* Secrets must not show in ps: with set-proc-title (the default) the
 * whole command line becomes "strata-server <bind>:<port>", as Redis's
 * title; without it the values of the secret options are blanked in
 * place. Linux shows the argv area as /proc/<pid>/cmdline, so both
 * rewrite that memory (the settings hold copies). */
static void hide_command_line(int argc, char **argv)
{
    if (argc < 1) return;
    char *start = argv[0], *end = argv[0] + strlen(argv[0]) + 1;
    for (int i = 1; i < argc && argv[i] == end; i++)
        end = argv[i] + strlen(argv[i]) + 1; /* the contiguous area only */
    if (cfg.set_proc_title) {
        char title[256];
        snprintf(title, sizeof(title), "strata-server %s:%d", cfg.bind, cfg.port);
        size_t room = (size_t)(end - start), n = strlen(title);
        if (n >= room) n = room - 1;
        memcpy(start, title, n);
        memset(start + n, 0, room - n);
        return;
    }
    static const char *const secret[] = {"--requirepass", "--masterauth", "--tls-key-file-pass",
                                         "--tls-client-key-file-pass", NULL};
    for (int i = 1; i + 1 < argc; i++)
        for (int k = 0; secret[k]; k++)
            if (!strcasecmp(argv[i], secret[k])) memset(argv[i + 1], '*', strlen(argv[i + 1]));
}

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST) return -1;
    return 0;
}

static void daemonize(void)
{
    pid_t pid = fork();
    if (pid < 0) exit(1);
    if (pid > 0) exit(0);
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO) close(fd);
    }
}

static void write_pidfile(void)
{
    if (!cfg.pidfile || !cfg.pidfile[0]) return;
    FILE *f = fopen(cfg.pidfile, "w");
    if (!f) {
        server_log(LL_WARNING, "Failed to write PID file %s: %s", cfg.pidfile, strerror(errno));
        return;
    }
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
}

/* The keyspace reports each changed key, or key NULL for a whole db. */
/* Raises the descriptor limit to fit maxclients (plus room for the engine's
 * files and listeners), or lowers maxclients to what the limit allows, as
 * Redis does. */
static void adjust_open_files_limit(void)
{
    const rlim_t reserved = 128;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return;
    rlim_t want = (rlim_t)cfg.maxclients + reserved;
    if (rl.rlim_cur >= want) return;
    rlim_t target = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want ? want : rl.rlim_max;
    struct rlimit nl = {target, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &nl) < 0) target = rl.rlim_cur;
    if (target < want) {
        int allowed = target > reserved ? (int)(target - reserved) : 1;
        server_log(LL_WARNING,
                   "Open files limit %llu allows only %d clients, not the %d of "
                   "maxclients; maxclients is now %d",
                   (unsigned long long)target, allowed, cfg.maxclients, allowed);
        cfg.maxclients = allowed;
    }
}

/* A whole-db flush (key NULL) is not passed on: FLUSHDB/FLUSHALL dirty
 * only the watchers of keys that existed (server_watch_flush_begin). */
static void touch_hook(void *tctx, int db, const char *key, size_t klen)
{
    repl_note_touched(db, key, klen); /* the stored db: replicas map it (DBM2) */
    db = dbmap_logical(db);           /* DBM2 */
    if (key) {
        server.cmd_touches++;
        tracking_key_changed(key, klen);
        server_touch_key(db, key, klen);
        block_signal_key(db, key, klen);
    } else {
        block_signal_db(db);
    }
}

static void log_quarantined(void *arg, int db, const char *name, const char *why)
{
    server_log(LL_WARNING,
               "Index '%s' of db %d is quarantined: its stored definition cannot be read (%s). "
               "The data is served; the index is not maintained or queryable until IDX.DROP "
               "removes it (INFO index lists it).",
               name, dbmap_logical(db), why);
}

int server_open_storage(void)
{
    eng_options o;
    eng_options_init(&o);
    o.cache_size = (size_t)cfg.cache_size;
    o.row_cache_size = (size_t)cfg.row_cache_size;
    o.write_buffer_size = (size_t)cfg.write_buffer_size;
    o.compression_level = cfg.compression;
    o.bottom_compression_level = cfg.bottom_compression;
    o.flush_compression_level = cfg.flush_compression;
    o.dict_size = (size_t)cfg.compression_dict_size;
    o.sync_mode = cfg.appendfsync;
    /* Every engine read, iterator and snapshot is the command thread's;
     * the backup thread only checkpoints (inplace_updates' contract). */
    o.inplace_updates = cfg.inplace_updates;
    o.readahead = cfg.readahead;
    o.compaction_filter = ks_compaction_filter;
    o.compaction_filter_ctx = NULL;
    o.log_fn = server_log_engine;
    o.create_if_missing = 1;
    o.log_recovery = cfg.log_load_corrupt ? ENG_LOG_RECOVERY_TRUNCATE : ENG_LOG_RECOVERY_STRICT;
    if (mkdir_p(cfg.dir) < 0) {
        server_log(LL_WARNING, "Can't create the data directory %s: %s", cfg.dir, strerror(errno));
        return -1;
    }
    int64_t t0 = ae_mstime();
    eng_status st = eng_open(cfg.dir, &o, &server.db);
    if (st != ENG_OK) {
        server_log(LL_WARNING, "Can't open the database in %s: %s (%s)", cfg.dir,
                   eng_status_str(st), eng_last_error());
        if (st == ENG_CORRUPTION)
            server_log(LL_WARNING,
                       "Nothing was changed. Run 'strata-check %s' to see what is "
                       "damaged, and see README.md, 'When the server refuses to "
                       "start'.",
                       cfg.dir);
        return -1;
    }
    if (ks_open(server.db, &server.ks) != KS_OK) {
        server_log(LL_WARNING, "Can't open the keyspace: %s", eng_last_error());
        return -1;
    }
    config_apply_keyspace(); /* packing limits set by the config file */
    if (dbmap_load() != 0) return -1;
    char *err = NULL;
    if (idx_init(server.ks, &err) != KS_OK) {
        server_log(LL_WARNING, "Can't load the index catalog: %s", err ? err : "?");
        free(err);
        return -1;
    }
    idx_quarantine_each(log_quarantined, NULL);
    ks_set_touch_hook(server.ks, touch_hook, NULL);
    notify_init(server.ks);
    server_log(LL_NOTICE, "DB loaded from %s: %.3f seconds", cfg.dir,
               (double)(ae_mstime() - t0) / 1000.0);
    return 0;
}

int main(int argc, char **argv)
{
    static char exe[PATH_MAX], conf[PATH_MAX];
    acl_init(); /* the default user, before settings (requirepass, user lines) touch it */
    config_init_defaults();
    int i = 1;
    if (argc >= 2 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("strata-server v=0.1.0 (Redis protocol 7.2 compatible)\n");
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) usage();
    if (argc >= 2 && strncmp(argv[1], "--", 2) != 0) {
        char *err = NULL;
        if (config_load_file(argv[1], &err) < 0) {
            fprintf(stderr, "*** FATAL CONFIG FILE ERROR (strata) ***\n%s\n", err);
            return 1;
        }
        if (realpath(argv[1], conf)) server.config_file = conf;
        i = 2;
    }
    apply_overrides(argc, argv, i);
    acl_set_default_password(cfg.requirepass);
    char *acl_err = NULL;
    if (acl_load_at_startup(&acl_err) < 0) {
        fprintf(stderr, "*** FATAL CONFIG ERROR (strata) ***\n%s\n", acl_err ? acl_err : "?");
        return 1;
    }
    if (realpath("/proc/self/exe", exe)) server.executable = exe;
    hide_command_line(argc, argv);
    if (cfg.daemonize) daemonize();
    server_log(LL_NOTICE, "strata 0.1.0 starting, pid=%d, port=%d, dir=%s, appendfsync=%s",
               (int)getpid(), cfg.port, cfg.dir,
               cfg.appendfsync == ENG_SYNC_ALWAYS ? "always"
               : cfg.appendfsync == ENG_SYNC_NO   ? "no"
                                                  : "everysec");
    signal(SIGPIPE, SIG_IGN);
    adjust_open_files_limit();
    server_set_jemalloc_bg_thread(cfg.jemalloc_bg_thread);
    if (server_open_storage() < 0) return 1;
    if (server_init() < 0) {
        server_log(LL_WARNING, "Can't listen on %s:%d", cfg.bind, cfg.port);
        return 1;
    }
    repl_init();
    write_pidfile();
    server_log(LL_NOTICE, "Ready to accept connections tcp");
    server_run();
    server_shutdown();
    return server.exit_code;
}
