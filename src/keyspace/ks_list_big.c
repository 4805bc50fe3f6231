/*
 * ks_list_big.c -- big lists: items at contiguous positions from the head,
 * grouped 32 positions to a chunk, one engine value per chunk, items over
 * KS_LIST_INLINE bytes out of line in a slot key of their own. This file
 * holds the operations; one chunk's encoding, gets and puts are in
 * ks_list_chunk.c (ks_list_chunk.h).
 *
 * On-disk format (ENCODING.md, "Lists"):
 *   'd' db be64(version) be64(c)        -> [varint(3 + 2*s)] entries: from
 *                                          position 32c+s (header) or, without
 *                                          one, of positions 32c..32c+31
 *                                          inside [head, head+count)
 *   'd' db be64(version) be64(c) u8(s)  -> the out-of-line item at 32c+s
 *   entries: varint(2*len) bytes (inline) | varint(1) (in its slot)
 * KS-L1 (ENCODING.md): exactly the chunks of the list's positions, each
 * with one entry per position (a chunk with a header may hold more at
 * either end: popped ones), a slot per live out-of-line entry.
 *
 * Algorithms. The ends of the list are read and rewritten a chunk at a
 * time: a push reads the chunk at that end (one get) and writes it back
 * (one put; none read when the end is on a chunk boundary). A pop reads
 * the chunk and leaves it as it is: the record's new head and count say
 * which of its entries are still live, the header says where its entries
 * start (only a chunk without one, written before headers existed, is
 * rewritten once with one, or deleted when the pop empties it). A chunk
 * rewritten with its items at the same positions keeps their slots as they
 * are (litem.stored/at), so only moved or new out-of-line items are
 * written. LINSERT and LREM move the shorter side of the change: a
 * rewrite (ljob) reads the chunks of that side in rounds (a few MB of
 * copies, then the iterator is closed) and writes them back at their new
 * positions through one output chunk (lout); reads go ahead of the writes
 * in the direction of the move, so no round ever reads a chunk already
 * rewritten. Every chunk a rewrite writes it has read first (the ranges
 * are aligned to chunks), which is how it knows which old slots to delete.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_list.h"
#include "keyspace/ks_list_chunk.h"

#define ROUND_CHUNKS 64
#define ROUND_BYTES (4u << 20)

/* ---- Reading chunks through an iterator --------------------------------- */

typedef struct rbuf {
    char *p;
    size_t n, cap;
} rbuf;

static int rbuf_add(rbuf *b, const char *v, size_t n, size_t *off)
{
    if (b->cap - b->n < n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->n < n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) return -1;
        b->p = np;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, v, n);
    *off = b->n;
    b->n += n;
    return 0;
}

/* Reads chunk ci at mi (positioned on its key) and the slots after it,
 * appending copies of the values to b (offsets in ch->off; chunk_fix turns
 * them into pointers once b stops moving), and leaves mi past them. Every
 * item comes out loaded; the out-of-line ones are stored at their position. */
static ks_status read_chunk(ks_ctx *c, ks_miter *mi, const lview *lv, uint64_t ci, rbuf *b,
                            lchunk *ch)
{
    ch->raw = NULL;
    ch->c = ci;
    ch->n = lbig_chunk_span(lv, ci, &ch->first);
    size_t sn, vn, base;
    const char *s = ks_miter_valid(mi) ? ks_miter_suffix(mi, &sn) : NULL;
    if (!s || sn != 8 || ks_get_be64(s) != ci) return ks_corrupt(c, "list chunk");
    const char *v = ks_miter_value(mi, &vn);
    if (rbuf_add(b, v, vn, &base) != 0) return ks_oom(c);
    if (lbig_chunk_decode(ch, b->p + base, vn) != 0) return ks_corrupt(c, "list chunk");
    for (size_t i = 0; i < ch->n; i++)
        if (!ch->it[i].stored) ch->off[i] = (size_t)(ch->it[i].p - b->p);
    ks_miter_next(mi);
    for (size_t i = 0; i < ch->n; i++) {
        if (!ch->it[i].stored) continue;
        s = ks_miter_valid(mi) ? ks_miter_suffix(mi, &sn) : NULL;
        if (!s || sn != 9 || ks_get_be64(s) != ci ||
            (unsigned char)s[8] != ((ch->first + i) & (CHUNK_N - 1)))
            return ks_corrupt(c, "list item");
        v = ks_miter_value(mi, &vn);
        if (rbuf_add(b, v, vn, &ch->off[i]) != 0) return ks_oom(c);
        ch->it[i].n = vn;
        ks_miter_next(mi);
    }
    return KS_OK;
}

