/*
 * version.c -- versions, file metadata, point lookups over tables and the
 * level (concatenating) iterator; see version.h for the invariants.
 */
#include "version.h"

#include "bloom.h"
#include "env.h"

#include <assert.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

file_meta *file_meta_new(version_set *vs)
{
    file_meta *f = calloc(1, sizeof(*f));
    if (!f) abort();
    f->refs = 1;
    f->vs = vs;
    return f;
}

void file_ref(file_meta *f)
{
    __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

void file_unref(file_meta *f)
{
    if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    version_set *vs = f->vs;
    if (f->reader) {
        if (vs)
            __atomic_add_fetch(&vs->bloom_useful_closed, sst_reader_bloom_useful(f->reader),
                               __ATOMIC_RELAXED);
        sst_reader_close(f->reader);
    }
    if (vs && f->in_version && __atomic_load_n(&vs->deletions_enabled, __ATOMIC_ACQUIRE)) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%06" PRIu64 ".sst", vs->dir, f->number);
        if (vs->cache) cache_erase_file(vs->cache, f->number);
        row_cache_erase_file(vs->row_cache, f->number);
        env_unlink(path);
    }
    buf_free(&f->smallest);
    buf_free(&f->largest);
    free(f);
}

eng_status version_table(file_meta *f, sst_reader **out)
{
    sst_reader *r = __atomic_load_n(&f->reader, __ATOMIC_ACQUIRE);
    if (r) {
        *out = r;
        return ENG_OK;
    }
    version_set *vs = f->vs;
    eng_status s = ENG_OK;
    pthread_mutex_lock(&vs->table_mu);
    r = f->reader;
    if (!r) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%06" PRIu64 ".sst", vs->dir, f->number);
        s = sst_reader_open(path, f->number, vs->cache, &r);
        if (s == ENG_OK && sst_reader_file_size(r) != f->file_size)
            s = env_error(ENG_CORRUPTION,
                          "table %s: %" PRIu64 " bytes, but the manifest recorded %" PRIu64
                          ": it is another file or was damaged",
                          path, sst_reader_file_size(r), f->file_size);
        if (s == ENG_OK) s = version_check_table(f, r); /* V5 */
        if (s == ENG_OK) {
            __atomic_store_n(&f->reader, r, __ATOMIC_RELEASE);
        } else if (r) {
            sst_reader_close(r);
            r = NULL;
        }
    }
    pthread_mutex_unlock(&vs->table_mu);
    *out = r;
    return s;
}

eng_status version_check_table(const file_meta *f, const sst_reader *r)
{
    sst_props p;
    sst_reader_props(r, &p);
    const char *what = NULL;
    uint64_t have = 0, want = 0;
    if (p.file_number && p.file_number != f->number)
        what = "file number", have = p.file_number, want = f->number;
    else if (p.entries != f->entries)
        what = "entry count", have = p.entries, want = f->entries;
    else if (p.range_deletions != f->range_dels)
        what = "range deletion count", have = p.range_deletions, want = f->range_dels;
    else if (p.largest_seq != f->largest_seq)
        what = "largest sequence", have = p.largest_seq, want = f->largest_seq;
    else if (p.smallest_seq != f->smallest_seq)
        what = "smallest sequence", have = p.smallest_seq, want = f->smallest_seq;
    if (!what) return ENG_OK;
    return env_error(ENG_CORRUPTION,
                     "table %s/%06" PRIu64 ".sst is not the table the manifest recorded: its %s "
                     "is %" PRIu64 ", the manifest says %" PRIu64,
                     f->vs ? f->vs->dir : ".", f->number, what, have, want);
}

void version_set_init(version_set *vs, const char *dir, const eng_options *opts, block_cache *cache)
{
    memset(vs, 0, sizeof(*vs));
    vs->dir = strdup(dir);
    if (!vs->dir) abort();
    vs->opts = opts;
    vs->cache = cache;
    pthread_mutex_init(&vs->table_mu, NULL);
    vs->next_file = 2;
}

void version_set_destroy(version_set *vs)
{
    __atomic_store_n(&vs->deletions_enabled, 0, __ATOMIC_RELEASE);
    if (vs->current) version_unref(vs->current);
    vs->current = NULL;
    if (vs->manifest) wal_writer_close(vs->manifest, 1);
    vs->manifest = NULL;
    for (int i = 0; i < ENG_MAX_LEVELS; i++)
        buf_free(&vs->compact_pointer[i]);
    free(vs->orphans);
    pthread_mutex_destroy(&vs->table_mu);
    free(vs->dir);
}

