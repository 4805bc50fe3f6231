/*
 * resp_fast.c -- see resp_fast.h.
 *
 * A reply is known complete once a skip over it (headers, bulk lengths,
 * array counts, recursively) stays inside the buffer; only then is it
 * handed out, so the element walk never runs off the bytes read. RESP2
 * grammar: '+' / '-' / ':' line "\r\n"; '$' len "\r\n" bytes "\r\n" (len -1:
 * null); '*' count "\r\n" elements (count -1: null).
 */
#include "bench/profiles/resp_fast.h"

#include "bench/profiles/resp_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_DEPTH 8

void rf_free(rf_reader *r)
{
    free(r->buf);
    memset(r, 0, sizeof(*r));
}

int rf_flush(redisContext *ctx, char *err, size_t cap)
{
    int done = 0;
    while (!done)
        if (redisBufferWrite(ctx, &done) != REDIS_OK) {
            snprintf(err, cap, "write: %s", ctx->errstr);
            return -1;
        }
    return 0;
}

/* The integer of a header line at p (after the type byte); *next past its
 * "\r\n". NULL when the line is not complete in [p, end). One pass finds
 * the '\r' and reads the digits: a header is a few bytes, where a memchr
 * call cost more than the scan (2-3 of them per value, the completeness
 * check's and the walk's). */
static const char *header(const char *p, const char *end, int64_t *v)
{
    int neg = p < end && *p == '-';
    uint64_t x = 0;
    const char *q = p + neg;
    for (; q < end && *q != '\r'; q++)
        x = x * 10 + (uint64_t)(*q - '0');
    if (q + 1 >= end) return NULL;
    *v = neg ? -(int64_t)x : (int64_t)x;
    return q + 2;
}

/* Past one complete element at p, or NULL when [p, end) does not hold it
 * all (or it is malformed, which the caller tells apart by its size). */
static const char *skip(const char *p, const char *end, int depth)
{
    if (p >= end || depth > MAX_DEPTH) return NULL;
    char t = *p++;
    int64_t n;
    const char *q = header(p, end, &n);
    if (!q) return NULL;
    switch (t) {
    case '+':
    case '-':
    case ':':
        return q;
    case '$':
        if (n < 0) return q;
        return end - q >= n + 2 ? q + n + 2 : NULL;
    case '*':
        for (int64_t i = 0; i < n && q; i++)
            q = skip(q, end, depth + 1);
        return q;
    default:
        return NULL;
    }
}

int rf_next(rf_reader *r, redisContext *ctx, rf_cur *c, char *err, size_t cap)
{
    for (;;) {
        const char *start = r->buf + r->pos, *end = r->buf + r->len;
        const char *stop = r->len > r->pos ? skip(start, end, 0) : NULL;
        if (stop) {
            c->p = start;
            c->end = stop;
            r->pos = (size_t)(stop - r->buf);
            return 0;
        }
        if (r->len > r->pos && *start != '+' && *start != '-' && *start != ':' && *start != '$' &&
            *start != '*') {
            snprintf(err, cap, "malformed reply (type byte 0x%02x)", (unsigned char)*start);
            return -1;
        }
        if (r->pos) { /* keep only the partial reply */
            memmove(r->buf, r->buf + r->pos, r->len - r->pos);
            r->len -= r->pos;
            r->pos = 0;
        }
        if (r->cap - r->len < 16384) {
            size_t ncap = r->cap ? r->cap * 2 : 65536;
            char *nb = realloc(r->buf, ncap);
            if (!nb) {
                snprintf(err, cap, "out of memory");
                return -1;
            }
            r->buf = nb;
            r->cap = ncap;
        }
        ssize_t k = read(ctx->fd, r->buf + r->len, r->cap - r->len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            snprintf(err, cap, "connection: %s", k < 0 ? strerror(errno) : "closed");
            return -1;
        }
        r->len += (size_t)k;
    }
}

int rf_get(rf_cur *c, rf_val *v)
{
    if (c->p >= c->end) return -1;
    v->type = *c->p;
    const char *q = header(c->p + 1, c->end, &v->n);
    if (!q) return -1;
    v->s = NULL;
    v->len = 0;
    if (v->type == '$') {
        if (v->n >= 0) {
            v->s = q;
            v->len = (size_t)v->n;
            q += v->n + 2;
        }
    } else if (v->type == '+' || v->type == '-') {
        v->s = c->p + 1;
        v->len = (size_t)(q - 2 - v->s);
    }
    c->p = q;
    return 0;
}

char rf_peek(const rf_cur *c)
{
    return c->p < c->end ? *c->p : 0;
}

int rf_skip(rf_cur *c)
{
    const char *q = skip(c->p, c->end, 0);
    if (!q) return -1;
    c->p = q;
    return 0;
}

int rf_decode_hash(rf_cur *c, const rf_val *h, wl_profile *p, char *err, size_t cap)
{
    if (h->type != '*' || h->n < 0 || h->n % 2) {
        snprintf(err, cap, "hash reply of type '%c'", h->type);
        return -1;
    }
    unsigned seen = 0;
    int bad = 0;
    for (int64_t i = 0; i < h->n && !bad; i += 2) {
        rf_val k, v;
        bad = rf_get(c, &k) || rf_get(c, &v) || k.type != '$' || !k.s || v.type != '$' ||
              rc_profile_field(p, k.s, k.len, v.s, v.len, &seen);
    }
    return rc_profile_check(bad, seen, (size_t)(h->n / 2), err, cap);
}

int rf_decode_values(rf_cur *c, const rf_val *h, wl_profile *p, char *err, size_t cap)
{
    if (h->type != '*' || h->n != RC_NFIELDS) {
        snprintf(err, cap, "values reply of type '%c' with %lld elements", h->type,
                 (long long)h->n);
        return -1;
    }
    for (size_t i = 0; i < RC_NFIELDS; i++) {
        rf_val v;
        if (rf_get(c, &v) || v.type != '$' || !v.s || rc_profile_value(p, i, v.s, v.len)) {
            snprintf(err, cap, "profile value %s missing or malformed", rc_profile_fields[i]);
            return -1;
        }
    }
    return 0;
}
