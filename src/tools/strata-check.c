/*
 * strata-check -- verifies (and with --repair, repairs) a strata data
 * directory offline, while no server has it open.
 *
 *   strata-check [--repair] [--quiet] DIR
 *
 * Check: the engine's files (eng_check_dir: CURRENT, the manifest and the
 * tables it names, every log record, every table block and checksum), then,
 * when the database opens (read-only: nothing is written), the index
 * catalog and every index of every database against its hashes, as
 * IDX.CHECK does (idx_check). Every finding is one line:
 *   DAMAGE|WARNING|NOTE|REPAIRED <file>[ @<offset>]: <what>
 * and the last line sums up.
 *
 * Repair: the engine's repairs first (eng_repair_dir: a lost CURRENT from
 * the newest manifest that replays, damaged or misplaced tables set aside
 * and written out of a new manifest; CURRENT and every manifest are copied
 * into DIR/repair-<unix time>/ first), then an open that starts from the
 * last good record of a log damaged in the middle (the log is kept as
 * NNNNNN.log.corrupt), then every index IDX.CHECK finds wrong is dropped
 * and built again from the hashes.
 *
 * Exit status: 0 when nothing damaged is left, 1 when something is, 2 when
 * the check could not run (usage, the directory in use, I/O errors).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/engine.h"
#include "index/index.h"
#include "keyspace/keyspace.h"

typedef struct tool {
    int quiet;
    uint64_t index_problems, index_repaired;
    char bad[64][256]; /* "db name" of indexes IDX.CHECK found wrong */
    int nbad;
} tool;

static const char *sev_name[] = {"NOTE", "WARNING", "DAMAGE", "REPAIRED"};

static void print_finding(void *ctx, int severity, const char *file, uint64_t offset,
                          const char *what)
{
    tool *t = ctx;
    if (t->quiet && severity < ENG_CHECK_DAMAGE) return;
    if (offset == UINT64_MAX)
        printf("%s %s: %s\n", sev_name[severity & 3], file, what);
    else
        printf("%s %s @%llu: %s\n", sev_name[severity & 3], file, (unsigned long long)offset, what);
}

typedef struct index_acc {
    tool *t;
    int db;
    uint64_t n;
} index_acc;

/* An IDX.CHECK line: "<what> <index> <key or description>". */
static void index_line(void *arg, const char *line)
{
    index_acc *a = arg;
    a->n++;
    printf("DAMAGE index (db %d): %s\n", a->db, line);
    char name[200] = "";
    if (sscanf(line, "%*s %199s", name) != 1) return;
    char key[256];
    snprintf(key, sizeof(key), "%d %s", a->db, name);
    for (int i = 0; i < a->t->nbad; i++)
        if (!strcmp(a->t->bad[i], key)) return;
    if (a->t->nbad < 64) snprintf(a->t->bad[a->t->nbad++], sizeof(a->t->bad[0]), "%s", key);
}

/* Runs IDX.CHECK on every database; returns the problems, -1 on error. */
static long long check_indexes(tool *t, keyspace *ks)
{
    eng_batch *b = eng_batch_new(1);
    long long total = 0;
    t->nbad = 0;
    for (int db = 0; db < KS_DATABASES; db++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ks_ctx ctx = {ks, b, db, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, NULL, 0, 0};
        index_acc a = {t, db, 0};
        long long n = idx_check(&ctx, index_line, &a);
        if (n < 0) {
            printf("DAMAGE index (db %d): the check failed: %s\n", db, ctx.err ? ctx.err : "?");
            total = -1;
        } else if (total >= 0) {
            total += n;
        }
        ks_ctx_reset(&ctx);
        eng_batch_clear(b);
    }
    eng_batch_free(b);
    return total;
}

/* Writes ctx's batch and commits it durably. */
static int commit(eng_db *db, ks_ctx *ctx)
{
    eng_status s = eng_write(db, ctx->batch, ENG_WRITE_SYNC);
    eng_batch_clear(ctx->batch);
    if (s != ENG_OK) printf("DAMAGE index rebuild: write failed: %s\n", eng_last_error());
    return s == ENG_OK;
}

/* Drops index `name` of db and builds it again from the hashes. */
static int rebuild_index(tool *t, eng_db *edb, keyspace *ks, int db, const char *name)
{
    ks_ctx ctx = {ks, eng_batch_new(1), db, 0, NULL, 0, 0};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ctx.now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    idx_desc d;
    int ok = idx_describe(&ctx, name, strlen(name), &d) == KS_OK;
    char iname[256], prefix[1024];
    char fname[16][256];
    idx_field_spec fields[16];
    if (ok) {
        snprintf(iname, sizeof(iname), "%.*s", (int)d.name.n, d.name.p);
        snprintf(prefix, sizeof(prefix), "%.*s", (int)d.prefix.n, d.prefix.p);
        for (size_t i = 0; i < d.nfields; i++) {
            snprintf(fname[i], sizeof(fname[i]), "%.*s", (int)d.fields[i].name.n,
                     d.fields[i].name.p);
            fields[i] = d.fields[i];
            fields[i].name = (idx_str){fname[i], strlen(fname[i])};
        }
        idx_spec spec = {
            {iname, strlen(iname)}, {prefix, strlen(prefix)}, d.unique, d.nfields, fields};
        ok = idx_drop(&ctx, iname, strlen(iname)) == KS_OK && commit(edb, &ctx) &&
             idx_create(&ctx, &spec) == KS_OK && commit(edb, &ctx);
        while (ok && idx_build_step(&ctx))
            ok = commit(edb, &ctx);
        ok = ok && commit(edb, &ctx);
    }
    if (!ok)
        printf("DAMAGE index %s (db %d): rebuild failed: %s\n", name, db, ctx.err ? ctx.err : "");
    else {
        t->index_repaired++;
        printf("REPAIRED index %s (db %d): dropped and built again from the hashes\n", name, db);
    }
    ks_ctx_reset(&ctx);
    eng_batch_free(ctx.batch);
    return ok;
}

