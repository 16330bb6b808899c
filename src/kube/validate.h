/*
 * validate.h - object validation with kube-apiserver's rules and wording.
 *
 * Clients (kubectl, client-go's errors.IsInvalid, tests that compare
 * messages) see exactly the Status kube-apiserver 1.32 would send: the same
 * field paths, the same "Invalid value: ..." bodies, the same aggregation.
 * The name-format checks and the field-error list are exported because label
 * selectors and generateName report errors in the same words.
 */
#ifndef SK_KUBE_VALIDATE_H
#define SK_KUBE_VALIDATE_H

#include "kube/registry.h"
#include "core/err.h"

#include "core/buf.h"

#include <jansson.h>
#include <stddef.h>

/*
 * Validates a create (old == NULL) or update of obj (borrowed) as resource
 * r; old (borrowed) is the stored object. The handler has already settled
 * metadata.name (generateName), namespace and the immutable system fields.
 *   SK_OK                nothing written.
 *   SK_ERR_INVALID       *causes_out: new JSON array of {reason,message,field};
 *                        *msg_out: new string, e.g.
 *                        `ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: ...`
 *   SK_ERR_BAD_REQUEST   a field has the wrong JSON type (kube-apiserver fails
 *                        to decode such a body); *msg_out: new string,
 *                        *causes_out: NULL.
 */
sk_err sk_validate_object(const sk_resource *r, const json_t *obj, const json_t *old,
                          json_t **causes_out, char **msg_out);

typedef struct sk_field_errors sk_field_errors;

/* sk_validate_object's checks for an obj already through
 * sk_typed_normalize (kube/typed.h; so no decode check), their errors
 * appended to fe (borrowed) for a caller that adds its own to the same
 * list: a custom resource's schema and CEL errors follow its metadata's
 * in one Invalid, as kube's custom-resource strategy lists them. */
void sk_validate_typed_errors(const sk_resource *r, const json_t *obj, const json_t *old,
                              sk_field_errors *fe);

/* The size ValidateAnnotationsSize counts for annotations (an object,
 * borrowed; NULL counts 0): every key's and value's length. Above
 * SK_VALIDATE_MAX_ANNOTATIONS_SIZE (TotalAnnotationSizeLimitB) an object
 * is invalid. */
#define SK_VALIDATE_MAX_ANNOTATIONS_SIZE (256 * 1024)
size_t sk_validate_annotations_size(const json_t *annotations);

/* NULL if s is a DNS-1123 subdomain (<= 253) / label (<= 63), else the first
 * of Kubernetes' messages for it (static string). */
const char *sk_validate_dns1123_subdomain(const char *s);
const char *sk_validate_dns1123_label(const char *s);

/* Kubernetes' messages (static strings) for s as a qualified name (label or
 * annotation key) / label value, as IsQualifiedName / IsValidLabelValue list
 * them. Writes up to SK_VALIDATE_MAX_MSGS entries; returns the count, 0 if
 * s is valid. */
#define SK_VALIDATE_MAX_MSGS 4
size_t sk_validate_qualified_name(const char *s, const char *msgs[SK_VALIDATE_MAX_MSGS]);
size_t sk_validate_label_value(const char *s, const char *msgs[SK_VALIDATE_MAX_MSGS]);
/* The same for IsDNS1035Label. */
size_t sk_validate_dns1035_label(const char *s, const char *msgs[SK_VALIDATE_MAX_MSGS]);
/* The same for apimachinery's NameIsDNSSubdomain, NameIsDNSLabel and
 * NameIsDNS1035Label(s, prefix): a prefix (generateName) ending in '-' is
 * masked first, as maskTrailingDash does. */
typedef enum {
    SK_VALIDATE_DNS1123_SUBDOMAIN,
    SK_VALIDATE_DNS1123_LABEL,
    SK_VALIDATE_DNS1035_LABEL
} sk_validate_name_kind;
size_t sk_validate_name_is(sk_validate_name_kind kind, const char *s, int prefix,
                           const char *msgs[SK_VALIDATE_MAX_MSGS]);

