/*
 * keyspace.c -- opening the keyspace, the per-command context, the
 * metadata record every Redis key has, the per-db counters, hooks and
 * FLUSHDB/FLUSHALL.
 *
 * On-disk format: see ENCODING.md (and ks_encoding.h for the summary and
 * the invariants KS-E1..KS-E3). This file reads and writes
 *   'm' db key -> flags(1) [expire fixed64 LE if flags & 0x80] payload
 *   'c' db     -> keys fixed64 LE, expires fixed64 LE
 *   'v'        -> next big-hash version, fixed64 LE
 * Every write goes into ctx->batch; nothing here writes to the engine
 * directly, so a command's writes commit or roll back together (S1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyspace/ks_encoding.h"

ks_status ks_engine_err(ks_ctx *c, eng_status s, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "ERR engine error in %s: %s (%s)", what, eng_status_str(s),
             eng_last_error() ? eng_last_error() : "");
    free(c->err);
    c->err = strdup(buf);
    return KS_ERR_ENGINE;
}

ks_status ks_oom(ks_ctx *c)
{
    free(c->err);
    c->err = strdup("ERR out of memory");
    return KS_ERR_MSG;
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

ks_status ks_open(eng_db *db, keyspace **out)
{
    keyspace *ks = calloc(1, sizeof(*ks));
    if (!ks) return KS_ERR_ENGINE;
    ks->db = db;
    ks->next_version = 1;
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
    *out = ks;
    return KS_OK;
}

void ks_close(keyspace *ks)
{
    if (!ks) return;
    for (int i = 0; i < KS_CURSOR_SLOTS; i++)
        free(ks->cursors[i].pos);
    free(ks->scratch);
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
    if (c->ks->touch) c->ks->touch(c->ks->tctx, db, key, klen);
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

void ks_ekey_fields(ks_ekey *k, int db, const char *key, size_t klen, uint64_t version)
{
    ekey_reserve(k, 14 + klen + 64);
    k->p[0] = KS_NS_FIELD;
    k->p[1] = (char)db;
    k->p[2] = (char)(klen >> 24);
    k->p[3] = (char)(klen >> 16);
    k->p[4] = (char)(klen >> 8);
    k->p[5] = (char)klen;
    if (klen) memcpy(k->p + 6, key, klen);
    ks_put_be64(k->p + 6 + klen, version);
    k->n = 14 + klen;
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

void ks_ekey_free(ks_ekey *k)
{
    if (k->p && k->p != k->sbuf) free(k->p);
    k->p = NULL;
}

/* ---- Counters (KS-E3) --------------------------------------------------- */

eng_status ks_eget(ks_ctx *c, const eng_snapshot *snap, const char *k, size_t kl, char **v,
                   size_t *vl)
{
    /* ks_read_batch: the first read of most commands finds the batch empty
     * and skips its index and range-delete check. */
    eng_batch *b = ks_read_batch(c);
    if (b) return eng_get_batch(c->ks->db, snap, b, k, kl, v, vl);
    return eng_get(c->ks->db, snap, k, kl, v, vl);
}

static ks_status count_read(ks_ctx *c, int db, uint64_t *keys, uint64_t *expires)
{
    char k[2] = {KS_NS_COUNT, (char)db}, *v = NULL;
    size_t vl = 0;
    *keys = *expires = 0;
    eng_status s = ks_eget(c, NULL, k, 2, &v, &vl);
    if (s == ENG_NOTFOUND) return KS_OK;
    if (s != ENG_OK) return ks_engine_err(c, s, "counter read");
    if (vl == 16) {
        *keys = ks_get_le64(v);
        *expires = ks_get_le64(v + 8);
    }
    eng_free(v);
    return KS_OK;
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
    return KS_OK;
}

void ks_count_defer(keyspace *ks)
{
    ks->cdefer = 1;
}

ks_status ks_count_settle(ks_ctx *c, int apply)
{
    keyspace *ks = c->ks;
    ks_status st = KS_OK;
    ks->cdefer = 0;
    for (int db = 0; ks->dmask; db++) {
        if (!(ks->dmask & (1u << db))) continue;
        ks->dmask &= ~(1u << db);
        /* One sum, clamped once: the same as clamping each step while the
         * counter is consistent (KS-E3), when no step goes below zero. */
        if (apply && st == KS_OK) st = ks_count_add(c, db, ks->dkeys[db], ks->dexp[db]);
        ks->dkeys[db] = ks->dexp[db] = 0;
    }
    return st;
}

uint64_t ks_dbsize(ks_ctx *c)
{
    uint64_t keys, expires;
    if (count_read(c, c->db, &keys, &expires) != KS_OK) return 0;
    return keys;
}

