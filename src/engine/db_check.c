/*
 * db_check.c -- offline verification and repair of a database directory
 * (eng_check_dir, eng_repair_dir; the strata-check tool). Nothing here runs
 * while an engine has the directory open: both take its LOCK.
 *
 * Check, in three passes that each report every problem they find (a
 * finding names the file and, where there is one, the offset):
 *  1. CURRENT and the manifest it names: CURRENT's contents, every record
 *     of the manifest (a torn last record is a warning, damage before an
 *     intact record is damage: log_format.md, L2), and each table the
 *     resulting version names: present, of the recorded size, openable, the
 *     table the manifest recorded (V5). Tables no version names are
 *     reported. Without a usable CURRENT, the newest manifest that replays
 *     is named (what a repair would use).
 *  2. Every log: its header, every record's checksum and batch, and how it
 *     ends (clean, torn tail, or damaged in the middle; a log the manifest
 *     no longer needs is only noted).
 *  3. Every table file: footer, index, properties, filter, range deletions,
 *     and every data block's checksum and contents.
 * Repair (after copying CURRENT and every manifest into backup_dir):
 *  - CURRENT missing or unusable: point it at the newest manifest that
 *    replays;
 *  - tables of that version that are missing, damaged or not the recorded
 *    file: set aside as NNNNNN.sst.damaged and written out of a new
 *    manifest; of one that opens, every entry outside its damaged blocks
 *    and every range deletion is salvaged into a new table at the same
 *    level first (the keys of the damaged blocks may then show older
 *    versions, or none);
 *  - tables no version names: set aside as NNNNNN.sst.lost (the next open
 *    would delete them).
 * Logs damaged in the middle are the next open's to set aside
 * (ENG_LOG_RECOVERY_TRUNCATE); indexes are the index layer's.
 */
#include "db_impl.h"

#include "env.h"
#include "log_format.h"
#include "write_batch.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct checker {
    const char *dir;
    eng_check_fn fn;
    void *ctx;
    eng_check_report *rep;
    eng_options opts;
    version_set vs;    /* the version CURRENT's manifest describes */
    int have_version;  /* vs.current is that version */
    uint64_t *numbers; /* files of one kind in dir, sorted */
    int n, cap, kind;
} checker;

