/*
 * admission.c - see admission.h. The steps of one call follow kube's
 * dispatchers (mutating/dispatcher.go, validating/dispatcher.go): a dry run
 * reaching a webhook with side effects is refused whatever its
 * failurePolicy; a webhook that cannot be called, or answers what is not
 * an AdmissionReview, is a failure its failurePolicy decides (Ignore: the
 * request goes on, logged); a webhook that answers "not allowed" refuses
 * the request; a patch that is not a JSON patch, or does not apply, is an
 * internal error.
 *
 * Which webhooks a request reaches follows generic/webhook.go's
 * ShouldCallHook: a selector that does not match skips the webhook even
 * when the other one could not be judged; an error (an unknown namespace,
 * a selector that does not parse) refuses the request only for a webhook
 * whose rules and other selector reach it. Rules are looked at first here
 * (they cannot fail), so a namespace is read only for a webhook whose
 * rules cover the request.
 *
 * The review is serialized once per state of the object (once for all
 * validating webhooks, again after each patch for mutating ones); each
 * call only splices its own uid in front.
 *
 * Where a webhook is and how it is reached (url or Service, caBundle) is
 * hook/endpoint.h's, shared with CRD conversion webhooks.
 *
 * Audit annotations are recorded where kube's dispatchers record them: a
 * webhook's own once its answer is a valid review (before whether it
 * allows), the mutation annotation for every mutating call past the
 * selectors, the failed-open one when failurePolicy Ignore lets a failure
 * through. Validating calls run on threads of their own, so each keeps its
 * annotations and they are merged after the join.
 */
#include "hook/admission.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "kube/convert.h"
#include "kube/patch.h"
#include "kube/status.h"
#include "kube/typed.h"
#include "policy/authorizer.h"
#include "policy/conditions.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One webhook, compiled. */
typedef struct hook {
    const json_t *json; /* in the set's configurations */
    const char *name;
    const char *config; /* its configuration's name */
    int ignore_failure; /* failurePolicy Ignore */
    int reinvoke;       /* reinvocationPolicy IfNeeded */
    int dry_run_safe;   /* sideEffects None or NoneOnDryRun */
    int timeout_s;
    /* NULL: selects everything; a selector that does not parse is its
     * *_error (new), an internal error for the requests it would judge */
    sk_label_selector *ns_sel, *obj_sel;
    char *ns_error, *obj_error;
    sk_hook_endpoint *endpoint; /* its clientConfig */
    int v1beta1;   /* sent AdmissionReview v1beta1, not v1 */
    char *unusable; /* it cannot be called: why (new), a call failure */
    sk_conditions *conds; /* its matchConditions (NULL: none) */
} hook;

enum { VALIDATING, MUTATING };

struct sk_hook_set {
    atomic_int refs;
    json_t *configs[2];
    hook *hooks[2];
    size_t n[2];
};

static char *prefixed(const char *before, const char *text)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "%s%s", before, text);
    return sk_buf_steal(&m, NULL);
}

static int is(const json_t *hook, const char *field, const char *want)
{
    const char *v = json_string_value(json_object_get(hook, field));
    return v && strcmp(v, want) == 0;
}

static void compile_selector(const json_t *sel, sk_label_selector **out, char **error)
{
    char *msg = NULL;
    if (sk_webhook_selector_compile(sel, out, &msg) != SK_OK) {
        *out = NULL;
        *error = msg ? msg : strdup("invalid selector");
    }
}

