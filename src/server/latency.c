/*
 * latency.c -- the latency monitor (LATENCY LATEST | HISTORY | RESET |
 * GRAPH | DOCTOR | HISTOGRAM | HELP), as Redis's latency.c: every event
 * class ("command", "fast-command", "expire-cycle", ...) keeps its last
 * 160 spikes of at least latency-monitor-threshold ms, one per second
 * (the largest of that second), and its all-time maximum. HISTOGRAM is the
 * per-command latency distribution of cmdstats.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/config.h"
#include "server/server.h"
#include "server/strmap.h"

#define LATENCY_TS_LEN 160

typedef struct sample {
    int32_t time;     /* unix seconds; 0: unused */
    uint32_t latency; /* ms */
} sample;

typedef struct series {
    int idx; /* next slot to write */
    uint32_t max;
    sample samples[LATENCY_TS_LEN];
} series;

static strmap events = STRMAP_INIT; /* event name -> series */

static void add_sample(const char *event, int64_t ms)
{
    size_t n = strlen(event);
    strmap_entry *e = strmap_find(&events, event, n);
    if (!e) {
        series *s = calloc(1, sizeof(*s));
        if (!s) abort();
        e = strmap_add(&events, event, n, s);
    }
    series *ts = e->value;
    int32_t now = (int32_t)time(NULL);
    uint32_t lat = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
    if (lat > ts->max) ts->max = lat;
    int prev = (ts->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
    if (ts->samples[prev].time == now) { /* one sample per second: the worst */
        if (lat > ts->samples[prev].latency) ts->samples[prev].latency = lat;
        return;
    }
    ts->samples[ts->idx] = (sample){now, lat};
    ts->idx = (ts->idx + 1) % LATENCY_TS_LEN;
}

void latency_add_sample_if_needed(const char *event, int64_t ms)
{
    if (cfg.latency_monitor_threshold && ms >= cfg.latency_monitor_threshold) add_sample(event, ms);
}

void latency_reset_all(void)
{
    strmap_clear(&events, free);
}

static series *find(const arg *a)
{
    strmap_entry *e = strmap_find(&events, a->ptr, a->len);
    return e ? e->value : NULL;
}

static void latency_latest(client *c)
{
    add_reply_array_len(c, (long)events.count);
    for (strmap_entry *e = events.head; e; e = e->next) {
        series *ts = e->value;
        int last = (ts->idx + LATENCY_TS_LEN - 1) % LATENCY_TS_LEN;
        add_reply_array_len(c, 4);
        add_reply_bulk(c, e->key, e->len);
        add_reply_long_long(c, ts->samples[last].time);
        add_reply_long_long(c, ts->samples[last].latency);
        add_reply_long_long(c, ts->max);
    }
}

static void latency_history(client *c)
{
    series *ts = find(&c->argv[2]);
    void *len = add_reply_deferred_len(c);
    long n = 0;
    for (int j = 0; ts && j < LATENCY_TS_LEN; j++) {
        const sample *s = &ts->samples[(ts->idx + j) % LATENCY_TS_LEN];
        if (s->time == 0) continue;
        add_reply_array_len(c, 2);
        add_reply_long_long(c, s->time);
        add_reply_long_long(c, s->latency);
        n++;
    }
    set_deferred_array_len(c, len, n);
}

static void latency_reset(client *c)
{
    long long resets = 0;
    if (c->argc == 2) {
        resets = (long long)events.count;
        latency_reset_all();
    }
    for (int j = 2; j < c->argc; j++) {
        strmap_entry *e = strmap_find(&events, c->argv[j].ptr, c->argv[j].len);
        if (!e) continue;
        free(e->value);
        strmap_delete(&events, e);
        resets++;
    }
    add_reply_long_long(c, resets);
}

/* "5s", "3m", "2h", "1d": how long ago t was. */
static void ago(char *buf, size_t cap, int32_t t)
{
    long el = (long)(time(NULL) - t);
    if (el < 60)
        snprintf(buf, cap, "%lds", el);
    else if (el < 3600)
        snprintf(buf, cap, "%ldm", el / 60);
    else if (el < 86400)
        snprintf(buf, cap, "%ldh", el / 3600);
    else
        snprintf(buf, cap, "%ldd", el / 86400);
}

/* LATENCY GRAPH: the samples as columns of '#' (4 rows, scaled between
 * the lowest and the highest), each labelled below with its age. */
static void latency_graph(client *c)
{
    series *ts = find(&c->argv[2]);
    if (!ts) return add_reply_error_fmt(c, "No samples available for event '%s'", c->argv[2].ptr);
    const sample *v[LATENCY_TS_LEN];
    int n = 0;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (int j = 0; j < LATENCY_TS_LEN; j++) {
        const sample *s = &ts->samples[(ts->idx + j) % LATENCY_TS_LEN];
        if (s->time == 0) continue;
        v[n++] = s;
        if (s->latency < lo) lo = s->latency;
        if (s->latency > hi) hi = s->latency;
    }
    if (n > 80) { /* the 80 newest fit the width */
        memmove(v, v + (n - 80), 80 * sizeof(v[0]));
        n = 80;
    }
    sbuf b = {malloc(4096), 0, 4096};
    sb_printf(&b, "%s - high %lu ms, low %lu ms (all time high %lu ms)\n", c->argv[2].ptr,
              (unsigned long)hi, (unsigned long)(n ? lo : 0), (unsigned long)ts->max);
    for (int j = 0; j < 80; j++)
        sb_printf(&b, "-");
    sb_printf(&b, "\n");
    for (int row = 4; row >= 1; row--) {
        for (int j = 0; j < n; j++) {
            uint32_t span = hi > lo ? hi - lo : 1;
            int h = 1 + (int)((uint64_t)(v[j]->latency - lo) * 3 / span);
            sb_printf(&b, "%c", h >= row ? '#' : ' ');
        }
        sb_printf(&b, "\n");
    }
    for (int row = 0; row < 3; row++) { /* the labels, written downwards */
        for (int j = 0; j < n; j++) {
            char lab[32];
            ago(lab, sizeof(lab), v[j]->time);
            sb_printf(&b, "%c", row < (int)strlen(lab) ? lab[row] : ' ');
        }
        sb_printf(&b, "\n");
    }
    add_reply_verbatim(c, b.p, b.len, "txt");
    free(b.p);
}

/* LATENCY DOCTOR: each event's spikes (count, average, mean deviation,
 * period, worst), then advice for what the events suggest. */
static void latency_doctor(client *c)
{
    sbuf b = {malloc(4096), 0, 4096};
    b.p[0] = '\0';
    if (events.count == 0 && cfg.latency_monitor_threshold == 0) {
        sb_printf(&b, "Latency monitoring is disabled in this server. Enable it with \"CONFIG SET "
                      "latency-monitor-threshold <milliseconds>\".\n");
    } else if (events.count == 0) {
        sb_printf(&b, "No latency spike was observed during the lifetime of this server.\n");
    } else {
        int k = 0, cmd_advice = 0, fast_advice = 0, expire_advice = 0, fsync_advice = 0;
        sb_printf(&b, "Latency spikes observed by this server:\n\n");
        for (strmap_entry *e = events.head; e; e = e->next) {
            series *ts = e->value;
            uint64_t sum = 0, cnt = 0;
            int32_t oldest = 0;
            for (int j = 0; j < LATENCY_TS_LEN; j++) {
                const sample *s = &ts->samples[j];
                if (!s->time) continue;
                sum += s->latency;
                cnt++;
                if (!oldest || s->time < oldest) oldest = s->time;
            }
            uint64_t avg = cnt ? sum / cnt : 0, mad = 0;
            for (int j = 0; j < LATENCY_TS_LEN; j++) {
                const sample *s = &ts->samples[j];
                if (s->time) mad += s->latency > avg ? s->latency - avg : avg - s->latency;
            }
            mad = cnt ? mad / cnt : 0;
            long period = cnt ? (long)(time(NULL) - oldest) : 0;
            if (period == 0) period = 1;
            sb_printf(&b,
                      "%d. %s: %llu latency spikes (average %llums, mean deviation %llums, "
                      "period %.2f sec). Worst all time event %lums.\n",
                      ++k, e->key, (unsigned long long)cnt, (unsigned long long)avg,
                      (unsigned long long)mad, cnt ? (double)period / (double)cnt : 0.0,
                      (unsigned long)ts->max);
            cmd_advice |= !strcmp(e->key, "command");
            fast_advice |= !strcmp(e->key, "fast-command");
            expire_advice |= !strcmp(e->key, "expire-cycle");
            fsync_advice |= !strncmp(e->key, "aof-", 4);
        }
        sb_printf(&b, "\nAdvice:\n\n");
        if (cmd_advice && cfg.slowlog_log_slower_than < 0)
            sb_printf(&b,
                      "- Slow commands: enable the slow log with 'CONFIG SET "
                      "slowlog-log-slower-than %lld' to see which ones.\n",
                      cfg.latency_monitor_threshold * 1000);
        else if (cmd_advice)
            sb_printf(&b, "- Slow commands: SLOWLOG GET lists them. Commands over large keys "
                          "(KEYS, HGETALL of big hashes, IDX.RANGE without LIMIT) are the usual "
                          "cause.\n");
        if (fast_advice)
            sb_printf(&b, "- Fast commands were slow: the machine did not give the server CPU "
                          "time (load, noisy neighbours).\n");
        if (expire_advice)
            sb_printf(&b, "- The active expire cycle was slow: raise hz for smaller steps, or "
                          "avoid expiring very large keys at once.\n");
        if (fsync_advice || cfg.appendfsync == ENG_SYNC_ALWAYS)
            sb_printf(&b, "- Log syncs are on the write path: appendfsync everysec trades at "
                          "most a second of writes for latency.\n");
        if (!cmd_advice && !fast_advice && !expire_advice && !fsync_advice)
            sb_printf(&b, "- No easy fix is known for these events.\n");
    }
    add_reply_verbatim(c, b.p, b.len, "txt");
    free(b.p);
}

static void latency_histogram(client *c)
{
    stats_reply_latency_histogram(c);
}

static const char *latency_help_lines[] = {
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the "
    "specified command names.",
    "    If no commands are specified then all histograms are replied.",
    NULL};

static void latency_help(client *c)
{
    add_reply_help(c, latency_help_lines);
}

static const subcommand latency_subs[] = {
    {"doctor", 2, latency_doctor},   {"graph", 3, latency_graph},
    {"help", 2, latency_help},       {"histogram", -2, latency_histogram},
    {"history", 3, latency_history}, {"latest", 2, latency_latest},
    {"reset", -2, latency_reset},    {NULL, 0, NULL}};

void cmd_latency(client *c)
{
    dispatch_subcommand(c, latency_subs);
}
