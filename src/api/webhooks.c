/*
 * webhooks.c - see webhooks.h.
 *
 * The configurations are compiled into an immutable, refcounted set
 * (hook/admission.h) kept with the cache revision it is true at. A call
 * takes a reference to the current set once, at its first admission step:
 * when the cache has moved since, the events of the two configuration
 * resources after the set's revision are looked at in the cache's window
 * (the revisions since the last call, a few ring slots) and the set's
 * revision advanced when there are none; a change, a rebuilt cache or a
 * window that moved on compiles a new set from the cache, in key order (by
 * name, as kube orders them), which replaces the old one for the calls
 * after it (calls holding the old one finish with it). One mutex guards the
 * pointer and its revision; compiling happens under it too, so calls
 * arriving meanwhile wait for the new set rather than admit under one the
 * cache has already outdated. A write no webhook's rules cover costs that
 * look and a walk over the rules.
 *
 * A request's namespace labels are read only when a webhook's
 * namespaceSelector needs them, once per call.
 */
#include "api/webhooks.h"
#include "api/authn.h"
#include "api/authz.h"
#include "api/crconvert.h"
#include "api/svcroute.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "hook/admission.h"
#include "kube/scale.h"
#include "policy/vap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* in the order compile() reads them */
static const char *const resources[] = {
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "validatingadmissionpolicies.admissionregistration.k8s.io",
    "validatingadmissionpolicybindings.admissionregistration.k8s.io",
};
#define N_RESOURCES (sizeof resources / sizeof *resources)

struct sk_webhooks {
    sk_reader *reader;
    sk_cache *cache;
    sk_hook_client *client;
    pthread_mutex_t mu;
    sk_hook_set *set; /* NULL until first compiled */
    sk_vap_set *vaps; /* the admission policies, compiled with set */
    int64_t rev;      /* the cache revision both are true at */
    uint64_t gen;     /* the cache generation rev belongs to */
};

sk_webhooks *sk_webhooks_new(sk_reader *reader, sk_cache *cache, sk_hook_client *client)
{
    sk_webhooks *w = calloc(1, sizeof *w);
    SK_CHECK_ALLOC(w);
    w->reader = reader;
    w->cache = cache;
    w->client = client;
    pthread_mutex_init(&w->mu, NULL);
    return w;
}

void sk_webhooks_free(sk_webhooks *w)
{
    if (!w)
        return;
    sk_hook_set_unref(w->set);
    sk_vap_set_unref(w->vaps);
    pthread_mutex_destroy(&w->mu);
    free(w);
}

/* Past this many revisions, compiling anew beats looking at them. */
#define MAX_SCAN (1 << 16)

/* 1 if no configuration changed after w->rev up to st->rev, as the cache's
 * window tells; 0 if one did or the window cannot tell. */
static int unchanged(sk_webhooks *w, const sk_cache_state *st)
{
    if (st->generation != w->gen || st->rev - w->rev > MAX_SCAN)
        return 0;
    for (size_t i = 0; i < N_RESOURCES; i++) {
        int res = sk_cache_resource(w->cache, resources[i]);
        int64_t cursor = w->rev;
        while (cursor < st->rev) {
            sk_cache_event ev = {0};
            int64_t scanned = cursor;
            sk_err err = res < 0 ? SK_ERR_EXPIRED
                                 : sk_cache_next_event(w->cache, w->gen, res, cursor, &ev,
                                                       &scanned);
            int64_t at = ev.rev;
            sk_cache_event_clear(&ev);
            if (err == SK_OK && at <= st->rev)
                return 0;
            if (err == SK_OK)
                break;
            if (err != SK_ERR_NOT_FOUND || scanned <= cursor)
                return 0;
            cursor = scanned;
        }
    }
    return 1;
}

static int add_config(void *arg, sk_blob *item)
{
    json_t *obj = sk_reader_object(item);
    if (obj)
        json_array_append_new(arg, obj);
    return 0;
}

/* The webhooks and policies at st->rev, compiled from the cache into *set
 * and *vaps (new); -1 if they cannot be read. */
