/*
 * ks_rdb_stream.h -- the stream part of DUMP and RESTORE, used by
 * ks_rdb_value.c: writing a stream as Redis's RDB object
 * (ks_rdb_stream.c) and decoding, checking and writing one
 * (ks_rdb_stream_load.c). Grammar: ENCODING.md, "DUMP payloads".
 * Command thread only, as the keyspace's writes.
 */
#ifndef STRATA_KS_RDB_STREAM_H
#define STRATA_KS_RDB_STREAM_H

#include "keyspace/keyspace.h"
#include "keyspace/ks_rdb.h"

enum {
    KS_RDB_STREAM_LISTPACKS = 15,   /* Redis 5 to 6.2 */
    KS_RDB_STREAM_LISTPACKS_2 = 19, /* Redis 7.0 */
    KS_RDB_STREAM_LISTPACKS_3 = 21, /* Redis 7.2: consumers' active time */
};

/* Flags of an entry in a node's listpack (t_stream.c's STREAM_ITEM_FLAG_*). */
#define KS_RDB_XFLAG_DELETED 1
#define KS_RDB_XFLAG_SAMEFIELDS 2

/* Appends the type byte and object of the stream at key to o. KS_OK,
 * KS_NOTFOUND, or an engine / out-of-memory error (o is then partial). */
ks_status ks_rdb_stream_dump(ks_ctx *c, const char *key, size_t klen, ks_rdb_out *o);

/* A decoded, checked stream object (owned; ks_rdb_stream_free). */
typedef struct ks_rdb_xstream ks_rdb_xstream;
/* Decodes the object of RDB type rtype (one of the above) at r into *out.
 * 0, or -1 when it is malformed or inconsistent (*out NULL). */
int ks_rdb_stream_decode(ks_rdb_in *r, int rtype, ks_rdb_xstream **out);
/* Writes x as the stream at key. REQUIRES: key absent. */
ks_status ks_rdb_stream_restore(ks_ctx *c, const char *key, size_t klen, const ks_rdb_xstream *x);
void ks_rdb_stream_free(ks_rdb_xstream *x);

#endif
