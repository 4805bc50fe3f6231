/*
 * strmap.h -- a hash map from binary strings to pointers, with iteration
 * in insertion order. Used for pub/sub channels and patterns (server and
 * per client) and for the per-subcommand and per-error statistics.
 *
 * Chained buckets (a power of two, doubled when the load passes 1); every
 * entry is also on a doubly linked list in insertion order, so iteration
 * is stable, deterministic and safe while deleting the entry just visited
 * (read e->next before strmap_delete(e)). Hashing is XXH3 with a seed
 * chosen at start, so keys sent by clients cannot be aimed at one bucket.
 *
 * Ownership: the map copies keys; values are the caller's (strmap_clear
 * can free them). Threading: command thread only, no locks.
 */
#ifndef STRATA_STRMAP_H
#define STRATA_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct strmap_entry {
    struct strmap_entry *hnext;       /* bucket chain */
    struct strmap_entry *prev, *next; /* insertion order */
    uint64_t hash;
    void *value;
    size_t len;
    char key[]; /* len bytes, then a NUL */
} strmap_entry;

typedef struct strmap {
    strmap_entry **buckets;
    size_t nbuckets, count;
    strmap_entry *head, *tail;
} strmap;

#define STRMAP_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0, NULL, NULL                                                                     \
    }

/* The entry for key k[0..n), or NULL. */
strmap_entry *strmap_find(const strmap *m, const char *k, size_t n);
/* Adds k with value v and returns its entry. REQUIRES: k is not in m.
 * Aborts when out of memory (as the reply writer does). */
strmap_entry *strmap_add(strmap *m, const char *k, size_t n, void *v);
/* Removes and frees e (not its value). REQUIRES: e is in m. */
void strmap_delete(strmap *m, strmap_entry *e);
/* Removes every entry, calling free_value (when not NULL) on each value,
 * and frees the buckets; m is empty and reusable afterwards. */
void strmap_clear(strmap *m, void (*free_value)(void *));
/* Bytes the map itself holds (entries and buckets), for MEMORY and INFO. */
size_t strmap_mem(const strmap *m);

#endif
