/*
 * defaults.c - see defaults.h. Namespaces get the `kubernetes` finalizer
 * and phase Active; Secrets type Opaque, and stringData merged into data
 * as base64 (the write-only convenience field is never stored).
 */
#include "kube/defaults.h"
#include "core/check.h"

#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>

static void default_namespace(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(obj, "spec", spec);
    }
    if (!json_object_get(spec, "finalizers"))
        json_object_set_new(spec, "finalizers", json_pack("[s]", "kubernetes"));
    json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Active"));
}

static sk_err default_secret(json_t *obj, char **msg)
{
    if (!json_object_get(obj, "type"))
        json_object_set_new(obj, "type", json_string("Opaque"));
    json_t *sd = json_object_get(obj, "stringData");
    if (!json_is_object(sd))
        return SK_OK;
    json_t *data = json_object_get(obj, "data");
    if (!json_is_object(data)) {
        data = json_object();
        json_object_set_new(obj, "data", data);
    }
    const char *k;
    json_t *v;
    json_object_foreach(sd, k, v)
    {
        if (!json_is_string(v)) {
            *msg = strdup("stringData values must be strings");
            SK_CHECK_ALLOC(*msg);
            return SK_ERR_BAD_REQUEST;
        }
        gnutls_datum_t in = {(unsigned char *)json_string_value(v), (unsigned)json_string_length(v)};
        gnutls_datum_t enc = {NULL, 0};
        SK_CHECK(gnutls_base64_encode2(&in, &enc) == 0);
        json_object_set_new(data, k, json_stringn((const char *)enc.data, enc.size));
        gnutls_free(enc.data);
    }
    json_object_del(obj, "stringData");
    return SK_OK;
}

sk_err sk_defaults_apply(const sk_resource *r, json_t *obj, char **msg)
{
    if (strcmp(r->kind, "Namespace") == 0 && !*r->group)
        default_namespace(obj);
    else if (strcmp(r->kind, "Secret") == 0 && !*r->group)
        return default_secret(obj, msg);
    return SK_OK;
}
