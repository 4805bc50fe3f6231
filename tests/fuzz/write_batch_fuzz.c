/*
 * write_batch_fuzz.c -- libFuzzer target for decoding write batches
 * (write_batch.c), the payload of every log record replayed at recovery.
 *
 * The input is an encoded batch (write_batch.h):
 *
 *   batch     = sequence (fixed64) | count (fixed32) | op*
 *   op        = 0x01 varstring varstring | 0x00 varstring | 0x02 varstring varstring
 *   varstring = varint32 length | bytes
 *
 * A reference decoder written here from that grammar decides whether the
 * input is valid (and the sequence range allows count ops). Checked:
 *   - batch_from_contents accepts exactly what the reference accepts;
 *   - batch_iterate on the result yields exactly the reference's ops, with
 *     consecutive sequence numbers, every slice inside the batch;
 *   - count, sequence, contents and has_range_deletes agree;
 *   - a callback error stops the iteration at once and is returned;
 *   - re-encoding the ops with eng_batch_put/delete/delete_range (into an
 *     indexed batch, half of the time) gives a batch that iterates to the
 *     same ops, and inserting it into a memtable adds every op;
 *   - a savepoint rollback to the middle of the rebuilt batch leaves
 *     exactly the ops before it.
 * The input is copied into a buffer of exactly its size so ASan reports
 * any read past it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/dbformat.h"
#include "engine/memtable.h"
#include "engine/write_batch.h"

typedef struct op {
    int type;
    slice k, v;
} op;

typedef struct ops {
    op *v;
    size_t n, cap;
} ops;

static void ops_push(ops *o, int type, slice k, slice v)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? 2 * o->cap : 16;
        o->v = realloc(o->v, o->cap * sizeof(op));
        if (!o->v) abort();
    }
    o->v[o->n++] = (op){type, k, v};
}

/* A varint of at most 10 bytes; its value must fit 32 bits. */
static int ref_varstring(const char **p, const char *end, slice *s)
{
    uint32_t n;
    const char *q = dec_varint32(*p, end, &n);
    if (!q || (size_t)(end - q) < n) return 0;
    *s = slice_make(q, n);
    *p = q + n;
    return 1;
}

/* The reference decoder: 1 and the ops when [d, d + n) is a valid batch. */
static int ref_decode(const char *d, size_t n, ops *out)
{
    out->n = 0;
    if (n < BATCH_HEADER_SIZE) return 0;
    uint64_t seq = dec_fixed64(d);
    uint32_t count = dec_fixed32(d + 8);
    const char *p = d + BATCH_HEADER_SIZE, *end = d + n;
    while (p < end) {
        int type = (unsigned char)*p++;
        slice k, v = slice_make("", 0);
        if (type != ENG_TYPE_VALUE && type != ENG_TYPE_DELETION && type != ENG_TYPE_RANGE_DELETION)
            return 0;
        if (!ref_varstring(&p, end, &k)) return 0;
        if (type != ENG_TYPE_DELETION && !ref_varstring(&p, end, &v)) return 0;
        ops_push(out, type, k, v);
    }
    if (out->n != count) return 0;
    /* every op's sequence number must be a valid one */
    return seq <= ENG_MAX_SEQUENCE && count <= ENG_MAX_SEQUENCE - seq;
}

static int same_slice(slice a, slice b)
{
    return a.size == b.size && (a.size == 0 || memcmp(a.data, b.data, a.size) == 0);
}

typedef struct check_ctx {
    const ops *want;
    size_t i;
    uint64_t seq;
    slice rep;      /* every key and value must lie inside it (or be empty) */
    size_t stop_at; /* return ENG_INVALID at this op */
} check_ctx;

static int inside(slice s, slice rep)
{
    return s.size == 0 || (s.data >= rep.data && s.data + s.size <= rep.data + rep.size);
}

static eng_status check_op(void *arg, uint64_t seq, int type, slice key, slice value)
{
    check_ctx *c = arg;
    if (c->i >= c->want->n) abort();
    const op *w = &c->want->v[c->i];
    if (seq != c->seq + c->i || type != w->type) abort();
    if (!same_slice(key, w->k) || !same_slice(value, w->v)) abort();
    if (c->rep.data && (!inside(key, c->rep) || !inside(value, c->rep))) abort();
    if (c->i++ == c->stop_at) return ENG_INVALID;
    return ENG_OK;
}

