/*
 * admission.h - calling the admission webhooks a request reaches, as
 * kube-apiserver 1.32's mutating and validating webhook plugins do: which
 * ones (kube/webhook.h), the AdmissionReview v1 each is sent, what its
 * answer does (allow, deny, patch, warn) and what a failure to call it
 * does (failurePolicy).
 *
 * A request waits for each webhook it reaches at most that webhook's
 * timeoutSeconds: mutating ones in turn on the request's thread,
 * validating ones in parallel (threads of their own, joined before the
 * answer), so those wait for the slowest.
 */
#ifndef SK_HOOK_ADMISSION_H
#define SK_HOOK_ADMISSION_H

#include "hook/client.h"
#include "kube/webhook.h"

#include <jansson.h>

/* One request as webhooks see it (all borrowed). */
typedef struct sk_hook_review {
    sk_webhook_attrs a;      /* a.object is the object before mutation */
    const char *kind_group, *kind_version, *kind;
    const char *name;        /* "" when not known yet (generateName) */
    const json_t *user_info; /* authentication/v1 UserInfo */
    const json_t *options;   /* CreateOptions, UpdateOptions, DeleteOptions, or NULL */
    int dry_run;
    /* the namespace's labels for namespaceSelector (a.ns's Namespace), or
     * ns_missing when it does not exist */
    const json_t *ns_labels;
    int ns_missing;
    /* clientConfig.service: the address ("IP:PORT", new) serving port of
     * Service ns/name, or -1 with *why (new) saying why there is none */
    int (*resolve)(void *arg, const char *ns, const char *name, int port, char **addr,
                   char **why);
    void *resolve_arg;
    /* Called on the object after each patch that changed it, before the
     * next webhook sees it (kube decodes and defaults each patched object);
     * NULL: nothing. */
    void (*settle)(void *arg, json_t *obj);
    void *settle_arg;
} sk_hook_review;

/*
 * Runs the mutating webhooks of configs (a JSON array of
 * MutatingWebhookConfiguration objects, borrowed) in order, and once more
 * those with reinvocationPolicy IfNeeded that a later webhook's change
 * followed. Each JSONPatch answer is applied to *obj (replaced, the old
 * reference released; NULL for a DELETE); warnings (an array) gets every
 * warning sent. Returns NULL when the request goes on, or the Status
 * (new) to answer with.
 */
json_t *sk_hook_mutate(sk_hook_client *c, const json_t *configs, const sk_hook_review *rv,
                       json_t **obj, json_t *warnings);

/* Runs the validating webhooks of configs (ValidatingWebhookConfiguration
 * objects) on rv; NULL or the Status (new) to answer with, as above. */
json_t *sk_hook_validate(sk_hook_client *c, const json_t *configs, const sk_hook_review *rv,
                         json_t *warnings);

#endif
