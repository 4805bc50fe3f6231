/*
 * driver_strata.c -- the profile workload on strata-server over loopback
 * TCP (hiredis, RESP2), with the four server-side profile indexes.
 *
 * Data: one hash user:<id> per profile with the nine fields (integers in
 * decimal). Indexes, created before the insert phase:
 *   email          PREFIX user: UNIQUE SCHEMA email TAG
 *   country_status PREFIX user: SCHEMA country TAG status TAG user_id NUMERIC
 *   created_at     PREFIX user: SCHEMA created_at NUMERIC user_id NUMERIC
 *   reputation     PREFIX user: SCHEMA reputation NUMERIC DESC user_id NUMERIC
 * Point reads are HGETALL; email lookups, scans and queries are IDX.RANGE
 * (keys for scans, HASHES for email lookups, and for queries VALUES 9 <the
 * nine fields>: each hit's values by position, as a SQL driver reads
 * columns, every one still decoded and stored); an update is the runner's read,
 * then one HSET of the changed fields. The server binary is
 * $STRATA_SERVER, or strata-server next to strata-bench.
 *
 * strata-ft is the same server driven through the RediSearch dialect: the
 * four indexes made with FT.CREATE (TAG, NUMERIC SORTABLE; user_id is
 * SORTABLE NOINDEX where no query filters on it) and every lookup, scan and
 * query an FT.SEARCH (NOCONTENT for scans):
 *   @email:{<escaped>} LIMIT 0 1
 *   @country:{US} @status:{active} SORTBY user_id LIMIT 0 100
 *   @created_at:[from to] SORTBY created_at LIMIT 0 100
 *   * SORTBY reputation DESC LIMIT 0 100   (ties: shorter key first, so user_id order)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/profiles/driver.h"
#include "bench/profiles/resp_client.h"
#include "bench/profiles/resp_fast.h"
#include "bench/profiles/util.h"

static const char *const index_defs[] = {
    "IDX.CREATE email PREFIX user: UNIQUE SCHEMA email TAG",
    "IDX.CREATE country_status PREFIX user: SCHEMA country TAG status TAG user_id NUMERIC",
    "IDX.CREATE created_at PREFIX user: SCHEMA created_at NUMERIC user_id NUMERIC",
    "IDX.CREATE reputation PREFIX user: SCHEMA reputation NUMERIC DESC user_id NUMERIC",
};

static const char *const ft_index_defs[] = {
    "FT.CREATE email ON HASH PREFIX 1 user: SCHEMA email TAG",
    "FT.CREATE country_status ON HASH PREFIX 1 user: SCHEMA country TAG status TAG user_id "
    "NUMERIC SORTABLE",
    "FT.CREATE created_at ON HASH PREFIX 1 user: SCHEMA created_at NUMERIC SORTABLE user_id "
    "NUMERIC SORTABLE NOINDEX",
    "FT.CREATE reputation ON HASH PREFIX 1 user: SCHEMA reputation NUMERIC SORTABLE user_id "
    "NUMERIC SORTABLE NOINDEX",
};

struct drv_engine {
    rc_server srv;
    int ft; /* strata-ft: FT.CREATE / FT.SEARCH */
};

struct drv_conn {
    redisContext *ctx; /* commands go out through hiredis ... */
    rf_reader rd;      /* ... replies come back through resp_fast */
    rc_cmd cmd;
    int ft;
    char buf[256];
};

static drv_engine *open_engine(const char *dir, int ft, char *err, size_t cap)
{
    drv_engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->ft = ft;
    const char *const *defs = ft ? ft_index_defs : index_defs;
    rc_strata_bin(e->srv.bin, sizeof(e->srv.bin));
    snprintf(e->srv.dir, sizeof(e->srv.dir), "%s", dir);
    static const char *extra[] = {"--appendfsync", "everysec", "--enable-debug-command", "local",
                                  NULL};
    memcpy(e->srv.extra, extra, sizeof(extra));
    if (rc_server_start(&e->srv, err, cap)) {
        free(e);
        return NULL;
    }
    redisContext *ctx = rc_connect(e->srv.port, err, cap);
    for (size_t i = 0; ctx && i < sizeof(index_defs) / sizeof(index_defs[0]); i++) {
        redisReply *r = redisCommand(ctx, defs[i]);
        int ok = r && r->type != REDIS_REPLY_ERROR;
        if (!ok) snprintf(err, cap, "%s: %s", defs[i], r ? r->str : ctx->errstr);
        if (r) freeReplyObject(r);
        if (!ok) {
            redisFree(ctx);
            ctx = NULL;
        }
    }
    if (!ctx) {
        rc_server_stop(&e->srv);
        free(e);
        return NULL;
    }
    redisFree(ctx);
    return e;
}

