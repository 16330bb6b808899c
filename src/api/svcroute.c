/*
 * svcroute.c - see svcroute.h. kube picks an endpoint at random; this takes
 * the first, so a test or a person knows which one is called.
 */
#include "api/svcroute.h"
#include "api/call.h"
#include "core/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct slices {
    const char *service;
    json_t *list;
} slices;

static int add_slice(void *arg, sk_blob *item)
{
    slices *s = arg;
    json_t *obj = sk_reader_object(item);
    const char *owner = json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "labels"), "kubernetes.io/service-name"));
    if (owner && strcmp(owner, s->service) == 0)
        json_array_append(s->list, obj);
    json_decref(obj);
    return 0;
}

/* The first ready endpoint address (and the slice's number for the
 * service port's name) of the EndpointSlices in list; NULL if none. */
static char *ready_endpoint(const json_t *list, const char *port_name)
{
    size_t i, j, k;
    json_t *slice, *port, *ep;
    json_array_foreach(list, i, slice)
    {
        json_int_t number = 0;
        json_array_foreach(json_object_get(slice, "ports"), j, port)
        {
            const char *name = json_string_value(json_object_get(port, "name"));
            if (strcmp(name ? name : "", port_name) == 0)
                number = json_integer_value(json_object_get(port, "port"));
        }
        if (number <= 0)
            continue;
        json_array_foreach(json_object_get(slice, "endpoints"), k, ep)
        {
            const json_t *ready = json_object_get(json_object_get(ep, "conditions"), "ready");
            const char *addr = json_string_value(json_array_get(json_object_get(ep, "addresses"), 0));
            if (!addr || json_is_false(ready))
                continue;
            sk_buf b = SK_BUF_INIT;
            sk_buf_printf(&b, "%s:%" JSON_INTEGER_FORMAT, addr, number);
            return sk_buf_steal(&b, NULL);
        }
    }
    return NULL;
}

int sk_svcroute_resolve(void *api, const char *ns, const char *name, int port, char **addr,
                        char **why)
{
    sk_reader *rd = ((sk_api *)api)->reader;
    sk_blob *blob = NULL;
    if (sk_reader_get(rd, "services", ns, name, 0, &blob) != SK_OK) {
        *why = sk_go_quoted_in("service ", name, " not found");
        return -1;
    }
    json_t *svc = sk_reader_object(blob);
    sk_blob_unref(blob);
    const json_t *sp = NULL, *p;
    size_t i;
    json_array_foreach(json_object_get(json_object_get(svc, "spec"), "ports"), i, p)
        if (json_integer_value(json_object_get(p, "port")) == port)
            sp = p;
    int rc = -1;
    if (!sp) {
        char prefix[64];
        snprintf(prefix, sizeof prefix, "no service port %d found for service ", port);
        *why = sk_go_quoted_in(prefix, name, "");
        goto out;
    }
    const char *port_name = json_string_value(json_object_get(sp, "name"));
    slices s = {name, json_array()};
    int64_t rev = sk_reader_cache_rev(rd);
    if (rev > 0)
        sk_reader_scan(rd, "endpointslices.discovery.k8s.io", ns, rev, add_slice, &s);
    *addr = ready_endpoint(s.list, port_name ? port_name : "");
    json_decref(s.list);
    if (!*addr) {
        *why = sk_go_quoted_in("no endpoints available for service ", name, "");
        goto out;
    }
    rc = 0;
out:
    json_decref(svc);
    return rc;
}

