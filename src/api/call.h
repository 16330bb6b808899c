/*
 * call.h - private to src/api: the server's state (sk_api) and one
 * request's call, and what every verb does with a call: reply, warn, read
 * stored objects, submit a write, plan a read's revision.
 *
 * A call is a small state machine: `next` is the continuation to run on the
 * next step. A verb either finishes (sets the response and returns
 * SK_STEP_DONE) or submits a write / parks for the cache and returns
 * SK_STEP_WAIT with `next` set to the function that goes on.
 *
 * Memory: everything a call allocates lives in its arena (call->arena) and
 * is freed once with it; references to things outside (JSON values, store
 * rows, streams) are released by the arena too (sk_arena_defer). Each verb
 * keeps its own state in the arena behind call->verb_state.
 */
#ifndef SK_API_CALL_H
#define SK_API_CALL_H

#include "api/authn.h"
#include "api/metrics.h"
#include "api/request.h"
#include "api/route.h"
#include "cache/cache.h"
#include "core/arena.h"
#include "core/buf.h"
#include "hook/client.h"
#include "ctl/ctl.h"
#include "kube/accept.h"
#include "kube/options.h"
#include "kube/registry.h"
#include "kube/svcrange.h"
#include "kube/user.h"
#include "read/reader.h"
#include "store/store.h"
#include "watch/hub.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

typedef struct sk_api sk_api;
typedef struct sk_api_call sk_api_call;
typedef struct sk_authz sk_authz; /* authz.h */
typedef struct sk_audit_log sk_audit_log; /* audit.h */
typedef struct sk_webhooks sk_webhooks;   /* webhooks.h */

struct sk_api {
    /* What the API serves from (sk_api_deps): written once, before `up`
     * is set (release); a call reads them only after it saw `up` (acquire,
     * once, at its start: call->up), so no lock guards them. Until then
     * they are NULL and only the health checks are served. */
    _Atomic int up;
    pthread_mutex_t down_mu;
    char *down_why; /* under down_mu: why the store is not up (sk_api_store_down) */
    sk_store *store;
    sk_cache *cache;
    sk_reader *reader;
    sk_watch_hub *hub;
    sk_metrics *metrics;
    sk_ctl *identity, *collector, *consistency, *crd, *rbac;
    sk_authz *authz;  /* the RBAC index (authz.h) */
    int always_allow; /* --authorization-mode=AlwaysAllow */
    char *listen_addr;
    size_t max_object_bytes; /* largest serialized object a write may store */
    int64_t event_ttl_s;
    sk_svcrange service_ips, node_ports; /* what Services draw from (api/alloc.h) */
    int watch_stall_timeout_s;
    sk_authn_config authn;
    sk_audit_log *audit; /* --audit-log-path (borrowed), NULL: none */
    sk_hook_client *hooks; /* calls admission webhooks (api/webhooks.h) */
    sk_webhooks *webhooks; /* the compiled webhook configurations (webhooks.h) */
    /* the revision of this server's latest write of a webhook
     * configuration: writes wait for the cache to hold it (webhooks.h) */
    _Atomic int64_t webhooks_rev;
    _Atomic int stopping; /* set once at shutdown: watches end */
    int64_t stop_at_ms;   /* when stopping was set */
    int stop_grace_ms;    /* watches end spread over this */
};

/* sk_api_store_down's reason, copied into a (NULL: none said). */
const char *sk_api_store_down_why(sk_api *api, sk_arena *a);

enum { SK_STEP_WAIT = 0, SK_STEP_DONE = 1, SK_STEP_AGAIN = 2 };

typedef int (*sk_call_fn)(sk_api_call *call);

/* A streamed response body: a list or a watch. */
typedef struct sk_call_stream {
    /* As sk_api_call_read: a count, 0 at the end, -1 failed, -2 nothing yet. */
    ssize_t (*read)(void *self, char *buf, size_t max);
    void *self;
    int is_watch; /* counts as a watcher; the stall timeout applies */
} sk_call_stream;

