/*
 * api.c - call lifecycle, routing and the small non-object endpoints
 * (discovery, OpenAPI, health).
 *
 * Routing follows kube-apiserver's URL layout:
 *   /api/v1[/namespaces/{ns}]/{resource}[/{name}]
 *   /apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}]
 * A namespaced resource without /namespaces/{ns} is the all-namespaces list.
 * Unknown paths are 404 and known paths with an unsupported method are 405,
 * both as Status objects, as Kubernetes answers.
 */
#include "api/api.h"
#include "api/discovery.h"
#include "api/internal.h"
#include "api/openapi.h"
#include "api/status.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "cache/cache.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define RV_WAIT_MS 3000
#define MAX_UNREADABLE_WARNINGS 10 /* Warning headers about skipped objects, at most */

static void cache_moved(void *arg)
{
    sk_api *api = arg;
    sk_watch_hub_notify(api->hub);
}

sk_err sk_api_new(sk_store *store, const sk_api_config *cfg, sk_api **out)
{
    sk_api *api = calloc(1, sizeof *api);
    SK_CHECK_ALLOC(api);
    api->store = store;
    api->max_object_bytes =
        cfg && cfg->max_object_bytes > 0 ? (size_t)cfg->max_object_bytes : 1536 * 1024;
    api->hub = sk_watch_hub_new();
    api->metrics = sk_metrics_new();
    api->watch_stall_timeout_s =
        cfg && cfg->watch_stall_timeout_s > 0 ? cfg->watch_stall_timeout_s : 15;
    api->listen_addr = strdup(cfg && cfg->listen_addr ? cfg->listen_addr : "127.0.0.1:8080");
    SK_CHECK_ALLOC(api->listen_addr);
    size_t n;
    const sk_resource *all = sk_registry_all(&n);
    SK_CHECK(n <= sizeof api->cache_names / sizeof *api->cache_names);
    for (size_t i = 0; i < n; i++)
        api->cache_names[i] = all[i].resource;
    sk_cache_config cc = {
        .resources = api->cache_names,
        .n_resources = (int)n,
        .drop_rev_once = cfg ? cfg->cache_drop_rev_once : 0,
        .corrupt_key_once = cfg ? cfg->cache_corrupt_key_once : NULL,
        .snapshot_bytes = cfg ? cfg->cache_snapshot_bytes : 0,
    };
    sk_err err = sk_cache_new(store, &cc, cache_moved, api, &api->cache);
    if (err != SK_OK) {
        sk_api_free(api);
        return err;
    }
    api->event_ttl_s = cfg && cfg->event_ttl_s > 0 ? cfg->event_ttl_s : 3600;
    sk_identity_config ic = {
        .hostname = cfg ? cfg->identity_hostname : NULL,
        .duration_s =
            cfg && cfg->identity_lease_duration_s > 0 ? cfg->identity_lease_duration_s : 3600,
        .renew_s = cfg && cfg->identity_renew_s > 0 ? cfg->identity_renew_s : 10,
    };
    api->identity = sk_identity_start(store, &ic);
    api->collector = sk_collector_start(store);
    api->checker = sk_checker_start(api->cache, api->cache_names, (int)n,
                                    cfg ? cfg->consistency_check_interval_s : 0);
    *out = api;
    return SK_OK;
}

void sk_api_begin_shutdown(sk_api *api, int grace_ms)
{
    sk_identity_stop(api->identity);
    api->identity = NULL;
    sk_collector_stop(api->collector);
    api->collector = NULL;
    api->stop_at_ms = sk_now_ms();
    api->stop_grace_ms = grace_ms;
    api->stopping = 1;
    /* Wake everyone now; each watcher then ends at its own offset in the
     * grace period (see watch.c), woken by the cache's ticks. */
    sk_watch_hub_notify(api->hub);
}

