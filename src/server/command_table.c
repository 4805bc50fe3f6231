/*
 * command_table.c -- the one command table: every command is a row (name,
 * handler, arity, flags, key positions, group, summary, and optionally ACL
 * categories, key specs and a getkeys function) of commands.def, as Redis's
 * commands.def. Arity: argc including the name; -N means at least N.
 * Subcommand rows ("config|get") are a second table, grouped by container.
 * Dispatch looks names up in a small open-addressing hash built on first
 * use, so a lookup costs one hash of the (lower-cased) name; rename-command
 * edits that hash only, so ACL rules and COMMAND INFO keep the table's
 * names (command_lookup_orig), as Redis's orig_commands.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/keyspec.h"
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
#define BL CMD_BLOCKING
#define NT CMD_NOTOUCH
#define PS CMD_PUBSUB
#define CT CMD_CONTAINER
#define MR CMD_MAY_REPLICATE
#define SM CMD_SKIP_MONITOR
#define SL CMD_SKIP_SLOWLOG

/* Key specs in rows: .keys = {KS(INDEX(1), RANGE(0, 1, 0), RW | ACCESS | DELETE), ...}, the
 * shorthand K(pos, flags) for one key at pos, KR(pos, lastkey, step, flags) for a range. */
#define RO KEY_RO
#define RW KEY_RW
#define OW KEY_OW
#define RM KEY_RM
#define ACCESS KEY_ACCESS
#define UPDATE KEY_UPDATE
#define INSERT KEY_INSERT
#define DELETE KEY_DELETE
#define NOT_KEY KEY_NOT_KEY
#define INCOMPLETE KEY_INCOMPLETE
#define VARIABLE_FLAGS KEY_VARIABLE_FLAGS
#define INDEX(p) KSPEC_BS_INDEX, p, NULL
#define KEYWORD(w, from) KSPEC_BS_KEYWORD, from, w
#define UNKNOWN_BEGIN KSPEC_BS_UNKNOWN, 0, NULL
#define RANGE(last, step, limit) KSPEC_FK_RANGE, last, step, limit
#define KEYNUM(idx, first, step) KSPEC_FK_KEYNUM, idx, first, step
#define UNKNOWN_KEYS KSPEC_FK_UNKNOWN, 0, 0, 0
#define KS(begin, find, fl)                                                                        \
    {                                                                                              \
        fl, begin, find                                                                            \
    }
#define K(pos, fl) KS(INDEX(pos), RANGE(0, 1, 0), fl)
#define KR(pos, last, step, fl) KS(INDEX(pos), RANGE(last, step, 0), fl)

const struct command command_table[] = {
#define COMMAND(name, proc, arity, flags, fk, lk, ks, group, summary, ...)                         \
    {name, proc, arity, flags, fk, lk, ks, group, summary, __VA_ARGS__},
#define SUBCOMMAND(...)
#include "server/commands.def"
#undef COMMAND
#undef SUBCOMMAND
};
const size_t command_table_size = sizeof(command_table) / sizeof(command_table[0]);

/* SUBCOMMAND(container, name, arity, flags, fk, lk, ks, summary, ...): the
 * group is the container's (filled in by command_categories' callers via
 * command_parent). */
const struct command subcommand_table[] = {
#define COMMAND(...)
#define SUBCOMMAND(parent, name, arity, flags, fk, lk, ks, summary, ...)                           \
    {parent "|" name, NULL, arity, flags, fk, lk, ks, NULL, summary, __VA_ARGS__},
#include "server/commands.def"
#undef COMMAND
#undef SUBCOMMAND
    {NULL, NULL, 0, 0, 0, 0, 0, NULL, NULL}, /* keeps the array non-empty */
};
const size_t subcommand_table_size = sizeof(subcommand_table) / sizeof(subcommand_table[0]) - 1;

#define LOOKUP_SLOTS 1024 /* power of two, > 2x the table */
/* index + 1 into command_table (the names clients use) / into the table's
 * own names, subcommands after the commands; 0 = empty */
static int16_t lookup_slot[LOOKUP_SLOTS], orig_slot[LOOKUP_SLOTS];
static const char *lookup_name[LOOKUP_SLOTS]; /* the name a slot answers to */
static int lookup_ready;
/* per top-level command: its subcommands in subcommand_table */
static int16_t sub_first[LOOKUP_SLOTS], sub_count[LOOKUP_SLOTS];
static int16_t parent_of[LOOKUP_SLOTS]; /* per subcommand: its container's index */

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

