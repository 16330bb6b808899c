/*
 * identity.h - this server's apiserver identity Lease (KEP-1965).
 *
 * Every running sqlkube holds a coordination.k8s.io/v1 Lease in
 * kube-system named kube-apiserver-<hash of the hostname> (stable across
 * restarts on one host), labelled k8s.io/component=kube-apiserver and
 * kubernetes.io/hostname=<host>, whose holderIdentity is generated anew at
 * every start. A thread renews it every renew interval; its expiry
 * (renewTime + leaseDurationSeconds) is recorded with each write, and the
 * collector (collector.h) deletes the leases of servers that stopped
 * renewing. Healthy once the lease has been written. A server serving the
 * etcd API names its client URL in the lease's
 * SK_IDENTITY_ETCD_URL_ANNOTATION: the leases are the etcd face's member
 * list (etcd/members.h).
 */
#ifndef SK_CTL_IDENTITY_H
#define SK_CTL_IDENTITY_H

#include "ctl/ctl.h"
#include "store/store.h"

#include <stdint.h>

typedef struct sk_identity_config {
    const char *hostname; /* NULL: gethostname() */
    int64_t duration_s;   /* leaseDurationSeconds */
    int64_t renew_s;      /* heartbeat */
    const char *etcd_client_url; /* NULL: this server has no etcd face */
} sk_identity_config;

/* Starts the controller over store (borrowed; must outlive it). Stopping
 * it leaves the lease to expire. */
sk_ctl *sk_identity_start(sk_store *store, const sk_identity_config *cfg);


#endif
