/*
 * ks_rdb.c -- RDB primitives (ks_rdb.h): CRC-64, lengths, strings (plain,
 * integer-encoded, LZF-compressed) and the version/checksum footer, for
 * the DUMP/RESTORE and FUNCTION DUMP/RESTORE payloads. Pure functions.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_rdb.h"

static uint64_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t crc = i;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ ((crc & 1) ? 0x95AC9329AC4BC9B5ULL : 0);
        crc_table[i] = crc;
    }
}

uint64_t ks_rdb_crc64(uint64_t crc, const unsigned char *p, size_t n)
{
    pthread_once(&crc_once, crc_init);
    for (size_t i = 0; i < n; i++)
        crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return crc;
}

/* ---- Writing ------------------------------------------------------------ */

void ks_rdb_put(ks_rdb_out *o, const void *p, size_t n)
{
    if (o->oom) return;
    if (o->n + n > o->cap) {
        size_t cap = (o->n + n) * 2 + 64;
        unsigned char *np = realloc(o->p, cap);
        if (!np) {
            o->oom = 1;
            return;
        }
        o->p = np;
        o->cap = cap;
    }
    if (n) memcpy(o->p + o->n, p, n);
    o->n += n;
}

void ks_rdb_put_byte(ks_rdb_out *o, unsigned b)
{
    unsigned char c = (unsigned char)b;
    ks_rdb_put(o, &c, 1);
}

void ks_rdb_put_len(ks_rdb_out *o, uint64_t len)
{
    unsigned char h[9];
    size_t k;
    if (len < 64) {
        h[0] = (unsigned char)len;
        k = 1;
    } else if (len < 16384) {
        h[0] = (unsigned char)(0x40 | (len >> 8));
        h[1] = (unsigned char)len;
        k = 2;
    } else {
        int w = len <= 0xFFFFFFFFULL ? 4 : 8;
        h[0] = w == 4 ? 0x80 : 0x81;
        for (int i = 0; i < w; i++)
            h[1 + i] = (unsigned char)(len >> (8 * (w - 1 - i)));
        k = 1 + (size_t)w;
    }
    ks_rdb_put(o, h, k);
}

/* Redis's rdbTryIntegerEncoding: the string must be the canonical decimal
 * text of its value (no leading zeros, "+", spaces, "-0"). */
static int canonical_int(const char *s, size_t n, long long *v)
{
    char buf[32], *end;
    if (n == 0 || n > 11) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    long long x = strtoll(buf, &end, 10);
    if (*end) return 0;
    char back[32];
    if ((size_t)snprintf(back, sizeof(back), "%lld", x) != n || memcmp(back, s, n) != 0) return 0;
    *v = x;
    return 1;
}

void ks_rdb_put_string(ks_rdb_out *o, const char *s, size_t n)
{
    long long v;
    if (canonical_int(s, n, &v) && v >= INT32_MIN && v <= INT32_MAX) {
        unsigned char h[5];
        int w = v >= INT8_MIN && v <= INT8_MAX ? 1 : v >= INT16_MIN && v <= INT16_MAX ? 2 : 4;
        h[0] = (unsigned char)(0xC0 | (w == 1 ? 0 : w == 2 ? 1 : 2));
        for (int i = 0; i < w; i++)
            h[1 + i] = (unsigned char)((uint64_t)v >> (8 * i));
        ks_rdb_put(o, h, 1 + (size_t)w);
        return;
    }
    ks_rdb_put_len(o, n);
    ks_rdb_put(o, s, n);
}

void ks_rdb_put_footer(ks_rdb_out *o)
{
    unsigned char f[8] = {KS_RDB_VERSION & 0xff, KS_RDB_VERSION >> 8};
    ks_rdb_put(o, f, 2);
    if (o->oom) return;
    uint64_t crc = ks_rdb_crc64(0, o->p, o->n);
    for (int i = 0; i < 8; i++)
        f[i] = (unsigned char)(crc >> (8 * i));
    ks_rdb_put(o, f, 8);
}

/* ---- Reading ------------------------------------------------------------ */