static int compile(sk_webhooks *w, const sk_cache_state *st, sk_hook_set **set, sk_vap_set **vaps)
{
    json_t *objs[N_RESOURCES];
    int rc = -1;
    for (size_t i = 0; i < N_RESOURCES; i++)
        objs[i] = json_array();
    for (size_t i = 0; i < N_RESOURCES; i++) {
        /* revision 0 is an empty store: nothing to read */
        if (st->rev > 0 &&
            sk_reader_scan(w->reader, resources[i], NULL, st->rev, add_config, objs[i]) != SK_OK) {
            sk_log_warn("webhooks: cannot read %s: webhooks and policies are not applied",
                        resources[i]);
            goto out;
        }
    }
    *set = sk_hook_set_new(w->client, objs[0], objs[1]);
    *vaps = sk_vap_set_new(objs[2], objs[3]);
    rc = 0;
out:
    for (size_t i = 0; i < N_RESOURCES; i++)
        json_decref(objs[i]);
    return rc;
}

/* What a call keeps between its admission steps. */
struct sk_webhooks_call {
    sk_hook_set *set; /* NULL: the configurations cannot be read */
    sk_vap_set *vaps; /* NULL with set */
    /* the resources sharing the call's resource's storage */
    const sk_resource *equivalents[SK_WEBHOOK_MAX_EQUIVALENTS];
    size_t n_equivalents;
};

static void release_set(void *set)
{
    sk_hook_set_unref(set);
}

static void release_vaps(void *vaps)
{
    sk_vap_set_unref(vaps);
}

/* The call's admission state, made at its first use: the set it is
 * admitted under, and, when the set has webhooks, its resource's
 * equivalents. */
static struct sk_webhooks_call *state_of(sk_api_call *call)
{
    if (call->webhooks_call)
        return call->webhooks_call;
    struct sk_webhooks_call *wc = sk_arena_alloc(call->arena, sizeof *wc);
    memset(wc, 0, sizeof *wc);
    call->webhooks_call = wc;
    sk_webhooks *w = call->api->webhooks;
    sk_cache_state st;
    pthread_mutex_lock(&w->mu);
    sk_cache_get_state(w->cache, &st);
    if (w->set && (st.rev == w->rev || unchanged(w, &st)) && st.generation == w->gen) {
        w->rev = st.rev;
    } else {
        sk_hook_set *fresh = NULL;
        sk_vap_set *vaps = NULL;
        if (compile(w, &st, &fresh, &vaps) == 0) {
            sk_hook_set_unref(w->set);
            sk_vap_set_unref(w->vaps);
            w->set = fresh;
            w->vaps = vaps;
            w->rev = st.rev;
            w->gen = st.generation;
        }
    }
    if (w->set) {
        wc->set = sk_hook_set_ref(w->set);
        sk_arena_defer(call->arena, release_set, wc->set);
        wc->vaps = sk_vap_set_ref(w->vaps);
        sk_arena_defer(call->arena, release_vaps, wc->vaps);
    }
    pthread_mutex_unlock(&w->mu);
    if (wc->set && (!sk_hook_set_empty(wc->set) || sk_vap_set_any(wc->vaps)))
        wc->n_equivalents = sk_webhook_equivalents(
            call->res, call->route.sub ? call->route.sub->name : "", wc->equivalents,
            SK_WEBHOOK_MAX_EQUIVALENTS);
    return wc;
}

int sk_webhooks_wait(sk_api_call *call, sk_call_fn again)
{
    int64_t want = atomic_load(&call->api->webhooks_rev);
    if (want == 0 || sk_reader_cache_rev(call->api->reader) >= want)
        return SK_PLAN_NOW;
    int64_t rev;
    return sk_call_plan_read(call, want, again, &rev);
}

/* The request as the matchers see it, before anything is read for it. */
static sk_webhook_attrs attrs_of(sk_api_call *call, const char *op, const char *name,
                                 const json_t *obj, const json_t *old)
{
    const sk_resource *r = call->res;
    const struct sk_webhooks_call *wc = call->webhooks_call;
    /* a Namespace's own requests carry its name as their namespace */
    sk_webhook_attrs a = {
        .operation = op,
        .group = r->group,
        .version = r->version,
        .resource = r->resource,
        .subresource = call->route.sub ? call->route.sub->name : "",
        .ns = !*r->group && strcmp(r->resource, "namespaces") == 0 ? name : call->ns,
        .object = obj,
        .old_object = old,
        .equivalents = wc->equivalents,
        .n_equivalents = wc->n_equivalents,
    };
    return a;
}

/* Create- or UpdateOptions as the request gave them (query only): a patch
 * is reviewed with the UpdateOptions (or, creating, CreateOptions) kube
 * makes of its PatchOptions, which carry no force. */
