/*
 * config.c -- settings table, config file reader, CONFIG GET/SET; see
 * config.h for the file format.
 *
 * Every setting is one row of config_table: name, type, where its value
 * lives, default, bounds, whether it can change at runtime, and an apply
 * hook for settings whose change must reach another part of the server
 * (appendfsync -> the engine, port -> new listening sockets). Immutable
 * settings (bind, dir, databases, cache-size, ...) are read once at startup.
 */
#include "server/config.h"
#include "server/repl.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/acl.h"
#include "server/resp_parser.h"
#include "server/server.h"
#include "server/tls.h"

server_config cfg;

enum { T_BOOL, T_INT, T_MEM, T_STR, T_ENUM, T_LL, T_SPECIAL, T_OBUF };
/* F_REDIS_IMMUTABLE: immutable in Redis too, where CONFIG SET refuses even
 * the current value; other immutable settings (those Redis can change at
 * run time, and strata's own) accept their current value as a no-op. */
/* F_HIDDEN: left out of CONFIG GET patterns, shown when named exactly
 * (Redis's HIDDEN_CONFIG, test hooks). F_PERCENT: a T_MEM that also takes
 * "N%", stored as -N (Redis's PERCENT_CONFIG, bounded by min = -100). */
enum {
    F_IMMUTABLE = 1,
    F_SENSITIVE = 2,
    F_REDIS_IMMUTABLE = 4,
    F_HIDDEN = 8,
    F_PERCENT = 16,
    F_PROTECTED = 32 /* enable-protected-configs decides */
};

typedef struct config_enum {
    const char *name;
    int val;
} config_enum;

static const config_enum fsync_enum[] = {
    {"everysec", ENG_SYNC_EVERYSEC}, {"always", ENG_SYNC_ALWAYS}, {"no", ENG_SYNC_NO}, {NULL, 0}};
static const config_enum loglevel_enum[] = {{"debug", LL_DEBUG},
                                            {"verbose", LL_VERBOSE},
                                            {"notice", LL_NOTICE},
                                            {"warning", LL_WARNING},
                                            {NULL, 0}};

static const config_enum supervised_mode_enum[] = {
    {"upstart", 0}, {"systemd", 1}, {"auto", 2}, {"no", 3}, {NULL, 0}};
static const config_enum syslog_facility_enum[] = {
    {"user", 0},   {"local0", 1}, {"local1", 2}, {"local2", 3}, {"local3", 4},
    {"local4", 5}, {"local5", 6}, {"local6", 7}, {"local7", 8}, {NULL, 0}};
static const config_enum repl_diskless_load_enum[] = {
    {"disabled", 0}, {"on-empty-db", 1}, {"swapdb", 2}, {NULL, 0}};
static const config_enum maxmemory_policy_enum[] = {
    {"volatile-lru", 0},   {"volatile-lfu", 1}, {"volatile-random", 2},
    {"volatile-ttl", 3},   {"allkeys-lru", 4},  {"allkeys-lfu", 5},
    {"allkeys-random", 6}, {"noeviction", 7},   {NULL, 0}};
static const config_enum oom_score_adj_enum[] = {
    {"no", 0}, {"yes", 1}, {"relative", 1}, {"absolute", 2}, {NULL, 0}};
static const config_enum acl_pubsub_default_enum[] = {
    {"allchannels", 1}, {"resetchannels", 0}, {NULL, 0}};
static const config_enum sanitize_dump_payload_enum[] = {
    {"no", 0}, {"yes", 1}, {"clients", 2}, {NULL, 0}};
static const config_enum protected_action_enum[] = {{"no", 0}, {"yes", 1}, {"local", 2}, {NULL, 0}};
static const config_enum cluster_preferred_endpoint_type_enum[] = {
    {"ip", 0}, {"hostname", 1}, {"unknown-endpoint", 2}, {NULL, 0}};
static const config_enum propagation_error_behavior_enum[] = {
    {"ignore", 0}, {"panic", 1}, {"panic-on-replicas", 2}, {NULL, 0}};
static const config_enum shutdown_on_sig_enum[] = {{"default", 0}, {"save", 1},  {"nosave", 2},
                                                   {"now", 3},     {"force", 4}, {NULL, 0}};
static const config_enum tls_auth_clients_enum[] = {
    {"no", 0}, {"yes", 1}, {"optional", 2}, {NULL, 0}};

/* Storage of the Redis settings strata has a counterpart for (packing and
 * OBJECT ENCODING limits, the access-time policy); the other Redis names
 * keep their value in compound literals in their rows and change nothing. */
static struct {
    long long hash_max_listpack_entries, hash_max_listpack_value, set_max_intset_entries;
    long long zset_max_listpack_entries, zset_max_listpack_value, maxmemory;
    long long stream_node_max_entries, stream_node_max_bytes;
    int list_max_listpack_size, list_compress_depth, maxmemory_policy, lfu_log_factor,
        lfu_decay_time;
} compat;

typedef struct config_row {
    const char *name;
    int type, flags;
    void *ptr;
    const char *def;
    long long min, max;
    const config_enum *enums;
    void (*apply)(void);
    /* T_SPECIAL: parse and store argv (the words of the value); 0 or -1
     * with *err set (a static string), leaving the setting unchanged.
     * Other types: applies a new run-time value before it is stored, and
     * may refuse it the same way (Redis's apply functions that fail). */
    int (*set)(const char *const *argv, int argc, const char **err);
    void (*get)(char *buf, size_t cap);
} config_row;

static int set_port(const char *const *argv, int argc, const char **err)
{
    (void)argc;
    if (server_listen_port(atoi(argv[0])) < 0)
        return *err = "Unable to listen on this port. Check server logs.", -1;
    return 0;
}

static void apply_appendfsync(void)
{
    if (server.db) eng_set_sync_mode(server.db, cfg.appendfsync);
}

/* ---- Special settings: several words, their own syntax -------------------- */

static int set_notify(const char *const *argv, int argc, const char **err)
{
    int flags = argc == 1 ? notify_flags_parse(argv[0]) : -1;
    if (flags < 0) return *err = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.", -1;
    notify_keyspace_flags = flags;
    return 0;
}

/* replicaof <host> <port> | no one: read at start (repl_init starts the
 * link); CONFIG REWRITE writes what REPLICAOF set. */
static int set_replicaof(const char *const *argv, int argc, const char **err)
{
    if (argc == 1 && !argv[0][0]) return repl_config_master(NULL, 0), 0;
    if (argc != 2) return *err = "wrong number of arguments", -1;
    if (!strcasecmp(argv[0], "no") && !strcasecmp(argv[1], "one"))
        return repl_config_master(NULL, 0), 0;
    char *end;
    long p = strtol(argv[1], &end, 10);
    if (*end || p <= 0 || p > 65535) return *err = "Invalid master port", -1;
    repl_config_master(argv[0], (int)p);
    return 0;
}

static void get_replicaof(char *buf, size_t cap)
{
    if (repl.is_replica)
        snprintf(buf, cap, "%s %d", repl.master_host, repl.master_port);
    else
        snprintf(buf, cap, "%s", "");
}

static void get_notify(char *buf, size_t cap)
{
    notify_flags_format(notify_keyspace_flags, buf, cap);
}

