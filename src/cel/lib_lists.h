/*
 * lib_lists.h - Kubernetes' lists library (isSorted, sum, min, max,
 * indexOf, lastIndexOf); see lib.h.
 */
#ifndef SK_CEL_LIB_LISTS_H
#define SK_CEL_LIB_LISTS_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>

/* As sk_cel_lib_call, for the lists library's methods. */
const sk_cel_val *sk_cel_lib_lists(sk_cel_env *env, const char *f, int method,
                                   const sk_cel_val *const *v, size_t n);

#endif
