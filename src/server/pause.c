/*
 * pause.c -- CLIENT PAUSE / CLIENT UNPAUSE, and clients that wait (WAIT).
 *
 * CLIENT PAUSE <ms> [WRITE|ALL], as Redis 7.0: until the deadline (or
 * CLIENT UNPAUSE) commands that would change data -- writes, commands
 * that may replicate (PUBLISH), an EXEC whose queue holds any -- or, with
 * ALL, every command, are held back: the dispatcher hands the command to
 * pause_postpone, which keeps a copy, and the client's further input waits
 * in its query buffer. When the pause ends every held client runs its
 * command and the rest of its input, in the order they were held. Reads,
 * the checks before dispatch (arity, auth) and the commands queued inside
 * MULTI are not held, and neither is the transaction that issued the
 * pause: it starts when the EXEC ends. Meanwhile the data set stays still:
 * no active expiry, and reads leave expired keys in place
 * (ks_set_lazy_expire); paused clients count as blocked_clients.
 *
 * A waiting client (pause_wait_until: WAIT with nothing to wait for) is
 * held the same way until its deadline, then replied by its callback.
 *
 * FAILOVER pauses writes too (pause_failover, Redis's PAUSE_DURING_FAILOVER):
 * a pause of its own, without a deadline, that CLIENT UNPAUSE does not end;
 * writes are held while either pause holds them.
 */
#include <stdlib.h>
#include <string.h>

#include "server/ae.h"
#include "server/function.h"
#include "server/script.h"
#include "server/server.h"

enum { PAUSE_OFF = 0, PAUSE_WRITE = 1, PAUSE_ALL = 2 };

static int pause_type;
static int64_t pause_end_ms;
static int failover_pause; /* FAILOVER holds writes until it ends */
static client **held;      /* postponed or waiting, in arrival order */
static size_t nheld, held_cap;

int pause_active(void)
{
    return pause_type != PAUSE_OFF || failover_pause;
}

uint64_t pause_blocked_clients(void)
{
    return nheld;
}

static void hold(client *c)
{
    if (nheld == held_cap) {
        held_cap = held_cap ? held_cap * 2 : 8;
        held = realloc(held, held_cap * sizeof(*held));
        if (!held) abort();
    }
    held[nheld++] = c;
}

static void unhold(client *c)
{
    for (size_t i = 0; i < nheld; i++) {
        if (held[i] == c) {
            memmove(&held[i], &held[i + 1], (nheld - i - 1) * sizeof(*held));
            nheld--;
            return;
        }
    }
}

/* A script command's flags as Redis's getCommandFlags: a script that
 * declares its flags (a shebang, a function's flags) writes unless it is
 * no-writes and never "may replicate"; one that declares none (EVAL
 * without shebang, EVALSHA of an unknown sha) keeps the command's. */
static uint32_t script_flags(const arg *argv, int argc, const struct command *cmd)
{
    int sf = 0, known = 0;
    if (argc < 2) return cmd->flags;
    if (cmd->proc == cmd_eval || cmd->proc == cmd_eval_ro) {
        size_t skip;
        char *err = NULL;
        known = script_parse_shebang(argv[1].ptr, argv[1].len, &sf, &skip, &err) == 0;
        free(err);
    } else if (cmd->proc == cmd_evalsha || cmd->proc == cmd_evalsha_ro) {
        known = script_cached_flags(argv[1].ptr, argv[1].len, &sf);
    } else {
        const fn_info *f = function_find(argv[1].ptr, argv[1].len);
        if (f) sf = f->flags, known = 1;
    }
    if (!known || (sf & SCRIPT_FLAG_EVAL_COMPAT)) return cmd->flags;
    uint32_t f = cmd->flags & ~(CMD_WRITE | CMD_MAY_REPLICATE);
    return (sf & SCRIPT_FLAG_NO_WRITES) ? f : f | CMD_WRITE;
}

static uint32_t flags_of(const arg *argv, int argc, const struct command *cmd)
{
    return (cmd->flags & CMD_SCRIPT) ? script_flags(argv, argc, cmd) : cmd->flags;
}

/* Flags of cmd, with those of every queued command for EXEC (Redis's
 * mstate.cmd_flags). */
static uint32_t effective_flags(const client *c, const struct command *cmd)
{
    uint32_t f = flags_of(c->argv, c->argc, cmd);
    if (cmd->proc == cmd_exec && (c->flags & CLIENT_MULTI))
        for (int i = 0; i < c->priv->mq_len; i++)
            f |= flags_of(c->priv->mq[i].argv, c->priv->mq[i].argc, c->priv->mq[i].cmd);
    return f;
}

int pause_applies(const client *c, const struct command *cmd)
{
    if (pause_type == PAUSE_OFF && !failover_pause) return 0;
    if (pause_type == PAUSE_ALL && ae_mstime() < pause_end_ms) return 1;
    if (!failover_pause && ae_mstime() >= pause_end_ms) return 0; /* elapsed: pause_cron ends it */
    return (effective_flags(c, cmd) & (CMD_WRITE | CMD_MAY_REPLICATE)) != 0;
}