static int set_percentiles(const char *const *argv, int argc, const char **err)
{
    double v[CONFIG_MAX_PERCENTILES];
    int n = (argc == 1 && argv[0][0] == '\0') ? 0 : argc;
    if (n > CONFIG_MAX_PERCENTILES)
        return *err = "Invalid latency-tracking-info-percentiles parameters", -1;
    for (int j = 0; j < n; j++) {
        char *end;
        errno = 0;
        v[j] = strtod(argv[j], &end);
        if (!argv[j][0] || *end || errno || isspace((unsigned char)argv[j][0]) || isnan(v[j]))
            return *err = "Invalid latency-tracking-info-percentiles parameters", -1;
        if (v[j] > 100.0 || v[j] < 0.0)
            return *err = "latency-tracking-info-percentiles parameters should sit between "
                          "[0.0,100.0]",
                   -1;
    }
    memcpy(cfg.latency_percentiles, v, sizeof(double) * (size_t)n);
    cfg.latency_percentiles_n = n;
    return 0;
}

/* "%f" without trailing zeros, as Redis prints percentiles. */
static size_t fmt_trimmed(char *buf, size_t cap, double d)
{
    int n = snprintf(buf, cap, "%f", d);
    if (n < 0 || (size_t)n >= cap) return 0;
    while (n > 0 && buf[n - 1] == '0')
        n--;
    if (n > 0 && buf[n - 1] == '.') n--;
    buf[n] = '\0';
    return (size_t)n;
}

static void get_percentiles(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int j = 0; j < cfg.latency_percentiles_n && n + 64 < cap; j++) {
        if (j) buf[n++] = ' ';
        n += fmt_trimmed(buf + n, cap - n, cfg.latency_percentiles[j]);
    }
    buf[n] = '\0';
}

static void apply_jemalloc_bg_thread(void)
{
    server_set_jemalloc_bg_thread(cfg.jemalloc_bg_thread);
}

static void apply_slowlog_len(void)
{
    slowlog_apply_max_len();
}

void config_apply_keyspace(void)
{
    ks_limits l = {compat.hash_max_listpack_entries, compat.hash_max_listpack_value,
                   compat.set_max_intset_entries,    compat.zset_max_listpack_entries,
                   compat.zset_max_listpack_value,   compat.list_max_listpack_size,
                   compat.list_compress_depth,       compat.stream_node_max_entries,
                   compat.stream_node_max_bytes};
    if (server_keyspace()) ks_set_limits(server_keyspace(), &l);
    int lfu = compat.maxmemory_policy == 1 || compat.maxmemory_policy == 5; /* *-lfu */
    key_access_config(lfu, compat.lfu_log_factor, compat.lfu_decay_time);
}

static void apply_keyspace(void)
{
    config_apply_keyspace();
}

static void apply_requirepass(void)
{
    acl_set_default_password(cfg.requirepass);
}

/* TLS settings take effect for new connections when CONFIG SET changes
 * one (certificates rotate without a restart). */
static void apply_tls(void)
{
    char *err = NULL;
    if (tls_configure(&err) < 0) {
        server_log(LL_WARNING, "Failed to configure TLS: %s", err ? err : "?");
        free(err);
    }
}

static void apply_tls_port(void)
{
    apply_tls();
    tls_listen_update();
}

