/*
 * unicode.h - the Unicode classes of Go's regexp (\pL, \p{Greek}): its
 * unicode.Categories and unicode.Scripts, generated from Go's tables
 * (unicode_data.c, scripts/gen_unicode_tables.py) so they are the ones Go
 * has, not a hand-made approximation; and its simple case folding.
 */
#ifndef SK_CEL_UNICODE_H
#define SK_CEL_UNICODE_H

#include <stddef.h>
#include <stdint.h>

/* The class called by the len bytes at name ("L", "Greek"): *n sorted,
 * disjoint, inclusive ranges as lo, hi pairs (static); NULL if there is no
 * such class. */
const uint32_t *sk_cel_unicode_class(const char *name, size_t len, size_t *n);

/* Go's unicode.SimpleFold: the next code point of c's case orbit (c itself
 * when it has no other case); following it from c comes back to c. */
uint32_t sk_cel_unicode_simple_fold(uint32_t c);

/* The code points that fold to another, each with its simple fold, sorted
 * (static; *n pairs): for a class's case closure. */
const uint32_t (*sk_cel_unicode_folds(size_t *n))[2];

#endif
