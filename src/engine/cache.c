/*
 * cache.c -- the block cache (cache.h): 16 shards chosen by the key's hash,
 * each an LRU list with its own mutex and a chained hash table, as in
 * LevelDB's LRUCache, with two changes that keep a cache hit from writing
 * to the neighbours of its entry (cache misses on a hot read path):
 * entries in use stay on the list, and a hit moves its entry to the new end
 * only when it has drifted out of the newest quarter.
 *
 * Invariants (per shard, under its mutex):
 *   C1. An entry is in the hash table iff in_cache iff it is on the list.
 *       refs = (in_cache ? 1 : 0) + handles out; at 0 the entry is freed.
 *   C2. usage = sum of charge over in_cache entries.
 *   C3. Eviction takes entries from the old end of the list, only with
 *       refs == 1 (no handle); an entry with handles out met there is moved
 *       to the new end instead (it is in use, hence recently used). So a
 *       value is never freed under a handle.
 *   C4. tick counts moves to the new end; e->tick is the tick of e's last
 *       move. A hit moves e again only when more than elems/4 moves came
 *       since: e is then no longer among the newest quarter. An entry hit
 *       at least once per elems/4 insertions never reaches the old end.
 *   C5. refs changes only by atomic operations. It rises only under the
 *       mutex (lookup, insert) but a handle's reference is dropped without
 *       it (a hit costs one lock, not two). That is safe: the decrement
 *       that reaches 0 frees the entry whoever makes it; while in_cache the
 *       cache's own reference keeps refs >= 1, so a lookup never revives a
 *       dying entry; and eviction, which reads refs under the mutex, may at
 *       worst see a handle that is just going and keep the entry a while.
 *   C6. A shard's bucket array (htable) carries its own mask and is never
 *       freed before the cache: growing retires the old one onto the
 *       shard's list. So a reader without the mutex (cache_prefetch,
 *       cache_prefetch_entry) may load s->table and a slot of it at any
 *       time; what it reads may be stale (an entry since moved or freed),
 *       and it uses it only as a prefetch address, never dereferences it.
 *       The retired arrays together are smaller than the live one.
 * The hit and miss counters are updated with relaxed atomics per shard and
 * summed on demand: they are statistics, not synchronisation.
 *
 * Prefetching: a reader of many keys at once (eng_multi_get) calls
 * cache_prefetch for every key, then cache_prefetch_entry for every key,
 * then looks each up: the bucket slot's and the first entry's cache misses
 * of all keys overlap instead of following each other inside the lookups.
 * The fields a lookup and its caller read (key, chain link, value, refs,
 * charge) lie in an entry's first 48 bytes, so two prefetches cover them
 * wherever the allocator put the entry. A shard keeps at most one entry
 * per two buckets, so that few chains are longer than one (a second entry
 * is a cache miss no prefetch saw).
 */
#include "cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_SHARD_BITS 4
#define CACHE_SHARDS (1 << CACHE_SHARD_BITS)

struct cache_handle {
    /* what a lookup and its caller read (C6: within the first 48 bytes) */
    uint64_t file, offset;
    struct cache_handle *next_hash;
    void *value;
    uint32_t hash;
    uint32_t refs;
    size_t charge;
    /* the rest */
    int in_cache;
    uint64_t tick; /* C4 */
    void (*deleter)(void *value);
    struct cache_handle *next, *prev; /* on the shard's list while in_cache */
};
typedef struct cache_handle entry;

/* A shard's bucket array; mask + 1 buckets, a power of 2 (C6). */
typedef struct htable {
    uint32_t mask;
    struct htable *retired; /* older arrays, freed with the cache */
    entry *slot[];
} htable;

typedef struct shard {
    pthread_mutex_t mu;
    size_t capacity, usage;
    entry lru;     /* dummy head; lru.next is the oldest, lru.prev the newest */
    htable *table; /* written under mu, read without it by the prefetches (C6) */
    uint32_t elems;
    uint64_t tick; /* C4 */
    uint64_t hits, misses;
    char pad[64];
} shard;

struct block_cache {
    shard shards[CACHE_SHARDS];
    size_t capacity;
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "strata: out of memory in block cache\n");
        abort();
    }
    return p;
}

static uint32_t key_hash(uint64_t file, uint64_t offset)
{
    uint64_t h = file * UINT64_C(0x9E3779B97F4A7C15) ^ (offset + UINT64_C(0x632BE59BD9B4E019));
    h ^= h >> 29;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    h ^= h >> 32;
    return (uint32_t)h;
}

static void list_remove(entry *e)
{
    e->next->prev = e->prev;
    e->prev->next = e->next;
}

static void list_append(entry *head, entry *e) /* newest at head->prev */
{
    e->next = head;
    e->prev = head->prev;
    e->prev->next = e;
    e->next->prev = e;
}

/* The slot that points to the entry for (file, offset), or to the NULL at
 * the end of its chain. */
