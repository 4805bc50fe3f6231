/*
 * ks_hash.c -- how a hash is stored: packed in its metadata value while
 * small, one engine key per field once big; the hash row of the type
 * table; reading whole hashes for the index layer (ks_hash_read,
 * ks_scan_hashes) and the index hook (KS1, through the row's fields()).
 *
 * On-disk format (ENCODING.md, "Hashes"):
 *   packed body: varint(n) then n times varint(fl) f varint(vl) v,
 *                fields unique, in insertion order
 *   big body:    version le64, count le64 (no ext)
 *   big field:   'd' db be64(version) field -> value
 * A hash turns big when it would exceed hash-max-listpack-entries fields
 * or KS_PACKED_MAX_BYTES of body; it never turns back (as Redis).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_type.h"

void ks_fvec_init(ks_fvec *fv)
{
    fv->v = fv->sbuf;
    fv->n = 0;
    fv->cap = sizeof(fv->sbuf) / sizeof(fv->sbuf[0]);
    fv->owned = NULL;
    fv->nowned = fv->capowned = 0;
    fv->chunk_at = NULL;
    fv->chunk_left = fv->chunk_next = 0;
}

int ks_fvec_push(ks_fvec *fv, const char *f, size_t fl, const char *v, size_t vl)
{
    if (fv->n == fv->cap) {
        size_t cap = fv->cap * 2;
        ks_field *nv =
            fv->v == fv->sbuf ? malloc(cap * sizeof(*nv)) : realloc(fv->v, cap * sizeof(*nv));
        if (!nv) return -1;
        if (fv->v == fv->sbuf) memcpy(nv, fv->sbuf, fv->n * sizeof(*nv));
        fv->v = nv;
        fv->cap = cap;
    }
    fv->v[fv->n++] = (ks_field){f, fl, v, vl};
    return 0;
}

static int fvec_own(ks_fvec *fv, char *p)
{
    if (fv->nowned == fv->capowned) {
        size_t cap = fv->capowned ? fv->capowned * 2 : 16;
        char **np = realloc(fv->owned, cap * sizeof(*np));
        if (!np) return -1;
        fv->owned = np;
        fv->capowned = cap;
    }
    fv->owned[fv->nowned++] = p;
    return 0;
}

/* Copies go into chunks that double from KS_FVEC_CHUNK0 to KS_FVEC_CHUNK:
 * a command copying one short member (SPOP, SRANDMEMBER) allocates a few
 * hundred bytes, not a large-class block (and its page faults), while a
 * big read still allocates once per 64 KB. */
#define KS_FVEC_CHUNK0 512
#define KS_FVEC_CHUNK (64 * 1024)

int ks_fvec_adopt(ks_fvec *fv, char *p)
{
    if (fvec_own(fv, p) != 0) return -1;
    /* keep the current chunk last: ks_fvec_push_copy writes into it */
    if (fv->nowned >= 2 && fv->chunk_left) {
        char *t = fv->owned[fv->nowned - 2];
        fv->owned[fv->nowned - 2] = p;
        fv->owned[fv->nowned - 1] = t;
    }
    return 0;
}

int ks_fvec_push_copy(ks_fvec *fv, const char *f, size_t fl, const char *v, size_t vl)
{
    size_t need = fl + vl;
    char *dst;
    if (need == 0) return ks_fvec_push(fv, "", 0, "", 0);
    if (need > KS_FVEC_CHUNK / 4) { /* a big pair gets its own block */
        if (!(dst = malloc(need)) || fvec_own(fv, dst) != 0) {
            free(dst);
            return -1;
        }
    } else {
        if (need > fv->chunk_left) {
            size_t size = fv->chunk_next ? fv->chunk_next : KS_FVEC_CHUNK0;
            while (size < need)
                size *= 2;
            char *chunk = malloc(size);
            if (!chunk || fvec_own(fv, chunk) != 0) {
                free(chunk);
                return -1;
            }
            fv->chunk_at = chunk;
            fv->chunk_left = size;
            fv->chunk_next = size < KS_FVEC_CHUNK ? size * 2 : KS_FVEC_CHUNK;
        }
        dst = fv->chunk_at;
        fv->chunk_at += need;
        fv->chunk_left -= need;
    }
    if (fl) memcpy(dst, f, fl);
    if (vl) memcpy(dst + fl, v, vl);
    return ks_fvec_push(fv, dst, fl, dst + fl, vl);
}

