/*
 * wal_reader_fuzz.c -- libFuzzer target for log replay (log_reader.c).
 *
 * The input's first byte picks how the log file is made (mode = byte % 4):
 *
 *   0  raw:    the rest of the input is the whole file, header included.
 *   1  header: a valid file header, then the rest of the input verbatim (so
 *              the fuzzer reaches record parsing; checksums rarely match).
 *   2, 3 framed: bytes 1..4 are a damage spec (kind, position lo/hi, xor
 *              value); the rest is cut into payloads (a length byte, then
 *              that many bytes; a length byte >= 0xf0 means a long payload
 *              of (b - 0xef) * 300 bytes) that are written as correctly
 *              framed records after a valid header. Then the damage: none,
 *              a truncation, or one byte xor-ed.
 *
 * The file is replayed with wal_reader. Checked for every input:
 *   - every record returned is the payload found at the next record offset
 *     of the file, and passes its checksum there;
 *   - after ENG_NOTFOUND nothing more is ever returned (Invariant L1), and
 *     valid_end + dropped_bytes == file size, with valid_end just past the
 *     last record returned;
 *   - the open succeeds or fails exactly as the header rules say.
 * For framed logs the exact outcome is known and checked: all records when
 * undamaged; after a truncation, exactly the records wholly before it;
 * after a flipped byte, exactly the records before the damaged one (all of
 * them when the byte was in the reserved header field).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/coding.h"
#include "engine/log.h"
#include "engine/log_format.h"

#define MAX_RECORDS 4096

static char path[64];
static int path_fd = -1;

static void remove_file(void)
{
    if (path_fd >= 0) unlink(path);
}

static void setup(void)
{
    if (path_fd >= 0) return;
    /* tmpfs when there is one: the target is I/O bound otherwise */
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    int n = snprintf(path, sizeof(path), "%s/wal_fuzz_", dir);
    memset(path + n, 'X', 6); /* the mkstemp template */
    path[n + 6] = 0;
    path_fd = mkstemp(path);
    if (path_fd < 0) abort();
    atexit(remove_file);
}

static void write_file(const char *p, size_t n)
{
    if (ftruncate(path_fd, 0) != 0) abort();
    if (n && pwrite(path_fd, p, n, 0) != (ssize_t)n) abort();
}

static void put_header(char *p)
{
    memcpy(p, LOG_MAGIC, 8);
    enc_fixed32(p + 8, LOG_FORMAT_VERSION);
    enc_fixed32(p + 12, 0);
}

/* What the header rules predict for wal_reader_open on file f. */
static eng_status expected_open(const char *f, size_t n)
{
    size_t m = n < 8 ? n : 8;
    if (memcmp(f, LOG_MAGIC, m) != 0) return ENG_CORRUPTION;
    if (n < LOG_FILE_HEADER_SIZE) return ENG_OK;
    return dec_fixed32(f + 8) == LOG_FORMAT_VERSION ? ENG_OK : ENG_CORRUPTION;
}

/* Replays file f; checks the generic properties; stores the offsets of the
 * records returned in offs (up to MAX_RECORDS) and their count in *nrec.
 * Returns the open status. */
static eng_status replay(const char *f, size_t n, uint64_t *offs, size_t *nrec)
{
    *nrec = 0;
    write_file(f, n);
    wal_reader *r;
    eng_status s = wal_reader_open(path, &r);
    if (s != expected_open(f, n)) abort();
    if (s != ENG_OK) return s;
    uint64_t pos = n < LOG_FILE_HEADER_SIZE ? 0 : LOG_FILE_HEADER_SIZE;
    slice rec;
    while ((s = wal_reader_next(r, &rec)) == ENG_OK) {
        /* the record must be exactly what the file holds at pos */
        if (pos + LOG_RECORD_HEADER_SIZE > n) abort();
        uint32_t len = dec_fixed32(f + pos), crc = dec_fixed32(f + pos + 4);
        if (rec.size != len || len > n - pos - LOG_RECORD_HEADER_SIZE) abort();
        if (len && memcmp(rec.data, f + pos + LOG_RECORD_HEADER_SIZE, len) != 0) abort();
        if (eng_checksum(rec.data, rec.size) != crc) abort();
        if (*nrec < MAX_RECORDS) offs[*nrec] = pos;
        (*nrec)++;
        pos += LOG_RECORD_HEADER_SIZE + len;
    }
    if (s != ENG_NOTFOUND) abort(); /* no I/O errors on a regular file */
    for (int i = 0; i < 3; i++)     /* L1: the end is final */
        if (wal_reader_next(r, &rec) != ENG_NOTFOUND) abort();
    if (wal_reader_valid_end(r) != pos) abort();
    if (wal_reader_valid_end(r) + wal_reader_dropped_bytes(r) != n) abort();
    const char *why = wal_reader_stop_reason(r);
    if (!why || !*why) abort();
    wal_reader_close(r);
    return ENG_OK;
}

