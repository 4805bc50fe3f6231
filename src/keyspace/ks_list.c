/*
 * ks_list.c -- lists: how they are stored, the list row of the type table,
 * and the data work of the list commands (LPUSH ... LMOVE). Replies and
 * argument parsing are the server's (cmd_list.c).
 *
 * On-disk format (ENCODING.md, "Lists"):
 *   packed body: strs (varint count, then varint length + bytes per item),
 *                items head first
 *   big body:    version le64, count le64, head le64
 *   big item:    'd' db be64(version) be64(pos) -> item
 * KS-L1: the items of a big list are exactly the member keys at positions
 * head .. head+count-1 of its version, item i (0 from the head) at head+i,
 * and head+count never wraps (the row's check). A new big list starts at
 * head = 2^63. So a push or pop at either end is one put or delete and the
 * metadata put, LINDEX one get, LSET one put (the count says whether the
 * index exists), LRANGE one seek and a step per item, LTRIM two range
 * deletes; LINSERT and LREM rewrite the shorter side of the change (O(n),
 * as Redis). A list is packed while its body is within
 * list-max-listpack-size; it turns big in the write that outgrows it and
 * never turns back (OBJECT ENCODING is always quicklist, as Redis 7.0).
 *
 * Walks over big lists copy chunks of items out of the iterator before a
 * callback may write (the batch must not change under an open iterator),
 * so a walk over a million items holds one chunk at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_type.h"

#define LIST_HEAD0 (1ull << 63)
#define LIST_CHUNK 4096

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

/* A list as found: its length and, packed, its items (.f/.fl) with their
 * whole entries (.v/.vl: length varint and bytes), so that a run of
 * entries can be copied into a new body as it is. */
typedef struct lview {
    uint64_t n;
    int big;
    uint64_t version, head;
    ks_fvec items;
} lview;

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

/* m: a live list or type KS_NONE (an empty view). */
static ks_status view_init(ks_ctx *c, const ks_meta *m, lview *lv)
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
    if (packed_parse(m->payload, m->plen, &lv->items) != 0) {
        ks_fvec_free(&lv->items);
        return corrupt(c);
    }
    lv->n = lv->items.n;
    return KS_OK;
}

/* A list opened for a write. */
typedef struct lst {
    ks_write w;
    lview v;
} lst;

