/*
 * command_table_test.c -- the command table: every row has its handler
 * (handlers are weak symbols, so a missing one would otherwise surface only
 * as "unknown command" at run time), names are unique and lower case,
 * arities and key positions are sane, and every handler server.h declares
 * has a row.
 */
#include <ctype.h>
#include <string.h>

#include "server/server.h"
#include "test.h"

static const char *groups[] = {"string", "hash",         "generic", "connection",
                               "server", "transactions", "index",   NULL};

TEST(EveryRowHasAHandler)
{
    for (size_t i = 0; i < command_table_size; i++)
        CHECK_MSG(command_table[i].proc != NULL, "command '%s' has no handler linked in",
                  command_table[i].name);
}

TEST(NamesAreUniqueAndLowerCase)
{
    for (size_t i = 0; i < command_table_size; i++) {
        const char *n = command_table[i].name;
        CHECK(n && *n);
        for (const char *p = n; *p; p++)
            CHECK_MSG(islower((unsigned char)*p) || *p == '.' || *p == '-',
                      "'%s' is not lower case", n);
        for (size_t j = i + 1; j < command_table_size; j++)
            CHECK_MSG(strcmp(n, command_table[j].name) != 0, "'%s' twice", n);
    }
}

TEST(AritiesAndKeyPositionsAreSane)
{
    for (size_t i = 0; i < command_table_size; i++) {
        const struct command *c = &command_table[i];
        CHECK_MSG(c->arity != 0, "%s: arity 0", c->name);
        CHECK_MSG(c->arity >= -7 && c->arity <= 8, "%s: arity %d", c->name, c->arity);
        if (c->first_key == 0) {
            CHECK_MSG(c->last_key == 0 && c->key_step == 0, "%s: keys without first", c->name);
            continue;
        }
        CHECK_MSG(c->first_key >= 1 && c->key_step >= 1, "%s: key spec", c->name);
        CHECK_MSG(c->last_key == -1 || c->last_key >= c->first_key, "%s: last key", c->name);
        int min_argc = c->arity > 0 ? c->arity : -c->arity;
        CHECK_MSG(c->first_key < min_argc || c->arity < 0, "%s: first key past arity", c->name);
        if (c->last_key > 0 && c->arity > 0)
            CHECK_MSG(c->last_key < c->arity, "%s: last key past arity", c->name);
    }
}

TEST(FlagsAndGroupsAreConsistent)
{
    for (size_t i = 0; i < command_table_size; i++) {
        const struct command *c = &command_table[i];
        CHECK_MSG(!((c->flags & CMD_WRITE) && (c->flags & CMD_READONLY)), "%s: write and read",
                  c->name);
        int known = 0;
        for (const char **g = groups; *g; g++)
            known |= strcmp(*g, c->group) == 0;
        CHECK_MSG(known, "%s: unknown group %s", c->name, c->group);
        CHECK_MSG(c->summary && strlen(c->summary) > 5, "%s: no summary", c->name);
        if (!strcmp(c->group, "string") || !strcmp(c->group, "hash"))
            CHECK_MSG(c->flags & (CMD_WRITE | CMD_READONLY), "%s: neither read nor write", c->name);
    }
    /* Commands that must run at once inside MULTI, as Redis. */
    const char *nomulti[] = {"exec", "discard", "multi", "watch", "quit", "reset", NULL};
    for (const char **n = nomulti; *n; n++)
        CHECK_MSG(command_lookup(*n, strlen(*n))->flags & CMD_NOMULTI, "%s is queued", *n);
    const char *noauth[] = {"auth", "hello", "quit", "reset", NULL};
    for (const char **n = noauth; *n; n++)
        CHECK_MSG(command_lookup(*n, strlen(*n))->flags & CMD_NOAUTH, "%s needs auth", *n);
    CHECK(!(command_lookup("get", 3)->flags & CMD_NOAUTH));
}

