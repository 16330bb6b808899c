/*
 * cache.h - the watch cache: every resource's objects in memory, one
 * immutable snapshot per applied revision, and the recent history as a
 * window of events, fed in revision order by the store's commit feed.
 *
 * Snapshots (KEP-4988). Per resource, the objects live in a persistent
 * B+tree keyed by (namespace, name) (btree.h): every applied event yields
 * a new root by path copying, an immutable snapshot at that revision that
 * shares every other node and the object bytes with its neighbours. The
 * roots are kept by revision; a read at revision X uses the newest root at
 * or below X. So every list, paged or not, and every get at any revision
 * the cache still retains is answered from memory, consistent at X, in key
 * order, with no copy of the list (a reader keeps only its last key).
 * Retention: from the "list floor" on, which only moves forward: past
 * revisions any instance compacted, past the event window's start, and
 * past the oldest snapshots when their memory exceeds the budget
 * (sk_cache_config.snapshot_bytes). Reads below it fall back to SQL.
 *
 * Events. The events (ADDED/MODIFIED/DELETED, with the previous version
 * for selector transitions) sit in one ring indexed by revision: revisions
 * are global and gap-free, so "the event at revision r" is one array index
 * and a watcher is just a cursor (a revision), not a queue.
 *
 * Object bytes. Each version's JSON is one refcounted, immutable sk_blob,
 * shared by the trees, the events and every reader: serialized once by the
 * store, never copied per watcher, never mutated after it is published.
 *
 * The feed. One thread per cache reads committed history after the last
 * applied revision (woken by the store: in-process commits at once,
 * PostgreSQL commits of other processes through LISTEN/NOTIFY). Every row
 * must carry exactly the next revision. A gap, a row out of order or a
 * read error makes the cache rebuild from a consistent list of the store
 * and bump its generation: cursors of the old generation get
 * SK_ERR_EXPIRED, so their watchers are closed with 410 and re-list. It
 * never resumes blindly. The feed reads on its own connection path, apart
 * from client requests, and client readers never hold the cache's lock
 * while they write to a socket.
 *
 * Threads. The feed makes new roots without the lock (nodes are immutable,
 * readers never see unpublished ones), then takes the write lock only to
 * publish a batch's roots and events and to unlink dropped snapshots,
 * whose memory it frees after unlocking. Readers take the read lock for one
 * short step (a chunk of a list, one event). The lock prefers writers, so
 * thousands of readers cannot starve the feed.
 */
#ifndef SK_CACHE_CACHE_H
#define SK_CACHE_CACHE_H

#include "cache/blob.h"
#include "core/err.h"
#include "store/store.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_cache sk_cache;

/* Runs on the feed thread after every applied batch, after a rebuild, and
 * at least once a second (a tick). Must not block or call into the cache's
 * write paths. */
typedef void (*sk_cache_notify_fn)(void *arg);

typedef struct sk_cache_config {
    const char *const *resources; /* resource names the cache holds (borrowed, static) */
    int n_resources;
    /* Resources to hold from the start besides those (custom resources
     * already defined), as if sk_cache_want_resource had asked for them
     * before the build: their history replays too. Copied. */
    const char *const *more_resources;
    int n_more_resources;
    int window_events;   /* events kept at most (default 100000) */
    size_t window_bytes; /* object bytes referenced by events at most (default 256 MiB) */
    /* Memory the snapshots older than the newest may take (the nodes their
     * path copies made). 0: automatic, 2 % of the cached objects' bytes
     * and at least 256 KiB; < 0: keep only the newest (historical reads go to
     * SQL). */
    int64_t snapshot_bytes;
    /* Test-only fault injection: the feed drops the row of this revision
     * once, as a lost event would, which must force a rebuild. 0: none. */
    int64_t drop_rev_once;
    /* Test-only fault injection: the first write of this key
     * ("resource/namespace/name") is applied as its event but not to the
     * index, as a corrupted cache would be; the consistency check must
     * find it. NULL: none. */
    const char *corrupt_key_once;
} sk_cache_config;

