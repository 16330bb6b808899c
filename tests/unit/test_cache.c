/*
 * test_cache.c - the watch cache over a real SQLite store: reads at past
 * revisions inside the window, key order, the event window and its
 * eviction, compaction following, a lost feed event forcing a rebuild
 * (new generation, old cursors expired), and the whole store's changes
 * visited across resources.
 */
#include "cache/blob.h"
#include "cache/cache.h"
#include "store/store.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h expects the four headers above to be included first. */
#include <cmocka.h>

static const char *const resources[] = {"configmaps", "secrets"};

typedef struct fixture {
    char dir[64];
    sk_store *store;
    sk_cache *cache;
    pthread_mutex_t mu;
    int notified;
} fixture;

static void on_notify(void *arg)
{
    fixture *f = arg;
    pthread_mutex_lock(&f->mu);
    f->notified++;
    pthread_mutex_unlock(&f->mu);
}

static int64_t put(fixture *f, sk_write_op op, const char *res, const char *ns, const char *name,
                   const char *value)
{
    json_t *obj = NULL;
    if (op != SK_WRITE_DELETE)
        obj = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s}}", "kind", "ConfigMap", "metadata",
                        "name", name, "namespace", ns, "uid", "u", "data", "v", value);
    sk_write w = {.op = op, .resource = res, .ns = ns, .name = name, .object = obj};
    sk_row row = {0};
    assert_int_equal(sk_store_write(f->store, &w, &row), SK_OK);
    int64_t rev = row.rev;
    sk_row_clear(&row);
    return rev;
}

static void open_cache_cfg(fixture *f, int window_events, int64_t drop, const char *corrupt,
                           int64_t snapshot_bytes)
{
    sk_cache_config cfg = {.resources = resources,
                           .n_resources = 2,
                           .window_events = window_events,
                           .drop_rev_once = drop,
                           .corrupt_key_once = corrupt,
                           .snapshot_bytes = snapshot_bytes};
    assert_int_equal(sk_cache_new(f->store, &cfg, on_notify, f, &f->cache), SK_OK);
}

static void open_cache_corrupt(fixture *f, int window_events, int64_t drop, const char *corrupt)
{
    open_cache_cfg(f, window_events, drop, corrupt, 0);
}

