/*
 * eng_model_test.c -- a randomized model test of the engine: long random
 * sequences of puts, deletes, range deletes, batches (plain and indexed,
 * read through before commit), snapshots, forward/backward iteration and
 * seeks, checked against a simple in-memory ordered map, with flushes,
 * compactions and close/reopen in between. A tiny write buffer and tiny
 * level targets make tables and compactions happen constantly.
 *
 * Fixed seed by default; STRATA_SEED=n STRATA_OPS=n run another, longer
 * sequence. A failure prints the seed and the op number.
 */
#include "engine/engine.h"
#include "test.h"
#include "test_rng.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The model: a sorted array of owned key/value strings ----------------- */

typedef struct kv {
    char *k, *v;
    size_t kl, vl;
    int pinned; /* filter test: a snapshot saw this expired value, so it stays */
} kv;

typedef struct model {
    kv *a;
    size_t n, cap;
} model;

static int kcmp(const char *a, size_t al, const char *b, size_t bl)
{
    size_t n = al < bl ? al : bl;
    int r = n ? memcmp(a, b, n) : 0;
    if (r) return r;
    return al < bl ? -1 : al > bl;
}

static char *dup_bytes(const char *p, size_t n)
{
    char *q = malloc(n + 1);
    if (n) memcpy(q, p, n);
    q[n] = 0;
    return q;
}

/* Index of the first key >= k. */
static size_t lower_bound(const model *m, const char *k, size_t kl)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (kcmp(m->a[mid].k, m->a[mid].kl, k, kl) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void model_put(model *m, const char *k, size_t kl, const char *v, size_t vl)
{
    size_t i = lower_bound(m, k, kl);
    if (i < m->n && kcmp(m->a[i].k, m->a[i].kl, k, kl) == 0) {
        free(m->a[i].v);
        m->a[i].v = dup_bytes(v, vl);
        m->a[i].vl = vl;
        return;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->a = realloc(m->a, m->cap * sizeof(kv));
    }
    memmove(&m->a[i + 1], &m->a[i], (m->n - i) * sizeof(kv));
    m->a[i] = (kv){dup_bytes(k, kl), dup_bytes(v, vl), kl, vl, 0};
    m->n++;
}

static void model_del_range(model *m, const char *a, size_t al, const char *z, size_t zl)
{
    size_t i = lower_bound(m, a, al), j = i;
    while (j < m->n && kcmp(m->a[j].k, m->a[j].kl, z, zl) < 0)
        j++;
    if (j <= i) return;
    for (size_t x = i; x < j; x++) {
        free(m->a[x].k);
        free(m->a[x].v);
    }
    memmove(&m->a[i], &m->a[j], (m->n - j) * sizeof(kv));
    m->n -= j - i;
}

static void model_del(model *m, const char *k, size_t kl)
{
    size_t i = lower_bound(m, k, kl);
    if (i < m->n && kcmp(m->a[i].k, m->a[i].kl, k, kl) == 0) {
        free(m->a[i].k);
        free(m->a[i].v);
        memmove(&m->a[i], &m->a[i + 1], (m->n - i - 1) * sizeof(kv));
        m->n--;
    }
}

static model *model_copy(const model *m)
{
    model *c = calloc(1, sizeof(*c));
    c->cap = c->n = m->n;
    c->a = malloc((m->n + 1) * sizeof(kv));
    for (size_t i = 0; i < m->n; i++)
        c->a[i] = (kv){dup_bytes(m->a[i].k, m->a[i].kl), dup_bytes(m->a[i].v, m->a[i].vl),
                       m->a[i].kl, m->a[i].vl, 0};
    return c;
}

static void model_free(model *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->a[i].k);
        free(m->a[i].v);
    }
    free(m->a);
    free(m);
}

/* ---- Randomness (test_rng.h) -------------------------------------------------- */

#define KEYSPACE 1500

/* Default lengths: the ASan+UBSan build runs a shorter sequence so the suite
 * stays fast; STRATA_OPS overrides both. */
#ifdef __SANITIZE_ADDRESS__
#define DEFAULT_OPS 6000
#else
#define DEFAULT_OPS 10000
#endif

/* Random keys cluster so that ops overlap; some carry a zero byte. */
static size_t rand_key(char *out)
{
    int n = snprintf(out, 32, "k%05u", rn(KEYSPACE));
    if (rn(8) == 0) {
        out[n++] = 0;
        out[n++] = (char)('a' + rn(3));
    }
    return (size_t)n;
}

