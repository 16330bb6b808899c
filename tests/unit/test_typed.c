/*
 * test_typed.c - the typed round trip: quantities canonicalized as
 * resource.Quantity marshals them (apimachinery's own ParseEmit table plus
 * the forms users write), decode errors worded as encoding/json words them,
 * zero values and field order as json.Marshal writes a Go struct, times in
 * UTC, base64 re-encoded, undeclared fields dropped.
 */
#include "kube/registry.h"
#include "kube/defaults.h"
#include "kube/typed.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const sk_resource *kind(const char *group, const char *version, const char *k)
{
    const sk_resource *r = sk_registry_find_kind(group, version, k);
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

/* The compact round trip of in, or fails. */
static char *round_trip(const sk_resource *r, const char *in)
{
    json_t *o = load(in), *out = NULL;
    char *msg = NULL;
    if (sk_typed_normalize(r, o, &out, &msg) != SK_OK)
        fail_msg("normalize %s: %s", in, msg);
    char *s = json_dumps(out, JSON_COMPACT);
    json_decref(o);
    json_decref(out);
    return s;
}

static void same(const sk_resource *r, const char *in, const char *want)
{
    char *got = round_trip(r, in);
    assert_string_equal(got, want);
    free(got);
}

static void bad(const sk_resource *r, const char *in, const char *want)
{
    json_t *o = load(in), *out = NULL;
    char *msg = NULL;
    assert_int_equal(sk_typed_normalize(r, o, &out, &msg), SK_ERR_BAD_REQUEST);
    assert_null(out);
    assert_string_equal(msg, want);
    free(msg);
    msg = NULL;
    assert_int_equal(sk_typed_check(r, o, &msg), SK_ERR_BAD_REQUEST);
    assert_string_equal(msg, want);
    free(msg);
    json_decref(o);
}

static void test_quantity(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } table[] = {
        /* apimachinery quantity_test.go TestQuantityParseEmit */
        {"1Ki", "1Ki"},
        {"1Mi", "1Mi"},
        {"1Gi", "1Gi"},
        {"1024Mi", "1Gi"},
        {"1000M", "1G"},
        {".001Ki", "1024m"},
        {".000001Ki", "1024u"},
        {".000000001Ki", "1024n"},
        {".000000000001Ki", "2n"},
        {"-1024Mi", "-1Gi"},
        {"-.001Ki", "-1024m"},
        /* forms users write */
        {"0", "0"},
        {"0m", "0"},
        {"0Gi", "0"},
        {"1000m", "1"},
        {"0.5", "500m"},
        {"1.5", "1500m"},
        {"100m", "100m"},
        {"250m", "250m"},
        {"1000", "1k"},
        {"1500", "1500"},
        {"128974848", "128974848"},
        {"129e6", "129e6"},
        {"123Mi", "123Mi"},
        {"1536Mi", "1536Mi"},
        {"1.5Gi", "1536Mi"},
        {"2048Ki", "2Mi"},
        {"512", "512"},
        {"1e3", "1e3"},
        {"1e4", "10e3"},
        {"12e-1", "1200e-3"},
        {"0.1Ki", "102400m"},
        {"1e-12", "1e-9"},
        {"0.000000000001", "1n"},
        {"1n", "1n"},
        {"10u", "10u"},
        {"+1", "+1"},
        {"5000k", "5M"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char *out = NULL;
        const char *err = NULL;
        if (sk_typed_quantity(table[i].in, &out, &err) != SK_OK)
            fail_msg("%s: %s", table[i].in, err);
        if (strcmp(out, table[i].want) != 0)
            fail_msg("%s: got %s, want %s", table[i].in, out, table[i].want);
        free(out);
    }
    static const struct {
        const char *in, *err;
    } errors[] = {
        {"", "quantities must match the regular expression "
             "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"abc", "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"1.5.5", "quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"1Kb", "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"1KK", "unable to parse quantity's suffix"},
        {"1mi", "unable to parse quantity's suffix"},
    };
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        char *out = NULL;
        const char *err = NULL;
        assert_int_equal(sk_typed_quantity(errors[i].in, &out, &err), SK_ERR_BAD_REQUEST);
        assert_null(out);
        assert_string_equal(err, errors[i].err);
    }
}

/* SetDefaults_ResourceList's RoundUp(-3) on canonical quantities: NULL
 * where the value is exact at 1m (Go keeps the string). */
