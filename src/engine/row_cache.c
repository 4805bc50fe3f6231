/*
 * row_cache.c -- the row cache (row_cache.h): 16 shards, each an open-
 * addressing hash table of tagged row pointers under its own mutex, with
 * CLOCK eviction. Built for many small rows: a row is one malloc holding
 * its header, key and value, and a slot is 8 bytes, so a 20-byte key with
 * a short value costs about 80 bytes with its slots (a general cache entry
 * with its own list links, hash chain and deleter cost twice that, and so
 * held half the rows in the same capacity).
 *
 * Slots: 0 is empty, SLOT_TOMB a removed row, anything else a row pointer
 * (48 bits) with a tag above it: 8 bits of the file number's hash, 8 of
 * the row's hash. A lookup of hash h probes from slot_start(h) on, linearly, to
 * the first empty slot, comparing tags first and only then the row's file
 * and key, so a collision of hashes (or of tags) is a miss, never a wrong
 * answer. The hash is the key's XXH3 mixed with the file number, so one
 * key's rows of different tables land apart. A table's erasure walks the
 * slots and reads only the rows whose tag carries the table's byte.
 *
 * Eviction: every row has a use bit, set by a hit. To make room the
 * shard's hand walks its slots: a row with the bit set loses it, a row
 * without it and without pins is removed. A row read once per sweep stays.
 *
 * Invariants (per shard, under its mutex unless said otherwise):
 *  RC4. A row is in exactly one slot of its shard's array while it is
 *       cached; refs = (cached ? 1 : 0) + pins out, changed only by atomic
 *       operations; at 0 it is freed, by whoever made it 0. Refs rise only
 *       under the mutex, from a cached row, so a row that left the array is
 *       never pinned again; eviction removes only rows with refs == 1.
 *  RC5. rows + tombs <= 3/4 of the slots and rows <= 1/2: a probe ends at
 *       an empty slot soon. An insert first evicts while rows would pass
 *       1/2, and rewrites the array without tombstones before they would
 *       pass 3/4.
 *  RC6. usage = the sum of the cached rows' charges <= capacity after
 *       every insert.
 *  RC7. A shard's array is allocated with the cache and never replaced
 *       or freed before it: twice as many slots as rows of ROW_SMALL bytes
 *       fit in the shard's share of the capacity, their bytes taken from
 *       that share (what is left is the rows' capacity; RC5 evicts when
 *       smaller rows would overfill the array). So a reader without the
 *       mutex (the prefetches, the tag checks) may load any slot at any
 *       time; it uses it only as a prefetch address or a tag, never
 *       dereferences it.
 *
 * Admission: while its shard has room, a row is inserted at its first
 * put. A full shard inserts a row only on the second put of its (file,
 * key) within a window. The first put only sets the key's bit in the doorkeeper,
 * a bitmap of at least 8 bits per row the cache can hold (door_window rows
 * of ROW_TYPICAL bytes); it is cleared after door_window first puts, as in
 * TinyLFU: a key not read again within that many others would have been
 * evicted before its next read anyway. A uniform read of a keyspace larger
 * than the cache then pays for an insert and an eviction on few lookups
 * instead of on most, while a key read again soon, as in the hot set of a
 * query, is cached at its second miss. The bits are relaxed atomics: a
 * lost or stale bit costs one extra miss or one early insert, never a
 * wrong answer. Lookups do not read the bits (a row stays cached when
 * they are cleared): they look for the row's tag in its slots without the
 * lock first, and take it only when the tag is there.
 *
 * The hit and miss counters count answers (RC2), not probes: a probe that
 * finds a row newer than the snapshot is a miss. They are relaxed atomics:
 * statistics, not synchronisation.
 */
#include "row_cache.h"

