/*
 * ks_list_chunk.h -- internal to the big-list files: one chunk of a big
 * list (32 positions in one engine value, its out-of-line slots; format
 * in ks_list_big.c and ENCODING.md "Lists") as ks_list_chunk.c reads,
 * decodes and writes it and ks_list_big.c's operations use it. Command
 * thread only; writes go to c->batch.
 */
#ifndef STRATA_KS_LIST_CHUNK_H
#define STRATA_KS_LIST_CHUNK_H

#include "keyspace/ks_list.h"

#define CHUNK_SHIFT KS_LIST_CHUNK_SHIFT
#define CHUNK_N (1u << CHUNK_SHIFT)

typedef struct litem {
    const char *p; /* the value; NULL for an out-of-line item not loaded */
    size_t n;
    int stored; /* out of line, and the slot of position `at` holds it */
    uint64_t at;
} litem;

typedef struct lchunk {
    char *raw; /* engine buffer (lbig_chunk_get), or NULL */
    uint64_t c, first;
    size_t n;
    uint64_t mask; /* the slots it has */
    int hdr;       /* the value starts with a header (dead entries allowed) */
    litem it[CHUNK_N];
    size_t off[CHUNK_N];      /* read_chunk: values as offsets into its buffer */
    size_t eoff[CHUNK_N + 1]; /* where each entry starts in the value; eoff[n]: its length */
} lchunk;

#define CHUNK_BYTES (1 + CHUNK_N * (KS_LIST_INLINE + 2)) /* the longest chunk value */

/* The chunk holding list position pos. */
uint64_t lbig_chunk_of(uint64_t pos);
/* The list positions chunk c holds: [*first, *first + result). */
size_t lbig_chunk_span(const lview *lv, uint64_t c, uint64_t *first);
/* Index bounds of the chunk holding index i: its first item, and one past
 * its last. */
uint64_t lbig_align_down(const lview *lv, uint64_t i);
uint64_t lbig_align_up(const lview *lv, uint64_t i);
/* The member suffix of chunk c (8 bytes) and of the slot of position pos
 * (9 bytes) into s. */
void lbig_chunk_sfx(char *s, uint64_t c);
void lbig_slot_sfx(char *s, uint64_t pos);
/* The header of a chunk value whose first entry is at position first: one
 * byte, 3 + 2 * (first % 32), odd and >= 3 where an entry's varint is 1 or
 * even (so a value without one, of an older writer, is told apart). */
char lbig_chunk_hdr(uint64_t first);
/* Decodes ch's live entries from v, every entry's bounds (ch->c, first
 * and n set by the caller); 0, or -1 when v is malformed. */
int lbig_chunk_decode(lchunk *ch, const char *v, size_t vl);
/* The entry at position pos in chunk ci's value v, when v has a header
 * (only the entries before it are stepped over, not decoded): 0, or -1
 * (no header, or malformed: lbig_chunk_decode then says which). */
int lbig_chunk_entry_at(uint64_t ci, const char *v, size_t vl, uint64_t pos, litem *it);
/* Reads chunk ci with one get (out-of-line values not loaded; full 0:
 * only the bounds of its live entries, see chunk_decode_as). */
ks_status lbig_chunk_get_as(ks_ctx *c, int db, const lview *lv, uint64_t ci, lchunk *ch, int full);
/* lbig_chunk_get_as with full set; lbig_chunk_free releases ch's engine
 * buffer. */
ks_status lbig_chunk_get(ks_ctx *c, int db, const lview *lv, uint64_t ci, lchunk *ch);
void lbig_chunk_free(lchunk *ch);
/* The value of the out-of-line item at pos (an engine buffer). */
ks_status lbig_slot_get(ks_ctx *c, int db, uint64_t version, uint64_t pos, char **v, size_t *n);
/* Writes chunk ci holding items[0..n) at positions first.. (n 0: deletes
 * it): its value, the slot of each out-of-line item not already stored at
 * its position (REQUIRES: those are loaded), and a delete for each slot of
 * old (the slots it had) it no longer uses. */
void lbig_chunk_put(ks_ctx *c, int db, uint64_t version, uint64_t ci, uint64_t first,
                    const litem *items, size_t n, uint64_t old);
/* Deletes chunks c0..c1 and their slots: one range delete. */
void lbig_chunks_del(ks_ctx *c, int db, uint64_t version, uint64_t c0, uint64_t c1);
/* Puts chunk ci's value: v (vl bytes), which starts with its header
 * (lbig_chunk_hdr); vl 0 deletes the chunk key. */
void lbig_chunk_raw_put(ks_ctx *c, int db, uint64_t version, uint64_t ci, const char *v, size_t vl);
/* Puts chunk ci as ch's entries [i0, i1) (i1 > i0), with their header. */
void lbig_chunk_put_part(ks_ctx *c, int db, uint64_t version, const lchunk *ch, size_t i0,
                         size_t i1);
/* Deletes the slots of ch's out-of-line items i in [i0, i1). */
void lbig_slots_del(ks_ctx *c, int db, uint64_t version, const lchunk *ch, size_t i0, size_t i1);
/* Appends the entry of a new item at pos to p, writing its slot when it is
 * out of line; returns the end. */
char *lbig_new_entry(ks_ctx *c, int db, uint64_t version, char *p, uint64_t pos, const char *v,
                     size_t vl);
/* The bytes of ch's entries [i0, i1) appended to p: old entries keep their
 * encoding (and their slots: same positions). */
char *lbig_old_entries(char *p, const lchunk *ch, size_t i0, size_t i1);

#endif