static void compile(sk_hook_client *c, const json_t *config, const json_t *json, hook *h)
{
    h->json = json;
    h->name = json_string_value(json_object_get(json, "name"));
    if (!h->name)
        h->name = "";
    h->config = json_string_value(json_object_get(json_object_get(config, "metadata"), "name"));
    if (!h->config)
        h->config = "";
    h->ignore_failure = is(json, "failurePolicy", "Ignore");
    h->reinvoke = is(json, "reinvocationPolicy", "IfNeeded");
    h->dry_run_safe = is(json, "sideEffects", "None") || is(json, "sideEffects", "NoneOnDryRun");
    /* validated to 1..30 and defaulted to 10 when written (kube/validate.c,
     * kube/defaults.c) */
    const json_t *t = json_object_get(json, "timeoutSeconds");
    h->timeout_s = json_is_integer(t) ? (int)json_integer_value(t) : 10;
    compile_selector(json_object_get(json, "namespaceSelector"), &h->ns_sel, &h->ns_error);
    compile_selector(json_object_get(json, "objectSelector"), &h->obj_sel, &h->obj_error);
    h->endpoint = sk_hook_endpoint_new(c, json_object_get(json, "clientConfig"));
    /* a webhook's conditions have no params (cel/admission.h) */
    h->conds = sk_conditions_new(json_object_get(json, "matchConditions"), 0);
    /* kube's CreateAdmissionObjects: the first version of the list it
     * knows */
    size_t i;
    const json_t *v;
    int known = 0;
    json_array_foreach(json_object_get(json, "admissionReviewVersions"), i, v)
    {
        const char *s = json_string_value(v);
        if (s && (strcmp(s, "v1") == 0 || strcmp(s, "v1beta1") == 0)) {
            h->v1beta1 = strcmp(s, "v1beta1") == 0;
            known = 1;
            break;
        }
    }
    if (!known)
        h->unusable = strdup("could not create admission objects: webhook does not accept known "
                             "AdmissionReview versions (v1, v1beta1)");
}

sk_hook_set *sk_hook_set_new(sk_hook_client *c, json_t *mutating, json_t *validating)
{
    sk_hook_set *s = calloc(1, sizeof *s);
    SK_CHECK_ALLOC(s);
    atomic_init(&s->refs, 1);
    s->configs[MUTATING] = json_incref(mutating);
    s->configs[VALIDATING] = json_incref(validating);
    for (int k = 0; k < 2; k++) {
        size_t n = 0, i, j;
        json_t *config, *w;
        json_array_foreach(s->configs[k], i, config)
            n += json_array_size(json_object_get(config, "webhooks"));
        s->hooks[k] = calloc(n ? n : 1, sizeof(hook));
        SK_CHECK_ALLOC(s->hooks[k]);
        json_array_foreach(s->configs[k], i, config)
            json_array_foreach(json_object_get(config, "webhooks"), j, w)
                compile(c, config, w, &s->hooks[k][s->n[k]++]);
    }
    return s;
}

sk_hook_set *sk_hook_set_ref(sk_hook_set *s)
{
    atomic_fetch_add(&s->refs, 1);
    return s;
}

void sk_hook_set_unref(sk_hook_set *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < s->n[k]; i++) {
            hook *h = &s->hooks[k][i];
            sk_label_selector_free(h->ns_sel);
            sk_label_selector_free(h->obj_sel);
            free(h->ns_error);
            free(h->obj_error);
            sk_hook_endpoint_free(h->endpoint);
            free(h->unusable);
            sk_conditions_free(h->conds);
        }
        free(s->hooks[k]);
        json_decref(s->configs[k]);
    }
    free(s);
}

int sk_hook_set_empty(const sk_hook_set *s)
{
    return s->n[MUTATING] == 0 && s->n[VALIDATING] == 0;
}

int sk_hook_set_covers(const sk_hook_set *s, int mutating, const sk_webhook_attrs *a)
{
    int k = mutating ? MUTATING : VALIDATING;
    if (s->n[k] == 0 || sk_webhook_exempt(a))
        return 0;
    for (size_t i = 0; i < s->n[k]; i++)
        if (sk_webhook_rules_match(s->hooks[k][i].json, a) ||
            sk_webhook_equivalent_match(s->hooks[k][i].json, a))
            return 1;
    return 0;
}

enum outcome {
    CALLED,  /* allowed (and patched, for a mutating webhook) */
    SKIPPED, /* a failure its failurePolicy Ignore lets through */
    REFUSED, /* *status says why */
};

/* Records an audit annotation of the request, or logs why it cannot be
 * one (kube logs it and goes on). */
static void annotate(json_t *ann, const char *key, const char *value)
{
    char *msg = NULL;
    if (sk_webhook_annotate(ann, key, value, &msg) != SK_OK)
        sk_log_warn("webhooks: failed to set admission audit annotation %s to %s: %s", key, value,
                    msg);
    free(msg);
}

