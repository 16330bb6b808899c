/*
 * defaults.c - see defaults.h. What kube-apiserver 1.32 fills in that a
 * client reads back: the SetDefaults_* functions of pkg/apis/<group>/<v>
 * for every served group/version (with the feature gates a default 1.32
 * server has on), the declarative +default markers of k8s.io/api (from the
 * generated schema, at every depth), and the few strategy and
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
 *
 * The other groups' defaulters (admissionregistration, apiregistration,
 * autoscaling, discovery, flowcontrol, networking, rbac, scheduling and
 * storage v1, autoscaling v2) are mostly "this field, if nil, is that
 * constant": those are rows of one field table, each naming the kube
 * function it ports, walked by one path walker; only logic (an HPA's
 * metrics and behavior, a NetworkPolicy's policyTypes, an RBAC subject's
 * apiGroup by kind) is code. Defaulting runs in the version the request
 * was decoded from, as kube does before converting: autoscaling/v1's
 * implicit CPU target is kube/convert.c's, as kube's v1 conversion owns it.
 */
#include "kube/defaults.h"
#include "kube/convert.h"
#include "kube/schema.h"
#include "kube/status_rules.h"
#include "kube/typed.h"
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

/* Calls fn(o, s, arg) on each object path (dotted field names) reaches
 * from o, whose type is s; once with o NULL where the object stops short. What each step is comes from the schema, as the
 * Go code's types decide it: a list's elements are each walked, a pointer
 * only when set, a struct value always (Go has it even when the client
 * left it out). The whole path is looked up in the schema even where the
 * object stops (o NULL), so a table row the schema does not have fails on
 * the first write of its kind, whatever that write holds. */
static void walk(json_t *o, const sk_schema *s, const char *path,
                 void (*fn)(json_t *, const sk_schema *, const void *), const void *arg)
{
    char seg[64];
    size_t len = strcspn(path, ".");
    const char *rest = path + len + (path[len] == '.');
    json_t *x;
    if (!json_is_object(o))
        o = NULL;
    if (len == 0) {
        fn(o, s, arg);
        return;
    }
    SK_CHECK(len < sizeof seg);
    memcpy(seg, path, len);
    seg[len] = '\0';
    const sk_schema_field *f = sk_schema_field_find(s, seg, len);
    SK_CHECK(f);
    const sk_schema *t = sk_schema_field_type(f);
    if (sk_schema_kind_of(t) == SK_SCHEMA_ARRAY) {
        t = sk_schema_elem(t);
        if (!json_array_size(o ? json_object_get(o, seg) : NULL))
            walk(NULL, t, rest, fn, arg);
        EACH(o ? json_object_get(o, seg) : NULL, i, x) walk(x, t, rest, fn, arg);
    } else if (!o || (sk_schema_field_flags(f) & SK_FIELD_POINTER)) {
        walk(o ? json_object_get(o, seg) : NULL, t, rest, fn, arg);
    } else {
        walk(child(o, seg), t, rest, fn, arg);
    }
}

/* One "field = constant when unset" rule of a SetDefaults_* function:
 * key of each object at (see walk) in objects of group/kind (NULL for a
 * table applied to a part, such as a volume source), value as JSON.
 * When the field counts as unset is its Go type's (the schema's): nil for
 * a pointer, len() == 0 for a slice, the zero value for anything else. */
typedef struct {
    const char *group, *kind, *at, *key, *value;
} field_default;

static void default_field(json_t *o, const sk_schema *s, const void *arg)
{
    const field_default *d = arg;
    const sk_schema_field *f = sk_schema_field_find(s, d->key, strlen(d->key));
    SK_CHECK(f);
    if (!o)
        return;
    const json_t *cur = json_object_get(o, d->key);
    int is_unset = (sk_schema_field_flags(f) & SK_FIELD_POINTER)
                       ? !cur || json_is_null(cur)
                   : sk_schema_kind_of(sk_schema_field_type(f)) == SK_SCHEMA_ARRAY
                       ? json_array_size(cur) == 0
                       : unset(cur) || json_is_false(cur) ||
                             (json_is_integer(cur) && json_integer_value(cur) == 0);
    if (is_unset) {
        json_t *v = json_loads(d->value, JSON_DECODE_ANY, NULL);
        SK_CHECK(v);
        json_object_set_new(o, d->key, v);
    }
}

