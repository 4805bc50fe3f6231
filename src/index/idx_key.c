/*
 * idx_key.c -- order-preserving encoding of index entry keys.
 *
 * Format (exact bytes in src/index/FORMAT.md):
 *   TAG ascending:  each byte b of the value as b, except 0x00 as 0x00 0xFF;
 *                   then the terminator 0x00 0x01.
 *   TAG DESC:       every byte of the ascending encoding inverted (~b), so
 *                   0x00 becomes 0xFF 0x00 and the terminator 0xFF 0xFE.
 *   NUMERIC:        the IEEE-754 bits of the double, big-endian, with the
 *                   sign bit flipped for values >= 0 and every bit inverted
 *                   for negative ones; DESC inverts all 8 bytes again.
 *
 * Why the TAG encoding orders correctly (Invariant K1 in idx_key.h): inside
 * an encoded value 0x00 is always followed by 0xFF, so the terminator 0x00
 * 0x01 cannot occur before the end; a value that is a prefix of another one
 * ends with 0x00 0x01 where the longer one has either a byte >= 0x01 (any
 * byte but 0x00 as itself) or 0x00 0xFF, both greater. Inverting every byte
 * of a prefix-free code reverses the order decided at the first differing
 * byte, which is why DESC inverts the whole ascending encoding rather than
 * the value.
 */
#include "index/idx_key.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void idx_buf_grow(idx_buf *b, size_t extra)
{
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) abort(); /* as jemalloc does on OOM: there is nothing sane left to do */
    b->data = p;
    b->cap = cap;
}

void idx_buf_free(idx_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void idx_put_u32(char *p, uint32_t v)
{
    v = __builtin_bswap32(v); /* big-endian on the little-endian hosts we build for */
    memcpy(p, &v, 4);
}

uint32_t idx_get_u32(const char *p)
{
    const unsigned char *u = (const unsigned char *)p;
    return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

void idx_put_u64(char *p, uint64_t v)
{
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
}

uint64_t idx_get_u64(const char *p)
{
    return (uint64_t)idx_get_u32(p) << 32 | idx_get_u32(p + 4);
}

void idx_key_put_tag(idx_buf *b, const char *v, size_t n, int desc)
{
    unsigned char x = desc ? 0xFF : 0x00;
    idx_buf_reserve(b, n + 2);
    const char *zero = memchr(v, 0, n);
    if (!zero && !desc) { /* the common case: copy as is */
        memcpy(b->data + b->len, v, n);
        b->len += n;
    } else {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)v[i];
            if (c == 0) {
                idx_buf_byte(b, 0x00 ^ x);
                idx_buf_byte(b, 0xFF ^ x);
            } else {
                idx_buf_byte(b, c ^ x);
            }
        }
        idx_buf_reserve(b, 2);
    }
    b->data[b->len++] = (char)(0x00 ^ x);
    b->data[b->len++] = (char)(0x01 ^ x);
}

double idx_key_get_num(const char *p, int desc)
{
    uint64_t u = idx_get_u64(p);
    if (desc) u = ~u;
    u = (u >> 63) ? u ^ (1ULL << 63) : ~u;
    double d;
    memcpy(&d, &u, 8);
    return d;
}

/* The common NUMERIC value, a plain decimal integer such as a timestamp:
 * up to 15 digits is below 2^53, so the double is exact and equal to what
 * strtod returns (-0 included). Returns 0, or -1 to leave it to strtod. */
static int parse_small_int(const char *v, size_t n, double *d)
{
    size_t i = v[0] == '-';
    if (n - i == 0 || n - i > 15) return -1;
    uint64_t u = 0;
    for (; i < n; i++) {
        unsigned dig = (unsigned)(unsigned char)v[i] - '0';
        if (dig > 9) return -1;
        u = u * 10 + dig;
    }
    *d = v[0] == '-' ? -(double)u : (double)u;
    return 0;
}

int idx_parse_num(const char *v, size_t n, double *d)
{
    int canonical;
    return idx_parse_num_canon(v, n, d, &canonical);
}

/* Everything but a short integer, through strtod (a copy NUL-terminates
 * it). Out of line, so that the integer path the hook takes has no frame
 * for the copy. */
static __attribute__((noinline)) int parse_float(const char *v, size_t n, double *d)
{
    char tmp[128];
    if (n >= sizeof(tmp)) return -1;
    if (v[0] == ' ' || (v[0] >= '\t' && v[0] <= '\r')) return -1;
    memcpy(tmp, v, n);
    tmp[n] = 0;
    char *end;
    errno = 0;
    double x = strtod(tmp, &end);
    if (end != tmp + n || isnan(x)) return -1;
    if (errno == ERANGE && (isinf(x) || x == 0)) return -1; /* as Redis's string2d */
    *d = x;
    return 0;
}

