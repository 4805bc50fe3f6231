/*
 * cmdstats.c -- what the dispatcher records after every command: INFO
 * commandstats (calls, usec, rejected and failed calls per command and per
 * "container|subcommand"), errorstats (error replies by their code),
 * latencystats (a latency histogram per command, latency-tracking), and the
 * hand-off to SLOWLOG, the latency monitor and MONITOR.
 *
 * Counting follows Redis's call(): a command the dispatcher refuses
 * (unknown-command aside) counts one rejected call and nothing else; a
 * command that ran counts a call, its microseconds, a sample in its
 * histogram, and a failed call when it replied an error (commands run by
 * EXEC count on their own; EXEC fails only when it is refused as a whole).
 * An unknown subcommand counts nowhere, as Redis refuses it before it has a
 * command to count on. The cost per command when nothing is configured:
 * a few additions and one histogram increment; nothing is allocated except
 * a command's stats on its first call.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/config.h"
#include "server/histogram.h"
#include "server/server.h"
#include "server/strmap.h"

typedef struct cmd_stats {
    uint64_t calls, usec, rejected, failed;
    histogram *hist;
    const struct command *parent; /* the container, for subcommand entries */
} cmd_stats;

static cmd_stats *top;              /* parallel to command_table */
static strmap subs = STRMAP_INIT;   /* "container|sub" -> cmd_stats */
static strmap errors = STRMAP_INIT; /* error code -> count (in the pointer) */
#define ERRORSTATS_MAX 128          /* distinct codes kept; scripts can invent any */

static cmd_stats *top_stats(const struct command *cmd)
{
    if (!top) {
        top = calloc(command_table_size, sizeof(*top));
        if (!top) abort();
    }
    return &top[cmd - command_table];
}

/* "container|sub" in lower case into buf; 0 when argv[1] is too long to be
 * a subcommand name. */
