/*
 * log.c -- serverLog-style logging: "pid:M 30 Nov 2026 01:50:00.123 * msg",
 * with Redis's level marks (. debug, - verbose, * notice, # warning), to the
 * logfile setting or stdout when it is empty. The file is opened in append
 * mode for each line, as Redis does, so rotating it needs no signal; the
 * engine logs from its background threads, hence the mutex.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "server/config.h"
#include "server/server.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* msg with every control byte escaped (\n, \r, \t, \xNN) into out (cap
 * bytes, truncated): a log line from client bytes (DEBUG LOG, a client
 * name, a command name) can never start a line of its own. */
static const char *log_escape(const char *msg, char *out, size_t cap)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)msg; *p && o + 5 < cap; p++) {
        if (*p >= 0x20 && *p != 0x7f) {
            out[o++] = (char)*p;
        } else if (*p == '\n' || *p == '\r' || *p == '\t') {
            out[o++] = '\\';
            out[o++] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't';
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
        }
    }
    out[o] = '\0';
    return out;
}

static void log_raw(int level, const char *raw)
{
    static const char marks[] = ".-*#";
    if (level < cfg.loglevel) return;
    char msg[4100];
    log_escape(raw, msg, sizeof(msg));
    if (level < LL_DEBUG) level = LL_DEBUG;
    if (level > LL_WARNING) level = LL_WARNING;
    char tbuf[64];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    localtime_r(&tv.tv_sec, &tm);
    size_t off = strftime(tbuf, sizeof(tbuf), "%d %b %Y %H:%M:%S.", &tm);
    snprintf(tbuf + off, sizeof(tbuf) - off, "%03d", (int)(tv.tv_usec / 1000));
    pthread_mutex_lock(&log_lock);
    int to_stdout = !cfg.logfile || !cfg.logfile[0];
    FILE *fp = to_stdout ? stdout : fopen(cfg.logfile, "a");
    if (fp) {
        fprintf(fp, "%d:M %s %c %s\n", (int)getpid(), tbuf, marks[level], msg);
        fflush(fp);
        if (!to_stdout) fclose(fp);
    }
    pthread_mutex_unlock(&log_lock);
}

void server_log(int level, const char *fmt, ...)
{
    if (level < cfg.loglevel) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_raw(level, msg);
}

void server_log_engine(void *ctx, int level, const char *msg)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "engine: %s", msg);
    log_raw(level, buf);
}
