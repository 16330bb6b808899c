/*
 * discovery.h - the Kubernetes discovery documents: /version, the legacy
 * /api, /apis, /apis/{group}, /api/v1 and /apis/{group}/{version}, and the
 * aggregated /api and /apis (apidiscovery.k8s.io).
 *
 * Everything is derived from the registry table and built once (first use,
 * thread-safe). The *_text variants hand out the cached serialized bytes so
 * the HTTP layer can answer without re-serializing; the json_t variants parse
 * a private copy for callers that want to inspect or modify it.
 *
 * Serve the legacy documents with "Content-Type: application/json" and no
 * g=/v=/as= parameters: client-go decodes a discovery body by the response
 * content type.
 */
#ifndef SK_KUBE_DISCOVERY_H
#define SK_KUBE_DISCOVERY_H

#include "kube/registry.h"

#include <jansson.h>
#include <stddef.h>

/* A group/version served by at least one registry resource. */
typedef struct sk_discovery_gv {
    const char *group;       /* "" for core */
    const char *version;     /* "v1" */
    const char *api_version; /* "v1" or "coordination.k8s.io/v1" */
} sk_discovery_gv;

/* All served group/versions in registry order (borrowed, process lifetime). */
const sk_discovery_gv *sk_discovery_gvs(size_t *n_out);

/*
 * The legacy documents. json_t variants return a NEW reference (caller decrefs);
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

/*
 * Aggregated discovery (KEP-3352), which kubectl 1.32 asks for first: GET
 * /api (core) or /apis (every other group) with an Accept alternative
 * "application/json;g=apidiscovery.k8s.io;v=<version>;as=APIGroupDiscoveryList".
 * sk_discovery_aggregated_version picks what to serve from an Accept header:
 * "v2" or "v2beta1" (the first the client lists), NULL for the legacy
 * documents. Serve the bytes with the Content-Type the media names.
 */
const char *sk_discovery_aggregated_version(const char *accept);
json_t *sk_discovery_aggregated(int core, const char *version);
const char *sk_discovery_aggregated_text(int core, const char *version, size_t *len);
/* "application/json;g=apidiscovery.k8s.io;v=<version>;as=APIGroupDiscoveryList" (static). */
const char *sk_discovery_aggregated_media(const char *version);

#endif