static void test_quantity_round_up_milli(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } table[] = {
        {"100u", "1m"}, {"1500u", "2m"},    {"1001u", "2m"}, {"999999u", "1"},
        {"1n", "1m"},   {"100e-6", "1e-3"}, {"1m", NULL},    {"1", NULL},
        {"1Gi", NULL},  {"102400m", NULL},  {"0", NULL},     {"1200e-3", NULL},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char *out = sk_typed_quantity_round_up_milli(table[i].in);
        if (!table[i].want && out)
            fail_msg("%s: got %s, want it kept", table[i].in, out);
        if (table[i].want && (!out || strcmp(out, table[i].want) != 0))
            fail_msg("%s: got %s, want %s", table[i].in, out ? out : "(kept)", table[i].want);
        free(out);
    }
}

static void test_decode_errors(void **state)
{
    (void)state;
    const sk_resource *pod = kind("", "v1", "Pod"), *deploy = kind("apps", "v1", "Deployment");
    const sk_resource *svc = kind("", "v1", "Service"), *secret = kind("", "v1", "Secret");
    bad(pod, "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":\"x\"}}",
        "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal string into Go "
        "struct field PodSpec.spec.containers of type []v1.Container");
    bad(pod, "{\"spec\":{\"containers\":[{\"name\":1}]}}",
        "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go "
        "struct field Container.spec.containers.name of type string");
    bad(pod, "{\"spec\":7}",
        "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go "
        "struct field Pod.spec of type v1.PodSpec");
    bad(deploy, "{\"spec\":{\"replicas\":1.5}}",
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal "
        "number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32");
    bad(deploy, "{\"spec\":{\"replicas\":3000000000}}",
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal "
        "number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32");
    bad(deploy, "{\"spec\":{\"replicas\":\"3\"}}",
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal "
        "string into Go struct field DeploymentSpec.spec.replicas of type int32");
    /* A quantity's error stops the decoder: it wins over an earlier type error. */
    bad(pod,
        "{\"metadata\":{\"name\":1},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
        "{\"limits\":{\"cpu\":\"lots\"}}}]}}",
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular "
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    bad(svc, "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":true}]}}",
        "Service in version \"v1\" cannot be handled as a Service: json: cannot unmarshal bool "
        "into Go struct field ServicePort.spec.ports.targetPort of type int32");
    bad(secret, "{\"data\":{\"k\":\"a\"}}",
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input "
        "byte 0");
    bad(pod, "{\"metadata\":{\"creationTimestamp\":\"yesterday\"}}",
        "Pod in version \"v1\" cannot be handled as a Pod: parsing time \"yesterday\" as "
        "\"2006-01-02T15:04:05Z07:00\": cannot parse \"yesterday\" as \"2006\"");
    bad(pod, "{\"metadata\":{\"creationTimestamp\":5}}",
        "Pod in version \"v1\" cannot be handled as a Pod: json: cannot unmarshal number into Go "
        "struct field ObjectMeta.metadata.creationTimestamp of type string");
}

static void test_zero_values_and_order(void **state)
{
    (void)state;
    const sk_resource *pod = kind("", "v1", "Pod"), *deploy = kind("apps", "v1", "Deployment");
    /* Struct fields always written, omitempty zeros dropped, declaration order, unknown gone. */
    same(pod,
         "{\"spec\":{\"containers\":[{\"image\":\"nginx\",\"name\":\"c\",\"bogus\":1,"
         "\"stdin\":false,\"resources\":{\"limits\":{\"memory\":\"1024Mi\",\"cpu\":\"1000m\"}}}]},"
         "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":"
         "{\"b\":\"2\",\"a\":\"1\"}}}",
         "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"p\","
         "\"creationTimestamp\":null,\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":"
         "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\",\"resources\":{\"limits\":"
         "{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]},\"status\":{}}");
    /* Pointers kept when present, even zero; the template's metadata is written. */
    same(deploy,
         "{\"spec\":{\"replicas\":0,\"paused\":false,\"template\":{\"spec\":"
         "{\"containers\":null}}}}",
         "{\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"replicas\":0,\"selector\":null,"
         "\"template\":{\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"containers\":null}},"
         "\"strategy\":{}},\"status\":{}}");
}

