/*
 * block_fuzz.c -- libFuzzer target for the table block reader (block.c).
 *
 * Input: a flags byte, then (flags bit 0)
 *   0  raw:   the rest is a block's contents, parsed with block_parse and
 *             walked by a pseudo-random script of seek_first, seek_last,
 *             seek, seek_from, next and prev (seeded from the input). The
 *             contents sit in a buffer of exactly their size, so ASan
 *             reports any read outside them. Checked: nothing crashes or
 *             overreads; a valid entry's value lies inside the entry area;
 *             next moves forward and prev backward; a seek lands on a key
 *             >= its target; a failure is ENG_CORRUPTION and final.
 *   1  built: the rest describes entries (per entry: key length byte, key
 *             bytes, value length byte, value bytes; a length byte >= 0xc0
 *             makes a long key of (b - 0xc0) * 8 filler bytes), sorted and
 *             written with block_builder at a restart interval taken from
 *             the next byte. The reader must then give exactly the model:
 *             the same entries forwards and backwards, every seek landing on
 *             the model's lower bound, next/prev after a seek agreeing.
 * Flags bit 1 picks the key order: bytewise or internal keys (Invariant K1;
 * in built mode each key then gets an 8-byte trailer from the input).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/block.h"
#include "engine/block_builder.h"
#include "engine/dbformat.h"

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static int cmp_keys(int cmp, slice a, slice b)
{
    return cmp == BLOCK_CMP_IKEY ? ikey_compare(a, b) : slice_compare(a, b);
}

/* Touches every byte of the current entry (ASan checks the reads) and
 * checks that the value lies inside the entry area of the block. */
static void check_entry(const block_iter *it, const block *b)
{
    slice k = block_iter_key(it), v = block_iter_value(it);
    volatile unsigned sum = 0;
    for (size_t i = 0; i < k.size; i++)
        sum += (unsigned char)k.data[i];
    for (size_t i = 0; i < v.size; i++)
        sum += (unsigned char)v.data[i];
    if (v.size && (v.data < b->data || v.data + v.size > b->data + b->restart_offset)) abort();
    if (it->cmp == BLOCK_CMP_IKEY && k.size < 8) abort();
    if (it->current >= b->restart_offset) abort();
}

/* ---- raw mode ----------------------------------------------------------- */

static slice raw_target(const uint8_t *d, size_t n, int cmp, char *tmp, size_t cap)
{
    size_t len = rnd() % 24;
    if (cmp == BLOCK_CMP_IKEY && len < 8) len = 8;
    if (len > cap) len = cap;
    for (size_t i = 0; i < len; i++)
        tmp[i] = n ? (char)d[(rnd() % n)] : (char)rnd();
    return slice_make(tmp, len);
}

static void fuzz_raw(const uint8_t *d, size_t n, int cmp)
{
    char *copy = malloc(n ? n : 1); /* exact size; owned by the block */
    if (!copy) abort();
    if (n) memcpy(copy, d, n);
    block b;
    if (block_parse(&b, copy, n, copy) != ENG_OK) return; /* freed copy */
    if (b.restart_offset > b.size || b.num_restarts == 0) abort();

    for (uint32_t i = 0; i < b.num_restarts + 1; i++) {
        slice k;
        if (block_restart_key(&b, i, cmp, &k) &&
            (k.data < b.data || k.data + k.size > b.data + b.restart_offset))
            abort();
    }
    block_iter it;
    block_iter_init(&it, &b, cmp);
    char tmp[32];
    for (int step = 0; step < 200; step++) {
        uint32_t was = it.current;
        int valid = block_iter_valid(&it);
        switch (rnd() % 6) {
        case 0:
            block_iter_seek_first(&it);
            break;
        case 1:
            block_iter_seek_last(&it);
            break;
        case 2: {
            slice t = raw_target(d, n, cmp, tmp, sizeof(tmp));
            block_iter_seek(&it, t);
            if (block_iter_valid(&it) && cmp_keys(cmp, block_iter_key(&it), t) < 0) abort();
            break;
        }
        case 3: {
            slice t = raw_target(d, n, cmp, tmp, sizeof(tmp));
            block_iter_seek_from(&it, rnd() % (b.num_restarts + 1), t);
            break;
        }
        case 4:
            if (!valid) continue;
            block_iter_next(&it);
            if (block_iter_valid(&it) && it.current <= was) abort();
            break;
        default:
            if (!valid) continue;
            block_iter_prev(&it);
            if (block_iter_valid(&it) && it.current >= was) abort();
            break;
        }
        eng_status s = block_iter_status(&it);
        if (s != ENG_OK && (s != ENG_CORRUPTION || block_iter_valid(&it))) abort();
        if (block_iter_valid(&it)) check_entry(&it, &b);
        if (s != ENG_OK) { /* corruption is final */
            block_iter_seek_first(&it);
            if (block_iter_valid(&it) || block_iter_status(&it) != s) abort();
            break;
        }
    }
    block_iter_cleanup(&it);
    block_release(&b);
}

