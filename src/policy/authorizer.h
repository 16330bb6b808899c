/*
 * authorizer.h - the `authorizer` variable of admission expressions
 * (webhooks' matchConditions, ValidatingAdmissionPolicies' matchConditions,
 * variables, validations and audit annotations) bound to one request.
 *
 * cel/authz.h builds the checks; this module decides them as kube's
 * authorizer library does for admission: with the server's authorizer
 * (the callback the API layer hands in), for the requester, or for a
 * service account as kube's serviceaccount.UserInfo names it (its user
 * name and its two groups), and gives authorizer.requestResource the
 * request's own group, resource, subresource, namespace and name. Pure:
 * the decision comes through the callback.
 */
#ifndef SK_POLICY_AUTHORIZER_H
#define SK_POLICY_AUTHORIZER_H

#include "cel/authz.h"
#include "cel/eval.h"
#include "kube/rbac.h"
#include "kube/user.h"

/* One request's authorizer (all borrowed for the evaluations using it). */
typedef struct sk_policy_authz {
    const sk_user *user; /* the requester */
    /* Fills *out for a (a->user the requester or an account); NULL: no
     * authorizer, so a check is an error value. */
    void (*authorize)(void *arg, const sk_rbac_attrs *a, sk_rbac_decision *out);
    void *authorize_arg;
    /* the request's resource ("" where it has none) */
    const char *group, *resource, *subresource, *ns, *name;
} sk_policy_authz;

/* sk_cel_resolve_fn over z (an sk_policy_authz): the values of
 * `authorizer` and `authorizer.requestResource`, NULL for any other name. */
const sk_cel_val *sk_policy_authz_variable(void *z, sk_arena *a, const char *name);

/* Sets opt's authorize hook to decide with z (borrowed; NULL or without a
 * callback: checks are errors), declares authorizer.requestResource
 * one name, as kube's environment does (its cost, cel/eval.h), and hands
 * in the format library's checks (formats.h). opt's
 * resolve hook is the caller's: it hands names it does not know to
 * sk_policy_authz_variable. */
void sk_policy_authz_options(const sk_policy_authz *z, sk_cel_eval_options *opt);

#endif
