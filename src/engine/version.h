/*
 * version.h -- versions: the set of live table files per level at one
 * moment, reference counted so that readers, iterators and compactions keep
 * an old version (and its files) alive while newer versions are installed.
 *
 * Invariants:
 *  V1. Level 0 files are sorted newest first (largest_seq descending) and
 *      may overlap; their sequence ranges do not interleave because each is
 *      one flushed memtable, so the first one holding a key has its newest
 *      version.
 *  V2. Files in a level >= 1 are sorted by smallest key and their key
 *      ranges do not overlap: all versions of one user key live in one file
 *      (compaction cuts output files only between user keys), and a file's
 *      largest key is its last point key or (range end, MAX_SEQ), which
 *      sorts before any real entry for that user key.
 *  V3. For one user key, an entry in a lower-numbered level (or an earlier
 *      L0 file) is newer than any entry in a higher-numbered level.
 *  V4. A table file is deleted exactly when the last version holding it is
 *      released (and deletions are enabled: not during recovery or close).
 */
#ifndef STRATA_VERSION_H
#define STRATA_VERSION_H

#include <pthread.h>

#include "coding.h"
#include "dbformat.h"
#include "engine.h"
#include "iter.h"
#include "log.h"
#include "rangedel.h"
#include "row_cache.h"
#include "table.h"
#include "version_edit.h"

typedef struct version_set version_set;

typedef struct file_meta {
    int refs;       /* atomic: versions and edits that hold the file */
    int in_version; /* set once installed: the last unref deletes the file (V4) */
    uint64_t number, file_size, entries, range_dels, smallest_seq, largest_seq;
    buf smallest, largest; /* internal keys */
    sst_reader *reader;    /* opened on first use (version_table); atomic */
    version_set *vs;
} file_meta;

typedef struct version {
    int refs; /* atomic */
    version_set *vs;
    int nfiles[ENG_MAX_LEVELS];
    file_meta **files[ENG_MAX_LEVELS];
    uint64_t level_bytes[ENG_MAX_LEVELS];
    rdel_set *rdels; /* every table's range tombstones; NULL when none */
    double score;    /* >= 1: a compaction of score_level is due */
    int score_level;
} version;

struct version_set {
    char *dir;
    const eng_options *opts;
    block_cache *cache;
    row_cache *row_cache;     /* NULL: off; set by the owner after init */
    pthread_mutex_t table_mu; /* serializes opening readers */
    int deletions_enabled;    /* atomic; V4 */
    version *current;         /* read under db->mu; replaced by the manifest holder */
    uint64_t next_file;       /* under db->mu */
    uint64_t log_number;      /* as recorded in the manifest */
    uint64_t last_seq;        /* as recorded in the manifest */
    uint64_t manifest_number;
    int manifest_damaged; /* recovery ignored bytes of the manifest */
    wal_writer *manifest; /* owned by the manifest holder */
    uint64_t *orphans;    /* manifest holder: tables kept until a roll (M2) */
    int norphans, caporphans;
    buf compact_pointer[ENG_MAX_LEVELS]; /* compaction thread only */
    uint64_t bloom_useful_closed;        /* atomic: from readers already closed */
};

/* File metadata with refs = 1 held by the caller. */
file_meta *file_meta_new(version_set *vs);
void file_ref(file_meta *f);
/* Drops a reference; at zero closes the reader and, if the file was ever
 * installed and deletions are enabled, deletes it (V4). Thread-safe. */
void file_unref(file_meta *f);

/* The reader of f, opened on first use. Thread-safe. */
eng_status version_table(file_meta *f, sst_reader **out);

/* Invariant V5: a table is the one the manifest recorded. ENG_OK when r's
 * properties agree with f (file number when recorded, entry and range
 * deletion counts, sequence range), else ENG_CORRUPTION naming the table
 * and what differs. */
eng_status version_check_table(const file_meta *f, const sst_reader *r);

void version_set_init(version_set *vs, const char *dir, const eng_options *opts,
                      block_cache *cache);
/* Drops current and closes the manifest. REQUIRES: no other version refs. */
void version_set_destroy(version_set *vs);

/* A new version equal to base with e applied (refs = 1, owned by the caller).
 * base may be NULL (empty). With load_rdels, collects the tables' range
 * tombstones, which opens the tables that have any; manifest replay passes 0
 * because an intermediate version may name files deleted since.
 * Thread-safe; takes no db lock. */
eng_status version_apply(version_set *vs, const version *base, const version_edit *e,
                         int load_rdels, version **out);

void version_ref(version *v);
void version_unref(version *v); /* thread-safe; frees at zero */

/* The newest point entry for key with sequence <= seq in v's tables,
 * through the row cache when there is one (row_cache.h, RC1-RC3); range
 * tombstones are the caller's to apply. Point lookups only: iterators and
 * compaction never come here, so they never fill the row cache.
 * ENG_OK sets *type, *found_seq and, for a value, *val (malloc'd, caller's);
 * ENG_NOTFOUND; or the table's error. */
eng_status version_get(version *v, slice key, uint64_t seq, int *type, uint64_t *found_seq,
                       char **val, size_t *vlen);

/* Appends to its[] (room for nfiles[0] + ENG_MAX_LEVELS entries) one
 * iterator per level-0 file and one level iterator per non-empty deeper
 * level, and to max_seq[] (may be NULL; same positions) the largest
 * sequence each can hold. The table iterators record damaged blocks in
 * dl (may be NULL: table.h, T3). The iterators borrow v: the caller keeps
 * a reference while they live. Returns the new count. */
int version_add_iters(version *v, iter **its, uint64_t *max_seq, int n, int fill_cache,
                      sst_damage_log *dl);

/* A concatenating iterator over files[0..n) (sorted, disjoint; V2). It
 * copies the array but borrows the files: the caller keeps them alive. */
iter *level_iter_new(file_meta *const *files, int n, int fill_cache, sst_damage_log *dl);

/* Files of `level` whose user-key range meets [lo, hi] (NULL bounds are
 * unbounded). *out is malloc'd (caller frees); returns the count. */
int version_overlapping(const version *v, int level, const slice *lo, const slice *hi,
                        file_meta ***out);

/* Does any file at a level > level overlap the user-key range [lo, hi]? */
int version_deeper_overlap(const version *v, int level, slice lo, slice hi);

/* Target byte size of a level >= 1 (max_bytes_level_base * multiplier^(L-1)). */
uint64_t version_level_target(const eng_options *o, int level);

/* Sum of sst_reader_bloom_useful over open readers, plus closed ones. */
uint64_t version_bloom_useful(const version *v);

#endif
