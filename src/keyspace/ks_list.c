/*
 * ks_list.c -- lists: the list row of the type table, packed lists, and
 * the data work of the list commands (LPUSH ... LMOVE) on either encoding;
 * big lists' chunks are ks_list_big.c's. Replies and argument parsing are
 * the server's (cmd_list.c).
 *
 * On-disk format (ENCODING.md, "Lists"):
 *   packed body: strs (varint count, then varint length + bytes per item),
 *                items head first
 *   big body:    version le64, count le64, head le64 (chunks: ks_list_big.c)
 * A list is packed while its body is within list-max-listpack-size; it
 * turns big in the write that outgrows it and never turns back (OBJECT
 * ENCODING is always quicklist, as Redis 7.0). A packed list is parsed
 * whole (at most its limit of bytes); pushes and pops copy the old entries
 * as one run instead of re-encoding them.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_list.h"

/* ---- The list row ------------------------------------------------------------- */

static const char *list_encoding(const ks_meta *m, const ks_limits *lim)
{
    (void)m;
    (void)lim;
    return "quicklist";
}

static int list_count(const ks_meta *m, uint64_t *n)
{
    if (m->big) return *n = m->count, 0;
    return ks_packed_count(m->payload, m->plen, n);
}

static int list_check(const ks_meta *m)
{
    if (!m->big) return 0;
    if (m->extlen != 8) return -1;
    return m->count > UINT64_MAX - ks_get_le64(m->ext) ? -1 : 0; /* KS-L1: no wrap */
}

const ks_type_ops ks_list_type = {
    .type = KS_LIST,
    .name = "list",
    .encoding = list_encoding,
    .count = list_count,
    .check = list_check,
    .copy = ks_copy_generic, /* positions are kept: KS-L1 holds for the copy */
    .drop = ks_drop_generic,
    .repair = ks_repair_generic,
    .filter = ks_filter_generic,
    .fields = NULL,
};

/* ---- Views ---------------------------------------------------------------------- */

static ks_status corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "list encoding");
}

static int packed_parse(const char *p, size_t len, ks_fvec *fv)
{
    const char *end = p + len;
    uint64_t cnt, il;
    if (!(p = ks_get_varint(p, end, &cnt))) return -1;
    for (uint64_t i = 0; i < cnt; i++) {
        const char *e = p;
        if (!(p = ks_get_varint(p, end, &il)) || il > (uint64_t)(end - p)) return -1;
        if (ks_fvec_push(fv, p, il, e, (size_t)(p + il - e)) != 0) return -1;
        p += il;
    }
    return p == end ? 0 : -1;
}

/* Parses a packed view's items (view_init with count_only leaves them). */
static ks_status view_parse(ks_ctx *c, const ks_meta *m, lview *lv)
{
    if (packed_parse(m->payload, m->plen, &lv->items) != 0) {
        ks_fvec_free(&lv->items);
        return corrupt(c);
    }
    lv->n = lv->items.n;
    return KS_OK;
}

/* m: a live list or type KS_NONE (an empty view). count_only: a packed
 * list's items are not parsed, only its count and its run of entries
 * (a push copies the run whole: parsing a body of thousands of small
 * items cost more than the rest of the push). */
static ks_status view_init(ks_ctx *c, const ks_meta *m, lview *lv, int count_only)
{
    memset(lv, 0, sizeof(*lv));
    ks_fvec_init(&lv->items);
    if (m->type == KS_NONE) return KS_OK;
    if (m->big) {
        lv->big = 1;
        lv->n = m->count;
        lv->version = m->version;
        lv->head = ks_get_le64(m->ext);
        return KS_OK;
    }
    const char *end = m->payload + m->plen;
    lv->run = ks_get_varint(m->payload, end, &lv->n);
    if (!lv->run || (lv->n == 0) != (lv->run == end)) return corrupt(c);
    lv->rn = (size_t)(end - lv->run);
    return count_only ? KS_OK : view_parse(c, m, lv);
}

static ks_status lst_open_as(ks_ctx *c, const char *key, size_t klen, lst *l, int count_only)
{
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_LIST, &l->w);
    if (st != KS_OK) return st;
    st = view_init(c, &l->w.m, &l->v, count_only);
    if (st != KS_OK) ks_write_end(&l->w);
    return st;
}

