/*
 * ks_stream.c -- how a stream is stored: a big record whose ext is the
 * stream header, one engine key per entry under the stream's version,
 * keyed by id so XRANGE/XREAD are range reads; the stream row of the
 * type table; XADD, XRANGE, XDEL, XLEN, XSETID and the header for XINFO.
 * Ids, the member keys built from them and the header's codec are in
 * ks_stream_id.c.
 *
 * On-disk format (ENCODING.md, "Streams (type 6)"; ks_stream_int.h has
 * the grammar): 'd' db version 'E' ms:be64 seq:be64 -> node:varint then
 * the pairs as a packed hash body. Entries belong to *nodes*, which stand
 * for Redis's listpack nodes: XADD opens a new node exactly when Redis
 * would open a new listpack (stream-node-max-entries entries, deleted ones
 * included, or stream-node-max-bytes of listpack, whose size is computed
 * with listpack's own encoding rules), so `~` trimming removes what Redis
 * removes. The open (tail) node lives in the header; closed nodes have a
 * record 'N' node -> first id, last id, live count and the listpack state
 * the tail had, so that a closed node becomes the tail again when XDEL
 * empties the tail (Redis appends to its last listpack, whatever it is).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_stream_int.h"

/* ---- The stream row ------------------------------------------------------------ */

static const char *stream_encoding(const ks_meta *m, const ks_limits *lim)
{
    (void)m, (void)lim;
    return "stream";
}

static int stream_count(const ks_meta *m, uint64_t *n)
{
    *n = m->count;
    return 0;
}

static int stream_check(const ks_meta *m)
{
    return m->big && xs_hdr_valid(m->ext, m->extlen) == 0 ? 0 : -1;
}

const ks_type_ops ks_stream_type = {
    .type = KS_STREAM,
    .name = "stream",
    .encoding = stream_encoding,
    .count = stream_count,
    .check = stream_check,
    .copy = ks_copy_generic,
    .drop = ks_drop_generic,
    .repair = ks_repair_generic,
    .filter = ks_filter_generic,
    .fields = NULL,
};

/* ---- Opening and storing ---------------------------------------------------- */

static void opened(xs_stream *s)
{
    s->exists = s->m->type == KS_STREAM;
    if (s->exists) {
        xs_hdr_parse(&s->h, s->m->ext, s->m->extlen); /* checked at read */
        s->length = s->m->count;
    } else {
        memset(&s->h, 0, sizeof(s->h));
        s->length = 0;
    }
    s->dirty = 0;
}

ks_status xs_open_read(ks_ctx *c, const char *key, size_t klen, xs_stream *s)
{
    memset(s, 0, sizeof(*s));
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_STREAM, &s->rm);
    if (st != KS_OK) return st;
    s->m = &s->rm;
    opened(s);
    return KS_OK;
}

ks_status xs_open_write(ks_ctx *c, const char *key, size_t klen, xs_stream *s)
{
    memset(s, 0, sizeof(*s));
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_STREAM, &s->w);
    if (st != KS_OK) return st;
    s->writing = 1;
    s->m = &s->w.m;
    opened(s);
    return KS_OK;
}

void xs_create(ks_ctx *c, xs_stream *s)
{
    memset(&s->h, 0, sizeof(s->h));
    s->length = 0;
    s->h.next_gid = 1;
    s->version = ks_new_version(c); /* KS-E2 */
    s->exists = 1;
    s->created = 1;
    s->dirty = 1;
}

uint64_t xs_version(const xs_stream *s)
{
    return s->created ? s->version : s->m->version;
}

ks_status xs_store(xs_stream *s)
{
    if (!s->dirty) return KS_OK;
    char ext[XS_EXT_MAX], body[KS_BIG_BODY_MAX];
    size_t extlen = xs_hdr_write(&s->h, ext);
    ks_value v = {KS_STREAM, 1, 0, s->created ? 0 : s->m->expire, NULL, 0, NULL, 0};
    ks_big_body(&v, body, xs_version(s), s->length, ext, extlen);
    s->dirty = 0;
    return ks_write_put(&s->w, &v);
}

