/*
 * arena.c -- see arena.h.
 *
 * Invariants:
 *   A1. ptr is 8-byte aligned after every allocation (sizes are rounded up),
 *       so tree nodes and entry pointers can be accessed atomically.
 *   A2. usage equals the sum of (header + size) over the blocks list.
 */
#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct arena_block {
    struct arena_block *next;
    size_t size;
    _Alignas(16) char data[];
} arena_block;

void arena_init(arena *a, size_t first_block, size_t max_block)
{
    a->ptr = NULL;
    a->left = 0;
    a->cur = NULL;
    a->blocks = NULL;
    a->next_block = first_block;
    a->max_block = max_block;
    atomic_store_explicit(&a->usage, 0, memory_order_relaxed);
}

static arena_block *new_block(arena *a, size_t size)
{
    arena_block *b = malloc(sizeof(arena_block) + size);
    if (!b) {
        fprintf(stderr, "strata: out of memory (arena block of %zu bytes)\n", size);
        abort();
    }
    b->size = size;
    b->next = a->blocks;
    a->blocks = b;
    atomic_fetch_add_explicit(&a->usage, sizeof(arena_block) + size, memory_order_relaxed);
    return b;
}

void *arena_alloc(arena *a, size_t n)
{
    n = (n + 7) & ~(size_t)7; /* A1 */
    if (n <= a->left) {
        char *p = a->ptr;
        a->ptr += n;
        a->left -= n;
        return p;
    }
    if (n > a->max_block / 4) return new_block(a, n)->data; /* cur keeps its free space */
    size_t size = a->next_block;
    while (size < n)
        size *= 2;
    if (a->next_block < a->max_block) a->next_block *= 2;
    if (a->next_block > a->max_block) a->next_block = a->max_block;
    arena_block *b = new_block(a, size);
    a->cur = b;
    a->ptr = b->data + n;
    a->left = size - n;
    return b->data;
}

void *arena_alloc_aligned(arena *a, size_t n, size_t align)
{
    size_t pad = (align - ((uintptr_t)a->ptr & (align - 1))) & (align - 1);
    if (pad + n <= a->left) { /* A1: pad and left are multiples of 8 */
        a->ptr += pad;
        a->left -= pad;
        return arena_alloc(a, n);
    }
    /* A1: p is 8-aligned, so at most align - 8 bytes of padding precede the
     * aligned address. */
    char *p = arena_alloc(a, n + align - 8);
    return p + ((align - ((uintptr_t)p & (align - 1))) & (align - 1));
}

void arena_reset(arena *a)
{
    arena_block *b = a->blocks;
    size_t usage = 0;
    while (b) {
        arena_block *next = b->next;
        if (b != a->cur) free(b);
        b = next;
    }
    a->blocks = a->cur;
    if (a->cur) {
        a->cur->next = NULL;
        a->ptr = a->cur->data;
        a->left = a->cur->size;
        usage = sizeof(arena_block) + a->cur->size;
    } else {
        a->ptr = NULL;
        a->left = 0;
    }
    atomic_store_explicit(&a->usage, usage, memory_order_relaxed); /* A2 */
}

void arena_destroy(arena *a)
{
    a->cur = NULL;
    arena_reset(a);
}
