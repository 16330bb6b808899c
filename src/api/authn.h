/*
 * authn.h - authentication: who a request is (kube/user.h), decided once
 * when its call starts, before routing, as kube-apiserver's authentication
 * filter does.
 *
 * Kube's union of authenticators, in its order and with its outcomes:
 *  - a client certificate the HTTP layer verified (kube/x509): CN is the
 *    user (an empty CN authenticates nobody), each O a group;
 *  - `Authorization: Bearer <token>` (the header's first word compared
 *    without case, the token the second space-separated word): a
 *    ServiceAccount token when it is a JWT naming our issuer, else a token
 *    of the static token file, else 401. A token that is sent is always
 *    checked, even with no token file (then no token is valid): a wrong
 *    token is never taken for an anonymous or trusted request;
 *  - no credentials: with anonymous auth, system:anonymous in
 *    system:unauthenticated; in plain-HTTP mode (trust_unauthenticated),
 *    kube's old insecure port's identity, system:unsecured in
 *    system:masters; otherwise 401.
 * A certificate that failed verification with no valid token is 401. Every
 * authenticated user gets system:authenticated. The 401 is kube's
 * Unauthorized Status and never says why.
 *
 * A ServiceAccount token (kube/jwt.h, kube/satoken.h) is good when one of
 * the configured keys signed it, it has not expired (60 s leeway, kube's),
 * one of its audiences is one the request accepts (the API audiences),
 * and its ServiceAccount and the object it is bound to (Pod, Secret, Node)
 * still exist with the uids it names, not deleted for more than the
 * leeway. Those objects are read from the watch cache's latest snapshot
 * (read/reader.h at the cache's revision): no SQL per request, and a
 * ServiceAccount deleted and re-created under the same name (a new uid)
 * no longer accepts its old tokens. The user is
 * system:serviceaccount:NS:NAME with the ServiceAccount's uid, groups
 * system:serviceaccounts and system:serviceaccounts:NS, and kube's extra
 * (credential-id JTI=<jti>, pod-name and pod-uid, node-name and node-uid).
 */
#ifndef SK_API_AUTHN_H
#define SK_API_AUTHN_H

#include "api/request.h"
#include "core/arena.h"
#include "kube/jwt.h"
#include "kube/tokenfile.h"
#include "kube/user.h"
#include "read/reader.h"

typedef struct sk_authn_config {
    const sk_tokenfile *tokens; /* borrowed; NULL: no token is valid */
    int anonymous;              /* --anonymous-auth */
    int trust_unauthenticated;  /* plain HTTP: no credentials is system:unsecured */
    /* ServiceAccount tokens: keys borrowed (NULL: none are accepted); the
     * issuer they carry; the audiences requests accept (--api-audiences,
     * n_audiences > 0 when keys are set). All borrowed. */
    const sk_jwt_keys *sa_keys;
    const char *sa_issuer;
    const char *const *audiences;
    size_t n_audiences;
} sk_authn_config;

/* Who req is, in arena a; NULL: 401 Unauthorized. *warning is set to a
 * static text for the response's Warning header when kube warns (a space
 * before the bearer token, which is then ignored), else NULL. rd (borrowed;
 * NULL: no ServiceAccount token is valid) reads ServiceAccounts and bound
 * objects. */
const sk_user *sk_authn_request(const sk_authn_config *cfg, sk_reader *rd, sk_arena *a,
                                const sk_http_req *req, const char **warning);

/* What a bearer token proves, for TokenReview. */
typedef struct sk_authn_result {
    const sk_user *user;          /* NULL: not authenticated */
    const char *const *audiences; /* with user: the audiences it is good for */
    size_t n_audiences;
    const char *error; /* without user: why, or NULL for a token nobody knows */
} sk_authn_result;

/* Authenticates token for the n audiences auds (n == 0: the API
 * audiences) as a request's bearer token is; everything in a. */
void sk_authn_token(const sk_authn_config *cfg, sk_reader *rd, sk_arena *a, const char *token,
                    const char *const *auds, size_t n, sk_authn_result *out);

/* The user of a verified certificate's subject (cn, the n O values), with
 * system:authenticated added; NULL for an empty or missing CN. In a. */
const sk_user *sk_authn_cert_user(sk_arena *a, const char *cn, const char *const *orgs, size_t n);

/* kube's UserInfo of u as JSON (username, uid, groups, extra; empty ones
 * left out, as Go's omitempty does), for the reviews and audit events.
 * New reference. */
json_t *sk_authn_user_info(const sk_user *u);

#endif