static const config_row config_table[] = {
    {"bind", T_STR, F_IMMUTABLE, &cfg.bind, "127.0.0.1", 0, 0, NULL, NULL},
    {"port", T_INT, 0, &cfg.port, "6379", 0, 65535, NULL, NULL, set_port},
    {"dir", T_STR, F_IMMUTABLE | F_PROTECTED, &cfg.dir, "./data", 0, 0, NULL, NULL},
    {"appendfsync", T_ENUM, 0, &cfg.appendfsync, "everysec", 0, 0, fsync_enum, apply_appendfsync},
    {"requirepass", T_STR, F_SENSITIVE, &cfg.requirepass, "", 0, 0, NULL, apply_requirepass},
    {"maxclients", T_INT, 0, &cfg.maxclients, "10000", 1, INT_MAX, NULL, NULL},
    {"timeout", T_INT, 0, &cfg.timeout, "0", 0, INT_MAX, NULL, NULL},
    {"tcp-keepalive", T_INT, 0, &cfg.tcp_keepalive, "300", 0, INT_MAX, NULL, NULL},
    {"tcp-backlog", T_INT, F_IMMUTABLE | F_REDIS_IMMUTABLE, &cfg.tcp_backlog, "511", 0, INT_MAX,
     NULL, NULL},
    {"cache-size", T_MEM, F_IMMUTABLE, &cfg.cache_size, "192mb", 0, LLONG_MAX, NULL, NULL},
    {"row-cache-size", T_MEM, F_IMMUTABLE, &cfg.row_cache_size, "64mb", 0, LLONG_MAX, NULL, NULL},
    {"write-buffer-size", T_MEM, F_IMMUTABLE, &cfg.write_buffer_size, "64mb", 64 * 1024, LLONG_MAX,
     NULL, NULL},
    {"compression", T_INT, F_IMMUTABLE, &cfg.compression, "1", 0, 22, NULL, NULL},
    {"bottom-compression", T_INT, F_IMMUTABLE, &cfg.bottom_compression, "6", 0, 22, NULL, NULL},
    {"flush-compression", T_INT, F_IMMUTABLE, &cfg.flush_compression, "1", -100, 22, NULL, NULL},
    {"compression-dict-size", T_MEM, F_IMMUTABLE, &cfg.compression_dict_size, "8kb", 0, 1024 * 1024,
     NULL, NULL},
    {"log-load-corrupt", T_BOOL, F_IMMUTABLE, &cfg.log_load_corrupt, "no", 0, 0, NULL, NULL},
    {"loglevel", T_ENUM, 0, &cfg.loglevel, "notice", 0, 0, loglevel_enum, NULL},
    {"logfile", T_STR, F_IMMUTABLE | F_REDIS_IMMUTABLE, &cfg.logfile, "", 0, 0, NULL, NULL},
    {"pidfile", T_STR, F_IMMUTABLE | F_REDIS_IMMUTABLE, &cfg.pidfile, "", 0, 0, NULL, NULL},
    {"daemonize", T_BOOL, F_IMMUTABLE | F_REDIS_IMMUTABLE, &cfg.daemonize, "no", 0, 0, NULL, NULL},
    {"hz", T_INT, 0, &cfg.hz, "10", 1, 500, NULL, NULL},
    {"proto-max-bulk-len", T_MEM, 0, &cfg.proto_max_bulk_len, "512mb", 1024 * 1024, LLONG_MAX, NULL,
     NULL},
    {"client-query-buffer-limit", T_MEM, 0, &cfg.client_query_buffer_limit, "1gb", 1024 * 1024,
     LLONG_MAX, NULL, NULL},
    {"databases", T_INT, F_IMMUTABLE | F_REDIS_IMMUTABLE, &cfg.databases, "16", 16, 16, NULL, NULL},
    /* lua-time-limit is Redis's older name of the same setting */
    {"busy-reply-threshold", T_INT, 0, &cfg.busy_reply_threshold, "5000", 0, INT_MAX, NULL, NULL},
    {"lua-time-limit", T_INT, 0, &cfg.busy_reply_threshold, "5000", 0, INT_MAX, NULL, NULL},
    {"hll-sparse-max-bytes", T_MEM, 0, &cfg.hll_sparse_max_bytes, "3000", 0, LLONG_MAX, NULL, NULL},
    {"client-output-buffer-limit", T_OBUF, 0, &cfg.obuf_limits,
     "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60", 0, 0, NULL, NULL},
    {"reply-memory-limit", T_MEM, 0, &cfg.reply_memory_limit, "1gb", 0, LLONG_MAX, NULL, NULL},
    /* Introspection, notifications and pub/sub. */
    {"notify-keyspace-events", T_SPECIAL, 0, NULL, "", 0, 0, NULL, NULL, set_notify, get_notify},
    {"slowlog-log-slower-than", T_LL, 0, &cfg.slowlog_log_slower_than, "10000", -1, LLONG_MAX, NULL,
     NULL},
    {"slowlog-max-len", T_LL, 0, &cfg.slowlog_max_len, "128", 0, LONG_MAX, NULL, apply_slowlog_len},
    {"latency-monitor-threshold", T_LL, 0, &cfg.latency_monitor_threshold, "0", 0, LLONG_MAX, NULL,
     NULL},
    {"latency-tracking", T_BOOL, 0, &cfg.latency_tracking, "yes", 0, 0, NULL, NULL},
    {"latency-tracking-info-percentiles", T_SPECIAL, 0, NULL, "50 99 99.9", 0, 0, NULL, NULL,
     set_percentiles, get_percentiles},
    /* Every other Redis 7.0 name (README lists what they change). Aliases
     * are rows sharing their name's storage. */
    {"rdbchecksum", T_BOOL, F_IMMUTABLE, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"io-threads-do-reads", T_BOOL, F_IMMUTABLE, &(int){0}, "no", 0, 0, NULL, NULL},
    {"always-show-logo", T_BOOL, F_IMMUTABLE, &(int){0}, "no", 0, 0, NULL, NULL},
    {"protected-mode", T_BOOL, 0, &cfg.protected_mode, "yes", 0, 0, NULL, NULL},
    {"rdbcompression", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"rdb-del-sync-files", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"activerehashing", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"stop-writes-on-bgsave-error", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"set-proc-title", T_BOOL, F_IMMUTABLE, &cfg.set_proc_title, "yes", 0, 0, NULL, NULL},
    {"dynamic-hz", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"lazyfree-lazy-eviction", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-expire", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-server-del", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-user-del", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"lazyfree-lazy-user-flush", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"repl-disable-tcp-nodelay", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"repl-diskless-sync", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"aof-rewrite-incremental-fsync", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"no-appendfsync-on-rewrite", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"cluster-require-full-coverage", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"rdb-save-incremental-fsync", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"aof-load-truncated", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"aof-use-rdb-preamble", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"aof-timestamp-enabled", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"cluster-replica-no-failover", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"cluster-slave-no-failover", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"replica-lazy-flush", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"slave-lazy-flush", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"replica-serve-stale-data", T_BOOL, 0, &cfg.replica_serve_stale_data, "yes", 0, 0, NULL, NULL},
    {"slave-serve-stale-data", T_BOOL, 0, &cfg.replica_serve_stale_data, "yes", 0, 0, NULL, NULL},
    {"replica-read-only", T_BOOL, 0, &cfg.replica_read_only, "yes", 0, 0, NULL, NULL},
    {"slave-read-only", T_BOOL, 0, &cfg.replica_read_only, "yes", 0, 0, NULL, NULL},
    {"replica-ignore-maxmemory", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"slave-ignore-maxmemory", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"jemalloc-bg-thread", T_BOOL, 0, &cfg.jemalloc_bg_thread, "yes", 0, 0, NULL,
     apply_jemalloc_bg_thread},
    {"activedefrag", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"syslog-enabled", T_BOOL, F_IMMUTABLE, &(int){0}, "no", 0, 0, NULL, NULL},
    {"cluster-enabled", T_BOOL, F_IMMUTABLE, &(int){0}, "no", 0, 0, NULL, NULL},
    {"appendonly", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"cluster-allow-reads-when-down", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"cluster-allow-pubsubshard-when-down", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"crash-log-enabled", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"crash-memcheck-enabled", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"use-exit-on-panic", T_BOOL, F_HIDDEN, &(int){0}, "no", 0, 0, NULL, NULL},
    {"disable-thp", T_BOOL, F_IMMUTABLE, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"cluster-allow-replica-migration", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"replica-announced", T_BOOL, 0, &(int){0}, "yes", 0, 0, NULL, NULL},
    {"aof-disable-auto-gc", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"replica-ignore-disk-write-errors", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"aclfile", T_STR, F_IMMUTABLE, &cfg.aclfile, "", 0, 0, NULL, NULL},
    {"unixsocket", T_STR, F_IMMUTABLE, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"replica-announce-ip", T_STR, 0, &cfg.replica_announce_ip, "", 0, 0, NULL, NULL},
    {"slave-announce-ip", T_STR, 0, &cfg.replica_announce_ip, "", 0, 0, NULL, NULL},
    {"masteruser", T_STR, 0, &cfg.masteruser, "", 0, 0, NULL, NULL},
    {"cluster-announce-ip", T_STR, 0, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"cluster-config-file", T_STR, F_IMMUTABLE, &(char *){NULL}, "nodes.conf", 0, 0, NULL, NULL},
    {"cluster-announce-hostname", T_STR, 0, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"syslog-ident", T_STR, F_IMMUTABLE, &(char *){NULL}, "redis", 0, 0, NULL, NULL},
    {"dbfilename", T_STR, F_PROTECTED, &(char *){NULL}, "dump.rdb", 0, 0, NULL, NULL},
    {"appendfilename", T_STR, F_IMMUTABLE, &(char *){NULL}, "appendonly.aof", 0, 0, NULL, NULL},
    {"appenddirname", T_STR, F_IMMUTABLE, &(char *){NULL}, "appendonlydir", 0, 0, NULL, NULL},
    {"server_cpulist", T_STR, F_IMMUTABLE, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"bio_cpulist", T_STR, F_IMMUTABLE, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"aof_rewrite_cpulist", T_STR, F_IMMUTABLE, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"bgsave_cpulist", T_STR, F_IMMUTABLE, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"ignore-warnings", T_STR, 0, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"proc-title-template", T_STR, 0, &(char *){NULL}, "{title} {listen-addr} {server-mode}", 0, 0,
     NULL, NULL},
    {"bind-source-addr", T_STR, 0, &(char *){NULL}, "", 0, 0, NULL, NULL},
    {"masterauth", T_STR, 0, &cfg.masterauth, "", 0, 0, NULL, NULL},
    {"supervised", T_ENUM, F_IMMUTABLE, &(int){0}, "no", 0, 0, supervised_mode_enum, NULL},
    {"syslog-facility", T_ENUM, F_IMMUTABLE, &(int){0}, "local0", 0, 0, syslog_facility_enum, NULL},
    {"repl-diskless-load", T_ENUM, 0, &(int){0}, "disabled", 0, 0, repl_diskless_load_enum, NULL},
    {"maxmemory-policy", T_ENUM, 0, &compat.maxmemory_policy, "noeviction", 0, 0,
     maxmemory_policy_enum, apply_keyspace},
    {"oom-score-adj", T_ENUM, 0, &(int){0}, "no", 0, 0, oom_score_adj_enum, NULL},
    {"acl-pubsub-default", T_ENUM, 0, &cfg.acl_pubsub_default, "resetchannels", 0, 0,
     acl_pubsub_default_enum, NULL},
    {"sanitize-dump-payload", T_ENUM, 0, &(int){0}, "no", 0, 0, sanitize_dump_payload_enum, NULL},
    {"enable-protected-configs", T_ENUM, F_IMMUTABLE, &cfg.enable_protected_configs, "no", 0, 0,
     protected_action_enum, NULL},
    {"enable-debug-command", T_ENUM, F_IMMUTABLE, &cfg.enable_debug_cmd, "no", 0, 0,
     protected_action_enum, NULL},
    {"enable-module-command", T_ENUM, F_IMMUTABLE, &cfg.enable_module_cmd, "no", 0, 0,
     protected_action_enum, NULL},
    {"cluster-preferred-endpoint-type", T_ENUM, 0, &(int){0}, "ip", 0, 0,
     cluster_preferred_endpoint_type_enum, NULL},
    {"propagation-error-behavior", T_ENUM, 0, &(int){0}, "ignore", 0, 0,
     propagation_error_behavior_enum, NULL},
    {"shutdown-on-sigint", T_ENUM, 0, &(int){0}, "default", 0, 0, shutdown_on_sig_enum, NULL},
    {"shutdown-on-sigterm", T_ENUM, 0, &(int){0}, "default", 0, 0, shutdown_on_sig_enum, NULL},
    {"io-threads", T_INT, F_IMMUTABLE, &(int){0}, "1", 1, 128, NULL, NULL},
    {"auto-aof-rewrite-percentage", T_INT, 0, &(int){0}, "100", 0, INT_MAX, NULL, NULL},
    {"cluster-replica-validity-factor", T_INT, 0, &(int){0}, "10", 0, INT_MAX, NULL, NULL},
    {"cluster-slave-validity-factor", T_INT, 0, &(int){0}, "10", 0, INT_MAX, NULL, NULL},
    {"list-max-listpack-size", T_INT, 0, &compat.list_max_listpack_size, "-2", INT_MIN, INT_MAX,
     NULL, apply_keyspace},
    {"list-max-ziplist-size", T_INT, 0, &compat.list_max_listpack_size, "-2", INT_MIN, INT_MAX,
     NULL, apply_keyspace},
    {"cluster-migration-barrier", T_INT, 0, &(int){0}, "1", 0, INT_MAX, NULL, NULL},
    {"active-defrag-cycle-min", T_INT, 0, &(int){0}, "1", 1, 99, NULL, NULL},
    {"active-defrag-cycle-max", T_INT, 0, &(int){0}, "25", 1, 99, NULL, NULL},
    {"active-defrag-threshold-lower", T_INT, 0, &(int){0}, "10", 0, 1000, NULL, NULL},
    {"active-defrag-threshold-upper", T_INT, 0, &(int){0}, "100", 0, 1000, NULL, NULL},
    {"lfu-log-factor", T_INT, 0, &compat.lfu_log_factor, "10", 0, INT_MAX, NULL, apply_keyspace},
    {"lfu-decay-time", T_INT, 0, &compat.lfu_decay_time, "1", 0, INT_MAX, NULL, apply_keyspace},
    {"replica-priority", T_INT, 0, &cfg.replica_priority, "100", 0, INT_MAX, NULL, NULL},
    {"slave-priority", T_INT, 0, &cfg.replica_priority, "100", 0, INT_MAX, NULL, NULL},
    {"repl-diskless-sync-delay", T_INT, 0, &(int){0}, "5", 0, INT_MAX, NULL, NULL},
    {"maxmemory-samples", T_INT, 0, &(int){0}, "5", 1, INT_MAX, NULL, NULL},
    {"maxmemory-eviction-tenacity", T_INT, 0, &(int){0}, "10", 0, 100, NULL, NULL},
    {"replica-announce-port", T_INT, 0, &cfg.replica_announce_port, "0", 0, 65535, NULL, NULL},
    {"slave-announce-port", T_INT, 0, &cfg.replica_announce_port, "0", 0, 65535, NULL, NULL},
    {"cluster-port", T_INT, F_IMMUTABLE, &(int){0}, "0", 0, 65535, NULL, NULL},
    {"cluster-announce-bus-port", T_INT, 0, &(int){0}, "0", 0, 65535, NULL, NULL},
    {"cluster-announce-port", T_INT, 0, &(int){0}, "0", 0, 65535, NULL, NULL},
    {"cluster-announce-tls-port", T_INT, 0, &(int){0}, "0", 0, 65535, NULL, NULL},
    {"repl-timeout", T_INT, 0, &cfg.repl_timeout, "60", 1, INT_MAX, NULL, NULL},
    {"repl-ping-replica-period", T_INT, 0, &cfg.repl_ping_period, "10", 1, INT_MAX, NULL, NULL},
    {"repl-ping-slave-period", T_INT, 0, &cfg.repl_ping_period, "10", 1, INT_MAX, NULL, NULL},
    {"list-compress-depth", T_INT, 0, &compat.list_compress_depth, "0", 0, INT_MAX, NULL,
     apply_keyspace},
    {"rdb-key-save-delay", T_INT, F_HIDDEN, &(int){0}, "0", INT_MIN, INT_MAX, NULL, NULL},
    {"key-load-delay", T_INT, F_HIDDEN, &(int){0}, "0", INT_MIN, INT_MAX, NULL, NULL},
    {"active-expire-effort", T_INT, 0, &(int){0}, "1", 1, 10, NULL, NULL},
    {"min-replicas-to-write", T_INT, 0, &cfg.min_replicas_to_write, "0", 0, INT_MAX, NULL, NULL},
    {"min-slaves-to-write", T_INT, 0, &cfg.min_replicas_to_write, "0", 0, INT_MAX, NULL, NULL},
    {"min-replicas-max-lag", T_INT, 0, &cfg.min_replicas_max_lag, "10", 0, INT_MAX, NULL, NULL},
    {"min-slaves-max-lag", T_INT, 0, &cfg.min_replicas_max_lag, "10", 0, INT_MAX, NULL, NULL},
    {"watchdog-period", T_INT, F_HIDDEN, &(int){0}, "0", 0, INT_MAX, NULL, NULL},
    {"shutdown-timeout", T_INT, 0, &(int){0}, "10", 0, INT_MAX, NULL, NULL},
    {"repl-diskless-sync-max-replicas", T_INT, 0, &(int){0}, "0", 0, INT_MAX, NULL, NULL},
    {"unixsocketperm", T_INT, F_IMMUTABLE, &(int){0}, "0", 0, 511, NULL, NULL},
    {"socket-mark-id", T_MEM, F_IMMUTABLE, &(long long){0}, "0", 0, 4294967295, NULL, NULL},
    {"active-defrag-max-scan-fields", T_MEM, 0, &(long long){0}, "1000", 1, LLONG_MAX, NULL, NULL},
    {"acllog-max-len", T_MEM, 0, &cfg.acllog_max_len, "128", 0, LLONG_MAX, NULL, NULL},
    {"cluster-node-timeout", T_MEM, 0, &(long long){0}, "15000", 0, LLONG_MAX, NULL, NULL},
    {"stream-node-max-entries", T_MEM, 0, &compat.stream_node_max_entries, "100", 0, LLONG_MAX,
     NULL, apply_keyspace},
    {"repl-backlog-size", T_MEM, 0, &cfg.repl_backlog_size, "1048576", 1, LLONG_MAX, NULL, NULL},
    {"maxmemory", T_MEM, 0, &compat.maxmemory, "0", 0, LLONG_MAX, NULL, apply_keyspace},
    {"cluster-link-sendbuf-limit", T_MEM, 0, &(long long){0}, "0", 0, LLONG_MAX, NULL, NULL},
    {"hash-max-listpack-entries", T_MEM, 0, &compat.hash_max_listpack_entries, "512", 0, LLONG_MAX,
     NULL, apply_keyspace},
    {"hash-max-ziplist-entries", T_MEM, 0, &compat.hash_max_listpack_entries, "512", 0, LLONG_MAX,
     NULL, apply_keyspace},
    {"set-max-intset-entries", T_MEM, 0, &compat.set_max_intset_entries, "512", 0, LLONG_MAX, NULL,
     apply_keyspace},
    {"zset-max-listpack-entries", T_MEM, 0, &compat.zset_max_listpack_entries, "128", 0, LLONG_MAX,
     NULL, apply_keyspace},
    {"zset-max-ziplist-entries", T_MEM, 0, &compat.zset_max_listpack_entries, "128", 0, LLONG_MAX,
     NULL, apply_keyspace},
    {"active-defrag-ignore-bytes", T_MEM, 0, &(long long){0}, "104857600", 1, LLONG_MAX, NULL,
     NULL},
    {"hash-max-listpack-value", T_MEM, 0, &compat.hash_max_listpack_value, "64", 0, LLONG_MAX, NULL,
     apply_keyspace},
    {"hash-max-ziplist-value", T_MEM, 0, &compat.hash_max_listpack_value, "64", 0, LLONG_MAX, NULL,
     apply_keyspace},
    {"stream-node-max-bytes", T_MEM, 0, &compat.stream_node_max_bytes, "4096", 0, LLONG_MAX, NULL,
     apply_keyspace},
    {"zset-max-listpack-value", T_MEM, 0, &compat.zset_max_listpack_value, "64", 0, LLONG_MAX, NULL,
     apply_keyspace},
    {"zset-max-ziplist-value", T_MEM, 0, &compat.zset_max_listpack_value, "64", 0, LLONG_MAX, NULL,
     apply_keyspace},
    {"tracking-table-max-keys", T_MEM, 0, &cfg.tracking_table_max_keys, "1000000", 0, LLONG_MAX,
     NULL, NULL},
    {"maxmemory-clients", T_MEM, F_PERCENT, &(long long){0}, "0", -100, LLONG_MAX, NULL, NULL},
    {"repl-backlog-ttl", T_MEM, 0, &(long long){0}, "3600", 0, LLONG_MAX, NULL, NULL},
    {"auto-aof-rewrite-min-size", T_MEM, 0, &(long long){0}, "67108864", 0, LLONG_MAX, NULL, NULL},
    {"loading-process-events-interval-bytes", T_INT, F_HIDDEN, &(int){0}, "2097152", 1024, INT_MAX,
     NULL, NULL},
    {"tls-port", T_INT, 0, &cfg.tls_port, "0", 0, 65535, NULL, apply_tls_port},
    {"tls-session-cache-size", T_INT, 0, &cfg.tls_session_cache_size, "20480", 0, INT_MAX, NULL,
     apply_tls},
    {"tls-session-cache-timeout", T_INT, 0, &cfg.tls_session_cache_timeout, "300", 0, INT_MAX, NULL,
     apply_tls},
    {"tls-cluster", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"tls-replication", T_BOOL, 0, &(int){0}, "no", 0, 0, NULL, NULL},
    {"tls-auth-clients", T_ENUM, 0, &cfg.tls_auth_clients, "yes", 0, 0, tls_auth_clients_enum,
     apply_tls},
    {"tls-prefer-server-ciphers", T_BOOL, 0, &cfg.tls_prefer_server_ciphers, "no", 0, 0, NULL,
     apply_tls},
    {"tls-session-caching", T_BOOL, 0, &cfg.tls_session_caching, "yes", 0, 0, NULL, apply_tls},
    {"tls-cert-file", T_STR, 0, &cfg.tls_cert_file, "", 0, 0, NULL, apply_tls},
    {"tls-key-file", T_STR, 0, &cfg.tls_key_file, "", 0, 0, NULL, apply_tls},
    {"tls-key-file-pass", T_STR, 0, &cfg.tls_key_file_pass, "", 0, 0, NULL, apply_tls},
    {"tls-client-cert-file", T_STR, 0, &cfg.tls_client_cert_file, "", 0, 0, NULL, apply_tls},
    {"tls-client-key-file", T_STR, 0, &cfg.tls_client_key_file, "", 0, 0, NULL, apply_tls},
    {"tls-client-key-file-pass", T_STR, 0, &cfg.tls_client_key_file_pass, "", 0, 0, NULL,
     apply_tls},
    {"tls-dh-params-file", T_STR, 0, &cfg.tls_dh_params_file, "", 0, 0, NULL, apply_tls},
    {"tls-ca-cert-file", T_STR, 0, &cfg.tls_ca_cert_file, "", 0, 0, NULL, apply_tls},
    {"tls-ca-cert-dir", T_STR, 0, &cfg.tls_ca_cert_dir, "", 0, 0, NULL, apply_tls},
    {"tls-protocols", T_STR, 0, &cfg.tls_protocols, "", 0, 0, NULL, apply_tls},
    {"tls-ciphers", T_STR, 0, &cfg.tls_ciphers, "", 0, 0, NULL, apply_tls},
    {"tls-ciphersuites", T_STR, 0, &cfg.tls_ciphersuites, "", 0, 0, NULL, apply_tls},
    {"save", T_STR, 0, &(char *){NULL}, "3600 1 300 100 60 10000", 0, 0, NULL, NULL},
    {"oom-score-adj-values", T_STR, 0, &(char *){NULL}, "0 200 800", 0, 0, NULL, NULL},
    {"replicaof", T_SPECIAL, F_IMMUTABLE, NULL, "", 0, 0, NULL, NULL, set_replicaof, get_replicaof},
    {"slaveof", T_SPECIAL, F_IMMUTABLE, NULL, "", 0, 0, NULL, NULL, set_replicaof, get_replicaof},
};
#define NROWS (sizeof(config_table) / sizeof(config_table[0]))

/* Each setting's default as config_get_value prints it (CONFIG REWRITE
 * leaves settings at their default out of the file). */
static char *default_text[NROWS];

static const config_row *find_row(const char *name)
{
    for (size_t i = 0; i < NROWS; i++)
        if (strcasecmp(config_table[i].name, name) == 0) return &config_table[i];
    return NULL;
}

int config_parse_memory(const char *s, long long *out)
{
    char *end;
    errno = 0;
    if (!*s || isspace((unsigned char)*s)) return -1;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s) return -1;
    long long mul = 1;
    if (!strcasecmp(end, ""))
        mul = 1;
    else if (!strcasecmp(end, "b"))
        mul = 1;
    else if (!strcasecmp(end, "k"))
        mul = 1000;
    else if (!strcasecmp(end, "kb"))
        mul = 1024;
    else if (!strcasecmp(end, "m"))
        mul = 1000 * 1000;
    else if (!strcasecmp(end, "mb"))
        mul = 1024 * 1024;
    else if (!strcasecmp(end, "g"))
        mul = 1000LL * 1000 * 1000;
    else if (!strcasecmp(end, "gb"))
        mul = 1024LL * 1024 * 1024;
    else
        return -1;
    if (v < 0 || (v > 0 && mul > LLONG_MAX / v)) return -1;
    *out = v * mul;
    return 0;
}

