/*
 * command_fuzz.c -- libFuzzer target for the whole command path: input bytes
 * -> RESP parser -> server_process_command (lookup, arity, MULTI, Invariant
 * S1) -> any command's handler -> keyspace, index layer and engine, on a
 * real engine in a temporary directory (under /dev/shm when there is one).
 *
 * One input is up to MAX_COMMANDS requests from one client, run as the
 * event loop would (each command's batch written, one commit at the end,
 * then a background step: index builds, active expiry). A one-byte command
 * name >= 0x80 stands for row (byte - 0x80) of the command table, so every
 * command is reachable, those added later too. Checked properties: nothing
 * crashes or trips ASan/UBSan, the reply bytes of every command are
 * complete, well-formed RESP2/RESP3 values, and between inputs no reply
 * memory is counted (reply.c R4).
 *
 * A script still running after busy-reply-threshold (10 ms here) is killed
 * at the first events the busy script serves: an always-readable eventfd
 * in the event loop marks it killed, as SCRIPT KILL from another client
 * would (even one that wrote: there is no SHUTDOWN NOSAVE to wait for).
 *
 * Between inputs the state is reset cheaply: a fresh client, the default
 * settings, FLUSHALL, every index dropped, SCRIPT FLUSH and FUNCTION FLUSH; every RESET_EVERY
 * inputs the engine is closed, its directory removed and a new one opened, so the range deletions
 * of the flushes do not pile up.
 *
 * Flags (command_fuzz.options): -detect_leaks=0, because the engine keeps
 * memory across inputs (memtable, caches) and libFuzzer would rerun every
 * input under LeakSanitizer (the check at exit stays, and the integration
 * tests check the server's leaks at shutdown); -entropic=0, whose feature
 * bookkeeping took most of the time at this target's tens of thousands of
 * features; a dictionary of command and option words.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "index/index.h"
#include "server/ae.h"
#include "server/config.h"
#include "server/resp_parser.h"
#include "server/script.h"
#include "server/server.h"
#include <sys/eventfd.h>

#define MAX_COMMANDS 64
#define RESET_EVERY 4096

static char dir[64];
static int open_count;
static client *fc;

static void rm_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0) abort();
}

static void settings(void)
{
    config_init_defaults();
    free(cfg.dir);
    cfg.dir = strdup(dir);
    cfg.loglevel = LL_WARNING + 1;      /* quiet */
    cfg.write_buffer_size = 256 * 1024; /* flushes and compactions happen */
    cfg.cache_size = 1 << 20;
    cfg.row_cache_size = 1 << 20;
    cfg.proto_max_bulk_len = 1 << 20;
    cfg.appendfsync = ENG_SYNC_NO;
    cfg.busy_reply_threshold = 10;
}

/* The events a busy script serves: end it. */
static void kill_busy_script(ae_loop *el, int fd, void *data, int mask)
{
    script_run *r = script_current();
    if (r && r->timedout) r->killed = 1;
}

static void open_loop(void)
{
    server.el = ae_create(64);
    int efd = eventfd(1, EFD_NONBLOCK); /* readable until read: it never is */
    if (!server.el || efd < 0 ||
        ae_create_file_event(server.el, efd, AE_READABLE, kill_busy_script, NULL) == AE_ERR)
        abort();
}

static void open_all(void)
{
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof(dir), "%s/strata-fuzz-XXXXXX", base);
    if (!mkdtemp(dir)) abort();
    settings();
    if (server_open_storage() < 0) abort();
    if (!server.batch) server.batch = eng_batch_new(1);
    if (!server.cron_batch) server.cron_batch = eng_batch_new(1);
    memset(&server.ctx, 0, sizeof(server.ctx)); /* it may name the keyspace closed last */
    server.ctx.ks = server.ks;
    if (script_init() < 0) abort();
}

static void close_all(void)
{
    server_wait_bgsave();
    script_free_all();
    idx_shutdown();
    ks_close(server.ks);
    eng_close(server.db);
    server.ks = NULL;
    server.db = NULL;
    rm_dir();
}

static void drop_index(void *arg, const char *name, size_t nlen)
{
    char **names = arg;
    for (int i = 0; i < 64; i++)
        if (!names[i]) {
            names[i] = strndup(name, nlen);
            return;
        }
}