void sk_api_wait_watches(sk_api *api, int timeout_ms)
{
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
    sk_identity_stop(api->identity);
    sk_collector_stop(api->collector);
    sk_checker_stop(api->checker);
    sk_watch_hub_stop(api->hub);
    sk_cache_free(api->cache);
    sk_watch_hub_free(api->hub);
    sk_metrics_free(api->metrics);
    free(api->listen_addr);
    free(api);
}

int sk_api_ready(sk_api *api)
{
    int64_t rev;
    return sk_store_revisions(api->store, &rev, NULL) == SK_OK;
}

/* ---- helpers shared by the handlers ------------------------------------ */

int parse_bool(const char *s)
{
    static const char *const truthy[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const falsy[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < sizeof truthy / sizeof *truthy; i++) {
        if (strcmp(s, truthy[i]) == 0)
            return 1;
        if (strcmp(s, falsy[i]) == 0)
            return 0;
    }
    return -1;
}

void call_reply_raw(sk_api_call *call, int status, const char *json, size_t len)
{
    call->status = status;
    call->content_type_out = "application/json";
    sk_buf_reset(&call->out);
    sk_buf_append(&call->out, json, len);
}

/* What a reply that cannot be encoded becomes: never an abort. */
static const char unencodable_reply[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
    "\"message\":\"the response could not be encoded\",\"reason\":\"InternalError\","
    "\"code\":500}";

void call_reply_json(sk_api_call *call, int status, const json_t *obj)
{
    char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    if (!text) {
        sk_log_error("cannot encode a reply (status %d): invalid UTF-8 or out of memory", status);
        call_reply_raw(call, 500, unencodable_reply, sizeof unencodable_reply - 1);
        return;
    }
    call_reply_raw(call, status, text, strlen(text));
    free(text);
}

void call_reply_status(sk_api_call *call, sk_err e, const char *message, const char *group,
                       const char *kind, const char *name, json_t *causes)
{
    json_t *st = sk_status_new(e, message, group, kind, name, causes);
    call_reply_json(call, sk_err_http_code(e), st);
    json_decref(st);
}

void call_reply_error(sk_api_call *call, sk_err e, const char *message)
{
    call_reply_status(call, e, message, NULL, NULL, NULL, NULL);
}

void call_reply_errorf(sk_api_call *call, sk_err e, const char *fmt, ...)
{
    sk_buf msg = SK_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sk_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    call_reply_error(call, e, msg.data);
    sk_buf_free(&msg);
}

const char *call_qualified_resource(const sk_resource *r, char *buf, size_t n)
{
    if (!*r->group)
        return r->resource;
    snprintf(buf, n, "%s.%s", r->resource, r->group);
    return buf;
}

void call_reply_not_found(sk_api_call *call, const sk_resource *r, const char *name)
{
    char q[SK_QUALIFIED_RESOURCE_MAX];
    sk_buf msg = SK_BUF_INIT;
    sk_buf_printf(&msg, "%s \"%s\" not found", call_qualified_resource(r, q, sizeof q), name);
    call_reply_status(call, SK_ERR_NOT_FOUND, msg.data, r->group, r->resource, name, NULL);
    sk_buf_free(&msg);
}

void call_reply_store_error(sk_api_call *call, sk_err e, const char *name)
{
    char q[SK_QUALIFIED_RESOURCE_MAX];
    sk_buf msg = SK_BUF_INIT;
    switch (e) {
    case SK_ERR_NOT_FOUND:
        call_reply_not_found(call, call->res, name);
        break;
    case SK_ERR_ALREADY_EXISTS:
    case SK_ERR_CONFLICT:
        if (e == SK_ERR_CONFLICT)
            sk_buf_puts(&msg, "Operation cannot be fulfilled on ");
        sk_buf_printf(&msg, "%s \"%s\"", call_qualified_resource(call->res, q, sizeof q),
                      name);
        sk_buf_puts(&msg, e == SK_ERR_CONFLICT
                              ? ": the object has been modified; please apply your changes to "
                                "the latest version and try again"
                              : " already exists");
        call_reply_status(call, e, msg.data, call->res->group, call->res->resource, name, NULL);
        break;
    case SK_ERR_EXPIRED:
        call_reply_error(call, e, "The resourceVersion for the provided request is too old.");
        break;
    case SK_ERR_TOO_LARGE:
        sk_buf_printf(&msg, "Request entity too large: limit is %zu",
                      call->api->max_object_bytes);
        call_reply_error(call, e, msg.data);
        break;
    case SK_ERR_UNAVAILABLE:
        call_reply_error(call, e, "the storage backend is unavailable");
        break;
    default:
        sk_buf_printf(&msg, "storage error: %s", sk_err_name(e));
        call_reply_error(call, e == SK_OK ? SK_ERR_INTERNAL : e, msg.data);
        break;
    }
    sk_buf_free(&msg);
}

json_t *parse_stored(const sk_resource *r, const char *value, size_t len, const char *name)
{
    json_error_t jerr;
    json_t *obj = json_loadb(value, len, 0, &jerr);
    if (obj && json_is_object(obj))
        return obj;
    json_decref(obj);
    sk_log_warn("stored %s \"%s\" cannot be decoded (%s): skipped", r->resource, name,
                jerr.text);
    return NULL;
}

json_t *call_parse_stored(sk_api_call *call, const char *value, size_t len, const char *name)
{
    json_t *obj = parse_stored(call->res, value, len, name);
    if (!obj && call->n_warnings < MAX_UNREADABLE_WARNINGS) {
        sk_buf w = SK_BUF_INIT;
        sk_buf_printf(&w, "the stored object %s \"%s\" cannot be decoded and was skipped",
                      call->res->resource, name);
        call_add_warning(call, w.data);
        sk_buf_free(&w);
    }
    return obj;
}

void call_add_warning(sk_api_call *call, const char *text)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_puts(&b, "299 - ");
    sk_buf_json_string(&b, text);
    call->warnings = realloc(call->warnings, sizeof(char *) * (call->n_warnings + 1));
    SK_CHECK_ALLOC(call->warnings);
    call->warnings[call->n_warnings++] = sk_buf_steal(&b, NULL);
}

static void write_done(void *arg, sk_err err, const sk_row *result)
{
    sk_api_call *call = arg;
    call->write_err = err;
    if (err == SK_OK)
        sk_row_copy(&call->write_row, result);
    call->wake(call->wake_arg);
}

int call_submit_write(sk_api_call *call, sk_write *w, call_fn then)
{
    sk_row_clear(&call->write_row);
    call->write_err = SK_OK;
    call->next = then;
    sk_store_write_async(call->api->store, w, write_done, call);
    return STEP_WAIT;
}

int plan_read(sk_api_call *call, int64_t min_rev, call_fn again, int64_t *rev_out)
{
    sk_api *api = call->api;
    uint64_t seen = sk_watch_hub_seq(api->hub);
    sk_cache_state st;
    sk_cache_get_state(api->cache, &st);
    int64_t cur = -1; /* the store's revision, read only where it decides */
    sk_err err = SK_OK;
    if (min_rev < 0 && call->consistent_rev == 0) {
        /* A consistent read: at least the store's revision now. Kept for
         * the call's later steps, which must not chase newer commits. */
        if ((err = sk_store_revisions(api->store, &cur, NULL)) != SK_OK)
            goto fail;
        call->consistent_rev = cur > 0 ? cur : 1;
    }
    int64_t want = min_rev < 0 ? call->consistent_rev : min_rev;
    if (st.rev >= want) {
        *rev_out = st.rev;
        return PLAN_NOW;
    }
    /* Two waits, bounded by RV_WAIT_MS, neither holding this thread (the
     * call is parked and `again` runs at the next commit or tick): for the
     * cache, which is usually a commit or two behind the store, so that
     * the read is served from memory; or for a revision from the future.
     * Which of the two it was matters only when the time is up, so only
     * then is the store asked (not at every wake of a parked call). */
    int64_t now = sk_now_ms();
    if (call->rv_deadline_ms == 0)
        call->rv_deadline_ms = now + RV_WAIT_MS;
    if (now >= call->rv_deadline_ms) {
        if (cur < 0 && (err = sk_store_revisions(api->store, &cur, NULL)) != SK_OK)
            goto fail;
        if (cur >= want) { /* the cache is stuck: SQL has the revision */
            *rev_out = cur;
            return PLAN_NOW;
        }
        call_reply_too_large_rv(call, min_rev, cur);
        return STEP_DONE;
    }
    call->next = again;
    uint64_t ticket = sk_watch_hub_park(api->hub, seen, call->wake, call->wake_arg);
    if (ticket == SK_HUB_MOVED)
        return STEP_AGAIN;
    if (ticket != SK_HUB_STOPPED)
        return STEP_WAIT;
    call->next = NULL;
    err = SK_ERR_UNAVAILABLE;
fail:
    call_reply_store_error(call, err, call->name ? call->name : "");
    return STEP_DONE;
}

void call_reply_too_large_rv(sk_api_call *call, int64_t rev, int64_t current)
{
    char msg[96];
    snprintf(msg, sizeof msg, "Too large resource version: %lld, current: %lld", (long long)rev,
             (long long)current);
    json_t *causes = json_array();
    sk_status_add_cause(causes, "ResourceVersionTooLarge", "Too large resource version", NULL);
    json_t *st = sk_status_new(SK_ERR_TIMEOUT, msg, NULL, NULL, NULL, causes);
    json_object_set_new(json_object_get(st, "details"), "retryAfterSeconds", json_integer(1));
    call_reply_json(call, sk_err_http_code(SK_ERR_TIMEOUT), st);
    json_decref(st);
}

/* ---- fixed endpoints ---------------------------------------------------- */

/* Replies with a cached, immutable document (discovery, OpenAPI), or 404. */
static int reply_doc(sk_api_call *call, const char *text, const size_t *len)
{
    if (!text) {
        call_reply_error(call, SK_ERR_NOT_FOUND,
                         "the server could not find the requested resource");
        return STEP_DONE;
    }
    call_reply_raw(call, 200, text, *len);
    return STEP_DONE;
}

/* The named checks of /healthz, /livez and /readyz, as kube-apiserver
 * lists them (the store stands where etcd would). */
static int reply_health(sk_api_call *call, const char *which)
{
    sk_api *api = call->api;
    struct {
        const char *name;
        int ok;
    } checks[] = {
        {"ping", 1},
        {"log", 1},
        {"storage", sk_api_ready(api)},
        {"poststarthook/start-kube-apiserver-identity-lease-controller",
         sk_identity_healthy(api->identity)},
        {"poststarthook/start-kube-apiserver-identity-lease-garbage-collector",
         sk_collector_healthy(api->collector)},
    };
    size_t n = sizeof checks / sizeof *checks;
    if (strcmp(which, "livez") == 0)
        n = 3; /* liveness does not wait for start-up hooks */
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= checks[i].ok;
    call->status = ok ? 200 : 500;
    call->content_type_out = "text/plain; charset=utf-8";
    sk_buf_reset(&call->out);
    if (ok && call->q.verbose == NULL) {
        sk_buf_puts(&call->out, "ok");
        return STEP_DONE;
    }
    for (size_t i = 0; i < n; i++)
        sk_buf_printf(&call->out, "[%c]%s %s\n", checks[i].ok ? '+' : '-', checks[i].name,
                      checks[i].ok ? "ok" : "failed: reason withheld");
    sk_buf_printf(&call->out, "%s check %s\n", which, ok ? "passed" : "failed");
    return STEP_DONE;
}

/* ---- routing ------------------------------------------------------------ */

static int not_allowed(sk_api_call *call)
{
    call_reply_error(call, SK_ERR_METHOD_NOT_ALLOWED,
                     "the server does not allow this method on the requested resource");
    return STEP_DONE;
}

static int path_not_found(sk_api_call *call)
{
    call_reply_error(call, SK_ERR_NOT_FOUND, "the server could not find the requested resource");
    return STEP_DONE;
}

/* Appends s to b as a field selector value: ',', '=' and '\\' escaped. */
static void put_selector_value(sk_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == ',' || *s == '=' || *s == '\\')
            sk_buf_putc(b, '\\');
        sk_buf_putc(b, *s);
    }
}

