/*
 * ks_string.c -- strings: GET/SET and friends, counters, APPEND, SETRANGE
 * (its write goes through ks_str_open_ranged, ks_str_chunk.c).
 *
 * On-disk format (ENCODING.md, "Strings"): the metadata value of a string
 * is flags(1) = 0x01 [| 0x20 raw] [| 0x80] [expire le64] then the raw
 * bytes, so a GET is one engine get and a SET one get (old type, TTL,
 * counters) plus one put. Integers are stored as their decimal text, as
 * Redis replies them. A string the in-place writers made long is chunked
 * instead (ks_str_chunk.c), and read here assembled. Also the string row
 * of the type table.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_str_chunk.h"

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

/* Two digits at a time, from the right: INCR stores its result and XADD
 * replies an id on every call, where snprintf's format parsing cost more
 * than the rest of the formatting. */
size_t ks_u64_format(uint64_t v, char *p)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
                                   "25262728293031323334353637383940414243444546474849"
                                   "50515253545556575859606162636465666768697071727374"
                                   "75767778798081828384858687888990919293949596979899";
    size_t n = 1;
    for (uint64_t t = v; t >= 10; t /= 10)
        n++;
    char *q = p + n;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        *--q = pairs[d + 1];
        *--q = pairs[d];
    }
    if (v >= 10) {
        *--q = pairs[v * 2 + 1];
        *--q = pairs[v * 2];
    } else {
        *--q = (char)('0' + v);
    }
    return n;
}

size_t ks_ll_format(long long v, char *p)
{
    if (v >= 0) return ks_u64_format((uint64_t)v, p);
    p[0] = '-';
    return 1 + ks_u64_format(0ULL - (unsigned long long)v, p + 1);
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
    *n = m->big ? m->count : m->plen;
    return 0;
}

static int string_check(const ks_meta *m)
{
    /* chunked (ks_str_chunk.c): an empty ext, longer than a packed one */
    return m->big && m->extlen != 0 ? -1 : 0;
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

/* Hands m's value (of db) out as *out: its payload (m gives up its
 * buffer), or a chunked string assembled. */
static ks_status take_payload(ks_ctx *c, int db, ks_meta *m, ks_val *out)
{
    if (m->big) {
        ks_status st = ks_strc_load(c, NULL, db, m, &out->base);
        out->p = out->base;
        out->n = st == KS_OK ? m->count : 0;
        return st;
    }
    out->base = m->raw;
    out->p = m->payload;
    out->n = m->plen;
    m->raw = NULL;
    return KS_OK;
}

/* The bytes of string m (of db): its payload, or a chunked string
 * assembled into *own (the caller frees it). */
static ks_status str_bytes(ks_ctx *c, int db, const ks_meta *m, const char **p, size_t *n,
                           char **own)
{
    *own = NULL;
    *p = m->payload;
    *n = m->type == KS_STRING ? m->plen : 0;
    if (m->type != KS_STRING || !m->big) return KS_OK;
    ks_status st = ks_strc_load(c, NULL, db, m, own);
    *p = *own;
    *n = st == KS_OK ? m->count : 0;
    return st;
}

ks_status ks_get(ks_ctx *c, const char *key, size_t klen, ks_val *out)
{
    ks_meta m;
    memset(out, 0, sizeof(*out));
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_STRING, &m);
    if (st != KS_OK) return st;
    st = take_payload(c, c->db, &m, out);
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
    int exists = w.m.type != KS_NONE, get = o->get && old && w.m.type == KS_STRING;
    /* A chunked old value is read before the put drops its chunks; a
     * packed one after (the put compares against its record). */
    if (get && w.m.big) st = take_payload(c, c->db, &w.m, old);
    if (st == KS_OK && !(o->nx && exists) && !(o->xx && !exists)) {
        int64_t expire = o->keepttl ? w.m.expire : o->expire_ms;
        st = put_string(&w, v, vl, NULL, 0, expire, o->raw);
        *done = st == KS_OK;
    }
    if (st == KS_OK && get && !w.m.big) st = take_payload(c, c->db, &w.m, old);
    if (st != KS_OK && old) ks_val_free(old);
    ks_write_end(&w);
    return st;
}

/* MSET's keys' records, read together before any is written
 * (ks_emget_meta: their cache misses overlap) and copied out: raw[i] NULL
 * when absent; reread[i] set for a key that an earlier key of the command
 * repeats, whose record must then be read back through the batch. */
