/*
 * admit.c - see admit.h.
 */
#include "api/admit.h"
#include "core/util.h"
#include "kube/defaults.h"
#include "kube/expiry.h"
#include "kube/objmeta.h"
#include "kube/typed.h"
#include "kube/validate.h"

#include <stdlib.h>

/* Replies with err and *msg (freed) unless err is SK_OK; -1 if it replied.
 * msg is passed by address: the call that sets it is an argument of this
 * one, and arguments are evaluated in no fixed order. */
static int refused(sk_api_call *call, sk_err err, char **msg)
{
    if (err == SK_OK)
        return 0;
    sk_call_reply_error(call, err, *msg ? *msg : "the object was refused");
    free(*msg);
    *msg = NULL;
    return -1;
}

/* Replaces obj's members by its typed round trip. */
static sk_err typed(const sk_resource *r, json_t *obj, char **msg)
{
    json_t *norm = NULL;
    sk_err err = sk_typed_normalize(r, obj, &norm, msg);
    if (err == SK_OK) {
        json_object_clear(obj);
        json_object_update(obj, norm);
        json_decref(norm);
    }
    return err;
}

int sk_admit_object(sk_api_call *call, json_t *obj, const json_t *old)
{
    char *msg = NULL;
    /* The typed round trip (kube/typed.h) first, as kube-apiserver decodes
     * before anything else, so what follows sees typed values; and again
     * after defaulting, so defaulted fields sit where Go writes them. */
    if (refused(call, typed(call->res, obj, &msg), &msg) < 0)
        return -1;
    if (refused(call, sk_objmeta_settle_namespace(call->res, obj, call->ns, &msg), &msg) < 0)
        return -1;
    if (old) {
        if (refused(call, sk_objmeta_on_update(obj, old, call->name, &msg), &msg) < 0)
            return -1;
    } else {
        sk_objmeta_on_create(obj, sk_wall_s());
    }
    if (refused(call,
                old ? sk_defaults_update(call->res, obj, old, &msg)
                    : sk_defaults_apply(call->res, obj, &msg),
                &msg) < 0)
        return -1;
    if (refused(call, typed(call->res, obj, &msg), &msg) < 0)
        return -1;
    json_t *causes = NULL;
    sk_err err = sk_validate_typed(call->res, obj, old, &causes, &msg);
    if (err != SK_OK) {
        const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                             "name"));
        sk_call_reply_status(call, err, msg ? msg : "invalid object", call->res->group,
                             call->res->kind, name, causes);
        free(msg);
        return -1;
    }
    return 0;
}

sk_write sk_admit_write(sk_api_call *call, json_t *obj, int64_t expected_rev)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                         "name"));
    sk_write w = {
        .op = expected_rev > 0 ? SK_WRITE_UPDATE : SK_WRITE_CREATE,
        .resource = call->res->storage,
        .ns = call->ns,
        .name = name,
        .expected_rev = expected_rev,
        .object = json_incref(obj),
        .require_namespace = expected_rev == 0 && call->res->namespaced ? call->ns : NULL,
        .expires_at_ms =
            sk_expiry_for(call->res, obj, call->api->event_ttl_s, sk_wall_ms()),
        .max_bytes = call->api->max_object_bytes,
    };
    return w;
}
