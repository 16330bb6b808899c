/*
 * test_fieldset.c - field sets (kube/fieldset.h) and managedFields
 * (kube/managed.h): the FieldsV1 kube writes for built-in kinds, custom
 * resources and deduced values, set algebra, kube's path printing, apply
 * merges, removals and conflicts.
 */
#include "kube/fieldset.h"
#include "core/buf.h"
#include "kube/managed.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *load(const char *s)
{
    json_error_t err;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &err);
    if (!v)
        fail_msg("bad test JSON %s: %s", s, err.text);
    return v;
}

static void expect_json(const json_t *got, const char *want)
{
    json_t *w = load(want);
    if (!json_equal((json_t *)got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got  %s\nwant %s", g, want);
    }
    json_decref(w);
}

/* The set a FieldsV1 text decodes to. */
static json_t *decoded(const char *fields_v1)
{
    json_t *f = load(fields_v1), *set = sk_fieldset_decode(f);
    json_decref(f);
    return set;
}

static void collect(void *ctx, const char *path)
{
    sk_buf_printf(ctx, "%s;", path);
}

static sk_fieldset_type kind(const char *def)
{
    sk_fieldset_type t = {sk_schema_named(def), NULL};
    assert_non_null(t.schema);
    return t;
}

static void test_from_object_pod(void **state)
{
    (void)state;
    json_t *pod = load("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\","
                       "\"labels\":{\"a\":\"b\"},\"finalizers\":[\"x\"]},\"spec\":{\"containers\":"
                       "[{\"name\":\"c\",\"image\":\"i\",\"ports\":[{\"containerPort\":80}]}]}}");
    json_t *set = NULL;
    char *msg = NULL;
    assert_int_equal(sk_fieldset_from_object(kind("io.k8s.api.core.v1.Pod"), pod, &set, &msg),
                     SK_OK);
    json_t *stripped = sk_fieldset_strip(set, 0, 0);
    json_t *enc = sk_fieldset_encode(stripped);
    expect_json(enc, "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"x\\\"\":{}},\"f:labels\":{"
                     "\"f:a\":{}}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{"
                     "\".\":{},\"f:image\":{},\"f:name\":{},\"f:ports\":{"
                     "\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
                     "\"f:containerPort\":{}}}}}}}");
    json_decref(enc);
    json_decref(stripped);
    json_decref(set);
    json_decref(pod);
    (void)msg;
}

/* An empty list sets nothing (kube owns no field for it), and a struct
 * left with nothing set is not in the set either. */
static void test_empty_list_sets_nothing(void **state)
{
    (void)state;
    json_t *cn = load("{\"spec\":{\"drivers\":[]}}"), *set = NULL;
    char *msg = NULL;
    assert_int_equal(sk_fieldset_from_object(kind("io.k8s.api.storage.v1.CSINode"), cn, &set, &msg),
                     SK_OK);
    assert_true(sk_fieldset_empty(set));
    json_decref(set);
    json_decref(cn);
}

static void test_missing_key_is_invalid(void **state)
{
    (void)state;
    json_t *svc = load("{\"spec\":{\"ports\":[{\"name\":\"x\"}]}}");
    json_t *set = NULL;
    char *msg = NULL;
    assert_int_equal(sk_fieldset_from_object(kind("io.k8s.api.core.v1.Service"), svc, &set, &msg),
                     SK_ERR_INVALID);
    assert_non_null(strstr(msg, ".spec.ports: element 0: associative list with keys has an "
                                "element that omits key field \"port\""));
    assert_null(set);
    free(msg);
    json_decref(svc);
    json_t *cm = load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                      "\"c\"},\"spec\":{\"x\":1}}");
    assert_int_equal(sk_fieldset_from_object(kind("io.k8s.api.core.v1.ConfigMap"), cm, &set, &msg),
                     SK_ERR_INVALID);
    assert_string_equal(msg, ".spec: field not declared in schema");
    free(msg);
    json_decref(cm);
}

