/*
 * cmd_server.c -- server commands: COMMAND, CONFIG, DBSIZE, FLUSHDB,
 * FLUSHALL, TIME, SAVE, BGSAVE, LASTSAVE, SHUTDOWN (INFO is in cmd_info.c,
 * DEBUG in cmd_debug.c). Replies and error texts follow Redis 7.
 */
#include <errno.h>
#include <time.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <unistd.h>

#include "server/acl.h"
#include "server/backup.h"
#include "server/config.h"
#include "server/script.h"
#include "server/repl.h"
#include "server/server.h"

/* ---- COMMAND ------------------------------------------------------------ */

/* Redis's movablekeys (populateCommandLegacyRangeSpec): the keys cannot
 * all be found from one first/last/step range: a spec that is not an index
 * with a range, a range of step other than 1 or not following the previous
 * one, or an incomplete spec. EVAL and FCALL always. */
static int command_movable_keys(const struct command *cmd)
{
    if (cmd->flags & CMD_SCRIPT) return 1;
    key_spec sp[KEY_SPECS_MAX];
    int n = command_key_specs(cmd, sp), prev_last = 0, ranges = 0, movable = 0;
    for (int i = 0; i < n; i++) {
        if (sp[i].flags & KEY_INCOMPLETE) movable = 1;
        if (sp[i].bs != KSPEC_BS_INDEX || sp[i].fk != KSPEC_FK_RANGE) {
            movable = 1;
            continue;
        }
        if (n > 1 && (sp[i].fb != 1 || (prev_last && prev_last != sp[i].pos - 1))) {
            movable = 1;
            continue;
        }
        ranges++;
        int last = sp[i].fa >= 0 ? sp[i].fa + sp[i].pos : sp[i].fa;
        /* unsigned, as Redis: a negative (from the end) lastkey is the largest */
        if ((unsigned)last > (unsigned)prev_last) prev_last = last;
    }
    return movable || (n > 0 && ranges == 0);
}

static void reply_flags(client *c, const struct command *cmd)
{
    uint32_t f = cmd->flags;
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {{CMD_WRITE, "write"},
                 {CMD_READONLY, "readonly"},
                 {CMD_ADMIN, "admin"},
                 {CMD_FAST, "fast"},
                 {CMD_NOAUTH, "no_auth"},
                 {CMD_LOADING, "loading"},
                 {CMD_STALE, "stale"},
                 {CMD_NOSCRIPT, "noscript"},
                 {CMD_BLOCKING, "blocking"},
                 {CMD_ALLOW_BUSY, "allow_busy"},
                 {CMD_DENY_MULTI, "no_multi"},
                 {CMD_PUBSUB, "pubsub"},
                 {CMD_SKIP_MONITOR, "skip_monitor"},
                 {CMD_SKIP_SLOWLOG, "skip_slowlog"}};
    /* movablekeys last, as Redis adds it */
    int movable = command_movable_keys(cmd);
    int n = movable;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (f & names[i].bit) n++;
    add_reply_set_len(c, n);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (f & names[i].bit) add_reply_status(c, names[i].name);
    if (movable) add_reply_status(c, "movablekeys");
}

static void reply_acl_categories(client *c, const struct command *cmd)
{
    uint32_t cats = command_categories(cmd);
    add_reply_set_len(c, __builtin_popcount(cats));
    for (int i = 0; i < 32; i++) {
        if (!(cats & (1u << i))) continue;
        char buf[32];
        snprintf(buf, sizeof(buf), "@%s", acl_category_name(1u << i));
        add_reply_status(c, buf);
    }
}

static void reply_key_spec_flags(client *c, int flags)
{
    static const struct {
        int bit;
        const char *name;
    } names[] = {{KEY_RO, "RO"},
                 {KEY_RW, "RW"},
                 {KEY_OW, "OW"},
                 {KEY_RM, "RM"},
                 {KEY_ACCESS, "access"},
                 {KEY_UPDATE, "update"},
                 {KEY_INSERT, "insert"},
                 {KEY_DELETE, "delete"},
                 {KEY_NOT_KEY, "not_key"},
                 {KEY_INCOMPLETE, "incomplete"},
                 {KEY_VARIABLE_FLAGS, "variable_flags"}};
    int n = 0;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        n += (flags & names[i].bit) != 0;
    add_reply_set_len(c, n);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (flags & names[i].bit) add_reply_status(c, names[i].name);
}

