/*
 * formats.h - the checks behind CEL's format library (cel/lib_format.h)
 * as kube 1.32's format.go makes them: apimachinery's name validators
 * (NameIsDNSLabel and its kin, IsQualifiedName, IsValidLabelValue, with
 * their messages, from kube/validate.h), Go's url.ParseRequestURI (its
 * error text, from cel/lib_url.h) and kube-openapi's uuid, byte, date and
 * date-time formats (kube/strfmt.h) with format.go's fixed messages. One
 * function, handed to every evaluation through sk_cel_eval_options'
 * format_validate, since every kube CEL environment has the library.
 * Pure.
 */
#ifndef SK_POLICY_FORMATS_H
#define SK_POLICY_FORMATS_H

#include "cel/env.h"

/* An sk_cel_format_fn. */
size_t sk_policy_format_validate(const char *format, const char *s, sk_arena *a,
                                 const char *msgs[SK_CEL_FORMAT_MAX_MSGS]);

#endif
