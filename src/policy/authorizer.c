/*
 * authorizer.c - the authorizer variable of admission expressions decided
 * by the server's authorizer (see authorizer.h).
 *
 * A check asks as the requester unless serviceAccount(ns, name) named an
 * account: then as kube's ServiceAccountInfo would authenticate it,
 * "system:serviceaccount:NS:NAME" in system:serviceaccounts and
 * system:serviceaccounts:NS, after kube's name checks (whose failure makes
 * check() an error with kube's words). The RBAC authorizer has no errors
 * of its own, so a Decision's error() is always empty here.
 */
#include "policy/authorizer.h"
#include "policy/formats.h"
#include "kube/validate.h"

#include <string.h>

const sk_cel_val *sk_policy_authz_variable(void *z, sk_arena *a, const char *name)
{
    const sk_policy_authz *x = z;
    if (strcmp(name, "authorizer") == 0)
        return sk_cel_authorizer(a);
    if (strcmp(name, "authorizer.requestResource") == 0)
        return sk_cel_authorizer_request(a, x->group, x->resource, x->subresource, x->ns, x->name);
    return NULL;
}

/* sk_cel_authorize_fn over an sk_policy_authz. */
static const char *decide(void *z, sk_arena *ar, const sk_cel_authz *chk, const char *verb,
                          int *allowed, const char **reason, const char **error)
{
    const sk_policy_authz *x = z;
    (void)error;
    sk_user sa;
    const char *groups[2];
    const sk_user *user = x->user;
    if (chk->sa_name) {
        if (sk_validate_dns1123_subdomain(chk->sa_name))
            return "Invalid service account name";
        if (sk_validate_dns1123_label(chk->sa_namespace))
            return "Invalid service account namespace";
        groups[0] = "system:serviceaccounts";
        groups[1] = sk_arena_printf(ar, "system:serviceaccounts:%s", chk->sa_namespace);
        sa = (sk_user){.name = sk_arena_printf(ar, "system:serviceaccount:%s:%s", chk->sa_namespace,
                                               chk->sa_name),
                       .uid = "",
                       .groups = groups,
                       .n_groups = 2};
        user = &sa;
    }
    sk_rbac_attrs at = {.user = user, .verb = verb};
    if (chk->stage == SK_CEL_AUTHZ_PATH) {
        at.path = chk->path;
    } else {
        at.resource_request = 1;
        at.group = chk->group ? chk->group : "";
        at.resource = chk->resource ? chk->resource : "";
        at.subresource = chk->subresource ? chk->subresource : "";
        at.ns = chk->namespace ? chk->namespace : "";
        at.name = chk->name ? chk->name : "";
    }
    sk_rbac_decision d = {0, NULL};
    x->authorize(x->authorize_arg, &at, &d);
    *allowed = d.allowed;
    *reason = sk_arena_strdup(ar, d.reason ? d.reason : "");
    sk_rbac_decision_clear(&d);
    return NULL;
}

void sk_policy_authz_options(const sk_policy_authz *z, sk_cel_eval_options *opt)
{
    static const char *const declared[] = {"authorizer.requestResource", NULL};
    int usable = z && z->authorize;
    opt->declared = declared;
    opt->authorize = usable ? decide : NULL;
    opt->authorize_ctx = usable ? (void *)z : NULL;
    opt->format_validate = sk_policy_format_validate; /* admission's environment has it too */
}
