/*
 * quote.h - Go's %q for the libraries' error messages, which quote their
 * input as kube's do (lib.h).
 */
#ifndef SK_CEL_QUOTE_H
#define SK_CEL_QUOTE_H

#include "core/arena.h"

#include <stddef.h>

/* The len bytes at s as Go's strconv.Quote writes them, new in a. */
const char *sk_cel_go_quote(sk_arena *a, const char *s, size_t len);

#endif