/* One call's audit annotations, as kube's webhook annotator keys them:
 * ann the request's (or the call's own, on a validating thread), open_key
 * the key a failure that fails open is recorded under. */
typedef struct annotator {
    json_t *ann;
    char open_key[96];
} annotator;

/* The failure of calling h (reason: why, stolen): under Ignore the request
 * goes on (the failure recorded in the audit annotations), else its
 * Status. */
static enum outcome failed(const hook *h, char *reason, annotator *an, json_t **status)
{
    enum outcome o;
    if (h->ignore_failure) {
        sk_log_warn("webhooks: failed calling webhook \"%s\", failing open: %s", h->name, reason);
        annotate(an->ann, an->open_key, h->name);
        o = SKIPPED;
    } else {
        *status = sk_webhook_failure_status(h->name, reason);
        o = REFUSED;
    }
    free(reason);
    return o;
}

static json_t *gvk(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "version", version, "kind", kind);
}

static json_t *gvr(const sk_webhook_attrs *a)
{
    return json_pack("{s:s, s:s, s:s}", "group", a->group, "version", a->version, "resource",
                     a->resource);
}

static json_t *resource_gvr(const sk_resource *r)
{
    return json_pack("{s:s, s:s, s:s}", "group", r->group, "version", r->version, "resource",
                     r->resource);
}

/* obj (borrowed, in from's version) in to's, through the stored form
 * (rv->convert, or kube/convert.h's rewrites): 0 with *out (new), or -1
 * with *status (new), kube's internal error. */
static int converted(const sk_hook_review *rv, const sk_resource *from, const sk_resource *to,
                     const json_t *obj, json_t **out, json_t **status)
{
    if (rv->convert) {
        char *why = rv->convert(rv->convert_arg, from, to, obj, out);
        if (why)
            *status = sk_webhook_internal_status(why);
        free(why);
        return why ? -1 : 0;
    }
    json_t *stored = sk_convert_to_stored(from, obj);
    *out = sk_convert_from_stored(to, stored);
    json_decref(stored);
    return 0;
}

/* The AdmissionRequest of rv (its object as a says) up to its userInfo,
 * without its uid: for a webhook reached through an equivalent resource eq
 * (matchPolicy Equivalent), kind and resource in eq's version, the
 * request's kept as requestKind and requestResource, as kube sends them.
 * New, with *obj and *old (new or NULL) the objects in the version sent,
 * or NULL with *status when they cannot be converted to eq's version. */
static json_t *request_head(const sk_hook_review *rv, const sk_webhook_attrs *a,
                            const sk_resource *eq, json_t **obj_out, json_t **old_out,
                            json_t **status)
{
    json_t *req = json_object();
    json_t *obj = NULL, *old = NULL;
    if (eq && !rv->own_kind) {
        json_object_set_new(req, "kind", gvk(eq->group, eq->version, eq->kind));
        json_object_set_new(req, "resource", resource_gvr(eq));
        if ((a->object && converted(rv, rv->res, eq, a->object, &obj, status) < 0) ||
            (a->old_object && converted(rv, rv->res, eq, a->old_object, &old, status) < 0)) {
            json_decref(obj);
            json_decref(req);
            return NULL;
        }
    } else {
        json_object_set_new(req, "kind", gvk(rv->kind_group, rv->kind_version, rv->kind));
        json_object_set_new(req, "resource", eq ? resource_gvr(eq) : gvr(a));
        obj = json_incref((json_t *)a->object);
        old = json_incref((json_t *)a->old_object);
    }
    if (*a->subresource)
        json_object_set_new(req, "subResource", json_string(a->subresource));
    json_object_set_new(req, "requestKind", gvk(rv->kind_group, rv->kind_version, rv->kind));
    json_object_set_new(req, "requestResource", gvr(a));
    if (*a->subresource)
        json_object_set_new(req, "requestSubResource", json_string(a->subresource));
    if (rv->name && *rv->name)
        json_object_set_new(req, "name", json_string(rv->name));
    if (*a->ns)
        json_object_set_new(req, "namespace", json_string(a->ns));
    json_object_set_new(req, "operation", json_string(a->operation));
    /* referenced, not copied: used on the request's thread */
    json_object_set_new(req, "userInfo", json_incref((json_t *)rv->user_info));
    *obj_out = obj;
    *old_out = old;
    return req;
}

