/*
 * subresource.c - verbs on .../{name}/{subresource}, generic over the
 * registry's subresources (route.sub):
 *
 *  - status, and the status-like finalize (namespaces), approval (CSRs)
 *    and ephemeralcontainers (pods): GET is the object; PUT/PATCH go
 *    through update.c's read-modify-write loop, writing only what the
 *    subresource owns (kube/status_rules.h). Patches apply to the whole
 *    object, as kube's do.
 *  - scale: the autoscaling/v1 Scale view (kube/scale.h); PUT/PATCH change
 *    the object's spec.replicas only. A server-side apply of a Scale is an
 *    apply of the parent's replicas field by the manager with subresource
 *    "scale", as kube's ScaleHandler maps it: conflicts are with whoever
 *    owns the parent's replicas.
 *  - pods/binding (POST Binding): spec.nodeName of an unbound pod; 409 if
 *    it is bound or being deleted.
 *  - pods/eviction (POST Eviction): admission webhooks on the Eviction
 *    (a CREATE of pods/eviction), then a delete with the eviction's
 *    DeleteOptions (delete.c). PodDisruptionBudgets are not consulted: no
 *    controller keeps their status here, so none could allow a disruption.
 *  - what needs a kubelet (log, exec, attach, portforward, proxy) or a
 *    token issuer (serviceaccounts/token): 503 ServiceUnavailable saying
 *    so, not a 404 that reads as a missing object.
 */
#include "api/body.h"
#include "api/call.h"
#include "api/verbs.h"
#include "api/webhooks.h"
#include "core/util.h"
#include "kube/condition.h"
#include "kube/jwt.h"
#include "kube/objmeta.h"
#include "kube/options.h"
#include "kube/scale.h"
#include "kube/status_rules.h"

#include <stdlib.h>
#include <string.h>

static int is(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* ---- status and the status-like subresources ---- */

static json_t *status_merge(sk_api_call *call, const json_t *sent, const json_t *stored)
{
    return sk_status_rules_merge(call->res, call->route.sub->name, sent, stored);
}

static const sk_update_view status_view = {
    .decode = sk_body_object,
    .merge = status_merge,
    .check_fields = 1,
};

/* ---- scale ---- */

static json_t *scale_view(sk_api_call *call, const json_t *stored)
{
    return sk_scale_view(call->res, stored);
}

static json_t *scale_decode(sk_api_call *call)
{
    return sk_body_decode(call, "expected a Scale");
}

static json_t *scale_merge(sk_api_call *call, const json_t *sent, const json_t *stored)
{
    json_t *obj = json_deep_copy(stored);
    char *msg = NULL;
    sk_err err = sk_scale_apply(call->res, sent, obj, &msg);
    if (err != SK_OK) {
        sk_call_reply_error(call, err, msg ? msg : "invalid Scale");
        free(msg);
        json_decref(obj);
        obj = NULL;
    }
    return obj;
}

static void scale_reply(sk_api_call *call, const json_t *obj)
{
    json_t *v = sk_scale_view(call->res, obj);
    sk_call_reply_json(call, 200, v);
    json_decref(v);
}

/* The parent's apply config for a Scale's: its name and replicas field
 * only, so the applier owns nothing else of the parent. A Scale that
 * omits spec.replicas applies nothing. */
static json_t *scale_apply_config(sk_api_call *call, const json_t *cfg)
{
    json_t *parent = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", call->res->api_version, "kind",
                               call->res->kind, "metadata", "name", call->name);
    if (!json_object_get(json_object_get(cfg, "spec"), "replicas"))
        return parent;
    char *msg = NULL;
    sk_err err = sk_scale_apply(call->res, cfg, parent, &msg);
    if (err != SK_OK) {
        sk_call_reply_error(call, err, msg ? msg : "invalid Scale");
        free(msg);
        json_decref(parent);
        parent = NULL;
    }
    return parent;
}

static const char *scale_parent_field(sk_api_call *call)
{
    return call->res->custom ? call->res->custom->spec_replicas : ".spec.replicas";
}

static const sk_update_view scale_update_view = {
    .view = scale_view,
    .decode = scale_decode,
    .merge = scale_merge,
    .reply = scale_reply,
    .apply_config = scale_apply_config,
    .apply_api_version = "autoscaling/v1",
    .apply_kind = "Scale",
    .apply_parent_field = scale_parent_field,
    .apply_view_field = ".spec.replicas",
};

/* ---- pods/binding ---- */