/* ---- built mode ------------------------------------------------------------ */

typedef struct kv {
    char *k, *v;
    size_t kl, vl;
} kv;

static int g_cmp; /* for qsort */
static int kv_order(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    return cmp_keys(g_cmp, slice_make(x->k, x->kl), slice_make(y->k, y->kl));
}

/* Reads one length-prefixed field; long fields are filler plus a tag. */
static char *take(const uint8_t **p, const uint8_t *end, size_t *len, int allow_long)
{
    if (*p >= end) return NULL;
    size_t n = *(*p)++;
    char *s;
    if (allow_long && n >= 0xc0) {
        n = (n - 0xc0) * 8 + 1;
        s = malloc(n);
        if (!s) abort();
        memset(s, 'x', n);
        s[n - 1] = *p < end ? (char)*(*p)++ : 0;
    } else {
        if (allow_long) n %= 24;
        if (n > (size_t)(end - *p)) n = (size_t)(end - *p);
        s = malloc(n + 1);
        if (!s) abort();
        memcpy(s, *p, n);
        *p += n;
    }
    *len = n;
    return s;
}

/* Index of the first model entry >= t (the lower bound). */
static size_t lower_bound(const kv *m, size_t n, int cmp, slice t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cmp_keys(cmp, slice_make(m[mid].k, m[mid].kl), t) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The iterator must be at model entry i (invalid when i == n). */
static void expect_at(const block_iter *it, const kv *m, size_t n, size_t i)
{
    if (block_iter_status(it) != ENG_OK) abort();
    if (i == n) {
        if (block_iter_valid(it)) abort();
        return;
    }
    if (!block_iter_valid(it)) abort();
    slice k = block_iter_key(it), v = block_iter_value(it);
    if (k.size != m[i].kl || memcmp(k.data, m[i].k, k.size) != 0) abort();
    if (v.size != m[i].vl || (v.size && memcmp(v.data, m[i].v, v.size) != 0)) abort();
}

/* Checks a seek to t and the moves after it against the model. */
static void check_seek(block_iter *it, const kv *m, size_t n, int cmp, slice t)
{
    size_t i = lower_bound(m, n, cmp, t);
    block_iter_seek(it, t);
    expect_at(it, m, n, i);
    if (i == n) return;
    if (i > 0) {
        block_iter_prev(it);
        expect_at(it, m, n, i - 1);
        block_iter_next(it);
        expect_at(it, m, n, i);
    }
    block_iter_next(it);
    expect_at(it, m, n, i + 1);
}

static void fuzz_built(const uint8_t *d, size_t n, int cmp)
{
    if (n == 0) return;
    int interval = d[0] % 17 + 1;
    const uint8_t *p = d + 1, *end = d + n;
    kv *m = NULL;
    size_t cnt = 0, cap = 0;
    while (p < end) {
        kv e;
        size_t ul;
        char *uk = take(&p, end, &ul, 1);
        if (!uk) break;
        if (cmp == BLOCK_CMP_IKEY) { /* user key | trailer from the input */
            uint64_t tr = 0;
            for (int j = 0; j < 8 && p < end; j++)
                tr |= (uint64_t)*p++ << (8 * j);
            e.k = realloc(uk, ul + 8);
            if (!e.k) abort();
            enc_fixed64(e.k + ul, tr);
            e.kl = ul + 8;
        } else {
            e.k = uk;
            e.kl = ul;
        }
        e.v = take(&p, end, &e.vl, 0);
        if (!e.v) {
            e.v = malloc(1);
            e.vl = 0;
        }
        if (cnt == cap) {
            cap = cap ? 2 * cap : 16;
            m = realloc(m, cap * sizeof(kv));
            if (!m) abort();
        }
        m[cnt++] = e;
    }
    g_cmp = cmp;
    if (cnt) qsort(m, cnt, sizeof(kv), kv_order);
    size_t u = 0; /* drop duplicate keys: a block holds each key once */
    for (size_t i = 0; i < cnt; i++) {
        if (u && kv_order(&m[u - 1], &m[i]) == 0) {
            free(m[i].k);
            free(m[i].v);
            continue;
        }
        m[u++] = m[i];
    }
    cnt = u;

    block_builder bb;
    block_builder_init(&bb, interval);
    for (size_t i = 0; i < cnt; i++)
        block_builder_add(&bb, slice_make(m[i].k, m[i].kl), slice_make(m[i].v, m[i].vl));
    slice c = block_builder_finish(&bb);
    char *copy = malloc(c.size);
    if (!copy) abort();
    memcpy(copy, c.data, c.size);
    block_builder_free(&bb);
    block b;
    if (block_parse(&b, copy, c.size, copy) != ENG_OK) abort();

    block_iter it;
    block_iter_init(&it, &b, cmp);
    size_t i = 0;
    for (block_iter_seek_first(&it); i < cnt; block_iter_next(&it))
        expect_at(&it, m, cnt, i++);
    expect_at(&it, m, cnt, cnt);
    i = cnt;
    for (block_iter_seek_last(&it); i > 0; block_iter_prev(&it))
        expect_at(&it, m, cnt, --i);
    if (block_iter_valid(&it) || block_iter_status(&it) != ENG_OK) abort();

    char tbuf[600];
    for (size_t j = 0; j < cnt; j++) {
        slice k = slice_make(m[j].k, m[j].kl);
        check_seek(&it, m, cnt, cmp, k);
        if (k.size + 1 > sizeof(tbuf)) continue;
        /* just after and just before k */
        memcpy(tbuf, k.data, k.size);
        if (cmp == BLOCK_CMP_IKEY) {
            uint64_t tr = ikey_trailer(k);
            enc_fixed64(tbuf + k.size - 8, tr - 1);
            check_seek(&it, m, cnt, cmp, slice_make(tbuf, k.size));
            enc_fixed64(tbuf + k.size - 8, tr + 1);
            check_seek(&it, m, cnt, cmp, slice_make(tbuf, k.size));
        } else {
            tbuf[k.size] = 0;
            check_seek(&it, m, cnt, cmp, slice_make(tbuf, k.size + 1));
            if (k.size) check_seek(&it, m, cnt, cmp, slice_make(tbuf, k.size - 1));
        }
    }
    memset(tbuf, 0xff, 16);
    check_seek(&it, m, cnt, cmp, slice_make(tbuf, 16));
    memset(tbuf, 0, 16);
    check_seek(&it, m, cnt, cmp, slice_make(tbuf, cmp == BLOCK_CMP_IKEY ? 8 : 0));

    block_iter_cleanup(&it);
    block_release(&b);
    for (size_t j = 0; j < cnt; j++) {
        free(m[j].k);
        free(m[j].v);
    }
    free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    int cmp = data[0] & 2 ? BLOCK_CMP_IKEY : BLOCK_CMP_BYTEWISE;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 1099511628211ULL;
    rng_state = h | 1;
    if (data[0] & 1)
        fuzz_built(data + 1, size - 1, cmp);
    else
        fuzz_raw(data + 1, size - 1, cmp);
    return 0;
}