static void chunk_fix(lchunk *ch, const char *base)
{
    for (size_t i = 0; i < ch->n; i++)
        ch->it[i].p = base + ch->off[i];
}

/* lbig_walk over few chunks: each chunk read with a get, each out-of-line
 * item in the range with another. A get finds a chunk's newest value
 * directly, where an iterator steps over every older one still in the
 * memtable and the young tables: a chunk at a pushed end has been
 * rewritten up to 32 times, and stepping over those versions was most of
 * LRANGE 0 99's cost. */
static ks_status walk_by_gets(ks_ctx *c, int db, const lview *lv, uint64_t p0, uint64_t p1, int rev,
                              lwalk_fn fn, void *arg)
{
    uint64_t c0 = lbig_chunk_of(p0), c1 = lbig_chunk_of(p1);
    ks_status st = KS_OK;
    lchunk ch;
    ks_field f[CHUNK_N];
    char *slot[CHUNK_N];
    int stop = 0;
    for (uint64_t j = 0; j <= c1 - c0 && !stop && st == KS_OK; j++) {
        uint64_t ci = rev ? c1 - j : c0 + j;
        if ((st = lbig_chunk_get(c, db, lv, ci, &ch)) != KS_OK) break;
        uint64_t lo = ch.first < p0 ? p0 : ch.first, hi = ch.first + ch.n - 1;
        if (hi > p1) hi = p1;
        size_t n = (size_t)(hi - lo + 1), q = 0, ns = 0;
        for (; q < n && st == KS_OK; q++) {
            uint64_t pos = rev ? hi - q : lo + q;
            const litem *it = &ch.it[pos - ch.first];
            f[q] = (ks_field){it->p, it->n, NULL, 0};
            if (it->stored &&
                (st = lbig_slot_get(c, db, lv->version, pos, &slot[ns], &f[q].fl)) == KS_OK)
                f[q].f = slot[ns++];
        }
        if (st == KS_OK) stop = fn(arg, (rev ? hi : lo) - lv->head, f, n);
        while (ns > 0)
            eng_free(slot[--ns]);
        lbig_chunk_free(&ch);
    }
    return st;
}

/* Ranges of at most this many chunks are read with gets (walk_by_gets). */
#define WALK_GETS_CHUNKS 8

