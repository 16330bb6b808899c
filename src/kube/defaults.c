/*
 * defaults.c - see defaults.h. What kube-apiserver 1.32 fills in that a
 * client reads back: the SetDefaults_* functions of pkg/apis/{core,apps,
 * batch}/v1 (with the feature gates a default 1.32 server has on), the
 * declarative +default markers of k8s.io/api, and the few strategy and
 * admission steps every write of a kind goes through (a Job's generated
 * selector, a Pod's default priority, a Namespace's name label). Initial
 * statuses are kube/status_rules.c's (except a Namespace's, older than
 * it); a Service's IPs and IP families are api/alloc.c's.
 *
 * Input is an object already through the typed round trip (kube/typed.h):
 * values have their declared JSON types, and a Go zero value may be absent,
 * null or written out ("", 0, false). "Unset" below means all three, as the
 * Go code's `== ""` / `== nil` tests see them. The caller runs the round
 * trip again afterwards, which puts defaulted fields in declaration order.
 *
 * Pod templates are found through one table of where each kind keeps its
 * PodSpec, so a workload kind's defaults are its own rules plus that path.
 */
#include "kube/defaults.h"
#include "kube/status_rules.h"
#include "core/check.h"

#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON helpers over typed values ---------------------------------- */

static int unset(const json_t *v)
{
    return !v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0);
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* The object member key of o, created empty if unset (a struct field Go
 * allocates or always has); NULL if o is not an object. */
static json_t *child(json_t *o, const char *key)
{
    json_t *c;
    if (!json_is_object(o))
        return NULL;
    c = json_object_get(o, key);
    if (!json_is_object(c)) {
        c = json_object();
        json_object_set_new(o, key, c);
    }
    return c;
}

/* The object at a dotted path, or NULL if a step is missing. */
static json_t *at(json_t *o, const char *path)
{
    char seg[64];
    while (o && *path) {
        size_t len = strcspn(path, ".");
        SK_CHECK(len < sizeof seg);
        memcpy(seg, path, len);
        seg[len] = '\0';
        o = json_is_object(o) ? json_object_get(o, seg) : NULL;
        path += len + (path[len] == '.');
    }
    return json_is_object(o) ? o : NULL;
}

static void def_str(json_t *o, const char *key, const char *v)
{
    if (json_is_object(o) && unset(json_object_get(o, key)))
        json_object_set_new(o, key, json_string(v));
}

/* Pointer fields: only an absent (nil) value is defaulted, never a zero. */
static void def_ptr(json_t *o, const char *key, json_t *v)
{
    if (json_is_object(o) && unset(json_object_get(o, key)))
        json_object_set_new(o, key, v);
    else
        json_decref(v);
}

/* Non-pointer integers: zero is unset. */
static void def_int(json_t *o, const char *key, json_int_t v)
{
    if (json_is_object(o) && json_integer_value(json_object_get(o, key)) == 0)
        json_object_set_new(o, key, json_integer(v));
}

#define EACH(arr, i, x) for (size_t i = 0; (x = json_array_get(arr, i)) != NULL; i++)

/* ---- core/v1 ---------------------------------------------------------- */

/* parsers.ParseImageName's tag: "latest" when the reference has neither
 * tag nor digest; a digest reference has no tag. */
static int image_is_latest(const char *image)
{
    if (strchr(image, '@'))
        return 0;
    const char *slash = strrchr(image, '/');
    const char *colon = strrchr(slash ? slash : image, ':');
    return !colon || strcmp(colon + 1, "latest") == 0;
}

static void default_http_get(json_t *h)
{
    def_str(h, "path", "/");
    def_str(h, "scheme", "HTTP");
}

static void default_probe(json_t *p)
{
    if (!json_is_object(p))
        return;
    def_int(p, "timeoutSeconds", 1);
    def_int(p, "periodSeconds", 10);
    def_int(p, "successThreshold", 1);
    def_int(p, "failureThreshold", 3);
    default_http_get(at(p, "httpGet"));
}

