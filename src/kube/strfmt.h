/*
 * strfmt.h - the "format" values kube-apiserver checks in custom resources
 * (kube-openapi's strfmt registry as apiextensions keeps it). Pure.
 */
#ifndef SK_KUBE_STRFMT_H
#define SK_KUBE_STRFMT_H

/* Non-zero if s is a valid value of the format. */
typedef int (*sk_strfmt_check)(const char *s);

/* The checker for format ("date-time" and "datetime" alike: '-' is
 * ignored, as go-openapi normalizes names), or NULL for a format kube does
 * not check (int32, int64, anything unknown). */
sk_strfmt_check sk_strfmt_lookup(const char *format);

#endif
