/*
 * eng_index_search_test.c -- point reads through a table's index search
 * array (table_reader.c, index_find): 16 prefix bytes after the bytes every
 * index key shares, a full key comparison where they tie. Keys of the
 * shapes that decide which path a comparison takes: a table spanning two
 * namespaces (no shared prefix), keys that differ inside the first 8
 * bytes, inside the second 8, only after 16 (every prefix ties), keys
 * shorter than 16 bytes (zero padding) and prefixes of other keys; every
 * key present is found with its value, every key between two is absent.
 */
#include "engine/engine.h"
#include "test.h"
#include "eng_db_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static eng_db *open_db(void)
{
    eng_options o;
    eng_options_init(&o);
    o.block_size = 512; /* many blocks: a long index to search */
    o.sync_mode = ENG_SYNC_NO;
    o.row_cache_size = 0; /* every read goes through the index */
    eng_db *db = NULL;
    eng_status s = eng_open(test_tmpdir(), &o, &db);
    CHECK_MSG(s == ENG_OK, "open: %s %s", eng_status_str(s), eng_last_error());
    return db;
}

enum { NKEYS = 6000 };

/* Key i of the test, into k (64 bytes). */
static void key_of(int i, char *k)
{
    switch (i % 5) {
    case 0: /* differs inside the first 8 bytes after "k" NUL */
        snprintf(k, 64, "k%cu:%d", 0, i);
        break;
    case 1: /* inside the second 8 */
        snprintf(k, 64, "k%cuser:profile:%d", 0, i);
        break;
    case 2: /* only after 16: every prefix ties */
        snprintf(k, 64, "k%cshared-by-every-one-of-them:%06d", 0, i);
        break;
    case 3: /* short, and a prefix of case 4's keys */
        snprintf(k, 64, "x%c%d", 0, i / 5);
        break;
    default:
        snprintf(k, 64, "x%c%d%c", 0, i / 5, 1);
    }
}

static size_t key_len(int i, const char *k)
{
    return 2 + strlen(k + 2) + (i % 5 == 4);
}

typedef struct mkey {
    char k[64];
    size_t kl;
} mkey;

static int mkey_cmp(const void *pa, const void *pb)
{
    const mkey *a = pa, *b = pb;
    size_t n = a->kl < b->kl ? a->kl : b->kl;
    int c = memcmp(a->k, b->k, n);
    return c ? c : (a->kl > b->kl) - (a->kl < b->kl);
}

static mkey model[NKEYS];

static int in_model(const char *k, size_t kl)
{
    mkey x;
    memcpy(x.k, k, kl);
    x.kl = kl;
    return bsearch(&x, model, NKEYS, sizeof(mkey), mkey_cmp) != NULL;
}

/* A read of (k, kl): present exactly when the model has it. */
static void check_probe(eng_db *db, const char *k, size_t kl, int i, const char *what)
{
    char *got = NULL;
    size_t vl;
    eng_status s = eng_get(db, NULL, k, kl, &got, &vl);
    CHECK_MSG(s == (in_model(k, kl) ? ENG_OK : ENG_NOTFOUND), "key %d %s: %s", i, what,
              eng_status_str(s));
    if (s == ENG_OK) eng_free(got);
}

TEST(PointReadsFindEveryKeyWhenPrefixesTieOrDifferLate)
{
    eng_db *db = open_db();
    char k[64], v[64];
    eng_batch *b = eng_batch_new(0);
    for (int i = 0; i < NKEYS; i++) {
        key_of(i, k);
        snprintf(v, sizeof(v), "value %d with some bytes to fill blocks", i);
        eng_batch_put(b, k, key_len(i, k), v, strlen(v));
        memcpy(model[i].k, k, key_len(i, k));
        model[i].kl = key_len(i, k);
    }
    qsort(model, NKEYS, sizeof(mkey), mkey_cmp);
    CHECK(eng_write(db, b, 0) == ENG_OK);
    eng_batch_free(b);
    CHECK(eng_flush(db) == ENG_OK);
    CHECK(eng_compact_range(db, NULL, 0, NULL, 0) == ENG_OK);
    for (int i = 0; i < NKEYS; i++) {
        key_of(i, k);
        size_t kl = key_len(i, k), vl;
        char *got = NULL;
        snprintf(v, sizeof(v), "value %d with some bytes to fill blocks", i);
        eng_status s = eng_get(db, NULL, k, kl, &got, &vl);
        CHECK_MSG(s == ENG_OK && vl == strlen(v) && !memcmp(got, v, vl), "key %d: %s", i,
                  eng_status_str(s));
        eng_free(got);
        k[kl] = 0;
        check_probe(db, k, kl + 1, i, "+ NUL"); /* just after k */
        check_probe(db, k, kl - 1, i, "- 1");   /* a prefix of k */
        k[kl - 1]++;
        check_probe(db, k, kl, i, "last byte + 1");
    }
    CHECK(eng_close(db) == ENG_OK);
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
