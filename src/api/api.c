/*
 * api.c - the API's entry points (api.h): the server state's lifetime
 * (made before the store may be up, attached to it once it is), and a
 * call's: start (copy what the request says, route it), step, response,
 * stream reads, free. What each verb does is in its own file (verbs.h);
 * the helpers they share are in call.c.
 */
#include "api/api.h"
#include "api/audit.h"
#include "api/authz.h"
#include "api/escalate.h"
#include "api/impersonate.h"
#include "api/call.h"
#include "api/verbs.h"
#include "api/webhooks.h"
#include "core/check.h"
#include "core/util.h"
#include "kube/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The query parameters the API reads; anything else is ignored, as
 * kube-apiserver ignores parameters it does not know. */
static const char *const param_names[] = {
    "limit",         "continue",          "resourceVersion",     "resourceVersionMatch",
    "labelSelector", "fieldSelector",     "watch",               "dryRun",
    "includeObject", "timeoutSeconds",    "verbose",             "allowWatchBookmarks",
    "sendInitialEvents", "propagationPolicy", "fieldValidation",   "gracePeriodSeconds",
    "fieldManager",  "force",             "orphanDependents",    "pretty",
};
#define N_PARAMS (sizeof param_names / sizeof *param_names)

sk_api *sk_api_new(const sk_api_deps *deps, const sk_api_config *cfg)
{
    sk_api *api = calloc(1, sizeof *api);
    SK_CHECK_ALLOC(api);
    pthread_mutex_init(&api->down_mu, NULL);
    api->always_allow = cfg->always_allow;
    api->metrics = sk_metrics_new();
    api->max_object_bytes =
        cfg->max_object_bytes > 0 ? (size_t)cfg->max_object_bytes : 1536 * 1024;
    api->watch_stall_timeout_s = cfg->watch_stall_timeout_s > 0 ? cfg->watch_stall_timeout_s : 15;
    api->event_ttl_s = cfg->event_ttl_s > 0 ? cfg->event_ttl_s : 3600;
    SK_CHECK(sk_svcrange_parse_cidr(cfg->service_cluster_ip_range ? cfg->service_cluster_ip_range
                                                                  : SK_SERVICE_CIDR_DEFAULT,
                                    &api->service_ips) == SK_OK);
    SK_CHECK(sk_svcrange_parse_ports(cfg->service_node_port_range ? cfg->service_node_port_range
                                                                  : SK_NODE_PORTS_DEFAULT,
                                     &api->node_ports) == SK_OK);
    api->authn = cfg->authn;
    api->audit = deps->audit;
    api->hooks = sk_hook_client_new();
    api->listen_addr = strdup(cfg->listen_addr ? cfg->listen_addr : "127.0.0.1:8080");
    SK_CHECK_ALLOC(api->listen_addr);
    if (deps->store)
        sk_api_attach(api, deps);
    return api;
}

void sk_api_attach(sk_api *api, const sk_api_deps *deps)
{
    SK_CHECK(deps->store != NULL && !atomic_load(&api->up));
    api->store = deps->store;
    api->cache = deps->cache;
    api->reader = deps->reader;
    api->hub = deps->hub;
    api->identity = deps->identity;
    api->collector = deps->collector;
    api->crd = deps->crd;
    api->consistency = deps->consistency;
    api->rbac = deps->rbac;
    api->authz = sk_authz_new(deps->reader, deps->cache);
    api->webhooks = sk_webhooks_new(deps->reader, deps->cache, api->hooks);
    atomic_store_explicit(&api->up, 1, memory_order_release);
}

void sk_api_store_down(sk_api *api, const char *why)
{
    char *copy = strdup(why);
    SK_CHECK_ALLOC(copy);
    pthread_mutex_lock(&api->down_mu);
    free(api->down_why);
    api->down_why = copy;
    pthread_mutex_unlock(&api->down_mu);
}

const char *sk_api_store_down_why(sk_api *api, sk_arena *a)
{
    pthread_mutex_lock(&api->down_mu);
    const char *why = api->down_why ? sk_arena_strdup(a, api->down_why) : NULL;
    pthread_mutex_unlock(&api->down_mu);
    return why;
}

