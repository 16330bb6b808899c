/*
 * metrics.h - the server's counters and histograms, rendered at /metrics in
 * the Prometheus text format.
 *
 * Everything is a fixed array of atomics: recording from any MHD thread is
 * a few relaxed increments, no lock, no allocation. Gauges that other
 * modules own (watchers, the cache's lag) are read at render time and
 * passed in, so this module depends on nothing above core.
 */
#ifndef SK_API_METRICS_H
#define SK_API_METRICS_H

#include "core/buf.h"

#include <stdint.h>

typedef struct sk_metrics sk_metrics;

typedef enum {
    SK_REQ_GET,
    SK_REQ_LIST,
    SK_REQ_WATCH,
    SK_REQ_CREATE,
    SK_REQ_UPDATE,
    SK_REQ_PATCH,
    SK_REQ_DELETE,
    SK_REQ_DELETECOLLECTION,
    SK_REQ_COUNT
} sk_req_verb;

sk_metrics *sk_metrics_new(void);
void sk_metrics_free(sk_metrics *m);

/* One finished resource request. Long-running ones (watches) are counted
 * but kept out of the latency histogram, as kube-apiserver does. */
void sk_metrics_request(sk_metrics *m, sk_req_verb verb, int code, int64_t micros);
/* A watch-list's initial events are all sent (its end bookmark). */
void sk_metrics_watch_list(sk_metrics *m, int64_t micros);
/* One chunk of a list (or of initial events) read from the cache or SQL. */
void sk_metrics_list_chunk(sk_metrics *m, int from_cache);

/* Gauges owned elsewhere, read when /metrics is rendered. */
typedef struct sk_metrics_gauges {
    int64_t registered_watchers, watch_events_sent, terminated_watchers;
    int64_t cache_revision, store_revision, cache_objects, cache_events, cache_rebuilds;
    int64_t cache_list_oldest, cache_snapshots, cache_object_bytes, cache_index_bytes;
    int64_t cache_snapshot_bytes, cache_snapshot_budget;
    int64_t store_batch_replays;
    int64_t store_commits;
    int64_t store_writer_round_trips;
    /* sk_store_commits_resolved's */
    int64_t store_resolved_committed, store_resolved_not_committed, store_resolved_unknown;
} sk_metrics_gauges;
/* Appends the exposition text to out. */
void sk_metrics_render(sk_metrics *m, const sk_metrics_gauges *g, sk_buf *out);

#endif
