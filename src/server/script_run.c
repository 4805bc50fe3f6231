/*
 * script_run.c -- running one script: the run context, redis.call and
 * redis.pcall through the command table, and the busy hook.
 *
 * redis.call builds argv from its Lua arguments, checks what a script may
 * run (known command and arity, not CMD_NOSCRIPT, no write in a read-only
 * run) and runs the command with server_call() on the script client, a
 * client without a connection (CLIENT_SCRIPT | CLIENT_DENY_BLOCKING) whose
 * db is the caller's at the start of each run and whose protocol is the
 * one redis.setresp chose (2 by default). The reply the command wrote to
 * that client is parsed back into a Lua value (script_conv.c) and the
 * client's reply chain emptied. Each call has its own savepoint (S1 in
 * server.h): a failing call writes nothing, the calls before it keep
 * their writes, and all of them are in the caller's batch (SC1).
 *
 * The busy hook: a Lua count hook every 100000 instructions. Past
 * busy-reply-threshold ms the run is "timed out": the caller is protected
 * (client_protect: its socket is not served, its pending replies wait) and
 * every hook call serves the other clients (server_events_while_busy),
 * where only CMD_ALLOW_BUSY commands run and the rest get BUSY. SCRIPT
 * KILL / FUNCTION KILL set `killed` when the script has not written; the
 * hook then raises an error on every line so pcall cannot swallow it.
 * SHUTDOWN NOSAVE during a busy script stops the server from the hook,
 * before the script's batch is written: its writes are lost, as in Redis.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include "server/config.h"
#include "server/acl.h"
#include "server/repl.h"
#include "server/script.h"

#define HOOK_INSTRUCTIONS 100000

static script_run *cur;
static client *script_client;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

script_run *script_current(void)
{
    return cur;
}

int script_running(void)
{
    return cur != NULL;
}

int script_timedout(void)
{
    return cur && cur->timedout;
}

static const char *busy_text(int eval)
{
    return eval ? "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
                  "NOSAVE."
                : "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                  "SHUTDOWN NOSAVE.";
}

const char *script_busy_text(void)
{
    return busy_text(cur ? cur->eval : 1);
}

void script_reply_busy(client *c)
{
    add_reply_error(c, busy_text(cur ? cur->eval : 1));
}

int script_shutdown_check(client *c, int nosave)
{
    if (!script_timedout() || nosave) return 0;
    script_reply_busy(c);
    return -1;
}

void script_kill(client *c, int eval)
{
    if (!cur) {
        add_reply_error(c, "NOTBUSY No scripts in execution right now.");
    } else if (cur->write_dirty) {
        add_reply_error(c, "UNKILLABLE Sorry the script already executed write commands against "
                           "the dataset. You can either wait the script termination or kill the "
                           "server in a hard way using the SHUTDOWN NOSAVE command.");
    } else if (eval != cur->eval) {
        add_reply_error(c, busy_text(!eval));
    } else {
        cur->killed = 1;
        add_reply_ok(c);
    }
}

/* ---- The run ---------------------------------------------------------------- */

static client *get_script_client(void)
{
    if (!script_client) {
        script_client = client_create(-1);
        if (!script_client) abort();
        script_client->flags |= CLIENT_SCRIPT | CLIENT_DENY_BLOCKING | CLIENT_AUTHENTICATED;
    }
    return script_client;
}

int script_run_begin(script_run *r, client *caller, const char *name, int flags, int ro, int eval)
{
    int compat = flags & SCRIPT_FLAG_EVAL_COMPAT;
    if (!compat && !(flags & SCRIPT_FLAG_NO_WRITES) && ro) {
        add_reply_error(caller, "Can not execute a script with write flag using *_ro command.");
        return -1;
    }
    if (!compat && !(flags & SCRIPT_FLAG_NO_WRITES)) {
        const char *why = repl_any_write_refusal(); /* READONLY, NOREPLICAS */
        if (why) {
            add_reply_error(caller, why);
            return -1;
        }
    }
    memset(r, 0, sizeof(*r));
    r->caller = caller;
    r->name = name;
    r->eval = eval;
    r->readonly = ro || (!compat && (flags & SCRIPT_FLAG_NO_WRITES));
    r->start_ms = mono_ms();
    client *sc = get_script_client();
    sc->db = caller->db;
    sc->resp = 2;
    cur = r;
    return 0;
}

