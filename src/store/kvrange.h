/*
 * kvrange.h - etcd's key range conventions as one half-open byte interval
 * (pure). A request names a range by key and range_end: an empty end is the
 * single key, an end of one NUL byte is every key from key on, anything else
 * is [key, end) in bytewise order (so a prefix p is [p, p with its last
 * non-0xff byte incremented), which the client computes).
 *
 * One module so the store's SQL bounds and the etcd face's duplicate-key
 * check read the same conventions the same way.
 */
#ifndef SK_STORE_KVRANGE_H
#define SK_STORE_KVRANGE_H

#include "core/arena.h"

#include <stddef.h>

typedef struct sk_kv_bounds {
    const unsigned char *lo, *hi; /* hi NULL: no upper bound */
    size_t lo_len, hi_len;
} sk_kv_bounds;

/* The interval of (key, end). A single key k becomes [k, k + "\0"): k + NUL
 * is k's immediate successor in byte order (allocated in a). lo is never
 * NULL, even for an empty key. */
sk_kv_bounds sk_kv_bounds_of(sk_arena *a, const unsigned char *key, size_t key_len,
                             const unsigned char *end, size_t end_len);

/* Whether key lies in b. */
int sk_kv_bounds_has(const sk_kv_bounds *b, const unsigned char *key, size_t key_len);

/* Bytewise order of two byte strings (memcmp, then the shorter first): -1, 0, 1. */
int sk_kv_bytes_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn);

#endif