ks_status lbig_walk(ks_ctx *c, int db, const lview *lv, uint64_t from, uint64_t k, int rev,
                    lwalk_fn fn, void *arg)
{
    if (!k) return KS_OK;
    uint64_t p0 = lv->head + from, p1 = p0 + k - 1;
    uint64_t c0 = lbig_chunk_of(p0), c1 = lbig_chunk_of(p1);
    if (c1 - c0 < WALK_GETS_CHUNKS) return walk_by_gets(c, db, lv, p0, p1, rev, fn, arg);
    ks_miter mi;
    ks_miter_open(&mi, c, NULL, db, lv->version);
    ks_status st = KS_OK;
    rbuf b = {0};
    lchunk ch;
    ks_field f[CHUNK_N];
    int stop = 0;
    for (uint64_t j = 0; j <= c1 - c0 && !stop && st == KS_OK; j++) {
        uint64_t ci = rev ? c1 - j : c0 + j;
        char s[8];
        size_t sn, vn;
        lbig_chunk_sfx(s, ci);
        if (rev || j == 0) ks_miter_seek(&mi, s, 8);
        const char *sf = ks_miter_valid(&mi) ? ks_miter_suffix(&mi, &sn) : NULL;
        if (!sf || sn != 8 || ks_get_be64(sf) != ci) {
            st = ks_corrupt(c, "list chunk");
            break;
        }
        /* Items straight from the iterator's buffer, unless the chunk has
         * slots to step to: then copies. */
        const char *v = ks_miter_value(&mi, &vn);
        ch.c = ci;
        ch.n = lbig_chunk_span(lv, ci, &ch.first);
        if (lbig_chunk_decode(&ch, v, vn) != 0) {
            st = ks_corrupt(c, "list chunk");
            break;
        }
        if (ch.mask) {
            b.n = 0;
            if ((st = read_chunk(c, &mi, lv, ci, &b, &ch)) != KS_OK) break;
            chunk_fix(&ch, b.p);
        }
        uint64_t lo = ch.first < p0 ? p0 : ch.first, hi = ch.first + ch.n - 1;
        if (hi > p1) hi = p1;
        size_t n = (size_t)(hi - lo + 1);
        for (size_t q = 0; q < n; q++) {
            const litem *it = &ch.it[(rev ? hi - q : lo + q) - ch.first];
            f[q] = (ks_field){it->p, it->n, NULL, 0};
        }
        stop = fn(arg, (rev ? hi : lo) - lv->head, f, n);
        if (!ch.mask) ks_miter_next(&mi);
    }
    ks_status cst = ks_miter_close(&mi, c);
    free(b.p);
    return st != KS_OK ? st : cst;
}

/* ---- Writing chunks in position order ------------------------------------ */

/* The output of a rewrite or push: items come one position at a time
 * (ascending or descending), gather in the chunk they belong to, and that
 * chunk is written when the next item belongs to another one. The values
 * that will be written are copied (the caller's may go first). */
typedef struct lout {
    ks_ctx *c;
    int db;
    uint64_t version;
    int has;
    uint64_t cur;
    unsigned lo, hi;
    litem it[CHUNK_N];
    size_t off[CHUNK_N];
    int copied[CHUNK_N];
    rbuf b;
    /* The slots each chunk had before: masks[|c - mbase|] (mdesc: c <=
     * mbase), 0 for chunks outside it (new ones). */
    const uint64_t *masks;
    uint64_t mbase;
    size_t mn;
    int mdesc;
} lout;

static void out_init(lout *w, lst *l)
{
    memset(w, 0, sizeof(*w));
    w->c = l->w.c;
    w->db = l->w.db;
    w->version = l->v.version;
}

static void out_flush(lout *w)
{
    if (!w->has) return;
    litem items[CHUNK_N];
    for (unsigned s = w->lo; s <= w->hi; s++) {
        items[s - w->lo] = w->it[s];
        if (w->copied[s]) items[s - w->lo].p = w->b.p + w->off[s];
    }
    uint64_t d = w->mdesc ? w->mbase - w->cur : w->cur - w->mbase;
    uint64_t old = w->masks && d < w->mn ? w->masks[d] : 0;
    lbig_chunk_put(w->c, w->db, w->version, w->cur, (w->cur << CHUNK_SHIFT) + w->lo, items,
                   w->hi - w->lo + 1, old);
    w->has = 0;
    w->b.n = 0;
}

static ks_status out_emit(lout *w, uint64_t pos, const litem *it)
{
    uint64_t ci = lbig_chunk_of(pos);
    unsigned s = (unsigned)(pos & (CHUNK_N - 1));
    if (w->has && ci != w->cur) out_flush(w);
    if (!w->has) {
        w->has = 1;
        w->cur = ci;
        w->lo = w->hi = s;
    } else if (s < w->lo) {
        w->lo = s;
    } else if (s > w->hi) {
        w->hi = s;
    }
    w->it[s] = *it;
    w->copied[s] = 0;
    if (it->p && !(it->stored && it->at == pos)) {
        if (rbuf_add(&w->b, it->p, it->n, &w->off[s]) != 0) return ks_oom(w->c);
        w->copied[s] = 1;
    }
    return KS_OK;
}

