/*
 * ring.c - see ring.h. Capacity doubles from 16 and never shrinks: the
 * cache's rings grow to their working size and stay there. It is always a
 * power of two, so an index wraps with a mask, not a division: the watch
 * cache indexes its window once per revision a watcher scans.
 */
#include "core/ring.h"
#include "core/check.h"

#include <stdlib.h>
#include <string.h>

void *sk_ring_at(const sk_ring *r, size_t i)
{
    SK_CHECK(i < r->len);
    return r->v + ((r->head + i) & (r->cap - 1)) * r->elem;
}

void *sk_ring_push(sk_ring *r)
{
    if (r->len == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16; /* a power of two: see the top */
        char *v = malloc(cap * r->elem);
        SK_CHECK_ALLOC(v);
        for (size_t i = 0; i < r->len; i++)
            memcpy(v + i * r->elem, sk_ring_at(r, i), r->elem);
        free(r->v);
        r->v = v;
        r->cap = cap;
        r->head = 0;
    }
    r->len++;
    void *slot = sk_ring_at(r, r->len - 1);
    memset(slot, 0, r->elem);
    return slot;
}

void sk_ring_pop(sk_ring *r)
{
    SK_CHECK(r->len > 0);
    r->head = (r->head + 1) & (r->cap - 1);
    r->len--;
}

void sk_ring_free(sk_ring *r)
{
    free(r->v);
    r->v = NULL;
    r->cap = r->head = r->len = 0;
}
