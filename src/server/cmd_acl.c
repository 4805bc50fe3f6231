/*
 * cmd_acl.c -- the ACL command: SETUSER GETUSER DELUSER LIST USERS WHOAMI
 * CAT GENPASS LOG DRYRUN LOAD SAVE HELP, with Redis 7.0's replies and error
 * texts. The rules themselves are acl.c's, the checks acl_check.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/rand.h>

#include "server/acl_internal.h"
#include "server/config.h"

static const char *acl_help[] = {
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    NULL};

static int has_spaces(const arg *a)
{
    for (size_t i = 0; i < a->len; i++)
        if (a->ptr[i] == ' ' || a->ptr[i] == '\t' || a->ptr[i] == '\n' || a->ptr[i] == '\r' ||
            a->ptr[i] == '\v' || a->ptr[i] == '\f' || a->ptr[i] == 0)
            return 1;
    return 0;
}

static void acl_setuser(client *c)
{
    const arg *name = &c->argv[2];
    if (has_spaces(name))
        return add_reply_error(c, "Usernames can't contain spaces or null characters");
    int n = c->argc - 3;
    char **argv = malloc(((size_t)n + 1) * sizeof(char *));
    size_t *lens = malloc(((size_t)n + 1) * sizeof(size_t));
    for (int i = 0; i < n; i++) {
        argv[i] = c->argv[3 + i].ptr;
        lens[i] = c->argv[3 + i].len;
    }
    acl_user *u = acl_user_find(name->ptr, name->len);
    char *err = acl_user_set_rules(u, name->ptr, name->len, n, argv, lens);
    free(argv);
    free(lens);
    if (!err) return add_reply_ok(c);
    for (char *p = err; *p; p++) /* one line, as Redis's addReplyErrorSdsSafe */
        if (*p == '\r' || *p == '\n') *p = ' ';
    add_reply_error(c, err);
    free(err);
}

static void reply_selector(client *c, const acl_selector *s)
{
    char *v[3] = {acl_selector_describe_commands(s), acl_selector_describe_keys(s),
                  acl_selector_describe_channels(s)};
    static const char *const names[] = {"commands", "keys", "channels"};
    for (int i = 0; i < 3; i++) {
        add_reply_bulk_cstr(c, names[i]);
        add_reply_bulk_cstr(c, v[i]);
        free(v[i]);
    }
}

static void acl_getuser(client *c)
{
    acl_user *u = acl_user_find(c->argv[2].ptr, c->argv[2].len);
    if (!u) return add_reply_null(c);
    add_reply_map_len(c, 6);
    add_reply_bulk_cstr(c, "flags");
    int nf = 0;
    for (int i = 0; i < ACL_NFLAG_NAMES; i++)
        nf += (u->flags & acl_flag_names[i].bit) != 0;
    add_reply_set_len(c, nf);
    for (int i = 0; i < ACL_NFLAG_NAMES; i++)
        if (u->flags & acl_flag_names[i].bit) add_reply_bulk_cstr(c, acl_flag_names[i].name);
    add_reply_bulk_cstr(c, "passwords");
    add_reply_array_len(c, u->npass);
    for (int i = 0; i < u->npass; i++)
        add_reply_bulk(c, u->pass[i], 64);
    reply_selector(c, &u->sel[0]);
    add_reply_bulk_cstr(c, "selectors");
    add_reply_array_len(c, u->nsel - 1);
    for (int i = 1; i < u->nsel; i++) {
        add_reply_map_len(c, 3);
        reply_selector(c, &u->sel[i]);
    }
}

static void acl_deluser(client *c)
{
    for (int j = 2; j < c->argc; j++)
        if (c->argv[j].len == 7 && !memcmp(c->argv[j].ptr, "default", 7))
            return add_reply_error(c, "The 'default' user cannot be removed");
    long long deleted = 0;
    for (int j = 2; j < c->argc; j++) {
        acl_user *u = acl_user_find(c->argv[j].ptr, c->argv[j].len);
        if (!u) continue;
        int i = 0;
        while (acl_users[i] != u)
            i++;
        memmove(acl_users + i, acl_users + i + 1, (size_t)(acl_nusers - i - 1) * sizeof(u));
        acl_nusers--;
        acl_kill_user_clients(u);
        acl_user_free(u);
        deleted++;
    }
    add_reply_long_long(c, deleted);
}

static void acl_list(client *c, int names_only)
{
    add_reply_array_len(c, acl_nusers);
    for (int i = 0; i < acl_nusers; i++) {
        acl_user *u = acl_users[i];
        if (names_only) {
            add_reply_bulk(c, u->name, u->name_len);
            continue;
        }
        const char *d = acl_user_describe(u);
        size_t n = 5 + u->name_len + 1 + strlen(d);
        char *line = malloc(n + 1);
        memcpy(line, "user ", 5);
        memcpy(line + 5, u->name, u->name_len);
        line[5 + u->name_len] = ' ';
        memcpy(line + 6 + u->name_len, d, strlen(d) + 1);
        add_reply_bulk(c, line, n);
        free(line);
    }
}