/* A watch of one object: the collection watch narrowed by metadata.name. */
static int handle_watch_item(sk_api_call *call)
{
    sk_buf sel = SK_BUF_INIT;
    sk_buf_puts(&sel, "metadata.name=");
    put_selector_value(&sel, call->name);
    if (call->q.field_selector && *call->q.field_selector)
        sk_buf_printf(&sel, ",%s", call->q.field_selector);
    free(call->q.field_selector);
    call->q.field_selector = sk_buf_steal(&sel, NULL);
    return handle_watch(call);
}

static int dispatch_resource(sk_api_call *call)
{
    switch ((sk_req_verb)call->verb) {
    case SK_REQ_GET:
        return handle_get(call);
    case SK_REQ_LIST:
        return handle_list(call);
    case SK_REQ_WATCH:
        return call->name ? handle_watch_item(call) : handle_watch(call);
    case SK_REQ_CREATE:
        return handle_create(call);
    case SK_REQ_UPDATE:
        return handle_update(call);
    case SK_REQ_PATCH:
        return handle_patch(call);
    case SK_REQ_DELETE:
        return handle_delete(call);
    case SK_REQ_DELETECOLLECTION:
        return handle_delete_collection(call);
    case SK_REQ_COUNT:
        break;
    }
    return path_not_found(call);
}