static void open_cache(fixture *f, int window_events, int64_t drop)
{
    open_cache_corrupt(f, window_events, drop, NULL);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sk-cache-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    char url[128];
    snprintf(url, sizeof url, "sqlite:%s/db", f->dir);
    char *msg = NULL;
    assert_int_equal(sk_store_open(url, &f->store, &msg), SK_OK);
    pthread_mutex_init(&f->mu, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sk_cache_free(f->cache);
    sk_store_close(f->store);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    pthread_mutex_destroy(&f->mu);
    free(f);
    return 0;
}

static void wait_rev(fixture *f, int64_t rev)
{
    sk_cache_state st;
    assert_int_equal(sk_cache_wait(f->cache, rev, 5000, &st), SK_OK);
    assert_true(st.rev >= rev);
}

/* The data value of a key at rev through sk_cache_get, or NULL if absent. */
static char *value_at(fixture *f, const char *ns, const char *name, int64_t rev)
{
    sk_blob *b = NULL;
    sk_err err = sk_cache_get(f->cache, 0, ns, name, rev, &b);
    if (err == SK_ERR_NOT_FOUND)
        return NULL;
    assert_int_equal(err, SK_OK);
    size_t len;
    const char *data = sk_blob_data(b, &len);
    json_t *obj = json_loadb(data, len, 0, NULL);
    assert_non_null(obj);
    char *v = strdup(json_string_value(json_object_get(json_object_get(obj, "data"), "v")));
    json_decref(obj);
    sk_blob_unref(b);
    return v;
}

typedef struct collect {
    char keys[64][64];
    int n;
} collect;

static int collect_item(void *arg, const char *ns, const char *name, sk_blob *blob)
{
    collect *c = arg;
    snprintf(c->keys[c->n++], 64, "%s/%s@%lld", ns, name, (long long)sk_blob_rev(blob));
    return 0;
}

static void test_reads_at_past_revisions(void **state)
{
    fixture *f = *state;
    open_cache(f, 0, 0);
    int64_t r1 = put(f, SK_WRITE_CREATE, "configmaps", "b", "x", "1");
    int64_t r2 = put(f, SK_WRITE_CREATE, "configmaps", "a", "y", "1");
    int64_t r3 = put(f, SK_WRITE_UPDATE, "configmaps", "b", "x", "2");
    int64_t r4 = put(f, SK_WRITE_DELETE, "configmaps", "a", "y", NULL);
    put(f, SK_WRITE_CREATE, "secrets", "a", "s", "1");
    wait_rev(f, r4 + 1);

    char *v;
    assert_string_equal(v = value_at(f, "b", "x", r1), "1"), free(v);
    assert_string_equal(v = value_at(f, "b", "x", r3), "2"), free(v);
    assert_string_equal(v = value_at(f, "b", "x", 0), "2"), free(v);
    assert_null(value_at(f, "a", "y", r1));
    assert_string_equal(v = value_at(f, "a", "y", r2), "1"), free(v);
    assert_null(value_at(f, "a", "y", r4));
    sk_blob *b;
    assert_int_equal(sk_cache_get(f->cache, 0, "b", "x", r4 + 100, &b), SK_ERR_TIMEOUT);

    /* Lists in (namespace, name) order, each at its own revision. */
    collect c = {0};
    int visited;
    sk_cache_list_query q = {.res = 0, .rev = r3, .limit = 10};
    assert_int_equal(sk_cache_list(f->cache, &q, collect_item, &c, &visited), SK_OK);
    assert_int_equal(visited, 2);
    assert_string_equal(c.keys[0], "a/y@2");
    assert_string_equal(c.keys[1], "b/x@3");
    memset(&c, 0, sizeof c);
    q.rev = r4;
    q.after_ns = "a";
    q.after_name = "y";
    assert_int_equal(sk_cache_list(f->cache, &q, collect_item, &c, &visited), SK_OK);
    assert_int_equal(visited, 1);
    assert_string_equal(c.keys[0], "b/x@3");
    memset(&c, 0, sizeof c);
    q = (sk_cache_list_query){.res = 0, .ns = "a", .rev = r2, .limit = 10};
    assert_int_equal(sk_cache_list(f->cache, &q, collect_item, &c, &visited), SK_OK);
    assert_int_equal(visited, 1);
    assert_string_equal(c.keys[0], "a/y@2");
}

static void test_events_in_order_with_previous_versions(void **state)
{
    fixture *f = *state;
    open_cache(f, 0, 0);
    sk_cache_state st;
    sk_cache_get_state(f->cache, &st);
    int64_t r1 = put(f, SK_WRITE_CREATE, "configmaps", "n", "x", "1");
    put(f, SK_WRITE_CREATE, "secrets", "n", "s", "1");
    int64_t r3 = put(f, SK_WRITE_UPDATE, "configmaps", "n", "x", "2");
    int64_t r4 = put(f, SK_WRITE_DELETE, "configmaps", "n", "x", NULL);
    wait_rev(f, r4);

    static const sk_event_type want[] = {SK_EVENT_ADDED, SK_EVENT_MODIFIED, SK_EVENT_DELETED};
    const int64_t revs[] = {r1, r3, r4};
    int64_t cursor = st.rev, scanned = 0;
    for (int i = 0; i < 3; i++) {
        sk_cache_event ev = {0};
        assert_int_equal(sk_cache_next_event(f->cache, st.generation, 0, cursor, &ev, &scanned),
                         SK_OK);
        assert_int_equal(ev.rev, revs[i]);
        assert_int_equal(ev.type, want[i]);
        assert_true((ev.prev != NULL) == (i > 0));
        if (ev.prev)
            assert_int_equal(sk_blob_rev(ev.prev), revs[i - 1]);
        assert_string_equal(sk_blob_name(ev.obj), "x");
        cursor = ev.rev;
        sk_cache_event_clear(&ev);
    }
    sk_cache_event ev = {0};
    assert_int_equal(sk_cache_next_event(f->cache, st.generation, 0, cursor, &ev, &scanned),
                     SK_ERR_NOT_FOUND);
    assert_int_equal(scanned, r4);
    /* The feed notifies after it publishes a round, so the events above may
     * be readable a moment before the notify; it also ticks once a second.
     * The lock is never held across the assert: a failed one would leave
     * the feed's notify blocked and the teardown hung. */
    int notified = 0;
    for (int waited_ms = 0; !notified && waited_ms < 3000; waited_ms += 10) {
        pthread_mutex_lock(&f->mu);
        notified = f->notified;
        pthread_mutex_unlock(&f->mu);
        if (!notified)
            usleep(10000);
    }
    assert_true(notified > 0);
}

typedef struct visited {
    int64_t revs[1200];
    const char *resources[1200];
    int n, stop_at;
} visited;

static int visit_one(void *arg, const char *resource, const sk_cache_event *ev)
{
    visited *v = arg;
    assert_true(v->n < 1200);
    assert_int_equal(sk_blob_rev(ev->obj), ev->rev);
    v->revs[v->n] = ev->rev;
    v->resources[v->n++] = resource;
    return v->n == v->stop_at;
}

/* The whole store's changes, as the garbage collector follows them: every
 * resource's events in revision order across more than one chunk, bounded
 * by upto_rev, stopped by the visitor, and SK_ERR_EXPIRED once the window
 * has moved past the cursor. */
static void test_visit_events_of_every_resource(void **state)
{
    fixture *f = *state;
    open_cache(f, 1000, 0);
    sk_cache_state st;
    sk_cache_get_state(f->cache, &st);
    int64_t first = 0, last = 0;
    char name[32];
    for (int i = 0; i < 600; i++) {
        snprintf(name, sizeof name, "o%d", i);
        last = put(f, SK_WRITE_CREATE, i % 3 ? "configmaps" : "secrets", "n", name, "1");
        first = first ? first : last;
    }
    wait_rev(f, last);
    visited *v = calloc(1, sizeof *v);
    assert_int_equal(sk_cache_visit_events(f->cache, st.rev, last, visit_one, v), SK_OK);
    assert_int_equal(v->n, 600);
    for (int i = 0; i < 600; i++) {
        assert_int_equal(v->revs[i], first + i);
        assert_string_equal(v->resources[i], i % 3 ? "configmaps" : "secrets");
    }
    /* bounded above, and past the cache's revision nothing more */
    memset(v, 0, sizeof *v);
    assert_int_equal(sk_cache_visit_events(f->cache, first + 9, first + 20, visit_one, v), SK_OK);
    assert_int_equal(v->n, 11);
    assert_int_equal(v->revs[0], first + 10);
    memset(v, 0, sizeof *v);
    assert_int_equal(sk_cache_visit_events(f->cache, last, last + 100, visit_one, v), SK_OK);
    assert_int_equal(v->n, 0);
    /* the visitor stops it, also inside a chunk */
    memset(v, 0, sizeof *v);
    v->stop_at = 300;
    assert_int_equal(sk_cache_visit_events(f->cache, st.rev, last, visit_one, v), SK_OK);
    assert_int_equal(v->n, 300);
    /* 600 more: the window (1,000) no longer holds the first cursor */
    for (int i = 0; i < 600; i++) {
        snprintf(name, sizeof name, "p%d", i);
        last = put(f, SK_WRITE_CREATE, "configmaps", "n", name, "1");
    }
    wait_rev(f, last);
    memset(v, 0, sizeof *v);
    assert_int_equal(sk_cache_visit_events(f->cache, st.rev, last, visit_one, v), SK_ERR_EXPIRED);
    assert_int_equal(v->n, 0);
    memset(v, 0, sizeof *v);
    assert_int_equal(sk_cache_visit_events(f->cache, last - 900, last, visit_one, v), SK_OK);
    assert_int_equal(v->n, 900);
    free(v);
}

/* A resource added at run time (a CRD's storage key): listed at the cache's
 * revision with what was written before, its later events applied, cursors
 * from before its addition expired; the configured resources untouched. */
static void test_resource_added_at_run_time(void **state)
{
    fixture *f = *state;
    open_cache(f, 0, 0);
    int64_t r1 = put(f, SK_WRITE_CREATE, "widgets.example.com", "n", "early", "1");
    put(f, SK_WRITE_CREATE, "configmaps", "n", "c", "1");
    wait_rev(f, r1);
    sk_cache_state before;
    sk_cache_get_state(f->cache, &before);
    assert_int_equal(sk_cache_resource(f->cache, "widgets.example.com"), -1);
    sk_cache_want_resource(f->cache, "widgets.example.com");
    sk_cache_want_resource(f->cache, "widgets.example.com"); /* once */
    int res = -1;
    for (int i = 0; i < 500 && res < 0; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        res = sk_cache_resource(f->cache, "widgets.example.com");
    }
    assert_int_equal(res, 2);
    assert_int_equal(sk_cache_resource(f->cache, "configmaps"), 0);
    int64_t r2 = put(f, SK_WRITE_CREATE, "widgets.example.com", "n", "late", "2");
    wait_rev(f, r2);
    collect c = {.n = 0};
    sk_cache_list_query q = {.res = res, .rev = r2, .limit = 10};
    int visited = 0;
    assert_int_equal(sk_cache_list(f->cache, &q, collect_item, &c, &visited), SK_OK);
    assert_int_equal(visited, 2);
    char want[64];
    snprintf(want, sizeof want, "n/early@%lld", (long long)r1);
    assert_string_equal(c.keys[0], want);
    snprintf(want, sizeof want, "n/late@%lld", (long long)r2);
    assert_string_equal(c.keys[1], want);
    sk_cache_event ev = {0};
    int64_t scanned = 0;
    /* a cursor from before the addition (r1: the configmap written after it
     * was applied before the key was added): its events were not kept */
    assert_int_equal(sk_cache_next_event(f->cache, before.generation, res, r1, &ev, &scanned),
                     SK_ERR_EXPIRED);
    sk_cache_state now;
    sk_cache_get_state(f->cache, &now);
    assert_int_equal(sk_cache_next_event(f->cache, now.generation, res, r2 - 1, &ev, &scanned),
                     SK_OK);
    assert_int_equal(ev.rev, r2);
    assert_string_equal(sk_blob_name(ev.obj), "late");
    sk_cache_event_clear(&ev);
}

static void test_window_eviction(void **state)
{
    fixture *f = *state;
    open_cache(f, 4, 0);
    sk_cache_state st0;
    sk_cache_get_state(f->cache, &st0);
    int64_t first = put(f, SK_WRITE_CREATE, "configmaps", "n", "k", "0");
    int64_t last = first;
    for (int i = 1; i <= 9; i++) {
        char v[8];
        snprintf(v, sizeof v, "%d", i);
        last = put(f, SK_WRITE_UPDATE, "configmaps", "n", "k", v);
    }
    wait_rev(f, last);
    sk_cache_state st;
    sk_cache_get_state(f->cache, &st);
    assert_int_equal(st.oldest, last - 4);
    /* Inside the window: every version is still readable. */
    char *v;
    assert_string_equal(v = value_at(f, "n", "k", last - 4), "5"), free(v);
    assert_string_equal(v = value_at(f, "n", "k", last - 1), "8"), free(v);
    /* Older: expired, for reads and for cursors. */
    sk_blob *b;
    assert_int_equal(sk_cache_get(f->cache, 0, "n", "k", first, &b), SK_ERR_EXPIRED);
    sk_cache_event ev = {0};
    int64_t scanned;
    assert_int_equal(sk_cache_next_event(f->cache, st.generation, 0, first, &ev, &scanned),
                     SK_ERR_EXPIRED);
    /* A deleted key leaves the index once its tombstone leaves the window. */
    int64_t del = put(f, SK_WRITE_DELETE, "configmaps", "n", "k", NULL);
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof name, "o%d", i);
        last = put(f, SK_WRITE_CREATE, "secrets", "n", name, "x");
    }
    wait_rev(f, last);
    assert_null(value_at(f, "n", "k", 0));
    assert_int_equal(sk_cache_get(f->cache, 0, "n", "k", del, &b), SK_ERR_EXPIRED);
    sk_cache_stats stats;
    sk_cache_get_stats(f->cache, &stats);
    assert_int_equal(stats.events, 4);
    assert_int_equal(stats.objects, 5); /* the five secrets; the configmap is gone */
}

