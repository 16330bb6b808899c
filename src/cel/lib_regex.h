/*
 * lib_regex.h - CEL's matches and Kubernetes' regex library (find,
 * findAll), over regex.h; see lib.h.
 */
#ifndef SK_CEL_LIB_REGEX_H
#define SK_CEL_LIB_REGEX_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>

/* As sk_cel_lib_call, for matches, find and findAll. */
const sk_cel_val *sk_cel_lib_regex(sk_cel_env *env, const char *f, int method,
                                   const sk_cel_val *const *v, size_t n);

#endif
