/*
 * engine.h -- the public interface of strata's storage engine.
 *
 * An ordered map from byte strings to byte strings, stored in a log-structured
 * merge tree: a write-ahead log, a memtable, sorted table files in levels, a
 * manifest, background flush and compaction. The on-disk formats are written
 * down in src/engine/FORMAT.md.
 *
 * This header is the only thing the layers above (keyspace, index, server,
 * bench) may include from src/engine.
 *
 * Threading: every function here is safe to call from any thread. The server
 * calls them from its one command thread; the engine runs its own background
 * threads for flushing, compaction and the once-a-second log sync.
 *
 * Ownership: byte strings passed in are copied by the engine before the call
 * returns, unless a comment says otherwise. Byte strings handed out through
 * an out-pointer are allocated with malloc() (jemalloc) and owned by the caller,
 * who frees them with eng_free(). Pointers returned by eng_iter_key() and
 * eng_iter_value() belong to the iterator and stay valid until it moves.
 */
#ifndef STRATA_ENGINE_H
#define STRATA_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One small status type for the whole engine. Zero is success; ENG_NOTFOUND
 * is positive because it is an answer, not a failure. */
typedef int eng_status;
enum {
    ENG_OK = 0,
    ENG_NOTFOUND = 1,
    ENG_CORRUPTION = -1, /* a checksum or a format check failed */
    ENG_IOERR = -2,      /* the OS refused a read, write, fsync, rename ... */
    ENG_INVALID = -3,    /* a bad argument or a bad state (closed db ...) */
    ENG_NOMEM = -4,
    ENG_BUSY = -5, /* e.g. the directory is locked by another process */
};

/* Returns a static, human-readable name for a status ("Corruption", ...). */
const char *eng_status_str(eng_status s);

/* The last error message with detail (file name, offset, errno text), kept
 * per thread; valid until the next failing engine call on the same thread. */
const char *eng_last_error(void);

/* Log sync policies, as Redis's appendfsync. */
enum {
    ENG_SYNC_ALWAYS = 0,   /* eng_commit(db, 1) is expected after writes */
    ENG_SYNC_EVERYSEC = 1, /* a background thread fsyncs the log each second */
    ENG_SYNC_NO = 2,       /* never fsync the log; the OS decides */
};

/* Decides, during compaction, whether the newest version of a key may be
 * dropped (e.g. a key whose TTL has passed). Called from a background thread,
 * so it must be thread-safe and must not call back into the engine.
 * Returns 1 to drop the entry. The engine turns a dropped entry into a
 * deletion (or drops it outright at the bottom level) so that older versions
 * below never resurface, and never applies the filter to a version that a
 * live snapshot can still see. */
typedef int (*eng_compaction_filter_fn)(void *ctx, const char *key, size_t klen, const char *val,
                                        size_t vlen);

/* Which user keys the tables' bloom filters leave out: keys that only
 * iterators reach (a point read of one is never made, or may cost a block
 * read), so that the filter bits go to the keys point reads look for.
 * skip(ctx, key, klen, &plen) returns 1 to leave the key out, and then
 * sets plen (1..klen, at most ENG_FILTER_MAX_SKIP_PREFIX) to a prefix of
 * it that the table records: every key of the table that starts with a
 * recorded prefix may be missing from its filter, so point reads of such
 * keys skip that table's filter (table_format.md, "Filter block"). It
 * returns 0 to put the key in, setting plen to the length of a prefix all
 * of whose keys also go in (0: this key only). The answers are hints: a
 * builder may put any key in, and leaves a key out only under a prefix it
 * records, so a policy that changes its mind costs space, never answers.
 * Called from the flush and compaction threads: thread-safe, no calls back
 * into the engine. */
#define ENG_FILTER_MAX_SKIP_PREFIX 64

