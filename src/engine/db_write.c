/*
 * db_write.c -- the write path: sequence numbers, the log, the memtable,
 * memtable switches, write stalls, group commit and the once-a-second sync.
 *
 * eng_write holds db->mu while it assigns the batch's sequence numbers,
 * appends its log record and inserts it into the memtable (Invariant M1 of
 * memtable.h: one writer at a time), then publishes last_seq, so a reader
 * that pins a superversion sees whole batches or nothing. fsyncs happen
 * outside the mutex on a dup() of the log's descriptor, so that a log
 * switch by another writer cannot close the file under the fsync; the log
 * being switched away from is synced before it is closed.
 *
 * A failing write, fsync or close of the log, or a new log that cannot be
 * created, is a log failure (db_impl.h, D5): db_log_failed abandons the log
 * and writes are refused until the flush thread has put the writes it held
 * into a table and created a new log (flush.c).
 */
#include "db_impl.h"

#include "env.h"
#include "write_batch.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

void db_push_imm(eng_db *db)
{
    imm_entry *e = &db->imm[db->nimm++];
    e->mem = db->mem;
    e->log_number = db->log_number;
    e->max_seq = db->last_seq;
    e->rdels = db->mem_rdels;
    db->mem = db_new_memtable(db);
    db->mem_rdels = NULL;
    db_install_sv(db);
    pthread_cond_signal(&db->flush_cv);
}

void db_log_failed(eng_db *db, eng_status s)
{
    if (db->log_fault.st != ENG_OK) return;
    db_fault_note(db, &db->log_fault, "writing the log", s);
    wal_writer_abandon(db->log); /* W2 */
    db->log = NULL;
    db->log_dirty = 0;
    db->need_freeze = 1; /* D5 */
    pthread_cond_signal(&db->flush_cv);
    pthread_cond_broadcast(&db->bg_cv);
}

eng_status db_switch_memtable(eng_db *db)
{
    /* D1: everything acknowledged in the old log must survive its close;
     * if it cannot, its memtable is flushed instead (D5). */
    eng_status s = wal_writer_close(db->log, 1);
    db->log = NULL;
    db->log_dirty = 0;
    if (s != ENG_OK) {
        db_log_failed(db, s);
        return s;
    }
    uint64_t number = db->vs.next_file++;
    char path[PATH_MAX];
    db_filename(path, db->dir, number, "log");
    s = wal_writer_create(path, &db->log);
    if (s != ENG_OK) {
        db_log_failed(db, s);
        return s;
    }
    db_push_imm(db);
    db->log_number = number;
    return ENG_OK;
}

/* Makes room in the memtable, slowing or stopping the writer while level 0
 * or the flush is behind; refuses while the work it would wait for fails
 * (D5, D6). REQUIRES: mu. */
static eng_status make_room(eng_db *db)
{
    int allow_delay = 1;
    for (;;) {
        if (db->bg_error != ENG_OK) return db->bg_error;
        if (db->log_fault.st != ENG_OK)
            return db_fault_refuse(&db->log_fault, "the log cannot be written");
        int l0 = db->vs.current->nfiles[0];
        if (allow_delay && l0 >= db->opts.l0_slowdown_trigger) {
            /* Spread the delay over many writes instead of one long stop. */
            uint64_t t0 = env_now_micros();
            pthread_mutex_unlock(&db->mu);
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            pthread_mutex_lock(&db->mu);
            db->st.stall_slowdowns++;
            db->st.stall_micros += env_now_micros() - t0;
            allow_delay = 0;
        } else if (mem_usage(db->mem) < db->opts.write_buffer_size) {
            return ENG_OK;
        } else if (db->nimm >= DB_MAX_IMM || l0 >= db->opts.l0_stop_trigger) {
            if (db->nimm >= DB_MAX_IMM && db->flush_fault.st != ENG_OK)
                return db_fault_refuse(&db->flush_fault,
                                       "the memtable is full and its flush fails");
            if (l0 >= db->opts.l0_stop_trigger && db->compact_fault.st != ENG_OK)
                return db_fault_refuse(&db->compact_fault, "level 0 is full and compaction fails");
            uint64_t t0 = env_now_micros();
            db->st.stall_stops++;
            pthread_cond_signal(&db->compact_cv);
            pthread_cond_wait(&db->bg_cv, &db->mu);
            db->st.stall_micros += env_now_micros() - t0;
        } else {
            return db_switch_memtable(db);
        }
    }
}

