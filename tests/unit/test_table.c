/*
 * test_table.c - Table columns and cells (kube/table.h) for fixed objects:
 * what kubectl prints for pods, services, deployments and the rest,
 * wide columns included, checked cell by cell at a fixed "now".
 */
#include "kube/registry.h"
#include "kube/table.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* 2026-01-01T00:00:00Z */
#define NOW 1767225600

static const sk_resource *res(const char *group, const char *version, const char *resource)
{
    const sk_resource *r = sk_registry_find(group, version, resource);
    assert_non_null(r);
    return r;
}

static json_t *load(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    if (!v)
        fail_msg("bad fixture: %s", e.text);
    return v;
}

/* The column names of r, "|"-joined, wide ones marked with a leading '+'. */
static void check_columns(const sk_resource *r, const char *want)
{
    json_t *cols = sk_table_columns(r);
    char got[1024] = "";
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c)
    {
        if (i)
            strcat(got, "|");
        if (json_integer_value(json_object_get(c, "priority")) == 1)
            strcat(got, "+");
        strcat(got, json_string_value(json_object_get(c, "name")));
    }
    assert_string_equal(got, want);
    json_decref(cols);
}

/* The cells of obj's row made in two steps (a template, filled at now_s),
 * as a JSON array (new). */
static json_t *filled_cells(const sk_resource *r, const json_t *o, int64_t now_s)
{
    sk_buf tmpl = SK_BUF_INIT, row = SK_BUF_INIT;
    sk_table_row_template(&tmpl, r, o);
    sk_table_row_fill(&row, tmpl.data, tmpl.len, now_s);
    sk_buf_putc(&row, '}');
    json_t *parsed = load(row.data);
    json_t *cells = json_incref(json_object_get(parsed, "cells"));
    json_decref(parsed);
    sk_buf_free(&row);
    sk_buf_free(&tmpl);
    return cells;
}

/* The cells of obj as r, compared with want (a JSON array); the same from
 * a kept row template filled at that time. */
static void check_cells(const sk_resource *r, const char *obj, const char *want)
{
    json_t *o = load(obj), *w = load(want);
    json_t *cells = sk_table_cells(r, o, NOW);
    if (!json_equal(cells, w)) {
        char *got = json_dumps(cells, JSON_COMPACT);
        fail_msg("cells: got %s\nwant %s", got, want);
    }
    json_decref(cells);
    cells = filled_cells(r, o, NOW);
    if (!json_equal(cells, w)) {
        char *got = json_dumps(cells, JSON_COMPACT);
        fail_msg("filled template cells: got %s\nwant %s", got, want);
    }
    json_decref(cells);
    json_decref(w);
    json_decref(o);
}

static void test_columns(void **state)
{
    (void)state;
    check_columns(res("", "v1", "pods"), "Name|Ready|Status|Restarts|Age|+IP|+Node|+Nominated "
                                         "Node|+Readiness Gates");
    check_columns(res("apps", "v1", "deployments"),
                  "Name|Ready|Up-to-date|Available|Age|+Containers|+Images|+Selector");
    check_columns(res("", "v1", "services"),
                  "Name|Type|Cluster-IP|External-IP|Port(s)|Age|+Selector");
    check_columns(res("", "v1", "nodes"), "Name|Status|Roles|Age|Version|+Internal-IP|"
                                          "+External-IP|+OS-Image|+Kernel-Version|"
                                          "+Container-Runtime");
    check_columns(res("batch", "v1", "jobs"),
                  "Name|Status|Completions|Duration|Age|+Containers|+Images|+Selector");
    /* kinds without a printer: kube's default table */
    check_columns(res("rbac.authorization.k8s.io", "v1", "roles"), "Name|Created At");
    /* shared storage: the stored kind's printer */
    check_columns(res("events.k8s.io", "v1", "events"),
                  "Last Seen|Type|Reason|Object|+Subobject|+Source|Message|+First "
                  "Seen|+Count|+Name");
    check_columns(res("autoscaling", "v1", "horizontalpodautoscalers"),
                  "Name|Reference|Targets|MinPods|MaxPods|Replicas|Age");
}

