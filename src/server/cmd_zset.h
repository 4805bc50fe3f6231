/*
 * cmd_zset.h -- what the sorted-set and geo command files share: Redis's
 * argument parsers (t_zset.c, util.c) and the reply writer for members
 * with scores. Command thread only; nothing here keeps state.
 */
#ifndef STRATA_CMD_ZSET_H
#define STRATA_CMD_ZSET_H

#include "keyspace/keyspace.h"
#include "server/server.h"

/* Redis's string2d (ZADD scores, weights, coordinates): the whole argument
 * is a double, no leading space, no overflow, not NaN. 1 or 0. */
int zarg_double(const arg *a, double *out);
/* A long as getLongFromObjectOrReply: 0, or -1 after replying
 * ERR_NOT_INTEGER. */
int zarg_long(client *c, const arg *a, long long *out);
/* As getRangeLongFromObjectOrReply: an integer in [min, max]; msg is the
 * reply for a non-integer and for one out of range (NULL: Redis's default
 * texts). 0, or -1 after replying. */
int zarg_range(client *c, const arg *a, long long min, long long max, const char *msg,
               long long *out);
/* Members in reply order: an array of members, with their scores after
 * each (RESP2: flat; RESP3: [member, score] pairs) when withscores. */
void reply_zmembers(client *c, const ks_zmember *z, size_t n, int withscores);
/* The reply for a keyspace error (WRONGTYPE, engine, ...). */
static inline void reply_zerr(client *c, ks_status st)
{
    add_reply_ks_error(c, st, client_ks(c));
}

#endif
