/*
 * call.c - see call.h: the helpers every verb shares. Messages are built in
 * growable buffers (a fixed buffer could cut a multi-byte character and
 * make the reply unencodable), and every Status goes through kube/status,
 * which repairs what is not UTF-8.
 *
 * Content negotiation lives here too (sk_call_negotiate): verbs render JSON,
 * and one step at the end re-encodes a reply for clients that prefer
 * protobuf; lists and watches, whose cost is per item, write protobuf
 * themselves from encodings kept with the cached objects (api/pbwire.h).
 */
#include "api/call.h"
#include "core/check.h"
#include "core/jsontext.h"
#include "core/log.h"
#include "core/util.h"
#include "ctl/crd.h"
#include "kube/protobuf.h"
#include "kube/status.h"
#include "kube/webhook.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RV_WAIT_MS 3000
#define CRD_SETTLE_WAIT_MS 10000
#define MAX_UNREADABLE_WARNINGS 10 /* Warning headers about skipped objects, at most */

/* What a reply that cannot be encoded becomes: never an abort. */
static const char unencodable_reply[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
    "\"message\":\"the response could not be encoded\",\"reason\":\"InternalError\","
    "\"code\":500}";

int sk_call_refuse_partial(sk_api_call *call, int answers_list)
{
    if (call->out_as.as != (answers_list ? SK_AS_PARTIAL : SK_AS_PARTIAL_LIST))
        return 0;
    const sk_schema *s = answers_list ? call->res->list_schema : call->res->schema;
    const char *go = s             ? sk_schema_go_type(s)
                     : answers_list ? "unstructured.UnstructuredList"
                                    : "unstructured.Unstructured";
    if (answers_list)
        sk_call_reply_errorf(call, SK_ERR_NOT_ACCEPTABLE,
                             "you requested PartialObjectMetadata, but the requested object is a "
                             "list (*%s)",
                             go);
    else
        sk_call_reply_errorf(call, SK_ERR_NOT_ACCEPTABLE,
                             "you requested PartialObjectMetadataList, but the requested object is "
                             "not a list (*%s)",
                             go);
    return 1;
}

void sk_call_reply_raw(sk_api_call *call, int status, const char *json, size_t len)
{
    call->status = status;
    call->retry_after_s = 0;
    call->content_type_out = "application/json";
    sk_buf_reset(&call->out);
    sk_buf_append(&call->out, json, len);
    if (len == 0 || json[len - 1] != '\n')
        sk_buf_putc(&call->out, '\n');
}

void sk_call_reply_json(sk_api_call *call, int status, const json_t *obj)
{
    char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    if (!text) {
        sk_log_error("cannot encode a reply (status %d): invalid UTF-8 or out of memory", status);
        sk_call_reply_raw(call, 500, unencodable_reply, sizeof unencodable_reply - 1);
        return;
    }
    sk_call_reply_raw(call, status, text, strlen(text));
    free(text);
}

const char **sk_call_strings(sk_api_call *call, const json_t *array, size_t *n_out)
{
    size_t n = json_array_size(array);
    const char **out = sk_arena_alloc(call->arena, (n ? n : 1) * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(array, i));
        out[i] = s ? s : "";
    }
    *n_out = n;
    return out;
}

void sk_call_reply_review(sk_api_call *call, json_t *obj, const char *kind,
                          const char *api_version, json_t *status)
{
    json_object_set_new(obj, "kind", json_string(kind));
    json_object_set_new(obj, "apiVersion", json_string(api_version));
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    if (!json_object_get(meta, "creationTimestamp"))
        json_object_set_new(meta, "creationTimestamp", json_null());
    json_object_set_new(obj, "status", status);
    sk_call_reply_json(call, 201, obj);
}

void sk_call_reply_status_object(sk_api_call *call, json_t *status)
{
    json_int_t code = json_integer_value(json_object_get(status, "code"));
    sk_call_reply_json(call, code > 0 ? (int)code : 500, status);
    /* kube-apiserver's ErrorNegotiated: the delay the Status names, as a
     * header too, which is what clients read */
    json_int_t retry = json_integer_value(
        json_object_get(json_object_get(status, "details"), "retryAfterSeconds"));
    if (retry > 0 && retry <= INT_MAX)
        call->retry_after_s = (int)retry;
    json_decref(status);
}

void sk_call_reply_status(sk_api_call *call, sk_err e, const char *message, const char *group,
                          const char *kind, const char *name, json_t *causes)
{
    sk_call_reply_status_object(call, sk_status_new(e, message, group, kind, name, causes));
}

