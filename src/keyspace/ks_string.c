/*
 * ks_string.c -- strings: GET/SET and friends, counters, APPEND, SETRANGE,
 * and the whole-string read-modify-write (ks_str_open / ks_str_write) that
 * the bitmap and HyperLogLog commands use.
 *
 * On-disk format (ENCODING.md, "Strings"): the metadata value of a string
 * is flags(1) = 0x01 [| 0x80] [expire fixed64 LE] then the raw bytes, so a
 * GET is one engine get and a SET one get (old type, TTL, counters) plus
 * one put. Integers are stored as their decimal text, as Redis replies
 * them.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"

static ks_status msg(ks_ctx *c, const char *m)
{
    free(c->err);
    c->err = strdup(m);
    return KS_ERR_MSG;
}

#define ERR_TOO_BIG "ERR string exceeds maximum allowed size (proto-max-bulk-len)"

int ks_string2ll(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 20) return 0;
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    size_t i = 0;
    int neg = s[0] == '-';
    if (neg) i++;
    if (i == n || s[i] < '1' || s[i] > '9') return 0;
    unsigned long long v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        if (v > (ULLONG_MAX - (unsigned)(s[i] - '0')) / 10) return 0;
        v = v * 10 + (unsigned)(s[i] - '0');
    }
    if (neg) {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = (long long)(0 - v);
    } else {
        if (v > (unsigned long long)LLONG_MAX) return 0;
        *out = (long long)v;
    }
    return 1;
}

int ks_string2ld(const char *s, size_t n, long double *out)
{
    char buf[KS_LD_BUF];
    if (n == 0 || n >= sizeof(buf) || memchr(s, '\0', n)) return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    char *end;
    long double v = strtold(buf, &end);
    if (isspace((unsigned char)buf[0]) || *end != '\0' ||
        (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || fpclassify(v) == FP_ZERO)) ||
        isnan(v))
        return 0;
    *out = v;
    return 1;
}

/* Redis's ld2string(..., LD_STR_HUMAN): 17 decimals, trailing zeros cut. */
size_t ks_ld2string(char *buf, size_t cap, long double v)
{
    int l = snprintf(buf, cap, "%.17Lf", v);
    if (l < 0 || (size_t)l >= cap) return 0;
    if (strchr(buf, '.')) {
        char *p = buf + l - 1;
        while (*p == '0')
            p--, l--;
        if (*p == '.') l--;
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        l = 1;
    }
    buf[l] = '\0';
    return (size_t)l;
}

static ks_status read_string_w(ks_ctx *c, const char *key, size_t klen, ks_meta *m)
{
    ks_status st = ks_meta_read_w(c, c->db, key, klen, m);
    if (st == KS_OK && m->type != KS_NONE && m->type != KS_STRING) {
        ks_meta_free(m);
        return KS_ERR_WRONGTYPE;
    }
    return st;
}

/* Hands m's payload out as *out (m gives up its buffer). */
static void take_payload(ks_meta *m, ks_val *out)
{
    out->base = m->raw;
    out->p = m->payload;
    out->n = m->plen;
    m->raw = NULL;
}

ks_status ks_get(ks_ctx *c, const char *key, size_t klen, ks_val *out)
{
    ks_meta m;
    memset(out, 0, sizeof(*out));
    ks_status st = ks_meta_read(c, NULL, c->db, key, klen, &m);
    if (st != KS_OK) return st;
    if (m.type == KS_STRING)
        take_payload(&m, out);
    else
        st = m.type == KS_NONE ? KS_NOTFOUND : KS_ERR_WRONGTYPE;
    ks_meta_free(&m);
    return st;
}

/* Tells the index layer that the hash at key is going away (KS1). */
static ks_status drop_hash_hook(ks_ctx *c, const char *key, size_t klen, const ks_meta *m)
{
    if (m->type != KS_HASH || !ks_hook_wanted(c, c->db, key, klen)) return KS_OK;
    ks_fvec fv;
    ks_fvec_init(&fv);
    ks_status st = ks_hash_load(c, NULL, c->db, key, klen, m, &fv);
    if (st == KS_OK) st = ks_hook_call(c, c->db, key, klen, fv.v, fv.n, 1, NULL, 0, 0, 0);
    ks_fvec_free(&fv);
    return st;
}

/* Writes string v at key over m (any type): hook, metadata, or a delete
 * when the expire has already passed. */
