/*
 * table_iter.c -- the table iterator (sst_reader_iter, table.h): a
 * two-level iterator over a table's index block and the data blocks it
 * points at, and the readahead that serves iterators which do not fill the
 * block cache (compaction inputs). The file format is in table_format.md
 * (constants in table_format.h); table_reader.c opens the table, keeps the
 * index in memory, and reads and checks blocks (table_internal.h).
 *
 * Algorithm: the index iterator picks a data block; the data iterator
 * walks it; running off either end of a block moves the index iterator and
 * loads the next (or previous) block, skipping empty ones. Blocks come from
 * the block cache or the file; a forward scan that does not fill the cache
 * reads a window of consecutive blocks with one pread (ra_get_block) and
 * decodes each from it, checksum included. Any damaged block or index
 * entry makes the iterator invalid with status ENG_CORRUPTION.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "table_internal.h"

/* A two-level iterator: index_it walks the index block, data_it the data
 * block it points at. Invariants:
 *   T1. have_data iff data.b is set and data_it iterates it; then
 *       data_offset is the offset of that block's handle.
 *   T2. After any move, either data_it is valid or index_it is exhausted or
 *       status != ENG_OK: empty blocks are skipped (skip_forward/backward).
 *   T3. A data block that fails its checks makes status ENG_CORRUPTION,
 *       unless the iterator has an enabled damage log: then the block is
 *       recorded there with the user keys it could hold and treated as
 *       empty, so T2 moves on to the next block in the same direction. The
 *       reader of the log must hide those keys from every source (db_iter.c).
 */
/* Readahead for iterators that do not fill the cache (compaction inputs,
 * which read every block once in file order): one pread fetches a window
 * of consecutive blocks and later blocks are decoded from it, instead of
 * one pread per 4 KiB block. The window starts at READAHEAD_MIN and
 * doubles with each refill up to READAHEAD_MAX, so a short scan reads
 * little more than it needs. */
#define READAHEAD_MIN (64u << 10)
#define READAHEAD_MAX (2u << 20)

typedef struct ra_window {
    char *buf;
    size_t cap, len;
    uint64_t off;     /* file offset of buf[0] */
    size_t next_size; /* bytes the next refill reads */
} ra_window;

typedef struct sst_iter {
    iter base;
    sst_reader *r;
    sst_damage_log *dl; /* T3: step over damaged blocks while dl->enabled */
    int fill_cache;
    ra_window ra; /* used only when fill_cache == 0 */
    eng_status status;
    block_iter index_it;
    block_iter data_it;
    int have_data;
    uint64_t data_offset;
    block_ref data;
} sst_iter;

static void set_error(sst_iter *it, eng_status s)
{
    if (it->status == ENG_OK) it->status = s;
}

void sst_damage_log_free(sst_damage_log *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->d[i].path);
        buf_free(&l->d[i].lo);
        buf_free(&l->d[i].hi);
    }
    free(l->d);
    l->d = NULL;
    l->n = l->cap = 0;
}

int sst_damage_covers(const sst_damage_log *l, slice k, uint64_t seq)
{
    for (int i = 0; i < l->n; i++) {
        const sst_damage *d = &l->d[i];
        if (seq <= d->max_seq &&
            (!d->has_lo || slice_compare(slice_make(d->lo.data, d->lo.len), k) < 0) &&
            slice_compare(k, slice_make(d->hi.data, d->hi.len)) <= 0)
            return 1;
    }
    return 0;
}

void sst_damage_describe(const sst_damage *d, char *out, size_t cap)
{
    char lo[128], hi[128];
    size_t n = 0;
    for (size_t i = 0; d->has_lo && i < d->lo.len && n + 5 < sizeof(lo); i++) {
        unsigned char c = (unsigned char)d->lo.data[i];
        n += (size_t)snprintf(lo + n, sizeof(lo) - n, c >= 32 && c < 127 ? "%c" : "\\x%02x", c);
    }
    lo[n] = 0;
    n = 0;
    for (size_t i = 0; i < d->hi.len && n + 5 < sizeof(hi); i++) {
        unsigned char c = (unsigned char)d->hi.data[i];
        n += (size_t)snprintf(hi + n, sizeof(hi) - n, c >= 32 && c < 127 ? "%c" : "\\x%02x", c);
    }
    hi[n] = 0;
    snprintf(out, cap, "table %s: damaged data block at offset %llu, keys %s%s%s up to \"%s\"",
             d->path, (unsigned long long)d->offset, d->has_lo ? "after \"" : "from the first",
             d->has_lo ? lo : "", d->has_lo ? "\"" : "", hi);
}

