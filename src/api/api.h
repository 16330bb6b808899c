/*
 * api.h - the Kubernetes API as a request state machine, independent of the
 * HTTP library.
 *
 * The HTTP layer turns a request into an sk_http_req view and starts a
 * call. sk_api_call_step either produces a response or reports that the
 * call waits for the store's writer; in that case the call invokes wake()
 * exactly once, from another thread, when it can make progress, and the
 * HTTP layer steps it again. No thread ever blocks on a write.
 *
 * Responses are either a complete body or a stream pulled with
 * sk_api_call_read (lists are streamed item by item, so memory does not
 * grow with the list).
 *
 * Ownership: a call copies what it needs from sk_http_req at start, except
 * the body, which it borrows until sk_api_call_free.
 */
#ifndef SK_API_API_H
#define SK_API_API_H

#include "store/store.h"

#include <stddef.h>
#include <sys/types.h>

typedef struct sk_api sk_api;

typedef struct sk_api_config {
    const char *listen_addr; /* "127.0.0.1:8080", for discovery */
    /* Test-only: the watch cache's feed drops this revision once (a lost
     * event), which must force a rebuild and close watchers with 410. */
    int64_t cache_drop_rev_once;
    /* A watch whose client accepts no bytes for this long while events are
     * pending is closed (a slow reader must not pin anything). */
    int watch_stall_timeout_s;
    /* Identity lease (identity.h): hostname (NULL: gethostname()), its
     * leaseDurationSeconds and renew interval. */
    const char *identity_hostname;
    int64_t identity_lease_duration_s, identity_renew_s;
    /* Core v1 Events expire this long after their last write. */
    int64_t event_ttl_s;
    /* Cache-vs-store consistency check every this many seconds (0: only
     * on GET /debug/consistency). */
    int64_t consistency_check_interval_s;
    /* Memory the watch cache's past snapshots may take (as
     * sk_cache_config.snapshot_bytes: 0 automatic, < 0 none). */
    int64_t cache_snapshot_bytes;
    /* Test-only: a key ("resource/namespace/name") the cache leaves out of
     * its index once, for the consistency check to find. */
    const char *cache_corrupt_key_once;
    /* The largest serialized object a create, update or patch may store
     * (0: 1.5 MiB). */
    int64_t max_object_bytes;
} sk_api_config;

/* New API over store (borrowed; must outlive the api): builds the watch
 * cache from a consistent list and starts its feed, the identity lease
 * controller and the expiry collector. */
sk_err sk_api_new(sk_store *store, const sk_api_config *cfg, sk_api **out);
/* Stops the watch fan-out and the cache, frees. NULL-safe. */
void sk_api_free(sk_api *api);
/* Shutdown: stops the identity lease controller and the expiry collector;
 * every watch stream ends within grace_ms, each at its own offset, so
 * clients do not all reconnect at once. */
void sk_api_begin_shutdown(sk_api *api, int grace_ms);
/* Waits until every watch stream has ended or timeout_ms passes, then
 * stops the fan-out: parked calls are woken and end, none can park again. */
void sk_api_wait_watches(sk_api *api, int timeout_ms);
/* Readiness (store reachable). */
int sk_api_ready(sk_api *api);

typedef struct sk_http_req {
    const char *method;
    /* The decoded path segments ("/api/v1/namespaces" is "api", "v1",
     * "namespaces"): valid UTF-8 without NUL bytes. */
    const char *const *segs;
    size_t n_segs;
    /* Value of a query parameter (decoded, valid UTF-8) or header, NULL if
     * absent; borrowed, valid during sk_api_call_start only. A parameter
     * given without a value ("?verbose") is "". */
    const char *(*query)(void *ctx, const char *key);
    const char *(*header)(void *ctx, const char *key);
    /* Non-zero once the client has closed its end: long work for it stops. */
    int (*client_gone)(void *ctx);
    void *ctx;
    const char *body; /* borrowed until sk_api_call_free */
    size_t body_len;
    int body_too_large; /* the body exceeded SK_API_MAX_BODY and was dropped */
    /* SK_OK, or the HTTP layer's refusal of the request target (e.g. a
     * malformed escape: SK_ERR_BAD_REQUEST), answered as a Status with
     * reject_msg (borrowed during sk_api_call_start). */
    sk_err reject;
    const char *reject_msg;
} sk_http_req;

/* kube-apiserver's MaxRequestBodyBytes. */
#define SK_API_MAX_BODY (3u * 1024 * 1024)

typedef struct sk_api_call sk_api_call;
typedef void (*sk_api_wake_fn)(void *arg);

/* New call. wake/arg are used when a step returns 0. */
sk_api_call *sk_api_call_start(sk_api *api, const sk_http_req *req, sk_api_wake_fn wake,
                               void *wake_arg);
/* 1: the response is ready. 0: pending; wake() will be called once. */
int sk_api_call_step(sk_api_call *call);

typedef struct sk_api_response {
    int status;
    const char *content_type;
    const char *body; /* borrowed from the call; NULL when streaming */
    size_t body_len;
    int streaming; /* pull the body with sk_api_call_read */
    /* Seconds without progress after which the HTTP layer drops the
     * connection (0: its default). Set for watches. */
    int stall_timeout_s;
    /* Warning header values ("299 - \"unknown field ...\""), borrowed. */
    const char *const *warnings;
    size_t n_warnings;
} sk_api_response;

void sk_api_call_response(sk_api_call *call, sk_api_response *out);
/* Streaming body: copies up to max bytes into buf. Returns the count, 0 at
 * the end, -1 if the stream failed (the connection must be aborted), -2 if
 * there is nothing to send yet: the call's wake() runs when there may be. */
ssize_t sk_api_call_read(sk_api_call *call, char *buf, size_t max);
/* The HTTP layer dropped the connection because the client stopped
 * reading (stall timeout): counted as a terminated watcher. */
void sk_api_call_stalled(sk_api_call *call);
void sk_api_call_free(sk_api_call *call);

#endif