/* A range deletion hiding this many memtable entries starts a new memtable
 * first (below), so that scans can skip them (merger.h, G2). */
#define RDEL_FREEZE_ENTRIES 1024

typedef struct covered_ctx {
    memtable *mem;
    int many;
} covered_ctx;

/* Does [start, end) cover at least RDEL_FREEZE_ENTRIES entries of mem? */
static eng_status count_covered(void *ctx, uint64_t seq, int type, slice start, slice end)
{
    covered_ctx *c = ctx;
    if (type != ENG_TYPE_RANGE_DELETION || c->many) return ENG_OK;
    buf t = {0};
    ikey_append(&t, start, ENG_MAX_SEQUENCE, ENG_TYPE_SEEK);
    iter *it = mem_iter_new(c->mem);
    int n = 0;
    for (iter_seek(it, slice_make(t.data, t.len)); iter_valid(it) && n < RDEL_FREEZE_ENTRIES;
         iter_next(it))
        if (slice_compare(ikey_user_key(iter_key(it)), end) >= 0)
            break;
        else
            n++;
    iter_free(it);
    buf_free(&t);
    c->many = n >= RDEL_FREEZE_ENTRIES;
    return ENG_OK;
}

/* A batch whose range deletion hides many entries of mem goes into a fresh
 * memtable: then every entry it hides is in a source older than it, which a
 * scan jumps over (G2) instead of stepping through, and which the old
 * memtable's flush leaves out of its table (flush.c, F3). REQUIRES: mu. */
static eng_status fresh_memtable_for_rdel(eng_db *db, eng_batch *b)
{
    if (!batch_has_range_deletes(b) || db->nimm >= DB_MAX_IMM || mem_entries(db->mem) == 0)
        return ENG_OK;
    covered_ctx c = {db->mem, 0};
    batch_iterate(b, count_covered, &c);
    return c.many ? db_switch_memtable(db) : ENG_OK;
}

static eng_status collect_rdel_op(void *ctx, uint64_t seq, int type, slice key, slice value)
{
    if (type == ENG_TYPE_RANGE_DELETION) rdel_set_add(ctx, key, value, seq);
    return ENG_OK;
}

/* fdatasyncs the current log without holding mu during the sync; a
 * failure is a log failure (D5). REQUIRES: mu held, log != NULL; returns
 * with it held. */
static eng_status sync_log_unlocked(eng_db *db)
{
    int fd;
    eng_status s = env_dup(wal_writer_fd(db->log), &fd, "log");
    if (s == ENG_OK) {
        db->log_dirty = 0;
        pthread_mutex_unlock(&db->mu);
        s = wal_writer_sync_fd(fd);
        env_close(fd, "log");
        pthread_mutex_lock(&db->mu);
        db->st.log_syncs++;
    }
    if (s != ENG_OK) db_log_failed(db, s);
    return s;
}

/* Appends the batch's range tombstones to mem's set, which readers search
 * without locks (rangedel.h); only the first one of a memtable needs a new
 * sv. REQUIRES: mu, and last_seq not yet covering the batch, so that no
 * reader can see its point entries without its tombstones. */
static void note_range_deletes(eng_db *db, eng_batch *b)
{
    int fresh = db->mem_rdels == NULL;
    if (fresh) db->mem_rdels = rdel_set_new();
    batch_iterate(b, collect_rdel_op, db->mem_rdels);
    if (fresh) db_install_sv(db);
}

