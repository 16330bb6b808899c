/*
 * rbac.h - Kubernetes RBAC, pure: does a policy (Roles, ClusterRoles and
 * their bindings) allow a request, and which rules does it give a user.
 *
 * The policy is a JSON value built with sk_rbac_policy_add from the stored
 * objects (the authorizer's index, api/authz.c, builds one at start and
 * derives a new one per change with sk_rbac_policy_with, sharing each
 * read-only between request threads;
 * tests build them by hand). Evaluation follows kube's rbac authorizer:
 * cluster role bindings first, then the role bindings of the request's
 * namespace; the first rule that allows decides; a binding whose role is
 * missing is an evaluation error, reported, never fatal. Members of
 * system:masters are allowed before RBAC is consulted, as kube-apiserver's
 * privileged-groups authorizer does.
 */
#ifndef SK_KUBE_RBAC_H
#define SK_KUBE_RBAC_H

#include "core/buf.h"
#include "kube/user.h"

#include <jansson.h>

/* What a request asks to do (kube's authorizer.Attributes). Strings
 * borrowed; "" for an absent one (NULL is taken as ""). */
typedef struct sk_rbac_attrs {
    const sk_user *user;
    const char *verb; /* "get", "list", "watch", "create", ...; non-resource: "get", "post" */
    int resource_request;
    const char *group, *resource, *subresource, *ns, *name; /* resource requests */
    const char *path;                                        /* non-resource requests */
} sk_rbac_attrs;

/* Whether the JSON array list holds the string s (rules' verbs, groups,
 * resources, names). */
int sk_rbac_list_has(const json_t *list, const char *s);

/* An empty policy. New reference. */
json_t *sk_rbac_policy_new(void);
/* Adds obj (borrowed; a reference is kept), an object of resource
 * "roles", "clusterroles", "rolebindings" or "clusterrolebindings". */
void sk_rbac_policy_add(json_t *policy, const char *resource, json_t *obj);
/* A new policy: policy (borrowed, left as it is: readers may hold it) with
 * one object of resource changed from old_obj to new_obj (borrowed; NULL
 * old: added, NULL new: deleted). It shares every map and list the change
 * does not touch with policy, so a change costs the maps along its path
 * (the namespaces, one namespace's roles or one scope's subjects), not a
 * rebuild; and it equals the policy built from scratch from the objects
 * after the change. */
json_t *sk_rbac_policy_with(const json_t *policy, const char *resource, json_t *old_obj,
                            json_t *new_obj);

typedef struct sk_rbac_decision {
    int allowed;
    /* new (free()); kube's reason: which binding allowed, or the roles a
     * denial found missing; "" when none */
    char *reason;
} sk_rbac_decision;

/* Decides a (borrowed) against policy (borrowed). Fills *out. */
void sk_rbac_authorize(const json_t *policy, const sk_rbac_attrs *a, sk_rbac_decision *out);
void sk_rbac_decision_clear(sk_rbac_decision *d);

/* Appends kube's denial text for a: `User "bob" cannot list resource
 * "configmaps" in API group "" in the namespace "default"` (or "at the
 * cluster scope", or `cannot get path "/x"`). */
void sk_rbac_forbidden_text(const sk_rbac_attrs *a, sk_buf *out);

/* The rules policy gives user in namespace ns ("" for cluster-wide only)
 * as a SubjectRulesReviewStatus: {resourceRules, nonResourceRules,
 * incomplete, evaluationError?}. New reference. */
json_t *sk_rbac_rules_review(const json_t *policy, const sk_user *user, const char *ns);

/* Every rule policy gives user in namespace ns ("" for cluster-wide only),
 * in kube's order: cluster role bindings', then the namespace's. New array.
 * *errors is set to NULL, or to new text (free()) naming the roles the
 * user's bindings refer to that are missing, kube's aggregate form. */
json_t *sk_rbac_rules_for(const json_t *policy, const sk_user *user, const char *ns,
                          char **errors);

/* The rules of the role a roleRef of kind ("Role" or "ClusterRole") and
 * name refers to from a binding in namespace ns ("" for a cluster role
 * binding); borrowed from policy (JSON null for a role without rules),
 * NULL when policy has no such role. */
const json_t *sk_rbac_role_rules(const json_t *policy, const char *kind, const char *ns,
                                 const char *name);

/* The rules of ClusterRole role (borrowed, one with an aggregationRule)
 * aggregated from roles (borrowed array of ClusterRoles, in name order):
 * the rules of every other role its selectors match, each rule once.
 * New reference (an array). */
json_t *sk_rbac_aggregate(const json_t *role, const json_t *roles);

#endif
