/*
 * conversion.h - calling a CustomResourceDefinition's conversion webhook
 * (spec.conversion.strategy Webhook), as kube-apiserver 1.32's
 * apiextensions conversion does (delegatingCRConverter over the webhook
 * converter): the objects not yet in the desired version go in one
 * ConversionReview (v1, or v1beta1 when that is the first version the CRD
 * offers), the answer is checked (kind, uid, result, count, each object's
 * apiVersion, kind, name, namespace and uid) and each converted object
 * takes the original's metadata back, but for its labels and annotations.
 * Every failure is worded as kube words it.
 *
 * Where the webhook is reached is hook/endpoint.h's, as for admission
 * webhooks. Pure otherwise: the objects are borrowed, never changed.
 */
#ifndef SK_HOOK_CONVERSION_H
#define SK_HOOK_CONVERSION_H

#include "hook/endpoint.h"

#include <jansson.h>

/* One conversion (all borrowed). */
typedef struct sk_hook_conversion {
    const char *desired;   /* desiredAPIVersion: "group/version" */
    const json_t *objects; /* an array of objects, each with apiVersion and kind */
    /* a list's items: the list's "group/version, Kind=KindList", as kube's
     * messages name it; NULL: one object, named by its own kind */
    const char *list_gvk;
    sk_hook_resolve_fn resolve;
    void *resolve_arg;
} sk_hook_conversion;

/* Converts conv's objects to conv->desired through the webhook of the
 * CRD's spec.conversion.webhook (borrowed), c calling it; objects already
 * in the desired version are not sent (and when none is left, nothing
 * is). SK_OK: *out (new) is the array in the desired version, in the same
 * order. Otherwise *msg (new) is kube's error text. */
sk_err sk_hook_convert(sk_hook_client *c, const json_t *webhook, const sk_hook_conversion *conv,
                       json_t **out, char **msg);

#endif
