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

static size_t u64_format(uint64_t v, char *p)
{
    char t[21];
    size_t n = 0;
    do
        t[n++] = (char)('0' + v % 10);
    while (v /= 10);
    for (size_t i = 0; i < n; i++)
        p[i] = t[n - 1 - i];
    return n;
}

size_t ks_xid_format(const ks_xid *id, char *buf)
{
    size_t n = u64_format(id->ms, buf);
    buf[n++] = '-';
    n += u64_format(id->seq, buf + n);
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

int xs_hdr_parse(xs_hdr *h, const char *e, size_t n)
{
    uint64_t *f[XS_EXT_FIELDS] = HDR_FIELDS(h);
    const char *p = e, *end = e + n;
    for (int i = 0; i < XS_EXT_FIELDS; i++)
        if (!(p = ks_get_varint(p, end, f[i]))) return -1;
    return p == end ? 0 : -1;
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