/* Redis 7's key specs reply: flags, begin_search, find_keys. */
static void reply_key_specs(client *c, const struct command *cmd)
{
    key_spec specs[KEY_SPECS_MAX];
    int n = command_key_specs(cmd, specs);
    add_reply_array_len(c, n);
    for (int i = 0; i < n; i++) {
        const key_spec *s = &specs[i];
        add_reply_map_len(c, 3);
        add_reply_bulk_cstr(c, "flags");
        reply_key_spec_flags(c, s->flags);
        add_reply_bulk_cstr(c, "begin_search");
        add_reply_map_len(c, 2);
        add_reply_bulk_cstr(c, "type");
        if (s->bs == KSPEC_BS_INDEX) {
            add_reply_bulk_cstr(c, "index");
            add_reply_bulk_cstr(c, "spec");
            add_reply_map_len(c, 1);
            add_reply_bulk_cstr(c, "index");
            add_reply_long_long(c, s->pos);
        } else if (s->bs == KSPEC_BS_KEYWORD) {
            add_reply_bulk_cstr(c, "keyword");
            add_reply_bulk_cstr(c, "spec");
            add_reply_map_len(c, 2);
            add_reply_bulk_cstr(c, "keyword");
            add_reply_bulk_cstr(c, s->keyword);
            add_reply_bulk_cstr(c, "startfrom");
            add_reply_long_long(c, s->pos);
        } else {
            add_reply_bulk_cstr(c, "unknown");
            add_reply_bulk_cstr(c, "spec");
            add_reply_map_len(c, 0);
        }
        add_reply_bulk_cstr(c, "find_keys");
        add_reply_map_len(c, 2);
        add_reply_bulk_cstr(c, "type");
        static const char *const range[] = {"lastkey", "keystep", "limit"};
        static const char *const keynum[] = {"keynumidx", "firstkey", "keystep"};
        const char *const *names = s->fk == KSPEC_FK_RANGE ? range : keynum;
        if (s->fk == KSPEC_FK_RANGE || s->fk == KSPEC_FK_KEYNUM) {
            add_reply_bulk_cstr(c, s->fk == KSPEC_FK_RANGE ? "range" : "keynum");
            add_reply_bulk_cstr(c, "spec");
            add_reply_map_len(c, 3);
            int v[3] = {s->fa, s->fb, s->fc};
            for (int j = 0; j < 3; j++) {
                add_reply_bulk_cstr(c, names[j]);
                add_reply_long_long(c, v[j]);
            }
        } else {
            add_reply_bulk_cstr(c, "unknown");
            add_reply_bulk_cstr(c, "spec");
            add_reply_map_len(c, 0);
        }
    }
}

static void reply_command_info(client *c, const struct command *cmd)
{
    if (!cmd) {
        add_reply_null_array(c);
        return;
    }
    add_reply_array_len(c, 10);
    add_reply_bulk_cstr(c, cmd->name);
    add_reply_long_long(c, cmd->arity);
    reply_flags(c, cmd);
    add_reply_long_long(c, cmd->first_key);
    add_reply_long_long(c, cmd->last_key);
    add_reply_long_long(c, cmd->key_step);
    reply_acl_categories(c, cmd);
    add_reply_set_len(c, 0); /* tips */
    reply_key_specs(c, cmd);
    int nsub;
    const struct command *subs = command_subcommands(cmd, &nsub);
    add_reply_array_len(c, nsub);
    for (int i = 0; i < nsub; i++)
        reply_command_info(c, &subs[i]);
}

static void reply_command_docs(client *c, const struct command *cmd)
{
    add_reply_bulk_cstr(c, cmd->name);
    add_reply_map_len(c, 3);
    add_reply_bulk_cstr(c, "summary");
    add_reply_bulk_cstr(c, cmd->summary);
    add_reply_bulk_cstr(c, "since");
    add_reply_bulk_cstr(c, strchr(cmd->name, '.') ? STRATA_VERSION : "1.0.0");
    add_reply_bulk_cstr(c, "group");
    add_reply_bulk_cstr(c, cmd->group);
}

static const char *command_help[] = {
    "(no subcommand)",
    "    Return details about all commands.",
    "COUNT",
    "    Return the total number of commands in this server.",
    "LIST",
    "    Return a list of all commands in this server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple commands.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple commands.",
    "GETKEYS <full-command>",
    "    Return the keys from a full command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full command.",
    NULL};

/* COMMAND GETKEYS / GETKEYSANDFLAGS (with_flags): the keys of a full
 * command line, each with its key-spec flags for the latter. */