static void test_algebra_and_print(void **state)
{
    (void)state;
    json_t *a = decoded("{\"f:data\":{\"f:a\":{},\"f:b\":{}}}");
    json_t *b = decoded("{\"f:data\":{\"f:b\":{},\"f:c\":{}}}");
    json_t *u = sk_fieldset_union(a, b), *d = sk_fieldset_difference(a, b),
           *i = sk_fieldset_intersection(a, b);
    json_t *ue = sk_fieldset_encode(u), *de = sk_fieldset_encode(d), *ie = sk_fieldset_encode(i);
    expect_json(ue, "{\"f:data\":{\"f:a\":{},\"f:b\":{},\"f:c\":{}}}");
    expect_json(de, "{\"f:data\":{\"f:a\":{}}}");
    expect_json(ie, "{\"f:data\":{\"f:b\":{}}}");
    sk_buf out = SK_BUF_INIT;
    json_t *k = decoded(("{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}"
                                        "\":{\".\":{},\"f:image\":{}}}},\"f:metadata\":{"
                                        "\"f:finalizers\":{\"v:\\\"x\\\"\":{}}}}"));
    sk_fieldset_each(k, collect, &out);
    assert_string_equal(out.data, ".metadata.finalizers[=\"x\"];.spec.containers[name=\"c\"];"
                                  ".spec.containers[name=\"c\"].image;");
    assert_null(decoded("{\"x:y\":{}}"));
    sk_buf_free(&out);
    json_decref(k);
    json_decref(ue);
    json_decref(de);
    json_decref(ie);
    json_decref(u);
    json_decref(d);
    json_decref(i);
    json_decref(a);
    json_decref(b);
}

static const sk_managed_write W1 = {"mgr1", "v1", NULL, "2026-01-01T00:00:00Z", 0};
static const sk_managed_write W2 = {"mgr2", "v1", NULL, "2026-01-01T00:00:01Z", 0};

static void test_update_entries(void **state)
{
    (void)state;
    sk_fieldset_type t = kind("io.k8s.api.core.v1.ConfigMap");
    json_t *cm = load("{\"metadata\":{\"name\":\"c\",\"labels\":{\"l\":\"1\"}},\"data\":{\"a\":\"1\"}}");
    sk_managed_update(t, NULL, cm, &W1);
    expect_json(json_object_get(json_object_get(cm, "metadata"), "managedFields"),
                "[{\"manager\":\"mgr1\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
                "\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
                "\"f:data\":{\".\":{},\"f:a\":{}},\"f:metadata\":{\"f:labels\":{\".\":{},"
                "\"f:l\":{}}}}}]");
    /* mgr2 changes data.a and adds data.b: it owns both, mgr1 keeps labels */
    json_t *next = json_deep_copy(cm);
    json_object_del(json_object_get(next, "metadata"), "managedFields");
    json_object_set_new(json_object_get(next, "data"), "a", json_string("2"));
    json_object_set_new(json_object_get(next, "data"), "b", json_string("3"));
    sk_managed_update(t, cm, next, &W2);
    json_t *mf = json_object_get(json_object_get(next, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), 2);
    expect_json(json_object_get(json_array_get(mf, 0), "fieldsV1"),
                "{\"f:data\":{},\"f:metadata\":{\"f:labels\":{\".\":{},\"f:l\":{}}}}");
    expect_json(json_object_get(json_array_get(mf, 1), "fieldsV1"),
                "{\"f:data\":{\"f:a\":{},\"f:b\":{}}}");
    /* an update that changes nothing keeps them as they are */
    json_t *same = json_deep_copy(next);
    sk_managed_update(t, next, same, &W1);
    assert_true(json_equal(same, next));
    json_decref(same);
    json_decref(next);
    json_decref(cm);
}

/* kubectl's apply after its client-side to server-side upgrade: its Apply
 * entry owns the data map itself ("."), the annotations map and the
 * last-applied annotation (merged from kubectl-client-side-apply), and
 * applies less. What others own or it still applies stays (structured-
 * merge-diff prunes a member, then adds back every owned item); the
 * annotation becomes what kubectl applied (lastAppliedUpdater), in
 * json.Encoder's spelling. */