static void finding(checker *c, int severity, const char *file, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void finding(checker *c, int severity, const char *file, uint64_t off, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (severity == ENG_CHECK_DAMAGE) c->rep->problems++;
    if (severity == ENG_CHECK_WARNING) c->rep->warnings++;
    if (c->fn) c->fn(c->ctx, severity, file, off, msg);
}

static void list_kind(void *ctx, const char *name)
{
    checker *c = ctx;
    uint64_t num;
    if (db_parse_name(name, &num) != c->kind) return;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->numbers = realloc(c->numbers, sizeof(uint64_t) * (size_t)c->cap);
        if (!c->numbers) abort();
    }
    c->numbers[c->n++] = num;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The numbers of dir's files of kind (FT_*), ascending, in c->numbers. */
static void list_files(checker *c, int kind)
{
    c->n = 0;
    c->kind = kind;
    env_list_dir(c->dir, list_kind, c);
    if (c->n > 1) qsort(c->numbers, (size_t)c->n, sizeof(uint64_t), cmp_u64);
}

static void manifest_path(const checker *c, uint64_t number, char *out)
{
    snprintf(out, PATH_MAX, "%s/MANIFEST-%06" PRIu64, c->dir, number);
}

static int in_version(const version *v, uint64_t number, file_meta **f)
{
    for (int l = 0; v && l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++)
            if (v->files[l][i]->number == number) {
                if (f) *f = v->files[l][i];
                return 1;
            }
    return 0;
}

/* ---- Pass 1: CURRENT, the manifest, the tables it names ------------------- */

/* Replays manifest number into c->vs; reports what it finds when report. */
static eng_status load_manifest(checker *c, uint64_t number, int report)
{
    char path[PATH_MAX], note[PATH_MAX + 200];
    manifest_path(c, number, path);
    eng_status s = manifest_replay(&c->vs, path, note, sizeof(note));
    if (report && s != ENG_OK)
        finding(c, ENG_CHECK_DAMAGE, path, UINT64_MAX, "%s", eng_last_error());
    if (report && s == ENG_OK && note[0])
        finding(c, ENG_CHECK_WARNING, path, UINT64_MAX, "%s", note);
    c->vs.manifest_number = number;
    c->have_version = s == ENG_OK;
    return s;
}

/* The newest manifest that replays, or 0. */
static uint64_t newest_valid_manifest(checker *c)
{
    list_files(c, FT_MANIFEST);
    for (int i = c->n - 1; i >= 0; i--) {
        uint64_t number = c->numbers[i];
        if (load_manifest(c, number, 0) == ENG_OK) return number;
    }
    return 0;
}

/* Whether the table f of the version is usable; *why says what is wrong. */
static int table_ok(checker *c, file_meta *f, char *why, size_t cap)
{
    char path[PATH_MAX];
    uint64_t size = 0;
    db_filename(path, c->dir, f->number, "sst");
    eng_status s = env_file_size(path, &size);
    if (s == ENG_NOTFOUND) {
        snprintf(why, cap, "named by the manifest (%" PRIu64 " bytes) but missing", f->file_size);
        return 0;
    }
    sst_reader *r;
    if (s == ENG_OK) s = version_table(f, &r); /* opens it, checks V5 */
    if (s != ENG_OK) snprintf(why, cap, "%s", eng_last_error());
    return s == ENG_OK;
}

static void check_manifest(checker *c)
{
    uint64_t number = 0;
    char cur[PATH_MAX], path[PATH_MAX];
    snprintf(cur, sizeof(cur), "%s/CURRENT", c->dir);
    eng_status s = manifest_read_current(c->dir, &number);
    if (s == ENG_NOTFOUND)
        finding(c, ENG_CHECK_DAMAGE, cur, UINT64_MAX, "CURRENT is missing");
    else if (s != ENG_OK)
        finding(c, ENG_CHECK_DAMAGE, cur, 0, "%s", eng_last_error());
    manifest_path(c, number, path);
    if (s == ENG_OK && !env_exists(path)) {
        finding(c, ENG_CHECK_DAMAGE, cur, 0, "names %s, which is missing", path);
        s = ENG_NOTFOUND;
    }
    if (s == ENG_OK) s = load_manifest(c, number, 1);
    c->rep->manifests++;
    if (s != ENG_OK) {
        uint64_t best = newest_valid_manifest(c);
        if (best) {
            manifest_path(c, best, path);
            finding(c, ENG_CHECK_NOTE, path, UINT64_MAX,
                    "the newest manifest that replays: a repair points CURRENT at it");
        }
        c->have_version = 0;
        return;
    }
    const version *v = c->vs.current;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++) {
            char why[1024];
            db_filename(path, c->dir, v->files[l][i]->number, "sst");
            if (!table_ok(c, v->files[l][i], why, sizeof(why)))
                finding(c, ENG_CHECK_DAMAGE, path, UINT64_MAX, "level %d: %s", l, why);
        }
    list_files(c, FT_SST);
    for (int i = 0; i < c->n; i++)
        if (!in_version(v, c->numbers[i], NULL)) {
            db_filename(path, c->dir, c->numbers[i], "sst");
            finding(c, ENG_CHECK_WARNING, path, UINT64_MAX,
                    "not named by the manifest (left over by a crash, or lost by a damaged "
                    "manifest); the next open deletes it");
        }
}

/* ---- Pass 2: logs -------------------------------------------------------------- */

static int batch_head_plausible(const char *head, size_t head_len, size_t len)
{
    if (head_len < BATCH_HEADER_SIZE) return 0;
    uint32_t count = dec_fixed32(head + 8);
    return dec_fixed64(head) <= ENG_MAX_SEQUENCE && count >= 1 &&
           count <= (len - BATCH_HEADER_SIZE) / 2;
}

