/*
 * quantity.h - the syntax of Kubernetes' resource.Quantity
 * (k8s.io/apimachinery/pkg/api/resource): a string split into sign,
 * number and suffix as parseQuantityString does, and a suffix read as its
 * base, exponent and format as the suffixer does. What a quantity's value
 * is and how it prints is its users' (kube/typed.c, cel/lib_quantity.c).
 */
#ifndef SK_CORE_QUANTITY_H
#define SK_CORE_QUANTITY_H

#include <stddef.h>

/* ParseQuantity's errors, word for word. */
extern const char sk_quantity_err_format[];  /* ErrFormatWrong */
extern const char sk_quantity_err_numeric[]; /* ErrNumeric */
extern const char sk_quantity_err_suffix[];  /* ErrSuffix */

typedef enum {
    SK_QUANTITY_DECIMAL_EXPONENT, /* 1e3 */
    SK_QUANTITY_BINARY_SI,        /* 1Ki */
    SK_QUANTITY_DECIMAL_SI,       /* 1k */
} sk_quantity_format;

/* parseQuantityString's parts, spans into the string: value is the signed
 * number as written (sign, digits, point), num its whole digits without
 * leading zeros ("0" if none), denom its fraction digits (NULL if no
 * point), suffix the rest. */
typedef struct sk_quantity_parts {
    int positive;
    const char *value, *num, *denom, *suffix;
    size_t value_len, num_len, denom_len, suffix_len;
} sk_quantity_parts;

/* Splits the NUL-terminated s into *q: NULL, or sk_quantity_err_format. */
const char *sk_quantity_split(const char *s, sk_quantity_parts *q);

/* The suffix's len bytes as base (10 or 2), exponent and format: 1, or 0
 * if it is no suffix (ErrSuffix). */
int sk_quantity_suffix(const char *s, size_t len, int *base, int *exp, sk_quantity_format *fmt);

#endif
