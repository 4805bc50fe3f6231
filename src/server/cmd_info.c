/*
 * cmd_info.c -- INFO: one function per section (server, clients, memory,
 * persistence, stats, replication, cpu, engine, faults, index, keyspace
 * and the command, error and latency statistics of cmdstats.c), the table
 * that names them and which ones "default", "all" and "everything" take,
 * and the text buffer (sbuf) sections print into. Kept apart from the
 * other server commands because a new counter touches only this file.
 * Field names and formats follow Redis 7 where the figure means the same
 * thing; strata's own figures (engine, index, faults) are named after the
 * engine's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "index/index.h"
#include "server/ae.h"
#include "server/backup.h"
#include "server/config.h"
#include "server/pubsub.h"
#include "server/script.h"
#include "server/repl.h"
#include "server/server.h"

#define REDIS_COMPAT_VERSION "7.2.0"

void sb_printf(sbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        b->cap = b->cap * 2 + (size_t)(n > 0 ? n : 0);
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
}

void sb_put(sbuf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) abort();
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

/* Starts a section; sections are separated by a blank line, as Redis. */
void sb_section(sbuf *b, const char *title)
{
    if (b->len) sb_printf(b, "\r\n");
    sb_printf(b, "# %s\r\n", title);
}

static void human_bytes(char *out, size_t cap, double n)
{
    const char *u = "BKMGT";
    int i = 0;
    while (n >= 1024 && i < 4)
        n /= 1024, i++;
    if (i == 0)
        snprintf(out, cap, "%.0fB", n);
    else
        snprintf(out, cap, "%.2f%c", n, u[i]);
}

static void info_server(sbuf *b)
{
    struct utsname u;
    uname(&u);
    int64_t now = ae_mstime();
    sb_section(b, "Server");
    sb_printf(
        b,
        "redis_version:%s\r\nstrata_version:%s\r\nredis_mode:standalone\r\n"
        "os:%s %s %s\r\narch_bits:%d\r\nmultiplexing_api:epoll\r\n"
        "gcc_version:%d.%d.%d\r\nprocess_id:%d\r\nrun_id:%s\r\ntcp_port:%d\r\n"
        "server_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\n"
        "hz:%d\r\nexecutable:%s\r\nconfig_file:%s\r\n",
        REDIS_COMPAT_VERSION, STRATA_VERSION, u.sysname, u.release, u.machine,
        (int)sizeof(void *) * 8, __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__, (int)getpid(),
        server.runid, cfg.port, (long long)now * 1000, (long long)(now - server.start_ms) / 1000,
        (long long)(now - server.start_ms) / 86400000, cfg.hz,
        server.executable ? server.executable : "", server.config_file ? server.config_file : "");
}

static void info_memory(sbuf *b)
{
    eng_stats st;
    eng_get_stats(server.db, &st);
    uint64_t rss = server_used_memory();
    char h[32], hr[32];
    human_bytes(h, sizeof(h), (double)rss);
    human_bytes(hr, sizeof(hr), (double)rss);
    sb_section(b, "Memory");
    sb_printf(b,
              "used_memory:%llu\r\nused_memory_human:%s\r\nused_memory_rss:%llu\r\n"
              "used_memory_rss_human:%s\r\nmaxmemory:0\r\nmaxmemory_human:0B\r\n"
              "maxmemory_policy:noeviction\r\nmem_allocator:jemalloc\r\n"
              "engine_cache_capacity:%llu\r\nengine_cache_usage:%llu\r\n"
              "engine_memtable_bytes:%llu\r\n",
              (unsigned long long)rss, h, (unsigned long long)rss, hr,
              (unsigned long long)st.cache_capacity, (unsigned long long)st.cache_usage,
              (unsigned long long)st.memtable_bytes);
    char scripting[1024];
    script_info_memory(scripting, sizeof(scripting));
    sb_printf(b, "%s", scripting);
}

/* One kind of background work in INFO persistence: <name>_status ok|err,
 * since when it fails (unix seconds, 0), how many attempts failed, and the
 * last error (kept after a recovery). */
static void info_fault(sbuf *b, const char *name, const eng_fault_info *f)
{
    char err[256];
    snprintf(err, sizeof(err), "%s", f->error);
    for (char *p = err; *p; p++)
        if (*p == '\r' || *p == '\n') *p = ' ';
    sb_printf(b,
              "%s_status:%s\r\n%s_failing_since:%lld\r\n%s_failures:%llu\r\n"
              "%s_last_error:%s\r\n",
              name, f->failing ? "err" : "ok", name, (long long)(f->since_ms / 1000), name,
              (unsigned long long)f->failures, name, err);
}

