/*
 * snapshots.c - the watch cache's snapshots, measured in process.
 *
 * 1. Creates N ConfigMaps of about SIZE bytes of JSON in a store (a fresh
 *    SQLite file, or the PostgreSQL of --db), builds a watch cache over it
 *    and measures its memory per object against the objects' JSON size:
 *    from the cache's own accounting (blobs + B-tree nodes) and from the
 *    allocator (heap in use before and after the build, one arena).
 * 2. Applies U updates to random objects (a steady update load: same
 *    sizes, one key at a time) and measures what the retained snapshots
 *    add: bytes, count, bytes per snapshot, and the overhead against the
 *    cache without history (objects + newest tree).
 * 3. Reads P pages of 500 at a past revision still held by a snapshot,
 *    from the snapshot (sk_cache_list) and from SQL (sk_store_list), both
 *    copying every object's bytes as a response would, checks that both
 *    give the same items, and reports the median page time of each.
 *
 * Prints one JSON object. usage:
 *   snapshots [--db URL] [--objects N] [--size BYTES] [--updates U]
 *             [--snapshot-memory BYTES] (0 auto, -1 none) [--pages P]
 */
#include "bench_util.h"
#include "cache/cache.h"
#include "store/store.h"

#include <jansson.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IN_FLIGHT 256
#define PAGE 500

static size_t heap_in_use(void)
{
    malloc_trim(0);
    return mallinfo2().uordblks;
}

/* ---- writes, IN_FLIGHT at a time (group commit) ---- */

typedef struct writes {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int pending, failed;
    int64_t last_rev;
} writes;

static void write_done(void *arg, sk_err err, const sk_row *row)
{
    writes *w = arg;
    pthread_mutex_lock(&w->mu);
    w->pending--;
    if (err != SK_OK)
        w->failed++;
    else if (row->rev > w->last_rev)
        w->last_rev = row->rev;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void wait_below(writes *w, int limit)
{
    pthread_mutex_lock(&w->mu);
    while (w->pending > limit)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

static void submit(sk_store *s, writes *w, int i, int version, size_t size, int create)
{
    static char payload[1 << 20];
    size_t n = size > 240 ? size - 240 : 16;
    if (n >= sizeof payload)
        n = sizeof payload - 1;
    memset(payload, 'a' + (version % 26), n);
    payload[n] = '\0';
    char name[32];
    snprintf(name, sizeof name, "cm-%07d", i);
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:{s:s}}, s:{s:s, s:i}}",
                            "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", name,
                            "namespace", "bench", "uid", "00000000-0000-4000-8000-000000000000",
                            "creationTimestamp", "2026-11-24T00:00:00Z", "labels", "app", "bench",
                            "data", "payload", payload, "version", version);
    wait_below(w, IN_FLIGHT - 1);
    pthread_mutex_lock(&w->mu);
    w->pending++;
    pthread_mutex_unlock(&w->mu);
    /* Names are copied by the writer before done runs; keep them alive until then. */
    static char names[IN_FLIGHT * 2][32];
    static int slot;
    char *nm = names[slot++ % (IN_FLIGHT * 2)];
    memcpy(nm, name, sizeof name);
    sk_write wr = {.op = create ? SK_WRITE_CREATE : SK_WRITE_UPDATE,
                   .resource = "configmaps",
                   .ns = "bench",
                   .name = nm,
                   .object = obj};
    sk_store_write_async(s, &wr, write_done, w);
}

/* ---- pages ---- */

typedef struct page_sink {
    char *buf;
    size_t len, cap;
    int items;
    uint64_t hash; /* keys and revisions, to compare the two sources */
} page_sink;

static void sink_add(page_sink *p, const char *ns, const char *name, int64_t rev, const char *data,
                     size_t len)
{
    if (p->len + len > p->cap) {
        p->cap = (p->len + len) * 2;
        p->buf = realloc(p->buf, p->cap);
    }
    memcpy(p->buf + p->len, data, len);
    p->len += len;
    p->items++;
    for (const char *s = name; *s; s++)
        p->hash = (p->hash ^ (unsigned char)*s) * 1099511628211ULL;
    p->hash = (p->hash ^ (uint64_t)rev) * 1099511628211ULL;
    (void)ns;
}

