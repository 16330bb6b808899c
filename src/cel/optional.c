/*
 * optional.c - the optional library's functions of values (optional.h).
 *
 * A zero value, which optional.ofNonZeroValue turns into none, is what
 * cel-go's IsZeroValue says: null, false, 0, 0u, 0.0, "", b"", [], {}, a
 * zero duration and Go's zero time (0001-01-01T00:00:00Z, not the epoch).
 */
#include "cel/optional.h"

#include <string.h>

static int is_zero(const sk_cel_val *v)
{
    switch (v->type) {
    case SK_CEL_V_NULL:
        return 1;
    case SK_CEL_V_BOOL:
        return !v->u.b;
    case SK_CEL_V_INT:
        return v->u.i == 0;
    case SK_CEL_V_UINT:
        return v->u.u == 0;
    case SK_CEL_V_DOUBLE:
        return v->u.d == 0;
    case SK_CEL_V_STRING:
    case SK_CEL_V_BYTES:
        return v->u.str.len == 0;
    case SK_CEL_V_LIST:
        return v->u.list.n == 0;
    case SK_CEL_V_MAP:
        return v->u.map.n == 0;
    case SK_CEL_V_DURATION:
        return v->u.time.sec == 0 && v->u.time.nsec == 0;
    case SK_CEL_V_TIMESTAMP:
        return v->u.time.sec == -62135596800LL && v->u.time.nsec == 0;
    default:
        return 0;
    }
}

/* optional.unwrap(l), l.unwrapOpt(): the values of l's optionals that have
 * one, in order. */
static const sk_cel_val *unwrap(sk_arena *a, const sk_cel_val *l, sk_cel_work *w)
{
    if (l->type != SK_CEL_V_LIST)
        return sk_cel_error(a, "no such overload");
    size_t n = l->u.list.n, k = 0;
    const sk_cel_val **items = sk_arena_alloc(a, (n ? n : 1) * sizeof *items);
    w->done += n;
    for (size_t i = 0; i < n; i++) {
        const sk_cel_val *x = l->u.list.items[i];
        if (x->type != SK_CEL_V_OPTIONAL)
            return sk_cel_error(a, "no such overload");
        if (x->u.opt)
            items[k++] = x->u.opt;
    }
    return sk_cel_list(a, items, k);
}

const sk_cel_val *sk_cel_optional_call(sk_arena *a, const char *f, int method,
                                       const sk_cel_val *const *v, size_t n, sk_cel_work *w)
{
    if (!method) {
        if (n == 0 && strcmp(f, "optional.none") == 0)
            return sk_cel_optional(a, NULL);
        if (n == 1 && strcmp(f, "optional.of") == 0)
            return sk_cel_optional(a, v[0]);
        if (n == 1 && strcmp(f, "optional.ofNonZeroValue") == 0)
            return sk_cel_optional(a, is_zero(v[0]) ? NULL : v[0]);
        if (n == 1 && strcmp(f, "optional.unwrap") == 0)
            return unwrap(a, v[0], w);
        return NULL;
    }
    if (n == 1 && strcmp(f, "unwrapOpt") == 0)
        return unwrap(a, v[0], w);
    if (n != 1 || v[0]->type != SK_CEL_V_OPTIONAL)
        return NULL;
    if (strcmp(f, "hasValue") == 0)
        return sk_cel_bool(v[0]->u.opt != NULL);
    if (strcmp(f, "value") == 0)
        return v[0]->u.opt ? v[0]->u.opt : sk_cel_error(a, "optional.none() dereference");
    return NULL;
}
