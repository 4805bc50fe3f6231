/*
 * ks_string.c -- strings: GET/SET and friends, counters, APPEND, SETRANGE,
 * and the whole-string read-modify-write (ks_str_open / ks_str_write) that
 * the bitmap and HyperLogLog commands use.
 *
 * On-disk format (ENCODING.md, "Strings"): the metadata value of a string
 * is flags(1) = 0x01 [| 0x20 raw] [| 0x80] [expire le64] then the raw
 * bytes, so a GET is one engine get and a SET one get (old type, TTL,
 * counters) plus one put. Integers are stored as their decimal text, as
 * Redis replies them. Also the string row of the type table.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_type.h"

#define msg ks_err_msg

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

/* Redis's object encoding of a string value (object.c): "raw" once APPEND
 * or SETRANGE changed it in place, else int / embstr / raw by its text. */
static const char *string_encoding(const ks_meta *m, const ks_limits *lim)
{
    (void)lim;
    long long v;
    if (m->enc) return "raw";
    if (m->plen <= 20 && ks_string2ll(m->payload, m->plen, &v)) return "int";
    return m->plen <= 44 ? "embstr" : "raw";
}

static int string_count(const ks_meta *m, uint64_t *n)
{
    *n = m->plen;
    return 0;
}

static int string_check(const ks_meta *m)
{
    return m->big ? -1 : 0;
}

const ks_type_ops ks_string_type = {
    .type = KS_STRING,
    .name = "string",
    .encoding = string_encoding,
    .count = string_count,
    .check = string_check,
    .copy = ks_copy_generic,
    .drop = ks_drop_generic,
    .repair = ks_repair_generic,
    .filter = ks_filter_generic,
    .fields = NULL,
};

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
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_STRING, &m);
    if (st != KS_OK) return st;
    take_payload(&m, out);
    ks_meta_free(&m);
    return st;
}

/* Writes string v at w's key (any old type); raw: Redis changed it in
 * place (APPEND, SETRANGE). A passed expire deletes the key. */
static ks_status put_string(ks_write *w, const char *v, size_t vl, const char *v2, size_t vl2,
                            int64_t expire, int raw)
{
    ks_value nv = {KS_STRING, 0, raw, expire, v, vl, v2, vl2};
    return ks_write_put(w, &nv);
}

ks_status ks_set(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl,
                 const ks_set_opts *o, int *done, ks_val *old)
{
    ks_write w;
    *done = 0;
    if (old) memset(old, 0, sizeof(*old));
    ks_status st = ks_write_begin(c, c->db, key, klen, o->get ? KS_STRING : KS_NONE, &w);
    if (st != KS_OK) return st;
    int exists = w.m.type != KS_NONE;
    if (!(o->nx && exists) && !(o->xx && !exists)) {
        int64_t expire = o->keepttl ? w.m.expire : o->expire_ms;
        st = put_string(&w, v, vl, NULL, 0, expire, o->raw);
        *done = st == KS_OK;
    }
    if (st == KS_OK && o->get && old && w.m.type == KS_STRING) take_payload(&w.m, old);
    ks_write_end(&w);
    return st;
}

ks_status ks_mset(ks_ctx *c, const ks_field *kv, size_t n, int nx, int *done)
{
    *done = 0;
    for (size_t i = 0; nx && i < n; i++) {
        ks_meta m;
        ks_status st = ks_key_read(c, NULL, c->db, kv[i].f, kv[i].fl, KS_NONE, &m);
        if (st == KS_OK) ks_meta_free(&m);
        if (st == KS_OK) return KS_OK; /* one exists: MSETNX does nothing */
        if (st != KS_NOTFOUND) return st;
    }
    /* The keys created share one counter update (ks_count_defer). */
    ks_count_defer(c->ks);
    ks_status st = KS_OK;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        ks_write w;
        st = ks_write_begin(c, c->db, kv[i].f, kv[i].fl, KS_NONE, &w);
        if (st != KS_OK) break;
        st = put_string(&w, kv[i].v, kv[i].vl, NULL, 0, 0, 0);
        ks_write_end(&w);
    }
    ks_status cst = ks_count_settle(c, st == KS_OK);
    if (st == KS_OK) st = cst;
    *done = st == KS_OK;
    return st;
}

ks_status ks_getdel(ks_ctx *c, const char *key, size_t klen, ks_val *out)
{
    ks_write w;
    memset(out, 0, sizeof(*out));
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, &w);
    if (st != KS_OK) return st;
    st = w.m.type == KS_NONE ? KS_NOTFOUND : ks_write_del(&w);
    if (st == KS_OK) take_payload(&w.m, out);
    ks_write_end(&w);
    return st;
}

