/*
 * compaction.c -- leveled compaction on a background thread.
 *
 * Picking (under db->mu): the level with the highest score >= 1 (version.c:
 * L0 files / l0_compaction_trigger, or bytes / target for L1+). Level 0
 * compacts all its files into L1 (they may overlap); level L >= 1 compacts
 * one file, round robin by key (compact_pointer), plus the files of L+1 it
 * overlaps. A single input file with nothing below to merge with is moved
 * down by a manifest edit alone. A manual compaction (eng_compact_range)
 * takes every file that meets the range at every level (all of level 0 if
 * any) and writes them into the deepest non-empty level in one pass.
 *
 * Running (without db->mu): a merging iterator over the inputs; per user
 * key, newest version first (K1), an entry is dropped when
 *  C1. a newer version of its key is visible to every snapshot
 *      (the previous entry's sequence <= the oldest snapshot);
 *  C2. it is a deletion every snapshot sees and no deeper level can hold
 *      the key (so nothing resurfaces);
 *  C3. a range tombstone of the inputs every snapshot sees covers it with a
 *      higher sequence (R1 with snapshot = oldest snapshot);
 *  C4. it is the newest version, no snapshot sees it (seq > newest
 *      snapshot), and the compaction filter says so: dropped outright when
 *      there is no snapshot at all and no deeper level can hold the key,
 *      otherwise written as a deletion at the same sequence so that older
 *      versions (below, or kept here for a snapshot) stay hidden.
 * and a kept value is written with sequence 0 when
 *  C5. it is the only version of its key, every snapshot sees it, no
 *      deeper level holds the key and no tombstone of the inputs covers it
 *      (RocksDB does the same: the zeroed trailers compress away).
 *  C6. Output into the bottom level (no deeper level holds a table) is
 *      compressed with a zstd dictionary trained per output table
 *      (table_format.md, version 2), at bottom_compression_level when the
 *      compaction is manual (eng_compact_range: DEBUG COMPACT, a settle),
 *      else at compression_level: with few levels every L0 compaction
 *      rewrites the bottom, and level 6 there cost inserts ~60% more CPU.
 *      Other levels: compression_level, no dictionary; flushes:
 *      flush_compression_level (flush.c, F2).
 * Range tombstones are carried into the output files, clipped to each
 * file's key span so that files in a level never overlap (V2), and dropped
 * once every snapshot sees them and no deeper level overlaps them.
 * Output files are cut at target_file_size, only between user keys (V2).
 * The edit deleting the inputs and adding the outputs is synced to the
 * manifest before the version is installed; input files go when the last
 * version holding them is released (V4). A compaction that fails (no space
 * for its outputs, a damaged input) deletes its outputs, keeps its inputs
 * and is retried after a delay (db_impl.h, D6).
 */
#include "db_impl.h"

#include "env.h"
#include "merger.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct compaction {
    version *v; /* the version the inputs come from; referenced */
    int out_level;
    int manual;
    int n[ENG_MAX_LEVELS];
    file_meta **in[ENG_MAX_LEVELS];
} compaction;

static void compaction_free(compaction *c)
{
    if (!c) return;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        free(c->in[l]);
    version_unref(c->v);
    free(c);
}

static slice fm_ulo(const file_meta *f)
{
    return ikey_user_key(slice_make(f->smallest.data, f->smallest.len));
}
static slice fm_uhi(const file_meta *f)
{
    return ikey_user_key(slice_make(f->largest.data, f->largest.len));
}

/* Widens the user-key range [lo, hi] (copied into bufs) to cover files. */
static void widen(buf *lo, buf *hi, int *has, file_meta **files, int n)
{
    for (int i = 0; i < n; i++) {
        slice a = fm_ulo(files[i]), b = fm_uhi(files[i]);
        if (!*has || slice_compare(a, slice_make(lo->data, lo->len)) < 0) {
            lo->len = 0;
            buf_append(lo, a.data, a.size);
        }
        if (!*has || slice_compare(b, slice_make(hi->data, hi->len)) > 0) {
            hi->len = 0;
            buf_append(hi, b.data, b.size);
        }
        *has = 1;
    }
}

