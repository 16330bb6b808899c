/*
 * cache.c - the watch cache (see cache.h).
 *
 * Snapshots. Per resource, `snaps` is a ring of snapshots in revision
 * order. Entry k holds the root the update at its revision made, and what
 * that update replaced: its garbage nodes and the tree's reference to the
 * version it overwrote or removed. Those are reachable from older roots
 * only, so they are freed when entry k becomes the oldest (entry k-1 is
 * dropped); the oldest entry's are always freed already. The newest entry's
 * root is the live tree.
 *
 * List floor. `floor` >= the window's start. Each resource keeps the newest
 * snapshot at or below the floor (it holds the state at the floor) and
 * every later one; a read at X >= floor uses the newest snapshot <= X. The
 * floor moves forward only: with the window (which follows compaction), and
 * snapshot by snapshot, oldest first, while the older snapshots' memory
 * (`history_bytes`) exceeds the budget.
 *
 * Window. `ring` holds the events of revisions (base, rev], one per
 * revision, res < 0 for a revision of a resource the cache does not hold.
 * Eviction is by count and by the bytes of the objects the events
 * reference. Versions a retained snapshot still shows but the newest tree
 * does not are always referenced by an event in the window too (floor >=
 * base), so snapshots pin no object bytes beyond the window's budget.
 *
 * Memory is freed outside the lock: what the write lock unlinks (dropped
 * snapshots' garbage, a rebuilt resource's old state) goes to a `reclaim`
 * list freed once readers can no longer reach it.
 */
#include "cache/cache.h"
#include "cache/btree.h"
#include "core/check.h"
#include "core/log.h"
#include "core/ring.h"
#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FEED_BATCH 1000
#define FEED_BATCH_BYTES ((size_t)16 * 1024 * 1024)
#define TICK_MS 1000
/* Resources added at run time (custom resources) beyond the configured ones:
 * the arrays readers index without the lock are sized once for them. */
#define ADDED_MAX 1024
#define REBUILD_CHUNK 1000
#define DEFAULT_WINDOW_EVENTS 100000
#define DEFAULT_WINDOW_BYTES ((size_t)256 * 1024 * 1024)
#define AUTO_SNAPSHOT_MIN ((size_t)256 << 10)
#define AUTO_SNAPSHOT_SHARE 50 /* the automatic budget: 1/50 = 2 % of object bytes */

typedef struct event {
    int64_t rev;
    int res; /* -1: a revision of a resource the cache does not hold */
    sk_event_type type;
    sk_blob *obj, *prev;
} event;

typedef struct snapshot {
    int64_t rev;
    sk_btree_node *root;
    sk_btree_node *garbage; /* what this revision's update replaced */
    size_t garbage_bytes;
    sk_blob *old; /* the version it replaced or removed (the tree's reference) */
} snapshot;

typedef struct resource {
    sk_ring snaps; /* of snapshot, oldest first */
    uint64_t gen;  /* the cache generation of this resource's last (re)build */
    /* The revision of its last (re)build: its events at or before it may
     * have been made against a wrong tree (a failed consistency check), so
     * no cursor may read them, whatever its generation. */
    int64_t built_at;
    int64_t live;
    size_t object_bytes, index_bytes; /* the newest tree's blobs and nodes */
} resource;

/* Memory unlinked under the write lock, freed after it. */
typedef struct reclaim {
    sk_ring snaps; /* of snapshot: garbage and old versions of dropped snapshots */
    resource *res; /* whole resources replaced by a rebuild */
    int n_res;
    sk_ring events; /* of event: a replaced window */
} reclaim;

#define RECLAIM_INIT                                                                               \
    {                                                                                              \
        SK_RING_INIT(snapshot), NULL, 0, SK_RING_INIT(event)                                       \
    }

struct sk_cache {
    sk_store *store;
    /* Resource names: the configured ones (borrowed), then added ones
     * (owned). Slots below n_res never change; a slot is written before
     * n_res counts it, so readers scan without the lock. */
    const char **resources;
    atomic_int n_res;
    int n_config, cap;
    int window_events;
    size_t window_bytes;
    int64_t snapshot_bytes; /* the configured budget (see sk_cache_config) */
    sk_cache_notify_fn notify;
    void *notify_arg;

    pthread_rwlock_t lock; /* guards everything below except the feed fields */
    resource *res;         /* n_res */
    sk_ring ring;          /* of event: revisions (base, rev], oldest first */
    size_t window_used;    /* object bytes referenced by ring events */
    size_t history_bytes;  /* what snapshots older than each resource's newest take */
    int64_t base, rev, floor;
    uint64_t generation;

    pthread_mutex_t wait_mu; /* waiters for a revision */
    pthread_cond_t wait_cv;

    atomic_llong rebuilds, store_rev;
    atomic_int stopping;
    atomic_int *distrusted;        /* per resource: reads go to SQL */
    atomic_int *rebuild_requested; /* per resource: the feed rebuilds it */
    /* sk_cache_want_resource: names the feed adds in its next round. */
    pthread_mutex_t add_mu;
    char *wanted[ADDED_MAX];
    size_t n_wanted;
    /* Feed-owned. */
    int64_t drop_rev_once;
    char *corrupt_key_once; /* "resource/namespace/name" */
    /* The feed's read position: equal to rev, except after an injected loss
     * (the feed then reads on as if the event had never come). */
    int64_t read_after;
    /* feed_catch_up's scratch, made once: FEED_BATCH rows and applied rows,
     * cap roots and deltas. Zeroing them per call was about 100 KiB of
     * memset per commit under a create load (each entry is written before
     * it is read). */
    struct feed_row *feed_rows;
    struct applied *feed_applied;
    sk_btree_node **feed_roots;
    struct delta *feed_deltas;
    pthread_t feed;
    int feed_started; /* feed is a thread to join */
};

/* ---- snapshots -------------------------------------------------------------- */

static snapshot *snap_at(const resource *r, size_t i)
{
    return sk_ring_at(&r->snaps, i);
}

static snapshot *snap_newest(const resource *r)
{
    return snap_at(r, r->snaps.len - 1);
}

static void snap_push(resource *r, const snapshot *s)
{
    SK_CHECK(r->snaps.len == 0 || s->rev > snap_newest(r)->rev);
    *(snapshot *)sk_ring_push(&r->snaps) = *s;
}

