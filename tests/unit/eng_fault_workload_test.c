/*
 * eng_fault_workload_test.c -- a random workload under injected faults
 * (engine/env_fault.h), checked after every recovery.
 *
 * Each trial opens a fresh database with tiny buffers (flushes and
 * compactions all the time), arms one fault at a random call among all the
 * file operations of every engine thread, and writes numbered batches: a
 * few puts, deletes and range deletes over a small key space, plus a marker
 * key naming the batch. Batches go with ENG_WRITE_SYNC, ENG_WRITE_DEFER or
 * neither; eng_commit(sync), eng_flush and eng_compact_range come in
 * between. The fault is
 *   - a power loss (most trials): the machine stops at that call; the disk
 *     keeps only what was fsynced (files cut to their synced size, creates,
 *     renames and unlinks undone unless their directory was fsynced); in a
 *     third of them a second power loss strikes during the recovery;
 *   - EIO or ENOSPC once, on any kind of call;
 *   - ENOSPC on every create and write until "space returns" a few batches
 *     later.
 * Then the database is reopened and must hold exactly the batches 0..p that
 * the engine took, for some p: never half a batch, never a batch without
 * every earlier one it took, and p at least the last batch acknowledged as
 * durable (a successful sync, commit(1) or flush after it). After a fault
 * that is not a power loss the engine must recover by itself, close
 * cleanly, and keep every batch it took.
 *
 * STRATA_FAULT_TRIALS=n (default 2000; 400 under ASan) and STRATA_SEED=n.
 */
#include "engine/engine.h"
#include "engine/env_fault.h"
#include "test.h"
#include "test_rng.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifdef __SANITIZE_ADDRESS__
#define DEFAULT_TRIALS 400
#else
#define DEFAULT_TRIALS 2000
#endif

#define NKEYS 40
#define MAX_BATCHES 90
#define MAX_OPS 4

typedef struct wop {
    int type; /* 0 put, 1 delete, 2 delete range [k, k2) */
    int k, k2;
    uint32_t val;
} wop;

typedef struct wbatch {
    int nops;
    wop ops[MAX_OPS];
    int taken; /* the engine applied it */
} wbatch;

static void key_name(char *out, int k)
{
    snprintf(out, 16, "k%02d", k);
}
static size_t val_str(char *out, uint32_t v)
{
    int n = snprintf(out, 96, "v%u-", v);
    for (unsigned i = 0; i < v % 60; i++)
        out[n++] = (char)('a' + (v + i) % 26);
    return (size_t)n;
}
static void marker_name(char *out, int b)
{
    snprintf(out, 16, "~%05d", b);
}

static void make_batch(wbatch *wb, uint32_t serial)
{
    wb->nops = 1 + (int)rn(MAX_OPS);
    wb->taken = 0;
    for (int i = 0; i < wb->nops; i++) {
        wop *o = &wb->ops[i];
        unsigned r = rn(10);
        o->type = r < 7 ? 0 : r < 9 ? 1 : 2;
        o->k = (int)rn(NKEYS);
        o->k2 = o->k + 1 + (int)rn(6);
        o->val = serial * 8 + (uint32_t)i;
    }
}

static void fill_engine_batch(eng_batch *b, const wbatch *wb, int n)
{
    char k[16], k2[16], v[96];
    for (int i = 0; i < wb->nops; i++) {
        const wop *o = &wb->ops[i];
        key_name(k, o->k);
        if (o->type == 0) {
            size_t vl = val_str(v, o->val);
            eng_batch_put(b, k, strlen(k), v, vl);
        } else if (o->type == 1) {
            eng_batch_delete(b, k, strlen(k));
        } else {
            key_name(k2, o->k2);
            eng_batch_delete_range(b, k, strlen(k), k2, strlen(k2));
        }
    }
    marker_name(k, n);
    eng_batch_put(b, k, strlen(k), "m", 1);
}

/* The model: key -> value index, or -1 for absent. */
static void model_apply(int64_t *m, const wbatch *wb)
{
    for (int i = 0; i < wb->nops; i++) {
        const wop *o = &wb->ops[i];
        if (o->type == 0) m[o->k] = o->val;
        if (o->type == 1) m[o->k] = -1;
        for (int k = o->k; o->type == 2 && k < o->k2 && k < NKEYS; k++)
            m[k] = -1;
    }
}

/* A get that retries a few times past a one-off read fault. */
static eng_status get_retry(eng_db *db, const char *k, char **v, size_t *vl)
{
    eng_status s = ENG_IOERR;
    for (int i = 0; i < 4; i++) {
        s = eng_get(db, NULL, k, strlen(k), v, vl);
        if (s == ENG_OK || s == ENG_NOTFOUND) return s;
    }
    return s;
}