/* A cache built on a store that already has history replays it: events
 * from before the cache existed (a restart), with their previous versions,
 * back to the compact revision or the window's length, whichever is
 * nearer; resources given as more_resources replay too. */
static void test_start_replays_history(void **state)
{
    fixture *f = *state;
    /* Revision 1 is where the window can start at most (reads take 0 for
     * "latest"): its own event is not replayed. */
    int64_t r0 = put(f, SK_WRITE_CREATE, "secrets", "n", "s", "1");
    int64_t r1 = put(f, SK_WRITE_CREATE, "configmaps", "n", "x", "1");
    int64_t r2 = put(f, SK_WRITE_UPDATE, "configmaps", "n", "x", "2");
    int64_t r3 = put(f, SK_WRITE_CREATE, "gadgets.example.com", "n", "g", "1");
    int64_t r4 = put(f, SK_WRITE_DELETE, "configmaps", "n", "x", NULL);
    const char *const more[] = {"gadgets.example.com"};
    sk_cache_config cfg = {
        .resources = resources, .n_resources = 2, .more_resources = more, .n_more_resources = 1};
    assert_int_equal(sk_cache_new(f->store, &cfg, on_notify, f, &f->cache), SK_OK);
    sk_cache_state st;
    sk_cache_get_state(f->cache, &st);
    assert_int_equal(st.rev, r4);
    assert_int_equal(st.oldest, r0);
    static const sk_event_type want[] = {SK_EVENT_ADDED, SK_EVENT_MODIFIED, SK_EVENT_DELETED};
    const int64_t revs[] = {r1, r2, r4};
    int64_t cursor = r0, scanned = 0;
    for (int i = 0; i < 3; i++) {
        sk_cache_event ev = {0};
        assert_int_equal(sk_cache_next_event(f->cache, st.generation, 0, cursor, &ev, &scanned),
                         SK_OK);
        assert_int_equal(ev.rev, revs[i]);
        assert_int_equal(ev.type, want[i]);
        assert_true((ev.prev != NULL) == (i > 0));
        cursor = ev.rev;
        sk_cache_event_clear(&ev);
    }
    int g = sk_cache_resource(f->cache, "gadgets.example.com");
    assert_true(g >= 2);
    sk_cache_event ev = {0};
    assert_int_equal(sk_cache_next_event(f->cache, st.generation, g, r0, &ev, &scanned), SK_OK);
    assert_int_equal(ev.rev, r3);
    assert_int_equal(ev.type, SK_EVENT_ADDED);
    sk_cache_event_clear(&ev);
    char *v;
    assert_string_equal(v = value_at(f, "n", "x", r2), "2"), free(v);
    sk_cache_free(f->cache);

    /* A window of 2 events starts 2 revisions back; a compaction beyond
     * that moves the start to the compact revision. */
    open_cache(f, 2, 0);
    sk_cache_get_state(f->cache, &st);
    assert_int_equal(st.oldest, r4 - 2);
    sk_cache_free(f->cache);
    assert_int_equal(sk_store_compact(f->store, r4 - 1, NULL), SK_OK);
    open_cache(f, 0, 0);
    sk_cache_get_state(f->cache, &st);
    assert_int_equal(st.oldest, r4 - 1);
    assert_int_equal(sk_cache_next_event(f->cache, st.generation, 0, r1, &ev, &scanned),
                     SK_ERR_EXPIRED);
}

