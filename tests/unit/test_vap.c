/*
 * test_vap.c - policy/conditions and policy/vap without a server: match
 * conditions' verdicts and kube's texts for their failures, and a
 * ValidatingAdmissionPolicy applied to a request built by hand: the
 * denial's Status, Warn's warning and Audit's annotation, variables,
 * params (found, missing under Deny and Allow), excludeResourceRules with
 * resourceNames, failurePolicy Ignore, the cost budget, and a
 * namespaceSelector over a namespace that does not exist.
 */
#include "policy/conditions.h"
#include "policy/vap.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* An expression past kube's per-call cost limit (1,000,000): seven loops
 * of ten; and one of 544,441 (five loops), under it. */
#define TEN "[1,2,3,4,5,6,7,8,9,10]"
#define COSTLY TEN ".all(a, " TEN ".all(b, " TEN ".all(c, " TEN ".all(d, " TEN ".all(e, e > 0)))))"
#define HOSTILE                                                                                    \
    TEN ".all(a, " TEN ".all(b, " TEN ".all(c, " TEN ".all(d, " TEN ".all(e, " TEN ".all(f, " TEN  \
        ".all(g, g > 0)))))))"

static int match(const char *conds_json, const char *object_json, char **failures)
{
    json_t *conds = json_loads(conds_json, 0, NULL);
    json_t *vars = json_pack("{s:o}", "object", json_loads(object_json, 0, NULL));
    sk_conditions *c = sk_conditions_new(conds, 0);
    sk_cel_eval_options opt = {.vars = vars};
    *failures = NULL;
    int rc = sk_conditions_match(c, &opt, failures);
    sk_conditions_free(c);
    json_decref(conds);
    json_decref(vars);
    return rc;
}

static void test_conditions(void **state)
{
    (void)state;
    char *f;
    assert_int_equal(match("[]", "{}", &f), 1);
    assert_int_equal(match("[{\"name\":\"a\",\"expression\":\"object.x == 1\"}]", "{\"x\":1}", &f),
                     1);
    /* false wins over an error before it */
    assert_int_equal(match("[{\"name\":\"a\",\"expression\":\"object.y == 1\"},"
                           "{\"name\":\"b\",\"expression\":\"false\"}]",
                           "{}", &f),
                     0);
    assert_null(f);
    assert_int_equal(match("[{\"name\":\"a\",\"expression\":\"object.y == 1\"},"
                           "{\"name\":\"b\",\"expression\":\"nope\"}]",
                           "{}", &f),
                     -1);
    assert_string_equal(f, "[expression 'object.y == 1' resulted in error: no such key: y, "
                           "compilation error: compilation failed: ERROR: <input>:1:1: "
                           "undeclared reference to 'nope' (in container '')\n | nope\n | ^]");
    free(f);
    /* a stored condition kube's compiler refuses for its type (never
     * written through the REST face, which refuses it) is kube's
     * compilation error, not a value that lets the request through */
    assert_int_equal(match("[{\"name\":\"a\",\"expression\":\"1\"}]", "{}", &f), -1);
    assert_string_equal(f, "compilation error: must evaluate to bool but got int");
    free(f);
    /* a hostile condition: past kube's per-call limit, an error of its
     * own (its cost, some 1,000,001, is within the budget) */
    assert_int_equal(match("[{\"name\":\"a\",\"expression\":\"" HOSTILE "\"}]", "{}", &f), -1);
    assert_string_equal(f, "expression '" HOSTILE "' resulted in error: operation cancelled: "
                           "actual cost limit exceeded");
    free(f);
    /* five of 544,441 each pass the budget (2,500,000) at the fifth: the
     * budget is the one failure */
    char conds[4096] = "[";
    for (int i = 0; i < 5; i++)
        snprintf(conds + strlen(conds), sizeof conds - strlen(conds),
                 "%s{\"name\":\"c%d\",\"expression\":\"" COSTLY "\"}", i ? "," : "", i);
    strcat(conds, "]");
    assert_int_equal(match(conds, "{}", &f), -1);
    assert_string_equal(f, "validation failed due to running out of cost budget, no further "
                           "validation rules will be run");
    free(f);
    /* four are within it */
    strcpy(strrchr(conds, ','), "]");
    assert_int_equal(match(conds, "{}", &f), 1);
}

/* params: ConfigMaps named "limit" (max in data) of namespace "ns" */
static json_t *stored_params;

