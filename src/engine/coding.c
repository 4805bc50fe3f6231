/*
 * coding.c -- checksum, growable buffers and the error iterator.
 */
#include "coding.h"
#include "iter.h"

#include <stdio.h>
#include <stdlib.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

uint32_t eng_checksum(const char *data, size_t n)
{
    return (uint32_t)XXH3_64bits(data, n);
}

void buf_reserve(buf *b, size_t extra)
{
    size_t need = b->len + extra;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        fprintf(stderr, "strata: out of memory (%zu bytes)\n", cap);
        abort();
    }
    b->data = p;
    b->cap = cap;
}

void buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

typedef struct error_iter {
    iter base;
    eng_status s;
} error_iter;

static int ei_valid(const iter *it)
{
    (void)it;
    return 0;
}
static void ei_noop(iter *it)
{
    (void)it;
}
static void ei_seek(iter *it, slice t)
{
    (void)it;
    (void)t;
}
static slice ei_empty(const iter *it)
{
    (void)it;
    return slice_make("", 0);
}
static eng_status ei_status(const iter *it)
{
    return ((const error_iter *)it)->s;
}
static void ei_destroy(iter *it)
{
    free(it);
}

static const struct iter_ops error_iter_ops = {
    ei_valid, ei_noop,  ei_noop,  ei_seek,   ei_noop,
    ei_noop,  ei_empty, ei_empty, ei_status, ei_destroy,
};

iter *iter_new_error(eng_status s)
{
    error_iter *e = malloc(sizeof(*e));
    if (!e) abort();
    e->base.ops = &error_iter_ops;
    e->s = s;
    return &e->base;
}