#include "dbformat.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ROW_SHARD_BITS 4
#define ROW_SHARDS (1 << ROW_SHARD_BITS)
#define ROW_MIN_SLOTS 64
#define ROW_SMALL 80    /* a small row's bytes with its two slots, for sizing the arrays */
#define ROW_PREFETCH 64 /* bytes of a row row_cache_probe prefetches */
#define ROW_TYPICAL 128 /* bytes a row is charged, for sizing the doorkeeper */
#define ROW_DOOR_MAX_BITS (UINT64_C(1) << 27) /* 16 MiB: a window of 32M rows */
#define SLOT_TOMB UINT64_C(1)
#define PTR_BITS 48
#define PTR_MASK ((UINT64_C(1) << PTR_BITS) - 1)
#define MAYBE_PROBES 4 /* slots row_cache_maybe looks at */

typedef struct row {
    uint64_t file;
    uint64_t seq;
    uint64_t hash; /* mixed (row_hash) */
    uint32_t klen, vlen;
    uint32_t refs; /* RC4: atomic */
    int8_t type;   /* ENG_TYPE_VALUE, ENG_TYPE_DELETION or ROW_ABSENT */
    uint8_t used;  /* the CLOCK bit: relaxed atomic */
    char data[];   /* key bytes, then value bytes */
} row;

typedef struct slots {
    uint64_t n;
    uint64_t s[]; /* relaxed atomics: written under the mutex */
} slots;

typedef struct shard {
    pthread_mutex_t mu;
    slots *tab; /* RC7: fixed */
    size_t rows, tombs, usage, capacity;
    uint64_t hand;
    char pad[64];
} shard;

struct row_cache {
    shard shards[ROW_SHARDS];
    size_t capacity;
    size_t max_charge; /* larger rows are not cached: they would flush the shard */
    uint64_t *door;    /* the doorkeeper bitmap: door_bits bits, a power of 2 */
    uint64_t door_bits, door_set, door_window;
    uint64_t hits, misses;
};

/* ---- Rows and slots -------------------------------------------------------- */

static inline uint64_t row_hash(uint64_t file, uint64_t hash)
{
    uint64_t h = hash ^ (file + 1) * UINT64_C(0x9E3779B97F4A7C15);
    h ^= h >> 29;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    return h ^ h >> 32;
}

static inline shard *shard_of(row_cache *rc, uint64_t h)
{
    return &rc->shards[h >> (64 - ROW_SHARD_BITS)];
}

/* A slot's tag: 8 bits of the file number's hash above 8 bits of the
 * row's, so that a file's erasure reads only the rows whose slots carry
 * its byte. */
static inline uint64_t file_byte(uint64_t file)
{
    return file * UINT64_C(0x9E3779B97F4A7C15) >> 56;
}

static inline uint64_t tag_of(uint64_t h, uint64_t file)
{
    return file_byte(file) << 56 | (h & 0xff) << PTR_BITS;
}

static inline row *slot_row(uint64_t s)
{
    return (row *)(uintptr_t)(s & PTR_MASK);
}

static inline int slot_live(uint64_t s)
{
    return s > SLOT_TOMB;
}

static inline uint64_t slot_load(const slots *t, uint64_t i)
{
    return __atomic_load_n(&t->s[i], __ATOMIC_RELAXED);
}

static inline void slot_store(slots *t, uint64_t i, uint64_t v)
{
    __atomic_store_n(&t->s[i], v, __ATOMIC_RELAXED);
}

/* Where hash h's probe starts in t: the bits below the shard's, scaled
 * to t's size (which need not be a power of 2); the tag's are the low
 * ones. */
static inline uint64_t slot_start(const slots *t, uint64_t h)
{
    return (uint64_t)(((unsigned __int128)(h << ROW_SHARD_BITS) * t->n) >> 64);
}

static inline uint64_t slot_next(const slots *t, uint64_t i)
{
    return i + 1 == t->n ? 0 : i + 1;
}

static slots *slots_new(uint64_t n)
{
    slots *t = calloc(1, sizeof(slots) + n * sizeof(uint64_t));
    if (!t) abort();
    t->n = n;
    return t;
}

/* What a row costs the capacity: its malloc, rounded as an allocator's
 * size classes do (the slots are counted with the array, RC7). */