void sk_api_begin_shutdown(sk_api *api, int grace_ms)
{
    if (!atomic_load(&api->up))
        return; /* no watch was ever served */
    api->stop_at_ms = sk_now_ms();
    api->stop_grace_ms = grace_ms;
    api->stopping = 1;
    /* Wake everyone now; each watcher then ends at its own offset in the
     * grace period (see watch.c), woken by the cache's ticks. */
    sk_watch_hub_notify(api->hub);
}

void sk_api_wait_watches(sk_api *api, int timeout_ms)
{
    if (!atomic_load(&api->up))
        return;
    int64_t deadline = sk_now_ms() + timeout_ms;
    sk_watch_stats st;
    for (;;) {
        sk_watch_hub_stats(api->hub, &st);
        if (st.registered == 0 || sk_now_ms() >= deadline)
            break;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    /* Whatever is still parked is woken now and can never park again, so
     * no connection stays suspended when the HTTP server stops. */
    sk_watch_hub_stop(api->hub);
}

void sk_api_free(sk_api *api)
{
    if (!api)
        return;
    sk_metrics_free(api->metrics);
    sk_authz_free(api->authz);
    sk_webhooks_free(api->webhooks);
    sk_hook_client_free(api->hooks);
    free(api->listen_addr);
    pthread_mutex_destroy(&api->down_mu);
    free(api->down_why);
    free(api);
}

int sk_api_ready(sk_api *api)
{
    int64_t rev;
    return sk_store_revisions(api->store, &rev, NULL) == SK_OK;
}

/* ---- a call ------------------------------------------------------------- */

const char *sk_call_query(void *ctx, const char *key)
{
    sk_api_call *call = ctx;
    for (size_t i = 0; i < N_PARAMS; i++)
        if (strcmp(param_names[i], key) == 0)
            return call->params[i];
    return NULL;
}

static int not_allowed(sk_api_call *call)
{
    sk_call_reply_error(call, SK_ERR_METHOD_NOT_ALLOWED,
                        "the server does not allow this method on the requested resource");
    return SK_STEP_DONE;
}

static int path_not_found(sk_api_call *call)
{
    sk_call_reply_error(call, SK_ERR_NOT_FOUND,
                        "the server could not find the requested resource");
    return SK_STEP_DONE;
}

static int dispatch_resource(sk_api_call *call)
{
    if (call->not_acceptable) {
        sk_call_reply_error(call, SK_ERR_NOT_ACCEPTABLE, SK_ACCEPT_NOT_ACCEPTABLE);
        return SK_STEP_DONE;
    }
    if (call->route.sub)
        return sk_verb_subresource(call);
    switch (call->route.verb) {
    case SK_REQ_GET:
        return sk_verb_get(call);
    case SK_REQ_LIST:
        return sk_verb_list(call);
    case SK_REQ_WATCH:
        return sk_verb_watch(call);
    case SK_REQ_CREATE:
        return sk_verb_create(call);
    case SK_REQ_UPDATE:
        return sk_verb_update(call);
    case SK_REQ_PATCH:
        return sk_verb_patch(call);
    case SK_REQ_DELETE:
        return sk_verb_delete(call);
    case SK_REQ_DELETECOLLECTION:
        return sk_verb_delete_collection(call);
    case SK_REQ_COUNT:
        break;
    }
    return path_not_found(call);
}

/* A resource request; a write the escalation guard checks first waits
 * until the cache holds every RBAC change committed before it started. */
static int dispatch_settled(sk_api_call *call)
{
    int64_t rev;
    if (sk_escalate_guarded(call)) {
        int rc = sk_call_plan_read(call, -1, dispatch_settled, &rev);
        if (rc != SK_PLAN_NOW)
            return rc;
    }
    return dispatch_resource(call);
}

/* The first step: refusals the request carries, then its route. */
static int dispatch(sk_api_call *call)
{
    /* Until the store is up only the health checks are served (api.h). */
    if (!call->up && call->route.kind != SK_ROUTE_HEALTH) {
        sk_call_reply_error(call, SK_ERR_UNAVAILABLE,
                            "the storage backend is not up yet: the server is starting");
        return SK_STEP_DONE;
    }
    if (call->reject_msg) {
        sk_call_reply_error(call, call->reject, call->reject_msg);
        return SK_STEP_DONE;
    }
    if (call->body_too_large) {
        sk_call_reply_errorf(call, SK_ERR_TOO_LARGE, "Request entity too large: limit is %u",
                             SK_API_MAX_BODY);
        return SK_STEP_DONE;
    }
    const char *watch = sk_call_query(call, "watch");
    if (watch && *watch && sk_parse_bool(watch) < 0) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid value for watch: want a boolean");
        return SK_STEP_DONE;
    }
    /* No RBAC policy before the store: the health checks are kube's
     * bootstrap policy's to everyone (system:public-info-viewer). */
    if (!call->up)
        return sk_endpoint_health(call);
    if (!sk_impersonate_admit(call) || !sk_authz_admit(call))
        return SK_STEP_DONE;
    switch (call->route.kind) {
    case SK_ROUTE_REVIEW:
        return sk_verb_review(call);
    case SK_ROUTE_NOT_FOUND:
        return path_not_found(call);
    case SK_ROUTE_NOT_ALLOWED:
        return not_allowed(call);
    case SK_ROUTE_HEALTH:
        return sk_endpoint_health(call);
    case SK_ROUTE_METRICS:
        return sk_endpoint_metrics(call);
    case SK_ROUTE_CONSISTENCY:
        return sk_endpoint_consistency(call);
    case SK_ROUTE_SELF_SUBJECT_REVIEW:
        return sk_endpoint_self_subject_review(call);
    case SK_ROUTE_TOKEN_REVIEW:
        return sk_endpoint_token_review(call);
    case SK_ROUTE_VERSION:
    case SK_ROUTE_OPENAPI_V2:
    case SK_ROUTE_OPENAPI_V3_ROOT:
    case SK_ROUTE_OPENAPI_V3_DOC:
    case SK_ROUTE_CORE_VERSIONS:
    case SK_ROUTE_GROUPS:
    case SK_ROUTE_GROUP:
    case SK_ROUTE_GROUP_RESOURCES:
        return sk_endpoint_document(call);
    case SK_ROUTE_RESOURCE:
        return dispatch_settled(call);
    }
    return path_not_found(call);
}