/* T3: the data block the index iterator points at is damaged (s says how):
 * in skip mode records the user keys whose newest entry in this table it
 * could hold -- above the user key of its index predecessor's separator
 * (that key's newer entries end the block before; a shortened separator
 * lies strictly between the blocks' keys) up to its own separator's -- and
 * returns 1 (the caller goes on to the next block); otherwise records the
 * error and returns 0. */
static int step_over_damage(sst_iter *it, eng_status s)
{
    sst_damage_log *l = it->dl;
    if (!l || !l->enabled || s != ENG_CORRUPTION || !block_iter_valid(&it->index_it)) {
        set_error(it, s);
        return 0;
    }
    sst_handle h = {0, 0};
    sst_index_handle(it->r, &it->index_it, &h);
    for (int i = 0; i < l->n; i++)
        if (l->d[i].offset == h.offset && !strcmp(l->d[i].path, it->r->path)) return 1;
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->d = realloc(l->d, sizeof(sst_damage) * (size_t)l->cap);
        if (!l->d) abort();
    }
    sst_damage *d = &l->d[l->n++];
    memset(d, 0, sizeof(*d));
    d->path = strdup(it->r->path);
    if (!d->path) abort();
    d->offset = h.offset;
    d->max_seq = it->r->props.largest_seq;
    slice sep = block_iter_key(&it->index_it);
    buf_append(&d->hi, sep.data, sep.size - 8);
    block_iter prev;
    block_iter_init(&prev, &it->r->index, BLOCK_CMP_IKEY);
    block_iter_seek(&prev, sep);
    if (block_iter_valid(&prev)) block_iter_prev(&prev);
    if (block_iter_valid(&prev)) {
        slice p = block_iter_key(&prev);
        buf_append(&d->lo, p.data, p.size - 8);
        d->has_lo = 1;
    }
    block_iter_cleanup(&prev);
    if (l->on_damage) l->on_damage(l->ctx, d);
    return 1;
}

static void clear_data(sst_iter *it)
{
    if (it->have_data) sst_block_ref_release(it->r, &it->data);
    it->have_data = 0;
}

/* Like sst_get_data_block for an uncached block, but served from the
 * iterator's readahead window, refilled from h.offset when h is not in it. */
static eng_status ra_get_block(sst_iter *it, sst_handle h, block_ref *br)
{
    const sst_reader *r = it->r;
    ra_window *ra = &it->ra;
    eng_status s = sst_check_handle(r, h);
    if (s != ENG_OK) return s;
    size_t need = (size_t)h.size + SST_BLOCK_TRAILER_SIZE;
    if (h.offset < ra->off || h.offset - ra->off > ra->len ||
        need > ra->len - (h.offset - ra->off)) {
        size_t want = ra->next_size > need ? ra->next_size : need;
        if (want > r->data_end - h.offset) want = (size_t)(r->data_end - h.offset); /* >= need */
        if (want > ra->cap) {
            char *nb = malloc(want);
            if (!nb) return env_error(ENG_NOMEM, "table %s: out of memory", r->path);
            free(ra->buf);
            ra->buf = nb;
            ra->cap = want;
        }
        ra->len = 0;
        s = env_pread_all(r->fd, ra->buf, want, h.offset, r->path);
        if (s != ENG_OK) return s;
        ra->off = h.offset;
        ra->len = want;
        ra->next_size = ra->next_size >= READAHEAD_MAX / 2 ? READAHEAD_MAX : ra->next_size * 2;
    }
    char *data;
    size_t len;
    s = sst_decode_contents(r, h, ra->buf + (h.offset - ra->off), NULL, &data, &len);
    if (s != ENG_OK) return s;
    block *b = malloc(sizeof(*b));
    if (!b) {
        free(data);
        return env_error(ENG_NOMEM, "table %s: out of memory", r->path);
    }
    if (block_parse(b, data, len, data) != ENG_OK) {
        free(b);
        return sst_corrupt(r, h.offset, "bad block restart array");
    }
    br->b = br->owned = b;
    br->h = NULL;
    return ENG_OK;
}