static void test_compaction_raises_floor(void **state)
{
    fixture *f = *state;
    open_cache(f, 0, 0);
    int64_t r1 = put(f, SK_WRITE_CREATE, "configmaps", "n", "c", "1");
    int64_t r2 = put(f, SK_WRITE_UPDATE, "configmaps", "n", "c", "2");
    wait_rev(f, r2);
    assert_int_equal(sk_store_compact(f->store, r2, NULL), SK_OK);
    /* The feed follows compaction within a tick (1 s). */
    sk_blob *b = NULL;
    sk_err err = SK_OK;
    for (int i = 0; i < 50 && (err = sk_cache_get(f->cache, 0, "n", "c", r1, &b)) == SK_OK; i++) {
        sk_blob_unref(b);
        usleep(100 * 1000);
    }
    assert_int_equal(err, SK_ERR_EXPIRED);
    char *v;
    assert_string_equal(v = value_at(f, "n", "c", 0), "2"), free(v);
}

static void test_lost_event_forces_rebuild(void **state)
{
    fixture *f = *state;
    int64_t start = 0;
    assert_int_equal(sk_store_revisions(f->store, &start, NULL), SK_OK);
    open_cache(f, 0, start + 2);
    sk_cache_state st;
    sk_cache_get_state(f->cache, &st);
    put(f, SK_WRITE_CREATE, "configmaps", "n", "a", "1");
    put(f, SK_WRITE_CREATE, "configmaps", "n", "b", "1"); /* dropped from the feed */
    int64_t r3 = put(f, SK_WRITE_CREATE, "configmaps", "n", "c", "1");
    wait_rev(f, r3);
    sk_cache_state after;
    sk_cache_get_state(f->cache, &after);
    assert_true(after.generation > st.generation);
    sk_cache_stats stats;
    sk_cache_get_stats(f->cache, &stats);
    assert_int_equal(stats.rebuilds, 1);
    /* Old cursors are told to re-list; the rebuilt state has everything. */
    sk_cache_event ev = {0};
    int64_t scanned;
    assert_int_equal(sk_cache_next_event(f->cache, st.generation, 0, st.rev, &ev, &scanned),
                     SK_ERR_EXPIRED);
    char *v;
    assert_string_equal(v = value_at(f, "n", "b", 0), "1"), free(v);
    assert_string_equal(v = value_at(f, "n", "c", 0), "1"), free(v);
}

