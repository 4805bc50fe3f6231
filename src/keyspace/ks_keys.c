/*
 * ks_keys.c -- generic key commands' data work: TYPE, DEL, RENAME, COPY,
 * TTLs, KEYS and SCAN (RANDOMKEY is ks_random.c, the glob matcher ks_glob.c).
 *
 * Reads the metadata keys 'm' db key (ENCODING.md); key order is bytewise,
 * so KEYS with a literal prefix seeks straight to it and SCAN resumes by
 * seeking to the key it stopped at. KEYS, SCAN and RANDOMKEY step over a
 * damaged table block (eng_iter_skip_damaged: the engine logs the file,
 * offset and key range left out) instead of failing for the whole db.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_type.h"

ks_status ks_type_of(ks_ctx *c, const char *key, size_t klen, ks_type *type)
{
    ks_meta m;
    ks_status st = ks_meta_read(c, NULL, c->db, key, klen, &m);
    *type = st == KS_OK ? (ks_type)m.type : KS_NONE;
    ks_meta_free(&m);
    return st;
}

ks_status ks_object_encoding(ks_ctx *c, const char *key, size_t klen, const char **enc)
{
    ks_meta m;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_NONE, &m);
    if (st != KS_OK) return st;
    *enc = ks_type_row(m.type)->encoding(&m, &c->ks->limits);
    ks_meta_free(&m);
    return KS_OK;
}

ks_status ks_del(ks_ctx *c, const char *key, size_t klen, int *deleted)
{
    ks_write w;
    *deleted = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_NONE, &w);
    if (st != KS_OK) return st;
    if (w.m.type != KS_NONE) {
        st = ks_write_del(&w);
        *deleted = st == KS_OK;
    }
    ks_write_end(&w);
    return st;
}

ks_status ks_del_keys(ks_ctx *c, const ks_field *keys, size_t n, uint64_t *deleted)
{
    ks_status st = KS_OK;
    *deleted = 0;
    ks_count_defer(c->ks);
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        int d;
        st = ks_del(c, keys[i].f, keys[i].fl, &d);
        *deleted += (uint64_t)d;
    }
    ks_status cst = ks_count_settle(c, st == KS_OK);
    return st == KS_OK ? cst : st;
}

/* RENAME moves the record (KS-E6: its members stay where they are); COPY
 * writes a new record through the type's copy (a new version for big
 * values). Both replace whatever dst held, through the write path. */
static ks_status move_or_copy(ks_ctx *c, const char *src, size_t sl, int dst_db, const char *dst,
                              size_t dl, int nx, int remove_src, int *done)
{
    ks_write sw, dw;
    *done = 0;
    ks_status st = ks_write_begin(c, c->db, src, sl, KS_NONE, &sw);
    if (st != KS_OK) return st;
    if (sw.m.type == KS_NONE) {
        ks_write_end(&sw);
        return KS_NOTFOUND;
    }
    st = ks_write_begin(c, dst_db, dst, dl, KS_NONE, &dw);
    if (st != KS_OK) {
        ks_write_end(&sw);
        return st;
    }
    if (nx && dw.m.type != KS_NONE) goto out;
    if (remove_src && dst_db == c->db) {
        st = ks_write_move(&sw, &dw);
    } else { /* COPY, and MOVE: members are keyed by db, so they are copied */
        ks_value v;
        char body[KS_BIG_BODY_MAX];
        st = ks_type_row(sw.m.type)->copy(c, c->db, &sw.m, dst_db, &v, body);
        v.expire = sw.m.expire;
        if (st == KS_OK) st = ks_write_put(&dw, &v);
        if (st == KS_OK && remove_src) st = ks_write_del(&sw);
    }
    *done = st == KS_OK;
out:
    ks_write_end(&dw);
    ks_write_end(&sw);
    return st;
}

ks_status ks_rename(ks_ctx *c, const char *src, size_t sl, const char *dst, size_t dl, int nx,
                    int *done)
{
    if (sl == dl && memcmp(src, dst, sl) == 0) {
        ks_type t;
        ks_status st = ks_type_of(c, src, sl, &t);
        *done = !nx;
        return st != KS_OK ? st : t == KS_NONE ? KS_NOTFOUND : KS_OK;
    }
    return move_or_copy(c, src, sl, c->db, dst, dl, nx, 1, done);
}

ks_status ks_move(ks_ctx *c, const char *key, size_t klen, int dst_db, int *done)
{
    ks_status st = move_or_copy(c, key, klen, dst_db, key, klen, 1, 1, done);
    return st == KS_NOTFOUND ? KS_OK : st;
}

ks_status ks_copy(ks_ctx *c, const char *src, size_t sl, int dst_db, const char *dst, size_t dl,
                  int replace, int *done)
{
    ks_status st = move_or_copy(c, src, sl, dst_db, dst, dl, !replace, 0, done);
    return st == KS_NOTFOUND ? KS_OK : st;
}

