/*
 * eng_log_test.c -- the write-ahead log: round trips, group commit, and
 * recovery from torn and corrupt tails (Invariant L1).
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/env.h"
#include "engine/log.h"
#include "engine/log_format.h"
#include "test.h"

static char *path_in_tmp(const char *name)
{
    static char p[4][512]; /* a few paths may be live at once */
    static unsigned k;
    char *q = p[k++ % 4];
    snprintf(q, sizeof(p[0]), "%s/%s", test_tmpdir(), name);
    return q;
}

/* Deterministic payload i of size n: every byte depends on (i, offset). */
static void fill_payload(char *p, size_t n, unsigned i)
{
    uint32_t x = i * 2654435761u + 1;
    for (size_t k = 0; k < n; k++) {
        x = x * 1103515245u + 12345u;
        p[k] = (char)(x >> 16);
    }
}

static size_t record_size(unsigned i)
{
    static const size_t sizes[] = {0, 1, 7, 8, 100, 4095, 4096, 65537, (1u << 20) + 3};
    if (i % 37 == 36) return sizes[(i / 37) % 9];
    return (i * 7919u) % 300;
}

/* Writes n records with payloads fill_payload(i, record_size(i)); returns the
 * file offset at which each record starts in offs (n + 1 entries). */
static void write_log(const char *path, unsigned n, uint64_t *offs)
{
    wal_writer *w;
    CHECK_EQ_INT(wal_writer_create(path, &w), ENG_OK);
    char *p = malloc((2u << 20));
    for (unsigned i = 0; i < n; i++) {
        if (offs) offs[i] = wal_writer_size(w);
        size_t sz = record_size(i);
        fill_payload(p, sz, i);
        wal_writer_append(w, p, sz);
        if (i % 5 == 4) CHECK_EQ_INT(wal_writer_flush(w), ENG_OK);
    }
    if (offs) offs[n] = wal_writer_size(w);
    free(p);
    CHECK_EQ_INT(wal_writer_close(w, 1), ENG_OK);
}

/* Replays path, checks that records are exactly 0..expect-1, and returns the
 * reader's valid_end through *valid_end. */
static void expect_records(const char *path, unsigned expect, uint64_t *valid_end,
                           uint64_t *dropped)
{
    wal_reader *r;
    CHECK_EQ_INT(wal_reader_open(path, &r), ENG_OK);
    char *p = malloc(2u << 20);
    slice rec;
    unsigned i = 0;
    eng_status s;
    while ((s = wal_reader_next(r, &rec)) == ENG_OK) {
        CHECK_MSG(i < expect, "record %u returned, expected only %u", i, expect);
        size_t sz = record_size(i);
        fill_payload(p, sz, i);
        CHECK_EQ_INT(rec.size, sz);
        CHECK_MSG(memcmp(rec.data, p, sz) == 0, "payload of record %u differs", i);
        i++;
    }
    CHECK_EQ_INT(s, ENG_NOTFOUND);
    CHECK_EQ_INT(wal_reader_next(r, &rec), ENG_NOTFOUND);
    CHECK_EQ_INT(i, expect);
    if (valid_end) *valid_end = wal_reader_valid_end(r);
    if (dropped) *dropped = wal_reader_dropped_bytes(r);
    free(p);
    wal_reader_close(r);
}

static void copy_prefix(const char *from, const char *to, uint64_t n)
{
    FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
    CHECK(f && g);
    char b[65536];
    while (n > 0) {
        size_t k = n < sizeof(b) ? (size_t)n : sizeof(b);
        CHECK_EQ_INT(fread(b, 1, k, f), k);
        CHECK_EQ_INT(fwrite(b, 1, k, g), k);
        n -= k;
    }
    fclose(f);
    fclose(g);
}

static void flip_byte(const char *path, uint64_t off)
{
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    unsigned char c;
    CHECK_EQ_INT(pread(fd, &c, 1, (off_t)off), 1);
    c ^= 0x40;
    CHECK_EQ_INT(pwrite(fd, &c, 1, (off_t)off), 1);
    close(fd);
}

static uint64_t file_size(const char *path)
{
    uint64_t n = 0;
    CHECK_EQ_INT(env_file_size(path, &n), ENG_OK);
    return n;
}

TEST(RoundTripOfRecordsOfVariedSizes)
{
    const char *path = path_in_tmp("log");
    unsigned n = 400;
    uint64_t offs[401], end, dropped;
    write_log(path, n, offs);
    CHECK_EQ_INT(file_size(path), offs[n]);
    expect_records(path, n, &end, &dropped);
    CHECK_EQ_INT(end, offs[n]);
    CHECK_EQ_INT(dropped, 0);
}

