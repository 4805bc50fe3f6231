/*
 * config.h -- server settings: a redis.conf-style file of "name value"
 * lines, command-line "--name value" overrides, and CONFIG GET/SET.
 *
 * The file format: one setting per line, "name arg [arg ...]"; '#' starts a
 * comment line; blank lines are ignored; arguments split as Redis's
 * sdssplitargs ("double quotes" with \n \xHH escapes, 'single quotes').
 * Names are case-insensitive. Memory sizes accept 1k/1kb/1m/1mb/1g/1gb
 * (k = 1000, kb = 1024, as Redis). Booleans: yes/no.
 *
 * Threading: the command thread only (and main before the loop starts).
 */
#ifndef STRATA_CONFIG_H
#define STRATA_CONFIG_H

#include <stddef.h>

#define CONFIG_MAX_PERCENTILES 64 /* latency-tracking-info-percentiles */

typedef struct server_config {
    char *bind;
    int port;
    char *dir;
    int appendfsync;   /* ENG_SYNC_* */
    char *requirepass; /* "" = none */
    int maxclients;
    int timeout; /* seconds idle before a client is closed; 0 = never */
    int tcp_keepalive;
    long long cache_size;
    long long row_cache_size;
    long long write_buffer_size;
    int compression;        /* zstd level; 0 = off */
    int bottom_compression; /* zstd level of bottom-level compaction output; 0 = compression */
    int flush_compression;  /* zstd level of flushed (L0) tables; 0 = raw, < 0 = fast levels */
    long long compression_dict_size; /* zstd dictionary per bottom-level table; 0 = none */
    int inplace_updates;  /* overwrites replace the memtable's newest version (eng_options) */
    int readahead;        /* a thread loads a pipeline's missing data blocks (eng_options) */
    int log_load_corrupt; /* start from the last good record of a log damaged in the middle */
    int loglevel;         /* LL_* */
    char *logfile;        /* "" = stdout */
    char *pidfile;        /* "" = none */
    int daemonize;
    int hz;
    long long proto_max_bulk_len;
    long long tracking_table_max_keys; /* client-side caching table (tracking.c TR2) */
    long long client_query_buffer_limit;
    int databases;
    int tcp_backlog;
    /* client-output-buffer-limit, per CLIENT_CLASS_* (server.h): 0 = none */
    struct obuf_limit {
        unsigned long long hard, soft; /* bytes */
        long long soft_seconds;
    } obuf_limits[3];
    long long reply_memory_limit;      /* all clients' reply blocks; 0 = none */
    int busy_reply_threshold;          /* ms a script runs before others get BUSY; 0 = never */
    long long slowlog_log_slower_than; /* us; -1: off */
    long long slowlog_max_len;
    long long latency_monitor_threshold; /* ms; 0: off */
    int latency_tracking;                /* per-command latency histograms */
    double latency_percentiles[CONFIG_MAX_PERCENTILES];
    int latency_percentiles_n;
    long long hll_sparse_max_bytes; /* a sparse HyperLogLog turns dense past this */
    /* security (acl*.c, networking.c, tls.c) */
    char *aclfile;            /* "" = users from `user` lines */
    int acl_pubsub_default;   /* 1: new users get allchannels */
    long long acllog_max_len; /* ACL LOG entries kept */
    int protected_mode; /* refuse non-loopback clients while the default user has no password */
    int enable_debug_cmd, enable_module_cmd, enable_protected_configs; /* PROTECTED_* */
    int set_proc_title;
    int tls_port;
    char *tls_cert_file, *tls_key_file, *tls_key_file_pass;
    char *tls_client_cert_file, *tls_client_key_file, *tls_client_key_file_pass;
    char *tls_ca_cert_file, *tls_ca_cert_dir, *tls_dh_params_file;
    char *tls_protocols, *tls_ciphers, *tls_ciphersuites;
    int tls_auth_clients; /* TLS_CLIENT_AUTH_* */
    int tls_prefer_server_ciphers, tls_session_caching;
    int tls_session_cache_size, tls_session_cache_timeout;
    /* replication (REPLICATION.md) */
    long long repl_backlog_size;
    int min_replicas_to_write, min_replicas_max_lag; /* NOREPLICAS */
    int replica_read_only, replica_priority, replica_announce_port;
    int jemalloc_bg_thread;
    int replica_serve_stale_data;       /* no: MASTERDOWN while the link is down */
    int repl_ping_period, repl_timeout; /* seconds */
    char *masterauth, *masteruser, *replica_announce_ip;
} server_config;

