/*
 * typed.h - an object as kube-apiserver's typed round trip leaves it: the
 * JSON decoded into the kind's Go struct (encoding/json, case-sensitive as
 * sigs.k8s.io/json) and encoded again.
 *
 * What a client reads back from kube-apiserver is that encoding, not what it
 * sent: undeclared fields are gone, struct fields come in Go declaration
 * order, zero values of fields without omitempty are written (a container's
 * "resources": {}, a pod template's "creationTimestamp": null), map keys are
 * sorted, times are UTC and quantities canonical ("1000m" -> "1"). A body
 * that does not decode is a 400 worded as the Go decoder words it.
 *
 * Everything is driven by the generated schema table (kube/schema.h); this
 * module is pure and thread-safe.
 */
#ifndef SK_KUBE_TYPED_H
#define SK_KUBE_TYPED_H

#include "core/err.h"
#include "kube/registry.h"
#include "kube/schema.h"

#include <jansson.h>
#include <stddef.h>

/*
 * The typed round trip of obj (borrowed, a JSON object of r's kind).
 *   SK_OK               *out: a new object.
 *   SK_ERR_BAD_REQUEST  obj does not decode; *msg: a new string,
 *                       `<Kind> in version "<v>" cannot be handled as a <Kind>: <decode error>`
 *                       where the decode error is the one Go returns: the first
 *                       type error ("json: cannot unmarshal string into Go struct
 *                       field PodSpec.spec.containers of type []v1.Container"),
 *                       unless a self-decoding type (Time, Quantity, IntOrString)
 *                       failed, which stops the decoder at once.
 * Out-params are written only for their outcome.
 */
sk_err sk_typed_normalize(const sk_resource *r, const json_t *obj, json_t **out, char **msg);

/* The typed round trip of v (borrowed) as a value of schema s (e.g.
 * ObjectMeta inside a custom resource). SK_OK: *out new. Else
 * SK_ERR_BAD_REQUEST, *msg new: the bare Go decode error ("json: cannot
 * unmarshal number into Go struct field ObjectMeta.name of type string",
 * "json: cannot unmarshal string into Go value of type v1.ObjectMeta"). */
sk_err sk_typed_normalize_value(const sk_schema *s, const json_t *v, json_t **out, char **msg);
/* Only the decode check of sk_typed_normalize: SK_OK or SK_ERR_BAD_REQUEST
 * with *msg as above. */
sk_err sk_typed_check(const sk_resource *r, const json_t *obj, char **msg);

/*
 * resource.Quantity: parses s as ParseQuantity does and writes the string
 * MarshalJSON gives for it (*out new; the input itself when Go keeps it, as
 * for "100m" or "1e3"). On failure returns SK_ERR_BAD_REQUEST and *err is
 * the static message ParseQuantity returns.
 */
sk_err sk_typed_quantity(const char *s, char **out, const char **err);

/* Quantity.RoundUp(-3) of a quantity s already through sk_typed_quantity,
 * as SetDefaults_ResourceList applies it: a value finer than 1m becomes the
 * next 1m up, in MarshalJSON's form (new string); NULL when s is exact at
 * 1m, and so is kept as it is. */
char *sk_typed_quantity_round_up_milli(const char *s);

/* The word Go's encoding/json uses for the JSON kind of v in its errors
 * ("cannot unmarshal number into ..."). Static string. */
const char *sk_typed_go_kind(const json_t *v);

/* Decoded length of Go StdEncoding base64 (CR/LF skipped); -1 if invalid. */
long sk_typed_base64_len(const char *s);

#endif
