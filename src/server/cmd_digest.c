/*
 * cmd_digest.c -- DEBUG DIGEST and DEBUG DIGEST-VALUE: Redis's dataset
 * signature, computed the way Redis 7.0's debug.c does so that a strata
 * primary, a strata replica and a redis-server holding the same data print
 * the same 40 hex digits (Redis's replication tests compare them).
 *
 * The signature is defined over logical content, not encodings:
 *   xor(d, data):  d ^= SHA1(data)
 *   mix(d, data):  d = SHA1(d ^ SHA1(data))      (order matters)
 *   value(key):    mix(type as a big-endian u32, Redis's OBJ_* number),
 *                  then per type: a string mixes its bytes; a list mixes
 *                  each item in order; a set xors each member; a sorted set
 *                  xors, per member, mix(mix(0, member), "%.17g" score); a
 *                  hash xors, per field, mix(mix(0, field), value); a stream
 *                  mixes "<ms>.<seq>" then each field and value of every
 *                  entry in id order; a key with a TTL then xors
 *                  "!!expire!!".
 *   key digest:    mix(0, key name), then value(key) continued on it.
 *   dataset:       for each non-empty db j (the number SELECT names):
 *                  final = mix(final, big-endian u32 j), then final ^= each
 *                  key digest (so key order does not matter).
 * An empty dataset is forty zeros, as in Redis.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "keyspace/stream.h"
#include "server/script.h"
#include "server/server.h"

typedef unsigned char digest_t[20];

static void dg_xor(unsigned char *d, const void *p, size_t n)
{
    unsigned char h[20];
    script_sha1(h, p, n);
    for (int i = 0; i < 20; i++)
        d[i] ^= h[i];
}

static void dg_mix(unsigned char *d, const void *p, size_t n)
{
    dg_xor(d, p, n);
    script_sha1(d, d, 20);
}

/* d ^= mix(mix(0, a), b): one unordered element of a hash or sorted set. */
static void dg_xor_pair(unsigned char *d, const char *a, size_t al, const char *b, size_t bl)
{
    digest_t e = {0};
    dg_mix(e, a, al);
    dg_mix(e, b, bl);
    dg_xor(d, e, 20);
}

static void dg_count_none(void *arg, uint64_t n)
{
    (void)arg, (void)n;
}

static void dg_list_items(void *arg, const ks_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dg_mix(arg, f[i].f, f[i].fl);
}

static void dg_set_members(void *arg, const ks_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dg_xor(arg, f[i].f, f[i].fl);
}

static void dg_zset_members(void *arg, const ks_zmember *z, size_t n)
{
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        int bl = snprintf(buf, sizeof(buf), "%.17g", z[i].score);
        dg_xor_pair(arg, z[i].m, z[i].ml, buf, (size_t)bl);
    }
}

static void dg_hash_fields(void *arg, const ks_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dg_xor_pair(arg, f[i].f, f[i].fl, f[i].v, f[i].vl);
}

static void dg_stream_entry(void *arg, const ks_xid *id, const ks_field *f, size_t n, int exists)
{
    if (!exists) return;
    char buf[48];
    int bl = snprintf(buf, sizeof(buf), "%llu.%llu", (unsigned long long)id->ms,
                      (unsigned long long)id->seq);
    dg_mix(arg, buf, (size_t)bl);
    for (size_t i = 0; i < n; i++) {
        dg_mix(arg, f[i].f, f[i].fl);
        dg_mix(arg, f[i].v, f[i].vl);
    }
}

/* Redis's OBJ_* numbers, which the signature mixes in. */
static uint32_t dg_redis_type(ks_type t)
{
    switch (t) {
    case KS_STRING:
        return 0;
    case KS_LIST:
        return 1;
    case KS_SET:
        return 2;
    case KS_ZSET:
        return 3;
    case KS_HASH:
        return 4;
    case KS_STREAM:
        return 6;
    default:
        return 0;
    }
}

/* Continues d with value(key) (see the top of the file). An absent key
 * leaves d as it is. Returns KS_OK or the read's error. */
