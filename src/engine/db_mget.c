/*
 * db_mget.c -- eng_multi_get (engine.h): n point lookups at one view.
 *
 * The answers are those of n eng_get_batch calls (db_read.c): the batch's
 * pending writes shadow the db; then the memtables newest first; then the
 * tables (version_get's order, V1-V3), each table through its bloom filter
 * and the row cache (RC1-RC3, as table_get); a range tombstone with a
 * higher sequence hides a point entry (R1). What differs is how:
 *
 *  1. the superversion is pinned once for all keys (one db->mu round);
 *  2. each stage starts every key's first cache miss before it needs any
 *     (memtable index slots; per table the filter lines, then the row
 *     cache's doorkeeper word and bucket slot, its chain entry and its
 *     row, one pass over the keys for each; then, for the keys the row
 *     cache lacks, the data block's cache entry and the probes of its
 *     restart search, a load per key per pass: locate), so the misses of
 *     independent keys overlap instead of following each other;
 *  3. the keys the memtables do not answer are sorted (sort_pend), so the deeper
 *     levels are walked file by file in order and keys that share a data
 *     block find it pinned by the key before them (sst_reader_get_pinned);
 *  4. values are never copied: memtable values live in the pinned
 *     memtables, table values in pinned blocks, row cache answers in
 *     pinned rows (row_cache_get_pinned), all released by the next call;
 *  5. a key read from a block its neighbour in the batch already pinned
 *     is not put in the row cache (table_lookup);
 *  6. the data blocks the lookups will miss in the block cache are handed
 *     to the readahead thread (opts.readahead) before the first lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "bloom.h"
#include "db_impl.h"
#include "write_batch.h"

typedef struct mg_item {
    eng_status st; /* ENG_NOTFOUND until answered */
    int done;
    int maybe;      /* file_stage: the table's filter may hold the key */
    row_pin *probe; /* file_stage: the row cache's row, not yet checked */
    const char *v;
    size_t vl;
    uint64_t hash; /* bloom_hash of the key */
    slice key;
} mg_item;

struct eng_mget {
    size_t n, cap;
    mg_item *it;
    size_t *pend; /* indexes of the keys the tables must answer, in key order */
    size_t *tmp;  /* room for n indexes: sort_pend's merge buffer */
    size_t npend;
    superversion *sv;
    sst_pins pins;
    row_cache *rc;   /* the row cache the pins below belong to */
    row_pin **owned; /* row cache rows handed out */
    size_t nowned, owned_cap;
    char **copies; /* values found in the batch's point index, copied: the batch's own
                      encoding moves as it grows */
    size_t ncopies, copies_cap;
    const mem_scan_only *so; /* the db's scan-only prefixes, for batch_point_get */
    eng_db *db;              /* for its readahead thread */
};

eng_mget *eng_mget_new(void)
{
    return calloc(1, sizeof(eng_mget));
}

/* Drops what the previous call pinned or owned. */
static void mget_release(eng_mget *m)
{
    sst_pins_release(&m->pins);
    for (size_t i = 0; i < m->nowned; i++)
        row_cache_unpin(m->rc, m->owned[i]);
    m->nowned = 0;
    for (size_t i = 0; i < m->ncopies; i++)
        free(m->copies[i]);
    m->ncopies = 0;
    if (m->sv) sv_unref(m->sv);
    m->sv = NULL;
    m->n = m->npend = 0;
}

void eng_mget_release(eng_mget *m)
{
    if (m) mget_release(m);
}

void eng_mget_free(eng_mget *m)
{
    if (!m) return;
    mget_release(m);
    sst_pins_free(&m->pins);
    free(m->it);
    free(m->pend);
    free(m->tmp);
    free(m->owned);
    free(m->copies);
    free(m);
}

eng_status eng_mget_value(const eng_mget *m, size_t i, const char **val, size_t *vlen)
{
    const mg_item *x = &m->it[i];
    if (x->st == ENG_OK) {
        *val = x->v ? x->v : "";
        *vlen = x->vl;
    }
    return x->st;
}

static int own(eng_mget *m, row_cache *rc, row_pin *p)
{
    m->rc = rc; /* one row cache per db (its version set) */
    if (m->nowned == m->owned_cap) {
        size_t cap = m->owned_cap ? 2 * m->owned_cap : 16;
        row_pin **o = realloc(m->owned, cap * sizeof(*o));
        if (!o) return -1;
        m->owned = o;
        m->owned_cap = cap;
    }
    m->owned[m->nowned++] = p;
    return 0;
}