/* The end of an AdmissionRequest, after its objects. */
static void request_tail(json_t *req, const sk_hook_review *rv)
{
    json_object_set_new(req, "dryRun", json_boolean(rv->dry_run));
    json_object_set_new(req, "options",
                        rv->options ? json_incref((json_t *)rv->options) : json_null());
}

/* The AdmissionRequest (request_head's, objects included) serialized
 * without its uid, which each call puts in front (review_body). New, or
 * NULL with *status. */
static char *request_text(const sk_hook_review *rv, const sk_webhook_attrs *a,
                          const sk_resource *eq, json_t **status)
{
    json_t *obj, *old;
    json_t *req = request_head(rv, a, eq, &obj, &old, status);
    if (!req)
        return NULL;
    json_object_set_new(req, "object", obj ? obj : json_null());
    json_object_set_new(req, "oldObject", old ? old : json_null());
    request_tail(req, rv);
    char *text = json_dumps(req, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    json_decref(req);
    return text;
}

/* AdmissionReview v1 (or v1beta1, the same fields) of request
 * (request_text) with uid first, as Go writes the fields. */
static void review_body(sk_buf *b, const char *request, const char *uid, int v1beta1)
{
    sk_buf_printf(b,
                  "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/%s\","
                  "\"request\":{\"uid\":\"%s\",%s}",
                  v1beta1 ? "v1beta1" : "v1", uid, request + 1);
}

/* Sends h the review (request: request_text); on CALLED, *response is the
 * webhook's AdmissionResponse (new). */
static enum outcome post(sk_hook_client *c, const hook *h, const sk_hook_review *rv,
                         const char *request, int mutating, json_t *warnings, annotator *an,
                         json_t **response, json_t **status)
{
    if (h->unusable)
        return failed(h, strdup(h->unusable), an, status);
    sk_buf out = SK_BUF_INIT, body = SK_BUF_INIT;
    enum outcome o = REFUSED;
    json_t *answer = NULL;
    char *why = NULL;
    char uid[37];
    sk_uuid4(uid);
    review_body(&body, request, uid, h->v1beta1);
    long http_status = 0;
    sk_err err = sk_hook_endpoint_post(c, h->endpoint, rv->resolve, rv->resolve_arg,
                                       h->timeout_s, body.data, body.len, &http_status, &out,
                                       &why);
    if (err != SK_OK) {
        o = failed(h,
                   prefixed(err == SK_ERR_INVALID ? "could not get REST client: "
                                                  : "failed to call webhook: ",
                            why),
                   an, status);
        goto out;
    }
    if (http_status < 200 || http_status > 299) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m,
                      "failed to call webhook: the server responded with the status code %ld "
                      "but did not return more information",
                      http_status);
        o = failed(h, sk_buf_steal(&m, NULL), an, status);
        goto out;
    }
    json_error_t jerr;
    answer = json_loadb(out.data ? out.data : "", out.len, 0, &jerr);
    const json_t *resp = NULL;
    char *msg = NULL;
    if (!answer) {
        o = failed(h, prefixed("failed to call webhook: ", jerr.text), an, status);
        goto out;
    }
    if (sk_webhook_check_response(answer, uid, mutating, h->v1beta1, &resp, &msg) != SK_OK) {
        o = failed(h, prefixed("received invalid webhook response: ", msg), an, status);
        free(msg);
        goto out;
    }
    /* the webhook's own audit annotations, under its name, whatever it
     * answers */
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(resp, "auditAnnotations"), k, v)
    {
        if (!json_is_string(v))
            continue;
        sk_buf key = SK_BUF_INIT;
        sk_buf_printf(&key, "%s/%s", h->name, k);
        annotate(an->ann, key.data, json_string_value(v));
        sk_buf_free(&key);
    }
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(resp, "warnings"), i, w)
        if (json_is_string(w))
            json_array_append(warnings, w);
    if (!json_is_true(json_object_get(resp, "allowed"))) {
        *status = sk_webhook_denial_status(h->name, json_object_get(resp, "status"));
        goto out;
    }
    *response = json_incref((json_t *)resp);
    o = CALLED;
out:
    json_decref(answer);
    free(why);
    sk_buf_free(&body);
    sk_buf_free(&out);
    return o;
}

