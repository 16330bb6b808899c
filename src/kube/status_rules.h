/*
 * status_rules.h - what kube-apiserver's strategies do with .status and
 * metadata.generation, for every kind, as rules over the registry rather
 * than per-kind code: a kind with a "status" subresource owns its status
 * through that subresource only.
 *
 *  - create: the status the client sent is replaced (PrepareForCreate) by
 *    the zero status as Go's encoding writes it (schema.h's omitempty
 *    facts: a DaemonSet's counts, a Service's loadBalancer: {}), except
 *    Node, which kubelets register with their status; a few kinds start with
 *    a status of their own (Pod: phase Pending and its QoS class; Namespace:
 *    phase Active; PersistentVolume: phase Pending). Kinds that keep a
 *    generation start at 1.
 *  - update of the object itself: the stored status is kept (the client's is
 *    ignored); generation goes up by one when anything but metadata and
 *    status changed.
 *  - update through /status (and the status-like subresources finalize,
 *    approval, ephemeralcontainers): only the part the subresource owns is
 *    taken from the client; the rest is the stored object's.
 *
 * Pure (no I/O). Which kinds keep a generation is a fact of their
 * strategies in Kubernetes 1.32; the table is in status_rules.c.
 */
#ifndef SK_KUBE_STATUS_RULES_H
#define SK_KUBE_STATUS_RULES_H

#include "kube/registry.h"

#include <jansson.h>

/* Non-zero if r has a status subresource (its status is owned there). */
int sk_status_rules_has_status(const sk_resource *r);

/* Non-zero if r's objects carry metadata.generation. */
int sk_status_rules_tracks_generation(const sk_resource *r);

/* A new object (edited): its initial status and generation. */
void sk_status_rules_on_create(const sk_resource *r, json_t *obj);

/* Before admitting obj (edited) as a replacement of old (borrowed) through
 * the object itself: the stored status is kept. */
void sk_status_rules_keep_status(const sk_resource *r, json_t *obj, const json_t *old);

/* After admitting obj (edited) as a replacement of old: generation + 1 if
 * the spec (every top-level field but apiVersion, kind, metadata, status)
 * changed. */
void sk_status_rules_bump_generation(const sk_resource *r, json_t *obj, const json_t *old);

/*
 * The object an update through subresource `sub` (status, finalize,
 * approval, ephemeralcontainers) of r writes: old (borrowed) with the part
 * the subresource owns taken from sent (borrowed), and sent's metadata
 * except what that subresource may not change (labels of the apps kinds'
 * status; a Pod's ownerReferences). A CSR's conditions are its approval's,
 * the rest of its status /status's. Conditions get no lastUpdateTime
 * here (kube stamps missing ones). New reference.
 */
json_t *sk_status_rules_merge(const sk_resource *r, const char *sub, const json_t *sent,
                              const json_t *old);

/* Non-zero if sub is a subresource updated by sk_status_rules_merge. */
int sk_status_rules_is_status_like(const char *sub);

/* A CustomResourceDefinition's strategies: its storage version (the first
 * version with storage: true) is appended to status.storedVersions (edited)
 * unless listed already; the list only grows. */
void sk_status_rules_add_stored_version(json_t *crd);
/* The QoS class of a pod spec: "Guaranteed", "Burstable" or "BestEffort". */
const char *sk_status_rules_pod_qos(const json_t *pod_spec);

#endif