static void default_container(json_t *c)
{
    json_t *x;
    if (!json_is_object(c))
        return;
    def_str(c, "imagePullPolicy", image_is_latest(str(c, "image")) ? "Always" : "IfNotPresent");
    def_str(c, "terminationMessagePath", "/dev/termination-log");
    def_str(c, "terminationMessagePolicy", "File");
    EACH(json_object_get(c, "ports"), i, x) def_str(x, "protocol", "TCP");
    default_probe(json_object_get(c, "livenessProbe"));
    default_probe(json_object_get(c, "readinessProbe"));
    default_probe(json_object_get(c, "startupProbe"));
    default_http_get(at(c, "lifecycle.postStart.httpGet"));
    default_http_get(at(c, "lifecycle.preStop.httpGet"));
    EACH(json_object_get(c, "env"), i, x) def_str(at(x, "valueFrom.fieldRef"), "apiVersion", "v1");
}

static void default_volume(json_t *v)
{
    static const char *const sources[] = {"secret", "configMap", "downwardAPI", "projected"};
    int has_source = 0;
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val) has_source |= strcmp(key, "name") != 0 && !json_is_null(val);
    if (!has_source)
        json_object_set_new(v, "emptyDir", json_object());
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        def_ptr(at(v, sources[i]), "defaultMode", json_integer(0644));
    def_ptr(at(v, "hostPath"), "type", json_string(""));
    json_t *src;
    EACH(json_object_get(at(v, "projected"), "sources"), i, src)
    def_ptr(at(src, "serviceAccountToken"), "expirationSeconds", json_integer(3600));
}

/* SetDefaults_PodSpec and what it reaches: containers, probes, volumes. */
static void default_pod_spec(json_t *spec)
{
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    json_t *x;
    if (!json_is_object(spec))
        return;
    def_str(spec, "dnsPolicy", "ClusterFirst");
    def_str(spec, "restartPolicy", "Always");
    def_ptr(spec, "securityContext", json_object());
    def_ptr(spec, "terminationGracePeriodSeconds", json_integer(30));
    def_str(spec, "schedulerName", "default-scheduler");
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        EACH(json_object_get(spec, lists[l]), i, x) default_container(x);
    EACH(json_object_get(spec, "volumes"), i, x) default_volume(x);
}

/* A PodTemplateSpec's spec (the template's metadata needs nothing). */
static void default_template(json_t *tmpl)
{
    default_pod_spec(at(tmpl, "spec"));
}

/* Request = limit for each limited resource a container does not request. */
static void requests_from_limits(json_t *c)
{
    json_t *limits = at(c, "resources.limits");
    const char *k;
    json_t *v;
    if (!limits || json_object_size(limits) == 0)
        return;
    json_t *req = child(child(c, "resources"), "requests");
    json_object_foreach(limits, k, v)
    {
        if (!json_object_get(req, k))
            json_object_set(req, k, v);
    }
}

static void default_pod(json_t *obj)
{
    json_t *spec = child(obj, "spec"), *c;
    EACH(json_object_get(spec, "containers"), i, c) requests_from_limits(c);
    EACH(json_object_get(spec, "initContainers"), i, c) requests_from_limits(c);
    def_ptr(spec, "enableServiceLinks", json_true());
    if (json_is_true(json_object_get(spec, "hostNetwork"))) {
        static const char *const lists[] = {"containers", "initContainers"};
        for (size_t l = 0; l < 2; l++)
            EACH(json_object_get(spec, lists[l]), i, c)
            {
                json_t *p;
                EACH(json_object_get(c, "ports"), j, p)
                {
                    if (json_integer_value(json_object_get(p, "hostPort")) == 0)
                        json_object_set(p, "hostPort", json_object_get(p, "containerPort"));
                }
            }
    }
    default_pod_spec(spec);
    /* The Priority admission plugin with no default PriorityClass. */
    if (unset(json_object_get(spec, "priorityClassName"))) {
        def_ptr(spec, "priority", json_integer(0));
        def_ptr(spec, "preemptionPolicy", json_string("PreemptLowerPriority"));
    }
}

