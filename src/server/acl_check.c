/*
 * acl_check.c -- the permission checks (Redis's ACLCheckAllUserCommandPerm
 * and friends), authentication, and the ACL log.
 *
 * A request is allowed when one selector of the user allows its command
 * (the bit of its id, or a first argument allowed for it; commands that
 * run before AUTH always), every key it names (key specs: ACCESS needs a
 * read pattern, INSERT/UPDATE/DELETE a write one, a key with neither any
 * pattern) and every channel it publishes or subscribes to. When none
 * does, the error reported is the largest reason among the selectors, the
 * later argument on a tie, as Redis.
 *
 * The ACL log keeps the last acllog-max-len denials, newest first; a
 * denial like one of the 10 newest (same reason, context, object and user,
 * within 60 s) bumps that entry's count instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/acl_internal.h"
#include "server/ae.h"
#include "server/config.h"
#include "server/script.h"

/* Commands whose arguments are channels (Redis's commands_with_channels):
 * publish/subscribe ones are checked, unsubscribing never is. */
enum { CH_PUBLISH = 1, CH_SUBSCRIBE = 2, CH_PATTERN = 4 };
static const struct {
    const char *name;
    int flags, first, count; /* count -1: every argument from first */
} channel_cmds[] = {{"subscribe", CH_SUBSCRIBE, 1, -1},
                    {"ssubscribe", CH_SUBSCRIBE, 1, -1},
                    {"psubscribe", CH_SUBSCRIBE | CH_PATTERN, 1, -1},
                    {"publish", CH_PUBLISH, 1, 1},
                    {"spublish", CH_PUBLISH, 1, 1}};

static int channel_spec(const struct command *cmd)
{
    for (size_t i = 0; i < sizeof(channel_cmds) / sizeof(channel_cmds[0]); i++)
        if (!strcmp(cmd->name, channel_cmds[i].name)) return (int)i;
    return -1;
}

static int sel_check_key(const acl_selector *s, const char *key, size_t len, int kflags)
{
    if (s->flags & SEL_ALLKEYS) return ACL_OK;
    int need = 0;
    if (kflags & KEY_ACCESS) need |= PERM_READ;
    if (kflags & (KEY_INSERT | KEY_DELETE | KEY_UPDATE)) need |= PERM_WRITE;
    for (int i = 0; i < s->nkeys; i++) {
        if ((s->keys[i].perm & need) != need) continue;
        if (acl_match(s->keys[i].p, s->keys[i].n, key, len)) return ACL_OK;
    }
    return ACL_DENIED_KEY;
}

static int sel_check_channel(const acl_selector *s, const char *ch, size_t len, int is_pattern)
{
    if (s->flags & SEL_ALLCHANNELS) return ACL_OK;
    for (int i = 0; i < s->nchans; i++) {
        const acl_str *p = &s->chans[i];
        if (is_pattern ? (p->n == len && !memcmp(p->p, ch, len)) : acl_match(p->p, p->n, ch, len))
            return ACL_OK;
    }
    return ACL_DENIED_CHANNEL;
}

static int sel_allows_command(const acl_selector *s, const struct command *cmd, int argc,
                              const arg *argv)
{
    if ((s->flags & SEL_ALLCOMMANDS) || (cmd->flags & CMD_NOAUTH)) return 1;
    int id = command_id(cmd);
    if ((s->cmds[id / 64] >> (id % 64)) & 1) return 1;
    int idx = command_parent(cmd) ? 2 : 1;
    if (argc <= idx) return 0;
    for (int i = 0; i < s->nfargs; i++)
        if (s->fargs[i].id == id && !strcasecmp(argv[idx].ptr, s->fargs[i].arg)) return 1;
    return 0;
}

typedef struct keys_cache {
    int ready, n;
    key_ref *keys;
} keys_cache;

