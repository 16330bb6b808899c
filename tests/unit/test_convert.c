/*
 * test_convert.c - shared-storage conversion (kube/convert.h): core v1 <->
 * events.k8s.io/v1 Events and autoscaling/v2 <-> v1 HPAs, field by field
 * and as round trips.
 */
#include "kube/convert.h"
#include "kube/registry.h"
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

/* A whole object of the kinds converted here, as Go writes it: fixtures
 * name only the fields they are about, the conversion's output is the
 * target struct's JSON (omitempty decides the rest, test_event_sparse
 * checks it field by field). Fragments are compared as they are. */
static json_t *as_go_writes(json_t *v)
{
    const char *av = json_string_value(json_object_get(v, "apiVersion"));
    const char *kind = json_string_value(json_object_get(v, "kind"));
    if (!av || !kind)
        return v;
    const char *slash = strchr(av, '/');
    char group[64] = "";
    if (slash)
        snprintf(group, sizeof group, "%.*s", (int)(slash - av), av);
    const sk_resource *r = sk_registry_find(group, slash ? slash + 1 : av,
                                            strcmp(kind, "Event") ? "horizontalpodautoscalers"
                                                                  : "events");
    assert_non_null(r);
    json_t *out = NULL;
    char *msg = NULL;
    if (sk_typed_normalize(r, v, &out, &msg) != SK_OK)
        fail_msg("fixture does not decode: %s", msg);
    json_decref(v);
    return out;
}

static void expect_literally(json_t *got, const char *want);

static void expect_equal(json_t *got, const char *want)
{
    json_t *w = as_go_writes(load(want));
    char *text = json_dumps(w, JSON_COMPACT);
    expect_literally(got, text);
    free(text);
    json_decref(w);
}

static void expect_literally(json_t *got, const char *want)
{
    json_t *w = load(want);
    if (!json_equal(got, w)) {
        char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        char *ws = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS);
        fail_msg("got  %s\nwant %s", g, ws);
    }
    json_decref(w);
}

#define CORE_EVENT                                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e\"},"                     \
    "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\"},\"reason\":\"Started\","                 \
    "\"message\":\"hi\",\"type\":\"Normal\",\"action\":\"Start\","                                 \
    "\"source\":{\"component\":\"kubelet\",\"host\":\"n1\"},\"count\":3,"                          \
    "\"firstTimestamp\":\"2026-01-01T00:00:00Z\",\"lastTimestamp\":\"2026-01-01T00:01:00Z\","      \
    "\"eventTime\":\"2026-01-01T00:00:00.000000Z\",\"series\":{\"count\":2,"                       \
    "\"lastObservedTime\":\"2026-01-01T00:01:00.000000Z\"},"                                       \
    "\"related\":{\"kind\":\"Node\",\"name\":\"n1\"},"                                             \
    "\"reportingComponent\":\"kubelet\",\"reportingInstance\":\"n1\"}"

#define EVENTS_EVENT                                                                               \
    "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e\"},"       \
    "\"regarding\":{\"kind\":\"Pod\",\"name\":\"p\"},\"reason\":\"Started\","                      \
    "\"note\":\"hi\",\"type\":\"Normal\",\"action\":\"Start\","                                    \
    "\"deprecatedSource\":{\"component\":\"kubelet\",\"host\":\"n1\"},\"deprecatedCount\":3,"      \
    "\"deprecatedFirstTimestamp\":\"2026-01-01T00:00:00Z\","                                       \
    "\"deprecatedLastTimestamp\":\"2026-01-01T00:01:00Z\","                                        \
    "\"eventTime\":\"2026-01-01T00:00:00.000000Z\",\"series\":{\"count\":2,"                       \
    "\"lastObservedTime\":\"2026-01-01T00:01:00.000000Z\"},"                                       \
    "\"related\":{\"kind\":\"Node\",\"name\":\"n1\"},"                                             \
    "\"reportingController\":\"kubelet\",\"reportingInstance\":\"n1\"}"

static void test_needed(void **state)
{
    (void)state;
    assert_true(sk_convert_needed(res("events.k8s.io", "v1", "events")));
    assert_true(sk_convert_needed(res("autoscaling", "v1", "horizontalpodautoscalers")));
    assert_false(sk_convert_needed(res("", "v1", "events")));
    assert_false(sk_convert_needed(res("autoscaling", "v2", "horizontalpodautoscalers")));
    assert_false(sk_convert_needed(res("", "v1", "configmaps")));
}

