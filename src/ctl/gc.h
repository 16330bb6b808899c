/*
 * gc.h - the garbage collector: what kube-controller-manager's garbage
 * collector does with metadata.ownerReferences.
 *
 * - A dependent whose owners are all gone (no object of the reference's
 *   kind and name with its uid, looked up where the owner can live: the
 *   dependent's namespace for a namespaced kind, the cluster for a
 *   cluster-scoped one) is deleted (Background), as are the dependents of
 *   an owner deleted with propagationPolicy Background.
 * - An owner being deleted with the `orphan` finalizer: its references are
 *   taken off its dependents, then the finalizer off the owner.
 * - An owner being deleted with `foregroundDeletion`: its dependents are
 *   deleted (Foreground if they have dependents themselves), a dependent
 *   with other live owners only loses the reference; once no dependent with
 *   blockOwnerDeletion is left, the finalizer goes and the owner with it.
 * - A reference the collector cannot resolve (a kind not served, a
 *   namespaced owner of a cluster-scoped dependent) never deletes anything.
 *
 * The collector keeps the references of the objects that have some, from
 * pass to pass, and each pass applies the changes since the last from the
 * watch cache's window (a resource whose changes the window lost is read
 * whole again), so a pass costs what changed, not the size of the store. It
 * confirms an absent owner with a read of the store before deleting for it
 * (the cache may lag a create).
 * All it knows comes from stored objects, so a restart loses nothing, and
 * every write carries the revision it was planned on (ctl/batch.h), so with
 * several instances each deletion happens once. Healthy once a pass has
 * scanned everything.
 */
#ifndef SK_CTL_GC_H
#define SK_CTL_GC_H

#include "ctl/ctl.h"
#include "read/reader.h"
#include "store/store.h"

/* Starts the collector over store and reader (borrowed; must outlive it).
 * It acts on nothing until served_all (the CRD controller, borrowed) is
 * healthy: before every stored CRD is served again after a start, custom
 * resources would go unseen as dependents, so an owner deleted with
 * `orphan` would go before its references were taken off them (which then
 * dangle, and the dependents are collected), and one with
 * `foregroundDeletion` before its blocking dependents. */
sk_ctl *sk_gc_start(sk_store *store, sk_reader *reader, const sk_ctl *served_all);

#endif