static json_t *binding_decode(sk_api_call *call)
{
    json_t *b = sk_body_decode(call, "expected a Binding");
    const char *kind = b ? json_string_value(json_object_get(b, "kind")) : NULL;
    const char *name =
        b ? json_string_value(json_object_get(json_object_get(b, "metadata"), "name")) : NULL;
    if (b && kind && *kind && !is(kind, "Binding")) {
        sk_call_reply_errorf(call, SK_ERR_BAD_REQUEST,
                             "the kind in the data (%s) does not match the expected kind (Binding)",
                             kind);
        goto fail;
    }
    if (b && name && *name && !is(name, call->name)) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST,
                            "name in URL does not match name in Binding object");
        goto fail;
    }
    return b;
fail:
    json_decref(b);
    return NULL;
}

static json_t *binding_merge(sk_api_call *call, const json_t *sent, const json_t *stored)
{
    const json_t *target = json_object_get(sent, "target");
    const char *tkind = json_string_value(json_object_get(target, "kind"));
    const char *node = json_string_value(json_object_get(target, "name"));
    const json_t *meta = json_object_get(stored, "metadata");
    const char *bound =
        json_string_value(json_object_get(json_object_get(stored, "spec"), "nodeName"));
    if (tkind && *tkind && !is(tkind, "Node")) {
        sk_call_reply_error(call, SK_ERR_INVALID, "target.kind: must be empty or Node");
        return NULL;
    }
    if (!node || !*node) {
        sk_call_reply_error(call, SK_ERR_INVALID, "target.name: Required value");
        return NULL;
    }
    if (json_object_get(meta, "deletionTimestamp")) {
        sk_call_reply_errorf(call, SK_ERR_CONFLICT,
                             "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is "
                             "being deleted, cannot be assigned to a host",
                             call->name, call->name);
        return NULL;
    }
    if (bound && *bound) {
        sk_call_reply_errorf(call, SK_ERR_CONFLICT,
                             "Operation cannot be fulfilled on pods/binding \"%s\": pod %s is "
                             "already assigned to node \"%s\"",
                             call->name, call->name, bound);
        return NULL;
    }
    json_t *pod = json_deep_copy(stored);
    json_t *spec = json_object_get(pod, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(pod, "spec", spec);
    }
    json_object_set_new(spec, "nodeName", json_string(node));
    /* The binding's annotations are added to the pod's. */
    json_t *ann = json_object_get(json_object_get(sent, "metadata"), "annotations");
    if (json_is_object(ann) && json_object_size(ann)) {
        json_t *pm = json_object_get(pod, "metadata");
        json_t *pa = json_object_get(pm, "annotations");
        if (!json_is_object(pa)) {
            pa = json_object();
            json_object_set_new(pm, "annotations", pa);
        }
        json_object_update(pa, ann);
    }
    /* The scheduler's condition: PodScheduled True. */
    char now[21];
    sk_format_rfc3339(sk_wall_s(), now);
    sk_condition_set(
        pod,
        json_pack("{s:s, s:s, s:n}", "type", "PodScheduled", "status", "True", "lastProbeTime"),
        now);
    return pod;
}

static void binding_reply(sk_api_call *call, const json_t *obj)
{
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                           "metadata", "status", "Success", "code", 201);
    sk_call_reply_json(call, 201, st);
    json_decref(st);
}

static const sk_update_view binding_view = {
    .decode = binding_decode,
    .merge = binding_merge,
    .reply = binding_reply,
    .unadmitted = 1,
};

/* ---- pods/eviction ---- */

/* The Eviction as kube's create handler admits it: policy/v1 (the
 * eviction subresource's kind), in the request's namespace, what only the
 * server sets wiped. New. */
static json_t *eviction_admitted(sk_api_call *call, const json_t *body)
{
    json_t *ev = json_deep_copy(body);
    json_object_set_new(ev, "kind", json_string("Eviction"));
    json_object_set_new(ev, "apiVersion", json_string("policy/v1"));
    if (!json_is_object(json_object_get(ev, "metadata")))
        json_object_set_new(ev, "metadata", json_object());
    json_object_set_new(json_object_get(ev, "metadata"), "namespace", json_string(call->ns));
    sk_objmeta_wipe_system(ev);
    return ev;
}

/* kube's order (create handler, then EvictionREST.Create): the body
 * decoded, mutating and validating webhooks on the Eviction (a CREATE of
 * pods/eviction), then its name and deleteOptions as they left it; the
 * pod's deletion calls no webhook of its own. */