/* REQUIRES: mu (reads vs.current and compact_pointer). */
static compaction *pick_auto(eng_db *db)
{
    version *v = db->vs.current;
    if (v->score < 1 || v->score_level < 0) return NULL;
    int L = v->score_level;
    compaction *c = calloc(1, sizeof(*c));
    if (!c) abort();
    c->v = v;
    version_ref(v);
    c->out_level = L + 1;
    if (L == 0) {
        c->n[0] = version_overlapping(v, 0, NULL, NULL, &c->in[0]);
    } else {
        buf *cp = &db->vs.compact_pointer[L];
        int pick = 0; /* round robin: the first file after the last one compacted */
        for (int i = 0; cp->len && i < v->nfiles[L]; i++)
            if (slice_compare(fm_ulo(v->files[L][i]), slice_make(cp->data, cp->len)) > 0) {
                pick = i;
                break;
            }
        c->in[L] = malloc(sizeof(file_meta *));
        if (!c->in[L]) abort();
        c->in[L][0] = v->files[L][pick];
        c->n[L] = 1;
        slice hi = fm_uhi(c->in[L][0]);
        cp->len = 0;
        buf_append(cp, hi.data, hi.size);
    }
    buf lo = {0}, hi = {0};
    int has = 0;
    widen(&lo, &hi, &has, c->in[L], c->n[L]);
    slice slo = slice_make(lo.data, lo.len), shi = slice_make(hi.data, hi.len);
    c->n[L + 1] = version_overlapping(v, L + 1, &slo, &shi, &c->in[L + 1]);
    buf_free(&lo);
    buf_free(&hi);
    return c;
}

/* An optional user-key bound kept in a buffer. */
typedef struct bound {
    int set;
    buf b;
} bound;

static slice bound_slice(const bound *x)
{
    return slice_make(x->b.data, x->b.len);
}

static void bound_widen(bound *x, slice k, int lower)
{
    if (!x->set) return; /* unbounded stays unbounded */
    int c = slice_compare(k, bound_slice(x));
    if (lower ? c < 0 : c > 0) {
        x->b.len = 0;
        buf_append(&x->b, k.data, k.size);
    }
}

/* REQUIRES: mu. NULL when nothing meets the range. */
static compaction *pick_manual(eng_db *db, const slice *ulo, const slice *uhi)
{
    version *v = db->vs.current;
    int bottom = 0, total = 0;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        if (v->nfiles[l]) bottom = l;
    compaction *c = calloc(1, sizeof(*c));
    if (!c) abort();
    c->v = v;
    version_ref(v);
    c->manual = 1;
    c->out_level = bottom > 0 ? bottom : 1;
    bound lo = {ulo != NULL, {0}}, hi = {uhi != NULL, {0}};
    if (ulo) buf_append(&lo.b, ulo->data, ulo->size);
    if (uhi) buf_append(&hi.b, uhi->data, uhi->size);
    /* Top down, so that a file left behind never holds a key that moved below
     * it from a level above (V3). */
    for (int l = 0; l <= bottom; l++) {
        slice sl = bound_slice(&lo), sh = bound_slice(&hi);
        c->n[l] = version_overlapping(v, l, lo.set ? &sl : NULL, hi.set ? &sh : NULL, &c->in[l]);
        if (l == 0 && c->n[0]) { /* L0 files overlap each other: all or none */
            free(c->in[0]);
            c->n[0] = version_overlapping(v, 0, NULL, NULL, &c->in[0]);
        }
        for (int i = 0; i < c->n[l]; i++) {
            bound_widen(&lo, fm_ulo(c->in[l][i]), 1);
            bound_widen(&hi, fm_uhi(c->in[l][i]), 0);
        }
        total += c->n[l];
    }
    buf_free(&lo.b);
    buf_free(&hi.b);
    if (!total) {
        compaction_free(c);
        return NULL;
    }
    return c;
}

/* ---- Running ----------------------------------------------------------- */

