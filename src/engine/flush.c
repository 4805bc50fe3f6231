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
 */
#include "db_impl.h"

#include "env.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

eng_status db_build_table(eng_db *db, iter *it, uint64_t number, uint64_t oldest_snapshot,
                          file_meta **out)
{
    char path[PATH_MAX];
    db_filename(path, db->dir, number, "sst");
    sst_options so = {db->opts.block_size, db->opts.compression_level, db->opts.bloom_bits_per_key};
    sst_builder *b;
    *out = NULL;
    eng_status s = sst_builder_new(path, &so, &b);
    if (s != ENG_OK) return s;
    uint64_t n = 0;
    buf last = {0}; /* the user key of the last point entry kept */
    int have_last = 0;
    uint64_t last_seq = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it)) {
        slice k = iter_key(it);
        if (ikey_type(k) == ENG_TYPE_RANGE_DELETION) {
            /* An empty range [a, b) with b <= a deletes nothing. */
            if (slice_compare(ikey_user_key(k), iter_value(it)) < 0) {
                sst_builder_add_range_del(b, ikey_user_key(k), iter_value(it), ikey_sequence(k));
                n++;
            }
            continue;
        }
        slice uk = ikey_user_key(k);
        if (have_last && last_seq <= oldest_snapshot &&
            slice_compare(uk, slice_make(last.data, last.len)) == 0)
            continue; /* F1: shadowed for every snapshot */
        last.len = 0;
        buf_append(&last, uk.data, uk.size);
        have_last = 1;
        last_seq = ikey_sequence(k);
        n++;
        s = sst_builder_add(b, k, iter_value(it));
        if (s != ENG_OK) break;
    }
    buf_free(&last);
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
        unlink(path);
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

/* Flushes imm[0]. REQUIRES: mu held, nimm > 0; drops it while writing. */
static eng_status flush_one(eng_db *db)
{
    memtable *m = db->imm[0].mem;
    uint64_t old_log = db->imm[0].log_number;
    mem_ref(m);
    uint64_t number = db->vs.next_file++;
    uint64_t oldest = db_oldest_snapshot(db); /* F1 */
    pthread_mutex_unlock(&db->mu);

    file_meta *f = NULL;
    iter *it = mem_iter_new(m);
    eng_status s = db_build_table(db, it, number, oldest, &f);
    iter_free(it);
    mem_unref(m);

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
        char path[PATH_MAX];
        db_filename(path, db->dir, old_log, "log");
        unlink(path);
    } else {
        db->st.flushes--;
    }
    return s;
}

void *db_flush_thread(void *arg)
{
    eng_db *db = arg;
    pthread_mutex_lock(&db->mu);
    for (;;) {
        while (!db->shutting_down && (db->nimm == 0 || db->bg_error != ENG_OK))
            pthread_cond_wait(&db->flush_cv, &db->mu);
        if (db->shutting_down) break;
        eng_status s = flush_one(db);
        if (s != ENG_OK) {
            db->bg_error = s;
            db->st.background_errors++;
            db_log(db, 3, "flush failed: %s (%s)", eng_status_str(s), eng_last_error());
        }
        pthread_cond_broadcast(&db->bg_cv);
        pthread_cond_signal(&db->compact_cv);
    }
    pthread_mutex_unlock(&db->mu);
    return NULL;
}

eng_status eng_flush(eng_db *db)
{
    pthread_mutex_lock(&db->mu);
    eng_status s = db->bg_error;
    if (s == ENG_OK && mem_entries(db->mem) > 0) {
        while (db->nimm >= DB_MAX_IMM && db->bg_error == ENG_OK)
            pthread_cond_wait(&db->bg_cv, &db->mu);
        s = db->bg_error;
        if (s == ENG_OK) s = db_switch_memtable(db);
    }
    while (s == ENG_OK && db->nimm > 0 && db->bg_error == ENG_OK)
        pthread_cond_wait(&db->bg_cv, &db->mu);
    if (s == ENG_OK) s = db->bg_error;
    pthread_mutex_unlock(&db->mu);
    return s;
}