/* Runs a two-word command as fc and forgets its reply. */
static void run_quietly(const char *a, const char *b)
{
    arg argv[2] = {{(char *)a, strlen(a)}, {(char *)b, strlen(b)}};
    fc->argc = 2;
    fc->argv = argv;
    server_process_command(fc);
    fc->argc = 0;
    fc->argv = NULL;
    reply_free_all(fc);
}

/* Back to an empty database, default settings and a fresh client. */
static void reset(void)
{
    if (fc) client_free(fc);
    server_wait_bgsave();
    server.shutdown_asap = 0;
    server.active_expire_off = 0;
    if (++open_count % RESET_EVERY == 0) {
        close_all();
        open_all();
    }
    settings();
    eng_set_sync_mode(server.db, ENG_SYNC_NO);
    /* Only the dbs in use: a flush of an empty db would still add range
     * deletions for every later read to step over. */
    ks_ctx ctx = {server.ks, server.batch, 0, ae_mstime(), NULL};
    for (int db = 0; db < KS_DATABASES; db++) {
        char *names[64] = {0};
        ctx.db = db;
        idx_list(db, drop_index, names);
        for (int i = 0; i < 64 && names[i]; i++) {
            idx_drop(&ctx, names[i], strlen(names[i]));
            free(names[i]);
        }
        if (ks_dbsize(&ctx)) ks_flush(&ctx, 0);
        ks_ctx_reset(&ctx);
    }
    server_write_batch(NULL, NULL);
    server_commit();
    fc = client_create(-1);
    if (!fc) abort();
    run_quietly("FUNCTION", "FLUSH");
    if (script_eval_count()) run_quietly("SCRIPT", "FLUSH"); /* a new Lua state: only if used */
    server_commit();
    /* Invariant R4 (reply.c): no client holds a reply now, so none is counted. */
    if (server.reply_mem_total != 0) {
        fprintf(stderr, "reply_mem_total %zu with no reply held\n", server.reply_mem_total);
        abort();
    }
}

/* ---- A RESP2/RESP3 reply checker ----------------------------------------- */

typedef struct rbuf {
    const char *p;
    size_t n, pos;
} rbuf;

static int read_line(rbuf *r, const char **line, size_t *len)
{
    const char *start = r->p + r->pos;
    const char *nl = memchr(start, '\n', r->n - r->pos);
    if (!nl || nl == start || nl[-1] != '\r') return -1;
    *line = start;
    *len = (size_t)(nl - start) - 1;
    r->pos += *len + 2;
    return 0;
}

static int parse_len(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 20) return -1;
    char tmp[24];
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    *out = strtoll(tmp, &end, 10);
    return *end ? -1 : 0;
}

/* Reads one value; 0 when complete and well formed. */
static int read_value(rbuf *r, int depth)
{
    const char *line;
    size_t len;
    long long n;
    if (depth > 64 || read_line(r, &line, &len) < 0) return -1;
    char t = line[0];
    const char *body = line + 1;
    size_t blen = len - 1;
    switch (t) {
    case '+':
    case '-':
    case ':':
    case ',':
    case '(':
    case '#':
    case '_':
        for (size_t i = 0; i < blen; i++)
            if (body[i] == '\r' || body[i] == '\n') return -1;
        if (t == '-' && blen == 0) return -1;
        if (t == '#' && (blen != 1 || (body[0] != 't' && body[0] != 'f'))) return -1;
        if (t == '_' && blen) return -1;
        return 0;
    case '$':
    case '=':
    case '!':
        if (parse_len(body, blen, &n) < 0 || n < -1) return -1;
        if (n == -1) return t == '$' ? 0 : -1;
        if ((size_t)n + 2 > r->n - r->pos) return -1;
        if (r->p[r->pos + (size_t)n] != '\r' || r->p[r->pos + (size_t)n + 1] != '\n') return -1;
        r->pos += (size_t)n + 2;
        return 0;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|':
        if (parse_len(body, blen, &n) < 0 || n < -1) return -1;
        if (n == -1) return t == '*' ? 0 : -1;
        if (t == '%' || t == '|') n *= 2;
        for (long long i = 0; i < n; i++)
            if (read_value(r, depth + 1) < 0) return -1;
        if (t == '|') return read_value(r, depth + 1); /* the attributed value */
        return 0;
    default:
        return -1;
    }
}