void script_run_end(script_run *r)
{
    if (r->timedout) client_unprotect(r->caller);
    cur = NULL;
}

int64_t script_run_duration_ms(const script_run *r)
{
    return mono_ms() - r->start_ms;
}

static void count_hook(lua_State *L, lua_Debug *ar)
{
    script_run *r = cur;
    if (!r) return;
    if (!r->timedout) {
        int64_t elapsed = mono_ms() - r->start_ms;
        if (elapsed < cfg.busy_reply_threshold) return;
        server_log(LL_WARNING,
                   "Slow script detected: still in execution after %lld milliseconds. You can try "
                   "killing the script using the %s command. Script name is: %s.",
                   (long long)elapsed, r->eval ? "SCRIPT KILL" : "FUNCTION KILL", r->name);
        r->timedout = 1;
        client_protect(r->caller);
    }
    server_events_while_busy();
    if (server.shutdown_asap) { /* SHUTDOWN NOSAVE or a signal: the script's writes are lost */
        server_log(LL_WARNING, "Shutting down while a script is busy; its writes are dropped.");
        server_shutdown();
        exit(server.exit_code);
    }
    if (r->killed) {
        server_log(LL_WARNING, "Lua script killed by user with SCRIPT KILL.");
        lua_sethook(L, count_hook, LUA_MASKLINE, 0); /* again on every line: no pcall escape */
        script_push_error(L, "Script killed by user with SCRIPT KILL...");
        lua_error(L);
    }
}

static void push_array(lua_State *L, const arg *v, int n)
{
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(L, v[i].ptr, v[i].len);
        lua_rawseti(L, -2, i + 1);
    }
}

/* The error reply of a failed run, as Redis composes it: the error's text,
 * then where it was raised. */
static void reply_run_error(script_run *r, lua_State *L)
{
    client *c = r->caller;
    if (!lua_istable(L, -1)) {
        const char *msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
        add_reply_error_fmt(c, "Error running script %s, %.100s\n", r->name, msg);
        return;
    }
    script_err e;
    script_err_read(L, &e);
    size_t n = (e.msg ? strlen(e.msg) : 0) + strlen(r->name) + (e.source ? strlen(e.source) : 0) +
               (e.line ? strlen(e.line) : 0) + 64;
    char *m = malloc(n);
    if (!m) abort();
    if (e.line && e.source)
        snprintf(m, n, "-%s script: %s, on %s:%s.", e.msg ? e.msg : "", r->name, e.source, e.line);
    else
        snprintf(m, n, "-%s", e.msg ? e.msg : "");
    if (e.no_stats)
        add_reply_error_counted(c, m);
    else
        add_reply_error(c, m);
    free(m);
    script_err_free(&e);
}

void script_run_call(script_run *r, lua_State *L, const arg *keys, int nkeys, const arg *args,
                     int nargs)
{
    static unsigned gc_count;
    if (cfg.busy_reply_threshold > 0) lua_sethook(L, count_hook, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
    int err;
    if (r->eval) {
        lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_REG_GLOBALS);
        push_array(L, keys, nkeys);
        lua_setfield(L, -2, "KEYS"); /* the real globals: rawset-like, no proxy */
        push_array(L, args, nargs);
        lua_setfield(L, -2, "ARGV");
        lua_pop(L, 1);
        err = lua_pcall(L, 0, 1, -2);
    } else {
        push_array(L, keys, nkeys);
        push_array(L, args, nargs);
        err = lua_pcall(L, 2, 1, -4);
    }
    /* A little garbage collection now and then, not a full cycle at a
     * random moment. */
    if (++gc_count == 50) {
        lua_gc(L, LUA_GCSTEP, 50);
        gc_count = 0;
    }
    if (err)
        reply_run_error(r, L);
    else
        script_lua_to_reply(r->caller, get_script_client()->resp, L);
    if (err) lua_pop(L, 1);
    lua_sethook(L, NULL, 0, 0);
    lua_pop(L, 1); /* the error handler */
}

/* ---- redis.call / redis.pcall --------------------------------------------- */