static size_t row_charge(size_t bytes)
{
    return (bytes + 15) & ~(size_t)15;
}

static size_t charge_of(const row *r)
{
    return row_charge(sizeof(row) + r->klen + r->vlen);
}

static void row_unref(row *r)
{
    if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) free(r);
}

/* The slot holding (file, key) of mixed hash h, or -1; key.size SIZE_MAX
 * takes the first row of (file, h) whatever its key. REQUIRES: mu. */
static int64_t find(const shard *sh, uint64_t h, uint64_t file, slice key)
{
    const slots *t = sh->tab;
    uint64_t tag = tag_of(h, file);
    for (uint64_t i = slot_start(t, h);; i = slot_next(t, i)) {
        uint64_t s = slot_load(t, i);
        if (!s) return -1;
        if (!slot_live(s) || (s & ~PTR_MASK) != tag) continue;
        const row *r = slot_row(s);
        if (r->hash != h || r->file != file) continue;
        if (key.size == SIZE_MAX || /* row_cache_probe: any key of the hash */
            (r->klen == key.size && (key.size == 0 || memcmp(r->data, key.data, key.size) == 0)))
            return (int64_t)i;
    }
}

/* Takes the row out of slot i (RC4: drops the cache's reference).
 * REQUIRES: mu. */
static void remove_at(shard *sh, uint64_t i)
{
    row *r = slot_row(slot_load(sh->tab, i));
    slot_store(sh->tab, i, SLOT_TOMB);
    sh->rows--;
    sh->tombs++;
    sh->usage -= charge_of(r);
    row_unref(r);
}

/* Rewrites the array without tombstones, in place (RC7), from a copy. A
 * reader without the mutex may see it half-written: it only prefetches or
 * checks tags, and a wrong tag check is one extra miss or one extra probe.
 * REQUIRES: mu. */
static void rebuild(shard *sh)
{
    slots *t = sh->tab, *c = slots_new(t->n);
    for (uint64_t i = 0; i < t->n; i++) {
        uint64_t s = slot_load(t, i);
        if (!slot_live(s)) continue;
        uint64_t j = slot_start(c, slot_row(s)->hash);
        while (c->s[j])
            j = slot_next(c, j);
        c->s[j] = s;
    }
    for (uint64_t i = 0; i < t->n; i++)
        slot_store(t, i, c->s[i]);
    free(c);
    sh->tombs = 0;
}

/* CLOCK: frees room for one more row of charge bytes (RC5, RC6); 0 when
 * every row in the way is pinned (two sweeps found none to take).
 * REQUIRES: mu. */
static int make_room(shard *sh, size_t charge)
{
    slots *t = sh->tab;
    for (uint64_t steps = 0; sh->usage + charge > sh->capacity || 2 * (sh->rows + 1) > t->n;
         steps++) {
        if (steps > 2 * t->n) return 0;
        if (sh->hand >= t->n) sh->hand = 0;
        uint64_t i = sh->hand++, s = slot_load(t, i);
        if (!slot_live(s)) continue;
        row *r = slot_row(s);
        if (__atomic_load_n(&r->used, __ATOMIC_RELAXED)) {
            __atomic_store_n(&r->used, 0, __ATOMIC_RELAXED);
            continue;
        }
        if (__atomic_load_n(&r->refs, __ATOMIC_ACQUIRE) == 1) remove_at(sh, i);
    }
    return 1;
}

