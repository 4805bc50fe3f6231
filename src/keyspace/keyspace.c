/*
 * keyspace.c -- opening the keyspace, the per-command context, the
 * metadata record every Redis key has, the per-db counters, hooks and
 * FLUSHDB/FLUSHALL.
 *
 * On-disk format: see ENCODING.md (and ks_encoding.h for the summary and
 * the invariants KS-E1..KS-E6). This file reads
 *   'm' db key -> flags(1) [expire le64 if flags & 0x80] body
 *     body = packed value | version le64, count le64, ext (flags & 0x10)
 * and writes
 *   'c' db     -> keys le64, expires le64
 *   'v'        -> next version, le64
 * Every write goes into ctx->batch; nothing here writes to the engine
 * directly, so a command's writes commit or roll back together (S1) --
 * except the one-time move of legacy big-hash fields at ks_open, which
 * runs before anything is served:
 *   'f' db u32be(klen) key be64(version) field -> 'd' db be64(version) field
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyspace/ks_set.h"
#include "keyspace/ks_type.h"

ks_status ks_engine_err(ks_ctx *c, eng_status s, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "ERR engine error in %s: %s (%s)", what, eng_status_str(s),
             eng_last_error() ? eng_last_error() : "");
    free(c->err);
    c->err = strdup(buf);
    return KS_ERR_ENGINE;
}

ks_status ks_err_msg(ks_ctx *c, const char *msg)
{
    free(c->err);
    c->err = strdup(msg);
    return KS_ERR_MSG;
}

ks_status ks_oom(ks_ctx *c)
{
    return ks_err_msg(c, "ERR out of memory");
}

ks_status ks_corrupt(ks_ctx *c, const char *what)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "ERR corrupt %s", what);
    free(c->err);
    c->err = strdup(buf);
    return KS_ERR_ENGINE;
}

uint64_t ks_rand(keyspace *ks)
{
    ks->rng ^= ks->rng << 13;
    ks->rng ^= ks->rng >> 7;
    ks->rng ^= ks->rng << 17;
    return ks->rng;
}

void ks_limits_init(ks_limits *l)
{
    *l = (ks_limits){.hash_max_listpack_entries = 512,
                     .hash_max_listpack_value = 64,
                     .set_max_intset_entries = 512,
                     .zset_max_listpack_entries = 128,
                     .zset_max_listpack_value = 64,
                     .list_max_listpack_size = -2,
                     .list_compress_depth = 0,
                     .stream_node_max_entries = 100,
                     .stream_node_max_bytes = 4096};
}

void ks_set_limits(keyspace *ks, const ks_limits *l)
{
    ks->limits = *l;
}

const ks_limits *ks_get_limits(const keyspace *ks)
{
    return &ks->limits;
}

void ks_ctx_reset(ks_ctx *c)
{
    free(c->err);
    c->err = NULL;
    /* One huge SET/SETRANGE must not pin its buffer for the server's life. */
    keyspace *ks = c->ks;
    if (ks && ks->scratch_cap > KS_SCRATCH_KEEP) {
        free(ks->scratch);
        ks->scratch = NULL;
        ks->scratch_cap = 0;
    }
}

void ks_val_free(ks_val *v)
{
    if (v->base) eng_free(v->base);
    v->base = NULL;
    v->p = NULL;
    v->n = 0;
}

/* Moves legacy big-hash fields ('f' db u32be(klen) key be64(version)
 * field) to 'd' db be64(version) field, KS_MIGRATE_STEP keys per engine
 * write. Each step puts the new keys and deletes the old ones in one batch,
 * so a crash part-way leaves a consistent mix that the next open resumes. */
