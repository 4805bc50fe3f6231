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
 *  D5. When a write, fsync or close of the log fails, or a new log cannot
 *      be created (db_log_failed), the log is abandoned (log = NULL) and
 *      writes are refused; the memtable holding its writes becomes immutable
 *      (need_freeze, done by the flush thread once a slot is free) under a
 *      reserved log number that no file has yet. Writes resume only after
 *      every such memtable is in a table recorded in the manifest (so the
 *      manifest's log number has passed the failed log, which recovery then
 *      never replays) and the log with the reserved number is created. So a
 *      write the engine took is durable once recoveries moves, and nothing
 *      written after the failure ever lands behind a torn record.
 *  D6. A failed flush or compaction drops nothing: the memtable stays in
 *      imm[], the input tables stay in the version; the thread retries after
 *      a delay (opts.retry_delay_us doubling, db_fault_backoff). Writes are refused
 *      only when they need the failing work (the memtable is full and imm[]
 *      too, or level 0 is at the stop trigger).
 *  D7. faults counts the fault slots (log_fault, flush_fault, compact_fault)
 *      that are failing; 0 means eng_write_status needs no lock.
 */
#ifndef STRATA_DB_IMPL_H
#define STRATA_DB_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

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
    uint64_t imm_max_seq[DB_MAX_IMM];
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
    uint64_t max_seq; /* every entry of mem has a sequence <= this */
    rdel_set *rdels;  /* its tombstones, or NULL */
} imm_entry;

/* One kind of background work that fails and is retried (D5, D6). */
typedef struct bg_fault {
    eng_status st;     /* ENG_OK: not failing */
    int err;           /* errno of the last failure */
    int64_t since_ms;  /* unix ms of the first failure of this run */
    uint64_t failures; /* failed attempts since open */
    char msg[256];
} bg_fault;

/* Retry delays of failed background work (D6). */
#define RETRY_MIN_US 100000u
#define RETRY_MAX_US 2000000u

typedef struct manual_compaction {
    const slice *lo, *hi; /* user-key bounds; NULL = unbounded */
    int done;
    eng_status st;
} manual_compaction;

/* One data block for the readahead thread to load: f's block at offset
 * (size bytes stored). */
typedef struct ra_job {
    file_meta *f;
    uint64_t offset, size;
} ra_job;

/* Jobs queued at most; more drop the oldest. */
#define DB_READAHEAD_QUEUE 256

typedef struct db_readahead {
    pthread_mutex_t mu; /* guards q, head, n, stop, waiting */
    pthread_cond_t cv;
    ra_job q[DB_READAHEAD_QUEUE]; /* a ring: head the oldest, n queued */
    size_t head, n;
    int stop, waiting;
    pthread_t thr;
    int started;                     /* set and cleared by the owner of the db */
    uint64_t loads, cached, dropped; /* atomic: eng_stats.readahead_* */
} db_readahead;

struct eng_db {
    char *dir;
    eng_options opts;
    const eng_filter_policy *filter_policy; /* atomic; NULL: none (eng_set_filter_policy) */
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
    _Atomic int live_iters;        /* eng_iter_new less eng_iter_free (M10) */
    int manifest_busy;
    manual_compaction *manual;
    uint64_t snap_epoch; /* bumped by every eng_snapshot_new (compaction.c, C4) */
    int snap_barrier;    /* new snapshots wait: a filtered compaction is installing */
    eng_status bg_error;
    int shutting_down; /* atomic reads from the compaction loop */
    int sync_mode;
    int log_dirty; /* records written since the last sync */
    eng_stats st;  /* counters; the computed fields are filled by eng_get_stats */
    bg_fault log_fault, flush_fault, compact_fault; /* D5, D6 */
    int need_freeze;                                /* D5: mem holds writes of the failed log */
    int faults;                                     /* D7: atomic reads */
    uint64_t recoveries;                            /* writes resumed after a log failure */
    uint64_t flush_retry_at, compact_retry_at;      /* monotonic us: D6 */
    uint64_t flush_delay, compact_delay;

