/*
 * server.c -- global state, command dispatch and the group commit.
 *
 * The life of a request: networking.c parses it into c->argv and calls
 * server_process_command(), which looks the command up, checks arity, auth
 * and MULTI state, and runs it through server_call(). Writes land in the one
 * command batch (server.batch); after the command (or after EXEC as a whole)
 * the batch goes to the engine with ENG_WRITE_DEFER: the log record waits
 * in the engine's buffer. Before the loop sleeps, before_sleep() calls
 * eng_commit() once -- one write() and, with appendfsync always, one fsync
 * for every write of the iteration -- and only then writes replies to
 * sockets (Invariant N1 in networking.c).
 *
 * Invariant S1 (server.h): server_call() sets a batch savepoint before each
 * command and rolls back to it when the command replied with an error.
 * Invariant S2: between commands server.batch is empty (but for the write
 * group of S4 below, whose next command may only be one that joins it);
 * commands queued by MULTI are not executed until EXEC, so one batch is
 * enough for everyone.
 * Invariant S3: while the engine refuses writes (a full disk, a failing
 * fsync: eng_write_status), write commands are answered with Redis's
 * MISCONF error before they run, and reads go on; the engine retries in the
 * background and writes resume by themselves. If a group commit fails (not
 * with appendfsync always, which exits as Redis does), the replies of that
 * iteration are held until the engine has made its writes durable
 * (networking.c, N4).
 * Invariant S4 (write_group.c): the commands of one read of a connection
 * that only touch keys of the data types, and the scripts among them
 * (EVAL, EVALSHA, FCALL), share server.batch, written once
 * after the last of them (or before any other command), each with its own
 * savepoint (S1) and reading the earlier ones' writes from the batch.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "index/index.h"
#include "server/acl.h"
#include "server/ae.h"
#include "server/anet.h"
#include "server/backup.h"
#include "server/config.h"
#include "server/script.h"
#include "server/repl.h"
#include "server/server.h"
#include "server/tls.h"

struct server_state server;

int64_t server_now_ms(void)
{
    return server.cmd_time_ms ? server.cmd_time_ms : ae_mstime();
}

keyspace *server_keyspace(void)
{
    return server.ks;
}

ks_ctx *client_ks(client *c)
{
    server.ctx.ks = server.ks;
    server.ctx.batch = server.batch;
    server.ctx.db = dbmap_stored(c->db); /* DBM2 */
    server.ctx.now_ms = server_now_ms();
    return &server.ctx;
}

uint64_t server_used_memory(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long size = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &rss) != 2) rss = 0;
        fclose(f);
    }
    return rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Marks c's transaction as failed (EXECABORT) when in MULTI. */
static void flag_transaction(client *c)
{
    if (c->flags & CLIENT_MULTI) c->flags |= CLIENT_DIRTY_EXEC;
}

static void reply_unknown_command(client *c)
{
    char args[160] = "";
    size_t n = 0;
    for (int i = 1; i < c->argc && n < 128; i++) {
        int w = snprintf(args + n, sizeof(args) - n, "'%.*s' ", (int)(128 - n), c->argv[i].ptr);
        if (w < 0) break;
        n += (size_t)w;
        if (n >= sizeof(args)) n = sizeof(args) - 1;
    }
    add_reply_error_fmt(c, "unknown command '%.128s', with args beginning with: %s", c->argv[0].ptr,
                        args);
}

static void queue_command(client *c, const struct command *cmd)
{
    struct client_private *p = c->priv;
    if (p->mq_len == p->mq_cap) {
        int cap = p->mq_cap ? p->mq_cap * 2 : 8;
        queued_cmd *q = realloc(p->mq, (size_t)cap * sizeof(*q));
        if (!q) abort();
        p->mq = q;
        p->mq_cap = cap;
    }
    queued_cmd_copy(c, cmd, &p->mq[p->mq_len++]);
    add_reply_status(c, "QUEUED");
}

