/*
 * eng_batches.h -- numbered test batches and damaged-file helpers shared by
 * the engine's crash and damage tests (eng_crash_test, eng_damage_test).
 * Batch n puts keys n-0..n-3 (value "n-0..") and deletes key 0 of batch
 * n-3; check_batches() verifies that the batches present are a prefix,
 * each whole. Included after test.h; everything is static.
 */
#ifndef STRATA_TESTS_ENG_BATCHES_H
#define STRATA_TESTS_ENG_BATCHES_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"

#define KEYS_PER_BATCH 4

static char logbuf[8192] __attribute__((unused));
static inline void capture_log(void *ctx, int level, const char *msg)
{
    size_t n = strlen(logbuf);
    snprintf(logbuf + n, sizeof(logbuf) - n, "%s\n", msg);
}

static inline eng_options crash_opts(void)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 16 << 10;
    o.target_file_size = 16 << 10;
    o.max_bytes_level_base = 64 << 10;
    o.l0_compaction_trigger = 2;
    o.sync_mode = ENG_SYNC_ALWAYS;
    o.log_fn = capture_log;
    return o;
}

static inline eng_db *open_db(eng_options *o)
{
    eng_db *db = NULL;
    eng_status s = eng_open(test_tmpdir(), o, &db);
    CHECK_MSG(s == ENG_OK, "open: %s %s", eng_status_str(s), eng_last_error());
    return db;
}

static inline void batch_key(char *k, long n, int i)
{
    snprintf(k, 32, "b%08ld-%d", n, i);
}

/* Batch n puts keys n-0..n-3 (value "n") and deletes key 0 of batch n-3. */
static inline void fill_batch(eng_batch *b, long n)
{
    char k[32], v[64];
    int vl = snprintf(v, sizeof(v), "%ld-%0*d", n, (int)(n % 50), 0);
    for (int i = 0; i < KEYS_PER_BATCH; i++) {
        batch_key(k, n, i);
        eng_batch_put(b, k, strlen(k), v, (size_t)vl);
    }
    if (n >= 3) {
        batch_key(k, n - 3, 0);
        eng_batch_delete(b, k, strlen(k));
    }
}

static inline int has_key(eng_db *db, const char *k, long n)
{
    char *v;
    size_t vl;
    eng_status s = eng_get(db, NULL, k, strlen(k), &v, &vl);
    CHECK_MSG(s == ENG_OK || s == ENG_NOTFOUND, "get %s: %s", k, eng_status_str(s));
    if (s == ENG_NOTFOUND) return 0;
    char want[64];
    int wl = snprintf(want, sizeof(want), "%ld-%0*d", n, (int)(n % 50), 0);
    int ok = vl == (size_t)wl && !memcmp(v, want, vl);
    eng_free(v);
    CHECK_MSG(ok, "%s has a wrong value", k);
    return 1;
}

/* Checks batches 0..; returns how many are present (they must be a prefix,
 * each whole). */
static inline long check_batches(eng_db *db)
{
    long n = 0;
    char k[32];
    for (;; n++) {
        batch_key(k, n, 1);
        if (!has_key(db, k, n)) break;
        for (int i = 2; i < KEYS_PER_BATCH; i++) {
            batch_key(k, n, i);
            CHECK_MSG(has_key(db, k, n), "batch %ld half applied (%s missing)", n, k);
        }
    }
    /* Nothing after the first missing batch (writes were sequential). */
    for (long m = n; m < n + 3; m++) {
        for (int i = 0; i < KEYS_PER_BATCH; i++) {
            batch_key(k, m, i);
            CHECK_MSG(!has_key(db, k, m), "batch %ld present after missing batch %ld", m, n);
        }
    }
    /* Key 0 of batch j is deleted exactly when batch j+3 is present. */
    for (long j = 0; j < n; j++) {
        batch_key(k, j, 0);
        CHECK_MSG(has_key(db, k, j) == (j + 3 >= n), "key 0 of batch %ld wrong (of %ld)", j, n);
    }
    /* Iteration agrees with the point reads. */
    long expect = n * KEYS_PER_BATCH - (n > 3 ? n - 3 : 0), seen = 0;
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    for (eng_iter_seek_first(it); eng_iter_valid(it); eng_iter_next(it))
        seen++;
    CHECK_MSG(eng_iter_status(it) == ENG_OK, "iterator: %s", eng_status_str(eng_iter_status(it)));
    long back = 0;
    for (eng_iter_seek_last(it); eng_iter_valid(it); eng_iter_prev(it))
        back++;
    eng_iter_free(it);
    CHECK_MSG(seen == expect && back == expect, "iteration saw %ld/%ld keys, expected %ld", seen,
              back, expect);
    return n;
}

