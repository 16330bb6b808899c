/*
 * test_fieldcheck.c - server-side field validation finds what
 * kube-apiserver's strict decoder finds, worded and ordered the same way:
 * unknown fields at any depth (maps, lists), duplicates interleaved in
 * document order, opaque FieldsV1, realistic objects of every kind clean,
 * merge-patch ordering, the Strict messages, and malformed input rejected.
 */
#include "kube/fieldcheck.h"
#include "core/buf.h"
#include "kube/registry.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const sk_resource *kind(const char *group, const char *k)
{
    const sk_resource *r = sk_registry_find_kind(group, "v1", k);
    assert_non_null(r);
    return r;
}

/* Findings of body joined with "; " ("" if none), to compare in one assertion. */
static char *joined(json_t *found)
{
    size_t cap = 1;
    for (size_t i = 0; i < json_array_size(found); i++)
        cap += strlen(json_string_value(json_array_get(found, i))) + 2;
    char *s = calloc(1, cap);
    assert_non_null(s);
    for (size_t i = 0; i < json_array_size(found); i++) {
        if (i)
            strcat(s, "; ");
        strcat(s, json_string_value(json_array_get(found, i)));
    }
    json_decref(found);
    return s;
}

static void body_finds(const sk_resource *r, const char *body, const char *want)
{
    json_t *found = NULL;
    assert_int_equal(sk_fieldcheck_body(r, body, strlen(body), &found), SK_OK);
    char *got = joined(found);
    assert_string_equal(got, want);
    free(got);
}

static void unknown_finds(const sk_resource *r, const char *text, const char *want)
{
    json_t *obj = json_loads(text, 0, NULL), *found = NULL;
    assert_non_null(obj);
    assert_int_equal(sk_fieldcheck_unknown(r, obj, &found), SK_OK);
    json_decref(obj);
    char *got = joined(found);
    assert_string_equal(got, want);
    free(got);
}

/* metadata as kubectl and controllers send it, including server-set fields. */
#define META(ns)                                                                                   \
    "\"metadata\":{\"name\":\"n1\",\"namespace\":\"" ns "\",\"generateName\":\"n-\","              \
    "\"uid\":\"0b3b7f5e-6a1f-4a47-9a3e-2f4e2f1c0a11\",\"resourceVersion\":\"12\","                 \
    "\"generation\":3,\"creationTimestamp\":\"2024-01-02T03:04:05Z\","                             \
    "\"deletionTimestamp\":null,\"deletionGracePeriodSeconds\":30,\"selfLink\":\"\","              \
    "\"labels\":{\"app\":\"web\",\"tier\":\"fe\"},"                                                \
    "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"},"               \
    "\"finalizers\":[\"example.com/f\"],"                                                          \
    "\"ownerReferences\":[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"o\","           \
    "\"uid\":\"u1\",\"controller\":true,\"blockOwnerDeletion\":false}],"                           \
    "\"managedFields\":[{\"manager\":\"kubectl-client-side-apply\",\"operation\":\"Update\","      \
    "\"apiVersion\":\"v1\",\"time\":\"2024-01-02T03:04:05Z\",\"fieldsType\":\"FieldsV1\","         \
    "\"subresource\":\"\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}},"     \
    "\"f:labels\":{}},\"k:{\\\"uid\\\":\\\"u1\\\"}\":{}}}]}"

