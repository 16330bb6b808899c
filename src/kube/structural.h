/*
 * structural.h - a CustomResourceDefinition version's openAPIV3Schema as
 * kube-apiserver 1.32 applies it to custom resources.
 *
 * Compiling checks the schema as CRD validation does (a structural schema,
 * the fields a CRD may not use, x-kubernetes-* consistency, defaults that
 * validate and survive pruning), with kube's field paths and messages. The
 * compiled form then does what the custom-resource handler does to an
 * object: default, prune (and drop nulls the schema does not allow),
 * validate (value validation as kube-openapi words it, the metadata of
 * embedded resources, list-type set/map uniqueness).
 *
 * Pure (no I/O, no threads); a compiled schema is immutable and may be
 * shared by threads.
 */
#ifndef SK_KUBE_STRUCTURAL_H
#define SK_KUBE_STRUCTURAL_H

#include "core/err.h"
#include "kube/validate.h"

#include <jansson.h>

typedef struct sk_structural sk_structural;

/*
 * Compiles schema (borrowed; copied). path is the schema's field path for
 * messages, e.g. "spec.versions[0].schema.openAPIV3Schema".
 *   SK_OK           *out: new.
 *   SK_ERR_INVALID  every violation appended to fe, *out untouched.
 */
sk_err sk_structural_compile(const json_t *schema, const char *path, sk_field_errors *fe,
                             sk_structural **out);
void sk_structural_free(sk_structural *s); /* NULL-safe */

/* The extra root checks CRD validation makes of a version whose status
 * subresource is enabled (type object, only some keywords at the root):
 * violations appended to fe. schema is borrowed. */
void sk_structural_check_status_root(const json_t *schema, const char *path, sk_field_errors *fe);

/* Applies the schema's defaults to obj (edited), as kube does on decode and
 * on read from storage. */
void sk_structural_default(const sk_structural *s, json_t *obj);

/*
 * Removes from obj (edited) the fields the schema does not know (kept:
 * apiVersion, kind and metadata at the root and in
 * x-kubernetes-embedded-resource objects, whose metadata keeps only
 * ObjectMeta's fields; everything under x-kubernetes-preserve-unknown-fields),
 * then the nulls the schema neither allows (nullable) nor defaults. If
 * unknown (borrowed, an array) is non-NULL, the path of each removed unknown
 * field ("spec.foo", "spec.list[0].bar") is appended as a string, sorted,
 * for strict field validation.
 */
void sk_structural_prune(const sk_structural *s, json_t *obj, json_t *unknown);

/* Validates obj (borrowed; already defaulted and pruned): every violation
 * appended to fe, as kube's custom-resource strategy reports them (the
 * root's ObjectMeta is the caller's to validate). */
void sk_structural_validate(const sk_structural *s, const json_t *obj, sk_field_errors *fe);

/* Keyword name of schema node sch (borrowed); NULL when absent or null
 * (Go decodes null as unset), or when sch is no object. */
const json_t *sk_structural_kw(const json_t *sch, const char *name);
/* Its string, "" when absent or not a string. */
const char *sk_structural_kw_str(const json_t *sch, const char *name);

#endif
