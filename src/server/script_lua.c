/*
 * script_lua.c -- a sandboxed Lua 5.1 interpreter as Redis 7.0 sets one up:
 * the base, table, string and math libraries, cjson, bit, struct and
 * cmsgpack, the redis table, and nothing else (no os, io, package, debug,
 * loadfile, dofile or print).
 *
 * Read-only globals. Redis runs a patched Lua whose tables carry a
 * read-only bit; stock Lua has none, so the sandbox is built from proxies
 * (Invariant SL1): every table a script can reach from its globals (the
 * globals themselves, redis, string, math, table, cjson, bit, struct,
 * cmsgpack, coroutine and the tables inside them) is an empty proxy whose
 * metatable reads through to the real table (__index), refuses writes
 * (__newindex: "Attempt to modify a readonly table") and hides itself
 * (__metatable is another read-only proxy). The real tables are reachable
 * only from C: the registry keeps the globals (SCRIPT_REG_GLOBALS) and a
 * weak table from each proxy to its real table. The builtins that would
 * see through a proxy or write it raw are wrapped: rawset, setmetatable,
 * table.insert/remove/sort refuse a proxy; rawget, next, pairs and ipairs
 * read the real table; getmetatable of a string answers a read-only proxy
 * of the strings' metatable. getfenv, setfenv and newproxy are not offered
 * (Redis 7.0.15 as Debian ships it, with the 2025 Lua fixes). Reading an undefined global raises
 * Redis's "Script attempted to access nonexistent global variable" (the real globals'
 * __index). The thread's globals are the proxy, so loadstring'd chunks and
 * the functions a script defines see the same sandbox.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "server/script.h"

int luaopen_cjson(lua_State *L);
int luaopen_bit(lua_State *L);
int luaopen_struct(lua_State *L);
int luaopen_cmsgpack(lua_State *L);

#define REG_PROXIES "strata.proxies" /* weak: proxy -> real table */

/* Globals a script may see (Redis's allow lists); the rest is removed. */
static const char *const allowed_globals[] = {
    "string",         "cjson",        "bit",        "cmsgpack", "math",
    "table",          "struct",       "redis",      "xpcall",   "tostring",
    "setmetatable",   "next",         "assert",     "tonumber", "rawequal",
    "collectgarbage", "getmetatable", "rawset",     "pcall",    "coroutine",
    "type",           "_G",           "select",     "unpack",   "gcinfo",
    "pairs",          "rawget",       "loadstring", "ipairs",   "_VERSION",
    "load",           "error",        NULL};

/* ---- Errors --------------------------------------------------------------- */

void script_push_error(lua_State *L, const char *msg)
{
    const char *code = "ERR", *text = msg;
    size_t codelen = 3;
    if (msg[0] == '-') {
        const char *sp = strchr(msg, ' ');
        if (sp) {
            code = msg + 1;
            codelen = (size_t)(sp - msg - 1);
            text = sp + 1;
        } else {
            text = msg + 1;
        }
    }
    size_t tl = strlen(text);
    while (tl && (text[tl - 1] == '\r' || text[tl - 1] == '\n'))
        tl--;
    lua_newtable(L);
    lua_pushstring(L, "err");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, codelen);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, text, tl);
    luaL_pushresult(&b);
    lua_rawset(L, -3);
}

static char *dup_field(lua_State *L, const char *name)
{
    lua_getfield(L, -1, name);
    char *s = lua_isstring(L, -1) ? strdup(lua_tostring(L, -1)) : NULL;
    lua_pop(L, 1);
    return s;
}

void script_err_read(lua_State *L, script_err *e)
{
    memset(e, 0, sizeof(*e));
    if (lua_isstring(L, -1)) {
        const char *s = lua_tostring(L, -1);
        e->msg = malloc(strlen(s) + 5);
        if (e->msg) sprintf(e->msg, "ERR %s", s);
        return;
    }
    if (!lua_istable(L, -1)) return;
    e->msg = dup_field(L, "err");
    e->source = dup_field(L, "source");
    e->line = dup_field(L, "line");
    lua_getfield(L, -1, "ignore_error_stats_update");
    e->no_stats = lua_toboolean(L, -1);
    lua_pop(L, 1);
}

void script_err_free(script_err *e)
{
    free(e->msg);
    free(e->source);
    free(e->line);
    memset(e, 0, sizeof(*e));
}

/* The lua_pcall error handler: turns a plain error into {err="ERR ..."}
 * and records where it happened -- in the Lua function that called the C
 * function that raised it, when it was raised from C (redis.call). */
