/*
 * status.c - builds metav1.Status bodies; see status.h.
 */
#include "api/status.h"

json_t *sk_status_new(sk_err e, const char *message, const char *group, const char *kind,
                      const char *name, json_t *causes)
{
    json_t *st =
        json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
                  "metadata", "status", e == SK_OK ? "Success" : "Failure", "message",
                  message ? message : "", "reason", sk_err_reason(e), "code", sk_err_http_code(e));
    json_t *details = json_object();
    if (name && *name)
        json_object_set_new(details, "name", json_string(name));
    if (group && *group)
        json_object_set_new(details, "group", json_string(group));
    if (kind && *kind)
        json_object_set_new(details, "kind", json_string(kind));
    if (causes)
        json_object_set_new(details, "causes", causes);
    if (json_object_size(details) > 0)
        json_object_set_new(st, "details", details);
    else
        json_decref(details);
    if (e == SK_OK)
        json_object_del(st, "reason");
    return st;
}

void sk_status_add_cause(json_t *causes, const char *reason, const char *message, const char *field)
{
    json_t *c = json_object();
    if (reason)
        json_object_set_new(c, "reason", json_string(reason));
    if (message)
        json_object_set_new(c, "message", json_string(message));
    if (field)
        json_object_set_new(c, "field", json_string(field));
    json_array_append_new(causes, c);
}
