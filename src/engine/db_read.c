/*
 * db_read.c -- superversions, snapshots and point lookups.
 *
 * A lookup pins the superversion under db->mu (D3) and then reads without
 * any lock: memtables newest first, then the tables (version_get). The
 * newest visible point entry decides, unless a range tombstone with a
 * higher sequence covers it (rangedel.h, R1).
 */
#include "db_impl.h"

#include "write_batch.h"

#include <stdlib.h>

void db_install_sv(eng_db *db)
{
    superversion *sv = calloc(1, sizeof(*sv));
    if (!sv) abort();
    sv->refs = 1;
    sv->mem = db->mem;
    mem_ref(sv->mem);
    for (int i = db->nimm - 1; i >= 0; i--) {
        sv->imm_max_seq[sv->nimm] = db->imm[i].max_seq;
        sv->imm[sv->nimm++] = db->imm[i].mem;
        mem_ref(db->imm[i].mem);
    }
    sv->v = db->vs.current;
    version_ref(sv->v);
    rdel_view_add(&sv->rd, db->mem_rdels);
    for (int i = db->nimm - 1; i >= 0; i--)
        rdel_view_add(&sv->rd, db->imm[i].rdels);
    rdel_view_add(&sv->rd, sv->v->rdels);
    superversion *old = db->sv;
    db->sv = sv;
    if (old) sv_unref(old);
    /* Immutable memtables waiting for their flush borrow their size from
     * the block cache (up to half of it), so memory peaks near cache + one
     * memtable + row cache rather than cache + three memtables. */
    size_t borrow = (size_t)db->nimm * db->opts.write_buffer_size, cap = db->opts.cache_size;
    if (db->cache && cap)
        cache_set_capacity_lazy(db->cache, borrow < cap / 2 ? cap - borrow : cap / 2);
}

superversion *db_get_sv(eng_db *db, uint64_t *last_seq)
{
    pthread_mutex_lock(&db->mu);
    superversion *sv = db->sv;
    __atomic_add_fetch(&sv->refs, 1, __ATOMIC_RELAXED);
    *last_seq = db->last_seq;
    pthread_mutex_unlock(&db->mu);
    return sv;
}

void sv_unref(superversion *sv)
{
    if (__atomic_sub_fetch(&sv->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    mem_unref(sv->mem);
    for (int i = 0; i < sv->nimm; i++)
        mem_unref(sv->imm[i]);
    version_unref(sv->v);
    rdel_view_release(&sv->rd);
    free(sv);
}

uint64_t db_oldest_snapshot(eng_db *db)
{
    struct eng_snapshot *h = &db->snapshots;
    return h->next != h ? h->next->seq : db->last_seq;
}

uint64_t db_newest_snapshot(eng_db *db)
{
    struct eng_snapshot *h = &db->snapshots;
    return h->prev != h ? h->prev->seq : 0;
}

const eng_snapshot *eng_snapshot_new(eng_db *db)
{
    struct eng_snapshot *s = malloc(sizeof(*s));
    if (!s) return NULL;
    pthread_mutex_lock(&db->mu);
    while (db->snap_barrier)
        pthread_cond_wait(&db->bg_cv, &db->mu);
    s->seq = db->last_seq;
    db->snap_epoch++;
    /* Appending keeps the list sorted: last_seq never decreases. */
    s->next = &db->snapshots;
    s->prev = db->snapshots.prev;
    s->prev->next = s;
    db->snapshots.prev = s;
    pthread_mutex_unlock(&db->mu);
    return s;
}

void eng_snapshot_release(eng_db *db, const eng_snapshot *cs)
{
    if (!cs) return;
    struct eng_snapshot *s = (struct eng_snapshot *)cs;
    pthread_mutex_lock(&db->mu);
    s->prev->next = s->next;
    s->next->prev = s->prev;
    pthread_mutex_unlock(&db->mu);
    free(s);
}

static char *copy_value(slice v)
{
    char *p = malloc(v.size ? v.size : 1);
    if (p && v.size) memcpy(p, v.data, v.size);
    return p;
}

/* The lookup proper, on a pinned sv. */
static eng_status sv_get(superversion *sv, slice key, uint64_t seq, char **val, size_t *vlen)
{
    int type = ENG_TYPE_DELETION;
    uint64_t fseq = 0;
    slice v;
    char *out = NULL;
    size_t outlen = 0;
    int found = mem_get(sv->mem, key, seq, &type, &fseq, &v);
    for (int i = 0; !found && i < sv->nimm; i++)
        found = mem_get(sv->imm[i], key, seq, &type, &fseq, &v);
    if (found) {
        if (type != ENG_TYPE_VALUE) return ENG_NOTFOUND;
        if (sv->rd.n && rdel_view_covers(&sv->rd, key, fseq, seq)) return ENG_NOTFOUND;
        out = copy_value(v);
        if (!out) return ENG_NOMEM;
        outlen = v.size;
    } else {
        eng_status s = version_get(sv->v, key, seq, &type, &fseq, &out, &outlen);
        if (s != ENG_OK) return s;
        if (type != ENG_TYPE_VALUE || (sv->rd.n && rdel_view_covers(&sv->rd, key, fseq, seq))) {
            free(out);
            return ENG_NOTFOUND;
        }
        if (!out) {
            out = malloc(1);
            if (!out) return ENG_NOMEM;
        }
    }
    *val = out;
    *vlen = outlen;
    return ENG_OK;
}

eng_status eng_get(eng_db *db, const eng_snapshot *snap, const char *k, size_t kl, char **val,
                   size_t *vlen)
{
    uint64_t seq;
    superversion *sv = db_get_sv(db, &seq);
    if (snap) seq = snap->seq;
    eng_status s = sv_get(sv, slice_make(k, kl), seq, val, vlen);
    sv_unref(sv);
    return s;
}

eng_status eng_get_batch(eng_db *db, const eng_snapshot *snap, eng_batch *b, const char *k,
                         size_t kl, char **val, size_t *vlen)
{
    slice key = slice_make(k, kl), v;
    int type;
    int pr = b ? batch_point_get(b, &db->scan_only, key, &type, &v) : 0; /* a probe */
    if (pr == 0) return eng_get(db, snap, k, kl, val, vlen);
    if (pr == 1) {
        if (type != ENG_TYPE_VALUE) return ENG_NOTFOUND;
        *val = copy_value(v);
        *vlen = v.size;
        return *val ? ENG_OK : ENG_NOMEM;
    }
    memtable *m = batch_index(b);
    if (!m) return eng_get(db, snap, k, kl, val, vlen);
    uint64_t fseq;
    rdel_set *rd = batch_rdels(b);
    int found = mem_get(m, key, ENG_MAX_SEQUENCE, &type, &fseq, &v);
    eng_status s;
    if (found && !(rd && rdel_set_covers(rd, key, fseq, ENG_MAX_SEQUENCE))) {
        s = ENG_NOTFOUND;
        if (type == ENG_TYPE_VALUE) {
            *val = copy_value(v);
            *vlen = v.size;
            s = *val ? ENG_OK : ENG_NOMEM;
        }
    } else if (found || (rd && rdel_set_covers(rd, key, 0, ENG_MAX_SEQUENCE))) {
        s = ENG_NOTFOUND; /* a pending range deletion hides every committed version */
    } else {
        s = eng_get(db, snap, k, kl, val, vlen);
    }
    rdel_set_unref(rd);
    return s;
}