static void test_human_duration(void **state)
{
    (void)state;
    static const struct {
        int64_t s;
        const char *want;
    } cases[] = {{-5, "<invalid>"},
                 {-1, "0s"},
                 {0, "0s"},
                 {119, "119s"},
                 {120, "2m"},
                 {150, "2m30s"},
                 {600, "10m"},
                 {3 * 3600, "3h"},
                 {3 * 3600 + 60, "3h1m"},
                 {9 * 3600, "9h"},
                 {47 * 3600, "47h"},
                 {50 * 3600, "2d2h"},
                 {8 * 86400, "8d"},
                 {800 * 86400, "2y70d"},
                 {9 * 365 * 86400, "9y"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[32];
        sk_table_human_duration(cases[i].s, out, sizeof out);
        assert_string_equal(out, cases[i].want);
    }
}

static void test_pod(void **state)
{
    (void)state;
    const sk_resource *r = res("", "v1", "pods");
    /* running, one restart 5 minutes ago, one of two containers ready */
    check_cells(r,
                "{\"metadata\":{\"name\":\"web\",\"creationTimestamp\":\"2025-12-31T23:00:00Z\"},"
                "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]},"
                "\"status\":{\"phase\":\"Running\",\"podIPs\":[{\"ip\":\"10.1.0.4\"}],"
                "\"containerStatuses\":["
                "{\"name\":\"a\",\"ready\":true,\"restartCount\":1,\"state\":{\"running\":{}},"
                "\"lastState\":{\"terminated\":{\"exitCode\":1,"
                "\"finishedAt\":\"2025-12-31T23:55:00Z\"}}},"
                "{\"name\":\"b\",\"ready\":false,\"restartCount\":0,\"state\":{\"running\":{}}}]}}",
                "[\"web\",\"1/2\",\"Running\",\"1 (5m ago)\",\"60m\",\"10.1.0.4\",\"n1\","
                "\"<none>\",\"<none>\"]");
    /* a waiting container's reason is the status */
    check_cells(r,
                "{\"metadata\":{\"name\":\"p\",\"creationTimestamp\":\"2025-12-31T23:59:30Z\"},"
                "\"spec\":{\"containers\":[{\"name\":\"a\"}]},"
                "\"status\":{\"phase\":\"Pending\",\"containerStatuses\":[{\"name\":\"a\","
                "\"restartCount\":0,\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\"}}}]}}",
                "[\"p\",\"0/1\",\"ImagePullBackOff\",\"0\",\"30s\",\"<none>\",\"<none>\","
                "\"<none>\",\"<none>\"]");
    /* init containers, a nominated node and readiness gates */
    check_cells(r,
                "{\"metadata\":{\"name\":\"i\",\"creationTimestamp\":\"2025-12-31T23:59:00Z\"},"
                "\"spec\":{\"initContainers\":[{\"name\":\"i1\"},{\"name\":\"i2\"}],"
                "\"containers\":[{\"name\":\"a\"}],"
                "\"readinessGates\":[{\"conditionType\":\"x\"},{\"conditionType\":\"y\"}]},"
                "\"status\":{\"phase\":\"Pending\",\"nominatedNodeName\":\"n2\","
                "\"conditions\":[{\"type\":\"x\",\"status\":\"True\"}],"
                "\"initContainerStatuses\":["
                "{\"name\":\"i1\",\"state\":{\"terminated\":{\"exitCode\":0}}},"
                "{\"name\":\"i2\",\"state\":{\"running\":{}}}]}}",
                "[\"i\",\"0/1\",\"Init:1/2\",\"0\",\"60s\",\"<none>\",\"<none>\",\"n2\",\"1/2\"]");
    /* being deleted */
    check_cells(r,
                "{\"metadata\":{\"name\":\"t\",\"creationTimestamp\":\"2025-12-31T00:00:00Z\","
                "\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
                "\"spec\":{\"containers\":[{\"name\":\"a\"}]},\"status\":{\"phase\":\"Running\"}}",
                "[\"t\",\"0/1\",\"Terminating\",\"0\",\"24h\",\"<none>\",\"<none>\",\"<none>\","
                "\"<none>\"]");
}

static void test_service(void **state)
{
    (void)state;
    const sk_resource *r = res("", "v1", "services");
    check_cells(r,
                "{\"metadata\":{\"name\":\"web\",\"creationTimestamp\":\"2025-12-31T23:58:00Z\"},"
                "\"spec\":{\"type\":\"NodePort\",\"clusterIPs\":[\"10.96.0.10\"],"
                "\"selector\":{\"tier\":\"fe\",\"app\":\"web\"},"
                "\"ports\":[{\"port\":80,\"nodePort\":30080,\"protocol\":\"TCP\"},"
                "{\"port\":53,\"protocol\":\"UDP\"}]}}",
                "[\"web\",\"NodePort\",\"10.96.0.10\",\"<none>\",\"80:30080/TCP,53/UDP\",\"2m\","
                "\"app=web,tier=fe\"]");
    check_cells(r,
                "{\"metadata\":{\"name\":\"lb\",\"creationTimestamp\":\"2025-12-31T23:58:00Z\"},"
                "\"spec\":{\"type\":\"LoadBalancer\",\"clusterIPs\":[\"10.96.0.11\"]}}",
                "[\"lb\",\"LoadBalancer\",\"10.96.0.11\",\"<pending>\",\"<none>\",\"2m\","
                "\"<none>\"]");
    check_cells(r,
                "{\"metadata\":{\"name\":\"ext\",\"creationTimestamp\":\"2025-12-31T23:58:00Z\"},"
                "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"example.com\"}}",
                "[\"ext\",\"ExternalName\",\"<none>\",\"example.com\",\"<none>\",\"2m\","
                "\"<none>\"]");
}

static void test_workloads(void **state)
{
    (void)state;
    check_cells(res("apps", "v1", "deployments"),
                "{\"metadata\":{\"name\":\"d\",\"creationTimestamp\":\"2025-12-29T00:00:00Z\"},"
                "\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"d\"},"
                "\"matchExpressions\":[{\"key\":\"env\",\"operator\":\"In\","
                "\"values\":[\"prod\",\"dev\"]}]},"
                "\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"nginx\"},"
                "{\"name\":\"b\",\"image\":\"busybox:1\"}]}}},"
                "\"status\":{\"readyReplicas\":2,\"updatedReplicas\":3,\"availableReplicas\":2}}",
                "[\"d\",\"2/3\",3,2,\"3d\",\"a,b\",\"nginx,busybox:1\","
                "\"app=d,env in (dev,prod)\"]");
    check_cells(res("apps", "v1", "replicasets"),
                "{\"metadata\":{\"name\":\"rs\",\"creationTimestamp\":\"2025-12-31T23:59:50Z\"},"
                "\"spec\":{\"replicas\":2,\"selector\":{},"
                "\"template\":{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"x\"}]}}},"
                "\"status\":{\"replicas\":2}}",
                "[\"rs\",2,2,0,\"10s\",\"a\",\"x\",\"<none>\"]");
    check_cells(res("batch", "v1", "jobs"),
                "{\"metadata\":{\"name\":\"j\",\"creationTimestamp\":\"2025-12-31T23:50:00Z\"},"
                "\"spec\":{\"completions\":3,\"selector\":{\"matchLabels\":{\"a\":\"b\"}},"
                "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}},"
                "\"status\":{\"succeeded\":3,\"startTime\":\"2025-12-31T23:50:00Z\","
                "\"completionTime\":\"2025-12-31T23:52:30Z\","
                "\"conditions\":[{\"type\":\"Complete\",\"status\":\"True\"}]}}",
                "[\"j\",\"Complete\",\"3/3\",\"2m30s\",\"10m\",\"c\",\"i\",\"a=b\"]");
}

static void test_others(void **state)
{
    (void)state;
    check_cells(res("", "v1", "nodes"),
                "{\"metadata\":{\"name\":\"n1\",\"creationTimestamp\":\"2025-12-01T00:00:00Z\","
                "\"labels\":{\"node-role.kubernetes.io/worker\":\"\","
                "\"node-role.kubernetes.io/control-plane\":\"\"}},"
                "\"spec\":{\"unschedulable\":true},"
                "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}],"
                "\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.0.1\"}],"
                "\"nodeInfo\":{\"kubeletVersion\":\"v1.32.0\",\"osImage\":\"Debian\"}}}",
                "[\"n1\",\"NotReady,SchedulingDisabled\",\"control-plane,worker\",\"31d\","
                "\"v1.32.0\",\"10.0.0.1\",\"<none>\",\"Debian\",\"<unknown>\",\"<unknown>\"]");
    check_cells(res("rbac.authorization.k8s.io", "v1", "roles"),
                "{\"metadata\":{\"name\":\"r\",\"creationTimestamp\":\"2025-12-31T10:00:00Z\"}}",
                "[\"r\",\"2025-12-31T10:00:00Z\"]");
    check_cells(
        res("rbac.authorization.k8s.io", "v1", "rolebindings"),
        "{\"metadata\":{\"name\":\"rb\",\"creationTimestamp\":\"2025-12-31T23:00:00Z\"},"
        "\"roleRef\":{\"kind\":\"Role\",\"name\":\"r\"},"
        "\"subjects\":[{\"kind\":\"User\",\"name\":\"u1\"},{\"kind\":\"User\",\"name\":\"u2\"},"
        "{\"kind\":\"ServiceAccount\",\"name\":\"sa\",\"namespace\":\"ns\"}]}",
        "[\"rb\",\"Role/r\",\"60m\",\"u1, u2\",\"\",\"ns:sa\"]");
    check_cells(
        res("apiregistration.k8s.io", "v1", "apiservices"),
        "{\"metadata\":{\"name\":\"v1.x.io\",\"creationTimestamp\":\"2025-12-31T23:59:00Z\"},"
        "\"spec\":{\"service\":{\"namespace\":\"ns\",\"name\":\"svc\"}},"
        "\"status\":{\"conditions\":[{\"type\":\"Available\",\"status\":\"False\","
        "\"reason\":\"MissingEndpoints\"}]}}",
        "[\"v1.x.io\",\"ns/svc\",\"False (MissingEndpoints)\",\"60s\"]");
    check_cells(
        res("apiregistration.k8s.io", "v1", "apiservices"),
        "{\"metadata\":{\"name\":\"v1.apps\",\"creationTimestamp\":\"2025-12-31T23:59:00Z\"}}",
        "[\"v1.apps\",\"Local\",\"Unknown\",\"60s\"]");
    /* an events.k8s.io Event's row comes from its stored (core) form */
    check_cells(res("events.k8s.io", "v1", "events"),
                "{\"metadata\":{\"name\":\"e\",\"creationTimestamp\":\"2025-12-31T23:00:00Z\"},"
                "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\",\"fieldPath\":\"spec\"},"
                "\"reason\":\"Started\",\"message\":\" hi \\n\",\"type\":\"Normal\","
                "\"source\":{\"component\":\"kubelet\"},\"reportingInstance\":\"n1\","
                "\"firstTimestamp\":\"2025-12-31T23:00:00Z\","
                "\"lastTimestamp\":\"2025-12-31T23:59:00Z\"}",
                "[\"60s\",\"Normal\",\"Started\",\"pod/p\",\"spec\",\"kubelet, n1\",\"hi\","
                "\"60m\",1,\"e\"]");
}

/* The whole Table of one object: framing, metadata-only object. */
static void test_single(void **state)
{
    (void)state;
    json_t *o = load("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
                     "\"creationTimestamp\":\"2025-12-31T23:59:00Z\"},\"data\":{\"a\":\"1\"}}");
    sk_buf b = SK_BUF_INIT;
    sk_table_single(&b, res("", "v1", "configmaps"), o, SK_INCLUDE_METADATA, 7, NOW);
    json_t *t = load(b.data);
    assert_string_equal(json_string_value(json_object_get(t, "kind")), "Table");
    json_t *row = json_array_get(json_object_get(t, "rows"), 0);
    json_t *want = load("[\"c\",1,\"60s\"]");
    assert_true(json_equal(json_object_get(row, "cells"), want));
    assert_string_equal(json_string_value(json_object_get(json_object_get(row, "object"), "kind")),
                        "PartialObjectMetadata");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(t, "metadata"), "resourceVersion")), "7");
    json_decref(want);
    json_decref(t);
    sk_buf_free(&b);
    json_decref(o);
}

