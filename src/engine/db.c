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
    return mem_new_sized(first);
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
}

/* ---- Directory listing ------------------------------------------------- */

enum { FT_LOG, FT_SST, FT_MANIFEST, FT_LOST, FT_OTHER };

static int parse_name(const char *name, uint64_t *num)
{
    char *end;
    if (!strncmp(name, "MANIFEST-", 9)) {
        *num = strtoull(name + 9, &end, 10);
        return *end || end == name + 9 ? FT_OTHER : FT_MANIFEST;
    }
    if (*name < '0' || *name > '9') return FT_OTHER;
    *num = strtoull(name, &end, 10);
    if (!strcmp(end, ".log")) return FT_LOG;
    if (!strcmp(end, ".sst")) return FT_SST;
    if (!strcmp(end, ".sst.lost")) return FT_LOST; /* set aside; its number stays used */
    return FT_OTHER;
}

typedef struct dir_list {
    uint64_t *logs;
    int nlogs, cap;
    uint64_t max_number;
} dir_list;

static void list_cb(void *ctx, const char *name)
{
    dir_list *d = ctx;
    uint64_t num;
    int t = parse_name(name, &num);
    if (t == FT_OTHER) return;
    if (num > d->max_number) d->max_number = num;
    if (t != FT_LOG) return;
    if (d->nlogs == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->logs = realloc(d->logs, sizeof(uint64_t) * (size_t)d->cap);
        if (!d->logs) abort();
    }
    d->logs[d->nlogs++] = num;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct obsolete_ctx {
    eng_db *db;
} obsolete_ctx;

static int file_is_live(const version *v, uint64_t num)
{
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++)
            if (v->files[l][i]->number == num) return 1;
    return 0;
}

static void obsolete_cb(void *ctx, const char *name)
{
    eng_db *db = ((obsolete_ctx *)ctx)->db;
    uint64_t num;
    int t = parse_name(name, &num), dead = 0;
    if (t == FT_LOG) dead = num < db->vs.log_number;
    if (t == FT_SST) dead = !file_is_live(db->vs.current, num);
    if (t == FT_MANIFEST) dead = num != db->vs.manifest_number;
    if (t == FT_OTHER) dead = !strcmp(name, "CURRENT.tmp");
    if (!dead) return;
    char path[PATH_MAX], kept[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s/%s", db->dir, name);
    if (t == FT_SST && db->vs.manifest_damaged) {
        /* A damaged manifest may have lost the record naming this table:
         * set it aside (never deleted) for a human instead. */
        snprintf(kept, sizeof(kept), "%s.lost", path);
        db_log(db, 3, "table %s is not in the damaged manifest; kept as %s", path, kept);
        rename(path, kept);
        return;
    }
    unlink(path);
}

/* ---- Recovery ------------------------------------------------------------ */

/* Writes mem to a level-0 table recorded in e and starts a fresh memtable. */
static eng_status recover_flush(eng_db *db, memtable **mem, version_edit *e)
{
    if (mem_entries(*mem) == 0) return ENG_OK;
    file_meta *f;
    iter *it = mem_iter_new(*mem);
    eng_status s = db_build_table(db, it, db->vs.next_file++, ENG_MAX_SEQUENCE, &f); /* no snapshots */
    iter_free(it);
    if (s != ENG_OK) return s;
    if (f) edit_add_file(e, 0, f);
    mem_unref(*mem);
    *mem = db_new_memtable(db);
    return ENG_OK;
}

/* Replays one log. *stop is set when it ended with a bad record. */
static eng_status replay_log(eng_db *db, uint64_t number, memtable **mem, version_edit *e,
                             int *stop)
{
    char path[PATH_MAX];
    db_filename(path, db->dir, number, "log");
    wal_reader *r;
    eng_status s = wal_reader_open(path, &r);
    if (s == ENG_CORRUPTION) {
        db_log(db, 3, "log %s: bad header; ignoring it and every later log", path);
        *stop = 1;
        return ENG_OK;
    }
    if (s != ENG_OK) return s;
    slice rec;
    while ((s = wal_reader_next(r, &rec)) == ENG_OK) {
        eng_batch *b;
        if (batch_from_contents(rec, &b) != ENG_OK) {
            db_log(db, 3,
                   "log %s: a record with a good checksum does not parse as a batch; "
                   "stopping replay there",
                   path);
            *stop = 1;
            break;
        }
        uint64_t last = batch_sequence(b) + eng_batch_count(b);
        s = batch_insert_into(b, *mem);
        eng_batch_free(b);
        if (s != ENG_OK) break;
        if (last > 0 && last - 1 > db->last_seq) db->last_seq = last - 1;
        if (mem_usage(*mem) >= db->opts.write_buffer_size) s = recover_flush(db, mem, e);
        if (s != ENG_OK) break;
    }
    if (s == ENG_NOTFOUND) {
        s = ENG_OK;
        uint64_t dropped = wal_reader_dropped_bytes(r);
        if (dropped) {
            *stop = 1;
            db_log(db, 3, "log %s: dropped %" PRIu64 " bytes after offset %" PRIu64 " (%s)", path,
                   dropped, wal_reader_valid_end(r), wal_reader_stop_reason(r));
            s = env_truncate(path, wal_reader_valid_end(r));
        }
    }
    wal_reader_close(r);
    return s;
}

/* Replays every log numbered >= the manifest's log number, in order, into
 * level-0 tables recorded in e (Invariant L1: nothing after a bad record). */
static eng_status replay_logs(eng_db *db, version_edit *e)
{
    dir_list d = {0};
    eng_status s = env_list_dir(db->dir, list_cb, &d);
    if (s != ENG_OK) return s;
    if (d.max_number >= db->vs.next_file) db->vs.next_file = d.max_number + 1;
    if (d.nlogs > 1) qsort(d.logs, (size_t)d.nlogs, sizeof(uint64_t), cmp_u64);
    memtable *mem = db_new_memtable(db);
    int stop = 0;
    for (int i = 0; i < d.nlogs && s == ENG_OK; i++) {
        if (d.logs[i] < db->vs.log_number) continue;
        if (stop) {
            db_log(db, 3, "log %06" PRIu64 ".log follows a damaged log; not replayed", d.logs[i]);
            continue;
        }
        s = replay_log(db, d.logs[i], &mem, e, &stop);
    }
    free(d.logs);
    if (s == ENG_OK) s = recover_flush(db, &mem, e);
    mem_unref(mem);
    return s;
}

/* Every table the manifest names must exist: a missing one is reported at
 * open rather than as errors (or silently missing keys) later. */
static eng_status check_tables(eng_db *db, const version *v)
{
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++) {
            char path[PATH_MAX];
            db_filename(path, db->dir, v->files[l][i]->number, "sst");
            if (!env_exists(path))
                return env_error(ENG_CORRUPTION, "%s: named by the manifest but missing", path);
        }
    return ENG_OK;
}

