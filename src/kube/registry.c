/*
 * registry.c - the resources sqlkube serves, matching Kubernetes 1.32
 * discovery (names, kinds, short names, scope). Field selectors listed here
 * are the ones kube-apiserver accepts for that resource beyond
 * metadata.name and metadata.namespace.
 */
#include "kube/registry.h"

#include <string.h>

static const sk_resource resources[] = {
    {"",
     "v1",
     "namespaces",
     "Namespace",
     "NamespaceList",
     "namespace",
     {"ns", NULL},
     0,
     {"status.phase", NULL}},
    {"", "v1", "configmaps", "ConfigMap", "ConfigMapList", "configmap", {"cm", NULL}, 1, {NULL}},
    {"", "v1", "secrets", "Secret", "SecretList", "secret", {NULL}, 1, {"type", NULL}},
    {"",
     "v1",
     "serviceaccounts",
     "ServiceAccount",
     "ServiceAccountList",
     "serviceaccount",
     {"sa", NULL},
     1,
     {NULL}},
    {"",
     "v1",
     "events",
     "Event",
     "EventList",
     "event",
     {"ev", NULL},
     1,
     {"involvedObject.kind", "involvedObject.name", "involvedObject.namespace", "reason", "type",
      NULL}},
    {"coordination.k8s.io", "v1", "leases", "Lease", "LeaseList", "lease", {NULL}, 1, {NULL}},
};

#define N_RESOURCES (sizeof resources / sizeof resources[0])

static const char *api_versions[N_RESOURCES] = {"v1", "v1", "v1",
                                                "v1", "v1", "coordination.k8s.io/v1"};

const sk_resource *sk_registry_find(const char *group, const char *version, const char *resource)
{
    for (size_t i = 0; i < N_RESOURCES; i++) {
        const sk_resource *r = &resources[i];
        if (strcmp(r->group, group) == 0 && strcmp(r->version, version) == 0 &&
            strcmp(r->resource, resource) == 0)
            return r;
    }
    return NULL;
}

const sk_resource *sk_registry_find_kind(const char *group, const char *kind)
{
    for (size_t i = 0; i < N_RESOURCES; i++)
        if (strcmp(resources[i].group, group) == 0 && strcmp(resources[i].kind, kind) == 0)
            return &resources[i];
    return NULL;
}

const sk_resource *sk_registry_all(size_t *n_out)
{
    *n_out = N_RESOURCES;
    return resources;
}

const char *sk_registry_api_version(const sk_resource *r)
{
    return api_versions[r - resources];
}