static void test_event(void **state)
{
    (void)state;
    const sk_resource *r = res("events.k8s.io", "v1", "events");
    json_t *core = load(CORE_EVENT), *ev = load(EVENTS_EVENT);
    json_t *a = sk_convert_from_stored(r, core);
    expect_equal(a, EVENTS_EVENT);
    json_t *b = sk_convert_to_stored(r, ev);
    expect_equal(b, CORE_EVENT);
    /* round trips, and the inputs are untouched */
    json_t *c = sk_convert_to_stored(r, a);
    expect_equal(c, CORE_EVENT);
    expect_literally(core, CORE_EVENT);
    expect_literally(ev, EVENTS_EVENT);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(core);
    json_decref(ev);
}

/* A legacy core event's empty fields, as Go writes the events.k8s.io/v1
 * struct: empty strings and a zero count omitted (omitempty), zero times
 * null and a zero EventSource {} (structs are never omitted); and back,
 * core's non-omitempty reporting fields written empty. */
static void test_event_sparse(void **state)
{
    (void)state;
    const sk_resource *r = res("events.k8s.io", "v1", "events");
    json_t *core = load("{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"e\"},"
                        "\"involvedObject\":{\"kind\":\"Pod\"},\"message\":\"m\",\"reason\":\"\","
                        "\"count\":0,\"source\":{},\"reportingComponent\":\"\",\"reportingInstance\":\"\"}");
    json_t *ev = sk_convert_from_stored(r, core);
    expect_literally(ev, "{\"apiVersion\":\"events.k8s.io/v1\",\"kind\":\"Event\","
                         "\"metadata\":{\"name\":\"e\",\"creationTimestamp\":null},"
                         "\"eventTime\":null,\"regarding\":{\"kind\":\"Pod\"},\"note\":\"m\","
                         "\"deprecatedSource\":{},\"deprecatedFirstTimestamp\":null,"
                         "\"deprecatedLastTimestamp\":null}");
    json_t *back = sk_convert_to_stored(r, ev);
    expect_literally(back, "{\"apiVersion\":\"v1\",\"kind\":\"Event\","
                           "\"metadata\":{\"name\":\"e\",\"creationTimestamp\":null},"
                           "\"involvedObject\":{\"kind\":\"Pod\"},\"message\":\"m\","
                           "\"source\":{},\"firstTimestamp\":null,\"lastTimestamp\":null,"
                           "\"eventTime\":null,\"reportingComponent\":\"\","
                           "\"reportingInstance\":\"\"}");
    json_decref(back);
    json_decref(ev);
    json_decref(core);
}

#define HPA_V1                                                                                     \
    "{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"HorizontalPodAutoscaler\","                     \
    "\"metadata\":{\"name\":\"h\"},\"spec\":{\"scaleTargetRef\":{\"kind\":\"Deployment\","         \
    "\"name\":\"web\",\"apiVersion\":\"apps/v1\"},\"minReplicas\":1,\"maxReplicas\":5,"            \
    "\"targetCPUUtilizationPercentage\":70},"                                                      \
    "\"status\":{\"currentReplicas\":2,\"desiredReplicas\":3,"                                     \
    "\"currentCPUUtilizationPercentage\":40}}"

#define HPA_V2                                                                                     \
    "{\"apiVersion\":\"autoscaling/v2\",\"kind\":\"HorizontalPodAutoscaler\","                     \
    "\"metadata\":{\"name\":\"h\"},\"spec\":{\"scaleTargetRef\":{\"kind\":\"Deployment\","         \
    "\"name\":\"web\",\"apiVersion\":\"apps/v1\"},\"minReplicas\":1,\"maxReplicas\":5,"            \
    "\"metrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\","                          \
    "\"target\":{\"type\":\"Utilization\",\"averageUtilization\":70}}}]},"                         \
    "\"status\":{\"currentReplicas\":2,\"desiredReplicas\":3,"                                     \
    "\"currentMetrics\":[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\","                   \
    "\"current\":{\"averageUtilization\":40}}}]}}"

static void test_hpa_cpu(void **state)
{
    (void)state;
    const sk_resource *r = res("autoscaling", "v1", "horizontalpodautoscalers");
    json_t *v1 = load(HPA_V1);
    json_t *v2 = sk_convert_to_stored(r, v1);
    expect_equal(v2, HPA_V2);
    json_t *back = sk_convert_from_stored(r, v2);
    /* the v2 status metrics travel in an annotation */
    json_t *ann = json_object_get(json_object_get(back, "metadata"), "annotations");
    assert_non_null(json_object_get(ann, "autoscaling.alpha.kubernetes.io/current-metrics"));
    json_object_del(json_object_get(back, "metadata"), "annotations");
    expect_equal(back, HPA_V1);
    json_decref(back);
    json_decref(v2);
    json_decref(v1);
}

