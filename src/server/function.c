/*
 * function.c -- function libraries: metadata, loading a library's body
 * with redis.register_function, the registry of libraries and functions,
 * and their persistence as server records (function.h).
 *
 * On-disk format: one record per library (src/keyspace/ENCODING.md,
 * "Server records"):
 *   'S' 'F' <library name> -> the library source as FUNCTION LOAD got it
 * Written in the batch of the FUNCTION LOAD / DELETE / FLUSH / RESTORE that
 * changes the library, so the change and its acknowledgement commit
 * together; read back by function_init at start, which loads every stored
 * library again (a record that no longer loads is logged and skipped).
 *
 * Loading (as Redis 7.0): the body runs in the functions interpreter with
 * its globals switched to the load-time API (redis.register_function,
 * redis.log and the version only), for at most 500 ms; then the globals
 * are switched back. A library must register at least one function, and
 * none of its functions may clash with another library's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include "server/config.h"
#include "server/function.h"

#define SYSREC_LIBRARY 'F'
#define HASH_SLOTS 1024 /* function names; chains grow past that */

static lua_State *fn_lua;
static fn_lib **libs;
static size_t nlibs, libs_cap;
static fn_info *fn_hash[HASH_SLOTS];
static size_t nfunctions, fn_bytes;

/* The library being loaded (redis.register_function adds to it). */
static struct {
    fn_lib *lib;
    int64_t start_ms;
    int timeout_ms;
} loading;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

lua_State *function_lua(void)
{
    return fn_lua;
}

fn_lib **function_libs(size_t *n)
{
    *n = nlibs;
    return libs;
}

size_t function_count(void)
{
    return nfunctions;
}

size_t function_lib_count(void)
{
    return nlibs;
}

size_t function_bytes(void)
{
    return fn_bytes + sizeof(fn_hash);
}

size_t function_vm_bytes(void)
{
    return script_lua_memory(fn_lua);
}

static unsigned name_hash(const char *s, size_t n)
{
    unsigned h = 5381;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 'A' && ch <= 'Z') ch += 32;
        h = h * 33 + ch;
    }
    return h % HASH_SLOTS;
}

fn_info *function_find(const char *name, size_t len)
{
    for (fn_info *f = fn_hash[name_hash(name, len)]; f; f = f->hnext)
        if (strlen(f->name) == len && strncasecmp(f->name, name, len) == 0) return f;
    return NULL;
}

fn_lib *function_lib_find(const char *name, size_t len)
{
    for (size_t i = 0; i < nlibs; i++)
        if (strlen(libs[i]->name) == len && memcmp(libs[i]->name, name, len) == 0) return libs[i];
    return NULL;
}

static void lib_free(fn_lib *lib)
{
    for (int i = 0; i < lib->nfns; i++) {
        fn_info *f = lib->fns[i];
        if (fn_lua) luaL_unref(fn_lua, LUA_REGISTRYINDEX, f->ref);
        free(f->name);
        free(f->desc);
        free(f);
    }
    free(lib->fns);
    free(lib->name);
    free(lib->code);
    free(lib);
}

static size_t lib_bytes(const fn_lib *lib)
{
    size_t n = sizeof(*lib) + strlen(lib->name) + lib->code_len;
    for (int i = 0; i < lib->nfns; i++)
        n += sizeof(fn_info) + strlen(lib->fns[i]->name) +
             (lib->fns[i]->desc ? strlen(lib->fns[i]->desc) : 0);
    return n;
}

static void lib_link(fn_lib *lib)
{
    if (nlibs == libs_cap) {
        libs_cap = libs_cap ? libs_cap * 2 : 8;
        libs = realloc(libs, libs_cap * sizeof(*libs));
        if (!libs) abort();
    }
    libs[nlibs++] = lib;
    for (int i = 0; i < lib->nfns; i++) {
        fn_info *f = lib->fns[i];
        unsigned h = name_hash(f->name, strlen(f->name));
        f->hnext = fn_hash[h];
        fn_hash[h] = f;
    }
    nfunctions += (size_t)lib->nfns;
    fn_bytes += lib_bytes(lib);
}

