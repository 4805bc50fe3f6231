/*
 * write_batch.c -- eng_batch: an encoded list of puts and deletes, applied
 * atomically (write_batch.h has the encoding, which is also the payload of a
 * write-ahead log record; log_format.md has the framing around it):
 *
 *   batch     = sequence (fixed64) | count (fixed32) | op*
 *   op        = 0x01 varstring(key) varstring(value)     -- put
 *             | 0x00 varstring(key)                       -- delete
 *             | 0x02 varstring(start) varstring(end)      -- delete range
 *   varstring = varint32 length | bytes
 *
 * The op tags are the ENG_TYPE_* values of dbformat.h, so an op's tag is
 * the type of the memtable entry it becomes.
 *
 * Invariants:
 *   B1. rep always holds a complete, valid encoding whose count field equals
 *       b->count and whose op count is b->count; n_range equals the number
 *       of delete-range ops in it.
 *   B2. The private index of an indexed batch is built lazily: writers only
 *       append to rep, and batch_index() catches the index up when a reader
 *       asks for it. index (when not NULL) holds exactly one entry per op
 *       0 .. n_indexed-1, op i at sequence ENG_BATCH_SEQ_BASE + i, and
 *       indexed_len is the byte offset in rep where op n_indexed begins;
 *       n_indexed <= count, and n_indexed == 0 when index == NULL. Ops
 *       n_indexed .. count-1 are in rep only.
 *   B3. Savepoints are nested: saves[k].len <= saves[k+1].len <= rep.len.
 *   B4. The point index of an indexed batch (no range deletions) is built
 *       as lazily as B2, by batch_point_get: ops 0 .. n_hashed-1 are parsed
 *       into ops[] (hashed_len is the rep offset of op n_hashed), and slots
 *       (open addressing on key_hash) hold one entry per distinct key among
 *       them, naming its newest op; an op that a later op on the same key
 *       replaced is marked shadowed. An op on a key under a scan-only
 *       prefix of so (memtable.h: no command point-reads those) is parsed
 *       but left out of the slots (pop.point == 0) and never marks or is
 *       marked shadowed, so B5 inserts it; batch_point_get answers -1 for
 *       such keys, and for every key once an op was left out and it is asked
 *       with another prefix set. Each op with point == 1 that no later op
 *       shadowed names its slot in pop.slot, so the slots in use are exactly
 *       those of such ops (a shadowed op's slot went to its replacement).
 *       n_hashed <= count; a rollback below n_hashed empties it.
 *       Which keys are under so is decided by so_match (B7), for an op
 *       and for a read alike.
 *   B5. batch_insert_into leaves out of the memtable the ops B4 marks
 *       shadowed: the batch is published whole (last_seq moves past all of
 *       it at once, db_write.c), so no reader can ask for a sequence at
 *       which a shadowed op would be the newest version of its key.
 *       Recovery, which replays the log record without a point index,
 *       inserts them all; the answers are the same.
 *   B6. rd (when not NULL) holds the range deletions among ops
 *       0 .. n_indexed-1, at their index sequences, in op order; it is
 *       kept with the index (B2) and dropped with it, so a reader of a
 *       batch with range deletions gets them without a walk of the index.
 *   B7. sw is a copy of the first sw.n prefixes of sw.of, taken after
 *       loading sw.of->n (acquire): when they all have one length of at
 *       most 8 bytes (else sw.slow, and no copy decides), as one masked
 *       word each in a table; sw.of == so while so != NULL. Prefixes
 *       are only appended (memtable.h), and sw only ever grows while it
 *       copies the same set, so so_match's answer for a key only ever goes
 *       from 0 to 1: an op it left out of the slots (B4) stays left out at
 *       every later read of its key.
 *
 * Why lazy: the server runs every command through an indexed batch, but most
 * commands never read through it while it holds ops, so indexing each op as
 * it is added would insert every write into two memtables (this one and the
 * db memtable at eng_write) for nothing. Point reads (eng_get_batch) use the
 * point index of B4 instead of the memtable: a hash probe instead of an
 * ordered insert per op, which matters when the server keeps the writes of
 * a whole pipeline in one batch (one log record and one memtable insert
 * group for all of them, the per-db key counter written once: B5).
 */
