/*
 * networking.c -- client lifecycle and socket I/O: accept, read and parse
 * (every complete request in the buffer runs before anything is written:
 * pipelining; the write commands among them share one engine batch,
 * write_group.c), and writing replies with writev once the loop iteration's
 * group commit is done (server.c, before-sleep).
 *
 * Invariants:
 *   N1. No reply byte reaches a socket before the engine commit that
 *       covers the writes of the command that produced it: replies are
 *       only written from networking_flush_replies (called by
 *       before-sleep after eng_commit) or from the writable handler, which
 *       is installed only by networking_flush_replies.
 *   N2. A client is freed only when none of its commands is running
 *       (client_free_async defers to before-sleep otherwise).
 *   N3. qbuf[qpos..qlen) holds the bytes not yet parsed, and the parser's
 *       partial request starts at resp_parser_keep_from(qpos) >= 0.
 *   N4. A held client (its replies were pending when a group commit failed,
 *       server.c S3) gets no byte written until networking_release_replies:
 *       those replies may acknowledge or show writes that are not yet
 *       durable. Its later replies queue behind them.
 *
 * Output buffer limits (networking_reply_grew): a client whose reply blocks
 * reach its class's client-output-buffer-limit, or hold the most when the
 * reply blocks of all clients pass reply-memory-limit, is scheduled to close
 * and its replies are dropped: a client that pipelines without reading
 * cannot grow the server without bound.
 *
 * The cache hints for a pipeline's keys before it runs are in
 * networking_prefetch.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "server/acl.h"
#include "server/ae.h"
#include "server/anet.h"
#include "server/config.h"
#include "server/pubsub.h"
#include "server/resp_parser.h"
#include "server/repl.h"
#include "server/server.h"
#include "server/tls.h"

#define IOBUF_LEN (16 * 1024)
#define MAX_IOV 64

static void read_handler(ae_loop *el, int fd, void *data, int mask);
static void write_handler(ae_loop *el, int fd, void *data, int mask);

int client_is_local(const client *c)
{
    return !strncmp(c->addr, "127.0.0.1:", 10) || !strncmp(c->addr, "::1:", 4) ||
           !strncmp(c->addr, "/unixsocket", 11);
}

int client_auth_required(const client *c)
{
    return !(c->flags & CLIENT_AUTHENTICATED) && acl_auth_required();
}

client *client_create(int fd)
{
    client *c = calloc(1, sizeof(*c));
    struct client_private *p = calloc(1, sizeof(*p));
    resp_parser *rp = malloc(sizeof(*rp));
    if (!c || !p || !rp) {
        free(c);
        free(p);
        free(rp);
        return NULL;
    }
    resp_parser_init(rp);
    c->priv = p;
    p->parser = rp;
    c->fd = fd;
    c->id = ++server.next_client_id;
    c->resp = 2;
    c->ctime_ms = c->last_interaction_ms = ae_mstime();
    c->user = acl_default_user();
    if (acl_new_client_authenticated()) c->flags |= CLIENT_AUTHENTICATED;
    if (fd >= 0) {
        anet_nodelay(NULL, fd);
        if (cfg.tcp_keepalive > 0) anet_keepalive(NULL, fd, cfg.tcp_keepalive);
        anet_fd_to_string(fd, c->addr, sizeof(c->addr), 0);
        anet_fd_to_string(fd, c->laddr, sizeof(c->laddr), 1);
        if (ae_create_file_event(server.el, fd, AE_READABLE, read_handler, c) == AE_ERR) {
            resp_parser_free(rp);
            free(rp);
            free(p);
            free(c);
            return NULL;
        }
    }
    if (fd < 0) return c; /* the script client: not a connection */
    p->next = server.clients;
    if (server.clients) server.clients->priv->prev = c;
    server.clients = c;
    server.nclients++;
    return c;
}

void client_set_class(client *c, int cls)
{
    if (cls < 0 || cls >= CLIENT_CLASSES) cls = CLIENT_CLASS_NORMAL;
    if (c->priv->obuf_class != cls) c->priv->obuf_soft_since_s = 0;
    c->priv->obuf_class = cls;
}

int client_get_class(const client *c)
{
    return c->priv->obuf_class;
}