/* Inserts r (refs 1), replacing a row of the same (file, key). REQUIRES: mu. */
static void insert(shard *sh, row *r, slice key)
{
    int64_t at = find(sh, r->hash, r->file, key);
    if (at >= 0) remove_at(sh, (uint64_t)at);
    if (!make_room(sh, charge_of(r))) {
        free(r); /* a cache may always decline */
        return;
    }
    slots *t = sh->tab;
    if (4 * (sh->rows + sh->tombs + 1) > 3 * t->n) rebuild(sh); /* RC5 */
    uint64_t i = slot_start(t, r->hash);
    while (slot_live(slot_load(t, i)))
        i = slot_next(t, i);
    if (slot_load(t, i) == SLOT_TOMB) sh->tombs--;
    /* the row is complete before its pointer is published, though the
     * readers without the mutex never dereference it (RC7) */
    __atomic_store_n(&t->s[i], tag_of(r->hash, r->file) | (uint64_t)(uintptr_t)r, __ATOMIC_RELEASE);
    sh->rows++;
    sh->usage += charge_of(r);
}

/* ---- Doorkeeper ------------------------------------------------------------ */

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

/* ---- The interface --------------------------------------------------------- */

row_cache *row_cache_new(size_t capacity_bytes)
{
    if (capacity_bytes == 0) return NULL;
    row_cache *rc = calloc(1, sizeof(*rc));
    if (!rc) abort();
    rc->capacity = capacity_bytes;
    for (int i = 0; i < ROW_SHARDS; i++) {
        shard *sh = &rc->shards[i];
        pthread_mutex_init(&sh->mu, NULL);
        size_t cap = capacity_bytes / ROW_SHARDS;
        uint64_t n = 2 * (cap / ROW_SMALL); /* RC7 */
        if (n < ROW_MIN_SLOTS) n = ROW_MIN_SLOTS;
        sh->tab = slots_new(n);
        sh->capacity = cap > n * sizeof(uint64_t) ? cap - n * sizeof(uint64_t) : 0;
    }
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
    for (int i = 0; i < ROW_SHARDS; i++) {
        shard *sh = &rc->shards[i];
        for (uint64_t j = 0; j < sh->tab->n; j++)
            if (slot_live(sh->tab->s[j])) row_unref(slot_row(sh->tab->s[j]));
        free(sh->tab);
        pthread_mutex_destroy(&sh->mu);
    }
    free(rc->door);
    free(rc);
}

static void count(uint64_t *counter)
{
    __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* The slot of hash h, read without the mutex (RC7). */
static uint64_t peek_slot(const row_cache *rc, uint64_t h, uint64_t k)
{
    const slots *t = rc->shards[h >> (64 - ROW_SHARD_BITS)].tab;
    uint64_t i = slot_start(t, h) + k;
    return slot_load(t, i >= t->n ? i - t->n : i);
}

/* 1 when a slot on h's probe path carries h's tag (or the path is long),
 * read without the mutex (RC7): 0 is a miss, but for a row inserted
 * meanwhile. The lookups check this before they take the lock, so a miss
 * costs a slot load, not a lock and a few cache misses. */
static int tagged(const row_cache *rc, uint64_t h, uint64_t file)
{
    uint64_t tag = tag_of(h, file);
    for (uint64_t k = 0; k < MAYBE_PROBES; k++) {
        uint64_t s = peek_slot(rc, h, k);
        if (!s) return 0;
        if (slot_live(s) && (s & ~PTR_MASK) == tag) return 1;
    }
    return 1;
}

/* A hit: the CLOCK bit is set (written only when it was clear, so a hot
 * row's line is not dirtied on every hit). */
static void mark_used(row *r)
{
    if (!__atomic_load_n(&r->used, __ATOMIC_RELAXED))
        __atomic_store_n(&r->used, 1, __ATOMIC_RELAXED);
}

/* The answer of row r, pointing into it. */
static void row_view(const row *r, int *type, uint64_t *found_seq, const char **val, size_t *vlen)
{
    *type = r->type;
    *found_seq = r->seq;
    *val = r->type == ENG_TYPE_VALUE ? r->data + r->klen : NULL;
    *vlen = r->type == ENG_TYPE_VALUE ? r->vlen : 0;
}

/* The row of (file, key), pinned, when it answers a lookup at seq (RC2);
 * its use bit set. */
static row *lookup(row_cache *rc, uint64_t file, uint64_t hash, slice key, uint64_t seq)
{
    uint64_t h = row_hash(file, hash);
    if (!tagged(rc, h, file)) return NULL;
    shard *sh = shard_of(rc, h);
    row *r = NULL;
    pthread_mutex_lock(&sh->mu);
    int64_t i = find(sh, h, file, key);
    if (i >= 0) {
        r = slot_row(slot_load(sh->tab, (uint64_t)i));
        if (r->type == ROW_ABSENT || r->seq <= seq) {          /* RC2 */
            __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED); /* RC4: under mu */
            mark_used(r);
        } else {
            r = NULL;
        }
    }
    pthread_mutex_unlock(&sh->mu);
    return r;
}

