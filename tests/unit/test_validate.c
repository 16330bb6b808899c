/*
 * test_validate.c - validation rules per kind with kube-apiserver's exact
 * messages, causes and decode errors.
 */
#include "kube/registry.h"
#include "kube/validate.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "       \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_MSG                                                                                  \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "     \
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define CONFIG_KEY_MSG                                                                             \
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "           \
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "                    \
    "'[-._a-zA-Z0-9]+')"

static const sk_resource *res(const char *group, const char *resource)
{
    const sk_resource *r = sk_registry_find(group, "v1", resource);
    assert_non_null(r);
    return r;
}

static json_t *load(const char *s)
{
    json_error_t err;
    json_t *v = json_loads(s, 0, &err);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, err.text);
    return v;
}

/* Validates obj (and old, may be NULL) and checks code and message. */
static json_t *check(const sk_resource *r, const char *obj, const char *old, sk_err want,
                     const char *want_msg)
{
    json_t *o = load(obj), *prev = old ? load(old) : NULL, *causes = NULL;
    char *msg = NULL;
    sk_err e = sk_validate_object(r, o, prev, &causes, &msg);
    if (e != want)
        fail_msg("validate %s: got %s (%s), want %s", obj, sk_err_name(e), msg ? msg : "",
                 sk_err_name(want));
    if (want_msg)
        assert_string_equal(msg, want_msg);
    free(msg);
    json_decref(o);
    json_decref(prev);
    return causes;
}

static void ok(const sk_resource *r, const char *obj, const char *old)
{
    json_decref(check(r, obj, old, SK_OK, NULL));
}

static void invalid(const sk_resource *r, const char *obj, const char *old, const char *want)
{
    json_decref(check(r, obj, old, SK_ERR_INVALID, want));
}

static void test_name_formats(void **state)
{
    (void)state;
    assert_null(sk_validate_dns1123_subdomain("a.b-c.d"));
    assert_string_equal(sk_validate_dns1123_subdomain("A"), SUBDOMAIN_MSG);
    assert_string_equal(sk_validate_dns1123_subdomain("a..b"), SUBDOMAIN_MSG);
    assert_string_equal(sk_validate_dns1123_subdomain(""), SUBDOMAIN_MSG);
    char long_name[300];
    memset(long_name, 'a', 254);
    long_name[254] = '\0';
    assert_string_equal(sk_validate_dns1123_subdomain(long_name),
                        "must be no more than 253 characters");
    assert_null(sk_validate_dns1123_label("my-name"));
    assert_string_equal(sk_validate_dns1123_label("a.b"), LABEL_MSG);
    assert_string_equal(sk_validate_dns1123_label("-a"), LABEL_MSG);
    long_name[64] = '\0';
    assert_string_equal(sk_validate_dns1123_label(long_name), "must be no more than 63 characters");

    const char *msgs[SK_VALIDATE_MAX_MSGS];
    assert_int_equal(sk_validate_qualified_name("example.com/My_Name.1", msgs), 0);
    assert_int_equal(sk_validate_qualified_name("Example.com/x", msgs), 1);
    assert_int_equal(sk_validate_qualified_name("a/", msgs), 2);
    assert_string_equal(msgs[0], "name part must be non-empty");
    assert_int_equal(sk_validate_label_value("", msgs), 0);
    assert_int_equal(sk_validate_label_value("a_b-c.d", msgs), 0);
    assert_int_equal(sk_validate_label_value("a b", msgs), 1);
}