static size_t sub_name(const struct command *cmd, const arg *sub, char *buf, size_t cap)
{
    size_t n = strlen(cmd->name);
    if (n + 1 + sub->len >= cap) return 0;
    memcpy(buf, cmd->name, n);
    buf[n++] = '|';
    for (size_t i = 0; i < sub->len; i++) {
        char ch = sub->ptr[i];
        buf[n++] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    buf[n] = '\0';
    return n;
}

void command_fullname(const client *c, const struct command *cmd, char *buf, size_t cap)
{
    if (!(cmd->flags & CMD_CONTAINER) || c->argc < 2 || !sub_name(cmd, &c->argv[1], buf, cap))
        snprintf(buf, cap, "%s", cmd->name);
}

void command_subname(const client *c, const struct command *cmd, char *buf, size_t cap)
{
    char full[96];
    size_t n = strlen(cmd->name);
    buf[0] = '\0';
    if (c->argc < 2 || !sub_name(cmd, &c->argv[1], full, sizeof(full))) return;
    snprintf(buf, cap, "%s", full + n + 1);
}

/* A container's subcommand entry, created on its first call. */
static __attribute__((noinline)) cmd_stats *sub_stats(client *c, const struct command *cmd)
{
    char name[96];
    size_t n = sub_name(cmd, &c->argv[1], name, sizeof(name));
    if (!n) return top_stats(cmd);
    strmap_entry *e = strmap_find(&subs, name, n);
    if (!e) {
        cmd_stats *s = calloc(1, sizeof(*s));
        if (!s) abort();
        s->parent = cmd;
        e = strmap_add(&subs, name, n, s);
    }
    return e->value;
}

static inline cmd_stats *stats_of(client *c, const struct command *cmd)
{
    if ((cmd->flags & CMD_CONTAINER) && c->argc >= 2) return sub_stats(c, cmd);
    return top ? &top[cmd - command_table] : top_stats(cmd);
}

void stats_rejected(const struct command *cmd)
{
    if (cmd) top_stats(cmd)->rejected++;
}

void stats_rejected_request(client *c, const struct command *cmd)
{
    if (!cmd) return;
    if ((cmd->flags & CMD_CONTAINER) && c->argc >= 2 &&
        command_subcommand(cmd, c->argv[1].ptr, c->argv[1].len))
        sub_stats(c, cmd)->rejected++;
    else
        top_stats(cmd)->rejected++;
}

void stats_failed_when_served(client *c, const struct command *cmd)
{
    if (cmd) stats_of(c, cmd)->failed++;
}

void stats_after_call(client *c, const struct command *cmd, int64_t dur_us)
{
    struct client_private *p = c->priv;
    if (p->cmd_outcome) {
        if (p->cmd_outcome == CMD_REJECTED) stats_of(c, cmd)->rejected++;
        goto done;
    }
    cmd_stats *st = stats_of(c, cmd);
    st->calls++;
    st->usec += (uint64_t)dur_us;
    if (c->last_cmd_errors) st->failed++;
    if (cfg.latency_tracking) {
        if (!st->hist) {
            st->hist = calloc(1, sizeof(histogram));
            if (!st->hist) abort();
        }
        hist_record(st->hist, dur_us * 1000);
    }
    /* The checks inline: a server that logs nothing pays three tests. */
    if (cfg.latency_monitor_threshold && dur_us / 1000 >= cfg.latency_monitor_threshold)
        latency_add_sample_if_needed((cmd->flags & CMD_FAST) ? "fast-command" : "command",
                                     dur_us / 1000);
    /* a command that blocked is logged when it is served (blocking.c) */
    if (cfg.slowlog_log_slower_than >= 0 && dur_us >= cfg.slowlog_log_slower_than &&
        !(cmd->flags & CMD_SKIP_SLOWLOG) && !(c->flags & CLIENT_BLOCKED))
        slowlog_push(c, c->argc, c->argv, dur_us);
    if (monitor_clients && !(cmd->flags & (CMD_ADMIN | CMD_SKIP_MONITOR | CMD_SCRIPT)))
        monitor_feed(c, (c->flags & CLIENT_SCRIPT) ? "lua" : NULL, c->db, c->argc, c->argv);
done:
    p->cmd_outcome = 0;
    if (p->redact) {
        free(p->redact);
        p->redact = NULL;
    }
}

void stats_error_code(const char *code, size_t n)
{
    strmap_entry *e = strmap_find(&errors, code, n);
    if (!e) {
        if (errors.count >= ERRORSTATS_MAX) return;
        e = strmap_add(&errors, code, n, (void *)0);
    }
    e->value = (void *)((uintptr_t)e->value + 1);
}

static void free_stats(void *v)
{
    cmd_stats *s = v;
    free(s->hist);
    free(s);
}

void stats_reset(void)
{
    if (top) {
        for (size_t i = 0; i < command_table_size; i++)
            free(top[i].hist);
        memset(top, 0, command_table_size * sizeof(*top));
    }
    strmap_clear(&subs, free_stats);
    strmap_clear(&errors, NULL);
}

/* ---- INFO ------------------------------------------------------------------ */

/* Redis's getSafeInfoString: '#', ':', CR and LF become '_'. */
static void safe_name(char *dst, size_t cap, const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n && i + 1 < cap; i++)
        dst[i] = strchr("#:\r\n", s[i]) && s[i] ? '_' : s[i];
    dst[i] = '\0';
}

static void commandstat_line(sbuf *b, const char *name, const cmd_stats *s)
{
    if (!s->calls && !s->failed && !s->rejected) return;
    char safe[128];
    safe_name(safe, sizeof(safe), name, strlen(name));
    sb_printf(b,
              "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
              "failed_calls=%llu\r\n",
              safe, (unsigned long long)s->calls, (unsigned long long)s->usec,
              s->calls ? (double)(float)((float)s->usec / (float)s->calls) : 0.0,
              (unsigned long long)s->rejected, (unsigned long long)s->failed);
}

/* Calls fn for every command with stats, each container followed by its
 * subcommands (the order of INFO and LATENCY HISTOGRAM). */
static void each_stats(const struct command *only, void (*fn)(void *, const char *, cmd_stats *),
                       void *arg)
{
    for (size_t i = 0; i < command_table_size; i++) {
        const struct command *cmd = &command_table[i];
        if (only && cmd != only) continue;
        if (top) fn(arg, cmd->name, &top[i]);
        if (!(cmd->flags & CMD_CONTAINER)) continue;
        for (strmap_entry *e = subs.head; e; e = e->next)
            if (((cmd_stats *)e->value)->parent == cmd) fn(arg, e->key, e->value);
    }
}

static void commandstat_fn(void *arg, const char *name, cmd_stats *s)
{
    commandstat_line(arg, name, s);
}

void stats_info_commandstats(sbuf *b)
{
    sb_section(b, "Commandstats");
    each_stats(NULL, commandstat_fn, b);
}

