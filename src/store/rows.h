/*
 * rows.h - the records the store reads and writes: a version of an object
 * (sk_row), a visitor over rows, and a keyset range query.
 *
 * Its own module so that both the store's policy (store.c) and the SQL
 * backends below it (backend.h) can speak of rows without either header
 * including the other.
 *
 * Ownership. sk_row fields are owned by the row (sk_row_clear frees them);
 * rows passed to callbacks are borrowed for the duration of the call.
 */
#ifndef SK_STORE_ROWS_H
#define SK_STORE_ROWS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sk_row {
    int64_t rev;        /* revision that wrote this version (= resourceVersion) */
    int64_t create_rev; /* revision that created the object */
    int64_t prev_rev;   /* previous version of this key, 0 if this is a create */
    int deleted;        /* 1 for a tombstone */
    char *resource;
    char *ns; /* "" for cluster-scoped */
    char *name;
    char *uid;
    char *value; /* JSON object text, metadata.resourceVersion == rev */
    size_t value_len;
    /* Set by reads when the value codec (store.h) read the stored value
     * with other than its first provider and key: an update writes such a
     * version even unchanged, so rewriting every object rotates keys. */
    int stale;
} sk_row;

/* Frees the row's fields and zeroes it; safe on a zeroed row. */
void sk_row_clear(sk_row *row);
/* Deep copy (new reference in *dst). */
void sk_row_copy(sk_row *dst, const sk_row *src);

/* Row visitor for reads; return non-zero to stop early. row is borrowed. */
typedef int (*sk_row_fn)(void *arg, const sk_row *row);

typedef struct sk_list_query {
    const char *resource;
    const char *ns;         /* NULL: all namespaces */
    const char *after_ns;   /* exclusive start key; NULL: from the beginning */
    const char *after_name; /* with after_ns */
    int64_t rev;            /* snapshot revision, > 0 */
    int limit;              /* > 0 */
} sk_list_query;

#endif
