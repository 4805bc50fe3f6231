/*
 * driver_rocksdb.c -- the profile workload on RocksDB (Debian's librocksdb,
 * C API), laid out as the public report describes: five separate databases,
 * secondary indexes maintained by the application, no batch across them.
 *
 * On-disk layout under the run directory (each a RocksDB database, zstd):
 *   profiles/       be64(user_id)                          -> wl_encode record
 *   email/          email bytes                            -> be64(user_id)
 *   country-status/ country "|" status "|" be64(user_id)   -> ""
 *   created-at/     be64(created_at) be64(user_id)         -> ""
 *   reputation/     be64(1_000_000 - reputation) be64(user_id) -> ""
 * be64 is 8-byte big-endian, so bytewise key order is the query order of
 * §2 (all values are non-negative). WAL on, no sync; compaction of every
 * database before the read phases ("stabilize").
 */
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/profiles/driver.h"
#include "bench/profiles/util.h"

enum { DB_PROFILES, DB_EMAIL, DB_CS, DB_CA, DB_REP, NDB };
static const char *const db_names[NDB] = {"profiles", "email", "country-status", "created-at",
                                          "reputation"};

struct drv_engine {
    char dir[512];
    rocksdb_options_t *opts;
    rocksdb_writeoptions_t *wo;
    rocksdb_readoptions_t *ro;
    rocksdb_t *db[NDB];
};

struct drv_conn {
    drv_engine *e;
};

static int rdb_probe(char *why, size_t cap)
{
    (void)why;
    (void)cap;
    return 0; /* linked in: always available */
}

static int open_dbs(drv_engine *e, char *err, size_t cap)
{
    for (int i = 0; i < NDB; i++) {
        char path[640], *rerr = NULL;
        snprintf(path, sizeof(path), "%s/%s", e->dir, db_names[i]);
        e->db[i] = rocksdb_open(e->opts, path, &rerr);
        if (rerr) {
            snprintf(err, cap, "rocksdb open %s: %s", path, rerr);
            rocksdb_free(rerr);
            return -1;
        }
    }
    return 0;
}

static void close_dbs(drv_engine *e)
{
    for (int i = 0; i < NDB; i++) {
        if (e->db[i]) rocksdb_close(e->db[i]);
        e->db[i] = NULL;
    }
}

static void rdb_close(drv_engine *e)
{
    if (!e) return;
    close_dbs(e);
    if (e->opts) rocksdb_options_destroy(e->opts);
    if (e->wo) rocksdb_writeoptions_destroy(e->wo);
    if (e->ro) rocksdb_readoptions_destroy(e->ro);
    free(e);
}

static drv_engine *rdb_open(const char *dir, char *err, size_t cap)
{
    drv_engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    snprintf(e->dir, sizeof(e->dir), "%s", dir);
    e->opts = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(e->opts, 1);
    rocksdb_options_set_compression(e->opts, rocksdb_zstd_compression);
    rocksdb_options_set_write_buffer_size(e->opts, (size_t)1024 << 20);
    rocksdb_options_set_max_write_buffer_number(e->opts, 4);
    e->wo = rocksdb_writeoptions_create();
    rocksdb_writeoptions_set_sync(e->wo, 0);
    e->ro = rocksdb_readoptions_create();
    if (open_dbs(e, err, cap) != 0) {
        rdb_close(e);
        return NULL;
    }
    return e;
}

static drv_conn *rdb_connect(drv_engine *e, char *err, size_t cap)
{
    drv_conn *c = calloc(1, sizeof(*c));
    if (!c)
        snprintf(err, cap, "out of memory");
    else
        c->e = e;
    return c;
}

static void rdb_disconnect(drv_conn *c)
{
    free(c);
}

/* ---- Keys -------------------------------------------------------------- */

static size_t cs_key(char *k, const char *country, const char *status, int64_t id)
{
    size_t n = (size_t)sprintf(k, "%s|%s|", country, status);
    util_be64(k + n, (uint64_t)id);
    return n + 8;
}

static void ca_key(char *k, int64_t created_at, int64_t id)
{
    util_be64(k, (uint64_t)created_at);
    util_be64(k + 8, (uint64_t)id);
}

static void rep_key(char *k, int32_t rep, int64_t id)
{
    util_be64(k, (uint64_t)(WL_MAX_REPUTATION - rep));
    util_be64(k + 8, (uint64_t)id);
}

static int put(drv_engine *e, int db, const char *k, size_t kl, const char *v, size_t vl, char *err,
               size_t cap)
{
    char *rerr = NULL;
    rocksdb_put(e->db[db], e->wo, k, kl, v, vl, &rerr);
    if (!rerr) return 0;
    snprintf(err, cap, "rocksdb put %s: %s", db_names[db], rerr);
    rocksdb_free(rerr);
    return -1;
}