ks_status ks_getex(ks_ctx *c, const char *key, size_t klen, int mode, int64_t expire_ms,
                   ks_val *out)
{
    ks_write w;
    memset(out, 0, sizeof(*out));
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, &w);
    if (st != KS_OK) return st;
    if (w.m.type == KS_NONE)
        st = KS_NOTFOUND;
    else if (mode == KS_GETEX_SET)
        st = ks_write_retime(&w, expire_ms);
    else if (mode == KS_GETEX_PERSIST && w.m.expire)
        st = ks_write_retime(&w, 0);
    if (st == KS_OK) take_payload(&w.m, out);
    ks_write_end(&w);
    return st;
}

ks_status ks_incrby(ks_ctx *c, const char *key, size_t klen, long long by, long long *out)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, &w);
    if (st != KS_OK) return st;
    const ks_meta *m = &w.m;
    long long cur = 0;
    if (m->type == KS_STRING && !ks_string2ll(m->payload, m->plen, &cur))
        st = KS_ERR_NOTINT;
    else if ((by < 0 && cur < 0 && by < LLONG_MIN - cur) ||
             (by > 0 && cur > 0 && by > LLONG_MAX - cur))
        st = KS_ERR_OVERFLOW;
    if (st == KS_OK) {
        char num[24];
        *out = cur + by;
        int n = snprintf(num, sizeof(num), "%lld", *out);
        st = put_string(&w, num, (size_t)n, NULL, 0, m->expire, 0);
    }
    ks_write_end(&w);
    return st;
}

ks_status ks_incrbyfloat(ks_ctx *c, const char *key, size_t klen, long double by, char *out,
                         size_t *outlen)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, &w);
    if (st != KS_OK) return st;
    const ks_meta *m = &w.m;
    long double cur = 0;
    if (m->type == KS_STRING && !ks_string2ld(m->payload, m->plen, &cur)) {
        st = KS_ERR_NOTFLOAT;
    } else {
        long double r = cur + by;
        if (isnan(r) || isinf(r))
            st = msg(c, "ERR increment would produce NaN or Infinity");
        else
            *outlen = ks_ld2string(out, KS_LD_BUF, r);
    }
    if (st == KS_OK) st = put_string(&w, out, *outlen, NULL, 0, m->expire, 0);
    ks_write_end(&w);
    return st;
}

ks_status ks_append(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl,
                    size_t *newlen)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, &w);
    if (st != KS_OK) return st;
    const ks_meta *m = &w.m;
    size_t cur = m->type == KS_STRING ? m->plen : 0;
    if ((long long)(cur + vl) > KS_MAX_STRING)
        st = msg(c, ERR_TOO_BIG);
    else /* appending to an existing string makes it raw, as Redis */
        st = put_string(&w, m->payload, cur, v, vl, m->expire, m->type == KS_STRING);
    *newlen = cur + vl;
    ks_write_end(&w);
    return st;
}

ks_status ks_setrange(ks_ctx *c, const char *key, size_t klen, uint64_t off, const char *v,
                      size_t vl, size_t *newlen)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, &w);
    if (st != KS_OK) return st;
    const ks_meta *m = &w.m;
    size_t cur = m->type == KS_STRING ? m->plen : 0;
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
    if (cur) memcpy(p, m->payload, cur);
    if (off > cur) memset(p + cur, 0, off - cur);
    memcpy(p + off, v, vl);
    *newlen = len;
    st = put_string(&w, p, len, NULL, 0, m->expire, 1);
out:
    ks_write_end(&w);
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
    memset(s, 0, sizeof(*s));
    /* The write stays open until ks_str_close: ks_str_write needs the old
     * record, and reading it twice would cost a second engine get. */
    s->w = malloc(sizeof(*s->w));
    if (!s->w) return ks_oom(c);
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, s->w);
    if (st != KS_OK) {
        free(s->w);
        s->w = NULL;
        return st;
    }
    const ks_meta *m = &s->w->m;
    if (m->type != KS_STRING) return KS_OK;
    /* A private copy with a little room: PFADD grows a sparse HLL a few
     * bytes at a time. */
    if (ks_strbuf_reserve(&s->v, m->plen + 16) < 0) return ks_oom(c);
    if (m->plen) memcpy(s->v.p, m->payload, m->plen);
    s->v.n = m->plen;
    s->exists = 1;
    return KS_OK;
}

ks_status ks_str_write(ks_str *s)
{
    const ks_meta *m = &s->w->m;
    /* Changed in place, as Redis's SETBIT / PFADD do: OBJECT ENCODING raw. */
    ks_status st =
        put_string(s->w, s->v.p, s->v.n, NULL, 0, m->type == KS_STRING ? m->expire : 0, 1);
    if (st == KS_OK) s->exists = 1;
    return st;
}

void ks_str_close(ks_str *s)
{
    if (s->w) ks_write_end(s->w);
    free(s->w);
    ks_strbuf_free(&s->v);
    s->w = NULL;
    s->exists = 0;
}
