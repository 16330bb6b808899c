/*
 * crd.h - the CustomResourceDefinition controller: what kube-apiserver's
 * apiextensions naming and establishing controllers and its CRD handler do
 * between them. Every instance runs one.
 *
 * A pass reads every CRD from the watch cache (read/reader.h) as soon as
 * the cache applies a new revision, so a CRD created through another
 * instance sharing PostgreSQL is seen as soon as the feed applies it, and
 * for each one:
 *  - settles its names: NamesAccepted False (reason PluralConflict,
 *    KindConflict, ...) when another CRD of the group already took one of
 *    them, else True and status.acceptedNames = spec.names;
 *  - serves its versions: the watch cache is asked to hold its storage key
 *    (cache.h sk_cache_want_resource; Established False, Installing, until
 *    it does, a pass or a few later) before the registry serves it
 *    (kube/registry.h sk_registry_install), so no request finds a
 *    resource the cache does not know; /readyz's
 *    poststarthook/crd-informer-synced passes once every stored CRD that
 *    can be is served;
 *  - writes its status when it changed (conditions NamesAccepted and
 *    Established, as kube words them), read-modify-write with the read
 *    revision as precondition; instances computing the same status write
 *    nothing, and a lost race is redone on the next pass;
 * and stops serving CRDs that are gone. A CRD being deleted (its first
 * delete added the customresourcecleanup finalizer, kube/lifecycle.h) is
 * served for reads and deletes only while its custom resources are deleted
 * through ctl/batch.h (each with the revision read as precondition, so one
 * deletion across instances); once none is left its Terminating condition
 * says InstanceDeletionCompleted and the finalizer goes, which removes it.
 */
#ifndef SK_CTL_CRD_H
#define SK_CTL_CRD_H

#include "cache/cache.h"
#include "ctl/ctl.h"
#include "read/reader.h"
#include "store/store.h"

/*
 * The storage keys ("plural.group") of the CRDs stored at the current
 * revision, for the watch cache to hold from its start (so that it can
 * replay their history after a restart, as it does the built-in kinds').
 * *out: a new NULL-terminated array of new strings (free each, then it).
 */
sk_err sk_crd_stored_storages(sk_store *store, char ***out);

/* Starts the controller; store, cache and reader are borrowed and must
 * outlive it. on_pass(on_pass_arg), if given, runs on the controller's
 * thread after a pass changed what sk_crd_settled answers (the server
 * wakes calls parked on it). Stop it with sk_ctl_stop. */
sk_ctl *sk_crd_start(sk_store *store, sk_cache *cache, sk_reader *reader,
                     void (*on_pass)(void *arg), void *on_pass_arg);

/* Non-zero once a pass that read the cache at revision rev or later left
 * the CRD name settled: served as stored, refused for its names, served
 * as terminating (being deleted: creates refused) or gone; not waiting for
 * the cache to hold its resource. The API answers a CRD write when this
 * holds for its revision, so a client's next request finds the resource as
 * written. Any thread. */
int sk_crd_settled(sk_ctl *crd, const char *name, int64_t rev);

#endif