static entry **find_slot(shard *s, uint64_t file, uint64_t offset, uint32_t hash)
{
    entry **p = &s->table->slot[hash & s->table->mask];
    while (*p && ((*p)->hash != hash || (*p)->file != file || (*p)->offset != offset))
        p = &(*p)->next_hash;
    return p;
}

static htable *htable_new(uint32_t buckets)
{
    htable *t = xcalloc(1, sizeof(htable) + (size_t)buckets * sizeof(entry *));
    t->mask = buckets - 1;
    return t;
}

/* Doubles the buckets; the old array is retired, not freed (C6). */
static void table_grow(shard *s)
{
    htable *old = s->table, *t = htable_new(2 * (old->mask + 1));
    for (uint32_t i = 0; i <= old->mask; i++) {
        entry *e = old->slot[i];
        while (e) {
            entry *next = e->next_hash;
            entry **slot = &t->slot[e->hash & t->mask];
            e->next_hash = *slot;
            *slot = e;
            e = next;
        }
    }
    t->retired = old;
    __atomic_store_n(&s->table, t, __ATOMIC_RELEASE);
}

/* Drops one reference; frees the entry after the last (C1). refs is
 * atomic because cache_release drops a handle's reference without the
 * shard mutex (C5). */
static void unref(entry *e)
{
    if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        e->deleter(e->value);
        free(e);
    }
}

static inline uint32_t refs_of(const entry *e)
{
    return __atomic_load_n(&e->refs, __ATOMIC_ACQUIRE);
}

/* usage is written under the mutex but read without it by cache_release
 * (C5), hence the relaxed atomics. */
static inline void usage_add(shard *s, size_t delta, int sign)
{
    size_t u = sign > 0 ? s->usage + delta : s->usage - delta;
    __atomic_store_n(&s->usage, u, __ATOMIC_RELAXED);
}

/* Moves e to the new end of the list. REQUIRES: s->mu, e->in_cache. */
static void promote(shard *s, entry *e)
{
    list_remove(e);
    list_append(&s->lru, e);
    e->tick = ++s->tick;
}

/* Takes e (already unlinked from the table) out of the cache. REQUIRES: s->mu. */
static void finish_erase(shard *s, entry *e)
{
    list_remove(e);
    e->in_cache = 0;
    usage_add(s, e->charge, -1);
    s->elems--;
    unref(e);
}

static void evict(shard *s)
{
    uint32_t budget = s->elems; /* each entry in use is passed over at most once */
    while (s->usage > s->capacity && s->lru.next != &s->lru && budget-- > 0) {
        entry *old = s->lru.next;
        if (refs_of(old) > 1) { /* C3 */
            promote(s, old);
            continue;
        }
        *find_slot(s, old->file, old->offset, old->hash) = old->next_hash;
        finish_erase(s, old);
    }
}

block_cache *cache_new(size_t capacity_bytes)
{
    block_cache *c = xcalloc(1, sizeof(*c));
    for (int i = 0; i < CACHE_SHARDS; i++) {
        shard *s = &c->shards[i];
        pthread_mutex_init(&s->mu, NULL);
        s->lru.next = s->lru.prev = &s->lru;
        s->table = htable_new(64);
    }
    cache_set_capacity(c, capacity_bytes);
    return c;
}

void cache_free(block_cache *c)
{
    if (!c) return;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        shard *s = &c->shards[i];
        /* REQUIRES of cache_free: no handles out, so every entry goes */
        while (s->lru.next != &s->lru) {
            entry *e = s->lru.next;
            *find_slot(s, e->file, e->offset, e->hash) = e->next_hash;
            finish_erase(s, e);
        }
        for (htable *t = s->table, *next; t; t = next) {
            next = t->retired;
            free(t);
        }
        pthread_mutex_destroy(&s->mu);
    }
    free(c);
}

static shard *shard_of(const block_cache *c, uint32_t hash)
{
    return (shard *)&c->shards[hash >> (32 - CACHE_SHARD_BITS)];
}

/* The entry of (file, offset) with a reference taken, or NULL; promoted
 * and counted as a hit or miss when `counted`. */
static entry *lookup(block_cache *c, uint64_t file, uint64_t offset, int counted)
{
    uint32_t hash = key_hash(file, offset);
    shard *s = shard_of(c, hash);
    pthread_mutex_lock(&s->mu);
    entry *e = *find_slot(s, file, offset, hash);
    if (e) {
        __atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED); /* C5: releases race with it */
        if (counted && s->tick - e->tick > s->elems / 4) promote(s, e); /* C4 */
    }
    pthread_mutex_unlock(&s->mu);
    if (counted) __atomic_fetch_add(e ? &s->hits : &s->misses, 1, __ATOMIC_RELAXED);
    return e;
}

cache_handle *cache_lookup(block_cache *c, uint64_t file, uint64_t offset)
{
    return lookup(c, file, offset, 1);
}

cache_handle *cache_lookup_quiet(block_cache *c, uint64_t file, uint64_t offset)
{
    return lookup(c, file, offset, 0);
}

