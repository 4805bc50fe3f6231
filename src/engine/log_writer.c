/*
 * log_writer.c -- appends framed, checksummed records to a log file (the
 * write-ahead log and the manifest).
 *
 * File format (log_format.md has the exact grammar; constants in
 * log_format.h):
 *
 *   offset 0   magic "STRATAWL" (8 bytes)
 *   offset 8   format version, fixed32 little-endian (LOG_FORMAT_VERSION)
 *   offset 12  reserved, fixed32, written as 0
 *   offset 16  record*
 *
 *   record = length (fixed32) | checksum (fixed32) | payload (length bytes)
 *
 * checksum is eng_checksum() (low 32 bits of XXH3-64) over the payload only;
 * length is at most LOG_MAX_RECORD_SIZE.
 *
 * Algorithm: group commit. wal_writer_append() frames the record straight
 * into an in-memory buffer (one amortized memcpy, no syscall); flush hands the
 * whole buffer to the OS with one write(); sync adds an fdatasync. Records
 * are therefore written whole and in order, so the only damage a crash can
 * do is a torn tail, which the reader detects (Invariant L1).
 *
 * Invariants:
 *   W1. file_size is the number of bytes handed to the OS successfully; the
 *       file's contents up to file_size are a header followed by whole
 *       records.
 *   W2. Once a write fails (or a record is refused), the writer is dead:
 *       every later flush/sync returns the same error, because bytes after a
 *       possibly torn record could never be replayed (Invariant L1). The
 *       engine then abandons it (wal_writer_abandon) and makes the writes
 *       it held durable another way (db_impl.h, D5).
 *   W3. eng_write refuses a batch larger than the record limit before it
 *       assigns sequence numbers or appends anything, so the writer never
 *       sees a record it would refuse.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "log_format.h"

/* A buffer that grew past this for one huge record is released after the
 * flush, so one large batch does not pin memory for the life of the log. */
#define WAL_BUFFER_KEEP (8u << 20)

struct wal_writer {
    int fd;
    uint64_t file_size; /* W1 */
    buf pending;        /* framed records not yet written */
    eng_status err;     /* W2: sticky */
    char *path;         /* for error messages */
};

eng_status wal_writer_create(const char *path, wal_writer **out)
{
    *out = NULL;
    wal_writer *w = calloc(1, sizeof(*w));
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return env_error(ENG_NOMEM, "out of memory");
    }
    eng_status s = env_create(path, &w->fd);
    if (s != ENG_OK) {
        free(w->path);
        free(w);
        return s;
    }
    char hdr[LOG_FILE_HEADER_SIZE];
    memcpy(hdr, LOG_MAGIC, 8);
    enc_fixed32(hdr + 8, LOG_FORMAT_VERSION);
    enc_fixed32(hdr + 12, 0);
    s = env_write_all(w->fd, hdr, sizeof(hdr), path, NULL);
    if (s == ENG_OK) s = env_fsync(w->fd, path);
    if (s == ENG_OK) s = env_fsync_parent(path);
    if (s != ENG_OK) {
        env_close(w->fd, path);
        env_unlink(path);
        free(w->path);
        free(w);
        return s;
    }
    w->file_size = LOG_FILE_HEADER_SIZE;
    buf_reserve(&w->pending, 64 << 10);
    *out = w;
    return ENG_OK;
}

void wal_writer_append(wal_writer *w, const char *payload, size_t n)
{
    if (w->err) return; /* W2 */
    if (n > LOG_MAX_RECORD_SIZE) {
        w->err = env_error(ENG_INVALID, "log %s: record of %zu bytes exceeds the limit of %u",
                           w->path, n, (unsigned)LOG_MAX_RECORD_SIZE);
        return;
    }
    buf *b = &w->pending;
    if (b->len + LOG_RECORD_HEADER_SIZE + n > b->cap) buf_reserve(b, LOG_RECORD_HEADER_SIZE + n);
    char *p = b->data + b->len;
    enc_fixed32(p, (uint32_t)n);
    enc_fixed32(p + 4, eng_checksum(payload, n));
    if (n) memcpy(p + LOG_RECORD_HEADER_SIZE, payload, n);
    b->len += LOG_RECORD_HEADER_SIZE + n;
}

eng_status wal_writer_flush(wal_writer *w)
{
    if (w->err) return w->err;
    buf *b = &w->pending;
    if (b->len == 0) return ENG_OK;
    eng_status s = env_write_all(w->fd, b->data, b->len, w->path, NULL);
    if (s != ENG_OK) {
        /* Part of the buffer may be in the file: a torn tail (W2). */
        w->err = s;
        return s;
    }
    w->file_size += b->len;
    b->len = 0;
    if (b->cap > WAL_BUFFER_KEEP) {
        buf_free(b);
        buf_reserve(b, 64 << 10);
    }
    return ENG_OK;
}

eng_status wal_writer_sync_fd(int fd)
{
    return env_fsync(fd, "log");
}

eng_status wal_writer_sync(wal_writer *w)
{
    eng_status s = wal_writer_flush(w);
    if (s != ENG_OK) return s;
    s = env_fsync(w->fd, w->path);
    if (s != ENG_OK) w->err = s; /* after a failed fsync the page state is unknown */
    return s;
}

int wal_writer_fd(const wal_writer *w)
{
    return w->fd;
}

uint64_t wal_writer_size(const wal_writer *w)
{
    return w->file_size + w->pending.len;
}

eng_status wal_writer_close(wal_writer *w, int sync)
{
    if (!w) return ENG_OK;
    eng_status s = sync ? wal_writer_sync(w) : wal_writer_flush(w);
    eng_status c = env_close(w->fd, w->path);
    if (s == ENG_OK) s = c;
    buf_free(&w->pending);
    free(w->path);
    free(w);
    return s;
}

void wal_writer_abandon(wal_writer *w)
{
    if (!w) return;
    env_close(w->fd, w->path); /* a close error changes nothing: the file is given up */
    buf_free(&w->pending);
    free(w->path);
    free(w);
}
