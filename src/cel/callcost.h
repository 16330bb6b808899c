/*
 * callcost.h - the cost facts cel-go's estimator (cost.h) and its runtime
 * tracker (eval.h) share: cel-go's cost factors, and Kubernetes 1.32's
 * library functions grouped by the cost its library cost.go gives them,
 * which computes the estimate and the runtime cost from one table. Apart
 * from cost.h, which reads the type checker's results, so that the
 * evaluator needs none of them.
 */
#ifndef SK_CEL_CALLCOST_H
#define SK_CEL_CALLCOST_H

#include <stdint.h>

/* cel-go's cost factors (common/cost.go), which its estimator, its
 * runtime tracker (eval.h) and Kubernetes' library costs share. */
#define SK_CEL_STRING_TRAVERSAL 0.1 /* StringTraversalCostFactor */
#define SK_CEL_REGEX_LENGTH 0.25    /* RegexStringLengthCostFactor */
#define SK_CEL_LIST_CREATE 10       /* ListCreateBaseCost */
#define SK_CEL_MAP_CREATE 30        /* MapCreateBaseCost */
#define SK_CEL_STRUCT_CREATE 40     /* StructCreateBaseCost */

/* Kubernetes' library functions (k8s.io/apiserver pkg/cel/library
 * cost.go) by the cost kube gives them: one table for the estimate
 * (EstimateCallCost, cost.c) and the runtime cost (CallCost, eval.c). */
typedef enum sk_cel_kube_fn {
    SK_CEL_KFN_NONE,      /* not kube's: cel-go's own cost */
    SK_CEL_KFN_CHECK,     /* an authorization check: 350000 */
    SK_CEL_KFN_UNIT,      /* builders and accessors: 1 */
    SK_CEL_KFN_SELECTOR,  /* fieldSelector, labelSelector: a parse */
    SK_CEL_KFN_TRAVERSAL, /* isSorted, sum, ..., indexOf: a traversal */
    SK_CEL_KFN_URL,       /* url, jsonpatch.escapeKey: a string scan */
    SK_CEL_KFN_STRING,    /* lowerAscii, upperAscii, substring, trim */
    SK_CEL_KFN_REPLACE,   /* replace */
    SK_CEL_KFN_SPLIT,     /* split */
    SK_CEL_KFN_JOIN,      /* join */
    SK_CEL_KFN_FIND,      /* find, findAll: a regular expression search */
    SK_CEL_KFN_PARSE,     /* cidr, isIP, isCIDR, quantity, isQuantity */
    SK_CEL_KFN_IP,        /* ip (a parse, but for cidr.ip()) */
    SK_CEL_KFN_IP_CANONICAL,
    SK_CEL_KFN_CONTAINS_IP,
    SK_CEL_KFN_CONTAINS_CIDR,
    SK_CEL_KFN_VALIDATE, /* format.validate */
} sk_cel_kube_fn;

sk_cel_kube_fn sk_cel_kube_fn_of(const char *function);

/* x * f rounded up, saturating (cel-go's MultiplyByCostFactor). */
uint64_t sk_cel_cost_factor(uint64_t x, double f);

/* kube's selectorCostEstimate for a selector of len bytes (of a size
 * range: this of each end). */
uint64_t sk_cel_selector_cost(uint64_t len);

#endif
