/*
 * script.h -- Lua scripting: EVAL/EVALSHA and Redis 7 functions (FUNCTION,
 * FCALL), on Lua 5.1 as Redis runs it.
 *
 * Files:
 *   script_lua.c      a sandboxed interpreter: libraries, read-only globals,
 *                     the redis.* API that needs no running script
 *   script_run.c      running one script: the run context, redis.call through
 *                     the command table on the script client, the busy hook
 *                     (BUSY for others, SCRIPT KILL / FUNCTION KILL)
 *   script_conv.c     the type conversions: a command's reply -> Lua, the
 *                     script's return value -> the caller's reply
 *   cmd_script.c      EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT
 *   function.c        function libraries: load, registry, persistence
 *   cmd_function.c    FUNCTION, FCALL, FCALL_RO
 *   lua_struct.c, lua_cmsgpack.c, script_util.c   struct, cmsgpack, SHA1 and
 *                     the PRNG behind math.random
 *
 * Atomicity (Invariant SC1): a script runs inside its caller's command, on
 * the command thread; every command it calls writes into server.batch (the
 * caller's command batch, or EXEC's), which the dispatcher hands to the
 * engine as one record after the script returns. Other clients' commands
 * do not run in between: past busy-reply-threshold the loop serves events
 * from the script's hook, but only CMD_ALLOW_BUSY commands run then, none
 * of which touches the keyspace, and nothing of the script's batch is
 * written or acknowledged before the script ends.
 *
 * Threading: command thread only, like the rest of the server.
 */
#ifndef STRATA_SCRIPT_H
#define STRATA_SCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "server/server.h"

/* ---- For the server core ----------------------------------------------- */

/* Creates the interpreters and loads the function libraries stored in the
 * engine. Returns 0, or -1 with the reason logged. REQUIRES: the keyspace
 * is open. */
int script_init(void);
void script_free_all(void);
int script_running(void);  /* a script runs now */
int script_timedout(void); /* ... and is past busy-reply-threshold */
/* The BUSY error for the running script (names SCRIPT KILL or FUNCTION
 * KILL as Redis does). */
void script_reply_busy(client *c);
/* The BUSY error text for the script running now (SCRIPT or FUNCTION KILL). */
const char *script_busy_text(void);
/* SHUTDOWN while a script is busy: without NOSAVE it is refused with BUSY
 * (returns -1, reply sent); with NOSAVE the script is stopped and its
 * writes are dropped (returns 0). */
int script_shutdown_check(client *c, int nosave);
/* The scripting lines of INFO memory ("used_memory_lua:..\r\n..."). */
void script_info_memory(char *buf, size_t cap);

/* ---- Shared by the scripting files --------------------------------------- */

typedef struct lua_State lua_State;

/* Script flags: shebang `flags=` in EVAL, `flags` of a registered function. */
enum {
    SCRIPT_FLAG_NO_WRITES = 1 << 0,
    SCRIPT_FLAG_ALLOW_OOM = 1 << 1,
    SCRIPT_FLAG_ALLOW_STALE = 1 << 2,
    SCRIPT_FLAG_NO_CLUSTER = 1 << 3,
    SCRIPT_FLAG_ALLOW_CROSS_SLOT = 1 << 4,
    SCRIPT_FLAG_EVAL_COMPAT = 1 << 5, /* EVAL without shebang */
};
typedef struct script_flag_name {
    int flag;
    const char *name;
} script_flag_name;
extern const script_flag_name script_flag_names[]; /* ends with {0, NULL} */

/* script_util.c */
void script_sha1hex(char out[41], const char *p, size_t n);
/* The 20-byte SHA1 of p[0..n) (DEBUG DIGEST's building block). */
void script_sha1(unsigned char out[20], const void *p, size_t n);
/* d[0..n) as 2n lower-case hex digits and a NUL into out. */
void script_hex(char *out, const unsigned char *d, size_t n);
int32_t script_rand48(void);
void script_srand48(int32_t seed);
#define SCRIPT_RAND48_MAX 2147483647

/* script_lua.c: interpreters. An interpreter keeps, in its registry,
 * SCRIPT_REG_GLOBALS (the real globals table, which scripts never see: they
 * see a read-only proxy of it), SCRIPT_REG_GLOBALS_MT (the proxy's
 * metatable, whose __index functions.c points at the load-time API while a
 * library loads) and SCRIPT_REG_ERRH (the error handler script_run passes
 * to lua_pcall). */
