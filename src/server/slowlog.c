/*
 * slowlog.c -- SLOWLOG: the last slowlog-max-len commands that ran at
 * least slowlog-log-slower-than microseconds (negative: off, 0: every
 * command), newest first, as Redis's slowlog.c: each entry keeps an id,
 * the unix time, the duration, at most 32 arguments (the 32nd says how
 * many more there were), each cut at 128 bytes ("... (N more bytes)"),
 * the client's address and name. Redacted arguments (AUTH passwords)
 * are kept as "(redacted)".
 *
 * Entries live in a ring of slowlog-max-len slots that is resized when the
 * setting changes (the newest entries stay); slowlog_push returns after
 * one comparison when the duration is below the threshold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/config.h"
#include "server/server.h"

#define SLOWLOG_ENTRY_MAX_ARGC 32
#define SLOWLOG_ENTRY_MAX_STRING 128

typedef struct slowlog_entry {
    long long id;
    long long time_s;
    long long duration_us;
    int argc;
    arg *argv; /* owned copies */
    char *peer, *name;
} slowlog_entry;

/* A ring of cap slots; the newest entry is at `newest`, the i-th newest
 * at (newest - i) mod cap, count of them are set. */
static slowlog_entry **ring;
static size_t ring_cap, count, newest;
static long long next_id;

static slowlog_entry *nth(size_t i)
{
    return ring[(newest + ring_cap - i) % ring_cap];
}

static void entry_free(slowlog_entry *e)
{
    for (int j = 0; j < e->argc; j++)
        free(e->argv[j].ptr);
    free(e->argv);
    free(e->peer);
    free(e->name);
    free(e);
}

static void set_arg(arg *a, const char *p, size_t n)
{
    a->ptr = malloc(n + 1);
    if (!a->ptr) abort();
    memcpy(a->ptr, p, n);
    a->ptr[n] = '\0';
    a->len = n;
}

static slowlog_entry *entry_new(client *c, int argc, const arg *argv, int64_t dur_us)
{
    slowlog_entry *e = calloc(1, sizeof(*e));
    if (!e) abort();
    int n = argc > SLOWLOG_ENTRY_MAX_ARGC ? SLOWLOG_ENTRY_MAX_ARGC : argc;
    e->argv = calloc((size_t)n + 1, sizeof(arg));
    if (!e->argv) abort();
    e->argc = n;
    const unsigned char *redact = c->priv->redact;
    for (int j = 0; j < n; j++) {
        char buf[SLOWLOG_ENTRY_MAX_STRING + 64];
        if (n != argc && j == n - 1) {
            int k = snprintf(buf, sizeof(buf), "... (%d more arguments)", argc - n + 1);
            set_arg(&e->argv[j], buf, (size_t)k);
        } else if (redact && redact[j]) {
            set_arg(&e->argv[j], "(redacted)", 10);
        } else if (argv[j].len > SLOWLOG_ENTRY_MAX_STRING) {
            memcpy(buf, argv[j].ptr, SLOWLOG_ENTRY_MAX_STRING);
            int k = snprintf(buf + SLOWLOG_ENTRY_MAX_STRING, 64, "... (%lu more bytes)",
                             (unsigned long)(argv[j].len - SLOWLOG_ENTRY_MAX_STRING));
            set_arg(&e->argv[j], buf, SLOWLOG_ENTRY_MAX_STRING + (size_t)k);
        } else {
            set_arg(&e->argv[j], argv[j].ptr, argv[j].len);
        }
    }
    e->id = next_id++;
    e->time_s = (long long)time(NULL);
    e->duration_us = dur_us;
    e->peer = strdup(c->addr);
    e->name = strdup(c->name ? c->name : "");
    return e;
}

/* Re-sizes the ring to slowlog-max-len, keeping the newest entries. */
void slowlog_apply_max_len(void)
{
    size_t cap = cfg.slowlog_max_len > 0 ? (size_t)cfg.slowlog_max_len : 0;
    if (cap == ring_cap) return;
    slowlog_entry **nr = cap ? calloc(cap, sizeof(*nr)) : NULL;
    if (cap && !nr) abort();
    size_t keep = count < cap ? count : cap;
    for (size_t i = 0; i < count; i++) {
        if (i < keep)
            nr[keep - 1 - i] = nth(i);
        else
            entry_free(nth(i));
    }
    free(ring);
    ring = nr;
    ring_cap = cap;
    count = keep;
    newest = keep ? keep - 1 : 0;
}

void slowlog_push(client *c, int argc, const arg *argv, int64_t dur_us)
{
    if (cfg.slowlog_log_slower_than < 0 || dur_us < cfg.slowlog_log_slower_than) return;
    if ((size_t)cfg.slowlog_max_len != ring_cap) slowlog_apply_max_len();
    if (ring_cap == 0) return;
    newest = count ? (newest + 1) % ring_cap : 0;
    if (count == ring_cap)
        entry_free(ring[newest]); /* the oldest */
    else
        count++;
    ring[newest] = entry_new(c, argc, argv, dur_us);
}

void slowlog_reset(void)
{
    for (size_t i = 0; i < count; i++)
        entry_free(nth(i));
    count = newest = 0;
}

size_t slowlog_mem(void)
{
    size_t n = ring_cap * sizeof(*ring);
    for (size_t i = 0; i < count; i++) {
        const slowlog_entry *e = nth(i);
        n += sizeof(*e) + (size_t)e->argc * sizeof(arg) + strlen(e->peer) + strlen(e->name) + 2;
        for (int j = 0; j < e->argc; j++)
            n += e->argv[j].len + 1;
    }
    return n;
}

static void slowlog_get(client *c)
{
    long long n = 10;
    if (c->argc > 3) return add_reply_subcommand_syntax_error(c);
    if (c->argc == 3) {
        const char *msg = "count should be greater than or equal to -1";
        if (!ks_string2ll(c->argv[2].ptr, c->argv[2].len, &n) || n < -1)
            return add_reply_error(c, msg);
        if (n == -1) n = (long long)count;
    }
    size_t k = (unsigned long long)n < count ? (size_t)n : count;
    add_reply_array_len(c, (long)k);
    for (size_t i = 0; i < k; i++) {
        const slowlog_entry *e = nth(i);
        add_reply_array_len(c, 6);
        add_reply_long_long(c, e->id);
        add_reply_long_long(c, e->time_s);
        add_reply_long_long(c, e->duration_us);
        add_reply_array_len(c, e->argc);
        for (int j = 0; j < e->argc; j++)
            add_reply_bulk(c, e->argv[j].ptr, e->argv[j].len);
        add_reply_bulk_cstr(c, e->peer);
        add_reply_bulk_cstr(c, e->name);
    }
}

static void slowlog_len(client *c)
{
    add_reply_long_long(c, (long long)count);
}

static void slowlog_reset_cmd(client *c)
{
    slowlog_reset();
    add_reply_ok(c);
}

static const char *slowlog_help_lines[] = {
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    NULL};

static void slowlog_help(client *c)
{
    add_reply_help(c, slowlog_help_lines);
}

static const subcommand slowlog_subs[] = {{"get", -2, slowlog_get},
                                          {"help", 2, slowlog_help},
                                          {"len", 2, slowlog_len},
                                          {"reset", 2, slowlog_reset_cmd},
                                          {NULL, 0, NULL}};

void cmd_slowlog(client *c)
{
    dispatch_subcommand(c, slowlog_subs);
}
