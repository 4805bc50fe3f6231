/*
 * ks_str_chunk.c -- chunked strings and the read-modify-write of strings
 * (ks_str_open / ks_str_open_ranged / ks_str_write) that the bitmap and
 * HyperLogLog commands and SETRANGE use.
 *
 * On-disk format (ENCODING.md, "Strings"): a string longer than
 * KS_STR_BIG_MIN (4096) bytes written by one of those commands is a big
 * record (type string, BIG, ENC: raw) with body version:le64 length:le64
 * and an empty ext, and members
 *   'd' db be64(version) be64(c) -> the bytes [1024c, 1024c + n) of the
 *                                   string, 1 <= n <= 1024
 * the bytes after n in the chunk, and every byte of a chunk without a key,
 * being zero. KS-S1: a chunk key exists only for 1024c < length, and its
 * value ends inside the string (1024c + n <= length).
 *
 * Algorithms. A ranged open reads nothing of a chunked value; each
 * ks_str_read / ks_str_update loads the chunks it touches (one engine get
 * each, kept for the command in a sorted array), and ks_str_write puts the
 * chunks it changed (trailing zeros cut; a chunk all zero is deleted) and
 * the record (the length). SETBIT on a 1 MB bitmap costs one 1 KiB chunk,
 * not 1 MB, and a SETBIT far out creates one chunk, not a zeroed string.
 * A packed string that an update makes longer than 4096 bytes turns
 * chunked under a new version (KS-E2; its zero chunks are not written);
 * the other string writers (SET, APPEND, INCR ...) write it packed again,
 * dropping the chunks (KS-E4). Readers of the whole value (GET, DUMP,
 * BITCOUNT ...) get it assembled by one iterator walk (ks_strc_load).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_str_chunk.h"

typedef struct strc_chunk {
    uint64_t c;
    int dirty;
    char b[KS_STR_CHUNK];
} strc_chunk;

struct ks_strc {
    uint64_t version, len;
    int fresh;      /* a new version: none of its chunks exists yet */
    strc_chunk *ch; /* sorted by c */
    size_t n, cap;
};

static void chunk_sfx(char *s, uint64_t c)
{
    ks_put_be64(s, c);
}

/* KS-S1 for chunk c's value of vl bytes in a string of len bytes. */
static int chunk_ok(uint64_t c, size_t vl, uint64_t len)
{
    return vl >= 1 && vl <= KS_STR_CHUNK && c < len / KS_STR_CHUNK + 1 &&
           c * KS_STR_CHUNK + vl <= len;
}

ks_status ks_strc_load(ks_ctx *c, const eng_snapshot *snap, int db, const ks_meta *m, char **out)
{
    char *buf = calloc(m->count ? m->count : 1, 1);
    if (!buf) return ks_oom(c);
    ks_miter mi;
    ks_status st = KS_OK;
    ks_miter_open(&mi, c, snap, db, m->version);
    for (ks_miter_first(&mi); ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *s = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        uint64_t ci = sn == 8 ? ks_get_be64(s) : 0;
        if (sn != 8 || !chunk_ok(ci, vn, m->count)) {
            st = ks_corrupt(c, "string chunk");
            break;
        }
        memcpy(buf + ci * KS_STR_CHUNK, v, vn);
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
    if (st != KS_OK) {
        free(buf);
        return st;
    }
    *out = buf;
    return KS_OK;
}

/* Chunk ci of big string (db, version, len) into b (KS_STR_CHUNK bytes,
 * zero-filled past its value). */
static ks_status chunk_read(ks_ctx *c, const eng_snapshot *snap, int db, uint64_t version,
                            uint64_t len, uint64_t ci, char *b)
{
    char s[8], *v;
    size_t vl;
    memset(b, 0, KS_STR_CHUNK);
    if (ci * KS_STR_CHUNK >= len) return KS_OK;
    chunk_sfx(s, ci);
    eng_status es = ks_member_get(c, snap, db, version, s, 8, &v, &vl);
    if (es == ENG_NOTFOUND) return KS_OK; /* all zero */
    if (es != ENG_OK) return ks_engine_err(c, es, "string read");
    int ok = chunk_ok(ci, vl, len);
    if (ok) memcpy(b, v, vl);
    eng_free(v);
    return ok ? KS_OK : ks_corrupt(c, "string chunk");
}

ks_status ks_strc_read(ks_ctx *c, const eng_snapshot *snap, int db, const ks_meta *m, uint64_t off,
                       char *buf, size_t n)
{
    char b[KS_STR_CHUNK];
    memset(buf, 0, n);
    for (uint64_t at = off; at < off + n && at < m->count;) {
        uint64_t ci = at / KS_STR_CHUNK, in = at % KS_STR_CHUNK;
        size_t k = KS_STR_CHUNK - in < off + n - at ? KS_STR_CHUNK - in : off + n - at;
        ks_status st = chunk_read(c, snap, db, m->version, m->count, ci, b);
        if (st != KS_OK) return st;
        memcpy(buf + (at - off), b + in, k);
        at += k;
    }
    return KS_OK;
}

ks_status ks_get_part(ks_ctx *c, const char *key, size_t klen, uint64_t off, char *buf, size_t n,
                      uint64_t *len)
{
    ks_meta m;
    memset(buf, 0, n);
    *len = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_STRING, &m);
    if (st != KS_OK) return st;
    if (m.big) {
        *len = m.count;
        st = ks_strc_read(c, NULL, c->db, &m, off, buf, n);
    } else {
        *len = m.plen;
        if (off < m.plen) memcpy(buf, m.payload + off, m.plen - off < n ? m.plen - off : n);
    }
    ks_meta_free(&m);
    return st;
}

