/*
 * ks_zset.c -- sorted sets: how they are stored, the zset row of the type
 * table, views and the write context every changing command uses, and the
 * packed and big bodies they read and write. The member vectors, entry
 * suffixes and order-entry iteration every zset file uses are in
 * ks_zset_entry.c, the single-key commands (ZADD, ZINCRBY, ZREM, ZSCORE,
 * ZMSCORE, ZCARD, ZSCAN) in ks_zset_cmd.c, ranges, pops and random
 * members in ks_zset_range.c, the multi-key commands in ks_zset_ops.c,
 * the rank blocks in ks_zset_rank.c.
 *
 * On-disk format (ENCODING.md, "Sorted sets (type 5)"):
 *   packed body: varint(n) { varint(mlen) member score:be64 }*n, in
 *                (score, member) order, scores as IEEE-754 bits
 *   big body:    version le64, count le64, height u8 (0x80: the rank log
 *                bounds follow removed; 0x40: below follows), removed le64
 *                (members removed or moved under this version: their
 *                tombstones slow the walks that cross them, so past
 *                3 x count + 1024 the zset is rewritten under a new
 *                version), [logfirst le64 logend le64: the rank changes
 *                not yet in the rank blocks], [below le64: of removed,
 *                those whose tombstones are below the floor, which forward
 *                reads seek past: they count against 16 x count instead],
 *                then optionally the floor (<= 64 bytes no live order key
 *                is below: pops from the front raise it, so reads of the
 *                front seek past their tombstones)
 *   big entries: 'd' db be64(version) then
 *                0x00 member               -> score:be64 (exact bits)
 *                0x01 skey:be64 member     -> "" | "-" (the score is -0)
 *                0x02 level:u8 start       -> count:le64 children:le64
 *                0x03 seq:be64             -> d:i8 orderkey (rank log, KS-Z4)
 * skey is the order-preserving form of the score (IDX NUMERIC's), so the
 * order entries sort as Redis orders a zset. ENC (0x20) = Redis's skiplist
 * encoding, sticky. Packed while count <= zset-max-listpack-entries and the
 * body <= KS_PACKED_MAX_BYTES; a value that outgrows either turns big in
 * the same batch and never turns back, except when a command rewrites it
 * whole (the STORE commands).
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_zset.h"

uint64_t ks_zrewrite_slack = KS_ZSET_REWRITE_SLACK;

/* ---- Packed bodies ------------------------------------------------------------------ */

int ks_zpacked_parse(const char *p, size_t n, ks_zmember **items, size_t *count)
{
    const char *end = p + n;
    uint64_t cnt, ml;
    *items = NULL;
    *count = 0;
    if (!(p = ks_get_varint(p, end, &cnt)) || cnt > n) return -1;
    ks_zmember *it = malloc((cnt ? cnt : 1) * sizeof(*it));
    if (!it) return -1;
    for (uint64_t i = 0; i < cnt; i++) {
        if (!(p = ks_get_varint(p, end, &ml)) || ml > (uint64_t)(end - p) ||
            (uint64_t)(end - p) - ml < 8) {
            free(it);
            return -1;
        }
        it[i].m = p;
        it[i].ml = ml;
        it[i].score = ks_zdouble(ks_get_be64(p + ml));
        if (isnan(it[i].score)) {
            free(it);
            return -1;
        }
        p += ml + 8;
    }
    if (p != end) {
        free(it);
        return -1;
    }
    *items = it;
    *count = cnt;
    return 0;
}

static size_t packed_item_size(size_t ml)
{
    return ks_varint_len(ml) + ml + 8;
}

/* 1 when n members of total item bytes fit a packed body. */
static int packed_fits(ks_ctx *c, size_t n, size_t bytes)
{
    return (long long)n <= c->ks->limits.zset_max_listpack_entries &&
           ks_varint_len(n) + bytes <= KS_PACKED_MAX_BYTES;
}

/* Writes sorted items as w's packed record. */
static ks_status packed_put(ks_write *w, const ks_zmember *it, size_t n, int enc, int64_t expire)
{
    size_t size = ks_varint_len(n);
    for (size_t i = 0; i < n; i++)
        size += packed_item_size(it[i].ml);
    char *buf = ks_scratch(w->c->ks, KS_HDR_MAX + size);
    if (!buf) return ks_oom(w->c);
    char *p = ks_put_varint(buf + KS_HDR_MAX, n);
    for (size_t i = 0; i < n; i++) {
        p = ks_put_varint(p, it[i].ml);
        if (it[i].ml) memcpy(p, it[i].m, it[i].ml);
        p += it[i].ml;
        ks_put_be64(p, ks_zbits(it[i].score));
        p += 8;
    }
    ks_value v = {KS_ZSET, 0, enc, expire, buf + KS_HDR_MAX, size, NULL, 0};
    return ks_write_put(w, &v);
}