static void unlink_pending(client *c)
{
    if (!c->priv->in_pending) return;
    for (client **pp = &server.pending_write; *pp; pp = &(*pp)->priv->pw_next) {
        if (*pp == c) {
            *pp = c->priv->pw_next;
            break;
        }
    }
    c->priv->in_pending = 0;
}

static void add_pending(client *c)
{
    if (c->priv->in_pending) return;
    c->priv->in_pending = 1;
    c->priv->pw_next = server.pending_write;
    server.pending_write = c;
}

void client_pending_write(client *c)
{
    add_pending(c);
}

void client_free_async(client *c)
{
    block_client_gone(c); /* a killed client is served nothing more */
    c->priv->close_asap = 1;
    reply_mem_release(c); /* its replies will never be sent (R3, R4) */
    add_pending(c);
}

void client_free(client *c)
{
    struct client_private *p = c->priv;
    if (p->executing) { /* N2 */
        client_free_async(c);
        return;
    }
    unlink_pending(c);
    block_client_gone(c);
    if (c->fd >= 0) {
        ae_delete_file_event(server.el, c->fd, AE_READABLE | AE_WRITABLE);
        tls_conn_free(p->tls);
        p->tls = NULL;
        close(c->fd);
    }
    server_unwatch_all(c);
    server_discard_multi(c);
    pubsub_client_reset(c);
    tracking_client_off(c);
    monitor_client_remove(c);
    repl_client_free(c);
    pause_client_free(c);
    free(p->redact);
    reply_mem_release(c);
    if (c->fd >= 0) {
        if (p->prev)
            p->prev->priv->next = p->next;
        else
            server.clients = p->next;
        if (p->next) p->next->priv->prev = p->prev;
        server.nclients--;
    }
    reply_free_all(c);
    resp_parser_free(p->parser);
    free(p->parser);
    free(p->qbuf);
    free(p->watched);
    free(c->name);
    free(c->lib_name);
    free(c->lib_ver);
    free(p);
    free(c);
}

/* Redis's checkClientOutputBufferLimits: over the hard limit, or over the
 * soft limit for more than its seconds without a break. */
static int over_class_limit(client *c)
{
    struct client_private *p = c->priv;
    const struct obuf_limit *l = &cfg.obuf_limits[p->obuf_class];
    size_t used = reply_obuf_usage(c);
    int hard = l->hard && used >= l->hard;
    int soft = l->soft && used >= l->soft;
    if (!soft) {
        p->obuf_soft_since_s = 0;
        return hard;
    }
    int64_t now_s = server_now_ms() / 1000;
    if (p->obuf_soft_since_s == 0) {
        p->obuf_soft_since_s = now_s;
        return hard; /* the soft limit is first seen now */
    }
    return hard || now_s - p->obuf_soft_since_s > l->soft_seconds;
}

static void close_for_output(client *c, const char *why)
{
    char *info = client_info_line(c);
    client_free_async(c);
    server_log(LL_WARNING, "Client %s scheduled to be closed ASAP for %s.", info ? info : "?", why);
    free(info);
}

/* The client (with a socket, not closing) whose replies hold the most. */
static client *largest_reply_holder(void)
{
    client *best = NULL;
    for (client *c = server.clients; c; c = c->priv->next)
        if (c->fd >= 0 && !c->priv->close_asap &&
            (!best || c->priv->reply_mem > best->priv->reply_mem))
            best = c;
    return best;
}

void networking_reply_grew(client *c)
{
    if (c->fd >= 0 && !c->priv->close_asap && over_class_limit(c))
        close_for_output(c, "overcoming of output buffer limits");
    while (cfg.reply_memory_limit && server.reply_mem_total > (size_t)cfg.reply_memory_limit) {
        client *big = largest_reply_holder();
        if (!big || big->priv->reply_mem == 0) break;
        server.stat_evicted_clients++;
        close_for_output(big, "holding the most reply memory when the replies of all clients "
                              "exceed reply-memory-limit");
    }
}

/* protected-mode: while the default user has no password, only loopback
 * clients are served; others get Redis's explanation and are closed.
 * Returns 1 when cfd was refused (and closed). */