static eng_status recover(eng_db *db)
{
    eng_status s = manifest_recover(db);
    if (s == ENG_NOTFOUND) {
        if (!db->opts.create_if_missing)
            return env_error(ENG_INVALID, "%s: no database (create_if_missing is off)", db->dir);
        version_edit empty;
        edit_init(&empty);
        s = version_apply(&db->vs, NULL, &empty, 0, &db->vs.current);
    }
    if (s != ENG_OK) return s;
    db->last_seq = db->vs.last_seq;
    version_edit e;
    edit_init(&e);
    s = replay_logs(db, &e);

    /* The new log and manifest; then the old files can go. */
    uint64_t log_number = db->vs.next_file++, manifest_number = db->vs.next_file++;
    version *v = NULL;
    if (s == ENG_OK) s = version_apply(&db->vs, db->vs.current, &e, 1, &v);
    edit_clear(&e);
    if (s == ENG_OK) s = check_tables(db, v);
    if (s == ENG_OK) {
        char path[PATH_MAX];
        db_filename(path, db->dir, log_number, "log");
        s = wal_writer_create(path, &db->log);
    }
    if (s == ENG_OK)
        s = manifest_write_new(db, v, manifest_number, log_number, db->vs.next_file, db->last_seq);
    if (s != ENG_OK) {
        version_unref(v);
        return s;
    }
    version_unref(db->vs.current);
    db->vs.current = v;
    db->vs.log_number = log_number;
    db->vs.last_seq = db->last_seq;
    db->log_number = log_number;
    obsolete_ctx oc = {db};
    env_list_dir(db->dir, obsolete_cb, &oc);
    return ENG_OK;
}

static eng_status lock_dir(eng_db *db)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/LOCK", db->dir);
    db->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (db->lock_fd < 0) return env_error(ENG_IOERR, "open %s: %s", path, strerror(errno));
    if (flock(db->lock_fd, LOCK_EX | LOCK_NB) != 0)
        return env_error(ENG_BUSY, "%s: the database is in use by another process", path);
    return ENG_OK;
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
    row_cache_free(db->vs.row_cache);
    if (db->lock_fd >= 0) close(db->lock_fd);
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
    if (s == ENG_OK) s = recover(db);
    if (s != ENG_OK) {
        db_free(db);
        return s;
    }
    __atomic_store_n(&db->vs.deletions_enabled, 1, __ATOMIC_RELEASE);
    db->mem = db_new_memtable(db);
    pthread_mutex_lock(&db->mu);
    db_install_sv(db);
    pthread_mutex_unlock(&db->mu);
    pthread_create(&db->flush_thr, NULL, db_flush_thread, db);
    pthread_create(&db->compact_thr, NULL, db_compact_thread, db);
    pthread_create(&db->sync_thr, NULL, db_sync_thread, db);
    db->threads_started = 1;
    *out = db;
    return ENG_OK;
}

eng_status eng_close(eng_db *db)
{
    if (!db) return ENG_OK;
    pthread_mutex_lock(&db->mu);
    eng_status s = db->log ? wal_writer_flush(db->log) : ENG_OK;
    if (s == ENG_OK && db->log) s = wal_writer_sync(db->log);
    __atomic_store_n(&db->shutting_down, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&db->flush_cv);
    pthread_cond_broadcast(&db->compact_cv);
    pthread_cond_broadcast(&db->sync_cv);
    pthread_cond_broadcast(&db->bg_cv);
    pthread_mutex_unlock(&db->mu);
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
}

typedef struct usage_ctx {
    const char *dir;
    uint64_t bytes;
} usage_ctx;

static void usage_cb(void *ctx, const char *name)
{
    usage_ctx *u = ctx;
    uint64_t num, size;
    if (parse_name(name, &num) != FT_LOG) return;
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
