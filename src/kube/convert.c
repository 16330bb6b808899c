/*
 * convert.c - see convert.h. One pair of functions per shared-storage
 * pair, chosen by the served resource's group, version and kind. The
 * field mappings are Kubernetes' conversion rules for these types
 * (pkg/apis/events/v1 and pkg/apis/autoscaling/v1), written from the API
 * definitions; what is not mapped is listed next to each pair.
 *
 * Each function edits a deep copy it owns, so the helpers below move
 * values (json_object_set + del) rather than copy them.
 */
#include "kube/convert.h"
#include "kube/typed.h"
#include "core/check.h"

#include <stdlib.h>
#include <string.h>

/* ---- small JSON helpers ---- */

/* Moves obj[from] to obj[to] (to dropped if from is absent). */
static void rename_key(json_t *obj, const char *from, const char *to)
{
    json_t *v = json_object_get(obj, from);
    if (v) {
        json_object_set(obj, to, v);
        json_object_del(obj, from);
    } else {
        json_object_del(obj, to);
    }
}

/* Moves src[from] to dst[to] if present. */
static void move_key(json_t *src, const char *from, json_t *dst, const char *to)
{
    json_t *v = json_object_get(src, from);
    if (v && !json_is_null(v))
        json_object_set(dst, to, v);
    json_object_del(src, from);
}

static void set_type(json_t *obj, const sk_resource *r)
{
    json_object_set_new(obj, "apiVersion", json_string(r->api_version));
    json_object_set_new(obj, "kind", json_string(r->kind));
}

/* metadata.annotations, created on demand when create is set. */
static json_t *annotations(json_t *obj, int create)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_is_object(meta))
        return NULL;
    json_t *a = json_object_get(meta, "annotations");
    if (!json_is_object(a) && create) {
        a = json_object();
        json_object_set_new(meta, "annotations", a);
    }
    return json_is_object(a) ? a : NULL;
}

/* Drops metadata.annotations when it became empty. */
static void tidy_annotations(json_t *obj)
{
    json_t *a = annotations(obj, 0);
    if (a && json_object_size(a) == 0)
        json_object_del(json_object_get(obj, "metadata"), "annotations");
}

/* ---- core v1 Event <-> events.k8s.io/v1 Event ----
 * Renamed: involvedObject/regarding, message/note, source/deprecatedSource,
 * firstTimestamp, lastTimestamp and count/deprecated*, reportingComponent/
 * reportingController. The same in both: reason, type, action, related,
 * series, eventTime, reportingInstance. */

static const char *const event_renames[][2] = {
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
    {"reportingComponent", "reportingController"},
};
#define N_EVENT_RENAMES (sizeof event_renames / sizeof *event_renames)

static void event_to_core(json_t *o)
{
    for (size_t i = 0; i < N_EVENT_RENAMES; i++)
        rename_key(o, event_renames[i][1], event_renames[i][0]);
}

static void event_from_core(json_t *o)
{
    for (size_t i = 0; i < N_EVENT_RENAMES; i++)
        rename_key(o, event_renames[i][0], event_renames[i][1]);
}

/* ---- autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscaler ----
 * v1 has one CPU utilization target; every other v2 metric, the current
 * metrics, the conditions and the behavior travel in annotations, as JSON
 * in v1's (v2beta1-like) metric shape. Not mapped: an annotation that is
 * not valid JSON is left as it is (kube refuses the object). */

#define ANN_METRICS "autoscaling.alpha.kubernetes.io/metrics"
#define ANN_CURRENT "autoscaling.alpha.kubernetes.io/current-metrics"
#define ANN_CONDITIONS "autoscaling.alpha.kubernetes.io/conditions"
#define ANN_BEHAVIOR "autoscaling.alpha.kubernetes.io/behavior"
#define DEFAULT_CPU_UTILIZATION 80

static const char *metric_key(const char *type)
{
    static const char *const keys[][2] = {{"Resource", "resource"},
                                          {"ContainerResource", "containerResource"},
                                          {"Pods", "pods"},
                                          {"Object", "object"},
                                          {"External", "external"}};
    for (size_t i = 0; type && i < sizeof keys / sizeof *keys; i++)
        if (strcmp(keys[i][0], type) == 0)
            return keys[i][1];
    return NULL;
}

