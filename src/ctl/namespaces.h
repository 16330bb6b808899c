/*
 * namespaces.h - the namespace controller: what kube-controller-manager's
 * namespace and service-account controllers do for namespaces.
 *
 * A namespace being deleted (the API marked it Terminating, kube/lifecycle.h)
 * is emptied: every object in it, of every namespaced resource, is deleted
 * as a client's DELETE would (objects with finalizers are marked and waited
 * for), its status carries kube's five deletion conditions while content
 * remains, and once nothing is left the `kubernetes` finalizer is dropped,
 * which removes the namespace (or leaves it to the garbage collector's
 * finalizers). An active namespace without a `default` ServiceAccount gets
 * one.
 *
 * Nothing lives only in memory: each pass reads the namespaces and their
 * content afresh (from the watch cache), so a restart in the middle of a
 * deletion carries on where the store says it is, and with several
 * instances on one database every write's precondition makes each deletion
 * happen once (ctl/batch.h). Healthy once a pass has read the namespaces.
 */
#ifndef SK_CTL_NAMESPACES_H
#define SK_CTL_NAMESPACES_H

#include "ctl/ctl.h"
#include "read/reader.h"
#include "store/store.h"

/* Starts the controller over store and reader (borrowed; must outlive it).
 * It finalizes no namespace until served_all (the CRD controller, borrowed)
 * is healthy: before every stored CRD is served again after a start, a
 * namespace's custom resources would go unseen and the namespace would go
 * before them. */
sk_ctl *sk_namespaces_start(sk_store *store, sk_reader *reader, const sk_ctl *served_all);

#endif