static void lib_unlink(fn_lib *lib)
{
    for (size_t i = 0; i < nlibs; i++) {
        if (libs[i] != lib) continue;
        memmove(libs + i, libs + i + 1, (nlibs - i - 1) * sizeof(*libs));
        nlibs--;
        break;
    }
    for (int i = 0; i < lib->nfns; i++) {
        fn_info **pp = &fn_hash[name_hash(lib->fns[i]->name, strlen(lib->fns[i]->name))];
        while (*pp && *pp != lib->fns[i])
            pp = &(*pp)->hnext;
        if (*pp) *pp = lib->fns[i]->hnext;
    }
    nfunctions -= (size_t)lib->nfns;
    fn_bytes -= lib_bytes(lib);
}

static int valid_name(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_'))
            return 0;
    }
    return 1;
}

static char *msgf(const char *fmt, const char *a)
{
    size_t n = strlen(fmt) + strlen(a) + 1;
    char *m = malloc(n);
    if (m) snprintf(m, n, fmt, a);
    return m;
}

/* ---- redis.register_function ------------------------------------------------ */

static int reg_error(lua_State *L, const char *msg)
{
    script_push_error(L, msg);
    return lua_error(L);
}

static int read_flags(lua_State *L, int idx, int *flags)
{
    *flags = 0;
    for (int j = 1;; j++) {
        lua_rawgeti(L, idx, j);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return 0;
        }
        if (!lua_isstring(L, -1)) {
            lua_pop(L, 1);
            return -1;
        }
        const char *s = lua_tostring(L, -1);
        const script_flag_name *f;
        for (f = script_flag_names; f->name; f++)
            if (strcasecmp(f->name, s) == 0) break;
        lua_pop(L, 1);
        if (!f->name) return -1;
        *flags |= f->flag;
    }
}

/* Named arguments: {function_name=, callback=, flags=, description=}.
 * Leaves name, callback, flags table (or nil) and description (or nil)
 * at stack slots 2..5. Returns NULL or the error text. */
static const char *read_named(lua_State *L)
{
    if (!lua_istable(L, 1))
        return "calling redis.register_function with a single argument is only applicable to Lua "
               "table (representing named arguments).";
    lua_settop(L, 5); /* 2 name, 3 callback, 4 flags, 5 description */
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            if (lua_type(L, -2) != LUA_TNUMBER)
                return "named argument key given to redis.register_function is not a string";
            return "unknown argument given to redis.register_function";
        }
        const char *k = lua_tostring(L, -2);
        int slot;
        if (!strcasecmp(k, "function_name")) {
            if (!lua_isstring(L, -1))
                return "function_name argument given to redis.register_function must be a string";
            slot = 2;
        } else if (!strcasecmp(k, "description")) {
            if (!lua_isstring(L, -1))
                return "description argument given to redis.register_function must be a string";
            slot = 5;
        } else if (!strcasecmp(k, "callback")) {
            if (!lua_isfunction(L, -1))
                return "callback argument given to redis.register_function must be a function";
            slot = 3;
        } else if (!strcasecmp(k, "flags")) {
            if (!lua_istable(L, -1))
                return "flags argument to redis.register_function must be a table representing "
                       "function flags";
            slot = 4;
        } else {
            return "unknown argument given to redis.register_function";
        }
        lua_replace(L, slot);
    }
    if (lua_isnil(L, 2)) return "redis.register_function must get a function name argument";
    if (lua_isnil(L, 3)) return "redis.register_function must get a callback argument";
    return NULL;
}

