/*
 * webhook.c - see webhook.h. Matching follows predicates/rules,
 * predicates/namespace and predicates/object; answers follow
 * request/admissionreview.go and errors/statuserror.go. A label selector is
 * turned into selector text (kube/scale.h renders metav1.LabelSelector as
 * kube does) and parsed by kube/selector.h, so there is one selector
 * implementation.
 */
#include "kube/webhook.h"
#include "core/buf.h"
#include "kube/scale.h"
#include "kube/selector.h"
#include "kube/status.h"
#include "kube/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_string(const json_t *obj, const char *field, const char *want)
{
    const char *v = json_string_value(json_object_get(obj, field));
    return v && strcmp(v, want) == 0;
}

static int listed(const json_t *items, const char *want)
{
    size_t i;
    json_t *v;
    json_array_foreach(items, i, v)
    {
        const char *s = json_string_value(v);
        if (s && (strcmp(s, "*") == 0 || strcmp(s, want) == 0))
            return 1;
    }
    return 0;
}

static int is_namespace_resource(const sk_webhook_attrs *a)
{
    return !*a->group && strcmp(a->version, "v1") == 0 && strcmp(a->resource, "namespaces") == 0;
}

static int scope_matches(const json_t *rule, const sk_webhook_attrs *a)
{
    const char *scope = json_string_value(json_object_get(rule, "scope"));
    if (!scope || strcmp(scope, "*") == 0)
        return 1;
    /* a Namespace's own requests carry its name as their namespace */
    if (strcmp(scope, "Namespaced") == 0)
        return !is_namespace_resource(a) && *a->ns;
    if (strcmp(scope, "Cluster") == 0)
        return is_namespace_resource(a) || !*a->ns;
    return 0;
}

static int resource_matches(const json_t *rule, const sk_webhook_attrs *a)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(rule, "resources"), i, v)
    {
        const char *s = json_string_value(v);
        if (!s)
            continue;
        const char *slash = strchr(s, '/');
        size_t rlen = slash ? (size_t)(slash - s) : strlen(s);
        const char *sub = slash ? slash + 1 : "";
        int res_ok = (rlen == 1 && s[0] == '*') ||
                     (strlen(a->resource) == rlen && strncmp(s, a->resource, rlen) == 0);
        int sub_ok = strcmp(sub, "*") == 0 || strcmp(sub, a->subresource) == 0;
        if (res_ok && sub_ok)
            return 1;
    }
    return 0;
}

static int rule_matches(const json_t *rule, const sk_webhook_attrs *a)
{
    return scope_matches(rule, a) && listed(json_object_get(rule, "operations"), a->operation) &&
           listed(json_object_get(rule, "apiGroups"), a->group) &&
           listed(json_object_get(rule, "apiVersions"), a->version) && resource_matches(rule, a);
}

/* A NamedRuleWithOperations' resourceNames: empty lists every name. */
static int name_listed(const json_t *rule, const char *name)
{
    const json_t *names = json_object_get(rule, "resourceNames");
    size_t i;
    json_t *v;
    if (json_array_size(names) == 0)
        return 1;
    json_array_foreach(names, i, v)
        if (json_is_string(v) && name && strcmp(json_string_value(v), name) == 0)
            return 1;
    return 0;
}

int sk_webhook_rule_list_match(const json_t *rules, const sk_webhook_attrs *a, const char *name)
{
    size_t i;
    json_t *rule;
    json_array_foreach(rules, i, rule)
        if (rule_matches(rule, a) && name_listed(rule, name))
            return 1;
    return 0;
}

int sk_webhook_rules_match(const json_t *hook, const sk_webhook_attrs *a)
{
    return sk_webhook_rule_list_match(json_object_get(hook, "rules"), a, NULL);
}

size_t sk_webhook_equivalents(const sk_resource *r, const char *subresource,
                              const sk_resource **out, size_t max)
{
    size_t n_all = 0, n = 0;
    const sk_resource *const *all = sk_registry_all(&n_all);
    for (size_t i = 0; i < n_all && n < max; i++)
        if (all[i] != r && strcmp(all[i]->storage, r->storage) == 0 &&
            (!*subresource || sk_registry_subresource(all[i], subresource)))
            out[n++] = all[i];
    return n;
}

const sk_resource *sk_webhook_equivalent_match(const json_t *hook, const sk_webhook_attrs *a)
{
    if (is_string(hook, "matchPolicy", "Exact"))
        return NULL;
    return sk_webhook_rule_list_equivalent(json_object_get(hook, "rules"), a, NULL);
}