void sk_call_reply_invalid(sk_api_call *call, const char *group, const char *kind,
                           const char *name, const char *field, const char *value,
                           const char *detail)
{
    sk_buf body = SK_BUF_INIT, msg = SK_BUF_INIT;
    sk_buf_printf(&body, "Invalid value: %s: %s", value, detail);
    sk_buf_printf(&msg, "%s%s%s \"%s\" is invalid: %s: %s", kind, *group ? "." : "", group, name,
                  field, body.data);
    json_t *causes = json_array();
    sk_status_add_cause(causes, "FieldValueInvalid", body.data, field);
    sk_call_reply_status(call, SK_ERR_INVALID, msg.data, group, kind, name, causes);
    sk_buf_free(&body);
    sk_buf_free(&msg);
}

void sk_call_reply_error(sk_api_call *call, sk_err e, const char *message)
{
    sk_call_reply_status(call, e, message, NULL, NULL, NULL, NULL);
}

void sk_call_reply_errorf(sk_api_call *call, sk_err e, const char *fmt, ...)
{
    sk_buf msg = SK_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    sk_buf_vprintf(&msg, fmt, ap);
    va_end(ap);
    sk_call_reply_error(call, e, msg.data);
    sk_buf_free(&msg);
}

const char *sk_call_qualified_resource(const sk_resource *r, char *buf, size_t n)
{
    if (!*r->group)
        return r->resource;
    snprintf(buf, n, "%s.%s", r->resource, r->group);
    return buf;
}

static void reply_not_found(sk_api_call *call, const sk_resource *r, const char *name)
{
    char q[SK_QUALIFIED_RESOURCE_MAX];
    sk_buf msg = SK_BUF_INIT;
    sk_buf_printf(&msg, "%s \"%s\" not found", sk_call_qualified_resource(r, q, sizeof q), name);
    sk_call_reply_status(call, SK_ERR_NOT_FOUND, msg.data, r->group, r->resource, name, NULL);
    sk_buf_free(&msg);
}

/* NamespaceLifecycle's 403, with kube's message and cause. */
static void reply_namespace_terminating(sk_api_call *call, const char *name)
{
    char q[SK_QUALIFIED_RESOURCE_MAX];
    sk_buf msg = SK_BUF_INIT, cause = SK_BUF_INIT;
    sk_buf_printf(&msg, "%s ", sk_call_qualified_resource(call->res, q, sizeof q));
    sk_buf_go_quoted(&msg, name);
    sk_buf_printf(&msg,
                  " is forbidden: unable to create new content in namespace %s because it is "
                  "being terminated",
                  call->ns);
    sk_buf_printf(&cause, "namespace %s is being terminated", call->ns);
    json_t *causes = json_array();
    sk_status_add_cause(causes, "NamespaceTerminating", cause.data, "metadata.namespace");
    sk_call_reply_status(call, SK_ERR_FORBIDDEN, msg.data, call->res->group, call->res->resource,
                         name, causes);
    sk_buf_free(&msg);
    sk_buf_free(&cause);
}

void sk_call_reply_store_error(sk_api_call *call, sk_err e, const char *name)
{
    char q[SK_QUALIFIED_RESOURCE_MAX];
    sk_buf msg = SK_BUF_INIT;
    switch (e) {
    case SK_ERR_FORBIDDEN:
        reply_namespace_terminating(call, name);
        break;
    case SK_ERR_NOT_FOUND:
        reply_not_found(call, call->res, name);
        break;
    case SK_ERR_ALREADY_EXISTS:
    case SK_ERR_CONFLICT:
        if (e == SK_ERR_CONFLICT)
            sk_buf_puts(&msg, "Operation cannot be fulfilled on ");
        sk_buf_printf(&msg, "%s \"%s\"", sk_call_qualified_resource(call->res, q, sizeof q),
                      name);
        sk_buf_puts(&msg, e == SK_ERR_CONFLICT
                              ? ": the object has been modified; please apply your changes to "
                                "the latest version and try again"
                              : " already exists");
        sk_call_reply_status(call, e, msg.data, call->res->group, call->res->resource, name,
                             NULL);
        break;
    case SK_ERR_EXPIRED:
        sk_call_reply_error(call, e, "The resourceVersion for the provided request is too old.");
        break;
    case SK_ERR_TOO_LARGE:
        sk_buf_printf(&msg, "Request entity too large: limit is %zu", call->api->max_object_bytes);
        sk_call_reply_error(call, e, msg.data);
        break;
    case SK_ERR_UNAVAILABLE:
        sk_call_reply_error(call, e, "the storage backend is unavailable");
        break;
    case SK_ERR_NO_SPACE:
        sk_call_reply_error(call, e,
                            "storage is full: the database or its disk has no space left "
                            "(etcd: mvcc: database space exceeded); writes resume once space is "
                            "freed");
        break;
    default:
        sk_buf_printf(&msg, "storage error: %s", sk_err_name(e));
        sk_call_reply_error(call, e == SK_OK ? SK_ERR_INTERNAL : e, msg.data);
        break;
    }
    sk_buf_free(&msg);
}

