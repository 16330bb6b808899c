/*
 * test_status_rules.c - the pure rules behind subresources: which kinds
 * keep a generation and when it moves, what create does to a status, what
 * an update through the object and through /status (and finalize,
 * approval) may change, pod QoS classes, and the Scale view with its
 * selector string.
 */
#include "kube/registry.h"
#include "kube/scale.h"
#include "kube/status_rules.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_t *load(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    if (!v)
        fail_msg("bad JSON in test: %s: %s", s, e.text);
    return v;
}

static const sk_resource *res(const char *group, const char *resource)
{
    const sk_resource *r = sk_registry_find(group, "v1", resource);
    assert_non_null(r);
    return r;
}

static json_int_t generation(const json_t *obj)
{
    return json_integer_value(json_object_get(json_object_get(obj, "metadata"), "generation"));
}

static void test_create(void **state)
{
    const sk_resource *dep = res("apps", "deployments");
    json_t *d = load("{\"metadata\":{\"name\":\"w\"},\"spec\":{\"replicas\":2},"
                     "\"status\":{\"replicas\":9}}");
    sk_status_rules_on_create(dep, d);
    assert_int_equal(generation(d), 1);
    assert_int_equal(json_object_size(json_object_get(d, "status")), 0);
    json_decref(d);

    /* The zero status as Go writes it: counts without omitempty are 0. */
    json_t *ds = load("{\"metadata\":{},\"status\":{\"numberReady\":3}}");
    sk_status_rules_on_create(res("apps", "daemonsets"), ds);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(ds, "status"), "numberReady")), 0);
    assert_non_null(json_object_get(json_object_get(ds, "status"), "desiredNumberScheduled"));
    assert_null(json_object_get(json_object_get(ds, "status"), "conditions"));
    json_decref(ds);
    json_t *svc = load("{\"metadata\":{},\"spec\":{}}");
    sk_status_rules_on_create(res("", "services"), svc);
    json_t *want = load("{\"loadBalancer\":{}}");
    assert_true(json_equal(json_object_get(svc, "status"), want));
    json_decref(want);
    json_decref(svc);

    /* ConfigMaps have no status subresource and no generation. */
    json_t *cm = load("{\"metadata\":{\"name\":\"c\"},\"data\":{}}");
    sk_status_rules_on_create(res("", "configmaps"), cm);
    assert_null(json_object_get(json_object_get(cm, "metadata"), "generation"));
    assert_null(json_object_get(cm, "status"));
    json_decref(cm);

    /* Pods: Pending with their QoS class, no generation in 1.32. */
    json_t *pod = load("{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
                       "\"status\":{\"phase\":\"Running\"}}");
    sk_status_rules_on_create(res("", "pods"), pod);
    assert_string_equal(json_string_value(json_object_get(json_object_get(pod, "status"), "phase")),
                        "Pending");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(pod, "status"), "qosClass")),
        "BestEffort");
    assert_null(json_object_get(json_object_get(pod, "metadata"), "generation"));
    json_decref(pod);

    /* Nodes register with their status. */
    json_t *node = load("{\"metadata\":{},\"status\":{\"capacity\":{\"cpu\":\"4\"}}}");
    sk_status_rules_on_create(res("", "nodes"), node);
    assert_non_null(json_object_get(json_object_get(node, "status"), "capacity"));
    json_decref(node);

    json_t *ns = load("{\"metadata\":{}}");
    sk_status_rules_on_create(res("", "namespaces"), ns);
    assert_string_equal(json_string_value(json_object_get(json_object_get(ns, "status"), "phase")),
                        "Active");
    json_decref(ns);
}