static size_t rand_value(char *out, uint64_t op)
{
    size_t n = rn(6) == 0 ? 0 : (size_t)snprintf(out, 64, "v%llu-", (unsigned long long)op);
    size_t pad = rn(4) == 0 ? rn(400) : rn(40);
    for (size_t i = 0; i < pad; i++)
        out[n++] = (char)('a' + (op + i) % 26);
    return n;
}

/* ---- Checks against the model ------------------------------------------- */

static uint64_t seed, op_no;

static void check_get(eng_db *db, const eng_snapshot *snap, eng_batch *b, const model *m,
                      const char *k, size_t kl)
{
    char *v = NULL;
    size_t vl = 0;
    eng_status s =
        b ? eng_get_batch(db, snap, b, k, kl, &v, &vl) : eng_get(db, snap, k, kl, &v, &vl);
    size_t i = lower_bound(m, k, kl);
    int present = i < m->n && kcmp(m->a[i].k, m->a[i].kl, k, kl) == 0;
    CHECK_MSG(s == (present ? ENG_OK : ENG_NOTFOUND),
              "seed %llu op %llu: get %.*s: status %s, model %s (%s)", (unsigned long long)seed,
              (unsigned long long)op_no, (int)kl, k, eng_status_str(s),
              present ? "present" : "absent", eng_last_error());
    if (present) {
        int same = vl == m->a[i].vl && (!vl || !memcmp(v, m->a[i].v, vl));
        eng_free(v);
        CHECK_MSG(same, "seed %llu op %llu: get %.*s: wrong value", (unsigned long long)seed,
                  (unsigned long long)op_no, (int)kl, k);
    }
}

static void check_pos(eng_iter *it, const model *m, long pos, const char *what)
{
    int valid = eng_iter_valid(it);
    CHECK_MSG(eng_iter_status(it) == ENG_OK, "seed %llu op %llu: iterator error %s",
              (unsigned long long)seed, (unsigned long long)op_no,
              eng_status_str(eng_iter_status(it)));
    CHECK_MSG(valid == (pos >= 0), "seed %llu op %llu: after %s: valid %d, model pos %ld of %zu",
              (unsigned long long)seed, (unsigned long long)op_no, what, valid, pos, m->n);
    if (!valid) return;
    size_t kl, vl;
    const char *k = eng_iter_key(it, &kl), *v = eng_iter_value(it, &vl);
    const kv *e = &m->a[pos];
    CHECK_MSG(kcmp(k, kl, e->k, e->kl) == 0, "seed %llu op %llu: after %s: key %.*s, model %.*s",
              (unsigned long long)seed, (unsigned long long)op_no, what, (int)kl, k, (int)e->kl,
              e->k);
    CHECK_MSG(vl == e->vl && (!vl || !memcmp(v, e->v, vl)),
              "seed %llu op %llu: after %s: wrong value for %.*s", (unsigned long long)seed,
              (unsigned long long)op_no, what, (int)kl, k);
}

/* A random walk of seeks and steps, each position checked. */
static void check_iter_walk(eng_iter *it, const model *m, int steps)
{
    long pos = -1;
    char k[40];
    for (int s = 0; s < steps; s++) {
        const char *what;
        unsigned r = rn(10);
        if (pos < 0 || r == 0) {
            unsigned w = rn(4);
            if (w == 0) {
                eng_iter_seek_first(it);
                pos = m->n ? 0 : -1;
                what = "seek_first";
            } else if (w == 1) {
                eng_iter_seek_last(it);
                pos = (long)m->n - 1;
                what = "seek_last";
            } else if (w == 2) {
                size_t kl = rand_key(k);
                eng_iter_seek(it, k, kl);
                size_t i = lower_bound(m, k, kl);
                pos = i < m->n ? (long)i : -1;
                what = "seek";
            } else {
                size_t kl = rand_key(k);
                eng_iter_seek_prev(it, k, kl);
                size_t i = lower_bound(m, k, kl);
                if (i < m->n && kcmp(m->a[i].k, m->a[i].kl, k, kl) == 0)
                    pos = (long)i;
                else
                    pos = (long)i - 1;
                what = "seek_prev";
            }
        } else if (r < 6) {
            eng_iter_next(it);
            pos = pos + 1 < (long)m->n ? pos + 1 : -1;
            what = "next";
        } else {
            eng_iter_prev(it);
            pos = pos - 1;
            what = "prev";
        }
        check_pos(it, m, pos, what);
    }
}

