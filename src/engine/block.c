/*
 * block.c -- parses and iterates a block (format in block_builder.c and
 * table_format.md, "Blocks"):
 *
 *   block = entry* restart:fixed32[num_restarts] num_restarts:fixed32
 *   entry = shared:varint32 non_shared:varint32 value_len:varint32
 *           key_delta[non_shared] value[value_len]
 *
 * Seek binary-searches the restart points (whose entries carry whole keys,
 * Invariant B1) for the last one whose key is < target, then scans forward.
 * Prev rescans from the restart point before the current entry, as entries
 * can only be decoded forwards.
 *
 * Hardening: block_parse checks the restart array once (B2, B3), so later
 * restart lookups need no checks; decode_entry checks every varint and
 * length against restart_offset before touching the bytes. Nothing read
 * from the block is trusted.
 */
#include "block.h"

#include <stdlib.h>

#include "dbformat.h"

eng_status block_parse(block *b, const char *data, size_t size, char *owned)
{
    memset(b, 0, sizeof(*b));
    b->owned = owned;
    if (size < 4 || size > UINT32_MAX) goto corrupt;
    uint32_t n = dec_fixed32(data + size - 4);
    if (n == 0 || n > (size - 4) / 4) goto corrupt; /* B3 */
    uint32_t roff = (uint32_t)(size - 4 - (size_t)n * 4);
    const char *ra = data + roff;
    if (dec_fixed32(ra) != 0) goto corrupt; /* B2 */
    if (roff == 0 && n != 1) goto corrupt;
    for (uint32_t i = 1; i < n; i++) {
        uint32_t prev = dec_fixed32(ra + 4 * (i - 1)), cur = dec_fixed32(ra + 4 * i);
        if (cur <= prev || cur >= roff) goto corrupt; /* B2 */
    }
    b->data = data;
    b->size = size;
    b->restart_offset = roff;
    b->num_restarts = n;
    return ENG_OK;
corrupt:
    free(owned);
    b->owned = NULL;
    return ENG_CORRUPTION;
}

void block_release(block *b)
{
    free(b->owned);
    b->owned = NULL;
    b->data = NULL;
    b->size = 0;
}

void block_free(void *p)
{
    block *b = p;
    block_release(b);
    free(b);
}

static inline uint32_t restart_point(const block *b, uint32_t i)
{
    return dec_fixed32(b->data + b->restart_offset + 4 * i);
}

/* The most bytes of one restart interval prefetch_interval asks for. */
#define BLOCK_PREFETCH_MAX 8192u

/* Decodes the entry header at offset off. Returns the offset of its key
 * delta and fills the three lengths, or 0 (never a valid result, as the
 * header takes at least 3 bytes) when the entry does not fit below limit. */
static inline __attribute__((always_inline)) uint32_t
decode_entry(const block *b, uint32_t off, uint32_t *shared, uint32_t *non_shared, uint32_t *vlen)
{
    const char *p = b->data + off, *limit = b->data + b->restart_offset;
    if (limit - p < 3) return 0;
    const unsigned char *u = (const unsigned char *)p;
    /* The common shapes: key lengths under 128 take one byte each, and the
     * value length one byte (values under 128) or two (under 16 KiB, e.g.
     * the 100-1000 byte values of a typical record). */
    if ((u[0] | u[1]) < 128 && (u[2] < 128 || (limit - p >= 4 && u[3] < 128))) {
        *shared = u[0];
        *non_shared = u[1];
        if (u[2] < 128) {
            *vlen = u[2];
            p += 3;
        } else {
            *vlen = (uint32_t)(u[2] & 0x7f) | (uint32_t)u[3] << 7;
            p += 4;
        }
    } else {
        if (!(p = dec_varint32(p, limit, shared))) return 0;
        if (!(p = dec_varint32(p, limit, non_shared))) return 0;
        if (!(p = dec_varint32(p, limit, vlen))) return 0;
    }
    size_t room = (size_t)(limit - p);
    if (*non_shared > room || *vlen > room - *non_shared) return 0;
    return (uint32_t)(p - b->data);
}

void block_iter_init(block_iter *it, const block *b, int cmp)
{
    it->b = b;
    it->cmp = cmp;
    it->current = b->restart_offset;
    it->next_off = b->restart_offset;
    it->restart_index = b->num_restarts;
    it->next_restart = b->restart_offset;
    it->status = ENG_OK;
    it->key = it->key_inline;
    it->key_len = 0;
    it->key_cap = sizeof(it->key_inline);
    it->value = NULL;
    it->value_len = 0;
}

void block_iter_cleanup(block_iter *it)
{
    if (it->key != it->key_inline) free(it->key);
    it->key = it->key_inline;
    it->key_cap = sizeof(it->key_inline);
    it->key_len = 0;
}

