/*
 * server_core.h -- the server core's internals (srv-net): declarations
 * shared by the core's own files (ae, networking, reply, server, config,
 * cmd_conn/cmd_server/cmd_info/cmd_multi, main): the client's private
 * state, the server's global state, the reply chain, logging, statistics,
 * notifications, pause and the other services the dispatcher calls.
 * Command handlers of the data layers need none of them. Apart from
 * server.h, which is what a handler sees, so that the handler API reads on
 * its own; server.h includes this file at its end, so every server file
 * still includes only server.h. Locking: none; everything here runs on the
 * command thread (server_log excepted). Memory handed in is copied unless
 * a comment says otherwise.
 */
#ifndef STRATA_SERVER_CORE_H
#define STRATA_SERVER_CORE_H

#include "server/server.h"

#include "engine/engine.h"

struct ae_loop;

/* Log levels, as Redis's loglevel setting. */
enum { LL_DEBUG = 0, LL_VERBOSE = 1, LL_NOTICE = 2, LL_WARNING = 3 };
/* Writes one line "pid:M dd Mon yyyy hh:mm:ss.mmm * msg" to the logfile (or
 * stdout) when level >= the configured loglevel. Thread-safe (the engine
 * logs from its threads through server_log_engine). */
void server_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void server_log_engine(void *ctx, int level, const char *msg);

/* A block of the reply chain; deferred blocks hold a length header that is
 * filled in later (set_deferred_*). */
typedef struct reply_block {
    struct reply_block *next;
    size_t size, used;
    int deferred;
    char buf[];
} reply_block;

/* A position in the reply chain, so a reply can be taken back when the
 * engine refuses the command's writes. */
typedef struct reply_mark {
    reply_block *tail;
    size_t used;
    size_t bytes;
} reply_mark;

typedef struct queued_cmd {
    const struct command *cmd;
    int argc;
    arg *argv; /* owned copies */
} queued_cmd;

struct watched_key;

struct client_private {
    client *prev, *next; /* server.clients */
    client *pw_next;     /* server.pending_write, when in_pending */
    int in_pending;
    int close_asap; /* freed in before-sleep (CLIENT KILL, errors) */
    int executing;  /* a command of this client is running */
    char *qbuf;     /* query buffer: qbuf[qpos..qlen) unparsed */
    size_t qlen, qcap, qpos;
    struct resp_parser *parser;
    reply_block *reply_head, *reply_tail;
    size_t reply_bytes; /* unsent bytes in the chain */
    size_t head_sent;   /* bytes of reply_head already written */
    queued_cmd *mq;     /* MULTI queue */
    int mq_len, mq_cap;
    struct watched_key **watched;
    int nwatched, watched_cap;
    uint64_t last_cmd_id;
    const struct command *last_cmd; /* CLIENT LIST cmd=; NULL before any */
    char last_sub[24];              /* its subcommand (lower case) for a container, or "" */
    int reply_off;                  /* CLIENT REPLY OFF */
    int reply_skip; /* CLIENT REPLY SKIP: 2 = skip the next command's reply, 1 = this one's */
    int pushing;    /* writing a push message: REPLY OFF/SKIP do not apply (R3) */
    int no_evict, no_touch;
    struct client_pubsub *ps; /* subscriptions (pubsub.c), NULL when none */
    int cmd_outcome;          /* CMD_REJECTED / CMD_BAD_SUBCOMMAND: what stats must not count */
    unsigned char *redact;    /* per argument: hidden from MONITOR/SLOWLOG (NULL: none) */
    /* pause.c: a command held back by CLIENT PAUSE, or a WAIT in progress;
     * either way no more input of this client is processed meanwhile. */
    queued_cmd *paused_cmd;
    int waiting;
    int64_t wait_deadline_ms; /* 0: forever */
    void (*wait_done)(client *c);
    int commit_held;           /* N4: replies wait for the engine to recover from a failed commit */
    struct block_wait *bwait;  /* while CLIENT_BLOCKED (blocking.c) */
    size_t reply_mem;          /* bytes of the reply blocks (reply.c R4) */
    int reply_mem_released;    /* closing: no longer in server.reply_mem_total */
    int obuf_class;            /* CLIENT_CLASS_*: which client-output-buffer-limit applies */
    int64_t obuf_soft_since_s; /* when the soft limit was first exceeded; 0: it is not */
    struct tls_conn *tls;      /* a TLS connection (tls.h), or NULL */
    struct client_tracking *tracking; /* CLIENT TRACKING on (tracking.c), or NULL */
    int tls_handshaking;              /* the TLS handshake is not done: no request is read yet */
};

