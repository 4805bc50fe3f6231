/*
 * ks_expire.c -- the three ways an expired key goes away: lazily (a read
 * of the live data or a write that meets it deletes it: ks_meta_read in
 * keyspace.c, ks_write_begin in ks_write.c), in the active cycle below,
 * and in compaction (ks_compaction_filter). Every removal raises
 * KS_EVENT_EXPIRED (keyspace.h), the KS-E1 repair of a key compaction
 * dropped included.
 *
 * On-disk format (ENCODING.md, "Expire index"):
 *   'e' db be64(expire_ms) key -> "" (a record that is not big)
 *                              -> le64 version, u8 type (big record)
 *                              -> le64 version (legacy: a big hash)
 * Big-endian expire times sort the entries of a db by time, so the active
 * cycle reads only the entries that are due.
 *
 * Compaction drops the metadata of an expired key (when its type's row
 * filter agrees) without any hook; the expire entry survives (the filter
 * never drops 'e' keys), and the active cycle finds it pointing at missing
 * or different metadata: that is the KS-E1 repair, which fixes the
 * counters (KS-E3) and lets the type's row drop the orphaned members
 * through the version the entry carries.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyspace/ks_type.h"

static ks_index_filter_fn index_filter;

void ks_set_index_filter(ks_index_filter_fn fn)
{
    __atomic_store_n(&index_filter, fn, __ATOMIC_RELEASE);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int ks_compaction_filter(void *ctx, const char *key, size_t klen, const char *val, size_t vlen)
{
    (void)ctx;
    if (klen >= 2 && key[0] == KS_NS_META) {
        if (vlen < 9 || !((unsigned char)val[0] & KS_F_EXPIRE)) return 0;
        const ks_type_ops *row = ks_type_row((unsigned char)val[0] & KS_F_TYPE_MASK);
        return row ? row->filter(val, vlen, wall_ms()) : 0;
    }
    if (klen >= 1 && key[0] == KS_INDEX_NAMESPACE) {
        ks_index_filter_fn fn = __atomic_load_n(&index_filter, __ATOMIC_ACQUIRE);
        return fn ? fn(key, klen, val, vlen, wall_ms()) : 0;
    }
    return 0;
}

typedef struct due {
    int64_t when;
    char *key;
    size_t klen;
    uint64_t version; /* 0: not a big record */
    int type;         /* of a big record */
} due;

/* Copies up to max due entries of db out of an iterator, so that deleting
 * them afterwards does not change the batch under a live iterator. */
static size_t collect_due(ks_ctx *c, int db, due *out, size_t max)
{
    char start[2] = {KS_NS_EXPIRE, (char)db};
    size_t n = 0;
    eng_iter *it = eng_iter_new(c->ks->db, NULL, ks_read_batch(c));
    for (eng_iter_seek(it, start, 2); eng_iter_valid(it) && n < max; eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        if (kl < 10 || k[0] != KS_NS_EXPIRE || k[1] != (char)db) break;
        int64_t when = (int64_t)ks_get_be64(k + 2);
        if (when > c->now_ms) break;
        char *copy = malloc(kl - 10 + 1);
        if (!copy) break;
        memcpy(copy, k + 10, kl - 10);
        out[n++] = (due){when, copy, kl - 10, vl >= 8 ? ks_get_le64(v) : 0,
                         vl == 9 ? (unsigned char)v[8] : KS_HASH};
    }
    eng_iter_free(it);
    return n;
}

/* Expires one due entry; returns 1 when a live key was deleted. An entry
 * an index refused to let go of stays; it is retried next cycle (and counts
 * against max_keys, so a refusal cannot spin this loop). */
static int expire_one(ks_ctx *c, int db, const due *d)
{
    ks_meta m;
    if (ks_meta_read_raw(c, NULL, db, d->key, d->klen, &m) != KS_OK) return 0;
    int live = m.stored != KS_NONE && m.expire == d->when;
    int absent = m.stored == KS_NONE;
    int big_version = m.big ? (int)(m.version == d->version) : 0;
    ks_meta_free(&m);
    if (live) {
        /* The write path deletes an expired key it meets (hook, KS-E1). */
        ks_write w;
        int saved = c->db;
        c->db = db;
        ks_status st = ks_write_begin(c, db, d->key, d->klen, KS_NONE, &w);
        c->db = saved;
        if (st != KS_OK) {
            ks_ctx_reset(c); /* an index refused: try again next cycle */
            return 0;
        }
        ks_write_end(&w);
        return 1;
    }
    /* KS-E1 repair: compaction dropped this key's record. Nobody met the
     * key before that: it expired now, as far as anyone could tell (a key
     * that exists again, written later, did not expire). */
    if (absent) ks_event_raise(c, KS_EVENT_EXPIRED, db, d->key, d->klen);
    ks_ekey k;
    ks_ekey_expire(&k, db, d->when, d->key, d->klen);
    eng_batch_delete(c->batch, k.p, k.n);
    ks_ekey_free(&k);
    const ks_type_ops *row = ks_type_row(d->type);
    if (d->version && !big_version && row) row->repair(c, db, d->version);
    ks_count_add(c, db, -1, -1);
    return 0;
}

uint64_t ks_active_expire(ks_ctx *c, uint64_t max_keys, uint64_t time_budget_us)
{
    /* One db per call (c->db): the server's cron walks the dbs that have
     * keys with a TTL. Due entries are the first ones of the db's expire
     * index, so each round starts at the front again. */
    uint64_t t0 = mono_us(), deleted = 0, visited = 0;
    due batch[64];
    ks_count_defer(c->ks); /* one counter update for the whole step */
    for (;;) {
        uint64_t left = max_keys - visited;
        size_t want = left < 64 ? (size_t)left : 64;
        if (want == 0) break;
        size_t n = collect_due(c, c->db, batch, want);
        for (size_t j = 0; j < n; j++) {
            deleted += (uint64_t)expire_one(c, c->db, &batch[j]);
            free(batch[j].key);
        }
        visited += n;
        if (n < want || mono_us() - t0 >= time_budget_us) break;
    }
    /* A failed counter read leaves the counters high, as a failed
     * ks_count_add per key did before (the error text is not needed). */
    if (ks_count_settle(c, 1) != KS_OK) ks_ctx_reset(c);
    return deleted;
}