static void out_free(lout *w)
{
    free(w->b.p);
    w->b.p = NULL;
}

/* ---- Rewrites ---------------------------------------------------------------- */

/* Input items [a, e) (aligned to chunks, see lbig_align_down/up) read forward
 * and written from position out upward, or (rev) read backward and written
 * from out downward; the indexes gone (in reading order) are dropped, and
 * the new item (has_ins) goes in before index ins when reading forward, or
 * after ins when reading backward (before the first index < ins). */
typedef struct ljob {
    int rev;
    uint64_t a, e, out;
    const uint64_t *gone;
    size_t ngone;
    int has_ins;
    uint64_t ins;
    const char *iv;
    size_t ivl;
} ljob;

typedef struct jstate {
    const ljob *j;
    lout w;
    uint64_t pos;
    size_t gi;
    int done;
} jstate;

static ks_status job_item(jstate *js, uint64_t idx, const litem *it)
{
    const ljob *j = js->j;
    ks_status st = KS_OK;
    if (!js->done && (j->rev ? idx < j->ins : idx >= j->ins)) {
        litem nw = {j->iv, j->ivl, 0, 0};
        st = out_emit(&js->w, js->pos, &nw);
        js->pos = j->rev ? js->pos - 1 : js->pos + 1;
        js->done = 1;
    }
    if (st != KS_OK) return st;
    if (js->gi < j->ngone && j->gone[js->gi] == idx) {
        js->gi++;
        return KS_OK;
    }
    st = out_emit(&js->w, js->pos, it);
    js->pos = j->rev ? js->pos - 1 : js->pos + 1;
    return st;
}

/* One round: up to ROUND_CHUNKS chunks (or ROUND_BYTES of copies) read
 * with the iterator, which is closed before their items are written out. */
static ks_status job_round(lst *l, jstate *js, uint64_t cfirst, uint64_t nchunks, uint64_t *next,
                           uint64_t *masks, lchunk *round)
{
    const ljob *j = js->j;
    const lview *lv = &l->v;
    ks_ctx *c = l->w.c;
    rbuf b = {0};
    size_t r = 0;
    ks_status st = KS_OK;
    ks_miter mi;
    ks_miter_open(&mi, c, NULL, l->w.db, lv->version);
    for (; *next + r < nchunks && r < ROUND_CHUNKS && b.n < ROUND_BYTES; r++) {
        uint64_t ci = j->rev ? cfirst - (*next + r) : cfirst + *next + r;
        char s[8];
        lbig_chunk_sfx(s, ci);
        if (r == 0 || j->rev) ks_miter_seek(&mi, s, 8);
        if ((st = read_chunk(c, &mi, lv, ci, &b, &round[r])) != KS_OK) break;
        masks[*next + r] = round[r].mask;
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
    uint64_t plo = lv->head + j->a, phi = lv->head + j->e - 1;
    for (size_t q = 0; q < r && st == KS_OK; q++) {
        lchunk *ch = &round[q];
        chunk_fix(ch, b.p);
        uint64_t lo = ch->first < plo ? plo : ch->first, hi = ch->first + ch->n - 1;
        if (hi > phi) hi = phi;
        for (uint64_t k = 0; k <= hi - lo && st == KS_OK; k++) {
            uint64_t pos = j->rev ? hi - k : lo + k;
            st = job_item(js, pos - lv->head, &ch->it[pos - ch->first]);
        }
    }
    *next += r;
    free(b.p);
    return st;
}

static ks_status rewrite(lst *l, const ljob *j)
{
    const lview *lv = &l->v;
    jstate js = {j, {0}, j->out, 0, !j->has_ins};
    out_init(&js.w, l);
    uint64_t nchunks = 0, cfirst = 0, next = 0;
    if (j->e > j->a) {
        uint64_t ca = lbig_chunk_of(lv->head + j->a), ce = lbig_chunk_of(lv->head + j->e - 1);
        nchunks = ce - ca + 1;
        cfirst = j->rev ? ce : ca;
    }
    uint64_t *masks = calloc(nchunks ? nchunks : 1, sizeof(*masks));
    lchunk *round = malloc(ROUND_CHUNKS * sizeof(*round));
    ks_status st = masks && round ? KS_OK : ks_oom(l->w.c);
    js.w.masks = masks;
    js.w.mbase = cfirst;
    js.w.mn = nchunks;
    js.w.mdesc = j->rev;
    while (st == KS_OK && next < nchunks)
        st = job_round(l, &js, cfirst, nchunks, &next, masks, round);
    if (st == KS_OK && !js.done) {
        litem nw = {j->iv, j->ivl, 0, 0};
        st = out_emit(&js.w, js.pos, &nw);
    }
    if (st == KS_OK) out_flush(&js.w);
    out_free(&js.w);
    free(masks);
    free(round);
    return st;
}

/* ---- The operations --------------------------------------------------------- */

ks_status lbig_create(lst *l, const ks_field *items, size_t n)
{
    lview *lv = &l->v;
    lv->big = 1;
    lv->version = ks_new_version(l->w.c); /* KS-E2 */
    lv->head = KS_LIST_HEAD0;
    lv->n = n;
    lout w;
    out_init(&w, l);
    ks_status st = KS_OK;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        litem it = {items[i].f, items[i].fl, 0, 0};
        st = out_emit(&w, KS_LIST_HEAD0 + i, &it);
    }
    if (st == KS_OK) out_flush(&w);
    out_free(&w);
    return st;
}