int ks_zext_parse(const char *ext, size_t n, ks_zext *e)
{
    if (n < KS_ZEXT_LEN) return -1;
    int haslog = ((unsigned char)ext[0] & KS_ZEXT_HASLOG) != 0;
    int hasbelow = ((unsigned char)ext[0] & KS_ZEXT_HASBELOW) != 0;
    size_t fixed = (haslog ? KS_ZEXT_LOGLEN : KS_ZEXT_LEN) + (hasbelow ? 8 : 0);
    e->height = (unsigned char)ext[0] & ~(KS_ZEXT_HASLOG | KS_ZEXT_HASBELOW);
    /* KS-Z5: height 0 (no rank blocks yet) has no log either */
    if (n < fixed || n > fixed + KS_ZFLOOR_MAX || (e->height < 1 && haslog) ||
        e->height > KS_ZRANK_MAX_HEIGHT)
        return -1;
    e->removed = ks_get_le64(ext + 1);
    e->logfirst = haslog ? ks_get_le64(ext + KS_ZEXT_LEN) : 0;
    e->logend = haslog ? ks_get_le64(ext + KS_ZEXT_LEN + 8) : 0;
    e->below = hasbelow ? ks_get_le64(ext + fixed - 8) : 0;
    if (e->logfirst > e->logend || e->below > e->removed) return -1;
    e->floor = ext + fixed;
    e->floorl = n - fixed;
    return 0;
}

/* e->floorl (<= KS_ZFLOOR_MAX) bytes of floor, none when 0; the log
 * fields only once the version has used its log, below only when not 0
 * (older records stay readable by the format without them). */
static ks_status big_put(ks_write *w, uint64_t version, uint64_t count, const ks_zext *e, int enc,
                         int64_t expire)
{
    char body[KS_BIG_BODY_MAX], ext[KS_ZEXT_LOGLEN + 8 + KS_ZFLOOR_MAX];
    size_t fixed = e->logend ? KS_ZEXT_LOGLEN : KS_ZEXT_LEN;
    ext[0] =
        (char)(e->height | (e->logend ? KS_ZEXT_HASLOG : 0) | (e->below ? KS_ZEXT_HASBELOW : 0));
    ks_put_le64(ext + 1, e->removed);
    if (e->logend) {
        ks_put_le64(ext + KS_ZEXT_LEN, e->logfirst);
        ks_put_le64(ext + KS_ZEXT_LEN + 8, e->logend);
    }
    if (e->below) {
        ks_put_le64(ext + fixed, e->below);
        fixed += 8;
    }
    if (e->floorl) memcpy(ext + fixed, e->floor, e->floorl);
    ks_value v = {KS_ZSET, 1, enc, expire, NULL, 0, NULL, 0};
    ks_big_body(&v, body, version, count, ext, fixed + e->floorl);
    return ks_write_put(w, &v);
}

/* Sets k (the member prefix, pre bytes) to prefix sfx m: in place when
 * it fits, as nearly every key does (the appends cost a pop ~100 more). */
static inline void key_suffix(ks_ekey *k, size_t pre, const char *sfx, size_t sn, const char *m,
                              size_t ml)
{
    k->n = pre;
    if (pre + sn + ml > k->cap) {
        ks_ekey_append(k, sfx, sn);
        ks_ekey_append(k, m, ml);
        return;
    }
    memcpy(k->p + pre, sfx, sn);
    if (ml) memcpy(k->p + pre + sn, m, ml);
    k->n = pre + sn + ml;
}

/* The member and order entries of one member (a new version's or an
 * update's). */
