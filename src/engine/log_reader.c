/*
 * log_reader.c -- replays a log file written by log_writer.c.
 *
 * File format (exact grammar in log_format.md; constants in log_format.h):
 *
 *   header = "STRATAWL" (8 bytes) | version (fixed32 = 1) | reserved (fixed32)
 *   record = length (fixed32, <= LOG_MAX_RECORD_SIZE) | checksum (fixed32,
 *            eng_checksum of the payload) | payload (length bytes)
 *
 * Algorithm: the file is read front to back with large pread()s into one
 * buffer (CHUNK bytes, or one record if that is larger), so a log of
 * hundreds of MB costs a few hundred syscalls. Each record's length is
 * checked against the bytes left in the file before anything is allocated
 * for it, so a corrupt length can never make the reader allocate more than
 * the file size.
 *
 * Invariant L1: replay stops at the first record that is torn (the file ends
 * inside it) or corrupt (impossible length or checksum mismatch), and no
 * record after it is ever returned, even if later bytes happen to parse:
 * the writer only appends whole records in order (log_writer.c, W1/W2), so
 * anything after a bad record was written after a state the log cannot
 * vouch for.
 *
 * Header rules: a file shorter than the header whose bytes are a prefix of a
 * valid header is an empty log (a crash right after create; valid_end 0); a
 * wrong magic or an unknown version is ENG_CORRUPTION.
 */
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "log_format.h"

#define CHUNK (4u << 20)

struct wal_reader {
    int fd;
    char *path;
    uint64_t file_size;
    uint64_t pos; /* offset of the next record */
    int done;     /* L1: once set, next() only returns ENG_NOTFOUND */
    uint64_t valid_end;
    char *bufp; /* file bytes [buf_off, buf_off + buf_len) */
    size_t buf_cap, buf_len;
    uint64_t buf_off;
    char reason[128];
};

/* Fills r->reason and marks the end of the valid log at r->pos. */
static eng_status stop(wal_reader *r, const char *fmt, unsigned long long a)
{
    snprintf(r->reason, sizeof(r->reason), fmt, a);
    r->done = 1;
    r->valid_end = r->pos;
    return ENG_NOTFOUND;
}

/* Makes file bytes [off, off + n) contiguous in the buffer and returns a
 * pointer to them, or NULL with *s set on a read error.
 * REQUIRES: off + n <= file_size. */
static const char *fetch(wal_reader *r, uint64_t off, size_t n, eng_status *s)
{
    if (off >= r->buf_off && off + n <= r->buf_off + r->buf_len)
        return r->bufp + (off - r->buf_off);
    uint64_t left = r->file_size - off;
    size_t want = n > CHUNK ? n : CHUNK;
    if (want > left) want = (size_t)left;
    if (want > r->buf_cap) {
        char *p = realloc(r->bufp, want);
        if (!p) {
            *s = env_error(ENG_NOMEM, "read %s: out of memory for %zu bytes", r->path, want);
            return NULL;
        }
        r->bufp = p;
        r->buf_cap = want;
    }
    *s = env_pread_all(r->fd, r->bufp, want, off, r->path);
    if (*s != ENG_OK) {
        r->buf_len = 0;
        if (*s == ENG_CORRUPTION) *s = ENG_IOERR; /* the file shrank under us */
        return NULL;
    }
    r->buf_off = off;
    r->buf_len = want;
    return r->bufp;
}

/* Checks the file header; sets *empty for a short header from a crash right
 * after create. */
static eng_status check_header(wal_reader *r, int *empty)
{
    char hdr[LOG_FILE_HEADER_SIZE];
    size_t n = r->file_size < sizeof(hdr) ? (size_t)r->file_size : sizeof(hdr);
    *empty = 0;
    eng_status s = n ? env_pread_all(r->fd, hdr, n, 0, r->path) : ENG_OK;
    if (s != ENG_OK) return s == ENG_CORRUPTION ? ENG_IOERR : s;
    size_t m = n < 8 ? n : 8;
    if (memcmp(hdr, LOG_MAGIC, m) != 0)
        return env_error(ENG_CORRUPTION, "log %s: bad magic", r->path);
    if (n < sizeof(hdr)) {
        *empty = 1;
        return ENG_OK;
    }
    uint32_t version = dec_fixed32(hdr + 8);
    if (version != LOG_FORMAT_VERSION)
        return env_error(ENG_CORRUPTION, "log %s: unsupported format version %u", r->path,
                         (unsigned)version);
    return ENG_OK;
}