static void answer(mg_item *x, eng_status st, const char *v, size_t vl)
{
    x->st = st;
    x->v = v;
    x->vl = vl;
    x->done = 1;
}

/* A point entry found at fseq (type, value): visible unless a range
 * tombstone of the view hides it. */
static void found(eng_mget *m, mg_item *x, int type, uint64_t fseq, uint64_t seq, const char *v,
                  size_t vl)
{
    superversion *sv = m->sv;
    int hidden =
        type != ENG_TYPE_VALUE || (sv->rd.n && rdel_view_covers(&sv->rd, x->key, fseq, seq));
    answer(x, hidden ? ENG_NOTFOUND : ENG_OK, v, vl);
}

/* x's answer from the batch's point index (write_batch.h): 1 when the
 * batch has an op on the key (x answered, a value copied into m), 0 when
 * not, -1 when the point index cannot answer. */
static int batch_point_stage(eng_mget *m, const eng_batch *pb, mg_item *x)
{
    int type;
    slice v;
    int pr = batch_point_get(pb, m->so, x->key, &type, &v);
    if (pr != 1) return pr;
    if (type != ENG_TYPE_VALUE) {
        answer(x, ENG_NOTFOUND, NULL, 0);
        return 1;
    }
    if (m->ncopies == m->copies_cap) {
        size_t cap = m->copies_cap ? 2 * m->copies_cap : 16;
        char **cs = realloc(m->copies, cap * sizeof(*cs));
        if (!cs) {
            answer(x, ENG_NOMEM, NULL, 0);
            return 1;
        }
        m->copies = cs;
        m->copies_cap = cap;
    }
    char *c = malloc(v.size ? v.size : 1);
    if (!c) {
        answer(x, ENG_NOMEM, NULL, 0);
        return 1;
    }
    memcpy(c, v.data, v.size);
    m->copies[m->ncopies++] = c;
    answer(x, ENG_OK, c, v.size);
    return 1;
}

/* The batch, then the memtables: answers what they hold. A batch without
 * range deletions answers through its point index (pb), which costs a hash
 * probe per key where its memtable (*bm, built by batch_index) costs an
 * insert per op it holds -- a write group's batch holds the ops of the
 * commands before this one; when the point index cannot answer, *bm and
 * *brd are built here (the caller drops *brd). */
static void memtable_stage(eng_mget *m, const eng_batch *pb, memtable **bm, rdel_set **brd,
                           uint64_t seq)
{
    superversion *sv = m->sv;
    for (size_t i = 0; i < m->n; i++) {
        uint64_t h = mem_key_hash(m->it[i].key);
        m->it[i].hash = h; /* the same XXH3 as bloom_hash */
        if (*bm) mem_prefetch(*bm, h);
        mem_prefetch(sv->mem, h);
    }
    for (size_t i = 0; i < m->n; i++) {
        mg_item *x = &m->it[i];
        int type;
        uint64_t fseq;
        slice v;
        if (pb) {
            int pr = batch_point_stage(m, pb, x);
            if (pr == 1) continue;
            if (pr < 0) {
                *bm = batch_index(pb);
                *brd = batch_rdels(pb);
                pb = NULL;
            }
        }
        memtable *b = *bm;
        rdel_set *rd = *brd;
        if (b && mem_get_hashed(b, x->key, x->hash, ENG_MAX_SEQUENCE, &type, &fseq, &v)) {
            /* a pending write shadows the db, unless a pending range delete
             * above it hides it too */
            int hidden = rd && rdel_set_covers(rd, x->key, fseq, ENG_MAX_SEQUENCE);
            answer(x, !hidden && type == ENG_TYPE_VALUE ? ENG_OK : ENG_NOTFOUND, v.data, v.size);
            continue;
        }
        if (rd && rdel_set_covers(rd, x->key, 0, ENG_MAX_SEQUENCE)) {
            answer(x, ENG_NOTFOUND, NULL, 0); /* hides every committed version */
            continue;
        }
        int hit = mem_get_hashed(sv->mem, x->key, x->hash, seq, &type, &fseq, &v);
        for (int j = 0; !hit && j < sv->nimm; j++)
            hit = mem_get_hashed(sv->imm[j], x->key, x->hash, seq, &type, &fseq, &v);
        if (hit) found(m, x, type, fseq, seq, v.data, v.size);
    }
}

