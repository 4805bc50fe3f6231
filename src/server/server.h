/*
 * server.h -- what command handlers see of the server: the client, the
 * reply writer, the command table and the per-command keyspace context.
 *
 * One thread runs every command (as Redis). A handler reads c->argv, calls
 * the keyspace (src/keyspace/keyspace.h) through c's context, and replies
 * with the add_reply_* functions below. It never touches sockets.
 *
 * Invariant S1: a command that replies with an error writes nothing. The
 * dispatcher sets a batch savepoint before each command and rolls back to
 * it when the command's reply is an error, so a handler may write and then
 * fail (inside MULTI/EXEC too). Commands flagged CMD_SCRIPT (EVAL, FCALL)
 * have no savepoint of their own: each command their script calls has one,
 * so a script that fails at run time keeps the writes made before the
 * failing call, as Redis does.
 */
#ifndef STRATA_SERVER_H
#define STRATA_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "keyspace/keyspace.h"

/* strata's version: INFO's strata_version and the version COMMAND DOCS
 * gives strata's own commands (cmd_info.c, cmd_server.c). */
#define STRATA_VERSION "0.1.0"

/* A command argument: a NUL-terminated copy of the bytes (len excludes it). */
typedef struct arg {
    char *ptr;
    size_t len;
} arg;

typedef struct client client;
typedef void (*command_proc)(client *c);

/* Command flags (as Redis's, for COMMAND INFO and for dispatch). */
enum {
    CMD_WRITE = 1 << 0,
    CMD_READONLY = 1 << 1,
    CMD_ADMIN = 1 << 2,
    CMD_FAST = 1 << 3,
    CMD_NOAUTH = 1 << 4,  /* allowed before AUTH (AUTH, HELLO, QUIT ...) */
    CMD_NOMULTI = 1 << 5, /* executed at once inside MULTI (EXEC, DISCARD, MULTI, WATCH, QUIT) */
    CMD_LOADING = 1 << 6,
    CMD_STALE = 1 << 7,
    CMD_PUBSUB = 1 << 8,
    CMD_NOSCRIPT = 1 << 9,
    CMD_BLOCKING = 1 << 10,
    CMD_ALLOW_BUSY = 1 << 11, /* runs while a script is busy (SCRIPT KILL, SHUTDOWN NOSAVE ...) */
    CMD_SCRIPT = 1 << 12,     /* runs a script (EVAL, FCALL ...): no savepoint of its own, each
                                 command the script calls has one (S1 per redis.call) */
    CMD_DENY_MULTI = 1 << 13, /* Redis's no-multi: refused inside MULTI (SHUTDOWN, SAVE) */
    CMD_NOTOUCH = 1 << 14,    /* looks keys up without touching their access time (TYPE, TTL ...) */
    CMD_SKIP_MONITOR = 1 << 15,  /* not fed to MONITOR after it runs (scripts feed themselves) */
    CMD_SKIP_SLOWLOG = 1 << 16,  /* never in SLOWLOG (EXEC: its commands are) */
    CMD_CONTAINER = 1 << 17,     /* has subcommands: stats are kept per "cmd|sub" */
    CMD_MAY_REPLICATE = 1 << 18, /* not a write, but paused by CLIENT PAUSE WRITE (PUBLISH) */
};

/* ACL categories (Redis 7.0's, in Redis's order, plus strata's search). */
enum {
    ACL_CAT_KEYSPACE = 1 << 0,
    ACL_CAT_READ = 1 << 1,
    ACL_CAT_WRITE = 1 << 2,
    ACL_CAT_SET = 1 << 3,
    ACL_CAT_SORTEDSET = 1 << 4,
    ACL_CAT_LIST = 1 << 5,
    ACL_CAT_HASH = 1 << 6,
    ACL_CAT_STRING = 1 << 7,
    ACL_CAT_BITMAP = 1 << 8,
    ACL_CAT_HYPERLOGLOG = 1 << 9,
    ACL_CAT_GEO = 1 << 10,
    ACL_CAT_STREAM = 1 << 11,
    ACL_CAT_PUBSUB = 1 << 12,
    ACL_CAT_ADMIN = 1 << 13,
    ACL_CAT_FAST = 1 << 14,
    ACL_CAT_SLOW = 1 << 15,
    ACL_CAT_BLOCKING = 1 << 16,
    ACL_CAT_DANGEROUS = 1 << 17,
    ACL_CAT_CONNECTION = 1 << 18,
    ACL_CAT_TRANSACTION = 1 << 19,
    ACL_CAT_SCRIPTING = 1 << 20,
    ACL_CAT_SEARCH = 1 << 21, /* IDX.* and FT.* */
};

