/*
 * authz.h - Kubernetes' CEL authorization library (k8s.io/apiserver
 * pkg/cel/library/authz.go, kube 1.32, with AuthorizeWithSelectors): the
 * `authorizer` variable of admission expressions and the checks built from
 * it,
 *
 *   authorizer.path('/healthz').check('get').allowed()
 *   authorizer.group('apps').resource('deployments').subresource('scale')
 *             .namespace('ns').name('web').check('update').reason()
 *   authorizer.serviceAccount('ns', 'sa').group('')...check('get')
 *   authorizer.requestResource.check('delete').errored() / .error()
 *   ...resource('pods').fieldSelector('spec.nodeName=n').labelSelector('a=b')
 *
 * Each stage is an object value (value.h's SK_CEL_V_OPAQUE) of its own
 * type (kubernetes.authorization.Authorizer, PathCheck, GroupCheck,
 * ResourceCheck, Decision) holding an sk_cel_authz; the builders copy and
 * amend, so a value is never changed once made. The one effect, check(verb), asks the caller's
 * sk_cel_authorize_fn, which decides with the server's authorizer; the
 * library itself decides nothing. Without a callback a check is an error.
 */
#ifndef SK_CEL_AUTHZ_H
#define SK_CEL_AUTHZ_H

#include "cel/value.h"
#include "core/arena.h"

#include <stddef.h>

typedef enum sk_cel_authz_stage {
    SK_CEL_AUTHZ_AUTHORIZER,
    SK_CEL_AUTHZ_PATH,
    SK_CEL_AUTHZ_GROUP,
    SK_CEL_AUTHZ_RESOURCE,
    SK_CEL_AUTHZ_DECISION,
} sk_cel_authz_stage;

/* One stage's fields; NULL strings are unset (""), as kube's zero values. */
typedef struct sk_cel_authz {
    sk_cel_authz_stage stage;
    /* serviceAccount(namespace, name) asks as that account; else (NULL)
     * as the request's user */
    const char *sa_namespace, *sa_name;
    const char *path;
    const char *group, *resource, *subresource, *namespace, *name;
    const char *field_selector, *label_selector;
    /* SK_CEL_AUTHZ_DECISION */
    int allowed;
    const char *reason, *error; /* error NULL: none */
} sk_cel_authz;

/* Decides check (a PATH or RESOURCE stage, borrowed) for verb: *allowed,
 * *reason and *error (the authorizer's own error, which the Decision's
 * errored() and error() show; NULL: none) written, strings in a or
 * static. Returns NULL, or why the check cannot be made at all (an invalid
 * service account: kube's "Invalid service account name"), which makes
 * check() an error value. */
typedef const char *(*sk_cel_authorize_fn)(void *ctx, sk_arena *a, const sk_cel_authz *check,
                                           const char *verb, int *allowed, const char **reason,
                                           const char **error);

/* The `authorizer` value (new, in a). */
const sk_cel_val *sk_cel_authorizer(sk_arena *a);
/* `authorizer.requestResource`: a ResourceCheck of the request's group,
 * resource, subresource, namespace and name (borrowed; "" or NULL unset). */
const sk_cel_val *sk_cel_authorizer_request(sk_arena *a, const char *group, const char *resource,
                                            const char *subresource, const char *namespace,
                                            const char *name);

/* f applied to the n values v (non-errors; v[0] the receiver when method):
 * a new value in a (possibly an error), or NULL when f is not one of the
 * library's functions for these arguments. check() calls authorize (NULL:
 * an error saying no authorizer is configured). */
const sk_cel_val *sk_cel_authz_call(sk_arena *a, const char *f, int method,
                                    const sk_cel_val *const *v, size_t n,
                                    sk_cel_authorize_fn authorize, void *authorize_ctx);

#endif