/* Sorts pend[0..npend) by key (tmp: room for npend): a natural merge sort.
 * The keys usually come from an index walk, in an order close to key
 * order (IDX.RANGE hits by user_id: one ascending run per length of the
 * decimal id), so finding the runs and merging them costs about n
 * comparisons per merge round where qsort_r paid n log n calls of a
 * comparison function. Keys in no such order (more than 8 runs) go to
 * qsort_r, which then does fewer comparisons than the rounds would. */
/* The end of the ascending run of keys that starts at pend[a]. */
static size_t run_end(const mg_item *it, const size_t *pend, size_t a, size_t n)
{
    size_t b = a + 1;
    while (b < n && slice_compare(it[pend[b - 1]].key, it[pend[b]].key) <= 0)
        b++;
    return b;
}

static int pend_cmp(const void *a, const void *b, void *items)
{
    const mg_item *it = items;
    return slice_compare(it[*(const size_t *)a].key, it[*(const size_t *)b].key);
}

static void sort_pend(mg_item *it, size_t *pend, size_t *tmp, size_t n)
{
    size_t runs = 0;
    for (size_t a = 0; a < n && runs <= 8; runs++)
        a = run_end(it, pend, a, n);
    if (runs > 8) { /* no order to use (top reputation: keys by score) */
        qsort_r(pend, n, sizeof(*pend), pend_cmp, it);
        return;
    }
    while (n > 1 && run_end(it, pend, 0, n) < n) {
        size_t out = 0;
        for (size_t a = 0; a < n;) { /* merge the runs [a, b) and [b, c) */
            size_t b = run_end(it, pend, a, n), c = b < n ? run_end(it, pend, b, n) : n;
            size_t i = a, j = b;
            while (i < b && j < c)
                tmp[out++] =
                    slice_compare(it[pend[j]].key, it[pend[i]].key) < 0 ? pend[j++] : pend[i++];
            while (i < b)
                tmp[out++] = pend[i++];
            while (j < c)
                tmp[out++] = pend[j++];
            a = c;
        }
        memcpy(pend, tmp, n * sizeof(*pend));
    }
}

/* One table's answer for x, whose filter may match (table_get's order:
 * filter, row cache, table), with x->probe the row cache's row for it
 * (row_cache_probe, consumed here). Returns 1 when the table has an entry
 * for the key (x is answered). */
static int table_lookup(eng_mget *m, file_meta *f, sst_reader *r, mg_item *x, uint64_t seq)
{
    row_cache *rc = f->vs ? f->vs->row_cache : NULL;
    int type;
    uint64_t fseq;
    const char *rv = NULL;
    size_t rl = 0;
    row_pin *pin = x->probe;
    x->probe = NULL;
    if (row_cache_answer(rc, pin, x->key, seq, &type, &fseq, &rv, &rl)) { /* RC2 */
        if (type == ROW_ABSENT) {
            row_cache_unpin(rc, pin);
            return 0;
        }
        if (own(m, rc, pin)) {
            row_cache_unpin(rc, pin);
            answer(x, ENG_NOMEM, NULL, 0);
            return 1;
        }
        found(m, x, type, fseq, seq, rv, rl);
        return 1;
    }
    slice v = {NULL, 0};
    fseq = 0;
    size_t npins = m->pins.n;
    eng_status s = sst_reader_get_pinned(r, x->key, x->hash, seq, &m->pins, &type, &fseq, &v);
    /* RC1. Only a lookup that had to fetch its block fills the row cache:
     * a key found in the block its neighbour pinned is read there again at
     * the cost of a block search, not of the misses the row cache saves,
     * and a run of neighbours (a created-at query's 100 consecutive ids)
     * would insert a row each, pushing hot rows out. */
    int fetched = m->pins.n != npins;
    if (rc && fetched && seq >= f->largest_seq && (s == ENG_OK || s == ENG_NOTFOUND))
        row_cache_put(rc, f->number, x->hash, x->key, s == ENG_OK ? type : ROW_ABSENT, fseq, v);
    if (s == ENG_NOTFOUND) return 0;
    if (s != ENG_OK)
        answer(x, s, NULL, 0);
    else
        found(m, x, type, fseq, seq, v.data, v.size);
    return 1;
}

