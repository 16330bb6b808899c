/*
 * authz.h - private to src/api: authorization. Who may do what is decided
 * by kube/rbac.h over an index of the Roles, ClusterRoles and bindings
 * kept from the watch cache, so a check costs no SQL.
 *
 * The index is an immutable policy (kube/rbac.h's JSON) with the cache
 * revision and generation it was built at. A check asks the cache whether
 * any of the four RBAC resources has an event after that revision (one
 * short look at the event window per resource); if none did, the policy
 * still holds and only its revision moves; if one did (or the cache was
 * rebuilt), a new policy is built from the cache's snapshot at its current
 * revision and replaces the old, which stays alive for the requests still
 * reading it (reference counted). So a binding written and then committed
 * takes effect for every request that starts after the cache applied it.
 */
#ifndef SK_API_AUTHZ_H
#define SK_API_AUTHZ_H

#include "cache/cache.h"
#include "kube/rbac.h"
#include "read/reader.h"

#include <jansson.h>

typedef struct sk_authz sk_authz;
typedef struct sk_api_call sk_api_call;

/* An index over reader and cache (borrowed; both must outlive it). */
sk_authz *sk_authz_new(sk_reader *reader, sk_cache *cache);
void sk_authz_free(sk_authz *z);

/* The policy as of the cache's current revision, new reference; NULL when
 * it cannot be read (the cache is not ready, or a read failed: logged). */
json_t *sk_authz_policy(sk_authz *z);

/* Decides a: *out filled (kube/rbac.h). A policy that cannot be read
 * allows nothing, with the reason saying so. */
void sk_authz_decide(sk_authz *z, const sk_rbac_attrs *a, sk_rbac_decision *out);

/* Whether call's authorizer allows a (borrowed; a->user is whoever is
 * asked about): 1 in the AlwaysAllow mode. When it does not and reply is
 * set, the call has replied 403 Forbidden with kube's message. */
int sk_authz_check(sk_api_call *call, const sk_rbac_attrs *a, int reply);

/* Replies 403 Forbidden as kube's NewForbidden words it: "<resource>.<group>
 * \"<name>\" is forbidden: <text>" (the group, name or resource left out
 * when NULL or ""), with the Status details naming them. */
void sk_authz_reply_forbidden(sk_api_call *call, const char *group, const char *resource,
                              const char *name, const char *text);

/* The attributes kube's authorizer (and its audit log) sees for call: *a
 * filled (its strings borrowed from the call) and 1, or 0 for a call that
 * is not checked (an unknown path). */
int sk_authz_call_attrs(sk_api_call *call, sk_rbac_attrs *a);

/* The first step's gate, for an authenticated call (call->user set): 1 when
 * it may go on (the AlwaysAllow mode, or the authorizer allows it); else it has replied 403
 * Forbidden with kube's message and details, and returns 0. The decision
 * and its reason are kept in the call for the audit log. */
int sk_authz_admit(sk_api_call *call);

#endif