typedef struct cstate {
    eng_db *db;
    compaction *c;
    uint64_t oldest_snap, newest_snap;
    int has_snap;    /* newest_snap is meaningful (C5 makes sequence 0 common) */
    rdel_set *rdels; /* the inputs' tombstones; rdel.keep: carried into the outputs */
    sst_builder *b;
    uint64_t b_number;
    buf lo; /* user key where the current output's span starts */
    int has_lo;
    file_meta **out;
    int nout, capout;
    uint64_t bytes_out;
    int use_filter;                /* C4 enabled for this run */
    uint64_t filtered;             /* entries C4 dropped or rewrote */
    uint64_t epoch;                /* db->snap_epoch when the snapshot bounds were read */
    int level_ptr[ENG_MAX_LEVELS]; /* deeper_key's cursors */
    int bottom;                    /* no level below out_level holds a table (C6) */
} cstate;

static void add_rdel_cb(void *ctx, slice start, slice end, uint64_t seq)
{
    rdel_set_add(ctx, start, end, seq);
}

static int deeper(cstate *cs, slice lo, slice hi)
{
    return version_deeper_overlap(cs->c->v, cs->c->out_level, lo, hi);
}

/* deeper() for one key, for keys that arrive in ascending order: a cursor
 * per level only moves forward (LevelDB's level_ptrs), so the check is
 * amortized O(1) instead of a binary search per level per key. */
static int deeper_key(cstate *cs, slice uk)
{
    const version *v = cs->c->v;
    for (int l = cs->c->out_level + 1; l < ENG_MAX_LEVELS; l++) {
        while (cs->level_ptr[l] < v->nfiles[l]) {
            const file_meta *f = v->files[l][cs->level_ptr[l]];
            if (slice_compare(uk, fm_uhi(f)) <= 0) {
                if (slice_compare(uk, fm_ulo(f)) >= 0) return 1;
                break;
            }
            cs->level_ptr[l]++;
        }
    }
    return 0;
}

static eng_status open_output(cstate *cs)
{
    pthread_mutex_lock(&cs->db->mu);
    cs->b_number = cs->db->vs.next_file++;
    pthread_mutex_unlock(&cs->db->mu);
    char path[PATH_MAX];
    db_filename(path, cs->db->dir, cs->b_number, "sst");
    const eng_options *o = &cs->db->opts;
    sst_options so = {o->block_size, o->compression_level, o->bloom_bits_per_key, cs->b_number, 0};
    so.filter_policy = __atomic_load_n(&cs->db->filter_policy, __ATOMIC_ACQUIRE);
    if (cs->bottom && o->compression_level != 0) {
        /* C6: the bottom level holds most of the data */
        so.dict_size = o->dict_size;
        if (cs->c->manual && o->bottom_compression_level > 0)
            so.compression_level = o->bottom_compression_level;
    }
    return sst_builder_new(path, &so, &cs->b);
}

/* Finishes the current output; its span ends before user key hi (NULL: open). */
static eng_status finish_output(cstate *cs, const slice *hi)
{
    rdel_cursor cur;
    for (const rdel *r = rdel_set_first(cs->rdels, &cur); r; r = rdel_next(&cur)) {
        if (!r->keep) continue;
        slice a = rdel_start(r), z = rdel_end(r);
        if (cs->has_lo && slice_compare(a, slice_make(cs->lo.data, cs->lo.len)) < 0)
            a = slice_make(cs->lo.data, cs->lo.len);
        if (hi && slice_compare(z, *hi) > 0) z = *hi;
        if (slice_compare(a, z) < 0) sst_builder_add_range_del(cs->b, a, z, r->seq);
    }
    sst_file_info info;
    memset(&info, 0, sizeof(info));
    eng_status s = sst_builder_finish(cs->b, &info);
    cs->b = NULL;
    if (s == ENG_OK) {
        file_meta *f = file_meta_new(&cs->db->vs);
        f->number = cs->b_number;
        f->file_size = info.file_size;
        f->entries = info.entries;
        f->range_dels = info.range_deletions;
        f->smallest_seq = info.smallest_seq;
        f->largest_seq = info.largest_seq;
        f->smallest = info.smallest;
        f->largest = info.largest;
        memset(&info.smallest, 0, sizeof(buf));
        memset(&info.largest, 0, sizeof(buf));
        if (cs->nout == cs->capout) {
            cs->capout = cs->capout ? cs->capout * 2 : 8;
            cs->out = realloc(cs->out, sizeof(file_meta *) * (size_t)cs->capout);
            if (!cs->out) abort();
        }
        cs->out[cs->nout++] = f;
        cs->bytes_out += f->file_size;
    }
    sst_file_info_free(&info);
    if (hi) {
        cs->lo.len = 0;
        buf_append(&cs->lo, hi->data, hi->size);
        cs->has_lo = 1;
    }
    return s;
}

