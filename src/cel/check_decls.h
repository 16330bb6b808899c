/*
 * check_decls.h - the functions the type checker (check.h) knows: cel-go's
 * standard declarations (common/stdlib/standard.go) and those of the
 * libraries Kubernetes 1.32's CEL environment adds, as overloads with
 * their signatures, in cel-go's declaration order (which names the free
 * type variables an error message may show).
 */
#ifndef SK_CEL_CHECK_DECLS_H
#define SK_CEL_CHECK_DECLS_H

#include "cel/types.h"

#include <stddef.h>

typedef struct sk_cel_overload {
    const char *function;
    const char *sig; /* as declared, without the '~' and '.' marks: "string,string>bool" */
    int member;  /* called as a method: the receiver is args[0] */
    int cross;   /* a cross-type numeric comparison (an env option) */
    int nparams; /* type parameters to instantiate afresh: names in params */
    const char *params[2];
    size_t nargs;
    const sk_cel_ty *const *args;
    const sk_cel_ty *result;
} sk_cel_overload;

/* The overloads of function (static, process lifetime), in order;
 * *n set to their count, 0 when the function is not declared. */
const sk_cel_overload *sk_cel_overloads(const char *function, size_t *n);

/* The type a type name as an identifier has (int: type(int)), or NULL. */
const sk_cel_ty *sk_cel_ty_ident(const char *name);

#endif
