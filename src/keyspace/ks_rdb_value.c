/*
 * ks_rdb_value.c -- DUMP and RESTORE (keyspace.h): a value as Redis's RDB
 * serialization of one object, so payloads move between redis-server 7.0
 * and strata both ways. Grammar: ENCODING.md, "DUMP payloads".
 *
 * RESTORE reads every encoding Redis 7.0 writes or loads for strings,
 * lists, sets, hashes and sorted sets (plain, listpack, intset, ziplist,
 * quicklist 1 and 2), decodes it whole and checks it before anything is
 * written, then writes the value through the type's own commands (SET,
 * HSET, SADD, RPUSH, ZADD), which choose strata's packing and Redis's
 * OBJECT ENCODING as for any other write; duplicates (which those
 * commands reveal through their counts) make the payload bad, and the
 * error reply rolls back what was written (S1). DUMP writes the plain
 * encodings (string, list, set, hash, zset-2), which Redis 7.0 loads into
 * its compact encodings by the same size rules.
 *
 * Each type is one small part below: a dump function, and its decoders
 * per RDB type feeding one restore function.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_encoding.h"
#include "keyspace/ks_rdb.h"
#include "keyspace/ks_rdb_stream.h"
#include "keyspace/ks_type.h"

/* Sorted sets come with the zsets branch; until then their part is left out. */
#if __has_include("keyspace/ks_zset.h")
#define KS_RDB_ZSETS 1
#else
#define KS_RDB_ZSETS 0
#endif

enum {
    RDB_STRING = 0,
    RDB_LIST = 1,
    RDB_SET = 2,
    RDB_ZSET = 3,
    RDB_HASH = 4,
    RDB_ZSET_2 = 5,
    RDB_LIST_ZIPLIST = 10,
    RDB_SET_INTSET = 11,
    RDB_ZSET_ZIPLIST = 12,
    RDB_HASH_ZIPLIST = 13,
    RDB_LIST_QUICKLIST = 14,
    RDB_HASH_LISTPACK = 16,
    RDB_ZSET_LISTPACK = 17,
    RDB_LIST_QUICKLIST_2 = 18,
};

static const char BAD_FORMAT[] = "ERR Bad data format";

/* ---- Decoding: every element into one vector ------------------------------ */

/* A decoded value: elements in payload order (copies owned by fv); hashes
 * and zsets as alternating field, value (a zset's value is its score as
 * 8 bytes of a double). */
typedef struct decoded {
    int type; /* ks_type */
    ks_fvec fv;
    ks_rdb_xstream *xs; /* a stream (ks_rdb_stream_load.c) */
} decoded;

static int push_elem(void *arg, const char *s, size_t n)
{
    return ks_fvec_push_copy(&((decoded *)arg)->fv, s, n, NULL, 0);
}

/* One RDB string as an element. */
static int get_elem(ks_rdb_in *r, decoded *d)
{
    char *s;
    size_t n;
    if (ks_rdb_get_string(r, &s, &n) < 0) return -1;
    int bad = push_elem(d, s, n);
    free(s);
    return bad ? -1 : 0;
}

/* A packed container held in one RDB string. */
typedef int (*pack_fn)(const unsigned char *p, size_t n, ks_rdb_elem_fn fn, void *arg);
static int get_pack(ks_rdb_in *r, decoded *d, pack_fn pack)
{
    char *s;
    size_t n;
    if (ks_rdb_get_string(r, &s, &n) < 0) return -1;
    int bad = pack((const unsigned char *)s, n, push_elem, d);
    free(s);
    return bad;
}

/* count strings (count pairs when pairs), each at least one byte. */
static int get_elems(ks_rdb_in *r, decoded *d, int pairs)
{
    uint64_t count;
    if (ks_rdb_get_count(r, &count) < 0 || count == 0) return -1;
    if (pairs && count > UINT64_MAX / 2) return -1;
    for (uint64_t i = 0; i < (pairs ? count * 2 : count); i++)
        if (r->p >= r->end || get_elem(r, d) < 0) return -1;
    return 0;
}

/* Quicklist nodes: ziplists (version 1) or a container byte, 1 plain (one
 * element) or 2 packed (a listpack), before each (version 2). */
