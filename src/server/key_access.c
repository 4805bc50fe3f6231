/*
 * key_access.c -- what OBJECT IDLETIME and OBJECT FREQ answer from, without
 * an in-memory copy of every key: a fixed table of KEY_ACCESS_SLOTS slots,
 * each holding the 64-bit hash of one (db, key), the time it was last
 * accessed and its LFU counter. A command that touches keys (the key
 * positions of its command-table row, unless the row says CMD_NOTOUCH as
 * Redis's LOOKUP_NOTOUCH lookups do) overwrites the keys' slots.
 *
 * What that answers honestly:
 * - a key still holding its slot: its exact last access (as Redis, to the
 *   second) and its LFU counter;
 * - any other key has not been accessed since its slot was last taken by
 *   another key (else it would hold the slot), so its idle time is at least
 *   the time since then (or since the server started, for a free slot):
 *   IDLETIME answers that lower bound, never more than the truth, and FREQ
 *   Redis's initial counter decayed over that time.
 * Nothing here is stored; after a restart every key starts untracked.
 * Command thread only.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define KEY_ACCESS_SLOTS (1u << 16) /* 1 MB */
#define LFU_INIT_VAL 5

typedef struct access_slot {
    uint64_t h;     /* 0: free */
    int64_t ms;     /* last access */
    int64_t lfu_ms; /* when the counter was last decremented (Redis's ldt) */
    uint32_t counter;
} access_slot;

static access_slot *slots;
static int64_t started_ms;
static int lfu_on;
static long long lfu_log_factor = 10, lfu_decay_minutes = 1;

void key_access_config(int lfu, long long log_factor, long long decay_minutes)
{
    lfu_on = lfu;
    lfu_log_factor = log_factor;
    lfu_decay_minutes = decay_minutes;
}

int key_access_lfu(void)
{
    return lfu_on;
}

/* A short multiply-xorshift hash over every byte of (db, key): every
 * command pays for it, so it is inline and reads 8 bytes at a time, the
 * tail with overlapping loads (given the length, still every byte). */
static inline uint64_t mix(uint64_t h)
{
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static inline uint64_t key_hash(int db, const char *p, size_t n)
{
    uint64_t h = (0x9E3779B97F4A7C15ull * (uint64_t)(dbmap_stored(db) + 1)) ^ n, w = 0; /* DBM2 */
    const char *end = p + n;
    if (n >= 8) {
        for (; n > 8; p += 8, n -= 8) {
            memcpy(&w, p, 8);
            h = mix(h ^ w);
        }
        memcpy(&w, end - 8, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, end - 4, 4);
        w = (uint64_t)a << 32 | b;
    } else if (n) {
        w = (uint64_t)(unsigned char)p[0] << 16 | (uint64_t)(unsigned char)p[n >> 1] << 8 |
            (unsigned char)end[-1];
    }
    h = mix(h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h ? h : 1;
}

static access_slot *slot_of(uint64_t h)
{
    if (!slots) {
        slots = calloc(KEY_ACCESS_SLOTS, sizeof(*slots));
        if (!slots) return NULL;
        started_ms = server_now_ms();
    }
    return &slots[h & (KEY_ACCESS_SLOTS - 1)];
}

/* Redis's LFUDecrAndReturn: one decrement per lfu-decay-time minutes. */
static uint32_t lfu_decayed(uint32_t counter, int64_t since_ms, int64_t now)
{
    int64_t periods = lfu_decay_minutes ? (now - since_ms) / 60000 / lfu_decay_minutes : 0;
    return periods <= 0 ? counter : (uint64_t)periods > counter ? 0 : counter - (uint32_t)periods;
}

/* Redis's LFULogIncr. */
static uint32_t lfu_incr(uint32_t counter)
{
    if (counter == 255) return 255;
    double r = (double)rand() / RAND_MAX;
    double base = counter > LFU_INIT_VAL ? counter - LFU_INIT_VAL : 0;
    return r < 1.0 / (base * (double)lfu_log_factor + 1) ? counter + 1 : counter;
}

static inline void touch(access_slot *s, uint64_t h, int64_t now)
{
    if (s->h != h) {
        *s = (access_slot){h, now, now, LFU_INIT_VAL};
    } else {
        s->ms = now;
    }
    if (lfu_on) {
        s->counter = lfu_incr(lfu_decayed(s->counter, s->lfu_ms, now));
        s->lfu_ms = now;
    }
}

void key_access_touch(int db, const char *key, size_t klen)
{
    uint64_t h = key_hash(db, key, klen);
    access_slot *s = slot_of(h);
    if (s) touch(s, h, server_now_ms());
}

void key_access_touch_args(client *c)
{
    const struct command *cmd = c->cmd;
    if (!cmd || !cmd->first_key || (cmd->flags & CMD_NOTOUCH)) return;
    if (!slots && !slot_of(0)) return;
    int last = cmd->last_key < 0 ? c->argc + cmd->last_key : cmd->last_key;
    int64_t now = server_now_ms();
    for (int i = cmd->first_key; i <= last && i < c->argc; i += cmd->key_step) {
        uint64_t h = key_hash(c->db, c->argv[i].ptr, c->argv[i].len);
        touch(&slots[h & (KEY_ACCESS_SLOTS - 1)], h, now);
    }
}

void key_access_prefetch(int db, const char *key, size_t klen)
{
    if (slots) __builtin_prefetch(&slots[key_hash(db, key, klen) & (KEY_ACCESS_SLOTS - 1)], 1);
}

/* The slot for key, or NULL when another key (or none) holds it; *since
 * is then when that slot was last taken. */
static const access_slot *lookup(int db, const char *key, size_t klen, int64_t *since)
{
    uint64_t h = key_hash(db, key, klen);
    const access_slot *s = slot_of(h);
    if (s && s->h == h) return s;
    *since = s && s->h ? s->ms : started_ms;
    return NULL;
}

int64_t key_access_idle_ms(int db, const char *key, size_t klen)
{
    int64_t since = 0, now = server_now_ms();
    const access_slot *s = lookup(db, key, klen, &since);
    int64_t idle = now - (s ? s->ms : since);
    return idle < 0 ? 0 : idle;
}

unsigned key_access_freq(int db, const char *key, size_t klen)
{
    int64_t since = 0, now = server_now_ms();
    const access_slot *s = lookup(db, key, klen, &since);
    return s ? lfu_decayed(s->counter, s->lfu_ms, now) : lfu_decayed(LFU_INIT_VAL, since, now);
}

void key_access_set(int db, const char *key, size_t klen, int64_t idle_ms, int freq)
{
    uint64_t h = key_hash(db, key, klen);
    access_slot *s = slot_of(h);
    if (!s) return;
    int64_t now = server_now_ms();
    *s = (access_slot){h, now - (idle_ms > 0 ? idle_ms : 0), now,
                       freq >= 0 ? (uint32_t)freq : LFU_INIT_VAL};
}
