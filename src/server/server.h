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

/* ---- Server core internals (srv-net) -----------------------------------
 * Declarations below are shared by the server core's own files (ae,
 * networking, reply, server, config, cmd_conn/cmd_server/cmd_multi, main).
 * Command handlers of the data layers need none of them. Locking: none;
 * everything here runs on the command thread (server_log excepted). Memory
 * handed in is copied unless a comment says otherwise. */
#include "engine/engine.h"

struct ae_loop;

/* Log levels, as Redis's loglevel setting. */
enum { LL_DEBUG = 0, LL_VERBOSE = 1, LL_NOTICE = 2, LL_WARNING = 3 };
/* Writes one line "pid:M dd Mon yyyy hh:mm:ss.mmm * msg" to the logfile (or
 * stdout) when level >= the configured loglevel. Thread-safe (the engine
 * logs from its threads through server_log_engine). */
void server_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void server_log_engine(void *ctx, int level, const char *msg);

/* A block of the reply chain; deferred blocks hold a length header that is
 * filled in later (set_deferred_*). */
typedef struct reply_block {
    struct reply_block *next;
    size_t size, used;
    int deferred;
    char buf[];
} reply_block;

/* A position in the reply chain, so a reply can be taken back when the
 * engine refuses the command's writes. */
typedef struct reply_mark {
    reply_block *tail;
    size_t used;
    size_t bytes;
} reply_mark;

typedef struct queued_cmd {
    const struct command *cmd;
    int argc;
    arg *argv; /* owned copies */
} queued_cmd;

struct watched_key;

struct client_private {
    client *prev, *next; /* server.clients */
    client *pw_next;     /* server.pending_write, when in_pending */
    int in_pending;
    int close_asap; /* freed in before-sleep (CLIENT KILL, errors) */
    int executing;  /* a command of this client is running */
    char *qbuf;     /* query buffer: qbuf[qpos..qlen) unparsed */
    size_t qlen, qcap, qpos;
    struct resp_parser *parser;
    reply_block *reply_head, *reply_tail;
    size_t reply_bytes; /* unsent bytes in the chain */
    size_t head_sent;   /* bytes of reply_head already written */
    queued_cmd *mq;     /* MULTI queue */
    int mq_len, mq_cap;
    struct watched_key **watched;
    int nwatched, watched_cap;
    uint64_t last_cmd_id;
    const struct command *last_cmd; /* CLIENT LIST cmd=; NULL before any */
    char last_sub[24];              /* its subcommand (lower case) for a container, or "" */
    int reply_off;                  /* CLIENT REPLY OFF */
    int reply_skip; /* CLIENT REPLY SKIP: 2 = skip the next command's reply, 1 = this one's */
    int pushing;    /* writing a push message: REPLY OFF/SKIP do not apply (R3) */
    int no_evict, no_touch;
    struct client_pubsub *ps; /* subscriptions (pubsub.c), NULL when none */
    int cmd_outcome;          /* CMD_REJECTED / CMD_BAD_SUBCOMMAND: what stats must not count */
    unsigned char *redact;    /* per argument: hidden from MONITOR/SLOWLOG (NULL: none) */
    /* pause.c: a command held back by CLIENT PAUSE, or a WAIT in progress;
     * either way no more input of this client is processed meanwhile. */
    queued_cmd *paused_cmd;
    int waiting;
    int64_t wait_deadline_ms; /* 0: forever */
    void (*wait_done)(client *c);
    int commit_held;           /* N4: replies wait for the engine to recover from a failed commit */
    struct block_wait *bwait;  /* while CLIENT_BLOCKED (blocking.c) */
    size_t reply_mem;          /* bytes of the reply blocks (reply.c R4) */
    int reply_mem_released;    /* closing: no longer in server.reply_mem_total */
    int obuf_class;            /* CLIENT_CLASS_*: which client-output-buffer-limit applies */
    int64_t obuf_soft_since_s; /* when the soft limit was first exceeded; 0: it is not */
    struct tls_conn *tls;      /* a TLS connection (tls.h), or NULL */
    struct client_tracking *tracking; /* CLIENT TRACKING on (tracking.c), or NULL */
    int tls_handshaking;              /* the TLS handshake is not done: no request is read yet */
};