void ks_fvec_free(ks_fvec *fv)
{
    if (fv->v != fv->sbuf) free(fv->v);
    if (fv->owned) {
        for (size_t i = 0; i < fv->nowned; i++)
            free(fv->owned[i]);
        free(fv->owned);
    }
    ks_fvec_init(fv);
}

int ks_packed_parse(const char *p, size_t n, ks_fvec *fv)
{
    const char *end = p + n;
    uint64_t cnt, fl, vl;
    if (!(p = ks_get_varint(p, end, &cnt))) return -1;
    for (uint64_t i = 0; i < cnt; i++) {
        if (!(p = ks_get_varint(p, end, &fl)) || fl > (uint64_t)(end - p)) return -1;
        const char *f = p;
        p += fl;
        if (!(p = ks_get_varint(p, end, &vl)) || vl > (uint64_t)(end - p)) return -1;
        if (ks_fvec_push(fv, f, fl, p, vl) != 0) return -1;
        p += vl;
    }
    return p == end ? 0 : -1;
}

static ks_status corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "hash encoding");
}

ks_status ks_hash_load(ks_ctx *c, const eng_snapshot *snap, int db, const ks_meta *m, ks_fvec *fv)
{
    if (m->big) return ks_members_load(c, snap, db, m->version, fv);
    return ks_packed_parse(m->payload, m->plen, fv) == 0 ? KS_OK : corrupt(c);
}

/* ---- The hash row --------------------------------------------------------- */

static const char *hash_encoding(const ks_meta *m, const ks_limits *lim)
{
    (void)lim;
    return m->enc ? "hashtable" : "listpack";
}

static int hash_count(const ks_meta *m, uint64_t *n)
{
    if (m->big) return *n = m->count, 0;
    return ks_packed_count(m->payload, m->plen, n);
}

const ks_type_ops ks_hash_type = {
    .type = KS_HASH,
    .name = "hash",
    .encoding = hash_encoding,
    .count = hash_count,
    .check = ks_check_no_ext,
    .copy = ks_copy_generic,
    .drop = ks_drop_generic,
    .repair = ks_repair_generic,
    .filter = ks_filter_generic,
    .fields = ks_hash_load,
};

/* ---- Storing a whole hash -------------------------------------------------- */

static size_t packed_size(const ks_field *f, size_t n)
{
    size_t sz = ks_varint_len(n);
    for (size_t i = 0; i < n; i++)
        sz += ks_varint_len(f[i].fl) + f[i].fl + ks_varint_len(f[i].vl) + f[i].vl;
    return sz;
}

int ks_hash_fits_packed(ks_ctx *c, const ks_field *f, size_t n, size_t *size)
{
    if ((long long)n > c->ks->limits.hash_max_listpack_entries) return 0;
    *size = packed_size(f, n);
    return *size <= KS_PACKED_MAX_BYTES;
}