TEST(TruncatedTrailingRecordIsIgnored)
{
    const char *path = path_in_tmp("log"), *cut = path_in_tmp("cut");
    unsigned n = 296; /* the last record (295) is 65537 bytes, see record_size() */
    uint64_t offs[297];
    write_log(path, n, offs);
    CHECK_EQ_INT(offs[n] - offs[n - 1], LOG_RECORD_HEADER_SIZE + 65537);
    /* Every byte offset strictly inside the last record, header included. */
    uint64_t last = offs[n - 1];
    uint64_t step = (offs[n] - last) > 5000 ? 97 : 1;
    for (uint64_t len = last; len < offs[n]; len += (len - last < 64 ? 1 : step)) {
        copy_prefix(path, cut, len);
        uint64_t end, dropped;
        expect_records(cut, n - 1, &end, &dropped);
        CHECK_EQ_INT(end, last);
        CHECK_EQ_INT(dropped, len - last);
    }
    /* And a small last record, every single offset. */
    unsigned m = 10;
    write_log(path, m, offs);
    for (uint64_t len = offs[m - 1] + 1; len < offs[m]; len++) {
        copy_prefix(path, cut, len);
        uint64_t end;
        expect_records(cut, m - 1, &end, NULL);
        CHECK_EQ_INT(end, offs[m - 1]);
    }
}

TEST(BitFlipInTailStopsReplay)
{
    const char *path = path_in_tmp("log");
    unsigned n = 60;
    uint64_t offs[61];
    for (unsigned k = 0; k < n; k += 7) {
        write_log(path, n, offs);
        if (offs[k + 1] == offs[k] + LOG_RECORD_HEADER_SIZE) {
            /* empty payload: flip the checksum instead */
            flip_byte(path, offs[k] + 5);
        } else {
            flip_byte(path, offs[k] + LOG_RECORD_HEADER_SIZE + (offs[k + 1] - offs[k] - 8) / 2);
        }
        uint64_t end, dropped;
        expect_records(path, k, &end, &dropped);
        CHECK_EQ_INT(end, offs[k]);
        CHECK_EQ_INT(dropped, offs[n] - offs[k]);
    }
}

TEST(FlippedLengthStopsReplay)
{
    const char *path = path_in_tmp("log");
    uint64_t offs[21];
    write_log(path, 20, offs);
    flip_byte(path, offs[12] + 3); /* length's high byte: impossible length */
    expect_records(path, 12, NULL, NULL);
    write_log(path, 20, offs);
    flip_byte(path, offs[12]); /* length's low byte: wrong framing */
    expect_records(path, 12, NULL, NULL);
}

TEST(RecordAfterCorruptRecordIsNeverReturned)
{
    /* Records 0..2, then a corrupt record, then a record that is intact and
     * framed correctly: it must never be returned. */
    const char *path = path_in_tmp("log");
    wal_writer *w;
    CHECK_EQ_INT(wal_writer_create(path, &w), ENG_OK);
    wal_writer_append(w, "aaaa", 4);
    wal_writer_append(w, "bbbb", 4);
    wal_writer_append(w, "cccc", 4);
    uint64_t bad = wal_writer_size(w);
    wal_writer_append(w, "dddd", 4);
    wal_writer_append(w, "eeee", 4);
    CHECK_EQ_INT(wal_writer_close(w, 0), ENG_OK);
    flip_byte(path, bad + LOG_RECORD_HEADER_SIZE + 1);
    wal_reader *r;
    CHECK_EQ_INT(wal_reader_open(path, &r), ENG_OK);
    slice rec;
    const char *want[] = {"aaaa", "bbbb", "cccc"};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(wal_reader_next(r, &rec), ENG_OK);
        CHECK_MEM(rec.data, rec.size, want[i]);
    }
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(wal_reader_next(r, &rec), ENG_NOTFOUND);
    CHECK_EQ_INT(wal_reader_valid_end(r), bad);
    CHECK_EQ_INT(wal_reader_dropped_bytes(r), 2 * (LOG_RECORD_HEADER_SIZE + 4));
    CHECK(strstr(wal_reader_stop_reason(r), "checksum") != NULL);
    wal_reader_close(r);
}

TEST(ZeroFilledTailIsNotARecord)
{
    const char *path = path_in_tmp("log");
    uint64_t offs[6];
    write_log(path, 5, offs);
    int fd = open(path, O_WRONLY | O_APPEND);
    char zeros[4096] = {0};
    CHECK_EQ_INT(write(fd, zeros, sizeof(zeros)), (long long)sizeof(zeros));
    close(fd);
    uint64_t end, dropped;
    expect_records(path, 5, &end, &dropped);
    CHECK_EQ_INT(end, offs[5]);
    CHECK_EQ_INT(dropped, 4096);
}