/* One v2 MetricSpec source (edited in place) in v1's shape. */
static void metric_source_to_v1(const char *type, json_t *s)
{
    json_t *target = json_object_get(s, "target");
    json_t *metric = json_object_get(s, "metric");
    if (!strcmp(type, "Resource") || !strcmp(type, "ContainerResource")) {
        move_key(target, "averageUtilization", s, "targetAverageUtilization");
        move_key(target, "averageValue", s, "targetAverageValue");
    } else if (!strcmp(type, "Pods")) {
        move_key(target, "averageValue", s, "targetAverageValue");
        move_key(metric, "name", s, "metricName");
        move_key(metric, "selector", s, "selector");
    } else if (!strcmp(type, "Object")) {
        move_key(target, "value", s, "targetValue");
        move_key(target, "averageValue", s, "averageValue");
        move_key(metric, "name", s, "metricName");
        move_key(metric, "selector", s, "selector");
        rename_key(s, "describedObject", "target");
        return; /* "target" now holds the described object */
    } else if (!strcmp(type, "External")) {
        move_key(target, "value", s, "targetValue");
        move_key(target, "averageValue", s, "targetAverageValue");
        move_key(metric, "name", s, "metricName");
        move_key(metric, "selector", s, "metricSelector");
    }
    json_object_del(s, "target");
    json_object_del(s, "metric");
}

/* One v1 metric source (edited in place) in v2's shape. */
static void metric_source_to_v2(const char *type, json_t *s)
{
    json_t *target = json_object(), *metric = json_object();
    const char *ttype = "AverageValue";
    if (!strcmp(type, "Resource") || !strcmp(type, "ContainerResource")) {
        if (json_object_get(s, "targetAverageUtilization"))
            ttype = "Utilization";
        move_key(s, "targetAverageUtilization", target, "averageUtilization");
        move_key(s, "targetAverageValue", target, "averageValue");
    } else if (!strcmp(type, "Pods")) {
        move_key(s, "targetAverageValue", target, "averageValue");
        move_key(s, "metricName", metric, "name");
        move_key(s, "selector", metric, "selector");
    } else if (!strcmp(type, "Object")) {
        if (!json_object_get(s, "averageValue"))
            ttype = "Value";
        rename_key(s, "target", "describedObject");
        move_key(s, "targetValue", target, "value");
        move_key(s, "averageValue", target, "averageValue");
        move_key(s, "metricName", metric, "name");
        move_key(s, "selector", metric, "selector");
    } else if (!strcmp(type, "External")) {
        if (json_object_get(s, "targetValue"))
            ttype = "Value";
        move_key(s, "targetValue", target, "value");
        move_key(s, "targetAverageValue", target, "averageValue");
        move_key(s, "metricName", metric, "name");
        move_key(s, "metricSelector", metric, "selector");
    }
    json_object_set_new(target, "type", json_string(ttype));
    json_object_set_new(s, "target", target);
    if (json_object_size(metric))
        json_object_set_new(s, "metric", metric);
    else
        json_decref(metric);
}

/* Applies fn to the source object of every metric in list (v2 or v1 shape). */
static void each_metric(json_t *list, void (*fn)(const char *, json_t *))
{
    size_t i;
    json_t *m;
    json_array_foreach(list, i, m)
    {
        const char *type = json_string_value(json_object_get(m, "type"));
        const char *key = metric_key(type);
        json_t *s = key ? json_object_get(m, key) : NULL;
        if (json_is_object(s))
            fn(type, s);
    }
}

/* How a v2 MetricStatus source's fields are spelled in v1: v1 key <->
 * v2 key inside sub ("current", "metric"; NULL: at the top). */
static const struct status_field {
    const char *type, *v1, *sub, *v2;
} status_fields[] = {
    {"Resource", "currentAverageUtilization", "current", "averageUtilization"},
    {"Resource", "currentAverageValue", "current", "averageValue"},
    {"ContainerResource", "currentAverageUtilization", "current", "averageUtilization"},
    {"ContainerResource", "currentAverageValue", "current", "averageValue"},
    {"Pods", "metricName", "metric", "name"},
    {"Pods", "selector", "metric", "selector"},
    {"Pods", "currentAverageValue", "current", "averageValue"},
    {"Object", "target", NULL, "describedObject"},
    {"Object", "metricName", "metric", "name"},
    {"Object", "selector", "metric", "selector"},
    {"Object", "currentValue", "current", "value"},
    {"Object", "averageValue", "current", "averageValue"},
    {"External", "metricName", "metric", "name"},
    {"External", "metricSelector", "metric", "selector"},
    {"External", "currentValue", "current", "value"},
    {"External", "currentAverageValue", "current", "averageValue"},
};
#define N_STATUS_FIELDS (sizeof status_fields / sizeof *status_fields)

