/*
 * fieldcheck.h - server-side field validation (?fieldValidation=): the
 * unknown and duplicate fields kube-apiserver's strict decoder reports.
 *
 * kubectl 1.32 sees fieldValidation in our OpenAPI, skips client-side schema
 * validation and sends fieldValidation=Strict, so the server must find what
 * kube-apiserver finds, worded the same way. Findings are strings exactly as
 * kube-apiserver words one strict error (sigs.k8s.io/json, apimachinery
 * runtime.NewStrictDecodingError):
 *   unknown field "spec.foo"          a key the kind's schema does not declare
 *   duplicate field "metadata.name"   a key repeated in one JSON object
 * Paths join object keys with '.' and add "[i]" for list elements
 * ("spec.containers[0].foo"); keys of maps (labels, data) are path segments
 * too ("metadata.labels.app"). A key that is both unknown and repeated is
 * reported once, as unknown; identical findings are reported once; at most
 * SK_FIELDCHECK_MAX findings, as the Go decoder caps them.
 *
 * Schemas come from the generated type table (kube/schema.h): structs are
 * closed, maps check their values against the value schema, and types with
 * decoders of their own (FieldsV1, RawExtension, Quantity, Time) are
 * opaque: nothing inside them is reported. apiVersion/kind/metadata are
 * declared by every kind.
 *
 * Wiring by directive (absent or empty means Warn, as kube-apiserver):
 *  - Ignore: do not call these functions.
 *  - Warn: accept; add one "Warning: 299 - <quoted finding>" header per
 *    finding, in order.
 *  - Strict: any finding rejects the request. POST/PUT: 400 BadRequest,
 *    message from sk_fieldcheck_message(r, ...). Merge/strategic-merge
 *    PATCH: 422 Invalid with one cause {field "patch", reason
 *    "FieldValueInvalid"} whose detail is sk_fieldcheck_message(NULL, ...).
 * Duplicates cannot be seen in a parsed json_t (jansson keeps the last one;
 * JSON_REJECT_DUPLICATES only fails the parse, once, without a path), so
 * they are found in the request bytes: parse the body normally (no
 * JSON_REJECT_DUPLICATES), then pass the same bytes here.
 *
 * All functions are thread-safe; out-params are set only on success.
 */
#ifndef SK_KUBE_FIELDCHECK_H
#define SK_KUBE_FIELDCHECK_H

#include "kube/registry.h"
#include "core/err.h"

#include <jansson.h>
#include <stddef.h>

/* Most findings reported per check (sigs.k8s.io/json's limit). */
#define SK_FIELDCHECK_MAX 100

/*
 * POST/PUT bodies: unknown and duplicate fields of body (JSON text of one r
 * object) in document order, interleaved as the Go decoder meets them.
 * *out: a new JSON array of strings, empty if none. SK_ERR_BAD_REQUEST if
 * body is not well-formed JSON.
 */
sk_err sk_fieldcheck_body(const sk_resource *r, const char *body, size_t len, json_t **out);

/*
 * Unknown fields of obj (borrowed) against r's schema: appends one
 * message per unknown field ("unknown field \"spec.foo\"") to *out (a new
 * JSON array of strings, empty if none), in document order.
 */
sk_err sk_fieldcheck_unknown(const sk_resource *r, const json_t *obj, json_t **out);

/*
 * Merge and strategic-merge PATCH: duplicate fields of the patch bytes (any
 * key is known there: the patch is decoded untyped) in document order, then
 * the unknown fields of patched (the merge result, borrowed) sorted, as
 * kube-apiserver reports them. *out as above.
 */
sk_err sk_fieldcheck_patch(const sk_resource *r, const char *patch, size_t len,
                           const json_t *patched, json_t **out);

/*
 * The Strict-mode message for findings (non-empty array of strings), a new
 * NUL-terminated string the caller frees:
 *   r != NULL: "<Kind> in version \"<version>\" cannot be handled as a <Kind>:
 *               strict decoding error: <f1>, <f2>"   (POST/PUT)
 *   r == NULL: "strict decoding error: <f1>, <f2>"   (PATCH cause detail)
 */
sk_err sk_fieldcheck_message(const sk_resource *r, const json_t *findings, char **out);

#endif