static void test_configmap_name(void **state)
{
    (void)state;
    const sk_resource *cm = res("", "configmaps");
    json_t *causes = check(cm, "{\"metadata\":{\"name\":\"Bad_Name\",\"namespace\":\"default\"}}",
                           NULL, SK_ERR_INVALID,
                           "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: "
                           "\"Bad_Name\": " SUBDOMAIN_MSG);
    assert_int_equal(json_array_size(causes), 1);
    json_t *c = json_array_get(causes, 0);
    assert_string_equal(json_string_value(json_object_get(c, "reason")), "FieldValueInvalid");
    assert_string_equal(json_string_value(json_object_get(c, "field")), "metadata.name");
    assert_string_equal(json_string_value(json_object_get(c, "message")),
                        "Invalid value: \"Bad_Name\": " SUBDOMAIN_MSG);
    json_decref(causes);

    invalid(cm, "{\"metadata\":{\"namespace\":\"default\"}}", NULL,
            "ConfigMap \"\" is invalid: metadata.name: Required value: name or generateName is "
            "required");
    invalid(cm, "{\"metadata\":{\"name\":\"a\"}}", NULL,
            "ConfigMap \"a\" is invalid: metadata.namespace: Required value");
    invalid(cm, "{\"metadata\":{\"name\":\"a\",\"generateName\":\"Gen-\",\"namespace\":\"d\"}}",
            NULL,
            "ConfigMap \"a\" is invalid: metadata.generateName: Invalid value: "
            "\"Gen-\": " SUBDOMAIN_MSG);
    ok(cm, "{\"metadata\":{\"name\":\"gen-x\",\"generateName\":\"gen-\",\"namespace\":\"d\"}}",
       NULL);
    /* maskTrailingDash (apimachinery's generic.go): the last two bytes of a
     * prefix ending in '-' become one 'a', so 63 letters and a '-' are a
     * valid label prefix, and 64 are not */
    const sk_resource *ns = res("", "namespaces");
    char obj[256], want[512];
    char letters[65];
    memset(letters, 'a', 64);
    letters[63] = 0;
    snprintf(obj, sizeof obj, "{\"metadata\":{\"name\":\"x\",\"generateName\":\"%s-\"}}", letters);
    ok(ns, obj, NULL);
    letters[63] = 'a';
    letters[64] = 0;
    snprintf(obj, sizeof obj, "{\"metadata\":{\"name\":\"x\",\"generateName\":\"%s-\"}}", letters);
    snprintf(want, sizeof want,
             "Namespace \"x\" is invalid: metadata.generateName: Invalid value: \"%s-\": must be "
             "no more than 63 characters",
             letters);
    invalid(ns, obj, NULL, want);
}

static void test_configmap_data(void **state)
{
    (void)state;
    const sk_resource *cm = res("", "configmaps");
    ok(cm,
       "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"data\":{\"a.b_C-1\":\"x\"},"
       "\"binaryData\":{\"bin\":\"aGVsbG8=\"}}",
       NULL);
    invalid(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"data\":{\"a b\":\"x\"}}",
            NULL, "ConfigMap \"c\" is invalid: data[a b]: Invalid value: \"a b\": " CONFIG_KEY_MSG);
    invalid(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"data\":{\"..x\":\"x\"}}",
            NULL,
            "ConfigMap \"c\" is invalid: data[..x]: Invalid value: \"..x\": must not start with "
            "'..'");
    invalid(cm,
            "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"data\":{\"k\":\"x\"},"
            "\"binaryData\":{\"k\":\"eA==\"}}",
            NULL,
            "ConfigMap \"c\" is invalid: data[k]: Invalid value: \"k\": duplicate of key present "
            "in binaryData");
    /* Several errors are joined inside brackets. */
    invalid(cm, "{\"metadata\":{\"name\":\"C\",\"namespace\":\"d\"},\"data\":{\"a b\":\"x\"}}",
            NULL,
            "ConfigMap \"C\" is invalid: [metadata.name: Invalid value: \"C\": " SUBDOMAIN_MSG
            ", data[a b]: Invalid value: \"a b\": " CONFIG_KEY_MSG "]");

    size_t big = 1024 * 1024 + 1;
    char *value = malloc(big + 1);
    memset(value, 'x', big);
    value[big] = '\0';
    json_t *o = load("{\"metadata\":{\"name\":\"big\",\"namespace\":\"d\"}}");
    json_object_set_new(o, "data", json_pack("{s:s}", "k", value));
    json_t *causes = NULL;
    char *msg = NULL;
    assert_int_equal(sk_validate_object(cm, o, NULL, &causes, &msg), SK_ERR_INVALID);
    assert_string_equal(
        msg, "ConfigMap \"big\" is invalid: []: Too long: may not be more than 1048576 bytes");
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 0), "reason")),
                        "FieldValueTooLong");
    free(msg);
    json_decref(causes);
    json_decref(o);
    free(value);
}

static void test_configmap_immutable(void **state)
{
    (void)state;
    const sk_resource *cm = res("", "configmaps");
    const char *old = "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"immutable\":true,"
                      "\"data\":{\"a\":\"1\"}}";
    ok(cm,
       "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"labels\":{\"x\":\"y\"}},"
       "\"immutable\":true,\"data\":{\"a\":\"1\"}}",
       old);
    invalid(cm,
            "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"immutable\":true,"
            "\"data\":{\"a\":\"2\"}}",
            old,
            "ConfigMap \"c\" is invalid: data: Forbidden: field is immutable when `immutable` is "
            "set");
    invalid(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"data\":{\"a\":\"1\"}}", old,
            "ConfigMap \"c\" is invalid: immutable: Forbidden: field is immutable when "
            "`immutable` is set");
    /* Only a previously immutable object is frozen. */
    ok(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"immutable\":true}",
       "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"},\"data\":{\"a\":\"1\"}}");
}

