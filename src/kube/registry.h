/*
 * registry.h - the static table of resources sqlkube serves.
 *
 * One entry per resource: everything discovery, OpenAPI, routing and
 * validation need to know about a kind. Entries live for the process.
 */
#ifndef SK_KUBE_REGISTRY_H
#define SK_KUBE_REGISTRY_H

#include <stddef.h>

typedef struct sk_resource {
    const char *group;    /* "" for the core group */
    const char *version;  /* "v1" */
    const char *resource; /* plural, lower case: "configmaps" */
    const char *kind;     /* "ConfigMap" */
    const char *list_kind;
    const char *singular;       /* "configmap" */
    const char *short_names[4]; /* NULL-terminated */
    int namespaced;             /* 1 if namespaced */
    const char
        *field_selectors[6]; /* supported field selector keys beyond metadata.name/namespace */
} sk_resource;

/* The resource served at group/version/resource, or NULL. */
const sk_resource *sk_registry_find(const char *group, const char *version, const char *resource);
/* The resource for group + kind (e.g. "", "Namespace"), or NULL. */
const sk_resource *sk_registry_find_kind(const char *group, const char *kind);
/* All resources; *n_out receives the count. */
const sk_resource *sk_registry_all(size_t *n_out);
/* "v1" or "coordination.k8s.io/v1" (static storage per resource). */
const char *sk_registry_api_version(const sk_resource *r);

#endif
