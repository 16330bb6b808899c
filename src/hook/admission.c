/*
 * admission.c - see admission.h. The steps of one call follow kube's
 * dispatchers (mutating/dispatcher.go, validating/dispatcher.go): a dry run
 * reaching a webhook with side effects is refused whatever its
 * failurePolicy; a webhook that cannot be called, or answers what is not
 * an AdmissionReview, is a failure its failurePolicy decides (Ignore: the
 * request goes on, logged); a webhook that answers "not allowed" refuses
 * the request; a patch that does not apply is an internal error.
 *
 * clientConfig.service is reached as kube's endpoint routing does: an
 * address of the Service's ready endpoints (resolved by the caller, from
 * the stored Service and EndpointSlices: no kube-proxy runs here), the
 * certificate checked for NAME.NAMESPACE.svc.
 */
#include "hook/admission.h"
#include "core/buf.h"
#include "core/check.h"
#include "core/log.h"
#include "core/util.h"
#include "kube/patch.h"
#include "kube/typed.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum outcome {
    CALLED,  /* allowed (and patched, for a mutating webhook) */
    SKIPPED, /* a failure its failurePolicy Ignore lets through */
    REFUSED, /* *status says why */
};

/* The failure of calling hook (reason: why, stolen): under Ignore the
 * request goes on, else its Status. */
static enum outcome failed(const json_t *hook, char *reason, json_t **status)
{
    const char *name = json_string_value(json_object_get(hook, "name"));
    const char *policy = json_string_value(json_object_get(hook, "failurePolicy"));
    enum outcome o;
    if (policy && strcmp(policy, "Ignore") == 0) {
        sk_log_warn("webhooks: failed calling webhook \"%s\", failing open: %s", name, reason);
        o = SKIPPED;
    } else {
        *status = sk_webhook_failure_status(name, reason);
        o = REFUSED;
    }
    free(reason);
    return o;
}

/* before + text + after as a new string; text quoted as Go's %q when
 * quote is set. */
static char *say(const char *before, const char *text, int quote, const char *after)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_puts(&m, before);
    if (quote)
        sk_buf_go_quoted(&m, text);
    else
        sk_buf_puts(&m, text);
    sk_buf_puts(&m, after);
    return sk_buf_steal(&m, NULL);
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

/* AdmissionReview v1 for rv (its object as a says), with uid. New. */
static json_t *review_of(const sk_hook_review *rv, const sk_webhook_attrs *a, const char *uid)
{
    json_t *req = json_object();
    json_object_set_new(req, "uid", json_string(uid));
    json_object_set_new(req, "kind", gvk(rv->kind_group, rv->kind_version, rv->kind));
    json_object_set_new(req, "resource", gvr(a));
    if (*a->subresource)
        json_object_set_new(req, "subResource", json_string(a->subresource));
    /* matchPolicy Equivalent never converts here: every webhook is sent the
     * request as it was made */
    json_object_set_new(req, "requestKind", gvk(rv->kind_group, rv->kind_version, rv->kind));
    json_object_set_new(req, "requestResource", gvr(a));
    if (*a->subresource)
        json_object_set_new(req, "requestSubResource", json_string(a->subresource));
    if (rv->name && *rv->name)
        json_object_set_new(req, "name", json_string(rv->name));
    if (*a->ns)
        json_object_set_new(req, "namespace", json_string(a->ns));
    json_object_set_new(req, "operation", json_string(a->operation));
    /* copied, never shared: validating webhooks build reviews on threads
     * of their own */
    json_object_set_new(req, "userInfo", json_deep_copy(rv->user_info));
    json_object_set_new(req, "object", a->object ? json_deep_copy(a->object) : json_null());
    json_object_set_new(req, "oldObject",
                        a->old_object ? json_deep_copy(a->old_object) : json_null());
    json_object_set_new(req, "dryRun", json_boolean(rv->dry_run));
    json_object_set_new(req, "options", rv->options ? json_deep_copy(rv->options) : json_null());
    return json_pack("{s:s, s:s, s:o}", "kind", "AdmissionReview", "apiVersion",
                     "admission.k8s.io/v1", "request", req);
}

static int timeout_of(const json_t *hook)
{
    const json_t *t = json_object_get(hook, "timeoutSeconds");
    json_int_t s = json_is_integer(t) ? json_integer_value(t) : 10;
    return s < 1 ? 1 : s > 30 ? 30 : (int)s;
}

/* Sends hook the review of rv as *a says; on CALLED, *response is the
 * webhook's AdmissionResponse (new). */