static ks_status dg_value(ks_ctx *ks, const char *key, size_t klen, unsigned char *d)
{
    ks_type t = KS_NONE;
    ks_status st = ks_type_of(ks, key, klen, &t);
    if (st == KS_NOTFOUND || (st == KS_OK && t == KS_NONE)) return KS_OK;
    if (st != KS_OK) return st;
    uint32_t aux = htonl(dg_redis_type(t));
    dg_mix(d, &aux, sizeof(aux));
    if (t == KS_STRING) {
        ks_val v;
        if ((st = ks_get(ks, key, klen, &v)) != KS_OK) return st;
        dg_mix(d, v.p, v.n);
        ks_val_free(&v);
    } else if (t == KS_LIST) {
        st = ks_lrange(ks, key, klen, 0, -1, dg_count_none, dg_list_items, d);
    } else if (t == KS_SET) {
        st = ks_smembers(ks, key, klen, dg_set_members, d);
    } else if (t == KS_ZSET) {
        ks_zspec r = {.by = KS_ZBY_RANK, .start = 0, .end = -1, .limit = -1};
        st = ks_zrange(ks, key, klen, &r, dg_zset_members, d);
    } else if (t == KS_HASH) {
        st = ks_hash_fields(ks, key, klen, dg_hash_fields, d);
    } else if (t == KS_STREAM) {
        ks_xid lo = {0, 0}, hi = {UINT64_MAX, UINT64_MAX};
        uint64_t n = 0;
        st = ks_xrange(ks, key, klen, &lo, &hi, 0, 0, dg_stream_entry, d, &n);
    }
    if (st != KS_OK) return st;
    int64_t when = 0;
    st = ks_expire_get(ks, key, klen, &when);
    if (st != KS_OK && st != KS_NOTFOUND) return st;
    if (when) dg_xor(d, "!!expire!!", 10);
    return KS_OK;
}

typedef struct dg_keys {
    char **k;
    size_t *l, n, cap;
} dg_keys;

static int dg_collect(void *arg, const char *key, size_t klen)
{
    dg_keys *ks = arg;
    if (ks->n == ks->cap) {
        ks->cap = ks->cap ? 2 * ks->cap : 256;
        ks->k = realloc(ks->k, ks->cap * sizeof(*ks->k));
        ks->l = realloc(ks->l, ks->cap * sizeof(*ks->l));
    }
    ks->k[ks->n] = malloc(klen ? klen : 1);
    memcpy(ks->k[ks->n], key, klen);
    ks->l[ks->n++] = klen;
    return 0;
}

static void dg_keys_free(dg_keys *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->k[i]);
    free(k->k);
    free(k->l);
    memset(k, 0, sizeof(*k));
}

/* final ^= every key digest of logical db j, after mixing j in. The keys
 * are listed first so that no value read runs inside the key walk. */
static ks_status dg_db(client *c, int j, unsigned char *final)
{
    int saved = c->db;
    c->db = j;
    ks_ctx *ks = client_ks(c);
    c->db = saved;
    dg_keys keys = {0};
    ks_status st = ks_keys(ks, NULL, 0, dg_collect, &keys);
    if (st == KS_OK && keys.n) {
        uint32_t aux = htonl((uint32_t)j);
        dg_mix(final, &aux, sizeof(aux));
    }
    for (size_t i = 0; st == KS_OK && i < keys.n; i++) {
        digest_t d = {0};
        dg_mix(d, keys.k[i], keys.l[i]);
        st = dg_value(ks, keys.k[i], keys.l[i], d);
        dg_xor(final, d, 20);
    }
    dg_keys_free(&keys);
    return st;
}

static void dg_reply(client *c, const unsigned char *d)
{
    char hex[41];
    script_hex(hex, d, 20);
    add_reply_status(c, hex);
}

/* DEBUG DIGEST */
void debug_digest(client *c)
{
    digest_t final = {0};
    for (int j = 0; j < KS_DATABASES; j++) {
        ks_status st = dg_db(c, j, final);
        if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c));
    }
    dg_reply(c, final);
}

/* DEBUG DIGEST-VALUE key [key ...]: value(key) from zero per key (forty
 * zeros for an absent key). */
void debug_digest_value(client *c)
{
    ks_ctx *ks = client_ks(c);
    digest_t *ds = calloc((size_t)c->argc, sizeof(digest_t));
    for (int j = 2; j < c->argc; j++) {
        ks_status st = dg_value(ks, c->argv[j].ptr, c->argv[j].len, ds[j]);
        if (st != KS_OK) {
            free(ds);
            return add_reply_ks_error(c, st, ks);
        }
    }
    add_reply_array_len(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++)
        dg_reply(c, ds[j]);
    free(ds);
}
