/*
 * db_impl.h -- the inside of eng_db, shared by db.c, db_write.c, db_read.c,
 * db_iter.c, flush.c, compaction.c and manifest.c.
 *
 * Locking: db->mu protects every field marked "mu" below. It is held for
 * the few instructions that assign a sequence number and insert a batch, to
 * swap memtables and versions, and never across table I/O. Readers take it
 * only to pin the current superversion.
 *
 * Invariants:
 *  D1. Every write with sequence <= last_seq is in mem, an immutable
 *      memtable, or a table of the current version, and the log numbered
 *      >= vs->log_number hold every write not yet in a table.
 *  D2. imm[] is oldest first; imm[i].log_number is the log holding its
 *      writes; a log file is deleted only after its memtable's table is
 *      recorded in the manifest (the manifest's log_number passed it).
 *  D3. The superversion sv reflects mem, imm[] and vs->current; it is
 *      replaced (never mutated) whenever one of them changes, or when mem
 *      gets its first range tombstone, so a reader that pinned it sees a
 *      stable view. (Later tombstones are appended to mem's set, which
 *      readers search without locks, as they search mem itself.)
 *  D4. Only the manifest holder (manifest_busy) changes vs->current, and
 *      only the compaction thread removes files from levels, so a compaction
 *      may build its edit from the version it picked.
 */
#ifndef STRATA_DB_IMPL_H
#define STRATA_DB_IMPL_H

#include <pthread.h>

#include "cache.h"
#include "dbformat.h"
#include "engine.h"
#include "iter.h"
#include "log.h"
#include "memtable.h"
#include "rangedel.h"
#include "version.h"

#define DB_MAX_IMM 2
/* A manifest larger than this is replaced by a fresh one holding a snapshot. */
#define DB_MANIFEST_ROLL_BYTES (UINT64_C(32) << 20)

typedef struct superversion {
    int refs; /* atomic */
    memtable *mem;
    memtable *imm[DB_MAX_IMM]; /* newest first */
    int nimm;
    version *v;
    rdel_view rd; /* the tombstone sets of mem, imm and v (only non-empty ones) */
} superversion;

struct eng_snapshot {
    uint64_t seq;
    struct eng_snapshot *prev, *next;
};

typedef struct imm_entry {
    memtable *mem;
    uint64_t log_number;
    rdel_set *rdels; /* its tombstones, or NULL */
} imm_entry;

typedef struct manual_compaction {
    const slice *lo, *hi; /* user-key bounds; NULL = unbounded */
    int done;
    eng_status st;
} manual_compaction;

struct eng_db {
    char *dir;
    eng_options opts;
    int lock_fd;
    block_cache *cache;
    version_set vs;

    pthread_mutex_t mu;
    pthread_cond_t bg_cv;      /* a flush, compaction or manifest write finished */
    pthread_cond_t flush_cv;   /* work for the flush thread */
    pthread_cond_t compact_cv; /* work for the compaction thread */
    pthread_cond_t sync_cv;    /* wakes the once-a-second sync thread early */

    /* mu: */
    memtable *mem;
    uint64_t log_number; /* the log file of mem */
    rdel_set *mem_rdels; /* tombstones written into mem, or NULL */
    imm_entry imm[DB_MAX_IMM];
    int nimm;
    wal_writer *log;
    uint64_t last_seq;
    superversion *sv;
    struct eng_snapshot snapshots; /* list head; oldest first */
    int manifest_busy;
    manual_compaction *manual;
    uint64_t snap_epoch; /* bumped by every eng_snapshot_new (compaction.c, C4) */
    int snap_barrier;    /* new snapshots wait: a filtered compaction is installing */
    eng_status bg_error;
    int shutting_down; /* atomic reads from the compaction loop */
    int sync_mode;
    int log_dirty; /* records written since the last sync */
    eng_stats st;  /* counters; the computed fields are filled by eng_get_stats */

    pthread_t flush_thr, compact_thr, sync_thr;
    int threads_started;
};

/* ---- db.c -------------------------------------------------------------- */
/* Logs through opts.log_fn (or stderr at >= notice). Any thread. */
void db_log(eng_db *db, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A new memtable whose arena blocks suit write_buffer_size (a small buffer
 * must not be filled by a single 1 MiB block). */
memtable *db_new_memtable(const eng_db *db);
/* dir/NNNNNN.suffix into out (PATH_MAX bytes). */
void db_filename(char *out, const char *dir, uint64_t number, const char *suffix);

/* ---- db_read.c: superversions ----------------------------------------- */
/* Builds a new sv from mem, imm and vs.current and installs it. REQUIRES: mu. */
void db_install_sv(eng_db *db);
/* Pins the current sv and reads the visible sequence. Takes and drops mu. */
superversion *db_get_sv(eng_db *db, uint64_t *last_seq);
void sv_unref(superversion *sv); /* any thread, with or without mu */
/* The oldest and newest live snapshot sequences; last_seq / 0 when none. REQUIRES: mu. */
uint64_t db_oldest_snapshot(eng_db *db);
uint64_t db_newest_snapshot(eng_db *db);
/* The range deletions pending in an indexed batch's memtable m (may be
 * NULL), as a new set; NULL when there are none. */
rdel_set *db_batch_rdels(memtable *m);

/* ---- flush.c ----------------------------------------------------------- */
/* Writes the entries of it (internal keys; range deletion entries become the
 * table's tombstones) to table file `number`, without the versions every
 * snapshot at or above oldest_snapshot has a newer one of (F1). *out is
 * NULL when there was nothing to write (no file left behind), else
 * metadata with refs = 1. Takes no lock. */
eng_status db_build_table(eng_db *db, iter *it, uint64_t number, uint64_t oldest_snapshot,
                          file_meta **out);
void *db_flush_thread(void *arg);

/* ---- compaction.c ------------------------------------------------------ */
void *db_compact_thread(void *arg);

/* ---- manifest.c -------------------------------------------------------- */
/* Records e (with log_number if set, next_file and last_seq filled in) in the
 * manifest, syncs it, and installs the resulting version as current with a
 * new sv; with pop_imm it also retires imm[0] in the same sv swap (D3: a
 * reader never sees a flushed memtable and its table together).
 * REQUIRES: mu held; drops it while writing; returns with it held.
 * On failure current is unchanged and the error is returned. */
eng_status db_log_and_apply(eng_db *db, version_edit *e, int pop_imm);
/* Recovery: reads CURRENT and the manifest into db->vs. ENG_NOTFOUND when
 * there is no CURRENT. */
eng_status manifest_recover(eng_db *db);
/* Writes manifest `number` holding the whole of v and the counters, points
 * CURRENT at it (temp file, fsync, rename, fsync dir), and replaces (and
 * deletes) the previous manifest. REQUIRES: the manifest holder or
 * single-threaded recovery. */
eng_status manifest_write_new(eng_db *db, const version *v, uint64_t number, uint64_t log_number,
                              uint64_t next_file, uint64_t last_seq);

/* ---- db_write.c -------------------------------------------------------- */
void *db_sync_thread(void *arg);
/* Freezes mem (new log file, mem -> imm) and wakes the flush thread.
 * REQUIRES: mu; nimm < DB_MAX_IMM. */
eng_status db_switch_memtable(eng_db *db);

#endif