static int reply_metrics(sk_api_call *call)
{
    sk_watch_stats ws;
    sk_cache_stats cs;
    sk_watch_hub_stats(call->api->hub, &ws);
    sk_cache_get_stats(call->api->cache, &cs);
    sk_metrics_gauges g = {
        .registered_watchers = ws.registered,
        .watch_events_sent = ws.events_sent,
        .terminated_watchers = ws.terminated,
        .cache_revision = cs.rev,
        .store_revision = cs.store_rev,
        .cache_objects = cs.objects,
        .cache_events = cs.events,
        .cache_rebuilds = cs.rebuilds,
        .cache_list_oldest = cs.list_oldest,
        .cache_snapshots = cs.snapshots,
        .cache_object_bytes = cs.object_bytes,
        .cache_index_bytes = cs.index_bytes,
        .cache_snapshot_bytes = cs.snapshot_bytes,
        .cache_snapshot_budget = cs.snapshot_budget,
    };
    call->status = 200;
    call->content_type_out = "text/plain; version=0.0.4; charset=utf-8";
    sk_buf_reset(&call->out);
    sk_metrics_render(call->api->metrics, &g, &call->out);
    sk_checker_render(call->api->checker, &call->out);
    return STEP_DONE;
}

/* GET /debug/consistency: one consistency check of every resource, now. */
static int reply_consistency(sk_api_call *call)
{
    call->status = 200;
    call->content_type_out = "text/plain; charset=utf-8";
    sk_buf_reset(&call->out);
    sk_checker_run(call->api->checker, &call->out);
    return STEP_DONE;
}

