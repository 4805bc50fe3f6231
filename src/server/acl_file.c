/*
 * acl_file.c -- users from the configuration: `user <name> <rule> ...`
 * lines of the config file (and --user), or an aclfile of such lines;
 * ACL LOAD and ACL SAVE.
 *
 * The aclfile format (Redis's): one "user <name> <rule> ..." per line,
 * arguments split on single spaces, blank lines allowed, nothing else
 * (no comments: ACL SAVE rewrites the file). ACL LOAD builds a new user
 * set and keeps the old one unless every line applies; the default user
 * is updated in place (clients keep it), the clients of every other old
 * user are closed. ACL SAVE writes "<file>.tmp-<pid>-<ms>" and renames it
 * over the file, so a crash leaves the old or the new file whole.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/acl_internal.h"
#include "server/ae.h"
#include "server/config.h"

/* `user` lines from the config, validated, applied at startup. */
static char ***pending;
static int npending;

static int spaces(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r' || p[i] == 0) return 1;
    return 0;
}

int acl_config_user(const char *const *argv, int argc, char **err)
{
    /* the command line gives one argument holding the whole rule list */
    char *joined = NULL;
    size_t jl = 0;
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]);
        joined = realloc(joined, jl + n + 2);
        if (i) joined[jl++] = ' ';
        memcpy(joined + jl, argv[i], n + 1);
        jl += n;
    }
    char **av;
    int ac = joined ? config_split_args(joined, &av) : 0;
    free(joined);
    if (ac < 1) {
        if (ac == 0) free(av);
        *err = strdup("wrong number of arguments");
        return -1;
    }
    for (int i = 0; i < npending; i++) {
        if (!strcmp(pending[i][0], av[0])) {
            if (asprintf(err, "Error in user declaration '%s': %s", av[0],
                         acl_error_text(ACL_ERR_DUP_USER)) < 0)
                *err = NULL;
            config_free_args(av, ac);
            return -1;
        }
    }
    acl_user *fake = acl_user_new(av[0], strlen(av[0]));
    size_t *lens = malloc((size_t)ac * sizeof(size_t));
    for (int i = 0; i < ac; i++)
        lens[i] = strlen(av[i]);
    for (int i = 1; i < ac; i++) {
        int e = acl_user_apply(fake, av[i], lens[i]);
        if (e && e != ACL_ERR_UNKNOWN) {
            if (asprintf(err, "Error in user declaration '%s': %s", av[i], acl_error_text(e)) < 0)
                *err = NULL;
            acl_user_free(fake);
            free(lens);
            config_free_args(av, ac);
            return -1;
        }
    }
    acl_user_free(fake);
    free(lens);
    pending = realloc(pending, (size_t)(npending + 1) * sizeof(*pending));
    av = realloc(av, ((size_t)ac + 1) * sizeof(char *));
    av[ac] = NULL;
    pending[npending++] = av;
    return 0;
}

static int load_pending(char **err)
{
    for (int i = 0; i < npending; i++) {
        char **av = pending[i];
        if (spaces(av[0], strlen(av[0])))
            return *err = strdup("Spaces not allowed in ACL usernames"), -1;
        acl_user *u = acl_user_find(av[0], strlen(av[0]));
        if (!u) {
            u = acl_user_new(av[0], strlen(av[0]));
            acl_user_insert(u);
        } else {
            acl_user_apply(u, "reset", 5); /* only the default user can be there already */
        }
        for (int j = 1; av[j]; j++) {
            int e = acl_user_apply(u, av[j], strlen(av[j]));
            if (e) {
                if (asprintf(err, "Error loading ACL rule '%s' for the user named '%s': %s", av[j],
                             av[0], acl_error_text(e)) < 0)
                    *err = NULL;
                return -1;
            }
        }
        if (u->flags & USER_OFF)
            server_log(LL_NOTICE,
                       "The user '%s' is disabled (there is no 'on' modifier in the user "
                       "description). Make sure this is not a configuration error.",
                       av[0]);
    }
    return 0;
}

int acl_load_at_startup(char **err)
{
    int has_file = cfg.aclfile && cfg.aclfile[0];
    if (has_file && npending) {
        *err = strdup("Configuring Redis with users defined in redis.conf and at the same setting "
                      "an ACL file path is invalid. This setup is very likely to lead to "
                      "configuration errors and security holes, please define either an ACL "
                      "file or declare users directly in your redis.conf, but not both.");
        return -1;
    }
    if (load_pending(err) < 0) return -1;
    if (!has_file) return 0;
    char *errors = acl_load_file(cfg.aclfile);
    if (!errors) return 0;
    if (asprintf(err, "Aborting Redis startup because of ACL errors: %s", errors) < 0) *err = NULL;
    free(errors);
    return -1;
}

typedef struct strbuf {
    char *p;
    size_t n;
} strbuf;