uint64_t ks_expires(ks_ctx *c)
{
    uint64_t keys, expires;
    if (count_read(c, c->db, &keys, &expires) != KS_OK) return 0;
    return expires;
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

static ks_status meta_remove(ks_ctx *c, int db, const char *key, size_t klen, const ks_meta *old,
                             int call_hook, int touch);

static int meta_parse(ks_meta *m)
{
    const char *p = m->raw, *end = m->raw + m->rawlen;
    if (m->rawlen < 1) return -1;
    unsigned flags = (unsigned char)*p++;
    m->stored = flags & KS_F_TYPE_MASK;
    m->big = (flags & KS_F_BIG) != 0;
    m->expire = 0;
    if (m->stored != KS_STRING && m->stored != KS_HASH) return -1;
    if (flags & KS_F_EXPIRE) {
        if (end - p < 8) return -1;
        m->expire = (int64_t)ks_get_le64(p);
        p += 8;
    }
    m->payload = p;
    m->plen = (size_t)(end - p);
    if (m->big) {
        if (m->plen != 16 || m->stored != KS_HASH) return -1;
        m->version = ks_get_le64(p);
        m->count = ks_get_le64(p + 8);
    }
    return 0;
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

ks_status ks_meta_read_raw(ks_ctx *c, const eng_snapshot *snap, int db, const char *key,
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
        free(c->err);
        c->err = strdup("ERR corrupt key metadata");
        return KS_ERR_ENGINE;
    }
    m->type = (m->expire && m->expire <= c->now_ms) ? KS_NONE : m->stored;
    return KS_OK;
}

void ks_meta_free(ks_meta *m)
{
    if (m->raw) eng_free(m->raw);
    memset(m, 0, sizeof(*m));
}

/* Removes the expired key m describes (hook, KS-E1) and reports it; m
 * comes back absent. A read's removal does not touch the key: it was
 * already gone for every reader, so WATCH must not see a change. */
static ks_status remove_expired(ks_ctx *c, int db, const char *key, size_t klen, ks_meta *m,
                                int touch)
{
    ks_status st = meta_remove(c, db, key, klen, m, 1, touch);
    ks_meta_free(m);
    if (st == KS_OK) ks_event_raise(c, KS_EVENT_EXPIRED, db, key, klen);
    return st;
}

ks_status ks_meta_read(ks_ctx *c, const eng_snapshot *snap, int db, const char *key, size_t klen,
                       ks_meta *m)
{
    ks_status st = ks_meta_read_raw(c, snap, db, key, klen, m);
    if (st != KS_OK || m->type != KS_NONE || m->stored == KS_NONE) return st;
    /* Lazy expiry on a read of the live data (not a snapshot). */
    if (snap || !c->batch || c->ks->no_lazy_expire) return st;
    return remove_expired(c, db, key, klen, m, 0);
}

ks_status ks_meta_read_w(ks_ctx *c, int db, const char *key, size_t klen, ks_meta *m)
{
    ks_status st = ks_meta_read_raw(c, NULL, db, key, klen, m);
    if (st != KS_OK || m->type != KS_NONE || m->stored == KS_NONE) return st;
    return remove_expired(c, db, key, klen, m, 1); /* lazy expiry on a write path */
}

static void expire_entry(ks_ctx *c, int db, const char *key, size_t klen, int64_t when, int big,
                         uint64_t version, int put)
{
    ks_ekey k;
    ks_ekey_expire(&k, db, when, key, klen);
    if (put) {
        char v[8];
        ks_put_le64(v, version);
        eng_batch_put(c->batch, k.p, k.n, v, big ? 8 : 0);
    } else {
        eng_batch_delete(c->batch, k.p, k.n);
    }
    ks_ekey_free(&k);
}

static void drop_fields(ks_ctx *c, int db, const char *key, size_t klen, uint64_t version)
{
    ks_ekey a, b;
    ks_ekey_fields(&a, db, key, klen, version);
    ks_ekey_fields(&b, db, key, klen, version + 1);
    eng_batch_delete_range(c->batch, a.p, a.n, b.p, b.n);
    ks_ekey_free(&a);
    ks_ekey_free(&b);
}

ks_status ks_meta_write(ks_ctx *c, int db, const char *key, size_t klen, const ks_meta *old,
                        int type, int big, int64_t expire, const char *p1, size_t n1,
                        const char *p2, size_t n2)
{
    size_t vl = 1 + (expire ? 8 : 0) + n1 + n2;
    char *v = ks_scratch(c->ks, vl);
    if (!v) return ks_oom(c);
    char *p = v;
    *p++ = (char)(type | (big ? KS_F_BIG : 0) | (expire ? KS_F_EXPIRE : 0));
    if (expire) {
        ks_put_le64(p, (uint64_t)expire);
        p += 8;
    }
    /* p1 may point into the scratch buffer itself (callers building in
     * place), so move rather than copy. */
    if (n1 && p1 != p) memmove(p, p1, n1);
    if (n2) memcpy(p + n1, p2, n2);
    ks_ekey k;
    ks_ekey_meta(&k, db, key, klen);
    eng_batch_put(c->batch, k.p, k.n, v, vl);
    ks_ekey_free(&k);

    int had = old && old->stored != KS_NONE;
    int64_t old_exp = had ? old->expire : 0;
    uint64_t new_version = big ? ks_get_le64(p) : 0;
    if (had && old->big && (!big || old->version != new_version))
        drop_fields(c, db, key, klen, old->version);
    /* KS-E1: the expire entry follows the metadata; a big hash's entry also
     * names its version, which can change with the same expire. */
    int same_entry =
        old_exp == expire && (had && old->big) == big && (!big || old->version == new_version);
    if (old_exp && !same_entry) expire_entry(c, db, key, klen, old_exp, 0, 0, 0);
    if (expire && !same_entry) expire_entry(c, db, key, klen, expire, big, new_version, 1);
    ks_touch(c, db, key, klen);
    if (!had) ks_event_raise(c, KS_EVENT_NEW, db, key, klen);
    return ks_count_add(c, db, had ? 0 : 1, (expire ? 1 : 0) - (old_exp ? 1 : 0));
}

ks_status ks_meta_remove(ks_ctx *c, int db, const char *key, size_t klen, const ks_meta *old,
                         int call_hook)
{
    return meta_remove(c, db, key, klen, old, call_hook, 1);
}

static ks_status meta_remove(ks_ctx *c, int db, const char *key, size_t klen, const ks_meta *old,
                             int call_hook, int touch)
{
    if (call_hook && old->stored == KS_HASH && ks_hook_wanted(c, db, key, klen)) {
        ks_fvec fv;
        ks_fvec_init(&fv);
        ks_status st = ks_hash_load(c, NULL, db, key, klen, old, &fv);
        if (st == KS_OK) st = ks_hook_call(c, db, key, klen, fv.v, fv.n, 1, NULL, 0, 0, 0);
        ks_fvec_free(&fv);
        if (st != KS_OK) return st;
    }
    ks_ekey k;
    ks_ekey_meta(&k, db, key, klen);
    eng_batch_delete(c->batch, k.p, k.n);
    ks_ekey_free(&k);
    if (old->expire) expire_entry(c, db, key, klen, old->expire, 0, 0, 0);
    if (old->big) drop_fields(c, db, key, klen, old->version);
    if (touch) ks_touch(c, db, key, klen);
    return ks_count_add(c, db, -1, old->expire ? -1 : 0);
}

/* ---- Flush -------------------------------------------------------------- */

static void delete_ns_db(ks_ctx *c, char ns, int db)
{
    char a[2] = {ns, (char)db}, b[2] = {ns, (char)(db + 1)};
    eng_batch_delete_range(c->batch, a, 2, b, 2);
}

static int flush_visit(void *arg, const char *key, size_t klen, const ks_field *f, size_t n)
{
    ks_ctx *c = arg;
    if (!ks_hook_wanted(c, c->db, key, klen)) return 0;
    return ks_hook_call(c, c->db, key, klen, f, n, 1, NULL, 0, 0, 0) != KS_OK;
}

static ks_status flush_db(ks_ctx *c, int db)
{
    int saved = c->db;
    c->db = db;
    ks_status st = KS_OK;
    if (c->ks->flush_hook) {
        st = c->ks->flush_hook(c->ks->fctx, c, db);
    } else if (c->ks->hook) {
        /* Without a bulk hook, every indexed hash hears of its deletion. */
        char *last = NULL, *after = NULL;
        size_t ll = 0, al = 0;
        for (;;) {
            uint64_t n =
                ks_scan_hashes(c, NULL, "", 0, after, al, 1024, flush_visit, c, &last, &ll);
            free(after);
            after = last;
            al = ll;
            last = NULL;
            if (c->err) st = KS_ERR_MSG;
            if (n < 1024 || st != KS_OK) break;
        }
        free(after);
        free(last);
    }
    c->db = saved;
    if (st != KS_OK) return st;
    delete_ns_db(c, KS_NS_META, db);
    delete_ns_db(c, KS_NS_FIELD, db);
    delete_ns_db(c, KS_NS_EXPIRE, db);
    char k[2] = {KS_NS_COUNT, (char)db};
    eng_batch_delete(c->batch, k, 2);
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