static ks_status lst_open(ks_ctx *c, const char *key, size_t klen, lst *l)
{
    return lst_open_as(c, key, klen, l, 0);
}

static void lst_close(lst *l)
{
    ks_fvec_free(&l->v.items);
    ks_write_end(&l->w);
}

static int lst_absent(const lst *l)
{
    return l->w.m.type == KS_NONE;
}

/* lst_open for a command that does nothing to a missing key: KS_NOTFOUND
 * (with nothing left open) when the key does not exist. */
static ks_status lst_open_existing(ks_ctx *c, const char *key, size_t klen, lst *l)
{
    ks_status st = lst_open(c, key, klen, l);
    if (st == KS_OK && lst_absent(l)) {
        lst_close(l);
        st = KS_NOTFOUND;
    }
    return st;
}

/* A list opened for a read. */
typedef struct lread {
    ks_meta m;
    lview v;
} lread;

static ks_status lread_open(ks_ctx *c, const char *key, size_t klen, lread *r)
{
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_LIST, &r->m);
    if (st != KS_OK) return st;
    st = view_init(c, &r->m, &r->v, 0);
    if (st != KS_OK) ks_meta_free(&r->m);
    return st;
}

static void lread_close(lread *r)
{
    ks_fvec_free(&r->v.items);
    ks_meta_free(&r->m);
}

/* Redis's index: negative counts from the tail. 1 and *i in [0, n) when
 * it names an item. */
static int norm_index(long long index, uint64_t n, uint64_t *i)
{
    if (index < 0) index += (long long)n;
    if (index < 0 || (uint64_t)index >= n) return 0;
    *i = (uint64_t)index;
    return 1;
}

/* Redis's range rules (addListRangeReply): *from and *k items, k 0 when
 * the range is empty. */
static void norm_range(long long start, long long end, uint64_t n, uint64_t *from, uint64_t *k)
{
    long long ln = (long long)n;
    if (start < 0) start += ln;
    if (end < 0) end += ln;
    if (start < 0) start = 0;
    *from = 0;
    *k = 0;
    if (start > end || start >= ln) return;
    if (end >= ln) end = ln - 1;
    *from = (uint64_t)start;
    *k = (uint64_t)(end - start + 1);
}

/* ---- Storing -------------------------------------------------------------------- */

/* Whether a packed body of n items and bytes bytes is within
 * list-max-listpack-size (ENCODING.md). */
static int fits_packed(const ks_ctx *c, uint64_t n, size_t bytes)
{
    long long fill = c->ks->limits.list_max_listpack_size;
    if (fill > 0) return n <= (uint64_t)fill && bytes <= KS_PACKED_MAX_BYTES;
    int level = fill == 0 ? 1 : (int)(-fill - 1);
    if (level > 4) level = 4;
    return bytes <= ((size_t)4096 << level);
}

static int64_t lst_expire(const lst *l)
{
    return lst_absent(l) ? 0 : l->w.m.expire;
}

/* Deletes the key (the list became empty). */
static ks_status lst_delete(lst *l)
{
    return lst_absent(l) ? KS_OK : ks_write_del(&l->w);
}

ks_status list_put_big(lst *l)
{
    if (l->v.n == 0) return lst_delete(l);
    char ext[8], body[KS_BIG_BODY_MAX];
    ks_put_le64(ext, l->v.head);
    ks_value v = {KS_LIST, 0, 0, lst_expire(l), NULL, 0, NULL, 0};
    ks_big_body(&v, body, l->v.version, l->v.n, ext, 8);
    return ks_write_put(&l->w, &v);
}

/* The list's new record: packed, n >= 1 items whose entries are the bytes
 * run[0..rn) (a run of the old entries, in the engine's buffer). */
static ks_status put_packed(lst *l, uint64_t n, const char *run, size_t rn)
{
    ks_ctx *c = l->w.c;
    size_t size = ks_varint_len(n) + rn;
    char *buf = ks_scratch(c->ks, KS_HDR_MAX + size);
    if (!buf) return ks_oom(c);
    char *p = ks_put_varint(buf + KS_HDR_MAX, n);
    if (rn) memcpy(p, run, rn);
    ks_value v = {KS_LIST, 0, 0, lst_expire(l), buf + KS_HDR_MAX, size, NULL, 0};
    return ks_write_put(&l->w, &v);
}

