/*
 * acl.c -- ACL users and their rules (Redis 7.0's ACL SETUSER language);
 * the descriptions ACL LIST, ACL GETUSER and ACL SAVE print are in
 * acl_describe.c.
 *
 * A user has flags (on/off, nopass, sanitize-payload), SHA-256 digests of
 * its passwords, and selectors: the root selector holds the rules given
 * outside parentheses, each "(...)" adds one more; a command is allowed
 * when any selector allows it with its keys and channels (acl_check.c). A
 * selector is a bitmap of command ids (command_id: every command and
 * subcommand), first arguments allowed for commands otherwise denied
 * ("+select|0"), key patterns with read/write permission and channel
 * patterns. Bit ACL_FUTURE_BIT records "+@all": a description then starts
 * from +@all instead of -@all.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/sha.h>

#include "server/acl_internal.h"
#include "server/config.h"

acl_user **acl_users;
int acl_nusers;
static acl_user *default_user;

const acl_category acl_categories[] = {
    {"keyspace", ACL_CAT_KEYSPACE},
    {"read", ACL_CAT_READ},
    {"write", ACL_CAT_WRITE},
    {"set", ACL_CAT_SET},
    {"sortedset", ACL_CAT_SORTEDSET},
    {"list", ACL_CAT_LIST},
    {"hash", ACL_CAT_HASH},
    {"string", ACL_CAT_STRING},
    {"bitmap", ACL_CAT_BITMAP},
    {"hyperloglog", ACL_CAT_HYPERLOGLOG},
    {"geo", ACL_CAT_GEO},
    {"stream", ACL_CAT_STREAM},
    {"pubsub", ACL_CAT_PUBSUB},
    {"admin", ACL_CAT_ADMIN},
    {"fast", ACL_CAT_FAST},
    {"slow", ACL_CAT_SLOW},
    {"blocking", ACL_CAT_BLOCKING},
    {"dangerous", ACL_CAT_DANGEROUS},
    {"connection", ACL_CAT_CONNECTION},
    {"transaction", ACL_CAT_TRANSACTION},
    {"scripting", ACL_CAT_SCRIPTING},
    {"search", ACL_CAT_SEARCH},
};
_Static_assert(sizeof(acl_categories) / sizeof(acl_categories[0]) == ACL_NCATS,
               "ACL_NCATS counts the rows of acl_categories");

const char *acl_category_name(uint32_t bit)
{
    for (size_t i = 0; i < ACL_NCATS; i++)
        if (acl_categories[i].bit == bit) return acl_categories[i].name;
    return NULL;
}

uint32_t acl_category_by_name(const char *name)
{
    for (size_t i = 0; i < ACL_NCATS; i++)
        if (!strcasecmp(acl_categories[i].name, name)) return acl_categories[i].bit;
    return 0;
}

void acl_hash_password(const char *p, size_t n, char out[65])
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)p, n, d);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
        out[i * 2] = "0123456789abcdef"[d[i] >> 4];
        out[i * 2 + 1] = "0123456789abcdef"[d[i] & 15];
    }
    out[64] = '\0';
}

int acl_match(const char *pat, size_t plen, const char *s, size_t n)
{
    return ks_glob_match(pat, plen, s, n, 0);
}

/* ---- Selectors ------------------------------------------------------------ */

void acl_sel_init(acl_selector *s, uint32_t flags)
{
    memset(s, 0, sizeof(*s));
    s->flags = flags | (cfg.acl_pubsub_default ? SEL_ALLCHANNELS : 0);
}

static void strs_free(acl_str *v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i].p);
    free(v);
}

static void fargs_reset(acl_selector *s)
{
    for (int i = 0; i < s->nfargs; i++)
        free(s->fargs[i].arg);
    free(s->fargs);
    s->fargs = NULL;
    s->nfargs = 0;
}

void acl_sel_free(acl_selector *s)
{
    strs_free(s->keys, s->nkeys);
    strs_free(s->chans, s->nchans);
    fargs_reset(s);
}

static acl_str *strs_dup(const acl_str *v, int n)
{
    if (!n) return NULL;
    acl_str *d = malloc((size_t)n * sizeof(*d));
    for (int i = 0; i < n; i++) {
        d[i] = v[i];
        d[i].p = malloc(v[i].n + 1);
        memcpy(d[i].p, v[i].p, v[i].n + 1);
    }
    return d;
}