/* Builds a framed log from the payload spec in [d, d + n) into *out;
 * record start offsets go to offs, the count to *nrec. */
static size_t build_framed(const uint8_t *d, size_t n, char **out, uint64_t *offs, size_t *nrec)
{
    size_t cap = LOG_FILE_HEADER_SIZE, len = LOG_FILE_HEADER_SIZE, k = 0;
    for (size_t i = 0; i < n && k < MAX_RECORDS; k++) { /* sizes first */
        size_t plen = d[i++];
        if (plen >= 0xf0) {
            plen = (plen - 0xef) * 300;
        } else {
            if (plen > n - i) plen = n - i;
            i += plen;
        }
        cap += LOG_RECORD_HEADER_SIZE + plen;
    }
    char *f = malloc(cap);
    if (!f) abort();
    put_header(f);
    *nrec = 0;
    size_t i = 0;
    while (i < n && *nrec < MAX_RECORDS) {
        size_t plen = d[i++];
        char *p = f + len + LOG_RECORD_HEADER_SIZE;
        if (plen >= 0xf0) {
            plen = (plen - 0xef) * 300;
            for (size_t j = 0; j < plen; j++)
                p[j] = (char)(j * 131 + plen);
        } else {
            if (plen > n - i) plen = n - i;
            memcpy(p, d + i, plen);
            i += plen;
        }
        enc_fixed32(f + len, (uint32_t)plen);
        enc_fixed32(f + len + 4, eng_checksum(p, plen));
        offs[(*nrec)++] = len;
        len += LOG_RECORD_HEADER_SIZE + plen;
    }
    *out = f;
    return len;
}

static void fuzz_framed(const uint8_t *data, size_t size)
{
    static uint64_t offs[MAX_RECORDS], got[MAX_RECORDS];
    uint8_t kind = data[1] % 3, x = data[4];
    size_t at = (size_t)data[2] | (size_t)data[3] << 8;
    char *f;
    size_t nrec, got_n;
    size_t n = build_framed(data + 5, size - 5, &f, offs, &nrec);
    at %= n;
    size_t want = nrec; /* records expected back */
    int open_fails = 0;
    if (kind == 1) { /* truncate to `at` bytes */
        n = at;
        while (want &&
               offs[want - 1] + LOG_RECORD_HEADER_SIZE + dec_fixed32(f + offs[want - 1]) > n)
            want--;
        if (n < LOG_FILE_HEADER_SIZE) want = 0;
    } else if (kind == 2 && x) { /* flip one byte at `at` */
        f[at] ^= (char)x;
        if (at < 12) {
            open_fails = 1;
        } else if (at >= LOG_FILE_HEADER_SIZE) {
            while (want && offs[want - 1] > at)
                want--;
            if (want) want--; /* the damaged record itself */
        }
    }
    eng_status s = replay(f, n, got, &got_n);
    if (open_fails != (s != ENG_OK)) abort();
    if (!open_fails) {
        if (got_n != want) abort();
        for (size_t i = 0; i < want; i++)
            if (got[i] != offs[i]) abort();
    }
    free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint64_t offs[MAX_RECORDS];
    size_t nrec;
    setup();
    if (size == 0) return 0;
    int mode = data[0] % 4;
    if (mode == 0) {
        replay((const char *)data + 1, size - 1, offs, &nrec);
    } else if (mode == 1) {
        char *f = malloc(LOG_FILE_HEADER_SIZE + size - 1);
        if (!f) abort();
        put_header(f);
        memcpy(f + LOG_FILE_HEADER_SIZE, data + 1, size - 1);
        if (replay(f, LOG_FILE_HEADER_SIZE + size - 1, offs, &nrec) != ENG_OK) abort();
        free(f);
    } else if (size >= 5) {
        fuzz_framed(data, size);
    }
    return 0;
}