static void test_canonical_forms(void **state)
{
    (void)state;
    const sk_resource *cm = kind("", "v1", "ConfigMap"),
                      *lease = kind("coordination.k8s.io", "v1", "Lease");
    const sk_resource *svc = kind("", "v1", "Service");
    same(cm,
         "{\"metadata\":{\"creationTimestamp\":\"2024-01-02T00:30:05.5+01:00\"},"
         "\"binaryData\":{\"k\":\"aG\\n=\\r\\n=\"},\"data\":null}",
         "{\"metadata\":{\"creationTimestamp\":\"2024-01-01T23:30:05Z\"},"
         "\"binaryData\":{\"k\":\"aA==\"}}");
    same(lease, "{\"spec\":{\"renewTime\":\"2024-03-01T00:00:00.123456-02:00\"}}",
         "{\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"renewTime\":"
         "\"2024-03-01T02:00:00.123456Z\"}}");
    same(lease, "{\"spec\":{\"renewTime\":\"0999-02-28T23:59:59.000001-00:00\"}}",
         "{\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"renewTime\":"
         "\"0999-02-28T23:59:59.000001Z\"}}");
    same(svc, "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":\"http\"},{\"port\":81}]}}",
         "{\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"ports\":[{\"port\":80,"
         "\"targetPort\":\"http\"},{\"port\":81,\"targetPort\":0}]},\"status\":"
         "{\"loadBalancer\":{}}}");
    /* Map values of null decode to the zero value. */
    same(cm, "{\"data\":{\"a\":null}}",
         "{\"metadata\":{\"creationTimestamp\":null},\"data\":{\"a\":\"\"}}");
}

/* Round trip, defaults, round trip: what admission stores. */
static char *admitted(const sk_resource *r, const char *in)
{
    json_t *o = load(in), *a = NULL, *b = NULL;
    char *msg = NULL;
    assert_int_equal(sk_typed_normalize(r, o, &a, &msg), SK_OK);
    assert_int_equal(sk_defaults_apply(r, a, &msg), SK_OK);
    assert_int_equal(sk_typed_normalize(r, a, &b, &msg), SK_OK);
    char *s = json_dumps(b, JSON_COMPACT);
    json_decref(o);
    json_decref(a);
    json_decref(b);
    return s;
}

static void test_defaults(void **state)
{
    (void)state;
    static const struct {
        const char *image, *policy;
    } pulls[] = {
        {"nginx", "Always"},
        {"nginx:latest", "Always"},
        {"nginx:1.25", "IfNotPresent"},
        {"localhost:5000/app", "Always"},
        {"localhost:5000/app:v1", "IfNotPresent"},
        {"app@sha256:abc", "IfNotPresent"},
    };
    const sk_resource *pod = kind("", "v1", "Pod");
    for (size_t i = 0; i < sizeof pulls / sizeof pulls[0]; i++) {
        char in[256], want[128];
        snprintf(in, sizeof in, "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"%s\"}]}}",
                 pulls[i].image);
        snprintf(want, sizeof want, "\"imagePullPolicy\":\"%s\"", pulls[i].policy);
        char *got = admitted(pod, in);
        if (!strstr(got, want))
            fail_msg("%s: %s", pulls[i].image, got);
        free(got);
    }
    char *got = admitted(pod, "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x:1\","
                              "\"livenessProbe\":{\"httpGet\":{\"port\":8080}}}],"
                              "\"volumes\":[{\"name\":\"v\"},{\"name\":\"s\",\"secret\":{}}]}}");
    assert_string_equal(
        got,
        "{\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"volumes\":[{\"name\":\"v\","
        "\"emptyDir\":{}},{\"name\":\"s\",\"secret\":{\"defaultMode\":420}}],\"containers\":[{"
        "\"name\":\"c\",\"image\":\"x:1\",\"resources\":{},\"livenessProbe\":{\"httpGet\":{"
        "\"path\":\"/\",\"port\":8080,\"scheme\":\"HTTP\"},\"timeoutSeconds\":1,"
        "\"periodSeconds\":10,\"successThreshold\":1,\"failureThreshold\":3},"
        "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":"
        "\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":\"Always\","
        "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":"
        "{},\"schedulerName\":\"default-scheduler\",\"priority\":0,\"enableServiceLinks\":true,"
        "\"preemptionPolicy\":\"PreemptLowerPriority\"},\"status\":{}}");
    free(got);
    /* Explicit values win; a pointer set to its zero is kept. */
    got = admitted(kind("apps", "v1", "Deployment"),
                   "{\"spec\":{\"replicas\":0,\"strategy\":{\"type\":\"Recreate\"},"
                   "\"template\":{\"spec\":{\"containers\":[]}}}}");
    assert_string_equal(got, "{\"metadata\":{\"creationTimestamp\":null},\"spec\":{\"replicas\":0,"
                             "\"selector\":null,\"template\":{\"metadata\":{\"creationTimestamp\":"
                             "null},\"spec\":{\"containers\":[],\"restartPolicy\":\"Always\","
                             "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
                             "\"securityContext\":{},\"schedulerName\":\"default-scheduler\"}},"
                             "\"strategy\":{\"type\":\"Recreate\"},\"revisionHistoryLimit\":10,"
                             "\"progressDeadlineSeconds\":600},\"status\":{}}");
    free(got);
    got = admitted(kind("apps", "v1", "StatefulSet"), "{\"spec\":{}}");
    assert_non_null(strstr(got, "\"updateStrategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":"
                                "{\"partition\":0}}"));
    assert_non_null(strstr(got, "\"persistentVolumeClaimRetentionPolicy\":{\"whenDeleted\":"
                                "\"Retain\",\"whenScaled\":\"Retain\"}"));
    free(got);
    got = admitted(kind("batch", "v1", "CronJob"), "{\"spec\":{\"schedule\":\"* * * * *\"}}");
    assert_non_null(strstr(got, "\"concurrencyPolicy\":\"Allow\",\"suspend\":false,"));
    assert_non_null(strstr(got, "\"successfulJobsHistoryLimit\":3,\"failedJobsHistoryLimit\":1"));
    free(got);
}

