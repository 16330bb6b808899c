/*
 * blob.h - one immutable, refcounted object version: its JSON bytes and its
 * key, as the watch cache shares them.
 *
 * A blob is made once (by the cache's feed, from a committed history row)
 * and never changes after: the snapshot trees, the event window, list
 * streams and every watcher hold references to the same bytes, which are
 * copied only into a socket's send buffer. Keys (namespace, name) live in
 * the blob, so an index holding blobs needs no key copies of its own.
 *
 * A blob may also carry derived encodings of the same version (the API
 * layer's protobuf message, metadata text, table row, versions converted by
 * webhook), one per slot, opaque
 * to the cache: each made by whoever needs it first, attached once, never
 * changed, freed with the blob. They let every later reader copy bytes
 * instead of parsing and encoding again, without the cache knowing what
 * they are: slots are numbered, their meaning is the caller's (api/ names
 * them), and the cache only guarantees first-writer-wins per slot.
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
/* How many derived slots a blob has (slot numbers are 0 .. SK_BLOB_SLOTS-1). */
#define SK_BLOB_SLOTS 7
/* The derived encoding in slot (borrowed: it lives as long as the blob), or
 * NULL when none is yet. Safe to call while another thread attaches one: it
 * sees nothing or the whole bytes. */
const char *sk_blob_derived(const sk_blob *b, unsigned slot, size_t *len_out);
/* Attaches a copy of data/len in slot unless one is attached there already
 * (by another thread that got there first): returns the attached bytes
 * either way (borrowed), so racing encoders all end up serving the same
 * bytes. A slot's bytes must be a function of the blob's JSON alone. */
const char *sk_blob_attach_derived(sk_blob *b, unsigned slot, const char *data, size_t len,
                                   size_t *len_out);
/* Bytes the blob occupies in memory, allocator overhead included; the
 * derived encodings are not counted (it is attached later, and the cache's
 * accounting adds and removes a blob's footprint as one fixed number). */
size_t sk_blob_footprint(const sk_blob *b);
/* Orders blobs by key: namespace, then name, as bytes (the SQL order). */
int sk_blob_key_cmp(const sk_blob *b, const char *ns, const char *name);
/* Takes a reference (returns b). */
sk_blob *sk_blob_ref(sk_blob *b);
/* Drops a reference; NULL-safe. */
void sk_blob_unref(sk_blob *b);

#endif