/* The bytes of the entries items[from .. from+k) (k >= 1) of a packed
 * view: one run. */
static const char *entries_run(const lview *lv, uint64_t from, uint64_t k, size_t *rn)
{
    const ks_field *a = &lv->items.v[from], *b = a + k - 1;
    *rn = (size_t)(b->v + b->vl - a->v);
    return a->v;
}

/* Stores items[0..n) as the whole list: packed when it fits, else big
 * under a new version (KS-E2). The items must not point into the
 * keyspace's scratch buffer. */
static ks_status store_items(lst *l, const ks_field *items, size_t n)
{
    ks_ctx *c = l->w.c;
    if (n == 0) return lst_delete(l);
    size_t size = ks_strs_size(items, n);
    if (fits_packed(c, n, size)) {
        char *buf = ks_scratch(c->ks, KS_HDR_MAX + size);
        if (!buf) return ks_oom(c);
        ks_strs_write(buf + KS_HDR_MAX, items, n);
        ks_value v = {KS_LIST, 0, 0, lst_expire(l), buf + KS_HDR_MAX, size, NULL, 0};
        return ks_write_put(&l->w, &v);
    }
    ks_status st = lbig_create(l, items, n);
    return st == KS_OK ? list_put_big(l) : st;
}

/* ---- Push and pop ------------------------------------------------------------------ */

static size_t entries_size(const ks_field *items, size_t n)
{
    size_t sz = 0;
    for (size_t i = 0; i < n; i++)
        sz += ks_varint_len(items[i].fl) + items[i].fl;
    return sz;
}

/* The old items and the new ones in list order, for a packed list that
 * outgrows its limit. */
static ks_status push_convert(lst *l, int where, const ks_field *items, size_t n)
{
    ks_ctx *c = l->w.c;
    ks_fvec all;
    ks_fvec_init(&all);
    ks_status st = l->v.n && !l->v.items.n ? view_parse(c, &l->w.m, &l->v) : KS_OK;
    if (st != KS_OK) return st;
    const ks_fvec *old = &l->v.items;
    for (size_t i = 0; st == KS_OK && i < n; i++) /* LPUSH a b c gives c b a */
        if (where == KS_LIST_HEAD &&
            ks_fvec_push(&all, items[n - 1 - i].f, items[n - 1 - i].fl, NULL, 0) != 0)
            st = ks_oom(c);
    for (size_t i = 0; st == KS_OK && i < old->n; i++)
        if (ks_fvec_push(&all, old->v[i].f, old->v[i].fl, NULL, 0) != 0) st = ks_oom(c);
    for (size_t i = 0; st == KS_OK && where == KS_LIST_TAIL && i < n; i++)
        if (ks_fvec_push(&all, items[i].f, items[i].fl, NULL, 0) != 0) st = ks_oom(c);
    if (st == KS_OK) st = store_items(l, all.v, all.n);
    ks_fvec_free(&all);
    return st;
}

static char *put_entries(char *p, int where, const ks_field *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const ks_field *it = &items[where == KS_LIST_HEAD ? n - 1 - i : i];
        p = ks_put_varint(p, it->fl);
        if (it->fl) memcpy(p, it->f, it->fl);
        p += it->fl;
    }
    return p;
}

/* A push onto a packed (or absent) list: the old entries stay one run,
 * copied as they are before or after the new ones. */
static ks_status push_packed(lst *l, int where, const ks_field *items, size_t n)
{
    ks_ctx *c = l->w.c;
    const lview *lv = &l->v;
    size_t rn = lv->rn;
    const char *run = lv->run;
    uint64_t total = lv->n + n;
    size_t size = ks_varint_len(total) + rn + entries_size(items, n);
    if (!fits_packed(c, total, size)) return push_convert(l, where, items, n);
    char *buf = ks_scratch(c->ks, KS_HDR_MAX + size);
    if (!buf) return ks_oom(c);
    char *p = ks_put_varint(buf + KS_HDR_MAX, total);
    if (where == KS_LIST_TAIL && rn) memcpy(p, run, rn), p += rn;
    p = put_entries(p, where, items, n);
    if (where == KS_LIST_HEAD && rn) memcpy(p, run, rn);
    ks_value v = {KS_LIST, 0, 0, lst_expire(l), buf + KS_HDR_MAX, size, NULL, 0};
    return ks_write_put(&l->w, &v);
}

