/*
 * ks_stream_id.c -- stream ids (ks_xid: compare, step, format), their
 * big- and little-endian encodings, the member keys built from them
 * ('E' entries, 'N' nodes, 'H' group data) and the stream header's codec
 * (the record's ext). The grammar is in ks_stream_int.h. Apart from
 * ks_stream.c because every stream file uses them and they know nothing
 * of reads or writes.
 */

#include "keyspace/ks_stream_int.h"

/* ---- Ids ------------------------------------------------------------------ */

int ks_xid_cmp(const ks_xid *a, const ks_xid *b)
{
    if (a->ms != b->ms) return a->ms < b->ms ? -1 : 1;
    if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
    return 0;
}

int ks_xid_incr(ks_xid *a)
{
    if (a->seq != UINT64_MAX) return a->seq++, 0;
    if (a->ms == UINT64_MAX) return a->ms = a->seq = 0, -1;
    a->ms++;
    a->seq = 0;
    return 0;
}

int ks_xid_decr(ks_xid *a)
{
    if (a->seq) return a->seq--, 0;
    if (!a->ms) return a->ms = a->seq = UINT64_MAX, -1;
    a->ms--;
    a->seq = UINT64_MAX;
    return 0;
}

size_t ks_xid_format(const ks_xid *id, char *buf)
{
    size_t n = ks_u64_format(id->ms, buf);
    buf[n++] = '-';
    n += ks_u64_format(id->seq, buf + n);
    buf[n] = 0;
    return n;
}

void xs_put_id_be(char *p, const ks_xid *id)
{
    ks_put_be64(p, id->ms);
    ks_put_be64(p + 8, id->seq);
}

void xs_get_id_be(const char *p, ks_xid *id)
{
    id->ms = ks_get_be64(p);
    id->seq = ks_get_be64(p + 8);
}

void xs_put_id_le(char *p, const ks_xid *id)
{
    ks_put_le64(p, id->ms);
    ks_put_le64(p + 8, id->seq);
}

void xs_get_id_le(const char *p, ks_xid *id)
{
    id->ms = ks_get_le64(p);
    id->seq = ks_get_le64(p + 8);
}

size_t xs_entry_key(char *buf, const ks_xid *id)
{
    buf[0] = XS_TAG_ENTRY;
    xs_put_id_be(buf + 1, id);
    return 17;
}

size_t xs_node_key(char *buf, uint64_t node)
{
    buf[0] = XS_TAG_NODE;
    ks_put_be64(buf + 1, node);
    return 9;
}

size_t xs_gdata_key(char *buf, uint64_t gid, char sub)
{
    buf[0] = XS_TAG_GDATA;
    ks_put_be64(buf + 1, gid);
    buf[9] = sub;
    return 10;
}

/* ---- The header -------------------------------------------------------------- */

/* The fields in stored order. */
#define HDR_FIELDS(h)                                                                              \
    {                                                                                              \
        &(h)->last.ms, &(h)->last.seq, &(h)->first.ms, &(h)->first.seq, &(h)->maxdel.ms,           \
            &(h)->maxdel.seq, &(h)->entries_added, &(h)->groups, &(h)->next_gid, &(h)->nodes,      \
            &(h)->first_node, &(h)->tail_node, &(h)->tail_first.ms, &(h)->tail_first.seq,          \
            &(h)->tail_last.ms, &(h)->tail_last.seq, &(h)->tail_total, &(h)->tail_live,            \
            &(h)->tail_bytes, &(h)->tail_fhash, &(h)->tail_nfields, &(h)->last_node                \
    }

/* A varint of at most 8 bytes (every field but a hash or an id near the
 * top) from one unaligned load when 8 bytes are there: the header is
 * parsed on every stream command, five of its fields are 6-byte
 * millisecond times. Else, and for longer ones, ks_get_varint. */
static inline const char *hdr_varint(const char *p, const char *end, uint64_t *v)
{
    if (p < end && !(*p & 0x80)) {
        *v = (unsigned char)*p;
        return p + 1;
    }
    if (end - p >= 8) {
        uint64_t w = ks_get_le64(p);
        uint64_t stops = ~w & UINT64_C(0x8080808080808080);
        if (stops) {
            uint64_t low = stops & -stops; /* the last byte's stop bit */
            uint64_t x = w & ((low << 1) - 1);
            *v = (x & 0x7f) | (x >> 1 & UINT64_C(0x7f) << 7) | (x >> 2 & UINT64_C(0x7f) << 14) |
                 (x >> 3 & UINT64_C(0x7f) << 21) | (x >> 4 & UINT64_C(0x7f) << 28) |
                 (x >> 5 & UINT64_C(0x7f) << 35) | (x >> 6 & UINT64_C(0x7f) << 42) |
                 (x >> 7 & UINT64_C(0x7f) << 49);
            return p + __builtin_ctzll(low) / 8 + 1;
        }
    }
    return ks_get_varint(p, end, v);
}

int xs_hdr_parse(xs_hdr *h, const char *e, size_t n)
{
    uint64_t *f[XS_EXT_FIELDS] = HDR_FIELDS(h);
    const char *p = e, *end = e + n;
    for (int i = 0; i < XS_EXT_FIELDS; i++)
        if (!(p = hdr_varint(p, end, f[i]))) return -1;
    return p == end ? 0 : -1;
}

/* Bit i set when byte i of the n <= 64 bytes at e has its continuation
 * bit, 8 bytes at a time (each word's top bits gathered by a multiply). */
static uint64_t cont_bits(const char *e, size_t n)
{
    uint64_t c = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = ks_get_le64(e + i) & UINT64_C(0x8080808080808080);
        c |= w * UINT64_C(0x0002040810204081) >> 56 << i;
    }
    for (; i < n; i++)
        c |= (uint64_t)((unsigned char)e[i] >> 7) << i;
    return c;
}

int xs_hdr_valid(const char *e, size_t n)
{
    /* xs_hdr_parse's acceptance without the values: XS_EXT_FIELDS
     * varints of at most 10 bytes that end exactly at n, i.e. that many
     * bytes without the continuation bit, the last one among them, and no
     * run of 10 with it. */
    if (n >= 1 && n <= 64) {
        uint64_t c = cont_bits(e, n);
        uint64_t r2 = c & c >> 1, r4 = r2 & r2 >> 2, r8 = r4 & r4 >> 4, r10 = r8 & r2 >> 8;
        int stops = (int)n - __builtin_popcountll(c);
        return !r10 && !(c >> (n - 1) & 1) && stops == XS_EXT_FIELDS ? 0 : -1;
    }
    int fields = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        if (e[i] & 0x80) {
            if (++run == 10) return -1;
        } else {
            fields++;
            run = 0;
        }
    }
    return fields == XS_EXT_FIELDS && run == 0 ? 0 : -1;
}

size_t xs_hdr_write(const xs_hdr *h, char *e)
{
    xs_hdr t = *h;
    uint64_t *f[XS_EXT_FIELDS] = HDR_FIELDS(&t);
    char *p = e;
    for (int i = 0; i < XS_EXT_FIELDS; i++)
        p = ks_put_varint(p, *f[i]);
    return (size_t)(p - e);
}
