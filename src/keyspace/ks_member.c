/*
 * ks_member.c -- the members of big values: one engine key per member
 * under the value's version, and the packed string sequence small values
 * of several types share.
 *
 * On-disk format (ENCODING.md):
 *   'd' db be64(version) suffix -> value      (suffix and value: the type's)
 *   strs = varint(count) { varint(len) bytes }*count
 * The members of one (db, version) are contiguous, so dropping a value of
 * any size is one range delete (KS-E4), and nothing in a member names its
 * Redis key (KS-E6).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_type.h"

eng_status ks_member_get(ks_ctx *c, const eng_snapshot *snap, int db, uint64_t version,
                         const char *sfx, size_t sn, char **v, size_t *vl)
{
    ks_ekey k;
    ks_ekey_members(&k, db, version);
    ks_ekey_append(&k, sfx, sn);
    eng_status s = ks_eget(c, snap, k.p, k.n, v, vl);
    ks_ekey_free(&k);
    return s;
}

void ks_member_put(ks_ctx *c, int db, uint64_t version, const char *sfx, size_t sn, const char *v,
                   size_t vl)
{
    ks_ekey k;
    ks_ekey_members(&k, db, version);
    ks_ekey_append(&k, sfx, sn);
    eng_batch_put(c->batch, k.p, k.n, v, vl);
    ks_ekey_free(&k);
}

void ks_member_del(ks_ctx *c, int db, uint64_t version, const char *sfx, size_t sn)
{
    ks_ekey k;
    ks_ekey_members(&k, db, version);
    ks_ekey_append(&k, sfx, sn);
    eng_batch_delete(c->batch, k.p, k.n);
    ks_ekey_free(&k);
}

void ks_members_delete_range(ks_ctx *c, int db, uint64_t version, const char *from, size_t fn,
                             const char *to, size_t tn)
{
    ks_ekey a, b;
    ks_ekey_members(&a, db, version);
    ks_ekey_append(&a, from, fn);
    if (to) {
        ks_ekey_members(&b, db, version);
        ks_ekey_append(&b, to, tn);
    } else {
        ks_ekey_members(&b, db, version + 1);
    }
    eng_batch_delete_range(c->batch, a.p, a.n, b.p, b.n);
    ks_ekey_free(&a);
    ks_ekey_free(&b);
}

void ks_members_drop(ks_ctx *c, int db, uint64_t version)
{
    ks_members_delete_range(c, db, version, NULL, 0, NULL, 0);
}

/* ---- Iterator ---------------------------------------------------------------- */

void ks_miter_open(ks_miter *mi, ks_ctx *c, const eng_snapshot *snap, int db, uint64_t version)
{
    ks_ekey_members(&mi->pre, db, version);
    ks_ekey_members(&mi->end, db, version + 1);
    mi->it = eng_iter_new(c->ks->db, snap, ks_read_batch(c));
    mi->seeks = &c->ks->stat_seeks;
    mi->steps = &c->ks->stat_steps;
}

int ks_miter_valid(const ks_miter *mi)
{
    if (!eng_iter_valid(mi->it)) return 0;
    size_t kl;
    const char *k = eng_iter_key(mi->it, &kl);
    return kl >= mi->pre.n && memcmp(k, mi->pre.p, mi->pre.n) == 0;
}

void ks_miter_first(ks_miter *mi)
{
    (*mi->seeks)++;
    eng_iter_seek(mi->it, mi->pre.p, mi->pre.n);
}

void ks_miter_last(ks_miter *mi)
{
    (*mi->seeks)++;
    /* The last key <= the next version's prefix, which may itself be a key
     * of that version (an empty suffix): step back over it. */
    eng_iter_seek_prev(mi->it, mi->end.p, mi->end.n);
    size_t kl;
    if (eng_iter_valid(mi->it) && (eng_iter_key(mi->it, &kl), kl == mi->end.n) &&
        memcmp(eng_iter_key(mi->it, &kl), mi->end.p, mi->end.n) == 0)
        eng_iter_prev(mi->it);
}

