/*
 * cmd_function.c -- FCALL, FCALL_RO and FUNCTION LOAD | LIST | DELETE |
 * FLUSH | STATS | KILL | DUMP | RESTORE | HELP, with Redis 7.0's replies
 * and error texts. The libraries themselves are in function.c; DUMP and
 * RESTORE's payload in function_dump.c.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "server/function.h"

#define LOAD_TIMEOUT_MS 500

static void fcall_generic(client *c, int ro)
{
    fn_info *f = function_find(c->argv[1].ptr, c->argv[1].len);
    if (!f) {
        add_reply_error(c, "Function not found");
        return;
    }
    long long nk;
    if (script_numkeys(c, &nk, "Bad number of keys provided") < 0) return;
    script_run r;
    if (script_run_begin(&r, c, f->name, f->flags, ro, 0) < 0) return;
    lua_State *L = function_lua();
    lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_REG_ERRH);
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
    script_run_call(&r, L, c->argv + 3, (int)nk, c->argv + 3 + nk, c->argc - 3 - (int)nk);
    script_run_end(&r);
}

void cmd_fcall(client *c)
{
    fcall_generic(c, 0);
}

void cmd_fcall_ro(client *c)
{
    fcall_generic(c, 1);
}

/* ---- FUNCTION ------------------------------------------------------------------ */

static const char *function_help[] = {
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using "
    "FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore "
    "policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
    "replace "
    "the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of "
    "failure",
    "      in case of functions name collision with another library).",
    NULL};

static void function_load_cmd(client *c)
{
    int replace = 0, pos = 2;
    while (pos < c->argc - 1) {
        const arg *a = &c->argv[pos++];
        if (arg_is(a, "replace")) {
            replace = 1;
            continue;
        }
        add_reply_error_fmt(c, "Unknown option given: %s", a->ptr);
        return;
    }
    if (pos >= c->argc) {
        add_reply_error(c, "Function code is missing");
        return;
    }
    char *err = NULL;
    char *name =
        function_load(c, c->argv[pos].ptr, c->argv[pos].len, replace, LOAD_TIMEOUT_MS, &err);
    if (!name) {
        add_reply_error(c, err ? err : "Function load failed");
        free(err);
        return;
    }
    add_reply_bulk_cstr(c, name);
    free(name);
}

static void reply_flags(client *c, int flags)
{
    int n = 0;
    for (const script_flag_name *f = script_flag_names; f->name; f++)
        if (flags & f->flag) n++;
    add_reply_set_len(c, n);
    for (const script_flag_name *f = script_flag_names; f->name; f++)
        if (flags & f->flag) add_reply_status(c, f->name);
}

static void reply_library(client *c, const fn_lib *lib, int with_code)
{
    add_reply_map_len(c, with_code ? 4 : 3);
    add_reply_bulk_cstr(c, "library_name");
    add_reply_bulk_cstr(c, lib->name);
    add_reply_bulk_cstr(c, "engine");
    add_reply_bulk_cstr(c, "LUA");
    add_reply_bulk_cstr(c, "functions");
    add_reply_array_len(c, lib->nfns);
    for (int i = 0; i < lib->nfns; i++) {
        const fn_info *f = lib->fns[i];
        add_reply_map_len(c, 3);
        add_reply_bulk_cstr(c, "name");
        add_reply_bulk_cstr(c, f->name);
        add_reply_bulk_cstr(c, "description");
        add_reply_bulk_cstr(c, f->desc); /* NULL: null */
        add_reply_bulk_cstr(c, "flags");
        reply_flags(c, f->flags);
    }
    if (with_code) {
        add_reply_bulk_cstr(c, "library_code");
        add_reply_bulk(c, lib->code, lib->code_len);
    }
}

