/*
 * webhooks.c - see webhooks.h.
 *
 * The configurations are read at every write from the cache's latest
 * revision, in key order (by name, as kube orders them); with none stored
 * a write costs two empty scans. A request's namespace labels are read
 * only when a webhook's namespaceSelector needs them.
 */
#include "api/webhooks.h"
#include "api/authn.h"
#include "core/log.h"
#include "hook/admission.h"

#include <stdio.h>
#include <string.h>

int sk_webhooks_wait(sk_api_call *call, sk_call_fn again)
{
    int64_t want = atomic_load(&call->api->webhooks_rev);
    if (want == 0 || sk_reader_cache_rev(call->api->reader) >= want)
        return SK_PLAN_NOW;
    int64_t rev;
    return sk_call_plan_read(call, want, again, &rev);
}

static int add_config(void *arg, sk_blob *item)
{
    json_t *obj = sk_reader_object(item);
    if (obj)
        json_array_append_new(arg, obj);
    return 0;
}

/* The stored configurations of resource (a storage key), as an array (new). */
static json_t *configs_of(sk_api_call *call, const char *resource)
{
    json_t *list = json_array();
    sk_reader *rd = call->api->reader;
    int64_t rev = sk_reader_cache_rev(rd);
    if (rev > 0 && sk_reader_scan(rd, resource, "", rev, add_config, list) != SK_OK)
        sk_log_warn("webhooks: cannot read %s: webhooks are not called", resource);
    return list;
}

/* Create-, Update- or PatchOptions as the request gave them (query only). */
static json_t *write_options(sk_api_call *call, int dry_run)
{
    const char *kind = strcmp(call->method, "POST") == 0    ? "CreateOptions"
                       : strcmp(call->method, "PATCH") == 0 ? "PatchOptions"
                                                            : "UpdateOptions";
    json_t *o = json_pack("{s:s, s:s}", "kind", kind, "apiVersion", "meta.k8s.io/v1");
    if (dry_run)
        json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
    const char *fm = sk_call_query(call, "fieldManager");
    if (fm && *fm)
        json_object_set_new(o, "fieldManager", json_string(fm));
    const char *fv = sk_call_query(call, "fieldValidation");
    if (fv && *fv)
        json_object_set_new(o, "fieldValidation", json_string(fv));
    return o;
}

/* kube's words for a Service that does not resolve: "PREFIX\"NAME\"". */
static char *say(const char *prefix, const char *name)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_puts(&m, prefix);
    sk_buf_go_quoted(&m, name);
    return sk_buf_steal(&m, NULL);
}

typedef struct slices {
    const char *service;
    json_t *list;
} slices;

static int add_slice(void *arg, sk_blob *item)
{
    slices *s = arg;
    json_t *obj = sk_reader_object(item);
    const char *owner = json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "labels"), "kubernetes.io/service-name"));
    if (owner && strcmp(owner, s->service) == 0)
        json_array_append(s->list, obj);
    json_decref(obj);
    return 0;
}

/* The first ready endpoint address (and the slice's number for the
 * service port's name) of the EndpointSlices in list; NULL if none. */
static char *ready_endpoint(const json_t *list, const char *port_name)
{
    size_t i, j, k;
    json_t *slice, *port, *ep;
    json_array_foreach(list, i, slice)
    {
        json_int_t number = 0;
        json_array_foreach(json_object_get(slice, "ports"), j, port)
        {
            const char *name = json_string_value(json_object_get(port, "name"));
            if (strcmp(name ? name : "", port_name) == 0)
                number = json_integer_value(json_object_get(port, "port"));
        }
        if (number <= 0)
            continue;
        json_array_foreach(json_object_get(slice, "endpoints"), k, ep)
        {
            const json_t *ready = json_object_get(json_object_get(ep, "conditions"), "ready");
            const char *addr = json_string_value(json_array_get(json_object_get(ep, "addresses"), 0));
            if (!addr || json_is_false(ready))
                continue;
            sk_buf b = SK_BUF_INIT;
            sk_buf_printf(&b, "%s:%" JSON_INTEGER_FORMAT, addr, number);
            return sk_buf_steal(&b, NULL);
        }
    }
    return NULL;
}

/* sk_hook_review.resolve: kube's endpoint routing over the stored Service
 * and its EndpointSlices (no kube-proxy here to reach a cluster IP). */
static int resolve_service(void *arg, const char *ns, const char *name, int port, char **addr,
                           char **why)
{
    sk_api_call *call = arg;
    sk_reader *rd = call->api->reader;
    sk_blob *blob = NULL;
    if (sk_reader_get(rd, "services", ns, name, 0, &blob) != SK_OK) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_puts(&m, "service ");
        sk_buf_go_quoted(&m, name);
        sk_buf_puts(&m, " not found");
        *why = sk_buf_steal(&m, NULL);
        return -1;
    }
    json_t *svc = sk_reader_object(blob);
    sk_blob_unref(blob);
    const json_t *sp = NULL, *p;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(svc, "spec"), "ports"), i, p)
        if (json_integer_value(json_object_get(p, "port")) == port)
            sp = p;
    int rc = -1;
    if (!sp) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "no service port %d found for service ", port);
        *why = say(prefix, name);
        goto out;
    }
    const char *port_name = json_string_value(json_object_get(sp, "name"));
    slices s = {name, json_array()};
    int64_t rev = sk_reader_cache_rev(rd);
    if (rev > 0)
        sk_reader_scan(rd, "endpointslices.discovery.k8s.io", ns, rev, add_slice, &s);
    *addr = ready_endpoint(s.list, port_name ? port_name : "");
    json_decref(s.list);
    if (!*addr) {
        *why = say("no endpoints available for service ", name);
        goto out;
    }
    rc = 0;