static void entries_put(ks_ctx *c, int db, uint64_t version, const char *m, size_t ml, double score)
{
    ks_ekey k;
    char sb[8], sfx[9];
    ks_put_be64(sb, ks_zbits(score));
    ks_ekey_members(&k, db, version); /* one prefix for both keys */
    size_t pre = k.n;
    sfx[0] = KS_ZTAG_MEMBER;
    key_suffix(&k, pre, sfx, 1, m, ml);
    eng_batch_put(c->batch, k.p, k.n, sb, 8);
    sfx[0] = KS_ZTAG_ORDER;
    ks_put_be64(sfx + 1, ks_zskey(score));
    key_suffix(&k, pre, sfx, 9, m, ml);
    int negzero = score == 0 && signbit(score);
    eng_batch_put(c->batch, k.p, k.n, negzero ? "-" : "", negzero ? 1 : 0);
    ks_ekey_free(&k);
}

/* ---- The zset row --------------------------------------------------------------------- */

static const char *zset_encoding(const ks_meta *m, const ks_limits *lim)
{
    (void)lim;
    return m->enc ? "skiplist" : "listpack";
}

static int zset_count(const ks_meta *m, uint64_t *n)
{
    if (m->big) return *n = m->count, 0;
    return ks_packed_count(m->payload, m->plen, n);
}

static int zset_check(const ks_meta *m)
{
    ks_zext e;
    return m->big ? ks_zext_parse(m->ext, m->extlen, &e) : 0;
}

/* ks_copy_generic copies every entry (member, order, rank blocks) under a
 * new version and keeps the ext: the height stays right, and the copy has
 * no tombstones of its own, so its removed count (and below) starts at 0. */
static ks_status zset_copy(ks_ctx *c, int sdb, const ks_meta *m, int ddb, ks_value *v, char *buf)
{
    ks_status st = ks_copy_generic(c, sdb, m, ddb, v, buf);
    if (st != KS_OK || !m->big) return st;
    unsigned char h = (unsigned char)buf[KS_BIG_HDR];
    ks_put_le64(buf + KS_BIG_HDR + 1, 0);
    if (h & KS_ZEXT_HASBELOW)
        ks_put_le64(buf + KS_BIG_HDR + ((h & KS_ZEXT_HASLOG) ? KS_ZEXT_LOGLEN : KS_ZEXT_LEN), 0);
    return st;
}

const ks_type_ops ks_zset_type = {
    .type = KS_ZSET,
    .name = "zset",
    .encoding = zset_encoding,
    .count = zset_count,
    .check = zset_check,
    .copy = zset_copy,
    .drop = ks_drop_generic,
    .repair = ks_repair_generic,
    .filter = ks_filter_generic,
    .fields = NULL,
};

/* ---- Views ------------------------------------------------------------------------------ */

ks_status ks_zview_of(ks_ctx *c, const ks_meta *m, ks_zview *v)
{
    v->m = *m;
    v->own = 0;
    v->items = NULL;
    v->n = 0;
    v->height = 0;
    v->floor = NULL;
    v->floorl = 0;
    v->logfirst = v->logend = 0;
    if (m->type == KS_NONE) return KS_OK;
    if (m->big) {
        ks_zext e;
        if (ks_zext_parse(m->ext, m->extlen, &e) != 0) return ks_corrupt(c, "zset encoding");
        v->n = m->count;
        v->height = e.height;
        v->floor = e.floor;
        v->floorl = e.floorl;
        v->logfirst = e.logfirst;
        v->logend = e.logend;
        return KS_OK;
    }
    if (ks_zpacked_parse(m->payload, m->plen, &v->items, &v->n) != 0)
        return ks_corrupt(c, "zset encoding");
    return KS_OK;
}

/* Builds the rank blocks of the big zset key (KS-Z5: a rank read asked
 * for them), as a write that changes nothing a client sees: no WATCH
 * touch, no event. */
static ks_status build_wanted(ks_ctx *c, const char *key, size_t klen)
{
    ks_write w;
    ks_zw z;
    c->ks->quiet_touch++;
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_ZSET, &w);
    if (st == KS_OK) {
        st = ks_zw_open(&z, &w);
        if (st == KS_OK)
            st = ks_zw_close(&z);
        else
            ks_zw_abort(&z);
        ks_write_end(&w);
    }
    c->ks->quiet_touch--;
    return st;
}

