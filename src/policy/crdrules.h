/*
 * crdrules.h - a CustomResourceDefinition version's x-kubernetes-validations
 * (CEL) rules as kube-apiserver 1.32 checks them when the CRD is written
 * (k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation) and
 * applies them to custom resources (pkg/apiserver/schema/cel/validation.go).
 *
 * The policy layer is CEL applied to Kubernetes objects: it sits on the
 * kube layer (schemas, field errors) and the cel layer (parse, evaluate).
 *
 * A rule is evaluated at its schema node, for every value the node applies
 * to (each property, map value and list item on the way), with `self` the
 * value there as kube's CEL sees it: a `type: number` holding 3 is a
 * double, a date-time or date string a timestamp, a duration string a
 * duration, a byte string its bytes (in the layouts this server parses:
 * RFC 3339, Go's durations, base64), an object with properties shows only them (names escaped as
 * kube escapes them), the resource root and embedded resources show
 * apiVersion, kind and only metadata.name and metadata.generateName.
 * Transition rules (those naming oldSelf) run only on updates where an old
 * value correlates: same property of correlatable maps, same keys of
 * x-kubernetes-list-type: map lists. On updates, a failure of a rule
 * without oldSelf at a value equal to its correlated old value is a warning
 * (CRDValidationRatcheting, on in 1.32), not an error.
 */
#ifndef SK_POLICY_CRDRULES_H
#define SK_POLICY_CRDRULES_H

#include "cel/types.h"
#include "core/arena.h"
#include "kube/registry.h"
#include "kube/validate.h"

#include <jansson.h>
#include <stdint.h>

typedef struct sk_crdrules sk_crdrules;

/* What CRD validation says of the rules in each version's openAPIV3Schema
 * of crd (borrowed): errors appended to fe, at kube's field paths. Run only
 * on schemas that compiled without errors (kube skips rule compilation
 * where there are schema errors). old: the stored CRD on an update (else
 * NULL): a version whose schema it has unchanged is spared the
 * per-expression cost limit, as kube spares it (its total still counts),
 * and an expression it already has compiles in kube's environment for
 * stored expressions, a new one in the environment of kube's compatibility
 * version (1.31 for 1.32: no two-variable comprehensions). */
void sk_crdrules_check_crd(const json_t *crd, const json_t *old, sk_field_errors *fe);

/* The compiled rules of custom resource r's version (borrowed, process
 * lifetime, keyed by the registry entry's schema like kube/crschema.h);
 * NULL when its schema carries none. Thread-safe. */
const sk_crdrules *sk_crdrules_of(const sk_resource *r);

/* The same, compiled from schema (borrowed, copied) for a caller that
 * owns it: free with sk_crdrules_free. NULL when there are no rules. */
sk_crdrules *sk_crdrules_compile(const json_t *schema);
void sk_crdrules_free(sk_crdrules *c); /* NULL-safe */

/* The CEL type kube's SchemaDeclType gives a resource's root whose schema
 * is schema (borrowed, refs already in place; must outlive a), named name
 * (MaybeAssignTypeName), in a; NULL when kube gives it none. Its fields
 * are read by sk_crdrules_field (an sk_cel_check_field_fn, ctx unused),
 * made as far as an expression walks. For type-checking expressions
 * against a kind (policy/vaptype.h). */
const sk_cel_ty *sk_crdrules_kind_type(sk_arena *a, const json_t *schema, const char *name);
const sk_cel_ty *sk_crdrules_field(void *ctx, sk_arena *a, const sk_cel_ty *object,
                                   const char *name);

/* kube's static cost estimate of rule i of the root of schema (borrowed;
 * compiled as a node that is no resource's root, as kube's cost tests
 * do): CompilationResult.MaxCost, before the CRD check multiplies it by
 * how many values the rule may run on. 0 with *cost set, -1 when the rule
 * does not compile. */
int sk_crdrules_rule_cost(const json_t *schema, size_t i, uint64_t *cost);

/* Bounds, in kube's runtime cost (cel/eval.h): 0 is kube's, PerCallLimit
 * (1,000,000) a rule and RuntimeCELCostBudget (10,000,000) an object. */
typedef struct sk_crdrules_limits {
    uint64_t per_call, per_object;
} sk_crdrules_limits;

/*
 * Applies c to obj (borrowed; defaulted, pruned, schema-valid): a create
 * when old is NULL, else an update from old (borrowed), ratcheting errors
 * into warnings when ratchet is set (a main-resource update; kube does not
 * ratchet status updates). Errors appended to fe, kube's; warnings
 * appended to warnings (a JSON array, borrowed) as strings. lim NULL:
 * kube's bounds.
 */
void sk_crdrules_validate(const sk_crdrules *c, const json_t *obj, const json_t *old, int ratchet,
                          const sk_crdrules_limits *lim, sk_field_errors *fe, json_t *warnings);

#endif