static int del(drv_engine *e, int db, const char *k, size_t kl, char *err, size_t cap)
{
    char *rerr = NULL;
    rocksdb_delete(e->db[db], e->wo, k, kl, &rerr);
    if (!rerr) return 0;
    snprintf(err, cap, "rocksdb delete %s: %s", db_names[db], rerr);
    rocksdb_free(rerr);
    return -1;
}

/* ---- Operations -------------------------------------------------------- */

/* Reads profile id into *p. Returns 1 found, 0 absent, -1 error. */
static int get_profile(drv_engine *e, int64_t id, wl_profile *p, char *err, size_t cap)
{
    char k[8], *rerr = NULL;
    size_t vl = 0;
    util_be64(k, (uint64_t)id);
    char *v = rocksdb_get(e->db[DB_PROFILES], e->ro, k, 8, &vl, &rerr);
    if (rerr) {
        snprintf(err, cap, "rocksdb get: %s", rerr);
        rocksdb_free(rerr);
        return -1;
    }
    if (!v) return 0;
    int rc = wl_decode(v, vl, p);
    rocksdb_free(v);
    if (rc != 0) {
        snprintf(err, cap, "rocksdb: malformed record for user %lld", (long long)id);
        return -1;
    }
    return 1;
}

static int write_profile(drv_engine *e, const wl_profile *o, const wl_profile *p, char *err,
                         size_t cap)
{
    char rec[WL_RECORD_MAX], k[64], ok[64], idk[8];
    size_t rl = wl_encode(p, rec, sizeof(rec));
    util_be64(idk, (uint64_t)p->user_id);
    if (!rl) {
        snprintf(err, cap, "profile %lld too large", (long long)p->user_id);
        return -1;
    }
    if (put(e, DB_PROFILES, idk, 8, rec, rl, err, cap)) return -1;
    if (!o || strcmp(o->email, p->email)) {
        if (o && del(e, DB_EMAIL, o->email, strlen(o->email), err, cap)) return -1;
        if (put(e, DB_EMAIL, p->email, strlen(p->email), idk, 8, err, cap)) return -1;
    }
    if (!o || strcmp(o->country, p->country) || strcmp(o->status, p->status)) {
        if (o && del(e, DB_CS, ok, cs_key(ok, o->country, o->status, o->user_id), err, cap))
            return -1;
        if (put(e, DB_CS, k, cs_key(k, p->country, p->status, p->user_id), "", 0, err, cap))
            return -1;
    }
    if (!o || o->created_at != p->created_at) {
        ca_key(k, p->created_at, p->user_id);
        if (o) ca_key(ok, o->created_at, o->user_id);
        if (o && del(e, DB_CA, ok, 16, err, cap)) return -1;
        if (put(e, DB_CA, k, 16, "", 0, err, cap)) return -1;
    }
    if (!o || o->reputation != p->reputation) {
        rep_key(k, p->reputation, p->user_id);
        if (o) rep_key(ok, o->reputation, o->user_id);
        if (o && del(e, DB_REP, ok, 16, err, cap)) return -1;
        if (put(e, DB_REP, k, 16, "", 0, err, cap)) return -1;
    }
    return 0;
}

/* Walks db from key lo while keys are < hi (bytewise; hi NULL: no bound),
 * collecting the user_id in the last 8 bytes of up to WL_LIMIT keys. */
static int scan(drv_engine *e, int db, const char *lo, size_t lol, const char *hi, size_t hil,
                drv_req *r, char *err, size_t cap)
{
    rocksdb_iterator_t *it = rocksdb_create_iterator(e->db[db], e->ro);
    r->n = 0;
    for (rocksdb_iter_seek(it, lo, lol); rocksdb_iter_valid(it) && r->n < WL_LIMIT;
         rocksdb_iter_next(it)) {
        size_t kl;
        const char *k = rocksdb_iter_key(it, &kl);
        if (hi && util_cmp(k, kl, hi, hil) >= 0) break;
        if (kl < 8) continue;
        r->ids[r->n++] = (int64_t)util_get_be64(k + kl - 8);
    }
    char *rerr = NULL;
    rocksdb_iter_get_error(it, &rerr);
    rocksdb_iter_destroy(it);
    if (rerr) {
        snprintf(err, cap, "rocksdb scan %s: %s", db_names[db], rerr);
        rocksdb_free(rerr);
        return -1;
    }
    if (!r->want_profiles) return 0;
    for (int i = 0; i < r->n; i++) {
        int rc = get_profile(e, r->ids[i], &r->out[i], err, cap);
        if (rc <= 0) {
            if (rc == 0)
                snprintf(err, cap, "index entry for missing user %lld", (long long)r->ids[i]);
            return -1;
        }
    }
    return 0;
}

