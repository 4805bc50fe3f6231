/*
 * repl_replica.c -- the replica's side of replication (REPLICATION.md):
 * REPLICAOF, the handshake with the primary (blocking, with timeouts, as
 * Redis's syncWithMaster does it step by step), and the link that applies
 * the snapshot and the stream.
 *
 * On disk: the replica's state is one keyspace system record, kind 'R':
 *   'R' "state"   -> "<replid 40 hex> <offset decimal>"   the stream byte
 *                    the data reflects; written in the same engine batch
 *                    as every applied STRATA.BATCH and at SNAPEND
 *   'R' "syncing" -> "1"   between SNAPBEGIN and SNAPEND (a full sync is
 *                    not finished: the data is no history's)
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/ae.h"
#include "server/config.h"
#include "server/repl.h"
#include "server/resp_parser.h"

#define SYSREC_REPL 'R'

enum { LINK_NONE = 0, LINK_CONNECT = 1, LINK_SNAPSHOT = 2, LINK_ONLINE = 3 };

static struct {
    int state;
    int fd;
    char *buf;
    size_t len, cap, pos; /* buf[pos..len) unparsed; the parser resumes at pos */
    resp_parser parser;
    int parser_init;
    eng_batch *b;
    int64_t last_io_ms, down_since_ms, next_try_ms, last_ack_ms;
    long long acked; /* the offset last acked */
    long long snap_bytes;
    int need_full; /* no finished sync: the next PSYNC asks for a full one */
} L = {.fd = -1};

int repl_link_up(void)
{
    return L.state == LINK_ONLINE;
}

static ks_ctx link_ctx(void)
{
    if (!L.b) L.b = eng_batch_new(1);
    ks_ctx ctx = {server.ks, L.b, 0, ae_mstime(), NULL};
    return ctx;
}

/* Writes L.b (R1: the only data writes of a replica), deferred to the
 * group commit. Returns 0, or -1 when the engine refused it. */
static int link_write(void)
{
    eng_status st = eng_write(server.db, L.b, ENG_WRITE_DEFER);
    eng_batch_clear(L.b);
    if (st != ENG_OK) {
        server_log(LL_WARNING, "Replica: can't apply the primary's batch: %s", eng_last_error());
        return -1;
    }
    server.uncommitted++;
    return 0;
}

static void put_state(ks_ctx *ctx, long long offset)
{
    char v[80];
    int n = snprintf(v, sizeof(v), "%s %lld", repl.replid, offset);
    ks_sysrec_put(ctx, SYSREC_REPL, "state", 5, v, (size_t)n);
}

int repl_replica_load_state(void)
{
    ks_ctx ctx = link_ctx();
    ks_val v;
    int have = 0;
    if (ks_sysrec_get(&ctx, SYSREC_REPL, "syncing", 7, &v) == KS_OK) {
        ks_val_free(&v);
        L.need_full = 1;
        server_log(LL_WARNING, "Replica: a full sync did not finish; the next one starts over");
    } else if (ks_sysrec_get(&ctx, SYSREC_REPL, "state", 5, &v) == KS_OK) {
        char id[41];
        long long off;
        char tmp[96];
        size_t n = v.n < sizeof(tmp) - 1 ? v.n : sizeof(tmp) - 1;
        memcpy(tmp, v.p, n);
        tmp[n] = '\0';
        if (sscanf(tmp, "%40s %lld", id, &off) == 2 && strlen(id) == 40) {
            memcpy(repl.replid, id, 41);
            repl_backlog_reset(off);
            have = 1;
        }
        ks_val_free(&v);
    }
    ks_ctx_reset(&ctx);
    return have;
}

/* ---- The link ------------------------------------------------------------- */