static drv_engine *st_open(const char *dir, char *err, size_t cap)
{
    return open_engine(dir, 0, err, cap);
}

static drv_engine *ft_open(const char *dir, char *err, size_t cap)
{
    return open_engine(dir, 1, err, cap);
}

static void st_close(drv_engine *e)
{
    if (!e) return;
    rc_server_stop(&e->srv);
    free(e);
}

static drv_conn *st_connect(drv_engine *e, char *err, size_t cap)
{
    drv_conn *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    if (!(c->ctx = rc_connect(e->srv.port, err, cap))) {
        free(c);
        return NULL;
    }
    c->ft = e->ft;
    return c;
}

static void st_disconnect(drv_conn *c)
{
    if (!c) return;
    redisFree(c->ctx);
    rf_free(&c->rd);
    free(c);
}

/* The FT.SEARCH of a lookup, scan or query. */
static void append_ft(drv_conn *c, const drv_req *r)
{
    rc_cmd *cmd = &c->cmd;
    rc_str(cmd, "FT.SEARCH");
    switch (r->op) {
    case DRV_EMAIL: {
        /* punctuation in a TAG value is escaped, as RediSearch requires */
        size_t o = (size_t)snprintf(c->buf, sizeof(c->buf), "@email:{");
        for (const char *p = r->email; *p && o + 4 < sizeof(c->buf); p++) {
            if (*p == '@' || *p == '.' || *p == '-') c->buf[o++] = '\\';
            c->buf[o++] = *p;
        }
        snprintf(c->buf + o, sizeof(c->buf) - o, "}");
        rc_str(cmd, "email");
        rc_str(cmd, c->buf);
        break;
    }
    case DRV_CS:
        rc_str(cmd, "country_status");
        rc_fmt(cmd, "@country:{%s} @status:{%s}", wl_countries[r->country], wl_statuses[r->status]);
        rc_str(cmd, "SORTBY");
        rc_str(cmd, "user_id");
        break;
    case DRV_CA:
        rc_str(cmd, "created_at");
        rc_fmt(cmd, "@created_at:[%lld %lld]", (long long)r->from, (long long)r->to);
        rc_str(cmd, "SORTBY");
        rc_str(cmd, "created_at");
        break;
    default:
        rc_str(cmd, "reputation");
        rc_str(cmd, "*");
        rc_str(cmd, "SORTBY");
        rc_str(cmd, "reputation");
        rc_str(cmd, "DESC");
        break;
    }
    if (r->op != DRV_EMAIL && !r->want_profiles) rc_str(cmd, "NOCONTENT");
    rc_str(cmd, "LIMIT");
    rc_str(cmd, "0");
    rc_fmt(cmd, "%d", r->op == DRV_EMAIL ? 1 : WL_LIMIT);
}

static int append_req(drv_conn *c, const drv_req *r, char *err, size_t cap)
{
    rc_cmd *cmd = &c->cmd;
    if (c->ft && r->op != DRV_INSERT && r->op != DRV_WRITE && r->op != DRV_GET) {
        append_ft(c, r);
        return rc_append(c->ctx, cmd, err, cap);
    }
    switch (r->op) {
    case DRV_INSERT:
        rc_build_hset(cmd, NULL, r->new_p);
        break;
    case DRV_WRITE:
        rc_build_hset(cmd, r->old_p, r->new_p);
        break;
    case DRV_GET:
        rc_str(cmd, "HGETALL");
        rc_fmt(cmd, "user:%lld", (long long)r->id);
        break;
    case DRV_EMAIL:
        rc_str(cmd, "IDX.RANGE");
        rc_str(cmd, "email");
        rc_str(cmd, "EQ");
        rc_str(cmd, r->email);
        break;
    case DRV_CS:
        rc_str(cmd, "IDX.RANGE");
        rc_str(cmd, "country_status");
        rc_str(cmd, "EQ");
        rc_str(cmd, wl_countries[r->country]);
        rc_str(cmd, wl_statuses[r->status]);
        break;
    case DRV_CA:
        rc_str(cmd, "IDX.RANGE");
        rc_str(cmd, "created_at");
        rc_str(cmd, "MIN");
        rc_fmt(cmd, "%lld", (long long)r->from);
        rc_str(cmd, "MAX");
        rc_fmt(cmd, "%lld", (long long)r->to);
        break;
    case DRV_TOP:
        rc_str(cmd, "IDX.RANGE");
        rc_str(cmd, "reputation");
        break;
    }
    if (r->op == DRV_EMAIL || r->op == DRV_CS || r->op == DRV_CA || r->op == DRV_TOP) {
        rc_str(cmd, "LIMIT");
        rc_str(cmd, "0");
        rc_fmt(cmd, "%d", r->op == DRV_EMAIL ? 1 : WL_LIMIT);
        if (r->op == DRV_EMAIL) {
            rc_str(cmd, "HASHES"); /* one hit: naming the fields in the request costs more */
        } else if (r->want_profiles) {
            /* the nine values by position: the fields are named once in
             * the request instead of in every hash of the reply */
            rc_str(cmd, "VALUES");
            rc_fmt(cmd, "%d", RC_NFIELDS);
            for (size_t i = 0; i < RC_NFIELDS; i++)
                rc_str(cmd, rc_profile_fields[i]);
        }
    }
    return rc_append(c->ctx, cmd, err, cap);
}