static void slot_insert(int16_t *slots, const char **names, const char *nm, int idx)
{
    uint32_t h = name_hash(nm, strlen(nm)) & (LOOKUP_SLOTS - 1);
    while (slots[h])
        h = (h + 1) & (LOOKUP_SLOTS - 1);
    slots[h] = (int16_t)(idx + 1);
    if (names) names[h] = nm;
}

static void build_lookup(void)
{
    for (size_t i = 0; i < command_table_size; i++) {
        slot_insert(lookup_slot, lookup_name, command_table[i].name, (int)i);
        slot_insert(orig_slot, NULL, command_table[i].name, (int)i);
    }
    for (size_t j = 0; j < subcommand_table_size; j++) {
        const char *full = subcommand_table[j].name;
        size_t plen = (size_t)(strchr(full, '|') - full);
        int parent = -1;
        for (size_t i = 0; i < command_table_size && parent < 0; i++)
            if (strlen(command_table[i].name) == plen && !memcmp(command_table[i].name, full, plen))
                parent = (int)i;
        if (parent < 0) abort(); /* a SUBCOMMAND row whose container has no row */
        parent_of[j] = (int16_t)parent;
        if (!sub_count[parent]) sub_first[parent] = (int16_t)j;
        sub_count[parent]++;
        slot_insert(orig_slot, NULL, full, (int)(command_table_size + j));
    }
    lookup_ready = 1;
}

static const struct command *by_index(int idx)
{
    return idx < (int)command_table_size ? &command_table[idx]
                                         : &subcommand_table[idx - (int)command_table_size];
}

const struct command *command_lookup(const char *name, size_t len)
{
    if (!lookup_ready) build_lookup();
    if (len == 0 || len > 64) return NULL;
    uint32_t h = name_hash(name, len) & (LOOKUP_SLOTS - 1);
    while (lookup_slot[h]) {
        if (lookup_name[h] && name_eq(lookup_name[h], name, len))
            return &command_table[lookup_slot[h] - 1];
        h = (h + 1) & (LOOKUP_SLOTS - 1);
    }
    return NULL;
}

const struct command *command_lookup_orig(const char *name, size_t len)
{
    if (!lookup_ready) build_lookup();
    if (len == 0 || len > 96) return NULL;
    uint32_t h = name_hash(name, len) & (LOOKUP_SLOTS - 1);
    while (orig_slot[h]) {
        const struct command *c = by_index(orig_slot[h] - 1);
        if (name_eq(c->name, name, len)) return c;
        h = (h + 1) & (LOOKUP_SLOTS - 1);
    }
    return NULL;
}

const char *command_rename(const char *from, const char *to)
{
    if (!lookup_ready) build_lookup();
    const struct command *cmd = command_lookup(from, strlen(from));
    if (!cmd) return "No such command in rename-command";
    if (*to && command_lookup(to, strlen(to))) return "Target command name already exists";
    uint32_t h = name_hash(from, strlen(from)) & (LOOKUP_SLOTS - 1);
    while (!(lookup_name[h] && name_eq(lookup_name[h], from, strlen(from))))
        h = (h + 1) & (LOOKUP_SLOTS - 1);
    lookup_name[h] = NULL; /* a tombstone: probing goes on past it */
    if (*to) {
        char *copy = strdup(to);
        for (char *p = copy; *p; p++)
            if (*p >= 'A' && *p <= 'Z') *p += 32;
        slot_insert(lookup_slot, lookup_name, copy, (int)(cmd - command_table));
    }
    return NULL;
}

int command_id(const struct command *cmd)
{
    if (cmd >= command_table && cmd < command_table + command_table_size)
        return (int)(cmd - command_table);
    return (int)command_table_size + (int)(cmd - subcommand_table);
}

int command_count(void)
{
    return (int)(command_table_size + subcommand_table_size);
}

const struct command *command_by_id(int id)
{
    return id >= 0 && id < command_count() ? by_index(id) : NULL;
}