static void quiet_log(void *ctx, int level, const char *msg)
{
    if (level >= 3) printf("NOTE engine: %s\n", msg);
}

/* Opens the database and checks (and with repair, rebuilds) its indexes.
 * Returns the index problems left, or -1 when it did not open. */
static long long indexes(tool *t, const char *dir, int repair)
{
    eng_options o;
    eng_options_init(&o);
    o.read_only = !repair;
    o.create_if_missing = 0;
    o.log_recovery = repair ? ENG_LOG_RECOVERY_TRUNCATE : ENG_LOG_RECOVERY_STRICT;
    o.log_fn = quiet_log;
    o.compaction_filter = ks_compaction_filter;
    eng_db *db = NULL;
    eng_status s = eng_open(dir, &o, &db);
    if (s != ENG_OK) {
        printf("DAMAGE %s: the database does not open: %s (%s)\n", dir, eng_status_str(s),
               eng_last_error());
        return -1;
    }
    keyspace *ks = NULL;
    char *err = NULL;
    long long n = -1;
    if (ks_open(db, &ks) != KS_OK)
        printf("DAMAGE %s: the keyspace does not open: %s\n", dir, eng_last_error());
    else if (idx_init(ks, &err) != KS_OK)
        printf("DAMAGE %s: the index catalog does not load: %s\n", dir, err ? err : "?");
    else
        n = check_indexes(t, ks);
    if (n > 0 && repair) {
        int nbad = t->nbad;
        char bad[64][256];
        memcpy(bad, t->bad, sizeof(bad));
        for (int i = 0; i < nbad; i++) {
            int dbn;
            char name[200];
            if (sscanf(bad[i], "%d %199s", &dbn, name) == 2) rebuild_index(t, db, ks, dbn, name);
        }
        n = check_indexes(t, ks);
    }
    free(err);
    if (ks) {
        idx_shutdown();
        ks_close(ks);
    }
    eng_close(db);
    return n;
}

int main(int argc, char **argv)
{
    tool t;
    memset(&t, 0, sizeof(t));
    int repair = 0;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repair"))
            repair = 1;
        else if (!strcmp(argv[i], "--quiet"))
            t.quiet = 1;
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else
            dir = NULL, i = argc;
    }
    if (!dir) {
        fprintf(stderr, "usage: strata-check [--repair] [--quiet] DIR\n"
                        "Checks a strata data directory (stop the server first); --repair "
                        "fixes what it can, keeping a copy of what it changes.\n");
        return 2;
    }
    eng_check_report rep, fixed;
    memset(&fixed, 0, sizeof(fixed));
    eng_status s = eng_check_dir(dir, print_finding, &t, &rep);
    if (s != ENG_OK) {
        printf("strata-check %s: cannot check: %s (%s)\n", dir, eng_status_str(s),
               eng_last_error());
        return 2;
    }
    if (repair && rep.problems) {
        char backup[4096];
        snprintf(backup, sizeof(backup), "%s/repair-%lld", dir, (long long)time(NULL));
        s = eng_repair_dir(dir, backup, print_finding, &t, &fixed);
        if (s != ENG_OK)
            printf("DAMAGE %s: repair stopped: %s (%s)\n", dir, eng_status_str(s),
                   eng_last_error());
    }
    long long ix = indexes(&t, dir, repair);
    uint64_t left = rep.problems;
    if (repair) { /* what is left: a fresh check after the repairs */
        eng_check_report after;
        if (eng_check_dir(dir, t.quiet ? NULL : print_finding, &t, &after) == ENG_OK)
            left = after.problems;
    }
    printf("strata-check %s: %llu problem(s)%s, %llu warning(s), %llu index problem(s)%s; "
           "%llu log(s) with %llu record(s), %llu table(s) with %llu block(s)\n",
           dir, (unsigned long long)left, repair ? " left" : "", (unsigned long long)rep.warnings,
           (unsigned long long)(ix < 0 ? 0 : ix), ix < 0 ? " (indexes not checked)" : "",
           (unsigned long long)rep.logs, (unsigned long long)rep.log_records,
           (unsigned long long)rep.tables, (unsigned long long)rep.table_blocks);
    return left || ix != 0 ? 1 : 0;
}
