/*
 * openapi.h - the OpenAPI v3 documents kubectl needs: GET /openapi/v3 (the
 * root index) and GET /openapi/v3/{gv_path} (one document per served
 * group/version, e.g. "api/v1", "apis/coordination.k8s.io/v1").
 *
 * They exist for two kubectl behaviours: (a) detecting server-side field
 * validation (a PATCH operation tagged with the kind's
 * x-kubernetes-group-version-kind and an inline "fieldValidation" query
 * parameter makes kubectl send fieldValidation=Strict and skip client-side
 * validation, and with it the /openapi/v2 download), and (b) client-side
 * apply's strategic-merge patch metadata (x-kubernetes-patch-strategy /
 * -merge-key on component schemas tagged with the kind's GVK).
 *
 * Documents are generated from the registry plus a per-kind property table,
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

/*
 * Schema access for server-side checks (field validation). Results are
 * borrowed from the cached documents: immutable and valid for the process
 * lifetime, so any thread may read them, but never incref/decref or modify
 * them (jansson values are not safe to share otherwise).
 */
/* r's kind schema: the components.schemas entry of r's group/version document. */
const json_t *sk_openapi_v3_kind_schema(const sk_resource *r);
/* schema itself, or the definition its "$ref" names in r's document. */
const json_t *sk_openapi_v3_deref(const sk_resource *r, const json_t *schema);

#endif