static void status_source_to_v1(const char *type, json_t *s)
{
    for (size_t i = 0; i < N_STATUS_FIELDS; i++) {
        const struct status_field *f = &status_fields[i];
        if (strcmp(f->type, type) != 0)
            continue;
        if (f->sub)
            move_key(json_object_get(s, f->sub), f->v2, s, f->v1);
        else
            rename_key(s, f->v2, f->v1);
    }
    json_object_del(s, "current");
    json_object_del(s, "metric");
}

static void status_source_to_v2(const char *type, json_t *s)
{
    json_t *current = json_object(), *metric = json_object();
    for (size_t i = 0; i < N_STATUS_FIELDS; i++) {
        const struct status_field *f = &status_fields[i];
        if (strcmp(f->type, type) != 0)
            continue;
        if (f->sub)
            move_key(s, f->v1, strcmp(f->sub, "current") == 0 ? current : metric, f->v2);
        else
            rename_key(s, f->v1, f->v2);
    }
    json_object_set_new(s, "current", current); /* required in v2 */
    if (json_object_size(metric))
        json_object_set_new(s, "metric", metric);
    else
        json_decref(metric);
}

/* Stores v (stolen) as JSON text in annotation key. */
static void annotate(json_t *obj, const char *key, json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    SK_CHECK_ALLOC(text);
    json_object_set_new(annotations(obj, 1), key, json_string(text));
    free(text);
    json_decref(v);
}

/* The JSON in annotation key, removed from obj; NULL if absent or bad. */
static json_t *take_annotation(json_t *obj, const char *key)
{
    json_t *a = annotations(obj, 0);
    const char *text = json_string_value(json_object_get(a, key));
    if (!text)
        return NULL;
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (v)
        json_object_del(a, key);
    return v;
}

static int str_is(const json_t *v, const char *want)
{
    const char *s = json_string_value(v);
    return s && strcmp(s, want) == 0;
}

/* m's CPU averageUtilization under what ("target", "current") if m is a
 * cpu Resource metric with one (borrowed), else NULL. */
static json_t *cpu_utilization(json_t *m, const char *what)
{
    json_t *res = json_object_get(m, "resource");
    json_t *u = json_object_get(json_object_get(res, what), "averageUtilization");
    return str_is(json_object_get(m, "type"), "Resource") &&
                   str_is(json_object_get(res, "name"), "cpu") && json_is_integer(u)
               ? u
               : NULL;
}

static void hpa_to_v1(json_t *o)
{
    json_t *spec = json_object_get(o, "spec");
    json_t *status = json_object_get(o, "status");
    json_t *metrics = json_object_get(spec, "metrics");
    if (json_is_array(metrics)) {
        json_t *other = json_array();
        size_t i;
        json_t *m;
        json_array_foreach(metrics, i, m)
        {
            json_t *target = cpu_utilization(m, "target");
            if (target) {
                json_object_set(spec, "targetCPUUtilizationPercentage", target);
                continue;
            }
            json_array_append(other, m);
        }
        each_metric(other, metric_source_to_v1);
        if (json_array_size(other))
            annotate(o, ANN_METRICS, other);
        else
            json_decref(other);
        json_object_del(spec, "metrics");
    }
    json_t *behavior = json_object_get(spec, "behavior");
    if (behavior) {
        annotate(o, ANN_BEHAVIOR, json_incref(behavior));
        json_object_del(spec, "behavior");
    }
    json_t *current = json_object_get(status, "currentMetrics");
    if (json_array_size(current)) {
        size_t i;
        json_t *m;
        json_array_foreach(current, i, m)
        {
            json_t *cur = cpu_utilization(m, "current");
            if (cur) {
                json_object_set(status, "currentCPUUtilizationPercentage", cur);
                break;
            }
        }
        json_t *copy = json_deep_copy(current);
        each_metric(copy, status_source_to_v1);
        annotate(o, ANN_CURRENT, copy);
    }
    json_object_del(status, "currentMetrics");
    json_t *conds = json_object_get(status, "conditions");
    if (json_array_size(conds))
        annotate(o, ANN_CONDITIONS, json_incref(conds));
    json_object_del(status, "conditions");
}

/* {type: Resource, resource: {name: cpu, <where>: {averageUtilization}}};
 * a target also has its type. */
static json_t *cpu_metric(const char *where, json_t *utilization)
{
    json_t *v = json_pack("{s:O}", "averageUtilization", utilization);
    if (strcmp(where, "target") == 0)
        json_object_set_new(v, "type", json_string("Utilization"));
    return json_pack("{s:s, s:{s:s, s:o}}", "type", "Resource", "resource", "name", "cpu", where,
                     v);
}