static int exec_one(drv_engine *e, drv_req *r, char *err, size_t cap)
{
    char lo[64], hi[64];
    size_t n;
    switch (r->op) {
    case DRV_INSERT:
        return write_profile(e, NULL, r->new_p, err, cap);
    case DRV_WRITE:
        return write_profile(e, r->old_p, r->new_p, err, cap);
    case DRV_GET: {
        int rc = get_profile(e, r->id, &r->out[0], err, cap);
        r->n = rc > 0;
        return rc < 0 ? -1 : 0;
    }
    case DRV_EMAIL: {
        char *rerr = NULL;
        size_t vl = 0;
        char *v = rocksdb_get(e->db[DB_EMAIL], e->ro, r->email, strlen(r->email), &vl, &rerr);
        r->n = 0;
        if (rerr) {
            snprintf(err, cap, "rocksdb get email: %s", rerr);
            rocksdb_free(rerr);
            return -1;
        }
        if (!v) return 0;
        int64_t id = vl == 8 ? (int64_t)util_get_be64(v) : -1;
        rocksdb_free(v);
        int rc = get_profile(e, id, &r->out[0], err, cap);
        r->n = rc > 0;
        return rc < 0 ? -1 : 0;
    }
    case DRV_CS:
        n = (size_t)sprintf(lo, "%s|%s|", wl_countries[r->country], wl_statuses[r->status]);
        memcpy(hi, lo, n);
        hi[n - 1]++; /* "US|active}" bounds every key with the prefix */
        return scan(e, DB_CS, lo, n, hi, n, r, err, cap);
    case DRV_CA:
        util_be64(lo, (uint64_t)r->from);
        util_be64(hi, (uint64_t)r->to + 1);
        return scan(e, DB_CA, lo, 8, hi, 8, r, err, cap);
    case DRV_TOP:
        return scan(e, DB_REP, "", 0, NULL, 0, r, err, cap);
    }
    snprintf(err, cap, "unknown request");
    return -1;
}

static int rdb_exec(drv_conn *c, drv_req *reqs, int n, char *err, size_t cap)
{
    for (int i = 0; i < n; i++)
        if (exec_one(c->e, &reqs[i], err, cap)) return -1;
    return 0;
}

static int rdb_stabilize(drv_engine *e, char *err, size_t cap)
{
    for (int i = 0; i < NDB; i++)
        rocksdb_compact_range(e->db[i], NULL, 0, NULL, 0);
    return 0;
}

static int rdb_settle(drv_engine *e, char *err, size_t cap)
{
    rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
    rocksdb_flushoptions_set_wait(fo, 1);
    int rc = 0;
    for (int i = 0; i < NDB && rc == 0; i++) {
        char *rerr = NULL;
        rocksdb_flush(e->db[i], fo, &rerr);
        if (rerr) {
            snprintf(err, cap, "rocksdb flush %s: %s", db_names[i], rerr);
            rocksdb_free(rerr);
            rc = -1;
        }
    }
    rocksdb_flushoptions_destroy(fo);
    return rc;
}

static int64_t rdb_storage(drv_engine *e)
{
    return util_dir_bytes(e->dir);
}

static int rdb_reopen(drv_engine *e, char *err, size_t cap)
{
    close_dbs(e);
    return open_dbs(e, err, cap);
}

static int64_t rdb_count(drv_conn *c, char *err, size_t cap)
{
    rocksdb_iterator_t *it = rocksdb_create_iterator(c->e->db[DB_PROFILES], c->e->ro);
    int64_t n = 0;
    for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it))
        n++;
    rocksdb_iter_destroy(it);
    return n;
}

static pid_t rdb_server_pid(drv_engine *e)
{
    return 0;
}

const drv_ops drv_rocksdb_ops = {
    .name = "rocksdb",
    .title = "RocksDB",
    .remote = 0,
    .settings = "Databases: profiles,email,country-status,created-at,reputation\n"
                "Compression: Zstd\nWriteBufferMb: 1024\nMaxWriteBufferNumber: 4\n"
                "WriteSync: false (WAL enabled)\n"
                "ReadStabilization: Compact before read/query phases\n"
                "Indexes: application-managed, one database each, no batch across them\n",
    .probe = rdb_probe,
    .open = rdb_open,
    .connect = rdb_connect,
    .disconnect = rdb_disconnect,
    .exec = rdb_exec,
    .stabilize = rdb_stabilize,
    .settle = rdb_settle,
    .storage = rdb_storage,
    .reopen = rdb_reopen,
    .count = rdb_count,
    .server_pid = rdb_server_pid,
    .close = rdb_close,
};