/* v1 without a CPU target: the implicit 80% becomes explicit in v2. */
static void test_hpa_default(void **state)
{
    (void)state;
    const sk_resource *r = res("autoscaling", "v1", "horizontalpodautoscalers");
    json_t *v1 = load("{\"apiVersion\":\"autoscaling/v1\",\"kind\":\"HorizontalPodAutoscaler\","
                      "\"metadata\":{\"name\":\"h\"},\"spec\":{\"maxReplicas\":3}}");
    json_t *v2 = sk_convert_to_stored(r, v1);
    expect_equal(v2, "{\"apiVersion\":\"autoscaling/v2\",\"kind\":\"HorizontalPodAutoscaler\","
                     "\"metadata\":{\"name\":\"h\"},\"spec\":{\"maxReplicas\":3,\"metrics\":"
                     "[{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"target\":"
                     "{\"type\":\"Utilization\",\"averageUtilization\":80}}}]}}");
    json_decref(v2);
    json_decref(v1);
}

/* v2 metrics v1 cannot hold, and the behavior, round-trip through annotations. */
static void test_hpa_other_metrics(void **state)
{
    (void)state;
    const sk_resource *r = res("autoscaling", "v1", "horizontalpodautoscalers");
    const char *v2text =
        "{\"apiVersion\":\"autoscaling/v2\",\"kind\":\"HorizontalPodAutoscaler\","
        "\"metadata\":{\"name\":\"h\",\"annotations\":{\"keep\":\"me\"}},"
        "\"spec\":{\"maxReplicas\":4,\"metrics\":["
        "{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"target\":{\"type\":"
        "\"Utilization\",\"averageUtilization\":60}}},"
        "{\"type\":\"Resource\",\"resource\":{\"name\":\"memory\",\"target\":{\"type\":"
        "\"AverageValue\",\"averageValue\":\"100Mi\"}}},"
        "{\"type\":\"Pods\",\"pods\":{\"metric\":{\"name\":\"qps\"},\"target\":{\"type\":"
        "\"AverageValue\",\"averageValue\":\"10\"}}},"
        "{\"type\":\"External\",\"external\":{\"metric\":{\"name\":\"q\"},\"target\":{\"type\":"
        "\"Value\",\"value\":\"5\"}}},"
        "{\"type\":\"Object\",\"object\":{\"describedObject\":{\"kind\":\"Service\",\"name\":"
        "\"s\"},\"metric\":{\"name\":\"rps\"},\"target\":{\"type\":\"Value\",\"value\":\"7\"}}}],"
        "\"behavior\":{\"scaleDown\":{\"stabilizationWindowSeconds\":60}}}}";
    json_t *v2 = load(v2text);
    json_t *v1 = sk_convert_from_stored(r, v2);
    json_t *spec = json_object_get(v1, "spec");
    assert_int_equal(json_integer_value(json_object_get(spec, "targetCPUUtilizationPercentage")),
                     60);
    assert_null(json_object_get(spec, "metrics"));
    assert_null(json_object_get(spec, "behavior"));
    json_t *ann = json_object_get(json_object_get(v1, "metadata"), "annotations");
    json_t *m = json_loads(
        json_string_value(json_object_get(ann, "autoscaling.alpha.kubernetes.io/metrics")), 0,
        NULL);
    assert_int_equal(json_array_size(m), 4);
    expect_equal(json_array_get(m, 0), "{\"type\":\"Resource\",\"resource\":{\"name\":\"memory\","
                                       "\"targetAverageValue\":\"100Mi\"}}");
    expect_equal(json_array_get(m, 1), "{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\","
                                       "\"targetAverageValue\":\"10\"}}");
    json_decref(m);
    json_t *back = sk_convert_to_stored(r, v1);
    /* the CPU target comes last, after the annotation's metrics, as in kube */
    json_t *want = load(v2text);
    json_t *metrics, *cpu;
    metrics = json_object_get(json_object_get(want, "spec"), "metrics");
    cpu = json_array_get(metrics, 0);
    json_incref(cpu);
    json_array_remove(metrics, 0);
    json_array_append_new(metrics, cpu);
    char *wtext = json_dumps(want, JSON_COMPACT);
    expect_equal(back, wtext);
    free(wtext);
    json_decref(want);
    json_decref(back);
    json_decref(v1);
    json_decref(v2);
}

