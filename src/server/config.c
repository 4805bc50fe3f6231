/*
 * config.c -- config file reader, CONFIG GET/SET; see config.h for the
 * file format.
 *
 * Every setting is one row of config_table (config_table.c): name, type,
 * where its value lives, default, bounds, whether it can change at
 * runtime, and an apply hook for settings whose change must reach another
 * part of the server (appendfsync -> the engine, port -> new listening
 * sockets). Immutable settings (bind, dir, databases, cache-size, ...) are
 * read once at startup.
 */
#include "server/config.h"
#include "server/config_internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/acl.h"
#include "server/resp_parser.h"
#include "server/server.h"

server_config cfg;

static const config_row *find_row(const char *name)
{
    for (size_t i = 0; i < config_nrows; i++)
        if (strcasecmp(config_table[i].name, name) == 0) return &config_table[i];
    return NULL;
}

int config_parse_memory(const char *s, long long *out)
{
    char *end;
    errno = 0;
    if (!*s || isspace((unsigned char)*s)) return -1;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s) return -1;
    long long mul = 1;
    if (!strcasecmp(end, ""))
        mul = 1;
    else if (!strcasecmp(end, "b"))
        mul = 1;
    else if (!strcasecmp(end, "k"))
        mul = 1000;
    else if (!strcasecmp(end, "kb"))
        mul = 1024;
    else if (!strcasecmp(end, "m"))
        mul = 1000 * 1000;
    else if (!strcasecmp(end, "mb"))
        mul = 1024 * 1024;
    else if (!strcasecmp(end, "g"))
        mul = 1000LL * 1000 * 1000;
    else if (!strcasecmp(end, "gb"))
        mul = 1024LL * 1024 * 1024;
    else
        return -1;
    if (v < 0 || (v > 0 && mul > LLONG_MAX / v)) return -1;
    *out = v * mul;
    return 0;
}

static char *fmt_err(const char *fmt, const char *a)
{
    char buf[512];
    snprintf(buf, sizeof(buf), fmt, a);
    return strdup(buf);
}

/* Parses value for row into *tmp without changing the setting. */
static int parse_value(const config_row *r, const char *v, long long *num, char **err)
{
    switch (r->type) {
    case T_BOOL:
        if (!strcasecmp(v, "yes"))
            *num = 1;
        else if (!strcasecmp(v, "no"))
            *num = 0;
        else
            return *err = strdup("argument must be 'yes' or 'no'"), -1;
        return 0;
    case T_INT:
    case T_LL:
    case T_MEM: {
        char *end;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        size_t vl = strlen(v);
        if ((r->flags & F_PERCENT) && vl > 1 && v[vl - 1] == '%' && ks_string2ll(v, vl - 1, &x) &&
            x >= 0) {
            if (-x < r->min) {
                char buf[96];
                snprintf(buf, sizeof(buf), "percentage argument must be less or equal to %lld",
                         -r->min);
                return *err = strdup(buf), -1;
            }
            return *num = -x, 0;
        } else if (r->type == T_MEM) {
            if (config_parse_memory(v, &x) < 0)
                return *err = strdup((r->flags & F_PERCENT)
                                         ? "argument must be a memory or percent value"
                                         : "argument must be a memory value"),
                       -1;
            if ((r->flags & F_PERCENT) && x < 0) x = LLONG_MAX; /* no negative bytes */
        } else if (errno || !*v || *end) {
            return *err = strdup("argument couldn't be parsed into an integer"), -1;
        }
        if (x < r->min || x > r->max) {
            char buf[128];
            snprintf(buf, sizeof(buf), "argument must be between %lld and %lld inclusive", r->min,
                     r->max);
            return *err = strdup(buf), -1;
        }
        *num = x;
        return 0;
    }
    case T_ENUM:
        for (const config_enum *e = r->enums; e->name; e++)
            if (!strcasecmp(e->name, v)) return *num = e->val, 0;
        {
            char buf[256] = "argument(s) must be one of the following: ";
            for (const config_enum *e = r->enums; e->name; e++) {
                strcat(buf, e->name);
                if (e[1].name) strcat(buf, ", ");
            }
            *err = strdup(buf);
        }
        return -1;
    }
    return 0;
}