void queued_cmd_copy(const client *c, const struct command *cmd, queued_cmd *q)
{
    q->cmd = cmd;
    q->argc = c->argc;
    q->argv = malloc((size_t)c->argc * sizeof(arg));
    if (!q->argv) abort();
    for (int i = 0; i < c->argc; i++) {
        q->argv[i].len = c->argv[i].len;
        q->argv[i].ptr = malloc(c->argv[i].len + 1);
        if (!q->argv[i].ptr) abort();
        memcpy(q->argv[i].ptr, c->argv[i].ptr, c->argv[i].len + 1);
    }
}

void queued_cmd_free(queued_cmd *q)
{
    for (int j = 0; j < q->argc; j++)
        free(q->argv[j].ptr);
    free(q->argv);
}

void server_discard_multi(client *c)
{
    struct client_private *p = c->priv;
    for (int i = 0; i < p->mq_len; i++)
        queued_cmd_free(&p->mq[i]);
    free(p->mq);
    p->mq = NULL;
    p->mq_len = p->mq_cap = 0;
    c->flags &= ~(CLIENT_MULTI | CLIENT_DIRTY_EXEC | CLIENT_DIRTY_CAS);
}

void server_call(client *c, const struct command *cmd)
{
    struct client_private *p = c->priv;
    /* EXEC's commands, and those a script calls, have their own (S1) */
    int savepoint = cmd->proc != cmd_exec && !(cmd->flags & CMD_SCRIPT);
    c->cmd = cmd;
    if (!server.cmd_time_ms) server.cmd_time_ms = ae_mstime();
    if (savepoint) eng_batch_set_savepoint(server.batch);
    c->last_cmd_errors = 0;
    p->last_cmd = cmd;
    if (cmd->flags & CMD_CONTAINER)
        command_subname(c, cmd, p->last_sub, sizeof(p->last_sub));
    else
        p->last_sub[0] = '\0';
    p->executing++;
    uint64_t touches = server.cmd_touches;
    /* A script is shown before the commands it runs (Redis's evalCommand). */
    if ((cmd->flags & CMD_SCRIPT) && monitor_clients)
        monitor_feed(c, NULL, c->db, c->argc, c->argv);
    tracking_call_begin(c);
    int64_t start = mono_us(); /* the one timing pair of a command */
    cmd->proc(c);
    int64_t dur = mono_us() - start;
    tracking_call_end(c, cmd);
    key_access_touch_args(c);
    p->executing--;
    if (c->last_cmd_errors) server.cmd_touches = touches; /* S1: it changed nothing */
    if (savepoint) {
        if (c->last_cmd_errors)
            eng_batch_rollback(server.batch); /* S1 */
        else
            eng_batch_pop_savepoint(server.batch);
    }
    ks_ctx_reset(&server.ctx);
    server.stat_commands++;
    stats_after_call(c, cmd, dur);
}

void dispatch_subcommand(client *c, const subcommand *subs)
{
    for (const subcommand *s = subs; s->name; s++) {
        if (!arg_is(&c->argv[1], s->name)) continue;
        if ((s->arity > 0 && c->argc != s->arity) || c->argc < -s->arity)
            return add_reply_subcommand_arity(c);
        return s->proc(c);
    }
    add_reply_subcommand_error(c);
}

/* Rejects a command before it runs (Redis's rejectCommand): the error
 * reply, a rejected call in its stats, and EXECABORT for a MULTI. */
static int reject(client *c, const struct command *cmd, const char *msg)
{
    flag_transaction(c);
    stats_rejected_request(c, cmd);
    if (cmd && cmd->proc == cmd_exec) { /* Redis's execCommandAbort */
        server_discard_multi(c);
        server_unwatch_all(c);
        add_reply_error_fmt(c, "EXECABORT Transaction discarded because of: %s", msg);
        return 0;
    }
    add_reply_error(c, msg);
    return 0;
}