/* ---- TTLs ------------------------------------------------------------------- */

ks_status ks_expire_set(ks_ctx *c, const char *key, size_t klen, int64_t when_ms, int flags,
                        int *done)
{
    ks_write w;
    *done = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_NONE, &w);
    if (st != KS_OK) return st;
    int64_t cur = w.m.expire;
    if (w.m.type == KS_NONE) goto out;
    if ((flags & KS_EXP_NX) && cur) goto out;
    if ((flags & KS_EXP_XX) && !cur) goto out;
    if ((flags & KS_EXP_GT) && (!cur || when_ms <= cur)) goto out;
    if ((flags & KS_EXP_LT) && cur && when_ms >= cur) goto out;
    st = ks_write_retime(&w, when_ms); /* a passed time deletes the key */
    *done = st == KS_OK;
out:
    ks_write_end(&w);
    return st;
}

ks_status ks_persist(ks_ctx *c, const char *key, size_t klen, int *done)
{
    ks_write w;
    *done = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_NONE, &w);
    if (st != KS_OK) return st;
    if (w.m.type != KS_NONE && w.m.expire) {
        st = ks_write_retime(&w, 0);
        *done = st == KS_OK;
    }
    ks_write_end(&w);
    return st;
}

ks_status ks_expire_get(ks_ctx *c, const char *key, size_t klen, int64_t *when_ms)
{
    ks_meta m;
    *when_ms = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_NONE, &m);
    if (st != KS_OK) return st;
    *when_ms = m.expire;
    ks_meta_free(&m);
    return KS_OK;
}

/* ---- KEYS / SCAN / RANDOMKEY ------------------------------------------------ */

static int in_db(const char *k, size_t kl, int db)
{
    return kl >= 2 && k[0] == KS_NS_META && k[1] == (char)db;
}

ks_status ks_keys(ks_ctx *c, const char *pat, size_t plen, ks_key_fn fn, void *arg)
{
    size_t lit = 0; /* literal prefix of the pattern: seek to it */
    while (pat && lit < plen && !strchr("*?[\\", pat[lit]))
        lit++;
    ks_ekey start;
    ks_ekey_meta(&start, c->db, pat, lit);
    eng_iter *it = eng_iter_new(c->ks->db, NULL, ks_read_batch(c));
    eng_iter_skip_damaged(it); /* a listing goes on past a damaged block (logged) */
    ks_status st = KS_OK;
    for (eng_iter_seek(it, start.p, start.n); eng_iter_valid(it); eng_iter_next(it)) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        if (!in_db(k, kl, c->db) || kl < start.n || memcmp(k, start.p, start.n) != 0) break;
        ks_meta m;
        if (ks_meta_view(&m, v, vl, c->now_ms) != 0 || m.type == KS_NONE) continue;
        if (pat && !ks_glob_match(pat, plen, k + 2, kl - 2, 0)) continue;
        if (fn(arg, k + 2, kl - 2)) break;
    }
    if (eng_iter_status(it) != ENG_OK) st = ks_engine_err(c, eng_iter_status(it), "keys");
    eng_iter_free(it);
    ks_ekey_free(&start);
    return st;
}

ks_status ks_scan(ks_ctx *c, uint64_t cursor, const char *pat, size_t plen, uint64_t count,
                  ks_type type, ks_key_fn fn, void *arg, uint64_t *next)
{
    *next = 0;
    char start[2] = {KS_NS_META, (char)c->db};
    const ks_cursor *cur = cursor ? ks_cursor_find(c->ks, cursor) : NULL;
    eng_iter *it = eng_iter_new(c->ks->db, NULL, ks_read_batch(c));
    eng_iter_skip_damaged(it); /* a listing goes on past a damaged block (logged) */
    /* The cursor names the next key to visit (KS-E1 is not needed here). */
    if (cur && in_db(cur->pos, cur->plen, c->db))
        eng_iter_seek(it, cur->pos, cur->plen);
    else
        eng_iter_seek(it, start, 2);
    ks_status st = KS_OK;
    for (uint64_t seen = 0; eng_iter_valid(it); eng_iter_next(it), seen++) {
        size_t kl, vl;
        const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
        if (!in_db(k, kl, c->db)) break;
        if (seen >= count) {
            *next = ks_cursor_save(c->ks, k, kl);
            break;
        }
        ks_meta m;
        if (ks_meta_view(&m, v, vl, c->now_ms) != 0 || m.type == KS_NONE) continue;
        if (type != KS_NONE && (ks_type)m.type != type) continue;
        if (pat && !ks_glob_match(pat, plen, k + 2, kl - 2, 0)) continue;
        if (fn(arg, k + 2, kl - 2)) break;
    }
    if (eng_iter_status(it) != ENG_OK) st = ks_engine_err(c, eng_iter_status(it), "scan");
    eng_iter_free(it);
    return st;
}