ks_status ks_zview_open(ks_ctx *c, const char *key, size_t klen, ks_zview *v)
{
    ks_meta m;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_ZSET, &m);
    if (st != KS_OK) return st;
    st = ks_zview_of(c, &m, v);
    if (st != KS_OK) {
        ks_meta_free(&m);
        return st;
    }
    v->own = 1;
    /* Read through the command's batch before any iterator exists, as a
     * lazy expiry would write. */
    if (m.big && v->height == 0 && ks_zrank_wanted(c, c->db, m.version) && c->batch &&
        !c->ks->no_lazy_expire && !c->ks->in_hook) {
        ks_zview_close(v);
        st = build_wanted(c, key, klen);
        c->ks->zrank_want_version = 0; /* built, or not to be tried again */
        return st == KS_OK ? ks_zview_open(c, key, klen, v) : st;
    }
    return KS_OK;
}

void ks_zview_close(ks_zview *v)
{
    free(v->items);
    v->items = NULL;
    if (v->own) ks_meta_free(&v->m);
    v->own = 0;
}

static int packed_find(const ks_zmember *it, size_t n, const char *m, size_t ml)
{
    for (size_t i = 0; i < n; i++)
        if (it[i].ml == ml && (ml == 0 || memcmp(it[i].m, m, ml) == 0)) return (int)i;
    return -1;
}

/* The score of member in big zset (db, version): 1, 0 absent, -1 error. */
static int big_score(ks_ctx *c, int db, uint64_t version, const char *m, size_t ml, double *score)
{
    ks_ekey k;
    char *val;
    size_t vl;
    ks_zsfx_member(&k, m, ml);
    eng_status s = ks_member_get(c, NULL, db, version, k.p, k.n, &val, &vl);
    ks_ekey_free(&k);
    if (s == ENG_NOTFOUND) return 0;
    if (s != ENG_OK) return ks_engine_err(c, s, "zset read"), -1;
    int ok = vl == 8;
    if (ok) *score = ks_zdouble(ks_get_be64(val));
    eng_free(val);
    if (!ok || isnan(*score)) return ks_corrupt(c, "zset member"), -1;
    return 1;
}

int ks_zview_score(ks_ctx *c, const ks_zview *v, const char *m, size_t ml, double *score)
{
    if (v->m.type == KS_NONE) return 0;
    if (v->m.big) return big_score(c, c->db, v->m.version, m, ml, score);
    int i = packed_find(v->items, v->n, m, ml);
    if (i < 0) return 0;
    *score = v->items[i].score;
    return 1;
}

ks_status ks_zview_all(ks_ctx *c, const ks_zview *v, ks_zmvec *out)
{
    if (v->m.type == KS_NONE) return KS_OK;
    if (!v->m.big) {
        for (size_t i = 0; i < v->n; i++)
            if (ks_zmvec_push(out, v->items[i].m, v->items[i].ml, v->items[i].score, 1) != 0)
                return ks_oom(c);
        return KS_OK;
    }
    ks_miter mi;
    ks_status st = KS_OK;
    ks_miter_open(&mi, c, NULL, c->db, v->m.version);
    for (ks_zorder_seek_from(&mi, v, "", 0); st == KS_OK && ks_zorder_valid(&mi);
         ks_miter_next(&mi)) {
        ks_zmember z;
        if (ks_zorder_entry(&mi, &z) != 0)
            st = ks_corrupt(c, "zset order entry");
        else if (ks_zmvec_push(out, z.m, z.ml, z.score, 1) != 0)
            st = ks_oom(c);
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* ---- The write context ------------------------------------------------------------------- */

ks_status ks_zw_open(ks_zw *z, ks_write *w)
{
    memset(z, 0, offsetof(ks_zw, keys)); /* the rest: see ks_zw */
    z->w = w;
    z->c = w->c;
    ks_fvec_init(&z->keys);
    const ks_meta *m = &w->m;
    if (m->type == KS_NONE) return KS_OK;
    z->enc = m->enc;
    if (m->big) {
        z->big = 1;
        ks_zext e;
        if (ks_zext_parse(m->ext, m->extlen, &e) != 0) return ks_corrupt(w->c, "zset encoding");
        z->version = m->version;
        z->count = m->count;
        z->height = e.height;
        z->removed = z->removed0 = e.removed;
        z->below = e.below;
        z->logfirst = e.logfirst;
        z->logend = e.logend;
        z->floorl = e.floorl;
        memcpy(z->floor, e.floor, z->floorl);
        ks_zfront_forget(z->c, w->db, z->version); /* KS-Z6 */
        if (z->height == 0 && ks_zrank_wanted(z->c, w->db, z->version)) {
            z->rebuild = z->changed = 1; /* a rank read asked for the blocks */
            z->c->ks->zrank_want_version = 0;
        }
        return KS_OK;
    }
    if (ks_zpacked_parse(m->payload, m->plen, &z->items, &z->n) != 0)
        return ks_corrupt(w->c, "zset encoding");
    z->cap = z->n;
    z->count = z->n;
    return KS_OK;
}

void ks_zw_abort(ks_zw *z)
{
    if (z->items) free(z->items); /* a big zset's pop has neither: no call */
    if (z->d) free(z->d);
    ks_fvec_free(&z->keys);
    z->items = NULL;
    z->d = NULL;
}

/* Pending rank changes beyond this many are applied on the spot, which
 * keeps the memory of one command's changes bounded. */
#define ZW_DELTA_CHUNK 4096

ks_status ks_zdelta_push(ks_ctx *c, ks_zdelta **v, size_t *n, size_t *cap, ks_fvec *keys,
                         const char *k, size_t kl, int64_t d)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        ks_zdelta *nv = realloc(*v, nc * sizeof(*nv));
        if (!nv) return ks_oom(c);
        *v = nv;
        *cap = nc;
    }
    if (ks_fvec_push_copy(keys, k, kl, NULL, 0) != 0) return ks_oom(c);
    const ks_field *f = &keys->v[keys->n - 1];
    (*v)[(*n)++] = (ks_zdelta){f->f, f->fl, d, d};
    return KS_OK;
}