static void test_qos(void **state)
{
    static const struct {
        const char *spec, *want;
    } cases[] = {
        {"{\"containers\":[{}]}", "BestEffort"},
        {"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"0\"}}}]}", "BestEffort"},
        {"{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}", "Burstable"},
        {"{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}",
         "Guaranteed"},
        {"{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},"
         "\"requests\":{\"cpu\":\"500m\"}}}]}",
         "Burstable"},
        {"{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}},"
         "{\"name\":\"b\"}]}",
         "Burstable"},
        {"{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}", "Burstable"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *spec = load(cases[i].spec);
        assert_string_equal(sk_status_rules_pod_qos(spec), cases[i].want);
        json_decref(spec);
    }
}

static void test_update_keeps_status_and_bumps_generation(void **state)
{
    const sk_resource *dep = res("apps", "deployments");
    json_t *old = load("{\"metadata\":{\"name\":\"w\",\"generation\":4},\"spec\":{\"replicas\":2},"
                       "\"status\":{\"replicas\":2}}");
    /* Only status and metadata labels changed: status is the stored one,
     * generation stays. */
    json_t *obj = load("{\"metadata\":{\"name\":\"w\",\"generation\":4,\"labels\":{\"a\":\"b\"}},"
                       "\"spec\":{\"replicas\":2},\"status\":{\"replicas\":7}}");
    sk_status_rules_keep_status(dep, obj, old);
    sk_status_rules_bump_generation(dep, obj, old);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(obj, "status"), "replicas")), 2);
    assert_int_equal(generation(obj), 4);
    json_decref(obj);
    /* A spec change: generation + 1. */
    obj = load("{\"metadata\":{\"name\":\"w\",\"generation\":4},\"spec\":{\"replicas\":3}}");
    sk_status_rules_keep_status(dep, obj, old);
    sk_status_rules_bump_generation(dep, obj, old);
    assert_int_equal(generation(obj), 5);
    assert_non_null(json_object_get(obj, "status"));
    json_decref(obj);
    /* Deployments: an annotation change too. */
    obj = load("{\"metadata\":{\"name\":\"w\",\"generation\":4,\"annotations\":{\"x\":\"y\"}},"
               "\"spec\":{\"replicas\":2}}");
    sk_status_rules_bump_generation(dep, obj, old);
    assert_int_equal(generation(obj), 5);
    json_decref(obj);
    /* Kinds without a generation never get one. */
    json_t *cm_old = load("{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}");
    json_t *cm = load("{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"2\"}}");
    sk_status_rules_bump_generation(res("", "configmaps"), cm, cm_old);
    assert_null(json_object_get(json_object_get(cm, "metadata"), "generation"));
    json_decref(cm);
    json_decref(cm_old);
    json_decref(old);
}

static void test_status_merge(void **state)
{
    const sk_resource *dep = res("apps", "deployments");
    json_t *old = load("{\"metadata\":{\"name\":\"w\",\"labels\":{\"app\":\"w\"}},"
                       "\"spec\":{\"replicas\":2},\"status\":{\"replicas\":1}}");
    json_t *sent = load("{\"metadata\":{\"name\":\"w\",\"labels\":{\"app\":\"x\"},"
                        "\"annotations\":{\"n\":\"1\"}},\"spec\":{\"replicas\":9},"
                        "\"status\":{\"replicas\":2}}");
    json_t *m = sk_status_rules_merge(dep, "status", sent, old);
    json_t *want = load("{\"metadata\":{\"name\":\"w\",\"labels\":{\"app\":\"w\"},"
                        "\"annotations\":{\"n\":\"1\"}},\"spec\":{\"replicas\":2},"
                        "\"status\":{\"replicas\":2}}");
    assert_true(json_equal(m, want));
    json_decref(m);
    json_decref(want);
    /* A Pod's status may change its labels, not its owners. */
    json_t *pold = load("{\"metadata\":{\"name\":\"p\",\"ownerReferences\":[{\"uid\":\"1\"}]},"
                        "\"spec\":{\"nodeName\":\"n\"},\"status\":{\"qosClass\":\"Burstable\"}}");
    json_t *psent = load("{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},"
                         "\"spec\":{},\"status\":{\"phase\":\"Running\"}}");
    m = sk_status_rules_merge(res("", "pods"), "status", psent, pold);
    want = load("{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"},"
                "\"ownerReferences\":[{\"uid\":\"1\"}]},\"spec\":{\"nodeName\":\"n\"},"
                "\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\"}}");
    assert_true(json_equal(m, want));
    json_decref(m);
    json_decref(want);
    /* finalize takes the spec, keeps the status. */
    json_t *nold = load("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"finalizers\":[\"kubernetes\"]},"
                        "\"status\":{\"phase\":\"Active\"}}");
    json_t *nsent = load("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"finalizers\":[]},"
                         "\"status\":{\"phase\":\"Terminating\"}}");
    m = sk_status_rules_merge(res("", "namespaces"), "finalize", nsent, nold);
    want = load("{\"metadata\":{\"name\":\"n\"},\"spec\":{\"finalizers\":[]},"
                "\"status\":{\"phase\":\"Active\"}}");
    assert_true(json_equal(m, want));
    json_decref(m);
    json_decref(want);
    /* The object itself cannot change a namespace's finalizers. */
    sk_status_rules_keep_status(res("", "namespaces"), nsent, nold);
    assert_true(json_equal(nsent, nold));
    json_decref(nold);
    json_decref(nsent);
    json_decref(pold);
    json_decref(psent);
    json_decref(old);
    json_decref(sent);
}