/* Keys of a list, as "ns/name@rev", from the cache and from the store. */
typedef struct keys {
    char k[256][48];
    int n;
} keys;

static int cache_key(void *arg, const char *ns, const char *name, sk_blob *blob)
{
    keys *l = arg;
    snprintf(l->k[l->n++], 48, "%s/%s@%lld", ns, name, (long long)sk_blob_rev(blob));
    return 0;
}

static int store_key(void *arg, const sk_row *row)
{
    keys *l = arg;
    snprintf(l->k[l->n++], 48, "%s/%s@%lld", row->ns, row->name, (long long)row->rev);
    return 0;
}

/*
 * Differential: random creates, updates, deletes and re-creates over three
 * namespaces, with a small window or a small snapshot budget (so snapshots
 * are dropped all the time); after every write, the cache's list at EVERY
 * revision it still serves, per namespace and across all, and from a
 * continue key, must equal the store's list at that revision, and every
 * older revision must be refused (SK_ERR_EXPIRED: the caller reads SQL).
 */
static void differential_against_store(fixture *f, int window_events, int64_t snapshot_bytes)
{
    static const char *const nss[] = {"a", "b", "c"};
    srand(1234);
    char name[16];
    for (int i = 0; i < 30; i++) {
        snprintf(name, sizeof name, "k%02d", rand() % 40);
        sk_write w = {.op = SK_WRITE_CREATE,
                      .resource = "configmaps",
                      .ns = nss[rand() % 3],
                      .name = name,
                      .object = json_pack("{s:{s:s, s:s}}", "metadata", "name", name, "uid", "u")};
        sk_store_write(f->store, &w, NULL); /* duplicates fail: fine */
    }
    open_cache_cfg(f, window_events, 0, NULL, snapshot_bytes);
    static keys mem, sql;
    int compared = 0, refused = 0;
    for (int step = 0; step < 300; step++) {
        snprintf(name, sizeof name, "k%02d", rand() % 40);
        int op = rand() % 3;
        sk_write w = {.op = op == 0   ? SK_WRITE_CREATE
                            : op == 1 ? SK_WRITE_UPDATE
                                      : SK_WRITE_DELETE,
                      .resource = rand() % 5 == 0 ? "secrets" : "configmaps",
                      .ns = nss[rand() % 3],
                      .name = name};
        if (w.op != SK_WRITE_DELETE)
            w.object = json_pack("{s:{s:s, s:s}, s:{s:i}}", "metadata", "name", name, "uid", "u",
                                 "data", "step", step);
        sk_row row = {0};
        if (sk_store_write(f->store, &w, &row) != SK_OK)
            continue; /* create of a live key, update/delete of a missing one */
        wait_rev(f, row.rev);
        sk_row_clear(&row);
        sk_cache_state st;
        sk_cache_get_state(f->cache, &st);
        assert_true(st.list_oldest >= st.oldest);
        int visited;
        for (int64_t at = st.oldest; at < st.list_oldest; at++) {
            sk_cache_list_query cq = {.res = 0, .rev = at, .limit = 256};
            assert_int_equal(sk_cache_list(f->cache, &cq, cache_key, &mem, &visited),
                             SK_ERR_EXPIRED);
            refused++;
        }
        for (int64_t at = st.list_oldest; at <= st.rev; at++) {
            for (int scope = 0; scope <= 5; scope++) {
                /* Each namespace, all of them, and after a continue key in
                 * all of them and in one. */
                const char *ns = scope < 3 ? nss[scope] : scope == 5 ? "b" : NULL;
                const char *after_ns = scope >= 4 ? "b" : NULL;
                const char *after_name = scope >= 4 ? "k20" : NULL;
                mem.n = sql.n = 0;
                sk_cache_list_query cq = {.res = 0,
                                          .ns = ns,
                                          .after_ns = after_ns,
                                          .after_name = after_name,
                                          .rev = at,
                                          .limit = 256};
                assert_int_equal(sk_cache_list(f->cache, &cq, cache_key, &mem, &visited), SK_OK);
                sk_list_query q = {.resource = "configmaps",
                                   .ns = ns,
                                   .after_ns = after_ns,
                                   .after_name = after_name,
                                   .rev = at,
                                   .limit = 256};
                assert_int_equal(sk_store_list(f->store, &q, store_key, &sql), SK_OK);
                assert_int_equal(mem.n, sql.n);
                for (int i = 0; i < mem.n; i++)
                    assert_string_equal(mem.k[i], sql.k[i]);
                int64_t count = -1; /* the key counts agree with the walk */
                assert_int_equal(sk_cache_count(f->cache, &cq, &count), SK_OK);
                assert_int_equal(count, sql.n);
                compared++;
            }
        }
    }
    assert_true(compared > 1000);
    if (snapshot_bytes > 0)
        assert_true(refused > 100); /* the budget, not the window, moved the floor */
    sk_cache_stats stats;
    sk_cache_get_stats(f->cache, &stats);
    if (snapshot_bytes > 0)
        assert_true(stats.snapshot_bytes <= snapshot_bytes);
}