ks_status ks_zw_add_delta(ks_zw *z, const char *key, size_t kl, int64_t d)
{
    return ks_zdelta_push(z->c, &z->d, &z->nd, &z->capd, &z->keys, key, kl, d);
}

static ks_status push_delta(ks_zw *z, double score, const char *m, size_t ml, int d)
{
    if (z->rebuild || z->height == 0) return KS_OK; /* KS-Z5: no blocks to keep */
    ks_ekey k;
    ks_zorder_key(&k, score, m, ml);
    ks_status st = ks_zw_add_delta(z, k.p, k.n, d);
    ks_ekey_free(&k);
    if (st == KS_OK && z->nd >= ZW_DELTA_CHUNK) return ks_zrank_apply(z, 0);
    return st;
}

/* The packed members become big: every member under a new version,
 * without rank blocks until a rank read asks for them (KS-Z5). */
static void to_big(ks_zw *z)
{
    ks_ctx *c = z->c;
    z->version = ks_new_version(c);
    for (size_t i = 0; i < z->n; i++)
        entries_put(c, z->w->db, z->version, z->items[i].m, z->items[i].ml, z->items[i].score);
    z->count = z->n;
    free(z->items);
    z->items = NULL;
    z->n = z->cap = 0;
    z->big = 1;
    z->height = 0;
}

int ks_zw_find(ks_zw *z, const char *m, size_t ml, double *score)
{
    if (z->big) return big_score(z->c, z->w->db, z->version, m, ml, score);
    int i = packed_find(z->items, z->n, m, ml);
    if (i < 0) return 0;
    *score = z->items[i].score;
    return 1;
}

static size_t packed_bytes(const ks_zw *z)
{
    size_t b = 0;
    for (size_t i = 0; i < z->n; i++)
        b += packed_item_size(z->items[i].ml);
    return b;
}

ks_status ks_zw_set(ks_zw *z, const char *m, size_t ml, int found, double old, double score)
{
    ks_ctx *c = z->c;
    z->changed = 1;
    if (!z->big) {
        if (found) {
            z->items[packed_find(z->items, z->n, m, ml)].score = score;
            return KS_OK;
        }
        if (z->n == z->cap) {
            size_t cap = z->cap ? z->cap * 2 : 8;
            ks_zmember *ni = realloc(z->items, cap * sizeof(*ni));
            if (!ni) return ks_oom(c);
            z->items = ni;
            z->cap = cap;
        }
        z->items[z->n++] = (ks_zmember){ml ? m : "", ml, score};
        z->count = z->n;
        /* Checked per added member so a huge ZADD into a new key goes
         * big early instead of searching a huge array. */
        if ((long long)z->n > c->ks->limits.zset_max_listpack_entries ||
            (z->n % 16 == 0 && !packed_fits(c, z->n, packed_bytes(z))) || ml > KS_PACKED_MAX_BYTES)
            to_big(z);
        return KS_OK;
    }
    ks_ekey k;
    if (found) {
        ks_zsfx_order(&k, old, m, ml);
        ks_member_del(c, z->w->db, z->version, k.p, k.n);
        ks_ekey_free(&k);
        z->removed++;
        ks_status st = push_delta(z, old, m, ml, -1);
        if (st != KS_OK) return st;
    } else {
        z->count++;
    }
    entries_put(c, z->w->db, z->version, m, ml, score);
    if (z->floorl) { /* an entry below the floor lowers it */
        ks_zorder_key(&k, score, m, ml);
        if (ks_zkcmp(k.p, k.n, z->floor, z->floorl) < 0) {
            z->floorl = k.n < KS_ZFLOOR_MAX ? k.n : KS_ZFLOOR_MAX;
            memcpy(z->floor, k.p, z->floorl);
            z->below = 0; /* KS-Z7: the tombstones above it are not known */
        }
        ks_ekey_free(&k);
    }
    return push_delta(z, score, m, ml, +1);
}

