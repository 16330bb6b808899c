/*
 * internal.h - private to src/api: the call structure shared by the
 * routing (api.c), object handlers (objects.c) and list streaming (list.c).
 *
 * A call is a small state machine: `next` is the continuation to run on the
 * next step. A handler either finishes (sets status/body and returns
 * STEP_DONE) or submits a write and returns STEP_WAIT with `next` set to
 * the function that consumes the write's result.
 */
#ifndef SK_API_INTERNAL_H
#define SK_API_INTERNAL_H

#include "api/api.h"
#include "api/registry.h"
#include "api/route.h"
#include "api/selector.h"
#include "core/buf.h"
#include "api/consistency.h"
#include "api/expiry.h"
#include "api/identity.h"
#include "api/metrics.h"
#include "cache/cache.h"
#include "watch/hub.h"

#include <jansson.h>

struct sk_api {
    sk_store *store;
    size_t max_object_bytes; /* largest serialized object a write may store */
    sk_watch_hub *hub;
    sk_cache *cache;
    sk_metrics *metrics;
    const char *cache_names[16];
    char *listen_addr;
    _Atomic int stopping; /* set once at shutdown: watches end */
    int64_t stop_at_ms;   /* when stopping was set */
    int stop_grace_ms;    /* watches end spread over this */
    int watch_stall_timeout_s;
    int64_t event_ttl_s;
    sk_identity *identity;
    sk_collector *collector;
    sk_checker *checker;
};

enum { STEP_WAIT = 0, STEP_DONE = 1, STEP_AGAIN = 2 };

typedef struct list_stream list_stream;
typedef struct watch_stream watch_stream;
typedef struct sk_api_call sk_api_call;
typedef int (*call_fn)(sk_api_call *call);

/* Query parameters the API understands, copied at call start. */
typedef struct call_params {
    char *limit, *cont, *rv, *rvm, *label_selector, *field_selector, *watch, *dry_run,
        *include_object, *timeout_seconds, *verbose, *allow_bookmarks, *send_initial_events,
        *propagation_policy, *field_validation;
} call_params;

struct sk_api_call {
    sk_api *api;
    char *method;
    sk_route route; /* its borrowed strings are NULL: see ns, name, route_group */
    char *route_group, *route_version;
    sk_err reject;    /* the HTTP layer refused the request ... */
    char *reject_msg; /* ... with this message */
    call_params q;
    char *accept;
    char *content_type;
    const char *body;
    size_t body_len;
    int body_too_large;
    int (*client_gone)(void *ctx); /* the HTTP layer's probe, on client_ctx */
    void *client_ctx;
    sk_api_wake_fn wake;
    void *wake_arg;
    int64_t start_us;       /* for the latency metric */
    int64_t rv_deadline_ms; /* waiting for the cache or a future resourceVersion ends then */
    int64_t consistent_rev; /* a consistent read's revision, read at its first step */
    int verb;               /* sk_req_verb of a resource request, -1 for other paths */

    /* Route. */
    const sk_resource *res;
    char *ns;   /* request namespace, "" when none */
    char *name; /* item name, NULL for collections */
    int all_namespaces;
    int want_table;

    /* Response. */
    int status;
    const char *content_type_out;
    sk_buf out;
    list_stream *stream;
    watch_stream *watch;
    char **warnings; /* Warning header values */
    size_t n_warnings;

    /* Continuation and write state. */
    call_fn next;
    sk_err write_err;
    sk_row write_row;
    json_t *work;       /* object being written (owned) */
    json_t *patch_doc;  /* unused by non-patch calls */
    int64_t client_rev; /* resourceVersion precondition the client gave, 0 if none */
    int attempts;
    sk_row current; /* current row for read-modify-write */
    /* deletecollection */
    char **del_names;
    int64_t *del_revs;
    int del_count, del_next;
    json_t *del_items;
};

