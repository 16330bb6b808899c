/*
 * cost.h - the static cost estimate of a checked expression (check.h), as
 * cel-go v0.22's checker/cost.go computes it, with the estimates
 * Kubernetes 1.32 gives its library's functions (k8s.io/apiserver
 * pkg/cel/library/cost.go): what kube compares with its per-expression
 * and per-CRD limits when a CRD is written.
 *
 * Costs and sizes are [min, max] ranges of uint64 that saturate instead
 * of overflowing. The size of what the expression reads (a string's
 * length, a list's or map's entries) comes from the caller, by path: a
 * variable, then field names and "@items", "@values", "@keys" for a
 * list's items, a map's values and keys, as cel-go names them.
 */
#ifndef SK_CEL_COST_H
#define SK_CEL_COST_H

#include "cel/callcost.h"
#include "cel/check.h"
#include "core/arena.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_cel_range {
    uint64_t min, max;
} sk_cel_range;

/* The size of the value path[0..n) names, into *out: 1, or 0 when unknown
 * (cel-go then assumes any size, or 1 for a scalar). */
typedef int (*sk_cel_size_fn)(void *ctx, const char *const *path, size_t n, sk_cel_range *out);

typedef struct sk_cel_cost_options {
    sk_cel_size_fn size; /* NULL: every size unknown */
    void *size_ctx;
    /* what has(a.b) costs beyond a (cel-go: 1; Kubernetes sets
     * PresenceTestHasCost(false): 0) */
    uint64_t presence_test_cost;
} sk_cel_cost_options;

/* The estimated cost of c (borrowed), scratch in a. */
sk_cel_range sk_cel_cost(sk_arena *a, const sk_cel_checked *c, const sk_cel_cost_options *opt);

#endif