static int error_handler(lua_State *L)
{
    lua_Debug ar;
    int have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
    if (have && strcmp(ar.what, "C") == 0)
        have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
    if (!lua_istable(L, 1)) {
        lua_settop(L, 1);
        lua_pushliteral(L, "ERR ");
        lua_getglobal(L, "tostring"); /* the value's text as Lua prints it */
        lua_pushvalue(L, 1);
        if (lua_pcall(L, 1, 1, 0) != 0 || !lua_isstring(L, -1)) {
            lua_pop(L, 1);
            lua_pushliteral(L, "?");
        }
        lua_concat(L, 2);
        lua_newtable(L);
        lua_pushvalue(L, 2);
        lua_setfield(L, 3, "err");
        lua_replace(L, 1);
        lua_settop(L, 1);
    }
    if (have) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, 1, "source");
        lua_pushinteger(L, ar.currentline);
        lua_setfield(L, 1, "line");
    }
    lua_settop(L, 1);
    return 1;
}

/* ---- Read-only proxies (SL1) -------------------------------------------- */

/* Pushes the real table behind the value at idx when it is a proxy, else
 * nothing; returns whether it pushed. */
static int push_real(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) return 0;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_PROXIES);
    lua_pushvalue(L, idx < 0 ? idx - 1 : idx);
    lua_rawget(L, -2);
    lua_remove(L, -2);
    if (lua_istable(L, -1)) return 1;
    lua_pop(L, 1);
    return 0;
}

static int readonly_error(lua_State *L)
{
    return luaL_error(L, "Attempt to modify a readonly table");
}

/* For the C builtins a proxy reaches: no position, as Redis's check in the
 * C API gives none. */
static int readonly_error_plain(lua_State *L)
{
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
}

static int nonexistent_global(lua_State *L)
{
    const char *name = lua_tostring(L, 2);
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      name ? name : "?");
}

void script_lua_protect(lua_State *L)
{
    int real = lua_gettop(L);
    if (push_real(L, real)) { /* already a proxy */
        lua_pop(L, 1);
        return;
    }
    /* Protect what the table holds first (cycles: a table in progress is
     * registered before its contents are walked). */
    lua_newtable(L); /* proxy */
    int proxy = lua_gettop(L);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_PROXIES);
    lua_pushvalue(L, proxy);
    lua_pushvalue(L, real);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_pushnil(L);
    while (lua_next(L, real)) {
        if (lua_istable(L, -1) && !lua_rawequal(L, -1, real)) {
            script_lua_protect(L);
            lua_pushvalue(L, -2);
            lua_pushvalue(L, -2);
            lua_rawset(L, real); /* same key: allowed during lua_next */
        }
        lua_pop(L, 1);
    }
    lua_newtable(L); /* the proxy's metatable */
    lua_pushvalue(L, real);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, readonly_error);
    lua_setfield(L, -2, "__newindex");
    lua_newtable(L); /* what getmetatable() shows: an empty, read-only table */
    lua_newtable(L);
    lua_pushcfunction(L, readonly_error);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, proxy);
    lua_replace(L, real);
    lua_settop(L, real);
}

