/*
 * command_table_test.c -- the command table: every row has its handler
 * (handlers are weak symbols, so a missing one would otherwise surface only
 * as "unknown command" at run time), names are unique and lower case,
 * arities and key positions are sane. (Every handler is declared from its
 * row in commands.def, so there is no declared handler without a row.)
 */
#include <ctype.h>
#include <string.h>

#include "server/server.h"
#include "test.h"

/* Redis's command groups, plus strata's own "index" (IDX.*) and "search" (FT.*). */
static const char *groups[] = {
    "generic",      "string",     "list",   "set",       "sorted-set",  "hash",    "pubsub",
    "transactions", "connection", "server", "scripting", "hyperloglog", "cluster", "sentinel",
    "geo",          "stream",     "bitmap", "index",     "search",      NULL};

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
            CHECK_MSG(islower((unsigned char)*p) || *p == '.' || *p == '-' || *p == '_',
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
        CHECK_MSG(c->arity >= -8 && c->arity <= 8, "%s: arity %d", c->name, c->arity);
        if (c->first_key == 0) {
            CHECK_MSG(c->last_key == 0 && c->key_step == 0, "%s: keys without first", c->name);
            continue;
        }
        CHECK_MSG(c->first_key >= 1 && c->key_step >= 1, "%s: key spec", c->name);
        /* negative: from the end (-1 the last argument, -2 BLPOP's before its timeout) */
        CHECK_MSG(c->last_key < 0 ? c->last_key >= -2 : c->last_key >= c->first_key, "%s: last key",
                  c->name);
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
int main(int argc, char **argv)
{
    return test_main(argc, argv);
}