static int route(sk_api_call *call)
{
    size_t len = 0;
    const sk_route *rt = &call->route;
    switch (rt->kind) {
    case SK_ROUTE_NOT_FOUND:
        return path_not_found(call);
    case SK_ROUTE_NOT_ALLOWED:
        return not_allowed(call);
    case SK_ROUTE_HEALTH:
        return reply_health(call, rt->doc);
    case SK_ROUTE_METRICS:
        return reply_metrics(call);
    case SK_ROUTE_CONSISTENCY:
        return reply_consistency(call);
    case SK_ROUTE_VERSION:
        return reply_doc(call, sk_discovery_version_text(&len), &len);
    case SK_ROUTE_OPENAPI_V3_ROOT:
        return reply_doc(call, sk_openapi_v3_root_text(&len), &len);
    case SK_ROUTE_OPENAPI_V3_DOC:
        return reply_doc(call, sk_openapi_v3_doc_text(rt->doc, &len), &len);
    case SK_ROUTE_CORE_VERSIONS:
        return reply_doc(call, sk_discovery_core_versions_text(&len), &len);
    case SK_ROUTE_GROUPS:
        return reply_doc(call, sk_discovery_groups_text(&len), &len);
    case SK_ROUTE_GROUP:
        return reply_doc(call, sk_discovery_group_text(call->route_group, &len), &len);
    case SK_ROUTE_GROUP_RESOURCES:
        return reply_doc(call,
                         sk_discovery_resources_text(call->route_group, call->route_version, &len),
                         &len);
    case SK_ROUTE_RESOURCE:
        return dispatch_resource(call);
    }
    return path_not_found(call);
}

