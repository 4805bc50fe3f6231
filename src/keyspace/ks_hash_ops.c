/*
 * ks_hash_ops.c -- the hash commands' data work: HSET, HMGET, HLEN, HDEL,
 * HINCRBY[FLOAT], HSCAN. Storage layouts are in ks_hash.c / ENCODING.md.
 *
 * Cost model: on a packed hash every command is one engine get plus at
 * most one put; on a big hash each field costs one get and one put (plus
 * one put of the metadata when the field count changes). Only when an
 * index wants the key (KS1) is the whole hash materialized, by the write
 * path (ks_write.c), which every change here goes through.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_type.h"

static int feq(const ks_field *a, const char *f, size_t fl)
{
    return a->fl == fl && memcmp(a->f, f, fl) == 0;
}

typedef struct spair {
    ks_field p;
    size_t seq;
} spair;

static int spair_cmp(const void *a, const void *b)
{
    const spair *x = a, *y = b;
    size_t n = x->p.fl < y->p.fl ? x->p.fl : y->p.fl;
    int r = n ? memcmp(x->p.f, y->p.f, n) : 0;
    if (r) return r;
    if (x->p.fl != y->p.fl) return x->p.fl < y->p.fl ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Applies field sets to cur (the new content): later pairs win, existing
 * fields are kept under nx. Small cases scan linearly (keeping insertion
 * order, as Redis's listpack); large ones sort, to stay O(n log n). */
static int apply_sets(ks_fvec *cur, const ks_field *pairs, size_t n, int nx, uint64_t *added)
{
    *added = 0;
    if (nx || (cur->n + n) * n <= 4096) {
        for (size_t j = 0; j < n; j++) {
            size_t i;
            for (i = 0; i < cur->n && !feq(&cur->v[i], pairs[j].f, pairs[j].fl); i++)
                ;
            if (i < cur->n) {
                if (!nx) cur->v[i] = pairs[j];
                continue;
            }
            if (ks_fvec_push(cur, pairs[j].f, pairs[j].fl, pairs[j].v, pairs[j].vl) != 0) return -1;
            (*added)++;
        }
        return 0;
    }
    size_t total = cur->n + n, old = cur->n;
    spair *all = malloc(total * sizeof(*all));
    if (!all) return -1;
    for (size_t i = 0; i < old; i++)
        all[i] = (spair){cur->v[i], i};
    for (size_t j = 0; j < n; j++)
        all[old + j] = (spair){pairs[j], old + j};
    qsort(all, total, sizeof(*all), spair_cmp);
    cur->n = 0;
    for (size_t i = 0; i < total; i++) {
        size_t last = i, first = i;
        while (last + 1 < total && all[last + 1].p.fl == all[i].p.fl &&
               memcmp(all[last + 1].p.f, all[i].p.f, all[i].p.fl) == 0)
            last++;
        if (all[first].seq >= old) (*added)++; /* no existing version of it */
        if (ks_fvec_push(cur, all[last].p.f, all[last].p.fl, all[last].p.v, all[last].p.vl)) {
            free(all);
            return -1;
        }
        i = last;
    }
    free(all);
    return 0;
}

/* Writes w's big hash back with a new count and encoding bit. */
static ks_status big_put_meta(ks_write *w, uint64_t count, int enc)
{
    char body[KS_BIG_BODY_MAX];
    ks_value v = {KS_HASH, 1, enc, w->m.expire, NULL, 0, NULL, 0};
    ks_big_body(&v, body, w->m.version, count, NULL, 0);
    return ks_write_put(w, &v);
}

/* Per-field writes into a big hash; *added counts fields that were new. */
static ks_status big_set(ks_write *w, const ks_field *pairs, size_t n, int nx, uint64_t *added,
                         int enc)
{
    ks_ctx *c = w->c;
    const ks_meta *m = &w->m;
    *added = 0;
    for (size_t j = 0; j < n; j++) {
        char *v = NULL;
        size_t vl;
        eng_status s = ks_member_get(c, NULL, w->db, m->version, pairs[j].f, pairs[j].fl, &v, &vl);
        if (s == ENG_OK)
            eng_free(v);
        else if (s != ENG_NOTFOUND)
            return ks_engine_err(c, s, "hset");
        if (s == ENG_OK && nx) continue;
        if (s == ENG_NOTFOUND) (*added)++;
        ks_member_put(c, w->db, m->version, pairs[j].f, pairs[j].fl, pairs[j].v, pairs[j].vl);
    }
    uint64_t count = m->count + *added;
    if ((long long)count > c->ks->limits.hash_max_listpack_entries) enc = 1;
    return big_put_meta(w, count, enc);
}

