/*
 * webhooks.c - see webhooks.h.
 *
 * The configurations are read at every write from the cache's latest
 * revision, in key order (by name, as kube orders them); with none stored
 * a write costs two empty scans. A request's namespace labels are read
 * only when a webhook's namespaceSelector needs them.
 */
#include "api/webhooks.h"
#include "core/log.h"
#include "hook/admission.h"

#include <string.h>

static int is_config(const sk_resource *r)
{
    return r && strcmp(r->group, "admissionregistration.k8s.io") == 0 &&
           (strcmp(r->resource, "validatingwebhookconfigurations") == 0 ||
            strcmp(r->resource, "mutatingwebhookconfigurations") == 0);
}

void sk_webhooks_written(sk_api_call *call, int64_t rev)
{
    if (!is_config(call->res))
        return;
    int64_t was = atomic_load(&call->api->webhooks_rev);
    while (was < rev && !atomic_compare_exchange_weak(&call->api->webhooks_rev, &was, rev))
        ;
}

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

static json_t *user_info(const sk_user *u)
{
    json_t *ui = json_pack("{s:s}", "username", u->name);
    if (u->uid && *u->uid)
        json_object_set_new(ui, "uid", json_string(u->uid));
    if (u->n_groups) {
        json_t *groups = json_array();
        for (size_t i = 0; i < u->n_groups; i++)
            json_array_append_new(groups, json_string(u->groups[i]));
        json_object_set_new(ui, "groups", groups);
    }
    if (u->n_extra) {
        json_t *extra = json_object();
        for (size_t i = 0; i < u->n_extra; i++) {
            json_t *values = json_object_get(extra, u->extra_keys[i]);
            if (!values) {
                values = json_array();
                json_object_set_new(extra, u->extra_keys[i], values);
            }
            json_array_append_new(values, json_string(u->extra_values[i]));
        }
        json_object_set_new(ui, "extra", extra);
    }
    return ui;
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
    rq->user = user_info(call->user);
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

int sk_webhooks_mutate(sk_api_call *call, json_t **obj, const json_t *old, int dry_run)
{
    request rq;
    request_init(call, &rq, old ? "UPDATE" : "CREATE", *obj, old, write_options(call, dry_run),
                 dry_run);
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