static int cache_item(void *arg, const char *ns, const char *name, sk_blob *blob)
{
    size_t len;
    const char *data = sk_blob_data(blob, &len);
    sink_add(arg, ns, name, sk_blob_rev(blob), data, len);
    return 0;
}

static int store_item(void *arg, const sk_row *row)
{
    sink_add(arg, row->ns, row->name, row->rev, row->value, row->value_len);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void nothing(void *arg)
{
    (void)arg;
}

int main(int argc, char **argv)
{
    const char *db = NULL;
    int objects = 100000, updates = 20000, pages = 200;
    size_t size = 1024;
    int64_t budget = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--db"))
            db = argv[i + 1];
        else if (!strcmp(argv[i], "--objects"))
            objects = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--size"))
            size = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--updates"))
            updates = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--snapshot-memory"))
            budget = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--pages"))
            pages = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "unknown flag %s\n", argv[i]);
            return 2;
        }
    }
    mallopt(M_ARENA_MAX, 1); /* every thread's allocations in the arena mallinfo2 reads */
    char dir[] = "/tmp/sk-snapbench-XXXXXX", url[128];
    if (!db) {
        if (!mkdtemp(dir))
            return 1;
        snprintf(url, sizeof url, "sqlite:%s/db", dir);
        db = url;
    }
    sk_store *store = NULL;
    char *msg = NULL;
    if (sk_store_open(db, &store, &msg) != SK_OK) {
        fprintf(stderr, "cannot open %s: %s\n", db, msg ? msg : "?");
        return 1;
    }
    writes w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    double t0 = bench_now_s();
    for (int i = 0; i < objects; i++)
        submit(store, &w, i, 0, size, 1);
    wait_below(&w, 0);
    double create_s = bench_now_s() - t0;

    /* Warm the store's page caches first (SQLite allocates them from the
     * same heap), so the heap measured around the build is the cache's. */
    for (int pass = 0; pass < 2; pass++) {
        page_sink warm = {0};
        sk_list_query wq = {.resource = "configmaps", .rev = w.last_rev, .limit = objects + 1};
        sk_store_list(store, &wq, store_item, &warm);
        free(warm.buf);
    }
    size_t heap_before = heap_in_use();
    const char *const resources[] = {"configmaps"};
    sk_cache_config cfg = {.resources = resources, .n_resources = 1, .snapshot_bytes = budget};
    sk_cache *cache = NULL;
    t0 = bench_now_s();
    if (sk_cache_new(store, &cfg, nothing, NULL, &cache) != SK_OK) {
        fprintf(stderr, "cannot build the cache\n");
        return 1;
    }
    double build_s = bench_now_s() - t0;
    size_t heap_built = heap_in_use();
    sk_cache_stats built;
    sk_cache_get_stats(cache, &built);
    /* The objects' JSON as stored, for the per-object ratio. */
    page_sink all = {0};
    int visited = 0;
    sk_cache_list_query q = {.res = 0, .rev = 0, .limit = objects + 1};
    sk_cache_list(cache, &q, cache_item, &all, &visited);
    double json_avg = (double)all.len / visited;
    free(all.buf);

    int64_t first_update_rev = w.last_rev + 1;
    t0 = bench_now_s();
    for (int u = 0; u < updates; u++)
        submit(store, &w, (int)(bench_rand() % (uint64_t)objects), u + 1, size, 0);
    wait_below(&w, 0);
    double update_s = bench_now_s() - t0;
    sk_cache_state st;
    sk_cache_wait(cache, w.last_rev, 60000, &st);
    size_t heap_updated = heap_in_use();
    sk_cache_stats after;
    sk_cache_get_stats(cache, &after);

    /* A past revision in the middle of what the snapshots hold. */
    int64_t oldest = after.list_oldest > first_update_rev ? after.list_oldest : first_update_rev;
    int64_t at = oldest + (after.rev - oldest) / 2;
    double *cache_t = calloc((size_t)pages, sizeof *cache_t);
    double *sql_t = calloc((size_t)pages, sizeof *sql_t);
    int mismatches = 0, from_cache = 0;
    for (int p = 0; p < pages; p++) {
        char after_name[32];
        snprintf(after_name, sizeof after_name, "cm-%07d",
                 (int)(bench_rand() % (uint64_t)(objects > PAGE ? objects - PAGE : 1)));
        page_sink a = {0}, b = {0};
        sk_cache_list_query cq = {.res = 0,
                                  .ns = "bench",
                                  .after_ns = "bench",
                                  .after_name = after_name,
                                  .rev = at,
                                  .limit = PAGE};
        double s0 = bench_now_s();
        sk_err err = sk_cache_list(cache, &cq, cache_item, &a, &visited);
        cache_t[p] = bench_now_s() - s0;
        from_cache += err == SK_OK;
        sk_list_query sq = {.resource = "configmaps",
                            .ns = "bench",
                            .after_ns = "bench",
                            .after_name = after_name,
                            .rev = at,
                            .limit = PAGE};
        s0 = bench_now_s();
        sk_store_list(store, &sq, store_item, &b);
        sql_t[p] = bench_now_s() - s0;
        mismatches += err != SK_OK || a.items != b.items || a.hash != b.hash || a.len != b.len;
        free(a.buf);
        free(b.buf);
    }
    qsort(cache_t, (size_t)pages, sizeof *cache_t, cmp_double);
    qsort(sql_t, (size_t)pages, sizeof *sql_t, cmp_double);
    double cache_ms = cache_t[pages / 2] * 1e3, sql_ms = sql_t[pages / 2] * 1e3;

    int64_t without_history = built.object_bytes + built.index_bytes;
    int64_t history_snaps = after.snapshots - 1;
    printf("{\"backend\": \"%s\", \"objects\": %d, \"json_bytes_avg\": %.0f,\n"
           " \"cache_bytes_per_object\": %.0f, \"cache_bytes_per_json_byte\": %.3f,\n"
           " \"heap_bytes_per_object\": %.0f, \"heap_bytes_per_json_byte\": %.3f,\n"
           " \"index_bytes_per_object\": %.1f, \"build_s\": %.2f, \"create_s\": %.1f,\n"
           " \"updates\": %d, \"update_s\": %.1f, \"snapshot_budget\": %lld,\n"
           " \"snapshots_retained\": %lld, \"snapshot_bytes\": %lld,\n"
           " \"snapshot_bytes_per_snapshot\": %.0f, \"snapshot_overhead_pct\": %.3f,\n"
           " \"heap_growth_during_updates\": %lld, \"list_oldest\": %lld, \"rev\": %lld,\n"
           " \"page_rev\": %lld, \"pages\": %d, \"pages_from_cache\": %d, \"mismatches\": %d,\n"
           " \"page500_cache_ms\": %.3f, \"page500_sql_ms\": %.3f, \"sql_over_cache\": %.1f}\n",
           sk_store_backend_name(store), objects, json_avg, (double)without_history / objects,
           (double)without_history / objects / json_avg,
           (double)(heap_built - heap_before) / objects,
           (double)(heap_built - heap_before) / objects / json_avg,
           (double)built.index_bytes / objects, build_s, create_s, updates, update_s,
           (long long)after.snapshot_budget, (long long)after.snapshots,
           (long long)after.snapshot_bytes,
           history_snaps > 0 ? (double)after.snapshot_bytes / (double)history_snaps : 0.0,
           100.0 * (double)after.snapshot_bytes / (double)(after.object_bytes + after.index_bytes),
           (long long)heap_updated - (long long)heap_built, (long long)after.list_oldest,
           (long long)after.rev, (long long)at, pages, from_cache, mismatches, cache_ms, sql_ms,
           sql_ms / cache_ms);
    free(cache_t);
    free(sql_t);
    sk_cache_free(cache);
    sk_store_close(store);
    if (db == url) {
        char cmd[160];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd) != 0)
            return 1;
    }
    return mismatches || w.failed ? 1 : 0;
}
