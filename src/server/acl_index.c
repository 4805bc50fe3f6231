/*
 * acl_index.c -- ACL key permissions for index queries.
 *
 * The entries of an index are its hashes' fields: IDX.RANGE ... HASHES and
 * FT.SEARCH return them, and even a keys-only reply or an aggregate tells
 * which keys exist and what they hold. A restricted user may therefore
 * query an index only when one of its read key patterns covers every key
 * the index can hold: for each of the index's prefixes, a pattern "*" or
 * "<p>*" with p a prefix of it (acl_check_prefix_read). Refusing the query
 * rather than filtering its results keeps totals, LIMIT pages and
 * aggregates the same for every user who may run it.
 */
#include <stdlib.h>
#include <string.h>

#include "index/ft.h"
#include "index/index.h"
#include "server/acl.h"
#include "server/server.h"

static int refuse(client *c, const char *prefix, size_t len)
{
    char msg[160];
    acl_log_add(c, ACL_DENIED_KEY,
                (c->flags & CLIENT_MULTI) ? ACL_LOG_CTX_MULTI : ACL_LOG_CTX_TOPLEVEL, prefix, len,
                NULL, 0);
    acl_denial_text(ACL_DENIED_KEY, c->cmd, msg, sizeof(msg));
    add_reply_error(c, msg);
    return 1;
}

static int prefix_denied(client *c, const char *p, size_t len)
{
    return acl_check_prefix_read(c->user, c->cmd, c->argc, c->argv, p, len) != ACL_OK;
}

int acl_refuse_idx_query(client *c, const arg *name)
{
    if (acl_user_unrestricted(c->user)) return 0;
    idx_desc d;
    if (idx_describe(client_ks(c), name->ptr, name->len, &d) != KS_OK) return 0; /* its own error */
    if (prefix_denied(c, d.prefix.p, d.prefix.n)) return refuse(c, d.prefix.p, d.prefix.n);
    return 0;
}

int acl_refuse_ft_query(client *c, const arg *name)
{
    if (acl_user_unrestricted(c->user)) return 0;
    ft_info *in = malloc(sizeof(*in));
    if (!in) abort();
    int refused = 0;
    idx_str n = {name->ptr, name->len};
    if (ft_describe(client_ks(c), n, in) == KS_OK) {
        if (in->nprefixes == 0 && prefix_denied(c, "", 0)) refused = refuse(c, "", 0);
        for (size_t i = 0; i < in->nprefixes && !refused; i++)
            if (prefix_denied(c, in->prefixes[i], in->plens[i]))
                refused = refuse(c, in->prefixes[i], in->plens[i]);
    }
    free(in);
    return refused;
}