static void default_fields(json_t *o, const char *schema, const field_default *rows, size_t n)
{
    const sk_schema *s = sk_schema_named(schema);
    SK_CHECK(s);
    for (size_t i = 0; i < n; i++)
        walk(o, s, rows[i].at, default_field, &rows[i]);
}

/* The keys of src that dst (o's member key, created if needed) lacks, copied. */
static void copy_missing(json_t *o, const char *key, const json_t *src)
{
    const char *k;
    json_t *v, *dst = NULL;
    json_object_foreach((json_t *)src, k, v)
    {
        if (!dst)
            dst = child(o, key);
        if (!json_object_get(dst, k))
            json_object_set(dst, k, v);
    }
}

/* SetDefaults_ResourceList on o's member key: quantities finer than 1m are
 * rounded up to it. */
static void round_resources(json_t *o, const char *key)
{
    json_t *list = json_object_get(o, key), *v;
    const char *k;
    json_object_foreach(list, k, v)
    {
        char *r = json_is_string(v) ? sk_typed_quantity_round_up_milli(json_string_value(v)) : NULL;
        if (r)
            json_object_set_new(list, k, json_string(r));
        free(r);
    }
}

/* The limits and requests of a ResourceRequirements. */
static void round_requirements(json_t *rr)
{
    round_resources(rr, "limits");
    round_resources(rr, "requests");
}

/* The +default markers of k8s.io/api, which defaulter-gen turns into "if
 * unset, this value" code at every depth (a port's TCP, an RBD volume's
 * pool, a gRPC probe's service): scripts/gen_kube_api.py copies each into
 * the schema, so one walk over the object and its type applies them all. */
static void default_markers(const sk_schema *s, json_t *v)
{
    const char *k;
    json_t *x;
    switch (sk_schema_kind_of(s)) {
    case SK_SCHEMA_STRUCT:
        json_object_foreach(v, k, x)
        {
            const sk_schema_field *f = sk_schema_field_find(s, k, strlen(k));
            if (f)
                default_markers(sk_schema_field_type(f), x);
        }
        for (size_t i = 0; json_is_object(v) && i < sk_schema_field_count(s); i++) {
            const sk_schema_field *f = sk_schema_field_at(s, i);
            const json_t *d = sk_schema_field_default(f);
            if (d && unset(json_object_get(v, sk_schema_field_name(f))))
                json_object_set_new(v, sk_schema_field_name(f), json_deep_copy(d));
        }
        break;
    case SK_SCHEMA_ARRAY:
        EACH(v, i, x) default_markers(sk_schema_elem(s), x);
        break;
    case SK_SCHEMA_MAP:
        json_object_foreach(v, k, x) default_markers(sk_schema_elem(s), x);
        break;
    default:
        break;
    }
}

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
    default_probe(json_object_get(c, "livenessProbe"));
    default_probe(json_object_get(c, "readinessProbe"));
    default_probe(json_object_get(c, "startupProbe"));
    default_http_get(at(c, "lifecycle.postStart.httpGet"));
    default_http_get(at(c, "lifecycle.preStop.httpGet"));
    EACH(json_object_get(c, "env"), i, x) def_str(at(x, "valueFrom.fieldRef"), "apiVersion", "v1");
    round_requirements(at(c, "resources"));
}

/* What SetDefaults_AzureDiskVolumeSource and _HostPathVolumeSource add to
 * the +default markers of a Pod's volume and a PersistentVolume's spec. */
static const field_default volume_sources[] = {
    {NULL, NULL, "azureDisk", "cachingMode", "\"ReadWrite\""},
    {NULL, NULL, "azureDisk", "kind", "\"Shared\""},
    {NULL, NULL, "hostPath", "type", "\"\""},
};