static void default_service(json_t *obj)
{
    json_t *spec = child(obj, "spec"), *p;
    def_str(spec, "sessionAffinity", "None");
    if (strcmp(str(spec, "sessionAffinity"), "None") == 0)
        json_object_del(spec, "sessionAffinityConfig");
    else if (strcmp(str(spec, "sessionAffinity"), "ClientIP") == 0 &&
             unset(json_object_get(at(spec, "sessionAffinityConfig.clientIP"), "timeoutSeconds")))
        json_object_set_new(spec, "sessionAffinityConfig",
                            json_pack("{s:{s:i}}", "clientIP", "timeoutSeconds", 10800));
    def_str(spec, "type", "ClusterIP");
    const char *type = str(spec, "type");
    EACH(json_object_get(spec, "ports"), i, p)
    {
        json_t *tp = json_object_get(p, "targetPort");
        def_str(p, "protocol", "TCP");
        if (unset(tp) || (json_is_integer(tp) && json_integer_value(tp) == 0))
            json_object_set(p, "targetPort", json_object_get(p, "port"));
    }
    int lb = strcmp(type, "LoadBalancer") == 0, np = strcmp(type, "NodePort") == 0;
    int cip = strcmp(type, "ClusterIP") == 0;
    if (lb || np || (cip && json_array_size(json_object_get(spec, "externalIPs")) > 0))
        def_str(spec, "externalTrafficPolicy", "Cluster");
    if (lb || np || cip)
        def_ptr(spec, "internalTrafficPolicy", json_string("Cluster"));
    if (lb)
        def_ptr(spec, "allocateLoadBalancerNodePorts", json_true());
}

static void default_pvc(json_t *pvc)
{
    def_ptr(child(pvc, "spec"), "volumeMode", json_string("Filesystem"));
    def_str(child(pvc, "status"), "phase", "Pending");
}

/* SetDefaults_Namespace; on create also the strategy's kubernetes finalizer
 * and Active phase (an update keeps what finalize left). */
static void default_namespace(json_t *obj, int create)
{
    json_t *spec = child(obj, "spec");
    const char *name = str(at(obj, "metadata"), "name");
    if (create && json_array_size(json_object_get(spec, "finalizers")) == 0)
        json_object_set_new(spec, "finalizers", json_pack("[s]", "kubernetes"));
    if (create)
        json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
    if (*name)
        json_object_set_new(child(child(obj, "metadata"), "labels"), "kubernetes.io/metadata.name",
                            json_string(name));
}

static sk_err default_secret(json_t *obj, char **msg)
{
    def_str(obj, "type", "Opaque");
    json_t *sd = json_object_get(obj, "stringData");
    if (!json_is_object(sd))
        return SK_OK;
    json_t *data = child(obj, "data");
    const char *k;
    json_t *v;
    json_object_foreach(sd, k, v)
    {
        if (!json_is_string(v)) {
            *msg = strdup("stringData values must be strings");
            SK_CHECK_ALLOC(*msg);
            return SK_ERR_BAD_REQUEST;
        }
        gnutls_datum_t in = {(unsigned char *)json_string_value(v),
                             (unsigned)json_string_length(v)};
        gnutls_datum_t enc = {NULL, 0};
        SK_CHECK(gnutls_base64_encode2(&in, &enc) == 0);
        json_object_set_new(data, k, json_stringn((const char *)enc.data, enc.size));
        gnutls_free(enc.data);
    }
    json_object_del(obj, "stringData");
    return SK_OK;
}

/* ---- apps/v1, batch/v1 -------------------------------------------------- */

static void default_deployment(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    def_ptr(spec, "replicas", json_integer(1));
    json_t *strategy = child(spec, "strategy");
    def_str(strategy, "type", "RollingUpdate");
    if (strcmp(str(strategy, "type"), "RollingUpdate") == 0) {
        json_t *ru = child(strategy, "rollingUpdate");
        def_ptr(ru, "maxUnavailable", json_string("25%"));
        def_ptr(ru, "maxSurge", json_string("25%"));
    }
    def_ptr(spec, "revisionHistoryLimit", json_integer(10));
    def_ptr(spec, "progressDeadlineSeconds", json_integer(600));
}

static void default_daemonset(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    json_t *strategy = child(spec, "updateStrategy");
    def_str(strategy, "type", "RollingUpdate");
    if (strcmp(str(strategy, "type"), "RollingUpdate") == 0) {
        json_t *ru = child(strategy, "rollingUpdate");
        def_ptr(ru, "maxUnavailable", json_integer(1));
        def_ptr(ru, "maxSurge", json_integer(0));
    }
    def_ptr(spec, "revisionHistoryLimit", json_integer(10));
}