/* namespaceSelector: 1 or 0, or 0 with *err (new) when it cannot be told. */
static int ns_selected(const hook *h, const sk_hook_review *rv, const sk_webhook_attrs *a,
                       json_t **err)
{
    if (!sk_webhook_ns_selector_applies(a))
        return 1;
    if (h->ns_error) {
        *err = sk_webhook_internal_status(h->ns_error);
        return 0;
    }
    if (!h->ns_sel)
        return 1;
    const json_t *labels = NULL;
    if (sk_webhook_ns_labels_from_object(a)) {
        labels = json_object_get(json_object_get(a->object, "metadata"), "labels");
    } else if (!rv->ns_labels || rv->ns_labels(rv->ns_labels_arg, a->ns, &labels) < 0) {
        char *m = sk_go_quoted_in("namespaces ", a->ns, " not found");
        *err = sk_status_new(SK_ERR_NOT_FOUND, m, NULL, "namespaces", a->ns, NULL);
        free(m);
        return 0;
    }
    return sk_label_selector_matches(h->ns_sel, labels);
}

/* A typed AdmissionRequest's zero values where its JSON leaves a field
 * out: CEL reads kube's request as a typed object (request.name is ""
 * before a name is generated), not as a map that lacks the key. */
static void request_defaults(json_t *req)
{
    static const char *const strings[] = {"subResource", "requestSubResource", "name",
                                          "namespace"};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        if (!json_object_get(req, strings[i]))
            json_object_set_new(req, strings[i], json_string(""));
    /* a copy: the request's userInfo is shared */
    json_t *ui = json_copy(json_object_get(req, "userInfo"));
    if (!ui)
        ui = json_object();
    if (!json_object_get(ui, "username"))
        json_object_set_new(ui, "username", json_string(""));
    if (!json_object_get(ui, "uid"))
        json_object_set_new(ui, "uid", json_string(""));
    if (!json_object_get(ui, "groups"))
        json_object_set_new(ui, "groups", json_array());
    if (!json_object_get(ui, "extra"))
        json_object_set_new(ui, "extra", json_object());
    json_object_set_new(req, "userInfo", ui);
}

json_t *sk_hook_request(const sk_hook_review *rv, const sk_webhook_attrs *a,
                        const sk_resource *eq, json_t **obj, json_t **old, json_t **status)
{
    json_t *req = request_head(rv, a, eq, obj, old, status);
    if (req) {
        request_tail(req, rv);
        request_defaults(req);
    }
    return req;
}

/* Whether h's matchConditions let a through (policy/conditions.h): when
 * one could not be evaluated, the webhook's failurePolicy decides: Ignore
 * skips the webhook (0), Fail refuses the request (-1 with *status, kube's
 * Forbidden). */
static int conditions_match(const hook *h, const sk_hook_review *rv, const sk_webhook_attrs *a,
                            const sk_resource *eq, json_t **status)
{
    if (!h->conds)
        return 1;
    json_t *obj, *old;
    json_t *req = sk_hook_request(rv, a, eq, &obj, &old, status);
    if (!req)
        return -1;
    json_t *vars = json_pack("{s:o, s:o, s:o, s:n}", "request", req, "object",
                             obj ? obj : json_null(), "oldObject", old ? old : json_null(),
                             "namespaceObject");
    SK_CHECK_ALLOC(vars);
    sk_policy_authz z = {.user = rv->user,
                         .authorize = rv->authorize,
                         .authorize_arg = rv->authorize_arg,
                         .group = a->group,
                         .resource = a->resource,
                         .subresource = a->subresource,
                         .ns = a->ns,
                         .name = rv->name};
    sk_cel_eval_options opt = {
        .vars = vars, .resolve = sk_policy_authz_variable, .resolve_ctx = &z};
    sk_policy_authz_options(&z, &opt);
    char *failures = NULL;
    int rc = sk_conditions_match(h->conds, &opt, &failures);
    if (rc < 0 && h->ignore_failure) {
        rc = 0;
    } else if (rc < 0) {
        *status = sk_status_forbidden(a->group, a->resource, rv->name, failures);
    }
    free(failures);
    json_decref(vars);
    return rc;
}

