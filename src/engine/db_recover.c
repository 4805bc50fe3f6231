/*
 * db_recover.c -- opening a database directory: CURRENT and the manifest,
 * replay of the write-ahead logs, the check of every table against the
 * manifest, and the removal of files no version needs.
 *
 * Directory layout (FORMAT.md): NNNNNN.log (log_format.md), NNNNNN.sst
 * (table_format.md), MANIFEST-NNNNNN and CURRENT (manifest_format.md),
 * LOCK; files set aside for a human keep their number and get a second
 * suffix (NNNNNN.sst.lost, NNNNNN.log.corrupt, NNNNNN.log.unreplayed) and
 * are never deleted.
 *
 * Algorithm:
 *  1. CURRENT -> manifest -> the live tables (manifest.c). No CURRENT: a
 *     new database, unless the directory holds tables or a manifest that
 *     names tables (Invariant R2 below: then the open fails, deleting
 *     nothing).
 *  2. Replay, in number order, every log numbered >= the manifest's log
 *     number into memtables, each written to a level-0 table when full.
 *     A log ends cleanly, with a torn tail (cut off: never acknowledged
 *     beyond it), or with a record damaged while intact records follow it
 *     (Invariant L2, log_format.md): then the open fails naming the file
 *     and offset, unless options.log_recovery is TRUNCATE, which replays
 *     up to the damage and sets the log and every later one aside. A torn
 *     tail followed by a later log that holds records is the same damage.
 *  3. Every table the new version names is checked against the manifest:
 *     it exists, has the recorded size, opens, and its properties (file
 *     number, entry and range-deletion counts, sequence range) agree.
 *  4. A new log, a new manifest naming the tables, CURRENT switched to it;
 *     then files no version names are deleted (or set aside). A crash at
 *     any point leaves the old CURRENT and logs, so recovery runs again.
 * With options.read_only, steps 2 and 4 write nothing: the logs are
 * replayed into one memtable and nothing is cut, created or deleted.
 *
 * Invariant R2: recovery deletes a file only after a manifest that does not
 * need it is current, and never deletes a table or manifest when CURRENT
 * is missing or unreadable.
 */
#include "db_impl.h"

#include "env.h"
#include "log_format.h"
#include "write_batch.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- Directory listing ------------------------------------------------- */

int db_parse_name(const char *name, uint64_t *num)
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
    /* set aside (.sst.lost, .log.corrupt, ...): kept, and its number stays used */
    if (!strncmp(end, ".sst.", 5) || !strncmp(end, ".log.", 5)) return FT_KEPT;
    return FT_OTHER;
}

typedef struct dir_list {
    uint64_t *logs;
    int nlogs, cap;
    uint64_t max_number;
    int tables, manifests;
} dir_list;

static void list_cb(void *ctx, const char *name)
{
    dir_list *d = ctx;
    uint64_t num;
    int t = db_parse_name(name, &num);
    if (t == FT_OTHER) return;
    if (num > d->max_number) d->max_number = num;
    d->tables += t == FT_SST || (t == FT_KEPT && strstr(name, ".sst."));
    d->manifests += t == FT_MANIFEST;
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

/* ---- Recovery state ------------------------------------------------------ */

typedef struct aside {
    uint64_t number;
    const char *suffix; /* "corrupt" or "unreplayed" */
} aside;

typedef struct recovery {
    eng_db *db;
    version_edit *e;
    memtable *mem;
    int stop;                 /* replay ended: nothing after it is applied (L1) */
    int torn;                 /* ... at a torn tail: a later log must hold no record */
    char why[PATH_MAX + 256]; /* where replay stopped, for a message about a later log */
    char cut_path[PATH_MAX];  /* a torn tail to cut off once replay is done */
    uint64_t cut_at;
    aside *aside;
    int naside, capaside;
} recovery;

static void set_aside(recovery *rc, uint64_t number, const char *suffix)
{
    if (rc->naside == rc->capaside) {
        rc->capaside = rc->capaside ? rc->capaside * 2 : 4;
        rc->aside = realloc(rc->aside, sizeof(aside) * (size_t)rc->capaside);
        if (!rc->aside) abort();
    }
    rc->aside[rc->naside++] = (aside){number, suffix};
}

/* ---- Obsolete files ------------------------------------------------------- */

static int file_is_live(const version *v, uint64_t num)
{
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++)
            if (v->files[l][i]->number == num) return 1;
    return 0;
}

