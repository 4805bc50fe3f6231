/*
 * ks_zset_front.c -- ZPOPMIN's front cache (ENCODING.md "Front cache",
 * KS-Z6). A pop of the minimum from a big zset reads its first member with
 * an iterator open and a seek to the floor, which costs more than the
 * removal it leads to; a queue popped one member per command pays that on
 * every pop. So one read takes the first KS_ZFRONT_MAX members (one seek,
 * one step each) into c->ks->zfront, and the next pops of the same zset
 * take them from there, for as long as the zset's record is exactly as the
 * last of those pops wrote it. The removals themselves are ks_zw_remove's,
 * as any pop's: member and order entries, the rank upkeep, the floor.
 */
#include <string.h>

#include "keyspace/ks_zset.h"

_Static_assert(KS_ZFRONT_FLOOR == KS_ZFLOOR_MAX, "the cache keeps a whole floor");

void ks_zfront_forget(ks_ctx *c, int db, uint64_t version)
{
    ks_zfront *f = &c->ks->zfront;
    if (f->version == version && f->db == db) f->version = 0;
}

/* KS-Z6: 1 when f was left by a pop from the record m (ext e) as it is. */
static int front_matches(const ks_zfront *f, int db, const ks_meta *m, const ks_zext *e)
{
    return f->version && f->version == m->version && f->db == db && f->count == m->count &&
           f->removed == e->removed && f->floorl == e->floorl &&
           (e->floorl == 0 || memcmp(f->floor, e->floor, e->floorl) == 0);
}

/* Reads the first members of big zset v of db into f (as many as it holds),
 * leaving it unowned (version 0) until the pop that follows claims it.
 * f->crossed: the order entries it found deleted between the floor and
 * its last member, but the one at the floor (its pop counted it): once
 * the pops reach that member, their tombstones are below the floor
 * (KS-Z7). */
static ks_status front_fill(ks_ctx *c, int db, const ks_zview *v, ks_zfront *f)
{
    ks_miter mi;
    ks_status st = KS_OK;
    size_t used = 0;
    f->version = 0;
    f->pos = f->n = 0;
    f->crossed = 0;
    ks_miter_open(&mi, c, NULL, db, v->m.version);
    ks_zorder_seek_from(&mi, v, "", 0);
    while (ks_zorder_valid(&mi)) {
        ks_zmember z;
        if (ks_zorder_entry(&mi, &z) != 0) {
            st = ks_corrupt(c, "zset order entry");
            break;
        }
        if (z.ml > KS_ZFRONT_BYTES - used) break;
        memcpy(f->buf + used, z.m, z.ml);
        f->off[f->n] = (uint32_t)used;
        f->len[f->n] = (uint32_t)z.ml;
        f->score[f->n++] = z.score;
        used += z.ml;
        uint64_t del = ks_miter_deleted(&mi);
        f->crossed = del ? del - 1 : 0;
        if (f->n == KS_ZFRONT_MAX || f->n == v->n) break; /* no step past what is kept */
        ks_miter_next(&mi);
    }
    ks_status cst = ks_miter_close(&mi, c);
    return st != KS_OK ? st : cst;
}

/* Removes got's members (the zset's first ones, in order) from w's zset
 * and, unless the close rewrote it, leaves f to the record written: the
 * members after them, [pos, n). The pop of f's last member counts the
 * tombstones its read crossed into below (KS-Z7). */
static ks_status front_remove(ks_write *w, const ks_zmvec *got, ks_zfront *f, unsigned pos,
                              unsigned n)
{
    ks_zw z;
    ks_status st = ks_zw_open(&z, w); /* forgets f (KS-Z6) */
    for (size_t i = 0; st == KS_OK && i < got->n; i++)
        st = ks_zw_remove(&z, got->v[i].m, got->v[i].ml, got->v[i].score);
    if (st != KS_OK) {
        ks_zw_abort(&z);
        return st;
    }
    const ks_zmember *last = &got->v[got->n - 1];
    ks_zw_raise_floor(&z, last->score, last->m, last->ml, pos == n ? f->crossed : 0);
    st = ks_zw_close(&z); /* the counts and floor stay readable after it */
    if (st != KS_OK || z.rewritten || pos == n) return st;
    f->version = z.version;
    f->db = w->db;
    f->count = z.count;
    f->removed = z.removed;
    memcpy(f->floor, z.floor, z.floorl);
    f->floorl = z.floorl;
    f->pos = pos;
    f->n = n;
    return KS_OK;
}

ks_status ks_zfront_pop(ks_write *w, const ks_zview *v, uint64_t count, ks_zmvec *got, int *done)
{
    ks_ctx *c = w->c;
    ks_zfront *f = &c->ks->zfront;
    ks_zext e;
    *done = 0;
    if (count > KS_ZFRONT_MAX) return KS_OK;
    if (ks_zext_parse(w->m.ext, w->m.extlen, &e) != 0) return ks_corrupt(c, "zset encoding");
    if (!front_matches(f, w->db, &w->m, &e) || f->n - f->pos < count) {
        ks_status st = front_fill(c, w->db, v, f);
        if (st != KS_OK) return st;
        if (f->n < count) return KS_OK; /* long members: fewer than count fit */
    }
    *done = 1;
    unsigned pos = f->pos + (unsigned)count, n = f->n;
    for (unsigned i = f->pos; i < pos; i++)
        if (ks_zmvec_push(got, f->buf + f->off[i], f->len[i], f->score[i], 0) != 0) {
            f->version = 0;
            return ks_oom(c);
        }
    return front_remove(w, got, f, pos, n);
}
