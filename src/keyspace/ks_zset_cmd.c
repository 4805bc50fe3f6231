/*
 * ks_zset_cmd.c -- the single-key sorted-set commands' data work: ZADD
 * (with its NX/XX/GT/LT/INCR forms), ZREM, ZCARD, ZSCORE, ZMSCORE and
 * ZSCAN, each a view or a write context of ks_zset.c and a few of its
 * calls. Apart from the storage in ks_zset.c, which every zset command
 * shares; ranges, pops and the multi-key commands have files of their own.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_zset.h"

/* Redis's listpack stores an integral score as an integer, so a -0 added
 * to a zset of its listpack encoding (ENC clear) is kept as 0; a skiplist
 * keeps the double's sign. The reply still shows the score computed. */
static double listpack_score(const ks_zw *z, double score)
{
    return !z->enc && score == 0 ? 0.0 : score;
}

static ks_status zadd_one(ks_zw *z, const ks_zmember *in, int flags, ks_zadd_result *r)
{
    ks_ctx *c = z->c;
    double cur, score = in->score;
    int found = ks_zw_find(z, in->m, in->ml, &cur);
    if (found < 0) return KS_ERR_ENGINE;
    if (found) {
        if (flags & KS_ZADD_NX) return KS_OK;
        if (flags & KS_ZADD_INCR) {
            score += cur;
            if (isnan(score)) return ks_err_msg(c, "ERR resulting score is not a number (NaN)");
        }
        if (((flags & KS_ZADD_LT) && score >= cur) || ((flags & KS_ZADD_GT) && score <= cur))
            return KS_OK;
        r->processed++;
        r->score = score;
        if (score == cur) return KS_OK;
        r->updated++;
        return ks_zw_set(z, in->m, in->ml, 1, cur, listpack_score(z, score));
    }
    if (flags & KS_ZADD_XX) return KS_OK;
    /* Redis's listpack turns into a skiplist on the member that would make
     * it too long or too many. */
    const ks_limits *lim = &c->ks->limits;
    if ((long long)z->count + 1 > lim->zset_max_listpack_entries ||
        (long long)in->ml > lim->zset_max_listpack_value)
        z->enc = 1;
    r->added++;
    r->processed++;
    r->score = score;
    return ks_zw_set(z, in->m, in->ml, 0, 0, listpack_score(z, score));
}

ks_status ks_zadd(ks_ctx *c, const char *key, size_t klen, const ks_zmember *in, size_t n,
                  int flags, ks_zadd_result *r)
{
    ks_write w;
    memset(r, 0, sizeof(*r));
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_ZSET, &w);
    if (st != KS_OK) return st;
    if (w.m.type == KS_NONE && (flags & KS_ZADD_XX)) {
        ks_write_end(&w);
        return KS_OK;
    }
    ks_zw z;
    st = ks_zw_open(&z, &w);
    if (st == KS_OK && w.m.type == KS_NONE && n) {
        /* A new key: Redis picks the encoding from the first member. */
        const ks_limits *lim = &c->ks->limits;
        z.enc = lim->zset_max_listpack_entries == 0 ||
                lim->zset_max_listpack_value < (long long)in[0].ml;
    }
    for (size_t i = 0; st == KS_OK && i < n; i++)
        st = zadd_one(&z, &in[i], flags, r);
    if (st == KS_OK)
        st = ks_zw_close(&z);
    else
        ks_zw_abort(&z);
    ks_write_end(&w);
    return st;
}

ks_status ks_zrem(ks_ctx *c, const char *key, size_t klen, const ks_field *m, size_t n,
                  uint64_t *removed)
{
    ks_write w;
    *removed = 0;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_ZSET, &w);
    if (st != KS_OK) return st;
    if (w.m.type == KS_NONE) {
        ks_write_end(&w);
        return KS_NOTFOUND;
    }
    ks_zw z;
    st = ks_zw_open(&z, &w);
    for (size_t i = 0; st == KS_OK && i < n && z.count; i++) {
        double score;
        int found = ks_zw_find(&z, m[i].f, m[i].fl, &score);
        if (found < 0) st = KS_ERR_ENGINE;
        if (found > 0 && (st = ks_zw_remove(&z, m[i].f, m[i].fl, score)) == KS_OK) (*removed)++;
    }
    if (st == KS_OK)
        st = ks_zw_close(&z);
    else
        ks_zw_abort(&z);
    ks_write_end(&w);
    return st;
}