static void test_differential_small_window(void **state)
{
    differential_against_store(*state, 25, 0);
}

static void test_differential_small_snapshot_budget(void **state)
{
    differential_against_store(*state, 0, 4096);
}

static void test_check_finds_corruption(void **state)
{
    fixture *f = *state;
    open_cache_corrupt(f, 0, 0, "configmaps/n/lost");
    put(f, SK_WRITE_CREATE, "configmaps", "n", "kept", "1");
    int64_t r = put(f, SK_WRITE_CREATE, "configmaps", "n", "lost", "1");
    wait_rev(f, r);
    sk_cache_check_result res;
    assert_int_equal(sk_cache_check(f->cache, 1, &res), SK_OK); /* secrets: both empty */
    assert_true(res.cache_hash == res.store_hash && res.cache_count == 0);
    assert_int_equal(sk_cache_check(f->cache, 0, &res), SK_OK);
    assert_int_equal(res.rev, r);
    assert_int_equal(res.store_count, 2);
    assert_int_equal(res.cache_count, 1);
    assert_true(res.cache_hash != res.store_hash);
    /* Distrusted: reads go elsewhere, and the feed rebuilds that resource
     * alone: its cursors expire, the other resource's do not. */
    sk_cache_state before;
    sk_cache_get_state(f->cache, &before);
    sk_cache_distrust(f->cache, 0);
    sk_blob *b;
    assert_int_equal(sk_cache_get(f->cache, 0, "n", "kept", 0, &b), SK_ERR_EXPIRED);
    sk_cache_stats stats = {0};
    for (int i = 0; i < 50 && stats.rebuilds == 0; i++) {
        usleep(100 * 1000);
        sk_cache_get_stats(f->cache, &stats);
    }
    assert_int_equal(stats.rebuilds, 1);
    sk_cache_event ev = {0};
    int64_t scanned;
    assert_int_equal(sk_cache_next_event(f->cache, before.generation, 0, before.rev, &ev, &scanned),
                     SK_ERR_EXPIRED);
    assert_int_equal(sk_cache_next_event(f->cache, before.generation, 1, before.rev, &ev, &scanned),
                     SK_ERR_NOT_FOUND);
    sk_cache_state after;
    sk_cache_get_state(f->cache, &after);
    assert_int_equal(after.oldest, before.oldest); /* the window was kept */
    /* A cursor of the new generation may not read the resource's events
     * from before its rebuild either (they were made against the bad tree),
     * but may start at the rebuild's revision. */
    assert_int_equal(
        sk_cache_next_event(f->cache, after.generation, 0, before.rev - 1, &ev, &scanned),
        SK_ERR_EXPIRED);
    assert_int_equal(sk_cache_next_event(f->cache, after.generation, 0, before.rev, &ev, &scanned),
                     SK_ERR_NOT_FOUND);
    assert_int_equal(
        sk_cache_next_event(f->cache, after.generation, 1, before.rev - 1, &ev, &scanned),
        SK_ERR_NOT_FOUND);
    assert_int_equal(sk_cache_check(f->cache, 0, &res), SK_OK);
    assert_true(res.cache_hash == res.store_hash && res.cache_count == 2);
    sk_cache_trust(f->cache, 0);
    char *v;
    assert_string_equal(v = value_at(f, "n", "lost", 0), "1"), free(v);
}