static int b_rawset(lua_State *L)
{
    if (push_real(L, 1)) return readonly_error_plain(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int b_rawget(lua_State *L)
{
    if (push_real(L, 1)) lua_replace(L, 1);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    lua_rawget(L, 1);
    return 1;
}

static int b_next(lua_State *L)
{
    if (push_real(L, 1)) lua_replace(L, 1);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    return lua_next(L, 1) ? 2 : (lua_pushnil(L), 1);
}

static int b_pairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushvalue(L, lua_upvalueindex(1)); /* b_next */
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int ipairs_step(lua_State *L)
{
    int i = luaL_checkint(L, 2) + 1;
    if (push_real(L, 1)) lua_replace(L, 1);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushinteger(L, i);
    lua_rawgeti(L, 1, i);
    return lua_isnil(L, -1) ? 0 : 2;
}

static int b_ipairs(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_pushvalue(L, lua_upvalueindex(1)); /* ipairs_step */
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 3;
}

/* setmetatable, table.insert, table.remove, table.sort: refuse a proxy as
 * the first argument, else call the original (upvalue 1). */
static int b_guard_first(lua_State *L)
{
    if (push_real(L, 1)) return readonly_error_plain(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* getmetatable: strings share one metatable, which must stay as it is. */
static int b_getmetatable(lua_State *L)
{
    if (lua_type(L, 1) == LUA_TSTRING) {
        lua_getfield(L, LUA_REGISTRYINDEX, "strata.string_mt");
        return 1;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

/* unpack(t [, i [, j]]) counting the range without int overflow (a huge
 * range is Lua 5.1's "too many results" error, not a crash). */
static int b_unpack(lua_State *L)
{
    if (push_real(L, 1)) lua_replace(L, 1);
    luaL_checktype(L, 1, LUA_TTABLE);
    int i = luaL_optint(L, 2, 1);
    int e = luaL_opt(L, luaL_checkint, 3, luaL_getn(L, 1));
    if (i > e) return 0;
    long long n = (long long)e - (long long)i + 1;
    if (n >= INT_MAX || !lua_checkstack(L, (int)n))
        return luaL_error(L, "too many results to unpack");
    for (long long k = 0; k < n; k++)
        lua_rawgeti(L, 1, (int)(i + k));
    return (int)n;
}

/* loadstring(s [, name]) and load(f [, name]) without binary chunks (as
 * Redis's Lua, which parses every chunk as text): precompiled bytecode
 * could break the sandbox. Returns nil and a message for one. */
static int load_text(lua_State *L, const char *s, size_t n, const char *name)
{
    if (n && s[0] == '\033') {
        lua_pushnil(L);
        lua_pushstring(L, "binary chunks can not be loaded");
        return 2;
    }
    if (luaL_loadbuffer(L, s, n, name) == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

static int b_loadstring(lua_State *L)
{
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    return load_text(L, s, n, luaL_optstring(L, 2, s));
}

static int b_load(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    const char *name = luaL_optstring(L, 2, "=(load)");
    luaL_Buffer b;
    lua_settop(L, 2);
    luaL_buffinit(L, &b);
    for (;;) { /* the pieces, as lua_load would read them */
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
        if (lua_objlen(L, -1) == 0) {
            lua_pop(L, 1);
            break;
        }
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    size_t n;
    const char *s = lua_tolstring(L, -1, &n);
    return load_text(L, s, n, name);
}

/* Replaces t[name] (t at idx) by a closure of fn over the old value. */
static void wrap(lua_State *L, int idx, const char *name, lua_CFunction fn)
{
    lua_getfield(L, idx, name);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, idx < 0 ? idx - 1 : idx, name);
}

static void install_wrappers(lua_State *L)
{
    int g = lua_gettop(L); /* the real globals */
    wrap(L, g, "rawset", b_rawset);
    wrap(L, g, "setmetatable", b_guard_first);
    wrap(L, g, "getmetatable", b_getmetatable);
    lua_pushcfunction(L, b_rawget);
    lua_setfield(L, g, "rawget");
    lua_pushcfunction(L, b_unpack);
    lua_setfield(L, g, "unpack");
    lua_pushcfunction(L, b_loadstring);
    lua_setfield(L, g, "loadstring");
    lua_pushcfunction(L, b_load);
    lua_setfield(L, g, "load");
    lua_pushcfunction(L, b_next);
    lua_pushvalue(L, -1);
    lua_setfield(L, g, "next");
    lua_pushcclosure(L, b_pairs, 1);
    lua_setfield(L, g, "pairs");
    lua_pushcfunction(L, ipairs_step);
    lua_pushcclosure(L, b_ipairs, 1);
    lua_setfield(L, g, "ipairs");
    lua_getfield(L, g, "table");
    wrap(L, -1, "insert", b_guard_first);
    wrap(L, -1, "remove", b_guard_first);
    wrap(L, -1, "sort", b_guard_first);
    lua_pop(L, 1);
}

/* ---- The redis table (what needs no running script) ---------------------- */

static int r_sha1hex(lua_State *L)
{
    if (lua_gettop(L) != 1) {
        script_push_error(L, "wrong number of arguments");
        return lua_error(L);
    }
    size_t n;
    const char *s = lua_tolstring(L, 1, &n);
    char hex[41];
    script_sha1hex(hex, s ? s : "", s ? n : 0);
    lua_pushstring(L, hex);
    return 1;
}

static int r_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        script_push_error(L, "wrong number or type of arguments");
        return 1;
    }
    const char *e = lua_tostring(L, -1);
    if (e[0] == '-') {
        script_push_error(L, e);
    } else {
        lua_pushfstring(L, "-%s", e);
        script_push_error(L, lua_tostring(L, -1));
    }
    return 1;
}

static int r_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
        script_push_error(L, "wrong number or type of arguments");
        return 1;
    }
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "ok");
    return 1;
}

static int r_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2) {
        script_push_error(L, "redis.log() requires two arguments or more.");
        return lua_error(L);
    }
    if (!lua_isnumber(L, 1)) {
        script_push_error(L, "First argument must be a number (log level).");
        return lua_error(L);
    }
    int level = (int)lua_tonumber(L, 1);
    if (level < LL_DEBUG || level > LL_WARNING) {
        script_push_error(L, "Invalid debug level.");
        return lua_error(L);
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int j = 2; j <= argc; j++) {
        size_t n;
        const char *s = lua_tolstring(L, j, &n);
        if (!s) continue;
        if (j != 2) luaL_addchar(&b, ' ');
        luaL_addlstring(&b, s, n);
    }
    luaL_pushresult(&b);
    server_log(level, "%s", lua_tostring(L, -1));
    return 0;
}

/* redis.breakpoint / redis.debug: no debugger session can be active. */
static int r_breakpoint(lua_State *L)
{
    lua_pushboolean(L, 0);
    return 1;
}

static int r_noop(lua_State *L)
{
    return 0;
}

static int r_true(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

/* Redis's pcall: an error table {err=...} comes back as its message. */
static int r_pcall(lua_State *L)
{
    int argc = lua_gettop(L);
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
        lua_remove(L, 1);
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "err");
            if (lua_isstring(L, -1))
                lua_replace(L, -2);
            else
                lua_pop(L, 1);
        }
        lua_pushboolean(L, 0);
        lua_insert(L, 1);
    }
    return lua_gettop(L);
}