static json_t *write_options(sk_api_call *call, const json_t *old, int dry_run)
{
    json_t *o = json_pack("{s:s, s:s}", "kind", old ? "UpdateOptions" : "CreateOptions",
                          "apiVersion", "meta.k8s.io/v1");
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
    sk_api_call *call;
    json_t *user, *options;
    json_t *ns;   /* the namespace read, once asked */
    int ns_state; /* 0 not read yet, 1 read, -1 missing */
} request;

/* sk_hook_review.ns_labels: the Namespace read once per call. */
static int ns_labels(void *arg, const char *ns, const json_t **labels)
{
    request *rq = arg;
    if (rq->ns_state == 0) {
        sk_blob *blob = NULL;
        rq->ns_state = -1;
        if (sk_reader_get(rq->call->api->reader, "namespaces", "", ns, 0, &blob) == SK_OK) {
            rq->ns = sk_reader_object(blob);
            sk_blob_unref(blob);
            rq->ns_state = 1;
        }
    }
    *labels = json_object_get(json_object_get(rq->ns, "metadata"), "labels");
    return rq->ns_state > 0 ? 0 : -1;
}

/* sk_vap_request.ns_object: the Namespace read once per call. */
static int ns_object(void *arg, const char *ns, const json_t **obj)
{
    request *rq = arg;
    const json_t *labels;
    int rc = ns_labels(arg, ns, &labels);
    *obj = rq->ns;
    return rc;
}

typedef struct param_scan {
    sk_api *api;
    const sk_resource *r;
    const sk_label_selector *sel;
    json_t *out;
} param_scan;

/* obj (stored form) in the params' version, appended to ps->out. */
static void add_param(param_scan *ps, const json_t *stored)
{
    json_t *failed = NULL;
    json_t *obj = sk_crconvert_from_stored(ps->api, ps->r, stored, NULL, &failed);
    if (obj)
        json_array_append_new(ps->out, obj);
    json_decref(failed);
}

static int scan_param(void *arg, sk_blob *item)
{
    param_scan *ps = arg;
    json_t *obj = sk_reader_object(item);
    if (obj && sk_label_selector_matches(
                   ps->sel, json_object_get(json_object_get(obj, "metadata"), "labels")))
        add_param(ps, obj);
    json_decref(obj);
    return 0;
}

/* sk_vap_request.params: CollectParams over the cache, the kind resolved
 * through the registry (a custom resource's too). */
static int find_params(void *arg, const char *api_version, const char *kind, const char *ns,
                       const char *ns_default, const char *name, const sk_label_selector *sel,
                       json_t **out, char **why)
{
    sk_api *api = arg;
    const char *slash = strchr(api_version, '/');
    char group[256];
    snprintf(group, sizeof group, "%.*s", slash ? (int)(slash - api_version) : 0, api_version);
    const sk_resource *r = sk_registry_find_kind(group, slash ? slash + 1 : api_version, kind);
    sk_buf m = SK_BUF_INIT;
    if (!r) {
        sk_buf_printf(&m, "paramKind kind `&ParamKind{APIVersion:%s,Kind:%s,}` not known",
                      api_version, kind);
        *why = sk_buf_steal(&m, NULL);
        return -1;
    }
    if (!r->namespaced && *ns) {
        *why = strdup("paramRef.namespace must not be provided for a cluster-scoped `paramKind`");
        return -1;
    }
    if (r->namespaced && !*ns && !*ns_default) {
        *why = strdup("cannot use namespaced paramRef in policy binding that matches "
                      "cluster-scoped resources");
        return -1;
    }
    const char *in = !r->namespaced ? "" : *ns ? ns : ns_default;
    param_scan ps = {api, r, sel, json_array()};
    /* at the latest revision, not the cache's: a param just written counts
     * (kube's informer may lag; a client should not have to guess by how
     * much) */
    int64_t rev = 0;
    sk_err err = sk_store_revisions(api->store, &rev, NULL);
    if (err == SK_OK && name) {
        sk_blob *blob = NULL;
        err = sk_reader_get(api->reader, r->storage, in, name, rev, &blob);
        json_t *obj = err == SK_OK ? sk_reader_object(blob) : NULL;
        if (obj)
            add_param(&ps, obj);
        json_decref(obj);
        sk_blob_unref(blob);
        if (err == SK_ERR_NOT_FOUND)
            err = SK_OK;
    } else if (err == SK_OK && rev > 0) {
        err = sk_reader_scan(api->reader, r->storage, r->namespaced ? in : NULL, rev, scan_param,
                             &ps);
    }
    if (err != SK_OK) {
        json_decref(ps.out);
        sk_buf_printf(&m, "cannot read the params: %s", sk_err_name(err));
        *why = sk_buf_steal(&m, NULL);
        return -1;
    }
    *out = ps.out;
    return 0;
}