static arg *call_argv;
static int call_argv_cap;
static char *call_buf;
static size_t call_buf_cap;

/* Copies the Lua arguments into call_argv (NUL-terminated, in call_buf).
 * Returns argc, or -1 when one is neither a string nor a number. */
static int build_argv(lua_State *L, int argc)
{
    if (argc <= 0 || argc > (1 << 28)) return -1;
    size_t total = 0;
    char num[64];
    for (int j = 1; j <= argc; j++) {
        int t = lua_type(L, j);
        if (t == LUA_TNUMBER)
            total += 64;
        else if (t == LUA_TSTRING)
            total += lua_objlen(L, j) + 1;
        else
            return -1;
    }
    if (total > call_buf_cap) {
        free(call_buf);
        call_buf_cap = total * 2;
        call_buf = malloc(call_buf_cap);
        if (!call_buf) abort();
    }
    if (argc > call_argv_cap) {
        call_argv_cap = argc < 1024 ? 1024 : argc * 2;
        call_argv = realloc(call_argv, (size_t)call_argv_cap * sizeof(arg));
        if (!call_argv) abort();
    }
    char *p = call_buf;
    for (int j = 1; j <= argc; j++) {
        const char *s;
        size_t n;
        if (lua_type(L, j) == LUA_TNUMBER) {
            /* %.17g: lua_tostring's %.14g would lose precision */
            n = (size_t)snprintf(num, sizeof(num), "%.17g", (double)lua_tonumber(L, j));
            s = num;
        } else {
            s = lua_tolstring(L, j, &n);
        }
        memcpy(p, s, n);
        p[n] = '\0';
        call_argv[j - 1].ptr = p;
        call_argv[j - 1].len = n;
        p += n + 1;
    }
    return argc;
}

/* Why the command cannot run from this script, or NULL. */
static const char *call_refusal(script_run *r, const struct command *cmd, int argc, const arg *argv)
{
    if (!cmd || !cmd->proc) return "Unknown Redis command called from script";
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity)
        return "Wrong number of args calling Redis command from script";
    int bad_sub; /* a subcommand's own flags count (CLUSTER RESET is noscript) */
    const struct command *real = command_resolve(cmd, argc, argv, &bad_sub);
    if ((cmd->flags | real->flags) & CMD_NOSCRIPT)
        return "This Redis command is not allowed from script";
    /* PUBLISH and the like may replicate: as writes for this (Redis). */
    if (r->readonly && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)))
        return "Write commands are not allowed from read-only scripts.";
    const char *why = (cmd->flags & CMD_WRITE) ? repl_any_write_refusal() : NULL; /* R1 */
    if (!why) return NULL;
    static char coded[128]; /* its own code (READONLY, NOREPLICAS), not ERR */
    snprintf(coded, sizeof(coded), "-%s", why);
    return coded;
}

/* Pushes the reply the script client holds as a Lua value and empties the
 * client's reply chain; returns whether it was an error. */
static int take_reply(lua_State *L, client *sc)
{
    struct client_private *p = sc->priv;
    reply_block *b = p->reply_head;
    int is_err;
    if (b && !b->next) {
        is_err = b->used && b->buf[0] == '-';
        script_reply_to_lua(L, b->buf, b->used);
    } else {
        size_t n = 0;
        for (reply_block *x = b; x; x = x->next)
            n += x->used;
        char *buf = malloc(n ? n : 1), *q = buf;
        if (!buf) abort();
        for (reply_block *x = b; x; x = x->next) {
            memcpy(q, x->buf, x->used);
            q += x->used;
        }
        is_err = n && buf[0] == '-';
        script_reply_to_lua(L, buf, n);
        free(buf);
    }
    reply_free_all(sc);
    return is_err;
}