static void test_apply_after_upgrade(void **state)
{
    (void)state;
    sk_fieldset_type t = kind("io.k8s.api.core.v1.ConfigMap");
    static const sk_managed_write kubectl = {"kubectl", "v1", NULL, "2026-01-01T00:00:02Z", 0};
    json_t *live = load(
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
        "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\\n\"},"
        "\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Apply\",\"apiVersion\":\"v1\","
        "\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
        "\"f:data\":{\".\":{},\"f:key\":{},\"f:old\":{}},\"f:metadata\":{\"f:annotations\":{"
        "\".\":{},\"f:kubectl.kubernetes.io/last-applied-configuration\":{}}}}},"
        "{\"manager\":\"kubectl-last-applied\",\"operation\":\"Apply\",\"apiVersion\":\"v1\","
        "\"time\":\"2026-01-01T00:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
        "\"f:metadata\":{\"f:annotations\":{"
        "\"f:kubectl.kubernetes.io/last-applied-configuration\":{}}}}}]},"
        "\"data\":{\"key\":\"v1\",\"old\":\"x\",\"stray\":\"y\"}}");
    json_t *config = load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
                          "{\"name\":\"c\"},\"data\":{\"key\":\"<v2>\"}}");
    json_t *out = NULL, *status = NULL;
    assert_int_equal(sk_managed_apply(t, live, config, &kubectl, 0, &out, &status), SK_OK);
    expect_json(json_object_get(out, "data"), "{\"key\":\"<v2>\"}");
    expect_json(json_object_get(json_object_get(out, "metadata"), "annotations"),
                "{\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"apiVersion\\\":"
                "\\\"v1\\\",\\\"data\\\":{\\\"key\\\":\\\"\\\\u003cv2\\\\u003e\\\"},\\\"kind\\\":"
                "\\\"ConfigMap\\\",\\\"metadata\\\":{\\\"name\\\":\\\"c\\\"}}\\n\"}");
    json_decref(out);
    /* another manager's apply leaves the annotation alone */
    static const sk_managed_write other = {"other", "v1", NULL, "2026-01-01T00:00:02Z", 0};
    assert_int_equal(sk_managed_apply(t, live, config, &other, 1, &out, &status), SK_OK);
    expect_json(json_object_get(json_object_get(out, "metadata"), "annotations"),
                "{\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\\n\"}");
    json_decref(out);
    json_decref(config);
    json_decref(live);
}

static void test_manager_from_user_agent(void **state)
{
    (void)state;
    char buf[129];
    assert_string_equal(sk_managed_from_user_agent("kubectl/v1.32.4 (linux/amd64)", buf,
                                                    sizeof buf),
                        "kubectl");
    assert_string_equal(sk_managed_from_user_agent("a\001b/c", buf, sizeof buf), "ab");
    assert_string_equal(sk_managed_from_user_agent(NULL, buf, sizeof buf), "");
    char longua[300];
    memset(longua, 'x', sizeof longua - 1);
    longua[sizeof longua - 1] = 0;
    assert_int_equal(strlen(sk_managed_from_user_agent(longua, buf, sizeof buf)), 128);
    /* 127 bytes and a 2-byte character: the character is left out whole,
     * never cut (a cut one made the manager name invalid UTF-8) */
    memcpy(longua + 127, "\xc3\xa9", 3);
    assert_int_equal(strlen(sk_managed_from_user_agent(longua, buf, sizeof buf)), 127);
    assert_string_equal(sk_managed_from_user_agent("\xc3\xa9t\xc3\xa9/1", buf, sizeof buf),
                        "\xc3\xa9t\xc3\xa9");
}

