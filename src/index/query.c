/*
 * query.c -- IDX.RANGE: turns EQ values and MIN/MAX bounds into one range
 * [lo, hi) of entry keys, walks it once through one snapshot, and reads the
 * hashes of the hits through the same view.
 *
 * Bounds are values, whatever the field's direction: on a DESC field MIN
 * becomes the upper end of the key range and MAX the lower one. With E the
 * entry prefix, the EQ fields and the encoded bound value, and succ(E) the
 * first key after every key starting with E (Invariant K1 makes "starts
 * with E" mean "has that value"):
 *     ascending:  MIN v -> lo = E, (v -> lo = succ(E); MAX v -> hi = succ(E), (v -> hi = E
 *     DESC:       MIN v -> hi = succ(E), (v -> hi = E; MAX v -> lo = E, (v -> lo = succ(E)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/catalog.h"
#include "index/index.h"

typedef struct range {
    idx_buf lo, hi;
    int empty;
    /* The entry prefix and the encodings of the first nfixed EQ fields
     * (fewer than the index has): every hit starts with them, so hit
     * decoding starts after them (idx_entry_hash_key_from). */
    idx_buf fixed;
    size_t nfixed;
    /* Q1: where the one-byte suffix of a hit whose key the tuple implies
     * sits, when every field after the fixed ones is NUMERIC (8 bytes
     * each) in an implied-key index; 0: no such fixed place. */
    size_t suffix_at;
    idx_buf work, bound; /* plan_range's and apply_bound's scratch */
} range;

/* The range buffers outlive a query (one command thread, and no query runs
 * inside another): a scan then allocates none of its six. Buffers grown
 * past RANGE_KEEP bytes by a huge value are freed instead of kept. */
enum { RANGE_KEEP = 4096 };
static __thread range scratch;

static range *range_get(void)
{
    range *r = &scratch;
    r->lo.len = r->hi.len = r->fixed.len = r->work.len = r->bound.len = 0;
    r->empty = 0;
    r->nfixed = r->suffix_at = 0;
    return r;
}

static void range_put(range *r)
{
    idx_buf *bufs[] = {&r->lo, &r->hi, &r->fixed, &r->work, &r->bound};
    for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
        if (bufs[i]->cap > RANGE_KEEP) idx_buf_free(bufs[i]);
}

/* Looks up a ready index of ctx->db, or fails with the error IDX.RANGE
 * replies. */
static ks_status find_ready(ks_ctx *ctx, idx_str name, idx_def **out)
{
    idx_def *d = idx_catalog_find(ctx->db, name.p, name.n);
    if (!d) return idx_fail(ctx, "ERR no such index '%s'", idx_printable(name.p, name.n, 0));
    if (d->ft)
        return idx_fail(ctx, "ERR index '%s' is an FT index: use FT.SEARCH",
                        idx_printable(name.p, name.n, 0));
    if (d->building)
        return idx_fail(ctx,
                        "ERR index '%s' is still building (%llu hashes indexed so far); "
                        "retry when IDX.INFO says ready",
                        idx_printable(name.p, name.n, 0), (unsigned long long)d->scanned);
    *out = d;
    return KS_OK;
}

/* Appends one value of field fd, given as a query argument. */
static ks_status put_value(ks_ctx *ctx, const idx_field *fd, const char *v, size_t n, idx_buf *b)
{
    if (!fd->numeric) {
        idx_key_put_tag(b, v, n, fd->desc);
        return KS_OK;
    }
    double x;
    if (idx_parse_num(v, n, &x) != 0)
        return idx_fail(ctx, "ERR value '%s' for NUMERIC field '%s' is not a number",
                        idx_printable(v, n, 0), idx_printable(fd->name, fd->len, 1));
    idx_key_put_num(b, x, fd->desc);
    return KS_OK;
}