/* The newest snapshot at or below rev, NULL if every one is newer. */
static const snapshot *snap_find(const resource *r, int64_t rev)
{
    size_t lo = 0, hi = r->snaps.len; /* first index with rev > wanted */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (snap_at(r, mid)->rev <= rev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? snap_at(r, lo - 1) : NULL;
}

/* What a snapshot older than the newest adds to history_bytes. */
static size_t snap_history_bytes(const snapshot *s)
{
    return s->garbage_bytes + sizeof(snapshot);
}

/* Frees what an update replaced, once no older root can reach it. */
static void snap_release_replaced(const snapshot *s)
{
    sk_btree_free_garbage(s->garbage);
    sk_blob_unref(s->old);
}

static void reclaim_snapshot(reclaim *rc, const snapshot *s)
{
    if (s->garbage || s->old)
        *(snapshot *)sk_ring_push(&rc->snaps) = *s;
}

/* Drops the oldest snapshot of r: what the next one's update replaced is
 * now unreachable. Write lock held. */
static void drop_oldest(sk_cache *c, resource *r, reclaim *rc)
{
    SK_CHECK(r->snaps.len >= 2);
    snapshot *next = snap_at(r, 1);
    reclaim_snapshot(rc, next);
    c->history_bytes -= snap_history_bytes(next);
    next->garbage = NULL;
    next->old = NULL;
    next->garbage_bytes = 0;
    sk_ring_pop(&r->snaps);
}

static size_t snapshot_budget(const sk_cache *c)
{
    if (c->snapshot_bytes != 0)
        return c->snapshot_bytes > 0 ? (size_t)c->snapshot_bytes : 0;
    size_t objects = 0;
    for (int i = 0; i < c->n_res; i++)
        objects += c->res[i].object_bytes;
    size_t share = objects / AUTO_SNAPSHOT_SHARE;
    return share > AUTO_SNAPSHOT_MIN ? share : AUTO_SNAPSHOT_MIN;
}

/* Raises the floor to the window's start and, snapshot by snapshot, until
 * the older snapshots fit the budget; drops what falls below it. Write lock
 * held. */
static void trim_snapshots(sk_cache *c, reclaim *rc)
{
    if (c->floor < c->base)
        c->floor = c->base;
    size_t budget = snapshot_budget(c);
    for (;;) {
        for (int i = 0; i < c->n_res; i++) {
            resource *r = &c->res[i];
            while (r->snaps.len >= 2 && snap_at(r, 1)->rev <= c->floor)
                drop_oldest(c, r, rc);
        }
        if (c->history_bytes <= budget)
            return;
        int64_t next = INT64_MAX;
        for (int i = 0; i < c->n_res; i++)
            if (c->res[i].snaps.len >= 2 && snap_at(&c->res[i], 1)->rev < next)
                next = snap_at(&c->res[i], 1)->rev;
        if (next == INT64_MAX)
            return;
        c->floor = next;
    }
}

/* Frees one resource's trees: every snapshot's garbage and old versions,
 * then the newest tree with its blobs. */
static void resource_free(resource *r)
{
    for (size_t i = 1; i < r->snaps.len; i++)
        snap_release_replaced(snap_at(r, i));
    if (r->snaps.len > 0)
        sk_btree_free(snap_newest(r)->root);
    sk_ring_free(&r->snaps);
}

static void event_release(event *e)
{
    sk_blob_unref(e->obj);
    sk_blob_unref(e->prev);
}

/* Frees what was unlinked under the lock. Call without the lock. */
static void reclaim_run(reclaim *rc)
{
    for (size_t i = 0; i < rc->snaps.len; i++)
        snap_release_replaced(sk_ring_at(&rc->snaps, i));
    sk_ring_free(&rc->snaps);
    for (int i = 0; i < rc->n_res; i++)
        resource_free(&rc->res[i]);
    free(rc->res);
    rc->res = NULL;
    rc->n_res = 0;
    for (size_t i = 0; i < rc->events.len; i++)
        event_release(sk_ring_at(&rc->events, i));
    sk_ring_free(&rc->events);
}

/* ---- window ------------------------------------------------------------------ */

static event *ring_slot(sk_cache *c, int64_t rev)
{
    SK_CHECK(rev > c->base);
    return sk_ring_at(&c->ring, (size_t)(rev - c->base - 1));
}

static void ring_push(sk_cache *c, const event *ev)
{
    *(event *)sk_ring_push(&c->ring) = *ev;
    if (ev->obj)
        c->window_used += sk_blob_footprint(ev->obj);
}

static void ring_evict_one(sk_cache *c)
{
    event *ev = sk_ring_at(&c->ring, 0);
    c->base++;
    SK_CHECK(ev->rev == c->base);
    if (ev->obj)
        c->window_used -= sk_blob_footprint(ev->obj);
    event_release(ev);
    sk_ring_pop(&c->ring);
}

static void ring_trim(sk_cache *c)
{
    while (c->ring.len > 0 &&
           ((int64_t)c->ring.len > c->window_events || c->window_used > c->window_bytes))
        ring_evict_one(c);
}

/* ---- building a resource from the store ---------------------------------------- */

int sk_cache_resource(const sk_cache *c, const char *resource)
{
    for (int i = 0; i < c->n_res; i++)
        if (strcmp(c->resources[i], resource) == 0)
            return i;
    return -1;
}

typedef struct build_ctx {
    sk_blob **blobs;
    size_t n, cap;
    int rows;
    size_t object_bytes;
} build_ctx;

static int build_row(void *arg, const sk_row *row)
{
    build_ctx *b = arg;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 1024;
        b->blobs = realloc(b->blobs, b->cap * sizeof *b->blobs);
        SK_CHECK_ALLOC(b->blobs);
    }
    /* The tree is built from this order: it must be strictly ascending. */
    SK_CHECK(b->n == 0 || sk_blob_key_cmp(b->blobs[b->n - 1], row->ns, row->name) < 0);
    sk_blob *blob = sk_blob_new(row->ns, row->name, row->rev, row->value, row->value_len);
    b->object_bytes += sk_blob_footprint(blob);
    b->blobs[b->n++] = blob;
    b->rows++;
    return 0;
}