ks_status ks_hash_store(ks_write *w, const ks_field *f, size_t n, int64_t expire, int enc)
{
    ks_ctx *c = w->c;
    size_t size;
    if (n == 0) return w->m.stored != KS_NONE ? ks_write_del(w) : KS_OK;
    if ((long long)n > c->ks->limits.hash_max_listpack_entries) enc = 1;
    ks_value v = {KS_HASH, 0, enc, expire, NULL, 0, NULL, 0};
    w->new_f = f; /* the index hook's new content (KS1), packed or big */
    w->new_n = n;
    w->new_known = 1;
    if (ks_hash_fits_packed(c, f, n, &size)) {
        /* The fields point into engine buffers or arguments, never into
         * the scratch buffer, so building there is safe. */
        char *buf = ks_scratch(c->ks, KS_HDR_MAX + size);
        if (!buf) return ks_oom(c);
        char *p = ks_put_varint(buf + KS_HDR_MAX, n);
        for (size_t i = 0; i < n; i++) {
            p = ks_put_varint(p, f[i].fl);
            if (f[i].fl) memcpy(p, f[i].f, f[i].fl);
            p += f[i].fl;
            p = ks_put_varint(p, f[i].vl);
            if (f[i].vl) memcpy(p, f[i].v, f[i].vl);
            p += f[i].vl;
        }
        v.p1 = buf + KS_HDR_MAX;
        v.n1 = size;
        return ks_write_put(w, &v);
    }
    char body[KS_BIG_BODY_MAX];
    uint64_t version = ks_members_write_new(c, w->db, f, n);
    ks_big_body(&v, body, version, n, NULL, 0);
    return ks_write_put(w, &v);
}

/* ---- Whole-hash reads for the index layer ------------------------------- */

/* Packs fv into one allocation: the array, then the bytes it points to. */
static ks_field *pack_fields(const ks_field *f, size_t n)
{
    size_t bytes = n * sizeof(ks_field);
    for (size_t i = 0; i < n; i++)
        bytes += f[i].fl + f[i].vl;
    ks_field *out = malloc(bytes ? bytes : 1);
    if (!out) return NULL;
    char *p = (char *)(out + n);
    for (size_t i = 0; i < n; i++) {
        if (f[i].fl) memcpy(p, f[i].f, f[i].fl);
        out[i].f = p;
        out[i].fl = f[i].fl;
        p += f[i].fl;
        if (f[i].vl) memcpy(p, f[i].v, f[i].vl);
        out[i].v = p;
        out[i].vl = f[i].vl;
        p += f[i].vl;
    }
    return out;
}

ks_status ks_hash_read(ks_ctx *c, const eng_snapshot *snap, const char *key, size_t klen,
                       ks_field **fields, size_t *n)
{
    ks_meta m;
    ks_status st = ks_key_read(c, snap, c->db, key, klen, KS_HASH, &m);
    if (st != KS_OK) return st;
    ks_fvec fv;
    ks_fvec_init(&fv);
    st = ks_hash_load(c, snap, c->db, &m, &fv);
    if (st == KS_OK) {
        *fields = pack_fields(fv.v, fv.n);
        *n = fv.n;
        if (!*fields) st = ks_oom(c);
    }
    ks_fvec_free(&fv);
    ks_meta_free(&m);
    return st;
}

/* A varint whose first byte ends it (below 128: nearly every field name
 * and value length) without the general loop. */
static inline const char *get_len(const char *p, const char *end, uint64_t *v)
{
    if (p < end && !((unsigned char)*p & 128)) {
        *v = (unsigned char)*p;
        return p + 1;
    }
    return ks_get_varint(p, end, v);
}

/* ks_packed_parse for a freshly initialised fv, writing the pairs straight
 * into its array. A hash with more pairs than the array holds goes through
 * ks_packed_parse, which grows it. Returns 0, or -1 when corrupt. */
static int packed_parse_fast(const char *p, size_t n, ks_fvec *fv)
{
    const char *start = p, *end = p + n;
    uint64_t cnt, fl, vl;
    if (!(p = get_len(p, end, &cnt))) return -1;
    if (cnt > fv->cap) return ks_packed_parse(start, n, fv);
    ks_field *out = fv->v;
    for (uint64_t i = 0; i < cnt; i++) {
        if (!(p = get_len(p, end, &fl)) || fl > (uint64_t)(end - p)) return -1;
        out[i].f = p;
        out[i].fl = fl;
        p += fl;
        if (!(p = get_len(p, end, &vl)) || vl > (uint64_t)(end - p)) return -1;
        out[i].v = p;
        out[i].vl = vl;
        p += vl;
    }
    fv->n = cnt;
    return p == end ? 0 : -1;
}