/* A special setting's words: the file's arguments, or the one CONFIG SET
 * value split as the file would be. Sets *why on a failure. */
static void set_special(const config_row *r, const char *const *argv, int argc, char **why)
{
    char **words = NULL;
    int n = argc;
    const char *e = NULL;
    if (argc == 1) {
        n = config_split_args(argv[0], &words);
        if (n < 0) {
            *why = strdup("unbalanced quotes in configuration line");
            return;
        }
        if (n == 0) { /* "" is a value of its own (no classes, no percentiles) */
            static const char *const empty[1] = {""};
            if (r->set(empty, 1, &e) < 0) *why = strdup(e);
            config_free_args(words, n);
            return;
        }
    }
    if (r->set(words ? (const char *const *)words : argv, n, &e) < 0) *why = strdup(e);
    if (words) config_free_args(words, n);
}

/* Would setting r to v leave it as it is? (CONFIG SET of an immutable
 * setting to its own value is a no-op, so a client can write back what
 * CONFIG GET * gave it.) */
static int same_as_current(const config_row *r, const char *v)
{
    char *why = NULL;
    long long num = 0;
    switch (r->type) {
    case T_STR:
        return !strcmp(*(char **)r->ptr ? *(char **)r->ptr : "", v);
    case T_SPECIAL:
        return 0;
    default:
        if (parse_value(r, v, &num, &why) < 0) {
            free(why);
            return 0;
        }
        return r->type == T_MEM || r->type == T_LL ? *(long long *)r->ptr == num
                                                   : *(int *)r->ptr == (int)num;
    }
}

/* client-output-buffer-limit's "<class> <hard> <soft> <soft seconds>"
 * groups (Redis's syntax and error texts): all or nothing. */
static const char *set_obuf_limits(const char *const *argv, int argc)
{
    static const char *const names[] = {"normal", "replica", "slave", "pubsub"};
    static const int classes[] = {CLIENT_CLASS_NORMAL, CLIENT_CLASS_REPLICA, CLIENT_CLASS_REPLICA,
                                  CLIENT_CLASS_PUBSUB};
    struct obuf_limit next[CLIENT_CLASSES];
    memcpy(next, cfg.obuf_limits, sizeof(next));
    if (argc % 4) return "Wrong number of arguments in buffer limit configuration.";
    for (int j = 0; j < argc; j += 4) {
        int cls = -1;
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
            if (!strcasecmp(argv[j], names[k])) cls = classes[k];
        if (cls < 0) return "Invalid client class specified in buffer limit configuration.";
        long long hard, soft, secs;
        char *end;
        errno = 0;
        secs = strtoll(argv[j + 3], &end, 10);
        if (config_parse_memory(argv[j + 1], &hard) < 0 ||
            config_parse_memory(argv[j + 2], &soft) < 0 || errno || *end || secs < 0)
            return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        next[cls] = (struct obuf_limit){(unsigned long long)hard, (unsigned long long)soft, secs};
    }
    memcpy(cfg.obuf_limits, next, sizeof(next));
    return NULL;
}

static void format_obuf_limits(char *buf, size_t cap)
{
    static const char *const names[] = {"normal", "slave", "pubsub"}; /* as Redis prints them */
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < CLIENT_CLASSES && n < cap; i++) {
        const struct obuf_limit *l = &cfg.obuf_limits[i];
        int w = snprintf(buf + n, cap - n, "%s%s %llu %llu %lld", i ? " " : "", names[i], l->hard,
                         l->soft, l->soft_seconds);
        if (w < 0) break;
        n += (size_t)w;
    }
}

int config_protected_allowed;