/* Reads the data block at h for the iterator: a cached copy if there is
 * one, else through the readahead window when the iterator does not fill
 * the cache and is moving forwards (a backward step reads one block). */
static eng_status iter_get_block(sst_iter *it, sst_handle h, block_ref *br)
{
    int forward = !it->have_data || h.offset > it->data_offset;
    if (it->fill_cache || !forward) return sst_get_data_block(it->r, h, it->fill_cache, br);
    if (it->r->cache) {
        br->owned = NULL;
        br->h = cache_lookup(it->r->cache, it->r->file_number, h.offset);
        if (br->h) {
            br->b = cache_value(br->h);
            return ENG_OK;
        }
    }
    return ra_get_block(it, h, br);
}

/* Loads the data block the index iterator points at (T1). */
static void init_data(sst_iter *it)
{
    if (!block_iter_valid(&it->index_it)) {
        if (block_iter_status(&it->index_it) != ENG_OK)
            set_error(it, sst_corrupt(it->r, it->r->index.size, "bad index block"));
        clear_data(it);
        return;
    }
    sst_handle h;
    eng_status s = sst_index_handle(it->r, &it->index_it, &h);
    if (s != ENG_OK) {
        step_over_damage(it, s);
        clear_data(it);
        return;
    }
    if (it->have_data && it->data_offset == h.offset) return;
    block_ref br;
    s = iter_get_block(it, h, &br);
    clear_data(it);
    if (s != ENG_OK) {
        step_over_damage(it, s); /* T3: else the iterator stops with s */
        return;
    }
    it->data = br;
    it->data_offset = h.offset;
    it->have_data = 1;
    block_iter_reset(&it->data_it, br.b);
}

/* A data block with a bad entry: stops the iterator (returns 1), or in
 * skip mode is stepped over like an unreadable one (T3, returns 0). */
static int data_failed(sst_iter *it)
{
    if (!it->have_data || block_iter_status(&it->data_it) == ENG_OK) return 0;
    int skipped =
        step_over_damage(it, sst_corrupt(it->r, it->data_offset, "bad entry in data block"));
    clear_data(it);
    return !skipped;
}

/* Whether the index iterator has run off either end (or failed, which is
 * recorded); then the data block is dropped. */
static int index_exhausted(sst_iter *it)
{
    if (block_iter_valid(&it->index_it)) return 0;
    if (block_iter_status(&it->index_it) != ENG_OK)
        set_error(it, sst_corrupt(it->r, it->r->index.size, "bad index block"));
    clear_data(it);
    return 1;
}

static void skip_forward(sst_iter *it)
{
    while (it->status == ENG_OK && (!it->have_data || !block_iter_valid(&it->data_it))) {
        if (data_failed(it)) return;
        if (index_exhausted(it)) return;
        block_iter_next(&it->index_it);
        init_data(it);
        if (it->have_data) block_iter_seek_first(&it->data_it);
    }
}

static void skip_backward(sst_iter *it)
{
    while (it->status == ENG_OK && (!it->have_data || !block_iter_valid(&it->data_it))) {
        if (data_failed(it)) return;
        if (index_exhausted(it)) return;
        block_iter_prev(&it->index_it);
        init_data(it);
        if (it->have_data) block_iter_seek_last(&it->data_it);
    }
}

static int si_valid(const iter *base)
{
    const sst_iter *it = (const sst_iter *)base;
    return it->status == ENG_OK && it->have_data && block_iter_valid(&it->data_it);
}