cache_handle *cache_insert(block_cache *c, uint64_t file, uint64_t offset, void *value,
                           size_t charge, void (*deleter)(void *value))
{
    uint32_t hash = key_hash(file, offset);
    shard *s = shard_of(c, hash);
    entry *e = xcalloc(1, sizeof(*e));
    e->file = file;
    e->offset = offset;
    e->value = value;
    e->deleter = deleter;
    e->charge = charge;
    e->hash = hash;
    e->refs = 1; /* the caller's handle */
    pthread_mutex_lock(&s->mu);
    if (s->capacity > 0) {
        e->refs++; /* the cache's own reference */
        e->in_cache = 1;
        list_append(&s->lru, e);
        e->tick = ++s->tick;
        usage_add(s, charge, 1);
        entry **slot = find_slot(s, file, offset, hash);
        entry *old = *slot;
        e->next_hash = old ? old->next_hash : NULL;
        *slot = e;
        s->elems++;
        if (old)
            finish_erase(s, old); /* replaced: freed once its handles are released */
        else if (s->elems > (s->table->mask + 1) / 2)
            table_grow(s);
        evict(s);
    } /* else: caching is off; the handle alone owns the entry (C1) */
    pthread_mutex_unlock(&s->mu);
    return e;
}

/* The bucket slot of (file, offset) in the shard's current array (C6). */
static entry *const *slot_unlocked(const block_cache *c, uint64_t file, uint64_t offset)
{
    uint32_t hash = key_hash(file, offset);
    const shard *s = shard_of(c, hash);
    const htable *t = __atomic_load_n(&s->table, __ATOMIC_ACQUIRE);
    return &t->slot[hash & t->mask];
}

void cache_prefetch(const block_cache *c, uint64_t file, uint64_t offset)
{
    __builtin_prefetch(slot_unlocked(c, file, offset));
}

void cache_prefetch_entry(const block_cache *c, uint64_t file, uint64_t offset)
{
    /* C6: the slot is readable; the entry it names may be gone, so it is
     * only prefetched */
    const char *e = (const char *)__atomic_load_n(slot_unlocked(c, file, offset), __ATOMIC_RELAXED);
    if (!e) return;
    __builtin_prefetch(e);
    __builtin_prefetch(e + 47);
}

void *cache_value(cache_handle *h)
{
    return h->value;
}

void cache_release(block_cache *c, cache_handle *h)
{
    shard *s = shard_of(c, h->hash);
    unref(h); /* C5 */
    /* An entry passed over by evict while in use (C3) may have left the
     * shard over capacity; it can go now. */
    if (__atomic_load_n(&s->usage, __ATOMIC_RELAXED) >
        __atomic_load_n(&s->capacity, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&s->mu);
        evict(s);
        pthread_mutex_unlock(&s->mu);
    }
}

void cache_erase_file(block_cache *c, uint64_t file)
{
    for (int i = 0; i < CACHE_SHARDS; i++) {
        shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        for (uint32_t b = 0; b <= s->table->mask; b++) {
            entry **p = &s->table->slot[b];
            while (*p) {
                entry *e = *p;
                if (e->file == file) {
                    *p = e->next_hash;
                    finish_erase(s, e);
                } else {
                    p = &e->next_hash;
                }
            }
        }
        pthread_mutex_unlock(&s->mu);
    }
}

void cache_set_capacity(block_cache *c, size_t capacity_bytes)
{
    __atomic_store_n(&c->capacity, capacity_bytes, __ATOMIC_RELAXED);
    size_t per = (capacity_bytes + CACHE_SHARDS - 1) / CACHE_SHARDS;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu);
        __atomic_store_n(&s->capacity, per, __ATOMIC_RELAXED);
        evict(s);
        pthread_mutex_unlock(&s->mu);
    }
}

void cache_set_capacity_lazy(block_cache *c, size_t capacity_bytes)
{
    __atomic_store_n(&c->capacity, capacity_bytes, __ATOMIC_RELAXED);
    size_t per = (capacity_bytes + CACHE_SHARDS - 1) / CACHE_SHARDS;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        shard *s = &c->shards[i];
        pthread_mutex_lock(&s->mu); /* no eviction here: only the new limit */
        __atomic_store_n(&s->capacity, per, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&s->mu);
    }
}

size_t cache_capacity(const block_cache *c)
{
    return __atomic_load_n(&c->capacity, __ATOMIC_RELAXED);
}

size_t cache_usage(const block_cache *c)
{
    size_t u = 0;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        shard *s = (shard *)&c->shards[i];
        pthread_mutex_lock(&s->mu);
        u += s->usage;
        pthread_mutex_unlock(&s->mu);
    }
    return u;
}

uint64_t cache_hits(const block_cache *c)
{
    uint64_t n = 0;
    for (int i = 0; i < CACHE_SHARDS; i++)
        n += __atomic_load_n(&c->shards[i].hits, __ATOMIC_RELAXED);
    return n;
}

uint64_t cache_misses(const block_cache *c)
{
    uint64_t n = 0;
    for (int i = 0; i < CACHE_SHARDS; i++)
        n += __atomic_load_n(&c->shards[i].misses, __ATOMIC_RELAXED);
    return n;
}
