/*
 * status_rules.c - see status_rules.h. The per-kind facts (which kinds keep
 * a generation, which keep a client's status on create, which status
 * updates may not touch labels) are small tables keyed by storage key, so a
 * new kind needs a row, not code.
 */
#include "kube/status_rules.h"

#include <string.h>

static int in(const char *key, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(key, *set) == 0)
            return 1;
    return 0;
}

/* Kinds whose strategies set generation 1 on create and bump it on spec
 * changes (Kubernetes 1.32 pkg/registry). The core kinds other than
 * ReplicationController carry no generation. */
static const char *const generation_kinds[] = {
    "deployments.apps",
    "replicasets.apps",
    "statefulsets.apps",
    "daemonsets.apps",
    "jobs.batch",
    "cronjobs.batch",
    "horizontalpodautoscalers.autoscaling",
    "poddisruptionbudgets.policy",
    "replicationcontrollers",
    "ingresses.networking.k8s.io",
    "networkpolicies.networking.k8s.io",
    "flowschemas.flowcontrol.apiserver.k8s.io",
    "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
    "validatingadmissionpolicies.admissionregistration.k8s.io",
    "validatingadmissionpolicybindings.admissionregistration.k8s.io",
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "customresourcedefinitions.apiextensions.k8s.io",
    NULL,
};

/* Status updates of these kinds keep the stored labels (their controllers
 * select by them; a status writer must not move an object between
 * selectors). */
static const char *const status_keeps_labels[] = {
    "deployments.apps", "replicasets.apps", "statefulsets.apps", "daemonsets.apps", NULL,
};

int sk_status_rules_has_status(const sk_resource *r)
{
    return sk_registry_subresource(r, "status") != NULL;
}

int sk_status_rules_tracks_generation(const sk_resource *r)
{
    return r->custom || in(r->storage, generation_kinds);
}

int sk_status_rules_is_status_like(const char *sub)
{
    static const char *const subs[] = {"status", "finalize", "approval", "ephemeralcontainers",
                                       NULL};
    return in(sub, subs);
}

static int is_core(const sk_resource *r, const char *resource)
{
    return !*r->group && strcmp(r->resource, resource) == 0;
}

/* The cpu/memory quantity of a resource list, NULL if absent or zero. */
static const char *quantity(const json_t *list, const char *name)
{
    const char *q = json_string_value(json_object_get(list, name));
    return q && *q && strcmp(q, "0") != 0 ? q : NULL;
}

/* Guaranteed: every container limits cpu and memory and requests (when
 * given) equal them; BestEffort: nothing requested or limited; else
 * Burstable. Quantities are compared as written (kube compares values:
 * "1" and "1000m" differ here). */
const char *sk_status_rules_pod_qos(const json_t *spec)
{
    static const char *const lists[] = {"initContainers", "containers"};
    static const char *const names[] = {"cpu", "memory"};
    int any = 0, guaranteed = 1;
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            json_t *res = json_object_get(c, "resources");
            json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
            for (size_t k = 0; k < 2; k++) {
                const char *rq = quantity(req, names[k]), *lm = quantity(lim, names[k]);
                if (rq || lm)
                    any = 1;
                if (!lm || (rq && strcmp(rq, lm) != 0))
                    guaranteed = 0;
            }
        }
    }
    if (!any)
        return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

/* The JSON Go's encoding/json writes for the zero value of s: the fields
 * that are not pointers and not omitempty (which never omits a struct), as
 * zero numbers, strings, booleans and structs (a DaemonSet's counts, a
 * Service's loadBalancer). Nil slices, maps and times (null) are left out. New reference, or NULL
 * when the zero value writes nothing. */
