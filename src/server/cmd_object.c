/*
 * cmd_object.c -- OBJECT ENCODING | REFCOUNT | IDLETIME | FREQ | HELP, with
 * Redis 7.0's replies (object.c). ENCODING is the name Redis would report
 * for the value at its size (the keyspace's type rows decide it);
 * REFCOUNT is Redis's: 2147483647 for the shared integers 0..9999 (unless
 * an LRU/LFU maxmemory policy with a maxmemory disables sharing), else 1;
 * IDLETIME and FREQ come from key_access.c, which says what they can
 * answer without a copy of every key. OBJECT itself does not touch the key.
 */
#include <limits.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "server/config.h"
#include "server/server.h"

static const char *object_help[] = {
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    NULL};

#define OBJ_SHARED_INTEGERS 10000

/* Redis shares the integers 0..9999 unless maxmemory is set with an LRU or
 * LFU policy (MAXMEMORY_FLAG_NO_SHARED_INTEGERS). */
static int shared_integers(void)
{
    char mm[64], pol[64];
    if (config_get_value("maxmemory", mm, sizeof(mm)) != 0 || strcmp(mm, "0") == 0) return 1;
    if (config_get_value("maxmemory-policy", pol, sizeof(pol)) != 0) return 1;
    return !strstr(pol, "lru") && !strstr(pol, "lfu");
}

static long long refcount(client *c, const char *enc)
{
    if (strcmp(enc, "int") != 0 || !shared_integers()) return 1;
    ks_val v;
    long long n = -1;
    if (ks_get(client_ks(c), c->argv[2].ptr, c->argv[2].len, &v) == KS_OK) {
        if (!ks_string2ll(v.p, v.n, &n)) n = -1;
        ks_val_free(&v);
    }
    return n >= 0 && n < OBJ_SHARED_INTEGERS ? INT_MAX : 1;
}

void cmd_object(client *c)
{
    const arg *sub = &c->argv[1];
    static const char *subs[] = {"help", "encoding", "refcount", "idletime", "freq"};
    int which = -1;
    for (int i = 0; i < 5; i++)
        if (arg_is(sub, subs[i])) which = i;
    if (which < 0) {
        add_reply_subcommand_error(c);
        return;
    }
    if (c->argc != (which == 0 ? 2 : 3)) { /* as Redis's object|<sub> rows */
        add_reply_error_fmt(c, "wrong number of arguments for 'object|%s' command", subs[which]);
        return;
    }
    if (which == 0) {
        add_reply_help(c, object_help);
        return;
    }
    const arg *key = &c->argv[2];
    const char *enc;
    ks_status st = ks_object_encoding(client_ks(c), key->ptr, key->len, &enc);
    if (st == KS_NOTFOUND) {
        add_reply_null(c);
        return;
    }
    if (st != KS_OK) {
        add_reply_ks_error(c, st, client_ks(c));
        return;
    }
    if (which == 1) {
        add_reply_bulk_cstr(c, enc);
    } else if (which == 2) {
        add_reply_long_long(c, refcount(c, enc));
    } else if (which == 3) {
        if (key_access_lfu())
            add_reply_error(c, "An LFU maxmemory policy is selected, idle time not tracked. Please "
                               "note that when switching between policies at runtime LRU and LFU "
                               "data will take some time to adjust.");
        else
            add_reply_long_long(c, key_access_idle_ms(c->db, key->ptr, key->len) / 1000);
    } else if (!key_access_lfu()) {
        add_reply_error(c, "An LFU maxmemory policy is not selected, access frequency not "
                           "tracked. Please note that when switching between policies at runtime "
                           "LRU and LFU data will take some time to adjust.");
    } else {
        add_reply_long_long(c, key_access_freq(c->db, key->ptr, key->len));
    }
}