/* Current metrics of every type travel in v1's annotation and come back. */
static void test_hpa_status_metrics(void **state)
{
    (void)state;
    const sk_resource *r = res("autoscaling", "v1", "horizontalpodautoscalers");
    const char *v2text =
        "{\"apiVersion\":\"autoscaling/v2\",\"kind\":\"HorizontalPodAutoscaler\","
        "\"metadata\":{\"name\":\"h\"},\"spec\":{\"maxReplicas\":2,\"metrics\":["
        "{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"target\":{\"type\":"
        "\"Utilization\",\"averageUtilization\":50}}}]},"
        "\"status\":{\"currentReplicas\":1,\"desiredReplicas\":1,\"currentMetrics\":["
        "{\"type\":\"Resource\",\"resource\":{\"name\":\"cpu\",\"current\":"
        "{\"averageUtilization\":30,\"averageValue\":\"100m\"}}},"
        "{\"type\":\"Pods\",\"pods\":{\"metric\":{\"name\":\"qps\"},\"current\":"
        "{\"averageValue\":\"4\"}}},"
        "{\"type\":\"External\",\"external\":{\"metric\":{\"name\":\"q\"},\"current\":"
        "{\"value\":\"9\"}}}],"
        "\"conditions\":[{\"type\":\"AbleToScale\",\"status\":\"True\"}]}}";
    json_t *v2 = load(v2text);
    json_t *v1 = sk_convert_from_stored(r, v2);
    json_t *st = json_object_get(v1, "status");
    assert_int_equal(json_integer_value(json_object_get(st, "currentCPUUtilizationPercentage")),
                     30);
    assert_null(json_object_get(st, "currentMetrics"));
    assert_null(json_object_get(st, "conditions"));
    json_t *ann = json_object_get(json_object_get(v1, "metadata"), "annotations");
    json_t *cur = json_loads(
        json_string_value(json_object_get(ann, "autoscaling.alpha.kubernetes.io/current-metrics")),
        0, NULL);
    expect_equal(json_array_get(cur, 1), "{\"type\":\"Pods\",\"pods\":{\"metricName\":\"qps\","
                                         "\"currentAverageValue\":\"4\"}}");
    expect_equal(json_array_get(cur, 2),
                 "{\"type\":\"External\",\"external\":{\"metricName\":\"q\","
                 "\"currentValue\":\"9\"}}");
    json_decref(cur);
    json_t *back = sk_convert_to_stored(r, v1);
    expect_equal(back, v2text);
    json_decref(back);
    json_decref(v1);
    json_decref(v2);
}

/* Odd shapes convert without crashing, both ways, for both pairs. */
static void test_odd_objects(void **state)
{
    (void)state;
    static const char *const odd[] = {
        "{}",
        "{\"metadata\":5,\"spec\":[],\"status\":\"x\",\"regarding\":1,\"note\":{}}",
        "{\"metadata\":{\"annotations\":{\"autoscaling.alpha.kubernetes.io/"
        "metrics\":\"[1,{\\\"type\\\""
        ":\\\"Pods\\\",\\\"pods\\\":3}]\",\"autoscaling.alpha.kubernetes.io/current-metrics\":"
        "\"not json\",\"autoscaling.alpha.kubernetes.io/conditions\":\"{}\"}},"
        "\"spec\":{\"metrics\":[5,{\"type\":\"Object\",\"object\":[]}],\"behavior\":1,"
        "\"targetCPUUtilizationPercentage\":\"x\"},"
        "\"status\":{\"currentMetrics\":{},\"conditions\":5}}",
    };
    const sk_resource *rs[] = {res("events.k8s.io", "v1", "events"),
                               res("autoscaling", "v1", "horizontalpodautoscalers")};
    for (size_t i = 0; i < 2; i++) {
        for (size_t k = 0; k < sizeof odd / sizeof *odd; k++) {
            json_t *o = load(odd[k]);
            json_t *a = sk_convert_to_stored(rs[i], o);
            json_t *b = sk_convert_from_stored(rs[i], o);
            json_t *c = sk_convert_from_stored(rs[i], a);
            assert_string_equal(json_string_value(json_object_get(c, "apiVersion")),
                                rs[i]->api_version);
            json_decref(a);
            json_decref(b);
            json_decref(c);
            json_decref(o);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_needed),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_event_sparse),
        cmocka_unit_test(test_hpa_cpu),
        cmocka_unit_test(test_hpa_default),
        cmocka_unit_test(test_hpa_other_metrics),
        cmocka_unit_test(test_hpa_status_metrics),
        cmocka_unit_test(test_odd_objects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