static ks_status put_string(ks_ctx *c, const char *key, size_t klen, const ks_meta *m,
                            const char *v, size_t vl, int64_t expire)
{
    ks_status st = drop_hash_hook(c, key, klen, m);
    if (st != KS_OK) return st;
    if (expire && expire <= c->now_ms)
        return m->type != KS_NONE ? ks_meta_remove(c, c->db, key, klen, m, 0) : KS_OK;
    return ks_meta_write(c, c->db, key, klen, m, KS_STRING, 0, expire, v, vl, NULL, 0);
}

ks_status ks_set(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl,
                 const ks_set_opts *o, int *done, ks_val *old)
{
    ks_meta m;
    *done = 0;
    if (old) memset(old, 0, sizeof(*old));
    ks_status st = ks_meta_read_w(c, c->db, key, klen, &m);
    if (st != KS_OK) return st;
    if (o->get && m.type != KS_NONE && m.type != KS_STRING) {
        ks_meta_free(&m);
        return KS_ERR_WRONGTYPE;
    }
    int exists = m.type != KS_NONE;
    if (!(o->nx && exists) && !(o->xx && !exists)) {
        int64_t expire = o->keepttl ? m.expire : o->expire_ms;
        st = put_string(c, key, klen, &m, v, vl, expire);
        *done = st == KS_OK;
    }
    if (st == KS_OK && o->get && old && m.type == KS_STRING) take_payload(&m, old);
    ks_meta_free(&m);
    return st;
}

ks_status ks_mset(ks_ctx *c, const ks_field *kv, size_t n, int nx, int *done)
{
    *done = 0;
    for (size_t i = 0; nx && i < n; i++) {
        ks_meta m;
        ks_status st = ks_meta_read(c, NULL, c->db, kv[i].f, kv[i].fl, &m);
        int exists = m.type != KS_NONE;
        ks_meta_free(&m);
        if (st != KS_OK) return st;
        if (exists) return KS_OK;
    }
    /* The keys created share one counter update (ks_count_defer). */
    ks_count_defer(c->ks);
    ks_status st = KS_OK;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        ks_meta m;
        st = ks_meta_read_w(c, c->db, kv[i].f, kv[i].fl, &m);
        if (st == KS_OK) st = put_string(c, kv[i].f, kv[i].fl, &m, kv[i].v, kv[i].vl, 0);
        ks_meta_free(&m);
    }
    ks_status cst = ks_count_settle(c, st == KS_OK);
    if (st == KS_OK) st = cst;
    *done = st == KS_OK;
    return st;
}

ks_status ks_getdel(ks_ctx *c, const char *key, size_t klen, ks_val *out)
{
    ks_meta m;
    memset(out, 0, sizeof(*out));
    ks_status st = read_string_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    if (m.type == KS_NONE)
        st = KS_NOTFOUND;
    else
        st = ks_meta_remove(c, c->db, key, klen, &m, 0);
    if (st == KS_OK) take_payload(&m, out);
    ks_meta_free(&m);
    return st;
}

ks_status ks_getex(ks_ctx *c, const char *key, size_t klen, int mode, int64_t expire_ms,
                   ks_val *out)
{
    ks_meta m;
    memset(out, 0, sizeof(*out));
    ks_status st = read_string_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    if (m.type == KS_NONE)
        st = KS_NOTFOUND;
    else if (mode == KS_GETEX_SET)
        st = put_string(c, key, klen, &m, m.payload, m.plen, expire_ms);
    else if (mode == KS_GETEX_PERSIST && m.expire)
        st = ks_meta_write(c, c->db, key, klen, &m, KS_STRING, 0, 0, m.payload, m.plen, NULL, 0);
    if (st == KS_OK) take_payload(&m, out);
    ks_meta_free(&m);
    return st;
}

ks_status ks_incrby(ks_ctx *c, const char *key, size_t klen, long long by, long long *out)
{
    ks_meta m;
    ks_status st = read_string_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    long long cur = 0;
    if (m.type == KS_STRING && !ks_string2ll(m.payload, m.plen, &cur))
        st = KS_ERR_NOTINT;
    else if ((by < 0 && cur < 0 && by < LLONG_MIN - cur) ||
             (by > 0 && cur > 0 && by > LLONG_MAX - cur))
        st = KS_ERR_OVERFLOW;
    if (st == KS_OK) {
        char num[24];
        *out = cur + by;
        int n = snprintf(num, sizeof(num), "%lld", *out);
        st =
            ks_meta_write(c, c->db, key, klen, &m, KS_STRING, 0, m.expire, num, (size_t)n, NULL, 0);
    }
    ks_meta_free(&m);
    return st;
}