/* RESP2 subscribed mode allows only these (Redis's processCommand). */
static int allowed_when_subscribed(const struct command *cmd)
{
    static const char *const ok[] = {"ping",         "subscribe",  "ssubscribe",   "unsubscribe",
                                     "sunsubscribe", "psubscribe", "punsubscribe", "quit",
                                     "reset",        NULL};
    for (const char *const *n = ok; *n; n++)
        if (!strcmp(cmd->name, *n)) return 1;
    return 0;
}

/* ---- Refused writes (Redis's MISCONF) ----------------------------------- */

/* The MISCONF text for a refused write, after Redis's "Errors writing to
 * the AOF file: <strerror>", naming what fails here. */
static void misconf_text(char *out, size_t cap)
{
    eng_health h;
    eng_get_health(server.db, &h);
    const eng_fault_info *f = h.log.failing ? &h.log : h.flush.failing ? &h.flush : &h.compaction;
    const char *what = f == &h.log     ? "writing to the log file"
                       : f == &h.flush ? "writing the memtable to a table file"
                                       : "compacting table files";
    snprintf(out, cap, "MISCONF Errors %s: %s", what, f->err ? strerror(f->err) : f->error);
}

/* Invariant S3: while the engine refuses writes (eng_write_status), write
 * commands, EXEC of a transaction that holds one, and PING (as Redis) are
 * answered with MISCONF before they run; reads go on. Returns 1 when c's
 * command was refused. */
static int refuse_when_disk_fails(client *c, const struct command *cmd)
{
    int exec_writes = 0;
    if (cmd->proc == cmd_exec && (c->flags & CLIENT_MULTI))
        for (int i = 0; i < c->priv->mq_len && !exec_writes; i++)
            exec_writes = (c->priv->mq[i].cmd->flags & CMD_WRITE) != 0;
    if (!(cmd->flags & CMD_WRITE) && !exec_writes && cmd->proc != cmd_ping) return 0;
    if (eng_write_status(server.db) == ENG_OK) return 0;
    char msg[400];
    misconf_text(msg, sizeof(msg));
    server.stat_refused_writes++;
    if (exec_writes) {
        server_discard_multi(c);
        server_unwatch_all(c);
        add_reply_error_fmt(c, "EXECABORT Transaction discarded because of: %s", msg);
        return 1;
    }
    flag_transaction(c);
    add_reply_error(c, msg);
    return 1;
}

/* Adds the command's keys to the dirty counter (server.h): each key it
 * touched, whether or not the value changed (a SET of the value held
 * counts, as in Redis; SETBIT of the bit held touches nothing), or 1 for a
 * batch that wrote without naming keys (a flush). A read's writes are lazy
 * expiries, which Redis does not count. */
static void count_dirty(const client *c, size_t ops)
{
    uint64_t touched = server.cmd_touches;
    server.cmd_touches = 0;
    if (!(c && c->cmd && (c->cmd->flags & CMD_READONLY)))
        server.dirty += touched || server.cmd_counted ? touched : ops ? 1 : 0;
    server.cmd_counted = 0;
    if (server.saved_by_command) bk_note_save();
    server.saved_by_command = 0;
}

void server_write_batch(client *c, const reply_mark *mark)
{
    server_write_batch_n(c, mark, 1);
}