static int sel_check_cmd(const acl_selector *s, const struct command *cmd, int argc,
                         const arg *argv, int *errpos, keys_cache *kc)
{
    if (!sel_allows_command(s, cmd, argc, argv)) return ACL_DENIED_CMD;
    if (!(s->flags & SEL_ALLKEYS)) {
        if (!kc->ready) {
            /* room for every key: each spec names each argument at most once */
            int max = (argc + 1) * KEY_SPECS_MAX;
            kc->keys = malloc((size_t)max * sizeof(key_ref));
            if (!kc->keys) abort();
            kc->n = command_get_keys(cmd, argc, argv, kc->keys, max, 0);
            kc->ready = 1;
        }
        for (int j = 0; j < kc->n; j++) {
            const arg *k = &argv[kc->keys[j].pos];
            if (sel_check_key(s, k->ptr, k->len, kc->keys[j].flags) != ACL_OK) {
                *errpos = kc->keys[j].pos;
                return ACL_DENIED_KEY;
            }
        }
    }
    int ch = (s->flags & SEL_ALLCHANNELS) ? -1 : channel_spec(cmd);
    if (ch >= 0) {
        int last = channel_cmds[ch].count < 0 ? argc - 1
                                              : channel_cmds[ch].first + channel_cmds[ch].count - 1;
        for (int j = channel_cmds[ch].first; j <= last && j < argc; j++) {
            if (sel_check_channel(s, argv[j].ptr, argv[j].len,
                                  channel_cmds[ch].flags & CH_PATTERN) != ACL_OK) {
                *errpos = j;
                return ACL_DENIED_CHANNEL;
            }
        }
    }
    return ACL_OK;
}

int acl_check_cmd(const acl_user *u, const struct command *cmd, int argc, const arg *argv,
                  int *errpos)
{
    if (!u || u->head.unrestricted) return ACL_OK;
    int relevant = ACL_DENIED_CMD, last_idx = 0;
    keys_cache kc = {0};
    for (int i = 0; i < u->nsel; i++) {
        int pos = 0, r = sel_check_cmd(&u->sel[i], cmd, argc, argv, &pos, &kc);
        if (r == ACL_OK) {
            free(kc.keys);
            return ACL_OK;
        }
        if (r > relevant || (r == relevant && pos > last_idx)) {
            relevant = r;
            last_idx = pos;
        }
    }
    free(kc.keys);
    *errpos = last_idx;
    return relevant;
}

int acl_check_key(const acl_user *u, const char *key, size_t len, int key_flags)
{
    if (!u) return ACL_OK;
    for (int i = 0; i < u->nsel; i++)
        if (sel_check_key(&u->sel[i], key, len, key_flags) == ACL_OK) return ACL_OK;
    return ACL_DENIED_KEY;
}

int acl_check_channel(const acl_user *u, const char *channel, size_t len, int is_pattern)
{
    if (!u) return ACL_OK;
    for (int i = 0; i < u->nsel; i++)
        if (sel_check_channel(&u->sel[i], channel, len, is_pattern) == ACL_OK) return ACL_OK;
    return ACL_DENIED_CHANNEL;
}

/* Is every string starting with prefix matched by pattern p? Only the
 * plain forms are recognised: "*", and a literal followed by one "*". */
static int pattern_covers_prefix(const acl_str *p, const char *prefix, size_t len)
{
    if (!p->n || p->p[p->n - 1] != '*') return 0;
    size_t lit = p->n - 1;
    for (size_t i = 0; i < lit; i++)
        if (strchr("*?[\\", p->p[i])) return 0;
    return lit <= len && !memcmp(p->p, prefix, lit);
}

int acl_check_prefix_read(const acl_user *u, const struct command *cmd, int argc, const arg *argv,
                          const char *prefix, size_t len)
{
    if (!u || u->head.unrestricted) return ACL_OK;
    for (int i = 0; i < u->nsel; i++) {
        const acl_selector *s = &u->sel[i];
        if (!sel_allows_command(s, cmd, argc, argv)) continue;
        if (s->flags & SEL_ALLKEYS) return ACL_OK;
        for (int k = 0; k < s->nkeys; k++)
            if ((s->keys[k].perm & PERM_READ) && pattern_covers_prefix(&s->keys[k], prefix, len))
                return ACL_OK;
    }
    return ACL_DENIED_KEY;
}