/* The reply chain's bytes (the client never writes: no socket). */
static char *chain_bytes(client *c, size_t *n)
{
    struct client_private *p = c->priv;
    size_t total = 0;
    for (reply_block *b = p->reply_head; b; b = b->next)
        total += b->used;
    char *out = malloc(total + 1);
    if (!out) abort();
    *n = 0;
    for (reply_block *b = p->reply_head; b; b = b->next) {
        memcpy(out + *n, b->buf, b->used);
        *n += b->used;
    }
    return out;
}

static void check_replies(client *c)
{
    size_t n;
    char *bytes = chain_bytes(c, &n);
    rbuf r = {bytes, n, 0};
    while (r.pos < r.n)
        if (read_value(&r, 0) < 0) {
            fprintf(stderr, "malformed reply at byte %zu of %zu: %.200s\n", r.pos, r.n,
                    bytes + r.pos);
            abort();
        }
    free(bytes);
    reply_free_all(c);
}

/* ---- The target ---------------------------------------------------------- */

/* A name of one or two bytes starting with a byte >= 0x80 names a row of
 * the command table. */
static void pick_command(arg *a)
{
    const unsigned char *b = (const unsigned char *)a->ptr;
    if (a->len < 1 || a->len > 2 || b[0] < 0x80) return;
    size_t row = a->len == 1 ? (size_t)(b[0] - 0x80) : ((size_t)(b[0] - 0x80) << 8) | b[1];
    const struct command *cmd = &command_table[row % command_table_size];
    a->ptr = (char *)cmd->name;
    a->len = strlen(cmd->name);
}

/* DEBUG SLEEP <s> would stop the fuzzer: it sleeps 0 here, queued or not. */
static void defuse(client *c)
{
    if (c->argc >= 3 && c->argv[0].len == 5 && !strncasecmp(c->argv[0].ptr, "debug", 5) &&
        c->argv[1].len == 5 && !strncasecmp(c->argv[1].ptr, "sleep", 5)) {
        c->argv[2].ptr = "0";
        c->argv[2].len = 1;
    }
}

/* One step of the background work the server's timer does. */
static void background(void)
{
    ks_ctx ctx = {server.ks, server.cron_batch, 0, ae_mstime(), NULL};
    for (int i = 0; i < 4 && idx_build_step(&ctx); i++)
        ks_ctx_reset(&ctx);
    ks_ctx_reset(&ctx);
    for (int db = 0; db < KS_DATABASES; db++) {
        ctx.db = db;
        if (ks_expires(&ctx)) ks_active_expire(&ctx, 20, 1000); /* as the server's timer */
        ks_ctx_reset(&ctx);
    }
    if (eng_batch_count(server.cron_batch)) {
        if (eng_write(server.db, server.cron_batch, ENG_WRITE_DEFER) == ENG_OK)
            server.uncommitted++;
        eng_batch_clear(server.cron_batch);
    }
    server_commit();
}

/* At exit (the fuzzer's time is up): the engine's threads are joined and
 * the directory removed, so the leak check sees only real leaks. */
static void at_exit(void)
{
    if (fc) client_free(fc);
    fc = NULL;
    if (server.db) close_all();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!server.db) {
        open_loop();
        open_all();
        atexit(at_exit);
    }
    reset();
    char *buf = malloc(size + 1);
    if (!buf) abort();
    memcpy(buf, data, size);
    resp_parser rp;
    resp_parser_init(&rp);
    rp.max_bulk_len = 1 << 20;
    size_t pos = 0;
    for (int n = 0; n < MAX_COMMANDS; n++) {
        struct client_private *p = fc->priv;
        if (p->close_asap || (fc->flags & CLIENT_CLOSE_AFTER_REPLY) || server.shutdown_asap) break;
        rp.unauthenticated = !(fc->flags & CLIENT_AUTHENTICATED);
        int r = resp_parse(&rp, buf, size, &pos);
        if (r != RESP_DONE) break;
        int argc = rp.argc;
        if (argc == 0) continue;
        arg *argv = malloc((size_t)argc * sizeof(arg)); /* the parser's stay as they are */
        if (!argv) abort();
        memcpy(argv, rp.argv, (size_t)argc * sizeof(arg));
        pick_command(&argv[0]);
        fc->argc = argc;
        fc->argv = argv;
        defuse(fc);
        server.cmd_time_ms = ae_mstime();
        server_process_command(fc);
        server.cmd_time_ms = 0;
        fc->argc = 0;
        fc->argv = NULL;
        free(argv);
        check_replies(fc);
    }
    server_commit();
    background();
    resp_parser_free(&rp);
    free(buf);
    return 0;
}
