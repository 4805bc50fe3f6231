/*
 * driver_redis.c -- the profile workload on Debian's redis-server, with the
 * indexes kept by the client the way Redis users do it today.
 *
 * Keys (db 0):
 *   user:<id>      hash of the nine profile fields (decimal integers)
 *   email:<email>  string: the user_id
 *   idx:cs         sorted set, all scores 0, members country "|" status "|" be64(id)
 *   idx:ca         sorted set, members be64(created_at) be64(id)
 *   idx:rep        sorted set, members be64(1_000_000 - reputation) be64(id)
 * Members are shaped like the report's RocksDB index keys, so ZRANGE BYLEX
 * walks them in query order; a profile and its index entries are written in
 * one MULTI/EXEC. The server runs with appendonly yes, appendfsync everysec.
 *
 * strata-zset is the same client-kept scheme, byte for byte the same
 * commands, run against strata-server (appendfsync everysec; settled with
 * SAVE): the report then shows client-kept sorted-set indexes on Redis
 * and on strata beside strata's own IDX indexes, on the same data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/profiles/driver.h"
#include "bench/profiles/resp_client.h"
#include "bench/profiles/resp_fast.h"
#include "bench/profiles/util.h"

struct drv_engine {
    rc_server srv;
    int strata; /* strata-zset: strata-server instead of redis-server */
};

struct drv_conn {
    redisContext *ctx; /* commands go out through hiredis, replies come */
    rf_reader rd;      /* back through resp_fast, as for strata */
    rc_cmd cmd;
    int follow[1024]; /* per request: ids to fetch in round two (-1 none) */
};

static const char *redis_bin(void)
{
    const char *b = getenv("REDIS_SERVER");
    return b && *b ? b : "/usr/bin/redis-server";
}

static int rd_probe(char *why, size_t cap)
{
    if (access(redis_bin(), X_OK) == 0) return 0;
    snprintf(why, cap, "%s not found (install redis-server)", redis_bin());
    return -1;
}

static drv_engine *open_engine(const char *dir, int strata, char *err, size_t cap)
{
    drv_engine *e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->strata = strata;
    snprintf(e->srv.dir, sizeof(e->srv.dir), "%s", dir);
    if (strata) {
        rc_strata_bin(e->srv.bin, sizeof(e->srv.bin));
        static const char *extra[] = {"--appendfsync", "everysec", NULL};
        memcpy(e->srv.extra, extra, sizeof(extra));
    } else {
        snprintf(e->srv.bin, sizeof(e->srv.bin), "%s", redis_bin());
        static const char *extra[] = {"--appendonly",     "yes",    "--appendfsync",
                                      "everysec",         "--save", "",
                                      "--protected-mode", "no",     NULL};
        memcpy(e->srv.extra, extra, sizeof(extra));
        e->srv.redis_style = 1;
    }
    if (rc_server_start(&e->srv, err, cap)) {
        free(e);
        return NULL;
    }
    return e;
}

static drv_engine *rd_open(const char *dir, char *err, size_t cap)
{
    return open_engine(dir, 0, err, cap);
}

static drv_engine *sz_open(const char *dir, char *err, size_t cap)
{
    return open_engine(dir, 1, err, cap);
}

static void rd_close(drv_engine *e)
{
    if (!e) return;
    rc_server_stop(&e->srv);
    free(e);
}

static drv_conn *rd_connect(drv_engine *e, char *err, size_t cap)
{
    drv_conn *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    if (!(c->ctx = rc_connect(e->srv.port, err, cap))) {
        free(c);
        return NULL;
    }
    return c;
}

static void rd_disconnect(drv_conn *c)
{
    if (!c) return;
    redisFree(c->ctx);
    rf_free(&c->rd);
    free(c);
}

/* The next reply's first element (*cur at what follows it). Returns 0, or
 * -1 with err (connection, or an error reply). */
static int next_reply(drv_conn *c, rf_cur *cur, rf_val *h, char *err, size_t cap)
{
    if (rf_next(&c->rd, c->ctx, cur, err, cap) || rf_get(cur, h)) return -1;
    if (h->type != '-') return 0;
    snprintf(err, cap, "server error: %.*s", (int)h->len, h->s);
    return -1;
}

/* Appends a binary argument: an optional one-byte prefix, then n bytes. */
static void arg_bin(rc_cmd *c, char prefix, const char *s, size_t n)
{
    char *d = c->buf + c->used;
    size_t l = 0;
    if (prefix) d[l++] = prefix;
    memcpy(d + l, s, n);
    rc_arg(c, d, l + n);
    c->used += l + n;
}