static void sb_cat(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_cat(strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    b->p = realloc(b->p, b->n + (size_t)n + 1);
    memcpy(b->p + b->n, s, (size_t)n + 1);
    b->n += (size_t)n;
    free(s);
}

/* Applies one line of an aclfile to the new set; errors go to errs. */
static void load_line(char *line, int lineno, const char *path, strbuf *errs)
{
    /* Redis trims " \t\r\n" and splits on single spaces */
    size_t len = strlen(line);
    while (len && strchr(" \t\r\n", line[len - 1]))
        line[--len] = '\0';
    while (*line && strchr(" \t\r\n", *line))
        line++, len--;
    if (!*line) return;
    int argc = 0;
    char **argv = NULL;
    size_t *lens = NULL;
    for (char *p = line;;) {
        char *sp = strchr(p, ' ');
        argv = realloc(argv, (size_t)(argc + 1) * sizeof(char *));
        lens = realloc(lens, (size_t)(argc + 1) * sizeof(size_t));
        if (sp) *sp = '\0';
        argv[argc] = p;
        lens[argc++] = strlen(p);
        if (!sp) break;
        p = sp + 1;
    }
    if (strcmp(argv[0], "user") || argc < 2) {
        sb_cat(errs, "%s:%d should start with user keyword followed by the username. ", path,
               lineno);
    } else if (spaces(argv[1], lens[1])) {
        sb_cat(errs, "'%s:%d: username '%s' contains invalid characters. ", path, lineno, argv[1]);
    } else if (acl_user_find(argv[1], lens[1])) {
        sb_cat(errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], lineno);
    } else {
        acl_user *u = acl_user_new(argv[1], lens[1]);
        acl_user_insert(u);
        char **ops;
        size_t *olens;
        int bad, n = acl_merge_selector_args(argc - 2, argv + 2, lens + 2, &ops, &olens, &bad);
        if (n < 0)
            sb_cat(errs, "%s:%d: Unmatched parenthesis in selector definition.", path, lineno);
        int syntax = 0;
        for (int j = 0; j < n; j++) {
            int e = acl_user_apply(u, ops[j], olens[j]);
            if (e == ACL_ERR_UNKNOWN) {
                sb_cat(errs, "%s:%d: Error in applying operation '%s': %s. ", path, lineno, ops[j],
                       acl_error_text(e));
            } else if (e && !syntax) {
                sb_cat(errs, "%s:%d: %s. ", path, lineno, acl_error_text(e));
                syntax = 1;
            }
        }
        for (int j = 0; j < n; j++)
            free(ops[j]);
        if (n >= 0) {
            free(ops);
            free(olens);
        }
    }
    free(argv);
    free(lens);
}

char *acl_load_file(const char *path)
{
    FILE *f = fopen(path, "r");
    strbuf errs = {0};
    if (!f) {
        sb_cat(&errs, "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        return errs.p;
    }
    acl_user **old = acl_users;
    int nold = acl_nusers;
    acl_users = NULL;
    acl_nusers = 0;
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0;
    while (getline(&line, &cap, f) >= 0)
        load_line(line, ++lineno, path, &errs);
    free(line);
    fclose(f);
    if (errs.n) {
        for (int i = 0; i < acl_nusers; i++)
            acl_user_free(acl_users[i]);
        free(acl_users);
        acl_users = old;
        acl_nusers = nold;
        sb_cat(&errs, "WARNING: ACL errors detected, no change to the previously active ACL rules "
                      "was performed");
        return errs.p;
    }
    /* the default user keeps its address: clients hold it */
    acl_user *def = acl_default_user();
    acl_user *nd = acl_user_find("default", 7);
    int i;
    if (nd) {
        acl_user_copy(def, nd);
        for (i = 0; acl_users[i] != nd; i++) {
        }
        acl_users[i] = def;
        acl_user_free(nd);
    } else {
        acl_user *fresh = acl_user_new("default", 7);
        static const char *const rules[] = {"+@all", "~*", "&*", "on", "nopass"};
        for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++)
            acl_user_apply(fresh, rules[r], strlen(rules[r]));
        acl_user_copy(def, fresh);
        acl_user_free(fresh);
        acl_user_insert(def);
    }
    for (i = 0; i < nold; i++) {
        if (old[i] == def) continue;
        acl_kill_user_clients(old[i]);
        acl_user_free(old[i]);
    }
    free(old);
    return NULL;
}

int acl_save_file(const char *path)
{
    strbuf b = {0};
    for (int i = 0; i < acl_nusers; i++)
        sb_cat(&b, "user %s %s\n", acl_users[i]->name, acl_user_describe(acl_users[i]));
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.tmp-%d-%lld", path, (int)getpid(), (long long)ae_mstime()) < 0) {
        free(b.p);
        return -1;
    }
    int rc = -1, fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        server_log(LL_WARNING, "Opening temp ACL file for ACL SAVE: %s", strerror(errno));
    } else if (write(fd, b.p ? b.p : "", b.n) != (ssize_t)b.n || fsync(fd) < 0) {
        server_log(LL_WARNING, "Writing ACL file for ACL SAVE: %s", strerror(errno));
    } else if (close(fd) < 0 || (fd = -1, rename(tmp, path) < 0)) {
        server_log(LL_WARNING, "Renaming ACL file for ACL SAVE: %s", strerror(errno));
    } else {
        rc = 0;
    }
    if (fd >= 0 && rc < 0) close(fd);
    if (rc < 0) unlink(tmp);
    free(tmp);
    free(b.p);
    return rc;
}

void acl_each_user_line(void (*fn)(void *ctx, const char *line), void *ctx)
{
    for (int i = 0; i < acl_nusers; i++) {
        char *line = NULL;
        if (asprintf(&line, "user %s %s", acl_users[i]->name, acl_user_describe(acl_users[i])) < 0)
            continue;
        fn(ctx, line);
        free(line);
    }
}