static char *fmt_err(const char *fmt, const char *a)
{
    char buf[512];
    snprintf(buf, sizeof(buf), fmt, a);
    return strdup(buf);
}

/* Parses value for row into *tmp without changing the setting. */
static int parse_value(const config_row *r, const char *v, long long *num, char **err)
{
    switch (r->type) {
    case T_BOOL:
        if (!strcasecmp(v, "yes"))
            *num = 1;
        else if (!strcasecmp(v, "no"))
            *num = 0;
        else
            return *err = strdup("argument must be 'yes' or 'no'"), -1;
        return 0;
    case T_INT:
    case T_LL:
    case T_MEM: {
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        size_t vl = strlen(v);
        if ((r->flags & F_PERCENT) && vl > 1 && v[vl - 1] == '%' && ks_string2ll(v, vl - 1, &x) &&
            x >= 0) {
            if (-x < r->min) {
                char buf[96];
                snprintf(buf, sizeof(buf), "percentage argument must be less or equal to %lld",
                         -r->min);
                return *err = strdup(buf), -1;
            }
            return *num = -x, 0;
        } else if (r->type == T_MEM) {
            if (config_parse_memory(v, &x) < 0)
                return *err = strdup((r->flags & F_PERCENT)
                                         ? "argument must be a memory or percent value"
                                         : "argument must be a memory value"),
                       -1;
            if ((r->flags & F_PERCENT) && x < 0) x = LLONG_MAX; /* no negative bytes */
        } else if (errno || !*v || *end) {
            return *err = strdup("argument couldn't be parsed into an integer"), -1;
        }
        if (x < r->min || x > r->max) {
            char buf[128];
            snprintf(buf, sizeof(buf), "argument must be between %lld and %lld inclusive", r->min,
                     r->max);
            return *err = strdup(buf), -1;
        }
        *num = x;
        return 0;
    }
    case T_ENUM:
        for (const config_enum *e = r->enums; e->name; e++)
            if (!strcasecmp(e->name, v)) return *num = e->val, 0;
        {
            char buf[256] = "argument(s) must be one of the following: ";
            for (const config_enum *e = r->enums; e->name; e++) {
                strcat(buf, e->name);
                if (e[1].name) strcat(buf, ", ");
            }
            *err = strdup(buf);
        }
        return -1;
    }
    return 0;
}

