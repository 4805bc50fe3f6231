/*
 * idx_key_fuzz.c -- libFuzzer target for the index entry key encoding
 * (src/index/idx_key.c) and the entry decoder (idx_entry_hash_key).
 *
 * Input: a schema byte, then bytes.
 *   schema bits 0-1: field count - 1 (1..4); bits 2-5: per field, NUMERIC
 *   (else TAG); bit 6: DESC for every field; bit 7: UNIQUE.
 * Two checks per input:
 *   1. Decoding stored bytes never crashes or reads outside them: the rest
 *      of the input is taken as an entry key (and as its value) of that
 *      schema, as a corrupt table could hand it over; a decoded hash key
 *      must lie inside the bytes it came from.
 *   2. Round trip: the rest is split into up to 4 values (0xFE separates),
 *      encoded as the schema says and followed by a hash key; skipping each
 *      field gives back exactly its encoding, TAG values decode to
 *      themselves, NUMERIC values to the same number, and the hash key comes
 *      back unchanged.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/catalog.h"
#include "index/idx_key.h"

static void check_decode(const idx_def *d, const char *p, size_t n)
{
    const char *hk;
    size_t hkl;
    if (idx_entry_hash_key(d, p, n, p, n, &hk, &hkl) == 0) {
        if (hk < p || hk + hkl > p + n) abort();
    }
    size_t off = n < IDX_ENTRY_PREFIX_LEN ? n : IDX_ENTRY_PREFIX_LEN;
    idx_buf out = {0};
    for (size_t i = 0; i < d->nfields && off < n; i++) {
        size_t k = idx_key_skip_field(p + off, n - off, d->fields[i].numeric, d->fields[i].desc);
        if (!k) break;
        if (k > n - off) abort();
        if (d->fields[i].numeric) {
            (void)idx_key_get_num(p + off, d->fields[i].desc);
        } else {
            out.len = 0;
            (void)idx_key_get_tag(p + off, k, d->fields[i].desc, &out);
        }
        off += k;
    }
    idx_buf_free(&out);
}

static void check_round_trip(const idx_def *d, const char *p, size_t n)
{
    const char *vals[4];
    size_t lens[4], nv = 0;
    const char *start = p, *end = p + n;
    while (nv < d->nfields) {
        const char *sep = memchr(start, 0xFE, (size_t)(end - start));
        vals[nv] = start;
        lens[nv] = sep ? (size_t)(sep - start) : (size_t)(end - start);
        nv++;
        if (!sep) break;
        start = sep + 1;
    }
    if (nv < d->nfields) return;
    idx_buf e = {0}, out = {0};
    double nums[4];
    idx_key_entry_prefix(&e, 7);
    for (size_t i = 0; i < nv; i++) {
        if (d->fields[i].numeric) {
            if (idx_parse_num(vals[i], lens[i], &nums[i]) != 0) goto out;
            idx_key_put_num(&e, nums[i], d->fields[i].desc);
        } else {
            idx_key_put_tag(&e, vals[i], lens[i], d->fields[i].desc);
        }
    }
    idx_buf_append(&e, "hash-key", 8);
    size_t off = IDX_ENTRY_PREFIX_LEN;
    for (size_t i = 0; i < nv; i++) {
        size_t k =
            idx_key_skip_field(e.data + off, e.len - off, d->fields[i].numeric, d->fields[i].desc);
        if (!k) abort();
        if (d->fields[i].numeric) {
            double x = idx_key_get_num(e.data + off, d->fields[i].desc);
            if (!(x == nums[i])) abort();
        } else {
            out.len = 0;
            if (idx_key_get_tag(e.data + off, k, d->fields[i].desc, &out) != 0) abort();
            if (out.len != lens[i] || (lens[i] && memcmp(out.data, vals[i], lens[i]) != 0)) abort();
        }
        off += k;
    }
    if (e.len - off != 8 || memcmp(e.data + off, "hash-key", 8) != 0) abort();
    if (!d->unique) {
        const char *hk;
        size_t hkl;
        if (idx_entry_hash_key(d, e.data, e.len, "", 0, &hk, &hkl) != 0) abort();
        if (hkl != 8 || memcmp(hk, "hash-key", 8) != 0) abort();
    }
out:
    idx_buf_free(&e);
    idx_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    idx_def d;
    memset(&d, 0, sizeof(d));
    unsigned s = data[0];
    d.nfields = (s & 3) + 1;
    for (size_t i = 0; i < d.nfields; i++) {
        d.fields[i].numeric = (s >> (2 + i)) & 1;
        d.fields[i].desc = (s >> 6) & 1;
    }
    d.unique = (s >> 7) & 1;
    /* A copy of exactly the payload's size, so ASan sees any overread. */
    size_t n = size - 1;
    char *p = malloc(n ? n : 1);
    if (!p) return 0;
    memcpy(p, data + 1, n);
    check_decode(&d, p, n);
    check_round_trip(&d, p, n);
    free(p);
    return 0;
}
