/*
 * driver.h -- the engine-driver interface of strata-bench profiles.
 *
 * An engine (strata, redis, rocksdb, sqlite, mariadb) is opened once per run
 * in a fresh temporary directory; each worker thread then takes its own
 * connection. Work is submitted as arrays of requests: a network driver sends
 * all of them before reading any reply (pipelining), an embedded one runs
 * them in order. Either way the results come back in request order and a
 * request sees the effects of every request before it in the same array,
 * except that a GET pipelined after a WRITE of the same id on the same
 * connection is not submitted by the runner (it splits batches instead).
 *
 * Threading: drv_engine calls (open, stabilize, settle, storage, reopen,
 * close) are made by one thread while no connection is in use; each drv_conn
 * is used by one thread at a time. Errors are reported as -1 with a message
 * in err (cap bytes); the caller then closes the engine.
 */
#ifndef STRATA_BENCH_DRIVER_H
#define STRATA_BENCH_DRIVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench/profiles/workload.h"

typedef enum drv_op {
    DRV_INSERT, /* store *new_p (a new id), maintaining every index */
    DRV_GET,    /* profile by id -> out[0], n = 1 (0 when absent) */
    DRV_EMAIL,  /* profile by email -> out[0], n = 1 (0 when absent) */
    DRV_CS,     /* country/status: up to WL_LIMIT by user_id ascending */
    DRV_CA,     /* from <= created_at <= to by (created_at, user_id) */
    DRV_TOP,    /* by reputation descending, then user_id ascending */
    DRV_WRITE,  /* replace *old_p (as stored) by *new_p, indexes follow */
} drv_op;

typedef struct drv_req {
    drv_op op;
    int want_profiles;               /* DRV_CS/CA/TOP: 1 fills out[], 0 fills ids[] */
    int64_t id;                      /* DRV_GET */
    const char *email;               /* DRV_EMAIL */
    uint8_t country, status;         /* DRV_CS: indexes into wl_countries / wl_statuses */
    int64_t from, to;                /* DRV_CA */
    const wl_profile *old_p, *new_p; /* DRV_INSERT (new_p only), DRV_WRITE */
    /* Results, into caller-owned arrays of WL_LIMIT entries. */
    int n;
    int64_t *ids;
    wl_profile *out;
} drv_req;

typedef struct drv_engine drv_engine;
typedef struct drv_conn drv_conn;

typedef struct drv_ops {
    const char *name;     /* as on the command line: "rocksdb" */
    const char *title;    /* as in the report: "RocksDB" */
    int remote;           /* 1: over loopback TCP (pipelining applies) */
    const char *settings; /* Markdown lines for "Engine Settings" */

    /* 0 when the engine can run here; otherwise -1 and why it cannot. */
    int (*probe)(char *why, size_t cap);
    /* Creates an empty store under dir (which exists and is empty), starting
     * a server if the engine has one. Creates the indexes. */
    drv_engine *(*open)(const char *dir, char *err, size_t cap);
    drv_conn *(*connect)(drv_engine *e, char *err, size_t cap);
    void (*disconnect)(drv_conn *c);
    /* Runs reqs[0..n) (see the header comment). Returns 0 or -1. */
    int (*exec)(drv_conn *c, drv_req *reqs, int n, char *err, size_t cap);
    /* Optional (NULL: "n/a"): compaction before read phases. */
    int (*stabilize)(drv_engine *e, char *err, size_t cap);
    /* Flush / checkpoint so that storage can be measured. */
    int (*settle)(drv_engine *e, char *err, size_t cap);
    /* Bytes the data takes on disk after settle; -1 when unknown. */
    int64_t (*storage)(drv_engine *e);
    /* Closes everything (connections already disconnected) and opens the
     * same data from disk again. */
    int (*reopen)(drv_engine *e, char *err, size_t cap);
    /* Number of stored profiles, or -1 with err. */
    int64_t (*count)(drv_conn *c, char *err, size_t cap);
    /* The server process, or 0 for an embedded engine. */
    pid_t (*server_pid)(drv_engine *e);
    /* Stops servers and frees e. The caller removes the directory. */
    void (*close)(drv_engine *e);
} drv_ops;

extern const drv_ops drv_strata_ops;
extern const drv_ops drv_strata_ft_ops;
extern const drv_ops drv_redis_ops;
extern const drv_ops drv_rocksdb_ops;
extern const drv_ops drv_sqlite_ops;
extern const drv_ops drv_mariadb_ops;

#endif