static size_t cs_member(char *m, const wl_profile *p)
{
    size_t n = (size_t)sprintf(m, "%s|%s|", p->country, p->status);
    util_be64(m + n, (uint64_t)p->user_id);
    return n + 8;
}

static void pair_member(char *m, uint64_t a, int64_t id)
{
    util_be64(m, a);
    util_be64(m + 8, (uint64_t)id);
}

/* One ZADD/ZREM of member m (ml bytes) on key. */
static int zop(drv_conn *c, const char *op, const char *key, const char *m, size_t ml, char *err,
               size_t cap)
{
    rc_str(&c->cmd, op);
    rc_str(&c->cmd, key);
    if (op[1] == 'A') rc_str(&c->cmd, "0");
    arg_bin(&c->cmd, 0, m, ml);
    return rc_append(c->ctx, &c->cmd, err, cap);
}

/* MULTI ... EXEC for an insert (o NULL) or an update. Returns the number of
 * replies to read, or -1. */
static int append_write(drv_conn *c, const wl_profile *o, const wl_profile *p, char *err,
                        size_t cap)
{
    rc_cmd *cmd = &c->cmd;
    char m[64], om[64];
    int n = 3;
    rc_str(cmd, "MULTI");
    if (rc_append(c->ctx, cmd, err, cap)) return -1;
    rc_build_hset(cmd, o, p);
    if (rc_append(c->ctx, cmd, err, cap)) return -1;
    if (!o || strcmp(o->email, p->email)) {
        if (o) {
            rc_str(cmd, "DEL");
            rc_fmt(cmd, "email:%s", o->email);
            if (rc_append(c->ctx, cmd, err, cap)) return -1;
            n++;
        }
        rc_str(cmd, "SET");
        rc_fmt(cmd, "email:%s", p->email);
        rc_fmt(cmd, "%lld", (long long)p->user_id);
        if (rc_append(c->ctx, cmd, err, cap)) return -1;
        n++;
    }
    if (!o || strcmp(o->country, p->country) || strcmp(o->status, p->status)) {
        if (o && zop(c, "ZREM", "idx:cs", om, cs_member(om, o), err, cap)) return -1;
        if (zop(c, "ZADD", "idx:cs", m, cs_member(m, p), err, cap)) return -1;
        n += o ? 2 : 1;
    }
    if (!o || o->created_at != p->created_at) {
        pair_member(m, (uint64_t)p->created_at, p->user_id);
        pair_member(om, o ? (uint64_t)o->created_at : 0, p->user_id);
        if (o && zop(c, "ZREM", "idx:ca", om, 16, err, cap)) return -1;
        if (zop(c, "ZADD", "idx:ca", m, 16, err, cap)) return -1;
        n += o ? 2 : 1;
    }
    if (!o || o->reputation != p->reputation) {
        pair_member(m, (uint64_t)(WL_MAX_REPUTATION - p->reputation), p->user_id);
        pair_member(om, o ? (uint64_t)(WL_MAX_REPUTATION - o->reputation) : 0, p->user_id);
        if (o && zop(c, "ZREM", "idx:rep", om, 16, err, cap)) return -1;
        if (zop(c, "ZADD", "idx:rep", m, 16, err, cap)) return -1;
        n += o ? 2 : 1;
    }
    rc_str(cmd, "EXEC");
    return rc_append(c->ctx, cmd, err, cap) ? -1 : n;
}

