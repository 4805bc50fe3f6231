/*
 * ks_write.c -- the one path every metadata write takes: lazy expiry,
 * WRONGTYPE checks, the record itself, the expire index (KS-E1), the
 * counters (KS-E3), dropping a replaced version (KS-E4), WATCH touches and
 * the index hook (KS1). Type files change keys only through
 * ks_write_begin / ks_write_put / ks_write_del (ks_type.h), so no command
 * can forget any of these.
 *
 * On-disk format (ENCODING.md): this file writes
 *   'm' db key              -> flags(1) [expire le64] body
 *   'e' db be64(expire) key -> "" | le64 version, u8 type (big records)
 * and drops the members of a replaced big record through its type's row.
 *
 * The index hook (KS1) is called from exactly one place, hook_call, with
 * the old content loaded at ks_write_begin (before the command touches any
 * member) and the new content read back from what is being stored.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_type.h"

/* ---- The index hook (KS1) ------------------------------------------------ */

static int hook_wants(ks_ctx *c, int db, const char *key, size_t klen)
{
    keyspace *ks = c->ks;
    return ks->hook && (!ks->wants || ks->wants(ks->hctx, db, key, klen));
}

/* The only call of the hash hook. */
static ks_status hook_call(ks_ctx *c, int db, const char *key, size_t klen, const ks_fvec *of,
                           int had, const ks_fvec *nf, int has, int64_t expire)
{
    int saved = c->db;
    c->db = db; /* the hook works in ctx->db (COPY ... DB n writes another db) */
    c->ks->in_hook++;
    ks_status st = c->ks->hook(c->ks->hctx, c, key, klen, of ? of->v : NULL, of ? of->n : 0, had,
                               nf ? nf->v : NULL, nf ? nf->n : 0, has, expire);
    c->ks->in_hook--;
    c->db = saved;
    if (st != KS_OK && !c->err) c->err = strdup("ERR index rejected the write");
    return st == KS_OK ? KS_OK : KS_ERR_MSG;
}

static const ks_type_ops *indexed_row(int type)
{
    const ks_type_ops *r = ks_type_row(type);
    return r && r->fields ? r : NULL;
}

static int wanted(ks_write *w)
{
    if (w->hooked < 0) w->hooked = hook_wants(w->c, w->db, w->key, w->klen);
    return w->hooked;
}

/* Loads the old content the hook will need, once, before any member of
 * the key changes. */
static ks_status load_old(ks_write *w)
{
    const ks_type_ops *r = indexed_row(w->m.stored);
    if (w->loaded || !r || !wanted(w)) return KS_OK;
    ks_fvec_init(&w->old); /* only here: most writes never need it */
    ks_status st = r->fields(w->c, NULL, w->db, &w->m, &w->old);
    w->loaded = 1; /* old is initialised (and freed at the end) */
    w->mark = eng_batch_count(w->c->batch);
    if (st != KS_OK) ks_fvec_free(&w->old), w->loaded = 0;
    return st;
}

static int flush_visit(void *arg, const char *key, size_t klen, const ks_field *f, size_t n)
{
    ks_ctx *c = arg;
    if (!hook_wants(c, c->db, key, klen)) return 0;
    ks_fvec old = {.v = (ks_field *)f, .n = n};
    return hook_call(c, c->db, key, klen, &old, 1, NULL, 0, 0) != KS_OK;
}

ks_status ks_hook_flush(ks_ctx *c)
{
    if (!c->ks->hook) return KS_OK;
    /* Without a bulk hook, every indexed hash hears of its deletion. */
    ks_status st = KS_OK;
    char *last = NULL, *after = NULL;
    size_t ll = 0, al = 0;
    for (;;) {
        uint64_t n = ks_scan_hashes(c, NULL, "", 0, after, al, 1024, flush_visit, c, &last, &ll);
        free(after);
        after = last;
        al = ll;
        last = NULL;
        if (c->err) st = KS_ERR_MSG;
        if (n < 1024 || st != KS_OK) break;
    }
    free(after);
    free(last);
    return st;
}

/* ---- Records --------------------------------------------------------------- */

static void expire_entry(ks_ctx *c, int db, const char *key, size_t klen, int64_t when,
                         const ks_meta *m, int put)
{
    ks_ekey k;
    ks_ekey_expire(&k, db, when, key, klen);
    if (put) {
        char v[9];
        ks_put_le64(v, m->version);
        v[8] = (char)m->stored;
        eng_batch_put(c->batch, k.p, k.n, v, m->big ? 9 : 0);
    } else {
        eng_batch_delete(c->batch, k.p, k.n);
    }
    ks_ekey_free(&k);
}

