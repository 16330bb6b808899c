/*
 * patch.h - the three PATCH formats kube-apiserver accepts from kubectl and
 * client libraries: RFC 6902 JSON patch, RFC 7386 merge patch and strategic
 * merge patch.
 *
 * Pure functions over jansson values: no store, no HTTP. Error codes and
 * messages are those kube-apiserver 1.32 answers with, so clients that switch
 * on Status.reason behave the same against sqlkube.
 */
#ifndef SK_KUBE_PATCH_H
#define SK_KUBE_PATCH_H

#include "core/err.h"
#include "kube/schema.h"

#include <jansson.h>
#include <stddef.h>

typedef enum { SK_PATCH_JSON, SK_PATCH_MERGE, SK_PATCH_STRATEGIC } sk_patch_type;

/*
 * Parses a request Content-Type: "application/json-patch+json",
 * "application/merge-patch+json" or "application/strategic-merge-patch+json"
 * (case-insensitive; parameters such as "; charset=utf-8" ignored).
 * Anything else, server-side apply included, is SK_ERR_UNSUPPORTED_MEDIA.
 */
sk_err sk_patch_type_parse(const char *content_type, sk_patch_type *out);

/* Non-zero for "application/apply-patch+yaml" (server-side apply, which
 * kube/managed.h does, not this module). */
int sk_patch_is_apply(const char *content_type);

/* The most a JSON patch's `copy` operations may add in total (bytes of
 * JSON text): kube-apiserver's JSONPatchMaxCopyBytes. Without it a 3 kB
 * patch that copies the document into itself doubles it per operation. */
#define SK_PATCH_MAX_COPY_BYTES (3 * 1024 * 1024)

/*
 * Applies the len bytes of patch to target (borrowed, not modified), an
 * object of type schema (borrowed; kube/schema.h's definition of the kind,
 * or NULL for a custom resource). On success *out is a new reference to
 * the patched object. On failure *errmsg is a new string (free()) with the
 * Status message:
 *   SK_ERR_BAD_REQUEST   patch is not JSON or not of the shape its type needs;
 *                        strategic directives of the wrong shape or unknown
 *                        ($patch values, a list element without its merge
 *                        key, mixed element types, $setElementOrder out of
 *                        step with its list), a map or list merged where
 *                        the type has no such field: kube-apiserver answers
 *                        some of these 500, but they are the client's error
 *   SK_ERR_TOO_LARGE     JSON patch with more than 10000 operations, or whose
 *                        copies add more than SK_PATCH_MAX_COPY_BYTES
 *   SK_ERR_INVALID       a JSON patch operation failed (test mismatch, missing
 *                        path, bad index): kube-apiserver hides the detail
 *                        behind a generic message, and so do we; a JSON
 *                        patch that would nest the document more than 4096
 *                        levels deep; a strategic merge of lists of lists
 *   SK_ERR_UNSUPPORTED_MEDIA  a strategic merge patch without a schema:
 *                        kube offers none for custom resources (the API
 *                        layer refuses those before reading the object)
 * Never SK_ERR_INTERNAL. A strategic merge costs O(n log n) in the sizes of
 * the lists it merges (elements are hashed by merge key). Recursion never
 * goes deeper than the target plus the patch: merges follow the patch, and
 * a JSON patch may not nest the document past 4096 levels on the way.
 * Strategic merge takes every list's and map's patch strategy and merge key
 * from schema, field by field, as kube does from its Go types.
 */
sk_err sk_patch_apply(sk_patch_type type, const sk_schema *schema, const json_t *target,
                      const char *patch, size_t len, json_t **out, char **errmsg);

#endif
