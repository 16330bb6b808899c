/*
 * webhooks.h - where a write meets the admission webhooks (hook/): the
 * stored Mutating- and ValidatingWebhookConfigurations, compiled once per
 * change of them (a new configuration applies to the next request), the
 * request as kube's admission attributes (operation, resource,
 * subresource, user, options), the namespace's labels, and the answer: a
 * refusal is replied here, warnings become Warning headers.
 */
#ifndef SK_API_WEBHOOKS_H
#define SK_API_WEBHOOKS_H

#include "api/call.h"

#include <jansson.h>

/* The configurations of the store behind reader and cache (borrowed),
 * compiled with client's help (borrowed). All outlive it. */
sk_webhooks *sk_webhooks_new(sk_reader *reader, sk_cache *cache, sk_hook_client *client);
void sk_webhooks_free(sk_webhooks *w);

/* Whether the call may go on to admission: SK_PLAN_NOW, or the step code
 * to return after parking the call (`again` runs when the cache holds the
 * latest configuration written here: call.c records the revision of every
 * webhook configuration this server writes) or replying. So a webhook
 * registered here applies to the very next request (kube's own
 * configuration informer may lag; a client should not have to guess by how
 * much); another instance's registration applies once this one's cache
 * has it, as in kube. */
int sk_webhooks_wait(sk_api_call *call, sk_call_fn again);

/* 1 if a mutating webhook's rules cover a create (old NULL) or update of
 * the call's resource: only then is sk_webhooks_mutate worth its work. */
int sk_webhooks_may_mutate(sk_api_call *call, const json_t *old);

/* The mutating webhooks for a create (old NULL) or update of *obj (may be
 * replaced by a patched object; old borrowed); settle(call, obj, old) runs
 * on each patched object before the next webhook sees it. Returns 1 if a
 * webhook changed *obj, 0 if not, -1 after replying. The objects of a
 * /scale request are the parent (the webhooks see its Scale, and a patched
 * Scale's replicas are set on it); pods/eviction's is its Eviction. */
typedef void (*sk_webhooks_settle_fn)(sk_api_call *call, json_t *obj, const json_t *old);
int sk_webhooks_mutate(sk_api_call *call, json_t **obj, const json_t *old, int dry_run,
                       sk_webhooks_settle_fn settle);

/* The validating webhooks for the admitted obj (borrowed). -1 after
 * replying, else 0. */
int sk_webhooks_validate(sk_api_call *call, const json_t *obj, const json_t *old, int dry_run);

/* Both, for the deletion of stored (borrowed, in the URL's version) with
 * options d: one object of a deletecollection is reviewed under the
 * request's name (none), as kube does. -1 after replying, else 0. */
int sk_webhooks_delete(sk_api_call *call, const json_t *stored, const sk_delete_options *d);

#endif
