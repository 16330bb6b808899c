/*
 * lib_sets.h - cel-go's sets extension (ext.Sets), which Kubernetes' CEL
 * environment has: sets.contains, sets.equivalent, sets.intersects over
 * lists; see lib.h.
 */
#ifndef SK_CEL_LIB_SETS_H
#define SK_CEL_LIB_SETS_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>

/* As sk_cel_lib_call, for the sets functions by their qualified names. */
const sk_cel_val *sk_cel_lib_sets(sk_cel_env *env, const char *f, int method,
                                  const sk_cel_val *const *v, size_t n);

#endif
