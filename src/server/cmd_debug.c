/*
 * cmd_debug.c -- DEBUG: the subcommands Redis's test suite and its tools
 * call (SLEEP, SET-ACTIVE-EXPIRE, PROTOCOL, JMAP, LOG, OBJECT, DIGEST,
 * DIGEST-VALUE) and strata's COMPACT (a full compaction, for benchmarks).
 * OBJECT is answered in cmd_introspect.c, the digests in cmd_digest.c.
 * Apart from the server commands because it is a test and diagnosis
 * surface that changes with the tests, not with the protocol.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/server.h"

static const char *debug_help[] = {
    "OBJECT <key>",
    "    Show low level info about the <key> and associated value.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Turn the active expiry cycle off or on.",
    "JMAP",
    "    Does nothing (compatibility).",
    "LOG <message>",
    "    Write <message> to the server log.",
    "COMPACT",
    "    Flush and compact every level into the bottom one (blocks).",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    NULL};

/* DEBUG PROTOCOL <type>: one reply of each encoding, as Redis, so clients
 * (and our tests) can check RESP2 and RESP3 encodings. */
static void debug_protocol(client *c, const arg *t)
{
    if (arg_is(t, "string")) {
        add_reply_bulk_cstr(c, "Hello World");
    } else if (arg_is(t, "integer")) {
        add_reply_long_long(c, 12345);
    } else if (arg_is(t, "double")) {
        add_reply_double(c, 3.141);
    } else if (arg_is(t, "null")) {
        add_reply_null(c);
    } else if (arg_is(t, "array")) {
        add_reply_array_len(c, 3);
        for (int i = 0; i < 3; i++)
            add_reply_long_long(c, i);
    } else if (arg_is(t, "set")) {
        add_reply_set_len(c, 3);
        for (int i = 0; i < 3; i++)
            add_reply_long_long(c, i);
    } else if (arg_is(t, "map")) {
        add_reply_map_len(c, 3);
        for (int i = 0; i < 3; i++) {
            add_reply_long_long(c, i);
            add_reply_bool(c, i == 1);
        }
    } else if (arg_is(t, "true")) {
        add_reply_bool(c, 1);
    } else if (arg_is(t, "false")) {
        add_reply_bool(c, 0);
    } else if (arg_is(t, "verbatim")) {
        add_reply_verbatim(c, "This is a verbatim\nstring", 25, "txt");
    } else {
        add_reply_error(c, "Wrong protocol type name. Please use one of the following: string|"
                           "integer|double|null|array|set|map|true|false|verbatim");
    }
}

void cmd_debug(client *c)
{
    const arg *sub = &c->argv[1];
    if (arg_is(sub, "help") && c->argc == 2) {
        add_reply_help(c, debug_help);
    } else if (arg_is(sub, "sleep") && c->argc == 3) {
        double s;
        if (arg_to_double(c, &c->argv[2], &s) < 0) return;
        if (s > 86400) s = 86400; /* also catches inf: a day is plenty for a test */
        if (s > 0) {
            struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !server.shutdown_asap) {
            }
        }
        add_reply_ok(c);
    } else if (arg_is(sub, "set-active-expire") && c->argc == 3) {
        long long v;
        if (arg_to_ll(c, &c->argv[2], &v) < 0) return;
        server.active_expire_off = v == 0;
        add_reply_ok(c);
    } else if (arg_is(sub, "protocol") && c->argc == 3) {
        debug_protocol(c, &c->argv[2]);
    } else if (arg_is(sub, "object") && c->argc == 3) {
        debug_object(c);
    } else if (arg_is(sub, "digest") && c->argc == 2) {
        debug_digest(c);
    } else if (arg_is(sub, "digest-value")) {
        debug_digest_value(c);
    } else if (arg_is(sub, "jmap") && c->argc == 2) {
        add_reply_ok(c);
    } else if (arg_is(sub, "compact") && c->argc == 2) {
        /* A full compaction: overwritten and deleted versions no snapshot
         * needs are gone afterwards (the benchmark's settle). */
        server_commit();
        eng_status st = eng_compact_range(server.db, NULL, 0, NULL, 0);
        if (st != ENG_OK) {
            add_reply_error_fmt(c, "compaction failed: %s", eng_status_str(st));
            return;
        }
        add_reply_ok(c);
    } else if (arg_is(sub, "log") && c->argc == 3) {
        server_log(LL_WARNING, "DEBUG LOG: %s", c->argv[2].ptr);
        add_reply_ok(c);
    } else {
        add_reply_subcommand_error(c);
    }
}