/* A resource holding one snapshot, at `at`, built from a consistent list
 * of the store at that revision. Runs on the feed thread without the lock:
 * nothing else sees it yet. */
static sk_err build_resource(sk_cache *c, int i, int64_t at, resource *out)
{
    build_ctx b = {0};
    sk_err err = SK_OK;
    while (at > 0) {
        b.rows = 0;
        const sk_blob *last = b.n ? b.blobs[b.n - 1] : NULL;
        sk_list_query q = {.resource = c->resources[i],
                           .after_ns = last ? sk_blob_ns(last) : NULL,
                           .after_name = last ? sk_blob_name(last) : NULL,
                           .rev = at,
                           .limit = REBUILD_CHUNK};
        err = sk_store_list(c->store, &q, build_row, &b);
        if (err != SK_OK || b.rows < REBUILD_CHUNK)
            break;
    }
    if (err != SK_OK) {
        for (size_t k = 0; k < b.n; k++)
            sk_blob_unref(b.blobs[k]);
        free(b.blobs);
        return err;
    }
    sk_btree_change ch = {0};
    snapshot s = {.rev = at, .root = sk_btree_build(b.blobs, b.n, &ch)};
    free(b.blobs);
    memset(out, 0, sizeof *out);
    out->snaps = SK_RING_INIT(snapshot);
    snap_push(out, &s);
    out->built_at = at;
    out->live = (int64_t)b.n;
    out->object_bytes = b.object_bytes;
    out->index_bytes = ch.new_bytes;
    return SK_OK;
}

static void wake_waiters(sk_cache *c)
{
    pthread_mutex_lock(&c->wait_mu);
    pthread_cond_broadcast(&c->wait_cv);
    pthread_mutex_unlock(&c->wait_mu);
}

/*
 * Replaces the whole state with a consistent list of the store at revision
 * at, swapped in under the write lock: readers see the old state or the
 * new one, never a mix. The generation moves on, so every cursor of the
 * old one gets SK_ERR_EXPIRED and its client re-lists.
 */
static sk_err rebuild_at(sk_cache *c, int64_t at)
{
    sk_err err = SK_OK;
    resource *fresh = calloc((size_t)c->cap, sizeof *fresh);
    SK_CHECK_ALLOC(fresh);
    int built = 0;
    while (built < c->n_res && (err = build_resource(c, built, at, &fresh[built])) == SK_OK)
        built++;
    reclaim rc = RECLAIM_INIT;
    if (err != SK_OK) {
        rc.res = fresh;
        rc.n_res = built;
        reclaim_run(&rc);
        return err;
    }
    pthread_rwlock_wrlock(&c->lock);
    rc.res = c->res;
    rc.n_res = c->res ? c->n_res : 0;
    rc.events = c->ring;
    c->res = fresh;
    c->ring = SK_RING_INIT(event);
    c->window_used = c->history_bytes = 0;
    c->base = c->rev = c->floor = c->read_after = at;
    c->generation++;
    for (int i = 0; i < c->n_res; i++)
        fresh[i].gen = c->generation;
    pthread_rwlock_unlock(&c->lock);
    reclaim_run(&rc);
    atomic_store(&c->store_rev, at);
    wake_waiters(c);
    return SK_OK;
}

/* rebuild_at the store's current revision: after a feed anomaly. */
static sk_err rebuild(sk_cache *c)
{
    int64_t at = 0;
    sk_err err = sk_store_revisions(c->store, &at, NULL);
    return err == SK_OK ? rebuild_at(c, at) : err;
}

/*
 * Rebuilds one resource (after a failed consistency check) from a list of
 * the store at the cache's revision: the feed is the only writer, so the
 * revision holds still while it lists. Its snapshots are all replaced and
 * its cursors expire; other resources are untouched.
 */
static sk_err rebuild_resource(sk_cache *c, int i)
{
    resource fresh;
    sk_err err = build_resource(c, i, c->rev, &fresh);
    if (err != SK_OK)
        return err;
    pthread_rwlock_wrlock(&c->lock);
    resource *r = &c->res[i];
    for (size_t k = 1; k < r->snaps.len; k++)
        c->history_bytes -= snap_history_bytes(snap_at(r, k));
    reclaim rc = RECLAIM_INIT;
    rc.res = malloc(sizeof(resource));
    rc.n_res = 1;
    SK_CHECK_ALLOC(rc.res);
    rc.res[0] = *r;
    *r = fresh;
    r->gen = ++c->generation;
    pthread_rwlock_unlock(&c->lock);
    reclaim_run(&rc);
    sk_log_warn("watch cache: %s rebuilt from a consistent list at revision %lld", c->resources[i],
                (long long)c->rev);
    return SK_OK;
}

/* ---- the feed ------------------------------------------------------------------ */

/* One history row of a feed batch: its bytes already a blob (made while
 * reading, outside the lock; NULL for a resource the cache does not hold). */
typedef struct feed_row {
    int64_t rev;
    int res;
    int deleted;
    sk_blob *blob;
} feed_row;

typedef struct feed_batch {
    sk_cache *c;
    feed_row *rows;
    int n;
    size_t bytes;
} feed_batch;

/* A row turned into what the lock publishes: its event and, if the
 * resource's tree changed, its snapshot. */
typedef struct applied {
    event ev;
    int has_snap;
    snapshot snap;
} applied;

static int feed_collect(void *arg, const sk_row *row)
{
    feed_batch *b = arg;
    feed_row *r = &b->rows[b->n++];
    r->rev = row->rev;
    r->res = sk_cache_resource(b->c, row->resource);
    r->deleted = row->deleted;
    r->blob =
        r->res >= 0 ? sk_blob_new(row->ns, row->name, row->rev, row->value, row->value_len) : NULL;
    b->bytes += row->value_len;
    return b->bytes >= FEED_BATCH_BYTES;
}

/* Test-only fault injection (sk_cache_config.corrupt_key_once). */
static int corrupt_this(sk_cache *c, const feed_row *r)
{
    if (!c->corrupt_key_once)
        return 0;
    char key[1024];
    snprintf(key, sizeof key, "%s/%s/%s", c->resources[r->res], sk_blob_ns(r->blob),
             sk_blob_name(r->blob));
    if (strcmp(key, c->corrupt_key_once) != 0)
        return 0;
    sk_log_warn("watch cache: test fault: %s left out of the index", key);
    free(c->corrupt_key_once);
    c->corrupt_key_once = NULL;
    return 1;
}

