/*
 * cmd_nocluster.c -- the commands of Redis features strata does not have,
 * answered as a Redis server without them answers, so that clients probing
 * for them take their fallback path: CLUSTER, READONLY, READWRITE and
 * ASKING as a server with cluster-enabled no; MODULE as a server with no
 * modules loaded (strata cannot load Redis modules: its FT.* commands are
 * built in).
 */
#include <string.h>

#include "server/server.h"

static const char ERR_NO_CLUSTER[] = "This instance has cluster support disabled";

/* CLUSTER <subcommand>, READONLY, READWRITE, ASKING. An unknown CLUSTER
 * subcommand is refused as such first, as Redis's dispatcher does. */
void cmd_cluster(client *c)
{
    if (c->argc >= 2 && !strcmp(c->cmd->name, "cluster") &&
        !command_subcommand(c->cmd, c->argv[1].ptr, c->argv[1].len))
        return add_reply_subcommand_error(c);
    add_reply_error(c, ERR_NO_CLUSTER);
}

static const char *module_help[] = {
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional "
    "arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    NULL};

/* MODULE LIST | LOAD | LOADEX | UNLOAD | HELP. LOAD and its kin reach here
 * only when enable-module-command allows them (server.c). */
void cmd_module(client *c)
{
    const arg *sub = &c->argv[1];
    if (arg_is(sub, "help") && c->argc == 2) {
        add_reply_help(c, module_help);
    } else if (arg_is(sub, "list") && c->argc == 2) {
        add_reply_array_len(c, 0);
    } else if ((arg_is(sub, "load") || arg_is(sub, "loadex")) && c->argc >= 3) {
        server_log(LL_WARNING, "Module %s failed to load: strata does not load Redis modules",
                   (const char *)c->argv[2].ptr);
        add_reply_error(c, "Error loading the extension. Please check the server logs.");
    } else if (arg_is(sub, "unload") && c->argc == 3) {
        add_reply_error(c, "Error unloading module: no such module with that name");
    } else {
        add_reply_subcommand_error(c);
    }
}
