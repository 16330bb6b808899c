/*
 * impersonate.h - private to src/api: user impersonation, kube-apiserver's
 * filter between authentication and authorization.
 *
 * Headers: Impersonate-User (a "system:serviceaccount:<ns>:<name>" user is
 * a service account), Impersonate-Group (repeated), Impersonate-Uid,
 * Impersonate-Extra-<key> (the key lower-cased and %-unescaped). Each thing
 * asked for is authorized for the real user as the verb `impersonate` on
 * users, groups or serviceaccounts (core group; a service account in its
 * namespace), or uids and userextras/<key> (authentication.k8s.io), in that
 * order; the first refusal is a 403 about it. Groups, an extra or a uid
 * without a user is 400 BadRequest. The new user is as asked, plus kube's
 * implied groups: a service account's system:serviceaccounts and
 * system:serviceaccounts:<ns> when no group is given; system:authenticated
 * unless it or system:unauthenticated is given (system:unauthenticated for
 * system:anonymous). Everything after (authorization, the verbs, the review
 * APIs, field managers) sees the new user.
 */
#ifndef SK_API_IMPERSONATE_H
#define SK_API_IMPERSONATE_H

#include "api/request.h"
#include "core/arena.h"

typedef struct sk_api_call sk_api_call;
typedef struct sk_impersonation sk_impersonation;

/* What req's headers ask to impersonate, read into a (the headers are
 * only readable while a call starts); NULL when they ask nothing. */
const sk_impersonation *sk_impersonate_read(sk_arena *a, const sk_http_req *req);

/* Applies call->impersonation (if any): 1 to go on, with call->user the
 * impersonated user; 0 when it replied (400 or 403). */
int sk_impersonate_admit(sk_api_call *call);

#endif