/* sk_vap_request.versioned: the request as a webhook would be sent it
 * through eq, with its objects converted to eq's version. */
static int versioned(void *arg, const sk_resource *eq, json_t **req_out, json_t **object,
                     json_t **old, char **why)
{
    request *rq = arg;
    json_t *status = NULL;
    json_t *req = sk_hook_request(&rq->rv, &rq->rv.a, eq, object, old, &status);
    if (!req) {
        const char *m = json_string_value(json_object_get(status, "message"));
        *why = strdup(m ? m : "the object cannot be converted");
        SK_CHECK_ALLOC(*why);
        json_decref(status);
        return -1;
    }
    *req_out = req;
    return 0;
}

/* The admission policies for rq: NULL, or the Status refusing it. */
static json_t *apply_policies(sk_api_call *call, const sk_vap_set *vaps, request *rq,
                              json_t *warnings, json_t *annotations)
{
    sk_policy_authz z = {.user = rq->rv.user,
                         .authorize = rq->rv.authorize,
                         .authorize_arg = rq->rv.authorize_arg,
                         .group = rq->rv.a.group,
                         .resource = rq->rv.a.resource,
                         .subresource = rq->rv.a.subresource,
                         .ns = rq->rv.a.ns,
                         .name = rq->rv.name};
    sk_vap_request vr = {
        .a = rq->rv.a,
        .name = rq->rv.name,
        .versioned = versioned,
        .versioned_arg = rq,
        .ns_object = ns_object,
        .ns_arg = rq,
        .params = find_params,
        .params_arg = call->api,
        .authz = &z,
    };
    return sk_vap_validate(vaps, &vr, warnings, annotations);
}

/* sk_hook_review.convert: between two versions of one storage, as the
 * API converts (a custom resource's through its CRD's webhook). */
static char *convert_equivalent(void *arg, const sk_resource *from, const sk_resource *to,
                                const json_t *obj, json_t **out)
{
    sk_api *api = arg;
    json_t *failed = NULL;
    json_t *stored = sk_crconvert_to_stored(api, from, obj, &failed);
    json_t *conv = stored ? sk_crconvert_from_stored(api, to, stored, NULL, &failed) : NULL;
    json_decref(stored);
    char *why = NULL;
    if (conv) {
        *out = conv;
    } else {
        why = strdup(json_string_value(json_object_get(failed, "message")));
        SK_CHECK_ALLOC(why);
    }
    json_decref(failed);
    return why;
}

/* sk_hook_review.authorize: as this server authorizes requests. */
static void authorize(void *arg, const sk_rbac_attrs *a, sk_rbac_decision *out)
{
    const sk_api *api = arg;
    if (api->always_allow) {
        *out = (sk_rbac_decision){1, strdup("")};
        SK_CHECK_ALLOC(out->reason);
        return;
    }
    sk_authz_decide(api->authz, a, out);
}

static int is_sub(const sk_api_call *call, const char *name)
{
    return call->route.sub && strcmp(call->route.sub->name, name) == 0;
}

/* A /scale request's objects are the parent's autoscaling/v1 Scale, as
 * kube's scale REST hands admission (scaleUpdatedObjectInfo,
 * toScaleUpdateValidation), through every version of the parent. */
static int is_scale(const sk_api_call *call)
{
    return is_sub(call, "scale");
}

/* rq for a reviewed by name, with options (stolen). */
static void request_init(sk_api_call *call, request *rq, const sk_webhook_attrs *a,
                         const char *name, json_t *options, int dry_run)
{
    memset(rq, 0, sizeof *rq);
    const sk_resource *r = call->res;
    rq->call = call;
    rq->options = options;
    rq->user = sk_authn_user_info(call->user);
    sk_hook_review *rv = &rq->rv;
    rv->a = *a;
    rv->res = r;
    rv->name = name;
    rv->kind_group = r->group;
    rv->kind_version = r->version;
    rv->kind = r->kind;
    /* the subresources whose objects are their own kind, as kube's
     * storage for them names it: a Scale, and pods/eviction's Eviction
     * (its body, api/subresource.c) */
    if (is_scale(call) || is_sub(call, "eviction")) {
        rv->kind_group = is_scale(call) ? "autoscaling" : "policy";
        rv->kind_version = "v1";
        rv->kind = is_scale(call) ? "Scale" : "Eviction";
        rv->own_kind = 1;
    }
    rv->user_info = rq->user;
    rv->user = call->user;
    rv->authorize = authorize;
    rv->authorize_arg = call->api;
    rv->options = options;
    rv->dry_run = dry_run;
    rv->ns_labels = ns_labels;
    rv->ns_labels_arg = rq;
    rv->resolve = sk_svcroute_resolve;
    rv->resolve_arg = call->api;
    rv->convert = convert_equivalent;
    rv->convert_arg = call->api;
}

