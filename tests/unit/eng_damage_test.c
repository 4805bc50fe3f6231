/*
 * eng_damage_test.c -- damaged and misplaced files at open: the engine
 * refuses to start (naming the file and offset, changing nothing) rather
 * than serve stale or missing data, or recovers from a verified state when
 * told to.
 *
 *  - a log record damaged while intact records follow it (a flipped
 *    payload byte, a flipped length byte, a torn log followed by a log that
 *    holds records): refused, the log unchanged; with
 *    ENG_LOG_RECOVERY_TRUNCATE the open replays up to the damage and keeps
 *    the log as NNNNNN.log.corrupt;
 *  - a missing CURRENT next to tables: refused, nothing deleted;
 *  - a damaged manifest record before the last one: refused (the version it
 *    leads to would serve an overwritten value);
 *  - two table files swapped, and a damaged table footer: refused, naming
 *    the table.
 */
#include "engine/engine.h"
#include "test.h"
#include "eng_batches.h"

#include <xxhash.h>

/* A digest of a file's bytes, to show that a refused open changed nothing. */
static uint64_t file_digest(const char *path)
{
    off_t n = file_size(path);
    char *b = malloc((size_t)n + 1);
    int fd = open(path, O_RDONLY);
    CHECK(b && fd >= 0 && pread(fd, b, (size_t)n, 0) == n);
    close(fd);
    uint64_t h = XXH3_64bits(b, (size_t)n);
    free(b);
    return h;
}

/* Opening must fail with ENG_CORRUPTION and a message holding each of the
 * (up to two) strings. */
static void check_open_refused(eng_options *o, const char *s1, const char *s2)
{
    eng_db *db = NULL;
    eng_status s = eng_open(test_tmpdir(), o, &db);
    CHECK_MSG(s == ENG_CORRUPTION, "open gave %s, not Corruption", eng_status_str(s));
    CHECK(db == NULL);
    const char *m = eng_last_error();
    CHECK_MSG(strstr(m, s1) && (!s2 || strstr(m, s2)), "message lacks '%s'/'%s': %s", s1,
              s2 ? s2 : "", m);
}

TEST(MiddleLogDamageRefusesOpenAndLeavesTheLogAsItWas)
{
    off_t sizes[10];
    write_logged_batches(10, sizes);
    char path[512];
    newest_log(path, sizeof(path));
    flip_byte(path, sizes[4] - 2); /* inside batch 4; batches 5..9 are intact */
    uint64_t before = file_digest(path);
    int files = count_files("");
    eng_options o = crash_opts();
    check_open_refused(&o, ".log", "offset");
    CHECK(file_digest(path) == before);
    CHECK_EQ_INT(count_files(""), files);
}

TEST(MiddleLogDamageWithTruncateRecoveryStartsFromLastGoodRecord)
{
    off_t sizes[10];
    write_logged_batches(10, sizes);
    char path[512];
    newest_log(path, sizeof(path));
    flip_byte(path, sizes[4] - 2);
    eng_options o = crash_opts();
    o.log_recovery = ENG_LOG_RECOVERY_TRUNCATE;
    eng_db *db = open_db(&o);
    CHECK_EQ_INT(check_batches(db), 4);
    eng_close(db);
    char kept[512];
    some_file(".log.corrupt", kept, sizeof(kept));
    CHECK_EQ_INT(file_size(kept), sizes[9]); /* the whole original is kept */
    db = open_db(&o);                        /* a second recovery agrees */
    CHECK_EQ_INT(check_batches(db), 4);
    eng_close(db);
    CHECK_EQ_INT(count_files(".log.corrupt"), 1);
}

TEST(DamagedLengthOfMiddleLogRecordIsCorruptionNotATornTail)
{
    off_t sizes[10];
    write_logged_batches(10, sizes);
    char path[512];
    newest_log(path, sizeof(path));
    /* The high byte of batch 4's length: the record now seems to run past
     * the end of the file, as a torn one would. */
    flip_byte(path, sizes[3] + 3);
    eng_options o = crash_opts();
    check_open_refused(&o, ".log", "intact record follows");
}

TEST(TornLogFollowedByALogWithRecordsIsCorruption)
{
    off_t sizes[10];
    write_logged_batches(10, sizes);
    char path[512], later[600];
    newest_log(path, sizeof(path));
    unsigned long n = 0;
    CHECK(sscanf(strrchr(path, '/') + 1, "%lu", &n) == 1);
    snprintf(later, sizeof(later), "%s/%06lu.log", test_tmpdir(), n + 100);
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path, later);
    CHECK(system(cmd) == 0);
    CHECK(truncate(path, sizes[9] - 5) == 0);
    eng_options o = crash_opts();
    check_open_refused(&o, "torn", "holds records");
}

