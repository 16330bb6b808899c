/*
 * discovery.h - the legacy (non-aggregated) Kubernetes discovery documents:
 * /version, /api, /apis, /apis/{group}, /api/v1 and /apis/{group}/{version}.
 *
 * Everything is derived from the registry table and built once (first use,
 * thread-safe). The *_text variants hand out the cached serialized bytes so
 * the HTTP layer can answer without re-serializing; the json_t variants parse
 * a private copy for callers that want to inspect or modify it.
 *
 * Serve every document with "Content-Type: application/json" and no
 * g=/v=/as= parameters: client-go asks for aggregated discovery
 * (apidiscovery.k8s.io/v2) first, but decodes the body by the response
 * content type and falls back to these legacy shapes when it is plain JSON.
 */
#ifndef SK_KUBE_DISCOVERY_H
#define SK_KUBE_DISCOVERY_H

#include "kube/registry.h"

#include <jansson.h>
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

/* The verbs r supports (kube-apiserver parity: namespaces lack deletecollection). */
unsigned sk_discovery_verbs(const sk_resource *r);

/* A group/version served by at least one registry resource. */
typedef struct sk_discovery_gv {
    const char *group;       /* "" for core */
    const char *version;     /* "v1" */
    const char *api_version; /* "v1" or "coordination.k8s.io/v1" */
} sk_discovery_gv;

/* All served group/versions in registry order (borrowed, process lifetime). */
const sk_discovery_gv *sk_discovery_gvs(size_t *n_out);

/*
 * The documents. json_t variants return a NEW reference (caller decrefs);
 * _text variants return borrowed NUL-terminated bytes valid for the process
 * lifetime and store their length in *len (len may be NULL). Both return NULL
 * for an unknown group or group/version.
 */
json_t *sk_discovery_version(void);            /* GET /version: version.Info */
json_t *sk_discovery_core_versions(void);      /* GET /api: APIVersions */
json_t *sk_discovery_groups(void);             /* GET /apis: APIGroupList (non-core groups) */
json_t *sk_discovery_group(const char *group); /* GET /apis/{group}: APIGroup */
json_t *sk_discovery_resources(const char *group, const char *version); /* APIResourceList */

const char *sk_discovery_version_text(size_t *len);
const char *sk_discovery_core_versions_text(size_t *len);
const char *sk_discovery_groups_text(size_t *len);
const char *sk_discovery_group_text(const char *group, size_t *len);
const char *sk_discovery_resources_text(const char *group, const char *version, size_t *len);

#endif
