/*
 * table_mget.c -- point lookups that leave the answer in its data block
 * (table.h, sst_reader_get_pinned): the block stays pinned in an sst_pins
 * until the caller releases them all, so a multi-get hands out values
 * without copying them, and consecutive keys that fall in one block (a
 * multi-get sorts its keys) read and search that block once.
 *
 * The search is sst_reader_get_unfiltered's (table_reader.c): the index
 * entry >= (key, seq), then the first entry >= that target in its block,
 * or in the next block when the target lies past a block's last entry.
 */
#include <stdlib.h>
#include <string.h>

#include "bloom.h"
#include "dbformat.h"
#include "table_internal.h"

struct sst_pin {
    const sst_reader *r;
    uint64_t offset; /* the block's offset in r's file */
    block_ref br;
};

void sst_pins_release(sst_pins *p)
{
    for (size_t i = 0; i < p->n; i++)
        sst_block_ref_release(p->v[i].r, &p->v[i].br);
    p->n = 0;
    p->last_r = NULL;
}

void sst_pins_free(sst_pins *p)
{
    sst_pins_release(p);
    free(p->v);
    buf_free(&p->lo);
    buf_free(&p->sep);
    memset(p, 0, sizeof(*p));
}

/* The newest pin's block when target lies in [lo, sep] of r's newest pin
 * (sorted lookups: the next key in the same block), else NULL. */
static const block *same_entry(const sst_reader *r, const sst_pins *p, slice target)
{
    if (!p->n || p->last_r != r || p->v[p->n - 1].r != r) return NULL;
    if (ikey_compare(target, slice_make(p->lo.data, p->lo.len)) < 0 ||
        ikey_compare(target, slice_make(p->sep.data, p->sep.len)) > 0)
        return NULL;
    return p->v[p->n - 1].br.b;
}

/* The data block at h of r: the newest pin when it is that block, else
 * read (through the cache) and pinned. */
static eng_status pinned_block(const sst_reader *r, sst_handle h, sst_pins *p, const block **out)
{
    if (p->n && p->v[p->n - 1].r == r && p->v[p->n - 1].offset == h.offset) {
        *out = p->v[p->n - 1].br.b;
        return ENG_OK;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 16;
        struct sst_pin *v = realloc(p->v, cap * sizeof(*v));
        if (!v) return ENG_NOMEM;
        p->v = v;
        p->cap = cap;
    }
    struct sst_pin *pin = &p->v[p->n];
    eng_status s = sst_get_data_block(r, h, 1, &pin->br);
    if (s != ENG_OK) return s;
    pin->r = r;
    pin->offset = h.offset;
    p->n++;
    *out = pin->br.b;
    return ENG_OK;
}

/* The lookup from the block and restart interval an sst_lookahead left for
 * key (sst_hint_take); *done = 0 when there was none, or the block ends
 * below target (the index search then goes on). The pin's index entry is
 * unknown: same_entry is off until the next index search. */
static eng_status get_hinted(sst_reader *r, slice key, uint64_t hash, slice target, sst_pins *p,
                             int *type, uint64_t *found_seq, slice *value, int *done)
{
    sst_handle h;
    uint32_t restart;
    const block *b;
    *done = 0;
    if (!sst_hint_take(r, key, hash, &h, &restart)) return ENG_NOTFOUND;
    eng_status s = pinned_block(r, h, p, &b);
    if (s != ENG_OK) return s; /* a read error: the index path would fail alike */
    p->last_r = NULL;
    int past_end = 0;
    s = sst_search_block_from(r, h, b, key, target, restart, type, found_seq, value, &past_end);
    *done = !past_end;
    return s;
}

eng_status sst_reader_get_pinned(sst_reader *r, slice key, uint64_t hash, uint64_t seq,
                                 sst_pins *pins, int *type, uint64_t *found_seq, slice *value)
{
    if (seq > ENG_MAX_SEQUENCE) seq = ENG_MAX_SEQUENCE;
    char stack[256];
    char *t = key.size + 8 <= sizeof(stack) ? stack : malloc(key.size + 8);
    if (!t) return ENG_NOMEM;
    if (key.size) memcpy(t, key.data, key.size);
    enc_fixed64(t + key.size, ikey_pack_trailer(seq, ENG_TYPE_SEEK));
    slice target = slice_make(t, key.size + 8);
    eng_status s = ENG_NOTFOUND;
    const block *same = same_entry(r, pins, target);
    if (same) {
        /* past its last entry: the next block, by the index search below */
        int past_end = 0;
        sst_handle h = {pins->v[pins->n - 1].offset, 0}; /* the offset names it in errors */
        s = sst_search_block(r, h, same, key, target, type, found_seq, value, &past_end);
        if (!past_end) goto out;
        s = ENG_NOTFOUND;
    } else {
        int done;
        s = get_hinted(r, key, hash, target, pins, type, found_seq, value, &done);
        if (done || s != ENG_NOTFOUND) goto out;
    }
    block_iter ii;
    block_iter_init(&ii, &r->index, BLOCK_CMP_IKEY);
    sst_index_seek(r, &ii, target);
    for (; block_iter_valid(&ii); block_iter_next(&ii)) {
        sst_handle h;
        const block *b;
        int past_end = 0;
        s = sst_index_handle(r, &ii, &h);
        if (s == ENG_OK) s = pinned_block(r, h, pins, &b);
        if (s == ENG_OK) { /* the newest pin is now b's: remember its entry */
            slice sep = block_iter_key(&ii);
            pins->lo.len = pins->sep.len = 0;
            buf_append(&pins->lo, target.data, target.size);
            buf_append(&pins->sep, sep.data, sep.size);
            pins->last_r = r;
        }
        if (s == ENG_OK)
            s = sst_search_block(r, h, b, key, target, type, found_seq, value, &past_end);
        if (!past_end) break;
        s = ENG_NOTFOUND;
    }
    if (s == ENG_NOTFOUND && !block_iter_valid(&ii) && block_iter_status(&ii) != ENG_OK)
        s = sst_corrupt(r, r->index.size, "bad index block");
    block_iter_cleanup(&ii);
out:
    if (t != stack) free(t);
    return s;
}

