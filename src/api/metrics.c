/*
 * metrics.c - see metrics.h. Names and labels follow kube-apiserver's where
 * one exists (apiserver_request_total, apiserver_request_duration_seconds,
 * apiserver_watch_list_duration_seconds, apiserver_terminated_watchers_total,
 * apiserver_watch_cache_lag), so existing dashboards read them.
 */
#include "api/metrics.h"
#include "core/check.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define N_BUCKETS 14
#define MIN_CODE 100
#define N_CODES 500

static const double bucket_le[N_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                            1,     2.5,  5,     10,   30,  60,   120};

static const char *const verb_names[SK_REQ_COUNT] = {"GET", "LIST",  "WATCH",  "POST",
                                                     "PUT", "PATCH", "DELETE", "DELETECOLLECTION"};

typedef struct histogram {
    atomic_llong counts[N_BUCKETS]; /* non-cumulative; cumulated when rendered */
    atomic_llong total;
    atomic_llong sum_micros;
} histogram;

struct sk_metrics {
    atomic_llong requests[SK_REQ_COUNT][N_CODES];
    histogram latency[SK_REQ_COUNT];
    histogram watch_list;
    atomic_llong list_chunks_cache, list_chunks_sql;
};

sk_metrics *sk_metrics_new(void)
{
    sk_metrics *m = calloc(1, sizeof *m);
    SK_CHECK_ALLOC(m);
    return m;
}

void sk_metrics_free(sk_metrics *m)
{
    free(m);
}

static void observe(histogram *h, int64_t micros)
{
    int i = 0;
    while (i < N_BUCKETS && (double)micros / 1e6 > bucket_le[i])
        i++;
    if (i < N_BUCKETS)
        atomic_fetch_add_explicit(&h->counts[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->total, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_micros, micros, memory_order_relaxed);
}

void sk_metrics_request(sk_metrics *m, sk_req_verb verb, int code, int64_t micros)
{
    SK_CHECK(verb >= 0 && verb < SK_REQ_COUNT);
    if (code >= MIN_CODE && code < MIN_CODE + N_CODES)
        atomic_fetch_add_explicit(&m->requests[verb][code - MIN_CODE], 1, memory_order_relaxed);
    if (verb != SK_REQ_WATCH)
        observe(&m->latency[verb], micros);
}

void sk_metrics_watch_list(sk_metrics *m, int64_t micros)
{
    observe(&m->watch_list, micros);
}

void sk_metrics_list_chunk(sk_metrics *m, int from_cache)
{
    atomic_fetch_add_explicit(from_cache ? &m->list_chunks_cache : &m->list_chunks_sql, 1,
                              memory_order_relaxed);
}

static void render_histogram(sk_buf *out, const char *name, const char *labels, histogram *h)
{
    long long cumulative = 0;
    const char *sep = *labels ? "," : "";
    for (int i = 0; i < N_BUCKETS; i++) {
        cumulative += atomic_load(&h->counts[i]);
        sk_buf_printf(out, "%s_bucket{%s%sle=\"%g\"} %lld\n", name, labels, sep, bucket_le[i],
                      cumulative);
    }
    long long total = atomic_load(&h->total);
    sk_buf_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %lld\n", name, labels, sep, total);
    const char *open = *labels ? "{" : "", *close = *labels ? "}" : "";
    sk_buf_printf(out, "%s_sum%s%s%s %.6f\n", name, open, labels, close,
                  (double)atomic_load(&h->sum_micros) / 1e6);
    sk_buf_printf(out, "%s_count%s%s%s %lld\n", name, open, labels, close, total);
}

static void render_gauge(sk_buf *out, const char *name, const char *type, const char *help,
                         int64_t value)
{
    sk_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n%s %lld\n", name, help, name, type, name,
                  (long long)value);
}

