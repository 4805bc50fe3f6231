/*
 * manifest.c -- the manifest and CURRENT: which table files are live.
 *
 * Format (manifest_format.md has the exact grammar):
 *   MANIFEST-NNNNNN is a log file (log_format.md: 16-byte header with magic
 *   "STRATAWL" and the log format version, then records framed as
 *   length | checksum | payload). Each payload is one version edit
 *   (version_edit.c) that starts with the manifest format version. The first
 *   record of a manifest is a snapshot of the whole version; later records
 *   are deltas. An edit counts once its record is synced.
 *   CURRENT holds the name of the live manifest and a newline.
 *
 * Algorithm: an edit is appended and fdatasynced before the version it
 * describes is installed (and, Invariant M1, the directory is fsynced
 * before an edit that adds tables, so their names are durable first; M2,
 * the tables of an edit whose write or sync failed are kept until a new
 * manifest is current, since a failed fsync does not undo the write), and input files of a
 * compaction are deleted only when the last version holding them goes (version.h, V4), so a crash
 * at any point leaves a manifest that names only complete files. A torn last record is ignored at
 * recovery (it was never acknowledged). CURRENT is replaced atomically: write CURRENT.tmp, fsync
 * it, rename over CURRENT, fsync the directory; a crash before the rename leaves the old CURRENT
 * and the old manifest, which is deleted only after the rename.
 */
#include "db_impl.h"

#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Points CURRENT at manifest `number`; *renamed is set once the rename
 * happened (then CURRENT may name it even if the call fails). */
static eng_status set_current(const char *dir, uint64_t number, int *renamed)
{
    char tmp[PATH_MAX], cur[PATH_MAX], body[64];
    snprintf(tmp, sizeof(tmp), "%s/CURRENT.tmp", dir);
    snprintf(cur, sizeof(cur), "%s/CURRENT", dir);
    int n = snprintf(body, sizeof(body), "MANIFEST-%06" PRIu64 "\n", number);
    int fd;
    eng_status s = env_create(tmp, &fd);
    if (s != ENG_OK) return s;
    s = env_write_all(fd, body, (size_t)n, tmp, NULL);
    if (s == ENG_OK) s = env_fsync(fd, tmp);
    eng_status c = env_close(fd, tmp);
    if (s == ENG_OK) s = c;
    if (s == ENG_OK) s = env_rename(tmp, cur);
    *renamed = s == ENG_OK;
    if (s == ENG_OK) s = env_fsync_dir(dir);
    if (s != ENG_OK && !*renamed) env_unlink(tmp);
    return s;
}

static int in_version(const version *v, uint64_t number)
{
    for (int l = 0; v && l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++)
            if (v->files[l][i]->number == number) return 1;
    return 0;
}

/* M2: an edit whose append or sync failed may still be in the manifest on
 * disk (a failed fsync does not undo the write), and a recovery would then
 * need the tables it adds: they are kept (not deleted when the edit is
 * dropped) until a new manifest that does not name them is current. The
 * caller holds the manifest (D4). */
static void keep_added_files(version_set *vs, const version *base, const version_edit *e)
{
    for (int i = 0; i < e->nadded; i++) {
        file_meta *f = e->added[i].f;
        if (in_version(base, f->number)) continue; /* a move: base still holds it */
        f->in_version = 0;
        if (vs->norphans == vs->caporphans) {
            vs->caporphans = vs->caporphans ? vs->caporphans * 2 : 8;
            vs->orphans = realloc(vs->orphans, sizeof(uint64_t) * (size_t)vs->caporphans);
            if (!vs->orphans) abort();
        }
        vs->orphans[vs->norphans++] = f->number;
    }
}

/* M2: after a new manifest holding v is current, the kept tables v does not
 * name can go. */
static void delete_orphans(version_set *vs, const version *v)
{
    int keep = 0;
    for (int i = 0; i < vs->norphans; i++) {
        if (in_version(v, vs->orphans[i])) {
            vs->orphans[keep++] = vs->orphans[i];
            continue;
        }
        char path[PATH_MAX];
        db_filename(path, vs->dir, vs->orphans[i], "sst");
        env_unlink(path);
    }
    vs->norphans = keep;
}