/* Key spec flags: Redis 7's CMD_KEY_* (COMMAND INFO prints them). For ACL,
 * ACCESS needs read permission (%R~) and INSERT/UPDATE/DELETE write (%W~). */
enum {
    KEY_RO = 1 << 0,
    KEY_RW = 1 << 1,
    KEY_OW = 1 << 2,
    KEY_RM = 1 << 3,
    KEY_ACCESS = 1 << 4,
    KEY_UPDATE = 1 << 5,
    KEY_INSERT = 1 << 6,
    KEY_DELETE = 1 << 7,
    KEY_NOT_KEY = 1 << 8, /* a shard channel, not a key */
    KEY_INCOMPLETE = 1 << 9,
    KEY_VARIABLE_FLAGS = 1 << 10, /* the row's getkeys decides the flags */
};
enum { KSPEC_BS_NONE = 0, KSPEC_BS_INDEX, KSPEC_BS_KEYWORD, KSPEC_BS_UNKNOWN };
enum { KSPEC_FK_RANGE = 1, KSPEC_FK_KEYNUM, KSPEC_FK_UNKNOWN };

/* A Redis 7 key spec: where the search for keys begins (an argument index,
 * or the argument after a keyword searched from startfrom; negative: from
 * the end backwards) and how keys follow (a range up to lastkey -- relative
 * to the first key, negative from the end -- every keystep arguments,
 * limit > 1 meaning 1/limit of what remains; or keynum: the number of keys
 * at keynumidx, the first key at firstkey, both relative to the begin). */
typedef struct key_spec {
    uint16_t flags; /* KEY_* */
    uint8_t bs;     /* KSPEC_BS_*; NONE ends the row's list */
    int pos;        /* index: the position; keyword: startfrom */
    const char *keyword;
    uint8_t fk;     /* KSPEC_FK_* */
    int fa, fb, fc; /* range: lastkey, keystep, limit; keynum: keynumidx, firstkey, keystep */
} key_spec;
#define KEY_SPECS_MAX 4

/* A key a command names: argv position and KEY_* flags. */
typedef struct key_ref {
    int pos;
    int flags;
} key_ref;
/* getkeys of a row whose key flags depend on its arguments (SET with GET,
 * BITFIELD with only GETs ...): writes up to max keys, returns how many. */
typedef int (*command_getkeys_proc)(int argc, const arg *argv, key_ref *out, int max);

/* One row of the command table (command_table.c): commands are data. A row
 * of commands.def names the first nine fields; the rest are optional
 * designated initializers after the summary (see commands.def). */
struct command {
    const char *name;  /* lower case, e.g. "hset", "idx.range"; a subcommand: "config|get" */
    command_proc proc; /* a subcommand's is NULL: its container's handler runs */
    int arity;         /* argc including the name; -N means at least N */
    uint32_t flags;    /* CMD_* */
    int first_key, last_key, key_step; /* as COMMAND INFO; last_key < 0 from the end */
    const char
        *group; /* "string", "hash", "generic", "connection", "server", "transactions", "index" */
    const char *summary;
    /* optional: */
    uint32_t acl; /* Redis's acl_categories (ACL_CAT_*) beyond what the flags imply; 0: the
                     group's category (command_categories) */
    key_spec keys[KEY_SPECS_MAX]; /* Redis's key specs; none: first/last/step with W/R */
    command_getkeys_proc getkeys; /* for KEY_VARIABLE_FLAGS or unknown specs */
};

extern const struct command command_table[];
extern const size_t command_table_size;
/* Subcommand rows (SUBCOMMAND in commands.def), grouped by container. */
extern const struct command subcommand_table[];
extern const size_t subcommand_table_size;
/* Case-insensitive lookup of a top-level command by the name clients use
 * (after rename-command); NULL when unknown. */
const struct command *command_lookup(const char *name, size_t len);
/* The same by the table's own name (ACL rules use it whatever renames). A
 * "cmd|sub" name finds a subcommand. */
