/*
 * resp_client.c -- server processes and hiredis helpers for the strata and
 * redis drivers.
 */
#include "bench/profiles/resp_client.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/profiles/util.h"

void rc_strata_bin(char *out, size_t cap)
{
    const char *b = getenv("STRATA_SERVER");
    if (b && *b)
        snprintf(out, cap, "%s", b);
    else
        util_exe_sibling("strata-server", out, cap);
}

int rc_strata_probe(char *why, size_t cap)
{
    char bin[1024];
    rc_strata_bin(bin, sizeof(bin));
    if (bin[0] && access(bin, X_OK) == 0) return 0;
    snprintf(why, cap, "strata-server not found at '%s' (build it, or set STRATA_SERVER)", bin);
    return -1;
}

redisContext *rc_connect(int port, char *err, size_t cap)
{
    struct timeval tv = {10, 0};
    redisContext *ctx = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!ctx || ctx->err) {
        snprintf(err, cap, "connect 127.0.0.1:%d: %s", port, ctx ? ctx->errstr : "out of memory");
        if (ctx) redisFree(ctx);
        return NULL;
    }
    struct timeval rt = {3600, 0}; /* a full compaction (settle) at 10M profiles takes minutes */
    redisSetTimeout(ctx, rt);
    return ctx;
}

/* PING until the server answers PONG (it may say LOADING after a restart). */
static int wait_ready(rc_server *s, char *err, size_t cap)
{
    int64_t deadline = util_now_ns() + 120LL * 1000000000;
    while (util_now_ns() < deadline) {
        redisContext *ctx = rc_connect(s->port, err, cap);
        if (ctx) {
            redisReply *r = redisCommand(ctx, "PING");
            int ok = r && r->type == REDIS_REPLY_STATUS;
            if (r) freeReplyObject(r);
            redisFree(ctx);
            if (ok) return 0;
        }
        usleep(50000);
    }
    snprintf(err, cap, "server on port %d not ready after 120 s", s->port);
    return -1;
}

int rc_server_start(rc_server *s, char *err, size_t cap)
{
    char port[16];
    const char *argv[40];
    int n = 0;
    s->port = util_free_port();
    if (s->port < 0) {
        snprintf(err, cap, "no free port");
        return -1;
    }
    snprintf(port, sizeof(port), "%d", s->port);
    snprintf(s->log, sizeof(s->log), "%s/server.log", s->dir);
    argv[n++] = s->bin;
    argv[n++] = "--port";
    argv[n++] = port;
    argv[n++] = "--dir";
    argv[n++] = s->dir;
    if (s->redis_style) {
        argv[n++] = "--bind";
        argv[n++] = "127.0.0.1";
        argv[n++] = "--daemonize";
        argv[n++] = "no";
    }
    for (int i = 0; s->extra[i] && n < 38; i++)
        argv[n++] = s->extra[i];
    argv[n] = NULL;
    s->pid = util_spawn((char *const *)argv, s->log, err, cap);
    if (s->pid < 0) return -1;
    if (util_wait_port(s->pid, s->port, 60000, err, cap) || wait_ready(s, err, cap)) {
        char tail[300];
        util_log_tail(s->log, tail, sizeof(tail));
        size_t l = strlen(err);
        snprintf(err + l, cap - l, " (log: %s)", tail);
        util_stop(s->pid, 5000);
        s->pid = 0;
        return -1;
    }
    return 0;
}

void rc_server_stop(rc_server *s)
{
    if (s->pid <= 0) return;
    char err[256];
    redisContext *ctx = rc_connect(s->port, err, sizeof(err));
    if (ctx) {
        redisReply *r = redisCommand(ctx, "SHUTDOWN");
        if (r) freeReplyObject(r);
        redisFree(ctx);
    }
    if (util_reap(s->pid, 60000) != 0) util_stop(s->pid, 5000);
    s->pid = 0;
}

int rc_server_restart(rc_server *s, char *err, size_t cap)
{
    rc_server_stop(s);
    return rc_server_start(s, err, cap);
}

int64_t rc_server_storage(const rc_server *s)
{
    int64_t all = util_dir_bytes(s->dir), log = util_dir_bytes(s->log);
    return all < 0 ? -1 : all - (log > 0 ? log : 0);
}

void rc_reset(rc_cmd *c)
{
    c->argc = 0;
    c->used = 0;
}

void rc_arg(rc_cmd *c, const char *s, size_t n)
{
    if (c->argc >= 48) return;
    c->argv[c->argc] = s;
    c->len[c->argc++] = n;
}

void rc_str(rc_cmd *c, const char *s)
{
    rc_arg(c, s, strlen(s));
}

void rc_fmt(rc_cmd *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = sizeof(c->buf) - c->used;
    int n = vsnprintf(c->buf + c->used, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= room) n = 0;
    rc_arg(c, c->buf + c->used, (size_t)n);
    c->used += (size_t)n + 1;
}

int rc_append(redisContext *ctx, rc_cmd *c, char *err, size_t cap)
{
    int rc = redisAppendCommandArgv(ctx, c->argc, c->argv, c->len);
    rc_reset(c);
    if (rc != REDIS_OK) {
        snprintf(err, cap, "append: %s", ctx->errstr);
        return -1;
    }
    return 0;
}