    mem_scan_only scan_only; /* every memtable's scan-only prefixes; added under mu */

    int log_pins;           /* mu: checkpoints copying logs (checkpoint.c, K2) */
    uint64_t *retired_logs; /* mu: logs retired while pinned, deleted at the last unpin */
    int nretired, capretired;

    pthread_t flush_thr, compact_thr, sync_thr;
    int threads_started;

    db_readahead ra; /* opts.readahead: db_readahead.c */
};

/* ---- db_readahead.c ---------------------------------------------------- */
/* Starts db's readahead thread (eng_open, with opts.readahead). */
void db_readahead_start(eng_db *db);
/* Stops it, dropping what is queued. REQUIRES: nothing adds meanwhile. */
void db_readahead_stop(eng_db *db);
/* Queues jobs[0..n) (in the order their lookups will run; each takes a
 * reference on its file, RA1); nothing when the thread is not running. Any
 * thread. */
void db_readahead_add(eng_db *db, size_t n, const ra_job *jobs);

/* ---- db.c -------------------------------------------------------------- */
/* Logs through opts.log_fn (or stderr at >= notice). Any thread. */
void db_log(eng_db *db, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A new memtable whose arena blocks suit write_buffer_size (a small buffer
 * must not be filled by a single 1 MiB block). */
memtable *db_new_memtable(const eng_db *db);
/* dir/NNNNNN.suffix into out (PATH_MAX bytes). */
void db_filename(char *out, const char *dir, uint64_t number, const char *suffix);

/* ---- db_recover.c -------------------------------------------------------- */
/* Kinds of file in a database directory (FORMAT.md). FT_KEPT: set aside
 * for a human (NNNNNN.sst.lost, NNNNNN.log.corrupt, ...), never deleted. */
enum { FT_LOG, FT_SST, FT_MANIFEST, FT_KEPT, FT_OTHER };
/* The kind of the file called name; *num gets its number. */
int db_parse_name(const char *name, uint64_t *num);
/* Recovery at open (db_recover.c): manifest, logs, table checks, new log
 * and manifest, obsolete files. Single-threaded, before the threads start. */
eng_status db_recover(eng_db *db);

/* ---- db_read.c: superversions ----------------------------------------- */
/* Builds a new sv from mem, imm and vs.current and installs it. REQUIRES: mu. */
void db_install_sv(eng_db *db);
/* Pins the current sv and reads the visible sequence. Takes and drops mu. */
superversion *db_get_sv(eng_db *db, uint64_t *last_seq);
void sv_unref(superversion *sv); /* any thread, with or without mu */
/* The oldest and newest live snapshot sequences; last_seq / 0 when none. REQUIRES: mu. */
uint64_t db_oldest_snapshot(eng_db *db);
uint64_t db_newest_snapshot(eng_db *db);

/* ---- flush.c ----------------------------------------------------------- */
/* F3: the tombstones a flush leaves the entries they cover out under. */
typedef struct db_hide {
    rdel_view v;
    int seek; /* v's are newer than every entry and none is an entry: a flush
                 seeks past the rest of a covering tombstone's range */
} db_hide;
/* Writes the entries of it (internal keys; range deletion entries become the
 * table's tombstones) to table file `number`, without the versions every
 * snapshot at or above oldest_snapshot has a newer one of (F1), nor the
 * point entries a tombstone of hide (NULL: none) visible at oldest_snapshot
 * covers (F3: the caller makes sure that may be dropped). *out is
 * NULL when there was nothing to write (no file left behind), else
 * metadata with refs = 1. Takes no lock. */
eng_status db_build_table(eng_db *db, iter *it, uint64_t number, uint64_t oldest_snapshot,
                          const db_hide *hide, file_meta **out);
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
 * there is no CURRENT; ENG_CORRUPTION when a record before the last is
 * damaged (L2) or an edit does not parse, naming the file and offset. */
eng_status manifest_recover(eng_db *db);
/* Whether any MANIFEST-* file in db->dir names a table (or cannot be
 * read: then it might). */
int manifest_dir_names_tables(eng_db *db);
/* Writes manifest `number` of vs->dir holding the whole of v and the
 * counters, points CURRENT at it (temp file, fsync, rename, fsync dir), and
 * replaces (and deletes) the previous manifest. REQUIRES: the manifest
 * holder, single-threaded recovery or an offline repair. */
eng_status manifest_write_new(version_set *vs, const version *v, uint64_t number,
                              uint64_t log_number, uint64_t next_file, uint64_t last_seq);
/* Replays the manifest at path into vs (current, counters). A torn last
 * record is ignored (note gets a line about it; vs->manifest_damaged is
 * set); damage before an intact record (L2) or an edit that does not parse
 * is ENG_CORRUPTION naming the file and offset. */
eng_status manifest_replay(version_set *vs, const char *path, char *note, size_t cap);
/* The manifest number CURRENT in dir names: ENG_NOTFOUND without CURRENT,
 * ENG_CORRUPTION when its contents are not a manifest name. */
eng_status manifest_read_current(const char *dir, uint64_t *number);
/* Points CURRENT in dir at manifest `number` (temp file, fsync, rename,
 * fsync dir): an offline repair. */
eng_status manifest_set_current(const char *dir, uint64_t number);

/* ---- db_write.c -------------------------------------------------------- */
void *db_sync_thread(void *arg);
/* Freezes mem (new log file, mem -> imm) and wakes the flush thread. On a
 * log failure it calls db_log_failed and returns the error.
 * REQUIRES: mu; nimm < DB_MAX_IMM; log != NULL. */
eng_status db_switch_memtable(eng_db *db);
/* D5: the log failed with s: abandon it, refuse writes, have the flush
 * thread make its writes durable. No-op when the log already failed.
 * REQUIRES: mu. */
void db_log_failed(eng_db *db, eng_status s);
/* Hands every buffered log record to the OS (eng_commit, checkpoint.c):
 * the refused-write error while the log is failing, ENG_INVALID without a
 * log; a failing write is db_log_failed's. REQUIRES: mu. */
eng_status db_flush_log(eng_db *db);
/* db_flush_log, then fdatasyncs the log (mu dropped during the sync): every
 * record written so far is durable when it returns ENG_OK. A failure is a
 * log failure (D5). REQUIRES: mu; returns with it held. */
eng_status db_sync_log(eng_db *db);
/* mem -> imm[nimm] with log number log_number and max_seq = last_seq.
 * REQUIRES: mu; nimm < DB_MAX_IMM. */
void db_push_imm(eng_db *db);

/* ---- checkpoint.c ----------------------------------------------------- */
/* The flush thread is done with log `number` (its memtable is in a table
 * recorded in the manifest, D2): deletes it, or, while a checkpoint is
 * copying logs (K2), keeps it until the last checkpoint is done with them.
 * REQUIRES: mu. */
void db_retire_log(eng_db *db, uint64_t number);

/* ---- db_fault.c ------------------------------------------------------- */
/* Records a failure s (message and errno from this thread's last env
 * error) in f; logs it when f was not failing. REQUIRES: mu. */
void db_fault_note(eng_db *db, bg_fault *f, const char *what, eng_status s);
/* f's work succeeded; logs the recovery when f was failing. REQUIRES: mu. */
void db_fault_clear(eng_db *db, bg_fault *f, const char *what);
/* The error a refused write returns: s with the fault's message and errno.
 * REQUIRES: mu. */
eng_status db_fault_refuse(const bg_fault *f, const char *why);
/* Doubles *delay (opts.retry_delay_us .. 20 times that: RETRY_MIN_US ..
 * RETRY_MAX_US by default) and sets *at = now + delay. */
void db_fault_backoff(const eng_db *db, uint64_t *at, uint64_t *delay);
/* Waits on cv (with mu held) for a signal; with at_us != 0 (a retry
 * delay, D6, in monotonic microseconds) at most until at_us, returning at
 * once when that has passed. Callers loop and re-check their state. */
void db_wait(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t at_us);

#endif
