/*
 * ks_hash_ops.c -- the hash commands' data work: HSET, HMGET, HLEN, HDEL,
 * HINCRBY[FLOAT], HSCAN. Storage layouts are in ks_hash.c / ENCODING.md.
 *
 * Cost model (issue 3): on a packed hash every command is one engine get
 * plus at most one put; on a big hash each field costs one get and one put
 * (plus one put of the metadata when the field count changes). Only when an
 * index wants the key (KS1) is the whole hash materialized.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"

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

/* Per-field writes into a big hash; *added counts fields that were new. */
static ks_status big_set(ks_ctx *c, const char *key, size_t klen, const ks_meta *m,
                         const ks_field *pairs, size_t n, int nx, uint64_t *added)
{
    ks_ekey fk;
    ks_ekey_fields(&fk, c->db, key, klen, m->version);
    size_t base = fk.n;
    ks_status st = KS_OK;
    *added = 0;
    for (size_t j = 0; j < n; j++) {
        fk.n = base;
        ks_ekey_append(&fk, pairs[j].f, pairs[j].fl);
        char *v = NULL;
        size_t vl;
        eng_status s = ks_eget(c, NULL, fk.p, fk.n, &v, &vl);
        if (s == ENG_OK)
            eng_free(v);
        else if (s != ENG_NOTFOUND) {
            st = ks_engine_err(c, s, "hset");
            break;
        }
        if (s == ENG_OK && nx) continue;
        if (s == ENG_NOTFOUND) (*added)++;
        eng_batch_put(c->batch, fk.p, fk.n, pairs[j].v, pairs[j].vl);
    }
    ks_ekey_free(&fk);
    if (st != KS_OK) return st;
    if (!*added) {
        ks_touch(c, c->db, key, klen);
        return KS_OK;
    }
    char meta[16];
    ks_put_le64(meta, m->version);
    ks_put_le64(meta + 8, m->count + *added);
    return ks_meta_write(c, c->db, key, klen, m, KS_HASH, 1, m->expire, meta, 16, NULL, 0);
}

/* HSET given key's metadata (read for a write, live hash or absent). */
static ks_status hset_meta(ks_ctx *c, const char *key, size_t klen, const ks_meta *m,
                           const ks_field *pairs, size_t n, int nx, uint64_t *added)
{
    int hook = ks_hook_wanted(c, c->db, key, klen);
    if (m->type == KS_HASH && m->big && !hook) return big_set(c, key, klen, m, pairs, n, nx, added);
    ks_fvec old, cur;
    ks_fvec_init(&old);
    ks_fvec_init(&cur);
    ks_status st = KS_OK;
    if (m->type == KS_HASH) st = ks_hash_load(c, NULL, c->db, key, klen, m, &old);
    for (size_t i = 0; st == KS_OK && i < old.n; i++)
        if (ks_fvec_push(&cur, old.v[i].f, old.v[i].fl, old.v[i].v, old.v[i].vl)) st = ks_oom(c);
    if (st == KS_OK && apply_sets(&cur, pairs, n, nx, added) != 0) st = ks_oom(c);
    if (st == KS_OK && nx && !*added) goto out; /* HSETNX on an existing field */
    if (st == KS_OK && hook)
        st = ks_hook_call(c, c->db, key, klen, old.v, old.n, m->type == KS_HASH, cur.v, cur.n, 1,
                          m->expire);
    if (st != KS_OK) goto out;
    if (m->type == KS_HASH && m->big) {
        uint64_t again;
        st = big_set(c, key, klen, m, pairs, n, nx, &again);
    } else {
        st = ks_hash_store(c, c->db, key, klen, m, cur.v, cur.n, m->expire);
    }
out:
    ks_fvec_free(&cur);
    ks_fvec_free(&old);
    return st;
}

/* Reads the metadata of hash key for a read-only command (no snapshot).
 * Returns KS_OK with *m filled (the caller frees it with ks_meta_free), or
 * KS_NOTFOUND / KS_ERR_WRONGTYPE / an engine error with nothing to free. */
