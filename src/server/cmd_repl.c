/*
 * cmd_repl.c -- REPLICAOF/SLAVEOF, PSYNC, SYNC, REPLCONF, ROLE, WAIT and
 * BACKUP (FAILOVER: repl_failover.c). The work is in repl_master.c / repl_replica.c
 * (REPLICATION.md).
 *
 * BACKUP <dir> writes a new data directory holding exactly the data of the
 * moment the command ran: an engine checkpoint (hard links to the table
 * files) written by a background thread while writes go on (backup.c).
 * `strata-server --dir <dir>` starts from it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/ae.h"
#include "server/backup.h"
#include "server/config.h"
#include "server/repl.h"

void cmd_replicaof(client *c)
{
    if (repl_failover_busy())
        return add_reply_error(c, "REPLICAOF not allowed while failing over.");
    if (arg_is(&c->argv[1], "no") && arg_is(&c->argv[2], "one")) {
        repl_set_master(NULL, 0);
        return add_reply_ok(c);
    }
    long long port;
    if (arg_to_ll(c, &c->argv[2], &port) < 0) return;
    if (port <= 0 || port > 65535) return add_reply_error(c, "Invalid master port");
    if (repl.is_replica && !strcasecmp(repl.master_host, c->argv[1].ptr) &&
        repl.master_port == port) {
        server_log(LL_NOTICE, "REPLICAOF would result into synchronization with the master we "
                              "are already connected with. No operation performed.");
        return add_reply_status(c, "OK Already connected to specified master");
    }
    repl_set_master(c->argv[1].ptr, (int)port);
    add_reply_ok(c);
}

void cmd_psync(client *c)
{
    long long off;
    if (arg_to_ll(c, &c->argv[2], &off) < 0) return;
    /* PSYNC <replid> <offset> FAILOVER: our primary hands over to us (its
     * FAILOVER); we promote ourselves, then answer as a primary. */
    if (c->argc > 3 && arg_is(&c->argv[3], "failover")) {
        server_log(LL_WARNING, "Failover request received for replid %s.", c->argv[1].ptr);
        if (!repl.is_replica)
            return add_reply_error(c, "PSYNC FAILOVER can't be sent to a master.");
        if (strcasecmp(c->argv[1].ptr, repl.replid))
            return add_reply_error(c, "PSYNC FAILOVER replid must match my replid.");
        repl_set_master(NULL, 0);
        server_log(LL_NOTICE, "MASTER MODE enabled (failover request from '%s')", c->addr);
    }
    repl_psync(c, c->argv[1].ptr, off);
}

void cmd_sync(client *c)
{
    repl_psync(c, "?", -1);
}

void cmd_replconf(client *c)
{
    repl_replconf(c);
}

void cmd_role(client *c)
{
    repl_role(c);
}

/* ---- BACKUP (backup.c) ------------------------------------------------ */

void cmd_backup(client *c)
{
    struct stat sb;
    char err[256];
    if (bk_busy()) return add_reply_error(c, "Background save already in progress");
    if (stat(c->argv[1].ptr, &sb) == 0)
        return add_reply_error_fmt(c, "BACKUP target %s already exists", c->argv[1].ptr);
    if (bk_start(BK_BACKUP, c->argv[1].ptr, err, sizeof(err)) < 0) return add_reply_error(c, err);
    add_reply_status(c, "Background backup started");
}

void repl_backup_wait(void)
{
    bk_wait();
}
