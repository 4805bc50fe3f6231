/*
 * resp_client.h -- what the Redis-protocol drivers (strata, redis) share:
 * the server process they start, hiredis connections, command building for
 * pipelines and decoding a hash into a profile.
 *
 * A rc_server is used by one thread (the runner's); a redisContext by one
 * worker at a time.
 */
#ifndef STRATA_BENCH_RESP_CLIENT_H
#define STRATA_BENCH_RESP_CLIENT_H

#include <hiredis/hiredis.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bench/profiles/workload.h"

typedef struct rc_server {
    char bin[1024]; /* server executable */
    char dir[600];  /* data directory (also holds server.log) */
    char log[700];
    int port;
    pid_t pid;
    const char *extra[16]; /* additional argv after --port/--dir, NULL-terminated */
    int redis_style;       /* redis-server: --dir must exist; add --bind/--daemonize */
} rc_server;

/* Starts s->bin on a fresh free port with s->dir and waits until it answers
 * PING (not LOADING). Returns 0 or -1 with err. */
int rc_server_start(rc_server *s, char *err, size_t cap);
/* SHUTDOWN (or SIGTERM if that fails), then reaps. */
void rc_server_stop(rc_server *s);
/* Stops s and starts it again on the same directory (a fresh port).
 * Returns 0 or -1 with err. */
int rc_server_restart(rc_server *s, char *err, size_t cap);
/* Bytes of s's data: every file under s->dir except its log. -1 when
 * s->dir cannot be read. */
int64_t rc_server_storage(const rc_server *s);

redisContext *rc_connect(int port, char *err, size_t cap);

/* The strata-server the strata engines run: $STRATA_SERVER, else the
 * strata-server next to strata-bench (out is "" when unknown). */
void rc_strata_bin(char *out, size_t cap);
/* An engine's probe for that binary: 0 when it is executable, else -1
 * with why. */
int rc_strata_probe(char *why, size_t cap);

/* A command under construction: arguments point into buf or at caller
 * strings that live until rc_append. */
typedef struct rc_cmd {
    int argc;
    const char *argv[48];
    size_t len[48];
    char buf[4096];
    size_t used;
} rc_cmd;

void rc_reset(rc_cmd *c);
void rc_arg(rc_cmd *c, const char *s, size_t n);
void rc_str(rc_cmd *c, const char *s);
void rc_fmt(rc_cmd *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends the command to ctx's output buffer and resets c. Returns 0 or -1. */
int rc_append(redisContext *ctx, rc_cmd *c, char *err, size_t cap);

/* Builds HSET user:<id> with every field of p (o NULL) or with the fields
 * that differ from o. REQUIRES: c is reset. */
void rc_build_hset(rc_cmd *c, const wl_profile *o, const wl_profile *p);

/* Reads the next reply. Returns it (caller frees with freeReplyObject), or
 * NULL with err (connection error, or an error reply when !allow_error). */
redisReply *rc_read(redisContext *ctx, int allow_error, char *err, size_t cap);

/* Decodes a field/value array (HGETALL) into *p. Returns 0, or -1 with err
 * when a profile field is missing or malformed. */
int rc_decode_hash(const redisReply *r, wl_profile *p, char *err, size_t cap);
/* The pieces of that: one field/value pair into *p (other fields are
 * ignored), setting its bit in *seen; returns 1 when the value is
 * malformed. Then rc_profile_check: 0 when no pair was bad and every
 * field was seen, else -1 with err naming the fault. */
#define RC_PROFILE_FIELDS 511u /* the nine bits of *seen */
int rc_profile_field(wl_profile *p, const char *f, size_t fl, const char *v, size_t vl,
                     unsigned *seen);
/* The nine profile fields in the order a hash stores them (rc_build_hset's
 * first write), and the value of field i (that order) into *p: returns 1
 * when it is malformed. For replies that give values by position (IDX.RANGE
 * ... VALUES); every value is still decoded and stored. */
#define RC_NFIELDS 9
extern const char *const rc_profile_fields[RC_NFIELDS];
int rc_profile_value(wl_profile *p, size_t i, const char *v, size_t vl);
/* A decimal int64 in s[0..n) (optional '-', digits only, no overflow):
 * strtoll without the copy to a NUL-terminated buffer and the locale.
 * Returns 0, or -1 when s is not one. */
int rc_parse_i64(const char *s, size_t n, int64_t *out);
int rc_profile_check(int bad, unsigned seen, size_t pairs, char *err, size_t cap);

/* Sends one command and returns its reply (an error reply is an error). */
redisReply *rc_call(redisContext *ctx, rc_cmd *c, char *err, size_t cap);

#endif
