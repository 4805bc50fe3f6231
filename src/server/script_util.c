/*
 * script_util.c -- small pieces the scripting files share: SHA1 (script
 * names and redis.sha1hex), the 48-bit linear congruential generator
 * behind math.random (the drand48 family's constants, so a seed gives the
 * same sequence as in Redis on every platform) and the script flag names.
 */
#include <stdint.h>
#include <string.h>

#include "server/script.h"

const script_flag_name script_flag_names[] = {
    {SCRIPT_FLAG_NO_WRITES, "no-writes"},
    {SCRIPT_FLAG_ALLOW_OOM, "allow-oom"},
    {SCRIPT_FLAG_ALLOW_STALE, "allow-stale"},
    {SCRIPT_FLAG_NO_CLUSTER, "no-cluster"},
    {SCRIPT_FLAG_ALLOW_CROSS_SLOT, "allow-cross-slot-keys"},
    {0, NULL},
};

/* ---- SHA1 (FIPS 180-1) --------------------------------------------------- */

static uint32_t rol(uint32_t v, int n)
{
    return (v << n) | (v >> (32 - n));
}

static void sha1_block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20)
            f = (b & c) | (~b & d), k = 0x5A827999;
        else if (i < 40)
            f = b ^ c ^ d, k = 0x6ED9EBA1;
        else if (i < 60)
            f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
        else
            f = b ^ c ^ d, k = 0xCA62C1D6;
        uint32_t t = rol(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

void script_sha1(unsigned char out[20], const void *data, size_t n)
{
    uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    const unsigned char *p = (const unsigned char *)data;
    size_t left = n;
    for (; left >= 64; left -= 64, p += 64)
        sha1_block(h, p);
    unsigned char tail[128];
    memset(tail, 0, sizeof(tail));
    if (left) memcpy(tail, p, left);
    tail[left] = 0x80;
    size_t tl = left < 56 ? 64 : 128;
    uint64_t bits = (uint64_t)n * 8;
    for (int i = 0; i < 8; i++)
        tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
    sha1_block(h, tail);
    if (tl == 128) sha1_block(h, tail + 64);
    for (int i = 0; i < 20; i++)
        out[i] = (unsigned char)(h[i / 4] >> (24 - 8 * (i % 4)));
}

void script_sha1hex(char out[41], const char *data, size_t n)
{
    unsigned char d[20];
    script_sha1(d, data, n);
    script_hex(out, d, 20);
}

void script_hex(char *out, const unsigned char *d, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * n] = '\0';
}

/* ---- rand48 ----------------------------------------------------------------
 * X(n+1) = (0x5DEECE66D * X(n) + 0xB) mod 2^48; a draw is the top 31 bits.
 * The initial state and the seeding (seed in the high 32 bits, 0x330E
 * below) are those of the drand48 family. */
static uint64_t rand_state = 0x1234ABCD330EULL;

int32_t script_rand48(void)
{
    rand_state = (0x5DEECE66DULL * rand_state + 0xB) & ((1ULL << 48) - 1);
    return (int32_t)(rand_state >> 17);
}

void script_srand48(int32_t seed)
{
    rand_state = ((uint64_t)(uint32_t)seed << 16) | 0x330E;
}