static void default_field_ref(json_t *items)
{
    json_t *x;
    EACH(items, i, x) def_str(at(x, "fieldRef"), "apiVersion", "v1");
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
    default_fields(v, "io.k8s.api.core.v1.Volume", volume_sources,
                   sizeof volume_sources / sizeof volume_sources[0]);
    default_field_ref(json_object_get(at(v, "downwardAPI"), "items"));
    json_t *claim = at(v, "ephemeral.volumeClaimTemplate.spec");
    def_ptr(claim, "volumeMode", json_string("Filesystem"));
    round_requirements(at(claim, "resources"));
    json_t *src;
    EACH(json_object_get(at(v, "projected"), "sources"), i, src)
    {
        def_ptr(at(src, "serviceAccountToken"), "expirationSeconds", json_integer(3600));
        default_field_ref(json_object_get(at(src, "downwardAPI"), "items"));
    }
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
    /* kube's v1 conversion of a PodSpec: serviceAccountName wins, the
     * deprecated serviceAccount stands in when it is unset, and reads
     * carry both (so kubectl set serviceaccount moves both). */
    json_t *sa_name = json_object_get(spec, "serviceAccountName");
    json_t *sa = json_object_get(spec, "serviceAccount");
    if (!unset(sa_name))
        json_object_set(spec, "serviceAccount", sa_name);
    else if (!unset(sa))
        json_object_set(spec, "serviceAccountName", sa);
    for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
        EACH(json_object_get(spec, lists[l]), i, x) default_container(x);
    EACH(json_object_get(spec, "volumes"), i, x) default_volume(x);
    round_resources(spec, "overhead");
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
    if (limits)
        copy_missing(child(c, "resources"), "requests", limits);
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
    static const char *const statuses[] = {"containerStatuses", "initContainerStatuses",
                                           "ephemeralContainerStatuses"};
    for (size_t l = 0; l < sizeof statuses / sizeof statuses[0]; l++)
        EACH(json_object_get(at(obj, "status"), statuses[l]), i, c)
        {
            round_resources(c, "allocatedResources");
            round_requirements(at(c, "resources"));
        }
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
        if (unset(tp) || (json_is_integer(tp) && json_integer_value(tp) == 0))
            json_object_set(p, "targetPort", json_object_get(p, "port"));
    }
    int lb = strcmp(type, "LoadBalancer") == 0, np = strcmp(type, "NodePort") == 0;
    int cip = strcmp(type, "ClusterIP") == 0;
    if (lb || np || (cip && json_array_size(json_object_get(spec, "externalIPs")) > 0))
        def_str(spec, "externalTrafficPolicy", "Cluster");
    if (lb || np || cip)
        def_ptr(spec, "internalTrafficPolicy", json_string("Cluster"));
    if (lb) {
        def_ptr(spec, "allocateLoadBalancerNodePorts", json_true());
        /* LoadBalancerIPMode, on in 1.32 */
        json_t *ing;
        EACH(json_object_get(at(obj, "status.loadBalancer"), "ingress"), i, ing)
        {
            if (!unset(json_object_get(ing, "ip")))
                def_ptr(ing, "ipMode", json_string("VIP"));
        }
    }
}

static void default_pvc(json_t *pvc)
{
    json_t *spec = child(pvc, "spec"), *status = child(pvc, "status");
    def_ptr(spec, "volumeMode", json_string("Filesystem"));
    round_requirements(at(spec, "resources"));
    def_str(status, "phase", "Pending");
    round_resources(status, "capacity");
    round_resources(status, "allocatedResources");
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
    default_fields(spec, "io.k8s.api.core.v1.PersistentVolumeSpec", volume_sources,
                   sizeof volume_sources / sizeof volume_sources[0]);
    round_resources(spec, "capacity");
}