/* user:<id> -> id, or -1. */
static int64_t key_id(const rf_val *k)
{
    int64_t v;
    if (k->type != '$' || !k->s || k->len < 6 || memcmp(k->s, "user:", 5) ||
        rc_parse_i64(k->s + 5, k->len - 5, &v))
        return -1;
    return v;
}

/* An IDX.RANGE reply whose header is h: keys, or (hashes) each key then
 * its hash (pairs: HASHES's field/value pairs, else VALUES's values by
 * position); an FT.SEARCH reply is the same after its first element, the
 * total. */
static int read_range(rf_cur *cur, const rf_val *h, drv_req *r, int hashes, int pairs, int ft,
                      char *err, size_t cap)
{
    rf_val tot;
    if (h->type != '*' || h->n < 0 || (ft && (h->n < 1 || rf_get(cur, &tot) || tot.type != ':'))) {
        snprintf(err, cap, "%s reply of type '%c'", ft ? "FT.SEARCH" : "IDX.RANGE", h->type);
        return -1;
    }
    int64_t step = hashes ? 2 : 1;
    for (int64_t i = ft ? 1 : 0; i + step - 1 < h->n && r->n < WL_LIMIT; i += step) {
        rf_val k, v;
        int64_t id = rf_get(cur, &k) ? -1 : key_id(&k);
        if (id < 0) {
            snprintf(err, cap, "IDX.RANGE returned a key that is not user:<id>");
            return -1;
        }
        r->ids[r->n] = id;
        if (hashes &&
            (rf_get(cur, &v) || (pairs ? rf_decode_hash(cur, &v, &r->out[r->n], err, cap)
                                       : rf_decode_values(cur, &v, &r->out[r->n], err, cap))))
            return -1;
        r->n++;
    }
    return 0;
}

static int read_req(drv_conn *c, drv_req *r, char *err, size_t cap)
{
    rf_cur cur;
    rf_val h;
    if (rf_next(&c->rd, c->ctx, &cur, err, cap) || rf_get(&cur, &h)) return -1;
    if (h.type == '-') {
        snprintf(err, cap, "server error: %.*s", (int)h.len, h.s);
        return -1;
    }
    r->n = 0;
    switch (r->op) {
    case DRV_INSERT:
    case DRV_WRITE:
        return 0;
    case DRV_GET:
        if (h.type != '*' || h.n <= 0) return 0;
        if (rf_decode_hash(&cur, &h, &r->out[0], err, cap)) return -1;
        r->n = 1;
        return 0;
    case DRV_EMAIL: /* key/hash pairs, as FT.SEARCH's */
        return read_range(&cur, &h, r, 1, 1, c->ft, err, cap);
    default:
        return read_range(&cur, &h, r, r->want_profiles, c->ft, c->ft, err, cap);
    }
}

/* The requests go out through hiredis's buffer; their replies are parsed
 * in place (resp_fast.h), every one of them before the next exec. */
static int st_exec(drv_conn *c, drv_req *reqs, int n, char *err, size_t cap)
{
    for (int i = 0; i < n; i++)
        if (append_req(c, &reqs[i], err, cap)) return -1;
    if (rf_flush(c->ctx, err, cap)) return -1;
    for (int i = 0; i < n; i++)
        if (read_req(c, &reqs[i], err, cap)) return -1;
    return 0;
}