static void test_metadata(void **state)
{
    (void)state;
    const sk_resource *cm = res("", "configmaps");
    invalid(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"labels\":{\"-x\":\"ok\"}}}",
            NULL,
            "ConfigMap \"c\" is invalid: metadata.labels: Invalid value: \"-x\": name part must "
            "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    invalid(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"labels\":{\"x\":\"a b\"}}}",
            NULL,
            "ConfigMap \"c\" is invalid: metadata.labels: Invalid value: \"a b\": a valid label "
            "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
            "or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
    ok(cm,
       "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"annotations\":{"
       "\"Example.COM/Some_Key\":\"any value at all\"},\"finalizers\":[\"example.com/f\","
       "\"kubernetes\"],\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"K\","
       "\"name\":\"n\",\"uid\":\"u\"}]}}",
       NULL);
    invalid(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"finalizers\":[\"foo\"]}}",
            NULL,
            "ConfigMap \"c\" is invalid: metadata.finalizers: Invalid value: \"foo\": name is "
            "neither a standard finalizer name nor is it fully qualified");
    invalid(cm,
            "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"ownerReferences\":[{"
            "\"apiVersion\":\"apps/\",\"kind\":\"K\",\"name\":\"n\",\"uid\":\"\"}]}}",
            NULL,
            "ConfigMap \"c\" is invalid: [metadata.ownerReferences.apiVersion: Invalid value: "
            "\"apps/\": version must not be empty, metadata.ownerReferences.uid: Invalid value: "
            "\"\": uid must not be empty]");
    invalid(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"generation\":-1}}", NULL,
            "ConfigMap \"c\" is invalid: metadata.generation: Invalid value: -1: must be greater "
            "than or equal to 0");

    size_t big = 256 * 1024;
    char *value = malloc(big + 1);
    memset(value, 'x', big);
    value[big] = '\0';
    json_t *o = load("{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\"}}");
    json_object_set_new(json_object_get(o, "metadata"), "annotations",
                        json_pack("{s:s}", "k", value));
    json_t *causes = NULL;
    char *msg = NULL;
    assert_int_equal(sk_validate_object(cm, o, NULL, &causes, &msg), SK_ERR_INVALID);
    assert_string_equal(msg, "ConfigMap \"c\" is invalid: metadata.annotations: Too long: may "
                             "not be more than 262144 bytes");
    free(msg);
    json_decref(causes);
    json_decref(o);
    free(value);
}

static void test_decode_errors(void **state)
{
    (void)state;
    const sk_resource *cm = res("", "configmaps"), *secrets = res("", "secrets");
    json_t *causes =
        check(cm, "{\"metadata\":{\"name\":\"c\",\"labels\":{\"a\":1}}}", NULL, SK_ERR_BAD_REQUEST,
              "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: "
              "cannot unmarshal number into Go struct field ObjectMeta.metadata.labels "
              "of type string");
    assert_null(causes);
    check(cm, "{\"metadata\":\"x\"}", NULL, SK_ERR_BAD_REQUEST,
          "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal "
          "string into Go struct field ConfigMap.metadata of type v1.ObjectMeta");
    check(cm, "{\"metadata\":{\"name\":\"c\"},\"data\":[]}", NULL, SK_ERR_BAD_REQUEST,
          "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal "
          "array into Go struct field ConfigMap.data of type map[string]string");
    check(secrets, "{\"metadata\":{\"name\":\"s\"},\"data\":{\"k\":\"abc\"}}", NULL,
          SK_ERR_BAD_REQUEST,
          "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input "
          "byte 0");
    check(secrets, "{\"metadata\":{\"name\":\"s\"},\"data\":{\"k\":\"aGk*\"}}", NULL,
          SK_ERR_BAD_REQUEST,
          "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input "
          "byte 3");
    /* Null means absent, as in a Go decode. */
    ok(cm, "{\"metadata\":{\"name\":\"c\",\"namespace\":\"d\",\"labels\":null},\"data\":null}",
       NULL);
}

static void test_secret(void **state)
{
    (void)state;
    const sk_resource *secrets = res("", "secrets");
    ok(secrets,
       "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"type\":\"Opaque\","
       "\"data\":{\"k\":\"aGk=\"},\"stringData\":{\"j\":\"x\"}}",
       NULL);
    invalid(secrets,
            "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"stringData\":{\"a b\":\"x\"}}",
            NULL, "Secret \"s\" is invalid: data[a b]: Invalid value: \"a b\": " CONFIG_KEY_MSG);
    invalid(secrets,
            "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"type\":\"kubernetes.io/tls\","
            "\"data\":{\"tls.crt\":\"eA==\"}}",
            NULL, "Secret \"s\" is invalid: data[tls.key]: Required value");
    invalid(secrets,
            "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},"
            "\"type\":\"kubernetes.io/service-account-token\"}",
            NULL,
            "Secret \"s\" is invalid: metadata.annotations[kubernetes.io/service-account.name]: "
            "Required value");
    invalid(
        secrets,
        "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"type\":\"kubernetes.io/basic-auth\"}",
        NULL,
        "Secret \"s\" is invalid: [data[username]: Required value, data[password]: Required "
        "value]");
    invalid(secrets, "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"type\":\"b\"}",
            "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"type\":\"a\"}",
            "Secret \"s\" is invalid: type: Invalid value: \"b\": field is immutable");
    invalid(secrets,
            "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"immutable\":true,"
            "\"data\":{\"k\":\"eQ==\"}}",
            "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"immutable\":true,"
            "\"data\":{\"k\":\"eA==\"}}",
            "Secret \"s\" is invalid: data: Forbidden: field is immutable when `immutable` is set");
}

static void test_namespace_and_serviceaccount(void **state)
{
    (void)state;
    const sk_resource *ns = res("", "namespaces"), *sa = res("", "serviceaccounts");
    ok(ns, "{\"metadata\":{\"name\":\"team-a\"},\"spec\":{\"finalizers\":[\"kubernetes\"]}}", NULL);
    invalid(ns, "{\"metadata\":{\"name\":\"a.b\"}}", NULL,
            "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": " LABEL_MSG);
    invalid(ns, "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\"}}", NULL,
            "Namespace \"a\" is invalid: metadata.namespace: Forbidden: not allowed on this type");
    invalid(ns, "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"finalizers\":[\"foo\"]}}", NULL,
            "Namespace \"a\" is invalid: spec.finalizers: Invalid value: \"foo\": name is neither "
            "a standard finalizer name nor is it fully qualified");
    ok(sa,
       "{\"metadata\":{\"name\":\"default\",\"namespace\":\"d\"},\"secrets\":[{\"name\":\"x\"}]}",
       NULL);
    invalid(
        sa, "{\"metadata\":{\"name\":\"a_b\",\"namespace\":\"d\"}}", NULL,
        "ServiceAccount \"a_b\" is invalid: metadata.name: Invalid value: \"a_b\": " SUBDOMAIN_MSG);
}

static void test_lease(void **state)
{
    (void)state;
    const sk_resource *lease = sk_registry_find("coordination.k8s.io", "v1", "leases");
    assert_non_null(lease);
    ok(lease,
       "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},\"spec\":{\"holderIdentity\":\"me\","
       "\"leaseDurationSeconds\":15,\"leaseTransitions\":0,"
       "\"acquireTime\":\"2024-01-02T03:04:05.000000Z\","
       "\"renewTime\":\"2024-01-02T03:04:05.123456+02:00\"}}",
       NULL);
    invalid(
        lease,
        "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},\"spec\":{\"leaseDurationSeconds\":0,"
        "\"leaseTransitions\":-1}}",
        NULL,
        "Lease.coordination.k8s.io \"l\" is invalid: [spec.leaseDurationSeconds: Invalid "
        "value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must to "
        "greater or equal than 0]");
    check(lease,
          "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},"
          "\"spec\":{\"renewTime\":\"2024-01-02T03:04:05Z\"}}",
          NULL, SK_ERR_BAD_REQUEST,
          "Lease in version \"v1\" cannot be handled as a Lease: parsing time "
          "\"2024-01-02T03:04:05Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" "
          "as \".000000\"");
    check(lease,
          "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},"
          "\"spec\":{\"renewTime\":\"2024-13-02T03:04:05.000000Z\"}}",
          NULL, SK_ERR_BAD_REQUEST,
          "Lease in version \"v1\" cannot be handled as a Lease: parsing time "
          "\"2024-13-02T03:04:05.000000Z\": month out of range");
    check(lease,
          "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},"
          "\"spec\":{\"renewTime\":\"2023-02-29T03:04:05.000000Z\"}}",
          NULL, SK_ERR_BAD_REQUEST,
          "Lease in version \"v1\" cannot be handled as a Lease: parsing time "
          "\"2023-02-29T03:04:05.000000Z\": day out of range");
    check(lease,
          "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},"
          "\"spec\":{\"renewTime\":\"2024-01-02T03:04:05.123Z\"}}",
          NULL, SK_ERR_BAD_REQUEST,
          "Lease in version \"v1\" cannot be handled as a Lease: parsing time "
          "\"2024-01-02T03:04:05.123Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse "
          "\".123Z\" as \".000000\"");
    check(lease,
          "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},"
          "\"spec\":{\"renewTime\":\"2024-01-02T03:04:05.123456\"}}",
          NULL, SK_ERR_BAD_REQUEST,
          "Lease in version \"v1\" cannot be handled as a Lease: parsing time "
          "\"2024-01-02T03:04:05.123456\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse "
          "\"\" as \"Z07:00\"");
    check(lease,
          "{\"metadata\":{\"name\":\"l\",\"namespace\":\"d\"},"
          "\"spec\":{\"leaseDurationSeconds\":\"15\"}}",
          NULL, SK_ERR_BAD_REQUEST,
          "Lease in version \"v1\" cannot be handled as a Lease: json: cannot unmarshal string "
          "into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32");
}

static void test_event(void **state)
{
    (void)state;
    const sk_resource *ev = res("", "events");
    ok(ev,
       "{\"metadata\":{\"name\":\"pod.17a\",\"namespace\":\"d\"},\"involvedObject\":{"
       "\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"pod\"},\"reason\":\"Started\"}",
       NULL);
    invalid(ev,
            "{\"metadata\":{\"name\":\"e\",\"namespace\":\"d\"},\"involvedObject\":{"
            "\"namespace\":\"other\"}}",
            NULL,
            "Event \"e\" is invalid: involvedObject.namespace: Invalid value: \"other\": does not "
            "match event.namespace");
    /* Legacy events are not held to DNS names, only to path segments. */
    ok(ev,
       "{\"metadata\":{\"name\":\"Weird_Name:1\",\"namespace\":\"d\"},\"involvedObject\":{"
       "\"namespace\":\"d\"}}",
       NULL);
    invalid(ev,
            "{\"metadata\":{\"name\":\"a/b\",\"namespace\":\"d\"},\"involvedObject\":{"
            "\"namespace\":\"d\"}}",
            NULL,
            "Event \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not "
            "contain '/'");
    invalid(ev,
            "{\"metadata\":{\"name\":\"e\",\"namespace\":\"d\"},\"involvedObject\":{"
            "\"namespace\":\"d\"},\"eventTime\":\"2024-01-02T03:04:05.000000Z\"}",
            NULL,
            "Event \"e\" is invalid: [reportingComponent: Required value, reportingComponent: "
            "Invalid value: \"\": name part must be non-empty, reportingComponent: Invalid value: "
            "\"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), "
            "reportingInstance: Required value, action: Required value, reason: Required value]");
}

#define POD(spec) "{\"metadata\":{\"name\":\"p\",\"namespace\":\"d\"},\"spec\":" spec "}"
#define C_OK "{\"name\":\"c\",\"image\":\"nginx\"}"

static void test_event_v1(void **state)
{
    (void)state;
    const sk_resource *ev = sk_registry_find("events.k8s.io", "v1", "events");
    ok(ev,
       "{\"metadata\":{\"name\":\"e\",\"namespace\":\"d\"},\"eventTime\":"
       "\"2026-01-01T00:00:00.000000Z\",\"type\":\"Normal\",\"regarding\":{\"name\":\"p\"}}",
       NULL);
    invalid(ev, "{\"metadata\":{\"name\":\"e\",\"namespace\":\"d\"},\"type\":\"Odd\"}", NULL,
            "Event.events.k8s.io \"e\" is invalid: [eventTime: Required value, type: Invalid "
            "value: \"\": has invalid value: Odd]");
}

static void test_pod(void **state)
{
    (void)state;
    const sk_resource *pods = res("", "pods");
    ok(pods, POD("{\"containers\":[" C_OK "]}"), NULL);
    invalid(pods, POD("{}"), NULL, "Pod \"p\" is invalid: spec.containers: Required value");
    invalid(pods, POD("{\"containers\":[{\"name\":\"C\"}]}"), NULL,
            "Pod \"p\" is invalid: [spec.containers[0].name: Invalid value: \"C\": " LABEL_MSG
            ", spec.containers[0].image: Required value]");
    invalid(pods, POD("{\"containers\":[{\"image\":\"x\"}]}"), NULL,
            "Pod \"p\" is invalid: spec.containers[0].name: Required value");
    invalid(pods, POD("{\"containers\":[" C_OK "],\"initContainers\":[" C_OK "]}"), NULL,
            "Pod \"p\" is invalid: spec.initContainers[0].name: Duplicate value: \"c\"");
    /* Updates: images may change, the rest of the spec may not. */
    ok(pods, POD("{\"containers\":[{\"name\":\"c\",\"image\":\"nginx:2\"}]}"),
       POD("{\"containers\":[" C_OK "]}"));
    json_t *causes = check(pods, POD("{\"containers\":[" C_OK "],\"hostname\":\"h\"}"),
                           POD("{\"containers\":[" C_OK "]}"), SK_ERR_INVALID,
                           "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change "
                           "fields other than `spec.containers[*].image`,"
                           "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                           "`spec.tolerations` (only additions to existing tolerations),"
                           "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
                           "was previously negative)");
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 0), "reason")),
                        "FieldValueForbidden");
    json_decref(causes);
}

