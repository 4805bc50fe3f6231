/*
 * cmd_migrate.c -- MIGRATE host port key|"" db timeout [COPY] [REPLACE]
 * [AUTH password | AUTH2 username password] [KEYS key ...], as Redis 7.0:
 * each key is sent as RESTORE key ttl <DUMP payload> [REPLACE] to the
 * target over a connection this server keeps for ten seconds after its
 * last use (INFO migrate_cached_sockets), then deleted here unless COPY.
 *
 * Like Redis's, the command blocks the server while it talks to the target
 * (at most timeout ms per network step): a MIGRATE is a synchronous
 * hand-over, and its deletes go into the command's batch only for the keys
 * the target acknowledged, so a failure in the middle leaves every key
 * either here or there, never lost. On a socket error before the first
 * reply the command reconnects and tries once more (the cached connection
 * may have been closed by the target), as Redis does.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "keyspace/keyspace.h"
#include "server/ae.h"
#include "server/server.h"

#define MIG_CACHE_ITEMS 64
#define MIG_CACHE_TTL_MS 10000

typedef struct mig_sock {
    char name[300]; /* host:port */
    int fd;
    long long last_db; /* -1: SELECT before the next RESTORE */
    int64_t last_use_ms;
} mig_sock;

static mig_sock cache[MIG_CACHE_ITEMS];
static int ncache;

long migrate_cached_sockets(void)
{
    return ncache;
}

static void cache_drop(int i)
{
    close(cache[i].fd);
    cache[i] = cache[--ncache];
}

void migrate_cron(void)
{
    int64_t now = ae_mstime();
    for (int i = ncache - 1; i >= 0; i--)
        if (now - cache[i].last_use_ms > MIG_CACHE_TTL_MS) cache_drop(i);
}

/* Waits until fd is ready for ev or the deadline passes; 0 when ready,
 * -1 with errno (ETIMEDOUT at the deadline). */
static int wait_fd(int fd, short ev, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - ae_mstime();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, ev, 0};
        int r = poll(&p, 1, (int)left);
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return -1;
    }
}

static int tcp_connect(const char *host, const char *port, long timeout_ms)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0) return -1;
    int fd = -1;
    int64_t deadline = ae_mstime() + timeout_ms;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) continue;
        /* Writable counts as connected without asking SO_ERROR, as Redis's
         * blocking connect: a refused connection then fails the first write
         * ("writing to target instance"), the text clients see from Redis. */
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
            (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) == 0))
            break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    }
    return fd;
}

/* The cached connection to host:port, or a new one; NULL after replying
 * Redis's error when the connection fails. */
static mig_sock *get_socket(client *c, const arg *host, const arg *port, long timeout)
{
    char name[sizeof(cache[0].name)];
    snprintf(name, sizeof(name), "%.*s:%.*s", (int)host->len, host->ptr, (int)port->len, port->ptr);
    for (int i = 0; i < ncache; i++) {
        if (!strcmp(cache[i].name, name)) {
            cache[i].last_use_ms = ae_mstime();
            return &cache[i];
        }
    }
    if (ncache == MIG_CACHE_ITEMS) cache_drop(rand() % ncache);
    int fd = tcp_connect(host->ptr, port->ptr, timeout);
    if (fd < 0) {
        add_reply_error(c, "-IOERR error or timeout connecting to the client");
        return NULL;
    }
    mig_sock *s = &cache[ncache++];
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->fd = fd;
    s->last_db = -1;
    s->last_use_ms = ae_mstime();
    return s;
}

static void close_socket(mig_sock *s)
{
    cache_drop((int)(s - cache));
}

static int sync_write(int fd, const char *p, size_t n, long timeout)
{
    int64_t deadline = ae_mstime() + timeout;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w > 0) {
            p += w, n -= (size_t)w;
        } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
            return -1;
        } else if (wait_fd(fd, POLLOUT, deadline) < 0) {
            return -1;
        }
    }
    return 0;
}

