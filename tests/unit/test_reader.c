/*
 * test_reader.c - sk_reader_events over a real SQLite store and a watch
 * cache with a small window: a cursor older than the window pages through
 * SQL history, then switches to the window, and the events seen are
 * exactly the history's (type, key, previous version), each once, in
 * revision order; below the compaction floor the answer is SK_ERR_EXPIRED.
 * sk_reader_count counts the same objects a list would visit, from the
 * cache's key counts at a revision it holds and by reading SQL at one it
 * no longer holds.
 */
#include "cache/cache.h"
#include "read/reader.h"
#include "store/store.h"

#include <jansson.h>
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

#define WINDOW 20
#define KEYS 10
#define ROUNDS 700

static const char *const resources[] = {"configmaps", "secrets"};

typedef struct fixture {
    char dir[64];
    sk_store *store;
    sk_cache *cache;
    sk_reader *reader;
} fixture;

static void on_notify(void *arg) {}

static int64_t put(fixture *f, sk_write_op op, const char *res, const char *name)
{
    json_t *obj = NULL;
    if (op != SK_WRITE_DELETE)
        obj = json_pack("{s:s, s:{s:s, s:s, s:s}}", "kind", "ConfigMap", "metadata", "name", name,
                        "namespace", "ns", "uid", "u");
    sk_write w = {.op = op, .resource = res, .ns = "ns", .name = name, .object = obj};
    sk_row row = {0};
    assert_int_equal(sk_store_write(f->store, &w, &row), SK_OK);
    int64_t rev = row.rev;
    sk_row_clear(&row);
    return rev;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/sk-reader-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    char url[128];
    snprintf(url, sizeof url, "sqlite:%s/db", f->dir);
    char *msg = NULL;
    assert_int_equal(sk_store_open(url, &f->store, &msg), SK_OK);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    sk_reader_free(f->reader);
    sk_cache_free(f->cache);
    sk_store_close(f->store);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

typedef struct seen_event {
    int64_t rev, prev_rev;
    sk_event_type type;
    char name[16];
} seen_event;

typedef struct seen {
    seen_event v[ROUNDS + 3];
    int n;
} seen;

static int take(void *arg, const sk_cache_event *ev)
{
    seen *s = arg;
    seen_event *e = &s->v[s->n++];
    e->rev = ev->rev;
    e->type = ev->type;
    e->prev_rev = ev->prev ? sk_blob_rev(ev->prev) : 0;
    snprintf(e->name, sizeof e->name, "%s", sk_blob_name(ev->obj));
    assert_int_equal(sk_blob_rev(ev->obj), ev->rev);
    return 0;
}

static void test_old_cursor_pages_sql_then_window(void **state)
{
    fixture *f = *state;
    /* The model: each configmap write's expected event. */
    seen want = {0};
    int64_t live[KEYS] = {0};
    unsigned seed = 7;
    for (int i = 0; i < ROUNDS; i++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 16) % KEYS);
        char name[16];
        snprintf(name, sizeof name, "k%d", k);
        if ((seed >> 8) % 3 == 0) { /* another resource's revision */
            snprintf(name, sizeof name, "s%d", i);
            put(f, SK_WRITE_CREATE, "secrets", name);
            continue;
        }
        seen_event *e = &want.v[want.n++];
        snprintf(e->name, sizeof e->name, "%s", name);
        if (!live[k]) {
            e->type = SK_EVENT_ADDED;
            e->rev = live[k] = put(f, SK_WRITE_CREATE, "configmaps", name);
        } else if ((seed >> 4) % 4 == 0) {
            e->type = SK_EVENT_DELETED;
            e->rev = put(f, SK_WRITE_DELETE, "configmaps", name);
            live[k] = 0;
        } else {
            e->type = SK_EVENT_MODIFIED;
            e->prev_rev = live[k];
            e->rev = live[k] = put(f, SK_WRITE_UPDATE, "configmaps", name);
        }
    }
    sk_cache_config cfg = {.resources = resources, .n_resources = 2, .window_events = WINDOW};
    assert_int_equal(sk_cache_new(f->store, &cfg, on_notify, f, &f->cache), SK_OK);
    f->reader = sk_reader_new(f->store, f->cache);
    sk_cache_state st;
    sk_cache_get_state(f->cache, &st);
    assert_true(st.oldest >= st.rev - WINDOW);

    seen got = {0};
    int64_t cursor = 0;
    int from_sql = 0, from_cache = 0;
    for (int round = 0; round < 2; round++) {
        while (cursor < st.rev) {
            sk_read_events q = {.resource = "configmaps",
                                .gen = st.generation,
                                .after_rev = cursor,
                                .with_prev = 1};
            int64_t scanned = 0;
            sk_read_source source;
            assert_int_equal(sk_reader_events(f->reader, &q, take, &got, &scanned, &source), SK_OK);
            assert_true(scanned > cursor);
            from_sql += source == SK_READ_SQL;
            from_cache += source == SK_READ_CACHE;
            cursor = scanned;
        }
        if (round == 1)
            break;
        /* SQL took the cursor up to the cache's revision: what follows
         * comes from the window. */
        assert_true(from_sql >= 2); /* more than one page */
        assert_int_equal(from_cache, 0);
        for (int i = 0; i < 3; i++) {
            seen_event *e = &want.v[want.n++];
            snprintf(e->name, sizeof e->name, "late%d", i);
            e->type = SK_EVENT_ADDED;
            e->rev = put(f, SK_WRITE_CREATE, "configmaps", e->name);
        }
        assert_int_equal(sk_cache_wait(f->cache, want.v[want.n - 1].rev, 5000, &st), SK_OK);
    }
    assert_true(from_cache >= 1);
    assert_int_equal(got.n, want.n);
    for (int i = 0; i < want.n; i++) {
        assert_int_equal(got.v[i].rev, want.v[i].rev);
        assert_int_equal(got.v[i].type, want.v[i].type);
        assert_string_equal(got.v[i].name, want.v[i].name);
        if (want.v[i].type == SK_EVENT_MODIFIED)
            assert_int_equal(got.v[i].prev_rev, want.v[i].prev_rev);
    }

    /* Below the compaction floor: expired, nothing visited. */
    int64_t removed = 0;
    assert_int_equal(sk_store_compact(f->store, st.rev / 2, &removed), SK_OK);
    seen none = {0};
    sk_read_events q = {.resource = "configmaps", .gen = st.generation, .after_rev = 1};
    int64_t scanned = 0;
    sk_read_source source;
    assert_int_equal(sk_reader_events(f->reader, &q, take, &none, &scanned, &source),
                     SK_ERR_EXPIRED);
    assert_int_equal(none.n, 0);
    /* At the floor itself the history is complete. */
    q.after_rev = st.rev / 2;
    assert_int_equal(sk_reader_events(f->reader, &q, take, &none, &scanned, &source), SK_OK);
}