static int params(void *arg, const char *api_version, const char *kind, const char *ns,
                  const char *ns_default, const char *name, const sk_label_selector *sel,
                  json_t **out, char **why)
{
    (void)arg;
    (void)sel;
    assert_string_equal(api_version, "v1");
    assert_string_equal(kind, "ConfigMap");
    assert_string_equal(*ns ? ns : ns_default, "ns");
    *out = json_array();
    if (stored_params && (!name || strcmp(name, "limit") == 0))
        json_array_append(*out, stored_params);
    (void)why;
    return 0;
}

/* the request in its own version: {operation, name} and its object */
static json_t *the_request, *the_object;

static int versioned(void *arg, const sk_resource *eq, json_t **request, json_t **object,
                     json_t **old, char **why)
{
    (void)arg;
    (void)why;
    assert_null(eq);
    *request = json_incref(the_request);
    *object = json_incref(the_object);
    *old = NULL;
    return 0;
}

/* the request's namespace does not exist */
static int no_namespace(void *arg, const char *ns, const json_t **obj)
{
    (void)arg;
    (void)ns;
    (void)obj;
    return -1;
}

static json_t *apply(const char *policy, const char *binding, const char *name, const char *object,
                     json_t *warnings, json_t *annotations)
{
    json_t *pols = json_pack("[o]", json_loads(policy, 0, NULL));
    json_t *binds = json_pack("[o]", json_loads(binding, 0, NULL));
    assert_non_null(json_array_get(pols, 0));
    assert_non_null(json_array_get(binds, 0));
    sk_vap_set *s = sk_vap_set_new(pols, binds);
    json_t *obj = json_loads(object, 0, NULL);
    json_t *req = json_pack("{s:s, s:s}", "operation", "CREATE", "name", name);
    the_request = req;
    the_object = obj;
    sk_vap_request rq = {
        .a = {.operation = "CREATE",
              .group = "",
              .version = "v1",
              .resource = "configmaps",
              .subresource = "",
              .ns = "ns",
              .object = obj},
        .name = name,
        .versioned = versioned,
        .params = params,
        .ns_object = no_namespace,
    };
    json_t *status = NULL;
    if (sk_vap_set_covers(s, &rq.a, name))
        status = sk_vap_validate(s, &rq, warnings, annotations);
    sk_vap_set_unref(s);
    json_decref(pols);
    json_decref(binds);
    json_decref(obj);
    json_decref(req);
    return status;
}

#define POLICY(extra, validations)                                                                 \
    "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"failurePolicy\":\"Fail\","                         \
    "\"matchConstraints\":{\"resourceRules\":[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"     \
    "\"operations\":[\"CREATE\"],\"resources\":[\"configmaps\"]}]}," extra                         \
    "\"validations\":" validations "}}"
#define BINDING(extra, actions)                                                                    \
    "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"policyName\":\"p\"," extra                         \
    "\"validationActions\":" actions "}}"

static void test_denial_status(void **state)
{
    (void)state;
    json_t *w = json_array(), *ann = json_object();
    json_t *s =
        apply(POLICY("", "[{\"expression\":\"size(object.data) < 2\"}]"), BINDING("", "[\"Deny\"]"),
              "cm", "{\"data\":{\"a\":\"1\",\"b\":\"2\"}}", w, ann);
    assert_non_null(s);
    const char *m = "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed "
                    "expression: size(object.data) < 2";
    char full[512];
    snprintf(full, sizeof full, "configmaps \"cm\" is forbidden: %s", m);
    assert_string_equal(json_string_value(json_object_get(s, "message")), full);
    assert_string_equal(json_string_value(json_object_get(s, "reason")), "Invalid");
    assert_int_equal(json_integer_value(json_object_get(s, "code")), 422);
    json_t *causes = json_object_get(json_object_get(s, "details"), "causes");
    assert_int_equal(json_array_size(causes), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 0), "message")),
                        m);
    json_decref(s);
    /* passing: nothing */
    s = apply(POLICY("", "[{\"expression\":\"size(object.data) < 2\"}]"), BINDING("", "[\"Deny\"]"),
              "cm", "{\"data\":{}}", w, ann);
    assert_null(s);
    assert_int_equal(json_array_size(w), 0);
    json_decref(w);
    json_decref(ann);
}