out:
    json_decref(svc);
    return rc;
}

typedef struct request {
    sk_hook_review rv;
    json_t *mutating, *validating, *user, *options, *ns;
} request;

static void request_init(sk_api_call *call, request *rq, const char *op, const json_t *obj,
                         const json_t *old, json_t *options, int dry_run)
{
    memset(rq, 0, sizeof *rq);
    const sk_resource *r = call->res;
    rq->mutating = configs_of(call, "mutatingwebhookconfigurations.admissionregistration.k8s.io");
    rq->validating =
        configs_of(call, "validatingwebhookconfigurations.admissionregistration.k8s.io");
    rq->options = options;
    rq->user = sk_authn_user_info(call->user);
    sk_hook_review *rv = &rq->rv;
    rv->a.operation = op;
    rv->a.group = r->group;
    rv->a.version = r->version;
    rv->a.resource = r->resource;
    rv->a.subresource = call->route.sub ? call->route.sub->name : "";
    /* a Namespace's own requests carry its name as their namespace */
    const char *name = json_string_value(json_object_get(json_object_get(obj ? obj : old,
                                                                         "metadata"),
                                                         "name"));
    rv->name = name ? name : call->name ? call->name : "";
    rv->a.ns = !*r->group && strcmp(r->resource, "namespaces") == 0 ? rv->name : call->ns;
    rv->a.object = obj;
    rv->a.old_object = old;
    rv->kind_group = r->group;
    rv->kind_version = r->version;
    rv->kind = r->kind;
    rv->user_info = rq->user;
    rv->options = options;
    rv->dry_run = dry_run;
    rv->resolve = resolve_service;
    rv->resolve_arg = call;
    if (*rv->a.ns && (json_array_size(rq->mutating) || json_array_size(rq->validating))) {
        sk_blob *ns = NULL;
        if (sk_reader_get(call->api->reader, "namespaces", "", rv->a.ns, 0, &ns) == SK_OK) {
            rq->ns = sk_reader_object(ns);
            sk_blob_unref(ns);
            rv->ns_labels = json_object_get(json_object_get(rq->ns, "metadata"), "labels");
        } else {
            rv->ns_missing = 1;
        }
    }
}

static void request_free(request *rq)
{
    json_decref(rq->mutating);
    json_decref(rq->validating);
    json_decref(rq->user);
    json_decref(rq->options);
    json_decref(rq->ns);
}

/* Passes warnings on; replies with status (stolen) if any. -1 if it replied. */
static int conclude(sk_api_call *call, json_t *warnings, json_t *status)
{
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w)
        sk_call_add_warning(call, json_string_value(w));
    json_decref(warnings);
    if (!status)
        return 0;
    sk_call_reply_status_object(call, status);
    return -1;
}

typedef struct settling {
    sk_api_call *call;
    const json_t *old;
    sk_webhooks_settle_fn fn;
} settling;

static void settle_patched(void *arg, json_t *obj)
{
    settling *s = arg;
    s->fn(s->call, obj, s->old);
}

int sk_webhooks_mutate(sk_api_call *call, json_t **obj, const json_t *old, int dry_run,
                       sk_webhooks_settle_fn settle)
{
    request rq;
    request_init(call, &rq, old ? "UPDATE" : "CREATE", *obj, old, write_options(call, dry_run),
                 dry_run);
    settling s = {call, old, settle};
    rq.rv.settle = settle ? settle_patched : NULL;
    rq.rv.settle_arg = &s;
    int rc = 0;
    if (json_array_size(rq.mutating)) {
        json_t *before = json_deep_copy(*obj);
        json_t *warnings = json_array();
        json_t *status = sk_hook_mutate(call->api->hooks, rq.mutating, &rq.rv, obj, warnings);
        rc = conclude(call, warnings, status) < 0 ? -1 : !json_equal(before, *obj);
        json_decref(before);
    }
    request_free(&rq);
    return rc;
}

int sk_webhooks_validate(sk_api_call *call, const json_t *obj, const json_t *old, int dry_run)
{
    request rq;
    request_init(call, &rq, old ? "UPDATE" : "CREATE", obj, old, write_options(call, dry_run),
                 dry_run);
    int rc = 0;
    if (json_array_size(rq.validating)) {
        json_t *warnings = json_array();
        rc = conclude(call, warnings,
                      sk_hook_validate(call->api->hooks, rq.validating, &rq.rv, warnings));
    }
    request_free(&rq);
    return rc;
}

static json_t *delete_options(const sk_delete_options *d)
{
    static const char *const policies[] = {NULL, "Orphan", "Background", "Foreground"};
    json_t *o = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "meta.k8s.io/v1");
    if (d->has_grace)
        json_object_set_new(o, "gracePeriodSeconds", json_integer(d->grace_s));
    if (d->propagation != SK_PROPAGATION_UNSET)
        json_object_set_new(o, "propagationPolicy", json_string(policies[d->propagation]));
    if (d->dry_run)
        json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
    return o;
}

int sk_webhooks_delete(sk_api_call *call, const json_t *stored, const sk_delete_options *d)
{
    request rq;
    request_init(call, &rq, "DELETE", NULL, stored, delete_options(d), d->dry_run);
    int rc = 0;
    if (json_array_size(rq.mutating) || json_array_size(rq.validating)) {
        json_t *warnings = json_array();
        json_t *none = NULL;
        json_t *status = sk_hook_mutate(call->api->hooks, rq.mutating, &rq.rv, &none, warnings);
        if (!status)
            status = sk_hook_validate(call->api->hooks, rq.validating, &rq.rv, warnings);
        rc = conclude(call, warnings, status);
    }
    request_free(&rq);
    return rc;
}