ks_status ks_lpush(ks_ctx *c, const char *key, size_t klen, int where, int xx,
                   const ks_field *items, size_t n, uint64_t *len)
{
    lst l;
    *len = 0;
    ks_status st = lst_open_as(c, key, klen, &l, 1);
    if (st != KS_OK) return st;
    if (lst_absent(&l) && xx) {
        st = KS_NOTFOUND;
    } else {
        *len = l.v.n + n;
        if (!l.v.big)
            st = push_packed(&l, where, items, n);
        else if ((st = lbig_push(&l, where, items, n)) == KS_OK)
            st = list_put_big(&l);
    }
    lst_close(&l);
    return st;
}

/* Removes k (1..n) items from where; *out gets them in removal order
 * (pointers into l's buffers or copies owned by out). */
static ks_status pop_items(lst *l, int where, uint64_t k, ks_fvec *out)
{
    ks_ctx *c = l->w.c;
    lview *lv = &l->v;
    uint64_t rest = lv->n - k;
    if (!lv->big) {
        const ks_field *it = lv->items.v;
        for (uint64_t i = 0; i < k; i++) {
            const ks_field *f = &it[where == KS_LIST_HEAD ? i : lv->n - 1 - i];
            if (ks_fvec_push(out, f->f, f->fl, NULL, 0) != 0) return ks_oom(c);
        }
        if (rest == 0) return lst_delete(l);
        size_t rn;
        const char *run = entries_run(lv, where == KS_LIST_HEAD ? k : 0, rest, &rn);
        return put_packed(l, rest, run, rn);
    }
    ks_status st = lbig_pop(l, where, k, out);
    return st == KS_OK ? list_put_big(l) : st;
}

ks_status ks_lpop(ks_ctx *c, const char *key, size_t klen, int where, uint64_t count,
                  ks_fields_fn fn, void *arg)
{
    lst l;
    ks_status st = lst_open_existing(c, key, klen, &l);
    if (st != KS_OK) return st;
    ks_fvec out;
    ks_fvec_init(&out);
    st = pop_items(&l, where, count < l.v.n ? count : l.v.n, &out);
    if (st == KS_OK) fn(arg, out.v, out.n);
    ks_fvec_free(&out);
    lst_close(&l);
    return st;
}

/* ---- Reads ------------------------------------------------------------------------- */

ks_status ks_llen(ks_ctx *c, const char *key, size_t klen, uint64_t *n)
{
    ks_meta m;
    *n = 0;
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_LIST, &m);
    if (st != KS_OK) return st;
    if (list_count(&m, n) != 0) st = corrupt(c);
    ks_meta_free(&m);
    return st;
}

ks_status ks_lindex(ks_ctx *c, const char *key, size_t klen, long long index, ks_val *out)
{
    lread r;
    memset(out, 0, sizeof(*out));
    ks_status st = lread_open(c, key, klen, &r);
    if (st != KS_OK) return st;
    uint64_t i;
    if (!norm_index(index, r.v.n, &i)) {
        st = KS_NOTFOUND;
    } else if (r.v.big) {
        st = lbig_get(c, c->db, &r.v, i, out);
    } else {
        *out = (ks_val){r.m.raw, r.v.items.v[i].f, r.v.items.v[i].fl};
        r.m.raw = NULL; /* out owns the engine's buffer now */
    }
    lread_close(&r);
    return st;
}

typedef struct range_out {
    ks_fields_fn fn;
    void *arg;
} range_out;

static int range_piece(void *arg, uint64_t i, const ks_field *f, size_t n)
{
    range_out *r = arg;
    (void)i;
    r->fn(r->arg, f, n);
    return 0;
}

