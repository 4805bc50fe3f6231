/*
 * ks_list_chunk.c -- one chunk of a big list: which positions and slots
 * it covers, its value's header and entries (decode, encode, put in
 * part), getting it and its out-of-line slots from the engine, and
 * deleting chunks and slots. The format is described at the top of
 * ks_list_big.c (KS-L1). Apart from ks_list_big.c, whose operations
 * (push, pop, set, trim, insert, remove, walks) are built on these,
 * because the encoding of a chunk is one concept and the list operations
 * another.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_list.h"
#include "keyspace/ks_list_chunk.h"

uint64_t lbig_chunk_of(uint64_t pos)
{
    return pos >> CHUNK_SHIFT;
}

static uint64_t bit(uint64_t pos)
{
    return 1ull << (pos & (CHUNK_N - 1));
}

/* The list positions chunk c holds: [*first, *first + result). */
size_t lbig_chunk_span(const lview *lv, uint64_t c, uint64_t *first)
{
    uint64_t a = c << CHUNK_SHIFT, b = a + (CHUNK_N - 1);
    uint64_t lo = lv->head, hi = lv->head + lv->n - 1;
    *first = a;
    if (lv->n == 0 || b < lo || a > hi) return 0;
    if (a < lo) a = lo;
    if (b > hi) b = hi;
    *first = a;
    return (size_t)(b - a + 1);
}

/* Index bounds of the chunk holding index i: its first item, and one past
 * its last. */
uint64_t lbig_align_down(const lview *lv, uint64_t i)
{
    uint64_t first;
    lbig_chunk_span(lv, lbig_chunk_of(lv->head + i), &first);
    return first - lv->head;
}

uint64_t lbig_align_up(const lview *lv, uint64_t i)
{
    uint64_t first;
    size_t n = lbig_chunk_span(lv, lbig_chunk_of(lv->head + i), &first);
    return first + n - lv->head;
}

void lbig_chunk_sfx(char *s, uint64_t c)
{
    ks_put_be64(s, c);
}

void lbig_slot_sfx(char *s, uint64_t pos)
{
    ks_put_be64(s, lbig_chunk_of(pos));
    s[8] = (char)(pos & (CHUNK_N - 1));
}

/* ---- Chunks ----------------------------------------------------------------- */

/* The header of a chunk value whose first entry is at position first: one
 * byte, 3 + 2 * (first % 32), odd and >= 3 where an entry's varint is 1 or
 * even (so a value without one, of an older writer, is told apart). */
char lbig_chunk_hdr(uint64_t first)
{
    return (char)(3 + 2 * (first & (CHUNK_N - 1)));
}

static int outline(const litem *it)
{
    return it->stored || it->n > KS_LIST_INLINE;
}

/* Steps over the entry at p (its varint in *e); the end of it, or NULL
 * when it is malformed. */
static inline __attribute__((always_inline)) const char *entry_next(const char *p, const char *end,
                                                                    uint64_t *e)
{
    if (p < end && (unsigned char)*p < 0x80) { /* one byte: len < 64, the usual case */
        unsigned b = (unsigned char)*p++;
        *e = b;
        if (b == 1) return p;
        return !(b & 1) && (b >> 1) <= (size_t)(end - p) ? p + (b >> 1) : NULL;
    }
    if (!(p = ks_get_varint(p, end, e))) return NULL;
    if (*e == 1) return p;
    if ((*e & 1) || *e / 2 > KS_LIST_INLINE || *e / 2 > (uint64_t)(end - p)) return NULL;
    return p + *e / 2;
}

/* Decodes the live entries of ch from v (ch->c, ch->first and ch->n set:
 * the positions inside the list). With a header, the value's entries run
 * from its position on, covering the live ones, and may go on past them
 * (dead entries of earlier pops, checked but not returned); without one
 * they are exactly the live ones. Only eoff[0] and eoff[n] unless full
 * (a push copies the live entries as one run). 0, or -1. */