/* Round one: the request's own command(s). Returns replies to read, or -1. */
static int append_req(drv_conn *c, drv_req *r, char *err, size_t cap)
{
    rc_cmd *cmd = &c->cmd;
    char lo[32], hi[32];
    size_t n;
    switch (r->op) {
    case DRV_INSERT:
        return append_write(c, NULL, r->new_p, err, cap);
    case DRV_WRITE:
        return append_write(c, r->old_p, r->new_p, err, cap);
    case DRV_GET:
        rc_str(cmd, "HGETALL");
        rc_fmt(cmd, "user:%lld", (long long)r->id);
        break;
    case DRV_EMAIL:
        rc_str(cmd, "GET");
        rc_fmt(cmd, "email:%s", r->email);
        break;
    case DRV_CS:
        rc_str(cmd, "ZRANGE");
        rc_str(cmd, "idx:cs");
        n = (size_t)sprintf(lo, "%s|%s|", wl_countries[r->country], wl_statuses[r->status]);
        memcpy(hi, lo, n);
        hi[n - 1]++;
        arg_bin(cmd, '[', lo, n);
        arg_bin(cmd, '(', hi, n);
        break;
    case DRV_CA:
        rc_str(cmd, "ZRANGE");
        rc_str(cmd, "idx:ca");
        util_be64(lo, (uint64_t)r->from);
        util_be64(hi, (uint64_t)r->to + 1);
        arg_bin(cmd, '[', lo, 8);
        arg_bin(cmd, '(', hi, 8);
        break;
    case DRV_TOP:
        rc_str(cmd, "ZRANGE");
        rc_str(cmd, "idx:rep");
        rc_str(cmd, "-");
        rc_str(cmd, "+");
        break;
    }
    if (r->op == DRV_CS || r->op == DRV_CA || r->op == DRV_TOP) {
        rc_str(cmd, "BYLEX");
        rc_str(cmd, "LIMIT");
        rc_str(cmd, "0");
        rc_fmt(cmd, "%d", WL_LIMIT);
    }
    return rc_append(c->ctx, cmd, err, cap) ? -1 : 1;
}

/* Reads the replies of an insert/update transaction. */
static int read_write(drv_conn *c, int nreplies, char *err, size_t cap)
{
    for (int i = 0; i < nreplies; i++) {
        rf_cur cur;
        rf_val h;
        if (next_reply(c, &cur, &h, err, cap)) return -1;
        int bad = i == nreplies - 1 && h.type != '*';
        for (int64_t j = 0; !bad && i == nreplies - 1 && j < h.n; j++)
            bad = rf_peek(&cur) == '-' || rf_skip(&cur);
        if (bad) {
            snprintf(err, cap, "EXEC failed");
            return -1;
        }
    }
    return 0;
}

/* Reads round one's reply of r; sets r->ids / r->n, and *follow to the
 * number of HGETALLs round two needs for it. */
static int read_req(drv_conn *c, drv_req *r, int nreplies, int *follow, char *err, size_t cap)
{
    *follow = 0;
    if (r->op == DRV_INSERT || r->op == DRV_WRITE) return read_write(c, nreplies, err, cap);
    rf_cur cur;
    rf_val h, m;
    if (next_reply(c, &cur, &h, err, cap)) return -1;
    r->n = 0;
    if (r->op == DRV_GET) {
        if (h.type == '*' && h.n > 0) {
            if (rf_decode_hash(&cur, &h, &r->out[0], err, cap)) return -1;
            r->n = 1;
        }
    } else if (r->op == DRV_EMAIL) {
        if (h.type == '$' && h.s) {
            r->ids[0] = strtoll(h.s, NULL, 10);
            *follow = 1;
        }
    } else if (h.type == '*') {
        for (int64_t i = 0; i < h.n && r->n < WL_LIMIT && !rf_get(&cur, &m); i++) {
            if (m.type != '$' || !m.s || m.len < 8) continue;
            r->ids[r->n++] = (int64_t)util_get_be64(m.s + m.len - 8);
        }
        if (r->want_profiles) *follow = r->n;
    } else {
        snprintf(err, cap, "unexpected reply type '%c'", h.type);
        return -1;
    }
    return 0;
}

static int rd_exec(drv_conn *c, drv_req *reqs, int n, char *err, size_t cap)
{
    int counts[1024];
    if (n > 1024) n = 1024;
    for (int i = 0; i < n; i++)
        if ((counts[i] = append_req(c, &reqs[i], err, cap)) < 0) return -1;
    if (rf_flush(c->ctx, err, cap)) return -1;
    int need = 0;
    for (int i = 0; i < n; i++) {
        if (read_req(c, &reqs[i], counts[i], &c->follow[i], err, cap)) return -1;
        for (int j = 0; j < c->follow[i]; j++) {
            rc_str(&c->cmd, "HGETALL");
            rc_fmt(&c->cmd, "user:%lld", (long long)reqs[i].ids[j]);
            if (rc_append(c->ctx, &c->cmd, err, cap)) return -1;
        }
        need += c->follow[i];
    }
    if (!need) return 0;
    if (rf_flush(c->ctx, err, cap)) return -1;
    for (int i = 0; i < n; i++) {
        drv_req *r = &reqs[i];
        int got = 0;
        for (int j = 0; j < c->follow[i]; j++) {
            rf_cur cur;
            rf_val h;
            if (next_reply(c, &cur, &h, err, cap)) return -1;
            int rc = h.type == '*' && h.n > 0
                         ? rf_decode_hash(&cur, &h, &r->out[got], err, cap)
                         : (snprintf(err, cap, "index entry for missing user %lld",
                                     (long long)r->ids[j]),
                            -1);
            if (rc) return -1;
            got++;
        }
        if (r->op == DRV_EMAIL) r->n = got;
    }
    return 0;
}