static int math_random(lua_State *L)
{
    lua_Number r =
        (lua_Number)(script_rand48() % SCRIPT_RAND48_MAX) / (lua_Number)SCRIPT_RAND48_MAX;
    switch (lua_gettop(L)) {
    case 0:
        lua_pushnumber(L, r);
        break;
    case 1: {
        int u = luaL_checkint(L, 1);
        luaL_argcheck(L, 1 <= u, 1, "interval is empty");
        lua_pushnumber(L, floor(r * u) + 1);
        break;
    }
    case 2: {
        int l = luaL_checkint(L, 1), u = luaL_checkint(L, 2);
        luaL_argcheck(L, l <= u, 2, "interval is empty");
        lua_pushnumber(L, floor(r * (u - l + 1)) + l);
        break;
    }
    default:
        return luaL_error(L, "wrong number of arguments");
    }
    return 1;
}

static int math_randomseed(lua_State *L)
{
    script_srand48(luaL_checkint(L, 1));
    return 0;
}

static void set_fn(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_pushcfunction(L, fn);
    lua_setfield(L, -2, name);
}

static void set_num(lua_State *L, const char *name, lua_Number v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

/* redis.log, the LOG_* levels and the version: in both the run-time and
 * the load-time redis table. */
static void add_log_and_version(lua_State *L)
{
    set_fn(L, "log", r_log);
    set_num(L, "LOG_DEBUG", LL_DEBUG);
    set_num(L, "LOG_VERBOSE", LL_VERBOSE);
    set_num(L, "LOG_NOTICE", LL_NOTICE);
    set_num(L, "LOG_WARNING", LL_WARNING);
    set_num(L, "REDIS_VERSION_NUM", 0x00070000 | 15); /* 7.0.15 */
    lua_pushstring(L, "7.0.15");
    lua_setfield(L, -2, "REDIS_VERSION");
}

static void push_redis_table(lua_State *L, int kind)
{
    lua_newtable(L);
    set_fn(L, "call", script_lua_call);
    set_fn(L, "pcall", script_lua_pcall);
    add_log_and_version(L);
    set_fn(L, "setresp", script_lua_setresp);
    set_fn(L, "sha1hex", r_sha1hex);
    set_fn(L, "error_reply", r_error_reply);
    set_fn(L, "status_reply", r_status_reply);
    set_fn(L, "set_repl", script_lua_set_repl);
    set_num(L, "REPL_NONE", 0);
    set_num(L, "REPL_AOF", 1);
    set_num(L, "REPL_SLAVE", 2);
    set_num(L, "REPL_REPLICA", 2);
    set_num(L, "REPL_ALL", 3);
    set_fn(L, "acl_check_cmd", script_lua_acl_check_cmd);
    if (kind == SCRIPT_LUA_EVAL) {
        set_fn(L, "breakpoint", r_breakpoint);
        set_fn(L, "debug", r_noop);
        set_fn(L, "replicate_commands", r_true);
    }
}

static void open_lib(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] && lua_istable(L, -1)) {
        lua_pushvalue(L, -1);
        lua_setglobal(L, name); /* cjson does not register itself */
    }
    lua_pop(L, 1);
}

