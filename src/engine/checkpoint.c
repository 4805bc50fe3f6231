/*
 * checkpoint.c -- eng_checkpoint: an openable copy of the database at one
 * sequence number that costs hard links, not a copy, and does not stop
 * writers (after RocksDB's Checkpoint).
 *
 * A database at sequence S is (D1) the tables of the current version plus
 * the logs numbered >= the manifest's log number, which hold every write
 * not yet in a table. So a checkpoint is those same tables, linked, the
 * logs' bytes up to S, copied, and a fresh manifest naming exactly that
 * version:
 *
 *   1. mkdir <dir>.tmp (a left-over one of a failed attempt is removed
 *      first). The checkpoint is built there and only renamed to <dir>
 *      when complete (K4).
 *   2. Under db->mu, for a few instructions: hand the buffered log records
 *      to the OS (so the log files hold every write up to S), read
 *      S = last_seq, pin the current version (its tables are then never
 *      deleted, V4: K1), note the manifest's log number, next_file, the
 *      logs of imm[] and mem with the current log's size, and pin the logs
 *      (log_pins, K2). Writers go on as soon as mu is dropped.
 *   3. Without the lock: hard-link every table of the version into
 *      <dir>.tmp under its own name (NNNNNN.sst); where link() fails with
 *      EXDEV (another file system) copy it instead (synced). Copy each log
 *      up to its size noted in 2 (K3); logs are append-only, so that
 *      prefix holds exactly the writes <= S that are not in the tables.
 *   4. Unpin the logs (the last unpin deletes the ones the flush thread
 *      retired meanwhile) and write MANIFEST-<next_file> holding the
 *      version, with log_number as noted, next_file + 1 and last_seq S,
 *      then CURRENT (temp file, fsync, rename, fsync dir: manifest.c).
 *   5. fsync <dir>.tmp, rename it to <dir>, fsync <dir>'s parent.
 * On any failure the version and the logs are unpinned, <dir>.tmp (or
 * <dir>, when the failure came after the rename) is removed and the error
 * returned: there is either no <dir> or a complete one. Every file
 * operation goes through env (E1), so env_fault can fail each of them.
 *
 * The result is an ordinary database directory (FORMAT.md) with nothing
 * new in it; opening it replays the copied logs. It shares the tables
 * with the live database as hard links:
 *  K1. A table is linked only while the version holding it is pinned, so
 *      compaction never deletes a file being linked; afterwards the live
 *      database deleting that table only removes its own name.
 *  K2. While log_pins > 0 the flush thread does not delete a log it is done
 *      with (db_retire_log keeps it in retired_logs); the last unpin
 *      deletes them. So a log is never deleted while a checkpoint copies it.
 *  K3. Logs are copied, never linked: the live database appends to its
 *      log, and a table file is never written after it is finished, so the
 *      checkpoint shares only files that neither side writes again.
 *  K4. <dir> appears only by the rename of a complete, synced <dir>.tmp,
 *      so a crash or a failure never leaves a <dir> that looks complete but
 *      is not; CURRENT is written last inside <dir>.tmp as well.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_impl.h"
#include "env.h"
#include "version.h"

#define CKPT_MAX_LOGS (DB_MAX_IMM + 1)

typedef struct ckpt_log {
    uint64_t number;
    uint64_t size; /* bytes to copy; UINT64_MAX: the whole (closed) file */
} ckpt_log;

/* What step 2 pins and notes. */
typedef struct ckpt_view {
    version *v;
    uint64_t seq, log_number, next_file;
    ckpt_log logs[CKPT_MAX_LOGS];
    int nlogs;
} ckpt_view;

void db_retire_log(eng_db *db, uint64_t number)
{
    if (db->log_pins > 0) { /* K2 */
        if (db->nretired == db->capretired) {
            int cap = db->capretired ? 2 * db->capretired : 4;
            uint64_t *p = realloc(db->retired_logs, (size_t)cap * sizeof(*p));
            if (p) {
                db->retired_logs = p;
                db->capretired = cap;
            }
        }
        if (db->nretired < db->capretired) {
            db->retired_logs[db->nretired++] = number;
            return;
        }
        /* Out of memory: keep the log for good; the next open deletes it
         * (it is below the manifest's log number). */
        return;
    }
    char path[PATH_MAX];
    db_filename(path, db->dir, number, "log");
    env_unlink(path);
}

/* Step 2. REQUIRES: mu not held. */
static eng_status pin_view(eng_db *db, ckpt_view *cv)
{
    pthread_mutex_lock(&db->mu);
    eng_status s = db_flush_log(db); /* the log files then hold every write <= seq */
    if (s == ENG_OK) {
        cv->seq = db->last_seq;
        cv->v = db->vs.current;
        version_ref(cv->v); /* K1 */
        cv->log_number = db->vs.log_number;
        cv->next_file = db->vs.next_file;
        cv->nlogs = 0;
        for (int i = 0; i < db->nimm; i++) /* D2: oldest first */
            if (db->imm[i].log_number >= cv->log_number)
                cv->logs[cv->nlogs++] = (ckpt_log){db->imm[i].log_number, UINT64_MAX};
        cv->logs[cv->nlogs++] = (ckpt_log){db->log_number, wal_writer_size(db->log)};
        db->log_pins++; /* K2 */
    }
    pthread_mutex_unlock(&db->mu);
    return s;
}