static void sel_copy(acl_selector *d, const acl_selector *s)
{
    *d = *s;
    d->keys = strs_dup(s->keys, s->nkeys);
    d->chans = strs_dup(s->chans, s->nchans);
    d->fargs = s->nfargs ? malloc((size_t)s->nfargs * sizeof(*d->fargs)) : NULL;
    for (int i = 0; i < s->nfargs; i++)
        d->fargs[i] = (acl_firstarg){s->fargs[i].id, strdup(s->fargs[i].arg)};
}

int acl_sel_bit_get(const acl_selector *s, int id)
{
    return id >= 0 && id < ACL_CMD_BITS && (s->cmds[id / 64] >> (id % 64)) & 1;
}

static void bit_set(acl_selector *s, int id, int v)
{
    if (id < 0 || id >= ACL_CMD_BITS) return;
    if (v) {
        s->cmds[id / 64] |= 1ULL << (id % 64);
    } else {
        s->cmds[id / 64] &= ~(1ULL << (id % 64));
        s->flags &= ~SEL_ALLCOMMANDS;
    }
}

static void fargs_reset_cmd(acl_selector *s, int id)
{
    int k = 0;
    for (int i = 0; i < s->nfargs; i++) {
        if (s->fargs[i].id == id)
            free(s->fargs[i].arg);
        else
            s->fargs[k++] = s->fargs[i];
    }
    s->nfargs = k;
}

/* Allows or denies cmd, and a container's subcommands with it. */
void acl_sel_change_perm(acl_selector *s, const struct command *cmd, int allow)
{
    int id = command_id(cmd), n;
    bit_set(s, id, allow);
    fargs_reset_cmd(s, id);
    const struct command *subs = command_subcommands(cmd, &n);
    for (int i = 0; i < n; i++)
        bit_set(s, command_id(&subs[i]), allow);
}

void acl_sel_set_category(acl_selector *s, uint32_t cat, int allow)
{
    for (int i = 0; i < command_count(); i++) {
        const struct command *cmd = command_list_order(i);
        if (command_categories(cmd) & cat) acl_sel_change_perm(s, cmd, allow);
    }
}

static int has_spaces(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)p[i]) || p[i] == 0) return 1;
    return 0;
}

static void strs_add(acl_str **v, int *n, const char *p, size_t len, int perm)
{
    for (int i = 0; i < *n; i++) {
        if ((*v)[i].n == len && !memcmp((*v)[i].p, p, len)) {
            (*v)[i].perm |= perm;
            return;
        }
    }
    *v = realloc(*v, (size_t)(*n + 1) * sizeof(**v));
    char *c = malloc(len + 1);
    memcpy(c, p, len);
    c[len] = '\0';
    (*v)[(*n)++] = (acl_str){c, len, perm};
}

static int sel_key_pattern(acl_selector *s, const char *op, size_t len)
{
    if (s->flags & SEL_ALLKEYS) return ACL_ERR_KEY_AFTER_ALL;
    int perm = 0;
    size_t off = 1;
    if (op[0] == '%') {
        for (; off < len; off++) {
            char ch = (char)toupper((unsigned char)op[off]);
            if (ch == 'R' && !(perm & PERM_READ)) {
                perm |= PERM_READ;
            } else if (ch == 'W' && !(perm & PERM_WRITE)) {
                perm |= PERM_WRITE;
            } else if (op[off] == '~') {
                off++;
                break;
            } else {
                return ACL_ERR_SYNTAX;
            }
        }
        if (!perm) return ACL_ERR_SYNTAX;
    } else {
        perm = PERM_ALL;
    }
    if (has_spaces(op + off, len - off)) return ACL_ERR_SYNTAX;
    strs_add(&s->keys, &s->nkeys, op + off, len - off, perm);
    s->flags &= ~SEL_ALLKEYS;
    return 0;
}

static void first_arg_add(acl_selector *s, int id, const char *a)
{
    for (int i = 0; i < s->nfargs; i++)
        if (s->fargs[i].id == id && !strcasecmp(s->fargs[i].arg, a)) return;
    s->fargs = realloc(s->fargs, (size_t)(s->nfargs + 1) * sizeof(*s->fargs));
    s->fargs[s->nfargs++] = (acl_firstarg){id, strdup(a)};
}