#define DEPLOY(sel, labels)                                                                        \
    "{\"metadata\":{\"name\":\"d\",\"namespace\":\"d\"},\"spec\":{" sel "\"template\":{"           \
    "\"metadata\":{\"labels\":" labels "},\"spec\":{\"restartPolicy\":\"Always\","                 \
    "\"containers\":[" C_OK "]}}}}"

static void test_workload_selectors(void **state)
{
    (void)state;
    const sk_resource *deploy = sk_registry_find("apps", "v1", "deployments");
    const sk_resource *rs = sk_registry_find("apps", "v1", "replicasets");
    const sk_resource *ds = sk_registry_find("apps", "v1", "daemonsets");
    ok(deploy,
       DEPLOY("\"selector\":{\"matchLabels\":{\"app\":\"a\"}},", "{\"app\":\"a\",\"x\":\"y\"}"),
       NULL);
    ok(deploy,
       DEPLOY("\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"In\","
              "\"values\":[\"a\",\"b\"]}]},",
              "{\"app\":\"b\"}"),
       NULL);
    invalid(deploy, DEPLOY("", "{\"b\":\"2\",\"a\":\"1\"}"), NULL,
            "Deployment.apps \"d\" is invalid: [spec.selector: Required value, "
            "spec.template.metadata.labels: Invalid value: map[string]string{\"a\":\"1\", "
            "\"b\":\"2\"}: `selector` does not match template `labels`]");
    invalid(rs, DEPLOY("\"selector\":{\"matchLabels\":{\"app\":\"a\"}},", "{\"app\":\"b\"}"), NULL,
            "ReplicaSet.apps \"d\" is invalid: spec.template.metadata.labels: Invalid value: "
            "map[string]string{\"app\":\"b\"}: `selector` does not match template `labels`");
    invalid(ds, DEPLOY("\"selector\":{},", "{\"app\":\"b\"}"), NULL,
            "DaemonSet.apps \"d\" is invalid: spec.selector: Invalid value: "
            "v1.LabelSelector{MatchLabels:map[string]string(nil), "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for "
            "daemonset");
    /* apps/v1 selectors are immutable. */
    invalid(
        deploy, DEPLOY("\"selector\":{\"matchLabels\":{\"app\":\"a\"}},", "{\"app\":\"a\"}"),
        DEPLOY("\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Exists\"}]},",
               "{\"app\":\"a\"}"),
        "Deployment.apps \"d\" is invalid: spec.selector: Invalid value: "
        "v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"a\"}, "
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable");
    ok(deploy, DEPLOY("\"selector\":{\"matchLabels\":{\"app\":\"a\"}},", "{\"app\":\"a\"}"),
       DEPLOY("\"selector\":{\"matchLabels\":{\"app\":\"a\"}},", "{\"app\":\"a\"}"));
    invalid(deploy,
            "{\"metadata\":{\"name\":\"d\",\"namespace\":\"d\"},\"spec\":{\"selector\":{"
            "\"matchLabels\":{\"app\":\"a\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":"
            "\"a\"}},\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[" C_OK "]}}}}",
            NULL,
            "Deployment.apps \"d\" is invalid: spec.template.spec.restartPolicy: Unsupported "
            "value: \"Never\": supported values: \"Always\"");
}

static void test_jobs_and_statefulsets(void **state)
{
    (void)state;
    const sk_resource *jobs = sk_registry_find("batch", "v1", "jobs");
    const sk_resource *sts = sk_registry_find("apps", "v1", "statefulsets");
#define JOB(sel, restart, image)                                                                   \
    "{\"metadata\":{\"name\":\"j\",\"namespace\":\"d\"},\"spec\":{" sel "\"template\":{"           \
    "\"metadata\":{\"labels\":{\"u\":\"1\"}},\"spec\":{" restart "\"containers\":[{\"name\":"      \
    "\"c\",\"image\":\"" image "\"}]}}}}"
    const char *good = JOB("\"selector\":{\"matchLabels\":{\"u\":\"1\"}},",
                           "\"restartPolicy\":\"Never\",", "busybox");
    ok(jobs, good, NULL);
    invalid(jobs, JOB("\"selector\":{\"matchLabels\":{\"u\":\"1\"}},", "", "busybox"), NULL,
            "Job.batch \"j\" is invalid: spec.template.spec.restartPolicy: Required value: valid "
            "values: \"OnFailure\", \"Never\"");
    invalid(jobs, JOB("", "\"restartPolicy\":\"Never\",", "busybox"), NULL,
            "Job.batch \"j\" is invalid: [spec.selector: Required value, "
            "spec.template.metadata.labels: Invalid value: map[string]string{\"u\":\"1\"}: "
            "`selector` does not match template `labels`]");
    invalid(jobs,
            JOB("\"selector\":{\"matchLabels\":{\"u\":\"1\"}},", "\"restartPolicy\":\"Never\",",
                "busybox:2"),
            good,
            "Job.batch \"j\" is invalid: spec.template: Invalid value: core.PodTemplateSpec{...}: "
            "field is immutable");
    ok(jobs, good, good);
#define STS(extra)                                                                                 \
    "{\"metadata\":{\"name\":\"s\",\"namespace\":\"d\"},\"spec\":{\"selector\":{\"matchLabels\":"  \
    "{\"u\":\"1\"}}," extra "\"template\":{\"metadata\":{\"labels\":{\"u\":\"1\"}},\"spec\":{"     \
    "\"restartPolicy\":\"Always\",\"containers\":[" C_OK "]}}}}"
    ok(sts, STS("\"replicas\":3,"), STS("\"replicas\":1,"));
    invalid(sts, STS("\"serviceName\":\"b\","), STS("\"serviceName\":\"a\","),
            "StatefulSet.apps \"s\" is invalid: spec: Forbidden: updates to statefulset spec for "
            "fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
            "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
            "'minReadySeconds' are forbidden");
}

static void test_service(void **state)
{
    (void)state;
    const sk_resource *svc = res("", "services");
#define SVC(name, spec)                                                                            \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"d\"},\"spec\":" spec "}"
    ok(svc, SVC("web", "{\"ports\":[{\"port\":80}]}"), NULL);
    ok(svc, SVC("headless", "{\"clusterIP\":\"None\"}"), NULL);
    ok(svc, SVC("ext", "{\"type\":\"ExternalName\",\"externalName\":\"example.com\"}"), NULL);
    invalid(svc, SVC("web", "{}"), NULL, "Service \"web\" is invalid: spec.ports: Required value");
    invalid(svc, SVC("1web", "{\"ports\":[{\"port\":80}]}"), NULL,
            "Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": a DNS-1035 label "
            "must consist of lower case alphanumeric characters or '-', start with an alphabetic "
            "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
            "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
    invalid(svc, SVC("web", "{\"ports\":[{\"port\":80},{\"name\":\"b\",\"port\":70000}]}"), NULL,
            "Service \"web\" is invalid: [spec.ports[0].name: Required value, spec.ports[1].port: "
            "Invalid value: 70000: must be between 1 and 65535, inclusive]");
    /* ValidateServiceUpdate judges clusterIPs (which kube's storage makes
     * follow a changed clusterIP): none may change, the primary may not go,
     * releasing the secondary needs SingleStack; headless to headless and
     * ExternalName on either side are exempt. */
#define IPS(ip, ips) "{\"clusterIP\":\"" ip "\",\"clusterIPs\":" ips ",\"ports\":[{\"port\":80}]}"
    invalid(svc, SVC("web", IPS("10.0.0.2", "[\"10.0.0.2\"]")),
            SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\"]")),
            "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: "
            "[]string{\"10.0.0.2\"}: may not change once set");
    invalid(svc, SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\",\"fd00::2\"]")),
            SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\",\"fd00::1\"]")),
            "Service \"web\" is invalid: spec.clusterIPs[1]: Invalid value: "
            "[]string{\"10.0.0.1\", \"fd00::2\"}: may not change once set");
    invalid(svc, SVC("web", "{\"ports\":[{\"port\":80}]}"),
            SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\"]")),
            "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: []string(nil): "
            "primary clusterIP can not be unset");
    invalid(svc, SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\"]")),
            SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\",\"fd00::1\"]")),
            "Service \"web\" is invalid: spec.ipFamilyPolicy: Invalid value: null: must be set "
            "to 'SingleStack' when releasing the secondary clusterIP");
    ok(svc, SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\",\"fd00::1\"]")),
       SVC("web", IPS("10.0.0.1", "[\"10.0.0.1\"]")));
    ok(svc, SVC("ext", "{\"type\":\"ExternalName\",\"externalName\":\"example.com\"}"),
       SVC("ext", IPS("10.0.0.1", "[\"10.0.0.1\"]")));