/* Per-resource deltas of a batch, added to the stats when it is published. */
typedef struct delta {
    int64_t live;
    int64_t object_bytes, index_bytes;
} delta;

/*
 * Turns row r into its event and new root, path-copying from *root (the
 * resource's newest root, moved on). No lock: only unpublished nodes are
 * made, and the feed is the only writer. Takes the row's blob.
 */
static void apply_row(sk_cache *c, feed_row *r, sk_btree_node **root, delta *d, applied *out)
{
    memset(out, 0, sizeof *out);
    out->ev.rev = r->rev;
    out->ev.res = r->res;
    if (r->res < 0)
        return;
    const char *ns = sk_blob_ns(r->blob), *name = sk_blob_name(r->blob);
    int corrupt = corrupt_this(c, r);
    sk_blob *blob = r->blob;
    r->blob = NULL;
    out->ev.obj = blob; /* the event's reference; the tree takes its own */
    sk_btree_change ch = {0};
    if (!corrupt && r->deleted)
        *root = sk_btree_del(*root, ns, name, &ch);
    else if (!corrupt)
        *root = sk_btree_put(*root, sk_blob_ref(blob), &ch);
    /* The update reports the version it replaced: the event's previous
     * one, with no second descent (a corrupted key leaves the tree as is). */
    sk_blob *before = corrupt ? sk_btree_get(*root, ns, name) : ch.old;
    out->ev.type = r->deleted ? SK_EVENT_DELETED : before ? SK_EVENT_MODIFIED : SK_EVENT_ADDED;
    out->ev.prev = before ? sk_blob_ref(before) : NULL;
    if (corrupt)
        return;
    if (!ch.old && r->deleted)
        return; /* the key was not in the tree: nothing changed, no snapshot */
    if (!r->deleted)
        d->object_bytes += (int64_t)sk_blob_footprint(blob);
    if (ch.old)
        d->object_bytes -= (int64_t)sk_blob_footprint(ch.old);
    d->live += (!r->deleted) - (ch.old != NULL);
    d->index_bytes += (int64_t)ch.new_bytes - (int64_t)ch.garbage_bytes;
    out->has_snap = 1;
    out->snap = (snapshot){.rev = r->rev,
                           .root = *root,
                           .garbage = ch.garbage,
                           .garbage_bytes = ch.garbage_bytes,
                           .old = ch.old};
}

/* Publishes n applied rows and the batch's deltas. Write lock held. */
static void publish(sk_cache *c, applied *a, int n, const delta *d, reclaim *rc)
{
    for (int i = 0; i < n; i++) {
        SK_CHECK(a[i].ev.rev == c->rev + 1);
        if (a[i].has_snap) {
            snap_push(&c->res[a[i].ev.res], &a[i].snap);
            c->history_bytes += snap_history_bytes(&a[i].snap);
        }
        c->rev = a[i].ev.rev;
        ring_push(c, &a[i].ev);
    }
    for (int i = 0; i < c->n_res; i++) {
        resource *r = &c->res[i];
        r->live += d[i].live;
        r->object_bytes = (size_t)((int64_t)r->object_bytes + d[i].object_bytes);
        r->index_bytes = (size_t)((int64_t)r->index_bytes + d[i].index_bytes);
    }
    ring_trim(c);
    trim_snapshots(c, rc);
}

/*
 * Reads and applies history after the cache's revision up to `upto`.
 * Returns SK_OK, a store error, or SK_ERR_INTERNAL for a feed anomaly (a
 * missing or out-of-order revision): the caller rebuilds.
 */
static sk_err feed_catch_up(sk_cache *c, int64_t upto)
{
    sk_err err = SK_OK;
    feed_batch b = {c, c->feed_rows, 0, 0};
    applied *a = c->feed_applied;
    sk_btree_node **roots = c->feed_roots;
    delta *d = c->feed_deltas;
    while (c->read_after < upto && err == SK_OK) {
        b.n = 0;
        b.bytes = 0;
        err = sk_store_history(c->store, c->read_after, upto, FEED_BATCH, feed_collect, &b);
        if (err != SK_OK) { /* rows read before the error are read again next time */
            for (int i = 0; i < b.n; i++)
                sk_blob_unref(b.rows[i].blob);
            break;
        }
        if (b.n == 0) {
            sk_log_warn("watch cache: revision %lld is missing from the store's history",
                        (long long)(c->read_after + 1));
            err = SK_ERR_INTERNAL;
            break;
        }
        c->read_after = b.rows[b.n - 1].rev;
        /* Only this thread writes c->res and c->rev: reading them unlocked is safe. */
        for (int i = 0; i < c->n_res; i++)
            roots[i] = snap_newest(&c->res[i])->root;
        memset(d, 0, (size_t)c->n_res * sizeof *d);
        int n = 0;
        int64_t expect = c->rev + 1;
        for (int i = 0; i < b.n; i++) {
            feed_row *r = &b.rows[i];
            if (c->drop_rev_once && r->rev == c->drop_rev_once) {
                sk_log_warn("watch cache: test fault: dropping revision %lld", (long long)r->rev);
                c->drop_rev_once = 0;
                continue;
            }
            if (r->rev != expect) {
                sk_log_warn("watch cache: feed gave revision %lld after %lld", (long long)r->rev,
                            (long long)(expect - 1));
                err = SK_ERR_INTERNAL;
                break;
            }
            apply_row(c, r, r->res >= 0 ? &roots[r->res] : NULL, r->res >= 0 ? &d[r->res] : NULL,
                      &a[n++]);
            expect++;
        }
        reclaim rc = RECLAIM_INIT;
        pthread_rwlock_wrlock(&c->lock);
        publish(c, a, n, d, &rc);
        pthread_rwlock_unlock(&c->lock);
        reclaim_run(&rc);
        for (int i = 0; i < b.n; i++) /* rows not applied: dropped, or after an anomaly */
            sk_blob_unref(b.rows[i].blob);
        wake_waiters(c);
        /* The last batch's watchers are woken by feed_main's notify, once,
         * after the compaction it follows: a second notify per commit woke
         * every watcher that had already sent that commit again. */
        if (c->read_after < upto)
            c->notify(c->notify_arg);
    }
    return err;
}

