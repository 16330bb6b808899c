/*
 * cache.c - the watch cache (see cache.h).
 *
 * Index. Per resource, a skip list of keys ordered by (namespace, name) as
 * bytes, the same order as the SQL backends (PostgreSQL keys are COLLATE
 * "C"), so a continue token means the same thing whether a page came from
 * memory or from SQL. Each key holds its versions newest first. A version
 * older than the window is needed only while it is the newest at or below
 * the window's start; the rest are pruned when the event that superseded
 * them leaves the window, and a key whose only remaining version is a
 * tombstone older than the window is unlinked.
 *
 * Window. `ring` holds the events of revisions (base, rev], one per
 * revision, NULL for a revision of a resource the cache does not hold.
 * `oldest` = base: a list at revision >= base sees exactly the versions the
 * index keeps for it. Eviction is by count and by the bytes of the objects
 * the events reference.
 *
 * Invariant: an event references its key node only while the event is in
 * the window, and a node is unlinked only when its newest version is older
 * than the window, so no live event can point at a freed node.
 */
#include "cache/cache.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LEVEL 24
#define FEED_BATCH 1000
#define FEED_BATCH_BYTES ((size_t)16 * 1024 * 1024)
#define TICK_MS 1000
#define REBUILD_CHUNK 1000
#define DEFAULT_WINDOW_EVENTS 100000
#define DEFAULT_WINDOW_BYTES ((size_t)256 * 1024 * 1024)

struct sk_blob {
    atomic_long refs;
    int64_t rev;
    size_t len;
    const char *ns, *name; /* point into data, after the JSON */
    char data[];
};

typedef struct version {
    int64_t rev;
    int deleted;
    sk_blob *blob;
    struct version *older;
} version;

typedef struct node {
    char *ns, *name;
    version *versions; /* newest first, never empty while linked */
    int level;
    struct node *next[];
} node;

typedef struct skiplist {
    node *head;
    int level;
    int64_t live; /* keys whose newest version is not a tombstone */
} skiplist;

typedef struct event {
    int64_t rev;
    sk_event_type type;
    int res;
    node *key;
    sk_blob *obj, *prev;
} event;

struct sk_cache {
    sk_store *store;
    const char *const *resources;
    int n_res;
    int window_events;
    size_t window_bytes;
    sk_cache_notify_fn notify;
    void *notify_arg;

    pthread_rwlock_t lock; /* guards everything below except the feed fields */
    skiplist *lists;       /* n_res */
    event **ring;          /* ring[(r - base - 1 + head) % cap] for r in (base, rev] */
    size_t ring_cap, ring_head, ring_len;
    size_t window_used; /* object bytes referenced by ring events */
    int64_t base, rev;
    uint64_t generation;
    uint64_t rng;

    pthread_mutex_t wait_mu; /* waiters for a revision */
    pthread_cond_t wait_cv;

    atomic_llong rebuilds, store_rev;
    atomic_int stopping;
    int64_t drop_rev_once;
    char *corrupt_key_once; /* "resource/namespace/name", feed-owned */
    atomic_int *distrusted; /* per resource: reads go to SQL */
    atomic_int rebuild_requested;
    /* The feed's read position: equal to rev, except after an injected loss
     * (the feed then reads on as if the event had never come). Feed-owned. */
    int64_t read_after;
    pthread_t feed;
};

/* ---- blobs ---------------------------------------------------------------- */

static sk_blob *blob_new(const sk_row *row)
{
    size_t ns_len = strlen(row->ns) + 1, name_len = strlen(row->name) + 1;
    sk_blob *b = malloc(sizeof *b + row->value_len + 1 + ns_len + name_len);
    SK_CHECK_ALLOC(b);
    atomic_init(&b->refs, 1);
    b->rev = row->rev;
    b->len = row->value_len;
    memcpy(b->data, row->value, row->value_len);
    b->data[row->value_len] = '\0';
    char *ns = b->data + row->value_len + 1;
    memcpy(ns, row->ns, ns_len);
    memcpy(ns + ns_len, row->name, name_len);
    b->ns = ns;
    b->name = ns + ns_len;
    return b;
}

const char *sk_blob_ns(const sk_blob *b)
{
    return b->ns;
}

const char *sk_blob_name(const sk_blob *b)
{
    return b->name;
}

const char *sk_blob_data(const sk_blob *b, size_t *len_out)
{
    *len_out = b->len;
    return b->data;
}

