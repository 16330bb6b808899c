/*
 * blob.h - one immutable, refcounted object version: its JSON bytes and its
 * key, as the watch cache shares them.
 *
 * A blob is made once (by the cache's feed, from a committed history row)
 * and never changes after: the snapshot trees, the event window, list
 * streams and every watcher hold references to the same bytes, which are
 * copied only into a socket's send buffer. Keys (namespace, name) live in
 * the blob, so an index holding blobs needs no key copies of its own.
 */
#ifndef SK_CACHE_BLOB_H
#define SK_CACHE_BLOB_H

#include <stddef.h>
#include <stdint.h>

typedef struct sk_blob sk_blob;

/* A new blob (one reference, the caller's) holding copies of the bytes.
 * ns is "" for cluster-scoped objects. */
sk_blob *sk_blob_new(const char *ns, const char *name, int64_t rev, const char *json,
                     size_t json_len);
/* The JSON bytes (NUL-terminated; *len_out excludes the NUL). */
const char *sk_blob_data(const sk_blob *b, size_t *len_out);
/* The object's key, borrowed from the blob. */
const char *sk_blob_ns(const sk_blob *b);
const char *sk_blob_name(const sk_blob *b);
/* Revision that wrote this version (its resourceVersion). */
int64_t sk_blob_rev(const sk_blob *b);
/* Bytes the blob occupies in memory, allocator overhead included. */
size_t sk_blob_footprint(const sk_blob *b);
/* Orders blobs by key: namespace, then name, as bytes (the SQL order). */
int sk_blob_key_cmp(const sk_blob *b, const char *ns, const char *name);
/* Takes a reference (returns b). */
sk_blob *sk_blob_ref(sk_blob *b);
/* Drops a reference; NULL-safe. */
void sk_blob_unref(sk_blob *b);

#endif