ks_status lbig_push(lst *l, int where, const ks_field *items, size_t n)
{
    ks_ctx *c = l->w.c;
    lview *lv = &l->v;
    int db = l->w.db, head = where == KS_LIST_HEAD;
    uint64_t h = lv->head, tail = h + lv->n, ver = lv->version;
    if (head ? h < n : UINT64_MAX - tail < n) return ks_err_msg(c, "ERR list is full");
    /* The chunk at that end, when the new items share it with old ones:
     * its old entries are copied as they are, before or after the new. */
    lchunk ch = {0};
    int partial = ((head ? h : tail) & (CHUNK_N - 1)) != 0;
    ks_status st =
        partial ? lbig_chunk_get_as(c, db, lv, lbig_chunk_of(head ? h : tail - 1), &ch, 0) : KS_OK;
    if (st != KS_OK) return st;
    char buf[CHUNK_BYTES], *p = buf + 1; /* buf[0]: the header */
    uint64_t p0 = head ? h - n : tail, first = p0;
    if (!head && partial) {
        p = lbig_old_entries(p, &ch, 0, ch.n);
        first = ch.first;
    }
    for (size_t q = 0; q < n; q++) {
        uint64_t pos = p0 + q;
        const ks_field *f = &items[head ? n - 1 - q : q];
        p = lbig_new_entry(c, db, ver, p, pos, f->f, f->fl);
        if ((pos & (CHUNK_N - 1)) != CHUNK_N - 1 && q + 1 < n) continue;
        if (head && partial && q + 1 == n) p = lbig_old_entries(p, &ch, 0, ch.n);
        buf[0] = lbig_chunk_hdr(first);
        lbig_chunk_raw_put(c, db, ver, lbig_chunk_of(pos), buf, (size_t)(p - buf));
        p = buf + 1;
        first = pos + 1;
    }
    lbig_chunk_free(&ch);
    if (head) lv->head = h - n;
    lv->n += n;
    return KS_OK;
}

/* Hands item it (of a chunk read with lbig_chunk_get) to out: a pointer into
 * the chunk's buffer, which out then keeps (*keep), or into the buffer of
 * its slot, which out takes. */