void server_write_batch_n(client *c, const reply_mark *mark, int ncmds)
{
    if (eng_batch_count(server.batch) == 0) {
        ks_count_drop(server.ks); /* nothing written: no count changed */
        count_dirty(c, 0);
        return;
    }
    if (repl_drop_local_writes()) { /* R1: a replica's data comes from its link only */
        ks_count_drop(server.ks);
        eng_batch_clear(server.batch);
        return;
    }
    /* KS-E7: a write group's key counters go in with its writes. */
    server.ctx.ks = server.ks;
    server.ctx.batch = server.batch;
    eng_status st = ENG_OK;
    if (ks_count_flush(&server.ctx) != KS_OK) { /* the counter read failed */
        st = ENG_IOERR;
        ks_ctx_reset(&server.ctx);
        ks_count_drop(server.ks); /* the sums it did not put: their batch goes */
    }
    if (st == ENG_OK) st = eng_write(server.db, server.batch, ENG_WRITE_DEFER);
    if (st == ENG_OK) repl_feed_batch(server.batch);
    eng_batch_clear(server.batch); /* S2 */
    if (st == ENG_OK) {
        server.uncommitted++;
        count_dirty(c, 1);
        return;
    }
    server.cmd_touches = 0;
    server.cmd_counted = 0;
    server.saved_by_command = 0;
    /* A read's own writes (a lazy expiry) can wait: the next read expires
     * the key again. The reply stands. (Not a script's: EVAL is no read.) */
    if (ncmds == 1 && c && c->cmd && (c->cmd->flags & CMD_READONLY) &&
        eng_write_status(server.db) != ENG_OK)
        return;
    server.stat_write_errors++;
    server_log(LL_WARNING, "Engine write failed: %s (%s)", eng_status_str(st), eng_last_error());
    /* The command's reply claimed success: take it back -- unless it only
     * read (its writes were lazy expiries, done again later). */
    if (c && mark && (ncmds > 1 || !(c->cmd && (c->cmd->flags & CMD_READONLY)))) {
        char msg[400];
        if (eng_write_status(server.db) != ENG_OK)
            misconf_text(msg, sizeof(msg));
        else
            snprintf(msg, sizeof(msg), "ERR %s", eng_last_error());
        reply_truncate(c, mark);
        for (int i = 0; i < ncmds; i++)
            add_reply_error(c, msg);
    }
}

/* DEBUG (enable-debug-command) and MODULE LOAD/LOADEX/UNLOAD
 * (enable-module-command) are refused unless the setting is yes, or local
 * and c is on the loopback interface, as Redis 7's CMD_PROTECTED. cmd is
 * the resolved subcommand. Returns 1 after replying the refusal. */
static int refuse_protected_command(client *c, const struct command *cmd)
{
    int is_debug = !strcmp(cmd->name, "debug");
    int is_module = !strcmp(cmd->name, "module|load") || !strcmp(cmd->name, "module|loadex") ||
                    !strcmp(cmd->name, "module|unload");
    if (!is_debug && !is_module) return 0;
    int setting = is_debug ? cfg.enable_debug_cmd : cfg.enable_module_cmd;
    if (setting == PROTECTED_YES || (setting == PROTECTED_LOCAL && client_is_local(c))) return 0;
    add_reply_error_fmt(c,
                        "%s command not allowed. If the %s option is set to \"local\", you can "
                        "run it from a local connection, otherwise you need to set this option in "
                        "the configuration file, and then restart the server.",
                        is_debug ? "DEBUG" : "MODULE",
                        is_debug ? "enable-debug-command" : "enable-module-command");
    return 1;
}

/* The checks of Redis's processCommand, in its order. Returns 1 when the
 * command may run; otherwise it has replied. */