#include "write_batch.h"

#include <stdlib.h>
#include <string.h>

#include "dbformat.h"
#include "env.h"
#include "memtable.h"
#include "rangedel.h"

/* A cleared batch whose buffer grew past this gives the memory back. */
#define BATCH_KEEP_BYTES (4u << 20)
#define INDEX_FIRST_BLOCK 4096

/* A point-index slot (B4): op is the newest op on a key whose key_hash is
 * hash, plus one (0: empty). */
typedef struct pslot {
    uint32_t hash, op;
} pslot;

/* An op of the point index (B4), parsed: its key and value in rep. */
typedef struct pop {
    uint32_t koff, klen, voff, vlen;
    uint32_t slot; /* B4: its slot, while point and not shadowed */
    unsigned char type;
    unsigned char shadowed; /* a later op on the same key replaced it */
    unsigned char point;    /* in the slots (B4: 0 for a scan-only key) */
} pop;

/* B7: the batch's copy of its scan-only prefixes, for so_match. */
#define SO_SLOTS 64 /* twice MEM_SCAN_ONLY_MAX: at most half full */
typedef struct so_words {
    const mem_scan_only *of; /* the set copied; NULL: none yet */
    uint32_t n;              /* of's prefixes copied */
    int slow;                /* not all as below: mem_scan_only_match decides */
    uint64_t mask;           /* every prefix's mask: one length, at most 8 bytes */
    uint64_t slot[SO_SLOTS]; /* the prefixes as words, by so_hash; 0: empty */
} so_words;

typedef struct savepoint {
    size_t len;
    uint32_t count, n_range;
} savepoint;

struct eng_batch {
    buf rep;
    uint32_t count;
    uint32_t n_range;
    int indexed;
    memtable *index;    /* B2 */
    uint32_t n_indexed; /* B2: ops already in index */
    size_t indexed_len; /* B2: rep offset of op n_indexed */
    rdel_set *rd;       /* B6 */
    savepoint *saves;
    size_t n_saves, cap_saves;
    /* B4: the point index */
    pslot *slots;        /* slot_mask + 1 of them, a power of two */
    uint32_t slot_mask;  /* 0 while slots == NULL */
    uint32_t n_hashed;   /* ops in the point index */
    uint32_t n_shadowed; /* of them, replaced by a later op on their key */
    size_t hashed_len;   /* rep offset of op n_hashed */
    pop *ops;            /* op i < n_hashed, parsed */
    uint32_t cap_ops;
    uint32_t n_unpointed;     /* B4: of the hashed ops, left out of the slots */
    const mem_scan_only *so;  /* B4: the prefixes they were left out by */
    so_words sw;              /* B7: so's prefixes as words */
    uint32_t last_drop_slots; /* slots the last points_drop wrote (a test hook) */
};

static void reset_rep(eng_batch *b)
{
    b->rep.len = 0;
    buf_reserve(&b->rep, BATCH_HEADER_SIZE);
    memset(b->rep.data, 0, BATCH_HEADER_SIZE);
    b->rep.len = BATCH_HEADER_SIZE;
    b->count = b->n_range = 0;
}

eng_batch *eng_batch_new(int indexed)
{
    eng_batch *b = calloc(1, sizeof(*b));
    if (!b) abort();
    b->indexed = indexed != 0;
    b->indexed_len = b->hashed_len = BATCH_HEADER_SIZE;
    reset_rep(b);
    return b;
}

/* Drops the batch's index entries (B2: nothing indexed afterwards): the
 * memtable is reused in place when nobody else holds it, otherwise released
 * (an iterator over the old entries keeps them). */