/* The server's global state. Touched only by the command thread. */
struct server_state {
    struct ae_loop *el;
    int listen_fd[16];
    int nlisten;
    int tls_listen_fd[16]; /* tls-port's listeners */
    int ntls_listen;
    eng_db *db;
    keyspace *ks;
    eng_batch *batch; /* the command batch (Invariant S1) */
    ks_ctx ctx;       /* the command context client_ks hands out */
    eng_batch *cron_batch;
    int uncommitted;       /* batches written since the last eng_commit */
    client *clients;       /* every connected client */
    client *pending_write; /* clients with replies to flush */
    uint64_t nclients;
    uint64_t next_client_id;
    int64_t cmd_time_ms; /* time of the running command */
    int64_t start_ms;
    int64_t lastsave_s;
    volatile int shutdown_asap; /* SIGTERM/SHUTDOWN: stop at the next loop iteration */
    int exit_code;              /* main's exit status */
    long long cron_id;
    int64_t last_cron_ms;
    uint64_t cron_loops;
    /* stats (INFO stats, CONFIG RESETSTAT) */
    uint64_t stat_commands, stat_connections, stat_rejected_conn, stat_errors;
    uint64_t stat_net_in, stat_net_out, stat_expired, stat_commits, stat_write_errors;
    uint64_t stat_ops_sample_ms, stat_ops_sample_cmds, stat_ops_per_sec;
    uint64_t stat_refused_writes; /* MISCONF replies (S3) */
    /* Redis's dirty counter (rdb_changes_since_last_save): server_write_batch
     * adds the keys a command's batch changed (cmd_touches, counted by the
     * keyspace's touch hook), at least 1 for a batch that wrote anything;
     * nothing for a command that changed nothing (SETBIT of the bit it
     * holds) or only read (lazy expiry, as Redis). */
    uint64_t dirty;
    uint64_t cmd_touches;     /* keys touched since the command began */
    int cmd_counted;          /* cmd_touches is the whole count: no batch minimum */
    int saved_by_command;     /* FLUSHALL with save points: the write is a save */
    int replies_held;         /* N4: a commit failed; replies wait */
    uint64_t held_recoveries; /* eng_health.recoveries when they began waiting */
    int active_expire_off;    /* DEBUG SET-ACTIVE-EXPIRE 0 */
    const char *config_file;  /* absolute path, or NULL */
    const char *executable;
    char runid[41];                /* INFO server's run_id (Sentinel tells restarts by it) */
    char replid[41];               /* INFO replication's master_replid, random per start */
    size_t reply_mem_total;        /* reply blocks of every client not closing (R4) */
    uint64_t stat_evicted_clients; /* closed for reply-memory-limit */
    /* WATCH: every watched (db, key), see cmd_multi.c */
    struct watched_key **watch_buckets;
    size_t watch_nbuckets, watch_count;
};
extern struct server_state server;

/* networking.c */
/* fd -1: a client without a connection (the script client), not listed in
 * server.clients nor counted in server.nclients. */
client *client_create(int fd);
/* CLIENT_PROTECTED on/off: while set, c's socket is neither read nor
 * written and networking_flush_replies leaves it pending (its replies may
 * wait for writes its running script has not finished). */
void client_protect(client *c);
void client_unprotect(client *c);
/* Frees c now, or at the next before-sleep if it is running a command. */
void client_free(client *c);
/* Queues c's replies for the next flush (a reply added outside c's own
 * command: a blocked client served or timed out). */
void client_pending_write(client *c);
/* Runs the complete requests waiting in c's query buffer (a client that
 * was blocked), as the read handler does after a read. */
void client_resume_input(client *c);
void client_free_async(client *c);
void networking_accept_handler(struct ae_loop *el, int fd, void *data, int mask);
/* The accept handler of tls-port: the client starts with the handshake. */
void networking_accept_tls_handler(struct ae_loop *el, int fd, void *data, int mask);
/* Whether c connected from the loopback interface (Redis's islocalClient:
 * its peer is 127.0.0.1 or ::1). */
int client_is_local(const client *c);
/* Whether c must AUTH before other commands (Redis's authRequired). */
int client_auth_required(const client *c);
/* Writes pending replies of every client (after the group commit). */
void networking_flush_replies(void);
/* N4: every client with unsent replies keeps them until release. */
void networking_hold_replies(void);
void networking_release_replies(void);
/* Disconnects clients idle for more than `timeout` seconds and trims the
 * buffers of idle ones (cron). */
void networking_clients_cron(void);
/* One "id=.. addr=.." line of CLIENT LIST / CLIENT INFO (malloc'd). */
char *client_info_line(client *c);
/* Checks the output buffer limits after c's reply chain took a new block
 * (reply.c): c's class limit (client-output-buffer-limit: hard, or soft
 * for longer than its seconds) and the total of every client's replies
 * (reply-memory-limit: the clients holding the most are closed first). A
 * client over a limit is scheduled to close, with a log line, as Redis. */
void networking_reply_grew(client *c);
/* Hints the keys of the complete requests in c's query buffer (up to
 * KS_PREFETCH_MAX of them) to the keyspace's prefetch before they run
 * (networking_prefetch.c); networking_prefetch_resumes says that c's
 * parser has reached where the last hints stopped, so the next requests
 * want theirs. Hints only: no effect on replies. Command thread. */