json_t *sk_convert_default_cpu_metric(void)
{
    json_t *d = json_integer(DEFAULT_CPU_UTILIZATION);
    json_t *m = cpu_metric("target", d);
    json_decref(d);
    return m;
}

static void hpa_to_v2(json_t *o)
{
    json_t *spec = json_object_get(o, "spec");
    json_t *status = json_object_get(o, "status");
    json_t *metrics = take_annotation(o, ANN_METRICS);
    if (!json_is_array(metrics)) {
        json_decref(metrics);
        metrics = json_array();
    }
    each_metric(metrics, metric_source_to_v2);
    json_t *cpu = json_object_get(spec, "targetCPUUtilizationPercentage");
    if (json_is_integer(cpu))
        json_array_append_new(metrics, cpu_metric("target", cpu));
    else if (json_array_size(metrics) == 0 && json_is_object(spec))
        json_array_append_new(metrics, sk_convert_default_cpu_metric()); /* v1's implicit one */
    if (json_is_object(spec)) {
        json_object_del(spec, "targetCPUUtilizationPercentage");
        json_object_set(spec, "metrics", metrics);
    }
    json_decref(metrics);
    json_t *behavior = take_annotation(o, ANN_BEHAVIOR);
    if (behavior && json_is_object(spec))
        json_object_set(spec, "behavior", behavior);
    json_decref(behavior);
    json_t *current = take_annotation(o, ANN_CURRENT);
    if (json_is_array(current)) {
        each_metric(current, status_source_to_v2);
    } else {
        json_decref(current);
        current = NULL;
        json_t *cur = json_object_get(status, "currentCPUUtilizationPercentage");
        if (json_is_integer(cur)) {
            current = json_array();
            json_array_append_new(current, cpu_metric("current", cur));
        }
    }
    if (json_is_object(status)) {
        json_object_del(status, "currentCPUUtilizationPercentage");
        if (current)
            json_object_set(status, "currentMetrics", current);
        json_t *conds = take_annotation(o, ANN_CONDITIONS);
        if (json_is_array(conds))
            json_object_set(status, "conditions", conds);
        json_decref(conds);
    }
    json_decref(current);
    tidy_annotations(o);
}

/* ---- dispatch ---- */

typedef struct convert_pair {
    const char *group, *version, *kind; /* the served form */
    void (*to_stored)(json_t *);
    void (*from_stored)(json_t *);
} convert_pair;

static const convert_pair pairs[] = {
    {"events.k8s.io", "v1", "Event", event_to_core, event_from_core},
    {"autoscaling", "v1", "HorizontalPodAutoscaler", hpa_to_v2, hpa_to_v1},
};

static const convert_pair *pair_of(const sk_resource *r)
{
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        if (!strcmp(pairs[i].group, r->group) && !strcmp(pairs[i].version, r->version) &&
            !strcmp(pairs[i].kind, r->kind))
            return &pairs[i];
    return NULL;
}

int sk_convert_needed(const sk_resource *r)
{
    return r->stored_as != r;
}

/* o (stolen) as Go's json.Marshal of the target struct writes it: which
 * zero values are written and which omitted is the target's schema's to say
 * (omitempty, pointers), not the mapping's. An object that does not decode
 * (it came from a store written by hand) is left as the mapping made it. */
static json_t *as_go_writes(const sk_resource *target, json_t *o)
{
    json_t *typed = NULL;
    char *msg = NULL;
    if (sk_typed_normalize(target, o, &typed, &msg) != SK_OK) {
        free(msg);
        return o;
    }
    json_decref(o);
    return typed;
}

json_t *sk_convert_to_stored(const sk_resource *r, const json_t *obj)
{
    json_t *o = json_deep_copy(obj);
    SK_CHECK_ALLOC(o);
    if (sk_convert_needed(r)) {
        const convert_pair *p = pair_of(r);
        if (p && json_is_object(o))
            p->to_stored(o);
        set_type(o, r->stored_as);
        o = as_go_writes(r->stored_as, o);
    }
    return o;
}

json_t *sk_convert_from_stored(const sk_resource *r, const json_t *stored)
{
    json_t *o = json_deep_copy(stored);
    SK_CHECK_ALLOC(o);
    if (sk_convert_needed(r)) {
        const convert_pair *p = pair_of(r);
        if (p && json_is_object(o))
            p->from_stored(o);
        set_type(o, r);
        o = as_go_writes(r, o);
    }
    return o;
}