eng_status manifest_write_new(version_set *vs, const version *v, uint64_t number,
                              uint64_t log_number, uint64_t next_file, uint64_t last_seq)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/MANIFEST-%06" PRIu64, vs->dir, number);
    wal_writer *w;
    eng_status s = wal_writer_create(path, &w);
    if (s != ENG_OK) return s;

    version_edit e;
    edit_init(&e);
    e.has_log_number = e.has_next_file = e.has_last_seq = 1;
    e.log_number = log_number;
    e.next_file = next_file;
    e.last_seq = last_seq;
    for (int l = 0; v && l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++) {
            file_ref(v->files[l][i]);
            edit_add_file(&e, l, v->files[l][i]);
        }
    buf rec = {0};
    edit_encode(&e, &rec);
    edit_clear(&e);
    wal_writer_append(w, rec.data, rec.len);
    buf_free(&rec);
    int renamed = 0;
    s = wal_writer_sync(w);
    if (s == ENG_OK) s = set_current(vs->dir, number, &renamed);
    if (s != ENG_OK) {
        wal_writer_abandon(w);
        /* R2: once renamed, CURRENT may name it (the directory fsync failed):
         * keep it, and keep the previous one too; the next roll retries. */
        if (!renamed) env_unlink(path);
        return s;
    }
    wal_writer_abandon(vs->manifest); /* synced after its every edit */
    if (vs->manifest_number && vs->manifest_number != number) {
        snprintf(path, sizeof(path), "%s/MANIFEST-%06" PRIu64, vs->dir, vs->manifest_number);
        env_unlink(path);
    }
    vs->manifest = w;
    vs->manifest_number = number;
    delete_orphans(vs, v);
    return ENG_OK;
}

eng_status db_log_and_apply(eng_db *db, version_edit *e, int pop_imm)
{
    version_set *vs = &db->vs;
    while (db->manifest_busy)
        pthread_cond_wait(&db->bg_cv, &db->mu);
    db->manifest_busy = 1; /* D4 */
    uint64_t roll_number = 0;
    if (!vs->manifest || wal_writer_size(vs->manifest) > DB_MANIFEST_ROLL_BYTES)
        roll_number = vs->next_file++;
    if (!e->has_log_number) e->log_number = vs->log_number;
    e->has_log_number = e->has_next_file = e->has_last_seq = 1;
    e->next_file = vs->next_file;
    e->last_seq = db->last_seq;
    version *base = vs->current;
    version_ref(base);
    pthread_mutex_unlock(&db->mu);

    version *v = NULL;
    eng_status s = version_apply(vs, base, e, 1, &v);
    /* M1: the names of the tables an edit adds are durable before the edit
     * is (a power loss must not leave a manifest naming a missing file). */
    if (s == ENG_OK && e->nadded > 0) s = env_fsync_dir(db->dir);
    int wrote = s == ENG_OK; /* from here a failure may leave the edit on disk */
    if (s == ENG_OK && roll_number) {
        s = manifest_write_new(vs, v, roll_number, e->log_number, e->next_file, e->last_seq);
    } else if (s == ENG_OK) {
        buf rec = {0};
        edit_encode(e, &rec);
        wal_writer_append(vs->manifest, rec.data, rec.len);
        buf_free(&rec);
        s = wal_writer_sync(vs->manifest);
        if (s != ENG_OK) { /* W2: it may end in a torn edit; the next edit starts a new one */
            wal_writer_abandon(vs->manifest);
            vs->manifest = NULL;
        }
    }

    pthread_mutex_lock(&db->mu);
    if (s == ENG_OK) {
        vs->current = v; /* base's reference from current passes to us */
        vs->log_number = e->log_number;
        vs->last_seq = e->last_seq;
        if (pop_imm && db->nimm > 0) {
            mem_unref(db->imm[0].mem);
            rdel_set_unref(db->imm[0].rdels);
            for (int i = 1; i < db->nimm; i++)
                db->imm[i - 1] = db->imm[i];
            db->nimm--;
        }
        db_install_sv(db);
    } else if (v) {
        if (wrote) keep_added_files(vs, base, e);
        version_unref(v);
    }
    db->manifest_busy = 0;
    pthread_cond_broadcast(&db->bg_cv);
    /* Releasing the old version may delete its obsolete tables (V4): do
     * that unlinking outside the mutex. */
    pthread_mutex_unlock(&db->mu);
    version_unref(base);
    if (s == ENG_OK) version_unref(base);
    pthread_mutex_lock(&db->mu);
    return s;
}

static eng_status read_current(const char *dir, uint64_t *number)
{
    char path[PATH_MAX], body[128];
    snprintf(path, sizeof(path), "%s/CURRENT", dir);
    size_t n;
    eng_status s = env_read_small(path, body, sizeof(body), &n);
    if (s != ENG_OK) return s;
    char *end;
    if (n < 11 || memcmp(body, "MANIFEST-", 9) != 0 || body[n - 1] != '\n')
        return env_error(ENG_CORRUPTION, "%s: bad contents", path);
    errno = 0;
    *number = strtoull(body + 9, &end, 10);
    if (errno || end != body + n - 1) return env_error(ENG_CORRUPTION, "%s: bad contents", path);
    return ENG_OK;
}

/* Applies one decoded edit of the manifest being replayed. */
static eng_status replay_edit(version_set *vs, version_edit *e, int *have)
{
    version *nv;
    eng_status s = version_apply(vs, vs->current, e, 0, &nv);
    if (s != ENG_OK) return s;
    version_unref(vs->current);
    vs->current = nv;
    if (e->has_log_number) vs->log_number = e->log_number, have[0] = 1;
    if (e->has_next_file) vs->next_file = e->next_file, have[1] = 1;
    if (e->has_last_seq) vs->last_seq = e->last_seq;
    return ENG_OK;
}