void networking_prefetch(client *c);
int networking_prefetch_resumes(const client *c);

/* reply.c */
void reply_append(client *c, const char *p, size_t n);
/* Frees a block of c's chain (R4's accounting). */
void reply_block_free(client *c, reply_block *b);
/* Takes c's reply memory out of server.reply_mem_total: c is closing and its
 * replies will not be sent. Idempotent. */
void reply_mem_release(client *c);
/* c's output buffer memory as client-output-buffer-limit counts it (as
 * Redis): its reply blocks beyond one 16 KB block, the part Redis keeps in
 * its fixed reply buffer and does not count. */
size_t reply_obuf_usage(const client *c);
void reply_mark_get(client *c, reply_mark *m);
void reply_truncate(client *c, const reply_mark *m);
void reply_free_all(client *c);
void add_reply_help(client *c, const char **lines);
void add_reply_subcommand_error(client *c);
/* "unknown subcommand or wrong number of arguments for '<sub>'. Try CMD HELP." */
void add_reply_subcommand_syntax_error(client *c);
void add_reply_bulk_ll(client *c, long long v);
/* "wrong number of arguments for 'client|kill' command" (cmd_conn.c) */
void add_reply_subcommand_arity(client *c);

/* server.c */
/* Runs c's parsed request in c->argv: lookup, arity, auth, MULTI queueing,
 * then call(). Returns 0, or -1 when c was freed or must not run more. */
int server_process_command(client *c);
/* Runs cmd with Invariant S1 (savepoint, rollback on error reply). */
void server_call(client *c, const struct command *cmd);
/* Serves other clients while a script runs past busy-reply-threshold:
 * reads and runs their requests (only CMD_ALLOW_BUSY ones run, the rest get
 * BUSY), commits what earlier commands wrote and flushes replies, a few
 * rounds without waiting. Timers do not run. REQUIRES: the script's caller
 * is protected (client_protect). */
void server_events_while_busy(void);
/* Writes the command batch to the engine (deferred: the group commit in
 * before-sleep makes it durable). Replaces the reply since mark with an
 * error when the engine refuses. */
void server_write_batch(client *c, const reply_mark *mark);
/* server_write_batch for the ncmds commands whose replies follow mark (a
 * write group, write_group.c): when the engine refuses, each of them
 * replies the error instead. */
void server_write_batch_n(client *c, const reply_mark *mark, int ncmds);

/* write_group.c: the commands one read of a connection runs share one
 * engine batch (S4 in server.c). */
/* Opens c's group: REQUIRES server.batch empty (S2); networking.c, before
 * it runs the requests of one read. */
void write_group_begin(client *c);
/* Before cmd runs for c: writes what the group holds unless cmd may join
 * it, so that a command outside the group finds S2. */
void write_group_before(client *c, const struct command *cmd);
/* After cmd ran for c (not queued by MULTI, no script running): keeps its
 * writes in the group, or writes the batch (server_write_batch_n) and
 * offers the keys it readied to blocked clients. */
void write_group_after(client *c, const struct command *cmd, const reply_mark *mark);
/* Writes what c's group holds and closes it (S2 again). */
void write_group_end(client *c);
/* Opens the engine in cfg.dir (created if missing), the keyspace and the
 * index catalog, and installs the keyspace hooks (main.c). Returns 0, or
 * -1 after logging why. */
int server_open_storage(void);
int server_init(void);
/* CONFIG SET port: listens on port (0: on none) on every bind address,
 * then closes the old sockets. Returns 0, or -1 with nothing changed (the
 * log says why). Command thread. */
int server_listen_port(int port);
void server_run(void);
void server_shutdown(void);
/* Commits pending writes and flushes replies; with save, also flushes the
 * memtable to a table (SHUTDOWN SAVE). Returns 0 or -1 (logged). */
int server_prepare_shutdown(int save);
/* Copies c's request (argv) into q; queued_cmd_free frees the copies (not
 * q itself). */
void queued_cmd_copy(const client *c, const struct command *cmd, queued_cmd *q);
void queued_cmd_free(queued_cmd *q);
/* Forgets every key c watches and clears CLIENT_DIRTY_CAS (cmd_multi.c). */
void server_unwatch_all(client *c);
/* Frees c's MULTI queue and clears its MULTI flags. */
void server_discard_multi(client *c);
uint64_t server_used_memory(void);
/* Commits every batch handed to the engine so far (sync per appendfsync). */
void server_commit(void);
/* Waits for a running BGSAVE (cmd_server.c). */
void server_wait_bgsave(void);