static void test_csr(void **state)
{
    const sk_resource *csr =
        sk_registry_find("certificates.k8s.io", "v1", "certificatesigningrequests");
    assert_non_null(csr);
    json_t *old = load("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"signerName\":\"s\"},"
                       "\"status\":{\"conditions\":[{\"type\":\"Approved\"}],"
                       "\"certificate\":\"QUJD\"}}");
    json_t *sent = load("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"signerName\":\"x\"},"
                        "\"status\":{\"conditions\":[{\"type\":\"Denied\"}],"
                        "\"certificate\":\"WFla\"}}");
    /* approval: the conditions only */
    json_t *m = sk_status_rules_merge(csr, "approval", sent, old);
    json_t *want = load("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"signerName\":\"s\"},"
                        "\"status\":{\"conditions\":[{\"type\":\"Denied\"}],"
                        "\"certificate\":\"QUJD\"}}");
    assert_true(json_equal(m, want));
    json_decref(m);
    json_decref(want);
    /* status: everything but the conditions */
    m = sk_status_rules_merge(csr, "status", sent, old);
    want = load("{\"metadata\":{\"name\":\"c\"},\"spec\":{\"signerName\":\"s\"},"
                "\"status\":{\"conditions\":[{\"type\":\"Approved\"}],"
                "\"certificate\":\"WFla\"}}");
    assert_true(json_equal(m, want));
    json_decref(m);
    json_decref(want);
    json_decref(old);
    json_decref(sent);
}

static void test_scale(void **state)
{
    json_t *sel = load("{\"matchLabels\":{\"z\":\"1\",\"app\":\"web\"},\"matchExpressions\":["
                       "{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"b\",\"a\"]},"
                       "{\"key\":\"env\",\"operator\":\"NotIn\",\"values\":[\"prod\"]},"
                       "{\"key\":\"gone\",\"operator\":\"DoesNotExist\"},"
                       "{\"key\":\"has\",\"operator\":\"Exists\"}]}");
    char *s = sk_scale_selector_string(sel, 0);
    assert_string_equal(s, "app=web,env notin (prod),!gone,has,tier in (a,b),z=1");
    free(s);
    json_decref(sel);

    const sk_resource *dep = res("apps", "deployments");
    json_t *d = load("{\"metadata\":{\"name\":\"w\",\"namespace\":\"n\",\"uid\":\"u\","
                     "\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},"
                     "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"w\"}}},"
                     "\"status\":{\"replicas\":2}}");
    json_t *v = sk_scale_view(dep, d);
    json_t *want = load("{\"kind\":\"Scale\",\"apiVersion\":\"autoscaling/v1\","
                        "\"metadata\":{\"name\":\"w\",\"namespace\":\"n\",\"uid\":\"u\","
                        "\"resourceVersion\":\"5\"},\"spec\":{\"replicas\":3},"
                        "\"status\":{\"replicas\":2,\"selector\":\"app=w\"}}");
    assert_true(json_equal(v, want));
    json_decref(want);

    char *msg = NULL;
    json_object_set_new(json_object_get(v, "spec"), "replicas", json_integer(0));
    assert_int_equal(sk_scale_apply(dep, v, d, &msg), SK_OK);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(d, "spec"), "replicas")),
                     0);
    json_object_set_new(json_object_get(v, "spec"), "replicas", json_integer(-1));
    assert_int_equal(sk_scale_apply(dep, v, d, &msg), SK_ERR_INVALID);
    free(msg);
    msg = NULL;
    json_object_set_new(v, "kind", json_string("Deployment"));
    assert_int_equal(sk_scale_apply(dep, v, d, &msg), SK_ERR_BAD_REQUEST);
    free(msg);
    json_decref(v);
    json_decref(d);

    /* A ReplicationController's selector is a map. */
    json_t *rc =
        load("{\"metadata\":{\"name\":\"r\"},\"spec\":{\"selector\":{\"b\":\"2\",\"a\":\"1\"}}}");
    v = sk_scale_view(res("", "replicationcontrollers"), rc);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(v, "status"), "selector")), "a=1,b=2");
    assert_null(json_object_get(json_object_get(v, "spec"), "replicas"));
    json_decref(v);
    json_decref(rc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create),
        cmocka_unit_test(test_qos),
        cmocka_unit_test(test_update_keeps_status_and_bumps_generation),
        cmocka_unit_test(test_status_merge),
        cmocka_unit_test(test_csr),
        cmocka_unit_test(test_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