eng_status eng_write(eng_db *db, eng_batch *b, int flags)
{
    uint32_t count = (uint32_t)eng_batch_count(b);
    if (count == 0) return flags & ENG_WRITE_SYNC ? eng_commit(db, 1) : ENG_OK;
    if (eng_batch_byte_size(b) > db->opts.max_record_bytes) /* W3: refused whole, up front */
        return env_error(ENG_INVALID,
                         "write batch of %zu bytes exceeds the log's record limit of %zu bytes; "
                         "nothing of it was written",
                         eng_batch_byte_size(b), db->opts.max_record_bytes);
    if (db->opts.read_only) return env_error(ENG_INVALID, "the database is open read-only");
    pthread_mutex_lock(&db->mu);
    eng_status s = make_room(db);
    if (s == ENG_OK) s = fresh_memtable_for_rdel(db, b);
    if (s != ENG_OK) goto out;
    uint64_t seq = db->last_seq + 1;
    batch_set_sequence(b, seq);
    slice rep = batch_contents(b);
    wal_writer_append(db->log, rep.data, rep.size);
    db->log_dirty = 1;
    db->st.bytes_written_user += rep.size;
    db->st.bytes_written_log += rep.size + 8;
    if (!(flags & ENG_WRITE_DEFER) || (flags & ENG_WRITE_SYNC)) s = wal_writer_flush(db->log);
    if (s != ENG_OK) { /* not applied; what the log buffered before is (D5) */
        db_log_failed(db, s);
        goto out;
    }
    /* M10: nobody can read below this write's sequence. */
    mem_set_replace(db->mem, db->opts.inplace_updates && db->snapshots.next == &db->snapshots &&
                                 atomic_load_explicit(&db->live_iters, memory_order_relaxed) == 0);
    s = batch_insert_into(b, db->mem);
    if (s != ENG_OK) {
        /* The log may now hold a record the memtable lacks: stop writing. */
        db->bg_error = s;
        db->st.background_errors++;
        goto out;
    }
    if (batch_has_range_deletes(b)) note_range_deletes(db, b);
    /* The whole batch at once: no reader sees a sequence inside it, which
     * lets batch_insert_into leave out ops the batch replaced (B5). */
    db->last_seq = seq + count - 1;
    if (flags & ENG_WRITE_SYNC) s = sync_log_unlocked(db);
out:
    pthread_mutex_unlock(&db->mu);
    return s;
}

eng_status db_flush_log(eng_db *db)
{
    eng_status s = ENG_OK;
    if (db->log_fault.st != ENG_OK)
        s = db_fault_refuse(&db->log_fault, "the log cannot be written");
    else if (!db->log)
        s = env_error(ENG_INVALID, "the database has no log (read-only)");
    else if ((s = wal_writer_flush(db->log)) != ENG_OK)
        db_log_failed(db, s);
    return s;
}

eng_status db_sync_log(eng_db *db)
{
    eng_status s = db_flush_log(db);
    return s == ENG_OK ? sync_log_unlocked(db) : s;
}

eng_status eng_commit(eng_db *db, int sync)
{
    pthread_mutex_lock(&db->mu);
    eng_status s = sync ? db_sync_log(db) : db_flush_log(db);
    pthread_mutex_unlock(&db->mu);
    return s;
}

void eng_set_sync_mode(eng_db *db, int sync_mode)
{
    pthread_mutex_lock(&db->mu);
    db->sync_mode = sync_mode;
    pthread_cond_signal(&db->sync_cv);
    pthread_mutex_unlock(&db->mu);
}

void *db_sync_thread(void *arg)
{
    eng_db *db = arg;
    pthread_mutex_lock(&db->mu);
    while (!db->shutting_down) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&db->sync_cv, &db->mu, &ts);
        if (db->shutting_down) break;
        if (db->sync_mode != ENG_SYNC_EVERYSEC || !db->log_dirty || !db->log) continue;
        /* Records buffered with ENG_WRITE_DEFER reach the OS at eng_commit;
         * this thread makes durable what the OS already has. A failure is
         * a log failure (D5), logged there. */
        sync_log_unlocked(db);
    }
    pthread_mutex_unlock(&db->mu);
    return NULL;
}
