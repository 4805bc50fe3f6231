/*
 * strmap.c -- binary-string hash map with insertion-order iteration; see
 * strmap.h.
 */
#include "server/strmap.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

static uint64_t seed;

static uint64_t hash_of(const char *k, size_t n)
{
    if (!seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
        seed |= 1;
    }
    return XXH3_64bits_withSeed(k, n, seed);
}

strmap_entry *strmap_find(const strmap *m, const char *k, size_t n)
{
    if (!m->nbuckets) return NULL;
    uint64_t h = hash_of(k, n);
    for (strmap_entry *e = m->buckets[h & (m->nbuckets - 1)]; e; e = e->hnext)
        if (e->hash == h && e->len == n && memcmp(e->key, k, n) == 0) return e;
    return NULL;
}

static void grow(strmap *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : 8;
    strmap_entry **b = calloc(nb, sizeof(*b));
    if (!b) abort();
    for (strmap_entry *e = m->head; e; e = e->next) {
        size_t i = e->hash & (nb - 1);
        e->hnext = b[i];
        b[i] = e;
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
}

strmap_entry *strmap_add(strmap *m, const char *k, size_t n, void *v)
{
    if (m->count >= m->nbuckets) grow(m);
    strmap_entry *e = malloc(sizeof(*e) + n + 1);
    if (!e) abort();
    e->hash = hash_of(k, n);
    e->value = v;
    e->len = n;
    if (n) memcpy(e->key, k, n);
    e->key[n] = '\0';
    size_t i = e->hash & (m->nbuckets - 1);
    e->hnext = m->buckets[i];
    m->buckets[i] = e;
    e->next = NULL;
    e->prev = m->tail;
    if (m->tail)
        m->tail->next = e;
    else
        m->head = e;
    m->tail = e;
    m->count++;
    return e;
}

void strmap_delete(strmap *m, strmap_entry *e)
{
    strmap_entry **pp = &m->buckets[e->hash & (m->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    if (e->prev)
        e->prev->next = e->next;
    else
        m->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        m->tail = e->prev;
    m->count--;
    free(e);
    /* A map that emptied gives its buckets back: a client that subscribed
     * to a million channels and left should not keep the table. */
    if (m->count == 0) {
        free(m->buckets);
        m->buckets = NULL;
        m->nbuckets = 0;
    }
}

void strmap_clear(strmap *m, void (*free_value)(void *))
{
    strmap_entry *e = m->head;
    while (e) {
        strmap_entry *next = e->next;
        if (free_value) free_value(e->value);
        free(e);
        e = next;
    }
    free(m->buckets);
    memset(m, 0, sizeof(*m));
}

size_t strmap_mem(const strmap *m)
{
    size_t n = m->nbuckets * sizeof(strmap_entry *);
    for (strmap_entry *e = m->head; e; e = e->next)
        n += sizeof(*e) + e->len + 1;
    return n;
}