/* Applies one bound (is_min: MIN, else MAX) of field fd to r. */
static ks_status apply_bound(ks_ctx *ctx, const idx_field *fd, idx_str raw, int is_min,
                             const idx_buf *prefix, range *r)
{
    const char *v = raw.p;
    size_t n = raw.n;
    int excl = 0;
    if (!fd->numeric) {
        if (n == 1 && (v[0] == '-' || v[0] == '+')) {
            /* "-" below everything, "+" above: no limit, or nothing at all */
            if ((v[0] == '-') != is_min) r->empty = 1;
            return KS_OK;
        }
        if (n && (v[0] == '(' || v[0] == '[')) {
            excl = v[0] == '(';
            v++, n--;
        }
    } else if (n && v[0] == '(') {
        excl = 1;
        v++, n--;
    }
    idx_buf *e = &r->bound;
    e->len = 0;
    idx_buf_append(e, prefix->data, prefix->len);
    ks_status st = KS_OK;
    if (fd->numeric) {
        double x;
        if (idx_parse_num(v, n, &x) != 0) {
            st = idx_fail(ctx, "ERR min or max is not a float");
            goto out;
        }
        idx_key_put_num(e, x, fd->desc);
    } else {
        idx_key_put_tag(e, v, n, fd->desc);
    }
    /* lower end of the key range when the bound is the "smaller" side */
    int sets_lo = is_min != fd->desc;
    int use_succ = sets_lo ? excl : !excl;
    if (use_succ) idx_key_prefix_successor(e);
    idx_buf *dst = sets_lo ? &r->lo : &r->hi;
    dst->len = 0;
    idx_buf_append(dst, e->data, e->len);
out:
    return st;
}

static ks_status plan_range(ks_ctx *ctx, const idx_def *d, const idx_query *q, range *r)
{
    idx_buf *p = &r->work;
    ks_status st = KS_OK;
    if (q->neq > d->nfields) {
        st = idx_fail(ctx, "ERR EQ has %zu values but index '%s' has %zu fields", q->neq,
                      idx_printable(d->name, d->nlen, 0), d->nfields);
        goto out;
    }
    if ((q->has_min || q->has_max) && q->neq == d->nfields) {
        st = idx_fail(ctx,
                      "ERR MIN/MAX bound the field after the EQ fields, and index '%s' "
                      "has no field after %zu EQ values",
                      idx_printable(d->name, d->nlen, 0), q->neq);
        goto out;
    }
    idx_key_entry_prefix(p, d->id);
    for (size_t i = 0; i < q->neq && st == KS_OK; i++) {
        if (i == d->nfields - 1) idx_buf_append(&r->fixed, p->data, p->len);
        st = put_value(ctx, &d->fields[i], q->eq[i].p, q->eq[i].n, p);
    }
    if (st != KS_OK) goto out;
    r->nfixed = q->neq < d->nfields ? q->neq : d->nfields - 1;
    if (q->neq < d->nfields) idx_buf_append(&r->fixed, p->data, p->len);
    idx_buf_append(&r->lo, p->data, p->len);
    idx_buf_append(&r->hi, p->data, p->len);
    idx_key_prefix_successor(&r->hi);
    if (q->has_min) st = apply_bound(ctx, &d->fields[q->neq], q->min, 1, p, r);
    if (st == KS_OK && q->has_max) st = apply_bound(ctx, &d->fields[q->neq], q->max, 0, p, r);
out:
    return st;
}

static int key_cmp(const char *a, size_t al, const idx_buf *b)
{
    return idx_key_cmp(a, al, b->data, b->len);
}

/* key_cmp(k, kl, b) >= 0, the walk's test of every entry against the end
 * of its range. That end is mostly an entry prefix's successor of at most
 * 8 bytes and the keys longer: one big-endian word compare, not a memcmp
 * call. */
