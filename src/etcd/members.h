/*
 * members.h - the etcd face's cluster membership: who the members are for
 * Cluster/MemberList, and this member's id in every response header.
 *
 * A member is a running sqlkube serving the etcd API on the same store.
 * There is no raft membership to read, so the instances' apiserver identity
 * Leases (ctl/identity.h; kube-system, labelled k8s.io/component=
 * kube-apiserver) are the roster: an instance serving the etcd face records
 * its client URL in its lease's SK_IDENTITY_ETCD_URL_ANNOTATION. Leases
 * already follow the instances (renewed while one runs, collected when it
 * stopped renewing), are shared by every instance on one PostgreSQL, and
 * stay inspectable with kubectl. A member that stopped is listed until its
 * lease expires, as an etcd member stays listed until it is removed.
 *
 * A member's id is a hash of its client URL: stable across restarts,
 * distinct for two instances on one host (the lease's name is not: it
 * hashes the host name), and known to every instance from the lease alone.
 */
#ifndef SK_ETCD_MEMBERS_H
#define SK_ETCD_MEMBERS_H

#include "core/arena.h"
#include "store/store.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sk_etcd_member {
    uint64_t id;
    const char *name;       /* the instance's host name */
    const char *client_url; /* http(s)://HOST:PORT */
} sk_etcd_member;

/* The client URL of a face listening on listen ("HOST:PORT", optionally
 * "http://HOST:PORT"), https if tls: a wildcard host becomes this host's
 * name, which other instances can reach. Written to out (n bytes). */
void sk_etcd_client_url(const char *listen, int tls, char *out, size_t n);

/* A stable 64-bit id from a name (FNV-1a): a member's from its client URL,
 * the cluster's from a fixed name. */
uint64_t sk_etcd_id_of(const char *name);

/* The members (arena a), sorted by id as etcd lists them, self included
 * even before its lease is written. On a store error nothing is written. */
sk_err sk_etcd_members(sk_store *store, const sk_etcd_member *self, sk_arena *a,
                       sk_etcd_member **out, size_t *n_out);

#endif
