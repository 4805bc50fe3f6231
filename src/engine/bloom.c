/*
 * bloom.c -- builds and probes the table bloom filter (format in bloom.h and
 * table_format.md, "Filter block").
 *
 * Filters are written blocked ("cache-local"): the bits are 64-byte lines
 * and every probe of one key falls in the one line its hash picks, so a
 * lookup costs one cache miss per table instead of up to k. The line is
 * fastrange(h, lines) (the hash's high bits), and probe j tests bit
 * g_j >> 23 of the line, g_0 = low 32 bits of h, g_{j+1} = g_j * 0x9E3779B9
 * (mod 2^32), bit b being bit b % 8 of byte b / 8. k = round(0.6 *
 * bits_per_key), 1..30; 0.95% false positives at 10 bits per key (a
 * classic filter at k = 7 has 0.82%, for up to seven misses per positive).
 *
 * Classic filters (tables written before) are still read: bit i in byte
 * i / 8 at bit position i % 8, k = round(bits_per_key * ln 2), probes
 * h + i * d mapped onto the whole array. A trailer this code does not know
 * makes every probe answer "may match".
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

#define LINE 64 /* bytes of a blocked filter's line: one cache line */
#define LINE_MUL 0x9E3779B9u

void bloom_build(buf *out, const uint64_t *hashes, size_t n, int bits_per_key)
{
    if (bits_per_key < 1) bits_per_key = 1;
    if (bits_per_key > 64) bits_per_key = 64;
    int k = (int)(bits_per_key * 0.6 + 0.5); /* below ln 2: a line fills unevenly */
    if (k < 1) k = 1;
    if (k > 30) k = 30;
    uint64_t lines = ((uint64_t)n * (uint64_t)bits_per_key + LINE * 8 - 1) / (LINE * 8);
    if (lines < 1) lines = 1;
    size_t start = out->len, bytes = (size_t)lines * LINE;
    buf_reserve(out, bytes + 2);
    memset(out->data + start, 0, bytes);
    out->len += bytes;
    unsigned char *array = (unsigned char *)out->data + start;
    for (size_t i = 0; i < n; i++) {
        unsigned char *line = array + fastrange(hashes[i], lines) * LINE;
        uint32_t g = (uint32_t)hashes[i];
        for (int j = 0; j < k; j++, g *= LINE_MUL)
            line[g >> 26] |= (unsigned char)(1u << ((g >> 23) & 7));
    }
    char trailer[2] = {(char)k, (char)BLOOM_BLOCKED_TAG};
    buf_append(out, trailer, 2);
}

/* A blocked filter's line count and k, or 0 when filter is not one. */
static inline uint64_t blocked_lines(const unsigned char *f, size_t len, int *k)
{
    if (len < LINE + 2 || f[len - 1] != BLOOM_BLOCKED_TAG || (len - 2) % LINE) return 0;
    *k = f[len - 2];
    return *k >= 1 && *k <= 30 ? (len - 2) / LINE : 0;
}

void bloom_prefetch(const char *filter, size_t len, uint64_t hash)
{
    int k;
    uint64_t lines = blocked_lines((const unsigned char *)filter, len, &k);
    if (lines) __builtin_prefetch(filter + fastrange(hash, lines) * LINE);
}

int bloom_may_match(const char *filter, size_t len, uint64_t hash)
{
    if (len < 2) return 1;
    const unsigned char *array = (const unsigned char *)filter;
    int k = array[len - 1];
    uint64_t lines = blocked_lines(array, len, &k);
    if (lines) {
        const unsigned char *line = array + fastrange(hash, lines) * LINE;
        uint32_t g = (uint32_t)hash;
        for (int j = 0; j < k; j++, g *= LINE_MUL)
            if (!(line[g >> 26] & (1u << ((g >> 23) & 7)))) return 0;
        return 1;
    }
    k = array[len - 1]; /* classic */
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