#undef IPS
    ok(svc, SVC("web", "{\"clusterIP\":\"10.0.0.1\",\"ports\":[{\"port\":81}]}"),
       SVC("web", "{\"clusterIP\":\"10.0.0.1\",\"ports\":[{\"port\":80}]}"));
    /* RBAC names are path segments: anything but '/', '%', '.' and '..'. */
    const sk_resource *roles = sk_registry_find("rbac.authorization.k8s.io", "v1", "roles");
    ok(roles, "{\"metadata\":{\"name\":\"system:Weird_Name\",\"namespace\":\"d\"}}", NULL);
    invalid(roles, "{\"metadata\":{\"name\":\"a/b\",\"namespace\":\"d\"}}", NULL,
            "Role.rbac.authorization.k8s.io \"a/b\" is invalid: metadata.name: Invalid value: "
            "\"a/b\": may not contain '/'");
}


#define CRD_OK                                                                                     \
    "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","        \
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","          \
    "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","            \
    "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\"}}}]},"  \
    "\"status\":{\"storedVersions\":[\"v1\"]}}"

static void test_crd(void **state)
{
    (void)state;
    const sk_resource *crds = sk_registry_find("apiextensions.k8s.io", "v1",
                                               "customresourcedefinitions");
    assert_non_null(crds);
    ok(crds, CRD_OK, NULL);
    /* the name must be plural.group */
    invalid(crds,
            "{\"metadata\":{\"name\":\"x.example.com\"},\"spec\":{\"group\":\"example.com\","
            "\"scope\":\"Cluster\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
            "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","
            "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{}}}]},"
            "\"status\":{\"storedVersions\":[\"v1\"]}}",
            NULL,
            "CustomResourceDefinition.apiextensions.k8s.io \"x.example.com\" is invalid: "
            "metadata.name: Invalid value: \"x.example.com\": must be "
            "spec.names.plural+\".\"+spec.group");
    /* no versions, a group without a dot, an unknown scope, a mixed-case kind is fine */
    json_t *causes = check(
        crds,
        "{\"metadata\":{\"name\":\"ws.example\"},\"spec\":{\"group\":\"example\","
        "\"scope\":\"Here\",\"names\":{\"plural\":\"ws\",\"singular\":\"w\",\"kind\":\"W\","
        "\"listKind\":\"WList\"},\"versions\":[]}}",
        NULL, SK_ERR_INVALID, NULL);
    const char *want[] = {"spec.group", "spec.scope", "spec.versions", "status.storedVersions"};
    assert_int_equal(json_array_size(causes), 4);
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(causes, i), "field")),
                            want[i]);
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 1), "message")),
                        "Unsupported value: \"Here\": supported values: \"Cluster\", "
                        "\"Namespaced\"");
    assert_string_equal(json_string_value(json_object_get(json_array_get(causes, 3), "message")),
                        "Invalid value: []string(nil): must have at least one stored version");
    json_decref(causes);
    /* two storage versions, a bad version name, a missing schema, a bad short name,
     * kind == listKind, a scale path outside .spec, a bad printer column type */
    causes = check(
        crds,
        "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
        "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
        "\"kind\":\"Widget\",\"listKind\":\"Widget\",\"shortNames\":[\"w_1\"]},"
        "\"versions\":[{\"name\":\"V1\",\"served\":true,\"storage\":true,"
        "\"subresources\":{\"scale\":{\"specReplicasPath\":\".status.r\","
        "\"statusReplicasPath\":\".status.r\"}},"
        "\"additionalPrinterColumns\":[{\"name\":\"c\",\"type\":\"map\",\"jsonPath\":\".a\"}]},"
        "{\"name\":\"v2\",\"served\":true,\"storage\":true,"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\"}}}]},"
        "\"status\":{\"storedVersions\":[\"v1\"]}}",
        NULL, SK_ERR_INVALID, NULL);
    const char *fields[] = {"spec.versions[0].name",
                            "spec.versions[0].schema.openAPIV3Schema",
                            "spec.versions[0].subresources.scale.specReplicasPath",
                            "spec.versions[0].additionalPrinterColumns[0].type",
                            "spec.versions",
                            "spec.names.shortNames[0]",
                            "spec.names.listKind",
                            "status.storedVersions",
                            "status.storedVersions",
                            "status.storedVersions[0]"};
    size_t n = sizeof fields / sizeof fields[0];
    assert_int_equal(json_array_size(causes), n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(causes, i), "field")),
                            fields[i]);
    json_decref(causes);
    /* group and plural never change; scope and kind once Established */
    invalid(crds,
            "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
            "\"scope\":\"Cluster\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
            "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","
            "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{}}}]},"
            "\"status\":{\"storedVersions\":[\"v1\"]}}",
            "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
            "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\"}},"
            "\"status\":{\"conditions\":[{\"type\":\"Established\","
            "\"status\":\"True\"}]}}",
            "CustomResourceDefinition.apiextensions.k8s.io \"widgets.example.com\" is invalid: "
            "spec.scope: Invalid value: \"Cluster\": field is immutable");
    ok(crds, CRD_OK,
       "{\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
       "\"scope\":\"Cluster\",\"names\":{\"plural\":\"widgets\"}}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_name_formats),
        cmocka_unit_test(test_configmap_name),
        cmocka_unit_test(test_configmap_data),
        cmocka_unit_test(test_configmap_immutable),
        cmocka_unit_test(test_metadata),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_secret),
        cmocka_unit_test(test_namespace_and_serviceaccount),
        cmocka_unit_test(test_lease),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_event_v1),
        cmocka_unit_test(test_pod),
        cmocka_unit_test(test_workload_selectors),
        cmocka_unit_test(test_jobs_and_statefulsets),
        cmocka_unit_test(test_service),
        cmocka_unit_test(test_crd),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
