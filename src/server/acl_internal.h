/*
 * acl_internal.h -- the ACL module's own structures, shared by acl.c
 * (users, rules), acl_describe.c (descriptions), acl_check.c (checks,
 * log), acl_file.c (aclfile, config lines) and cmd_acl.c (the ACL
 * command). Nothing outside the ACL files includes it.
 */
#ifndef STRATA_ACL_INTERNAL_H
#define STRATA_ACL_INTERNAL_H

#include "server/acl.h"

#define ACL_CMD_BITS 1024                 /* command ids, as Redis's USER_COMMAND_BITS_COUNT */
#define ACL_FUTURE_BIT (ACL_CMD_BITS - 1) /* set by +@all only: "starts from everything" */

enum { SEL_ROOT = 1, SEL_ALLKEYS = 2, SEL_ALLCHANNELS = 4, SEL_ALLCOMMANDS = 8 };
enum { PERM_READ = 1, PERM_WRITE = 2, PERM_ALL = 3 };
enum {
    USER_ON = 1,
    USER_OFF = 2,
    USER_NOPASS = 4,
    USER_SKIP_SANITIZE = 8,
    USER_SANITIZE = 16,
};

/* The user flags in the order ACL LIST and ACL GETUSER show them. */
typedef struct acl_flag_name {
    uint32_t bit;
    const char *name;
} acl_flag_name;
#define ACL_NFLAG_NAMES 5
extern const acl_flag_name acl_flag_names[ACL_NFLAG_NAMES];

/* Errors of a rule (Redis's errno values of ACLSetUser). */
enum {
    ACL_ERR_SYNTAX = 1,     /* EINVAL */
    ACL_ERR_UNKNOWN,        /* ENOENT */
    ACL_ERR_KEY_AFTER_ALL,  /* EEXIST */
    ACL_ERR_CHAN_AFTER_ALL, /* EISDIR */
    ACL_ERR_NO_PASS,        /* ENODEV */
    ACL_ERR_BAD_HASH,       /* EBADMSG */
    ACL_ERR_DUP_USER,       /* EALREADY */
    ACL_ERR_SUB_FIRSTARG,   /* ECHILD */
};

typedef struct acl_str {
    char *p;
    size_t n;
    int perm; /* key patterns: PERM_* */
} acl_str;

typedef struct acl_firstarg {
    int id; /* command id */
    char *arg;
} acl_firstarg;

typedef struct acl_selector {
    uint32_t flags; /* SEL_* */
    uint64_t cmds[ACL_CMD_BITS / 64];
    acl_firstarg *fargs;
    int nfargs;
    acl_str *keys; /* key patterns */
    int nkeys;
    acl_str *chans; /* channel patterns */
    int nchans;
} acl_selector;

struct acl_user {
    struct acl_user_head head; /* first: acl_user_unrestricted reads it */
    char *name;
    size_t name_len;
    uint32_t flags;   /* USER_* */
    char (*pass)[65]; /* SHA-256 hex digests */
    int npass;
    acl_selector *sel; /* sel[0]: the root selector */
    int nsel;
    char *descr; /* cached description (ACL LIST), NULL when stale */
};

/* The users, sorted by name (bytes), as Redis's rax. */
extern acl_user **acl_users;
extern int acl_nusers;

acl_user *acl_user_new(const char *name, size_t len);
void acl_user_free(acl_user *u);
/* dst gets src's rules (name kept). */
void acl_user_copy(acl_user *dst, const acl_user *src);
acl_user *acl_user_find(const char *name, size_t len);
/* Inserts u (sorted); u's name must be new. */
void acl_user_insert(acl_user *u);
/* Applies one rule; returns 0 or ACL_ERR_*. */
int acl_user_apply(acl_user *u, const char *op, size_t len);
/* Applies rules (selectors may span arguments: "(~a" "+get)"), all or
 * nothing, to u (NULL: a new user named name). Returns NULL or the error
 * reply text (malloc'd). */
char *acl_user_set_rules(acl_user *u, const char *name, size_t nlen, int argc, char **argv,
                         size_t *lens);
const char *acl_error_text(int err);
/* Merges selector arguments spread over several ("(~a" "+get)") into one
 * each, as Redis's ACLMergeSelectorArguments: *out and *olens (malloc'd,
 * each string too) get the merged list; returns its length, or -1 with
 * *bad the index of the argument opening an unmatched parenthesis. */
int acl_merge_selector_args(int argc, char **argv, size_t *lens, char ***out, size_t **olens,
                            int *bad);
/* "on nopass ~* &* +@all" (cached in u->descr, owned by u). */
const char *acl_user_describe(acl_user *u);
/* A selector's "commands" rules, its "keys" and "channels" as GETUSER
 * shows them (malloc'd). */
char *acl_selector_describe_commands(const acl_selector *s);
char *acl_selector_describe_keys(const acl_selector *s);
char *acl_selector_describe_channels(const acl_selector *s);
/* Recomputes the unrestricted flag and drops the cached description. */
void acl_user_changed(acl_user *u);
/* Closes the clients authenticated as u (after this reply for the caller)
 * and moves them to the default user, unauthenticated. */
void acl_kill_user_clients(acl_user *u);
/* Whether a user whose rules became `now` lost channels `before` had. */
int acl_channels_shrank(const acl_user *now, const acl_user *before);
/* Glob match, case-sensitive (Redis's stringmatchlen). */
int acl_match(const char *pat, size_t plen, const char *s, size_t n);
/* Computes the SHA-256 hex digest of p[0..n) into out[65]. */
void acl_hash_password(const char *p, size_t n, char out[65]);

/* The ACL categories, in the order ACL CAT lists them and a description
 * tries them (acl.c owns the table; read-only). */
typedef struct acl_category {
    const char *name;
    uint32_t bit;
} acl_category;
#define ACL_NCATS 22
extern const acl_category acl_categories[ACL_NCATS];

/* Selector primitives acl.c applies rules with and acl_describe.c replays
 * them with to find the shortest description. Command thread. */
/* An empty selector (flags: SEL_*; channels per acl-pubsub-default). */
void acl_sel_init(acl_selector *s, uint32_t flags);
/* Frees what s owns (patterns, first arguments); s is not reusable. */
void acl_sel_free(acl_selector *s);
/* Applies one rule to s; 0 or ACL_ERR_*. */
int acl_sel_apply(acl_selector *s, const char *op, size_t len);
/* Whether command id (or ACL_FUTURE_BIT) is allowed in s. */
int acl_sel_bit_get(const acl_selector *s, int id);
/* Allows or denies cmd, and a container's subcommands with it. */
void acl_sel_change_perm(acl_selector *s, const struct command *cmd, int allow);
/* Allows or denies every command of category cat (an ACL_CAT_* bit). */
void acl_sel_set_category(acl_selector *s, uint32_t cat, int allow);

#endif