static __attribute__((noinline, cold)) void mark_invalid(block_iter *it)
{
    it->current = it->b->restart_offset;
    it->next_off = it->b->restart_offset;
    it->restart_index = it->b->num_restarts;
    it->next_restart = it->b->restart_offset;
    it->key_len = 0;
    it->value = NULL;
    it->value_len = 0;
}

static __attribute__((noinline, cold)) void corrupted(block_iter *it)
{
    mark_invalid(it);
    it->status = ENG_CORRUPTION;
}

void block_iter_reset(block_iter *it, const block *b)
{
    it->b = b;
    it->status = ENG_OK;
    mark_invalid(it);
}

/* Grows the key buffer to hold n bytes; out of line, as parse_next's
 * callers rarely need it (keys up to BLOCK_ITER_INLINE_KEY fit inline). */
static __attribute__((noinline)) void key_grow(block_iter *it, size_t n)
{
    size_t cap = it->key_cap * 2;
    while (cap < n)
        cap *= 2;
    char *k = malloc(cap);
    if (!k) abort();
    memcpy(k, it->key, it->key_len);
    if (it->key != it->key_inline) free(it->key);
    it->key = k;
    it->key_cap = cap;
}

static inline int compare(const block_iter *it, slice a, slice b)
{
    return it->cmp == BLOCK_CMP_IKEY ? ikey_compare(a, b) : slice_compare(a, b);
}

/* Makes restart point index (< num_restarts) the one holding current, and
 * next_restart the offset where the next one starts (restart_offset after
 * the last), so a forward step learns whether it crossed into the next
 * restart interval from one comparison. */
static inline void set_restart(block_iter *it, uint32_t index)
{
    it->restart_index = index;
    it->next_restart =
        index + 1 < it->b->num_restarts ? restart_point(it->b, index + 1) : it->b->restart_offset;
}

/* memcpy for a key delta, which every step copies: a scan's deltas are a
 * few to a few dozen bytes, so word moves (the last one overlapping, never
 * past n) beat a call into the library. */
static inline __attribute__((always_inline)) void copy_delta(char *d, const char *p, size_t n)
{
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 <= n; i += 8)
            memcpy(d + i, p + i, 8);
        if (i < n) memcpy(d + n - 8, p + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, p, 4);
        memcpy(d + n - 4, p + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = p[i];
    }
}

/* Decodes the entry at next_off into the iterator. Returns 0 at the end of
 * the entries (invalid) or on corruption (status set). Inlined into
 * block_iter_next, every scan step's call (merger.c G4); parse_next is the
 * out-of-line copy for seeks. */
static inline __attribute__((always_inline)) int parse_next_inline(block_iter *it)
{
    const block *b = it->b;
    uint32_t off = it->next_off;
    if (off >= b->restart_offset) {
        mark_invalid(it);
        return 0;
    }
    uint32_t shared, non_shared, vlen;
    uint32_t kd = decode_entry(b, off, &shared, &non_shared, &vlen);
    if (!kd || shared > it->key_len) {
        corrupted(it);
        return 0;
    }
    size_t klen = (size_t)shared + non_shared;
    if (it->cmp == BLOCK_CMP_IKEY && klen < 8) {
        corrupted(it);
        return 0;
    }
    if (klen > it->key_cap) key_grow(it, klen);
    copy_delta(it->key + shared, b->data + kd, non_shared);
    it->key_len = klen;
    it->value = b->data + kd + non_shared;
    it->value_len = vlen;
    it->current = off;
    it->next_off = kd + non_shared + vlen;
    while (off >= it->next_restart) /* B2: ends at restart_offset, beyond every entry */
        set_restart(it, it->restart_index + 1);
    return 1;
}

static int parse_next(block_iter *it)
{
    return parse_next_inline(it);
}

static void seek_to_restart(block_iter *it, uint32_t index)
{
    it->key_len = 0;
    set_restart(it, index);
    it->next_off = restart_point(it->b, index);
}

static inline void block_prefetch(const block *b);

void block_iter_seek_first(block_iter *it)
{
    if (it->status != ENG_OK) return;
    block_prefetch(it->b); /* a forward scan reads most of the block */
    seek_to_restart(it, 0);
    parse_next(it);
}

void block_iter_seek_last(block_iter *it)
{
    if (it->status != ENG_OK) return;
    seek_to_restart(it, it->b->num_restarts - 1);
    while (parse_next(it) && it->next_off < it->b->restart_offset) {
    }
}

void block_iter_next(block_iter *it)
{
    if (it->status != ENG_OK) return;
    parse_next_inline(it);
}