/* Checks one log; returns 1 when it ends with a torn tail. */
static int check_log(checker *c, uint64_t number, int live, int after_torn)
{
    char path[PATH_MAX];
    db_filename(path, c->dir, number, "log");
    c->rep->logs++;
    wal_reader *r;
    eng_status s = wal_reader_open(path, &r);
    if (s != ENG_OK) {
        finding(c, live ? ENG_CHECK_DAMAGE : ENG_CHECK_WARNING, path, 0, "%s", eng_last_error());
        return 0;
    }
    slice rec;
    uint64_t records = 0, off = wal_reader_valid_end(r);
    while ((s = wal_reader_next(r, &rec)) == ENG_OK) {
        eng_batch *b;
        if (batch_from_contents(rec, &b) != ENG_OK)
            finding(c, ENG_CHECK_DAMAGE, path, off, "good checksum but not a write batch: %s",
                    eng_last_error());
        else
            eng_batch_free(b);
        records++;
        off = wal_reader_valid_end(r);
    }
    c->rep->log_records += records;
    int torn = 0, intact = 0;
    uint64_t end = wal_reader_valid_end(r), next = 0;
    if (s == ENG_NOTFOUND && wal_reader_dropped_bytes(r)) {
        s = wal_reader_find_intact(r, batch_head_plausible, &intact, &next);
        if (intact)
            finding(c, live ? ENG_CHECK_DAMAGE : ENG_CHECK_WARNING, path, end,
                    "damaged record (%s); an intact record follows at offset %" PRIu64 "%s",
                    wal_reader_stop_reason(r), next,
                    live ? "; the server starts from the last good record only with "
                           "log-load-corrupt yes"
                         : " (the manifest no longer needs this log)");
        else
            finding(c, ENG_CHECK_WARNING, path, end,
                    "torn tail of %" PRIu64 " bytes (%s): never acknowledged, cut off at the "
                    "next open",
                    wal_reader_dropped_bytes(r), wal_reader_stop_reason(r));
        torn = !intact;
    }
    if (s != ENG_OK && s != ENG_NOTFOUND)
        finding(c, ENG_CHECK_DAMAGE, path, UINT64_MAX, "%s", eng_last_error());
    if (after_torn && live && records)
        finding(c, ENG_CHECK_DAMAGE, path, LOG_FILE_HEADER_SIZE,
                "holds records, but an earlier log ends with a torn record");
    wal_reader_close(r);
    return torn;
}

static void check_logs(checker *c)
{
    list_files(c, FT_LOG);
    uint64_t log_number = c->have_version ? c->vs.log_number : 0;
    int torn = 0;
    for (int i = 0; i < c->n; i++) {
        int live = c->numbers[i] >= log_number;
        torn |= check_log(c, c->numbers[i], live, torn);
    }
}

/* ---- Pass 3: tables ------------------------------------------------------------ */

/* Reads every block of table `number`; reports what is damaged when
 * report, and returns how many problems it found. */
static uint64_t check_table(checker *c, uint64_t number, int report)
{
    char path[PATH_MAX];
    uint64_t problems = 0;
    db_filename(path, c->dir, number, "sst");
    if (report) c->rep->tables++;
    sst_reader *r;
    eng_status s = sst_reader_open(path, number, NULL, &r);
    if (s != ENG_OK) {
        if (report) finding(c, ENG_CHECK_DAMAGE, path, UINT64_MAX, "%s", eng_last_error());
        return 1;
    }
    sst_damage_log dl = {1, NULL, 0, 0, NULL, NULL};
    iter *it = sst_reader_iter_damage(r, 0, &dl);
    uint64_t entries = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it))
        entries++;
    if (iter_status(it) != ENG_OK) {
        problems++;
        if (report) finding(c, ENG_CHECK_DAMAGE, path, UINT64_MAX, "%s", eng_last_error());
    }
    iter_free(it);
    sst_props p;
    sst_reader_props(r, &p);
    if (report) c->rep->table_blocks += p.data_blocks;
    problems += (uint64_t)dl.n;
    for (int i = 0; report && i < dl.n; i++) {
        char what[700];
        sst_damage_describe(&dl.d[i], what, sizeof(what));
        finding(c, ENG_CHECK_DAMAGE, path, dl.d[i].offset, "%s", what);
    }
    if (!dl.n && entries != p.entries) {
        problems++;
        if (report)
            finding(c, ENG_CHECK_DAMAGE, path, UINT64_MAX,
                    "%" PRIu64 " entries, the properties say %" PRIu64, entries, p.entries);
    }
    sst_damage_log_free(&dl);
    sst_reader_close(r);
    return problems;
}

static void check_tables(checker *c)
{
    list_files(c, FT_SST);
    for (int i = 0; i < c->n; i++)
        check_table(c, c->numbers[i], 1);
}

/* ---- Entry points ---------------------------------------------------------------- */