static int get_quicklist(ks_rdb_in *r, decoded *d, int v2)
{
    uint64_t nodes;
    if (ks_rdb_get_count(r, &nodes) < 0 || nodes == 0) return -1;
    for (uint64_t i = 0; i < nodes; i++) {
        uint64_t container = 2;
        if (r->p >= r->end || (v2 && ks_rdb_get_count(r, &container) < 0)) return -1;
        if (container == 1) {
            if (get_elem(r, d) < 0) return -1;
        } else if (container != 2 || get_pack(r, d, v2 ? ks_rdb_listpack : ks_rdb_ziplist) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Scores: RDB_ZSET_2's binary doubles, RDB_ZSET's text doubles (a length
 * byte, 253 nan, 254 +inf, 255 -inf), and the text of packed containers.
 * The element at i becomes its 8-byte double. 0, or -1 (NaN, not a
 * number). */
static int text_score(const char *s, size_t n, double *out)
{
    char buf[256], *end;
    if (n == 0 || n >= sizeof(buf)) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    *out = strtod(buf, &end);
    return *end || isnan(*out) ? -1 : 0;
}

static int get_zset_plain(ks_rdb_in *r, decoded *d, int binary)
{
    uint64_t count;
    if (ks_rdb_get_count(r, &count) < 0 || count == 0) return -1;
    for (uint64_t i = 0; i < count; i++) {
        char *m;
        size_t ml;
        double score;
        if (ks_rdb_get_string(r, &m, &ml) < 0) return -1;
        int bad = 0;
        if (binary) {
            if (r->end - r->p < 8)
                bad = 1;
            else {
                uint64_t u = 0;
                for (int k = 7; k >= 0; k--)
                    u = (u << 8) | r->p[k];
                memcpy(&score, &u, 8);
                r->p += 8;
            }
        } else if (r->p >= r->end) {
            bad = 1;
        } else {
            unsigned l = *r->p++;
            if (l == 253)
                bad = 1;
            else if (l >= 254)
                score = l == 254 ? INFINITY : -INFINITY;
            else if ((size_t)(r->end - r->p) < l || text_score((const char *)r->p, l, &score) < 0)
                bad = 1;
            else
                r->p += l;
        }
        bad = bad || isnan(score) || ks_fvec_push_copy(&d->fv, m, ml, (char *)&score, 8) < 0;
        free(m);
        if (bad) return -1;
    }
    return 0;
}

/* Pairs decoded as single elements become (field, value) pairs; for zsets
 * the value turns into its 8-byte score. */
static int pair_up(decoded *d, int scores)
{
    if (d->fv.n % 2) return -1;
    size_t n = d->fv.n / 2;
    for (size_t i = 0; i < n; i++) {
        ks_field f = d->fv.v[2 * i], v = d->fv.v[2 * i + 1];
        d->fv.v[i] = (ks_field){f.f, f.fl, v.f, v.fl};
        if (scores) {
            double s;
            if (text_score(v.f, v.fl, &s) < 0) return -1;
            /* the score's 8 bytes go to fv's chunks as a scratch element */
            if (ks_fvec_push_copy(&d->fv, (char *)&s, 8, NULL, 0) < 0) return -1;
            d->fv.v[i].v = d->fv.v[d->fv.n - 1].f;
            d->fv.v[i].vl = 8;
            d->fv.n--;
        }
    }
    d->fv.n = n;
    return 0;
}

/* The object after the type byte. 0, or -1 when it is malformed. */
static int decode(ks_rdb_in *r, decoded *d)
{
    if (r->p >= r->end) return -1;
    int rt = *r->p++;
    switch (rt) {
    case RDB_STRING:
        d->type = KS_STRING;
        return get_elem(r, d);
    case RDB_LIST:
        d->type = KS_LIST;
        return get_elems(r, d, 0);
    case RDB_LIST_ZIPLIST:
        d->type = KS_LIST;
        return get_pack(r, d, ks_rdb_ziplist);
    case RDB_LIST_QUICKLIST:
    case RDB_LIST_QUICKLIST_2:
        d->type = KS_LIST;
        return get_quicklist(r, d, rt == RDB_LIST_QUICKLIST_2);
    case RDB_SET:
        d->type = KS_SET;
        return get_elems(r, d, 0);
    case RDB_SET_INTSET:
        d->type = KS_SET;
        return get_pack(r, d, ks_rdb_intset);
    case RDB_HASH:
        d->type = KS_HASH;
        return get_elems(r, d, 1) < 0 ? -1 : pair_up(d, 0);
    case RDB_HASH_ZIPLIST:
    case RDB_HASH_LISTPACK:
        d->type = KS_HASH;
        return get_pack(r, d, rt == RDB_HASH_ZIPLIST ? ks_rdb_ziplist : ks_rdb_listpack) < 0
                   ? -1
                   : pair_up(d, 0);
    case RDB_ZSET:
    case RDB_ZSET_2:
        d->type = KS_ZSET;
        return get_zset_plain(r, d, rt == RDB_ZSET_2);
    case RDB_ZSET_ZIPLIST:
    case RDB_ZSET_LISTPACK:
        d->type = KS_ZSET;
        return get_pack(r, d, rt == RDB_ZSET_ZIPLIST ? ks_rdb_ziplist : ks_rdb_listpack) < 0
                   ? -1
                   : pair_up(d, 1);
    case KS_RDB_STREAM_LISTPACKS:
    case KS_RDB_STREAM_LISTPACKS_2:
    case KS_RDB_STREAM_LISTPACKS_3:
        d->type = KS_STREAM;
        return ks_rdb_stream_decode(r, rt, &d->xs);
    default:
        return -1;
    }
}

/* ---- The types' parts ------------------------------------------------------- */

typedef struct dumper {
    ks_rdb_out out;
    uint64_t left; /* list: items still to come */
} dumper;

static void put_items(void *arg, const ks_field *f, size_t n)
{
    dumper *d = arg;
    for (size_t i = 0; i < n; i++)
        ks_rdb_put_string(&d->out, f[i].f, f[i].fl);
}

static void put_count(void *arg, uint64_t n)
{
    ks_rdb_put_len(&((dumper *)arg)->out, n);
}

static void put_members(void *arg, const ks_field *f, size_t n)
{
    put_count(arg, n);
    put_items(arg, f, n);
}

static void put_pairs(void *arg, const ks_field *f, size_t n)
{
    dumper *d = arg;
    ks_rdb_put_len(&d->out, n);
    for (size_t i = 0; i < n; i++) {
        ks_rdb_put_string(&d->out, f[i].f, f[i].fl);
        ks_rdb_put_string(&d->out, f[i].v, f[i].vl);
    }
}

static ks_status dump_string(ks_ctx *c, const char *key, size_t klen, dumper *d)
{
    ks_val v;
    ks_status st = ks_get(c, key, klen, &v);
    if (st != KS_OK) return st;
    ks_rdb_put_byte(&d->out, RDB_STRING);
    ks_rdb_put_string(&d->out, v.p, v.n);
    ks_val_free(&v);
    return KS_OK;
}

static ks_status dump_list(ks_ctx *c, const char *key, size_t klen, dumper *d)
{
    ks_rdb_put_byte(&d->out, RDB_LIST);
    return ks_lrange(c, key, klen, 0, -1, put_count, put_items, d);
}

static ks_status dump_set(ks_ctx *c, const char *key, size_t klen, dumper *d)
{
    ks_rdb_put_byte(&d->out, RDB_SET);
    return ks_smembers(c, key, klen, put_members, d);
}

static ks_status dump_hash(ks_ctx *c, const char *key, size_t klen, dumper *d)
{
    ks_rdb_put_byte(&d->out, RDB_HASH);
    return ks_hash_fields(c, key, klen, put_pairs, d);
}

/* Restores: the key is absent (RESTORE deleted it or found none). */
static ks_status restore_string(ks_ctx *c, const char *key, size_t klen, const decoded *d,
                                int64_t expire)
{
    if (d->fv.n != 1) return ks_err_msg(c, BAD_FORMAT);
    ks_set_opts o = {.expire_ms = expire};
    int done;
    return ks_set(c, key, klen, d->fv.v[0].f, d->fv.v[0].fl, &o, &done, NULL);
}

static ks_status restore_list(ks_ctx *c, const char *key, size_t klen, const decoded *d,
                              int64_t expire)
{
    (void)expire;
    uint64_t len;
    if (d->fv.n == 0) return ks_err_msg(c, BAD_FORMAT); /* quicklists of empty nodes */
    return ks_lpush(c, key, klen, KS_LIST_TAIL, 0, d->fv.v, d->fv.n, &len);
}

static ks_status restore_set(ks_ctx *c, const char *key, size_t klen, const decoded *d,
                             int64_t expire)
{
    (void)expire;
    uint64_t added;
    ks_status st = ks_sadd(c, key, klen, d->fv.v, d->fv.n, &added);
    return st == KS_OK && added != d->fv.n ? ks_err_msg(c, BAD_FORMAT) : st;
}

static ks_status restore_hash(ks_ctx *c, const char *key, size_t klen, const decoded *d,
                              int64_t expire)
{
    (void)expire;
    uint64_t added;
    ks_status st = ks_hset(c, key, klen, d->fv.v, d->fv.n, 0, &added);
    return st == KS_OK && added != d->fv.n ? ks_err_msg(c, BAD_FORMAT) : st;
}

static ks_status dump_stream(ks_ctx *c, const char *key, size_t klen, dumper *d)
{
    return ks_rdb_stream_dump(c, key, klen, &d->out);
}

static ks_status restore_stream(ks_ctx *c, const char *key, size_t klen, const decoded *d,
                                int64_t expire)
{
    (void)expire;
    return ks_rdb_stream_restore(c, key, klen, d->xs);
}

#if KS_RDB_ZSETS
static void put_zmembers(void *arg, const ks_zmember *z, size_t n)
{
    dumper *d = arg;
    ks_rdb_put_len(&d->out, n);
    for (size_t i = 0; i < n; i++) {
        ks_rdb_put_string(&d->out, z[i].m, z[i].ml);
        uint64_t u;
        unsigned char b[8];
        memcpy(&u, &z[i].score, 8);
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)(u >> (8 * k));
        ks_rdb_put(&d->out, b, 8);
    }
}

static ks_status dump_zset(ks_ctx *c, const char *key, size_t klen, dumper *d)
{
    ks_rdb_put_byte(&d->out, RDB_ZSET_2);
    ks_zspec all = {.by = KS_ZBY_RANK, .start = 0, .end = -1, .limit = -1};
    return ks_zrange(c, key, klen, &all, put_zmembers, d);
}

static ks_status restore_zset(ks_ctx *c, const char *key, size_t klen, const decoded *d,
                              int64_t expire)
{
    (void)expire;
    ks_zmember *z = malloc((d->fv.n ? d->fv.n : 1) * sizeof(*z));
    if (!z) return ks_oom(c);
    for (size_t i = 0; i < d->fv.n; i++) {
        z[i] = (ks_zmember){d->fv.v[i].f, d->fv.v[i].fl, 0};
        memcpy(&z[i].score, d->fv.v[i].v, 8);
    }
    ks_zadd_result r = {0};
    ks_status st = ks_zadd(c, key, klen, z, d->fv.n, 0, &r);
    free(z);
    return st == KS_OK && r.added != d->fv.n ? ks_err_msg(c, BAD_FORMAT) : st;
}
#endif

typedef struct rdb_part {
    ks_status (*dump)(ks_ctx *c, const char *key, size_t klen, dumper *d);
    /* Writes d at key; collections get their expire afterwards. */
    ks_status (*restore)(ks_ctx *c, const char *key, size_t klen, const decoded *d, int64_t expire);
} rdb_part;

static const rdb_part parts[KS_TYPE_MAX] = {
    [KS_STRING] = {dump_string, restore_string}, [KS_LIST] = {dump_list, restore_list},
    [KS_SET] = {dump_set, restore_set},          [KS_HASH] = {dump_hash, restore_hash},
    [KS_STREAM] = {dump_stream, restore_stream},
#if KS_RDB_ZSETS
    [KS_ZSET] = {dump_zset, restore_zset},
#endif
};

/* ---- DUMP and RESTORE -------------------------------------------------------- */

ks_status ks_dump(ks_ctx *c, const char *key, size_t klen, ks_val *out)
{
    ks_type t;
    ks_status st = ks_type_of(c, key, klen, &t);
    if (st != KS_OK) return st;
    if (t == KS_NONE) return KS_NOTFOUND;
    if (t < KS_NONE || t >= KS_TYPE_MAX || !parts[t].dump)
        return ks_err_msg(c, "ERR DUMP of this type is not supported");
    dumper d = {{NULL, 0, 0, 0}, 0};
    st = parts[t].dump(c, key, klen, &d);
    if (st == KS_OK) ks_rdb_put_footer(&d.out);
    if (st == KS_OK && d.out.oom) st = ks_oom(c);
    if (st != KS_OK) {
        free(d.out.p);
        return st;
    }
    out->base = (char *)d.out.p;
    out->p = out->base;
    out->n = d.out.n;
    return KS_OK;
}

ks_status ks_restore(ks_ctx *c, const char *key, size_t klen, const char *payload, size_t n,
                     int replace, int64_t expire_ms)
{
    ks_rdb_in r;
    if (ks_rdb_open((const unsigned char *)payload, n, &r) < 0)
        return ks_err_msg(c, "ERR DUMP payload version or checksum are wrong");
    r.end += 10; /* Redis reads the object from the whole payload, footer included */
    decoded d = {KS_NONE, {0}, NULL};
    ks_fvec_init(&d.fv);
    ks_status st = KS_OK;
    if (decode(&r, &d) < 0 || d.type <= KS_NONE || !parts[d.type].restore) {
        st = ks_err_msg(c, BAD_FORMAT);
        goto cleanup;
    }
    int deleted;
    if (replace && (st = ks_del(c, key, klen, &deleted)) != KS_OK) goto cleanup;
    if (expire_ms && expire_ms <= c->now_ms) goto cleanup; /* as Redis: OK, nothing made */
    st = parts[d.type].restore(c, key, klen, &d, expire_ms);
    if (st == KS_OK && expire_ms && d.type != KS_STRING) {
        int done;
        st = ks_expire_set(c, key, klen, expire_ms, 0, &done);
    }
cleanup:
    ks_fvec_free(&d.fv);
    ks_rdb_stream_free(d.xs);
    return st;
}