static int marker_present(eng_db *db, int b)
{
    char k[16], *v;
    size_t vl;
    marker_name(k, b);
    eng_status s = get_retry(db, k, &v, &vl);
    CHECK_MSG(s == ENG_OK || s == ENG_NOTFOUND, "get %s: %s %s", k, eng_status_str(s),
              eng_last_error());
    if (s == ENG_OK) eng_free(v);
    return s == ENG_OK;
}

typedef struct totals {
    uint64_t trials, fired, power_losses, recovery_power_losses, injected, once, sticky, recovered;
} totals;

typedef struct trial {
    uint64_t seed;
    int id;
    char dir[600];
    wbatch b[MAX_BATCHES];
    int n;       /* batches attempted */
    int durable; /* every batch <= this that was taken is durable */
    int mode;
} trial;

static eng_options trial_opts(void)
{
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 4 << 10;
    o.target_file_size = 4 << 10;
    o.max_bytes_level_base = 8 << 10;
    o.level_size_multiplier = 4;
    o.l0_compaction_trigger = 2;
    o.l0_slowdown_trigger = 20; /* no 1 ms write delays: compaction keeps up */
    o.l0_stop_trigger = 30;
    o.block_size = 256;
    o.cache_size = 32 << 10;
    o.sync_mode = ENG_SYNC_NO;
    o.retry_delay_us = 200;
    o.compression_level = (int)rn(2);
    o.log_fn = NULL;
    return o;
}

/* What the trial did, printed when its check fails. */
static char events[32768];
static void event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void event(const char *fmt, ...)
{
    size_t n = strlen(events);
    if (n + 200 > sizeof(events)) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(events + n, sizeof(events) - n, fmt, ap);
    va_end(ap);
}

static void trace(unsigned kind, const char *path, int err, int dead)
{
    if ((kind & (FAULT_READ | FAULT_OTHER)) && !err) return;
    const char *p = path ? strrchr(path, '/') : NULL;
    event("    op %u %s%s%s\n", kind, p ? p + 1 : "?", err ? " FAILED" : "", dead ? " (dead)" : "");
}

static void quiet(void *ctx, int level, const char *msg)
{
    if (getenv("STRATA_FAULT_DEBUG")) event("  engine: %s\n", msg);
}

/* Writes the batches; returns when done or soon after a power loss. */
static void run_workload(trial *t, eng_db *db, int sticky_for)
{
    eng_batch *eb = eng_batch_new(0);
    int after_fire = 0, fired_at = -1;
    for (int i = 0; i < t->n; i++) {
        if (fault_env_dead() && ++after_fire > 3) {
            t->n = i;
            break;
        }
        if (t->mode == FAULT_STICKY && fired_at < 0 && fault_env_injected()) fired_at = i;
        if (fired_at >= 0 && i - fired_at == sticky_for) fault_env_disarm(); /* space returns */
        wbatch *wb = &t->b[i];
        make_batch(wb, (uint32_t)(t->id * MAX_BATCHES + i));
        eng_batch_clear(eb);
        fill_engine_batch(eb, wb, i);
        unsigned r = rn(3);
        int flags = r == 0 ? ENG_WRITE_SYNC : r == 1 ? ENG_WRITE_DEFER : 0;
        uint64_t c0 = fault_env_calls();
        eng_status s = eng_write(db, eb, flags);
        wb->taken = s == ENG_OK || marker_present(db, i);
        if (s == ENG_OK && (flags & ENG_WRITE_SYNC)) t->durable = i;
        event("b%d flags %d: %s taken %d calls %llu dead %d\n", i, flags, eng_status_str(s),
              wb->taken, (unsigned long long)c0, fault_env_dead());
        unsigned w = rn(40);
        if (w < 5) {
            s = eng_commit(db, 1);
            if (s == ENG_OK) t->durable = i;
            event("  commit(1): %s\n", eng_status_str(s));
        }
        if (w == 5) {
            s = eng_flush(db);
            if (s == ENG_OK) t->durable = i;
            event("  flush: %s\n", eng_status_str(s));
        }
        if (w == 6)
            event("  compact: %s\n", eng_status_str(eng_compact_range(db, NULL, 0, NULL, 0)));
    }
    eng_batch_free(eb);
}

/* The reopened database must hold exactly the taken batches 0..p. (The
 * fault env stays in, without faults, only so that fsyncs cost nothing.) */