ks_status ks_hash_fields(ks_ctx *c, const char *key, size_t klen, ks_fields_fn fn, void *arg)
{
    ks_meta m;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_HASH, &m);
    if (st != KS_OK) return st;
    /* Parsed (or loaded) in full before fn runs, so a corrupt value is an
     * error reply rather than a short one. */
    ks_fvec fv;
    ks_fvec_init(&fv);
    if (m.big)
        st = ks_hash_load(c, NULL, c->db, &m, &fv);
    else if (packed_parse_fast(m.payload, m.plen, &fv) != 0)
        st = corrupt(c);
    if (st == KS_OK) fn(arg, fv.v, fv.n);
    ks_fvec_free(&fv);
    ks_meta_free(&m);
    return st;
}

/* One key of ks_hash_fields_many: its record's value v (vl) as read. */
static ks_status fields_at(ks_ctx *c, size_t i, eng_status es, const char *v, size_t vl,
                           ks_fields_at_fn fn, void *arg)
{
    if (es == ENG_NOTFOUND) {
        fn(arg, i, KS_NOTFOUND, NULL, 0);
        return KS_OK;
    }
    if (es != ENG_OK) return ks_engine_err(c, es, "read");
    ks_meta m;
    if (ks_meta_view(&m, v, vl, c->now_ms) != 0) return ks_corrupt(c, "key metadata");
    if (m.type != KS_HASH) {
        fn(arg, i, m.type == KS_NONE ? KS_NOTFOUND : KS_ERR_WRONGTYPE, NULL, 0);
        return KS_OK;
    }
    ks_fvec fv;
    ks_fvec_init(&fv);
    ks_status st = KS_OK;
    if (m.big)
        st = ks_hash_load(c, NULL, c->db, &m, &fv);
    else if (packed_parse_fast(m.payload, m.plen, &fv) != 0)
        st = corrupt(c);
    if (st == KS_OK) fn(arg, i, KS_OK, fv.v, fv.n);
    ks_fvec_free(&fv);
    return st;
}

ks_status ks_hash_fields_many(ks_ctx *c, size_t n, const char *const *keys, const size_t *klens,
                              ks_fields_at_fn fn, void *arg)
{
    eng_status es = ks_emget_meta(c, NULL, c->db, n, keys, klens);
    if (es != ENG_OK) return ks_engine_err(c, es, "read");
    ks_status st = KS_OK;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        const char *v = NULL;
        size_t vl = 0;
        es = ks_emget_value(c, i, &v, &vl);
        st = fields_at(c, i, es, v, vl, fn, arg);
    }
    ks_emget_done(c);
    return st;
}

/* ks_hash_all streams the pairs ks_hash_fields hands over at once. */
typedef struct all_adapter {
    ks_count_fn count_fn;
    ks_field_fn fn;
    void *arg;
} all_adapter;

static void all_fields(void *arg, const ks_field *v, size_t n)
{
    all_adapter *a = arg;
    a->count_fn(a->arg, n);
    for (size_t i = 0; i < n; i++)
        a->fn(a->arg, v[i].f, v[i].fl, v[i].v, v[i].vl);
}

ks_status ks_hash_all(ks_ctx *c, const char *key, size_t klen, ks_count_fn count_fn, ks_field_fn fn,
                      void *arg)
{
    all_adapter a = {count_fn, fn, arg};
    return ks_hash_fields(c, key, klen, all_fields, &a);
}

void ks_fields_free(ks_field *fields, size_t n)
{
    (void)n;
    free(fields);
}

/* A chunk of hashes copied out of an iterator, so the visitor may write to
 * ctx->batch (which must not change while an iterator over it is live). */
typedef struct hchunk {
    char **keys;
    size_t *klens;
    ks_field **fields;
    size_t *nfields;
    size_t n;
} hchunk;

static void hchunk_free(hchunk *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->keys[i]);
        free(h->fields[i]);
    }
    free(h->keys);
    free(h->klens);
    free(h->fields);
    free(h->nfields);
}

