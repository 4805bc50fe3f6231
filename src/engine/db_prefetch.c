/*
 * db_prefetch.c -- eng_prefetch (engine.h): a pipeline's point lookups
 * started before its commands run, so that their cache misses overlap.
 *
 * A command reads its key where db_read.c's sv_get does: the memtables,
 * then the tables (version_get: level 0 newest first, then one file per
 * deeper level), each table through its filter, the row cache and the
 * data block the index search lands on. Each of these is a chain of
 * dependent loads -- the filter line, the block cache's slot, its entry,
 * the block's descriptor, its restart array -- that the command waits for
 * one after another, key after key. Here the chains of up to
 * MEM_PREFETCH_MAX keys advance together, one link per pass over the keys:
 *
 *  1. the memtable's index slots (mem_prefetch_keys) and the filter line
 *     of every table that may hold each key;
 *  2. the memtable lookups; for a key they do not answer, the first table
 *     whose filter may match: its row cache slot;
 *  3. the row cache's row when the slot has its tag (row_cache_maybe),
 *     else, by the table's index search, its data block's cache slot
 *     (sst_lookahead_start); then the block's cache entry, its
 *     descriptor, its restart array and the probes of the restart search,
 *     one load per pass (sst_lookahead_step), until every key's search has
 *     ended.
 *
 *  4. a data block the cache does not hold is handed to the readahead
 *     thread (opts.readahead; db_readahead.c), which reads it into the
 *     cache while the caller runs the lookups before it.
 *
 * The block and restart interval found are left for the key's lookup
 * (sst_reader_get_located), which then skips both searches. Nothing else
 * is kept: no value is copied, no cache is filled (but by stage 4's
 * thread), promoted or counted, and a key the tables turn out not to hold
 * only wastes its hints and stage 4's read. Readers only, never opened
 * here: a table no lookup has opened yet is skipped.
 */
#include "db_impl.h"

#include "bloom.h"

/* Level-0 files and deeper levels looked at per key. */
#define PF_MAX_TABLES 12

typedef struct pf_key {
    slice key;
    uint64_t hash;
    int ntables; /* candidate tables, in lookup order (V1) */
    sst_reader *r[PF_MAX_TABLES];
    file_meta *f[PF_MAX_TABLES];
    file_meta *hf;  /* stage 2: the table the lookup will read, or NULL */
    sst_reader *hr; /* its reader */
    sst_lookahead la;
} pf_key;

static slice user_smallest(const file_meta *f)
{
    return ikey_user_key(slice_make(f->smallest.data, f->smallest.len));
}

static slice user_largest(const file_meta *f)
{
    return ikey_user_key(slice_make(f->largest.data, f->largest.len));
}

static void add_table(pf_key *p, file_meta *f)
{
    sst_reader *r = __atomic_load_n(&f->reader, __ATOMIC_ACQUIRE);
    if (!r || p->ntables == PF_MAX_TABLES) return;
    p->r[p->ntables] = r;
    p->f[p->ntables++] = f;
}

/* The tables version_get would search for p->key, in its order. */
static void find_tables(const version *v, pf_key *p)
{
    slice k = p->key;
    p->ntables = 0;
    for (int i = 0; i < v->nfiles[0]; i++) {
        file_meta *f = v->files[0][i];
        if (slice_compare(k, user_smallest(f)) >= 0 && slice_compare(k, user_largest(f)) <= 0)
            add_table(p, f);
    }
    uint64_t trailer = ikey_pack_trailer(ENG_MAX_SEQUENCE, ENG_TYPE_SEEK);
    for (int l = 1; l < ENG_MAX_LEVELS; l++) {
        int n = v->nfiles[l];
        if (!n) continue;
        int i = version_find_file(v->files[l], n, k, trailer);
        if (i < n && slice_compare(k, user_smallest(v->files[l][i])) >= 0)
            add_table(p, v->files[l][i]);
    }
}

static row_cache *rc_of(const file_meta *f)
{
    return f->vs ? f->vs->row_cache : NULL;
}