#define KS_MIGRATE_STEP 10000
static eng_status migrate_legacy_fields(eng_db *db)
{
    eng_status s = ENG_OK;
    char start = KS_NS_LEGACY_FIELD;
    eng_batch *b = eng_batch_new(0);
    if (!b) return ENG_NOMEM;
    for (;;) {
        eng_iter *it = eng_iter_new(db, NULL, NULL);
        size_t n = 0;
        for (eng_iter_seek(it, &start, 1); eng_iter_valid(it) && n < KS_MIGRATE_STEP;
             eng_iter_next(it), n++) {
            size_t kl, vl;
            const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
            if (kl < 1 || k[0] != KS_NS_LEGACY_FIELD) break;
            uint64_t klen = kl >= 6 ? ((uint64_t)(unsigned char)k[2] << 24) |
                                          ((uint64_t)(unsigned char)k[3] << 16) |
                                          ((uint64_t)(unsigned char)k[4] << 8) | (unsigned char)k[5]
                                    : 0;
            eng_batch_delete(b, k, kl);
            if (kl < 6 + klen + 8) continue; /* malformed: nothing to keep */
            const char *ver = k + 6 + klen, *field = ver + 8;
            ks_ekey nk;
            ks_ekey_members(&nk, (unsigned char)k[1], ks_get_be64(ver));
            ks_ekey_append(&nk, field, (size_t)(k + kl - field));
            eng_batch_put(b, nk.p, nk.n, v, vl);
            ks_ekey_free(&nk);
        }
        s = eng_iter_status(it);
        eng_iter_free(it);
        if (s == ENG_OK && n) s = eng_write(db, b, ENG_WRITE_SYNC);
        eng_batch_clear(b);
        if (s != ENG_OK || n < KS_MIGRATE_STEP) break;
    }
    eng_batch_free(b);
    return s;
}

ks_status ks_reload_state(keyspace *ks)
{
    char k = KS_NS_VERSION, *v = NULL;
    size_t vl = 0;
    eng_status s = eng_get(ks->db, NULL, &k, 1, &v, &vl);
    if (s == ENG_OK) {
        if (vl == 8 && ks_get_le64(v) > ks->next_version) ks->next_version = ks_get_le64(v);
        eng_free(v);
    } else if (s != ENG_NOTFOUND) {
        return KS_ERR_ENGINE;
    }
    memset(ks->random_fmax, 0, sizeof(ks->random_fmax));
    memset(ks->random_fmax_n, 0, sizeof(ks->random_fmax_n));
    ks->spop.n = 0; /* the data was replaced: its versions may be reused */
    ks->zfront.version = 0;
    ks->zrank_want_version = 0;
    return KS_OK;
}

ks_status ks_open(eng_db *db, keyspace **out)
{
    keyspace *ks = calloc(1, sizeof(*ks));
    if (!ks) return KS_ERR_ENGINE;
    ks->db = db;
    ks->next_version = 1;
    ks_limits_init(&ks->limits);
    /* Cursor ids start somewhere new at each start, so a cursor kept across
     * a restart is unknown (the walk restarts) rather than someone else's. */
    ks->next_cursor = (((uint64_t)time(NULL) & 0xfffff) << 24) + 1;
    ks->rng = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull + 1;
    char k = KS_NS_VERSION, *v = NULL;
    size_t vl = 0;
    eng_status s = eng_get(db, NULL, &k, 1, &v, &vl);
    if (s == ENG_OK) {
        if (vl == 8) ks->next_version = ks_get_le64(v);
        eng_free(v);
    } else if (s != ENG_NOTFOUND) {
        free(ks);
        return KS_ERR_ENGINE;
    }
    if (migrate_legacy_fields(db) != ENG_OK) {
        free(ks);
        return KS_ERR_ENGINE;
    }
    *out = ks;
    return KS_OK;
}

void ks_close(keyspace *ks)
{
    if (!ks) return;
    for (int i = 0; i < KS_CURSOR_SLOTS; i++)
        free(ks->cursors[i].pos);
    free(ks->scratch);
    eng_mget_free(ks->mget);
    free(ks->mkeys);
    free(ks->mkp);
    free(ks->mkl);
    free(ks);
}

eng_db *ks_engine(keyspace *ks)
{
    return ks->db;
}