struct sk_api_call {
    sk_api *api;
    int up; /* the API's `up` when the call started: its deps may be read */
    sk_arena *arena;
    const char *method;
    sk_route route; /* its strings in the arena */
    const sk_resource *res;
    const sk_user *user; /* who asks (api/authn.h), in the arena; never NULL once started */
    /* what the request's headers ask to impersonate (api/impersonate.h),
     * NULL for nothing; applied to user in the first step */
    const struct sk_impersonation *impersonation;
    const char *ns;   /* the request's namespace, "" when none */
    const char *name; /* the item's name, NULL for collections */
    const char *path; /* the request's path, "/api/v1/pods": non-resource authorization */
    /* The query parameters the API reads (sk_call_query), and headers,
     * copied at start: verbs parse them when they begin, in any step. */
    const char **params;
    const char *accept, *content_type;
    const char *user_agent; /* the default field manager (kube/managed.h) */
    /* what the Accept header asks to be answered (kube/accept.h);
     * not_acceptable: no clause could be, and one asked for a conversion */
    sk_accept out_as;
    int not_acceptable;
    const char *body; /* borrowed from the HTTP layer */
    size_t body_len;
    int body_too_large;
    sk_err reject; /* the HTTP layer refused the request target ... */
    const char *reject_msg;
    int (*client_gone)(void *ctx);
    void *client_ctx;
    sk_api_wake_fn wake;
    void *wake_arg;
    int64_t start_us;       /* for the latency metric */
    int64_t rv_deadline_ms; /* waiting for the cache or a future revision ends then */
    int64_t settle_deadline_ms; /* waiting for the CRD controller after a CRD write ends then */
    int64_t consistent_rev; /* a consistent read's revision, read at its first step */
    /* Audit (audit.h): the ID every response carries; the rest only with
     * a log. The authorizer's decision ("allow", "forbid") and reason, NULL
     * when the call was not checked. All in the arena. */
    const char *audit_id, *audit_uri;
    const sk_user *audit_user;        /* who authenticated (call->user may be impersonated) */
    json_t *audit_ips, *audit_status; /* released by the arena */
    int64_t audit_received_us;        /* wall clock */
    int audit_flags;
    const char *authz_decision, *authz_reason;
    /* admission's audit annotations (webhooks.c), NULL: none; released by
     * the arena */
    json_t *audit_annotations;

    /* Response. */
    int status;
    const char *content_type_out;
    sk_buf out;
    sk_call_stream stream; /* read != NULL: the body is streamed */
    const char **warnings; /* Warning header values, in the arena */
    size_t n_warnings;
    int retry_after_s; /* > 0: the Retry-After header (a Status's retryAfterSeconds) */

    /* Continuation and write state. */
    sk_call_fn next;
    sk_call_fn after_write; /* a CRD write's `then`, once the CRD is settled */
    sk_err write_err;
    sk_row write_row;
    void *verb_state; /* the verb's own, in the arena */
    void *view_state; /* a subresource view's own (verbs.h sk_update_view), in the arena */
    /* what admission webhooks need of the call (webhooks.c): the
     * configurations it is admitted under, taken at their first use; in
     * the arena */
    struct sk_webhooks_call *webhooks_call;
};

/* The value of query parameter key ("" for "?key"), or NULL: the lookup
 * kube/options.h parsers take, on the call. */
const char *sk_call_query(void *call, const char *key);

/* The strings of a JSON array (borrowed from it; a non-string item reads
 * as ""), as an array in the call's arena; *n_out their count. */
const char **sk_call_strings(sk_api_call *call, const json_t *array, size_t *n_out);

/* ---- replies ---- */
/* A JSON body (bytes copied), ended with a newline as kube's JSON encoder
 * ends every object it writes (clients compare bodies byte for byte). */
void sk_call_reply_raw(sk_api_call *call, int status, const char *json, size_t len);
/* A JSON body from obj (borrowed); a reply that cannot be encoded becomes
 * a fixed 500 Status, never an abort. */
void sk_call_reply_json(sk_api_call *call, int status, const json_t *obj);
/* 201 with a review (SubjectAccessReview, TokenReview, ...) as kube answers
 * one: the request's obj (borrowed, changed) as kind/api_version, its
 * metadata.creationTimestamp null unless the client set one, and status
 * (stolen) in place of what the client sent. */
void sk_call_reply_review(sk_api_call *call, json_t *obj, const char *kind,
                          const char *api_version, json_t *status);
