/*
 * cmd_introspect.c -- MEMORY USAGE | STATS | DOCTOR | MALLOC-STATS | PURGE
 * | HELP, DEBUG OBJECT and WAIT. Replies follow Redis 7.0 (object.c,
 * debug.c, replication.c) where the numbers mean the same thing here; the
 * figures that describe Redis's in-memory structures describe strata's
 * engine instead (see README, "MEMORY").
 *
 * jemalloc's mallctl and malloc_stats_print are looked up at run time, so
 * a binary linked without jemalloc (tests, fuzzers) still works: MALLOC-
 * STATS then says so and PURGE does nothing.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/config.h"
#include "server/pubsub.h"
#include "server/repl.h"
#include "server/server.h"

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef void (*stats_print_fn)(void (*)(void *, const char *), void *, const char *);

static mallctl_fn mallctl_get(void)
{
    return (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
}

/* jemalloc's stats.<name> after refreshing its epoch; 0 without jemalloc. */
static size_t je_stat(const char *name)
{
    mallctl_fn mc = mallctl_get();
    if (!mc) return 0;
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    mc("epoch", &epoch, &sz, &epoch, sz);
    size_t v = 0;
    sz = sizeof(v);
    char full[64];
    snprintf(full, sizeof(full), "stats.%s", name);
    return mc(full, &v, &sz, NULL, 0) == 0 ? v : 0;
}

void server_set_jemalloc_bg_thread(int on)
{
    mallctl_fn mc = mallctl_get();
    _Bool v = on != 0;
    if (mc) mc("background_thread", NULL, NULL, &v, sizeof(v));
}

/* ---- MEMORY ---------------------------------------------------------------- */

static void memory_usage(client *c)
{
    long long samples = 5; /* Redis's default */
    for (int j = 3; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "samples") && j + 1 < c->argc) {
            if (arg_to_ll(c, &c->argv[++j], &samples) < 0) return;
            if (samples < 0) return add_reply_error(c, ERR_SYNTAX);
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    ks_key_stat st;
    ks_ctx *k = client_ks(c);
    ks_status s = ks_key_info(k, c->argv[2].ptr, c->argv[2].len, (uint64_t)samples, &st);
    if (s == KS_NOTFOUND) return add_reply_null(c);
    if (s != KS_OK) return add_reply_ks_error(c, s, k);
    add_reply_long_long(c, (long long)st.usage);
}

/* The server's own memory beside the data: clients, pub/sub, slowlog. */
static size_t clients_bytes(void)
{
    size_t n = 0;
    for (client *x = server.clients; x; x = x->priv->next) {
        struct client_private *p = x->priv;
        n += sizeof(*x) + sizeof(*p) + p->qcap + p->reply_bytes + pubsub_client_mem(x);
    }
    return n;
}

static void memory_stats(client *c)
{
    eng_stats es;
    eng_get_stats(server.db, &es);
    uint64_t rss = server_used_memory();
    size_t allocated = je_stat("allocated"), active = je_stat("active"),
           resident = je_stat("resident");
    uint64_t keys = 0;
    ks_ctx ctx = {server.ks, server.batch, 0, server_now_ms(), NULL};
    for (int db = 0; db < KS_DATABASES; db++) {
        ctx.db = db;
        keys += ks_dbsize(&ctx);
    }
    ks_ctx_reset(&ctx);
    size_t cl = clients_bytes(), sl = slowlog_mem();
    uint64_t disk = eng_disk_usage(server.db);
    const struct {
        const char *name;
        uint64_t v;
    } rows[] = {
        {"peak.allocated", allocated > rss ? allocated : rss},
        {"total.allocated", allocated ? allocated : rss},
        {"clients.normal", cl},
        {"slowlog", sl},
        {"overhead.total", cl + sl},
        {"keys.count", keys},
        {"keys.bytes-per-key", keys ? disk / keys : 0},
        {"dataset.bytes", disk},
        {"engine.memtable", es.memtable_bytes},
        {"engine.block-cache", es.cache_usage},
        {"engine.row-cache", es.row_cache_usage},
        {"engine.total", es.memtable_bytes + es.cache_usage + es.row_cache_usage},
        {"allocator.allocated", allocated},
        {"allocator.active", active},
        {"allocator.resident", resident},
        {"rss", rss},
    };
    add_reply_map_len(c, (long)(sizeof(rows) / sizeof(rows[0])));
    for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
        add_reply_bulk_cstr(c, rows[k].name);
        add_reply_long_long(c, (long long)rows[k].v);
    }
}