/* Past 10 Update entries the oldest merge into "ancient-changes". */
static void test_update_entries_capped(void **state)
{
    (void)state;
    sk_fieldset_type t = kind("io.k8s.api.core.v1.ConfigMap");
    json_t *old = load("{\"metadata\":{\"name\":\"c\"},\"data\":{}}");
    for (int i = 0; i < 12; i++) {
        char mgr[16], key[16], now[32];
        snprintf(mgr, sizeof mgr, "m%02d", i);
        snprintf(key, sizeof key, "k%02d", i);
        snprintf(now, sizeof now, "2026-01-01T00:00:%02dZ", i);
        sk_managed_write w = {mgr, "v1", NULL, now, 0};
        json_t *next = json_deep_copy(old);
        json_object_set_new(json_object_get(next, "data"), key, json_string("v"));
        sk_managed_update(t, old, next, &w);
        json_decref(old);
        old = next;
    }
    json_t *mf = json_object_get(json_object_get(old, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), 10);
    json_t *first = json_array_get(mf, 0);
    assert_string_equal(json_string_value(json_object_get(first, "manager")), "ancient-changes");
    assert_string_equal(json_string_value(json_object_get(first, "time")), "2026-01-01T00:00:02Z");
    expect_json(json_object_get(first, "fieldsV1"),
                "{\"f:data\":{\"f:k00\":{},\"f:k01\":{},\"f:k02\":{}}}");
    json_decref(old);
}

static void test_apply_conflict_force_and_removal(void **state)
{
    (void)state;
    sk_fieldset_type t = kind("io.k8s.api.core.v1.ConfigMap");
    json_t *cfg1 = load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                        "\"c\"},\"data\":{\"key\":\"1\",\"other\":\"x\"}}");
    json_t *live = NULL, *status = NULL;
    assert_int_equal(sk_managed_apply(t, NULL, cfg1, &W1, 0, &live, &status), SK_OK);
    json_t *mf = json_object_get(json_object_get(live, "metadata"), "managedFields");
    assert_string_equal(json_string_value(json_object_get(json_array_get(mf, 0), "operation")),
                        "Apply");
    expect_json(json_object_get(json_array_get(mf, 0), "fieldsV1"),
                "{\"f:data\":{\"f:key\":{},\"f:other\":{}}}");
    /* mgr2 (an Update) takes data.key */
    json_t *upd = json_deep_copy(live);
    json_object_set_new(json_object_get(upd, "data"), "key", json_string("2"));
    json_object_del(json_object_get(upd, "metadata"), "managedFields");
    sk_managed_update(t, live, upd, &W2);
    /* mgr1 applies key again: a conflict with mgr2 */
    json_t *out = NULL;
    assert_int_equal(sk_managed_apply(t, upd, cfg1, &W1, 0, &out, &status), SK_ERR_CONFLICT);
    assert_string_equal(json_string_value(json_object_get(status, "message")),
                        "Apply failed with 1 conflict: conflict with \"mgr2\" using v1: .data.key");
    json_t *cause = json_array_get(json_object_get(json_object_get(status, "details"), "causes"), 0);
    assert_string_equal(json_string_value(json_object_get(cause, "reason")), "FieldManagerConflict");
    assert_string_equal(json_string_value(json_object_get(cause, "field")), ".data.key");
    json_decref(status);
    /* forced, and without "other": key is mgr1's again, other is removed */
    json_t *cfg2 = load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                        "\"c\"},\"data\":{\"key\":\"1\"}}");
    assert_int_equal(sk_managed_apply(t, upd, cfg2, &W1, 1, &out, &status), SK_OK);
    expect_json(json_object_get(out, "data"), "{\"key\":\"1\"}");
    mf = json_object_get(json_object_get(out, "metadata"), "managedFields");
    assert_int_equal(json_array_size(mf), 1);
    expect_json(json_object_get(json_array_get(mf, 0), "fieldsV1"), "{\"f:data\":{\"f:key\":{}}}");
    json_decref(out);
    json_decref(cfg2);
    json_decref(upd);
    json_decref(live);
    json_decref(cfg1);
}

/* An applied empty struct stays, though the fields under it the applier
 * owned before go (structured-merge-diff adds back every owned item): the
 * ValidatingAdmissionPolicy status controller's `typeChecking: {}`. */