/* ---- call lifecycle ----------------------------------------------------- */

static char *dup_opt(const char *s)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    SK_CHECK_ALLOC(d);
    return d;
}

static char *dup_nonempty(const char *s)
{
    return s && *s ? dup_opt(s) : NULL;
}

static int start(sk_api_call *call)
{
    if (call->reject_msg) {
        call_reply_error(call, call->reject, call->reject_msg);
        return STEP_DONE;
    }
    if (call->body_too_large) {
        char msg[64];
        snprintf(msg, sizeof msg, "Request entity too large: limit is %u", SK_API_MAX_BODY);
        call_reply_error(call, SK_ERR_TOO_LARGE, msg);
        return STEP_DONE;
    }
    if (call->q.watch && parse_bool(call->q.watch) < 0) {
        call_reply_error(call, SK_ERR_BAD_REQUEST, "invalid value for watch: want a boolean");
        return STEP_DONE;
    }
    return route(call);
}

/* Resolves the request's route; the call keeps copies of what it names. */
static void resolve(sk_api_call *call, const sk_http_req *req)
{
    int watch = call->q.watch ? parse_bool(call->q.watch) == 1 : 0;
    sk_route_resolve(req->method, req->segs, req->n_segs, watch, &call->route);
    sk_route *rt = &call->route;
    call->res = rt->res;
    call->all_namespaces = rt->all_namespaces;
    call->ns = dup_opt(rt->ns ? rt->ns : "");
    call->name = dup_opt(rt->name);
    call->route_group = dup_opt(rt->group);
    call->route_version = dup_opt(rt->version);
    if (rt->kind == SK_ROUTE_RESOURCE)
        call->verb = (int)rt->verb;
    /* The segments are the HTTP layer's, valid during the start only. */
    rt->ns = rt->name = rt->group = rt->version = NULL;
}

