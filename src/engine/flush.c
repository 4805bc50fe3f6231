/*
 * flush.c -- writing memtables to level-0 tables, and the flush thread.
 *
 * The flush thread takes the oldest immutable memtable (D2), writes it to a
 * new table without holding db->mu, then records the table and the new log
 * number in the manifest and retires the memtable in one superversion swap
 * (D3). Only then is the memtable's log file deleted: until the manifest
 * says its data is in a table, recovery still needs it.
 *
 *  F1. A flush drops a point entry when a newer point entry of the same
 *      user key, in the same memtable, is visible to every snapshot (its
 *      sequence <= the oldest snapshot when the flush began; later
 *      snapshots are newer than the whole memtable): no reader can reach
 *      the older one, as compaction's C1. Hot keys (counters, a big
 *      collection's metadata) leave one version per flush instead of one
 *      per write.
 *  F2. A flush writes its table at flush_compression_level, not
 *      compression_level: the table lands in L0 (flush_one, recover_flush)
 *      and the next compaction rewrites it at compression_level (C6), so
 *      compressing it here is paid twice; zstd level 1 is 80% of the flush
 *      thread's instructions. Readers need nothing: every block carries its
 *      own type byte (table_format.md). The default is compression_level
 *      (ENG_FLUSH_COMPRESSION_SAME; the server's setting is 1): raw (0)
 *      saves those instructions (ZPOPMIN 23.7k -> 18.5k per pop) but a
 *      table waiting in L0 is ~5x level 1's size (zstd -3: ~1.4x), and a
 *      disk near full then cannot take a flush or the recovery of a log
 *      (test_disk_full.py's 16 MB disk fails at open with raw tables).
 *  F3. A flush drops a point entry that a range tombstone visible to every
 *      snapshot (sequence <= the oldest snapshot when the flush began, as
 *      F1) covers with a higher sequence (R1), when the tombstone is either
 *      (a) in the memtable being flushed: the table carries it, so no
 *      reader of the table or of what compaction makes of it can reach the
 *      entry; or (b) in a newer memtable (imm[1..], mem), whose log is
 *      durable before the table is built: an immutable memtable's log was
 *      synced when it was closed (db_switch_memtable; with no log failure,
 *      D5, every imm[] came from there), the current log is synced by
 *      hiding_tombstones. Then the log that recovery replays once the
 *      manifest passes imm[0]'s log holds the tombstone, the whole batch
 *      around it. Without the sync a power loss could keep the table
 *      without the entries and lose the tombstone's batch (a partial
 *      batch). A big key's delete or rewrite puts its range tombstone in a
 *      fresh memtable (db_write.c) and so leaves the old one every member
 *      of the key to flush: SPOP's rewrite of a set popped down to half
 *      made the flush write ~50k entries no reader could see.
 *
 * Faults: a flush that fails keeps its memtable and is retried after a
 * delay (D6). After a log failure the thread also freezes the failed log's
 * memtable and, once every memtable is in a table, creates the new log and
 * lets writes resume (D5).
 */
#include "db_impl.h"

#include "env.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* F3: is the point entry k covered by a tombstone of hide visible at
 * oldest? *run caches the last covering tombstone: the keys come in order,
 * so the next ones below its end are covered too when older than it. */
static int hidden(const rdel_view *hide, slice k, uint64_t oldest, const rdel **run)
{
    slice uk = ikey_user_key(k);
    uint64_t seq = ikey_sequence(k);
    if (*run && (*run)->seq > seq && slice_compare(uk, rdel_end(*run)) < 0) return 1;
    *run = rdel_view_covering(hide, uk, seq, oldest);
    return *run != NULL;
}

/* Moves it to the first entry at or after user key end. */
static void seek_past(iter *it, slice end, buf *t)
{
    t->len = 0;
    ikey_append(t, end, ENG_MAX_SEQUENCE, ENG_TYPE_SEEK);
    iter_seek(it, slice_make(t->data, t->len));
}

/* Adds the entries of it that db_build_table keeps (F1, F3) to b; *n
 * counts them. */
static eng_status add_entries(sst_builder *b, iter *it, uint64_t oldest, const db_hide *hide,
                              uint64_t *n)
{
    buf last = {0}, t = {0}; /* last: the user key of the last point entry kept */
    int have_last = 0;
    uint64_t last_seq = 0;
    const rdel *run = NULL; /* F3 */
    eng_status s = ENG_OK;
    iter_seek_first(it);
    while (s == ENG_OK && iter_valid(it)) {
        slice k = iter_key(it), uk = ikey_user_key(k);
        if (ikey_type(k) == ENG_TYPE_RANGE_DELETION) {
            /* An empty range [a, b) with b <= a deletes nothing. */
            if (slice_compare(uk, iter_value(it)) < 0) {
                sst_builder_add_range_del(b, uk, iter_value(it), ikey_sequence(k));
                (*n)++;
            }
        } else if (hide && hidden(&hide->v, k, oldest, &run)) {
            if (hide->seek) { /* F3: the rest of run's range is covered too */
                seek_past(it, rdel_end(run), &t);
                continue;
            }
        } else if (!have_last || last_seq > oldest ||
                   slice_compare(uk, slice_make(last.data, last.len)) != 0) {
            last.len = 0; /* else F1: shadowed for every snapshot */
            buf_append(&last, uk.data, uk.size);
            have_last = 1;
            last_seq = ikey_sequence(k);
            (*n)++;
            s = sst_builder_add(b, k, iter_value(it));
        }
        iter_next(it);
    }
    buf_free(&last);
    buf_free(&t);
    return s;
}