void sk_metrics_render(sk_metrics *m, const sk_metrics_gauges *g, sk_buf *out)
{
    sk_buf_puts(out, "# HELP apiserver_request_total Resource requests by verb and HTTP code.\n"
                     "# TYPE apiserver_request_total counter\n");
    for (int v = 0; v < SK_REQ_COUNT; v++)
        for (int c = 0; c < N_CODES; c++) {
            long long n = atomic_load(&m->requests[v][c]);
            if (n)
                sk_buf_printf(out, "apiserver_request_total{verb=\"%s\",code=\"%d\"} %lld\n",
                              verb_names[v], c + MIN_CODE, n);
        }
    sk_buf_puts(out, "# HELP apiserver_request_duration_seconds Resource request latency "
                     "(watches excluded).\n"
                     "# TYPE apiserver_request_duration_seconds histogram\n");
    for (int v = 0; v < SK_REQ_COUNT; v++) {
        if (v == SK_REQ_WATCH)
            continue;
        char labels[48];
        snprintf(labels, sizeof labels, "verb=\"%s\"", verb_names[v]);
        render_histogram(out, "apiserver_request_duration_seconds", labels, &m->latency[v]);
    }
    sk_buf_puts(out, "# HELP apiserver_watch_list_duration_seconds Time to send a watch-list's "
                     "initial events.\n"
                     "# TYPE apiserver_watch_list_duration_seconds histogram\n");
    render_histogram(out, "apiserver_watch_list_duration_seconds", "", &m->watch_list);
    render_gauge(out, "apiserver_terminated_watchers_total", "counter",
                 "Watches closed by the server (too slow, expired, cache rebuilt).",
                 g->terminated_watchers);
    render_gauge(out, "apiserver_registered_watchers", "gauge", "Open watch streams.",
                 g->registered_watchers);
    render_gauge(out, "apiserver_watch_events_total", "counter", "Watch events sent.",
                 g->watch_events_sent);
    render_gauge(out, "apiserver_watch_cache_lag", "gauge",
                 "Revisions the watch cache is behind the store.",
                 g->store_revision > g->cache_revision ? g->store_revision - g->cache_revision : 0);
    render_gauge(out, "sqlkube_watch_cache_revision", "gauge", "The watch cache's revision.",
                 g->cache_revision);
    render_gauge(out, "sqlkube_watch_cache_objects", "gauge", "Live objects in the watch cache.",
                 g->cache_objects);
    render_gauge(out, "sqlkube_watch_cache_events", "gauge", "Events in the watch cache's window.",
                 g->cache_events);
    render_gauge(out, "sqlkube_watch_cache_rebuilds_total", "counter",
                 "Rebuilds of the watch cache (after a feed anomaly, or of one resource after a "
                 "failed consistency check).",
                 g->cache_rebuilds);
    render_gauge(out, "sqlkube_watch_cache_list_oldest_revision", "gauge",
                 "The oldest revision lists and gets are served from the cache's snapshots.",
                 g->cache_list_oldest);
    render_gauge(out, "sqlkube_watch_cache_snapshots", "gauge",
                 "Snapshots the watch cache retains (one per applied revision of a resource).",
                 g->cache_snapshots);
    render_gauge(out, "sqlkube_watch_cache_object_bytes", "gauge",
                 "Memory of the live objects' bytes in the watch cache.", g->cache_object_bytes);
    render_gauge(out, "sqlkube_watch_cache_index_bytes", "gauge",
                 "Memory of the watch cache's newest B-tree nodes.", g->cache_index_bytes);
    render_gauge(out, "sqlkube_watch_cache_snapshot_bytes", "gauge",
                 "Memory the watch cache's older snapshots add (their B-tree nodes).",
                 g->cache_snapshot_bytes);
    render_gauge(out, "sqlkube_watch_cache_snapshot_budget_bytes", "gauge",
                 "What the older snapshots may take (--snapshot-memory).",
                 g->cache_snapshot_budget);
    render_gauge(out, "sqlkube_store_batch_replays_total", "counter",
                 "Write batches the database refused as a whole, replayed one write per "
                 "transaction.",
                 g->store_batch_replays);
    render_gauge(out, "sqlkube_store_commits_total", "counter",
                 "Write transactions the store's writer committed: group commits of one or "
                 "more writes, and the one-write transactions of a replay.",
                 g->store_commits);
    render_gauge(out, "sqlkube_store_writer_round_trips_total", "counter",
                 "Round trips the store's writer made to PostgreSQL, a pipelined flight "
                 "counting one (0 on SQLite): over sqlkube_store_commits_total, the round trips "
                 "of a group commit.",
                 g->store_writer_round_trips);
    sk_buf_puts(out, "# HELP sqlkube_store_commits_resolved_total Write transactions whose COMMIT "
                     "answer was lost (the connection broke), by what the writer then found: "
                     "committed (its results answered), not committed (run again) or unknown "
                     "(answered 503).\n"
                     "# TYPE sqlkube_store_commits_resolved_total counter\n");
    sk_buf_printf(out, "sqlkube_store_commits_resolved_total{outcome=\"committed\"} %lld\n",
                  (long long)g->store_resolved_committed);
    sk_buf_printf(out, "sqlkube_store_commits_resolved_total{outcome=\"not_committed\"} %lld\n",
                  (long long)g->store_resolved_not_committed);
    sk_buf_printf(out, "sqlkube_store_commits_resolved_total{outcome=\"unknown\"} %lld\n",
                  (long long)g->store_resolved_unknown);
    sk_buf_puts(out, "# HELP sqlkube_list_chunks_total List chunks by source.\n"
                     "# TYPE sqlkube_list_chunks_total counter\n");
    sk_buf_printf(out, "sqlkube_list_chunks_total{source=\"cache\"} %lld\n",
                  (long long)atomic_load(&m->list_chunks_cache));
    sk_buf_printf(out, "sqlkube_list_chunks_total{source=\"sql\"} %lld\n",
                  (long long)atomic_load(&m->list_chunks_sql));
}
