/*
 * eng_iter_skip_test.c -- an iterator over keys rewritten thousands of times
 * (a sorted set's rank blocks) steps past their old versions with a reseek
 * instead of walking them (db_iter.c, I2), and still shows exactly what a
 * model of the writes says, at every snapshot (past versions older and
 * newer than it), forward and backward, after
 * seeks and direction changes, with range deletions, with part of the
 * versions in a table and with an indexed batch's pending writes on top.
 */
#include "engine/engine.h"
#include "test.h"
#include "eng_db_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NK = 6, NOPS = 3000, SNAP_EVERY = 250, NSNAP = NOPS / SNAP_EVERY };

typedef struct view {
    char v[NK][16]; /* "" = absent */
} view;

static void key_name(int i, char *out)
{
    snprintf(out, 8, "k%d", i);
}

static eng_db *open_skip_db(void)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 64 << 20; /* flushes only when the test asks */
    o.l0_compaction_trigger = 100;
    o.l0_slowdown_trigger = o.l0_stop_trigger = 100;
    eng_db *db = NULL;
    eng_status s = eng_open(test_tmpdir(), &o, &db);
    CHECK_MSG(s == ENG_OK, "open: %s %s", eng_status_str(s), eng_last_error());
    return db;
}

/* The first model key >= k (or > k when strict), or NK. */
static int model_ceil(const view *m, const char *k, int strict)
{
    char n[8];
    for (int i = 0; i < NK; i++) {
        key_name(i, n);
        int c = strcmp(n, k);
        if (m->v[i][0] && (strict ? c > 0 : c >= 0)) return i;
    }
    return NK;
}

/* The last model key <= k (or < k when strict), or -1. */
static int model_floor(const view *m, const char *k, int strict)
{
    char n[8];
    for (int i = NK - 1; i >= 0; i--) {
        key_name(i, n);
        int c = strcmp(n, k);
        if (m->v[i][0] && (strict ? c < 0 : c <= 0)) return i;
    }
    return -1;
}

static void check_at(eng_iter *it, const view *m, int want, const char *what)
{
    if (want < 0 || want >= NK) {
        CHECK_MSG(!eng_iter_valid(it), "%s: want the end, got a key", what);
        CHECK(eng_iter_status(it) == ENG_OK);
        return;
    }
    char n[8];
    key_name(want, n);
    CHECK_MSG(eng_iter_valid(it), "%s: want %s, got the end (%s)", what, n,
              eng_status_str(eng_iter_status(it)));
    size_t kl, vl;
    const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
    CHECK_MSG(kl == strlen(n) && !memcmp(k, n, kl), "%s: want key %s, got %.*s", what, n, (int)kl,
              k);
    CHECK_MSG(vl == strlen(m->v[want]) && !memcmp(v, m->v[want], vl),
              "%s: key %s want %s, got %.*s", what, n, m->v[want], (int)vl, v);
}

/* Full scans both ways, then random seeks and steps, against the model.
 * Returns the entries looked at by the two full scans. */
static uint64_t check_view(eng_db *db, const eng_snapshot *snap, eng_batch *b, const view *m,
                           unsigned *rnd)
{
    eng_iter *it = eng_iter_new(db, snap, b);
    int want = model_ceil(m, "", 0);
    for (eng_iter_seek_first(it); want < NK; eng_iter_next(it)) {
        check_at(it, m, want, "forward scan");
        char n[8];
        key_name(want, n);
        want = model_ceil(m, n, 1);
    }
    check_at(it, m, NK, "forward scan end");
    want = model_floor(m, "z", 0);
    for (eng_iter_seek_last(it); want >= 0; eng_iter_prev(it)) {
        check_at(it, m, want, "backward scan");
        char n[8];
        key_name(want, n);
        want = model_floor(m, n, 1);
    }
    check_at(it, m, -1, "backward scan end");
    uint64_t steps = eng_iter_steps(it);
    for (int round = 0; round < 60; round++) {
        char target[8], n[8];
        snprintf(target, sizeof(target), "k%d%s", rand_r(rnd) % (NK + 1),
                 rand_r(rnd) % 3 ? "" : "x");
        int prevseek = rand_r(rnd) % 2;
        if (prevseek) {
            eng_iter_seek_prev(it, target, strlen(target));
            want = model_floor(m, target, 0);
        } else {
            eng_iter_seek(it, target, strlen(target));
            want = model_ceil(m, target, 0);
        }
        check_at(it, m, want, prevseek ? "seek_prev" : "seek");
        for (int s = 0; s < 8 && want >= 0 && want < NK; s++) {
            key_name(want, n);
            if (rand_r(rnd) % 2) {
                eng_iter_next(it);
                want = model_ceil(m, n, 1);
                check_at(it, m, want, "next");
            } else {
                eng_iter_prev(it);
                want = model_floor(m, n, 1);
                check_at(it, m, want, "prev");
            }
        }
    }
    eng_iter_free(it);
    return steps;
}

/* Key i is first written at op (NK - 1 - i) * 200: an early snapshot sees
 * the last keys only, and the keys before them have versions newer than
 * it and none it sees. */