eng_status wal_reader_open(const char *path, wal_reader **out)
{
    *out = NULL;
    wal_reader *r = calloc(1, sizeof(*r));
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return env_error(ENG_NOMEM, "out of memory");
    }
    eng_status s = env_open_read(path, &r->fd);
    if (s == ENG_OK) s = env_fd_size(r->fd, &r->file_size, path);
    if (s != ENG_OK) {
        if (s == ENG_NOTFOUND) s = ENG_IOERR;
        goto fail;
    }
    int empty;
    s = check_header(r, &empty);
    if (s != ENG_OK) goto fail;
    if (empty) {
        r->pos = 0;
        stop(r, "log header incomplete (%llu bytes): empty log", r->file_size);
    } else {
        r->pos = LOG_FILE_HEADER_SIZE;
    }
    *out = r;
    return ENG_OK;
fail:
    wal_reader_close(r);
    return s;
}

eng_status wal_reader_next(wal_reader *r, slice *rec)
{
    if (r->done) return ENG_NOTFOUND; /* L1 */
    uint64_t left = r->file_size - r->pos;
    if (left == 0) return stop(r, "clean end of log at offset %llu", r->pos);
    if (left < LOG_RECORD_HEADER_SIZE) return stop(r, "torn record header at offset %llu", r->pos);
    eng_status s;
    const char *h = fetch(r, r->pos, LOG_RECORD_HEADER_SIZE, &s);
    if (!h) return s;
    uint32_t len = dec_fixed32(h), crc = dec_fixed32(h + 4);
    if (len > LOG_MAX_RECORD_SIZE)
        return stop(r, "impossible record length at offset %llu", r->pos);
    if ((uint64_t)len > left - LOG_RECORD_HEADER_SIZE)
        return stop(r, "torn record at offset %llu", r->pos);
    const char *p = fetch(r, r->pos, LOG_RECORD_HEADER_SIZE + (size_t)len, &s);
    if (!p) return s;
    p += LOG_RECORD_HEADER_SIZE;
    if (eng_checksum(p, len) != crc)
        return stop(r, "checksum mismatch in the record at offset %llu", r->pos);
    r->pos += LOG_RECORD_HEADER_SIZE + (uint64_t)len;
    *rec = slice_make(p, len);
    return ENG_OK;
}

/* Whether an intact record (plausible head, matching checksum) starts at
 * off. REQUIRES: off + LOG_RECORD_HEADER_SIZE <= file_size. */
static eng_status intact_at(wal_reader *r, uint64_t off, wal_plausible_fn plausible, int *yes)
{
    eng_status s = ENG_OK;
    *yes = 0;
    const char *h = fetch(r, off, LOG_RECORD_HEADER_SIZE, &s);
    if (!h) return s;
    uint32_t len = dec_fixed32(h), crc = dec_fixed32(h + 4);
    uint64_t room = r->file_size - off - LOG_RECORD_HEADER_SIZE;
    if (len == 0 || len > LOG_MAX_RECORD_SIZE || len > room) return ENG_OK;
    size_t head = len < 16 ? len : 16;
    const char *p = fetch(r, off + LOG_RECORD_HEADER_SIZE, head, &s);
    if (!p) return s;
    if (plausible && !plausible(p, head, len)) return ENG_OK;
    p = fetch(r, off, LOG_RECORD_HEADER_SIZE + (size_t)len, &s);
    if (!p) return s;
    *yes = eng_checksum(p + LOG_RECORD_HEADER_SIZE, len) == crc;
    return ENG_OK;
}

eng_status wal_reader_find_intact(wal_reader *r, wal_plausible_fn plausible, int *found,
                                  uint64_t *offset)
{
    *found = 0;
    if (!r->done || r->valid_end >= r->file_size) return ENG_OK;
    uint64_t bad = r->valid_end, end = r->file_size;
    if (end - bad < 2 * LOG_RECORD_HEADER_SIZE) return ENG_OK;
    eng_status s = ENG_OK;
    /* First where the bad record's own length frames the next one. */
    const char *h = fetch(r, bad, LOG_RECORD_HEADER_SIZE, &s);
    if (!h) return s;
    uint64_t next = bad + LOG_RECORD_HEADER_SIZE + dec_fixed32(h);
    if (next + LOG_RECORD_HEADER_SIZE <= end) {
        s = intact_at(r, next, plausible, found);
        if (s != ENG_OK || *found) {
            *offset = next;
            return s;
        }
    }
    /* Then at every later offset (a damaged length loses the framing). */
    for (uint64_t off = bad + 1; off + LOG_RECORD_HEADER_SIZE <= end; off++) {
        s = intact_at(r, off, plausible, found);
        if (s != ENG_OK || *found) {
            *offset = off;
            return s;
        }
    }
    return ENG_OK;
}

uint64_t wal_reader_valid_end(const wal_reader *r)
{
    return r->done ? r->valid_end : r->pos;
}

uint64_t wal_reader_dropped_bytes(const wal_reader *r)
{
    return r->done ? r->file_size - r->valid_end : 0;
}

const char *wal_reader_stop_reason(const wal_reader *r)
{
    return r->reason;
}

void wal_reader_close(wal_reader *r)
{
    if (!r) return;
    env_close(r->fd, r->path);
    free(r->bufp);
    free(r->path);
    free(r);
}