void ks_zw_raise_floor(ks_zw *z, double score, const char *m, size_t ml, uint64_t crossed)
{
    if (!z->big) return;
    char k[KS_ZFLOOR_MAX]; /* the order key's first bytes: a prefix is a bound */
    size_t n = 8 + (ml < KS_ZFLOOR_MAX - 8 ? ml : KS_ZFLOOR_MAX - 8);
    ks_put_be64(k, ks_zskey(score));
    if (n > 8) memcpy(k + 8, m, n - 8);
    if (ks_zkcmp(k, n, z->floor, z->floorl) > 0) {
        memcpy(z->floor, k, n);
        z->floorl = n;
    }
    /* KS-Z7: the command's removals and the crossed tombstones are at or
     * below (score, m), hence below the floor unless it was cut (a long
     * member: they may be above its prefix). A crossed tombstone is one of
     * removed's (at most one per removal) not yet in below. */
    if (n == 8 + ml) {
        z->below += z->removed - z->removed0 + crossed;
        if (z->below > z->removed) z->below = z->removed;
    }
}

/* Deletes m's member and order entries in the command's batch: one key
 * built for both (ks_member_del would build each twice). */
static void entries_del(ks_zw *z, const char *m, size_t ml, double score)
{
    ks_ekey k;
    char sfx[9];
    ks_ekey_members(&k, z->w->db, z->version);
    size_t pre = k.n;
    sfx[0] = KS_ZTAG_MEMBER;
    key_suffix(&k, pre, sfx, 1, m, ml);
    eng_batch_delete(z->c->batch, k.p, k.n);
    sfx[0] = KS_ZTAG_ORDER;
    ks_put_be64(sfx + 1, ks_zskey(score));
    key_suffix(&k, pre, sfx, 9, m, ml);
    eng_batch_delete(z->c->batch, k.p, k.n);
    ks_ekey_free(&k);
}

ks_status ks_zw_remove(ks_zw *z, const char *m, size_t ml, double score)
{
    z->changed = 1;
    if (!z->big) {
        int i = packed_find(z->items, z->n, m, ml);
        if (i >= 0) z->items[i] = z->items[--z->n];
        z->count = z->n;
        return KS_OK;
    }
    entries_del(z, m, ml, score);
    z->count--;
    z->removed++;
    return push_delta(z, score, m, ml, -1);
}

/* Writes sorted items[0..n) (n > 0) as w's whole zset with enc and
 * expire: packed when they fit, else under a new version. */
static ks_status store_sorted(ks_write *w, const ks_zmember *items, size_t n, int enc,
                              int64_t expire)
{
    ks_ctx *c = w->c;
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += packed_item_size(items[i].ml);
    if (packed_fits(c, n, bytes)) return packed_put(w, items, n, enc, expire);
    uint64_t version = ks_new_version(c);
    for (size_t i = 0; i < n; i++)
        entries_put(c, w->db, version, items[i].m, items[i].ml, items[i].score);
    ks_zext e = {0}; /* height 0: blocks when a rank read asks (KS-Z5) */
    return big_put(w, version, n, &e, enc, expire);
}

/* Writes z's big zset again from its live members (read through the
 * batch, after the command's changes) and drops the old version with its
 * tombstones. Each rewrite follows more removals than the members it
 * copies, so it costs O(1) per removal over time. */
