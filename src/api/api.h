/*
 * api.h - the Kubernetes API as a request state machine, independent of the
 * HTTP library.
 *
 * The HTTP layer turns a request into an sk_http_req view (request.h) and
 * starts a call. sk_api_call_step either produces a response or reports
 * that the call waits (for the store's writer, or for the watch cache to
 * reach a revision); in that case the call invokes wake() exactly once,
 * from another thread, when it can make progress, and the HTTP layer steps
 * it again. No thread ever blocks on a write.
 *
 * Responses are either a complete body or a stream pulled with
 * sk_api_call_read (lists are streamed item by item, so memory does not
 * grow with the list).
 *
 * The API does not own what it serves from: the store, the watch cache and
 * its reader, the fan-out hub and the controllers are made by the caller
 * (the server's assembly in cmd/) and handed in with sk_api_deps.
 */
#ifndef SK_API_API_H
#define SK_API_API_H

#include "api/audit.h"
#include "api/authn.h"
#include "api/request.h"
#include "cache/cache.h"
#include "ctl/ctl.h"
#include "read/reader.h"
#include "store/store.h"
#include "watch/hub.h"

#include <stddef.h>
#include <sys/types.h>

typedef struct sk_api sk_api;

typedef struct sk_api_config {
    const char *listen_addr; /* "127.0.0.1:8080", for discovery */
    /* A watch whose client accepts no bytes for this long while events are
     * pending is closed (a slow reader must not pin anything). */
    int watch_stall_timeout_s;
    /* Core v1 Events expire this long after their last write. */
    int64_t event_ttl_s;
    /* The largest serialized object a create, update or patch may store
     * (0: 1.5 MiB). */
    int64_t max_object_bytes;
    /* --service-cluster-ip-range and --service-node-port-range, already
     * checked by kube/svcrange.h's parsers (NULL: 10.96.0.0/12, 30000-32767). */
    const char *service_cluster_ip_range, *service_node_port_range;
    /* --authorization-mode=AlwaysAllow: requests are not checked against
     * RBAC (0: RBAC, the default). Only requests with an identity
     * (call->user) are checked at all. */
    int always_allow;
    /* Who requests are (api/authn.h); the token file is borrowed. */
    sk_authn_config authn;
} sk_api_config;

/* What the API serves from, all borrowed: each must outlive the api. */
typedef struct sk_api_deps {
    sk_store *store;
    sk_cache *cache; /* notifies hub after every applied batch and tick */
    sk_reader *reader;
    sk_watch_hub *hub;
    /* Controllers whose health /readyz reports (crd: its first pass has
     * served every stored CRD), and the consistency checker that
     * /debug/consistency and /metrics use. */
    sk_ctl *identity, *collector, *consistency, *crd;
    sk_ctl *rbac; /* healthy once the bootstrap RBAC policy is in place */
    sk_audit_log *audit; /* the audit log (audit.h), NULL: none */
} sk_api_deps;

/* deps->store NULL: the store is not up yet (a database that has not
 * answered at start). Until sk_api_attach the API serves /healthz, /livez
 * and /readyz (readiness failing, saying sk_api_store_down's reason) and
 * answers every other request 503 ServiceUnavailable with Retry-After,
 * whoever sends it: there is nothing to authorize against yet. Only
 * deps->audit is read then. */
sk_api *sk_api_new(const sk_api_deps *deps, const sk_api_config *cfg);
/* Hands the API what it serves from, once (deps->store non-NULL); calls
 * that start after it are served in full. */
void sk_api_attach(sk_api *api, const sk_api_deps *deps);
/* Why the store is not up yet (copied): /readyz's storage check says it
 * until sk_api_attach. Any thread. */
void sk_api_store_down(sk_api *api, const char *why);
/* Frees. NULL-safe. Every call must have been freed. */
void sk_api_free(sk_api *api);
/* Shutdown: every watch stream ends within grace_ms, each at its own
 * offset, so clients do not all reconnect at once. */
void sk_api_begin_shutdown(sk_api *api, int grace_ms);
/* Waits until every watch stream has ended or timeout_ms passes, then
 * stops the fan-out: parked calls are woken and end, none can park again. */
void sk_api_wait_watches(sk_api *api, int timeout_ms);
/* Readiness: the store reachable (once attached). */
int sk_api_ready(sk_api *api);

typedef struct sk_api_call sk_api_call;

/* New call. wake/arg are used when a step returns 0. */
sk_api_call *sk_api_call_start(sk_api *api, const sk_http_req *req, sk_api_wake_fn wake,
                               void *wake_arg);
/* 1: the response is ready. 0: pending; wake() will be called once. */
int sk_api_call_step(sk_api_call *call);

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
