/*
 * registry.h - the resources sqlkube serves: every built-in resource of
 * Kubernetes 1.32 that a default kube-apiserver enables.
 *
 * One entry per group/version/resource, built once (thread-safe, first
 * use) from the generated API description (kube/schema.h): everything
 * routing, discovery, OpenAPI, decoding and validation need to know about a
 * kind. Entries are immutable rows that live for the process; adding a kind
 * is an entry in the description, not code.
 */
#ifndef SK_KUBE_REGISTRY_H
#define SK_KUBE_REGISTRY_H

#include "kube/schema.h"

#include <stddef.h>

/* Verbs as a bit set, in the alphabetical order discovery lists them. */
enum {
    SK_VERB_CREATE = 1u << 0,
    SK_VERB_DELETE = 1u << 1,
    SK_VERB_DELETECOLLECTION = 1u << 2,
    SK_VERB_GET = 1u << 3,
    SK_VERB_LIST = 1u << 4,
    SK_VERB_PATCH = 1u << 5,
    SK_VERB_UPDATE = 1u << 6,
    SK_VERB_WATCH = 1u << 7,
};
#define SK_VERB_COUNT 8

/* The verb's discovery name ("deletecollection") for one SK_VERB_* bit. */
const char *sk_registry_verb_name(unsigned verb);

typedef struct sk_subresource {
    const char *name;  /* "status", "scale", "log" */
    unsigned verbs;    /* SK_VERB_* */
    const char *group; /* the kind it takes and returns (Scale is */
    const char *version; /* autoscaling/v1); the parent's for status */
    const char *kind;
    const sk_schema *schema; /* that kind's type; NULL if it has none (connect options) */
} sk_subresource;

typedef struct sk_resource {
    const char *group;       /* "" for the core group */
    const char *version;     /* "v1" */
    const char *resource;    /* plural, lower case: "configmaps" */
    const char *api_version; /* "v1" or "apps/v1" */
    const char *kind;        /* "ConfigMap" */
    const char *list_kind;   /* "ConfigMapList"; NULL if it cannot be listed */
    const char *singular;    /* "configmap" */
    const char *const *short_names;     /* NULL-terminated */
    const char *const *categories;      /* NULL-terminated */
    const char *const *field_selectors; /* beyond metadata.name/namespace; NULL-terminated */
    int namespaced;
    unsigned verbs; /* SK_VERB_* */
    const sk_subresource *subresources;
    size_t n_subresources;
    const sk_schema *schema;      /* the kind's type */
    const sk_schema *list_schema; /* NULL if no list kind */
    /*
     * Where objects live. Resources that share storage (core and
     * events.k8s.io Events; autoscaling/v1 and v2 HPAs) name the resource
     * whose version is stored (stored_as; itself for most) and one storage
     * key: the group-qualified resource, "pods", "deployments.apps".
     */
    const struct sk_resource *stored_as;
    const char *storage;
} sk_resource;

/* The resource served at group/version/resource, or NULL. O(1). */
const sk_resource *sk_registry_find(const char *group, const char *version, const char *resource);
/* The resource of group/version/kind, or NULL. O(1). */
const sk_resource *sk_registry_find_kind(const char *group, const char *version, const char *kind);
/* The subresource of r named name, or NULL. */
const sk_subresource *sk_registry_subresource(const sk_resource *r, const char *name);
/* All resources, sorted by group (core first), version, resource;
 * *n_out receives the count. */
const sk_resource *sk_registry_all(size_t *n_out);
/* The group's preferred version ("v1"; "v2" for autoscaling), NULL if the
 * group is not served. */
const char *sk_registry_preferred_version(const char *group);
/* The distinct storage keys, each once (NULL-terminated, process lifetime). */
const char *const *sk_registry_storages(size_t *n_out);

#endif
