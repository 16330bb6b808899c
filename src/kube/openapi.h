/*
 * openapi.h - the OpenAPI documents kubectl and clients read: GET
 * /openapi/v3 (the root index), GET /openapi/v3/{gv_path} (one document per
 * served group/version, e.g. "api/v1", "apis/apps/v1") and GET /openapi/v2
 * (one swagger 2.0 document for everything).
 *
 * kubectl uses them to detect server-side field validation (a PATCH
 * operation tagged with the kind's x-kubernetes-group-version-kind and an
 * inline "fieldValidation" query parameter), for client-side apply's
 * strategic-merge metadata, and for `kubectl explain`.
 *
 * Documents are generated from the registry and the generated type table,
 * built once (thread-safe) and immutable afterwards. Serve them as
 * "Content-Type: application/json" with ETag "\"<hash>\""; kube-apiserver
 * also answers a ?hash= equal to the current hash with
 * "Cache-Control: public, immutable" and a stale one with a 301 to the URL
 * listed in the root.
 */
#ifndef SK_KUBE_OPENAPI_H
#define SK_KUBE_OPENAPI_H

#include "kube/registry.h"

#include <jansson.h>
#include <stddef.h>

/* Length of a document hash: upper-case hex SHA-512, as kube-openapi's ETag. */
#define SK_OPENAPI_HASH_LEN 128

/* NEW references (caller decrefs); the doc is NULL for an unknown gv_path. */
json_t *sk_openapi_v3_root(void);
json_t *sk_openapi_v3_doc(const char *gv_path);

/*
 * Cached serialized bytes: borrowed, NUL-terminated, valid for the process
 * lifetime; *len (may be NULL) receives the length. NULL if gv_path unknown.
 * gv_path has no leading slash and no query: exactly a key of the root's
 * "paths" object.
 */
const char *sk_openapi_v3_root_text(size_t *len);
const char *sk_openapi_v3_doc_text(const char *gv_path, size_t *len);

/* The hash of the document's bytes (borrowed), or NULL if gv_path unknown. */
const char *sk_openapi_v3_doc_hash(const char *gv_path);

/* Writes the hash of data into out (NUL-terminated). */
void sk_openapi_hash(const void *data, size_t len, char out[SK_OPENAPI_HASH_LEN + 1]);

/* The v2 document: cached bytes (borrowed, process lifetime) and its hash. */
const char *sk_openapi_v2_text(size_t *len);
const char *sk_openapi_v2_hash(void);
/* A NEW parsed copy of the v2 document. */
json_t *sk_openapi_v2(void);

#endif
