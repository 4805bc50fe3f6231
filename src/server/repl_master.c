/*
 * repl_master.c -- the primary's side of replication (REPLICATION.md):
 * the stream of encoded write batches, the backlog ring that partial
 * resyncs are served from, the replicas (snapshot transfer, acks), WAIT,
 * the write checks (READONLY, NOREPLICAS) and INFO replication.
 *
 * Nothing here touches the disk: the snapshot is read through engine.h
 * and sent; the replica writes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/ae.h"
#include "server/config.h"
#include "server/repl.h"
#include "server/reply.h"

repl_state repl;

/* The backlog: the last backlog_size stream bytes, a ring. The byte at
 * offset o (1-based, as Redis's offsets) is at ring[(o - 1) % size]. */
static char *ring;
static long long ring_size, histlen;
static char *touched; /* repl_note_touched */
static size_t touched_len, touched_cap;

enum { REP_HANDSHAKE = -1, REP_SNAPSHOT = 0, REP_ONLINE = 1 };

typedef struct replica {
    client *c;
    int state;
    int port;                 /* REPLCONF listening-port */
    char ip[64];              /* REPLCONF ip-address, else the peer's */
    long long ack;            /* REPLCONF ACK offset */
    int64_t ack_ms;           /* when it last acked */
    const eng_snapshot *snap; /* REP_SNAPSHOT: what is being sent */
    eng_iter *it;
    long long snap_offset; /* the stream offset the snapshot is at */
} replica;

static replica *reps;
static int nreps, caps;
/* INFO stats: full syncs served, partial resyncs accepted, and partial
 * resyncs asked for (a replid given) that had to become full ones. */
static long long stat_sync_full, stat_sync_partial_ok, stat_sync_partial_err;

typedef struct waiter {
    client *c;
    long long target;
    long long num;
} waiter;
static waiter *waiters;
static int nwaiters, capw;
static int getack_pending; /* a WAIT asked: send GETACK before sleeping */

static void random_id(char *out)
{
    static uint64_t r;
    r ^= (uint64_t)ae_mstime() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uintptr_t)&r;
    for (int i = 0; i < 40; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        out[i] = "0123456789abcdef"[(r >> 59) & 15];
    }
    out[40] = '\0';
}

/* ---- Backlog ------------------------------------------------------------- */

static long long first_byte(void)
{
    return repl.offset - histlen + 1;
}

static void backlog_append(const char *p, size_t n);

void repl_backlog_reset(long long offset)
{
    backlog_append("", 0); /* a replica keeps the stream it reads: allocate it */
    repl.offset = offset;
    histlen = 0;
}

void repl_backlog_free(void)
{
    free(touched);
    touched = NULL;
    touched_len = touched_cap = 0;
    free(ring);
    ring = NULL;
    ring_size = histlen = 0;
    free(reps);
    reps = NULL;
    nreps = caps = 0;
    free(waiters);
    waiters = NULL;
    nwaiters = capw = 0;
}

static void backlog_append(const char *p, size_t n)
{
    long long size = cfg.repl_backlog_size > 0 ? cfg.repl_backlog_size : 1048576;
    if (size != ring_size) { /* CONFIG SET repl-backlog-size: start afresh */
        free(ring);
        ring = malloc((size_t)size);
        if (!ring) abort();
        ring_size = size;
        histlen = 0;
    }
    while (n) {
        long long pos = repl.offset % ring_size; /* where byte offset+1 goes */
        size_t k = (size_t)(ring_size - pos) < n ? (size_t)(ring_size - pos) : n;
        memcpy(ring + pos, p, k);
        p += k;
        n -= k;
        repl.offset += (long long)k;
        histlen += (long long)k;
        if (histlen > ring_size) histlen = ring_size;
    }
}

/* Sends the backlog from offset `from` on to c. REQUIRES: from is in
 * [first_byte, offset + 1]. */
static void backlog_send(client *c, long long from)
{
    while (from <= repl.offset) {
        long long pos = (from - 1) % ring_size;
        long long k = ring_size - pos;
        if (k > repl.offset - from + 1) k = repl.offset - from + 1;
        reply_append(c, ring + pos, (size_t)k);
        from += k;
    }
    client_after_push(c);
}