static void command_getkeys(client *c, int with_flags)
{
    int argc = c->argc - 2, bad;
    const arg *argv = c->argv + 2;
    const struct command *cmd = command_lookup(argv[0].ptr, argv[0].len);
    cmd = command_resolve(cmd, argc, argv, &bad);
    if (!cmd || bad) return add_reply_error(c, "Invalid command specified");
    key_spec specs[KEY_SPECS_MAX];
    if (command_key_specs(cmd, specs) == 0 && !cmd->getkeys)
        return add_reply_error(c, "The command has no key arguments");
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity)
        return add_reply_error(c, "Invalid number of arguments specified for command");
    /* a key per argument at most, however many the command names */
    key_ref *keys = malloc(sizeof(*keys) * (size_t)argc);
    if (!keys) return add_reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
    int n = command_get_keys(cmd, argc, argv, keys, argc, 0);
    if (n == 0 && !(cmd->flags & CMD_SCRIPT)) { /* EVAL & co: Redis's NO_MANDATORY_KEYS */
        add_reply_error(c, "Invalid arguments specified for command");
        goto done;
    }
    add_reply_array_len(c, n);
    for (int i = 0; i < n; i++) {
        if (with_flags) add_reply_array_len(c, 2);
        add_reply_bulk(c, argv[keys[i].pos].ptr, argv[keys[i].pos].len);
        if (with_flags) reply_key_spec_flags(c, keys[i].flags);
    }
done:
    free(keys);
}

/* A command by the name COMMAND INFO / DOCS take: "get", or "config|get"
 * for a subcommand (its container by the name clients use). */
static const struct command *lookup_full_name(const arg *a)
{
    const char *bar = memchr(a->ptr, '|', a->len);
    if (!bar) return command_lookup(a->ptr, a->len);
    const struct command *parent = command_lookup(a->ptr, (size_t)(bar - a->ptr));
    if (!parent) return NULL;
    return command_subcommand(parent, bar + 1, a->len - (size_t)(bar - a->ptr) - 1);
}

static void command_docs(client *c)
{
    if (c->argc == 2) {
        add_reply_map_len(c, (long)command_table_size);
        for (size_t i = 0; i < command_table_size; i++)
            reply_command_docs(c, &command_table[i]);
        return;
    }
    void *len = add_reply_deferred_len(c);
    long n = 0;
    for (int i = 2; i < c->argc; i++) {
        const struct command *cmd = lookup_full_name(&c->argv[i]);
        if (!cmd) continue; /* unknown names are left out, as Redis */
        reply_command_docs(c, cmd);
        n++;
    }
    set_deferred_map_len(c, len, n);
}

/* COMMAND LIST [FILTERBY MODULE m | ACLCAT c | PATTERN p] */
static void command_list(client *c)
{
    int by_pattern = 0, by_cat = 0;
    if (c->argc == 5 && arg_is(&c->argv[2], "filterby")) {
        by_pattern = arg_is(&c->argv[3], "pattern");
        by_cat = arg_is(&c->argv[3], "aclcat");
        if (!by_pattern && !by_cat && !arg_is(&c->argv[3], "module"))
            return add_reply_error(c, ERR_SYNTAX);
        if (!by_pattern && !by_cat) return add_reply_array_len(c, 0); /* no modules */
    } else if (c->argc != 2) {
        return add_reply_error(c, ERR_SYNTAX);
    }
    const char *f = c->argc == 5 ? c->argv[4].ptr : NULL;
    void *len = add_reply_deferred_len(c);
    long n = 0;
    uint32_t cat = by_cat ? acl_category_by_name(f) : 0;
    for (int id = 0; id < command_count(); id++) {
        /* each container followed by its subcommands, as Redis */
        const struct command *cmd = command_list_order(id);
        if (by_pattern && !ks_glob_match(f, c->argv[4].len, cmd->name, strlen(cmd->name), 1))
            continue;
        if (by_cat && !(command_categories(cmd) & cat)) continue;
        add_reply_bulk_cstr(c, cmd->name);
        n++;
    }
    set_deferred_array_len(c, len, n);
}

void cmd_command(client *c)
{
    if (c->argc == 1) {
        add_reply_array_len(c, (long)command_table_size);
        for (size_t i = 0; i < command_table_size; i++)
            reply_command_info(c, &command_table[i]);
        return;
    }
    const arg *sub = &c->argv[1];
    if (arg_is(sub, "help") && c->argc == 2) {
        add_reply_help(c, command_help);
    } else if (arg_is(sub, "count")) {
        if (c->argc != 2) return add_reply_subcommand_arity(c);
        add_reply_long_long(c, (long long)command_table_size);
    } else if (arg_is(sub, "info")) {
        if (c->argc == 2) {
            add_reply_array_len(c, (long)command_table_size);
            for (size_t i = 0; i < command_table_size; i++)
                reply_command_info(c, &command_table[i]);
            return;
        }
        add_reply_array_len(c, c->argc - 2);
        for (int i = 2; i < c->argc; i++)
            reply_command_info(c, lookup_full_name(&c->argv[i]));
    } else if (arg_is(sub, "docs")) {
        command_docs(c);
    } else if (arg_is(sub, "list")) {
        command_list(c);
    } else if (arg_is(sub, "getkeys") || arg_is(sub, "getkeysandflags")) {
        if (c->argc < 3) return add_reply_subcommand_arity(c);
        command_getkeys(c, arg_is(sub, "getkeysandflags"));
    } else {
        add_reply_subcommand_error(c);
    }
}