/* 504 ResourceVersionTooLarge. */
static void reply_too_large_rv(sk_api_call *call, int64_t rev, int64_t current)
{
    char msg[96];
    snprintf(msg, sizeof msg, "Too large resource version: %lld, current: %lld", (long long)rev,
             (long long)current);
    json_t *causes = json_array();
    sk_status_add_cause(causes, "ResourceVersionTooLarge", "Too large resource version", NULL);
    json_t *st = sk_status_new(SK_ERR_TIMEOUT, msg, NULL, NULL, NULL, causes);
    json_object_set_new(json_object_get(st, "details"), "retryAfterSeconds", json_integer(1));
    sk_call_reply_status_object(call, st);
}

void sk_call_add_warning(sk_api_call *call, const char *text)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_puts(&b, "299 - ");
    sk_buf_json_string(&b, text);
    const char **grown = sk_arena_alloc(call->arena, (call->n_warnings + 1) * sizeof *grown);
    if (call->n_warnings)
        memcpy(grown, call->warnings, call->n_warnings * sizeof *grown);
    grown[call->n_warnings++] = sk_arena_strdup(call->arena, b.data);
    call->warnings = grown;
    sk_buf_free(&b);
}

json_t *sk_call_parse_stored(const sk_resource *r, const char *value, size_t len,
                             const char *name)
{
    json_error_t jerr = {0}; /* left alone when the text parses to a non-object */
    /* core/jsontext's parser, not json_loadb: a version's first protobuf
     * encoding parses it (api/pbwire.c), and jansson's byte-stream lexer
     * was three quarters of a cold protobuf list page. */
    json_t *obj = sk_jsontext_load(value, len, &jerr);
    if (obj && json_is_object(obj))
        return obj;
    json_decref(obj);
    sk_log_warn("stored %s \"%s\" cannot be decoded (%s): skipped", r->resource, name, jerr.text);
    return NULL;
}

json_t *sk_call_parse_stored_warn(sk_api_call *call, const char *value, size_t len,
                                  const char *name)
{
    json_t *obj = sk_call_parse_stored(call->res, value, len, name);
    if (!obj && call->n_warnings < MAX_UNREADABLE_WARNINGS) {
        sk_buf w = SK_BUF_INIT;
        sk_buf_printf(&w, "the stored object %s \"%s\" cannot be decoded and was skipped",
                      call->res->resource, name);
        sk_call_add_warning(call, w.data);
        sk_buf_free(&w);
    }
    return obj;
}

static void release_json(void *v)
{
    json_decref(v);
}

json_t *sk_call_keep(sk_api_call *call, json_t *v)
{
    if (v)
        sk_arena_defer(call->arena, release_json, v);
    return v;
}

/* A webhook configuration written at rev: the writes this server takes
 * next wait until its cache holds it (api/webhooks.h). */
static void webhooks_written(sk_api *api, int64_t rev)
{
    int64_t was = atomic_load(&api->webhooks_rev);
    while (was < rev && !atomic_compare_exchange_weak(&api->webhooks_rev, &was, rev))
        ;
}

static void write_done(void *arg, sk_err err, const sk_row *result)
{
    sk_api_call *call = arg;
    call->write_err = err;
    if (err == SK_OK) {
        sk_row_copy(&call->write_row, result);
        if (call->res && sk_webhook_is_configuration(call->res->group, call->res->resource))
            webhooks_written(call->api, result->rev);
    }
    call->wake(call->wake_arg);
}

/* A CRD write is answered once the CRD controller has settled the CRD at
 * the write's revision (ctl/crd.h): its resources and discovery in place,
 * or, after a delete, refusing creates, before the client's next request,
 * which is how `kubectl apply -f crd.yaml && kubectl apply -f cr.yaml`
 * runs. The call is parked, no thread waits; the controller notifies the
 * hub after each pass. Bounded, should the cache be slow to hold it. */
static int await_crd_settled(sk_api_call *call)
{
    sk_api *api = call->api;
    uint64_t seen = sk_watch_hub_seq(api->hub);
    int64_t now = sk_now_ms();
    if (call->settle_deadline_ms == 0)
        call->settle_deadline_ms = now + CRD_SETTLE_WAIT_MS;
    call->next = call->after_write;
    if (call->write_err != SK_OK || now >= call->settle_deadline_ms ||
        sk_crd_settled(api->crd, call->write_row.name, call->write_row.rev))
        return SK_STEP_AGAIN;
    call->next = await_crd_settled;
    uint64_t ticket = sk_watch_hub_park(api->hub, seen, call->wake, call->wake_arg);
    if (ticket == SK_HUB_MOVED)
        return SK_STEP_AGAIN;
    if (ticket != SK_HUB_STOPPED)
        return SK_STEP_WAIT;
    call->next = call->after_write;
    return SK_STEP_AGAIN;
}

