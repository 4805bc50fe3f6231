/*
 * ks_rdb_pack.c -- readers of the packed containers inside RDB payloads
 * (ks_rdb.h), checked as they are walked so a damaged blob is an error,
 * never a read outside it.
 *
 *   listpack = total:u32le count:u16le { entry }* 0xFF
 *     entry  = enc data backlen       backlen: len(enc data) in 7-bit
 *                                     groups, read right to left
 *     enc    = 0xxxxxxx (uint7) | 10llllll (str, 6-bit len)
 *            | 110xxxxx x (int13) | 1110llll l (str, 12-bit len)
 *            | 0xF0 len:u32le (str) | 0xF1 i16 | 0xF2 i24 | 0xF3 i32
 *            | 0xF4 i64 (little-endian, two's complement)
 *     count 65535 means "unknown" (the entries are counted).
 *   intset   = width:u32le (2, 4, 8) count:u32le { int:width le }*count,
 *              strictly ascending
 *   ziplist  = bytes:u32le tail:u32le count:u16le { entry }* 0xFF
 *     entry  = prevlen (u8 < 254 | 0xFE u32le) enc data
 *     enc    = 00llllll | 01llllll l (14-bit, big-endian) | 0x80 u32be
 *            | 0xC0 i16 | 0xD0 i32 | 0xE0 i64 | 0xF0 i24 | 0xFE i8
 *            | 0xF1..0xFD (immediate 0..12)
 */
#include <stdio.h>
#include <string.h>

#include "keyspace/ks_rdb.h"

static uint64_t le(const unsigned char *p, int k)
{
    uint64_t v = 0;
    for (int i = k - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* The k-byte little-endian two's complement integer at p. */
static int64_t sle(const unsigned char *p, int k)
{
    uint64_t v = le(p, k);
    if (k < 8 && (v >> (8 * k - 1)) & 1) v |= ~0ULL << (8 * k);
    return (int64_t)v;
}

static int emit_int(ks_rdb_elem_fn fn, void *arg, int64_t v)
{
    char buf[24];
    int n = snprintf(buf, sizeof(buf), "%lld", (long long)v);
    return fn(arg, buf, (size_t)n);
}

/* Bytes of a listpack back-length for an entry of l bytes (Redis's
 * lpEncodeBacklen thresholds). */
static size_t backlen_size(uint64_t l)
{
    return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

int ks_rdb_listpack(const unsigned char *p, size_t n, ks_rdb_elem_fn fn, void *arg)
{
    if (n < 7 || le(p, 4) != n || p[n - 1] != 0xFF) return -1;
    uint64_t want = le(p + 4, 2), seen = 0;
    const unsigned char *q = p + 6, *end = p + n - 1;
    while (q < end) {
        unsigned b = q[0];
        uint64_t hdr, len = 0;
        int64_t iv = 0;
        int is_int = 1;
        size_t room = (size_t)(end - q);
        if (b < 0x80) {
            hdr = 1, iv = b;
        } else if ((b & 0xC0) == 0x80) {
            hdr = 1, len = b & 0x3f, is_int = 0;
        } else if ((b & 0xE0) == 0xC0) {
            if (room < 2) return -1;
            hdr = 2;
            iv = (int64_t)(((b & 0x1f) << 8) | q[1]);
            if (iv >= 4096) iv -= 8192;
        } else if ((b & 0xF0) == 0xE0) {
            if (room < 2) return -1;
            hdr = 2, len = ((b & 0x0f) << 8) | q[1], is_int = 0;
        } else if (b == 0xF0) {
            if (room < 5) return -1;
            hdr = 5, len = le(q + 1, 4), is_int = 0;
        } else if (b >= 0xF1 && b <= 0xF4) {
            int k = b == 0xF1 ? 2 : b == 0xF2 ? 3 : b == 0xF3 ? 4 : 8;
            if (room < (size_t)k + 1) return -1;
            hdr = 1 + (uint64_t)k;
            iv = sle(q + 1, k);
        } else {
            return -1;
        }
        uint64_t elen = hdr + len;
        if (elen > room || backlen_size(elen) > room - elen) return -1;
        /* The back-length: big-endian 7-bit groups, the high bit set on all
         * but the first byte. */
        const unsigned char *bl = q + elen;
        size_t bs = backlen_size(elen);
        uint64_t got = 0;
        for (size_t i = 0; i < bs; i++) {
            if (((bl[i] & 0x80) != 0) != (i > 0)) return -1;
            got = (got << 7) | (bl[i] & 0x7f);
        }
        if (got != elen) return -1;
        int stop = is_int ? emit_int(fn, arg, iv) : fn(arg, (const char *)q + hdr, len);
        if (stop) return -1;
        q += elen + bs;
        seen++;
    }
    return want == 65535 || want == seen ? 0 : -1;
}

int ks_rdb_intset(const unsigned char *p, size_t n, ks_rdb_elem_fn fn, void *arg)
{
    if (n < 8) return -1;
    uint64_t w = le(p, 4), count = le(p + 4, 4);
    if ((w != 2 && w != 4 && w != 8) || count == 0 || (n - 8) / w != count || (n - 8) % w)
        return -1;
    for (uint64_t i = 0; i < count; i++) {
        int64_t v = sle(p + 8 + i * w, (int)w);
        if (i && v <= sle(p + 8 + (i - 1) * w, (int)w)) return -1;
        if (emit_int(fn, arg, v)) return -1;
    }
    return 0;
}

int ks_rdb_ziplist(const unsigned char *p, size_t n, ks_rdb_elem_fn fn, void *arg)
{
    if (n < 11 || le(p, 4) != n || p[n - 1] != 0xFF) return -1;
    uint64_t want = le(p + 8, 2), seen = 0;
    const unsigned char *q = p + 10, *end = p + n - 1;
    while (q < end) {
        size_t room = (size_t)(end - q);
        size_t pl = q[0] < 254 ? 1 : 5;
        if (q[0] == 255 || room < pl + 1) return -1;
        q += pl, room -= pl;
        unsigned b = q[0];
        uint64_t hdr = 1, len = 0;
        int64_t iv = 0;
        int is_int = 0;
        if ((b >> 6) == 0) {
            len = b & 0x3f;
        } else if ((b >> 6) == 1) {
            if (room < 2) return -1;
            hdr = 2, len = ((b & 0x3f) << 8) | q[1];
        } else if (b == 0x80) {
            if (room < 5) return -1;
            hdr = 5, len = (uint64_t)q[1] << 24 | (uint64_t)q[2] << 16 | q[3] << 8 | q[4];
        } else {
            int k = b == 0xC0   ? 2
                    : b == 0xD0 ? 4
                    : b == 0xE0 ? 8
                    : b == 0xF0 ? 3
                    : b == 0xFE ? 1
                                : 0;
            is_int = 1;
            if (k) {
                if (room < (size_t)k + 1) return -1;
                hdr = 1 + (uint64_t)k;
                iv = sle(q + 1, k);
            } else if (b >= 0xF1 && b <= 0xFD) {
                iv = (int64_t)(b & 0x0f) - 1;
            } else {
                return -1;
            }
        }
        if (hdr + len > room) return -1;
        int stop = is_int ? emit_int(fn, arg, iv) : fn(arg, (const char *)q + hdr, len);
        if (stop) return -1;
        q += hdr + len;
        seen++;
    }
    return want == 65535 || want == seen ? 0 : -1;
}
