/*
 * blob.c - see blob.h.
 *
 * Layout: one allocation, a 24-byte header, then the JSON, '\0', the
 * namespace, '\0', the name, '\0'. The cache holds one blob per live object
 * (and per version still visible to a retained snapshot), so the header is
 * kept small: a 100k-object cache pays 2.4 MB of headers, not 4 MB.
 */
#include "cache/blob.h"
#include "core/check.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct sk_blob {
    atomic_uint refs;
    uint32_t len; /* JSON bytes */
    int64_t rev;
    uint16_t name_off; /* the name starts at data + len + 1 + name_off */
    char data[];
};

sk_blob *sk_blob_new(const char *ns, const char *name, int64_t rev, const char *json,
                     size_t json_len)
{
    size_t ns_len = strlen(ns) + 1, name_len = strlen(name) + 1;
    SK_CHECK(json_len < UINT32_MAX && ns_len <= UINT16_MAX);
    sk_blob *b = malloc(sizeof *b + json_len + 1 + ns_len + name_len);
    SK_CHECK_ALLOC(b);
    atomic_init(&b->refs, 1);
    b->len = (uint32_t)json_len;
    b->rev = rev;
    b->name_off = (uint16_t)ns_len;
    memcpy(b->data, json, json_len);
    b->data[json_len] = '\0';
    memcpy(b->data + json_len + 1, ns, ns_len);
    memcpy(b->data + json_len + 1 + ns_len, name, name_len);
    return b;
}

const char *sk_blob_data(const sk_blob *b, size_t *len_out)
{
    *len_out = b->len;
    return b->data;
}

const char *sk_blob_ns(const sk_blob *b)
{
    return b->data + b->len + 1;
}

const char *sk_blob_name(const sk_blob *b)
{
    return b->data + b->len + 1 + b->name_off;
}

int64_t sk_blob_rev(const sk_blob *b)
{
    return b->rev;
}

size_t sk_blob_footprint(const sk_blob *b)
{
    /* glibc's chunk: the usable size plus its size word. */
    return malloc_usable_size((void *)b) + sizeof(size_t);
}

int sk_blob_key_cmp(const sk_blob *b, const char *ns, const char *name)
{
    int c = strcmp(sk_blob_ns(b), ns);
    return c ? c : strcmp(sk_blob_name(b), name);
}

sk_blob *sk_blob_ref(sk_blob *b)
{
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    return b;
}

void sk_blob_unref(sk_blob *b)
{
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
        free(b);
}
