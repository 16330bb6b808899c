/*
 * lifecycle.h - how an object leaves: what a delete does to it, and when an
 * update removes it, with kube-apiserver's generic registry rules
 * (rest.BeforeDelete, Store.Delete, markAsDeleting,
 * deletionFinalizersForGarbageCollection, ShouldDeleteDuringUpdate) and the
 * namespace registry's own.
 *
 * A delete is planned against the stored version it read, and written with
 * that version's revision as precondition, so the plan and the write see the
 * same object; the caller re-reads and re-plans on a conflict. Every caller
 * (the DELETE verb, deletecollection, eviction, the garbage collector, the
 * namespace controller) plans here, so an object with finalizers is marked,
 * never removed, whoever deletes it.
 *
 * The finalizers this module knows: `orphan` and `foregroundDeletion` (what a
 * delete's propagation policy leaves for the garbage collector), a
 * namespace's spec.finalizers (`kubernetes`, removed by the namespace
 * controller through /finalize) and a CustomResourceDefinition's
 * `customresourcecleanup.apiextensions.k8s.io` (its first delete adds it and
 * a Terminating condition; ctl/crd removes it once its objects are gone). Pure: no I/O, time given by the caller.
 */
#ifndef SK_KUBE_LIFECYCLE_H
#define SK_KUBE_LIFECYCLE_H

#include "core/err.h"
#include "kube/options.h"
#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>

#define SK_FINALIZER_ORPHAN "orphan"
#define SK_FINALIZER_FOREGROUND "foregroundDeletion"
#define SK_FINALIZER_NAMESPACE "kubernetes"
/* Held by a CustomResourceDefinition until its custom resources are gone. */
#define SK_FINALIZER_CRD_CLEANUP "customresourcecleanup.apiextensions.k8s.io"

typedef enum {
    SK_DELETE_NOW,     /* remove the stored version */
    SK_DELETE_MARK,    /* write *updated_out: the object stays, being deleted */
    SK_DELETE_PENDING, /* already being deleted as asked: write nothing */
} sk_delete_plan;

/*
 * Plans deleting stored (borrowed, the served form of resource r) with the
 * options d at wall-clock now_s. On SK_OK: *plan_out, and for
 * SK_DELETE_MARK *updated_out (new reference: deletionTimestamp,
 * deletionGracePeriodSeconds, the propagation finalizers; a namespace's
 * Terminating phase). SK_ERR_CONFLICT: a precondition of d does not hold;
 * SK_ERR_FORBIDDEN: a namespace kube never deletes (default, kube-system,
 * kube-public, kube-node-lease); *msg_out (new) is kube's message.
 */
sk_err sk_lifecycle_plan_delete(const sk_resource *r, const json_t *stored,
                                const sk_delete_options *d, int64_t now_s, sk_delete_plan *plan_out,
                                json_t **updated_out, char **msg_out);

/* Non-zero if writing obj over old (both borrowed) removes the object
 * instead: old is being deleted without a grace period still running and
 * obj keeps no finalizer (for a namespace: no spec.finalizers either). */
int sk_lifecycle_update_deletes(const sk_resource *r, const json_t *old, const json_t *obj);

/* Non-zero if obj has metadata.deletionTimestamp. */
int sk_lifecycle_deleting(const json_t *obj);
/* Non-zero if the namespace stored as the JSON text ns (len bytes) takes
 * new content: it is not being deleted (kube's NamespaceLifecycle). Text
 * that does not parse takes it (the key's existence is what was asked). */
int sk_lifecycle_namespace_open(const char *ns, size_t len);
/* Non-zero if metadata.finalizers of obj holds name. */
int sk_lifecycle_has_finalizer(const json_t *obj, const char *name);
/* Removes name from metadata.finalizers of obj (edited); non-zero if it was
 * there. */
int sk_lifecycle_drop_finalizer(json_t *obj, const char *name);

#endif