static void test_valid_objects_of_every_kind(void **state)
{
    (void)state;
    body_finds(
        kind("", "Namespace"),
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"," META(
            "") ",\"spec\":{\"finalizers\":["
                "\"kubernetes\"]},\"status\":{\"phase\":\"Active\",\"conditions\":[{\"type\":"
                "\"NamespaceDeletionContentFailure\",\"status\":\"False\",\"reason\":\"r\","
                "\"message\":\"m\",\"lastTransitionTime\":\"2024-01-02T03:04:05Z\"}]}}",
        "");
    body_finds(kind("", "ConfigMap"),
               "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"," META(
                   "d") ",\"data\":{\"a\":\"1\"},"
                        "\"binaryData\":{\"b\":\"AAE=\"},\"immutable\":false}",
               "");
    body_finds(
        kind("", "Secret"),
        "{\"apiVersion\":\"v1\",\"kind\":\"Secret\"," META(
            "d") ",\"type\":\"Opaque\","
                 "\"data\":{\"a\":\"MQ==\"},\"stringData\":{\"b\":\"2\"},\"immutable\":true}",
        "");
    body_finds(
        kind("", "ServiceAccount"),
        "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\"," META(
            "d") ","
                 "\"automountServiceAccountToken\":false,\"imagePullSecrets\":[{\"name\":\"p\"}],"
                 "\"secrets\":[{\"name\":\"s\",\"namespace\":\"d\",\"kind\":\"Secret\","
                 "\"apiVersion\":"
                 "\"v1\",\"uid\":\"u\",\"resourceVersion\":\"1\",\"fieldPath\":\"\"}]}",
        "");
    body_finds(
        kind("", "Event"),
        "{\"apiVersion\":\"v1\",\"kind\":\"Event\"," META(
            "d") ",\"involvedObject\":{"
                 "\"kind\":\"Pod\",\"namespace\":\"d\",\"name\":\"p\",\"uid\":\"u\",\"apiVersion\":"
                 "\"v1\",\"resourceVersion\":\"5\",\"fieldPath\":\"spec.containers{c}\"},"
                 "\"reason\":"
                 "\"Started\",\"message\":\"m\",\"source\":{\"component\":\"kubelet\",\"host\":"
                 "\"h\"},"
                 "\"firstTimestamp\":\"2024-01-02T03:04:05Z\",\"lastTimestamp\":null,\"count\":2,"
                 "\"type\":\"Normal\",\"eventTime\":\"2024-01-02T03:04:05.000001Z\",\"series\":{"
                 "\"count\":2,\"lastObservedTime\":\"2024-01-02T03:04:05.000001Z\"},\"action\":"
                 "\"a\","
                 "\"related\":{\"kind\":\"Node\",\"name\":\"n\"},\"reportingComponent\":\"k\","
                 "\"reportingInstance\":\"i\"}",
        "");
    body_finds(
        kind("coordination.k8s.io", "Lease"),
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\"," META(
            "d") ","
                 "\"spec\":{\"holderIdentity\":\"h\",\"leaseDurationSeconds\":15,\"acquireTime\":"
                 "\"2024-01-02T03:04:05.000000Z\",\"renewTime\":\"2024-01-02T03:04:05.000000Z\","
                 "\"leaseTransitions\":1,\"strategy\":\"OldestEmulationVersion\","
                 "\"preferredHolder\":\"p\"}}",
        "");
}

/* Every served kind has a schema the checker can use: the minimal object is
 * clean and an unknown top-level field is found. */
static void test_every_registry_kind(void **state)
{
    (void)state;
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"apiVersion\":\"%s\",\"kind\":\"%s\",\"metadata\":{\"name\":\"x\"},\"dta\":1}",
                 all[i]->api_version, all[i]->kind);
        body_finds(all[i], body, "unknown field \"dta\"");
    }
}

static void test_unknown_top_level_and_nested(void **state)
{
    (void)state;
    const sk_resource *cm = kind("", "ConfigMap"), *lease = kind("coordination.k8s.io", "Lease");
    body_finds(cm, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"dta\":{\"a\":\"b\"}}",
               "unknown field \"dta\"");
    body_finds(cm, "{\"metadata\":{\"name\":\"a\",\"labelz\":{\"x\":\"y\"}}}",
               "unknown field \"metadata.labelz\"");
    body_finds(lease, "{\"spec\":{\"holderIdentity\":\"h\",\"foo\":{\"bar\":1}}}",
               "unknown field \"spec.foo\"");
    body_finds(kind("", "Event"), "{\"involvedObject\":{\"kind\":\"Pod\",\"podName\":\"p\"}}",
               "unknown field \"involvedObject.podName\"");
    /* Case matters: kube-apiserver decodes case-sensitively. */
    body_finds(cm, "{\"Data\":{},\"metadata\":{\"Name\":\"a\"}}",
               "unknown field \"Data\"; unknown field \"metadata.Name\"");
}

static void test_lists_and_maps(void **state)
{
    (void)state;
    const sk_resource *cm = kind("", "ConfigMap"), *sa = kind("", "ServiceAccount");
    body_finds(cm,
               "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"a\"},{\"uid\":\"b\",\"foo\":1}],"
               "\"managedFields\":[{\"manager\":\"m\",\"bogus\":true}]}}",
               "unknown field \"metadata.ownerReferences[1].foo\"; "
               "unknown field \"metadata.managedFields[0].bogus\"");
    body_finds(sa, "{\"imagePullSecrets\":[{\"name\":\"a\",\"namespace\":\"x\"}]}",
               "unknown field \"imagePullSecrets[0].namespace\"");
    body_finds(kind("", "Namespace"), "{\"status\":{\"conditions\":[{\"type\":\"t\",\"x\":1}]}}",
               "unknown field \"status.conditions[0].x\"");
    /* Map keys are free, map values follow the value schema (a string here: a
     * mismatched object is the type checker's business, not an unknown field). */
    body_finds(cm, "{\"data\":{\"anything\":\"1\",\"x\":{\"y\":1}},\"metadata\":{\"labels\":{}}}",
               "");
    /* Inside FieldsV1 everything is opaque, even repeated keys. */
    body_finds(cm,
               "{\"metadata\":{\"managedFields\":[{\"fieldsV1\":{\"f:data\":{},\"f:data\":{},"
               "\"zzz\":[1,{\"q\":2}]}}]}}",
               "");
}