static int64_t count_after(fixture *f, const char *ns, const char *after, int64_t rev)
{
    sk_read_query q = {.resource = "configmaps",
                       .ns = ns,
                       .after_ns = after ? "ns" : NULL,
                       .after_name = after,
                       .rev = rev,
                       .limit = 1};
    int64_t n = -1;
    assert_int_equal(sk_reader_count(f->reader, &q, &n), SK_OK);
    return n;
}

static void test_count_from_cache_and_sql(void **state)
{
    fixture *f = *state;
    enum { N = SK_READ_MAX_ITEMS + 6, GONE = WINDOW + 5 }; /* SQL reads more than one page */
    char name[16];
    int64_t mid = 0;
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "c%04d", i);
        mid = put(f, SK_WRITE_CREATE, "configmaps", name);
    }
    put(f, SK_WRITE_CREATE, "secrets", "other");
    sk_cache_config cfg = {.resources = resources, .n_resources = 2, .window_events = WINDOW};
    assert_int_equal(sk_cache_new(f->store, &cfg, on_notify, f, &f->cache), SK_OK);
    f->reader = sk_reader_new(f->store, f->cache);
    int64_t now = 0;
    for (int i = 0; i < GONE; i++) {
        snprintf(name, sizeof name, "c%04d", i);
        now = put(f, SK_WRITE_DELETE, "configmaps", name);
    }
    sk_cache_state st;
    assert_int_equal(sk_cache_wait(f->cache, now, 5000, &st), SK_OK);
    /* mid is outside the cache's snapshots: the count there comes from SQL. */
    sk_cache_list_query cq = {.res = 0, .ns = "ns", .rev = mid, .limit = 1};
    int64_t n;
    assert_int_equal(sk_cache_count(f->cache, &cq, &n), SK_ERR_EXPIRED);
    assert_int_equal(count_after(f, "ns", NULL, mid), N);
    assert_int_equal(count_after(f, "ns", "c0010", mid), N - 11);
    assert_int_equal(count_after(f, NULL, "c0500", mid), N - 501);
    assert_int_equal(count_after(f, "other", NULL, mid), 0);
    /* Now, from the cache. */
    assert_int_equal(count_after(f, "ns", NULL, now), N - GONE);
    assert_int_equal(count_after(f, "ns", "c0010", now), N - GONE);
    assert_int_equal(count_after(f, NULL, "c0500", now), N - 501);
    assert_int_equal(count_after(f, "ns", "c9999", now), 0);
    assert_int_equal(count_after(f, "nr", NULL, now), 0);
    assert_int_equal(count_after(f, "n", NULL, now), 0); /* a prefix of "ns" */
}