static eng_status begin(checker *c, const char *dir, eng_check_fn fn, void *ctx,
                        eng_check_report *out, int *lock_fd)
{
    memset(c, 0, sizeof(*c));
    memset(out, 0, sizeof(*out));
    c->dir = dir;
    c->fn = fn;
    c->ctx = ctx;
    c->rep = out;
    eng_options_init(&c->opts);
    version_set_init(&c->vs, dir, &c->opts, NULL);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/LOCK", dir);
    if (!env_exists(dir)) return env_error(ENG_INVALID, "%s: no such directory", dir);
    return env_open_locked(path, lock_fd);
}

static void end(checker *c, int lock_fd)
{
    version_set_destroy(&c->vs);
    free(c->numbers);
    env_close(lock_fd, "LOCK");
}

eng_status eng_check_dir(const char *dir, eng_check_fn fn, void *ctx, eng_check_report *out)
{
    checker c;
    int lock_fd = -1;
    eng_status s = begin(&c, dir, fn, ctx, out, &lock_fd);
    if (s == ENG_OK) {
        check_manifest(&c);
        check_logs(&c);
        check_tables(&c);
    }
    end(&c, lock_fd);
    return s;
}

/* Copies CURRENT and every manifest into backup (what a repair changes). */
static eng_status back_up(checker *c, const char *backup)
{
    eng_status s = env_mkdir_p(backup);
    char from[PATH_MAX], to[PATH_MAX + 32];
    snprintf(from, sizeof(from), "%s/CURRENT", c->dir);
    snprintf(to, sizeof(to), "%s/CURRENT", backup);
    if (s == ENG_OK && env_exists(from)) s = env_copy_file(from, to);
    list_files(c, FT_MANIFEST);
    for (int i = 0; s == ENG_OK && i < c->n; i++) {
        manifest_path(c, c->numbers[i], from);
        snprintf(to, sizeof(to), "%s/%s", backup, strrchr(from, '/') + 1);
        s = env_copy_file(from, to);
    }
    if (s == ENG_OK)
        finding(c, ENG_CHECK_NOTE, backup, UINT64_MAX, "CURRENT and manifests copied here");
    return s;
}

/* Sets the table file `number` aside with suffix and reports it. */
static void set_table_aside(checker *c, uint64_t number, const char *suffix, const char *why)
{
    char path[PATH_MAX], kept[PATH_MAX + 16];
    db_filename(path, c->dir, number, "sst");
    snprintf(kept, sizeof(kept), "%s.%s", path, suffix);
    if (env_exists(path) && env_rename(path, kept) != ENG_OK) {
        finding(c, ENG_CHECK_DAMAGE, path, UINT64_MAX, "could not set it aside: %s",
                eng_last_error());
        return;
    }
    c->rep->repaired++;
    finding(c, ENG_CHECK_REPAIRED, path, UINT64_MAX, "set aside as %s: %s", kept, why);
}

static void add_rdel(void *ctx, slice start, slice end, uint64_t seq)
{
    sst_builder_add_range_del(ctx, start, end, seq);
}

/* Copies what can be read of table f -- every entry outside its damaged
 * blocks, every range deletion -- into a new table; *out gets its metadata
 * (NULL when nothing could be read). */
static eng_status salvage_table(checker *c, file_meta *f, file_meta **out)
{
    *out = NULL;
    sst_reader *r;
    eng_status s = version_table(f, &r);
    if (s != ENG_OK) return s;
    uint64_t number = c->vs.next_file++;
    char path[PATH_MAX];
    db_filename(path, c->dir, number, "sst");
    sst_options so = {c->opts.block_size, c->opts.compression_level, c->opts.bloom_bits_per_key,
                      number};
    sst_builder *b;
    if ((s = sst_builder_new(path, &so, &b)) != ENG_OK) return s;
    sst_damage_log dl = {1, NULL, 0, 0, NULL, NULL};
    iter *it = sst_reader_iter_damage(r, 0, &dl);
    for (iter_seek_first(it); s == ENG_OK && iter_valid(it); iter_next(it))
        s = sst_builder_add(b, iter_key(it), iter_value(it));
    if (s == ENG_OK) s = iter_status(it);
    iter_free(it);
    sst_damage_log_free(&dl);
    sst_reader_range_dels(r, add_rdel, b);
    if (s != ENG_OK || (sst_builder_entries(b) == 0 && f->range_dels == 0)) {
        sst_builder_abandon(b);
        return s;
    }
    sst_file_info info;
    if ((s = sst_builder_finish(b, &info)) != ENG_OK) return s;
    file_meta *nf = file_meta_new(&c->vs);
    nf->number = number;
    nf->file_size = info.file_size;
    nf->entries = info.entries;
    nf->range_dels = info.range_deletions;
    nf->smallest_seq = info.smallest_seq;
    nf->largest_seq = info.largest_seq;
    nf->smallest = info.smallest;
    nf->largest = info.largest;
    *out = nf;
    return ENG_OK;
}