/* eng_options.flush_compression_level: the flush uses compression_level. */
#define ENG_FLUSH_COMPRESSION_SAME (-1000)
typedef struct eng_filter_policy {
    int (*skip)(void *ctx, const char *key, size_t klen, size_t *plen);
    void *ctx;
} eng_filter_policy;

/* Log messages from the engine (recovery dropped N bytes, compaction ...).
 * level: 0 debug, 1 verbose, 2 notice, 3 warning. May be called from
 * background threads. */
typedef void (*eng_log_fn)(void *ctx, int level, const char *msg);

typedef struct eng_options {
    size_t write_buffer_size;      /* memtable size before it is frozen; 64 MiB */
    size_t cache_size;             /* block cache bytes, shared by all tables; 256 MiB */
    size_t row_cache_size;         /* row cache bytes for point lookups (row_cache.h); 0 = off */
    size_t block_size;             /* target uncompressed data block size; 4096 */
    int compression_level;         /* zstd level; 0 turns compression off; 1 */
    int bottom_compression_level;  /* zstd level of a manual compaction's output into the
                                      bottom level (compaction.c, C6); 0 = compression_level; 6 */
    int flush_compression_level;   /* zstd level of the level-0 tables a flush (or log
                                      recovery) writes (flush.c, F2); 0 = blocks stored raw,
                                      negative = zstd's fast levels;
                                      ENG_FLUSH_COMPRESSION_SAME (the default) =
                                      compression_level */
    size_t dict_size;              /* zstd dictionary trained per bottom-level table
                                      (table_format.md); 0 = none; 8 KiB */
    int bloom_bits_per_key;        /* 0 disables bloom filters; 10 */
    int sync_mode;                 /* ENG_SYNC_*; ENG_SYNC_EVERYSEC */
    int create_if_missing;         /* 1 */
    int l0_compaction_trigger;     /* L0 files that start a compaction; 4 */
    int l0_slowdown_trigger;       /* L0 files at which writes are slowed; 12 */
    int l0_stop_trigger;           /* L0 files at which writes wait; 20 */
    uint64_t max_bytes_level_base; /* target size of L1; 256 MiB */
    int level_size_multiplier;     /* 10 */
    uint64_t target_file_size;     /* table file size compaction aims for; 64 MiB */
    eng_compaction_filter_fn compaction_filter; /* NULL: none */
    void *compaction_filter_ctx;
    eng_log_fn log_fn; /* NULL: messages go to stderr at >= notice */
    void *log_ctx;
    int log_recovery;        /* ENG_LOG_RECOVERY_*: a log damaged in the middle; STRICT */
    int read_only;           /* 0; 1: open without writing anything (eng_open) */
    size_t max_record_bytes; /* largest log record; 0 = the format's limit (2 GiB) */
    uint64_t retry_delay_us; /* first delay before failed background work is retried
                                (doubling to 20x that); 0 = 100 ms */
    /* 1: while no snapshot and no iterator is live, a write of a key the
     * memtable has replaces the key's newest entry in the memtable's order
     * instead of adding one before it (memtable.c, M10): overwrites cost no
     * tree insert and the memtable's tree stays the size of its key set.
     * REQUIRES: every read, iterator and snapshot is made on the thread
     * that writes, or otherwise never during eng_write -- a read at the
     * sequence before a write must not meet the write's replace. 0 */
    int inplace_updates;
    /* 1: a readahead thread loads the data blocks that eng_prefetch finds
     * its keys' lookups will need and the block cache does not hold, while
     * the caller runs the lookups before them (db_readahead.c). 0 */
    int readahead;
} eng_options;

/* What recovery does with a log record that is damaged while intact
 * records follow it (a torn tail, with nothing intact after it, is always
 * cut off): refuse to open, naming the file and offset, and change nothing;
 * or replay up to the last good record and keep the damaged log (and every
 * later one) aside as NNNNNN.log.corrupt (NNNNNN.log.unreplayed). */
enum {
    ENG_LOG_RECOVERY_STRICT = 0,
    ENG_LOG_RECOVERY_TRUNCATE = 1,
};

