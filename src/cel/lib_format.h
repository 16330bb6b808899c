/*
 * lib_format.h - Kubernetes' format library (k8s.io/apiserver/pkg/cel/
 * library/format.go at release-1.32; kubernetes.NamedFormat values); see
 * lib.h. format.named(name) is optional.of the format, or optional.none()
 * for a name not in the table; format.<name>() is the format; and
 * <format>.validate(s) is optional.none() when s is valid, else
 * optional.of the list of apimachinery's messages.
 *
 * The checks themselves are the caller's (sk_cel_eval_options'
 * format_validate): they are kube's name validators and OpenAPI string
 * formats, which live above this layer (policy/formats.h), and this layer
 * stays pure. The table of names below is the one the checker declares
 * too (check_decls.c).
 */
#ifndef SK_CEL_LIB_FORMAT_H
#define SK_CEL_LIB_FORMAT_H

#include "cel/env.h"
#include "cel/value.h"

#include <stddef.h>
#include <stdint.h>

/* ConstantFormats, in format.go's order: X(name, MaxRegexSize) for each.
 * MaxRegexSize stands for the regular expression a check would run, for
 * validate()'s cost: the sizes format.go gives, or the length of the
 * pattern it names (govalidator's URL and Base64 at the version kube 1.32
 * vendors, kube-openapi's UUIDPattern and DateTimePattern). */
#define SK_CEL_FORMATS(X)                                                                          \
    X(dns1123Label, 30)                                                                            \
    X(dns1123Subdomain, 60)                                                                        \
    X(dns1035Label, 30)                                                                            \
    X(qualifiedName, 60)                                                                           \
    X(dns1123LabelPrefix, 30)                                                                      \
    X(dns1123SubdomainPrefix, 60)                                                                  \
    X(dns1035LabelPrefix, 30)                                                                      \
    X(labelValue, 40)                                                                              \
    X(uri, 1103)                                                                                   \
    X(uuid, 70)                                                                                    \
    X(byte, 84)                                                                                    \
    X(date, 71)                                                                                    \
    X(datetime, 71)

/* The MaxRegexSize of a format value, or 0 if v is not one. */
uint64_t sk_cel_format_regex_size(const sk_cel_val *v);

/* "format.named" or "format.<name>" (static) when f is one of them in
 * namespace "format", else NULL (lib.c's qualified names). */
const char *sk_cel_format_qualified(const char *f);

/* As sk_cel_lib_call, for the functions above. */
const sk_cel_val *sk_cel_lib_format(sk_cel_env *env, const char *f, int method,
                                    const sk_cel_val *const *v, size_t n);

#endif
