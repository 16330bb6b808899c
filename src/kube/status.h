/*
 * status.h - Kubernetes metav1.Status objects.
 *
 * Every error a client sees is built here from an sk_err (whose code and
 * reason come from core/err.c) plus a message and optional details, so the
 * shape is identical on every path.
 */
#ifndef SK_KUBE_STATUS_H
#define SK_KUBE_STATUS_H

#include "core/err.h"

#include <jansson.h>

/*
 * Returns a new Status object:
 *   {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
 *    "message":message,"reason":<reason of e>,"code":<code of e>,
 *    "details":{"name":name,"group":group,"kind":kind,"causes":causes}}
 * details is present only if any of name/group/kind/causes is given; empty
 * strings and NULLs are omitted. causes is stolen (may be NULL).
 */
json_t *sk_status_new(sk_err e, const char *message, const char *group, const char *kind,
                      const char *name, json_t *causes);

/* kube's NewForbidden as a new Status: "<resource>[.<group>] [\"<name>\" ]is
 * forbidden: <text>", or "forbidden: <text>" without a resource (NULL or
 * ""), with the resource and name as its details. */
json_t *sk_status_forbidden(const char *group, const char *resource, const char *name,
                            const char *text);

/* Appends {"reason":reason,"message":message,"field":field} to causes (an array). */
void sk_status_add_cause(json_t *causes, const char *reason, const char *message,
                         const char *field);

#endif