/* Writes the version with edit e applied as a new manifest. */
static eng_status write_without(checker *c, version_edit *e)
{
    version *v;
    eng_status s = version_apply(&c->vs, c->vs.current, e, 0, &v);
    if (s != ENG_OK) return s;
    uint64_t number = c->vs.next_file++;
    s = manifest_write_new(&c->vs, v, number, c->vs.log_number, c->vs.next_file, c->vs.last_seq);
    if (s != ENG_OK) {
        version_unref(v);
        return s;
    }
    version_unref(c->vs.current);
    c->vs.current = v; /* what CURRENT now describes */
    if (s == ENG_OK) {
        char path[PATH_MAX];
        manifest_path(c, number, path);
        c->rep->repaired++;
        finding(c, ENG_CHECK_REPAIRED, path, UINT64_MAX,
                "new manifest without the tables set aside (and with what was salvaged of "
                "them); CURRENT names it");
    }
    return s;
}

/* Repairs the version: its bad tables out, the unnamed ones aside. */
static eng_status repair_tables(checker *c)
{
    version_edit e;
    edit_init(&e);
    const version *v = c->vs.current;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++) {
            file_meta *f = v->files[l][i];
            char why[1024];
            int ok = table_ok(c, f, why, sizeof(why));
            uint64_t bad = ok ? check_table(c, f->number, 0) : 0; /* and every block reads */
            if (ok && !bad) continue;
            file_meta *nf = NULL;
            if (bad) { /* it opens: keep what reads in a new table */
                eng_status ss = salvage_table(c, f, &nf);
                snprintf(why, sizeof(why), "%llu damaged block(s); %s", (unsigned long long)bad,
                         ss != ENG_OK ? eng_last_error()
                         : nf         ? "the rest is salvaged into a new table"
                                      : "nothing else to salvage");
            }
            set_table_aside(c, f->number, "damaged", why);
            edit_delete_file(&e, l, f->number);
            if (nf) edit_add_file(&e, l, nf);
        }
    eng_status s = e.ndeleted ? write_without(c, &e) : ENG_OK;
    if (s != ENG_OK) finding(c, ENG_CHECK_DAMAGE, c->dir, UINT64_MAX, "%s", eng_last_error());
    edit_clear(&e);
    list_files(c, FT_SST);
    for (int i = 0; s == ENG_OK && i < c->n; i++)
        if (!in_version(c->vs.current, c->numbers[i], NULL))
            set_table_aside(c, c->numbers[i], "lost", "not named by the manifest");
    return s;
}

eng_status eng_repair_dir(const char *dir, const char *backup_dir, eng_check_fn fn, void *ctx,
                          eng_check_report *out)
{
    checker c;
    int lock_fd = -1;
    eng_status s = begin(&c, dir, fn, ctx, out, &lock_fd);
    if (s == ENG_OK) s = back_up(&c, backup_dir);
    uint64_t number = 0;
    eng_status cs = s == ENG_OK ? manifest_read_current(dir, &number) : s;
    if (s == ENG_OK && (cs != ENG_OK || load_manifest(&c, number, 0) != ENG_OK)) {
        uint64_t best = newest_valid_manifest(&c);
        char path[PATH_MAX];
        manifest_path(&c, best, path);
        if (!best) {
            finding(&c, ENG_CHECK_DAMAGE, dir, UINT64_MAX,
                    "no manifest replays: CURRENT cannot be rebuilt (restore a backup)");
            s = ENG_CORRUPTION;
        } else if ((s = manifest_set_current(dir, best)) == ENG_OK) {
            c.rep->repaired++;
            finding(&c, ENG_CHECK_REPAIRED, path, UINT64_MAX, "CURRENT now names this manifest");
        }
    }
    if (s == ENG_OK && c.have_version) s = repair_tables(&c);
    end(&c, lock_fd);
    return s;
}