static inline int at_or_after(const char *k, size_t kl, const idx_buf *b)
{
    size_t bl = b->len;
    if (bl && bl <= 8 && kl >= 8 && b->cap >= 8) {
        uint64_t x, y, mask = ~0ULL << (8 * (8 - bl));
        memcpy(&x, k, 8);
        memcpy(&y, b->data, 8); /* the bytes past len are masked off */
        x = __builtin_bswap64(x) & mask;
        y = __builtin_bswap64(y) & mask;
        return x != y ? x > y : 1; /* equal: b is a prefix of k */
    }
    return key_cmp(k, kl, b) >= 0;
}

/* Room at the end of out's key buffer for one more hit's key of up to kl
 * bytes (and its NUL), and a slot for the hit; hit_commit makes it one.
 * Keys go into one buffer (no allocation per hit); h->key holds the offset
 * until fix_keys turns it into a pointer, because the buffer may move
 * while it grows. */
static void hit_grow(idx_result *out, size_t kl)
{
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 16;
        out->hits = realloc(out->hits, out->cap * sizeof(*out->hits));
        if (!out->hits) abort();
    }
    if (out->keys_len + kl + 1 > out->keys_cap) {
        size_t cap = out->keys_cap ? out->keys_cap : 1024;
        while (cap < out->keys_len + kl + 1)
            cap *= 2;
        out->keys = realloc(out->keys, cap);
        if (!out->keys) abort();
        out->keys_cap = cap;
    }
}

/* Inline: every hit asks, and a LIMIT'ed walk has reserved the room. */
static inline char *hit_room(idx_result *out, size_t kl)
{
    if (out->n == out->cap || out->keys_len + kl + 1 > out->keys_cap) hit_grow(out, kl);
    return out->keys + out->keys_len;
}

/* The key hit_room gave room for, kl bytes now written there, is a hit. */
static void hit_commit(idx_result *out, size_t kl)
{
    idx_hit *h = &out->hits[out->n++];
    out->keys[out->keys_len + kl] = 0;
    h->key = (char *)(uintptr_t)out->keys_len;
    h->klen = kl;
    h->f = NULL;
    h->nf = 0;
    out->keys_len += kl + 1;
}

static void add_hit(idx_result *out, const char *k, size_t kl)
{
    memcpy(hit_room(out, kl), k, kl);
    hit_commit(out, kl);
}

/* Invariant Q1: in an implied-key index an entry key whose fields after
 * the nfixed fixed ones are all NUMERIC has its hash-key suffix at one
 * offset, suffix_at, the fields' fixed 8 bytes each after the fixed part
 * (FORMAT.md, "Hash key"); an entry of exactly suffix_at + 1 bytes ending
 * in the implied marker names the key the last field implies. Such a hit's
 * key is written straight into the result, with no field walk and no copy
 * through a scratch buffer; every other entry takes the general decoding
 * (idx_entry_hash_key_from), which agrees with this one on these. */
static void plan_suffix(const idx_def *d, range *r)
{
    r->suffix_at = 0;
    if (d->unique || !d->implied_key || r->nfixed >= d->nfields) return;
    for (size_t i = r->nfixed; i < d->nfields; i++)
        if (!d->fields[i].numeric) return;
    r->suffix_at = r->fixed.len + 8 * (d->nfields - r->nfixed);
}

/* Writes the hash key of entry (k, kl; value v, vl) into the room for the
 * next hit of out and returns its length, or -1 when the entry is
 * malformed. */
static long decode_hit(const idx_def *d, const range *r, const char *k, size_t kl, const char *v,
                       size_t vl, idx_result *out)
{
    size_t at = r->suffix_at, hkl;
    const char *hk;
    if (at && kl == at + 1 && (unsigned char)k[at] == IDX_HK_IMPLIED) { /* Q1 */
        const idx_field *last = &d->fields[d->nfields - 1];
        char *dst = hit_room(out, d->plen + IDX_IMPLIED_NUM_MAX);
        size_t n = idx_key_implied_num(dst, d->prefix, d->plen, k + at - 8, last->desc);
        return n ? (long)n : -1; /* no implied key: as idx_key_get_hash_key */
    }
    if (idx_entry_hash_key_from(d, k, kl, v, vl, r->fixed.len, r->nfixed, &hk, &hkl) != 0)
        return -1;
    memcpy(hit_room(out, hkl), hk, hkl);
    return (long)hkl;
}