static int simple(drv_engine *e, const char *command, char *err, size_t cap)
{
    redisContext *ctx = rc_connect(e->srv.port, err, cap);
    if (!ctx) return -1;
    redisReply *r = redisCommand(ctx, command);
    int ok = r && r->type != REDIS_REPLY_ERROR;
    if (!ok) snprintf(err, cap, "%s: %s", command, r ? r->str : ctx->errstr);
    if (r) freeReplyObject(r);
    redisFree(ctx);
    return ok ? 0 : -1;
}

/* Stabilize and settle compact everything into the bottom level (DEBUG
 * COMPACT: flush, then a full compaction), as the RocksDB driver compacts
 * every database before its read phases (SAVE alone only flushes). Before
 * the read phases it matters for the queries: a hash read misses the CPU
 * cache once per table that may hold its key (filter line, index), so 100
 * hashes spread over the key space cost in proportion to the number of
 * level-0 and level tables they cross; the top-reputation query, which
 * reads the same 100 hashes every time, hardly sees it (at 1M profiles
 * the server's CPU per country/status query fell from 257 to 165 us with
 * this and pinned row cache hits, top reputation's from 96 to 75 us). What
 * is left of the difference is the working set: the country/status
 * queries read 100 of 12_800 distinct hashes, whose cache entries and rows
 * do not fit in the CPU's caches, top reputation the same 100. */
static int st_compact(drv_engine *e, char *err, size_t cap)
{
    return simple(e, "DEBUG COMPACT", err, cap);
}

static int64_t st_storage(drv_engine *e)
{
    return rc_server_storage(&e->srv);
}

static int st_reopen(drv_engine *e, char *err, size_t cap)
{
    return rc_server_restart(&e->srv, err, cap);
}

static int64_t st_count(drv_conn *c, char *err, size_t cap)
{
    redisReply *r = redisCommand(c->ctx, "DBSIZE");
    int64_t n = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (n < 0) snprintf(err, cap, "DBSIZE failed");
    if (r) freeReplyObject(r);
    return n;
}

static pid_t st_server_pid(drv_engine *e)
{
    return e->srv.pid;
}

/* What strata and strata-ft share: the server, connections, requests. */
#define STRATA_OPS                                                                                 \
    .probe = rc_strata_probe, .connect = st_connect, .disconnect = st_disconnect, .exec = st_exec, \
    .stabilize = st_compact, .settle = st_compact, .storage = st_storage, .reopen = st_reopen,     \
    .count = st_count, .server_pid = st_server_pid, .close = st_close

const drv_ops drv_strata_ops = {
    .name = "strata",
    .title = "strata",
    .remote = 1,
    .settings =
        "Server: strata-server over loopback TCP (hiredis, RESP2)\n"
        "Durability: appendfsync everysec (WAL group commit, synced once a second)\n"
        "Memory: server defaults (block cache 256 MB, row cache 64 MB, write buffer "
        "64 MB, zstd level 1)\n"
        "Indexes: server-side, kept in the same atomic batch as the hash: email (UNIQUE "
        "TAG), country_status (TAG TAG NUMERIC), created_at (NUMERIC NUMERIC), "
        "reputation (NUMERIC DESC, NUMERIC)\n"
        "Reads: HGETALL; email, scans and queries: IDX.RANGE (email: HASHES; queries: VALUES "
        "of the nine fields)\n"
        "Updates: HGETALL, then one HSET of the changed fields\n"
        "Stabilize (before the read and the post-update phases) and settle: DEBUG COMPACT (flush, "
        "then a full compaction)\n",
    .open = st_open,
    STRATA_OPS,
};

const drv_ops drv_strata_ft_ops = {
    .name = "strata-ft",
    .title = "strata-ft",
    .remote = 1,
    .settings =
        "Server: strata-server over loopback TCP (hiredis, RESP2), as strata\n"
        "Durability: appendfsync everysec\n"
        "Indexes: FT.CREATE (RediSearch dialect), kept in the same atomic batch as the "
        "hash: email (TAG), country_status (TAG TAG NUMERIC SORTABLE), created_at and "
        "reputation (NUMERIC SORTABLE, user_id NUMERIC SORTABLE NOINDEX)\n"
        "Reads: HGETALL; email, scans and queries: FT.SEARCH (NOCONTENT for scans)\n"
        "Updates: HGETALL, then one HSET of the changed fields\n"
        "Stabilize (before the read and the post-update phases) and settle: DEBUG COMPACT (flush, "
        "then a full compaction)\n",
    .open = ft_open,
    STRATA_OPS,
};