/* +cmd, +cmd|sub, +cmd|firstarg */
static int sel_allow_command(acl_selector *s, const char *name)
{
    const char *bar = strrchr(name, '|');
    if (!bar) {
        const struct command *cmd = command_lookup_orig(name, strlen(name));
        if (!cmd) return ACL_ERR_UNKNOWN;
        acl_sel_change_perm(s, cmd, 1);
        return 0;
    }
    const struct command *cmd = command_lookup_orig(name, (size_t)(bar - name));
    if (!cmd) return ACL_ERR_UNKNOWN;
    if (command_parent(cmd)) return ACL_ERR_SUB_FIRSTARG;
    if (!bar[1]) return ACL_ERR_SYNTAX;
    int n;
    if (command_subcommands(cmd, &n)) {
        const struct command *sub = command_lookup_orig(name, strlen(name));
        if (!sub) return ACL_ERR_UNKNOWN;
        acl_sel_change_perm(s, sub, 1);
        return 0;
    }
    server_log(LL_WARNING,
               "Deprecation warning: Allowing a first arg of an otherwise blocked command is a "
               "misuse of ACL and may get disabled in the future (offender: +%s)",
               name);
    first_arg_add(s, command_id(cmd), bar + 1);
    return 0;
}

int acl_sel_apply(acl_selector *s, const char *op, size_t len)
{
    if (!strcasecmp(op, "allkeys") || !strcasecmp(op, "~*")) {
        s->flags |= SEL_ALLKEYS;
        strs_free(s->keys, s->nkeys);
        s->keys = NULL, s->nkeys = 0;
    } else if (!strcasecmp(op, "resetkeys")) {
        s->flags &= ~SEL_ALLKEYS;
        strs_free(s->keys, s->nkeys);
        s->keys = NULL, s->nkeys = 0;
    } else if (!strcasecmp(op, "allchannels") || !strcasecmp(op, "&*")) {
        s->flags |= SEL_ALLCHANNELS;
        strs_free(s->chans, s->nchans);
        s->chans = NULL, s->nchans = 0;
    } else if (!strcasecmp(op, "resetchannels")) {
        s->flags &= ~SEL_ALLCHANNELS;
        strs_free(s->chans, s->nchans);
        s->chans = NULL, s->nchans = 0;
    } else if (!strcasecmp(op, "allcommands") || !strcasecmp(op, "+@all")) {
        memset(s->cmds, 0xff, sizeof(s->cmds));
        s->flags |= SEL_ALLCOMMANDS;
        fargs_reset(s);
    } else if (!strcasecmp(op, "nocommands") || !strcasecmp(op, "-@all")) {
        memset(s->cmds, 0, sizeof(s->cmds));
        s->flags &= ~SEL_ALLCOMMANDS;
        fargs_reset(s);
    } else if (op[0] == '~' || op[0] == '%') {
        return sel_key_pattern(s, op, len);
    } else if (op[0] == '&') {
        if (s->flags & SEL_ALLCHANNELS) return ACL_ERR_CHAN_AFTER_ALL;
        if (has_spaces(op + 1, len - 1)) return ACL_ERR_SYNTAX;
        strs_add(&s->chans, &s->nchans, op + 1, len - 1, 0);
        s->flags &= ~SEL_ALLCHANNELS;
    } else if (op[0] == '+' && op[1] != '@') {
        return sel_allow_command(s, op + 1);
    } else if (op[0] == '-' && op[1] != '@') {
        const struct command *cmd = command_lookup_orig(op + 1, len - 1);
        if (!cmd) return ACL_ERR_UNKNOWN;
        acl_sel_change_perm(s, cmd, 0);
    } else if ((op[0] == '+' || op[0] == '-') && op[1] == '@') {
        uint32_t cat = acl_category_by_name(op + 2);
        if (!cat) return ACL_ERR_UNKNOWN;
        acl_sel_set_category(s, cat, op[0] == '+');
    } else {
        return ACL_ERR_SYNTAX;
    }
    return 0;
}

/* Splits "(op op ...)" as sdssplitargs and applies each to a new selector. */
static int sel_from_opset(acl_selector *out, const char *op, size_t len)
{
    char *inner = strndup(op + 1, len - 2);
    char **argv;
    int argc = config_split_args(inner, &argv), err = 0;
    free(inner);
    acl_sel_init(out, 0);
    if (argc < 0) return ACL_ERR_SYNTAX;
    for (int i = 0; i < argc && !err; i++)
        err = acl_sel_apply(out, argv[i], strlen(argv[i]));
    config_free_args(argv, argc);
    if (err) acl_sel_free(out);
    return err;
}