/* Copies the request's route, parameters and headers into the call's arena. */
static void copy_request(sk_api_call *call, const sk_http_req *req)
{
    sk_arena *a = call->arena;
    call->params = sk_arena_alloc(a, N_PARAMS * sizeof *call->params);
    for (size_t i = 0; i < N_PARAMS; i++)
        call->params[i] = sk_arena_strdup(a, req->query(req->ctx, param_names[i]));
    call->accept = sk_arena_strdup(a, req->header(req->ctx, "Accept"));
    call->content_type = sk_arena_strdup(a, req->header(req->ctx, "Content-Type"));
    sk_buf path = SK_BUF_INIT;
    for (size_t i = 0; i < req->n_segs; i++) {
        sk_buf_putc(&path, '/');
        sk_buf_puts(&path, req->segs[i]);
    }
    call->path = sk_arena_strdup(a, path.data ? path.data : "/");
    sk_buf_free(&path);
    call->user_agent = sk_arena_strdup(a, req->header(req->ctx, "User-Agent"));
    call->impersonation = sk_impersonate_read(a, req);
    const char *watch = sk_call_query(call, "watch");
    sk_route_resolve(req->method, req->segs, req->n_segs, watch && sk_parse_bool(watch) == 1,
                     &call->route);
    sk_route *rt = &call->route;
    rt->ns = sk_arena_strdup(a, rt->ns ? rt->ns : "");
    rt->name = sk_arena_strdup(a, rt->name);
    rt->group = sk_arena_strdup(a, rt->group);
    rt->version = sk_arena_strdup(a, rt->version);
    call->res = rt->res;
    call->ns = rt->ns;
    call->name = rt->name;
    call->not_acceptable = sk_accept_negotiate(call->accept, call->res && !call->res->custom,
                                               &call->out_as) != SK_OK;
}