static int chunk_decode_as(lchunk *ch, const char *v, size_t vl, int full)
{
    const char *p = v, *end = v + vl;
    uint64_t pos = ch->first, last = (ch->c << CHUNK_SHIFT) + (CHUNK_N - 1), e;
    ch->mask = 0;
    ch->hdr = vl > 0 && (unsigned char)v[0] >= 3 && (v[0] & 1);
    if (vl > CHUNK_BYTES || ch->first + ch->n - 1 > last) return -1;
    if (ch->hdr) {
        if ((unsigned char)v[0] > 3 + 2 * (CHUNK_N - 1)) return -1;
        pos = (ch->c << CHUNK_SHIFT) + (((unsigned char)*p++ - 3) >> 1);
        if (pos > ch->first) return -1;
        for (; pos < ch->first; pos++) /* dead: popped from the head */
            if (!(p = entry_next(p, end, &e))) return -1;
    }
    ch->eoff[0] = (size_t)(p - v);
    for (size_t i = 0; i < ch->n; i++, pos++) {
        if (full) ch->eoff[i] = (size_t)(p - v);
        if (!(p = entry_next(p, end, &e))) return -1;
        if (!full) continue;
        if (e == 1) {
            ch->it[i] = (litem){NULL, 0, 1, pos};
            ch->mask |= bit(pos);
        } else {
            ch->it[i] = (litem){p - e / 2, (size_t)(e / 2), 0, 0};
        }
    }
    ch->eoff[ch->n] = (size_t)(p - v);
    if (!ch->hdr) return p == end ? 0 : -1;
    for (; p < end; pos++) /* dead: popped from the tail */
        if (pos > last || !(p = entry_next(p, end, &e))) return -1;
    return 0;
}

int lbig_chunk_decode(lchunk *ch, const char *v, size_t vl)
{
    return chunk_decode_as(ch, v, vl, 1);
}

/* The entry at position pos in chunk ci's value v, when v has a header
 * (only the entries before it are stepped over, not decoded): 0, or -1
 * (no header, or malformed: lbig_chunk_decode then says which). */
int lbig_chunk_entry_at(uint64_t ci, const char *v, size_t vl, uint64_t pos, litem *it)
{
    if (!vl || (unsigned char)v[0] < 3 || !(v[0] & 1) ||
        (unsigned char)v[0] > 3 + 2 * (CHUNK_N - 1))
        return -1;
    uint64_t at = (ci << CHUNK_SHIFT) + (((unsigned char)v[0] - 3) >> 1), e;
    const char *p = v + 1, *end = v + vl;
    if (at > pos) return -1;
    for (; at < pos; at++)
        if (!(p = entry_next(p, end, &e))) return -1;
    if (!(p = entry_next(p, end, &e))) return -1;
    *it = e == 1 ? (litem){NULL, 0, 1, pos} : (litem){p - e / 2, (size_t)(e / 2), 0, 0};
    return 0;
}

/* Reads chunk ci with one get (out-of-line values not loaded; full 0:
 * only the bounds of its live entries, see chunk_decode_as). */
ks_status lbig_chunk_get_as(ks_ctx *c, int db, const lview *lv, uint64_t ci, lchunk *ch, int full)
{
    ch->raw = NULL;
    ch->c = ci;
    ch->mask = 0;
    ch->n = lbig_chunk_span(lv, ci, &ch->first);
    if (!ch->n) return KS_OK;
    char s[8];
    size_t vl;
    lbig_chunk_sfx(s, ci);
    eng_status es = ks_member_get(c, NULL, db, lv->version, s, 8, &ch->raw, &vl);
    if (es == ENG_NOTFOUND) return ks_corrupt(c, "list chunk");
    if (es != ENG_OK) return ks_engine_err(c, es, "list read");
    if (chunk_decode_as(ch, ch->raw, vl, full) != 0) {
        eng_free(ch->raw);
        ch->raw = NULL;
        return ks_corrupt(c, "list chunk");
    }
    return KS_OK;
}

ks_status lbig_chunk_get(ks_ctx *c, int db, const lview *lv, uint64_t ci, lchunk *ch)
{
    return lbig_chunk_get_as(c, db, lv, ci, ch, 1);
}

void lbig_chunk_free(lchunk *ch)
{
    if (ch->raw) eng_free(ch->raw);
    ch->raw = NULL;
}

/* The value of the out-of-line item at pos (an engine buffer). */
ks_status lbig_slot_get(ks_ctx *c, int db, uint64_t version, uint64_t pos, char **v, size_t *n)
{
    char s[9];
    lbig_slot_sfx(s, pos);
    eng_status es = ks_member_get(c, NULL, db, version, s, 9, v, n);
    if (es == ENG_NOTFOUND) return ks_corrupt(c, "list item");
    return es == ENG_OK ? KS_OK : ks_engine_err(c, es, "list read");
}

/* Writes chunk ci holding items[0..n) at positions first.. (n 0: deletes
 * it): its value, the slot of each out-of-line item not already stored at
 * its position (REQUIRES: those are loaded), and a delete for each slot of
 * old (the slots it had) it no longer uses. */
