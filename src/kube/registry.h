/*
 * registry.h - the resources sqlkube serves: every built-in resource of
 * Kubernetes 1.32 that a default kube-apiserver enables.
 *
 * One entry per group/version/resource: everything routing, discovery,
 * OpenAPI, decoding and validation need to know about a kind. The built-in
 * kinds are built once (thread-safe, first use) from the generated API
 * description (kube/schema.h); adding one is an entry in the description,
 * not code. Custom resources are added and removed at run time from their
 * CustomResourceDefinitions (sk_registry_install / sk_registry_remove).
 *
 * Entries are immutable and are never freed before the process ends, so
 * a request may keep the pointer a lookup gave it for as long as it runs
 * (a watch, for hours), on any thread, with no reference to drop: readers
 * take no lock and pay no atomic increment per request. The price is
 * memory: a CRD change that alters what is served retires its old entries
 * (and the lookup tables) instead of freeing them. That is bounded by the
 * number of distinct served forms of CRDs over the process's life (an
 * install identical to the current one is a no-op), a few KiB each; CRDs
 * change when operators are upgraded, not per request. Refcounts would
 * free them, but every holder (calls, watches, controllers, discovery)
 * would have to release them on every path.
 */
#ifndef SK_KUBE_REGISTRY_H
#define SK_KUBE_REGISTRY_H

#include "kube/schema.h"

#include <stddef.h>

/* The storage key of CustomResourceDefinitions, whose writes the CRD
 * controller (ctl/crd.h) and the API treat apart. */
#define SK_REGISTRY_CRD_STORAGE "customresourcedefinitions.apiextensions.k8s.io"

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

/* What a custom resource's entry knows of its CustomResourceDefinition.
 * Every pointer is into the entry's own immutable copy of the CRD. */
typedef struct sk_custom {
    const json_t *crd;            /* the CRD as installed: metadata, and the spec's group,
                                   * names, scope, versions and conversion */
    const json_t *version;        /* its spec.versions[] item for this entry */
    const json_t *schema;         /* that version's openAPIV3Schema; NULL if none */
    const json_t *columns;        /* its additionalPrinterColumns (array); NULL if none */
    const char *spec_replicas;    /* the scale subresource's paths, ".spec.replicas"; */
    const char *status_replicas;  /* NULL without one */
    const char *label_selector;   /* NULL if unset */
    int terminating;              /* the CRD is being deleted: no new objects */
} sk_custom;

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
    /* DELETE answers the removed object, not a Status Success naming it
     * (kube's ReturnDeletedObject: pods, services, namespaces...); 0 for
     * custom resources. An object only marked for deletion is answered
     * either way. */
    int delete_returns_object;
    unsigned verbs; /* SK_VERB_* */
    const sk_subresource *subresources;
    size_t n_subresources;
    const sk_schema *schema;      /* the kind's type; NULL for custom resources */
    const sk_schema *list_schema; /* NULL if no list kind */
    /*
     * Where objects live. Resources that share storage (core and
     * events.k8s.io Events; autoscaling/v1 and v2 HPAs) name the resource
     * whose version is stored (stored_as; itself for most) and one storage
     * key: the group-qualified resource, "pods", "deployments.apps".
     */
    const struct sk_resource *stored_as;
    const char *storage;
    const sk_custom *custom; /* NULL for built-in kinds (schema is then set) */
} sk_resource;

/* The resource served at group/version/resource, or NULL. O(1). */
const sk_resource *sk_registry_find(const char *group, const char *version, const char *resource);
/* The resource of group/version/kind, or NULL. O(1). */
const sk_resource *sk_registry_find_kind(const char *group, const char *version, const char *kind);
/* The subresource of r named name, or NULL. */
const sk_subresource *sk_registry_subresource(const sk_resource *r, const char *name);
/* A new object of r that is only its kind and apiVersion, plus metadata
 * name and namespace when name is not NULL: what the tombstone of a
 * deletion carries, and what stands for a stored object that does not
 * parse so that it can still be deleted. */
json_t *sk_registry_stub(const sk_resource *r, const char *ns, const char *name);
/* All resources served now: the built-in ones in discovery order (groups by
 * priority, preferred version first), then custom resources by group,
 * version (kube's version priority) and resource; *n_out receives the
 * count. The array is immutable and lives for the process, like its rows;
 * a later install or remove makes a new one. */
const sk_resource *const *sk_registry_all(size_t *n_out);
/* Bumped by every change of what is served (for caches of documents built
 * from it: discovery, OpenAPI). */
unsigned long sk_registry_generation(void);
/* The group's preferred version ("v1"; "v2" for autoscaling), NULL if the
 * group is not served. */
const char *sk_registry_preferred_version(const char *group);
/* The distinct storage keys of the built-in kinds, each once
 * (NULL-terminated, process lifetime). */
const char *const *sk_registry_storages(size_t *n_out);

/*
 * Serves the versions of crd (borrowed; a CustomResourceDefinition whose
 * names were accepted) marked served, as custom resources stored under
 * "<plural>.<group>", in place of what an earlier install of the same CRD
 * (by metadata.name) served. A no-op if that served the same. A version
 * whose group/version/resource or kind a built-in kind already has is not
 * served (built-in kinds win, as in kube-apiserver's handler chain).
 * Thread-safe; readers see the old set or the new one.
 */
void sk_registry_install(const json_t *crd);
/* Stops serving what the CRD named crd_name installed; a no-op if nothing. */
void sk_registry_remove(const char *crd_name);
/* Kube's version priority order (CompareKubeAwareVersionStrings): < 0 if
 * a sorts before b: GA before beta before alpha, higher numbers first,
 * other strings after those, alphabetically. */
int sk_registry_version_cmp(const char *a, const char *b);

#endif
