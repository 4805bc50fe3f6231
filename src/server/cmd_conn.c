/*
 * cmd_conn.c -- connection commands: PING, ECHO, QUIT, HELLO, AUTH, SELECT,
 * CLIENT, RESET. Replies and error texts follow Redis 7.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/acl.h"
#include "server/config.h"
#include "server/pubsub.h"
#include "server/server.h"

/* "ERR wrong number of arguments for 'client|kill' command" */
void add_reply_subcommand_arity(client *c)
{
    char sub[64];
    size_t i;
    for (i = 0; i < sizeof(sub) - 1 && i < c->argv[1].len; i++) {
        char ch = c->argv[1].ptr[i];
        sub[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    sub[i] = '\0';
    add_reply_error_fmt(c, "wrong number of arguments for '%s|%s' command", c->cmd->name, sub);
    c->priv->cmd_outcome = CMD_REJECTED; /* Redis refuses it before it runs */
}

void cmd_ping(client *c)
{
    if (c->argc > 2) {
        add_reply_wrong_arity(c);
        return;
    }
    if ((c->flags & CLIENT_PUBSUB) && c->resp == 2) { /* subscribed mode: ["pong", arg] */
        add_reply_array_len(c, 2);
        add_reply_bulk(c, "pong", 4);
        add_reply_bulk(c, c->argc == 2 ? c->argv[1].ptr : "", c->argc == 2 ? c->argv[1].len : 0);
        return;
    }
    if (c->argc == 1)
        add_reply_status(c, "PONG");
    else
        add_reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
}

void cmd_echo(client *c)
{
    add_reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
}

void cmd_quit(client *c)
{
    add_reply_ok(c);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/* Compares without an early exit, so timing does not leak a prefix. */
/* AUTH / HELLO AUTH against the ACL users; user NULL: "default". Returns
 * 1 when they match (c's user is set). */
static int check_credentials(client *c, const arg *user, const arg *pass)
{
    arg def = {(char *)"default", 7};
    return acl_authenticate(c, user ? user : &def, pass) == 0;
}

#define WRONGPASS "WRONGPASS invalid username-password pair or user is disabled."

void cmd_auth(client *c)
{
    for (int i = 1; i < c->argc && i <= 2; i++)
        server_redact_arg(c, i);
    if (c->argc > 3) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    if (c->argc == 2 && !acl_auth_required()) {
        add_reply_error(c, "AUTH <password> called without any password configured for the "
                           "default user. Are you sure your configuration is correct?");
        return;
    }
    const arg *user = c->argc == 3 ? &c->argv[1] : NULL;
    if (check_credentials(c, user, &c->argv[c->argc - 1])) {
        add_reply_ok(c);
    } else {
        add_reply_error(c, WRONGPASS);
    }
}

static int valid_name(const arg *a)
{
    for (size_t i = 0; i < a->len; i++)
        if (a->ptr[i] < '!' || a->ptr[i] > '~') return 0;
    return 1;
}

static void set_name(client *c, const arg *a)
{
    free(c->name);
    c->name = a->len ? strndup(a->ptr, a->len) : NULL;
}

/* Parses HELLO's arguments after the version. Returns -1 after replying
 * an error. */
static int hello_options(client *c, const arg **user, const arg **pass, const arg **name)
{
    for (int i = 2; i < c->argc; i++) {
        int more = c->argc - i - 1;
        if (arg_is(&c->argv[i], "auth") && more >= 2) {
            server_redact_arg(c, i + 1);
            server_redact_arg(c, i + 2);
            *user = &c->argv[i + 1];
            *pass = &c->argv[i + 2];
            i += 2;
        } else if (arg_is(&c->argv[i], "setname") && more >= 1) {
            *name = &c->argv[++i];
        } else {
            add_reply_error_fmt(c, "Syntax error in HELLO option '%s'", c->argv[i].ptr);
            return -1;
        }
    }
    return 0;
}

static void hello_reply(client *c)
{
    add_reply_map_len(c, 7);
    add_reply_bulk_cstr(c, "server");
    add_reply_bulk_cstr(c, "redis");
    add_reply_bulk_cstr(c, "version");
    add_reply_bulk_cstr(c, "7.2.0");
    add_reply_bulk_cstr(c, "proto");
    add_reply_long_long(c, c->resp);
    add_reply_bulk_cstr(c, "id");
    add_reply_long_long(c, (long long)c->id);
    add_reply_bulk_cstr(c, "mode");
    add_reply_bulk_cstr(c, "standalone");
    add_reply_bulk_cstr(c, "role");
    add_reply_bulk_cstr(c, "master");
    add_reply_bulk_cstr(c, "modules");
    add_reply_array_len(c, 0);
}

void cmd_hello(client *c)
{
    long long ver = 0;
    if (c->argc >= 2) {
        char *end;
        ver = strtoll(c->argv[1].ptr, &end, 10);
        if (c->argv[1].len == 0 || *end)
            return add_reply_error(c, "Protocol version is not an integer or out of range");
        if (ver < 2 || ver > 3) return add_reply_error(c, "NOPROTO unsupported protocol version");
    }
    const arg *user = NULL, *pass = NULL, *name = NULL;
    if (hello_options(c, &user, &pass, &name) < 0) return;
    if (user) {
        if (!check_credentials(c, user, pass)) return add_reply_error(c, WRONGPASS);
    }
    if (client_auth_required(c)) {
        add_reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, "
                           "otherwise the HELLO <proto> AUTH <user> <pass> option can be used to "
                           "authenticate the client and select the RESP protocol version at the "
                           "same time");
        return;
    }
    if (name && !valid_name(name))
        return add_reply_error(c, "Client names cannot contain spaces, newlines or special "
                                  "characters.");
    if (name) set_name(c, name);
    if (ver) c->resp = (int)ver;
    hello_reply(c);
}

void cmd_select(client *c)
{
    long long db;
    if (arg_to_ll(c, &c->argv[1], &db) < 0) return;
    if (db < 0 || db >= KS_DATABASES) {
        add_reply_error(c, ERR_DB_INDEX);
        return;
    }
    c->db = (int)db;
    add_reply_ok(c);
}

void cmd_reset(client *c)
{
    server_discard_multi(c);
    server_unwatch_all(c);
    monitor_client_remove(c);
    pubsub_client_reset(c);
    tracking_client_off(c);
    c->resp = 2;
    c->db = 0;
    c->priv->reply_off = 0;
    c->priv->reply_skip = 0;
    c->priv->no_evict = c->priv->no_touch = 0;
    free(c->name);
    c->name = NULL;
    c->user = acl_default_user();
    if (acl_new_client_authenticated())
        c->flags |= CLIENT_AUTHENTICATED;
    else
        c->flags &= ~CLIENT_AUTHENTICATED;
    add_reply_status(c, "RESET");
}

/* ---- CLIENT ------------------------------------------------------------- */

static void client_list(client *c, client *only)
{
    size_t cap = 1024, len = 0;
    char *out = malloc(cap);
    int by_type = c->argc == 4 && arg_is(&c->argv[2], "type");
    int by_id = c->argc >= 4 && arg_is(&c->argv[2], "id");
    if (!only && c->argc > 2 && !by_type && !by_id) {
        free(out);
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    if (by_type && !arg_is(&c->argv[3], "normal") && !arg_is(&c->argv[3], "master") &&
        !arg_is(&c->argv[3], "replica") && !arg_is(&c->argv[3], "slave") &&
        !arg_is(&c->argv[3], "pubsub")) {
        free(out);
        add_reply_error_fmt(c, "Unknown client type '%s'", c->argv[3].ptr);
        return;
    }
    int want_class = !by_type                        ? -1
                     : arg_is(&c->argv[3], "pubsub") ? CLIENT_CLASS_PUBSUB
                     : arg_is(&c->argv[3], "normal") ? CLIENT_CLASS_NORMAL
                                                     : CLIENT_CLASS_REPLICA; /* none here */
    for (client *x = only ? only : server.clients; x; x = only ? NULL : x->priv->next) {
        if (x->fd < 0 || (want_class >= 0 && client_get_class(x) != want_class)) continue;
        if (by_id) {
            int hit = 0;
            for (int i = 3; i < c->argc; i++)
                if (strtoull(c->argv[i].ptr, NULL, 10) == x->id) hit = 1;
            if (!hit) continue;
        }
        char *line = client_info_line(x);
        if (!line) continue;
        size_t n = strlen(line);
        while (len + n + 2 > cap)
            cap *= 2;
        out = realloc(out, cap);
        memcpy(out + len, line, n);
        len += n;
        out[len++] = '\n';
        free(line);
    }
    add_reply_verbatim(c, out, len, "txt");
    free(out);
}

typedef struct kill_filter {
    unsigned long long id;
    const char *addr, *laddr, *user;
    long long maxage;
    int skipme;
    int type; /* client_get_class + 1; 0: any */
} kill_filter;

/* Parses the option/value pairs of the new CLIENT KILL form. Returns -1
 * after replying an error. */
static int kill_filter_parse(client *c, kill_filter *f)
{
    memset(f, 0, sizeof(*f));
    f->skipme = 1;
    if (c->argc % 2 != 0) return add_reply_error(c, ERR_SYNTAX), -1;
    for (int i = 2; i < c->argc; i += 2) {
        const arg *o = &c->argv[i], *v = &c->argv[i + 1];
        if (arg_is(o, "id")) {
            char *end;
            long long n = strtoll(v->ptr, &end, 10);
            if (*end || v->len == 0 || n <= 0)
                return add_reply_error(c, "client-id should be greater than 0"), -1;
            f->id = (unsigned long long)n;
        } else if (arg_is(o, "addr")) {
            f->addr = v->ptr;
        } else if (arg_is(o, "laddr")) {
            f->laddr = v->ptr;
        } else if (arg_is(o, "user")) {
            if (!arg_is(v, "default"))
                return add_reply_error_fmt(c, "No such user '%s'", v->ptr), -1;
            f->user = v->ptr;
        } else if (arg_is(o, "maxage")) {
            if (arg_to_ll(c, v, &f->maxage) < 0) return -1;
        } else if (arg_is(o, "skipme") && (arg_is(v, "yes") || arg_is(v, "no"))) {
            f->skipme = arg_is(v, "yes");
        } else if (arg_is(o, "type")) {
            if (arg_is(v, "normal"))
                f->type = CLIENT_CLASS_NORMAL + 1;
            else if (arg_is(v, "pubsub"))
                f->type = CLIENT_CLASS_PUBSUB + 1;
            else if (arg_is(v, "replica") || arg_is(v, "slave") || arg_is(v, "master"))
                f->type = CLIENT_CLASS_REPLICA + 1; /* none connect here */
            else
                return add_reply_error_fmt(c, "Unknown client type '%s'", v->ptr), -1;
        } else {
            return add_reply_error(c, ERR_SYNTAX), -1;
        }
    }
    return 0;
}

static int kill_filter_match(const kill_filter *f, client *c, client *x, int64_t now)
{
    if (x->fd < 0 || x->priv->close_asap) return 0;
    if (f->id && x->id != f->id) return 0;
    if (f->addr && strcmp(x->addr, f->addr) != 0) return 0;
    if (f->laddr && strcmp(x->laddr, f->laddr) != 0) return 0;
    if (f->user && strcmp(f->user, "default") != 0) return 0;
    if (f->maxage && (now - x->ctime_ms) / 1000 < f->maxage) return 0;
    if (f->type && client_get_class(x) != f->type - 1) return 0;
    return !(x == c && f->skipme);
}

/* Closes x: at once when it is another client, after this reply when it is
 * the caller. */
static void kill_client(client *c, client *x)
{
    if (x == c)
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    else
        client_free_async(x);
}

/* CLIENT KILL addr | CLIENT KILL [ID id] [ADDR a] [LADDR a] [SKIPME yes/no]
 * [USER u] [MAXAGE s] [TYPE t]. */
static void client_kill(client *c)
{
    if (c->argc == 3) {
        for (client *x = server.clients; x; x = x->priv->next) {
            if (x->fd >= 0 && strcmp(x->addr, c->argv[2].ptr) == 0) {
                kill_client(c, x);
                add_reply_ok(c);
                return;
            }
        }
        add_reply_error(c, "No such client");
        return;
    }
    kill_filter f;
    if (kill_filter_parse(c, &f) < 0) return;
    long long killed = 0;
    int64_t now = server_now_ms();
    for (client *x = server.clients; x; x = x->priv->next) {
        if (!kill_filter_match(&f, c, x, now)) continue;
        kill_client(c, x);
        killed++;
    }
    add_reply_long_long(c, killed);
}

/* CLIENT REPLY SKIP: no reply, and none for the next command (unless
 * replies are off anyway). */
static int reply_skip(client *c)
{
    if (!arg_is(&c->argv[2], "skip")) return 0;
    if (!c->priv->reply_off) c->priv->reply_skip = 2;
    return 1;
}

static int on_off(client *c, int *out)
{
    if (arg_is(&c->argv[2], "on"))
        *out = 1;
    else if (arg_is(&c->argv[2], "off"))
        *out = 0;
    else
        return add_reply_error(c, ERR_SYNTAX), -1;
    return 0;
}

static const char *client_help[] = {
    "ID",
    "    Return the ID of the current connection.",
    "GETNAME",
    "    Return the name of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are: ID, ADDR, LADDR, USER, SKIPME (yes|no), MAXAGE.",
    "LIST [TYPE normal|master|replica|pubsub] [ID <id> ...]",
    "    Return information about client connections.",
    "NO-EVICT (ON|OFF)",
    "    Protect the current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <LIB-NAME|LIB-VER> <value>",
    "    Set client meta attr.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    NULL};

/* CLIENT UNBLOCK <id> [TIMEOUT|ERROR]: Redis's checks, in its order. */
static void client_unblock(client *c)
{
    int error = 0;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "error"))
            error = 1;
        else if (!arg_is(&c->argv[3], "timeout"))
            return add_reply_error(c, "CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
    long long id;
    if (arg_to_ll(c, &c->argv[2], &id) < 0) return;
    for (client *x = server.clients; x; x = x->priv->next)
        if ((long long)x->id == id) return add_reply_long_long(c, block_unblock(x, error));
    add_reply_long_long(c, 0);
}

static void client_setinfo(client *c)
{
    int lib_name = arg_is(&c->argv[2], "lib-name");
    if (!lib_name && !arg_is(&c->argv[2], "lib-ver"))
        return add_reply_error_fmt(c, "Unrecognized option '%s'", c->argv[2].ptr);
    if (!valid_name(&c->argv[3]))
        return add_reply_error_fmt(c, "%s cannot contain spaces, newlines or special characters.",
                                   lib_name ? "lib-name" : "lib-ver");
    char **dst = lib_name ? &c->lib_name : &c->lib_ver;
    free(*dst);
    *dst = strndup(c->argv[3].ptr, c->argv[3].len);
    add_reply_ok(c);
}

void cmd_client(client *c)
{
    const arg *sub = &c->argv[1];
    int n = c->argc;
    if (arg_is(sub, "help") && n == 2) {
        add_reply_help(c, client_help);
    } else if (arg_is(sub, "id")) {
        if (n != 2) return add_reply_subcommand_arity(c);
        add_reply_long_long(c, (long long)c->id);
    } else if (arg_is(sub, "getname")) {
        if (n != 2) return add_reply_subcommand_arity(c);
        if (c->name)
            add_reply_bulk_cstr(c, c->name);
        else
            add_reply_null(c);
    } else if (arg_is(sub, "setname")) {
        if (n != 3) return add_reply_subcommand_arity(c);
        if (!valid_name(&c->argv[2]))
            return add_reply_error(c, "Client names cannot contain spaces, newlines or special "
                                      "characters.");
        set_name(c, &c->argv[2]);
        add_reply_ok(c);
    } else if (arg_is(sub, "list")) {
        client_list(c, NULL);
    } else if (arg_is(sub, "info")) {
        if (n != 2) return add_reply_subcommand_arity(c);
        client_list(c, c);
    } else if (arg_is(sub, "kill")) {
        if (n < 3) return add_reply_subcommand_arity(c);
        client_kill(c);
    } else if (arg_is(sub, "pause")) {
        if (n != 3 && n != 4) return add_reply_subcommand_arity(c);
        client_pause_command(c);
    } else if (arg_is(sub, "unpause")) {
        if (n != 2) return add_reply_subcommand_arity(c);
        client_unpause_command(c);
    } else if (arg_is(sub, "unblock")) {
        if (n < 3) return add_reply_subcommand_arity(c);
        if (n > 4) return add_reply_subcommand_error(c);
        client_unblock(c);
    } else if (arg_is(sub, "tracking")) {
        if (n < 3) return add_reply_subcommand_arity(c);
        tracking_command(c);
    } else if (arg_is(sub, "caching")) {
        if (n != 3) return add_reply_subcommand_arity(c);
        tracking_caching(c);
    } else if (arg_is(sub, "getredir")) {
        if (n != 2) return add_reply_subcommand_arity(c);
        tracking_getredir(c);
    } else if (arg_is(sub, "trackinginfo")) {
        if (n != 2) return add_reply_subcommand_arity(c);
        tracking_info(c);
    } else if (arg_is(sub, "setinfo")) {
        if (n != 4) return add_reply_subcommand_arity(c);
        client_setinfo(c);
    } else if (arg_is(sub, "no-evict") || arg_is(sub, "no-touch")) {
        if (n != 3) return add_reply_subcommand_arity(c);
        int v;
        if (on_off(c, &v) < 0) return;
        if (arg_is(sub, "no-evict"))
            c->priv->no_evict = v;
        else
            c->priv->no_touch = v;
        add_reply_ok(c);
    } else if (arg_is(sub, "reply")) {
        if (n != 3) return add_reply_subcommand_arity(c);
        if (reply_skip(c)) return;
        int v;
        if (on_off(c, &v) < 0) return;
        if (v) {
            c->priv->reply_off = 0;
            c->priv->reply_skip = 0;
            add_reply_ok(c);
        } else {
            c->priv->reply_off = 1;
        }
    } else {
        add_reply_subcommand_error(c);
    }
}