static void check_full_scan(eng_db *db, const eng_snapshot *snap, const model *m)
{
    eng_iter *it = eng_iter_new(db, snap, NULL);
    long pos = 0;
    for (eng_iter_seek_first(it); pos < (long)m->n; pos++) {
        check_pos(it, m, pos, "scan");
        eng_iter_next(it);
    }
    check_pos(it, m, -1, "scan end");
    eng_iter_free(it);
}

/* ---- The driver ------------------------------------------------------------ */

#define MAX_SNAPS 4

typedef struct world {
    eng_db *db;
    eng_options o;
    model *m;
    const eng_snapshot *snap[MAX_SNAPS];
    model *snap_m[MAX_SNAPS];
    eng_iter *live_it; /* an iterator kept open across writes */
    model *live_m;
    uint64_t flushes, compactions; /* over every open so far */
} world;

static void add_stats(world *w)
{
    eng_stats st;
    eng_get_stats(w->db, &st);
    w->flushes += st.flushes;
    w->compactions += st.compactions;
}

static void open_world(world *w)
{
    eng_status s = eng_open(test_tmpdir(), &w->o, &w->db);
    CHECK_MSG(s == ENG_OK, "seed %llu op %llu: open: %s %s", (unsigned long long)seed,
              (unsigned long long)op_no, eng_status_str(s), eng_last_error());
}

static void drop_views(world *w)
{
    for (int i = 0; i < MAX_SNAPS; i++)
        if (w->snap[i]) {
            eng_snapshot_release(w->db, w->snap[i]);
            model_free(w->snap_m[i]);
            w->snap[i] = NULL;
        }
    if (w->live_it) {
        eng_iter_free(w->live_it);
        model_free(w->live_m);
        w->live_it = NULL;
    }
}

/* Adds a random op to batch b (NULL: write it alone) and applies it to m. */
static void random_write(world *w, eng_batch *b, model *m)
{
    char k[40], k2[40], v[512];
    size_t kl = rand_key(k);
    unsigned r = rn(20);
    eng_batch *own = b ? NULL : eng_batch_new(0);
    eng_batch *t = b ? b : own;
    if (r < 13) {
        size_t vl = rand_value(v, op_no);
        eng_batch_put(t, k, kl, v, vl);
        model_put(m, k, kl, v, vl);
    } else if (r < 19) {
        eng_batch_delete(t, k, kl);
        model_del(m, k, kl);
    } else {
        size_t k2l = rand_key(k2);
        if (rn(4) == 0) { /* a narrow range: a few keys */
            memcpy(k2, k, kl);
            k2l = kl;
            k2[4] = (char)(k2[4] + 1);
        }
        eng_batch_delete_range(t, k, kl, k2, k2l);
        model_del_range(m, k, kl, k2, k2l);
    }
    if (own) {
        eng_status s = eng_write(w->db, own, rn(10) == 0 ? ENG_WRITE_DEFER : 0);
        CHECK_MSG(s == ENG_OK, "seed %llu op %llu: write: %s", (unsigned long long)seed,
                  (unsigned long long)op_no, eng_status_str(s));
        eng_batch_free(own);
    }
}

static void indexed_batch_round(world *w)
{
    eng_batch *b = eng_batch_new(1);
    model *bm = model_copy(w->m);
    int n = 1 + (int)rn(12);
    for (int i = 0; i < n; i++)
        random_write(w, b, bm);
    char k[40];
    for (int i = 0; i < 10; i++) {
        size_t kl = rand_key(k);
        check_get(w->db, NULL, b, bm, k, kl);
    }
    eng_iter *it = eng_iter_new(w->db, NULL, b);
    check_iter_walk(it, bm, 30);
    eng_iter_free(it);
    if (rn(3)) {
        CHECK(eng_write(w->db, b, 0) == ENG_OK);
        model_free(w->m);
        w->m = bm;
    } else {
        model_free(bm);
    }
    eng_batch_free(b);
}