static void link_close(const char *why)
{
    if (L.fd >= 0) {
        ae_delete_file_event(server.el, L.fd, AE_READABLE);
        close(L.fd);
        server_log(LL_NOTICE, "Connection with primary lost: %s", why);
    }
    L.fd = -1;
    L.len = L.pos = 0;
    if (L.parser_init) resp_parser_free(&L.parser);
    L.parser_init = 0;
    if (L.b) eng_batch_clear(L.b);
    if (L.state == LINK_SNAPSHOT) L.need_full = 1; /* the data is no history's */
    if (L.state != LINK_NONE) {
        L.state = LINK_CONNECT;
        if (!L.down_since_ms) L.down_since_ms = ae_mstime();
        L.next_try_ms = ae_mstime() + 1000;
    }
    /* Sub-replicas follow this server's stream: they resync later. */
    repl_disconnect_replicas();
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void send_ack(void)
{
    char cmd[96];
    char off[32];
    int ol = snprintf(off, sizeof(off), "%lld", repl.offset);
    int n =
        snprintf(cmd, sizeof(cmd), "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$%d\r\n%s\r\n", ol, off);
    if (send_all(L.fd, cmd, (size_t)n) < 0) return link_close("can't send ACK");
    L.acked = repl.offset;
    L.last_ack_ms = ae_mstime();
}

/* Re-encodes a parsed frame canonically (the parser wrote NULs over the
 * buffer); the primary writes every frame in this form, so these are the
 * bytes it counted. */
static void feed_parsed(int argc, const arg *argv)
{
    const char *v[8];
    size_t len[8];
    if (argc > 8) argc = 8; /* the primary's frames have at most 3 */
    for (int i = 0; i < argc; i++) {
        v[i] = argv[i].ptr;
        len[i] = argv[i].len;
    }
    repl_feed_frame(v, len, argc);
}

static long long frame_len(int argc, const arg *argv)
{
    char hdr[64];
    long long n = snprintf(hdr, sizeof(hdr), "*%d\r\n", argc);
    for (int i = 0; i < argc; i++)
        n += snprintf(hdr, sizeof(hdr), "$%zu\r\n", argv[i].len) + (long long)argv[i].len + 2;
    return n;
}

/* Applies one frame. Returns 0, or -1 when the link must close. */
static int apply_frame(int argc, const arg *argv)
{
    if (argc > 8) return -1; /* no frame of the primary's has that many */
    const arg *a0 = &argv[0];
    ks_ctx ctx = link_ctx();
    int rc = 0;
    if (arg_is(a0, "strata.snapbegin")) {
        static const char hi[16] = {'\xff', '\xff', '\xff', '\xff', '\xff', '\xff', '\xff', '\xff',
                                    '\xff', '\xff', '\xff', '\xff', '\xff', '\xff', '\xff', '\xff'};
        eng_batch_delete_range(L.b, "", 0, hi, sizeof(hi));
        ks_sysrec_put(&ctx, SYSREC_REPL, "syncing", 7, "1", 1);
        rc = link_write();
        L.snap_bytes = 0;
    } else if (arg_is(a0, "strata.snap") && argc == 2) {
        if (eng_batch_append_data(L.b, argv[1].ptr, argv[1].len) != ENG_OK) rc = -1;
        if (!rc) rc = link_write();
        L.snap_bytes += (long long)argv[1].len;
    } else if (arg_is(a0, "strata.snapend")) {
        ks_sysrec_delete(&ctx, SYSREC_REPL, "syncing", 7);
        put_state(&ctx, repl.offset);
        rc = link_write();
        if (!rc) {
            server_commit();
            server_reload_layers();
            L.state = LINK_ONLINE;
            L.need_full = 0;
            L.down_since_ms = 0;
            server_log(LL_NOTICE, "MASTER <-> REPLICA sync: Finished with success (%lld bytes)",
                       L.snap_bytes);
        }
    } else if (L.state != LINK_ONLINE) {
        rc = -1; /* a stream frame before the snapshot ended */
    } else if (arg_is(a0, "strata.batch") && argc == 2) {
        long long after = repl.offset + frame_len(argc, argv);
        if (eng_batch_append_data(L.b, argv[1].ptr, argv[1].len) != ENG_OK) rc = -1;
        /* The index catalog ('x' 'C', 'x' 'A'), the function libraries
         * ('S' 'F') or the database map ('S' 'D') may have changed: what
         * the layers and the server cache is reloaded. */
        const char *d = argv[1].ptr;
        size_t dl = argv[1].len;
        int reload = !rc && (memmem(d, dl, "xC", 2) || memmem(d, dl, "xA", 2) ||
                             memmem(d, dl, "SF", 2) || memmem(d, dl, "SD", 2));
        if (!rc) put_state(&ctx, after);
        if (!rc) rc = link_write();
        if (!rc) feed_parsed(argc, argv);
        if (!rc && reload) server_reload_layers();
    } else {
        int getack = arg_is(a0, "replconf") && argc >= 2 && arg_is(&argv[1], "getack");
        feed_parsed(argc, argv); /* PING, GETACK: they count in the offset */
        if (getack) send_ack();
    }
    ks_ctx_reset(&ctx);
    return rc;
}

static void read_handler(ae_loop *el, int fd, void *data, int mask)
{
    (void)el, (void)data, (void)mask;
    if (L.cap - L.len < 65536) {
        size_t need = resp_parser_bulk_need(&L.parser);
        L.cap = L.cap * 2 + 65536 + need;
        L.buf = realloc(L.buf, L.cap);
        if (!L.buf) abort();
    }
    ssize_t n = read(fd, L.buf + L.len, L.cap - L.len);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) return link_close(n == 0 ? "the primary closed the connection" : strerror(errno));
    L.len += (size_t)n;
    L.last_io_ms = ae_mstime();
    for (;;) {
        int r = resp_parse(&L.parser, L.buf, L.len, &L.pos);
        if (r == RESP_AGAIN) break;
        if (r == RESP_ERR) return link_close(L.parser.err);
        if (apply_frame(L.parser.argc, L.parser.argv) < 0) {
            server_log(LL_WARNING, "Replica: can't apply a %s frame: %s", L.parser.argv[0].ptr,
                       eng_last_error());
            return link_close("a frame of the stream could not be applied");
        }
        if (L.fd < 0) return;
    }
    size_t keep = resp_parser_keep_from(&L.parser, L.pos);
    memmove(L.buf, L.buf + keep, L.len - keep);
    L.len -= keep;
    L.pos -= keep;
    resp_parser_rebase(&L.parser, keep);
    if (L.state == LINK_ONLINE && repl.offset != L.acked) send_ack();
}