static void drop_members(ks_write *w)
{
    if (!w->m.big || w->moved) return;
    ks_type_row(w->m.stored)->drop(w->c, w->db, &w->m);
    w->moved = 1; /* once */
}

ks_status ks_write_del(ks_write *w)
{
    ks_ctx *c = w->c;
    ks_meta *m = &w->m;
    ks_status st = load_old(w);
    if (st != KS_OK) return st;
    if (w->loaded) st = hook_call(c, w->db, w->key, w->klen, &w->old, 1, NULL, 0, 0);
    if (st != KS_OK) return st;
    ks_ekey k;
    ks_ekey_meta(&k, w->db, w->key, w->klen);
    eng_batch_delete(c->batch, k.p, k.n);
    ks_ekey_free(&k);
    if (m->expire) expire_entry(c, w->db, w->key, w->klen, m->expire, m, 0);
    drop_members(w);
    ks_touch(c, w->db, w->key, w->klen);
    return ks_count_add(c, w->db, -1, m->expire ? -1 : 0);
}

static void write_init(ks_ctx *c, int db, const char *key, size_t klen, ks_write *w)
{
    w->c = c;
    w->db = db;
    w->key = key;
    w->klen = klen;
    w->hooked = -1;
    w->loaded = w->moved = 0;
    w->mark = 0;
    w->new_known = 0;
}

static ks_status write_begin_found(ks_write *w, int expect);

ks_status ks_write_begin(ks_ctx *c, int db, const char *key, size_t klen, int expect, ks_write *w)
{
    write_init(c, db, key, klen, w);
    ks_status st = ks_meta_read_raw(c, NULL, db, key, klen, &w->m);
    return st != KS_OK ? st : write_begin_found(w, expect);
}

ks_status ks_write_begin_read(ks_ctx *c, int db, const char *key, size_t klen, int expect,
                              const char *raw, size_t rawlen, ks_write *w)
{
    write_init(c, db, key, klen, w);
    memset(&w->m, 0, sizeof(w->m));
    if (raw) {
        char *copy = malloc(rawlen ? rawlen : 1);
        if (!copy) return ks_oom(c);
        memcpy(copy, raw, rawlen);
        if (ks_meta_view(&w->m, copy, rawlen, c->now_ms) != 0) {
            free(copy);
            memset(&w->m, 0, sizeof(w->m));
            return ks_corrupt(c, "key metadata");
        }
        /* now owned: ks_meta_free releases it */
    }
    return write_begin_found(w, expect);
}

/* ks_write_begin once w->m holds the key's record as read. */
static ks_status write_begin_found(ks_write *w, int expect)
{
    ks_status st;
    if (w->m.type == KS_NONE && w->m.stored != KS_NONE) {
        /* Lazy expiry on a write path: delete it properly (hook, KS-E1). */
        st = ks_write_del(w);
        if (w->loaded) ks_fvec_free(&w->old);
        ks_meta_free(&w->m);
        w->loaded = w->moved = 0;
        if (st == KS_OK) ks_event_raise(w->c, KS_EVENT_EXPIRED, w->db, w->key, w->klen);
    } else if (expect != KS_NONE && w->m.type != KS_NONE && w->m.type != expect) {
        st = KS_ERR_WRONGTYPE;
    } else {
        st = load_old(w);
    }
    if (st != KS_OK) ks_write_end(w);
    return st;
}

void ks_write_end(ks_write *w)
{
    if (w->loaded) ks_fvec_free(&w->old);
    ks_meta_free(&w->m);
}

/* The hook for a put: old content (loaded at begin) and the new, read
 * back from v (a big hash's members through the batch). */
static ks_status put_hook(ks_write *w, const ks_value *v)
{
    const ks_type_ops *nr = indexed_row(v->type);
    int had = indexed_row(w->m.stored) != NULL;
    if ((!had && !nr) || !wanted(w)) return KS_OK;
    ks_status st = load_old(w);
    if (st != KS_OK) return st;
    if (!nr) /* a hash replaced by another type */
        return w->loaded ? hook_call(w->c, w->db, w->key, w->klen, &w->old, 1, NULL, 0, 0) : KS_OK;
    ks_meta nm = {.type = v->type,
                  .stored = v->type,
                  .big = v->big,
                  .enc = v->enc,
                  .expire = v->expire,
                  .payload = v->p1,
                  .plen = v->n1};
    if (v->big && v->n1 >= KS_BIG_HDR) {
        nm.version = ks_get_le64(v->p1);
        nm.count = ks_get_le64(v->p1 + 8);
    }
    /* Same body and no member written since the old content was read: the
     * new content is the old one (EXPIRE, PERSIST). */
    int same = had && w->loaded && w->m.big == v->big && v->n2 == 0 && w->m.plen == v->n1 &&
               memcmp(w->m.payload, v->p1, v->n1) == 0 && eng_batch_count(w->c->batch) == w->mark;
    ks_fvec cur;
    ks_fvec_init(&cur);
    int borrowed = !same && w->new_known; /* the caller's pairs: what v encodes */
    if (borrowed) {
        cur.v = (ks_field *)w->new_f;
        cur.n = w->new_n;
    } else if (!same) {
        st = nr->fields(w->c, NULL, w->db, &nm, &cur);
    }
    if (st == KS_OK)
        st = hook_call(w->c, w->db, w->key, w->klen, w->loaded ? &w->old : NULL, had,
                       same ? &w->old : &cur, 1, v->expire);
    if (borrowed) ks_fvec_init(&cur); /* not ours to free */
    ks_fvec_free(&cur);
    return st;
}