/* Fills *o with the defaults above. */
void eng_options_init(eng_options *o);

typedef struct eng_db eng_db;
typedef struct eng_batch eng_batch;
typedef struct eng_iter eng_iter;
typedef struct eng_snapshot eng_snapshot;

/* ---- Database ---------------------------------------------------------- */

/* Opens (or creates, with create_if_missing) the database in directory
 * `dir`, replaying the log. Takes a lock file so that only one process opens
 * it. On success *out owns the db; close it with eng_close(). opts is copied. */
eng_status eng_open(const char *dir, const eng_options *opts, eng_db **out);

/* Writes out buffered log records, syncs the log, stops the background
 * threads and frees everything. REQUIRES: no open iterators or snapshots. */
eng_status eng_close(eng_db *db);

/* Changes the sync policy of an open db (CONFIG SET appendfsync). */
void eng_set_sync_mode(eng_db *db, int sync_mode);
/* Tables written from now on (flushes, compactions) leave out of their
 * filters the keys policy skips; NULL: every key goes in (the default).
 * *policy must stay valid until it is replaced or the db is closed.
 * Tables already written keep the filter they have. Thread-safe. */
void eng_set_filter_policy(eng_db *db, const eng_filter_policy *policy);

/* ---- Write batches ----------------------------------------------------- */

/* A batch of puts and deletes applied atomically by eng_write(). An indexed
 * batch (indexed = 1) can also be read through: eng_get_batch() and
 * eng_iter_new() with that batch see its pending writes layered over the db,
 * later writes in the batch shadowing earlier ones. This is how a command or
 * a MULTI/EXEC reads its own writes before they are committed. */
eng_batch *eng_batch_new(int indexed);
void eng_batch_free(eng_batch *b);
void eng_batch_clear(eng_batch *b);
void eng_batch_put(eng_batch *b, const char *k, size_t kl, const char *v, size_t vl);
void eng_batch_delete(eng_batch *b, const char *k, size_t kl);
/* Deletes every key k with start <= k < end. */
void eng_batch_delete_range(eng_batch *b, const char *start, size_t sl, const char *end, size_t el);
/* Savepoints nest: rollback drops every op added since the newest savepoint
 * (and its index entries) and removes that savepoint; pop removes it and
 * keeps the ops. Both return ENG_NOTFOUND when there is no savepoint. The
 * server sets one before each command so a command that fails writes
 * nothing, even inside MULTI/EXEC. */
void eng_batch_set_savepoint(eng_batch *b);
eng_status eng_batch_rollback(eng_batch *b);
eng_status eng_batch_pop_savepoint(eng_batch *b);
size_t eng_batch_count(const eng_batch *b);     /* operations in the batch */
size_t eng_batch_byte_size(const eng_batch *b); /* its encoded size */

/* Replication moves batches between servers in their encoded form (the
 * payload of a log record, FORMAT.md "Write batch"). eng_batch_data gives
 * b's encoding, header included (the sequence in it is meaningless until
 * eng_write has set it); the pointer belongs to b and is valid until b
 * changes. eng_batch_append_data adds the ops of an encoded batch, in
 * order, to b; ENG_CORRUPTION when p does not parse, and then b is
 * unchanged. */
const char *eng_batch_data(eng_batch *b, size_t *len);
eng_status eng_batch_append_data(eng_batch *b, const char *p, size_t n);

/* Flags for eng_write(). */
enum {
    ENG_WRITE_SYNC = 1,  /* write() and fsync the log before returning */
    ENG_WRITE_DEFER = 2, /* leave the record in the log buffer; it reaches
                            the OS at the next eng_commit() (group commit) */
};