void sst_reader_prefetch_filter(const sst_reader *r, uint64_t hash)
{
    if (r->filter_len) bloom_prefetch(r->filter, r->filter_len, hash);
}

/* The data blocks sst_lookahead found, per thread, by key hash: a lookup
 * that follows takes its block from here instead of searching the index
 * again, and its restart interval instead of searching the block
 * (sst_hint_take). A located block is the one the index search of (key,
 * ENG_MAX_SEQUENCE) lands on: every entry of the blocks before it is below
 * that target, so below (key, seq) for any seq, and the first entry >=
 * (key, seq) is in it or, when the block has none (the key's older
 * versions fill later blocks, or it is absent), in a later one
 * (sst_reader_get_located then searches the index). Likewise the restart
 * interval is at or before the one a search for (key, seq) would find, and
 * the block scan goes on from it. Table files are immutable and their
 * numbers never reused, so a hint never goes stale; a newer one for
 * another key of the same slot replaces it. */
#define HINT_SLOTS 32
static __thread struct hint {
    uint64_t file, hash; /* file 0: empty (table file numbers start above it) */
    sst_handle h;
    uint32_t restart; /* SST_NO_RESTART: not searched */
    size_t klen;
    char key[SST_LOOKAHEAD_KEY_MAX];
} hints[HINT_SLOTS];

int sst_hint_take(const sst_reader *r, slice key, uint64_t hash, sst_handle *h, uint32_t *restart)
{
    struct hint *x = &hints[hash % HINT_SLOTS];
    if (x->file != r->file_number || x->hash != hash || x->klen != key.size ||
        memcmp(x->key, key.data, key.size) != 0)
        return 0;
    *h = x->h;
    *restart = x->restart;
    x->file = 0; /* taken once */
    return 1;
}

static void hint_put(const sst_lookahead *la, uint32_t restart)
{
    struct hint *x = &hints[la->hash % HINT_SLOTS];
    x->file = la->r->file_number;
    x->hash = la->hash;
    x->h = (sst_handle){la->block_offset, la->block_size};
    x->restart = restart;
    x->klen = la->klen;
    memcpy(x->key, la->target, la->klen);
}

int sst_lookahead_start(sst_lookahead *la, const sst_reader *r, slice key, uint64_t hash)
{
    la->stage = 0;
    la->absent = 0;
    if (!r->cache || key.size > SST_LOOKAHEAD_KEY_MAX) return 0;
    memcpy(la->target, key.data, key.size);
    enc_fixed64(la->target + key.size, ikey_pack_trailer(ENG_MAX_SEQUENCE, ENG_TYPE_SEEK));
    block_iter ii;
    block_iter_init(&ii, &r->index, BLOCK_CMP_IKEY);
    sst_index_seek(r, &ii, slice_make(la->target, key.size + 8));
    sst_handle h;
    int ok = block_iter_valid(&ii) && sst_index_handle(r, &ii, &h) == ENG_OK;
    la->seplen = 0;
    if (ok) {
        slice sep = ikey_user_key(block_iter_key(&ii));
        if (sep.size && sep.size <= sizeof(la->sep)) {
            memcpy(la->sep, sep.data, sep.size);
            la->seplen = sep.size;
        }
    }
    block_iter_cleanup(&ii);
    if (!ok) return 0;
    la->block_offset = h.offset;
    la->block_size = h.size;
    la->r = r;
    la->hash = hash;
    la->klen = key.size;
    la->pin = NULL;
    cache_prefetch(r->cache, r->file_number, la->block_offset);
    hint_put(la, SST_NO_RESTART);
    la->stage = 1;
    return 1;
}

int sst_lookahead_step(sst_lookahead *la)
{
    if (la->stage == 0) return 0;
    const sst_reader *r = la->r;
    const block *b = la->stage >= 3 ? cache_value(la->pin) : NULL;
    switch (la->stage) {
    case 1:
        cache_prefetch_entry(r->cache, r->file_number, la->block_offset);
        break;
    case 2:
        la->pin = cache_lookup_quiet(r->cache, r->file_number, la->block_offset);
        if (!la->pin) {
            la->stage = 0;
            la->absent = 1;
            return 0;
        }
        __builtin_prefetch(cache_value(la->pin)); /* the block's descriptor */
        break;
    case 3:
        block_rsearch_start(b, &la->rs);
        break;
    default:
        if (!block_rsearch_step(b, &la->rs, slice_make(la->target, la->klen + 8))) break;
        hint_put(la, la->rs.left);
        cache_release(r->cache, la->pin);
        la->pin = NULL;
        la->stage = 0;
        return 0;
    }
    la->stage++;
    return 1;
}
