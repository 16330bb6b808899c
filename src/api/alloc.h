/*
 * alloc.h - a Service's cluster IP and node ports, as kube-apiserver's
 * service REST storage allocates them (pkg/registry/core/service/storage/
 * alloc.go): picked here, owned through the store.
 *
 * The API picks the values: a client's explicit ones are checked against
 * the ranges (422 outside), the rest are picked at random above the ranges'
 * static bands (kube/svcrange.h). The write then carries them as claims
 * (store.h): the writer records them in the object's own transaction, and
 * refuses the write when another object owns one. A refused explicit value
 * is kube's 422 ("provided IP is already allocated"); a refused random one
 * is picked again and the write retried, a bounded number of times. So the
 * database holds exactly what the live Services hold: nothing leaks on a
 * crash, nothing is handed out twice, whichever process wrote it.
 *
 * Hooks: create.c (plan, attach, after_conflict), update.c (carry_over before
 * admission, plan and attach after it, after_conflict in its completion).
 * Deletes need none: the store releases what a deleted object owned.
 */
#ifndef SK_API_ALLOC_H
#define SK_API_ALLOC_H

#include "api/call.h"

#include <jansson.h>

typedef struct sk_alloc_plan sk_alloc_plan;

/*
 * PUT/PATCH of a Service, before admission: values allocated earlier that
 * the new version leaves out are kept (kube's patchAllocatedValues),
 * clusterIPs follow a clusterIP the client changed or cleared alone
 * (normalizeClusterIPs), and values its new type no longer uses are
 * dropped when the client left them unchanged (dropTypeDependentFields).
 * obj edited, old borrowed. No-op for other resources.
 */
void sk_alloc_carry_over(const sk_resource *r, json_t *obj, const json_t *old);

/*
 * After admission: settles obj's (edited) cluster IP(s), IP family fields,
 * node ports and health check node port, as a create (old NULL) or an
 * update of old, and returns the plan (in the call's arena) in *plan_out;
 * NULL for other resources. -1 after replying (422 for an explicit value
 * outside its range). previous (may be NULL) is the plan of this call's
 * earlier attempt, whose refusals count toward the bound.
 */
int sk_alloc_plan_new(sk_api_call *call, json_t *obj, const json_t *old,
                      const sk_alloc_plan *previous, sk_alloc_plan **plan_out);

/* Makes w claim the plan's values (plan NULL: w unchanged). The plan must
 * outlive the write. */
void sk_alloc_attach(sk_alloc_plan *plan, sk_write *w);

/*
 * After a write carrying plan failed with SK_ERR_CONFLICT: 0 if no claim of
 * the plan was taken (another conflict); -1 after replying, when an explicit
 * value was taken or random picks keep failing; 1 when a random value was
 * taken and the caller should write again: with obj non-NULL, the taken
 * values were picked again in obj (edited) and in the plan.
 */
int sk_alloc_after_conflict(sk_api_call *call, sk_alloc_plan *plan, json_t *obj);

#endif
