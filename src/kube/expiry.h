/*
 * expiry.h - which objects expire, and when (kube-apiserver's policy).
 *
 * A core/v1 Event expires a fixed time after its last write (an etcd
 * lease's TTL in kube-apiserver); an apiserver identity Lease (kube-system,
 * labelled k8s.io/component=kube-apiserver) expires at renewTime +
 * leaseDurationSeconds. Every other object never expires. The writer
 * records the time in the store with the write (sk_write.expires_at_ms),
 * and the collector (ctl/collector.h) deletes what has expired.
 */
#ifndef SK_KUBE_EXPIRY_H
#define SK_KUBE_EXPIRY_H

#include "kube/registry.h"

#include <jansson.h>
#include <stdint.h>

#define SK_IDENTITY_LEASE_NAMESPACE "kube-system"
#define SK_IDENTITY_LEASE_LABEL "k8s.io/component"
#define SK_IDENTITY_LEASE_COMPONENT "kube-apiserver"
/* On the identity Lease of an instance serving the etcd API: its client URL
 * (etcd/members.h lists these as Cluster members). */
#define SK_IDENTITY_ETCD_URL_ANNOTATION "sqlkube.io/etcd-client-url"

/* The sk_write.expires_at_ms for writing obj (borrowed) of resource r at
 * now_ms (wall clock, ms since the epoch): > 0 when it expires, -1 when a
 * resource that can expire does not (clears an earlier expiry), 0 for
 * resources that never expire. */
int64_t sk_expiry_for(const sk_resource *r, const json_t *obj, int64_t event_ttl_s,
                      int64_t now_ms);

#endif
