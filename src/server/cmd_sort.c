/*
 * cmd_sort.c -- SORT and SORT_RO: Redis 7.0's option parsing and error
 * texts (sort.c); the sorting is the keyspace's (ks_sort). COMMAND GETKEYS
 * of SORT names the STORE key too (sort_getkeys, Redis's sortGetKeys).
 */
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/server.h"

static void reply_rows(void *arg, const ks_field *out, size_t n)
{
    client *c = arg;
    add_reply_array_len(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        if (out[i].vl)
            add_reply_bulk(c, out[i].f, out[i].fl);
        else
            add_reply_null(c);
    }
}

static void sort_generic(client *c, int readonly)
{
    ks_sort_opts o = {.limit_start = 0, .limit_count = -1};
    ks_field *gets = calloc((size_t)c->argc, sizeof(*gets));
    if (!gets) return add_reply_error(c, "ERR out of memory");
    for (int j = 2; j < c->argc; j++) {
        int left = c->argc - j - 1;
        const arg *a = &c->argv[j];
        if (arg_is(a, "asc")) {
            o.desc = 0;
        } else if (arg_is(a, "desc")) {
            o.desc = 1;
        } else if (arg_is(a, "alpha")) {
            o.alpha = 1;
        } else if (arg_is(a, "limit") && left >= 2) {
            if (arg_to_ll(c, &c->argv[j + 1], &o.limit_start) < 0 ||
                arg_to_ll(c, &c->argv[j + 2], &o.limit_count) < 0)
                goto done;
            j += 2;
        } else if (!readonly && arg_is(a, "store") && left >= 1) {
            o.store = c->argv[++j].ptr;
            o.storelen = c->argv[j].len;
        } else if (arg_is(a, "by") && left >= 1) {
            o.by = c->argv[++j].ptr;
            o.bylen = c->argv[j].len;
        } else if (arg_is(a, "get") && left >= 1) {
            gets[o.ngets++] = (ks_field){c->argv[j + 1].ptr, c->argv[j + 1].len, NULL, 0};
            j++;
        } else {
            add_reply_error(c, ERR_SYNTAX);
            goto done;
        }
    }
    o.gets = gets;
    o.script = (c->flags & CLIENT_SCRIPT) != 0;
    uint64_t stored = 0;
    ks_status st =
        ks_sort(client_ks(c), c->argv[1].ptr, c->argv[1].len, &o, reply_rows, c, &stored);
    if (st != KS_OK)
        add_reply_ks_error(c, st, client_ks(c));
    else if (o.store)
        add_reply_long_long(c, (long long)stored);
done:
    free(gets);
}

void cmd_sort(client *c)
{
    sort_generic(c, 0);
}

void cmd_sort_ro(client *c)
{
    sort_generic(c, 1);
}

/* The keys of SORT argv[0..argc): the sorted key and the last STORE's
 * (Redis skips LIMIT's two arguments and GET's and BY's one, but not
 * STORE's). */
int sort_getkeys(const arg *argv, int argc, int *pos)
{
    int n = 0, store = -1;
    pos[n++] = 1;
    for (int i = 2; i < argc; i++) {
        if (arg_is(&argv[i], "limit"))
            i += 2;
        else if (arg_is(&argv[i], "get") || arg_is(&argv[i], "by"))
            i += 1;
        else if (arg_is(&argv[i], "store") && i + 1 < argc)
            store = i + 1;
    }
    if (store >= 0) pos[n++] = store;
    return n;
}
