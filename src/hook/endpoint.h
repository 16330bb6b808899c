/*
 * endpoint.h - where a webhook is reached: a clientConfig (admission
 * webhooks' and CRD conversion webhooks' share one shape: url, or service
 * namespace/name/port/path, and caBundle), compiled once, and one POST to
 * it over the shared client (hook/client.h).
 *
 * clientConfig.service is reached as kube's endpoint routing reaches it:
 * an address of the Service's ready endpoints, found by the caller's
 * resolver (the stored Service and EndpointSlices: no kube-proxy runs
 * here), with the certificate checked for NAME.NAMESPACE.svc.
 *
 * Both kinds of webhook call through here, so they reach a webhook, verify
 * it and bound the call the same way; what they send and how they word a
 * failure is theirs (admission.c, conversion.c).
 */
#ifndef SK_HOOK_ENDPOINT_H
#define SK_HOOK_ENDPOINT_H

#include "hook/client.h"

#include <jansson.h>

typedef struct sk_hook_endpoint sk_hook_endpoint;

/* clientConfig.service: the address ("IP:PORT", new) serving port of
 * Service ns/name, or -1 with *why (new) saying why there is none. */
typedef int (*sk_hook_resolve_fn)(void *arg, const char *ns, const char *name, int port,
                                  char **addr, char **why);

/* The clientConfig cc (borrowed: the endpoint points into it, so it must
 * outlive the endpoint), compiled; c (borrowed) keeps its caBundle in a
 * file. Never NULL: a clientConfig that cannot be used makes an endpoint
 * whose every call fails with the reason. Free with sk_hook_endpoint_free. */
sk_hook_endpoint *sk_hook_endpoint_new(sk_hook_client *c, const json_t *cc);
void sk_hook_endpoint_free(sk_hook_endpoint *e);

/*
 * POSTs body to e, at most timeout_s seconds, the URL carrying
 * ?timeout=<timeout_s>s as kube's REST client adds it. SK_OK: *status is
 * the HTTP status and out holds the answer (appended). Otherwise *why
 * (new) says what failed: SK_ERR_INVALID, no client could be made (an
 * unusable caBundle, a Service that does not resolve), *why the cause
 * alone; any other error, the call failed, *why worded as Go's HTTP
 * client words it (`Post "URL": ...`).
 */
sk_err sk_hook_endpoint_post(sk_hook_client *c, const sk_hook_endpoint *e,
                             sk_hook_resolve_fn resolve, void *resolve_arg, int timeout_s,
                             const char *body, size_t body_len, long *status, sk_buf *out,
                             char **why);

#endif
