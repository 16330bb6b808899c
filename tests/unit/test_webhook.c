/*
 * test_webhook.c - kube/webhook: which requests a webhook's rules and
 * selectors reach (kube's rules.Matcher cases: wildcards, subresources,
 * scope, the Namespace's own requests), the checks on an AdmissionReview
 * answer, and kube's Status texts for a denial, a failure and a dry run.
 */
#include "kube/webhook.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *hook_with(const char *rule_json)
{
    json_t *rule = json_loads(rule_json, 0, NULL);
    assert_non_null(rule);
    return json_pack("{s:s, s:[o]}", "name", "h.example.com", "rules", rule);
}

static sk_webhook_attrs attrs(const char *op, const char *group, const char *version,
                              const char *resource, const char *sub, const char *ns)
{
    sk_webhook_attrs a = {.operation = op, .group = group, .version = version,
                          .resource = resource, .subresource = sub, .ns = ns};
    return a;
}

static int matches(const char *rule_json, sk_webhook_attrs a)
{
    json_t *h = hook_with(rule_json);
    int m = sk_webhook_rules_match(h, &a);
    json_decref(h);
    return m;
}

#define PODS_RULE(ops, res, scope)                                                                 \
    "{\"operations\":" ops ",\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],\"resources\":" res    \
    ",\"scope\":\"" scope "\"}"

static void test_operations_groups_versions(void **state)
{
    (void)state;
    sk_webhook_attrs create = attrs("CREATE", "", "v1", "pods", "", "ns");
    sk_webhook_attrs del = attrs("DELETE", "", "v1", "pods", "", "ns");
    assert_true(matches(PODS_RULE("[\"CREATE\"]", "[\"pods\"]", "*"), create));
    assert_false(matches(PODS_RULE("[\"CREATE\"]", "[\"pods\"]", "*"), del));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"pods\"]", "*"), del));
    sk_webhook_attrs apps = attrs("CREATE", "apps", "v1", "pods", "", "ns");
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"pods\"]", "*"), apps));
    assert_true(matches("{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
                        "\"resources\":[\"*\"]}",
                        apps));
    sk_webhook_attrs v2 = attrs("CREATE", "", "v2", "pods", "", "ns");
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"pods\"]", "*"), v2));
}

static void test_resources_and_subresources(void **state)
{
    (void)state;
    sk_webhook_attrs status = attrs("UPDATE", "", "v1", "pods", "status", "ns");
    sk_webhook_attrs pod = attrs("UPDATE", "", "v1", "pods", "", "ns");
    /* "pods" is the object only; "pods/status", "pods/ *" and "* / *" reach subresources */
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"pods\"]", "*"), status));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"pods/status\"]", "*"), status));
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"pods/status\"]", "*"), pod));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"pods/*\"]", "*"), status));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"*/*\"]", "*"), status));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"*/*\"]", "*"), pod));
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "*"), status));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"*/status\"]", "*"), status));
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"podsx\", \"pod\"]", "*"), pod));
}

static void test_scope(void **state)
{
    (void)state;
    sk_webhook_attrs namespaced = attrs("CREATE", "", "v1", "pods", "", "ns");
    sk_webhook_attrs cluster = attrs("CREATE", "", "v1", "nodes", "", "");
    /* a Namespace's requests carry its name as their namespace, yet it is cluster-scoped */
    sk_webhook_attrs ns_obj = attrs("CREATE", "", "v1", "namespaces", "", "team");
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "Namespaced"), namespaced));
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "Namespaced"), cluster));
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "Namespaced"), ns_obj));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "Cluster"), cluster));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "Cluster"), ns_obj));
    assert_false(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "Cluster"), namespaced));
    assert_true(matches(PODS_RULE("[\"*\"]", "[\"*\"]", "*"), cluster));
}

static void test_configurations_are_exempt(void **state)
{
    (void)state;
    sk_webhook_attrs a = attrs("DELETE", "admissionregistration.k8s.io", "v1",
                               "validatingwebhookconfigurations", "", "");
    assert_true(sk_webhook_exempt(&a));
    a.resource = "mutatingwebhookconfigurations";
    assert_true(sk_webhook_exempt(&a));
    sk_webhook_attrs cm = attrs("DELETE", "", "v1", "configmaps", "", "ns");
    assert_false(sk_webhook_exempt(&cm));
}