ks_status ks_zcard(ks_ctx *c, const char *key, size_t klen, uint64_t *n)
{
    ks_meta m;
    *n = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_ZSET, &m);
    if (st != KS_OK) return st;
    if (ks_zset_type.count(&m, n) != 0) st = ks_corrupt(c, "zset encoding");
    ks_meta_free(&m);
    return st;
}

ks_status ks_zscore(ks_ctx *c, const char *key, size_t klen, const ks_field *m, size_t n,
                    double *scores, int *found)
{
    for (size_t i = 0; i < n; i++)
        found[i] = 0, scores[i] = 0;
    ks_zview v;
    ks_status st = ks_zview_open(c, key, klen, &v);
    if (st != KS_OK) return st;
    for (size_t i = 0; st == KS_OK && i < n; i++) {
        int r = ks_zview_score(c, &v, m[i].f, m[i].fl, &scores[i]);
        if (r < 0) st = KS_ERR_ENGINE;
        found[i] = r > 0;
    }
    ks_zview_close(&v);
    return st;
}

ks_status ks_zscan(ks_ctx *c, const char *key, size_t klen, uint64_t cursor, const char *pat,
                   size_t plen, uint64_t count, ks_zmembers_fn fn, void *arg, int *listpack,
                   uint64_t *next)
{
    ks_zview v;
    *next = 0;
    ks_status st = ks_zview_open(c, key, klen, &v);
    if (st != KS_OK) return st;
    *listpack = !v.m.enc;
    ks_zmvec all, out;
    ks_zmvec_init(&all);
    ks_zmvec_init(&out);
    if (!v.m.big || !v.m.enc) {
        /* Packed zsets, and those Redis would hold as a listpack, come back
         * whole in score order, as Redis scans a listpack. */
        st = ks_zview_all(c, &v, &all);
        for (size_t i = 0; st == KS_OK && i < all.n; i++)
            if ((!pat || ks_glob_match(pat, plen, all.v[i].m, all.v[i].ml, 0)) &&
                ks_zmvec_push(&out, all.v[i].m, all.v[i].ml, all.v[i].score, 0) != 0)
                st = ks_oom(c);
    } else {
        ks_miter mi;
        char t = KS_ZTAG_MEMBER;
        ks_miter_open(&mi, c, NULL, c->db, v.m.version);
        if (!ks_member_cursor_seek(c, &mi, cursor)) ks_miter_seek(&mi, &t, 1);
        for (uint64_t seen = 0; st == KS_OK && ks_miter_valid(&mi); ks_miter_next(&mi), seen++) {
            size_t sn, vn;
            const char *s = ks_miter_suffix(&mi, &sn), *val = ks_miter_value(&mi, &vn);
            if (sn < 1 || s[0] != KS_ZTAG_MEMBER) break;
            if (seen == count) {
                *next = ks_member_cursor_save(c, &mi);
                break;
            }
            if (vn != 8) {
                st = ks_corrupt(c, "zset member");
            } else if ((!pat || ks_glob_match(pat, plen, s + 1, sn - 1, 0)) &&
                       ks_zmvec_push(&out, s + 1, sn - 1, ks_zdouble(ks_get_be64(val)), 1) != 0) {
                st = ks_oom(c);
            }
        }
        ks_status cst = ks_miter_close(&mi, c);
        if (st == KS_OK) st = cst;
    }
    if (st == KS_OK) fn(arg, out.v, out.n);
    ks_zmvec_free(&out);
    ks_zmvec_free(&all);
    ks_zview_close(&v);
    return st;
}