/* Whether h is reached by a: 1 (*eq: NULL, or the equivalent resource
 * its rules cover), 0, or -1 with *status set when that cannot be told (in
 * ShouldCallHook's order: see the top). */
static int reaches(const hook *h, const sk_hook_review *rv, const sk_webhook_attrs *a,
                   const sk_resource **eq, json_t **status)
{
    *eq = NULL;
    if (!sk_webhook_rules_match(h->json, a) && !(*eq = sk_webhook_equivalent_match(h->json, a)))
        return 0;
    json_t *ns_err = NULL;
    if (!ns_selected(h, rv, a, &ns_err) && !ns_err)
        return 0;
    if (!h->obj_error && !sk_webhook_object_selected(h->obj_sel, a)) {
        json_decref(ns_err);
        return 0;
    }
    if (ns_err || h->obj_error) {
        *status = ns_err ? ns_err : sk_webhook_internal_status(h->obj_error);
        return -1;
    }
    return conditions_match(h, rv, a, *eq, status);
}

/* A dry run may only reach webhooks without side effects: NULL, or the
 * Status refusing it. */
static json_t *dry_run_refusal(const hook *h, const sk_hook_review *rv)
{
    return rv->dry_run && !h->dry_run_safe ? sk_webhook_dry_run_status(h->name) : NULL;
}

/* Go's name for the JSON type of v, as encoding/json words an unmarshal
 * error. */
static const char *go_json_type(const json_t *v)
{
    return json_is_object(v)   ? "object"
           : json_is_string(v) ? "string"
           : json_is_number(v) ? "number"
                               : "bool";
}

/* Applies a mutating webhook's answer to *obj: 1 if it changed it, 0 if
 * not, -1 with *status set. */
static int apply_patch(const hook *h, const json_t *resp, annotator *an, json_t **obj,
                       json_t **status)
{
    const char *patch = json_string_value(json_object_get(resp, "patch"));
    if (!patch || !*patch)
        return 0;
    /* a v1beta1 answer's patch is a JSON patch whatever it says */
    const char *type =
        h->v1beta1 ? "JSONPatch" : json_string_value(json_object_get(resp, "patchType"));
    if (!type || strcmp(type, "JSONPatch") != 0)
        return failed(h, sk_go_quoted_in("unsupported patch type ", type ? type : "", ""), an,
                      status) == SKIPPED
                   ? 0
                   : -1;
    size_t len;
    unsigned char *raw = sk_typed_base64_decode(patch, &len);
    if (!raw)
        return failed(h,
                      strdup("received undecodable patch in webhook response: illegal base64 "
                             "data"),
                      an, status) == SKIPPED
                   ? 0
                   : -1;
    json_error_t jerr;
    json_t *ops = json_loadb((const char *)raw, len, JSON_DECODE_ANY, &jerr);
    int rc = 0;
    /* what jsonpatch.DecodePatch refuses is kube's internal error, whatever
     * the failurePolicy; null decodes to no operations */
    if (!ops || !(json_is_array(ops) || json_is_null(ops))) {
        sk_buf m = SK_BUF_INIT;
        if (ops)
            sk_buf_printf(&m, "json: cannot unmarshal %s into Go value of type jsonpatch.Patch",
                          go_json_type(ops));
        else
            sk_buf_puts(&m, jerr.text);
        *status = sk_webhook_internal_status(m.data);
        sk_buf_free(&m);
        rc = -1;
        goto out;
    }
    if (json_array_size(ops) == 0)
        goto out;
    if (!*obj) {
        char *m = sk_go_quoted_in("admission webhook ", h->name,
                         " attempted to modify the object, which is not supported for this "
                         "operation");
        *status = sk_webhook_internal_status(m);
        free(m);
        rc = -1;
        goto out;
    }
    json_t *patched = NULL;
    char *msg = NULL;
    if (sk_patch_apply(SK_PATCH_JSON, NULL, *obj, (const char *)raw, len, &patched, &msg) !=
        SK_OK) {
        *status = sk_webhook_internal_status(msg ? msg : "the webhook's patch does not apply");
        free(msg);
        rc = -1;
        goto out;
    }
    rc = !json_equal(patched, *obj);
    json_decref(*obj);
    *obj = patched;
out:
    json_decref(ops);
    free(raw);
    return rc;
}