/* ---- responses (api.c) ---- */
/* Sets a JSON body from obj (borrowed). */
void call_reply_json(sk_api_call *call, int status, const json_t *obj);
/* Sets a raw JSON body (borrowed bytes, copied). */
void call_reply_raw(sk_api_call *call, int status, const char *json, size_t len);
/* Sets a Status error response. */
void call_reply_error(sk_api_call *call, sk_err e, const char *message);
/* The same with a printf-formatted message (any length). */
void call_reply_errorf(sk_api_call *call, sk_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets a Status error with details (causes stolen). */
void call_reply_status(sk_api_call *call, sk_err e, const char *message, const char *group,
                       const char *kind, const char *name, json_t *causes);
/* "configmaps" or "leases.coordination.k8s.io": r->resource, or the two
 * joined in buf (registry names fit SK_QUALIFIED_RESOURCE_MAX bytes). */
#define SK_QUALIFIED_RESOURCE_MAX 256
const char *call_qualified_resource(const sk_resource *r, char *buf, size_t n);
void call_reply_not_found(sk_api_call *call, const sk_resource *r, const char *name);
void call_reply_store_error(sk_api_call *call, sk_err e, const char *name);
/* Parses a stored object (value/len bytes of resource r, named name). One
 * that does not parse (an older version stored it too deep, or it is
 * damaged) is logged and NULL is returned: readers skip it rather than
 * fail, and it stays deletable. New reference. */
json_t *parse_stored(const sk_resource *r, const char *value, size_t len, const char *name);
/* The same for the call's resource, also reported in a Warning header
 * while the response has not started. */
json_t *call_parse_stored(sk_api_call *call, const char *value, size_t len, const char *name);
/* Adds a Warning header "299 - <quoted text>" to the response. */
void call_add_warning(sk_api_call *call, const char *text);
/* Submits w and arranges for `then` to run with write_err/write_row set. */
int call_submit_write(sk_api_call *call, sk_write *w, call_fn then);
/* Go's strconv.ParseBool. -1 if not a boolean. */
int parse_bool(const char *s);
/*
 * The revision a read "not older than min_rev" is served at (min_rev < 0: a
 * consistent read, at least the store's revision at the call's first step;
 * 0: any). Returns PLAN_NOW with *rev_out set to the cache's revision once
 * the cache has reached it. Until then it parks the call in the hub with
 * `again` as its next step and returns the step code to return
 * (STEP_WAIT/STEP_AGAIN): never a wait on an MHD thread. After RV_WAIT_MS
 * a revision the store has is served from SQL (PLAN_NOW with the store's
 * revision: never stale), and one it has not reached yet is 504
 * ResourceVersionTooLarge (replied, STEP_DONE), as on a store error.
 */
#define PLAN_NOW (-1)
int plan_read(sk_api_call *call, int64_t min_rev, call_fn again, int64_t *rev_out);
void call_reply_too_large_rv(sk_api_call *call, int64_t rev, int64_t current);

/* ---- objects.c ---- */
int handle_get(sk_api_call *call);
int handle_create(sk_api_call *call);
int handle_update(sk_api_call *call);
int handle_patch(sk_api_call *call);
int handle_delete(sk_api_call *call);
int handle_delete_collection(sk_api_call *call);

/* ---- watch.c ---- */
int handle_watch(sk_api_call *call);
/* As sk_api_call_read; -2: nothing to send now, the call's wake runs later. */
ssize_t watch_stream_read(watch_stream *ws, char *buf, size_t max);
void watch_stream_free(watch_stream *ws);

/* ---- list.c ---- */
int handle_list(sk_api_call *call);
/* 422 Invalid on a ListOptions field: "field: Forbidden: msg", as Kubernetes. */
void reply_invalid_list_options(sk_api_call *call, const char *field, const char *msg);
/* A stream for a watch: the call's scope and selectors, items rendered as
 * ADDED events. Replies and returns NULL on a bad parameter. */
list_stream *list_stream_for_watch(sk_api_call *call);
/* Starts streaming every object at rev as ADDED events. */
void list_stream_start_initial(list_stream *ls, int64_t rev);
/* The namespace the stream is scoped to, NULL for all. */
const char *list_stream_ns(const list_stream *ls);
int list_stream_matches(const list_stream *ls, json_t *obj);
/* Non-zero if label or field selectors filter. */
int list_stream_filters(const list_stream *ls);
/* includeObject mode if the client wants Tables, else -1. */
int list_stream_table_mode(const list_stream *ls);
void table_render_single(sk_buf *b, const sk_resource *r, json_t *obj, int include_object,
                         int64_t rev);
/* Renders one object as a Table (for GET of a single item). */
void table_reply_single(sk_api_call *call, const sk_row *row);
ssize_t list_stream_read(list_stream *ls, char *buf, size_t max);
void list_stream_free(list_stream *ls);

#endif