const sk_resource *sk_webhook_rule_list_equivalent(const json_t *rules, const sk_webhook_attrs *a,
                                                   const char *name)
{
    if (a->n_equivalents == 0)
        return NULL;
    size_t i;
    json_t *rule;
    /* earlier rules first, as kube honours them */
    json_array_foreach(rules, i, rule)
    {
        if (!name_listed(rule, name))
            continue;
        for (size_t j = 0; j < a->n_equivalents; j++) {
            const sk_resource *e = a->equivalents[j];
            sk_webhook_attrs b = *a;
            b.group = e->group;
            b.version = e->version;
            b.resource = e->resource;
            if (rule_matches(rule, &b))
                return e;
        }
    }
    return NULL;
}

int sk_webhook_is_configuration(const char *group, const char *resource)
{
    return strcmp(group, "admissionregistration.k8s.io") == 0 &&
           (strcmp(resource, "validatingwebhookconfigurations") == 0 ||
            strcmp(resource, "mutatingwebhookconfigurations") == 0 ||
            strcmp(resource, "validatingadmissionpolicies") == 0 ||
            strcmp(resource, "validatingadmissionpolicybindings") == 0);
}

int sk_webhook_exempt(const sk_webhook_attrs *a)
{
    return sk_webhook_is_configuration(a->group, a->resource) ||
           (strcmp(a->group, "admissionregistration.k8s.io") == 0 &&
            (strcmp(a->resource, "mutatingadmissionpolicies") == 0 ||
             strcmp(a->resource, "mutatingadmissionpolicybindings") == 0));
}

static int selector_empty(const json_t *selector)
{
    return json_object_size(json_object_get(selector, "matchLabels")) == 0 &&
           json_array_size(json_object_get(selector, "matchExpressions")) == 0;
}

sk_err sk_webhook_selector_compile(const json_t *selector, sk_label_selector **out, char **msg)
{
    if (!json_is_object(selector) || selector_empty(selector)) {
        *out = NULL;
        return SK_OK;
    }
    char *text = sk_scale_selector_string(selector, 0);
    sk_err err = sk_label_selector_parse(text, out, msg);
    free(text);
    return err;
}

int sk_webhook_ns_labels_from_object(const sk_webhook_attrs *a)
{
    return is_namespace_resource(a) && !*a->subresource &&
           (strcmp(a->operation, "CREATE") == 0 || strcmp(a->operation, "UPDATE") == 0);
}

int sk_webhook_ns_selector_applies(const sk_webhook_attrs *a)
{
    /* cluster-scoped requests are never exempted by a namespaceSelector */
    return *a->ns || is_namespace_resource(a);
}

static const json_t *labels_of(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "labels");
}

int sk_webhook_object_selected(const sk_label_selector *sel, const sk_webhook_attrs *a)
{
    return !sel || (a->object && sk_label_selector_matches(sel, labels_of(a->object))) ||
           (a->old_object && sk_label_selector_matches(sel, labels_of(a->old_object)));
}

static sk_err bad_response(char **msg, const char *fmt, const char *a1, const char *a2)
{
    sk_buf b = SK_BUF_INIT;
    sk_buf_printf(&b, fmt, a1, a2);
    *msg = sk_buf_steal(&b, NULL);
    return SK_ERR_BAD_REQUEST;
}

sk_err sk_webhook_check_response(const json_t *review, const char *uid, int mutating, int v1beta1,
                                 const json_t **response, char **msg)
{
    const json_t *r = json_object_get(review, "response");
    if (!json_is_object(r))
        return bad_response(msg, "webhook response was absent", "", "");
    /* v1beta1 answers were never checked for their uid, kind or patch
     * type: kube still does not */
    if (v1beta1) {
        *response = r;
        return SK_OK;
    }
    const char *got = json_string_value(json_object_get(r, "uid"));
    if (!got || strcmp(got, uid) != 0)
        return bad_response(msg, "expected response.uid=\"%s\", got \"%s\"", uid, got ? got : "");
    const char *av = json_string_value(json_object_get(review, "apiVersion"));
    const char *kind = json_string_value(json_object_get(review, "kind"));
    if (!av || !kind || strcmp(av, "admission.k8s.io/v1") != 0 ||
        strcmp(kind, "AdmissionReview") != 0) {
        sk_buf b = SK_BUF_INIT;
        sk_buf_printf(&b, "admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s",
                      av ? av : "/", kind ? kind : "");
        sk_err e = bad_response(msg, "expected webhook response of %s", b.data, "");
        sk_buf_free(&b);
        return e;
    }
    const json_t *patch = json_object_get(r, "patch");
    const json_t *type = json_object_get(r, "patchType");
    int has_patch = json_is_string(patch) && json_string_length(patch) > 0;
    int has_type = type && !json_is_null(type);
    if (mutating) {
        if (has_patch && !has_type)
            return bad_response(msg, "webhook returned response.patch but not response.patchType",
                                "", "");
        if (!has_patch && has_type)
            return bad_response(msg, "webhook returned response.patchType but not response.patch",
                                "", "");
        if (has_type && json_string_length(type) == 0)
            return bad_response(msg, "webhook returned invalid response.patchType of \"\"", "",
                                "");
    } else {
        if (has_patch)
            return bad_response(msg, "validating webhook may not return response.patch", "", "");
        if (has_type)
            return bad_response(msg, "validating webhook may not return response.patchType", "",
                                "");
    }
    *response = r;
    return SK_OK;
}