/* kube's mutation annotation: which webhook of which configuration ran
 * in this round at this index, and whether it changed the object. */
static void annotate_mutation(json_t *ann, const hook *h, int round, size_t idx, int mutated)
{
    char key[96];
    snprintf(key, sizeof key, "mutation.webhook.admission.k8s.io/round_%d_index_%zu", round, idx);
    json_t *v = json_pack("{s:s, s:s, s:b}", "configuration", h->config, "webhook", h->name,
                          "mutated", mutated);
    char *text = json_dumps(v, JSON_COMPACT);
    SK_CHECK_ALLOC(text);
    annotate(ann, key, text);
    free(text);
    json_decref(v);
}

/* Calls every mutating webhook of s reaching rv in order; in round 1, only
 * those flagged in again. Patches *obj, flags in again the IfNeeded
 * webhooks called before a change, and sets *changed. */
static json_t *run(sk_hook_client *c, const sk_hook_set *s, const sk_hook_review *rv, json_t **obj,
                   json_t *warnings, json_t *ann, int round, unsigned char *again, int *changed)
{
    json_t *status = NULL;
    size_t n = s->n[MUTATING];
    const hook *hooks = s->hooks[MUTATING];
    /* IfNeeded webhooks called since the last change */
    unsigned char *since = calloc(n, 1);
    SK_CHECK_ALLOC(since);
    char *request = NULL; /* of *obj as it is now */
    for (size_t idx = 0; idx < n; idx++) {
        const hook *h = &hooks[idx];
        if (round == 1 && !again[idx])
            continue;
        sk_webhook_attrs a = rv->a;
        a.object = *obj;
        const sk_resource *eq = NULL;
        int r = reaches(h, rv, &a, &eq, &status);
        if (r < 0)
            goto out;
        if (r == 0)
            continue;
        /* kube annotates every call from here on, refused or failed */
        annotator an = {.ann = ann};
        snprintf(an.open_key, sizeof an.open_key,
                 "failed-open.mutation.webhook.admission.k8s.io/round_%d_index_%zu", round, idx);
        if ((status = dry_run_refusal(h, rv)) != NULL) {
            annotate_mutation(ann, h, round, idx, 0);
            goto out;
        }
        /* the request's own review is kept for the next webhook; one in
         * an equivalent version is this webhook's alone */
        char *own = eq ? request_text(rv, &a, eq, &status) : NULL;
        if (eq && !own)
            goto out;
        if (!eq && !request)
            request = request_text(rv, &a, NULL, &status);
        json_t *resp = NULL;
        enum outcome o = post(c, h, rv, eq ? own : request, 1, warnings, &an, &resp, &status);
        free(own);
        if (o == REFUSED)
            goto out;
        int ch = 0;
        if (o == CALLED && eq && !rv->own_kind && *obj) {
            /* patched in the webhook's version, converted back (a DELETE's
             * patch is refused below, as for any webhook) */
            json_t *theirs = NULL, *back = NULL;
            ch = converted(rv, rv->res, eq, *obj, &theirs, &status) < 0
                     ? -1
                     : apply_patch(h, resp, &an, &theirs, &status);
            if (ch > 0 && converted(rv, eq, rv->res, theirs, &back, &status) < 0)
                ch = -1;
            if (ch > 0) {
                ch = !json_equal(back, *obj);
                json_decref(*obj);
                *obj = back;
            }
            json_decref(theirs);
        } else if (o == CALLED) {
            ch = apply_patch(h, resp, &an, obj, &status);
        }
        json_decref(resp);
        annotate_mutation(ann, h, round, idx, ch > 0);
        if (ch < 0)
            goto out;
        if (ch) {
            if (rv->settle)
                rv->settle(rv->settle_arg, *obj);
            free(request);
            request = NULL;
            *changed = 1;
            for (size_t j = 0; j < n; j++)
                again[j] |= since[j];
            memset(since, 0, n);
        }
        if (o == CALLED && h->reinvoke)
            since[idx] = 1;
    }
out:
    free(request);
    free(since);
    return status;
}

