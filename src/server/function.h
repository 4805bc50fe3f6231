/*
 * function.h -- Redis 7 function libraries (function.c), for the FUNCTION
 * and FCALL handlers (cmd_function.c).
 *
 * A library is the source given to FUNCTION LOAD ("#!lua name=<lib>" and
 * Lua code that calls redis.register_function); running its body once in
 * the functions interpreter registers its functions. Libraries persist:
 * each is stored in the engine as the server record 'S' 'F' <name> ->
 * source (keyspace.h, ks_sysrec_*), written into the batch of the command
 * that changes it, and loaded again at start (function_init).
 *
 * Function names are looked up case-insensitively across libraries (as
 * Redis's dict); library names are case-sensitive. Libraries keep their
 * load order, functions their registration order. Command thread only.
 */
#ifndef STRATA_FUNCTION_H
#define STRATA_FUNCTION_H

#include <stddef.h>

#include "server/script.h"

typedef struct fn_lib fn_lib;

typedef struct fn_info {
    char *name;
    char *desc; /* NULL: none */
    int flags;  /* SCRIPT_FLAG_* */
    int ref;    /* the callback, in the functions interpreter's registry */
    fn_lib *lib;
    struct fn_info *hnext; /* in the name hash */
} fn_info;

struct fn_lib {
    char *name;
    char *code; /* the whole source, first line included */
    size_t code_len;
    fn_info **fns;
    int nfns, cap;
};

/* The libraries in load order: *n of them. */
fn_lib **function_libs(size_t *n);
fn_info *function_find(const char *name, size_t len);
fn_lib *function_lib_find(const char *name, size_t len);
lua_State *function_lua(void);

/* Compiles and registers a library from code; with replace an existing
 * library of the same name is replaced. On success the library is linked
 * and stored in c's batch, and its name (malloc'd) returned; on failure
 * nothing changes and *err (malloc'd) says why. timeout_ms bounds the
 * body's run (0: none). */
char *function_load(client *c, const char *code, size_t len, int replace, int timeout_ms,
                    char **err);
/* Unlinks and frees a library; with store, deletes its record in c's batch. */
void function_delete(client *c, fn_lib *lib, int store);
/* Deletes every library (and with store, their records). */
void function_flush(client *c, int store);

/* FUNCTION RESTORE: loads the n library sources code[i] (len[i] bytes)
 * all or nothing. flush drops the existing libraries first; replace lets a
 * payload library replace an existing one of the same name; otherwise a
 * name clash fails. Stores the result in c's batch. Returns 0, or -1 with
 * *err (malloc'd) and nothing changed. */
int function_restore_libraries(client *c, char **code, size_t *len, int n, int flush, int replace,
                               char **err);
/* function_dump.c */
void function_dump_cmd(client *c);
void function_restore_cmd(client *c);

#endif
