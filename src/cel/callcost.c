/*
 * callcost.c - see callcost.h.
 */
#include "cel/callcost.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX UINT64_MAX

uint64_t sk_cel_cost_factor(uint64_t x, double y)
{
    double xf = (double)x;
    if (xf > 0 && y > 0 && xf > (double)MAX / y)
        return MAX;
    double c = ceil(xf * y);
    return c >= ldexp(1.0, 64) ? MAX : (uint64_t)c;
}

uint64_t sk_cel_selector_cost(uint64_t len)
{
    /* a list of requirements, the string's parse, a requirement (a struct
     * and a values list) every 2 characters */
    uint64_t parse = sk_cel_cost_factor(len, SK_CEL_STRING_TRAVERSAL);
    uint64_t reqs =
        sk_cel_cost_factor(sk_cel_cost_factor(len, 0.5), SK_CEL_LIST_CREATE + SK_CEL_STRUCT_CREATE);
    uint64_t sum = SK_CEL_LIST_CREATE + parse;
    sum = sum < parse ? MAX : sum;
    return MAX - sum < reqs ? MAX : sum + reqs;
}

/* The functions of each kind, by name as kube's cost.go switches, sorted
 * by name (strcmp) for the binary search every call's cost makes. */
static const struct kube_fn {
    const char *name;
    sk_cel_kube_fn kind;
} kube_fns[] = {
    {"add", SK_CEL_KFN_UNIT},
    {"allowed", SK_CEL_KFN_UNIT},
    {"asApproximateFloat", SK_CEL_KFN_UNIT},
    {"asInteger", SK_CEL_KFN_UNIT},
    {"check", SK_CEL_KFN_CHECK},
    {"cidr", SK_CEL_KFN_PARSE},
    {"compareTo", SK_CEL_KFN_UNIT},
    {"containsCIDR", SK_CEL_KFN_CONTAINS_CIDR},
    {"containsIP", SK_CEL_KFN_CONTAINS_IP},
    {"error", SK_CEL_KFN_UNIT},
    {"errored", SK_CEL_KFN_UNIT},
    {"family", SK_CEL_KFN_UNIT},
    {"fieldSelector", SK_CEL_KFN_SELECTOR},
    {"find", SK_CEL_KFN_FIND},
    {"findAll", SK_CEL_KFN_FIND},
    {"format.named", SK_CEL_KFN_UNIT},
    {"getEscapedPath", SK_CEL_KFN_UNIT},
    {"getHost", SK_CEL_KFN_UNIT},
    {"getHostname", SK_CEL_KFN_UNIT},
    {"getPort", SK_CEL_KFN_UNIT},
    {"getQuery", SK_CEL_KFN_UNIT},
    {"getScheme", SK_CEL_KFN_UNIT},
    {"group", SK_CEL_KFN_UNIT},
    {"indexOf", SK_CEL_KFN_TRAVERSAL},
    {"ip", SK_CEL_KFN_IP},
    {"ip.isCanonical", SK_CEL_KFN_IP_CANONICAL},
    {"isCIDR", SK_CEL_KFN_PARSE},
    {"isGlobalUnicast", SK_CEL_KFN_UNIT},
    {"isGreaterThan", SK_CEL_KFN_UNIT},
    {"isIP", SK_CEL_KFN_PARSE},
    {"isInteger", SK_CEL_KFN_UNIT},
    {"isLessThan", SK_CEL_KFN_UNIT},
    {"isLinkLocalMulticast", SK_CEL_KFN_UNIT},
    {"isLinkLocalUnicast", SK_CEL_KFN_UNIT},
    {"isLoopback", SK_CEL_KFN_UNIT},
    {"isQuantity", SK_CEL_KFN_PARSE},
    {"isSorted", SK_CEL_KFN_TRAVERSAL},
    {"isUnspecified", SK_CEL_KFN_UNIT},
    {"join", SK_CEL_KFN_JOIN},
    {"jsonpatch.escapeKey", SK_CEL_KFN_URL},
    {"labelSelector", SK_CEL_KFN_SELECTOR},
    {"lastIndexOf", SK_CEL_KFN_TRAVERSAL},
    {"lowerAscii", SK_CEL_KFN_STRING},
    {"masked", SK_CEL_KFN_UNIT},
    {"max", SK_CEL_KFN_TRAVERSAL},
    {"min", SK_CEL_KFN_TRAVERSAL},
    {"name", SK_CEL_KFN_UNIT},
    {"namespace", SK_CEL_KFN_UNIT},
    {"path", SK_CEL_KFN_UNIT},
    {"prefixLength", SK_CEL_KFN_UNIT},
    {"quantity", SK_CEL_KFN_PARSE},
    {"reason", SK_CEL_KFN_UNIT},
    {"replace", SK_CEL_KFN_REPLACE},
    {"resource", SK_CEL_KFN_UNIT},
    {"serviceAccount", SK_CEL_KFN_UNIT},
    {"sign", SK_CEL_KFN_UNIT},
    {"split", SK_CEL_KFN_SPLIT},
    {"sub", SK_CEL_KFN_UNIT},
    {"subresource", SK_CEL_KFN_UNIT},
    {"substring", SK_CEL_KFN_STRING},
    {"sum", SK_CEL_KFN_TRAVERSAL},
    {"trim", SK_CEL_KFN_STRING},
    {"upperAscii", SK_CEL_KFN_STRING},
    {"url", SK_CEL_KFN_URL},
    {"validate", SK_CEL_KFN_VALIDATE},
};

static int by_name(const void *key, const void *entry)
{
    return strcmp(key, *(const char *const *)entry);
}

sk_cel_kube_fn sk_cel_kube_fn_of(const char *function)
{
    const void *hit =
        bsearch(function, kube_fns, sizeof kube_fns / sizeof *kube_fns, sizeof *kube_fns, by_name);
    return hit ? ((const struct kube_fn *)hit)->kind : SK_CEL_KFN_NONE;
}
