/*
 * expiry.h - which objects expire, and the collector that deletes them.
 *
 * Policy (kube-apiserver's): a core/v1 Event expires a fixed time after its
 * last write (etcd leases there); an apiserver identity Lease (kube-system,
 * labelled k8s.io/component=kube-apiserver) expires at renewTime +
 * leaseDurationSeconds. Every other object never expires. The expiry is
 * recorded in the store (sk_ttl) in the same transaction as the write, so
 * a restart neither forgets nor extends it (kine restarts the clock).
 *
 * Collector: one thread per server checks the store about once a second
 * and deletes what has expired through the normal write path, with the
 * expiring revision as precondition: a write that renewed the object since
 * wins, watchers see a DELETED event, and with several instances on one
 * database exactly one delete happens (the others' preconditions fail).
 */
#ifndef SK_API_EXPIRY_H
#define SK_API_EXPIRY_H

#include "api/registry.h"
#include "store/store.h"

#include <jansson.h>
#include <stdint.h>

#define SK_IDENTITY_LEASE_NAMESPACE "kube-system"
#define SK_IDENTITY_LEASE_LABEL "k8s.io/component"
#define SK_IDENTITY_LEASE_COMPONENT "kube-apiserver"

/* The sk_write.expires_at_ms for writing obj (borrowed) of resource r now:
 * > 0 when it expires, -1 when a resource that can expire does not (clears
 * an earlier expiry), 0 for resources that never expire. */
int64_t sk_expiry_for(const sk_resource *r, const json_t *obj, int64_t event_ttl_s);

typedef struct sk_collector sk_collector;
/* Starts the collector over store (borrowed; must outlive it). */
sk_collector *sk_collector_start(sk_store *store);
/* Stops and joins it. NULL-safe. */
void sk_collector_stop(sk_collector *c);
/* Non-zero once the collector has completed a pass (for /healthz). */
int sk_collector_healthy(sk_collector *c);

#endif