typedef struct mset_pre {
    char *buf;
    const char **raw;
    size_t *len;
    unsigned char *reread;
    const char **keys; /* scratch for the read */
    size_t *klens;
} mset_pre;

static void mset_pre_free(mset_pre *p)
{
    free(p->buf);
    free(p->raw);
    free(p->len);
    free(p->reread);
    free(p->keys);
    free(p->klens);
}

static int by_key(const void *a, const void *b, void *kv)
{
    const ks_field *x = &((const ks_field *)kv)[*(const size_t *)a];
    const ks_field *y = &((const ks_field *)kv)[*(const size_t *)b];
    size_t n = x->fl < y->fl ? x->fl : y->fl;
    int r = n ? memcmp(x->f, y->f, n) : 0;
    if (r || x->fl != y->fl) return r ? r : x->fl < y->fl ? -1 : 1;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1; /* first occurrence first */
}

/* Marks the later occurrences of repeated keys. */
static int mark_repeats(const ks_field *kv, size_t n, unsigned char *reread)
{
    size_t *ord = malloc(n * sizeof(*ord));
    if (!ord) return -1;
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    qsort_r(ord, n, sizeof(*ord), by_key, (void *)kv);
    for (size_t i = 1; i < n; i++) {
        const ks_field *a = &kv[ord[i - 1]], *b = &kv[ord[i]];
        reread[ord[i]] = a->fl == b->fl && (a->fl == 0 || memcmp(a->f, b->f, a->fl) == 0);
    }
    free(ord);
    return 0;
}

static ks_status mset_preread(ks_ctx *c, const ks_field *kv, size_t n, mset_pre *p)
{
    memset(p, 0, sizeof(*p));
    p->raw = calloc(n, sizeof(*p->raw));
    p->len = calloc(n, sizeof(*p->len));
    p->reread = calloc(n, 1);
    p->keys = malloc(n * sizeof(*p->keys));
    p->klens = malloc(n * sizeof(*p->klens));
    if (!p->raw || !p->len || !p->reread || !p->keys || !p->klens || mark_repeats(kv, n, p->reread))
        return ks_oom(c);
    for (size_t i = 0; i < n; i++) {
        p->keys[i] = kv[i].f;
        p->klens[i] = kv[i].fl;
    }
    eng_status es = ks_emget_meta(c, NULL, c->db, n, p->keys, p->klens);
    size_t total = 0;
    for (size_t i = 0; es == ENG_OK && i < n; i++) {
        const char *v;
        eng_status s = ks_emget_value(c, i, &v, &p->len[i]);
        if (s == ENG_OK) total += p->len[i];
        if (s != ENG_OK && s != ENG_NOTFOUND) es = s;
    }
    int oom = es == ENG_OK && !(p->buf = malloc(total ? total : 1));
    for (size_t i = 0, off = 0; es == ENG_OK && !oom && i < n; i++) {
        const char *v;
        if (ks_emget_value(c, i, &v, &p->len[i]) != ENG_OK) continue;
        memcpy(p->buf + off, v, p->len[i]);
        p->raw[i] = p->buf + off;
        off += p->len[i];
    }
    ks_emget_done(c); /* the values are copied: drop the view */
    if (es != ENG_OK) return ks_engine_err(c, es, "read");
    return oom ? ks_oom(c) : KS_OK;
}

/* MSETNX: whether any key exists (live), from the records read. */
static ks_status any_exists(ks_ctx *c, const mset_pre *p, size_t n, int *any)
{
    *any = 0;
    for (size_t i = 0; i < n && !*any; i++) {
        ks_meta m;
        if (!p->raw[i]) continue;
        if (ks_meta_view(&m, p->raw[i], p->len[i], c->now_ms) != 0)
            return ks_corrupt(c, "key metadata");
        *any = m.type != KS_NONE;
    }
    return KS_OK;
}