/* A finished pod's row says so in its conditions; a running one's has none. */
static void test_pod_conditions(void **state)
{
    (void)state;
    const sk_resource *r = res("", "v1", "pods");
    const char *phases[] = {"Succeeded", "Failed", "Running"};
    for (int i = 0; i < 3; i++) {
        char text[256];
        snprintf(text, sizeof text,
                 "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[]},"
                 "\"status\":{\"phase\":\"%s\"}}",
                 phases[i]);
        json_t *o = load(text);
        sk_buf b = SK_BUF_INIT;
        sk_table_row(&b, r, o, SK_INCLUDE_NONE, NOW);
        json_t *row = load(b.data);
        json_t *c = json_array_get(json_object_get(row, "conditions"), 0);
        if (i < 2) {
            assert_string_equal(json_string_value(json_object_get(c, "type")), "Completed");
            assert_string_equal(json_string_value(json_object_get(c, "reason")), phases[i]);
        } else {
            assert_null(json_object_get(row, "conditions"));
        }
        assert_null(json_object_get(row, "object"));
        json_decref(row);
        sk_buf_free(&b);
        json_decref(o);
    }
}

/* Every served kind's row fits its columns, whatever shape the stored
 * object has: odd types where objects, strings or numbers are expected
 * never crash a printer or shorten a row. */
