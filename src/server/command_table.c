/*
 * command_table.c -- the one command table: every command is a row (name,
 * handler, arity, flags, key positions, group, summary) of commands.def, as
 * Redis's commands.def. Arity: argc including the name; -N means at least N.
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
#define DM CMD_DENY_MULTI
#define LS (CMD_LOADING | CMD_STALE)
#define NS CMD_NOSCRIPT
#define AB CMD_ALLOW_BUSY
#define SC CMD_SCRIPT
#define NT CMD_NOTOUCH
#define PS CMD_PUBSUB
#define CT CMD_CONTAINER
#define MR CMD_MAY_REPLICATE
#define SM CMD_SKIP_MONITOR
#define SL CMD_SKIP_SLOWLOG

const struct command command_table[] = {
#define COMMAND(name, proc, arity, flags, fk, lk, ks, group, summary)                              \
    {name, proc, arity, flags, fk, lk, ks, group, summary},
#include "server/commands.def"
#undef COMMAND
};
const size_t command_table_size = sizeof(command_table) / sizeof(command_table[0]);

#define LOOKUP_SLOTS 1024                 /* power of two, > 2x the table */
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

/* Is s[0..n) (any bytes, NUL included) the table name lower? */
static int name_eq(const char *lower, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (lower[i] == '\0') return 0; /* s is longer: never read past the name */
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
