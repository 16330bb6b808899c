/*
 * lib.h - the CEL functions beyond the evaluator's built-in operators:
 * matches (RE2, regex.h), the Kubernetes libraries of
 * k8s.io/apiserver/pkg/cel/library at release-1.32 (regex find/findAll,
 * lists, url, quantity, ip and cidr) and cel-go's sets extension. The
 * evaluator asks here for any call it does not know itself.
 *
 * A function whose arguments are of no overload it has answers cel-go's
 * "no such overload"; a function of no library, or a method whose receiver
 * is of no kind the library knows (so that libraries may share a name),
 * answers NULL, and the evaluator says the same.
 */
#ifndef SK_CEL_LIB_H
#define SK_CEL_LIB_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>

/* f over v[0..n) (none an error; v[0] the receiver when method), in the
 * env's arena: a value, possibly an error, or NULL if no library has f
 * with that form and arity. */
const sk_cel_val *sk_cel_lib_call(sk_cel_env *env, const char *f, int method,
                                  const sk_cel_val *const *v, size_t n);

/* The name of a function the evaluator has under namespace ns (static:
 * ip.isCanonical, optional.of, sets.contains, strings.quote, ...), which
 * parses as the method f of the identifier ns; NULL if there is none. */
const char *sk_cel_lib_qualified(const char *ns, const char *f);

#endif
