/*
 * crschema.h - the compiled structural schema (kube/structural.h) of each
 * served custom resource version, and the check of a CRD's schemas.
 *
 * A schema is compiled the first time a request of its version needs it and
 * kept for the process, keyed by the registry entry's schema (immutable and
 * never freed: the registry retires entries without freeing them, so a
 * compiled schema lives exactly as long and costs one compile per installed
 * form of a CRD). Thread-safe.
 */
#ifndef SK_KUBE_CRSCHEMA_H
#define SK_KUBE_CRSCHEMA_H

#include "kube/registry.h"
#include "kube/structural.h"
#include "kube/validate.h"

#include <jansson.h>

/* The compiled forms of a schema: this module's structural one, and the
 * CEL rules policy/crdrules.h compiles. */
typedef enum sk_crschema_form {
    SK_CRSCHEMA_STRUCTURAL,
    SK_CRSCHEMA_RULES,
    SK_CRSCHEMA_FORMS
} sk_crschema_form;

/* Form form of custom resource r's schema: what make(schema) gave the
 * first time any request asked (made under the cache's lock, kept for the
 * process; possibly NULL), the same value ever after. NULL for built-in
 * kinds and a version without a schema. Thread-safe. */
const void *sk_crschema_form_of(const sk_resource *r, sk_crschema_form form,
                                void *(*make)(const json_t *schema));

/* The compiled schema of custom resource r (borrowed, process lifetime);
 * NULL for built-in kinds, a version without a schema, or a schema that
 * does not compile (the CRD's validation refuses those). */
const sk_structural *sk_crschema_of(const sk_resource *r);

/* Appends to fe what compiling each version's openAPIV3Schema of crd
 * (borrowed, a CustomResourceDefinition) finds, at kube's field paths
 * (its CEL rules are policy/crdrules.h's). */
void sk_crschema_check_crd(const json_t *crd, sk_field_errors *fe);

#endif