static __attribute__((noinline)) int admit_checks(client *c, const struct command *cmd)
{
    if (!cmd || !cmd->proc) {
        flag_transaction(c);
        reply_unknown_command(c);
        return 0;
    }
    if ((cmd->arity > 0 && c->argc != cmd->arity) || c->argc < -cmd->arity) {
        char msg[128];
        snprintf(msg, sizeof(msg), "wrong number of arguments for '%s' command", cmd->name);
        return reject(c, cmd, msg);
    }
    int bad_sub;
    const struct command *real = command_resolve(cmd, c->argc, c->argv, &bad_sub);
    if (real != cmd && ((real->arity > 0 && c->argc != real->arity) || c->argc < -real->arity)) {
        char msg[128];
        snprintf(msg, sizeof(msg), "wrong number of arguments for '%s' command", real->name);
        return reject(c, cmd, msg);
    }
    if (refuse_protected_command(c, real)) {
        flag_transaction(c);
        stats_rejected(cmd);
        return 0;
    }
    if (!(cmd->flags & CMD_NOAUTH) && client_auth_required(c))
        return reject(c, cmd, "NOAUTH Authentication required.");
    /* An unknown subcommand (bad_sub) is checked as its container: the
     * handler refuses it, and a user allowed only some subcommands never
     * reaches it. */
    if (!acl_user_unrestricted(c->user) &&
        acl_check_client(
            c, real, (c->flags & CLIENT_MULTI) ? ACL_LOG_CTX_MULTI : ACL_LOG_CTX_TOPLEVEL) < 0) {
        flag_transaction(c);
        stats_rejected(cmd);
        return 0;
    }
    if ((c->flags & CLIENT_MULTI) && (cmd->flags & CMD_DENY_MULTI))
        return reject(c, cmd, "Command not allowed inside a transaction");
    if ((c->flags & CLIENT_PUBSUB) && c->resp == 2 && !allowed_when_subscribed(cmd)) {
        char msg[256], name[64];
        command_fullname(c, cmd, name, sizeof(name));
        snprintf(msg, sizeof(msg),
                 "Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
                 "are allowed in this context",
                 name);
        return reject(c, cmd, msg);
    }
    /* A MONITOR client is a replica to Redis: no keyspace access. */
    if ((c->flags & CLIENT_MONITOR) && (cmd->flags & (CMD_READONLY | CMD_WRITE)))
        return reject(c, cmd, "Replica can't interact with the keyspace");
    if (refuse_when_disk_fails(c, cmd)) return 0; /* S3, in Redis's order */
    const char *why = repl_write_refusal(c, cmd); /* READONLY, NOREPLICAS */
    if (why) return reject(c, cmd, why);
    if (repl_refuses_stale(c, cmd))
        return reject(c, cmd,
                      "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set "
                      "to 'no'.");
    if (script_timedout() && !(cmd->flags & CMD_ALLOW_BUSY))
        return reject(c, cmd, script_busy_text());
    return 1;
}

/* Whether a write (or PING, S3) must go through the checks that refuse
 * writes: S3's MISCONF, READONLY, NOREPLICAS. */
static inline int write_guarded(const struct command *cmd)
{
    return (cmd->flags & CMD_WRITE || cmd->proc == cmd_ping) &&
           (repl.is_replica || cfg.min_replicas_to_write > 0 ||
            eng_write_status(server.db) != ENG_OK);
}

/* admit_checks with the common case (a known command of the right arity
 * from an authenticated client in neither MULTI, subscribed nor MONITOR
 * mode) decided inline. */
static inline int admit(client *c, const struct command *cmd)
{
    if (cmd && cmd->proc && !((cmd->arity > 0 && c->argc != cmd->arity) || c->argc < -cmd->arity) &&
        !(cmd->flags & (CMD_CONTAINER | CMD_ADMIN)) && acl_user_unrestricted(c->user) &&
        (c->flags & (CLIENT_AUTHENTICATED | CLIENT_MULTI | CLIENT_PUBSUB | CLIENT_MONITOR)) ==
            CLIENT_AUTHENTICATED &&
        !script_timedout() && !write_guarded(cmd) &&
        !(repl.is_replica && !cfg.replica_serve_stale_data))
        return 1;
    return admit_checks(c, cmd);
}