/* Rewrites the AOF so that storage is the data, not its history (strata:
 * SAVE, which flushes and compacts as for the strata engine). */
static int rd_settle(drv_engine *e, char *err, size_t cap)
{
    redisContext *ctx = rc_connect(e->srv.port, err, cap);
    if (!ctx) return -1;
    if (e->strata) {
        redisReply *r = redisCommand(ctx, "SAVE");
        int ok = r && r->type != REDIS_REPLY_ERROR;
        if (!ok) snprintf(err, cap, "SAVE: %s", r ? r->str : ctx->errstr);
        if (r) freeReplyObject(r);
        redisFree(ctx);
        return ok ? 0 : -1;
    }
    redisReply *r = redisCommand(ctx, "BGREWRITEAOF");
    if (r) freeReplyObject(r);
    int rc = -1;
    for (int tries = 0; tries < 6000; tries++) {
        r = redisCommand(ctx, "INFO persistence");
        if (!r || r->type != REDIS_REPLY_STRING) break;
        int busy = strstr(r->str, "aof_rewrite_in_progress:1") ||
                   strstr(r->str, "aof_rewrite_scheduled:1");
        freeReplyObject(r);
        if (!busy) {
            rc = 0;
            break;
        }
        usleep(20000);
    }
    if (rc) snprintf(err, cap, "AOF rewrite did not finish");
    redisFree(ctx);
    return rc;
}

static int64_t rd_storage(drv_engine *e)
{
    return rc_server_storage(&e->srv);
}

static int rd_reopen(drv_engine *e, char *err, size_t cap)
{
    return rc_server_restart(&e->srv, err, cap);
}

static int64_t rd_count(drv_conn *c, char *err, size_t cap)
{
    int64_t n = 0;
    char cursor[32] = "0";
    do {
        redisReply *r = redisCommand(c->ctx, "SCAN %s MATCH user:* COUNT 1000", cursor);
        if (!r || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
            snprintf(err, cap, "SCAN failed");
            if (r) freeReplyObject(r);
            return -1;
        }
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        n += (int64_t)r->element[1]->elements;
        freeReplyObject(r);
    } while (strcmp(cursor, "0"));
    return n;
}

static pid_t rd_server_pid(drv_engine *e)
{
    return e->srv.pid;
}

/* What redis and strata-zset share: the client-kept indexes and their requests. */
#define CLIENT_INDEX_OPS                                                                           \
    .remote = 1, .connect = rd_connect, .disconnect = rd_disconnect, .exec = rd_exec,              \
    .stabilize = NULL, .settle = rd_settle, .storage = rd_storage, .reopen = rd_reopen,            \
    .count = rd_count, .server_pid = rd_server_pid, .close = rd_close

const drv_ops drv_redis_ops = {
    .name = "redis",
    .title = "Redis",
    .settings = "Server: Debian redis-server over loopback TCP (hiredis)\n"
                "Persistence: appendonly yes, appendfsync everysec, no RDB snapshots\n"
                "Indexes: client-maintained lexicographic sorted sets (idx:cs, idx:ca, idx:rep) "
                "and email:<email> strings, written with the hash in MULTI/EXEC\n"
                "Queries: ZRANGE BYLEX LIMIT, then HGETALL per profile\n"
                "Settle: BGREWRITEAOF\n",
    .probe = rd_probe,
    .open = rd_open,
    CLIENT_INDEX_OPS,
};

const drv_ops drv_strata_zset_ops = {
    .name = "strata-zset",
    .title = "strata-zset",
    .settings = "Server: strata-server over loopback TCP (hiredis, RESP2), as strata\n"
                "Durability: appendfsync everysec\n"
                "Indexes: client-maintained lexicographic sorted sets (idx:cs, idx:ca, idx:rep) "
                "and email:<email> strings, written with the hash in MULTI/EXEC, exactly as "
                "the redis engine does (no IDX or FT indexes)\n"
                "Queries: ZRANGE BYLEX LIMIT, then HGETALL per profile\n"
                "Settle: SAVE\n",
    .probe = rc_strata_probe,
    .open = sz_open,
    CLIENT_INDEX_OPS,
};