static void index_drop(eng_batch *b)
{
    uint32_t had = b->n_indexed;
    rdel_set_unref(b->rd); /* B6: a holder (an iterator) keeps its own reference */
    b->rd = NULL;
    b->n_indexed = 0;
    b->indexed_len = BATCH_HEADER_SIZE;
    if (!b->index || had == 0) return; /* already empty: clear stays O(1) */
    if (mem_refs(b->index) == 1) {
        mem_reset(b->index);
        return;
    }
    mem_unref(b->index);
    b->index = NULL;
}

/* Empties the point index (B4: nothing hashed afterwards) in O(ops hashed):
 * the slot table keeps the size of the largest batch it held (a pipeline's),
 * so the small batches after it clear only the slots their ops hold, and
 * only a table that many ops fill is wiped whole. ops[] is still valid for
 * i < n_hashed here, even after a rollback cut rep below them. */
static void points_drop(eng_batch *b)
{
    b->last_drop_slots = 0;
    if (b->n_hashed == 0) return;
    size_t n_slots = (size_t)b->slot_mask + 1;
    if ((size_t)b->n_hashed * 8 >= n_slots) {
        memset(b->slots, 0, n_slots * sizeof(*b->slots));
        b->last_drop_slots = (uint32_t)n_slots;
    } else {
        for (uint32_t i = 0; i < b->n_hashed; i++) {
            const pop *o = &b->ops[i];
            if (!o->point || o->shadowed) continue;
            b->slots[o->slot] = (pslot){0, 0}; /* B4: the only slots in use */
            b->last_drop_slots++;
        }
    }
    b->n_hashed = b->n_shadowed = b->n_unpointed = 0;
    b->so = NULL;
    b->hashed_len = BATCH_HEADER_SIZE;
}

uint32_t batch_point_drop_slots(const eng_batch *b)
{
    return b->last_drop_slots;
}

void eng_batch_free(eng_batch *b)
{
    if (!b) return;
    free(b->slots);
    free(b->ops);
    mem_unref(b->index);
    rdel_set_unref(b->rd);
    buf_free(&b->rep);
    free(b->saves);
    free(b);
}

void eng_batch_clear(eng_batch *b)
{
    if (b->rep.cap > BATCH_KEEP_BYTES) buf_free(&b->rep);
    reset_rep(b);
    b->n_saves = 0;
    index_drop(b);
    points_drop(b);
}

/* Appends one op to rep (B1); the index catches up in batch_index() (B2). */
static void add_op(eng_batch *b, int type, const char *k, size_t kl, const char *v, size_t vl)
{
    buf *r = &b->rep;
    size_t need = 1 + 10 + kl + 10 + vl; /* tag, two varints, the bytes */
    if (r->len + need > r->cap) buf_reserve(r, need);
    r->data[r->len++] = (char)type;
    buf_put_slice(r, slice_make(k, kl));
    if (type != ENG_TYPE_DELETION) buf_put_slice(r, slice_make(v, vl));
    b->count++;
    if (type == ENG_TYPE_RANGE_DELETION) b->n_range++;
    enc_fixed32(r->data + 8, b->count);
}

void eng_batch_put(eng_batch *b, const char *k, size_t kl, const char *v, size_t vl)
{
    add_op(b, ENG_TYPE_VALUE, k, kl, v, vl);
}

void eng_batch_delete(eng_batch *b, const char *k, size_t kl)
{
    add_op(b, ENG_TYPE_DELETION, k, kl, NULL, 0);
}

void eng_batch_delete_range(eng_batch *b, const char *start, size_t sl, const char *end, size_t el)
{
    add_op(b, ENG_TYPE_RANGE_DELETION, start, sl, end, el);
}

void eng_batch_set_savepoint(eng_batch *b)
{
    if (b->n_saves == b->cap_saves) {
        size_t cap = b->cap_saves ? b->cap_saves * 2 : 8;
        savepoint *p = realloc(b->saves, cap * sizeof(*p));
        if (!p) abort();
        b->saves = p;
        b->cap_saves = cap;
    }
    b->saves[b->n_saves++] = (savepoint){b->rep.len, b->count, b->n_range};
}