const struct command *command_list_order(int i)
{
    static int16_t order[LOOKUP_SLOTS];
    static int ready;
    if (!ready) {
        int k = 0;
        for (size_t j = 0; j < command_table_size; j++) {
            order[k++] = (int16_t)j;
            int n;
            const struct command *subs = command_subcommands(&command_table[j], &n);
            for (int m = 0; m < n; m++)
                order[k++] = (int16_t)command_id(&subs[m]);
        }
        ready = 1;
    }
    return i >= 0 && i < command_count() ? by_index(order[i]) : NULL;
}

const struct command *command_subcommands(const struct command *cmd, int *n)
{
    if (!lookup_ready) build_lookup();
    int id = command_id(cmd);
    if (id >= (int)command_table_size || !sub_count[id]) {
        *n = 0;
        return NULL;
    }
    *n = sub_count[id];
    return &subcommand_table[sub_first[id]];
}

const struct command *command_subcommand(const struct command *cmd, const char *name, size_t len)
{
    int n;
    const struct command *subs = command_subcommands(cmd, &n);
    size_t plen = strlen(cmd->name);
    for (int i = 0; i < n; i++)
        if (name_eq(subs[i].name + plen + 1, name, len)) return &subs[i];
    return NULL;
}

const struct command *command_parent(const struct command *cmd)
{
    if (!lookup_ready) build_lookup();
    int id = command_id(cmd);
    if (id < (int)command_table_size) return NULL;
    return &command_table[parent_of[id - (int)command_table_size]];
}

const struct command *command_resolve(const struct command *cmd, int argc, const arg *argv,
                                      int *bad)
{
    *bad = 0;
    int n;
    if (!cmd || argc < 2 || !command_subcommands(cmd, &n)) return cmd;
    const struct command *sub = command_subcommand(cmd, argv[1].ptr, argv[1].len);
    if (sub) return sub;
    *bad = 1;
    return cmd;
}

/* The category of a group's commands, as Redis's json files give them. */
static uint32_t group_category(const char *g)
{
    static const struct {
        const char *group;
        uint32_t cat;
    } map[] = {{"generic", ACL_CAT_KEYSPACE},
               {"string", ACL_CAT_STRING},
               {"list", ACL_CAT_LIST},
               {"set", ACL_CAT_SET},
               {"sorted_set", ACL_CAT_SORTEDSET},
               {"sorted-set", ACL_CAT_SORTEDSET},
               {"hash", ACL_CAT_HASH},
               {"transactions", ACL_CAT_TRANSACTION},
               {"connection", ACL_CAT_CONNECTION},
               {"scripting", ACL_CAT_SCRIPTING},
               {"hyperloglog", ACL_CAT_HYPERLOGLOG},
               {"geo", ACL_CAT_GEO},
               {"stream", ACL_CAT_STREAM},
               {"bitmap", ACL_CAT_BITMAP},
               {"index", ACL_CAT_SEARCH},
               {"search", ACL_CAT_SEARCH}};
    for (size_t i = 0; g && i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(g, map[i].group)) return map[i].cat;
    return 0; /* server, pubsub, cluster: none of their own */
}

uint32_t command_categories(const struct command *cmd)
{
    int n;
    const struct command *parent = command_parent(cmd);
    if (!parent && command_subcommands(cmd, &n)) /* a container: only what its row says */
        return cmd->acl | ((cmd->acl & ACL_CAT_FAST) ? 0 : ACL_CAT_SLOW);
    uint32_t c = cmd->acl ? cmd->acl : group_category(parent ? parent->group : cmd->group);
    if (cmd->flags & CMD_WRITE) c |= ACL_CAT_WRITE;
    if ((cmd->flags & CMD_READONLY) && !(c & ACL_CAT_SCRIPTING)) c |= ACL_CAT_READ;
    if (cmd->flags & CMD_ADMIN) c |= ACL_CAT_ADMIN | ACL_CAT_DANGEROUS;
    if (cmd->flags & CMD_PUBSUB) c |= ACL_CAT_PUBSUB;
    if (cmd->flags & CMD_FAST) c |= ACL_CAT_FAST;
    if (cmd->flags & CMD_BLOCKING) c |= ACL_CAT_BLOCKING;
    if (!(c & ACL_CAT_FAST)) c |= ACL_CAT_SLOW;
    return c;
}