static int refuse_protected_mode(int cfd)
{
    if (!cfg.protected_mode || !acl_default_nopass()) return 0;
    char addr[64]; /* as client.addr */
    anet_fd_to_string(cfd, addr, sizeof(addr), 0);
    if (!strncmp(addr, "127.0.0.1:", 10) || !strncmp(addr, "::1:", 4)) return 0;
    static const char msg[] =
        "-DENIED Redis is running in protected mode because protected mode is enabled and no "
        "password is set for the default user. In this mode connections are only accepted from "
        "the loopback interface. If you want to connect from external computers to Redis you may "
        "adopt one of the following solutions: 1) Just disable protected mode sending the command "
        "'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from "
        "the same host the server is running, however MAKE SURE Redis is not publicly accessible "
        "from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) "
        "Alternatively you can just disable the protected mode by editing the Redis "
        "configuration file, and setting the protected mode option to 'no', and then restarting "
        "the server. 3) If you started the server manually just for testing, restart it with the "
        "'--protected-mode no' option. 4) Setup a an authentication password for the default "
        "user. NOTE: You only need to do one of the above things in order for the server to "
        "start accepting connections from the outside.\r\n";
    if (write(cfd, msg, sizeof(msg) - 1) < 0) { /* the client is gone anyway */
    }
    server.stat_rejected_conn++;
    close(cfd);
    return 1;
}

/* Accepts what waits on listener fd; tls: the clients speak TLS. */
static void accept_clients(int fd, int tls)
{
    char err[ANET_ERR_LEN] = "";
    for (int i = 0; i < 1000; i++) {
        int cfd = anet_tcp_accept(err, fd);
        if (cfd < 0) {
            if (err[0]) server_log(LL_VERBOSE, "Accepting client connection: %s", err);
            return;
        }
        server.stat_connections++;
        if (server.nclients >= (uint64_t)cfg.maxclients) {
            static const char msg[] = "-ERR max number of clients reached\r\n";
            if (write(cfd, msg, sizeof(msg) - 1) < 0) { /* the client is gone anyway */
            }
            server.stat_rejected_conn++;
            close(cfd);
            continue;
        }
        if (refuse_protected_mode(cfd)) continue;
        client *c = client_create(cfd);
        if (!c) {
            server_log(LL_WARNING, "Error registering fd event for the new client");
            close(cfd);
            continue;
        }
        if (tls && !(c->priv->tls = tls_conn_new(cfd))) {
            server_log(LL_WARNING, "Error creating the TLS connection of a new client");
            client_free(c);
        }
    }
}

void networking_accept_handler(ae_loop *el, int fd, void *data, int mask)
{
    accept_clients(fd, 0);
}

void networking_accept_tls_handler(ae_loop *el, int fd, void *data, int mask)
{
    accept_clients(fd, 1);
}

/* Makes room for at least want more bytes after qlen, compacting first. */
static int qbuf_reserve(struct client_private *p, size_t want)
{
    size_t keep = resp_parser_keep_from(p->parser, p->qpos);
    if (keep > 0 && (keep == p->qlen || p->qcap - p->qlen < want)) {
        memmove(p->qbuf, p->qbuf + keep, p->qlen - keep); /* N3 */
        p->qlen -= keep;
        p->qpos -= keep;
        resp_parser_rebase(p->parser, keep);
    }
    if (p->qcap - p->qlen >= want) return 0;
    /* Double for ordinary growth; a big bulk gets exactly what it needs. */
    size_t cap = p->qcap ? p->qcap * 2 : IOBUF_LEN;
    if (cap < p->qlen + want) cap = p->qlen + want;
    char *nb = realloc(p->qbuf, cap);
    if (!nb) return -1;
    p->qbuf = nb;
    p->qcap = cap;
    return 0;
}

/* Runs every complete request in the query buffer. Returns -1 when the
 * client must not be read from any more. */
static int process_input(client *c)
{
    struct client_private *p = c->priv;
    resp_parser *rp = p->parser;
    for (;;) {
        if (c->flags & CLIENT_CLOSE_AFTER_REPLY || p->close_asap) return -1;
        /* the rest waits in qbuf: for the pause, the WAIT or the unblock */
        if (p->paused_cmd || p->waiting || (c->flags & CLIENT_BLOCKED)) return 0;
        if (networking_prefetch_resumes(c)) networking_prefetch(c); /* the next requests */
        rp->max_bulk_len = cfg.proto_max_bulk_len;
        rp->unauthenticated = !(c->flags & CLIENT_AUTHENTICATED);
        int r = resp_parse(rp, p->qbuf, p->qlen, &p->qpos);
        if (r == RESP_AGAIN) return 0;
        if (r == RESP_ERR) {
            server_log(LL_VERBOSE, "Protocol error (%s) from client: id=%llu addr=%s", rp->err,
                       (unsigned long long)c->id, c->addr);
            add_reply_error(c, rp->err);
            c->flags |= CLIENT_CLOSE_AFTER_REPLY;
            p->qpos = p->qlen = 0;
            rp->in_multibulk = 0;
            return -1;
        }
        c->argc = rp->argc;
        c->argv = rp->argv;
        server_process_command(c);
        c->argc = 0;
        c->argv = NULL;
    }
}