/* ---- CONFIG ------------------------------------------------------------- */

typedef struct get_ctx {
    client *c;
    char **names;
    char **vals;
    long n, cap;
} get_ctx;

static void collect(void *vctx, const char *name, const char *value)
{
    get_ctx *g = vctx;
    for (long i = 0; i < g->n; i++)
        if (!strcmp(g->names[i], name)) return; /* two patterns matched it */
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 16;
        g->names = realloc(g->names, (size_t)g->cap * sizeof(char *));
        g->vals = realloc(g->vals, (size_t)g->cap * sizeof(char *));
    }
    g->names[g->n] = strdup(name);
    g->vals[g->n++] = strdup(value);
}

static const char *config_help[] = {
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    NULL};

/* CONFIG GET pattern [pattern ...]: every setting matching one, once. */
static void config_get_reply(client *c)
{
    if (c->argc < 3) return add_reply_subcommand_arity(c);
    get_ctx g = {c, NULL, NULL, 0, 0};
    for (int i = 2; i < c->argc; i++)
        config_match(c->argv[i].ptr, collect, &g);
    add_reply_map_len(c, g.n);
    for (long i = 0; i < g.n; i++) {
        add_reply_bulk_cstr(c, g.names[i]);
        add_reply_bulk_cstr(c, g.vals[i]);
        free(g.names[i]);
        free(g.vals[i]);
    }
    free(g.names);
    free(g.vals);
}

/* CONFIG SET name value [name value ...]: all or nothing (config_set_pairs). */
static void config_set_reply(client *c)
{
    if (c->argc < 4) return add_reply_subcommand_arity(c);
    if (c->argc % 2 != 0) return add_reply_error(c, ERR_SYNTAX); /* as Redis: pairs */
    for (int i = 2; i < c->argc; i += 2)                         /* before anything can fail */
        if (config_is_sensitive(c->argv[i].ptr)) server_redact_arg(c, i + 1);
    int n = (c->argc - 2) / 2;
    const char **pairs = malloc(sizeof(*pairs) * 2 * (size_t)n);
    if (!pairs) return add_reply_error(c, "ERR out of memory");
    for (int i = 0; i < 2 * n; i++)
        pairs[i] = c->argv[2 + i].ptr;
    char *err = NULL;
    config_protected_allowed =
        cfg.enable_protected_configs == PROTECTED_YES ||
        (cfg.enable_protected_configs == PROTECTED_LOCAL && client_is_local(c));
    int rc = config_set_pairs(pairs, n, &err);
    config_protected_allowed = 0;
    if (rc < 0) {
        add_reply_error(c, err);
        free(err);
    } else {
        add_reply_ok(c);
    }
    free(pairs);
}

void cmd_config(client *c)
{
    const arg *sub = &c->argv[1];
    if (arg_is(sub, "help") && c->argc == 2) {
        add_reply_help(c, config_help);
    } else if (arg_is(sub, "get")) {
        config_get_reply(c);
    } else if (arg_is(sub, "set")) {
        config_set_reply(c);
    } else if (arg_is(sub, "resetstat")) {
        if (c->argc != 2) return add_reply_subcommand_arity(c);
        server.stat_commands = server.stat_connections = server.stat_rejected_conn = 0;
        server.stat_errors = server.stat_net_in = server.stat_net_out = 0;
        server.stat_expired = server.stat_commits = server.stat_write_errors = 0;
        server.stat_evicted_clients = 0;
        server.stat_ops_sample_cmds = 0;
        repl_reset_stats();
        stats_reset();
        add_reply_ok(c);
    } else if (arg_is(sub, "rewrite")) {
        if (c->argc != 2) return add_reply_subcommand_arity(c);
        const char *path = config_file_path();
        if (!path) return add_reply_error(c, "The server is running without a config file");
        if (config_rewrite(path) < 0) {
            server_log(LL_WARNING, "CONFIG REWRITE failed: %s", strerror(errno));
            return add_reply_error_fmt(c, "Rewriting config file: %s", strerror(errno));
        }
        server_log(LL_NOTICE, "CONFIG REWRITE executed with success.");
        add_reply_ok(c);
    } else {
        add_reply_subcommand_error(c);
    }
}