/* Compaction (by any instance) removed history at or below compact: the
 * window and the snapshots must not claim to serve revisions the store no
 * longer can, so events at or below it leave the window (watchers behind
 * it get 410) and the list floor follows. */
static void follow_compaction(sk_cache *c, int64_t compact)
{
    reclaim rc = RECLAIM_INIT;
    pthread_rwlock_wrlock(&c->lock);
    while (c->base < compact && c->ring.len > 0)
        ring_evict_one(c);
    trim_snapshots(c, &rc);
    pthread_rwlock_unlock(&c->lock);
    reclaim_run(&rc);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/*
 * An anomaly in the feed itself (a missing or out-of-order revision, or
 * history the store has compacted away) means events may be lost: rebuild.
 * Anything else (a dropped connection, a failed query) loses nothing: the
 * feed resumes from the last applied revision once the store answers.
 */
static int is_anomaly(sk_err err)
{
    return err == SK_ERR_INTERNAL || err == SK_ERR_EXPIRED;
}

/* Adds the resources sk_cache_want_resource asked for: each one snapshot at
 * the cache's revision from a consistent list (the feed is the only writer,
 * so the revision holds still), published in a new slot. Their events
 * before that revision were not kept (built_at bars cursors from them). */
static void add_wanted(sk_cache *c)
{
    for (;;) {
        pthread_mutex_lock(&c->add_mu);
        char *name = c->n_wanted ? c->wanted[--c->n_wanted] : NULL;
        pthread_mutex_unlock(&c->add_mu);
        if (!name)
            return;
        int i = c->n_res;
        sk_err err = SK_OK;
        if (sk_cache_resource(c, name) >= 0) {
            free(name);
            continue;
        }
        if (i == c->cap) {
            sk_log_warn("watch cache: cannot hold %s: %d resources already", name, c->cap);
            free(name);
            continue;
        }
        c->resources[i] = name;
        resource fresh;
        if ((err = build_resource(c, i, c->rev, &fresh)) != SK_OK) {
            /* a store error: asked for again by the next sk_cache_want_resource */
            sk_log_warn("watch cache: cannot list %s: %s", name, sk_err_name(err));
            c->resources[i] = NULL;
            free(name);
            return;
        }
        pthread_rwlock_wrlock(&c->lock);
        fresh.gen = c->generation;
        c->res[i] = fresh;
        c->n_res = i + 1;
        pthread_rwlock_unlock(&c->lock);
    }
}

void sk_cache_want_resource(sk_cache *c, const char *resource)
{
    if (sk_cache_resource(c, resource) >= 0)
        return;
    pthread_mutex_lock(&c->add_mu);
    size_t k = 0;
    while (k < c->n_wanted && strcmp(c->wanted[k], resource) != 0)
        k++;
    if (k == c->n_wanted && c->n_wanted < ADDED_MAX) {
        c->wanted[c->n_wanted] = strdup(resource);
        SK_CHECK_ALLOC(c->wanted[c->n_wanted++]);
    }
    pthread_mutex_unlock(&c->add_mu);
}

/* Rebuilds the resources a failed consistency check asked for. */
static sk_err rebuild_requested(sk_cache *c)
{
    sk_err err = SK_OK;
    for (int i = 0; i < c->n_res && err == SK_OK; i++) {
        if (!atomic_exchange(&c->rebuild_requested[i], 0))
            continue;
        atomic_fetch_add(&c->rebuilds, 1);
        if ((err = rebuild_resource(c, i)) != SK_OK && !is_anomaly(err))
            atomic_store(&c->rebuild_requested[i], 1); /* try again next round */
    }
    return err;
}

static void *feed_main(void *arg)
{
    sk_cache *c = arg;
    while (!atomic_load(&c->stopping)) {
        int64_t store_rev = 0, compact = 0;
        sk_err err = sk_store_wait_commit(c->store, c->read_after, TICK_MS, &store_rev, &compact);
        if (err == SK_OK) {
            atomic_store(&c->store_rev, store_rev);
            err = store_rev < c->read_after ? SK_ERR_INTERNAL : feed_catch_up(c, store_rev);
        }
        if (err == SK_OK)
            follow_compaction(c, compact);
        if (err == SK_OK)
            err = rebuild_requested(c);
        if (err == SK_OK)
            add_wanted(c);
        if (err != SK_OK && !is_anomaly(err)) {
            sk_log_warn("watch cache: store error (%s): retrying", sk_err_name(err));
            pause_ms(200);
        } else if (err != SK_OK) {
            /* Never resume blindly: re-list. */
            sk_log_warn("watch cache: feed anomaly (%s): rebuilding from a consistent list",
                        sk_err_name(err));
            atomic_fetch_add(&c->rebuilds, 1);
            while (!atomic_load(&c->stopping) && (err = rebuild(c)) != SK_OK) {
                sk_log_warn("watch cache: rebuild failed (%s), retrying", sk_err_name(err));
                c->notify(c->notify_arg); /* watchers still tick: timeouts, shutdown */
                pause_ms(200);
            }
        }
        c->notify(c->notify_arg);
    }
    return NULL;
}

/* ---- lifecycle ------------------------------------------------------------------- */

/*
 * The first build, at every start: a list at the oldest revision the window
 * can hold (the compact revision, or window_events before the current one),
 * then the history after it applied as the feed applies it. The window and
 * snapshots are then what they would have been had the process run all
 * along, so watches, continue tokens and reads from a resourceVersion
 * before a restart (or issued by another instance) resume where they were
 * instead of getting 410 and re-listing. If compaction overtakes the list
 * or the history has an anomaly, the build falls back to the current
 * revision: what a start cost before, never a wrong answer.
 */
static sk_err build_with_history(sk_cache *c)
{
    int64_t rev = 0, compact = 0;
    sk_err err = sk_store_revisions(c->store, &rev, &compact);
    if (err != SK_OK)
        return err;
    int64_t from = rev - c->window_events;
    if (from < compact)
        from = compact;
    if (from < 1) /* revision 0 holds nothing, and reads take 0 for "latest" */
        from = rev < 1 ? rev : 1;
    int64_t t0 = sk_now_ms(), listed = 0;
    err = rebuild_at(c, from);
    if (err == SK_OK) {
        listed = sk_now_ms();
        if (from < rev)
            err = feed_catch_up(c, rev);
    }
    if (err == SK_OK) {
        atomic_store(&c->store_rev, rev);
        sk_log_info("watch cache: listed revision %lld in %lld ms, replayed revisions %lld to "
                    "%lld in %lld ms: watches from resourceVersion %lld on resume",
                    (long long)from, (long long)(listed - t0), (long long)from + 1,
                    (long long)rev, (long long)(sk_now_ms() - listed), (long long)c->base);
        return SK_OK;
    }
    if (!is_anomaly(err))
        return err;
    sk_log_warn("watch cache: cannot replay the history after revision %lld (%s): starting at "
                "the current revision",
                (long long)from, sk_err_name(err));
    return rebuild(c);
}

sk_err sk_cache_new(sk_store *store, const sk_cache_config *cfg, sk_cache_notify_fn notify,
                    void *arg, sk_cache **out)
{
    sk_cache *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->n_config = cfg->n_resources;
    atomic_init(&c->n_res, cfg->n_resources);
    c->cap = cfg->n_resources + ADDED_MAX;
    c->resources = calloc((size_t)c->cap, sizeof *c->resources);
    SK_CHECK_ALLOC(c->resources);
    memcpy(c->resources, cfg->resources, (size_t)cfg->n_resources * sizeof *c->resources);
    for (int i = 0; i < cfg->n_more_resources && c->n_res < c->cap; i++) {
        if (sk_cache_resource(c, cfg->more_resources[i]) >= 0)
            continue;
        c->resources[c->n_res] = strdup(cfg->more_resources[i]);
        SK_CHECK_ALLOC(c->resources[c->n_res]);
        c->n_res++;
    }
    c->window_events = cfg->window_events > 0 ? cfg->window_events : DEFAULT_WINDOW_EVENTS;
    c->window_bytes = cfg->window_bytes > 0 ? cfg->window_bytes : DEFAULT_WINDOW_BYTES;
    c->snapshot_bytes = cfg->snapshot_bytes;
    c->ring = SK_RING_INIT(event);
    c->drop_rev_once = cfg->drop_rev_once;
    if (cfg->corrupt_key_once) {
        c->corrupt_key_once = strdup(cfg->corrupt_key_once);
        SK_CHECK_ALLOC(c->corrupt_key_once);
    }
    c->distrusted = calloc((size_t)c->cap, sizeof *c->distrusted);
    c->rebuild_requested = calloc((size_t)c->cap, sizeof *c->rebuild_requested);
    SK_CHECK(c->distrusted && c->rebuild_requested);
    c->feed_rows = malloc(FEED_BATCH * sizeof *c->feed_rows);
    c->feed_applied = malloc(FEED_BATCH * sizeof *c->feed_applied);
    c->feed_roots = malloc((size_t)c->cap * sizeof *c->feed_roots);
    c->feed_deltas = malloc((size_t)c->cap * sizeof *c->feed_deltas);
    SK_CHECK(c->feed_rows && c->feed_applied && c->feed_roots && c->feed_deltas);
    c->notify = notify;
    c->notify_arg = arg;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&c->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&c->wait_mu, NULL);
    sk_cond_init_monotonic(&c->wait_cv);
    pthread_mutex_init(&c->add_mu, NULL);
    sk_err err = build_with_history(c);
    if (err != SK_OK) {
        sk_cache_free(c);
        return err;
    }
    SK_CHECK(pthread_create(&c->feed, NULL, feed_main, c) == 0);
    pthread_setname_np(c->feed, "sk-cache-feed");
    c->feed_started = 1;
    *out = c;
    return SK_OK;
}