static void acl_cat(client *c)
{
    if (c->argc == 2) {
        void *len = add_reply_deferred_len(c);
        long n = 0;
        for (uint32_t bit = 1; bit; bit <<= 1) {
            const char *name = acl_category_name(bit);
            if (!name) break;
            add_reply_bulk_cstr(c, name);
            n++;
        }
        set_deferred_array_len(c, len, n);
        return;
    }
    uint32_t cat = acl_category_by_name(c->argv[2].ptr);
    if (!cat) return add_reply_error_fmt(c, "Unknown category '%.128s'", c->argv[2].ptr);
    void *len = add_reply_deferred_len(c);
    long n = 0;
    for (int i = 0; i < command_count(); i++) {
        const struct command *cmd = command_list_order(i);
        if (!(command_categories(cmd) & cat)) continue;
        add_reply_bulk_cstr(c, cmd->name);
        n++;
    }
    set_deferred_array_len(c, len, n);
}

static void acl_genpass(client *c)
{
    long long bits = 256;
    if (c->argc == 3 && arg_to_ll(c, &c->argv[2], &bits) < 0) return;
    if (bits <= 0 || bits > 4096)
        return add_reply_error_fmt(c,
                                   "ACL GENPASS argument must be the number of bits for the "
                                   "output password, a positive number up to %d",
                                   4096);
    size_t chars = (size_t)(bits + 3) / 4;
    unsigned char raw[1024];
    char hex[1025];
    if (RAND_bytes(raw, (int)((chars + 1) / 2)) != 1)
        return add_reply_error(c, "Can't generate random bytes");
    for (size_t i = 0; i < chars; i++)
        hex[i] = "0123456789abcdef"[(raw[i / 2] >> ((i & 1) ? 0 : 4)) & 15];
    add_reply_bulk(c, hex, chars);
}

static void acl_log_cmd(client *c)
{
    long long count = 10;
    if (c->argc == 3) {
        if (arg_is(&c->argv[2], "reset")) {
            acl_log_reset();
            return add_reply_ok(c);
        }
        if (arg_to_ll(c, &c->argv[2], &count) < 0) return;
        if (count < 0) count = 0;
    }
    acl_log_reply(c, (long)count);
}

static void acl_dryrun(client *c)
{
    acl_user *u = acl_user_find(c->argv[2].ptr, c->argv[2].len);
    if (!u) return add_reply_error_fmt(c, "User '%s' not found", c->argv[2].ptr);
    int argc = c->argc - 3, bad;
    const arg *argv = c->argv + 3;
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    cmd = command_resolve(cmd, argc, argv, &bad);
    if (!cmd || bad) return add_reply_error_fmt(c, "Command '%s' not found", argv[0].ptr);
    if ((cmd->arity > 0 && cmd->arity != argc) || argc < -cmd->arity)
        return add_reply_error_fmt(c, "wrong number of arguments for '%s' command", cmd->name);
    int pos = 0, r = acl_check_cmd(u, cmd, argc, argv, &pos);
    if (r == ACL_OK) return add_reply_ok(c);
    char buf[512];
    if (r == ACL_DENIED_CMD)
        snprintf(buf, sizeof(buf), "This user has no permissions to run the '%s' command",
                 cmd->name);
    else
        snprintf(buf, sizeof(buf), "This user has no permissions to access the '%s' %s",
                 argv[pos].ptr, r == ACL_DENIED_KEY ? "key" : "channel");
    add_reply_bulk_cstr(c, buf);
}

void cmd_acl(client *c)
{
    const arg *sub = &c->argv[1];
    int n = c->argc;
    if (arg_is(sub, "setuser") && n >= 3) {
        acl_setuser(c);
    } else if (arg_is(sub, "deluser") && n >= 3) {
        acl_deluser(c);
    } else if (arg_is(sub, "getuser") && n == 3) {
        acl_getuser(c);
    } else if ((arg_is(sub, "list") || arg_is(sub, "users")) && n == 2) {
        acl_list(c, arg_is(sub, "users"));
    } else if (arg_is(sub, "whoami") && n == 2) {
        add_reply_bulk_cstr(c, acl_user_name(c->user));
    } else if ((!cfg.aclfile || !cfg.aclfile[0]) && (arg_is(sub, "load") || arg_is(sub, "save"))) {
        add_reply_error(c, "This Redis instance is not configured to use an ACL file. You may "
                           "want to specify users via the ACL SETUSER command and then issue a "
                           "CONFIG REWRITE (assuming you have a Redis configuration file set) in "
                           "order to store users in the Redis configuration.");
    } else if (arg_is(sub, "load") && n == 2) {
        char *errs = acl_load_file(cfg.aclfile);
        if (!errs) return add_reply_ok(c);
        add_reply_error(c, errs);
        free(errs);
    } else if (arg_is(sub, "save") && n == 2) {
        if (acl_save_file(cfg.aclfile) == 0) return add_reply_ok(c);
        add_reply_error(c, "There was an error trying to save the ACLs. Please check the server "
                           "logs for more information");
    } else if (arg_is(sub, "cat") && (n == 2 || n == 3)) {
        acl_cat(c);
    } else if (arg_is(sub, "genpass") && (n == 2 || n == 3)) {
        acl_genpass(c);
    } else if (arg_is(sub, "log") && (n == 2 || n == 3)) {
        acl_log_cmd(c);
    } else if (arg_is(sub, "dryrun") && n >= 4) {
        acl_dryrun(c);
    } else if (arg_is(sub, "help") && n == 2) {
        add_reply_help(c, acl_help);
    } else {
        add_reply_error_fmt(c,
                            "unknown subcommand or wrong number of arguments for '%.128s'. Try "
                            "ACL HELP.",
                            sub->ptr);
    }
}
