/*
 * backup.h -- background checkpoints of the data set (backup.c): BACKUP
 * <dir> and BGSAVE, one at a time, both by eng_checkpoint (hard links to
 * the engine's tables). Command thread only, unless a comment says so.
 */
#ifndef STRATA_BACKUP_H
#define STRATA_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "server/server.h"

enum { BK_BACKUP = 0, BK_BGSAVE = 1 };

/* The directory BGSAVE replaces: "checkpoint" under the data directory. */
#define BK_BGSAVE_DIR "checkpoint"

/* Starts a checkpoint of server.db into dir (BK_BACKUP: dir must not
 * exist; BK_BGSAVE: dir NULL, <data dir>/checkpoint is replaced when the
 * new one is complete) in a background thread, and returns once its
 * contents are fixed: every write made before the call is in it, none
 * made after. Returns 0, or -1 with a Redis-style error text in err (cap
 * bytes) when another one runs or it cannot start. */
int bk_start(int kind, const char *dir, char *err, size_t cap);
/* 1 while a checkpoint runs (reaps a finished one first). */
int bk_busy(void);
/* BGSAVE SCHEDULE while busy: start a BGSAVE when the running one ends. */
void bk_schedule_bgsave(void);
/* Reaps a finished checkpoint, starts a scheduled BGSAVE (server cron). */
void bk_cron(void);
/* Waits for a running checkpoint (shutdown, full sync). */
void bk_wait(void);
/* A save succeeded now (SAVE; the server's start): LASTSAVE is now and
 * rdb_changes_since_last_save counts from server.dirty now. */
void bk_note_save(void);
/* The unix time of the last successful save (LASTSAVE). */
int64_t bk_lastsave(void);
/* INFO persistence: rdb_changes_since_last_save, rdb_bgsave_in_progress,
 * rdb_last_save_time, rdb_last_bgsave_status, rdb_last_bgsave_time_sec,
 * rdb_current_bgsave_time_sec, and BACKUP's backup_in_progress,
 * backup_last_error. */
void bk_info(sbuf *b);

#endif
