/*
 * admission.h - calling the admission webhooks a request reaches, as
 * kube-apiserver 1.32's mutating and validating webhook plugins do: which
 * ones (kube/webhook.h), the AdmissionReview v1 each is sent, what its
 * answer does (allow, deny, patch, warn) and what a failure to call it
 * does (failurePolicy).
 *
 * The configurations are compiled once into a set (sk_hook_set): every
 * webhook's selectors parsed, its caBundle in the file the TLS library
 * reads, its policies read. A set is immutable and refcounted, so requests
 * share one while a newer one replaces it for the requests after them; a
 * request that no webhook's rules cover costs a walk over the rules.
 *
 * A request waits for each webhook it reaches at most that webhook's
 * timeoutSeconds: mutating ones in turn on the request's thread,
 * validating ones in parallel (threads of their own, joined before the
 * answer), so those wait for the slowest.
 */
#ifndef SK_HOOK_ADMISSION_H
#define SK_HOOK_ADMISSION_H

#include "hook/client.h"
#include "hook/endpoint.h"
#include "kube/rbac.h"
#include "kube/webhook.h"

#include <jansson.h>

typedef struct sk_hook_set sk_hook_set;

/* The webhooks of mutating and validating (JSON arrays of Mutating- and
 * ValidatingWebhookConfiguration objects in kube's order, by name;
 * borrowed, referenced by the set), compiled; c (borrowed, outlives the
 * set) keeps their caBundles. One reference, dropped with
 * sk_hook_set_unref. */
sk_hook_set *sk_hook_set_new(sk_hook_client *c, json_t *mutating, json_t *validating);
sk_hook_set *sk_hook_set_ref(sk_hook_set *s);
void sk_hook_set_unref(sk_hook_set *s);

/* 1 if the set has no webhook at all. */
int sk_hook_set_empty(const sk_hook_set *s);

/* 1 if one of the set's mutating (mutating != 0) or validating webhooks
 * has a rule covering a: only then can the request reach one. */
int sk_hook_set_covers(const sk_hook_set *s, int mutating, const sk_webhook_attrs *a);

/* One request as webhooks see it (all borrowed). */
typedef struct sk_hook_review {
    sk_webhook_attrs a;      /* a.object is the object before mutation */
    const sk_resource *res;  /* the resource requested (a's) */
    const char *kind_group, *kind_version, *kind;
    /* The objects are a subresource's own kind (a Scale, an Eviction), the
     * same through every equivalent resource: only the resource differs,
     * nothing is converted. */
    int own_kind;
    const char *name;        /* "" when not known yet (generateName) */
    const json_t *user_info; /* authentication/v1 UserInfo */
    /* The requester, and how matchConditions' authorizer checks are
     * decided: *out filled for a (borrowed; a->user the requester or a
     * service account). NULL: such a check is an error. */
    const sk_user *user;
    void (*authorize)(void *arg, const sk_rbac_attrs *a, sk_rbac_decision *out);
    void *authorize_arg;
    const json_t *options;   /* CreateOptions, UpdateOptions, DeleteOptions, or NULL */
    int dry_run;
    /* The labels of Namespace ns for a namespaceSelector: 0 with *labels
     * (borrowed until the request ends; NULL: none), or -1 when it does
     * not exist. Asked only when a webhook's namespaceSelector needs it,
     * on the request's thread. */
    int (*ns_labels)(void *arg, const char *ns, const json_t **labels);
    void *ns_labels_arg;
    /* clientConfig.service: the address ("IP:PORT", new) serving port of
     * Service ns/name, or -1 with *why (new) saying why there is none */
    sk_hook_resolve_fn resolve;
    void *resolve_arg;
    /* obj (borrowed, in from's version) in to's version for a webhook
     * reached through an equivalent resource: NULL with *out (new), or why
     * it cannot be (new: a CRD's conversion webhook failed). NULL: through
     * kube/convert.h's rewrites. */
    char *(*convert)(void *arg, const sk_resource *from, const sk_resource *to, const json_t *obj,
                     json_t **out);
    void *convert_arg;
    /* Called on the object after each patch that changed it, before the
     * next webhook sees it (kube decodes and defaults each patched object);
     * NULL: nothing. */
    void (*settle)(void *arg, json_t *obj);
    void *settle_arg;
} sk_hook_review;

/* The AdmissionRequest of rv (its objects as a says) as CEL sees it
 * (`request`, for match conditions and ValidatingAdmissionPolicies): the
 * fields a webhook is sent but its uid and objects, typed zero values where
 * JSON would leave one out; for a rule matched through an equivalent
 * resource eq (NULL: none), kind and resource in eq's version, the
 * request's kept as requestKind and requestResource. New, with *obj and
 * *old (new or NULL) the objects in that version, or NULL with *status
 * (new) when they cannot be converted. */
json_t *sk_hook_request(const sk_hook_review *rv, const sk_webhook_attrs *a,
                        const sk_resource *eq, json_t **obj, json_t **old, json_t **status);

/*
 * Runs the mutating webhooks of s in order, and once more those with
 * reinvocationPolicy IfNeeded that a later webhook's change followed. Each
 * JSONPatch answer is applied to *obj (replaced, the old reference
 * released; NULL for a DELETE), and *changed set when one changed it;
 * warnings (an array) gets every warning sent, annotations (an object) the
 * request's audit annotations as kube's dispatcher records them at the
 * Metadata level: each webhook's own auditAnnotations as "NAME/KEY" (keys
 * that are not qualified names left out, logged), every call's
 * mutation.webhook.admission.k8s.io/round_R_index_I, and a failure that
 * failed open as failed-open.mutation.webhook.admission.k8s.io/... (kube's
 * patch.webhook.admission.k8s.io/ ones are Request level, not kept).
 * Returns NULL when the request goes on, or the Status (new) to answer
 * with.
 */
json_t *sk_hook_mutate(sk_hook_client *c, const sk_hook_set *s, const sk_hook_review *rv,
                       json_t **obj, json_t *warnings, json_t *annotations, int *changed);

/* Runs the validating webhooks of s on rv; NULL or the Status (new) to
 * answer with, as above (a failure failing open is recorded as
 * failed-open.validating.webhook.admission.k8s.io/round_0_index_I, I
 * among the webhooks reached). */
json_t *sk_hook_validate(sk_hook_client *c, const sk_hook_set *s, const sk_hook_review *rv,
                         json_t *warnings, json_t *annotations);

#endif