#define SCRIPT_REG_GLOBALS "strata.globals"
#define SCRIPT_REG_GLOBALS_MT "strata.globals_mt"
#define SCRIPT_REG_ERRH "strata.errh"
enum { SCRIPT_LUA_EVAL = 0, SCRIPT_LUA_FUNCTIONS = 1 };
/* A new interpreter with Redis's libraries, sandbox and redis table; for
 * SCRIPT_LUA_FUNCTIONS also redis.register_function's load-time API
 * (register_fn, see function.c). Returns NULL when out of memory. */
lua_State *script_lua_new(int kind, int (*register_fn)(lua_State *L));
/* Makes the table on top of the stack read-only: replaces it by a proxy. */
void script_lua_protect(lua_State *L);
/* Pushes the Redis error table {err = "<CODE> <msg>"} for msg as
 * luaPushError does: "-CODE msg" keeps the code, else ERR is prepended;
 * a trailing CR/LF is cut. */
void script_push_error(lua_State *L, const char *msg);
/* Reads the error object on top of the stack: err (malloc'd message,
 * "ERR <text>" for a plain string), source and line (NULL when absent). */
typedef struct script_err {
    char *msg, *source, *line;
    int no_stats; /* ignore_error_stats_update: the error was counted when a call replied it */
} script_err;
void script_err_read(lua_State *L, script_err *e);
void script_err_free(script_err *e);
/* Memory the interpreter uses, in bytes. */
size_t script_lua_memory(lua_State *L);

/* script_conv.c */
/* Pushes the Lua value of the RESP reply p[0..n) (one reply). */
void script_reply_to_lua(lua_State *L, const char *p, size_t n);
/* Pops the value on top of the stack and replies it to c; script_resp is
 * the protocol the script chose with redis.setresp (booleans differ). */
void script_lua_to_reply(client *c, int script_resp, lua_State *L);

/* script_run.c: one run. */
typedef struct script_run {
    client *caller;
    const char *name; /* sha for EVAL, function name for FCALL */
    int eval;         /* EVAL (vs FCALL): texts of BUSY and KILL */
    int readonly;     /* *_RO or no-writes: write commands refused */
    int write_dirty;  /* a write command was called: SCRIPT KILL refused */
    int timedout, killed;
    int64_t start_ms; /* monotonic */
} script_run;
/* The run in progress, or NULL. */
script_run *script_current(void);
/* Checks the script flags against the call (EVAL_RO of a script that may
 * write, ...) and starts the run: replies the error and returns -1, or
 * returns 0. REQUIRES: no script runs. */
int script_run_begin(script_run *r, client *caller, const char *name, int flags, int ro, int eval);
/* Calls the function on top of the stack, above the error handler, with
 * KEYS and ARGV (as globals for EVAL, as its two arguments for FCALL),
 * replies its result or error to the caller and pops both. */
void script_run_call(script_run *r, lua_State *L, const arg *keys, int nkeys, const arg *args,
                     int nargs);
void script_run_end(script_run *r);
int64_t script_run_duration_ms(const script_run *r);
/* redis.call / redis.pcall / redis.setresp / redis.set_repl, registered by
 * script_lua.c. */
int script_lua_call(lua_State *L);
int script_lua_pcall(lua_State *L);
int script_lua_acl_check_cmd(lua_State *L);
int script_lua_setresp(lua_State *L);
int script_lua_set_repl(lua_State *L);
/* SCRIPT KILL (eval) / FUNCTION KILL. */
void script_kill(client *c, int eval);

/* cmd_script.c / function.c: counts and memory for INFO. */
size_t script_eval_count(void);
size_t script_eval_body_bytes(void);
size_t script_eval_vm_bytes(void);
size_t function_count(void);
size_t function_lib_count(void);
size_t function_bytes(void);
size_t function_vm_bytes(void);
/* function.c: loads the libraries stored in the engine. */
int function_init(void);
void function_free_all(void);
/* cmd_script.c: numkeys of EVAL/FCALL (argv[2]): replies Redis's error
 * (not_int_err, NULL: the not-an-integer text) and returns -1. */
int script_numkeys(client *c, long long *nk, const char *not_int_err);
/* A subcommand's name and arity (as COMMAND's, counting the container). */
typedef struct subcmd {
    const char *name;
    int arity;
} subcmd;
/* Finds argv[1] in subs (ended by a NULL name); replies the
 * unknown-subcommand or arity error and returns NULL when it does not fit. */
const subcmd *script_subcommand(client *c, const subcmd *subs);
/* cmd_script.c: parses the shebang of an EVAL body into *flags and the
 * length of the first line to skip (0 without shebang). Returns 0, or -1
 * with *err set (malloc'd). */
int script_parse_shebang(const char *body, size_t len, int *flags, size_t *skip, char **err);
/* The flags of the cached script with this sha (any case): 1, or 0 when
 * it is not cached. */
int script_cached_flags(const char *sha, size_t len, int *flags);

#endif
