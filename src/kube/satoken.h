/*
 * satoken.h - the claims of a ServiceAccount token, as kube-apiserver's
 * TokenRequest writes them and its service-account authenticator reads
 * them (pkg/serviceaccount): iss, sub system:serviceaccount:NS:NAME, aud,
 * exp, iat, nbf, jti, and the private claim "kubernetes.io":
 * {namespace, serviceaccount {name, uid}, pod|secret|node {name, uid}},
 * a pod-bound token also naming the pod's node.
 *
 * Checking here is what needs no lookups: the issuer, the times (kube
 * allows go-jose's default leeway of 60 s on exp and nbf), the audiences,
 * and the private claim's shape. That the ServiceAccount and the bound
 * object still exist with those uids is the caller's to check (it has the
 * cache). Pure: the clock comes in as an argument.
 */
#ifndef SK_KUBE_SATOKEN_H
#define SK_KUBE_SATOKEN_H

#include "core/err.h"

#include <jansson.h>
#include <stdint.h>

#define SK_SATOKEN_LEEWAY_S 60
#define SK_SATOKEN_DEFAULT_ISSUER "https://kubernetes.default.svc.cluster.local"

typedef struct sk_satoken {
    const char *ns, *name, *uid; /* the ServiceAccount */
    /* the object the token is bound to: "Pod", "Secret", "Node", or NULL */
    const char *bound_kind;
    const char *bound_name, *bound_uid;
    /* A pod-bound token's node (kube's pod node info, 1.32 default): the
     * pod's node name and, when the node existed, its uid ("" or NULL:
     * none); never checked, only carried into the user's extra. */
    const char *node_name, *node_uid;
    const char *jti;
    int64_t iat, exp;
} sk_satoken;

/* The claims of t issued by issuer for the n audiences auds: a new object. */
json_t *sk_satoken_claims(const sk_satoken *t, const char *issuer, const char *const *auds,
                          size_t n);

/* The issuer claim of claims (borrowed), or NULL. */
const char *sk_satoken_issuer(const json_t *claims);

/* Checks verified claims (borrowed) at time now against the audiences a
 * request accepts (n > 0): SK_OK with *out filled, its strings borrowed
 * from claims, and aud_out[0..*n_aud) the audiences both accept (borrowed
 * from auds; aud_out has room for n). SK_ERR_UNAUTHORIZED with *why a new
 * string in kube's words otherwise. */
sk_err sk_satoken_check(const json_t *claims, const char *issuer, int64_t now,
                        const char *const *auds, size_t n, sk_satoken *out,
                        const char **aud_out, size_t *n_aud, char **why);

/* "system:serviceaccount:NS:NAME" into a new string. */
char *sk_satoken_username(const char *ns, const char *name);

#endif