enum { KEEP, KEEP_AS_DELETE, KEEP_AS_SEQ0, DROP };

/* Rules C1-C5 for one entry. */
static int decide(cstate *cs, slice k, slice val, int first, uint64_t prev_seq)
{
    slice uk = ikey_user_key(k);
    uint64_t seq = ikey_sequence(k);
    int type = ikey_type(k);
    if (prev_seq <= cs->oldest_snap) return DROP; /* C1 */
    if (type == ENG_TYPE_DELETION && seq <= cs->oldest_snap && !deeper_key(cs, uk)) return DROP;
    if (cs->rdels && rdel_set_covers(cs->rdels, uk, seq, cs->oldest_snap)) return DROP; /* C3 */
    eng_options *o = &cs->db->opts;
    if (first && type == ENG_TYPE_VALUE && cs->use_filter && o->compaction_filter &&
        (!cs->has_snap || seq > cs->newest_snap) &&
        o->compaction_filter(o->compaction_filter_ctx, uk.data, uk.size, val.data, val.size)) {
        cs->filtered++;
        /* C4: dropping it outright is safe only when no older version can
         * be kept: none below, and none retained here for a snapshot. */
        if (seq <= cs->oldest_snap && !deeper_key(cs, uk)) return DROP;
        return KEEP_AS_DELETE;
    }
    /* C5: the only version left of a key at the bottom, seen by every
     * snapshot, needs no sequence number; zeros compress to nothing. Not
     * under a tombstone, which would then seem newer than the value. */
    if (first && type == ENG_TYPE_VALUE && seq && seq <= cs->oldest_snap &&
        !(cs->rdels && rdel_set_covers(cs->rdels, uk, 0, ENG_MAX_SEQUENCE)) && !deeper_key(cs, uk))
        return KEEP_AS_SEQ0;
    return KEEP;
}

static eng_status compact_loop(cstate *cs, iter *it)
{
    eng_status s = ENG_OK;
    buf cur = {0}, tmp = {0};
    int has_cur = 0;
    uint64_t prev_seq = UINT64_MAX;
    uint64_t target = cs->db->opts.target_file_size;
    for (iter_seek_first(it); iter_valid(it) && s == ENG_OK; iter_next(it)) {
        if (__atomic_load_n(&cs->db->shutting_down, __ATOMIC_ACQUIRE)) {
            s = ENG_INVALID;
            break;
        }
        slice k = iter_key(it), uk = ikey_user_key(k);
        int first = !has_cur || slice_compare(uk, slice_make(cur.data, cur.len)) != 0;
        if (first) {
            cur.len = 0;
            buf_append(&cur, uk.data, uk.size);
            has_cur = 1;
            prev_seq = UINT64_MAX;
        }
        int what = decide(cs, k, iter_value(it), first, prev_seq);
        prev_seq = ikey_sequence(k);
        if (what == DROP) continue;
        if (cs->b && first && sst_builder_file_size(cs->b) >= target) s = finish_output(cs, &uk);
        if (s == ENG_OK && !cs->b) s = open_output(cs);
        if (s != ENG_OK) break;
        if (what == KEEP) {
            s = sst_builder_add(cs->b, k, iter_value(it));
            continue;
        }
        tmp.len = 0;
        if (what == KEEP_AS_DELETE)
            ikey_append(&tmp, uk, ikey_sequence(k), ENG_TYPE_DELETION);
        else
            ikey_append(&tmp, uk, 0, ENG_TYPE_VALUE);
        s = sst_builder_add(cs->b, slice_make(tmp.data, tmp.len),
                            what == KEEP_AS_DELETE ? slice_make("", 0) : iter_value(it));
    }
    if (s == ENG_OK) s = iter_status(it);
    buf_free(&cur);
    buf_free(&tmp);
    return s;
}

