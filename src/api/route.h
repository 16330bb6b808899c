/*
 * route.h - which endpoint a request names: the pure mapping from method
 * and decoded path segments to a route, following kube-apiserver's URL
 * layout:
 *   /api/v1[/namespaces/{ns}]/{resource}[/{name}]
 *   /apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
 * plus discovery, OpenAPI, health, metrics and debug endpoints. A
 * namespaced resource without /namespaces/{ns} is the all-namespaces list.
 *
 * No I/O and no allocation: segments are borrowed, so any input (fuzzed by
 * tests/fuzz/fuzz_route.c) resolves to a route, SK_ROUTE_NOT_FOUND or
 * SK_ROUTE_NOT_ALLOWED, never to a crash.
 */
#ifndef SK_API_ROUTE_H
#define SK_API_ROUTE_H

#include "api/metrics.h"
#include "kube/registry.h"

#include <stddef.h>

typedef enum {
    SK_ROUTE_NOT_FOUND,   /* 404 */
    SK_ROUTE_NOT_ALLOWED, /* 405: a known path, another method */
    SK_ROUTE_HEALTH,      /* /healthz, /livez, /readyz: `doc` names which */
    SK_ROUTE_METRICS,
    SK_ROUTE_CONSISTENCY, /* /debug/consistency */
    /* POST /apis/authentication.k8s.io/v1/selfsubjectreviews: answered from
     * the request's user, never stored (kubectl auth whoami) */
    SK_ROUTE_SELF_SUBJECT_REVIEW,
    /* POST /apis/authentication.k8s.io/v1/tokenreviews: what a token
     * proves, never stored. For both, `doc` is the resource. */
    SK_ROUTE_TOKEN_REVIEW,
    SK_ROUTE_VERSION,
    SK_ROUTE_OPENAPI_V2,
    SK_ROUTE_OPENAPI_V3_ROOT,
    SK_ROUTE_OPENAPI_V3_DOC,  /* `doc` is the group/version path, "api/v1" */
    SK_ROUTE_CORE_VERSIONS,   /* /api */
    SK_ROUTE_GROUPS,          /* /apis */
    SK_ROUTE_GROUP,           /* /apis/{group} */
    SK_ROUTE_GROUP_RESOURCES, /* /api/v1, /apis/{group}/{version} */
    SK_ROUTE_RESOURCE,        /* a verb on a resource: res, ns, name, verb */
    /* POST of an authorization.k8s.io/v1 review (create-only, never stored,
     * so not in the registry): `doc` is its resource, ns the namespace of a
     * localsubjectaccessreview */
    SK_ROUTE_REVIEW,
} sk_route_kind;

#define SK_ROUTE_DOC_MAX 256

typedef struct sk_route {
    sk_route_kind kind;
    char doc[SK_ROUTE_DOC_MAX];
    const char *group, *version; /* GROUP, GROUP_RESOURCES (borrowed from the segments) */
    const sk_resource *res;
    const char *ns;   /* "" when none (cluster-scoped, all namespaces) */
    const char *name; /* NULL for a collection */
    /* The subresource named after the item ("status", "scale"), NULL for
     * the object itself; the verb is checked against its verbs. */
    const sk_subresource *sub;
    int all_namespaces;
    sk_req_verb verb;
} sk_route;

/* Resolves method and segs (n decoded segments, borrowed: they must outlive
 * *out) into *out. watch is the request's ?watch= as a boolean. */
void sk_route_resolve(const char *method, const char *const *segs, size_t n, int watch,
                      sk_route *out);

#endif
