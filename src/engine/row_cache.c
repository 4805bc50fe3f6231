/*
 * row_cache.c -- the row cache (row_cache.h) on a private block_cache:
 * the cache key is (file number, XXH3-64 of the user key), the value one
 * malloc'd row_entry that also holds the user key, compared on every hit
 * so that two keys with equal hashes never answer for each other (the
 * newer insert simply replaces the older one). A row is charged its bytes
 * plus ROW_OVERHEAD for the cache's own entry and the allocator.
 *
 * Admission: a row is inserted only on the second put of its (file, key)
 * within a window. The first put only sets the key's bit in the doorkeeper,
 * a bitmap of at least 8 bits per row the cache can hold (door_window rows
 * of ROW_TYPICAL bytes); it is cleared after door_window first puts, as in
 * TinyLFU: a key not read again within that many others would have been
 * evicted before its next read anyway. A uniform read of a keyspace larger
 * than the cache then pays for an insert and an eviction (several cache
 * misses) on few lookups instead of on most, while a key read again soon,
 * as in the hot set of a query, is cached at its second miss. The
 * bits are relaxed atomics: a lost or stale bit costs one extra miss or
 * one early insert, never a wrong answer. A lookup whose bit is clear
 * does not probe the cache at all (row_cache_get).
 *
 * The hit and miss counters here count answers (RC2), not cache probes: a
 * probe that finds a row newer than the snapshot, or a colliding key, is a
 * miss. They are relaxed atomics: statistics, not synchronisation.
 */
#include "row_cache.h"

#include "cache.h"
#include "dbformat.h"

#include <stdlib.h>
#include <string.h>

#define ROW_OVERHEAD 128 /* cache entry (~100 bytes) and malloc rounding */
#define ROW_SHARDS 16    /* cache.c's shard count: the size cap is per shard */

typedef struct row_entry {
    uint64_t seq;
    uint32_t klen, vlen;
    int type;     /* ENG_TYPE_VALUE, ENG_TYPE_DELETION or ROW_ABSENT */
    char data[1]; /* key bytes, then value bytes */
} row_entry;

#define ROW_PREFETCH 64 /* bytes of a row row_cache_probe prefetches */
#define ROW_TYPICAL 256 /* bytes a row is charged, for sizing the doorkeeper */
#define ROW_DOOR_MAX_BITS (UINT64_C(1) << 27) /* 16 MiB: a window of 32M rows */

struct row_cache {
    block_cache *c;
    size_t max_charge; /* larger rows are not cached: they would flush the shard */
    uint64_t *door;    /* the doorkeeper bitmap: door_bits bits, a power of 2 */
    uint64_t door_bits, door_set, door_window;
    uint64_t hits, misses;
};

row_cache *row_cache_new(size_t capacity_bytes)
{
    if (capacity_bytes == 0) return NULL;
    row_cache *rc = calloc(1, sizeof(*rc));
    if (!rc) abort();
    rc->c = cache_new(capacity_bytes);
    rc->max_charge = capacity_bytes / ROW_SHARDS / 8;
    rc->door_window = capacity_bytes / ROW_TYPICAL + 1;
    rc->door_bits = 1024;
    while (rc->door_bits < rc->door_window * 8 && rc->door_bits < ROW_DOOR_MAX_BITS)
        rc->door_bits *= 2;
    if (rc->door_window > rc->door_bits / 4) rc->door_window = rc->door_bits / 4;
    rc->door = calloc(rc->door_bits / 64, sizeof(uint64_t));
    if (!rc->door) abort();
    return rc;
}

void row_cache_free(row_cache *rc)
{
    if (!rc) return;
    cache_free(rc->c);
    free(rc->door);
    free(rc);
}

