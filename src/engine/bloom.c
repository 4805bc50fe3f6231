/*
 * bloom.c -- builds and probes the table bloom filter (format in bloom.h and
 * table_format.md, "Filter block"):
 *
 *   filter = bits[size - 1] k:u8
 *
 * Bit i lives in byte i / 8 at bit position i % 8. k = round(bits_per_key *
 * ln 2), between 1 and 30; a stored k outside that range (a future format)
 * makes every probe answer "may match". The false-positive rate is about
 * (1 - e^(-k/bits_per_key))^k: 0.82% at 10 bits per key.
 */
#include "bloom.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

uint64_t bloom_hash(slice key)
{
    return XXH3_64bits(key.data, key.size);
}

/* Maps x uniformly onto [0, m) without a division (Lemire's fastrange). */
static inline uint64_t fastrange(uint64_t x, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)x * m) >> 64);
}

/* The probe step: the hash rotated by half, odd so that successive probes
 * never repeat a position modulo 2^64. */
static inline uint64_t probe_delta(uint64_t h)
{
    return ((h >> 32) | (h << 32)) | 1;
}

void bloom_build(buf *out, const uint64_t *hashes, size_t n, int bits_per_key)
{
    if (bits_per_key < 1) bits_per_key = 1;
    if (bits_per_key > 64) bits_per_key = 64;
    int k = (int)(bits_per_key * 0.69 + 0.5); /* ln 2 */
    if (k < 1) k = 1;
    if (k > 30) k = 30;
    uint64_t bits = (uint64_t)n * (uint64_t)bits_per_key;
    if (bits < 64) bits = 64; /* tiny tables would otherwise see many false positives */
    uint64_t bytes = (bits + 7) / 8;
    bits = bytes * 8;

    size_t start = out->len;
    buf_reserve(out, bytes + 1);
    memset(out->data + start, 0, bytes);
    out->len += bytes;
    unsigned char *array = (unsigned char *)out->data + start;
    for (size_t i = 0; i < n; i++) {
        uint64_t h = hashes[i], d = probe_delta(h);
        for (int j = 0; j < k; j++) {
            uint64_t pos = fastrange(h, bits);
            array[pos >> 3] |= (unsigned char)(1u << (pos & 7));
            h += d;
        }
    }
    char kb = (char)k;
    buf_append(out, &kb, 1);
}

int bloom_may_match(const char *filter, size_t len, uint64_t hash)
{
    if (len < 2) return 1;
    const unsigned char *array = (const unsigned char *)filter;
    int k = array[len - 1];
    if (k < 1 || k > 30) return 1;
    uint64_t bits = (uint64_t)(len - 1) * 8;
    uint64_t h = hash, d = probe_delta(hash);
    for (int j = 0; j < k; j++) {
        uint64_t pos = fastrange(h, bits);
        if (!(array[pos >> 3] & (1u << (pos & 7)))) return 0;
        h += d;
    }
    return 1;
}
