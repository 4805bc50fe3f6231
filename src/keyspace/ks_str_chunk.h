/*
 * ks_str_chunk.h -- internal to src/keyspace: chunked strings
 * (ks_str_chunk.c), what ks_string.c needs of them. A string that the
 * in-place writers (SETBIT, BITFIELD, SETRANGE, PFADD, PFMERGE ...) make
 * longer than KS_STR_BIG_MIN bytes is stored as a big record (its length
 * as the count) and fixed-size chunks, so such a command rewrites the
 * chunks it changes, not the whole value (ENCODING.md, "Strings", KS-S1).
 * Command thread only; the status conventions of ks_type.h.
 */
#ifndef STRATA_KS_STR_CHUNK_H
#define STRATA_KS_STR_CHUNK_H

#include "keyspace/ks_type.h"

#define KS_STR_CHUNK 1024   /* bytes per chunk */
#define KS_STR_BIG_MIN 4096 /* in-place writers chunk strings longer than this */

/* The whole value of big string m (of db, read through c->batch and
 * snap): *out a malloc'd buffer of m->count bytes (at least 1), the
 * caller's to free (free or eng_free). */
ks_status ks_strc_load(ks_ctx *c, const eng_snapshot *snap, int db, const ks_meta *m, char **out);
/* Bytes [off, off + n) of big string m into buf; zeros past its end. */
ks_status ks_strc_read(ks_ctx *c, const eng_snapshot *snap, int db, const ks_meta *m, uint64_t off,
                       char *buf, size_t n);

#endif