/* kube-apiserver's own example (field_validation_test.go), transposed to a Lease. */
static void test_duplicates_interleave_in_document_order(void **state)
{
    (void)state;
    const sk_resource *lease = kind("coordination.k8s.io", "Lease");
    body_finds(lease,
               "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
               "\"name\":\"dupename\",\"name\":\"n\",\"labels\":{\"app\":\"a\",\"app\":\"b\"},"
               "\"unknownMeta\":\"v\"},\"spec\":{\"unknown1\":\"v\",\"unknownDupe\":\"a\","
               "\"unknownDupe\":\"b\",\"leaseTransitions\":1,\"leaseTransitions\":2}}",
               "duplicate field \"metadata.name\"; duplicate field \"metadata.labels.app\"; "
               "unknown field \"metadata.unknownMeta\"; unknown field \"spec.unknown1\"; "
               "unknown field \"spec.unknownDupe\"; duplicate field \"spec.leaseTransitions\"");
    /* A repeated object is decoded again, so findings inside it count for each
     * copy, but identical findings are reported once. */
    body_finds(lease, "{\"spec\":{\"a\":1},\"spec\":{\"a\":2,\"b\":3}}",
               "unknown field \"spec.a\"; duplicate field \"spec\"; unknown field \"spec.b\"");
    /* Escaped keys are compared decoded. */
    body_finds(lease, "{\"spec\":{},\"sp\\u0065c\":{}}", "duplicate field \"spec\"");
    /* A string ends at the first quote no odd run of backslashes escapes:
     * the values here end in \\ and hold \", and the fields after them
     * are still seen. */
    body_finds(kind("", "ConfigMap"),
               "{\"data\":{\"k\\\\\":\"v\\\"q\\\\\",\"k\\\\\":\"\\\\\\\"\"},"
               "\"u\\\\\":1}",
               "duplicate field \"data.k\\\\\"; unknown field \"u\\\\\"");
    /* Repeats past the first 16 keys of an object, and an escaped key
     * repeating a plain one after them, are found too. */
    sk_buf many = SK_BUF_INIT;
    sk_buf_puts(&many, "{\"data\":{");
    for (int i = 0; i < 40; i++)
        sk_buf_printf(&many, "\"k%d\":\"v\",", i);
    sk_buf_puts(&many, "\"k3\":\"v\",\"k3\\u0039\":\"v\",\"k\\u0034\":\"v\",\"k39\":\"v\"}}");
    body_finds(kind("", "ConfigMap"), many.data,
               "duplicate field \"data.k3\"; duplicate field \"data.k39\"; "
               "duplicate field \"data.k4\"");
    sk_buf_free(&many);
}

static void test_quoting_of_paths(void **state)
{
    (void)state;
    body_finds(kind("", "ConfigMap"), "{\"a\\\"b\\\\c\\td\":1,\"\\u00e9\":2}",
               "unknown field \"a\\\"b\\\\c\\td\"; unknown field \"\xc3\xa9\"");
}

static void test_cap(void **state)
{
    (void)state;
    char body[4096] = "{";
    for (int i = 0; i < 150; i++)
        snprintf(body + strlen(body), sizeof body - strlen(body), "%s\"u%d\":0", i ? "," : "", i);
    strcat(body, "}");
    json_t *found = NULL;
    assert_int_equal(sk_fieldcheck_body(kind("", "ConfigMap"), body, strlen(body), &found), SK_OK);
    assert_int_equal(json_array_size(found), SK_FIELDCHECK_MAX);
    assert_string_equal(json_string_value(json_array_get(found, 99)), "unknown field \"u99\"");
    json_decref(found);
}

static void test_unknown_of_parsed_object(void **state)
{
    (void)state;
    const sk_resource *sa = kind("", "ServiceAccount");
    unknown_finds(sa, "{\"apiVersion\":\"v1\",\"kind\":\"ServiceAccount\",\"metadata\":{}}", "");
    unknown_finds(sa,
                  "{\"zeta\":1,\"secrets\":[{\"name\":\"a\"},{\"nom\":\"b\"}],\"alpha\":{\"x\":1}}",
                  "unknown field \"zeta\"; unknown field \"secrets[1].nom\"; "
                  "unknown field \"alpha\"");
}