/* Collects the tombstones of the inputs and which of them survive. */
static eng_status collect_input_rdels(cstate *cs)
{
    compaction *c = cs->c;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < c->n[l]; i++) {
            if (!c->in[l][i]->range_dels) continue;
            sst_reader *r;
            eng_status s = version_table(c->in[l][i], &r);
            if (s != ENG_OK) return s;
            if (!cs->rdels) cs->rdels = rdel_set_new();
            sst_reader_range_dels(r, add_rdel_cb, cs->rdels);
        }
    rdel_cursor cur;
    for (rdel *r = rdel_set_first(cs->rdels, &cur); r; r = rdel_next(&cur))
        r->keep = !(r->seq <= cs->oldest_snap && !deeper(cs, rdel_start(r), rdel_end(r)));
    return ENG_OK;
}

static eng_status do_compaction_work(cstate *cs)
{
    compaction *c = cs->c;
    memset(cs->level_ptr, 0, sizeof(cs->level_ptr));
    int n = 0, cap = 0;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        cap += c->n[l];
    iter **its = malloc(sizeof(iter *) * (size_t)(cap + 1));
    if (!its) abort();
    eng_status s = ENG_OK;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < c->n[l]; i++) {
            sst_reader *r;
            eng_status t = version_table(c->in[l][i], &r);
            its[n++] = t == ENG_OK ? sst_reader_iter(r, 0) : iter_new_error(t);
        }
    iter *it = merger_new(its, n);
    free(its);
    s = collect_input_rdels(cs);
    if (s == ENG_OK) s = compact_loop(cs, it);
    iter_free(it);
    int any_kept = 0;
    rdel_cursor cur;
    for (const rdel *r = rdel_set_first(cs->rdels, &cur); r; r = rdel_next(&cur))
        any_kept |= r->keep;
    if (s == ENG_OK && !cs->b && cs->nout == 0 && any_kept) s = open_output(cs);
    if (s == ENG_OK && cs->b) s = finish_output(cs, NULL);
    if (cs->b) sst_builder_abandon(cs->b);
    cs->b = NULL;
    return s;
}

/* Deletes the outputs of a failed or discarded run. REQUIRES: mu. */
static void discard_outputs(eng_db *db, cstate *cs)
{
    for (int i = 0; i < cs->nout; i++) {
        char path[PATH_MAX];
        db_filename(path, db->dir, cs->out[i]->number, "sst");
        env_unlink(path);
        file_unref(cs->out[i]);
    }
    cs->nout = 0;
    cs->bytes_out = 0;
    cs->filtered = 0;
    cs->lo.len = 0;
    cs->has_lo = 0;
    rdel_set_unref(cs->rdels);
    cs->rdels = NULL;
}

/* Merges the inputs into new tables. C4 must not touch a version that a
 * snapshot created during the run can see (the run read the snapshot bounds
 * at its start), so a run that applied the filter while a snapshot was
 * created is discarded and redone once without the filter, which always
 * makes progress. REQUIRES: mu; drops it while working. */
static eng_status merge_inputs(eng_db *db, cstate *cs)
{
    cs->use_filter = db->opts.compaction_filter != NULL;
    for (;;) {
        cs->oldest_snap = db_oldest_snapshot(db);
        cs->newest_snap = db_newest_snapshot(db);
        cs->has_snap = db->snapshots.next != &db->snapshots;
        cs->epoch = db->snap_epoch;
        pthread_mutex_unlock(&db->mu);
        eng_status s = do_compaction_work(cs);
        pthread_mutex_lock(&db->mu);
        if (s != ENG_OK || !cs->filtered) return s;
        if (db->snap_epoch == cs->epoch) {
            /* Until the result is installed, a new snapshot would still see
             * the versions C4 removed: hold new snapshots back. */
            db->snap_barrier = 1;
            return s;
        }
        discard_outputs(db, cs);
        cs->use_filter = 0;
    }
}