/* Applies the batch atomically: after a crash either all of it is there or
 * none of it. The writes are visible to readers when this returns. Without
 * flags the log record is handed to the OS with write() before returning.
 * May sleep when level 0 is too far behind (a stall; counted in the stats).
 * The batch is not consumed: clear or free it afterwards.
 * Errors: a batch over options.max_record_bytes is ENG_INVALID and nothing
 * of it is applied; while writes are refused (eng_write_status) the error is
 * returned and nothing is applied; when the log write fails the batch is not
 * applied and the engine starts refusing writes; when only the ENG_WRITE_SYNC
 * fsync fails the batch is applied and visible, and durable once the engine
 * has recovered (eng_health.recoveries moves). */
eng_status eng_write(eng_db *db, eng_batch *b, int flags);

/* Writes every buffered log record with one write() and, if sync, fsyncs the
 * log so that every batch written so far is durable (group commit). On
 * failure the batches written with ENG_WRITE_DEFER since the last successful
 * commit are applied (visible) but not yet durable: the engine refuses writes
 * and makes them durable in the background by flushing their memtable; they
 * are durable when eng_health.recoveries has moved past its value now. */
eng_status eng_commit(eng_db *db, int sync);

/* ---- Reads ------------------------------------------------------------- */

/* A consistent view as of now; release it with eng_snapshot_release(). */
const eng_snapshot *eng_snapshot_new(eng_db *db);
void eng_snapshot_release(eng_db *db, const eng_snapshot *s);

/* Point lookup. snap may be NULL (latest). On ENG_OK *val (malloc'd, owned by
 * the caller) and *vlen are set; ENG_NOTFOUND when absent. */
eng_status eng_get(eng_db *db, const eng_snapshot *snap, const char *k, size_t kl, char **val,
                   size_t *vlen);

/* As eng_get, but first looks in batch b (indexed), which shadows the db. */
eng_status eng_get_batch(eng_db *db, const eng_snapshot *snap, eng_batch *b, const char *k,
                         size_t kl, char **val, size_t *vlen);

/* A hint before n point reads of keys[0..n), each followed by a write
 * where writes[i] (say, the commands of a pipeline): starts loading what
 * they will read in the current memtable -- its hash index slots, the
 * entries found and, for the writes, the tree paths an insert takes
 * (mem_tree_read.c: the descents go together, so their cache misses overlap
 * rather than follow one another) -- and, for keys the memtables do not
 * hold, in the tables (db_prefetch.c: filter lines, caches, the data block
 * and its restart interval, which the read on the same thread then takes
 * instead of searching for them). Changes no answer; at most 32 keys are
 * looked at. Any thread; pins the current superversion under db->mu for
 * the call. */
void eng_prefetch(eng_db *db, size_t n, const char *const *keys, const size_t *lens,
                  const unsigned char *writes);

/* A hint that keys starting with prefix p[0..n) (at most 16 bytes; at
 * most 32 prefixes per db) are read only by iterators, never (or rarely)
 * by eng_get: the memtable then keeps them out of its hash index, so their
 * writes cost less memory and time; an eng_get of such a key is still
 * right, by a tree descent instead of a hash probe. Cannot be undone for
 * the db's life (a prefix no longer written costs nothing). Returns 1 when
 * taken, 0 when it does not fit (then nothing changes). Any thread. */
int eng_hint_scan_only_prefix(eng_db *db, const char *p, size_t n);

/* Point lookups of keys[0..n) at one view (snap, or now) through batch b
 * (indexed, may be NULL), as n eng_get_batch calls would answer them, with
 * the results in m (eng_mget_new; reused from call to call). The view is
 * pinned once, the keys' first cache misses (memtable index slots, filter
 * lines) are started together, and keys are read from the tables in key
 * order, so neighbouring keys read their data block once. Values are not
 * copied: they stay valid until the next eng_multi_get on m or
 * eng_mget_free, and b must not change meanwhile. Returns ENG_OK (each
 * key's own answer, found, absent or an error, in m) or ENG_NOMEM. */