static ks_status take_item(ks_ctx *c, int db, uint64_t version, const litem *it, ks_fvec *out,
                           int *keep)
{
    if (!it->stored) {
        *keep = 1;
        return ks_fvec_push(out, it->p, it->n, NULL, 0) == 0 ? KS_OK : ks_oom(c);
    }
    char *v;
    size_t vn;
    ks_status st = lbig_slot_get(c, db, version, it->at, &v, &vn);
    if (st != KS_OK) return st;
    if (ks_fvec_adopt(out, v) != 0) {
        eng_free(v);
        return ks_oom(c);
    }
    return ks_fvec_push(out, v, vn, NULL, 0) == 0 ? KS_OK : ks_oom(c);
}

/* lbig_pop of one item that leaves the list non-empty, from a chunk with
 * a header: only that entry is found, and nothing is written but the
 * chunk's delete when it empties and the item's slot delete. *done 0: the
 * chunk has no header, nothing was done (lbig_pop's loop rewrites it). */
static ks_status pop_one(lst *l, int head, ks_fvec *out, int *done)
{
    ks_ctx *c = l->w.c;
    lview *lv = &l->v;
    int db = l->w.db;
    uint64_t pos = head ? lv->head : lv->head + lv->n - 1, ci = lbig_chunk_of(pos), first;
    size_t live = lbig_chunk_span(lv, ci, &first);
    char s[9], *raw;
    size_t vl;
    litem it;
    *done = 0;
    lbig_chunk_sfx(s, ci);
    eng_status es = ks_member_get(c, NULL, db, lv->version, s, 8, &raw, &vl);
    if (es == ENG_NOTFOUND) return ks_corrupt(c, "list chunk");
    if (es != ENG_OK) return ks_engine_err(c, es, "list read");
    if (lbig_chunk_entry_at(ci, raw, vl, pos, &it) != 0) {
        eng_free(raw);
        return KS_OK;
    }
    int keep = 0;
    ks_status st = take_item(c, db, lv->version, &it, out, &keep);
    if (keep && st == KS_OK && ks_fvec_adopt(out, raw) == 0)
        raw = NULL;
    else if (keep && st == KS_OK)
        st = ks_oom(c);
    if (raw) eng_free(raw);
    if (st != KS_OK) return st;
    if (live == 1) lbig_chunk_raw_put(c, db, lv->version, ci, NULL, 0);
    if (it.stored) {
        lbig_slot_sfx(s, pos);
        ks_member_del(c, db, lv->version, s, 9);
    }
    if (head) lv->head++;
    lv->n--;
    *done = 1;
    return KS_OK;
}

ks_status lbig_pop(lst *l, int where, uint64_t k, ks_fvec *out)
{
    ks_ctx *c = l->w.c;
    lview *lv = &l->v;
    int db = l->w.db, head = where == KS_LIST_HEAD;
    int all = k == lv->n; /* the key's delete drops the members */
    if (k == 1 && !all) {
        int done;
        ks_status st = pop_one(l, head, out, &done);
        if (st != KS_OK || done) return st;
    }
    uint64_t left = k, ci = lbig_chunk_of(head ? lv->head : lv->head + lv->n - 1), c0 = ci;
    uint64_t emptied = 0;
    ks_status st = KS_OK;
    while (left && st == KS_OK) {
        lchunk ch;
        if ((st = lbig_chunk_get(c, db, lv, ci, &ch)) != KS_OK) break;
        size_t t = left < ch.n ? (size_t)left : ch.n;
        int keep = 0; /* items point into ch.raw: out keeps it */
        for (size_t i = 0; i < t && st == KS_OK; i++)
            st = take_item(c, db, lv->version, &ch.it[head ? i : ch.n - 1 - i], out, &keep);
        if (st == KS_OK && !all && t < ch.n) { /* the rest stays where it is */
            size_t i0 = head ? t : 0, i1 = head ? ch.n : ch.n - t;
            /* With a header the chunk stays as it is: the record's new
             * head or count makes the popped entries dead. */
            if (!ch.hdr) lbig_chunk_put_part(c, db, lv->version, &ch, i0, i1);
            head ? lbig_slots_del(c, db, lv->version, &ch, 0, t)
                 : lbig_slots_del(c, db, lv->version, &ch, ch.n - t, ch.n);
        } else if (st == KS_OK && !all && emptied++ == 0 && left == t) {
            /* one chunk emptied: point deletes, kinder to readers than a range */
            lbig_chunk_raw_put(c, db, lv->version, ci, NULL, 0);
            lbig_slots_del(c, db, lv->version, &ch, 0, ch.n);
            emptied = 0;
        }
        if (keep && ks_fvec_adopt(out, ch.raw) == 0)
            ch.raw = NULL;
        else if (keep && st == KS_OK)
            st = ks_oom(c);
        lbig_chunk_free(&ch);
        left -= t;
        ci = head ? ci + 1 : ci - 1;
    }
    if (st == KS_OK && !all && emptied)
        lbig_chunks_del(c, db, lv->version, head ? c0 : c0 - emptied + 1,
                        head ? c0 + emptied - 1 : c0);
    if (st == KS_OK) {
        if (head) lv->head += k;
        lv->n -= k;
    }
    return st;
}