static void apply(eng_db *db, view *m, unsigned *rnd, int op)
{
    int born = 1 + op / 200;
    int i = NK - 1 - rand_r(rnd) % (born < NK ? born : NK), r = rand_r(rnd) % 100;
    char k[8], v[16];
    key_name(i, k);
    if (r < 75) {
        snprintf(v, sizeof(v), "v%d", op);
        put(db, k, v);
        strcpy(m->v[i], v);
    } else if (r < 97) {
        del(db, k);
        m->v[i][0] = 0;
    } else {
        int j = i + 1 + rand_r(rnd) % 2; /* [k_i, k_j) */
        char e[8];
        key_name(j, e);
        del_range(db, k, e);
        for (int x = i; x < j && x < NK; x++)
            m->v[x][0] = 0;
    }
}

static void run_many_versions(int flush_midway)
{
    eng_db *db = open_skip_db();
    unsigned rnd = 12345 + (unsigned)flush_midway;
    static view snapm[NSNAP];
    const eng_snapshot *snaps[NSNAP];
    view m;
    memset(&m, 0, sizeof(m));
    for (int op = 0; op < NOPS; op++) {
        if (op % SNAP_EVERY == 0) {
            snaps[op / SNAP_EVERY] = eng_snapshot_new(db);
            snapm[op / SNAP_EVERY] = m;
        }
        if (flush_midway && op == NOPS / 2) CHECK(eng_flush(db) == ENG_OK);
        apply(db, &m, &rnd, op);
    }
    /* The latest view: thousands of versions of NK keys, each scan way
     * must cost a few reseeks per key, not a step per version (I2). */
    uint64_t steps = check_view(db, NULL, NULL, &m, &rnd);
    CHECK_MSG(steps < 60 * NK, "two scans over %d keys looked at %llu entries", NK,
              (unsigned long long)steps);
    /* A snapshot's scans step past the versions newer than it too. */
    for (int s = 0; s < NSNAP; s++) {
        steps = check_view(db, snaps[s], NULL, &snapm[s], &rnd);
        CHECK_MSG(steps < 60 * NK, "at snapshot %d two scans looked at %llu entries", s,
                  (unsigned long long)steps);
    }
    /* An indexed batch's pending writes, several per key for half of the
     * keys, over it all. */
    eng_batch *b = eng_batch_new(1);
    view bm = m;
    for (int x = 0; x < 40; x++) {
        int i = rand_r(&rnd) % (NK / 2);
        char k[8], v[16];
        key_name(i, k);
        if (rand_r(&rnd) % 4) {
            snprintf(v, sizeof(v), "b%d", x);
            eng_batch_put(b, k, strlen(k), v, strlen(v));
            strcpy(bm.v[i], v);
        } else {
            eng_batch_delete(b, k, strlen(k));
            bm.v[i][0] = 0;
        }
    }
    check_view(db, NULL, b, &bm, &rnd);
    /* Pending writes shadow any snapshot; the other keys as of it. */
    view sbm = snapm[NSNAP / 2];
    for (int i = 0; i < NK / 2; i++)
        strcpy(sbm.v[i], bm.v[i]);
    check_view(db, snaps[NSNAP / 2], b, &sbm, &rnd);
    eng_batch_free(b);
    for (int s = 0; s < NSNAP; s++)
        eng_snapshot_release(db, snaps[s]);
    CHECK(eng_close(db) == ENG_OK);
}

/* The deleted keys a forward walk from from passed (eng_iter_deleted). */
static uint64_t deleted_passed(eng_db *db, const char *from)
{
    eng_iter *it = eng_iter_new(db, NULL, NULL);
    eng_iter_seek(it, from, strlen(from));
    while (eng_iter_valid(it))
        eng_iter_next(it);
    uint64_t n = eng_iter_deleted(it);
    eng_iter_free(it);
    return n;
}

/* eng_iter_deleted counts the user keys a forward walk passed because
 * their newest version is a deletion, once each however many versions they
 * have and wherever those are (table, memtable), and not the keys under a
 * range deletion. */
TEST(ForwardWalkCountsEachDeletedKeyItPassesOnce)
{
    eng_db *db = open_skip_db();
    char k[16];
    for (int i = 0; i < 10; i++) {
        snprintf(k, sizeof(k), "a%d", i);
        put(db, k, "v1");
        put(db, k, "v2");
    }
    del(db, "a2");
    CHECK(eng_flush(db) == ENG_OK);
    del(db, "a5"); /* its versions in the table, the deletion in the memtable */
    put(db, "a7", "v3");
    del(db, "a7");
    del_range(db, "a8", "a9"); /* a8: under a range deletion, not counted */
    put(db, "a3", "v3");
    del(db, "a3");
    put(db, "a3", "v4"); /* alive again */
    CHECK_EQ_INT(deleted_passed(db, "a"), 3);
    CHECK_EQ_INT(deleted_passed(db, "a3"), 2);
    CHECK_EQ_INT(deleted_passed(db, "a6"), 1);
    CHECK_EQ_INT(deleted_passed(db, "a8"), 0);
    eng_close(db);
}

TEST(ManyVersionsOfFewKeysIterateAsTheModelAtEverySnapshot)
{
    run_many_versions(0);
}

TEST(ManyVersionsSplitBetweenATableAndTheMemtableIterateAsTheModel)
{
    run_many_versions(1);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