TEST(MissingCurrentRefusesToStartAndDeletesNothing)
{
    write_flushed_batches(40);
    char cur[512];
    snprintf(cur, sizeof(cur), "%s/CURRENT", test_tmpdir());
    CHECK(unlink(cur) == 0);
    int files = count_files(""), tables = count_files(".sst");
    CHECK(tables > 0);
    eng_options o = crash_opts();
    check_open_refused(&o, "CURRENT is missing", NULL);
    CHECK_EQ_INT(count_files(""), files);
    CHECK_EQ_INT(count_files(".sst"), tables);
    CHECK_EQ_INT(count_files("MANIFEST-"), 1);
}

/* Offsets of the records of the log-format file at path (at most max). */
static int record_offsets(const char *path, off_t *offs, int max)
{
    int fd = open(path, O_RDONLY), n = 0;
    CHECK(fd >= 0);
    off_t off = 16, size = file_size(path);
    while (n < max && off + 8 <= size) {
        uint32_t len;
        CHECK(pread(fd, &len, 4, off) == 4);
        offs[n++] = off;
        off += 8 + (off_t)len;
    }
    close(fd);
    return n;
}

/* Writes k = v and flushes it into a table of its own. */
static void put_flush(eng_db *db, const char *k, const char *v)
{
    eng_batch *b = eng_batch_new(0);
    eng_batch_put(b, k, strlen(k), v, strlen(v));
    CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
    CHECK(eng_flush(db) == ENG_OK);
}

TEST(DamagedMiddleManifestRecordRefusesToServeStaleValues)
{
    eng_options o = crash_opts();
    o.l0_compaction_trigger = 100; /* only flushes: one edit per table */
    o.l0_slowdown_trigger = o.l0_stop_trigger = 100;
    eng_db *db = open_db(&o);
    put_flush(db, "a", "old");
    put_flush(db, "a", "new");
    put_flush(db, "b", "x");
    CHECK(eng_close(db) == ENG_OK);
    char path[512];
    manifest_path(path, sizeof(path));
    off_t offs[8];
    int n = record_offsets(path, offs, 8);
    CHECK_MSG(n == 4, "manifest has %d records, expected a snapshot and three edits", n);
    flip_byte(path, offs[2] + 8 + 3); /* the edit adding the table where a = new */
    uint64_t before = file_digest(path);
    check_open_refused(&o, "MANIFEST-", "offset");
    CHECK(file_digest(path) == before);
    CHECK_EQ_INT(count_files(".sst.lost"), 0);
}

/* Three tables; the last two of the same size: keys of equal length,
 * values of equal size, sequence numbers of equal varint width (the first
 * table takes sequences 1..200). */
static void two_like_tables(eng_options *o)
{
    o->compression_level = 0;
    o->l0_compaction_trigger = 100;
    o->l0_slowdown_trigger = o->l0_stop_trigger = 100;
    eng_db *db = open_db(o);
    for (int t = 0; t < 3; t++) {
        eng_batch *b = eng_batch_new(0);
        for (int i = 0; i < 200; i++) {
            char k[16], v[64];
            snprintf(k, sizeof(k), "%c%05d", 'a' + t, i);
            memset(v, 'v', sizeof(v));
            eng_batch_put(b, k, strlen(k), v, sizeof(v));
        }
        CHECK(eng_write(db, b, 0) == ENG_OK);
        eng_batch_free(b);
        CHECK(eng_flush(db) == ENG_OK);
    }
    CHECK(eng_close(db) == ENG_OK);
}

TEST(SwappedTableFilesFailOpenNamingTheTable)
{
    eng_options o = crash_opts();
    two_like_tables(&o);
    unsigned long num[3];
    int n = 0;
    DIR *d = opendir(test_tmpdir());
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".sst") && n < 3) CHECK(sscanf(e->d_name, "%lu", &num[n++]) == 1);
    closedir(d);
    CHECK_EQ_INT(n, 3);
    unsigned long lo = num[0] < num[1] ? num[0] : num[1];
    lo = lo < num[2] ? lo : num[2];
    char t1[512] = "", t2[512] = "";
    for (int i = 0; i < 3; i++)
        if (num[i] != lo)
            snprintf(t1[0] ? t2 : t1, sizeof(t1), "%s/%06lu.sst", test_tmpdir(), num[i]);
    CHECK_EQ_INT(file_size(t1), file_size(t2)); /* so only the contents tell them apart */
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.swap", t1);
    CHECK(rename(t1, tmp) == 0 && rename(t2, t1) == 0 && rename(tmp, t2) == 0);
    check_open_refused(&o, ".sst", "not the table the manifest recorded");
}

TEST(DamagedTableFooterFailsOpenNamingFileAndOffset)
{
    write_flushed_batches(20);
    char sst[512];
    some_file(".sst", sst, sizeof(sst));
    flip_byte(sst, file_size(sst) - 30); /* inside the footer's handles */
    eng_options o = crash_opts();
    check_open_refused(&o, strrchr(sst, '/') + 1, "offset");
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