/* Keys whose lookahead searches run together, at most: the hints they
 * leave (sst_hint_take) must not push each other out. */
#define MG_LOCATE_MAX 16

/* For the keys of pend[from, to) that r must search (its filter may hold
 * them and the row cache has no row), the index search, the data block's
 * cache entry and the restart search (sst_lookahead), a load per key per
 * pass so that the keys' misses overlap; table_lookup then starts from
 * what they found. A key the pin before it covers wastes an index search
 * here. A data block not in the cache goes to the readahead thread
 * (db_readahead.c), the keys' blocks in key order, so that it loads the
 * last keys' blocks while table_lookup reads the first ones. */
static void locate(eng_db *db, file_meta *f, const sst_reader *r, const mg_item *it,
                   const size_t *pend, size_t from, size_t to)
{
    sst_lookahead la[MG_LOCATE_MAX];
    ra_job jobs[MG_LOCATE_MAX];
    while (from < to) {
        const mg_item *x[MG_LOCATE_MAX];
        size_t n = 0, started = 0;
        for (; from < to && n < MG_LOCATE_MAX; from++)
            if (it[pend[from]].maybe && !it[pend[from]].probe) x[n++] = &it[pend[from]];
        if (n < 2) continue; /* one key alone has nothing to overlap */
        for (size_t i = 0; i < n; i++) {
            /* A key up to the last block's index entry is in that block,
             * which its lookup finds pinned (the keys are sorted). */
            const sst_lookahead *p = started ? &la[started - 1] : NULL;
            if (p && p->seplen && slice_compare(x[i]->key, slice_make(p->sep, p->seplen)) <= 0)
                continue;
            started += (size_t)sst_lookahead_start(&la[started], r, x[i]->key, x[i]->hash);
        }
        for (int more = 1; more;) { /* each runs to its end: it holds its block till then */
            more = 0;
            for (size_t i = 0; i < started; i++)
                more |= sst_lookahead_step(&la[i]);
        }
        size_t nj = 0;
        for (size_t i = 0; i < started; i++)
            if (la[i].absent) jobs[nj++] = (ra_job){f, la[i].block_offset, la[i].block_size};
        db_readahead_add(db, nj, jobs);
    }
}

/* The keys of pend[] still open that table f may hold, in key order. Each
 * pass starts one cache miss of every key that the next pass needs: the
 * filter lines, then the row cache's slot, its entry and its row
 * (row_cache.h), then each key is answered. */
static void file_stage(eng_mget *m, file_meta *f, size_t from, size_t to, uint64_t seq)
{
    sst_reader *r;
    eng_status s = version_table(f, &r);
    if (s != ENG_OK) {
        for (size_t j = from; j < to; j++)
            if (!m->it[m->pend[j]].done) answer(&m->it[m->pend[j]], s, NULL, 0);
        return;
    }
    row_cache *rc = f->vs ? f->vs->row_cache : NULL;
    mg_item *it = m->it;
    const size_t *pend = m->pend;
    for (size_t j = from; j < to; j++)
        if (!it[pend[j]].done) sst_reader_prefetch_filter(r, it[pend[j]].hash);
    for (size_t j = from; j < to; j++) {
        mg_item *x = &it[pend[j]];
        x->maybe = !x->done && sst_reader_may_match(r, x->key, x->hash);
        if (x->maybe) row_cache_prefetch(rc, f->number, x->hash);
    }
    for (size_t j = from; j < to; j++)
        if (it[pend[j]].maybe) row_cache_prefetch_entry(rc, f->number, it[pend[j]].hash);
    for (size_t j = from; j < to; j++)
        if (it[pend[j]].maybe) it[pend[j]].probe = row_cache_probe(rc, f->number, it[pend[j]].hash);
    locate(m->db, f, r, it, pend, from, to);
    for (size_t j = from; j < to; j++)
        if (it[pend[j]].maybe) table_lookup(m, f, r, &it[pend[j]], seq);
}