static int register_function(lua_State *L)
{
    fn_lib *lib = loading.lib;
    if (!lib)
        return reg_error(L, "redis.register_function can only be called on FUNCTION LOAD command");
    int argc = lua_gettop(L), flags = 0;
    if (argc < 1 || argc > 2)
        return reg_error(L, "wrong number of arguments to redis.register_function");
    if (argc == 1) {
        const char *why = read_named(L);
        if (why) return reg_error(L, why);
        if (!lua_isnil(L, 4) && read_flags(L, 4, &flags) < 0)
            return reg_error(L, "unknown flag given");
    } else {
        if (!lua_isstring(L, 1))
            return reg_error(L, "first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2))
            return reg_error(L, "second argument to redis.register_function must be a function");
        lua_settop(L, 2);
        lua_pushvalue(L, 2); /* 3 callback */
        lua_pushvalue(L, 1);
        lua_replace(L, 2); /* 2 name */
        lua_settop(L, 5);  /* 4 flags, 5 description: none */
    }
    size_t nl;
    const char *name = lua_tolstring(L, 2, &nl);
    if (!valid_name(name, nl))
        return reg_error(L,
                         "Library names can only contain letters, numbers, or underscores(_) and "
                         "must be at least one character long");
    for (int i = 0; i < lib->nfns; i++)
        if (strlen(lib->fns[i]->name) == nl && memcmp(lib->fns[i]->name, name, nl) == 0)
            return reg_error(L, "Function already exists in the library");
    fn_info *f = calloc(1, sizeof(*f));
    if (!f || !(f->name = strndup(name, nl))) abort();
    if (!lua_isnil(L, 5)) f->desc = strdup(lua_tostring(L, 5));
    f->flags = flags;
    f->lib = lib;
    lua_pushvalue(L, 3);
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (lib->nfns == lib->cap) {
        lib->cap = lib->cap ? lib->cap * 2 : 4;
        lib->fns = realloc(lib->fns, (size_t)lib->cap * sizeof(*lib->fns));
        if (!lib->fns) abort();
    }
    lib->fns[lib->nfns++] = f;
    return 0;
}

/* ---- Loading ---------------------------------------------------------------- */

static void load_hook(lua_State *L, lua_Debug *ar)
{
    if (loading.timeout_ms > 0 && mono_ms() - loading.start_ms > loading.timeout_ms) {
        lua_sethook(L, load_hook, LUA_MASKLINE, 0);
        script_push_error(L, "FUNCTION LOAD timeout");
        lua_error(L);
    }
}

/* Points the globals' __index at the load-time API (on) or back. */
static void load_api(lua_State *L, int on)
{
    lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_REG_GLOBALS_MT);
    lua_getfield(L, LUA_REGISTRYINDEX, on ? "strata.load_api" : SCRIPT_REG_GLOBALS);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}

/* Runs the library body code[0..len) into lib. Returns 0 or -1 (*err). */
static int run_body(fn_lib *lib, const char *code, size_t len, int timeout_ms, char **err)
{
    lua_State *L = fn_lua;
    int rc = -1;
    load_api(L, 1);
    if (luaL_loadbuffer(L, code, len, "@user_function")) {
        *err = msgf("Error compiling function: %s", lua_tostring(L, -1));
        lua_pop(L, 1);
        goto done;
    }
    loading.lib = lib;
    loading.start_ms = mono_ms();
    loading.timeout_ms = timeout_ms;
    lua_sethook(L, load_hook, LUA_MASKCOUNT, 100000);
    if (lua_pcall(L, 0, 0, 0)) {
        script_err e;
        script_err_read(L, &e);
        *err = msgf("Error registering functions: %s", e.msg ? e.msg : "");
        script_err_free(&e);
        lua_pop(L, 1);
        goto done;
    }
    rc = 0;
done:
    lua_sethook(L, NULL, 0, 0);
    loading.lib = NULL;
    load_api(L, 0);
    return rc;
}

/* The "#!<engine> name=<lib>" first line. Returns 0 with *name and
 * *engine (malloc'd) and *body_off (where the body starts: the newline
 * itself, so line numbers count from the first line), or -1 with *err. */