/* Directives of the config file (and command line) only, as Redis's:
 * `user` lines and rename-command. Returns 1 when name is one. */
static int startup_directive(const char *name, const char *const *argv, int argc, int *rc,
                             char **err)
{
    if (!strcasecmp(name, "user") && argc >= 1) {
        *rc = acl_config_user(argv, argc, err);
        return 1;
    }
    if (!strcasecmp(name, "rename-command") && argc == 2) {
        const char *why = command_rename(argv[0], argv[1]);
        *rc = why ? -1 : 0;
        if (why) *err = strdup(why);
        return 1;
    }
    return 0;
}

/* A config file's `save <seconds> <changes> ...` lines, as Redis 7.0
 * reads them: the pairs of every line add up (the first line replaces the
 * default; `save ""`, one argument, is an ordinary setting). Returns the value to store (malloc'd),
 * or NULL with *err set. */
static char *save_points(const config_row *r, const char *const *argv, int argc, char **err)
{
    static int lines; /* save lines of this startup so far */
    for (int i = 0; i < argc; i++) {
        char *end;
        long long v = strtoll(argv[i], &end, 10);
        if (argc % 2 || !argv[i][0] || *end || v < 0) {
            *err = strdup("Invalid save parameters");
            return NULL;
        }
    }
    const char *old = lines++ ? *(char **)r->ptr : "";
    size_t n = strlen(old ? old : "") + 2;
    for (int i = 0; i < argc; i++)
        n += strlen(argv[i]) + 1;
    char *v = malloc(n);
    strcpy(v, old ? old : "");
    for (int i = 0; i < argc; i++) {
        if (v[0]) strcat(v, " ");
        strcat(v, argv[i]);
    }
    return v;
}

/* client-output-buffer-limit: several arguments, or one that holds them
 * all (CONFIG SET). 0, or -1 with *err set (malloc'd). */
static int set_obuf_setting(const char *const *argv, int argc, char **err)
{
    char **split = NULL;
    int n = argc;
    if (argc == 1 && argv[0][0]) {
        n = config_split_args(argv[0], &split);
        argv = (const char *const *)split;
    }
    const char *why = n < 0 ? "Wrong number of arguments in buffer limit configuration."
                            : set_obuf_limits(argv, n);
    if (split) config_free_args(split, n);
    if (why)
        *err = fmt_err("CONFIG SET failed (possibly related to argument "
                       "'client-output-buffer-limit') - %s",
                       why);
    return why ? -1 : 0;
}

/* Stores a value parse_value accepted (num) or the string v in r's
 * storage; T_SPECIAL rows were stored by set_special. */
static void store_value(const config_row *r, const char *v, long long num)
{
    switch (r->type) {
    case T_SPECIAL:
        break;
    case T_STR:
        free(*(char **)r->ptr);
        *(char **)r->ptr = strdup(v);
        break;
    case T_MEM:
    case T_LL:
        *(long long *)r->ptr = num;
        break;
    default:
        *(int *)r->ptr = (int)num;
    }
}