/* Redis's hashTypeTryConversion: a field or value longer than
 * hash-max-listpack-value makes the hash a hashtable. */
static int long_arg(ks_ctx *c, const ks_field *pairs, size_t n)
{
    long long lim = c->ks->limits.hash_max_listpack_value;
    for (size_t j = 0; j < n; j++)
        if ((long long)pairs[j].fl > lim || (long long)pairs[j].vl > lim) return 1;
    return 0;
}

/* HSET on w's key (a live hash or absent). argcheck: Redis checks the
 * argument lengths (HSET, HSETNX, HMSET; not HINCRBY). */
static ks_status hset_w(ks_write *w, const ks_field *pairs, size_t n, int nx, uint64_t *added,
                        int argcheck)
{
    const ks_meta *m = &w->m;
    int enc = m->enc || (argcheck && long_arg(w->c, pairs, n));
    *added = 0;
    if (m->type == KS_HASH && m->big) return big_set(w, pairs, n, nx, added, enc);
    ks_fvec cur;
    ks_fvec_init(&cur);
    ks_status st = KS_OK;
    if (m->type == KS_HASH && ks_packed_parse(m->payload, m->plen, &cur) != 0)
        st = ks_corrupt(w->c, "hash encoding");
    if (st == KS_OK && apply_sets(&cur, pairs, n, nx, added) != 0) st = ks_oom(w->c);
    /* HSETNX on an existing field writes nothing */
    if (st == KS_OK && !(nx && !*added)) st = ks_hash_store(w, cur.v, cur.n, m->expire, enc);
    ks_fvec_free(&cur);
    return st;
}

ks_status ks_hset(ks_ctx *c, const char *key, size_t klen, const ks_field *fv, size_t n, int nx,
                  uint64_t *added)
{
    ks_write w;
    *added = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_HASH, &w);
    if (st != KS_OK) return st;
    st = hset_w(&w, fv, n, nx, added, 1);
    ks_write_end(&w);
    return st;
}

/* ---- Reads --------------------------------------------------------------- */

typedef struct hmget_owner {
    char *raw;
    char **bufs;
    size_t nbufs;
} hmget_owner;

void ks_hmget_free(void *owner)
{
    hmget_owner *o = owner;
    if (!o) return;
    if (o->raw) eng_free(o->raw);
    for (size_t i = 0; i < o->nbufs; i++)
        if (o->bufs[i]) eng_free(o->bufs[i]);
    free(o->bufs);
    free(o);
}

static ks_status big_get(ks_ctx *c, const ks_meta *m, ks_field *items, size_t n, hmget_owner *o)
{
    if (!(o->bufs = calloc(n ? n : 1, sizeof(char *)))) return ks_oom(c);
    ks_status st = KS_OK;
    for (size_t j = 0; j < n; j++) {
        char *v = NULL;
        size_t vl = 0;
        eng_status s = ks_member_get(c, NULL, c->db, m->version, items[j].f, items[j].fl, &v, &vl);
        if (s == ENG_OK) {
            o->bufs[o->nbufs++] = v;
            items[j].v = v ? v : "";
            items[j].vl = vl;
        } else if (s != ENG_NOTFOUND) {
            st = ks_engine_err(c, s, "hget");
            break;
        }
    }
    return st;
}

ks_status ks_hmget(ks_ctx *c, const char *key, size_t klen, ks_field *items, size_t n, void **owner)
{
    ks_meta m;
    *owner = NULL;
    for (size_t j = 0; j < n; j++)
        items[j].v = NULL, items[j].vl = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_HASH, &m);
    if (st != KS_OK) return st;
    hmget_owner *o = calloc(1, sizeof(*o));
    if (!o) {
        ks_meta_free(&m);
        return ks_oom(c);
    }
    if (m.big) {
        st = big_get(c, &m, items, n, o);
        ks_meta_free(&m);
    } else {
        ks_fvec fv;
        ks_fvec_init(&fv);
        if (ks_packed_parse(m.payload, m.plen, &fv) != 0) st = KS_ERR_ENGINE;
        for (size_t j = 0; st == KS_OK && j < n; j++)
            for (size_t i = 0; i < fv.n; i++)
                if (feq(&fv.v[i], items[j].f, items[j].fl)) {
                    items[j].v = fv.v[i].v;
                    items[j].vl = fv.v[i].vl;
                    break;
                }
        ks_fvec_free(&fv);
        o->raw = m.raw; /* items point into it */
        m.raw = NULL;
        if (st == KS_ERR_ENGINE) ks_corrupt(c, "hash encoding");
    }
    if (st != KS_OK)
        ks_hmget_free(o);
    else
        *owner = o;
    return st;
}