static void step(world *w)
{
    unsigned r = rn(1000);
    char k[40];
    if (r < 550) {
        random_write(w, NULL, w->m);
    } else if (r < 650) {
        eng_batch *b = eng_batch_new(0);
        int n = 2 + (int)rn(10);
        for (int i = 0; i < n; i++)
            random_write(w, b, w->m);
        CHECK(eng_write(w->db, b, 0) == ENG_OK);
        eng_batch_free(b);
    } else if (r < 700) {
        indexed_batch_round(w);
    } else if (r < 850) {
        int i = (int)rn(MAX_SNAPS);
        size_t kl = rand_key(k);
        if (w->snap[i])
            check_get(w->db, w->snap[i], NULL, w->snap_m[i], k, kl);
        else
            check_get(w->db, NULL, NULL, w->m, k, kl);
    } else if (r < 880) {
        int i = (int)rn(MAX_SNAPS);
        if (w->snap[i]) {
            eng_snapshot_release(w->db, w->snap[i]);
            model_free(w->snap_m[i]);
            w->snap[i] = NULL;
        } else {
            w->snap[i] = eng_snapshot_new(w->db);
            w->snap_m[i] = model_copy(w->m);
        }
    } else if (r < 920) {
        int i = (int)rn(MAX_SNAPS);
        eng_iter *it = eng_iter_new(w->db, w->snap[i], NULL);
        check_iter_walk(it, w->snap[i] ? w->snap_m[i] : w->m, 40);
        eng_iter_free(it);
    } else if (r < 950) {
        if (w->live_it) {
            check_iter_walk(w->live_it, w->live_m, 40);
            eng_iter_free(w->live_it);
            model_free(w->live_m);
            w->live_it = NULL;
        } else {
            w->live_it = eng_iter_new(w->db, NULL, NULL);
            w->live_m = model_copy(w->m);
        }
    } else if (r < 957) {
        CHECK(eng_flush(w->db) == ENG_OK);
    } else if (r < 962) {
        char k2[40];
        size_t kl = rand_key(k), k2l = rand_key(k2);
        eng_status s = rn(3) == 0 ? eng_compact_range(w->db, NULL, 0, NULL, 0)
                                  : eng_compact_range(w->db, k, kl, k2, k2l);
        CHECK_MSG(s == ENG_OK, "compact: %s", eng_status_str(s));
    } else if (r < 965) {
        drop_views(w);
        add_stats(w);
        CHECK(eng_close(w->db) == ENG_OK);
        open_world(w);
    } else {
        check_full_scan(w->db, NULL, w->m);
    }
}

/* The whole run against the model; inplace: eng_options.inplace_updates,
 * which the run's snapshots and iterators switch off and on again. */
static void run_model(int inplace)
{
    const char *se = getenv("STRATA_SEED"), *so = getenv("STRATA_OPS");
    seed = se ? strtoull(se, NULL, 10) : 20261130;
    uint64_t ops = so ? strtoull(so, NULL, 10) : DEFAULT_OPS;
    rng = seed * 2654435761u + 1;
    world w;
    memset(&w, 0, sizeof(w));
    eng_options_init(&w.o);
    w.o.write_buffer_size = 16 << 10;
    w.o.target_file_size = 16 << 10;
    w.o.max_bytes_level_base = 32 << 10;
    w.o.level_size_multiplier = 4;
    w.o.block_size = 512;
    w.o.l0_compaction_trigger = 2;
    w.o.cache_size = 64 << 10;
    w.o.sync_mode = ENG_SYNC_NO;
    w.o.compression_level = rn(2);
    w.o.inplace_updates = inplace;
    w.m = calloc(1, sizeof(model));
    open_world(&w);
    for (op_no = 0; op_no < ops; op_no++)
        step(&w);
    check_full_scan(w.db, NULL, w.m);
    drop_views(&w);
    add_stats(&w);
    printf("seed %llu: %llu ops, %llu flushes, %llu compactions\n", (unsigned long long)seed,
           (unsigned long long)ops, (unsigned long long)w.flushes,
           (unsigned long long)w.compactions);
    CHECK_MSG(w.flushes > 10 && w.compactions > 3,
              "too little background work: %llu flushes %llu compactions",
              (unsigned long long)w.flushes, (unsigned long long)w.compactions);
    CHECK(eng_close(w.db) == ENG_OK);
    open_world(&w);
    check_full_scan(w.db, NULL, w.m);
    CHECK(eng_close(w.db) == ENG_OK);
    model_free(w.m);
}

TEST(RandomOpsMatchOrderedMapModel)
{
    run_model(0);
}

TEST(InplaceUpdatesNeverHideAVersionASnapshotOrIteratorReads)
{
    run_model(1);
}

/* ---- The compaction filter against the model ------------------------------- */

/* Values starting with 'X' are expired: the filter may drop them. */
static int drop_x(void *ctx, const char *k, size_t kl, const char *v, size_t vl)
{
    return vl > 0 && v[0] == 'X';
}

