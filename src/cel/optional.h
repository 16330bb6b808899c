/*
 * optional.h - CEL's optional values (cel-spec's optional types, cel-go's
 * OptionalTypes library, which Kubernetes enables): the functions
 * optional.of, optional.ofNonZeroValue, optional.none, optional.unwrap,
 * hasValue, value and unwrapOpt. What needs the evaluator stays in eval.c:
 * `x.?f` and `x[?i]`, selection and indexing on an optional (which act as
 * ?-selection on its value), the optional entries of list and map
 * literals, and or/orValue, which evaluate their argument only when the
 * receiver is none. optMap and optFlatMap are macros (macro.h).
 */
#ifndef SK_CEL_OPTIONAL_H
#define SK_CEL_OPTIONAL_H

#include "cel/value.h"
#include "core/arena.h"

#include <stddef.h>

/* f applied to the n values v (non-errors; v[0] the receiver when method;
 * the optional.* functions are called with their qualified name, not as
 * methods): a new value in a (possibly an error), or NULL when f is not
 * one of these functions for these arguments. Work linear in a list's
 * length (optional.unwrap) is added to w, a unit an item. */
const sk_cel_val *sk_cel_optional_call(sk_arena *a, const char *f, int method,
                                       const sk_cel_val *const *v, size_t n, sk_cel_work *w);

#endif