eng_status eng_batch_rollback(eng_batch *b)
{
    if (b->n_saves == 0) return ENG_NOTFOUND;
    savepoint sp = b->saves[--b->n_saves];
    if (sp.count == b->count) return ENG_OK; /* nothing added since */
    b->rep.len = sp.len;
    b->count = sp.count;
    b->n_range = sp.n_range;
    enc_fixed32(b->rep.data + 8, b->count);
    /* Skiplists cannot drop entries: if the index covers ops that are gone,
     * empty it and let the next batch_index() rebuild from the ops that
     * remain (B2). An index that stops at or below the new end stays. */
    if (b->n_indexed > b->count) index_drop(b);
    if (b->n_hashed > b->count) points_drop(b);
    return ENG_OK;
}

eng_status eng_batch_pop_savepoint(eng_batch *b)
{
    if (b->n_saves == 0) return ENG_NOTFOUND;
    b->n_saves--;
    return ENG_OK;
}

size_t eng_batch_count(const eng_batch *b)
{
    return b->count;
}
size_t eng_batch_byte_size(const eng_batch *b)
{
    return b->rep.len;
}

slice batch_contents(const eng_batch *b)
{
    return slice_make(b->rep.data, b->rep.len);
}
void batch_set_sequence(eng_batch *b, uint64_t seq)
{
    enc_fixed64(b->rep.data, seq);
}
uint64_t batch_sequence(const eng_batch *b)
{
    return dec_fixed64(b->rep.data);
}
int batch_has_range_deletes(const eng_batch *b)
{
    return b->n_range > 0;
}

/* Parses a varstring's length at q (< limit): inline for one byte (a key
 * or value under 128 bytes: nearly every op's), which dec_varint32's loop
 * costs several times over, on every op a batch parses. NULL when bad. */
static inline const char *parse_len(const char *q, const char *limit, uint32_t *n)
{
    if (q < limit && !(*q & 0x80)) {
        *n = (unsigned char)*q;
        return q + 1;
    }
    return dec_varint32(q, limit, n);
}

/* Parses one op at *p (< limit); returns 0 on a bad encoding. */
static inline int parse_op(const char **p, const char *limit, int *type, slice *k, slice *v)
{
    const char *q = *p;
    uint32_t n;
    *type = (unsigned char)*q++;
    if (*type > ENG_TYPE_RANGE_DELETION) return 0;
    if (!(q = parse_len(q, limit, &n)) || n > (size_t)(limit - q)) return 0;
    *k = slice_make(q, n);
    q += n;
    *v = slice_make("", 0);
    if (*type != ENG_TYPE_DELETION) {
        if (!(q = parse_len(q, limit, &n)) || n > (size_t)(limit - q)) return 0;
        *v = slice_make(q, n);
        q += n;
    }
    *p = q;
    return 1;
}

/* Adds ops n_indexed .. count-1 to the index (B2). rep was built by add_op
 * (an indexed batch never comes from batch_from_contents), so it parses. */
static void index_catch_up(eng_batch *b)
{
    if (!b->index) b->index = mem_new_sized(INDEX_FIRST_BLOCK);
    const char *p = b->rep.data + b->indexed_len, *limit = b->rep.data + b->rep.len;
    while (p < limit) {
        int type;
        slice k, v;
        if (!parse_op(&p, limit, &type, &k, &v)) abort(); /* B1 broken */
        mem_add(b->index, ENG_BATCH_SEQ_BASE + b->n_indexed, type, k, v);
        if (type == ENG_TYPE_RANGE_DELETION) { /* B6 */
            if (!b->rd) b->rd = rdel_set_new();
            rdel_set_add(b->rd, k, v, ENG_BATCH_SEQ_BASE + b->n_indexed);
        }
        b->n_indexed++;
    }
    b->indexed_len = b->rep.len;
}

/* Logically const: the index is a cache of rep, and bringing it up to date
 * changes no observable state of the batch. Every eng_batch comes from
 * eng_batch_new (never defined const), so writing through it is sound. */