static ks_status scan_collect(ks_ctx *c, const eng_snapshot *snap, const char *prefix, size_t plen,
                              const char *after, size_t alen, uint64_t max, hchunk *h)
{
    /* Start at the larger of prefix and the key right after `after`. */
    ks_ekey start;
    size_t common = alen < plen ? alen : plen;
    int cmp = after ? memcmp(after, prefix, common) : -1;
    int use_after = after && (cmp > 0 || (cmp == 0 && alen >= plen));
    ks_ekey_meta(&start, c->db, use_after ? after : prefix, use_after ? alen : plen);
    if (use_after) ks_ekey_append(&start, "", 1);
    size_t cap = max < 256 ? max : 256;
    h->keys = malloc(cap * sizeof(char *));
    h->klens = malloc(cap * sizeof(size_t));
    h->fields = malloc(cap * sizeof(ks_field *));
    h->nfields = malloc(cap * sizeof(size_t));
    ks_status st = (h->keys && h->klens && h->fields && h->nfields) ? KS_OK : ks_oom(c);
    eng_iter *it = eng_iter_new(c->ks->db, snap, ks_read_batch(c));
    if (c->skip_damaged) eng_iter_skip_damaged(it);
    for (eng_iter_seek(it, start.p, start.n); st == KS_OK && eng_iter_valid(it) && h->n < max;
         eng_iter_next(it)) {
        size_t kl;
        const char *k = eng_iter_key(it, &kl);
        if (kl < 2 || k[0] != KS_NS_META || k[1] != (char)c->db) break;
        if (kl - 2 < plen || memcmp(k + 2, prefix, plen) != 0) break;
        ks_meta m;
        size_t vl;
        const char *v = eng_iter_value(it, &vl);
        if (ks_meta_view(&m, v, vl, c->now_ms) != 0) {
            st = corrupt(c);
            break;
        }
        if (m.type != KS_HASH) continue;
        ks_fvec fv;
        ks_fvec_init(&fv);
        st = ks_hash_load(c, snap, c->db, &m, &fv);
        if (st == KS_OK) {
            if (h->n == cap) {
                cap *= 2;
                h->keys = realloc(h->keys, cap * sizeof(char *));
                h->klens = realloc(h->klens, cap * sizeof(size_t));
                h->fields = realloc(h->fields, cap * sizeof(ks_field *));
                h->nfields = realloc(h->nfields, cap * sizeof(size_t));
                if (!h->keys || !h->klens || !h->fields || !h->nfields) abort();
            }
            h->keys[h->n] = malloc(kl - 2 + 1);
            if (!h->keys[h->n]) abort();
            memcpy(h->keys[h->n], k + 2, kl - 2);
            h->klens[h->n] = kl - 2;
            h->fields[h->n] = pack_fields(fv.v, fv.n);
            h->nfields[h->n] = fv.n;
            h->n++;
        }
        ks_fvec_free(&fv);
    }
    if (st == KS_OK && eng_iter_status(it) != ENG_OK)
        st = ks_engine_err(c, eng_iter_status(it), "scan");
    c->damaged += eng_iter_damaged(it, 0, NULL, 0);
    eng_iter_free(it);
    ks_ekey_free(&start);
    return st;
}

uint64_t ks_scan_hashes(ks_ctx *c, const eng_snapshot *snap, const char *prefix, size_t plen,
                        const char *after, size_t alen, uint64_t max, ks_hash_visit_fn fn,
                        void *vctx, char **last, size_t *last_len)
{
    hchunk h = {0};
    uint64_t visited = 0;
    *last = NULL;
    *last_len = 0;
    if (max == 0) return 0;
    if (scan_collect(c, snap, prefix, plen, after, alen, max, &h) == KS_OK) {
        for (size_t i = 0; i < h.n; i++) {
            visited++;
            int stop = fn(vctx, h.keys[i], h.klens[i], h.fields[i], h.nfields[i]);
            if (stop || i + 1 == h.n) {
                *last = h.keys[i];
                *last_len = h.klens[i];
                h.keys[i] = NULL;
                break;
            }
        }
    }
    hchunk_free(&h);
    return visited;
}
