/*
 * user.h - who a request is: the identity authentication establishes and
 * authorization, audit and the review APIs read (kube's user.Info).
 *
 * A value type with borrowed strings: whoever fills one (the authenticator,
 * into a request's arena; a SubjectAccessReview's body) keeps the strings
 * alive for as long as the struct is read. Kept apart from any I/O so the
 * authenticator (api layer) and the authorizer's pure rule evaluation
 * (kube layer) share it without one depending on the other.
 */
#ifndef SK_KUBE_USER_H
#define SK_KUBE_USER_H

#include <stddef.h>

typedef struct sk_user {
    const char *name;          /* "admin", "system:serviceaccount:ns:sa", "system:anonymous" */
    const char *uid;           /* "" when the authenticator knows none */
    const char *const *groups; /* n_groups entries ("system:masters", "system:authenticated") */
    size_t n_groups;
    /* user.Info's Extra: n_extra key/value pairs (a service account
     * token's pod name and uid, its credential id); a key repeats for
     * each of its values (impersonation may give several). */
    const char *const *extra_keys;
    const char *const *extra_values;
    size_t n_extra;
} sk_user;

#endif