ks_status lbig_get(ks_ctx *c, int db, const lview *lv, uint64_t i, ks_val *out)
{
    lchunk ch;
    uint64_t pos = lv->head + i;
    ks_status st = lbig_chunk_get(c, db, lv, lbig_chunk_of(pos), &ch);
    if (st != KS_OK) return st;
    const litem *it = &ch.it[pos - ch.first];
    if (!it->stored) {
        *out = (ks_val){ch.raw, it->p, it->n}; /* out owns the chunk's buffer */
        return KS_OK;
    }
    char *v;
    size_t vn;
    st = lbig_slot_get(c, db, lv->version, pos, &v, &vn);
    if (st == KS_OK) *out = (ks_val){v, v, vn};
    lbig_chunk_free(&ch);
    return st;
}

ks_status lbig_set(lst *l, uint64_t i, const char *v, size_t vl)
{
    lchunk ch;
    lview *lv = &l->v;
    ks_ctx *c = l->w.c;
    uint64_t pos = lv->head + i;
    ks_status st = lbig_chunk_get(c, l->w.db, lv, lbig_chunk_of(pos), &ch);
    if (st != KS_OK) return st;
    size_t at = (size_t)(pos - ch.first);
    char buf[CHUNK_BYTES], *p = buf;
    *p++ = lbig_chunk_hdr(ch.first);
    p = lbig_old_entries(p, &ch, 0, at);
    p = lbig_new_entry(c, l->w.db, lv->version, p, pos, v, vl);
    p = lbig_old_entries(p, &ch, at + 1, ch.n);
    if (ch.it[at].stored && vl <= KS_LIST_INLINE)
        lbig_slots_del(c, l->w.db, lv->version, &ch, at, at + 1);
    lbig_chunk_raw_put(c, l->w.db, lv->version, ch.c, buf, (size_t)(p - buf));
    lbig_chunk_free(&ch);
    return KS_OK;
}

/* Rewrites chunk ci keeping only its positions in [lo, hi]. */
static ks_status cut_chunk(lst *l, uint64_t ci, uint64_t lo, uint64_t hi)
{
    lchunk ch;
    ks_status st = lbig_chunk_get(l->w.c, l->w.db, &l->v, ci, &ch);
    if (st != KS_OK) return st;
    size_t i0 = ch.first < lo ? (size_t)(lo - ch.first) : 0;
    size_t i1 = ch.first + ch.n - 1 > hi ? (size_t)(hi - ch.first + 1) : ch.n;
    if (i0 != 0 || i1 != ch.n) {
        uint64_t ver = l->v.version;
        lbig_chunk_put_part(l->w.c, l->w.db, ver, &ch, i0, i1);
        lbig_slots_del(l->w.c, l->w.db, ver, &ch, 0, i0);
        lbig_slots_del(l->w.c, l->w.db, ver, &ch, i1, ch.n);
    }
    lbig_chunk_free(&ch);
    return KS_OK;
}