ks_status ks_write_put(ks_write *w, const ks_value *v)
{
    ks_ctx *c = w->c;
    const ks_meta *old = &w->m;
    int had = old->stored != KS_NONE;
    if (v->expire && v->expire <= c->now_ms) return had ? ks_write_del(w) : KS_OK;
    ks_status st = put_hook(w, v);
    w->new_known = 0;
    if (st != KS_OK) return st;

    size_t vl = 1 + (v->expire ? 8 : 0) + v->n1 + v->n2;
    char *rec = ks_scratch(c->ks, vl);
    if (!rec) return ks_oom(c);
    char *p = rec;
    *p++ = (char)(v->type | (v->big ? KS_F_BIG : 0) | (v->enc ? KS_F_ENC : 0) |
                  (v->expire ? KS_F_EXPIRE : 0));
    if (v->expire) {
        ks_put_le64(p, (uint64_t)v->expire);
        p += 8;
    }
    /* p1 may point into the scratch buffer itself (callers building in
     * place at KS_HDR_MAX), so move rather than copy. */
    if (v->n1 && v->p1 != p) memmove(p, v->p1, v->n1);
    if (v->n2) memcpy(p + v->n1, v->p2, v->n2);
    ks_touch(c, w->db, w->key, w->klen);
    if (had && old->rawlen == vl && memcmp(old->raw, rec, vl) == 0) return KS_OK;
    ks_ekey k;
    ks_ekey_meta(&k, w->db, w->key, w->klen);
    eng_batch_put(c->batch, k.p, k.n, rec, vl);
    ks_ekey_free(&k);

    ks_meta nm = {.stored = v->type, .big = v->big};
    if (v->big) nm.version = ks_get_le64(p);
    if (had && (!v->big || old->version != nm.version)) drop_members(w);
    /* KS-E1: the expire entry follows the record; a big record's entry also
     * names its version and type, which can change with the same expire. */
    int64_t old_exp = had ? old->expire : 0;
    int same_entry = old_exp == v->expire && (had && old->big) == v->big &&
                     (!v->big || (old->version == nm.version && old->stored == v->type));
    if (old_exp && !same_entry) expire_entry(c, w->db, w->key, w->klen, old_exp, old, 0);
    if (v->expire && !same_entry) expire_entry(c, w->db, w->key, w->klen, v->expire, &nm, 1);
    if (!had) ks_event_raise(c, KS_EVENT_NEW, w->db, w->key, w->klen);
    return ks_count_add(c, w->db, had ? 0 : 1, (v->expire ? 1 : 0) - (old_exp ? 1 : 0));
}

void ks_big_body(ks_value *v, char *buf, uint64_t version, uint64_t count, const char *ext,
                 size_t extlen)
{
    ks_put_le64(buf, version);
    ks_put_le64(buf + 8, count);
    if (extlen) memcpy(buf + KS_BIG_HDR, ext, extlen);
    v->big = 1;
    v->p1 = buf;
    v->n1 = KS_BIG_HDR + extlen;
    v->p2 = NULL;
    v->n2 = 0;
}

ks_status ks_write_retime(ks_write *w, int64_t expire)
{
    const ks_meta *m = &w->m;
    ks_value v = {m->stored, m->big, m->enc, expire, m->payload, m->plen, NULL, 0};
    return ks_write_put(w, &v);
}

ks_status ks_write_move(ks_write *src, ks_write *dst)
{
    const ks_meta *m = &src->m;
    src->moved = 1; /* KS-E6: the members stay and now belong to dst */
    ks_status st = ks_write_del(src);
    ks_value v = {m->stored, m->big, m->enc, m->expire, m->payload, m->plen, NULL, 0};
    return st == KS_OK ? ks_write_put(dst, &v) : st;
}