int sk_call_submit_write(sk_api_call *call, sk_write *w, sk_call_fn then)
{
    sk_row_clear(&call->write_row);
    call->write_err = SK_OK;
    call->next = then;
    if (call->api->crd && strcmp(w->resource, SK_REGISTRY_CRD_STORAGE) == 0) {
        call->after_write = then;
        call->settle_deadline_ms = 0;
        call->next = await_crd_settled;
    }
    sk_store_write_async(call->api->store, w, write_done, call);
    return SK_STEP_WAIT;
}

int sk_call_plan_read(sk_api_call *call, int64_t min_rev, sk_call_fn again, int64_t *rev_out)
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
        return SK_PLAN_NOW;
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
            return SK_PLAN_NOW;
        }
        reply_too_large_rv(call, min_rev, cur);
        return SK_STEP_DONE;
    }
    call->next = again;
    uint64_t ticket = sk_watch_hub_park(api->hub, seen, call->wake, call->wake_arg);
    if (ticket == SK_HUB_MOVED)
        return SK_STEP_AGAIN;
    if (ticket != SK_HUB_STOPPED)
        return SK_STEP_WAIT;
    call->next = NULL;
    err = SK_ERR_UNAVAILABLE;
fail:
    sk_call_reply_store_error(call, err, call->name ? call->name : "");
    return SK_STEP_DONE;
}

/* ---- content negotiation --------------------------------------------------- */

/* kube's isPrettyPrint: ?pretty=<bool> when given, else a User-Agent of a
 * browser or a command-line HTTP tool (curl, Wget). */
static int wants_pretty(sk_api_call *call)
{
    const char *pretty = sk_call_query(call, "pretty");
    const char *ua = call->user_agent ? call->user_agent : "";
    if (pretty && *pretty)
        return sk_parse_bool(pretty) == 1;
    return strncmp(ua, "curl", 4) == 0 || strncmp(ua, "Wget", 4) == 0 ||
           strncmp(ua, "Mozilla/5.0", 11) == 0;
}

/* A JSON reply indented as Go's json.MarshalIndent(v, "", "  ") writes it,
 * for people reading it. Streamed bodies (lists, watches) stay compact. */
static void prettify(sk_api_call *call)
{
    json_error_t jerr;
    json_t *obj = json_loadb(call->out.data ? call->out.data : "", call->out.len, 0, &jerr);
    char *text = obj ? json_dumps(obj, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (text) {
        sk_buf_reset(&call->out);
        sk_buf_puts(&call->out, text);
        sk_buf_putc(&call->out, '\n');
    }
    free(text);
    json_decref(obj);
}

static void negotiate_protobuf(sk_api_call *call);

void sk_call_negotiate(sk_api_call *call)
{
    negotiate_protobuf(call);
    if (!call->stream.read && call->content_type_out &&
        strncmp(call->content_type_out, "application/json", 16) == 0 && wants_pretty(call))
        prettify(call);
}

static void negotiate_protobuf(sk_api_call *call)
{
    /* Negotiation (kube/accept.h) chose protobuf only for kinds that have
     * it and for metadata-only answers: a custom resource itself is JSON,
     * as kube-apiserver serves it. Lists
     * and watches write protobuf themselves (api/pbwire.h), from bytes
     * kept per object version. */
    if (call->route.kind != SK_ROUTE_RESOURCE || !call->out_as.protobuf || call->stream.read ||
        !call->content_type_out || strcmp(call->content_type_out, "application/json") != 0)
        return;
    json_error_t jerr = {0};
    json_t *obj = sk_jsontext_load(call->out.data ? call->out.data : "", call->out.len, &jerr);
    sk_buf pb = SK_BUF_INIT;
    char *why = NULL;
    sk_err err = obj ? sk_protobuf_from_json(obj, &pb, &why) : SK_ERR_INTERNAL;
    if (err == SK_OK) {
        sk_buf_free(&call->out);
        call->out = pb;
        call->content_type_out = SK_PROTOBUF_MEDIA;
    } else {
        /* JSON is what every client also accepts: better than a 500. */
        sk_log_warn("reply kept as JSON, no protobuf encoding: %s", why ? why : jerr.text);
        sk_buf_free(&pb);
    }
    free(why);
    json_decref(obj);
}