/* Redis's aof_last_write_status for the log, and the engine's faults. */
static void info_faults(sbuf *b)
{
    eng_health h;
    eng_get_health(server.db, &h);
    sb_printf(b, "aof_last_write_status:%s\r\naof_last_bgrewrite_status:ok\r\n",
              h.log.failing ? "err" : "ok");
    info_fault(b, "log_write", &h.log);
    info_fault(b, "flush", &h.flush);
    info_fault(b, "compaction", &h.compaction);
    sb_printf(b,
              "writes_refused:%d\r\nlog_recoveries:%llu\r\nreplies_held:%d\r\n"
              "refused_writes:%llu\r\n",
              h.writes_refused, (unsigned long long)h.recoveries, server.replies_held,
              (unsigned long long)server.stat_refused_writes);
}

static void info_engine(sbuf *b)
{
    eng_stats st;
    eng_get_stats(server.db, &st);
    sb_section(b, "Engine");
#define F(x) sb_printf(b, #x ":%llu\r\n", (unsigned long long)st.x)
    F(memtable_bytes);
    F(immutable_memtables);
    F(log_bytes);
    F(bytes_written_user);
    F(bytes_written_log);
    F(bytes_written_flush);
    F(bytes_written_compaction);
    F(bytes_read_compaction);
    F(flushes);
    F(compactions);
    F(compactions_running);
    F(compaction_pending);
    F(cache_capacity);
    F(cache_usage);
    F(cache_hits);
    F(cache_misses);
    F(row_cache_capacity);
    F(row_cache_usage);
    F(row_cache_hits);
    F(row_cache_misses);
    F(bloom_useful);
    F(readahead_loads);
    F(readahead_cached);
    F(readahead_dropped);
    F(stall_slowdowns);
    F(stall_stops);
    F(stall_micros);
    F(last_sequence);
    F(log_syncs);
    F(background_errors);
#undef F
    /* Collection member iterator moves: what big-value reads cost. */
    sb_printf(b, "member_iter_steps:%llu\r\n", (unsigned long long)ks_member_steps(server.ks));
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        sb_printf(b, "level%d:files=%llu,bytes=%llu\r\n", l, (unsigned long long)st.level_files[l],
                  (unsigned long long)st.level_bytes[l]);
    double wa = st.bytes_written_user
                    ? (double)(st.bytes_written_flush + st.bytes_written_compaction) /
                          (double)st.bytes_written_user
                    : 0.0;
    sb_printf(b, "write_amplification:%.2f\r\ndisk_usage:%llu\r\ngroup_commits:%llu\r\n", wa,
              (unsigned long long)eng_disk_usage(server.db),
              (unsigned long long)server.stat_commits);
}

static void info_keyspace(sbuf *b)
{
    sb_section(b, "Keyspace");
    ks_ctx ctx = {server.ks, server.batch, 0, server_now_ms(), NULL};
    for (int db = 0; db < KS_DATABASES; db++) {
        ctx.db = dbmap_stored(db);
        uint64_t keys = ks_dbsize(&ctx);
        if (!keys) continue;
        sb_printf(b, "db%d:keys=%llu,expires=%llu,avg_ttl=0\r\n", db, (unsigned long long)keys,
                  (unsigned long long)ks_expires(&ctx));
    }
    ks_ctx_reset(&ctx);
}

static void info_clients(sbuf *b)
{
    size_t max_in = 0, max_out = 0;
    for (client *x = server.clients; x; x = x->priv->next) {
        if (x->priv->qcap > max_in) max_in = x->priv->qcap;
        if (x->priv->reply_bytes > max_out) max_out = x->priv->reply_bytes;
    }
    sb_section(b, "Clients");
    sb_printf(b,
              "connected_clients:%llu\r\ncluster_connections:0\r\nmaxclients:%d\r\n"
              "client_recent_max_input_buffer:%zu\r\nclient_recent_max_output_buffer:%zu\r\n"
              "blocked_clients:%llu\r\ntracking_clients:%llu\r\nclients_in_timeout_table:%llu\r\n",
              (unsigned long long)server.nclients, cfg.maxclients, max_in, max_out,
              (unsigned long long)(pause_blocked_clients() + block_count()),
              (unsigned long long)tracking_client_count(),
              (unsigned long long)(pause_blocked_clients() + block_timeout_count()));
}

static void info_persistence(sbuf *b)
{
    char fsync[16];
    config_get_value("appendfsync", fsync, sizeof(fsync));
    sb_section(b, "Persistence");
    sb_printf(b, "loading:0\r\n");
    bk_info(b);
    sb_printf(b, "aof_enabled:1\r\nappendfsync:%s\r\n", fsync);
    info_faults(b);
}