static void test_apply_keeps_an_owned_empty_struct(void **state)
{
    (void)state;
    sk_fieldset_type t = kind("io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy");
    static const sk_managed_write w = {"validatingadmissionpolicy-status",
                                       "admissionregistration.k8s.io/v1", "status",
                                       "2026-01-01T00:00:00Z", 1};
    const char *head = "{\"apiVersion\":\"admissionregistration.k8s.io/v1\",\"kind\":"
                       "\"ValidatingAdmissionPolicy\",\"metadata\":{\"name\":\"p\"},";
    char *text = NULL;
    assert_true(asprintf(&text,
                         "%s\"status\":{\"observedGeneration\":1,\"typeChecking\":{"
                         "\"expressionWarnings\":[{\"fieldRef\":\"f\",\"warning\":\"w\"}]}}}",
                         head) > 0);
    json_t *cfg1 = load(text), *live = NULL, *out = NULL, *status = NULL;
    free(text);
    json_t *zero = load("{\"metadata\":{\"name\":\"p\"},\"spec\":{}}");
    assert_int_equal(sk_managed_apply(t, zero, cfg1, &w, 1, &live, &status), SK_OK);
    assert_true(
        asprintf(&text, "%s\"status\":{\"observedGeneration\":2,\"typeChecking\":{}}}", head) > 0);
    json_t *cfg2 = load(text);
    free(text);
    assert_int_equal(sk_managed_apply(t, live, cfg2, &w, 1, &out, &status), SK_OK);
    expect_json(json_object_get(out, "status"), "{\"observedGeneration\":2,\"typeChecking\":{}}");
    json_t *mf = json_object_get(json_object_get(out, "metadata"), "managedFields");
    expect_json(json_object_get(json_array_get(mf, 0), "fieldsV1"),
                "{\"f:status\":{\"f:observedGeneration\":{},\"f:typeChecking\":{}}}");
    json_decref(out);
    /* not applied at all, it goes */
    assert_true(asprintf(&text, "%s\"status\":{\"observedGeneration\":3}}", head) > 0);
    json_t *cfg3 = load(text);
    free(text);
    assert_int_equal(sk_managed_apply(t, live, cfg3, &w, 1, &out, &status), SK_OK);
    expect_json(json_object_get(out, "status"), "{\"observedGeneration\":3}");
    json_decref(out);
    json_decref(cfg3);
    json_decref(cfg2);
    json_decref(cfg1);
    json_decref(zero);
    json_decref(live);
}

static void test_crd_schema_list_map(void **state)
{
    (void)state;
    json_t *schema = load("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
                          "\"properties\":{\"items\":{\"type\":\"array\",\"x-kubernetes-list-type\":"
                          "\"map\",\"x-kubernetes-list-map-keys\":[\"id\"],\"items\":{\"type\":"
                          "\"object\",\"properties\":{\"id\":{\"type\":\"string\"},\"v\":{\"type\":"
                          "\"string\"}}}}}}}}");
    sk_fieldset_type t = {NULL, schema};
    json_t *live = load("{\"spec\":{\"items\":[{\"id\":\"a\",\"v\":\"1\"}]}}");
    json_t *cfg = load("{\"spec\":{\"items\":[{\"id\":\"b\",\"v\":\"2\"}]}}");
    json_t *merged = sk_fieldset_merge(t, live, cfg);
    expect_json(merged, "{\"spec\":{\"items\":[{\"id\":\"a\",\"v\":\"1\"},{\"id\":\"b\",\"v\":\"2\"}]}}");
    json_decref(merged);
    json_decref(cfg);
    json_decref(live);
    json_decref(schema);
}

/* A list-map key an item omits takes the CRD schema's default (kube's
 * schema conversion carries it into structured-merge-diff); without one
 * the item is refused. */