/* A LIMIT'ed walk knows how many hits it may add: room for them up front
 * (up to a bound: a huge COUNT must not allocate for hits that may never
 * come) saves add_hit's doublings. Keys of about a dozen bytes are the
 * common case, and a key written in place (Q1) asks for the prefix and 21
 * bytes of room; longer ones still grow the buffer as needed. */
enum { HITS_RESERVE_MAX = 1024, KEY_BYTES_GUESS = 32 };

static void reserve_hits(idx_result *out, long long count)
{
    if (count <= 0 || out->cap) return;
    size_t n = count < HITS_RESERVE_MAX ? (size_t)count : HITS_RESERVE_MAX;
    out->hits = malloc(n * sizeof(*out->hits));
    out->keys = malloc(n * KEY_BYTES_GUESS);
    if (!out->hits || !out->keys) abort();
    out->cap = n;
    out->keys_cap = n * KEY_BYTES_GUESS;
}

static void fix_keys(idx_result *out)
{
    for (size_t i = 0; i < out->n; i++)
        out->hits[i].key = out->keys + (uintptr_t)out->hits[i].key;
}

/* Moves the walk one entry on; returns whether it is valid, with its key
 * and value. Forward (every IDX.RANGE without REV) is one call into the
 * engine a hit instead of four. */
static inline int step(eng_iter *it, int rev, const char **k, size_t *kl, const char **v,
                       size_t *vl)
{
    if (!rev) return eng_iter_next_entry(it, k, kl, v, vl);
    eng_iter_prev(it);
    if (!eng_iter_valid(it)) return 0;
    *k = eng_iter_key(it, kl);
    *v = eng_iter_value(it, vl);
    return 1;
}

/* Walks [lo, hi) forwards or backwards, collecting hits. */
static ks_status walk(ks_ctx *ctx, const idx_def *d, const idx_query *q, const range *r,
                      eng_iter *it, idx_result *out)
{
    long long skip = q->offset;
    reserve_hits(out, q->count);
    if (q->rev) {
        eng_iter_seek_prev(it, r->hi.data, r->hi.len);
        if (eng_iter_valid(it)) {
            size_t kl;
            const char *k = eng_iter_key(it, &kl);
            if (key_cmp(k, kl, &r->hi) >= 0) eng_iter_prev(it);
        }
    } else {
        eng_iter_seek(it, r->lo.data, r->lo.len);
    }
    size_t kl = 0, vl = 0;
    const char *k = NULL, *v = NULL;
    int ok = eng_iter_valid(it);
    if (ok) {
        k = eng_iter_key(it, &kl);
        v = eng_iter_value(it, &vl);
    }
    while (ok) {
        if (q->rev ? !at_or_after(k, kl, &r->lo) : at_or_after(k, kl, &r->hi)) break;
        int64_t exp = vl ? idx_entry_expire(v, vl) : 0; /* empty: a bare value, no TTL */
        /* [lo, hi) lies within the keys starting with the fixed prefix; the
         * check keeps a decoding of bytes it did not skip impossible (the
         * entry prefix alone idx_entry_hash_key never checked either) */
        size_t fl = r->fixed.len;
        int fixed = !r->nfixed || (kl >= fl && memcmp(k, r->fixed.data, fl) == 0);
        long hkl;
        if (exp >= 0 && (exp == 0 || !idx_expired(exp, ctx->now_ms)) && fixed &&
            (hkl = decode_hit(d, r, k, kl, v, vl, out)) >= 0) {
            if (skip > 0) {
                skip--; /* the key written stays uncommitted */
            } else {
                hit_commit(out, (size_t)hkl);
                if (q->count >= 0 && (long long)out->n >= q->count) break;
            }
        }
        ok = step(it, q->rev, &k, &kl, &v, &vl);
    }
    if (eng_iter_status(it) != ENG_OK)
        return idx_fail(ctx, "ERR index read failed: %s", eng_last_error());
    return KS_OK;
}

