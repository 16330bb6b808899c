/*
 * ring.h - a growable FIFO of fixed-size elements: push at the back, pop at
 * the front, index from the front, all O(1) (pushes amortized). The watch
 * cache keeps its event window and each resource's snapshots in one.
 *
 * Elements live in the ring's array and move when it grows: pointers from
 * sk_ring_at are valid until the next push.
 */
#ifndef SK_CORE_RING_H
#define SK_CORE_RING_H

#include <stddef.h>

typedef struct sk_ring {
    char *v; /* private */
    size_t elem, cap, head, len;
} sk_ring;

#define SK_RING_INIT(type) ((sk_ring){NULL, sizeof(type), 0, 0, 0})

/* Element i, 0 being the oldest (i < len). */
void *sk_ring_at(const sk_ring *r, size_t i);
/* Appends a zeroed element and returns it. */
void *sk_ring_push(sk_ring *r);
/* Drops the oldest element (len > 0); the caller has released what it held. */
void sk_ring_pop(sk_ring *r);
/* Frees the array (not what the elements point to); leaves the ring empty. */
void sk_ring_free(sk_ring *r);

#endif
