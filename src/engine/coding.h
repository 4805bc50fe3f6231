/*
 * coding.h -- byte slices, fixed-width little-endian and varint encodings,
 * and the checksum used by every engine file format (see FORMAT.md).
 */
#ifndef STRATA_CODING_H
#define STRATA_CODING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A borrowed byte range; never owns its data. */
typedef struct slice {
    const char *data;
    size_t size;
} slice;

static inline slice slice_make(const char *d, size_t n)
{
    slice s = {d, n};
    return s;
}

/* Bytewise order, shorter first on a common prefix; <0, 0, >0 as memcmp. */
static inline int slice_compare(slice a, slice b)
{
    size_t n = a.size < b.size ? a.size : b.size;
    int r = n ? memcmp(a.data, b.data, n) : 0;
    if (r) return r;
    return a.size < b.size ? -1 : a.size > b.size ? 1 : 0;
}

static inline void enc_fixed32(char *p, uint32_t v)
{
    memcpy(p, &v, 4);
} /* x86/LE hosts */
static inline void enc_fixed64(char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static inline uint32_t dec_fixed32(const char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t dec_fixed64(const char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Writes v as a varint (7 bits a byte, low groups first); returns the end. */
static inline char *enc_varint64(char *p, uint64_t v)
{
    unsigned char *u = (unsigned char *)p;
    while (v >= 128) {
        *u++ = (unsigned char)(v | 128);
        v >>= 7;
    }
    *u++ = (unsigned char)v;
    return (char *)u;
}
static inline char *enc_varint32(char *p, uint32_t v)
{
    return enc_varint64(p, v);
}

/* Parses a varint in [p, limit); returns the byte after it, or NULL when the
 * varint is truncated or longer than 10 bytes (corrupt input). */
static inline const char *dec_varint64(const char *p, const char *limit, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; shift <= 63 && p < limit; shift += 7) {
        uint64_t b = (unsigned char)*p++;
        r |= (b & 127) << shift;
        if (!(b & 128)) {
            if (shift == 63 && b > 1) return NULL; /* bits beyond 64: corrupt */
            *v = r;
            return p;
        }
    }
    return NULL;
}
static inline const char *dec_varint32(const char *p, const char *limit, uint32_t *v)
{
    uint64_t x;
    p = dec_varint64(p, limit, &x);
    if (!p || x > UINT32_MAX) return NULL;
    *v = (uint32_t)x;
    return p;
}
static inline int varint_length(uint64_t v)
{
    int n = 1;
    while (v >= 128) {
        v >>= 7;
        n++;
    }
    return n;
}

/* The checksum of every on-disk record and block: the low 32 bits of XXH3-64,
 * seeded with 0. */
uint32_t eng_checksum(const char *data, size_t n);

/* A growable byte buffer (used by builders and encoders). */
typedef struct buf {
    char *data;
    size_t len, cap;
} buf;
void buf_reserve(buf *b, size_t extra); /* aborts on out-of-memory */
static inline void buf_append(buf *b, const void *d, size_t n)
{
    if (b->len + n > b->cap) buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, d, n);
    b->len += n;
}
static inline void buf_put_varint(buf *b, uint64_t v)
{
    if (b->len + 10 > b->cap) buf_reserve(b, 10);
    b->len = (size_t)(enc_varint64(b->data + b->len, v) - b->data);
}
static inline void buf_put_fixed32(buf *b, uint32_t v)
{
    buf_append(b, &v, 4);
}
static inline void buf_put_fixed64(buf *b, uint64_t v)
{
    buf_append(b, &v, 8);
}
static inline void buf_put_slice(buf *b, slice s)
{
    buf_put_varint(b, s.size);
    buf_append(b, s.data, s.size);
}
void buf_free(buf *b);

#endif