void ks_set_hash_hook(keyspace *ks, ks_hash_hook_fn fn, ks_hash_wants_fn wants, void *hctx)
{
    ks->hook = fn;
    ks->wants = wants;
    ks->hctx = hctx;
}

void ks_set_flush_hook(keyspace *ks, ks_flush_hook_fn fn, void *fctx)
{
    ks->flush_hook = fn;
    ks->fctx = fctx;
}

void ks_set_touch_hook(keyspace *ks, ks_touch_fn fn, void *tctx)
{
    ks->touch = fn;
    ks->tctx = tctx;
}

void ks_touch(ks_ctx *c, int db, const char *key, size_t klen)
{
    if (c->ks->touch && !c->ks->quiet_touch) c->ks->touch(c->ks->tctx, db, key, klen);
}

void ks_set_event_hook(keyspace *ks, ks_event_fn fn, void *ectx)
{
    ks->event = fn;
    ks->ectx = ectx;
}

void ks_event_raise(ks_ctx *c, ks_event ev, int db, const char *key, size_t klen)
{
    if (c->ks->event) c->ks->event(c->ks->ectx, ev, db, key, klen);
}

void ks_set_lazy_expire(keyspace *ks, int on)
{
    ks->no_lazy_expire = !on;
}

char *ks_scratch(keyspace *ks, size_t n)
{
    if (n > ks->scratch_cap) {
        size_t cap = n < 256 ? 256 : n + n / 4;
        char *p = realloc(ks->scratch, cap);
        if (!p) return NULL;
        ks->scratch = p;
        ks->scratch_cap = cap;
    }
    return ks->scratch;
}

/* ---- Engine keys -------------------------------------------------------- */

static void ekey_reserve(ks_ekey *k, size_t n)
{
    k->n = 0;
    if (n <= sizeof(k->sbuf)) {
        k->p = k->sbuf;
        k->cap = sizeof(k->sbuf);
        return;
    }
    k->p = malloc(n);
    if (!k->p) abort(); /* as the engine does on out-of-memory */
    k->cap = n;
}

void ks_ekey_meta(ks_ekey *k, int db, const char *key, size_t klen)
{
    ekey_reserve(k, 2 + klen);
    k->p[0] = KS_NS_META;
    k->p[1] = (char)db;
    if (klen) memcpy(k->p + 2, key, klen);
    k->n = 2 + klen;
}

void ks_ekey_members(ks_ekey *k, int db, uint64_t version)
{
    ekey_reserve(k, 10 + 64);
    k->p[0] = KS_NS_MEMBER;
    k->p[1] = (char)db;
    ks_put_be64(k->p + 2, version);
    k->n = 10;
}

void ks_ekey_append(ks_ekey *k, const char *p, size_t n)
{
    if (k->n + n > k->cap) { /* grow geometrically: callers append in loops */
        size_t cap = (k->n + n) * 2;
        char *np = malloc(cap);
        if (!np) abort();
        memcpy(np, k->p, k->n);
        if (k->p != k->sbuf) free(k->p);
        k->p = np;
        k->cap = cap;
    }
    if (n) memcpy(k->p + k->n, p, n);
    k->n += n;
}

void ks_ekey_expire(ks_ekey *k, int db, int64_t when, const char *key, size_t klen)
{
    ekey_reserve(k, 10 + klen);
    k->p[0] = KS_NS_EXPIRE;
    k->p[1] = (char)db;
    ks_put_be64(k->p + 2, (uint64_t)when);
    if (klen) memcpy(k->p + 10, key, klen);
    k->n = 10 + klen;
}

/* ---- Counters (KS-E3) --------------------------------------------------- */

eng_status ks_eget(ks_ctx *c, const eng_snapshot *snap, const char *k, size_t kl, char **v,
                   size_t *vl)
{
    /* ks_read_batch: the first read of most commands finds the batch empty
     * and skips its index and range-delete check. */
    eng_batch *b = ks_read_batch(c);
    c->ks->stat_gets++;
    if (b) return eng_get_batch(c->ks->db, snap, b, k, kl, v, vl);
    return eng_get(c->ks->db, snap, k, kl, v, vl);
}