typedef struct eng_mget eng_mget;
eng_mget *eng_mget_new(void);
void eng_mget_free(eng_mget *m);
/* Drops what the last eng_multi_get pinned (its view: memtables and table
 * files, and data blocks) but keeps m's arrays for the next call. A caller
 * that keeps m between commands releases it when done with the values:
 * until then a compaction's inputs stay on disk and retired memtables in
 * memory. */
void eng_mget_release(eng_mget *m);
eng_status eng_multi_get(eng_db *db, const eng_snapshot *snap, eng_batch *b, size_t n,
                         const char *const *keys, const size_t *klens, eng_mget *m);
/* Key i's answer: ENG_OK with *val and *vlen set (the engine's memory, see
 * above), ENG_NOTFOUND, or the error its read met. REQUIRES: i < n. */
eng_status eng_mget_value(const eng_mget *m, size_t i, const char **val, size_t *vlen);

/* An iterator over a consistent view: snap (NULL: a snapshot taken now),
 * with the pending writes of indexed batch b on top (b may be NULL; it must
 * not change while the iterator is used). Writes, flushes and compactions
 * after creation do not affect it. Starts unpositioned. */
eng_iter *eng_iter_new(eng_db *db, const eng_snapshot *snap, eng_batch *b);
void eng_iter_free(eng_iter *it);
void eng_iter_seek_first(eng_iter *it);
void eng_iter_seek_last(eng_iter *it);
void eng_iter_seek(eng_iter *it, const char *k, size_t kl);      /* first key >= k */
void eng_iter_seek_prev(eng_iter *it, const char *k, size_t kl); /* last key <= k */
void eng_iter_next(eng_iter *it);
void eng_iter_prev(eng_iter *it);
int eng_iter_valid(const eng_iter *it);
const char *eng_iter_key(const eng_iter *it, size_t *kl);
const char *eng_iter_value(const eng_iter *it, size_t *vl);
/* eng_iter_next, then eng_iter_valid, and when valid the new entry's key
 * and value as eng_iter_key and eng_iter_value give them, in one call (a
 * scan's loop wants all four every step). Returns eng_iter_valid. */
int eng_iter_next_entry(eng_iter *it, const char **k, size_t *kl, const char **v, size_t *vl);
/* ENG_OK, or the error (e.g. ENG_CORRUPTION) that made the iterator invalid. */
eng_status eng_iter_status(const eng_iter *it);
/* Internal entries the iterator has looked at since it was created (older
 * versions, deletions, entries under range tombstones included): what a
 * scan costs, as RocksDB's internal_key_skipped_count. */
uint64_t eng_iter_steps(const eng_iter *it);
/* User keys the forward moves (seeks and eng_iter_next) have stepped over
 * since it was created because their newest visible version is a point
 * deletion: each one counted once per time it is passed (keys under a
 * range tombstone are not counted). What the walk found deleted in the
 * range it crossed, as opposed to eng_iter_steps's internal entries. */
uint64_t eng_iter_deleted(const eng_iter *it);

/* Lets it step over a table data block that fails its checks instead of
 * stopping with ENG_CORRUPTION: every key the block could hold is left out
 * (never an older version in its place) and the block is reported (here,
 * in the engine's log and in eng_stats.damaged_blocks_skipped). For
 * listings that should go on where they can (SCAN, KEYS, checks); a read
 * that must be complete leaves it off. Call it before positioning it. */
void eng_iter_skip_damaged(eng_iter *it);
/* The number of damaged blocks it stepped over; for i below that, a
 * description of block i (file, offset, key range) in buf. */
size_t eng_iter_damaged(const eng_iter *it, size_t i, char *buf, size_t cap);

/* ---- Maintenance ------------------------------------------------------- */

/* Freezes the memtable and waits until it is written to a table (SAVE). */
eng_status eng_flush(eng_db *db);

/* Compacts every level into the bottom one for keys in [start, end)
 * (NULL = unbounded) and waits for it; afterwards overwritten and deleted
 * versions that no snapshot needs are gone. */
