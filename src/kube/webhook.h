/*
 * webhook.h - the pure half of admission webhooks (admissionregistration/v1):
 * which webhook a request reaches (rules, namespaceSelector,
 * objectSelector), what a webhook's answer must look like, and the Status
 * texts kube-apiserver 1.32 answers with (k8s.io/apiserver/pkg/admission/plugin/webhook). Calling a webhook is
 * hook/'s and a configuration's validation is kube/validate.c's; nothing
 * here does I/O, so all of it is unit-tested.
 */
#ifndef SK_KUBE_WEBHOOK_H
#define SK_KUBE_WEBHOOK_H

#include "core/err.h"
#include "kube/registry.h"
#include "kube/selector.h"

#include <jansson.h>

/* What a request is, as the matchers see it (admission.Attributes). All
 * borrowed. */
typedef struct sk_webhook_attrs {
    const char *operation; /* "CREATE", "UPDATE", "DELETE", "CONNECT" */
    const char *group, *version, *resource, *subresource; /* subresource "" for none */
    const char *ns;                                       /* "" for cluster-scoped */
    const json_t *object, *old_object;                    /* NULL when the operation has none */
    /* the other resources sharing its storage (sk_webhook_equivalents),
     * for matchPolicy Equivalent */
    const sk_resource *const *equivalents;
    size_t n_equivalents;
} sk_webhook_attrs;

/* rules.Matcher: 1 if one of hook's rules (operations, apiGroups,
 * apiVersions, resources with "*", "r/sub", "r/ *", "* / *" and scope)
 * covers a. */
int sk_webhook_rules_match(const json_t *hook, const sk_webhook_attrs *a);

/* The same for a list of rules (borrowed), a ValidatingAdmissionPolicy's
 * resourceRules or excludeResourceRules: a rule with resourceNames covers
 * only a request on one of them (name NULL or "": none does). */
int sk_webhook_rule_list_match(const json_t *rules, const sk_webhook_attrs *a, const char *name);

/* kube's EquivalentResourceMapper: up to max resources other than r that
 * share its storage (another version or group of the same objects), with
 * subresource too ("" for none), in the registry's order; their count. */
#define SK_WEBHOOK_MAX_EQUIVALENTS 8
size_t sk_webhook_equivalents(const sk_resource *r, const char *subresource,
                              const sk_resource **out, size_t max);

/* matchPolicy Equivalent (the default; Exact: never): the first of a's
 * equivalents one of hook's rules covers, rules in order (as kube's
 * ShouldCallHook), or NULL. For a webhook whose rules do not cover a
 * itself. */
const sk_resource *sk_webhook_equivalent_match(const json_t *hook, const sk_webhook_attrs *a);
/* The same for a list of rules, whatever the matchPolicy (the caller's
 * to check), resourceNames judged against name. */
const sk_resource *sk_webhook_rule_list_equivalent(const json_t *rules, const sk_webhook_attrs *a,
                                                   const char *name);

/* 1 if group/resource holds webhook configurations (validating or
 * mutating) or ValidatingAdmissionPolicies or their bindings: their writes
 * change what later requests go through. */
int sk_webhook_is_configuration(const char *group, const char *resource);

/* 1 if the request on a configuration itself: kube never sends those to
 * webhooks, so a broken webhook can always be removed. */
int sk_webhook_exempt(const sk_webhook_attrs *a);

/* A metav1.LabelSelector (borrowed; NULL or {} selects everything)
 * compiled once, for every request to come: *out (new, freed with
 * sk_label_selector_free) is NULL when it selects everything.
 * SK_ERR_BAD_REQUEST (*msg new) when it does not parse. */
sk_err sk_webhook_selector_compile(const json_t *selector, sk_label_selector **out, char **msg);

/* 1 if a namespaceSelector judges a: a namespaced request, or one on a
 * Namespace. The labels it judges are a's object's for a create or update
 * of a Namespace itself (sk_webhook_ns_labels_from_object), else its
 * namespace's. */
int sk_webhook_ns_selector_applies(const sk_webhook_attrs *a);
int sk_webhook_ns_labels_from_object(const sk_webhook_attrs *a);

/* objectSelector sel (borrowed, NULL: everything): 1 if it selects a's
 * object or its old object. */
int sk_webhook_object_selected(const sk_label_selector *sel, const sk_webhook_attrs *a);

/* The AdmissionReview answer to the request with uid, checked as kube's
 * VerifyAdmissionResponse does: a v1 answer (a validating webhook may send
 * no patch), or for a v1beta1 request only that there is a response (its
 * patch, if any, is a JSONPatch whatever patchType says; a validating
 * webhook's is ignored).
 * On success *response (borrowed from review) is its response; else
 * SK_ERR_BAD_REQUEST and *msg (new) says why, in kube's words. */
sk_err sk_webhook_check_response(const json_t *review, const char *uid, int mutating, int v1beta1,
                                 const json_t **response, char **msg);

/* The Status a denial by webhook name answers with (errors.ToStatusErr):
 * the webhook's result with its code at least 400, status Failure, and
 * "admission webhook \"NAME\" denied the request: MESSAGE". New. */
json_t *sk_webhook_denial_status(const char *name, const json_t *result);

/* apierrors.NewInternalError: 500, "Internal error occurred: REASON",
 * REASON as its one cause. New. */
json_t *sk_webhook_internal_status(const char *reason);

/* The 500 a webhook that could not be called answers with under
 * failurePolicy Fail (apierrors.NewInternalError of ErrCallingWebhook):
 * "Internal error occurred: failed calling webhook \"NAME\": REASON". New. */
json_t *sk_webhook_failure_status(const char *name, const char *reason);

/* kube's 400 for a dry run reaching a webhook with side effects. New. */
json_t *sk_webhook_dry_run_status(const char *name);

/* Records an admission audit annotation in ann (an object, edited), as
 * kube's AttributesRecord.AddAnnotation does: the key must be a qualified
 * name with exactly one '/' ("<webhook name>/<key>" for a webhook's own
 * auditAnnotations), and a key already set keeps its first value.
 * SK_ERR_INVALID with *msg (new, kube's text) when refused. */
sk_err sk_webhook_annotate(json_t *ann, const char *key, const char *value, char **msg);

#endif