/* Grows the key arrays of ks_emget_meta to n keys of total bytes. */
static int emget_reserve(keyspace *ks, size_t n, size_t bytes)
{
    if (bytes > ks->mkeys_cap) {
        char *p = realloc(ks->mkeys, bytes);
        if (!p) return -1;
        ks->mkeys = p;
        ks->mkeys_cap = bytes;
    }
    if (n > ks->mk_cap) {
        const char **kp = realloc(ks->mkp, n * sizeof(*kp));
        if (kp) ks->mkp = kp;
        size_t *kl = realloc(ks->mkl, n * sizeof(*kl));
        if (kl) ks->mkl = kl;
        if (!kp || !kl) return -1;
        ks->mk_cap = n;
    }
    return 0;
}

eng_status ks_emget_meta(ks_ctx *c, const eng_snapshot *snap, int db, size_t n,
                         const char *const *keys, const size_t *klens)
{
    keyspace *ks = c->ks;
    if (!ks->mget && !(ks->mget = eng_mget_new())) return ENG_NOMEM;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += KS_META_KEY_LEN(klens[i]);
    if (emget_reserve(ks, n, bytes)) return ENG_NOMEM;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) { /* the buffer does not move from here on */
        ks_ekey k;
        ks_ekey_meta(&k, db, keys[i], klens[i]);
        memcpy(ks->mkeys + off, k.p, k.n);
        ks->mkp[i] = ks->mkeys + off;
        ks->mkl[i] = k.n;
        off += k.n;
        ks_ekey_free(&k);
    }
    return eng_multi_get(ks->db, snap, ks_read_batch(c), n, ks->mkp, ks->mkl, ks->mget);
}

void ks_prefetch(keyspace *ks, int db, size_t n, const char *const *keys, const size_t *lens,
                 const unsigned char *writes)
{
    unsigned char w[KS_PREFETCH_MAX];
    char buf[KS_PREFETCH_MAX][KS_META_KEY_LEN(KS_PREFETCH_KEY_MAX)];
    const char *mk[KS_PREFETCH_MAX];
    size_t ml[KS_PREFETCH_MAX], m = 0;
    for (size_t i = 0; i < n && m < KS_PREFETCH_MAX; i++) {
        if (lens[i] > KS_PREFETCH_KEY_MAX) continue;
        /* The record's engine key, as ks_ekey_meta writes it. */
        buf[m][0] = KS_NS_META;
        buf[m][1] = (char)db;
        memcpy(buf[m] + 2, keys[i], lens[i]);
        mk[m] = buf[m];
        w[m] = writes[i];
        ml[m++] = KS_META_KEY_LEN(lens[i]);
    }
    eng_prefetch(ks->db, m, mk, ml, w);
}

/* The version of key's big hash or big set as committed, with its type
 * in *type (0: none, or not one of those): a hint, read without the batch
 * or lazy expiry. */
static uint64_t prefetch_version(keyspace *ks, int db, const char *key, size_t klen, int64_t now,
                                 int *type)
{
    char mk[KS_META_KEY_LEN(KS_PREFETCH_KEY_MAX)], *v = NULL;
    size_t vl = 0;
    mk[0] = KS_NS_META;
    mk[1] = (char)db;
    memcpy(mk + 2, key, klen);
    if (eng_get(ks->db, NULL, mk, KS_META_KEY_LEN(klen), &v, &vl) != ENG_OK) return 0;
    ks_meta m;
    uint64_t version = 0;
    if (ks_meta_view(&m, v, vl, now) == 0 && (m.type == KS_HASH || m.type == KS_SET) && m.big) {
        version = m.version;
        *type = m.type;
    }
    eng_free(v);
    return version;
}

/* The member key of field f (a hash's field, a set's member) of the big
 * value (type, version) of db, as ks_member_get reads it, into buf (room
 * for 18 + KS_PREFETCH_KEY_MAX bytes); its length. */
