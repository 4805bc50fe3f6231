/*
 * cmd_stream.h -- what the stream command files (cmd_stream.c,
 * cmd_stream_group.c, cmd_stream_block.c) share: Redis's stream id
 * parsing and the entry reply. Command thread only.
 */
#ifndef STRATA_CMD_STREAM_H
#define STRATA_CMD_STREAM_H

#include "keyspace/stream.h"
#include "server/server.h"

/* Redis's streamGenericParseIDOrReply: "<ms>[-<seq>]" with the missing
 * sequence missing_seq; "-" and "+" unless strict; "<ms>-*" when seq_given
 * is not NULL (*seq_given 0). Returns 0, or -1 after replying "Invalid
 * stream ID specified as stream command argument". c NULL: no reply. */
int xarg_id(client *c, const arg *a, uint64_t missing_seq, int strict, int *seq_given, ks_xid *id);
/* An interval bound with the "(" exclusive prefix (XRANGE, XPENDING,
 * XAUTOCLAIM); *exclude set. 0 or -1 (replied). */
int xarg_interval(client *c, const arg *a, uint64_t missing_seq, int *exclude, ks_xid *id);
void add_reply_xid(client *c, const ks_xid *id);
/* An entry as Redis replies it: [id, [field, value ...]], or [id, nil]
 * when it is gone. Fits ks_xentry_fn with the client as arg. */
void xreply_entry(void *client, const ks_xid *id, const ks_field *f, size_t n, int exists);
/* Replies the error for a missing key or group of a group command: the
 * "-NOGROUP No such key '<key>' or consumer group '<group>'<suffix>" text. */
void xreply_nogroup(client *c, const arg *key, const arg *group, const char *suffix);

/* Redis's "xgroup-createconsumer" when a command creates consumer cn of
 * group g implicitly (XREADGROUP, XCLAIM, XAUTOCLAIM): ask
 * xconsumer_missing before the command (1: stream notifications are on
 * and cn does not exist yet), pass that to xnotify_consumer after it. */
int xconsumer_missing(client *c, const arg *key, const arg *g, const arg *cn);
void xnotify_consumer(client *c, const arg *key, const arg *g, const arg *cn, int was_missing);

/* XREAD / XREADGROUP (cmd_stream_block.c: the synchronous part, then
 * blocking). */
void xread_generic(client *c, int group);

#endif