static void test_every_kind_odd_objects(void **state)
{
    (void)state;
    static const char *const odd[] = {
        "{}",
        "{\"metadata\":[],\"spec\":5,\"status\":\"x\",\"data\":1}",
        "{\"metadata\":{\"name\":7,\"creationTimestamp\":\"garbage\",\"labels\":[1]},"
        "\"spec\":{\"containers\":{},\"ports\":[1,\"a\",{\"port\":\"80\"}],"
        "\"selector\":{\"matchLabels\":[],\"matchExpressions\":[{\"values\":5}],\"a\":1},"
        "\"metrics\":[{\"type\":\"Resource\"},{\"type\":\"Pods\",\"pods\":1},7],"
        "\"template\":{\"spec\":{\"containers\":[5,{\"name\":[]}]}},\"rules\":[{\"host\":3}],"
        "\"replicas\":\"3\",\"completions\":null},"
        "\"status\":{\"conditions\":[null,{\"type\":1}],\"containerStatuses\":[3,{}],"
        "\"initContainerStatuses\":[{\"state\":{\"terminated\":5}}],\"podIPs\":[\"x\"],"
        "\"loadBalancer\":{\"ingress\":[{\"ip\":1},{}]}},"
        "\"subsets\":[{\"addresses\":[{\"ip\":\"::1\"}],\"ports\":[{}]}],"
        "\"subjects\":[1,{\"kind\":\"User\"}],\"involvedObject\":5,\"series\":{}}",
    };
    size_t n;
    const sk_resource *const *all = sk_registry_all(&n);
    for (size_t i = 0; i < n; i++) {
        json_t *cols = sk_table_columns(all[i]);
        for (size_t k = 0; k < sizeof odd / sizeof *odd; k++) {
            json_t *o = load(odd[k]);
            json_t *cells = sk_table_cells(all[i], o, NOW);
            assert_int_equal(json_array_size(cells), json_array_size(cols));
            for (int inc = SK_INCLUDE_NONE; inc <= SK_INCLUDE_OBJECT; inc++) {
                sk_buf b = SK_BUF_INIT;
                sk_table_row(&b, all[i], o, (sk_include_object)inc, NOW);
                json_t *row = load(b.data);
                json_decref(row);
                sk_buf_free(&b);
            }
            json_decref(cells);
            json_decref(o);
        }
        json_decref(cols);
    }
}