/* Merge patch: the patch's duplicates in document order, then the merge
 * result's unknown fields sorted (kube-apiserver's SMP/merge-patch test). */
static void test_patch(void **state)
{
    (void)state;
    const sk_resource *lease = kind("coordination.k8s.io", "Lease");
    const char *patch = "{\"spec\":{\"unknown1\":\"v\",\"unknownDupe\":\"a\",\"unknownDupe\":\"b\","
                        "\"holderIdentity\":\"h\",\"holderIdentity\":\"i\",\"list\":[{\"k\":1,"
                        "\"k\":2}]}}";
    json_t *patched =
        json_loads("{\"kind\":\"Lease\",\"metadata\":{\"name\":\"l\"},\"spec\":{"
                   "\"unknown1\":\"v\",\"unknownDupe\":\"b\",\"holderIdentity\":\"i\","
                   "\"list\":[{\"k\":2}]}}",
                   0, NULL);
    assert_non_null(patched);
    json_t *found = NULL;
    assert_int_equal(sk_fieldcheck_patch(lease, patch, strlen(patch), patched, &found), SK_OK);
    json_decref(patched);
    char *got = joined(found);
    assert_string_equal(got, "duplicate field \"spec.unknownDupe\"; "
                             "duplicate field \"spec.holderIdentity\"; "
                             "duplicate field \"spec.list[0].k\"; unknown field \"spec.list\"; "
                             "unknown field \"spec.unknown1\"; unknown field \"spec.unknownDupe\"");
    free(got);
}

static void test_messages(void **state)
{
    (void)state;
    json_t *one = json_pack("[s]", "unknown field \"dta\""),
           *two = json_pack("[s,s]", "unknown field \"spec.foo\"", "unknown field \"dta\""),
           *none = json_array();
    char *m = NULL;
    assert_int_equal(sk_fieldcheck_message(kind("", "ConfigMap"), one, &m), SK_OK);
    assert_string_equal(m, "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict "
                           "decoding error: unknown field \"dta\"");
    free(m);
    assert_int_equal(sk_fieldcheck_message(kind("coordination.k8s.io", "Lease"), two, &m), SK_OK);
    assert_string_equal(m, "Lease in version \"v1\" cannot be handled as a Lease: strict decoding "
                           "error: unknown field \"spec.foo\", unknown field \"dta\"");
    free(m);
    assert_int_equal(sk_fieldcheck_message(NULL, two, &m), SK_OK);
    assert_string_equal(m,
                        "strict decoding error: unknown field \"spec.foo\", unknown field \"dta\"");
    free(m);
    m = NULL;
    assert_int_equal(sk_fieldcheck_message(NULL, none, &m), SK_ERR_INTERNAL);
    assert_null(m);
    json_decref(one);
    json_decref(two);
    json_decref(none);
}

static void rejects(const char *body)
{
    json_t *found = NULL;
    assert_int_equal(sk_fieldcheck_body(kind("", "ConfigMap"), body, strlen(body), &found),
                     SK_ERR_BAD_REQUEST);
    assert_null(found);
}

static void test_malformed(void **state)
{
    (void)state;
    rejects("");
    rejects("{\"data\":{\"a\":\"b\"}");
    rejects("{\"data\" 1}");
    rejects("{\"data\":1,}x");
    rejects("{\"data\":1} x");
    rejects("{\"a\\u0000\":1}");
    rejects("{\"a\":\"unterminated}");
    rejects("{\"a\":[1 2]}");
    rejects("{1:2}");
    char deep[5000];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    rejects(deep);
    /* Not NUL-terminated: only len bytes are read. */
    json_t *found = NULL;
    assert_int_equal(sk_fieldcheck_body(kind("", "ConfigMap"), "{\"x\":1}garbage", 7, &found),
                     SK_OK);
    assert_int_equal(json_array_size(found), 1);
    json_decref(found);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_objects_of_every_kind),
        cmocka_unit_test(test_every_registry_kind),
        cmocka_unit_test(test_unknown_top_level_and_nested),
        cmocka_unit_test(test_lists_and_maps),
        cmocka_unit_test(test_duplicates_interleave_in_document_order),
        cmocka_unit_test(test_quoting_of_paths),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_unknown_of_parsed_object),
        cmocka_unit_test(test_patch),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_malformed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
