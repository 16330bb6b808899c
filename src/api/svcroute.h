/*
 * svcroute.h - reaching a webhook's clientConfig.service as kube-apiserver's
 * endpoint routing does (no kube-proxy runs here to serve a cluster IP):
 * the stored Service's port (by number) by its name, then the first ready
 * endpoint of the Service's EndpointSlices (label kubernetes.io/service-name)
 * whose port has that name. Admission (api/webhooks.c) and conversion
 * (api/crconvert.c) webhooks are reached through it.
 */
#ifndef SK_API_SVCROUTE_H
#define SK_API_SVCROUTE_H

/* hook/endpoint.h's sk_hook_resolve_fn over the server api (an sk_api *,
 * borrowed): the address ("IP:PORT", new) serving port of Service ns/name,
 * or -1 with *why (new) in kube's words (`service "NAME" not found`,
 * `no service port N found for service "NAME"`, `no endpoints available
 * for service "NAME"`). Reads the store as of the cache. */
int sk_svcroute_resolve(void *api, const char *ns, const char *name, int port, char **addr,
                        char **why);

#endif