static void si_seek_first(iter *base)
{
    sst_iter *it = (sst_iter *)base;
    if (it->status != ENG_OK) return;
    block_iter_seek_first(&it->index_it);
    init_data(it);
    if (it->have_data) block_iter_seek_first(&it->data_it);
    skip_forward(it);
}

static void si_seek_last(iter *base)
{
    sst_iter *it = (sst_iter *)base;
    if (it->status != ENG_OK) return;
    block_iter_seek_last(&it->index_it);
    init_data(it);
    if (it->have_data) block_iter_seek_last(&it->data_it);
    skip_backward(it);
}

static void si_seek(iter *base, slice target)
{
    sst_iter *it = (sst_iter *)base;
    if (it->status != ENG_OK) return;
    if (target.size < 8) { /* not an internal key: every key is >= it */
        si_seek_first(base);
        return;
    }
    sst_index_seek(it->r, &it->index_it, target);
    init_data(it);
    if (it->have_data) block_iter_seek(&it->data_it, target);
    skip_forward(it);
}

static void si_next(iter *base)
{
    sst_iter *it = (sst_iter *)base;
    block_iter_next(&it->data_it);
    skip_forward(it);
}

static void si_prev(iter *base)
{
    sst_iter *it = (sst_iter *)base;
    block_iter_prev(&it->data_it);
    skip_backward(it);
}

/* next, valid and key in one call (iter.h); the step that stays inside
 * the data block needs no more than the block's own check (T2). */
static int si_next_key(iter *base, slice *key)
{
    sst_iter *it = (sst_iter *)base;
    block_iter_next(&it->data_it);
    if (!block_iter_valid(&it->data_it)) {
        skip_forward(it);
        if (!si_valid(base)) return 0;
    }
    *key = block_iter_key(&it->data_it);
    return 1;
}

/* G4 (merger.c): within the data block, si_next is block_iter_next (T2
 * needs a look only once the block runs out). */
static struct block_iter *si_leaf(iter *base)
{
    return &((sst_iter *)base)->data_it;
}

/* The rest of si_next_key once the leaf's own step left it invalid. */
static int si_leaf_end(iter *base, slice *key)
{
    sst_iter *it = (sst_iter *)base;
    skip_forward(it);
    if (!si_valid(base)) return 0;
    *key = block_iter_key(&it->data_it);
    return 1;
}

static slice si_key(const iter *base)
{
    return block_iter_key(&((const sst_iter *)base)->data_it);
}

static slice si_value(const iter *base)
{
    return block_iter_value(&((const sst_iter *)base)->data_it);
}

static eng_status si_status(const iter *base)
{
    return ((const sst_iter *)base)->status;
}

static void si_destroy(iter *base)
{
    sst_iter *it = (sst_iter *)base;
    clear_data(it);
    block_iter_cleanup(&it->index_it);
    block_iter_cleanup(&it->data_it);
    free(it->ra.buf);
    free(it);
}

static const struct iter_ops sst_iter_ops = {
    si_valid, si_seek_first, si_seek_last, si_seek,     si_next, si_prev,     si_key,
    si_value, si_status,     si_destroy,   si_next_key, si_leaf, si_leaf_end,
};

/* An empty block for data_it to point at before the first block loads. */
static const char empty_block_bytes[8] = {0, 0, 0, 0, 1, 0, 0, 0};
static const block empty_block = {empty_block_bytes, 8, 0, 1, NULL};

iter *sst_reader_iter(sst_reader *r, int fill_cache)
{
    return sst_reader_iter_damage(r, fill_cache, NULL);
}

iter *sst_reader_iter_damage(sst_reader *r, int fill_cache, sst_damage_log *dl)
{
    sst_iter *it = calloc(1, sizeof(*it));
    if (!it) return iter_new_error(env_error(ENG_NOMEM, "table iterator: out of memory"));
    it->base.ops = &sst_iter_ops;
    it->r = r;
    it->dl = dl;
    it->fill_cache = fill_cache;
    it->ra.next_size = READAHEAD_MIN;
    block_iter_init(&it->index_it, &r->index, BLOCK_CMP_IKEY);
    block_iter_init(&it->data_it, &empty_block, BLOCK_CMP_IKEY);
    return &it->base;
}