static void test_warn_audit_variables_and_reason(void **state)
{
    (void)state;
    json_t *w = json_array(), *ann = json_object();
    json_t *s =
        apply(POLICY("\"variables\":[{\"name\":\"n\",\"expression\":\"size(object.data)\"}],"
                     "\"auditAnnotations\":[{\"key\":\"k\",\"valueExpression\":\"'v' + "
                     "string(variables.n)\"}],",
                     "[{\"expression\":\"variables.n == 0\",\"reason\":\"Forbidden\","
                     "\"messageExpression\":\"'n=' + string(variables.n)\"}]"),
              BINDING("", "[\"Warn\",\"Audit\"]"), "cm", "{\"data\":{\"a\":\"1\"}}", w, ann);
    assert_null(s);
    assert_int_equal(json_array_size(w), 1);
    assert_string_equal(json_string_value(json_array_get(w, 0)),
                        "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': "
                        "n=1");
    assert_string_equal(
        json_string_value(
            json_object_get(ann, "validation.policy.admission.k8s.io/validation_failure")),
        "[{\"message\":\"n=1\",\"policy\":\"p\",\"binding\":\"b\",\"expressionIndex\":0,"
        "\"validationActions\":[\"Warn\",\"Audit\"]}]");
    assert_string_equal(json_string_value(json_object_get(ann, "p/k")), "v1");
    json_decref(w);
    json_decref(ann);
}

static void test_params_and_not_found(void **state)
{
    (void)state;
    json_t *w = json_array(), *ann = json_object();
    const char *pol = POLICY("\"paramKind\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"},",
                             "[{\"expression\":\"size(object.data) <= int(params.data.max)\"}]");
    stored_params = NULL;
    json_t *s = apply(pol,
                      BINDING("\"paramRef\":{\"name\":\"limit\",\"parameterNotFoundAction\":"
                              "\"Deny\"},",
                              "[\"Deny\"]"),
                      "cm", "{\"data\":{\"a\":\"1\"}}", w, ann);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "message")),
                        "configmaps \"cm\" is forbidden: ValidatingAdmissionPolicy 'p' with "
                        "binding 'b' denied request: failed to configure binding: no params "
                        "found for policy binding with `Deny` parameterNotFoundAction");
    json_decref(s);
    s = apply(pol,
              BINDING("\"paramRef\":{\"name\":\"limit\",\"parameterNotFoundAction\":\"Allow\"},",
                      "[\"Deny\"]"),
              "cm", "{\"data\":{\"a\":\"1\"}}", w, ann);
    assert_null(s);
    stored_params = json_pack("{s:{s:s}}", "data", "max", "0");
    s = apply(pol,
              BINDING("\"paramRef\":{\"name\":\"limit\",\"parameterNotFoundAction\":\"Deny\"},",
                      "[\"Deny\"]"),
              "cm", "{\"data\":{\"a\":\"1\"}}", w, ann);
    assert_non_null(s);
    json_decref(s);
    json_decref(stored_params);
    stored_params = NULL;
    json_decref(w);
    json_decref(ann);
}

static void test_exclusions_ignore_and_budget(void **state)
{
    (void)state;
    json_t *w = json_array(), *ann = json_object();
    /* excluded by name */
    json_t *s = apply(POLICY("", "[{\"expression\":\"false\"}]"),
                      BINDING("\"matchResources\":{\"excludeResourceRules\":[{\"apiGroups\":"
                              "[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"CREATE\"],"
                              "\"resources\":[\"configmaps\"],\"resourceNames\":[\"free\"]}]},",
                              "[\"Deny\"]"),
                      "free", "{}", w, ann);
    assert_null(s);
    s = apply(POLICY("", "[{\"expression\":\"false\"}]"),
              BINDING("\"matchResources\":{\"excludeResourceRules\":[{\"apiGroups\":"
                      "[\"\"],\"apiVersions\":[\"v1\"],\"operations\":[\"CREATE\"],"
                      "\"resources\":[\"configmaps\"],\"resourceNames\":[\"free\"]}]},",
                      "[\"Deny\"]"),
              "other", "{}", w, ann);
    assert_non_null(s);
    json_decref(s);
    /* an error under Ignore lets the request through */
    const char *ignore =
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"failurePolicy\":\"Ignore\","
        "\"matchConstraints\":{\"resourceRules\":[{\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
        "\"operations\":[\"CREATE\"],\"resources\":[\"configmaps\"]}]},"
        "\"validations\":[{\"expression\":\"object.missing\"}]}}";
    s = apply(ignore, BINDING("", "[\"Deny\"]"), "x", "{}", w, ann);
    assert_null(s);
    /* kube's per-call limit stops a hostile expression: its error */
    s = apply(POLICY("", "[{\"expression\":\"" HOSTILE "\"}]"), BINDING("", "[\"Deny\"]"), "x",
              "{}", w, ann);
    assert_non_null(s);
    assert_non_null(strstr(json_string_value(json_object_get(s, "message")),
                           "denied request: expression '" HOSTILE "' resulted in error: "
                           "operation cancelled: actual cost limit exceeded"));
    json_decref(s);
    /* the budget (10,000,000) stops the 19th of 544,441 each */
    char vals[16384] = "[";
    for (int i = 0; i < 19; i++)
        snprintf(vals + strlen(vals), sizeof vals - strlen(vals),
                 "%s{\"expression\":\"" COSTLY "\"}", i ? "," : "");
    strcat(vals, "]");
    char pol[20000];
    assert_true(snprintf(pol, sizeof pol, POLICY("", "%s"), vals) < (int)sizeof pol);
    s = apply(pol, BINDING("", "[\"Deny\"]"), "x", "{}", w, ann);
    assert_non_null(s);
    assert_non_null(strstr(json_string_value(json_object_get(s, "message")),
                           "denied request: validation failed due to running out of cost "
                           "budget, no further validation rules will be run"));
    json_decref(s);
    json_decref(w);
    json_decref(ann);
}