TEST(EmptyFileIsEmptyLog)
{
    const char *path = path_in_tmp("log");
    static const uint64_t lens[] = {0, 3, 8, 15};
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(path, "wb");
        char hdr[16];
        memcpy(hdr, LOG_MAGIC, 8);
        enc_fixed32(hdr + 8, LOG_FORMAT_VERSION);
        enc_fixed32(hdr + 12, 0);
        CHECK_EQ_INT(fwrite(hdr, 1, lens[i], f), lens[i]);
        fclose(f);
        wal_reader *r;
        CHECK_EQ_INT(wal_reader_open(path, &r), ENG_OK);
        slice rec;
        CHECK_EQ_INT(wal_reader_next(r, &rec), ENG_NOTFOUND);
        CHECK_EQ_INT(wal_reader_valid_end(r), 0);
        CHECK_EQ_INT(wal_reader_dropped_bytes(r), lens[i]);
        wal_reader_close(r);
    }
    /* A freshly created log: header only, clean end. */
    wal_writer *w;
    CHECK_EQ_INT(wal_writer_create(path, &w), ENG_OK);
    CHECK_EQ_INT(wal_writer_close(w, 1), ENG_OK);
    CHECK_EQ_INT(file_size(path), LOG_FILE_HEADER_SIZE);
    uint64_t end, dropped;
    expect_records(path, 0, &end, &dropped);
    CHECK_EQ_INT(end, LOG_FILE_HEADER_SIZE);
    CHECK_EQ_INT(dropped, 0);
}

TEST(BadMagicIsCorruption)
{
    const char *path = path_in_tmp("log");
    write_log(path, 3, NULL);
    flip_byte(path, 2);
    wal_reader *r = (wal_reader *)1;
    CHECK_EQ_INT(wal_reader_open(path, &r), ENG_CORRUPTION);
    CHECK(r == NULL);
    /* A short header that is not a prefix of the magic is corruption too. */
    FILE *f = fopen(path, "wb");
    fwrite("XTRA", 1, 4, f);
    fclose(f);
    CHECK_EQ_INT(wal_reader_open(path, &r), ENG_CORRUPTION);
    /* An unknown version. */
    write_log(path, 3, NULL);
    flip_byte(path, 9);
    CHECK_EQ_INT(wal_reader_open(path, &r), ENG_CORRUPTION);
    CHECK_EQ_INT(wal_reader_open(path_in_tmp("missing"), &r), ENG_IOERR);
}

TEST(AppendsWithoutFlushWriteNothing)
{
    const char *path = path_in_tmp("log");
    wal_writer *w;
    CHECK_EQ_INT(wal_writer_create(path, &w), ENG_OK);
    char p[300];
    uint64_t total = LOG_FILE_HEADER_SIZE;
    for (unsigned i = 0; i < 1000; i++) {
        fill_payload(p, record_size(i % 36), i);
        wal_writer_append(w, p, record_size(i % 36));
        total += LOG_RECORD_HEADER_SIZE + record_size(i % 36);
    }
    CHECK_EQ_INT(file_size(path), LOG_FILE_HEADER_SIZE);
    CHECK_EQ_INT(wal_writer_size(w), total);
    CHECK_EQ_INT(wal_writer_flush(w), ENG_OK);
    CHECK_EQ_INT(file_size(path), total);
    CHECK_EQ_INT(wal_writer_flush(w), ENG_OK); /* nothing pending: no-op */
    CHECK_EQ_INT(wal_writer_sync(w), ENG_OK);
    CHECK_EQ_INT(wal_writer_sync_fd(wal_writer_fd(w)), ENG_OK);
    CHECK_EQ_INT(file_size(path), total);
    CHECK_EQ_INT(wal_writer_close(w, 0), ENG_OK);
    wal_reader *r;
    CHECK_EQ_INT(wal_reader_open(path, &r), ENG_OK);
    slice rec;
    unsigned i = 0;
    while (wal_reader_next(r, &rec) == ENG_OK) {
        fill_payload(p, record_size(i % 36), i);
        CHECK_EQ_INT(rec.size, record_size(i % 36));
        CHECK(memcmp(rec.data, p, rec.size) == 0);
        i++;
    }
    CHECK_EQ_INT(i, 1000);
    wal_reader_close(r);
}

TEST(OneFlushIsOneWrite)
{
    /* A flush must hand the buffered records to the OS together: with the
     * file descriptor pointing at a pipe, one flush of many records must
     * arrive as one atomic write of the exact total size. */
    const char *path = path_in_tmp("log");
    wal_writer *w;
    CHECK_EQ_INT(wal_writer_create(path, &w), ENG_OK);
    int fds[2];
    CHECK_EQ_INT(pipe(fds), 0);
    int logfd = wal_writer_fd(w);
    int saved = dup(logfd);
    CHECK_EQ_INT(dup2(fds[1], logfd), logfd);
    for (int i = 0; i < 50; i++)
        wal_writer_append(w, "0123456789", 10);
    CHECK_EQ_INT(wal_writer_flush(w), ENG_OK);
    char b[4096];
    ssize_t got = read(fds[0], b, sizeof(b));
    CHECK_EQ_INT(got, 50 * 18);
    CHECK_EQ_INT(dup2(saved, logfd), logfd);
    close(saved);
    close(fds[0]);
    close(fds[1]);
    CHECK_EQ_INT(wal_writer_close(w, 0), ENG_OK);
}