int server_process_command(client *c)
{
    const struct command *cmd = command_lookup(c->argv[0].ptr, c->argv[0].len);
    c->cmd = cmd;
    struct client_private *p = c->priv;
    if (p->reply_skip == 2) p->reply_skip = 1; /* CLIENT REPLY SKIP: this reply is skipped */
    if (admit(c, cmd)) {
        if (pause_in_effect && pause_applies(c, cmd)) {
            pause_postpone(c, cmd); /* runs again when the pause ends */
            return -1;
        }
        if ((c->flags & CLIENT_MULTI) && !(cmd->flags & CMD_NOMULTI)) {
            queue_command(c, cmd);
        } else {
            reply_mark mark;
            write_group_before(c, cmd); /* S4 */
            reply_mark_get(c, &mark);
            if (!script_running()) { /* the cron's expiries are no command's */
                server.cmd_touches = 0;
                server.cmd_counted = 0;
            }
            server_call(c, cmd);
            /* While a script is busy, server.batch holds its unfinished writes. */
            if (!(c->flags & CLIENT_MULTI) && !script_running())
                write_group_after(c, cmd, &mark); /* after the command, EXEC or script */
        }
    }
    if (p->reply_skip == 1) p->reply_skip = 0;
    return p->waiting ? -1 : 0;
}

void server_events_while_busy(void)
{
    int64_t saved = server.cmd_time_ms; /* the script keeps its clock */
    for (int i = 0; i < 4; i++) {
        int n = ae_process_file_events(server.el, 0);
        server_commit(); /* N1: what others wrote before the script started */
        networking_flush_replies();
        if (n <= 0 || server.shutdown_asap) break;
    }
    server.cmd_time_ms = saved;
}

/* What the layers cache from the engine, read again (repl.h). */
int server_reload_layers(void)
{
    if (ks_reload_state(server.ks) != KS_OK) {
        server_log(LL_WARNING, "Can't reload the keyspace state: %s", eng_last_error());
        return -1;
    }
    if (dbmap_load() != 0) return -1;
    idx_shutdown();
    char *err = NULL;
    if (idx_init(server.ks, &err) != KS_OK) {
        server_log(LL_WARNING, "Can't reload the index catalog: %s", err ? err : "?");
        free(err);
        return -1;
    }
    notify_init(server.ks);
    function_free_all();
    return function_init();
}

/* ---- The loop's hooks -------------------------------------------------- */

void server_commit(void)
{
    if (!server.uncommitted) return;
    int sync = cfg.appendfsync == ENG_SYNC_ALWAYS;
    eng_health h;
    eng_get_health(server.db, &h); /* before: the failure moves nothing yet */
    eng_status st = eng_commit(server.db, sync);
    server.stat_commits++;
    server.uncommitted = 0;
    if (st != ENG_OK) {
        server_log(LL_WARNING, "Engine commit failed: %s (%s)", eng_status_str(st),
                   eng_last_error());
        if (sync) {
            /* As Redis with appendfsync always: the replies waiting for
             * this commit must never be sent. */
            server_log(LL_WARNING, "Can't recover from a log write error when the fsync policy "
                                   "is 'always'. Exiting...");
            _exit(1);
        }
        /* N4: the writes of this iteration are applied but not in the log;
         * the engine makes them durable by flushing their memtable. Until
         * then no reply that could acknowledge or show them goes out. */
        if (!server.replies_held) server.held_recoveries = h.recoveries;
        server.replies_held = 1;
        networking_hold_replies();
    }
}

/* N4: the engine has recovered past the failure that held the replies. */
static void release_held_replies(void)
{
    if (!server.replies_held) return;
    eng_health h;
    eng_get_health(server.db, &h);
    if (h.log.failing || h.recoveries <= server.held_recoveries) return;
    server.replies_held = 0;
    networking_release_replies();
    server_log(LL_WARNING, "The log can be written again: writes are accepted, %s",
               "and the replies held since the failure are sent");
}

static void before_sleep(ae_loop *el)
{
    pause_cron();         /* clients a pause released run before the commit */
    block_before_sleep(); /* its writes, too, go out with this commit */
    repl_before_sleep();
    tracking_before_sleep();
    server_commit(); /* N1: before any reply is written */
    networking_flush_replies();
    if (server.shutdown_asap) ae_stop(el);
}

/* Runs one step of background work with its own batch, then hands the
 * batch to the engine; before-sleep commits it. */