const struct command *command_lookup_orig(const char *name, size_t len);
/* cmd's subcommand named name, or NULL (also when cmd has none). */
const struct command *command_subcommand(const struct command *cmd, const char *name, size_t len);
/* cmd's subcommands (n of them, contiguous in subcommand_table), or NULL. */
const struct command *command_subcommands(const struct command *cmd, int *n);
/* A subcommand's container, or NULL for a top-level command. */
const struct command *command_parent(const struct command *cmd);
/* 0..command_count()-1: top-level commands first, then subcommands. */
int command_id(const struct command *cmd);
int command_count(void);
const struct command *command_by_id(int id);
/* The i-th command in Redis's listing order (COMMAND LIST, ACL CAT, ACL
 * rules): each top-level command followed by its subcommands. */
const struct command *command_list_order(int i);
/* cmd's ACL categories: row's acl (or its group's category; none for a
 * container), plus @write/@read/@admin @dangerous/@pubsub/@fast/@blocking
 * from its flags, @slow when not @fast -- Redis's rule. */
uint32_t command_categories(const struct command *cmd);
/* The command a request names: argv[0]'s, or its subcommand argv[1]'s when
 * argv[0] is a container with subcommand rows. *bad is set when argv[0] is
 * a container and argv[1] is none of its subcommands (then cmd itself is
 * returned). */
const struct command *command_resolve(const struct command *cmd, int argc, const arg *argv,
                                      int *bad);
/* Renames a command for lookups (rename-command; to "" removes it).
 * Returns NULL or Redis's error text. Before the first lookup only. */
const char *command_rename(const char *from, const char *to);
/* The keys of a request of cmd (Redis's getKeysFromCommandWithSpecs):
 * writes up to max to out and returns how many (0 when the arguments do
 * not fit the specs). Channels of SSUBSCRIBE & co (KEY_NOT_KEY) are left
 * out unless with_not_keys. */
int command_get_keys(const struct command *cmd, int argc, const arg *argv, key_ref *out, int max,
                     int with_not_keys);
/* The specs of cmd: its row's, or the one derived from first/last/step.
 * Returns how many (<= KEY_SPECS_MAX) in out. */
int command_key_specs(const struct command *cmd, key_spec *out);

/* ---- Client state handlers may read ----------------------------------- */

enum {
    CLIENT_MULTI = 1 << 0,      /* between MULTI and EXEC */
    CLIENT_DIRTY_CAS = 1 << 1,  /* a WATCHed key changed: EXEC fails */
    CLIENT_DIRTY_EXEC = 1 << 2, /* a queued command was rejected: EXEC fails */
    CLIENT_CLOSE_AFTER_REPLY = 1 << 3,
    CLIENT_AUTHENTICATED = 1 << 4,
    CLIENT_IN_EXEC = 1 << 5,
    CLIENT_SCRIPT = 1 << 6,        /* the connection-less client scripts run commands on */
    CLIENT_DENY_BLOCKING = 1 << 7, /* blocking commands must not block (scripts) */
    CLIENT_PROTECTED = 1 << 8,     /* its script runs past busy-reply-threshold: neither read
                                      nor written until it ends (script_run.c) */
    CLIENT_PUBSUB = 1 << 9,        /* has subscriptions (pubsub.h, Invariant P2) */
    CLIENT_MONITOR = 1 << 10,      /* in MONITOR mode */
    CLIENT_BLOCKED = 1 << 12,      /* waiting in a blocking command (blocking.c) */
    CLIENT_UNBLOCKED = 1 << 13,    /* served or timed out: its pending input runs before sleep */
};

struct client {
    uint64_t id;
    int fd;
    int resp;       /* 2 or 3 */
    int db;         /* SELECTed database, 0..15 */
    uint32_t flags; /* CLIENT_* */
    int argc;
    arg *argv;
    const struct command *cmd; /* the command running now */
    char *name;                /* CLIENT SETNAME, or NULL */
    char *lib_name, *lib_ver;
    char addr[64], laddr[64];
    int64_t ctime_ms, last_interaction_ms;
    uint64_t last_cmd_errors;    /* errors replied by the running command */
    struct client_private *priv; /* buffers, multi queue, watched keys: networking.c */
    struct acl_user *user;       /* the ACL user (acl.h); the default user until AUTH */
};

/* The keyspace context of the running command: the keyspace, the pending
 * batch (one per command, or one per EXEC) and c->db's stored db (DBM2).
 * Valid during the handler only. */
ks_ctx *client_ks(client *c);

/* ---- Client-side caching (tracking.c, Invariants TR1-TR2) ----------- */
/* Around every command server_call runs (nested too) and every serve of
 * a blocked client (cmd NULL): the keys a tracking client read are
 * remembered, invalidations for the running client wait for its reply. */