/* sel compiled and matched against labels: 1, 0, or -1 when it does not compile. */
static int selects(const json_t *sel, const json_t *labels)
{
    sk_label_selector *c = NULL;
    char *msg = NULL;
    if (sk_webhook_selector_compile(sel, &c, &msg) != SK_OK) {
        assert_non_null(msg);
        free(msg);
        return -1;
    }
    int rc = !c || sk_label_selector_matches(c, labels);
    sk_label_selector_free(c);
    return rc;
}

static void test_selectors(void **state)
{
    (void)state;
    json_t *labels = json_pack("{s:s, s:s}", "env", "prod", "team", "a");
    json_t *sel = json_loads("{\"matchLabels\":{\"env\":\"prod\"},\"matchExpressions\":[{\"key\":"
                             "\"team\",\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]}",
                             0, NULL);
    assert_int_equal(selects(sel, labels), 1);
    json_object_set_new(labels, "team", json_string("c"));
    assert_int_equal(selects(sel, labels), 0);
    assert_int_equal(selects(sel, NULL), 0);
    json_t *empty = json_object();
    assert_int_equal(selects(empty, NULL), 1);
    sk_label_selector *none = (sk_label_selector *)1;
    char *msg = NULL;
    assert_int_equal(sk_webhook_selector_compile(empty, &none, &msg), SK_OK);
    assert_null(none); /* {} selects everything: nothing to match */
    json_t *dne = json_loads("{\"matchExpressions\":[{\"key\":\"skip\",\"operator\":"
                             "\"DoesNotExist\"}]}",
                             0, NULL);
    assert_int_equal(selects(dne, labels), 1);
    json_t *bad = json_loads("{\"matchLabels\":{\"env\":\"not a value!\"}}", 0, NULL);
    assert_int_equal(selects(bad, labels), -1);

    /* objectSelector: the object or the old object */
    sk_label_selector *compiled = NULL;
    assert_int_equal(sk_webhook_selector_compile(sel, &compiled, &msg), SK_OK);
    json_t *obj = json_loads("{\"metadata\":{\"labels\":{\"env\":\"dev\"}}}", 0, NULL);
    json_t *old = json_loads("{\"metadata\":{\"labels\":{\"env\":\"prod\",\"team\":\"b\"}}}", 0,
                             NULL);
    sk_webhook_attrs a = attrs("UPDATE", "", "v1", "configmaps", "", "ns");
    a.object = obj;
    assert_int_equal(sk_webhook_object_selected(compiled, &a), 0);
    a.old_object = old;
    assert_int_equal(sk_webhook_object_selected(compiled, &a), 1);
    assert_int_equal(sk_webhook_object_selected(NULL, &a), 1);
    sk_label_selector_free(compiled);

    /* namespaceSelector: not for cluster-scoped requests; a Namespace's own labels */
    sk_webhook_attrs node = attrs("CREATE", "", "v1", "nodes", "", "");
    assert_false(sk_webhook_ns_selector_applies(&node));
    assert_true(sk_webhook_ns_selector_applies(&a));
    sk_webhook_attrs ns_create = attrs("CREATE", "", "v1", "namespaces", "", "team");
    assert_true(sk_webhook_ns_selector_applies(&ns_create));
    assert_true(sk_webhook_ns_labels_from_object(&ns_create));
    sk_webhook_attrs ns_delete = attrs("DELETE", "", "v1", "namespaces", "", "team");
    assert_false(sk_webhook_ns_labels_from_object(&ns_delete));

    json_decref(obj);
    json_decref(old);
    json_decref(bad);
    json_decref(dne);
    json_decref(empty);
    json_decref(sel);
    json_decref(labels);
}

static sk_err check(const char *review_json, int mutating, char **msg)
{
    json_t *review = json_loads(review_json, 0, NULL);
    assert_non_null(review);
    const json_t *resp = NULL;
    *msg = NULL;
    sk_err e = sk_webhook_check_response(review, "u-1", mutating, 0, &resp, msg);
    if (e == SK_OK)
        assert_ptr_equal(resp, json_object_get(review, "response"));
    json_decref(review);
    return e;
}