static size_t member_key(char *buf, int db, uint64_t version, int type, const char *f, size_t fl)
{
    buf[0] = KS_NS_MEMBER;
    buf[1] = (char)db;
    ks_put_be64(buf + 2, version);
    if (type != KS_SET) {
        memcpy(buf + 10, f, fl);
        return 10 + fl;
    }
    ks_ekey sfx;
    ks_set_suffix(&sfx, f, fl);
    memcpy(buf + 10, sfx.p, sfx.n);
    size_t n = 10 + sfx.n;
    ks_ekey_free(&sfx);
    return n;
}

void ks_prefetch_fields(keyspace *ks, int db, size_t n, const char *const *keys, const size_t *lens,
                        const char *const *fields, const size_t *flens, const unsigned char *writes,
                        int64_t now_ms)
{
    char buf[KS_PREFETCH_MAX][18 + KS_PREFETCH_KEY_MAX];
    const char *mk[KS_PREFETCH_MAX];
    size_t ml[KS_PREFETCH_MAX], m = 0;
    unsigned char w[KS_PREFETCH_MAX];
    uint64_t version = 0;
    int type = 0;
    for (size_t i = 0; i < n && i < KS_PREFETCH_MAX; i++) {
        if (lens[i] > KS_PREFETCH_KEY_MAX || flens[i] > KS_PREFETCH_KEY_MAX) continue;
        int same = i && lens[i] == lens[i - 1] && memcmp(keys[i], keys[i - 1], lens[i]) == 0;
        /* A record read costs what the member prefetch saves: only for a
         * key the pipeline names again (one read for all its fields). */
        int again = i + 1 < n && lens[i + 1] == lens[i] && !memcmp(keys[i], keys[i + 1], lens[i]);
        if (!same) version = again ? prefetch_version(ks, db, keys[i], lens[i], now_ms, &type) : 0;
        if (!version) continue;
        ml[m] = member_key(buf[m], db, version, type, fields[i], flens[i]);
        mk[m] = buf[m];
        w[m++] = writes[i];
    }
    if (m) eng_prefetch(ks->db, m, mk, ml, w);
}

eng_status ks_emget_value(ks_ctx *c, size_t i, const char **v, size_t *vl)
{
    return eng_mget_value(c->ks->mget, i, v, vl);
}

void ks_emget_done(ks_ctx *c)
{
    eng_mget_release(c->ks->mget);
}

/* Whether c->batch may hold a counter write (see keyspace.cbatch). */
static int counter_pending(const ks_ctx *c)
{
    return c->batch && c->ks->cbatch == c->batch && eng_batch_count(c->batch) >= c->ks->cmark;
}

/* Records that a counter write was just added to c->batch. */
static void counter_written(ks_ctx *c)
{
    if (counter_pending(c)) return; /* an earlier one is still there: keep its mark */
    c->ks->cbatch = c->batch;
    c->ks->cmark = eng_batch_count(c->batch);
}

static ks_status count_read(ks_ctx *c, int db, uint64_t *keys, uint64_t *expires)
{
    char k[2] = {KS_NS_COUNT, (char)db}, *v = NULL;
    size_t vl = 0;
    *keys = *expires = 0;
    /* The command's other writes cannot change a counter: unless the batch
     * holds a counter write, the committed value is the answer. */
    eng_status s = counter_pending(c) ? eng_get_batch(c->ks->db, NULL, c->batch, k, 2, &v, &vl)
                                      : eng_get(c->ks->db, NULL, k, 2, &v, &vl);
    if (s == ENG_NOTFOUND) return KS_OK;
    if (s != ENG_OK) return ks_engine_err(c, s, "counter read");
    if (vl == 16) {
        *keys = ks_get_le64(v);
        *expires = ks_get_le64(v + 8);
    }
    eng_free(v);
    return KS_OK;
}