static void test_crd_key_default(void **state)
{
    (void)state;
    static const char *const schemas[] = {
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
        "\"ports\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
        "\"x-kubernetes-list-map-keys\":[\"port\",\"proto\"],\"items\":{\"type\":\"object\","
        "\"properties\":{\"port\":{\"type\":\"integer\"},\"proto\":{\"type\":\"string\"%s}}}}}}}}",
    };
    char with[1024], without[1024];
    snprintf(with, sizeof with, schemas[0], ",\"default\":\"UDP\"");
    snprintf(without, sizeof without, schemas[0], "");
    json_t *obj = load("{\"spec\":{\"ports\":[{\"port\":53}]}}"), *set = NULL;
    char *msg = NULL;
    json_t *schema = load(with);
    sk_fieldset_type t = {NULL, schema};
    assert_int_equal(sk_fieldset_from_object(t, obj, &set, &msg), SK_OK);
    json_t *enc = sk_fieldset_encode(set);
    expect_json(enc, "{\"f:spec\":{\"f:ports\":{\"k:{\\\"port\\\":53,\\\"proto\\\":\\\"UDP\\\"}\":{"
                     "\".\":{},\"f:port\":{}}}}}");
    json_decref(enc);
    json_decref(set);
    json_decref(schema);
    schema = load(without);
    t.openapi = schema;
    set = NULL;
    assert_int_not_equal(sk_fieldset_from_object(t, obj, &set, &msg), SK_OK);
    assert_non_null(strstr(msg, "omits key field \"proto\""));
    free(msg);
    json_decref(schema);
    json_decref(obj);
}

/*
 * A create without managers takes a path of its own (sk_fieldset_created,
 * one walk). A create that sends kube's reset ([{}]) takes the general
 * one (compare with the zero value, strip, union, encode): both must write
 * the same managedFields, byte for byte, for every shape of value.
 */