static enum outcome post(sk_hook_client *c, const json_t *hook, const sk_hook_review *rv,
                         const sk_webhook_attrs *a, int mutating, json_t *warnings,
                         json_t **response, json_t **status)
{
    const char *name = json_string_value(json_object_get(hook, "name"));
    const json_t *cc = json_object_get(hook, "clientConfig");
    const char *url = json_string_value(json_object_get(cc, "url"));
    sk_buf svc_url = SK_BUF_INIT, connect_to = SK_BUF_INIT;
    if (!url) {
        /* by Service: the stored Service's endpoints, the certificate
         * checked for NAME.NAMESPACE.svc, as kube's endpoint routing */
        const json_t *svc = json_object_get(cc, "service");
        const char *sns = json_string_value(json_object_get(svc, "namespace"));
        const char *sname = json_string_value(json_object_get(svc, "name"));
        const char *path = json_string_value(json_object_get(svc, "path"));
        const json_t *port = json_object_get(svc, "port");
        int sport = json_is_integer(port) ? (int)json_integer_value(port) : 443;
        char *addr = NULL, *why = NULL;
        if (!sns || !sname || !rv->resolve ||
            rv->resolve(rv->resolve_arg, sns, sname, sport, &addr, &why) < 0) {
            char *reason = say("could not get REST client: ",
                               why ? why : "the service cannot be resolved", 0, "");
            free(why);
            return failed(hook, reason, status);
        }
        sk_buf_printf(&svc_url, "https://%s.%s.svc:%d%s", sname, sns, sport, path ? path : "");
        int v6 = strchr(addr, ':') != strrchr(addr, ':');
        const char *colon = strrchr(addr, ':');
        sk_buf_printf(&connect_to, "%s.%s.svc:%d:%s%.*s%s%s", sname, sns, sport, v6 ? "[" : "",
                      (int)(colon - addr), addr, v6 ? "]" : "", colon);
        free(addr);
        url = svc_url.data;
    }
    unsigned char *ca = NULL;
    size_t ca_len = 0;
    const char *bundle = json_string_value(json_object_get(cc, "caBundle"));
    if (bundle && *bundle && !(ca = sk_typed_base64_decode(bundle, &ca_len))) {
        sk_buf_free(&svc_url);
        sk_buf_free(&connect_to);
        return failed(hook, strdup("could not get REST client: caBundle is not base64"), status);
    }
    char uid[37];
    sk_uuid4(uid);
    json_t *review = review_of(rv, a, uid);
    char *body = json_dumps(review, JSON_COMPACT);
    json_decref(review);
    int timeout = timeout_of(hook);
    sk_buf target = SK_BUF_INIT, out = SK_BUF_INIT;
    /* kube tells the webhook its deadline so */
    sk_buf_printf(&target, "%s?timeout=%ds", url, timeout);
    sk_hook_post p = {
        .url = target.data,
        .connect_to = connect_to.data,
        .ca = ca,
        .ca_len = ca_len,
        .timeout_s = timeout,
        .body = body,
        .body_len = strlen(body),
    };
    long http_status = 0;
    char *why = NULL;
    enum outcome o = REFUSED;
    json_t *answer = NULL;
    if (sk_hook_client_post(c, &p, &http_status, &out, &why) != SK_OK) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m, "failed to call webhook: Post \"%s\": %s", target.data, why);
        o = failed(hook, sk_buf_steal(&m, NULL), status);
        goto out;
    }
    if (http_status < 200 || http_status > 299) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m,
                      "failed to call webhook: the server responded with the status code %ld "
                      "but did not return more information",
                      http_status);
        o = failed(hook, sk_buf_steal(&m, NULL), status);
        goto out;
    }
    json_error_t jerr;
    answer = json_loadb(out.data ? out.data : "", out.len, 0, &jerr);
    const json_t *resp = NULL;
    char *msg = NULL;
    if (!answer) {
        o = failed(hook, say("failed to call webhook: ", jerr.text, 0, ""), status);
        goto out;
    }
    if (sk_webhook_check_response(answer, uid, mutating, &resp, &msg) != SK_OK) {
        o = failed(hook, say("received invalid webhook response: ", msg, 0, ""), status);
        free(msg);
        goto out;
    }
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(resp, "warnings"), i, w)
        if (json_is_string(w))
            json_array_append(warnings, w);
    if (!json_is_true(json_object_get(resp, "allowed"))) {
        *status = sk_webhook_denial_status(name, json_object_get(resp, "status"));
        goto out;
    }
    *response = json_incref((json_t *)resp);
    o = CALLED;
out:
    json_decref(answer);
    free(why);
    free(body);
    free(ca);
    sk_buf_free(&target);
    sk_buf_free(&out);
    sk_buf_free(&svc_url);
    sk_buf_free(&connect_to);
    return o;
}

/* Whether hook is reached by a (rules and selectors); -1 with *status set
 * when that cannot be told. */