ks_status ks_lrange(ks_ctx *c, const char *key, size_t klen, long long start, long long end,
                    ks_count_fn count_fn, ks_fields_fn fn, void *arg)
{
    lread r;
    ks_status st = lread_open(c, key, klen, &r);
    if (st != KS_OK) return st;
    uint64_t from, k;
    norm_range(start, end, r.v.n, &from, &k);
    count_fn(arg, k);
    if (!r.v.big) {
        if (k) fn(arg, r.v.items.v + from, k);
    } else {
        range_out ro = {fn, arg};
        st = lbig_walk(c, c->db, &r.v, from, k, 0, range_piece, &ro);
    }
    lread_close(&r);
    return st;
}

/* A search for the items equal to v (LPOS, LINSERT's pivot, LREM): the
 * indexes of the matches from the rank-th (rank 0: every one counts), at
 * most limit of them (0: all), looking at no more than maxlen items (0:
 * all), from the head or (rev) from the tail. */
typedef struct search {
    const char *v;
    size_t vl;
    int rev;
    uint64_t rank, limit, maxlen, seen, matches;
    uint64_t *hits;
    size_t n, cap;
    int oom;
} search;

/* One item: i is its index from the head. 1 stops. */
static int search_item(search *s, uint64_t i, const char *v, size_t vl)
{
    if (s->maxlen && s->seen >= s->maxlen) return 1;
    s->seen++;
    if (vl != s->vl || (vl && memcmp(v, s->v, vl) != 0)) return 0;
    if (++s->matches < s->rank) return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        uint64_t *nh = realloc(s->hits, cap * sizeof(*nh));
        if (!nh) return s->oom = 1;
        s->hits = nh;
        s->cap = cap;
    }
    s->hits[s->n++] = i;
    return s->limit && s->n >= s->limit;
}

static int search_piece(void *arg, uint64_t i, const ks_field *f, size_t n)
{
    search *s = arg;
    for (size_t q = 0; q < n; q++)
        if (search_item(s, s->rev ? i - q : i + q, f[q].f, f[q].fl)) return 1;
    return 0;
}

/* Runs s over the list lv of db; the caller frees s->hits. */
static ks_status search_run(ks_ctx *c, int db, const lview *lv, search *s)
{
    ks_status st = KS_OK;
    if (lv->big) {
        st = lbig_walk(c, db, lv, 0, lv->n, s->rev, search_piece, s);
    } else {
        for (uint64_t j = 0; j < lv->n; j++) {
            uint64_t i = s->rev ? lv->n - 1 - j : j;
            if (search_item(s, i, lv->items.v[i].f, lv->items.v[i].fl)) break;
        }
    }
    return st == KS_OK && s->oom ? ks_oom(c) : st;
}

ks_status ks_lpos(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl, long long rank,
                  uint64_t count, uint64_t maxlen, uint64_t **idx, size_t *n)
{
    lread r;
    *idx = NULL;
    *n = 0;
    ks_status st = lread_open(c, key, klen, &r);
    if (st != KS_OK) return st;
    search s = {v, vl, rank < 0, 0, count, maxlen, 0, 0, NULL, 0, 0, 0};
    s.rank = rank < 0 ? (uint64_t) - (rank + 1) + 1 : (uint64_t)rank;
    if (rank == INT64_MIN) s.rank = 0; /* Redis's -LONG_MIN stays negative: any match */
    st = search_run(c, c->db, &r.v, &s);
    if (st == KS_OK) {
        *idx = s.hits;
        *n = s.n;
    } else {
        free(s.hits);
    }
    lread_close(&r);
    return st;
}

/* ---- Changes in place ------------------------------------------------------------ */

ks_status ks_lset(ks_ctx *c, const char *key, size_t klen, long long index, const char *v,
                  size_t vl)
{
    lst l;
    ks_status st = lst_open(c, key, klen, &l);
    if (st != KS_OK) return st;
    uint64_t i;
    if (lst_absent(&l)) {
        st = KS_NOTFOUND;
    } else if (!norm_index(index, l.v.n, &i)) {
        st = ks_err_msg(c, "ERR index out of range");
    } else if (l.v.big) {
        if ((st = lbig_set(&l, i, v, vl)) == KS_OK)
            st = list_put_big(&l); /* the same record: a touch */
    } else {
        ks_field *it = l.v.items.v;
        it[i].f = v;
        it[i].fl = vl;
        st = store_items(&l, it, l.v.n);
    }
    lst_close(&l);
    return st;
}