/* A special setting's words: the file's arguments, or the one CONFIG SET
 * value split as the file would be. Sets *why on a failure. */
static void set_special(const config_row *r, const char *const *argv, int argc, char **why)
{
    char **words = NULL;
    int n = argc;
    const char *e = NULL;
    if (argc == 1) {
        n = config_split_args(argv[0], &words);
        if (n < 0) {
            *why = strdup("unbalanced quotes in configuration line");
            return;
        }
        if (n == 0) { /* "" is a value of its own (no classes, no percentiles) */
            static const char *const empty[1] = {""};
            if (r->set(empty, 1, &e) < 0) *why = strdup(e);
            config_free_args(words, n);
            return;
        }
    }
    if (r->set(words ? (const char *const *)words : argv, n, &e) < 0) *why = strdup(e);
    if (words) config_free_args(words, n);
}

/* Would setting r to v leave it as it is? (CONFIG SET of an immutable
 * setting to its own value is a no-op, so a client can write back what
 * CONFIG GET * gave it.) */
static int same_as_current(const config_row *r, const char *v)
{
    char *why = NULL;
    long long num = 0;
    switch (r->type) {
    case T_STR:
        return !strcmp(*(char **)r->ptr ? *(char **)r->ptr : "", v);
    case T_SPECIAL:
        return 0;
    default:
        if (parse_value(r, v, &num, &why) < 0) {
            free(why);
            return 0;
        }
        return r->type == T_MEM || r->type == T_LL ? *(long long *)r->ptr == num
                                                   : *(int *)r->ptr == (int)num;
    }
}