/* networking.c: after a push was appended to c (pub/sub, MONITOR): queue
 * c for writing (its output buffer limit is applied as the reply grows). */
void client_after_push(client *c);

/* INFO's text buffer (cmd_server.c). */
typedef struct sbuf {
    char *p;
    size_t len, cap;
} sbuf;
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_put(sbuf *b, const void *p, size_t n); /* appends n bytes, any bytes */
void sb_section(sbuf *b, const char *title);

/* cmdstats.c: per-command and per-error statistics (INFO commandstats,
 * errorstats, latencystats; LATENCY HISTOGRAM). */
/* Everything server_call records after a command ran dur_us: commandstats,
 * latency histogram, SLOWLOG, the latency monitor, MONITOR. */
void stats_after_call(client *c, const struct command *cmd, int64_t dur_us);
/* A command the dispatcher refused (arity, NOAUTH, subscribed mode ...). */
void stats_rejected(const struct command *cmd);
/* As stats_rejected for c's request: a container's known subcommand
 * ("client|kill") is counted under its own name, as Redis's rejectCommand. */
void stats_rejected_request(client *c, const struct command *cmd);
/* A blocked cmd of c was served with an error reply (XREADGROUP after
 * XGROUP DESTROY): failed_calls, as Redis's updateStatsOnUnblock. */
void stats_failed_when_served(client *c, const struct command *cmd);
/* One error reply with code (e.g. "ERR", "WRONGTYPE"). */
void stats_error_code(const char *code, size_t n);
void stats_reset(void); /* CONFIG RESETSTAT */
void stats_info_commandstats(sbuf *b);
void stats_info_errorstats(sbuf *b);
void stats_info_latencystats(sbuf *b);
void stats_reply_latency_histogram(client *c); /* LATENCY HISTOGRAM [cmd ...] */
/* Monotonic microseconds (inline: the dispatcher's one timing pair). */
static inline int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
/* Redis's fullname of the command c runs: "client|list" for a container's
 * subcommand, else the name. */
void command_fullname(const client *c, const struct command *cmd, char *buf, size_t cap);
/* Only the subcommand part ("list"), "" when there is none. */
void command_subname(const client *c, const struct command *cmd, char *buf, size_t cap);

/* notify.c */
int notify_flags_parse(const char *s); /* -1 on an unknown class letter */
void notify_flags_format(int flags, char *buf, size_t cap);
void notify_init(keyspace *ks); /* registers the keyspace's event hook */

/* slowlog.c */
void slowlog_apply_max_len(void); /* slowlog-max-len changed */
void slowlog_push(client *c, int argc, const arg *argv, int64_t dur_us);
void slowlog_reset(void);
size_t slowlog_mem(void);

/* latency.c */
void latency_reset_all(void);

/* monitor.c */
extern int monitor_clients; /* how many clients are in MONITOR mode */
void monitor_client_remove(client *c);

/* cmd_introspect.c */
void debug_object(client *c);       /* DEBUG OBJECT <key> */
void debug_digest(client *c);       /* DEBUG DIGEST (cmd_digest.c) */
void debug_digest_value(client *c); /* DEBUG DIGEST-VALUE key... */

/* pause.c: CLIENT PAUSE / UNPAUSE, and commands that wait (WAIT). */
/* Returns 1 when cmd (with c's MULTI queue for EXEC) must wait for the
 * pause to end; the dispatcher then hands it to pause_postpone. */
int pause_applies(const client *c, const struct command *cmd);
extern int pause_in_effect; /* a CLIENT PAUSE is set (pause_applies decides) */
void pause_postpone(client *c, const struct command *cmd);
/* Ends an elapsed pause, times out waiting clients (cron, before-sleep). */
void pause_cron(void);
int pause_active(void); /* any pause in effect (expiry waits) */
/* FAILOVER's write pause on (1) or off (0); the held clients run at the
 * next pause_cron once no pause holds them. */
void pause_failover(int on);
uint64_t pause_blocked_clients(void);
/* Forgets c's postponed command or wait (client_free). */
void pause_client_free(client *c);
/* Holds c until deadline_ms (0: forever), then calls done(c) to reply. */
void pause_wait_until(client *c, int64_t deadline_ms, void (*done)(client *c));
/* Ends c's wait now (what it waited for happened): done(c) replies. */
void pause_wait_end(client *c);
/* A timeout argument in ms, as Redis's getTimeoutFromObjectOrReply: the
 * absolute deadline (0 for a 0 timeout). Returns -1 after replying. */
int pause_parse_timeout(client *c, const arg *a, int64_t *end);
void client_pause_command(client *c);   /* CLIENT PAUSE <ms> [WRITE|ALL] */
void client_unpause_command(client *c); /* CLIENT UNPAUSE */

#endif
