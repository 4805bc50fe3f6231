/*
 * db_fault.c -- the bookkeeping of failing background work (the log, the
 * flush, compaction: db_impl.h D5-D7): what failed, since when, how often,
 * whether writes are refused because of it, and the retry delays.
 *
 * A fault slot goes failing at the first failed attempt (logged once, at
 * warning level) and back to healthy at the first attempt that succeeds
 * (logged too), so a disk that stays full for an hour writes two lines, not
 * one per retry.
 */
#include "db_impl.h"

#include "env.h"

#include <errno.h>
#include <stdio.h>
#include <time.h>

void db_fault_note(eng_db *db, bg_fault *f, const char *what, eng_status s)
{
    int was = f->st != ENG_OK;
    f->st = s;
    f->err = env_last_errno();
    f->failures++;
    snprintf(f->msg, sizeof(f->msg), "%s", eng_last_error());
    if (was) return;
    f->since_ms = env_unix_ms();
    __atomic_add_fetch(&db->faults, 1, __ATOMIC_RELEASE); /* D7 */
    db_log(db, 3, "%s failed: %s (%s); retrying in the background", what, eng_status_str(s),
           f->msg);
}

void db_fault_clear(eng_db *db, bg_fault *f, const char *what)
{
    if (f->st == ENG_OK) return;
    f->st = ENG_OK;
    f->since_ms = 0;
    __atomic_sub_fetch(&db->faults, 1, __ATOMIC_RELEASE); /* D7 */
    db_log(db, 3, "%s works again after %llu failed attempts", what,
           (unsigned long long)f->failures);
}

eng_status db_fault_refuse(const bg_fault *f, const char *why)
{
    env_set_last_errno(f->err);
    return env_error(f->st == ENG_CORRUPTION ? ENG_CORRUPTION : ENG_IOERR,
                     "writes are refused while %s: %s", why, f->msg);
}

void db_fault_backoff(const eng_db *db, uint64_t *at, uint64_t *delay)
{
    uint64_t min = db->opts.retry_delay_us, max = min * (RETRY_MAX_US / RETRY_MIN_US);
    *delay = *delay < min ? min : *delay * 2;
    if (*delay > max) *delay = max;
    *at = env_now_micros() + *delay;
}

/* Whether a write would be refused now (eng_write_status). REQUIRES: mu. */
static eng_status refused(eng_db *db)
{
    if (db->log_fault.st != ENG_OK)
        return db_fault_refuse(&db->log_fault, "the log cannot be written");
    int full = mem_usage(db->mem) >= db->opts.write_buffer_size && db->nimm >= DB_MAX_IMM;
    if (db->flush_fault.st != ENG_OK && full)
        return db_fault_refuse(&db->flush_fault, "the memtable is full and its flush fails");
    if (db->compact_fault.st != ENG_OK && db->vs.current->nfiles[0] >= db->opts.l0_stop_trigger)
        return db_fault_refuse(&db->compact_fault, "level 0 is full and compaction fails");
    return ENG_OK;
}

eng_status eng_write_status(eng_db *db)
{
    if (db->opts.read_only) return env_error(ENG_INVALID, "the database is open read-only");
    if (__atomic_load_n(&db->faults, __ATOMIC_ACQUIRE) == 0 && db->bg_error == ENG_OK)
        return ENG_OK; /* D7 */
    pthread_mutex_lock(&db->mu);
    eng_status s = db->bg_error != ENG_OK
                       ? env_error(db->bg_error, "writes are refused after an internal error")
                       : refused(db);
    pthread_mutex_unlock(&db->mu);
    return s;
}

static void fault_info(const bg_fault *f, eng_fault_info *out)
{
    out->failing = f->st != ENG_OK;
    out->err = f->err;
    out->since_ms = f->st != ENG_OK ? f->since_ms : 0;
    out->failures = f->failures;
    snprintf(out->error, sizeof(out->error), "%s", f->failures ? f->msg : "");
}

void eng_get_health(eng_db *db, eng_health *h)
{
    memset(h, 0, sizeof(*h));
    pthread_mutex_lock(&db->mu);
    fault_info(&db->log_fault, &h->log);
    fault_info(&db->flush_fault, &h->flush);
    fault_info(&db->compact_fault, &h->compaction);
    h->recoveries = db->recoveries;
    h->writes_refused = db->bg_error != ENG_OK || refused(db) != ENG_OK;
    pthread_mutex_unlock(&db->mu);
}

void db_wait(pthread_cond_t *cv, pthread_mutex_t *mu, uint64_t at_us)
{
    if (!at_us) {
        pthread_cond_wait(cv, mu);
        return;
    }
    /* The deadline may have passed since the caller looked: return, so
     * the caller's loop retries now instead of sleeping until a signal
     * that may never come (an eng_flush waiting on this thread). */
    uint64_t now = env_now_micros();
    if (at_us <= now) return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (at_us - now) * 1000;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(cv, mu, &ts);
}
