/*
 * acl_describe.c -- the text of a user's rules as ACL LIST, ACL GETUSER
 * and ACL SAVE print it: a user's flags, passwords and selectors, and a
 * selector's command, key and channel rules. Apart from acl.c, which
 * parses and applies the rules, because this is the inverse: it must give
 * redis-server's exact strings for the same rules.
 *
 * Describing the command rules follows Redis's algorithm, so that the
 * strings match redis-server's for the same rules: start from +@all or
 * -@all, repeatedly apply the category that best fits the remaining
 * differences (more commands in common than different, fewest differences,
 * then most in common), then single commands and first arguments in the
 * command table's order.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "server/acl_internal.h"

typedef struct sb {
    char *p;
    size_t n, cap;
} sb;

static void sb_add(sb *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_str(sb *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static char *sb_done(sb *b)
{
    if (!b->p) return strdup("");
    return b->p;
}

/* How many commands of category cat s allows (*on) and denies (*off). */
static void count_category(const acl_selector *s, uint32_t cat, long *on, long *off)
{
    *on = *off = 0;
    for (int i = 0; i < command_count(); i++) {
        const struct command *cmd = command_list_order(i);
        if (!(command_categories(cmd) & cat)) continue;
        if (acl_sel_bit_get(s, command_id(cmd)))
            (*on)++;
        else
            (*off)++;
    }
}

/* The categories part of s's description into b: while a category not
 * yet applied has more commands where tmp differs from fake's start than
 * where it agrees, the best one (fewest differences, then most in common)
 * is applied to fake (what the description says so far) and undone in tmp
 * (what is left to say). */
static void describe_categories(sb *b, acl_selector *fake, acl_selector *tmp, int additive)
{
    char applied[ACL_NCATS] = {0};
    for (;;) {
        int best = -1;
        long mindiff = LONG_MAX, maxsame = 0;
        for (size_t j = 0; j < ACL_NCATS; j++) {
            if (applied[j]) continue;
            long on, off;
            count_category(tmp, acl_categories[j].bit, &on, &off);
            long diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = (int)j;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        acl_sel_set_category(fake, acl_categories[best].bit, additive);
        acl_sel_set_category(tmp, acl_categories[best].bit, !additive);
        sb_str(b, additive ? "+@" : "-@");
        sb_str(b, acl_categories[best].name);
        sb_str(b, " ");
        applied[best] = 1;
    }
}

char *acl_selector_describe_commands(const acl_selector *s)
{
    sb b = {0};
    acl_selector fake, tmp;
    acl_sel_init(&fake, 0);
    acl_sel_init(&tmp, 0);
    int additive = !acl_sel_bit_get(s, ACL_FUTURE_BIT);
    sb_str(&b, additive ? "-@all " : "+@all ");
    acl_sel_apply(&fake, additive ? "-@all" : "+@all", 5);
    memcpy(tmp.cmds, s->cmds, sizeof(tmp.cmds));
    describe_categories(&b, &fake, &tmp, additive);
    for (int i = 0; i < command_count(); i++) {
        const struct command *cmd = command_list_order(i);
        int id = command_id(cmd), ub = acl_sel_bit_get(s, id);
        if (ub != acl_sel_bit_get(&fake, id)) {
            sb_str(&b, ub ? "+" : "-");
            sb_str(&b, cmd->name);
            sb_str(&b, " ");
            acl_sel_change_perm(&fake, cmd, ub);
        }
        /* a container's first arguments follow its subcommands */
        const struct command *parent = command_parent(cmd);
        int n;
        const struct command *owner = NULL;
        if (!parent && !command_subcommands(cmd, &n))
            owner = cmd;
        else if (parent && cmd == command_subcommands(parent, &n) + n - 1)
            owner = parent;
        if (!owner || acl_sel_bit_get(s, command_id(owner))) continue;
        for (int k = 0; k < s->nfargs; k++) {
            if (s->fargs[k].id != command_id(owner)) continue;
            sb_str(&b, "+");
            sb_str(&b, owner->name);
            sb_str(&b, "|");
            sb_str(&b, s->fargs[k].arg);
            sb_str(&b, " ");
        }
    }
    acl_sel_free(&fake);
    acl_sel_free(&tmp);
    if (b.n) b.p[--b.n] = '\0'; /* the last space */
    return sb_done(&b);
}

static void key_pattern(sb *b, const acl_str *k)
{
    sb_str(b, k->perm == PERM_ALL ? "~" : k->perm == PERM_READ ? "%R~" : "%W~");
    sb_add(b, k->p, k->n);
}

char *acl_selector_describe_keys(const acl_selector *s)
{
    sb b = {0};
    if (s->flags & SEL_ALLKEYS) return strdup("~*");
    for (int i = 0; i < s->nkeys; i++) {
        if (i) sb_str(&b, " ");
        key_pattern(&b, &s->keys[i]);
    }
    return sb_done(&b);
}

char *acl_selector_describe_channels(const acl_selector *s)
{
    sb b = {0};
    if (s->flags & SEL_ALLCHANNELS) return strdup("&*");
    for (int i = 0; i < s->nchans; i++) {
        if (i) sb_str(&b, " ");
        sb_str(&b, "&");
        sb_add(&b, s->chans[i].p, s->chans[i].n);
    }
    return sb_done(&b);
}

static void describe_selector(sb *b, const acl_selector *s)
{
    if (s->flags & SEL_ALLKEYS) {
        sb_str(b, "~* ");
    } else {
        for (int i = 0; i < s->nkeys; i++) {
            key_pattern(b, &s->keys[i]);
            sb_str(b, " ");
        }
    }
    if (s->flags & SEL_ALLCHANNELS) {
        sb_str(b, "&* ");
    } else {
        sb_str(b, "resetchannels ");
        for (int i = 0; i < s->nchans; i++) {
            sb_str(b, "&");
            sb_add(b, s->chans[i].p, s->chans[i].n);
            sb_str(b, " ");
        }
    }
    char *rules = acl_selector_describe_commands(s);
    sb_str(b, rules);
    free(rules);
}

const acl_flag_name acl_flag_names[ACL_NFLAG_NAMES] = {
    {USER_ON, "on"},
    {USER_OFF, "off"},
    {USER_NOPASS, "nopass"},
    {USER_SKIP_SANITIZE, "skip-sanitize-payload"},
    {USER_SANITIZE, "sanitize-payload"}};

const char *acl_user_describe(acl_user *u)
{
    if (u->descr) return u->descr;
    sb b = {0};
    for (int i = 0; i < ACL_NFLAG_NAMES; i++) {
        if (!(u->flags & acl_flag_names[i].bit)) continue;
        sb_str(&b, acl_flag_names[i].name);
        sb_str(&b, " ");
    }
    for (int i = 0; i < u->npass; i++) {
        sb_str(&b, "#");
        sb_add(&b, u->pass[i], 64);
        sb_str(&b, " ");
    }
    for (int i = 0; i < u->nsel; i++) {
        if (i) sb_str(&b, " (");
        describe_selector(&b, &u->sel[i]);
        if (i) sb_str(&b, ")");
    }
    u->descr = sb_done(&b);
    return u->descr;
}