static void info_stats(sbuf *b)
{
    uint64_t tk, ti, tp;
    tracking_info_stats(&tk, &ti, &tp);
    sb_section(b, "Stats");
    sb_printf(
        b,
        "total_connections_received:%llu\r\n"
        "total_commands_processed:%llu\r\ninstantaneous_ops_per_sec:%llu\r\n"
        "total_net_input_bytes:%llu\r\ntotal_net_output_bytes:%llu\r\n"
        "rejected_connections:%llu\r\nexpired_keys:%llu\r\nevicted_keys:0\r\n"
        "evicted_clients:%llu\r\n"
        "pubsub_channels:%llu\r\npubsub_patterns:%llu\r\npubsubshard_channels:%llu\r\n"
        "total_error_replies:%llu\r\ngroup_commits:%llu\r\nwrite_errors:%llu\r\n"
        "migrate_cached_sockets:%ld\r\n"
        "tracking_total_keys:%llu\r\ntracking_total_items:%llu\r\ntracking_total_prefixes:%llu\r\n",
        (unsigned long long)server.stat_connections, (unsigned long long)server.stat_commands,
        (unsigned long long)server.stat_ops_per_sec, (unsigned long long)server.stat_net_in,
        (unsigned long long)server.stat_net_out, (unsigned long long)server.stat_rejected_conn,
        (unsigned long long)server.stat_expired,
        /* clients closed for reply-memory-limit (Redis 7.0's name for closings by its
         * total client memory limit) */
        (unsigned long long)server.stat_evicted_clients,
        (unsigned long long)pubsub_channel_count(0), (unsigned long long)pubsub_pattern_count(),
        (unsigned long long)pubsub_channel_count(1), (unsigned long long)server.stat_errors,
        (unsigned long long)server.stat_commits, (unsigned long long)server.stat_write_errors,
        migrate_cached_sockets(), (unsigned long long)tk, (unsigned long long)ti,
        (unsigned long long)tp);
    repl_info_stats(b);
}

static void info_replication(sbuf *b)
{
    repl_info(b);
}

static void info_cpu(sbuf *b)
{
    struct rusage self, children, thread;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    getrusage(RUSAGE_THREAD, &thread);
    sb_section(b, "CPU");
#define TV(t) (long)(t).tv_sec, (long)(t).tv_usec
    sb_printf(b,
              "used_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n"
              "used_cpu_sys_children:%ld.%06ld\r\nused_cpu_user_children:%ld.%06ld\r\n"
              "used_cpu_sys_main_thread:%ld.%06ld\r\nused_cpu_user_main_thread:%ld.%06ld\r\n",
              TV(self.ru_stime), TV(self.ru_utime), TV(children.ru_stime), TV(children.ru_utime),
              TV(thread.ru_stime), TV(thread.ru_utime));
#undef TV
}

static void info_index(sbuf *b)
{
    char buf[16384];
    size_t n = idx_info(buf, sizeof(buf));
    if (n > sizeof(buf) - 1) n = sizeof(buf) - 1;
    buf[n] = '\0';
    if (n && strncmp(buf, "# ", 2) != 0)
        sb_section(b, "Index");
    else if (n && b->len)
        sb_printf(b, "\r\n");
    sb_printf(b, "%s", buf);
    if (n && buf[n - 1] != '\n') sb_printf(b, "\r\n");
}

/* The sections, in the order Redis prints them (strata's own last). */
static const struct info_section {
    const char *name;
    int in_default; /* INFO, INFO default; INFO all adds the others */
    void (*fn)(sbuf *b);
} info_sections[] = {
    {"server", 1, info_server},
    {"clients", 1, info_clients},
    {"memory", 1, info_memory},
    {"persistence", 1, info_persistence},
    {"stats", 1, info_stats},
    {"replication", 1, info_replication},
    {"cpu", 1, info_cpu},
    {"commandstats", 0, stats_info_commandstats},
    {"errorstats", 1, stats_info_errorstats},
    {"latencystats", 0, stats_info_latencystats},
    {"keyspace", 1, info_keyspace},
    {"engine", 1, info_engine},
    {"index", 1, info_index},
};
#define NSECTIONS (sizeof(info_sections) / sizeof(info_sections[0]))

/* INFO [section ...]: as Redis's genInfoSectionDict, "default" is the
 * default set, "all" and "everything" every section, anything else a
 * section name (case-insensitive); each section is printed once. */
void cmd_info(client *c)
{
    int want[NSECTIONS] = {0};
    for (size_t k = 0; k < NSECTIONS; k++)
        want[k] = c->argc == 1 && info_sections[k].in_default;
    for (int i = 1; i < c->argc; i++) {
        const char *s = c->argv[i].ptr;
        int all = !strcasecmp(s, "all") || !strcasecmp(s, "everything");
        int def = !strcasecmp(s, "default");
        for (size_t k = 0; k < NSECTIONS; k++)
            if (all || (def && info_sections[k].in_default) ||
                !strcasecmp(s, info_sections[k].name))
                want[k] = 1;
    }
    sbuf b = {malloc(4096), 0, 4096};
    b.p[0] = '\0';
    for (size_t k = 0; k < NSECTIONS; k++)
        if (want[k]) info_sections[k].fn(&b);
    add_reply_verbatim(c, b.p, b.len, "txt");
    free(b.p);
}