int config_set(const char *name, const char *const *argv, int argc, int at_startup, char **err)
{
    const config_row *r = find_row(name);
    *err = NULL;
    int rc;
    if (at_startup && !r && startup_directive(name, argv, argc, &rc, err)) return rc;
    if (at_startup && r && !strcasecmp(r->name, "save") && argc >= 2) {
        char *v = save_points(r, argv, argc, err);
        if (!v) return -1;
        const char *one[1] = {v};
        rc = config_set(name, one, 1, 0, err);
        free(v);
        return rc;
    }
    if (r && r->type == T_OBUF) return set_obuf_setting(argv, argc, err);
    if (!r || (argc != 1 && !(r->type == T_SPECIAL && at_startup && argc > 0))) {
        *err = fmt_err("Unknown option or number of arguments for CONFIG SET - '%s'", name);
        return -1;
    }
    char *why = NULL;
    long long num = 0;
    if ((r->flags & F_PROTECTED) && !at_startup && !config_protected_allowed) {
        why = strdup("can't set protected config");
    } else if ((r->flags & F_IMMUTABLE) && !at_startup) {
        if (!(r->flags & F_REDIS_IMMUTABLE) && argc == 1 && same_as_current(r, argv[0]))
            return 0; /* nothing changes */
        why = strdup("can't set immutable config");
    } else if (r->type == T_SPECIAL) {
        set_special(r, argv, argc, &why);
    } else if (r->type != T_STR) {
        const char *e = NULL;
        if (parse_value(r, argv[0], &num, &why) == 0 && r->set && !at_startup && r->type == T_INT &&
            num != *(int *)r->ptr && r->set(argv, argc, &e) < 0)
            why = strdup(e);
    }
    if (why) {
        char buf[512];
        snprintf(buf, sizeof(buf), "CONFIG SET failed (possibly related to argument '%s') - %s",
                 r->name, why);
        free(why);
        *err = strdup(buf);
        return -1;
    }
    store_value(r, argv[0], num);
    if (r->apply && !at_startup) r->apply();
    return 0;
}

/* Two names for one setting (an alias row shares its storage). */
static int same_setting(const config_row *a, const config_row *b)
{
    return a == b || (a->ptr && a->ptr == b->ptr);
}

/* The validation phase of Redis's CONFIG SET: the first unknown name,
 * immutable setting or repeated setting, in argument order. */
static char *check_pairs(const char *const *pairs, int n, const config_row **rows)
{
    for (int i = 0; i < n; i++) {
        const config_row *r = rows[i] = find_row(pairs[2 * i]);
        if (!r)
            return fmt_err("Unknown option or number of arguments for CONFIG SET - '%s'",
                           pairs[2 * i]);
        const char *why = NULL;
        if ((r->flags & F_IMMUTABLE) &&
            ((r->flags & F_REDIS_IMMUTABLE) || !same_as_current(r, pairs[2 * i + 1])))
            why = "can't set immutable config";
        for (int j = 0; j < i && !why; j++)
            if (same_setting(rows[j], r)) why = "duplicate parameter";
        if (why) {
            char buf[512];
            snprintf(buf, sizeof(buf), "CONFIG SET failed (possibly related to argument '%s') - %s",
                     pairs[2 * i], why);
            return strdup(buf);
        }
    }
    return NULL;
}

int config_set_pairs(const char *const *pairs, int n, char **err)
{
    const config_row **rows = calloc((size_t)n + 1, sizeof(*rows));
    char **old = calloc((size_t)n + 1, sizeof(*old));
    char buf[4096];
    int i = 0, rc = -1;
    if (!rows || !old) {
        *err = strdup("ERR out of memory");
        goto cleanup;
    }
    if ((*err = check_pairs(pairs, n, rows))) goto cleanup;
    for (i = 0; i < n; i++) { /* backups first, as Redis */
        config_get_value(rows[i]->name, buf, sizeof(buf));
        if (!(old[i] = strdup(buf))) goto cleanup;
    }
    for (i = 0; i < n; i++) {
        const char *v[1] = {pairs[2 * i + 1]};
        if (config_set(rows[i]->name, v, 1, 0, err) < 0) break;
    }
    if (i == n) {
        rc = 0;
    } else {
        for (int j = i - 1; j >= 0; j--) { /* restore what was set, last first */
            const char *v[1] = {old[j]};
            char *e = NULL;
            config_set(rows[j]->name, v, 1, 0, &e);
            free(e);
        }
    }
cleanup:
    for (int j = 0; old && j < n; j++)
        free(old[j]);
    free(old);
    free(rows);
    return rc;
}

const char *config_file_path(void)
{
    return server.config_file;
}

/* A memory value as Redis writes it into a config file: in gb, mb or kb
 * when it is an exact multiple, else in bytes. */