void sk_cache_free(sk_cache *c)
{
    if (!c)
        return;
    if (c->feed_started) {
        atomic_store(&c->stopping, 1);
        pthread_join(c->feed, NULL);
    }
    if (c->res) { /* a build succeeded, perhaps not the start-up's catch-up */
        reclaim rc = RECLAIM_INIT;
        rc.res = c->res;
        rc.n_res = c->n_res;
        rc.events = c->ring;
        reclaim_run(&rc);
    }
    for (int i = c->n_config; i < c->n_res; i++)
        free((char *)c->resources[i]);
    free(c->resources);
    free(c->corrupt_key_once);
    free(c->distrusted);
    free(c->rebuild_requested);
    free(c->feed_rows);
    free(c->feed_applied);
    free(c->feed_roots);
    free(c->feed_deltas);
    pthread_rwlock_destroy(&c->lock);
    pthread_mutex_destroy(&c->wait_mu);
    pthread_cond_destroy(&c->wait_cv);
    for (size_t k = 0; k < c->n_wanted; k++)
        free(c->wanted[k]);
    pthread_mutex_destroy(&c->add_mu);
    free(c);
}

/* ---- reads --------------------------------------------------------------------- */

static void state_locked(sk_cache *c, sk_cache_state *out)
{
    out->rev = c->rev;
    out->oldest = c->base;
    out->list_oldest = c->floor;
    out->generation = c->generation;
}

void sk_cache_get_state(sk_cache *c, sk_cache_state *out)
{
    pthread_rwlock_rdlock(&c->lock);
    state_locked(c, out);
    pthread_rwlock_unlock(&c->lock);
}