TEST(LookupIsCaseInsensitiveAndExact)
{
    CHECK(command_lookup("GET", 3) == command_lookup("get", 3));
    CHECK(command_lookup("hGeTaLl", 7) != NULL);
    CHECK(strcmp(command_lookup("IDX.RANGE", 9)->name, "idx.range") == 0);
    CHECK(command_lookup("ge", 2) == NULL);
    CHECK(command_lookup("gett", 4) == NULL);
    CHECK(command_lookup("", 0) == NULL);
    CHECK(command_lookup("get\0", 4) == NULL);
    char longname[100];
    memset(longname, 'a', sizeof(longname));
    CHECK(command_lookup(longname, sizeof(longname)) == NULL);
    for (size_t i = 0; i < command_table_size; i++)
        CHECK(command_lookup(command_table[i].name, strlen(command_table[i].name)) ==
              &command_table[i]);
}

/* Every handler server.h declares is reachable from some row. */
TEST(EveryDeclaredHandlerHasARow)
{
    static const struct {
        const char *name;
        command_proc proc;
    } declared[] = {
#define H(x) {#x, x}
        H(cmd_ping),        H(cmd_echo),       H(cmd_quit),         H(cmd_hello),
        H(cmd_auth),        H(cmd_select),     H(cmd_client),       H(cmd_command),
        H(cmd_info),        H(cmd_config),     H(cmd_dbsize),       H(cmd_flushdb),
        H(cmd_flushall),    H(cmd_time),       H(cmd_save),         H(cmd_bgsave),
        H(cmd_lastsave),    H(cmd_shutdown),   H(cmd_debug),        H(cmd_reset),
        H(cmd_multi),       H(cmd_exec),       H(cmd_discard),      H(cmd_watch),
        H(cmd_unwatch),     H(cmd_del),        H(cmd_unlink),       H(cmd_exists),
        H(cmd_type),        H(cmd_keys),       H(cmd_scan),         H(cmd_rename),
        H(cmd_renamenx),    H(cmd_expire),     H(cmd_pexpire),      H(cmd_expireat),
        H(cmd_pexpireat),   H(cmd_ttl),        H(cmd_pttl),         H(cmd_persist),
        H(cmd_randomkey),   H(cmd_copy),       H(cmd_expiretime),   H(cmd_pexpiretime),
        H(cmd_touch),       H(cmd_get),        H(cmd_set),          H(cmd_setnx),
        H(cmd_setex),       H(cmd_psetex),     H(cmd_mget),         H(cmd_mset),
        H(cmd_msetnx),      H(cmd_getset),     H(cmd_getdel),       H(cmd_getex),
        H(cmd_incr),        H(cmd_incrby),     H(cmd_decr),         H(cmd_decrby),
        H(cmd_incrbyfloat), H(cmd_append),     H(cmd_strlen),       H(cmd_getrange),
        H(cmd_setrange),    H(cmd_substr),     H(cmd_hset),         H(cmd_hsetnx),
        H(cmd_hmset),       H(cmd_hget),       H(cmd_hmget),        H(cmd_hgetall),
        H(cmd_hdel),        H(cmd_hexists),    H(cmd_hlen),         H(cmd_hkeys),
        H(cmd_hvals),       H(cmd_hincrby),    H(cmd_hincrbyfloat), H(cmd_hstrlen),
        H(cmd_hscan),       H(cmd_hrandfield), H(cmd_idx_create),   H(cmd_idx_range),
        H(cmd_idx_drop),    H(cmd_idx_list),   H(cmd_idx_info),     H(cmd_idx_check),
#undef H
    };
    size_t n = sizeof(declared) / sizeof(declared[0]);
    CHECK_EQ_INT(n, command_table_size);
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(declared[i].proc != NULL, "%s is not linked in", declared[i].name);
        int found = 0;
        for (size_t j = 0; j < command_table_size; j++)
            found |= command_table[j].proc == declared[i].proc;
        CHECK_MSG(found, "%s has no row", declared[i].name);
    }
}

int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