ks_status ks_incrbyfloat(ks_ctx *c, const char *key, size_t klen, long double by, char *out,
                         size_t *outlen)
{
    ks_meta m;
    ks_status st = read_string_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    long double cur = 0;
    if (m.type == KS_STRING && !ks_string2ld(m.payload, m.plen, &cur)) {
        st = KS_ERR_NOTFLOAT;
    } else {
        long double r = cur + by;
        if (isnan(r) || isinf(r))
            st = msg(c, "ERR increment would produce NaN or Infinity");
        else
            *outlen = ks_ld2string(out, KS_LD_BUF, r);
    }
    if (st == KS_OK)
        st = ks_meta_write(c, c->db, key, klen, &m, KS_STRING, 0, m.expire, out, *outlen, NULL, 0);
    ks_meta_free(&m);
    return st;
}

ks_status ks_append(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl,
                    size_t *newlen)
{
    ks_meta m;
    ks_status st = read_string_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    size_t cur = m.type == KS_STRING ? m.plen : 0;
    if ((long long)(cur + vl) > KS_MAX_STRING)
        st = msg(c, ERR_TOO_BIG);
    else
        st = ks_meta_write(c, c->db, key, klen, &m, KS_STRING, 0, m.expire, m.payload, cur, v, vl);
    *newlen = cur + vl;
    ks_meta_free(&m);
    return st;
}

ks_status ks_setrange(ks_ctx *c, const char *key, size_t klen, uint64_t off, const char *v,
                      size_t vl, size_t *newlen)
{
    ks_meta m;
    ks_status st = read_string_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    size_t cur = m.type == KS_STRING ? m.plen : 0;
    *newlen = cur;
    if (vl == 0) goto out; /* nothing to write, nothing created */
    if (off > (uint64_t)KS_MAX_STRING || off + vl > (uint64_t)KS_MAX_STRING) {
        st = msg(c, ERR_TOO_BIG);
        goto out;
    }
    size_t len = off + vl > cur ? off + vl : cur;
    char *buf = ks_scratch(c->ks, KS_HDR_MAX + len);
    if (!buf) {
        st = ks_oom(c);
        goto out;
    }
    char *p = buf + KS_HDR_MAX;
    if (cur) memcpy(p, m.payload, cur);
    if (off > cur) memset(p + cur, 0, off - cur);
    memcpy(p + off, v, vl);
    *newlen = len;
    st = ks_meta_write(c, c->db, key, klen, &m, KS_STRING, 0, m.expire, p, len, NULL, 0);
out:
    ks_meta_free(&m);
    return st;
}

/* ---- Read-modify-write (bitmaps, HyperLogLog) --------------------------- */

int ks_strbuf_reserve(ks_strbuf *b, size_t cap)
{
    if (cap <= b->cap) return 0;
    size_t ncap = b->cap + b->cap / 2 > cap ? b->cap + b->cap / 2 : cap;
    char *p = realloc(b->p, ncap ? ncap : 1);
    if (!p) return -1;
    b->p = p;
    b->cap = ncap;
    return 0;
}

int ks_strbuf_resize(ks_strbuf *b, size_t n)
{
    if (n > b->n) {
        /* Exactly n: a SETBIT far out must not reserve half again as much. */
        if (n > b->cap) {
            char *p = realloc(b->p, n);
            if (!p) return -1;
            b->p = p;
            b->cap = n;
        }
        memset(b->p + b->n, 0, n - b->n);
    }
    b->n = n;
    return 0;
}

void ks_strbuf_free(ks_strbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

ks_status ks_str_open(ks_ctx *c, const char *key, size_t klen, ks_str *s)
{
    ks_meta m;
    memset(s, 0, sizeof(*s));
    ks_status st = read_string_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    if (m.type == KS_STRING) {
        /* A private copy with a little room: PFADD grows a sparse HLL a
         * few bytes at a time. */
        if (ks_strbuf_reserve(&s->v, m.plen + 16) < 0) {
            st = ks_oom(c);
        } else {
            if (m.plen) memcpy(s->v.p, m.payload, m.plen);
            s->v.n = m.plen;
            s->exists = 1;
            s->expire = m.expire;
        }
    }
    ks_meta_free(&m);
    return st;
}

ks_status ks_str_write(ks_ctx *c, const char *key, size_t klen, ks_str *s)
{
    /* ks_meta_write needs of the old record only its type and expire. */
    ks_meta old;
    memset(&old, 0, sizeof(old));
    old.type = old.stored = s->exists ? KS_STRING : KS_NONE;
    old.expire = s->expire;
    ks_status st =
        ks_meta_write(c, c->db, key, klen, &old, KS_STRING, 0, s->expire, s->v.p, s->v.n, NULL, 0);
    if (st == KS_OK) s->exists = 1;
    return st;
}

void ks_str_close(ks_str *s)
{
    ks_strbuf_free(&s->v);
    s->exists = 0;
}
