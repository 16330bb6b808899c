/*
 * test_vaptype.c - policy/vaptype.h: a ValidatingAdmissionPolicy's
 * expression warnings as kube 1.32's type checker words them
 * (k8s.io/apiserver pkg/admission/plugin/policy/validating/typechecking.go):
 * which kinds a policy's rules give, object typed by the kind's OpenAPI
 * schema, params by paramKind's, the fieldRefs and the texts.
 */
#include "policy/vaptype.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The warnings of a policy with spec (JSON text), as compact JSON (malloc'd). */
static char *warnings(const char *spec)
{
    json_error_t e;
    json_t *s = json_loads(spec, 0, &e);
    assert_non_null(s);
    json_t *p = json_pack("{s:s, s:o}", "kind", "ValidatingAdmissionPolicy", "spec", s);
    json_t *w = sk_vaptype_check(p);
    assert_true(json_is_array(w));
    char *out = json_dumps(w, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(w);
    json_decref(p);
    return out;
}

static void expect(const char *spec, const char *want)
{
    char *got = warnings(spec);
    if (strcmp(got, want) != 0)
        print_message("got:  %s\nwant: %s\n", got, want);
    assert_string_equal(got, want);
    free(got);
}

#define DEPLOYMENTS                                                                                \
    "\"matchConstraints\": {\"resourceRules\": [{\"apiGroups\": [\"apps\"], \"apiVersions\": "     \
    "[\"v1\"], \"operations\": [\"CREATE\"], \"resources\": [\"deployments\"]}]}"

static void test_object_typed_by_kind(void **state)
{
    (void)state;
    expect("{" DEPLOYMENTS ", \"validations\": [{\"expression\": \"object.spec.replicas > 1\"},"
           " {\"expression\": \"object.spec.replicasx > 1\"}]}",
           "[{\"fieldRef\":\"spec.validations[1].expression\",\"warning\":\"apps/v1, "
           "Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicasx'\\n | "
           "object.spec.replicasx > 1\\n | ...........^\\n\"}]");
}

static void test_message_expression_and_variables(void **state)
{
    (void)state;
    expect("{" DEPLOYMENTS ", \"variables\": [{\"name\": \"r\", \"expression\": "
           "\"object.spec.replicas\"}], \"validations\": [{\"expression\": \"variables.r > 1\", "
           "\"messageExpression\": \"'n: ' + object.metadata.namez\"}, {\"expression\": "
           "\"variables.r > 'a'\", \"messageExpression\": \"'n: ' + object.metadata.name\"}]}",
           "[{\"fieldRef\":\"spec.validations[0].messageExpression\",\"warning\":\"apps/v1, "
           "Kind=Deployment: ERROR: <input>:1:24: undefined field 'namez'\\n | 'n: ' + "
           "object.metadata.namez\\n | .......................^\\n\"},{\"fieldRef\":\"spec."
           "validations[1].expression\",\"warning\":\"apps/v1, Kind=Deployment: ERROR: "
           "<input>:1:13: found no matching overload for '_>_' applied to '(int, string)'\\n | "
           "variables.r > 'a'\\n | ............^\\n\"}]");
}

static void test_params(void **state)
{
    (void)state;
    /* paramKind's schema types params */
    expect("{" DEPLOYMENTS ", \"paramKind\": {\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\"}, "
           "\"validations\": [{\"expression\": \"params.data.max == 'a'\"}, {\"expression\": "
           "\"params.foo == 1\"}]}",
           "[{\"fieldRef\":\"spec.validations[1].expression\",\"warning\":\"apps/v1, "
           "Kind=Deployment: ERROR: <input>:1:7: undefined field 'foo'\\n | params.foo == 1\\n"
           " | ......^\\n\"}]");
    /* one whose schema does not resolve leaves params undeclared */
    expect("{" DEPLOYMENTS ", \"paramKind\": {\"apiVersion\": \"example.com/v1\", \"kind\": "
           "\"Nope\"}, \"validations\": [{\"expression\": \"params.foo == 1\"}]}",
           "[{\"fieldRef\":\"spec.validations[0].expression\",\"warning\":\"apps/v1, "
           "Kind=Deployment: ERROR: <input>:1:1: undeclared reference to 'params' (in container "
           "'')\\n | params.foo == 1\\n | ^\\n\"}]");
}

static void test_kinds_checked(void **state)
{
    (void)state;
    /* each kind its own text, in order; wildcards and subresources dropped */
    expect("{\"matchConstraints\": {\"resourceRules\": [{\"apiGroups\": [\"\"], \"apiVersions\": "
           "[\"v1\"], \"resources\": [\"secrets\", \"configmaps\", \"pods/status\", \"*\", "
           "\"nothings\"]}]}, \"validations\": [{\"expression\": \"object.data.a == 'x'\"}]}",
           "[{\"fieldRef\":\"spec.validations[0].expression\",\"warning\":\"/v1, Kind=Secret: "
           "ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(bytes, "
           "string)'\\n | object.data.a == 'x'\\n | ..............^\\n\"}]");
    expect("{\"matchConstraints\": {\"resourceRules\": [{\"apiGroups\": [\"\"], \"apiVersions\": "
           "[\"v1\"], \"resources\": [\"secrets\", \"configmaps\"]}]}, \"validations\": "
           "[{\"expression\": \"object.nope\"}]}",
           "[{\"fieldRef\":\"spec.validations[0].expression\",\"warning\":\"/v1, Kind=ConfigMap: "
           "ERROR: <input>:1:7: undefined field 'nope'\\n | object.nope\\n | ......^\\n\\n/v1, "
           "Kind=Secret: ERROR: <input>:1:7: undefined field 'nope'\\n | object.nope\\n | "
           "......^\\n\"}]");
    /* a wildcard group or version: nothing checked, so nothing to warn */
    expect("{\"matchConstraints\": {\"resourceRules\": [{\"apiGroups\": [\"*\"], \"apiVersions\": "
           "[\"v1\"], \"resources\": [\"configmaps\"]}, {\"apiGroups\": [\"\"], \"apiVersions\": "
           "[\"*\"], \"resources\": [\"configmaps\"]}]}, \"validations\": [{\"expression\": "
           "\"object.nope\"}]}",
           "[]");
}

/* A ref met again on its own path is an empty object (PopulateRefs): a
 * CRD's schema types one level of JSONSchemaProps. */
static void test_circular_ref(void **state)
{
    (void)state;
    expect("{\"matchConstraints\": {\"resourceRules\": [{\"apiGroups\": "
           "[\"apiextensions.k8s.io\"], \"apiVersions\": [\"v1\"], \"resources\": "
           "[\"customresourcedefinitions\"]}]}, \"validations\": [{\"expression\": "
           "\"object.spec.versions[0].schema.openAPIV3Schema.type == 'object'\"}, "
           "{\"expression\": \"object.spec.versions[0].schema.openAPIV3Schema.properties['a']."
           "type == 'string'\"}]}",
           "[{\"fieldRef\":\"spec.validations[1].expression\",\"warning\":"
           "\"apiextensions.k8s.io/v1, Kind=CustomResourceDefinition: ERROR: <input>:1:63: "
           "undefined field 'type'\\n | object.spec.versions[0].schema.openAPIV3Schema."
           "properties['a'].type == 'string'\\n | ......................................"
           "........................^\\n\"}]");
}

/* A rule gives at most ten kinds, the first ten its sorted resources
 * give, and is then the last; each rule counts its own. */
static void test_ten_kinds_at_most(void **state)
{
    (void)state;
    char *got = warnings(
        "{\"matchConstraints\": {\"resourceRules\": [{\"apiGroups\": [\"\"], \"apiVersions\": "
        "[\"v1\"], \"resources\": [\"services\", \"serviceaccounts\", \"secrets\", "
        "\"resourcequotas\", \"replicationcontrollers\", \"podtemplates\", \"pods\", "
        "\"persistentvolumes\", \"persistentvolumeclaims\", \"nodes\", \"namespaces\", "
        "\"limitranges\", \"events\", \"endpoints\", \"configmaps\"]}]}, \"validations\": "
        "[{\"expression\": \"object.nope\"}]}");
    size_t n = 0;
    for (const char *p = got; (p = strstr(p, "Kind=")); p++)
        n++;
    assert_int_equal(n, 10);
    assert_non_null(strstr(got, "Kind=ConfigMap"));
    assert_non_null(strstr(got, "Kind=PersistentVolumeClaim:"));
    assert_non_null(strstr(got, "Kind=Pod:"));
    assert_null(strstr(got, "Kind=ReplicationController:")); /* the eleventh */
    assert_null(strstr(got, "Kind=Service:"));
    free(got);
    /* nine from one rule, two from the next: eleven kinds */
    got = warnings("{\"matchConstraints\": {\"resourceRules\": [{\"apiGroups\": [\"\"], "
                   "\"apiVersions\": [\"v1\"], \"resources\": [\"services\", "
                   "\"serviceaccounts\", \"secrets\", \"resourcequotas\", "
                   "\"replicationcontrollers\", \"podtemplates\", \"pods\", "
                   "\"persistentvolumes\", \"persistentvolumeclaims\"]}, {\"apiGroups\": "
                   "[\"apps\"], \"apiVersions\": [\"v1\"], \"resources\": [\"deployments\", "
                   "\"daemonsets\"]}]}, \"validations\": [{\"expression\": \"object.nope\"}]}");
    n = 0;
    for (const char *p = got; (p = strstr(p, "Kind=")); p++)
        n++;
    assert_int_equal(n, 11);
    /* sorted by group first: the core kinds, then apps' */
    assert_true(strstr(got, "/v1, Kind=Service:") < strstr(got, "apps/v1, Kind=DaemonSet:"));
    free(got);
}

/* The type checker's environment declares authorizer alone (buildEnvSet),
 * not authorizer.requestResource as the admission compiler does: the
 * select is on the library's type, which cel-go's checker cannot resolve
 * (lookupFieldType's FindStructType). */
static void test_authorizer_alone(void **state)
{
    (void)state;
    expect("{" DEPLOYMENTS ", \"validations\": [{\"expression\": "
           "\"authorizer.group('apps').resource('deployments').check('get').allowed()\"}, "
           "{\"expression\": \"authorizer.requestResource.check('get').allowed()\"}]}",
           "[{\"fieldRef\":\"spec.validations[1].expression\",\"warning\":\"apps/v1, "
           "Kind=Deployment: ERROR: <input>:1:11: unexpected failed resolution of "
           "'kubernetes.authorization.Authorizer'\\n | "
           "authorizer.requestResource.check('get').allowed()\\n | ..........^\\n\"}]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_object_typed_by_kind),
        cmocka_unit_test(test_message_expression_and_variables),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_kinds_checked),
        cmocka_unit_test(test_circular_ref),
        cmocka_unit_test(test_ten_kinds_at_most),
        cmocka_unit_test(test_authorizer_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
