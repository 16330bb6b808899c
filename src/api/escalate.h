/*
 * escalate.h - private to src/api: RBAC's privilege-escalation prevention,
 * the guard kube-apiserver's RBAC storage puts around writes of Roles,
 * ClusterRoles and their bindings.
 *
 * A user may write a Role or ClusterRole only with rules they already hold
 * (in the request's namespace; cluster-wide for a ClusterRole), unless they
 * may `escalate` that resource; a ClusterRole with an aggregationRule (now
 * or before the update) needs every permission. A user may write a binding
 * only to a role whose rules they hold (in the binding's namespace), unless
 * they may `bind` that role (its name is the check's resource name).
 * Members of system:masters skip every check, and so does an update that
 * changes only what the garbage collector changes (owner references,
 * finalizers). The held rules are the authorizer's policy (api/authz.h)
 * at a cache revision no older than the store's when the call began.
 *
 * Only the API's writes pass here: the server's own writers (the bootstrap
 * policy, ctl/rbacpolicy.c) write to the store directly.
 */
#ifndef SK_API_ESCALATE_H
#define SK_API_ESCALATE_H

#include "api/call.h"

#include <jansson.h>

/* Whether call is a write (create, update, patch) the guard will check:
 * of one of the four resources, by a user outside system:masters, with an
 * authorizer. Such a call first lets the watch cache catch up with the
 * store (sk_call_plan_read), so the roles and bindings the guard reads
 * include every change committed before the call began: a role created
 * just before a binding to it is found, as kube's storage read finds it. */
int sk_escalate_guarded(const sk_api_call *call);

/* Checks obj (borrowed, typed, its namespace settled), written by call as
 * a new object (old NULL) or over old (borrowed). 0 to go on; -1 when it
 * replied (403, or 404 for a binding to a missing role). Objects of other
 * resources always go on. */
int sk_escalate_admit(sk_api_call *call, const json_t *obj, const json_t *old);

#endif
