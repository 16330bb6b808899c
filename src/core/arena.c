/*
 * arena.c - see arena.h. Memory comes from a chain of blocks: a request's
 * first block (1 KiB of payload, enough for most requests) is allocated
 * with the arena itself; later blocks double in size, and an allocation
 * larger than a block gets a block of its own. Deferred releases are a
 * stack kept in the arena's own memory.
 *
 * Big blocks are kept for the next arena. The server's allocator hands
 * every allocation of 128 KiB or more back to the system as soon as it is
 * freed (cmd/main.c, "Allocator"), so a call that fills megabytes of arena
 * (an etcd Range page of 500 values of 10 KiB: 5 MB of copies, then the
 * packed reply) paid a page fault and a zeroed page for every 4 KiB, then
 * an madvise: 40% of the server's CPU for a paged pass. Blocks from
 * BIG_BLOCK up to BIG_BLOCK_MAX are therefore sized in powers of two and,
 * when freed, kept in a process-wide cache of at most CACHE_BYTES for the
 * next arena that needs that size; past the cap they are freed as before.
 * Only big blocks take the cache's lock, so small requests never meet.
 */
#include "core/arena.h"
#include "core/check.h"
#include "core/utf8.h"

#include <pthread.h>
/* Its ASAN_(UN)POISON_MEMORY_REGION are no-ops outside an ASan build. */
#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIRST_BLOCK 1024
#define ALIGN 16
/* The cache's block sizes (payload bytes): powers of two from the
 * allocator's return-at-once threshold, and how much it may hold. */
#define BIG_BLOCK ((size_t)128 << 10)
#define BIG_BLOCK_MAX ((size_t)16 << 20)
#define CACHE_BYTES ((size_t)32 << 20)
#define CACHE_CLASSES 8 /* 128 KiB .. 16 MiB */

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


static struct {
    pthread_mutex_t mu;
    block *free[CACHE_CLASSES]; /* by class: BIG_BLOCK << i */
    size_t bytes;
} cache = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* The cache class of a block of size bytes, or -1 when it is not one of
 * the cached sizes. */
static int class_of(size_t size)
{
    for (int i = 0; i < CACHE_CLASSES; i++)
        if (size == BIG_BLOCK << i)
            return i;
    return -1;
}

/* A block with at least size bytes: big sizes round up to a cached class
 * and come from the cache when it has one. */
static block *block_new(size_t size)
{
    if (size >= BIG_BLOCK && size <= BIG_BLOCK_MAX) {
        size_t big = BIG_BLOCK;
        while (big < size)
            big *= 2;
        size = big;
        int i = class_of(size);
        pthread_mutex_lock(&cache.mu);
        block *b = cache.free[i];
        if (b) {
            cache.free[i] = b->next;
            cache.bytes -= size;
        }
        pthread_mutex_unlock(&cache.mu);
        if (b) {
            ASAN_UNPOISON_MEMORY_REGION(b, sizeof *b + size);
            b->used = 0;
            return b;
        }
    }
    block *b = malloc(sizeof *b + size);
    SK_CHECK_ALLOC(b);
    b->size = size;
    b->used = 0;
    return b;
}

static void block_free(block *b)
{
    int i = class_of(b->size);
    if (i >= 0) {
        pthread_mutex_lock(&cache.mu);
        int kept = cache.bytes + b->size <= CACHE_BYTES;
        if (kept) {
            b->next = cache.free[i];
            cache.free[i] = b;
            cache.bytes += b->size;
            ASAN_POISON_MEMORY_REGION(b->data, b->size);
        }
        pthread_mutex_unlock(&cache.mu);
        if (kept)
            return;
    }
    free(b);
}

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
        block_free(b);
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
        b = block_new(size);
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

void *sk_arena_alloc_uninit(sk_arena *a, size_t n)
{
    return take(a, n);
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
