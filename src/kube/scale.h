/*
 * scale.h - the autoscaling/v1 Scale view of a scalable object (Deployment,
 * ReplicaSet, StatefulSet, ReplicationController, custom resources with a
 * scale subresource: their CRD's paths), as kube-apiserver serves
 * at .../{name}/scale, and what writing a Scale does to the object: only
 * spec.replicas changes.
 *
 * Pure (no I/O). The selector string is the parent's selector in label
 * selector syntax (requirements sorted by key, values of a set sorted),
 * what `kubectl get --selector` and HPAs read back.
 */
#ifndef SK_KUBE_SCALE_H
#define SK_KUBE_SCALE_H

#include "core/err.h"
#include "kube/registry.h"

#include <jansson.h>

/* The Scale of parent (borrowed), an object of r. New reference. */
json_t *sk_scale_view(const sk_resource *r, const json_t *parent);

/* Applies scale (borrowed, a decoded Scale) to parent (edited), an object of
 * r: its spec.replicas (a custom resource's specReplicasPath). SK_ERR_BAD_REQUEST for another kind, SK_ERR_INVALID for a
 * replicas count that is not a non-negative integer; *msg new. */
sk_err sk_scale_apply(const sk_resource *r, const json_t *scale, json_t *parent, char **msg);

/* A label selector (metav1.LabelSelector, or a plain map when is_map) as a
 * selector string. New string (free()). */
char *sk_scale_selector_string(const json_t *selector, int is_map);

#endif