/* process_input with the writes of the requests it runs in one write group
 * (write_group.c, S4). */
static void process_input_grouped(client *c)
{
    write_group_begin(c);
    process_input(c);
    write_group_end(c);
}

/* After requests ran: the query buffer's housekeeping, and the replies
 * queued for the next flush. */
static void input_done(client *c)
{
    struct client_private *p = c->priv;
    if (p->qpos == p->qlen && !p->parser->in_multibulk) p->qpos = p->qlen = 0;
    /* A client that pipelined megabytes gives the memory back when idle. */
    if (p->qlen == 0 && p->qcap > 4 * IOBUF_LEN) {
        free(p->qbuf);
        p->qbuf = NULL;
        p->qcap = 0;
    }
    if (p->reply_bytes || (c->flags & CLIENT_CLOSE_AFTER_REPLY) || p->close_asap) add_pending(c);
}

void client_after_push(client *c)
{
    add_pending(c); /* the output buffer limit was checked as the reply grew (R4) */
}

/* One read of c's socket and the commands it completes. Returns -1 when c
 * was freed, 1 when nothing was read, 0 otherwise. */
static int read_once(client *c, int fd)
{
    struct client_private *p = c->priv;
    if (p->close_asap || (c->flags & CLIENT_CLOSE_AFTER_REPLY)) return 1;
    size_t need = resp_parser_bulk_need(p->parser);
    size_t have = p->qlen - p->qpos;
    size_t want = IOBUF_LEN;
    if (need > have && need - have > want) want = need - have; /* one read for a big value */
    if (qbuf_reserve(p, want) < 0) {
        server_log(LL_WARNING, "Out of memory growing the query buffer of client %llu",
                   (unsigned long long)c->id);
        client_free(c);
        return -1;
    }
    ssize_t n = p->tls ? tls_read(p->tls, p->qbuf + p->qlen, p->qcap - p->qlen)
                       : read(fd, p->qbuf + p->qlen, p->qcap - p->qlen);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 1;
        server_log(LL_VERBOSE, "Reading from client: %s", strerror(errno));
        client_free(c);
        return -1;
    }
    if (n == 0) {
        server_log(LL_VERBOSE, "Client closed connection id=%llu addr=%s",
                   (unsigned long long)c->id, c->addr);
        client_free(c);
        return -1;
    }
    p->qlen += (size_t)n;
    server.stat_net_in += (uint64_t)n;
    c->last_interaction_ms = ae_mstime();
    /* The commands of one read share this clock reading (server_now_ms). */
    server.cmd_time_ms = c->last_interaction_ms;
    size_t pending = p->qlen - resp_parser_keep_from(p->parser, p->qpos);
    if (pending > (size_t)cfg.client_query_buffer_limit) {
        server_log(LL_WARNING,
                   "Closing client that reached max query buffer length: id=%llu "
                   "addr=%s qbuf=%zu",
                   (unsigned long long)c->id, c->addr, pending);
        add_reply_error(c, "Protocol error: client query buffer exceeds client-query-buffer-limit");
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        p->qpos = p->qlen = 0;
        p->parser->in_multibulk = 0;
    } else {
        networking_prefetch(c);
        process_input_grouped(c);
    }
    input_done(c);
    return 0;
}

static void read_handler(ae_loop *el, int fd, void *data, int mask)
{
    client *c = data;
    /* TLS may hold decrypted bytes the socket will not signal again. */
    while (read_once(c, fd) == 0 && c->priv->tls && !(c->flags & CLIENT_PROTECTED) &&
           tls_pending(c->priv->tls))
        ;
}