ks_status ks_hlen(ks_ctx *c, const char *key, size_t klen, uint64_t *n)
{
    ks_meta m;
    *n = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_HASH, &m);
    if (st != KS_OK) return st;
    if (ks_hash_type.count(&m, n) != 0) st = ks_corrupt(c, "hash encoding");
    ks_meta_free(&m);
    return st;
}

/* ---- HDEL ------------------------------------------------------------------ */

static int in_list(const ks_field *list, size_t n, const char *f, size_t fl)
{
    for (size_t j = 0; j < n; j++)
        if (feq(&list[j], f, fl)) return 1;
    return 0;
}

static ks_status big_del(ks_write *w, const ks_field *fields, size_t n, uint64_t *deleted)
{
    ks_ctx *c = w->c;
    const ks_meta *m = &w->m;
    for (size_t j = 0; j < n; j++) {
        char *v = NULL;
        size_t vl;
        eng_status s =
            ks_member_get(c, NULL, w->db, m->version, fields[j].f, fields[j].fl, &v, &vl);
        if (s == ENG_OK) {
            eng_free(v);
            ks_member_del(c, w->db, m->version, fields[j].f, fields[j].fl);
            (*deleted)++;
        } else if (s != ENG_NOTFOUND) {
            return ks_engine_err(c, s, "hdel");
        }
    }
    if (!*deleted) return KS_OK;
    if (*deleted >= m->count) return ks_write_del(w);
    return big_put_meta(w, m->count - *deleted, m->enc);
}

ks_status ks_hdel(ks_ctx *c, const char *key, size_t klen, const ks_field *fields, size_t n,
                  uint64_t *deleted)
{
    ks_write w;
    *deleted = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_HASH, &w);
    if (st != KS_OK) return st;
    const ks_meta *m = &w.m;
    ks_fvec old, cur;
    ks_fvec_init(&old);
    ks_fvec_init(&cur);
    if (m->type == KS_NONE) {
        st = KS_NOTFOUND;
    } else if (m->big) {
        st = big_del(&w, fields, n, deleted);
    } else if (ks_packed_parse(m->payload, m->plen, &old) != 0) {
        st = ks_corrupt(c, "hash encoding");
    } else {
        for (size_t i = 0; i < old.n && st == KS_OK; i++)
            if (!in_list(fields, n, old.v[i].f, old.v[i].fl) &&
                ks_fvec_push(&cur, old.v[i].f, old.v[i].fl, old.v[i].v, old.v[i].vl))
                st = ks_oom(c);
        *deleted = old.n - cur.n;
        if (st == KS_OK && *deleted) st = ks_hash_store(&w, cur.v, cur.n, m->expire, m->enc);
    }
    ks_fvec_free(&cur);
    ks_fvec_free(&old);
    ks_write_end(&w);
    return st;
}

/* ---- HINCRBY / HINCRBYFLOAT ------------------------------------------------ */

/* Finds field f's current value of the hash in m (read for a write).
 * *found = 0 when absent; *buf owns a big hash's value (eng_free). */
static ks_status field_value(ks_ctx *c, const ks_meta *m, const char *f, size_t fl, const char **v,
                             size_t *vl, int *found, char **buf)
{
    *found = 0;
    *buf = NULL;
    if (m->type == KS_NONE) return KS_OK;
    ks_field item = {f, fl, NULL, 0};
    if (m->big) {
        hmget_owner o = {0};
        ks_status st = big_get(c, m, &item, 1, &o);
        if (st == KS_OK && item.v) {
            *found = 1;
            *v = item.v;
            *vl = item.vl;
            *buf = o.bufs[0];
        }
        free(o.bufs);
        return st;
    }
    ks_fvec fv;
    ks_fvec_init(&fv);
    if (ks_packed_parse(m->payload, m->plen, &fv) != 0) {
        ks_fvec_free(&fv);
        return ks_corrupt(c, "hash encoding");
    }
    for (size_t i = 0; i < fv.n; i++)
        if (feq(&fv.v[i], f, fl)) {
            *found = 1;
            *v = fv.v[i].v;
            *vl = fv.v[i].vl;
            break;
        }
    ks_fvec_free(&fv);
    return KS_OK;
}