static void test_variable_errors(void **state)
{
    (void)state;
    json_t *w = json_array(), *ann = json_object();
    json_t *s = apply(POLICY("\"variables\":[{\"name\":\"v\",\"expression\":\"object.missing\"}],",
                             "[{\"expression\":\"variables.v == 1\"}]"),
                      BINDING("", "[\"Deny\"]"), "cm", "{}", w, ann);
    assert_non_null(s);
    assert_non_null(strstr(json_string_value(json_object_get(s, "message")),
                           "denied request: expression 'variables.v == 1' resulted in error: "
                           "composited variable \"v\" fails to evaluate: no such key: missing"));
    json_decref(s);
    s = apply(POLICY("\"variables\":[{\"name\":\"v\",\"expression\":\"1 +\"}],",
                     "[{\"expression\":\"variables.v == 1\"}]"),
              BINDING("", "[\"Deny\"]"), "cm", "{}", w, ann);
    assert_non_null(s);
    assert_non_null(strstr(json_string_value(json_object_get(s, "message")),
                           "resulted in error: composited variable \"v\" fails to compile: "
                           "compilation failed: ERROR: <input>:1:4: Syntax error"));
    json_decref(s);
    /* of two variables of one name the last is the one, typed and
     * evaluated (kube keeps its compiled variables in a map by name) */
    s = apply(POLICY("\"variables\":[{\"name\":\"v\",\"expression\":\"'x'\"},"
                     "{\"name\":\"v\",\"expression\":\"1\"}],",
                     "[{\"expression\":\"variables.v == 2\"}]"),
              BINDING("", "[\"Deny\"]"), "cm", "{}", w, ann);
    assert_non_null(s);
    assert_non_null(strstr(json_string_value(json_object_get(s, "message")),
                           "denied request: failed expression: variables.v == 2"));
    json_decref(s);
    s = apply(POLICY("\"variables\":[{\"name\":\"v\",\"expression\":\"'x'\"},"
                     "{\"name\":\"v\",\"expression\":\"1\"}],",
                     "[{\"expression\":\"variables.v == 1\"}]"),
              BINDING("", "[\"Deny\"]"), "cm", "{}", w, ann);
    assert_null(s);
    json_decref(w);
    json_decref(ann);
}

static void test_missing_namespace(void **state)
{
    (void)state;
    json_t *w = json_array(), *ann = json_object();
    const char *pol = POLICY("", "[{\"expression\":\"false\"}]");
    /* a namespaceSelector cannot be judged: kube's configuration error */
    json_t *s = apply(pol,
                      BINDING("\"matchResources\":{\"namespaceSelector\":{\"matchLabels\":"
                              "{\"a\":\"b\"}}},",
                              "[\"Deny\"]"),
                      "cm", "{}", w, ann);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "message")),
                        "configmaps \"cm\" is forbidden: ValidatingAdmissionPolicy 'p' with "
                        "binding 'b' denied request: failed to configure binding: namespaces "
                        "\"ns\" not found");
    json_decref(s);
    /* unless the object selector already skips the binding */
    s = apply(pol,
              BINDING("\"matchResources\":{\"namespaceSelector\":{\"matchLabels\":"
                      "{\"a\":\"b\"}},\"objectSelector\":{\"matchLabels\":{\"x\":\"y\"}}},",
                      "[\"Deny\"]"),
              "cm", "{}", w, ann);
    assert_null(s);
    json_decref(w);
    json_decref(ann);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conditions),
        cmocka_unit_test(test_denial_status),
        cmocka_unit_test(test_warn_audit_variables_and_reason),
        cmocka_unit_test(test_params_and_not_found),
        cmocka_unit_test(test_exclusions_ignore_and_budget),
        cmocka_unit_test(test_variable_errors),
        cmocka_unit_test(test_missing_namespace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