static void memory_doctor(client *c)
{
    eng_stats es;
    eng_get_stats(server.db, &es);
    uint64_t rss = server_used_memory();
    sbuf b = {malloc(1024), 0, 1024};
    b.p[0] = '\0';
    size_t big_clients = 0, cl = clients_bytes();
    for (client *x = server.clients; x; x = x->priv->next)
        if (x->priv->reply_bytes > 1024 * 1024) big_clients++;
    int issues = 0;
    if (rss < 5 * 1024 * 1024) {
        sb_printf(&b,
                  "This instance is empty or is using very little memory (%llu bytes "
                  "resident): there is nothing to diagnose yet.\n",
                  (unsigned long long)rss);
    } else {
        sb_printf(&b,
                  "Memory of this instance: %llu bytes resident; the engine holds %llu in "
                  "its memtable, %llu of %llu in its block cache and %llu in its row cache; "
                  "clients hold %llu.\n",
                  (unsigned long long)rss, (unsigned long long)es.memtable_bytes,
                  (unsigned long long)es.cache_usage, (unsigned long long)es.cache_capacity,
                  (unsigned long long)es.row_cache_usage, (unsigned long long)cl);
        if (big_clients) {
            sb_printf(&b,
                      "\n- %zu clients have more than 1 MB of unsent replies: they read "
                      "slower than they ask (or subscribe to more than they read); see "
                      "client-output-buffer-limit.\n",
                      big_clients);
            issues++;
        }
        if (cl > rss / 2) {
            sb_printf(&b, "\n- Clients hold more than half of the memory: look at CLIENT LIST "
                          "(qbuf, omem).\n");
            issues++;
        }
        if (!issues) sb_printf(&b, "\nNo memory problem was detected.\n");
    }
    add_reply_verbatim(c, b.p, b.len, "txt");
    free(b.p);
}

static void append_stats(void *arg, const char *s)
{
    sb_printf(arg, "%s", s);
}

static void memory_malloc_stats(client *c)
{
    stats_print_fn print = (stats_print_fn)dlsym(RTLD_DEFAULT, "malloc_stats_print");
    if (!print) {
        add_reply_verbatim(c, "Stats not supported for the current allocator", 46, "txt");
        return;
    }
    sbuf b = {malloc(16384), 0, 16384};
    b.p[0] = '\0';
    print(append_stats, &b, NULL);
    add_reply_verbatim(c, b.p, b.len, "txt");
    free(b.p);
}

static void memory_purge(client *c)
{
    mallctl_fn mc = mallctl_get();
    if (mc) mc("arena.4096.purge", NULL, NULL, NULL, 0); /* MALLCTL_ARENAS_ALL */
    add_reply_ok(c);
}

static const char *memory_help_lines[] = {
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    NULL};

static void memory_help(client *c)
{
    add_reply_help(c, memory_help_lines);
}

static const subcommand memory_subs[] = {{"doctor", 2, memory_doctor},
                                         {"help", 2, memory_help},
                                         {"malloc-stats", 2, memory_malloc_stats},
                                         {"purge", 2, memory_purge},
                                         {"stats", 2, memory_stats},
                                         {"usage", -3, memory_usage},
                                         {NULL, 0, NULL}};

void cmd_memory(client *c)
{
    dispatch_subcommand(c, memory_subs);
}

/* ---- DEBUG OBJECT ------------------------------------------------------------ */

void debug_object(client *c)
{
    ks_key_stat st;
    ks_ctx *k = client_ks(c);
    ks_status s = ks_key_info(k, c->argv[2].ptr, c->argv[2].len, 0, &st);
    if (s == KS_NOTFOUND) return add_reply_error(c, "no such key");
    if (s != KS_OK) return add_reply_ks_error(c, s, k);
    const char *enc = "raw";
    s = ks_object_encoding(k, c->argv[2].ptr, c->argv[2].len, &enc); /* as OBJECT ENCODING */
    if (s != KS_OK) return add_reply_ks_error(c, s, k);
    char line[256];
    /* No object lives in memory: no address, refcount 1, no LRU clock. */
    snprintf(line, sizeof(line),
             "Value at:0x0 refcount:1 encoding:%s serializedlength:%llu lru:0 "
             "lru_seconds_idle:0",
             enc, (unsigned long long)st.payload_bytes);
    add_reply_status(c, line);
}

/* ---- WAIT ---------------------------------------------------------------------- */

/* WAIT numreplicas timeout: the waiting is repl_master.c's. */
void cmd_wait(client *c)
{
    long long numreplicas;
    int64_t end;
    if (arg_to_ll(c, &c->argv[1], &numreplicas) < 0) return;
    if (pause_parse_timeout(c, &c->argv[2], &end) < 0) return;
    repl_wait(c, numreplicas, end);
}