static void request_free(request *rq)
{
    json_decref(rq->user);
    json_decref(rq->options);
    json_decref(rq->ns);
}

/* Passes warnings on, keeps the audit annotations (both stolen); replies
 * with status (stolen) if any. -1 if it replied. */
static int conclude(sk_api_call *call, json_t *warnings, json_t *annotations, json_t *status)
{
    size_t i;
    json_t *w;
    json_array_foreach(warnings, i, w)
        sk_call_add_warning(call, json_string_value(w));
    json_decref(warnings);
    if (json_object_size(annotations) > 0 && !call->audit_annotations)
        call->audit_annotations = sk_call_keep(call, json_object());
    /* a deletecollection's objects each add theirs: a key keeps its first
     * value, as kube's attributes do */
    const char *key;
    json_t *value;
    json_object_foreach(annotations, key, value)
    {
        char *msg = NULL;
        if (sk_webhook_annotate(call->audit_annotations, key, json_string_value(value), &msg) !=
            SK_OK)
            sk_log_warn("webhooks: %s", msg);
        free(msg);
    }
    json_decref(annotations);
    if (!status)
        return 0;
    sk_call_reply_status_object(call, status);
    return -1;
}

/* The name a create or update is reviewed under: a subresource's the
 * URL's (an Eviction's body may name none), else the object's (none yet
 * for generateName before mutation). */
static const char *name_of(const sk_api_call *call, const json_t *obj)
{
    const char *name =
        call->route.sub && call->name
            ? call->name
            : json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    return name ? name : "";
}

