/*
 * kvrange.c - see kvrange.h.
 */
#include "store/kvrange.h"

#include <string.h>

sk_kv_bounds sk_kv_bounds_of(sk_arena *a, const unsigned char *key, size_t key_len,
                             const unsigned char *end, size_t end_len)
{
    sk_kv_bounds b = {key ? key : (const unsigned char *)"", NULL, key_len, 0};
    if (end_len == 0) {
        unsigned char *succ = sk_arena_alloc(a, key_len + 1); /* zeroed: ends in NUL */
        if (key_len)
            memcpy(succ, key, key_len);
        b.hi = succ;
        b.hi_len = key_len + 1;
    } else if (!(end_len == 1 && end[0] == 0)) {
        b.hi = end;
        b.hi_len = end_len;
    }
    return b;
}

int sk_kv_bytes_cmp(const unsigned char *a, size_t an, const unsigned char *b, size_t bn)
{
    size_t n = an < bn ? an : bn;
    int r = n ? memcmp(a, b, n) : 0;
    if (r)
        return r < 0 ? -1 : 1;
    return (an > bn) - (an < bn);
}

int sk_kv_bounds_has(const sk_kv_bounds *b, const unsigned char *key, size_t key_len)
{
    return sk_kv_bytes_cmp(key, key_len, b->lo, b->lo_len) >= 0 &&
           (!b->hi || sk_kv_bytes_cmp(key, key_len, b->hi, b->hi_len) < 0);
}
