/*
 * callcost.c - see callcost.h.
 */
#include "cel/callcost.h"

#include <math.h>
#include <stddef.h>
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

/* The functions of each kind, by name as kube's cost.go switches. */
static const struct {
    const char *name;
    sk_cel_kube_fn kind;
} kube_fns[] = {
    {"check", SK_CEL_KFN_CHECK},
    {"serviceAccount", SK_CEL_KFN_UNIT},
    {"path", SK_CEL_KFN_UNIT},
    {"group", SK_CEL_KFN_UNIT},
    {"resource", SK_CEL_KFN_UNIT},
    {"subresource", SK_CEL_KFN_UNIT},
    {"namespace", SK_CEL_KFN_UNIT},
    {"name", SK_CEL_KFN_UNIT},
    {"allowed", SK_CEL_KFN_UNIT},
    {"reason", SK_CEL_KFN_UNIT},
    {"error", SK_CEL_KFN_UNIT},
    {"errored", SK_CEL_KFN_UNIT},
    {"masked", SK_CEL_KFN_UNIT},
    {"prefixLength", SK_CEL_KFN_UNIT},
    {"family", SK_CEL_KFN_UNIT},
    {"isUnspecified", SK_CEL_KFN_UNIT},
    {"isLoopback", SK_CEL_KFN_UNIT},
    {"isLinkLocalMulticast", SK_CEL_KFN_UNIT},
    {"isLinkLocalUnicast", SK_CEL_KFN_UNIT},
    {"isGlobalUnicast", SK_CEL_KFN_UNIT},
    {"format.named", SK_CEL_KFN_UNIT},
    {"sign", SK_CEL_KFN_UNIT},
    {"asInteger", SK_CEL_KFN_UNIT},
    {"isInteger", SK_CEL_KFN_UNIT},
    {"asApproximateFloat", SK_CEL_KFN_UNIT},
    {"isGreaterThan", SK_CEL_KFN_UNIT},
    {"isLessThan", SK_CEL_KFN_UNIT},
    {"compareTo", SK_CEL_KFN_UNIT},
    {"add", SK_CEL_KFN_UNIT},
    {"sub", SK_CEL_KFN_UNIT},
    {"getScheme", SK_CEL_KFN_UNIT},
    {"getHostname", SK_CEL_KFN_UNIT},
    {"getHost", SK_CEL_KFN_UNIT},
    {"getPort", SK_CEL_KFN_UNIT},
    {"getEscapedPath", SK_CEL_KFN_UNIT},
    {"getQuery", SK_CEL_KFN_UNIT},
    {"fieldSelector", SK_CEL_KFN_SELECTOR},
    {"labelSelector", SK_CEL_KFN_SELECTOR},
    {"isSorted", SK_CEL_KFN_TRAVERSAL},
    {"sum", SK_CEL_KFN_TRAVERSAL},
    {"max", SK_CEL_KFN_TRAVERSAL},
    {"min", SK_CEL_KFN_TRAVERSAL},
    {"indexOf", SK_CEL_KFN_TRAVERSAL},
    {"lastIndexOf", SK_CEL_KFN_TRAVERSAL},
    {"url", SK_CEL_KFN_URL},
    {"jsonpatch.escapeKey", SK_CEL_KFN_URL},
    {"lowerAscii", SK_CEL_KFN_STRING},
    {"upperAscii", SK_CEL_KFN_STRING},
    {"substring", SK_CEL_KFN_STRING},
    {"trim", SK_CEL_KFN_STRING},
    {"replace", SK_CEL_KFN_REPLACE},
    {"split", SK_CEL_KFN_SPLIT},
    {"join", SK_CEL_KFN_JOIN},
    {"find", SK_CEL_KFN_FIND},
    {"findAll", SK_CEL_KFN_FIND},
    {"cidr", SK_CEL_KFN_PARSE},
    {"isIP", SK_CEL_KFN_PARSE},
    {"isCIDR", SK_CEL_KFN_PARSE},
    {"quantity", SK_CEL_KFN_PARSE},
    {"isQuantity", SK_CEL_KFN_PARSE},
    {"ip", SK_CEL_KFN_IP},
    {"ip.isCanonical", SK_CEL_KFN_IP_CANONICAL},
    {"containsIP", SK_CEL_KFN_CONTAINS_IP},
    {"containsCIDR", SK_CEL_KFN_CONTAINS_CIDR},
    {"validate", SK_CEL_KFN_VALIDATE},
};

sk_cel_kube_fn sk_cel_kube_fn_of(const char *function)
{
    for (size_t i = 0; i < sizeof kube_fns / sizeof *kube_fns; i++)
        if (strcmp(kube_fns[i].name, function) == 0)
            return kube_fns[i].kind;
    return SK_CEL_KFN_NONE;
}