static void fmt_memory(char *buf, size_t cap, long long v)
{
    const long long g = 1024LL * 1024 * 1024, m = 1024 * 1024, k = 1024;
    if (v && v % g == 0)
        snprintf(buf, cap, "%lldgb", v / g);
    else if (v && v % m == 0)
        snprintf(buf, cap, "%lldmb", v / m);
    else if (v && v % k == 0)
        snprintf(buf, cap, "%lldkb", v / k);
    else
        snprintf(buf, cap, "%lld", v);
}

/* Quotes s as Redis's sdscatrepr (strings are always quoted in a
 * rewritten file, so "" survives as an empty value). */
static void fmt_quoted(char *buf, size_t cap, const char *s)
{
    size_t n = 0;
    if (cap < 8) return;
    buf[n++] = '"';
    for (; *s && n + 6 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\\' || ch == '"') {
            buf[n++] = '\\';
            buf[n++] = (char)ch;
        } else if (ch == '\n' || ch == '\r' || ch == '\t') {
            buf[n++] = '\\';
            buf[n++] = ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't';
        } else if (ch < 32 || ch >= 127) {
            n += (size_t)snprintf(buf + n, cap - n, "\\x%02x", ch);
        } else {
            buf[n++] = (char)ch;
        }
    }
    buf[n++] = '"';
    buf[n] = '\0';
}

/* client-output-buffer-limit as Redis rewrites it: one line per class
 * ("replica" for the replica class), memory in units, each compared with
 * its class's default. */
static void each_obuf(config_each_fn fn, void *ctx, const char *name)
{
    static const char *const names[CLIENT_CLASSES] = {"normal", "replica", "pubsub"};
    static const struct obuf_limit defaults[CLIENT_CLASSES] = {
        {0, 0, 0}, {256ULL << 20, 64ULL << 20, 60}, {32ULL << 20, 8ULL << 20, 60}};
    for (int k = 0; k < CLIENT_CLASSES; k++) {
        const struct obuf_limit *l = &cfg.obuf_limits[k];
        char hard[32], soft[32], line[128];
        fmt_memory(hard, sizeof(hard), (long long)l->hard);
        fmt_memory(soft, sizeof(soft), (long long)l->soft);
        snprintf(line, sizeof(line), "%s %s %s %lld", names[k], hard, soft, l->soft_seconds);
        fn(ctx, name, line,
           l->hard == defaults[k].hard && l->soft == defaults[k].soft &&
               l->soft_seconds == defaults[k].soft_seconds);
    }
}

void config_each(config_each_fn fn, void *ctx)
{
    char cur[1024], out[2100];
    for (size_t i = 0; i < config_nrows; i++) {
        const config_row *r = &config_table[i];
        if (r->type == T_OBUF) {
            each_obuf(fn, ctx, r->name);
            continue;
        }
        config_get_value(r->name, cur, sizeof(cur));
        int is_default = config_default_text[i] && !strcmp(cur, config_default_text[i]);
        if (r->type == T_MEM && *(long long *)r->ptr >= 0)
            fmt_memory(out, sizeof(out), *(long long *)r->ptr);
        else if (r->type == T_STR || r->get == config_get_notify)
            fmt_quoted(out, sizeof(out), cur);
        else
            snprintf(out, sizeof(out), "%s", cur);
        fn(ctx, r->name, out, is_default);
    }
}

int config_is_sensitive(const char *name)
{
    const config_row *r = find_row(name);
    return r && (r->flags & F_SENSITIVE);
}