static void obsolete_cb(void *ctx, const char *name)
{
    recovery *rc = ctx;
    eng_db *db = rc->db;
    uint64_t num;
    int t = db_parse_name(name, &num), dead = 0;
    if (t == FT_LOG) dead = num < db->vs.log_number;
    if (t == FT_SST) dead = !file_is_live(db->vs.current, num);
    if (t == FT_MANIFEST) dead = num != db->vs.manifest_number;
    if (t == FT_OTHER) dead = !strcmp(name, "CURRENT.tmp");
    if (!dead) return;
    char path[PATH_MAX], kept[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/%s", db->dir, name);
    const char *suffix = NULL;
    if (t == FT_SST && db->vs.manifest_damaged) suffix = "lost";
    for (int i = 0; t == FT_LOG && i < rc->naside; i++)
        if (rc->aside[i].number == num) suffix = rc->aside[i].suffix;
    if (suffix) {
        /* A damaged manifest may have lost the record naming this table,
         * and a set-aside log holds what replay skipped: keep them for a
         * human instead of deleting them. */
        snprintf(kept, sizeof(kept), "%s.%s", path, suffix);
        db_log(db, 3, "%s is kept as %s", path, kept);
        env_rename(path, kept);
        return;
    }
    env_unlink(path);
}

/* ---- Replay -------------------------------------------------------------- */

/* Writes mem to a level-0 table recorded in e and starts a fresh memtable.
 * Read-only recovery keeps everything in one memtable instead. */
static eng_status recover_flush(recovery *rc)
{
    eng_db *db = rc->db;
    if (db->opts.read_only || mem_entries(rc->mem) == 0) return ENG_OK;
    file_meta *f;
    iter *it = mem_iter_new(rc->mem);
    eng_status s =
        db_build_table(db, it, db->vs.next_file++, ENG_MAX_SEQUENCE, NULL, &f); /* no snapshots */
    iter_free(it);
    if (s != ENG_OK) return s;
    if (f) edit_add_file(rc->e, 0, f);
    mem_unref(rc->mem);
    rc->mem = db_new_memtable(db);
    return ENG_OK;
}

/* A record's first bytes look like a write batch header: a sequence below
 * 2^56 and between 1 and (len - 12) / 2 ops (each op takes 2 bytes or more). */
static int batch_plausible(const char *head, size_t head_len, size_t len)
{
    if (head_len < BATCH_HEADER_SIZE) return 0;
    uint64_t seq = dec_fixed64(head);
    uint32_t count = dec_fixed32(head + 8);
    return seq <= ENG_MAX_SEQUENCE && count >= 1 && count <= (len - BATCH_HEADER_SIZE) / 2;
}

/* A log record at `off` of path is damaged and intact records follow (or a
 * later log holds records): L2. Refuses, or replays no further and sets
 * this log aside. */
static eng_status damaged_log(recovery *rc, uint64_t number, const char *path, const char *what)
{
    eng_db *db = rc->db;
    if (db->opts.log_recovery != ENG_LOG_RECOVERY_TRUNCATE)
        return env_error(ENG_CORRUPTION,
                         "%s: %s; refusing to replay past the damage (nothing was changed)", path,
                         what);
    db_log(db, 3, "%s: %s; starting from the last good record before it", path, what);
    set_aside(rc, number, "corrupt");
    rc->stop = 1;
    rc->torn = 0;
    return ENG_OK;
}

/* Whether the log at path holds an intact record. */
static eng_status log_has_record(const char *path, int *yes)
{
    wal_reader *r;
    *yes = 0;
    eng_status s = wal_reader_open(path, &r);
    if (s == ENG_CORRUPTION) { /* a bad header: not empty unless it is short */
        uint64_t size = 0;
        env_file_size(path, &size);
        *yes = size > LOG_FILE_HEADER_SIZE;
        return ENG_OK;
    }
    if (s != ENG_OK) return s;
    slice rec;
    uint64_t off;
    s = wal_reader_next(r, &rec);
    if (s == ENG_OK) *yes = 1;
    if (s == ENG_NOTFOUND) s = wal_reader_find_intact(r, batch_plausible, yes, &off);
    wal_reader_close(r);
    return s;
}

/* A log after the one where replay stopped: it must hold nothing when the
 * stop was a torn tail; when the stop was damage set aside, it is kept too. */
static eng_status later_log(recovery *rc, uint64_t number, const char *path)
{
    int has = 0;
    eng_status s = log_has_record(path, &has);
    if (s != ENG_OK || !has) return s;
    if (rc->torn) {
        char what[PATH_MAX + 512];
        snprintf(what, sizeof(what), "holds records, but the log before it: %s", rc->why);
        s = damaged_log(rc, number, path, what);
        if (s != ENG_OK) return s;
        rc->naside--; /* not this log that is damaged: it is only unreplayed */
    }
    db_log(rc->db, 3, "%s follows a damaged log; not replayed", path);
    set_aside(rc, number, "unreplayed");
    return ENG_OK;
}

/* Applies one record of the log at path (at offset off). */
static eng_status replay_record(recovery *rc, slice rec, uint64_t number, const char *path,
                                uint64_t off)
{
    eng_db *db = rc->db;
    eng_batch *b;
    if (batch_from_contents(rec, &b) != ENG_OK) {
        char what[600];
        snprintf(what, sizeof(what),
                 "the record at offset %" PRIu64 " has a good checksum but is not a write "
                 "batch (%s)",
                 off, eng_last_error());
        return damaged_log(rc, number, path, what);
    }
    uint64_t last = batch_sequence(b) + eng_batch_count(b);
    eng_status s = batch_insert_into(b, rc->mem);
    eng_batch_free(b);
    if (s != ENG_OK) return s;
    if (last > 0 && last - 1 > db->last_seq) db->last_seq = last - 1;
    if (mem_usage(rc->mem) >= db->opts.write_buffer_size) s = recover_flush(rc);
    return s;
}

/* Where a log's replay stopped: a torn tail (cut off here) or damage. */
static eng_status log_ended(recovery *rc, wal_reader *r, uint64_t number, const char *path)
{
    eng_db *db = rc->db;
    uint64_t dropped = wal_reader_dropped_bytes(r), end = wal_reader_valid_end(r), next = 0;
    if (!dropped) return ENG_OK;
    int intact = 0;
    eng_status s = wal_reader_find_intact(r, batch_plausible, &intact, &next);
    if (s != ENG_OK) return s;
    if (intact) {
        char what[512];
        snprintf(what, sizeof(what),
                 "damaged record at offset %" PRIu64 " (%s); an intact record follows at "
                 "offset %" PRIu64,
                 end, wal_reader_stop_reason(r), next);
        return damaged_log(rc, number, path, what);
    }
    rc->stop = rc->torn = 1;
    snprintf(rc->why, sizeof(rc->why), "%s ends with a torn record at offset %" PRIu64 " (%s)",
             path, end, wal_reader_stop_reason(r));
    db_log(db, 3, "log %s: dropped %" PRIu64 " bytes after offset %" PRIu64 " (%s)", path, dropped,
           end, wal_reader_stop_reason(r));
    /* Cut only once every later log is known to hold nothing (R2). */
    snprintf(rc->cut_path, sizeof(rc->cut_path), "%s", path);
    rc->cut_at = end;
    return ENG_OK;
}

/* Replays one log; rc->stop is set when nothing after it may be applied. */
static eng_status replay_log(recovery *rc, uint64_t number)
{
    char path[PATH_MAX];
    db_filename(path, rc->db->dir, number, "log");
    if (rc->stop) return later_log(rc, number, path);
    wal_reader *r;
    eng_status s = wal_reader_open(path, &r);
    if (s == ENG_CORRUPTION) {
        char what[600];
        snprintf(what, sizeof(what), "bad log header (%s)", eng_last_error());
        int has = 0;
        log_has_record(path, &has);
        if (!has) return ENG_OK; /* a header cut short: an empty log */
        return damaged_log(rc, number, path, what);
    }
    if (s != ENG_OK) return s;
    slice rec;
    for (;;) {
        uint64_t off = wal_reader_valid_end(r);
        s = wal_reader_next(r, &rec);
        if (s != ENG_OK) break;
        s = replay_record(rc, rec, number, path, off);
        if (s != ENG_OK || rc->stop) break;
    }
    if (s == ENG_NOTFOUND) s = log_ended(rc, r, number, path);
    wal_reader_close(r);
    return s;
}

/* Replays every log numbered >= the manifest's log number, in order, into
 * level-0 tables recorded in rc->e (Invariant L1: nothing after a bad record). */
static eng_status replay_logs(recovery *rc, dir_list *d)
{
    eng_db *db = rc->db;
    if (d->max_number >= db->vs.next_file) db->vs.next_file = d->max_number + 1;
    if (d->nlogs > 1) qsort(d->logs, (size_t)d->nlogs, sizeof(uint64_t), cmp_u64);
    rc->mem = db_new_memtable(db);
    eng_status s = ENG_OK;
    for (int i = 0; i < d->nlogs && s == ENG_OK; i++)
        if (d->logs[i] >= db->vs.log_number) s = replay_log(rc, d->logs[i]);
    if (s == ENG_OK) s = recover_flush(rc);
    if (s == ENG_OK && rc->cut_path[0] && !db->opts.read_only)
        s = env_truncate(rc->cut_path, rc->cut_at);
    return s;
}

/* ---- Tables against the manifest ------------------------------------------ */

/* Step 3: each table exists, has its recorded size and properties. */
static eng_status check_tables(eng_db *db, const version *v)
{
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++) {
            file_meta *f = v->files[l][i];
            char path[PATH_MAX];
            uint64_t size = 0;
            db_filename(path, db->dir, f->number, "sst");
            eng_status s = env_file_size(path, &size);
            if (s == ENG_NOTFOUND)
                return env_error(ENG_CORRUPTION, "%s: named by the manifest but missing", path);
            if (s != ENG_OK) return s;
            if (size != f->file_size)
                return env_error(ENG_CORRUPTION,
                                 "%s: %" PRIu64 " bytes, but the manifest recorded %" PRIu64
                                 " for this table: it is another file or was damaged",
                                 path, size, f->file_size);
            sst_reader *r;
            s = version_table(f, &r); /* opens it and checks V5 */
            if (s != ENG_OK) return s;
        }
    return ENG_OK;
}