json_t *sk_hook_mutate(sk_hook_client *c, const sk_hook_set *s, const sk_hook_review *rv,
                       json_t **obj, json_t *warnings, json_t *annotations, int *changed)
{
    size_t n = s->n[MUTATING];
    if (n == 0 || sk_webhook_exempt(&rv->a))
        return NULL;
    unsigned char *again = calloc(n, 1);
    SK_CHECK_ALLOC(again);
    json_t *status = run(c, s, rv, obj, warnings, annotations, 0, again, changed);
    if (!status && *changed) {
        /* round 1 reinvokes each flagged webhook once; its own changes
         * flag nothing further */
        status = run(c, s, rv, obj, warnings, annotations, 1, again, changed);
    }
    free(again);
    return status;
}

/* One validating webhook's call, on a thread of its own. */
typedef struct validation {
    sk_hook_client *c;
    const hook *h;
    const sk_hook_review *rv;
    const char *request;
    char *own;        /* the request in an equivalent version, or NULL */
    json_t *warnings; /* its own */
    annotator an;     /* its own annotations, merged after the join */
    json_t *status;   /* its refusal, if any */
    pthread_t thread;
    int threaded;
} validation;

static void *validate_one(void *arg)
{
    validation *v = arg;
    if ((v->status = dry_run_refusal(v->h, v->rv)) == NULL) {
        json_t *resp = NULL;
        post(v->c, v->h, v->rv, v->request, 0, v->warnings, &v->an, &resp, &v->status);
        json_decref(resp);
    }
    return NULL;
}

json_t *sk_hook_validate(sk_hook_client *c, const sk_hook_set *s, const sk_hook_review *rv,
                         json_t *warnings, json_t *annotations)
{
    size_t n = s->n[VALIDATING];
    if (n == 0 || sk_webhook_exempt(&rv->a))
        return NULL;
    /* Which webhooks the request reaches is decided first, as kube does,
     * then they are called at once, each on its own thread (the last on
     * this one): the request waits for the slowest, not for the sum. */
    validation *v = calloc(n, sizeof *v);
    SK_CHECK_ALLOC(v);
    size_t m = 0;
    json_t *status = NULL;
    char *request = NULL;
    for (size_t i = 0; i < n; i++) {
        const sk_resource *eq = NULL;
        int r = reaches(&s->hooks[VALIDATING][i], rv, &rv->a, &eq, &status);
        if (r < 0)
            goto out;
        if (r == 0)
            continue;
        v[m] = (validation){.c = c,
                            .h = &s->hooks[VALIDATING][i],
                            .rv = rv,
                            .warnings = json_array(),
                            .an.ann = json_object()};
        /* kube's index is among the webhooks the request reaches */
        snprintf(v[m].an.open_key, sizeof v[m].an.open_key,
                 "failed-open.validating.webhook.admission.k8s.io/round_0_index_%zu", m);
        /* in an equivalent version: its own review */
        int unconverted = eq && !(v[m].own = request_text(rv, &rv->a, eq, &status));
        m++;
        if (unconverted)
            goto out;
    }
    for (size_t i = 0; i < m; i++) {
        if (!v[i].own && !request)
            request = request_text(rv, &rv->a, NULL, &status);
        v[i].request = v[i].own ? v[i].own : request;
    }
    for (size_t i = 0; i + 1 < m; i++)
        v[i].threaded = pthread_create(&v[i].thread, NULL, validate_one, &v[i]) == 0;
    for (size_t i = 0; i < m; i++)
        if (!v[i].threaded)
            validate_one(&v[i]);
    for (size_t i = 0; i < m; i++)
        if (v[i].threaded)
            pthread_join(v[i].thread, NULL);
    /* kube answers with whichever refusal came first; the first in order
     * is the same answer made deterministic */
    for (size_t i = 0; i < m; i++) {
        json_array_extend(warnings, v[i].warnings);
        const char *key;
        json_t *value;
        json_object_foreach(v[i].an.ann, key, value)
            annotate(annotations, key, json_string_value(value));
        if (!status)
            status = json_incref(v[i].status);
    }
out:
    for (size_t i = 0; i < m; i++) {
        json_decref(v[i].warnings);
        json_decref(v[i].an.ann);
        json_decref(v[i].status);
        free(v[i].own);
    }
    free(request);
    free(v);
    return status;
}