TEST(FailedWriteMakesWriterDead)
{
    const char *path = path_in_tmp("log");
    wal_writer *w;
    CHECK_EQ_INT(wal_writer_create(path, &w), ENG_OK);
    int logfd = wal_writer_fd(w);
    int saved = dup(logfd);
    int ro = open(path, O_RDONLY);
    CHECK_EQ_INT(dup2(ro, logfd), logfd); /* writes now fail with EBADF */
    wal_writer_append(w, "x", 1);
    CHECK_EQ_INT(wal_writer_flush(w), ENG_IOERR);
    CHECK_EQ_INT(dup2(saved, logfd), logfd);
    wal_writer_append(w, "y", 1);
    CHECK_EQ_INT(wal_writer_flush(w), ENG_IOERR); /* sticky */
    CHECK_EQ_INT(wal_writer_sync(w), ENG_IOERR);
    CHECK_EQ_INT(wal_writer_close(w, 1), ENG_IOERR);
    close(saved);
    close(ro);
}

TEST(LargeLogIsReadInChunks)
{
    /* 20 MB of records: more than one read chunk, records straddling chunk
     * boundaries. */
    const char *path = path_in_tmp("log");
    wal_writer *w;
    CHECK_EQ_INT(wal_writer_create(path, &w), ENG_OK);
    char p[1000];
    unsigned n = 20000;
    for (unsigned i = 0; i < n; i++) {
        size_t sz = 900 + i % 100;
        fill_payload(p, sz, i);
        wal_writer_append(w, p, sz);
        if (i % 1000 == 999) CHECK_EQ_INT(wal_writer_flush(w), ENG_OK);
    }
    CHECK_EQ_INT(wal_writer_close(w, 0), ENG_OK);
    wal_reader *r;
    CHECK_EQ_INT(wal_reader_open(path, &r), ENG_OK);
    slice rec;
    unsigned i = 0;
    while (wal_reader_next(r, &rec) == ENG_OK) {
        size_t sz = 900 + i % 100;
        fill_payload(p, sz, i);
        CHECK_EQ_INT(rec.size, sz);
        CHECK_MSG(memcmp(rec.data, p, sz) == 0, "record %u", i);
        i++;
    }
    CHECK_EQ_INT(i, n);
    CHECK_EQ_INT(wal_reader_dropped_bytes(r), 0);
    wal_reader_close(r);
}

/* Property: whatever damage is done at offset d, replay returns exactly the
 * records that end at or before d (all intact), and nothing else. */
TEST(RandomDamageYieldsExactlyTheIntactPrefix)
{
    const char *orig = path_in_tmp("orig"), *path = path_in_tmp("log");
    unsigned n = 120;
    uint64_t offs[121];
    uint64_t x = 12345;
    write_log(orig, n, offs);
    for (int trial = 0; trial < 300; trial++) {
        copy_prefix(orig, path, offs[n]); /* no fsync per trial: keeps it fast */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t d = LOG_FILE_HEADER_SIZE + x % (offs[n] - LOG_FILE_HEADER_SIZE);
        int fd = open(path, O_RDWR);
        CHECK(fd >= 0);
        switch (trial % 3) {
        case 0: { /* one flipped bit */
            unsigned char c;
            CHECK_EQ_INT(pread(fd, &c, 1, (off_t)d), 1);
            c ^= (unsigned char)(1u << (x >> 40) % 8);
            CHECK_EQ_INT(pwrite(fd, &c, 1, (off_t)d), 1);
            break;
        }
        case 1: /* cut */
            CHECK_EQ_INT(ftruncate(fd, (off_t)d), 0);
            break;
        default: { /* a run of junk, as a misdirected write would leave */
            char junk[64];
            for (int i = 0; i < 64; i++)
                junk[i] = (char)(x >> (i % 8));
            uint64_t len = offs[n] - d < 64 ? offs[n] - d : 64;
            CHECK_EQ_INT(pwrite(fd, junk, len, (off_t)d), (long long)len);
        }
        }
        close(fd);
        unsigned k = 0; /* records entirely before d */
        while (k < n && offs[k + 1] <= d)
            k++;
        uint64_t end;
        expect_records(path, k, &end, NULL);
        CHECK_EQ_INT(end, offs[k]);
    }
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