int idx_parse_num_canon(const char *v, size_t n, double *d, int *canonical)
{
    *canonical = 0;
    if (n == 0) return -1;
    if (parse_small_int(v, n, d) == 0) { /* the hook parses every NUMERIC value */
        /* At most 15 digits: what idx_key_num_text_canonical adds is only
         * no leading zero and no "-0". */
        size_t i = v[0] == '-';
        *canonical = !(v[i] == '0' && (n - i > 1 || i));
        return 0;
    }
    return parse_float(v, n, d);
}

size_t idx_key_skip_field(const char *p, size_t n, int numeric, int desc)
{
    if (numeric) return n >= 8 ? 8 : 0;
    unsigned char esc = desc ? 0xFF : 0x00;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)p[i] != esc) continue;
        if (i + 1 >= n) return 0;
        unsigned char next = (unsigned char)p[i + 1] ^ (desc ? 0xFF : 0x00);
        if (next == 0x01) return i + 2;
        if (next != 0xFF) return 0;
        i++;
    }
    return 0;
}

int idx_key_get_tag(const char *p, size_t n, int desc, idx_buf *out)
{
    unsigned char x = desc ? 0xFF : 0x00;
    if (n < 2) return -1;
    for (size_t i = 0; i < n - 2; i++) {
        unsigned char c = (unsigned char)p[i] ^ x;
        if (c == 0) {
            if (((unsigned char)p[i + 1] ^ x) != 0xFF) return -1;
            i++;
        }
        idx_buf_byte(out, c);
    }
    return 0;
}

int idx_key_prefix_successor(idx_buf *b)
{
    while (b->len && (unsigned char)b->data[b->len - 1] == 0xFF)
        b->len--;
    if (!b->len) return -1;
    b->data[b->len - 1] = (char)((unsigned char)b->data[b->len - 1] + 1);
    return 0;
}

/* "00".."99": integer text two digits per step, half the divisions. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

/* The magnitude of the NUMERIC value encoded at f when it is an integer
 * below 2^53, read from the IEEE-754 fields without a double: *neg gets
 * the sign. Returns 1, or 0 for other values (fractions, huge, inf). Zero
 * of either sign is 0 with no sign, as (int64_t) of -0.0 gives. */
static int enc_int(const char *f, int desc, uint64_t *mag, int *neg)
{
    uint64_t u;
    memcpy(&u, f, 8); /* idx_get_u64 without its calls: once per scan hit */
    u = __builtin_bswap64(u);
    if (desc) u = ~u;
    u = (u >> 63) ? u ^ (1ULL << 63) : ~u; /* the IEEE bits (idx_key_get_num) */
    *neg = 0;
    if (!(u << 1)) {
        *mag = 0;
        return 1;
    }
    int e = (int)((u >> 52) & 0x7FF) - 1023;
    if (e < 0 || e > 52) return 0; /* |v| < 1 and not 0, or >= 2^53 (inf, NaN) */
    uint64_t m = (u & ((1ULL << 52) - 1)) | (1ULL << 52);
    unsigned sh = (unsigned)(52 - e);
    if (sh && (m & ((1ULL << sh) - 1))) return 0; /* a fraction */
    *mag = m >> sh;
    *neg = (int)(u >> 63);
    return 1;
}

/* The number of decimal digits of v: four at a time, then compares, where
 * a loop dividing by 10 costs a multiply per digit on every scan hit. */
static size_t count_digits(uint64_t v)
{
    size_t d = 1;
    for (;;) {
        if (v < 10) return d;
        if (v < 100) return d + 1;
        if (v < 1000) return d + 2;
        if (v < 10000) return d + 3;
        v /= 10000;
        d += 4;
    }
}

/* Writes the decimal text of mag (sign first when neg) at out, which has
 * room for 21 bytes; returns its length. */