/* With no history snapshots, past revisions go to SQL and the newest is
 * still served. */
static void test_no_history_snapshots(void **state)
{
    fixture *f = *state;
    open_cache_cfg(f, 0, 0, NULL, -1);
    int64_t r1 = put(f, SK_WRITE_CREATE, "configmaps", "n", "x", "1");
    int64_t r2 = put(f, SK_WRITE_UPDATE, "configmaps", "n", "x", "2");
    wait_rev(f, r2);
    sk_blob *b;
    assert_int_equal(sk_cache_get(f->cache, 0, "n", "x", r1, &b), SK_ERR_EXPIRED);
    char *v;
    assert_string_equal(v = value_at(f, "n", "x", r2), "2"), free(v);
    sk_cache_stats stats;
    sk_cache_get_stats(f->cache, &stats);
    assert_int_equal(stats.snapshot_bytes, 0);
    assert_int_equal(stats.snapshots, 2); /* the newest of each resource */
    assert_int_equal(stats.list_oldest, r2);
}

/*
 * Concurrency (adapted from a reviewer's stress test): one writer with
 * periodic compaction, readers paging at random served revisions and
 * comparing each whole list with the store's at that revision, watchers
 * following cursors, and a thread that distrusts and trusts resources (so
 * per-resource rebuilds run all the time), with a tiny snapshot budget.
 * Under ASan a reader touching freed nodes fails the run.
 */
typedef struct stress {
    fixture *f;
    atomic_int done;
    atomic_long lists, mismatches, events;
} stress;

static void *stress_writer(void *arg)
{
    stress *st = arg;
    unsigned seed = 1;
    static const char *const nss[] = {"a", "b", "c"};
    for (int step = 0; step < 1500; step++) {
        char name[16];
        snprintf(name, sizeof name, "k%03d", rand_r(&seed) % 60); /* <= 180 keys a list */
        int op = rand_r(&seed) % 10;
        sk_write w = {.op = op < 3   ? SK_WRITE_CREATE
                            : op < 8 ? SK_WRITE_UPDATE
                                     : SK_WRITE_DELETE,
                      .resource = resources[rand_r(&seed) % 2],
                      .ns = nss[rand_r(&seed) % 3],
                      .name = name};
        if (w.op != SK_WRITE_DELETE)
            w.object = json_pack("{s:{s:s, s:s}, s:{s:i}}", "metadata", "name", name, "uid", "u",
                                 "data", "step", step);
        sk_store_write(st->f->store, &w, NULL); /* conflicts fail: fine */
        if (step % 300 == 299) {
            int64_t cur = 0;
            sk_store_revisions(st->f->store, &cur, NULL);
            sk_store_compact(st->f->store, cur - 200, NULL);
        }
    }
    atomic_store(&st->done, 1);
    return NULL;
}

static void *stress_reader(void *arg)
{
    stress *st = arg;
    unsigned seed = (unsigned)(uintptr_t)&seed;
    keys *mem = malloc(sizeof *mem), *sql = malloc(sizeof *sql);
    while (!atomic_load(&st->done)) {
        sk_cache_state cs;
        sk_cache_get_state(st->f->cache, &cs);
        int64_t span = cs.rev - cs.list_oldest + 1;
        int64_t at = cs.list_oldest + (span > 0 ? rand_r(&seed) % span : 0);
        int res = rand_r(&seed) % 2, visited = 0, ok = at > 0;
        const char *ns = rand_r(&seed) % 2 ? "b" : NULL;
        char last_ns[16] = "", last_name[16] = "";
        mem->n = 0;
        while (ok) { /* pages of 7, each from the snapshot at `at` */
            sk_cache_list_query q = {.res = res,
                                     .ns = ns,
                                     .after_ns = mem->n ? last_ns : NULL,
                                     .after_name = mem->n ? last_name : NULL,
                                     .rev = at,
                                     .limit = 7};
            ok = sk_cache_list(st->f->cache, &q, cache_key, mem, &visited) == SK_OK;
            if (!ok || visited < 7 || mem->n > 240)
                break;
            const char *k = mem->k[mem->n - 1], *slash = strchr(k, '/'), *atp = strchr(k, '@');
            snprintf(last_ns, sizeof last_ns, "%.*s", (int)(slash - k), k);
            snprintf(last_name, sizeof last_name, "%.*s", (int)(atp - slash - 1), slash + 1);
        }
        sql->n = 0;
        sk_list_query sq = {.resource = resources[res], .ns = ns, .rev = at, .limit = 250};
        if (!ok || sk_store_list(st->f->store, &sq, store_key, sql) != SK_OK)
            continue; /* fell below the floor, or compacted meanwhile */
        int same = mem->n == sql->n;
        for (int i = 0; same && i < mem->n; i++)
            same = strcmp(mem->k[i], sql->k[i]) == 0;
        atomic_fetch_add(&st->lists, 1);
        atomic_fetch_add(&st->mismatches, !same);
    }
    free(mem);
    free(sql);
    return NULL;
}