static int reaches(const json_t *hook, const sk_hook_review *rv, const sk_webhook_attrs *a,
                   json_t **status)
{
    if (!sk_webhook_rules_match(hook, a))
        return 0;
    char *msg = NULL;
    int rc = 1;
    if (sk_webhook_needs_ns_labels(hook, a)) {
        const json_t *labels = NULL;
        if (sk_webhook_ns_labels_from_object(a)) {
            labels = json_object_get(json_object_get(a->object, "metadata"), "labels");
        } else if (rv->ns_missing) {
            sk_buf m = SK_BUF_INIT;
            sk_buf_printf(&m, "namespaces \"%s\" not found", a->ns);
            *status = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:{s:s, s:s}, s:i}", "kind",
                                "Status", "apiVersion", "v1", "metadata", "status", "Failure",
                                "message", m.data, "reason", "NotFound", "details", "name", a->ns,
                                "kind", "namespaces", "code", 404);
            sk_buf_free(&m);
            return -1;
        } else {
            labels = rv->ns_labels;
        }
        rc = sk_webhook_selector_matches(json_object_get(hook, "namespaceSelector"), labels, &msg);
    }
    if (rc == 1)
        rc = sk_webhook_object_selected(hook, a, &msg);
    if (rc < 0) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m, "Internal error occurred: %s", msg ? msg : "invalid selector");
        *status = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                            "v1", "metadata", "status", "Failure", "message", m.data, "reason",
                            "InternalError", "code", 500);
        sk_buf_free(&m);
    }
    free(msg);
    return rc;
}

/* A dry run may only reach webhooks without side effects: NULL, or the
 * Status refusing it. */
static json_t *dry_run_refusal(const json_t *hook, const sk_hook_review *rv)
{
    if (!rv->dry_run)
        return NULL;
    const char *side = json_string_value(json_object_get(hook, "sideEffects"));
    if (side && (strcmp(side, "None") == 0 || strcmp(side, "NoneOnDryRun") == 0))
        return NULL;
    return sk_webhook_dry_run_status(json_string_value(json_object_get(hook, "name")));
}

static json_t *internal_error(const char *msg)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "Internal error occurred: %s", msg);
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:{s:[{s:s}]}, s:i}", "kind", "Status",
                           "apiVersion", "v1", "metadata", "status", "Failure", "message", m.data,
                           "reason", "InternalError", "details", "causes", "message", msg, "code",
                           500);
    sk_buf_free(&m);
    return st;
}

/* Applies a mutating webhook's answer to *obj: 1 if it changed it, 0 if
 * not, REFUSED-style -1 with *status set. */
