/*
 * authn.h - authentication: who a request is (kube/user.h), decided once
 * when its call starts, before routing, as kube-apiserver's authentication
 * filter does.
 *
 * Kube's union of authenticators, in its order and with its outcomes:
 *  - a client certificate the HTTP layer verified (kube/x509): CN is the
 *    user (an empty CN authenticates nobody), each O a group;
 *  - `Authorization: Bearer <token>` (the header's first word compared
 *    without case, the token the second space-separated word): a token of
 *    the static token file, else 401. A token that is sent is always
 *    checked, even with no token file (then no token is valid): a wrong
 *    token is never taken for an anonymous or trusted request;
 *  - no credentials: with anonymous auth, system:anonymous in
 *    system:unauthenticated; in plain-HTTP mode (trust_unauthenticated),
 *    kube's old insecure port's identity, system:unsecured in
 *    system:masters; otherwise 401.
 * A certificate that failed verification with no valid token is 401. Every
 * authenticated user gets system:authenticated. The 401 is kube's
 * Unauthorized Status and never says why.
 */
#ifndef SK_API_AUTHN_H
#define SK_API_AUTHN_H

#include "api/request.h"
#include "core/arena.h"
#include "kube/tokenfile.h"
#include "kube/user.h"

typedef struct sk_authn_config {
    const sk_tokenfile *tokens; /* borrowed; NULL: no token is valid */
    int anonymous;              /* --anonymous-auth */
    int trust_unauthenticated;  /* plain HTTP: no credentials is system:unsecured */
} sk_authn_config;

/* Who req is, in arena a; NULL: 401 Unauthorized. *warning is set to a
 * static text for the response's Warning header when kube warns (a space
 * before the bearer token, which is then ignored), else NULL. */
const sk_user *sk_authn_request(const sk_authn_config *cfg, sk_arena *a, const sk_http_req *req,
                                const char **warning);

/* The user of a verified certificate's subject (cn, the n O values), with
 * system:authenticated added; NULL for an empty or missing CN. In a. */
const sk_user *sk_authn_cert_user(sk_arena *a, const char *cn, const char *const *orgs, size_t n);

#endif