static ks_status read_hash(ks_ctx *c, const char *key, size_t klen, ks_meta *m)
{
    ks_status st = ks_meta_read(c, NULL, c->db, key, klen, m);
    if (st != KS_OK) return st;
    if (m->type == KS_HASH) return KS_OK;
    st = m->type == KS_NONE ? KS_NOTFOUND : KS_ERR_WRONGTYPE;
    ks_meta_free(m);
    return st;
}

static ks_status read_hash_w(ks_ctx *c, const char *key, size_t klen, ks_meta *m)
{
    ks_status st = ks_meta_read_w(c, c->db, key, klen, m);
    if (st == KS_OK && m->type != KS_NONE && m->type != KS_HASH) {
        ks_meta_free(m);
        return KS_ERR_WRONGTYPE;
    }
    return st;
}

ks_status ks_hset(ks_ctx *c, const char *key, size_t klen, const ks_field *fv, size_t n, int nx,
                  uint64_t *added)
{
    ks_meta m;
    *added = 0;
    ks_status st = read_hash_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    st = hset_meta(c, key, klen, &m, fv, n, nx, added);
    ks_meta_free(&m);
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

static ks_status big_get(ks_ctx *c, const char *key, size_t klen, const ks_meta *m, ks_field *items,
                         size_t n, hmget_owner *o)
{
    if (!(o->bufs = calloc(n ? n : 1, sizeof(char *)))) return ks_oom(c);
    ks_ekey fk;
    ks_ekey_fields(&fk, c->db, key, klen, m->version);
    size_t base = fk.n;
    ks_status st = KS_OK;
    for (size_t j = 0; j < n; j++) {
        fk.n = base;
        ks_ekey_append(&fk, items[j].f, items[j].fl);
        char *v = NULL;
        size_t vl = 0;
        eng_status s = ks_eget(c, NULL, fk.p, fk.n, &v, &vl);
        if (s == ENG_OK) {
            o->bufs[o->nbufs++] = v;
            items[j].v = v ? v : "";
            items[j].vl = vl;
        } else if (s != ENG_NOTFOUND) {
            st = ks_engine_err(c, s, "hget");
            break;
        }
    }
    ks_ekey_free(&fk);
    return st;
}

ks_status ks_hmget(ks_ctx *c, const char *key, size_t klen, ks_field *items, size_t n, void **owner)
{
    ks_meta m;
    *owner = NULL;
    for (size_t j = 0; j < n; j++)
        items[j].v = NULL, items[j].vl = 0;
    ks_status st = read_hash(c, key, klen, &m);
    if (st != KS_OK) return st;
    hmget_owner *o = calloc(1, sizeof(*o));
    if (!o) {
        ks_meta_free(&m);
        return ks_oom(c);
    }
    if (m.big) {
        st = big_get(c, key, klen, &m, items, n, o);
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
        if (st == KS_ERR_ENGINE) c->err = strdup("ERR corrupt hash encoding");
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
    ks_status st = read_hash(c, key, klen, &m);
    if (st != KS_OK) return st;
    if (m.big)
        *n = m.count;
    else if (!ks_get_varint(m.payload, m.payload + m.plen, n))
        st = KS_ERR_ENGINE;
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

static ks_status big_del(ks_ctx *c, const char *key, size_t klen, const ks_meta *m,
                         const ks_field *fields, size_t n, uint64_t *deleted)
{
    ks_ekey fk;
    ks_ekey_fields(&fk, c->db, key, klen, m->version);
    size_t base = fk.n;
    ks_status st = KS_OK;
    for (size_t j = 0; j < n; j++) {
        fk.n = base;
        ks_ekey_append(&fk, fields[j].f, fields[j].fl);
        char *v = NULL;
        size_t vl;
        eng_status s = ks_eget(c, NULL, fk.p, fk.n, &v, &vl);
        if (s == ENG_OK) {
            eng_free(v);
            eng_batch_delete(c->batch, fk.p, fk.n);
            (*deleted)++;
        } else if (s != ENG_NOTFOUND) {
            st = ks_engine_err(c, s, "hdel");
            break;
        }
    }
    ks_ekey_free(&fk);
    if (st != KS_OK || !*deleted) return st;
    if (*deleted >= m->count) return ks_meta_remove(c, c->db, key, klen, m, 0);
    char meta[16];
    ks_put_le64(meta, m->version);
    ks_put_le64(meta + 8, m->count - *deleted);
    return ks_meta_write(c, c->db, key, klen, m, KS_HASH, 1, m->expire, meta, 16, NULL, 0);
}

/* The hook needs old and new content of a big hash: deletes are looked up
 * in a sorted copy so a hash of millions of fields costs O(n log d). */
static ks_status del_content(ks_ctx *c, const ks_fvec *old, const ks_field *fields, size_t n,
                             ks_fvec *cur)
{
    spair *d = malloc((n ? n : 1) * sizeof(*d));
    if (!d) return ks_oom(c);
    for (size_t j = 0; j < n; j++)
        d[j] = (spair){fields[j], 0};
    qsort(d, n, sizeof(*d), spair_cmp);
    for (size_t i = 0; i < old->n; i++) {
        spair probe = {old->v[i], 0};
        size_t lo = 0, hi = n;
        int found = 0;
        while (lo < hi && !found) {
            size_t mid = (lo + hi) / 2;
            int r = spair_cmp(&probe, &d[mid]);
            if (r == 0)
                found = 1;
            else if (r < 0)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (!found && ks_fvec_push(cur, old->v[i].f, old->v[i].fl, old->v[i].v, old->v[i].vl)) {
            free(d);
            return ks_oom(c);
        }
    }
    free(d);
    return KS_OK;
}

ks_status ks_hdel(ks_ctx *c, const char *key, size_t klen, const ks_field *fields, size_t n,
                  uint64_t *deleted)
{
    ks_meta m;
    *deleted = 0;
    ks_status st = read_hash_w(c, key, klen, &m);
    if (st != KS_OK || m.type == KS_NONE) {
        if (st == KS_OK) ks_meta_free(&m);
        return st == KS_OK ? KS_NOTFOUND : st;
    }
    int hook = ks_hook_wanted(c, c->db, key, klen);
    ks_fvec old, cur;
    ks_fvec_init(&old);
    ks_fvec_init(&cur);
    if (m.big && !hook) {
        st = big_del(c, key, klen, &m, fields, n, deleted);
        goto out;
    }
    st = ks_hash_load(c, NULL, c->db, key, klen, &m, &old);
    if (st != KS_OK) goto out;
    if (m.big) {
        st = del_content(c, &old, fields, n, &cur);
    } else {
        for (size_t i = 0; i < old.n; i++)
            if (!in_list(fields, n, old.v[i].f, old.v[i].fl) &&
                ks_fvec_push(&cur, old.v[i].f, old.v[i].fl, old.v[i].v, old.v[i].vl))
                st = ks_oom(c);
    }
    if (st != KS_OK || cur.n == old.n) goto out;
    if (hook)
        st = ks_hook_call(c, c->db, key, klen, old.v, old.n, 1, cur.v, cur.n, cur.n > 0,
                          cur.n ? m.expire : 0);
    if (st != KS_OK) goto out;
    if (m.big) {
        st = big_del(c, key, klen, &m, fields, n, deleted);
    } else {
        *deleted = old.n - cur.n;
        st = cur.n ? ks_hash_store(c, c->db, key, klen, &m, cur.v, cur.n, m.expire)
                   : ks_meta_remove(c, c->db, key, klen, &m, 0);
    }
out:
    ks_fvec_free(&cur);
    ks_fvec_free(&old);
    ks_meta_free(&m);
    return st;
}

/* ---- HINCRBY / HINCRBYFLOAT ------------------------------------------------ */

/* Finds field f's current value of the hash in m (read for a write).
 * *found = 0 when absent; *buf owns a big hash's value (eng_free). */
static ks_status field_value(ks_ctx *c, const char *key, size_t klen, const ks_meta *m,
                             const char *f, size_t fl, const char **v, size_t *vl, int *found,
                             char **buf)
{
    *found = 0;
    *buf = NULL;
    if (m->type == KS_NONE) return KS_OK;
    ks_field item = {f, fl, NULL, 0};
    if (m->big) {
        hmget_owner o = {0};
        ks_status st = big_get(c, key, klen, m, &item, 1, &o);
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
        return KS_ERR_ENGINE;
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

static ks_status set_err(ks_ctx *c, const char *msg)
{
    free(c->err);
    c->err = strdup(msg);
    return KS_ERR_MSG;
}

/* Stores v as the new value of field f of the hash whose metadata is *m
 * (HINCRBY, HINCRBYFLOAT); same returns as hset_meta. */
static ks_status put_field(ks_ctx *c, const char *key, size_t klen, const ks_meta *m, const char *f,
                           size_t fl, const char *v, size_t vl)
{
    ks_field p = {f, fl, v, vl};
    uint64_t added;
    return hset_meta(c, key, klen, m, &p, 1, 0, &added);
}

ks_status ks_hincrby(ks_ctx *c, const char *key, size_t klen, const char *f, size_t fl,
                     long long by, long long *out)
{
    ks_meta m;
    ks_status st = read_hash_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    const char *v = NULL;
    size_t vl = 0;
    int found;
    char *buf;
    long long cur = 0;
    st = field_value(c, key, klen, &m, f, fl, &v, &vl, &found, &buf);
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
        st = put_field(c, key, klen, &m, f, fl, num, (size_t)n);
    }
    ks_meta_free(&m);
    return st;
}

ks_status ks_hincrbyfloat(ks_ctx *c, const char *key, size_t klen, const char *f, size_t fl,
                          long double by, char *out, size_t *outlen)
{
    ks_meta m;
    ks_status st = read_hash_w(c, key, klen, &m);
    if (st != KS_OK) return st;
    const char *v = NULL;
    size_t vl = 0;
    int found;
    char *buf;
    long double cur = 0;
    st = field_value(c, key, klen, &m, f, fl, &v, &vl, &found, &buf);
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
    if (st == KS_OK) st = put_field(c, key, klen, &m, f, fl, out, *outlen);
    ks_meta_free(&m);
    return st;
}

/* ---- HSCAN ------------------------------------------------------------------ */

ks_status ks_hscan(ks_ctx *c, const char *key, size_t klen, uint64_t cursor, const char *pat,
                   size_t plen, uint64_t count, ks_field_fn fn, void *arg, uint64_t *next)
{
    ks_meta m;
    *next = 0;
    ks_status st = read_hash(c, key, klen, &m);
    if (st != KS_OK) return st;
    if (!m.big) { /* small hashes come back whole, as Redis's listpack */
        ks_fvec fv;
        ks_fvec_init(&fv);
        if (ks_packed_parse(m.payload, m.plen, &fv) != 0) st = KS_ERR_ENGINE;
        for (size_t i = 0; st == KS_OK && i < fv.n; i++)
            if ((!pat || ks_glob_match(pat, plen, fv.v[i].f, fv.v[i].fl, 0)) &&
                fn(arg, fv.v[i].f, fv.v[i].fl, fv.v[i].v, fv.v[i].vl))
                break;
        ks_fvec_free(&fv);
        ks_meta_free(&m);
        return st;
    }
    ks_ekey pre;
    ks_ekey_fields(&pre, c->db, key, klen, m.version);
    /* A cursor names the next field key to visit (ks_scan does the same). */
    const ks_cursor *cur = cursor ? ks_cursor_find(c->ks, cursor) : NULL;
    int resume = cur && cur->plen >= pre.n && memcmp(cur->pos, pre.p, pre.n) == 0;
    eng_iter *it = eng_iter_new(c->ks->db, NULL, ks_read_batch(c));
    if (resume)
        eng_iter_seek(it, cur->pos, cur->plen);
    else
        eng_iter_seek(it, pre.p, pre.n);
    for (uint64_t seen = 0; eng_iter_valid(it); eng_iter_next(it), seen++) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl);
        if (kl < pre.n || memcmp(k, pre.p, pre.n) != 0) break;
        if (seen == count) {
            *next = ks_cursor_save(c->ks, k, kl);
            break;
        }
        const char *v = eng_iter_value(it, &vl);
        if (!pat || ks_glob_match(pat, plen, k + pre.n, kl - pre.n, 0))
            fn(arg, k + pre.n, kl - pre.n, v, vl);
    }
    if (eng_iter_status(it) != ENG_OK) st = ks_engine_err(c, eng_iter_status(it), "hscan");
    eng_iter_free(it);
    ks_ekey_free(&pre);
    ks_meta_free(&m);
    return st;
}