/* Builds the cache from a consistent list of the store (borrowed; must
 * outlive the cache) at the oldest revision the window can hold (the
 * compact revision, or window_events back), replays the history after it
 * (so cursors from before a restart resume), and starts the feed.
 * notify(arg) as above. */
sk_err sk_cache_new(sk_store *store, const sk_cache_config *cfg, sk_cache_notify_fn notify,
                    void *arg, sk_cache **out);
/* Stops the feed and frees everything. NULL-safe. Readers must be gone. */
void sk_cache_free(sk_cache *c);

/* Index of a resource name, -1 if the cache does not hold it. Indexes never
 * change once given. */
int sk_cache_resource(const sk_cache *c, const char *resource);
/* Asks the cache to hold resource (custom resources, added at run time):
 * in its next round (a second at most when idle) the feed lists it at its
 * current revision and applies its events after that; cursors from before
 * get SK_ERR_EXPIRED for it. Returns at once; sk_cache_resource says when
 * it is held. Any thread. At most 1024 resources are added to the
 * configured ones (a warning is logged past that). */
void sk_cache_want_resource(sk_cache *c, const char *resource);

typedef struct sk_cache_state {
    int64_t rev;         /* last applied revision */
    int64_t oldest;      /* the event window's start: cursors at or after it are served */
    int64_t list_oldest; /* the list floor: lists and gets at or after it are served */
    uint64_t generation; /* bumped by every rebuild */
} sk_cache_state;
void sk_cache_get_state(sk_cache *c, sk_cache_state *out);

/* Waits up to timeout_ms until the cache has applied revision rev.
 * SK_ERR_TIMEOUT if it has not; *state_out is the state seen last. */
sk_err sk_cache_wait(sk_cache *c, int64_t rev, int timeout_ms, sk_cache_state *state_out);

/* The version of a key live at revision rev (0: latest). *out is a new
 * reference. SK_ERR_NOT_FOUND if absent; SK_ERR_EXPIRED if no retained
 * snapshot holds rev (or the resource is distrusted); SK_ERR_TIMEOUT if rev
 * is newer than the cache. */
sk_err sk_cache_get(sk_cache *c, int res, const char *ns, const char *name, int64_t rev,
                    sk_blob **out);

/* Item visitor: ns/name borrowed for the call, blob borrowed (take a
 * reference to keep it). Return non-zero to stop. */
typedef int (*sk_cache_item_fn)(void *arg, const char *ns, const char *name, sk_blob *blob);

typedef struct sk_cache_list_query {
    int res;
    const char *ns;         /* NULL: every namespace */
    const char *after_ns;   /* exclusive start key; NULL: from the beginning */
    const char *after_name; /* with after_ns */
    int64_t rev;            /* the list's revision */
    int limit;              /* at most this many items (> 0) */
} sk_cache_list_query;

/* Visits up to q->limit objects live at q->rev in (namespace, name) order,
 * after the start key, from the snapshot at q->rev: one short step under
 * the read lock (the visitor must not block). SK_ERR_EXPIRED if no
 * retained snapshot holds q->rev (or the resource is distrusted),
 * SK_ERR_TIMEOUT if q->rev is newer than the cache. *visited_out counts
 * the items. */
sk_err sk_cache_list(sk_cache *c, const sk_cache_list_query *q, sk_cache_item_fn fn, void *arg,
                     int *visited_out);
/* How many objects sk_cache_list would visit with no limit (q->limit is
 * not used), counted from the snapshot's key counts without visiting
 * them; errors as sk_cache_list's. */
sk_err sk_cache_count(sk_cache *c, const sk_cache_list_query *q, int64_t *count_out);

typedef enum { SK_EVENT_ADDED, SK_EVENT_MODIFIED, SK_EVENT_DELETED } sk_event_type;

typedef struct sk_cache_event {
    int64_t rev;
    sk_event_type type;
    sk_blob *obj;  /* the new version (for DELETED, the last state); new reference */
    sk_blob *prev; /* the version before, NULL for ADDED; new reference */
} sk_cache_event;
void sk_cache_event_clear(sk_cache_event *ev);

