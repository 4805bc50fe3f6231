/*
 * backup.c -- BACKUP <dir> and BGSAVE: a checkpoint of the engine
 * (eng_checkpoint: hard links to the table files, the live logs copied up
 * to one sequence) written by a background thread while writes go on.
 *
 * One checkpoint runs at a time, BACKUP or BGSAVE. The command thread
 * starts the thread and waits only until the engine has fixed the
 * checkpoint's contents (eng_checkpoint's pinned callback, a few
 * microseconds under the engine's lock): so the checkpoint holds exactly
 * the writes acknowledged before the command, as Redis's fork does.
 *
 * BACKUP <dir> writes the new directory dir (it must not exist; the engine
 * builds dir.tmp and renames it when complete). BGSAVE writes
 * <data dir>/checkpoint.new, then swaps it with <data dir>/checkpoint in
 * one rename (renameat2 RENAME_EXCHANGE; a plain rename when there was
 * none) and removes the previous one, so <data dir>/checkpoint is at every
 * moment a complete checkpoint or absent. The engine ignores directories
 * in its data directory. Either directory is a data directory that
 * `strata-server --dir` starts from, indexes included (they are keys).
 *
 * rdb_changes_since_last_save is Redis's dirty counter (server.dirty, kept
 * by server_write_batch) less its value at the last save: for BGSAVE the
 * value when the checkpoint's contents were fixed, as Redis keeps
 * dirty_before_bgsave at its fork. It counts changed keys, where Redis
 * counts each handler's own changes (an HSET of three fields is 3 there,
 * 1 here); 0 right after a save in both.
 */
#include "server/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "server/ae.h"
#include "server/config.h"

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int have_thread;
    atomic_int running;
    int kind;
    char dir[PATH_MAX];
    /* mu: */
    int pinned, done;
    eng_status st;
    char err[256];
    /* command thread: */
    int64_t start_ms;
    int scheduled;
    int last_bgsave_ok;     /* rdb_last_bgsave_status */
    int64_t last_bgsave_ms; /* its duration; -1: none yet */
    uint64_t save_dirty;    /* server.dirty at the last save */
    uint64_t start_dirty;   /* server.dirty when the running checkpoint began */
    char backup_err[256];   /* backup_last_error */
} J = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, .last_bgsave_ok = 1,
       .last_bgsave_ms = -1};

static void on_pinned(void *ctx, uint64_t seq)
{
    (void)ctx;
    (void)seq;
    pthread_mutex_lock(&J.mu);
    J.pinned = 1;
    pthread_cond_broadcast(&J.cv);
    pthread_mutex_unlock(&J.mu);
}