/* Ends K2's pin; the last one deletes the logs retired meanwhile. */
static void unpin_logs(eng_db *db)
{
    pthread_mutex_lock(&db->mu);
    int n = 0;
    uint64_t *retired = NULL;
    if (--db->log_pins == 0) {
        retired = db->retired_logs;
        n = db->nretired;
        db->retired_logs = NULL;
        db->nretired = db->capretired = 0;
    }
    pthread_mutex_unlock(&db->mu);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        db_filename(path, db->dir, retired[i], "log");
        env_unlink(path);
    }
    free(retired);
}

/* Step 3 for one table: a hard link, or a synced copy across file systems. */
static eng_status link_table(eng_db *db, const char *tmp, uint64_t number)
{
    char from[PATH_MAX], to[PATH_MAX];
    db_filename(from, db->dir, number, "sst");
    db_filename(to, tmp, number, "sst");
    eng_status s = env_link(from, to);
    if (s == ENG_IOERR && env_last_errno() == EXDEV) s = env_copy_file(from, to);
    return s;
}

static eng_status copy_files(eng_db *db, const char *tmp, const ckpt_view *cv)
{
    eng_status s = ENG_OK;
    for (int l = 0; s == ENG_OK && l < ENG_MAX_LEVELS; l++)
        for (int i = 0; s == ENG_OK && i < cv->v->nfiles[l]; i++)
            s = link_table(db, tmp, cv->v->files[l][i]->number);
    for (int i = 0; s == ENG_OK && i < cv->nlogs; i++) {
        char from[PATH_MAX], to[PATH_MAX];
        db_filename(from, db->dir, cv->logs[i].number, "log");
        db_filename(to, tmp, cv->logs[i].number, "log");
        s = env_copy_prefix(from, to, cv->logs[i].size); /* K3 */
    }
    return s;
}

/* Step 4's manifest and CURRENT, through manifest.c on a version set of
 * its own whose directory is tmp (so nothing of the live one changes). */
static eng_status write_manifest(eng_db *db, const char *tmp, const ckpt_view *cv)
{
    version_set vs;
    memset(&vs, 0, sizeof(vs));
    vs.dir = (char *)tmp;
    vs.opts = db->vs.opts;
    eng_status s =
        manifest_write_new(&vs, cv->v, cv->next_file, cv->log_number, cv->next_file + 1, cv->seq);
    wal_writer_abandon(vs.manifest); /* synced by manifest_write_new; NULL on failure */
    free(vs.orphans);
    return s;
}

typedef struct rm_ctx {
    const char *dir;
    eng_status st;
} rm_ctx;

static void rm_entry(void *ctx, const char *name)
{
    rm_ctx *r = ctx;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", r->dir, name);
    eng_status s = env_unlink(path);
    if (s != ENG_OK && s != ENG_NOTFOUND && r->st == ENG_OK) r->st = s;
}

eng_status eng_remove_dir(const char *dir)
{
    rm_ctx r = {dir, ENG_OK};
    eng_status s = env_list_dir(dir, rm_entry, &r);
    if (s != ENG_OK) return env_exists(dir) ? s : ENG_OK;
    if (r.st != ENG_OK) return r.st;
    s = env_rmdir(dir);
    return s == ENG_NOTFOUND ? ENG_OK : s;
}

eng_status eng_checkpoint(eng_db *db, const char *dir, eng_checkpoint_fn pinned, void *ctx,
                          uint64_t *seq)
{
    char final[PATH_MAX], tmp[PATH_MAX + 8];
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || n >= sizeof(final)) return env_error(ENG_INVALID, "bad checkpoint directory");
    memcpy(final, dir, n);
    final[n] = 0;
    snprintf(tmp, sizeof(tmp), "%s.tmp", final);
    if (env_exists(final)) return env_error(ENG_INVALID, "%s already exists", final);

    ckpt_view cv = {0};
    int held = 0, renamed = 0;
    eng_status s = eng_remove_dir(tmp); /* a failed attempt's (K4) */
    if (s == ENG_OK) s = env_mkdir_p(tmp);
    if (s == ENG_OK) s = pin_view(db, &cv);
    held = s == ENG_OK;
    if (held && pinned) pinned(ctx, cv.seq);
    if (s == ENG_OK) s = copy_files(db, tmp, &cv);
    if (held) unpin_logs(db);
    if (s == ENG_OK) s = write_manifest(db, tmp, &cv);
    if (s == ENG_OK) s = env_fsync_dir(tmp);
    if (s == ENG_OK) s = env_rename(tmp, final); /* K4 */
    renamed = s == ENG_OK;
    if (s == ENG_OK) s = env_fsync_parent(final);
    if (cv.v) version_unref(cv.v); /* K1: the live db may delete them now */
    if (s != ENG_OK) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", eng_last_error());
        eng_remove_dir(renamed ? final : tmp);
        env_error(s, "checkpoint %s: %s", final, msg);
        return s;
    }
    if (seq) *seq = cv.seq;
    db_log(db, 2, "checkpoint %s at sequence %" PRIu64 ": %d log(s) copied", final, cv.seq,
           cv.nlogs);
    return ENG_OK;
}