redisReply *rc_read(redisContext *ctx, int allow_error, char *err, size_t cap)
{
    void *v = NULL;
    if (redisGetReply(ctx, &v) != REDIS_OK || !v) {
        snprintf(err, cap, "connection: %s", ctx->errstr[0] ? ctx->errstr : "closed");
        return NULL;
    }
    redisReply *r = v;
    if (r->type == REDIS_REPLY_ERROR && !allow_error) {
        snprintf(err, cap, "server error: %.*s", (int)r->len, r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

redisReply *rc_call(redisContext *ctx, rc_cmd *c, char *err, size_t cap)
{
    if (rc_append(ctx, c, err, cap)) return NULL;
    return rc_read(ctx, 0, err, cap);
}

/* HSET of every field (o NULL) or of those that differ from o. */
void rc_build_hset(rc_cmd *cmd, const wl_profile *o, const wl_profile *p)
{
    rc_str(cmd, "HSET");
    rc_fmt(cmd, "user:%lld", (long long)p->user_id);
    if (!o) {
        rc_str(cmd, "user_id");
        rc_fmt(cmd, "%lld", (long long)p->user_id);
        rc_str(cmd, "display_name");
        rc_str(cmd, p->display_name);
    }
    if (!o || strcmp(o->email, p->email)) rc_str(cmd, "email"), rc_str(cmd, p->email);
    if (!o || strcmp(o->country, p->country)) rc_str(cmd, "country"), rc_str(cmd, p->country);
    if (!o || strcmp(o->status, p->status)) rc_str(cmd, "status"), rc_str(cmd, p->status);
    if (!o || o->created_at != p->created_at)
        rc_str(cmd, "created_at"), rc_fmt(cmd, "%lld", (long long)p->created_at);
    if (!o || o->last_login != p->last_login)
        rc_str(cmd, "last_login"), rc_fmt(cmd, "%lld", (long long)p->last_login);
    if (!o || o->reputation != p->reputation)
        rc_str(cmd, "reputation"), rc_fmt(cmd, "%d", p->reputation);
    if (!o || strcmp(o->bio, p->bio)) rc_str(cmd, "bio"), rc_str(cmd, p->bio);
    if (cmd->argc == 2) { /* nothing changed: HSET needs a pair */
        rc_str(cmd, "user_id");
        rc_fmt(cmd, "%lld", (long long)p->user_id);
    }
}

int rc_parse_i64(const char *s, size_t n, int64_t *out)
{
    if (!s || n == 0 || n > 20) return -1;
    size_t i = s[0] == '-';
    if (i == n) return -1;
    uint64_t x = 0;
    for (; i < n; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9 || x > (UINT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
    }
    if (s[0] == '-') {
        if (x > (uint64_t)INT64_MAX + 1) return -1;
        *out = (int64_t)(0 - x);
    } else {
        if (x > (uint64_t)INT64_MAX) return -1;
        *out = (int64_t)x;
    }
    return 0;
}

static int get_str(const char *s, size_t n, char *dst, size_t cap)
{
    if (!s || n >= cap) return -1;
    memcpy(dst, s, n);
    dst[n] = 0;
    return 0;
}

const char *const rc_profile_fields[RC_NFIELDS] = {
    "user_id",    "display_name", "email",      "country", "status",
    "created_at", "last_login",   "reputation", "bio",
};

int rc_profile_value(wl_profile *p, size_t i, const char *v, size_t vl)
{
    int64_t n = 0;
    int bad;
    switch (i) {
    case 0:
        return rc_parse_i64(v, vl, &p->user_id) != 0;
    case 1:
        return get_str(v, vl, p->display_name, sizeof(p->display_name)) != 0;
    case 2:
        return get_str(v, vl, p->email, sizeof(p->email)) != 0;
    case 3:
        return get_str(v, vl, p->country, sizeof(p->country)) != 0;
    case 4:
        return get_str(v, vl, p->status, sizeof(p->status)) != 0;
    case 5:
        return rc_parse_i64(v, vl, &p->created_at) != 0;
    case 6:
        return rc_parse_i64(v, vl, &p->last_login) != 0;
    case 7:
        bad = rc_parse_i64(v, vl, &n) != 0 || n < INT32_MIN || n > INT32_MAX;
        p->reputation = (int32_t)n;
        return bad;
    case 8:
        return get_str(v, vl, p->bio, sizeof(p->bio)) != 0;
    default:
        return 1;
    }
}

int rc_profile_field(wl_profile *p, const char *f, size_t fl, const char *v, size_t vl,
                     unsigned *seen)
{
    static const size_t lens[RC_NFIELDS] = {7, 12, 5, 7, 6, 10, 10, 10, 3};
    for (size_t i = 0; i < RC_NFIELDS; i++)
        if (lens[i] == fl && !memcmp(f, rc_profile_fields[i], fl)) {
            *seen |= 1u << i;
            return rc_profile_value(p, i, v, vl);
        }
    return 0; /* not a profile field: ignored */
}

int rc_profile_check(int bad, unsigned seen, size_t pairs, char *err, size_t cap)
{
    if (!bad && seen == RC_PROFILE_FIELDS) return 0;
    snprintf(err, cap, "profile hash with %s fields (%zu entries)", bad ? "malformed" : "missing",
             pairs);
    return -1;
}

int rc_decode_hash(const redisReply *r, wl_profile *p, char *err, size_t cap)
{
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
        snprintf(err, cap, "hash reply of type %d", r->type);
        return -1;
    }
    unsigned seen = 0;
    int bad = 0;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        const redisReply *k = r->element[i], *v = r->element[i + 1];
        if (k->type != REDIS_REPLY_STRING) continue;
        bad |= v->type != REDIS_REPLY_STRING ||
               rc_profile_field(p, k->str, k->len, v->str, v->len, &seen);
    }
    return rc_profile_check(bad, seen, r->elements / 2, err, cap);
}