/* One get and one put of db's counter in c->batch (KS-E3). */
static ks_status count_write(ks_ctx *c, int db, int64_t dkeys, int64_t dexpires)
{
    uint64_t keys, expires;
    ks_status st = count_read(c, db, &keys, &expires);
    if (st != KS_OK) return st;
    /* Clamp at zero: a repair of KS-E1 may race a flush of the same db. */
    keys = (dkeys < 0 && (uint64_t)-dkeys > keys) ? 0 : keys + (uint64_t)dkeys;
    expires = (dexpires < 0 && (uint64_t)-dexpires > expires) ? 0 : expires + (uint64_t)dexpires;
    char k[2] = {KS_NS_COUNT, (char)db}, v[16];
    ks_put_le64(v, keys);
    ks_put_le64(v + 8, expires);
    eng_batch_put(c->batch, k, 2, v, 16);
    counter_written(c);
    return KS_OK;
}

/* Writes the sums of mask into c->batch and zeroes them. One sum, clamped
 * once: the same as clamping each step while the counter is consistent
 * (KS-E3), when no step goes below zero. */
static ks_status sums_write(ks_ctx *c, uint32_t *mask, int64_t *dk, int64_t *de, int apply)
{
    ks_status st = KS_OK;
    for (int db = 0; *mask; db++) {
        if (!(*mask & (1u << db))) continue;
        *mask &= ~(1u << db);
        if (apply && st == KS_OK && (dk[db] || de[db])) st = count_write(c, db, dk[db], de[db]);
        dk[db] = de[db] = 0;
    }
    return st;
}

ks_status ks_count_add(ks_ctx *c, int db, int64_t dkeys, int64_t dexpires)
{
    if (!dkeys && !dexpires) return KS_OK;
    keyspace *ks = c->ks;
    if (ks->cdefer) {
        ks->dkeys[db] += dkeys;
        ks->dexp[db] += dexpires;
        ks->dmask |= 1u << db;
        return KS_OK;
    }
    return count_write(c, db, dkeys, dexpires);
}

void ks_count_defer(keyspace *ks)
{
    ks->cdefer++;
}

ks_status ks_count_settle(ks_ctx *c, int apply)
{
    keyspace *ks = c->ks;
    /* Nested (MSET inside a write group's command): the outermost settle
     * decides, with the fate of the whole command's batch writes (S1). */
    if (ks->cdefer > 1) return ks->cdefer--, KS_OK;
    ks->cdefer = 0;
    if (ks->hbatch != c->batch || !apply)
        return sums_write(c, &ks->dmask, ks->dkeys, ks->dexp, apply);
    for (int db = 0; ks->dmask; db++) { /* KS-E7: held until ks_count_flush */
        if (!(ks->dmask & (1u << db))) continue;
        ks->dmask &= ~(1u << db);
        ks->hkeys[db] += ks->dkeys[db];
        ks->hexp[db] += ks->dexp[db];
        ks->hmask |= 1u << db;
        ks->dkeys[db] = ks->dexp[db] = 0;
    }
    return KS_OK;
}

void ks_count_hold_cmd(keyspace *ks, eng_batch *b)
{
    ks->hbatch = b;
    ks_count_defer(ks);
}

void ks_count_hold_done(ks_ctx *c, int ok)
{
    ks_count_settle(c, ok); /* held, or dropped: it writes nothing */
}

ks_status ks_count_flush(ks_ctx *c)
{
    keyspace *ks = c->ks;
    ks->hbatch = NULL;
    /* A failed read leaves its db's sum and the later ones held: the
     * caller may flush again (or drop them with the batch). */
    for (int db = 0; ks->hmask; db++) {
        if (!(ks->hmask & (1u << db))) continue;
        if (ks->hkeys[db] || ks->hexp[db]) {
            ks_status st = count_write(c, db, ks->hkeys[db], ks->hexp[db]);
            if (st != KS_OK) return st;
        }
        ks->hmask &= ~(1u << db);
        ks->hkeys[db] = ks->hexp[db] = 0;
    }
    return KS_OK;
}

void ks_count_drop(keyspace *ks)
{
    ks->hbatch = NULL;
    for (int db = 0; ks->hmask; db++) {
        ks->hmask &= ~(1u << db);
        ks->hkeys[db] = ks->hexp[db] = 0;
    }
}

