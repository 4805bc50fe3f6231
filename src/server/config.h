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
    int compression;      /* zstd level; 0 = off */
    int log_load_corrupt; /* start from the last good record of a log damaged in the middle */
    int loglevel;         /* LL_* */
    char *logfile;        /* "" = stdout */
    char *pidfile;        /* "" = none */
    int daemonize;
    int hz;
    long long proto_max_bulk_len;
    long long client_query_buffer_limit;
    int databases;
    int tcp_backlog;
    /* client-output-buffer-limit, per CLIENT_CLASS_* (server.h): 0 = none */
    struct obuf_limit {
        unsigned long long hard, soft; /* bytes */
        long long soft_seconds;
    } obuf_limits[3];
    long long reply_memory_limit; /* all clients' reply blocks; 0 = none */
    int busy_reply_threshold; /* ms a script runs before others get BUSY; 0 = never */
    long long hll_sparse_max_bytes; /* a sparse HyperLogLog turns dense past this */
} server_config;

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
/* Writes the current value of setting name (canonical) into buf. Returns 0
 * or -1 when unknown. */
int config_get_value(const char *name, char *buf, size_t cap);
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

#endif