/* client-output-buffer-limit's "<class> <hard> <soft> <soft seconds>"
 * groups (Redis's syntax and error texts): all or nothing. */
static const char *set_obuf_limits(const char *const *argv, int argc)
{
    static const char *const names[] = {"normal", "replica", "slave", "pubsub"};
    static const int classes[] = {CLIENT_CLASS_NORMAL, CLIENT_CLASS_REPLICA, CLIENT_CLASS_REPLICA,
                                  CLIENT_CLASS_PUBSUB};
    struct obuf_limit next[CLIENT_CLASSES];
    memcpy(next, cfg.obuf_limits, sizeof(next));
    if (argc % 4) return "Wrong number of arguments in buffer limit configuration.";
    for (int j = 0; j < argc; j += 4) {
        int cls = -1;
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            if (!strcasecmp(argv[j], names[k])) cls = classes[k];
        if (cls < 0) return "Invalid client class specified in buffer limit configuration.";
        long long hard, soft, secs;
        char *end;
        errno = 0;
        secs = strtoll(argv[j + 3], &end, 10);
        if (config_parse_memory(argv[j + 1], &hard) < 0 ||
            config_parse_memory(argv[j + 2], &soft) < 0 || errno || *end || secs < 0)
            return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        next[cls] = (struct obuf_limit){(unsigned long long)hard, (unsigned long long)soft, secs};
    }
    memcpy(cfg.obuf_limits, next, sizeof(next));
    return NULL;
}

static void format_obuf_limits(char *buf, size_t cap)
{
    static const char *const names[] = {"normal", "slave", "pubsub"}; /* as Redis prints them */
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < CLIENT_CLASSES && n < cap; i++) {
        const struct obuf_limit *l = &cfg.obuf_limits[i];
        int w = snprintf(buf + n, cap - n, "%s%s %llu %llu %lld", i ? " " : "", names[i], l->hard,
                         l->soft, l->soft_seconds);
        if (w < 0) break;
        n += (size_t)w;
    }
}

int config_protected_allowed;

/* Directives of the config file (and command line) only, as Redis's:
 * `user` lines and rename-command. Returns 1 when name is one. */
