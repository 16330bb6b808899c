/*
 * reader.h - the one read path: an object, or a page of a list, at a
 * revision, from wherever it can be had.
 *
 * Every read of committed state above this layer (GET, LIST, a watch's
 * initial events) asks here and gets the same thing back, whichever source
 * answered: immutable, refcounted object versions (sk_blob). The watch
 * cache's snapshot at the revision answers when it holds that revision and
 * trusts that resource; otherwise SQL answers at the same revision, with the
 * same items in the same key order (the cache and both backends order keys
 * as bytes), so a continue token means the same either way. Callers never
 * choose; they learn which source answered only for metrics.
 *
 * Errors are the store's: SK_ERR_NOT_FOUND (get), SK_ERR_EXPIRED (the
 * revision was compacted), SK_ERR_UNAVAILABLE and friends.
 */
#ifndef SK_READ_READER_H
#define SK_READ_READER_H

#include "cache/blob.h"
#include "cache/cache.h"
#include "core/err.h"
#include "store/store.h"

#include <jansson.h>
#include <stdint.h>

typedef struct sk_reader sk_reader;

typedef enum { SK_READ_CACHE, SK_READ_SQL } sk_read_source;

/* A reader over store and cache (borrowed; both must outlive it). */
sk_reader *sk_reader_new(sk_store *store, sk_cache *cache);
void sk_reader_free(sk_reader *rd);

/* The version of (resource, ns, name) live at revision rev (0: the latest).
 * *out is a new reference. */
sk_err sk_reader_get(sk_reader *rd, const char *resource, const char *ns, const char *name,
                     int64_t rev, sk_blob **out);

typedef struct sk_read_query {
    const char *resource;
    const char *ns;         /* NULL: every namespace */
    const char *after_ns;   /* exclusive start key; NULL: from the beginning */
    const char *after_name; /* with after_ns */
    int64_t rev;            /* the list's revision, > 0 */
    int limit;              /* at most this many items, 1..SK_READ_MAX_ITEMS */
} sk_read_query;

#define SK_READ_MAX_ITEMS 1024

/* Up to q->limit objects live at q->rev after the start key, in key order:
 * items[0..*n_out) are new references the caller drops. *source_out says
 * who answered. */
sk_err sk_reader_list(sk_reader *rd, const sk_read_query *q, sk_blob **items, int *n_out,
                      sk_read_source *source_out);

/* How many objects live at q->rev come after the start key (q->limit is
 * not used): from the cache's key counts when it holds q->rev, without
 * visiting them; otherwise by reading them, page by page. */
sk_err sk_reader_count(sk_reader *rd, const sk_read_query *q, int64_t *count_out);

/* The object item holds, parsed (new reference), or NULL if its bytes are
 * not a JSON object (an older version could store such). */
json_t *sk_reader_object(const sk_blob *item);

/* The revision the cache has applied: reads at it are served from memory. */
int64_t sk_reader_cache_rev(sk_reader *rd);

/* Visits every object of resource in ns (NULL: all) live at rev, in key
 * order, page by page (no lock or transaction held between pages); fn
 * borrows each item and returns non-zero to stop. */
typedef int (*sk_reader_item_fn)(void *arg, sk_blob *item);
sk_err sk_reader_scan(sk_reader *rd, const char *resource, const char *ns, int64_t rev,
                      sk_reader_item_fn fn, void *arg);

/*
 * Events: the changes of a resource after a cursor, in revision order,
 * from wherever they can be had. The cache's window answers when it still
 * holds the cursor; a cursor older than the window (a watch resumed from
 * before a restart, a watcher that fell behind) is answered from the
 * store's history, one page per call (a few hundred revisions and a MiB of
 * objects at most: a caller's memory and time per call stay bounded, like
 * a page of a list), up to the revision the cache has applied. Both
 * sources are the same gap-free history, so a cursor moves from one to the
 * other at any revision with no gap and no duplicate: it switches to the
 * window once the window holds it again. Events read from SQL are shaped
 * as the cache's (type and the previous version), so selector transitions
 * are judged the same way.
 */
typedef struct sk_read_events {
    const char *resource;
    uint64_t gen;      /* the cache generation the cursor belongs to */
    int64_t after_rev; /* the cursor: every change up to it was seen */
    int with_prev;     /* events from SQL carry the previous version too */
} sk_read_events;

/* ev is borrowed (take references to keep its blobs). Non-zero: stop after
 * this event. */
typedef int (*sk_reader_event_fn)(void *arg, const sk_cache_event *ev);

/* Visits events after q->after_rev until none is left in the window (or
 * the page of SQL history is done) or fn stops. *scanned_out: the revision
 * the cursor may move to (past events not of this resource too). SK_ERR_EXPIRED:
 * the cursor is below the compact revision, or the cache was rebuilt after
 * q->gen (what the stream was sent may be wrong); store errors as they
 * come. *source_out says who answered. */
sk_err sk_reader_events(sk_reader *rd, const sk_read_events *q, sk_reader_event_fn fn, void *arg,
                        int64_t *scanned_out, sk_read_source *source_out);

/*
 * Changes of the whole store, from the cache's window only, for a caller
 * that keeps what it derived from objects and applies what changed since
 * (the garbage collector), rather than reading every object again. There is
 * no SQL fallback: a follower that finds the window moved on (or a
 * resource's events incomplete) reads that resource again with
 * sk_reader_scan.
 */
/* Whether the window holds every change of resource after after_rev. */
int sk_reader_changes_held(sk_reader *rd, const char *resource, int64_t after_rev);
/* Visits every change with revision in (after_rev, upto_rev] of every
 * resource the cache holds, in revision order: fn borrows resource and ev,
 * non-zero stops. SK_ERR_EXPIRED if the window no longer holds after_rev.
 * A resource rebuilt meanwhile is not told apart: its changes are complete
 * only where sk_reader_changes_held says so, before and after the visit. */
typedef int (*sk_reader_change_fn)(void *arg, const char *resource, const sk_cache_event *ev);
sk_err sk_reader_changes(sk_reader *rd, int64_t after_rev, int64_t upto_rev, sk_reader_change_fn fn,
                         void *arg);

#endif