void client_resume_input(client *c)
{
    struct client_private *p = c->priv;
    if (p->close_asap || (c->flags & CLIENT_CLOSE_AFTER_REPLY)) {
        add_pending(c);
        return;
    }
    server.cmd_time_ms = ae_mstime();
    process_input_grouped(c);
    input_done(c);
}

/* Writes as much of c's reply chain as the socket takes. Returns -1 when c
 * was freed. */
static int write_to_client(client *c)
{
    struct client_private *p = c->priv;
    while (p->reply_head) {
        struct iovec iov[MAX_IOV];
        int cnt = 0;
        size_t total = 0;
        reply_block *b = p->reply_head;
        size_t off = p->head_sent;
        for (; b && cnt < MAX_IOV; b = b->next, off = 0) {
            if (b->used == off) continue;
            iov[cnt].iov_base = b->buf + off;
            iov[cnt].iov_len = b->used - off;
            total += b->used - off;
            cnt++;
        }
        /* TLS: one block per record write (OpenSSL has no writev). One
         * block (the common reply) goes out with write(): writev's iovec
         * copy-in is measurable per request without pipelining. */
        ssize_t n = !cnt       ? 0
                    : p->tls   ? tls_write(p->tls, iov[0].iov_base, iov[0].iov_len)
                    : cnt == 1 ? write(c->fd, iov[0].iov_base, iov[0].iov_len)
                               : writev(c->fd, iov, cnt);
        if (p->tls && cnt) total = iov[0].iov_len;
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
            server_log(LL_VERBOSE, "Error writing to client: %s", strerror(errno));
            client_free(c);
            return -1;
        }
        server.stat_net_out += (uint64_t)n;
        p->reply_bytes -= (size_t)n; /* R2 */
        size_t left = (size_t)n;
        while (p->reply_head) {
            reply_block *h = p->reply_head;
            size_t avail = h->used - p->head_sent;
            if (left < avail || (h->deferred && h->used == 0 && h == p->reply_tail)) {
                p->head_sent += left;
                break;
            }
            left -= avail;
            p->reply_head = h->next;
            if (!p->reply_head) p->reply_tail = NULL;
            p->head_sent = 0;
            reply_block_free(c, h);
        }
        if ((size_t)n < total) return 0; /* the socket is full */
    }
    return 0;
}

static void after_write(client *c)
{
    struct client_private *p = c->priv;
    if (p->reply_head && p->reply_bytes) {
        if (!(ae_get_file_events(server.el, c->fd) & AE_WRITABLE))
            ae_create_file_event(server.el, c->fd, AE_WRITABLE, write_handler, c);
        return;
    }
    if (ae_get_file_events(server.el, c->fd) & AE_WRITABLE)
        ae_delete_file_event(server.el, c->fd, AE_WRITABLE);
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) client_free(c);
}

static void write_handler(ae_loop *el, int fd, void *data, int mask)
{
    client *c = data;
    if (c->priv->commit_held) { /* N4 */
        ae_delete_file_event(server.el, c->fd, AE_WRITABLE);
        return;
    }
    if (write_to_client(c) < 0) return;
    after_write(c);
}

void networking_hold_replies(void)
{
    for (client *c = server.clients; c; c = c->priv->next)
        if (c->priv->reply_bytes && c->fd >= 0) c->priv->commit_held = 1;
}

void networking_release_replies(void)
{
    for (client *c = server.clients; c; c = c->priv->next)
        if (c->priv->commit_held) {
            c->priv->commit_held = 0;
            add_pending(c);
        }
}

void client_protect(client *c)
{
    c->flags |= CLIENT_PROTECTED;
    if (c->fd >= 0) ae_delete_file_event(server.el, c->fd, AE_READABLE | AE_WRITABLE);
}

void client_unprotect(client *c)
{
    c->flags &= ~CLIENT_PROTECTED;
    if (c->fd < 0) return;
    ae_create_file_event(server.el, c->fd, AE_READABLE, read_handler, c);
    add_pending(c); /* the next flush writes what waited (or reinstalls the writable handler) */
}