/* Distrusts the resource on the first event and waits until the feed has
 * rebuilt it: the rest of the read must then stop, not go on with events
 * the rebuild may have changed. */
typedef struct rebuild_midway {
    fixture *f;
    seen got;
} rebuild_midway;

static int take_then_rebuild(void *arg, const sk_cache_event *ev)
{
    rebuild_midway *m = arg;
    assert_non_null(ev->obj);
    take(&m->got, ev);
    if (m->got.n == 1) {
        sk_cache_stats before, now;
        sk_cache_get_stats(m->f->cache, &before);
        sk_cache_distrust(m->f->cache, 0);
        int64_t t = 0;
        do {
            usleep(10000);
            sk_cache_get_stats(m->f->cache, &now);
        } while (now.rebuilds == before.rebuilds && (t += 10) < 5000);
        assert_true(now.rebuilds > before.rebuilds);
    }
    return 0;
}

/* A rebuild between two events of one read: the events sent stand, the
 * read ends there with SK_OK (the next one meets the expiry), and the
 * callback never sees an empty event. */
static void test_rebuild_midway_ends_the_read(void **state)
{
    fixture *f = *state;
    put(f, SK_WRITE_CREATE, "configmaps", "first");
    sk_cache_config cfg = {.resources = resources, .n_resources = 2, .window_events = WINDOW};
    assert_int_equal(sk_cache_new(f->store, &cfg, on_notify, f, &f->cache), SK_OK);
    f->reader = sk_reader_new(f->store, f->cache);
    sk_cache_state st;
    sk_cache_get_state(f->cache, &st);
    int64_t from = st.rev, now = 0;
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", i);
        now = put(f, SK_WRITE_CREATE, "configmaps", name);
    }
    assert_int_equal(sk_cache_wait(f->cache, now, 5000, &st), SK_OK);
    rebuild_midway m = {.f = f};
    sk_read_events q = {.resource = "configmaps", .gen = st.generation, .after_rev = from};
    int64_t scanned = 0;
    sk_read_source source;
    assert_int_equal(sk_reader_events(f->reader, &q, take_then_rebuild, &m, &scanned, &source),
                     SK_OK);
    assert_int_equal(source, SK_READ_CACHE);
    assert_int_equal(m.got.n, 1);
    assert_string_equal(m.got.v[0].name, "m0");
    assert_int_equal(scanned, m.got.v[0].rev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_old_cursor_pages_sql_then_window, setup, teardown),
        cmocka_unit_test_setup_teardown(test_count_from_cache_and_sql, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rebuild_midway_ends_the_read, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
