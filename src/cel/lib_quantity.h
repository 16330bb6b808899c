/*
 * lib_quantity.h - Kubernetes' quantity library (kubernetes.Quantity
 * values); see lib.h.
 */
#ifndef SK_CEL_LIB_QUANTITY_H
#define SK_CEL_LIB_QUANTITY_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>

/* As sk_cel_lib_call, for quantity(), isQuantity(), sign() and a
 * Quantity's methods. */
const sk_cel_val *sk_cel_lib_quantity(sk_cel_env *env, const char *f, int method,
                                      const sk_cel_val *const *v, size_t n);

#endif
