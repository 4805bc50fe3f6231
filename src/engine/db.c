/*
 * db.c -- opening, recovering and closing a database; options, statistics.
 *
 * Directory layout (FORMAT.md):
 *   NNNNNN.log      write-ahead logs (log_format.md)
 *   NNNNNN.sst      table files (table_format.md)
 *   MANIFEST-NNNNNN the live-file manifest (manifest_format.md)
 *   CURRENT         the name of the live manifest
 *   LOCK            flock()ed while a process has the db open
 * All numbers come from one counter (next_file) recorded in the manifest.
 *
 * Recovery: read CURRENT and the manifest; replay, in number order, every log
 * numbered >= the manifest's log number into memtables, writing each to a
 * level-0 table; stop at the first torn or corrupt record (Invariant L1 of
 * log.h), truncate that log there, and ignore any later log; then start a new
 * log, write a fresh manifest naming the tables, switch CURRENT to it, and
 * delete the files no longer referenced. A crash during recovery leaves the
 * old CURRENT and logs, so recovery simply runs again.
 */
#include "db_impl.h"

#include "env.h"
#include "log_format.h"
#include "write_batch.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

void eng_options_init(eng_options *o)
{
    memset(o, 0, sizeof(*o));
    o->write_buffer_size = 64u << 20;
    o->cache_size = 256u << 20;
    o->row_cache_size = 0;
    o->block_size = 4096;
    o->compression_level = 1;
    o->bottom_compression_level = 6;
    o->flush_compression_level = ENG_FLUSH_COMPRESSION_SAME; /* F2 */
    o->dict_size = 8u << 10;
    o->bloom_bits_per_key = 10;
    o->sync_mode = ENG_SYNC_EVERYSEC;
    o->create_if_missing = 1;
    o->l0_compaction_trigger = 4;
    o->l0_slowdown_trigger = 12;
    o->l0_stop_trigger = 20;
    o->max_bytes_level_base = UINT64_C(256) << 20;
    o->level_size_multiplier = 10;
    o->target_file_size = UINT64_C(64) << 20;
}

void eng_set_filter_policy(eng_db *db, const eng_filter_policy *policy)
{
    __atomic_store_n(&db->filter_policy, policy, __ATOMIC_RELEASE);
}

const char *eng_status_str(eng_status s)
{
    switch (s) {
    case ENG_OK:
        return "OK";
    case ENG_NOTFOUND:
        return "NotFound";
    case ENG_CORRUPTION:
        return "Corruption";
    case ENG_IOERR:
        return "IO error";
    case ENG_INVALID:
        return "Invalid argument";
    case ENG_NOMEM:
        return "Out of memory";
    case ENG_BUSY:
        return "Busy";
    default:
        return "Unknown error";
    }
}

void eng_free(void *p)
{
    free(p);
}

memtable *db_new_memtable(const eng_db *db)
{
    size_t first = db->opts.write_buffer_size / 8;
    if (first < 4096) first = 4096;
    if (first > (1u << 20)) first = 1u << 20;
    memtable *m = mem_new_sized(first);
    mem_set_scan_only(m, &db->scan_only);
    return m;
}

int eng_hint_scan_only_prefix(eng_db *db, const char *p, size_t n)
{
    pthread_mutex_lock(&db->mu);
    int r = mem_scan_only_add(&db->scan_only, p, n);
    pthread_mutex_unlock(&db->mu);
    return r;
}

void db_filename(char *out, const char *dir, uint64_t number, const char *suffix)
{
    snprintf(out, PATH_MAX, "%s/%06" PRIu64 ".%s", dir, number, suffix);
}

void db_log(eng_db *db, int level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (db->opts.log_fn)
        db->opts.log_fn(db->opts.log_ctx, level, msg);
    else if (level >= 2)
        fprintf(stderr, "strata engine: %s\n", msg);
}