/* A Status error; causes stolen (may be NULL). */
void sk_call_reply_status(sk_api_call *call, sk_err e, const char *message, const char *group,
                          const char *kind, const char *name, json_t *causes);
void sk_call_reply_error(sk_api_call *call, sk_err e, const char *message);
/* The same with a printf-formatted message (any length). */
/* kube's 406 when the metadata-only form the Accept header chose does not
 * fit the answer: PartialObjectMetadataList for one object, or
 * PartialObjectMetadata for a list (answers_list). Returns non-zero if it
 * replied. */
int sk_call_refuse_partial(sk_api_call *call, int answers_list);
void sk_call_reply_errorf(sk_api_call *call, sk_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* kube's 422 for one field.Invalid: "KIND[.GROUP] \"NAME\" is invalid: FIELD:
 * Invalid value: VALUE: DETAIL" with its one cause; value already rendered
 * as kube renders it (a JSON string, a number). */
void sk_call_reply_invalid(sk_api_call *call, const char *group, const char *kind,
                           const char *name, const char *field, const char *value,
                           const char *detail);
/* Sends a Status made elsewhere (stolen), e.g. by kube/options.h. */
void sk_call_reply_status_object(sk_api_call *call, json_t *status);
/* "configmaps" or "leases.coordination.k8s.io": r->resource, or the two
 * joined in buf (registry names fit SK_QUALIFIED_RESOURCE_MAX bytes). */
#define SK_QUALIFIED_RESOURCE_MAX 256
const char *sk_call_qualified_resource(const sk_resource *r, char *buf, size_t n);
/* The Status for a store or read error on an object of the call's resource
 * (SK_ERR_FORBIDDEN: the store refused a create into the call's namespace
 * because it is being deleted, sk_write.namespace_open). */
void sk_call_reply_store_error(sk_api_call *call, sk_err e, const char *name);
/*
 * The one content negotiation point for replies, run when a call's step is
 * done: if the client's Accept prefers Kubernetes protobuf (and it is not a
 * Table request), a JSON reply of a resource route is re-encoded as
 * protobuf (objects, lists, Status errors), and a watch stream becomes
 * protobuf frames. Replies that cannot be encoded stay JSON (logged).
 */
void sk_call_negotiate(sk_api_call *call);
/* Adds a Warning header "299 - <quoted text>" to the response. */
void sk_call_add_warning(sk_api_call *call, const char *text);

/* ---- stored objects ---- */
/* Parses a stored object of resource r named name (value/len bytes). One
 * that does not parse (an older version stored it too deep, or it is
 * damaged) is logged and NULL is returned: readers skip it rather than
 * fail, and it stays deletable. New reference. */
json_t *sk_call_parse_stored(const sk_resource *r, const char *value, size_t len,
                             const char *name);
/* The same for the call's resource, also reported in a Warning header
 * while the response has not started. */
json_t *sk_call_parse_stored_warn(sk_api_call *call, const char *value, size_t len,
                                  const char *name);

/* ---- writes and reads ---- */
/* Submits w and arranges for `then` to run with write_err/write_row set. */
int sk_call_submit_write(sk_api_call *call, sk_write *w, sk_call_fn then);
/*
 * The revision a read "not older than min_rev" is served at (min_rev < 0: a
 * consistent read, at least the store's revision at the call's first step;
 * 0: any). Returns SK_PLAN_NOW with *rev_out set to the cache's revision
 * once the cache has reached it. Until then it parks the call in the hub
 * with `again` as its next step and returns the step code to return
 * (SK_STEP_WAIT/SK_STEP_AGAIN): never a wait on an MHD thread. After a few
 * seconds a revision the store has is served from SQL (SK_PLAN_NOW with the
 * store's revision: never stale), and one it has not reached yet is 504
 * ResourceVersionTooLarge (replied, SK_STEP_DONE), as on a store error.
 */
#define SK_PLAN_NOW (-1)
int sk_call_plan_read(sk_api_call *call, int64_t min_rev, sk_call_fn again, int64_t *rev_out);

/* Releases a JSON reference when the call ends (NULL-safe); returns v. */
json_t *sk_call_keep(sk_api_call *call, json_t *v);

#endif