void block_iter_prev(block_iter *it)
{
    if (it->status != ENG_OK) return;
    const uint32_t original = it->current;
    while (restart_point(it->b, it->restart_index) >= original) {
        if (it->restart_index == 0) {
            mark_invalid(it); /* no entry before the first */
            return;
        }
        it->restart_index--;
    }
    seek_to_restart(it, it->restart_index);
    do {
        if (!parse_next(it)) {
            if (it->status == ENG_OK) corrupted(it); /* original was never reached */
            return;
        }
    } while (it->next_off < original);
    if (it->next_off != original) corrupted(it); /* entries overlap: not a valid chain */
}

int block_restart_key(const block *b, uint32_t i, int cmp, slice *key)
{
    uint32_t shared, non_shared, vlen;
    if (i >= b->num_restarts || b->restart_offset == 0) return 0;
    uint32_t kd = decode_entry(b, restart_point(b, i), &shared, &non_shared, &vlen);
    if (!kd || shared != 0) return 0;
    if (cmp == BLOCK_CMP_IKEY && non_shared < 8) return 0;
    *key = slice_make(b->data + kd, non_shared);
    return 1;
}

/* Asks the CPU to fetch the entries of restart interval i. A block found
 * in the block cache is rarely in the CPU's caches, and the forward scan
 * decodes entry after entry, each header a dependent load: fetching the
 * interval's lines together turns a chain of memory stalls into about
 * one. */
static inline void prefetch_interval(const block *b, uint32_t i)
{
    uint32_t start = restart_point(b, i);
    uint32_t end = i + 1 < b->num_restarts ? restart_point(b, i + 1) : b->restart_offset;
    if (end - start > BLOCK_PREFETCH_MAX) end = start + BLOCK_PREFETCH_MAX;
    for (uint32_t off = start; off < end; off += 64)
        __builtin_prefetch(b->data + off);
}

void block_iter_seek_from(block_iter *it, uint32_t restart, slice target)
{
    if (it->status != ENG_OK) return;
    if (restart >= it->b->num_restarts) restart = it->b->num_restarts - 1;
    prefetch_interval(it->b, restart);
    seek_to_restart(it, restart);
    while (parse_next(it)) {
        if (compare(it, block_iter_key(it), target) >= 0) return;
    }
}

/* A data block fresh from the block cache is usually not in the CPU's
 * caches, and searching or scanning it is a chain of dependent loads
 * (restart array, restart key, then entry after entry, each found through
 * the one before): fetching the whole block at once overlaps them. Larger
 * blocks get their restart array fetched, the rest follows per interval
 * (prefetch_interval). */
static inline void block_prefetch(const block *b)
{
    if (b->size <= BLOCK_PREFETCH_MAX) {
        for (uint32_t off = 0; off < b->size; off += 64)
            __builtin_prefetch(b->data + off);
    } else {
        __builtin_prefetch(b->data + b->restart_offset);
    }
}

void block_rsearch_start(const block *b, block_rsearch *s)
{
    const char *p = b->data + b->restart_offset, *end = p + 4 * (size_t)b->num_restarts;
    for (; p < end; p += 64)
        __builtin_prefetch(p);
    __builtin_prefetch(end - 1);
    s->left = 0;
    s->right = b->num_restarts ? b->num_restarts - 1 : 0;
    s->primed = 0;
}

int block_rsearch_step(const block *b, block_rsearch *s, slice target)
{
    if (s->left < s->right && s->primed) { /* the probe of block_iter_seek's loop */
        uint32_t mid = s->left + (s->right - s->left + 1) / 2;
        slice k;
        if (!block_restart_key(b, mid, BLOCK_CMP_IKEY, &k))
            s->right = s->left; /* damaged: the lookup's own seek reports it */
        else if (ikey_compare(k, target) < 0)
            s->left = mid;
        else
            s->right = mid - 1;
    }
    if (s->left >= s->right) {
        if (b->num_restarts) prefetch_interval(b, s->left);
        return 1;
    }
    __builtin_prefetch(b->data + restart_point(b, s->left + (s->right - s->left + 1) / 2));
    s->primed = 1;
    return 0;
}

void block_iter_seek(block_iter *it, slice target)
{
    if (it->status != ENG_OK) return;
    block_prefetch(it->b);
    /* Find the last restart point whose key is < target. */
    uint32_t left = 0, right = it->b->num_restarts - 1;
    while (left < right) {
        uint32_t mid = left + (right - left + 1) / 2;
        slice k;
        if (!block_restart_key(it->b, mid, it->cmp, &k)) {
            corrupted(it);
            return;
        }
        if (compare(it, k, target) < 0)
            left = mid;
        else
            right = mid - 1;
    }
    block_iter_seek_from(it, left, target);
}