void ks_miter_seek(ks_miter *mi, const char *sfx, size_t sn)
{
    (*mi->seeks)++;
    size_t base = mi->pre.n;
    ks_ekey_append(&mi->pre, sfx, sn);
    eng_iter_seek(mi->it, mi->pre.p, mi->pre.n);
    mi->pre.n = base;
}

void ks_miter_seek_prev(ks_miter *mi, const char *sfx, size_t sn)
{
    (*mi->seeks)++;
    size_t base = mi->pre.n;
    ks_ekey_append(&mi->pre, sfx, sn);
    eng_iter_seek_prev(mi->it, mi->pre.p, mi->pre.n);
    mi->pre.n = base;
}

void ks_miter_next(ks_miter *mi)
{
    (*mi->steps)++;
    eng_iter_next(mi->it);
}

void ks_miter_prev(ks_miter *mi)
{
    (*mi->steps)++;
    eng_iter_prev(mi->it);
}

const char *ks_miter_suffix(const ks_miter *mi, size_t *n)
{
    size_t kl;
    const char *k = eng_iter_key(mi->it, &kl);
    *n = kl - mi->pre.n;
    return k + mi->pre.n;
}

const char *ks_miter_value(const ks_miter *mi, size_t *n)
{
    return eng_iter_value(mi->it, n);
}

uint64_t ks_miter_deleted(const ks_miter *mi)
{
    return eng_iter_deleted(mi->it);
}

ks_status ks_miter_close(ks_miter *mi, ks_ctx *c)
{
    eng_status s = eng_iter_status(mi->it);
    c->ks->stat_eng_steps += eng_iter_steps(mi->it);
    eng_iter_free(mi->it);
    mi->it = NULL;
    ks_ekey_free(&mi->pre);
    ks_ekey_free(&mi->end);
    return s == ENG_OK ? KS_OK : ks_engine_err(c, s, "member read");
}

uint64_t ks_member_steps(const keyspace *ks)
{
    return ks->stat_seeks + ks->stat_steps;
}

int ks_member_cursor_seek(ks_ctx *c, ks_miter *mi, uint64_t cursor)
{
    const ks_cursor *cur = cursor ? ks_cursor_find(c->ks, cursor) : NULL;
    if (!cur || cur->plen < mi->pre.n || memcmp(cur->pos, mi->pre.p, mi->pre.n) != 0) return 0;
    eng_iter_seek(mi->it, cur->pos, cur->plen);
    return 1;
}

uint64_t ks_member_cursor_save(ks_ctx *c, const ks_miter *mi)
{
    size_t kl;
    const char *k = eng_iter_key(mi->it, &kl);
    return ks_cursor_save(c->ks, k, kl);
}

/* ---- Whole versions ------------------------------------------------------------ */