static void cron_write(void)
{
    if (eng_batch_count(server.cron_batch) == 0) return;
    if (eng_write_status(server.db) != ENG_OK || repl_drop_local_writes()) { /* S3, R1 */
        eng_batch_clear(server.cron_batch);
        return;
    }
    eng_status st = eng_write(server.db, server.cron_batch, ENG_WRITE_DEFER);
    if (st == ENG_OK) repl_feed_batch(server.cron_batch);
    eng_batch_clear(server.cron_batch);
    if (st == ENG_OK)
        server.uncommitted++;
    else
        server_log(LL_WARNING, "Background write failed: %s", eng_last_error());
}

static int server_cron(ae_loop *el, long long id, void *data)
{
    int64_t now = ae_mstime();
    ks_ctx ctx = {server.ks, server.cron_batch, 0, now, NULL};
    int building = 0;
    int64_t t0 = ae_mstime();
    do { /* R1: a replica's index entries come from its primary */
        building = !repl_drop_local_writes() && idx_build_step(&ctx);
        ks_ctx_reset(&ctx);
        cron_write();
    } while (building && ae_mstime() - t0 < 5);
    if (now - server.last_cron_ms >= 1000 / cfg.hz) {
        server.last_cron_ms = now;
        server.cron_loops++;
        release_held_replies();
        server.cmd_time_ms = now;
        int64_t expire_start = mono_us();
        /* Paused clients see a still data set: no expiry (as Redis). */
        for (int db = 0; db < KS_DATABASES && !pause_active() && !repl_drop_local_writes(); db++) {
            ctx.db = db;
            ctx.now_ms = now;
            if (server.active_expire_off || ks_expires(&ctx) == 0) continue;
            ks_active_expire(&ctx, 200, 1000); /* counted by the event hook (notify.c) */
            ks_ctx_reset(&ctx);
            cron_write();
        }
        latency_add_sample_if_needed("expire-cycle", (mono_us() - expire_start) / 1000);
        server.cmd_time_ms = 0;
        pause_cron();
        repl_cron();
        bk_cron(); /* reaps a checkpoint, starts a scheduled BGSAVE */
        migrate_cron();
        tracking_cron();
        networking_clients_cron();
        uint64_t dt = (uint64_t)(now - (int64_t)server.stat_ops_sample_ms);
        if (dt >= 1000) {
            server.stat_ops_per_sec =
                (server.stat_commands - server.stat_ops_sample_cmds) * 1000 / dt;
            server.stat_ops_sample_cmds = server.stat_commands;
            server.stat_ops_sample_ms = (uint64_t)now;
        }
    }
    /* An index build advances every millisecond, in steps of a few ms. */
    return building ? 1 : 1000 / cfg.hz;
}

/* Opens a listening socket on port for each address of addrs (bind's
 * words; "-addr" may fail) into fds (room for 16). Returns how many, or -1
 * (none left open) when a required address fails. */
static int listen_on(const char *addrs, int port, int *fds)
{
    char **argv;
    int argc = config_split_args(addrs, &argv), n = 0;
    char err[ANET_ERR_LEN];
    if (argc <= 0) argc = 0;
    for (int i = 0; i < argc && n < 16; i++) {
        const char *a = argv[i];
        int optional = a[0] == '-';
        if (optional) a++;
        err[0] = '\0';
        int fd = anet_tcp_server(err, port, a, cfg.tcp_backlog);
        if (fd < 0) {
            if (optional) continue;
            server_log(LL_WARNING, "Could not create server TCP listening socket %s:%d: %s", a,
                       port, err);
            while (n > 0)
                close(fds[--n]);
            n = -1;
            break;
        }
        fds[n++] = fd;
    }
    config_free_args(argv, argc);
    return n;
}

static int accept_on(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (ae_create_file_event(server.el, fds[i], AE_READABLE, networking_accept_handler, NULL) ==
            AE_ERR)
            return -1;
    return 0;
}

