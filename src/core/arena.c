/*
 * arena.c - see arena.h. Memory comes from a chain of blocks: a request's
 * first block (1 KiB of payload, enough for most requests) is allocated
 * with the arena itself; later blocks double in size, and an allocation
 * larger than a block gets a block of its own. Deferred releases are a
 * stack kept in the arena's own memory.
 */
#include "core/arena.h"
#include "core/check.h"
#include "core/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_BLOCK 1024
#define ALIGN 16

typedef struct block {
    struct block *next;
    size_t size, used;
    _Alignas(ALIGN) unsigned char data[];
} block;

typedef struct deferred {
    struct deferred *next;
    void (*release)(void *);
    void *ptr;
} deferred;

struct sk_arena {
    block *head;
    block *first; /* allocated with the arena: not freed on its own */
    deferred *releases;
    size_t next_size;
};

/* The arena's header rounded up so that the first block after it is aligned. */
#define HEADER_SIZE ((sizeof(sk_arena) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

sk_arena *sk_arena_new(void)
{
    unsigned char *mem = calloc(1, HEADER_SIZE + sizeof(block) + FIRST_BLOCK);
    SK_CHECK_ALLOC(mem);
    sk_arena *a = (sk_arena *)mem;
    a->first = (block *)(mem + HEADER_SIZE);
    a->first->size = FIRST_BLOCK;
    a->head = a->first;
    a->next_size = 2 * FIRST_BLOCK;
    return a;
}

void sk_arena_free(sk_arena *a)
{
    if (!a)
        return;
    for (deferred *d = a->releases; d; d = d->next)
        d->release(d->ptr);
    block *b = a->head;
    while (b != a->first) {
        block *next = b->next;
        free(b);
        b = next;
    }
    free(a);
}

/* n bytes as they are: a copy writes them all anyway, and zeroing a big
 * value first was a second pass over it (an etcd range of 1 GB). */
static void *take(sk_arena *a, size_t n)
{
    size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    block *b = a->head;
    if (b->size - b->used < need) {
        size_t size = need > a->next_size ? need : a->next_size;
        if (need <= a->next_size)
            a->next_size *= 2;
        b = malloc(sizeof *b + size);
        SK_CHECK_ALLOC(b);
        b->size = size;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += need;
    return p;
}

void *sk_arena_alloc(sk_arena *a, size_t n)
{
    return memset(take(a, n), 0, n);
}

char *sk_arena_strdup(sk_arena *a, const char *s)
{
    return s ? sk_arena_strndup(a, s, strlen(s)) : NULL;
}

char *sk_arena_strndup(sk_arena *a, const char *s, size_t n)
{
    char *d = take(a, n + 1);
    if (n)
        memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *sk_arena_trim(sk_arena *a, const char *s)
{
    size_t b = 0, e = strlen(s);
    sk_utf8_trim_space(s, &b, &e);
    return sk_arena_strndup(a, s + b, e - b);
}

char *sk_arena_printf(sk_arena *a, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    SK_CHECK(n >= 0);
    char *s = sk_arena_alloc(a, (size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

void *sk_arena_grow(sk_arena *a, void *items, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return items;
    size_t slots = *cap ? *cap * 2 : 8;
    void *grown = sk_arena_alloc(a, slots * size);
    if (n)
        memcpy(grown, items, n * size);
    *cap = slots;
    return grown;
}

void sk_arena_defer(sk_arena *a, void (*release)(void *ptr), void *ptr)
{
    deferred *d = sk_arena_alloc(a, sizeof *d);
    d->release = release;
    d->ptr = ptr;
    d->next = a->releases;
    a->releases = d;
}