int ks_str_check(ks_ctx *c, const char *key, size_t klen, const char **why)
{
    ks_meta m;
    *why = NULL;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_STRING, &m);
    if (st == KS_NOTFOUND || (st == KS_OK && !m.big)) {
        if (st == KS_OK) ks_meta_free(&m);
        return 0;
    }
    if (st != KS_OK) {
        *why = "the record does not read as a string";
        return -1;
    }
    ks_miter mi;
    ks_miter_open(&mi, c, NULL, c->db, m.version);
    for (ks_miter_first(&mi); ks_miter_valid(&mi) && !*why; ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *sfx = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn != 8)
            *why = "a member that is not a chunk";
        else if (!chunk_ok(ks_get_be64(sfx), vn, m.count))
            *why = "a chunk past the end or of a bad length";
        else if (v[vn - 1] == 0)
            *why = "a chunk ending in a zero byte";
    }
    if (ks_miter_close(&mi, c) != KS_OK && !*why) *why = "the chunks do not read";
    if (!m.enc && !*why) *why = "a chunked string without ENC (raw)";
    ks_meta_free(&m);
    return *why ? -1 : 0;
}

/* ---- The chunks a ranged write holds --------------------------------------- */

/* *out: the chunk ci of s, loaded (or added as zeros) when not held yet. */
static ks_status strc_chunk_at(ks_str *s, uint64_t ci, strc_chunk **out)
{
    struct ks_strc *b = s->big;
    size_t lo = 0, hi = b->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->ch[mid].c < ci)
            lo = mid + 1;
        else
            hi = mid;
    }
    *out = &b->ch[lo];
    if (lo < b->n && b->ch[lo].c == ci) return KS_OK;
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 4;
        strc_chunk *p = realloc(b->ch, ncap * sizeof(*p));
        if (!p) return ks_oom(s->w->c);
        b->ch = p;
        b->cap = ncap;
    }
    memmove(&b->ch[lo + 1], &b->ch[lo], (b->n - lo) * sizeof(*b->ch));
    b->n++;
    strc_chunk *ch = *out = &b->ch[lo];
    ch->c = ci;
    ch->dirty = 0;
    if (b->fresh) {
        memset(ch->b, 0, KS_STR_CHUNK);
        return KS_OK;
    }
    ks_status st = chunk_read(s->w->c, NULL, s->w->db, b->version, b->len, ci, ch->b);
    if (st != KS_OK) {
        b->n--;
        memmove(&b->ch[lo], &b->ch[lo + 1], (b->n - lo) * sizeof(*b->ch));
    }
    return st;
}

static struct ks_strc *strc_new(uint64_t version, uint64_t len, int fresh)
{
    struct ks_strc *b = calloc(1, sizeof(*b));
    if (!b) return NULL;
    b->version = version;
    b->len = len;
    b->fresh = fresh;
    return b;
}