/* The server's global state. Touched only by the command thread. */
struct server_state {
    struct ae_loop *el;
    int listen_fd[16];
    int nlisten;
    int tls_listen_fd[16]; /* tls-port's listeners */
    int ntls_listen;
    eng_db *db;
    keyspace *ks;
    eng_batch *batch; /* the command batch (Invariant S1) */
    ks_ctx ctx;       /* the command context client_ks hands out */
    eng_batch *cron_batch;
    int uncommitted;       /* batches written since the last eng_commit */
    client *clients;       /* every connected client */
    client *pending_write; /* clients with replies to flush */
    uint64_t nclients;
    uint64_t next_client_id;
    int64_t cmd_time_ms; /* time of the running command */
    int64_t start_ms;
    int64_t lastsave_s;
    volatile int shutdown_asap; /* SIGTERM/SHUTDOWN: stop at the next loop iteration */
    int exit_code;              /* main's exit status */
    long long cron_id;
    int64_t last_cron_ms;
    uint64_t cron_loops;
    /* stats (INFO stats, CONFIG RESETSTAT) */
    uint64_t stat_commands, stat_connections, stat_rejected_conn, stat_errors;
    uint64_t stat_net_in, stat_net_out, stat_expired, stat_commits, stat_write_errors;
    uint64_t stat_ops_sample_ms, stat_ops_sample_cmds, stat_ops_per_sec;
    uint64_t stat_refused_writes; /* MISCONF replies (S3) */
    /* Redis's dirty counter (rdb_changes_since_last_save): server_write_batch
     * adds the keys a command's batch changed (cmd_touches, counted by the
     * keyspace's touch hook), at least 1 for a batch that wrote anything;
     * nothing for a command that changed nothing (SETBIT of the bit it
     * holds) or only read (lazy expiry, as Redis). */
    uint64_t dirty;
    uint64_t cmd_touches;     /* keys touched since the command began */
    int cmd_counted;          /* cmd_touches is the whole count: no batch minimum */
    int saved_by_command;     /* FLUSHALL with save points: the write is a save */
    int replies_held;         /* N4: a commit failed; replies wait */
    uint64_t held_recoveries; /* eng_health.recoveries when they began waiting */
    int active_expire_off;    /* DEBUG SET-ACTIVE-EXPIRE 0 */
    const char *config_file;  /* absolute path, or NULL */
    const char *executable;
    char runid[41];                /* INFO server's run_id (Sentinel tells restarts by it) */
    char replid[41];               /* INFO replication's master_replid, random per start */
    size_t reply_mem_total;        /* reply blocks of every client not closing (R4) */
    uint64_t stat_evicted_clients; /* closed for reply-memory-limit */
    /* WATCH: every watched (db, key), see cmd_multi.c */
    struct watched_key **watch_buckets;
    size_t watch_nbuckets, watch_count;
};
extern struct server_state server;

/* networking.c */
/* fd -1: a client without a connection (the script client), not listed in
 * server.clients nor counted in server.nclients. */
client *client_create(int fd);
/* CLIENT_PROTECTED on/off: while set, c's socket is neither read nor
 * written and networking_flush_replies leaves it pending (its replies may
 * wait for writes its running script has not finished). */
void client_protect(client *c);
void client_unprotect(client *c);
/* Frees c now, or at the next before-sleep if it is running a command. */
void client_free(client *c);
/* Queues c's replies for the next flush (a reply added outside c's own
 * command: a blocked client served or timed out). */
void client_pending_write(client *c);
/* Runs the complete requests waiting in c's query buffer (a client that
 * was blocked), as the read handler does after a read. */
void client_resume_input(client *c);
void client_free_async(client *c);
void networking_accept_handler(struct ae_loop *el, int fd, void *data, int mask);
/* The accept handler of tls-port: the client starts with the handshake. */
void networking_accept_tls_handler(struct ae_loop *el, int fd, void *data, int mask);
/* Whether c connected from the loopback interface (Redis's islocalClient:
 * its peer is 127.0.0.1 or ::1). */
int client_is_local(const client *c);
/* Whether c must AUTH before other commands (Redis's authRequired). */
int client_auth_required(const client *c);
/* Writes pending replies of every client (after the group commit). */
void networking_flush_replies(void);
/* N4: every client with unsent replies keeps them until release. */
void networking_hold_replies(void);
void networking_release_replies(void);
/* Disconnects clients idle for more than `timeout` seconds and trims the
 * buffers of idle ones (cron). */
void networking_clients_cron(void);
/* One "id=.. addr=.." line of CLIENT LIST / CLIENT INFO (malloc'd). */
char *client_info_line(client *c);
/* Checks the output buffer limits after c's reply chain took a new block
 * (reply.c): c's class limit (client-output-buffer-limit: hard, or soft
 * for longer than its seconds) and the total of every client's replies
 * (reply-memory-limit: the clients holding the most are closed first). A
 * client over a limit is scheduled to close, with a log line, as Redis. */