eng_status db_build_table(eng_db *db, iter *it, uint64_t number, uint64_t oldest_snapshot,
                          const db_hide *hide, file_meta **out)
{
    char path[PATH_MAX];
    db_filename(path, db->dir, number, "sst");
    int flevel = db->opts.flush_compression_level == ENG_FLUSH_COMPRESSION_SAME
                     ? db->opts.compression_level
                     : db->opts.flush_compression_level;
    sst_options so = {db->opts.block_size, flevel, /* F2 */
                      db->opts.bloom_bits_per_key, number};
    so.filter_policy = __atomic_load_n(&db->filter_policy, __ATOMIC_ACQUIRE);
    sst_builder *b;
    *out = NULL;
    eng_status s = sst_builder_new(path, &so, &b);
    if (s != ENG_OK) return s;
    uint64_t n = 0;
    s = add_entries(b, it, oldest_snapshot, hide, &n);
    if (s == ENG_OK) s = iter_status(it);
    if (s != ENG_OK || n == 0) {
        sst_builder_abandon(b);
        return s;
    }
    sst_file_info info;
    memset(&info, 0, sizeof(info));
    s = sst_builder_finish(b, &info);
    if (s != ENG_OK) {
        sst_file_info_free(&info);
        env_unlink(path);
        return s;
    }
    file_meta *f = file_meta_new(&db->vs);
    f->number = number;
    f->file_size = info.file_size;
    f->entries = info.entries;
    f->range_dels = info.range_deletions;
    f->smallest_seq = info.smallest_seq;
    f->largest_seq = info.largest_seq;
    f->smallest = info.smallest;
    f->largest = info.largest;
    memset(&info.smallest, 0, sizeof(buf));
    memset(&info.largest, 0, sizeof(buf));
    sst_file_info_free(&info);
    *out = f;
    return ENG_OK;
}

/* F3: the tombstones imm[0]'s flush may drop entries under, each set with a
 * reference: imm[0]'s own, and, when no log failed (D5), those of the newer
 * memtables, the current log synced first when mem holds some. A failed
 * sync leaves only imm[0]'s own. REQUIRES: mu; may drop it for the sync. */
static void hiding_tombstones(eng_db *db, db_hide *h)
{
    rdel_view *v = &h->v;
    v->n = 0;
    /* Without range deletions of its own, every tombstone in v is newer
     * than every entry of imm[0] (D2) and none is an entry to keep. */
    h->seek = mem_range_deletions(db->imm[0].mem) == 0;
    if (!rdel_set_empty(db->imm[0].rdels)) rdel_view_add(v, db->imm[0].rdels);
    if (db->log_fault.st != ENG_OK) return;
    for (int i = 1; i < db->nimm; i++)
        if (!rdel_set_empty(db->imm[i].rdels)) rdel_view_add(v, db->imm[i].rdels);
    if (rdel_set_empty(db->mem_rdels)) return;
    rdel_set *cur = db->mem_rdels;
    rdel_set_ref(cur); /* mem may be frozen and flushed while mu is dropped */
    if (db->log && db_sync_log(db) == ENG_OK) {
        rdel_view_add(v, cur);
    } else { /* a log failure now (D5): from here on, rely on none of the newer ones */
        rdel_view_release(v);
        if (!rdel_set_empty(db->imm[0].rdels)) rdel_view_add(v, db->imm[0].rdels);
    }
    rdel_set_unref(cur);
}

/* Flushes imm[0]. REQUIRES: mu held, nimm > 0; drops it while writing. */
static eng_status flush_one(eng_db *db)
{
    memtable *m = db->imm[0].mem;
    uint64_t old_log = db->imm[0].log_number;
    mem_ref(m);
    uint64_t number = db->vs.next_file++;
    uint64_t oldest = db_oldest_snapshot(db); /* F1, F3 */
    db_hide hide;
    hiding_tombstones(db, &hide);
    pthread_mutex_unlock(&db->mu);

    file_meta *f = NULL;
    iter *it = mem_iter_new(m);
    eng_status s = db_build_table(db, it, number, oldest, hide.v.n ? &hide : NULL, &f);
    iter_free(it);
    mem_unref(m);
    rdel_view_release(&hide.v);

    pthread_mutex_lock(&db->mu);
    if (s != ENG_OK) return s;
    version_edit e;
    edit_init(&e);
    if (f) {
        db->st.bytes_written_flush += f->file_size;
        edit_add_file(&e, 0, f);
    }
    /* D2: the oldest log still needed is the next memtable's. */
    e.has_log_number = 1;
    e.log_number = db->nimm > 1 ? db->imm[1].log_number : db->log_number;
    /* Counted before the install: a waiter in eng_flush may look at the
     * stats as soon as the memtable is retired. */
    db->st.flushes++;
    s = db_log_and_apply(db, &e, 1);
    edit_clear(&e);
    if (s == ENG_OK) {
        db_retire_log(db, old_log); /* K2 */
    } else {
        db->st.flushes--;
    }
    return s;
}

