/*
 * cmd_repl.c -- REPLICAOF/SLAVEOF, PSYNC, SYNC, REPLCONF, ROLE, WAIT and
 * BACKUP (FAILOVER: repl_failover.c). The work is in repl_master.c / repl_replica.c
 * (REPLICATION.md).
 *
 * BACKUP <dir> writes a new data directory holding exactly the data of the
 * moment the command ran: an engine snapshot taken in the command, copied
 * by a background thread into a fresh engine opened in <dir> (so the copy
 * has the engine's own format and checks), synced and closed. Writes go on
 * meanwhile. `strata-server --dir <dir>` starts from it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/ae.h"
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

/* ---- BACKUP ------------------------------------------------------------- */

static atomic_int backup_running;
static pthread_t backup_thread;
static const eng_snapshot *backup_snap;
static char *backup_dir;
static char backup_err[256];
static atomic_llong backup_done_s;

static void *backup_main(void *arg)
{
    (void)arg;
    eng_options o;
    eng_options_init(&o);
    o.sync_mode = ENG_SYNC_NO;
    eng_db *dst = NULL;
    eng_iter *it = NULL;
    eng_batch *b = eng_batch_new(0);
    eng_status st = eng_open(backup_dir, &o, &dst);
    if (st != ENG_OK) goto cleanup;
    it = eng_iter_new(server.db, backup_snap, NULL);
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        eng_batch_put(b, k, kl, v, vl);
        if (eng_batch_byte_size(b) >= (1u << 20)) {
            if ((st = eng_write(dst, b, 0)) != ENG_OK) goto cleanup;
            eng_batch_clear(b);
        }
    }
    if ((st = eng_iter_status(it)) != ENG_OK) goto cleanup;
    if (eng_batch_count(b) && (st = eng_write(dst, b, 0)) != ENG_OK) goto cleanup;
    st = eng_flush(dst); /* the copy is tables, not a log to replay */
    if (st == ENG_OK) st = eng_commit(dst, 1);
cleanup:
    if (st != ENG_OK) snprintf(backup_err, sizeof(backup_err), "%s", eng_last_error());
    if (it) eng_iter_free(it);
    eng_batch_free(b);
    if (dst && eng_close(dst) != ENG_OK && st == ENG_OK) {
        st = ENG_IOERR;
        snprintf(backup_err, sizeof(backup_err), "%s", eng_last_error());
    }
    eng_snapshot_release(server.db, backup_snap);
    if (st == ENG_OK) atomic_store(&backup_done_s, ae_mstime() / 1000);
    server_log(st == ENG_OK ? LL_NOTICE : LL_WARNING, "BACKUP to %s %s%s", backup_dir,
               st == ENG_OK ? "done" : "failed: ", st == ENG_OK ? "" : backup_err);
    atomic_store(&backup_running, 0);
    return NULL;
}

/* Reaps a finished backup thread; 1 while one runs. */
static int backup_busy(void)
{
    if (atomic_load(&backup_running)) return 1;
    if (backup_thread) {
        pthread_join(backup_thread, NULL);
        backup_thread = 0;
        long long s = atomic_load(&backup_done_s);
        if (s) server.lastsave_s = s;
    }
    return 0;
}

void cmd_backup(client *c)
{
    if (backup_busy()) return add_reply_error(c, "Background save already in progress");
    struct stat sb;
    if (stat(c->argv[1].ptr, &sb) == 0)
        return add_reply_error_fmt(c, "BACKUP target %s already exists", c->argv[1].ptr);
    if (mkdir(c->argv[1].ptr, 0755) < 0)
        return add_reply_error_fmt(c, "Can't create %s: %s", c->argv[1].ptr, strerror(errno));
    server_commit(); /* what was acknowledged so far is in the copy */
    backup_err[0] = 0;
    free(backup_dir);
    backup_dir = strdup(c->argv[1].ptr);
    backup_snap = eng_snapshot_new(server.db);
    atomic_store(&backup_done_s, 0);
    atomic_store(&backup_running, 1);
    if (pthread_create(&backup_thread, NULL, backup_main, NULL) != 0) {
        atomic_store(&backup_running, 0);
        backup_thread = 0;
        eng_snapshot_release(server.db, backup_snap);
        return add_reply_error(c, "Can't start the backup thread");
    }
    add_reply_status(c, "Background backup started");
}

void repl_backup_wait(void)
{
    if (!backup_thread) return;
    pthread_join(backup_thread, NULL);
    backup_thread = 0;
}

/* INFO persistence's backup lines. */
void repl_backup_info(sbuf *b)
{
    int running = backup_busy();
    sb_printf(b, "backup_in_progress:%d\r\nbackup_last_error:%s\r\n", running,
              running ? "" : backup_err);
}