static int startup_directive(const char *name, const char *const *argv, int argc, int *rc,
                             char **err)
{
    if (!strcasecmp(name, "user") && argc >= 1) {
        *rc = acl_config_user(argv, argc, err);
        return 1;
    }
    if (!strcasecmp(name, "rename-command") && argc == 2) {
        const char *why = command_rename(argv[0], argv[1]);
        *rc = why ? -1 : 0;
        if (why) *err = strdup(why);
        return 1;
    }
    return 0;
}

/* A config file's `save <seconds> <changes> ...` lines, as Redis 7.0
 * reads them: the pairs of every line add up (the first line replaces the
 * default; `save ""`, one argument, is an ordinary setting). Returns the value to store (malloc'd),
 * or NULL with *err set. */
static char *save_points(const config_row *r, const char *const *argv, int argc, char **err)
{
    static int lines; /* save lines of this startup so far */
    for (int i = 0; i < argc; i++) {
        char *end;
        long long v = strtoll(argv[i], &end, 10);
        if (argc % 2 || !argv[i][0] || *end || v < 0) {
            *err = strdup("Invalid save parameters");
            return NULL;
        }
    }
    const char *old = lines++ ? *(char **)r->ptr : "";
    size_t n = strlen(old ? old : "") + 2;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *v = malloc(n);
    strcpy(v, old ? old : "");
    for (int i = 0; i < argc; i++) {
        if (v[0]) strcat(v, " ");
        strcat(v, argv[i]);
    }
    return v;
}

int config_set(const char *name, const char *const *argv, int argc, int at_startup, char **err)
{
    const config_row *r = find_row(name);
    *err = NULL;
    int rc;
    if (at_startup && !r && startup_directive(name, argv, argc, &rc, err)) return rc;
    if (at_startup && r && !strcasecmp(r->name, "save") && argc >= 2) {
        char *v = save_points(r, argv, argc, err);
        if (!v) return -1;
        const char *one[1] = {v};
        rc = config_set(name, one, 1, 0, err);
        free(v);
        return rc;
    }
    if (r && r->type == T_OBUF) {
        /* Several arguments, or one that holds them all (CONFIG SET). */
        char **split = NULL;
        int n = argc;
        if (argc == 1 && argv[0][0]) {
            n = config_split_args(argv[0], &split);
            argv = (const char *const *)split;
        }
        const char *why = n < 0 ? "Wrong number of arguments in buffer limit configuration."
                                : set_obuf_limits(argv, n);
        if (split) config_free_args(split, n);
        if (why)
            *err = fmt_err("CONFIG SET failed (possibly related to argument "
                           "'client-output-buffer-limit') - %s",
                           why);
        return why ? -1 : 0;
    }
    if (!r || (argc != 1 && !(r->type == T_SPECIAL && at_startup && argc > 0))) {
        *err = fmt_err("Unknown option or number of arguments for CONFIG SET - '%s'", name);
        return -1;
    }
    char *why = NULL;
    long long num = 0;
    if ((r->flags & F_PROTECTED) && !at_startup && !config_protected_allowed) {
        why = strdup("can't set protected config");
    } else if ((r->flags & F_IMMUTABLE) && !at_startup) {
        if (!(r->flags & F_REDIS_IMMUTABLE) && argc == 1 && same_as_current(r, argv[0]))
            return 0; /* nothing changes */
        why = strdup("can't set immutable config");
    } else if (r->type == T_SPECIAL) {
        set_special(r, argv, argc, &why);
    } else if (r->type != T_STR) {
        const char *e = NULL;
        if (parse_value(r, argv[0], &num, &why) == 0 && r->set && !at_startup && r->type == T_INT &&
            num != *(int *)r->ptr && r->set(argv, argc, &e) < 0)
            why = strdup(e);
    }
    if (why) {
        char buf[512];
        snprintf(buf, sizeof(buf), "CONFIG SET failed (possibly related to argument '%s') - %s",
                 r->name, why);
        free(why);
        *err = strdup(buf);
        return -1;
    }
    switch (r->type) {
    case T_SPECIAL:
        break; /* stored by set_special */
    case T_STR:
        free(*(char **)r->ptr);
        *(char **)r->ptr = strdup(argv[0]);
        break;
    case T_MEM:
    case T_LL:
        *(long long *)r->ptr = num;
        break;
    default:
        *(int *)r->ptr = (int)num;
    }
    if (r->apply && !at_startup) r->apply();
    return 0;
}

/* Two names for one setting (an alias row shares its storage). */
static int same_setting(const config_row *a, const config_row *b)
{
    return a == b || (a->ptr && a->ptr == b->ptr);
}

/* The validation phase of Redis's CONFIG SET: the first unknown name,
 * immutable setting or repeated setting, in argument order. */
static char *check_pairs(const char *const *pairs, int n, const config_row **rows)
{
    for (int i = 0; i < n; i++) {
        const config_row *r = rows[i] = find_row(pairs[2 * i]);
        if (!r)
            return fmt_err("Unknown option or number of arguments for CONFIG SET - '%s'",
                           pairs[2 * i]);
        const char *why = NULL;
        if ((r->flags & F_IMMUTABLE) &&
            ((r->flags & F_REDIS_IMMUTABLE) || !same_as_current(r, pairs[2 * i + 1])))
            why = "can't set immutable config";
        for (int j = 0; j < i && !why; j++)
            if (same_setting(rows[j], r)) why = "duplicate parameter";
        if (why) {
            char buf[512];
            snprintf(buf, sizeof(buf), "CONFIG SET failed (possibly related to argument '%s') - %s",
                     pairs[2 * i], why);
            return strdup(buf);
        }
    }
    return NULL;
}

int config_set_pairs(const char *const *pairs, int n, char **err)
{
    const config_row **rows = calloc((size_t)n + 1, sizeof(*rows));
    char **old = calloc((size_t)n + 1, sizeof(*old));
    char buf[4096];
    int i = 0, rc = -1;
    if (!rows || !old) {
        *err = strdup("ERR out of memory");
        goto cleanup;
    }
    if ((*err = check_pairs(pairs, n, rows))) goto cleanup;
    for (i = 0; i < n; i++) { /* backups first, as Redis */
        config_get_value(rows[i]->name, buf, sizeof(buf));
        if (!(old[i] = strdup(buf))) goto cleanup;
    }
    for (i = 0; i < n; i++) {
        const char *v[1] = {pairs[2 * i + 1]};
        if (config_set(rows[i]->name, v, 1, 0, err) < 0) break;
    }
    if (i == n) {
        rc = 0;
    } else {
        for (int j = i - 1; j >= 0; j--) { /* restore what was set, last first */
            const char *v[1] = {old[j]};
            char *e = NULL;
            config_set(rows[j]->name, v, 1, 0, &e);
            free(e);
        }
    }
cleanup:
    for (int j = 0; old && j < n; j++)
        free(old[j]);
    free(old);
    free(rows);
    return rc;
}

const char *config_file_path(void)
{
    return server.config_file;
}

/* A memory value as Redis writes it into a config file: in gb, mb or kb
 * when it is an exact multiple, else in bytes. */