void pause_postpone(client *c, const struct command *cmd)
{
    queued_cmd *q = malloc(sizeof(*q));
    if (!q) abort();
    queued_cmd_copy(c, cmd, q);
    c->priv->paused_cmd = q;
    hold(c);
}

/* Runs c's postponed command (which may be held again), then its input. */
static void release(client *c)
{
    struct client_private *p = c->priv;
    queued_cmd *q = p->paused_cmd;
    p->paused_cmd = NULL;
    if (q) {
        int argc = c->argc;
        arg *argv = c->argv;
        c->argc = q->argc;
        c->argv = q->argv;
        server.cmd_time_ms = ae_mstime();
        server_process_command(c);
        c->argc = argc;
        c->argv = argv;
        queued_cmd_free(q);
        free(q);
    }
    if (!p->paused_cmd && !p->waiting) client_resume_input(c);
}

int pause_in_effect;

static void set_pause(int type, int64_t end_ms)
{
    pause_type = type;
    pause_in_effect = type != PAUSE_OFF || failover_pause;
    pause_end_ms = end_ms;
    ks_set_lazy_expire(server.ks, !pause_in_effect);
}

void pause_failover(int on)
{
    failover_pause = on;
    set_pause(pause_type, pause_end_ms);
}

/* Lets every postponed client go (the pause ended); clients held again by
 * a new pause wait once more. */
static void release_all(void)
{
    size_t n = nheld;
    client **v = malloc((n ? n : 1) * sizeof(*v));
    if (!v) abort();
    size_t k = 0;
    for (size_t i = 0; i < nheld; i++)
        if (held[i]->priv->paused_cmd) v[k++] = held[i];
    for (size_t i = 0; i < k; i++)
        unhold(v[i]);
    for (size_t i = 0; i < k; i++)
        release(v[i]);
    free(v);
}

void pause_cron(void)
{
    if (!pause_in_effect && !nheld) return; /* every loop iteration: keep it one test */
    int64_t now = ae_mstime();
    if (pause_type != PAUSE_OFF && now >= pause_end_ms) set_pause(PAUSE_OFF, 0);
    if (pause_type == PAUSE_OFF && !failover_pause && nheld) release_all();
    for (size_t i = 0; i < nheld;) {
        client *c = held[i];
        struct client_private *p = c->priv;
        if (p->waiting && p->wait_deadline_ms && now >= p->wait_deadline_ms) {
            unhold(c);
            p->waiting = 0;
            p->wait_done(c);
            client_resume_input(c);
            continue;
        }
        i++;
    }
}

void pause_client_free(client *c)
{
    struct client_private *p = c->priv;
    if (!p->paused_cmd && !p->waiting) return;
    unhold(c);
    if (p->paused_cmd) {
        queued_cmd_free(p->paused_cmd);
        free(p->paused_cmd);
    }
    p->paused_cmd = NULL;
    p->waiting = 0;
}

void pause_wait_until(client *c, int64_t deadline_ms, void (*done)(client *c))
{
    struct client_private *p = c->priv;
    p->waiting = 1;
    p->wait_deadline_ms = deadline_ms;
    p->wait_done = done;
    hold(c);
}

void pause_wait_end(client *c)
{
    struct client_private *p = c->priv;
    if (!p->waiting) return;
    unhold(c);
    p->waiting = 0;
    p->wait_done(c);
    client_resume_input(c);
}

/* ---- CLIENT PAUSE / UNPAUSE (cmd_conn.c calls these) ---------------------- */

/* Redis's getTimeoutFromObjectOrReply in milliseconds; -1 after replying. */
static int parse_timeout(client *c, const arg *a, int64_t *end)
{
    long long t;
    if (!ks_string2ll(a->ptr, a->len, &t)) {
        add_reply_error(c, "timeout is not an integer or out of range");
        return -1;
    }
    if (t < 0) {
        add_reply_error(c, "timeout is negative");
        return -1;
    }
    int64_t now = ae_mstime();
    if (t > 0 && t > INT64_MAX - now) {
        add_reply_error(c, "timeout is out of range");
        return -1;
    }
    *end = t > 0 ? now + t : 0;
    return 0;
}

int pause_parse_timeout(client *c, const arg *a, int64_t *end)
{
    return parse_timeout(c, a, end);
}

void client_pause_command(client *c)
{
    int type = PAUSE_ALL;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "write"))
            type = PAUSE_WRITE;
        else if (!arg_is(&c->argv[3], "all"))
            return add_reply_error(c, "CLIENT PAUSE mode must be WRITE or ALL");
    }
    int64_t end;
    if (parse_timeout(c, &c->argv[2], &end) < 0) return;
    if (end == 0) end = ae_mstime(); /* 0 ms: a pause that is already over */
    /* As Redis: a second pause extends the first (the stronger type, the
     * later end). */
    if (pause_type != PAUSE_OFF) {
        if (pause_type > type) type = pause_type;
        if (pause_end_ms > end) end = pause_end_ms;
    }
    set_pause(type, end); /* inside EXEC the rest of the transaction still runs: its
                           * commands do not pass the dispatcher's pause check */
    add_reply_ok(c);
}

void client_unpause_command(client *c)
{
    set_pause(PAUSE_OFF, 0);
    add_reply_ok(c);
}
