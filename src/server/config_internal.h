/*
 * config_internal.h -- the settings table's row layout, shared by
 * config_table.c (the rows and their hooks) and config.c (parsing, CONFIG
 * GET/SET, the config file). Nothing outside those two files includes it.
 */
#ifndef STRATA_CONFIG_INTERNAL_H
#define STRATA_CONFIG_INTERNAL_H

#include <stddef.h>

enum { T_BOOL, T_INT, T_MEM, T_STR, T_ENUM, T_LL, T_SPECIAL, T_OBUF };
/* F_REDIS_IMMUTABLE: immutable in Redis too, where CONFIG SET refuses even
 * the current value; other immutable settings (those Redis can change at
 * run time, and strata's own) accept their current value as a no-op. */
/* F_HIDDEN: left out of CONFIG GET patterns, shown when named exactly
 * (Redis's HIDDEN_CONFIG, test hooks). F_PERCENT: a T_MEM that also takes
 * "N%", stored as -N (Redis's PERCENT_CONFIG, bounded by min = -100). */
enum {
    F_IMMUTABLE = 1,
    F_SENSITIVE = 2,
    F_REDIS_IMMUTABLE = 4,
    F_HIDDEN = 8,
    F_PERCENT = 16,
    F_PROTECTED = 32 /* enable-protected-configs decides */
};

typedef struct config_enum {
    const char *name;
    int val;
} config_enum;

typedef struct config_row {
    const char *name;
    int type, flags;
    void *ptr;
    const char *def;
    long long min, max;
    const config_enum *enums;
    void (*apply)(void);
    /* T_SPECIAL: parse and store argv (the words of the value); 0 or -1
     * with *err set (a static string), leaving the setting unchanged.
     * Other types: applies a new run-time value before it is stored, and
     * may refuse it the same way (Redis's apply functions that fail). */
    int (*set)(const char *const *argv, int argc, const char **err);
    void (*get)(char *buf, size_t cap);
} config_row;

/* Every setting, in the order CONFIG GET and CONFIG REWRITE list them.
 * Read-only; owned by config_table.c. */
extern const config_row config_table[];
extern const size_t config_nrows;

/* Each setting's default as config_get_value prints it (CONFIG REWRITE
 * leaves settings at their default out of the file), one per row of
 * config_table; malloc'd strings set by config_init_defaults, command
 * thread only. */
extern char *config_default_text[];

/* notify-keyspace-events' value as CONFIG GET prints it into buf (cap
 * bytes); config_each compares a row's getter with it to quote the flags
 * as a string in CONFIG REWRITE. Command thread. */
void config_get_notify(char *buf, size_t cap);

#endif