/* One reply line without its CRLF into buf; -1 on error or timeout. */
static int sync_readline(int fd, char *buf, size_t cap, long timeout)
{
    int64_t deadline = ae_mstime() + timeout;
    size_t n = 0;
    for (;;) {
        char ch;
        ssize_t r = read(fd, &ch, 1);
        if (r == 1) {
            if (ch == '\n') break;
            if (n + 1 < cap) buf[n++] = ch;
        } else if (r == 0) {
            errno = ECONNRESET;
            return -1;
        } else if (errno != EAGAIN && errno != EINTR) {
            return -1;
        } else if (wait_fd(fd, POLLIN, deadline) < 0) {
            return -1;
        }
    }
    if (n && buf[n - 1] == '\r') n--;
    buf[n] = 0;
    return 0;
}

/* ---- The request ------------------------------------------------------- */

/* The request is built in an sbuf (server.h): RESP bulk strings. */
static void mb_bulk(sbuf *b, const char *p, size_t n)
{
    sb_printf(b, "$%zu\r\n", n);
    sb_put(b, p, n);
    sb_put(b, "\r\n", 2);
}

static void mb_ll(sbuf *b, long long v)
{
    char t[32];
    int tl = snprintf(t, sizeof(t), "%lld", v);
    mb_bulk(b, t, (size_t)tl);
}

typedef struct mig_opts {
    int copy, replace;
    const arg *user, *pass;
    int first_key, nkeys;
    long long db, timeout;
} mig_opts;

/* Parses MIGRATE's arguments; replies and returns -1 on error. */
static int parse(client *c, mig_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->first_key = 3;
    o->nkeys = 1;
    for (int j = 6; j < c->argc; j++) {
        int more = c->argc - 1 - j;
        const arg *a = &c->argv[j];
        if (arg_is(a, "copy")) {
            o->copy = 1;
        } else if (arg_is(a, "replace")) {
            o->replace = 1;
        } else if (arg_is(a, "auth") && more >= 1) {
            o->pass = &c->argv[++j];
        } else if (arg_is(a, "auth2") && more >= 2) {
            o->user = &c->argv[++j];
            o->pass = &c->argv[++j];
        } else if (arg_is(a, "keys")) {
            if (c->argv[3].len != 0) {
                add_reply_error(c, "When using MIGRATE KEYS option, the key argument must be "
                                   "set to the empty string");
                return -1;
            }
            o->first_key = j + 1;
            o->nkeys = c->argc - j - 1;
            break;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            return -1;
        }
    }
    if (arg_to_ll(c, &c->argv[5], &o->timeout) < 0 || arg_to_ll(c, &c->argv[4], &o->db) < 0)
        return -1;
    if (o->timeout <= 0) o->timeout = 1000;
    return 0;
}

/* Appends RESTORE for each of keys[0..n) (live, expiring at when[j]: see
 * live_keys; the command's clock stands still, so they still are).
 * Returns n, or -1 after replying a keyspace error. */
static int add_restores(client *c, const mig_opts *o, sbuf *b, const arg **keys,
                        const int64_t *when, int n)
{
    for (int j = 0; j < n; j++) {
        ks_ctx *ks = client_ks(c);
        long long ttl = 0;
        if (when[j]) {
            ttl = when[j] - server_now_ms();
            if (ttl < 1) ttl = 1;
        }
        ks_val v;
        ks_status st = ks_dump(ks, keys[j]->ptr, keys[j]->len, &v);
        if (st != KS_OK) {
            add_reply_ks_error(c, st, ks);
            return -1;
        }
        sb_printf(b, "*%d\r\n", o->replace ? 5 : 4);
        mb_bulk(b, "RESTORE", 7);
        mb_bulk(b, keys[j]->ptr, keys[j]->len);
        mb_ll(b, ttl);
        mb_bulk(b, v.p, v.n);
        if (o->replace) mb_bulk(b, "REPLACE", 7);
        ks_val_free(&v);
    }
    return n;
}

/* The keys of keys[0..n) that exist (the others are left out, as Redis),
 * compacted at the front with their expiry (0: none) in when; returns
 * how many. A key that cannot be read counts as absent here and fails in
 * add_restores' DUMP. */
static int live_keys(client *c, const arg **keys, int64_t *when, int n)
{
    int live = 0;
    for (int j = 0; j < n; j++) {
        int64_t w = 0;
        ks_status st = ks_expire_get(client_ks(c), keys[j]->ptr, keys[j]->len, &w);
        if (st == KS_NOTFOUND) continue;
        when[live] = st == KS_OK ? w : 0;
        keys[live++] = keys[j];
    }
    return live;
}

