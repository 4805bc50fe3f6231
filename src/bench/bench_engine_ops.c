/*
 * bench_engine_ops.c -- the data and the operations of `strata-bench engine`
 * (bench_engine.h describes the workload): deterministic keys and values,
 * the fills, the checked reads and the checked seeks, run through the
 * bench_backend table so both engines do exactly the same work.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_engine.h"

/* Seeds of the fills' value generators; op_read recomputes fillseq's. */
#define FILLRANDOM_SEED 1
#define OVERWRITE_SEED 2
#define FILLSEQ_SEED 3

const char *const bench_eng_op_names[OP_COUNT] = {
    "fillrandom", "overwrite", "fillseq", "compact", "readrandom", "readmissing", "seekrandom"};

/* ---- Deterministic data ------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef struct value_gen {
    char *data;
    size_t pos;
} value_gen;

/* Fills the 1 MiB buffer: per 100-byte chunk, 50 random printable bytes
 * followed by the same 50 again (compressible to about half). */
static int value_gen_init(value_gen *g, uint64_t seed)
{
    g->data = malloc(GEN_BYTES);
    g->pos = 0;
    if (!g->data) return -1;
    uint64_t s = seed;
    for (size_t off = 0; off < GEN_BYTES; off += 100) {
        size_t n = GEN_BYTES - off < 100 ? GEN_BYTES - off : 100;
        for (size_t i = 0; i < n; i++)
            g->data[off + i] = i < 50 ? (char)(' ' + splitmix(&s) % 95) : g->data[off + i - 50];
    }
    return 0;
}

/* REQUIRES: len <= GEN_BYTES. Returns a pointer into the buffer. */
static const char *value_gen_next(value_gen *g, size_t len)
{
    if (g->pos + len > GEN_BYTES) g->pos = 0;
    const char *p = g->data + g->pos;
    g->pos += len;
    return p;
}

/* "%016llu" without printf, whose cost would otherwise dilute both engines'
 * numbers alike. */
static void make_key(char *buf, uint64_t n)
{
    for (int i = KEY_LEN - 1; i >= 0; i--, n /= 10)
        buf[i] = (char)('0' + n % 10);
}

/* The value fillseq stored for key number i: the generator hands out
 * consecutive slices and restarts at 0 when a slice would not fit. */
static const char *fillseq_value(const value_gen *g, uint64_t i, size_t vs)
{
    return g->data + (i % (GEN_BYTES / vs)) * vs;
}
int bench_eng_value_matches(const char *engine, const char *k, const char *v, size_t vlen,
                            const char *expect, size_t vl)
{
    if (vlen == vl && memcmp(v, expect, vl) == 0) return 0;
    fprintf(stderr, "%s: key %.16s has a wrong value (%zu bytes, expected %zu)\n", engine, k, vlen,
            vl);
    return -1;
}

/* ---- Operations -------------------------------------------------------- */

/* num puts; key numbers in order (seq) or drawn from `seed`. */
static int op_fill(const bench_backend *be, void *db, const bench_cfg *cfg, int seq, uint64_t seed)
{
    value_gen g;
    if (value_gen_init(&g, cfg->seed * 31 + seed) < 0) return -1;
    uint64_t rnd = cfg->seed + seed;
    char key[KEY_LEN];
    int rc = 0;
    for (uint64_t i = 0; i < cfg->num && rc == 0; i++) {
        uint64_t n = seq ? i : splitmix(&rnd) % cfg->num;
        make_key(key, 2 * n);
        rc = be->put(db, key, value_gen_next(&g, cfg->value_size), cfg->value_size);
    }
    free(g.data);
    return rc;
}

/* cfg->reads gets of present (missing = 0) or absent keys of the fillseq db;
 * checks every answer. */
static int op_read(const bench_backend *be, void *db, const bench_cfg *cfg, int missing)
{
    value_gen g;
    if (value_gen_init(&g, cfg->seed * 31 + FILLSEQ_SEED) < 0) return -1;
    uint64_t rnd = cfg->seed + 4 + missing, found_total = 0;
    char key[KEY_LEN];
    int rc = 0;
    for (uint64_t i = 0; i < cfg->reads && rc == 0; i++) {
        uint64_t n = splitmix(&rnd) % cfg->num;
        make_key(key, 2 * n + (missing ? 1 : 0));
        int found;
        rc = be->get(db, key, fillseq_value(&g, n, cfg->value_size), cfg->value_size, &found);
        found_total += found;
    }
    free(g.data);
    uint64_t expect = missing ? 0 : cfg->reads;
    if (rc < 0 || found_total == expect) return rc;
    fprintf(stderr, "%s: %s found %" PRIu64 " of %" PRIu64 " keys, expected %" PRIu64 "\n",
            be->name, missing ? "readmissing" : "readrandom", found_total, cfg->reads, expect);
    return -1;
}

/* Checks one seek: lands on the key sought, then keys ascend by 2 (every even
 * key number below num is present after fillseq). */
static int check_seek_key(const bench_backend *be, void *it, uint64_t expect)
{
    size_t kl;
    const char *k = be->iter_key(it, &kl);
    char want[KEY_LEN];
    make_key(want, expect);
    if (kl == KEY_LEN && memcmp(k, want, KEY_LEN) == 0) return 0;
    fprintf(stderr, "%s: seekrandom: got key %.*s, expected %.16s\n", be->name, (int)kl, k, want);
    return -1;
}

static int op_seek(const bench_backend *be, void *db, const bench_cfg *cfg)
{
    void *it = be->iter_new(db);
    if (!it) return -1;
    uint64_t rnd = cfg->seed + 6;
    char key[KEY_LEN];
    int rc = 0;
    for (uint64_t i = 0; i < cfg->seeks && rc == 0; i++) {
        uint64_t n = splitmix(&rnd) % cfg->num;
        make_key(key, 2 * n);
        be->iter_seek(it, key, KEY_LEN);
        for (int j = 0; j <= SEEK_NEXTS && rc == 0 && n + j < cfg->num; j++) {
            if (!be->iter_valid(it)) {
                fprintf(stderr, "%s: seekrandom: iterator ended early\n", be->name);
                rc = -1;
                break;
            }
            /* Checking every key costs the same on both engines; check a few. */
            if (j == 0 || j == SEEK_NEXTS) rc = check_seek_key(be, it, 2 * (n + j));
            if (j < SEEK_NEXTS) be->iter_next(it);
        }
    }
    if (be->iter_done(it) < 0) rc = -1;
    return rc;
}

int bench_eng_run_op(const bench_backend *be, void *db, const bench_cfg *cfg, int op)
{
    switch (op) {
    case OP_FILLRANDOM:
        return op_fill(be, db, cfg, 0, FILLRANDOM_SEED);
    case OP_OVERWRITE:
        return op_fill(be, db, cfg, 0, OVERWRITE_SEED);
    case OP_FILLSEQ:
        return op_fill(be, db, cfg, 1, FILLSEQ_SEED);
    case OP_COMPACT:
        return be->flush_compact(db);
    case OP_READRANDOM:
        return op_read(be, db, cfg, 0);
    case OP_READMISSING:
        return op_read(be, db, cfg, 1);
    default:
        return op_seek(be, db, cfg);
    }
}
