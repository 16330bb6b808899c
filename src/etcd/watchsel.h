/*
 * watchsel.h - what one etcd watch selects (pure): its key range, read from
 * a create request with etcd's conventions, and its filters; and whether a
 * write of the keyspace is an event for it.
 *
 * Conventions (etcd's watch server): an empty key is "\0", the smallest
 * key; an empty range_end watches that one key; a range_end of one NUL byte
 * watches every key from key on; otherwise [key, range_end), which must not
 * be empty. NOPUT and NODELETE drop those events.
 */
#ifndef SK_ETCD_WATCHSEL_H
#define SK_ETCD_WATCHSEL_H

#include "core/arena.h"
#include "store/kvrange.h"

#include <stddef.h>

typedef struct sk_watch_sel {
    sk_kv_bounds range; /* bytes in the arena given to sk_watch_sel_init */
    int no_put, no_delete;
} sk_watch_sel;

/* Fills *out from a create request's key and range_end (copied into a).
 * Returns 0, *out untouched, if the range is empty (key >= range_end):
 * etcd refuses such a watch. */
int sk_watch_sel_init(sk_arena *a, const unsigned char *key, size_t key_len,
                      const unsigned char *end, size_t end_len, int no_put, int no_delete,
                      sk_watch_sel *out);

/* Whether a write of key (a delete when deleted) is an event for sel. */
int sk_watch_sel_wants(const sk_watch_sel *sel, const unsigned char *key, size_t key_len,
                       int deleted);

#endif