memtable *batch_index(const eng_batch *cb)
{
    eng_batch *b = (eng_batch *)cb;
    if (!b->indexed || b->count == 0) return NULL;
    if (b->n_indexed < b->count) index_catch_up(b);
    return b->index;
}

struct rdel_set *batch_rdels(const eng_batch *b)
{
    if (!batch_index(b) || !b->rd) return NULL;
    rdel_set_ref(b->rd);
    return b->rd;
}

/* ---- The point index (B4) ---------------------------------------------- */

#define POINT_FIRST_SLOTS 64

/* The last n (0..7) bytes of a key, at p, as memcpy(&w, p, n) into a zero
 * word gives them on a little-endian host (their first byte lowest: the
 * table's index takes the hash's low bits), without memcpy's libc call for
 * a variable length: a key of 8 or more bytes (len; it starts at base)
 * rereads the 8 ending at its end and shifts, a shorter one combines
 * overlapping 4- or 1-byte loads. */
static inline uint64_t tail_word(const char *p, size_t n, const char *base, size_t len)
{
    uint64_t w;
    uint32_t a, b;
    if (n == 0) return 0;
    if (len >= 8) {
        memcpy(&w, base + len - 8, 8);
        return w >> (8 * (8 - n));
    }
    if (n >= 4) {
        memcpy(&a, p, 4);
        memcpy(&b, p + n - 4, 4);
        return a | (uint64_t)b << (8 * (n - 4));
    }
    return (unsigned char)p[0] | (uint64_t)(unsigned char)p[n / 2] << (8 * (n / 2)) |
           (uint64_t)(unsigned char)p[n - 1] << (8 * (n - 1));
}

static uint32_t key_hash(const char *p, size_t n)
{
    const char *base = p;
    size_t len = n;
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    h = (h ^ tail_word(p, n, base, len)) * 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h ^ (h >> 29));
}

/* The key of op i (< n_hashed); its type and value too. */
static inline slice op_key(const eng_batch *b, uint32_t i, int *type, slice *value)
{
    const pop *o = &b->ops[i];
    *type = o->type;
    *value = slice_make(b->rep.data + o->voff, o->vlen);
    return slice_make(b->rep.data + o->koff, o->klen);
}

/* The slot of key (hash h): the one naming its newest op, or the empty one
 * where it would go. */
static pslot *slot_find(const eng_batch *b, slice key, uint32_t h)
{
    for (uint32_t i = h & b->slot_mask;; i = (i + 1) & b->slot_mask) {
        pslot *s = &b->slots[i];
        if (!s->op) return s;
        if (s->hash != h) continue;
        const pop *o = &b->ops[s->op - 1];
        if (o->klen == key.size && !memcmp(b->rep.data + o->koff, key.data, key.size)) return s;
    }
}

/* Room for n ops, and slots at most half full for them. 0 when out of
 * memory (the caller answers from the memtable index instead). */
static int points_reserve(eng_batch *b, uint32_t n)
{
    if (n > b->cap_ops) {
        uint32_t cap = b->cap_ops ? b->cap_ops : POINT_FIRST_SLOTS / 2;
        while (cap < n)
            cap *= 2;
        pop *ops = realloc(b->ops, (size_t)cap * sizeof(*ops));
        if (!ops) return 0;
        b->ops = ops;
        b->cap_ops = cap;
    }
    if (b->slots && (size_t)n * 2 <= (size_t)b->slot_mask + 1) return 1;
    size_t ns = b->slots ? ((size_t)b->slot_mask + 1) * 2 : POINT_FIRST_SLOTS;
    while ((size_t)n * 2 > ns)
        ns *= 2;
    pslot *old = b->slots, *slots = calloc(ns, sizeof(*slots));
    if (!slots) return 0;
    size_t old_n = old ? (size_t)b->slot_mask + 1 : 0;
    b->slots = slots;
    b->slot_mask = (uint32_t)(ns - 1);
    for (size_t i = 0; i < old_n; i++) /* re-place the distinct keys */
        if (old[i].op)
            for (uint32_t j = old[i].hash & b->slot_mask;; j = (j + 1) & b->slot_mask)
                if (!b->slots[j].op) {
                    b->slots[j] = old[i];
                    b->ops[old[i].op - 1].slot = j; /* B4 */
                    break;
                }
    free(old);
    return 1;
}