int server_listen_port(int port)
{
    int fds[16], n = 0;
    if (port && ((n = listen_on(cfg.bind, port, fds)) <= 0 || accept_on(fds, n) < 0)) {
        for (int i = 0; i < n; i++) {
            ae_delete_file_event(server.el, fds[i], AE_READABLE);
            close(fds[i]);
        }
        return -1;
    }
    for (int i = 0; i < server.nlisten; i++) {
        ae_delete_file_event(server.el, server.listen_fd[i], AE_READABLE);
        close(server.listen_fd[i]);
    }
    memcpy(server.listen_fd, fds, sizeof(fds[0]) * (size_t)n);
    server.nlisten = n;
    return 0;
}

static void sig_shutdown(int sig)
{
    (void)sig;
    server.shutdown_asap = 1;
}

int server_init(void)
{
    server.start_ms = ae_mstime();
    uint64_t r = (uint64_t)server.start_ms * 6364136223846793005ULL ^ ((uint64_t)getpid() << 32);
    for (int i = 0; i < 80; i++) { /* run_id, then master_replid */
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        (i < 40 ? server.runid : server.replid)[i % 40] = "0123456789abcdef"[(r >> 59) & 15];
    }
    bk_note_save(); /* LASTSAVE and rdb_changes_since_last_save start here */
    server.stat_ops_sample_ms = (uint64_t)server.start_ms;
    server.el = ae_create(cfg.maxclients + 128);
    server.batch = eng_batch_new(1);
    server.cron_batch = eng_batch_new(1);
    if (!server.el || !server.batch || !server.cron_batch) return -1;
    server.nlisten = 0; /* port 0: no plaintext listener, as Redis (TLS only) */
    if (cfg.port && (server.nlisten = listen_on(cfg.bind, cfg.port, server.listen_fd)) <= 0)
        return -1;
    if (accept_on(server.listen_fd, server.nlisten) < 0) return -1;
    if (!cfg.port && !cfg.tls_port) {
        server_log(LL_WARNING, "Configured to not listen anywhere, exiting.");
        return -1;
    }
    char *tls_err = NULL;
    if (tls_configure(&tls_err) < 0) {
        server_log(LL_WARNING, "Failed to configure TLS. Check logs for more info. %s",
                   tls_err ? tls_err : "");
        free(tls_err);
        return -1;
    }
    if (tls_listen_update() < 0) return -1;
    if (script_init() < 0) return -1;
    server.cron_id = ae_create_timer(server.el, 1, server_cron, NULL);
    ae_set_before_sleep(server.el, before_sleep);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = sig_shutdown;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

void server_run(void)
{
    ae_main(server.el);
}

int server_prepare_shutdown(int save)
{
    server_commit();
    networking_flush_replies();
    if (save) {
        eng_status st = eng_flush(server.db);
        if (st != ENG_OK) {
            server_log(LL_WARNING, "Error flushing the memtable on shutdown: %s", eng_last_error());
            return -1;
        }
    }
    return 0;
}

void server_shutdown(void)
{
    server_log(LL_WARNING, "User requested shutdown...");
    server_prepare_shutdown(0); /* SHUTDOWN SAVE flushed already */
    while (server.clients) {
        server.clients->priv->executing = 0;
        client_free(server.clients);
    }
    for (int i = 0; i < server.nlisten; i++)
        close(server.listen_fd[i]);
    tls_listen_close();
    server_wait_bgsave();
    repl_shutdown();
    script_free_all();
    idx_shutdown();
    ks_close(server.ks);
    eng_status st = eng_close(server.db); /* syncs the log */
    if (st != ENG_OK) server_log(LL_WARNING, "Closing the engine: %s", eng_last_error());
    eng_batch_free(server.batch);
    eng_batch_free(server.cron_batch);
    if (cfg.pidfile && cfg.pidfile[0]) unlink(cfg.pidfile);
    ae_delete(server.el);
    server_log(LL_WARNING, "strata is now ready to exit, bye bye...");
}