/* A counter read with the sums held back added (KS-E7), clamped at zero. */
static uint64_t count_now(ks_ctx *c, int expires)
{
    uint64_t keys, exp;
    if (count_read(c, c->db, &keys, &exp) != KS_OK) return 0;
    keyspace *ks = c->ks;
    int64_t d = 0;
    if (ks->dmask & (1u << c->db)) d += expires ? ks->dexp[c->db] : ks->dkeys[c->db];
    if (ks->hmask & (1u << c->db)) d += expires ? ks->hexp[c->db] : ks->hkeys[c->db];
    uint64_t n = expires ? exp : keys;
    return (d < 0 && (uint64_t)-d > n) ? 0 : n + (uint64_t)d;
}

uint64_t ks_dbsize(ks_ctx *c)
{
    return count_now(c, 0);
}

uint64_t ks_expires(ks_ctx *c)
{
    return count_now(c, 1);
}

uint64_t ks_new_version(ks_ctx *c)
{
    /* KS-E2: persist the next version in the same batch that uses this one;
     * if the batch rolls back, the number is simply skipped. */
    uint64_t v = c->ks->next_version++;
    char k = KS_NS_VERSION, buf[8];
    ks_put_le64(buf, c->ks->next_version);
    eng_batch_put(c->batch, &k, 1, buf, 8);
    return v;
}

/* ---- Cursors ------------------------------------------------------------
 * SCAN and HSCAN cursors are small integers naming a slot of a table of the
 * last KS_CURSOR_SLOTS positions handed out: id % KS_CURSOR_SLOTS is the
 * slot, and the slot remembers its id, so a stale or forged cursor is
 * recognised (and the walk restarts). */

uint64_t ks_cursor_save(keyspace *ks, const char *pos, size_t n)
{
    uint64_t id = ks->next_cursor++;
    ks_cursor *cur = &ks->cursors[id % KS_CURSOR_SLOTS];
    char *p = malloc(n ? n : 1);
    if (!p) return 0;
    memcpy(p, pos, n);
    free(cur->pos);
    cur->id = id;
    cur->pos = p;
    cur->plen = n;
    return id;
}

const ks_cursor *ks_cursor_find(keyspace *ks, uint64_t id)
{
    const ks_cursor *cur = &ks->cursors[id % KS_CURSOR_SLOTS];
    return cur->id == id && id ? cur : NULL;
}

/* ---- Metadata ----------------------------------------------------------- */

static int meta_parse(ks_meta *m)
{
    const char *p = m->raw, *end = m->raw + m->rawlen;
    if (m->rawlen < 1) return -1;
    unsigned flags = (unsigned char)*p++;
    if (flags & KS_F_RESERVED) return -1;
    m->stored = flags & KS_F_TYPE_MASK;
    m->big = (flags & KS_F_BIG) != 0;
    m->enc = (flags & KS_F_ENC) != 0;
    m->expire = 0;
    const ks_type_ops *row = ks_type_row(m->stored);
    if (!row) return -1;
    if (flags & KS_F_EXPIRE) {
        if (end - p < 8) return -1;
        m->expire = (int64_t)ks_get_le64(p);
        p += 8;
    }
    m->payload = p;
    m->plen = (size_t)(end - p);
    if (m->big) {
        if (m->plen < KS_BIG_HDR) return -1;
        m->version = ks_get_le64(p);
        m->count = ks_get_le64(p + 8);
        m->ext = p + KS_BIG_HDR;
        m->extlen = m->plen - KS_BIG_HDR;
    }
    return row->check(m);
}

int ks_meta_view(ks_meta *m, const char *v, size_t vl, int64_t now_ms)
{
    memset(m, 0, sizeof(*m));
    m->raw = (char *)v;
    m->rawlen = vl;
    if (meta_parse(m) != 0) return -1;
    m->type = (m->expire && m->expire <= now_ms) ? KS_NONE : m->stored;
    return 0;
}