sk_api_call *sk_api_call_start(sk_api *api, const sk_http_req *req, sk_api_wake_fn wake,
                               void *wake_arg)
{
    sk_api_call *call = calloc(1, sizeof *call);
    SK_CHECK_ALLOC(call);
    call->arena = sk_arena_new();
    call->api = api;
    call->up = atomic_load_explicit(&api->up, memory_order_acquire);
    call->method = sk_arena_strdup(call->arena, req->method);
    call->route.kind = SK_ROUTE_NOT_FOUND;
    /* Authentication comes first, as kube's filter chain runs it: an
     * unauthenticated client learns nothing, not even that its path is bad. */
    const char *warning;
    call->user = sk_authn_request(&api->authn, call->up ? api->reader : NULL, call->arena, req,
                                  &warning);
    if (warning)
        sk_call_add_warning(call, warning);
    /* An unauthenticated request's route is resolved too, for its audit
     * event only: dispatch answers it 401 before reading any of it. */
    if (req->reject == SK_OK)
        copy_request(call, req);
    else
        call->params = sk_arena_alloc(call->arena, N_PARAMS * sizeof *call->params);
    if (!call->user) {
        call->reject = SK_ERR_UNAUTHORIZED;
        call->reject_msg = "Unauthorized";
    } else if (req->reject != SK_OK) {
        call->reject = req->reject;
        call->reject_msg =
            sk_arena_strdup(call->arena, req->reject_msg ? req->reject_msg : "bad request");
    }
    call->body = req->body;
    call->body_len = req->body_len;
    call->body_too_large = req->body_too_large;
    call->client_gone = req->client_gone;
    call->client_ctx = req->ctx;
    call->wake = wake;
    call->wake_arg = wake_arg;
    call->start_us = sk_now_us();
    call->next = dispatch;
    sk_audit_call_start(call, req);
    return call;
}

int sk_api_call_step(sk_api_call *call)
{
    for (;;) {
        SK_CHECK(call->next != NULL);
        sk_call_fn fn = call->next;
        call->next = NULL;
        int rc = fn(call);
        if (rc == SK_STEP_AGAIN)
            continue;
        if (rc == SK_STEP_DONE) {
            SK_CHECK(call->status != 0);
            sk_audit_call_responded(call);
            sk_call_negotiate(call);
        }
        return rc == SK_STEP_DONE;
    }
}

void sk_api_call_response(sk_api_call *call, sk_api_response *out)
{
    int streaming = call->stream.read != NULL;
    out->status = call->status;
    out->content_type = call->content_type_out;
    out->streaming = streaming;
    out->watch = streaming && call->stream.is_watch;
    out->body = streaming ? NULL : (call->out.data ? call->out.data : "");
    out->body_len = streaming ? 0 : call->out.len;
    out->stall_timeout_s = call->stream.is_watch ? call->api->watch_stall_timeout_s : 0;
    out->warnings = call->warnings;
    out->n_warnings = call->n_warnings;
    out->retry_after_s = call->retry_after_s;
    out->audit_id = call->audit_id;
}

ssize_t sk_api_call_read(sk_api_call *call, char *buf, size_t max)
{
    return call->stream.read(call->stream.self, buf, max);
}

void sk_api_call_stalled(sk_api_call *call)
{
    if (call && call->stream.is_watch)
        sk_watch_hub_count(call->api->hub, 0, 0, 1);
}

void sk_api_call_free(sk_api_call *call)
{
    if (!call)
        return;
    sk_audit_call_end(call);
    if (call->route.kind == SK_ROUTE_RESOURCE && call->status)
        sk_metrics_request(call->api->metrics, call->route.verb, call->status,
                           sk_now_us() - call->start_us);
    sk_buf_free(&call->out);
    sk_row_clear(&call->write_row);
    sk_arena_free(call->arena); /* the verb's state, streams and references */
    free(call);
}