static int parse_meta(const char *code, size_t len, char **name, char **engine, size_t *body_off,
                      char **err)
{
    *name = *engine = NULL;
    if (len < 2 || code[0] != '#' || code[1] != '!') {
        *err = strdup("Missing library metadata");
        return -1;
    }
    const char *nl = memchr(code, '\n', len);
    if (!nl) {
        *err = strdup("Invalid library metadata");
        return -1;
    }
    char *line = strndup(code, (size_t)(nl - code)), **parts = NULL;
    int n = line ? config_split_args(line, &parts) : -1;
    free(line);
    if (n <= 0) {
        *err = strdup("Invalid library metadata");
        return -1;
    }
    *engine = strdup(parts[0] + 2);
    for (int i = 1; i < n; i++) {
        if (strncasecmp(parts[i], "name=", 5) == 0) {
            if (*name) {
                *err = strdup("Invalid metadata value, name argument was given multiple times");
                goto fail;
            }
            *name = strdup(parts[i] + 5);
            continue;
        }
        *err = msgf("Invalid metadata value given: %s", parts[i]);
        goto fail;
    }
    if (!*name) {
        *err = strdup("Library name was not given");
        goto fail;
    }
    config_free_args(parts, n);
    *body_off = (size_t)(nl - code);
    return 0;
fail:
    config_free_args(parts, n);
    free(*name);
    free(*engine);
    *name = *engine = NULL;
    return -1;
}

char *function_load(client *c, const char *code, size_t len, int replace, int timeout_ms,
                    char **err)
{
    char *name, *engine;
    size_t off;
    *err = NULL;
    if (parse_meta(code, len, &name, &engine, &off, err) < 0) return NULL;
    fn_lib *old = NULL, *lib = NULL;
    if (!valid_name(name, strlen(name))) {
        *err = strdup("Library names can only contain letters, numbers, or underscores(_) and "
                      "must be at least one character long");
        goto fail;
    }
    if (strcasecmp(engine, "lua") != 0) {
        *err = msgf("Engine '%s' not found", engine);
        goto fail;
    }
    old = function_lib_find(name, strlen(name));
    if (old && !replace) {
        *err = msgf("Library '%s' already exists", name);
        old = NULL;
        goto fail;
    }
    if (old) lib_unlink(old);
    lib = calloc(1, sizeof(*lib));
    if (!lib || !(lib->name = strdup(name)) || !(lib->code = malloc(len ? len : 1))) abort();
    memcpy(lib->code, code, len);
    lib->code_len = len;
    if (run_body(lib, code + off, len - off, timeout_ms, err) < 0) goto fail;
    if (lib->nfns == 0) {
        *err = strdup("No functions registered");
        goto fail;
    }
    for (int i = 0; i < lib->nfns; i++) {
        if (function_find(lib->fns[i]->name, strlen(lib->fns[i]->name))) {
            *err = msgf("Function %s already exists", lib->fns[i]->name);
            goto fail;
        }
    }
    lib_link(lib);
    if (old) lib_free(old);
    if (c) ks_sysrec_put(client_ks(c), SYSREC_LIBRARY, name, strlen(name), code, len);
    free(engine);
    return name;
fail:
    if (lib) lib_free(lib);
    if (old) lib_link(old);
    free(name);
    free(engine);
    return NULL;
}

void function_delete(client *c, fn_lib *lib, int store)
{
    if (store) ks_sysrec_delete(client_ks(c), SYSREC_LIBRARY, lib->name, strlen(lib->name));
    lib_unlink(lib);
    lib_free(lib);
}

void function_flush(client *c, int store)
{
    if (store) ks_sysrec_delete_kind(client_ks(c), SYSREC_LIBRARY);
    while (nlibs) {
        fn_lib *lib = libs[nlibs - 1];
        lib_unlink(lib);
        lib_free(lib);
    }
}

/* ---- Start and end ------------------------------------------------------------ */

static int load_stored(void *arg, const char *name, size_t nl, const char *v, size_t vl)
{
    char *err = NULL;
    char *lib = function_load(NULL, v, vl, 0, 0, &err);
    if (!lib)
        server_log(LL_WARNING, "Function library '%.*s' stored in the engine does not load: %s",
                   (int)nl, name, err ? err : "?");
    else
        (*(int *)arg)++;
    free(lib);
    free(err);
    return 0;
}