sk_api_call *sk_api_call_start(sk_api *api, const sk_http_req *req, sk_api_wake_fn wake,
                               void *wake_arg)
{
    sk_api_call *call = calloc(1, sizeof *call);
    SK_CHECK_ALLOC(call);
    call->api = api;
    call->method = dup_opt(req->method);
    call->verb = -1;
    if (req->reject != SK_OK) {
        call->reject = req->reject;
        call->reject_msg = dup_opt(req->reject_msg ? req->reject_msg : "bad request");
    } else {
        /* A parameter without a value counts as absent, except ?verbose,
         * whose presence is the whole message. */
#define Q(field, key) call->q.field = dup_nonempty(req->query(req->ctx, key))
        Q(limit, "limit");
        Q(cont, "continue");
        Q(rv, "resourceVersion");
        Q(rvm, "resourceVersionMatch");
        Q(label_selector, "labelSelector");
        Q(field_selector, "fieldSelector");
        Q(watch, "watch");
        Q(dry_run, "dryRun");
        Q(include_object, "includeObject");
        Q(timeout_seconds, "timeoutSeconds");
        call->q.verbose = dup_opt(req->query(req->ctx, "verbose"));
        Q(allow_bookmarks, "allowWatchBookmarks");
        Q(send_initial_events, "sendInitialEvents");
        Q(propagation_policy, "propagationPolicy");
        Q(field_validation, "fieldValidation");
#undef Q
        call->accept = dup_opt(req->header(req->ctx, "Accept"));
        call->content_type = dup_opt(req->header(req->ctx, "Content-Type"));
        resolve(call, req);
    }
    call->body = req->body;
    call->body_len = req->body_len;
    call->body_too_large = req->body_too_large;
    call->client_gone = req->client_gone;
    call->client_ctx = req->ctx;
    call->wake = wake;
    call->wake_arg = wake_arg;
    call->start_us = sk_now_us();
    call->want_table = call->accept && strstr(call->accept, "as=Table") != NULL;
    call->next = start;
    return call;
}

int sk_api_call_step(sk_api_call *call)
{
    for (;;) {
        SK_CHECK(call->next != NULL);
        call_fn fn = call->next;
        call->next = NULL;
        int rc = fn(call);
        if (rc == STEP_AGAIN)
            continue;
        if (rc == STEP_DONE)
            SK_CHECK(call->status != 0);
        return rc == STEP_DONE;
    }
}

void sk_api_call_response(sk_api_call *call, sk_api_response *out)
{
    out->status = call->status;
    out->content_type = call->content_type_out;
    int streaming = call->stream != NULL || call->watch != NULL;
    out->streaming = streaming;
    out->body = streaming ? NULL : (call->out.data ? call->out.data : "");
    out->body_len = streaming ? 0 : call->out.len;
    out->stall_timeout_s = call->watch ? call->api->watch_stall_timeout_s : 0;
    out->warnings = (const char *const *)call->warnings;
    out->n_warnings = call->n_warnings;
}

ssize_t sk_api_call_read(sk_api_call *call, char *buf, size_t max)
{
    if (call->watch)
        return watch_stream_read(call->watch, buf, max);
    return list_stream_read(call->stream, buf, max);
}

void sk_api_call_stalled(sk_api_call *call)
{
    if (call && call->watch)
        sk_watch_hub_count(call->api->hub, 0, 0, 1);
}

void sk_api_call_free(sk_api_call *call)
{
    if (!call)
        return;
    if (call->verb >= 0 && call->status)
        sk_metrics_request(call->api->metrics, (sk_req_verb)call->verb, call->status,
                           sk_now_us() - call->start_us);
    char **params = (char **)&call->q;
    for (size_t i = 0; i < sizeof call->q / sizeof(char *); i++)
        free(params[i]);
    for (size_t i = 0; i < call->n_warnings; i++)
        free(call->warnings[i]);
    free(call->warnings);
    free(call->method);
    free(call->reject_msg);
    free(call->route_group);
    free(call->route_version);
    free(call->accept);
    free(call->content_type);
    free(call->ns);
    free(call->name);
    sk_buf_free(&call->out);
    list_stream_free(call->stream);
    watch_stream_free(call->watch);
    sk_row_clear(&call->write_row);
    sk_row_clear(&call->current);
    json_decref(call->work);
    json_decref(call->patch_doc);
    for (int i = 0; i < call->del_count; i++)
        free(call->del_names[i]);
    free(call->del_names);
    free(call->del_revs);
    json_decref(call->del_items);
    free(call);
}