int row_cache_get(row_cache *rc, uint64_t file, uint64_t hash, slice key, uint64_t seq, int *type,
                  uint64_t *found_seq, char **val, size_t *vlen)
{
    int t;
    uint64_t fs;
    const char *v;
    size_t n;
    row_pin *pin;
    if (!row_cache_get_pinned(rc, file, hash, key, seq, &t, &fs, &v, &n, &pin)) return 0;
    char *copy = NULL;
    if (t == ENG_TYPE_VALUE && (copy = malloc(n ? n : 1)) != NULL && n) memcpy(copy, v, n);
    row_cache_unpin(rc, pin);
    if (t == ENG_TYPE_VALUE && !copy) return 0; /* out of memory: a miss */
    if (t != ROW_ABSENT) {
        *val = copy;
        *vlen = n;
    }
    *type = t;
    *found_seq = fs;
    return 1;
}

void row_cache_prefetch(const row_cache *rc, uint64_t file, uint64_t hash)
{
    if (!rc) return;
    uint64_t h = row_hash(file, hash);
    const slots *t = rc->shards[h >> (64 - ROW_SHARD_BITS)].tab;
    __builtin_prefetch(&t->s[slot_start(t, h)]);
}

void row_cache_prefetch_entry(const row_cache *rc, uint64_t file, uint64_t hash)
{
    if (!rc) return;
    uint64_t h = row_hash(file, hash), s = peek_slot(rc, h, 0);
    if (!slot_live(s) || (s & ~PTR_MASK) != tag_of(h, file)) return;
    /* RC7: the row may be gone; it is only prefetched */
    __builtin_prefetch(slot_row(s));
    __builtin_prefetch((const char *)slot_row(s) + ROW_PREFETCH - 1);
}

int row_cache_maybe(const row_cache *rc, uint64_t file, uint64_t hash)
{
    return rc && tagged(rc, row_hash(file, hash), file);
}

/* A pin is the row itself, holding the reference probe took (RC4). */
row_pin *row_cache_probe(row_cache *rc, uint64_t file, uint64_t hash)
{
    if (!rc) return NULL;
    uint64_t h = row_hash(file, hash);
    if (!tagged(rc, h, file)) return NULL;
    shard *sh = shard_of(rc, h);
    row *r = NULL;
    pthread_mutex_lock(&sh->mu);
    int64_t i = find(sh, h, file, slice_make(NULL, SIZE_MAX)); /* any key */
    if (i >= 0) {
        r = slot_row(slot_load(sh->tab, (uint64_t)i));
        __atomic_add_fetch(&r->refs, 1, __ATOMIC_RELAXED); /* RC4: under mu */
    }
    pthread_mutex_unlock(&sh->mu);
    if (r) {
        /* the row's header and key, for row_cache_answer; not the whole
         * row: prefetches of 5-10 lines for each of 100 rows fill the
         * core's miss buffers and stall, and the parse reads the rest in
         * order anyway */
        __builtin_prefetch(r->data);
        __builtin_prefetch(r->data + ROW_PREFETCH - 1);
    }
    return (row_pin *)r;
}