static int is_allowed(const char *name)
{
    for (const char *const *a = allowed_globals; *a; a++)
        if (strcmp(*a, name) == 0) return 1;
    return 0;
}

/* Drops every global Redis does not offer (dofile, loadfile, print ...). */
static void prune_globals(lua_State *L)
{
    for (;;) {
        int removed = 0;
        lua_pushnil(L);
        while (lua_next(L, LUA_GLOBALSINDEX)) {
            lua_pop(L, 1);
            if (lua_type(L, -1) != LUA_TSTRING || !is_allowed(lua_tostring(L, -1))) {
                lua_pushvalue(L, -1);
                lua_pushnil(L);
                lua_rawset(L, LUA_GLOBALSINDEX);
                removed = 1;
                lua_pop(L, 1);
                break; /* the walk cannot go on after a removal */
            }
        }
        if (!removed) return;
    }
}

lua_State *script_lua_new(int kind, int (*register_fn)(lua_State *L))
{
    lua_State *L = luaL_newstate();
    if (!L) return NULL;
    lua_newtable(L); /* proxy -> real, weak keys */
    lua_newtable(L);
    lua_pushstring(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_PROXIES);

    open_lib(L, "", luaopen_base);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    open_lib(L, "cjson", luaopen_cjson);
    open_lib(L, "struct", luaopen_struct);
    open_lib(L, "cmsgpack", luaopen_cmsgpack);
    open_lib(L, "bit", luaopen_bit);
    prune_globals(L);
    lua_pushcfunction(L, r_pcall);
    lua_setglobal(L, "pcall");
    push_redis_table(L, kind);
    lua_setglobal(L, "redis");
    lua_getglobal(L, "math");
    set_fn(L, "random", math_random);
    set_fn(L, "randomseed", math_randomseed);
    lua_pop(L, 1);
    lua_pushcfunction(L, error_handler);
    lua_setfield(L, LUA_REGISTRYINDEX, SCRIPT_REG_ERRH);

    lua_pushvalue(L, LUA_GLOBALSINDEX);
    int g = lua_gettop(L);
    install_wrappers(L);
    lua_pushvalue(L, g);
    lua_setfield(L, LUA_REGISTRYINDEX, SCRIPT_REG_GLOBALS);
    lua_pushnil(L); /* _G is set to the proxy below */
    lua_setfield(L, g, "_G");
    lua_pushvalue(L, g);
    script_lua_protect(L); /* the contents; the globals' own proxy follows */
    lua_getmetatable(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, SCRIPT_REG_GLOBALS_MT);
    lua_pushvalue(L, -1);
    lua_setfield(L, g, "_G");
    lua_newtable(L); /* undefined globals raise */
    lua_pushcfunction(L, nonexistent_global);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, g);
    /* Strings' methods go through the read-only string table too, and
     * getmetatable('') shows a read-only proxy of their metatable. */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_getfield(L, g, "string");
    lua_setfield(L, -2, "__index");
    script_lua_protect(L);
    lua_setfield(L, LUA_REGISTRYINDEX, "strata.string_mt");
    lua_pop(L, 1);
    if (kind == SCRIPT_LUA_EVAL) { /* as Redis, the handler is also a global */
        lua_pushcfunction(L, error_handler);
        lua_setfield(L, g, "__redis__err__handler");
    }
    lua_replace(L, LUA_GLOBALSINDEX); /* the thread sees the proxy */
    lua_pop(L, 1);

    if (kind == SCRIPT_LUA_FUNCTIONS) {
        /* The load-time API (functions.c switches the globals' __index to
         * it while a library's body runs): only redis.register_function,
         * redis.log and the version; anything else is undefined. */
        lua_newtable(L);
        lua_newtable(L);
        set_fn(L, "register_function", register_fn);
        add_log_and_version(L);
        lua_newtable(L);
        lua_pushcfunction(L, nonexistent_global);
        lua_setfield(L, -2, "__index");
        lua_setmetatable(L, -2);
        lua_setfield(L, -2, "redis");
        lua_newtable(L);
        lua_pushcfunction(L, nonexistent_global);
        lua_setfield(L, -2, "__index");
        lua_setmetatable(L, -2);
        script_lua_protect(L);
        lua_setfield(L, LUA_REGISTRYINDEX, "strata.load_api");
    }
    return L;
}

size_t script_lua_memory(lua_State *L)
{
    return L ? (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB, 0) : 0;
}
