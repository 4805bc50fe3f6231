/*
 * command_table.c -- the one command table: every command is a row (name,
 * handler, arity, flags, key positions, group, summary), as Redis's
 * commands.def. Arity: argc including the name; -N means at least N.
 * Dispatch looks names up in a small open-addressing hash built on first
 * use, so a lookup costs one hash of the (lower-cased) name.
 */
#include <stdint.h>
#include <string.h>

#include "server/server.h"

#define W CMD_WRITE
#define R CMD_READONLY
#define A CMD_ADMIN
#define F CMD_FAST
#define NA CMD_NOAUTH
#define NM CMD_NOMULTI
#define LS (CMD_LOADING | CMD_STALE)

const struct command command_table[] = {
    /* connection */
    {"ping", cmd_ping, -1, F | LS, 0, 0, 0, "connection",
     "Returns the server's liveliness response."},
    {"echo", cmd_echo, 2, F | LS, 0, 0, 0, "connection", "Returns the given string."},
    {"quit", cmd_quit, -1, F | NA | NM | LS, 0, 0, 0, "connection", "Closes the connection."},
    {"hello", cmd_hello, -1, F | NA | LS, 0, 0, 0, "connection", "Handshakes with the server."},
    {"auth", cmd_auth, -2, F | NA | LS, 0, 0, 0, "connection", "Authenticates the connection."},
    {"select", cmd_select, 2, F | LS, 0, 0, 0, "connection", "Changes the selected database."},
    {"client", cmd_client, -2, LS, 0, 0, 0, "connection",
     "A container for client connection commands."},
    {"reset", cmd_reset, 1, F | NA | NM | LS, 0, 0, 0, "connection", "Resets the connection."},
    /* server */
    {"command", cmd_command, -1, LS, 0, 0, 0, "server",
     "Returns detailed information about all commands."},
    {"info", cmd_info, -1, LS, 0, 0, 0, "server",
     "Returns information and statistics about the server."},
    {"config", cmd_config, -2, A | LS, 0, 0, 0, "server",
     "A container for server configuration commands."},
    {"dbsize", cmd_dbsize, 1, R | F, 0, 0, 0, "server",
     "Returns the number of keys in the database."},
    {"flushdb", cmd_flushdb, -1, W, 0, 0, 0, "server",
     "Removes all keys from the current database."},
    {"flushall", cmd_flushall, -1, W, 0, 0, 0, "server", "Removes all keys from all databases."},
    {"time", cmd_time, 1, F | LS, 0, 0, 0, "server", "Returns the server time."},
    {"save", cmd_save, 1, A, 0, 0, 0, "server",
     "Flushes the memtable to tables and syncs the log."},
    {"bgsave", cmd_bgsave, -1, A, 0, 0, 0, "server",
     "Flushes the memtable to tables in the background."},
    {"lastsave", cmd_lastsave, 1, F | LS, 0, 0, 0, "server",
     "Returns the Unix timestamp of the last successful save."},
    {"shutdown", cmd_shutdown, -1, A | NM | LS, 0, 0, 0, "server", "Stops the server."},
    {"debug", cmd_debug, -2, A | LS, 0, 0, 0, "server", "A container for debugging commands."},
    /* transactions */
    {"multi", cmd_multi, 1, F | NM | LS, 0, 0, 0, "transactions", "Starts a transaction."},
    {"exec", cmd_exec, 1, NM | LS, 0, 0, 0, "transactions",
     "Executes all commands in a transaction."},
    {"discard", cmd_discard, 1, F | NM | LS, 0, 0, 0, "transactions", "Discards a transaction."},
    {"watch", cmd_watch, -2, F | NM | LS, 1, -1, 1, "transactions",
     "Monitors changes to keys to determine the execution of a transaction."},
    {"unwatch", cmd_unwatch, 1, F | LS, 0, 0, 0, "transactions",
     "Forgets about watched keys of a transaction."},
    /* generic */
    {"del", cmd_del, -2, W, 1, -1, 1, "generic", "Deletes one or more keys."},
    {"unlink", cmd_unlink, -2, W | F, 1, -1, 1, "generic",
     "Asynchronously deletes one or more keys."},
    {"exists", cmd_exists, -2, R | F, 1, -1, 1, "generic",
     "Determines whether one or more keys exist."},
    {"type", cmd_type, 2, R | F, 1, 1, 1, "generic",
     "Determines the type of value stored at a key."},
    {"keys", cmd_keys, 2, R, 0, 0, 0, "generic", "Returns all key names that match a pattern."},
    {"scan", cmd_scan, -2, R, 0, 0, 0, "generic", "Iterates over the key names in the database."},
    {"rename", cmd_rename, 3, W, 1, 2, 1, "generic",
     "Renames a key and overwrites the destination."},
    {"renamenx", cmd_renamenx, 3, W | F, 1, 2, 1, "generic",
     "Renames a key only when the target key name doesn't exist."},
    {"expire", cmd_expire, -3, W | F, 1, 1, 1, "generic",
     "Sets the expiration time of a key in seconds."},
    {"pexpire", cmd_pexpire, -3, W | F, 1, 1, 1, "generic",
     "Sets the expiration time of a key in milliseconds."},
    {"expireat", cmd_expireat, -3, W | F, 1, 1, 1, "generic",
     "Sets the expiration time of a key to a Unix timestamp."},
    {"pexpireat", cmd_pexpireat, -3, W | F, 1, 1, 1, "generic",
     "Sets the expiration time of a key to a Unix milliseconds timestamp."},
    {"ttl", cmd_ttl, 2, R | F, 1, 1, 1, "generic",
     "Returns the expiration time in seconds of a key."},
    {"pttl", cmd_pttl, 2, R | F, 1, 1, 1, "generic",
     "Returns the expiration time in milliseconds of a key."},
    {"expiretime", cmd_expiretime, 2, R | F, 1, 1, 1, "generic",
     "Returns the expiration time of a key as a Unix timestamp."},
    {"pexpiretime", cmd_pexpiretime, 2, R | F, 1, 1, 1, "generic",
     "Returns the expiration time of a key as a Unix milliseconds timestamp."},
    {"persist", cmd_persist, 2, W | F, 1, 1, 1, "generic", "Removes the expiration time of a key."},
    {"randomkey", cmd_randomkey, 1, R, 0, 0, 0, "generic",
     "Returns a random key name from the database."},
    {"copy", cmd_copy, -3, W, 1, 2, 1, "generic", "Copies the value of a key to a new key."},
    {"touch", cmd_touch, -2, R | F, 1, -1, 1, "generic",
     "Returns the number of existing keys out of those specified."},
    /* strings */
    {"get", cmd_get, 2, R | F, 1, 1, 1, "string", "Returns the string value of a key."},
    {"set", cmd_set, -3, W, 1, 1, 1, "string",
     "Sets the string value of a key, ignoring its type."},
    {"setnx", cmd_setnx, 3, W | F, 1, 1, 1, "string",
     "Set the string value of a key only when the key doesn't exist."},
    {"setex", cmd_setex, 4, W, 1, 1, 1, "string",
     "Sets the string value and expiration time of a key."},
    {"psetex", cmd_psetex, 4, W, 1, 1, 1, "string",
     "Sets both string value and expiration time in milliseconds of a key."},
    {"mget", cmd_mget, -2, R | F, 1, -1, 1, "string",
     "Atomically returns the string values of one or more keys."},
    {"mset", cmd_mset, -3, W, 1, -1, 2, "string",
     "Atomically creates or modifies the string values of one or more keys."},
    {"msetnx", cmd_msetnx, -3, W, 1, -1, 2, "string",
     "Atomically modifies the string values of one or more keys only when all keys don't exist."},
    {"getset", cmd_getset, 3, W | F, 1, 1, 1, "string",
     "Returns the previous string value of a key after setting it to a new value."},
    {"getdel", cmd_getdel, 2, W | F, 1, 1, 1, "string",
     "Returns the string value of a key after deleting the key."},
    {"getex", cmd_getex, -2, W | F, 1, 1, 1, "string",
     "Returns the string value of a key after setting its expiration time."},
    {"incr", cmd_incr, 2, W | F, 1, 1, 1, "string",
     "Increments the integer value of a key by one."},
    {"incrby", cmd_incrby, 3, W | F, 1, 1, 1, "string",
     "Increments the integer value of a key by a number."},
    {"decr", cmd_decr, 2, W | F, 1, 1, 1, "string",
     "Decrements the integer value of a key by one."},
    {"decrby", cmd_decrby, 3, W | F, 1, 1, 1, "string",
     "Decrements a number from the integer value of a key."},
    {"incrbyfloat", cmd_incrbyfloat, 3, W | F, 1, 1, 1, "string",
     "Increment the floating point value of a key by a number."},
    {"append", cmd_append, 3, W | F, 1, 1, 1, "string", "Appends a string to the value of a key."},
    {"strlen", cmd_strlen, 2, R | F, 1, 1, 1, "string", "Returns the length of a string value."},
    {"getrange", cmd_getrange, 4, R, 1, 1, 1, "string",
     "Returns a substring of the string stored at a key."},
    {"setrange", cmd_setrange, 4, W, 1, 1, 1, "string",
     "Overwrites a part of a string value with another by an offset."},
    {"substr", cmd_substr, 4, R, 1, 1, 1, "string", "Returns a substring from a string value."},
    /* hashes */
    {"hset", cmd_hset, -4, W | F, 1, 1, 1, "hash",
     "Creates or modifies the value of a field in a hash."},
    {"hsetnx", cmd_hsetnx, 4, W | F, 1, 1, 1, "hash",
     "Sets the value of a field in a hash only when the field doesn't exist."},
    {"hmset", cmd_hmset, -4, W | F, 1, 1, 1, "hash", "Sets the values of multiple fields."},
    {"hget", cmd_hget, 3, R | F, 1, 1, 1, "hash", "Returns the value of a field in a hash."},
    {"hmget", cmd_hmget, -3, R | F, 1, 1, 1, "hash", "Returns the values of all fields in a hash."},
    {"hgetall", cmd_hgetall, 2, R, 1, 1, 1, "hash", "Returns all fields and values in a hash."},
    {"hdel", cmd_hdel, -3, W | F, 1, 1, 1, "hash",
     "Deletes one or more fields and their values from a hash."},
    {"hexists", cmd_hexists, 3, R | F, 1, 1, 1, "hash",
     "Determines whether a field exists in a hash."},
    {"hlen", cmd_hlen, 2, R | F, 1, 1, 1, "hash", "Returns the number of fields in a hash."},
    {"hkeys", cmd_hkeys, 2, R, 1, 1, 1, "hash", "Returns all fields in a hash."},
    {"hvals", cmd_hvals, 2, R, 1, 1, 1, "hash", "Returns all values in a hash."},
    {"hincrby", cmd_hincrby, 4, W | F, 1, 1, 1, "hash",
     "Increments the integer value of a field in a hash by a number."},
    {"hincrbyfloat", cmd_hincrbyfloat, 4, W | F, 1, 1, 1, "hash",
     "Increments the floating point value of a field by a number."},
    {"hstrlen", cmd_hstrlen, 3, R | F, 1, 1, 1, "hash",
     "Returns the length of the value of a field."},
    {"hscan", cmd_hscan, -3, R, 1, 1, 1, "hash", "Iterates over fields and values of a hash."},
    {"hrandfield", cmd_hrandfield, -2, R, 1, 1, 1, "hash",
     "Returns one or more random fields from a hash."},
    /* secondary indexes */
    {"idx.create", cmd_idx_create, -7, W, 0, 0, 0, "index",
     "Creates a secondary index over hash fields."},
    {"idx.range", cmd_idx_range, -2, R, 0, 0, 0, "index",
     "Returns the keys (or hashes) of an index range."},
    {"idx.drop", cmd_idx_drop, 2, W, 0, 0, 0, "index", "Drops an index and its entries."},
    {"idx.list", cmd_idx_list, 1, R, 0, 0, 0, "index", "Lists the indexes."},
    {"idx.info", cmd_idx_info, 2, R, 0, 0, 0, "index",
     "Describes an index: prefix, schema, state, entries."},
    {"idx.check", cmd_idx_check, -1, R, 0, 0, 0, "index", "Checks indexes against the hashes."},
};
const size_t command_table_size = sizeof(command_table) / sizeof(command_table[0]);