static void test_create_paths_agree(void **state)
{
    (void)state;
    static const char *const crd_schema =
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
        "\"items\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
        "\"x-kubernetes-list-map-keys\":[\"id\"],\"items\":{\"type\":\"object\"}},"
        "\"tags\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":"
        "\"string\"}},\"raw\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\"},"
        "\"n\":{\"type\":\"integer\"}}}}}";
    static const struct {
        const char *def; /* built-in kind, or NULL: crd_schema (or deduced, below) */
        int status_subresource;
        const char *obj;
    } cases[] = {
        {"io.k8s.api.core.v1.ConfigMap", 0,
         "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
         "\"namespace\":\"n\",\"labels\":{\"b\":\"2\",\"a\":\"1\"},\"annotations\":{}},"
         "\"data\":{\"z\":\"1\",\"a\":\"2\"},\"binaryData\":{},\"immutable\":false}"},
        {"io.k8s.api.core.v1.ConfigMap", 0, "{\"metadata\":{\"name\":\"c\"}}"},
        {"io.k8s.api.core.v1.ConfigMap", 0, "{\"metadata\":{\"name\":\"c\"},\"data\":null}"},
        {"io.k8s.api.core.v1.Pod", 1,
         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"finalizers\":"
         "[\"x\",\"y\",\"x\"],\"ownerReferences\":[{\"uid\":\"u1\",\"name\":\"o\"},{\"name\":"
         "\"no-uid\"}]},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"ports\":["
         "{\"containerPort\":80},{\"containerPort\":80,\"protocol\":\"UDP\"},"
         "{\"containerPort\":80,\"protocol\":\"TCP\",\"name\":\"dup\"}],\"env\":[{\"name\":\"A\","
         "\"value\":\"1\"}],\"securityContext\":{},\"resources\":{}},{\"image\":\"no-name\"}],"
         "\"nodeSelector\":{\"k\":\"v\"},\"tolerations\":[{\"key\":\"t\"}],\"securityContext\":{},"
         "\"dnsConfig\":null},\"status\":{\"phase\":\"Pending\"}}"},
        {"io.k8s.api.core.v1.Pod", 0,
         "{\"metadata\":{\"name\":\"p\"},\"spec\":\"not an object\",\"status\":{\"phase\":\"P\"}}"},
        {"io.k8s.api.apps.v1.Deployment", 1,
         "{\"metadata\":{\"name\":\"d\",\"generation\":3,\"uid\":\"x\"},\"spec\":{\"replicas\":2,"
         "\"selector\":{\"matchLabels\":{\"app\":\"a\"}},\"template\":{\"metadata\":{\"labels\":"
         "{\"app\":\"a\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}},"
         "\"strategy\":{}}}"},
        {"io.k8s.api.apps.v1.Deployment", 0,
         "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"template\":null,\"strategy\":[],"
         "\"selector\":{}},\"status\":{}}"},
        {"io.k8s.api.apps.v1.Deployment", 0,
         "{\"metadata\":{\"name\":\"d\"},\"spec\":{},\"status\":{\"conditions\":[]}}"},
        {"io.k8s.api.apps.v1.Deployment", 0,
         "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"template\":{\"spec\":{}}}}"},
        {"io.k8s.api.core.v1.Service", 1,
         "{\"metadata\":{\"name\":\"s\"},\"spec\":{\"ports\":[{\"port\":80},{\"port\":80,"
         "\"protocol\":\"TCP\"},{\"port\":53,\"protocol\":\"UDP\"}],\"selector\":{},"
         "\"clusterIPs\":[]}}"},
        {NULL, 0,
         "{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"k\"},\"spec\":{"
         "\"items\":[{\"id\":\"a\",\"v\":[1]},{\"v\":2},{\"id\":\"a\",\"v\":3}],\"tags\":[\"b\","
         "\"a\",\"b\"],\"raw\":{\"x\":{\"y\":1}},\"n\":1,\"extra\":{\"deep\":{}}},\"status\":{"
         "\"s\":1}}"},
        /* a CRD's metadata is walked with a "." of its own, which goes with
         * the fields the server sets */
        {NULL, 0,
         "{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"k\",\"uid\":\"u\","
         "\"labels\":{\"a\":\"1\"},\"generation\":1,\"finalizers\":[\"f\"]},\"spec\":{}}"},
        {NULL, 0,
         "{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"k\",\"namespace\":"
         "\"n\",\"creationTimestamp\":null,\"resourceVersion\":\"5\"},\"status\":{}}"},
    };
    json_t *schema = load(crd_schema);
    for (int deduced = 0; deduced < 2; deduced++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (deduced && cases[i].def)
                continue;
            sk_fieldset_type t = {cases[i].def ? sk_schema_named(cases[i].def) : NULL,
                                  cases[i].def || deduced ? NULL : schema};
            sk_managed_write w = W1;
            w.status_subresource = cases[i].status_subresource;
            json_t *own = load(cases[i].obj), *general = load(cases[i].obj);
            json_object_set_new(json_object_get(general, "metadata"), "managedFields",
                                load("[{}]"));
            sk_managed_update(t, NULL, own, &w);
            sk_managed_update(t, NULL, general, &w);
            char *a = json_dumps(own, JSON_COMPACT), *b = json_dumps(general, JSON_COMPACT);
            if (strcmp(a, b))
                fail_msg("case %zu (deduced %d):\nown     %s\ngeneral %s", i, deduced, a, b);
            free(a);
            free(b);
            json_decref(own);
            json_decref(general);
        }
    }
    /* metadata that is not an object: the general path cannot be given
     * managers to compare with, so the fields are checked as they are */
    json_t *odd = load("{\"metadata\":\"not an object\",\"kind\":{\"x\":1},\"spec\":{\"n\":1}}");
    for (int deduced = 0; deduced < 2; deduced++) {
        sk_fieldset_type t = {NULL, deduced ? NULL : schema};
        json_t *set = sk_fieldset_created(t, odd, 0);
        char *got = json_dumps(set, JSON_COMPACT);
        assert_string_equal(got, "{\"f:spec\":{\".\":{},\"f:n\":{}}}");
        free(got);
        json_decref(set);
    }
    json_decref(odd);
    json_decref(schema);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_object_pod),
        cmocka_unit_test(test_empty_list_sets_nothing),
        cmocka_unit_test(test_missing_key_is_invalid),
        cmocka_unit_test(test_algebra_and_print),
        cmocka_unit_test(test_update_entries),
        cmocka_unit_test(test_apply_after_upgrade),
        cmocka_unit_test(test_manager_from_user_agent),
        cmocka_unit_test(test_update_entries_capped),
        cmocka_unit_test(test_apply_conflict_force_and_removal),
        cmocka_unit_test(test_apply_keeps_an_owned_empty_struct),
        cmocka_unit_test(test_crd_schema_list_map),
        cmocka_unit_test(test_crd_key_default),
        cmocka_unit_test(test_create_paths_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