/* Stage 2 for one key the memtables do not hold. */
static void locate(pf_key *p)
{
    for (int t = 0; t < p->ntables; t++) {
        if (!sst_reader_filter_may_match(p->r[t], p->key, p->hash)) continue;
        row_cache_prefetch(rc_of(p->f[t]), p->f[t]->number, p->hash);
        p->hf = p->f[t];
        p->hr = p->r[t];
        return; /* the first table whose filter matches: likely the answer */
    }
}

static int in_memtables(const superversion *sv, const pf_key *p, uint64_t seq)
{
    int type;
    uint64_t fseq;
    slice v;
    if (mem_get_hashed(sv->mem, p->key, p->hash, seq, &type, &fseq, &v)) return 1;
    for (int i = 0; i < sv->nimm; i++)
        if (mem_get_hashed(sv->imm[i], p->key, p->hash, seq, &type, &fseq, &v)) return 1;
    return 0;
}

/* Stage 4: the data blocks the lookahead found absent from the cache go
 * to the readahead thread (db_readahead.c), in key order, a block that
 * neighbouring keys share once. */
static void readahead_absent(eng_db *db, const pf_key *p, size_t n)
{
    ra_job j[MEM_PREFETCH_MAX];
    size_t nj = 0;
    for (size_t i = 0; i < n; i++) {
        if (!p[i].hf || !p[i].la.absent) continue;
        if (nj && j[nj - 1].f == p[i].hf && j[nj - 1].offset == p[i].la.block_offset) continue;
        j[nj].f = p[i].hf;
        j[nj].offset = p[i].la.block_offset;
        j[nj++].size = p[i].la.block_size;
    }
    db_readahead_add(db, nj, j);
}

static void table_prefetch(eng_db *db, const superversion *sv, uint64_t seq, size_t n,
                           const slice *k)
{
    pf_key p[MEM_PREFETCH_MAX];
    for (size_t i = 0; i < n; i++) {
        p[i].key = k[i];
        p[i].hash = mem_key_hash(k[i]); /* the same XXH3 as bloom_hash */
        find_tables(sv->v, &p[i]);
        for (int t = 0; t < p[i].ntables; t++)
            sst_reader_prefetch_filter(p[i].r[t], p[i].hash);
    }
    for (size_t i = 0; i < n; i++) {
        p[i].hf = NULL;
        p[i].la.stage = 0;
        p[i].la.absent = 0;
        if (p[i].ntables && !in_memtables(sv, &p[i], seq)) locate(&p[i]);
    }
    /* A key the row cache probably answers needs no table search: only
     * its row is loaded. */
    for (size_t i = 0; i < n; i++) {
        if (!p[i].hf) continue;
        row_cache *rc = rc_of(p[i].hf);
        if (row_cache_maybe(rc, p[i].hf->number, p[i].hash))
            row_cache_prefetch_entry(rc, p[i].hf->number, p[i].hash);
        else
            sst_lookahead_start(&p[i].la, p[i].hr, p[i].key, p[i].hash);
    }
    for (int more = 1; more;) {
        more = 0;
        for (size_t i = 0; i < n; i++)
            more |= sst_lookahead_step(&p[i].la);
    }
    readahead_absent(db, p, n);
}

void eng_prefetch(eng_db *db, size_t n, const char *const *keys, const size_t *lens,
                  const unsigned char *writes)
{
    slice k[MEM_PREFETCH_MAX], w[MEM_PREFETCH_MAX];
    size_t nw = 0;
    if (n > MEM_PREFETCH_MAX) n = MEM_PREFETCH_MAX;
    if (n == 0) return;
    for (size_t i = 0; i < n; i++) {
        k[i] = slice_make(keys[i], lens[i]);
        if (writes[i]) w[nw++] = k[i];
    }
    uint64_t seq;
    superversion *sv = db_get_sv(db, &seq); /* keeps the memtables and the version alive */
    mem_prefetch_keys(sv->mem, n, k, nw, w);
    table_prefetch(db, sv, seq, n, k);
    sv_unref(sv);
}