static void default_statefulset(json_t *obj)
{
    json_t *spec = child(obj, "spec"), *pvc;
    def_str(spec, "podManagementPolicy", "OrderedReady");
    json_t *strategy = child(spec, "updateStrategy");
    if (unset(json_object_get(strategy, "type"))) {
        json_object_set_new(strategy, "type", json_string("RollingUpdate"));
        child(strategy, "rollingUpdate");
    }
    if (strcmp(str(strategy, "type"), "RollingUpdate") == 0 && at(strategy, "rollingUpdate"))
        def_ptr(at(strategy, "rollingUpdate"), "partition", json_integer(0));
    json_t *retention = child(spec, "persistentVolumeClaimRetentionPolicy");
    def_str(retention, "whenDeleted", "Retain");
    def_str(retention, "whenScaled", "Retain");
    def_ptr(spec, "replicas", json_integer(1));
    def_ptr(spec, "revisionHistoryLimit", json_integer(10));
    EACH(json_object_get(spec, "volumeClaimTemplates"), i, pvc) default_pvc(pvc);
}

static void default_replicaset(json_t *obj)
{
    def_ptr(child(obj, "spec"), "replicas", json_integer(1));
}

static void default_replication_controller(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    json_t *labels = at(spec, "template.metadata.labels");
    if (labels) {
        if (json_object_size(json_object_get(spec, "selector")) == 0)
            json_object_set_new(spec, "selector", json_deep_copy(labels));
        json_t *meta = child(obj, "metadata");
        if (json_object_size(json_object_get(meta, "labels")) == 0)
            json_object_set_new(meta, "labels", json_deep_copy(labels));
    }
    def_ptr(spec, "replicas", json_integer(1));
}

/* SetDefaults_Job, then the job strategy's generated selector: unless
 * manualSelector, the pods are the job's by its uid. */
static void default_job(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    json_t *meta = child(obj, "metadata");
    if (unset(json_object_get(spec, "completions")) &&
        unset(json_object_get(spec, "parallelism"))) {
        json_object_set_new(spec, "completions", json_integer(1));
        json_object_set_new(spec, "parallelism", json_integer(1));
    }
    def_ptr(spec, "parallelism", json_integer(1));
    def_ptr(spec, "backoffLimit",
            json_integer(unset(json_object_get(spec, "backoffLimitPerIndex")) ? 6 : 2147483647));
    json_t *tlabels = at(spec, "template.metadata.labels");
    /* Go shares the template's map with the job here, so the labels the
     * selector adds below show on both. */
    int share = tlabels && json_object_size(json_object_get(meta, "labels")) == 0;
    def_ptr(spec, "completionMode", json_string("NonIndexed"));
    def_ptr(spec, "suspend", json_false());
    json_t *rule, *pattern;
    EACH(json_object_get(at(spec, "podFailurePolicy"), "rules"), i, rule)
    EACH(json_object_get(rule, "onPodConditions"), j, pattern) def_str(pattern, "status", "True");
    def_ptr(spec, "podReplacementPolicy",
            json_string(at(spec, "podFailurePolicy") ? "Failed" : "TerminatingOrFailed"));
    def_ptr(spec, "manualSelector", json_false());
    const char *uid = str(meta, "uid");
    if (!json_is_true(json_object_get(spec, "manualSelector")) && *uid &&
        unset(json_object_get(spec, "selector"))) {
        const char *name = str(meta, "name");
        json_object_set_new(
            spec, "selector",
            json_pack("{s:{s:s}}", "matchLabels", "batch.kubernetes.io/controller-uid", uid));
        json_t *labels = child(child(child(spec, "template"), "metadata"), "labels");
        json_object_set_new(labels, "controller-uid", json_string(uid));
        json_object_set_new(labels, "job-name", json_string(name));
        json_object_set_new(labels, "batch.kubernetes.io/controller-uid", json_string(uid));
        json_object_set_new(labels, "batch.kubernetes.io/job-name", json_string(name));
        if (share)
            json_object_set_new(meta, "labels", json_deep_copy(labels));
    } else if (share) {
        json_object_set_new(meta, "labels", json_deep_copy(tlabels));
    }
}