ks_status ks_ltrim(ks_ctx *c, const char *key, size_t klen, long long start, long long end)
{
    lst l;
    ks_status st = lst_open_existing(c, key, klen, &l);
    if (st != KS_OK) return st;
    uint64_t from, k, n = l.v.n;
    norm_range(start, end, n, &from, &k);
    /* k == n removes nothing and rewrites the same record: the key is
     * still touched (WATCH), as Redis signals it. */
    if (k == 0) {
        st = lst_delete(&l);
    } else if (!l.v.big) {
        size_t rn;
        const char *run = entries_run(&l.v, from, k, &rn);
        st = put_packed(&l, k, run, rn);
    } else if ((st = lbig_trim(&l, from, k)) == KS_OK) {
        st = list_put_big(&l);
    }
    lst_close(&l);
    return st;
}

ks_status ks_linsert(ks_ctx *c, const char *key, size_t klen, int after, const char *pivot,
                     size_t pl, const char *v, size_t vl, long long *len)
{
    lst l;
    *len = 0;
    ks_status st = lst_open_existing(c, key, klen, &l);
    if (st != KS_OK) return st;
    search f = {pivot, pl, 0, 1, 1, 0, 0, 0, NULL, 0, 0, 0};
    st = search_run(c, l.w.db, &l.v, &f);
    if (st == KS_OK && f.n == 0) {
        *len = -1;
    } else if (st == KS_OK) {
        uint64_t j = f.hits[0] + (after ? 1 : 0), n = l.v.n;
        if (l.v.big) {
            if ((st = lbig_insert(&l, j, v, vl)) == KS_OK) st = list_put_big(&l);
        } else {
            ks_fvec all;
            ks_fvec_init(&all);
            for (uint64_t i = 0; i <= n && st == KS_OK; i++) {
                if (i == j && ks_fvec_push(&all, v, vl, NULL, 0) != 0) st = ks_oom(c);
                if (i < n && st == KS_OK &&
                    ks_fvec_push(&all, l.v.items.v[i].f, l.v.items.v[i].fl, NULL, 0) != 0)
                    st = ks_oom(c);
            }
            if (st == KS_OK) st = store_items(&l, all.v, all.n);
            ks_fvec_free(&all);
        }
        *len = (long long)n + 1;
    }
    free(f.hits);
    lst_close(&l);
    return st;
}

ks_status ks_lrem(ks_ctx *c, const char *key, size_t klen, long long count, const char *v,
                  size_t vl, uint64_t *removed)
{
    lst l;
    *removed = 0;
    ks_status st = lst_open_existing(c, key, klen, &l);
    if (st != KS_OK) return st;
    int rev = count < 0;
    uint64_t limit = rev ? (uint64_t) - (count + 1) + 1 : (uint64_t)count;
    search f = {v, vl, rev, 1, limit, 0, 0, 0, NULL, 0, 0, 0};
    st = search_run(c, l.w.db, &l.v, &f);
    if (st == KS_OK && f.n) {
        if (f.n == l.v.n) {
            st = lst_delete(&l);
        } else if (l.v.big) {
            if (rev) /* ascending, as lbig_remove wants them */
                for (size_t i = 0; i < f.n / 2; i++) {
                    uint64_t t = f.hits[i];
                    f.hits[i] = f.hits[f.n - 1 - i];
                    f.hits[f.n - 1 - i] = t;
                }
            if ((st = lbig_remove(&l, f.hits, f.n)) == KS_OK) st = list_put_big(&l);
        } else {
            ks_fvec keep;
            ks_fvec_init(&keep);
            /* hits are in walk order; mark them on a copy of the indexes */
            char *drop = calloc(l.v.n, 1);
            if (!drop) st = ks_oom(c);
            for (size_t i = 0; st == KS_OK && i < f.n; i++)
                drop[f.hits[i]] = 1;
            for (uint64_t i = 0; st == KS_OK && i < l.v.n; i++)
                if (!drop[i] &&
                    ks_fvec_push(&keep, l.v.items.v[i].f, l.v.items.v[i].fl, NULL, 0) != 0)
                    st = ks_oom(c);
            if (st == KS_OK) st = store_items(&l, keep.v, keep.n);
            free(drop);
            ks_fvec_free(&keep);
        }
        *removed = f.n;
    }
    free(f.hits);
    lst_close(&l);
    return st;
}