/* Sanitizes options so that nonsense values cannot wedge the engine. */
static void fix_options(eng_options *o)
{
    if (o->write_buffer_size < 4096) o->write_buffer_size = 4096;
    if (o->block_size < 256) o->block_size = 256;
    if (o->l0_compaction_trigger < 1) o->l0_compaction_trigger = 1;
    if (o->l0_slowdown_trigger < o->l0_compaction_trigger)
        o->l0_slowdown_trigger = o->l0_compaction_trigger;
    if (o->l0_stop_trigger < o->l0_slowdown_trigger) o->l0_stop_trigger = o->l0_slowdown_trigger;
    if (o->max_bytes_level_base < 4096) o->max_bytes_level_base = 4096;
    if (o->level_size_multiplier < 2) o->level_size_multiplier = 2;
    if (o->target_file_size < 4096) o->target_file_size = 4096;
    if (o->sync_mode < ENG_SYNC_ALWAYS || o->sync_mode > ENG_SYNC_NO)
        o->sync_mode = ENG_SYNC_EVERYSEC;
    if (o->retry_delay_us == 0) o->retry_delay_us = RETRY_MIN_US;
    if (o->max_record_bytes == 0 || o->max_record_bytes > LOG_MAX_RECORD_SIZE)
        o->max_record_bytes = LOG_MAX_RECORD_SIZE;
}

static eng_status lock_dir(eng_db *db)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/LOCK", db->dir);
    return env_open_locked(path, &db->lock_fd);
}

static void db_free(eng_db *db)
{
    __atomic_store_n(&db->vs.deletions_enabled, 0, __ATOMIC_RELEASE);
    if (db->sv) sv_unref(db->sv);
    if (db->log) wal_writer_close(db->log, 1);
    if (db->mem) mem_unref(db->mem);
    rdel_set_unref(db->mem_rdels);
    for (int i = 0; i < db->nimm; i++) {
        mem_unref(db->imm[i].mem);
        rdel_set_unref(db->imm[i].rdels);
    }
    version_set_destroy(&db->vs);
    if (db->cache) cache_free(db->cache);
    free(db->retired_logs); /* REQUIRES of eng_close: no checkpoint runs; recovery deletes them */
    row_cache_free(db->vs.row_cache);
    env_close(db->lock_fd, "LOCK");
    pthread_mutex_destroy(&db->mu);
    pthread_cond_destroy(&db->bg_cv);
    pthread_cond_destroy(&db->flush_cv);
    pthread_cond_destroy(&db->compact_cv);
    pthread_cond_destroy(&db->sync_cv);
    free(db->dir);
    free(db);
}

eng_status eng_open(const char *dir, const eng_options *opts, eng_db **out)
{
    *out = NULL;
    if (!dir || !*dir) return env_error(ENG_INVALID, "empty directory name");
    eng_db *db = calloc(1, sizeof(*db));
    if (!db) return ENG_NOMEM;
    db->lock_fd = -1;
    db->dir = strdup(dir);
    if (opts)
        db->opts = *opts;
    else
        eng_options_init(&db->opts);
    fix_options(&db->opts);
    db->sync_mode = db->opts.sync_mode;
    db->snapshots.next = db->snapshots.prev = &db->snapshots;
    pthread_mutex_init(&db->mu, NULL);
    pthread_cond_init(&db->bg_cv, NULL);
    pthread_cond_init(&db->flush_cv, NULL);
    pthread_cond_init(&db->compact_cv, NULL);
    pthread_cond_init(&db->sync_cv, NULL);
    db->cache = cache_new(db->opts.cache_size);
    version_set_init(&db->vs, dir, &db->opts, db->cache);
    db->vs.row_cache = row_cache_new(db->opts.row_cache_size);

    eng_status s = ENG_OK;
    if (db->opts.create_if_missing) s = env_mkdir_p(dir);
    if (s == ENG_OK) s = lock_dir(db);
    if (s == ENG_OK) s = db_recover(db);
    if (s != ENG_OK) {
        db_free(db);
        return s;
    }
    if (!db->mem) db->mem = db_new_memtable(db); /* read-only recovery left the logs in one */
    pthread_mutex_lock(&db->mu);
    db_install_sv(db);
    pthread_mutex_unlock(&db->mu);
    *out = db;
    if (db->opts.read_only) return ENG_OK; /* no background work: nothing is written */
    __atomic_store_n(&db->vs.deletions_enabled, 1, __ATOMIC_RELEASE);
    pthread_create(&db->flush_thr, NULL, db_flush_thread, db);
    pthread_create(&db->compact_thr, NULL, db_compact_thread, db);
    pthread_create(&db->sync_thr, NULL, db_sync_thread, db);
    db->threads_started = 1;
    if (db->opts.readahead) db_readahead_start(db);
    return ENG_OK;
}