json_t *sk_webhook_denial_status(const char *name, const json_t *result)
{
    json_t *st = json_is_object(result) ? json_deep_copy(result) : json_object();
    json_object_set_new(st, "kind", json_string("Status"));
    json_object_set_new(st, "apiVersion", json_string("v1"));
    if (!json_is_object(json_object_get(st, "metadata")))
        json_object_set_new(st, "metadata", json_object());
    json_int_t code = json_integer_value(json_object_get(st, "code"));
    if (code < 400)
        json_object_set_new(st, "code", json_integer(400));
    const char *status = json_string_value(json_object_get(st, "status"));
    if (!status || !*status || strcmp(status, "Success") == 0)
        json_object_set_new(st, "status", json_string("Failure"));
    const char *message = json_string_value(json_object_get(st, "message"));
    const char *reason = json_string_value(json_object_get(st, "reason"));
    sk_buf m = SK_BUF_INIT;
    sk_buf_puts(&m, "admission webhook ");
    sk_buf_go_quoted(&m, name);
    sk_buf_puts(&m, " denied the request");
    if (message && *message)
        sk_buf_printf(&m, ": %s", message);
    else if (reason && *reason)
        sk_buf_printf(&m, ": %s", reason);
    else
        sk_buf_puts(&m, " without explanation");
    json_object_set_new(st, "message", json_string(m.data));
    sk_buf_free(&m);
    return st;
}

json_t *sk_webhook_internal_status(const char *reason)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_printf(&m, "Internal error occurred: %s", reason);
    json_t *causes = json_array();
    sk_status_add_cause(causes, NULL, reason, NULL);
    json_t *st = sk_status_new(SK_ERR_INTERNAL, m.data, NULL, NULL, NULL, causes);
    sk_buf_free(&m);
    return st;
}

json_t *sk_webhook_failure_status(const char *name, const char *reason)
{
    sk_buf err = SK_BUF_INIT;
    sk_buf_puts(&err, "failed calling webhook ");
    sk_buf_go_quoted(&err, name);
    sk_buf_printf(&err, ": %s", reason);
    json_t *st = sk_webhook_internal_status(err.data);
    sk_buf_free(&err);
    return st;
}

json_t *sk_webhook_dry_run_status(const char *name)
{
    sk_buf m = SK_BUF_INIT;
    sk_buf_puts(&m, "admission webhook ");
    sk_buf_go_quoted(&m, name);
    sk_buf_puts(&m, " does not support dry run");
    json_t *st = sk_status_new(SK_ERR_BAD_REQUEST, m.data, NULL, NULL, NULL, NULL);
    sk_buf_free(&m);
    return st;
}

sk_err sk_webhook_annotate(json_t *ann, const char *key, const char *value, char **msg)
{
    const char *slash = strchr(key, '/');
    const char *msgs[SK_VALIDATE_MAX_MSGS];
    size_t n = 0;
    const char *had = json_string_value(json_object_get(ann, key));
    sk_buf m = SK_BUF_INIT;
    if (!slash || strchr(slash + 1, '/')) {
        sk_buf_puts(&m, "annotation key has invalid format, the right format is a DNS subdomain "
                        "prefix and '/' and key name. (e.g. "
                        "'podsecuritypolicy.admission.k8s.io/admit-policy')");
    } else if ((n = sk_validate_qualified_name(key, msgs)) > 0) {
        sk_buf_puts(&m, "annotation key has invalid format ");
        for (size_t i = 0; i < n; i++)
            sk_buf_printf(&m, "%s%s", i ? "," : "", msgs[i]);
        sk_buf_puts(&m, ". A qualified name like 'podsecuritypolicy.admission.k8s.io/admit-policy' "
                        "is required.");
    } else if (had && strcmp(had, value) != 0) {
        sk_buf_printf(&m,
                      "admission annotations are not allowd to be overwritten, key:\"%s\", old "
                      "value: %s, new value: %s",
                      key, had, value);
    } else {
        json_object_set_new(ann, key, json_string(value));
    }
    sk_err err = m.len > 0 ? SK_ERR_INVALID : SK_OK;
    if (err != SK_OK)
        *msg = sk_buf_steal(&m, NULL);
    sk_buf_free(&m);
    return err;
}