eng_status eng_compact_range(eng_db *db, const char *start, size_t sl, const char *end, size_t el);

/* Writes a checkpoint of db into the new directory dir: a database that
 * eng_open opens to exactly the data of one moment (every write up to one
 * sequence number, *seq when seq is not NULL), made of hard links to the
 * live table files (a copy where dir is on another file system), a copy of
 * the live logs' records up to that sequence, and a fresh manifest and
 * CURRENT (checkpoint.c). Writers are held only for the few instructions
 * that pin the current version and note the logs' sizes; flushes and
 * compactions go on, and the files being linked stay on disk until
 * linked. dir is built as dir.tmp (a left-over dir.tmp is removed first)
 * and renamed to dir when complete and synced, so after a failure or a
 * crash there is no dir, or a complete one. The checkpoint shares only
 * finished tables with db: neither side ever writes them again, and either
 * deleting one removes only its own name.
 * Returns ENG_OK; ENG_INVALID when dir exists; the error of the step that
 * failed (then nothing of dir or dir.tmp is left, as far as the removal
 * could). REQUIRES: db open and writable; eng_close waits for no
 * checkpoint, so the caller finishes every checkpoint before closing.
 * pinned (may be NULL) is called once, from the calling thread with no
 * lock held, as soon as the checkpoint's contents are fixed (before the
 * files are linked and copied), with its sequence: a caller that must
 * order the checkpoint against its own writes waits for it, not for the
 * whole checkpoint. Not called when the checkpoint fails before that.
 * Takes db's mutex briefly; any thread. */
typedef void (*eng_checkpoint_fn)(void *ctx, uint64_t seq);
eng_status eng_checkpoint(eng_db *db, const char *dir, eng_checkpoint_fn pinned, void *ctx,
                          uint64_t *seq);

/* Removes a database directory (a checkpoint no longer wanted): every
 * file in dir, then dir. Not recursive: a directory in dir is an error.
 * ENG_OK also when dir does not exist. REQUIRES: no engine has dir open. */
eng_status eng_remove_dir(const char *dir);

/* Bytes of live table files plus log files in the directory. */
uint64_t eng_disk_usage(eng_db *db);

#define ENG_MAX_LEVELS 7

typedef struct eng_stats {
    uint64_t level_files[ENG_MAX_LEVELS];
    uint64_t level_bytes[ENG_MAX_LEVELS];
    uint64_t memtable_bytes;      /* active + immutable */
    uint64_t immutable_memtables; /* waiting to be flushed */
    uint64_t log_bytes;           /* size of the live log file(s) */
    uint64_t bytes_written_user;  /* bytes of batches written by callers */
    uint64_t bytes_written_log;
    uint64_t bytes_written_flush;
    uint64_t bytes_written_compaction;
    uint64_t bytes_read_compaction;
    uint64_t flushes;
    uint64_t compactions;
    uint64_t compactions_running; /* 0 or 1: the compaction thread is merging */
    uint64_t compaction_pending;  /* 1: a level is over its target (score >= 1) */
    uint64_t cache_capacity;
    uint64_t cache_usage;
    uint64_t cache_hits;
    uint64_t cache_misses;
    uint64_t row_cache_capacity; /* 0 when the row cache is off */
    uint64_t row_cache_usage;
    uint64_t row_cache_hits;   /* table lookups answered by the row cache */
    uint64_t row_cache_misses; /* table lookups it passed on to the table */
    uint64_t bloom_useful;     /* table reads avoided by a bloom filter */
    uint64_t stall_slowdowns;  /* writes delayed because L0 was behind */
    uint64_t stall_stops;      /* writes that waited for a compaction */
    uint64_t stall_micros;     /* time writers spent delayed or stopped */
    uint64_t last_sequence;
    uint64_t log_syncs;
    uint64_t background_errors;      /* a flush or compaction failed */
    uint64_t damaged_blocks_skipped; /* by iterators told to (eng_iter_skip_damaged) */
    uint64_t readahead_loads;        /* data blocks the readahead thread read */
    uint64_t readahead_cached;       /* its jobs whose block was cached by then */
    uint64_t readahead_dropped;      /* its jobs dropped from a full queue */
} eng_stats;