static int apply_patch(const json_t *hook, const json_t *resp, json_t **obj, json_t **status)
{
    const char *patch = json_string_value(json_object_get(resp, "patch"));
    if (!patch || !*patch)
        return 0;
    const char *name = json_string_value(json_object_get(hook, "name"));
    const char *type = json_string_value(json_object_get(resp, "patchType"));
    if (!type || strcmp(type, "JSONPatch") != 0) {
        char *why = say("unsupported patch type ", type ? type : "", 1, "");
        return failed(hook, why, status) == SKIPPED ? 0 : -1;
    }
    size_t len;
    unsigned char *raw = sk_typed_base64_decode(patch, &len);
    if (!raw)
        return failed(hook,
                      strdup("received undecodable patch in webhook response: illegal base64 "
                             "data"),
                      status) == SKIPPED
                   ? 0
                   : -1;
    json_t *ops = json_loadb((const char *)raw, len, 0, NULL);
    int rc = 0;
    if (!json_is_array(ops)) {
        rc = failed(hook,
                    strdup("received undecodable patch in webhook response: not a JSON patch"),
                    status) == SKIPPED
                 ? 0
                 : -1;
        goto out;
    }
    if (json_array_size(ops) == 0)
        goto out;
    if (!*obj) {
        char *m = say("admission webhook ", name, 1,
                      " attempted to modify the object, which is not supported for this "
                      "operation");
        *status = internal_error(m);
        free(m);
        rc = -1;
        goto out;
    }
    json_t *patched = NULL;
    char *msg = NULL;
    if (sk_patch_apply(SK_PATCH_JSON, NULL, *obj, (const char *)raw, len, &patched, &msg) !=
        SK_OK) {
        *status = internal_error(msg ? msg : "the webhook's patch does not apply");
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

/* Calls every webhook of configs reaching rv in order; in round 1, only
 * those flagged in again. For mutating: patches *obj, flags in again the
 * IfNeeded webhooks called before a change, and sets *changed. */
static json_t *run(sk_hook_client *c, const json_t *configs, const sk_hook_review *rv, int mutating,
                   json_t **obj, json_t *warnings, int round, unsigned char *again, size_t n_again,
                   int *changed)
{
    json_t *status = NULL;
    size_t k = 0; /* the webhook's index across configurations */
    size_t ci, hi;
    json_t *config, *hook;
    /* IfNeeded webhooks called since the last change */
    unsigned char *since = calloc(n_again ? n_again : 1, 1);
    json_array_foreach(configs, ci, config)
    {
        json_array_foreach(json_object_get(config, "webhooks"), hi, hook)
        {
            size_t idx = k++;
            if (round == 1 && !again[idx])
                continue;
            sk_webhook_attrs a = rv->a;
            if (mutating)
                a.object = *obj;
            int r = reaches(hook, rv, &a, &status);
            if (r < 0)
                goto out;
            if (r == 0)
                continue;
            if ((status = dry_run_refusal(hook, rv)) != NULL)
                goto out;
            json_t *resp = NULL;
            enum outcome o = post(c, hook, rv, &a, mutating, warnings, &resp, &status);
            if (o == REFUSED)
                goto out;
            if (o == CALLED && mutating) {
                int ch = apply_patch(hook, resp, obj, &status);
                json_decref(resp);
                if (ch < 0)
                    goto out;
                if (ch) {
                    if (rv->settle)
                        rv->settle(rv->settle_arg, *obj);
                    *changed = 1;
                    for (size_t j = 0; j < n_again; j++)
                        again[j] |= since[j];
                    memset(since, 0, n_again);
                }
                const char *policy =
                    json_string_value(json_object_get(hook, "reinvocationPolicy"));
                if (policy && strcmp(policy, "IfNeeded") == 0)
                    since[idx] = 1;
            } else {
                json_decref(resp);
            }
        }
    }
out:
    free(since);
    return status;
}

static size_t count_hooks(const json_t *configs)
{
    size_t n = 0, i;
    json_t *config;
    json_array_foreach(configs, i, config)
        n += json_array_size(json_object_get(config, "webhooks"));
    return n;
}

json_t *sk_hook_mutate(sk_hook_client *c, const json_t *configs, const sk_hook_review *rv,
                       json_t **obj, json_t *warnings)
{
    if (sk_webhook_exempt(&rv->a))
        return NULL;
    size_t n = count_hooks(configs);
    if (n == 0)
        return NULL;
    unsigned char *again = calloc(n, 1);
    int changed = 0;
    json_t *status = run(c, configs, rv, 1, obj, warnings, 0, again, n, &changed);
    if (!status && changed) {
        /* round 1 reinvokes each flagged webhook once; its own changes
         * flag nothing further */
        int ignored = 0;
        status = run(c, configs, rv, 1, obj, warnings, 1, again, n, &ignored);
    }
    free(again);
    return status;
}

/* One validating webhook's call, on a thread of its own. */
typedef struct validation {
    sk_hook_client *c;
    const json_t *hook;
    const sk_hook_review *rv;
    json_t *warnings; /* its own */
    json_t *status;   /* its refusal, if any */
    pthread_t thread;
    int threaded;
} validation;

static void *validate_one(void *arg)
{
    validation *v = arg;
    if ((v->status = dry_run_refusal(v->hook, v->rv)) == NULL) {
        json_t *resp = NULL;
        post(v->c, v->hook, v->rv, &v->rv->a, 0, v->warnings, &resp, &v->status);
        json_decref(resp);
    }
    return NULL;
}

json_t *sk_hook_validate(sk_hook_client *c, const json_t *configs, const sk_hook_review *rv,
                         json_t *warnings)
{
    size_t n = count_hooks(configs);
    if (sk_webhook_exempt(&rv->a) || n == 0)
        return NULL;
    /* Which webhooks the request reaches is decided first, as kube does,
     * then they are called at once, each on its own thread (the last on
     * this one): the request waits for the slowest, not for the sum. */
    validation *v = calloc(n, sizeof *v);
    SK_CHECK_ALLOC(v);
    size_t m = 0, ci, hi;
    json_t *config, *hook, *status = NULL;
    json_array_foreach(configs, ci, config)
    {
        json_array_foreach(json_object_get(config, "webhooks"), hi, hook)
        {
            int r = reaches(hook, rv, &rv->a, &status);
            if (r < 0)
                goto out;
            if (r == 0)
                continue;
            v[m] = (validation){.c = c, .hook = hook, .rv = rv, .warnings = json_array()};
            m++;
        }
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
        if (!status)
            status = json_incref(v[i].status);
    }
out:
    for (size_t i = 0; i < m; i++) {
        json_decref(v[i].warnings);
        json_decref(v[i].status);
    }
    free(v);
    return status;
}