/* ---- Users ------------------------------------------------------------------ */

acl_user *acl_user_new(const char *name, size_t len)
{
    acl_user *u = calloc(1, sizeof(*u));
    u->name = malloc(len + 1);
    memcpy(u->name, name, len);
    u->name[len] = '\0';
    u->name_len = len;
    u->flags = USER_OFF;
    u->sel = malloc(sizeof(*u->sel));
    acl_sel_init(&u->sel[0], SEL_ROOT);
    u->nsel = 1;
    acl_user_changed(u);
    return u;
}

static void user_clear(acl_user *u)
{
    for (int i = 0; i < u->nsel; i++)
        acl_sel_free(&u->sel[i]);
    free(u->sel);
    free(u->pass);
    free(u->descr);
    u->sel = NULL, u->pass = NULL, u->descr = NULL;
    u->nsel = u->npass = 0;
}

void acl_user_free(acl_user *u)
{
    if (!u) return;
    user_clear(u);
    free(u->name);
    free(u);
}

void acl_user_copy(acl_user *dst, const acl_user *src)
{
    user_clear(dst);
    dst->flags = src->flags;
    dst->npass = src->npass;
    dst->pass = src->npass ? malloc((size_t)src->npass * 65) : NULL;
    if (src->npass) memcpy(dst->pass, src->pass, (size_t)src->npass * 65);
    dst->nsel = src->nsel;
    dst->sel = malloc((size_t)src->nsel * sizeof(*dst->sel));
    for (int i = 0; i < src->nsel; i++)
        sel_copy(&dst->sel[i], &src->sel[i]);
    acl_user_changed(dst);
}

void acl_user_changed(acl_user *u)
{
    free(u->descr);
    u->descr = NULL;
    const acl_selector *r = &u->sel[0];
    uint32_t all = SEL_ALLCOMMANDS | SEL_ALLKEYS | SEL_ALLCHANNELS;
    u->head.unrestricted = (r->flags & all) == all;
}

static int name_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? c : (an < bn ? -1 : an > bn);
}

static int find_index(const char *name, size_t len, int *found)
{
    int lo = 0, hi = acl_nusers;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        int c = name_cmp(acl_users[mid]->name, acl_users[mid]->name_len, name, len);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

acl_user *acl_user_find(const char *name, size_t len)
{
    int found, i = find_index(name, len, &found);
    return found ? acl_users[i] : NULL;
}

void acl_user_insert(acl_user *u)
{
    int found, i = find_index(u->name, u->name_len, &found);
    acl_users = realloc(acl_users, (size_t)(acl_nusers + 1) * sizeof(*acl_users));
    memmove(acl_users + i + 1, acl_users + i, (size_t)(acl_nusers - i) * sizeof(*acl_users));
    acl_users[i] = u;
    acl_nusers++;
}

static int valid_hash(const char *p, size_t n)
{
    if (n != 64) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return 0;
    return 1;
}

static int pass_find(const acl_user *u, const char *h)
{
    for (int i = 0; i < u->npass; i++)
        if (!memcmp(u->pass[i], h, 64)) return i;
    return -1;
}

static int user_password_op(acl_user *u, const char *op, size_t len)
{
    char h[65];
    if (op[0] == '>' || op[0] == '<') {
        acl_hash_password(op + 1, len - 1, h);
    } else {
        if (!valid_hash(op + 1, len - 1)) return ACL_ERR_BAD_HASH;
        memcpy(h, op + 1, 64);
        h[64] = '\0';
    }
    int at = pass_find(u, h);
    if (op[0] == '>' || op[0] == '#') {
        if (at < 0) {
            u->pass = realloc(u->pass, (size_t)(u->npass + 1) * 65);
            memcpy(u->pass[u->npass++], h, 65);
        }
        u->flags &= ~USER_NOPASS;
        return 0;
    }
    if (at < 0) return ACL_ERR_NO_PASS;
    memmove(u->pass[at], u->pass[at + 1], (size_t)(u->npass - at - 1) * 65);
    u->npass--;
    return 0;
}

static void user_reset_passwords(acl_user *u)
{
    free(u->pass);
    u->pass = NULL;
    u->npass = 0;
}

int acl_user_apply(acl_user *u, const char *op, size_t len)
{
    int err = 0;
    if (len == 0) return 0;
    if (!strcasecmp(op, "on")) {
        u->flags = (u->flags | USER_ON) & ~USER_OFF;
    } else if (!strcasecmp(op, "off")) {
        u->flags = (u->flags | USER_OFF) & ~USER_ON;
    } else if (!strcasecmp(op, "skip-sanitize-payload")) {
        u->flags = (u->flags | USER_SKIP_SANITIZE) & ~USER_SANITIZE;
    } else if (!strcasecmp(op, "sanitize-payload")) {
        u->flags = (u->flags | USER_SANITIZE) & ~USER_SKIP_SANITIZE;
    } else if (!strcasecmp(op, "nopass")) {
        u->flags |= USER_NOPASS;
        user_reset_passwords(u);
    } else if (!strcasecmp(op, "resetpass")) {
        u->flags &= ~USER_NOPASS;
        user_reset_passwords(u);
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        err = user_password_op(u, op, len);
    } else if (op[0] == '(' && op[len - 1] == ')') {
        acl_selector s;
        err = sel_from_opset(&s, op, len);
        if (!err) {
            u->sel = realloc(u->sel, (size_t)(u->nsel + 1) * sizeof(*u->sel));
            u->sel[u->nsel++] = s;
        }
    } else if (!strcasecmp(op, "clearselectors")) {
        for (int i = 1; i < u->nsel; i++)
            acl_sel_free(&u->sel[i]);
        u->nsel = 1;
    } else if (!strcasecmp(op, "reset")) {
        static const char *const steps[] = {"resetpass", "resetkeys",        "resetchannels",
                                            "off",       "sanitize-payload", "clearselectors",
                                            "-@all"};
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
            acl_user_apply(u, steps[i], strlen(steps[i]));
            if (i == 2 && cfg.acl_pubsub_default) acl_user_apply(u, "allchannels", 11);
        }
    } else {
        err = acl_sel_apply(&u->sel[0], op, len);
    }
    acl_user_changed(u);
    return err;
}