void lbig_chunk_put(ks_ctx *c, int db, uint64_t version, uint64_t ci, uint64_t first,
                    const litem *items, size_t n, uint64_t old)
{
    char buf[CHUNK_BYTES], *p = buf, s[9];
    uint64_t mask = 0;
    *p++ = lbig_chunk_hdr(first);
    for (size_t i = 0; i < n; i++) {
        const litem *it = &items[i];
        uint64_t pos = first + i;
        if (!outline(it)) {
            p = ks_put_varint(p, 2 * (uint64_t)it->n);
            if (it->n) memcpy(p, it->p, it->n);
            p += it->n;
            continue;
        }
        p = ks_put_varint(p, 1);
        mask |= bit(pos);
        if (it->stored && it->at == pos) continue;
        lbig_slot_sfx(s, pos);
        ks_member_put(c, db, version, s, 9, it->p, it->n);
    }
    for (uint64_t gone = old & ~mask; gone; gone &= gone - 1) {
        lbig_slot_sfx(s, (ci << CHUNK_SHIFT) + (uint64_t)__builtin_ctzll(gone));
        ks_member_del(c, db, version, s, 9);
    }
    lbig_chunk_sfx(s, ci);
    if (n)
        ks_member_put(c, db, version, s, 8, buf, (size_t)(p - buf));
    else
        ks_member_del(c, db, version, s, 8);
}

/* Deletes chunks c0..c1 and their slots: one range delete. */
void lbig_chunks_del(ks_ctx *c, int db, uint64_t version, uint64_t c0, uint64_t c1)
{
    if (c0 > c1) return;
    char a[8], b[8];
    lbig_chunk_sfx(a, c0);
    lbig_chunk_sfx(b, c1 + 1);
    ks_members_delete_range(c, db, version, a, 8, b, 8);
}

/* Puts chunk ci's value: v (vl bytes), which starts with its header
 * (lbig_chunk_hdr); vl 0 deletes the chunk key. */
void lbig_chunk_raw_put(ks_ctx *c, int db, uint64_t version, uint64_t ci, const char *v, size_t vl)
{
    char s[8];
    lbig_chunk_sfx(s, ci);
    if (vl)
        ks_member_put(c, db, version, s, 8, v, vl);
    else
        ks_member_del(c, db, version, s, 8);
}

/* Puts chunk ci as ch's entries [i0, i1) (i1 > i0), with their header. */
void lbig_chunk_put_part(ks_ctx *c, int db, uint64_t version, const lchunk *ch, size_t i0,
                         size_t i1)
{
    char buf[CHUNK_BYTES];
    size_t n = ch->eoff[i1] - ch->eoff[i0];
    buf[0] = lbig_chunk_hdr(ch->first + i0);
    memcpy(buf + 1, ch->raw + ch->eoff[i0], n);
    lbig_chunk_raw_put(c, db, version, ch->c, buf, n + 1);
}

/* Deletes the slots of ch's out-of-line items i in [i0, i1). */
void lbig_slots_del(ks_ctx *c, int db, uint64_t version, const lchunk *ch, size_t i0, size_t i1)
{
    char s[9];
    for (size_t i = i0; i < i1; i++) {
        if (!ch->it[i].stored) continue;
        lbig_slot_sfx(s, ch->first + i);
        ks_member_del(c, db, version, s, 9);
    }
}

/* Appends the entry of a new item at pos to p, writing its slot when it is
 * out of line; returns the end. */
char *lbig_new_entry(ks_ctx *c, int db, uint64_t version, char *p, uint64_t pos, const char *v,
                     size_t vl)
{
    if (vl <= KS_LIST_INLINE) {
        p = ks_put_varint(p, 2 * (uint64_t)vl);
        if (vl) memcpy(p, v, vl);
        return p + vl;
    }
    char s[9];
    lbig_slot_sfx(s, pos);
    ks_member_put(c, db, version, s, 9, v, vl);
    return ks_put_varint(p, 1);
}

/* The bytes of ch's entries [i0, i1) appended to p: old entries keep their
 * encoding (and their slots: same positions). */
char *lbig_old_entries(char *p, const lchunk *ch, size_t i0, size_t i1)
{
    size_t n = ch->eoff[i1] - ch->eoff[i0];
    if (n) memcpy(p, ch->raw + ch->eoff[i0], n);
    return p + n;
}