static size_t put_int_text(char *out, uint64_t mag, int neg)
{
    size_t len = count_digits(mag) + (size_t)neg;
    char *p = out + len;
    while (mag >= UINT32_MAX) {
        unsigned r = (unsigned)(mag % 100);
        mag /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    uint32_t m = (uint32_t)mag; /* the rest in 32-bit arithmetic: cheaper divisions */
    while (m >= 100) {
        unsigned r = m % 100;
        m /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (m >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * m, 2);
    } else {
        *--p = (char)('0' + m);
    }
    if (neg) out[0] = '-';
    return len;
}

/* memcpy of a short key prefix without a call: two overlapping moves of
 * 8 bytes cover 8..16 bytes, of 4 bytes 4..7, a byte loop less. */
static inline void copy_short(char *dst, const char *src, size_t n)
{
    if (n >= 8 && n <= 16) {
        memcpy(dst, src, 8);
        memcpy(dst + n - 8, src + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(dst, src, 4);
        memcpy(dst + n - 4, src + n - 4, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i];
    } else {
        memcpy(dst, src, n);
    }
}

size_t idx_key_implied_num(char *out, const char *prefix, size_t plen, const char *f, int desc)
{
    uint64_t mag;
    int neg;
    if (!enc_int(f, desc, &mag, &neg)) return 0;
    copy_short(out, prefix, plen);
    return plen + put_int_text(out + plen, mag, neg); /* at least one digit: never 0 */
}

int idx_key_implied(idx_buf *out, const char *prefix, size_t plen, const char *f, size_t n,
                    int numeric, int desc)
{
    out->len = 0;
    if (numeric) {
        if (n != 8) return 0;
        idx_buf_reserve(out, plen + IDX_IMPLIED_NUM_MAX);
        out->len = idx_key_implied_num(out->data, prefix, plen, f, desc);
        return out->len != 0;
    }
    idx_buf_append(out, prefix, plen);
    if (idx_key_get_tag(f, n, desc, out) != 0) {
        out->len = 0;
        return 0;
    }
    return 1;
}

void idx_key_put_hash_key(idx_buf *b, const char *k, size_t kl, const char *i, size_t il, int has_i)
{
    int c = has_i ? idx_key_cmp(k, kl, i, il) : -1;
    if (c == 0) {
        idx_buf_byte(b, IDX_HK_IMPLIED);
        return;
    }
    idx_buf_byte(b, c < 0 ? IDX_HK_BELOW : IDX_HK_ABOVE);
    idx_buf_append(b, k, kl);
}

void idx_key_put_hash_key2(idx_buf *b, const char *k, size_t kl, const char *i1, size_t l1,
                           const char *i2, size_t l2)
{
    size_t n = kl < l1 ? kl : l1;
    int c = n ? memcmp(k, i1, n) : 0;
    if (!c) c = kl < l1 ? -1 : idx_key_cmp(k + l1, kl - l1, i2, l2);
    if (c == 0) {
        idx_buf_byte(b, IDX_HK_IMPLIED);
        return;
    }
    idx_buf_byte(b, c < 0 ? IDX_HK_BELOW : IDX_HK_ABOVE);
    idx_buf_append(b, k, kl);
}

void idx_key_put_hash_key_after(idx_buf *b, const char *k, size_t kl, size_t l1, const char *i2,
                                size_t l2)
{
    int c = idx_key_cmp(k + l1, kl - l1, i2, l2);
    if (c == 0) {
        idx_buf_byte(b, IDX_HK_IMPLIED);
        return;
    }
    idx_buf_byte(b, c < 0 ? IDX_HK_BELOW : IDX_HK_ABOVE);
    idx_buf_append(b, k, kl);
}

int idx_key_num_text_canonical(const char *v, size_t n)
{
    size_t i = n && v[0] == '-';
    /* 15 digits stay below 2^53, so the double is exact (parse_small_int) */
    if (n - i == 0 || n - i > 15 || (v[i] == '0' && (n - i > 1 || i))) return 0;
    for (; i < n; i++)
        if ((unsigned)(unsigned char)v[i] - '0' > 9) return 0;
    return 1;
}

int idx_key_get_hash_key(const char *p, size_t n, const char *i, size_t il, int has_i,
                         const char **k, size_t *kl)
{
    if (n < 1) return -1;
    unsigned char m = (unsigned char)p[0];
    if (m == IDX_HK_IMPLIED) {
        if (n != 1 || !has_i) return -1;
        *k = i;
        *kl = il;
        return 0;
    }
    if (m != IDX_HK_BELOW && m != IDX_HK_ABOVE) return -1;
    *k = p + 1;
    *kl = n - 1;
    int c = has_i ? idx_key_cmp(*k, *kl, i, il) : -1;
    return (m == IDX_HK_BELOW ? c < 0 : c > 0) ? 0 : -1;
}

static unsigned char filter_skip_ids[(IDX_FILTER_MAX_ID + 1) / 8];

void idx_filter_note(uint32_t id, int skip)
{
    if (id > IDX_FILTER_MAX_ID) return;
    unsigned char bit = (unsigned char)(1u << (id & 7));
    if (skip)
        __atomic_fetch_or(&filter_skip_ids[id >> 3], bit, __ATOMIC_RELAXED);
    else
        __atomic_fetch_and(&filter_skip_ids[id >> 3], (unsigned char)~bit, __ATOMIC_RELAXED);
}

void idx_filter_reset(void)
{
    for (size_t i = 0; i < sizeof(filter_skip_ids); i++)
        __atomic_store_n(&filter_skip_ids[i], 0, __ATOMIC_RELAXED);
}

int idx_filter_skip(void *ctx, const char *key, size_t klen, size_t *plen)
{
    (void)ctx;
    if (klen < 1 || key[0] != IDX_NS_BYTE) {
        *plen = klen ? 1 : 0;
        return 0;
    }
    if (klen < IDX_ENTRY_PREFIX_LEN || key[1] != IDX_TAG_ENTRY) {
        *plen = klen < 2 ? klen : 2;
        return 0;
    }
    *plen = IDX_ENTRY_PREFIX_LEN;
    uint32_t id = idx_get_u32(key + 2);
    if (id > IDX_FILTER_MAX_ID) return 0;
    return (__atomic_load_n(&filter_skip_ids[id >> 3], __ATOMIC_RELAXED) >> (id & 7)) & 1;
}
