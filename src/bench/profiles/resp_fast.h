/*
 * resp_fast.h -- a RESP2 reply reader that parses in place: the strata
 * driver's pipelined replies are read from the socket into one buffer and
 * walked element by element, without an object (and a malloc) per element
 * as hiredis's reader builds. A 100-profile IDX.RANGE ... HASHES reply is
 * about 2000 elements, so the object tree was as much CPU as the server's
 * work for it, and client and server share the machine.
 *
 * One reader per connection (the worker's). Commands still go out through
 * hiredis (redisAppendCommandArgv); rf_flush writes hiredis's output buffer,
 * and the replies are then read here only: hiredis's own reader must hold
 * nothing, which is the case as long as every reply of a pipeline is
 * consumed here before the connection is used through hiredis again.
 */
#ifndef STRATA_BENCH_RESP_FAST_H
#define STRATA_BENCH_RESP_FAST_H

#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/profiles/workload.h"

typedef struct rf_reader {
    char *buf;
    size_t len, pos, cap; /* bytes buffered, next reply's start, capacity */
} rf_reader;

void rf_free(rf_reader *r);

/* Writes what hiredis buffered for ctx. Returns 0 or -1 with err. */
int rf_flush(redisContext *ctx, char *err, size_t cap);

/* One element of a reply: type is RESP's first byte ('$' bulk string, with
 * s/len, NULL s for a null bulk; '*' array of n elements that follow, n -1
 * for a null array; ':' integer n; '+' / '-' status / error line in s/len). */
typedef struct rf_val {
    char type;
    int64_t n;
    const char *s;
    size_t len;
} rf_val;

/* A position inside a complete reply. */
typedef struct rf_cur {
    const char *p, *end;
} rf_cur;

/* Reads from ctx's socket until one complete reply is buffered, and points
 * *c at it (valid until the next rf_next). Returns 0, or -1 with err
 * (connection closed or failed, malformed reply). */
int rf_next(rf_reader *r, redisContext *ctx, rf_cur *c, char *err, size_t cap);

/* The next element at c. Returns 0, or -1 when the reply ends (a complete
 * reply never ends early unless the caller reads past its shape). */
int rf_get(rf_cur *c, rf_val *v);

/* The type byte of the next element at c (0 at the end), and a skip over
 * that whole element (nested arrays included); rf_skip returns 0 or -1. */
char rf_peek(const rf_cur *c);
int rf_skip(rf_cur *c);

/* Reads a field/value array (HGETALL, or a hash of IDX.RANGE ... HASHES)
 * whose header v was just read, into *p. Returns 0, or -1 with err when a
 * profile field is missing or malformed. */
int rf_decode_hash(rf_cur *c, const rf_val *v, wl_profile *p, char *err, size_t cap);

/* Reads an array of the nine profile values in rc_profile_fields' order
 * (a hit of IDX.RANGE ... VALUES 9 <those fields>) whose header v was just
 * read, into *p: every value decoded and stored, as rf_decode_hash does,
 * without field names to read and match. Returns 0, or -1 with err when a
 * value is missing (null) or malformed. */
int rf_decode_values(rf_cur *c, const rf_val *v, wl_profile *p, char *err, size_t cap);

#endif