/* encoding/json's syntax errors, as the kind probe of a POST body words
 * them (kube answers "couldn't get version/kind; json parse error: ..."). */
static void test_go_syntax_errors(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"{\"a\":[1,2.5e-3,true,false,null,\"\\u00e9\\n\"]} ", NULL},
        {"apiVersion: v1\n", "invalid character 'a' looking for beginning of value"},
        {"", "unexpected end of JSON input"},
        {"{\"a\":", "unexpected end of JSON input"},
        {"\"\\u12", "unexpected end of JSON input"},
        {"{\"a\" 1}", "invalid character '1' after object key"},
        {"{\"a\":1 \"b\"}", "invalid character '\"' after object key:value pair"},
        {"[1 2]", "invalid character '2' after array element"},
        {"{1:2}", "invalid character '1' looking for beginning of object key string"},
        {"{\"a\":1,}", "invalid character '}' looking for beginning of object key string"},
        {"[1,]", "invalid character ']' looking for beginning of value"},
        {"{} x", "invalid character 'x' after top-level value"},
        {"01", "invalid character '1' after top-level value"},
        {"-x", "invalid character 'x' in numeric literal"},
        {"1.x", "invalid character 'x' after decimal point in numeric literal"},
        {"1e+x", "invalid character 'x' in exponent of numeric literal"},
        {"tru", "unexpected end of JSON input"},
        {"trux", "invalid character 'x' in literal true (expecting 'e')"},
        {"nul!", "invalid character '!' in literal null (expecting 'l')"},
        {"\"a\tb\"", "invalid character '\\t' in string literal"},
        {"\"\\q\"", "invalid character 'q' in string escape code"},
        {"\"\\u12g4\"", "invalid character 'g' in \\u hexadecimal character escape"},
        {"'a'", "invalid character '\\'' looking for beginning of value"},
        {"\x01", "invalid character '\\x01' looking for beginning of value"},
        {"\xe9", "invalid character '\xc3\xa9' looking for beginning of value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = sk_typed_go_syntax_error(cases[i].in, strlen(cases[i].in));
        if (cases[i].want)
            assert_string_equal(got, cases[i].want);
        else
            assert_null(got);
        free(got);
    }
}

/* The other groups' defaulters leave what the client set, a pointer's zero
 * included, and fill Go's zero of a plain integer. */
