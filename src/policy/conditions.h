/*
 * conditions.h - matchConditions, as kube-apiserver 1.32's
 * admission/plugin/webhook/matchconditions Matcher judges them for
 * admission webhooks and ValidatingAdmissionPolicies alike: a list of named
 * CEL expressions compiled once, then evaluated in order against a
 * request's variables under one cost budget.
 */
#ifndef SK_POLICY_CONDITIONS_H
#define SK_POLICY_CONDITIONS_H

#include "cel/eval.h"

#include <jansson.h>

typedef struct sk_conditions sk_conditions;

/* The MatchCondition list conds (borrowed; copied) compiled as kube
 * compiles stored conditions (cel/admission.h: the stored environment, a
 * bool) with decl's variables declared (SK_CEL_ADM_*; the authorizer
 * always); an expression that does not compile (stored before it was
 * validated, or through another face) is kept as its error. NULL when
 * conds is empty; freed with sk_conditions_free. */
sk_conditions *sk_conditions_new(const json_t *conds, unsigned decl);
void sk_conditions_free(sk_conditions *c);

/*
 * Evaluates c (NULL: no conditions) with the variables of opt (borrowed;
 * its bounds are replaced by kube's: PerCallLimit each and the budget
 * RuntimeCELCostBudgetMatchConditions, spent by every condition in turn):
 * 0 when one is false, whatever the others gave; else -1 when one could
 * not be evaluated (an error, a compilation error, the budget spent), with
 * *failures (new) kube's aggregated text; else 1. A value that is neither
 * false nor an error lets the request through, as in kube.
 */
int sk_conditions_match(const sk_conditions *c, const sk_cel_eval_options *opt, char **failures);

#endif