const char *acl_error_text(int err)
{
    switch (err) {
    case ACL_ERR_UNKNOWN:
        return "Unknown command or category name in ACL";
    case ACL_ERR_SYNTAX:
        return "Syntax error";
    case ACL_ERR_KEY_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and "
               "does not have any effect. Try 'resetkeys' to start with an empty list of patterns";
    case ACL_ERR_CHAN_AFTER_ALL:
        return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid "
               "and does not have any effect. Try 'resetchannels' to start with an empty list of "
               "channels";
    case ACL_ERR_NO_PASS:
        return "The password you are trying to remove from the user does not exist";
    case ACL_ERR_BAD_HASH:
        return "The password hash must be exactly 64 characters and contain only lowercase "
               "hexadecimal characters";
    case ACL_ERR_DUP_USER:
        return "Duplicate user found. A user can only be defined once in config files";
    case ACL_ERR_SUB_FIRSTARG:
        return "Allowing first-arg of a subcommand is not supported";
    }
    return "Wrong format";
}

/* Merges selector arguments spread over several ("(~a" "+get)"), as
 * Redis's ACLMergeSelectorArguments. Returns the merged count, or -1 with
 * *bad the argument that opens an unmatched parenthesis. */
int acl_merge_selector_args(int argc, char **argv, size_t *lens, char ***out, size_t **olens,
                            int *bad)
{
    char **m = calloc((size_t)argc + 1, sizeof(char *));
    size_t *ml = calloc((size_t)argc + 1, sizeof(size_t));
    int n = 0, open = -1;
    for (int j = 0; j < argc; j++) {
        const char *op = argv[j];
        size_t len = lens[j];
        /* An opening argument starts a selector even while one is open:
         * Redis's ACLMergeSelectorArguments drops the unclosed one, so the
         * error names the last opening. */
        if (len && op[0] == '(' && op[len - 1] != ')') {
            if (open >= 0) free(m[n]);
            open = j;
            m[n] = malloc(len + 1);
            memcpy(m[n], op, len + 1);
            ml[n] = len;
            continue;
        }
        if (open >= 0) {
            m[n] = realloc(m[n], ml[n] + len + 2);
            m[n][ml[n]] = ' ';
            memcpy(m[n] + ml[n] + 1, op, len + 1);
            ml[n] += len + 1;
            if (len && op[len - 1] == ')') {
                open = -1;
                n++;
            }
            continue;
        }
        m[n] = malloc(len + 1);
        memcpy(m[n], op, len + 1);
        ml[n++] = len;
    }
    if (open >= 0) {
        for (int i = 0; i <= n; i++)
            free(m[i]);
        free(m);
        free(ml);
        *bad = open;
        return -1;
    }
    *out = m;
    *olens = ml;
    return n;
}