int64_t sk_blob_rev(const sk_blob *b)
{
    return b->rev;
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

void sk_cache_event_clear(sk_cache_event *ev)
{
    sk_blob_unref(ev->obj);
    sk_blob_unref(ev->prev);
    memset(ev, 0, sizeof *ev);
}

/* ---- skip list ------------------------------------------------------------ */

static int key_cmp(const char *ns1, const char *name1, const char *ns2, const char *name2)
{
    int c = strcmp(ns1, ns2);
    return c ? c : strcmp(name1, name2);
}

static node *node_new(int level, const char *ns, const char *name)
{
    node *n = calloc(1, sizeof *n + (size_t)level * sizeof(node *));
    SK_CHECK_ALLOC(n);
    n->level = level;
    if (ns) {
        n->ns = strdup(ns);
        n->name = strdup(name);
        SK_CHECK(n->ns && n->name);
    }
    return n;
}

static void versions_free(version *v)
{
    while (v) {
        version *older = v->older;
        sk_blob_unref(v->blob);
        free(v);
        v = older;
    }
}

static void node_free(node *n)
{
    versions_free(n->versions);
    free(n->ns);
    free(n->name);
    free(n);
}

static void skiplist_init(skiplist *sl)
{
    sl->head = node_new(MAX_LEVEL, NULL, NULL);
    sl->level = 1;
    sl->live = 0;
}

static void skiplist_free(skiplist *sl)
{
    if (!sl->head)
        return;
    node *n = sl->head->next[0];
    while (n) {
        node *next = n->next[0];
        node_free(n);
        n = next;
    }
    free(sl->head);
    sl->head = NULL;
}

/* Fills update[] with the rightmost node before (ns, name) on each level. */
static node *skiplist_seek(skiplist *sl, const char *ns, const char *name, node **update)
{
    node *x = sl->head;
    for (int i = sl->level - 1; i >= 0; i--) {
        while (x->next[i] && key_cmp(x->next[i]->ns, x->next[i]->name, ns, name) < 0)
            x = x->next[i];
        if (update)
            update[i] = x;
    }
    return x->next[0];
}

static node *skiplist_find(skiplist *sl, const char *ns, const char *name)
{
    node *n = skiplist_seek(sl, ns, name, NULL);
    return n && key_cmp(n->ns, n->name, ns, name) == 0 ? n : NULL;
}

static int random_level(sk_cache *c)
{
    /* xorshift64: only for balancing, never for anything secret. */
    int level = 1;
    for (;;) {
        c->rng ^= c->rng << 13;
        c->rng ^= c->rng >> 7;
        c->rng ^= c->rng << 17;
        if ((c->rng & 3) != 0 || level == MAX_LEVEL)
            return level;
        level++;
    }
}

static node *skiplist_insert(sk_cache *c, skiplist *sl, const char *ns, const char *name)
{
    node *update[MAX_LEVEL];
    node *at = skiplist_seek(sl, ns, name, update);
    if (at && key_cmp(at->ns, at->name, ns, name) == 0)
        return at;
    int level = random_level(c);
    for (int i = sl->level; i < level; i++)
        update[i] = sl->head;
    if (level > sl->level)
        sl->level = level;
    node *n = node_new(level, ns, name);
    for (int i = 0; i < level; i++) {
        n->next[i] = update[i]->next[i];
        update[i]->next[i] = n;
    }
    return n;
}

static void skiplist_unlink(skiplist *sl, node *n)
{
    node *update[MAX_LEVEL];
    node *at = skiplist_seek(sl, n->ns, n->name, update);
    SK_CHECK(at == n);
    for (int i = 0; i < n->level; i++)
        update[i]->next[i] = n->next[i];
    while (sl->level > 1 && !sl->head->next[sl->level - 1])
        sl->level--;
    node_free(n);
}

/* The version of n live at rev (newest with v->rev <= rev), or NULL. */
static version *version_at(const node *n, int64_t rev)
{
    version *v = n->versions;
    while (v && v->rev > rev)
        v = v->older;
    return v;
}

/* ---- ring ------------------------------------------------------------------ */

static event **ring_slot(sk_cache *c, int64_t rev)
{
    SK_CHECK(rev > c->base && rev <= c->base + (int64_t)c->ring_len);
    return &c->ring[(c->ring_head + (size_t)(rev - c->base - 1)) % c->ring_cap];
}

static void ring_push(sk_cache *c, event *ev)
{
    if (c->ring_len == c->ring_cap) {
        size_t cap = c->ring_cap ? c->ring_cap * 2 : 1024;
        event **ring = malloc(cap * sizeof *ring);
        SK_CHECK_ALLOC(ring);
        for (size_t i = 0; i < c->ring_len; i++)
            ring[i] = c->ring[(c->ring_head + i) % c->ring_cap];
        free(c->ring);
        c->ring = ring;
        c->ring_cap = cap;
        c->ring_head = 0;
    }
    c->ring[(c->ring_head + c->ring_len) % c->ring_cap] = ev;
    c->ring_len++;
    if (ev)
        c->window_used += ev->obj->len;
}

/* Drops superseded versions of the evicted event's key that no list at a
 * revision >= the new base can see, and the key itself if nothing is left
 * but an old tombstone. */
static void prune_key(sk_cache *c, skiplist *sl, node *n)
{
    version *keep = version_at(n, c->base);
    if (keep) {
        versions_free(keep->older);
        keep->older = NULL;
    }
    if (n->versions->deleted && n->versions->rev <= c->base)
        skiplist_unlink(sl, n);
}

static void ring_evict_one(sk_cache *c)
{
    SK_CHECK(c->ring_len > 0);
    event *ev = c->ring[c->ring_head];
    c->ring_head = (c->ring_head + 1) % c->ring_cap;
    c->ring_len--;
    c->base++;
    if (!ev)
        return;
    SK_CHECK(ev->rev == c->base);
    c->window_used -= ev->obj->len;
    prune_key(c, &c->lists[ev->res], ev->key);
    sk_blob_unref(ev->obj);
    sk_blob_unref(ev->prev);
    free(ev);
}

static void ring_trim(sk_cache *c)
{
    while (c->ring_len > 0 &&
           ((int64_t)c->ring_len > c->window_events || c->window_used > c->window_bytes))
        ring_evict_one(c);
}

/* ---- state: build, apply, reset -------------------------------------------- */

int sk_cache_resource(const sk_cache *c, const char *resource)
{
    for (int i = 0; i < c->n_res; i++)
        if (strcmp(c->resources[i], resource) == 0)
            return i;
    return -1;
}

/* Frees the index and the window. Caller holds the write lock or owns c. */
static void state_clear(sk_cache *c)
{
    while (c->ring_len > 0)
        ring_evict_one(c);
    for (int i = 0; i < c->n_res; i++)
        skiplist_free(&c->lists[i]);
}

/* Applies one history row (revision c->rev + 1). Caller holds the write lock. */
/* Test-only fault injection (sk_cache_config.corrupt_key_once). */
/* One history row of a feed batch, ready to apply: its bytes are already a
 * blob (made while reading, outside the lock; NULL for a resource the cache
 * does not hold). */
typedef struct feed_row {
    int64_t rev;
    int res;
    int deleted;
    sk_blob *blob;
} feed_row;

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

/* Applies one row (revision c->rev + 1), taking its blob. Caller holds the
 * write lock. */
static void apply_row(sk_cache *c, feed_row *r)
{
    SK_CHECK(r->rev == c->rev + 1);
    event *ev = NULL;
    if (r->res >= 0 && !corrupt_this(c, r)) {
        skiplist *sl = &c->lists[r->res];
        node *n = skiplist_insert(c, sl, sk_blob_ns(r->blob), sk_blob_name(r->blob));
        version *cur = n->versions;
        int was_live = cur && !cur->deleted;
        version *v = calloc(1, sizeof *v);
        SK_CHECK_ALLOC(v);
        v->rev = r->rev;
        v->deleted = r->deleted;
        v->blob = r->blob;
        r->blob = NULL;
        v->older = cur;
        n->versions = v;
        sl->live += (!r->deleted) - was_live;
        ev = calloc(1, sizeof *ev);
        SK_CHECK_ALLOC(ev);
        ev->rev = r->rev;
        ev->res = r->res;
        ev->key = n;
        ev->type = r->deleted ? SK_EVENT_DELETED : was_live ? SK_EVENT_MODIFIED : SK_EVENT_ADDED;
        ev->obj = sk_blob_ref(v->blob);
        ev->prev = was_live ? sk_blob_ref(cur->blob) : NULL;
    }
    c->rev = r->rev;
    ring_push(c, ev);
}

typedef struct build_ctx {
    sk_cache *c;
    skiplist *sl;
    int rows;
    char *last_ns, *last_name;
} build_ctx;

static int build_row(void *arg, const sk_row *row)
{
    build_ctx *b = arg;
    node *n = skiplist_insert(b->c, b->sl, row->ns, row->name);
    SK_CHECK(n->versions == NULL);
    version *v = calloc(1, sizeof *v);
    SK_CHECK_ALLOC(v);
    v->rev = row->rev;
    v->blob = blob_new(row);
    n->versions = v;
    b->sl->live++;
    b->rows++;
    free(b->last_ns);
    free(b->last_name);
    b->last_ns = strdup(row->ns);
    b->last_name = strdup(row->name);
    SK_CHECK(b->last_ns && b->last_name);
    return 0;
}

/* Builds fresh lists from a consistent list of the store at `at`. Runs on
 * the feed thread without the lock: nothing else sees `fresh` yet, and the
 * skip list's random generator is the feed's own. */
static sk_err build_lists(sk_cache *c, int64_t at, skiplist *fresh)
{
    sk_err err = SK_OK;
    for (int i = 0; i < c->n_res; i++)
        skiplist_init(&fresh[i]);
    for (int i = 0; i < c->n_res && err == SK_OK && at > 0; i++) {
        build_ctx b = {c, &fresh[i], 0, NULL, NULL};
        do {
            b.rows = 0;
            sk_list_query q = {.resource = c->resources[i],
                               .after_ns = b.last_ns,
                               .after_name = b.last_name,
                               .rev = at,
                               .limit = REBUILD_CHUNK};
            err = sk_store_list(c->store, &q, build_row, &b);
        } while (err == SK_OK && b.rows == REBUILD_CHUNK);
        free(b.last_ns);
        free(b.last_name);
    }
    return err;
}

/*
 * Replaces the state with a consistent list of the store at its current
 * revision, then swaps it in under the write lock: readers see the old
 * state or the new one, never a mix. The generation moves on, so every
 * cursor of the old one gets SK_ERR_EXPIRED and its client re-lists.
 */
static sk_err rebuild(sk_cache *c)
{
    int64_t at = 0;
    sk_err err = sk_store_revisions(c->store, &at, NULL);
    if (err != SK_OK)
        return err;
    skiplist *fresh = calloc((size_t)c->n_res, sizeof *fresh);
    SK_CHECK_ALLOC(fresh);
    err = build_lists(c, at, fresh);
    if (err != SK_OK) {
        for (int i = 0; i < c->n_res; i++)
            skiplist_free(&fresh[i]);
        free(fresh);
        return err;
    }
    pthread_rwlock_wrlock(&c->lock);
    if (c->lists) {
        state_clear(c); /* the old window's events point into the old lists */
        free(c->lists);
    }
    c->lists = fresh;
    c->base = c->rev = c->read_after = at;
    c->generation++;
    pthread_rwlock_unlock(&c->lock);
    atomic_store(&c->store_rev, at);
    pthread_mutex_lock(&c->wait_mu);
    pthread_cond_broadcast(&c->wait_cv);
    pthread_mutex_unlock(&c->wait_mu);
    return SK_OK;
}

/* ---- the feed ------------------------------------------------------------- */

typedef struct feed_batch {
    sk_cache *c;
    feed_row *rows;
    int n;
    size_t bytes;
} feed_batch;

static int feed_collect(void *arg, const sk_row *row)
{
    feed_batch *b = arg;
    feed_row *r = &b->rows[b->n++];
    r->rev = row->rev;
    r->res = sk_cache_resource(b->c, row->resource);
    r->deleted = row->deleted;
    r->blob = r->res >= 0 ? blob_new(row) : NULL;
    b->bytes += row->value_len;
    return b->bytes >= FEED_BATCH_BYTES;
}

static void wake_waiters(sk_cache *c)
{
    pthread_mutex_lock(&c->wait_mu);
    pthread_cond_broadcast(&c->wait_cv);
    pthread_mutex_unlock(&c->wait_mu);
}

/*
 * Reads and applies history after the cache's revision up to `upto`.
 * Returns SK_OK, a store error, or SK_ERR_INTERNAL for a feed anomaly (a
 * missing or out-of-order revision): the caller rebuilds.
 */
static sk_err feed_catch_up(sk_cache *c, int64_t upto)
{
    sk_err err = SK_OK;
    feed_batch b = {c, calloc(FEED_BATCH, sizeof(feed_row)), 0, 0};
    SK_CHECK_ALLOC(b.rows);
    int64_t read_after = c->read_after;
    while (read_after < upto && err == SK_OK) {
        b.n = 0;
        b.bytes = 0;
        err = sk_store_history(c->store, read_after, FEED_BATCH, feed_collect, &b);
        if (err != SK_OK)
            break;
        if (b.n == 0) {
            sk_log_warn("watch cache: revision %lld is missing from the store's history",
                        (long long)(read_after + 1));
            err = SK_ERR_INTERNAL;
            break;
        }
        read_after = c->read_after = b.rows[b.n - 1].rev;
        pthread_rwlock_wrlock(&c->lock);
        for (int i = 0; i < b.n && err == SK_OK; i++) {
            if (c->drop_rev_once && b.rows[i].rev == c->drop_rev_once) {
                sk_log_warn("watch cache: test fault: dropping revision %lld",
                            (long long)b.rows[i].rev);
                c->drop_rev_once = 0;
                continue;
            }
            if (b.rows[i].rev != c->rev + 1) {
                sk_log_warn("watch cache: feed gave revision %lld after %lld",
                            (long long)b.rows[i].rev, (long long)c->rev);
                err = SK_ERR_INTERNAL;
                break;
            }
            apply_row(c, &b.rows[i]);
        }
        ring_trim(c);
        pthread_rwlock_unlock(&c->lock);
        for (int i = 0; i < b.n; i++) /* rows not applied: dropped, or after an anomaly */
            sk_blob_unref(b.rows[i].blob);
        wake_waiters(c);
        c->notify(c->notify_arg);
    }
    free(b.rows);
    return err;
}

/* Compaction (by any instance) removed history at or below compact: the
 * window must not claim to serve revisions the store no longer can, so
 * events at or below it leave the window (and watchers behind it get 410). */
static void follow_compaction(sk_cache *c, int64_t compact)
{
    pthread_rwlock_wrlock(&c->lock);
    while (c->base < compact && c->ring_len > 0)
        ring_evict_one(c);
    pthread_rwlock_unlock(&c->lock);
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
        if (err == SK_OK && atomic_exchange(&c->rebuild_requested, 0))
            err = SK_ERR_INTERNAL; /* a failed consistency check */
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

/* ---- lifecycle --------------------------------------------------------------- */

sk_err sk_cache_new(sk_store *store, const sk_cache_config *cfg, sk_cache_notify_fn notify,
                    void *arg, sk_cache **out)
{
    sk_cache *c = calloc(1, sizeof *c);
    SK_CHECK_ALLOC(c);
    c->store = store;
    c->resources = cfg->resources;
    c->n_res = cfg->n_resources;
    c->window_events = cfg->window_events > 0 ? cfg->window_events : DEFAULT_WINDOW_EVENTS;
    c->window_bytes = cfg->window_bytes > 0 ? cfg->window_bytes : DEFAULT_WINDOW_BYTES;
    c->drop_rev_once = cfg->drop_rev_once;
    if (cfg->corrupt_key_once) {
        c->corrupt_key_once = strdup(cfg->corrupt_key_once);
        SK_CHECK_ALLOC(c->corrupt_key_once);
    }
    c->distrusted = calloc((size_t)c->n_res, sizeof *c->distrusted);
    SK_CHECK_ALLOC(c->distrusted);
    c->notify = notify;
    c->notify_arg = arg;
    sk_random_bytes(&c->rng, sizeof c->rng);
    c->rng |= 1;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&c->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&c->wait_mu, NULL);
    sk_cond_init_monotonic(&c->wait_cv);
    sk_err err = rebuild(c);
    if (err != SK_OK) {
        sk_cache_free(c);
        return err;
    }
    SK_CHECK(pthread_create(&c->feed, NULL, feed_main, c) == 0);
    *out = c;
    return SK_OK;
}

void sk_cache_free(sk_cache *c)
{
    if (!c)
        return;
    if (c->lists) { /* the feed runs once the first build succeeded */
        atomic_store(&c->stopping, 1);
        pthread_join(c->feed, NULL);
        state_clear(c);
        free(c->lists);
    }
    free(c->ring);
    free(c->corrupt_key_once);
    free(c->distrusted);
    pthread_rwlock_destroy(&c->lock);
    pthread_mutex_destroy(&c->wait_mu);
    pthread_cond_destroy(&c->wait_cv);
    free(c);
}

/* ---- reads ------------------------------------------------------------------- */

static void state_locked(sk_cache *c, sk_cache_state *out)
{
    out->rev = c->rev;
    out->oldest = c->base;
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

/* SK_OK if a read at rev (0: latest) can be answered now. Read lock held. */
static sk_err check_rev_locked(sk_cache *c, int64_t *rev)
{
    if (*rev == 0)
        *rev = c->rev;
    if (*rev > c->rev)
        return SK_ERR_TIMEOUT;
    if (*rev < c->base)
        return SK_ERR_EXPIRED;
    return SK_OK;
}

sk_err sk_cache_get(sk_cache *c, int res, const char *ns, const char *name, int64_t rev,
                    sk_blob **out)
{
    SK_CHECK(res >= 0 && res < c->n_res);
    if (atomic_load(&c->distrusted[res]))
        return SK_ERR_EXPIRED;
    pthread_rwlock_rdlock(&c->lock);
    sk_err err = check_rev_locked(c, &rev);
    if (err != SK_OK)
        goto out;
    node *n = skiplist_find(&c->lists[res], ns, name);
    version *v = n ? version_at(n, rev) : NULL;
    if (!v || v->deleted) {
        err = SK_ERR_NOT_FOUND;
        goto out;
    }
    *out = sk_blob_ref(v->blob);
out:
    pthread_rwlock_unlock(&c->lock);
    return err;
}

/* The walk behind sk_cache_list, with no trust check: the consistency
 * check walks distrusted resources too (that is how they earn trust back). */
static sk_err list_index(sk_cache *c, const sk_cache_list_query *q, sk_cache_item_fn fn, void *arg,
                         int *visited_out)
{
    SK_CHECK(q->res >= 0 && q->res < c->n_res && q->limit > 0);
    int visited = 0;
    int64_t rev = q->rev;
    pthread_rwlock_rdlock(&c->lock);
    sk_err err = check_rev_locked(c, &rev);
    if (err != SK_OK)
        goto out;
    skiplist *sl = &c->lists[q->res];
    const char *from_ns = q->ns ? q->ns : "", *from_name = "";
    if (q->after_ns && key_cmp(q->after_ns, q->after_name, from_ns, from_name) > 0) {
        from_ns = q->after_ns;
        from_name = q->after_name;
    }
    node *n = skiplist_seek(sl, from_ns, from_name, NULL);
    if (n && q->after_ns && key_cmp(n->ns, n->name, q->after_ns, q->after_name) == 0)
        n = n->next[0];
    for (; n && visited < q->limit; n = n->next[0]) {
        if (q->ns && strcmp(n->ns, q->ns) != 0)
            break;
        version *v = version_at(n, rev);
        if (!v || v->deleted)
            continue;
        visited++;
        if (fn(arg, n->ns, n->name, v->blob))
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

#define EVENT_SCAN_MAX 4096 /* revisions examined per call: bounds the time the lock is held */

sk_err sk_cache_next_event(sk_cache *c, uint64_t gen, int res, int64_t after_rev,
                           sk_cache_event *ev, int64_t *scanned_out)
{
    sk_err err = SK_ERR_NOT_FOUND;
    pthread_rwlock_rdlock(&c->lock);
    if (gen != c->generation || after_rev < c->base) {
        err = SK_ERR_EXPIRED;
        goto out;
    }
    int64_t r = after_rev + 1;
    int64_t stop = c->rev < after_rev + EVENT_SCAN_MAX ? c->rev : after_rev + EVENT_SCAN_MAX;
    for (; r <= stop; r++) {
        event *e = *ring_slot(c, r);
        if (e && e->res == res) {
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

/* ---- consistency check ------------------------------------------------------- */

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
    atomic_store(&c->rebuild_requested, 1);
}

void sk_cache_trust(sk_cache *c, int res)
{
    SK_CHECK(res >= 0 && res < c->n_res);
    atomic_store(&c->distrusted[res], 0);
}

void sk_cache_get_stats(sk_cache *c, sk_cache_stats *out)
{
    pthread_rwlock_rdlock(&c->lock);
    int64_t objects = 0;
    for (int i = 0; i < c->n_res; i++)
        objects += c->lists[i].live;
    out->objects = objects;
    out->events = (int64_t)c->ring_len;
    out->rev = c->rev;
    pthread_rwlock_unlock(&c->lock);
    out->rebuilds = atomic_load(&c->rebuilds);
    out->store_rev = atomic_load(&c->store_rev);
}