int config_get_value(const char *name, char *buf, size_t cap)
{
    const config_row *r = find_row(name);
    if (!r) return -1;
    switch (r->type) {
    case T_BOOL:
        snprintf(buf, cap, "%s", *(int *)r->ptr ? "yes" : "no");
        break;
    case T_INT:
        snprintf(buf, cap, "%d", *(int *)r->ptr);
        break;
    case T_MEM:
    case T_LL:
        if ((r->flags & F_PERCENT) && *(long long *)r->ptr < 0)
            snprintf(buf, cap, "%lld%%", -*(long long *)r->ptr);
        else
            snprintf(buf, cap, "%lld", *(long long *)r->ptr);
        break;
    case T_SPECIAL:
        r->get(buf, cap);
        break;
    case T_STR:
        snprintf(buf, cap, "%s", *(char **)r->ptr ? *(char **)r->ptr : "");
        break;
    case T_ENUM:
        buf[0] = '\0';
        for (const config_enum *e = r->enums; e->name; e++)
            if (e->val == *(int *)r->ptr) snprintf(buf, cap, "%s", e->name);
        break;
    case T_OBUF:
        format_obuf_limits(buf, cap);
        break;
    }
    return 0;
}

void config_match(const char *pattern, config_visit_fn fn, void *ctx)
{
    char val[1024];
    int glob = strpbrk(pattern, "*?[") != NULL; /* as Redis: hidden ones only by name */
    for (size_t i = 0; i < config_nrows; i++) {
        const char *n = config_table[i].name;
        if (glob && (config_table[i].flags & F_HIDDEN)) continue;
        if (!ks_glob_match(pattern, strlen(pattern), n, strlen(n), 1)) continue;
        config_get_value(n, val, sizeof(val));
        fn(ctx, n, val);
    }
}

void config_init_defaults(void)
{
    for (size_t i = 0; i < config_nrows; i++) {
        const char *argv[1] = {config_table[i].def};
        char *err = NULL;
        if (config_set(config_table[i].name, argv, 1, 1, &err) < 0) {
            fprintf(stderr, "bad default for %s: %s\n", config_table[i].name, err);
            abort();
        }
        char buf[1024];
        config_get_value(config_table[i].name, buf, sizeof(buf));
        free(config_default_text[i]);
        config_default_text[i] = strdup(buf);
    }
}

int config_split_args(const char *line, char ***argvp)
{
    size_t n = strlen(line);
    char *buf = malloc(n + 2);
    memcpy(buf, line, n);
    buf[n] = '\n';
    buf[n + 1] = '\0';
    resp_parser p;
    resp_parser_init(&p);
    size_t pos = 0;
    int argc = 0;
    *argvp = NULL;
    /* Lines never start with '*' in a config file; the inline splitter is
     * Redis's sdssplitargs. */
    int r = buf[0] == '*' ? RESP_ERR : resp_parse(&p, buf, n + 1, &pos);
    if (r == RESP_DONE) {
        argc = p.argc;
        *argvp = calloc((size_t)argc + 1, sizeof(char *));
        for (int i = 0; i < argc; i++)
            (*argvp)[i] = strndup(p.argv[i].ptr, p.argv[i].len);
    } else if (r == RESP_ERR) {
        argc = -1;
    }
    resp_parser_free(&p);
    free(buf);
    return argc;
}

void config_free_args(char **argv, int argc)
{
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
}

int config_load_file(const char *path, char **err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        *err = fmt_err("cannot open config file: %s", path);
        return -1;
    }
    char line[4096];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof(line), f)) {
        lineno++;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        s[strcspn(s, "\r\n")] = '\0';
        if (*s == '#' || *s == '\0') continue;
        char **argv;
        int argc = config_split_args(s, &argv);
        char *why = NULL;
        if (argc < 0)
            why = strdup("unbalanced quotes in configuration line");
        else if (argc > 0)
            config_set(argv[0], (const char *const *)argv + 1, argc - 1, 1, &why);
        if (argc >= 0) config_free_args(argv, argc);
        if (why) {
            char buf[600];
            snprintf(buf, sizeof(buf), "%s:%d: '%.200s': %.300s", path, lineno, s, why);
            free(why);
            *err = strdup(buf);
            rc = -1;
            break;
        }
    }
    fclose(f);
    return rc;
}
