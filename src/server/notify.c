/*
 * notify.c -- keyspace notifications: the notify-keyspace-events flags
 * (parsed and printed as Redis does) and notify_publish, the slow half of
 * notify_keyspace_event (server.h), which builds the two channel names and
 * publishes through pubsub.c. Also the keyspace's event hook: "expired"
 * when the keyspace removes an expired key, "new" when a write creates one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/pubsub.h"
#include "server/server.h"

int notify_keyspace_flags;

static const struct {
    char ch;
    int flag;
} letters[] = {{'g', NOTIFY_GENERIC},  {'$', NOTIFY_STRING},  {'l', NOTIFY_LIST},
               {'s', NOTIFY_SET},      {'h', NOTIFY_HASH},    {'z', NOTIFY_ZSET},
               {'x', NOTIFY_EXPIRED},  {'e', NOTIFY_EVICTED}, {'t', NOTIFY_STREAM},
               {'d', NOTIFY_MODULE},   {'n', NOTIFY_NEW},     {'K', NOTIFY_KEYSPACE},
               {'E', NOTIFY_KEYEVENT}, {'m', NOTIFY_KEY_MISS}};
#define NLETTERS (sizeof(letters) / sizeof(letters[0]))

int notify_flags_parse(const char *s)
{
    int flags = 0;
    for (; *s; s++) {
        if (*s == 'A') {
            flags |= NOTIFY_ALL;
            continue;
        }
        size_t i;
        for (i = 0; i < NLETTERS && letters[i].ch != *s; i++) {
        }
        if (i == NLETTERS) return -1;
        flags |= letters[i].flag;
    }
    return flags;
}

/* Redis's keyspaceEventsFlagsToString: classes (or "A"), then K, E, m. */
void notify_flags_format(int flags, char *buf, size_t cap)
{
    size_t n = 0;
    if ((flags & NOTIFY_ALL) == NOTIFY_ALL && n + 1 < cap) buf[n++] = 'A';
    for (size_t i = 0; i < NLETTERS && n + 1 < cap; i++) {
        int f = letters[i].flag;
        int is_class = !(f & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT | NOTIFY_KEY_MISS));
        if (is_class && (flags & NOTIFY_ALL) == NOTIFY_ALL) continue; /* as Redis, n too */
        if (flags & f) buf[n++] = letters[i].ch;
    }
    buf[n] = '\0';
}

/* Writes prefix, the db number, "__:" and tail into b (a stack buffer
 * when it fits, else malloc'd); returns the pointer and sets *len. */
static char *channel(char *b, size_t cap, const char *prefix, int db, const char *tail, size_t tl,
                     size_t *len)
{
    char head[40];
    int h = snprintf(head, sizeof(head), "%s%d__:", prefix, db);
    size_t n = (size_t)h + tl;
    char *p = n <= cap ? b : malloc(n);
    if (!p) abort();
    memcpy(p, head, (size_t)h);
    if (tl) memcpy(p + h, tail, tl);
    *len = n;
    return p;
}

void notify_publish(int type, const char *event, int db, const char *key, size_t klen)
{
    if (!(notify_keyspace_flags & type)) return;
    char buf[256];
    size_t n, elen = strlen(event);
    if (notify_keyspace_flags & NOTIFY_KEYSPACE) {
        char *ch = channel(buf, sizeof(buf), "__keyspace@", db, key, klen, &n);
        pubsub_publish(ch, n, event, elen, 0);
        if (ch != buf) free(ch);
    }
    if (notify_keyspace_flags & NOTIFY_KEYEVENT) {
        char *ch = channel(buf, sizeof(buf), "__keyevent@", db, event, elen, &n);
        pubsub_publish(ch, n, key, klen, 0);
        if (ch != buf) free(ch);
    }
}

int notify_new_muted;

/* The keyspace's event hook (ks_set_event_hook). */
static void keyspace_event(void *ectx, ks_event ev, int db, const char *key, size_t klen)
{
    (void)ectx;
    db = dbmap_logical(db); /* DBM2 */
    if (ev == KS_EVENT_EXPIRED) {
        server.stat_expired++;
        notify_keyspace_event(NOTIFY_EXPIRED, "expired", db, key, klen);
    } else if (ev == KS_EVENT_NEW && !notify_new_muted) {
        notify_keyspace_event(NOTIFY_NEW, "new", db, key, klen);
    }
}

void notify_init(keyspace *ks)
{
    ks_set_event_hook(ks, keyspace_event, NULL);
}

void notify_del_if_gone(client *c, const char *key, size_t klen)
{
    ks_type t;
    if ((notify_keyspace_flags & NOTIFY_GENERIC) &&
        ks_type_of(client_ks(c), key, klen, &t) == KS_OK && t == KS_NONE)
        notify_keyspace_event(NOTIFY_GENERIC, "del", c->db, key, klen);
}

int notify_exists(client *c, const char *key, size_t klen)
{
    ks_type t;
    return (notify_keyspace_flags & NOTIFY_GENERIC) &&
           ks_type_of(client_ks(c), key, klen, &t) == KS_OK && t != KS_NONE;
}

void notify_stored(client *c, int type, const char *event, const arg *dst, uint64_t n, int existed)
{
    if (n)
        notify_keyspace_event(type, event, c->db, dst->ptr, dst->len);
    else if (existed)
        notify_keyspace_event(NOTIFY_GENERIC, "del", c->db, dst->ptr, dst->len);
}