static int evict(sk_api_call *call)
{
    int ready = sk_webhooks_wait(call, evict);
    if (ready != SK_PLAN_NOW)
        return ready;
    if (!sk_body_media_supported(call->content_type)) {
        sk_call_reply_error(call, SK_ERR_UNSUPPORTED_MEDIA,
                            "the body of the request was in an unsupported content type");
        return SK_STEP_DONE;
    }
    json_t *body = sk_call_keep(call, sk_body_decode(call, "expected an Eviction"));
    if (!body)
        return SK_STEP_DONE;
    const char *kind = json_string_value(json_object_get(body, "kind"));
    if (kind && *kind && !is(kind, "Eviction")) {
        sk_call_reply_errorf(
            call, SK_ERR_BAD_REQUEST,
            "the kind in the data (%s) does not match the expected kind (Eviction)", kind);
        return SK_STEP_DONE;
    }
    sk_write_options wo;
    json_t *status = NULL;
    if (sk_write_options_parse(sk_call_query, call, "CreateOptions", &wo, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return SK_STEP_DONE;
    }
    /* kept: a precondition uid points into it */
    json_t *ev = eviction_admitted(call, body);
    if (sk_webhooks_mutate(call, &ev, NULL, wo.dry_run, NULL) < 0) {
        json_decref(ev);
        return SK_STEP_DONE;
    }
    sk_call_keep(call, ev);
    const char *name = json_string_value(json_object_get(json_object_get(ev, "metadata"), "name"));
    if (name && *name && !is(name, call->name)) {
        sk_call_reply_error(call, SK_ERR_BAD_REQUEST,
                            "name in URL does not match name in Eviction object");
        return SK_STEP_DONE;
    }
    /* kube's propagateDryRun: the query's dryRun into deleteOptions that
     * name none, before the validating webhooks see the Eviction */
    json_t *opts = json_object_get(ev, "deleteOptions");
    if (wo.dry_run && json_is_object(opts) && json_array_size(json_object_get(opts, "dryRun")) == 0)
        json_object_set_new(opts, "dryRun", json_pack("[s]", "All"));
    if (sk_webhooks_validate(call, ev, NULL, wo.dry_run) < 0)
        return SK_STEP_DONE;
    sk_delete_options d = SK_DELETE_OPTIONS_INIT;
    if (json_is_object(opts) && sk_delete_options_decode(opts, &d, &status) != SK_OK) {
        sk_call_reply_status_object(call, status);
        return SK_STEP_DONE;
    }
    /* kube's eviction takes dryRun from the query's CreateOptions or from the
     * body's deleteOptions (kubectl drain --dry-run=server sends the latter);
     * a dry run still finds the pod, and writes nothing. */
    d.dry_run |= wo.dry_run;
    return sk_delete_object(call, &d, 1);
}

/* ---- what sqlkube cannot serve ---- */

/* A missing object is still a 404, as kube looks it up before connecting. */
static int unavailable(sk_api_call *call)
{
    const sk_subresource *sub = call->route.sub;
    sk_row row = {0};
    sk_err err = sk_store_get(call->api->store, call->res->storage, call->ns, call->name, 0, &row);
    sk_row_clear(&row);
    if (err != SK_OK)
        sk_call_reply_store_error(call, err, call->name);
    else if (is(sub->name, "token"))
        sk_call_reply_errorf(call, SK_ERR_UNAVAILABLE,
                             "%s/%s: this sqlkube server has no signing key "
                             "(--service-account-signing-key-file)",
                             call->res->resource, sub->name);
    else
        sk_call_reply_errorf(call, SK_ERR_UNAVAILABLE,
                             "%s/%s: no kubelet is attached to this sqlkube server",
                             call->res->resource, sub->name);
    return SK_STEP_DONE;
}

int sk_verb_subresource(sk_api_call *call)
{
    const char *name = call->route.sub->name;
    sk_req_verb verb = call->route.verb;
    int is_write = verb == SK_REQ_UPDATE || verb == SK_REQ_PATCH;
    if (sk_status_rules_is_status_like(name)) {
        if (verb == SK_REQ_GET)
            return sk_verb_get(call);
        if (is_write)
            return sk_update_start(call, verb == SK_REQ_PATCH, &status_view);
    } else if (is(name, "scale")) {
        if (verb == SK_REQ_GET)
            return sk_verb_get_view(call, scale_view);
        if (is_write)
            return sk_update_start(call, verb == SK_REQ_PATCH, &scale_update_view);
    } else if (is(name, "binding") && verb == SK_REQ_CREATE) {
        return sk_update_start(call, 0, &binding_view);
    } else if (is(name, "eviction") && verb == SK_REQ_CREATE) {
        return evict(call);
    } else if (is(name, "token") && verb == SK_REQ_CREATE &&
               sk_jwt_keys_can_sign(call->api->authn.sa_keys)) {
        return sk_verb_token_request(call);
    }
    return unavailable(call);
}
