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
 * that does not decode is a 400 worded as the Go decoder words it; the
 * other decoders kube runs over a body are worded here too: encoding/json's
 * syntax errors, and the unstructured converter a strategic merge patch's
 * result goes through.
 *
 * Everything is driven by the generated schema table (kube/schema.h); this
 * module is pure and thread-safe.
 */
#ifndef SK_KUBE_TYPED_H
#define SK_KUBE_TYPED_H

#include "core/buf.h"
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
 * The error kube's unstructured converter (runtime.DefaultUnstructured-
 * Converter, which a strategic merge patch's result goes through instead
 * of the JSON decoder) gives for obj (a built-in kind): "cannot restore
 * map from string", "cannot restore struct from: slice", "unrecognized
 * type: int32", "cannot convert int64 to string". SK_ERR_INVALID with *msg
 * (new) when obj's first decoding error is one of those; SK_OK when obj
 * decodes, or its first error is one the converter words otherwise or not
 * at all (a Time, Quantity or IntOrString decoding itself, an int out of
 * range, a whole float into an int): sk_typed_check words those.
 */
sk_err sk_typed_restore_error(const sk_resource *r, const json_t *obj, char **msg);

/* Appends v as Go's fmt %v prints it decoded into interface{} (integers
 * kept): "map[a:1 b:[x y]]", keys sorted, strings bare, null "<nil>". */
void sk_typed_go_print(sk_buf *b, const json_t *v);
/* The same with %s: strings alone, other scalars %!s(int64=1). */
void sk_typed_go_print_s(sk_buf *b, const json_t *v);
/* reflect's type of v decoded into interface{}: "map[string]interface {}",
 * "[]interface {}", "string", "int64", "float64", "bool", "<nil>". Static. */
const char *sk_typed_go_type_name(const json_t *v);

/* The syntax error Go's encoding/json gives for text ("invalid character
 * 'a' looking for beginning of value", "unexpected end of JSON input"),
 * or NULL if text is valid JSON to it. New string. */
char *sk_typed_go_syntax_error(const char *text, size_t len);

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
/* Decodes s as Go's StdEncoding does ([]byte fields: a caBundle, a webhook's
 * patch): a new buffer of *n_out bytes plus a NUL, or NULL if invalid. */
unsigned char *sk_typed_base64_decode(const char *s, size_t *n_out);

#endif