ks_status ks_members_load(ks_ctx *c, const eng_snapshot *snap, int db, uint64_t version,
                          ks_fvec *fv)
{
    ks_miter mi;
    ks_status st = KS_OK;
    ks_miter_open(&mi, c, snap, db, version);
    for (ks_miter_first(&mi); ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *s = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (ks_fvec_push_copy(fv, s, sn, v, vn) != 0) {
            st = ks_oom(c);
            break;
        }
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

uint64_t ks_members_write_new(ks_ctx *c, int db, const ks_field *entries, size_t n)
{
    uint64_t version = ks_new_version(c);
    ks_ekey k;
    ks_ekey_members(&k, db, version);
    size_t base = k.n;
    for (size_t i = 0; i < n; i++) {
        k.n = base;
        ks_ekey_append(&k, entries[i].f, entries[i].fl);
        eng_batch_put(c->batch, k.p, k.n, entries[i].v, entries[i].vl);
    }
    ks_ekey_free(&k);
    return version;
}

/* Copies the members of (sdb, from) to (ddb, to) in chunks: the iterator
 * must not see the batch change, and the chunks keep memory bounded. */
#define KS_COPY_CHUNK 4096
static ks_status members_copy(ks_ctx *c, int sdb, uint64_t from, int ddb, uint64_t to)
{
    ks_status st = KS_OK;
    char *resume = NULL;
    size_t rn = 0;
    for (int more = 1; more && st == KS_OK;) {
        ks_fvec fv;
        ks_fvec_init(&fv);
        ks_miter mi;
        ks_miter_open(&mi, c, NULL, sdb, from);
        if (resume)
            ks_miter_seek(&mi, resume, rn);
        else
            ks_miter_first(&mi);
        /* The resume point is the last suffix copied: skip it. */
        if (resume && ks_miter_valid(&mi)) {
            size_t sn;
            const char *s = ks_miter_suffix(&mi, &sn);
            if (sn == rn && memcmp(s, resume, rn) == 0) ks_miter_next(&mi);
        }
        for (; ks_miter_valid(&mi) && fv.n < KS_COPY_CHUNK; ks_miter_next(&mi)) {
            size_t sn, vn;
            const char *s = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
            if (ks_fvec_push_copy(&fv, s, sn, v, vn) != 0) {
                st = ks_oom(c);
                break;
            }
        }
        more = ks_miter_valid(&mi);
        ks_status cst = ks_miter_close(&mi, c);
        if (st == KS_OK) st = cst;
        for (size_t i = 0; st == KS_OK && i < fv.n; i++)
            ks_member_put(c, ddb, to, fv.v[i].f, fv.v[i].fl, fv.v[i].v, fv.v[i].vl);
        free(resume);
        resume = NULL;
        if (fv.n && (resume = malloc(fv.v[fv.n - 1].fl + 1)) != NULL) {
            rn = fv.v[fv.n - 1].fl;
            memcpy(resume, fv.v[fv.n - 1].f, rn);
        } else if (fv.n) {
            st = ks_oom(c);
        }
        ks_fvec_free(&fv);
    }
    free(resume);
    return st;
}

ks_status ks_copy_generic(ks_ctx *c, int sdb, const ks_meta *m, int ddb, ks_value *v, char *buf)
{
    *v = (ks_value){m->stored, m->big, m->enc, 0, m->payload, m->plen, NULL, 0};
    if (!m->big) return KS_OK;
    uint64_t version = ks_new_version(c); /* KS-E2 */
    ks_big_body(v, buf, version, m->count, m->ext, m->extlen);
    return members_copy(c, sdb, m->version, ddb, version);
}

/* ---- Packed string sequences ---------------------------------------------------- */

size_t ks_strs_size(const ks_field *items, size_t n)
{
    size_t sz = ks_varint_len(n);
    for (size_t i = 0; i < n; i++)
        sz += ks_varint_len(items[i].fl) + items[i].fl;
    return sz;
}

char *ks_strs_write(char *p, const ks_field *items, size_t n)
{
    p = ks_put_varint(p, n);
    for (size_t i = 0; i < n; i++) {
        p = ks_put_varint(p, items[i].fl);
        if (items[i].fl) memcpy(p, items[i].f, items[i].fl);
        p += items[i].fl;
    }
    return p;
}

int ks_strs_parse(const char *p, size_t n, ks_fvec *fv)
{
    const char *end = p + n;
    uint64_t cnt, len;
    if (!(p = ks_get_varint(p, end, &cnt))) return -1;
    for (uint64_t i = 0; i < cnt; i++) {
        if (!(p = ks_get_varint(p, end, &len)) || len > (uint64_t)(end - p)) return -1;
        if (ks_fvec_push(fv, p, len, NULL, 0) != 0) return -1;
        p += len;
    }
    return p == end ? 0 : -1;
}

int ks_packed_count(const char *p, size_t n, uint64_t *count)
{
    return ks_get_varint(p, p + n, count) ? 0 : -1;
}