static void strc_free(struct ks_strc *b)
{
    if (!b) return;
    free(b->ch);
    free(b);
}

/* Turns whole s into ranged chunks under a new version (KS-E2): s->v's
 * non-zero chunks become dirty ones; keep: s->v stays as it is (callers
 * of ks_str_write may still read it), else it is freed. */
static ks_status strc_convert(ks_str *s, int keep)
{
    ks_ctx *c = s->w->c;
    struct ks_strc *b = strc_new(ks_new_version(c), s->v.n, 1);
    if (!b) return ks_oom(c);
    s->big = b;
    static const char zero[KS_STR_CHUNK];
    for (uint64_t at = 0; at < s->v.n; at += KS_STR_CHUNK) {
        size_t k = s->v.n - at < KS_STR_CHUNK ? (size_t)(s->v.n - at) : KS_STR_CHUNK;
        if (memcmp(s->v.p + at, zero, k) == 0) continue;
        strc_chunk *ch;
        ks_status st = strc_chunk_at(s, at / KS_STR_CHUNK, &ch);
        if (st != KS_OK) return st;
        memcpy(ch->b, s->v.p + at, k);
        ch->dirty = 1;
    }
    if (!keep) ks_strbuf_free(&s->v);
    return KS_OK;
}

/* Puts s's dirty chunks and the big record. */
static ks_status strc_write(ks_str *s)
{
    struct ks_strc *b = s->big;
    ks_write *w = s->w;
    char sfx[8];
    for (size_t i = 0; i < b->n; i++) {
        strc_chunk *ch = &b->ch[i];
        if (!ch->dirty || ch->c * KS_STR_CHUNK >= b->len) continue;
        size_t vl = b->len - ch->c * KS_STR_CHUNK;
        if (vl > KS_STR_CHUNK) vl = KS_STR_CHUNK;
        while (vl && ch->b[vl - 1] == 0)
            vl--;
        chunk_sfx(sfx, ch->c);
        if (vl)
            ks_member_put(w->c, w->db, b->version, sfx, 8, ch->b, vl);
        else if (!b->fresh)
            ks_member_del(w->c, w->db, b->version, sfx, 8);
        ch->dirty = 0;
    }
    char body[KS_BIG_BODY_MAX];
    ks_value v = {KS_STRING, 1, 1, w->m.type == KS_STRING ? w->m.expire : 0, NULL, 0, NULL, 0};
    ks_big_body(&v, body, b->version, b->len, NULL, 0);
    return ks_write_put(w, &v);
}

/* ---- Read-modify-write ------------------------------------------------------- */

int ks_strbuf_reserve(ks_strbuf *b, size_t cap)
{
    if (cap <= b->cap) return 0;
    size_t ncap = b->cap + b->cap / 2 > cap ? b->cap + b->cap / 2 : cap;
    char *p = realloc(b->p, ncap ? ncap : 1);
    if (!p) return -1;
    b->p = p;
    b->cap = ncap;
    return 0;
}

int ks_strbuf_resize(ks_strbuf *b, size_t n)
{
    if (n > b->n) {
        /* Exactly n: a SETBIT far out must not reserve half again as much. */
        if (n > b->cap) {
            char *p = realloc(b->p, n);
            if (!p) return -1;
            b->p = p;
            b->cap = n;
        }
        memset(b->p + b->n, 0, n - b->n);
    }
    b->n = n;
    return 0;
}

void ks_strbuf_free(ks_strbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

static ks_status str_open(ks_ctx *c, const char *key, size_t klen, ks_str *s, int ranged)
{
    memset(s, 0, sizeof(*s));
    s->ranged = ranged;
    /* The write stays open until ks_str_close: ks_str_write needs the old
     * record, and reading it twice would cost a second engine get. */
    s->w = malloc(sizeof(*s->w));
    if (!s->w) return ks_oom(c);
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STRING, s->w);
    if (st != KS_OK) {
        free(s->w);
        s->w = NULL;
        return st;
    }
    const ks_meta *m = &s->w->m;
    if (m->type != KS_STRING) return KS_OK;
    s->exists = 1;
    if (m->big && ranged) {
        s->big = strc_new(m->version, m->count, 0);
        return s->big ? KS_OK : ks_oom(c);
    }
    if (m->big) {
        char *all;
        if ((st = ks_strc_load(c, NULL, c->db, m, &all)) != KS_OK) return st;
        s->v.p = all;
        s->v.n = m->count;
        s->v.cap = m->count ? m->count : 1;
        return KS_OK;
    }
    /* A private copy with a little room: PFADD grows a sparse HLL a few
     * bytes at a time. */
    if (ks_strbuf_reserve(&s->v, m->plen + 16) < 0) return ks_oom(c);
    if (m->plen) memcpy(s->v.p, m->payload, m->plen);
    s->v.n = m->plen;
    return KS_OK;
}