/* D5: the failed log's memtable becomes immutable under a reserved log
 * number, once a slot is free. REQUIRES: mu, need_freeze, nimm < DB_MAX_IMM. */
static void freeze_failed_log(eng_db *db)
{
    db_push_imm(db);
    db->log_number = db->vs.next_file++; /* created when writes resume */
    db->need_freeze = 0;
}

/* D5: every memtable of the failed log is in a table: writes resume on a
 * new log with the reserved number. REQUIRES: mu, nimm == 0, !need_freeze. */
static eng_status reopen_log(eng_db *db)
{
    char path[PATH_MAX];
    db_filename(path, db->dir, db->log_number, "log");
    wal_writer *w;
    pthread_mutex_unlock(&db->mu);
    eng_status s = wal_writer_create(path, &w);
    pthread_mutex_lock(&db->mu);
    if (s != ENG_OK) return s;
    db->log = w;
    db->recoveries++;
    db_fault_clear(db, &db->log_fault, "writing the log");
    return ENG_OK;
}

/* One unit of the flush thread's work; REQUIRES: mu. Returns 0 when there
 * is nothing to do now. */
static int flush_work(eng_db *db)
{
    if (db->need_freeze && db->nimm < DB_MAX_IMM) freeze_failed_log(db);
    if (db->nimm > 0) {
        eng_status s = flush_one(db);
        if (s == ENG_OK) {
            db->flush_delay = 0;
            db_fault_clear(db, &db->flush_fault, "flushing the memtable");
        } else {
            db_fault_note(db, &db->flush_fault, "flushing the memtable", s); /* D6 */
            db_fault_backoff(db, &db->flush_retry_at, &db->flush_delay);
        }
        return 1;
    }
    if (db->log_fault.st != ENG_OK && !db->need_freeze) {
        eng_status s = reopen_log(db);
        if (s != ENG_OK) {
            snprintf(db->log_fault.msg, sizeof(db->log_fault.msg), "%s", eng_last_error());
            db->log_fault.failures++;
            db_fault_backoff(db, &db->flush_retry_at, &db->flush_delay);
        }
        return 1;
    }
    return 0;
}

void *db_flush_thread(void *arg)
{
    eng_db *db = arg;
    pthread_mutex_lock(&db->mu);
    while (!db->shutting_down) {
        if (db->flush_retry_at > env_now_micros()) { /* D6: wait out the retry delay */
            db_wait(&db->flush_cv, &db->mu, db->flush_retry_at);
            continue;
        }
        if (db->bg_error != ENG_OK || !flush_work(db)) {
            pthread_cond_wait(&db->flush_cv, &db->mu);
            continue;
        }
        pthread_cond_broadcast(&db->bg_cv);
        pthread_cond_signal(&db->compact_cv);
    }
    pthread_mutex_unlock(&db->mu);
    return NULL;
}

eng_status eng_flush(eng_db *db)
{
    if (db->opts.read_only) return env_error(ENG_INVALID, "the database is open read-only");
    pthread_mutex_lock(&db->mu);
    uint64_t failures = db->flush_fault.failures;
    eng_status s = db->bg_error;
    if (s == ENG_OK && db->log_fault.st != ENG_OK)
        s = db_fault_refuse(&db->log_fault, "the log cannot be written");
    if (s == ENG_OK && mem_entries(db->mem) > 0) {
        while (db->nimm >= DB_MAX_IMM && db->bg_error == ENG_OK &&
               db->flush_fault.failures == failures)
            pthread_cond_wait(&db->bg_cv, &db->mu);
        s = db->bg_error;
        if (s == ENG_OK && db->flush_fault.failures != failures)
            s = db_fault_refuse(&db->flush_fault, "the flush fails");
        if (s == ENG_OK && db->log_fault.st != ENG_OK)
            s = db_fault_refuse(&db->log_fault, "the log cannot be written");
        if (s == ENG_OK) s = db_switch_memtable(db);
    }
    /* Until the memtables are in tables, or a flush attempt fails. */
    while (s == ENG_OK && db->nimm > 0 && db->bg_error == ENG_OK &&
           db->flush_fault.failures == failures && !db->shutting_down)
        pthread_cond_wait(&db->bg_cv, &db->mu);
    if (s == ENG_OK) s = db->bg_error;
    if (s == ENG_OK && db->flush_fault.failures != failures)
        s = db_fault_refuse(&db->flush_fault, "the flush fails");
    pthread_mutex_unlock(&db->mu);
    return s;
}