/* A record's first bytes look like a version edit: the format field first. */
static int edit_plausible(const char *head, size_t head_len, size_t len)
{
    return head_len >= 2 && head[0] == VE_TAG_FORMAT && head[1] == MANIFEST_FORMAT_VERSION;
}

eng_status manifest_replay(version_set *vs, const char *path, char *note, size_t cap)
{
    wal_reader *r;
    if (note && cap) note[0] = 0;
    eng_status s = wal_reader_open(path, &r);
    if (s != ENG_OK) return s == ENG_IOERR ? s : env_error(ENG_CORRUPTION, "%s: bad header", path);
    version_edit empty;
    edit_init(&empty);
    version_unref(vs->current);
    vs->current = NULL;
    s = version_apply(vs, NULL, &empty, 0, &vs->current);
    int have[2] = {0, 0};
    slice rec;
    for (;;) {
        uint64_t off = wal_reader_valid_end(r);
        if (s != ENG_OK || (s = wal_reader_next(r, &rec)) != ENG_OK) break;
        version_edit e;
        edit_init(&e);
        s = edit_decode(rec, &e);
        if (s != ENG_OK)
            s = env_error(ENG_CORRUPTION, "%s: the edit at offset %" PRIu64 " does not parse: %s",
                          path, off, eng_last_error());
        if (s == ENG_OK) s = replay_edit(vs, &e, have);
        edit_clear(&e);
    }
    if (s == ENG_NOTFOUND && wal_reader_dropped_bytes(r)) {
        /* L2: a bad record with an intact one after it is damage, not a
         * torn last edit; the version it leads to would be stale. */
        int intact = 0;
        uint64_t next = 0, end = wal_reader_valid_end(r);
        s = wal_reader_find_intact(r, edit_plausible, &intact, &next);
        if (s == ENG_OK && intact)
            s = env_error(ENG_CORRUPTION,
                          "%s: damaged record at offset %" PRIu64 " (%s); an intact record "
                          "follows at offset %" PRIu64 ": the manifest is corrupt (nothing "
                          "was changed)",
                          path, end, wal_reader_stop_reason(r), next);
        if (s == ENG_OK) {
            vs->manifest_damaged = 1;
            if (note)
                snprintf(note, cap,
                         "manifest %s: ignored %" PRIu64 " bytes after the last good edit (%s)",
                         path, wal_reader_dropped_bytes(r), wal_reader_stop_reason(r));
        }
    } else if (s == ENG_NOTFOUND) {
        s = ENG_OK;
    }
    wal_reader_close(r);
    if (s == ENG_OK && (!have[0] || !have[1]))
        s = env_error(ENG_CORRUPTION, "%s: no log number or next file number", path);
    return s;
}

eng_status manifest_set_current(const char *dir, uint64_t number)
{
    int renamed = 0;
    return set_current(dir, number, &renamed);
}

eng_status manifest_read_current(const char *dir, uint64_t *number)
{
    return read_current(dir, number);
}

eng_status manifest_recover(eng_db *db)
{
    uint64_t number = 0;
    eng_status s = read_current(db->dir, &number);
    if (s != ENG_OK) return s;
    char path[PATH_MAX], note[PATH_MAX + 200];
    snprintf(path, sizeof(path), "%s/MANIFEST-%06" PRIu64, db->dir, number);
    if (!env_exists(path))
        return env_error(ENG_CORRUPTION, "%s/CURRENT names %s, which is missing", db->dir, path);
    db->vs.manifest_number = number;
    s = manifest_replay(&db->vs, path, note, sizeof(note));
    if (s == ENG_OK && note[0]) db_log(db, 3, "%s; unreferenced table files are kept", note);
    return s;
}

typedef struct names_ctx {
    const char *dir;
    int names;
} names_ctx;

/* Whether the manifest at path names a table (1 when it cannot be read). */
static int manifest_names_tables(const char *path)
{
    wal_reader *r;
    if (wal_reader_open(path, &r) != ENG_OK) return 1;
    slice rec;
    int names = 0;
    eng_status s;
    while (!names && (s = wal_reader_next(r, &rec)) == ENG_OK) {
        version_edit e;
        edit_init(&e);
        names = edit_decode(rec, &e) != ENG_OK || e.nadded > 0;
        edit_clear(&e);
    }
    if (!names && s == ENG_NOTFOUND && wal_reader_dropped_bytes(r)) names = 1;
    wal_reader_close(r);
    return names;
}

static void names_cb(void *ctx, const char *name)
{
    names_ctx *n = ctx;
    uint64_t num;
    if (n->names || db_parse_name(name, &num) != FT_MANIFEST) return;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", n->dir, name);
    n->names = manifest_names_tables(path);
}

int manifest_dir_names_tables(eng_db *db)
{
    names_ctx n = {db->dir, 0};
    if (env_list_dir(db->dir, names_cb, &n) != ENG_OK) return 1;
    return n.names;
}