ks_status lbig_trim(lst *l, uint64_t from, uint64_t k)
{
    lview *lv = &l->v;
    ks_ctx *c = l->w.c;
    uint64_t lo = lv->head + from, hi = lo + k - 1;
    uint64_t ca = lbig_chunk_of(lv->head), cl = lbig_chunk_of(lo), cr = lbig_chunk_of(hi),
             cz = lbig_chunk_of(lv->head + lv->n - 1);
    ks_status st = cut_chunk(l, cl, lo, hi);
    if (st == KS_OK && cr != cl) st = cut_chunk(l, cr, lo, hi);
    if (st != KS_OK) return st;
    if (cl > ca) lbig_chunks_del(c, l->w.db, lv->version, ca, cl - 1);
    if (cz > cr) lbig_chunks_del(c, l->w.db, lv->version, cr + 1, cz);
    lv->head = lo;
    lv->n = k;
    return KS_OK;
}

ks_status lbig_insert(lst *l, uint64_t j, const char *v, size_t vl)
{
    lview *lv = &l->v;
    uint64_t h = lv->head, n = lv->n;
    int tail_room = UINT64_MAX - h - n > 0;
    int left = (j < n - j && h > 0) || !tail_room;
    if (left && h == 0) return ks_err_msg(l->w.c, "ERR list is full");
    ljob job = {0};
    job.has_ins = 1;
    job.ins = j;
    job.iv = v;
    job.ivl = vl;
    if (left) { /* items [0, j) move one towards the head */
        uint64_t first;
        size_t cn = lbig_chunk_span(lv, lbig_chunk_of(h - 1 + j), &first);
        job.e = cn ? first + cn - h : 0; /* the end of the chunk the new item lands in */
        job.out = h - 1;
    } else { /* items [j, n) move one towards the tail */
        job.rev = 1;
        job.a = j < n ? lbig_align_down(lv, j)
                : (n && lbig_chunk_of(h + n) == lbig_chunk_of(h + n - 1))
                    ? lbig_align_down(lv, n - 1)
                    : n;
        job.e = n;
        job.out = h + n;
    }
    ks_status st = rewrite(l, &job);
    if (st != KS_OK) return st;
    if (left) lv->head = h - 1;
    lv->n = n + 1;
    return KS_OK;
}

ks_status lbig_remove(lst *l, const uint64_t *gone, size_t k)
{
    lview *lv = &l->v;
    ks_ctx *c = l->w.c;
    uint64_t h = lv->head, n = lv->n, lo = gone[0], hi = gone[k - 1];
    ljob job = {0};
    ks_status st;
    if (n - lo <= hi + 1) { /* the tail side moves towards the head */
        job.a = lbig_align_down(lv, lo);
        job.e = n;
        job.out = h + job.a;
        job.gone = gone;
        job.ngone = k;
        st = rewrite(l, &job);
        if (st == KS_OK)
            lbig_chunks_del(c, l->w.db, lv->version, lbig_chunk_of(h + n - k - 1) + 1,
                            lbig_chunk_of(h + n - 1));
        if (st == KS_OK) lv->n = n - k;
        return st;
    }
    uint64_t *desc = malloc(k * sizeof(*desc)); /* the head side moves towards the tail */
    if (!desc) return ks_oom(c);
    for (size_t i = 0; i < k; i++)
        desc[i] = gone[k - 1 - i];
    job.rev = 1;
    job.e = lbig_align_up(lv, hi);
    job.out = h + job.e - 1;
    job.gone = desc;
    job.ngone = k;
    st = rewrite(l, &job);
    free(desc);
    if (st != KS_OK) return st;
    if (lbig_chunk_of(h + k) > lbig_chunk_of(h))
        lbig_chunks_del(c, l->w.db, lv->version, lbig_chunk_of(h), lbig_chunk_of(h + k) - 1);
    lv->head = h + k;
    lv->n = n - k;
    return KS_OK;
}