/* ValidateObjectMeta as kube runs it on the metadata (borrowed, an object)
 * of an x-kubernetes-embedded-resource at field path base
 * ("spec.template.metadata"): names are path segments, a namespace is
 * checked only when set. An empty name is not an error (kube validates a
 * stand-in name). */
void sk_validate_embedded_meta(sk_field_errors *fe, const json_t *meta, const char *base);

/* ValidateLabels (metav1) and ValidateAnnotations (apimachinery) of labels
 * or annotations (borrowed objects; NULL: none), their errors at field. */
void sk_validate_labels(sk_field_errors *fe, const json_t *labels, const char *field);
void sk_validate_annotations(sk_field_errors *fe, const json_t *annotations, const char *field);

/*
 * A list of field errors rendered like k8s.io/apimachinery field.ErrorList:
 * each error is "<field>: <body>", the aggregate is the single message, or
 * the de-duplicated messages joined by ", " inside "[...]".
 */
sk_field_errors *sk_field_errors_new(void);
void sk_field_errors_free(sk_field_errors *fe);
size_t sk_field_errors_count(const sk_field_errors *fe);
/* field.Invalid with a string value: `<field>: Invalid value: "<value>": <detail>`. */
void sk_field_errors_invalid(sk_field_errors *fe, const char *field, const char *value,
                             const char *detail);
/*
 * The other field.Error constructors, bodies as apimachinery 1.32 renders
 * them. A json_t value (borrowed; NULL = JSON null) is the BadValue as Go
 * decodes it into interface{} and prints it: strings %q, numbers and
 * booleans %v, null "null", objects and arrays %#v
 * (`map[string]interface {}{"a":1}`).
 */
/* `<field>: Required value[: <detail>]` */
void sk_field_errors_required(sk_field_errors *fe, const char *field, const char *detail);
/* `<field>: Forbidden: <detail>` */
void sk_field_errors_forbidden(sk_field_errors *fe, const char *field, const char *detail);
/* `<field>: Too long: may not be more than <max> bytes` (max < 0: "value is too long"). */
void sk_field_errors_too_long(sk_field_errors *fe, const char *field, long max);
/* `<field>: Too many: <actual>: must have at most <max> items` (either < 0: left out). */
void sk_field_errors_too_many(sk_field_errors *fe, const char *field, long actual, long max);
/* field.Invalid / field.TypeInvalid (reason FieldValueTypeInvalid, same body). */
void sk_field_errors_invalid_json(sk_field_errors *fe, const char *field, const json_t *value,
                                  const char *detail);
void sk_field_errors_type_invalid(sk_field_errors *fe, const char *field, const json_t *value,
                                  const char *detail);
/* `<field>: Duplicate value: <value>` */
void sk_field_errors_duplicate(sk_field_errors *fe, const char *field, const json_t *value);
/* `<field>: Unsupported value: <value>: supported values: "a", "b"` (n == 0: no detail). */
void sk_field_errors_not_supported(sk_field_errors *fe, const char *field, const json_t *value,
                                   const char *const *supported, size_t n);
/* Go's %#v of a []string held as a JSON array of strings:
 * `[]string{"a", "b"}`; NULL (or not an array): `[]string(nil)`. */
void sk_go_string_slice(sk_buf *b, const json_t *list);
/* The same with the value already rendered as Go's %#v would (`[]string{"X"}`). */
void sk_field_errors_not_supported_rendered(sk_field_errors *fe, const char *field,
                                            const char *value, const char *const *supported,
                                            size_t n);
/* field.Invalid whose value is already rendered as Go would (`[]string{"a"}`). */
void sk_field_errors_invalid_rendered(sk_field_errors *fe, const char *field, const char *value,
                                      const char *detail);
/* Appends copies of src's errors to dst. */
void sk_field_errors_append(sk_field_errors *dst, const sk_field_errors *src);
/* Orders the errors by their "<field>: <body>" text, as kube sorts some lists. */
void sk_field_errors_sort(sk_field_errors *fe);
/* The errors as Status causes [{reason,message,field}] (borrowed, lives as long as fe). */
const json_t *sk_field_errors_causes(const sk_field_errors *fe);
/* The aggregate message (new string); fe must not be empty. */
char *sk_field_errors_message(const sk_field_errors *fe);

#endif