static void function_list_cmd(client *c)
{
    int with_code = 0;
    const arg *pattern = NULL;
    for (int i = 2; i < c->argc; i++) {
        const arg *a = &c->argv[i];
        if (!with_code && arg_is(a, "withcode")) {
            with_code = 1;
            continue;
        }
        if (!pattern && arg_is(a, "libraryname")) {
            if (i >= c->argc - 1) {
                add_reply_error(c, "library name argument was not given");
                return;
            }
            pattern = &c->argv[++i];
            continue;
        }
        add_reply_error_fmt(c, "Unknown argument %s", a->ptr);
        return;
    }
    size_t n;
    fn_lib **libs = function_libs(&n);
    long shown = 0;
    for (size_t i = 0; i < n; i++)
        if (!pattern ||
            ks_glob_match(pattern->ptr, pattern->len, libs[i]->name, strlen(libs[i]->name), 1))
            shown++;
    add_reply_array_len(c, shown);
    for (size_t i = 0; i < n; i++)
        if (!pattern ||
            ks_glob_match(pattern->ptr, pattern->len, libs[i]->name, strlen(libs[i]->name), 1))
            reply_library(c, libs[i], with_code);
}

static void function_stats_cmd(client *c)
{
    script_run *r = script_current();
    if (r && r->eval) {
        script_reply_busy(c);
        return;
    }
    add_reply_map_len(c, 2);
    add_reply_bulk_cstr(c, "running_script");
    if (!r) {
        add_reply_null(c);
    } else {
        add_reply_map_len(c, 3);
        add_reply_bulk_cstr(c, "name");
        add_reply_bulk_cstr(c, r->name);
        add_reply_bulk_cstr(c, "command");
        add_reply_array_len(c, r->caller->argc);
        for (int i = 0; i < r->caller->argc; i++)
            add_reply_bulk(c, r->caller->argv[i].ptr, r->caller->argv[i].len);
        add_reply_bulk_cstr(c, "duration_ms");
        add_reply_long_long(c, script_run_duration_ms(r));
    }
    add_reply_bulk_cstr(c, "engines");
    add_reply_map_len(c, 1);
    add_reply_bulk_cstr(c, "LUA");
    add_reply_map_len(c, 2);
    add_reply_bulk_cstr(c, "libraries_count");
    add_reply_long_long(c, (long long)function_lib_count());
    add_reply_bulk_cstr(c, "functions_count");
    add_reply_long_long(c, (long long)function_count());
}

void cmd_function(client *c)
{
    static const subcmd subs[] = {{"load", -3}, {"list", -2}, {"delete", 3}, {"flush", -2},
                                  {"stats", 2}, {"kill", 2},  {"dump", 2},   {"restore", -3},
                                  {"help", 2},  {NULL, 0}};
    const subcmd *s = script_subcommand(c, subs);
    if (!s) return;
    if (script_timedout() && strcmp(s->name, "kill") != 0 && strcmp(s->name, "stats") != 0) {
        script_reply_busy(c);
        return;
    }
    const char *n = s->name;
    if (!strcmp(n, "load")) {
        function_load_cmd(c);
    } else if (!strcmp(n, "list")) {
        function_list_cmd(c);
    } else if (!strcmp(n, "delete")) {
        fn_lib *lib = function_lib_find(c->argv[2].ptr, c->argv[2].len);
        if (!lib) {
            add_reply_error(c, "Library not found");
            return;
        }
        function_delete(c, lib, 1);
        add_reply_ok(c);
    } else if (!strcmp(n, "flush")) {
        if (c->argc > 3) {
            add_reply_error_fmt(c,
                                "unknown subcommand or wrong number of arguments for '%s'. "
                                "Try FUNCTION HELP.",
                                c->argv[1].ptr);
            return;
        }
        if (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async")) {
            add_reply_error(c, "FUNCTION FLUSH only supports SYNC|ASYNC option");
            return;
        }
        function_flush(c, 1);
        add_reply_ok(c);
    } else if (!strcmp(n, "stats")) {
        function_stats_cmd(c);
    } else if (!strcmp(n, "kill")) {
        script_kill(c, 0);
    } else if (!strcmp(n, "dump")) {
        function_dump_cmd(c);
    } else if (!strcmp(n, "restore")) {
        function_restore_cmd(c);
    } else {
        add_reply_help(c, function_help);
    }
}