ks_status ks_str_open(ks_ctx *c, const char *key, size_t klen, ks_str *s)
{
    return str_open(c, key, klen, s, 0);
}

ks_status ks_str_open_ranged(ks_ctx *c, const char *key, size_t klen, ks_str *s)
{
    return str_open(c, key, klen, s, 1);
}

uint64_t ks_str_len(const ks_str *s)
{
    return s->big ? s->big->len : s->v.n;
}

ks_status ks_str_read(ks_str *s, uint64_t off, void *buf, size_t n)
{
    char *out = buf;
    uint64_t len = ks_str_len(s);
    memset(out, 0, n);
    if (!s->big) {
        if (off < len) memcpy(out, s->v.p + off, len - off < n ? (size_t)(len - off) : n);
        return KS_OK;
    }
    for (uint64_t at = off; at < off + n && at < len;) {
        uint64_t in = at % KS_STR_CHUNK;
        size_t k = KS_STR_CHUNK - in < off + n - at ? KS_STR_CHUNK - in : (size_t)(off + n - at);
        strc_chunk *ch;
        ks_status st = strc_chunk_at(s, at / KS_STR_CHUNK, &ch);
        if (st != KS_OK) return st;
        memcpy(out + (at - off), ch->b + in, k);
        at += k;
    }
    return KS_OK;
}

ks_status ks_str_update(ks_str *s, uint64_t off, const void *buf, size_t n)
{
    const char *in = buf;
    ks_ctx *c = s->w->c;
    if (!s->big && off + n > KS_STR_BIG_MIN) {
        ks_status st = strc_convert(s, 0);
        if (st != KS_OK) return st;
    }
    if (!s->big) {
        if (off + n > s->v.n && ks_strbuf_resize(&s->v, (size_t)(off + n)) < 0) return ks_oom(c);
        if (n) memcpy(s->v.p + off, in, n);
        return KS_OK;
    }
    for (uint64_t at = off; at < off + n;) {
        uint64_t o = at % KS_STR_CHUNK;
        size_t k = KS_STR_CHUNK - o < off + n - at ? KS_STR_CHUNK - o : (size_t)(off + n - at);
        strc_chunk *ch;
        ks_status st = strc_chunk_at(s, at / KS_STR_CHUNK, &ch);
        if (st != KS_OK) return st;
        if (s->big->len < at + k) s->big->len = at + k; /* grown bytes are zero already */
        memcpy(ch->b + o, in + (at - off), k);
        ch->dirty = 1;
        at += k;
    }
    return KS_OK;
}

ks_status ks_str_write(ks_str *s)
{
    const ks_meta *m = &s->w->m;
    ks_status st = KS_OK;
    if (!s->big && s->v.n > KS_STR_BIG_MIN) st = strc_convert(s, 1);
    if (st != KS_OK) return st;
    if (s->big) {
        st = strc_write(s);
    } else { /* changed in place, as Redis's SETBIT / PFADD do: OBJECT ENCODING raw */
        ks_value nv = {KS_STRING, 0,      1,    m->type == KS_STRING ? m->expire : 0,
                       s->v.p,    s->v.n, NULL, 0};
        st = ks_write_put(s->w, &nv);
    }
    if (st == KS_OK) s->exists = 1;
    return st;
}

void ks_str_close(ks_str *s)
{
    if (s->w) ks_write_end(s->w);
    free(s->w);
    ks_strbuf_free(&s->v);
    strc_free(s->big);
    s->big = NULL;
    s->w = NULL;
    s->exists = 0;
}