/* ---- A missing CURRENT ------------------------------------------------------ */

/* R2: without CURRENT a directory is a new database only if nothing in it
 * could be data: no table, and no manifest that names a table. */
static eng_status check_no_current(eng_db *db, const dir_list *d)
{
    int naming = 0;
    if (d->manifests) naming = manifest_dir_names_tables(db);
    if (!d->tables && !naming) return ENG_OK;
    return env_error(ENG_CORRUPTION,
                     "%s: CURRENT is missing, but the directory holds %d table file(s) and %d "
                     "manifest(s)%s: refusing to start as a new database (nothing was changed); "
                     "CURRENT can be rebuilt from the newest valid manifest",
                     db->dir, d->tables, d->manifests, naming ? " naming tables" : "");
}

/* ---- Recovery ----------------------------------------------------------------- */

/* Step 4: the new log and manifest, then the old files can go. */
static eng_status install_recovered(recovery *rc, version *v)
{
    eng_db *db = rc->db;
    uint64_t log_number = db->vs.next_file++, manifest_number = db->vs.next_file++;
    char path[PATH_MAX];
    db_filename(path, db->dir, log_number, "log");
    eng_status s = wal_writer_create(path, &db->log);
    if (s == ENG_OK)
        s = manifest_write_new(&db->vs, v, manifest_number, log_number, db->vs.next_file,
                               db->last_seq);
    if (s != ENG_OK) return s;
    version_unref(db->vs.current);
    db->vs.current = v;
    db->vs.log_number = log_number;
    db->vs.last_seq = db->last_seq;
    db->log_number = log_number;
    env_list_dir(db->dir, obsolete_cb, rc);
    return ENG_OK;
}