/* The read itself, inlined into both entry points (one call per read). */
static inline ks_status meta_read(ks_ctx *c, const eng_snapshot *snap, int db, const char *key,
                                  size_t klen, ks_meta *m)
{
    memset(m, 0, sizeof(*m));
    ks_ekey k;
    ks_ekey_meta(&k, db, key, klen);
    eng_status s = ks_eget(c, snap, k.p, k.n, &m->raw, &m->rawlen);
    ks_ekey_free(&k);
    if (s == ENG_NOTFOUND) {
        m->raw = NULL;
        return KS_OK;
    }
    if (s != ENG_OK) return ks_engine_err(c, s, "read");
    if (meta_parse(m) != 0) {
        ks_meta_free(m);
        return ks_corrupt(c, "key metadata");
    }
    m->type = (m->expire && m->expire <= c->now_ms) ? KS_NONE : m->stored;
    return KS_OK;
}

void ks_meta_free(ks_meta *m)
{
    if (m->raw) eng_free(m->raw);
    memset(m, 0, sizeof(*m));
}

ks_status ks_meta_read_raw(ks_ctx *c, const eng_snapshot *snap, int db, const char *key,
                           size_t klen, ks_meta *m)
{
    return meta_read(c, snap, db, key, klen, m);
}

ks_status ks_meta_read(ks_ctx *c, const eng_snapshot *snap, int db, const char *key, size_t klen,
                       ks_meta *m)
{
    ks_status st = meta_read(c, snap, db, key, klen, m);
    if (st != KS_OK || m->type != KS_NONE || m->stored == KS_NONE) return st;
    /* Lazy expiry on a read of the live data (not a snapshot): the write
     * path removes it (hook, KS-E1, the expired event). The key was gone
     * for every reader already, so WATCH sees no change (no touch). */
    if (snap || !c->batch || c->ks->no_lazy_expire || c->ks->in_hook) return st;
    ks_meta_free(m);
    ks_write w;
    c->ks->quiet_touch++;
    st = ks_write_begin(c, db, key, klen, KS_NONE, &w);
    c->ks->quiet_touch--;
    if (st == KS_OK) ks_write_end(&w);
    return st;
}

ks_status ks_key_read(ks_ctx *c, const eng_snapshot *snap, int db, const char *key, size_t klen,
                      int expect, ks_meta *m)
{
    ks_status st = ks_meta_read(c, snap, db, key, klen, m);
    if (st != KS_OK) return st;
    if (m->type != KS_NONE && (expect == KS_NONE || m->type == expect)) return KS_OK;
    st = m->type == KS_NONE ? KS_NOTFOUND : KS_ERR_WRONGTYPE;
    if (m->raw) ks_meta_free(m); /* an absent key holds nothing */
    return st;
}

/* ---- Flush -------------------------------------------------------------- */

static void delete_ns_db(ks_ctx *c, char ns, int db)
{
    char a[2] = {ns, (char)db}, b[2] = {ns, (char)(db + 1)};
    eng_batch_delete_range(c->batch, a, 2, b, 2);
}

static ks_status flush_db(ks_ctx *c, int db)
{
    int saved = c->db;
    c->db = db;
    ks_status st = c->ks->flush_hook ? c->ks->flush_hook(c->ks->fctx, c, db) : ks_hook_flush(c);
    c->db = saved;
    if (st != KS_OK) return st;
    delete_ns_db(c, KS_NS_META, db);
    delete_ns_db(c, KS_NS_MEMBER, db);
    delete_ns_db(c, KS_NS_EXPIRE, db);
    char k[2] = {KS_NS_COUNT, (char)db};
    eng_batch_delete(c->batch, k, 2);
    counter_written(c);
    ks_touch(c, db, NULL, 0);
    return KS_OK;
}

ks_status ks_flush(ks_ctx *c, int all)
{
    if (!all) return flush_db(c, c->db);
    for (int db = 0; db < KS_DATABASES; db++) {
        ks_status st = flush_db(c, db);
        if (st != KS_OK) return st;
    }
    return KS_OK;
}