/* enable-debug-command & co: no / yes / local (loopback clients only). */
enum { PROTECTED_NO = 0, PROTECTED_YES = 1, PROTECTED_LOCAL = 2 };
enum { TLS_CLIENT_AUTH_NO = 0, TLS_CLIENT_AUTH_YES = 1, TLS_CLIENT_AUTH_OPTIONAL = 2 };

extern server_config cfg;

/* Sets every setting to its default. */
void config_init_defaults(void);
/* Applies the file at path. Returns 0, or -1 with a message in *err
 * (malloc'd, the caller frees) naming the line. */
int config_load_file(const char *path, char **err);
/* Sets one setting from its textual arguments. at_startup allows immutable
 * settings. Returns 0, or -1 with *err set to the Redis-style reason
 * (malloc'd). */
int config_set(const char *name, const char *const *argv, int argc, int at_startup, char **err);
/* Whether the running CONFIG SET may change a protected setting (dir,
 * dbfilename): enable-protected-configs yes, or local and the client is
 * local. Set by CONFIG SET around its config_set calls. */
extern int config_protected_allowed;
/* CONFIG SET name value [name value ...] (pairs holds 2n strings) as
 * Redis 7.0: the first unknown, immutable or repeated name fails the
 * whole command before anything changes; then the values are set in order
 * and a failure restores the ones already set. Returns 0, or -1 with *err
 * (malloc'd) the full error reply text. */
int config_set_pairs(const char *const *pairs, int n, char **err);
/* Writes the current value of setting name (canonical) into buf. Returns 0
 * or -1 when unknown. */
int config_get_value(const char *name, char *buf, size_t cap);
/* 1 when the setting's value must not show in MONITOR/SLOWLOG (passwords). */
int config_is_sensitive(const char *name);
/* The path CONFIG REWRITE writes (the file given at start), or NULL. */
const char *config_file_path(void);
/* CONFIG REWRITE: rewrites the config file with the current settings,
 * keeping its comments, blank lines and order, as Redis's rewriteConfig:
 * a setting's line is replaced where it was; settings that differ from
 * their defaults and were not in the file are appended after a
 * "# Generated by CONFIG REWRITE" line; the file is replaced atomically
 * (written to a temporary file, fsynced, renamed). Returns 0, or -1 with
 * errno set. */
int config_rewrite(const char *path);
/* Calls fn for every setting, in table order, with its value as a config
 * file line would say it (strings quoted, memory in kb/mb/gb) and whether
 * it is the default (CONFIG REWRITE). A setting written as several lines
 * (client-output-buffer-limit, one per class) comes once per line. */
typedef void (*config_each_fn)(void *ctx, const char *name, const char *file_value, int is_default);
void config_each(config_each_fn fn, void *ctx);
/* Calls fn for every setting whose name matches the glob pattern
 * (ks_glob_match, case-insensitive). */
typedef void (*config_visit_fn)(void *ctx, const char *name, const char *value);
void config_match(const char *pattern, config_visit_fn fn, void *ctx);

/* Hands the settings behind packing, OBJECT ENCODING and OBJECT
 * IDLETIME/FREQ to the keyspace and key_access.c (after the keyspace is
 * open, and whenever CONFIG SET changes one). */
void config_apply_keyspace(void);
/* "1gb" -> 1073741824. Returns 0, or -1 when not a memory value. */
int config_parse_memory(const char *s, long long *out);
/* Splits line into arguments as sdssplitargs; returns argc (malloc'd argv
 * of malloc'd strings, freed with config_free_args) or -1 on bad quotes. */
int config_split_args(const char *line, char ***argv);
void config_free_args(char **argv, int argc);

/* jemalloc-bg-thread (cmd_introspect.c): jemalloc's background threads,
 * which return freed pages to the system on its decay timers even while
 * the server is idle, as Redis's; nothing without jemalloc. Command thread. */
void server_set_jemalloc_bg_thread(int on);

#endif