/* Runs c and installs the result. REQUIRES: mu; drops it while working. */
static eng_status run_compaction(eng_db *db, compaction *c)
{
    int L = c->out_level - 1;
    version_edit e;
    edit_init(&e);
    uint64_t in_bytes = 0;
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < c->n[l]; i++) {
            edit_delete_file(&e, l, c->in[l][i]->number);
            in_bytes += c->in[l][i]->file_size;
        }
    if (!c->manual && c->n[L] == 1 && c->n[L + 1] == 0 && (L > 0 || c->v->nfiles[0] == 1)) {
        file_ref(c->in[L][0]); /* a trivial move: only the manifest changes */
        edit_add_file(&e, L + 1, c->in[L][0]);
        eng_status s = db_log_and_apply(db, &e, 0);
        edit_clear(&e);
        return s;
    }
    cstate cs;
    memset(&cs, 0, sizeof(cs));
    cs.db = db;
    cs.c = c;
    cs.bottom = 1;
    for (int l = c->out_level + 1; l < ENG_MAX_LEVELS; l++)
        if (c->v->nfiles[l]) cs.bottom = 0;
    eng_status s = merge_inputs(db, &cs);
    if (s != ENG_OK) discard_outputs(db, &cs);
    for (int i = 0; i < cs.nout; i++)
        edit_add_file(&e, c->out_level, cs.out[i]);
    if (s == ENG_OK) s = db_log_and_apply(db, &e, 0);
    if (db->snap_barrier) {
        db->snap_barrier = 0;
        pthread_cond_broadcast(&db->bg_cv);
    }
    if (s == ENG_OK) {
        db->st.compactions++;
        db->st.bytes_read_compaction += in_bytes;
        db->st.bytes_written_compaction += cs.bytes_out;
    }
    edit_clear(&e);
    free(cs.out);
    rdel_set_unref(cs.rdels);
    buf_free(&cs.lo);
    return s;
}

/* D6: a failed compaction changes nothing and is retried after a delay;
 * one that succeeds ends the fault. */
static void note_result(eng_db *db, eng_status s)
{
    if (db->shutting_down) return;
    if (s == ENG_OK) {
        db->compact_delay = 0;
        db_fault_clear(db, &db->compact_fault, "compaction");
        return;
    }
    db->st.background_errors++;
    db_fault_note(db, &db->compact_fault, "compaction", s);
    db_fault_backoff(db, &db->compact_retry_at, &db->compact_delay);
}

/* run_compaction, counted in st.compactions_running while it runs (so a
 * caller can wait for the engine to be at rest). REQUIRES: mu. */
static eng_status run_counted(eng_db *db, compaction *c)
{
    db->st.compactions_running++;
    eng_status s = run_compaction(db, c);
    db->st.compactions_running--;
    return s;
}

void *db_compact_thread(void *arg)
{
    eng_db *db = arg;
    pthread_mutex_lock(&db->mu);
    while (!db->shutting_down) {
        compaction *c = NULL;
        if (db->manual && !db->manual->done) {
            manual_compaction *m = db->manual;
            m->st = db->bg_error;
            if (m->st == ENG_OK) c = pick_manual(db, m->lo, m->hi);
            if (c) m->st = run_counted(db, c);
            compaction_free(c);
            if (c) note_result(db, m->st);
            m->done = 1;
            pthread_cond_broadcast(&db->bg_cv);
            continue;
        }
        uint64_t now = env_now_micros();
        if (db->bg_error == ENG_OK && db->compact_retry_at <= now && (c = pick_auto(db)) != NULL) {
            eng_status s = run_counted(db, c);
            compaction_free(c);
            note_result(db, s);
            pthread_cond_broadcast(&db->bg_cv);
            continue;
        }
        /* work, or the retry still ahead (D6) */
        db_wait(&db->compact_cv, &db->mu, db->compact_retry_at > now ? db->compact_retry_at : 0);
    }
    pthread_mutex_unlock(&db->mu);
    return NULL;
}

eng_status eng_compact_range(eng_db *db, const char *start, size_t sl, const char *end, size_t el)
{
    eng_status s = eng_flush(db);
    if (s != ENG_OK) return s;
    slice lo = slice_make(start, sl), hi = slice_make(end, el);
    manual_compaction m = {start ? &lo : NULL, end ? &hi : NULL, 0, ENG_OK};
    pthread_mutex_lock(&db->mu);
    while (db->manual && !db->shutting_down)
        pthread_cond_wait(&db->bg_cv, &db->mu);
    db->manual = &m;
    pthread_cond_signal(&db->compact_cv);
    while (!m.done && !db->shutting_down)
        pthread_cond_wait(&db->bg_cv, &db->mu);
    db->manual = NULL;
    pthread_cond_broadcast(&db->bg_cv);
    s = m.done ? m.st : ENG_INVALID;
    pthread_mutex_unlock(&db->mu);
    return s;
}
