/*
 * condition.c - see condition.h.
 */
#include "kube/condition.h"
#include "core/check.h"

#include <string.h>

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

void sk_condition_set(json_t *obj, json_t *cond, const char *now)
{
    SK_CHECK(json_is_string(json_object_get(cond, "type")) &&
             json_is_string(json_object_get(cond, "status")));
    json_t *status = json_object_get(obj, "status");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(obj, "status", status);
    }
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    size_t i, at = json_array_size(conds);
    json_t *c;
    json_array_foreach(conds, i, c) if (strcmp(str(c, "type"), str(cond, "type")) == 0) at = i;
    const json_t *old = json_array_get(conds, at);
    const char *since = old && strcmp(str(old, "status"), str(cond, "status")) == 0 &&
                                *str(old, "lastTransitionTime")
                            ? str(old, "lastTransitionTime")
                            : now;
    json_object_set_new(cond, "lastTransitionTime", json_string(since));
    if (old)
        json_array_set_new(conds, at, cond);
    else
        json_array_append_new(conds, cond);
}