#define REVIEW(resp) "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":" resp "}"

/* matchPolicy Equivalent: the resources sharing storage, rules in order. */
static void test_equivalents(void **state)
{
    (void)state;
    const sk_resource *v1 = sk_registry_find("autoscaling", "v1", "horizontalpodautoscalers");
    const sk_resource *v2 = sk_registry_find("autoscaling", "v2", "horizontalpodautoscalers");
    assert_non_null(v1);
    assert_non_null(v2);
    const sk_resource *eq[SK_WEBHOOK_MAX_EQUIVALENTS];
    size_t n = sk_webhook_equivalents(v1, "", eq, SK_WEBHOOK_MAX_EQUIVALENTS);
    assert_int_equal(n, 1);
    assert_ptr_equal(eq[0], v2);
    assert_int_equal(sk_webhook_equivalents(v1, "no-such-sub", eq, SK_WEBHOOK_MAX_EQUIVALENTS),
                     0);
    const sk_resource *cm = sk_registry_find("", "v1", "configmaps");
    assert_int_equal(sk_webhook_equivalents(cm, "", eq, SK_WEBHOOK_MAX_EQUIVALENTS), 0);

    n = sk_webhook_equivalents(v1, "", eq, SK_WEBHOOK_MAX_EQUIVALENTS);
    sk_webhook_attrs a = attrs("CREATE", "autoscaling", "v1", "horizontalpodautoscalers", "",
                               "ns");
    a.equivalents = eq;
    a.n_equivalents = n;
    json_t *hook = json_loads("{\"rules\":[{\"operations\":[\"CREATE\"],\"apiGroups\":"
                              "[\"autoscaling\"],\"apiVersions\":[\"v2\"],\"resources\":"
                              "[\"horizontalpodautoscalers\"]}]}",
                              0, NULL);
    assert_false(sk_webhook_rules_match(hook, &a));
    assert_ptr_equal(sk_webhook_equivalent_match(hook, &a), v2);
    json_object_set_new(hook, "matchPolicy", json_string("Exact"));
    assert_null(sk_webhook_equivalent_match(hook, &a));
    json_decref(hook);
}

static void test_response_checks(void **state)
{
    (void)state;
    char *msg;
    assert_int_equal(check(REVIEW("{\"uid\":\"u-1\",\"allowed\":true}"), 0, &msg), SK_OK);
    assert_int_equal(check("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
                           0, &msg),
                     SK_ERR_BAD_REQUEST);
    assert_string_equal(msg, "webhook response was absent");
    free(msg);
    assert_int_equal(check(REVIEW("{\"uid\":\"other\",\"allowed\":true}"), 0, &msg),
                     SK_ERR_BAD_REQUEST);
    assert_string_equal(msg, "expected response.uid=\"u-1\", got \"other\"");
    free(msg);
    assert_int_equal(check("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":"
                           "\"AdmissionReview\",\"response\":{\"uid\":\"u-1\"}}",
                           0, &msg),
                     SK_ERR_BAD_REQUEST);
    assert_string_equal(msg, "expected webhook response of admission.k8s.io/v1, "
                             "Kind=AdmissionReview, got admission.k8s.io/v1beta1, "
                             "Kind=AdmissionReview");
    free(msg);
    const char *patched = REVIEW("{\"uid\":\"u-1\",\"allowed\":true,\"patch\":\"W10=\"}");
    assert_int_equal(check(patched, 0, &msg), SK_ERR_BAD_REQUEST);
    assert_string_equal(msg, "validating webhook may not return response.patch");
    free(msg);
    assert_int_equal(check(patched, 1, &msg), SK_ERR_BAD_REQUEST);
    assert_string_equal(msg, "webhook returned response.patch but not response.patchType");
    free(msg);
    assert_int_equal(
        check(REVIEW("{\"uid\":\"u-1\",\"allowed\":true,\"patchType\":\"JSONPatch\"}"), 1, &msg),
        SK_ERR_BAD_REQUEST);
    assert_string_equal(msg, "webhook returned response.patchType but not response.patch");
    free(msg);
    assert_int_equal(check(REVIEW("{\"uid\":\"u-1\",\"allowed\":true,\"patchType\":\"JSONPatch\","
                                  "\"patch\":\"W10=\"}"),
                           1, &msg),
                     SK_OK);
}