/* The path of the newest log file in the test directory. */
static inline void newest_log(char *out, size_t cap)
{
    DIR *d = opendir(test_tmpdir());
    struct dirent *e;
    unsigned long best = 0;
    out[0] = 0;
    while ((e = readdir(d)) != NULL) {
        unsigned long n;
        char suf[8];
        if (sscanf(e->d_name, "%lu.%4s", &n, suf) == 2 && !strcmp(suf, "log") && n >= best) {
            best = n;
            snprintf(out, cap, "%s/%s", test_tmpdir(), e->d_name);
        }
    }
    closedir(d);
    CHECK(out[0]);
}

static inline off_t file_size(const char *path)
{
    struct stat st;
    CHECK(stat(path, &st) == 0);
    return st.st_size;
}

static inline void flip_byte(const char *path, off_t off)
{
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    unsigned char c;
    CHECK(pread(fd, &c, 1, off) == 1);
    c ^= 0x10;
    CHECK(pwrite(fd, &c, 1, off) == 1);
    close(fd);
}

/* Writes batches 0..n-1 into the log only (the close leaves them there)
 * and returns the log's size after each batch in sizes[]. */
static inline void write_logged_batches(long n, off_t *sizes)
{
    eng_options o = crash_opts();
    o.write_buffer_size = 4 << 20;
    eng_db *db = open_db(&o);
    eng_batch *b = eng_batch_new(0);
    char path[512];
    newest_log(path, sizeof(path));
    for (long i = 0; i < n; i++) {
        eng_batch_clear(b);
        fill_batch(b, i);
        CHECK(eng_write(db, b, ENG_WRITE_SYNC) == ENG_OK);
        sizes[i] = file_size(path);
    }
    eng_batch_free(b);
    CHECK(eng_close(db) == ENG_OK);
}

/* The path of the live manifest. */
static inline void manifest_path(char *out, size_t cap)
{
    char cur[512], name[64] = "";
    snprintf(cur, sizeof(cur), "%s/CURRENT", test_tmpdir());
    FILE *f = fopen(cur, "r");
    CHECK(f && fgets(name, sizeof(name), f));
    fclose(f);
    name[strcspn(name, "\n")] = 0;
    snprintf(out, cap, "%s/%s", test_tmpdir(), name);
}

/* Writes batches 0..n-1 and flushes them into tables (manifest edits). */
static inline void write_flushed_batches_with(long n, eng_options *o)
{
    eng_db *db = open_db(o);
    eng_batch *b = eng_batch_new(0);
    for (long i = 0; i < n; i++) {
        eng_batch_clear(b);
        fill_batch(b, i);
        CHECK(eng_write(db, b, 0) == ENG_OK);
        if (i % 10 == 9) CHECK(eng_flush(db) == ENG_OK);
    }
    eng_batch_free(b);
    CHECK(eng_close(db) == ENG_OK);
}
static inline void write_flushed_batches(long n)
{
    eng_options o = crash_opts();
    write_flushed_batches_with(n, &o);
}

/* How many files in the test directory have a name containing needle. */
static inline int count_files(const char *needle)
{
    DIR *d = opendir(test_tmpdir());
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, needle) != NULL;
    closedir(d);
    return n;
}

/* The path of some file in the test directory whose name ends in suffix. */
static inline void some_file(const char *suffix, char *out, size_t cap)
{
    DIR *d = opendir(test_tmpdir());
    struct dirent *e;
    out[0] = 0;
    size_t sl = strlen(suffix);
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n >= sl && !strcmp(e->d_name + n - sl, suffix))
            snprintf(out, cap, "%s/%s", test_tmpdir(), e->d_name);
    }
    closedir(d);
    CHECK(out[0]);
}

#endif
