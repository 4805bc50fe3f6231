/*
 * repl_failover.c -- FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms],
 * a coordinated hand-over from this primary to one of its replicas, as
 * Redis 7.0 (REPLICATION.md "Coordinated failover"):
 *
 *   no-failover --FAILOVER--> waiting-for-sync: writes are paused
 *     (pause_failover), so the offset stands still; the primary waits
 *     until the target (or, without TO, any replica) has acked the whole
 *     stream;
 *   waiting-for-sync --caught up, or TIMEOUT with FORCE--> failover-in-
 *     progress: the primary turns itself into a replica of the target and
 *     its handshake sends PSYNC <replid> <offset+1> FAILOVER, which makes
 *     the target promote itself before it answers (a partial resync);
 *   failover-in-progress --+CONTINUE / +FULLRESYNC--> no-failover, the
 *     writes resume (they now get READONLY);
 *   any --FAILOVER ABORT, TIMEOUT without FORCE, PSYNC refused--> no-failover
 *     as a primary again.
 *
 * Threading: the command thread only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/ae.h"
#include "server/repl.h"

enum { FO_NONE = 0, FO_WAIT_SYNC = 1, FO_IN_PROGRESS = 2 };

static struct {
    int state;
    int force;
    int64_t end_ms; /* 0: no TIMEOUT */
    char host[256]; /* the target; empty: any replica that catches up */
    int port;
} F;

const char *repl_failover_state(void)
{
    return F.state == FO_NONE        ? "no-failover"
           : F.state == FO_WAIT_SYNC ? "waiting-for-sync"
                                     : "failover-in-progress";
}

int repl_failover_busy(void)
{
    return F.state != FO_NONE;
}

int repl_failover_in_progress(void)
{
    return F.state == FO_IN_PROGRESS;
}

/* Redis's clearFailoverState: the writes resume. */
static void clear_state(void)
{
    F.state = FO_NONE;
    F.force = 0;
    F.end_ms = 0;
    F.host[0] = '\0';
    F.port = 0;
    pause_failover(0);
}

void repl_failover_abort(const char *why)
{
    if (F.state == FO_NONE) return;
    if (F.host[0])
        server_log(LL_NOTICE, "FAILOVER to %s:%d aborted: %s", F.host, F.port, why);
    else
        server_log(LL_NOTICE, "FAILOVER to any replica aborted: %s", why);
    int was_replica = F.state == FO_IN_PROGRESS;
    F.state = FO_NONE; /* before repl_set_master: it is a REPLICAOF NO ONE, allowed now */
    if (was_replica) repl_set_master(NULL, 0);
    clear_state();
}

void repl_failover_psync_answered(int accepted)
{
    if (F.state != FO_IN_PROGRESS) return;
    if (accepted)
        clear_state();
    else
        repl_failover_abort("Failover target rejected psync request");
}

static void start_in_progress(void)
{
    F.state = FO_IN_PROGRESS;
    repl_set_master(F.host, F.port);
    repl_replica_connect_now();
}

/* Redis's updateFailoverStatus: every event-loop iteration. */
void repl_failover_cron(void)
{
    if (F.state != FO_WAIT_SYNC) return;
    if (F.end_ms && F.end_ms <= ae_mstime()) {
        if (!F.force) return repl_failover_abort("Replica never caught up before timeout");
        server_log(LL_NOTICE, "FAILOVER to %s:%d time out exceeded, failing over.", F.host, F.port);
        return start_in_progress();
    }
    int online;
    long long ack;
    if (F.host[0]) {
        if (!repl_replica_find(F.host, F.port, &online, &ack) || ack != repl.offset) return;
    } else if (!repl_replica_caught_up(F.host, sizeof(F.host), &F.port)) {
        return;
    }
    server_log(LL_NOTICE, "Failover target %s:%d is synced, failing over.", F.host, F.port);
    start_in_progress();
}

/* FAILOVER ... (arguments and refusals in Redis's order and texts). */
void cmd_failover(client *c)
{
    if (c->argc == 2 && arg_is(&c->argv[1], "abort")) {
        if (F.state == FO_NONE) return add_reply_error(c, "No failover in progress.");
        repl_failover_abort("Failover manually aborted");
        return add_reply_ok(c);
    }
    long long timeout = 0, port = 0;
    int force = 0;
    const char *host = NULL;
    for (int j = 1; j < c->argc; j++) {
        if (arg_is(&c->argv[j], "timeout") && j + 1 < c->argc && timeout == 0) {
            if (arg_to_ll(c, &c->argv[j + 1], &timeout) < 0) return;
            if (timeout <= 0) return add_reply_error(c, "FAILOVER timeout must be greater than 0");
            j++;
        } else if (arg_is(&c->argv[j], "to") && j + 2 < c->argc && !host) {
            if (arg_to_ll(c, &c->argv[j + 2], &port) < 0) return;
            host = c->argv[j + 1].ptr;
            j += 2;
        } else if (arg_is(&c->argv[j], "force") && !force) {
            force = 1;
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    if (F.state != FO_NONE) return add_reply_error(c, "FAILOVER already in progress.");
    if (repl.is_replica)
        return add_reply_error(c, "FAILOVER is not valid when server is a replica.");
    if (repl_replica_count() == 0)
        return add_reply_error(c, "FAILOVER requires connected replicas.");
    if (force && (!timeout || !host))
        return add_reply_error(c, "FAILOVER with force option requires both a timeout and "
                                  "target HOST and IP.");
    if (host) {
        int online;
        long long ack;
        if (!repl_replica_find(host, (int)port, &online, &ack))
            return add_reply_error(c, "FAILOVER target HOST and PORT is not a replica.");
        if (!online) return add_reply_error(c, "FAILOVER target replica is not online.");
        snprintf(F.host, sizeof(F.host), "%s", host);
        F.port = (int)port;
        server_log(LL_NOTICE, "FAILOVER requested to %s:%lld.", host, port);
    } else {
        server_log(LL_NOTICE, "FAILOVER requested to any replica.");
    }
    F.end_ms = timeout ? ae_mstime() + timeout : 0;
    F.force = force;
    F.state = FO_WAIT_SYNC;
    pause_failover(1);
    add_reply_ok(c);
}