static void default_cronjob(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    def_str(spec, "concurrencyPolicy", "Allow");
    def_ptr(spec, "suspend", json_false());
    def_ptr(spec, "successfulJobsHistoryLimit", json_integer(3));
    def_ptr(spec, "failedJobsHistoryLimit", json_integer(1));
}

static void default_endpoints(json_t *obj)
{
    json_t *ss, *p;
    EACH(json_object_get(obj, "subsets"), i, ss)
    EACH(json_object_get(ss, "ports"), j, p) def_str(p, "protocol", "TCP");
}

static void default_pv(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    def_str(spec, "persistentVolumeReclaimPolicy", "Retain");
    def_ptr(spec, "volumeMode", json_string("Filesystem"));
}

/* SetDefaults_CustomResourceDefinition(Spec) and the strategies' storedVersions
 * (PrepareForCreate starts from an empty status). */
static void default_crd(json_t *obj, int create)
{
    json_t *spec = child(obj, "spec");
    json_t *names = child(spec, "names");
    const char *kind = json_string_value(json_object_get(names, "kind"));
    if (kind && *kind) {
        char *lower = strdup(kind);
        SK_CHECK_ALLOC(lower);
        for (char *c = lower; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
        def_str(names, "singular", lower);
        free(lower);
        if (unset(json_object_get(names, "listKind")))
            json_object_set_new(names, "listKind", json_sprintf("%sList", kind));
    }
    if (unset(json_object_get(spec, "conversion")))
        json_object_set_new(spec, "conversion", json_pack("{s:s}", "strategy", "None"));
    json_t *svc = at(spec, "conversion.webhook.clientConfig.service");
    if (svc)
        def_ptr(svc, "port", json_integer(443));
    if (create)
        json_object_del(obj, "status");
    sk_status_rules_add_stored_version(obj);
}

/* ---- the table ---------------------------------------------------------- */

typedef struct {
    const char *group, *kind;
    void (*fn)(json_t *obj);
    const char *template_at; /* where the kind keeps a PodTemplateSpec, if it does */
} kind_defaults;

static const kind_defaults table[] = {
    {"", "Pod", default_pod, NULL},
    {"", "PodTemplate", NULL, "template"},
    {"", "ReplicationController", default_replication_controller, "spec.template"},
    {"", "Service", default_service, NULL},
    {"", "Endpoints", default_endpoints, NULL},
    {"", "PersistentVolume", default_pv, NULL},
    {"", "PersistentVolumeClaim", default_pvc, NULL},
    {"apps", "Deployment", default_deployment, "spec.template"},
    {"apps", "ReplicaSet", default_replicaset, "spec.template"},
    {"apps", "StatefulSet", default_statefulset, "spec.template"},
    {"apps", "DaemonSet", default_daemonset, "spec.template"},
    {"batch", "Job", default_job, "spec.template"},
    {"batch", "CronJob", default_cronjob, "spec.jobTemplate.spec.template"},
};

static sk_err apply(const sk_resource *r, json_t *obj, int create, char **msg)
{
    if (strcmp(r->kind, "Secret") == 0 && !*r->group)
        return default_secret(obj, msg);
    if (strcmp(r->kind, "Namespace") == 0 && !*r->group) {
        default_namespace(obj, create);
        return SK_OK;
    }
    if (strcmp(r->storage, "customresourcedefinitions.apiextensions.k8s.io") == 0) {
        default_crd(obj, create);
        return SK_OK;
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].kind, r->kind) != 0 || strcmp(table[i].group, r->group) != 0)
            continue;
        if (table[i].fn)
            table[i].fn(obj);
        if (table[i].template_at)
            default_template(at(obj, table[i].template_at));
        break;
    }
    return SK_OK;
}

sk_err sk_defaults_apply(const sk_resource *r, json_t *obj, char **msg)
{
    return apply(r, obj, 1, msg);
}

sk_err sk_defaults_update(const sk_resource *r, json_t *obj, const json_t *old, char **msg)
{
    (void)old;
    return apply(r, obj, 0, msg);
}