void xs_close(xs_stream *s)
{
    if (s->writing)
        ks_write_end(&s->w);
    else if (s->m)
        ks_meta_free(&s->rm);
    s->m = NULL;
}

/* ---- Entries ------------------------------------------------------------------ */

int xs_entry_parse(const char *v, size_t vl, uint64_t *node, ks_fvec *fv)
{
    const char *p = ks_get_varint(v, v + vl, node);
    if (!p) return -1;
    return ks_packed_parse(p, (size_t)(v + vl - p), fv);
}

static ks_status corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "stream encoding");
}

ks_status xs_entry_get(ks_ctx *c, xs_stream *s, const ks_xid *id, uint64_t *node, ks_fvec *fv,
                       char **owned)
{
    char k[17];
    size_t vl;
    *owned = NULL;
    eng_status es =
        ks_member_get(c, NULL, c->db, xs_version(s), k, xs_entry_key(k, id), owned, &vl);
    if (es == ENG_NOTFOUND) return KS_NOTFOUND;
    if (es != ENG_OK) return ks_engine_err(c, es, "stream read");
    uint64_t nd;
    if (xs_entry_parse(*owned, vl, &nd, fv) != 0) return corrupt(c);
    if (node) *node = nd;
    return KS_OK;
}

int xs_entry_exists(ks_ctx *c, xs_stream *s, const ks_xid *id, ks_status *st)
{
    char k[17], *v = NULL;
    size_t vl;
    eng_status es = ks_member_get(c, NULL, c->db, xs_version(s), k, xs_entry_key(k, id), &v, &vl);
    if (v) eng_free(v);
    if (es == ENG_OK) return 1;
    if (es != ENG_NOTFOUND) *st = ks_engine_err(c, es, "stream read");
    return 0;
}

ks_status xs_seek_entry(ks_ctx *c, xs_stream *s, const ks_xid *from, int rev, ks_xid *found_id,
                        uint64_t *found_node, int *found)
{
    ks_miter mi;
    char k[17];
    *found = 0;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    if (rev)
        ks_miter_seek_prev(&mi, k, xs_entry_key(k, from));
    else
        ks_miter_seek(&mi, k, xs_entry_key(k, from));
    ks_status st = KS_OK;
    if (ks_miter_valid(&mi)) {
        size_t sn, vn;
        const char *sfx = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn == 17 && sfx[0] == XS_TAG_ENTRY) {
            xs_get_id_be(sfx + 1, found_id);
            uint64_t nd = 0;
            if (!ks_get_varint(v, v + vn, &nd)) st = corrupt(c);
            if (found_node) *found_node = nd;
            *found = 1;
        }
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* ---- Lag (Redis's rules, t_stream.c) ------------------------------------------ */

static int id_zero(const ks_xid *a)
{
    return !a->ms && !a->seq;
}

int xs_range_has_tombstones(const xs_stream *s, const ks_xid *start)
{
    const xs_hdr *h = &s->h;
    if (!s->length || id_zero(&h->maxdel)) return 0;
    if (ks_xid_cmp(&h->first, &h->maxdel) > 0) return 0;
    ks_xid zero = {0, 0};
    if (!start) start = &zero;
    return ks_xid_cmp(start, &h->maxdel) <= 0;
}

long long xs_estimate_distance(const xs_stream *s, const ks_xid *id)
{
    const xs_hdr *h = &s->h;
    if (!h->entries_added) return 0;
    if (!s->length && ks_xid_cmp(id, &h->last) < 1) return (long long)h->entries_added;
    int cmp_last = ks_xid_cmp(id, &h->last);
    if (cmp_last == 0) return (long long)h->entries_added;
    if (cmp_last > 0) return KS_XENTRIES_READ_INVALID;
    int cmp_first = ks_xid_cmp(id, &h->first);
    if (id_zero(&h->maxdel) || ks_xid_cmp(&h->maxdel, &h->first) < 0) {
        if (cmp_first < 0) return (long long)(h->entries_added - s->length);
        if (cmp_first == 0) return (long long)(h->entries_added - s->length + 1);
    }
    return KS_XENTRIES_READ_INVALID;
}

/* ---- Listpack sizes: when Redis opens a new node ------------------------------ */

static uint64_t lp_backlen(uint64_t l)
{
    return l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
}

uint64_t xs_lp_int_size(int64_t v)
{
    uint64_t l = v >= 0 && v <= 127                        ? 1
                 : v >= -4096 && v <= 4095                 ? 2
                 : v >= -32768 && v <= 32767               ? 3
                 : v >= -8388608 && v <= 8388607           ? 4
                 : v >= -2147483648LL && v <= 2147483647LL ? 5
                                                           : 9;
    return l + lp_backlen(l);
}

static uint64_t lp_str_size(const char *p, size_t n)
{
    long long v;
    if (n && n <= 20 && ks_string2ll(p, n, &v)) return xs_lp_int_size(v);
    uint64_t l = n < 64 ? 1 + n : n < 4096 ? 2 + n : 5 + n;
    return l + lp_backlen(l);
}

/* Bytes of the tail listpack as Redis has it. */
static uint64_t tail_lp_bytes(const xs_hdr *h)
{
    return h->tail_bytes + xs_lp_int_size((int64_t)h->tail_live) +
           xs_lp_int_size((int64_t)(h->tail_total - h->tail_live));
}

uint64_t xs_fields_hash(const ks_field *fv, size_t n)
{
    uint64_t x = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < 8; j++)
            x = (x ^ ((fv[i].fl >> (8 * j)) & 0xff)) * 1099511628211ull;
        for (size_t j = 0; j < fv[i].fl; j++)
            x = (x ^ (unsigned char)fv[i].f[j]) * 1099511628211ull;
    }
    return x;
}