static void verify(trial *t, int clean)
{
    fault_env_install();
    fault_env_set_fake_sync(1);
    eng_options o = trial_opts();
    o.log_fn = quiet;
    eng_db *db = NULL;
    eng_status s = eng_open(t->dir, &o, &db);
    if (s != ENG_OK) printf("%s", events);
    CHECK_MSG(s == ENG_OK, "seed %llu trial %d (%s): reopen: %s %s", (unsigned long long)t->seed,
              t->id, t->dir, eng_status_str(s), eng_last_error());
    int p = -1;
    for (int i = 0; i < t->n; i++)
        if (marker_present(db, i)) p = i;
    int last_taken = -1, last_durable = -1;
    for (int i = 0; i < t->n; i++)
        if (t->b[i].taken) {
            last_taken = i;
            if (i <= t->durable) last_durable = i;
        }
    if (p < last_durable) printf("%s", events);
    CHECK_MSG(p >= last_durable, "seed %llu trial %d: batch %d was durable, only %d survived",
              (unsigned long long)t->seed, t->id, last_durable, p);
    if ((clean && p != last_taken) || p < last_durable) printf("%s", events);
    CHECK_MSG(!clean || p == last_taken,
              "seed %llu trial %d: clean close kept batches up to %d of %d taken",
              (unsigned long long)t->seed, t->id, p, last_taken);
    int64_t m[NKEYS];
    for (int k = 0; k < NKEYS; k++)
        m[k] = -1;
    for (int i = 0; i <= p; i++) {
        int here = marker_present(db, i);
        CHECK_MSG(here == t->b[i].taken, "seed %llu trial %d: batch %d %s (survivors up to %d)",
                  (unsigned long long)t->seed, t->id, i,
                  here ? "was never taken but is there" : "was taken but is missing", p);
        if (here) model_apply(m, &t->b[i]);
    }
    char k[16], v[96];
    for (int i = 0; i < NKEYS; i++) {
        key_name(k, i);
        char *got;
        size_t gl;
        s = get_retry(db, k, &got, &gl);
        CHECK_MSG(s == (m[i] < 0 ? ENG_NOTFOUND : ENG_OK), "seed %llu trial %d: %s: %s, model %s",
                  (unsigned long long)t->seed, t->id, k, eng_status_str(s),
                  m[i] < 0 ? "absent" : "present");
        if (s != ENG_OK) continue;
        size_t vl = val_str(v, (uint32_t)m[i]);
        int same = gl == vl && !memcmp(got, v, vl);
        eng_free(got);
        CHECK_MSG(same, "seed %llu trial %d: %s has a half-applied or stale value",
                  (unsigned long long)t->seed, t->id, k);
    }
    CHECK(eng_close(db) == ENG_OK);
    fault_env_uninstall();
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

/* Waits up to 20 s for the engine to take writes again after a fault (the
 * background retry is quick; the margin is for a loaded machine). */
static void wait_recovered(trial *t, eng_db *db)
{
    for (int i = 0; i < 20000 && eng_write_status(db) != ENG_OK; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK_MSG(eng_write_status(db) == ENG_OK, "seed %llu trial %d: no recovery: %s",
              (unsigned long long)t->seed, t->id, eng_last_error());
}

/* A power loss struck: maybe another during recovery, then the reboot. */
static void after_power_loss(trial *t, totals *tot)
{
    CHECK(fault_env_power_loss() == 0);
    tot->power_losses++;
    if (rn(3)) return;
    eng_options o = trial_opts();
    o.log_fn = quiet;
    fault_env_arm(FAULT_POWER_LOSS, 1 + rn(120), FAULT_ALL, EIO);
    eng_db *db = NULL;
    eng_status s = eng_open(t->dir, &o, &db);
    event("recovery under a second power loss: open %s (%s)\n", eng_status_str(s),
          s ? eng_last_error() : "");
    if (s == ENG_OK) eng_close(db);
    if (fault_env_dead()) {
        CHECK(fault_env_power_loss() == 0);
        tot->recovery_power_losses++;
    }
    fault_env_disarm();
}

/* Runs one trial with a fault armed at a random file operation, among
 * `calls` per 100 batches (0: no fault); returns the operations made. */
static char base_dir[512]; /* where trials live */

static uint64_t run_trial(trial *t, uint64_t calls, totals *tot)
{
    snprintf(t->dir, sizeof(t->dir), "%s/t%05d", base_dir, t->id);
    CHECK(mkdir(t->dir, 0755) == 0);
    events[0] = 0;
    fault_env_install();
    fault_env_set_fake_sync(1);
    if (getenv("STRATA_FAULT_DEBUG")) fault_env_trace(trace);
    eng_options o = trial_opts();
    o.log_fn = quiet;
    eng_db *db = NULL;
    eng_status s = eng_open(t->dir, &o, &db);
    CHECK_MSG(s == ENG_OK, "open: %s", eng_last_error());
    unsigned r = rn(20);
    t->mode = !calls ? 0 : r < 11 ? FAULT_POWER_LOSS : r < 16 ? FAULT_ONCE : FAULT_STICKY;
    t->n = 20 + (int)rn(MAX_BATCHES - 20);
    t->durable = -1;
    uint64_t nth = calls ? 1 + rnd() % (calls * (uint64_t)t->n / 100 + 1) : 0;
    event("trial %d mode %d nth %llu\n", t->id, t->mode, (unsigned long long)nth);
    if (t->mode == FAULT_POWER_LOSS) fault_env_arm(FAULT_POWER_LOSS, nth, FAULT_ALL, EIO);
    if (t->mode == FAULT_ONCE)
        fault_env_arm(FAULT_ONCE, nth, rn(2) ? FAULT_ALL : 1u << rn(9), rn(2) ? EIO : ENOSPC);
    if (t->mode == FAULT_STICKY)
        fault_env_arm(FAULT_STICKY, nth, FAULT_CREATE | FAULT_WRITE, ENOSPC);
    run_workload(t, db, 3 + (int)rn(12));
    tot->injected += fault_env_injected();
    tot->fired += fault_env_injected() > 0;
    int dead = fault_env_dead();
    if (!dead) {
        fault_env_disarm();
        wait_recovered(t, db);
        s = eng_close(db);
        CHECK_MSG(s == ENG_OK, "seed %llu trial %d: close after recovery: %s",
                  (unsigned long long)t->seed, t->id, eng_last_error());
        tot->recovered += fault_env_injected() > 0;
        tot->once += t->mode == FAULT_ONCE && fault_env_injected();
        tot->sticky += t->mode == FAULT_STICKY && fault_env_injected();
    } else {
        eng_close(db); /* fails: the machine is gone */
        after_power_loss(t, tot);
    }
    uint64_t made = fault_env_calls();
    fault_env_uninstall();
    verify(t, !dead);
    CHECK(nftw(t->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) == 0);
    tot->trials++;
    return made;
}

TEST(EveryDurableBatchSurvivesInjectedFaultsAndPowerLoss)
{
    const char *se = getenv("STRATA_SEED"), *st = getenv("STRATA_FAULT_TRIALS");
    uint64_t seed = se ? strtoull(se, NULL, 10) : 20261201;
    int trials = st ? atoi(st) : DEFAULT_TRIALS;
    rng = seed * 2654435761u + 3;
    totals tot = {0};
    trial *t = calloc(1, sizeof(*t));
    CHECK(t);
    /* Thousands of small files created and deleted: tmpfs when there is
     * one (on ext4 each create costs far more), else the test directory. */
    snprintf(base_dir, sizeof(base_dir), "/dev/shm/strata-fault-XXXXXX");
    if (!mkdtemp(base_dir)) snprintf(base_dir, sizeof(base_dir), "%s", test_tmpdir());
    /* Dry runs: how many file operations a trial makes. */
    uint64_t calls = 0, batches = 0;
    for (int i = 0; i < 4; i++) {
        t->seed = seed;
        t->id = i;
        calls += run_trial(t, 0, &tot);
        batches += (uint64_t)t->n;
    }
    calls = calls * 100 / batches;
    CHECK(calls > 50);
    for (int i = 4; i < trials; i++) {
        memset(t, 0, sizeof(*t));
        t->seed = seed;
        t->id = i;
        run_trial(t, calls, &tot);
    }
    free(t);
    if (strcmp(base_dir, test_tmpdir()) != 0) rmdir(base_dir);
    printf("seed %llu: %llu trials, %llu with a fault injected (%llu failed calls): %llu power "
           "losses (%llu more during recovery), %llu one-off errors and %llu disk-full runs "
           "recovered from\n",
           (unsigned long long)seed, (unsigned long long)tot.trials, (unsigned long long)tot.fired,
           (unsigned long long)tot.injected, (unsigned long long)tot.power_losses,
           (unsigned long long)tot.recovery_power_losses, (unsigned long long)tot.once,
           (unsigned long long)tot.sticky);
    CHECK(tot.power_losses > (uint64_t)trials / 3 && tot.sticky > 0 && tot.once > 0);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