void networking_flush_replies(void)
{
    client *held = NULL; /* protected clients stay pending */
    while (server.pending_write) {
        client *c = server.pending_write;
        server.pending_write = c->priv->pw_next;
        c->priv->in_pending = 0;
        if (c->flags & CLIENT_PROTECTED) {
            c->priv->pw_next = held;
            held = c;
            continue;
        }
        if (c->priv->close_asap) {
            client_free(c);
            continue;
        }
        if (c->priv->commit_held) continue; /* N4: re-added at release */
        /* Already waiting for the socket: the writable handler goes on. */
        if (ae_get_file_events(server.el, c->fd) & AE_WRITABLE) continue;
        if (write_to_client(c) < 0) continue;
        after_write(c);
    }
    while (held) {
        client *c = held;
        held = c->priv->pw_next;
        add_pending(c);
    }
}

/* Gives back the input buffers of a client idle for a while: 10,000
 * connected but quiet clients should not hold 16 KiB each. */
static void trim_idle_buffers(client *c, int64_t now)
{
    struct client_private *p = c->priv;
    if (now - c->last_interaction_ms < 2000 || p->qlen != 0 || p->parser->in_multibulk) return;
    free(p->qbuf);
    p->qbuf = NULL;
    p->qcap = p->qlen = p->qpos = 0;
    if (p->parser->argcap > 1024) resp_parser_free(p->parser);
}

void networking_clients_cron(void)
{
    int64_t now = ae_mstime();
    for (client *c = server.clients; c;) {
        client *next = c->priv->next;
        if (c->fd >= 0 && cfg.timeout > 0 &&
            now - c->last_interaction_ms > (int64_t)cfg.timeout * 1000 &&
            !(c->flags & (CLIENT_MULTI | CLIENT_BLOCKED))) {
            server_log(LL_VERBOSE, "Closing idle client id=%llu", (unsigned long long)c->id);
            client_free(c);
        } else {
            trim_idle_buffers(c, now);
        }
        c = next;
    }
}

char *client_info_line(client *c)
{
    struct client_private *p = c->priv;
    char flags[16], *f = flags;
    if (c->flags & CLIENT_MONITOR) *f++ = 'O';
    if (c->flags & CLIENT_PUBSUB) *f++ = 'P';
    if (c->flags & CLIENT_MULTI) *f++ = 'x';
    if (p->paused_cmd || p->waiting || (c->flags & CLIENT_BLOCKED)) *f++ = 'b';
    if (c->flags & CLIENT_DIRTY_CAS) *f++ = 'd';
    if (c->flags & CLIENT_CLOSE_AFTER_REPLY) *f++ = 'c';
    if (c->flags & CLIENT_UNBLOCKED) *f++ = 'u';
    if (p->no_evict) *f++ = 'e';
    if (p->no_touch) *f++ = 'T';
    f += tracking_client_flags(c, f);
    if (f == flags) *f++ = 'N';
    *f = '\0';
    int64_t now = ae_mstime();
    char *line = NULL;
    int ev = c->fd >= 0 ? ae_get_file_events(server.el, c->fd) : 0;
    int sub, psub, ssub;
    pubsub_client_counts(c, &sub, &psub, &ssub);
    if (asprintf(&line,
                 "id=%llu addr=%s laddr=%s fd=%d name=%s age=%lld idle=%lld flags=%s db=%d "
                 "sub=%d psub=%d ssub=%d multi=%d qbuf=%zu qbuf-free=%zu argv-mem=0 multi-mem=0 "
                 "rbs=%zu rbp=0 obl=0 oll=0 omem=%zu tot-mem=%zu events=%s%s cmd=%s%s%s "
                 "user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s",
                 (unsigned long long)c->id, c->addr, c->laddr, c->fd, c->name ? c->name : "",
                 (long long)((now - c->ctime_ms) / 1000),
                 (long long)((now - c->last_interaction_ms) / 1000), flags, c->db, sub, psub, ssub,
                 (c->flags & CLIENT_MULTI) ? p->mq_len : -1, p->qlen, p->qcap - p->qlen, p->qcap,
                 p->reply_bytes,
                 p->qcap + p->reply_bytes + sizeof(*c) + sizeof(*p) + pubsub_client_mem(c),
                 (ev & AE_READABLE) ? "r" : "", (ev & AE_WRITABLE) ? "w" : "",
                 p->last_cmd ? p->last_cmd->name : "NULL", p->last_sub[0] ? "|" : "", p->last_sub,
                 acl_user_name(c->user), c->resp, c->lib_name ? c->lib_name : "",
                 c->lib_ver ? c->lib_ver : "") < 0)
        return NULL;
    return line;
}