static ks_status lst_open(ks_ctx *c, const char *key, size_t klen, lst *l)
{
    ks_status st = ks_write_begin(c, c->db, key, klen, KS_LIST, &l->w);
    if (st != KS_OK) return st;
    st = view_init(c, &l->w.m, &l->v);
    if (st != KS_OK) ks_write_end(&l->w);
    return st;
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

/* A list opened for a read. */
typedef struct lread {
    ks_meta m;
    lview v;
} lread;

static ks_status lread_open(ks_ctx *c, const char *key, size_t klen, lread *r)
{
    ks_status st = ks_key_read(c, NULL, c->db, key, klen, KS_LIST, &r->m);
    if (st != KS_OK) return st;
    st = view_init(c, &r->m, &r->v);
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

/* ---- Big items ------------------------------------------------------------------ */

static void pos_sfx(char *s, uint64_t pos)
{
    ks_put_be64(s, pos);
}

static void item_put(ks_ctx *c, int db, uint64_t version, uint64_t pos, const char *v, size_t vl)
{
    char s[8];
    pos_sfx(s, pos);
    ks_member_put(c, db, version, s, 8, v, vl);
}

static void item_del(ks_ctx *c, int db, uint64_t version, uint64_t pos)
{
    char s[8];
    pos_sfx(s, pos);
    ks_member_del(c, db, version, s, 8);
}

/* Deletes positions [from, to) of a version: one range delete. */
static void items_del_range(ks_ctx *c, int db, uint64_t version, uint64_t from, uint64_t to)
{
    if (from >= to) return;
    if (to - from == 1) return item_del(c, db, version, from);
    char a[8], b[8];
    pos_sfx(a, from);
    pos_sfx(b, to);
    ks_members_delete_range(c, db, version, a, 8, b, 8);
}

/* One item (the engine's buffer, eng_free). A missing one breaks KS-L1. */
static ks_status item_get(ks_ctx *c, int db, const lview *lv, uint64_t i, char **v, size_t *vl)
{
    char s[8];
    pos_sfx(s, lv->head + i);
    eng_status es = ks_member_get(c, NULL, db, lv->version, s, 8, v, vl);
    if (es == ENG_NOTFOUND) return ks_corrupt(c, "list item");
    return es == ENG_OK ? KS_OK : ks_engine_err(c, es, "list read");
}

/* Calls fn(arg, i, item) for the items i in [from, from+k) of a big list,
 * from the head (rev 0) or from the tail end of the range (rev 1). fn
 * returns 0 to go on, 1 to stop. With writes 0, fn runs inside the
 * iteration (item valid during the call, fn must not write); with writes
 * 1, on copies of a chunk at a time, with no iterator open, so fn may add
 * writes to the batch -- REQUIRES then: they never land on a position the
 * walk has yet to read. */
typedef int (*walk_fn)(void *arg, uint64_t i, const char *v, size_t vl);

static ks_status big_walk(ks_ctx *c, int db, const lview *lv, uint64_t from, uint64_t k, int rev,
                          int writes, walk_fn fn, void *arg)
{
    ks_status st = KS_OK;
    uint64_t done = 0;
    int stop = 0;
    while (done < k && !stop && st == KS_OK) {
        /* next index to read */
        uint64_t i = rev ? from + k - 1 - done : from + done;
        char s[8];
        pos_sfx(s, lv->head + i);
        ks_miter mi;
        ks_miter_open(&mi, c, NULL, db, lv->version);
        if (rev)
            ks_miter_seek_prev(&mi, s, 8);
        else
            ks_miter_seek(&mi, s, 8);
        ks_fvec chunk;
        ks_fvec_init(&chunk);
        uint64_t first = done;
        for (; done < k && ks_miter_valid(&mi); rev ? ks_miter_prev(&mi) : ks_miter_next(&mi)) {
            size_t sn, vn;
            const char *sf = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
            uint64_t want = rev ? from + k - 1 - done : from + done;
            if (sn != 8 || ks_get_be64(sf) != lv->head + want) break; /* KS-L1 broken */
            done++;
            if (!writes) {
                if (fn(arg, want, v, vn)) {
                    stop = 1;
                    break;
                }
            } else if (ks_fvec_push_copy(&chunk, NULL, 0, v, vn) != 0) {
                st = ks_oom(c);
                break;
            } else if (chunk.n == LIST_CHUNK) {
                break;
            }
        }
        ks_status cst = ks_miter_close(&mi, c);
        if (st == KS_OK) st = cst;
        if (st == KS_OK && !stop && done == first) st = ks_corrupt(c, "list item");
        for (size_t j = 0; st == KS_OK && !stop && j < chunk.n; j++) {
            uint64_t idx = rev ? from + k - 1 - (first + j) : from + first + j;
            stop = fn(arg, idx, chunk.v[j].v, chunk.v[j].vl);
        }
        ks_fvec_free(&chunk);
    }
    return st;
}

static int collect_item(void *arg, uint64_t i, const char *v, size_t vl)
{
    (void)i;
    return ks_fvec_push_copy(arg, v, vl, NULL, 0) != 0 ? 1 : 0;
}

/* Copies k items from index from (rev: from the end of the range back)
 * into out (.f/.fl). */
static ks_status big_read(ks_ctx *c, int db, const lview *lv, uint64_t from, uint64_t k, int rev,
                          ks_fvec *out)
{
    if (k == 1) { /* a get is cheaper than a seek */
        char *v;
        size_t vl;
        ks_status st = item_get(c, db, lv, from, &v, &vl);
        if (st != KS_OK) return st;
        int r = ks_fvec_push_copy(out, v, vl, NULL, 0);
        eng_free(v);
        return r == 0 ? KS_OK : ks_oom(c);
    }
    size_t before = out->n;
    ks_status st = big_walk(c, db, lv, from, k, rev, 0, collect_item, out);
    if (st == KS_OK && out->n - before != k) st = ks_oom(c);
    return st;
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

/* The list's new record: big, n items from head under version. n 0
 * deletes the key. */
static ks_status put_big(lst *l, uint64_t version, uint64_t head, uint64_t n)
{
    if (n == 0) return lst_delete(l);
    char ext[8], body[KS_BIG_BODY_MAX];
    ks_put_le64(ext, head);
    ks_value v = {KS_LIST, 0, 0, lst_expire(l), NULL, 0, NULL, 0};
    ks_big_body(&v, body, version, n, ext, 8);
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
    uint64_t version = ks_new_version(c);
    for (size_t i = 0; i < n; i++)
        item_put(c, l->w.db, version, LIST_HEAD0 + i, items[i].f, items[i].fl);
    return put_big(l, version, LIST_HEAD0, n);
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
    ks_status st = KS_OK;
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
    size_t rn = 0;
    const char *run = lv->n ? entries_run(lv, 0, lv->n, &rn) : NULL;
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

static ks_status push_big(lst *l, int where, const ks_field *items, size_t n)
{
    ks_ctx *c = l->w.c;
    const lview *lv = &l->v;
    uint64_t head = lv->head;
    if (where == KS_LIST_HEAD ? head < n : UINT64_MAX - head - lv->n < n)
        return ks_err_msg(c, "ERR list is full");
    for (size_t i = 0; i < n; i++) {
        uint64_t pos = where == KS_LIST_HEAD ? --head : lv->head + lv->n + i;
        item_put(c, l->w.db, lv->version, pos, items[i].f, items[i].fl);
    }
    return put_big(l, lv->version, head, lv->n + n);
}

ks_status ks_lpush(ks_ctx *c, const char *key, size_t klen, int where, int xx,
                   const ks_field *items, size_t n, uint64_t *len)
{
    lst l;
    *len = 0;
    ks_status st = lst_open(c, key, klen, &l);
    if (st != KS_OK) return st;
    if (lst_absent(&l) && xx) {
        st = KS_NOTFOUND;
    } else {
        st = l.v.big ? push_big(&l, where, items, n) : push_packed(&l, where, items, n);
        *len = l.v.n + n;
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
    int db = l->w.db;
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
    uint64_t from = where == KS_LIST_HEAD ? 0 : rest;
    ks_status st = big_read(c, db, lv, from, k, where == KS_LIST_TAIL, out);
    if (st != KS_OK) return st;
    if (rest == 0) return put_big(l, lv->version, lv->head, 0); /* the drop deletes them */
    for (uint64_t i = 0; i < k; i++)
        item_del(c, db, lv->version, lv->head + from + i);
    return put_big(l, lv->version, where == KS_LIST_HEAD ? lv->head + k : lv->head, rest);
}

ks_status ks_lpop(ks_ctx *c, const char *key, size_t klen, int where, uint64_t count,
                  ks_fields_fn fn, void *arg)
{
    lst l;
    ks_status st = lst_open(c, key, klen, &l);
    if (st != KS_OK) return st;
    if (lst_absent(&l)) {
        lst_close(&l);
        return KS_NOTFOUND;
    }
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
        char *v;
        size_t vl;
        st = item_get(c, c->db, &r.v, i, &v, &vl);
        if (st == KS_OK) *out = (ks_val){v, v, vl};
    } else {
        *out = (ks_val){r.m.raw, r.v.items.v[i].f, r.v.items.v[i].fl};
        r.m.raw = NULL; /* out owns the engine's buffer now */
    }
    lread_close(&r);
    return st;
}

ks_status ks_lrange(ks_ctx *c, const char *key, size_t klen, long long start, long long end,
                    ks_fields_fn fn, void *arg)
{
    lread r;
    ks_status st = lread_open(c, key, klen, &r);
    if (st != KS_OK) return st;
    uint64_t from, k;
    norm_range(start, end, r.v.n, &from, &k);
    if (!r.v.big) {
        fn(arg, r.v.items.v + from, k);
    } else {
        ks_fvec out;
        ks_fvec_init(&out);
        if (k) st = big_read(c, c->db, &r.v, from, k, 0, &out);
        if (st == KS_OK) fn(arg, out.v, out.n);
        ks_fvec_free(&out);
    }
    lread_close(&r);
    return st;
}

/* LPOS's search state. */
typedef struct lpos_state {
    const char *v;
    size_t vl;
    uint64_t rank, count, maxlen, n, seen, matches;
    int rev;
    uint64_t *idx;
    size_t nidx, cap;
    int oom;
} lpos_state;

/* One item of the search: i is its index from the head. 1 stops. */
static int lpos_visit(void *arg, uint64_t i, const char *v, size_t vl)
{
    lpos_state *s = arg;
    if (s->maxlen && s->seen >= s->maxlen) return 1;
    s->seen++;
    if (vl != s->vl || (vl && memcmp(v, s->v, vl) != 0)) return 0;
    if (++s->matches < s->rank) return 0;
    if (s->nidx == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        uint64_t *ni = realloc(s->idx, cap * sizeof(*ni));
        if (!ni) return s->oom = 1;
        s->idx = ni;
        s->cap = cap;
    }
    s->idx[s->nidx++] = i;
    return s->count && s->nidx >= s->count;
}

ks_status ks_lpos(ks_ctx *c, const char *key, size_t klen, const char *v, size_t vl, long long rank,
                  uint64_t count, uint64_t maxlen, uint64_t **idx, size_t *n)
{
    lread r;
    *idx = NULL;
    *n = 0;
    ks_status st = lread_open(c, key, klen, &r);
    if (st != KS_OK) return st;
    lpos_state s = {v, vl, 0, count, maxlen, r.v.n, 0, 0, rank < 0, NULL, 0, 0, 0};
    s.rank = rank < 0 ? (uint64_t) - (rank + 1) + 1 : (uint64_t)rank;
    if (rank == INT64_MIN) s.rank = 0; /* Redis's -LONG_MIN stays negative: any match */
    if (r.v.big) {
        st = big_walk(c, c->db, &r.v, 0, r.v.n, s.rev, 0, lpos_visit, &s);
    } else {
        for (uint64_t j = 0; j < r.v.n; j++) {
            uint64_t i = s.rev ? r.v.n - 1 - j : j;
            if (lpos_visit(&s, i, r.v.items.v[i].f, r.v.items.v[i].fl)) break;
        }
    }
    if (st == KS_OK && s.oom) st = ks_oom(c);
    if (st == KS_OK) {
        *idx = s.idx;
        *n = s.nidx;
    } else {
        free(s.idx);
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
    } else if (l.v.big) { /* KS-L1: the item exists; the record is unchanged */
        item_put(c, l.w.db, l.v.version, l.v.head + i, v, vl);
        st = put_big(&l, l.v.version, l.v.head, l.v.n);
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
    ks_status st = lst_open(c, key, klen, &l);
    if (st != KS_OK) return st;
    if (lst_absent(&l)) {
        lst_close(&l);
        return KS_NOTFOUND;
    }
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
    } else {
        uint64_t h = l.v.head;
        items_del_range(c, l.w.db, l.v.version, h, h + from);
        items_del_range(c, l.w.db, l.v.version, h + from + k, h + n);
        st = put_big(&l, l.v.version, h + from, k);
    }
    lst_close(&l);
    return st;
}

/* Moves big items to new positions: the walk's callback puts each item
 * read at its index plus a shift, skipping the removed ones. */
typedef struct shift_state {
    ks_ctx *c;
    int db;
    const lview *lv;
    int dir;              /* -1 items move towards the head, +1 towards the tail */
    const uint64_t *gone; /* indexes removed, in the walk's order */
    size_t ngone, next;
    uint64_t shift;
} shift_state;

static int shift_visit(void *arg, uint64_t i, const char *v, size_t vl)
{
    shift_state *s = arg;
    if (s->next < s->ngone && s->gone[s->next] == i) {
        s->next++;
        s->shift++;
        return 0;
    }
    uint64_t pos = s->lv->head + i;
    item_put(s->c, s->db, s->lv->version, s->dir < 0 ? pos - s->shift : pos + s->shift, v, vl);
    return 0;
}

/* Items [from, to) of a big list move by shift (plus one per removed
 * index passed, gone sorted in walk order: ascending for dir -1,
 * descending for dir +1). Moving towards the head walks from the head, so
 * every put lands at or before the item just read (big_walk's REQUIRES);
 * towards the tail walks backwards. */
static ks_status shift_items(lst *l, int dir, uint64_t from, uint64_t to, uint64_t shift,
                             const uint64_t *gone, size_t ngone)
{
    shift_state s = {l->w.c, l->w.db, &l->v, dir, gone, ngone, 0, shift};
    if (from >= to) return KS_OK;
    return big_walk(l->w.c, l->w.db, &l->v, from, to - from, dir > 0, 1, shift_visit, &s);
}

typedef struct find_state {
    const char *v;
    size_t vl;
    uint64_t limit; /* 0: all */
    uint64_t *hits;
    size_t n, cap;
    int oom;
} find_state;

static int find_visit(void *arg, uint64_t i, const char *v, size_t vl)
{
    find_state *s = arg;
    if (vl != s->vl || (vl && memcmp(v, s->v, vl) != 0)) return 0;
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

/* Indexes of the items equal to v, from the head (rev 0, ascending) or
 * the tail (descending), at most limit of them (0: all). */
static ks_status find_items(lst *l, const char *v, size_t vl, uint64_t limit, int rev,
                            find_state *s)
{
    memset(s, 0, sizeof(*s));
    s->v = v;
    s->vl = vl;
    s->limit = limit;
    ks_status st = KS_OK;
    if (l->v.big) {
        st = big_walk(l->w.c, l->w.db, &l->v, 0, l->v.n, rev, 0, find_visit, s);
    } else {
        for (uint64_t j = 0; j < l->v.n; j++) {
            uint64_t i = rev ? l->v.n - 1 - j : j;
            if (find_visit(s, i, l->v.items.v[i].f, l->v.items.v[i].fl)) break;
        }
    }
    if (st == KS_OK && s->oom) st = ks_oom(l->w.c);
    return st;
}

/* Inserts v at index j (0..n) of a big list, shifting the shorter side. */
static ks_status big_insert(lst *l, uint64_t j, const char *v, size_t vl)
{
    ks_ctx *c = l->w.c;
    const lview *lv = &l->v;
    uint64_t h = lv->head, n = lv->n;
    int left = j < n - j ? lv->head > 0 : UINT64_MAX - h - n == 0;
    if (left && h == 0) return ks_err_msg(c, "ERR list is full");
    ks_status st =
        left ? shift_items(l, -1, 0, j, 1, NULL, 0) : shift_items(l, 1, j, n, 1, NULL, 0);
    if (st != KS_OK) return st;
    if (left) h--;
    item_put(c, l->w.db, lv->version, h + j, v, vl);
    return put_big(l, lv->version, h, n + 1);
}

ks_status ks_linsert(ks_ctx *c, const char *key, size_t klen, int after, const char *pivot,
                     size_t pl, const char *v, size_t vl, long long *len)
{
    lst l;
    *len = 0;
    ks_status st = lst_open(c, key, klen, &l);
    if (st != KS_OK) return st;
    if (lst_absent(&l)) {
        lst_close(&l);
        return KS_NOTFOUND;
    }
    find_state f;
    st = find_items(&l, pivot, pl, 1, 0, &f);
    if (st == KS_OK && f.n == 0) {
        *len = -1;
    } else if (st == KS_OK) {
        uint64_t j = f.hits[0] + (after ? 1 : 0), n = l.v.n;
        if (l.v.big) {
            st = big_insert(&l, j, v, vl);
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

/* Removes the items at the indexes gone[0..k) (walk order: ascending when
 * !rev) of a big list: the cheaper side of the holes moves over them. */
static ks_status big_remove(lst *l, const uint64_t *gone, size_t k, int rev)
{
    ks_ctx *c = l->w.c;
    const lview *lv = &l->v;
    uint64_t h = lv->head, n = lv->n;
    uint64_t lo = rev ? gone[k - 1] : gone[0], hi = rev ? gone[0] : gone[k - 1];
    uint64_t *asc = malloc(k * sizeof(*asc));
    if (!asc) return ks_oom(c);
    for (size_t i = 0; i < k; i++)
        asc[i] = rev ? gone[k - 1 - i] : gone[i];
    ks_status st;
    if (n - lo <= hi + 1) { /* the tail side moves towards the head */
        st = shift_items(l, -1, lo, n, 0, asc, k);
        if (st == KS_OK) items_del_range(c, l->w.db, lv->version, h + n - k, h + n);
    } else { /* the head side moves towards the tail */
        for (size_t i = 0; i < k; i++)
            asc[i] = rev ? gone[i] : gone[k - 1 - i]; /* descending */
        st = shift_items(l, 1, 0, hi + 1, 0, asc, k);
        if (st == KS_OK) items_del_range(c, l->w.db, lv->version, h, h + k);
        h += k;
    }
    free(asc);
    return st == KS_OK ? put_big(l, lv->version, h, n - k) : st;
}

ks_status ks_lrem(ks_ctx *c, const char *key, size_t klen, long long count, const char *v,
                  size_t vl, uint64_t *removed)
{
    lst l;
    *removed = 0;
    ks_status st = lst_open(c, key, klen, &l);
    if (st != KS_OK) return st;
    if (lst_absent(&l)) {
        lst_close(&l);
        return KS_NOTFOUND;
    }
    int rev = count < 0;
    uint64_t limit = rev ? (uint64_t) - (count + 1) + 1 : (uint64_t)count;
    find_state f;
    st = find_items(&l, v, vl, limit, rev, &f);
    if (st == KS_OK && f.n) {
        if (f.n == l.v.n) {
            st = lst_delete(&l);
        } else if (l.v.big) {
            st = big_remove(&l, f.hits, f.n, rev);
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
        char *v;
        size_t vl;
        st = item_get(c, l->w.db, lv, at, &v, &vl);
        if (st != KS_OK) return st;
        st = val_copy(c, v, vl, out);
        eng_free(v);
        if (st != KS_OK || from == to || n == 1)
            return st == KS_OK ? put_big(l, lv->version, lv->head, n) : st;
        uint64_t h = lv->head;
        if (to == KS_LIST_HEAD ? h == 0 : UINT64_MAX - h - n == 0)
            return ks_err_msg(c, "ERR list is full");
        item_del(c, l->w.db, lv->version, h + at);
        if (to == KS_LIST_HEAD) { /* from the tail to the head */
            item_put(c, l->w.db, lv->version, h - 1, out->p, out->n);
            return put_big(l, lv->version, h - 1, n);
        }
        item_put(c, l->w.db, lv->version, h + n, out->p, out->n);
        return put_big(l, lv->version, h + 1, n);
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
    ks_status st = lst_open(c, src, sl, &l);
    if (st != KS_OK) return st;
    if (lst_absent(&l)) {
        lst_close(&l);
        return KS_NOTFOUND;
    }
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
