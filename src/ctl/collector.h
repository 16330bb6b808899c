/*
 * collector.h - the controller that deletes expired objects and etcd leases.
 *
 * Which objects expire is kube/expiry.h's policy; the writer records the
 * time in the store (sk_ttl) with each write, so a restart neither forgets
 * nor extends it (kine restarts the clock). Every 500 ms (as often as etcd
 * checks its leases) the collector reads what has expired and deletes it
 * through the normal write path, with the expiring revision as
 * precondition: a write that renewed the object since wins, watchers see a
 * DELETED event, and with several instances on one database exactly one
 * delete happens (the others' preconditions fail).
 *
 * It expires etcd leases (store/kv.h) the same way: their expiry is an
 * absolute time in the store (sk_lease), and each due lease is expired
 * through the writer, which deletes its keys at one revision only if the
 * lease is still due in that transaction (a keep-alive since wins; another
 * instance that got there first leaves nothing to do). Healthy once a pass
 * has read the store.
 */
#ifndef SK_CTL_COLLECTOR_H
#define SK_CTL_COLLECTOR_H

#include "ctl/ctl.h"
#include "store/store.h"

/* Starts the collector over store (borrowed; must outlive it). */
sk_ctl *sk_collector_start(sk_store *store);

#endif