void version_ref(version *v)
{
    __atomic_add_fetch(&v->refs, 1, __ATOMIC_RELAXED);
}

void version_unref(version *v)
{
    if (!v || __atomic_sub_fetch(&v->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    for (int l = 0; l < ENG_MAX_LEVELS; l++) {
        for (int i = 0; i < v->nfiles[l]; i++)
            file_unref(v->files[l][i]);
        free(v->files[l]);
    }
    rdel_set_unref(v->rdels);
    free(v);
}

static int cmp_l0(const void *a, const void *b)
{
    const file_meta *x = *(file_meta *const *)a, *y = *(file_meta *const *)b;
    if (x->largest_seq != y->largest_seq) return x->largest_seq > y->largest_seq ? -1 : 1;
    return x->number > y->number ? -1 : x->number < y->number ? 1 : 0;
}

static int cmp_by_smallest(const void *a, const void *b)
{
    const file_meta *x = *(file_meta *const *)a, *y = *(file_meta *const *)b;
    return ikey_compare(slice_make(x->smallest.data, x->smallest.len),
                        slice_make(y->smallest.data, y->smallest.len));
}

static int edit_deletes(const version_edit *e, int level, uint64_t number)
{
    for (int i = 0; i < e->ndeleted; i++)
        if (e->deleted[i].level == level && e->deleted[i].number == number) return 1;
    return 0;
}

uint64_t version_level_target(const eng_options *o, int level)
{
    uint64_t t = o->max_bytes_level_base;
    for (int l = 1; l < level; l++)
        t *= (uint64_t)(o->level_size_multiplier > 1 ? o->level_size_multiplier : 10);
    return t;
}

/* Scores decide which level the compaction thread works on next. */
static void version_finalize(version *v, const eng_options *o)
{
    v->score = 0;
    v->score_level = -1;
    for (int l = 0; l < ENG_MAX_LEVELS - 1; l++) {
        double s;
        if (l == 0)
            s = (double)v->nfiles[0] /
                (double)(o->l0_compaction_trigger > 0 ? o->l0_compaction_trigger : 4);
        else
            s = (double)v->level_bytes[l] / (double)version_level_target(o, l);
        if (s > v->score) {
            v->score = s;
            v->score_level = l;
        }
    }
}

/* Debug checker of Invariants V1 and V2 (compiled out with NDEBUG). */
static void version_check(const version *v)
{
#ifndef NDEBUG
    for (int i = 1; i < v->nfiles[0]; i++)
        assert(v->files[0][i - 1]->largest_seq >= v->files[0][i]->largest_seq);
    for (int l = 1; l < ENG_MAX_LEVELS; l++)
        for (int i = 1; i < v->nfiles[l]; i++) {
            const file_meta *a = v->files[l][i - 1], *b = v->files[l][i];
            slice al = slice_make(a->largest.data, a->largest.len);
            slice bs = slice_make(b->smallest.data, b->smallest.len);
            assert(ikey_compare(al, bs) < 0);
            /* One user key never spans two files, except where a tombstone
             * ends (its end key carries the maximum sequence). */
            assert(slice_compare(ikey_user_key(al), ikey_user_key(bs)) < 0 ||
                   ikey_sequence(al) == ENG_MAX_SEQUENCE);
        }
#else
    (void)v;
#endif
}

static void collect_rdel(void *ctx, slice start, slice end, uint64_t seq)
{
    rdel_set_add(ctx, start, end, seq);
}

static eng_status version_collect_rdels(version *v)
{
    for (int l = 0; l < ENG_MAX_LEVELS; l++) {
        for (int i = 0; i < v->nfiles[l]; i++) {
            file_meta *f = v->files[l][i];
            if (!f->range_dels) continue;
            sst_reader *r;
            eng_status s = version_table(f, &r);
            if (s != ENG_OK) return s;
            if (!v->rdels) v->rdels = rdel_set_new();
            sst_reader_range_dels(r, collect_rdel, v->rdels);
        }
    }
    return ENG_OK;
}

eng_status version_apply(version_set *vs, const version *base, const version_edit *e,
                         int load_rdels, version **out)
{
    version *v = calloc(1, sizeof(*v));
    if (!v) abort();
    v->refs = 1;
    v->vs = vs;
    for (int l = 0; l < ENG_MAX_LEVELS; l++) {
        int cap = (base ? base->nfiles[l] : 0);
        for (int i = 0; i < e->nadded; i++)
            cap += e->added[i].level == l;
        v->files[l] = malloc(sizeof(file_meta *) * (size_t)(cap ? cap : 1));
        if (!v->files[l]) abort();
        for (int i = 0; base && i < base->nfiles[l]; i++) {
            file_meta *f = base->files[l][i];
            if (edit_deletes(e, l, f->number)) continue;
            v->files[l][v->nfiles[l]++] = f;
        }
        for (int i = 0; i < e->nadded; i++) {
            if (e->added[i].level != l) continue;
            file_meta *f = e->added[i].f;
            if (!f->vs) f->vs = vs;
            v->files[l][v->nfiles[l]++] = f;
        }
        for (int i = 0; i < v->nfiles[l]; i++) {
            file_ref(v->files[l][i]);
            v->files[l][i]->in_version = 1;
            v->level_bytes[l] += v->files[l][i]->file_size;
        }
        qsort(v->files[l], (size_t)v->nfiles[l], sizeof(file_meta *),
              l == 0 ? cmp_l0 : cmp_by_smallest);
    }
    version_finalize(v, vs->opts);
    version_check(v);
    eng_status s = load_rdels ? version_collect_rdels(v) : ENG_OK;
    if (s != ENG_OK) {
        version_unref(v);
        return s;
    }
    *out = v;
    return ENG_OK;
}

static inline slice fm_small(const file_meta *f)
{
    return slice_make(f->smallest.data, f->smallest.len);
}
static inline slice fm_large(const file_meta *f)
{
    return slice_make(f->largest.data, f->largest.len);
}

/* Compares internal key a with (ukey, trailer) without building the latter. */
static int cmp_ikey_parts(slice a, slice ukey, uint64_t trailer)
{
    int r = slice_compare(ikey_user_key(a), ukey);
    if (r) return r;
    uint64_t ta = ikey_trailer(a);
    return ta > trailer ? -1 : ta < trailer ? 1 : 0;
}

/* Index of the first file whose largest key >= (ukey, trailer), or n (V2). */
int version_find_file(file_meta *const *files, int n, slice ukey, uint64_t trailer)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cmp_ikey_parts(fm_large(files[mid]), ukey, trailer) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The lookup in one table; hash is bloom_hash(key). The bloom filter comes
 * first because it is cheaper than a row cache probe and rejects most
 * tables, so the cache holds ROW_ABSENT only for its false positives. */
static eng_status table_get(file_meta *f, slice key, uint64_t hash, uint64_t seq, int *type,
                            uint64_t *fseq, char **val, size_t *vlen)
{
    sst_reader *r;
    eng_status s = version_table(f, &r);
    if (s != ENG_OK) return s;
    if (!sst_reader_may_match(r, key, hash)) return ENG_NOTFOUND;
    row_cache *rc = f->vs ? f->vs->row_cache : NULL;
    if (row_cache_get(rc, f->number, hash, key, seq, type, fseq, val, vlen)) /* RC2 */
        return *type == ROW_ABSENT ? ENG_NOTFOUND : ENG_OK;
    s = sst_reader_get_located(r, key, hash, seq, type, fseq, val, vlen);
    if (rc && seq >= f->largest_seq) { /* RC1: the answer is the table's newest */
        if (s == ENG_OK)
            row_cache_put(rc, f->number, hash, key, *type, *fseq, slice_make(*val, *vlen));
        else if (s == ENG_NOTFOUND)
            row_cache_put(rc, f->number, hash, key, ROW_ABSENT, 0, slice_make(NULL, 0));
    }
    return s;
}

eng_status version_get(version *v, slice key, uint64_t seq, int *type, uint64_t *found_seq,
                       char **val, size_t *vlen)
{
    uint64_t hash = bloom_hash(key);
    /* V1: level 0 newest first; the first file holding the key wins. */
    for (int i = 0; i < v->nfiles[0]; i++) {
        file_meta *f = v->files[0][i];
        if (slice_compare(key, ikey_user_key(fm_small(f))) < 0 ||
            slice_compare(key, ikey_user_key(fm_large(f))) > 0)
            continue;
        eng_status s = table_get(f, key, hash, seq, type, found_seq, val, vlen);
        if (s != ENG_NOTFOUND) return s;
    }
    uint64_t trailer = ikey_pack_trailer(seq, ENG_TYPE_SEEK);
    for (int l = 1; l < ENG_MAX_LEVELS; l++) {
        int n = v->nfiles[l];
        if (!n) continue;
        int i = version_find_file(v->files[l], n, key, trailer);
        if (i >= n) continue;
        file_meta *f = v->files[l][i];
        if (slice_compare(key, ikey_user_key(fm_small(f))) < 0) continue;
        eng_status s = table_get(f, key, hash, seq, type, found_seq, val, vlen);
        if (s != ENG_NOTFOUND) return s;
    }
    return ENG_NOTFOUND;
}

/* ---- Level iterator ---------------------------------------------------- */

typedef struct level_iter {
    iter base;
    file_meta **files;
    sst_damage_log *dl; /* handed to each file's iterator (T3) */
    int n;
    int idx;    /* file of data, or -1 */
    iter *data; /* NULL when unpositioned */
    int fill_cache;
    eng_status st; /* first error: the iterator then stays invalid */
} level_iter;

static void li_set_file(level_iter *li, int idx)
{
    if (li->data && li->idx == idx) return;
    iter_free(li->data);
    li->data = NULL;
    li->idx = idx;
    if (idx < 0 || idx >= li->n) return;
    sst_reader *r;
    eng_status s = version_table(li->files[idx], &r);
    if (s != ENG_OK) {
        li->st = s;
        return;
    }
    li->data = sst_reader_iter_damage(r, li->fill_cache, li->dl);
}

/* Returns 1 if the data iterator failed (recording the error). */
static int li_failed(level_iter *li)
{
    if (li->st != ENG_OK) return 1;
    if (li->data && !iter_valid(li->data) && iter_status(li->data) != ENG_OK) {
        li->st = iter_status(li->data);
        return 1;
    }
    return 0;
}

static void li_skip_forward(level_iter *li)
{
    while (!li_failed(li) && li->data && !iter_valid(li->data)) {
        if (li->idx + 1 >= li->n) {
            iter_free(li->data);
            li->data = NULL;
            return;
        }
        li_set_file(li, li->idx + 1);
        if (li->data) iter_seek_first(li->data);
    }
}

static void li_skip_backward(level_iter *li)
{
    while (!li_failed(li) && li->data && !iter_valid(li->data)) {
        if (li->idx <= 0) {
            iter_free(li->data);
            li->data = NULL;
            return;
        }
        li_set_file(li, li->idx - 1);
        if (li->data) iter_seek_last(li->data);
    }
}

static int li_valid(const iter *it)
{
    const level_iter *li = (const level_iter *)it;
    return li->st == ENG_OK && li->data && iter_valid(li->data);
}

static void li_seek_first(iter *it)
{
    level_iter *li = (level_iter *)it;
    if (li->st != ENG_OK) return;
    li_set_file(li, 0);
    if (li->data) iter_seek_first(li->data);
    li_skip_forward(li);
}

static void li_seek_last(iter *it)
{
    level_iter *li = (level_iter *)it;
    if (li->st != ENG_OK) return;
    li_set_file(li, li->n - 1);
    if (li->data) iter_seek_last(li->data);
    li_skip_backward(li);
}

static void li_seek(iter *it, slice target)
{
    level_iter *li = (level_iter *)it;
    if (li->st != ENG_OK) return;
    int i = version_find_file(li->files, li->n, ikey_user_key(target), ikey_trailer(target));
    if (i >= li->n) {
        iter_free(li->data);
        li->data = NULL;
        return;
    }
    li_set_file(li, i);
    if (li->data) iter_seek(li->data, target);
    li_skip_forward(li);
}

/* A step that stays inside the file needs no more than the one check: a
 * valid data iterator has no error to record (li_failed). */
static void li_next(iter *it)
{
    level_iter *li = (level_iter *)it;
    iter_next(li->data);
    if (!iter_valid(li->data)) li_skip_forward(li);
}

static void li_prev(iter *it)
{
    level_iter *li = (level_iter *)it;
    iter_prev(li->data);
    if (!iter_valid(li->data)) li_skip_backward(li);
}

static int li_next_key(iter *it, slice *key)
{
    level_iter *li = (level_iter *)it;
    if (iter_next_key(li->data, key)) return 1;
    li_skip_forward(li);
    if (!li_valid(it)) return 0;
    *key = iter_key(li->data);
    return 1;
}

/* G4 (merger.c): the current file's leaf; running off it moves on
 * through that file, then the next ones, as li_next_key. */
static struct block_iter *li_leaf(iter *it)
{
    level_iter *li = (level_iter *)it;
    return li->data->ops->leaf ? li->data->ops->leaf(li->data) : NULL;
}

static int li_leaf_end(iter *it, slice *key)
{
    level_iter *li = (level_iter *)it;
    if (li->data->ops->leaf_end(li->data, key)) return 1;
    li_skip_forward(li);
    if (!li_valid(it)) return 0;
    *key = iter_key(li->data);
    return 1;
}

static slice li_key(const iter *it)
{
    return iter_key(((const level_iter *)it)->data);
}
static slice li_value(const iter *it)
{
    return iter_value(((const level_iter *)it)->data);
}
static eng_status li_status(const iter *it)
{
    return ((const level_iter *)it)->st;
}

static void li_destroy(iter *it)
{
    level_iter *li = (level_iter *)it;
    iter_free(li->data);
    free(li->files);
    free(li);
}

static const struct iter_ops level_iter_ops = {
    li_valid, li_seek_first, li_seek_last, li_seek,     li_next, li_prev,     li_key,
    li_value, li_status,     li_destroy,   li_next_key, li_leaf, li_leaf_end,
};

iter *level_iter_new(file_meta *const *files, int n, int fill_cache, sst_damage_log *dl)
{
    level_iter *li = calloc(1, sizeof(*li));
    if (li) li->dl = dl;
    if (!li) abort();
    li->base.ops = &level_iter_ops;
    li->files = malloc(sizeof(file_meta *) * (size_t)(n ? n : 1));
    if (!li->files) abort();
    memcpy(li->files, files, sizeof(file_meta *) * (size_t)n);
    li->n = n;
    li->idx = -1;
    li->fill_cache = fill_cache;
    return &li->base;
}

int version_add_iters(version *v, iter **its, uint64_t *max_seq, int n, int fill_cache,
                      sst_damage_log *dl)
{
    for (int i = 0; i < v->nfiles[0]; i++) {
        sst_reader *r;
        eng_status s = version_table(v->files[0][i], &r);
        if (max_seq) max_seq[n] = v->files[0][i]->largest_seq;
        its[n++] = s == ENG_OK ? sst_reader_iter_damage(r, fill_cache, dl) : iter_new_error(s);
    }
    for (int l = 1; l < ENG_MAX_LEVELS; l++) {
        if (!v->nfiles[l]) continue;
        uint64_t m = 0;
        for (int i = 0; i < v->nfiles[l]; i++)
            if (v->files[l][i]->largest_seq > m) m = v->files[l][i]->largest_seq;
        if (max_seq) max_seq[n] = m;
        its[n++] = level_iter_new(v->files[l], v->nfiles[l], fill_cache, dl);
    }
    return n;
}

static int file_meets(const file_meta *f, const slice *lo, const slice *hi)
{
    if (lo && slice_compare(ikey_user_key(fm_large(f)), *lo) < 0) return 0;
    if (hi && slice_compare(ikey_user_key(fm_small(f)), *hi) > 0) return 0;
    return 1;
}

int version_overlapping(const version *v, int level, const slice *lo, const slice *hi,
                        file_meta ***out)
{
    int n = 0;
    file_meta **r = malloc(sizeof(file_meta *) * (size_t)(v->nfiles[level] + 1));
    if (!r) abort();
    for (int i = 0; i < v->nfiles[level]; i++)
        if (file_meets(v->files[level][i], lo, hi)) r[n++] = v->files[level][i];
    *out = r;
    return n;
}

int version_deeper_overlap(const version *v, int level, slice lo, slice hi)
{
    for (int l = level + 1; l < ENG_MAX_LEVELS; l++) {
        int n = v->nfiles[l];
        if (!n) continue;
        /* V2: the first file whose largest user key >= lo is the only candidate start. */
        int i = version_find_file(v->files[l], n, lo,
                                  ikey_pack_trailer(ENG_MAX_SEQUENCE, ENG_TYPE_SEEK));
        if (i < n && slice_compare(ikey_user_key(fm_small(v->files[l][i])), hi) <= 0) return 1;
    }
    return 0;
}

uint64_t version_bloom_useful(const version *v)
{
    uint64_t n = __atomic_load_n(&v->vs->bloom_useful_closed, __ATOMIC_RELAXED);
    for (int l = 0; l < ENG_MAX_LEVELS; l++)
        for (int i = 0; i < v->nfiles[l]; i++) {
            sst_reader *r = __atomic_load_n(&v->files[l][i]->reader, __ATOMIC_ACQUIRE);
            if (r) n += sst_reader_bloom_useful(r);
        }
    return n;
}