/* The request: AUTH and SELECT when needed, then the RESTOREs. Returns the
 * number of keys sent (all n), or -1 after replying. */
static int build_request(client *c, const mig_opts *o, mig_sock *s, sbuf *b, const arg **keys,
                         const int64_t *when, int n, int *select)
{
    if (o->pass) {
        sb_printf(b, "*%d\r\n", o->user ? 3 : 2);
        mb_bulk(b, "AUTH", 4);
        if (o->user) mb_bulk(b, o->user->ptr, o->user->len);
        mb_bulk(b, o->pass->ptr, o->pass->len);
    }
    *select = s->last_db != o->db;
    if (*select) {
        sb_printf(b, "*%d\r\n", 2);
        mb_bulk(b, "SELECT", 6);
        mb_ll(b, o->db);
    }
    return add_restores(c, o, b, keys, when, n);
}

/* Reads the replies of the request, deleting each key the target took
 * (unless COPY). Returns 0, 1 when the target replied an error (already
 * replied to c), or -1 on a socket error after *acked keys. */
static int read_replies(client *c, const mig_opts *o, mig_sock *s, const arg **keys, int n,
                        int select, int *acked)
{
    char auth[1024] = "", sel[1024] = "", line[1024];
    *acked = 0;
    if (o->pass && sync_readline(s->fd, auth, sizeof(auth), o->timeout) < 0) return -1;
    if (select && sync_readline(s->fd, sel, sizeof(sel), o->timeout) < 0) return -1;
    int target_error = 0;
    for (int j = 0; j < n; j++) {
        if (sync_readline(s->fd, line, sizeof(line), o->timeout) < 0) return target_error ? 1 : -1;
        (*acked)++;
        const char *err = auth[0] == '-'   ? auth
                          : sel[0] == '-'  ? sel
                          : line[0] == '-' ? line
                                           : NULL;
        if (err) {
            if (!target_error) {
                s->last_db = -1;
                add_reply_error_fmt(c, "Target instance replied with error: %s", err + 1);
            }
            target_error = 1;
        } else if (!o->copy) {
            int deleted = 0;
            if (ks_del(client_ks(c), keys[j]->ptr, keys[j]->len, &deleted) == KS_OK && deleted)
                notify_keyspace_event(NOTIFY_GENERIC, "del", c->db, keys[j]->ptr, keys[j]->len);
        }
    }
    return target_error;
}

void cmd_migrate(client *c)
{
    mig_opts o;
    if (parse(c, &o) < 0) return;
    const arg **keys = malloc(sizeof(*keys) * (size_t)(o.nkeys ? o.nkeys : 1));
    int64_t *when = malloc(sizeof(*when) * (size_t)(o.nkeys ? o.nkeys : 1));
    sbuf b = {malloc(4096), 0, 4096}; /* sb_printf writes at p + len: never NULL */
    if (!keys || !when || !b.p) abort();
    for (int j = 0; j < o.nkeys; j++)
        keys[j] = &c->argv[o.first_key + j];
    int n = live_keys(c, keys, when, o.nkeys), may_retry = 1, write_error, select, acked;
    if (n == 0) {
        add_reply_status(c, "NOKEY");
        goto done;
    }
    for (;;) {
        mig_sock *s = get_socket(c, &c->argv[1], &c->argv[2], (long)o.timeout);
        if (!s) goto done;
        b.len = 0;
        n = build_request(c, &o, s, &b, keys, when, n, &select);
        if (n < 0) goto done;
        write_error = sync_write(s->fd, b.p, b.len, (long)o.timeout) < 0;
        int rc = write_error ? -1 : read_replies(c, &o, s, keys, n, select, &acked);
        int saved = errno;
        if (rc == 0) {
            s->last_db = o.db;
            add_reply_ok(c);
            goto done;
        }
        if (rc > 0) goto done; /* the target's error is the reply */
        close_socket(s);       /* Redis retries once when nothing was read */
        if (!write_error && acked > 0) may_retry = 0;
        if (saved == ETIMEDOUT || !may_retry) break;
        may_retry = 0;
    }
    add_reply_error_fmt(c, "-IOERR error or timeout %s to target instance",
                        write_error ? "writing" : "reading");
done:
    free(keys);
    free(when);
    free(b.p);
}