static int fsync_dir_of(const char *path)
{
    char d[PATH_MAX];
    snprintf(d, sizeof(d), "%s", path);
    char *slash = strrchr(d, '/');
    if (slash == d)
        d[1] = 0;
    else if (slash)
        *slash = 0;
    else
        snprintf(d, sizeof(d), ".");
    int fd = open(d, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Puts the complete checkpoint next in place of final in one rename, then
 * removes the one it replaced. -1 with err set on failure. */
static int replace_dir(const char *next, const char *final, char *err, size_t cap)
{
    int swapped = 1;
#ifdef SYS_renameat2
    if (syscall(SYS_renameat2, AT_FDCWD, next, AT_FDCWD, final, 2 /* RENAME_EXCHANGE */) != 0)
        swapped = 0;
#else
    swapped = 0, errno = ENOSYS;
#endif
    if (!swapped && errno == ENOENT && rename(next, final) == 0) return fsync_dir_of(final);
    if (!swapped && errno != ENOENT) { /* no exchange here: a short window without one */
        char old[PATH_MAX + 8];
        snprintf(old, sizeof(old), "%s.old", final);
        eng_remove_dir(old);
        if (rename(final, old) == 0 && rename(next, final) == 0) {
            eng_remove_dir(old);
            return fsync_dir_of(final);
        }
    }
    if (!swapped) {
        snprintf(err, cap, "Can't rename %.100s to %.100s: %s", next, final, strerror(errno));
        return -1;
    }
    eng_remove_dir(next); /* the previous checkpoint, swapped out */
    return fsync_dir_of(final);
}

static void *bk_main(void *arg)
{
    (void)arg;
    char err[256] = "";
    uint64_t seq = 0;
    eng_status st;
    if (J.kind == BK_BACKUP) {
        st = eng_checkpoint(server.db, J.dir, on_pinned, NULL, &seq);
    } else {
        char next[PATH_MAX + 8];
        snprintf(next, sizeof(next), "%s.new", J.dir);
        st = eng_remove_dir(next); /* a failed one's */
        if (st == ENG_OK) st = eng_checkpoint(server.db, next, on_pinned, NULL, &seq);
        if (st == ENG_OK && replace_dir(next, J.dir, err, sizeof(err)) < 0) {
            st = ENG_IOERR;
            eng_remove_dir(next);
        }
    }
    if (st != ENG_OK && !err[0]) snprintf(err, sizeof(err), "%s", eng_last_error());
    server_log(st == ENG_OK ? LL_NOTICE : LL_WARNING, "%s to %s %s%s",
               J.kind == BK_BACKUP ? "BACKUP" : "Background saving", J.dir,
               st == ENG_OK ? "done" : "failed: ", err);
    pthread_mutex_lock(&J.mu);
    J.st = st;
    snprintf(J.err, sizeof(J.err), "%s", err);
    J.done = 1;
    pthread_cond_broadcast(&J.cv);
    pthread_mutex_unlock(&J.mu);
    atomic_store(&J.running, 0);
    return NULL;
}

/* Takes in what a finished thread left. */
static void reap(void)
{
    pthread_join(J.thread, NULL);
    J.have_thread = 0;
    if (J.st == ENG_OK) {
        server.lastsave_s = ae_mstime() / 1000;
        J.save_dirty = J.start_dirty;
    }
    J.last_bgsave_ok = J.st == ENG_OK;
    J.last_bgsave_ms = ae_mstime() - J.start_ms;
    if (J.kind == BK_BACKUP) snprintf(J.backup_err, sizeof(J.backup_err), "%s", J.err);
}

int bk_busy(void)
{
    if (atomic_load(&J.running)) return 1;
    if (J.have_thread) reap();
    return 0;
}

int bk_start(int kind, const char *dir, char *err, size_t cap)
{
    if (bk_busy()) {
        snprintf(err, cap, "Background save already in progress");
        return -1;
    }
    J.kind = kind;
    if (kind == BK_BACKUP)
        snprintf(J.dir, sizeof(J.dir), "%s", dir);
    else
        snprintf(J.dir, sizeof(J.dir), "%s/%s", cfg.dir, BK_BGSAVE_DIR);
    server_commit(); /* what was acknowledged so far is in the checkpoint */
    J.pinned = J.done = 0;
    J.err[0] = 0;
    J.start_ms = ae_mstime();
    J.start_dirty = server.dirty; /* the command thread waits for the pin below */
    atomic_store(&J.running, 1);
    if (pthread_create(&J.thread, NULL, bk_main, NULL) != 0) {
        atomic_store(&J.running, 0);
        snprintf(err, cap, "Can't start the background save thread");
        return -1;
    }
    J.have_thread = 1;
    pthread_mutex_lock(&J.mu);
    while (!J.pinned && !J.done)
        pthread_cond_wait(&J.cv, &J.mu);
    pthread_mutex_unlock(&J.mu);
    return 0;
}

void bk_schedule_bgsave(void)
{
    J.scheduled = 1;
}

void bk_cron(void)
{
    if (bk_busy() || !J.scheduled) return;
    char err[128];
    J.scheduled = 0;
    if (bk_start(BK_BGSAVE, NULL, err, sizeof(err)) < 0) server_log(LL_WARNING, "%s", err);
}

void bk_wait(void)
{
    if (!J.have_thread) return;
    pthread_join(J.thread, NULL);
    J.have_thread = 0;
    atomic_store(&J.running, 0);
}

void bk_note_save(void)
{
    server.lastsave_s = ae_mstime() / 1000;
    J.save_dirty = server.dirty;
}

int64_t bk_lastsave(void)
{
    bk_busy();
    return server.lastsave_s;
}

void bk_info(sbuf *b)
{
    int running = bk_busy();
    int bgsave = running && J.kind == BK_BGSAVE;
    sb_printf(b,
              "rdb_changes_since_last_save:%llu\r\nrdb_bgsave_in_progress:%d\r\n"
              "rdb_last_save_time:%lld\r\nrdb_last_bgsave_status:%s\r\n"
              "rdb_last_bgsave_time_sec:%lld\r\nrdb_current_bgsave_time_sec:%lld\r\n",
              (unsigned long long)(server.dirty - J.save_dirty), bgsave,
              (long long)server.lastsave_s, J.last_bgsave_ok ? "ok" : "err",
              J.last_bgsave_ms < 0 ? -1LL : (long long)(J.last_bgsave_ms / 1000),
              bgsave ? (long long)((ae_mstime() - J.start_ms) / 1000) : -1LL);
    sb_printf(b, "backup_in_progress:%d\r\nbackup_last_error:%s\r\n",
              running && J.kind == BK_BACKUP, J.backup_err);
}