/*
 * The next event of resource res with revision > after_rev, for a cursor
 * of generation gen. SK_OK: *ev filled. SK_ERR_NOT_FOUND: none yet;
 * *scanned_out is the revision the cursor may advance to (the cache's
 * revision, or where the scan stopped). SK_ERR_EXPIRED: the cursor fell
 * out of the window, or the cache or this resource was rebuilt after the
 * cursor's generation or revision (what it was sent may be wrong).
 */
sk_err sk_cache_next_event(sk_cache *c, uint64_t gen, int res, int64_t after_rev,
                           sk_cache_event *ev, int64_t *scanned_out);
/* The oldest cursor sk_cache_next_event serves for resource res: the
 * window's start, or the resource's last (re)build if that is later. The
 * history before it is the store's (read/reader.h reads it there). */
int64_t sk_cache_events_from(sk_cache *c, int res);

/*
 * Every event with revision in (after_rev, upto_rev] (upto_rev capped at
 * the cache's revision), of every resource the cache holds, in revision
 * order: fn(arg, resource, ev) borrows both (the resource's name lives as
 * long as the cache); non-zero stops. For a follower of the whole store
 * (the garbage collector) that keeps what it derived from objects and
 * applies the changes since, instead of reading every object again. Events
 * are copied out in chunks under the read lock and visited outside it, so
 * fn may take its time. SK_ERR_EXPIRED if the window does not hold
 * after_rev (at the start or at any chunk). A resource rebuilt or added
 * after after_rev is not told apart: its events are complete only from
 * sk_cache_events_from on, which the caller compares.
 */
typedef int (*sk_cache_visit_fn)(void *arg, const char *resource, const sk_cache_event *ev);
sk_err sk_cache_visit_events(sk_cache *c, int64_t after_rev, int64_t upto_rev, sk_cache_visit_fn fn,
                             void *arg);

/*
 * Consistency check (KEP-4988): a 64-bit FNV-1a hash over every live
 * object's "namespace/name/resourceVersion\n" in key order, computed from
 * the cache and from the store at the same revision (the cache's, when the
 * check starts). The store side runs without the cache's lock.
 */
typedef struct sk_cache_check_result {
    int64_t rev;
    uint64_t cache_hash, store_hash;
    int64_t cache_count, store_count;
} sk_cache_check_result;
/* SK_OK with *out filled (compare the hashes); SK_ERR_EXPIRED if the
 * revision left the window or the store compacted it meanwhile (no verdict);
 * store errors as they come. */
sk_err sk_cache_check(sk_cache *c, int res, sk_cache_check_result *out);
/* After a failed check: the resource's reads go to SQL (sk_cache_get and
 * sk_cache_list answer SK_ERR_EXPIRED for it) and the feed rebuilds that
 * resource alone from a consistent list, dropping its snapshots; its
 * watchers get 410 (what they were sent may be wrong too). sk_cache_trust
 * ends the SQL reads once a later check passes. */
void sk_cache_distrust(sk_cache *c, int res);
void sk_cache_trust(sk_cache *c, int res);

typedef struct sk_cache_stats {
    int64_t objects;        /* live objects */
    int64_t events;         /* events in the window */
    int64_t rebuilds;       /* full rebuilds after a feed anomaly, and resource rebuilds */
    int64_t store_rev;      /* the store's revision as the feed saw it last */
    int64_t rev;            /* the cache's revision */
    int64_t list_oldest;    /* the list floor */
    int64_t snapshots;      /* retained snapshots, the newest of each resource included */
    int64_t object_bytes;   /* memory of the live objects' blobs */
    int64_t index_bytes;    /* memory of the newest trees' nodes */
    int64_t snapshot_bytes; /* memory the older snapshots add (their nodes and entries) */
    int64_t snapshot_budget;
} sk_cache_stats;
void sk_cache_get_stats(sk_cache *c, sk_cache_stats *out);

#endif