/* Closes the tail node: its record keeps its ids and live count, and the
 * listpack state (total, bytes, master fields) for xs_tail_reopen. */
void xs_tail_close(ks_ctx *c, xs_stream *s)
{
    xs_hdr *h = &s->h;
    if (!h->tail_total) return;
    char k[9], v[XS_NODE_REC_LEN];
    xs_put_id_le(v, &h->tail_first);
    xs_put_id_le(v + 16, &h->tail_last);
    ks_put_le64(v + 32, h->tail_live);
    ks_put_le64(v + 40, h->tail_total);
    ks_put_le64(v + 48, h->tail_bytes);
    ks_put_le64(v + 56, h->tail_fhash);
    ks_put_le64(v + 64, h->tail_nfields);
    ks_member_put(c, c->db, xs_version(s), k, xs_node_key(k, h->tail_node), v, sizeof(v));
    h->tail_total = 0;
}

ks_status xs_tail_reopen(ks_ctx *c, xs_stream *s)
{
    xs_hdr *h = &s->h;
    ks_miter mi;
    char k[9];
    ks_status st = KS_OK;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    ks_miter_seek_prev(&mi, k, xs_node_key(k, h->tail_node));
    size_t sn, vn;
    const char *sfx = ks_miter_valid(&mi) ? ks_miter_suffix(&mi, &sn) : NULL;
    if (sfx && sn == 9 && sfx[0] == XS_TAG_NODE && ks_get_be64(sfx + 1) < h->tail_node) {
        const char *v = ks_miter_value(&mi, &vn);
        uint64_t node = ks_get_be64(sfx + 1);
        if (vn == XS_NODE_REC_LEN) {
            xs_get_id_le(v, &h->tail_first);
            xs_get_id_le(v + 16, &h->tail_last);
            h->tail_live = ks_get_le64(v + 32);
            h->tail_total = ks_get_le64(v + 40);
            h->tail_bytes = ks_get_le64(v + 48);
            h->tail_fhash = ks_get_le64(v + 56);
            h->tail_nfields = ks_get_le64(v + 64);
            h->tail_node = node;
            ks_member_del(c, c->db, xs_version(s), k, xs_node_key(k, node));
        } else if (vn != XS_NODE_REC_OLD_LEN) {
            st = corrupt(c);
        }
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* Accounts for entry id with fields fv in the node Redis would put it in;
 * returns that node. */
static uint64_t node_append(ks_ctx *c, xs_stream *s, const ks_xid *id, const ks_field *fv, size_t n,
                            uint64_t totelelen)
{
    xs_hdr *h = &s->h;
    const ks_limits *lim = ks_get_limits(c->ks);
    uint64_t maxb = (uint64_t)lim->stream_node_max_bytes;
    if (maxb == 0 || maxb > XS_LISTPACK_MAX_SIZE) maxb = XS_LISTPACK_MAX_SIZE;
    if (h->tail_total) {
        int full = tail_lp_bytes(h) + totelelen >= maxb ||
                   (lim->stream_node_max_entries &&
                    h->tail_total >= (uint64_t)lim->stream_node_max_entries);
        if (full) xs_tail_close(c, s);
    }
    uint64_t fh = xs_fields_hash(fv, n);
    int same = 0;
    if (!h->tail_total) {
        h->tail_node = ++h->last_node;
        h->tail_first = *id;
        h->tail_live = 0;
        h->tail_fhash = fh;
        h->tail_nfields = n;
        h->nodes++;
        if (!h->first_node) h->first_node = h->tail_node;
        h->tail_bytes = 7 + xs_lp_int_size((int64_t)n) + xs_lp_int_size(0);
        for (size_t i = 0; i < n; i++)
            h->tail_bytes += lp_str_size(fv[i].f, fv[i].fl);
        same = 1;
    } else {
        same = h->tail_nfields == n && h->tail_fhash == fh;
    }
    uint64_t b = xs_lp_int_size(same ? 2 : 0) +
                 xs_lp_int_size((int64_t)(id->ms - h->tail_first.ms)) +
                 xs_lp_int_size((int64_t)(id->seq - h->tail_first.seq));
    if (!same) b += xs_lp_int_size((int64_t)n);
    for (size_t i = 0; i < n; i++) {
        if (!same) b += lp_str_size(fv[i].f, fv[i].fl);
        b += lp_str_size(fv[i].v, fv[i].vl);
    }
    b += xs_lp_int_size((int64_t)(n + 3 + (same ? 0 : n + 1)));
    h->tail_bytes += b;
    h->tail_total++;
    h->tail_live++;
    h->tail_last = *id;
    return h->tail_node;
}

/* ---- XADD -------------------------------------------------------------------- */

static ks_status xadd_id(ks_ctx *c, const xs_hdr *h, const ks_xadd_args *a, ks_xid *id)
{
    if (!a->id_given) {
        uint64_t ms = (uint64_t)c->now_ms;
        if (ms > h->last.ms) {
            *id = (ks_xid){ms, 0};
        } else {
            *id = h->last;
            ks_xid_incr(id);
        }
    } else if (a->seq_given) {
        *id = a->id;
    } else if (h->last.ms == a->id.ms) {
        if (h->last.seq == UINT64_MAX)
            return ks_err_msg(c, "ERR The ID specified in XADD is equal or smaller than the "
                                 "target stream top item");
        *id = (ks_xid){h->last.ms, h->last.seq + 1};
    } else {
        *id = (ks_xid){a->id.ms, 0};
    }
    if (ks_xid_cmp(id, &h->last) <= 0)
        return ks_err_msg(c, "ERR The ID specified in XADD is equal or smaller than the target "
                             "stream top item");
    return KS_OK;
}

/* Puts entry id of node with the pairs fv[0..n) (their encoded size
 * pairs_size) in c's batch: node:varint n:varint then {flen f vlen v}. */
static ks_status entry_put(ks_ctx *c, xs_stream *s, const ks_xid *id, uint64_t node,
                           const ks_field *fv, size_t n, size_t pairs_size)
{
    size_t vsize = pairs_size + ks_varint_len(node) + ks_varint_len(n);
    char *val = malloc(vsize), *p = val;
    if (!val) return ks_oom(c);
    p = ks_put_varint(p, node);
    p = ks_put_varint(p, n);
    for (size_t i = 0; i < n; i++) {
        p = ks_put_varint(p, fv[i].fl);
        memcpy(p, fv[i].f, fv[i].fl);
        p += fv[i].fl;
        p = ks_put_varint(p, fv[i].vl);
        memcpy(p, fv[i].v, fv[i].vl);
        p += fv[i].vl;
    }
    char k[17];
    ks_member_put(c, c->db, xs_version(s), k, xs_entry_key(k, id), val, vsize);
    free(val);
    return KS_OK;
}

ks_status ks_xadd(ks_ctx *c, const char *key, size_t klen, const ks_xadd_args *a,
                  const ks_field *fv, size_t n, ks_xid *id, uint64_t *trimmed)
{
    xs_stream s;
    *trimmed = 0;
    ks_status st = xs_open_write(c, key, klen, &s);
    if (st != KS_OK) return st;
    if (!s.exists) {
        if (a->nomkstream) {
            xs_close(&s);
            return KS_NOTFOUND;
        }
        xs_create(c, &s);
    }
    xs_hdr *h = &s.h;
    if (h->last.ms == UINT64_MAX && h->last.seq == UINT64_MAX) {
        st = ks_err_msg(c, "ERR The stream has exhausted the last possible ID, unable to add "
                           "more items");
        goto out;
    }
    if ((st = xadd_id(c, h, a, id)) != KS_OK) goto out;
    uint64_t tot = 0;
    size_t vsize = 0;
    for (size_t i = 0; i < n; i++) {
        tot += fv[i].fl + fv[i].vl;
        vsize += ks_varint_len(fv[i].fl) + fv[i].fl + ks_varint_len(fv[i].vl) + fv[i].vl;
    }
    if (tot > XS_LISTPACK_MAX_SIZE) {
        st = ks_err_msg(c, "ERR Elements are too large to be stored");
        goto out;
    }
    uint64_t node = node_append(c, &s, id, fv, n, tot);
    if ((st = entry_put(c, &s, id, node, fv, n, vsize)) != KS_OK) goto out;
    s.length++;
    h->entries_added++;
    h->last = *id;
    if (s.length == 1) {
        h->first = *id;
        h->first_node = node;
    }
    s.dirty = 1;
    if (a->trim.strategy != KS_XTRIM_NONE) st = xs_trim(c, &s, &a->trim, trimmed);
    if (st == KS_OK) st = xs_store(&s);
out:
    xs_close(&s);
    return st;
}

/* ---- Reads ------------------------------------------------------------------- */

ks_status ks_xlen(ks_ctx *c, const char *key, size_t klen, uint64_t *n)
{
    xs_stream s;
    *n = 0;
    ks_status st = xs_open_read(c, key, klen, &s);
    if (st != KS_OK) return st;
    *n = s.length;
    xs_close(&s);
    return KS_OK;
}

/* Walks the entries of s from start to end (rev: backwards), calling fn
 * for up to count (0: all). */
static ks_status xs_range(ks_ctx *c, xs_stream *s, const ks_xid *start, const ks_xid *end,
                          uint64_t count, int rev, ks_xentry_fn fn, void *arg, uint64_t *n)
{
    *n = 0;
    if (!s->length || ks_xid_cmp(start, end) > 0) return KS_OK;
    /* Never seek below the first entry: trimmed entries leave tombstones
     * in front of it until compaction. */
    ks_xid from = *start;
    if (!rev && ks_xid_cmp(&from, &s->h.first) < 0) from = s->h.first;
    ks_miter mi;
    char k[17];
    ks_status st = KS_OK;
    ks_fvec fv;
    ks_fvec_init(&fv);
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    if (rev)
        ks_miter_seek_prev(&mi, k, xs_entry_key(k, end));
    else
        ks_miter_seek(&mi, k, xs_entry_key(k, &from));
    while (ks_miter_valid(&mi) && (!count || *n < count)) {
        size_t sn, vn;
        const char *sfx = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn != 17 || sfx[0] != XS_TAG_ENTRY) break;
        ks_xid id;
        xs_get_id_be(sfx + 1, &id);
        if (rev ? ks_xid_cmp(&id, start) < 0 : ks_xid_cmp(&id, end) > 0) break;
        uint64_t node;
        fv.n = 0;
        if (xs_entry_parse(v, vn, &node, &fv) != 0) {
            st = corrupt(c);
            break;
        }
        fn(arg, &id, fv.v, fv.n, 1);
        ++*n;
        /* Stop at the last entry there can be instead of stepping to the
         * next key: what follows may be a run of tombstones (the node
         * records of a trimmed front, acknowledged PEL entries). */
        if ((count && *n == count) ||
            (rev ? ks_xid_cmp(&id, start) <= 0 || ks_xid_cmp(&id, &s->h.first) <= 0
                 : ks_xid_cmp(&id, end) >= 0 || ks_xid_cmp(&id, &s->h.last) >= 0))
            break;
        if (rev)
            ks_miter_prev(&mi);
        else
            ks_miter_next(&mi);
    }
    ks_fvec_free(&fv);
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

ks_status ks_xrange(ks_ctx *c, const char *key, size_t klen, const ks_xid *start, const ks_xid *end,
                    uint64_t count, int rev, ks_xentry_fn fn, void *arg, uint64_t *n)
{
    xs_stream s;
    *n = 0;
    ks_status st = xs_open_read(c, key, klen, &s);
    if (st != KS_OK) return st;
    st = xs_range(c, &s, start, end, count, rev, fn, arg, n);
    xs_close(&s);
    return st;
}

ks_status xs_range_opened(ks_ctx *c, xs_stream *s, const ks_xid *start, const ks_xid *end,
                          uint64_t count, int rev, ks_xentry_fn fn, void *arg, uint64_t *n)
{
    return xs_range(c, s, start, end, count, rev, fn, arg, n);
}

ks_status ks_xinfo_stream(ks_ctx *c, const char *key, size_t klen, ks_xinfo *out)
{
    xs_stream s;
    ks_status st = xs_open_read(c, key, klen, &s);
    if (st != KS_OK) return st;
    const xs_hdr *h = &s.h;
    *out = (ks_xinfo){.length = s.length,
                      .nodes = h->nodes,
                      .engine_keys = s.length + h->nodes - (h->tail_total ? 1 : 0),
                      .last_id = h->last,
                      .max_deleted = h->maxdel,
                      .first_id = h->first,
                      .entries_added = h->entries_added,
                      .groups = h->groups};
    xs_close(&s);
    return KS_OK;
}

/* ---- XDEL -------------------------------------------------------------------- */

/* The last live entry's id (Redis's streamLastValidID). REQUIRES: length. */
static ks_status last_valid(ks_ctx *c, xs_stream *s, ks_xid *id)
{
    ks_xid max = {UINT64_MAX, UINT64_MAX};
    int found;
    ks_status st = xs_seek_entry(c, s, &max, 1, id, NULL, &found);
    if (st == KS_OK && !found) st = corrupt(c);
    return st;
}

/* After the first entry went: the next one becomes first (or the stream
 * is empty). */
static ks_status refresh_first(ks_ctx *c, xs_stream *s, const ks_xid *from)
{
    if (!s->length) {
        s->h.first = (ks_xid){0, 0};
        s->h.first_node = 0;
        return KS_OK;
    }
    int found;
    ks_status st = xs_seek_entry(c, s, from, 0, &s->h.first, &s->h.first_node, &found);
    if (st == KS_OK && !found) st = corrupt(c);
    return st;
}

ks_status xs_node_drop(ks_ctx *c, xs_stream *s, uint64_t node, uint64_t n)
{
    xs_hdr *h = &s->h;
    if (h->tail_total && node == h->tail_node) {
        h->tail_live -= n;
        if (h->tail_live == 0) { /* Redis frees the emptied listpack */
            h->tail_total = 0;
            h->nodes--;
            if (h->nodes) return xs_tail_reopen(c, s);
        }
        return KS_OK;
    }
    char k[9], *v = NULL;
    size_t vl, kn = xs_node_key(k, node);
    eng_status es = ks_member_get(c, NULL, c->db, xs_version(s), k, kn, &v, &vl);
    if (es != ENG_OK || (vl != XS_NODE_REC_LEN && vl != XS_NODE_REC_OLD_LEN)) {
        if (v) eng_free(v);
        return es == ENG_OK || es == ENG_NOTFOUND ? corrupt(c) : ks_engine_err(c, es, "stream");
    }
    uint64_t live = ks_get_le64(v + 32);
    if (live <= n) {
        ks_member_del(c, c->db, xs_version(s), k, kn);
        h->nodes--;
    } else {
        ks_put_le64(v + 32, live - n);
        ks_member_put(c, c->db, xs_version(s), k, kn, v, vl);
    }
    eng_free(v);
    return KS_OK;
}

ks_status ks_xdel(ks_ctx *c, const char *key, size_t klen, const ks_xid *ids, size_t n,
                  uint64_t *deleted)
{
    xs_stream s;
    *deleted = 0;
    ks_status st = xs_open_write(c, key, klen, &s);
    if (st != KS_OK) return st;
    if (!s.exists) {
        xs_close(&s);
        return KS_NOTFOUND;
    }
    int first_gone = 0;
    for (size_t i = 0; i < n && st == KS_OK; i++) {
        char k[17], *v = NULL;
        size_t vl, kn = xs_entry_key(k, &ids[i]);
        eng_status es = ks_member_get(c, NULL, c->db, xs_version(&s), k, kn, &v, &vl);
        if (es == ENG_NOTFOUND) continue;
        if (es != ENG_OK) {
            st = ks_engine_err(c, es, "stream read");
            break;
        }
        uint64_t node = 0;
        if (!ks_get_varint(v, v + vl, &node)) st = corrupt(c);
        eng_free(v);
        if (st != KS_OK) break;
        ks_member_del(c, c->db, xs_version(&s), k, kn);
        st = xs_node_drop(c, &s, node, 1);
        s.length--;
        ++*deleted;
        if (ks_xid_cmp(&ids[i], &s.h.first) == 0) first_gone = 1;
        if (ks_xid_cmp(&ids[i], &s.h.maxdel) > 0) s.h.maxdel = ids[i];
    }
    if (st == KS_OK && *deleted) {
        s.dirty = 1;
        if (!s.length || first_gone) st = refresh_first(c, &s, &s.h.first);
        if (st == KS_OK) st = xs_store(&s);
    }
    xs_close(&s);
    return st;
}

ks_status xs_refresh_first(ks_ctx *c, xs_stream *s, const ks_xid *from)
{
    return refresh_first(c, s, from);
}

/* ---- XTRIM, XSETID ------------------------------------------------------------ */

ks_status ks_xtrim(ks_ctx *c, const char *key, size_t klen, const ks_xtrim_args *t,
                   uint64_t *deleted)
{
    xs_stream s;
    *deleted = 0;
    ks_status st = xs_open_write(c, key, klen, &s);
    if (st != KS_OK) return st;
    if (!s.exists) {
        xs_close(&s);
        return KS_NOTFOUND;
    }
    st = xs_trim(c, &s, t, deleted);
    if (st == KS_OK) st = xs_store(&s);
    xs_close(&s);
    return st;
}

ks_status ks_xsetid(ks_ctx *c, const char *key, size_t klen, const ks_xid *last,
                    long long entries_added, const ks_xid *max_deleted)
{
    xs_stream s;
    ks_status st = xs_open_write(c, key, klen, &s);
    if (st != KS_OK) return st;
    if (!s.exists) {
        xs_close(&s);
        return KS_NOTFOUND;
    }
    if (s.length) {
        ks_xid maxid;
        if ((st = last_valid(c, &s, &maxid)) != KS_OK) goto out;
        if (ks_xid_cmp(last, &maxid) < 0) {
            st = ks_err_msg(c, "ERR The ID specified in XSETID is smaller than the target stream "
                               "top item");
            goto out;
        }
        if (entries_added != -1 && s.length > (uint64_t)entries_added) {
            st = ks_err_msg(c, "ERR The entries_added specified in XSETID is smaller than the "
                               "target stream length");
            goto out;
        }
    }
    s.h.last = *last;
    if (entries_added != -1) s.h.entries_added = (uint64_t)entries_added;
    if (max_deleted && !id_zero(max_deleted)) s.h.maxdel = *max_deleted;
    s.dirty = 1;
    st = xs_store(&s);
out:
    xs_close(&s);
    return st;
}