static void fmt_memory(char *buf, size_t cap, long long v)
{
    const long long g = 1024LL * 1024 * 1024, m = 1024 * 1024, k = 1024;
    if (v && v % g == 0)
        snprintf(buf, cap, "%lldgb", v / g);
    else if (v && v % m == 0)
        snprintf(buf, cap, "%lldmb", v / m);
    else if (v && v % k == 0)
        snprintf(buf, cap, "%lldkb", v / k);
    else
        snprintf(buf, cap, "%lld", v);
}

/* Quotes s as Redis's sdscatrepr (strings are always quoted in a
 * rewritten file, so "" survives as an empty value). */
static void fmt_quoted(char *buf, size_t cap, const char *s)
{
    size_t n = 0;
    if (cap < 8) return;
    buf[n++] = '"';
    for (; *s && n + 6 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\\' || ch == '"') {
            buf[n++] = '\\';
            buf[n++] = (char)ch;
        } else if (ch == '\n' || ch == '\r' || ch == '\t') {
            buf[n++] = '\\';
            buf[n++] = ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't';
        } else if (ch < 32 || ch >= 127) {
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", ch);
        } else {
            buf[n++] = (char)ch;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

/* client-output-buffer-limit as Redis rewrites it: one line per class
 * ("replica" for the replica class), memory in units, each compared with
 * its class's default. */
static void each_obuf(config_each_fn fn, void *ctx, const char *name)
{
    static const char *const names[CLIENT_CLASSES] = {"normal", "replica", "pubsub"};
    static const struct obuf_limit defaults[CLIENT_CLASSES] = {
        {0, 0, 0}, {256ULL << 20, 64ULL << 20, 60}, {32ULL << 20, 8ULL << 20, 60}};
    for (int k = 0; k < CLIENT_CLASSES; k++) {
        const struct obuf_limit *l = &cfg.obuf_limits[k];
        char hard[32], soft[32], line[128];
        fmt_memory(hard, sizeof(hard), (long long)l->hard);
        fmt_memory(soft, sizeof(soft), (long long)l->soft);
        snprintf(line, sizeof(line), "%s %s %s %lld", names[k], hard, soft, l->soft_seconds);
        fn(ctx, name, line,
           l->hard == defaults[k].hard && l->soft == defaults[k].soft &&
               l->soft_seconds == defaults[k].soft_seconds);
    }
}

void config_each(config_each_fn fn, void *ctx)
{
    char cur[1024], out[2100];
    for (size_t i = 0; i < NROWS; i++) {
        const config_row *r = &config_table[i];
        if (r->type == T_OBUF) {
            each_obuf(fn, ctx, r->name);
            continue;
        }
        config_get_value(r->name, cur, sizeof(cur));
        int is_default = default_text[i] && !strcmp(cur, default_text[i]);
        if (r->type == T_MEM && *(long long *)r->ptr >= 0)
            fmt_memory(out, sizeof(out), *(long long *)r->ptr);
        else if (r->type == T_STR || r->get == get_notify)
            fmt_quoted(out, sizeof(out), cur);
        else
            snprintf(out, sizeof(out), "%s", cur);
        fn(ctx, r->name, out, is_default);
    }
}

int config_is_sensitive(const char *name)
{
    const config_row *r = find_row(name);
    return r && (r->flags & F_SENSITIVE);
}

int config_get_value(const char *name, char *buf, size_t cap)
{
    const config_row *r = find_row(name);
    if (!r) return -1;
    switch (r->type) {
    case T_BOOL:
        snprintf(buf, cap, "%s", *(int *)r->ptr ? "yes" : "no");
        break;
    case T_INT:
        snprintf(buf, cap, "%d", *(int *)r->ptr);
        break;
    case T_MEM:
    case T_LL:
        if ((r->flags & F_PERCENT) && *(long long *)r->ptr < 0)
            snprintf(buf, cap, "%lld%%", -*(long long *)r->ptr);
        else
            snprintf(buf, cap, "%lld", *(long long *)r->ptr);
        break;
    case T_SPECIAL:
        r->get(buf, cap);
        break;
    case T_STR:
        snprintf(buf, cap, "%s", *(char **)r->ptr ? *(char **)r->ptr : "");
        break;
    case T_ENUM:
        buf[0] = '\0';
        for (const config_enum *e = r->enums; e->name; e++)
            if (e->val == *(int *)r->ptr) snprintf(buf, cap, "%s", e->name);
        break;
    case T_OBUF:
        format_obuf_limits(buf, cap);
        break;
    }
    return 0;
}

void config_match(const char *pattern, config_visit_fn fn, void *ctx)
{
    char val[1024];
    int glob = strpbrk(pattern, "*?[") != NULL; /* as Redis: hidden ones only by name */
    for (size_t i = 0; i < NROWS; i++) {
        const char *n = config_table[i].name;
        if (glob && (config_table[i].flags & F_HIDDEN)) continue;
        if (!ks_glob_match(pattern, strlen(pattern), n, strlen(n), 1)) continue;
        config_get_value(n, val, sizeof(val));
        fn(ctx, n, val);
    }
}

void config_init_defaults(void)
{
    for (size_t i = 0; i < NROWS; i++) {
        const char *argv[1] = {config_table[i].def};
        char *err = NULL;
        if (config_set(config_table[i].name, argv, 1, 1, &err) < 0) {
            fprintf(stderr, "bad default for %s: %s\n", config_table[i].name, err);
            abort();
        }
        char buf[1024];
        config_get_value(config_table[i].name, buf, sizeof(buf));
        free(default_text[i]);
        default_text[i] = strdup(buf);
    }
}

int config_split_args(const char *line, char ***argvp)
{
    size_t n = strlen(line);
    char *buf = malloc(n + 2);
    memcpy(buf, line, n);
    buf[n] = '\n';
    buf[n + 1] = '\0';
    resp_parser p;
    resp_parser_init(&p);
    size_t pos = 0;
    int argc = 0;
    *argvp = NULL;
    /* Lines never start with '*' in a config file; the inline splitter is
     * Redis's sdssplitargs. */
    int r = buf[0] == '*' ? RESP_ERR : resp_parse(&p, buf, n + 1, &pos);
    if (r == RESP_DONE) {
        argc = p.argc;
        *argvp = calloc((size_t)argc + 1, sizeof(char *));
        for (int i = 0; i < argc; i++)
            (*argvp)[i] = strndup(p.argv[i].ptr, p.argv[i].len);
    } else if (r == RESP_ERR) {
        argc = -1;
    }
    resp_parser_free(&p);
    free(buf);
    return argc;
}

void config_free_args(char **argv, int argc)
{
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

int config_load_file(const char *path, char **err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        *err = fmt_err("cannot open config file: %s", path);
        return -1;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        s[strcspn(s, "\r\n")] = '\0';
        if (*s == '#' || *s == '\0') continue;
        char **argv;
        int argc = config_split_args(s, &argv);
        char *why = NULL;
        if (argc < 0)
            why = strdup("unbalanced quotes in configuration line");
        else if (argc > 0)
            config_set(argv[0], (const char *const *)argv + 1, argc - 1, 1, &why);
        if (argc >= 0) config_free_args(argv, argc);
        if (why) {
            char buf[600];
            snprintf(buf, sizeof(buf), "%s:%d: '%.200s': %.300s", path, lineno, s, why);
            free(why);
            *err = strdup(buf);
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}