static int redis_call(lua_State *L, int raise)
{
    static int inuse;
    script_run *r = cur;
    if (!r) {
        script_push_error(L, "redis.call/pcall can only be called inside a script invocation");
        return lua_error(L);
    }
    int argc = lua_gettop(L);
    if (argc == 0) {
        script_push_error(L, "Please specify at least one argument for this redis lib call");
        return raise ? lua_error(L) : 1;
    }
    if (build_argv(L, argc) < 0) {
        lua_settop(L, 0);
        script_push_error(L, "Lua redis lib command arguments must be strings or integers");
        return raise ? lua_error(L) : 1;
    }
    lua_settop(L, 0);
    if (inuse) { /* a command running Lua again: never by design */
        script_push_error(L, "redis.call() recursive call detected");
        return raise ? lua_error(L) : 1;
    }
    const struct command *cmd = command_lookup(call_argv[0].ptr, call_argv[0].len);
    const char *why = call_refusal(r, cmd, argc, call_argv);
    if (why) {
        script_push_error(L, why);
        return raise ? lua_error(L) : 1;
    }
    client *sc = get_script_client();
    sc->argc = argc;
    sc->argv = call_argv;
    sc->user = r->caller ? r->caller->user : acl_default_user(); /* the caller's permissions */
    why = acl_user_unrestricted(sc->user) ? NULL : acl_check_script_command(sc, cmd);
    if (why) {
        sc->argc = 0;
        sc->argv = NULL;
        script_push_error(L, why);
        return raise ? lua_error(L) : 1;
    }
    if (cmd->flags & CMD_WRITE) r->write_dirty = 1;
    inuse = 1;
    server_call(sc, cmd);
    inuse = 0;
    sc->argc = 0;
    sc->argv = NULL;
    int is_err = take_reply(L, sc);
    if (raise && is_err && lua_istable(L, -1)) {
        /* The command's error reply was counted (errorstats): the
         * caller's reply of it must not count it again (Redis). */
        lua_pushstring(L, "ignore_error_stats_update");
        lua_pushboolean(L, 1);
        lua_settable(L, -3);
    }
    return raise && is_err ? lua_error(L) : 1;
}

int script_lua_call(lua_State *L)
{
    return redis_call(L, 1);
}

int script_lua_pcall(lua_State *L)
{
    return redis_call(L, 0);
}

/* redis.acl_check_cmd(name, args...): whether the script's caller may
 * run the command with these arguments, as Redis. */
int script_lua_acl_check_cmd(lua_State *L)
{
    script_run *r = cur;
    int argc = lua_gettop(L);
    if (argc == 0 || build_argv(L, argc) < 0) {
        lua_settop(L, 0);
        script_push_error(L, argc == 0
                                 ? "Please specify at least one argument for this redis lib call"
                                 : "Lua redis lib command arguments must be strings or integers");
        return lua_error(L);
    }
    lua_settop(L, 0);
    const struct command *cmd = command_lookup(call_argv[0].ptr, call_argv[0].len);
    if (!cmd || !cmd->proc || (cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity) {
        script_push_error(L, "Invalid command passed to redis.acl_check_cmd()");
        return lua_error(L);
    }
    int bad, pos;
    const struct command *real = command_resolve(cmd, argc, call_argv, &bad);
    const acl_user *u = r && r->caller ? r->caller->user : acl_default_user();
    lua_pushboolean(L, acl_check_cmd(u, real, argc, call_argv, &pos) == ACL_OK);
    return 1;
}

int script_lua_setresp(lua_State *L)
{
    if (!cur) {
        script_push_error(L, "redis.setresp can only be called inside a script invocation");
        return lua_error(L);
    }
    if (lua_gettop(L) != 1) {
        script_push_error(L, "redis.setresp() requires one argument.");
        return lua_error(L);
    }
    int resp = (int)lua_tonumber(L, 1);
    if (resp != 2 && resp != 3) {
        script_push_error(L, "RESP version must be 2 or 3.");
        return lua_error(L);
    }
    get_script_client()->resp = resp;
    return 0;
}

/* Accepted for compatibility: strata has no replication to steer. */
int script_lua_set_repl(lua_State *L)
{
    if (!cur) {
        script_push_error(L, "redis.set_repl can only be called inside a script invocation");
        return lua_error(L);
    }
    if (lua_gettop(L) != 1) {
        script_push_error(L, "redis.set_repl() requires two arguments.");
        return lua_error(L);
    }
    int flags = (int)lua_tonumber(L, 1);
    if (flags & ~3) {
        script_push_error(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
                             "REPL_NONE.");
        return lua_error(L);
    }
    return 0;
}
