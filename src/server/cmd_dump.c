/*
 * cmd_dump.c -- DUMP and RESTORE (Redis 7.0's cluster.c replies and
 * checks, in its order: options, BUSYKEY, TTL, payload). The payload work
 * is the keyspace's (ks_dump / ks_restore, ENCODING.md "DUMP payloads");
 * RESTORE's IDLETIME and FREQ seed the key's access slot (key_access.c),
 * which is why its row leaves the keys' access time alone (NT).
 */
#include <stdint.h>

#include "keyspace/keyspace.h"
#include "server/server.h"

void cmd_dump(client *c)
{
    ks_val v;
    ks_status st = ks_dump(client_ks(c), c->argv[1].ptr, c->argv[1].len, &v);
    if (st == KS_NOTFOUND) return add_reply_null(c);
    if (st != KS_OK) return add_reply_ks_error(c, st, client_ks(c));
    add_reply_bulk(c, v.p, v.n);
    ks_val_free(&v);
}

/* RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f] */
void cmd_restore(client *c)
{
    int replace = 0, absttl = 0;
    long long ttl, idle = -1, freq = -1;
    for (int j = 4; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(&c->argv[j], "replace")) {
            replace = 1;
        } else if (arg_is(&c->argv[j], "absttl")) {
            absttl = 1;
        } else if (arg_is(&c->argv[j], "idletime") && more >= 1 && freq == -1) {
            if (arg_to_ll(c, &c->argv[++j], &idle) < 0) return;
            if (idle < 0) return add_reply_error(c, "Invalid IDLETIME value, must be >= 0");
        } else if (arg_is(&c->argv[j], "freq") && more >= 1 && idle == -1) {
            if (arg_to_ll(c, &c->argv[++j], &freq) < 0) return;
            if (freq < 0 || freq > 255)
                return add_reply_error(c, "Invalid FREQ value, must be >= 0 and <= 255");
        } else {
            return add_reply_error(c, ERR_SYNTAX);
        }
    }
    const arg *key = &c->argv[1];
    ks_ctx *ks = client_ks(c);
    ks_type t = KS_NONE;
    ks_status st = replace ? KS_OK : ks_type_of(ks, key->ptr, key->len, &t);
    if (st == KS_OK && t != KS_NONE)
        return add_reply_error(c, "BUSYKEY Target key name already exists.");
    if (st != KS_OK && st != KS_NOTFOUND) return add_reply_ks_error(c, st, ks);
    if (arg_to_ll(c, &c->argv[2], &ttl) < 0) return;
    if (ttl < 0) return add_reply_error(c, "Invalid TTL value, must be >= 0");
    int64_t expire = ttl;
    if (ttl && !absttl) /* an overflowing sum is in the past, as Redis's wrap-around */
        expire = ttl > INT64_MAX - ks->now_ms ? 1 : ttl + ks->now_ms;
    st = ks_restore(ks, key->ptr, key->len, c->argv[3].ptr, c->argv[3].len, replace, expire);
    if (st != KS_OK) return add_reply_ks_error(c, st, ks);
    if (!expire || expire > ks->now_ms)
        key_access_set(c->db, key->ptr, key->len,
                       idle > ks->now_ms / 1000 ? ks->now_ms
                       : idle > 0               ? idle * 1000
                                                : 0,
                       (int)freq);
    add_reply_ok(c);
}
