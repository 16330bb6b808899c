/*
 * collector.h - the controller that deletes expired objects.
 *
 * Which objects expire is kube/expiry.h's policy; the writer records the
 * time in the store (sk_ttl) with each write, so a restart neither forgets
 * nor extends it (kine restarts the clock). About once a second the
 * collector reads what has expired and deletes it through the normal write
 * path, with the expiring revision as precondition: a write that renewed
 * the object since wins, watchers see a DELETED event, and with several
 * instances on one database exactly one delete happens (the others'
 * preconditions fail). Healthy once a pass has read the store.
 */
#ifndef SK_CTL_COLLECTOR_H
#define SK_CTL_COLLECTOR_H

#include "ctl/ctl.h"
#include "store/store.h"

/* Starts the collector over store (borrowed; must outlive it). */
sk_ctl *sk_collector_start(sk_store *store);

#endif