/* A key whose model value is expired may be absent (the filter dropped it),
 * but it never shows an older version, and every other key is exact. For a
 * snapshot (snap != NULL) the answer is also stable: an expired value it has
 * seen stays (the filter never touches what a snapshot sees), and one it
 * has found gone stays gone. */
static void check_filtered(eng_db *db, const eng_snapshot *snap, model *m, const char *k, size_t kl)
{
    char *v = NULL;
    size_t vl = 0;
    eng_status s = eng_get(db, snap, k, kl, &v, &vl);
    size_t i = lower_bound(m, k, kl);
    int present = i < m->n && kcmp(m->a[i].k, m->a[i].kl, k, kl) == 0;
    int expired = present && m->a[i].vl > 0 && m->a[i].v[0] == 'X';
    int ok = s == ENG_OK ? present && vl == m->a[i].vl && !memcmp(v, m->a[i].v, vl)
                         : s == ENG_NOTFOUND && (!present || (expired && !m->a[i].pinned));
    eng_free(v);
    CHECK_MSG(ok, "seed %llu op %llu: filtered get %.*s%s: %s (model %s%s)",
              (unsigned long long)seed, (unsigned long long)op_no, (int)kl, k,
              snap ? " at snapshot" : "", eng_status_str(s),
              !present  ? "absent"
              : expired ? "expired"
                        : "live",
              present && m->a[i].pinned ? ", seen" : "");
    if (snap && expired && s == ENG_OK) m->a[i].pinned = 1;
    if (snap && expired && s == ENG_NOTFOUND) model_del(m, k, kl);
}

TEST(CompactionFilterNeverResurrectsOlderVersionsNorTouchesSnapshots)
{
    const char *se = getenv("STRATA_SEED"), *so = getenv("STRATA_OPS");
    seed = se ? strtoull(se, NULL, 10) : 424242;
    uint64_t ops = so ? strtoull(so, NULL, 10) / 4 : DEFAULT_OPS / 3;
    rng = seed * 2654435761u + 7;
    eng_options o;
    eng_options_init(&o);
    o.write_buffer_size = 8 << 10;
    o.target_file_size = 16 << 10;
    o.max_bytes_level_base = 32 << 10;
    o.l0_compaction_trigger = 2;
    o.sync_mode = ENG_SYNC_NO;
    o.compaction_filter = drop_x;
    eng_db *db = NULL;
    CHECK(eng_open(test_tmpdir(), &o, &db) == ENG_OK);
    model *m = calloc(1, sizeof(model));
    const eng_snapshot *snap = NULL;
    model *snap_m = NULL;
    char k[40], v[64];
    for (op_no = 0; op_no < ops; op_no++) {
        unsigned r = rn(100);
        size_t kl = (size_t)snprintf(k, sizeof(k), "f%04u", rn(300));
        if (r < 60) {
            size_t vl = (size_t)snprintf(v, sizeof(v), "%c%llu", rn(3) ? 'L' : 'X',
                                         (unsigned long long)op_no);
            eng_batch *b = eng_batch_new(0);
            eng_batch_put(b, k, kl, v, vl);
            CHECK(eng_write(db, b, 0) == ENG_OK);
            eng_batch_free(b);
            model_put(m, k, kl, v, vl);
        } else if (r < 70) {
            eng_batch *b = eng_batch_new(0);
            eng_batch_delete(b, k, kl);
            CHECK(eng_write(db, b, 0) == ENG_OK);
            eng_batch_free(b);
            model_del(m, k, kl);
        } else if (r < 90) {
            check_filtered(db, NULL, m, k, kl);
            if (snap) check_filtered(db, snap, snap_m, k, kl);
        } else if (r < 94) {
            if (snap) {
                eng_snapshot_release(db, snap);
                model_free(snap_m);
                snap = NULL;
            } else {
                snap = eng_snapshot_new(db);
                snap_m = model_copy(m);
            }
        } else if (r < 97) {
            CHECK(eng_flush(db) == ENG_OK);
        } else {
            CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
        }
    }
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    for (unsigned i = 0; i < 300; i++) {
        size_t kl = (size_t)snprintf(k, sizeof(k), "f%04u", i);
        check_filtered(db, NULL, m, k, kl);
        if (snap) check_filtered(db, snap, snap_m, k, kl);
    }
    if (snap) {
        eng_snapshot_release(db, snap);
        model_free(snap_m);
    }
    CHECK(eng_close(db) == ENG_OK);
    model_free(m);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