#define set_err ks_err_msg

/* Stores v as the new value of field f of w's hash (HINCRBY,
 * HINCRBYFLOAT); same returns as hset_w. */
static ks_status put_field(ks_write *w, const char *f, size_t fl, const char *v, size_t vl)
{
    ks_field p = {f, fl, v, vl};
    uint64_t added;
    return hset_w(w, &p, 1, 0, &added, 0);
}

ks_status ks_hincrby(ks_ctx *c, const char *key, size_t klen, const char *f, size_t fl,
                     long long by, long long *out)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_HASH, &w);
    if (st != KS_OK) return st;
    const char *v = NULL;
    size_t vl = 0;
    int found;
    char *buf;
    long long cur = 0;
    st = field_value(c, &w.m, f, fl, &v, &vl, &found, &buf);
    if (st == KS_OK && found && !ks_string2ll(v, vl, &cur))
        st = set_err(c, "ERR hash value is not an integer");
    if (buf) eng_free(buf);
    if (st == KS_OK && ((by < 0 && cur < 0 && by < LLONG_MIN - cur) ||
                        (by > 0 && cur > 0 && by > LLONG_MAX - cur)))
        st = KS_ERR_OVERFLOW;
    if (st == KS_OK) {
        char num[24];
        *out = cur + by;
        int n = snprintf(num, sizeof(num), "%lld", *out);
        st = put_field(&w, f, fl, num, (size_t)n);
    }
    ks_write_end(&w);
    return st;
}

ks_status ks_hincrbyfloat(ks_ctx *c, const char *key, size_t klen, const char *f, size_t fl,
                          long double by, char *out, size_t *outlen)
{
    ks_write w;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_HASH, &w);
    if (st != KS_OK) return st;
    const char *v = NULL;
    size_t vl = 0;
    int found;
    char *buf;
    long double cur = 0;
    st = field_value(c, &w.m, f, fl, &v, &vl, &found, &buf);
    if (st == KS_OK && found && !ks_string2ld(v, vl, &cur))
        st = set_err(c, "ERR hash value is not a float");
    if (buf) eng_free(buf);
    if (st == KS_OK) {
        long double r = cur + by;
        if (isnan(r) || isinf(r))
            st = set_err(c, "ERR increment would produce NaN or Infinity");
        else
            *outlen = ks_ld2string(out, KS_LD_BUF, r);
    }
    if (st == KS_OK) st = put_field(&w, f, fl, out, *outlen);
    ks_write_end(&w);
    return st;
}

/* ---- HSCAN ------------------------------------------------------------------ */

ks_status ks_hscan(ks_ctx *c, const char *key, size_t klen, uint64_t cursor, const char *pat,
                   size_t plen, uint64_t count, ks_field_fn fn, void *arg, uint64_t *next)
{
    ks_meta m;
    *next = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_HASH, &m);
    if (st != KS_OK) return st;
    if (!m.big) { /* small hashes come back whole, as Redis's listpack */
        ks_fvec fv;
        ks_fvec_init(&fv);
        if (ks_packed_parse(m.payload, m.plen, &fv) != 0) st = ks_corrupt(c, "hash encoding");
        for (size_t i = 0; st == KS_OK && i < fv.n; i++)
            if ((!pat || ks_glob_match(pat, plen, fv.v[i].f, fv.v[i].fl, 0)) &&
                fn(arg, fv.v[i].f, fv.v[i].fl, fv.v[i].v, fv.v[i].vl))
                break;
        ks_fvec_free(&fv);
        ks_meta_free(&m);
        return st;
    }
    ks_miter mi;
    ks_miter_open(&mi, c, NULL, c->db, m.version);
    if (!ks_member_cursor_seek(c, &mi, cursor)) ks_miter_first(&mi);
    for (uint64_t seen = 0; ks_miter_valid(&mi); ks_miter_next(&mi), seen++) {
        size_t sn, vn;
        const char *s = ks_miter_suffix(&mi, &sn);
        if (seen == count) {
            *next = ks_member_cursor_save(c, &mi);
            break;
        }
        const char *v = ks_miter_value(&mi, &vn);
        if (!pat || ks_glob_match(pat, plen, s, sn, 0)) fn(arg, s, sn, v, vn);
    }
    st = ks_miter_close(&mi, c);
    ks_meta_free(&m);
    return st;
}
