/*
 * monitor.c -- MONITOR: every command the server runs, as one status line
 * per command to each monitoring client, in Redis's exact format (so
 * redis-cli monitor prints what it prints against Redis):
 *
 *   +<unix seconds>.<microseconds> [<db> <ip:port>] "arg" "arg" ...\r\n
 *
 * with each argument quoted as Redis's sdscatrepr (\\ \" \n \r \t \a \b,
 * other non-printable bytes as \xHH) and "[<db> lua]" for commands a
 * script runs. The line is formatted once per command, only when someone
 * monitors; the dispatcher's cost otherwise is one test of a counter.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "server/server.h"

static client **monitors;
static int monitors_cap;
int monitor_clients; /* monitors[0..monitor_clients) */

void monitor_client_remove(client *c)
{
    if (!(c->flags & CLIENT_MONITOR)) return;
    for (int i = 0; i < monitor_clients; i++) {
        if (monitors[i] == c) {
            memmove(&monitors[i], &monitors[i + 1],
                    (size_t)(monitor_clients - i - 1) * sizeof(client *));
            monitor_clients--;
            break;
        }
    }
    c->flags &= ~CLIENT_MONITOR;
}

void cmd_monitor(client *c)
{
    if (c->flags & CLIENT_IN_EXEC) {
        add_reply_error(c, "MONITOR isn't allowed for DENY BLOCKING client");
        return;
    }
    if (c->flags & CLIENT_MONITOR) return; /* as Redis: a second MONITOR is ignored */
    if (monitor_clients == monitors_cap) {
        monitors_cap = monitors_cap ? monitors_cap * 2 : 4;
        monitors = realloc(monitors, (size_t)monitors_cap * sizeof(client *));
        if (!monitors) abort();
    }
    monitors[monitor_clients++] = c;
    c->flags |= CLIENT_MONITOR;
    add_reply_ok(c);
}

typedef struct line {
    char *p;
    size_t len, cap;
} line;

static void put(line *l, const char *s, size_t n)
{
    if (l->len + n > l->cap) {
        l->cap = (l->len + n) * 2 + 64;
        l->p = realloc(l->p, l->cap);
        if (!l->p) abort();
    }
    memcpy(l->p + l->len, s, n);
    l->len += n;
}

/* Redis's sdscatrepr. */
static void put_repr(line *l, const char *s, size_t n)
{
    put(l, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        char esc[5];
        switch (ch) {
        case '\\':
        case '"':
            esc[0] = '\\';
            esc[1] = (char)ch;
            put(l, esc, 2);
            break;
        case '\n':
            put(l, "\\n", 2);
            break;
        case '\r':
            put(l, "\\r", 2);
            break;
        case '\t':
            put(l, "\\t", 2);
            break;
        case '\a':
            put(l, "\\a", 2);
            break;
        case '\b':
            put(l, "\\b", 2);
            break;
        default:
            if (isprint(ch)) {
                put(l, (const char *)&ch, 1);
            } else {
                snprintf(esc, sizeof(esc), "\\x%02x", ch);
                put(l, esc, 4);
            }
        }
    }
    put(l, "\"", 1);
}

void monitor_feed(const client *c, const char *origin, int db, int argc, const arg *argv)
{
    if (monitor_clients == 0) return;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    char head[160];
    int h = snprintf(head, sizeof(head), "+%ld.%06ld [%d %s] ", (long)tv.tv_sec, (long)tv.tv_usec,
                     db, origin ? origin : c->addr);
    line l = {NULL, 0, 0};
    put(&l, head, (size_t)h);
    const unsigned char *redact = !origin && c ? c->priv->redact : NULL;
    for (int j = 0; j < argc; j++) {
        if (redact && redact[j])
            put_repr(&l, "(redacted)", 10);
        else
            put_repr(&l, argv[j].ptr, argv[j].len);
        if (j != argc - 1) put(&l, " ", 1);
    }
    put(&l, "\r\n", 2);
    for (int i = 0; i < monitor_clients; i++) {
        reply_append(monitors[i], l.p, l.len);
        client_after_push(monitors[i]);
    }
    free(l.p);
}

void server_redact_arg(client *c, int i)
{
    struct client_private *p = c->priv;
    if (i < 0 || i >= c->argc) return;
    if (!p->redact) {
        p->redact = calloc((size_t)c->argc, 1);
        if (!p->redact) abort();
    }
    p->redact[i] = 1;
}