void tracking_call_begin(client *c);
void tracking_call_end(client *c, const struct command *cmd);
/* The keyspace changed key (touch hook) / a database was flushed. */
void tracking_key_changed(const char *key, size_t klen);
void tracking_flushed(void);
void tracking_before_sleep(void); /* BCAST messages */
void tracking_cron(void);         /* TR2 after tracking-table-max-keys shrinks */
void tracking_client_off(client *c);
void tracking_command(client *c); /* CLIENT TRACKING */
void tracking_caching(client *c); /* CLIENT CACHING */
void tracking_getredir(client *c);
void tracking_info(client *c); /* CLIENT TRACKINGINFO */
/* Writes CLIENT LIST's tracking flags into out (at most 3); returns how many. */
int tracking_client_flags(const client *c, char *out);
uint64_t tracking_client_count(void);
void tracking_info_stats(uint64_t *keys, uint64_t *items, uint64_t *prefixes);

/* ---- MIGRATE (cmd_migrate.c) ------------------------------------------ */
/* Connections kept to MIGRATE targets (INFO migrate_cached_sockets); the
 * cron closes those unused for ten seconds. Command thread only. */
long migrate_cached_sockets(void);
void migrate_cron(void);

/* ---- Logical and stored databases (dbmap.c, Invariants DBM1-DBM2) ----- */
/* The stored db the layers below use for logical db (what SELECT names),
 * and back. Command thread only. */
extern unsigned char dbmap_to_stored[KS_DATABASES], dbmap_to_logical[KS_DATABASES];
static inline int dbmap_stored(int logical)
{
    return (unsigned)logical < KS_DATABASES ? dbmap_to_stored[logical] : logical;
}
static inline int dbmap_logical(int stored)
{
    return (unsigned)stored < KS_DATABASES ? dbmap_to_logical[stored] : stored;
}
/* Reads the map from its server record (identity when absent); -1 after
 * logging when the record cannot be read or is damaged. */
int dbmap_load(void);
/* SWAPDB: exchanges logical dbs a and b, writing the new map into
 * ctx->batch. REQUIRES: 0 <= a, b < KS_DATABASES. */
ks_status dbmap_swap(ks_ctx *ctx, int a, int b);

/* ---- Replies ------------------------------------------------------------ */
/* All append to c's output buffer; nothing is written to the socket until
 * the event loop has committed the batch (group commit). */
void add_reply_ok(client *c);                    /* +OK */
void add_reply_status(client *c, const char *s); /* +<s> */
/* -<msg>. msg starting with a known Redis error code (WRONGTYPE, NOAUTH,
 * WRONGPASS, EXECABORT, ...) or with '-' is sent as is; any other msg gets
 * "ERR " prepended, so "DB index is out of range" becomes Redis's exact text. */