/* The doorkeeper word of (file, hash); *bit is its bit there. */
static uint64_t *door_word(const row_cache *rc, uint64_t file, uint64_t hash, uint64_t *bit)
{
    uint64_t h = (hash ^ file * UINT64_C(0x9E3779B97F4A7C15)) & (rc->door_bits - 1);
    *bit = UINT64_C(1) << (h % 64);
    return &rc->door[h / 64];
}

/* Returns 1 when (file, hash) was put lately (its doorkeeper bit was set);
 * otherwise sets the bit and returns 0. */
static int door_admit(row_cache *rc, uint64_t file, uint64_t hash)
{
    uint64_t bit, *w = door_word(rc, file, hash, &bit);
    if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit) return 1;
    __atomic_fetch_or(w, bit, __ATOMIC_RELAXED);
    if (__atomic_add_fetch(&rc->door_set, 1, __ATOMIC_RELAXED) > rc->door_window) {
        __atomic_store_n(&rc->door_set, 0, __ATOMIC_RELAXED);
        for (uint64_t i = 0; i < rc->door_bits / 64; i++)
            __atomic_store_n(&rc->door[i], 0, __ATOMIC_RELAXED);
    }
    return 0;
}

static void count(uint64_t *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* Copies the answer of row e out; returns 0 only when out of memory. */
static int row_answer(const row_entry *e, int *type, uint64_t *found_seq, char **val, size_t *vlen)
{
    if (e->type == ENG_TYPE_VALUE) {
        char *p = malloc(e->vlen ? e->vlen : 1);
        if (!p) return 0;
        if (e->vlen) memcpy(p, e->data + e->klen, e->vlen);
        *val = p;
        *vlen = e->vlen;
    } else if (e->type == ENG_TYPE_DELETION) {
        *val = NULL;
        *vlen = 0;
    }
    *type = e->type;
    *found_seq = e->seq;
    return 1;
}

/* A clear doorkeeper bit means a miss almost always: a row is inserted
 * only once its bit is set (the bitmap may have been cleared since). */
static int door_set(const row_cache *rc, uint64_t file, uint64_t hash)
{
    uint64_t bit, *w = door_word(rc, file, hash, &bit);
    return (__atomic_load_n(w, __ATOMIC_RELAXED) & bit) != 0;
}

/* The handle of (file, key) when its row answers a lookup at seq (RC2). */
static cache_handle *lookup_row(row_cache *rc, uint64_t file, uint64_t hash, slice key,
                                uint64_t seq)
{
    /* skip the probe, which costs a lock and a few cache misses, on the
     * common miss of a workload without reuse */
    cache_handle *h = door_set(rc, file, hash) ? cache_lookup(rc->c, file, hash) : NULL;
    if (!h) return NULL;
    const row_entry *e = cache_value(h);
    int ok = e->klen == key.size && (key.size == 0 || memcmp(e->data, key.data, key.size) == 0);
    if (ok && (e->type == ROW_ABSENT || e->seq <= seq)) return h; /* RC2 */
    cache_release(rc->c, h);
    return NULL;
}

int row_cache_get(row_cache *rc, uint64_t file, uint64_t hash, slice key, uint64_t seq, int *type,
                  uint64_t *found_seq, char **val, size_t *vlen)
{
    if (!rc) return 0;
    cache_handle *h = lookup_row(rc, file, hash, key, seq);
    int ok = h && row_answer(cache_value(h), type, found_seq, val, vlen);
    if (h) cache_release(rc->c, h);
    count(ok ? &rc->hits : &rc->misses);
    return ok;
}

void row_cache_prefetch(const row_cache *rc, uint64_t file, uint64_t hash)
{
    if (!rc) return;
    uint64_t bit;
    __builtin_prefetch(door_word(rc, file, hash, &bit));
    cache_prefetch(rc->c, file, hash);
}

void row_cache_prefetch_entry(const row_cache *rc, uint64_t file, uint64_t hash)
{
    if (rc && door_set(rc, file, hash)) cache_prefetch_entry(rc->c, file, hash);
}

row_pin *row_cache_probe(row_cache *rc, uint64_t file, uint64_t hash)
{
    if (!rc || !door_set(rc, file, hash)) return NULL;
    cache_handle *h = cache_lookup(rc->c, file, hash);
    if (!h) return NULL;
    /* the row's header and key, for row_cache_answer; not the whole row:
     * prefetches of 5-10 lines for each of 100 rows fill the core's miss
     * buffers and stall, and the parse reads the rest in order anyway */
    const char *e = cache_value(h);
    __builtin_prefetch(e);
    __builtin_prefetch(e + ROW_PREFETCH - 1);
    return (row_pin *)h;
}

int row_cache_answer(row_cache *rc, row_pin *pin, slice key, uint64_t seq, int *type,
                     uint64_t *found_seq, const char **val, size_t *vlen)
{
    if (!rc) return 0;
    cache_handle *h = (cache_handle *)pin;
    const row_entry *e = h ? cache_value(h) : NULL;
    int ok = e && e->klen == key.size &&
             (key.size == 0 || memcmp(e->data, key.data, key.size) == 0) &&
             (e->type == ROW_ABSENT || e->seq <= seq); /* RC2 */
    count(ok ? &rc->hits : &rc->misses);
    if (!ok) {
        if (h) cache_release(rc->c, h);
        return 0;
    }
    *type = e->type;
    *found_seq = e->seq;
    *val = e->type == ENG_TYPE_VALUE ? e->data + e->klen : NULL;
    *vlen = e->type == ENG_TYPE_VALUE ? e->vlen : 0;
    return 1;
}

int row_cache_get_pinned(row_cache *rc, uint64_t file, uint64_t hash, slice key, uint64_t seq,
                         int *type, uint64_t *found_seq, const char **val, size_t *vlen,
                         row_pin **pin)
{
    row_pin *p = row_cache_probe(rc, file, hash);
    if (!row_cache_answer(rc, p, key, seq, type, found_seq, val, vlen)) return 0;
    *pin = p;
    return 1;
}

void row_cache_unpin(row_cache *rc, row_pin *pin)
{
    if (rc && pin) cache_release(rc->c, (cache_handle *)pin);
}

void row_cache_put(row_cache *rc, uint64_t file, uint64_t hash, slice key, int type, uint64_t seq,
                   slice val)
{
    if (!rc) return;
    size_t vl = type == ENG_TYPE_VALUE ? val.size : 0;
    size_t charge = sizeof(row_entry) + key.size + vl + ROW_OVERHEAD;
    if (charge > rc->max_charge || key.size > UINT32_MAX || vl > UINT32_MAX) return;
    if (!door_admit(rc, file, hash)) return;
    row_entry *e = malloc(sizeof(row_entry) + key.size + vl);
    if (!e) return; /* a cache may always decline */
    e->seq = type == ROW_ABSENT ? 0 : seq;
    e->klen = (uint32_t)key.size;
    e->vlen = (uint32_t)vl;
    e->type = type;
    if (key.size) memcpy(e->data, key.data, key.size);
    if (vl) memcpy(e->data + key.size, val.data, vl);
    cache_release(rc->c, cache_insert(rc->c, file, hash, e, charge, free));
}

void row_cache_erase_file(row_cache *rc, uint64_t file)
{
    if (rc) cache_erase_file(rc->c, file);
}

size_t row_cache_capacity(const row_cache *rc)
{
    return rc ? cache_capacity(rc->c) : 0;
}

size_t row_cache_usage(const row_cache *rc)
{
    return rc ? cache_usage(rc->c) : 0;
}

uint64_t row_cache_hits(const row_cache *rc)
{
    return rc ? __atomic_load_n(&rc->hits, __ATOMIC_RELAXED) : 0;
}

uint64_t row_cache_misses(const row_cache *rc)
{
    return rc ? __atomic_load_n(&rc->misses, __ATOMIC_RELAXED) : 0;
}