void networking_reply_grew(client *c);
/* Hints the keys of the complete requests in c's query buffer (up to
 * KS_PREFETCH_MAX of them) to the keyspace's prefetch before they run
 * (networking_prefetch.c); networking_prefetch_resumes says that c's
 * parser has reached where the last hints stopped, so the next requests
 * want theirs. Hints only: no effect on replies. Command thread. */
void networking_prefetch(client *c);
int networking_prefetch_resumes(const client *c);

/* reply.c */
void reply_append(client *c, const char *p, size_t n);
/* Frees a block of c's chain (R4's accounting). */
void reply_block_free(client *c, reply_block *b);
/* Takes c's reply memory out of server.reply_mem_total: c is closing and its
 * replies will not be sent. Idempotent. */
void reply_mem_release(client *c);
/* c's output buffer memory as client-output-buffer-limit counts it (as
 * Redis): its reply blocks beyond one 16 KB block, the part Redis keeps in
 * its fixed reply buffer and does not count. */
size_t reply_obuf_usage(const client *c);
void reply_mark_get(client *c, reply_mark *m);
void reply_truncate(client *c, const reply_mark *m);
void reply_free_all(client *c);
void add_reply_help(client *c, const char **lines);
void add_reply_subcommand_error(client *c);
/* "unknown subcommand or wrong number of arguments for '<sub>'. Try CMD HELP." */
void add_reply_subcommand_syntax_error(client *c);
void add_reply_bulk_ll(client *c, long long v);
/* "wrong number of arguments for 'client|kill' command" (cmd_conn.c) */
void add_reply_subcommand_arity(client *c);

/* server.c */
/* Runs c's parsed request in c->argv: lookup, arity, auth, MULTI queueing,
 * then call(). Returns 0, or -1 when c was freed or must not run more. */
int server_process_command(client *c);
/* Runs cmd with Invariant S1 (savepoint, rollback on error reply). */
void server_call(client *c, const struct command *cmd);
/* Serves other clients while a script runs past busy-reply-threshold:
 * reads and runs their requests (only CMD_ALLOW_BUSY ones run, the rest get
 * BUSY), commits what earlier commands wrote and flushes replies, a few
 * rounds without waiting. Timers do not run. REQUIRES: the script's caller
 * is protected (client_protect). */
void server_events_while_busy(void);
/* Writes the command batch to the engine (deferred: the group commit in
 * before-sleep makes it durable). Replaces the reply since mark with an
 * error when the engine refuses. */
void server_write_batch(client *c, const reply_mark *mark);
/* server_write_batch for the ncmds commands whose replies follow mark (a
 * write group, write_group.c): when the engine refuses, each of them
 * replies the error instead. */
void server_write_batch_n(client *c, const reply_mark *mark, int ncmds);

/* write_group.c: the commands one read of a connection runs share one
 * engine batch (S4 in server.c). */
/* Opens c's group: REQUIRES server.batch empty (S2); networking.c, before
 * it runs the requests of one read. */
void write_group_begin(client *c);
/* Before cmd runs for c: writes what the group holds unless cmd may join
 * it, so that a command outside the group finds S2. */
void write_group_before(client *c, const struct command *cmd);
/* After cmd ran for c (not queued by MULTI, no script running): keeps its
 * writes in the group, or writes the batch (server_write_batch_n) and
 * offers the keys it readied to blocked clients. */
void write_group_after(client *c, const struct command *cmd, const reply_mark *mark);
/* Writes what c's group holds and closes it (S2 again). */
void write_group_end(client *c);
/* Opens the engine in cfg.dir (created if missing), the keyspace and the
 * index catalog, and installs the keyspace hooks (main.c). Returns 0, or
 * -1 after logging why. */
int server_open_storage(void);
int server_init(void);
/* CONFIG SET port: listens on port (0: on none) on every bind address,
 * then closes the old sockets. Returns 0, or -1 with nothing changed (the
 * log says why). Command thread. */
int server_listen_port(int port);
void server_run(void);
void server_shutdown(void);
/* Commits pending writes and flushes replies; with save, also flushes the
 * memtable to a table (SHUTDOWN SAVE). Returns 0 or -1 (logged). */
int server_prepare_shutdown(int save);
/* Copies c's request (argv) into q; queued_cmd_free frees the copies (not
 * q itself). */
void queued_cmd_copy(const client *c, const struct command *cmd, queued_cmd *q);
void queued_cmd_free(queued_cmd *q);
/* Forgets every key c watches and clears CLIENT_DIRTY_CAS (cmd_multi.c). */
void server_unwatch_all(client *c);
/* Frees c's MULTI queue and clears its MULTI flags. */
void server_discard_multi(client *c);
uint64_t server_used_memory(void);
/* Commits every batch handed to the engine so far (sync per appendfsync). */
void server_commit(void);
/* Waits for a running BGSAVE (cmd_server.c). */
void server_wait_bgsave(void);