static int cmp_entry(const void *a, const void *b)
{
    const strmap_entry *x = *(strmap_entry *const *)a, *y = *(strmap_entry *const *)b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->key, y->key, n);
    return r ? r : (x->len > y->len) - (x->len < y->len);
}

void stats_info_errorstats(sbuf *b)
{
    sb_section(b, "Errorstats");
    strmap_entry *v[ERRORSTATS_MAX];
    size_t n = 0;
    for (strmap_entry *e = errors.head; e && n < ERRORSTATS_MAX; e = e->next)
        v[n++] = e;
    qsort(v, n, sizeof(v[0]), cmp_entry); /* Redis's rax walks them sorted */
    for (size_t i = 0; i < n; i++) {
        char safe[64];
        safe_name(safe, sizeof(safe), v[i]->key, v[i]->len);
        sb_printf(b, "errorstat_%s:count=%llu\r\n", safe,
                  (unsigned long long)(uintptr_t)v[i]->value);
    }
}

/* "%f" with the trailing zeros (and point) cut, as Redis's trimDoubleString. */
static void trim_double(char *buf, size_t cap, double d)
{
    snprintf(buf, cap, "%f", d);
    if (strchr(buf, '.')) {
        char *e = buf + strlen(buf) - 1;
        while (*e == '0')
            *e-- = '\0';
        if (*e == '.') *e = '\0';
    }
}

static void latencystat_fn(void *arg, const char *name, cmd_stats *s)
{
    sbuf *b = arg;
    if (!s->hist) return;
    char safe[128];
    safe_name(safe, sizeof(safe), name, strlen(name));
    sb_printf(b, "latency_percentiles_usec_%s:", safe);
    for (int j = 0; j < cfg.latency_percentiles_n; j++) {
        char p[64];
        trim_double(p, sizeof(p), cfg.latency_percentiles[j]);
        sb_printf(b, "p%s=%.3f%s", p,
                  (double)hist_value_at_percentile(s->hist, cfg.latency_percentiles[j]) / 1000.0,
                  j + 1 < cfg.latency_percentiles_n ? "," : "");
    }
    sb_printf(b, "\r\n");
}

void stats_info_latencystats(sbuf *b)
{
    sb_section(b, "Latencystats");
    if (cfg.latency_tracking) each_stats(NULL, latencystat_fn, b);
}

/* ---- LATENCY HISTOGRAM ------------------------------------------------------ */

typedef struct cdf_ctx {
    client *c;
    long n;
} cdf_ctx;

static void cdf_bucket(void *arg, int64_t usec, uint64_t cum)
{
    cdf_ctx *x = arg;
    add_reply_long_long(x->c, usec);
    add_reply_long_long(x->c, (long long)cum);
    x->n++;
}

static void cdf_fn(void *arg, const char *name, cmd_stats *s)
{
    cdf_ctx *x = arg;
    if (!s->hist) return;
    client *c = x->c;
    add_reply_bulk_cstr(c, name);
    add_reply_map_len(c, 2);
    add_reply_bulk_cstr(c, "calls");
    add_reply_long_long(c, (long long)s->hist->total);
    add_reply_bulk_cstr(c, "histogram_usec");
    void *len = add_reply_deferred_len(c);
    cdf_ctx inner = {c, 0};
    hist_walk_log2(s->hist, cdf_bucket, &inner);
    set_deferred_map_len(c, len, inner.n);
    x->n++;
}

void stats_reply_latency_histogram(client *c)
{
    void *len = add_reply_deferred_len(c);
    cdf_ctx x = {c, 0};
    if (c->argc == 2) each_stats(NULL, cdf_fn, &x);
    for (int j = 2; j < c->argc; j++) {
        const arg *a = &c->argv[j];
        const char *bar = memchr(a->ptr, '|', a->len);
        if (!bar) {
            const struct command *cmd = command_lookup(a->ptr, a->len);
            if (cmd) each_stats(cmd, cdf_fn, &x);
            continue;
        }
        const struct command *cmd = command_lookup(a->ptr, (size_t)(bar - a->ptr));
        arg sub = {(char *)bar + 1, a->len - (size_t)(bar - a->ptr) - 1};
        char name[96];
        size_t n = cmd ? sub_name(cmd, &sub, name, sizeof(name)) : 0;
        strmap_entry *e = n ? strmap_find(&subs, name, n) : NULL;
        if (e) cdf_fn(&x, e->key, e->value);
    }
    set_deferred_map_len(c, len, x.n);
}
