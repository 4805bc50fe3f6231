/*
 * cmd_script.c -- EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, and the
 * script cache.
 *
 * The cache maps the SHA1 of a body to the body and its shebang flags;
 * the compiled chunk lives in the EVAL interpreter's registry under
 * "f_<sha>". Like Redis's, it lives until SCRIPT FLUSH or a restart (it is
 * not stored). SCRIPT FLUSH closes the interpreter and starts a new one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>
#include <lua.h>

#include "server/config.h"
#include "server/script.h"

typedef struct cached_script {
    struct cached_script *next;
    char sha[41];
    int flags;
    char *body;
    size_t len;
} cached_script;

#define CACHE_SLOTS_MIN 64

static lua_State *eval_lua;
static cached_script **slots;
static size_t nslots, nscripts, body_bytes;

static size_t slot_of(const char *sha)
{
    size_t h = 0;
    for (int i = 0; i < 16; i++) /* hex digits of a hash: already uniform */
        h = h * 16 + (size_t)(sha[i] <= '9' ? sha[i] - '0' : sha[i] - 'a' + 10);
    return h & (nslots - 1);
}

/* sha: 40 lower-case hex digits. */
static cached_script *cache_find(const char *sha)
{
    if (!nslots) return NULL;
    for (cached_script *s = slots[slot_of(sha)]; s; s = s->next)
        if (memcmp(s->sha, sha, 40) == 0) return s;
    return NULL;
}

int script_cached_flags(const char *sha, size_t len, int *flags)
{
    char lower[41];
    if (len != 40) return 0;
    for (int i = 0; i < 40; i++)
        lower[i] = (char)(sha[i] >= 'A' && sha[i] <= 'Z' ? sha[i] + 32 : sha[i]);
    lower[40] = '\0';
    const cached_script *s = cache_find(lower);
    if (s) *flags = s->flags;
    return s != NULL;
}

static void cache_grow(void)
{
    size_t old = nslots;
    cached_script **os = slots;
    nslots = nslots ? nslots * 2 : CACHE_SLOTS_MIN;
    slots = calloc(nslots, sizeof(*slots));
    if (!slots) abort();
    for (size_t i = 0; i < old; i++) {
        for (cached_script *s = os[i], *n; s; s = n) {
            n = s->next;
            s->next = slots[slot_of(s->sha)];
            slots[slot_of(s->sha)] = s;
        }
    }
    free(os);
}

static void cache_clear(void)
{
    for (size_t i = 0; i < nslots; i++) {
        for (cached_script *s = slots[i], *n; s; s = n) {
            n = s->next;
            free(s->body);
            free(s);
        }
    }
    free(slots);
    slots = NULL;
    nslots = nscripts = body_bytes = 0;
}

static int eval_lua_reset(void)
{
    if (eval_lua) lua_close(eval_lua);
    eval_lua = script_lua_new(SCRIPT_LUA_EVAL, NULL);
    return eval_lua ? 0 : -1;
}

int script_init(void)
{
    if (eval_lua_reset() < 0) {
        server_log(LL_WARNING, "Can't create the Lua interpreter");
        return -1;
    }
    return function_init();
}

void script_free_all(void)
{
    cache_clear();
    if (eval_lua) lua_close(eval_lua);
    eval_lua = NULL;
    function_free_all();
}

size_t script_eval_count(void)
{
    return nscripts;
}

size_t script_eval_body_bytes(void)
{
    return body_bytes + nscripts * sizeof(cached_script) + nslots * sizeof(cached_script *);
}

size_t script_eval_vm_bytes(void)
{
    return script_lua_memory(eval_lua);
}

/* ---- Shebang --------------------------------------------------------------- */

static char *msgf(const char *fmt, const char *a)
{
    size_t n = strlen(fmt) + strlen(a) + 1;
    char *m = malloc(n);
    if (m) snprintf(m, n, fmt, a);
    return m;
}