static ks_status rewrite(ks_zw *z)
{
    ks_zview v = {.m = {.type = KS_ZSET, .stored = KS_ZSET, .big = 1, .version = z->version},
                  .n = z->count,
                  .floor = z->floor,
                  .floorl = z->floorl};
    ks_zmvec all;
    ks_zmvec_init(&all);
    ks_status st = ks_zview_all(z->c, &v, &all);
    if (st == KS_OK && all.n != z->count) st = ks_corrupt(z->c, "zset count");
    if (st == KS_OK) st = store_sorted(z->w, all.v, all.n, z->enc, z->w->m.expire);
    ks_zmvec_free(&all);
    return st;
}

/* *n: the order keys at or above z's floor whose newest version is a
 * deletion, by one walk of them (and of the live ones). */
static ks_status crossable(ks_zw *z, uint64_t *n)
{
    ks_miter mi;
    ks_miter_open(&mi, z->c, NULL, z->w->db, z->version);
    for (ks_zorder_seek(&mi, z->floor, z->floorl); ks_zorder_valid(&mi); ks_miter_next(&mi)) {
    }
    *n = ks_miter_deleted(&mi);
    return ks_miter_close(&mi, z->c);
}

/* *yes: z's tombstones call for a rewrite (ENCODING.md "Tombstones"): all
 * of them (ZSCAN's member entries, COPY) past 16 per member, or those a
 * forward read can cross (KS-Z7: at most removed - below) past 3. The
 * second is counted before it is believed: removed counts tombstones
 * compaction has dropped since, and the moved members' old entries the
 * pops went past without reading. Counted at most half the bound, they
 * become removed - below instead, so the next count waits for as many
 * removals again, or for the zset to halve. */
static ks_status wants_rewrite(ks_zw *z, int *yes)
{
    uint64_t lim = KS_ZSET_REWRITE_RATIO * z->count + ks_zrewrite_slack, n;
    *yes = z->removed > KS_ZSET_REWRITE_BELOW_RATIO * z->count + ks_zrewrite_slack;
    if (*yes || z->removed - z->below <= lim) return KS_OK;
    ks_status st = crossable(z, &n);
    if (st != KS_OK) return st;
    if (n > lim / 2)
        *yes = 1;
    else
        z->below = z->removed - n;
    return KS_OK;
}

ks_status ks_zw_close(ks_zw *z)
{
    ks_write *w = z->w;
    ks_status st = KS_OK;
    int again = 0; /* rewrite */
    if (!z->changed) goto out;
    if (z->count == 0) {
        st = w->m.stored != KS_NONE ? ks_write_del(w) : KS_OK;
    } else if (!z->big) {
        if (!packed_fits(z->c, z->n, packed_bytes(z))) to_big(z);
    }
    if (z->count == 0 || st != KS_OK) goto out;
    if (z->big) st = wants_rewrite(z, &again);
    if (st != KS_OK) goto out;
    if (!z->big) {
        ks_zmvec_sort(z->items, z->n);
        st = packed_put(w, z->items, z->n, z->enc, w->m.expire);
    } else if (again) {
        z->rewritten = 1;
        st = rewrite(z);
    } else {
        st = ks_zrank_apply(z, 1);
        ks_zext e = {z->height, z->removed, z->logfirst, z->logend, z->below, z->floor, z->floorl};
        if (st == KS_OK) st = big_put(w, z->version, z->count, &e, z->enc, w->m.expire);
    }
out:
    ks_zw_abort(z);
    return st;
}

ks_status ks_zstore_items(ks_write *w, const ks_zmember *items, size_t n)
{
    ks_ctx *c = w->c;
    if (n == 0) return w->m.stored != KS_NONE ? ks_write_del(w) : KS_OK;
    size_t maxlen = 0;
    for (size_t i = 0; i < n; i++)
        if (items[i].ml > maxlen) maxlen = items[i].ml;
    int enc = !((long long)n <= c->ks->limits.zset_max_listpack_entries &&
                (long long)maxlen <= c->ks->limits.zset_max_listpack_value);
    ks_zmember *sorted = malloc(n * sizeof(*sorted));
    if (!sorted) return ks_oom(c);
    memcpy(sorted, items, n * sizeof(*sorted));
    for (size_t i = 0; !enc && i < n; i++) /* a listpack has no -0 (see listpack_score) */
        if (sorted[i].score == 0) sorted[i].score = 0.0;
    ks_zmvec_sort(sorted, n);
    ks_status st = store_sorted(w, sorted, n, enc, 0);
    free(sorted);
    return st;
}