/* ---- Handshake --------------------------------------------------------------- */

/* Reads one line (without \r\n) into buf, a byte at a time so that stream
 * bytes after it stay in the socket. */
static int read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        char ch;
        ssize_t k = read(fd, &ch, 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        if (ch == '\n') break;
        if (n + 1 < cap) buf[n++] = ch;
    }
    if (n && buf[n - 1] == '\r') n--;
    buf[n] = '\0';
    return 0;
}

static int sync_cmd(int fd, char *reply, size_t cap, int argc, const char **argv)
{
    char out[1024];
    int n = snprintf(out, sizeof(out), "*%d\r\n", argc);
    for (int i = 0; i < argc && n < (int)sizeof(out); i++)
        n += snprintf(out + n, sizeof(out) - (size_t)n, "$%zu\r\n%s\r\n", strlen(argv[i]), argv[i]);
    if (n >= (int)sizeof(out) || send_all(fd, out, (size_t)n) < 0) return -1;
    return read_line(fd, reply, cap);
}

static int connect_to(const char *host, int port)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0 || !res) return -1;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) goto fail;
    fcntl(fd, F_SETFL, O_NONBLOCK);
    if (connect(fd, res->ai_addr, res->ai_addrlen) < 0 && errno != EINPROGRESS) goto fail;
    struct pollfd pf = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t el = sizeof(err);
    if (poll(&pf, 1, 1000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err)
        goto fail;
    fcntl(fd, F_SETFL, 0);
    struct timeval tv = {5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    freeaddrinfo(res);
    return fd;
fail:
    if (fd >= 0) close(fd);
    freeaddrinfo(res);
    return -1;
}

/* Connects and runs the handshake up to PSYNC's answer. */
static void link_connect(void)
{
    char line[256];
    L.next_try_ms = ae_mstime() + 1000;
    int fd = connect_to(repl.master_host, repl.master_port);
    if (fd < 0) return;
    if (cfg.masterauth && cfg.masterauth[0]) {
        const char *a[3] = {"AUTH", cfg.masteruser && cfg.masteruser[0] ? cfg.masteruser : NULL,
                            cfg.masterauth};
        int k = a[1] ? 3 : 2;
        if (!a[1]) a[1] = cfg.masterauth;
        if (sync_cmd(fd, line, sizeof(line), k, a) < 0 || line[0] != '+') goto fail;
    }
    const char *ping[1] = {"PING"};
    if (sync_cmd(fd, line, sizeof(line), 1, ping) < 0 || line[0] == '-') goto fail;
    char port[16];
    snprintf(port, sizeof(port), "%d",
             cfg.replica_announce_port ? cfg.replica_announce_port : cfg.port);
    const char *lp[3] = {"REPLCONF", "listening-port", port};
    if (sync_cmd(fd, line, sizeof(line), 3, lp) < 0) goto fail;
    if (cfg.replica_announce_ip && cfg.replica_announce_ip[0]) {
        const char *ip[3] = {"REPLCONF", "ip-address", cfg.replica_announce_ip};
        if (sync_cmd(fd, line, sizeof(line), 3, ip) < 0) goto fail;
    }
    const char *capa[5] = {"REPLCONF", "capa", "eof", "capa", "psync2"};
    if (sync_cmd(fd, line, sizeof(line), 5, capa) < 0) goto fail;
    char off[32];
    snprintf(off, sizeof(off), "%lld", repl.offset + 1);
    int fresh = L.need_full || repl.offset == 0;
    const char *ps[3] = {"PSYNC", fresh ? "?" : repl.replid, fresh ? "-1" : off};
    if (sync_cmd(fd, line, sizeof(line), 3, ps) < 0) goto fail;
    if (!strncmp(line, "+FULLRESYNC ", 12)) {
        char id[41];
        long long o;
        if (sscanf(line + 12, "%40s %lld", id, &o) != 2) goto fail;
        memcpy(repl.replid, id, 41);
        memset(repl.replid2, '0', 40);
        repl.second_offset = -1;
        repl_backlog_reset(o);
        L.state = LINK_SNAPSHOT;
        server_log(LL_NOTICE, "Full resync from primary: %s:%lld", id, o);
    } else if (!strncmp(line, "+CONTINUE", 9)) {
        char id[41];
        if (sscanf(line + 9, " %40s", id) == 1 && strlen(id) == 40 && strcmp(id, repl.replid)) {
            repl_shift_replid(); /* the primary's history changed name (a promotion) */
            memcpy(repl.replid, id, 41);
        }
        L.state = LINK_ONLINE;
        L.down_since_ms = 0;
        server_log(LL_NOTICE, "Successful partial resynchronization with primary.");
    } else {
        server_log(LL_WARNING, "Primary refused PSYNC: %s", line);
        goto fail;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    L.fd = fd;
    resp_parser_init(&L.parser);
    L.parser.max_bulk_len = 1LL << 40;
    L.parser_init = 1;
    L.last_io_ms = ae_mstime();
    if (ae_create_file_event(server.el, fd, AE_READABLE, read_handler, NULL) != AE_OK)
        link_close("can't watch the socket");
    else if (L.state == LINK_ONLINE)
        send_ack();
    return;
fail:
    close(fd);
}

static char conf_host[256];
static int conf_port;

void repl_config_master(const char *host, int port)
{
    snprintf(conf_host, sizeof(conf_host), "%s", host ? host : "");
    conf_port = host ? port : 0;
}

void repl_start_configured(void)
{
    if (conf_port) repl_set_master(conf_host, conf_port);
}

void repl_set_master(const char *host, int port)
{
    if (L.state != LINK_NONE) {
        link_close("REPLICAOF");
        L.state = LINK_NONE;
    }
    if (!host) { /* REPLICAOF NO ONE */
        if (repl.is_replica) {
            repl.is_replica = 0;
            repl_shift_replid();
            /* The stored state names the old history: a restart must not
             * claim it (its data moves on under the new replid). */
            ks_ctx ctx = link_ctx();
            ks_sysrec_delete(&ctx, SYSREC_REPL, "state", 5);
            ks_sysrec_delete(&ctx, SYSREC_REPL, "syncing", 7);
            link_write();
            ks_ctx_reset(&ctx);
            server_commit();
            server_reload_layers();
            server_log(LL_NOTICE, "MASTER MODE enabled");
        }
        return;
    }
    if (!repl.is_replica) repl_disconnect_replicas();
    repl.is_replica = 1;
    snprintf(repl.master_host, sizeof(repl.master_host), "%s", host);
    repl.master_port = port;
    L.state = LINK_CONNECT;
    L.down_since_ms = ae_mstime();
    L.next_try_ms = 0;
    server_log(LL_NOTICE, "REPLICAOF %s:%d enabled", host, port);
}

void repl_replica_cron(void)
{
    if (!repl.is_replica) return;
    int64_t now = ae_mstime();
    if (L.state == LINK_CONNECT && now >= L.next_try_ms) link_connect();
    if (L.fd >= 0 && now - L.last_io_ms > (int64_t)cfg.repl_timeout * 1000)
        link_close("timeout: nothing from the primary");
    if (L.state == LINK_ONLINE && now - L.last_ack_ms >= 1000) send_ack();
}

void repl_replica_info(sbuf *b)
{
    int64_t now = ae_mstime();
    sb_printf(b,
              "role:slave\r\nmaster_host:%s\r\nmaster_port:%d\r\nmaster_link_status:%s\r\n"
              "master_last_io_seconds_ago:%lld\r\nmaster_sync_in_progress:%d\r\n"
              "slave_read_repl_offset:%lld\r\nslave_repl_offset:%lld\r\n",
              repl.master_host, repl.master_port, L.state == LINK_ONLINE ? "up" : "down",
              L.fd >= 0 ? (long long)(now - L.last_io_ms) / 1000 : -1, L.state == LINK_SNAPSHOT,
              repl.offset, repl.offset);
    if (L.state == LINK_SNAPSHOT) sb_printf(b, "master_sync_read_bytes:%lld\r\n", L.snap_bytes);
    if (L.state != LINK_ONLINE)
        sb_printf(b, "master_link_down_since_seconds:%lld\r\n",
                  L.down_since_ms ? (long long)(now - L.down_since_ms) / 1000 : -1);
    sb_printf(b, "slave_priority:%d\r\nslave_read_only:%d\r\nreplica_announced:1\r\n",
              cfg.replica_priority, cfg.replica_read_only);
}

void repl_shutdown(void)
{
    repl_backup_wait();
    if (L.fd >= 0) close(L.fd);
    L.fd = -1;
    if (L.parser_init) resp_parser_free(&L.parser);
    L.parser_init = 0;
    free(L.buf);
    L.buf = NULL;
    L.cap = L.len = L.pos = 0;
    if (L.b) eng_batch_free(L.b);
    L.b = NULL;
    repl_backlog_free();
}