int row_cache_answer(row_cache *rc, row_pin *pin, slice key, uint64_t seq, int *type,
                     uint64_t *found_seq, const char **val, size_t *vlen)
{
    if (!rc) return 0;
    row *r = (row *)pin;
    int ok = r && r->klen == key.size &&
             (key.size == 0 || memcmp(r->data, key.data, key.size) == 0) &&
             (r->type == ROW_ABSENT || r->seq <= seq); /* RC2 */
    count(ok ? &rc->hits : &rc->misses);
    if (!ok) {
        if (r) row_unref(r);
        return 0;
    }
    mark_used(r);
    row_view(r, type, found_seq, val, vlen);
    return 1;
}

int row_cache_get_pinned(row_cache *rc, uint64_t file, uint64_t hash, slice key, uint64_t seq,
                         int *type, uint64_t *found_seq, const char **val, size_t *vlen,
                         row_pin **pin)
{
    if (!rc) return 0;
    row *r = lookup(rc, file, hash, key, seq);
    count(r ? &rc->hits : &rc->misses);
    if (!r) return 0;
    row_view(r, type, found_seq, val, vlen);
    *pin = (row_pin *)r;
    return 1;
}

void row_cache_unpin(row_cache *rc, row_pin *pin)
{
    if (rc && pin) row_unref((row *)pin);
}

void row_cache_put(row_cache *rc, uint64_t file, uint64_t hash, slice key, int type, uint64_t seq,
                   slice val)
{
    if (!rc) return;
    size_t vl = type == ENG_TYPE_VALUE ? val.size : 0;
    size_t bytes = sizeof(row) + key.size + vl, charge = row_charge(bytes);
    if (charge > rc->max_charge || key.size > UINT32_MAX || vl > UINT32_MAX) return;
    uint64_t h = row_hash(file, hash);
    shard *sh = shard_of(rc, h);
    /* a shard with room takes the row at once (nothing is evicted for
     * it); a full one only at the row's second put (the doorkeeper) */
    int room = __atomic_load_n(&sh->usage, __ATOMIC_RELAXED) + charge <= sh->capacity;
    if (!door_admit(rc, file, hash) && !room) return;
    row *r = malloc(bytes);
    if (!r || (uintptr_t)r > PTR_MASK) { /* a cache may always decline */
        free(r);
        return;
    }
    r->file = file;
    r->seq = type == ROW_ABSENT ? 0 : seq;
    r->hash = h;
    r->klen = (uint32_t)key.size;
    r->vlen = (uint32_t)vl;
    r->refs = 1;
    r->type = (int8_t)type;
    r->used = 0;
    if (key.size) memcpy(r->data, key.data, key.size);
    if (vl) memcpy(r->data + key.size, val.data, vl);
    pthread_mutex_lock(&sh->mu);
    insert(sh, r, key);
    pthread_mutex_unlock(&sh->mu);
}

void row_cache_erase_file(row_cache *rc, uint64_t file)
{
    if (!rc) return;
    uint64_t fb = file_byte(file);
    for (int i = 0; i < ROW_SHARDS; i++) {
        shard *sh = &rc->shards[i];
        pthread_mutex_lock(&sh->mu);
        for (uint64_t j = 0; sh->rows && j < sh->tab->n; j++) {
            uint64_t s = slot_load(sh->tab, j);
            if (slot_live(s) && s >> 56 == fb && slot_row(s)->file == file) remove_at(sh, j);
        }
        pthread_mutex_unlock(&sh->mu);
    }
}

size_t row_cache_capacity(const row_cache *rc)
{
    return rc ? rc->capacity : 0;
}

size_t row_cache_usage(const row_cache *rc)
{
    if (!rc) return 0;
    size_t u = 0;
    for (int i = 0; i < ROW_SHARDS; i++)
        u += __atomic_load_n(&rc->shards[i].usage, __ATOMIC_RELAXED);
    return u;
}

uint64_t row_cache_hits(const row_cache *rc)
{
    return rc ? __atomic_load_n(&rc->hits, __ATOMIC_RELAXED) : 0;
}

uint64_t row_cache_misses(const row_cache *rc)
{
    return rc ? __atomic_load_n(&rc->misses, __ATOMIC_RELAXED) : 0;
}