/* A UNIQUE index with every field fixed by EQ holds at most one entry at
 * exactly r->lo: a point read (bloom filters, no merging iterator). */
static ks_status point(ks_ctx *ctx, const idx_def *d, const idx_query *q, const range *r,
                       const eng_snapshot *snap, eng_batch *b, idx_result *out)
{
    char *v = NULL;
    size_t vl = 0, hkl;
    const char *hk;
    eng_status es = b ? eng_get_batch(idx_g.eng, snap, b, r->lo.data, r->lo.len, &v, &vl)
                      : eng_get(idx_g.eng, snap, r->lo.data, r->lo.len, &v, &vl);
    if (es != ENG_OK && es != ENG_NOTFOUND)
        return idx_fail(ctx, "ERR index read failed: %s", eng_last_error());
    int64_t exp = es == ENG_OK ? idx_entry_expire(v, vl) : -1;
    if (exp >= 0 && !idx_expired(exp, ctx->now_ms) && q->offset == 0 &&
        idx_entry_hash_key(d, r->lo.data, r->lo.len, v, vl, &hk, &hkl) == 0)
        add_hit(out, hk, hkl);
    eng_free(v);
    return KS_OK;
}

ks_status idx_range(ks_ctx *ctx, const idx_query *q, idx_result *out)
{
    idx_def *d = NULL;
    range *r = range_get();
    memset(out, 0, sizeof(*out));
    ks_status st = find_ready(ctx, q->name, &d);
    if (st == KS_OK) st = plan_range(ctx, d, q, r);
    if (st == KS_OK) plan_suffix(d, r);
    if (st != KS_OK || r->empty || q->offset < 0 || q->count == 0 ||
        key_cmp(r->lo.data, r->lo.len, &r->hi) >= 0)
        goto out;
    /* One snapshot for the entries and the hashes. Within one command no
     * other writer runs (one command thread), so when the batch holds
     * pending writes (inside EXEC) the hashes are read through it over the
     * latest data, which is the same view. */
    eng_batch *b = eng_batch_count(ctx->batch) ? ctx->batch : NULL;
    const eng_snapshot *snap = eng_snapshot_new(idx_g.eng);
    if (d->unique && q->neq == d->nfields) {
        st = point(ctx, d, q, r, snap, b, out);
    } else {
        eng_iter *it = eng_iter_new(idx_g.eng, snap, b);
        st = walk(ctx, d, q, r, it, out);
        eng_iter_free(it);
    }
    fix_keys(out);
    for (size_t i = 0; st == KS_OK && q->reply != IDX_REPLY_KEYS && i < out->n; i++) {
        idx_hit *h = &out->hits[i];
        ks_status rs = ks_hash_read(ctx, b ? NULL : snap, h->key, h->klen, &h->f, &h->nf);
        if (rs != KS_OK) {
            h->f = NULL;
            h->nf = 0;
            if (rs != KS_NOTFOUND && rs != KS_ERR_WRONGTYPE) st = rs;
        }
    }
    eng_snapshot_release(idx_g.eng, snap);
    if (st != KS_OK) idx_result_free(out);
out:
    range_put(r);
    return st;
}

void idx_result_free(idx_result *r)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->hits[i].f) ks_fields_free(r->hits[i].f, r->hits[i].nf);
    free(r->hits);
    free(r->keys);
    memset(r, 0, sizeof(*r));
}