/* The first index in pend[from, npend) whose key is >= k (pend is sorted). */
static size_t pend_lower(const eng_mget *m, size_t from, slice k)
{
    size_t lo = from, hi = m->npend;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (slice_compare(m->it[m->pend[mid]].key, k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static slice file_ukey(const buf *ikey)
{
    return ikey_user_key(slice_make(ikey->data, ikey->len));
}

/* The first index in pend[from, npend) past the keys <= f's largest. */
static size_t pend_end(const eng_mget *m, size_t from, const file_meta *f)
{
    slice hi = file_ukey(&f->largest);
    while (from < m->npend && slice_compare(m->it[m->pend[from]].key, hi) <= 0)
        from++;
    return from;
}

/* Level 0: every file may hold any key; newest first (V1). */
static void level0_stage(eng_mget *m, const version *v, uint64_t seq)
{
    for (int i = 0; i < v->nfiles[0]; i++) {
        file_meta *f = v->files[0][i];
        size_t from = pend_lower(m, 0, file_ukey(&f->smallest)), to = pend_end(m, from, f);
        if (from < to) file_stage(m, f, from, to, seq);
    }
}

/* A deeper level: disjoint sorted files (V2), so the sorted keys walk
 * them in order, one file search per run of keys that share a file. */
static void level_stage(eng_mget *m, const version *v, int l, uint64_t seq)
{
    file_meta *const *files = v->files[l];
    int nf = v->nfiles[l];
    uint64_t trailer = ikey_pack_trailer(seq, ENG_TYPE_SEEK);
    for (size_t j = 0; j < m->npend;) {
        slice k = m->it[m->pend[j]].key;
        int fi = version_find_file(files, nf, k, trailer);
        if (fi >= nf) break; /* this key and every later one lie past the level */
        if (slice_compare(k, file_ukey(&files[fi]->smallest)) < 0) {
            j++; /* in a gap between files */
            continue;
        }
        size_t to = pend_end(m, j, files[fi]);
        file_stage(m, files[fi], j, to, seq);
        j = to;
    }
}

/* The tables, level by level (V1-V3), for the keys still open. */
static void table_stage(eng_mget *m, uint64_t seq)
{
    version *v = m->sv->v;
    for (int l = 0; l < ENG_MAX_LEVELS && m->npend; l++) {
        if (l == 0)
            level0_stage(m, v, seq);
        else
            level_stage(m, v, l, seq);
        /* Keep only the keys still open for the next level. */
        size_t k = 0;
        for (size_t j = 0; j < m->npend; j++)
            if (!m->it[m->pend[j]].done) m->pend[k++] = m->pend[j];
        m->npend = k;
    }
}

static int reserve(eng_mget *m, size_t n)
{
    if (n <= m->cap) return 0;
    mg_item *it = realloc(m->it, n * sizeof(*it));
    if (it) m->it = it;
    size_t *pend = realloc(m->pend, n * sizeof(*pend));
    if (pend) m->pend = pend;
    size_t *tmp = realloc(m->tmp, n * sizeof(*tmp));
    if (tmp) m->tmp = tmp;
    if (!it || !pend || !tmp) return -1;
    m->cap = n;
    return 0;
}

eng_status eng_multi_get(eng_db *db, const eng_snapshot *snap, eng_batch *b, size_t n,
                         const char *const *keys, const size_t *klens, eng_mget *m)
{
    mget_release(m);
    if (reserve(m, n)) return ENG_NOMEM;
    m->n = n;
    for (size_t i = 0; i < n; i++)
        m->it[i] = (mg_item){ENG_NOTFOUND, 0, 0, NULL, NULL, 0, 0, slice_make(keys[i], klens[i])};
    uint64_t seq;
    m->sv = db_get_sv(db, &seq);
    m->so = &db->scan_only;
    m->db = db;
    if (snap) seq = snap->seq;
    const eng_batch *pb = b && !batch_has_range_deletes(b) ? b : NULL;
    memtable *bm = b && !pb ? batch_index(b) : NULL;
    rdel_set *brd = bm ? batch_rdels(b) : NULL;
    memtable_stage(m, pb, &bm, &brd, seq);
    rdel_set_unref(brd);
    for (size_t i = 0; i < n; i++)
        if (!m->it[i].done) m->pend[m->npend++] = i;
    sort_pend(m->it, m->pend, m->tmp, m->npend);
    table_stage(m, seq);
    return ENG_OK;
}
