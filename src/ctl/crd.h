/*
 * crd.h - the CustomResourceDefinition controller: what kube-apiserver's
 * apiextensions naming and establishing controllers and its CRD handler do
 * between them. Every instance runs one.
 *
 * A pass reads every CRD from the watch cache (read/reader.h), so a CRD
 * created through another instance sharing PostgreSQL is seen as soon as
 * the feed applies it, and for each one:
 *  - settles its names: NamesAccepted False (reason PluralConflict,
 *    KindConflict, ...) when another CRD of the group already took one of
 *    them, else True and status.acceptedNames = spec.names;
 *  - serves its versions: the watch cache is made to hold its storage key
 *    (cache.h sk_cache_add_resource) before the registry serves it
 *    (kube/registry.h sk_registry_install), so no request finds a
 *    resource the cache does not know;
 *  - writes its status when it changed (conditions NamesAccepted and
 *    Established, as kube words them), read-modify-write with the read
 *    revision as precondition; instances computing the same status write
 *    nothing, and a lost race is redone on the next pass;
 * and stops serving CRDs that are gone. The custom resources of a deleted
 * CRD stay in storage (kube deletes them first, behind a finalizer: not
 * done yet).
 */
#ifndef SK_CTL_CRD_H
#define SK_CTL_CRD_H

#include "cache/cache.h"
#include "ctl/ctl.h"
#include "read/reader.h"
#include "store/store.h"

/* Starts the controller; store, cache and reader are borrowed and must
 * outlive it. Stop it with sk_ctl_stop. */
sk_ctl *sk_crd_start(sk_store *store, sk_cache *cache, sk_reader *reader);

#endif