int function_init(void)
{
    fn_lua = script_lua_new(SCRIPT_LUA_FUNCTIONS, register_function);
    if (!fn_lua) {
        server_log(LL_WARNING, "Can't create the Lua interpreter for functions");
        return -1;
    }
    ks_ctx ctx = {server.ks, NULL, 0, server_now_ms(), NULL};
    int loaded = 0;
    ks_status st = ks_sysrec_iterate(&ctx, SYSREC_LIBRARY, load_stored, &loaded);
    if (st != KS_OK) {
        server_log(LL_WARNING, "Can't read the stored function libraries: %s",
                   ctx.err ? ctx.err : "?");
        ks_ctx_reset(&ctx);
        return -1;
    }
    if (loaded)
        server_log(LL_NOTICE, "Loaded %d function librar%s", loaded, loaded == 1 ? "y" : "ies");
    return 0;
}

void function_free_all(void)
{
    function_flush(NULL, 0);
    free(libs);
    libs = NULL;
    libs_cap = 0;
    if (fn_lua) lua_close(fn_lua);
    fn_lua = NULL;
}

/* ---- RESTORE ------------------------------------------------------------------ */

static int is_linked(const fn_lib *lib)
{
    for (size_t i = 0; i < nlibs; i++)
        if (libs[i] == lib) return 1;
    return 0;
}

/* Puts back exactly the libraries of saved[0..n), in their order. */
static void relink_only(fn_lib **saved, size_t n)
{
    while (nlibs) {
        fn_lib *lib = libs[nlibs - 1];
        int was_saved = 0;
        for (size_t i = 0; i < n; i++)
            if (saved[i] == lib) was_saved = 1;
        lib_unlink(lib);
        if (!was_saved) lib_free(lib);
    }
    for (size_t i = 0; i < n; i++)
        lib_link(saved[i]);
}

int function_restore_libraries(client *c, char **code, size_t *len, int n, int flush, int replace,
                               char **err)
{
    size_t nsaved = nlibs;
    fn_lib **saved = malloc((nsaved ? nsaved : 1) * sizeof(*saved));
    char **names = calloc((size_t)(n ? n : 1), sizeof(char *));
    if (!saved || !names) abort();
    memcpy(saved, libs, nsaved * sizeof(*saved));
    int rc = -1;
    *err = NULL;
    if (flush) {
        while (nlibs)
            lib_unlink(libs[nlibs - 1]);
    } else {
        for (int i = 0; i < n; i++) {
            char *name, *engine;
            size_t off;
            char *e = NULL;
            if (parse_meta(code[i], len[i], &name, &engine, &off, &e) < 0) {
                free(e); /* function_load reports it below */
                continue;
            }
            fn_lib *cur = function_lib_find(name, strlen(name));
            if (cur && !replace) *err = msgf("Library %s already exists", name);
            if (cur && replace) lib_unlink(cur);
            free(name);
            free(engine);
            if (*err) goto done;
        }
    }
    for (int i = 0; i < n; i++) {
        names[i] = function_load(NULL, code[i], len[i], 0, 0, err);
        if (!names[i]) goto done;
    }
    rc = 0;
done:
    if (rc < 0) {
        relink_only(saved, nsaved);
    } else {
        for (size_t i = 0; i < nsaved; i++)
            if (!is_linked(saved[i])) {
                if (!flush)
                    ks_sysrec_delete(client_ks(c), SYSREC_LIBRARY, saved[i]->name,
                                     strlen(saved[i]->name));
                lib_free(saved[i]);
            }
        if (flush) ks_sysrec_delete_kind(client_ks(c), SYSREC_LIBRARY);
        for (int i = 0; i < n; i++)
            ks_sysrec_put(client_ks(c), SYSREC_LIBRARY, names[i], strlen(names[i]), code[i],
                          len[i]);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(saved);
    return rc;
}