void acl_denial_text(int reason, const struct command *cmd, char *buf, size_t cap)
{
    if (reason == ACL_DENIED_CMD)
        snprintf(buf, cap, "NOPERM this user has no permissions to run the '%s' command",
                 cmd->name);
    else if (reason == ACL_DENIED_KEY)
        snprintf(buf, cap,
                 "NOPERM this user has no permissions to access one of the keys used as arguments");
    else if (reason == ACL_DENIED_CHANNEL)
        snprintf(buf, cap,
                 "NOPERM this user has no permissions to access one of the channels "
                 "used as arguments");
    else
        snprintf(buf, cap, "no permission");
}

int acl_check_client(client *c, const struct command *cmd, int ctx)
{
    int pos = 0, r = acl_check_cmd(c->user, cmd, c->argc, c->argv, &pos);
    if (r == ACL_OK) return 0;
    if (r == ACL_DENIED_CMD)
        acl_log_add(c, r, ctx, cmd->name, strlen(cmd->name), NULL, 0);
    else
        acl_log_add(c, r, ctx, c->argv[pos].ptr, c->argv[pos].len, NULL, 0);
    char msg[256];
    acl_denial_text(r, cmd, msg, sizeof(msg));
    add_reply_error(c, msg);
    return -1;
}

int acl_check_exec_command(client *c, const struct command *cmd)
{
    int bad, pos = 0;
    const struct command *real = command_resolve(cmd, c->argc, c->argv, &bad);
    int r = acl_check_cmd(c->user, real, c->argc, c->argv, &pos);
    if (r == ACL_OK) return 0;
    const char *why = r == ACL_DENIED_CMD   ? "no permission to execute the command or subcommand"
                      : r == ACL_DENIED_KEY ? "no permission to touch the specified keys"
                      : r == ACL_DENIED_CHANNEL
                          ? "no permission to access one of the channels used as arguments"
                          : "no permission";
    if (r == ACL_DENIED_CMD)
        acl_log_add(c, r, ACL_LOG_CTX_MULTI, real->name, strlen(real->name), NULL, 0);
    else
        acl_log_add(c, r, ACL_LOG_CTX_MULTI, c->argv[pos].ptr, c->argv[pos].len, NULL, 0);
    add_reply_error_fmt(c,
                        "NOPERM ACLs rules changed between the moment the transaction was "
                        "accumulated and the EXEC call. This command is no longer allowed for the "
                        "following reason: %s",
                        why);
    return -1;
}

const char *acl_check_script_command(client *sc, const struct command *cmd)
{
    int bad, pos = 0;
    const struct command *real = command_resolve(cmd, sc->argc, sc->argv, &bad);
    int r = acl_check_cmd(sc->user, real, sc->argc, sc->argv, &pos);
    if (r == ACL_OK) return NULL;
    if (r == ACL_DENIED_CMD)
        acl_log_add(sc, r, ACL_LOG_CTX_LUA, real->name, strlen(real->name), NULL, 0);
    else
        acl_log_add(sc, r, ACL_LOG_CTX_LUA, sc->argv[pos].ptr, sc->argv[pos].len, NULL, 0);
    return r == ACL_DENIED_CMD
               ? "The user executing the script can't run this command or subcommand"
           : r == ACL_DENIED_KEY
               ? "The user executing the script can't access at least one of the keys mentioned "
                 "in the command arguments"
           : r == ACL_DENIED_CHANNEL
               ? "The user executing the script can't publish to the channel mentioned in the "
                 "command"
               : "The user executing the script lacking the permissions for the command";
}

/* ---- Authentication ------------------------------------------------------- */

static int pass_matches(const acl_user *u, const arg *pass)
{
    char h[65];
    acl_hash_password(pass->ptr, pass->len, h);
    int ok = 0;
    for (int i = 0; i < u->npass; i++) {
        unsigned diff = 0; /* every digest compared whole: no early exit */
        for (int j = 0; j < 64; j++)
            diff |= (unsigned char)(u->pass[i][j] ^ h[j]);
        ok |= diff == 0;
    }
    return ok;
}

int acl_authenticate(client *c, const arg *user, const arg *pass)
{
    acl_user *u = acl_user_find(user->ptr, user->len);
    if (u && !(u->flags & USER_OFF) && ((u->flags & USER_NOPASS) || pass_matches(u, pass))) {
        c->user = u;
        c->flags |= CLIENT_AUTHENTICATED;
        return 0;
    }
    acl_log_add(c, ACL_DENIED_AUTH,
                (c->flags & CLIENT_MULTI) ? ACL_LOG_CTX_MULTI : ACL_LOG_CTX_TOPLEVEL,
                c->argv[0].ptr, c->argv[0].len, user->ptr, user->len);
    return -1;
}