void repl_feed_bytes(const char *p, size_t n, int backlog_only)
{
    backlog_append(p, n);
    if (backlog_only) return;
    for (int i = 0; i < nreps; i++)
        if (reps[i].state == REP_ONLINE) {
            reply_append(reps[i].c, p, n);
            client_after_push(reps[i].c);
        }
}

/* One frame "*argc $len arg ..." of the stream, built from pieces. */
void repl_feed_frame(const char *const *argv, const size_t *len, int argc)
{
    char hdr[24]; /* '*' or '$', 20 digits, CRLF */
    size_t h = 1 + reply_fmt_ull(hdr + 1, (unsigned long long)argc);
    hdr[0] = '*';
    memcpy(hdr + h, "\r\n", 2);
    repl_feed_bytes(hdr, h + 2, 0); /* every write pays this: no snprintf */
    for (int i = 0; i < argc; i++) {
        h = 1 + reply_fmt_ull(hdr + 1, (unsigned long long)len[i]);
        hdr[0] = '$';
        memcpy(hdr + h, "\r\n", 2);
        repl_feed_bytes(hdr, h + 2, 0);
        repl_feed_bytes(argv[i], len[i], 0);
        repl_feed_bytes("\r\n", 2, 0);
    }
}

/* The keys the writes since the last fed batch changed (the keyspace's
 * touch hook), the third part of a STRATA.BATCH frame: per key
 * varint db, varint len+1 (0: the whole db was flushed, no key), key.
 * A replica touches them (WATCH, blocked XREADs) once it applied the
 * batch. */
static void touched_put(const void *p, size_t n)
{
    if (touched_len + n > touched_cap) {
        touched_cap = (touched_len + n) * 2 + 256;
        touched = realloc(touched, touched_cap);
        if (!touched) abort();
    }
    memcpy(touched + touched_len, p, n);
    touched_len += n;
}

