/*
 * bbolt.h - bbolt database files (the format of etcd's backend, and of what
 * `etcdctl snapshot save` writes): a reader over bytes the caller hands it
 * (no I/O; memory is the handle and, during a walk, a bitmap of one bit per
 * page), and a writer that bulk-loads sorted buckets into a new file
 * through a sink the caller provides (sqlkube's Maintenance Snapshot).
 *
 * The file is untrusted: every page id, offset, length and count is checked
 * against the bytes before it is read, a meta page counts only if its
 * checksum holds, and a walk visits each page at most once, so any input
 * ends in SK_OK or SK_ERR_INVALID with a message naming the problem, never
 * in a read out of bounds or a loop.
 *
 * Files are read as the little-endian machines that write them (amd64,
 * arm64) lay them out.
 */
#ifndef SK_CORE_BBOLT_H
#define SK_CORE_BBOLT_H

#include "core/err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_bbolt sk_bbolt;

/* A bucket as found in its parent: a handle, filled by sk_bbolt_bucket
 * (its fields are the reader's: a root page id, or an inline page within
 * the file's bytes). */
typedef struct sk_bbolt_bucket {
    uint64_t root;
    const unsigned char *inline_page;
    size_t inline_len;
} sk_bbolt_bucket;

/* Reads the meta pages of the len bytes at data (borrowed: they must
 * outlive the handle) and picks the newest valid one, as bbolt does. On
 * failure *errmsg is new. */
sk_err sk_bbolt_open(const unsigned char *data, size_t len, sk_bbolt **out, char **errmsg);
void sk_bbolt_free(sk_bbolt *db);

/* The bucket named name (name_len bytes) in parent (NULL: the root).
 * SK_ERR_NOT_FOUND (no message) if there is none; SK_ERR_INVALID (with
 * *errmsg new) if the file is damaged on the way. */
sk_err sk_bbolt_bucket_get(const sk_bbolt *db, const sk_bbolt_bucket *parent, const char *name,
                           size_t name_len, sk_bbolt_bucket *out, char **errmsg);

/* Visitor over a bucket's entries: key and value borrowed from the file's
 * bytes; is_bucket when the entry is a nested bucket (value is then its
 * header). A non-OK return stops the walk and is returned by it. */
typedef sk_err (*sk_bbolt_fn)(void *arg, const unsigned char *key, size_t key_len,
                              const unsigned char *value, size_t value_len, int is_bucket);

/* Visits b's entries in key order, checking that each page is well formed,
 * that keys strictly increase, and that no page is visited twice. */
sk_err sk_bbolt_each(const sk_bbolt *db, const sk_bbolt_bucket *b, sk_bbolt_fn fn, void *arg,
                     char **errmsg);

/*
 * The writer. Top-level buckets are added in increasing name order, each
 * followed by its entries in strictly increasing key order (asserted: a
 * file out of order would be a corrupt database); nested buckets are not
 * written. Pages go to the sink at their offsets, each written once, not
 * in file order (pages 0 to 2 come last); memory is about one page and the
 * first key of each page written. The file is finished when
 * sk_bbolt_writer_finish returns SK_OK; a sink failure is returned by that
 * call and every later one.
 */
typedef struct sk_bbolt_writer sk_bbolt_writer;
typedef sk_err (*sk_bbolt_sink)(void *arg, uint64_t offset, const void *data, size_t len);

/* A new writer of pages of page_size bytes (a power of two, 512 to 65536). */
sk_bbolt_writer *sk_bbolt_writer_new(uint32_t page_size, sk_bbolt_sink sink, void *arg);
void sk_bbolt_writer_free(sk_bbolt_writer *w);
/* Ends the bucket being written, if any, and begins the bucket name. */
sk_err sk_bbolt_writer_bucket(sk_bbolt_writer *w, const char *name, size_t name_len);
/* Adds an entry to the current bucket (bytes copied; key not empty). */
sk_err sk_bbolt_writer_put(sk_bbolt_writer *w, const void *key, size_t key_len, const void *value,
                           size_t value_len);
/* Writes the root bucket, the freelist and the metas (transaction txid >= 2,
 * the other meta txid - 1); *size_out is the file's length. */
sk_err sk_bbolt_writer_finish(sk_bbolt_writer *w, uint64_t txid, uint64_t *size_out);

#endif
