/*
 * eng_memtable_model_test.c -- the B+tree memtable (memtable.c, mem_tree.c)
 * against a simple ordered map: every entry of a run is generated up front
 * and sorted, so the model is an array in K1 order where each entry also
 * records when the writer added it. Reader threads seek, step forwards and
 * backwards, scan and get while the writer inserts, and check each answer
 * against what had been published when the operation started and ended:
 * nothing published before it may be skipped, nothing unpublished may
 * appear out of thin air, and the order must be K1 (Invariant M1, T1).
 *
 * The key shapes aim at the tree's corners: long shared prefixes (the
 * discriminators, T5), keys that end in zero bytes or are prefixes of
 * others (zero padding), the empty key, keys longer than a discriminator
 * past the prefix (discriminator bytes running out), keys below and above
 * everything so far (open fences lowering a node's prefix), runs of
 * ascending and descending keys (end splits), and many versions of one key.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine/dbformat.h"
#include "engine/memtable.h"
#include "test.h"

typedef struct mkey {
    char ikey[48];
    uint32_t iklen;
    uint32_t added; /* the writer's step that added it (1-based) */
    int type;
} mkey;

typedef struct model {
    mkey *sorted;   /* every entry of the run, K1 order */
    mkey **by_step; /* by_step[i]: the entry added at step i + 1 */
    int n;
} model;

static uint64_t rnd_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static slice mk_ikey(const mkey *k)
{
    return slice_make(k->ikey, k->iklen);
}
static slice mk_ukey(const mkey *k)
{
    return slice_make(k->ikey, k->iklen - 8);
}

static int mkey_cmp(const void *a, const void *b)
{
    return ikey_compare(mk_ikey(a), mk_ikey(b));
}

/* The value of an entry names its step, so torn or mixed entries show. */
static size_t step_value(char *v, uint32_t step)
{
    return (size_t)snprintf(v, 40, "value-of-step-%u", step);
}

/* User key number i of a run of the given shape into k; returns its length. */
static size_t shape_key(char *k, int shape, uint32_t i, uint64_t *rs)
{
    switch (shape) {
    case 0: /* the keyspace's shape: tag, db, long shared prefix, random id */
        return (size_t)snprintf(k, 40, "m%cuser:%012llu", 0,
                                (unsigned long long)(rnd_next(rs) % 5000000));
    case 1: /* ascending */
        return (size_t)snprintf(k, 40, "m%cseq:%010u", 0, i);
    case 2: /* descending */
        return (size_t)snprintf(k, 40, "m%crev:%010u", 0, 4000000000u - i);
    case 3: { /* short binary keys: zero bytes, prefixes of each other, empty */
        size_t n = rnd_next(rs) % 4;
        for (size_t j = 0; j < n; j++)
            k[j] = "\0\1a\377"[rnd_next(rs) % 4];
        return n;
    }
    case 4: /* long keys sharing 30 bytes, differing deep inside */
        return (size_t)snprintf(k, 40, "h%clong-hash-name-shared-prefix:%06llu:f", 0,
                                (unsigned long long)(rnd_next(rs) % 300000));
    case 5: /* below and above everything else */
        return (size_t)snprintf(k, 40, "%c%u", (rnd_next(rs) & 1) ? '\001' : '\376', i % 1000);
    default: /* one hot key with many versions */
        return (size_t)snprintf(k, 40, "c%ccounter", 0);
    }
}

/* Generates n entries in writer order: runs of shapes, sequence = step. */
static void model_build(model *m, int n, uint64_t seed)
{
    mkey *order = calloc((size_t)n, sizeof(mkey));
    uint64_t rs = seed;
    int shape = 0, left = 0;
    for (int i = 0; i < n; i++) {
        if (left == 0) {
            shape = (int)(rnd_next(&rs) % 7);
            left = 1 + (int)(rnd_next(&rs) % 400);
        }
        left--;
        mkey *k = &order[i];
        size_t kl = shape_key(k->ikey, shape, (uint32_t)i, &rs);
        int r = (int)(rnd_next(&rs) % 20);
        k->type = r < 17 ? ENG_TYPE_VALUE : r < 19 ? ENG_TYPE_DELETION : ENG_TYPE_RANGE_DELETION;
        k->added = (uint32_t)i + 1;
        enc_fixed64(k->ikey + kl, ikey_pack_trailer(k->added, k->type));
        k->iklen = (uint32_t)kl + 8;
    }
    qsort(order, (size_t)n, sizeof(mkey), mkey_cmp);
    m->sorted = order;
    m->n = n;
    m->by_step = calloc((size_t)n, sizeof(mkey *));
    for (int i = 0; i < n; i++)
        m->by_step[order[i].added - 1] = &order[i];
}