static void test_group_defaults_keep_explicit(void **state)
{
    (void)state;
    static const struct {
        const char *group, *version, *kind, *in, *want;
    } table[] = {
        {"flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration",
         "{\"spec\":{\"type\":\"Limited\",\"limited\":{\"nominalConcurrencyShares\":0,"
         "\"limitResponse\":{\"type\":\"Queue\",\"queuing\":{\"handSize\":0}}}}}",
         "\"limited\":{\"nominalConcurrencyShares\":0,\"limitResponse\":{\"type\":\"Queue\","
         "\"queuing\":{\"queues\":64,\"handSize\":8,\"queueLengthLimit\":50}},"
         "\"lendablePercent\":0}"},
        {"networking.k8s.io", "v1", "NetworkPolicy",
         "{\"spec\":{\"podSelector\":{},\"egress\":[{}],\"policyTypes\":[\"Egress\"]}}",
         "\"policyTypes\":[\"Egress\"]"},
        {"autoscaling", "v2", "HorizontalPodAutoscaler",
         "{\"spec\":{\"minReplicas\":0,\"maxReplicas\":2,\"metrics\":[{\"type\":\"Pods\"}]}}",
         "\"spec\":{\"scaleTargetRef\":{\"kind\":\"\",\"name\":\"\"},\"minReplicas\":0,"
         "\"maxReplicas\":2,\"metrics\":[{\"type\":\"Pods\"}]}"},
        {"autoscaling", "v1", "HorizontalPodAutoscaler", "{\"spec\":{\"maxReplicas\":2}}",
         "\"spec\":{\"scaleTargetRef\":{\"kind\":\"\",\"name\":\"\"},\"minReplicas\":1,"
         "\"maxReplicas\":2}"},
        {"storage.k8s.io", "v1", "CSIDriver",
         "{\"spec\":{\"attachRequired\":false,\"volumeLifecycleModes\":[\"Ephemeral\"]}}",
         "\"attachRequired\":false"},
        {"rbac.authorization.k8s.io", "v1", "RoleBinding",
         "{\"roleRef\":{\"apiGroup\":\"x\",\"kind\":\"Role\",\"name\":\"r\"},"
         "\"subjects\":[{\"kind\":\"User\",\"apiGroup\":\"y\",\"name\":\"u\"}]}",
         "\"subjects\":[{\"kind\":\"User\",\"apiGroup\":\"y\",\"name\":\"u\"}],"
         "\"roleRef\":{\"apiGroup\":\"x\",\"kind\":\"Role\",\"name\":\"r\"}"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        char *got = admitted(kind(table[i].group, table[i].version, table[i].kind), table[i].in);
        if (!strstr(got, table[i].want))
            fail_msg("%s: %s lacks %s", table[i].kind, got, table[i].want);
        free(got);
    }
}

/* The unstructured converter's words for a strategic merge patch's result,
 * and the patch as Go's %v prints it. */
static void test_restore_errors(void **state)
{
    (void)state;
    const sk_resource *cm = kind("", "v1", "ConfigMap"), *deploy = kind("apps", "v1", "Deployment");
    const struct {
        const sk_resource **r;
        const char *in, *want;
    } cases[] = {
        {&cm, "{\"metadata\":{\"name\":\"c\",\"labels\":\"x\"}}", "cannot restore map from string"},
        {&cm, "{\"metadata\":{\"finalizers\":{\"a\":1}}}", "cannot restore slice from map"},
        {&cm, "{\"metadata\":[1]}", "cannot restore struct from: slice"},
        {&cm, "{\"metadata\":{\"name\":5}}", "cannot convert int64 to string"},
        {&cm, "{\"metadata\":{\"name\":true}}", "unrecognized type: string"},
        {&cm, "{\"metadata\":{\"generation\":\"1\"}}", "unrecognized type: int64"},
        {&deploy, "{\"spec\":{\"replicas\":1.5}}", "cannot convert float64 to int32"},
        {&deploy, "{\"spec\":{\"replicas\":2.0}}", NULL}, /* converts; JSON would not */
        {&cm, "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"b\"}}", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *obj = load(cases[i].in);
        char *got = NULL;
        sk_err err = sk_typed_restore_error(*cases[i].r, obj, &got);
        if (cases[i].want) {
            assert_int_equal(err, SK_ERR_INVALID);
            assert_string_equal(got, cases[i].want);
        } else {
            assert_int_equal(err, SK_OK);
        }
        free(got);
        json_decref(obj);
    }
    json_t *patch = load("{\"metadata\":{\"labels\":\"x\",\"b\":[1,2.5,null,true]},\"a\":{}}");
    sk_buf b = SK_BUF_INIT;
    sk_typed_go_print(&b, patch);
    assert_string_equal(b.data, "map[a:map[] metadata:map[b:[1 2.5 <nil> true] labels:x]]");
    sk_buf_free(&b);
    json_decref(patch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantity),
        cmocka_unit_test(test_quantity_round_up_milli),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_zero_values_and_order),
        cmocka_unit_test(test_canonical_forms),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_go_syntax_errors),
        cmocka_unit_test(test_restore_errors),
        cmocka_unit_test(test_group_defaults_keep_explicit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