int ks_rdb_open(const unsigned char *payload, size_t n, ks_rdb_in *body)
{
    if (n < 10) return -1;
    unsigned ver = payload[n - 10] | (unsigned)payload[n - 9] << 8;
    uint64_t want = 0;
    for (int i = 0; i < 8; i++)
        want |= (uint64_t)payload[n - 8 + i] << (8 * i);
    if (ver > KS_RDB_VERSION || ks_rdb_crc64(0, payload, n - 8) != want) return -1;
    body->p = payload;
    body->end = payload + n - 10;
    return 0;
}

int ks_rdb_get_len(ks_rdb_in *r, uint64_t *len, int *enc)
{
    *enc = -1;
    if (r->p >= r->end) return -1;
    unsigned char b0 = *r->p++;
    int type = b0 >> 6;
    if (type == 0) {
        *len = b0 & 0x3f;
    } else if (type == 1) {
        if (r->p >= r->end) return -1;
        *len = ((uint64_t)(b0 & 0x3f) << 8) | *r->p++;
    } else if (type == 3) {
        *enc = b0 & 0x3f;
        *len = 0;
    } else {
        int k = b0 == 0x80 ? 4 : b0 == 0x81 ? 8 : 0;
        if (!k || r->end - r->p < k) return -1;
        uint64_t v = 0;
        for (int i = 0; i < k; i++)
            v = (v << 8) | *r->p++;
        *len = v;
    }
    return 0;
}

int ks_rdb_get_count(ks_rdb_in *r, uint64_t *len)
{
    int enc;
    return ks_rdb_get_len(r, len, &enc) < 0 || enc >= 0 ? -1 : 0;
}

/* LZF: literal runs (ctrl < 32: ctrl+1 bytes) and back references. */
int ks_rdb_lzf_decompress(const unsigned char *in, size_t inl, char *out, size_t outl)
{
    const unsigned char *ip = in, *iend = in + inl;
    char *op = out, *oend = out + outl;
    while (ip < iend) {
        unsigned ctrl = *ip++;
        if (ctrl < 32) {
            ctrl++;
            if ((size_t)(oend - op) < ctrl || (size_t)(iend - ip) < ctrl) return -1;
            memcpy(op, ip, ctrl);
            op += ctrl;
            ip += ctrl;
        } else {
            unsigned len = ctrl >> 5;
            if (len == 7) {
                if (ip >= iend) return -1;
                len += *ip++;
            }
            if (ip >= iend) return -1;
            size_t back = ((ctrl & 0x1f) << 8) + *ip++ + 1;
            len += 2;
            if ((size_t)(op - out) < back || (size_t)(oend - op) < len) return -1;
            for (unsigned i = 0; i < len; i++, op++)
                *op = op[-(ptrdiff_t)back];
        }
    }
    return op == oend ? 0 : -1;
}

/* An LZF back reference of 3 input bytes makes at most 264 output bytes:
 * a claimed length beyond that ratio is a lie, refused before allocating. */
#define LZF_MAX_RATIO 90

int ks_rdb_get_string(ks_rdb_in *r, char **s, size_t *n)
{
    uint64_t len;
    int enc;
    *s = NULL;
    if (ks_rdb_get_len(r, &len, &enc) < 0) return -1;
    if (enc >= 0 && enc <= 2) {
        int k = 1 << enc;
        if (r->end - r->p < k) return -1;
        int64_t v = enc == 0   ? (int8_t)r->p[0]
                    : enc == 1 ? (int16_t)(r->p[0] | r->p[1] << 8)
                               : (int32_t)((uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 |
                                           (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24);
        r->p += k;
        *s = malloc(24);
        if (!*s) return -1;
        *n = (size_t)snprintf(*s, 24, "%lld", (long long)v);
        return 0;
    }
    if (enc == 3) {
        uint64_t clen, ulen;
        if (ks_rdb_get_count(r, &clen) < 0 || ks_rdb_get_count(r, &ulen) < 0) return -1;
        if (clen > (uint64_t)(r->end - r->p) || ulen / LZF_MAX_RATIO > clen) return -1;
        *s = malloc(ulen ? ulen : 1);
        if (!*s || ks_rdb_lzf_decompress(r->p, clen, *s, ulen) < 0) return free(*s), *s = NULL, -1;
        r->p += clen;
        *n = ulen;
        return 0;
    }
    if (enc >= 0 || len > (uint64_t)(r->end - r->p)) return -1;
    *s = malloc(len ? len : 1);
    if (!*s) return -1;
    if (len) memcpy(*s, r->p, len);
    r->p += len;
    *n = len;
    return 0;
}
