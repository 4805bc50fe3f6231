/*
 * acl.h -- users and their permissions, as Redis 7.0's ACL: passwords,
 * on/off, command permissions by command, subcommand, first argument and
 * category, key patterns with read/write permissions, pub/sub channel
 * patterns, selectors; the checks the dispatcher, EXEC and redis.call make
 * before a command runs; the ACL log.
 *
 * Every client has a user (client.user, the default user until AUTH or
 * HELLO AUTH). A user whose root selector allows every command, key and
 * channel is "unrestricted" and costs the dispatcher one test
 * (acl_user_unrestricted): the default user unless its rules change.
 *
 * Users are owned by this module; a client's pointer stays valid while the
 * user exists (ACL SETUSER changes a user in place; ACL DELUSER and ACL
 * LOAD close the clients of the users they remove first). Command thread
 * only.
 */
#ifndef STRATA_ACL_H
#define STRATA_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "server/server.h"

typedef struct acl_user acl_user;

/* Check results and ACL LOG reasons; the values are Redis's (the error
 * picked among selectors is the largest). */
enum {
    ACL_OK = 0,
    ACL_DENIED_CMD = 1,
    ACL_DENIED_KEY = 2,
    ACL_DENIED_AUTH = 3,
    ACL_DENIED_CHANNEL = 4
};
/* ACL LOG contexts. */
enum { ACL_LOG_CTX_TOPLEVEL = 0, ACL_LOG_CTX_MULTI = 1, ACL_LOG_CTX_LUA = 2 };

struct acl_user_head { /* the part the dispatcher's inline test reads */
    int unrestricted;
};

/* Creates the default user ("on nopass ~* &* +@all"). Before anything else. */
void acl_init(void);
acl_user *acl_default_user(void);
const char *acl_user_name(const acl_user *u);
/* Whether a connection that has not authenticated must (Redis's
 * authRequired): the default user has a password or is off. */
int acl_auth_required(void);
/* Whether the default user has no password (nopass): protected-mode then
 * serves loopback clients only. */
int acl_default_nopass(void);
/* Whether a new connection starts authenticated (default user nopass and on). */
int acl_new_client_authenticated(void);

static inline int acl_user_unrestricted(const acl_user *u)
{
    return ((const struct acl_user_head *)(const void *)u)->unrestricted;
}

/* Checks whether u may run cmd (the resolved command: "config|get", not
 * "config") with these arguments: the command, its keys (key specs and
 * their read/write flags), its channels (PUBLISH, SUBSCRIBE & co).
 * Returns ACL_OK or the ACL_DENIED_* reason, *errpos the argument that
 * failed for keys and channels. */
int acl_check_cmd(const acl_user *u, const struct command *cmd, int argc, const arg *argv,
                  int *errpos);
/* Whether u may use channel (publish or subscribe to it; is_pattern: a
 * PSUBSCRIBE pattern, matched literally against u's patterns, as Redis).
 * Returns ACL_OK or ACL_DENIED_CHANNEL. */
int acl_check_channel(const acl_user *u, const char *channel, size_t len, int is_pattern);
/* Whether u may touch key with KEY_* flags (ACCESS: read, INSERT/UPDATE/
 * DELETE: write). Returns ACL_OK or ACL_DENIED_KEY. */
int acl_check_key(const acl_user *u, const char *key, size_t len, int key_flags);
/* Whether u may read every key that starts with prefix: a selector that
 * allows the command has a read pattern that is "*" or "<p>*" with p a
 * prefix of it (IDX.*, FT.*: the entries of an index are its hashes'
 * fields). */
int acl_check_prefix_read(const acl_user *u, const struct command *cmd, int argc, const arg *argv,
                          const char *prefix, size_t len);

/* IDX.RANGE and FT.SEARCH/AGGREGATE/TAGVALS by a restricted user
 * (acl_index.c): unless a read pattern of the user covers every prefix of
 * the index named by name (acl_check_prefix_read), logs the denial, replies
 * NOPERM and returns 1; 0 when the query may run (also when there is no
 * such index: the command replies its own error). */
int acl_refuse_idx_query(client *c, const arg *name);
int acl_refuse_ft_query(client *c, const arg *name);

/* The dispatcher's check of c's request for cmd (resolved) in context
 * ctx: on a denial logs it (ACL LOG), replies Redis's NOPERM error and
 * returns -1. */
int acl_check_client(client *c, const struct command *cmd, int ctx);
/* EXEC's check of a queued command (c's argv is the command's): the rules
 * may have changed since it was queued. On a denial logs it (context
 * multi), replies Redis's "NOPERM ACLs rules changed ..." and returns -1. */
int acl_check_exec_command(client *c, const struct command *cmd);
/* redis.call's check of the script client sc (its user is the caller's,
 * its argv the call's): NULL when allowed, else logs the denial (context
 * lua) and returns Redis's "The user executing the script ..." text
 * (static). */
const char *acl_check_script_command(client *sc, const struct command *cmd);
/* The NOPERM text of a denial ("this user has no permissions to run the
 * 'get' command", ...), for the dispatcher, EXEC and scripts. */
void acl_denial_text(int reason, const struct command *cmd, char *buf, size_t cap);
/* Adds an ACL LOG entry for c (for a script client: its caller).
 * object: the command's full name, key, channel or AUTH's argv[0];
 * username NULL: c's user. */
void acl_log_add(client *c, int reason, int ctx, const char *object, size_t olen,
                 const char *username, size_t ulen);

/* AUTH / HELLO AUTH: on success sets c's user and CLIENT_AUTHENTICATED and
 * returns 0; otherwise logs the failure (reason auth) and returns -1. */
int acl_authenticate(client *c, const arg *user, const arg *pass);
/* requirepass: the default user gets pass as its only password ("" =
 * nopass), as Redis's ACLUpdateDefaultUserPassword. */
void acl_set_default_password(const char *pass);

/* Config file / --user: "user <name> <rule> ..." lines, validated now and
 * applied by acl_load_at_startup. Returns 0 or -1 with *err (malloc'd). */
int acl_config_user(const char *const *argv, int argc, char **err);
/* After the settings are read: the users of `user` lines, or of aclfile
 * (both is an error, as Redis). Returns 0 or -1 with *err (malloc'd). */
int acl_load_at_startup(char **err);
/* ACL LOAD: replaces every user with aclfile's (all or nothing); returns
 * NULL or the errors (malloc'd). */
char *acl_load_file(const char *path);
/* ACL SAVE: writes every user to path (a temp file renamed). Returns 0/-1. */
int acl_save_file(const char *path);
/* Calls fn with each user's "user <name> <rules>" line (CONFIG REWRITE). */
void acl_each_user_line(void (*fn)(void *ctx, const char *line), void *ctx);

/* Category names: "keyspace" for ACL_CAT_KEYSPACE ...; 0 / NULL when unknown. */
const char *acl_category_name(uint32_t bit);
uint32_t acl_category_by_name(const char *name);

/* The ACL command (cmd_acl.c) and the ACL LOG it shows. */
void acl_log_reply(client *c, long count);
void acl_log_reset(void);

/* Pub/sub: called after ACL SETUSER / ACL LOAD took channel permissions
 * from u (Redis's ACLKillPubsubClientsIfNeeded). It must close every
 * subscribed client of u holding a channel or pattern that
 * acl_check_channel now refuses. Weak: nothing until pub/sub defines it. */
void pubsub_acl_channels_revoked(const acl_user *u) __attribute__((weak));

#endif