static inline uint32_t so_hash(uint64_t w)
{
    return (uint32_t)((w * 0x9E3779B97F4A7C15ull) >> 58); /* SO_SLOTS == 1 << 6 */
}

/* Brings sw up to date with so (B7): O(1) unless a prefix was added. */
static void so_words_sync(so_words *sw, const mem_scan_only *so)
{
    uint32_t n = atomic_load_explicit(&((mem_scan_only *)so)->n, memory_order_acquire);
    if (sw->of == so && sw->n == n) return;
    if (sw->of != so) *sw = (so_words){.of = so};
    for (; sw->n < n; sw->n++) {
        uint64_t w = so->p[sw->n].w[0], m = so->p[sw->n].mask[0];
        if (so->p[sw->n].mask[1] || !w || (sw->n && m != sw->mask)) sw->slow = 1;
        if (sw->slow) continue;
        sw->mask = m;
        uint32_t i = so_hash(w);
        while (sw->slot[i])
            i = (i + 1) % SO_SLOTS;
        sw->slot[i] = w;
    }
}

/* Is key under a prefix of b->so (B4)? Asked for every op hashed and every
 * point read of a batch that left ops out, so it decides a key no prefix
 * starts like (a keyspace key) from one bit, inline, and a candidate (an
 * index's key: the catalog's prefixes are all 6 bytes) from one masked
 * word and a probe, where mem_scan_only_match, out of line, compares two
 * words per prefix: both cost about what hashing the key saves, so leaving
 * scan-only ops out only pays with a cheap test. B7: sw copies b->so (set
 * only by points_catch_up, which syncs sw then), and the answer for a key
 * only goes from 0 to 1. */
static inline int so_match(const eng_batch *b, slice key)
{
    if (!mem_scan_only_maybe(b->so, key)) return 0;
    if (b->sw.slow || key.size < 8) return mem_scan_only_match(b->so, key);
    uint64_t w;
    memcpy(&w, key.data, 8); /* as mem_scan_only_add loads a prefix's words */
    w &= b->sw.mask;
    for (uint32_t i = so_hash(w);; i = (i + 1) % SO_SLOTS) {
        if (!b->sw.slot[i]) return 0; /* no prefix word is 0 (sync) */
        if (b->sw.slot[i] == w) return 1;
    }
}

/* Adds ops n_hashed .. count-1 to the point index, those on keys under a
 * prefix of so parsed only (B4). 0 when it cannot be kept (range
 * deletions, a huge batch, no memory): nothing is hashed. */
static int points_catch_up(eng_batch *b, const mem_scan_only *so)
{
    if (b->n_range || b->rep.len > UINT32_MAX || !points_reserve(b, b->count)) {
        points_drop(b);
        return 0;
    }
    if (b->n_hashed == 0) b->so = so;
    if (b->so) so_words_sync(&b->sw, b->so);
    int any = b->so && b->sw.n; /* none (a db without indexes): no op is tested */
    const char *base = b->rep.data, *p = base + b->hashed_len, *limit = base + b->rep.len;
    while (b->n_hashed < b->count) {
        uint32_t i = b->n_hashed++;
        int type;
        slice k, v;
        if (!parse_op(&p, limit, &type, &k, &v)) abort(); /* B1 broken */
        pop *o = &b->ops[i];
        *o = (pop){(uint32_t)(k.data - base),
                   (uint32_t)k.size,
                   (uint32_t)(v.data - base),
                   (uint32_t)v.size,
                   0,
                   (unsigned char)type,
                   0,
                   0};
        if (!v.size) o->voff = 0; /* a deletion's "" is no offset in rep */
        if (any && so_match(b, k)) {
            b->n_unpointed++; /* B4: parsed for B5, never in the slots */
            continue;
        }
        uint32_t h = key_hash(k.data, k.size);
        pslot *s = slot_find(b, k, h);
        if (s->op) {
            b->ops[s->op - 1].shadowed = 1;
            b->n_shadowed++;
        }
        *s = (pslot){h, i + 1};
        o->slot = (uint32_t)(s - b->slots);
        o->point = 1;
    }
    b->hashed_len = (size_t)(p - base);
    return 1;
}

