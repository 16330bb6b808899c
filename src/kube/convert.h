/*
 * convert.h - conversion between a served version and the form its objects
 * are stored in, for the resources that share storage with another one
 * (r->stored_as != r): events.k8s.io/v1 Events stored as core v1 Events,
 * autoscaling/v1 HorizontalPodAutoscalers stored as autoscaling/v2.
 *
 * The API converts at its edges: a written object goes from the URL's
 * version to the stored form before the store sees it, and every object
 * read (get, list items, watch events, write replies) goes from the stored
 * form to the version asked for. Everything else (admission, patches) works
 * on the served form, as kube-apiserver's does on the versioned object.
 *
 * Pure: JSON in, JSON out; the input is never modified.
 */
#ifndef SK_KUBE_CONVERT_H
#define SK_KUBE_CONVERT_H

#include "kube/registry.h"

#include <jansson.h>

/* Non-zero if objects of r are stored in another resource's form. */
int sk_convert_needed(const sk_resource *r);

/* obj (borrowed) in r's form, as stored (r->stored_as's form, with its
 * apiVersion and kind). New reference; a copy of obj when no conversion
 * is needed. */
json_t *sk_convert_to_stored(const sk_resource *r, const json_t *obj);

/* stored (borrowed, in r->stored_as's form) in r's form, with r's
 * apiVersion and kind. New reference. */
json_t *sk_convert_from_stored(const sk_resource *r, const json_t *stored);

/* The metric an HPA has when it names none (autoscaling/v1's implicit
 * target, autoscaling/v2's default): CPU at 80 % utilization. New reference. */
json_t *sk_convert_default_cpu_metric(void);

#endif
