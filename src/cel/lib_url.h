/*
 * lib_url.h - Kubernetes' url library (kubernetes.URL values); see lib.h.
 */
#ifndef SK_CEL_LIB_URL_H
#define SK_CEL_LIB_URL_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>

/* Go's url.ParseRequestURI(s) error text ("parse \"s\": invalid URI for
 * request"), in a; NULL if s parses. The format library's uri format. */
const char *sk_cel_url_request_error(sk_arena *a, const char *s, size_t n);

/* As sk_cel_lib_call, for url(), isURL() and a URL's getters. */
const sk_cel_val *sk_cel_lib_url(sk_cel_env *env, const char *f, int method,
                                 const sk_cel_val *const *v, size_t n);

#endif
