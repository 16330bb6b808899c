/*
 * watchsel.c - see watchsel.h. The range is kvrange.h's half-open interval,
 * so a watch and a Range of the same key and range_end cover the same keys.
 */
#include "etcd/watchsel.h"

#include <string.h>

static const unsigned char *copy(sk_arena *a, const unsigned char *p, size_t n)
{
    unsigned char *c = sk_arena_alloc(a, n ? n : 1);
    if (n)
        memcpy(c, p, n);
    return c;
}

int sk_watch_sel_init(sk_arena *a, const unsigned char *key, size_t key_len,
                      const unsigned char *end, size_t end_len, int no_put, int no_delete,
                      sk_watch_sel *out)
{
    static const unsigned char smallest[1] = {0};
    if (key_len == 0) {
        key = smallest;
        key_len = 1;
    }
    int from_key = end_len == 1 && end[0] == 0;
    if (end_len && !from_key && sk_kv_bytes_cmp(key, key_len, end, end_len) >= 0)
        return 0;
    const unsigned char *k = copy(a, key, key_len), *e = end_len ? copy(a, end, end_len) : NULL;
    out->range = sk_kv_bounds_of(a, k, key_len, e, end_len);
    out->no_put = no_put;
    out->no_delete = no_delete;
    return 1;
}

int sk_watch_sel_wants(const sk_watch_sel *sel, const unsigned char *key, size_t key_len,
                       int deleted)
{
    if (deleted ? sel->no_delete : sel->no_put)
        return 0;
    return sk_kv_bounds_has(&sel->range, key, key_len);
}