/* ---- Keyspace-wide commands -------------------------------------------- */

void cmd_dbsize(client *c)
{
    add_reply_long_long(c, (long long)ks_dbsize(client_ks(c)));
}

static void flush(client *c, int all)
{
    if (c->argc > 2 ||
        (c->argc == 2 && !arg_is(&c->argv[1], "async") && !arg_is(&c->argv[1], "sync"))) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    ks_ctx *ctx = client_ks(c);
    uint64_t keys = 0; /* Redis's dirty counter adds the keys removed, no more */
    int db = ctx->db;
    for (ctx->db = all ? 0 : db; ctx->db < (all ? KS_DATABASES : db + 1); ctx->db++)
        keys += ks_dbsize(ctx);
    ctx->db = db;
    server_watch_flush_begin(ctx, all ? -1 : c->db);
    ks_status st = ks_flush(ctx, all);
    server_watch_flush_end(st == KS_OK);
    if (st != KS_OK) {
        add_reply_ks_error(c, st, ctx);
        return;
    }
    tracking_flushed();
    server.cmd_touches += keys;
    server.cmd_counted = 1;
    /* Redis's FLUSHALL saves when save points are set, so its changes
     * counter reads 0 after it; here the flush, once written, is the save. */
    char save[8];
    if (all && config_get_value("save", save, sizeof(save)) == 0 && save[0])
        server.saved_by_command = 1;
    add_reply_ok(c);
}

void cmd_flushdb(client *c)
{
    flush(c, 0);
}
void cmd_flushall(client *c)
{
    flush(c, 1);
}

void cmd_time(client *c)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    add_reply_array_len(c, 2);
    add_reply_bulk_ll(c, (long long)tv.tv_sec);
    add_reply_bulk_ll(c, (long long)tv.tv_usec);
}

/* ---- SAVE / BGSAVE / LASTSAVE / SHUTDOWN -------------------------------- */

void server_wait_bgsave(void)
{
    bk_wait();
}

void cmd_save(client *c)
{
    if (bk_busy()) {
        add_reply_error(c, "Background save already in progress");
        return;
    }
    server_commit();
    eng_status st = eng_flush(server.db);
    if (st == ENG_OK) st = eng_commit(server.db, 1);
    if (st != ENG_OK) {
        add_reply_error_fmt(c, "save failed: %s", eng_status_str(st));
        return;
    }
    bk_note_save();
    add_reply_ok(c);
}

/* A checkpoint into <dir>/checkpoint by hard links (backup.c). */
void cmd_bgsave(client *c)
{
    char err[256];
    if (c->argc > 2 || (c->argc == 2 && !arg_is(&c->argv[1], "schedule"))) {
        add_reply_error(c, ERR_SYNTAX);
        return;
    }
    if (bk_busy()) {
        if (c->argc == 2) {
            bk_schedule_bgsave();
            add_reply_status(c, "Background saving scheduled");
        } else {
            add_reply_error(c, "Background save already in progress");
        }
        return;
    }
    if (bk_start(BK_BGSAVE, NULL, err, sizeof(err)) < 0) return add_reply_error(c, err);
    add_reply_status(c, "Background saving started");
}

void cmd_lastsave(client *c)
{
    add_reply_long_long(c, (long long)bk_lastsave());
}

void cmd_shutdown(client *c)
{
    int save = 0, nosave = 0;
    for (int i = 1; i < c->argc; i++) {
        const arg *a = &c->argv[i];
        if (arg_is(a, "save"))
            save = 1;
        else if (arg_is(a, "nosave"))
            save = 0, nosave = 1;
        else if (arg_is(a, "now") || arg_is(a, "force"))
            continue;
        else if (arg_is(a, "abort"))
            return add_reply_error(c, "No shutdown in progress.");
        else
            return add_reply_error(c, ERR_SYNTAX);
    }
    if (script_shutdown_check(c, nosave) < 0) return; /* busy script: only NOSAVE */
    if (save && server_prepare_shutdown(1) < 0) {
        add_reply_error(c, "Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    server_log(LL_WARNING, "User requested shutdown from client id=%llu",
               (unsigned long long)c->id);
    server.shutdown_asap = 1;
    c->flags |= CLIENT_CLOSE_AFTER_REPLY; /* as Redis: no reply, the connection closes */
}