void eng_get_stats(eng_db *db, eng_stats *st);

/* ---- Faults ------------------------------------------------------------ */

/* One kind of background work that can fail and is retried: writing the
 * log, flushing a memtable, compacting. */
typedef struct eng_fault_info {
    int failing;       /* the last attempt failed (and a retry is pending) */
    int err;           /* its errno (0: not a system error) */
    int64_t since_ms;  /* unix ms of the first failure of this run; 0 when not failing */
    uint64_t failures; /* failed attempts since open */
    char error[256];   /* the last failure's message */
} eng_fault_info;

typedef struct eng_health {
    eng_fault_info log, flush, compaction;
    uint64_t recoveries; /* times writes resumed after the log failed */
    int writes_refused;  /* eng_write_status() != ENG_OK */
} eng_health;

/* A snapshot of the fault state (INFO persistence). */
void eng_get_health(eng_db *db, eng_health *h);

/* ENG_OK when eng_write would accept a write now; otherwise the error it
 * would return, with its message in eng_last_error() and the errno behind
 * it in env terms (eng_health). Writes are refused while the log cannot be
 * written or synced (until the writes it held are in a table and a new log
 * exists), and while the memtable is full and its flush fails, or level 0
 * is full and compaction fails. Cheap when nothing fails (one atomic load). */
eng_status eng_write_status(eng_db *db);

/* ---- Offline check and repair (strata-check) -------------------------- */

/* How serious a finding is. */
enum {
    ENG_CHECK_NOTE = 0,     /* information (where a repair would start ...) */
    ENG_CHECK_WARNING = 1,  /* harmless: a torn log tail, a left-over file */
    ENG_CHECK_DAMAGE = 2,   /* data is damaged or cannot be found */
    ENG_CHECK_REPAIRED = 3, /* eng_repair_dir changed this */
};

/* One finding: file is a path, offset UINT64_MAX when none applies. */
typedef void (*eng_check_fn)(void *ctx, int severity, const char *file, uint64_t offset,
                             const char *what);

typedef struct eng_check_report {
    uint64_t manifests, logs, log_records, tables, table_blocks;
    uint64_t problems, warnings, repaired;
} eng_check_report;

/* Verifies the database files in dir without changing anything: CURRENT
 * and the manifest (every record; each table it names present, of its size,
 * the recorded file), every log (records, checksums, batches, how it ends),
 * every table (every block's checksum and contents). Calls fn for each
 * finding. Takes the directory's lock: ENG_BUSY while it is open. Returns
 * ENG_OK when the check ran (problems counts the damage). */
eng_status eng_check_dir(const char *dir, eng_check_fn fn, void *ctx, eng_check_report *out);

/* Repairs what eng_check_dir finds that can be repaired, after copying
 * CURRENT and every manifest into backup_dir: a missing or unusable CURRENT
 * is pointed at the newest manifest that replays; tables that are missing,
 * damaged or not the recorded file are set aside (NNNNNN.sst.damaged) and a
 * new manifest leaves them out (what reads of a damaged one is salvaged
 * into a new table at its level) -- the keys lost may then show older
 * versions or none; tables no manifest names are set aside
 * (NNNNNN.sst.lost). Logs
 * damaged in the middle are set aside by the next eng_open with
 * ENG_LOG_RECOVERY_TRUNCATE. Takes the directory's lock. */
eng_status eng_repair_dir(const char *dir, const char *backup_dir, eng_check_fn fn, void *ctx,
                          eng_check_report *out);

/* Frees memory the engine handed to the caller (values from eng_get). */
void eng_free(void *p);

#ifdef __cplusplus
}
#endif
#endif
