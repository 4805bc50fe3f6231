/*
 * ks_stream_trim.c -- MAXLEN / MINID trimming of a stream (XADD's options
 * and XTRIM), node by node from the front as Redis's streamTrim does.
 *
 * On-disk format (ENCODING.md, "Streams"): entries 'E' id under the
 * stream's version, closed nodes 'N' node -> first:id last:id live:le64,
 * the tail node in the header. A node whose removal keeps the length >=
 * MAXLEN (or whose last id, deleted entries included, is below MINID) is
 * removed whole; with `~` trimming stops at the first node that cannot go
 * whole, without `~` the entries of that node are removed one by one up to
 * the bound. LIMIT caps the entries removed, counting whole nodes.
 *
 * Entries go by point deletes, which the next seek from the new first id
 * never crosses; a run of more than XS_RANGE_DELETE_MIN entries goes by
 * one range delete instead (the engine keeps few range tombstones well,
 * many badly, and point deletes of a million entries would fill the batch).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_stream_int.h"

#define XS_RANGE_DELETE_MIN 4096

static ks_status corrupt(ks_ctx *c)
{
    return ks_corrupt(c, "stream encoding");
}

/* Node info: live entries and last id (deleted ones count, as Redis's
 * lpGetEdgeStreamID). */
static ks_status node_info(ks_ctx *c, xs_stream *s, uint64_t node, uint64_t *live, ks_xid *last)
{
    const xs_hdr *h = &s->h;
    if (h->tail_total && node == h->tail_node) {
        *live = h->tail_live;
        *last = h->tail_last;
        return KS_OK;
    }
    char k[9], *v = NULL;
    size_t vl;
    eng_status es = ks_member_get(c, NULL, c->db, xs_version(s), k, xs_node_key(k, node), &v, &vl);
    int ok = es == ENG_OK && (vl == XS_NODE_REC_LEN || vl == XS_NODE_REC_OLD_LEN);
    if (ok) {
        xs_get_id_le(v + 16, last);
        *live = ks_get_le64(v + 32);
    }
    if (v) eng_free(v);
    if (es != ENG_OK && es != ENG_NOTFOUND) return ks_engine_err(c, es, "stream read");
    return ok ? KS_OK : corrupt(c);
}

/* Removes entries from the first one on: at most max of them, and only
 * those below *below when below is set. The entry after the run, if any,
 * goes to *next / *next_node. */
static ks_status del_run(ks_ctx *c, xs_stream *s, uint64_t max, const ks_xid *below, uint64_t *ndel,
                         ks_xid *next, uint64_t *next_node, int *has_next)
{
    ks_miter mi;
    char k[17];
    ks_status st = KS_OK;
    ks_xid *ids = NULL;
    size_t cap = 0;
    int ranged = 0;
    *ndel = 0;
    *has_next = 0;
    ks_miter_open(&mi, c, NULL, c->db, xs_version(s));
    ks_miter_seek(&mi, k, xs_entry_key(k, &s->h.first));
    for (; ks_miter_valid(&mi); ks_miter_next(&mi)) {
        size_t sn, vn;
        const char *sfx = ks_miter_suffix(&mi, &sn), *v = ks_miter_value(&mi, &vn);
        if (sn != 17 || sfx[0] != XS_TAG_ENTRY) break;
        ks_xid id;
        xs_get_id_be(sfx + 1, &id);
        if (*ndel == max || (below && ks_xid_cmp(&id, below) >= 0)) {
            *next = id;
            if (!ks_get_varint(v, v + vn, next_node)) st = corrupt(c);
            *has_next = 1;
            break;
        }
        if (!ranged && *ndel >= XS_RANGE_DELETE_MIN) {
            ranged = 1;
            free(ids);
            ids = NULL;
        }
        if (!ranged) {
            if (*ndel == cap) {
                cap = cap ? cap * 2 : 64;
                ks_xid *nids = realloc(ids, cap * sizeof(*ids));
                if (!nids) {
                    st = ks_oom(c);
                    break;
                }
                ids = nids;
            }
            ids[*ndel] = id;
        }
        ++*ndel;
    }
    ks_status cst = ks_miter_close(&mi, c);
    if (st == KS_OK) st = cst;
    if (st == KS_OK && ranged) {
        char a[17], b[17] = {XS_TAG_ENTRY + 1};
        size_t bn = *has_next ? xs_entry_key(b, next) : 1;
        ks_members_delete_range(c, c->db, xs_version(s), a, xs_entry_key(a, &s->h.first), b, bn);
    } else if (st == KS_OK) {
        for (uint64_t i = 0; i < *ndel; i++)
            ks_member_del(c, c->db, xs_version(s), k, xs_entry_key(k, &ids[i]));
    }
    free(ids);
    return st;
}

/* The first node is gone whole: its record (or the tail) too. */
static void node_drop(ks_ctx *c, xs_stream *s, uint64_t node)
{
    xs_hdr *h = &s->h;
    if (h->tail_total && node == h->tail_node) {
        h->tail_total = 0;
    } else {
        char k[9];
        ks_member_del(c, c->db, xs_version(s), k, xs_node_key(k, node));
    }
    h->nodes--;
}

/* A run removed from the front: the entry after it is the new first. */
static ks_status front_removed(xs_stream *s, uint64_t n, int has_next, const ks_xid *next,
                               uint64_t next_node)
{
    s->length -= n;
    if (has_next) {
        s->h.first = *next;
        s->h.first_node = next_node;
    } else {
        s->h.first = (ks_xid){0, 0};
        s->h.first_node = 0;
    }
    s->dirty = 1;
    return KS_OK;
}

ks_status xs_trim(ks_ctx *c, xs_stream *s, const ks_xtrim_args *t, uint64_t *deleted)
{
    ks_status st = KS_OK;
    int maxlen = t->strategy == KS_XTRIM_MAXLEN;
    *deleted = 0;
    if (t->strategy == KS_XTRIM_NONE) return KS_OK;
    while (s->length > 0 && st == KS_OK) {
        if (maxlen && s->length <= (uint64_t)t->maxlen) break;
        uint64_t node = s->h.first_node, live = 0, n, nnode = 0;
        ks_xid last, next;
        int has_next;
        if ((st = node_info(c, s, node, &live, &last)) != KS_OK) break;
        if (t->limit && *deleted + live > (uint64_t)t->limit) break;
        int whole =
            maxlen ? s->length - live >= (uint64_t)t->maxlen : ks_xid_cmp(&last, &t->minid) < 0;
        if (whole) {
            if ((st = del_run(c, s, live, NULL, &n, &next, &nnode, &has_next)) != KS_OK) break;
            if (n != live) return corrupt(c);
            node_drop(c, s, node);
            front_removed(s, n, has_next, &next, nnode);
            *deleted += n;
            continue;
        }
        if (t->approx) break;
        if (maxlen)
            st = del_run(c, s, s->length - (uint64_t)t->maxlen, NULL, &n, &next, &nnode, &has_next);
        else
            st = del_run(c, s, live, &t->minid, &n, &next, &nnode, &has_next);
        if (st != KS_OK) break;
        if (n) {
            /* The node's live entries may all go: its last entry, deleted
             * but still its edge id, kept it from being removed whole.
             * Redis keeps such a node (no live entries) until a later trim;
             * here it goes now, as XDEL's emptied nodes do. */
            st = xs_node_drop(c, s, node, n);
            front_removed(s, n, has_next, &next, nnode);
            *deleted += n;
        }
        break;
    }
    return st;
}