static void default_node(json_t *obj)
{
    json_t *status = at(obj, "status");
    round_resources(status, "capacity");
    round_resources(status, "allocatable");
    json_t *capacity = json_object_get(status, "capacity");
    if (json_is_object(capacity) && unset(json_object_get(status, "allocatable")))
        json_object_set_new(status, "allocatable", json_deep_copy(capacity));
}

/* A Container item's default limit is its max, its default request the
 * default limit, else its min. */
static void default_limit_range(json_t *obj)
{
    json_t *item;
    static const char *const lists[] = {"max", "min", "default", "defaultRequest",
                                        "maxLimitRequestRatio"};
    EACH(json_object_get(at(obj, "spec"), "limits"), i, item)
    {
        for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++)
            round_resources(item, lists[l]);
        if (strcmp(str(item, "type"), "Container") != 0)
            continue;
        copy_missing(item, "default", at(item, "max"));
        copy_missing(item, "defaultRequest", at(item, "default"));
        copy_missing(item, "defaultRequest", at(item, "min"));
    }
}

static void default_resource_quota(json_t *obj)
{
    round_resources(at(obj, "spec"), "hard");
    round_resources(at(obj, "status"), "hard");
    round_resources(at(obj, "status"), "used");
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

/* ---- the other groups ---------------------------------------------------- */

#define RBAC_GROUP "rbac.authorization.k8s.io"

/* SetDefaults_HorizontalPodAutoscaler(Behavior) of autoscaling/v2: a set
 * behavior is filled rule by rule from the controller's former built-in
 * ones (scale down keeps a nil stabilization window: the controller's
 * flag decides it); an unset behavior stays unset. */
static void default_hpa_v2(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    if (json_array_size(json_object_get(spec, "metrics")) == 0)
        json_object_set_new(spec, "metrics", json_pack("[o]", sk_convert_default_cpu_metric()));
    json_t *behavior = json_object_get(spec, "behavior");
    if (!json_is_object(behavior))
        return;
    json_t *up = child(behavior, "scaleUp"), *down = child(behavior, "scaleDown");
    def_ptr(up, "stabilizationWindowSeconds", json_integer(0));
    def_ptr(up, "selectPolicy", json_string("Max"));
    def_ptr(up, "policies",
            json_pack("[{s:s,s:i,s:i},{s:s,s:i,s:i}]", "type", "Pods", "value", 4, "periodSeconds",
                      15, "type", "Percent", "value", 100, "periodSeconds", 15));
    def_ptr(down, "selectPolicy", json_string("Max"));
    def_ptr(down, "policies",
            json_pack("[{s:s,s:i,s:i}]", "type", "Percent", "value", 100, "periodSeconds", 15));
}

/* Without policyTypes a policy is an ingress one, and an egress one too
 * when it has egress rules. */
static void default_network_policy(json_t *obj)
{
    json_t *spec = child(obj, "spec");
    if (json_array_size(json_object_get(spec, "policyTypes")) > 0)
        return;
    json_t *types = json_pack("[s]", "Ingress");
    if (json_array_size(json_object_get(spec, "egress")) > 0)
        json_array_append_new(types, json_string("Egress"));
    json_object_set_new(spec, "policyTypes", types);
}

/* SetDefaults_Subject: a User's or Group's apiGroup is RBAC's (a
 * ServiceAccount's stays the core group's ""). */
static void default_subjects(json_t *obj)
{
    json_t *s;
    EACH(json_object_get(obj, "subjects"), i, s)
    {
        const char *kind = str(s, "kind");
        if (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0)
            def_str(s, "apiGroup", RBAC_GROUP);
    }
}

/* The "if unset, this constant" defaulters, grouped by kube function; not
 * clang-formatted, so that each rule stays on one line. */
#define ADM "admissionregistration.k8s.io"
#define FC "flowcontrol.apiserver.k8s.io"
#define PLC "PriorityLevelConfiguration"
#define QUEUING "spec.limited.limitResponse.queuing"
/* clang-format off */
static const field_default fields[] = {
    /* admissionregistration/v1 SetDefaults_ValidatingWebhook, _MutatingWebhook,
     * _ServiceReference, _Rule */
#define WEBHOOK_FIELDS(kind)                                                                  \
    {ADM, kind, "webhooks", "failurePolicy", "\"Fail\""},                                     \
    {ADM, kind, "webhooks", "matchPolicy", "\"Equivalent\""},                                 \
    {ADM, kind, "webhooks", "namespaceSelector", "{}"},                                       \
    {ADM, kind, "webhooks", "objectSelector", "{}"},                                          \
    {ADM, kind, "webhooks", "timeoutSeconds", "10"},                                          \
    {ADM, kind, "webhooks.clientConfig.service", "port", "443"},                              \
    {ADM, kind, "webhooks.rules", "scope", "\"*\""}
    WEBHOOK_FIELDS("ValidatingWebhookConfiguration"),
    WEBHOOK_FIELDS("MutatingWebhookConfiguration"),
    {ADM, "MutatingWebhookConfiguration", "webhooks", "reinvocationPolicy", "\"Never\""},
#undef WEBHOOK_FIELDS
    /* SetDefaults_ValidatingAdmissionPolicySpec, _MatchResources, _Rule */
    {ADM, "ValidatingAdmissionPolicy", "spec", "failurePolicy", "\"Fail\""},
#define MATCH_FIELDS(kind, at)                                                                \
    {ADM, kind, at, "matchPolicy", "\"Equivalent\""},                                         \
    {ADM, kind, at, "namespaceSelector", "{}"},                                               \
    {ADM, kind, at, "objectSelector", "{}"},                                                  \
    {ADM, kind, at ".resourceRules", "scope", "\"*\""},                                       \
    {ADM, kind, at ".excludeResourceRules", "scope", "\"*\""}
    MATCH_FIELDS("ValidatingAdmissionPolicy", "spec.matchConstraints"),
    MATCH_FIELDS("ValidatingAdmissionPolicyBinding", "spec.matchResources"),
#undef MATCH_FIELDS
    /* apiregistration/v1 SetDefaults_ServiceReference */
    {"apiregistration.k8s.io", "APIService", "spec.service", "port", "443"},
    /* autoscaling/v1 and v2 SetDefaults_HorizontalPodAutoscaler */
    {"autoscaling", "HorizontalPodAutoscaler", "spec", "minReplicas", "1"},
    /* discovery/v1 SetDefaults_EndpointPort */
    {"discovery.k8s.io", "EndpointSlice", "ports", "name", "\"\""},
    {"discovery.k8s.io", "EndpointSlice", "ports", "protocol", "\"TCP\""},
    /* flowcontrol/v1 SetDefaults_FlowSchemaSpec, _ExemptPriorityLevelConfiguration,
     * _LimitedPriorityLevelConfiguration, _QueuingConfiguration */
    {FC, "FlowSchema", "spec", "matchingPrecedence", "1000"},
    {FC, PLC, "spec.exempt", "nominalConcurrencyShares", "0"},
    {FC, PLC, "spec.exempt", "lendablePercent", "0"},
    {FC, PLC, "spec.limited", "nominalConcurrencyShares", "30"},
    {FC, PLC, "spec.limited", "lendablePercent", "0"},
    {FC, PLC, QUEUING, "handSize", "8"},
    {FC, PLC, QUEUING, "queues", "64"},
    {FC, PLC, QUEUING, "queueLengthLimit", "50"},
    /* networking/v1 SetDefaults_NetworkPolicyPort, _IngressClass */
    {"networking.k8s.io", "NetworkPolicy", "spec.ingress.ports", "protocol", "\"TCP\""},
    {"networking.k8s.io", "NetworkPolicy", "spec.egress.ports", "protocol", "\"TCP\""},
    {"networking.k8s.io", "IngressClass", "spec.parameters", "scope", "\"Cluster\""},
    /* rbac/v1 SetDefaults_RoleBinding, _ClusterRoleBinding */
    {RBAC_GROUP, "RoleBinding", "roleRef", "apiGroup", "\"" RBAC_GROUP "\""},
    {RBAC_GROUP, "ClusterRoleBinding", "roleRef", "apiGroup", "\"" RBAC_GROUP "\""},
    /* scheduling/v1 SetDefaults_PriorityClass */
    {"scheduling.k8s.io", "PriorityClass", "", "preemptionPolicy", "\"PreemptLowerPriority\""},
    /* storage/v1 SetDefaults_StorageClass, _CSIDriver (SELinuxMountReadWriteOncePod is
     * on in 1.32, so seLinuxMount is defaulted too: validation then requires it) */
    {"storage.k8s.io", "StorageClass", "", "reclaimPolicy", "\"Delete\""},
    {"storage.k8s.io", "StorageClass", "", "volumeBindingMode", "\"Immediate\""},
    {"storage.k8s.io", "CSIDriver", "spec", "attachRequired", "true"},
    {"storage.k8s.io", "CSIDriver", "spec", "podInfoOnMount", "false"},
    {"storage.k8s.io", "CSIDriver", "spec", "storageCapacity", "false"},
    {"storage.k8s.io", "CSIDriver", "spec", "fsGroupPolicy", "\"ReadWriteOnceWithFSType\""},
    {"storage.k8s.io", "CSIDriver", "spec", "volumeLifecycleModes", "[\"Persistent\"]"},
    {"storage.k8s.io", "CSIDriver", "spec", "requiresRepublish", "false"},
    {"storage.k8s.io", "CSIDriver", "spec", "seLinuxMount", "false"},
};
/* clang-format on */
#undef ADM
#undef FC
#undef PLC
#undef QUEUING

/* ---- the table ---------------------------------------------------------- */

typedef struct {
    const char *group, *kind;
    const char *version; /* NULL: the rules hold in every served version */
    void (*fn)(json_t *obj);
    const char *template_at; /* where the kind keeps a PodTemplateSpec, if it does */
} kind_defaults;

static const kind_defaults table[] = {
    {"", "Pod", NULL, default_pod, NULL},
    {"", "PodTemplate", NULL, NULL, "template"},
    {"", "ReplicationController", NULL, default_replication_controller, "spec.template"},
    {"", "Service", NULL, default_service, NULL},
    {"", "Endpoints", NULL, default_endpoints, NULL},
    {"", "PersistentVolume", NULL, default_pv, NULL},
    {"", "PersistentVolumeClaim", NULL, default_pvc, NULL},
    {"", "Node", NULL, default_node, NULL},
    {"", "LimitRange", NULL, default_limit_range, NULL},
    {"", "ResourceQuota", NULL, default_resource_quota, NULL},
    {"apps", "Deployment", NULL, default_deployment, "spec.template"},
    {"apps", "ReplicaSet", NULL, default_replicaset, "spec.template"},
    {"apps", "StatefulSet", NULL, default_statefulset, "spec.template"},
    {"apps", "DaemonSet", NULL, default_daemonset, "spec.template"},
    {"batch", "Job", NULL, default_job, "spec.template"},
    {"batch", "CronJob", NULL, default_cronjob, "spec.jobTemplate.spec.template"},
    {"autoscaling", "HorizontalPodAutoscaler", "v2", default_hpa_v2, NULL},
    {"networking.k8s.io", "NetworkPolicy", NULL, default_network_policy, NULL},
    {RBAC_GROUP, "RoleBinding", NULL, default_subjects, NULL},
    {RBAC_GROUP, "ClusterRoleBinding", NULL, default_subjects, NULL},
};

static sk_err apply(const sk_resource *r, json_t *obj, int create, char **msg)
{
    if (r->schema)
        default_markers(r->schema, obj);
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
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(fields[i].kind, r->kind) == 0 && strcmp(fields[i].group, r->group) == 0)
            walk(obj, r->schema, fields[i].at, default_field, &fields[i]);
    }
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].kind, r->kind) != 0 || strcmp(table[i].group, r->group) != 0 ||
            (table[i].version && strcmp(table[i].version, r->version) != 0))
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