#define LOOKUP_SLOTS 512                  /* power of two, > 2x the table */
static int16_t lookup_slot[LOOKUP_SLOTS]; /* index + 1; 0 = empty */
static int lookup_ready;

static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 'A' && ch <= 'Z') ch += 32;
        h = (h ^ ch) * 16777619u;
    }
    return h;
}

static int name_eq(const char *lower, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 'A' && ch <= 'Z') ch += 32;
        if (lower[i] != (char)ch) return 0;
    }
    return lower[n] == '\0';
}

static void build_lookup(void)
{
    for (size_t i = 0; i < command_table_size; i++) {
        const char *nm = command_table[i].name;
        uint32_t h = name_hash(nm, strlen(nm)) & (LOOKUP_SLOTS - 1);
        while (lookup_slot[h])
            h = (h + 1) & (LOOKUP_SLOTS - 1);
        lookup_slot[h] = (int16_t)(i + 1);
    }
    lookup_ready = 1;
}

const struct command *command_lookup(const char *name, size_t len)
{
    if (!lookup_ready) build_lookup();
    if (len == 0 || len > 32) return NULL;
    uint32_t h = name_hash(name, len) & (LOOKUP_SLOTS - 1);
    while (lookup_slot[h]) {
        const struct command *c = &command_table[lookup_slot[h] - 1];
        if (name_eq(c->name, name, len)) return c;
        h = (h + 1) & (LOOKUP_SLOTS - 1);
    }
    return NULL;
}