static json_t *zero_of(const sk_schema *s, int depth)
{
    switch (sk_schema_kind_of(s)) {
    case SK_SCHEMA_STRING:
        return json_string("");
    case SK_SCHEMA_BOOL:
        return json_false();
    case SK_SCHEMA_INT32:
    case SK_SCHEMA_INT64:
    case SK_SCHEMA_DOUBLE:
        return json_integer(0);
    case SK_SCHEMA_STRUCT:
        break;
    default:
        return NULL;
    }
    json_t *obj = json_object();
    for (size_t i = 0; depth < 8 && i < sk_schema_field_count(s); i++) {
        const sk_schema_field *f = sk_schema_field_at(s, i);
        const char *name = sk_schema_field_name(f);
        unsigned flags = sk_schema_field_flags(f);
        int is_struct = sk_schema_kind_of(sk_schema_field_type(f)) == SK_SCHEMA_STRUCT;
        if (!name || (flags & SK_FIELD_POINTER) || (!is_struct && (flags & SK_FIELD_OMITEMPTY)))
            continue;
        json_t *v = zero_of(sk_schema_field_type(f), depth + 1);
        if (v)
            json_object_set_new(obj, name, v);
    }
    return obj;
}

void sk_status_rules_on_create(const sk_resource *r, json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (sk_status_rules_tracks_generation(r))
        json_object_set_new(meta, "generation", json_integer(1));
    if (!sk_status_rules_has_status(r) || is_core(r, "nodes"))
        return;
    if (r->custom) { /* a custom resource starts with no status at all */
        json_object_del(obj, "status");
        return;
    }
    const sk_schema_field *sf = r->schema ? sk_schema_field_find(r->schema, "status", 6) : NULL;
    json_t *status = sf ? zero_of(sk_schema_field_type(sf), 0) : NULL;
    if (!json_is_object(status)) {
        json_decref(status);
        status = json_object();
    }
    if (is_core(r, "pods")) {
        json_object_set_new(status, "phase", json_string("Pending"));
        json_object_set_new(status, "qosClass",
                            json_string(sk_status_rules_pod_qos(json_object_get(obj, "spec"))));
    } else if (is_core(r, "namespaces")) {
        json_object_set_new(status, "phase", json_string("Active"));
    } else if (is_core(r, "persistentvolumes") || is_core(r, "persistentvolumeclaims")) {
        json_object_set_new(status, "phase", json_string("Pending"));
    }
    json_object_set_new(obj, "status", status);
    if (strcmp(r->storage, "customresourcedefinitions.apiextensions.k8s.io") == 0)
        sk_status_rules_add_stored_version(obj);
}

void sk_status_rules_add_stored_version(json_t *crd)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(crd, "spec"), "versions"), i, v)
    {
        if (!json_is_true(json_object_get(v, "storage")))
            continue;
        json_t *name = json_object_get(v, "name");
        json_t *status = json_object_get(crd, "status");
        if (!json_is_object(status)) {
            status = json_object();
            json_object_set_new(crd, "status", status);
        }
        json_t *stored = json_object_get(status, "storedVersions");
        if (!json_is_array(stored)) {
            stored = json_array();
            json_object_set_new(status, "storedVersions", stored);
        }
        size_t k;
        json_t *s;
        int found = 0;
        json_array_foreach(stored, k, s) found |= json_equal(s, name);
        if (!found && json_is_string(name))
            json_array_append(stored, name);
        break;
    }
}

/* Sets obj's member key to old's (removed if old has none). */
static void carry(json_t *obj, const json_t *old, const char *key)
{
    json_t *v = json_object_get(old, key);
    if (v)
        json_object_set_new(obj, key, json_deep_copy(v));
    else
        json_object_del(obj, key);
}

void sk_status_rules_keep_status(const sk_resource *r, json_t *obj, const json_t *old)
{
    if (!sk_status_rules_has_status(r))
        return;
    carry(obj, old, "status");
    /* A namespace's finalizers are changed through /finalize only. */
    if (is_core(r, "namespaces")) {
        json_t *spec = json_object_get(obj, "spec");
        if (!json_is_object(spec)) {
            spec = json_object();
            json_object_set_new(obj, "spec", spec);
        }
        carry(spec, json_object_get(old, "spec"), "finalizers");
        if (json_object_size(spec) == 0 && !json_object_get(old, "spec"))
            json_object_del(obj, "spec");
    }
}