/* Iterates b and checks it against want; stop_at as in check_ctx. */
static void check_batch(const eng_batch *b, const ops *want, uint64_t seq, size_t stop_at,
                        int check_inside)
{
    check_ctx c = {want, 0, seq, slice_make(NULL, 0), stop_at};
    if (check_inside) c.rep = batch_contents(b);
    eng_status s = batch_iterate(b, check_op, &c);
    if (stop_at < want->n) {
        if (s != ENG_INVALID || c.i != stop_at + 1) abort();
    } else if (s != ENG_OK || c.i != want->n) {
        abort();
    }
}

static void add(eng_batch *b, const op *o)
{
    if (o->type == ENG_TYPE_VALUE)
        eng_batch_put(b, o->k.data, o->k.size, o->v.data, o->v.size);
    else if (o->type == ENG_TYPE_DELETION)
        eng_batch_delete(b, o->k.data, o->k.size);
    else
        eng_batch_delete_range(b, o->k.data, o->k.size, o->v.data, o->v.size);
}

/* Rebuilds the batch from its ops through the public API and checks the
 * copy, a savepoint rollback, and insertion into a memtable. */
static void rebuild(const ops *want, uint64_t seq, int indexed, size_t cut)
{
    eng_batch *b = eng_batch_new(indexed);
    size_t nrange = 0;
    for (size_t i = 0; i < want->n; i++) {
        if (i == cut) eng_batch_set_savepoint(b);
        add(b, &want->v[i]);
        nrange += want->v[i].type == ENG_TYPE_RANGE_DELETION;
    }
    batch_set_sequence(b, seq);
    if (eng_batch_count(b) != want->n || batch_sequence(b) != seq) abort();
    if (batch_has_range_deletes(b) != (nrange > 0)) abort();
    check_batch(b, want, seq, SIZE_MAX, 1);

    memtable *m = mem_new_sized(4096);
    if (batch_insert_into(b, m) != ENG_OK) abort();
    if (mem_entries(m) != want->n || mem_check(m) != 0) abort(); /* every op, ranges too */
    if (mem_range_deletions(m) != nrange) abort();
    if (indexed && want->n && !batch_index(b)) abort();
    mem_unref(m);

    if (cut < want->n) {
        if (eng_batch_rollback(b) != ENG_OK) abort();
        ops head = {want->v, cut, cut};
        if (eng_batch_count(b) != cut) abort();
        check_batch(b, &head, seq, SIZE_MAX, 1);
    }
    eng_batch_free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *rep = malloc(size ? size : 1); /* exact size: ASan sees overreads */
    if (!rep) abort();
    memcpy(rep, data, size);
    ops want = {0};
    int valid = ref_decode(rep, size, &want);

    eng_batch *b = NULL;
    eng_status s = batch_from_contents(slice_make(rep, size), &b);
    if (valid != (s == ENG_OK)) abort();
    if (s != ENG_OK) {
        if (s != ENG_CORRUPTION || b) abort();
        free(want.v);
        free(rep);
        return 0;
    }
    uint64_t seq = dec_fixed64(rep);
    slice c = batch_contents(b);
    if (c.size != size || memcmp(c.data, rep, size) != 0) abort();
    if (eng_batch_count(b) != want.n || batch_sequence(b) != seq) abort();
    if (eng_batch_byte_size(b) != size) abort();
    size_t nrange = 0;
    for (size_t i = 0; i < want.n; i++)
        nrange += want.v[i].type == ENG_TYPE_RANGE_DELETION;
    if (batch_has_range_deletes(b) != (nrange > 0)) abort();
    if (batch_index(b) != NULL) abort(); /* decoded batches are not indexed */

    /* the ops must point into the decoded batch's own copy */
    check_batch(b, &want, seq, SIZE_MAX, 0);
    size_t stop_at = want.n ? (size_t)(data[size - 1]) % want.n : 0;
    check_batch(b, &want, seq, stop_at, 0);

    /* compare against the reference using the batch's bytes from now on */
    ops mine = {0};
    ref_decode(c.data, c.size, &mine);
    check_batch(b, &mine, seq, SIZE_MAX, 1);
    free(mine.v);
    eng_batch_free(b);

    rebuild(&want, seq, data[size - 1] & 1, stop_at);
    free(want.v);
    free(rep);
    return 0;
}