eng_status eng_close(eng_db *db)
{
    if (!db) return ENG_OK;
    pthread_mutex_lock(&db->mu);
    eng_status s = db->log ? wal_writer_flush(db->log) : ENG_OK;
    if (s == ENG_OK && db->log) s = wal_writer_sync(db->log);
    if (s == ENG_OK && db->log_fault.st != ENG_OK) /* D5: its writes may not all be durable */
        s = db_fault_refuse(&db->log_fault, "the log cannot be written");
    __atomic_store_n(&db->shutting_down, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&db->flush_cv);
    pthread_cond_broadcast(&db->compact_cv);
    pthread_cond_broadcast(&db->sync_cv);
    pthread_cond_broadcast(&db->bg_cv);
    pthread_mutex_unlock(&db->mu);
    db_readahead_stop(db); /* RA1: its references go before the versions */
    if (db->threads_started) {
        pthread_join(db->flush_thr, NULL);
        pthread_join(db->compact_thr, NULL);
        pthread_join(db->sync_thr, NULL);
    }
    db_free(db);
    return s;
}

/* ---- Statistics -------------------------------------------------------- */

void eng_get_stats(eng_db *db, eng_stats *st)
{
    pthread_mutex_lock(&db->mu);
    *st = db->st;
    version *v = db->vs.current;
    version_ref(v);
    st->memtable_bytes = mem_usage(db->mem);
    for (int i = 0; i < db->nimm; i++)
        st->memtable_bytes += mem_usage(db->imm[i].mem);
    st->immutable_memtables = (uint64_t)db->nimm;
    st->log_bytes = db->log ? wal_writer_size(db->log) : 0;
    for (int i = 0; i < db->nimm; i++) { /* logs whose memtables await a flush */
        char path[PATH_MAX];
        uint64_t size;
        db_filename(path, db->dir, db->imm[i].log_number, "log");
        if (env_file_size(path, &size) == ENG_OK) st->log_bytes += size;
    }
    st->last_sequence = db->last_seq;
    st->compaction_pending = v->score >= 1 && v->score_level >= 0;
    pthread_mutex_unlock(&db->mu);
    for (int l = 0; l < ENG_MAX_LEVELS; l++) {
        st->level_files[l] = (uint64_t)v->nfiles[l];
        st->level_bytes[l] = v->level_bytes[l];
    }
    st->bloom_useful = version_bloom_useful(v);
    version_unref(v);
    st->cache_capacity = cache_capacity(db->cache);
    st->cache_usage = cache_usage(db->cache);
    st->cache_hits = cache_hits(db->cache);
    st->cache_misses = cache_misses(db->cache);
    st->row_cache_capacity = row_cache_capacity(db->vs.row_cache);
    st->row_cache_usage = row_cache_usage(db->vs.row_cache);
    st->row_cache_hits = row_cache_hits(db->vs.row_cache);
    st->row_cache_misses = row_cache_misses(db->vs.row_cache);
    st->readahead_loads = __atomic_load_n(&db->ra.loads, __ATOMIC_RELAXED);
    st->readahead_cached = __atomic_load_n(&db->ra.cached, __ATOMIC_RELAXED);
    st->readahead_dropped = __atomic_load_n(&db->ra.dropped, __ATOMIC_RELAXED);
}

typedef struct usage_ctx {
    const char *dir;
    uint64_t bytes;
} usage_ctx;

static void usage_cb(void *ctx, const char *name)
{
    usage_ctx *u = ctx;
    uint64_t num, size;
    if (db_parse_name(name, &num) != FT_LOG) return;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", u->dir, name);
    if (env_file_size(path, &size) == ENG_OK) u->bytes += size;
}

uint64_t eng_disk_usage(eng_db *db)
{
    pthread_mutex_lock(&db->mu);
    version *v = db->vs.current;
    version_ref(v);
    pthread_mutex_unlock(&db->mu);
    usage_ctx u = {db->dir, 0};
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        u.bytes += v->level_bytes[l];
    version_unref(v);
    env_list_dir(db->dir, usage_cb, &u);
    return u.bytes;
}
