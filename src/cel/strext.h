/*
 * strext.h - cel-go's strings extension as Kubernetes 1.32 enables it
 * (ext.Strings(ext.StringsVersion(2)), cel-go v0.22): charAt, indexOf,
 * lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim,
 * join, strings.quote and format. Indices are in code points, as cel-go's
 * are. Not here: reverse (version 3, which 1.32 does not enable).
 *
 * format follows cel-spec's conformance tests (%s of a list or map writes
 * its elements' %s text, "[abc, 3.14]"; NaN and the infinities are "NaN",
 * "Infinity", "-Infinity"); cel-go releases before its formatting rewrite
 * quote strings and print doubles with six decimals inside lists, so a
 * message built from a list may read differently from kube's there.
 */
#ifndef SK_CEL_STREXT_H
#define SK_CEL_STREXT_H

#include "cel/value.h"
#include "core/arena.h"

#include <stddef.h>

/* f applied to the n values v (non-errors; v[0] the receiver when method;
 * strings.quote by its qualified name): a new value in a (possibly an
 * error), or NULL when f is not one of these functions for these
 * arguments. The caller has charged the strings handed in; what the
 * function makes (a unit a byte or item of its result) is added to w
 * before it is made, and past w's limit the function gives up with an
 * error instead, so no result is larger than the budget allows. */
const sk_cel_val *sk_cel_strext_call(sk_arena *a, const char *f, int method,
                                     const sk_cel_val *const *v, size_t n, sk_cel_work *w);

#endif