int batch_point_get(const eng_batch *cb, const mem_scan_only *so, slice key, int *type,
                    slice *value)
{
    eng_batch *b = (eng_batch *)cb; /* logically const, as batch_index */
    if (!b->indexed || b->count == 0) return 0;
    if (b->n_hashed < b->count && !points_catch_up(b, b->n_hashed ? b->so : so)) return -1;
    if (b->n_unpointed && (so != b->so || so_match(b, key))) return -1; /* B4 */
    pslot *s = slot_find(b, key, key_hash(key.data, key.size));
    if (!s->op) return 0;
    op_key(b, s->op - 1, type, value);
    return 1;
}

/* Checks a whole encoding; counts its range deletes. */
static eng_status validate(slice rep, uint32_t *n_range)
{
    if (rep.size < BATCH_HEADER_SIZE)
        return env_error(ENG_CORRUPTION, "write batch: %zu bytes is shorter than its header",
                         rep.size);
    uint32_t count = dec_fixed32(rep.data + 8), seen = 0, nr = 0;
    const char *p = rep.data + BATCH_HEADER_SIZE, *limit = rep.data + rep.size;
    while (p < limit) {
        int type;
        slice k, v;
        if (!parse_op(&p, limit, &type, &k, &v))
            return env_error(ENG_CORRUPTION, "write batch: bad op %u at byte %zu", seen,
                             (size_t)(p - rep.data));
        seen++;
        nr += type == ENG_TYPE_RANGE_DELETION;
    }
    if (seen != count)
        return env_error(ENG_CORRUPTION, "write batch: header says %u ops, found %u", count, seen);
    if (n_range) *n_range = nr;
    return ENG_OK;
}

eng_status batch_from_contents(slice rep, eng_batch **out)
{
    *out = NULL;
    uint32_t nr;
    eng_status s = validate(rep, &nr);
    if (s != ENG_OK) return s;
    uint64_t seq = dec_fixed64(rep.data), count = dec_fixed32(rep.data + 8);
    if (seq > ENG_MAX_SEQUENCE || count > ENG_MAX_SEQUENCE - seq)
        return env_error(ENG_CORRUPTION, "write batch: sequence %llu out of range",
                         (unsigned long long)seq);
    eng_batch *b = eng_batch_new(0);
    b->rep.len = 0;
    buf_append(&b->rep, rep.data, rep.size);
    b->count = (uint32_t)count;
    b->n_range = nr;
    *out = b;
    return ENG_OK;
}

eng_status batch_iterate(const eng_batch *b, batch_op_fn fn, void *ctx)
{
    slice rep = batch_contents(b);
    eng_status s = validate(rep, NULL);
    if (s != ENG_OK) return s;
    uint64_t seq = batch_sequence(b);
    const char *p = rep.data + BATCH_HEADER_SIZE, *limit = rep.data + rep.size;
    while (p < limit) {
        int type;
        slice k, v;
        parse_op(&p, limit, &type, &k, &v); /* validated above */
        if ((s = fn(ctx, seq++, type, k, v)) != ENG_OK) return s;
    }
    return ENG_OK;
}

/* Ops are handed to mem_add_many in groups, so the memtable can overlap
 * their descents' cache misses. */
#define INSERT_GROUP 16

typedef struct insert_ctx {
    memtable *mem;
    mem_entry e[INSERT_GROUP];
    size_t n;
} insert_ctx;

