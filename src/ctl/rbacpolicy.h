/*
 * rbacpolicy.h - the RBAC policy controller: what kube-apiserver's
 * rbac/bootstrap-roles post-start hook and kube-controller-manager's
 * clusterrole-aggregation controller do.
 *
 * Bootstrap: every role and binding of kube/rbac_bootstrap.h that is
 * missing is created; one that exists and does not opt out (autoupdate
 * "false") is reconciled as kube does: its missing labels, annotations,
 * rules, aggregation selectors and subjects are added, nothing is removed.
 * Creates of an existing object and stale updates fail harmlessly
 * (ctl/batch.h), so with several instances on one database each change is
 * made once. Healthy (/readyz poststarthook/rbac/bootstrap-roles) once a
 * pass found nothing left to create or reconcile.
 *
 * Aggregation: every pass, a ClusterRole with an aggregationRule gets as
 * rules those of the ClusterRoles its selectors match (kube/rbac.h
 * sk_rbac_aggregate), written when they differ; chains (view into edit
 * into admin) settle over successive passes, which come quickly while
 * anything changes and once a second otherwise.
 */
#ifndef SK_CTL_RBACPOLICY_H
#define SK_CTL_RBACPOLICY_H

#include "ctl/ctl.h"
#include "read/reader.h"
#include "store/store.h"

/* Starts the controller over store and reader (borrowed; must outlive it). */
sk_ctl *sk_rbacpolicy_start(sk_store *store, sk_reader *reader);

#endif
