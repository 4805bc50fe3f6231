/*
 * log.h -- the write-ahead log: framed, checksummed records appended to a
 * file (also used for the manifest). Format: log_format.md;
 * constants: log_format.h.
 */
#ifndef STRATA_LOG_H
#define STRATA_LOG_H

#include "coding.h"
#include "engine.h"

typedef struct wal_writer wal_writer;

/* Creates path (truncating any file there), writes the file header and
 * fsyncs the file and its directory. *out is owned by the caller. */
eng_status wal_writer_create(const char *path, wal_writer **out);

/* Appends one record to the writer's in-memory buffer; nothing reaches the
 * OS until wal_writer_flush(). Many records can be appended and then written
 * with one write() (group commit). REQUIRES: external synchronization. */
void wal_writer_append(wal_writer *w, const char *payload, size_t n);

/* Hands every buffered record to the OS with (usually) one write(). */
eng_status wal_writer_flush(wal_writer *w);

/* Flushes, then fdatasyncs the file: every record appended so far is durable.
 * REQUIRES: external synchronization against appenders (or call
 * wal_writer_sync_fd() on the value of wal_writer_fd() from another thread
 * after a flush, which is safe because fdatasync needs no buffer). */
eng_status wal_writer_sync(wal_writer *w);
int wal_writer_fd(const wal_writer *w);

/* fdatasyncs fd (a value from wal_writer_fd()); makes durable every record
 * flushed before the call. Thread-safe; needs no lock. */
eng_status wal_writer_sync_fd(int fd);

/* Bytes in the file plus bytes still buffered. */
uint64_t wal_writer_size(const wal_writer *w);

/* Flushes (and syncs if sync) and closes; frees w even on error. */
eng_status wal_writer_close(wal_writer *w, int sync);

/* Closes and frees w without writing what it still buffers (after a
 * failure, W2: the records are made durable another way). NULL is a no-op. */
void wal_writer_abandon(wal_writer *w);

typedef struct wal_reader wal_reader;

/* Opens an existing log for replay. ENG_CORRUPTION when the header is bad. */
eng_status wal_reader_open(const char *path, wal_reader **out);

/* Reads the next record. Returns ENG_OK with *rec pointing into the reader's
 * memory (valid until the next call), ENG_NOTFOUND at the end of the valid
 * log: the clean end of file, or the first torn or corrupt record, after
 * which nothing is ever returned (Invariant L1: recovery never applies a
 * record that follows a bad one). ENG_IOERR when a read fails. */
eng_status wal_reader_next(wal_reader *r, slice *rec);

/* After ENG_NOTFOUND: the offset just past the last good record, and how
 * many bytes follow it (0 for a clean end). The caller truncates the file to
 * valid_end and logs the number of bytes dropped. */
uint64_t wal_reader_valid_end(const wal_reader *r);
uint64_t wal_reader_dropped_bytes(const wal_reader *r);

/* After ENG_NOTFOUND: why replay stopped, for the recovery log message
 * ("clean end of log", "torn record at offset N", "checksum mismatch in the
 * record at offset N", ...). Static or owned by r; valid until close. */
const char *wal_reader_stop_reason(const wal_reader *r);

/* A cheap test of a record's first bytes before its checksum is computed:
 * head holds the first head_len (<= 16) of its len payload bytes. */
typedef int (*wal_plausible_fn)(const char *head, size_t head_len, size_t len);

/* After ENG_NOTFOUND with dropped bytes: is there an intact record after
 * the bad one? It looks where the bad record's length says the next one
 * starts, then at every later offset whose first bytes pass plausible (may
 * be NULL) and whose checksum matches. *found = 1 and *offset when there
 * is one: the damage is in the middle of the log, not a torn tail
 * (Invariant L2). Costs one pass over the rest of the file. */
eng_status wal_reader_find_intact(wal_reader *r, wal_plausible_fn plausible, int *found,
                                  uint64_t *offset);

void wal_reader_close(wal_reader *r);

#endif