/* One template, filled at two times: each fill has that time's ages, the
 * rest is the same bytes; the template holds no age, and a control byte in
 * the object's own strings (the hole's marker, raw) is not taken for a hole. */
static void test_row_template_fill(void **state)
{
    (void)state;
    const sk_resource *pods = res("", "v1", "pods");
    json_t *o = load("{\"metadata\":{\"name\":\"p\\u0001x\",\"creationTimestamp\":"
                     "\"2025-12-31T23:00:00Z\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
                     "\"status\":{\"phase\":\"Succeeded\",\"containerStatuses\":[{\"name\":"
                     "\"c\",\"restartCount\":2,\"lastState\":{\"terminated\":{\"finishedAt\":"
                     "\"2025-12-31T23:59:00Z\"}}}]}}");
    sk_buf tmpl = SK_BUF_INIT, a = SK_BUF_INIT, b = SK_BUF_INIT, direct = SK_BUF_INIT;
    sk_table_row_template(&tmpl, pods, o);
    assert_null(strstr(tmpl.data, "ago)"));
    sk_table_row_fill(&a, tmpl.data, tmpl.len, NOW);
    sk_table_row_fill(&b, tmpl.data, tmpl.len, NOW + 7200);
    assert_non_null(strstr(a.data, "\"2 (60s ago)\",\"60m\""));
    assert_non_null(strstr(b.data, "\"2 (121m ago)\",\"3h\""));
    assert_non_null(strstr(a.data, "\"p\\u0001x\""));
    assert_non_null(strstr(a.data, "\"conditions\":[{\"type\":\"Completed\""));
    sk_table_row(&direct, pods, o, SK_INCLUDE_NONE, NOW);
    sk_buf_putc(&a, '}');
    assert_string_equal(a.data, direct.data);
    sk_buf_free(&tmpl);
    sk_buf_free(&a);
    sk_buf_free(&b);
    sk_buf_free(&direct);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_human_duration),
        cmocka_unit_test(test_pod),
        cmocka_unit_test(test_service),
        cmocka_unit_test(test_workloads),
        cmocka_unit_test(test_others),
        cmocka_unit_test(test_single),
        cmocka_unit_test(test_pod_conditions),
        cmocka_unit_test(test_every_kind_odd_objects),
        cmocka_unit_test(test_row_template_fill),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