/* ---- LMOVE ------------------------------------------------------------------------- */

/* Copies v into *out (the caller frees with ks_val_free). */
static ks_status val_copy(ks_ctx *c, const char *v, size_t vl, ks_val *out)
{
    char *b = malloc(vl ? vl : 1);
    if (!b) return ks_oom(c);
    if (vl) memcpy(b, v, vl);
    *out = (ks_val){b, b, vl};
    return KS_OK;
}

/* LMOVE with src == dst: the item at from moves to the other end (or
 * stays, when from == to or the list has one item); the key and its TTL
 * stay. */
static ks_status rotate(lst *l, int from, int to, ks_val *out)
{
    ks_ctx *c = l->w.c;
    lview *lv = &l->v;
    uint64_t n = lv->n, at = from == KS_LIST_HEAD ? 0 : n - 1;
    ks_status st;
    if (lv->big) {
        ks_fvec one;
        ks_fvec_init(&one);
        if (from == to || n == 1) { /* nothing moves: a read and a touch */
            st = lbig_get(c, l->w.db, lv, at, out);
            ks_fvec_free(&one);
            return st == KS_OK ? list_put_big(l) : st;
        }
        st = lbig_pop(l, from, 1, &one);
        if (st == KS_OK) st = val_copy(c, one.v[0].f, one.v[0].fl, out);
        ks_fvec_free(&one);
        if (st == KS_OK) {
            ks_field item = {out->p, out->n, NULL, 0};
            st = lbig_push(l, to, &item, 1);
        }
        return st == KS_OK ? list_put_big(l) : st;
    }
    ks_field *it = lv->items.v;
    st = val_copy(c, it[at].f, it[at].fl, out);
    if (st != KS_OK) return st;
    if (from != to && n > 1) {
        ks_field moved = it[at];
        if (to == KS_LIST_HEAD) {
            memmove(it + 1, it, (n - 1) * sizeof(*it));
            it[0] = moved;
        } else {
            memmove(it, it + 1, (n - 1) * sizeof(*it));
            it[n - 1] = moved;
        }
    }
    return store_items(l, it, n);
}

static int same_key(const char *a, size_t al, const char *b, size_t bl)
{
    return al == bl && memcmp(a, b, al) == 0;
}

ks_status ks_lmove(ks_ctx *c, const char *src, size_t sl, const char *dst, size_t dl, int from,
                   int to, ks_val *out)
{
    lst l;
    memset(out, 0, sizeof(*out));
    ks_status st = lst_open_existing(c, src, sl, &l);
    if (st != KS_OK) return st;
    if (same_key(src, sl, dst, dl)) {
        st = rotate(&l, from, to, out);
        lst_close(&l);
        if (st != KS_OK) ks_val_free(out);
        return st;
    }
    ks_meta dm; /* WRONGTYPE before anything moves (Redis's order) */
    st = ks_key_read(c, NULL, c->db, dst, dl, KS_LIST, &dm);
    if (st == KS_OK) ks_meta_free(&dm);
    if (st == KS_NOTFOUND) st = KS_OK;
    ks_fvec one;
    ks_fvec_init(&one);
    if (st == KS_OK) st = pop_items(&l, from, 1, &one);
    if (st == KS_OK) st = val_copy(c, one.v[0].f, one.v[0].fl, out);
    ks_fvec_free(&one);
    lst_close(&l);
    if (st == KS_OK) {
        ks_field item = {out->p, out->n, NULL, 0};
        uint64_t len;
        st = ks_lpush(c, dst, dl, to, 0, &item, 1, &len);
    }
    if (st != KS_OK) ks_val_free(out);
    return st;
}