/* networking.c: after a push was appended to c (pub/sub, MONITOR): queue
 * c for writing (its output buffer limit is applied as the reply grows). */
void client_after_push(client *c);

/* INFO's text buffer (cmd_info.c). */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_put(sbuf *b, const void *p, size_t n); /* appends n bytes, any bytes */
void sb_section(sbuf *b, const char *title);

/* cmdstats.c: per-command and per-error statistics (INFO commandstats,
 * errorstats, latencystats; LATENCY HISTOGRAM). */
/* Everything server_call records after a command ran dur_us: commandstats,
 * latency histogram, SLOWLOG, the latency monitor, MONITOR. */
void stats_after_call(client *c, const struct command *cmd, int64_t dur_us);
/* A command the dispatcher refused (arity, NOAUTH, subscribed mode ...). */
void stats_rejected(const struct command *cmd);
/* As stats_rejected for c's request: a container's known subcommand
 * ("client|kill") is counted under its own name, as Redis's rejectCommand. */
void stats_rejected_request(client *c, const struct command *cmd);
/* A blocked cmd of c was served with an error reply (XREADGROUP after
 * XGROUP DESTROY): failed_calls, as Redis's updateStatsOnUnblock. */
void stats_failed_when_served(client *c, const struct command *cmd);
/* One error reply with code (e.g. "ERR", "WRONGTYPE"). */
void stats_error_code(const char *code, size_t n);
void stats_reset(void); /* CONFIG RESETSTAT */
void stats_info_commandstats(sbuf *b);
void stats_info_errorstats(sbuf *b);
void stats_info_latencystats(sbuf *b);
void stats_reply_latency_histogram(client *c); /* LATENCY HISTOGRAM [cmd ...] */
/* Monotonic microseconds (inline: the dispatcher's one timing pair). */
static inline int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
/* Redis's fullname of the command c runs: "client|list" for a container's
 * subcommand, else the name. */
void command_fullname(const client *c, const struct command *cmd, char *buf, size_t cap);
/* Only the subcommand part ("list"), "" when there is none. */
void command_subname(const client *c, const struct command *cmd, char *buf, size_t cap);

/* notify.c */
int notify_flags_parse(const char *s); /* -1 on an unknown class letter */
void notify_flags_format(int flags, char *buf, size_t cap);
void notify_init(keyspace *ks); /* registers the keyspace's event hook */

/* slowlog.c */
void slowlog_apply_max_len(void); /* slowlog-max-len changed */
void slowlog_push(client *c, int argc, const arg *argv, int64_t dur_us);
void slowlog_reset(void);
size_t slowlog_mem(void);

/* latency.c */
void latency_reset_all(void);

/* monitor.c */
extern int monitor_clients; /* how many clients are in MONITOR mode */
void monitor_client_remove(client *c);

/* cmd_introspect.c */
void debug_object(client *c);       /* DEBUG OBJECT <key> */
void debug_digest(client *c);       /* DEBUG DIGEST (cmd_digest.c) */
void debug_digest_value(client *c); /* DEBUG DIGEST-VALUE key... */

/* pause.c: CLIENT PAUSE / UNPAUSE, and commands that wait (WAIT). */
/* Returns 1 when cmd (with c's MULTI queue for EXEC) must wait for the
 * pause to end; the dispatcher then hands it to pause_postpone. */
int pause_applies(const client *c, const struct command *cmd);
extern int pause_in_effect; /* a CLIENT PAUSE is set (pause_applies decides) */
void pause_postpone(client *c, const struct command *cmd);
/* Ends an elapsed pause, times out waiting clients (cron, before-sleep). */
void pause_cron(void);
int pause_active(void); /* any pause in effect (expiry waits) */
/* FAILOVER's write pause on (1) or off (0); the held clients run at the
 * next pause_cron once no pause holds them. */
void pause_failover(int on);
uint64_t pause_blocked_clients(void);
/* Forgets c's postponed command or wait (client_free). */
void pause_client_free(client *c);
/* Holds c until deadline_ms (0: forever), then calls done(c) to reply. */
void pause_wait_until(client *c, int64_t deadline_ms, void (*done)(client *c));
/* Ends c's wait now (what it waited for happened): done(c) replies. */
void pause_wait_end(client *c);
/* A timeout argument in ms, as Redis's getTimeoutFromObjectOrReply: the
 * absolute deadline (0 for a 0 timeout). Returns -1 after replying. */
int pause_parse_timeout(client *c, const arg *a, int64_t *end);
void client_pause_command(client *c);   /* CLIENT PAUSE <ms> [WRITE|ALL] */
void client_unpause_command(client *c); /* CLIENT UNPAUSE */

#endif