static void test_statuses(void **state)
{
    (void)state;
    json_t *result = json_pack("{s:i, s:s, s:s}", "code", 403, "reason", "Forbidden", "message",
                               "no");
    json_t *st = sk_webhook_denial_status("d.example.com", result);
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 403);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "admission webhook \"d.example.com\" denied the request: no");
    assert_string_equal(json_string_value(json_object_get(st, "status")), "Failure");
    assert_string_equal(json_string_value(json_object_get(st, "kind")), "Status");
    json_decref(st);
    /* no code (or one below 400) is 400; a reason stands in for a message */
    json_t *low = json_pack("{s:i, s:s, s:s}", "code", 200, "status", "Success", "reason", "Nope");
    st = sk_webhook_denial_status("d.example.com", low);
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 400);
    assert_string_equal(json_string_value(json_object_get(st, "status")), "Failure");
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "admission webhook \"d.example.com\" denied the request: Nope");
    json_decref(st);
    st = sk_webhook_denial_status("d.example.com", NULL);
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "admission webhook \"d.example.com\" denied the request without "
                        "explanation");
    json_decref(st);

    st = sk_webhook_failure_status("f.example.com", "failed to call webhook: boom");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 500);
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "InternalError");
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "Internal error occurred: failed calling webhook \"f.example.com\": "
                        "failed to call webhook: boom");
    json_t *cause = json_array_get(json_object_get(json_object_get(st, "details"), "causes"), 0);
    assert_string_equal(json_string_value(json_object_get(cause, "message")),
                        "failed calling webhook \"f.example.com\": failed to call webhook: boom");
    json_decref(st);

    st = sk_webhook_dry_run_status("s.example.com");
    assert_int_equal(json_integer_value(json_object_get(st, "code")), 400);
    assert_string_equal(json_string_value(json_object_get(st, "reason")), "BadRequest");
    assert_string_equal(json_string_value(json_object_get(st, "message")),
                        "admission webhook \"s.example.com\" does not support dry run");
    json_decref(st);
    json_decref(low);
    json_decref(result);
}

/* kube's AddAnnotation: a qualified name with one '/', a first value kept. */
static void test_audit_annotations(void **state)
{
    (void)state;
    json_t *ann = json_object();
    char *msg = NULL;
    assert_int_equal(sk_webhook_annotate(ann, "hook.example.com/decision", "yes", &msg), SK_OK);
    assert_int_equal(sk_webhook_annotate(ann, "hook.example.com/decision", "yes", &msg), SK_OK);
    assert_int_equal(sk_webhook_annotate(ann, "hook.example.com/decision", "no", &msg),
                     SK_ERR_INVALID);
    assert_non_null(strstr(msg, "not allowd to be overwritten"));
    free(msg);
    msg = NULL;
    assert_string_equal(json_string_value(json_object_get(ann, "hook.example.com/decision")),
                        "yes");
    assert_int_equal(sk_webhook_annotate(ann, "hook.example.com/Bad Key!", "x", &msg),
                     SK_ERR_INVALID);
    assert_non_null(strstr(msg, "annotation key has invalid format name part must consist"));
    free(msg);
    msg = NULL;
    assert_int_equal(sk_webhook_annotate(ann, "a/b/c", "x", &msg), SK_ERR_INVALID);
    assert_non_null(strstr(msg, "DNS subdomain prefix and '/' and key name"));
    free(msg);
    msg = NULL;
    assert_int_equal(sk_webhook_annotate(ann, "nokey", "x", &msg), SK_ERR_INVALID);
    free(msg);
    assert_int_equal(json_object_size(ann), 1);
    json_decref(ann);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_operations_groups_versions),
        cmocka_unit_test(test_resources_and_subresources),
        cmocka_unit_test(test_scope),
        cmocka_unit_test(test_configurations_are_exempt),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_equivalents),
        cmocka_unit_test(test_response_checks),
        cmocka_unit_test(test_statuses),
        cmocka_unit_test(test_audit_annotations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