static eng_status insert_op(void *ctx, uint64_t seq, int type, slice key, slice value)
{
    insert_ctx *c = ctx;
    c->e[c->n++] = (mem_entry){seq, type, key, value};
    if (c->n == INSERT_GROUP) {
        mem_add_many(c->mem, c->e, c->n);
        c->n = 0;
    }
    return ENG_OK;
}

/* A batch of at most INSERT_GROUP ops -- nearly every command's -- is
 * parsed once, into one group that is checked whole (as validate would)
 * before the first insert; 0 when it does not check, nothing inserted. */
static int insert_small(const eng_batch *b, insert_ctx *c)
{
    slice rep = batch_contents(b);
    uint32_t count = dec_fixed32(rep.data + 8);
    if (count > INSERT_GROUP) return 0;
    uint64_t seq = batch_sequence(b);
    const char *p = rep.data + BATCH_HEADER_SIZE, *limit = rep.data + rep.size;
    for (c->n = 0; p < limit && c->n < count; c->n++) {
        mem_entry *e = &c->e[c->n];
        if (!parse_op(&p, limit, &e->type, &e->key, &e->value)) break;
        e->seq = seq + c->n;
    }
    if (p != limit || c->n != count) return c->n = 0, 0;
    if (count) mem_add_many(c->mem, c->e, count);
    return 1;
}

/* B5: the ops the point index does not mark shadowed, in groups. */
static void insert_newest(const eng_batch *b, insert_ctx *c)
{
    uint64_t seq = batch_sequence(b);
    for (uint32_t i = 0; i < b->count; i++) {
        if (b->ops[i].shadowed) continue;
        mem_entry *e = &c->e[c->n++];
        e->seq = seq + i;
        e->key = op_key(b, i, &e->type, &e->value);
        if (c->n == INSERT_GROUP) {
            mem_add_many(c->mem, c->e, c->n);
            c->n = 0;
        }
    }
    if (c->n) mem_add_many(c->mem, c->e, c->n);
}

eng_status batch_insert_into(const eng_batch *cb, memtable *mem)
{
    insert_ctx c = {.mem = mem, .n = 0};
    /* A batch read through its point index while it grew (a pipeline's):
     * bring the index up to its last op and insert only the newest ones --
     * from the ops it holds parsed, even when none is shadowed: parsing and
     * validating the whole batch again costs more than the catch-up. */
    eng_batch *b = (eng_batch *)cb;
    if (b->n_hashed && (b->n_hashed == b->count || points_catch_up(b, b->so))) {
        insert_newest(b, &c);
        return ENG_OK;
    }
    if (insert_small(b, &c)) return ENG_OK;
    eng_status s = batch_iterate(b, insert_op, &c); /* validates first */
    if (s == ENG_OK && c.n) mem_add_many(mem, c.e, c.n);
    return s;
}

/* ---- Replication (engine.h) -------------------------------------------- */

const char *eng_batch_data(eng_batch *b, size_t *len)
{
    enc_fixed32(b->rep.data + 8, b->count); /* the header's count is kept lazily */
    slice rep = batch_contents(b);
    *len = rep.size;
    return rep.data;
}

static eng_status append_op(void *ctx, uint64_t seq, int type, slice key, slice value)
{
    (void)seq;
    eng_batch *b = ctx;
    if (type == ENG_TYPE_VALUE)
        eng_batch_put(b, key.data, key.size, value.data, value.size);
    else if (type == ENG_TYPE_DELETION)
        eng_batch_delete(b, key.data, key.size);
    else
        eng_batch_delete_range(b, key.data, key.size, value.data, value.size);
    return ENG_OK;
}

eng_status eng_batch_append_data(eng_batch *b, const char *p, size_t n)
{
    eng_batch *src;
    eng_status s = batch_from_contents((slice){p, n}, &src);
    if (s != ENG_OK) return s;
    s = batch_iterate(src, append_op, b); /* validated: adds every op or none */
    eng_batch_free(src);
    return s;
}