ks_status ks_mset(ks_ctx *c, const ks_field *kv, size_t n, int nx, int *done)
{
    *done = 0;
    mset_pre pre;
    ks_status st = mset_preread(c, kv, n, &pre);
    int any = 0;
    if (st == KS_OK && nx) st = any_exists(c, &pre, n, &any);
    if (st != KS_OK || any) { /* one exists: MSETNX does nothing */
        mset_pre_free(&pre);
        return st;
    }
    /* The keys created share one counter update (ks_count_defer). */
    ks_count_defer(c->ks);
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        ks_write w;
        st = pre.reread[i] ? ks_write_begin(c, c->db, kv[i].f, kv[i].fl, KS_NONE, &w)
                           : ks_write_begin_read(c, c->db, kv[i].f, kv[i].fl, KS_NONE, pre.raw[i],
                                                 pre.len[i], &w);
        if (st != KS_OK) break;
        st = put_string(&w, kv[i].v, kv[i].vl, NULL, 0, 0, 0);
        ks_write_end(&w);
    }
    mset_pre_free(&pre);
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
    if (w.m.type == KS_NONE) st = KS_NOTFOUND;
    if (st == KS_OK && w.m.big) st = take_payload(c, c->db, &w.m, out); /* before its drop */
    if (st == KS_OK) st = ks_write_del(&w);
    if (st == KS_OK && !w.m.big) st = take_payload(c, c->db, &w.m, out);
    if (st != KS_OK) ks_val_free(out);
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
    if (st == KS_OK) st = take_payload(c, c->db, &w.m, out);
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
    if (m->type == KS_STRING && (m->big || !ks_string2ll(m->payload, m->plen, &cur)))
        st = KS_ERR_NOTINT;
    else if ((by < 0 && cur < 0 && by < LLONG_MIN - cur) ||
             (by > 0 && cur > 0 && by > LLONG_MAX - cur))
        st = KS_ERR_OVERFLOW;
    if (st == KS_OK) {
        char num[24];
        *out = cur + by;
        size_t n = ks_ll_format(*out, num);
        st = put_string(&w, num, n, NULL, 0, m->expire, 0);
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
    const char *p;
    size_t pn;
    char *own;
    if ((st = str_bytes(c, c->db, m, &p, &pn, &own)) != KS_OK) {
        /* the error is st */
    } else if (m->type == KS_STRING && !ks_string2ld(p, pn, &cur)) {
        st = KS_ERR_NOTFLOAT;
    } else {
        long double r = cur + by;
        if (isnan(r) || isinf(r))
            st = msg(c, "ERR increment would produce NaN or Infinity");
        else
            *outlen = ks_ld2string(out, KS_LD_BUF, r);
    }
    free(own);
    if (st == KS_OK) st = put_string(&w, out, *outlen, NULL, 0, m->expire, 0);
    ks_write_end(&w);
    return st;
}

/* Writes v (vl >= 1 bytes) at off (append: at the end) of the string at
 * key, through a ranged ks_str: a chunked string changes only the chunks
 * the bytes fall in (ks_str_chunk.c). */
static ks_status put_at(ks_ctx *c, const char *key, size_t klen, int append, uint64_t off,
                        const char *v, size_t vl, size_t *newlen)
{
    ks_str s;
    ks_status st = ks_str_open_ranged(c, key, klen, &s);
    if (st == KS_OK) {
        uint64_t cur = ks_str_len(&s);
        off = append ? cur : off;
        *newlen = (size_t)cur;
        if (off > (uint64_t)KS_MAX_STRING || off + vl > (uint64_t)KS_MAX_STRING)
            st = msg(c, ERR_TOO_BIG);
        else if ((st = ks_str_update(&s, off, v, vl)) == KS_OK && (st = ks_str_write(&s)) == KS_OK)
            *newlen = (size_t)ks_str_len(&s);
    }
    ks_str_close(&s);
    return st;
}

ks_status ks_append(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl,
                    size_t *newlen)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, &w);
    if (st != KS_OK) return st;
    const ks_meta *m = &w.m;
    int chunked = m->type == KS_STRING && m->big;
    size_t cur = m->type == KS_STRING ? (chunked ? (size_t)m->count : m->plen) : 0;
    if (chunked) /* below */
        ;
    else if ((long long)(cur + vl) > KS_MAX_STRING)
        st = msg(c, ERR_TOO_BIG);
    else /* appending to an existing string makes it raw, as Redis */
        st = put_string(&w, m->payload, cur, v, vl, m->expire, m->type == KS_STRING);
    *newlen = cur + vl;
    ks_write_end(&w);
    return chunked && vl ? put_at(c, key, klen, 1, 0, v, vl, newlen) : st;
}

ks_status ks_setrange(ks_ctx *c, const char *key, size_t klen, uint64_t off, const char *v,
                      size_t vl, size_t *newlen)
{
    if (vl) return put_at(c, key, klen, 0, off, v, vl, newlen);
    /* nothing to write, nothing created: the length (or WRONGTYPE) */
    ks_meta m;
    *newlen = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_STRING, &m);
    if (st == KS_NOTFOUND) return KS_OK;
    if (st != KS_OK) return st;
    *newlen = (size_t)(m.big ? m.count : m.plen);
    ks_meta_free(&m);
    return KS_OK;
}
