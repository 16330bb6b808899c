/*
 * vaptype.h - a ValidatingAdmissionPolicy's status.typeChecking as kube
 * 1.32's type checker computes it (k8s.io/apiserver
 * pkg/admission/plugin/policy/validating/typechecking.go, TypeChecker.Check,
 * run by kube-controller-manager's validatingadmissionpolicy-status
 * controller, ctl/vapstatus.h here).
 *
 * The kinds checked are those spec.matchConstraints.resourceRules name
 * exactly (typesToCheck): a rule with a wildcard group or version, or
 * with no group, version or resource, is skipped; wildcard and subresource
 * resources are dropped; every group/version/resource (each list sorted)
 * the registry serves gives its kind, sorted by group, version and kind;
 * the rule whose kinds reach ten (counted with repeats, from none at each
 * rule) is the last. A kind is checked when its schema
 * resolves: the OpenAPI v3 document of its group/version (kube/openapi.h:
 * the built-in definitions, a CRD's schema with apiVersion, kind and
 * ObjectMeta as kube publishes it), the definition carrying its
 * x-kubernetes-group-version-kind, refs populated as kube's PopulateRefs
 * does (a ref already being populated is an empty object), then typed as
 * kube's SchemaDeclType types a resource's root (policy/crdrules.h). A
 * paramKind whose schema resolves types params the same way; one that
 * does not leaves params undeclared.
 *
 * Each validation's expression and messageExpression (only these) is
 * compiled once per kind (cel/admission.h's type checker mode, with the
 * policy's variables composed before it): a compile that fails gives a
 * warning {fieldRef: "spec.validations[i].expression" (or
 * ".messageExpression"), warning: the failed kinds' texts joined by "\n",
 * each "<group>/<version>, Kind=<kind>: <cel-go's issues>\n"}.
 *
 * Pure: reads the registry and the OpenAPI documents, nothing else.
 */
#ifndef SK_POLICY_VAPTYPE_H
#define SK_POLICY_VAPTYPE_H

#include <jansson.h>

/* The expression warnings of policy (borrowed): a new array of
 * {fieldRef, warning} objects, in kube's order; empty when none. */
json_t *sk_vaptype_check(const json_t *policy);

#endif