/* json_equal, with two absent values equal. */
static int same(const json_t *a, const json_t *b)
{
    return a == b || json_equal(a, b);
}

/* Non-zero if a and b differ in a top-level field other than apiVersion,
 * kind, metadata and (with_status 0) status. */
static int spec_changed(const json_t *a, const json_t *b, int with_status)
{
    static const char *const skip_all[] = {"apiVersion", "kind", "metadata", "status", NULL};
    const char *const *skip = skip_all;
    static const char *const skip_meta[] = {"apiVersion", "kind", "metadata", NULL};
    if (with_status)
        skip = skip_meta;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)a, key, v)
    {
        if (!in(key, skip) && !same(v, json_object_get(b, key)))
            return 1;
    }
    json_object_foreach((json_t *)b, key, v)
    {
        if (!in(key, skip) && !json_object_get(a, key))
            return 1;
    }
    return 0;
}

void sk_status_rules_bump_generation(const sk_resource *r, json_t *obj, const json_t *old)
{
    if (!sk_status_rules_tracks_generation(r))
        return;
    json_t *meta = json_object_get(obj, "metadata");
    const json_t *old_meta = json_object_get(old, "metadata");
    json_int_t gen = json_integer_value(json_object_get(old_meta, "generation"));
    /* A custom resource without a status subresource: its status is spec. */
    int changed = spec_changed(obj, old, r->custom && !sk_status_rules_has_status(r));
    /* Deployments copy their annotations to their ReplicaSets: a change
     * there is a new generation too. */
    if (strcmp(r->storage, "deployments.apps") == 0 &&
        !same(json_object_get(meta, "annotations"), json_object_get(old_meta, "annotations")))
        changed = 1;
    if (changed)
        json_object_set_new(meta, "generation", json_integer(gen + 1));
}

json_t *sk_status_rules_merge(const sk_resource *r, const char *sub, const json_t *sent,
                              const json_t *old)
{
    json_t *obj = json_deep_copy(old);
    json_t *meta = json_deep_copy(json_object_get(sent, "metadata"));
    const json_t *old_meta = json_object_get(old, "metadata");
    if (!json_is_object(meta)) {
        json_decref(meta);
        meta = json_object();
    }
    if (strcmp(sub, "status") == 0) {
        carry(obj, sent, "status");
        if (in(r->storage, status_keeps_labels))
            carry(meta, old_meta, "labels");
        if (strcmp(r->storage, "certificatesigningrequests.certificates.k8s.io") == 0 &&
            json_is_object(json_object_get(obj, "status")))
            /* approval is the approval subresource's */
            carry(json_object_get(obj, "status"), json_object_get(old, "status"), "conditions");
        if (is_core(r, "pods")) {
            carry(meta, old_meta, "ownerReferences");
            /* The QoS class is set once, at create: a status without one
             * keeps it. */
            json_t *st = json_object_get(obj, "status");
            json_t *qos = json_object_get(json_object_get(old, "status"), "qosClass");
            const char *given = json_string_value(json_object_get(st, "qosClass"));
            if (json_is_object(st) && qos && (!given || !*given))
                json_object_set(st, "qosClass", qos);
        }
    } else if (strcmp(sub, "finalize") == 0) {
        /* spec (the finalizers) from the client, status stored */
        carry(obj, sent, "spec");
    } else if (strcmp(sub, "approval") == 0) {
        /* the conditions (Approved, Denied) from the client; the rest of
         * the status stays the signer's */
        json_t *status = json_object_get(obj, "status");
        if (!json_is_object(status)) {
            status = json_object();
            json_object_set_new(obj, "status", status);
        }
        carry(status, json_object_get(sent, "status"), "conditions");
    } else if (strcmp(sub, "ephemeralcontainers") == 0) {
        json_t *spec = json_object_get(obj, "spec");
        if (json_is_object(spec))
            carry(spec, json_object_get(sent, "spec"), "ephemeralContainers");
    }
    json_object_set_new(obj, "metadata", meta);
    return obj;
}