void add_reply_error(client *c, const char *msg);
void add_reply_error_fmt(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As add_reply_error for an error already counted in INFO errorstats and
 * total_error_replies (a script passing on the error a command it called
 * replied): the command still fails (S1, failed_calls). */
void add_reply_error_counted(client *c, const char *msg);
void add_reply_bulk(client *c, const char *p, size_t n);
void add_reply_bulk_cstr(client *c, const char *s);
void add_reply_null(client *c);                   /* $-1 in RESP2, _ in RESP3 */
void add_reply_null_array(client *c);             /* *-1 in RESP2, _ in RESP3 */
void add_reply_long_long(client *c, long long v); /* :v */
void add_reply_double(client *c, double d);       /* bulk in RESP2, , in RESP3 */
/* Redis's addReplyHumanLongDouble: "%.17Lf" without trailing zeros, a bulk
 * in RESP2, a double in RESP3 (GEOPOS, WITHCOORD). */
void add_reply_human_double(client *c, long double d);
void add_reply_bool(client *c, int b);       /* :0/:1 in RESP2, #t/#f in RESP3 */
void add_reply_array_len(client *c, long n); /* *n */
void add_reply_map_len(client *c, long n);   /* %n in RESP3, *2n in RESP2 */
void add_reply_set_len(client *c, long n);   /* ~n in RESP3, *n in RESP2 */
void add_reply_verbatim(client *c, const char *p, size_t n, const char *ext); /* =, or bulk */
void add_reply_push_len(client *c, long n); /* >n in RESP3, *n in RESP2 */
/* A push message (pub/sub, notifications): begin, the elements with the
 * add_reply_* functions, end. Pushes reach the client even in CLIENT REPLY
 * OFF/SKIP mode (as Redis), and end runs the output-buffer-limit check. */
void reply_push_begin(client *c, long n);
void reply_push_end(client *c);
/* A whole push already formatted as a RESP2 array ("*3\r\n..."); RESP3
 * clients get it with '>' as the first byte. */
void reply_push_raw(client *c, const char *p, size_t n);
/* For replies whose length is known only at the end (KEYS, SCAN ...):
 * reserve a header, then set it. */
void *add_reply_deferred_len(client *c);
void set_deferred_array_len(client *c, void *node, long n);
void set_deferred_map_len(client *c, void *node, long n);
/* An array of bulk strings that a walker hands over one at a time (IDX.LIST,
 * FT._LIST, FT.TAGVALS): begin, pass reply_names_add and &rn as the walker's
 * callback and argument, end. Each name is copied into the reply. */
typedef struct reply_names {
    client *c;
    void *len;
    long n;
} reply_names;
void reply_names_begin(client *c, reply_names *rn);
void reply_names_add(void *rn, const char *name, size_t nlen);
void reply_names_end(reply_names *rn);

/* The standard Redis error texts, so every handler says the same thing. */
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_SYNTAX "syntax error"
#define ERR_NOT_INTEGER "value is not an integer or out of range"
#define ERR_NOT_FLOAT "value is not a valid float"
#define ERR_NO_SUCH_KEY "no such key"
#define ERR_OVERFLOW "increment or decrement would overflow"
#define ERR_DB_INDEX "DB index is out of range"
void add_reply_wrong_arity(client *c); /* ERR wrong number of arguments for '<cmd>' command */
/* The reply for a failed keyspace or index call: Redis's fixed text for
 * WRONGTYPE, not-an-integer, not-a-float and overflow, else ctx->err (the
 * full message of KS_ERR_MSG / KS_ERR_ENGINE). ctx is the call's context. */
void add_reply_ks_error(client *c, ks_status st, const ks_ctx *ctx);

/* ---- Argument parsing helpers (reply the Redis error and return -1) ---- */
int arg_to_ll(client *c, const arg *a, long long *out);  /* ERR_NOT_INTEGER */
int arg_to_double(client *c, const arg *a, double *out); /* ERR_NOT_FLOAT */
int arg_is(const arg *a, const char *lowercase_word);    /* case-insensitive */
/* HSCAN / SSCAN / ZSCAN key cursor [MATCH pat] [COUNT n]: parses cursor
 * and options (pat NULL matches everything) and returns 1; or replies as
 * Redis does (invalid cursor; for bad options, after looking the key up:
 * the empty scan when absent, WRONGTYPE when not of type, else the option
 * error) and returns 0. */
int scan_collection_args(client *c, ks_type type, uint64_t *cursor, const char **pat, size_t *plen,
                         uint64_t *count);

/* ---- Subcommands ---------------------------------------------------------
 * A container command (CMD_CONTAINER: SLOWLOG, LATENCY, PUBSUB, MEMORY ...)
 * can describe its subcommands as a table ending with a NULL name; arity
 * counts the container's name too, as Redis ("SLOWLOG LEN" is 2, -2 means
 * at least 2). dispatch_subcommand runs argv[1]'s row, or replies Redis's
 * "unknown subcommand" or "wrong number of arguments for 'cmd|sub'". */
typedef struct subcommand {
    const char *name; /* lower case */
    int arity;
    command_proc proc;
} subcommand;
void dispatch_subcommand(client *c, const subcommand *subs);

/* ---- Client classes ------------------------------------------------------
 * Which client-output-buffer-limit class applies to a client (Redis's
 * normal, replica and pubsub). A client starts NORMAL; pub/sub marks it
 * CLIENT_CLASS_PUBSUB while it has subscriptions (and NORMAL again after),
 * replication marks its replicas CLIENT_CLASS_REPLICA. Command thread only
 * (networking.c). */
enum { CLIENT_CLASS_NORMAL = 0, CLIENT_CLASS_REPLICA = 1, CLIENT_CLASS_PUBSUB = 2 };
#define CLIENT_CLASSES 3
void client_set_class(client *c, int cls);
int client_get_class(const client *c);

/* ---- Server-wide ------------------------------------------------------- */
int64_t server_now_ms(void); /* cached at each event-loop iteration */
keyspace *server_keyspace(void);
/* Marks key in db as modified: WATCHers of it get CLIENT_DIRTY_CAS.
 * Also wired as the keyspace touch hook. */
void server_touch_key(int db, const char *key, size_t len);
void server_touch_db(int db); /* -1: every db */
/* FLUSHDB/FLUSHALL of db (-1: all), as Redis 7.0: only the watchers of
 * keys that exist when the flush runs lose their transaction. _begin
 * notes those keys through ctx's view before the flush writes anything;
 * _end dirties their watchers when flushed is non-zero (cmd_multi.c). */
void server_watch_flush_begin(const ks_ctx *ctx, int db);
void server_watch_flush_end(int flushed);
/* SWAPDB a b, before the swap: dirties the watchers of every watched key
 * of a or b that is live in a or in b (Redis's touchAllWatchedKeysInDb:
 * a key stale or absent on both sides is no change). */
void server_watch_swap(int a, int b);

/* ---- Keyspace notifications (notify.c) ---------------------------------
 * The one API every command calls after it changed a key, as Redis's
 * notifyKeyspaceEvent: when the notify-keyspace-events setting enables
 * class `type` it publishes
 *     channel __keyspace@<db>__:<key>    message <event>   (flag K)
 *     channel __keyevent@<db>__:<event>  message <key>     (flag E)
 * to the pub/sub subscribers (patterns included). Call it once per key and
 * event, after the change is certain (the command will not reply an error
 * any more), with Redis 7.0's class and event name: "set" NOTIFY_STRING,
 * "hset" NOTIFY_HASH, "del"/"expire"/"rename_from" NOTIFY_GENERIC, "lpush"
 * NOTIFY_LIST, "sadd" NOTIFY_SET, "zadd" NOTIFY_ZSET, "xadd" NOTIFY_STREAM,
 * ... (grep Redis's t_*.c for notifyKeyspaceEvent). When the class is off
 * it costs one test of a global. key is borrowed for the call.
 *
 * "expired" and "new" come from the keyspace itself (ks_set_event_hook,
 * wired in notify.c), so no command raises them; "keymiss" (class m) is
 * notify_keymiss, for reads that found no key. Command thread only. */
enum {
    NOTIFY_KEYSPACE = 1 << 0,  /* K */
    NOTIFY_KEYEVENT = 1 << 1,  /* E */
    NOTIFY_GENERIC = 1 << 2,   /* g */
    NOTIFY_STRING = 1 << 3,    /* $ */
    NOTIFY_LIST = 1 << 4,      /* l */
    NOTIFY_SET = 1 << 5,       /* s */
    NOTIFY_HASH = 1 << 6,      /* h */
    NOTIFY_ZSET = 1 << 7,      /* z */
    NOTIFY_EXPIRED = 1 << 8,   /* x */
    NOTIFY_EVICTED = 1 << 9,   /* e */
    NOTIFY_STREAM = 1 << 10,   /* t */
    NOTIFY_KEY_MISS = 1 << 11, /* m */
    NOTIFY_LOADED = 1 << 12,   /* module key loaded (no flag letter) */
    NOTIFY_MODULE = 1 << 13,   /* d */
    NOTIFY_NEW = 1 << 14,      /* n */
    NOTIFY_ALL = NOTIFY_GENERIC | NOTIFY_STRING | NOTIFY_LIST | NOTIFY_SET | NOTIFY_HASH |
                 NOTIFY_ZSET | NOTIFY_EXPIRED | NOTIFY_EVICTED | NOTIFY_STREAM |
                 NOTIFY_MODULE, /* A */
};
extern int notify_keyspace_flags; /* the parsed notify-keyspace-events setting */
void notify_publish(int type, const char *event, int db, const char *key, size_t klen);
static inline void notify_keyspace_event(int type, const char *event, int db, const char *key,
                                         size_t klen)
{
    if (notify_keyspace_flags & type) notify_publish(type, event, db, key, klen);
}
/* The common case: key argv[i] of the running command, in c's db. */
static inline void notify_arg(client *c, int type, const char *event, int i)
{
    if (notify_keyspace_flags & type)
        notify_publish(type, event, c->db, c->argv[i].ptr, c->argv[i].len);
}
/* "new" (class n) is raised by the keyspace when a write creates a key;
 * a command whose Redis order puts "new" after other events of the same
 * command (SMOVE: "srem" src before "new" dst) mutes it around the write
 * and raises it itself. */
extern int notify_new_muted;
/* "del" (class g) for key when it no longer exists: Redis's event after
 * a removal that emptied a list, set or sorted set. */
void notify_del_if_gone(client *c, const char *key, size_t klen);
/* For a *STORE command: 1 when "del" notifications are on and key exists
 * (ask before the write), then notify_stored after it: event when n
 * items were stored, else "del" when the key existed (Redis deletes an
 * empty destination). */
int notify_exists(client *c, const char *key, size_t klen);
void notify_stored(client *c, int type, const char *event, const arg *dst, uint64_t n, int existed);
/* A read found no key at argv[i] ("keymiss", class m). */
static inline void notify_keymiss(client *c, int i)
{
    notify_arg(c, NOTIFY_KEY_MISS, "keymiss", i);
}

/* ---- Latency monitor (latency.c) ----------------------------------------
 * Records a latency spike of `event` ("command", "fast-command",
 * "expire-cycle", "fork", "aof-fsync-always" ...) when latency-monitor-
 * threshold is set and ms reaches it, for LATENCY LATEST/HISTORY/DOCTOR. */
void latency_add_sample_if_needed(const char *event, int64_t ms);

/* ---- MONITOR (monitor.c) -------------------------------------------------
 * Sends "+<unix s.us> [<db> <addr>] "arg" ..." to every MONITOR client, as
 * Redis's replicationFeedMonitors; the dispatcher calls it after each
 * command that is not admin or CMD_SKIP_MONITOR. origin overrides the
 * address ("lua" for commands a script runs; c may then be NULL). Arguments
 * c marked with server_redact_arg show as "(redacted)". */
void monitor_feed(const client *c, const char *origin, int db, int argc, const arg *argv);
/* Hides argument i of c's running command from MONITOR and SLOWLOG
 * (passwords of AUTH, HELLO ... AUTH, CONFIG SET requirepass). */
void server_redact_arg(client *c, int i);
/* ---- Blocking on keys (blocking.c) -------------------------------------
 * A command that finds nothing to serve (BLPOP on empty lists, BZPOPMIN
 * on empty sorted sets, XREAD BLOCK with no new entries ...) parks its
 * client on keys instead of replying:
 *
 *   int64_t deadline;
 *   if (block_parse_timeout(c, &c->argv[t], BLOCK_SECONDS, &deadline) < 0) return;
 *   ... the non-blocking form; when it found something, it replied: return ...
 *   if (!block_allowed(c)) return add_reply_null_array(c); // MULTI/EXEC, scripts
 *   block_on_keys(c, &my_ops, &c->argv[1], nkeys, deadline, my_state);
 *
 * The client then runs nothing more (what it pipelined behind waits in its
 * query buffer; it is still read, so a disconnect is seen) until one of:
 * - a write touches one of its keys: every write does, through the
 *   keyspace's touch hook (block_signal_key), also DEL, SET over the key,
 *   RENAME onto it and expiry. After the command that wrote -- after EXEC
 *   or the script as a whole -- and again before the loop sleeps,
 *   block_handle_ready() offers each such key to its clients in the order
 *   they blocked: ops->serve(c, state, key, klen, type) with the key's
 *   type now (KS_NONE when absent) runs as the command would, replying to
 *   c and writing through client_ks(c) (c->db is the db it blocked in). It
 *   returns 1 when it served c (c is then unblocked; a reply error is fine:
 *   BLMOVE onto a non-list replies WRONGTYPE and is served), 0 when the
 *   key cannot serve it now (wrong type, nothing new: c stays blocked and
 *   must have been sent nothing). Each serve has its own savepoint (S1);
 *   its writes go to the engine right after it and are committed by the
 *   group commit before its reply is written (N1), so what a client was
 *   served is durable once it has the reply;
 * - its deadline passes: ops->timeout(c, state) replies (NULL: a null
 *   array, as Redis answers a timed-out BLPOP, BLMOVE, BZPOPMIN or XREAD);
 * - CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: as a timeout, or the error
 *   "-UNBLOCKED client unblocked via CLIENT UNBLOCK";
 * - it disconnects or is killed: it is forgotten and served nothing.
 * Then ops->free(state) (if set) and its pending requests run, before the
 * loop sleeps. A key is offered to its clients until one serve leaves it
 * unable to serve more: serve must re-check the key itself (it may have
 * been emptied by the client served before). Everything here runs on the
 * command thread; nothing is stored. */
typedef struct block_ops {
    int (*serve)(client *c, void *state, const char *key, size_t klen, ks_type type);
    void (*timeout)(client *c, void *state); /* NULL: add_reply_null_array */
    void (*free)(void *state);               /* NULL: nothing to free */
} block_ops;
enum { BLOCK_SECONDS = 0, BLOCK_MILLISECONDS = 1 };
/* A timeout argument, as Redis: seconds as a float (BLPOP ...) or
 * milliseconds as an integer (XREAD BLOCK); 0 is forever. Fills the
 * absolute deadline (unix ms, 0 forever) and returns 0, or replies
 * "timeout is not a float or out of range" / "... an integer ..." /
 * "timeout is negative" and returns -1. */
int block_parse_timeout(client *c, const arg *a, int unit, int64_t *deadline_ms);
/* 0 inside MULTI/EXEC and in scripts (CLIENT_DENY_BLOCKING): the command
 * must then reply as its non-blocking form would with nothing found. */
int block_allowed(const client *c);
/* Blocks c on keys[0..nkeys) of c->db (repeats count once) until
 * deadline_ms (0: none). state is the command's, handed to ops and freed
 * by ops->free. REQUIRES: block_allowed(c), and c has replied nothing. */
void block_on_keys(client *c, const block_ops *ops, const arg *keys, int nkeys, int64_t deadline_ms,
                   void *state);
/* A write changed key of db (the keyspace's touch hook calls it). */
void block_signal_key(int db, const char *key, size_t klen);
/* Every key of db was deleted (FLUSHDB, FLUSHALL): all its waited keys. */
void block_signal_db(int db);
/* Serves the clients blocked on the keys signalled since the last call
 * (server_process_command after each top-level command). */
void block_handle_ready(void);
/* Whether block_handle_ready has keys to offer now. */
int block_has_ready(void);
/* block_handle_ready, then the pending requests of the clients served or
 * timed out since (before-sleep, before the group commit). */
void block_before_sleep(void);
/* CLIENT UNBLOCK: replies to a blocked target as a timeout (or, with
 * error, an UNBLOCKED error) and unblocks it; 0 when it was not blocked. */
int block_unblock(client *target, int error);
/* c is being freed: forget its wait (no reply) and its queued input. */
void block_client_gone(client *c);
uint64_t block_count(void);         /* INFO blocked_clients */
uint64_t block_timeout_count(void); /* INFO clients_in_timeout_table */
/* SORT's keys in argv[0..argc) (the command name first): positions into
 * pos (room for 2), returns how many (cmd_sort.c). */
int sort_getkeys(const arg *argv, int argc, int *pos);

/* ---- Key access times (key_access.c) -----------------------------------
 * OBJECT IDLETIME / FREQ without a copy of every key: a fixed table of
 * recent accesses by key hash (key_access.c says what it can answer).
 * server_call touches the key arguments of every command whose row is not
 * CMD_NOTOUCH. Command thread only. */
void key_access_touch(int db, const char *key, size_t klen);
void key_access_touch_args(client *c); /* c->cmd's key positions */
/* Starts loading key's slot, for a command that will touch it soon (a
 * pipeline's, pipeline_prefetch). */
void key_access_prefetch(int db, const char *key, size_t klen);
/* Milliseconds since key's last access: exact while the key holds its
 * slot, else a lower bound. */
int64_t key_access_idle_ms(int db, const char *key, size_t klen);
/* The LFU counter (Redis's LFUDecrAndReturn). */
unsigned key_access_freq(int db, const char *key, size_t klen);
/* Sets key's access state (RESTORE IDLETIME / FREQ; freq < 0 keeps the
 * initial counter). */
void key_access_set(int db, const char *key, size_t klen, int64_t idle_ms, int freq);
/* maxmemory-policy is an LFU one / lfu-log-factor / lfu-decay-time. */
void key_access_config(int lfu, long long log_factor, long long decay_minutes);
int key_access_lfu(void);

/* ---- Handlers (implemented in cmd_*.c) ---------------------------------
 * Declared weak while the tree is being built up, so a missing handler is a
 * dispatch-time "unknown command" rather than a link error; the unit test
 * command_table_test checks that every row has its handler. */
#define COMMAND(name, proc, ...) void proc(client *c) __attribute__((weak));
#define SUBCOMMAND(...)
#include "server/commands.def"
#undef COMMAND
#undef SUBCOMMAND

/* client_private.cmd_outcome: the running command replied an arity error
 * of a subcommand (a rejected call, as Redis refuses it before it runs),
 * or "unknown subcommand" (no stats: Redis finds no command to count). */
enum { CMD_REJECTED = 1, CMD_BAD_SUBCOMMAND = 2 };

/* The server core's internals, for the core's own files (server_core.h);
 * included here so every server file keeps needing only this header. */
#include "server/server_core.h"

#endif
