/*
 * endpoint.c - see endpoint.h. Compiling decodes the caBundle once (the
 * client keeps one file per distinct bundle) and points into the
 * clientConfig for the rest; a clientConfig that cannot be used keeps why,
 * so the failure is the call's, worded and judged (failurePolicy) where the
 * call is made.
 */
#include "hook/endpoint.h"
#include "core/buf.h"
#include "core/check.h"
#include "kube/typed.h"

#include <stdlib.h>
#include <string.h>

struct sk_hook_endpoint {
    const char *url; /* NULL: by Service */
    const char *svc_ns, *svc_name, *svc_path;
    int svc_port;
    char *ca_file;  /* NULL: the system's roots */
    char *unusable; /* it cannot be called: why */
};

sk_hook_endpoint *sk_hook_endpoint_new(sk_hook_client *c, const json_t *cc)
{
    sk_hook_endpoint *e = calloc(1, sizeof *e);
    SK_CHECK_ALLOC(e);
    e->url = json_string_value(json_object_get(cc, "url"));
    const json_t *svc = json_object_get(cc, "service");
    e->svc_ns = json_string_value(json_object_get(svc, "namespace"));
    e->svc_name = json_string_value(json_object_get(svc, "name"));
    e->svc_path = json_string_value(json_object_get(svc, "path"));
    const json_t *port = json_object_get(svc, "port");
    e->svc_port = json_is_integer(port) ? (int)json_integer_value(port) : 443;
    const char *bundle = json_string_value(json_object_get(cc, "caBundle"));
    if (bundle && *bundle) {
        size_t len = 0;
        unsigned char *ca = sk_typed_base64_decode(bundle, &len);
        if (!ca)
            e->unusable = strdup("caBundle is not base64");
        else if (!(e->ca_file = sk_hook_client_ca_file(c, ca, len)))
            e->unusable = strdup("cannot keep the caBundle in a file for the TLS library");
        free(ca);
    }
    return e;
}

void sk_hook_endpoint_free(sk_hook_endpoint *e)
{
    if (!e)
        return;
    free(e->ca_file);
    free(e->unusable);
    free(e);
}

sk_err sk_hook_endpoint_post(sk_hook_client *c, const sk_hook_endpoint *e,
                             sk_hook_resolve_fn resolve, void *resolve_arg, int timeout_s,
                             const char *body, size_t body_len, long *status, sk_buf *out,
                             char **why)
{
    if (e->unusable) {
        *why = strdup(e->unusable);
        return SK_ERR_INVALID;
    }
    sk_buf svc_url = SK_BUF_INIT, connect_to = SK_BUF_INIT, target = SK_BUF_INIT;
    const char *url = e->url;
    sk_err err = SK_ERR_INVALID;
    char *reason = NULL;
    if (!url) {
        /* by Service: the stored Service's endpoints, the certificate
         * checked for NAME.NAMESPACE.svc, as kube's endpoint routing */
        char *addr = NULL;
        if (!e->svc_ns || !e->svc_name || !resolve ||
            resolve(resolve_arg, e->svc_ns, e->svc_name, e->svc_port, &addr, &reason) < 0) {
            *why = reason ? reason : strdup("the service cannot be resolved");
            goto out;
        }
        sk_buf_printf(&svc_url, "https://%s.%s.svc:%d%s", e->svc_name, e->svc_ns, e->svc_port,
                      e->svc_path ? e->svc_path : "");
        int v6 = strchr(addr, ':') != strrchr(addr, ':');
        const char *colon = strrchr(addr, ':');
        sk_buf_printf(&connect_to, "%s.%s.svc:%d:%s%.*s%s%s", e->svc_name, e->svc_ns, e->svc_port,
                      v6 ? "[" : "", (int)(colon - addr), addr, v6 ? "]" : "", colon);
        free(addr);
        url = svc_url.data;
    }
    /* kube's REST client tells the webhook its deadline so */
    sk_buf_printf(&target, "%s?timeout=%ds", url, timeout_s);
    sk_hook_post p = {
        .url = target.data,
        .connect_to = connect_to.data,
        .ca_file = e->ca_file,
        .timeout_s = timeout_s,
        .body = body,
        .body_len = body_len,
    };
    err = sk_hook_client_post(c, &p, status, out, &reason);
    if (err != SK_OK) {
        sk_buf m = SK_BUF_INIT;
        sk_buf_printf(&m, "Post \"%s\": %s", target.data, reason);
        *why = sk_buf_steal(&m, NULL);
        free(reason);
    }
out:
    sk_buf_free(&svc_url);
    sk_buf_free(&connect_to);
    sk_buf_free(&target);
    return err;
}