/* ---- The ACL log ------------------------------------------------------------ */

typedef struct log_entry {
    struct log_entry *next;
    long long count;
    int reason, ctx;
    char *object, *user;
    size_t olen, ulen;
    int64_t ctime_ms;
    char *cinfo;
} log_entry;

static log_entry *log_head;
static long log_len;

static void entry_free(log_entry *e)
{
    free(e->object);
    free(e->user);
    free(e->cinfo);
    free(e);
}

static char *dup_bytes(const char *p, size_t n)
{
    char *d = malloc(n + 1);
    memcpy(d, p, n);
    d[n] = '\0';
    return d;
}

void acl_log_add(client *c, int reason, int ctx, const char *object, size_t olen,
                 const char *username, size_t ulen)
{
    if (!username) {
        username = acl_user_name(c->user);
        ulen = strlen(username);
    }
    client *real = (c->flags & CLIENT_SCRIPT) && script_current() ? script_current()->caller : c;
    int64_t now = ae_mstime();
    log_entry **pp = &log_head;
    for (int scanned = 0; *pp && scanned < 10; scanned++, pp = &(*pp)->next) {
        log_entry *e = *pp;
        int64_t delta = now - e->ctime_ms;
        if (e->reason != reason || e->ctx != ctx || delta > 60000 || delta < -60000 ||
            e->olen != olen || memcmp(e->object, object, olen) || e->ulen != ulen ||
            memcmp(e->user, username, ulen))
            continue;
        *pp = e->next; /* to the front, updated */
        e->next = log_head;
        log_head = e;
        free(e->cinfo);
        e->cinfo = client_info_line(real);
        e->ctime_ms = now;
        e->count++;
        return;
    }
    log_entry *e = calloc(1, sizeof(*e));
    e->count = 1;
    e->reason = reason;
    e->ctx = ctx;
    e->object = dup_bytes(object, olen);
    e->olen = olen;
    e->user = dup_bytes(username, ulen);
    e->ulen = ulen;
    e->ctime_ms = now;
    e->cinfo = client_info_line(real);
    e->next = log_head;
    log_head = e;
    log_len++;
    while (log_len > cfg.acllog_max_len) {
        log_entry **last = &log_head;
        while ((*last)->next)
            last = &(*last)->next;
        entry_free(*last);
        *last = NULL;
        log_len--;
    }
}

void acl_log_reset(void)
{
    while (log_head) {
        log_entry *e = log_head;
        log_head = e->next;
        entry_free(e);
    }
    log_len = 0;
}

void acl_log_reply(client *c, long count)
{
    static const char *const reasons[] = {"unknown", "command", "key", "auth", "channel"};
    static const char *const ctxs[] = {"toplevel", "multi", "lua"};
    if (count > log_len) count = log_len;
    add_reply_array_len(c, count);
    int64_t now = ae_mstime();
    for (log_entry *e = log_head; e && count-- > 0; e = e->next) {
        add_reply_map_len(c, 7);
        add_reply_bulk_cstr(c, "count");
        add_reply_long_long(c, e->count);
        add_reply_bulk_cstr(c, "reason");
        add_reply_bulk_cstr(c, reasons[e->reason >= 0 && e->reason <= 4 ? e->reason : 0]);
        add_reply_bulk_cstr(c, "context");
        add_reply_bulk_cstr(c, e->ctx >= 0 && e->ctx <= 2 ? ctxs[e->ctx] : "unknown");
        add_reply_bulk_cstr(c, "object");
        add_reply_bulk(c, e->object, e->olen);
        add_reply_bulk_cstr(c, "username");
        add_reply_bulk(c, e->user, e->ulen);
        add_reply_bulk_cstr(c, "age-seconds");
        add_reply_double(c, (double)(now - e->ctime_ms) / 1000);
        add_reply_bulk_cstr(c, "client-info");
        add_reply_bulk_cstr(c, e->cinfo ? e->cinfo : "");
    }
}