/* One `flags=a,b` list into *flags; returns 0 or -1 with *err. */
static int parse_flag_list(const char *list, int *flags, char **err)
{
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const script_flag_name *f;
        for (f = script_flag_names; f->name; f++)
            if (strlen(f->name) == n && memcmp(f->name, p, n) == 0) break;
        if (!f->name) {
            char *name = strndup(p, n);
            *err = msgf("Unexpected flag in script shebang: %s", name ? name : "");
            free(name);
            return -1;
        }
        *flags |= f->flag;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

int script_parse_shebang(const char *body, size_t len, int *flags, size_t *skip, char **err)
{
    *flags = SCRIPT_FLAG_EVAL_COMPAT;
    *skip = 0;
    if (len < 2 || body[0] != '#' || body[1] != '!') return 0;
    const char *nl = memchr(body, '\n', len);
    if (!nl) {
        *err = strdup("Invalid script shebang");
        return -1;
    }
    char *line = strndup(body, (size_t)(nl - body));
    char **parts = NULL;
    int n = line ? config_split_args(line, &parts) : -1;
    free(line);
    int rc = -1;
    if (n <= 0) {
        *err = strdup("Invalid engine in script shebang");
        goto done;
    }
    if (strcmp(parts[0], "#!lua") != 0) {
        *err = msgf("Unexpected engine in script shebang: %s", parts[0]);
        goto done;
    }
    *flags = 0;
    for (int j = 1; j < n; j++) {
        if (strncmp(parts[j], "flags=", 6) == 0) {
            if (parse_flag_list(parts[j] + 6, flags, err) < 0) goto done;
        } else {
            *err = msgf("Unknown lua shebang option: %s", parts[j]);
            goto done;
        }
    }
    *skip = (size_t)(nl - body);
    rc = 0;
done:
    if (n > 0) config_free_args(parts, n);
    return rc;
}

/* ---- Compiling ---------------------------------------------------------------- */

/* Adds body to the cache and compiles it (a body already cached is found,
 * not compiled again). Returns the entry, or NULL after replying the
 * error to c. */
static cached_script *script_create(client *c, const char *body, size_t len)
{
    char sha[41];
    script_sha1hex(sha, body, len);
    cached_script *s = cache_find(sha);
    if (s) return s;
    int flags;
    size_t skip;
    char *err = NULL;
    if (script_parse_shebang(body, len, &flags, &skip, &err) < 0) {
        add_reply_error(c, err ? err : "Invalid script shebang");
        free(err);
        return NULL;
    }
    /* The shebang line is skipped but its newline kept: line numbers stay. */
    if (luaL_loadbuffer(eval_lua, body + skip, len - skip, "@user_script")) {
        add_reply_error_fmt(c, "Error compiling script (new function): %s",
                            lua_tostring(eval_lua, -1));
        lua_pop(eval_lua, 1);
        return NULL;
    }
    char fname[43] = "f_";
    memcpy(fname + 2, sha, 41);
    lua_setfield(eval_lua, LUA_REGISTRYINDEX, fname);
    s = calloc(1, sizeof(*s));
    if (!s || !(s->body = malloc(len ? len : 1))) abort();
    memcpy(s->sha, sha, 41);
    memcpy(s->body, body, len);
    s->len = len;
    s->flags = flags;
    if (nscripts >= nslots) cache_grow();
    size_t i = slot_of(sha);
    s->next = slots[i];
    slots[i] = s;
    nscripts++;
    body_bytes += len + 41;
    return s;
}

/* ---- EVAL ----------------------------------------------------------------------- */

int script_numkeys(client *c, long long *nk, const char *not_int_err)
{
    if (!ks_string2ll(c->argv[2].ptr, c->argv[2].len, nk)) {
        add_reply_error(c, not_int_err ? not_int_err : ERR_NOT_INTEGER);
        return -1;
    }
    if (*nk > c->argc - 3) {
        add_reply_error(c, "Number of keys can't be greater than number of args");
        return -1;
    }
    if (*nk < 0) {
        add_reply_error(c, "Number of keys can't be negative");
        return -1;
    }
    return 0;
}

static void eval_generic(client *c, int evalsha, int ro)
{
    long long nk;
    char sha[41];
    if (evalsha) {
        if (c->argv[1].len != 40) {
            add_reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
            return;
        }
        for (int i = 0; i < 40; i++) {
            char ch = c->argv[1].ptr[i];
            sha[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
        }
        sha[40] = '\0';
    }
    if (script_numkeys(c, &nk, NULL) < 0) return;
    cached_script *s;
    if (evalsha) {
        s = cache_find(sha);
        if (!s) {
            add_reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
            return;
        }
    } else {
        s = script_create(c, c->argv[1].ptr, c->argv[1].len);
        if (!s) return;
    }
    lua_State *L = eval_lua;
    lua_getfield(L, LUA_REGISTRYINDEX, SCRIPT_REG_ERRH);
    char fname[43] = "f_";
    memcpy(fname + 2, s->sha, 41);
    lua_getfield(L, LUA_REGISTRYINDEX, fname);
    script_run r;
    if (script_run_begin(&r, c, s->sha, s->flags, ro, 1) < 0) {
        lua_pop(L, 2);
        return;
    }
    script_run_call(&r, L, c->argv + 3, (int)nk, c->argv + 3 + nk, c->argc - 3 - (int)nk);
    script_run_end(&r);
}

void cmd_eval(client *c)
{
    eval_generic(c, 0, 0);
}

void cmd_evalsha(client *c)
{
    eval_generic(c, 1, 0);
}

void cmd_eval_ro(client *c)
{
    eval_generic(c, 0, 1);
}

void cmd_evalsha_ro(client *c)
{
    eval_generic(c, 1, 1);
}

/* ---- SCRIPT ----------------------------------------------------------------------- */

static const char *script_help[] = {
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    NULL};

const subcmd *script_subcommand(client *c, const subcmd *subs)
{
    for (const subcmd *s = subs; s->name; s++) {
        if (!arg_is(&c->argv[1], s->name)) continue;
        if ((s->arity > 0 && c->argc != s->arity) || c->argc < -s->arity) {
            add_reply_subcommand_arity(c);
            return NULL;
        }
        return s;
    }
    add_reply_subcommand_error(c);
    return NULL;
}

void cmd_script(client *c)
{
    static const subcmd subs[] = {{"help", 2}, {"flush", -2}, {"exists", -3}, {"load", 3},
                                  {"kill", 2}, {"debug", 3},  {NULL, 0}};
    const subcmd *s = script_subcommand(c, subs);
    if (!s) return;
    if (script_timedout() && strcmp(s->name, "kill") != 0) {
        script_reply_busy(c);
        return;
    }
    if (!strcmp(s->name, "help")) {
        add_reply_help(c, script_help);
    } else if (!strcmp(s->name, "flush")) {
        if (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async")) {
            add_reply_error(c, "SCRIPT FLUSH only support SYNC|ASYNC option");
            return;
        }
        if (c->argc > 3) {
            add_reply_error(c, "SCRIPT FLUSH only support SYNC|ASYNC option");
            return;
        }
        cache_clear();
        if (eval_lua_reset() < 0) abort();
        add_reply_ok(c);
    } else if (!strcmp(s->name, "exists")) {
        add_reply_array_len(c, c->argc - 2);
        for (int j = 2; j < c->argc; j++) {
            char sha[41];
            int ok = c->argv[j].len == 40;
            for (int i = 0; ok && i < 40; i++) {
                char ch = c->argv[j].ptr[i];
                sha[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
            }
            add_reply_long_long(c, ok && cache_find(sha) ? 1 : 0);
        }
    } else if (!strcmp(s->name, "load")) {
        cached_script *cs = script_create(c, c->argv[2].ptr, c->argv[2].len);
        if (cs) add_reply_bulk(c, cs->sha, 40);
    } else if (!strcmp(s->name, "kill")) {
        script_kill(c, 1);
    } else { /* debug: there is no debugger */
        if (arg_is(&c->argv[2], "no"))
            add_reply_ok(c);
        else if (arg_is(&c->argv[2], "yes") || arg_is(&c->argv[2], "sync"))
            add_reply_error(c, "SCRIPT DEBUG is not supported by this server");
        else
            add_reply_error(c, "Use SCRIPT DEBUG YES/SYNC/NO");
    }
}

/* ---- INFO memory ---------------------------------------------------------------- */

/* As Redis's bytesToHuman: 1023B, 1.00K, 2.50M ... */
static void human(char *out, size_t cap, unsigned long long n)
{
    static const char units[] = "KMGTP";
    if (n < 1024) {
        snprintf(out, cap, "%lluB", n);
        return;
    }
    double d = (double)n / 1024;
    int u = 0;
    while (d >= 1024 && u < 4) {
        d /= 1024;
        u++;
    }
    snprintf(out, cap, "%.2f%c", d, units[u]);
}

void script_info_memory(char *buf, size_t cap)
{
    unsigned long long eval_vm = script_eval_vm_bytes(), fn_vm = function_vm_bytes();
    unsigned long long eval_mem = script_eval_body_bytes(), fn_mem = function_bytes();
    char h_lua[32], h_vm[32], h_scripts[32];
    human(h_lua, sizeof(h_lua), eval_vm);
    human(h_vm, sizeof(h_vm), eval_vm + fn_vm);
    human(h_scripts, sizeof(h_scripts), eval_mem + fn_mem);
    snprintf(buf, cap,
             "used_memory_lua:%llu\r\nused_memory_vm_eval:%llu\r\nused_memory_lua_human:%s\r\n"
             "used_memory_scripts_eval:%llu\r\nnumber_of_cached_scripts:%zu\r\n"
             "number_of_functions:%zu\r\nnumber_of_libraries:%zu\r\n"
             "used_memory_vm_functions:%llu\r\nused_memory_vm_total:%llu\r\n"
             "used_memory_vm_total_human:%s\r\nused_memory_functions:%llu\r\n"
             "used_memory_scripts:%llu\r\nused_memory_scripts_human:%s\r\n",
             eval_vm, eval_vm, h_lua, eval_mem, script_eval_count(), function_count(),
             function_lib_count(), fn_vm, eval_vm + fn_vm, h_vm, fn_mem, eval_mem + fn_mem,
             h_scripts);
}