static void *stress_watcher(void *arg)
{
    stress *st = arg;
    while (!atomic_load(&st->done)) {
        sk_cache_state cs;
        sk_cache_get_state(st->f->cache, &cs);
        int64_t cursor = cs.rev, scanned;
        sk_err err = SK_OK;
        while (err != SK_ERR_EXPIRED && !atomic_load(&st->done)) {
            sk_cache_event ev = {0};
            err = sk_cache_next_event(st->f->cache, cs.generation, 0, cursor, &ev, &scanned);
            if (err == SK_OK) {
                assert_true(ev.rev > cursor);
                cursor = ev.rev;
                atomic_fetch_add(&st->events, 1);
                sk_cache_event_clear(&ev);
            } else if (err == SK_ERR_NOT_FOUND) {
                if (scanned == cursor)
                    usleep(200);
                cursor = scanned;
            }
        }
    }
    return NULL;
}

static void *stress_distruster(void *arg)
{
    stress *st = arg;
    for (int n = 0; !atomic_load(&st->done); n++) {
        usleep(30000);
        sk_cache_distrust(st->f->cache, n % 2);
        usleep(10000);
        sk_cache_trust(st->f->cache, n % 2);
    }
    return NULL;
}

static void test_concurrent_readers_match_store(void **state)
{
    stress st = {.f = *state};
    open_cache_cfg(st.f, 0, 0, NULL, 4096);
    pthread_t w, r[3], wa, d;
    assert_int_equal(pthread_create(&w, NULL, stress_writer, &st), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&r[i], NULL, stress_reader, &st), 0);
    assert_int_equal(pthread_create(&wa, NULL, stress_watcher, &st), 0);
    assert_int_equal(pthread_create(&d, NULL, stress_distruster, &st), 0);
    pthread_join(w, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(r[i], NULL);
    pthread_join(wa, NULL);
    pthread_join(d, NULL);
    assert_int_equal(atomic_load(&st.mismatches), 0);
    assert_true(atomic_load(&st.lists) > 50);
    assert_true(atomic_load(&st.events) > 100);
    sk_cache_stats stats;
    sk_cache_get_stats(st.f->cache, &stats);
    assert_true(stats.rebuilds > 0);
    assert_true(stats.snapshot_bytes <= 4096);
}

/* A blob's derived encoding: threads attaching at once all get the one that
 * won, nothing but that pointer ever changes, and the blob's JSON stays. */
typedef struct attach_arg {
    sk_blob *b;
    atomic_int *go;
    unsigned slot;
    char mine[16];
    const char *got;
    size_t got_len;
} attach_arg;

static void *attach_racer(void *p)
{
    attach_arg *a = p;
    while (!atomic_load(a->go))
        ;
    a->got = sk_blob_attach_derived(a->b, a->slot, a->mine, strlen(a->mine), &a->got_len);
    return NULL;
}

/* Racers on two slots at once: the slot array is made once, each slot keeps
 * its first writer's bytes, and the slots do not see each other's. */
static void test_blob_derived_attached_once(void **state)
{
    (void)state;
    sk_blob *b = sk_blob_new("ns", "n", 7, "{\"a\":1}", 7);
    size_t len = 0;
    for (unsigned s = 0; s < SK_BLOB_SLOTS; s++)
        assert_null(sk_blob_derived(b, s, &len));
    enum { N = 6 };
    attach_arg args[N];
    pthread_t th[N];
    atomic_int go = 0;
    for (int i = 0; i < N; i++) {
        args[i] = (attach_arg){.b = b, .go = &go, .slot = (unsigned)(i % 2)};
        snprintf(args[i].mine, sizeof args[i].mine, "enc-%d%s", i, i % 3 ? "-x" : "");
        assert_int_equal(pthread_create(&th[i], NULL, attach_racer, &args[i]), 0);
    }
    atomic_store(&go, 1);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (unsigned s = 0; s < 2; s++) {
        const char *kept = sk_blob_derived(b, s, &len);
        assert_non_null(kept);
        int winners = 0;
        for (int i = 0; i < N; i++) {
            if (args[i].slot != s)
                continue;
            assert_ptr_equal(args[i].got, kept);
            assert_int_equal(args[i].got_len, len);
            winners += strlen(args[i].mine) == len && memcmp(args[i].mine, kept, len) == 0;
        }
        assert_int_equal(winners, 1);
        size_t again_len;
        assert_ptr_equal(sk_blob_attach_derived(b, s, "late", 4, &again_len), kept);
    }
    assert_null(sk_blob_derived(b, 2, &len));
    size_t json_len;
    const char *json = sk_blob_data(b, &json_len);
    assert_int_equal(json_len, 7);
    assert_memory_equal(json, "{\"a\":1}", 8);
    sk_blob_unref(b); /* frees all (ASan: no leak) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blob_derived_attached_once),
        cmocka_unit_test_setup_teardown(test_reads_at_past_revisions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_in_order_with_previous_versions, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_window_eviction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_raises_floor, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_replays_history, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_event_forces_rebuild, setup, teardown),
        cmocka_unit_test_setup_teardown(test_differential_small_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_differential_small_snapshot_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_history_snapshots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_finds_corruption, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_readers_match_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resource_added_at_run_time, setup, teardown),
        cmocka_unit_test_setup_teardown(test_visit_events_of_every_resource, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
