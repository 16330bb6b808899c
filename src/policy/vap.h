/*
 * vap.h - ValidatingAdmissionPolicies (admissionregistration.k8s.io/v1)
 * applied to a request as kube-apiserver 1.32's validating policy plugin
 * applies them (admission/plugin/policy/validating): which policy and
 * binding a request reaches (matchConstraints, the binding's
 * matchResources, matchConditions), the params each binding brings, the
 * variables, each validation's verdict and what the binding's
 * validationActions make of a failure (a refusal, a Warning, an audit
 * annotation), the policy's auditAnnotations, and failurePolicy for what
 * cannot be evaluated.
 *
 * The stored policies and bindings are compiled once into a set: every
 * expression parsed, every selector parsed, each binding tied to its
 * policy. A set is immutable and refcounted, so requests share one while a
 * newer one replaces it for the requests after them. Nothing here does
 * I/O: the namespace and the params come through the request's callbacks.
 */
#ifndef SK_POLICY_VAP_H
#define SK_POLICY_VAP_H

#include "kube/selector.h"
#include "policy/authorizer.h"
#include "kube/webhook.h"

#include <jansson.h>

typedef struct sk_vap_set sk_vap_set;

/* The policies and bindings (JSON arrays of ValidatingAdmissionPolicy and
 * ValidatingAdmissionPolicyBinding objects, by name; borrowed, referenced
 * by the set), compiled. One reference, dropped with sk_vap_set_unref. */
sk_vap_set *sk_vap_set_new(json_t *policies, json_t *bindings);
sk_vap_set *sk_vap_set_ref(sk_vap_set *s);
void sk_vap_set_unref(sk_vap_set *s);

/* 1 if a policy has a binding: only then is anything applied. */
int sk_vap_set_any(const sk_vap_set *s);

/* 1 if a policy with a binding has a resourceRule covering a on the
 * object named name: only then can the request reach one. */
int sk_vap_set_covers(const sk_vap_set *s, const sk_webhook_attrs *a, const char *name);

/* Finds the params of a binding: the objects of kind api_version/kind in
 * namespace ns ("" for cluster-scoped ones; the callee knows the kind's
 * scope, and receives the request's namespace as ns_default) named name,
 * or, name NULL, those sel (borrowed; NULL: all) selects. 0 with *out (new
 * array, possibly empty), or -1 with *why (new), kube's configuration
 * error. */
typedef int (*sk_vap_params_fn)(void *arg, const char *api_version, const char *kind,
                                const char *ns, const char *ns_default, const char *name,
                                const sk_label_selector *sel, json_t **out, char **why);

/* The request as a policy matched through resource eq (NULL: the
 * request's own) sees it: 0 with *request (the AdmissionRequest, kind and
 * resource eq's), *object and *old (NULL where the operation has none), all
 * new, the objects converted to eq's version; or -1 with *why (new). */
typedef int (*sk_vap_versioned_fn)(void *arg, const sk_resource *eq, json_t **request,
                                   json_t **object, json_t **old, char **why);

/* One request as policies see it (all borrowed). */
typedef struct sk_vap_request {
    sk_webhook_attrs a; /* its objects are what the selectors judge */
    const char *name;   /* "" before a name is generated */
    sk_vap_versioned_fn versioned;
    void *versioned_arg;
    /* The request's Namespace (a.ns; a Namespace's own requests use their
     * object): 0 with *ns (borrowed until the request ends), -1 when it does
     * not exist. */
    int (*ns_object)(void *arg, const char *ns, const json_t **ns_obj);
    void *ns_arg;
    sk_vap_params_fn params;
    void *params_arg;
    /* what the expressions' authorizer decides with (NULL: checks are
     * errors) */
    const sk_policy_authz *authz;
} sk_vap_request;

/*
 * Applies s to rq: warnings (an array) gets each Warn action's text,
 * annotations (an object) the Audit actions' validation_failure and the
 * policies' auditAnnotations ("POLICY/KEY"). Returns NULL when the request
 * goes on, or the Status (new) of the first denial, as kube words it:
 * "ValidatingAdmissionPolicy 'P' with binding 'B' denied request: MSG" in
 * a Forbidden whose reason and code are the validation's (Invalid, 422, by
 * default).
 */
json_t *sk_vap_validate(const sk_vap_set *s, const sk_vap_request *rq, json_t *warnings,
                        json_t *annotations);

#endif