sk_err sk_cache_wait(sk_cache *c, int64_t rev, int timeout_ms, sk_cache_state *state_out)
{
    struct timespec until;
    sk_deadline_after_ms(&until, timeout_ms);
    sk_err err = SK_OK;
    sk_cache_state st;
    pthread_mutex_lock(&c->wait_mu);
    for (;;) {
        sk_cache_get_state(c, &st);
        if (st.rev >= rev)
            break;
        if (pthread_cond_timedwait(&c->wait_cv, &c->wait_mu, &until) != 0) {
            sk_cache_get_state(c, &st);
            err = st.rev >= rev ? SK_OK : SK_ERR_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&c->wait_mu);
    *state_out = st;
    return err;
}

/* The root of resource res at *rev (0: the newest, *rev set to it). Read
 * lock held. */
static sk_err root_at_locked(sk_cache *c, int res, int64_t *rev, const sk_btree_node **root)
{
    if (*rev == 0)
        *rev = c->rev;
    if (*rev > c->rev)
        return SK_ERR_TIMEOUT;
    const snapshot *s = *rev >= c->floor ? snap_find(&c->res[res], *rev) : NULL;
    if (!s)
        return SK_ERR_EXPIRED;
    *root = s->root;
    return SK_OK;
}

sk_err sk_cache_get(sk_cache *c, int res, const char *ns, const char *name, int64_t rev,
                    sk_blob **out)
{
    SK_CHECK(res >= 0 && res < c->n_res);
    if (atomic_load(&c->distrusted[res]))
        return SK_ERR_EXPIRED;
    const sk_btree_node *root = NULL;
    pthread_rwlock_rdlock(&c->lock);
    sk_err err = root_at_locked(c, res, &rev, &root);
    if (err != SK_OK)
        goto out;
    sk_blob *b = sk_btree_get(root, ns, name);
    if (!b) {
        err = SK_ERR_NOT_FOUND;
        goto out;
    }
    *out = sk_blob_ref(b);
out:
    pthread_rwlock_unlock(&c->lock);
    return err;
}

/* Whether a list starts after q's continue key rather than at the first
 * key of its namespace (or of the tree). */
static int starts_after_key(const sk_cache_list_query *q)
{
    const char *from_ns = q->ns ? q->ns : "";
    return q->after_ns && (strcmp(q->after_ns, from_ns) > 0 ||
                           (strcmp(q->after_ns, from_ns) == 0 && *q->after_name));
}

/* The walk behind sk_cache_list, with no trust check: the consistency
 * check walks distrusted resources too (that is how they earn trust back). */
static sk_err list_index(sk_cache *c, const sk_cache_list_query *q, sk_cache_item_fn fn, void *arg,
                         int *visited_out)
{
    SK_CHECK(q->res >= 0 && q->res < c->n_res && q->limit > 0);
    int visited = 0;
    int64_t rev = q->rev;
    const sk_btree_node *root = NULL;
    pthread_rwlock_rdlock(&c->lock);
    sk_err err = root_at_locked(c, q->res, &rev, &root);
    if (err != SK_OK)
        goto out;
    sk_btree_iter it;
    if (starts_after_key(q))
        sk_btree_seek(&it, root, q->after_ns, q->after_name, 1);
    else
        sk_btree_seek(&it, root, q->ns, "", 0);
    sk_blob *b;
    while (visited < q->limit && (b = sk_btree_next(&it)) != NULL) {
        if (q->ns && strcmp(sk_blob_ns(b), q->ns) != 0)
            break;
        visited++;
        if (fn(arg, sk_blob_ns(b), sk_blob_name(b), b))
            break;
    }
    *visited_out = visited;
out:
    pthread_rwlock_unlock(&c->lock);
    return err;
}

sk_err sk_cache_list(sk_cache *c, const sk_cache_list_query *q, sk_cache_item_fn fn, void *arg,
                     int *visited_out)
{
    SK_CHECK(q->res >= 0 && q->res < c->n_res);
    if (atomic_load(&c->distrusted[q->res]))
        return SK_ERR_EXPIRED;
    return list_index(c, q, fn, arg, visited_out);
}

sk_err sk_cache_count(sk_cache *c, const sk_cache_list_query *q, int64_t *count_out)
{
    SK_CHECK(q->res >= 0 && q->res < c->n_res);
    if (atomic_load(&c->distrusted[q->res]))
        return SK_ERR_EXPIRED;
    /* Keys of namespace ns sort below (ns + "\x01", ""), the least key of
     * any namespace after it (names hold no NUL). */
    char *past_ns = NULL;
    if (q->ns) {
        size_t len = strlen(q->ns);
        past_ns = malloc(len + 2);
        SK_CHECK_ALLOC(past_ns);
        memcpy(past_ns, q->ns, len);
        past_ns[len] = '\x01';
        past_ns[len + 1] = '\0';
    }
    int64_t rev = q->rev;
    const sk_btree_node *root = NULL;
    pthread_rwlock_rdlock(&c->lock);
    sk_err err = root_at_locked(c, q->res, &rev, &root);
    if (err != SK_OK)
        goto out;
    int64_t from = starts_after_key(q) ? sk_btree_rank(root, q->after_ns, q->after_name, 1)
                   : q->ns             ? sk_btree_rank(root, q->ns, "", 0)
                                       : 0;
    int64_t to = past_ns ? sk_btree_rank(root, past_ns, "", 0) : sk_btree_size(root);
    *count_out = to > from ? to - from : 0;
out:
    pthread_rwlock_unlock(&c->lock);
    free(past_ns);
    return err;
}

#define EVENT_SCAN_MAX 4096 /* revisions examined per call: bounds the time the lock is held */

sk_err sk_cache_next_event(sk_cache *c, uint64_t gen, int res, int64_t after_rev,
                           sk_cache_event *ev, int64_t *scanned_out)
{
    sk_err err = SK_ERR_NOT_FOUND;
    pthread_rwlock_rdlock(&c->lock);
    if (gen < c->res[res].gen || after_rev < c->base || after_rev < c->res[res].built_at) {
        err = SK_ERR_EXPIRED;
        goto out;
    }
    int64_t r = after_rev + 1;
    int64_t stop = c->rev < after_rev + EVENT_SCAN_MAX ? c->rev : after_rev + EVENT_SCAN_MAX;
    for (; r <= stop; r++) {
        const event *e = ring_slot(c, r);
        if (e->res == res) {
            ev->rev = e->rev;
            ev->type = e->type;
            ev->obj = sk_blob_ref(e->obj);
            ev->prev = e->prev ? sk_blob_ref(e->prev) : NULL;
            err = SK_OK;
            goto out;
        }
    }
    *scanned_out = stop > after_rev ? stop : after_rev;
out:
    pthread_rwlock_unlock(&c->lock);
    return err;
}

int64_t sk_cache_events_from(sk_cache *c, int res)
{
    SK_CHECK(res >= 0 && res < c->n_res);
    pthread_rwlock_rdlock(&c->lock);
    int64_t from = c->base > c->res[res].built_at ? c->base : c->res[res].built_at;
    pthread_rwlock_unlock(&c->lock);
    return from;
}

/* Per hold of the read lock: events copied out, and ring slots looked at
 * (slots of revisions the cache holds no object for, such as etcd keys',
 * are skipped but still bound the hold). */
#define VISIT_CHUNK 256
#define VISIT_SLOTS 4096

sk_err sk_cache_visit_events(sk_cache *c, int64_t after_rev, int64_t upto_rev, sk_cache_visit_fn fn,
                             void *arg)
{
    sk_err err = SK_OK;
    sk_cache_event evs[VISIT_CHUNK];
    const char *names[VISIT_CHUNK];
    int64_t r = after_rev; /* every event up to r was copied out */
    int more = 1, stop = 0;
    while (more && !stop) {
        int n = 0;
        pthread_rwlock_rdlock(&c->lock);
        if (r < c->base) {
            err = SK_ERR_EXPIRED;
            more = 0;
        } else {
            int64_t end = upto_rev < c->rev ? upto_rev : c->rev;
            int64_t slots_end = r + VISIT_SLOTS < end ? r + VISIT_SLOTS : end;
            for (; r < slots_end && n < VISIT_CHUNK; r++) {
                const event *e = ring_slot(c, r + 1);
                if (e->res < 0 || !e->obj)
                    continue;
                names[n] = c->resources[e->res];
                evs[n++] = (sk_cache_event){.rev = e->rev,
                                            .type = e->type,
                                            .obj = sk_blob_ref(e->obj),
                                            .prev = e->prev ? sk_blob_ref(e->prev) : NULL};
            }
            more = r < end;
        }
        pthread_rwlock_unlock(&c->lock);
        for (int i = 0; i < n; i++) {
            if (!stop)
                stop = fn(arg, names[i], &evs[i]);
            sk_cache_event_clear(&evs[i]);
        }
    }
    return err;
}

void sk_cache_event_clear(sk_cache_event *ev)
{
    sk_blob_unref(ev->obj);
    sk_blob_unref(ev->prev);
    memset(ev, 0, sizeof *ev);
}

/* ---- consistency check ------------------------------------------------------------- */

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL
#define CHECK_CHUNK 1000

typedef struct check_side {
    uint64_t hash;
    int64_t count;
    int rows;
    char *last_ns, *last_name;
} check_side;

static void check_add(check_side *side, const char *ns, const char *name, int64_t rev)
{
    char line[1100];
    int n = snprintf(line, sizeof line, "%s/%s/%lld\n", ns, name, (long long)rev);
    for (int i = 0; i < n && i < (int)sizeof line - 1; i++) {
        side->hash ^= (unsigned char)line[i];
        side->hash *= FNV_PRIME;
    }
    side->count++;
    side->rows++;
    free(side->last_ns);
    free(side->last_name);
    side->last_ns = strdup(ns);
    side->last_name = strdup(name);
    SK_CHECK(side->last_ns && side->last_name);
}

static int check_cache_item(void *arg, const char *ns, const char *name, sk_blob *blob)
{
    check_add(arg, ns, name, sk_blob_rev(blob));
    return 0;
}

static int check_store_row(void *arg, const sk_row *row)
{
    check_add(arg, row->ns, row->name, row->rev);
    return 0;
}

sk_err sk_cache_check(sk_cache *c, int res, sk_cache_check_result *out)
{
    SK_CHECK(res >= 0 && res < c->n_res);
    sk_cache_state st;
    sk_cache_get_state(c, &st);
    check_side mem = {FNV_OFFSET, 0, 0, NULL, NULL}, sql = {FNV_OFFSET, 0, 0, NULL, NULL};
    sk_err err = SK_OK;
    int visited = CHECK_CHUNK;
    while (err == SK_OK && visited == CHECK_CHUNK) {
        sk_cache_list_query q = {.res = res,
                                 .after_ns = mem.last_ns,
                                 .after_name = mem.last_name,
                                 .rev = st.rev,
                                 .limit = CHECK_CHUNK};
        err = list_index(c, &q, check_cache_item, &mem, &visited);
    }
    while (err == SK_OK && st.rev > 0) {
        sql.rows = 0;
        sk_list_query q = {.resource = c->resources[res],
                           .after_ns = sql.last_ns,
                           .after_name = sql.last_name,
                           .rev = st.rev,
                           .limit = CHECK_CHUNK};
        err = sk_store_list(c->store, &q, check_store_row, &sql);
        if (sql.rows < CHECK_CHUNK)
            break;
    }
    if (err == SK_OK) {
        out->rev = st.rev;
        out->cache_hash = mem.hash;
        out->store_hash = sql.hash;
        out->cache_count = mem.count;
        out->store_count = sql.count;
    }
    free(mem.last_ns);
    free(mem.last_name);
    free(sql.last_ns);
    free(sql.last_name);
    return err;
}

void sk_cache_distrust(sk_cache *c, int res)
{
    SK_CHECK(res >= 0 && res < c->n_res);
    atomic_store(&c->distrusted[res], 1);
    atomic_store(&c->rebuild_requested[res], 1);
}

void sk_cache_trust(sk_cache *c, int res)
{
    SK_CHECK(res >= 0 && res < c->n_res);
    atomic_store(&c->distrusted[res], 0);
}

void sk_cache_get_stats(sk_cache *c, sk_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_rwlock_rdlock(&c->lock);
    for (int i = 0; i < c->n_res; i++) {
        const resource *r = &c->res[i];
        out->objects += r->live;
        out->snapshots += (int64_t)r->snaps.len;
        out->object_bytes += (int64_t)r->object_bytes;
        out->index_bytes += (int64_t)r->index_bytes;
    }
    out->snapshot_bytes = (int64_t)c->history_bytes;
    out->snapshot_budget = (int64_t)snapshot_budget(c);
    out->events = (int64_t)c->ring.len;
    out->rev = c->rev;
    out->list_oldest = c->floor;
    pthread_rwlock_unlock(&c->lock);
    out->rebuilds = atomic_load(&c->rebuilds);
    out->store_rev = atomic_load(&c->store_rev);
}