int sk_webhooks_may_mutate(sk_api_call *call, const json_t *old)
{
    const sk_hook_set *set = state_of(call)->set;
    sk_webhook_attrs a = attrs_of(call, old ? "UPDATE" : "CREATE", call->name ? call->name : "",
                                  NULL, old);
    return set && sk_hook_set_covers(set, 1, &a);
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

/* The Scale a /scale request's webhooks see of parent (NULL: none). New. */
static json_t *scale_of(sk_api_call *call, const json_t *parent)
{
    return parent ? sk_scale_view(call->res, parent) : NULL;
}

/* The parent with the replicas of scale, a webhook's patched Scale, as
 * kube's scale REST takes them: NULL after replying when they are not a
 * count. New. */
static json_t *scaled(sk_api_call *call, const json_t *scale, const json_t *parent)
{
    json_t *obj = json_deep_copy(parent);
    char *msg = NULL;
    sk_err err = sk_scale_apply(call->res, scale, obj, &msg);
    if (err != SK_OK) {
        sk_call_reply_error(call, err, msg ? msg : "invalid Scale");
        json_decref(obj);
        obj = NULL;
    }
    free(msg);
    return obj;
}

int sk_webhooks_mutate(sk_api_call *call, json_t **obj, const json_t *old, int dry_run,
                       sk_webhooks_settle_fn settle)
{
    const sk_hook_set *set = state_of(call)->set;
    const char *name = name_of(call, *obj);
    int scale = is_scale(call);
    /* what the webhooks see and patch: the object, or its Scale */
    json_t *seen = scale ? scale_of(call, *obj) : json_incref(*obj);
    json_t *old_seen = scale ? scale_of(call, old) : json_incref((json_t *)old);
    sk_webhook_attrs a = attrs_of(call, old ? "UPDATE" : "CREATE", name, seen, old_seen);
    int rc = 0;
    if (!set || !sk_hook_set_covers(set, 1, &a))
        goto out;
    request rq;
    request_init(call, &rq, &a, name, write_options(call, old, dry_run), dry_run);
    settling s = {call, old, settle};
    rq.rv.settle = settle && !scale ? settle_patched : NULL;
    rq.rv.settle_arg = &s;
    json_t *warnings = json_array(), *annotations = json_object();
    int changed = 0;
    json_t *status =
        sk_hook_mutate(call->api->hooks, set, &rq.rv, &seen, warnings, annotations, &changed);
    rc = conclude(call, warnings, annotations, status) < 0 ? -1 : changed;
    request_free(&rq);
    json_t *result = rc <= 0 ? NULL : scale ? scaled(call, seen, *obj) : json_incref(seen);
    if (result) {
        json_decref(*obj);
        *obj = result;
    } else if (rc > 0) {
        rc = -1;
    }
out:
    json_decref(seen);
    json_decref(old_seen);
    return rc;
}

int sk_webhooks_validate(sk_api_call *call, const json_t *obj, const json_t *old, int dry_run)
{
    const sk_hook_set *set = state_of(call)->set;
    const char *name = name_of(call, obj);
    int scale = is_scale(call);
    json_t *seen = scale ? scale_of(call, obj) : json_incref((json_t *)obj);
    json_t *old_seen = scale ? scale_of(call, old) : json_incref((json_t *)old);
    sk_webhook_attrs a = attrs_of(call, old ? "UPDATE" : "CREATE", name, seen, old_seen);
    int rc = 0;
    const sk_vap_set *vaps = call->webhooks_call->vaps;
    int hooks = set && sk_hook_set_covers(set, 0, &a);
    int policies = vaps && sk_vap_set_covers(vaps, &a, name);
    if (hooks || policies) {
        request rq;
        request_init(call, &rq, &a, name, write_options(call, old, dry_run), dry_run);
        json_t *warnings = json_array(), *annotations = json_object();
        /* kube's order: the policies, then the validating webhooks */
        json_t *status = policies ? apply_policies(call, vaps, &rq, warnings, annotations) : NULL;
        if (!status && hooks)
            status = sk_hook_validate(call->api->hooks, set, &rq.rv, warnings, annotations);
        rc = conclude(call, warnings, annotations, status);
        request_free(&rq);
    }
    json_decref(seen);
    json_decref(old_seen);
    return rc;
}

/* DeleteOptions as decoded, in Go's field order. */
static json_t *delete_options(const sk_delete_options *d)
{
    static const char *const policies[] = {NULL, "Orphan", "Background", "Foreground"};
    json_t *o = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "meta.k8s.io/v1");
    if (d->has_grace)
        json_object_set_new(o, "gracePeriodSeconds", json_integer(d->grace_s));
    if (d->precondition_uid || d->precondition_rev > 0) {
        json_t *pre = json_object();
        if (d->precondition_uid)
            json_object_set_new(pre, "uid", json_string(d->precondition_uid));
        if (d->precondition_rev > 0) {
            char rv[24];
            snprintf(rv, sizeof rv, "%lld", (long long)d->precondition_rev);
            json_object_set_new(pre, "resourceVersion", json_string(rv));
        }
        json_object_set_new(o, "preconditions", pre);
    }
    if (d->orphan_dependents >= 0)
        json_object_set_new(o, "orphanDependents", json_boolean(d->orphan_dependents));
    if (d->propagation != SK_PROPAGATION_UNSET)
        json_object_set_new(o, "propagationPolicy", json_string(policies[d->propagation]));
    if (d->dry_run)
        json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
    return o;
}

int sk_webhooks_delete(sk_api_call *call, const json_t *stored, const sk_delete_options *d)
{
    const sk_hook_set *set = state_of(call)->set;
    /* the URL's name: "" for each object of a deletecollection */
    const char *name = call->name ? call->name : "";
    sk_webhook_attrs a = attrs_of(call, "DELETE", name, NULL, stored);
    const sk_vap_set *vaps = call->webhooks_call->vaps;
    int policies = vaps && sk_vap_set_covers(vaps, &a, name);
    if (!set || (!sk_hook_set_covers(set, 1, &a) && !sk_hook_set_covers(set, 0, &a) && !policies))
        return 0;
    request rq;
    request_init(call, &rq, &a, name, delete_options(d), d->dry_run);
    json_t *warnings = json_array(), *annotations = json_object();
    json_t *none = NULL;
    int changed = 0;
    json_t *status =
        sk_hook_mutate(call->api->hooks, set, &rq.rv, &none, warnings, annotations, &changed);
    if (!status && policies)
        status = apply_policies(call, vaps, &rq, warnings, annotations);
    if (!status)
        status = sk_hook_validate(call->api->hooks, set, &rq.rv, warnings, annotations);
    int rc = conclude(call, warnings, annotations, status);
    request_free(&rq);
    return rc;
}