eng_status db_recover(eng_db *db)
{
    dir_list d = {0};
    eng_status s = env_list_dir(db->dir, list_cb, &d);
    if (s == ENG_OK) s = manifest_recover(db);
    if (s == ENG_NOTFOUND) {
        s = check_no_current(db, &d);
        if (s == ENG_OK && !db->opts.create_if_missing)
            s = env_error(ENG_INVALID, "%s: no database (create_if_missing is off)", db->dir);
        version_edit empty;
        edit_init(&empty);
        if (s == ENG_OK) s = version_apply(&db->vs, NULL, &empty, 0, &db->vs.current);
    }
    if (s != ENG_OK) {
        free(d.logs);
        return s;
    }
    db->last_seq = db->vs.last_seq;
    version_edit e;
    edit_init(&e);
    recovery rc;
    memset(&rc, 0, sizeof(rc));
    rc.db = db;
    rc.e = &e;
    s = replay_logs(&rc, &d);
    free(d.logs);
    version *v = NULL;
    if (s == ENG_OK) s = version_apply(&db->vs, db->vs.current, &e, 1, &v);
    edit_clear(&e);
    if (s == ENG_OK) s = check_tables(db, v);
    if (s == ENG_OK && db->opts.read_only) {
        version_unref(db->vs.current);
        db->vs.current = v;
        db->mem = rc.mem; /* the replayed logs stay in memory */
        rc.mem = NULL;
        v = NULL;
    } else if (s == ENG_OK) {
        s = install_recovered(&rc, v);
        if (s == ENG_OK) v = NULL;
    }
    version_unref(v);
    mem_unref(rc.mem);
    free(rc.aside);
    return s;
}