char *acl_user_set_rules(acl_user *u, const char *name, size_t nlen, int argc, char **argv,
                         size_t *lens)
{
    char **ops;
    size_t *olens;
    int bad = 0, n = acl_merge_selector_args(argc, argv, lens, &ops, &olens, &bad);
    char *err = NULL;
    if (n < 0) {
        if (asprintf(&err, "Unmatched parenthesis in acl selector starting at '%s'.", argv[bad]) <
            0)
            err = NULL;
        return err;
    }
    acl_user *tmp = acl_user_new(u ? u->name : name, u ? u->name_len : nlen);
    if (u) acl_user_copy(tmp, u);
    for (int j = 0; j < n && !err; j++) {
        int e = acl_user_apply(tmp, ops[j], olens[j]);
        if (e &&
            asprintf(&err, "Error in ACL SETUSER modifier '%s': %s", ops[j], acl_error_text(e)) < 0)
            err = NULL;
    }
    if (!err) {
        if (!u) {
            u = acl_user_new(name, nlen);
            acl_user_insert(u);
            acl_user_copy(u, tmp);
        } else {
            int shrank = acl_channels_shrank(tmp, u);
            acl_user_copy(u, tmp);
            if (shrank && pubsub_acl_channels_revoked) pubsub_acl_channels_revoked(u);
        }
    }
    acl_user_free(tmp);
    for (int j = 0; j < n; j++)
        free(ops[j]);
    free(ops);
    free(olens);
    return err;
}

int acl_channels_shrank(const acl_user *now, const acl_user *before)
{
    for (int i = 0; i < now->nsel; i++)
        if (now->sel[i].flags & SEL_ALLCHANNELS) return 0;
    for (int i = 0; i < before->nsel; i++) {
        const acl_selector *s = &before->sel[i];
        if (s->flags & SEL_ALLCHANNELS) return 1;
        for (int k = 0; k < s->nchans; k++) {
            int kept = 0;
            for (int a = 0; a < now->nsel && !kept; a++)
                for (int b = 0; b < now->sel[a].nchans && !kept; b++)
                    kept = now->sel[a].chans[b].n == s->chans[k].n &&
                           !memcmp(now->sel[a].chans[b].p, s->chans[k].p, s->chans[k].n);
            if (!kept) return 1;
        }
    }
    return 0;
}

/* ---- The default user, requirepass --------------------------------------------- */

void acl_init(void)
{
    if (default_user) return;
    default_user = acl_user_new("default", 7);
    static const char *const rules[] = {"+@all", "~*", "&*", "on", "nopass"};
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        acl_user_apply(default_user, rules[i], strlen(rules[i]));
    acl_user_insert(default_user);
}

acl_user *acl_default_user(void)
{
    if (!default_user) acl_init(); /* unit tests make clients without main's acl_init */
    return default_user;
}

const char *acl_user_name(const acl_user *u)
{
    return u ? u->name : "default";
}

int acl_auth_required(void)
{
    acl_default_user();
    return !(default_user->flags & USER_NOPASS) || (default_user->flags & USER_OFF);
}

int acl_default_nopass(void)
{
    return (acl_default_user()->flags & USER_NOPASS) != 0;
}

int acl_new_client_authenticated(void)
{
    acl_default_user();
    return (default_user->flags & USER_NOPASS) && !(default_user->flags & USER_OFF);
}

void acl_set_default_password(const char *pass)
{
    acl_default_user();
    acl_user_apply(default_user, "resetpass", 9);
    if (pass && *pass) {
        size_t n = strlen(pass);
        char *op = malloc(n + 2);
        op[0] = '>';
        memcpy(op + 1, pass, n + 1);
        acl_user_apply(default_user, op, n + 1);
        free(op);
    } else {
        acl_user_apply(default_user, "nopass", 6);
    }
}

void acl_kill_user_clients(acl_user *u)
{
    for (client *c = server.clients; c; c = c->priv->next) {
        if (c->user != u) continue;
        c->user = default_user;
        c->flags &= ~CLIENT_AUTHENTICATED;
        if (c->priv->executing)
            c->flags |= CLIENT_CLOSE_AFTER_REPLY;
        else
            client_free_async(c);
    }
}
