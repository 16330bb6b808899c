/*
 * blob.c - see blob.h.
 *
 * Layout: one allocation, a 32-byte header, then the namespace, '\0', the
 * name, '\0', the JSON, '\0'. The cache holds one blob per live object
 * (and per version still visible to a retained snapshot), so the header is
 * kept small: a 100k-object cache pays 3.2 MB of headers. The key
 * comes first because B-tree searches compare keys of blobs they reach
 * through pointers: beside the header, a comparison touches one cache line
 * of the blob, where after the JSON it touched two.
 *
 * The derived encodings hang off one pointer to an array of slots, made on
 * the first attach (so a blob nobody derives from keeps its 32-byte
 * header); the array and each slot's bytes are separate allocations, each
 * published with one compare-and-swap from NULL (release) and read with an
 * acquire load: once a reader sees a pointer it sees what is behind it, and
 * since nothing ever replaces or frees either before the blob's last
 * reference goes, no lock is needed. Two threads making the same array or
 * encoding the same slot at once both do the work; the loser frees its copy
 * and uses the winner's.
 */
#include "cache/blob.h"
#include "core/check.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct derived {
    size_t len;
    char data[];
} derived;

typedef struct slots {
    _Atomic(derived *) slot[SK_BLOB_SLOTS]; /* NULL until attached, then fixed */
} slots;

struct sk_blob {
    atomic_uint refs;
    uint32_t len; /* JSON bytes */
    int64_t rev;
    uint32_t name_off;        /* the name starts at data + name_off */
    uint32_t json_off;        /* the JSON starts at data + json_off */
    _Atomic(slots *) derived; /* NULL until a first attach, then fixed */
    char data[];
};
_Static_assert(sizeof(struct sk_blob) == 32, "the blob header is 32 bytes");

sk_blob *sk_blob_new(const char *ns, const char *name, int64_t rev, const char *json,
                     size_t json_len)
{
    size_t ns_len = strlen(ns) + 1, name_len = strlen(name) + 1;
    SK_CHECK(json_len < UINT32_MAX && ns_len + name_len < UINT32_MAX);
    sk_blob *b = malloc(sizeof *b + ns_len + name_len + json_len + 1);
    SK_CHECK_ALLOC(b);
    atomic_init(&b->refs, 1);
    atomic_init(&b->derived, NULL);
    b->len = (uint32_t)json_len;
    b->rev = rev;
    b->name_off = (uint32_t)ns_len;
    b->json_off = (uint32_t)(ns_len + name_len);
    memcpy(b->data, ns, ns_len);
    memcpy(b->data + ns_len, name, name_len);
    memcpy(b->data + b->json_off, json, json_len);
    b->data[b->json_off + json_len] = '\0';
    return b;
}

const char *sk_blob_data(const sk_blob *b, size_t *len_out)
{
    *len_out = b->len;
    return b->data + b->json_off;
}

const char *sk_blob_ns(const sk_blob *b)
{
    return b->data;
}

const char *sk_blob_name(const sk_blob *b)
{
    return b->data + b->name_off;
}

int64_t sk_blob_rev(const sk_blob *b)
{
    return b->rev;
}

const char *sk_blob_derived(const sk_blob *b, unsigned slot, size_t *len_out)
{
    SK_CHECK(slot < SK_BLOB_SLOTS);
    slots *s = atomic_load_explicit(&((sk_blob *)b)->derived, memory_order_acquire);
    derived *d = s ? atomic_load_explicit(&s->slot[slot], memory_order_acquire) : NULL;
    if (!d)
        return NULL;
    *len_out = d->len;
    return d->data;
}

/* b's slot array, made by the first caller. */
static slots *slots_of(sk_blob *b)
{
    slots *s = atomic_load_explicit(&b->derived, memory_order_acquire);
    if (s)
        return s;
    slots *mine = malloc(sizeof *mine);
    SK_CHECK_ALLOC(mine);
    for (unsigned i = 0; i < SK_BLOB_SLOTS; i++)
        atomic_init(&mine->slot[i], NULL);
    if (atomic_compare_exchange_strong_explicit(&b->derived, &s, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    free(mine); /* another thread made it first: use its array */
    return s;
}

const char *sk_blob_attach_derived(sk_blob *b, unsigned slot, const char *data, size_t len,
                                   size_t *len_out)
{
    SK_CHECK(slot < SK_BLOB_SLOTS);
    slots *s = slots_of(b);
    derived *d = malloc(sizeof *d + len);
    SK_CHECK_ALLOC(d);
    d->len = len;
    if (len)
        memcpy(d->data, data, len);
    derived *was = NULL;
    if (!atomic_compare_exchange_strong_explicit(&s->slot[slot], &was, d, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(d); /* another thread attached first: serve its bytes */
        d = was;
    }
    *len_out = d->len;
    return d->data;
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
    if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        slots *s = atomic_load_explicit(&b->derived, memory_order_acquire);
        for (unsigned i = 0; s && i < SK_BLOB_SLOTS; i++)
            free(atomic_load_explicit(&s->slot[i], memory_order_acquire));
        free(s);
        free(b);
    }
}
