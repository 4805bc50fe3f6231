/*
 * dbmap.c -- which stored database each of the 16 Redis databases is, so
 * that SWAPDB is one small write instead of moving every key of two
 * databases.
 *
 * The keyspace and the index layer store every key, member, expiry entry,
 * counter and index under a database number (ENCODING.md, FORMAT.md). The
 * server calls the number a client selects (SELECT, MOVE/COPY DB, INFO
 * keyspace, notifications, WATCH, blocking) the logical db, and the number
 * the layers below store under the stored db. This file keeps the
 * permutation between them:
 *
 *   DBM1 stored = dbmap_stored(logical) and logical = dbmap_logical(stored)
 *        are inverse permutations of 0..KS_DATABASES-1, identity until the
 *        first SWAPDB.
 *   DBM2 every ks_ctx the server hands to the keyspace or the index layer
 *        carries a stored db (client_ks and the contexts built for INFO,
 *        blocking, WATCH), and every db the layers hand back (touch and
 *        event hooks) is mapped to logical before a client sees it.
 *
 * On disk (ENCODING.md, "Server records"): 'S' 'D' "map" -> KS_DATABASES
 * bytes, byte i = the stored db of logical db i; absent = identity. The
 * record is written into the command's batch, so SWAPDB is atomic with
 * the rest of an EXEC and reaches replicas with the log (a replica reloads
 * it as it reloads the index catalog, server_reload_layers).
 */
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/server.h"

#define SYSREC_DBMAP 'D'
static const char MAP_NAME[] = "map";

unsigned char dbmap_to_stored[KS_DATABASES] = {0, 1, 2,  3,  4,  5,  6,  7,
                                               8, 9, 10, 11, 12, 13, 14, 15};
unsigned char dbmap_to_logical[KS_DATABASES] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                8, 9, 10, 11, 12, 13, 14, 15};

static void set_identity(void)
{
    for (int i = 0; i < KS_DATABASES; i++)
        dbmap_to_stored[i] = dbmap_to_logical[i] = (unsigned char)i;
}

/* 1 when m is a permutation of 0..KS_DATABASES-1 (DBM1). */
static int is_permutation(const unsigned char *m, size_t n)
{
    unsigned seen = 0;
    if (n != KS_DATABASES) return 0;
    for (size_t i = 0; i < n; i++) {
        if (m[i] >= KS_DATABASES || (seen & (1u << m[i]))) return 0;
        seen |= 1u << m[i];
    }
    return 1;
}

int dbmap_load(void)
{
    ks_ctx ctx = {server.ks, NULL, 0, server_now_ms(), NULL};
    ks_val v;
    ks_status st = ks_sysrec_get(&ctx, SYSREC_DBMAP, MAP_NAME, sizeof(MAP_NAME) - 1, &v);
    int rc = 0;
    set_identity();
    if (st == KS_OK && is_permutation((const unsigned char *)v.p, v.n)) {
        for (int i = 0; i < KS_DATABASES; i++) {
            dbmap_to_stored[i] = (unsigned char)v.p[i];
            dbmap_to_logical[(unsigned char)v.p[i]] = (unsigned char)i;
        }
    } else if (st == KS_OK) {
        server_log(LL_WARNING, "The database map record is damaged (%zu bytes): refusing to guess",
                   v.n);
        rc = -1;
    } else if (st != KS_NOTFOUND) {
        server_log(LL_WARNING, "Can't read the database map: %s", eng_last_error());
        rc = -1;
    }
    if (st == KS_OK) ks_val_free(&v);
    ks_ctx_reset(&ctx);
    return rc;
}

ks_status dbmap_swap(ks_ctx *ctx, int a, int b)
{
    unsigned char m[KS_DATABASES];
    memcpy(m, dbmap_to_stored, sizeof(m));
    unsigned char t = m[a];
    m[a] = m[b];
    m[b] = t;
    ks_status st = ks_sysrec_put(ctx, SYSREC_DBMAP, MAP_NAME, sizeof(MAP_NAME) - 1, (const char *)m,
                                 sizeof(m));
    if (st != KS_OK) return st;
    for (int i = 0; i < KS_DATABASES; i++) {
        dbmap_to_stored[i] = m[i];
        dbmap_to_logical[m[i]] = (unsigned char)i;
    }
    return KS_OK;
}
