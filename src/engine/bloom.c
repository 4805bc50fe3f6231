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
 * A skip list after the filter (bloom.h, BLOOM_SKIP_TAG) names the key
 * prefixes the table's keys were left out of the filter under
 * (eng_filter_policy); lookups of keys under them do not consult the bits.
 * The list is sorted and prefix-free, so the greatest prefix <= key is the
 * only one that can be a prefix of key (any greater prefix <= key would
 * differ from that one inside it, upwards, and so exceed key).
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

void bloom_append_skips(buf *out, const slice *p, size_t n)
{
    size_t start = out->len;
    for (size_t i = 0; i < n; i++) {
        char len = (char)p[i].size;
        buf_append(out, &len, 1);
        buf_append(out, p[i].data, p[i].size);
    }
    char trailer[5];
    enc_fixed32(trailer, (uint32_t)(out->len - start));
    trailer[4] = (char)BLOOM_SKIP_TAG;
    buf_append(out, trailer, 5);
}

static int starts_with(slice key, slice p)
{
    return key.size >= p.size && memcmp(key.data, p.data, p.size) == 0;
}

int bloom_split(const char *filter, size_t len, size_t *bloom_len, slice **skips, size_t *nskips)
{
    *bloom_len = len;
    *skips = NULL;
    *nskips = 0;
    if (len < 5 || (unsigned char)filter[len - 1] != BLOOM_SKIP_TAG) return 0;
    uint32_t size = dec_fixed32(filter + len - 5);
    if (size > len - 5) return -1;
    const char *p = filter + len - 5 - size, *end = filter + len - 5;
    size_t n = 0;
    for (const char *q = p; q < end; q += 1 + (unsigned char)*q)
        n++;
    if (n > BLOOM_MAX_SKIPS) return -1;
    slice *v = n ? malloc(n * sizeof(*v)) : NULL;
    if (n && !v) return -1;
    size_t i = 0;
    for (; p < end; i++) {
        size_t l = (unsigned char)*p++;
        if (l < 1 || l > 64 || l > (size_t)(end - p)) break;
        v[i] = slice_make(p, l);
        p += l;
        if (i && (slice_compare(v[i - 1], v[i]) >= 0 || starts_with(v[i], v[i - 1]))) break;
    }
    if (p != end || i != n) {
        free(v);
        return -1;
    }
    *bloom_len = len - 5 - size;
    *skips = v;
    *nskips = n;
    return 0;
}

int bloom_skipped(const slice *skips, size_t n, slice key)
{
    size_t lo = 0, hi = n; /* the first prefix > key is at lo */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (slice_compare(skips[mid], key) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && starts_with(key, skips[lo - 1]);
}
