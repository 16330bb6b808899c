/*
 * limits.c - see limits.h. The depth walk stops as soon as the bound is
 * passed, so it costs at most the object's size and max stack frames.
 */
#include "kube/limits.h"

int sk_json_deeper_than(const json_t *v, int max)
{
    const char *key;
    json_t *member;
    size_t i;
    if (max < 1)
        return 1;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, member)
        {
            if (sk_json_deeper_than(member, max - 1))
                return 1;
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, member)
        {
            if (sk_json_deeper_than(member, max - 1))
                return 1;
        }
    }
    return 0;
}