static void put_varint(uint64_t v)
{
    unsigned char b[10];
    size_t n = 0;
    while (v >= 0x80) {
        b[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    b[n++] = (unsigned char)v;
    touched_put(b, n);
}

/* Whether the primary has a stream to keep: a backlog or a replica. Until
 * its first replica connects there is neither (as Redis creates its
 * backlog then), and a write builds no frame: the offset moves on by the
 * frame's length, so the offsets a replica of this history may hold stay
 * distinct, but no byte is copied (repl_backlog_active:0, histlen 0). */
static int stream_wanted(void)
{
    return ring_size || nreps;
}

static long long digits(unsigned long long v)
{
    long long n = 1;
    while (v >= 10)
        v /= 10, n++;
    return n;
}

/* The length of the frame repl_feed_frame would build. */
static long long frame_length(const size_t *len, int argc)
{
    long long n = 1 + digits((unsigned long long)argc) + 2;
    for (int i = 0; i < argc; i++)
        n += 1 + digits(len[i]) + 2 + (long long)len[i] + 2;
    return n;
}

void repl_note_touched(int db, const char *key, size_t len)
{
    if (repl.is_replica || !stream_wanted()) return; /* R1: a replica's stream is its primary's */
    put_varint((uint64_t)db);
    put_varint(key ? (uint64_t)len + 1 : 0);
    if (key) touched_put(key, len);
}

void repl_feed_batch(eng_batch *b)
{
    if (repl.is_replica) return; /* R1: a replica's stream is its primary's */
    size_t n;
    const char *data = eng_batch_data(b, &n);
    const char *argv[3] = {"STRATA.BATCH", data, touched};
    size_t len[3] = {12, n, touched_len};
    if (!stream_wanted()) {
        repl.offset += frame_length(len, touched_len ? 3 : 2);
        touched_len = 0;
        return;
    }
    repl_feed_frame(argv, len, touched_len ? 3 : 2);
    touched_len = 0;
}

void repl_propagate(const client *c)
{
    if (repl.is_replica) return;
    const char *argv[8];
    size_t len[8];
    int argc = c->argc < 8 ? c->argc : 8;
    for (int i = 0; i < argc; i++) {
        argv[i] = c->argv[i].ptr;
        len[i] = c->argv[i].len;
    }
    if (!stream_wanted())
        repl.offset += frame_length(len, argc);
    else
        repl_feed_frame(argv, len, argc);
}

static void send_getack(void)
{
    const char *argv[3] = {"REPLCONF", "GETACK", "*"};
    size_t len[3] = {8, 6, 1};
    repl_feed_frame(argv, len, 3);
}

void repl_shift_replid(void)
{
    memcpy(repl.replid2, repl.replid, 41);
    repl.second_offset = repl.offset + 1;
    random_id(repl.replid);
}

/* ---- Replicas ------------------------------------------------------------ */

static replica *find(const client *c)
{
    for (int i = 0; i < nreps; i++)
        if (reps[i].c == c) return &reps[i];
    return NULL;
}

static replica *find_or_add(client *c)
{
    replica *r = find(c);
    if (r) return r;
    if (nreps == caps) {
        caps = caps ? caps * 2 : 4;
        reps = realloc(reps, (size_t)caps * sizeof(*reps));
        if (!reps) abort();
    }
    r = &reps[nreps++];
    memset(r, 0, sizeof(*r));
    r->c = c;
    r->state = REP_HANDSHAKE;
    /* The peer's address without the port, as Redis's slave ip. */
    snprintf(r->ip, sizeof(r->ip), "%s", c->addr);
    char *colon = strrchr(r->ip, ':');
    if (colon) *colon = '\0';
    return r;
}

static void snapshot_release(replica *r)
{
    if (r->it) eng_iter_free(r->it);
    if (r->snap) eng_snapshot_release(server.db, r->snap);
    r->it = NULL;
    r->snap = NULL;
}

int repl_client_is_replica(const client *c)
{
    const replica *r = find(c);
    return r && r->state != REP_HANDSHAKE;
}

void repl_client_free(client *c)
{
    for (int i = 0; i < nwaiters; i++)
        if (waiters[i].c == c) waiters[i--] = waiters[--nwaiters];
    replica *r = find(c);
    if (!r) return;
    if (r->state != REP_HANDSHAKE)
        server_log(LL_NOTICE, "Connection with replica %s:%d lost.", r->ip, r->port);
    snapshot_release(r);
    *r = reps[--nreps];
}

int repl_replica_find(const char *host, int port, int *online, long long *ack)
{
    for (int i = 0; i < nreps; i++)
        if (reps[i].state != REP_HANDSHAKE && reps[i].port == port &&
            !strcasecmp(reps[i].ip, host)) {
            *online = reps[i].state == REP_ONLINE;
            *ack = reps[i].ack;
            return 1;
        }
    return 0;
}

int repl_replica_caught_up(char *host, size_t cap, int *port)
{
    for (int i = 0; i < nreps; i++)
        if (reps[i].state == REP_ONLINE && reps[i].ack == repl.offset) {
            snprintf(host, cap, "%s", reps[i].ip);
            *port = reps[i].port;
            return 1;
        }
    return 0;
}

void repl_disconnect_replicas(void)
{
    for (int i = 0; i < nreps; i++)
        if (reps[i].state != REP_HANDSHAKE) client_free_async(reps[i].c);
}

/* REPLCONF <option> <value> ... */
void repl_replconf(client *c)
{
    if (c->argc % 2 == 0) return add_reply_error(c, ERR_SYNTAX);
    for (int i = 1; i < c->argc; i += 2) {
        const arg *o = &c->argv[i], *v = &c->argv[i + 1];
        if (arg_is(o, "ack")) {
            replica *r = find(c);
            long long off = strtoll(v->ptr, NULL, 10);
            if (r && r->state == REP_ONLINE) {
                if (off > r->ack) r->ack = off;
                r->ack_ms = ae_mstime();
            }
            return; /* no reply, as Redis */
        } else if (arg_is(o, "getack")) {
            return; /* only a primary's link sends it */
        } else if (arg_is(o, "listening-port")) {
            long long p;
            if (arg_to_ll(c, v, &p) < 0) return;
            find_or_add(c)->port = (int)p;
        } else if (arg_is(o, "ip-address")) {
            snprintf(find_or_add(c)->ip, sizeof(find_or_add(c)->ip), "%s", v->ptr);
        } else if (!arg_is(o, "capa") && !arg_is(o, "rdb-only") && !arg_is(o, "rdb-filter-only")) {
            return add_reply_error_fmt(c, "Unrecognized REPLCONF option: %s", o->ptr);
        }
    }
    add_reply_ok(c);
}

static void raw_line(client *c, const char *fmt, const char *a, long long n)
{
    char line[128];
    int k = snprintf(line, sizeof(line), fmt, a, n);
    reply_append(c, line, (size_t)k);
}

/* PSYNC <replid> <offset> (SYNC: "?" -1). */
void repl_psync(client *c, const char *id, long long want)
{
    if (repl_failover_busy()) {
        add_reply_error(c, "NOMASTERLINK Can't SYNC while failing over");
        return;
    }
    if (repl.is_replica && !repl_link_up()) {
        add_reply_error(c, "NOMASTERLINK Can't SYNC while not connected with my master");
        return;
    }
    replica *r = find_or_add(c);
    if (r->state != REP_HANDSHAKE) return; /* already one */
    client_set_class(c, CLIENT_CLASS_REPLICA);
    r->ack_ms = ae_mstime();
    int known = !strcasecmp(id, repl.replid) ||
                (!strcasecmp(id, repl.replid2) && want <= repl.second_offset);
    if (known && ring_size && want >= first_byte() && want <= repl.offset + 1) {
        stat_sync_partial_ok++;
        raw_line(c, "+CONTINUE %s\r\n", repl.replid, 0);
        backlog_send(c, want);
        r->state = REP_ONLINE;
        r->ack = want - 1;
        server_log(LL_NOTICE,
                   "Partial resynchronization request from %s accepted. Sending %lld bytes of "
                   "backlog starting from offset %lld.",
                   c->addr, repl.offset - want + 1, want);
        return;
    }
    stat_sync_full++;
    if (strcmp(id, "?")) stat_sync_partial_err++;
    if (!ring_size) backlog_append("", 0); /* allocate it */
    raw_line(c, "+FULLRESYNC %s %lld\r\n", repl.replid, repl.offset);
    static const char begin[] = "*1\r\n$16\r\nSTRATA.SNAPBEGIN\r\n";
    reply_append(c, begin, sizeof(begin) - 1);
    client_after_push(c);
    r->state = REP_SNAPSHOT;
    r->snap_offset = repl.offset;
    r->ack = 0;
    r->snap = eng_snapshot_new(server.db); /* the state after snap_offset stream bytes */
    r->it = eng_iter_new(server.db, r->snap, NULL);
    eng_iter_seek_first(r->it);
    server_log(LL_NOTICE, "Full resync requested by replica %s: sending a snapshot at offset %lld",
               c->addr, r->snap_offset);
}

/* Sends the next part of r's snapshot; at its end the backlog since it. */
static void snapshot_step(replica *r)
{
    size_t budget = 1 << 20;
    eng_batch *b = eng_batch_new(0);
    while (eng_iter_valid(r->it) && budget && r->c->priv->reply_bytes < (8u << 20)) {
        size_t kl, vl;
        const char *k = eng_iter_key(r->it, &kl), *v = eng_iter_value(r->it, &vl);
        eng_batch_put(b, k, kl, v, vl);
        eng_iter_next(r->it);
        size_t sz = eng_batch_byte_size(b);
        if (sz >= 256 * 1024 || !eng_iter_valid(r->it)) {
            size_t n;
            const char *d = eng_batch_data(b, &n);
            char hdr[64];
            int h = snprintf(hdr, sizeof(hdr), "*2\r\n$11\r\nSTRATA.SNAP\r\n$%zu\r\n", n);
            reply_append(r->c, hdr, (size_t)h);
            reply_append(r->c, d, n);
            reply_append(r->c, "\r\n", 2);
            budget = sz >= budget ? 0 : budget - sz;
            eng_batch_clear(b);
        }
    }
    eng_batch_free(b);
    client_after_push(r->c);
    if (eng_iter_valid(r->it)) return;
    if (eng_iter_status(r->it) != ENG_OK || r->snap_offset + 1 < first_byte()) {
        server_log(LL_WARNING, "Full resync of replica %s failed: %s", r->c->addr,
                   eng_iter_status(r->it) != ENG_OK ? eng_last_error()
                                                    : "the backlog no longer holds the stream "
                                                      "since the snapshot");
        client_free_async(r->c);
        snapshot_release(r);
        return;
    }
    snapshot_release(r);
    static const char end[] = "*1\r\n$14\r\nSTRATA.SNAPEND\r\n";
    reply_append(r->c, end, sizeof(end) - 1);
    backlog_send(r->c, r->snap_offset + 1);
    r->state = REP_ONLINE;
    r->ack = r->snap_offset;
    r->ack_ms = ae_mstime();
    server_log(LL_NOTICE, "Synchronization with replica %s succeeded", r->c->addr);
}

/* ---- WAIT ----------------------------------------------------------------- */

static long long acked(long long target)
{
    long long n = 0;
    for (int i = 0; i < nreps; i++)
        if (reps[i].state == REP_ONLINE && reps[i].ack >= target) n++;
    return n;
}

static void wait_done(client *c)
{
    for (int i = 0; i < nwaiters; i++)
        if (waiters[i].c == c) {
            add_reply_long_long(c, acked(waiters[i].target));
            waiters[i] = waiters[--nwaiters];
            return;
        }
    add_reply_long_long(c, 0);
}

void repl_wait(client *c, long long num, int64_t deadline)
{
    if (repl.is_replica) {
        add_reply_error(c, "WAIT cannot be used with replica instances. Please also note that "
                           "since Redis 4.0 if a replica is configured to be writable (which is "
                           "not the default) writes to replicas are just local and are not "
                           "propagated.");
        return;
    }
    long long target = repl.offset, have = acked(target);
    if (have >= num || (c->flags & CLIENT_IN_EXEC)) return add_reply_long_long(c, have);
    if (nwaiters == capw) {
        capw = capw ? capw * 2 : 8;
        waiters = realloc(waiters, (size_t)capw * sizeof(*waiters));
        if (!waiters) abort();
    }
    waiters[nwaiters++] = (waiter){c, target, num};
    getack_pending = 1;
    pause_wait_until(c, deadline, wait_done);
}

static void wake_waiters(void)
{
    for (int i = 0; i < nwaiters;) {
        if (acked(waiters[i].target) >= waiters[i].num) {
            client *c = waiters[i].c;
            pause_wait_end(c); /* calls wait_done, which removes it */
            continue;
        }
        i++;
    }
}

/* ---- Checks, cron ----------------------------------------------------------- */

static int good_replicas(void)
{
    int n = 0;
    int64_t now = ae_mstime();
    for (int i = 0; i < nreps; i++)
        if (reps[i].state == REP_ONLINE &&
            now - reps[i].ack_ms <= (int64_t)cfg.min_replicas_max_lag * 1000)
            n++;
    return n;
}

const char *repl_write_refusal(client *c, const struct command *cmd)
{
    int writes = (cmd->flags & CMD_WRITE) != 0;
    if (!writes && cmd->proc == cmd_exec && (c->flags & CLIENT_MULTI))
        for (int i = 0; i < c->priv->mq_len && !writes; i++)
            writes = (c->priv->mq[i].cmd->flags & CMD_WRITE) != 0;
    return writes ? repl_any_write_refusal() : NULL;
}

const char *repl_any_write_refusal(void)
{
    if (repl.is_replica)
        return cfg.replica_read_only ? "READONLY You can't write against a read only replica."
                                     : NULL;
    if (cfg.min_replicas_to_write > 0 && good_replicas() < cfg.min_replicas_to_write)
        return "NOREPLICAS Not enough good replicas to write.";
    return NULL;
}

int repl_refuses_stale(const client *c, const struct command *cmd)
{
    if (!repl.is_replica || cfg.replica_serve_stale_data || repl_link_up()) return 0;
    int bad, deny = !(command_resolve(cmd, c->argc, c->argv, &bad)->flags & CMD_STALE);
    if (cmd->proc == cmd_exec && (c->flags & CLIENT_MULTI))
        for (int i = 0; i < c->priv->mq_len && !deny; i++) {
            const queued_cmd *q = &c->priv->mq[i];
            deny = !(command_resolve(q->cmd, q->argc, q->argv, &bad)->flags & CMD_STALE);
        }
    return deny;
}

int repl_drop_local_writes(void)
{
    return repl.is_replica;
}

void repl_before_sleep(void)
{
    for (int i = 0; i < nreps; i++)
        if (reps[i].state == REP_SNAPSHOT && !reps[i].c->priv->close_asap) snapshot_step(&reps[i]);
    /* No GETACK while writes are paused: it would move the offset a
     * FAILOVER waits for (the replicas ack once a second anyway). */
    if (getack_pending && !pause_active()) {
        getack_pending = 0;
        if (!repl.is_replica) send_getack();
    }
    if (nwaiters) wake_waiters();
    repl_failover_cron();
}

void repl_cron(void)
{
    static int64_t last_ping;
    int64_t now = ae_mstime();
    if (!repl.is_replica && nreps && !pause_active() &&
        now - last_ping >= (int64_t)cfg.repl_ping_period * 1000) {
        last_ping = now;
        const char *argv[1] = {"PING"};
        size_t len[1] = {4};
        repl_feed_frame(argv, len, 1);
    }
    for (int i = 0; i < nreps; i++)
        if (reps[i].state == REP_ONLINE &&
            now - reps[i].ack_ms > (int64_t)cfg.repl_timeout * 1000) {
            server_log(LL_WARNING, "Disconnecting timedout replica: %s", reps[i].c->addr);
            client_free_async(reps[i].c);
        }
    repl_replica_cron();
}

void repl_init(void)
{
    random_id(repl.replid);
    memset(repl.replid2, '0', 40);
    repl.replid2[40] = '\0';
    repl.second_offset = -1;
    repl.offset = 0;
    if (repl_replica_load_state())
        server_log(LL_NOTICE, "Replication state: replid %s, offset %lld", repl.replid,
                   repl.offset);
    repl_start_configured();
}

/* ---- INFO replication, ROLE --------------------------------------------------- */

int repl_replica_count(void)
{
    int n = 0;
    for (int i = 0; i < nreps; i++)
        n += reps[i].state != REP_HANDSHAKE;
    return n;
}

void repl_info(sbuf *b)
{
    sb_section(b, "Replication");
    int64_t now = ae_mstime();
    if (repl.is_replica)
        repl_replica_info(b);
    else
        sb_printf(b, "role:master\r\n");
    sb_printf(b, "connected_slaves:%d\r\n", repl_replica_count());
    for (int i = 0, k = 0; i < nreps; i++) {
        const replica *r = &reps[i];
        if (r->state == REP_HANDSHAKE) continue;
        sb_printf(b, "slave%d:ip=%s,port=%d,state=%s,offset=%lld,lag=%lld\r\n", k++, r->ip, r->port,
                  r->state == REP_ONLINE ? "online" : "send_bulk", r->ack,
                  (long long)(now - r->ack_ms) / 1000);
    }
    if (!repl.is_replica && cfg.min_replicas_to_write)
        sb_printf(b, "min_slaves_good_slaves:%d\r\n", good_replicas());
    sb_printf(b,
              "master_failover_state:%s\r\nmaster_replid:%s\r\nmaster_replid2:%s\r\n"
              "master_repl_offset:%lld\r\nsecond_repl_offset:%lld\r\nrepl_backlog_active:%d\r\n"
              "repl_backlog_size:%lld\r\nrepl_backlog_first_byte_offset:%lld\r\n"
              "repl_backlog_histlen:%lld\r\n",
              repl_failover_state(), repl.replid, repl.replid2, repl.offset, repl.second_offset,
              ring_size ? 1 : 0, cfg.repl_backlog_size, first_byte(), histlen);
}

void repl_info_stats(sbuf *b)
{
    sb_printf(b, "sync_full:%lld\r\nsync_partial_ok:%lld\r\nsync_partial_err:%lld\r\n",
              stat_sync_full, stat_sync_partial_ok, stat_sync_partial_err);
}

void repl_reset_stats(void)
{
    stat_sync_full = stat_sync_partial_ok = stat_sync_partial_err = 0;
}

/* ROLE */
void repl_role(client *c)
{
    if (repl.is_replica) {
        add_reply_array_len(c, 5);
        add_reply_bulk_cstr(c, "slave");
        add_reply_bulk_cstr(c, repl.master_host);
        add_reply_long_long(c, repl.master_port);
        add_reply_bulk_cstr(c, repl_link_up() ? "connected" : "connect");
        add_reply_long_long(c, repl_link_up() ? repl.offset : -1);
        return;
    }
    add_reply_array_len(c, 3);
    add_reply_bulk_cstr(c, "master");
    add_reply_long_long(c, repl.offset);
    add_reply_array_len(c, repl_replica_count());
    for (int i = 0; i < nreps; i++) {
        if (reps[i].state == REP_HANDSHAKE) continue;
        char port[16];
        snprintf(port, sizeof(port), "%d", reps[i].port);
        add_reply_array_len(c, 3);
        add_reply_bulk_cstr(c, reps[i].ip);
        add_reply_bulk_cstr(c, port);
        char off[32];
        snprintf(off, sizeof(off), "%lld", reps[i].ack);
        add_reply_bulk_cstr(c, off);
    }
}