static void model_free(model *m)
{
    free(m->sorted);
    free(m->by_step);
}

static void add_step(memtable *mt, const model *m, uint32_t step)
{
    const mkey *k = m->by_step[step - 1];
    char v[40];
    size_t vl = k->type == ENG_TYPE_DELETION ? 0 : step_value(v, step);
    mem_add(mt, step, k->type, mk_ukey(k), slice_make(v, vl));
}

/* The first model index whose entry is >= ik. */
static int model_lower_ikey(const model *m, slice ik)
{
    int lo = 0, hi = m->n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ikey_compare(mk_ikey(&m->sorted[mid]), ik) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The model index of an ikey the memtable returned (it must be one of the
 * run's entries: ikeys are unique, as the sequence is the step). */
static int model_find(const model *m, slice ik)
{
    int lo = model_lower_ikey(m, ik);
    return lo < m->n && ikey_compare(mk_ikey(&m->sorted[lo]), ik) == 0 ? lo : -1;
}

/* The first model index whose user key is >= uk. */
static int model_lower(const model *m, slice uk)
{
    char ik[48];
    memcpy(ik, uk.data, uk.size);
    memset(ik + uk.size, 0xff, 8); /* the highest trailer sorts first */
    return model_lower_ikey(m, slice_make(ik, uk.size + 8));
}

/* ---- Single-threaded: the whole run against the model ------------------- */

static void check_full_scan(memtable *mt, const model *m, int upto)
{
    iter *it = mem_iter_new(mt);
    int i = 0;
    for (iter_seek_first(it); iter_valid(it); iter_next(it), i++) {
        while (i < m->n && m->sorted[i].added > (uint32_t)upto)
            i++;
        CHECK_MSG(i < m->n, "scan returned more entries than were added");
        slice k = iter_key(it);
        CHECK_MSG(k.size == m->sorted[i].iklen && !memcmp(k.data, m->sorted[i].ikey, k.size),
                  "scan entry %d differs from the model", i);
    }
    while (i < m->n && m->sorted[i].added > (uint32_t)upto)
        i++;
    CHECK_MSG(i == m->n, "scan ended early at model entry %d of %d", i, m->n);
    /* and backwards */
    i = m->n - 1;
    for (iter_seek_last(it); iter_valid(it); iter_prev(it), i--) {
        while (i >= 0 && m->sorted[i].added > (uint32_t)upto)
            i--;
        CHECK(i >= 0);
        slice k = iter_key(it);
        CHECK_MSG(k.size == m->sorted[i].iklen && !memcmp(k.data, m->sorted[i].ikey, k.size),
                  "backward scan entry %d differs from the model", i);
    }
    while (i >= 0 && m->sorted[i].added > (uint32_t)upto)
        i--;
    CHECK(i < 0);
    iter_free(it);
}

/* Scan-only prefixes (memtable.h, M8) for a run: the long-key shape from
 * the start, the hot key's from step `late` on -- so that key has versions
 * in the hash index from before and versions only in the tree after. */
static void scan_only_start(memtable *mt, mem_scan_only *so)
{
    mem_scan_only_init(so);
    CHECK_EQ_INT(mem_scan_only_add(so, "h\0long", 6), 1);
    mem_set_scan_only(mt, so);
}

static void scan_only_late(mem_scan_only *so)
{
    CHECK_EQ_INT(mem_scan_only_add(so, "c\0", 2), 1);
}

TEST(EveryKeyShapeMatchesOrderedModel)
{
    for (uint64_t seed = 1; seed <= 6; seed++) {
        model m;
        int n = 40000;
        model_build(&m, n, seed * 0x9E3779B97F4A7C15ull);
        memtable *mt = mem_new_sized(seed == 2 ? 4096 : 0);
        mem_scan_only so;
        if (seed >= 5) scan_only_start(mt, &so);
        for (int s = 1; s <= n; s++) {
            if (seed >= 5 && s == n / 2) scan_only_late(&so);
            add_step(mt, &m, (uint32_t)s);
            if (s % 9973 == 0) {
                CHECK_EQ_INT(mem_check(mt), 0);
                check_full_scan(mt, &m, s);
            }
        }
        CHECK_EQ_INT(mem_check(mt), 0);
        check_full_scan(mt, &m, n);
        /* Seeks to every model key and to keys between them. */
        iter *it = mem_iter_new(mt);
        for (int i = 0; i < n; i++) {
            iter_seek(it, mk_ikey(&m.sorted[i]));
            CHECK(iter_valid(it));
            CHECK(ikey_compare(iter_key(it), mk_ikey(&m.sorted[i])) == 0);
            if (i + 1 < n) {
                iter_next(it);
                CHECK(iter_valid(it));
                CHECK(ikey_compare(iter_key(it), mk_ikey(&m.sorted[i + 1])) == 0);
                iter_prev(it);
                CHECK(ikey_compare(iter_key(it), mk_ikey(&m.sorted[i])) == 0);
            }
        }
        iter_free(it);
        /* Point reads: the newest point entry of each user key at its own
         * sequence and just below. */
        for (int i = 0; i < n; i++) {
            const mkey *k = &m.sorted[i];
            int type;
            uint64_t fs;
            slice v;
            int found = mem_get(mt, mk_ukey(k), k->added, &type, &fs, &v);
            if (k->type == ENG_TYPE_RANGE_DELETION) continue;
            CHECK_MSG(found && fs == k->added && type == k->type, "get of step %u", k->added);
            char ev[40];
            if (type == ENG_TYPE_VALUE)
                CHECK(v.size == step_value(ev, k->added) && !memcmp(v.data, ev, v.size));
        }
        mem_unref(mt);
        model_free(&m);
    }
}

/* ---- Concurrent readers ---------------------------------------------------- */

#define CONC_STEPS 60000

typedef struct shared {
    const model *m;
    memtable *mt;
    atomic_int published; /* steps the writer has finished */
    atomic_int done;
    atomic_int ready;
    char fail[256];
} shared;

/* r, returned by the memtable for an operation that ran while published
 * went from w0 to w1: every model entry from `from` up to r (exclusive; in
 * direction dir, +1 or -1) must have been unpublished at w0, and r itself
 * added by the end -- at most the writer's step in flight, w1 + 1, which is
 * visible as soon as it is linked. */
static int check_gap(const shared *sh, int from, int r, int dir, int w0, int w1, const char *what)
{
    const model *m = sh->m;
    if (r >= 0 && m->sorted[r].added > (uint32_t)w1 + 1) {
        snprintf((char *)sh->fail, sizeof(sh->fail), "%s returned step %u before it was added",
                 what, m->sorted[r].added);
        return 0;
    }
    if (r >= 0 && (dir > 0 ? r < from : r > from)) {
        snprintf((char *)sh->fail, sizeof(sh->fail), "%s moved the wrong way", what);
        return 0;
    }
    int end = r >= 0 ? r : dir > 0 ? m->n : -1;
    for (int i = from; i != end; i += dir)
        if (m->sorted[i].added <= (uint32_t)w0) {
            snprintf((char *)sh->fail, sizeof(sh->fail),
                     "%s skipped step %u, published before it started", what, m->sorted[i].added);
            return 0;
        }
    return 1;
}

static int idx_of(const shared *sh, const iter *it)
{
    if (!iter_valid(it)) return -1;
    int r = model_find(sh->m, iter_key(it));
    if (r < 0) snprintf((char *)sh->fail, sizeof(sh->fail), "an entry that was never added");
    char ev[40];
    slice v = iter_value(it);
    const mkey *k = r >= 0 ? &sh->m->sorted[r] : NULL;
    if (k && k->type != ENG_TYPE_DELETION &&
        (v.size != step_value(ev, k->added) || memcmp(v.data, ev, v.size)))
        snprintf((char *)sh->fail, sizeof(sh->fail), "torn value for step %u", k->added);
    return r;
}

static void *reader(void *arg)
{
    shared *sh = arg;
    const model *m = sh->m;
    uint64_t rs = (uint64_t)(uintptr_t)&rs | 1;
    iter *it = mem_iter_new(sh->mt);
    atomic_fetch_add(&sh->ready, 1);
    while (!atomic_load(&sh->done) && !sh->fail[0]) {
        int w0 = atomic_load(&sh->published);
        /* A seek to a random model key, then a few steps either way. */
        int t = (int)(rnd_next(&rs) % (uint64_t)m->n);
        iter_seek(it, mk_ikey(&m->sorted[t]));
        int r = idx_of(sh, it);
        if (sh->fail[0] || !check_gap(sh, t, r, 1, w0, atomic_load(&sh->published), "seek")) break;
        for (int s = 0; s < 20 && r >= 0 && !sh->fail[0]; s++) {
            int back = (int)(rnd_next(&rs) & 1);
            int w = atomic_load(&sh->published);
            int from = r;
            if (back)
                iter_prev(it);
            else
                iter_next(it);
            r = idx_of(sh, it);
            if (sh->fail[0] || !check_gap(sh, from + (back ? -1 : 1), r, back ? -1 : 1, w,
                                          atomic_load(&sh->published), back ? "prev" : "next"))
                break;
        }
        /* A point read: the newest version published at the start must be
         * seen, or a newer one. */
        int g = (int)(rnd_next(&rs) % (uint64_t)m->n), type;
        const mkey *k = &m->sorted[g];
        uint64_t fs;
        slice v;
        w0 = atomic_load(&sh->published);
        int found = mem_get(sh->mt, mk_ukey(k), ENG_MAX_SEQUENCE, &type, &fs, &v);
        int w1 = atomic_load(&sh->published);
        /* the model's newest point entry of k's user key as of w0 */
        int lo = model_lower(m, mk_ukey(k));
        uint32_t want = 0;
        for (int i = lo; i < m->n && slice_compare(mk_ukey(&m->sorted[i]), mk_ukey(k)) == 0; i++)
            if (m->sorted[i].type != ENG_TYPE_RANGE_DELETION &&
                m->sorted[i].added <= (uint32_t)w0 && m->sorted[i].added > want)
                want = m->sorted[i].added;
        if ((want && (!found || fs < want)) || (found && fs > (uint64_t)w1 + 1))
            snprintf(sh->fail, sizeof(sh->fail), "get: found %d seq %llu, want >= %u", found,
                     (unsigned long long)fs, want);
    }
    iter_free(it);
    return NULL;
}

static void *scanner(void *arg)
{
    shared *sh = arg;
    const model *m = sh->m;
    iter *it = mem_iter_new(sh->mt);
    atomic_fetch_add(&sh->ready, 1);
    while (!atomic_load(&sh->done) && !sh->fail[0]) {
        int w0 = atomic_load(&sh->published), prev = -1;
        for (iter_seek_first(it); iter_valid(it) && !sh->fail[0]; iter_next(it)) {
            int r = idx_of(sh, it);
            if (r < 0 || !check_gap(sh, prev + 1, r, 1, w0, atomic_load(&sh->published), "scan"))
                break;
            prev = r;
        }
        if (!sh->fail[0]) check_gap(sh, prev + 1, -1, 1, w0, m->n, "scan end");
    }
    iter_free(it);
    return NULL;
}

static void run_concurrent(int scan_only)
{
    model m;
    model_build(&m, CONC_STEPS, 0x1234567ull);
    shared sh = {.m = &m};
    sh.mt = mem_new();
    mem_scan_only so;
    if (scan_only) scan_only_start(sh.mt, &so);
    pthread_t th[3];
    CHECK_EQ_INT(pthread_create(&th[0], NULL, reader, &sh), 0);
    CHECK_EQ_INT(pthread_create(&th[1], NULL, reader, &sh), 0);
    CHECK_EQ_INT(pthread_create(&th[2], NULL, scanner, &sh), 0);
    while (atomic_load(&sh.ready) < 3)
        sched_yield();
    for (int s = 1; s <= CONC_STEPS && !sh.fail[0]; s++) {
        if (scan_only && s == CONC_STEPS / 2) scan_only_late(&so);
        add_step(sh.mt, &m, (uint32_t)s);
        atomic_store(&sh.published, s);
        if (s % 256 == 0) sched_yield(); /* let the readers overlap the writer on one core too */
    }
    atomic_store(&sh.done, 1);
    for (int t = 0; t < 3; t++)
        pthread_join(th[t], NULL);
    CHECK_MSG(!sh.fail[0], "%s", sh.fail);
    CHECK_EQ_INT(mem_check(sh.mt), 0);
    check_full_scan(sh.mt, &m, CONC_STEPS);
    mem_unref(sh.mt);
    model_free(&m);
}

TEST(ConcurrentReadersMatchOrderedModel)
{
    run_concurrent(0);
}

/* As above with scan-only prefixes, one added while the readers run. */
TEST(ConcurrentReadersMatchOrderedModelWithScanOnlyKeys)
{
    run_concurrent(1);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
