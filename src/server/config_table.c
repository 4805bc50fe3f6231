/*
 * config_table.c -- the settings table: one row per setting (name, type,
 * where its value lives, default, bounds, flags) and the hooks of the rows
 * whose value needs more than a store: several-word settings with their
 * own syntax and apply functions that pass a change on to another part of
 * the server. Kept apart from config.c, which parses values and serves
 * CONFIG GET/SET and the config file, because adding a setting touches
 * only this file.
 */
#include "server/config.h"
#include "server/config_internal.h"
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
#include "server/server.h"
#include "server/tls.h"

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

void config_get_notify(char *buf, size_t cap)
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

const config_row config_table[] = {
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
    {"inplace-updates", T_BOOL, F_IMMUTABLE, &cfg.inplace_updates, "yes", 0, 0, NULL, NULL},
    {"readahead-thread", T_BOOL, F_IMMUTABLE, &cfg.readahead, "yes", 0, 0, NULL, NULL},
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
    {"notify-keyspace-events", T_SPECIAL, 0, NULL, "", 0, 0, NULL, NULL, set_notify,
     config_get_notify},
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
const size_t config_nrows = sizeof(config_table) / sizeof(config_table[0]);
char *config_default_text[sizeof(config_table) / sizeof(config_table[0])];
